//! UnitedDeployment decisions, free of I/O (upstream `uniteddeployment_controller.go`,
//! `uniteddeployment_update.go`, `uniteddeployment_controller_utils.go`, `revision.go` and
//! `adapter_util.go`, the parts that decide):
//!
//! - the subset workloads as the controller sees them ([`SubsetView`]) and which one is kept
//!   when a subset has several ([`classify_subsets`]);
//! - the Adaptive strategy's view of each subset ([`default_adaptive_status`],
//!   [`reserved_adaptive_status`], [`check_pod_really_in_reserved_status`]): pods unschedulable
//!   for `rescheduleCriticalSeconds` make a subset unschedulable for `unschedulableDuration`;
//! - partitions and what each subset workload needs ([`next_partitions`], [`update_reason`],
//!   [`provision_plan`]);
//! - the status ([`calculate_status`], [`set_updated_condition`], the condition helpers);
//! - the revision of the template ([`revision_data`], [`revision_name`]).

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Pod},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{
    UNITED_DEPLOYMENT_DEFAULT_RESCHEDULE_CRITICAL_SECONDS,
    UNITED_DEPLOYMENT_DEFAULT_UNSCHEDULABLE_DURATION_SECONDS, UnitedDeployment, UnitedDeploymentCondition,
    UnitedDeploymentConditionType, UnitedDeploymentSpec, UnitedDeploymentStatus,
    UnitedDeploymentSubsetCondition, UnitedDeploymentSubsetConditionType, UnitedDeploymentSubsetStatus,
    UnitedDeploymentUpdateStrategyType,
};
use kube::{Resource, ResourceExt};
use serde_json::{Value, json};

use super::allocator::{Allocation, reserves_unschedulable_pods};
use crate::workload::revision::{REVISION_HASH_LABEL, data_bytes, revision_hash};

/// Label on every subset workload and its pods: the subset's name (upstream
/// `SubSetNameLabelKey`).
pub const SUBSET_NAME_LABEL: &str = "apps.kruise.io/subset-name";
/// Label on every subset workload and its pods: the UnitedDeployment revision they were made
/// from (upstream `ControllerRevisionHashLabelKey`).
pub const REVISION_LABEL: &str = "apps.kruise.io/controller-revision-hash";
/// Annotation on every subset workload: the subset's patch as written in the spec (upstream
/// `AnnotationSubsetPatchKey`).
pub const SUBSET_PATCH_ANNOTATION: &str = "apps.kruise.io/subset-patch";
/// Label on the pods of the Adaptive strategy with reserved pods: `true` on a pod held in an
/// unschedulable subset while a substitute runs elsewhere (upstream `ReservedPodLabelKey`).
pub const RESERVED_POD_LABEL: &str = "apps.kruise.io/united-deployment-reserved-pod";
/// The API version the UnitedDeployment owner references name (the storage version).
pub const OWNER_API_VERSION: &str = "apps.kruise.io/v1beta1";

/// A subset's scheduling trouble, as the Adaptive strategy sees it (upstream
/// `SubsetUnschedulableStatus`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unschedulable {
    /// New pods would not be scheduled there now.
    pub unschedulable: bool,
    /// The status said so before this reconcile (reserved-pods strategy).
    pub marked_as_unschedulable: bool,
    /// Pods held there as reserved.
    pub reserved_pods: i32,
    /// Pods unschedulable for longer than `rescheduleCriticalSeconds`.
    pub pending_pods: i32,
    /// Pods at an old revision whose update has lasted longer than `rescheduleCriticalSeconds`.
    pub update_timeout_pods: i32,
}

/// What the controller reads off a subset workload's status and pods (upstream `SubsetStatus`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubsetState {
    /// The workload's `status.replicas`.
    pub replicas: i32,
    /// The workload's `status.readyReplicas`.
    pub ready_replicas: i32,
    /// Its active pods at the UnitedDeployment's update revision.
    pub updated_replicas: i32,
    /// Of those, the ready ones.
    pub updated_ready_replicas: i32,
    /// The UnitedDeployment revision expected.
    pub updated_revision: String,
    /// The Adaptive strategy's view.
    pub unschedulable: Unschedulable,
}

/// One subset workload (upstream `Subset`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubsetView {
    /// The workload's metadata.
    pub meta: ObjectMeta,
    /// The subset it runs (its `apps.kruise.io/subset-name` label).
    pub subset_name: String,
    /// `spec.replicas`.
    pub spec_replicas: i32,
    /// Its partition, as upstream's adapter reads it.
    pub spec_partition: i32,
    /// Its pods.
    pub pods: Vec<Pod>,
    /// What its status and pods say.
    pub status: SubsetState,
}

impl SubsetView {
    /// Whether new replicas may be placed there (upstream `Subset.Allocatable`).
    pub fn allocatable(&self) -> bool {
        !self.status.unschedulable.unschedulable && !self.status.unschedulable.marked_as_unschedulable
    }

    /// The workload's name.
    pub fn name(&self) -> &str {
        self.meta.name.as_deref().unwrap_or_default()
    }

    /// The revision label of the workload.
    pub fn revision(&self) -> &str {
        self.meta.labels.as_ref().and_then(|l| l.get(REVISION_LABEL)).map_or("", String::as_str)
    }

    /// The subset patch annotation of the workload.
    pub fn patch_annotation(&self) -> &str {
        self.meta.annotations.as_ref().and_then(|a| a.get(SUBSET_PATCH_ANNOTATION)).map_or("", String::as_str)
    }
}

/// The subset name a workload's label gives, if any (upstream `getSubsetNameFrom`).
pub fn subset_name_of(meta: &ObjectMeta) -> Option<&str> {
    meta.labels.as_ref()?.get(SUBSET_NAME_LABEL).map(String::as_str).filter(|name| !name.is_empty())
}

