//! BroadcastJob end to end, on both tiers: three simulated nodes and the manager. A job runs one
//! pod to completion on every node and completes (phase, counts, the `Complete` condition and
//! Events), and is deleted after its `ttlSecondsAfterFinished`; under completion policy `Never`
//! a node that joins later gets its pod; under `FailFast` the first failed pod fails the job
//! and no further pod is created; `activeDeadlineSeconds` fails a job that runs too long and
//! deletes its pods.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{Event, Node, Pod};
use kruise_controlplane::nodes::{Simulation, SimulationConfig};
use kruise_crds::apps::v1beta1::{BroadcastJob, BroadcastJobPhase, JobConditionType};
use kruise_integration::{Scene, Skip, manager::ManagerSpec, nodes::SCENARIO_HEARTBEAT};
use kube::{
    Api, ResourceExt,
    api::{ListParams, PostParams},
};
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, start_manager};

/// How long a job may take to reach a state.
const SETTLE: Duration = Duration::from_secs(90);
/// How long a scenario watches for something that must not happen.
const QUIET: Duration = Duration::from_secs(4);

/// A cluster with three simulated nodes and a manager, ready for BroadcastJobs.
struct BcjKit {
    kit: Kit,
    jobs: Api<BroadcastJob>,
    node_names: Vec<String>,
}

