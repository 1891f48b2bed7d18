//! Acceptance test of the CloneSet decision core: every case of upstream's
//! `TestCalculateDiffsWithExpectation` (SCENARIOS.md section 2,
//! `pkg/controller/cloneset/sync/cloneset_sync_utils_test.go`) as one table, run against
//! [`calculate_diffs_with_expectation`].
//!
//! As upstream: current revision `old_rev`, update revision `new_rev` (both `new_rev` when a case
//! is "consistent"), gate `CloneSetPartitionRollback` on unless a case turns it off, gate
//! `PreparingUpdateAsUpdate` on for all cases, and pods counted for update (revision label only)
//! unless a case counts them for scaling (upstream passes `revision.IsPodUpdate`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Pod, PodCondition, PodStatus},
    apimachinery::pkg::util::intstr::IntOrString,
    jiff::Timestamp,
};
use kruise_controllers::cloneset::core::{
    CoreOptions, DiffPurpose, ExpectationDiffs, calculate_diffs_with_expectation,
};
use kruise_crds::{
    apps::v1beta1::{CloneSet, CloneSetSpec, RollingUpdateCloneSetStrategy},
    common::{
        LIFECYCLE_STATE_KEY,
        LifecycleState::{self, Normal, PreparingDelete, PreparingUpdate, Updating},
        well_known::{CONTROLLER_REVISION_HASH, SPECIFIED_DELETE},
    },
};

const OLD_REVISION: &str = "old_rev";
const NEW_REVISION: &str = "new_rev";

#[derive(Clone, Copy)]
enum Rev {
    Old,
    New,
}
const OLD: Rev = Rev::Old;
const NEW: Rev = Rev::New;
const READY: bool = true;
const NOT_READY: bool = false;
const DELETE: bool = true;
const KEEP: bool = false;

/// An int-or-percent written as in the upstream table.
enum V {
    I(i32),
    P(&'static str),
}
use V::{I, P};

impl V {
    fn value(&self) -> IntOrString {
        match self {
            I(n) => IntOrString::Int(*n),
            P(text) => IntOrString::String((*text).to_string()),
        }
    }
}

/// upstream `createTestCloneSet(replicas, partition, maxUnavailable, maxSurge)`.
fn set(replicas: i32, partition: V, max_unavailable: V, max_surge: V) -> CloneSet {
    let mut cs = CloneSet::new("test", CloneSetSpec { replicas: Some(replicas), ..Default::default() });
    cs.spec.update_strategy.rolling_update = Some(RollingUpdateCloneSetStrategy {
        partition: Some(partition.value()),
        max_unavailable: Some(max_unavailable.value()),
        max_surge: Some(max_surge.value()),
        ..Default::default()
    });
    cs
}

trait SetExt {
    fn scale_max_unavailable(self, value: V) -> Self;
    fn exclude_preparing_delete(self) -> Self;
    fn paused(self) -> Self;
}

impl SetExt for CloneSet {
    fn scale_max_unavailable(mut self, value: V) -> Self {
        self.spec.scale_strategy.max_unavailable = Some(value.value());
        self
    }
    fn exclude_preparing_delete(mut self) -> Self {
        self.spec.scale_strategy.exclude_preparing_delete = true;
        self
    }
    fn paused(mut self) -> Self {
        if let Some(rolling) = self.spec.update_strategy.rolling_update.as_mut() {
            rolling.paused = true;
        }
        self
    }
}

/// upstream `createTestPod(revision, lifecycleState, ready, specifiedDelete)`.
fn pod(rev: Rev, state: &LifecycleState, ready: bool, specified_delete: bool) -> Pod {
    let revision = match rev {
        Rev::Old => OLD_REVISION,
        Rev::New => NEW_REVISION,
    };
    let mut labels = BTreeMap::from([
        (CONTROLLER_REVISION_HASH.to_string(), revision.to_string()),
        (LIFECYCLE_STATE_KEY.to_string(), state.as_str().to_string()),
    ]);
    if specified_delete {
        labels.insert(SPECIFIED_DELETE.to_string(), "true".to_string());
    }
    let mut pod = Pod::default();
    pod.metadata.labels = Some(labels);
    if ready {
        pod.status = Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                ..Default::default()
            }]),
            ..Default::default()
        });
    }
    pod
}

struct Case {
    name: &'static str,
    set: CloneSet,
    pods: Vec<Pod>,
    expected: ExpectationDiffs,
    consistent: bool,
    rollback_gate: bool,
    purpose: DiffPurpose,
}

