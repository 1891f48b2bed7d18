//! Scaling: which pods to create, repair and delete this round (upstream `updateStatefulSet`,
//! `processReplica`, `processCondemned`).
//!
//! The set's pods are split into the desired slots `[start, end)` (a pod, a hole to fill, or a
//! reserved ordinal) and the condemned pods (outside the range or on a reserved ordinal), the
//! latter by descending ordinal. [`plan_scale`] then walks the slots as upstream does and lists
//! the writes in order:
//!
//! - `OrderedReady` (monotonic): create the first missing pod and stop; stop at the first pod
//!   that is terminating or not available for `minReadySeconds`; then delete condemned pods one
//!   at a time, highest ordinal first, and only once every predecessor is available.
//! - `Parallel` (burst): create every missing pod, replace finished ones and delete every
//!   condemned pod at once; `scaleStrategy.maxUnavailable` caps how many pods may be created,
//!   terminating or unavailable before the walk stops.
//!
//! Failed and succeeded pods are deleted (and recreated next round), pending pods get their
//! missing PVCs, and pods whose identity, storage or PVC owners drifted are repaired.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, Pod},
    apimachinery::pkg::util::intstr::IntOrString,
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{PodManagementPolicyType, StatefulSet, StatefulSetUpdateStrategyType},
    common::LifecycleState,
    intstr::scaled_value,
};
use kube::ResourceExt;

use super::{
    identity::{ReplicaRange, identity_matches, ordinal_of, pod_name, storage_matches},
    options::CoreOptions,
    pods::{is_finished, is_healthy, is_pending, is_running_and_ready, running_and_available},
    retention::{claim_is_stale, claims_match_retention},
};
use crate::workload::pods::{is_pod_hooked, is_pod_updated, is_terminating, lifecycle_state};

/// Which of the two revisions a new pod is created at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// `status.currentRevision`: below the partition.
    Current,
    /// The update revision.
    Update,
}

/// One desired ordinal of the set.
#[derive(Clone, Debug)]
pub enum Slot<'a> {
    /// A reserved ordinal inside the range: it has no pod.
    Reserved,
    /// No pod yet: it is created at this revision.
    Missing(Which),
    /// The pod at this ordinal.
    Pod(&'a Pod),
}

/// The set's pods sorted into desired slots and condemned pods.
#[derive(Clone, Debug)]
pub struct Members<'a> {
    /// The ordinals the set keeps.
    pub range: ReplicaRange,
    /// One slot per ordinal of `[range.start, range.end)`.
    pub slots: Vec<Slot<'a>>,
    /// Pods outside the range or on reserved ordinals, highest ordinal first.
    pub condemned: Vec<&'a Pod>,
}

impl Members<'_> {
    /// The existing pods of the slots and the condemned pods, in slot order then condemned order.
    pub fn pods(&self) -> impl Iterator<Item = &Pod> {
        self.slots
            .iter()
            .filter_map(|slot| match slot {
                Slot::Pod(pod) => Some(*pod),
                _ => None,
            })
            .chain(self.condemned.iter().copied())
    }
}

/// Sorts `pods` (the set's pods, terminating and finished ones included; pods without an
/// ordinal are ignored) into slots, and decides the revision of every missing pod in ascending
/// ordinal order as upstream's `newVersionedStatefulSetPod`.
pub fn members<'a>(
    set: &StatefulSet,
    pods: &'a [Pod],
    update_revision: &str,
    options: &CoreOptions,
) -> Members<'a> {
    let range = ReplicaRange::of(set, options);
    let mut slots: Vec<Slot<'a>> = (0..range.len())
        .map(|index| {
            if range.reserved.contains(range.ordinal_at(index)) {
                Slot::Reserved
            } else {
                Slot::Missing(Which::Update)
            }
        })
        .collect();
    let mut condemned = Vec::new();
    for pod in pods {
        let Some(ordinal) = ordinal_of(pod) else { continue };
        match range.index_of(ordinal).filter(|_| range.contains(ordinal)) {
            Some(index) => slots[index] = Slot::Pod(pod),
            None => condemned.push(pod),
        }
    }
    condemned.sort_by_key(|pod| std::cmp::Reverse(ordinal_of(pod).unwrap_or(-1)));
    // Which slots are (or will be) at the update revision, for the partition arithmetic.
    let mut updated: Vec<Option<bool>> = slots
        .iter()
        .map(|slot| match slot {
            Slot::Pod(pod) => Some(is_pod_updated(pod, update_revision, options.preparing_update_as_update)),
            _ => None,
        })
        .collect();
    for index in 0..slots.len() {
        if matches!(slots[index], Slot::Missing(_)) {
            let which =
                if is_current_revision_needed(set, index, &updated) { Which::Current } else { Which::Update };
            slots[index] = Slot::Missing(which);
            updated[index] = Some(which == Which::Update);
        }
    }
    Members { range, slots, condemned }
}

