//! BroadcastJob decisions, free of I/O: which nodes a job's pods belong on, how its pods count,
//! what one reconcile does (upstream `Reconcile` in `broadcastjob_controller.go`) and the status
//! it ends with. The controller ([`super::controller`]) reads the caches, calls [`plan`], makes
//! the writes and hands their results to [`settle`].
//!
//! A reconcile, in upstream's order:
//! 1. a finished job (a `Complete` or `Failed` condition, completion policy `Always`) is only
//!    deleted once `ttlSecondsAfterFinished` has passed;
//! 2. `startTime` and the `running` phase are set on the first look;
//! 3. the counts are taken (active, succeeded, failed, desired);
//! 4. a `failed` phase or a paused job only refreshes its counts;
//! 5. a failed pod pauses the job (`Pause`) or fails it (`FailFast`); so does a passed
//!    `activeDeadlineSeconds` (`DeadlineExceeded`), and a failing job deletes its active pods;
//! 6. otherwise the pods on nodes that no longer fit are deleted, pods are created on the nodes
//!    still without one (within `parallelism`), and a job whose every desired node has a finished
//!    pod completes.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use k8s_openapi::{
    api::core::v1::{Container, Node, Pod, PodSpec, Taint},
    apimachinery::pkg::{
        apis::meta::v1::{ObjectMeta, OwnerReference, Time},
        util::intstr::IntOrString,
    },
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{
        BroadcastJob, BroadcastJobPhase, BroadcastJobSpec, BroadcastJobStatus, CompletionPolicyType,
        FailurePolicyType, JobCondition, JobConditionType,
    },
    defaults::default_broadcastjob_spec,
    intstr::scaled_value,
    quantity::Quantity,
};

use crate::daemonset::core::nodes::{node_affinity_matches, replace_node_name_affinity, tolerates};

/// Label carrying the job's name on its pods (upstream `JobNameLabelKey`).
pub const JOB_NAME_LABEL: &str = "broadcastjob-name";
/// Label carrying the job's UID on its pods (upstream `ControllerUIDLabelKey`).
pub const CONTROLLER_UID_LABEL: &str = "broadcastjob-controller-uid";
/// The kind pods name in their controller reference.
pub const KIND: &str = "BroadcastJob";
/// The API version of the controller reference (the storage version, as upstream).
pub const API_VERSION: &str = "apps.kruise.io/v1beta1";
/// The API group of the kind.
pub const GROUP: &str = "apps.kruise.io";
/// The taint a cordoned node carries; a pod tolerating it tolerates `spec.unschedulable`.
const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// The field key of a node's name in node selector `matchFields`.
const NODE_NAME_FIELD: &str = "metadata.name";

/// The spec a reconcile works with: the job's spec with the defaults the mutating webhook
/// applies (completion policy `Always`, unlimited parallelism, failure policy `FailFast`), so a
/// job written while the webhook was not there behaves as the same job admitted through it.
pub fn effective_spec(job: &BroadcastJob) -> BroadcastJobSpec {
    let mut spec = job.spec.clone();
    default_broadcastjob_spec(&mut spec, false);
    spec
}

/// The labels every pod of the job carries (upstream `labelsAsMap`); they select its pods.
pub fn job_labels(job: &BroadcastJob) -> BTreeMap<String, String> {
    BTreeMap::from([
        (JOB_NAME_LABEL.to_string(), job.metadata.name.clone().unwrap_or_default()),
        (CONTROLLER_UID_LABEL.to_string(), job.metadata.uid.clone().unwrap_or_default()),
    ])
}

/// The reference a pod carries to its job (upstream `NewControllerRef`): a controller reference
/// that blocks the job's foreground deletion.
pub fn owner_reference(job: &BroadcastJob) -> OwnerReference {
    OwnerReference {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        name: job.metadata.name.clone().unwrap_or_default(),
        uid: job.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Whether a controller reference points at a BroadcastJob (any served version of the group).
pub fn is_broadcastjob_reference(reference: &OwnerReference) -> bool {
    reference.kind == KIND && reference.api_version.split_once('/').is_some_and(|(group, _)| group == GROUP)
}

/// The job's controller reference of a pod, if any.
pub fn controller_of(pod: &Pod) -> Option<&OwnerReference> {
    pod.metadata.owner_references.iter().flatten().find(|r| r.controller == Some(true))
}

/// Whether `pod` is one of the job's pods: controlled by it and carrying its labels (upstream
/// lists by the labels, then keeps the pods the job controls).
pub fn is_job_pod(job: &BroadcastJob, pod: &Pod) -> bool {
    let controlled =
        controller_of(pod).is_some_and(|r| r.kind == KIND && Some(&r.uid) == job.metadata.uid.as_ref());
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    controlled && job_labels(job).iter().all(|(key, value)| labels.get(key) == Some(value))
}

/// Whether the job has finished for good (upstream `IsJobFinished`): a true `Complete` or
/// `Failed` condition, unless the completion policy is `Never` (such a job never finishes).
pub fn is_job_finished(spec: &BroadcastJobSpec, status: &BroadcastJobStatus) -> bool {
    spec.completion_policy.type_ != CompletionPolicyType::Never
        && status.conditions.iter().any(|c| {
            matches!(c.type_, JobConditionType::Complete | JobConditionType::Failed) && c.status == "True"
        })
}

fn phase_of(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default()
}

/// Whether a pod is still running or about to (Kubernetes `IsPodActive`): not finished and not
/// being deleted.
pub fn is_pod_active(pod: &Pod) -> bool {
    !matches!(phase_of(pod), "Succeeded" | "Failed") && pod.metadata.deletion_timestamp.is_none()
}

/// Whether a pod still running counts as failed (upstream `isPodFailed`): with restart policy
/// `OnFailure`, once its containers (init containers included) restarted more than
/// `restart_limit` times in all. Other pods fail only by their phase.
pub fn is_pod_failed(restart_limit: i32, pod: &Pod) -> bool {
    if pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref()) != Some("OnFailure") {
        return false;
    }
    let status = pod.status.as_ref();
    let restarts: i64 = status
        .iter()
        .flat_map(|s| s.init_container_statuses.iter().flatten().chain(s.container_statuses.iter().flatten()))
        .map(|c| i64::from(c.restart_count))
        .sum();
    restarts > i64::from(restart_limit)
}

/// The job's pods sorted by how they count (upstream `filterPods`); pods being deleted that have
/// not finished count as nothing.
#[derive(Debug, Default)]
pub struct PodCounts<'a> {
    /// Running or pending.
    pub active: Vec<&'a Pod>,
    /// Phase Failed, or over the restart limit.
    pub failed: Vec<&'a Pod>,
    /// Phase Succeeded.
    pub succeeded: Vec<&'a Pod>,
}

/// Sorts the job's pods into active, failed and succeeded.
pub fn filter_pods<'a>(restart_limit: i32, pods: &[&'a Pod]) -> PodCounts<'a> {
    let mut counts = PodCounts::default();
    for pod in pods {
        match phase_of(pod) {
            "Succeeded" => counts.succeeded.push(pod),
            "Failed" => counts.failed.push(pod),
            _ if pod.metadata.deletion_timestamp.is_some() => {}
            _ if is_pod_failed(restart_limit, pod) => counts.failed.push(pod),
            _ => counts.active.push(pod),
        }
    }
    counts
}

