//! The heart of the CloneSet controller: from the spec and the pods that exist, how many pods to
//! create or delete (per revision), how far the update still has to go, and the limits on each
//! (upstream `calculateDiffsWithExpectation`).
//!
//! Scale and update never act in the same reconcile; both call this function, each with its own
//! view of which pods count as "updated" ([`DiffPurpose`]). The arithmetic, including its
//! rounding and the order in which surge is spent, follows upstream exactly: the 80 cases of
//! upstream's table test are our acceptance test (`controllers/tests/cloneset_core_diffs.rs`).

use std::borrow::Borrow;

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::util::intstr::IntOrString, jiff::Timestamp};
use kruise_crds::{apps::v1beta1::CloneSet, common::LifecycleState, intstr};

use super::{options::CoreOptions, pods::is_specified_delete};
use crate::workload::pods::{equal_to_revision_hash, is_pod_available, is_pod_updated, lifecycle_state};

/// `maxUnavailable` when the CloneSet does not set one.
pub const DEFAULT_MAX_UNAVAILABLE: &str = "20%";

/// What the controller should do next, as numbers. All zero means nothing to do.
///
/// Counts are `i64` like Go's `int`: `update_max_unavailable` can be negative (more pods than
/// replicas with `maxUnavailable: 0`), and user-supplied limits may be as large as `i32::MAX`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExpectationDiffs {
    /// Pods to create (never negative).
    pub scale_up_num: i64,
    /// How many of the pods to create must be at the current (old) revision; may exceed
    /// `scale_up_num`, which still bounds the creations.
    pub scale_up_num_old_revision: i64,
    /// Pods to delete by scale-in, not counting pods already asked to be deleted.
    pub scale_down_num: i64,
    /// How many of the scale-in deletions should be old-revision pods; may exceed
    /// `scale_down_num`, which still bounds the deletions.
    pub scale_down_num_old_revision: i64,
    /// Most pods to create now (`scaleStrategy.maxUnavailable` minus pods already unavailable).
    pub scale_up_limit: i64,
    /// Most ready pods to delete now (`maxUnavailable`, plus pods above replicas, minus pods
    /// already unavailable); only set when something is to be deleted.
    pub delete_ready_limit: i64,
    /// Pods temporarily above replicas (bounded by `maxSurge`).
    pub use_surge: i64,
    /// The part of `use_surge` that are old-revision pods.
    pub use_surge_old_revision: i64,
    /// Pods still to move: positive toward the update revision, negative back to the current
    /// revision (partition raised with `CloneSetPartitionRollback`).
    pub update_num: i64,
    /// Most pods that may be unavailable while updating; only set when `update_num != 0`.
    pub update_max_unavailable: i64,
}

impl ExpectationDiffs {
    /// Whether there is nothing to scale or update.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Which pods count as "updated" in [`calculate_diffs_with_expectation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffPurpose {
    /// Deciding how to scale: with gate `PreparingUpdateAsUpdate`, pods in `PreparingUpdate`
    /// count as updated, so a replacement for an old pod is created at the current revision
    /// (upstream passes `revision.IsPodUpdate`).
    Scale,
    /// Deciding which pods to update: only the revision label counts (upstream passes nil).
    Update,
}

/// The strategy's int-or-percent fields resolved against `spec.replicas`, with upstream's
/// rounding: partition up (with the "<100% updates at least one" rule), maxSurge up (0 while
/// paused), maxUnavailable up when maxSurge is 0 and down otherwise, scale maxUnavailable up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrategyNumbers {
    /// `spec.replicas` (1 when unset, as defaulting would make it).
    pub replicas: i64,
    /// Pods kept at the current revision.
    pub partition: i64,
    /// Pods allowed above replicas while updating.
    pub max_surge: i64,
    /// Pods allowed to be unavailable while updating.
    pub max_unavailable: i64,
    /// Pods allowed to be unavailable while scaling up (`scaleStrategy.maxUnavailable`).
    pub scale_max_unavailable: i64,
}

