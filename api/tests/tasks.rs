//! Image pre-pulls and container recreates through the REST API, against the embedded control
//! plane, three simulated nodes, the Kruise manager and a node daemon per node (all in
//! process), with the SQLite store:
//!
//! - an image pull over every node, and one over the nodes of a CloneSet's pods, reach
//!   Succeeded with per-node results; idempotent retries answer with the same pull;
//! - a recreate of one pod creates its ContainerRecreateRequest with the requested spec, and a
//!   recreate of a CloneSet creates one per pod, never more than `maxUnavailable` in flight; a
//!   failure with failure policy Fail stops the rest. The GET reflects the CRRs' status. The
//!   ContainerRecreateRequest executor may or may not be part of the build: the test writes a
//!   CRR's status itself (as the node daemon would) when no executor completed it within a few
//!   seconds, and writes the failed status of the failure case at once;
//! - bad input to both endpoints is a 4xx problem+json naming the field, recorded as rejected,
//!   with nothing created in the cluster; 401 and 403 are recorded too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod common;

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use common::{ADMIN, CI, Cast, Env, OPS, SETTLE, StoreChoice};
use kruise_crds::apps::v1beta1::{ContainerRecreateRequest, ImagePullJob};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams},
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_pulls_and_recreates_through_rest() {
    let env = Env::start_cast(StoreChoice::Sqlite, Cast::Daemons).await;
    env.create_cloneset("web", 3, "nginx:1.25").await;
    env.wait_settled("web", 3).await;
    bad_image_pulls(&env).await;
    bad_recreates(&env).await;
    refused_for_the_token(&env).await;
    image_pull_on_every_node(&env).await;
    image_pull_for_a_workload(&env).await;
    recreate_one_pod(&env).await;
    recreate_a_workload_batch_by_batch(&env).await;
    recreate_stops_after_a_failure(&env).await;
    env.shutdown().await;
}

fn crrs(env: &Env) -> Api<ContainerRecreateRequest> {
    Api::namespaced(env.client.clone(), "default")
}

fn jobs(env: &Env) -> Api<ImagePullJob> {
    Api::namespaced(env.client.clone(), "default")
}

/// The CRRs of a recreate, by name.
async fn crrs_of(env: &Env, id: &str) -> BTreeMap<String, ContainerRecreateRequest> {
    crrs(env)
        .list(&ListParams::default().labels(&format!("kruise.io/recreate-id={id}")))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|crr| (crr.name_any(), crr))
        .collect()
}

fn finished(crr: &ContainerRecreateRequest) -> bool {
    crr.status.as_ref().is_some_and(|s| s.phase.as_str() == "Completed")
}

