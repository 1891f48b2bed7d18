//! The job endpoints through the REST router and gRPC, against the embedded control plane with
//! the Kruise CRDs and the SQLite store (no nodes or manager: the runs and pods are read as
//! created, and pod and job status is written by the test as a kubelet and the controller
//! would):
//!
//! - a manual run of an AdvancedCronJob creates the BroadcastJob (or Job) of its template,
//!   owned by it and annotated as a manual run; a retry with the same `Idempotency-Key`
//!   answers with the same run (`Idempotent-Replayed: true`); each run is audited with what it
//!   created;
//! - bad input is a 4xx problem+json naming the field, recorded as rejected, with nothing
//!   created: unknown AdvancedCronJob (404), invalid name or key, unknown body field, a
//!   template that cannot be run (422);
//! - scopes: no token is 401, `job-read` may read results but not run, a token without job
//!   actions or outside its namespaces is 403; each refusal is audited;
//! - a BroadcastJob's nodes endpoint returns each pod's node, phase, and container results;
//! - the same operations through the gRPC `kruise.api.v1.Jobs` service.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod common;

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use common::{ADMIN, AUDITOR, CI, Env, JOB_VIEWER, JOBS, StoreChoice};
use k8s_openapi::api::{batch::v1::Job, core::v1::Pod};
use kruise_api::grpc::{proto, proto::jobs_client::JobsClient};
use kruise_crds::apps::v1beta1::{AdvancedCronJob, BroadcastJob};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tonic::{Code, Request, transport::Channel};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_runs_and_results() {
    let env = Env::start(StoreChoice::Sqlite, false).await;
    wait_served(&env).await;
    create_cron_job(&env, "nightly", broadcast_template()).await;
    create_cron_job(&env, "batch", job_template()).await;
    create_cron_job(&env, "empty", json!({})).await;

    manual_runs(&env).await;
    bad_runs(&env).await;
    refused_for_the_token(&env).await;
    broadcastjob_nodes(&env).await;
    through_grpc(&env).await;
    env.shutdown().await;
}

fn cron_jobs(env: &Env) -> Api<AdvancedCronJob> {
    Api::namespaced(env.client.clone(), "default")
}

fn broadcast_jobs(env: &Env) -> Api<BroadcastJob> {
    Api::namespaced(env.client.clone(), "default")
}

/// Waits until the Kruise job kinds are served (the CRDs are Established first).
async fn wait_served(env: &Env) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while cron_jobs(env).list(&ListParams::default().limit(1)).await.is_err()
        || broadcast_jobs(env).list(&ListParams::default().limit(1)).await.is_err()
    {
        assert!(Instant::now() < deadline, "AdvancedCronJobs and BroadcastJobs are not served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn pod_template() -> Value {
    json!({"spec": {"restartPolicy": "Never", "containers": [{"name": "box", "image": "busybox"}]}})
}

fn broadcast_template() -> Value {
    json!({"broadcastJobTemplate": {"metadata": {"labels": {"team": "infra"}},
                                    "spec": {"parallelism": 2, "template": pod_template()}}})
}

fn job_template() -> Value {
    json!({"jobTemplate": {"metadata": {"labels": {"team": "data"}},
                           "spec": {"backoffLimit": 1, "template": pod_template()}}})
}

async fn create_cron_job(env: &Env, name: &str, template: Value) -> AdvancedCronJob {
    let cron_job: AdvancedCronJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "AdvancedCronJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedule": "0 2 * * *", "paused": true, "template": template}
    }))
    .unwrap();
    cron_jobs(env).create(&PostParams::default(), &cron_job).await.unwrap()
}

/// The BroadcastJobs in `default`, by name.
async fn broadcast_job_names(env: &Env) -> BTreeSet<String> {
    broadcast_jobs(env)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|j| j.name_any())
        .collect()
}

