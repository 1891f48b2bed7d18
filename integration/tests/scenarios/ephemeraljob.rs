//! EphemeralJob end to end, on both tiers: three simulated nodes, pods labelled `run=nginx`
//! and the manager (upstream `test/e2e/apps/v1alpha1/ephemeraljob.go`). A job runs its
//! ephemeral container on `replicas` (3) of the selected pods, oldest first and one pod at a time
//! under `parallelism` 1, and succeeds (phase, counts, conditions); the containers carry
//! `KRUISE_EJOB_ID` and the pods' main containers are never restarted. A failing command (a
//! non-zero exit, a program the image does not have) fails the job. A job whose container name
//! is taken on every pod matches nothing; `activeDeadlineSeconds` fails a job that runs too
//! long; `ttlSecondsAfterFinished` deletes a finished job.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use kruise_crds::apps::v1alpha1::{EphemeralJob, EphemeralJobConditionType, EphemeralJobPhase};
use kruise_integration::{Scene, Skip, manager::ManagerSpec};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams, PostParams},
};
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, is_ready, start_manager};

/// How long a job or a pod may take to reach a state.
const SETTLE: Duration = Duration::from_secs(90);
/// The label every target pod carries (as upstream's test Deployment).
const SELECTOR: (&str, &str) = ("run", "nginx");
/// The main container of the target pods.
const MAIN: &str = "nginx";

/// A cluster with three simulated nodes and a manager, ready for EphemeralJobs.
struct EjKit {
    kit: Kit,
    jobs: Api<EphemeralJob>,
}

impl EjKit {
    async fn start(scene: &Scene) -> Self {
        let mut kit = Kit::start_with(scene, None).await;
        let jobs: Api<EphemeralJob> = Api::namespaced(kit.client.clone(), "default");
        // Wait until EphemeralJobs are served, so the manager's watch does not start in backoff.
        let deadline = Instant::now() + Duration::from_secs(30);
        while jobs.list(&ListParams::default().limit(1)).await.is_err() {
            assert!(
                Instant::now() < deadline,
                "EphemeralJobs are not served 30 s after the CRD was Established"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        kit.manager = Some(start_manager(scene, ManagerSpec::in_process()).await);
        Self { kit, jobs }
    }

    async fn shutdown(self) {
        self.kit.shutdown().await;
    }

    /// Creates the pods one after the other (so their ages order them), labelled `labels`,
    /// and waits until all are Ready.
    async fn create_pods(&self, names: &[&str], labels: Value) -> Vec<Pod> {
        for name in names {
            let pod: Pod = serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": labels},
                "spec": {"containers": [{"name": MAIN, "image": "nginx:1.25"}], "terminationGracePeriodSeconds": 5},
            }))
            .unwrap();
            self.kit.pods.create(&PostParams::default(), &pod).await.expect("creating a pod");
            // Creation timestamps have whole seconds: one second apart, the ages are distinct.
            tokio::time::sleep(Duration::from_millis(1100)).await;
        }
        let deadline = Instant::now() + SETTLE;
        loop {
            let mut pods = Vec::new();
            for name in names {
                pods.push(self.kit.pods.get(name).await.unwrap());
            }
            if pods.iter().all(is_ready) {
                return pods;
            }
            assert!(Instant::now() < deadline, "pods never became ready: {:#?}", summaries(&pods));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn create(&self, name: &str, spec: Value) -> EphemeralJob {
        let job: EphemeralJob = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "EphemeralJob",
            "metadata": {"name": name}, "spec": spec,
        }))
        .unwrap();
        self.jobs.create(&PostParams::default(), &job).await.expect("creating the EphemeralJob")
    }

    async fn pods(&self, names: &[&str]) -> Vec<Pod> {
        let mut pods = Vec::new();
        for name in names {
            pods.push(self.kit.pods.get(name).await.unwrap());
        }
        pods
    }

    /// Waits until `check` holds for the job and the pods; panics with both when it never does.
    async fn wait_for(
        &self,
        name: &str,
        pods: &[&str],
        what: &str,
        check: impl Fn(&EphemeralJob, &[Pod]) -> bool,
    ) -> (EphemeralJob, Vec<Pod>) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let job = self.jobs.get(name).await.unwrap();
            let pods = self.pods(pods).await;
            if check(&job, &pods) {
                return (job, pods);
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for EphemeralJob {name}: {what}\nstatus: {}\npods: {:#?}",
                    serde_json::to_string_pretty(&job.status).unwrap(),
                    summaries(&pods)
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until the job is gone.
    async fn wait_gone(&self, name: &str, what: &str) -> Vec<EphemeralJobPhase> {
        let deadline = Instant::now() + SETTLE;
        let mut phases_seen = Vec::new();
        while let Some(job) = self.jobs.get_opt(name).await.unwrap() {
            let phase = phase(&job);
            if phases_seen.last() != Some(&phase) {
                phases_seen.push(phase);
            }
            assert!(Instant::now() < deadline, "EphemeralJob {name}: {what}: {:?}", job.status);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        phases_seen
    }
}

/// A job spec selecting `run=nginx` with one ephemeral container `container` running `command`
/// in busybox against the main container; `extra` is merged into the spec.
fn spec(container: &str, command: Value, extra: Value) -> Value {
    let mut spec = json!({
        "selector": {"matchLabels": {SELECTOR.0: SELECTOR.1}},
        "template": {"ephemeralContainers": [{
            "name": container, "image": "busybox:1.36", "targetContainerName": MAIN, "command": command,
            "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File",
        }]},
    });
    crate::cloneset_kit::merge(&mut spec, extra);
    spec
}

fn phase(job: &EphemeralJob) -> EphemeralJobPhase {
    job.status.as_ref().map(|s| s.phase.clone()).unwrap_or_default()
}

/// (matches, running, waiting, succeeded, failed)
fn counts(job: &EphemeralJob) -> (i32, i32, i32, i32, i32) {
    job.status.as_ref().map(|s| (s.matches, s.running, s.waiting, s.succeeded, s.failed)).unwrap_or_default()
}

/// The job's condition of `type_`, as (reason, message).
fn condition(job: &EphemeralJob, type_: EphemeralJobConditionType) -> Option<(String, String)> {
    job.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_ && c.status == "True")
        .map(|c| (c.reason.clone(), c.message.clone()))
}

fn ephemeral_status(pod: &Pod, container: &str) -> Option<ContainerStatus> {
    pod.status.as_ref()?.ephemeral_container_statuses.as_ref()?.iter().find(|s| s.name == container).cloned()
}

/// The `KRUISE_EJOB_ID` of the pod's ephemeral container `container`, if it has one.
fn injected_by(pod: &Pod, container: &str) -> Option<String> {
    let spec = pod.spec.as_ref()?.ephemeral_containers.as_ref()?.iter().find(|c| c.name == container)?;
    spec.env.iter().flatten().find(|e| e.name == "KRUISE_EJOB_ID").and_then(|e| e.value.clone())
}

/// The exit code of the ephemeral container `container`, once it terminated.
fn exit_code(pod: &Pod, container: &str) -> Option<i32> {
    Some(ephemeral_status(pod, container)?.state?.terminated?.exit_code)
}

/// Whether the pod holds `container` and it has not terminated yet.
fn unfinished(pod: &Pod, container: &str) -> bool {
    injected_by(pod, container).is_some() && exit_code(pod, container).is_none()
}

/// The main container's (containerID, restartCount).
fn main_container(pod: &Pod) -> (String, i32) {
    let status = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|s| s.iter().find(|c| c.name == MAIN))
        .cloned()
        .unwrap_or_default();
    (status.container_id.unwrap_or_default(), status.restart_count)
}

