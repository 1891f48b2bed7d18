//! Plans the reconciler executes: what scaling does this round (upstream `Scale`), which pods the
//! update takes (upstream `Update` steps 2-5), and how each chosen pod is updated or deleted. The
//! lifecycle moves of `refreshPodState` that come before the update are the shared state machine
//! of [`crate::workload::lifecycle`].
//!
//! Pods are named by their position in the pod slice the plan was computed from. A scale plan is
//! a sequence of stages; the executor runs them in order and stops after the first stage that
//! changed something (a stage whose patches or deletes were all no-ops lets the next one run), as
//! upstream returns after the first modifying step. Creation is the exception: when the plan
//! has a creation stage, scaling ends there whether or not a pod was created (and, as upstream,
//! the update step still runs in that reconcile if none was).

use std::{borrow::Borrow, collections::BTreeSet};

use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};
use kruise_crds::{
    apps::v1beta1::{CloneSet, CloneSetUpdateStrategyType, PodUpdatePolicy},
    common::{LifecycleHook, LifecycleState},
};

use super::{
    diffs::{DiffPurpose, ExpectationDiffs, calculate_diffs_with_expectation},
    options::CoreOptions,
    pods::is_specified_delete,
    ranking::{NodeLabels, choose_pods_to_delete},
    update_order::{limit_update_indexes, update_candidates},
};
use crate::workload::{
    pods::{is_pod_hooked, is_pod_updated, is_ready_and_normal, lifecycle_state},
    update_order::sort_update_indexes,
};

/// Pods to create this round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreatePlan {
    /// Pods from the current revision's template (created first).
    pub current_revision: usize,
    /// Pods from the update revision's template.
    pub update_revision: usize,
    /// Pods scaling wanted before `scaleStrategy.maxUnavailable` limited it; when larger than
    /// the two counts above, emit a `ScaleUpLimited` warning event with the limit.
    pub wanted: usize,
}

impl CreatePlan {
    /// Pods to create in all.
    pub fn total(&self) -> usize {
        self.current_revision + self.update_revision
    }

    /// Whether `scaleStrategy.maxUnavailable` held creation back.
    pub fn limited(&self) -> bool {
        self.wanted > self.total()
    }
}

/// What scaling does this round, stage by stage (see the module docs for how to execute it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScalePlan {
    /// The numbers the plan was derived from (counting PreparingUpdate pods as updated when the
    /// gate says so).
    pub diffs: ExpectationDiffs,
    /// Stage 1: pods in `PreparingDelete` chosen by an earlier scale-in that a scale-up has since
    /// made unnecessary; move each back to `PreparingNormal`.
    pub cancel_preparing_delete: Vec<usize>,
    /// Stage 2: pods to create. When set, the later stages do not run this round; the update
    /// step runs only if no pod was created.
    pub create: Option<CreatePlan>,
    /// Stage 3: pods already in `PreparingDelete`; delete each per [`deletion_action`] (a pod
    /// its preDelete hook still holds stays).
    pub delete_preparing_delete: Vec<usize>,
    /// Stage 4: pods asked to be deleted (label or `podsToDelete`); not-ready ones all, ready ones
    /// up to `deleteReadyLimit`. Delete each per [`deletion_action`].
    pub delete_specified: Vec<usize>,
    /// Stage 5: pods chosen by scale-in (only when no deletion is pending). Delete each per
    /// [`deletion_action`].
    pub scale_in: Vec<usize>,
}

impl ScalePlan {
    /// Whether the plan does nothing.
    pub fn is_empty(&self) -> bool {
        self.cancel_preparing_delete.is_empty()
            && self.create.is_none()
            && self.delete_preparing_delete.is_empty()
            && self.delete_specified.is_empty()
            && self.scale_in.is_empty()
    }
}

/// How to delete one pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeletionAction {
    /// The preDelete hook holds the pod: set lifecycle `PreparingDelete` (nothing to do if it is
    /// already there) and, if asked, mark it NotReady through `KruisePodReady`.
    PrepareDelete {
        /// `lifecycle.preDelete.markPodNotReady`.
        mark_pod_not_ready: bool,
    },
    /// Delete the pod, then the PVCs with its instance id.
    Delete,
}

