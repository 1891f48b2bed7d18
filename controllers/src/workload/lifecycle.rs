//! The lifecycle state machine of a workload's pods at the start of an update round (upstream
//! `refreshPodState`, after the in-place engine's own refresh), one for CloneSet and Advanced
//! StatefulSet:
//!
//! - `PreparingNormal` -> `Normal` once every preNormal handler is on the pod; without a
//!   preNormal hook, as the workload's [`PreparingNormalRule`] says (CloneSet waits for the pod
//!   to be scheduled, Advanced StatefulSet moves at once);
//! - `PreparingUpdate` at the update revision (a rollback made the update unnecessary) and
//!   `Updating` once the in-place update completed -> `Updated` while the inPlaceUpdate hook is
//!   not fully back on the pod, else `Normal`;
//! - `Updated` -> `Normal` once the hook is fully back (or there is none).
//!
//! What differs between the workloads is given by the caller: the workload's `lifecycle`, whether
//! the pod is at the update revision (each workload compares revisions its own way), the in-place
//! engine's completion verdict and the [`PreparingNormalRule`].

use k8s_openapi::api::core::v1::Pod;
use kruise_crds::common::{Lifecycle, LifecycleState};

use super::pods::{is_pod_all_hooked, is_pod_scheduled, lifecycle_state};

/// When a pod in `PreparingNormal` becomes `Normal` if the workload has no preNormal hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreparingNormalRule {
    /// Once the pod is bound to a node (CloneSet, upstream `HasPodScheduled`).
    OnceScheduled,
    /// At once (Advanced StatefulSet).
    AtOnce,
}

/// A lifecycle move decided by [`refresh_lifecycle_state`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LifecycleTransition {
    /// The state to write (nothing to do if the pod is already there).
    pub state: LifecycleState,
    /// `lifecycle.inPlaceUpdate.markPodNotReady`, applied with the move: the move may lift the
    /// NotReady mark the hook put on the pod when it entered `PreparingUpdate`.
    pub mark_pod_not_ready: bool,
}

impl LifecycleTransition {
    /// Whether the move lifts the NotReady mark the inPlaceUpdate hook put on the pod in
    /// `PreparingUpdate` (upstream `executePodNotReadyPolicy`): once the update is done, at
    /// `Updated`, so the pod serves again while the hook's handler is still off it; and at
    /// `Normal`, which a pod reaches directly when the handler came back before the update
    /// completed.
    pub fn releases_update_hold(&self) -> bool {
        self.mark_pod_not_ready && matches!(self.state, LifecycleState::Updated | LifecycleState::Normal)
    }
}

