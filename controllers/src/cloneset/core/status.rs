//! The CloneSet status the controller writes (upstream `cloneset_status.go` and the condition
//! helpers of `utils/cloneset_utils.go`).
//!
//! Rollout tools read these fields (Kruise Rollout: `observedGeneration`, `updatedReplicas`,
//! `updatedReadyReplicas`, `currentRevision`/`updateRevision`; HPA: `labelSelector`), so they are
//! computed exactly as upstream does:
//!
//! - counts over the CloneSet's active pods: `readyReplicas` = Running, Ready and not mid
//!   in-place update; `availableReplicas` additionally lifecycle `Normal` (or none) and Ready for
//!   `minReadySeconds`; the `updated*` counts the same at the update revision;
//! - `currentRevision` moves to the update revision once every pod is at it and the pod count
//!   equals `spec.replicas` (readiness is not waited for);
//! - `expectedUpdatedReplicas = replicas - partition` (left at 0 if the partition is illegal);
//! - condition `Progressing`, only when `progressDeadlineSeconds` is set and not `i32::MAX`:
//!   `CloneSetAvailable` > `CloneSetPaused` > `ProgressPartitionAvailable` >
//!   `ProgressDeadlineExceeded` (False; sticky until one of the former holds) > `CloneSetUpdated`;
//! - conditions `FailedScale` / `FailedUpdate`: set True with the error message when scaling or
//!   updating fails. Upstream never removes them and, because a condition with the same status
//!   and reason is left alone, keeps the first message; this module does the same.

use std::{borrow::Borrow, time::Duration};

use k8s_openapi::{
    api::core::v1::Pod,
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::{SignedDuration, Timestamp},
};
use kruise_crds::{
    apps::v1beta1::{CloneSet, CloneSetCondition, CloneSetStatus},
    intstr, selector,
};

use crate::workload::pods::{equal_to_revision_hash, is_pod_available, is_pod_ready_for_status};

/// Condition type: the rollout's progress (only with a progress deadline).
pub const CONDITION_PROGRESSING: &str = "Progressing";
/// Condition type: creating or deleting pods or PVCs failed.
pub const CONDITION_FAILED_SCALE: &str = "FailedScale";
/// Condition type: updating pods failed.
pub const CONDITION_FAILED_UPDATE: &str = "FailedUpdate";

/// Progressing reason: every pod is updated and available.
pub const REASON_AVAILABLE: &str = "CloneSetAvailable";
/// Progressing reason: `rollingUpdate.paused` is set.
pub const REASON_PAUSED: &str = "CloneSetPaused";
/// Progressing reason: the pods the partition lets update are updated and available.
pub const REASON_PARTITION_AVAILABLE: &str = "ProgressPartitionAvailable";
/// Progressing reason (status False): no progress within `progressDeadlineSeconds`.
pub const REASON_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
/// Progressing reason: the rollout is under way.
pub const REASON_UPDATED: &str = "CloneSetUpdated";

/// Message of [`REASON_AVAILABLE`].
pub const MESSAGE_AVAILABLE: &str = "CloneSet is available";
/// Message of [`REASON_PAUSED`].
pub const MESSAGE_PAUSED: &str = "CloneSet is paused";
/// Message of [`REASON_PARTITION_AVAILABLE`].
pub const MESSAGE_PARTITION_AVAILABLE: &str = "CloneSet has been paused due to partition ready";
/// Message of [`REASON_UPDATED`].
pub const MESSAGE_UPDATED: &str = "CloneSet is progressing";

/// Which part of a reconcile failed, for [`record_sync_failure`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncFailure {
    /// Creating or deleting pods (or their PVCs) failed.
    Scale,
    /// Updating pods failed.
    Update,
}

/// The condition of the given type, if present.
pub fn get_condition<'a>(status: &'a CloneSetStatus, condition_type: &str) -> Option<&'a CloneSetCondition> {
    status.conditions.iter().find(|c| c.type_ == condition_type)
}

/// Sets a condition as upstream `SetCloneSetCondition` does: nothing changes when a condition of
/// that type already has the same status and reason; otherwise it replaces the old one (moved to
/// the end), keeping the old transition time when only the reason changed.
pub fn set_condition(status: &mut CloneSetStatus, mut condition: CloneSetCondition) {
    if let Some(current) = get_condition(status, &condition.type_) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time.clone();
        }
    }
    remove_condition(status, &condition.type_.clone());
    status.conditions.push(condition);
}