/// Resolves the strategy numbers of a CloneSet. Values that do not parse count as 0, as upstream
/// does (the webhook rejects them before they get here); the partition error is logged.
pub fn strategy_numbers(cs: &CloneSet) -> StrategyNumbers {
    let replicas = cs.spec.replicas.unwrap_or(1);
    let replicas_i64 = i64::from(replicas);
    let scaled = |value: &IntOrString, round_up: bool| -> i64 {
        intstr::scaled_value(value, replicas, round_up).map(i64::from).unwrap_or(0)
    };
    let default_max_unavailable = IntOrString::String(DEFAULT_MAX_UNAVAILABLE.to_string());

    let (partition, max_surge, max_unavailable) = match &cs.spec.update_strategy.rolling_update {
        Some(rolling) => {
            let partition = match intstr::partition_replicas(rolling.partition.as_ref(), cs.spec.replicas) {
                Ok(value) => i64::from(value),
                Err(error) => {
                    tracing::error!(
                        cloneset = cs.metadata.name.as_deref().unwrap_or_default(),
                        %error,
                        "CloneSet partition value was illegal"
                    );
                    0
                }
            };
            let max_surge = match &rolling.max_surge {
                Some(_) if rolling.paused => 0,
                Some(value) => scaled(value, true),
                None => 0,
            };
            let max_unavailable =
                scaled(rolling.max_unavailable.as_ref().unwrap_or(&default_max_unavailable), max_surge == 0);
            (partition, max_surge, max_unavailable)
        }
        None => (0, 0, scaled(&default_max_unavailable, false)),
    };
    let scale_max_unavailable = match &cs.spec.scale_strategy.max_unavailable {
        Some(value) => scaled(value, true),
        None => i64::from(i32::MAX),
    };
    StrategyNumbers { replicas: replicas_i64, partition, max_surge, max_unavailable, scale_max_unavailable }
}

/// Whether PreparingDelete pods are left out when counting pods for scaling: the manager flag or
/// the CloneSet's `scaleStrategy.excludePreparingDelete`.
pub fn scaling_excludes_preparing_delete(cs: &CloneSet, options: &CoreOptions) -> bool {
    options.exclude_preparing_delete || cs.spec.scale_strategy.exclude_preparing_delete
}

/// Pod counts of one side (update revision or not).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SideCounts {
    total: i64,
    active: i64,
    pre_deleting: i64,
    to_delete: i64,
    unavailable: i64,
}