/// Groups subset workloads by subset; the first of a subset is kept and the others are
/// returned to be deleted (upstream `classifySubsetBySubsetName` and `deleteDupSubset`, which
/// keep the first listed; here the oldest, then by name, so the choice is stable).
pub fn classify_subsets(mut subsets: Vec<SubsetView>) -> (BTreeMap<String, SubsetView>, Vec<SubsetView>) {
    subsets.sort_by(|a, b| {
        a.meta.creation_timestamp.cmp(&b.meta.creation_timestamp).then_with(|| a.meta.name.cmp(&b.meta.name))
    });
    let mut kept = BTreeMap::new();
    let mut duplicates = Vec::new();
    for subset in subsets {
        if kept.contains_key(&subset.subset_name) {
            duplicates.push(subset);
        } else {
            kept.insert(subset.subset_name.clone(), subset);
        }
    }
    (kept, duplicates)
}

/// The label of a pod.
fn pod_label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

/// Whether a pod is active (not finished, not being deleted; `controller.IsPodActive`).
pub fn is_pod_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    !matches!(phase, Some("Succeeded" | "Failed")) && pod.metadata.deletion_timestamp.is_none()
}

/// The pod's condition of `type_`.
fn pod_condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a k8s_openapi::api::core::v1::PodCondition> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

/// Whether the pod's Ready condition is true.
pub fn is_pod_ready(pod: &Pod) -> bool {
    pod_condition(pod, "Ready").is_some_and(|c| c.status == "True")
}

/// Active pods at `revision`, and the ready ones among them (upstream
/// `CalculateUpdatedReplicas`).
pub fn updated_replicas(pods: &[Pod], revision: &str) -> (i32, i32) {
    let mut updated = 0;
    let mut ready = 0;
    for pod in pods {
        if pod_label(pod, REVISION_LABEL).unwrap_or_default() == revision && is_pod_active(pod) {
            updated += 1;
            if is_pod_ready(pod) {
                ready += 1;
            }
        }
    }
    (updated, ready)
}

/// Pods not at `revision` (upstream `getCurrentPartition`, the partition of an OnDelete
/// StatefulSet).
pub fn current_partition(pods: &[Pod], revision: &str) -> i32 {
    let count =
        pods.iter().filter(|pod| pod_label(pod, REVISION_LABEL).unwrap_or_default() != revision).count();
    i32::try_from(count).unwrap_or(i32::MAX)
}

fn millis(time: &Time) -> i64 {
    time.0.as_millisecond()
}

fn after(ms: i64) -> Option<Duration> {
    u64::try_from(ms).ok().filter(|ms| *ms > 0).map(Duration::from_millis)
}

/// Whether a pod has failed scheduling for longer than `timeout` (upstream
/// `GetTimeBeforePendingTimeout`); otherwise, if it failed scheduling, how long until it will
/// have.
pub fn pending_timeout(pod: &Pod, timeout: Duration, now: Timestamp) -> (bool, Option<Duration>) {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    let node = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or_default();
    if pod.metadata.deletion_timestamp.is_some() || phase != Some("Pending") || !node.is_empty() {
        return (false, None);
    }
    let failed = pod_condition(pod, "PodScheduled")
        .is_some_and(|c| c.status == "False" && c.reason.as_deref() == Some("Unschedulable"));
    if !failed {
        return (false, None);
    }
    let created = pod.metadata.creation_timestamp.as_ref().map_or(0, millis);
    let expect = created + duration_ms(timeout);
    if expect < now.as_millisecond() { (true, None) } else { (false, after(expect - now.as_millisecond())) }
}

