//! Which pods a CloneSet's rolling update takes next (upstream `Update` steps 3-5 and
//! `limitUpdateIndexes`).
//!
//! Candidates are the pods on the wrong side of the update (not at the update revision, or, when
//! rolling back, at it), minus pods being deleted or waiting out an in-place grace period. The
//! reconciler orders them with the shared sorter
//! ([`crate::workload::update_order::sort_update_indexes`]: `ActivePods` order, then
//! `priorityStrategy`, then `scatterStrategy`, pods already in `PreparingUpdate` first). The list
//! is then cut to `|updateNum|` and to what `maxUnavailable` still allows, counting pods this
//! round makes unavailable.

use std::borrow::Borrow;

use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};
use kruise_crds::common::LifecycleState;

use super::diffs::ExpectationDiffs;
use crate::workload::pods::{
    equal_to_revision_hash, has_in_place_update_grace, is_pod_available, lifecycle_state,
};

/// Positions of the pods that may be updated in this round (upstream `Update` step 3): when
/// `update_num > 0`, pods not at the update revision; when negative (rollback), pods at it; in
/// either case not in `PreparingDelete`, and not waiting out an in-place grace period (pods in
/// `Updated` are taken even then).
pub fn update_candidates<P: Borrow<Pod>>(pods: &[P], update_revision: &str, update_num: i64) -> Vec<usize> {
    if update_num == 0 {
        return Vec::new();
    }
    pods.iter()
        .enumerate()
        .filter(|(_, pod)| {
            let pod = (*pod).borrow();
            let at_update = equal_to_revision_hash(pod, update_revision);
            let waits = if update_num > 0 { !at_update } else { at_update };
            if !waits {
                return false;
            }
            match lifecycle_state(pod) {
                LifecycleState::PreparingDelete => false,
                LifecycleState::Updated => true,
                _ => !has_in_place_update_grace(pod),
            }
        })
        .map(|(i, _)| i)
        .collect()
}

