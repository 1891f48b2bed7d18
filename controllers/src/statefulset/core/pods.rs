//! How the Advanced StatefulSet controller classifies one pod (upstream `stateful_set_utils.go`):
//! created, pending, finished, terminating, running and ready, available for `minReadySeconds`,
//! healthy; its revision and lifecycle state. A pod in a lifecycle state other than `Normal`
//! (or none) is neither available nor healthy, which is how hooks hold a rollout.

use std::time::Duration;

use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};
use kruise_crds::common::{
    LIFECYCLE_STATE_KEY, LifecycleHook, LifecycleState, well_known::CONTROLLER_REVISION_HASH,
};

/// The pod's lifecycle state (an absent label is the unset state, which counts as `Normal`).
pub fn lifecycle_state(pod: &Pod) -> LifecycleState {
    LifecycleState::from(label(pod, LIFECYCLE_STATE_KEY).unwrap_or_default())
}

fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref().and_then(|l| l.get(key)).map(String::as_str)
}

fn state_is_normal(pod: &Pod) -> bool {
    let state = lifecycle_state(pod);
    state.is_unset() || state == LifecycleState::Normal
}

/// The pod's phase, empty when not reported.
pub fn phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default()
}

/// Whether the API server has the pod (it has a phase; upstream `isCreated`).
pub fn is_created(pod: &Pod) -> bool {
    !phase(pod).is_empty()
}

/// Phase `Pending`: its PVCs may still be missing.
pub fn is_pending(pod: &Pod) -> bool {
    phase(pod) == "Pending"
}

/// Phase `Failed` or `Succeeded`: the pod is replaced.
pub fn is_finished(pod: &Pod) -> bool {
    matches!(phase(pod), "Failed" | "Succeeded")
}

/// Has a deletionTimestamp.
pub fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// The `Ready` condition, if the pod reports one.
fn ready_condition(pod: &Pod) -> Option<&k8s_openapi::api::core::v1::PodCondition> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == "Ready")
}

/// Running with `Ready=True` (upstream `isRunningAndReady`).
pub fn is_running_and_ready(pod: &Pod) -> bool {
    phase(pod) == "Running" && ready_condition(pod).is_some_and(|c| c.status == "True")
}

/// Whether the pod is available (upstream `isRunningAndAvailable`): lifecycle `Normal` (or
/// unset), running and ready for more than `min_ready_seconds`. When it is ready but not yet for
/// long enough, the time left comes with the answer (the reconcile looks again then); a pod
/// without a recorded transition time waits the whole `min_ready_seconds`.
pub fn running_and_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> (bool, Option<Duration>) {
    if !state_is_normal(pod) || !is_running_and_ready(pod) {
        return (false, None);
    }
    if min_ready_seconds <= 0 {
        return (true, None);
    }
    let window = Duration::from_secs(u64::try_from(min_ready_seconds).unwrap_or_default());
    let Some(since) = ready_condition(pod).and_then(|c| c.last_transition_time.as_ref()).map(|t| t.0) else {
        return (false, Some(window));
    };
    let elapsed: Result<Duration, _> = Duration::try_from(now.duration_since(since));
    match elapsed {
        Ok(elapsed) if elapsed >= window => (true, None),
        Ok(elapsed) => (false, Some(window - elapsed)),
        // The transition is in the future (clock skew): wait the whole window.
        Err(_) => (false, Some(window)),
    }
}

/// Running, ready, not terminating and in lifecycle `Normal` (upstream `isHealthy`).
pub fn is_healthy(pod: &Pod) -> bool {
    state_is_normal(pod) && is_running_and_ready(pod) && !is_terminating(pod)
}

/// The revision in the pod's `controller-revision-hash` label (empty when missing).
pub fn revision_of(pod: &Pod) -> &str {
    label(pod, CONTROLLER_REVISION_HASH).unwrap_or_default()
}

/// Whether the pod counts as updated (upstream `revision.IsPodUpdate`): its revision label
/// names the update revision (or its hash), or, with gate `PreparingUpdateAsUpdate`, it waits in
/// `PreparingUpdate`.
pub fn is_pod_updated(pod: &Pod, update_revision: &str, preparing_update_as_update: bool) -> bool {
    if preparing_update_as_update && lifecycle_state(pod) == LifecycleState::PreparingUpdate {
        return true;
    }
    let revision = revision_of(pod);
    revision == update_revision || short_hash(revision) == short_hash(update_revision)
}

