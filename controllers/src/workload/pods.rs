//! How a workload controller classifies one pod: its lifecycle state, whether it is ready,
//! available, active or terminating, which revision it belongs to, whether a lifecycle hook holds
//! it, and the numbers the ordering of pods reads (deletion cost, restarts, creation time).
//!
//! CloneSet, Advanced StatefulSet and Advanced DaemonSet build their scale, update and status
//! decisions from these predicates, so each one follows the upstream helper it replaces (named
//! in its doc) exactly, including the odd corners (a missing `lastTransitionTime` makes a pod
//! unavailable when `minReadySeconds > 0`; a pod with no `InPlaceUpdateReady` condition is not
//! held back by it). Predicates that read a particular workload's spec stay with that workload
//! (e.g. [`crate::cloneset::core::pods::is_specified_delete`]).

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Pod, PodCondition},
    jiff::{SignedDuration, Timestamp},
};
use kruise_crds::common::{
    IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_GRACE_KEY_OLD, IN_PLACE_UPDATE_READY, LIFECYCLE_STATE_KEY,
    LifecycleHook, LifecycleState,
    well_known::{CONTROLLER_REVISION_HASH, POD_DELETION_COST, SPECIFIED_DELETE},
};

use super::revision::short_hash;

/// Condition type `Ready` of a pod.
pub const POD_READY: &str = "Ready";

fn labels(pod: &Pod) -> Option<&BTreeMap<String, String>> {
    pod.metadata.labels.as_ref()
}

fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    labels(pod).and_then(|l| l.get(key)).map(String::as_str)
}

/// The pod's lifecycle state from its `lifecycle.apps.kruise.io/state` label; an absent label is
/// the empty (unset) state, which the controller treats like `Normal` for availability.
pub fn lifecycle_state(pod: &Pod) -> LifecycleState {
    LifecycleState::from(label(pod, LIFECYCLE_STATE_KEY).unwrap_or_default())
}

/// Whether the pod's lifecycle state is `Normal` or unset: any other state (a hook holding it, an
/// update in progress) makes it unavailable and unhealthy, which is how hooks hold a rollout.
pub fn is_lifecycle_normal(pod: &Pod) -> bool {
    let state = lifecycle_state(pod);
    state.is_unset() || state == LifecycleState::Normal
}

/// Whether the pod is in `PreparingDelete`: it was chosen for deletion and waits for its
/// preDelete hook; such pods count as unavailable and are never updated.
pub fn is_preparing_delete(pod: &Pod) -> bool {
    lifecycle_state(pod) == LifecycleState::PreparingDelete
}

/// Whether the pod carries the `apps.kruise.io/specified-delete` label (any value), the way users
/// and a recreating update ask a workload to delete one pod (first, and replace it).
pub fn has_specified_delete_label(pod: &Pod) -> bool {
    labels(pod).is_some_and(|l| l.contains_key(SPECIFIED_DELETE))
}

/// The first condition of the given type in the pod's status, as Kubernetes' `GetPodCondition`.
pub fn pod_condition<'a>(pod: &'a Pod, condition_type: &str) -> Option<&'a PodCondition> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == condition_type)
}

/// Whether the pod's `Ready` condition is `True` (Kubernetes `podutil.IsPodReady`).
pub fn is_pod_ready(pod: &Pod) -> bool {
    pod_condition(pod, POD_READY).is_some_and(|c| c.status == "True")
}

/// When the pod last became Ready, if it is Ready and the time is recorded.
pub fn pod_ready_time(pod: &Pod) -> Option<Timestamp> {
    pod_condition(pod, POD_READY)
        .filter(|c| c.status == "True")
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0)
}

/// Whether the pod has been Ready for more than `min_ready_seconds` at `now` (Kubernetes
/// `podutil.IsPodAvailable`): with 0 any Ready pod is available; otherwise the Ready condition
/// needs a transition time strictly more than `min_ready_seconds` before `now`.
pub fn is_ready_for(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    if !is_pod_ready(pod) {
        return false;
    }
    if min_ready_seconds <= 0 {
        return true;
    }
    let Some(since) = pod_ready_time(pod) else {
        return false;
    };
    since
        .checked_add(SignedDuration::from_secs(i64::from(min_ready_seconds)))
        .is_ok_and(|ready_until| ready_until < now)
}

/// Whether the pod is in phase `Running`.
pub fn is_running(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

/// The pod's phase, empty when unreported.
pub fn phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default()
}

/// Whether the pod is Running and Ready for `min_ready_seconds` (upstream
/// `IsRunningAndAvailable`).
pub fn is_running_and_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    is_running(pod) && is_ready_for(pod, min_ready_seconds, now)
}