/// Cuts the ordered candidates to what this round may update (upstream `limitUpdateIndexes`):
/// at most `|update_num|`, stopping once the unavailable pods at the target revision plus the
/// pods taken reach `update_max_unavailable`, and once taking another available pod would make
/// more than `update_max_unavailable` pods unavailable overall (taking an already unavailable
/// pod costs nothing).
pub fn limit_update_indexes<P: Borrow<Pod>>(
    diffs: &ExpectationDiffs,
    mut indexes: Vec<usize>,
    pods: &[P],
    target_revision: &str,
    min_ready_seconds: i32,
    now: Timestamp,
) -> Vec<usize> {
    let wanted = usize::try_from(diffs.update_num.unsigned_abs()).unwrap_or(usize::MAX);
    indexes.truncate(wanted);

    let mut unavailable: i64 = 0;
    let mut target_unavailable: i64 = 0;
    for pod in pods {
        let pod = pod.borrow();
        if !is_pod_available(pod, min_ready_seconds, now) {
            unavailable += 1;
            if equal_to_revision_hash(pod, target_revision) {
                target_unavailable += 1;
            }
        }
    }
    let mut taken: i64 = 0;
    for &i in &indexes {
        if target_unavailable + taken >= diffs.update_max_unavailable {
            break;
        }
        if is_pod_available(pods[i].borrow(), min_ready_seconds, now) {
            if unavailable >= diffs.update_max_unavailable {
                break;
            }
            unavailable += 1;
        }
        taken += 1;
    }
    indexes.truncate(usize::try_from(taken).unwrap_or(0));
    indexes
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use std::collections::BTreeMap;

    use k8s_openapi::{
        api::core::v1::{PodCondition, PodStatus},
        apimachinery::pkg::util::intstr::IntOrString,
    };
    use kruise_crds::{
        apps::v1beta1::{CloneSet, CloneSetSpec, RollingUpdateCloneSetStrategy},
        common::{IN_PLACE_UPDATE_GRACE_KEY, LIFECYCLE_STATE_KEY, well_known::CONTROLLER_REVISION_HASH},
    };

    use super::*;
    use crate::cloneset::core::{CoreOptions, DiffPurpose, calculate_diffs_with_expectation};

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn pod(phase: &str, ready: bool) -> Pod {
        let mut pod = Pod::default();
        let mut status = PodStatus { phase: Some(phase.into()), ..Default::default() };
        if ready {
            status.conditions = Some(vec![PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                ..Default::default()
            }]);
        }
        pod.status = Some(status);
        pod
    }

    fn at_revision(mut pod: Pod, revision: &str) -> Pod {
        pod.metadata.labels.get_or_insert_default().insert(CONTROLLER_REVISION_HASH.into(), revision.into());
        pod
    }

    #[test]
    fn candidates_skip_deleting_and_grace() {
        let mut grace = at_revision(pod("Running", true), "old");
        grace.metadata.annotations = Some(labels(&[(IN_PLACE_UPDATE_GRACE_KEY, "{}")]));
        let mut updated_with_grace = grace.clone();
        updated_with_grace
            .metadata
            .labels
            .get_or_insert_default()
            .insert(LIFECYCLE_STATE_KEY.into(), "Updated".into());
        let mut deleting = at_revision(pod("Running", true), "old");
        deleting
            .metadata
            .labels
            .get_or_insert_default()
            .insert(LIFECYCLE_STATE_KEY.into(), "PreparingDelete".into());
        let pods = vec![
            at_revision(pod("Running", true), "old"),
            at_revision(pod("Running", true), "new"),
            grace,
            updated_with_grace,
            deleting,
        ];
        assert_eq!(update_candidates(&pods, "new", 3), vec![0, 3]);
        assert_eq!(update_candidates(&pods, "new", -1), vec![1]);
        assert!(update_candidates(&pods, "new", 0).is_empty());
    }

    /// upstream `TestCalculateUpdateCount`: how many of the waiting pods one round updates.
    #[test]
    fn update_count_limits() {
        let ready = || pod("Running", true);
        let none = Pod::default;
        let rolling = |partition: Option<i32>, max_unavailable: Option<i32>, max_surge: Option<i32>| {
            RollingUpdateCloneSetStrategy {
                partition: partition.map(IntOrString::Int),
                max_unavailable: max_unavailable.map(IntOrString::Int),
                max_surge: max_surge.map(IntOrString::Int),
                ..Default::default()
            }
        };
        // (strategy, replicas, old positions, pods, expected count)
        let cases: Vec<(RollingUpdateCloneSetStrategy, i32, Vec<usize>, Vec<Pod>, usize)> = vec![
            (rolling(None, None, None), 3, vec![0, 1, 2], vec![ready(), ready(), ready()], 1),
            (rolling(None, None, None), 3, vec![0, 1, 2], vec![ready(), none(), ready()], 0),
            (rolling(None, None, None), 3, vec![0, 1, 2], vec![none(), ready(), ready()], 1),
            (
                rolling(None, None, None),
                10,
                (0..9).collect(),
                vec![none(), ready(), ready(), ready(), ready(), ready(), ready(), ready(), none(), ready()],
                1,
            ),
            (rolling(Some(2), Some(3), None), 3, vec![0, 1], vec![none(), ready(), ready()], 0),
            (rolling(Some(2), Some(3), None), 8, (0..7).collect(), (0..8).map(|_| ready()).collect(), 3),
            (rolling(Some(0), Some(2), None), 5, (0..5).collect(), (0..5).map(|_| none()).collect(), 2),
            (rolling(Some(0), Some(2), None), 5, vec![0, 1, 2], (0..5).map(|_| none()).collect(), 0),
            (
                rolling(Some(0), Some(2), None),
                5,
                vec![0, 1, 2],
                vec![none(), none(), none(), ready(), none()],
                1,
            ),
            (rolling(Some(0), Some(2), Some(1)), 5, (0..5).collect(), (0..6).map(|_| none()).collect(), 2),
            (
                rolling(Some(0), Some(2), Some(1)),
                5,
                vec![0, 1, 2, 3],
                vec![none(), none(), none(), none(), ready(), none()],
                2,
            ),
            (
                rolling(Some(0), Some(2), Some(1)),
                5,
                vec![0, 1, 2],
                vec![none(), none(), none(), none(), ready(), none()],
                1,
            ),
            (rolling(Some(0), Some(2), Some(1)), 5, vec![0, 1, 2], (0..6).map(|_| none()).collect(), 0),
            (
                rolling(Some(7), Some(3), None),
                8,
                vec![0, 1, 2],
                vec![ready(), ready(), ready(), none(), none(), none(), none(), none()],
                3,
            ),
            (rolling(None, Some(2), Some(1)), 4, vec![0, 1], (0..5).map(|_| ready()).collect(), 1),
            (rolling(None, Some(2), Some(1)), 4, vec![0, 1, 2, 3], (0..6).map(|_| ready()).collect(), 2),
        ];
        let now = Timestamp::from_second(1_000).unwrap();
        let options = CoreOptions { partition_rollback: true, ..Default::default() };
        for (number, (strategy, replicas, old, pods, expected)) in cases.into_iter().enumerate() {
            let pods: Vec<Pod> = pods
                .into_iter()
                .enumerate()
                .map(|(i, p)| at_revision(p, if old.contains(&i) { "current" } else { "updated" }))
                .collect();
            let mut cs =
                CloneSet::new("web", CloneSetSpec { replicas: Some(replicas), ..Default::default() });
            cs.spec.update_strategy.rolling_update = Some(strategy);
            let diffs = calculate_diffs_with_expectation(
                &cs,
                &pods,
                "current",
                "updated",
                DiffPurpose::Update,
                &options,
                now,
            );
            let (waiting, target): (Vec<usize>, &str) = if diffs.update_num > 0 {
                (old.clone(), "updated")
            } else if diffs.update_num < 0 {
                ((0..pods.len()).filter(|i| !old.contains(i)).collect(), "current")
            } else {
                (Vec::new(), "")
            };
            let got = limit_update_indexes(&diffs, waiting, &pods, target, 0, now);
            assert_eq!(got.len(), expected, "case #{number}: diffs {diffs:?}, got {got:?}");
        }
    }
}