fn duration_ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Whether an update that started at `updated_since` has lasted longer than `timeout` (upstream
/// `GetTimeBeforeUpdateTimeout`); otherwise how long until it will have.
fn update_timeout(
    pod: &Pod,
    updated_since: Option<&Time>,
    timeout: Duration,
    now: Timestamp,
) -> (bool, Option<Duration>) {
    if pod.metadata.deletion_timestamp.is_some() {
        return (false, None);
    }
    let expect = updated_since.map_or(0, millis) + duration_ms(timeout);
    if expect < now.as_millisecond() { (true, None) } else { (false, after(expect - now.as_millisecond())) }
}

/// Whether a pod of `subset` is really reserved, and when to look again (upstream
/// `CheckPodReallyInReservedStatus`): a pod marked reserved stays so until it has run ready at
/// the update revision for `min_ready`; an unmarked pod becomes reserved once it has been
/// unschedulable (or, at an old revision, updating) for `pending_timeout`. A pod at an old
/// revision that timed out is counted in `update_timeout_pods`.
pub fn check_pod_really_in_reserved_status(
    pod: &Pod,
    subset: &mut SubsetView,
    updated_since: Option<&Time>,
    pending: Duration,
    min_ready: Duration,
    now: Timestamp,
) -> (bool, Option<Duration>) {
    let revision = pod_label(pod, REVISION_LABEL).unwrap_or_default();
    if pod_label(pod, RESERVED_POD_LABEL) == Some("true") {
        let running = pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
        if running
            && revision == subset.status.updated_revision
            && let Some(ready) = pod_condition(pod, "Ready").filter(|c| c.status == "True")
        {
            let since = ready.last_transition_time.as_ref().map_or(0, millis) + duration_ms(min_ready);
            return if since < now.as_millisecond() {
                (false, None)
            } else {
                (true, after(since - now.as_millisecond()))
            };
        }
        return (true, Some(min_ready));
    }
    let (timed_out, next) = if revision == subset.status.updated_revision {
        pending_timeout(pod, pending, now)
    } else {
        let result = update_timeout(pod, updated_since, pending, now);
        if result.0 {
            subset.status.unschedulable.update_timeout_pods += 1;
        }
        result
    };
    if timed_out { (true, Some(min_ready)) } else { (false, next) }
}

/// The Adaptive strategy's durations: `rescheduleCriticalSeconds` (30 s by default) and
/// `unschedulableDuration` (300 s).
pub fn adaptive_durations(spec: &UnitedDeploymentSpec) -> (Duration, Duration) {
    let adaptive = spec.topology.schedule_strategy.adaptive.as_ref();
    let seconds = |value: Option<i32>, default: i32| {
        Duration::from_secs(u64::try_from(value.unwrap_or(default)).unwrap_or(0))
    };
    (
        seconds(
            adaptive.and_then(|a| a.reschedule_critical_seconds),
            UNITED_DEPLOYMENT_DEFAULT_RESCHEDULE_CRITICAL_SECONDS,
        ),
        seconds(
            adaptive.and_then(|a| a.unschedulable_duration),
            UNITED_DEPLOYMENT_DEFAULT_UNSCHEDULABLE_DURATION_SECONDS,
        ),
    )
}

/// The soonest time the UnitedDeployment must be looked at again (upstream `durationStore`,
/// which keeps the shortest duration pushed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requeue(pub Option<Duration>);

impl Requeue {
    /// Asks for a look after `after` (nothing for zero).
    pub fn push(&mut self, after: Duration) {
        if after.is_zero() {
            return;
        }
        self.0 = Some(self.0.map_or(after, |current| current.min(after)));
    }
}

/// Sets a subset condition (upstream `UnitedDeploymentSubsetStatus.SetCondition`: left alone
/// when status and reason are the same).
pub fn set_subset_condition(
    status: &mut UnitedDeploymentSubsetStatus,
    value: bool,
    reason: &str,
    message: &str,
    now: Timestamp,
) {
    let value = if value { "True" } else { "False" };
    let type_ = UnitedDeploymentSubsetConditionType::Schedulable;
    if let Some(current) = status.conditions.iter_mut().find(|c| c.type_ == type_) {
        if current.status == value && current.reason == reason {
            return;
        }
        *current = UnitedDeploymentSubsetCondition {
            type_,
            status: value.into(),
            last_transition_time: Some(Time(now)),
            reason: reason.into(),
            message: message.into(),
        };
    } else {
        status.conditions.push(UnitedDeploymentSubsetCondition {
            type_,
            status: value.into(),
            last_transition_time: Some(Time(now)),
            reason: reason.into(),
            message: message.into(),
        });
    }
}

/// The subset's Schedulable condition.
pub fn schedulable_condition(
    status: &UnitedDeploymentSubsetStatus,
) -> Option<&UnitedDeploymentSubsetCondition> {
    status.conditions.iter().find(|c| c.type_ == UnitedDeploymentSubsetConditionType::Schedulable)
}

/// Adds a subset status entry for each subset that has none (upstream `initStatus`); with
/// reserved pods, a subset added to an existing UnitedDeployment starts unschedulable so that
/// its first pods are treated as reserved until they run.
pub fn init_status(spec: &UnitedDeploymentSpec, status: &mut UnitedDeploymentStatus, now: Timestamp) {
    let update = !status.subset_statuses.is_empty();
    for subset in &spec.topology.subsets {
        if status.subset_status(&subset.name).is_none() {
            let mut entry = UnitedDeploymentSubsetStatus { name: subset.name.clone(), ..Default::default() };
            if update && reserves_unschedulable_pods(spec) {
                set_subset_condition(
                    &mut entry,
                    false,
                    "created",
                    "newly-created subsets in reservation strategy",
                    now,
                );
            }
            status.subset_statuses.push(entry);
        }
    }
}

/// The default Adaptive strategy's view of one subset (upstream
/// `calculateSubsetsStatusForDefaultAdaptiveStrategy`): an unschedulable mark lasts
/// `unschedulableDuration`; pods unschedulable for `rescheduleCriticalSeconds` (re)start it.
pub fn default_adaptive_status(
    spec: &UnitedDeploymentSpec,
    status: &mut UnitedDeploymentSubsetStatus,
    subset: &mut SubsetView,
    now: Timestamp,
    requeue: &mut Requeue,
) {
    let (critical, unschedulable_for) = adaptive_durations(spec);
    if let Some(condition) = schedulable_condition(status).filter(|c| c.status == "False") {
        let recover =
            condition.last_transition_time.as_ref().map_or(0, millis) + duration_ms(unschedulable_for);
        if now.as_millisecond() < recover {
            requeue.push(Duration::from_millis(u64::try_from(recover - now.as_millisecond()).unwrap_or(0)));
            subset.status.unschedulable.unschedulable = true;
        } else {
            let message = format!(
                "unschedulable subset recovered after {:.6} seconds",
                unschedulable_for.as_secs_f64()
            );
            set_subset_condition(status, true, "recover", &message, now);
        }
    }
    if subset.status.ready_replicas < subset.status.replicas {
        let mut soonest: Option<Duration> = None;
        for pod in &subset.pods {
            let (timed_out, next) = pending_timeout(pod, critical, now);
            if timed_out {
                subset.status.unschedulable.pending_pods += 1;
            }
            if let Some(next) = next {
                soonest = Some(soonest.map_or(next, |s| s.min(next)));
            }
        }
        if let Some(soonest) = soonest {
            requeue.push(soonest);
        }
        if subset.status.unschedulable.pending_pods > 0 {
            subset.status.unschedulable.unschedulable = true;
            set_subset_condition(status, false, "reschedule", "timeout pending pods found", now);
            requeue.push(unschedulable_for);
        }
    }
}

/// The reserved-pods Adaptive strategy's view of one subset (upstream
/// `calculateSubsetsStatusForReservedAdaptiveStrategy`); returns the pods whose reserved label
/// must be written, with the value.
pub fn reserved_adaptive_status(
    spec: &UnitedDeploymentSpec,
    status: &mut UnitedDeploymentSubsetStatus,
    updated_since: Option<&Time>,
    subset: &mut SubsetView,
    now: Timestamp,
    requeue: &mut Requeue,
) -> Vec<(String, bool)> {
    let (critical, unschedulable_for) = adaptive_durations(spec);
    if let Some(condition) = schedulable_condition(status) {
        subset.status.unschedulable.marked_as_unschedulable = condition.status == "False";
    }
    let mut to_patch = Vec::new();
    let mut soonest: Option<Duration> = None;
    let pods = std::mem::take(&mut subset.pods);
    for pod in &pods {
        let label = pod_label(pod, RESERVED_POD_LABEL);
        let name = pod.name_any();
        if subset.status.unschedulable.marked_as_unschedulable && label.is_none() {
            subset.status.unschedulable.reserved_pods += 1;
            to_patch.push((name, true));
            continue;
        }
        let (reserved, next) =
            check_pod_really_in_reserved_status(pod, subset, updated_since, critical, unschedulable_for, now);
        if reserved {
            subset.status.unschedulable.reserved_pods += 1;
        }
        if let Some(next) = next {
            soonest = Some(soonest.map_or(next, |s| s.min(next)));
        }
        if label.is_none() || (label == Some("true")) != reserved {
            to_patch.push((name, reserved));
        }
    }
    subset.pods = pods;
    if let Some(soonest) = soonest {
        requeue.push(soonest);
    }
    if subset.status.unschedulable.reserved_pods > 0 {
        subset.status.unschedulable.unschedulable = true;
        set_subset_condition(status, false, "reschedule", "reserved pods found", now);
    } else {
        subset.status.unschedulable.unschedulable = false;
        set_subset_condition(status, true, "reschedule", "no reserved pods", now);
    }
    to_patch
}

/// After allocation with reserved pods (upstream
/// `postProcessSubsetStatusForReservedAdaptiveStrategy`): a subset that just recovered and is
/// given more replicas is marked unschedulable again, so its new pods start reserved and the
/// substitutes elsewhere stay until they run.
pub fn post_process_reserved(
    status: &mut UnitedDeploymentSubsetStatus,
    subset: &SubsetView,
    next: i32,
    now: Timestamp,
) {
    let u = &subset.status.unschedulable;
    if !u.unschedulable && u.marked_as_unschedulable && next > subset.spec_replicas {
        set_subset_condition(status, false, "reschedule", "subset just recovered scaled up", now);
    }
}

/// Each subset's partition (upstream `calcNextPartitions`): its `manualUpdate.partitions` entry,
/// at most its next replicas.
pub fn next_partitions(spec: &UnitedDeploymentSpec, next: &Allocation) -> Allocation {
    let manual = (spec.update_strategy.type_ == UnitedDeploymentUpdateStrategyType::Manual)
        .then_some(spec.update_strategy.manual_update.as_ref())
        .flatten();
    spec.topology
        .subsets
        .iter()
        .map(|subset| {
            let mut partition = manual.and_then(|m| m.partitions.get(&subset.name)).copied().unwrap_or(0);
            if let Some(replicas) = next.get(&subset.name) {
                partition = partition.min(*replicas);
            }
            (subset.name.clone(), partition)
        })
        .collect()
}

/// What a subset workload is given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubsetUpdate {
    /// Its replicas.
    pub replicas: i32,
    /// Its partition.
    pub partition: i32,
    /// The subset's patch, as the annotation records it.
    pub patch: String,
}

