//! EphemeralJob decisions, free of I/O (upstream `ephemeraljob_controller.go`,
//! `ephemeraljob_utils.go` and `econtainer/econtainer_k8s.go`). The controller
//! ([`super::controller`]) reads the caches, calls [`decide`], and makes the writes it asks for.
//!
//! A reconcile, in upstream's order:
//! 1. a job being deleted only gives up its finalizer (the ephemeral containers it injected
//!    stay: Kubernetes cannot remove ephemeral containers from a pod);
//! 2. a job without the finalizer gets it;
//! 3. a finished job (a `completionTime`) is deleted once `ttlSecondsAfterFinished` (default
//!    1800 s) has passed since it finished;
//! 4. `startTime` is set on the first look;
//! 5. the targets are the active pods the selector matches, oldest first, without a same-named
//!    ephemeral container of someone else, at most `replicas` of them;
//! 6. the status is counted from the targets' `ephemeralContainerStatuses` and a phase is
//!    chosen; a paused job stops here;
//! 7. the job's containers are injected into targets that do not have them yet, within
//!    `parallelism`.
//!
//! Where this differs from upstream, on purpose:
//! - `parallelism` bounds the pods whose injected containers have not finished (injected and
//!   not yet reported, waiting or running), not only the running ones, and a job with room for
//!   more than one pod fills all of it (upstream's `parallelism - running` cut of an already
//!   shortened list can leave room unused);
//! - a condition whose type, reason and message did not change keeps its timestamps, so an
//!   unchanged job is not written again;
//! - a job whose deadline passed or that finished is looked at again for its TTL without
//!   waiting for a pod change.

use std::{
    cmp::Ordering,
    collections::{BTreeSet, HashSet},
    time::Duration,
};

use k8s_openapi::{
    api::core::v1::{ContainerStatus, EnvVar, EphemeralContainer, Pod},
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1alpha1::{
        EPHEMERAL_CONTAINER_ENV_KEY, EphemeralJob, EphemeralJobCondition, EphemeralJobConditionType,
        EphemeralJobPhase, EphemeralJobStatus,
    },
    selector,
};
use serde_json::{Value, json};

/// The finalizer a job holds while it may have containers in pods (upstream
/// `EphemeralContainerFinalizer`).
pub const FINALIZER: &str = "apps.kruise.io/ephemeralcontainers-cleanup";
/// Pods worked on at once when `parallelism` is unset (upstream `defaultParallelism`).
pub const DEFAULT_PARALLELISM: i32 = 1;
/// Seconds a finished job is kept when `ttlSecondsAfterFinished` is unset.
pub const DEFAULT_TTL_SECONDS: i32 = 1800;
/// The container state reason that counts as a failure although the container never ran.
const RUN_CONTAINER_ERROR: &str = "RunContainerError";

/// `now` to whole seconds, as the API stores times, so a status compares equal to its read-back.
pub fn whole_seconds(now: Timestamp) -> Timestamp {
    Timestamp::from_second(now.as_second()).unwrap_or(now)
}

/// Whether the job selects `pod` when listing its targets: same namespace, and the selector
/// matches (no selector selects nothing, an empty one everything, as upstream's
/// `ValidatedLabelSelectorAsSelector`).
pub fn selects(job: &EphemeralJob, pod: &Pod) -> bool {
    if pod.metadata.namespace != job.metadata.namespace {
        return false;
    }
    let Some(sel) = &job.spec.selector else { return false };
    let empty = Default::default();
    selector::matches(sel, pod.metadata.labels.as_ref().unwrap_or(&empty))
}

/// Whether a change of `pod` concerns the job (upstream `podMatchedEphemeralJob`): as
/// [`selects`], but an empty selector wakes nobody.
pub fn wakes(job: &EphemeralJob, pod: &Pod) -> bool {
    job.spec.selector.as_ref().is_some_and(|s| !selector::is_empty(s)) && selects(job, pod)
}

/// Whether a pod still runs or is about to (Kubernetes `IsPodActive`).
pub fn is_pod_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default();
    !matches!(phase, "Succeeded" | "Failed") && pod.metadata.deletion_timestamp.is_none()
}

fn job_uid(job: &EphemeralJob) -> &str {
    job.metadata.uid.as_deref().unwrap_or_default()
}

fn template_names(job: &EphemeralJob) -> BTreeSet<&str> {
    job.spec.template.ephemeral_containers.iter().map(|c| c.name.as_str()).collect()
}

fn pod_ephemeral_containers(pod: &Pod) -> &[EphemeralContainer] {
    pod.spec.as_ref().and_then(|s| s.ephemeral_containers.as_deref()).unwrap_or_default()
}

/// Whether the job injected `container`: it carries `KRUISE_EJOB_ID` set to the job's UID
/// (upstream `isCreatedByEJob`).
pub fn injected_by(job: &EphemeralJob, container: &EphemeralContainer) -> bool {
    container
        .env
        .iter()
        .flatten()
        .any(|env| env.name == EPHEMERAL_CONTAINER_ENV_KEY && env.value.as_deref() == Some(job_uid(job)))
}

