//! The service API as a CI/CD pipeline uses it, on both tiers: a `kruise api` process (SQLite
//! audit store, a tokens file) in front of the cluster; `POST .../rollouts` rolls a CloneSet to a
//! new image in place, `GET .../rollouts/{id}` follows it to Succeeded, the pods keep their UIDs
//! with one restart each, and the audit history records who asked and how it ended.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use kruise_integration::{Scene, Skip, nodes::fresh_kruise_binary};
use kube::ResourceExt;
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, SETTLE, cloneset, image_of, restarts_of};

/// A token and its `kruise api hash-token` hash.
const TOKEN: &str = "secret-token-value-123";
const TOKEN_HASH: &str = "sha256:e18d0d445696a836b7065f53d7d06d5953a1d46542a1c35667b7d15eb388f5a8";

/// A `kruise api` process; killed when dropped.
struct ApiProcess {
    child: Child,
    rest: String,
    _dir: tempfile::TempDir,
}

impl Drop for ApiProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_api(scene: &Scene) -> ApiProcess {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.json");
    std::fs::write(
        &tokens,
        json!({"tokens": [{"name": "pipeline", "hash": TOKEN_HASH, "namespaces": "*", "actions": "*"}]})
            .to_string(),
    )
    .unwrap();
    let database = format!("sqlite:{}", dir.path().join("audit.db").display());
    let mut child = Command::new(fresh_kruise_binary().unwrap())
        .args(["api", "--rest-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"])
        .args(["--database-url", &database, "--kubeconfig"])
        .arg(scene.cluster().kubeconfig_path())
        .arg("--tokens-file")
        .arg(&tokens)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let listening = loop {
        let line = lines.next().expect("kruise api printed its address").unwrap();
        if let Some(rest) = line.strip_prefix("service API listening on ") {
            break rest.to_string();
        }
    };
    let rest = listening.split_once(" (REST)").map(|(rest, _)| rest.to_string()).unwrap();
    ApiProcess { child, rest, _dir: dir }
}

pub async fn rollout_in_place_through_rest(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    kit.create(cloneset(
        "svc",
        4,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2}}}),
    ))
    .await
    .unwrap();
    let (_, before) = kit.wait_settled("svc", 4).await;
    let api = start_api(&scene);
    let http = reqwest::Client::new();

    let created = http
        .post(format!("{}/v1/namespaces/default/rollouts", api.rest))
        .bearer_auth(TOKEN)
        .header("Idempotency-Key", "deploy-42")
        .json(&json!({
            "workload": {"kind": "CloneSet", "name": "svc"},
            "images": {"main": "nginx:1.26"},
            "reason": "release 1.26",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 202, "{:?}", created.text().await);
    let rollout: Value = created.json().await.unwrap();
    let id = rollout["id"].as_str().unwrap().to_string();

    let deadline = Instant::now() + SETTLE;
    let finished = loop {
        let current: Value = http
            .get(format!("{}/v1/namespaces/default/rollouts/{id}", api.rest))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if matches!(current["state"].as_str(), Some("Succeeded" | "Failed" | "Aborted")) {
            break current;
        }
        assert!(Instant::now() < deadline, "the rollout did not finish: {current:#}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert_eq!(finished["state"], "Succeeded", "{finished:#}");
    let progress = &finished["progress"];
    assert_eq!(
        (progress["replicas"].as_i64(), progress["updatedReady"].as_i64()),
        (Some(4), Some(4)),
        "{finished:#}"
    );
    let pods = kit.pods_of("svc").await;
    let uids = |pods: &[k8s_openapi::api::core::v1::Pod]| {
        let mut uids: Vec<String> = pods.iter().filter_map(ResourceExt::uid).collect();
        uids.sort();
        uids
    };
    assert_eq!(uids(&pods), uids(&before), "updated in place: the same pods");
    assert!(pods.iter().all(|pod| image_of(pod) == "nginx:1.26" && restarts_of(pod) == 1));
    let states: Vec<&str> =
        finished["history"].as_array().unwrap().iter().filter_map(|t| t["to"].as_str()).collect();
    scene.observe(
        "rollout",
        json!({"state": finished["state"], "replicas": progress["replicas"], "updatedReady": progress["updatedReady"], "inPlaceUpdated": progress["inPlaceUpdated"]}),
    );

    // A retry with the same key returns the same rollout.
    let retried: Value = http
        .post(format!("{}/v1/namespaces/default/rollouts", api.rest))
        .bearer_auth(TOKEN)
        .header("Idempotency-Key", "deploy-42")
        .json(&json!({
            "workload": {"kind": "CloneSet", "name": "svc"},
            "images": {"main": "nginx:1.26"},
            "reason": "release 1.26",
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(retried["id"], id.as_str());

    let audit: Value = http
        .get(format!("{}/v1/audit?namespace=default", api.rest))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let records = audit["items"].as_array().unwrap();
    assert!(
        records
            .iter()
            .any(|r| r["actor"] == "pipeline" && r["action"].as_str().is_some_and(|a| a.contains("rollout"))),
        "the audit names the pipeline: {audit:#}"
    );
    let text = audit.to_string();
    assert!(!text.contains(TOKEN), "the token never appears in the audit");
    scene.observe("audit", json!({"actor": "pipeline", "recorded": !records.is_empty()}));
    scene.note(format!("rollout states: {states:?}"));
    drop(api);
    kit.shutdown().await;
    Ok(())
}
