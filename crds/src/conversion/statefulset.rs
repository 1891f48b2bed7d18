//! Advanced StatefulSet v1alpha1 <-> v1beta1.
//!
//! Upstream rules: every v1alpha1 field has the same name and meaning in v1beta1 and is copied
//! across. The fields only v1beta1 has (`lifecycle`, `reserveOrdinals`, `scaleStrategy`,
//! `persistentVolumeClaimRetentionPolicy`, `ordinals`, `volumeClaimUpdateStrategy`, and the
//! status counters `updatedReadyReplicas`, `updatedAvailableReplicas`, `volumeClaims`) are
//! dropped on the way to v1alpha1 and left unset on the way back; no label or annotation
//! carries them, so only the conversion stash keeps them across a round trip.

use super::{convert_lossless, impl_spec_status_parts};
use crate::apps::{v1alpha1, v1beta1};

impl_spec_status_parts!(v1alpha1::StatefulSet, v1beta1::StatefulSet);

/// Converts a v1alpha1 Advanced StatefulSet to v1beta1 (losslessly, see the module docs of
/// `conversion`).
pub fn statefulset_to_v1beta1(alpha: &v1alpha1::StatefulSet) -> v1beta1::StatefulSet {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 Advanced StatefulSet to v1alpha1 (losslessly).
pub fn statefulset_to_v1alpha1(beta: &v1beta1::StatefulSet) -> v1alpha1::StatefulSet {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::StatefulSet) -> v1beta1::StatefulSet {
    let spec = &alpha.spec;
    v1beta1::StatefulSet {
        metadata: alpha.metadata.clone(),
        spec: v1beta1::StatefulSetSpec {
            replicas: spec.replicas,
            selector: spec.selector.clone(),
            template: spec.template.clone(),
            volume_claim_templates: spec.volume_claim_templates.clone(),
            service_name: spec.service_name.clone(),
            pod_management_policy: spec.pod_management_policy.clone(),
            update_strategy: spec.update_strategy.clone(),
            revision_history_limit: spec.revision_history_limit,
            ..Default::default()
        },
        status: alpha.status.as_ref().map(|status| v1beta1::StatefulSetStatus {
            observed_generation: status.observed_generation,
            replicas: status.replicas,
            ready_replicas: status.ready_replicas,
            available_replicas: status.available_replicas,
            current_replicas: status.current_replicas,
            updated_replicas: status.updated_replicas,
            current_revision: status.current_revision.clone(),
            update_revision: status.update_revision.clone(),
            collision_count: status.collision_count,
            conditions: status.conditions.clone(),
            label_selector: status.label_selector.clone(),
            ..Default::default()
        }),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::StatefulSet) -> v1alpha1::StatefulSet {
    let spec = &beta.spec;
    v1alpha1::StatefulSet {
        metadata: beta.metadata.clone(),
        spec: v1alpha1::StatefulSetSpec {
            replicas: spec.replicas,
            selector: spec.selector.clone(),
            template: spec.template.clone(),
            volume_claim_templates: spec.volume_claim_templates.clone(),
            service_name: spec.service_name.clone(),
            pod_management_policy: spec.pod_management_policy.clone(),
            update_strategy: spec.update_strategy.clone(),
            revision_history_limit: spec.revision_history_limit,
        },
        status: beta.status.as_ref().map(|status| v1alpha1::StatefulSetStatus {
            observed_generation: status.observed_generation,
            replicas: status.replicas,
            ready_replicas: status.ready_replicas,
            available_replicas: status.available_replicas,
            current_replicas: status.current_replicas,
            updated_replicas: status.updated_replicas,
            current_revision: status.current_revision.clone(),
            update_revision: status.update_revision.clone(),
            collision_count: status.collision_count,
            conditions: status.conditions.clone(),
            label_selector: status.label_selector.clone(),
        }),
    }
}