/// Whether the pod has an ephemeral container named as one of the job's that someone else put
/// there (upstream `existDuplicatedEphemeralContainer`); such a pod is not the job's target.
pub fn has_foreign_namesake(job: &EphemeralJob, pod: &Pod) -> bool {
    let names = template_names(job);
    pod_ephemeral_containers(pod).iter().any(|c| names.contains(c.name.as_str()) && !injected_by(job, c))
}

/// Whether the pod has one of the job's ephemeral containers put there by the job.
pub fn has_own_container(job: &EphemeralJob, pod: &Pod) -> bool {
    let names = template_names(job);
    pod_ephemeral_containers(pod).iter().any(|c| names.contains(c.name.as_str()) && injected_by(job, c))
}

/// Whether the pod has any ephemeral container named as one of the job's (upstream
/// `ContainsEphemeralContainer`): the job never adds to such a pod.
pub fn has_namesake(job: &EphemeralJob, pod: &Pod) -> bool {
    let names = template_names(job);
    pod_ephemeral_containers(pod).iter().any(|c| names.contains(c.name.as_str()))
}

fn by_age(a: &Pod, b: &Pod) -> Ordering {
    let created = |pod: &Pod| pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
    created(a).cmp(&created(b)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// The job's targets (upstream `filterPods`): the active pods it selects without a foreign
/// namesake container, oldest first (then by name), at most `replicas`.
pub fn target_pods<'a>(job: &EphemeralJob, pods: &[&'a Pod]) -> Vec<&'a Pod> {
    let mut selected: Vec<&Pod> = pods.iter().copied().filter(|pod| selects(job, pod)).collect();
    selected.sort_by(|a, b| by_age(a, b));
    let limit = job.spec.replicas.map_or(usize::MAX, |r| usize::try_from(r).unwrap_or(0));
    selected
        .into_iter()
        .filter(|pod| is_pod_active(pod) && !has_foreign_namesake(job, pod))
        .take(limit)
        .collect()
}

/// The name an injection into `pod` is expected under, per job container (upstream
/// `getPodEphemeralContainers`: `<pod>-<container>`).
pub fn expectation_names(job: &EphemeralJob, pod_name: &str) -> Vec<String> {
    job.spec.template.ephemeral_containers.iter().map(|c| format!("{pod_name}-{}", c.name)).collect()
}

/// The expectation names the cache shows as done: the job's own containers on the pods it
/// selects.
pub fn observed_names(job: &EphemeralJob, pods: &[&Pod]) -> HashSet<String> {
    let names = template_names(job);
    pods.iter()
        .filter(|pod| selects(job, pod))
        .flat_map(|pod| {
            let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
            pod_ephemeral_containers(pod)
                .iter()
                .filter(|c| names.contains(c.name.as_str()) && injected_by(job, c))
                .map(move |c| format!("{pod_name}-{}", c.name))
        })
        .collect()
}

/// The containers injected into a pod: the template's, each with `KRUISE_EJOB_ID` set to the
/// job's UID so the job recognises them (upstream `CreateEphemeralContainer`).
pub fn containers_to_inject(job: &EphemeralJob) -> Vec<EphemeralContainer> {
    job.spec
        .template
        .ephemeral_containers
        .iter()
        .map(|template| {
            let mut container = template.clone();
            container.env.get_or_insert_with(Vec::new).push(EnvVar {
                name: EPHEMERAL_CONTAINER_ENV_KEY.into(),
                value: Some(job_uid(job).into()),
                value_from: None,
            });
            container
        })
        .collect()
}

/// The strategic merge patch of `pods/ephemeralcontainers` that adds the job's containers
/// (ephemeral containers merge by name, so the pod's others stay).
pub fn inject_patch(job: &EphemeralJob) -> Result<Value, serde_json::Error> {
    Ok(json!({"spec": {"ephemeralContainers": serde_json::to_value(containers_to_inject(job))?}}))
}

/// What one ephemeral container's status says (upstream `parseEphemeralContainerStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerState {
    /// Terminated with exit code 0 at a known time.
    Succeeded,
    /// Terminated with a non-zero exit code, or could not be started (`RunContainerError`).
    Failed,
    /// Waiting to start (image pull, ...).
    Waiting,
    /// Running.
    Running,
    /// Nothing to go by.
    Unknown,
}

/// Reads one container status.
pub fn container_state(status: &ContainerStatus) -> ContainerState {
    let Some(state) = &status.state else { return ContainerState::Unknown };
    if let Some(terminated) = &state.terminated {
        if terminated.finished_at.is_some() && terminated.exit_code == 0 {
            return ContainerState::Succeeded;
        }
        if terminated.exit_code != 0 {
            return ContainerState::Failed;
        }
    }
    if state.running.is_some() {
        return ContainerState::Running;
    }
    if let Some(waiting) = &state.waiting {
        if waiting.reason.as_deref() == Some(RUN_CONTAINER_ERROR) {
            return ContainerState::Failed;
        }
        return ContainerState::Waiting;
    }
    ContainerState::Unknown
}

