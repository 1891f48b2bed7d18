//! SidecarSet rollouts through the REST API against the embedded control plane, three simulated
//! nodes and the Kruise manager (pod webhook and SidecarSet controller, in process), with the
//! SQLite store. A SidecarSet is cluster-scoped, so its rollouts live at
//! `/v1/sidecarsets/{name}/rollouts`:
//!
//! - bad requests are 4xx naming the field (unknown container, bad image, bad partition, a field
//!   SidecarSets do not have, a NotUpdate strategy, a SidecarSet named in a namespace's request),
//!   a missing SidecarSet is 404, and a token limited to some namespaces is 403;
//! - a rollout with a partition upgrades the sidecar in place on all but the kept pods and waits
//!   there; pause, resume and promote show in the SidecarSet; it ends Succeeded with every pod
//!   keeping its UID; its event stream, listing and history say so;
//! - abort puts the previous sidecar image back on every pod;
//! - every request is in the audit, without a namespace, under `SidecarSet/<name>`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod common;

use std::time::{Duration, Instant};

use common::{ADMIN, CI, Env, SETTLE, StoreChoice};
use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1beta1::SidecarSet;
use kube::{
    Api, ResourceExt,
    api::{ListParams, PostParams},
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const BASE: &str = "/v1/sidecarsets/logs/rollouts";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sidecarset_rollouts_through_rest() {
    let env = Env::start(StoreChoice::Sqlite, true).await;
    let sets: Api<SidecarSet> = Api::all(env.client.clone());
    create_sidecarset(&sets, "logs", "web", "RollingUpdate").await;
    create_sidecarset(&sets, "frozen", "nothing", "NotUpdate").await;
    env.create_cloneset("web", 3, "nginx:1.25").await;
    env.wait_settled("web", 3).await;
    wait_sidecarset(&sets, "logs", "3 pods injected, updated and ready", |s| counts(s) == (3, 3, 3)).await;

    bad_requests_name_their_field(&env).await;
    partition_pause_resume_promote(&env, &sets).await;
    abort_puts_the_previous_image_back(&env, &sets).await;
    audited_without_a_namespace(&env).await;
    env.shutdown().await;
}

async fn create_sidecarset(sets: &Api<SidecarSet>, name: &str, app: &str, strategy: &str) {
    let set: SidecarSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": app}},
            "containers": [{"name": "agent", "image": "log-agent:1"}],
            "updateStrategy": {"type": strategy, "maxUnavailable": 1},
        },
    }))
    .unwrap();
    sets.create(&PostParams::default(), &set).await.unwrap();
}

/// `(matched, updated, updatedReady)` of a SidecarSet's status.
fn counts(set: &SidecarSet) -> (i32, i32, i32) {
    let status = set.status.clone().unwrap_or_default();
    (status.matched_pods, status.updated_pods, status.updated_ready_pods)
}

