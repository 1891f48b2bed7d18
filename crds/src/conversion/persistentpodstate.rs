//! PersistentPodState v1alpha1 <-> v1beta1.
//!
//! Upstream rules: the only difference is the name of the key list in topology terms,
//! `nodeTopologyKeys` in v1alpha1 and `keys` in v1beta1 (both in the required term and in each
//! preferred term's preference). Metadata, the target, persisted annotations, the retention
//! policy (copied as a string) and the status carry over unchanged, so the natural conversion is
//! one-to-one.

use super::{convert_lossless, impl_spec_status_parts};
use crate::apps::{v1alpha1, v1beta1};

impl_spec_status_parts!(v1alpha1::PersistentPodState, v1beta1::PersistentPodState);

/// Converts a v1alpha1 PersistentPodState to v1beta1 (losslessly, see the module docs of
/// `conversion`).
pub fn persistentpodstate_to_v1beta1(alpha: &v1alpha1::PersistentPodState) -> v1beta1::PersistentPodState {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 PersistentPodState to v1alpha1 (losslessly).
pub fn persistentpodstate_to_v1alpha1(beta: &v1beta1::PersistentPodState) -> v1alpha1::PersistentPodState {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::PersistentPodState) -> v1beta1::PersistentPodState {
    let spec = &alpha.spec;
    let term = |term: &v1alpha1::NodeTopologyTerm| v1beta1::NodeTopologyTerm {
        keys: term.node_topology_keys.clone(),
    };
    v1beta1::PersistentPodState {
        metadata: alpha.metadata.clone(),
        spec: v1beta1::PersistentPodStateSpec {
            target_reference: spec.target_reference.clone(),
            persistent_pod_annotations: spec.persistent_pod_annotations.clone(),
            required_persistent_topology: spec.required_persistent_topology.as_ref().map(term),
            preferred_persistent_topology: spec
                .preferred_persistent_topology
                .iter()
                .map(|preferred| v1beta1::PreferredTopologyTerm {
                    weight: preferred.weight,
                    preference: term(&preferred.preference),
                })
                .collect(),
            persistent_pod_state_retention_policy: spec.persistent_pod_state_retention_policy.as_str().into(),
        },
        status: alpha.status.clone(),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::PersistentPodState) -> v1alpha1::PersistentPodState {
    let spec = &beta.spec;
    let term = |term: &v1beta1::NodeTopologyTerm| v1alpha1::NodeTopologyTerm {
        node_topology_keys: term.keys.clone(),
    };
    v1alpha1::PersistentPodState {
        metadata: beta.metadata.clone(),
        spec: v1alpha1::PersistentPodStateSpec {
            target_reference: spec.target_reference.clone(),
            persistent_pod_annotations: spec.persistent_pod_annotations.clone(),
            required_persistent_topology: spec.required_persistent_topology.as_ref().map(term),
            preferred_persistent_topology: spec
                .preferred_persistent_topology
                .iter()
                .map(|preferred| v1alpha1::PreferredTopologyTerm {
                    weight: preferred.weight,
                    preference: term(&preferred.preference),
                })
                .collect(),
            persistent_pod_state_retention_policy: spec.persistent_pod_state_retention_policy.as_str().into(),
        },
        status: beta.status.clone(),
    }
}