async fn manual_runs(env: &Env) {
    let owner = cron_jobs(env).get("nightly").await.unwrap().uid().unwrap();
    let path = "/v1/namespaces/default/advancedcronjobs/nightly/runs";
    let body = json!({"reason": "re-run after the failed night"});
    let reply =
        env.call(Method::POST, path, Some(JOBS), Some(&body), &[("Idempotency-Key", "rerun-1")]).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert!(reply.headers.get("idempotent-replayed").is_none());
    let run = reply.body;
    let name = run["name"].as_str().unwrap().to_string();
    assert!(name.starts_with("nightly-manual-") && name.len() == "nightly-manual-".len() + 5, "{name}");
    assert_eq!(
        (&run["kind"], &run["apiVersion"], &run["advancedCronJob"], &run["namespace"]),
        (&json!("BroadcastJob"), &json!("apps.kruise.io/v1beta1"), &json!("nightly"), &json!("default")),
        "{run}"
    );
    assert_eq!(run["annotations"]["cronjob.kubernetes.io/instantiate"], "manual", "{run}");
    assert_eq!(run["labels"]["team"], "infra", "{run}");

    // The object in the cluster: the template's spec, owned by the AdvancedCronJob.
    let created = broadcast_jobs(env).get(&name).await.unwrap();
    assert_eq!(created.uid().as_deref(), run["uid"].as_str());
    assert_eq!(
        serde_json::to_value(&created.spec.parallelism).unwrap(),
        json!(2),
        "the template's spec: {:?}",
        created.spec
    );
    let owners = created.owner_references();
    assert_eq!(owners.len(), 1);
    assert_eq!(
        (owners[0].kind.as_str(), owners[0].name.as_str(), owners[0].uid.as_str(), owners[0].controller),
        ("AdvancedCronJob", "nightly", owner.as_str(), Some(true))
    );

    // The same key again: the same run, nothing new.
    let before = broadcast_job_names(env).await;
    let retry =
        env.call(Method::POST, path, Some(JOBS), Some(&body), &[("Idempotency-Key", "rerun-1")]).await;
    assert_eq!(retry.status, StatusCode::CREATED, "{}", retry.body);
    assert_eq!(retry.headers.get("idempotent-replayed").map(|v| v.to_str().unwrap()), Some("true"));
    assert_eq!(retry.body["name"], name.as_str());
    assert_eq!(broadcast_job_names(env).await, before);

    // No body and no key: another run, with a name of its own.
    let another = env.post(path, None).await;
    assert_eq!(another.status, StatusCode::CREATED, "{}", another.body);
    assert_ne!(another.body["name"], name.as_str());
    assert_eq!(broadcast_job_names(env).await.len(), before.len() + 1);

    // A Job template makes a batch/v1 Job.
    let job = env.post("/v1/namespaces/default/advancedcronjobs/batch/runs", Some(&json!({}))).await;
    assert_eq!(job.status, StatusCode::CREATED, "{}", job.body);
    assert_eq!((&job.body["kind"], &job.body["apiVersion"]), (&json!("Job"), &json!("batch/v1")));
    let jobs: Api<Job> = Api::namespaced(env.client.clone(), "default");
    let created = jobs.get(job.body["name"].as_str().unwrap()).await.unwrap();
    assert_eq!(created.spec.as_ref().and_then(|s| s.backoff_limit), Some(1));
    assert_eq!(created.labels().get("team").map(String::as_str), Some("data"));

    // Each run is audited, naming who, the reason, and what was created.
    let records = env.audit("action=advancedcronjob.run&outcome=accepted&limit=50").await;
    assert_eq!(records.len(), 4, "{records:#?}");
    let first = records.iter().rev().find(|r| r["actor"] == "jobs").unwrap();
    assert_eq!(first["target"], "AdvancedCronJob/nightly");
    assert_eq!(first["namespace"], "default");
    assert_eq!(first["httpStatus"], 201);
    assert_eq!(first["request"]["body"]["reason"], "re-run after the failed night", "{first}");
    assert_eq!(first["message"], format!("created BroadcastJob/{name}"), "{first}");
    let replay = records.iter().find(|r| r["actor"] == "jobs").unwrap();
    assert!(replay["message"].as_str().unwrap().starts_with("idempotent retry"), "{replay}");
}

