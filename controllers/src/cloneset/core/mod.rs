//! The CloneSet decision core: pure functions from the CloneSet, its pods and revision names
//! (and the time) to decisions. No I/O happens here; the reconciler lists the objects, calls
//! these functions and executes what they return.
//!
//! A reconcile uses it in this order (upstream `doReconcile` / `syncCloneSet`):
//! 1. [`plan_scale`]: execute its stages in order, stopping after the first that changed
//!    something (a creation stage always ends scaling; "changed" then means a pod was created);
//! 2. if scaling changed nothing: the shared lifecycle state machine
//!    ([`crate::workload::lifecycle::refresh_lifecycle_state`]) for every pod (after the in-place
//!    engine's own refresh); if nothing was patched, [`plan_update`] and, for each chosen pod,
//!    [`pod_update_action`];
//! 3. [`compute_status`] with the failures of steps 1-2, written when `changed`.
//!
//! - [`pods`]: the pod predicate that reads the CloneSet (specified delete); the generic ones
//!   (lifecycle, ready, available, revision, hooks) are in [`crate::workload::pods`].
//! - [`diffs`]: how many pods to create, delete and update ([`calculate_diffs_with_expectation`]).
//! - [`ranking`]: which pods a scale-in deletes first.
//! - [`update_order`]: which pods a rolling update may take, and how many (the order they are
//!   taken in is [`crate::workload::update_order`]'s).
//! - [`status`]: the status the controller writes, conditions included.
//! - [`plan`]: what a round of scaling or updating does, and how each chosen pod is handled.
//! - [`options`]: the feature gates and flags that change the arithmetic.

pub mod diffs;
pub mod options;
pub mod plan;
pub mod pods;
pub mod ranking;
pub mod status;
pub mod update_order;

pub use diffs::{
    DiffPurpose, ExpectationDiffs, StrategyNumbers, calculate_diffs_with_expectation, strategy_numbers,
};
pub use options::CoreOptions;
pub use plan::{
    CreatePlan, DeletionAction, PodUpdateAction, ScalePlan, UpdatePlan, UpdateSkip, deletion_action,
    plan_scale, plan_update, pod_update_action,
};
pub use ranking::{NodeLabels, SpreadConstraint, choose_pods_to_delete, spread_constraints};
pub use status::{StatusOutcome, SyncFailure, compute_status};