fn seconds(duration: k8s_openapi::jiff::SignedDuration) -> f64 {
    duration.as_secs_f64()
}

/// Whether the job has been active longer than `activeDeadlineSeconds` since `startTime`
/// (upstream `pastActiveDeadline`).
pub fn past_active_deadline(spec: &BroadcastJobSpec, status: &BroadcastJobStatus, now: Timestamp) -> bool {
    let (Some(deadline), Some(start)) = (spec.completion_policy.active_deadline_seconds, &status.start_time)
    else {
        return false;
    };
    seconds(now.duration_since(start.0)) >= deadline as f64
}

/// Time left before the active deadline passes (None without a deadline or start time).
pub fn deadline_left(
    spec: &BroadcastJobSpec,
    status: &BroadcastJobStatus,
    now: Timestamp,
) -> Option<Duration> {
    let deadline = spec.completion_policy.active_deadline_seconds?;
    let start = status.start_time.as_ref()?;
    let left = deadline as f64 - seconds(now.duration_since(start.0));
    Some(Duration::from_secs_f64(left.max(0.0)))
}

/// Time left before a finished job is deleted (upstream `pastTTLDeadline`): None without
/// `ttlSecondsAfterFinished` or a completion time, zero once it has passed.
pub fn ttl_left(spec: &BroadcastJobSpec, status: &BroadcastJobStatus, now: Timestamp) -> Option<Duration> {
    let ttl = spec.completion_policy.ttl_seconds_after_finished?;
    let finished = status.completion_time.as_ref()?;
    let left = f64::from(ttl) - seconds(now.duration_since(finished.0));
    Some(Duration::from_secs_f64(left.max(0.0)))
}

/// The node a job pod is for (upstream `getAssignedNode`): its `nodeName`, else the single value
/// of a `metadata.name In [...]` requirement of its required node affinity.
pub fn assigned_node(pod: &Pod) -> Option<String> {
    let spec = pod.spec.as_ref()?;
    if let Some(name) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(name.to_string());
    }
    let terms = &spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    terms.iter().flat_map(|t| t.match_fields.iter().flatten()).find_map(|r| {
        match (r.key.as_str(), r.operator.as_str(), r.values.as_deref()) {
            (NODE_NAME_FIELD, "In", Some([node])) => Some(node.clone()),
            _ => None,
        }
    })
}

/// The job's pods by node (upstream `getNodeToPodMap`), and the pods that share a node with an
/// earlier one (which should not happen; the later pod wins, as upstream). Pods whose node is
/// unknown are filed under the empty name.
pub fn node_to_pod_map<'a>(pods: &[&'a Pod]) -> (BTreeMap<String, &'a Pod>, Vec<(&'a Pod, String)>) {
    let mut map = BTreeMap::new();
    let mut duplicates = Vec::new();
    for pod in pods {
        let node = assigned_node(pod).unwrap_or_default();
        if map.insert(node.clone(), *pod).is_some() {
            duplicates.push((*pod, node));
        }
    }
    (map, duplicates)
}

/// The pod spec a node's fitness is judged by when it has no pod yet (upstream `NewMockPod`):
/// the template bound to the node by name.
pub fn mock_pod_spec(spec: &BroadcastJobSpec, node: &str) -> PodSpec {
    let mut pod = spec.template.spec.clone().unwrap_or_default();
    pod.node_name = Some(node.to_string());
    pod
}

/// Resource requests of a pod spec (Kubernetes `PodRequests`, in milli-units): the sum of its
/// containers and restartable init containers (sidecars), or the largest regular init
/// container with the sidecars started before it if larger, plus the pod overhead.
pub fn pod_requests(spec: &PodSpec) -> BTreeMap<String, i128> {
    fn requests_of(container: &Container) -> BTreeMap<String, i128> {
        container
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|(name, q)| Some((name.clone(), Quantity::parse(&q.0).ok()?.millis())))
            .collect()
    }
    fn add(total: &mut BTreeMap<String, i128>, more: &BTreeMap<String, i128>) {
        for (name, value) in more {
            *total.entry(name.clone()).or_default() += value;
        }
    }
    let mut total = BTreeMap::new();
    for container in &spec.containers {
        add(&mut total, &requests_of(container));
    }
    let mut sidecars = BTreeMap::new();
    let mut largest_init = BTreeMap::<String, i128>::new();
    for init in spec.init_containers.iter().flatten() {
        let requests = requests_of(init);
        if init.restart_policy.as_deref() == Some("Always") {
            add(&mut sidecars, &requests);
        } else {
            let mut running = sidecars.clone();
            add(&mut running, &requests);
            for (name, value) in running {
                let entry = largest_init.entry(name).or_default();
                *entry = (*entry).max(value);
            }
        }
    }
    add(&mut total, &sidecars);
    for (name, value) in largest_init {
        let entry = total.entry(name).or_default();
        *entry = (*entry).max(value);
    }
    for (name, q) in spec.overhead.iter().flatten() {
        if let Ok(q) = Quantity::parse(&q.0) {
            *total.entry(name.clone()).or_default() += q.millis();
        }
    }
    total
}

/// Whether the scheduler's resource fit counts a resource beyond cpu, memory and ephemeral
/// storage (Kubernetes `IsScalarResourceName`: extended, prefixed native, hugepages and
/// attachable-volume resources).
fn is_scalar_resource(name: &str) -> bool {
    name.contains('/') || name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")
}

/// Why a node lacks room for the pod alone (Kubernetes `noderesources.Fits` against a node with
/// no pods): its allocatable pod count, then each requested resource against allocatable.
fn insufficient_resources(spec: &PodSpec, node: &Node) -> Vec<String> {
    let allocatable = node.status.as_ref().and_then(|s| s.allocatable.clone()).unwrap_or_default();
    let amount = |name: &str| {
        allocatable.get(name).and_then(|q| Quantity::parse(&q.0).ok()).map(|q| q.millis()).unwrap_or(0)
    };
    let mut reasons = Vec::new();
    // One pod needs one pod slot (in milli-units here).
    if amount("pods") < 1000 {
        reasons.push("Too many pods".to_string());
    }
    for (name, wanted) in pod_requests(spec) {
        let counted =
            matches!(name.as_str(), "cpu" | "memory" | "ephemeral-storage") || is_scalar_resource(&name);
        if counted && wanted > 0 && wanted > amount(&name) {
            reasons.push(format!("Insufficient {name}"));
        }
    }
    reasons
}