async fn wait_sidecarset(
    sets: &Api<SidecarSet>,
    name: &str,
    what: &str,
    check: impl Fn(&SidecarSet) -> bool,
) -> SidecarSet {
    let deadline = Instant::now() + SETTLE;
    loop {
        let set = sets.get(name).await.unwrap();
        if check(&set) {
            return set;
        }
        assert!(
            Instant::now() < deadline,
            "SidecarSet {name}: timed out waiting for {what}: {:?}",
            set.status
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn agent_image(set: &SidecarSet) -> String {
    set.spec.containers[0].container.image.clone().unwrap_or_default()
}

/// `(partition, paused)` of a SidecarSet's update strategy (`"0"` when unset).
fn strategy_of(set: &SidecarSet) -> (String, bool) {
    let strategy = &set.spec.update_strategy;
    let partition =
        strategy.partition.as_ref().map(|p| serde_json::to_string(p).unwrap()).unwrap_or_else(|| "0".into());
    (partition, strategy.paused)
}

fn pod_agent_image(pod: &Pod) -> String {
    let containers = &pod.spec.as_ref().unwrap().containers;
    containers.iter().find(|c| c.name == "agent").and_then(|c| c.image.clone()).unwrap_or_default()
}

async fn wait_rollout(env: &Env, id: &str, state: &str) -> Value {
    let deadline = Instant::now() + SETTLE;
    loop {
        let reply = env.get(&format!("{BASE}/{id}")).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        if reply.body["state"] == state {
            return reply.body;
        }
        assert!(Instant::now() < deadline, "rollout {id} never reached {state}: {}", reply.body);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn bad_requests_name_their_field(env: &Env) {
    let agent = |image: &str| json!({"images": {"agent": image}});
    let cases: Vec<(&str, &str, Value, StatusCode, &[&str])> = vec![
        (
            "unknown container",
            BASE,
            json!({"images": {"web": "nginx:1.27"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            &["images.web"],
        ),
        (
            "bad image reference",
            BASE,
            agent("Log-Agent:UPPER"),
            StatusCode::UNPROCESSABLE_ENTITY,
            &["images.agent"],
        ),
        (
            "partition above the matched pods",
            BASE,
            json!({"images": {"agent": "log-agent:2"}, "strategy": {"partition": 4}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            &["strategy.partition"],
        ),
        (
            "partition not a percentage",
            BASE,
            json!({"images": {"agent": "log-agent:2"}, "strategy": {"partition": "lots"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            &["strategy.partition"],
        ),
        (
            "a field SidecarSets do not have",
            BASE,
            json!({"images": {"agent": "log-agent:2"}, "strategy": {"podUpdatePolicy": "ReCreate"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            &["strategy.podUpdatePolicy"],
        ),
        (
            "NotUpdate cannot be driven",
            "/v1/sidecarsets/frozen/rollouts",
            agent("log-agent:2"),
            StatusCode::UNPROCESSABLE_ENTITY,
            &["name"],
        ),
        (
            "no such SidecarSet",
            "/v1/sidecarsets/nope/rollouts",
            agent("log-agent:2"),
            StatusCode::NOT_FOUND,
            &[],
        ),
        (
            "a SidecarSet in a namespace's request",
            "/v1/namespaces/default/rollouts",
            json!({"workload": {"kind": "SidecarSet", "name": "logs"}, "images": {"agent": "log-agent:2"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            &["workload.kind"],
        ),
    ];
    for (case, path, body, status, fields) in cases {
        let reply = env.post(path, Some(&body)).await;
        assert_eq!(reply.status, status, "{case}: {}", reply.body);
        assert_eq!(reply.content_type(), "application/problem+json", "{case}");
        assert_eq!(reply.fields(), fields, "{case}: {}", reply.body);
    }
    let frozen = env.post("/v1/sidecarsets/frozen/rollouts", Some(&agent("log-agent:2"))).await;
    assert!(frozen.body["errors"][0]["message"].as_str().unwrap().contains("NotUpdate"), "{}", frozen.body);

    // A token limited to some namespaces may not touch a SidecarSet: its pods are anywhere.
    let denied = env.call(Method::POST, BASE, Some(CI), Some(&agent("log-agent:2")), &[]).await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{}", denied.body);
    assert!(denied.body["detail"].as_str().unwrap().contains("every namespace"), "{}", denied.body);
    let denied = env.call(Method::GET, BASE, Some(CI), None, &[]).await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{}", denied.body);
}

async fn partition_pause_resume_promote(env: &Env, sets: &Api<SidecarSet>) {
    let pods_before: Vec<(String, String)> = env
        .pods_of(&env.sets.get("web").await.unwrap())
        .await
        .iter()
        .map(|p| (p.name_any(), p.uid().unwrap()))
        .collect();
    let body = json!({"images": {"agent": "log-agent:2"}, "strategy": {"partition": 1}, "reason": "agent 2"});
    let reply =
        env.call(Method::POST, BASE, Some(ADMIN), Some(&body), &[("Idempotency-Key", "agent-2")]).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let id = reply.body["id"].as_str().unwrap().to_string();
    assert_eq!(reply.headers["location"].to_str().unwrap(), format!("{BASE}/{id}"));
    assert!(reply.body.get("namespace").is_none(), "cluster-scoped: {}", reply.body);
    assert_eq!(reply.body["workload"], json!({"kind": "SidecarSet", "name": "logs"}));
    assert_eq!(reply.body["request"]["images"]["agent"], "log-agent:2");
    assert!(reply.body["previousRevision"].is_string(), "{}", reply.body);
    assert_eq!(agent_image(&sets.get("logs").await.unwrap()), "log-agent:2");
    let again =
        env.call(Method::POST, BASE, Some(ADMIN), Some(&body), &[("Idempotency-Key", "agent-2")]).await;
    assert_eq!((again.status, again.body["id"].as_str()), (StatusCode::ACCEPTED, Some(id.as_str())));
    assert_eq!(again.headers["idempotent-replayed"], "true");

    // Two of the three pods move; the partition keeps the third until promoted.
    let held = wait_rollout(env, &id, "Paused").await;
    assert!(held["message"].as_str().unwrap().contains("promote"), "{held}");
    assert_eq!(
        (&held["progress"]["replicas"], &held["progress"]["updatedReady"], &held["progress"]["partition"]),
        (&json!(3), &json!(2), &json!(1)),
        "{held}"
    );
    let not_here = env.get(&format!("/v1/namespaces/default/rollouts/{id}")).await;
    assert_eq!(not_here.status, StatusCode::NOT_FOUND, "a namespace does not hold it: {}", not_here.body);

    let reply = env.post(&format!("{BASE}/{id}/pause"), None).await;
    assert_eq!(
        (reply.status, reply.body["state"].as_str()),
        (StatusCode::ACCEPTED, Some("Paused")),
        "{}",
        reply.body
    );
    assert_eq!(strategy_of(&sets.get("logs").await.unwrap()), ("1".into(), true));
    let reply = env.post(&format!("{BASE}/{id}/resume"), None).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert_eq!(strategy_of(&sets.get("logs").await.unwrap()), ("1".into(), false));
    let reply = env.post(&format!("{BASE}/{id}/promote"), Some(&json!({"partition": 2}))).await;
    assert_eq!(
        (reply.status, reply.fields()),
        (StatusCode::UNPROCESSABLE_ENTITY, vec!["partition".to_string()])
    );
    let reply = env.post(&format!("{BASE}/{id}/promote"), None).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert_eq!(strategy_of(&sets.get("logs").await.unwrap()), ("0".into(), false));

    let done = wait_rollout(env, &id, "Succeeded").await;
    assert_eq!(
        (&done["progress"]["updated"], &done["progress"]["updatedReady"]),
        (&json!(3), &json!(3)),
        "{done}"
    );
    let pods = env.pods_of(&env.sets.get("web").await.unwrap()).await;
    let pods_after: Vec<(String, String)> = pods.iter().map(|p| (p.name_any(), p.uid().unwrap())).collect();
    assert_eq!(pods_after, pods_before, "upgraded in place: the same pods");
    assert!(pods.iter().all(|p| pod_agent_image(p) == "log-agent:2"), "every sidecar upgraded");

    // The event stream of a finished rollout is its final state; the listing has it.
    let events =
        env.http.get(format!("{}{BASE}/{id}/events", env.base)).bearer_auth(ADMIN).send().await.unwrap();
    assert_eq!(events.status(), StatusCode::OK);
    let text = events.text().await.unwrap();
    assert!(text.contains("event: rollout") && text.contains("\"Succeeded\""), "{text}");
    let list = env.get(&format!("{BASE}?state=Succeeded")).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert!(list.body["items"].as_array().unwrap().iter().any(|r| r["id"] == id.as_str()), "{}", list.body);
    let reasons: Vec<String> = done["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["reason"].as_str().unwrap().to_string())
        .collect();
    for reason in ["Requested", "Paused", "Resumed", "Promoted"] {
        assert!(reasons.iter().any(|r| r == reason), "{reason} missing from {reasons:?}");
    }
}

async fn abort_puts_the_previous_image_back(env: &Env, sets: &Api<SidecarSet>) {
    let before = wait_sidecarset(sets, "logs", "settled", |s| counts(s) == (3, 3, 3)).await;
    let previous = before.status.unwrap().latest_revision;
    let body = json!({"images": {"agent": "log-agent:3"}, "strategy": {"partition": 2}});
    let reply = env.post(BASE, Some(&body)).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let id = reply.body["id"].as_str().unwrap().to_string();
    assert_eq!(reply.body["previousRevision"].as_str(), Some(previous.as_str()));
    wait_rollout(env, &id, "Paused").await;

    let reply = env.post(&format!("{BASE}/{id}/abort"), None).await;
    assert_eq!(
        (reply.status, reply.body["state"].as_str()),
        (StatusCode::ACCEPTED, Some("Aborted")),
        "{}",
        reply.body
    );
    let set = sets.get("logs").await.unwrap();
    assert_eq!((agent_image(&set), strategy_of(&set)), ("log-agent:2".into(), ("0".into(), false)));
    wait_sidecarset(sets, "logs", "every pod back at the previous revision", |s| {
        counts(s) == (3, 3, 3) && s.status.as_ref().is_some_and(|status| status.latest_revision == previous)
    })
    .await;
    let deadline = Instant::now() + SETTLE;
    loop {
        let pods = env.pods_of(&env.sets.get("web").await.unwrap()).await;
        if pods.len() == 3 && pods.iter().all(|p| pod_agent_image(p) == "log-agent:2") {
            break;
        }
        assert!(Instant::now() < deadline, "the sidecars never went back to log-agent:2");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let reply = env.post(&format!("{BASE}/{id}/resume"), None).await;
    assert_eq!(reply.status, StatusCode::CONFLICT, "an aborted rollout cannot be resumed: {}", reply.body);
}

async fn audited_without_a_namespace(env: &Env) {
    let records = env.audit("target=SidecarSet/logs&limit=100").await;
    let actions: Vec<String> = records
        .iter()
        .map(|r| format!("{}:{}", r["action"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    for expected in [
        "rollout.create:accepted",
        "rollout.create:rejected",
        "rollout.create:denied",
        "rollout.pause:accepted",
        "rollout.resume:accepted",
        "rollout.promote:accepted",
        "rollout.promote:rejected",
        "rollout.abort:accepted",
        "rollout.resume:rejected",
    ] {
        assert!(actions.contains(&expected.to_string()), "{expected} missing from {actions:?}");
    }
    // Requests on the SidecarSet's own collection have no namespace; the one that named it in a
    // namespace's request is filed under that namespace.
    for record in &records {
        let namespaced = record["request"]["path"].as_str().unwrap().starts_with("/v1/namespaces/");
        assert_eq!(record.get("namespace").is_some(), namespaced, "{record:#}");
    }
    let created =
        records.iter().find(|r| r["action"] == "rollout.create" && r["outcome"] == "accepted").unwrap();
    assert_eq!(created["request"]["path"], BASE);
    assert_eq!(
        created["request"]["body"],
        json!({"images": {"agent": "log-agent:3"}, "strategy": {"partition": 2}})
    );
    assert_eq!(created["httpStatus"], 202);
    assert!(created["rolloutId"].is_string());
    assert!(!serde_json::to_string(&records).unwrap().contains(ADMIN), "a token leaked into the audit");
    let in_default = env.audit("namespace=default&target=SidecarSet/logs").await;
    assert_eq!(in_default.len(), 1, "only the namespaced request: {in_default:#?}");
    assert_eq!(in_default[0]["request"]["path"], "/v1/namespaces/default/rollouts");
    let sets: Api<SidecarSet> = Api::all(env.client.clone());
    assert_eq!(sets.list(&ListParams::default()).await.unwrap().items.len(), 2);
}