/// Computes what to scale and update (upstream `calculateDiffsWithExpectation`).
///
/// `pods` are the CloneSet's active pods; `now` decides `minReadySeconds` availability. With
/// [`DiffPurpose::Scale`] and gate `PreparingUpdateAsUpdate`, PreparingUpdate pods count as
/// updated.
pub fn calculate_diffs_with_expectation<P: Borrow<Pod>>(
    cs: &CloneSet,
    pods: &[P],
    current_revision: &str,
    update_revision: &str,
    purpose: DiffPurpose,
    options: &CoreOptions,
    now: Timestamp,
) -> ExpectationDiffs {
    let numbers = strategy_numbers(cs);
    let StrategyNumbers { replicas, partition, max_surge, max_unavailable, scale_max_unavailable } = numbers;
    let min_ready_seconds = cs.spec.min_ready_seconds;

    let counts_as_updated = |pod: &Pod| match purpose {
        DiffPurpose::Scale => is_pod_updated(pod, update_revision, options.preparing_update_as_update),
        DiffPurpose::Update => equal_to_revision_hash(pod, update_revision),
    };

    let mut new = SideCounts::default();
    let mut old = SideCounts::default();
    for pod in pods {
        let pod = pod.borrow();
        let side = if counts_as_updated(pod) { &mut new } else { &mut old };
        side.total += 1;
        if lifecycle_state(pod) == LifecycleState::PreparingDelete {
            side.pre_deleting += 1;
            continue;
        }
        side.active += 1;
        if is_specified_delete(cs, pod) {
            side.to_delete += 1;
        } else if !is_pod_available(pod, min_ready_seconds, now) {
            side.unavailable += 1;
        }
    }

    let mut update_old_diff = old.active - partition;
    let mut update_new_diff = new.active - (replicas - partition);
    let total_unavailable = new.pre_deleting + old.pre_deleting + new.unavailable + old.unavailable;
    // Without rollback (or with nothing to roll back to) pods only move forward.
    if update_revision == current_revision || !options.partition_rollback {
        update_old_diff = update_old_diff.max(0);
        update_new_diff = update_new_diff.min(0);
    }

    let mut res = ExpectationDiffs::default();

    if max_surge > 0 {
        // Surge that keeps specified deletions within maxUnavailable.
        let to_delete = new.to_delete + old.to_delete;
        let (mut scale_surge, mut scale_old_surge) = (0, 0);
        if to_delete > 0 {
            scale_surge = ((total_unavailable + to_delete) - max_unavailable).max(0).min(to_delete);
            if scale_surge > new.to_delete {
                scale_old_surge = scale_surge - new.to_delete;
            }
        }

        // Surge for moving pods between revisions when one side is short and the other long.
        let (mut update_surge, mut update_old_surge) = (0, 0);
        if is_plus_and_minus(update_old_diff, update_new_diff) {
            if update_old_diff.abs() <= update_new_diff.abs() {
                update_surge = update_old_diff.abs();
                if update_old_diff < 0 {
                    update_old_surge = update_surge;
                }
            } else {
                update_surge = update_new_diff.abs();
                if update_new_diff > 0 {
                    update_old_surge = update_surge;
                }
            }
        }

        // Scale and update never happen in the same reconcile, so only the larger one counts.
        if scale_surge >= update_surge {
            res.use_surge = max_surge.min(scale_surge);
            res.use_surge_old_revision = res.use_surge.min(scale_old_surge);
        } else {
            res.use_surge = max_surge.min(update_surge);
            res.use_surge_old_revision = res.use_surge.min(update_old_surge);
        }
    }

    let pod_count = i64::try_from(pods.len()).unwrap_or(i64::MAX);
    let mut current_total = pod_count;
    let mut current_old = old.total;
    if scaling_excludes_preparing_delete(cs, options) {
        current_total -= old.pre_deleting + new.pre_deleting;
        current_old -= old.pre_deleting;
    }
    let expected_total = replicas + res.use_surge;
    let expected_old = partition + res.use_surge_old_revision;

    let scale_up = expected_total - current_total;
    if scale_up > 0 {
        res.scale_up_num = scale_up;
        res.scale_up_num_old_revision = (expected_old - current_old).max(0);
        res.scale_up_limit = scale_up.min((scale_max_unavailable - total_unavailable).max(0));
    }

    // Pods already asked to be deleted are not deleted twice.
    let scale_down = current_total - old.to_delete - new.to_delete - expected_total;
    if scale_down > 0 {
        res.scale_down_num = scale_down;
        res.scale_down_num_old_revision = (current_old - old.to_delete - expected_old).max(0);
    }
    if new.to_delete > 0 || old.to_delete > 0 || res.scale_down_num > 0 {
        res.delete_ready_limit = (max_unavailable + (pod_count - replicas) - total_unavailable).max(0);
    }

    res.update_num =
        if update_old_diff.abs() <= update_new_diff.abs() { update_old_diff } else { -update_new_diff };
    if res.update_num != 0 {
        res.update_max_unavailable = max_unavailable + pod_count - replicas;
    }

    if !res.is_empty() {
        tracing::debug!(
            cloneset = cs.metadata.name.as_deref().unwrap_or_default(),
            replicas,
            partition,
            max_surge,
            max_unavailable,
            pods = pod_count,
            new_revision = new.total,
            new_revision_active = new.active,
            old_revision = old.total,
            old_revision_active = old.active,
            unavailable_new = new.unavailable,
            unavailable_old = old.unavailable,
            pre_deleting_new = new.pre_deleting,
            pre_deleting_old = old.pre_deleting,
            to_delete_new = new.to_delete,
            to_delete_old = old.to_delete,
            ?purpose,
            result = ?res,
            "calculated CloneSet diffs"
        );
    }
    res
}