/// Removes every condition of the given type.
pub fn remove_condition(status: &mut CloneSetStatus, condition_type: &str) {
    status.conditions.retain(|c| c.type_ != condition_type);
}

/// A condition stamped with `now` as both update and transition time.
pub fn new_condition(
    condition_type: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> CloneSetCondition {
    CloneSetCondition {
        type_: condition_type.to_string(),
        status: status.to_string(),
        last_update_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
        reason: reason.to_string(),
        message: message.to_string(),
    }
}

/// The status a reconcile starts from (upstream `doReconcile`): the generation it observes, the
/// revisions, the collision count, the selector string for the scale subresource, and the
/// conditions already on the CloneSet. Counts are filled by [`calculate_status`].
pub fn base_status(
    cs: &CloneSet,
    current_revision: &str,
    update_revision: &str,
    collision_count: i32,
) -> CloneSetStatus {
    CloneSetStatus {
        observed_generation: cs.metadata.generation.unwrap_or(0),
        current_revision: current_revision.to_string(),
        update_revision: update_revision.to_string(),
        collision_count: Some(collision_count),
        label_selector: cs.spec.selector.as_ref().map(selector::to_selector_string).unwrap_or_default(),
        conditions: cs.status.as_ref().map(|s| s.conditions.clone()).unwrap_or_default(),
        ..Default::default()
    }
}

/// Records that scaling or updating failed (upstream `syncCloneSet`): condition `FailedScale` or
/// `FailedUpdate`, True, with the error message and `now` as transition time.
pub fn record_sync_failure(status: &mut CloneSetStatus, failure: SyncFailure, message: &str, now: Timestamp) {
    let condition_type = match failure {
        SyncFailure::Scale => CONDITION_FAILED_SCALE,
        SyncFailure::Update => CONDITION_FAILED_UPDATE,
    };
    set_condition(
        status,
        CloneSetCondition {
            type_: condition_type.to_string(),
            status: "True".to_string(),
            last_update_time: None,
            last_transition_time: Some(Time(now)),
            reason: String::new(),
            message: message.to_string(),
        },
    );
}

fn spec_replicas(cs: &CloneSet) -> i32 {
    cs.spec.replicas.unwrap_or(1)
}

/// Fills the counts, the current revision, `expectedUpdatedReplicas` and the Progressing
/// condition of `status` (upstream `calculateStatus`), which must come from [`base_status`]
/// (plus any [`record_sync_failure`]). Returns when to reconcile again for the progress deadline.
pub fn calculate_status<P: Borrow<Pod>>(
    cs: &CloneSet,
    status: &mut CloneSetStatus,
    pods: &[P],
    now: Timestamp,
) -> Option<Duration> {
    let min_ready_seconds = cs.spec.min_ready_seconds;
    for pod in pods {
        let pod = pod.borrow();
        let ready = is_pod_ready_for_status(pod, now);
        let available = is_pod_available(pod, min_ready_seconds, now);
        let updated = equal_to_revision_hash(pod, &status.update_revision);
        status.replicas += 1;
        status.ready_replicas += i32::from(ready);
        status.available_replicas += i32::from(available);
        status.updated_replicas += i32::from(updated);
        status.updated_ready_replicas += i32::from(updated && ready);
        status.updated_available_replicas += i32::from(updated && available);
    }
    let replicas = spec_replicas(cs);
    // All pods at the update revision and the right number of them: no need to wait for ready.
    if status.updated_replicas == status.replicas && status.replicas == replicas {
        status.current_revision = status.update_revision.clone();
    }
    match &cs.spec.update_strategy.rolling_update {
        Some(rolling) => {
            if let Ok(partition) = intstr::partition_replicas(rolling.partition.as_ref(), cs.spec.replicas) {
                status.expected_updated_replicas = replicas - partition;
            }
        }
        None => status.expected_updated_replicas = replicas,
    }
    progressing_condition(cs, status, now)
}

/// Whether the Progressing condition is maintained: `progressDeadlineSeconds` set and not
/// `i32::MAX` (upstream `HasProgressDeadline`).
pub fn has_progress_deadline(cs: &CloneSet) -> bool {
    cs.spec.progress_deadline_seconds.is_some_and(|s| s != i32::MAX)
}

/// Whether the rollout is complete: revisions converged and every desired pod updated and
/// available (upstream `CloneSetAvailable`).
pub fn is_available(cs: &CloneSet, status: &CloneSetStatus) -> bool {
    let replicas = spec_replicas(cs);
    status.current_revision == status.update_revision
        && status.replicas == replicas
        && status.updated_replicas == replicas
        && status.updated_available_replicas == replicas
}

/// Whether a partition holds the rollout and every pod it lets update is updated and available
/// (upstream `CloneSetPartitionAvailable`).
pub fn is_partition_available(cs: &CloneSet, status: &CloneSetStatus) -> bool {
    status.expected_updated_replicas < spec_replicas(cs)
        && status.expected_updated_replicas <= status.updated_available_replicas
}

/// Whether `rollingUpdate.paused` is set.
pub fn is_paused(cs: &CloneSet) -> bool {
    cs.spec.update_strategy.rolling_update.as_ref().is_some_and(|r| r.paused)
}

fn deadline(cs: &CloneSet) -> SignedDuration {
    SignedDuration::from_secs(i64::from(cs.spec.progress_deadline_seconds.unwrap_or(0)))
}

/// Whether the Progressing condition in `status` has exceeded the deadline: it already says so,
/// or its last update is more than `progressDeadlineSeconds` before `now` (a missing update time
/// counts as long ago). No condition has not exceeded anything (upstream
/// `CloneSetDeadlineExceeded`).
pub fn is_deadline_exceeded(cs: &CloneSet, status: &CloneSetStatus, now: Timestamp) -> bool {
    let Some(condition) = get_condition(status, CONDITION_PROGRESSING) else {
        return false;
    };
    if condition.reason == REASON_DEADLINE_EXCEEDED {
        return true;
    }
    match &condition.last_update_time {
        None => true,
        Some(updated) => updated.0.checked_add(deadline(cs)).is_ok_and(|until| until < now),
    }
}

/// Sets the Progressing condition of `status` (upstream `calculateProgressingStatus`) and returns
/// when the deadline of a progressing rollout falls due (rounded one second late, as upstream
/// does to avoid waking up early), or `None` when nothing needs a timed requeue.
pub fn progressing_condition(cs: &CloneSet, status: &mut CloneSetStatus, now: Timestamp) -> Option<Duration> {
    if !has_progress_deadline(cs) {
        remove_condition(status, CONDITION_PROGRESSING);
        return None;
    }
    let condition = if is_available(cs, status) {
        new_condition(CONDITION_PROGRESSING, "True", REASON_AVAILABLE, MESSAGE_AVAILABLE, now)
    } else if is_paused(cs) {
        new_condition(CONDITION_PROGRESSING, "True", REASON_PAUSED, MESSAGE_PAUSED, now)
    } else if is_partition_available(cs, status) {
        new_condition(
            CONDITION_PROGRESSING,
            "True",
            REASON_PARTITION_AVAILABLE,
            MESSAGE_PARTITION_AVAILABLE,
            now,
        )
    } else if is_deadline_exceeded(cs, status, now) {
        let message = format!("CloneSet revision {} has timed out progressing", status.update_revision);
        new_condition(CONDITION_PROGRESSING, "False", REASON_DEADLINE_EXCEEDED, &message, now)
    } else {
        set_condition(
            status,
            new_condition(CONDITION_PROGRESSING, "True", REASON_UPDATED, MESSAGE_UPDATED, now),
        );
        return get_condition(status, CONDITION_PROGRESSING).and_then(|c| requeue_for_deadline(cs, c, now));
    };
    set_condition(status, condition);
    None
}

/// Time until the condition's deadline: the remainder itself when under a second, else one second
/// more; `None` when already due (upstream `getRequeueSecondsFromCondition`).
pub fn requeue_for_deadline(
    cs: &CloneSet,
    condition: &CloneSetCondition,
    now: Timestamp,
) -> Option<Duration> {
    let updated = condition.last_update_time.as_ref()?.0;
    let after = updated.checked_add(deadline(cs)).ok()?.duration_since(now);
    let after =
        if after < SignedDuration::from_secs(1) { after } else { after + SignedDuration::from_secs(1) };
    Duration::try_from(after).ok().filter(|d| !d.is_zero())
}

/// Whether the new status differs from the old in anything upstream writes for (upstream
/// `inconsistentStatus`): a newer observed generation, any count, either revision, the selector,
/// or the Progressing condition's status or reason.
pub fn status_changed(old: &CloneSetStatus, new: &CloneSetStatus) -> bool {
    let progressing_changed =
        match (get_condition(old, CONDITION_PROGRESSING), get_condition(new, CONDITION_PROGRESSING)) {
            (None, None) => false,
            (Some(a), Some(b)) => a.status != b.status || a.reason != b.reason,
            _ => true,
        };
    new.observed_generation > old.observed_generation
        || new.replicas != old.replicas
        || new.ready_replicas != old.ready_replicas
        || new.available_replicas != old.available_replicas
        || new.updated_ready_replicas != old.updated_ready_replicas
        || new.updated_replicas != old.updated_replicas
        || new.updated_available_replicas != old.updated_available_replicas
        || new.expected_updated_replicas != old.expected_updated_replicas
        || new.update_revision != old.update_revision
        || new.current_revision != old.current_revision
        || new.label_selector != old.label_selector
        || progressing_changed
}

/// When to reconcile again so that pods become available after `minReadySeconds`: only when the
/// sync succeeded, `minReadySeconds > 0` and some ready pods are not available yet.
pub fn requeue_for_min_ready(cs: &CloneSet, status: &CloneSetStatus, sync_failed: bool) -> Option<Duration> {
    let seconds = u64::try_from(cs.spec.min_ready_seconds).ok().filter(|s| *s > 0)?;
    (!sync_failed && status.available_replicas != status.ready_replicas).then(|| Duration::from_secs(seconds))
}

/// Everything the status step of a reconcile produces.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusOutcome {
    /// The status to write.
    pub status: CloneSetStatus,
    /// Whether it differs from the CloneSet's current status enough to be written.
    pub changed: bool,
    /// When to reconcile again (progress deadline or minReadySeconds), if at all.
    pub requeue_after: Option<Duration>,
}

