//! The ResourceDistribution controller (upstream `pkg/controller/resourcedistribution`): a
//! cluster-scoped ResourceDistribution copies one Secret or ConfigMap (`spec.resource`) into
//! every namespace its `targets` select, so that shared credentials or settings need not be
//! created namespace by namespace. The copies carry the distribution as controller owner and the
//! annotations `kruise.io/resourcedistribution.resource.from` and
//! `kruise.io/resourcedistribution.resource.hashcode`; they are put back when someone edits or
//! deletes them, created in namespaces that appear or start matching, and deleted from
//! namespaces that stop matching. Objects of the same name that the distribution does not own
//! are left alone and reported as conflicts in the status. [`core`] decides; [`controller`]
//! reads and writes.

pub mod controller;
pub mod core;

pub use controller::run;