/// Where a target stands with the job's containers (upstream `parseEphemeralPodStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodState {
    /// Every job container succeeded.
    Succeeded,
    /// A job container failed.
    Failed,
    /// A job container runs.
    Running,
    /// A job container waits to start.
    Waiting,
    /// No job container reported yet (or not injected).
    Unknown,
}

/// Reads the pod's `ephemeralContainerStatuses` for the job's containers: one failure fails the
/// pod, all succeeded is success, else running before waiting.
pub fn pod_state(job: &EphemeralJob, pod: &Pod) -> PodState {
    let names = template_names(job);
    let statuses =
        pod.status.as_ref().and_then(|s| s.ephemeral_container_statuses.as_deref()).unwrap_or_default();
    let (mut succeeded, mut running, mut waiting) = (0usize, 0usize, 0usize);
    for status in statuses.iter().filter(|s| names.contains(s.name.as_str())) {
        match container_state(status) {
            ContainerState::Failed => return PodState::Failed,
            ContainerState::Succeeded => succeeded += 1,
            ContainerState::Running => running += 1,
            ContainerState::Waiting => waiting += 1,
            ContainerState::Unknown => {}
        }
    }
    if succeeded > 0 && succeeded == names.len() {
        PodState::Succeeded
    } else if running > 0 {
        PodState::Running
    } else if waiting > 0 {
        PodState::Waiting
    } else {
        PodState::Unknown
    }
}

/// The targets counted by state (upstream `calculateEphemeralContainerStatus`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Targets whose containers all succeeded.
    pub succeeded: i32,
    /// Targets with a failed container.
    pub failed: i32,
    /// Targets with a running container.
    pub running: i32,
    /// Targets with a container waiting to start.
    pub waiting: i32,
    /// Targets holding the job's containers that have neither succeeded nor failed: what
    /// `parallelism` bounds.
    pub in_flight: i32,
}

fn count_of(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Counts the targets.
pub fn count(job: &EphemeralJob, targets: &[&Pod]) -> Counts {
    let mut counts = Counts::default();
    for pod in targets {
        let state = pod_state(job, pod);
        match state {
            PodState::Succeeded => counts.succeeded += 1,
            PodState::Failed => counts.failed += 1,
            PodState::Running => counts.running += 1,
            PodState::Waiting => counts.waiting += 1,
            PodState::Unknown => {}
        }
        let finished = matches!(state, PodState::Succeeded | PodState::Failed);
        if !finished && has_own_container(job, pod) {
            counts.in_flight += 1;
        }
    }
    counts
}

/// The targets to inject into now: those without any namesake container yet (upstream
/// `getSyncPods` then `ContainsEphemeralContainer`), in target order, as many as `parallelism`
/// leaves room for beside the pods in flight.
pub fn pods_to_inject<'a>(job: &EphemeralJob, targets: &[&'a Pod], counts: &Counts) -> Vec<&'a Pod> {
    if job.spec.template.ephemeral_containers.is_empty() {
        return Vec::new();
    }
    let parallelism = job.spec.parallelism.unwrap_or(DEFAULT_PARALLELISM);
    let room = usize::try_from(parallelism.saturating_sub(counts.in_flight)).unwrap_or(0);
    targets.iter().copied().filter(|pod| !has_namesake(job, pod)).take(room).collect()
}

fn since(now: Timestamp, then: &Time) -> f64 {
    now.duration_since(then.0).as_secs_f64()
}

/// Whether the job has been active for `activeDeadlineSeconds` since `startTime` (upstream
/// `pastActiveDeadline`).
pub fn past_active_deadline(job: &EphemeralJob, status: &EphemeralJobStatus, now: Timestamp) -> bool {
    let (Some(deadline), Some(start)) = (job.spec.active_deadline_seconds, &status.start_time) else {
        return false;
    };
    since(now, start) >= deadline as f64
}

/// Time left before the active deadline (None without one or without a start time).
pub fn deadline_left(job: &EphemeralJob, status: &EphemeralJobStatus, now: Timestamp) -> Option<Duration> {
    let deadline = job.spec.active_deadline_seconds?;
    let start = status.start_time.as_ref()?;
    Some(Duration::from_secs_f64((deadline as f64 - since(now, start)).max(0.0)))
}

/// Time left before a finished job is deleted: None while it has not finished, zero once
/// `ttlSecondsAfterFinished` (default 1800) has passed since `completionTime`.
pub fn ttl_left(job: &EphemeralJob, status: &EphemeralJobStatus, now: Timestamp) -> Option<Duration> {
    let finished = status.completion_time.as_ref()?;
    let ttl = job.spec.ttl_seconds_after_finished.unwrap_or(DEFAULT_TTL_SECONDS);
    Some(Duration::from_secs_f64((f64::from(ttl) - since(now, finished)).max(0.0)))
}

