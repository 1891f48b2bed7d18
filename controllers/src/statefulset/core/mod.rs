//! The Advanced StatefulSet decision core: pure functions from the set, its pods, PVCs,
//! revision names and the time to decisions. No I/O happens here; the reconciler
//! ([`super::sync`]) lists the objects, calls these functions and executes what they return.
//!
//! A reconcile uses it in this order (upstream `updateStatefulSet`):
//! 1. [`members`]: the pods sorted into desired slots (a pod, a hole, a reserved ordinal) and
//!    condemned pods, and the revision each missing pod is created at;
//! 2. [`plan_scale`]: creations, replacements, repairs and deletions, in upstream's order and
//!    with its stopping rules (`OrderedReady` one at a time, `Parallel` within
//!    `scaleStrategy.maxUnavailable`);
//! 3. unless scaling must finish first: [`plan_update`], the rolling update (specified deletes,
//!    then descending ordinals down to the partition within `maxUnavailable`, each pod in place
//!    or recreated, see [`pod_update_action`]);
//! 4. [`compute_status`].
//!
//! - [`identity`]: ordinals, names, reserved ordinals, identity and storage, new pods and PVCs.
//! - [`pods`]: the StatefulSet's per-pod predicates (created, healthy, available); the shared
//!   ones (lifecycle, revision, hooks) are [`crate::workload::pods`], and the lifecycle moves at
//!   the start of a round are the shared state machine of [`crate::workload::lifecycle`].
//! - [`resize`]: PVC expansion on rolling update (`volumeClaimUpdateStrategy`).
//! - [`retention`]: PVC owner references from `persistentVolumeClaimRetentionPolicy`.
//! - [`options`]: the feature gates that change the decisions.

#[cfg(test)]
pub mod fixtures;
pub mod identity;
pub mod options;
pub mod pods;
pub mod resize;
pub mod retention;
pub mod scale;
pub mod status;
pub mod update;

pub use identity::{ReplicaRange, ReservedOrdinals};
pub use options::CoreOptions;
pub use scale::{DeleteAction, Members, ScalePlan, ScaleStep, Slot, Which, members, plan_scale};
pub use status::{StatusInputs, SyncFailure, compute_status};
pub use update::{PodUpdateAction, PodVerdicts, UpdatePlan, UpdateStep, plan_update, pod_update_action};