/// Whether a pod with this spec may run on `node` (upstream `checkNodeFitness`), else why not:
/// its `nodeName`, its node selector and required node affinity, the node's `NoSchedule` and
/// `NoExecute` taints against its tolerations, a cordoned node (unless the pod tolerates the
/// `unschedulable` taint), and the node's allocatable resources.
pub fn check_node_fitness(spec: &PodSpec, node: &Node) -> Result<(), String> {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    if spec.node_name.as_deref().is_some_and(|n| !n.is_empty() && n != name) {
        return Err("node(s) didn't match the requested node name".into());
    }
    if !node_affinity_matches(spec, node) {
        return Err("node(s) didn't match Pod's node affinity/selector".into());
    }
    let tolerations = spec.tolerations.as_deref().unwrap_or_default();
    let node_spec = node.spec.as_ref();
    let untolerated = node_spec
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default()
        .iter()
        .filter(|taint| matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute"))
        .find(|taint| !tolerations.iter().any(|t| tolerates(t, taint)));
    if let Some(taint) = untolerated {
        return Err(format!(
            "node(s) had taint {{{}: {}}}, that the pod didn't tolerate",
            taint.key,
            taint.value.as_deref().unwrap_or_default()
        ));
    }
    let cordon = Taint { key: TAINT_UNSCHEDULABLE.into(), effect: "NoSchedule".into(), ..Default::default() };
    if node_spec.and_then(|s| s.unschedulable).unwrap_or(false)
        && !tolerations.iter().any(|t| tolerates(t, &cordon))
    {
        return Err("node(s) were unschedulable".into());
    }
    let lacking = insufficient_resources(spec, node);
    if !lacking.is_empty() {
        return Err(lacking.join(", "));
    }
    Ok(())
}

/// Whether the job's pod would fit on `node` (the check a node event runs for every job).
pub fn job_fits_node(spec: &BroadcastJobSpec, node: &Node) -> bool {
    check_node_fitness(&mock_pod_spec(spec, node.metadata.name.as_deref().unwrap_or_default()), node).is_ok()
}

/// Where the job stands on the nodes (upstream `getNodesToRunPod`).
#[derive(Debug, Default)]
pub struct NodePlan<'a> {
    /// Every node the job should run on, with its pod if it has one.
    pub desired: BTreeMap<String, Option<&'a Pod>>,
    /// The desired nodes without a pod, in node-name order.
    pub rest: Vec<String>,
    /// Pods on nodes they no longer fit (not already being deleted).
    pub to_delete: Vec<&'a Pod>,
}

/// Sorts the nodes into those that should run the job, those still without its pod, and the
/// pods that no longer fit their node. A pod being deleted keeps its node desired.
pub fn nodes_to_run_pod<'a>(
    nodes: &[&Node],
    spec: &BroadcastJobSpec,
    existing: &BTreeMap<String, &'a Pod>,
) -> NodePlan<'a> {
    let mut plan = NodePlan::default();
    let mut sorted: Vec<&&Node> = nodes.iter().collect();
    sorted.sort_by_key(|node| node.metadata.name.clone());
    for node in sorted {
        let name = node.metadata.name.clone().unwrap_or_default();
        match existing.get(&name) {
            Some(pod) => {
                let fits = pod.spec.as_ref().is_some_and(|s| check_node_fitness(s, node).is_ok());
                if !fits && pod.metadata.deletion_timestamp.is_none() {
                    plan.to_delete.push(pod);
                    continue;
                }
                plan.desired.insert(name, Some(*pod));
            }
            None => {
                if let Err(reason) = check_node_fitness(&mock_pod_spec(spec, &name), node) {
                    tracing::debug!(node = %name, %reason, "the job's pod does not fit on the node");
                    continue;
                }
                plan.rest.push(name.clone());
                plan.desired.insert(name, None);
            }
        }
    }
    plan
}

/// Whether every desired node has a finished (or deleted) pod (upstream `isJobComplete`); a job
/// with completion policy `Never` or without any desired node never completes.
pub fn is_job_complete(spec: &BroadcastJobSpec, desired: &BTreeMap<String, Option<&Pod>>) -> bool {
    spec.completion_policy.type_ != CompletionPolicyType::Never
        && !desired.is_empty()
        && desired.values().all(|pod| pod.is_some_and(|pod| !is_pod_active(pod)))
}

/// Most pods the job may run at once (upstream: `parallelism`, a count or a percentage of the
/// desired nodes rounded up; unlimited when unset).
pub fn parallelism_limit(spec: &BroadcastJobSpec, desired: i32) -> Result<i32, String> {
    let value = spec.parallelism.clone().unwrap_or(IntOrString::Int(i32::MAX));
    scaled_value(&value, desired, true).map_err(|error| format!("spec.parallelism: {error}"))
}

/// A new pod of the job for `node` (upstream `createPod` with `GetPodFromTemplate`): the
/// template's labels (plus the job's), annotations, finalizers and spec, named after the job
/// by the API server, controlled by the job, and bound to the node through its required node
/// affinity `metadata.name In [node]` for the scheduler (`--assign-bcj-pods-by-scheduler`,
/// upstream's default) or through `nodeName` when `by_scheduler` is off.
pub fn new_pod(job: &BroadcastJob, node: &str, by_scheduler: bool) -> Pod {
    let template = &job.spec.template;
    let template_meta = template.metadata.clone().unwrap_or_default();
    let mut labels = template_meta.labels.unwrap_or_default();
    labels.extend(job_labels(job));
    let mut spec = template.spec.clone().unwrap_or_default();
    if by_scheduler {
        spec.affinity = Some(replace_node_name_affinity(spec.affinity.take(), node));
    } else if !node.is_empty() {
        spec.node_name = Some(node.to_string());
    }
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(format!("{}-", job.metadata.name.as_deref().unwrap_or_default())),
            namespace: job.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: template_meta.annotations,
            finalizers: template_meta.finalizers,
            owner_references: Some(vec![owner_reference(job)]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// A true job condition (upstream `newCondition`, whose reason is the condition type).
pub fn new_condition(type_: JobConditionType, message: String, now: Timestamp) -> JobCondition {
    JobCondition {
        reason: type_.as_str().to_string(),
        type_,
        status: "True".into(),
        last_probe_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
        message,
    }
}

/// An Event about the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobEvent {
    /// `Warning` when true, `Normal` otherwise.
    pub warning: bool,
    /// CamelCase (or upstream's words) reason.
    pub reason: String,
    /// What happened.
    pub message: String,
}

impl JobEvent {
    fn normal(reason: &str, message: impl Into<String>) -> Self {
        Self { warning: false, reason: reason.into(), message: message.into() }
    }

    fn warning(reason: &str, message: impl Into<String>) -> Self {
        Self { warning: true, reason: reason.into(), message: message.into() }
    }
}

/// What a reconcile does besides counting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The job is finished: delete it once its TTL passed, else look again then.
    Finished {
        /// Delete the job now.
        delete: bool,
        /// Look again after this long (the TTL left).
        requeue: Option<Duration>,
    },
    /// Only the status is refreshed (a failed or paused job).
    Hold,
    /// The job fails now; its active pods are deleted ([`Plan::delete`]).
    Fail {
        /// Event reason (`DeadlineExceeded`, or upstream's words for a failed pod).
        reason: String,
        /// The Failed condition's message.
        message: String,
    },
    /// The job goes on: misfit pods deleted, pods created on [`Plan::create`]'s nodes.
    Run {
        /// Every desired node has a finished pod: the job completes.
        complete: bool,
    },
}

/// What one reconcile does, before its writes.
#[derive(Debug)]
pub struct Plan<'a> {
    /// The status to write, with the counts before the writes.
    pub status: BroadcastJobStatus,
    /// What happens to the job.
    pub outcome: Outcome,
    /// Pods to delete (a failing job's active pods, or pods that no longer fit their node).
    pub delete: Vec<&'a Pod>,
    /// Nodes to create a pod on, in order, in slow-start batches.
    pub create: Vec<String>,
    /// Events decided before the writes.
    pub events: Vec<JobEvent>,
    /// Look again after this long (the active deadline), unless something happens first.
    pub requeue: Option<Duration>,
}

