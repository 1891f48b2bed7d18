//! The rolling update (upstream `rollingUpdateStatefulsetPods`, `handleSpecifiedDeletedPods`,
//! `sortPodsToUpdate`, `inPlaceUpdatePod`).
//!
//! Pods that are unhealthy, still finishing an in-place update or not yet available for
//! `minReadySeconds` count as unavailable. Pods labelled `apps.kruise.io/specified-delete` are
//! deleted first, within `maxUnavailable`, whatever the partition. Then the pods to update are
//! taken highest ordinal first down to the partition (or, with `unorderedUpdate`, already
//! updated ones first and the rest by the priority strategy), skipping those at the update
//! revision; the walk stops at the first pod that would make more than `maxUnavailable` pods
//! unavailable. Each chosen pod is updated in place when the policy allows and the revisions
//! differ only in what can change in place, else deleted (and recreated at the update revision
//! by the next scaling round).

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, Pod},
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{PodUpdatePolicy, StatefulSet},
    common::{LifecycleHook, LifecycleState},
};
use kube::ResourceExt;

use super::{
    options::CoreOptions,
    pods::{is_healthy, running_and_available},
    resize::{claims_compatible, claims_completed, claims_ready},
    scale::{DeleteAction, Members, Slot, Which, deletion_action, min_ready_seconds, update_max_unavailable},
};
use crate::workload::{
    pods::{
        has_specified_delete_label, is_pod_hooked, is_pod_updated, is_terminating, lifecycle_state,
        revision_hash,
    },
    update_order::sort_by_priority,
};

/// What to do to a pod the update picked (upstream `inPlaceUpdatePod` and `deletePod`).
#[derive(Clone, Debug, PartialEq)]
pub enum PodUpdateAction {
    /// The inPlaceUpdate hook holds the pod: move it to `PreparingUpdate` (marking it NotReady
    /// if the hook asks) and wait for the hook to let go.
    PrepareInPlaceUpdate {
        /// `lifecycle.inPlaceUpdate.markPodNotReady`.
        mark_pod_not_ready: bool,
    },
    /// The pod finished an earlier in-place update and waits in `Updated`: put the hook's
    /// handlers back and move it to `PreparingUpdate`.
    PrepareAgain(LifecycleHook),
    /// Nothing to write this round (the hook still holds the pod).
    Wait,
    /// Update in place now; `set_updating` moves the lifecycle to `Updating` with it.
    InPlace {
        /// The pod has a lifecycle state (upstream only sets `Updating` then).
        set_updating: bool,
    },
    /// Recreate: delete the pod (through `PreparingDelete` when the preDelete hook holds it);
    /// `None` when it already waits there.
    Recreate(Option<DeleteAction>),
    /// `InPlaceOnly` and the change cannot be made in place: the update fails.
    InPlaceImpossible,
    /// The pod's lifecycle state forbids an in-place update: the update fails.
    NotAllowed(LifecycleState),
}

impl PodUpdateAction {
    /// Whether the pod is (being) updated in place, or recreated for real: either way it leaves
    /// the current revision (upstream decrements `currentReplicas` for it).
    fn leaves_current(&self) -> bool {
        matches!(
            self,
            Self::PrepareInPlaceUpdate { .. }
                | Self::PrepareAgain(_)
                | Self::Wait
                | Self::InPlace { .. }
                | Self::Recreate(Some(DeleteAction::Delete))
        )
    }
}