impl BcjKit {
    async fn start(scene: &Scene) -> Self {
        let mut kit = Kit::start_with(scene, None).await;
        let jobs: Api<BroadcastJob> = Api::namespaced(kit.client.clone(), "default");
        // Wait until BroadcastJobs are served, so the manager's watch does not start in backoff.
        let deadline = Instant::now() + Duration::from_secs(30);
        while jobs.list(&ListParams::default().limit(1)).await.is_err() {
            assert!(
                Instant::now() < deadline,
                "BroadcastJobs are not served 30 s after the CRD was Established"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        kit.manager = Some(start_manager(scene, ManagerSpec::in_process()).await);
        let mut node_names = kit.nodes.as_ref().expect("the kit starts nodes").names().to_vec();
        node_names.sort();
        Self { kit, jobs, node_names }
    }

    async fn shutdown(self) {
        self.kit.shutdown().await;
    }

    async fn create(&self, name: &str, spec: Value) -> BroadcastJob {
        let job: BroadcastJob = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "BroadcastJob",
            "metadata": {"name": name}, "spec": spec,
        }))
        .unwrap();
        self.jobs.create(&PostParams::default(), &job).await.expect("creating the BroadcastJob")
    }

    /// The pods the job controls (terminating ones included), by node.
    async fn pods_of(&self, job: &BroadcastJob) -> Vec<Pod> {
        let uid = job.uid().unwrap();
        let mut pods: Vec<Pod> = self
            .kit
            .pods
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|pod| pod.owner_references().iter().any(|o| o.uid == uid && o.controller == Some(true)))
            .collect();
        pods.sort_by_key(|pod| (node_of(pod), pod.name_any()));
        pods
    }

    /// Waits until `check` holds for the job and its pods; panics with both when it never does.
    async fn wait_for(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(&BroadcastJob, &[Pod]) -> bool,
    ) -> (BroadcastJob, Vec<Pod>) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let job = self.jobs.get(name).await.unwrap();
            let pods = self.pods_of(&job).await;
            if check(&job, &pods) {
                return (job, pods);
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for BroadcastJob {name}: {what}\nstatus: {}\npods: {:#?}",
                    serde_json::to_string_pretty(&job.status).unwrap(),
                    pods.iter().map(pod_summary).collect::<Vec<_>>()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Checks for [`QUIET`] that `check` keeps holding.
    async fn stays(&self, name: &str, what: &str, check: impl Fn(&BroadcastJob, &[Pod]) -> bool) {
        let until = Instant::now() + QUIET;
        while Instant::now() < until {
            let job = self.jobs.get(name).await.unwrap();
            let pods = self.pods_of(&job).await;
            assert!(
                check(&job, &pods),
                "{what} no longer holds for BroadcastJob {name}\nstatus: {}\npods: {:#?}",
                serde_json::to_string_pretty(&job.status).unwrap(),
                pods.iter().map(pod_summary).collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The reasons of the Events about a job, counted.
    async fn event_reasons(&self, name: &str) -> BTreeMap<String, usize> {
        let events: Api<Event> = Api::namespaced(self.kit.client.clone(), "default");
        let mut reasons = BTreeMap::new();
        for event in events.list(&ListParams::default()).await.unwrap().items {
            if event.involved_object.kind.as_deref() == Some("BroadcastJob")
                && event.involved_object.name.as_deref() == Some(name)
            {
                *reasons.entry(event.reason.unwrap_or_default()).or_default() +=
                    event.count.unwrap_or(1).max(1) as usize;
            }
        }
        reasons
    }

    /// Waits until the job's Events include every reason of `reasons`.
    async fn wait_events(&self, name: &str, reasons: &[&str]) -> BTreeMap<String, usize> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let seen = self.event_reasons(name).await;
            if reasons.iter().all(|reason| seen.contains_key(*reason)) {
                return seen;
            }
            assert!(
                Instant::now() < deadline,
                "BroadcastJob {name}: Events {reasons:?} expected, saw {seen:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// A job spec running `script` in busybox once per node (restart policy Never).
fn spec(script: &str, extra: Value) -> Value {
    let mut spec = json!({"template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "box", "image": "busybox", "command": ["/bin/sh", "-c", script]}],
    }}});
    crate::cloneset_kit::merge(&mut spec, extra);
    spec
}

/// The node a job pod runs on: its `nodeName`, or before binding the node of its affinity.
fn node_of(pod: &Pod) -> String {
    let spec = pod.spec.as_ref();
    if let Some(node) = spec.and_then(|s| s.node_name.clone()) {
        return node;
    }
    spec.and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| a.required_during_scheduling_ignored_during_execution.as_ref())
        .and_then(|r| r.node_selector_terms.first())
        .and_then(|t| t.match_fields.as_ref())
        .and_then(|f| f.first())
        .and_then(|f| f.values.as_ref())
        .and_then(|v| v.first().cloned())
        .unwrap_or_default()
}

fn phase_of(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default()
}

fn pod_summary(pod: &Pod) -> String {
    format!(
        "{} node={} phase={} deleting={}",
        pod.name_any(),
        node_of(pod),
        phase_of(pod),
        pod.metadata.deletion_timestamp.is_some()
    )
}

fn phase(job: &BroadcastJob) -> BroadcastJobPhase {
    job.status.as_ref().map(|s| s.phase.clone()).unwrap_or_default()
}

/// (desired, active, succeeded, failed)
fn counts(job: &BroadcastJob) -> (i32, i32, i32, i32) {
    job.status.as_ref().map(|s| (s.desired, s.active, s.succeeded, s.failed)).unwrap_or_default()
}

/// The true condition of `type_`, as (reason, message).
fn condition(job: &BroadcastJob, type_: JobConditionType) -> Option<(String, String)> {
    job.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_ && c.status == "True")
        .map(|c| (c.reason.clone(), c.message.clone()))
}

/// A job runs one pod on each of the three nodes within `parallelism` 2 and completes; a job
/// with `ttlSecondsAfterFinished` is deleted after it.
pub async fn runs_once_on_every_node(scene: Scene) -> Result<(), Skip> {
    let kit = BcjKit::start(&scene).await;
    let job = kit.create("hello", spec("sleep 1", json!({"parallelism": 2}))).await;
    let mut most_active = 0;
    let deadline = Instant::now() + SETTLE;
    // Watch the pods while the job runs: never more than two running at once.
    while phase(&kit.jobs.get("hello").await.unwrap()) != BroadcastJobPhase::Completed {
        let pods = kit.pods_of(&job).await;
        let active = pods.iter().filter(|p| !matches!(phase_of(p), "Succeeded" | "Failed")).count();
        most_active = most_active.max(active);
        assert!(
            Instant::now() < deadline,
            "hello did not complete: {:#?}",
            pods.iter().map(pod_summary).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (job, pods) =
        kit.wait_for("hello", "completed", |job, _| phase(job) == BroadcastJobPhase::Completed).await;
    assert!(most_active <= 2, "parallelism 2 holds: {most_active} pods ran at once");
    assert_eq!(counts(&job), (3, 0, 3, 0), "desired, active, succeeded, failed");
    let status = job.status.clone().unwrap();
    assert!(status.start_time.is_some() && status.completion_time.is_some(), "{status:?}");
    let (reason, message) = condition(&job, JobConditionType::Complete).expect("a Complete condition");
    assert_eq!(reason, "Complete");
    assert_eq!(message, "Job completed, 3 pods succeeded, 0 pods failed");
    let on: BTreeSet<String> = pods.iter().map(node_of).collect();
    assert_eq!(on, kit.node_names.iter().cloned().collect::<BTreeSet<_>>(), "one pod on every node");
    assert_eq!(pods.len(), 3, "exactly one pod per node");
    for pod in &pods {
        assert_eq!(phase_of(pod), "Succeeded");
        let labels = pod.labels();
        assert_eq!(labels.get("broadcastjob-name").map(String::as_str), Some("hello"));
        assert_eq!(labels.get("broadcastjob-controller-uid"), job.uid().as_ref());
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("hello-"));
        let terms = serde_json::to_value(&pod.spec.as_ref().unwrap().affinity).unwrap();
        assert_eq!(
            terms.pointer("/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"),
            Some(
                &json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_of(pod)]}]}])
            ),
            "bound to its node by affinity"
        );
    }
    let reasons = kit.wait_events("hello", &["SuccessfulCreate", "JobComplete"]).await;
    assert_eq!(reasons.get("SuccessfulCreate"), Some(&3), "{reasons:?}");
    scene.observe("hello status", json!({"phase": status.phase, "counts": counts(&job)}));

    // With a TTL: deleted about a second after it completes.
    kit.create("short", spec("true", json!({"completionPolicy": {"ttlSecondsAfterFinished": 1}}))).await;
    let deadline = Instant::now() + SETTLE;
    let mut completed = false;
    while let Some(job) = kit.jobs.get_opt("short").await.unwrap() {
        completed |= phase(&job) == BroadcastJobPhase::Completed;
        assert!(Instant::now() < deadline, "short was not deleted: {:?}", job.status);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    scene.observe("short seen completed before its deletion", completed);
    kit.shutdown().await;
    Ok(())
}

