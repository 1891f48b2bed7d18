//! Rollouts through the REST API against the embedded control plane, three simulated nodes and
//! the Kruise manager (all in process), with the SQLite store: a rollout reaches Succeeded with
//! pods updated in place (same UIDs) and its event stream ends there; pause, resume, promote and
//! abort each show in the CloneSet; an idempotent retry returns the same rollout and the same key
//! with another body is 409; every change is in the audit, without tokens.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod common;

use std::collections::BTreeMap;

use common::{ADMIN, Env, StoreChoice, image_of, strategy_of, template_image};
use kube::ResourceExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollouts_through_rest() {
    let env = Env::start(StoreChoice::Sqlite, true).await;
    in_place_rollout_succeeds(&env).await;
    pause_resume_promote_abort(&env).await;
    idempotent_retries(&env).await;
    env.shutdown().await;
}

fn rollout(name: &str, image: &str, strategy: Value) -> Value {
    json!({
        "workload": {"kind": "CloneSet", "name": name},
        "images": {"nginx": image},
        "strategy": strategy,
        "reason": format!("roll {name} to {image}"),
    })
}

/// The `data:` payloads of the `rollout` events of a server-sent event stream.
fn sse_rollouts(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut event = String::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("event:") {
            event = name.trim().to_string();
        } else if let Some(data) = line.strip_prefix("data:")
            && event == "rollout"
        {
            out.push(serde_json::from_str(data.trim()).unwrap());
        }
    }
    out
}

async fn in_place_rollout_succeeds(env: &Env) {
    env.create_cloneset("web", 3, "nginx:1.25").await;
    let (_, pods) = env.wait_settled("web", 3).await;
    let uids_before: BTreeMap<String, String> =
        pods.iter().map(|p| (p.name_any(), p.uid().unwrap())).collect();

    let reply =
        env.post("/v1/namespaces/default/rollouts", Some(&rollout("web", "nginx:1.26", json!({})))).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let id = reply.body["id"].as_str().unwrap().to_string();
    assert_eq!(reply.headers["location"].to_str().unwrap(), format!("/v1/namespaces/default/rollouts/{id}"));
    assert_eq!(reply.body["namespace"], "default");
    assert_eq!(reply.body["workload"], json!({"kind": "CloneSet", "name": "web"}));
    assert_eq!(reply.body["createdBy"], "admin");
    assert!(reply.body["createdAt"].is_string());
    assert!(
        ["Pending", "Progressing", "Succeeded"].contains(&reply.body["state"].as_str().unwrap()),
        "{}",
        reply.body
    );
    let revision = reply.body["revision"].as_str().expect("the controller named the revision").to_string();
    assert!(revision.starts_with("web-"), "{revision}");
    assert_ne!(reply.body["previousRevision"].as_str(), Some(revision.as_str()));

    // The event stream follows the rollout and ends with its terminal state.
    let events = env
        .http
        .get(format!("{}/v1/namespaces/default/rollouts/{id}/events", env.base))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::OK);
    assert!(events.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let events = sse_rollouts(&events.text().await.unwrap());
    assert!(!events.is_empty());
    assert_eq!(events.last().unwrap()["state"], "Succeeded", "{events:#?}");

    let done = env.wait_rollout(&id, "Succeeded").await;
    let (_, pods) = env.wait_settled("web", 3).await;
    for pod in &pods {
        assert_eq!(image_of(pod), "nginx:1.26");
        assert_eq!(uids_before.get(&pod.name_any()), pod.uid().as_ref(), "{} was recreated", pod.name_any());
        let restarts = pod.status.as_ref().unwrap().container_statuses.as_ref().unwrap()[0].restart_count;
        assert_eq!(restarts, 1, "{} restarted its container once", pod.name_any());
    }
    assert_eq!(done["progress"]["updated"], 3, "{done}");
    assert_eq!(done["progress"]["updatedReady"], 3, "{done}");

    // The watcher recorded how it ended, with the in-place count of the final snapshot.
    let recorded = env.wait_recorded(&id, "Succeeded").await;
    let history = recorded["history"].as_array().unwrap();
    assert_eq!(history[0]["to"], "Pending");
    assert_eq!(history[0]["actor"], "admin");
    assert_eq!(history[0]["reason"], "Requested");
    assert_eq!(history.last().unwrap()["actor"], "watcher");
    assert_eq!(recorded["progress"]["inPlaceUpdated"], 3, "{recorded}");
    assert_eq!(recorded["progress"]["recreated"], 0, "{recorded}");
    assert!(recorded["finishedAt"].is_string());

    // Listing and filtering.
    let list = env.get("/v1/namespaces/default/rollouts?workload=web&state=Succeeded").await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert!(list.body["items"].as_array().unwrap().iter().any(|r| r["id"] == id.as_str()));
    let none = env.get("/v1/namespaces/default/rollouts?workload=web&state=Failed").await;
    assert!(none.body["items"].as_array().unwrap().is_empty(), "{}", none.body);

    // The audit has one record for the request, with the body and no token.
    let records = env.audit("action=rollout.create&target=CloneSet/web").await;
    assert_eq!(records.len(), 1, "{records:#?}");
    let record = &records[0];
    assert_eq!(record["outcome"], "accepted");
    assert_eq!(record["httpStatus"], 202);
    assert_eq!(record["actor"], "admin");
    assert_eq!(record["namespace"], "default");
    assert_eq!(record["rolloutId"], id.as_str());
    assert_eq!(record["request"]["method"], "POST");
    assert_eq!(record["request"]["body"]["images"]["nginx"], "nginx:1.26");
    assert!(!record.to_string().contains(ADMIN), "the token leaked into the audit: {record}");
}

