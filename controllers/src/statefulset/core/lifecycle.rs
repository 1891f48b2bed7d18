//! Lifecycle moves at the start of a round (upstream `refreshPodState`, after the in-place
//! engine's own refresh): a new pod leaves `PreparingNormal` once its preNormal hook is fully
//! on it (or there is none); a pod that finished its in-place update (or that a rollback made
//! current again while it waited in `PreparingUpdate`) goes to `Updated` while the inPlaceUpdate
//! hook is not fully back on it, else to `Normal`; an `Updated` pod becomes `Normal` once the
//! hook is back.

use k8s_openapi::api::core::v1::Pod;
use kruise_crds::{apps::v1beta1::StatefulSet, common::LifecycleState};

use super::pods::{is_pod_all_hooked, lifecycle_state, revision_of};

/// A lifecycle move decided by [`refresh_lifecycle_state`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LifecycleTransition {
    /// The state to write.
    pub state: LifecycleState,
    /// `lifecycle.inPlaceUpdate.markPodNotReady`: the move also lifts the NotReady mark the
    /// hook put on the pod when it entered `PreparingUpdate`.
    pub mark_pod_not_ready: bool,
}

impl LifecycleTransition {
    /// Whether the move releases the pod from the NotReady mark of the inPlaceUpdate hook.
    pub fn releases_update_hold(&self) -> bool {
        self.mark_pod_not_ready && matches!(self.state, LifecycleState::Updated | LifecycleState::Normal)
    }
}

/// The lifecycle move of one pod, if any. `in_place_update_completed` is the engine's verdict
/// that the pod runs everything its last in-place update asked for.
pub fn refresh_lifecycle_state(
    set: &StatefulSet,
    pod: &Pod,
    update_revision: &str,
    in_place_update_completed: bool,
) -> Option<LifecycleTransition> {
    let lifecycle = set.spec.lifecycle.as_ref();
    let in_place_hook = lifecycle.and_then(|l| l.in_place_update.as_ref());
    let after_update = || {
        if lifecycle.is_some() && !is_pod_all_hooked(in_place_hook, pod) {
            LifecycleState::Updated
        } else {
            LifecycleState::Normal
        }
    };
    let state = match lifecycle_state(pod) {
        LifecycleState::PreparingNormal => match lifecycle.and_then(|l| l.pre_normal.as_ref()) {
            None => Some(LifecycleState::Normal),
            Some(hook) => is_pod_all_hooked(Some(hook), pod).then_some(LifecycleState::Normal),
        },
        LifecycleState::PreparingUpdate => (revision_of(pod) == update_revision).then(after_update),
        LifecycleState::Updating => in_place_update_completed.then(after_update),
        LifecycleState::Updated => (in_place_hook.is_none() || is_pod_all_hooked(in_place_hook, pod))
            .then_some(LifecycleState::Normal),
        _ => None,
    }?;
    Some(LifecycleTransition {
        state,
        mark_pod_not_ready: in_place_hook.is_some_and(|h| h.mark_pod_not_ready),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use kruise_crds::common::{Lifecycle, LifecycleHook};

    use super::*;
    use crate::statefulset::core::fixtures::{P, set};

    fn hook(key: &str) -> LifecycleHook {
        LifecycleHook { labels_handler: [(key.to_string(), "true".to_string())].into(), ..Default::default() }
    }

    /// Upstream `TestUpdateWithLifecycleHook` (the refresh cases).
    #[test]
    fn transitions() {
        let plain = set(1);
        let mut hooked = set(1);
        hooked.spec.lifecycle = Some(Lifecycle {
            pre_normal: Some(hook("normal-gate")),
            in_place_update: Some(LifecycleHook { mark_pod_not_ready: true, ..hook("update-gate") }),
            ..Default::default()
        });
        let state = |s| P::new(0, "r1").state(s);
        use LifecycleState::*;
        let cases: Vec<(&str, &StatefulSet, Pod, bool, Option<LifecycleState>)> = vec![
            ("new pod, no hook", &plain, state(PreparingNormal).pod(), false, Some(Normal)),
            ("new pod, hook missing", &hooked, state(PreparingNormal).pod(), false, None),
            (
                "new pod, hook present",
                &hooked,
                state(PreparingNormal).label("normal-gate", "true").pod(),
                false,
                Some(Normal),
            ),
            ("updating, not done", &plain, state(Updating).pod(), false, None),
            ("updating, done, no lifecycle", &plain, state(Updating).pod(), true, Some(Normal)),
            ("updating, done, hook off", &hooked, state(Updating).pod(), true, Some(Updated)),
            (
                "updating, done, hook back",
                &hooked,
                state(Updating).label("update-gate", "true").pod(),
                true,
                Some(Normal),
            ),
            ("updated, hook off", &hooked, state(Updated).pod(), true, None),
            (
                "updated, hook back",
                &hooked,
                state(Updated).label("update-gate", "true").pod(),
                true,
                Some(Normal),
            ),
            ("updated, no hook", &plain, state(Updated).pod(), true, Some(Normal)),
            ("preparing update, rolled back", &hooked, state(PreparingUpdate).pod(), false, Some(Updated)),
            (
                "preparing update, other revision",
                &hooked,
                P::new(0, "r0").state(PreparingUpdate).pod(),
                false,
                None,
            ),
            ("normal", &hooked, state(Normal).pod(), true, None),
        ];
        for (name, sts, pod, completed, expected) in cases {
            let got = refresh_lifecycle_state(sts, &pod, "r1", completed);
            assert_eq!(got.as_ref().map(|t| t.state.clone()), expected, "{name}");
        }
        let release = refresh_lifecycle_state(&hooked, &state(Updating).pod(), "r1", true).unwrap();
        assert!(release.releases_update_hold());
    }
}