/// Under completion policy `Never` the job stays running once every node's pod finished, and a
/// node that joins later gets its pod.
pub async fn never_policy_serves_new_nodes(scene: Scene) -> Result<(), Skip> {
    let kit = BcjKit::start(&scene).await;
    kit.create("keeper", spec("sleep 1", json!({"completionPolicy": {"type": "Never"}}))).await;
    kit.wait_for("keeper", "three pods succeeded", |job, _| counts(job) == (3, 0, 3, 0)).await;
    kit.stays("keeper", "running without a final condition", |job, pods| {
        phase(job) == BroadcastJobPhase::Running
            && job.status.as_ref().is_some_and(|s| s.conditions.is_empty())
            && pods.len() == 3
    })
    .await;

    // A fourth node joins (no scheduler of its own: the scene's scheduler places its pod).
    let cri_dir = tempfile::Builder::new().prefix("kcri-").tempdir_in("/tmp").unwrap();
    let mut config = SimulationConfig {
        nodes: 1,
        first: 4,
        cri_dir: Some(cri_dir.path().to_path_buf()),
        scheduler: None,
        ..Default::default()
    };
    config.timing.heartbeat = SCENARIO_HEARTBEAT;
    let extra = Simulation::start(kit.kit.client.clone(), &config).await.expect("starting a fourth node");
    let new_node = extra.nodes[0].name.clone();
    let (job, pods) = kit
        .wait_for("keeper", "a pod succeeded on the new node", |job, pods| {
            counts(job) == (4, 0, 4, 0)
                && pods.iter().any(|p| node_of(p) == new_node && phase_of(p) == "Succeeded")
        })
        .await;
    assert_eq!(phase(&job), BroadcastJobPhase::Running, "a Never job never completes");
    assert!(condition(&job, JobConditionType::Complete).is_none());
    assert_eq!(pods.len(), 4, "one pod per node, none twice");
    scene.observe("keeper after the new node", json!({"phase": phase(&job), "counts": counts(&job)}));
    extra.stop().await;
    let nodes: Api<Node> = Api::all(kit.kit.client.clone());
    let _ = nodes.delete(&new_node, &Default::default()).await;
    kit.shutdown().await;
    Ok(())
}