async fn bad_runs(env: &Env) {
    let before = broadcast_job_names(env).await;
    let runs = |name: &str| format!("/v1/namespaces/default/advancedcronjobs/{name}/runs");
    let long_key = "k".repeat(300);
    // (case, path, body, headers, status, fields)
    type Case<'a> = (&'a str, String, Option<Value>, Vec<(&'a str, &'a str)>, u16, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        ("unknown-cron-job", runs("nope"), None, vec![], 404, vec![]),
        ("invalid-name", runs("Not_A_Name"), None, vec![], 422, vec!["name"]),
        ("unknown-field", runs("nightly"), Some(json!({"schedule": "now"})), vec![], 422, vec!["schedule"]),
        (
            "long-key",
            runs("nightly"),
            None,
            vec![("Idempotency-Key", long_key.as_str())],
            422,
            vec!["Idempotency-Key"],
        ),
        ("no-template", runs("empty"), None, vec![], 422, vec!["name"]),
    ];
    for (case, path, body, headers, status, fields) in &cases {
        let mut headers = headers.clone();
        headers.push(("X-Request-Id", case));
        let reply = env.call(Method::POST, path, Some(ADMIN), body.as_ref(), &headers).await;
        assert_eq!(reply.status.as_u16(), *status, "{case}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/problem+json", "{case}");
        assert_eq!(reply.body["correlationId"], *case);
        assert_eq!(&reply.fields(), fields, "{case}: {}", reply.body);
    }
    let no_template = env.post(&runs("empty"), None).await;
    assert!(no_template.body.to_string().contains("template"), "{}", no_template.body);
    let records: BTreeMap<String, Value> = env
        .audit("action=advancedcronjob.run&outcome=rejected&limit=100")
        .await
        .into_iter()
        .map(|r| (r["correlationId"].as_str().unwrap().to_string(), r))
        .collect();
    for (case, _, _, _, status, _) in &cases {
        let record = records.get(*case).unwrap_or_else(|| panic!("no rejected audit record for {case}"));
        assert_eq!(record["httpStatus"], *status, "{case}: {record}");
        assert!(record["message"].is_string(), "{case}: {record}");
    }
    assert_eq!(broadcast_job_names(env).await, before, "nothing was created");
}

async fn refused_for_the_token(env: &Env) {
    let before = broadcast_job_names(env).await;
    let run = "/v1/namespaces/default/advancedcronjobs/nightly/runs";
    let nodes = "/v1/namespaces/default/broadcastjobs/whatever/nodes";
    let cases = [
        ("no token", Method::POST, run, None, StatusCode::UNAUTHORIZED),
        ("bad token", Method::POST, run, Some("not-a-token"), StatusCode::UNAUTHORIZED),
        ("rollout only", Method::POST, run, Some(CI), StatusCode::FORBIDDEN),
        ("job-read cannot run", Method::POST, run, Some(JOB_VIEWER), StatusCode::FORBIDDEN),
        ("audit-read only", Method::POST, run, Some(AUDITOR), StatusCode::FORBIDDEN),
        (
            "outside the namespaces",
            Method::POST,
            "/v1/namespaces/prod/advancedcronjobs/nightly/runs",
            Some(JOBS),
            StatusCode::FORBIDDEN,
        ),
        ("no token reads", Method::GET, nodes, None, StatusCode::UNAUTHORIZED),
        ("rollout only reads", Method::GET, nodes, Some(CI), StatusCode::FORBIDDEN),
        (
            "reads outside the namespaces",
            Method::GET,
            "/v1/namespaces/prod/broadcastjobs/whatever/nodes",
            Some(JOB_VIEWER),
            StatusCode::FORBIDDEN,
        ),
    ];
    for (case, method, path, token, status) in cases {
        let reply = env.call(method, path, token, None, &[]).await;
        assert_eq!(reply.status, status, "{case}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/problem+json", "{case}");
    }
    // job-read (and job) may read: the job does not exist, so 404 rather than 403.
    for token in [JOB_VIEWER, JOBS] {
        let reply = env.call(Method::GET, nodes, Some(token), None, &[]).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    }
    assert_eq!(broadcast_job_names(env).await, before, "nothing was created");

    let unauthenticated = env.audit("action=advancedcronjob.run&outcome=unauthenticated").await;
    assert_eq!(unauthenticated.len(), 2, "{unauthenticated:#?}");
    let denied: BTreeSet<(String, String, String)> = env
        .audit("outcome=denied&limit=500")
        .await
        .iter()
        .map(|r| {
            (
                r["actor"].as_str().unwrap().to_string(),
                r["action"].as_str().unwrap().to_string(),
                r["namespace"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    for expected in [
        ("ci", "advancedcronjob.run", "default"),
        ("job-viewer", "advancedcronjob.run", "default"),
        ("auditor", "advancedcronjob.run", "default"),
        ("jobs", "advancedcronjob.run", "prod"),
        ("ci", "broadcastjob.nodes", "default"),
        ("job-viewer", "broadcastjob.nodes", "prod"),
    ] {
        let expected = (expected.0.to_string(), expected.1.to_string(), expected.2.to_string());
        assert!(denied.contains(&expected), "{expected:?} not in {denied:?}");
    }
    // Successful reads are not recorded.
    assert!(env.audit("action=broadcastjob.nodes&outcome=accepted").await.is_empty());
}

/// A pod of the BroadcastJob `job` on `node`, with the status a kubelet would have written.
async fn job_pod(env: &Env, job: &BroadcastJob, name: &str, node: &str, status: Value) {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default",
                     "labels": {"broadcastjob-name": job.name_any(), "controller-uid": job.uid().unwrap()},
                     "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "BroadcastJob",
                                          "name": job.name_any(), "uid": job.uid().unwrap(), "controller": true}]},
        "spec": {"nodeName": node, "restartPolicy": "Never",
                 "containers": [{"name": "box", "image": "busybox"}]}
    }))
    .unwrap();
    env.pods.create(&PostParams::default(), &pod).await.unwrap();
    env.pods
        .patch_status(name, &PatchParams::default(), &Patch::Merge(json!({"status": status})))
        .await
        .unwrap();
}

