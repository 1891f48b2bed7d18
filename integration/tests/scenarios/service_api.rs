//! The service API as a CI/CD pipeline uses it, on both tiers: a `kruise api` process (SQLite
//! audit store, a tokens file) in front of the cluster; `POST .../rollouts` rolls a CloneSet to a
//! new image in place, `GET .../rollouts/{id}` follows it to Succeeded, the pods keep their UIDs
//! with one restart each, and the audit history records who asked and how it ended. The same
//! for an Advanced StatefulSet, with a partition that holds the lowest ordinal back until the
//! rollout is promoted. A manual run of an AdvancedCronJob (`kruise cronjob run`) creates its
//! BroadcastJob at once, and the BroadcastJob's nodes endpoint (`kruise broadcastjob results`)
//! reports each node's result.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1beta1::{AdvancedCronJob, BroadcastJob, DaemonSet, StatefulSet};
use kruise_integration::{Scene, Skip, manager::ManagerSpec, nodes::fresh_kruise_binary};
use kube::{
    Api, ResourceExt,
    api::{ApiResource, DynamicObject, ListParams, PostParams},
};
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, SETTLE, cloneset, image_of, is_ready, restarts_of, start_manager};

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

impl ApiProcess {
    /// `GET .../rollouts/{id}` until `done` holds; panics with the last answer after `SETTLE`.
    async fn wait_rollout(&self, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let http = reqwest::Client::new();
        let deadline = Instant::now() + SETTLE;
        loop {
            let current: Value = http
                .get(format!("{}/v1/namespaces/default/rollouts/{id}", self.rest))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if done(&current) {
                return current;
            }
            assert!(Instant::now() < deadline, "rollout {id}: timed out waiting until {what}: {current:#}");
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    /// `POST {path}` with `body` (none: no body); the status and the JSON answer.
    async fn post(&self, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = reqwest::Client::new().post(format!("{}{path}", self.rest)).bearer_auth(TOKEN);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

/// Whether the rollout reached a terminal state.
fn terminal(rollout: &Value) -> bool {
    matches!(rollout["state"].as_str(), Some("Succeeded" | "Failed" | "Aborted"))
}

/// The states of the rollout's history, in order.
fn history(rollout: &Value) -> Vec<String> {
    rollout["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["to"].as_str().map(str::to_string))
        .collect()
}

/// The pods' UIDs, sorted.
fn uids(pods: &[Pod]) -> Vec<String> {
    let mut uids: Vec<String> = pods.iter().filter_map(ResourceExt::uid).collect();
    uids.sort();
    uids
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

    let finished = api.wait_rollout(&id, "finished", terminal).await;
    assert_eq!(finished["state"], "Succeeded", "{finished:#}");
    let progress = &finished["progress"];
    assert_eq!(
        (progress["replicas"].as_i64(), progress["updatedReady"].as_i64()),
        (Some(4), Some(4)),
        "{finished:#}"
    );
    let pods = kit.pods_of("svc").await;
    assert_eq!(uids(&pods), uids(&before), "updated in place: the same pods");
    assert!(pods.iter().all(|pod| image_of(pod) == "nginx:1.26" && restarts_of(pod) == 1));
    let states = history(&finished);
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

/// The live pods the workload `kind/name` (apps.kruise.io/v1beta1) owns, by name.
async fn owned_pods(kit: &Kit, kind: &str, name: &str) -> Vec<Pod> {
    let resource = ApiResource {
        group: "apps.kruise.io".into(),
        version: "v1beta1".into(),
        api_version: "apps.kruise.io/v1beta1".into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_lowercase()),
    };
    let workloads: Api<DynamicObject> = Api::namespaced_with(kit.client.clone(), "default", &resource);
    let uid = workloads.get(name).await.unwrap().uid().unwrap();
    let mut pods: Vec<Pod> = kit
        .pods
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .filter(|pod| pod.owner_references().iter().any(|owner| owner.uid == uid))
        .collect();
    pods.sort_by_key(|pod| pod.name_any());
    pods
}

/// Waits until the workload `kind/name` runs `count` ready pods.
async fn wait_ready_pods(kit: &Kit, kind: &str, name: &str, count: usize) -> Vec<Pod> {
    let deadline = Instant::now() + SETTLE;
    loop {
        let pods = owned_pods(kit, kind, name).await;
        if pods.len() == count && pods.iter().all(is_ready) {
            return pods;
        }
        assert!(Instant::now() < deadline, "{kind} {name} did not start {count} ready pods: {pods:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the cluster serves the Kruise kind (its CRD is Established before it is served
/// everywhere on a real API server).
async fn wait_served<K>(kit: &Kit)
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<K> = Api::namespaced(kit.client.clone(), "default");
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(
            Instant::now() < deadline,
            "{} is not served 30 s after the CRD was Established",
            K::kind(&())
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A pod as `(name, image, restarts)`.
fn pod_image(pod: &Pod) -> (String, String, i32) {
    (pod.name_any(), image_of(pod), restarts_of(pod))
}

/// The rollout both Advanced workload scenarios run on 3 ready pods (`before`): nginx:1.25 to
/// 1.26 in place with a partition of 1, which stops at Paused (PartitionReached) with 2 pods
/// updated in place; then promote, to Succeeded with all 3 pods the same pods restarted once.
/// Returns the pods at the partition, for the kind's own checks.
async fn partitioned_in_place_rollout(
    scene: &Scene,
    kit: &Kit,
    kind: &str,
    name: &str,
    before: &[Pod],
) -> Vec<Pod> {
    let api = start_api(scene);
    let (status, created) = api
        .post(
            "/v1/namespaces/default/rollouts",
            Some(json!({
                "workload": {"kind": kind, "name": name},
                "images": {"main": "nginx:1.26"},
                "strategy": {"podUpdatePolicy": "InPlaceIfPossible", "partition": 1},
                "reason": "1.26, canary first",
            })),
        )
        .await;
    assert_eq!(status, 202, "{created:#}");
    let id = created["id"].as_str().unwrap().to_string();

    let held =
        api.wait_rollout(&id, "the partition is reached", |r| r["state"] == "Paused" || terminal(r)).await;
    assert_eq!(
        (&held["state"], &held["message"].as_str().map(|m| m.contains("promote"))),
        (&json!("Paused"), &Some(true)),
        "{held:#}"
    );
    let progress = &held["progress"];
    assert_eq!(
        (
            progress["updatedReady"].as_i64(),
            progress["expectedUpdated"].as_i64(),
            progress["partition"].as_i64()
        ),
        (Some(2), Some(2), Some(1)),
        "{held:#}"
    );
    let at_partition = owned_pods(kit, kind, name).await;
    assert_eq!(uids(&at_partition), uids(before), "updated in place: the same pods");
    let mut images: Vec<(String, i32)> =
        at_partition.iter().map(|pod| (image_of(pod), restarts_of(pod))).collect();
    images.sort();
    assert_eq!(
        images,
        [("nginx:1.25".to_string(), 0), ("nginx:1.26".to_string(), 1), ("nginx:1.26".to_string(), 1)],
        "the partition keeps one pod; the others are updated in place"
    );
    scene.observe(
        "partition reached",
        json!({"state": held["state"], "updatedReady": progress["updatedReady"], "images": images}),
    );

    let (status, promoted) = api.post(&format!("/v1/namespaces/default/rollouts/{id}/promote"), None).await;
    assert_eq!(status, 202, "{promoted:#}");
    let finished = api.wait_rollout(&id, "finished", terminal).await;
    assert_eq!(finished["state"], "Succeeded", "{finished:#}");
    let progress = &finished["progress"];
    assert_eq!(
        (
            progress["replicas"].as_i64(),
            progress["updatedReady"].as_i64(),
            progress["inPlaceUpdated"].as_i64()
        ),
        (Some(3), Some(3), Some(3)),
        "{finished:#}"
    );
    let pods = owned_pods(kit, kind, name).await;
    assert_eq!(uids(&pods), uids(before), "updated in place: the same pods");
    assert!(pods.iter().all(|pod| image_of(pod) == "nginx:1.26" && restarts_of(pod) == 1), "{pods:#?}");
    let states = history(&finished);
    assert!(
        states.iter().any(|s| s == "Paused") && states.last().map(String::as_str) == Some("Succeeded"),
        "{states:?}"
    );
    scene.observe(
        "rollout",
        json!({"state": finished["state"], "replicas": progress["replicas"], "updatedReady": progress["updatedReady"], "inPlaceUpdated": progress["inPlaceUpdated"]}),
    );
    scene.note(format!("rollout states: {states:?}"));
    at_partition
}

/// An Advanced StatefulSet of 3 updated in place through the REST API: the partition of 1 keeps
/// the lowest ordinal, `db-0`, at the previous revision until the rollout is promoted.
pub async fn rollout_statefulset_in_place_through_rest(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    wait_served::<StatefulSet>(&kit).await;
    let sets: Api<StatefulSet> = Api::namespaced(kit.client.clone(), "default");
    let manifest: StatefulSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "updateStrategy": {"type": "RollingUpdate",
                               "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "terminationGracePeriodSeconds": 1,
                    "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                    "containers": [{"name": "main", "image": "nginx:1.25"}]
                }
            }
        }
    }))
    .unwrap();
    sets.create(&PostParams::default(), &manifest).await.unwrap();
    let before = wait_ready_pods(&kit, "StatefulSet", "db", 3).await;
    let at_partition = partitioned_in_place_rollout(&scene, &kit, "StatefulSet", "db", &before).await;
    let images: Vec<(String, String, i32)> = at_partition.iter().map(pod_image).collect();
    assert_eq!(
        images,
        [
            ("db-0".to_string(), "nginx:1.25".to_string(), 0),
            ("db-1".to_string(), "nginx:1.26".to_string(), 1),
            ("db-2".to_string(), "nginx:1.26".to_string(), 1)
        ],
        "a StatefulSet's partition is the lowest ordinals"
    );
    kit.shutdown().await;
    Ok(())
}

/// An Advanced DaemonSet on the 3 simulated nodes updated in place through the REST API: the
/// partition of 1 keeps one node's pod at the previous revision until the rollout is promoted.
pub async fn rollout_daemonset_in_place_through_rest(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    wait_served::<DaemonSet>(&kit).await;
    let sets: Api<DaemonSet> = Api::namespaced(kit.client.clone(), "default");
    let manifest: DaemonSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "updateStrategy": {"type": "RollingUpdate",
                               "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "main", "image": "nginx:1.25"}]}
            }
        }
    }))
    .unwrap();
    sets.create(&PostParams::default(), &manifest).await.unwrap();
    let before = wait_ready_pods(&kit, "DaemonSet", "agent", 3).await;
    let at_partition = partitioned_in_place_rollout(&scene, &kit, "DaemonSet", "agent", &before).await;
    let nodes: std::collections::BTreeSet<String> =
        at_partition.iter().filter_map(|pod| pod.spec.as_ref()?.node_name.clone()).collect();
    assert_eq!(nodes.len(), 3, "one pod per node throughout: {at_partition:#?}");
    kit.shutdown().await;
    Ok(())
}