/// Whether the new pod of slot `index` is created at the current revision (upstream
/// `isCurrentRevisionNeeded`). `updated[i]` says whether slot `i` holds (or will hold) a pod
/// at the update revision (`None`: no pod). Ordered: the slot is below the partition, counting
/// only slots with pods; unordered: fewer than `partition` other pods are not updated.
pub fn is_current_revision_needed(set: &StatefulSet, index: usize, updated: &[Option<bool>]) -> bool {
    let strategy = &set.spec.update_strategy;
    if strategy.type_ != StatefulSetUpdateStrategyType::RollingUpdate {
        return false;
    }
    let Some(rolling) = &strategy.rolling_update else {
        let current = set.status.as_ref().map_or(0, |s| s.current_replicas);
        return i64::try_from(index).unwrap_or(i64::MAX) < i64::from(current);
    };
    let partition = usize::try_from(rolling.partition.unwrap_or(0).max(0)).unwrap_or(0);
    if rolling.unordered_update.is_none() {
        let below = updated.iter().take(index).filter(|slot| slot.is_some()).count();
        return below < partition;
    }
    let not_updated =
        updated.iter().enumerate().filter(|(i, slot)| *i != index && **slot == Some(false)).count();
    not_updated < partition
}

/// How a pod chosen for deletion goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeleteAction {
    /// The preDelete hook holds it: move it to `PreparingDelete` (and mark it NotReady if the
    /// hook asks).
    PrepareDelete {
        /// `lifecycle.preDelete.markPodNotReady`.
        mark_pod_not_ready: bool,
    },
    /// Delete it.
    Delete,
}

/// How `pod` is deleted (upstream `deletePod`), `None` when the preDelete hook holds it and it
/// already waits in `PreparingDelete` (nothing to write).
pub fn deletion_action(set: &StatefulSet, pod: &Pod) -> Option<DeleteAction> {
    let hook = set.spec.lifecycle.as_ref().and_then(|l| l.pre_delete.as_ref());
    if !is_pod_hooked(hook, pod) {
        return Some(DeleteAction::Delete);
    }
    (lifecycle_state(pod) != LifecycleState::PreparingDelete).then(|| DeleteAction::PrepareDelete {
        mark_pod_not_ready: hook.is_some_and(|h| h.mark_pod_not_ready),
    })
}

/// One write of a scaling round, by ordinal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScaleStep {
    /// Create the pod (and its PVCs first) at this revision.
    Create {
        /// Its ordinal.
        ordinal: i32,
        /// Its revision.
        revision: Which,
    },
    /// Replace a failed or succeeded pod: delete it (recreated next round).
    DeleteFinished {
        /// Its ordinal.
        ordinal: i32,
        /// How.
        action: DeleteAction,
    },
    /// Create the missing PVCs of a pending pod.
    CreateMissingClaims {
        /// Its ordinal.
        ordinal: i32,
    },
    /// Restore the pod's identity and storage and its PVCs' owners.
    Repair {
        /// Its ordinal.
        ordinal: i32,
    },
    /// Set the owners of a condemned pod's PVCs (before it is deleted).
    RetainCondemnedClaims {
        /// Its ordinal.
        ordinal: i32,
    },
    /// Delete a condemned pod.
    DeleteCondemned {
        /// Its ordinal.
        ordinal: i32,
        /// How.
        action: DeleteAction,
    },
}