/// Whether one number is positive and the other negative.
fn is_plus_and_minus(a: i64, b: i64) -> bool {
    (a > 0 && b < 0) || (a < 0 && b > 0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use kruise_crds::apps::v1beta1::{CloneSetSpec, RollingUpdateCloneSetStrategy};

    use super::*;

    fn s(text: &str) -> IntOrString {
        IntOrString::String(text.into())
    }

    fn cs(replicas: i32, rolling: Option<RollingUpdateCloneSetStrategy>) -> CloneSet {
        let mut cs = CloneSet::new("web", CloneSetSpec { replicas: Some(replicas), ..Default::default() });
        cs.spec.update_strategy.rolling_update = rolling;
        cs
    }

    #[test]
    fn strategy_numbers_round_like_upstream() {
        // (case, replicas, rolling update, scale maxUnavailable, expected (partition, surge, unavailable, scale))
        let max = i64::from(i32::MAX);
        let cases: Vec<(
            &str,
            i32,
            Option<RollingUpdateCloneSetStrategy>,
            Option<IntOrString>,
            (i64, i64, i64, i64),
        )> = vec![
            ("no rolling update: 20% of 7 rounded down", 7, None, None, (0, 0, 1, max)),
            ("no rolling update, 4 replicas", 4, None, None, (0, 0, 0, max)),
            (
                "default maxUnavailable rounds up without surge",
                4,
                Some(Default::default()),
                None,
                (0, 0, 1, max),
            ),
            (
                "maxUnavailable rounds down with surge",
                4,
                Some(RollingUpdateCloneSetStrategy {
                    max_surge: Some(IntOrString::Int(1)),
                    ..Default::default()
                }),
                None,
                (0, 1, 0, max),
            ),
            (
                "surge percent rounds up",
                5,
                Some(RollingUpdateCloneSetStrategy {
                    max_surge: Some(s("30%")),
                    max_unavailable: Some(s("40%")),
                    ..Default::default()
                }),
                None,
                (0, 2, 2, max),
            ),
            (
                "paused forces surge to 0, so maxUnavailable rounds up",
                5,
                Some(RollingUpdateCloneSetStrategy {
                    max_surge: Some(s("30%")),
                    max_unavailable: Some(s("30%")),
                    paused: true,
                    ..Default::default()
                }),
                None,
                (0, 0, 2, max),
            ),
            (
                "partition 99% of 5 leaves one pod to update",
                5,
                Some(RollingUpdateCloneSetStrategy { partition: Some(s("99%")), ..Default::default() }),
                None,
                (4, 0, 1, max),
            ),
            (
                "partition 100% keeps all",
                5,
                Some(RollingUpdateCloneSetStrategy { partition: Some(s("100%")), ..Default::default() }),
                None,
                (5, 0, 1, max),
            ),
            (
                "illegal partition counts as 0",
                5,
                Some(RollingUpdateCloneSetStrategy { partition: Some(s("lots")), ..Default::default() }),
                None,
                (0, 0, 1, max),
            ),
            ("scale maxUnavailable percent rounds up", 5, None, Some(s("10%")), (0, 0, 1, 1)),
        ];
        for (name, replicas, rolling, scale_max, expected) in cases {
            let mut cs = cs(replicas, rolling);
            cs.spec.scale_strategy.max_unavailable = scale_max;
            let n = strategy_numbers(&cs);
            assert_eq!(
                (n.partition, n.max_surge, n.max_unavailable, n.scale_max_unavailable),
                expected,
                "{name}"
            );
        }
    }
}