/// What a reconcile decides for `job`, its `pods` (those [`is_job_pod`] accepts, terminating
/// ones included) and every node, at `now`.
pub fn plan<'a>(job: &BroadcastJob, pods: &[&'a Pod], nodes: &[&Node], now: Timestamp) -> Plan<'a> {
    let spec = effective_spec(job);
    let mut status = job.status.clone().unwrap_or_default();
    let mut events = Vec::new();
    let hold = |status, events, requeue| Plan {
        status,
        outcome: Outcome::Hold,
        delete: Vec::new(),
        create: Vec::new(),
        events,
        requeue,
    };

    if is_job_finished(&spec, &status) {
        let left = ttl_left(&spec, &status, now);
        let outcome = Outcome::Finished {
            delete: left.is_some_and(|left| left.is_zero()),
            requeue: left.filter(|left| !left.is_zero()),
        };
        return Plan { status, outcome, delete: Vec::new(), create: Vec::new(), events, requeue: None };
    }
    if status.start_time.is_none() {
        status.start_time = Some(Time(now));
    }
    let requeue = if spec.completion_policy.type_ == CompletionPolicyType::Never {
        None
    } else {
        deadline_left(&spec, &status, now).filter(|left| !left.is_zero())
    };
    if status.phase.is_unset() {
        status.phase = BroadcastJobPhase::Running;
    }

    let (existing, duplicates) = node_to_pod_map(pods);
    for (pod, node) in duplicates {
        events.push(JobEvent::warning(
            "DuplicatePodCreatedOnSameNode",
            format!(
                "Duplicated pod {} found on same node {node}",
                pod.metadata.name.as_deref().unwrap_or_default()
            ),
        ));
    }
    let counts = filter_pods(spec.failure_policy.restart_limit, pods);
    let nodes_plan = nodes_to_run_pod(nodes, &spec, &existing);
    let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    let (active, failed, succeeded) =
        (count(counts.active.len()), count(counts.failed.len()), count(counts.succeeded.len()));
    let desired = count(nodes_plan.desired.len());
    status.active = active;
    status.failed = failed;
    status.succeeded = succeeded;
    status.desired = desired;

    if status.phase == BroadcastJobPhase::Failed {
        return hold(status, events, requeue);
    }
    let pause_on_failure = failed > 0 && spec.failure_policy.type_ == FailurePolicyType::Pause;
    if spec.paused && matches!(status.phase, BroadcastJobPhase::Running | BroadcastJobPhase::Paused) {
        status.phase = BroadcastJobPhase::Paused;
        return hold(status, events, requeue);
    }
    if status.phase == BroadcastJobPhase::Paused {
        // Unpaused by the user. Upstream resumes and, while a failed pod remains under the
        // Pause policy, pauses again at once in the same reconcile, announcing both every
        // time; the job stays paused here without the pair of Events.
        if pause_on_failure {
            return hold(status, events, requeue);
        }
        status.phase = BroadcastJobPhase::Running;
        events.push(JobEvent::normal("Continue", "continue to process job"));
    }

    let mut failure = None;
    if failed > 0 {
        match spec.failure_policy.type_ {
            FailurePolicyType::Pause => {
                events.push(JobEvent::warning("Paused", "job is paused, due to failed pod"));
                status.phase = BroadcastJobPhase::Paused;
                return hold(status, events, requeue);
            }
            FailurePolicyType::FailFast => {
                failure = Some((
                    "failed pod is found".to_string(),
                    "failure policy is FailurePolicyTypeFailFast and failed pod is found".to_string(),
                ));
            }
            _ => {}
        }
    }
    if failure.is_none()
        && spec.completion_policy.type_ != CompletionPolicyType::Never
        && past_active_deadline(&spec, &status, now)
    {
        failure = Some((
            "DeadlineExceeded".to_string(),
            format!(
                "Job {}/{} was active longer than specified deadline",
                job.metadata.namespace.as_deref().unwrap_or_default(),
                job.metadata.name.as_deref().unwrap_or_default()
            ),
        ));
    }
    if let Some((reason, message)) = failure {
        return Plan {
            status,
            outcome: Outcome::Fail { reason, message },
            delete: counts.active,
            create: Vec::new(),
            events,
            requeue,
        };
    }

    let mut create = Vec::new();
    if job.metadata.deletion_timestamp.is_none() && !nodes_plan.rest.is_empty() {
        match parallelism_limit(&spec, desired) {
            Ok(limit) if active > limit => events.push(JobEvent::warning(
                "TooManyActivePods",
                "Number of active pods exceed parallelism limit",
            )),
            Ok(limit) => {
                let room = usize::try_from(limit - active).unwrap_or(0);
                create = nodes_plan.rest.iter().take(room).cloned().collect();
            }
            Err(error) => events.push(JobEvent::warning("InvalidParallelism", error)),
        }
    }
    let complete = is_job_complete(&spec, &nodes_plan.desired);
    Plan { status, outcome: Outcome::Run { complete }, delete: nodes_plan.to_delete, create, events, requeue }
}

/// The status, Events and requeue a reconcile ends with, once its writes are made: `deleted`
/// pods were deleted (each counts as failed and no longer active, as upstream counts them) and
/// `created` pods were created (each active). A failing job gets phase `failed`, a completing
/// one phase `completed`, each with its condition and `completionTime`, and a look after its
/// `ttlSecondsAfterFinished` (plus a second) to delete it.
pub fn settle(
    job: &BroadcastJob,
    plan: &Plan<'_>,
    deleted: i32,
    created: i32,
    now: Timestamp,
) -> (BroadcastJobStatus, Vec<JobEvent>, Option<Duration>) {
    let spec = effective_spec(job);
    let mut status = plan.status.clone();
    let mut events = plan.events.clone();
    let mut requeue = plan.requeue;
    if !matches!(plan.outcome, Outcome::Fail { .. } | Outcome::Run { .. }) {
        return (status, events, requeue);
    }
    status.failed = status.failed.saturating_add(deleted);
    status.active = status.active.saturating_sub(deleted).saturating_add(created);
    let (succeeded, failed) = (status.succeeded, status.failed);
    let mut finish = |status: &mut BroadcastJobStatus, type_: JobConditionType, message: String| {
        status.conditions.push(new_condition(type_, message, now));
        status.completion_time = Some(Time(now));
        if let Some(ttl) = spec.completion_policy.ttl_seconds_after_finished {
            requeue = Some(Duration::from_secs(u64::try_from(ttl).unwrap_or(0) + 1));
        }
    };
    match &plan.outcome {
        Outcome::Fail { reason, message } => {
            status.phase = BroadcastJobPhase::Failed;
            finish(&mut status, JobConditionType::Failed, message.clone());
            events.push(JobEvent::warning(
                reason,
                format!("{message}: {succeeded} pods succeeded, {failed} pods failed"),
            ));
        }
        Outcome::Run { complete: true } => {
            status.phase = BroadcastJobPhase::Completed;
            finish(
                &mut status,
                JobConditionType::Complete,
                format!("Job completed, {succeeded} pods succeeded, {failed} pods failed"),
            );
            events.push(JobEvent::normal(
                "JobComplete",
                format!(
                    "Job {}/{} is completed, {succeeded} pods succeeded, {failed} pods failed",
                    job.metadata.namespace.as_deref().unwrap_or_default(),
                    job.metadata.name.as_deref().unwrap_or_default()
                ),
            ));
        }
        _ => {}
    }
    (status, events, requeue)
}

