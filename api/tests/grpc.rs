//! The gRPC transport, through the generated `kruise.api.v1` clients, against the embedded
//! control plane, three simulated nodes, the Kruise manager and a node daemon per node, with
//! the audit store on a real PostgreSQL started by the integration harness (SQLite when no
//! PostgreSQL binaries exist on this machine; the outage step is then skipped, with a message):
//!
//! - reflection lists the five services;
//! - no token is UNAUTHENTICATED, a token outside its scope PERMISSION_DENIED, bad input
//!   INVALID_ARGUMENT with a `google.rpc.BadRequest` naming the fields, an unknown id NOT_FOUND,
//!   a reused idempotency key with another request FAILED_PRECONDITION; each is audited with its
//!   gRPC status;
//! - a rollout is created, read, listed and watched (the stream ends at Succeeded);
//! - a SidecarSet rollout is created (a namespace-limited token is PERMISSION_DENIED, a bad
//!   image INVALID_ARGUMENT naming `images.<container>`), read, listed and watched through its
//!   `sidecar_set` address, which a namespace's address does not reach;
//! - an image pull reaches Succeeded with per-node results; a recreate creates its CRR;
//! - the audit is queried through `Audit.List`;
//! - with the store down a change is UNAVAILABLE and nothing is created.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod common;

use std::{
    collections::BTreeSet,
    time::{Duration, Instant},
};

use common::{ADMIN, AUDITOR, CI, Cast, Env, OPS, SETTLE, StoreChoice};
use futures::StreamExt;
use kruise_api::grpc::{
    proto::{
        self, audit_client::AuditClient, image_pulls_client::ImagePullsClient,
        recreates_client::RecreatesClient, rollouts_client::RolloutsClient,
    },
    rpc,
};
use kruise_crds::apps::v1beta1::{ContainerRecreateRequest, ImagePullJob, SidecarSet};
use kruise_integration::{HarnessError, postgres::Postgres};
use kube::{
    Api, ResourceExt,
    api::{ListParams, PostParams},
};
use tonic::{Code, Request, transport::Channel};
use tonic_reflection::pb::v1::{
    ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
    server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_operations_through_grpc() {
    let postgres = match Postgres::start() {
        Ok(postgres) => Some(postgres),
        Err(HarnessError::PostgresMissing(message)) => {
            eprintln!("no PostgreSQL ({message}): running on SQLite; the store outage step is SKIPPED");
            None
        }
        Err(error) => panic!("starting PostgreSQL: {error}"),
    };
    let store = match &postgres {
        Some(postgres) => StoreChoice::Url(postgres.url()),
        None => StoreChoice::Sqlite,
    };
    let env = Env::start_cast(store, Cast::Daemons).await;
    env.create_cloneset("web", 3, "nginx:1.25").await;
    env.wait_settled("web", 3).await;
    let channel = Channel::from_shared(env.grpc.clone()).unwrap().connect().await.unwrap();

    reflection_lists_the_services(&channel).await;
    refusals_have_their_codes(&env, &channel).await;
    rollout_create_get_list_watch(&env, &channel).await;
    sidecarset_rollout(&env, &channel).await;
    image_pull_and_recreate(&env, &channel).await;
    audit_through_grpc(&channel).await;
    if let Some(mut postgres) = postgres {
        store_outage(&env, &channel, &mut postgres).await;
    }
    env.shutdown().await;
}

/// A request with a bearer token (none: no `authorization` metadata).
fn call<T>(message: T, token: Option<&str>) -> Request<T> {
    let mut request = Request::new(message);
    if let Some(token) = token {
        request.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    request
}

fn with_id<T>(mut request: Request<T>, id: &str) -> Request<T> {
    request.metadata_mut().insert("x-request-id", id.parse().unwrap());
    request
}

fn rollout_spec(image: &str) -> proto::RolloutSpec {
    proto::RolloutSpec {
        workload: Some(proto::WorkloadRef { kind: proto::WorkloadKind::CloneSet as i32, name: "web".into() }),
        images: [("nginx".to_string(), image.to_string())].into(),
        reason: Some(format!("roll web to {image}")),
        ..Default::default()
    }
}

fn fields(status: &tonic::Status) -> Vec<String> {
    rpc::field_violations(status).into_iter().map(|v| v.field).collect()
}

async fn reflection_lists_the_services(channel: &Channel) {
    let mut client = ServerReflectionClient::new(channel.clone());
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut responses =
        client.server_reflection_info(futures::stream::iter(vec![request])).await.unwrap().into_inner();
    let response = responses.next().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else {
        panic!("not a service list: {response:?}")
    };
    let names: BTreeSet<String> = list.service.into_iter().map(|s| s.name).collect();
    for service in [
        "kruise.api.v1.Rollouts",
        "kruise.api.v1.ImagePulls",
        "kruise.api.v1.Recreates",
        "kruise.api.v1.Jobs",
        "kruise.api.v1.Audit",
    ] {
        assert!(names.contains(service), "{service} not in {names:?}");
    }
    // The descriptors of a service are served too (what grpcurl describes).
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol("kruise.api.v1.Rollouts".into())),
    };
    let mut responses =
        client.server_reflection_info(futures::stream::iter(vec![request])).await.unwrap().into_inner();
    let response = responses.next().await.unwrap().unwrap();
    let Some(MessageResponse::FileDescriptorResponse(files)) = response.message_response else {
        panic!("no descriptors: {response:?}")
    };
    assert!(!files.file_descriptor_proto.is_empty());
}