/// `FailFast`: the first failed pod fails the job (phase, condition, Event) and no further pod
/// is created; `activeDeadlineSeconds` fails a job that runs too long and deletes its pods.
pub async fn fail_fast_and_deadline(scene: Scene) -> Result<(), Skip> {
    let kit = BcjKit::start(&scene).await;
    // One pod at a time, each exiting 1: the first failure ends the job.
    kit.create("fragile", spec("exit 1", json!({"parallelism": 1}))).await;
    let (job, pods) =
        kit.wait_for("fragile", "failed", |job, _| phase(job) == BroadcastJobPhase::Failed).await;
    assert_eq!(counts(&job), (3, 0, 0, 1), "desired, active, succeeded, failed");
    let (reason, message) = condition(&job, JobConditionType::Failed).expect("a Failed condition");
    assert_eq!(reason, "Failed");
    assert_eq!(message, "failure policy is FailurePolicyTypeFailFast and failed pod is found");
    assert!(job.status.as_ref().unwrap().completion_time.is_some());
    assert_eq!(pods.len(), 1, "{:#?}", pods.iter().map(pod_summary).collect::<Vec<_>>());
    kit.stays("fragile", "no pod created after the failure", |job, pods| {
        pods.len() == 1 && phase(job) == BroadcastJobPhase::Failed
    })
    .await;
    kit.wait_events("fragile", &["failed pod is found"]).await;
    scene.observe("fragile", json!({"phase": phase(&job), "counts": counts(&job), "pods": pods.len()}));

    // Runs far longer than its two-second deadline (its three pods are created at once; pending
    // or running, they are active when the deadline passes).
    kit.create(
        "slow",
        spec(
            "sleep 3600",
            json!({"completionPolicy": {"activeDeadlineSeconds": 2}, "failurePolicy": {"type": "Continue"}}),
        ),
    )
    .await;
    let (job, _) = kit
        .wait_for("slow", "failed by its deadline", |job, _| phase(job) == BroadcastJobPhase::Failed)
        .await;
    let (reason, message) = condition(&job, JobConditionType::Failed).expect("a Failed condition");
    assert_eq!(reason, "Failed");
    assert_eq!(message, "Job default/slow was active longer than specified deadline");
    assert_eq!(counts(&job), (3, 0, 0, 3), "the deleted active pods count as failed");
    kit.wait_for("slow", "its pods deleted", |_, pods| {
        pods.iter().all(|p| p.metadata.deletion_timestamp.is_some())
    })
    .await;
    kit.wait_events("slow", &["DeadlineExceeded", "SuccessfulDelete"]).await;
    scene.observe("slow", json!({"phase": phase(&job), "counts": counts(&job)}));
    kit.shutdown().await;
    Ok(())
}