/// How the pod moves to the update revision. `can_update_in_place` is the in-place engine's
/// verdict for the pod's revision and the update revision.
pub fn pod_update_action(set: &StatefulSet, pod: &Pod, can_update_in_place: bool) -> PodUpdateAction {
    let policy = set.spec.update_strategy.rolling_update.as_ref().map(|r| &r.pod_update_policy);
    let in_place_policy =
        matches!(policy, Some(PodUpdatePolicy::InPlaceIfPossible | PodUpdatePolicy::InPlaceOnly));
    if in_place_policy && can_update_in_place {
        let hook = set.spec.lifecycle.as_ref().and_then(|l| l.in_place_update.as_ref());
        let state = lifecycle_state(pod);
        match &state {
            s if s.is_unset() || *s == LifecycleState::PreparingNormal || *s == LifecycleState::Normal => {
                if is_pod_hooked(hook, pod) {
                    return PodUpdateAction::PrepareInPlaceUpdate {
                        mark_pod_not_ready: hook.is_some_and(|h| h.mark_pod_not_ready),
                    };
                }
            }
            LifecycleState::Updated => {
                return match hook {
                    Some(hook) => PodUpdateAction::PrepareAgain(hook.clone()),
                    None => PodUpdateAction::Wait,
                };
            }
            LifecycleState::PreparingUpdate => {
                if is_pod_hooked(hook, pod) {
                    return PodUpdateAction::Wait;
                }
            }
            LifecycleState::Updating => {}
            other => return PodUpdateAction::NotAllowed(other.clone()),
        }
        return PodUpdateAction::InPlace { set_updating: !state.is_unset() };
    }
    if policy == Some(&PodUpdatePolicy::InPlaceOnly) {
        return PodUpdateAction::InPlaceImpossible;
    }
    PodUpdateAction::Recreate(deletion_action(set, pod))
}

/// One write of the rolling update.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateStep {
    /// Delete a pod labelled specified-delete.
    DeleteSpecified {
        /// Its ordinal.
        ordinal: i32,
        /// How.
        action: DeleteAction,
    },
    /// Expand the pod's PVCs to their templates (`volumeClaimUpdateStrategy`
    /// `OnPodRollingUpdate`).
    ExpandClaims {
        /// Its ordinal.
        ordinal: i32,
    },
    /// Move a pod towards the update revision.
    UpdatePod {
        /// Its ordinal.
        ordinal: i32,
        /// How.
        action: PodUpdateAction,
    },
}

/// What a rolling-update round does.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UpdatePlan {
    /// The writes, in order; stop at the first that fails.
    pub steps: Vec<UpdateStep>,
    /// Look again after this long (an updated pod becomes available then).
    pub requeue_after: Option<Duration>,
    /// Why the update stopped short, for logs.
    pub waiting_for: Option<String>,
    /// Pods of the current revision this round takes away (upstream lowers
    /// `status.currentReplicas` by as many right away).
    pub current_leaving: i32,
    /// Pods of the update revision this round deletes.
    pub updated_leaving: i32,
}

/// The order in which slots are considered (upstream `sortPodsToUpdate`): indexes from the
/// highest down to the partition, at most `replicas - partition` of them; with
/// `unorderedUpdate`, terminating and already updated pods first, then the others by the
/// priority strategy, cut to `replicas - partition`.
pub fn sort_slots_to_update(
    set: &StatefulSet,
    members: &Members<'_>,
    update_revision: &str,
    options: &CoreOptions,
) -> Vec<usize> {
    let rolling = set.spec.update_strategy.rolling_update.as_ref();
    let partition = rolling.and_then(|r| r.partition).unwrap_or(0).max(0);
    let max_update = usize::try_from(set.spec.replicas.unwrap_or(1) - partition).unwrap_or(0);
    if max_update == 0 {
        return Vec::new();
    }
    let partition = usize::try_from(partition).unwrap_or(usize::MAX);
    let unordered = rolling.and_then(|r| r.unordered_update.as_ref());
    let present = |index: &usize| !matches!(members.slots[*index], Slot::Reserved);
    let Some(unordered) = unordered else {
        return (0..members.slots.len())
            .rev()
            .filter(|i| *i >= partition)
            .filter(present)
            .take(max_update)
            .collect();
    };
    let (mut done, mut waiting) = (Vec::new(), Vec::new());
    for index in (0..members.slots.len()).rev().filter(present) {
        let updated = match &members.slots[index] {
            Slot::Pod(pod) => {
                is_terminating(pod)
                    || is_pod_updated(pod, update_revision, options.preparing_update_as_update)
            }
            Slot::Missing(which) => *which == Which::Update,
            Slot::Reserved => false,
        };
        if updated { done.push(index) } else { waiting.push(index) }
    }
    if let Some(priority) = &unordered.priority_strategy {
        let labels: Vec<Option<&std::collections::BTreeMap<String, String>>> = members
            .slots
            .iter()
            .map(|slot| match slot {
                Slot::Pod(pod) => pod.metadata.labels.as_ref(),
                _ => None,
            })
            .collect();
        waiting = sort_by_priority(priority, &labels, waiting);
    }
    done.extend(waiting);
    done.truncate(max_update);
    done
}