/// The whole status step of a reconcile: [`base_status`], the failures of this reconcile's scale
/// or update, [`calculate_status`], [`status_changed`] against the CloneSet's status, and the
/// earliest requeue.
pub fn compute_status<P: Borrow<Pod>>(
    cs: &CloneSet,
    pods: &[P],
    current_revision: &str,
    update_revision: &str,
    collision_count: i32,
    failures: &[(SyncFailure, String)],
    now: Timestamp,
) -> StatusOutcome {
    let mut status = base_status(cs, current_revision, update_revision, collision_count);
    for (failure, message) in failures {
        record_sync_failure(&mut status, *failure, message, now);
    }
    let deadline_requeue = calculate_status(cs, &mut status, pods, now);
    let min_ready_requeue = requeue_for_min_ready(cs, &status, !failures.is_empty());
    let requeue_after = match (deadline_requeue, min_ready_requeue) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let old = cs.status.clone().unwrap_or_default();
    let changed = status_changed(&old, &status);
    StatusOutcome { status, changed, requeue_after }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use std::collections::BTreeMap;

    use k8s_openapi::{
        api::core::v1::{PodCondition, PodStatus},
        apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
    };
    use kruise_crds::{
        apps::v1beta1::{CloneSetSpec, RollingUpdateCloneSetStrategy},
        common::{IN_PLACE_UPDATE_READY, LIFECYCLE_STATE_KEY, well_known::CONTROLLER_REVISION_HASH},
    };

    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap()
    }

    fn cloneset(replicas: i32, pds: Option<i32>) -> CloneSet {
        CloneSet::new(
            "web",
            CloneSetSpec { replicas: Some(replicas), progress_deadline_seconds: pds, ..Default::default() },
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn counts(
        replicas: i32,
        ready: i32,
        available: i32,
        updated: i32,
        updated_ready: i32,
        updated_available: i32,
        expected_updated: i32,
        current: &str,
        update: &str,
    ) -> CloneSetStatus {
        CloneSetStatus {
            replicas,
            ready_replicas: ready,
            available_replicas: available,
            updated_replicas: updated,
            updated_ready_replicas: updated_ready,
            updated_available_replicas: updated_available,
            expected_updated_replicas: expected_updated,
            current_revision: current.into(),
            update_revision: update.into(),
            ..Default::default()
        }
    }

    fn progressing(reason: &str, updated_at: i64) -> CloneSetCondition {
        let status = if reason == REASON_DEADLINE_EXCEEDED { "False" } else { "True" };
        new_condition(CONDITION_PROGRESSING, status, reason, "", at(updated_at))
    }

    fn paused(mut cs: CloneSet) -> CloneSet {
        cs.spec.update_strategy.rolling_update.get_or_insert_default().paused = true;
        cs
    }

    fn partition(mut cs: CloneSet, value: &str) -> CloneSet {
        cs.spec.update_strategy.rolling_update.get_or_insert_default().partition =
            Some(IntOrString::String(value.into()));
        cs
    }

    /// Adapted from upstream `TestSyncProgressingStatus`: the status as computed this reconcile
    /// (with the Progressing condition the CloneSet already had), the time, and the resulting
    /// condition status, reason and requeue.
    #[test]
    fn progressing_condition_state_machine() {
        let pds = Some(10);
        // (case, cloneset, new status, previous Progressing condition, now, expected (status, reason) or None, requeue secs)
        type Case = (
            &'static str,
            CloneSet,
            CloneSetStatus,
            Option<CloneSetCondition>,
            i64,
            Option<(&'static str, &'static str)>,
            Option<u64>,
        );
        let cases: Vec<Case> = vec![
            (
                "nil deadline removes the condition",
                cloneset(10, None),
                counts(5, 4, 3, 2, 1, 1, 2, "1", "2"),
                Some(progressing(REASON_AVAILABLE, 0)),
                0,
                None,
                None,
            ),
            (
                "MaxInt32 deadline removes the condition",
                cloneset(10, Some(i32::MAX)),
                counts(5, 4, 3, 2, 1, 1, 2, "1", "2"),
                Some(progressing(REASON_UPDATED, 0)),
                0,
                None,
                None,
            ),
            (
                "starts deploying",
                cloneset(10, pds),
                counts(5, 4, 3, 2, 1, 1, 2, "1", "2"),
                None,
                0,
                Some(("True", REASON_UPDATED)),
                Some(11),
            ),
            (
                "starts paused",
                paused(cloneset(10, pds)),
                counts(5, 4, 3, 2, 1, 1, 2, "1", "1"),
                None,
                0,
                Some(("True", REASON_PAUSED)),
                None,
            ),
            (
                "is available",
                cloneset(10, pds),
                counts(10, 10, 10, 10, 10, 10, 10, "1", "1"),
                None,
                0,
                Some(("True", REASON_AVAILABLE)),
                None,
            ),
            (
                "is scaling",
                cloneset(1, pds),
                counts(10, 9, 8, 10, 9, 8, 10, "2", "2"),
                None,
                0,
                Some(("True", REASON_UPDATED)),
                Some(11),
            ),
            (
                "partition available",
                partition(cloneset(10, pds), "90%"),
                counts(10, 10, 10, 1, 1, 1, 1, "1", "2"),
                None,
                0,
                Some(("True", REASON_PARTITION_AVAILABLE)),
                None,
            ),
            (
                "available, then scales up: progressing again",
                cloneset(10, pds),
                counts(5, 5, 5, 5, 5, 5, 10, "1", "1"),
                Some(progressing(REASON_AVAILABLE, 0)),
                3,
                Some(("True", REASON_UPDATED)),
                Some(11),
            ),
            (
                "progressing keeps its start time: requeue at the remaining deadline",
                cloneset(10, pds),
                counts(10, 8, 8, 10, 8, 8, 10, "1", "1"),
                Some(progressing(REASON_UPDATED, 1)),
                8,
                Some(("True", REASON_UPDATED)),
                Some(4),
            ),
            (
                "progressing past the deadline",
                cloneset(10, pds),
                counts(10, 8, 8, 10, 8, 8, 10, "1", "1"),
                Some(progressing(REASON_UPDATED, 10)),
                30,
                Some(("False", REASON_DEADLINE_EXCEEDED)),
                None,
            ),
            (
                "exactly at the deadline is not past it",
                cloneset(10, pds),
                counts(10, 8, 8, 10, 8, 8, 10, "1", "1"),
                Some(progressing(REASON_UPDATED, 10)),
                20,
                Some(("True", REASON_UPDATED)),
                None,
            ),
            (
                "progressing, then available",
                cloneset(10, pds),
                counts(10, 10, 10, 10, 10, 10, 10, "2", "2"),
                Some(progressing(REASON_UPDATED, 0)),
                9,
                Some(("True", REASON_AVAILABLE)),
                None,
            ),
            (
                "progressing, then paused",
                paused(cloneset(10, pds)),
                counts(10, 8, 7, 6, 5, 5, 6, "1", "2"),
                Some(progressing(REASON_UPDATED, 5)),
                8,
                Some(("True", REASON_PAUSED)),
                None,
            ),
            (
                "paused, then resumed",
                cloneset(10, pds),
                counts(10, 8, 7, 6, 5, 5, 10, "1", "2"),
                Some(progressing(REASON_PAUSED, 0)),
                10,
                Some(("True", REASON_UPDATED)),
                Some(11),
            ),
            (
                "deadline exceeded is sticky while progressing",
                cloneset(10, pds),
                counts(10, 8, 7, 6, 5, 5, 10, "1", "3"),
                Some(progressing(REASON_DEADLINE_EXCEEDED, 8)),
                40,
                Some(("False", REASON_DEADLINE_EXCEEDED)),
                None,
            ),
            (
                "deadline exceeded, then paused",
                paused(cloneset(10, pds)),
                counts(10, 8, 7, 6, 5, 5, 10, "1", "2"),
                Some(progressing(REASON_DEADLINE_EXCEEDED, 8)),
                40,
                Some(("True", REASON_PAUSED)),
                None,
            ),
            (
                "partition available, then paused",
                paused(partition(cloneset(10, pds), "50%")),
                counts(10, 10, 10, 5, 5, 5, 5, "1", "2"),
                Some(progressing(REASON_PARTITION_AVAILABLE, 0)),
                8,
                Some(("True", REASON_PAUSED)),
                None,
            ),
            (
                "partition available, then scaled up",
                partition(cloneset(20, pds), "50%"),
                counts(20, 15, 15, 5, 5, 5, 10, "1", "2"),
                Some(progressing(REASON_PARTITION_AVAILABLE, 0)),
                8,
                Some(("True", REASON_UPDATED)),
                Some(11),
            ),
            (
                "scaled down with a partition: available again",
                partition(cloneset(6, pds), "10%"),
                counts(6, 6, 6, 5, 5, 5, 5, "1", "2"),
                Some(progressing(REASON_UPDATED, 0)),
                5,
                Some(("True", REASON_PARTITION_AVAILABLE)),
                None,
            ),
        ];
        for (name, cs, mut status, previous, now, expected, requeue) in cases {
            status.conditions.extend(previous);
            let got_requeue = progressing_condition(&cs, &mut status, at(now));
            let got =
                get_condition(&status, CONDITION_PROGRESSING).map(|c| (c.status.as_str(), c.reason.as_str()));
            assert_eq!(got, expected, "{name}");
            assert_eq!(got_requeue, requeue.map(Duration::from_secs), "{name}: requeue");
        }
    }

    #[test]
    fn deadline_message_names_the_update_revision() {
        let cs = cloneset(1, Some(11));
        let mut status = counts(1, 1, 0, 1, 1, 0, 1, "web-1", "web-1");
        status.conditions.push(progressing(REASON_UPDATED, 0));
        progressing_condition(&cs, &mut status, at(12));
        let condition = get_condition(&status, CONDITION_PROGRESSING).unwrap();
        assert_eq!(condition.message, "CloneSet revision web-1 has timed out progressing");
        assert_eq!(condition.last_update_time, Some(Time(at(12))));
    }

    /// upstream `TestSetCloneSetCondition`.
    #[test]
    fn set_condition_keeps_times_when_nothing_changes() {
        let mut status = CloneSetStatus::default();
        set_condition(&mut status, new_condition(CONDITION_PROGRESSING, "True", REASON_UPDATED, "a", at(1)));
        // Same status and reason: untouched, even the message.
        set_condition(&mut status, new_condition(CONDITION_PROGRESSING, "True", REASON_UPDATED, "b", at(5)));
        let c = get_condition(&status, CONDITION_PROGRESSING).unwrap();
        assert_eq!((c.message.as_str(), c.last_update_time.clone()), ("a", Some(Time(at(1)))));
        // Same status, new reason: new update time, old transition time.
        set_condition(
            &mut status,
            new_condition(CONDITION_PROGRESSING, "True", REASON_AVAILABLE, "c", at(7)),
        );
        let c = get_condition(&status, CONDITION_PROGRESSING).unwrap();
        assert_eq!(
            (c.last_update_time.clone(), c.last_transition_time.clone()),
            (Some(Time(at(7))), Some(Time(at(1))))
        );
        // New status: both times new.
        set_condition(
            &mut status,
            new_condition(CONDITION_PROGRESSING, "False", REASON_DEADLINE_EXCEEDED, "d", at(9)),
        );
        let c = get_condition(&status, CONDITION_PROGRESSING).unwrap();
        assert_eq!(c.last_transition_time, Some(Time(at(9))));
        assert_eq!(status.conditions.len(), 1);
        remove_condition(&mut status, CONDITION_PROGRESSING);
        assert!(status.conditions.is_empty());
    }

    #[test]
    fn failures_are_recorded_once_and_kept() {
        let mut cs = cloneset(3, None);
        let mut status = base_status(&cs, "a", "b", 0);
        record_sync_failure(&mut status, SyncFailure::Scale, "quota exceeded", at(1));
        record_sync_failure(&mut status, SyncFailure::Scale, "other error", at(2));
        record_sync_failure(&mut status, SyncFailure::Update, "InPlaceOnly", at(2));
        let scale = get_condition(&status, CONDITION_FAILED_SCALE).unwrap();
        assert_eq!((scale.status.as_str(), scale.message.as_str()), ("True", "quota exceeded"));
        assert!(get_condition(&status, CONDITION_FAILED_UPDATE).is_some());
        // The next reconcile starts from the written conditions: they stay.
        cs.status = Some(status);
        let next = base_status(&cs, "a", "b", 0);
        assert!(get_condition(&next, CONDITION_FAILED_SCALE).is_some());
    }

    fn pod(revision: &str, state: Option<&str>, ready: bool, in_place_ready: Option<&str>) -> Pod {
        let mut labels = BTreeMap::from([(CONTROLLER_REVISION_HASH.to_string(), revision.to_string())]);
        if let Some(state) = state {
            labels.insert(LIFECYCLE_STATE_KEY.into(), state.into());
        }
        let mut conditions = vec![PodCondition {
            type_: "Ready".into(),
            status: if ready { "True" } else { "False" }.into(),
            ..Default::default()
        }];
        if let Some(s) = in_place_ready {
            conditions.push(PodCondition {
                type_: IN_PLACE_UPDATE_READY.into(),
                status: s.into(),
                ..Default::default()
            });
        }
        let mut pod = Pod::default();
        pod.metadata.labels = Some(labels);
        pod.status = Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(conditions),
            ..Default::default()
        });
        pod
    }

    #[test]
    fn counts_and_revisions() {
        let now = at(100);
        let mut cs = cloneset(4, None);
        cs.metadata.generation = Some(7);
        cs.spec.selector = Some(LabelSelector {
            match_labels: Some([("app".to_string(), "web".to_string())].into()),
            ..Default::default()
        });
        cs.spec.update_strategy.rolling_update = Some(RollingUpdateCloneSetStrategy {
            partition: Some(IntOrString::Int(1)),
            ..Default::default()
        });
        let pods = vec![
            pod("web-new", Some("Normal"), true, Some("True")),
            pod("web-new", Some("Updating"), true, None),
            pod("web-new", None, true, Some("False")),
            pod("web-old", Some("Normal"), false, None),
        ];
        let out = compute_status(&cs, &pods, "web-old", "web-new", 2, &[], now);
        let s = &out.status;
        assert_eq!(
            (
                s.replicas,
                s.ready_replicas,
                s.available_replicas,
                s.updated_replicas,
                s.updated_ready_replicas,
                s.updated_available_replicas
            ),
            (4, 2, 1, 3, 2, 1)
        );
        assert_eq!(s.expected_updated_replicas, 3);
        assert_eq!((s.current_revision.as_str(), s.update_revision.as_str()), ("web-old", "web-new"));
        assert_eq!(
            (s.observed_generation, s.collision_count, s.label_selector.as_str()),
            (7, Some(2), "app=web")
        );
        assert!(out.changed);
        assert_eq!(out.requeue_after, None);

        // All at the update revision and the right count: current revision advances, ready or not.
        let all_new = vec![pod("web-new", None, false, None); 4];
        let out = compute_status(&cs, &all_new, "web-old", "web-new", 0, &[], now);
        assert_eq!(out.status.current_revision, "web-new");
        // One pod too many: it does not.
        let five = vec![pod("web-new", None, true, None); 5];
        let out = compute_status(&cs, &five, "web-old", "web-new", 0, &[], now);
        assert_eq!(out.status.current_revision, "web-old");

        // Unchanged status: nothing to write.
        cs.status = Some(out.status.clone());
        let again = compute_status(&cs, &five, "web-old", "web-new", 0, &[], now);
        assert!(!again.changed);
    }

    #[test]
    fn expected_updated_without_rolling_update_or_with_bad_partition() {
        let cs = cloneset(5, None);
        let out = compute_status(&cs, &Vec::<Pod>::new(), "a", "b", 0, &[], at(0));
        assert_eq!(out.status.expected_updated_replicas, 5);
        let bad = partition(cloneset(5, None), "lots");
        let out = compute_status(&bad, &Vec::<Pod>::new(), "a", "b", 0, &[], at(0));
        assert_eq!(out.status.expected_updated_replicas, 0);
    }

    #[test]
    fn min_ready_requeue() {
        let mut cs = cloneset(2, None);
        cs.spec.min_ready_seconds = 30;
        let status = counts(2, 2, 1, 2, 2, 1, 2, "a", "a");
        assert_eq!(requeue_for_min_ready(&cs, &status, false), Some(Duration::from_secs(30)));
        assert_eq!(requeue_for_min_ready(&cs, &status, true), None);
        assert_eq!(requeue_for_min_ready(&cs, &counts(2, 2, 2, 2, 2, 2, 2, "a", "a"), false), None);
        cs.spec.min_ready_seconds = 0;
        assert_eq!(requeue_for_min_ready(&cs, &status, false), None);
    }

    /// upstream `TestHasProgressingConditionChanged` and the count comparisons.
    #[test]
    fn status_change_detection() {
        let base = counts(3, 3, 3, 3, 3, 3, 3, "a", "a");
        let with = |c: CloneSetCondition| CloneSetStatus { conditions: vec![c], ..base.clone() };
        let cond = new_condition(CONDITION_PROGRESSING, "True", REASON_UPDATED, "old", at(0));
        let cases: Vec<(&str, CloneSetStatus, CloneSetStatus, bool)> = vec![
            ("both without condition", base.clone(), base.clone(), false),
            ("condition added", base.clone(), with(cond.clone()), true),
            ("condition removed", with(cond.clone()), base.clone(), true),
            ("same condition", with(cond.clone()), with(cond.clone()), false),
            (
                "status changed",
                with(cond.clone()),
                with(CloneSetCondition { status: "False".into(), ..cond.clone() }),
                true,
            ),
            (
                "reason changed",
                with(cond.clone()),
                with(CloneSetCondition { reason: REASON_AVAILABLE.into(), ..cond.clone() }),
                true,
            ),
            (
                "message changed only",
                with(cond.clone()),
                with(CloneSetCondition { message: "new".into(), ..cond.clone() }),
                false,
            ),
            (
                "times changed only",
                with(cond.clone()),
                with(CloneSetCondition { last_update_time: Some(Time(at(60))), ..cond.clone() }),
                false,
            ),
            (
                "newer generation",
                base.clone(),
                CloneSetStatus { observed_generation: 1, ..base.clone() },
                true,
            ),
            (
                "count changed",
                base.clone(),
                CloneSetStatus { updated_ready_replicas: 2, ..base.clone() },
                true,
            ),
            (
                "revision changed",
                base.clone(),
                CloneSetStatus { update_revision: "b".into(), ..base.clone() },
                true,
            ),
            (
                "collision count alone",
                base.clone(),
                CloneSetStatus { collision_count: Some(1), ..base.clone() },
                false,
            ),
        ];
        for (name, old, new, expected) in cases {
            assert_eq!(status_changed(&old, &new), expected, "{name}");
        }
    }

    /// upstream `TestGetRequeueSecondsFromCondition`.
    #[test]
    fn requeue_rounding() {
        let cs = cloneset(1, Some(5));
        let cond =
            |updated: i64| new_condition(CONDITION_PROGRESSING, "True", REASON_UPDATED, "", at(updated));
        assert_eq!(requeue_for_deadline(&cs, &cond(95), at(100)), None, "exactly at the deadline");
        assert_eq!(requeue_for_deadline(&cs, &cond(90), at(100)), None, "past the deadline");
        assert_eq!(
            requeue_for_deadline(&cs, &cond(99), at(100)),
            Some(Duration::from_secs(5)),
            "4s left, plus one"
        );
        let half = Timestamp::from_millisecond(100_500).unwrap();
        assert_eq!(
            requeue_for_deadline(&cs, &cond(96), half),
            Some(Duration::from_millis(500)),
            "under a second: as is"
        );
    }
}
