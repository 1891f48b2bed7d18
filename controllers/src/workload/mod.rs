//! What the workload controllers share: CloneSet, Advanced StatefulSet, Advanced DaemonSet and
//! every workload that follows classify pods, write to them, keep ControllerRevisions, order a
//! rolling update, move pods through the lifecycle hooks and claim pods the same way, so that code
//! lives here once instead of one workload importing another's modules. What reads one workload's
//! spec stays with that workload. (What they share around kube-runtime's `Controller`, the
//! watches and the reconcile loop, is the manager's: [`crate::runtime::workload`].)
//!
//! - [`pods`]: per-pod predicates (lifecycle state, ready, available, active, terminating,
//!   revision hash, hooks, deletion cost, restarts).
//! - [`pod_ops`]: the writes to pods and PVCs (create in slow-start batches, delete, lifecycle
//!   patches, specified-delete label, hook handlers, `KruisePodReady`, adopt and release).
//! - [`revision`]: ControllerRevision encoding (byte-equal to upstream's), names and hashes,
//!   equality, creation, rollback renumbering and history truncation.
//! - [`update_order`]: the update order (`ActivePods`, priority and scatter strategies).
//! - [`lifecycle`]: the lifecycle state machine at the start of an update round.
//! - [`claim`]: which pods a workload keeps, releases or adopts.

pub mod claim;
pub mod lifecycle;
pub mod pod_ops;
pub mod pods;
pub mod revision;
pub mod update_order;