/// The subset's patch as the annotation records it: the JSON as written, or empty.
pub fn patch_text(patch: Option<&Value>) -> String {
    match patch {
        None | Some(Value::Null) => String::new(),
        Some(value) => serde_json::to_string(value).unwrap_or_default(),
    }
}

/// What every subset is given (upstream `getNextUpdate`).
pub fn next_updates(
    spec: &UnitedDeploymentSpec,
    replicas: &Allocation,
    partitions: &Allocation,
) -> BTreeMap<String, SubsetUpdate> {
    spec.topology
        .subsets
        .iter()
        .map(|subset| {
            let update = SubsetUpdate {
                replicas: replicas.get(&subset.name).copied().unwrap_or(0),
                partition: partitions.get(&subset.name).copied().unwrap_or(0),
                patch: patch_text(subset.patch.as_ref()),
            };
            (subset.name.clone(), update)
        })
        .collect()
}

/// Why an existing subset workload must be written, if it must (upstream `manageSubsets`).
pub fn update_reason(subset: &SubsetView, revision: &str, next: &SubsetUpdate) -> Option<&'static str> {
    if subset.revision() != revision {
        Some("revision changed")
    } else if subset.spec_replicas != next.replicas {
        Some("replicas changed")
    } else if subset.spec_partition != next.partition {
        Some("partition changed")
    } else if subset.patch_annotation() != next.patch {
        Some("patch changed")
    } else if subset.status.updated_replicas < subset.status.replicas {
        Some("still in updating progress")
    } else {
        None
    }
}

/// Subsets to create (in the spec, no workload) and to delete (a workload, not in the spec),
/// in name order (upstream `manageSubsetProvision`).
pub fn provision_plan(
    spec: &UnitedDeploymentSpec,
    existing: &BTreeMap<String, SubsetView>,
) -> (Vec<String>, Vec<String>) {
    let expected: BTreeSet<&String> = spec.topology.subsets.iter().map(|s| &s.name).collect();
    let creates =
        expected.iter().filter(|name| !existing.contains_key(**name)).map(|n| (*n).clone()).collect();
    let deletes = existing.keys().filter(|name| !expected.contains(name)).cloned().collect();
    (creates, deletes)
}