/// Whether the pod's `InPlaceUpdateReady` condition, if present, is `True`. A pod without the
/// condition is not held back: old pods and pods of other controllers lack it.
pub fn in_place_update_ready(pod: &Pod) -> bool {
    pod_condition(pod, IN_PLACE_UPDATE_READY).is_none_or(|c| c.status == "True")
}

/// Whether the pod is Running, Ready for `min_ready_seconds` and not in the middle of an in-place
/// update (upstream `commonControl.IsPodUpdateReady`). With `min_ready_seconds = 0` this is what
/// `status.readyReplicas` counts.
pub fn is_pod_update_ready(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    is_running_and_available(pod, min_ready_seconds, now) && in_place_update_ready(pod)
}

/// Whether the pod counts in `status.readyReplicas`: update-ready with no minReadySeconds,
/// whatever its lifecycle state (upstream `IsPodUpdateReady(pod, 0)`).
pub fn is_pod_ready_for_status(pod: &Pod, now: Timestamp) -> bool {
    is_pod_update_ready(pod, 0, now)
}

/// Whether deleting the pod would take a serving pod away (upstream `isPodReady`): available with
/// no minReadySeconds. Scale uses it to charge deletions against `deleteReadyLimit`; pods that
/// are not serving are deleted without limit.
pub fn is_ready_and_normal(pod: &Pod, now: Timestamp) -> bool {
    is_pod_available(pod, 0, now)
}

/// Whether the pod is available (upstream `IsPodAvailable`): lifecycle state empty or `Normal`,
/// Running, Ready for `min_ready_seconds`, and its `InPlaceUpdateReady` condition not `False`.
pub fn is_pod_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    if !is_lifecycle_normal(pod) {
        return false;
    }
    is_pod_update_ready(pod, min_ready_seconds, now)
}

/// The pod's `controller-revision-hash` label, empty when absent.
pub fn revision_hash(pod: &Pod) -> &str {
    label(pod, CONTROLLER_REVISION_HASH).unwrap_or_default()
}

/// Whether the pod belongs to `revision`, comparing full names and then short hashes (upstream
/// `EqualToRevisionHash`): pods labelled with either form match (gate `CloneSetShortHash` writes
/// the short one; see [`short_hash`]).
pub fn equal_to_revision_hash(pod: &Pod, revision: &str) -> bool {
    let hash = revision_hash(pod);
    hash == revision || short_hash(hash) == short_hash(revision)
}

/// Whether the pod counts as updated (upstream `revision.IsPodUpdate`): at the update revision, or,
/// with gate `PreparingUpdateAsUpdate`, waiting in `PreparingUpdate` to be updated in place.
pub fn is_pod_updated(pod: &Pod, update_revision: &str, preparing_update_as_update: bool) -> bool {
    if preparing_update_as_update && lifecycle_state(pod) == LifecycleState::PreparingUpdate {
        return true;
    }
    equal_to_revision_hash(pod, update_revision)
}

/// Whether the pod is active: not Succeeded or Failed and not being deleted (Kubernetes
/// `IsPodActive`). Only active pods are managed and counted.
pub fn is_pod_active(pod: &Pod) -> bool {
    let phase = phase(pod);
    phase != "Succeeded" && phase != "Failed" && pod.metadata.deletion_timestamp.is_none()
}

/// Whether the pod has a deletionTimestamp (it is being deleted).
pub fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// Whether the pod has been bound to a node (upstream `HasPodScheduled`).
pub fn is_pod_scheduled(pod: &Pod) -> bool {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty())
}

/// The node the pod is bound to, empty when unscheduled.
pub fn node_name(pod: &Pod) -> &str {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or_default()
}

/// Whether the pod waits out an in-place update grace period (annotation
/// `apps.kruise.io/inplace-update-grace`, or its legacy name); such pods are not picked again.
pub fn has_in_place_update_grace(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(IN_PLACE_UPDATE_GRACE_KEY).or_else(|| a.get(IN_PLACE_UPDATE_GRACE_KEY_OLD)))
        .is_some_and(|value| !value.is_empty())
}

fn has_finalizer(pod: &Pod, finalizer: &str) -> bool {
    pod.metadata.finalizers.iter().flatten().any(|f| f == finalizer)
}

/// Whether any handler of the hook holds the pod: one of its finalizers is on the pod, or one of
/// its labels has the hook's value (upstream `IsPodHooked`). No hook holds nothing.
pub fn is_pod_hooked(hook: Option<&LifecycleHook>, pod: &Pod) -> bool {
    let Some(hook) = hook else {
        return false;
    };
    hook.finalizers_handler.iter().any(|f| has_finalizer(pod, f))
        || hook.labels_handler.iter().any(|(key, value)| label(pod, key) == Some(value.as_str()))
}