fn short_hash(revision: &str) -> &str {
    revision.rsplit('-').next().unwrap_or(revision)
}

fn has_finalizer(pod: &Pod, finalizer: &str) -> bool {
    pod.metadata.finalizers.iter().flatten().any(|f| f == finalizer)
}

/// Whether any handler of the hook is on the pod (upstream `IsPodHooked`).
pub fn is_pod_hooked(hook: Option<&LifecycleHook>, pod: &Pod) -> bool {
    let Some(hook) = hook else { return false };
    hook.finalizers_handler.iter().any(|f| has_finalizer(pod, f))
        || hook.labels_handler.iter().any(|(key, value)| label(pod, key) == Some(value.as_str()))
}

/// Whether every handler of the hook is on the pod (upstream `IsPodAllHooked`; no hook is never
/// "all hooked").
pub fn is_pod_all_hooked(hook: Option<&LifecycleHook>, pod: &Pod) -> bool {
    let Some(hook) = hook else { return false };
    hook.finalizers_handler.iter().all(|f| has_finalizer(pod, f))
        && hook.labels_handler.iter().all(|(key, value)| label(pod, key) == Some(value.as_str()))
}

/// Whether the pod carries `apps.kruise.io/specified-delete` (any value): delete it first.
pub fn is_specified_delete(pod: &Pod) -> bool {
    pod.metadata
        .labels
        .as_ref()
        .is_some_and(|l| l.contains_key(kruise_crds::common::well_known::SPECIFIED_DELETE))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use k8s_openapi::jiff::SignedDuration;

    use super::*;
    use crate::statefulset::core::fixtures::{P, now};

    /// Upstream `TestIsRunningAndReady`, `TestIsRunningAndAvailable`, `TestGetMinReadySeconds`.
    #[test]
    fn availability_table() {
        let just = now().checked_sub(SignedDuration::from_secs(3)).unwrap();
        let cases: Vec<(&str, Pod, i32, (bool, Option<Duration>))> = vec![
            ("ready long ago", P::new(0, "r").pod(), 10, (true, None)),
            ("ready, no window", P::new(0, "r").ready_since(now()).pod(), 0, (true, None)),
            (
                "ready 3s of 10s",
                P::new(0, "r").ready_since(just).pod(),
                10,
                (false, Some(Duration::from_secs(7))),
            ),
            ("pending", P::new(0, "r").phase("Pending").pod(), 0, (false, None)),
            ("running not ready", P::new(0, "r").not_ready().pod(), 0, (false, None)),
            (
                "preparing delete",
                P::new(0, "r").state(LifecycleState::PreparingDelete).pod(),
                0,
                (false, None),
            ),
            ("updated", P::new(0, "r").state(LifecycleState::Updated).pod(), 0, (false, None)),
        ];
        for (name, pod, min_ready, expected) in cases {
            assert_eq!(running_and_available(&pod, min_ready, now()), expected, "{name}");
        }
        let mut no_time = P::new(0, "r").pod();
        no_time.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].last_transition_time = None;
        assert_eq!(running_and_available(&no_time, 5, now()), (false, Some(Duration::from_secs(5))));
    }

    #[test]
    fn health_and_phases() {
        assert!(is_healthy(&P::new(0, "r").pod()));
        assert!(!is_healthy(&P::new(0, "r").terminating().pod()));
        assert!(!is_healthy(&P::new(0, "r").state(LifecycleState::PreparingNormal).pod()));
        assert!(is_healthy(&P::new(0, "r").label(LIFECYCLE_STATE_KEY, "").pod()), "unset counts as Normal");
        assert!(is_finished(&P::new(0, "r").phase("Failed").pod()));
        assert!(is_finished(&P::new(0, "r").phase("Succeeded").pod()));
        assert!(is_pending(&P::new(0, "r").phase("Pending").pod()));
        assert!(!is_created(&Pod::default()));
    }

    #[test]
    fn updated_pods() {
        let pod = P::new(0, "web-abc").pod();
        assert!(is_pod_updated(&pod, "web-abc", false));
        assert!(is_pod_updated(&pod, "abc", false), "short hash");
        assert!(!is_pod_updated(&pod, "web-def", false));
        let preparing = P::new(0, "web-abc").state(LifecycleState::PreparingUpdate).pod();
        assert!(is_pod_updated(&preparing, "web-def", true));
        assert!(!is_pod_updated(&preparing, "web-def", false));
    }
}