/// The lifecycle move of one pod, if any (see the module docs for the moves). `lifecycle` is the
/// workload's `spec.lifecycle`; `at_update_revision` whether the pod is at the update revision;
/// `in_place_update_completed` the in-place engine's verdict that the pod runs everything its
/// last in-place update asked for; `preparing_normal` what a pod in `PreparingNormal` waits for
/// when there is no preNormal hook.
pub fn refresh_lifecycle_state(
    lifecycle: Option<&Lifecycle>,
    pod: &Pod,
    at_update_revision: bool,
    in_place_update_completed: bool,
    preparing_normal: PreparingNormalRule,
) -> Option<LifecycleTransition> {
    let in_place_hook = lifecycle.and_then(|l| l.in_place_update.as_ref());
    let after_update = || {
        if lifecycle.is_some() && !is_pod_all_hooked(in_place_hook, pod) {
            LifecycleState::Updated
        } else {
            LifecycleState::Normal
        }
    };
    let state = match lifecycle_state(pod) {
        LifecycleState::PreparingNormal => {
            let normal = match lifecycle.and_then(|l| l.pre_normal.as_ref()) {
                None => match preparing_normal {
                    PreparingNormalRule::OnceScheduled => is_pod_scheduled(pod),
                    PreparingNormalRule::AtOnce => true,
                },
                Some(hook) => is_pod_all_hooked(Some(hook), pod),
            };
            normal.then_some(LifecycleState::Normal)
        }
        LifecycleState::PreparingUpdate => at_update_revision.then(after_update),
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

    use k8s_openapi::api::core::v1::PodSpec;
    use kruise_crds::common::{LIFECYCLE_STATE_KEY, LifecycleHook, well_known::CONTROLLER_REVISION_HASH};

    use super::*;
    use crate::workload::pods::{equal_to_revision_hash, revision_hash};

    /// A pod at `revision`, bound to a node.
    struct P(Pod);

    impl P {
        fn new(revision: &str) -> Self {
            let mut pod = Pod::default();
            pod.metadata.labels = Some([(CONTROLLER_REVISION_HASH.to_string(), revision.to_string())].into());
            pod.spec = Some(PodSpec { node_name: Some("node".into()), ..Default::default() });
            P(pod)
        }
        fn label(mut self, key: &str, value: &str) -> Self {
            self.0.metadata.labels.get_or_insert_default().insert(key.into(), value.into());
            self
        }
        fn state(self, state: &str) -> Self {
            self.label(LIFECYCLE_STATE_KEY, state)
        }
        fn unscheduled(mut self) -> Self {
            self.0.spec = Some(PodSpec::default());
            self
        }
    }

    fn hook(key: &str, value: &str) -> LifecycleHook {
        LifecycleHook { labels_handler: [(key.to_string(), value.to_string())].into(), ..Default::default() }
    }

    /// CloneSet's cases, adapted from upstream `TestUpdate`'s lifecycle cases: the pod is at the
    /// update revision `new` by full name or short hash, and an unscheduled pod stays in
    /// `PreparingNormal`.
    #[test]
    fn cloneset_transitions() {
        let in_place = Lifecycle { in_place_update: Some(hook("hook", "true")), ..Default::default() };
        let pre_normal = Lifecycle { pre_normal: Some(hook("ok", "yes")), ..Default::default() };
        let (plain, hooked, pre_normal) = (None, Some(&in_place), Some(&pre_normal));
        let to = |state: LifecycleState| Some(LifecycleTransition { state, mark_pod_not_ready: false });
        // (case, lifecycle, pod, in-place completed, expected)
        let cases: Vec<(&str, Option<&Lifecycle>, Pod, bool, Option<LifecycleTransition>)> = vec![
            (
                "preparingNormal -> Normal once scheduled",
                plain,
                P::new("new").state("PreparingNormal").0,
                false,
                to(LifecycleState::Normal),
            ),
            (
                "not scheduled stays",
                plain,
                P::new("new").state("PreparingNormal").unscheduled().0,
                false,
                None,
            ),
            (
                "preNormal hook absent stays",
                pre_normal,
                P::new("new").state("PreparingNormal").0,
                false,
                None,
            ),
            (
                "preNormal hook present -> Normal",
                pre_normal,
                P::new("new").state("PreparingNormal").label("ok", "yes").unscheduled().0,
                false,
                to(LifecycleState::Normal),
            ),
            ("updating not completed stays", plain, P::new("new").state("Updating").0, false, None),
            (
                "updating completed -> Normal",
                plain,
                P::new("new").state("Updating").0,
                true,
                to(LifecycleState::Normal),
            ),
            (
                "updating completed, hook removed -> Updated",
                hooked,
                P::new("new").state("Updating").0,
                true,
                to(LifecycleState::Updated),
            ),
            (
                "updating completed, hook back -> Normal",
                hooked,
                P::new("new").state("Updating").label("hook", "true").0,
                true,
                to(LifecycleState::Normal),
            ),
            (
                "preparingUpdate rolled back -> Updated",
                hooked,
                P::new("new").state("PreparingUpdate").0,
                false,
                to(LifecycleState::Updated),
            ),
            (
                "preparingUpdate at old revision stays",
                hooked,
                P::new("old").state("PreparingUpdate").0,
                false,
                None,
            ),
            (
                "updated with hook back -> Normal",
                hooked,
                P::new("new").state("Updated").label("hook", "true").0,
                false,
                to(LifecycleState::Normal),
            ),
            ("updated without hook back stays", hooked, P::new("new").state("Updated").0, false, None),
            (
                "updated and no hook -> Normal",
                plain,
                P::new("new").state("Updated").0,
                false,
                to(LifecycleState::Normal),
            ),
            ("normal stays", plain, P::new("new").state("Normal").0, true, None),
        ];
        for (name, lifecycle, pod, completed, expected) in cases {
            let at_update = equal_to_revision_hash(&pod, "new");
            let got = refresh_lifecycle_state(
                lifecycle,
                &pod,
                at_update,
                completed,
                PreparingNormalRule::OnceScheduled,
            );
            assert_eq!(got, expected, "{name}");
        }
    }

    /// Advanced StatefulSet's cases, upstream `TestUpdateWithLifecycleHook` (the refresh cases):
    /// the pod is at the update revision `r1` when its revision label is exactly that, and a new
    /// pod without preNormal hook becomes `Normal` at once.
    #[test]
    fn statefulset_transitions() {
        let hooked = Lifecycle {
            pre_normal: Some(hook("normal-gate", "true")),
            in_place_update: Some(LifecycleHook { mark_pod_not_ready: true, ..hook("update-gate", "true") }),
            ..Default::default()
        };
        let (plain, hooked) = (None, Some(&hooked));
        let state = |s| P::new("r1").state(s);
        use LifecycleState::*;
        // (case, lifecycle, pod, in-place completed, expected state)
        let cases: Vec<(&str, Option<&Lifecycle>, Pod, bool, Option<LifecycleState>)> = vec![
            ("new pod, no hook", plain, state("PreparingNormal").0, false, Some(Normal)),
            (
                "new pod, no hook, unscheduled",
                plain,
                state("PreparingNormal").unscheduled().0,
                false,
                Some(Normal),
            ),
            ("new pod, hook missing", hooked, state("PreparingNormal").0, false, None),
            (
                "new pod, hook present",
                hooked,
                state("PreparingNormal").label("normal-gate", "true").0,
                false,
                Some(Normal),
            ),
            ("updating, not done", plain, state("Updating").0, false, None),
            ("updating, done, no lifecycle", plain, state("Updating").0, true, Some(Normal)),
            ("updating, done, hook off", hooked, state("Updating").0, true, Some(Updated)),
            (
                "updating, done, hook back",
                hooked,
                state("Updating").label("update-gate", "true").0,
                true,
                Some(Normal),
            ),
            ("updated, hook off", hooked, state("Updated").0, true, None),
            (
                "updated, hook back",
                hooked,
                state("Updated").label("update-gate", "true").0,
                true,
                Some(Normal),
            ),
            ("updated, no hook", plain, state("Updated").0, true, Some(Normal)),
            ("preparing update, rolled back", hooked, state("PreparingUpdate").0, false, Some(Updated)),
            (
                "preparing update, other revision",
                hooked,
                P::new("r0").state("PreparingUpdate").0,
                false,
                None,
            ),
            ("normal", hooked, state("Normal").0, true, None),
        ];
        let refresh = |lifecycle, pod: &Pod, completed| {
            let at_update = revision_hash(pod) == "r1";
            refresh_lifecycle_state(lifecycle, pod, at_update, completed, PreparingNormalRule::AtOnce)
        };
        for (name, lifecycle, pod, completed, expected) in cases {
            let got = refresh(lifecycle, &pod, completed);
            assert_eq!(got.as_ref().map(|t| t.state.clone()), expected, "{name}");
        }
        let release = refresh(hooked, &state("Updating").0, true).unwrap();
        assert!(release.releases_update_hold());
    }

    #[test]
    fn in_place_update_hold_is_lifted_once_updated() {
        let cases = [
            (LifecycleState::Updated, true, true),
            (LifecycleState::Normal, true, true),
            (LifecycleState::PreparingUpdate, true, false),
            (LifecycleState::Updating, true, false),
            (LifecycleState::Updated, false, false),
            (LifecycleState::Normal, false, false),
        ];
        for (state, mark_pod_not_ready, lifted) in cases {
            let transition = LifecycleTransition { state: state.clone(), mark_pod_not_ready };
            assert_eq!(
                transition.releases_update_hold(),
                lifted,
                "{state:?} markPodNotReady={mark_pod_not_ready}"
            );
        }
    }
}