/// The in-place engine's verdicts on single pods, which the update plan consults.
pub struct PodVerdicts<'a> {
    /// Whether the pod's last in-place update is done (the engine's completion check).
    pub update_completed: &'a (dyn Fn(&Pod) -> bool + Sync),
    /// Whether the pod can move from its revision to the update revision in place.
    pub can_update_in_place: &'a (dyn Fn(&Pod) -> bool + Sync),
    /// The namespace's PVCs by name when the set expands PVCs as it rolls pods
    /// ([`super::resize::resize_enabled`]), else `None`.
    pub resize_claims: Option<&'a BTreeMap<String, PersistentVolumeClaim>>,
}

/// Plans a rolling-update round.
pub fn plan_update(
    set: &StatefulSet,
    members: &Members<'_>,
    current_revision: &str,
    update_revision: &str,
    options: &CoreOptions,
    now: Timestamp,
    verdicts: &PodVerdicts<'_>,
) -> UpdatePlan {
    let mut plan = UpdatePlan::default();
    if set.spec.update_strategy.rolling_update.as_ref().is_some_and(|r| r.paused) {
        plan.waiting_for = Some("the update is paused".into());
        return plan;
    }
    let max_unavailable = usize::try_from(update_max_unavailable(set)).unwrap_or(1);
    let min_ready = min_ready_seconds(set);
    let range = &members.range;
    let mut unavailable: BTreeSet<usize> = BTreeSet::new();
    for (index, slot) in members.slots.iter().enumerate() {
        match slot {
            Slot::Reserved => {}
            Slot::Missing(_) => {
                unavailable.insert(index);
            }
            Slot::Pod(pod) => {
                if !is_healthy(pod) || !(verdicts.update_completed)(pod) {
                    unavailable.insert(index);
                } else if let (false, wait) = running_and_available(pod, min_ready, now) {
                    unavailable.insert(index);
                    if let Some(wait) = wait {
                        plan.requeue_after = Some(plan.requeue_after.map_or(wait, |w| w.min(wait)));
                    }
                } else if let Some(claims) = verdicts.resize_claims
                    && !claims_ready(set, pod, claims)
                {
                    // A PVC still growing to its request.
                    unavailable.insert(index);
                }
            }
        }
    }

    // Specified deletes first, within the budget but whatever the partition.
    let mut specified: BTreeSet<usize> = BTreeSet::new();
    for index in (0..members.slots.len()).rev() {
        let Slot::Pod(pod) = members.slots[index] else { continue };
        if !has_specified_delete_label(pod) {
            continue;
        }
        if unavailable.len() >= max_unavailable && !unavailable.contains(&index) {
            continue;
        }
        specified.insert(index);
        unavailable.insert(index);
        if is_terminating(pod) {
            continue;
        }
        if let Some(action) = deletion_action(set, pod) {
            if action == DeleteAction::Delete {
                let revision = revision_hash(pod);
                if revision == current_revision {
                    plan.current_leaving += 1;
                } else if revision == update_revision {
                    plan.updated_leaving += 1;
                }
            }
            plan.steps.push(UpdateStep::DeleteSpecified { ordinal: range.ordinal_at(index), action });
        }
    }

    for index in sort_slots_to_update(set, members, update_revision, options) {
        let pod = match members.slots[index] {
            Slot::Pod(pod) => pod,
            // Not created yet (or its creation is held): nothing to update, nothing to block.
            Slot::Missing(_) | Slot::Reserved => continue,
        };
        let claims_match = verdicts.resize_claims.is_none_or(|claims| claims_compatible(set, pod, claims));
        if revision_hash(pod) == update_revision && claims_match {
            continue;
        }
        if unavailable.len() >= max_unavailable && !unavailable.contains(&index) {
            plan.waiting_for = Some(format!(
                "{} unavailable pods reach maxUnavailable {max_unavailable}; {} waits",
                unavailable.len(),
                pod.name_any()
            ));
            return plan;
        }
        if let Some(claims) = verdicts.resize_claims {
            if !claims_match {
                plan.steps.push(UpdateStep::ExpandClaims { ordinal: range.ordinal_at(index) });
            }
            if !claims_completed(set, pod, claims) {
                // The pod is rolled once its PVCs have grown.
                unavailable.insert(index);
                continue;
            }
        }
        if specified.contains(&index) || is_terminating(pod) {
            continue;
        }
        let action = pod_update_action(set, pod, (verdicts.can_update_in_place)(pod));
        if action.leaves_current() && revision_hash(pod) == current_revision {
            plan.current_leaving += 1;
        }
        let fails = matches!(action, PodUpdateAction::InPlaceImpossible | PodUpdateAction::NotAllowed(_));
        plan.steps.push(UpdateStep::UpdatePod { ordinal: range.ordinal_at(index), action });
        unavailable.insert(index);
        if fails {
            return plan;
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::{apimachinery::pkg::util::intstr::IntOrString, jiff::SignedDuration};
    use kruise_crds::{
        apps::v1beta1::{PodManagementPolicyType, RollingUpdateStatefulSetStrategy, UnorderedUpdateStrategy},
        common::{Lifecycle, UpdatePriorityOrderTerm, UpdatePriorityStrategy},
    };

    use super::*;
    use crate::statefulset::core::{
        fixtures::{P, now, set},
        scale::members,
    };

    fn rolling(replicas: i32, partition: i32, max_unavailable: i32, policy: PodUpdatePolicy) -> StatefulSet {
        let mut sts = set(replicas);
        sts.spec.update_strategy.type_ =
            kruise_crds::apps::v1beta1::StatefulSetUpdateStrategyType::RollingUpdate;
        sts.spec.update_strategy.rolling_update = Some(RollingUpdateStatefulSetStrategy {
            partition: Some(partition),
            max_unavailable: Some(IntOrString::Int(max_unavailable)),
            pod_update_policy: policy,
            ..Default::default()
        });
        if max_unavailable > 1 {
            sts.spec.pod_management_policy = PodManagementPolicyType::Parallel;
        }
        sts
    }

    fn old_pods(n: i32) -> Vec<Pod> {
        (0..n).map(|o| P::new(o, "old").pod()).collect()
    }

    fn plan(sts: &StatefulSet, pods: &[Pod], can_in_place: bool) -> UpdatePlan {
        let members = members(sts, pods, "new", &CoreOptions::default());
        let verdicts = PodVerdicts {
            update_completed: &|_| true,
            can_update_in_place: &|_| can_in_place,
            resize_claims: None,
        };
        plan_update(sts, &members, "old", "new", &CoreOptions::default(), now(), &verdicts)
    }

    fn ordinals(plan: &UpdatePlan) -> Vec<i32> {
        plan.steps
            .iter()
            .map(|step| match step {
                UpdateStep::DeleteSpecified { ordinal, .. }
                | UpdateStep::ExpandClaims { ordinal }
                | UpdateStep::UpdatePod { ordinal, .. } => *ordinal,
            })
            .collect()
    }

    /// Descending ordinal down to the partition, one at a time (upstream
    /// `TestStatefulSetControlRollingUpdateWithPartition`): with partition 2 of 5, ordinals 4,
    /// 3 and 2 are updated, one per round while the previous one is unavailable.
    #[test]
    fn ordered_update_walks_down_to_the_partition() {
        let sts = rolling(5, 2, 1, PodUpdatePolicy::ReCreate);
        let mut pods = old_pods(5);
        let mut order = Vec::new();
        for _ in 0..5 {
            let got = plan(&sts, &pods, false);
            let Some(UpdateStep::UpdatePod { ordinal, action }) = got.steps.first().cloned() else { break };
            assert_eq!(action, PodUpdateAction::Recreate(Some(DeleteAction::Delete)));
            assert_eq!(got.current_leaving, 1);
            order.push(ordinal);
            // The replacement comes back updated and ready.
            pods[usize::try_from(ordinal).unwrap()] = P::new(ordinal, "new").pod();
        }
        assert_eq!(order, [4, 3, 2]);
        assert!(plan(&sts, &pods, false).steps.is_empty());
    }

    #[test]
    fn an_unavailable_pod_blocks_the_next() {
        let sts = rolling(3, 0, 1, PodUpdatePolicy::ReCreate);
        let mut pods = old_pods(3);
        pods[2] = P::new(2, "new").not_ready().pod();
        let got = plan(&sts, &pods, false);
        assert!(got.steps.is_empty());
        assert!(got.waiting_for.unwrap().contains("web-1 waits"));
        // A not-ready old pod may be updated: it is unavailable already.
        let mut pods = old_pods(3);
        pods[1] = P::new(1, "old").not_ready().pod();
        assert!(plan(&sts, &pods, false).steps.is_empty(), "2 comes first and waits for the unavailable 1");
    }

    /// maxUnavailable 2 with Parallel updates two at once (upstream
    /// `TestStatefulSetControlRollingUpdateWithMaxUnavailable`).
    #[test]
    fn max_unavailable_takes_several() {
        let sts = rolling(5, 0, 2, PodUpdatePolicy::ReCreate);
        assert_eq!(ordinals(&plan(&sts, &old_pods(5), false)), [4, 3]);
        let mut pods = old_pods(5);
        pods[0] = P::new(0, "old").not_ready().pod();
        assert_eq!(ordinals(&plan(&sts, &pods, false)), [4], "one slot of the budget is taken by 0");
        let mut sts = rolling(5, 0, 2, PodUpdatePolicy::ReCreate);
        sts.spec.update_strategy.rolling_update.as_mut().unwrap().max_unavailable =
            Some(IntOrString::String("60%".into()));
        assert_eq!(ordinals(&plan(&sts, &old_pods(5), false)), [4, 3, 2]);
    }

    #[test]
    fn in_place_policy() {
        let sts = rolling(3, 0, 1, PodUpdatePolicy::InPlaceIfPossible);
        let got = plan(&sts, &old_pods(3), true);
        assert_eq!(
            got.steps,
            vec![UpdateStep::UpdatePod {
                ordinal: 2,
                action: PodUpdateAction::InPlace { set_updating: true }
            }]
        );
        let got = plan(&sts, &old_pods(3), false);
        assert_eq!(
            got.steps,
            vec![UpdateStep::UpdatePod {
                ordinal: 2,
                action: PodUpdateAction::Recreate(Some(DeleteAction::Delete))
            }],
            "InPlaceIfPossible falls back to recreate"
        );
        let sts = rolling(3, 0, 1, PodUpdatePolicy::InPlaceOnly);
        let got = plan(&sts, &old_pods(3), false);
        assert_eq!(
            got.steps,
            vec![UpdateStep::UpdatePod { ordinal: 2, action: PodUpdateAction::InPlaceImpossible }]
        );
        // A pod whose in-place update is not complete counts as unavailable.
        let sts = rolling(3, 0, 1, PodUpdatePolicy::InPlaceIfPossible);
        let pods = old_pods(3);
        let members = members(&sts, &pods, "new", &CoreOptions::default());
        let all_but_web0_done = |p: &Pod| p.name_any() != "web-0";
        let verdicts = PodVerdicts {
            update_completed: &all_but_web0_done,
            can_update_in_place: &|_| true,
            resize_claims: None,
        };
        let got = plan_update(&sts, &members, "old", "new", &CoreOptions::default(), now(), &verdicts);
        assert!(got.steps.is_empty(), "web-0 is still updating: {got:?}");
    }

    /// Upstream `TestUpdateWithLifecycleHook` / `TestStatefulSetControlLifecycleHook` (the
    /// in-place cases).
    #[test]
    fn lifecycle_hooks_on_update() {
        let mut sts = rolling(1, 0, 1, PodUpdatePolicy::InPlaceIfPossible);
        let hook = LifecycleHook {
            labels_handler: [("hold".to_string(), "true".to_string())].into(),
            mark_pod_not_ready: true,
            ..Default::default()
        };
        sts.spec.lifecycle = Some(Lifecycle { in_place_update: Some(hook.clone()), ..Default::default() });
        let held = |state: LifecycleState| P::new(0, "old").label("hold", "true").state(state).pod();
        let cases = [
            (
                held(LifecycleState::Normal),
                PodUpdateAction::PrepareInPlaceUpdate { mark_pod_not_ready: true },
            ),
            (
                held(LifecycleState::PreparingNormal),
                PodUpdateAction::PrepareInPlaceUpdate { mark_pod_not_ready: true },
            ),
            (held(LifecycleState::PreparingUpdate), PodUpdateAction::Wait),
            (
                P::new(0, "old").state(LifecycleState::PreparingUpdate).pod(),
                PodUpdateAction::InPlace { set_updating: true },
            ),
            (
                P::new(0, "old").state(LifecycleState::Updating).pod(),
                PodUpdateAction::InPlace { set_updating: true },
            ),
            (
                P::new(0, "old").state(LifecycleState::Updated).pod(),
                PodUpdateAction::PrepareAgain(hook.clone()),
            ),
            (
                P::new(0, "old").state(LifecycleState::PreparingDelete).pod(),
                PodUpdateAction::NotAllowed(LifecycleState::PreparingDelete),
            ),
            (
                P::new(0, "old").label(kruise_crds::common::LIFECYCLE_STATE_KEY, "").pod(),
                PodUpdateAction::InPlace { set_updating: false },
            ),
        ];
        for (pod, expected) in cases {
            assert_eq!(pod_update_action(&sts, &pod, true), expected, "{:?}", pod.labels());
        }
        sts.spec.lifecycle = None;
        assert_eq!(
            pod_update_action(&sts, &P::new(0, "old").state(LifecycleState::Updated).pod(), true),
            PodUpdateAction::Wait
        );
    }

    /// Upstream `TestStatefulSetControlRollingUpdateWithSpecifiedDelete`: specified deletes go
    /// first, below the partition too, within maxUnavailable.
    #[test]
    fn specified_delete_first() {
        let sts = rolling(3, 3, 1, PodUpdatePolicy::ReCreate);
        let mut pods = old_pods(3);
        pods[0] = P::new(0, "old").label("apps.kruise.io/specified-delete", "true").pod();
        let got = plan(&sts, &pods, false);
        assert_eq!(got.steps, vec![UpdateStep::DeleteSpecified { ordinal: 0, action: DeleteAction::Delete }]);
        assert_eq!(got.current_leaving, 1);
        pods[1] = P::new(1, "old").label("apps.kruise.io/specified-delete", "true").pod();
        assert_eq!(ordinals(&plan(&sts, &pods, false)), [1], "the budget takes one");
    }

    #[test]
    fn paused_and_min_ready() {
        let mut sts = rolling(3, 0, 1, PodUpdatePolicy::ReCreate);
        sts.spec.update_strategy.rolling_update.as_mut().unwrap().paused = true;
        assert!(plan(&sts, &old_pods(3), false).steps.is_empty());
        let mut sts = rolling(3, 0, 1, PodUpdatePolicy::ReCreate);
        sts.spec.update_strategy.rolling_update.as_mut().unwrap().min_ready_seconds = Some(10);
        let mut pods = old_pods(3);
        pods[2] =
            P::new(2, "new").ready_since(now().checked_sub(SignedDuration::from_secs(4)).unwrap()).pod();
        let got = plan(&sts, &pods, false);
        assert!(got.steps.is_empty(), "web-2 is not available for 10s yet");
        assert_eq!(got.requeue_after, Some(Duration::from_secs(6)));
    }

    /// Upstream `TestSortPodsToUpdate` (unorderedUpdate with an order priority).
    #[test]
    fn unordered_update_by_priority() {
        let mut sts = rolling(4, 1, 1, PodUpdatePolicy::ReCreate);
        sts.spec.pod_management_policy = PodManagementPolicyType::Parallel;
        sts.spec.update_strategy.rolling_update.as_mut().unwrap().unordered_update =
            Some(UnorderedUpdateStrategy {
                priority_strategy: Some(UpdatePriorityStrategy {
                    order_priority: vec![UpdatePriorityOrderTerm { ordered_key: "rank".into() }],
                    ..Default::default()
                }),
            });
        let pods = vec![
            P::new(0, "old").label("rank", "5").pod(),
            P::new(1, "new").pod(),
            P::new(2, "old").label("rank", "9").pod(),
            P::new(3, "old").label("rank", "1").pod(),
        ];
        let members = members(&sts, &pods, "new", &CoreOptions::default());
        assert_eq!(sort_slots_to_update(&sts, &members, "new", &CoreOptions::default()), [1, 2, 0]);
        assert_eq!(ordinals(&plan(&sts, &pods, false)), [2]);
    }

    #[test]
    fn ordered_sort_skips_reserved_holes() {
        let mut sts = rolling(3, 1, 1, PodUpdatePolicy::ReCreate);
        sts.spec.reserve_ordinals = vec![IntOrString::Int(1)];
        let pods = vec![P::new(0, "old").pod(), P::new(2, "old").pod(), P::new(3, "old").pod()];
        let members = members(&sts, &pods, "new", &CoreOptions::default());
        assert_eq!(sort_slots_to_update(&sts, &members, "new", &CoreOptions::default()), [3, 2]);
    }
    /// Upstream `TestStatefulSetVCTResize` in spirit: a pod whose PVC is smaller than its
    /// template gets the PVC expanded first and is rolled only once it has grown; a pod already
    /// at the update revision is still visited for its PVC.
    #[test]
    fn pvc_resize_before_rolling() {
        use k8s_openapi::{
            api::core::v1::{
                PersistentVolumeClaimSpec, PersistentVolumeClaimStatus, VolumeResourceRequirements,
            },
            apimachinery::pkg::api::resource::Quantity,
        };
        let sized = |request: &str, capacity: &str| {
            let mut claim = crate::statefulset::core::identity::claims_for(&set(1), 0).remove(0);
            claim.spec = Some(PersistentVolumeClaimSpec {
                resources: Some(VolumeResourceRequirements {
                    requests: Some([("storage".to_string(), Quantity(request.into()))].into()),
                    ..Default::default()
                }),
                ..Default::default()
            });
            claim.status = Some(PersistentVolumeClaimStatus {
                capacity: Some([("storage".to_string(), Quantity(capacity.into()))].into()),
                ..Default::default()
            });
            claim
        };
        let mut sts = rolling(2, 0, 1, PodUpdatePolicy::ReCreate);
        sts.spec.volume_claim_templates[0].spec = sized("2Gi", "0").spec;
        let pods = vec![P::new(0, "new").pod(), P::new(1, "old").pod()];
        let before = members(&sts, &pods, "new", &CoreOptions::default());
        let plan_with = |claims: &BTreeMap<String, PersistentVolumeClaim>| {
            let verdicts = PodVerdicts {
                update_completed: &|_| true,
                can_update_in_place: &|_| false,
                resize_claims: Some(claims),
            };
            plan_update(&sts, &before, "old", "new", &CoreOptions::default(), now(), &verdicts)
        };
        let small: BTreeMap<String, PersistentVolumeClaim> =
            [0, 1].map(|o| (format!("data-web-{o}"), sized("1Gi", "1Gi"))).into();
        let got = plan_with(&small);
        assert_eq!(got.steps, vec![UpdateStep::ExpandClaims { ordinal: 1 }], "expand first, roll later");
        let mut growing = small.clone();
        growing.insert("data-web-1".into(), sized("2Gi", "1Gi"));
        assert!(plan_with(&growing).steps.is_empty(), "web-1 waits for its PVC (and holds web-0)");
        let mut grown = small.clone();
        grown.insert("data-web-1".into(), sized("2Gi", "2Gi"));
        let got = plan_with(&grown);
        assert_eq!(
            got.steps,
            vec![UpdateStep::UpdatePod {
                ordinal: 1,
                action: PodUpdateAction::Recreate(Some(DeleteAction::Delete))
            }]
        );
        let pods = vec![P::new(0, "new").pod(), P::new(1, "new").pod()];
        let after = members(&sts, &pods, "new", &CoreOptions::default());
        let verdicts = PodVerdicts {
            update_completed: &|_| true,
            can_update_in_place: &|_| false,
            resize_claims: Some(&grown),
        };
        let got = plan_update(&sts, &after, "old", "new", &CoreOptions::default(), now(), &verdicts);
        assert_eq!(
            got.steps,
            vec![UpdateStep::ExpandClaims { ordinal: 0 }],
            "an updated pod with a small PVC"
        );
    }
}