/// Sets a true condition of `type_` (upstream `addConditions`: one condition per type, the new
/// one replaces the old); an unchanged condition keeps its timestamps.
pub fn set_condition(
    conditions: &mut Vec<EphemeralJobCondition>,
    type_: EphemeralJobConditionType,
    reason: &str,
    message: String,
    now: Timestamp,
) {
    let condition = EphemeralJobCondition {
        type_,
        status: "True".into(),
        last_probe_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
        reason: reason.into(),
        message,
    };
    match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        Some(existing)
            if existing.status == condition.status
                && existing.reason == condition.reason
                && existing.message == condition.message => {}
        Some(existing) => *existing = condition,
        None => conditions.push(condition),
    }
}

fn job_name(job: &EphemeralJob) -> String {
    format!(
        "{}/{}",
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The status after counting the targets (upstream `calculateStatus`), from the job's current
/// status with `startTime` set.
pub fn next_status(
    job: &EphemeralJob,
    targets: &[&Pod],
    counts: &Counts,
    now: Timestamp,
) -> EphemeralJobStatus {
    let mut status = job.status.clone().unwrap_or_default();
    status.start_time.get_or_insert(Time(now));
    if status.conditions.is_empty() {
        set_condition(
            &mut status.conditions,
            EphemeralJobConditionType::Initialized,
            "Initialized",
            String::new(),
            now,
        );
    }
    status.matches = count_of(targets.len());
    status.succeeded = counts.succeeded;
    status.failed = counts.failed;
    status.running = counts.running;
    status.waiting = counts.waiting;
    let replicas = job.spec.replicas.unwrap_or(status.matches);

    if status.matches == 0 {
        status.phase = EphemeralJobPhase::Waiting;
        set_condition(
            &mut status.conditions,
            EphemeralJobConditionType::MatchedEmpty,
            "MatchEmpty",
            "job match no pods".into(),
            now,
        );
    } else if status.succeeded == replicas && status.succeeded > 0 {
        status.completion_time = Some(Time(now));
        status.phase = EphemeralJobPhase::Succeeded;
        set_condition(
            &mut status.conditions,
            EphemeralJobConditionType::JobSucceeded,
            "JobSucceeded",
            "job success to run all tasks".into(),
            now,
        );
    } else if status.running > 0 {
        status.phase = EphemeralJobPhase::Running;
    } else if status.failed == replicas {
        status.completion_time = Some(Time(now));
        status.phase = EphemeralJobPhase::Failed;
        set_condition(
            &mut status.conditions,
            EphemeralJobConditionType::JobFailed,
            "JobFailed",
            "job failed to run all tasks".into(),
            now,
        );
    } else if status.waiting == replicas {
        status.phase = EphemeralJobPhase::Waiting;
    } else {
        status.phase = EphemeralJobPhase::PhaseUnknown;
    }
    if job.spec.paused {
        status.phase = EphemeralJobPhase::Paused;
    }
    if status.failed > 0 {
        set_condition(
            &mut status.conditions,
            EphemeralJobConditionType::JobFailed,
            "CreateFailed",
            format!("EphemeralJob {} failed to create ephemeral container", job_name(job)),
            now,
        );
    }
    let active = matches!(
        status.phase,
        EphemeralJobPhase::Waiting | EphemeralJobPhase::PhaseUnknown | EphemeralJobPhase::Running
    );
    if active && past_active_deadline(job, &status, now) {
        status.completion_time = Some(Time(now));
        status.phase = EphemeralJobPhase::Failed;
        set_condition(
            &mut status.conditions,
            EphemeralJobConditionType::JobFailed,
            "DeadlineExceeded",
            format!("EphemeralJob {} was active longer than specified deadline", job_name(job)),
            now,
        );
    }
    if job.spec.template.ephemeral_containers.is_empty() {
        status.phase = EphemeralJobPhase::Error;
        set_condition(
            &mut status.conditions,
            EphemeralJobConditionType::JobError,
            "Error",
            "job spec invalid fields.".into(),
            now,
        );
    }
    status
}

/// What the controller does with a job.
#[derive(Debug)]
pub enum Decision<'a> {
    /// The job is being deleted: drop the finalizer (when it holds it) and nothing else.
    Release {
        /// Whether the job holds [`FINALIZER`].
        holds_finalizer: bool,
    },
    /// The job has finished: delete it now, or look again when its TTL runs out.
    Finished {
        /// Delete the job now.
        delete: bool,
        /// When to look again.
        requeue: Option<Duration>,
    },
    /// The job is live: write `status`, and inject into `inject` unless it is paused.
    Sync(Plan<'a>),
}

/// The writes for a live job.
#[derive(Debug)]
pub struct Plan<'a> {
    /// The status to write.
    pub status: EphemeralJobStatus,
    /// Pods to inject the job's containers into (empty for a paused or finished job).
    pub inject: Vec<&'a Pod>,
    /// When to look again without a change (the deadline, or the TTL of a job that just
    /// finished).
    pub requeue: Option<Duration>,
}

/// Whether the job holds the cleanup finalizer.
pub fn holds_finalizer(job: &EphemeralJob) -> bool {
    job.metadata.finalizers.iter().flatten().any(|f| f == FINALIZER)
}

/// Decides one reconcile of `job` given every cached pod of its namespace (adding the finalizer
/// is the caller's, before acting on [`Decision::Finished`] or [`Decision::Sync`]).
pub fn decide<'a>(job: &EphemeralJob, pods: &[&'a Pod], now: Timestamp) -> Decision<'a> {
    let now = whole_seconds(now);
    if job.metadata.deletion_timestamp.is_some() {
        return Decision::Release { holds_finalizer: holds_finalizer(job) };
    }
    let current = job.status.clone().unwrap_or_default();
    if let Some(left) = ttl_left(job, &current, now) {
        let delete = left.is_zero();
        return Decision::Finished { delete, requeue: (!delete).then_some(left) };
    }
    let targets = target_pods(job, pods);
    let counts = count(job, &targets);
    let status = next_status(job, &targets, &counts, now);
    let finished = status.completion_time.is_some();
    let inject = if finished || status.phase == EphemeralJobPhase::Paused {
        Vec::new()
    } else {
        pods_to_inject(job, &targets, &counts)
    };
    let requeue = if finished {
        ttl_left(job, &status, now)
    } else {
        deadline_left(job, &status, now).filter(|left| !left.is_zero())
    };
    Decision::Sync(Plan { status, inject, requeue })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + second).unwrap()
    }

    fn job(spec: Value, status: Value) -> EphemeralJob {
        let mut spec_value = json!({
            "selector": {"matchLabels": {"run": "nginx"}},
            "template": {"ephemeralContainers": [
                {"name": "debugger", "image": "busybox", "targetContainerName": "nginx", "command": ["sleep", "3"]}
            ]},
        });
        merge(&mut spec_value, spec);
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "EphemeralJob",
            "metadata": {"name": "job", "namespace": "ns", "uid": "job-uid"},
            "spec": spec_value, "status": status,
        }))
        .unwrap()
    }

    fn merge(target: &mut Value, patch: Value) {
        match (target, patch) {
            (Value::Object(target), Value::Object(patch)) => {
                for (key, value) in patch {
                    match target.get_mut(&key) {
                        Some(existing) if value.is_object() && existing.is_object() => merge(existing, value),
                        _ => {
                            target.insert(key, value);
                        }
                    }
                }
            }
            (target, patch) => *target = patch,
        }
    }

    /// A running pod `name` created at `created`, labelled `run=nginx`, with `extra` merged in.
    fn pod(name: &str, created: i64, extra: Value) -> Pod {
        let mut value = json!({
            "metadata": {"name": name, "namespace": "ns", "labels": {"run": "nginx"},
                         "creationTimestamp": Time(at(created))},
            "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
            "status": {"phase": "Running"},
        });
        merge(&mut value, extra);
        serde_json::from_value(value).unwrap()
    }

    fn injected(owner: &str, names: &[&str], states: &[(&str, Value)]) -> Value {
        let containers: Vec<Value> = names
            .iter()
            .map(|n| json!({"name": n, "image": "busybox", "env": [{"name": "KRUISE_EJOB_ID", "value": owner}]}))
            .collect();
        let statuses: Vec<Value> = states
            .iter()
            .map(|(n, state)| {
                json!({"name": n, "image": "busybox", "imageID": "", "ready": false,
                                     "restartCount": 0, "state": state})
            })
            .collect();
        json!({"spec": {"ephemeralContainers": containers}, "status": {"ephemeralContainerStatuses": statuses}})
    }

    fn running() -> Value {
        json!({"running": {"startedAt": Time(at(1))}})
    }
    fn exited(code: i32) -> Value {
        json!({"terminated": {"exitCode": code, "finishedAt": Time(at(2))}})
    }
    fn waiting(reason: &str) -> Value {
        json!({"waiting": {"reason": reason}})
    }

    fn names(pods: &[&Pod]) -> Vec<String> {
        pods.iter().map(|p| p.metadata.name.clone().unwrap()).collect()
    }

    #[test]
    fn container_states() {
        let status = |state: Value| -> ContainerStatus {
            serde_json::from_value(json!({"name": "d", "image": "b", "imageID": "", "ready": false,
                                          "restartCount": 0, "state": state}))
            .unwrap()
        };
        let cases = [
            (exited(0), ContainerState::Succeeded),
            (json!({"terminated": {"exitCode": 0}}), ContainerState::Unknown),
            (exited(1), ContainerState::Failed),
            (exited(128), ContainerState::Failed),
            (running(), ContainerState::Running),
            (waiting("ContainerCreating"), ContainerState::Waiting),
            (waiting("RunContainerError"), ContainerState::Failed),
            (json!({}), ContainerState::Unknown),
        ];
        for (state, want) in cases {
            assert_eq!(container_state(&status(state.clone())), want, "{state}");
        }
    }

    #[test]
    fn pod_states_over_several_containers() {
        let two = job(
            json!({"template": {"ephemeralContainers": [
                {"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}]}}),
            Value::Null,
        );
        let cases: Vec<(Vec<(&str, Value)>, PodState)> = vec![
            (vec![], PodState::Unknown),
            (vec![("a", exited(0))], PodState::Unknown),
            (vec![("a", exited(0)), ("b", exited(0))], PodState::Succeeded),
            (vec![("a", exited(0)), ("b", running())], PodState::Running),
            (vec![("a", running()), ("b", exited(3))], PodState::Failed),
            (vec![("a", waiting("PodInitializing")), ("b", running())], PodState::Running),
            (vec![("a", waiting("PodInitializing"))], PodState::Waiting),
            (vec![("other", exited(1)), ("a", running())], PodState::Running),
        ];
        for (statuses, want) in cases {
            let p = pod("p", 0, injected("job-uid", &["a", "b"], &statuses));
            assert_eq!(pod_state(&two, &p), want, "{statuses:?}");
        }
    }

    #[test]
    fn targets_are_active_selected_pods_oldest_first_capped_by_replicas() {
        let j = job(json!({"replicas": 3}), Value::Null);
        let pods = [
            pod("young", 30, json!({})),
            pod("old", 10, json!({})),
            pod("other-ns", 0, json!({"metadata": {"namespace": "elsewhere"}})),
            pod("unlabelled", 0, json!({"metadata": {"labels": {"run": "apache"}}})),
            pod("done", 0, json!({"status": {"phase": "Succeeded"}})),
            pod("deleting", 0, json!({"metadata": {"deletionTimestamp": Time(at(50))}})),
            pod("foreign", 0, injected("someone-else", &["debugger"], &[])),
            pod("b-mid", 20, json!({})),
            pod("a-mid", 20, injected("job-uid", &["debugger"], &[])),
            pod("newest", 40, json!({})),
        ];
        let refs: Vec<&Pod> = pods.iter().collect();
        assert_eq!(names(&target_pods(&j, &refs)), ["old", "a-mid", "b-mid"]);
        let all = job(json!({}), Value::Null);
        assert_eq!(names(&target_pods(&all, &refs)), ["old", "a-mid", "b-mid", "young", "newest"]);
        let none = job(json!({"selector": null}), Value::Null);
        assert!(target_pods(&none, &refs).is_empty(), "no selector selects nothing");
    }

    #[test]
    fn empty_selector_lists_everything_but_wakes_nobody() {
        let j = job(json!({"selector": {"matchLabels": null}}), Value::Null);
        let p = pod("p", 0, json!({"metadata": {"labels": {"run": "apache"}}}));
        assert!(selects(&j, &p));
        assert!(!wakes(&j, &p));
        let labelled = job(json!({}), Value::Null);
        assert!(wakes(&labelled, &pod("q", 0, json!({}))));
        assert!(!wakes(&labelled, &p));
    }

    #[test]
    fn injected_containers_carry_the_job_uid() {
        let j = job(
            json!({"template": {"ephemeralContainers": [
            {"name": "debugger", "image": "busybox", "env": [{"name": "A", "value": "1"}]}]}}),
            Value::Null,
        );
        let patch = inject_patch(&j).unwrap();
        assert_eq!(
            patch,
            json!({"spec": {"ephemeralContainers": [{"name": "debugger", "image": "busybox",
                "env": [{"name": "A", "value": "1"}, {"name": "KRUISE_EJOB_ID", "value": "job-uid"}]}]}})
        );
        let containers = containers_to_inject(&j);
        assert!(injected_by(&j, &containers[0]));
        assert_eq!(expectation_names(&j, "web-0"), ["web-0-debugger"]);
    }

    #[test]
    fn observed_names_are_the_jobs_own_containers() {
        let j = job(json!({}), Value::Null);
        let pods = [
            pod("mine", 0, injected("job-uid", &["debugger"], &[])),
            pod("foreign", 0, injected("other", &["debugger"], &[])),
            pod("bare", 0, json!({})),
        ];
        let refs: Vec<&Pod> = pods.iter().collect();
        assert_eq!(observed_names(&j, &refs), HashSet::from(["mine-debugger".to_string()]));
    }

    #[test]
    fn parallelism_bounds_the_pods_in_flight() {
        // (parallelism, states of five targets: None = not injected) -> pods injected now
        type Case = (Option<i32>, Vec<Option<Value>>, Vec<&'static str>);
        let cases: Vec<Case> = vec![
            (None, vec![None, None, None, None, None], vec!["p0"]),
            (Some(2), vec![None, None, None, None, None], vec!["p0", "p1"]),
            (Some(10), vec![None, None, None, None, None], vec!["p0", "p1", "p2", "p3", "p4"]),
            // Injected but not reported yet: in flight.
            (Some(2), vec![Some(Value::Null), None, None, None, None], vec!["p1"]),
            (Some(2), vec![Some(running()), Some(waiting("Pulling")), None, None, None], vec![]),
            // Finished pods free their room.
            (Some(2), vec![Some(exited(0)), Some(exited(1)), None, None, None], vec!["p2", "p3"]),
            (Some(3), vec![Some(running()), Some(exited(0)), None, None, None], vec!["p2", "p3"]),
            (Some(0), vec![None, None, None, None, None], vec![]),
        ];
        for (parallelism, states, want) in cases {
            let j = job(json!({"parallelism": parallelism}), Value::Null);
            let pods: Vec<Pod> = states
                .iter()
                .enumerate()
                .map(|(i, state)| {
                    let name = format!("p{i}");
                    match state {
                        None => pod(&name, i as i64, json!({})),
                        Some(Value::Null) => pod(&name, i as i64, injected("job-uid", &["debugger"], &[])),
                        Some(state) => pod(
                            &name,
                            i as i64,
                            injected("job-uid", &["debugger"], &[("debugger", state.clone())]),
                        ),
                    }
                })
                .collect();
            let refs: Vec<&Pod> = pods.iter().collect();
            let targets = target_pods(&j, &refs);
            let counts = count(&j, &targets);
            assert_eq!(names(&pods_to_inject(&j, &targets, &counts)), want, "{parallelism:?} {states:?}");
        }
    }

    /// Status of a job over targets in the given states (None: not injected).
    fn status_over(spec: Value, status: Value, states: &[Option<Value>], now: i64) -> EphemeralJobStatus {
        let j = job(spec, status);
        let pods: Vec<Pod> = states
            .iter()
            .enumerate()
            .map(|(i, state)| match state {
                None => pod(&format!("p{i}"), 0, json!({})),
                Some(state) => pod(
                    &format!("p{i}"),
                    0,
                    injected("job-uid", &["debugger"], &[("debugger", state.clone())]),
                ),
            })
            .collect();
        let refs: Vec<&Pod> = pods.iter().collect();
        let targets = target_pods(&j, &refs);
        let counts = count(&j, &targets);
        next_status(&j, &targets, &counts, at(now))
    }

    fn condition(status: &EphemeralJobStatus, type_: EphemeralJobConditionType) -> Option<(String, String)> {
        status.conditions.iter().find(|c| c.type_ == type_).map(|c| (c.reason.clone(), c.message.clone()))
    }

    #[test]
    fn phases() {
        use EphemeralJobPhase as P;
        let none: Option<Value> = None;
        let ok = Some(exited(0));
        let bad = Some(exited(1));
        let run = Some(running());
        let wait = Some(waiting("ContainerCreating"));
        // (spec, targets, phase, (matches, running, waiting, succeeded, failed), finished)
        type Case = (Value, Vec<Option<Value>>, EphemeralJobPhase, (i32, i32, i32, i32, i32), bool);
        let cases: Vec<Case> = vec![
            (json!({}), vec![], P::Waiting, (0, 0, 0, 0, 0), false),
            (json!({}), vec![ok.clone(), ok.clone()], P::Succeeded, (2, 0, 0, 2, 0), true),
            (
                json!({"replicas": 2}),
                vec![ok.clone(), ok.clone(), none.clone()],
                P::Succeeded,
                (2, 0, 0, 2, 0),
                true,
            ),
            (json!({}), vec![ok.clone(), run.clone()], P::Running, (2, 1, 0, 1, 0), false),
            (json!({}), vec![bad.clone(), bad.clone()], P::Failed, (2, 0, 0, 0, 2), true),
            (json!({}), vec![bad.clone(), run.clone()], P::Running, (2, 1, 0, 0, 1), false),
            (json!({}), vec![bad.clone(), ok.clone()], P::PhaseUnknown, (2, 0, 0, 1, 1), false),
            (json!({}), vec![wait.clone(), wait.clone()], P::Waiting, (2, 0, 2, 0, 0), false),
            (json!({}), vec![none.clone(), none.clone()], P::PhaseUnknown, (2, 0, 0, 0, 0), false),
            // More replicas than pods: never all succeeded.
            (json!({"replicas": 3}), vec![ok.clone(), ok.clone()], P::PhaseUnknown, (2, 0, 0, 2, 0), false),
            (json!({"paused": true}), vec![run.clone()], P::Paused, (1, 1, 0, 0, 0), false),
            (json!({"paused": true}), vec![ok.clone()], P::Paused, (1, 0, 0, 1, 0), true),
            (json!({"template": {"ephemeralContainers": []}}), vec![], P::Error, (0, 0, 0, 0, 0), false),
        ];
        for (spec, states, phase, want, finished) in cases {
            let status = status_over(spec.clone(), Value::Null, &states, 5);
            let got = (status.matches, status.running, status.waiting, status.succeeded, status.failed);
            assert_eq!((status.phase.clone(), got), (phase, want), "{spec} {states:?}");
            assert_eq!(status.completion_time.is_some(), finished, "{spec} {states:?}");
            assert_eq!(status.start_time, Some(Time(at(5))));
            assert_eq!(status.conditions[0].type_, EphemeralJobConditionType::Initialized);
        }
    }

    #[test]
    fn conditions_follow_upstream_wording() {
        let status = status_over(json!({}), Value::Null, &[Some(exited(0))], 5);
        assert_eq!(
            condition(&status, EphemeralJobConditionType::JobSucceeded),
            Some(("JobSucceeded".into(), "job success to run all tasks".into()))
        );
        // A failed pod turns the JobFailed condition into CreateFailed, as upstream.
        let status = status_over(json!({}), Value::Null, &[Some(exited(2))], 5);
        assert_eq!(status.phase, EphemeralJobPhase::Failed);
        assert_eq!(
            condition(&status, EphemeralJobConditionType::JobFailed),
            Some(("CreateFailed".into(), "EphemeralJob ns/job failed to create ephemeral container".into()))
        );
        let status = status_over(json!({}), Value::Null, &[], 5);
        assert_eq!(
            condition(&status, EphemeralJobConditionType::MatchedEmpty),
            Some(("MatchEmpty".into(), "job match no pods".into()))
        );
    }

    #[test]
    fn active_deadline_fails_an_active_job() {
        let started = json!({"startTime": Time(at(0))});
        let run = Some(running());
        for (now, want) in [(9, EphemeralJobPhase::Running), (10, EphemeralJobPhase::Failed)] {
            let status = status_over(
                json!({"activeDeadlineSeconds": 10}),
                started.clone(),
                std::slice::from_ref(&run),
                now,
            );
            assert_eq!(status.phase, want, "at {now}");
        }
        let status = status_over(
            json!({"activeDeadlineSeconds": 10}),
            started.clone(),
            std::slice::from_ref(&run),
            12,
        );
        assert_eq!(status.completion_time, Some(Time(at(12))));
        assert_eq!(
            condition(&status, EphemeralJobConditionType::JobFailed),
            Some((
                "DeadlineExceeded".into(),
                "EphemeralJob ns/job was active longer than specified deadline".into()
            ))
        );
        // A paused job is not failed by its deadline.
        let status = status_over(
            json!({"activeDeadlineSeconds": 10, "paused": true}),
            started,
            std::slice::from_ref(&run),
            12,
        );
        assert_eq!(status.phase, EphemeralJobPhase::Paused);
    }

    #[test]
    fn unchanged_conditions_keep_their_timestamps() {
        let mut conditions = Vec::new();
        set_condition(
            &mut conditions,
            EphemeralJobConditionType::MatchedEmpty,
            "MatchEmpty",
            "m".into(),
            at(1),
        );
        set_condition(
            &mut conditions,
            EphemeralJobConditionType::MatchedEmpty,
            "MatchEmpty",
            "m".into(),
            at(2),
        );
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0].last_transition_time, Some(Time(at(1))));
        set_condition(&mut conditions, EphemeralJobConditionType::MatchedEmpty, "Other", "m".into(), at(3));
        assert_eq!(conditions.len(), 1);
        assert_eq!(
            (conditions[0].reason.as_str(), conditions[0].last_transition_time.clone()),
            ("Other", Some(Time(at(3))))
        );
    }

    #[test]
    fn decisions() {
        let pods = [pod("p0", 0, json!({})), pod("p1", 1, json!({}))];
        let refs: Vec<&Pod> = pods.iter().collect();
        // Being deleted: only the finalizer.
        let mut deleting = job(json!({}), Value::Null);
        deleting.metadata.deletion_timestamp = Some(Time(at(0)));
        deleting.metadata.finalizers = Some(vec![FINALIZER.into()]);
        assert!(matches!(decide(&deleting, &refs, at(1)), Decision::Release { holds_finalizer: true }));
        // Finished: kept for its TTL (default 1800 s), then deleted.
        let finished = job(json!({}), json!({"completionTime": Time(at(0))}));
        let Decision::Finished { delete, requeue } = decide(&finished, &refs, at(100)) else { panic!() };
        assert!(!delete);
        assert_eq!(requeue, Some(Duration::from_secs(1700)));
        let short = job(json!({"ttlSecondsAfterFinished": 5}), json!({"completionTime": Time(at(0))}));
        assert!(matches!(decide(&short, &refs, at(5)), Decision::Finished { delete: true, requeue: None }));
        // Live: one pod at a time, a look again at the deadline.
        let live = job(json!({"activeDeadlineSeconds": 30}), json!({"startTime": Time(at(0))}));
        let Decision::Sync(plan) = decide(&live, &refs, at(10)) else { panic!() };
        assert_eq!(names(&plan.inject), ["p0"]);
        assert_eq!(plan.requeue, Some(Duration::from_secs(20)));
        // Paused: status only.
        let paused = job(json!({"paused": true}), Value::Null);
        let Decision::Sync(plan) = decide(&paused, &refs, at(10)) else { panic!() };
        assert!(plan.inject.is_empty());
        assert_eq!(plan.status.phase, EphemeralJobPhase::Paused);
        // Past its deadline: failed, nothing injected, a look again for the TTL.
        let late = job(
            json!({"activeDeadlineSeconds": 5, "ttlSecondsAfterFinished": 7}),
            json!({"startTime": Time(at(0))}),
        );
        let Decision::Sync(plan) = decide(&late, &refs, at(10)) else { panic!() };
        assert_eq!(plan.status.phase, EphemeralJobPhase::Failed);
        assert!(plan.inject.is_empty());
        assert_eq!(plan.requeue, Some(Duration::from_secs(7)));
    }

    #[test]
    fn times_are_whole_seconds() {
        let now = Timestamp::from_second(1_700_000_000).unwrap()
            + k8s_openapi::jiff::SignedDuration::from_millis(700);
        assert_eq!(whole_seconds(now), Timestamp::from_second(1_700_000_000).unwrap());
    }
}
