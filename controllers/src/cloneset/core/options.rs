//! Feature gates and manager flags that change the decision core's arithmetic.
//!
//! Upstream reads these from process-wide globals (`utilfeature.DefaultFeatureGate`, the
//! `--cloneset-scaling-exclude-preparing-delete` flag); here they are a plain value passed into
//! every decision so that a table test can flip them per case.

/// The switches the CloneSet decision core honours. `Default` matches upstream's defaults (every
/// gate off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreOptions {
    /// Gate `CloneSetPartitionRollback`: when the partition is raised, pods already at the update
    /// revision are moved back to the current revision (otherwise updates only move forward).
    pub partition_rollback: bool,
    /// Gate `PreparingUpdateAsUpdate`: while scaling, a pod in `PreparingUpdate` counts as one at
    /// the update revision, so a replacement for an old pod is created at the current revision.
    pub preparing_update_as_update: bool,
    /// Manager flag `--cloneset-scaling-exclude-preparing-delete`: pods in `PreparingDelete` are
    /// not counted when deciding how many pods to create, for every CloneSet (the spec field
    /// `scaleStrategy.excludePreparingDelete` does the same for one CloneSet).
    pub exclude_preparing_delete: bool,
}