/// How the pod is deleted (upstream `deletePods`): through `PreparingDelete` while the CloneSet's
/// preDelete hook holds it, directly otherwise.
pub fn deletion_action(cs: &CloneSet, pod: &Pod) -> DeletionAction {
    let hook = cs.spec.lifecycle.as_ref().and_then(|l| l.pre_delete.as_ref());
    if is_pod_hooked(hook, pod) {
        DeletionAction::PrepareDelete { mark_pod_not_ready: hook.is_some_and(|h| h.mark_pod_not_ready) }
    } else {
        DeletionAction::Delete
    }
}

/// Whether a hook of the CloneSet marks pods NotReady (preDelete or inPlaceUpdate): then a pod in
/// `PreparingDelete` is never taken back.
fn lifecycle_marks_not_ready(cs: &CloneSet) -> bool {
    cs.spec.lifecycle.as_ref().is_some_and(|l| {
        l.pre_delete.as_ref().is_some_and(|h| h.mark_pod_not_ready)
            || l.in_place_update.as_ref().is_some_and(|h| h.mark_pod_not_ready)
    })
}

fn count(n: i64) -> usize {
    usize::try_from(n.max(0)).unwrap_or(usize::MAX)
}

/// Plans scaling (upstream `Scale`). `pods` are the CloneSet's active pods; `nodes` carries the
/// labels of their nodes when the template has topology spread constraints (else it may be
/// empty).
pub fn plan_scale<P: Borrow<Pod>>(
    cs: &CloneSet,
    pods: &[P],
    current_revision: &str,
    update_revision: &str,
    options: &CoreOptions,
    nodes: &NodeLabels,
    now: Timestamp,
) -> ScalePlan {
    let mut plan = ScalePlan::default();

    // Pods asked to be deleted and pods waiting in PreparingDelete, counted once each.
    let mut specified = Vec::new();
    let mut preparing = Vec::new();
    let mut pending: BTreeSet<usize> = BTreeSet::new();
    for (i, pod) in pods.iter().enumerate() {
        let pod = pod.borrow();
        if is_specified_delete(cs, pod) {
            specified.push(i);
            pending.insert(i);
        }
        if lifecycle_state(pod) == LifecycleState::PreparingDelete {
            preparing.push(i);
            pending.insert(i);
        }
    }
    let pending = pending.len();

    // Stage 1: a scale-up cancels deletions a scale-in started (unless hooks mark pods NotReady,
    // where going back is not allowed).
    if !lifecycle_marks_not_ready(cs) {
        let replicas = i64::from(cs.spec.replicas.unwrap_or(1));
        let mut short =
            replicas - i64::try_from(pods.len()).unwrap_or(i64::MAX) + i64::try_from(pending).unwrap_or(0);
        for &i in &preparing {
            if short <= 0 {
                break;
            }
            if is_specified_delete(cs, pods[i].borrow()) {
                continue;
            }
            plan.cancel_preparing_delete.push(i);
            short -= 1;
        }
    }

    let diffs = calculate_diffs_with_expectation(
        cs,
        pods,
        current_revision,
        update_revision,
        DiffPurpose::Scale,
        options,
        now,
    );
    plan.diffs = diffs;

    // Stage 2: scale out.
    if diffs.scale_up_num > 0 {
        let total = count(diffs.scale_up_limit);
        let current = count(diffs.scale_up_num_old_revision).min(total);
        plan.create = Some(CreatePlan {
            current_revision: current,
            update_revision: total - current,
            wanted: count(diffs.scale_up_num),
        });
        return plan;
    }

    // Stage 3: pods already in PreparingDelete.
    plan.delete_preparing_delete = preparing.clone();

    let mut delete_ready_limit = diffs.delete_ready_limit;
    let mut within_limit = |i: usize| {
        if !is_ready_and_normal(pods[i].borrow(), now) {
            return true;
        }
        if delete_ready_limit > 0 {
            delete_ready_limit -= 1;
            return true;
        }
        false
    };

    // Stage 4: specified deletes not already preparing.
    plan.delete_specified =
        specified.iter().copied().filter(|i| !preparing.contains(i)).filter(|&i| within_limit(i)).collect();

    // Stage 5: scale in, only when no deletion is pending.
    if diffs.scale_down_num > 0 {
        if pending > 0 {
            tracing::debug!(
                cloneset = cs.metadata.name.as_deref().unwrap_or_default(),
                scale_down = diffs.scale_down_num,
                pending,
                "CloneSet skipped scale-in while deletions are pending"
            );
            return plan;
        }
        let (updated, not_updated): (Vec<usize>, Vec<usize>) = (0..pods.len()).partition(|&i| {
            is_pod_updated(pods[i].borrow(), update_revision, options.preparing_update_as_update)
        });
        let chosen = choose_pods_to_delete(
            cs,
            pods,
            count(diffs.scale_down_num),
            count(diffs.scale_down_num_old_revision),
            &not_updated,
            &updated,
            nodes,
            now,
        );
        plan.scale_in = chosen.into_iter().filter(|&i| within_limit(i)).collect();
    }
    plan
}