/// What a scaling round does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScalePlan {
    /// The writes, in order; stop at the first that fails.
    pub steps: Vec<ScaleStep>,
    /// Scaling is not done: skip the rolling update this round.
    pub exit: bool,
    /// Look again after this long (a pod becomes available then).
    pub requeue_after: Option<Duration>,
    /// Why the walk stopped, for logs.
    pub waiting_for: Option<String>,
}

impl ScalePlan {
    fn wait(&mut self, after: Option<Duration>) {
        if let Some(after) = after.filter(|d| !d.is_zero()) {
            self.requeue_after = Some(self.requeue_after.map_or(after, |current| current.min(after)));
        }
    }

    fn stop(&mut self, why: String) {
        self.exit = true;
        self.waiting_for = Some(why);
    }
}

/// `scaleStrategy.maxUnavailable` as a count (percent of replicas, rounded down, at least 1).
pub fn scale_max_unavailable(set: &StatefulSet) -> Option<i32> {
    let value = set.spec.scale_strategy.as_ref()?.max_unavailable.as_ref()?;
    let replicas = set.spec.replicas.unwrap_or(1);
    Some(scaled_value(value, replicas, false).unwrap_or(1).max(1))
}

/// `rollingUpdate.minReadySeconds`, 0 when unset.
pub fn min_ready_seconds(set: &StatefulSet) -> i32 {
    set.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.min_ready_seconds).unwrap_or(0)
}

/// Whether pods are managed in parallel (`Parallel`), not one by one.
pub fn allows_burst(set: &StatefulSet) -> bool {
    set.spec.pod_management_policy == PodManagementPolicyType::Parallel
}

/// Spends one unit of the scale budget; true when it is used up (upstream
/// `decreaseAndCheckMaxUnavailable`).
fn spend(budget: &mut Option<i32>) -> bool {
    match budget {
        Some(left) => {
            *left -= 1;
            *left <= 0
        }
        None => false,
    }
}