/// A UnitedDeployment condition (upstream `NewUnitedDeploymentCondition`).
pub fn condition(
    type_: UnitedDeploymentConditionType,
    value: bool,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> UnitedDeploymentCondition {
    UnitedDeploymentCondition {
        type_,
        status: if value { "True" } else { "False" }.into(),
        last_transition_time: Some(Time(now)),
        reason: reason.into(),
        message: message.into(),
    }
}

/// Sets a condition (upstream `SetUnitedDeploymentCondition`): left alone when status and
/// reason are the same; the transition time kept when only the reason changes; moved last.
pub fn set_condition(status: &mut UnitedDeploymentStatus, mut condition: UnitedDeploymentCondition) {
    if let Some(current) = status.conditions.iter().find(|c| c.type_ == condition.type_) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time.clone();
        }
    }
    status.conditions.retain(|c| c.type_ != condition.type_);
    status.conditions.push(condition);
}

/// Removes a condition.
pub fn remove_condition(status: &mut UnitedDeploymentStatus, type_: UnitedDeploymentConditionType) {
    status.conditions.retain(|c| c.type_ != type_);
}

/// The `UnitedDeploymentUpdated` condition (upstream `setUpdatedCondition`): false with the
/// revision being rolled out, true once the current revision is the expected one.
pub fn set_updated_condition(
    status: &mut UnitedDeploymentStatus,
    current: &str,
    expected: &str,
    now: Timestamp,
) {
    let value = current == expected;
    let type_ = UnitedDeploymentConditionType::UnitedDeploymentUpdated;
    let old = status.conditions.iter().find(|c| c.type_ == type_);
    if old.is_some_and(|c| c.status == if value { "True" } else { "False" }) {
        return;
    }
    let (reason, message) = if value {
        ("UnitedDeploymentRevisionUpdated", format!("updated to revision {expected}"))
    } else {
        ("UnitedDeploymentRevisionUpdating", format!("updating to revision {expected}"))
    };
    set_condition(status, condition(type_, value, reason, &message, now));
}

/// The time the rollout to the update revision started (the `UnitedDeploymentUpdated`
/// condition's transition time).
pub fn updated_since(status: &UnitedDeploymentStatus) -> Option<&Time> {
    status
        .conditions
        .iter()
        .find(|c| c.type_ == UnitedDeploymentConditionType::UnitedDeploymentUpdated)
        .and_then(|c| c.last_transition_time.as_ref())
}

/// The label selector written to the status for the scale subresource: the UnitedDeployment's
/// selector, plus `reserved-pod=false` with reserved pods so HPA does not count them.
pub fn status_selector(ud: &UnitedDeployment) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(selector) = &ud.spec.selector {
        for (key, value) in selector.match_labels.iter().flatten() {
            parts.push(format!("{key}={value}"));
        }
        for requirement in selector.match_expressions.iter().flatten() {
            let values = requirement.values.clone().unwrap_or_default().join(",");
            match requirement.operator.as_str() {
                "In" => parts.push(format!("{} in ({values})", requirement.key)),
                "NotIn" => parts.push(format!("{} notin ({values})", requirement.key)),
                "Exists" => parts.push(requirement.key.clone()),
                "DoesNotExist" => parts.push(format!("!{}", requirement.key)),
                _ => {}
            }
        }
    }
    parts.sort();
    let mut selector = parts.join(",");
    if reserves_unschedulable_pods(&ud.spec) {
        selector.push_str(&format!(",{RESERVED_POD_LABEL}=false"));
    }
    selector
}

/// The totals and per-subset entries of the status (upstream `calculateStatus`).
pub fn calculate_status(
    status: &mut UnitedDeploymentStatus,
    existing: &BTreeMap<String, SubsetView>,
    next_replicas: &Allocation,
    next_partitions: &Allocation,
    current_revision: &str,
    expected_revision: &str,
) {
    status.replicas = 0;
    status.reserved_pods = 0;
    status.ready_replicas = 0;
    status.updated_replicas = 0;
    status.updated_ready_replicas = 0;
    for (name, subset) in existing {
        let reserved = subset.status.unschedulable.reserved_pods;
        status.replicas += subset.status.replicas - reserved;
        status.reserved_pods += reserved;
        status.ready_replicas += subset.status.ready_replicas;
        status.updated_replicas += subset.status.updated_replicas;
        status.updated_ready_replicas += subset.status.updated_ready_replicas;
        let entry = status.subset_status_mut(name);
        entry.replicas = next_replicas.get(name).copied().unwrap_or(0);
        entry.ready_replicas = subset.status.ready_replicas;
        entry.partition = next_partitions.get(name).copied().unwrap_or(0);
        entry.reserved_pods = reserved;
    }
    if status.current_revision.is_empty() {
        status.current_revision = current_revision.to_string();
    }
    status.updated_revision = expected_revision.to_string();
    if status.updated_revision != status.current_revision && status.updated_ready_replicas >= status.replicas
    {
        status.current_revision = status.updated_revision.clone();
    }
    // No adapter reports subset failures (upstream's all return nil).
    remove_condition(status, UnitedDeploymentConditionType::SubsetFailure);
}

/// The revision data of a UnitedDeployment (upstream `getUnitedDeploymentPatch`): its whole
/// `spec.template`, marked to replace, so a revision restores every subset template kind.
pub fn revision_data(spec: &UnitedDeploymentSpec) -> Value {
    let mut template = serde_json::to_value(&spec.template).unwrap_or_else(|_| json!({}));
    if let Some(object) = template.as_object_mut() {
        object.insert("$patch".into(), json!("replace"));
    }
    json!({"spec": {"template": template}})
}