fn summaries(pods: &[Pod]) -> Vec<String> {
    pods.iter()
        .map(|pod| {
            let ephemeral: Vec<String> = pod
                .status
                .as_ref()
                .and_then(|s| s.ephemeral_container_statuses.as_ref())
                .into_iter()
                .flatten()
                .map(|s| format!("{}={:?}", s.name, s.state))
                .collect();
            format!(
                "{} ready={} main={:?} ephemeral=[{}]",
                pod.name_any(),
                is_ready(pod),
                main_container(pod),
                ephemeral.join(", ")
            )
        })
        .collect()
}

/// A job with `replicas` 2 and `parallelism` 1 runs its container on the two oldest of the three
/// selected pods, one at a time, and succeeds; the unselected pod is left alone and no main
/// container restarts.
pub async fn runs_on_replicas_and_succeeds(scene: Scene) -> Result<(), Skip> {
    let kit = EjKit::start(&scene).await;
    let names = ["web-a", "web-b", "web-c", "web-d"];
    kit.create_pods(&names, json!({SELECTOR.0: SELECTOR.1})).await;
    kit.create_pods(&["bystander"], json!({"run": "apache"})).await;
    let mut all = names.to_vec();
    all.push("bystander");
    let before: BTreeMap<String, (String, i32)> =
        kit.pods(&all).await.iter().map(|p| (p.name_any(), main_container(p))).collect();

    let job = kit
        .create("debug", spec("debugger", json!(["sleep", "1"]), json!({"replicas": 3, "parallelism": 1})))
        .await;
    let uid = job.uid().unwrap();
    // Watch the pods while the job runs: never two unfinished debuggers at once.
    let deadline = Instant::now() + SETTLE;
    let mut most_in_flight = 0;
    loop {
        let job = kit.jobs.get("debug").await.unwrap();
        let pods = kit.pods(&names).await;
        most_in_flight = most_in_flight.max(pods.iter().filter(|p| unfinished(p, "debugger")).count());
        if phase(&job) == EphemeralJobPhase::Succeeded {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "debug did not succeed: {}\n{:#?}",
            serde_json::to_string_pretty(&job.status).unwrap(),
            summaries(&pods)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(most_in_flight, 1, "parallelism 1: one pod at a time");
    let (job, pods) =
        kit.wait_for("debug", &all, "succeeded", |job, _| phase(job) == EphemeralJobPhase::Succeeded).await;
    assert_eq!(counts(&job), (3, 0, 0, 3, 0), "matches, running, waiting, succeeded, failed");
    let status = job.status.clone().unwrap();
    assert!(status.start_time.is_some() && status.completion_time.is_some(), "{status:?}");
    assert_eq!(
        condition(&job, EphemeralJobConditionType::JobSucceeded),
        Some(("JobSucceeded".into(), "job success to run all tasks".into()))
    );
    assert!(condition(&job, EphemeralJobConditionType::Initialized).is_some());
    assert!(
        job.finalizers().iter().any(|f| f == "apps.kruise.io/ephemeralcontainers-cleanup"),
        "the job holds its finalizer: {:?}",
        job.finalizers()
    );
    // The three oldest pods ran it to exit 0; the fourth selected pod and the bystander did not.
    let injected: BTreeMap<String, Option<String>> =
        pods.iter().map(|p| (p.name_any(), injected_by(p, "debugger"))).collect();
    assert_eq!(
        injected,
        BTreeMap::from([
            ("web-a".into(), Some(uid.clone())),
            ("web-b".into(), Some(uid.clone())),
            ("web-c".into(), Some(uid.clone())),
            ("web-d".into(), None),
            ("bystander".into(), None),
        ]),
        "KRUISE_EJOB_ID of each pod's debugger"
    );
    for pod in &pods[..3] {
        assert_eq!(exit_code(pod, "debugger"), Some(0), "{:#?}", summaries(&pods));
    }
    // No main container was restarted, and every pod is still Ready.
    for pod in &pods {
        assert_eq!(
            Some(&main_container(pod)),
            before.get(&pod.name_any()),
            "{} main container",
            pod.name_any()
        );
        assert!(is_ready(pod), "{} still Ready", pod.name_any());
    }
    let by_job: BTreeMap<&String, bool> =
        injected.iter().map(|(pod, owner)| (pod, owner.as_deref() == Some(uid.as_str()))).collect();
    scene.observe(
        "debug",
        json!({"phase": phase(&job), "counts": counts(&job), "injected by the job": by_job}),
    );

    // Deleting the job releases its finalizer; the containers stay in the pods.
    kit.jobs.delete("debug", &DeleteParams::default()).await.unwrap();
    kit.wait_gone("debug", "not deleted").await;
    let pods = kit.pods(&names).await;
    assert_eq!(injected_by(&pods[0], "debugger"), Some(uid));
    kit.shutdown().await;
    Ok(())
}

/// A command that exits non-zero, and one the image does not have, fail every pod and the job;
/// the main containers keep running untouched.
pub async fn failing_command_fails_the_job(scene: Scene) -> Result<(), Skip> {
    let kit = EjKit::start(&scene).await;
    let names = ["web-a", "web-b", "web-c"];
    let before: Vec<(String, i32)> =
        kit.create_pods(&names, json!({SELECTOR.0: SELECTOR.1})).await.iter().map(main_container).collect();

    kit.create(
        "lister",
        spec("lister", json!(["ls", "/no-such-dir"]), json!({"replicas": 3, "parallelism": 3})),
    )
    .await;
    let (job, pods) =
        kit.wait_for("lister", &names, "failed", |job, _| phase(job) == EphemeralJobPhase::Failed).await;
    assert_eq!(counts(&job), (3, 0, 0, 0, 3), "matches, running, waiting, succeeded, failed");
    assert!(job.status.as_ref().unwrap().completion_time.is_some());
    // Upstream's wording: a failed pod turns the JobFailed condition into CreateFailed.
    assert_eq!(
        condition(&job, EphemeralJobConditionType::JobFailed),
        Some((
            "CreateFailed".into(),
            "EphemeralJob default/lister failed to create ephemeral container".into()
        ))
    );
    for pod in &pods {
        let code = exit_code(pod, "lister");
        assert!(code.is_some_and(|c| c != 0), "{} lister exit code {code:?}", pod.name_any());
    }
    scene.observe("lister", json!({"phase": phase(&job), "counts": counts(&job)}));

    // A program busybox does not have: the runtime cannot start it.
    kit.create("typo", spec("typo", json!(["sdkfjk"]), json!({"replicas": 3, "parallelism": 3}))).await;
    let (job, pods) =
        kit.wait_for("typo", &names, "failed", |job, _| phase(job) == EphemeralJobPhase::Failed).await;
    assert_eq!(counts(&job), (3, 0, 0, 0, 3), "matches, running, waiting, succeeded, failed");
    for pod in &pods {
        assert!(exit_code(pod, "typo").is_some_and(|c| c != 0), "{:#?}", summaries(&pods));
    }
    let after: Vec<(String, i32)> = pods.iter().map(main_container).collect();
    assert_eq!(after, before, "the main containers were never restarted");
    assert!(pods.iter().all(is_ready), "{:#?}", summaries(&pods));
    scene.observe("typo", json!({"phase": phase(&job), "counts": counts(&job)}));
    kit.shutdown().await;
    Ok(())
}

/// A second job whose container name is already taken on the only pod matches nothing;
/// `activeDeadlineSeconds` fails a job whose container runs too long; `ttlSecondsAfterFinished`
/// deletes finished jobs (succeeded or failed).
pub async fn deadline_and_ttl(scene: Scene) -> Result<(), Skip> {
    let kit = EjKit::start(&scene).await;
    let names = ["web"];
    let before = main_container(&kit.create_pods(&names, json!({SELECTOR.0: SELECTOR.1})).await[0]);

    kit.create(
        "long",
        spec(
            "debugger",
            json!(["sleep", "3600"]),
            json!({"replicas": 1, "parallelism": 1, "activeDeadlineSeconds": 6, "ttlSecondsAfterFinished": 4}),
        ),
    )
    .await;
    let (job, _) = kit
        .wait_for("long", &names, "running", |job, _| {
            phase(job) == EphemeralJobPhase::Running && counts(job) == (1, 1, 0, 0, 0)
        })
        .await;
    scene.observe("long while running", json!({"phase": phase(&job), "counts": counts(&job)}));

    // Same container name, another job: the pod is not its target.
    kit.create("rival", spec("debugger", json!(["sleep", "1"]), json!({"replicas": 1}))).await;
    let (rival, pods) = kit
        .wait_for("rival", &names, "matching nothing", |job, _| {
            job.status.as_ref().is_some_and(|s| s.start_time.is_some())
        })
        .await;
    assert_eq!(phase(&rival), EphemeralJobPhase::Waiting);
    assert_eq!(counts(&rival), (0, 0, 0, 0, 0));
    assert_eq!(
        condition(&rival, EphemeralJobConditionType::MatchedEmpty),
        Some(("MatchEmpty".into(), "job match no pods".into()))
    );
    assert_eq!(
        pods[0].spec.as_ref().unwrap().ephemeral_containers.as_ref().map(Vec::len),
        Some(1),
        "the rival added nothing"
    );
    scene.observe("rival", json!({"phase": phase(&rival), "counts": counts(&rival)}));

    // The deadline passes while the container still runs: failed, then deleted by its TTL.
    let (job, pods) = kit
        .wait_for("long", &names, "failed by its deadline", |job, _| phase(job) == EphemeralJobPhase::Failed)
        .await;
    assert_eq!(
        condition(&job, EphemeralJobConditionType::JobFailed),
        Some((
            "DeadlineExceeded".into(),
            "EphemeralJob default/long was active longer than specified deadline".into()
        ))
    );
    let status = job.status.clone().unwrap();
    let ran = status.completion_time.unwrap().0.duration_since(status.start_time.unwrap().0).as_secs();
    assert!((6..=9).contains(&ran), "failed {ran} s after it started");
    assert_eq!(main_container(&pods[0]), before, "the main container was never restarted");
    scene.observe("long", json!({"phase": phase(&job), "condition": "DeadlineExceeded"}));
    kit.wait_gone("long", "not deleted after its TTL").await;

    // A job that succeeds is deleted after its TTL too (a second container name on the pod).
    kit.create("short", spec("short", json!(["sleep", "1"]), json!({"ttlSecondsAfterFinished": 2}))).await;
    let phases = kit.wait_gone("short", "not deleted after its TTL").await;
    assert!(phases.contains(&EphemeralJobPhase::Succeeded), "short was seen succeeded: {phases:?}");
    let pod = kit.kit.pods.get("web").await.unwrap();
    assert_eq!(exit_code(&pod, "short"), Some(0));
    assert_eq!(main_container(&pod), before, "the main container was never restarted");
    scene.observe("short seen succeeded before its deletion", true);
    kit.shutdown().await;
    Ok(())
}