/// Why an update round does nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateSkip {
    /// `updateStrategy.type: OnDelete`: pods change revision only when recreated.
    OnDelete,
    /// `rollingUpdate.paused`.
    Paused,
    /// Every pod is where the partition wants it.
    NothingToUpdate,
}

/// Which pods the update takes this round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdatePlan {
    /// The numbers the plan was derived from (revision label only).
    pub diffs: ExpectationDiffs,
    /// Why nothing is updated, if nothing is.
    pub skipped: Option<UpdateSkip>,
    /// Whether the pods go back to the current revision (partition raised with rollback on).
    pub rollback: bool,
    /// The revision the chosen pods move to.
    pub target_revision: String,
    /// The pods to update, in order; act on each with [`pod_update_action`].
    pub pods: Vec<usize>,
}

/// Plans the update of a round in which scaling changed nothing (upstream `Update` steps 2-5),
/// after the lifecycle refresh of every pod changed nothing either.
pub fn plan_update<P: Borrow<Pod>>(
    cs: &CloneSet,
    pods: &[P],
    current_revision: &str,
    update_revision: &str,
    options: &CoreOptions,
    now: Timestamp,
) -> UpdatePlan {
    let mut plan = UpdatePlan {
        diffs: ExpectationDiffs::default(),
        skipped: None,
        rollback: false,
        target_revision: update_revision.to_string(),
        pods: Vec::new(),
    };
    let strategy = &cs.spec.update_strategy;
    if strategy.type_ == CloneSetUpdateStrategyType::OnDelete {
        plan.skipped = Some(UpdateSkip::OnDelete);
        return plan;
    }
    if strategy.rolling_update.as_ref().is_some_and(|r| r.paused) {
        plan.skipped = Some(UpdateSkip::Paused);
        return plan;
    }
    let diffs = calculate_diffs_with_expectation(
        cs,
        pods,
        current_revision,
        update_revision,
        DiffPurpose::Update,
        options,
        now,
    );
    plan.diffs = diffs;
    if diffs.update_num == 0 {
        plan.skipped = Some(UpdateSkip::NothingToUpdate);
        return plan;
    }
    if diffs.update_num < 0 {
        plan.rollback = true;
        plan.target_revision = current_revision.to_string();
    }
    let candidates = update_candidates(pods, update_revision, diffs.update_num);
    let rolling = strategy.rolling_update.as_ref();
    let ordered = sort_update_indexes(
        rolling.and_then(|r| r.priority_strategy.as_ref()),
        rolling.map(|r| r.scatter_strategy.as_slice()).unwrap_or_default(),
        pods,
        candidates,
    );
    plan.pods =
        limit_update_indexes(&diffs, ordered, pods, &plan.target_revision, cs.spec.min_ready_seconds, now);
    plan
}

/// What to do with one pod the update chose.
#[derive(Clone, Debug, PartialEq)]
pub enum PodUpdateAction {
    /// The inPlaceUpdate hook holds the pod: set lifecycle `PreparingUpdate` (marking it NotReady
    /// if asked) and wait for the hook to release it.
    PrepareInPlaceUpdate {
        /// `lifecycle.inPlaceUpdate.markPodNotReady`.
        mark_pod_not_ready: bool,
    },
    /// The pod is `Updated` but another revision is wanted: put the hook's labels and finalizers
    /// back and set lifecycle `PreparingUpdate` (marking it NotReady if the hook asks).
    PrepareAgainWithHandler(LifecycleHook),
    /// Nothing to do this round (waiting for a hook, or an `Updated` pod without hook).
    Wait,
    /// Update the pod in place now (the engine also sets lifecycle `Updating`). If the engine
    /// finds it cannot, fall back as for [`PodUpdateAction::Recreate`] (or fail for
    /// `InPlaceOnly`).
    InPlace,
    /// Recreate: add label `apps.kruise.io/specified-delete=true`; scaling deletes the pod and
    /// creates a replacement within maxUnavailable and maxSurge.
    Recreate,
    /// `InPlaceOnly` and the change cannot be made in place: fail the update (`FailedUpdate`).
    InPlaceImpossible,
    /// The pod's lifecycle state forbids an in-place update (e.g. `PreparingDelete`): fail.
    NotAllowed(LifecycleState),
}