/// The labels of a UnitedDeployment's revisions (upstream passes the workload template's labels
/// for StatefulSet, Advanced StatefulSet and Deployment templates, none for CloneSet).
pub fn revision_labels(spec: &UnitedDeploymentSpec) -> BTreeMap<String, String> {
    let template = &spec.template;
    let labels = if let Some(t) = &template.stateful_set_template {
        t.metadata.labels.clone()
    } else if let Some(t) = &template.advanced_stateful_set_template {
        t.metadata.labels.clone()
    } else if let Some(t) = &template.deployment_template {
        t.metadata.labels.clone()
    } else {
        None
    };
    labels.unwrap_or_default()
}

/// The controller reference a UnitedDeployment puts on what it creates.
pub fn owner_reference(ud: &UnitedDeployment) -> OwnerReference {
    OwnerReference {
        api_version: OWNER_API_VERSION.into(),
        kind: UnitedDeployment::kind(&()).into_owned(),
        name: ud.name_any(),
        uid: ud.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// A new revision of the UnitedDeployment's template numbered `number` (upstream
/// `newRevision` + `createControllerRevision`'s naming): `<ud>-<hash>` where the hash covers the
/// data and the collision count.
pub fn new_revision(ud: &UnitedDeployment, number: i64, collision_count: i32) -> ControllerRevision {
    let data = revision_data(&ud.spec);
    let hash = revision_hash(&data_bytes(&data), Some(collision_count));
    let mut labels = revision_labels(&ud.spec);
    labels.insert(REVISION_HASH_LABEL.into(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(crate::workload::revision::revision_name(&ud.name_any(), &hash)),
            namespace: ud.namespace(),
            labels: Some(labels),
            owner_references: Some(vec![owner_reference(ud)]),
            ..Default::default()
        },
        data: Some(k8s_openapi::apimachinery::pkg::runtime::RawExtension(data)),
        revision: number,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};
    use kruise_crds::apps::v1beta1::{ManualUpdate, Subset};

    use super::*;

    fn at(now: Timestamp, seconds: i64) -> Time {
        Time(now + k8s_openapi::jiff::SignedDuration::from_secs(seconds))
    }

    fn cond(type_: &str, status: &str, reason: Option<&str>, since: Option<Time>) -> PodCondition {
        PodCondition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.map(Into::into),
            last_transition_time: since,
            ..Default::default()
        }
    }

    fn pod(phase: &str, conditions: Vec<PodCondition>, created: Time, labels: &[(&str, &str)]) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.creation_timestamp = Some(created);
        if !labels.is_empty() {
            pod.metadata.labels = Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        }
        pod.status =
            Some(PodStatus { phase: Some(phase.into()), conditions: Some(conditions), ..Default::default() });
        pod
    }

    /// Upstream `TestCheckPodReallyInReservedStatus` (uniteddeployment_controller_utils_test.go).
    #[test]
    fn check_pod_really_in_reserved_status_cases() {
        let now = Timestamp::from_second(1_000_000).unwrap();
        let unschedulable = || cond("PodScheduled", "False", Some("Unschedulable"), None);
        let scheduled = || cond("PodScheduled", "True", None, None);
        let ready = |s: i64| cond("Ready", "True", None, Some(at(now, s)));
        let reserved = [(RESERVED_POD_LABEL, "true")];
        let secs = |s: u64| Some(Duration::from_secs(s));
        let mut deleted = pod("Running", vec![ready(-99), scheduled()], at(now, -100), &[]);
        deleted.metadata.deletion_timestamp = Some(at(now, -1));
        // name, pod, updated revision, update started (seconds from now), reserved, next check, update-timeout pods
        type Case<'a> = (&'a str, Pod, &'a str, i64, bool, Option<Duration>, i32);
        let cases: Vec<Case> = vec![
            (
                "Normal pod, pending, not long enough",
                pod("Pending", vec![unschedulable()], at(now, -3), &[]),
                "",
                0,
                false,
                secs(7),
                0,
            ),
            (
                "Normal pod, pending, long enough",
                pod("Pending", vec![unschedulable()], at(now, -11), &[]),
                "",
                0,
                true,
                secs(5),
                0,
            ),
            (
                "Normal pod, running",
                pod("Running", vec![ready(-3), scheduled()], at(now, -1), &[]),
                "",
                0,
                false,
                None,
                0,
            ),
            (
                "reserved pod, pending",
                pod(
                    "Pending",
                    vec![cond("Ready", "False", None, Some(at(now, -3))), unschedulable()],
                    at(now, -100),
                    &reserved,
                ),
                "",
                0,
                true,
                secs(5),
                0,
            ),
            (
                "reserved pod, ready, but not long enough",
                pod("Running", vec![ready(-3), scheduled()], at(now, -100), &reserved),
                "",
                0,
                true,
                secs(2),
                0,
            ),
            (
                "reserved pod, ready, long enough",
                pod("Running", vec![ready(-6), scheduled()], at(now, -100), &reserved),
                "",
                0,
                false,
                None,
                0,
            ),
            (
                "Normal pod, running, but with old revision and timeouted",
                pod(
                    "Running",
                    vec![ready(-3), scheduled()],
                    at(now, -1),
                    &[(REVISION_LABEL, "old-revision"), (RESERVED_POD_LABEL, "false")],
                ),
                "new-revision",
                -11,
                true,
                secs(5),
                1,
            ),
            (
                "Normal pod, running, but with old revision and not timeouted",
                pod(
                    "Running",
                    vec![ready(-3), scheduled()],
                    at(now, -1),
                    &[(REVISION_LABEL, "old-revision")],
                ),
                "new-revision",
                -4,
                false,
                secs(6),
                0,
            ),
            ("Normal pod deleted", deleted, "", -99, false, None, 0),
        ];
        for (name, pod, revision, updated, want, next, legacy) in cases {
            let mut subset = SubsetView::default();
            subset.status.updated_revision = revision.into();
            let since = at(now, updated);
            let got = check_pod_really_in_reserved_status(
                &pod,
                &mut subset,
                Some(&since),
                Duration::from_secs(10),
                Duration::from_secs(5),
                now,
            );
            assert_eq!(got, (want, next), "{name}");
            assert_eq!(subset.status.unschedulable.update_timeout_pods, legacy, "{name}");
        }
    }

    fn pods_at(revisions: &[&str]) -> Vec<Pod> {
        revisions
            .iter()
            .map(|revision| {
                let mut pod = Pod::default();
                if !revision.is_empty() {
                    pod.metadata.labels = Some([(REVISION_LABEL.to_string(), revision.to_string())].into());
                }
                pod
            })
            .collect()
    }

    /// Upstream `TestGetCurrentPartitionForStrategyOnDelete` (adapter_util_test.go): the pods
    /// not at the revision (ordinals do not matter).
    #[test]
    fn get_current_partition_for_strategy_on_delete() {
        let cases: &[(&[&str], i32)] = &[
            (&["v1", "v2", "v2"], 1),
            (&["v1", "v1", "v2"], 2),
            (&["v2", "v1", "v2", "v2"], 1),
            (&["v1", "v2", "v2"], 1),
            (&["v2", "v1", "v2"], 1),
            (&["v1", "v1", "v1"], 3),
            (&["v1", "", "v2", "v3"], 3),
        ];
        for (revisions, want) in cases {
            assert_eq!(current_partition(&pods_at(revisions), "v2"), *want, "{revisions:?}");
        }
    }

    /// Upstream `TestCalculateUpdatedReplicas` (adapter_util_test.go).
    #[test]
    fn calculate_updated_replicas() {
        let running = |revision: &str, ready: bool| {
            let mut pod = pods_at(&[revision]).remove(0);
            pod.status = Some(PodStatus {
                phase: Some("Running".into()),
                conditions: Some(vec![cond("Ready", if ready { "True" } else { "False" }, None, None)]),
                ..Default::default()
            });
            pod
        };
        let mut pods: Vec<Pod> = (0..5).map(|i| running("updated-revision", i < 3)).collect();
        pods.extend((0..2).map(|_| running("old-revision", true)));
        assert_eq!(updated_replicas(&pods, "updated-revision"), (5, 3));
    }

    fn spec_with_subsets(names: &[&str]) -> UnitedDeploymentSpec {
        let mut spec = UnitedDeploymentSpec::default();
        spec.topology.subsets =
            names.iter().map(|n| Subset { name: n.to_string(), ..Default::default() }).collect();
        spec
    }

    #[test]
    fn partitions_follow_manual_update_and_stay_within_replicas() {
        let mut spec = spec_with_subsets(&["a", "b", "c"]);
        spec.update_strategy.type_ = UnitedDeploymentUpdateStrategyType::Manual;
        spec.update_strategy.manual_update =
            Some(ManualUpdate { partitions: [("a".to_string(), 1), ("b".to_string(), 9)].into() });
        let next: Allocation = [("a".into(), 2), ("b".into(), 3), ("c".into(), 5)].into();
        let got = next_partitions(&spec, &next);
        assert_eq!(got, [("a".into(), 1), ("b".into(), 3), ("c".into(), 0)].into());
    }

    #[test]
    fn update_reasons_in_upstream_order() {
        let mut subset = SubsetView::default();
        subset.meta.labels = Some([(REVISION_LABEL.to_string(), "r1".to_string())].into());
        subset.spec_replicas = 2;
        let next = SubsetUpdate { replicas: 2, partition: 0, patch: String::new() };
        assert_eq!(update_reason(&subset, "r1", &next), None);
        assert_eq!(update_reason(&subset, "r2", &next), Some("revision changed"));
        assert_eq!(
            update_reason(&subset, "r1", &SubsetUpdate { replicas: 3, ..next.clone() }),
            Some("replicas changed")
        );
        assert_eq!(
            update_reason(&subset, "r1", &SubsetUpdate { partition: 1, ..next.clone() }),
            Some("partition changed")
        );
        assert_eq!(
            update_reason(&subset, "r1", &SubsetUpdate { patch: "{}".into(), ..next.clone() }),
            Some("patch changed")
        );
        subset.status.replicas = 2;
        subset.status.updated_replicas = 1;
        assert_eq!(update_reason(&subset, "r1", &next), Some("still in updating progress"));
    }

    #[test]
    fn provision_creates_missing_and_deletes_removed_subsets() {
        let spec = spec_with_subsets(&["a", "b"]);
        let existing: BTreeMap<String, SubsetView> =
            [("b".to_string(), SubsetView::default()), ("z".to_string(), SubsetView::default())].into();
        assert_eq!(provision_plan(&spec, &existing), (vec!["a".to_string()], vec!["z".to_string()]));
    }

    #[test]
    fn status_totals_and_current_revision_move_once_updated_pods_are_ready() {
        let mut existing = BTreeMap::new();
        for (name, replicas, ready) in [("a", 2, 2), ("b", 3, 1)] {
            let mut view =
                SubsetView { subset_name: name.into(), spec_replicas: replicas, ..Default::default() };
            view.status = SubsetState {
                replicas,
                ready_replicas: ready,
                updated_replicas: replicas,
                updated_ready_replicas: ready,
                ..Default::default()
            };
            existing.insert(name.to_string(), view);
        }
        let next: Allocation = [("a".into(), 2), ("b".into(), 3)].into();
        let partitions: Allocation = [("a".into(), 1), ("b".into(), 0)].into();
        let mut status = UnitedDeploymentStatus { current_revision: "r1".into(), ..Default::default() };
        calculate_status(&mut status, &existing, &next, &partitions, "r1", "r2");
        assert_eq!((status.replicas, status.ready_replicas, status.updated_replicas), (5, 3, 5));
        assert_eq!(status.current_revision, "r1", "not every updated pod is ready");
        assert_eq!(status.updated_revision, "r2");
        assert_eq!(
            status.subset_status("a").map(|s| (s.replicas, s.partition, s.ready_replicas)),
            Some((2, 1, 2))
        );
        existing.get_mut("b").unwrap().status.updated_ready_replicas = 3;
        calculate_status(&mut status, &existing, &next, &partitions, "r1", "r2");
        assert_eq!(status.current_revision, "r2");
    }

    #[test]
    fn updated_condition_flips_with_the_revision() {
        let now = Timestamp::from_second(1000).unwrap();
        let mut status = UnitedDeploymentStatus::default();
        set_updated_condition(&mut status, "r1", "r2", now);
        assert_eq!(status.conditions[0].status, "False");
        assert_eq!(status.conditions[0].message, "updating to revision r2");
        set_updated_condition(&mut status, "r2", "r2", now);
        assert_eq!(status.conditions[0].status, "True");
        assert_eq!(status.conditions[0].reason, "UnitedDeploymentRevisionUpdated");
    }

    #[test]
    fn default_adaptive_marks_a_subset_with_timed_out_pending_pods() {
        let now = Timestamp::from_second(1_000_000).unwrap();
        let mut spec = spec_with_subsets(&["a"]);
        spec.topology.schedule_strategy.type_ =
            kruise_crds::apps::v1beta1::UnitedDeploymentScheduleStrategyType::Adaptive;
        let mut status = UnitedDeploymentSubsetStatus { name: "a".into(), ..Default::default() };
        let stuck = pod(
            "Pending",
            vec![cond("PodScheduled", "False", Some("Unschedulable"), None)],
            at(now, -40),
            &[],
        );
        let mut subset = SubsetView { pods: vec![stuck], ..Default::default() };
        subset.status.replicas = 1;
        let mut requeue = Requeue::default();
        default_adaptive_status(&spec, &mut status, &mut subset, now, &mut requeue);
        assert!(subset.status.unschedulable.unschedulable);
        assert_eq!(subset.status.unschedulable.pending_pods, 1);
        assert_eq!(schedulable_condition(&status).map(|c| c.status.as_str()), Some("False"));
        assert_eq!(requeue.0, Some(Duration::from_secs(300)));

        // Still within unschedulableDuration: stays unschedulable.
        let later = now + k8s_openapi::jiff::SignedDuration::from_secs(100);
        let mut subset = SubsetView::default();
        let mut requeue = Requeue::default();
        default_adaptive_status(&spec, &mut status, &mut subset, later, &mut requeue);
        assert!(subset.status.unschedulable.unschedulable);
        assert_eq!(requeue.0, Some(Duration::from_secs(200)));

        // Past it: recovered.
        let recovered = now + k8s_openapi::jiff::SignedDuration::from_secs(301);
        let mut subset = SubsetView::default();
        default_adaptive_status(&spec, &mut status, &mut subset, recovered, &mut Requeue::default());
        assert!(!subset.status.unschedulable.unschedulable);
        assert_eq!(schedulable_condition(&status).map(|c| c.status.as_str()), Some("True"));
    }

    #[test]
    fn selector_for_the_scale_subresource() {
        let mut ud = UnitedDeployment::new("ud", UnitedDeploymentSpec::default());
        ud.spec.selector = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
            match_labels: Some([("app".to_string(), "web".to_string())].into()),
            ..Default::default()
        });
        assert_eq!(status_selector(&ud), "app=web");
        ud.spec.topology.schedule_strategy.type_ =
            kruise_crds::apps::v1beta1::UnitedDeploymentScheduleStrategyType::Adaptive;
        ud.spec.topology.schedule_strategy.adaptive =
            Some(kruise_crds::apps::v1beta1::AdaptiveUnitedDeploymentStrategy {
                reserve_unschedulable_pods: true,
                ..Default::default()
            });
        assert_eq!(status_selector(&ud), "app=web,apps.kruise.io/united-deployment-reserved-pod=false");
    }

    /// Upstream `TestRevisionManage`'s decision: a template change makes a new revision, the same
    /// template the same one.
    #[test]
    fn revision_manage() {
        let mut ud = UnitedDeployment::new("foo", UnitedDeploymentSpec::default());
        ud.metadata.namespace = Some("default".into());
        ud.spec.template.clone_set_template = Some(Default::default());
        let first = new_revision(&ud, 1, 0);
        assert_eq!(first.metadata.name, new_revision(&ud, 2, 0).metadata.name);
        assert!(first.metadata.name.as_deref().unwrap().starts_with("foo-"));
        let mut changed = ud.clone();
        if let Some(t) = changed.spec.template.clone_set_template.as_mut() {
            t.spec.replicas = Some(3);
        }
        assert_ne!(first.metadata.name, new_revision(&changed, 2, 0).metadata.name);
        assert_ne!(
            first.metadata.name,
            new_revision(&ud, 1, 1).metadata.name,
            "a collision changes the name"
        );
        assert_eq!(first.data.as_ref().unwrap().0["spec"]["template"]["$patch"], "replace");
    }
}
