//! The feature gates that change the Advanced StatefulSet decision core, passed in as a value
//! (upstream reads process-wide globals) so that a table test can flip them per case.

use kruise_crds::features::{FeatureGates, Gate};

/// The switches the decision core honours. `Default` is upstream's gate defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreOptions {
    /// Gate `StatefulSetStartOrdinal` (default off): `spec.ordinals.start` moves the first
    /// ordinal.
    pub start_ordinal: bool,
    /// Gate `PodIndexLabel` (default on): pods get the `apps.kubernetes.io/pod-index` label.
    pub pod_index_label: bool,
    /// Gate `StatefulSetAutoDeletePVC` (default on): PVC owner references follow
    /// `persistentVolumeClaimRetentionPolicy`, and a PVC still owned by a deleted pod holds the
    /// creation of its successor.
    pub auto_delete_pvc: bool,
    /// Gate `PreparingUpdateAsUpdate` (default off): a pod in `PreparingUpdate` counts as
    /// updated.
    pub preparing_update_as_update: bool,
    /// Gate `StatefulSetAutoResizePVCGate` (default off): with `volumeClaimUpdateStrategy`
    /// `OnPodRollingUpdate`, PVCs are expanded to their template as their pods are rolled.
    pub auto_resize_pvc: bool,
}

impl Default for CoreOptions {
    fn default() -> Self {
        Self {
            start_ordinal: false,
            pod_index_label: true,
            auto_delete_pvc: true,
            preparing_update_as_update: false,
            auto_resize_pvc: false,
        }
    }
}

impl CoreOptions {
    /// The options the feature gates ask for.
    pub fn from_gates(gates: &FeatureGates) -> Self {
        Self {
            start_ordinal: gates.enabled(Gate::StatefulSetStartOrdinal),
            pod_index_label: gates.enabled(Gate::PodIndexLabel),
            auto_delete_pvc: gates.enabled(Gate::StatefulSetAutoDeletePVC),
            preparing_update_as_update: gates.enabled(Gate::PreparingUpdateAsUpdate),
            auto_resize_pvc: gates.enabled(Gate::StatefulSetAutoResizePVCGate),
        }
    }
}