async fn refusals_have_their_codes(env: &Env, channel: &Channel) {
    let mut rollouts = RolloutsClient::new(channel.clone());
    let create = |token: Option<&str>, namespace: &str, spec: proto::RolloutSpec| {
        call(
            proto::CreateRolloutRequest {
                namespace: namespace.into(),
                rollout: Some(spec),
                idempotency_key: None,
            },
            token,
        )
    };

    let status = rollouts
        .create(with_id(create(None, "default", rollout_spec("nginx:1.26")), "g-none"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(status.metadata().get("x-request-id").unwrap(), "g-none");
    let status = rollouts
        .create(create(Some("not-a-token"), "default", rollout_spec("nginx:1.26")))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    let status = rollouts.create(create(Some(CI), "prod", rollout_spec("nginx:1.26"))).await.unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    let status =
        rollouts.create(create(Some(AUDITOR), "default", rollout_spec("nginx:1.26"))).await.unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    let mut pulls = ImagePullsClient::new(channel.clone());
    let status = pulls
        .get(call(proto::GetImagePullRequest { namespace: "default".into(), id: "x".into() }, Some(CI)))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");

    // Bad input names the fields, with REST's names.
    let status = rollouts
        .create(with_id(create(Some(ADMIN), "default", rollout_spec("NOT A REF")), "g-invalid"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert_eq!(fields(&status), ["images.nginx"], "{status:?}");
    let mut unknown = rollout_spec("nginx:1.26");
    unknown.images = [("sidecar".to_string(), "busybox".to_string())].into();
    let status = rollouts.create(create(Some(ADMIN), "default", unknown)).await.unwrap_err();
    assert_eq!(fields(&status), ["images.sidecar"], "{status:?}");
    let mut kindless = rollout_spec("nginx:1.26");
    kindless.workload = Some(proto::WorkloadRef { kind: 0, name: "web".into() });
    let status = rollouts.create(create(Some(ADMIN), "default", kindless)).await.unwrap_err();
    assert_eq!(fields(&status), ["workload.kind"], "{status:?}");
    // StatefulSet and DaemonSet rollouts reach the same operations, which read that kind.
    for (kind, name) in
        [(proto::WorkloadKind::StatefulSet, "StatefulSet"), (proto::WorkloadKind::DaemonSet, "DaemonSet")]
    {
        let mut other = rollout_spec("nginx:1.26");
        other.workload = Some(proto::WorkloadRef { kind: kind as i32, name: "web".into() });
        let status = rollouts.create(create(Some(ADMIN), "default", other)).await.unwrap_err();
        let violations = rpc::field_violations(&status);
        assert_eq!(fields(&status), ["workload.name"], "{status:?}");
        assert!(violations[0].description.contains(&format!("{name} \"web\" not found")), "{status:?}");
    }
    let status = rollouts
        .create(call(
            proto::CreateRolloutRequest { namespace: "default".into(), rollout: None, idempotency_key: None },
            Some(ADMIN),
        ))
        .await
        .unwrap_err();
    assert_eq!(fields(&status), ["rollout"], "{status:?}");
    let status = pulls
        .create(with_id(
            call(
                proto::CreateImagePullRequest {
                    namespace: "default".into(),
                    image_pull: Some(proto::ImagePullSpec {
                        images: vec!["ok:1".into(), "BAD REF".into()],
                        ..Default::default()
                    }),
                    idempotency_key: None,
                },
                Some(OPS),
            ),
            "g-pull-invalid",
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert_eq!(fields(&status), ["images[1]", "nodeSelector"], "{status:?}");
    let mut recreates = RecreatesClient::new(channel.clone());
    let status = recreates
        .create(call(
            proto::CreateRecreateRequest {
                namespace: "default".into(),
                recreate: Some(proto::RecreateSpec {
                    pod: Some("no-such-pod".into()),
                    containers: vec!["nginx".into()],
                    ..Default::default()
                }),
                idempotency_key: None,
            },
            Some(OPS),
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert_eq!(fields(&status), ["pod"], "{status:?}");
    let status = rollouts
        .get(call(
            proto::GetRolloutRequest { namespace: "default".into(), id: "nope".into(), ..Default::default() },
            Some(ADMIN),
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");

    // Every refusal is audited with its gRPC status.
    let records = env.audit("limit=500").await;
    let by_id = |id: &str| {
        records.iter().find(|r| r["correlationId"] == id).unwrap_or_else(|| panic!("no record {id}"))
    };
    let none = by_id("g-none");
    assert_eq!(
        (none["outcome"].as_str(), none["grpcStatus"].as_i64(), none["actor"].as_str()),
        (Some("unauthenticated"), Some(16), Some("anonymous"))
    );
    assert_eq!(none["request"]["method"], "/kruise.api.v1.Rollouts/Create");
    let invalid = by_id("g-invalid");
    assert_eq!((invalid["outcome"].as_str(), invalid["grpcStatus"].as_i64()), (Some("rejected"), Some(3)));
    assert_eq!(invalid["httpStatus"], 422);
    assert_eq!(invalid["request"]["body"]["images"]["nginx"], "NOT A REF");
    let pull = by_id("g-pull-invalid");
    assert_eq!(
        (pull["action"].as_str(), pull["outcome"].as_str(), pull["actor"].as_str()),
        (Some("image-pull.create"), Some("rejected"), Some("ops"))
    );
    let denied: BTreeSet<(String, i64)> = records
        .iter()
        .filter(|r| r["outcome"] == "denied" && r["grpcStatus"].is_i64())
        .map(|r| (r["actor"].as_str().unwrap().to_string(), r["grpcStatus"].as_i64().unwrap()))
        .collect();
    assert!(denied.contains(&("ci".into(), 7)) && denied.contains(&("auditor".into(), 7)), "{denied:?}");
    let text = serde_json::to_string(&records).unwrap();
    for token in [ADMIN, CI, AUDITOR, OPS, "not-a-token"] {
        assert!(!text.contains(token), "a token leaked into the audit");
    }
    let jobs: Api<ImagePullJob> = Api::namespaced(env.client.clone(), "default");
    assert!(
        jobs.list(&ListParams::default()).await.unwrap().items.is_empty(),
        "a refused pull created a job"
    );
}

async fn rollout_create_get_list_watch(env: &Env, channel: &Channel) {
    let mut rollouts = RolloutsClient::new(channel.clone());
    let request = |spec: proto::RolloutSpec| {
        call(
            proto::CreateRolloutRequest {
                namespace: "default".into(),
                rollout: Some(spec),
                idempotency_key: Some("grpc-release-1".into()),
            },
            Some(ADMIN),
        )
    };
    let created = rollouts.create(request(rollout_spec("nginx:1.26"))).await.unwrap();
    assert!(created.metadata().get("x-request-id").is_some());
    let created = created.into_inner();
    assert!(!created.replayed);
    let rollout = created.rollout.unwrap();
    let id = rollout.id.clone();
    assert_eq!(rollout.workload.as_ref().unwrap().name, "web");
    assert_eq!(rollout.request.as_ref().unwrap().images["nginx"], "nginx:1.26");
    assert_eq!(rollout.created_by, "admin");

    // An idempotent retry answers with the same rollout; another request with the key is refused.
    let again = rollouts.create(request(rollout_spec("nginx:1.26"))).await.unwrap().into_inner();
    assert!(again.replayed);
    assert_eq!(again.rollout.unwrap().id, id);
    let status = rollouts.create(request(rollout_spec("nginx:1.99"))).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");

    let got = rollouts
        .get(call(
            proto::GetRolloutRequest { namespace: "default".into(), id: id.clone(), ..Default::default() },
            Some(ADMIN),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.id, id);
    assert!(!got.history.is_empty());

    let mut stream = rollouts
        .watch_rollout(call(
            proto::WatchRolloutRequest { namespace: "default".into(), id: id.clone(), ..Default::default() },
            Some(ADMIN),
        ))
        .await
        .unwrap()
        .into_inner();
    let mut states = Vec::new();
    let deadline = Instant::now() + SETTLE;
    while let Some(item) = tokio::time::timeout(SETTLE, stream.next()).await.expect("the stream stalled") {
        let rollout = item.unwrap();
        states.push(proto::RolloutState::try_from(rollout.state).unwrap());
        assert!(Instant::now() < deadline, "the stream never ended: {states:?}");
    }
    assert_eq!(states.last(), Some(&proto::RolloutState::Succeeded), "{states:?}");
    let (set, pods) = env.wait_settled("web", 3).await;
    assert!(pods.iter().all(|p| common::image_of(p) == "nginx:1.26"), "{:?}", set.status);

    // Listed by its recorded state once the watcher recorded the end.
    let deadline = Instant::now() + SETTLE;
    loop {
        let list = rollouts
            .list(call(
                proto::ListRolloutsRequest {
                    namespace: "default".into(),
                    state: proto::RolloutState::Succeeded as i32,
                    limit: 10,
                    ..Default::default()
                },
                Some(ADMIN),
            ))
            .await
            .unwrap()
            .into_inner();
        if list.items.iter().any(|r| r.id == id) {
            break;
        }
        assert!(Instant::now() < deadline, "never listed as Succeeded: {list:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let status = rollouts
        .list(call(
            proto::ListRolloutsRequest { namespace: "default".into(), limit: 9999, ..Default::default() },
            Some(ADMIN),
        ))
        .await
        .unwrap_err();
    assert_eq!(fields(&status), ["limit"], "{status:?}");
}

/// A SidecarSet that matches no pod yet: its rollouts succeed as soon as the controller observed
/// them (nothing to upgrade), which is enough to follow one through every method.
async fn sidecarset_rollout(env: &Env, channel: &Channel) {
    let sets: Api<SidecarSet> = Api::all(env.client.clone());
    let set: SidecarSet = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "grpc-logs"},
        "spec": {"selector": {"matchLabels": {"app": "nothing-yet"}},
                 "containers": [{"name": "agent", "image": "log-agent:1"}]},
    }))
    .unwrap();
    sets.create(&PostParams::default(), &set).await.unwrap();
    let mut rollouts = RolloutsClient::new(channel.clone());
    let create = |token: &str, image: &str| {
        call(
            proto::CreateSidecarSetRolloutRequest {
                name: "grpc-logs".into(),
                images: [("agent".to_string(), image.to_string())].into(),
                reason: Some("agent over gRPC".into()),
                ..Default::default()
            },
            Some(token),
        )
    };
    let status = rollouts.create_sidecar_set_rollout(create(CI, "log-agent:2")).await.unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "a token for one namespace: {status:?}");
    let status = rollouts.create_sidecar_set_rollout(create(ADMIN, "NOT A REF")).await.unwrap_err();
    assert_eq!((status.code(), fields(&status)), (Code::InvalidArgument, vec!["images.agent".to_string()]));

    let created =
        rollouts.create_sidecar_set_rollout(create(ADMIN, "log-agent:2")).await.unwrap().into_inner();
    let rollout = created.rollout.unwrap();
    let id = rollout.id.clone();
    assert_eq!(rollout.namespace, "", "cluster-scoped");
    assert_eq!(
        rollout.workload,
        Some(proto::WorkloadRef { kind: proto::WorkloadKind::SidecarSet as i32, name: "grpc-logs".into() })
    );
    let image = sets.get("grpc-logs").await.unwrap().spec.containers[0].container.image.clone();
    assert_eq!(image.as_deref(), Some("log-agent:2"));

    let address = |namespace: &str, sidecar_set: &str| proto::GetRolloutRequest {
        namespace: namespace.into(),
        id: id.clone(),
        sidecar_set: sidecar_set.into(),
    };
    let got = rollouts.get(call(address("", "grpc-logs"), Some(ADMIN))).await.unwrap().into_inner();
    assert_eq!(got.id, id);
    assert!(!got.history.is_empty());
    let status = rollouts.get(call(address("default", ""), Some(ADMIN))).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "a namespace does not hold SidecarSet rollouts: {status:?}");
    let status = rollouts.get(call(address("default", "grpc-logs"), Some(ADMIN))).await.unwrap_err();
    assert_eq!((status.code(), fields(&status)), (Code::InvalidArgument, vec!["namespace".to_string()]));

    let mut stream = rollouts
        .watch_rollout(call(
            proto::WatchRolloutRequest {
                id: id.clone(),
                sidecar_set: "grpc-logs".into(),
                ..Default::default()
            },
            Some(ADMIN),
        ))
        .await
        .unwrap()
        .into_inner();
    let mut last = None;
    while let Some(item) = tokio::time::timeout(SETTLE, stream.next()).await.expect("the stream stalled") {
        last = Some(proto::RolloutState::try_from(item.unwrap().state).unwrap());
    }
    assert_eq!(last, Some(proto::RolloutState::Succeeded), "no pod to upgrade");
    let list = rollouts
        .list(call(
            proto::ListRolloutsRequest { sidecar_set: "grpc-logs".into(), limit: 10, ..Default::default() },
            Some(ADMIN),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(list.items.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [id.as_str()]);
    let status = rollouts
        .pause(call(
            proto::RolloutActionRequest {
                id: id.clone(),
                sidecar_set: "grpc-logs".into(),
                ..Default::default()
            },
            Some(ADMIN),
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "a finished rollout cannot be paused: {status:?}");
}

async fn image_pull_and_recreate(env: &Env, channel: &Channel) {
    let mut pulls = ImagePullsClient::new(channel.clone());
    let created = pulls
        .create(call(
            proto::CreateImagePullRequest {
                namespace: "default".into(),
                image_pull: Some(proto::ImagePullSpec {
                    images: vec!["registry.example/tools/debug:v3".into()],
                    node_selector: Some(proto::NodeSelector::default()),
                    parallelism: Some(3),
                    ..Default::default()
                }),
                idempotency_key: None,
            },
            Some(OPS),
        ))
        .await
        .unwrap()
        .into_inner();
    let pull = created.image_pull.unwrap();
    assert_eq!(proto::TaskState::try_from(pull.state).unwrap(), proto::TaskState::Running);
    let deadline = Instant::now() + SETTLE;
    let done = loop {
        let pull = pulls
            .get(call(
                proto::GetImagePullRequest { namespace: "default".into(), id: pull.id.clone() },
                Some(OPS),
            ))
            .await
            .unwrap()
            .into_inner();
        if proto::TaskState::try_from(pull.state).unwrap() == proto::TaskState::Succeeded {
            break pull;
        }
        assert!(Instant::now() < deadline, "the pull never succeeded: {pull:#?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let image = &done.images[0];
    assert_eq!((image.desired, image.succeeded, image.failed), (3, 3, 0), "{image:?}");
    assert_eq!(image.nodes.len(), 3);
    assert!(image.nodes.iter().all(|n| n.phase == "Succeeded"), "{image:?}");

    let set = env.sets.get("web").await.unwrap();
    let pod = env.pods_of(&set).await[0].name_any();
    let mut recreates = RecreatesClient::new(channel.clone());
    let created = recreates
        .create(call(
            proto::CreateRecreateRequest {
                namespace: "default".into(),
                recreate: Some(proto::RecreateSpec {
                    pod: Some(pod.clone()),
                    containers: vec!["nginx".into()],
                    strategy: Some(proto::RecreateStrategy {
                        failure_policy: proto::FailurePolicy::Fail as i32,
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                idempotency_key: None,
            },
            Some(OPS),
        ))
        .await
        .unwrap()
        .into_inner();
    let recreate = created.recreate.unwrap();
    assert_eq!(recreate.pods.len(), 1);
    let crr_name = recreate.pods[0].request.clone().unwrap();
    let crrs: Api<ContainerRecreateRequest> = Api::namespaced(env.client.clone(), "default");
    let crr = crrs.get(&crr_name).await.unwrap();
    assert_eq!(crr.spec.pod_name, pod);
    assert_eq!(crr.labels()["kruise.io/recreate-id"], recreate.id);
    let got = recreates
        .get(call(
            proto::GetRecreateRequest { namespace: "default".into(), id: recreate.id.clone() },
            Some(OPS),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.pods[0].pod, pod);
    assert!(["Pending", "Recreating", "Succeeded"].contains(&got.pods[0].phase.as_str()), "{got:?}");
}

async fn audit_through_grpc(channel: &Channel) {
    let mut audit = AuditClient::new(channel.clone());
    let page = audit
        .list(call(
            proto::ListAuditRequest { action: Some("image-pull".into()), limit: 100, ..Default::default() },
            Some(AUDITOR),
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(!page.items.is_empty());
    assert!(page.items.iter().all(|r| r.action.starts_with("image-pull.")), "{page:?}");
    let accepted = page.items.iter().find(|r| r.outcome == "accepted").expect("an accepted pull");
    assert_eq!(accepted.grpc_status, Some(0));
    assert!(accepted.task_id.is_some());
    let request = accepted.request.as_ref().unwrap();
    assert!(request.fields.contains_key("method"), "{request:?}");
    let status = audit.list(call(proto::ListAuditRequest::default(), Some(OPS))).await.unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied);
    let status = audit
        .list(call(
            proto::ListAuditRequest { outcome: Some("maybe".into()), ..Default::default() },
            Some(AUDITOR),
        ))
        .await
        .unwrap_err();
    assert_eq!(fields(&status), ["outcome"], "{status:?}");
}

async fn store_outage(env: &Env, channel: &Channel, postgres: &mut Postgres) {
    let mut rollouts = RolloutsClient::new(channel.clone());
    let mut pulls = ImagePullsClient::new(channel.clone());
    let jobs: Api<ImagePullJob> = Api::namespaced(env.client.clone(), "default");
    let jobs_before = jobs.list(&ListParams::default()).await.unwrap().items.len();
    let before = env.sets.get("web").await.unwrap();
    postgres.stop().unwrap();
    let status = rollouts
        .create(call(
            proto::CreateRolloutRequest {
                namespace: "default".into(),
                rollout: Some(rollout_spec("nginx:1.27")),
                idempotency_key: None,
            },
            Some(ADMIN),
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    let status = pulls
        .create(call(
            proto::CreateImagePullRequest {
                namespace: "default".into(),
                image_pull: Some(proto::ImagePullSpec {
                    images: vec!["nginx:1.27".into()],
                    node_selector: Some(proto::NodeSelector::default()),
                    ..Default::default()
                }),
                idempotency_key: None,
            },
            Some(OPS),
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    let after = env.sets.get("web").await.unwrap();
    // Its controller may still write status (pods of the recreate above); the spec is untouched.
    assert_eq!(after.metadata.generation, before.metadata.generation, "the CloneSet was changed");
    assert_eq!(common::template_image(&after), common::template_image(&before));
    assert_eq!(
        jobs.list(&ListParams::default()).await.unwrap().items.len(),
        jobs_before,
        "a job was created"
    );
    postgres.start_again().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let result = rollouts
            .list(call(
                proto::ListRolloutsRequest { namespace: "default".into(), ..Default::default() },
                Some(ADMIN),
            ))
            .await;
        if result.is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "the store never came back: {result:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