/// The node names a set of pods is on (for expectations, which upstream keys by node since pod
/// names are generated): every pod, or only those not being deleted.
pub fn nodes_of(pods: &[&Pod], live_only: bool) -> BTreeSet<String> {
    pods.iter()
        .filter(|pod| !live_only || pod.metadata.deletion_timestamp.is_none())
        .filter_map(|pod| assigned_node(pod))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::{Value, json};

    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + second).unwrap()
    }

    /// Upstream `createJob`: a job in `default` with UID 12345 and the given parallelism.
    fn job(name: &str, parallelism: Value, extra: Value) -> BroadcastJob {
        let mut value = json!({
            "apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": name, "namespace": "default", "uid": "12345"},
            "spec": {"parallelism": parallelism, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "box", "image": "busybox"}],
            }}},
        });
        merge(&mut value, extra);
        serde_json::from_value(value).unwrap()
    }

    fn merge(target: &mut Value, patch: Value) {
        match (target, patch) {
            (Value::Object(target), Value::Object(patch)) => {
                for (key, value) in patch {
                    merge(target.entry(key).or_insert(Value::Null), value);
                }
            }
            (target, patch) => *target = patch,
        }
    }

    /// Upstream `createNode`: room for 10 pods.
    fn node(name: &str) -> Node {
        serde_json::from_value(json!({"metadata": {"name": name}, "status": {"allocatable": {"pods": "10"}}}))
            .unwrap()
    }

    fn node_with(name: &str, extra: Value) -> Node {
        let mut value = serde_json::to_value(node(name)).unwrap();
        merge(&mut value, extra);
        serde_json::from_value(value).unwrap()
    }

    /// Upstream `createPod`: a pod of the job on `node` in `phase`.
    fn pod(job: &BroadcastJob, name: &str, node: &str, phase: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "labels": job_labels(job),
                "ownerReferences": [owner_reference(job)]},
            "spec": {"nodeName": node, "containers": [{"name": "box", "image": "busybox"}]},
            "status": {"phase": phase},
        }))
        .unwrap()
    }

    fn nodes(names: &[&str]) -> Vec<Node> {
        names.iter().map(|n| node(n)).collect()
    }

    /// A reconcile whose writes all succeed: the plan, then its settled status and events.
    fn reconcile(
        job: &BroadcastJob,
        pods: &[Pod],
        nodes: &[Node],
        now: Timestamp,
    ) -> (Outcome, Vec<String>, Vec<String>, BroadcastJobStatus, Vec<JobEvent>) {
        let pods: Vec<&Pod> = pods.iter().collect();
        let nodes: Vec<&Node> = nodes.iter().collect();
        let plan = plan(job, &pods, &nodes, now);
        let deleted: Vec<String> = plan.delete.iter().map(|p| p.metadata.name.clone().unwrap()).collect();
        let (status, events, _) = settle(job, &plan, deleted.len() as i32, plan.create.len() as i32, now);
        (plan.outcome.clone(), plan.create.clone(), deleted, status, events)
    }

    #[test]
    fn test_get_node_to_pod_map() {
        let by_affinity = |name: &str, node: &str| -> Pod {
            serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"containers": [],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}}}))
            .unwrap()
        };
        let by_name = |name: &str, node: &str| -> Pod {
            serde_json::from_value(
                json!({"metadata": {"name": name}, "spec": {"containers": [], "nodeName": node}}),
            )
            .unwrap()
        };
        let pods = [
            by_name("p01", "n01"),
            by_affinity("p02", "n02"),
            by_name("p03", "n03"),
            by_affinity("p04", "n04"),
        ];
        let refs: Vec<&Pod> = pods.iter().collect();
        let (map, duplicates) = node_to_pod_map(&refs);
        let got: Vec<(String, String)> =
            map.iter().map(|(node, pod)| (node.clone(), pod.metadata.name.clone().unwrap())).collect();
        let expected = [("n01", "p01"), ("n02", "p02"), ("n03", "p03"), ("n04", "p04")]
            .map(|(n, p)| (n.to_string(), p.to_string()));
        assert_eq!(got, expected);
        assert!(duplicates.is_empty());

        let twice = [by_name("a", "n01"), by_affinity("b", "n01")];
        let refs: Vec<&Pod> = twice.iter().collect();
        let (map, duplicates) = node_to_pod_map(&refs);
        assert_eq!(map.len(), 1);
        assert_eq!(duplicates.len(), 1, "a second pod on a node is reported");
    }

    /// The upstream controller tests (`broadcastjob_controller_test.go`), one case each: the
    /// objects, then the status after one reconcile whose writes succeed.
    #[test]
    fn upstream_reconcile_cases() {
        struct Case {
            name: &'static str,
            job: BroadcastJob,
            pods: Vec<Pod>,
            nodes: Vec<Node>,
            // (desired, active, succeeded, failed, phase)
            counts: (i32, i32, i32, i32, BroadcastJobPhase),
            created: usize,
            deleted: usize,
            last_condition: Option<JobConditionType>,
        }
        let job1 = job("job1", json!(2), json!({}));
        let job2 = job("job2", json!("40%"), json!({}));
        let job3 = job("job3", json!(2), json!({}));
        let job4 = job("job4", json!(20), json!({}));
        let job5 = job("job5", json!(10), json!({"spec": {"failurePolicy": {"type": "FailFast"}}}));
        let job6 = job("job6", json!(10), json!({"spec": {"failurePolicy": {"type": "Continue"}}}));
        let job7 = job("job7", json!(10), json!({"spec": {"failurePolicy": {"type": "FailFast"}}}));
        let job8 = job("job8", json!(10), json!({"spec": {"failurePolicy": {"type": "Pause"}}}));
        let job9 = job("job9", json!("50%"), json!({"spec": {"paused": true}}));
        let job10 = job(
            "job10",
            json!(10),
            json!({"spec": {"completionPolicy": {"activeDeadlineSeconds": 0}, "failurePolicy": {"type": "Continue"}},
                "status": {"startTime": Time(at(0))}}),
        );
        let ten_nodes: Vec<Node> = (0..10).map(|i| node(&format!("node-{i}"))).collect();
        let cases = vec![
            Case {
                name: "TestReconcileJobCreatePodAbsolute",
                pods: vec![pod(&job1, "job1pod1node1", "node1", "Running")],
                job: job1,
                nodes: nodes(&["node1", "node2", "node3"]),
                counts: (3, 2, 0, 0, BroadcastJobPhase::Running),
                created: 1,
                deleted: 0,
                last_condition: None,
            },
            Case {
                name: "TestReconcileJobCreatePodPercentage",
                pods: vec![pod(&job2, "jobpod1node1", "node1", "Running")],
                job: job2,
                nodes: nodes(&["node1", "node2", "node3", "node4", "node5"]),
                counts: (5, 2, 0, 0, BroadcastJobPhase::Running),
                created: 1,
                deleted: 0,
                last_condition: None,
            },
            Case {
                name: "TestPodsOnUnschedulableNodes",
                job: job3,
                pods: vec![],
                nodes: vec![node_with("node1", json!({"spec": {"unschedulable": true}})), node("node2")],
                counts: (1, 1, 0, 0, BroadcastJobPhase::Running),
                created: 1,
                deleted: 0,
                last_condition: None,
            },
            Case {
                name: "TestReconcileJobMultipleBatches",
                job: job4,
                pods: vec![],
                nodes: ten_nodes.clone(),
                counts: (10, 10, 0, 0, BroadcastJobPhase::Running),
                created: 10,
                deleted: 0,
                last_condition: None,
            },
            Case {
                name: "TestJobFailed",
                pods: vec![
                    pod(&job5, "pod1node1", "node1", "Succeeded"),
                    pod(&job5, "pod2node2", "node2", "Succeeded"),
                    pod(&job5, "pod3node3", "node3", "Failed"),
                ],
                job: job5,
                nodes: nodes(&["node1", "node2", "node3"]),
                counts: (3, 0, 2, 1, BroadcastJobPhase::Failed),
                created: 0,
                deleted: 0,
                last_condition: Some(JobConditionType::Failed),
            },
            Case {
                name: "TestJobFailurePolicyTypeContinue",
                pods: vec![
                    pod(&job6, "pod1node1", "node1", "Succeeded"),
                    pod(&job6, "pod3node3", "node3", "Failed"),
                ],
                job: job6,
                nodes: nodes(&["node1", "node2", "node3"]),
                counts: (3, 1, 1, 1, BroadcastJobPhase::Running),
                created: 1,
                deleted: 0,
                last_condition: None,
            },
            Case {
                name: "TestJobFailurePolicyTypeFailFast",
                pods: vec![
                    pod(&job7, "pod1node1", "node1", "Succeeded"),
                    pod(&job7, "pod3node3", "node3", "Failed"),
                ],
                job: job7,
                nodes: nodes(&["node1", "node2", "node3"]),
                counts: (3, 0, 1, 1, BroadcastJobPhase::Failed),
                created: 0,
                deleted: 0,
                last_condition: Some(JobConditionType::Failed),
            },
            Case {
                name: "TestJobFailurePolicyPause",
                pods: vec![
                    pod(&job8, "pod1node1", "node1", "Succeeded"),
                    pod(&job8, "pod2node2", "node2", "Failed"),
                ],
                job: job8,
                nodes: nodes(&["node1", "node2", "node3"]),
                counts: (3, 0, 1, 1, BroadcastJobPhase::Paused),
                created: 0,
                deleted: 0,
                last_condition: None,
            },
            Case {
                name: "TestJobSetPaused",
                // Upstream's pods sit on node0..node2, which are not among node-0..node-9.
                pods: (0..3)
                    .map(|i| pod(&job9, &format!("pod{i}node{i}"), &format!("node{i}"), "Running"))
                    .collect(),
                job: job9,
                nodes: ten_nodes,
                counts: (10, 3, 0, 0, BroadcastJobPhase::Paused),
                created: 0,
                deleted: 0,
                last_condition: None,
            },
            Case {
                name: "TestJobFailedAfterActiveDeadline",
                pods: vec![
                    pod(&job10, "job1pod1node1", "node1", "Running"),
                    pod(&job10, "job1pod2node2", "node2", "Running"),
                ],
                job: job10,
                nodes: nodes(&["node1", "node2"]),
                // The two active pods are deleted and counted as failed.
                counts: (2, 0, 0, 2, BroadcastJobPhase::Failed),
                created: 0,
                deleted: 2,
                last_condition: Some(JobConditionType::Failed),
            },
        ];
        for case in cases {
            let now = at(5);
            let (_, created, deleted, status, _) = reconcile(&case.job, &case.pods, &case.nodes, now);
            let (desired, active, succeeded, failed, phase) = case.counts;
            assert_eq!(
                (status.desired, status.active, status.succeeded, status.failed, status.phase.clone()),
                (desired, active, succeeded, failed, phase),
                "{}: desired, active, succeeded, failed, phase",
                case.name
            );
            assert_eq!(created.len(), case.created, "{}: pods created", case.name);
            assert_eq!(deleted.len(), case.deleted, "{}: pods deleted", case.name);
            assert!(status.start_time.is_some(), "{}: startTime is set", case.name);
            assert_eq!(
                status.conditions.last().map(|c| c.type_.clone()),
                case.last_condition,
                "{}",
                case.name
            );
            assert_eq!(
                status.completion_time.is_some(),
                case.last_condition.is_some(),
                "{}: completionTime",
                case.name
            );
        }
    }

    #[test]
    fn new_pods_carry_the_job_labels_owner_and_node_affinity() {
        let job = job(
            "job1",
            json!(2),
            json!({"spec": {"template": {"metadata": {"labels": {"app": "x"}, "annotations": {"a": "b"}},
                "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}}}}}}),
        );
        let pod = new_pod(&job, "node2", true);
        let labels = pod.metadata.labels.clone().unwrap();
        assert_eq!(labels.get(JOB_NAME_LABEL).map(String::as_str), Some("job1"));
        assert_eq!(labels.get(CONTROLLER_UID_LABEL).map(String::as_str), Some("12345"));
        assert_eq!(labels.get("app").map(String::as_str), Some("x"));
        assert_eq!(pod.metadata.annotations.clone().unwrap().get("a").map(String::as_str), Some("b"));
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("job1-"));
        assert_eq!(pod.metadata.namespace.as_deref(), Some("default"));
        let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.uid.as_str()), (KIND, "12345"));
        assert_eq!((owner.controller, owner.block_owner_deletion), (Some(true), Some(true)));
        assert_eq!(assigned_node(&pod).as_deref(), Some("node2"));
        assert!(pod.spec.as_ref().unwrap().node_name.is_none(), "the scheduler binds it");
        // The template's own required affinity is replaced by the node's name.
        let terms = serde_json::to_value(&pod.spec.as_ref().unwrap().affinity).unwrap();
        assert_eq!(
            terms.pointer("/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms"),
            Some(
                &json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node2"]}]}])
            )
        );
        assert!(is_job_pod(&job, &pod));

        let direct = new_pod(&job, "node3", false);
        assert_eq!(direct.spec.unwrap().node_name.as_deref(), Some("node3"));
    }

    #[test]
    fn node_fitness_follows_the_scheduler_predicates() {
        let spec = |extra: Value| -> PodSpec {
            let mut value = json!({"containers": [{"name": "c", "image": "busybox"}]});
            merge(&mut value, extra);
            serde_json::from_value(value).unwrap()
        };
        let taint = |effect: &str| json!({"spec": {"taints": [{"key": "dedicated", "value": "infra", "effect": effect}]}});
        let toleration = json!({"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}]});
        let cases: Vec<(&str, PodSpec, Node, bool)> = vec![
            ("plain node", spec(json!({})), node("n1"), true),
            ("another node's name", spec(json!({"nodeName": "n2"})), node("n1"), false),
            ("own node's name", spec(json!({"nodeName": "n1"})), node("n1"), true),
            ("node selector unmatched", spec(json!({"nodeSelector": {"disk": "ssd"}})), node("n1"), false),
            (
                "node selector matched",
                spec(json!({"nodeSelector": {"disk": "ssd"}})),
                node_with("n1", json!({"metadata": {"labels": {"disk": "ssd"}}})),
                true,
            ),
            ("NoSchedule taint untolerated", spec(json!({})), node_with("n1", taint("NoSchedule")), false),
            ("NoExecute taint untolerated", spec(json!({})), node_with("n1", taint("NoExecute")), false),
            (
                "PreferNoSchedule taint ignored",
                spec(json!({})),
                node_with("n1", taint("PreferNoSchedule")),
                true,
            ),
            (
                "NoSchedule taint tolerated",
                spec(toleration.clone()),
                node_with("n1", taint("NoSchedule")),
                true,
            ),
            (
                "NoExecute taint, other effect tolerated",
                spec(toleration),
                node_with("n1", taint("NoExecute")),
                false,
            ),
            ("cordoned", spec(json!({})), node_with("n1", json!({"spec": {"unschedulable": true}})), false),
            (
                "cordoned, unschedulable tolerated",
                spec(
                    json!({"tolerations": [{"key": TAINT_UNSCHEDULABLE, "operator": "Exists", "effect": "NoSchedule"}]}),
                ),
                node_with("n1", json!({"spec": {"unschedulable": true}})),
                true,
            ),
            (
                "no allocatable pods",
                spec(json!({})),
                serde_json::from_value(json!({"metadata": {"name": "n1"}})).unwrap(),
                false,
            ),
            (
                "cpu request above allocatable",
                spec(json!({"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]})),
                node_with("n1", json!({"status": {"allocatable": {"cpu": "1"}}})),
                false,
            ),
            (
                "cpu and memory requests within allocatable",
                spec(
                    json!({"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}),
                ),
                node_with("n1", json!({"status": {"allocatable": {"cpu": "1", "memory": "2Gi"}}})),
                true,
            ),
            (
                "extended resource missing",
                spec(
                    json!({"containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}]}),
                ),
                node("n1"),
                false,
            ),
            (
                "init container larger than the containers",
                spec(
                    json!({"initContainers": [{"name": "i", "resources": {"requests": {"memory": "4Gi"}}}]}),
                ),
                node_with("n1", json!({"status": {"allocatable": {"memory": "2Gi"}}})),
                false,
            ),
        ];
        for (name, spec, node, fits) in cases {
            assert_eq!(
                check_node_fitness(&spec, &node).is_ok(),
                fits,
                "{name}: {:?}",
                check_node_fitness(&spec, &node)
            );
        }
    }

    #[test]
    fn restart_limit_counts_every_container_restart_of_on_failure_pods() {
        let pod = |policy: &str, restarts: (i32, i32)| -> Pod {
            serde_json::from_value(json!({
                "spec": {"restartPolicy": policy, "containers": []},
                "status": {"phase": "Running",
                    "initContainerStatuses": [{"name": "i", "image": "", "imageID": "", "ready": true, "restartCount": restarts.0}],
                    "containerStatuses": [{"name": "c", "image": "", "imageID": "", "ready": true, "restartCount": restarts.1}]},
            }))
            .unwrap()
        };
        let cases = [
            ("OnFailure under the limit", pod("OnFailure", (1, 1)), 2, false),
            ("OnFailure over the limit", pod("OnFailure", (1, 2)), 2, true),
            ("OnFailure, no limit", pod("OnFailure", (0, 1)), 0, true),
            ("Never pods fail by phase only", pod("Never", (5, 5)), 0, false),
        ];
        for (name, pod, limit, failed) in cases {
            assert_eq!(is_pod_failed(limit, &pod), failed, "{name}");
        }
    }

    #[test]
    fn filter_pods_ignores_unfinished_pods_being_deleted() {
        let job = job("j", json!(1), json!({}));
        let mut deleting = pod(&job, "deleting", "n4", "Running");
        deleting.metadata.deletion_timestamp = Some(Time(at(0)));
        let mut finished_deleting = pod(&job, "done-deleting", "n5", "Succeeded");
        finished_deleting.metadata.deletion_timestamp = Some(Time(at(0)));
        let pods = [
            pod(&job, "a", "n1", "Running"),
            pod(&job, "b", "n2", "Pending"),
            pod(&job, "c", "n3", "Failed"),
            deleting,
            finished_deleting,
        ];
        let refs: Vec<&Pod> = pods.iter().collect();
        let counts = filter_pods(0, &refs);
        assert_eq!((counts.active.len(), counts.failed.len(), counts.succeeded.len()), (2, 1, 1));
    }

    #[test]
    fn a_job_completes_once_every_desired_node_has_a_finished_pod() {
        let job =
            job("done", json!(2), json!({"spec": {"completionPolicy": {"ttlSecondsAfterFinished": 30}}}));
        let pods = [pod(&job, "a", "n1", "Succeeded"), pod(&job, "b", "n2", "Failed")];
        let with_continue = {
            let mut job = job.clone();
            job.spec.failure_policy.type_ = FailurePolicyType::Continue;
            job
        };
        let refs: Vec<&Pod> = pods.iter().collect();
        let all = nodes(&["n1", "n2"]);
        let node_refs: Vec<&Node> = all.iter().collect();
        let done = plan(&with_continue, &refs, &node_refs, at(10));
        assert_eq!(done.outcome, Outcome::Run { complete: true });
        let (status, events, requeue) = settle(&with_continue, &done, 0, 0, at(10));
        assert_eq!(status.phase, BroadcastJobPhase::Completed);
        let condition = status.conditions.last().unwrap();
        assert_eq!(
            (condition.type_.clone(), condition.reason.as_str(), condition.message.as_str()),
            (JobConditionType::Complete, "Complete", "Job completed, 1 pods succeeded, 1 pods failed")
        );
        assert_eq!(status.completion_time, Some(Time(at(10))));
        assert_eq!(requeue, Some(Duration::from_secs(31)), "looks again after the TTL");
        assert_eq!(
            events,
            [JobEvent::normal(
                "JobComplete",
                "Job default/done is completed, 1 pods succeeded, 1 pods failed"
            )]
        );

        // A third node without a pod keeps it running, with a pod created there.
        let more = nodes(&["n1", "n2", "n3"]);
        let more_refs: Vec<&Node> = more.iter().collect();
        let wider = plan(&with_continue, &refs, &more_refs, at(10));
        assert_eq!(wider.outcome, Outcome::Run { complete: false });
        assert_eq!(wider.create, ["n3"]);
    }

    #[test]
    fn completion_policy_never_keeps_the_job_running_and_picks_up_new_nodes() {
        let job = job("keep", json!(10), json!({"spec": {"completionPolicy": {"type": "Never"}}}));
        let pods = [pod(&job, "a", "n1", "Succeeded"), pod(&job, "b", "n2", "Succeeded")];
        let (outcome, created, _, status, events) = reconcile(&job, &pods, &nodes(&["n1", "n2"]), at(1));
        assert_eq!(outcome, Outcome::Run { complete: false });
        assert!(created.is_empty());
        assert_eq!((status.phase, status.succeeded), (BroadcastJobPhase::Running, 2));
        assert!(events.is_empty());
        let (_, created, _, status, _) = reconcile(&job, &pods, &nodes(&["n1", "n2", "n3"]), at(2));
        assert_eq!(created, ["n3"]);
        assert_eq!((status.desired, status.active), (3, 1));
    }

    #[test]
    fn finished_jobs_wait_for_their_ttl_then_are_deleted() {
        let finished = |ttl: Value| {
            job(
                "old",
                json!(1),
                json!({"spec": {"completionPolicy": {"ttlSecondsAfterFinished": ttl}},
                    "status": {"phase": "completed", "completionTime": Time(at(0)),
                        "conditions": [{"type": "Complete", "status": "True"}]}}),
            )
        };
        let cases = [
            (
                "before the TTL",
                finished(json!(30)),
                10,
                Outcome::Finished { delete: false, requeue: Some(Duration::from_secs(20)) },
            ),
            ("at the TTL", finished(json!(30)), 30, Outcome::Finished { delete: true, requeue: None }),
            ("no TTL", finished(Value::Null), 1000, Outcome::Finished { delete: false, requeue: None }),
        ];
        for (name, job, second, expected) in cases {
            let plan = plan(&job, &[], &[], at(second));
            assert_eq!(plan.outcome, expected, "{name}");
            assert!(plan.create.is_empty() && plan.delete.is_empty(), "{name}");
        }
    }

    #[test]
    fn pause_resume_and_the_pause_failure_policy() {
        // Unpaused by the user: back to running, announced.
        let resumed = job("p", json!(10), json!({"status": {"phase": "paused", "startTime": Time(at(0))}}));
        let (_, created, _, status, events) = reconcile(&resumed, &[], &nodes(&["n1"]), at(1));
        assert_eq!(status.phase, BroadcastJobPhase::Running);
        assert_eq!(created, ["n1"]);
        assert_eq!(events, [JobEvent::normal("Continue", "continue to process job")]);

        // Paused by a failed pod under Pause: stays paused while the failed pod remains.
        let failing = job(
            "p",
            json!(10),
            json!({"spec": {"failurePolicy": {"type": "Pause"}}, "status": {"phase": "paused", "startTime": Time(at(0))}}),
        );
        let pods = [pod(&failing, "f", "n1", "Failed")];
        let (outcome, created, _, status, events) = reconcile(&failing, &pods, &nodes(&["n1", "n2"]), at(1));
        assert_eq!((outcome, status.phase), (Outcome::Hold, BroadcastJobPhase::Paused));
        assert!(created.is_empty() && events.is_empty());

        // Running into a failed pod under Pause: paused, announced once.
        let running = job(
            "p",
            json!(10),
            json!({"spec": {"failurePolicy": {"type": "Pause"}}, "status": {"phase": "running"}}),
        );
        let (_, _, _, status, events) = reconcile(&running, &pods, &nodes(&["n1", "n2"]), at(1));
        assert_eq!(status.phase, BroadcastJobPhase::Paused);
        assert_eq!(events, [JobEvent::warning("Paused", "job is paused, due to failed pod")]);
    }

    #[test]
    fn fail_fast_deletes_active_pods_and_reports_the_counts() {
        let job = job("ff", json!(10), json!({}));
        let pods = [
            pod(&job, "ok", "n1", "Succeeded"),
            pod(&job, "bad", "n2", "Failed"),
            pod(&job, "run", "n3", "Running"),
        ];
        let (outcome, created, deleted, status, events) =
            reconcile(&job, &pods, &nodes(&["n1", "n2", "n3", "n4"]), at(1));
        assert!(matches!(outcome, Outcome::Fail { ref reason, .. } if reason == "failed pod is found"));
        assert!(created.is_empty(), "no pod is created once a pod failed");
        assert_eq!(deleted, ["run"]);
        assert_eq!((status.active, status.failed, status.succeeded), (0, 2, 1));
        let condition = status.conditions.last().unwrap();
        assert_eq!(
            (condition.type_.clone(), condition.reason.as_str()),
            (JobConditionType::Failed, "Failed")
        );
        assert_eq!(
            events,
            [JobEvent::warning(
                "failed pod is found",
                "failure policy is FailurePolicyTypeFailFast and failed pod is found: 1 pods succeeded, 2 pods failed"
            )]
        );
        // A failed job only refreshes its counts afterwards (completion policy Never keeps it
        // reconciled).
        let mut failed = job.clone();
        failed.spec.completion_policy.type_ = CompletionPolicyType::Never;
        failed.status = Some(status);
        let (outcome, created, deleted, status, events) =
            reconcile(&failed, &pods[..2], &nodes(&["n1", "n2", "n3", "n4"]), at(2));
        assert_eq!(outcome, Outcome::Hold);
        assert!(created.is_empty() && deleted.is_empty() && events.is_empty());
        assert_eq!((status.phase, status.failed, status.conditions.len()), (BroadcastJobPhase::Failed, 1, 1));
    }

    #[test]
    fn the_active_deadline_fails_the_job_with_deadline_exceeded() {
        let job = job(
            "dl",
            json!(10),
            json!({"spec": {"completionPolicy": {"activeDeadlineSeconds": 60}}, "status": {"startTime": Time(at(0)), "phase": "running"}}),
        );
        let pods = [pod(&job, "run", "n1", "Running")];
        let all = nodes(&["n1"]);
        let node_refs: Vec<&Node> = all.iter().collect();
        let refs: Vec<&Pod> = pods.iter().collect();
        let early = plan(&job, &refs, &node_refs, at(20));
        assert_eq!(early.outcome, Outcome::Run { complete: false });
        assert_eq!(early.requeue, Some(Duration::from_secs(40)), "looks again at the deadline");
        let late = plan(&job, &refs, &node_refs, at(60));
        let Outcome::Fail { reason, message } = &late.outcome else { panic!("fails: {:?}", late.outcome) };
        assert_eq!(reason, "DeadlineExceeded");
        assert_eq!(message, "Job default/dl was active longer than specified deadline");
        assert_eq!(late.delete.len(), 1);
    }

    #[test]
    fn parallelism_caps_active_pods_and_reports_excess() {
        let capped = job("par", json!(1), json!({}));
        let pods = [pod(&capped, "a", "n1", "Running"), pod(&capped, "b", "n2", "Running")];
        let (_, created, _, _, events) = reconcile(&capped, &pods, &nodes(&["n1", "n2", "n3"]), at(1));
        assert!(created.is_empty());
        assert_eq!(
            events,
            [JobEvent::warning("TooManyActivePods", "Number of active pods exceed parallelism limit")]
        );
        let cases =
            [(json!(2), 5, 2), (json!("40%"), 5, 2), (json!("50%"), 3, 2), (Value::Null, 7, i32::MAX)];
        for (value, desired, expected) in cases {
            let scaled = job("par", value.clone(), json!({}));
            assert_eq!(parallelism_limit(&effective_spec(&scaled), desired), Ok(expected), "{value}");
        }
    }

    #[test]
    fn pods_on_nodes_they_no_longer_fit_are_deleted() {
        let job = job("fit", json!(10), json!({"spec": {"failurePolicy": {"type": "Continue"}}}));
        let pods = [pod(&job, "a", "n1", "Running"), pod(&job, "b", "n2", "Succeeded")];
        let tainted = node_with("n1", json!({"spec": {"taints": [{"key": "k", "effect": "NoExecute"}]}}));
        let (_, created, deleted, status, _) = reconcile(&job, &pods, &[tainted, node("n2")], at(1));
        assert_eq!(deleted, ["a"]);
        assert!(created.is_empty());
        // Upstream counts a deleted pod as failed.
        assert_eq!((status.desired, status.active, status.failed, status.succeeded), (1, 0, 1, 1));
    }

    #[test]
    fn unset_policies_get_the_webhook_defaults() {
        let mut job = job("d", Value::Null, json!({}));
        job.spec.parallelism = None;
        let spec = effective_spec(&job);
        assert_eq!(spec.completion_policy.type_, CompletionPolicyType::Always);
        assert_eq!(spec.failure_policy.type_, FailurePolicyType::FailFast);
        assert_eq!(spec.parallelism, Some(IntOrString::Int(i32::MAX)));
    }
}
