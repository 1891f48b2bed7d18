//! The service API on a real PostgreSQL (started by the integration harness: initdb in a
//! temporary directory, a free port) with the embedded control plane, simulated nodes and the
//! manager: a rollout is recorded; with PostgreSQL stopped a rollout request is answered 503
//! problem+json and the CloneSet is untouched; once PostgreSQL is back requests work again; after
//! an API restart every audit record is still there and the watcher of the new API records how
//! the rollout started before the restart ended.
//!
//! Skipped, with a message, only when no PostgreSQL binaries exist on this machine.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod common;

use common::{Env, StoreChoice, template_image};
use kruise_integration::{HarnessError, postgres::Postgres};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn rollout(image: &str) -> Value {
    json!({"workload": {"kind": "CloneSet", "name": "web"}, "images": {"nginx": image}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_outage_refuses_changes_and_loses_no_record() {
    let mut postgres = match Postgres::start() {
        Ok(postgres) => postgres,
        Err(HarnessError::PostgresMissing(message)) => {
            eprintln!("SKIPPED store_outage_refuses_changes_and_loses_no_record: {message}");
            return;
        }
        Err(error) => panic!("starting PostgreSQL: {error}"),
    };
    let mut env = Env::start(StoreChoice::Url(postgres.url()), true).await;
    env.create_cloneset("web", 2, "nginx:1.25").await;
    env.wait_settled("web", 2).await;
    let path = "/v1/namespaces/default/rollouts";

    let first = env.post(path, Some(&rollout("nginx:1.26"))).await;
    assert_eq!(first.status, StatusCode::ACCEPTED, "{}", first.body);
    let first_id = first.body["id"].as_str().unwrap().to_string();
    env.wait_rollout(&first_id, "Succeeded").await;
    env.wait_recorded(&first_id, "Succeeded").await;

    // PostgreSQL goes away: the change is refused and the CloneSet is untouched.
    postgres.stop().unwrap();
    let before = env.sets.get("web").await.unwrap();
    let refused = env.post(path, Some(&rollout("nginx:1.27"))).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE, "{}", refused.body);
    assert_eq!(refused.content_type(), "application/problem+json");
    assert_eq!(refused.body["type"], "urn:kruise-rs:problem:store-unavailable");
    let pause = env.post(&format!("{path}/{first_id}/pause"), None).await;
    assert_eq!(pause.status, StatusCode::SERVICE_UNAVAILABLE, "{}", pause.body);
    let ready = env.call(reqwest::Method::GET, "/readyz", None, None, &[]).await;
    assert_eq!(ready.status, StatusCode::SERVICE_UNAVAILABLE, "{}", ready.body);
    assert_eq!(ready.body["checks"]["kubernetes"], "ok");
    assert_ne!(ready.body["checks"]["store"], "ok");
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let after = env.sets.get("web").await.unwrap();
    assert_eq!(after.metadata.resource_version, before.metadata.resource_version, "the CloneSet was changed");
    assert_eq!(template_image(&after), "nginx:1.26");

    // Back: requests work again.
    postgres.start_again().unwrap();
    let ready_again = async {
        for _ in 0..100 {
            if env.call(reqwest::Method::GET, "/readyz", None, None, &[]).await.status == StatusCode::OK {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        false
    };
    assert!(ready_again.await, "the API did not become ready again");
    let second = env.post(path, Some(&rollout("nginx:1.27"))).await;
    assert_eq!(second.status, StatusCode::ACCEPTED, "{}", second.body);
    let second_id = second.body["id"].as_str().unwrap().to_string();
    let audit_before: Vec<Value> = env.audit("limit=500").await;

    // The API restarts mid-rollout: every record is still there, and the new watcher records
    // how the rollout ended.
    env.start_api().await;
    let audit_after: Vec<Value> = env.audit("limit=500").await;
    let ids =
        |records: &[Value]| records.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(ids(&audit_after), ids(&audit_before), "audit records lost across the restart");
    let creates: Vec<(String, String)> = audit_after
        .iter()
        .filter(|r| r["action"] == "rollout.create")
        .map(|r| {
            (r["rolloutId"].as_str().unwrap_or("").to_string(), r["outcome"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(
        creates,
        [(second_id.clone(), "accepted".to_string()), (first_id.clone(), "accepted".to_string())]
    );
    assert!(
        audit_after.iter().all(|r| r["outcome"] != "pending"),
        "every request recorded its outcome: {audit_after:#?}"
    );
    let done = env.wait_recorded(&second_id, "Succeeded").await;
    assert_eq!(done["history"].as_array().unwrap().last().unwrap()["actor"], "watcher");
    let first_after = env.get(&format!("{path}/{first_id}")).await;
    assert_eq!(
        first_after.body["state"], "Succeeded",
        "a finished rollout keeps its end: {}",
        first_after.body
    );

    env.shutdown().await;
    postgres.stop().unwrap();
}