async fn broadcastjob_nodes(env: &Env) {
    let job: BroadcastJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "BroadcastJob",
        "metadata": {"name": "warm-cache", "namespace": "default"},
        "spec": {"template": pod_template()}
    }))
    .unwrap();
    let job = broadcast_jobs(env).create(&PostParams::default(), &job).await.unwrap();
    let terminated = |code: i32, reason: &str| {
        json!({"phase": if code == 0 { "Succeeded" } else { "Failed" }, "startTime": "2026-01-01T00:00:00Z",
               "containerStatuses": [{"name": "box", "image": "busybox", "imageID": "", "ready": false,
                   "restartCount": 0, "state": {"terminated": {"exitCode": code, "reason": reason,
                       "startedAt": "2026-01-01T00:00:01Z", "finishedAt": "2026-01-01T00:00:04Z"}}}]})
    };
    job_pod(env, &job, "warm-cache-b", "node-b", terminated(1, "Error")).await;
    job_pod(env, &job, "warm-cache-a", "node-a", terminated(0, "Completed")).await;
    job_pod(env, &job, "warm-cache-c", "node-c", json!({"phase": "Running", "startTime": "2026-01-01T00:00:00Z",
        "containerStatuses": [{"name": "box", "image": "busybox", "imageID": "", "ready": true, "restartCount": 0,
            "state": {"running": {"startedAt": "2026-01-01T00:00:02Z"}}}]}))
    .await;
    broadcast_jobs(env)
        .patch_status(
            "warm-cache",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "running", "desired": 3, "active": 1, "succeeded": 1,
                                            "failed": 1, "startTime": "2026-01-01T00:00:00Z"}})),
        )
        .await
        .unwrap();

    let reply = env
        .call(
            Method::GET,
            "/v1/namespaces/default/broadcastjobs/warm-cache/nodes",
            Some(JOB_VIEWER),
            None,
            &[],
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let body = &reply.body;
    assert_eq!((&body["name"], &body["phase"]), (&json!("warm-cache"), &json!("running")), "{body}");
    assert_eq!(
        (&body["desired"], &body["active"], &body["succeeded"], &body["failed"]),
        (&json!(3), &json!(1), &json!(1), &json!(1)),
        "{body}"
    );
    let nodes = body["nodes"].as_array().unwrap();
    let summary: Vec<(String, String, String, Option<i64>)> = nodes
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap().to_string(),
                n["phase"].as_str().unwrap().to_string(),
                n["containers"][0]["state"].as_str().unwrap().to_string(),
                n["containers"][0]["exitCode"].as_i64(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("node-a".into(), "Succeeded".into(), "terminated".into(), Some(0)),
            ("node-b".into(), "Failed".into(), "terminated".into(), Some(1)),
            ("node-c".into(), "Running".into(), "running".into(), None),
        ],
        "{body}"
    );
    assert_eq!(nodes[1]["containers"][0]["reason"], "Error");
    assert_eq!(nodes[0]["finishTime"], "2026-01-01T00:00:04Z");

    let missing = env.get("/v1/namespaces/default/broadcastjobs/nope/nodes").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
    let invalid = env.get("/v1/namespaces/default/broadcastjobs/Bad_Name/nodes").await;
    assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", invalid.body);
    assert_eq!(invalid.fields(), ["name"]);
}