/// Plans a scaling round. `claims` are the PVCs of the namespace by name.
pub fn plan_scale(
    set: &StatefulSet,
    members: &Members<'_>,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
    options: &CoreOptions,
    now: Timestamp,
) -> ScalePlan {
    let mut plan = ScalePlan::default();
    let monotonic = !allows_burst(set);
    let min_ready = min_ready_seconds(set);
    let mut budget = scale_max_unavailable(set);
    let range = &members.range;
    let set_name = set.name_any();

    // The lowest-ordinal unhealthy pod may be deleted while others wait for it.
    let first_unhealthy: Option<i32> = members
        .slots
        .iter()
        .enumerate()
        .filter_map(|(index, slot)| match slot {
            Slot::Pod(pod) if !is_healthy(pod) => Some(range.ordinal_at(index)),
            Slot::Missing(_) => Some(range.ordinal_at(index)),
            _ => None,
        })
        .chain(members.condemned.iter().filter(|pod| !is_healthy(pod)).filter_map(|pod| ordinal_of(pod)))
        .min();

    for (index, slot) in members.slots.iter().enumerate() {
        let ordinal = range.ordinal_at(index);
        let pod = match slot {
            Slot::Reserved => continue,
            Slot::Missing(revision) => {
                if options.auto_delete_pvc
                    && claim_is_stale(set, &pod_name(&set_name, ordinal), "", ordinal, claims)
                {
                    // Its PVC still belongs to the pod that was here: wait for the collector.
                    if monotonic {
                        plan.stop(format!(
                            "a PVC of {} still belongs to its previous pod",
                            pod_name(&set_name, ordinal)
                        ));
                        return plan;
                    }
                    continue;
                }
                plan.steps.push(ScaleStep::Create { ordinal, revision: *revision });
                if monotonic {
                    plan.stop(format!("{} is being created", pod_name(&set_name, ordinal)));
                    return plan;
                }
                if spend(&mut budget) {
                    plan.waiting_for = Some("scaleStrategy.maxUnavailable reached by creations".into());
                    break;
                }
                continue;
            }
            Slot::Pod(pod) => *pod,
        };
        if is_finished(pod) {
            if spend(&mut budget) {
                plan.waiting_for = Some("scaleStrategy.maxUnavailable reached".into());
                break;
            }
            if !is_terminating(pod)
                && let Some(action) = deletion_action(set, pod)
            {
                plan.steps.push(ScaleStep::DeleteFinished { ordinal, action });
            }
            if monotonic {
                plan.stop(format!("{} finished and is replaced", pod.name_any()));
                return plan;
            }
            continue;
        }
        if is_pending(pod) && !set.spec.volume_claim_templates.is_empty() {
            plan.steps.push(ScaleStep::CreateMissingClaims { ordinal });
        }
        if is_terminating(pod) {
            if monotonic {
                plan.stop(format!("{} is terminating", pod.name_any()));
                return plan;
            }
            if spend(&mut budget) {
                plan.waiting_for = Some("scaleStrategy.maxUnavailable reached by terminating pods".into());
                break;
            }
        }
        if monotonic || budget.is_some() {
            let (available, wait) = running_and_available(pod, min_ready, now);
            if !available && monotonic {
                plan.wait(wait);
                plan.stop(format!("{} is not available yet", pod.name_any()));
                return plan;
            }
            if !available && spend(&mut budget) {
                plan.wait(wait);
                plan.waiting_for = Some("scaleStrategy.maxUnavailable reached by unavailable pods".into());
                break;
            }
        }
        let retention_ok = !options.auto_delete_pvc || claims_match_retention(set, pod, false, claims);
        if !(identity_matches(set, pod) && storage_matches(set, pod) && retention_ok) {
            plan.steps.push(ScaleStep::Repair { ordinal });
        }
    }

    if options.auto_delete_pvc {
        for pod in &members.condemned {
            if !claims_match_retention(set, pod, true, claims)
                && let Some(ordinal) = ordinal_of(pod)
            {
                plan.steps.push(ScaleStep::RetainCondemnedClaims { ordinal });
            }
        }
    }

    for pod in &members.condemned {
        let Some(ordinal) = ordinal_of(pod) else { continue };
        if is_terminating(pod) {
            if monotonic {
                plan.stop(format!("{} is terminating", pod.name_any()));
                return plan;
            }
            continue;
        }
        let is_first_unhealthy = first_unhealthy == Some(ordinal);
        if monotonic && !is_first_unhealthy {
            if !is_running_and_ready(pod) {
                plan.stop(format!("{} must be running and ready before it is removed", pod.name_any()));
                return plan;
            }
            let (available, wait) = running_and_available(pod, min_ready, now);
            if !available {
                plan.wait(wait);
                plan.stop(format!("{} must be available before it is removed", pod.name_any()));
                return plan;
            }
        }
        if let Some(action) = deletion_action(set, pod) {
            plan.steps.push(ScaleStep::DeleteCondemned { ordinal, action });
            if monotonic {
                plan.stop(format!("{} is being removed", pod.name_any()));
                return plan;
            }
        }
    }
    plan
}