/// Whether every handler of the hook is present on the pod (upstream `IsPodAllHooked`). No hook
/// is never "all hooked".
pub fn is_pod_all_hooked(hook: Option<&LifecycleHook>, pod: &Pod) -> bool {
    let Some(hook) = hook else {
        return false;
    };
    hook.finalizers_handler.iter().all(|f| has_finalizer(pod, f))
        && hook.labels_handler.iter().all(|(key, value)| label(pod, key) == Some(value.as_str()))
}

/// The pod's `controller.kubernetes.io/pod-deletion-cost`, 0 when absent or invalid (a leading
/// `+`, leading zeros or a value outside int32 are invalid, as in Kubernetes).
pub fn deletion_cost(pod: &Pod) -> i32 {
    let Some(value) = pod.metadata.annotations.as_ref().and_then(|a| a.get(POD_DELETION_COST)) else {
        return 0;
    };
    let valid_start = match value.as_bytes().first() {
        Some(b'-') => true,
        Some(b'0') => value == "0",
        Some(b'1'..=b'9') => true,
        _ => false,
    };
    if !valid_start {
        return 0;
    }
    value.parse::<i32>().unwrap_or(0)
}

/// The highest restart count among the pod's containers.
pub fn max_container_restarts(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
        .max(0)
}

