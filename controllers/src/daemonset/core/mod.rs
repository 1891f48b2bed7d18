//! The Advanced DaemonSet decision core: pure functions from the DaemonSet, the nodes, its pods
//! and the time to decisions. The reconciler ([`super::sync`]) lists the objects, calls these
//! and executes what they return.
//!
//! A reconcile uses it in upstream's order (`syncDaemonSet`):
//! 1. [`manage::plan_manage`]: per node, the pod to create and the pods to delete (failed,
//!    pre-deleting, duplicates, misplaced), with the partition holding back creations under
//!    `partitionedScaling`;
//! 2. unless paused or `OnDelete`: [`update::plan_rolling_update`], the old pods to replace
//!    within `maxUnavailable` (in place where possible), or with `maxSurge` the nodes to start a
//!    new pod on and the old pods whose new one is available;
//! 3. [`status::compute_status`].
//!
//! - [`nodes`]: where pods belong (node selector, affinity, taints and the daemon tolerations).
//! - [`pods`]: per-pod predicates (ready, available, updated, pre-deleting, ordering).

#[cfg(test)]
pub mod fixtures;
pub mod manage;
pub mod nodes;
pub mod pods;
pub mod status;
pub mod update;

pub use manage::{ManagePlan, burst_replicas, group_by_node, plan_manage};
pub use nodes::{DaemonPredicates, replace_node_name_affinity, target_node_name};
pub use status::compute_status;
pub use update::{RollingPlan, is_paused, plan_rolling_update};