/// Finishes a CRR: waits a few seconds for an executor, then writes the status the node daemon
/// writes when it is done (every container Succeeded, or `failed` Failed).
async fn complete_crr(env: &Env, name: &str, failed: Option<&str>) {
    if failed.is_none() {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if finished(&crrs(env).get(name).await.unwrap()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let crr = crrs(env).get(name).await.unwrap();
    let states: Vec<Value> = crr
        .spec
        .containers
        .iter()
        .map(|c| {
            if Some(c.name.as_str()) == failed {
                json!({"name": c.name, "phase": "Failed", "message": "the container did not start again"})
            } else {
                json!({"name": c.name, "phase": "Succeeded", "isKilled": true})
            }
        })
        .collect();
    let status = json!({"status": {
        "phase": "Completed",
        "completionTime": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "containerRecreateStates": states,
    }});
    crrs(env).patch_status(name, &PatchParams::default(), &Patch::Merge(&status)).await.unwrap();
}

/// Polls `GET path` until `state`, recorded in the history (by the watcher).
async fn wait_state(env: &Env, path: &str, state: &str) -> Value {
    let deadline = Instant::now() + SETTLE;
    loop {
        let reply = env.get(path).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let recorded =
            reply.body["history"].as_array().and_then(|h| h.last()).is_some_and(|t| t["to"] == state);
        if reply.body["state"] == state && recorded {
            return reply.body;
        }
        let ended = reply.body["finishedAt"].is_string();
        assert!(
            !ended && Instant::now() < deadline,
            "{path} never reached {state}: {}",
            serde_json::to_string_pretty(&reply.body).unwrap()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn pod_names(env: &Env) -> Vec<String> {
    let set = env.sets.get("web").await.unwrap();
    env.pods_of(&set).await.iter().map(|p| p.name_any()).collect()
}

/// Sends each case (name, body, expected status, expected fields) as `X-Request-Id: name` and
/// checks the problem document and the audit record.
async fn refused(env: &Env, path: &str, action: &str, cases: &[(&str, Value, u16, Vec<&str>)]) {
    for (case, body, status, fields) in cases {
        let reply = env.call(Method::POST, path, Some(ADMIN), Some(body), &[("X-Request-Id", case)]).await;
        assert_eq!(reply.status.as_u16(), *status, "{case}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/problem+json", "{case}");
        assert_eq!(reply.body["status"], *status, "{case}");
        assert_eq!(reply.body["correlationId"], *case);
        assert_eq!(&reply.fields(), fields, "{case}: {}", reply.body);
    }
    let records: BTreeMap<String, Value> = env
        .audit(&format!("action={action}&outcome=rejected&limit=500"))
        .await
        .into_iter()
        .map(|r| (r["correlationId"].as_str().unwrap().to_string(), r))
        .collect();
    for (case, _, status, _) in cases {
        let record = records.get(*case).unwrap_or_else(|| panic!("no rejected audit record for {case}"));
        assert_eq!(record["httpStatus"], *status, "{case}: {record}");
        assert_eq!(record["actor"], "admin");
        assert!(record["message"].is_string(), "{case}: {record}");
    }
}

async fn bad_image_pulls(env: &Env) {
    let path = "/v1/namespaces/default/image-pulls";
    let valid = |patch: Value| {
        let mut body = json!({"images": ["nginx:1.27"], "nodeSelector": {}});
        for (key, value) in patch.as_object().unwrap() {
            if value.is_null() {
                body.as_object_mut().unwrap().remove(key);
            } else {
                body[key] = value.clone();
            }
        }
        body
    };
    let cases = vec![
        ("pull-missing-images", valid(json!({"images": null})), 422, vec!["images"]),
        ("pull-empty-images", valid(json!({"images": []})), 422, vec!["images"]),
        ("pull-invalid-image", valid(json!({"images": ["nginx:1.27", "NOT A REF"]})), 422, vec!["images[1]"]),
        ("pull-duplicate-image", valid(json!({"images": ["busybox", "busybox"]})), 422, vec!["images[1]"]),
        ("pull-no-target", valid(json!({"nodeSelector": null})), 422, vec!["nodeSelector"]),
        (
            "pull-both-targets",
            valid(json!({"workload": {"kind": "CloneSet", "name": "web"}})),
            422,
            vec!["workload"],
        ),
        (
            "pull-unknown-workload",
            valid(json!({"nodeSelector": null, "workload": {"kind": "CloneSet", "name": "nope"}})),
            422,
            vec!["workload.name"],
        ),
        (
            "pull-bad-kind",
            valid(json!({"nodeSelector": null, "workload": {"kind": "Deployment", "name": "web"}})),
            422,
            vec!["workload.kind"],
        ),
        (
            "pull-unknown-node",
            valid(json!({"nodeSelector": {"names": ["no-such-node"]}})),
            422,
            vec!["nodeSelector.names[0]"],
        ),
        (
            "pull-bad-label",
            valid(json!({"nodeSelector": {"matchLabels": {"zone": "a b"}}})),
            422,
            vec!["nodeSelector.matchLabels.zone"],
        ),
        ("pull-parallelism", valid(json!({"parallelism": 0})), 422, vec!["parallelism"]),
        ("pull-timeout", valid(json!({"timeoutSeconds": -5})), 422, vec!["timeoutSeconds"]),
        ("pull-backoff", valid(json!({"backoffLimit": -1})), 422, vec!["backoffLimit"]),
        (
            "pull-unknown-secret",
            valid(json!({"pullSecrets": ["no-such-secret"]})),
            422,
            vec!["pullSecrets[0]"],
        ),
        ("pull-unknown-field", valid(json!({"imagez": ["x"]})), 422, vec!["imagez"]),
        ("pull-wrong-type", valid(json!({"parallelism": "many"})), 422, vec!["parallelism"]),
    ];
    refused(env, path, "image-pull.create", &cases).await;
    let left = jobs(env).list(&ListParams::default()).await.unwrap();
    assert!(left.items.is_empty(), "a refused pull created ImagePullJobs: {:?}", left.items);
    let missing = env.get(&format!("{path}/no-such-id")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
    assert_eq!(missing.content_type(), "application/problem+json");
}

async fn bad_recreates(env: &Env) {
    let path = "/v1/namespaces/default/recreates";
    let pod = pod_names(env).await[0].clone();
    let cases = vec![
        ("recreate-missing-containers", json!({"pod": pod}), 422, vec!["containers"]),
        ("recreate-empty-containers", json!({"pod": pod, "containers": []}), 422, vec!["containers"]),
        ("recreate-no-target", json!({"containers": ["nginx"]}), 422, vec!["pod"]),
        (
            "recreate-both-targets",
            json!({"pod": pod, "workload": {"kind": "CloneSet", "name": "web"}, "containers": ["nginx"]}),
            422,
            vec!["workload"],
        ),
        ("recreate-unknown-pod", json!({"pod": "no-such-pod", "containers": ["nginx"]}), 422, vec!["pod"]),
        (
            "recreate-unknown-container",
            json!({"pod": pod, "containers": ["nginx", "sidecar"]}),
            422,
            vec!["containers[1]"],
        ),
        (
            "recreate-unknown-workload",
            json!({"workload": {"kind": "CloneSet", "name": "nope"}, "containers": ["nginx"]}),
            422,
            vec!["workload.name"],
        ),
        (
            "recreate-workload-container",
            json!({"workload": {"kind": "CloneSet", "name": "web"}, "containers": ["sidecar"]}),
            422,
            vec!["containers[0]"],
        ),
        (
            "recreate-duplicate-container",
            json!({"pod": pod, "containers": ["nginx", "nginx"]}),
            422,
            vec!["containers[1]"],
        ),
        (
            "recreate-negative-grace",
            json!({"pod": pod, "containers": ["nginx"], "strategy": {"terminationGracePeriodSeconds": -1}}),
            422,
            vec!["strategy.terminationGracePeriodSeconds"],
        ),
        (
            "recreate-bad-policy",
            json!({"pod": pod, "containers": ["nginx"], "strategy": {"failurePolicy": "Sometimes"}}),
            422,
            vec!["strategy.failurePolicy"],
        ),
        (
            "recreate-bad-max-unavailable",
            json!({"workload": {"kind": "CloneSet", "name": "web"}, "containers": ["nginx"], "maxUnavailable": "150%"}),
            422,
            vec!["maxUnavailable"],
        ),
        (
            "recreate-zero-max-unavailable",
            json!({"workload": {"kind": "CloneSet", "name": "web"}, "containers": ["nginx"], "maxUnavailable": 0}),
            422,
            vec!["maxUnavailable"],
        ),
        (
            "recreate-unknown-field",
            json!({"pod": pod, "containers": ["nginx"], "strategy": {"ordered": true}}),
            422,
            vec!["strategy.ordered"],
        ),
    ];
    refused(env, path, "recreate.create", &cases).await;
    let not_json = env
        .http
        .post(format!("{}{path}", env.base))
        .bearer_auth(ADMIN)
        .header("content-type", "application/json")
        .body("{nope")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status(), StatusCode::BAD_REQUEST);
    let left = crrs(env).list(&ListParams::default()).await.unwrap();
    assert!(left.items.is_empty(), "a refused recreate created CRRs: {:?}", left.items);
    let missing = env.get(&format!("{path}/no-such-id")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
}

async fn refused_for_the_token(env: &Env) {
    let pull = json!({"images": ["nginx:1.27"], "nodeSelector": {}});
    let recreate = json!({"workload": {"kind": "CloneSet", "name": "web"}, "containers": ["nginx"]});
    let pulls = "/v1/namespaces/default/image-pulls";
    let recreates = "/v1/namespaces/default/recreates";
    let none = env.call(Method::POST, pulls, None, Some(&pull), &[]).await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED, "{}", none.body);
    let bad = env.call(Method::POST, recreates, Some("not-a-token"), Some(&recreate), &[]).await;
    assert_eq!(bad.status, StatusCode::UNAUTHORIZED, "{}", bad.body);
    // ci may run rollouts only; ops may pull and recreate in default only.
    let ci = env.call(Method::POST, pulls, Some(CI), Some(&pull), &[]).await;
    assert_eq!(ci.status, StatusCode::FORBIDDEN, "{}", ci.body);
    let ci = env.call(Method::POST, recreates, Some(CI), Some(&recreate), &[]).await;
    assert_eq!(ci.status, StatusCode::FORBIDDEN, "{}", ci.body);
    let elsewhere =
        env.call(Method::POST, "/v1/namespaces/prod/image-pulls", Some(OPS), Some(&pull), &[]).await;
    assert_eq!(elsewhere.status, StatusCode::FORBIDDEN, "{}", elsewhere.body);
    let read = env.call(Method::GET, &format!("{pulls}/whatever"), Some(CI), None, &[]).await;
    assert_eq!(read.status, StatusCode::FORBIDDEN, "{}", read.body);

    let unauthenticated = env.audit("outcome=unauthenticated&limit=500").await;
    let actions: BTreeSet<&str> = unauthenticated.iter().map(|r| r["action"].as_str().unwrap()).collect();
    assert!(actions.contains("image-pull.create") && actions.contains("recreate.create"), "{actions:?}");
    let denied = env.audit("outcome=denied&limit=500").await;
    let denied: BTreeSet<(String, String)> = denied
        .iter()
        .map(|r| (r["actor"].as_str().unwrap().to_string(), r["action"].as_str().unwrap().to_string()))
        .collect();
    for expected in [
        ("ci", "image-pull.create"),
        ("ci", "recreate.create"),
        ("ops", "image-pull.create"),
        ("ci", "image-pull.get"),
    ] {
        assert!(denied.contains(&(expected.0.into(), expected.1.into())), "{expected:?} not in {denied:?}");
    }
    assert!(jobs(env).list(&ListParams::default()).await.unwrap().items.is_empty());
    assert!(crrs(env).list(&ListParams::default()).await.unwrap().items.is_empty());
}

async fn image_pull_on_every_node(env: &Env) {
    let path = "/v1/namespaces/default/image-pulls";
    let body = json!({
        "images": ["registry.example/team/web:v2-slow-pull-1s", "busybox:1.36"],
        "nodeSelector": {},
        "parallelism": 2,
        "timeoutSeconds": 120,
        "backoffLimit": 2,
        "reason": "warm the nodes for 2.0",
    });
    let reply =
        env.call(Method::POST, path, Some(OPS), Some(&body), &[("Idempotency-Key", "warm-2.0")]).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let id = reply.body["id"].as_str().unwrap().to_string();
    assert_eq!(reply.headers["location"], format!("{path}/{id}"));
    assert_eq!(reply.body["state"], "Running", "{}", reply.body);
    assert_eq!(reply.body["createdBy"], "ops");
    assert_eq!(reply.body["request"], body);
    let images = reply.body["images"].as_array().unwrap();
    assert_eq!(images.len(), 2);

    // One ImagePullJob per image, with the request's settings.
    let created = jobs(env)
        .list(&ListParams::default().labels(&format!("kruise.io/image-pull-id={id}")))
        .await
        .unwrap();
    let by_image: BTreeMap<String, ImagePullJob> =
        created.items.into_iter().map(|job| (job.spec.image.clone(), job)).collect();
    assert_eq!(by_image.len(), 2, "{by_image:?}");
    let job = &by_image["busybox:1.36"];
    let spec = serde_json::to_value(&job.spec).unwrap();
    assert_eq!(spec["parallelism"], 2, "{spec}");
    assert_eq!(spec["pullPolicy"]["timeoutSeconds"], 120, "{spec}");
    assert_eq!(spec["pullPolicy"]["backoffLimit"], 2, "{spec}");
    assert_eq!(spec["completionPolicy"]["type"], "Always", "{spec}");
    assert!(spec.get("podSelector").is_none(), "{spec}");

    // A retry with the same key and body answers with the same pull; another body is 409.
    let retry =
        env.call(Method::POST, path, Some(OPS), Some(&body), &[("Idempotency-Key", "warm-2.0")]).await;
    assert_eq!(retry.status, StatusCode::ACCEPTED, "{}", retry.body);
    assert_eq!(retry.body["id"], id.as_str());
    assert_eq!(retry.headers["idempotent-replayed"], "true");
    let mut other = body.clone();
    other["parallelism"] = json!(1);
    let conflict =
        env.call(Method::POST, path, Some(OPS), Some(&other), &[("Idempotency-Key", "warm-2.0")]).await;
    assert_eq!(conflict.status, StatusCode::CONFLICT, "{}", conflict.body);

    let done = wait_state(env, &format!("{path}/{id}"), "Succeeded").await;
    let nodes = env.nodes.as_ref().unwrap().names().to_vec();
    for image in done["images"].as_array().unwrap() {
        assert_eq!(image["desired"], 3, "{image}");
        assert_eq!(image["succeeded"], 3, "{image}");
        assert_eq!(image["failed"], 0, "{image}");
        assert_eq!(image["completed"], true, "{image}");
        let results: BTreeMap<String, String> = image["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| (n["node"].as_str().unwrap().to_string(), n["phase"].as_str().unwrap().to_string()))
            .collect();
        assert_eq!(results.keys().cloned().collect::<Vec<_>>(), nodes, "{image}");
        assert!(results.values().all(|p| p == "Succeeded"), "{image}");
    }
    let history: Vec<&str> =
        done["history"].as_array().unwrap().iter().map(|t| t["to"].as_str().unwrap()).collect();
    assert_eq!(history, ["Pending", "Running", "Succeeded"], "{}", done["history"]);
    assert!(done["finishedAt"].is_string());

    // The results stay readable once the jobs are gone.
    for job in by_image.keys() {
        let name = by_image[job].name_any();
        jobs(env).delete(&name, &Default::default()).await.unwrap();
    }
    let after = env.get(&format!("{path}/{id}")).await;
    assert_eq!(after.body["state"], "Succeeded");
    assert_eq!(after.body["images"], done["images"]);

    let records = env.audit("action=image-pull.create&outcome=accepted").await;
    let record = records.iter().find(|r| r["taskId"] == id.as_str() && r["message"].is_null()).unwrap();
    assert_eq!(record["actor"], "ops");
    assert_eq!(record["target"], "nodes");
    assert_eq!(record["httpStatus"], 202);
    assert_eq!(record["request"]["body"]["images"], body["images"]);
    let replays = records.iter().filter(|r| r["taskId"] == id.as_str()).count();
    assert_eq!(replays, 2, "the original request and the replay: {records:#?}");
}

async fn image_pull_for_a_workload(env: &Env) {
    let path = "/v1/namespaces/default/image-pulls";
    let body = json!({"images": ["nginx:1.27"], "workload": {"kind": "CloneSet", "name": "web"}});
    let reply = env.post(path, Some(&body)).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let id = reply.body["id"].as_str().unwrap().to_string();
    let job = jobs(env)
        .list(&ListParams::default().labels(&format!("kruise.io/image-pull-id={id}")))
        .await
        .unwrap();
    let spec = serde_json::to_value(&job.items[0].spec).unwrap();
    assert_eq!(spec["podSelector"], json!({"matchLabels": {"app": "web"}}), "{spec}");

    let set = env.sets.get("web").await.unwrap();
    let pod_nodes: BTreeSet<String> = env
        .pods_of(&set)
        .await
        .iter()
        .filter_map(|p| p.spec.as_ref().and_then(|s| s.node_name.clone()))
        .collect();
    let done = wait_state(env, &format!("{path}/{id}"), "Succeeded").await;
    let image = &done["images"][0];
    assert_eq!(image["desired"], pod_nodes.len(), "{image}");
    let nodes: BTreeSet<String> =
        image["nodes"].as_array().unwrap().iter().map(|n| n["node"].as_str().unwrap().to_string()).collect();
    assert_eq!(nodes, pod_nodes, "the nodes of the workload's pods: {image}");
    let records = env.audit("action=image-pull.create&target=CloneSet/web").await;
    assert!(records.iter().any(|r| r["taskId"] == id.as_str() && r["outcome"] == "accepted"), "{records:#?}");
}

async fn recreate_one_pod(env: &Env) {
    let path = "/v1/namespaces/default/recreates";
    let pod = pod_names(env).await[0].clone();
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(env.client.clone(), "default");
    let target = pods.get(&pod).await.unwrap();
    let body = json!({
        "pod": pod,
        "containers": ["nginx"],
        "strategy": {"orderedRecreate": true, "failurePolicy": "Ignore", "terminationGracePeriodSeconds": 5,
                     "unreadyGracePeriodSeconds": 2, "minStartedSeconds": 1},
        "reason": "reload the config",
    });
    let reply = env.call(Method::POST, path, Some(OPS), Some(&body), &[]).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let id = reply.body["id"].as_str().unwrap().to_string();
    assert_eq!(reply.body["state"], "Running", "{}", reply.body);
    assert_eq!(reply.body["pods"][0]["pod"], pod.as_str());
    assert!(
        ["Pending", "Recreating"].contains(&reply.body["pods"][0]["phase"].as_str().unwrap()),
        "{}",
        reply.body
    );

    let created = crrs_of(env, &id).await;
    assert_eq!(created.len(), 1, "{created:?}");
    let (name, crr) = created.iter().next().unwrap();
    assert_eq!(reply.body["pods"][0]["request"], name.as_str());
    assert_eq!(crr.spec.pod_name, pod);
    assert_eq!(crr.spec.containers.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["nginx"]);
    let strategy = serde_json::to_value(crr.spec.strategy.as_ref().unwrap()).unwrap();
    assert_eq!(
        strategy,
        json!({"failurePolicy": "Ignore", "orderedRecreate": true, "terminationGracePeriodSeconds": 5,
               "unreadyGracePeriodSeconds": 2, "minStartedSeconds": 1}),
    );
    let labels = crr.labels();
    assert_eq!(labels["crr.apps.kruise.io/pod-uid"], target.uid().unwrap());
    assert_eq!(
        &labels["crr.apps.kruise.io/node-name"],
        target.spec.as_ref().unwrap().node_name.as_ref().unwrap()
    );
    assert_eq!(crr.owner_references()[0].uid, target.uid().unwrap());

    // The GET follows the CRR's status (as it is right before and right after the GET).
    let phase_of = |crr: &ContainerRecreateRequest| match crr.status.as_ref().map(|s| s.phase.as_str()) {
        Some("Completed") => "Succeeded",
        Some("Recreating") => "Recreating",
        _ => "Pending",
    };
    let before = phase_of(&crrs(env).get(name).await.unwrap());
    let now = env.get(&format!("{path}/{id}")).await;
    let after = phase_of(&crrs(env).get(name).await.unwrap());
    let shown = now.body["pods"][0]["phase"].as_str().unwrap();
    assert!(shown == before || shown == after, "GET shows {shown}, the CRR went {before} -> {after}");
    complete_crr(env, name, None).await;
    let done = wait_state(env, &format!("{path}/{id}"), "Succeeded").await;
    assert_eq!(done["pods"][0]["phase"], "Succeeded", "{done}");
    assert_eq!(done["pods"][0]["containers"][0]["phase"], "Succeeded", "{done}");
    assert_eq!(done["maxUnavailable"], 1);

    let records = env.audit("action=recreate.create&outcome=accepted").await;
    let record = records.iter().find(|r| r["taskId"] == id.as_str()).unwrap();
    assert_eq!(record["target"], format!("Pod/{pod}"));
    assert_eq!(record["actor"], "ops");
}

async fn recreate_a_workload_batch_by_batch(env: &Env) {
    let path = "/v1/namespaces/default/recreates";
    let body = json!({"workload": {"kind": "CloneSet", "name": "web"}, "containers": ["nginx"], "maxUnavailable": 1});
    let reply = env.post(path, Some(&body)).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let id = reply.body["id"].as_str().unwrap().to_string();
    let pods = pod_names(env).await;
    let planned: Vec<&str> =
        reply.body["pods"].as_array().unwrap().iter().map(|p| p["pod"].as_str().unwrap()).collect();
    assert_eq!(planned, pods.iter().map(String::as_str).collect::<Vec<_>>());
    let phases: Vec<&str> =
        reply.body["pods"].as_array().unwrap().iter().map(|p| p["phase"].as_str().unwrap()).collect();
    assert!(["Pending", "Recreating", "Succeeded"].contains(&phases[0]), "{}", reply.body);
    assert_eq!(phases[1..], ["Waiting", "Waiting"], "{}", reply.body);

    // One pod at a time, in order: a CRR appears only once the one before it finished.
    let deadline = Instant::now() + SETTLE;
    loop {
        let current = crrs_of(env, &id).await;
        let open: Vec<&String> =
            current.iter().filter(|(_, crr)| !finished(crr)).map(|(name, _)| name).collect();
        assert!(open.len() <= 1, "more than maxUnavailable CRRs in flight: {open:?}");
        for (name, crr) in &current {
            let index: usize = name.rsplit('-').next().unwrap().parse().unwrap();
            assert_eq!(crr.spec.pod_name, pods[index], "{name}: pods are recreated in order");
        }
        if current.len() == pods.len() && open.is_empty() {
            break;
        }
        if let Some(name) = open.first() {
            complete_crr(env, name, None).await;
        }
        assert!(Instant::now() < deadline, "the recreate stalled: {:?}", current.keys());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let done = wait_state(env, &format!("{path}/{id}"), "Succeeded").await;
    let phases: Vec<&str> =
        done["pods"].as_array().unwrap().iter().map(|p| p["phase"].as_str().unwrap()).collect();
    assert_eq!(phases, ["Succeeded", "Succeeded", "Succeeded"], "{done}");
    let record = env.audit("action=recreate.create&target=CloneSet/web&outcome=accepted").await;
    assert!(record.iter().any(|r| r["taskId"] == id.as_str()), "{record:#?}");
}

async fn recreate_stops_after_a_failure(env: &Env) {
    let path = "/v1/namespaces/default/recreates";
    // A long unready grace period keeps an executor, if there is one, from recreating anything
    // before the test writes the failure.
    let body = json!({
        "workload": {"kind": "CloneSet", "name": "web"},
        "containers": ["nginx"],
        "strategy": {"unreadyGracePeriodSeconds": 60},
        "maxUnavailable": "34%",
    });
    let reply = env.post(path, Some(&body)).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert_eq!(reply.body["maxUnavailable"], 1, "34% of 3 pods, rounded down, at least 1");
    let id = reply.body["id"].as_str().unwrap().to_string();
    let first = crrs_of(env, &id).await;
    assert_eq!(first.len(), 1);
    let name = first.keys().next().unwrap().clone();
    complete_crr(env, &name, Some("nginx")).await;
    let done = wait_state(env, &format!("{path}/{id}"), "Failed").await;
    let phases: Vec<&str> =
        done["pods"].as_array().unwrap().iter().map(|p| p["phase"].as_str().unwrap()).collect();
    assert_eq!(phases, ["Failed", "Skipped", "Skipped"], "{done}");
    assert_eq!(done["pods"][0]["containers"][0]["message"], "the container did not start again");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(crrs_of(env, &id).await.len(), 1, "no CRR after a failure with failure policy Fail");
}