/// How a chosen pod is updated (upstream `updatePod`). `can_update_in_place` is the in-place
/// engine's verdict for moving this pod's revision to the target revision.
pub fn pod_update_action(cs: &CloneSet, pod: &Pod, can_update_in_place: bool) -> PodUpdateAction {
    let policy = cs.spec.update_strategy.rolling_update.as_ref().map(|r| &r.pod_update_policy);
    let in_place_policy =
        matches!(policy, Some(PodUpdatePolicy::InPlaceIfPossible | PodUpdatePolicy::InPlaceOnly));
    if !in_place_policy {
        return PodUpdateAction::Recreate;
    }
    if can_update_in_place {
        let hook = cs.spec.lifecycle.as_ref().and_then(|l| l.in_place_update.as_ref());
        let state = lifecycle_state(pod);
        match state {
            LifecycleState::PreparingNormal | LifecycleState::Normal => {
                if is_pod_hooked(hook, pod) {
                    return PodUpdateAction::PrepareInPlaceUpdate {
                        mark_pod_not_ready: hook.is_some_and(|h| h.mark_pod_not_ready),
                    };
                }
            }
            LifecycleState::Unknown(ref value) if value.is_empty() => {
                if is_pod_hooked(hook, pod) {
                    return PodUpdateAction::PrepareInPlaceUpdate {
                        mark_pod_not_ready: hook.is_some_and(|h| h.mark_pod_not_ready),
                    };
                }
            }
            LifecycleState::Updated => {
                return match hook {
                    Some(hook) => PodUpdateAction::PrepareAgainWithHandler(hook.clone()),
                    None => PodUpdateAction::Wait,
                };
            }
            LifecycleState::PreparingUpdate => {
                if is_pod_hooked(hook, pod) {
                    return PodUpdateAction::Wait;
                }
            }
            LifecycleState::Updating => {}
            other => return PodUpdateAction::NotAllowed(other),
        }
        return PodUpdateAction::InPlace;
    }
    if policy == Some(&PodUpdatePolicy::InPlaceOnly) {
        return PodUpdateAction::InPlaceImpossible;
    }
    PodUpdateAction::Recreate
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use std::collections::BTreeMap;

    use k8s_openapi::{
        api::core::v1::{PodCondition, PodSpec, PodStatus},
        apimachinery::pkg::{apis::meta::v1::Time, util::intstr::IntOrString},
    };
    use kruise_crds::{
        apps::v1beta1::{CloneSetSpec, RollingUpdateCloneSetStrategy},
        common::{
            IN_PLACE_UPDATE_GRACE_KEY, LIFECYCLE_STATE_KEY, Lifecycle,
            well_known::{CONTROLLER_REVISION_HASH, SPECIFIED_DELETE},
        },
    };

    use super::*;

    fn now() -> Timestamp {
        Timestamp::from_second(10_000).unwrap()
    }

    struct P(Pod);

    impl P {
        fn new(name: &str, revision: &str) -> Self {
            let mut pod = Pod::default();
            pod.metadata.name = Some(name.into());
            pod.metadata.labels =
                Some(BTreeMap::from([(CONTROLLER_REVISION_HASH.to_string(), revision.to_string())]));
            pod.spec = Some(PodSpec { node_name: Some("node".into()), ..Default::default() });
            P(pod)
        }
        fn ready(mut self) -> Self {
            self.0.status = Some(PodStatus {
                phase: Some("Running".into()),
                conditions: Some(vec![PodCondition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    ..Default::default()
                }]),
                ..Default::default()
            });
            self
        }
        fn label(mut self, key: &str, value: &str) -> Self {
            self.0.metadata.labels.get_or_insert_default().insert(key.into(), value.into());
            self
        }
        fn state(self, state: &str) -> Self {
            self.label(LIFECYCLE_STATE_KEY, state)
        }
    }

    fn cloneset(replicas: i32) -> CloneSet {
        let mut cs = CloneSet::new("web", CloneSetSpec { replicas: Some(replicas), ..Default::default() });
        cs.spec.update_strategy.rolling_update = Some(RollingUpdateCloneSetStrategy {
            max_unavailable: Some(IntOrString::Int(1)),
            ..Default::default()
        });
        cs
    }

    fn with_hook(mut cs: CloneSet, pre_delete: bool, in_place: bool, mark_not_ready: bool) -> CloneSet {
        let hook = LifecycleHook {
            labels_handler: [("hook".to_string(), "true".to_string())].into(),
            finalizers_handler: vec![],
            mark_pod_not_ready: mark_not_ready,
        };
        cs.spec.lifecycle = Some(Lifecycle {
            pre_delete: pre_delete.then(|| hook.clone()),
            in_place_update: in_place.then(|| hook.clone()),
            pre_normal: None,
        });
        cs
    }

    fn plan(cs: &CloneSet, pods: &[Pod]) -> ScalePlan {
        plan_scale(cs, pods, "old", "new", &CoreOptions::default(), &NodeLabels::new(), now())
    }

    #[test]
    fn scale_out_splits_revisions() {
        let mut cs = cloneset(5);
        cs.spec.update_strategy.rolling_update.as_mut().unwrap().partition = Some(IntOrString::Int(3));
        let pods = vec![P::new("a", "old").ready().0];
        let p = plan(&cs, &pods);
        assert_eq!(p.create, Some(CreatePlan { current_revision: 2, update_revision: 2, wanted: 4 }));
        assert!(p.delete_specified.is_empty() && p.scale_in.is_empty());

        cs.spec.scale_strategy.max_unavailable = Some(IntOrString::Int(1));
        let p = plan(&cs, &pods);
        let create = p.create.unwrap();
        assert_eq!((create.current_revision, create.update_revision, create.limited()), (1, 0, true));
    }

    #[test]
    fn specified_deletes_respect_ready_limit() {
        let cs = cloneset(4);
        let pods = vec![
            P::new("a", "new").ready().label(SPECIFIED_DELETE, "true").0,
            P::new("b", "new").ready().label(SPECIFIED_DELETE, "true").0,
            P::new("c", "new").label(SPECIFIED_DELETE, "true").0,
            P::new("d", "new").ready().0,
        ];
        // maxUnavailable 1, no pod above replicas, none unavailable (pods asked to be deleted do
        // not count): one ready pod may go, and the not-ready one goes regardless.
        let p = plan(&cs, &pods);
        assert_eq!(p.create, None);
        assert_eq!(p.delete_specified, vec![0, 2]);
        assert!(p.scale_in.is_empty());
    }

    #[test]
    fn scale_in_waits_for_pending_deletes_and_prefers_old() {
        let mut cs = cloneset(2);
        let pods =
            vec![P::new("a", "new").ready().0, P::new("b", "old").ready().0, P::new("c", "new").ready().0];
        let p = plan(&cs, &pods);
        assert_eq!(p.scale_in, vec![1], "the old pod goes first");

        cs.spec.scale_strategy.pods_to_delete = vec!["zzz".into()];
        let mut pending = pods.clone();
        pending.push(P::new("d", "new").ready().state("PreparingDelete").0);
        let p = plan(&cs, &pending);
        assert_eq!(p.delete_preparing_delete, vec![3]);
        assert!(p.scale_in.is_empty(), "a pending deletion blocks scale-in");
    }

    /// upstream `TestScale`: replicas 5 -> 3 with maxUnavailable 20% (1 of 3).
    #[test]
    fn upstream_scale_cases() {
        let ready_since = |pod: Pod| {
            let mut pod = pod;
            if let Some(c) = pod.status.as_mut().and_then(|s| s.conditions.as_mut()) {
                c[0].last_transition_time =
                    Some(Time(Timestamp::from_second(now().as_second() - 10).unwrap()));
            }
            pod
        };
        let five = || -> Vec<Pod> {
            (0..5)
                .map(|i| ready_since(P::new(&format!("sample-{i}"), "sample-b976d4544").ready().0))
                .collect()
        };
        let mut cs = cloneset(3);
        cs.spec.update_strategy.rolling_update.as_mut().unwrap().max_unavailable =
            Some(IntOrString::String("20%".into()));
        let rev = "sample-b976d4544";
        let run = |cs: &CloneSet, pods: &[Pod]| {
            plan_scale(cs, pods, rev, rev, &CoreOptions::default(), &NodeLabels::new(), now())
        };

        // minReadySeconds 9999: every pod is unavailable, so no ready pod may be deleted.
        let mut slow = cs.clone();
        slow.spec.min_ready_seconds = 9999;
        let p = run(&slow, &five());
        assert_eq!(p.diffs.scale_down_num, 2);
        assert!(p.is_empty(), "{p:?}");

        // A specified delete goes first and blocks scale-in this round.
        let mut pods = five();
        pods[0] = P(pods[0].clone()).label(SPECIFIED_DELETE, "true").0;
        let p = run(&cs, &pods);
        assert_eq!((p.delete_specified.clone(), p.scale_in.clone()), (vec![0], vec![]));

        // Otherwise two pods go.
        let p = run(&cs, &five());
        assert_eq!(p.scale_in.len(), 2);
    }

    #[test]
    fn scale_up_cancels_preparing_delete_unless_marked_not_ready() {
        let pods = vec![P::new("a", "new").ready().0, P::new("b", "new").ready().state("PreparingDelete").0];
        let cs = with_hook(cloneset(2), true, false, false);
        assert_eq!(plan(&cs, &pods).cancel_preparing_delete, vec![1]);
        let marked = with_hook(cloneset(2), true, false, true);
        assert!(plan(&marked, &pods).cancel_preparing_delete.is_empty());
        let specified = vec![pods[0].clone(), P(pods[1].clone()).label(SPECIFIED_DELETE, "true").0];
        assert!(
            plan(&cs, &specified).cancel_preparing_delete.is_empty(),
            "a specified delete is never cancelled"
        );
    }

    #[test]
    fn deletion_goes_through_pre_delete_hook() {
        let cs = with_hook(cloneset(1), true, false, true);
        let hooked = P::new("a", "new").label("hook", "true").0;
        let free = P::new("b", "new").0;
        assert_eq!(deletion_action(&cs, &hooked), DeletionAction::PrepareDelete { mark_pod_not_ready: true });
        assert_eq!(deletion_action(&cs, &free), DeletionAction::Delete);
        assert_eq!(deletion_action(&cloneset(1), &hooked), DeletionAction::Delete);
    }

    #[test]
    fn update_plan_skips_and_limits() {
        let mut cs = cloneset(4);
        let pods: Vec<Pod> = ["a", "b", "c", "d"].iter().map(|n| P::new(n, "old").ready().0).collect();
        let p = plan_update(&cs, &pods, "old", "new", &CoreOptions::default(), now());
        assert_eq!(
            (p.skipped, p.pods.len(), p.target_revision.as_str()),
            (None, 1, "new"),
            "maxUnavailable 1"
        );

        cs.spec.update_strategy.rolling_update.as_mut().unwrap().paused = true;
        assert_eq!(
            plan_update(&cs, &pods, "old", "new", &CoreOptions::default(), now()).skipped,
            Some(UpdateSkip::Paused)
        );
        cs.spec.update_strategy.rolling_update.as_mut().unwrap().paused = false;
        cs.spec.update_strategy.type_ = CloneSetUpdateStrategyType::OnDelete;
        assert_eq!(
            plan_update(&cs, &pods, "old", "new", &CoreOptions::default(), now()).skipped,
            Some(UpdateSkip::OnDelete)
        );
        cs.spec.update_strategy.type_ = CloneSetUpdateStrategyType::RollingUpdate;
        let new: Vec<Pod> = ["a", "b", "c", "d"].iter().map(|n| P::new(n, "new").ready().0).collect();
        assert_eq!(
            plan_update(&cs, &new, "old", "new", &CoreOptions::default(), now()).skipped,
            Some(UpdateSkip::NothingToUpdate)
        );
    }

    #[test]
    fn update_plan_rolls_back_with_the_gate() {
        let mut cs = cloneset(4);
        cs.spec.update_strategy.rolling_update.as_mut().unwrap().partition = Some(IntOrString::Int(3));
        let mut pods: Vec<Pod> = ["a", "b"].iter().map(|n| P::new(n, "new").ready().0).collect();
        pods.extend(["c", "d"].iter().map(|n| P::new(n, "old").ready().0));
        let off = plan_update(&cs, &pods, "old", "new", &CoreOptions::default(), now());
        assert_eq!(off.skipped, Some(UpdateSkip::NothingToUpdate));
        let on = plan_update(
            &cs,
            &pods,
            "old",
            "new",
            &CoreOptions { partition_rollback: true, ..Default::default() },
            now(),
        );
        assert!(on.rollback);
        assert_eq!(on.target_revision, "old");
        assert_eq!(on.pods.len(), 1);
        assert!(on.pods.iter().all(|&i| i < 2), "a new pod goes back");
    }

    #[test]
    fn grace_period_pods_are_not_taken_again() {
        let cs = cloneset(2);
        let mut waiting = P::new("a", "old").ready().0;
        waiting.metadata.annotations =
            Some([(IN_PLACE_UPDATE_GRACE_KEY.to_string(), "{}".to_string())].into());
        let pods = vec![waiting, P::new("b", "old").ready().0];
        assert_eq!(plan_update(&cs, &pods, "old", "new", &CoreOptions::default(), now()).pods, vec![1]);
    }

    fn policy(mut cs: CloneSet, policy: PodUpdatePolicy) -> CloneSet {
        cs.spec.update_strategy.rolling_update.get_or_insert_default().pod_update_policy = policy;
        cs
    }

    #[test]
    fn pod_update_actions() {
        use PodUpdateAction as A;
        let recreate = cloneset(1);
        let if_possible = policy(cloneset(1), PodUpdatePolicy::InPlaceIfPossible);
        let only = policy(cloneset(1), PodUpdatePolicy::InPlaceOnly);
        let hooked_cs = with_hook(policy(cloneset(1), PodUpdatePolicy::InPlaceIfPossible), false, true, true);
        let plain = P::new("a", "old").0;
        let normal = P::new("a", "old").state("Normal").0;
        let hooked = P::new("a", "old").state("Normal").label("hook", "true").0;
        let preparing_hooked = P::new("a", "old").state("PreparingUpdate").label("hook", "true").0;
        let preparing_released = P::new("a", "old").state("PreparingUpdate").0;
        let updated = P::new("a", "old").state("Updated").0;
        let deleting = P::new("a", "old").state("PreparingDelete").0;
        let hook = hooked_cs.spec.lifecycle.as_ref().unwrap().in_place_update.clone().unwrap();
        // (case, cloneset, pod, can update in place, action)
        let cases: Vec<(&str, &CloneSet, &Pod, bool, PodUpdateAction)> = vec![
            ("ReCreate policy", &recreate, &normal, true, A::Recreate),
            ("in place possible", &if_possible, &normal, true, A::InPlace),
            ("no lifecycle state", &if_possible, &plain, true, A::InPlace),
            ("in place impossible falls back", &if_possible, &normal, false, A::Recreate),
            ("InPlaceOnly impossible fails", &only, &normal, false, A::InPlaceImpossible),
            (
                "hooked pod prepares first",
                &hooked_cs,
                &hooked,
                true,
                A::PrepareInPlaceUpdate { mark_pod_not_ready: true },
            ),
            ("hook not on the pod", &hooked_cs, &normal, true, A::InPlace),
            ("preparing and still hooked waits", &hooked_cs, &preparing_hooked, true, A::Wait),
            ("preparing and released goes", &hooked_cs, &preparing_released, true, A::InPlace),
            ("updated pod re-prepares", &hooked_cs, &updated, true, A::PrepareAgainWithHandler(hook)),
            ("updated pod without hook waits", &if_possible, &updated, true, A::Wait),
            (
                "deleting pod is refused",
                &if_possible,
                &deleting,
                true,
                A::NotAllowed(LifecycleState::PreparingDelete),
            ),
        ];
        for (name, cs, pod, can, expected) in cases {
            assert_eq!(pod_update_action(cs, pod, can), expected, "{name}");
        }
    }
}