/// Runs the `kruise` client against the API with the scenario's token; the exit code and stdout.
async fn kruise_client(api: &ApiProcess, args: &[&str]) -> (i32, String) {
    let mut command = Command::new(fresh_kruise_binary().unwrap());
    command.args(args).args(["--server", &api.rest, "--token", TOKEN, "-o", "json"]).env("RUST_LOG", "warn");
    let output = tokio::task::spawn_blocking(move || command.output()).await.unwrap().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.code().is_some(),
        "kruise {args:?} was killed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    if !output.status.success() {
        eprintln!("kruise {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
    (output.status.code().unwrap_or(-1), stdout)
}

/// A manual run of an AdvancedCronJob and a BroadcastJob's per-node results, through a
/// `kruise api` process and the `kruise` client: `kruise cronjob run` on an AdvancedCronJob
/// whose schedule is far away creates, at once, the BroadcastJob of its template (owned by the
/// AdvancedCronJob, annotated as a manual run, with no scheduled-at time), which the
/// BroadcastJob controller runs on each of the three nodes; `GET .../broadcastjobs/{name}/nodes`
/// (and `kruise broadcastjob results --wait`) then reports each node's pod as Succeeded with
/// exit code 0, and the audit names the run.
pub async fn advancedcronjob_manual_run_and_broadcastjob_results(scene: Scene) -> Result<(), Skip> {
    let mut kit = Kit::start_with(&scene, None).await;
    wait_served::<AdvancedCronJob>(&kit).await;
    wait_served::<BroadcastJob>(&kit).await;
    kit.manager = Some(start_manager(&scene, ManagerSpec::in_process()).await);
    let mut node_names = kit.nodes.as_ref().expect("the kit starts nodes").names().to_vec();
    node_names.sort();

    let cron_jobs: Api<AdvancedCronJob> = Api::namespaced(kit.client.clone(), "default");
    let manifest: AdvancedCronJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "AdvancedCronJob",
        "metadata": {"name": "warm-cache"},
        "spec": {
            // Once a year: never due while the scenario runs.
            "schedule": "0 3 1 1 *",
            "template": {"broadcastJobTemplate": {
                "metadata": {"labels": {"team": "infra"}},
                "spec": {
                    "parallelism": "100%", "completionPolicy": {"type": "Always"},
                    "template": {"spec": {"restartPolicy": "Never", "containers": [
                        {"name": "main", "image": "busybox", "command": ["/bin/sh", "-c", "sleep 1"]},
                    ]}},
                },
            }},
        }
    }))
    .unwrap();
    let cron_job = cron_jobs.create(&PostParams::default(), &manifest).await.unwrap();
    let api = start_api(&scene);

    let (code, stdout) =
        kruise_client(&api, &["cronjob", "run", "warm-cache", "--reason", "warm the new nodes now"]).await;
    assert_eq!(code, 0, "{stdout}");
    let run: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(
        (&run["kind"], &run["advancedCronJob"]),
        (&json!("BroadcastJob"), &json!("warm-cache")),
        "{run:#}"
    );
    let name = run["name"].as_str().unwrap().to_string();
    assert!(name.starts_with("warm-cache-manual-"), "{name}");

    // The child, through the Kubernetes API.
    let jobs: Api<BroadcastJob> = Api::namespaced(kit.client.clone(), "default");
    let child = jobs.get(&name).await.unwrap();
    let owner = child.owner_references().first().cloned().expect("the run has an owner");
    assert_eq!(
        (owner.kind.as_str(), owner.uid, owner.controller),
        ("AdvancedCronJob", cron_job.uid().unwrap(), Some(true)),
        "the AdvancedCronJob controls its run"
    );
    assert_eq!(
        child.annotations().get("cronjob.kubernetes.io/instantiate").map(String::as_str),
        Some("manual")
    );
    assert!(
        !child.annotations().contains_key("apps.kruise.io/scheduled-at"),
        "a manual run has no scheduled time"
    );
    assert_eq!(child.labels().get("team").map(String::as_str), Some("infra"));
    scene.observe(
        "manual run",
        json!({"kind": run["kind"], "owner": "AdvancedCronJob/warm-cache", "instantiate": "manual"}),
    );

    // The per-node results, through REST, once the BroadcastJob controller finished the job.
    let http = reqwest::Client::new();
    let path = format!("{}/v1/namespaces/default/broadcastjobs/{name}/nodes", api.rest);
    let deadline = Instant::now() + SETTLE;
    let results = loop {
        let response = http.get(&path).bearer_auth(TOKEN).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let results: Value = response.json().await.unwrap();
        if results["phase"] == "completed" {
            break results;
        }
        assert!(Instant::now() < deadline, "the manual run did not complete: {results:#}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert_eq!(
        (&results["desired"], &results["succeeded"], &results["failed"]),
        (&json!(3), &json!(3), &json!(0)),
        "{results:#}"
    );
    let per_node: Vec<(String, String, String, i64)> = results["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap_or("").to_string(),
                n["phase"].as_str().unwrap_or("").to_string(),
                n["containers"][0]["state"].as_str().unwrap_or("").to_string(),
                n["containers"][0]["exitCode"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let expected: Vec<(String, String, String, i64)> =
        node_names.iter().map(|node| (node.clone(), "Succeeded".into(), "terminated".into(), 0)).collect();
    assert_eq!(per_node, expected, "one Succeeded pod per node, by node: {results:#}");
    scene.observe(
        "broadcastjob nodes",
        json!({"phase": results["phase"], "nodes": per_node.len(),
               "phases": per_node.iter().map(|n| n.1.clone()).collect::<Vec<_>>(),
               "exitCodes": per_node.iter().map(|n| n.3).collect::<Vec<_>>()}),
    );

    // The client: `--wait` returns at once on a completed job, exit 0.
    let (code, stdout) = kruise_client(&api, &["broadcastjob", "results", &name, "--wait"]).await;
    assert_eq!(code, 0, "{stdout}");
    let from_cli: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(from_cli["nodes"].as_array().map(Vec::len), Some(3), "{from_cli:#}");

    // The audit names the run.
    let audit: Value = http
        .get(format!("{}/v1/audit?action=advancedcronjob.run", api.rest))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let records = audit["items"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{audit:#}");
    assert_eq!(
        (&records[0]["outcome"], &records[0]["actor"], &records[0]["message"]),
        (&json!("accepted"), &json!("pipeline"), &json!(format!("created BroadcastJob/{name}"))),
        "{audit:#}"
    );
    scene.observe("audit", json!({"action": "advancedcronjob.run", "outcome": records[0]["outcome"]}));
    drop(api);
    kit.shutdown().await;
    Ok(())
}