fn case(
    name: &'static str,
    set: CloneSet,
    pods: &[(usize, Rev, LifecycleState, bool, bool)],
    expected: ExpectationDiffs,
) -> Case {
    let pods = pods
        .iter()
        .flat_map(|(count, rev, state, ready, delete)| {
            (0..*count).map(move |_| pod(*rev, state, *ready, *delete))
        })
        .collect();
    Case { name, set, pods, expected, consistent: false, rollback_gate: true, purpose: DiffPurpose::Update }
}

impl Case {
    fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }
    fn rollback_gate_off(mut self) -> Self {
        self.rollback_gate = false;
        self
    }
    fn counting_for_scale(mut self) -> Self {
        self.purpose = DiffPurpose::Scale;
        self
    }
}

#[allow(clippy::too_many_lines)] // the table is the test
fn cases() -> Vec<Case> {
    vec![
        case(
            "an empty cloneset",
            set(0, I(0), I(1), I(0)),
            &[],
            ExpectationDiffs::default(),
        ),
        case(
            "increase replicas to 5 (step 1/2)",
            set(5, I(0), I(1), I(0)),
            &[],
            ExpectationDiffs { scale_up_num: 5, scale_up_limit: 5, ..Default::default() },
        ),
        case(
            "increase replicas to 5 (step 2/2)",
            set(5, I(0), I(1), I(0)),
            &[(5, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "specified delete 1 pod (all ready) (step 1/3)",
            set(5, I(0), I(1), I(0)),
            &[(1, NEW, Normal, READY, DELETE), (4, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { delete_ready_limit: 1, ..Default::default() },
        ),
        case(
            "specified delete 1 pod (all ready) (step 2/3)",
            set(5, I(0), I(1), I(0)),
            &[(4, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "specified delete 1 pod (all ready) (step 3/3)",
            set(5, I(0), I(1), I(0)),
            &[(5, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "specified delete 2 pod (all ready) (step 1/6)",
            set(5, I(0), I(1), I(0)),
            &[(2, NEW, Normal, READY, DELETE), (3, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { delete_ready_limit: 1, ..Default::default() },
        ),
        case(
            "specified delete 2 pod (all ready) (step 2/6)",
            set(5, I(0), I(1), I(0)),
            &[(1, NEW, Normal, READY, DELETE), (3, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "specified delete 2 pod (all ready) (step 3/6)",
            set(5, I(0), I(1), I(0)),
            &[(1, NEW, Normal, READY, DELETE), (3, NEW, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "specified delete 2 pod (all ready) (step 4/6)",
            set(5, I(0), I(1), I(0)),
            &[(1, NEW, Normal, READY, DELETE), (4, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { delete_ready_limit: 1, ..Default::default() },
        ),
        case(
            "specified delete 2 pod (all ready) (step 5/6)",
            set(5, I(0), I(1), I(0)),
            &[(4, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "specified delete 2 pod (all ready) (step 6/6)",
            set(5, I(0), I(1), I(0)),
            &[(5, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "specified delete 2 pod and replicas to 4 (step 1/3)",
            set(4, I(0), I(1), I(0)),
            &[(2, NEW, Normal, NOT_READY, DELETE), (3, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { delete_ready_limit: 2, ..Default::default() },
        ),
        case(
            "specified delete 2 pod and replicas to 4 (step 2/3)",
            set(4, I(0), I(1), I(0)),
            &[(3, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "specified delete 2 pod and replicas to 4 (step 3/3)",
            set(4, I(0), I(1), I(0)),
            &[(4, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "update partition=3 (step 1/3)",
            set(5, I(3), I(1), I(0)),
            &[(5, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { update_num: 2, update_max_unavailable: 1, ..Default::default() },
        ),
        case(
            "update partition=3 (step 2/3)",
            set(5, I(3), I(1), I(0)),
            &[(1, NEW, Normal, READY, KEEP), (4, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { update_num: 1, update_max_unavailable: 1, ..Default::default() },
        ),
        case(
            "update partition=3 (step 3/3)",
            set(5, I(3), I(1), I(0)),
            &[(2, NEW, Normal, READY, KEEP), (3, OLD, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "rollback partition=4 (step 1/3)",
            set(5, I(4), I(2), I(0)),
            &[(4, NEW, Normal, READY, KEEP), (1, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { update_num: -3, update_max_unavailable: 2, ..Default::default() },
        ),
        case(
            "rollback partition=4 (step 2/3)",
            set(5, I(4), I(2), I(0)),
            &[(2, NEW, Normal, READY, KEEP), (3, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { update_num: -1, update_max_unavailable: 2, ..Default::default() },
        ),
        case(
            "rollback partition=4 (step 3/3)",
            set(5, I(4), I(2), I(0)),
            &[(1, NEW, Normal, READY, KEEP), (4, OLD, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "specified delete with maxSurge (step 1/4)",
            set(5, I(0), I(0), I(1)),
            &[(1, NEW, Normal, READY, DELETE), (4, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, use_surge: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "specified delete with maxSurge (step 2/4)",
            set(5, I(0), I(0), I(1)),
            &[(1, NEW, Normal, READY, DELETE), (4, NEW, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { use_surge: 1, ..Default::default() },
        ),
        case(
            "specified delete with maxSurge (step 3/4)",
            set(5, I(0), I(0), I(1)),
            &[(1, NEW, Normal, READY, DELETE), (5, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { delete_ready_limit: 1, use_surge: 1, ..Default::default() },
        ),
        case(
            "specified delete with maxSurge (step 4/4)",
            set(5, I(0), I(0), I(1)),
            &[(5, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "update in-place partition=3 with maxSurge (step 1/4)",
            set(5, I(3), I(1), I(1)),
            &[(5, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, use_surge: 1, update_num: 2, update_max_unavailable: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "update in-place partition=3 with maxSurge (step 2/4)",
            set(5, I(3), I(1), I(1)),
            &[(5, OLD, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { use_surge: 1, update_num: 1, update_max_unavailable: 2, ..Default::default() },
        ),
        case(
            "update in-place partition=3 with maxSurge (step 3/4)",
            set(5, I(3), I(1), I(1)),
            &[(4, OLD, Normal, READY, KEEP), (1, NEW, Updating, NOT_READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_down_num: 1, scale_down_num_old_revision: 1, delete_ready_limit: 0, ..Default::default() },
        ),
        case(
            "update in-place partition=3 with maxSurge (step 4/4)",
            set(5, I(3), I(1), I(1)),
            &[(4, OLD, Normal, READY, KEEP), (1, NEW, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_down_num: 1, scale_down_num_old_revision: 1, delete_ready_limit: 1, ..Default::default() },
        ),
        case(
            "update recreate partition=3 with maxSurge (step 1/7)",
            set(5, I(3), I(1), I(1)),
            &[(5, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, use_surge: 1, update_num: 2, update_max_unavailable: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "update recreate partition=3 with maxSurge (step 2/7)",
            set(5, I(3), I(1), I(1)),
            &[(5, OLD, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { use_surge: 1, update_num: 1, update_max_unavailable: 2, ..Default::default() },
        ),
        case(
            "update recreate partition=3 with maxSurge (step 3/7)",
            set(5, I(3), I(1), I(1)),
            &[(4, OLD, Normal, READY, KEEP), (1, OLD, Normal, READY, DELETE), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { use_surge: 1, use_surge_old_revision: 1, delete_ready_limit: 1, update_num: 1, update_max_unavailable: 2, ..Default::default() },
        ),
        case(
            "update recreate partition=3 with maxSurge (step 4/7)",
            set(5, I(3), I(1), I(1)),
            &[(4, OLD, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { use_surge: 1, scale_up_num: 1, update_num: 1, update_max_unavailable: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "update recreate partition=3 with maxSurge (step 5/7)",
            set(5, I(3), I(1), I(1)),
            &[(4, OLD, Normal, READY, KEEP), (2, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_down_num: 1, scale_down_num_old_revision: 1, delete_ready_limit: 0, ..Default::default() },
        ),
        case(
            "update recreate partition=3 with maxSurge (step 6/7)",
            set(5, I(3), I(1), I(1)),
            &[(4, OLD, Normal, READY, KEEP), (1, NEW, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_down_num: 1, scale_down_num_old_revision: 1, delete_ready_limit: 1, ..Default::default() },
        ),
        case(
            "update recreate partition=3 with maxSurge (step 7/7)",
            set(5, I(3), I(1), I(1)),
            &[(3, OLD, Normal, READY, KEEP), (2, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 1/3)",
            set(5, P("99%"), I(3), I(2)),
            &[(5, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, use_surge: 1, update_num: 1, update_max_unavailable: 3, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 2/3)",
            set(5, P("99%"), I(3), I(2)),
            &[(5, OLD, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_down_num: 1, scale_down_num_old_revision: 1, delete_ready_limit: 3, ..Default::default() },
        ),
        case(
            "update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 3/3)",
            set(5, P("99%"), I(3), I(2)),
            &[(4, OLD, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 1/3)",
            set(5, P("99%"), P("40%"), P("30%")),
            &[(5, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, use_surge: 1, update_num: 1, update_max_unavailable: 2, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 2/3)",
            set(5, P("99%"), P("40%"), P("30%")),
            &[(5, OLD, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_down_num: 1, scale_down_num_old_revision: 1, delete_ready_limit: 2, ..Default::default() },
        ),
        case(
            "update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 3/3)",
            set(5, P("99%"), P("40%"), P("30%")),
            &[(4, OLD, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 1/3)",
            set(5, P("99%"), P("30%"), P("30%")),
            &[(5, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, use_surge: 1, update_num: 1, update_max_unavailable: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 2/3)",
            set(5, P("99%"), P("30%"), P("30%")),
            &[(5, OLD, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_down_num: 1, scale_down_num_old_revision: 1, delete_ready_limit: 1, ..Default::default() },
        ),
        case(
            "update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 3/3)",
            set(5, P("99%"), P("30%"), P("30%")),
            &[(4, OLD, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "revision consistent 1",
            set(5, I(0), I(1), I(0)),
            &[(5, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ).consistent(),
        case(
            "revision consistent 2",
            set(5, I(3), I(1), I(0)),
            &[(5, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ).consistent(),
        case(
            "revision consistent 3",
            set(5, I(3), I(1), I(0)),
            &[(2, OLD, Normal, READY, KEEP), (3, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ).consistent(),
        case(
            "revision consistent 4",
            set(5, I(1), I(1), I(0)),
            &[(3, OLD, Normal, READY, KEEP), (2, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { update_num: 2, update_max_unavailable: 1, ..Default::default() },
        ).consistent(),
        case(
            "allow to update when fail to scale out normally",
            set(5, I(1), I(2), I(0)),
            &[(2, OLD, Normal, READY, KEEP), (2, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, update_num: 1, update_max_unavailable: 1, scale_up_limit: 1, ..Default::default() },
        ).consistent(),
        case(
            "allow to update when fail to scale in normally",
            set(5, I(1), I(1), I(0)),
            &[(3, OLD, Normal, READY, KEEP), (3, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { scale_down_num: 1, scale_down_num_old_revision: 2, delete_ready_limit: 2, update_num: 1, update_max_unavailable: 2, ..Default::default() },
        ).consistent(),
        case(
            "disable rollback feature-gate",
            set(5, I(4), I(1), I(0)),
            &[(1, OLD, Normal, READY, KEEP), (4, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ).rollback_gate_off(),
        case(
            "increase replicas 0 to 5 with scale maxUnavailable = 2",
            set(5, I(0), I(1), I(0)).scale_max_unavailable(I(2)),
            &[],
            ExpectationDiffs { scale_up_num: 5, scale_up_limit: 2, ..Default::default() },
        ),
        case(
            "increase replicas 3 to 6 with scale maxUnavailable = 2, not ready pod = 1",
            set(6, I(0), I(1), I(0)).scale_max_unavailable(I(2)),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_up_num: 3, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "increase replicas 3 to 6 with scale maxUnavailable = 2, not ready pod = 2",
            set(6, I(0), I(1), I(0)).scale_max_unavailable(I(2)),
            &[(1, NEW, Normal, READY, KEEP), (2, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_up_num: 3, scale_up_limit: 0, ..Default::default() },
        ),
        case(
            "[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 1/4)",
            set(3, I(0), I(1), I(0)),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, Normal, READY, DELETE)],
            ExpectationDiffs { delete_ready_limit: 1, ..Default::default() },
        ),
        case(
            "[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 2/4)",
            set(3, I(0), I(1), I(0)),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, PreparingDelete, READY, DELETE)],
            ExpectationDiffs::default(),
        ),
        case(
            "[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 3/4)",
            set(3, I(0), I(1), I(0)),
            &[(2, NEW, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 4/4)",
            set(3, I(0), I(1), I(0)),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 1/4)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, Normal, READY, DELETE)],
            ExpectationDiffs { delete_ready_limit: 1, ..Default::default() },
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 2/4)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, PreparingDelete, READY, DELETE)],
            ExpectationDiffs { scale_up_num: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 3/4)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, PreparingDelete, READY, DELETE), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 4/4)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, PreparingDelete, READY, DELETE), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 1/5)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, Normal, READY, DELETE)],
            ExpectationDiffs { delete_ready_limit: 1, ..Default::default() },
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 2/5)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, PreparingDelete, READY, DELETE)],
            ExpectationDiffs { scale_up_num: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 3/5)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, PreparingDelete, READY, DELETE), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 4/5)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(3, NEW, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_down_num: 1, delete_ready_limit: 1, ..Default::default() },
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 5/5)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(3, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 1/6)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(3, NEW, Normal, READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 2/6)",
            set(2, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, Normal, READY, DELETE)],
            ExpectationDiffs { delete_ready_limit: 2, ..Default::default() },
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 3/6)",
            set(2, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, PreparingDelete, READY, DELETE)],
            ExpectationDiffs::default(),
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 4/6)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, PreparingDelete, READY, DELETE)],
            ExpectationDiffs { scale_up_num: 1, scale_up_limit: 1, ..Default::default() },
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 5/6)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, PreparingDelete, READY, DELETE), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 6/6)",
            set(3, I(0), I(1), I(0)).exclude_preparing_delete(),
            &[(2, NEW, Normal, READY, KEEP), (1, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs::default(),
        ),
        case(
            "[scalingWithPreparingUpdate=true] scaling up when a preparing pod is not updated, and expected-updated is 1",
            set(4, P("90%"), I(1), I(0)).exclude_preparing_delete(),
            &[(1, OLD, PreparingUpdate, READY, KEEP), (2, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, scale_up_limit: 1, scale_up_num_old_revision: 1, ..Default::default() },
        ).counting_for_scale(),
        case(
            "[scalingWithPreparingUpdate=true] scaling up when a preparing pod is not updated, and expected-updated is 2",
            set(4, I(2), I(1), I(0)).exclude_preparing_delete(),
            &[(1, OLD, PreparingUpdate, READY, KEEP), (2, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 1, scale_up_limit: 1, ..Default::default() },
        ).counting_for_scale(),
        case(
            "[UpdateStrategyPaused=true] scale up pods with maxSurge=3,maxUnavailable=0",
            set(5, I(0), I(0), I(3)).paused(),
            &[(3, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { scale_up_num: 2, scale_up_limit: 2, update_num: 3, update_max_unavailable: -2, ..Default::default() },
        ),
        case(
            "[UpdateStrategyPaused=true] scale down pods with maxSurge=3,maxUnavailable=0",
            set(3, I(0), I(0), I(3)).paused(),
            &[(5, OLD, Normal, READY, KEEP)],
            ExpectationDiffs { scale_down_num: 2, scale_down_num_old_revision: 5, delete_ready_limit: 2, update_num: 3, update_max_unavailable: 2, ..Default::default() },
        ),
        case(
            "[UpdateStrategyPaused=true] create 0 newRevision pods with maxSurge=3,maxUnavailable=0",
            set(5, I(0), I(0), I(3)).paused(),
            &[(5, OLD, Normal, READY, KEEP), (3, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_down_num: 3, scale_down_num_old_revision: 5, update_num: 2, update_max_unavailable: 3, ..Default::default() },
        ),
        case(
            "[UpdateStrategyPaused=true] create 0 newRevision pods with maxSurge=3,maxUnavailable=0",
            set(5, I(2), I(0), I(3)).paused(),
            &[(5, OLD, Normal, READY, KEEP), (3, NEW, Normal, NOT_READY, KEEP)],
            ExpectationDiffs { scale_down_num: 3, scale_down_num_old_revision: 3, ..Default::default() },
        ),
    ]
}

#[test]
fn calculate_diffs_with_expectation_matches_all_80_upstream_cases() {
    let cases = cases();
    assert_eq!(cases.len(), 80, "the upstream table has 80 cases");
    let now = Timestamp::from_second(1_700_000_000).unwrap();
    let mut failures = Vec::new();
    for (number, case) in cases.iter().enumerate() {
        let options = CoreOptions {
            partition_rollback: case.rollback_gate,
            preparing_update_as_update: true,
            exclude_preparing_delete: false,
        };
        let current = if case.consistent { NEW_REVISION } else { OLD_REVISION };
        let got = calculate_diffs_with_expectation(
            &case.set,
            &case.pods,
            current,
            NEW_REVISION,
            case.purpose,
            &options,
            now,
        );
        if got != case.expected {
            failures.push(format!(
                "#{} {}:\n   got {got:?}\nexpect {:?}",
                number + 1,
                case.name,
                case.expected
            ));
        }
    }
    assert!(failures.is_empty(), "{} of 80 cases failed:\n{}", failures.len(), failures.join("\n"));
}