/// The maxUnavailable of a rolling update as a count (upstream: percent of replicas rounded
/// down, default 1, at least 1).
pub fn update_max_unavailable(set: &StatefulSet) -> i32 {
    let replicas = set.spec.replicas.unwrap_or(1);
    let value = set
        .spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.max_unavailable.clone())
        .unwrap_or(IntOrString::Int(1));
    scaled_value(&value, replicas, false).unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use k8s_openapi::jiff::SignedDuration;
    use kruise_crds::{
        apps::v1beta1::{
            RollingUpdateStatefulSetStrategy, StatefulSetPersistentVolumeClaimRetentionPolicy,
            StatefulSetScaleStrategy, UnorderedUpdateStrategy,
        },
        common::{Lifecycle, LifecycleHook},
    };

    use super::*;
    use crate::statefulset::core::fixtures::{P, now, set};

    fn ordered(replicas: i32) -> StatefulSet {
        let mut sts = set(replicas);
        sts.spec.pod_management_policy = PodManagementPolicyType::OrderedReady;
        sts
    }

    fn parallel(replicas: i32) -> StatefulSet {
        let mut sts = set(replicas);
        sts.spec.pod_management_policy = PodManagementPolicyType::Parallel;
        sts
    }

    fn plan(sts: &StatefulSet, pods: &[Pod]) -> ScalePlan {
        let members = members(sts, pods, "r", &CoreOptions::default());
        plan_scale(sts, &members, &BTreeMap::new(), &CoreOptions::default(), now())
    }

    fn create(ordinal: i32) -> ScaleStep {
        ScaleStep::Create { ordinal, revision: Which::Update }
    }

    fn delete(ordinal: i32) -> ScaleStep {
        ScaleStep::DeleteCondemned { ordinal, action: DeleteAction::Delete }
    }

    /// OrderedReady creates one pod at a time and waits for each to be available.
    #[test]
    fn ordered_ready_creates_in_order() {
        let sts = ordered(3);
        let cases: Vec<(&str, Vec<Pod>, Vec<ScaleStep>, bool)> = vec![
            ("empty", vec![], vec![create(0)], true),
            (
                "0 pending",
                vec![P::new(0, "r").phase("Pending").pod()],
                vec![ScaleStep::CreateMissingClaims { ordinal: 0 }],
                true,
            ),
            ("0 ready", vec![P::new(0, "r").pod()], vec![create(1)], true),
            ("1 not ready", vec![P::new(0, "r").pod(), P::new(1, "r").not_ready().pod()], vec![], true),
            ("hole at 1", vec![P::new(0, "r").pod(), P::new(2, "r").pod()], vec![create(1)], true),
            (
                "all ready",
                vec![P::new(0, "r").pod(), P::new(1, "r").pod(), P::new(2, "r").pod()],
                vec![],
                false,
            ),
            (
                "0 terminating",
                vec![P::new(0, "r").terminating().pod(), P::new(1, "r").pod(), P::new(2, "r").pod()],
                vec![],
                true,
            ),
            (
                "1 failed",
                vec![P::new(0, "r").pod(), P::new(1, "r").phase("Failed").pod(), P::new(2, "r").pod()],
                vec![ScaleStep::DeleteFinished { ordinal: 1, action: DeleteAction::Delete }],
                true,
            ),
        ];
        for (name, pods, steps, exit) in cases {
            let got = plan(&sts, &pods);
            assert_eq!((got.steps, got.exit), (steps, exit), "{name}");
        }
    }

    /// Scale down removes the highest ordinal first, one at a time, and only when the others
    /// are available (upstream "Scaling should happen in predictable order and halt").
    #[test]
    fn ordered_ready_scales_down_from_the_top() {
        let sts = ordered(2);
        let four =
            || vec![P::new(0, "r").pod(), P::new(1, "r").pod(), P::new(2, "r").pod(), P::new(3, "r").pod()];
        let got = plan(&sts, &four());
        assert_eq!((got.steps, got.exit), (vec![delete(3)], true));

        let mut pods = four();
        pods[3] = P::new(3, "r").terminating().pod();
        let got = plan(&sts, &pods);
        assert_eq!((got.steps, got.exit), (vec![], true), "waits for 3 to go before 2");

        let mut pods = four();
        pods[3] = P::new(3, "r").not_ready().pod();
        assert_eq!(plan(&sts, &pods).steps, vec![delete(3)], "the first unhealthy pod may go");

        let mut pods = four();
        pods[2] = P::new(2, "r").not_ready().pod();
        let got = plan(&sts, &pods);
        assert_eq!((got.steps, got.exit), (vec![delete(3)], true), "a ready condemned pod goes first anyway");

        let mut pods = four();
        pods[1] = P::new(1, "r").not_ready().pod();
        let got = plan(&sts, &pods);
        assert_eq!((got.steps, got.exit), (vec![], true), "a desired pod that is not ready halts scale down");
    }

    /// Parallel creates and deletes everything at once, even with unhealthy pods (upstream
    /// "Burst scaling should run to completion even with unhealthy pods").
    #[test]
    fn parallel_bursts() {
        let sts = parallel(3);
        let got = plan(&sts, &[P::new(1, "r").not_ready().pod()]);
        assert_eq!((got.steps, got.exit), (vec![create(0), create(2)], false));
        let sts = parallel(1);
        let pods = [P::new(0, "r").not_ready().pod(), P::new(1, "r").not_ready().pod(), P::new(2, "r").pod()];
        let got = plan(&sts, &pods);
        assert_eq!((got.steps, got.exit), (vec![delete(2), delete(1)], false));
    }

    /// `scaleStrategy.maxUnavailable` bounds creations and unavailable pods in Parallel (upstream
    /// `TestScaleUpWithMaxUnavailable`).
    #[test]
    fn parallel_scale_budget() {
        let mut sts = parallel(6);
        sts.spec.scale_strategy =
            Some(StatefulSetScaleStrategy { max_unavailable: Some(IntOrString::Int(2)) });
        let got = plan(&sts, &[]);
        assert_eq!(got.steps, vec![create(0), create(1)]);
        assert!(!got.exit, "the update still runs");
        let got = plan(&sts, &[P::new(0, "r").not_ready().pod(), P::new(1, "r").pod()]);
        assert_eq!(got.steps, vec![create(2)], "one unavailable pod leaves room for one creation");
        let got = plan(&sts, &[P::new(0, "r").pod(), P::new(1, "r").pod()]);
        assert_eq!(got.steps, vec![create(2), create(3)]);
        sts.spec.scale_strategy =
            Some(StatefulSetScaleStrategy { max_unavailable: Some(IntOrString::String("50%".into())) });
        assert_eq!(plan(&sts, &[]).steps.len(), 3);
    }

    /// reserveOrdinals: reserved ordinals get no pod and their pods are deleted.
    #[test]
    fn reserved_ordinals_are_skipped_and_emptied() {
        let mut sts = parallel(3);
        sts.spec.reserve_ordinals = vec![IntOrString::Int(1)];
        let got = plan(&sts, &[P::new(0, "r").pod(), P::new(1, "r").pod()]);
        assert_eq!(got.steps, vec![create(2), create(3), delete(1)]);
        sts.spec.reserve_ordinals = vec![IntOrString::String("0-1".into())];
        let got = plan(&sts, &[]);
        assert_eq!(got.steps, vec![create(2), create(3), create(4)]);
    }

    #[test]
    fn min_ready_seconds_hold_ordered_creation() {
        let mut sts = ordered(2);
        sts.spec.update_strategy.rolling_update =
            Some(RollingUpdateStatefulSetStrategy { min_ready_seconds: Some(10), ..Default::default() });
        let just = now().checked_sub(SignedDuration::from_secs(4)).unwrap();
        let got = plan(&sts, &[P::new(0, "r").ready_since(just).pod()]);
        assert_eq!((got.steps.len(), got.exit, got.requeue_after), (0, true, Some(Duration::from_secs(6))));
        let long_ago = now().checked_sub(SignedDuration::from_secs(40)).unwrap();
        assert_eq!(plan(&sts, &[P::new(0, "r").ready_since(long_ago).pod()]).steps, vec![create(1)]);
    }

    #[test]
    fn pre_delete_hook_prepares_instead() {
        let mut sts = ordered(1);
        sts.spec.lifecycle = Some(Lifecycle {
            pre_delete: Some(LifecycleHook {
                labels_handler: [("hold".to_string(), "true".to_string())].into(),
                mark_pod_not_ready: true,
                ..Default::default()
            }),
            ..Default::default()
        });
        let held = P::new(1, "r").label("hold", "true").pod();
        let got = plan(&sts, &[P::new(0, "r").pod(), held.clone()]);
        assert_eq!(
            got.steps,
            vec![ScaleStep::DeleteCondemned {
                ordinal: 1,
                action: DeleteAction::PrepareDelete { mark_pod_not_ready: true }
            }]
        );
        let prepared = P::new(1, "r").label("hold", "true").state(LifecycleState::PreparingDelete).pod();
        let got = plan(&sts, &[P::new(0, "r").pod(), prepared]);
        assert_eq!(
            (got.steps, got.exit),
            (vec![], false),
            "a prepared pod waits for its hook; nothing to write"
        );
    }

    #[test]
    fn drifted_pods_are_repaired() {
        let sts = ordered(1);
        let mut pod = P::new(0, "r").pod();
        pod.metadata.labels.as_mut().unwrap().remove("statefulset.kubernetes.io/pod-name");
        assert_eq!(plan(&sts, &[pod]).steps, vec![ScaleStep::Repair { ordinal: 0 }]);
        let mut pod = P::new(0, "r").pod();
        pod.spec.as_mut().unwrap().volumes = None;
        assert_eq!(plan(&sts, &[pod]).steps, vec![ScaleStep::Repair { ordinal: 0 }]);
    }

    #[test]
    fn retention_owners_are_set() {
        let mut sts = ordered(1);
        sts.spec.persistent_volume_claim_retention_policy =
            Some(StatefulSetPersistentVolumeClaimRetentionPolicy {
                when_deleted: "Retain".into(),
                when_scaled: "Delete".into(),
            });
        let claims: BTreeMap<String, PersistentVolumeClaim> = [0, 1]
            .into_iter()
            .map(|o| {
                (format!("data-web-{o}"), crate::statefulset::core::identity::claims_for(&sts, o).remove(0))
            })
            .collect();
        let members = members(&sts, &[], "r", &CoreOptions::default());
        let pods = [P::new(0, "r").pod(), P::new(1, "r").pod()];
        let members2 = super::members(&sts, &pods, "r", &CoreOptions::default());
        let got = plan_scale(&sts, &members2, &claims, &CoreOptions::default(), now());
        assert_eq!(got.steps, vec![ScaleStep::RetainCondemnedClaims { ordinal: 1 }, delete(1)]);
        let off = CoreOptions { auto_delete_pvc: false, ..Default::default() };
        assert_eq!(plan_scale(&sts, &members2, &claims, &off, now()).steps, vec![delete(1)]);

        // A claim still owned by the earlier web-0 holds its successor.
        let mut stale = claims.clone();
        stale.get_mut("data-web-0").unwrap().metadata.owner_references =
            Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                name: "web-0".into(),
                uid: "old".into(),
                ..Default::default()
            }]);
        let got = plan_scale(&sts, &members, &stale, &CoreOptions::default(), now());
        assert_eq!((got.steps, got.exit), (vec![], true));
    }

    /// Upstream `TestIsCurrentRevisionNeeded` (the cases that concern behaviour).
    #[test]
    fn revision_of_new_pods() {
        let with = |partition: i32, unordered: bool, reserved: Vec<IntOrString>| {
            let mut sts = parallel(3);
            sts.spec.reserve_ordinals = reserved;
            sts.spec.update_strategy.type_ = StatefulSetUpdateStrategyType::RollingUpdate;
            sts.spec.update_strategy.rolling_update = Some(RollingUpdateStatefulSetStrategy {
                partition: Some(partition),
                unordered_update: unordered.then(UnorderedUpdateStrategy::default),
                ..Default::default()
            });
            sts
        };
        let revisions = |sts: &StatefulSet, pods: &[Pod]| -> Vec<Option<Which>> {
            members(sts, pods, "new", &CoreOptions::default())
                .slots
                .iter()
                .map(|slot| match slot {
                    Slot::Missing(which) => Some(*which),
                    _ => None,
                })
                .collect()
        };
        use Which::{Current, Update};
        assert_eq!(revisions(&with(0, false, vec![]), &[]), [Some(Update); 3]);
        assert_eq!(revisions(&with(2, false, vec![]), &[]), [Some(Current), Some(Current), Some(Update)]);
        assert_eq!(
            revisions(&with(2, false, vec![IntOrString::Int(1)]), &[]),
            [Some(Current), None, Some(Current), Some(Update)],
            "a reserved hole does not count below the partition"
        );
        // Unordered: current while fewer than `partition` other pods are not updated.
        let pods = [P::new(0, "old").pod(), P::new(2, "new").pod()];
        assert_eq!(revisions(&with(1, true, vec![]), &pods), [None, Some(Update), None]);
        assert_eq!(revisions(&with(2, true, vec![]), &pods), [None, Some(Current), None]);
        let pods = [P::new(1, "new").pod(), P::new(2, "new").pod()];
        assert_eq!(revisions(&with(1, true, vec![]), &pods), [Some(Current), None, None]);
        let mut on_delete = with(2, false, vec![]);
        on_delete.spec.update_strategy.type_ = StatefulSetUpdateStrategyType::OnDelete;
        assert_eq!(revisions(&on_delete, &[]), [Some(Update); 3]);
    }
}