/// The pod's creation time, if known.
pub fn creation_time(pod: &Pod) -> Option<Timestamp> {
    pod.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use k8s_openapi::{
        api::core::v1::{PodSpec, PodStatus},
        apimachinery::pkg::apis::meta::v1::Time,
    };

    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap()
    }

    struct P(Pod);

    impl P {
        fn new() -> Self {
            P(Pod::default())
        }
        fn label(mut self, key: &str, value: &str) -> Self {
            self.0.metadata.labels.get_or_insert_default().insert(key.into(), value.into());
            self
        }
        fn annotation(mut self, key: &str, value: &str) -> Self {
            self.0.metadata.annotations.get_or_insert_default().insert(key.into(), value.into());
            self
        }
        fn phase(mut self, phase: &str) -> Self {
            self.0.status.get_or_insert_default().phase = Some(phase.into());
            self
        }
        fn condition(mut self, type_: &str, status: &str, since: Option<i64>) -> Self {
            self.0.status.get_or_insert_default().conditions.get_or_insert_default().push(PodCondition {
                type_: type_.into(),
                status: status.into(),
                last_transition_time: since.map(|s| Time(at(s))),
                ..Default::default()
            });
            self
        }
        fn ready(self, since: Option<i64>) -> Self {
            self.phase("Running").condition(POD_READY, "True", since)
        }
    }

    #[test]
    fn availability_follows_upstream() {
        let now = at(1000);
        // (case, pod, minReadySeconds, available)
        let cases: Vec<(&str, Pod, i32, bool)> = vec![
            ("running and ready", P::new().ready(None).0, 0, true),
            ("ready but pending", P::new().phase("Pending").condition(POD_READY, "True", None).0, 0, false),
            ("running not ready", P::new().phase("Running").condition(POD_READY, "False", None).0, 0, false),
            ("ready long enough", P::new().ready(Some(900)).0, 10, true),
            ("ready exactly minReadySeconds ago", P::new().ready(Some(990)).0, 10, false),
            ("ready too recently", P::new().ready(Some(995)).0, 10, false),
            ("no transition time with minReadySeconds", P::new().ready(None).0, 10, false),
            ("lifecycle Normal", P::new().ready(None).label(LIFECYCLE_STATE_KEY, "Normal").0, 0, true),
            (
                "lifecycle PreparingNormal",
                P::new().ready(None).label(LIFECYCLE_STATE_KEY, "PreparingNormal").0,
                0,
                false,
            ),
            ("lifecycle Updating", P::new().ready(None).label(LIFECYCLE_STATE_KEY, "Updating").0, 0, false),
            (
                "in-place update not ready",
                P::new().ready(None).condition(IN_PLACE_UPDATE_READY, "False", None).0,
                0,
                false,
            ),
            (
                "in-place update ready",
                P::new().ready(None).condition(IN_PLACE_UPDATE_READY, "True", None).0,
                0,
                true,
            ),
        ];
        for (name, pod, min_ready, expected) in cases {
            assert_eq!(is_pod_available(&pod, min_ready, now), expected, "{name}");
        }
    }

    #[test]
    fn ready_for_status_ignores_lifecycle_but_not_in_place_condition() {
        let now = at(0);
        let updating = P::new().ready(None).label(LIFECYCLE_STATE_KEY, "Updating").0;
        assert!(is_pod_update_ready(&updating, 0, now));
        assert!(!is_ready_and_normal(&updating, now));
        let mid_update = P::new().ready(None).condition(IN_PLACE_UPDATE_READY, "False", None).0;
        assert!(!is_pod_update_ready(&mid_update, 0, now));
    }

    #[test]
    fn revision_matching_uses_full_or_short_hash() {
        let cases = [
            ("web-abc12", "web-abc12", true),
            ("abc12", "web-abc12", true),
            ("web-abc12", "abc12", true),
            ("web-abc12", "web-def34", false),
            ("", "web-abc12", false),
        ];
        for (label_value, revision, expected) in cases {
            let pod = P::new().label(CONTROLLER_REVISION_HASH, label_value).0;
            assert_eq!(equal_to_revision_hash(&pod, revision), expected, "{label_value} vs {revision}");
        }
        assert_eq!(short_hash("my-web-abc12"), "abc12");
        assert_eq!(short_hash("abc12"), "abc12");
    }

    #[test]
    fn updated_counts_preparing_update_only_with_the_gate() {
        let preparing = P::new()
            .label(CONTROLLER_REVISION_HASH, "web-old")
            .label(LIFECYCLE_STATE_KEY, "PreparingUpdate")
            .0;
        assert!(!is_pod_updated(&preparing, "web-new", false));
        assert!(is_pod_updated(&preparing, "web-new", true));
        let new = P::new().label(CONTROLLER_REVISION_HASH, "web-new").0;
        assert!(is_pod_updated(&new, "web-new", false));
    }

    /// The Advanced StatefulSet's cases (formerly in its own `pods` module).
    #[test]
    fn updated_pods_by_full_or_short_hash() {
        let pod = P::new().label(CONTROLLER_REVISION_HASH, "web-abc").0;
        assert!(is_pod_updated(&pod, "web-abc", false));
        assert!(is_pod_updated(&pod, "abc", false), "short hash");
        assert!(!is_pod_updated(&pod, "web-def", false));
        let preparing = P::new()
            .label(CONTROLLER_REVISION_HASH, "web-abc")
            .label(LIFECYCLE_STATE_KEY, "PreparingUpdate")
            .0;
        assert!(is_pod_updated(&preparing, "web-def", true));
        assert!(!is_pod_updated(&preparing, "web-def", false));
    }

    #[test]
    fn lifecycle_normal_includes_unset() {
        assert!(is_lifecycle_normal(&P::new().0));
        assert!(is_lifecycle_normal(&P::new().label(LIFECYCLE_STATE_KEY, "").0), "unset counts as Normal");
        assert!(is_lifecycle_normal(&P::new().label(LIFECYCLE_STATE_KEY, "Normal").0));
        assert!(!is_lifecycle_normal(&P::new().label(LIFECYCLE_STATE_KEY, "PreparingNormal").0));
        assert!(is_preparing_delete(&P::new().label(LIFECYCLE_STATE_KEY, "PreparingDelete").0));
    }

    #[test]
    fn deletion_cost_parses_like_kubernetes() {
        let cases = [("10", 10), ("-5", -5), ("0", 0), ("+3", 0), ("007", 0), ("x", 0), ("99999999999", 0)];
        for (value, expected) in cases {
            let pod = P::new().annotation(POD_DELETION_COST, value).0;
            assert_eq!(deletion_cost(&pod), expected, "{value}");
        }
        assert_eq!(deletion_cost(&P::new().0), 0);
    }

    #[test]
    fn hooks_any_versus_all() {
        let hook = LifecycleHook {
            labels_handler: [("a".to_string(), "x".to_string()), ("b".to_string(), "y".to_string())].into(),
            finalizers_handler: vec!["f".into()],
            mark_pod_not_ready: false,
        };
        let one = P::new().label("a", "x").0;
        let mut all = P::new().label("a", "x").label("b", "y").0;
        all.metadata.finalizers = Some(vec!["f".into()]);
        let wrong_value = P::new().label("a", "z").0;
        assert!(is_pod_hooked(Some(&hook), &one));
        assert!(!is_pod_all_hooked(Some(&hook), &one));
        assert!(is_pod_all_hooked(Some(&hook), &all));
        assert!(!is_pod_hooked(Some(&hook), &wrong_value));
        assert!(!is_pod_hooked(None, &all));
        assert!(!is_pod_all_hooked(None, &all));
    }

    #[test]
    fn active_and_scheduled() {
        let mut pod = P::new().phase("Running").0;
        assert!(is_pod_active(&pod));
        assert!(!is_pod_scheduled(&pod));
        pod.spec = Some(PodSpec { node_name: Some("n1".into()), ..Default::default() });
        assert!(is_pod_scheduled(&pod));
        assert!(!is_terminating(&pod));
        pod.metadata.deletion_timestamp = Some(Time(at(5)));
        assert!(!is_pod_active(&pod));
        assert!(is_terminating(&pod));
        let failed = Pod {
            status: Some(PodStatus { phase: Some("Failed".into()), ..Default::default() }),
            ..Default::default()
        };
        assert!(!is_pod_active(&failed));
    }
}
