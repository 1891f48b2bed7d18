//! How the Advanced StatefulSet controller classifies one pod beyond the predicates every
//! workload shares ([`crate::workload::pods`]: lifecycle state, revision, hooks, specified
//! delete, terminating), following upstream `stateful_set_utils.go`: created, pending, finished,
//! running and ready, available for `minReadySeconds` (with the time left), healthy. A pod in a
//! lifecycle state other than `Normal` (or none) is neither available nor healthy, which is how
//! hooks hold a rollout.

use std::time::Duration;

use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};

use crate::workload::pods::{
    POD_READY, is_lifecycle_normal, is_pod_ready, is_terminating, phase, pod_condition,
};

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

/// Running with `Ready=True` (upstream `isRunningAndReady`).
pub fn is_running_and_ready(pod: &Pod) -> bool {
    phase(pod) == "Running" && is_pod_ready(pod)
}

/// Whether the pod is available (upstream `isRunningAndAvailable`): lifecycle `Normal` (or
/// unset), running and ready for more than `min_ready_seconds`. When it is ready but not yet for
/// long enough, the time left comes with the answer (the reconcile looks again then); a pod
/// without a recorded transition time waits the whole `min_ready_seconds`.
pub fn running_and_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> (bool, Option<Duration>) {
    if !is_lifecycle_normal(pod) || !is_running_and_ready(pod) {
        return (false, None);
    }
    if min_ready_seconds <= 0 {
        return (true, None);
    }
    let window = Duration::from_secs(u64::try_from(min_ready_seconds).unwrap_or_default());
    let Some(since) =
        pod_condition(pod, POD_READY).and_then(|c| c.last_transition_time.as_ref()).map(|t| t.0)
    else {
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
    is_lifecycle_normal(pod) && is_running_and_ready(pod) && !is_terminating(pod)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use k8s_openapi::jiff::SignedDuration;

    use kruise_crds::common::{LIFECYCLE_STATE_KEY, LifecycleState};

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
}