fn call<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    request.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

async fn through_grpc(env: &Env) {
    let channel = Channel::from_shared(env.grpc.clone()).unwrap().connect().await.unwrap();
    let mut jobs = JobsClient::new(channel);
    let run = |token: &str, name: &str, key: Option<&str>| {
        call(
            proto::RunAdvancedCronJobRequest {
                namespace: "default".into(),
                name: name.into(),
                reason: Some("from grpc".into()),
                idempotency_key: key.map(str::to_string),
            },
            token,
        )
    };
    let created =
        jobs.run_advanced_cron_job(run(JOBS, "nightly", Some("grpc-1"))).await.unwrap().into_inner();
    let first = created.run.unwrap();
    assert!(!created.replayed);
    assert_eq!(first.kind, proto::JobKind::BroadcastJob as i32);
    assert!(broadcast_jobs(env).get_opt(&first.name).await.unwrap().is_some());
    let again = jobs.run_advanced_cron_job(run(JOBS, "nightly", Some("grpc-1"))).await.unwrap().into_inner();
    assert!(again.replayed);
    assert_eq!(again.run.unwrap().name, first.name);

    let denied = jobs.run_advanced_cron_job(run(JOB_VIEWER, "nightly", None)).await.unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    let missing = jobs.run_advanced_cron_job(run(JOBS, "nope", None)).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound, "{missing:?}");
    let no_template = jobs.run_advanced_cron_job(run(JOBS, "empty", None)).await.unwrap_err();
    assert_eq!(no_template.code(), Code::InvalidArgument, "{no_template:?}");
    let fields: Vec<String> =
        kruise_api::grpc::rpc::field_violations(&no_template).into_iter().map(|v| v.field).collect();
    assert_eq!(fields, ["name"]);

    let nodes = jobs
        .get_broadcast_job_nodes(call(
            proto::GetBroadcastJobNodesRequest { namespace: "default".into(), name: "warm-cache".into() },
            JOB_VIEWER,
        ))
        .await
        .unwrap()
        .into_inner();
    let per_node: Vec<(Option<String>, String)> =
        nodes.nodes.iter().map(|n| (n.node.clone(), n.phase.clone())).collect();
    assert_eq!(
        per_node,
        [
            (Some("node-a".into()), "Succeeded".into()),
            (Some("node-b".into()), "Failed".into()),
            (Some("node-c".into()), "Running".into())
        ]
    );
    assert_eq!(nodes.nodes[1].containers[0].exit_code, Some(1));
    assert_eq!((nodes.desired, nodes.succeeded, nodes.failed), (3, 1, 1));

    let grpc_records = env.audit("action=advancedcronjob.run&actor=jobs&limit=100").await;
    assert!(
        grpc_records.iter().any(|r| r["request"]["method"] == "/kruise.api.v1.Jobs/RunAdvancedCronJob"
            && r["outcome"] == "accepted"
            && r["grpcStatus"] == 0),
        "{grpc_records:#?}"
    );
}