async fn pause_resume_promote_abort(env: &Env) {
    env.create_cloneset("canary", 4, "nginx:1.25").await;
    env.wait_settled("canary", 4).await;
    let path = "/v1/namespaces/default/rollouts";

    // Partition 2: two pods move, then the rollout waits for promote.
    let reply = env.post(path, Some(&rollout("canary", "nginx:1.26", json!({"partition": 2})))).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let id = reply.body["id"].as_str().unwrap().to_string();
    let first_revision = reply.body["previousRevision"].as_str().unwrap().to_string();
    let paused = env.wait_rollout(&id, "Paused").await;
    assert!(paused["message"].as_str().unwrap().contains("promote"), "{paused}");
    assert_eq!(paused["progress"]["updatedReady"], 2, "{paused}");
    assert_eq!(paused["progress"]["partition"], 2, "{paused}");

    // Pause and resume set and clear the CloneSet's paused flag.
    let reply = env.post(&format!("{path}/{id}/pause"), None).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert_eq!(reply.body["state"], "Paused");
    assert_eq!(strategy_of(&env.sets.get("canary").await.unwrap()), ("2".into(), true));
    let reply = env.post(&format!("{path}/{id}/resume"), None).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert_eq!(strategy_of(&env.sets.get("canary").await.unwrap()), ("2".into(), false));

    // Promote one step, refuse to go backwards, then promote to every pod.
    let reply = env.post(&format!("{path}/{id}/promote"), Some(&json!({"partition": 1}))).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert_eq!(strategy_of(&env.sets.get("canary").await.unwrap()), ("1".into(), false));
    env.wait_set("canary", "3 pods updated", |set, _| {
        set.status.as_ref().is_some_and(|s| s.updated_ready_replicas == 3)
    })
    .await;
    let reply = env.post(&format!("{path}/{id}/promote"), Some(&json!({"partition": 3}))).await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", reply.body);
    assert_eq!(reply.fields(), ["partition"]);
    let reply = env.post(&format!("{path}/{id}/promote"), None).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert_eq!(strategy_of(&env.sets.get("canary").await.unwrap()), ("0".into(), false));
    env.wait_rollout(&id, "Succeeded").await;
    let recorded = env.wait_recorded(&id, "Succeeded").await;
    let reasons: Vec<&str> =
        recorded["history"].as_array().unwrap().iter().map(|t| t["reason"].as_str().unwrap()).collect();
    for reason in ["Requested", "PartitionReached", "Paused", "Resumed", "Promoted"] {
        assert!(reasons.contains(&reason), "{reason} missing from {reasons:?}");
    }

    // A finished rollout cannot be aborted.
    let reply = env.post(&format!("{path}/{id}/abort"), None).await;
    assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.body);
    assert_eq!(reply.content_type(), "application/problem+json");

    // Abort goes back to the previous revision's template, every pod, unpaused.
    let reply = env.post(path, Some(&rollout("canary", "nginx:1.27", json!({"partition": 2})))).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    let second = reply.body["id"].as_str().unwrap().to_string();
    let previous = reply.body["previousRevision"].as_str().unwrap().to_string();
    assert_ne!(previous, first_revision, "the previous revision is the one the first rollout made");
    env.wait_rollout(&second, "Paused").await;
    let reply = env.post(&format!("{path}/{second}/abort"), None).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
    assert_eq!(reply.body["state"], "Aborted");
    let set = env.sets.get("canary").await.unwrap();
    assert_eq!(template_image(&set), "nginx:1.26");
    assert_eq!(strategy_of(&set), ("0".into(), false));
    env.wait_set("canary", "rolled back to the previous revision", |set, pods| {
        set.status.as_ref().is_some_and(|s| s.update_revision == previous && s.updated_ready_replicas == 4)
            && pods.len() == 4
            && pods.iter().all(|p| image_of(p) == "nginx:1.26")
    })
    .await;
    let reply = env.post(&format!("{path}/{second}/pause"), None).await;
    assert_eq!(reply.status, StatusCode::CONFLICT, "an aborted rollout cannot be paused: {}", reply.body);
    let aborted = env.get(&format!("{path}/{second}")).await;
    assert_eq!(aborted.body["state"], "Aborted");
    assert_eq!(aborted.body["history"].as_array().unwrap().last().unwrap()["actor"], "admin");

    let actions: Vec<String> = env
        .audit("target=CloneSet/canary&limit=100")
        .await
        .iter()
        .map(|r| format!("{}:{}", r["action"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    for expected in [
        "rollout.create:accepted",
        "rollout.pause:accepted",
        "rollout.resume:accepted",
        "rollout.promote:accepted",
        "rollout.promote:rejected",
        "rollout.abort:rejected",
        "rollout.abort:accepted",
        "rollout.pause:rejected",
    ] {
        assert!(actions.contains(&expected.to_string()), "{expected} missing from {actions:?}");
    }
}

async fn idempotent_retries(env: &Env) {
    env.create_cloneset("api", 2, "nginx:1.25").await;
    env.wait_settled("api", 2).await;
    let path = "/v1/namespaces/default/rollouts";
    let body = rollout("api", "nginx:1.26", json!({"maxUnavailable": 1}));
    let key = [("Idempotency-Key", "deploy-42")];
    let first = env.call(Method::POST, path, Some(ADMIN), Some(&body), &key).await;
    assert_eq!(first.status, StatusCode::ACCEPTED, "{}", first.body);
    assert!(first.headers.get("idempotent-replayed").is_none());
    let again = env.call(Method::POST, path, Some(ADMIN), Some(&body), &key).await;
    assert_eq!(again.status, StatusCode::ACCEPTED, "{}", again.body);
    assert_eq!(again.body["id"], first.body["id"], "the retry answers with the same rollout");
    assert_eq!(again.headers["idempotent-replayed"], "true");
    let generation = env.sets.get("api").await.unwrap().metadata.generation;

    let other = rollout("api", "nginx:1.27", json!({"maxUnavailable": 1}));
    let conflict = env.call(Method::POST, path, Some(ADMIN), Some(&other), &key).await;
    assert_eq!(conflict.status, StatusCode::CONFLICT, "{}", conflict.body);
    assert_eq!(conflict.body["type"], "urn:kruise-rs:problem:idempotency-key-reused");
    let set = env.sets.get("api").await.unwrap();
    assert_eq!(template_image(&set), "nginx:1.26", "the conflicting request changed nothing");
    assert_eq!(set.metadata.generation, generation);

    let list = env.get("/v1/namespaces/default/rollouts?workload=api").await;
    assert_eq!(list.body["items"].as_array().unwrap().len(), 1, "{}", list.body);
    let outcomes: Vec<String> = env
        .audit("action=rollout.create&target=CloneSet/api")
        .await
        .iter()
        .map(|r| r["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outcomes, ["rejected", "accepted", "accepted"], "newest first");
}
