//! UnitedDeployment v1alpha1 <-> v1beta1.
//!
//! Upstream rules: the spec is the same in both versions and copied. In the status, v1alpha1
//! `updateStatus.updatedRevision` is v1beta1 `updatedRevision`; the v1alpha1 maps
//! `subsetReplicas` and `updateStatus.currentPartitions` are folded into the v1beta1
//! `subsetStatuses` entry of the same name (its `replicas` and `partition`), appending an entry
//! for a subset that has none (in name order). Going back, both maps are rebuilt from the named
//! entries of `subsetStatuses` (unnamed ones are skipped; an empty map is left out), and
//! `updateStatus` is only written when there is an updated revision or any subset status.

use super::{convert_lossless, impl_spec_status_parts};
use crate::apps::{v1alpha1, v1beta1};

impl_spec_status_parts!(v1alpha1::UnitedDeployment, v1beta1::UnitedDeployment);

/// Converts a v1alpha1 UnitedDeployment to v1beta1 (losslessly, see the module docs of
/// `conversion`).
pub fn uniteddeployment_to_v1beta1(alpha: &v1alpha1::UnitedDeployment) -> v1beta1::UnitedDeployment {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 UnitedDeployment to v1alpha1 (losslessly).
pub fn uniteddeployment_to_v1alpha1(beta: &v1beta1::UnitedDeployment) -> v1alpha1::UnitedDeployment {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::UnitedDeployment) -> v1beta1::UnitedDeployment {
    v1beta1::UnitedDeployment {
        metadata: alpha.metadata.clone(),
        spec: alpha.spec.clone(),
        status: alpha.status.as_ref().map(status_to_v1beta1),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::UnitedDeployment) -> v1alpha1::UnitedDeployment {
    v1alpha1::UnitedDeployment {
        metadata: beta.metadata.clone(),
        spec: beta.spec.clone(),
        status: beta.status.as_ref().map(status_to_v1alpha1),
    }
}

fn status_to_v1beta1(alpha: &v1alpha1::UnitedDeploymentStatus) -> v1beta1::UnitedDeploymentStatus {
    let mut beta = v1beta1::UnitedDeploymentStatus {
        observed_generation: alpha.observed_generation,
        ready_replicas: alpha.ready_replicas,
        replicas: alpha.replicas,
        updated_replicas: alpha.updated_replicas,
        reserved_pods: alpha.reserved_pods,
        updated_ready_replicas: alpha.updated_ready_replicas,
        collision_count: alpha.collision_count,
        current_revision: alpha.current_revision.clone(),
        updated_revision: alpha
            .update_status
            .as_ref()
            .map(|update| update.updated_revision.clone())
            .unwrap_or_default(),
        subset_statuses: alpha.subset_statuses.clone(),
        conditions: alpha.conditions.clone(),
        label_selector: alpha.label_selector.clone(),
    };
    for (subset, replicas) in &alpha.subset_replicas {
        beta.subset_status_mut(subset).replicas = *replicas;
    }
    if let Some(update) = &alpha.update_status {
        for (subset, partition) in &update.current_partitions {
            beta.subset_status_mut(subset).partition = *partition;
        }
    }
    beta
}

fn status_to_v1alpha1(beta: &v1beta1::UnitedDeploymentStatus) -> v1alpha1::UnitedDeploymentStatus {
    let named = || beta.subset_statuses.iter().filter(|status| !status.name.is_empty());
    let update_status = (!beta.updated_revision.is_empty() || !beta.subset_statuses.is_empty()).then(|| {
        v1alpha1::UnitedDeploymentUpdateStatus {
            updated_revision: beta.updated_revision.clone(),
            current_partitions: named().map(|status| (status.name.clone(), status.partition)).collect(),
        }
    });
    v1alpha1::UnitedDeploymentStatus {
        observed_generation: beta.observed_generation,
        ready_replicas: beta.ready_replicas,
        replicas: beta.replicas,
        updated_replicas: beta.updated_replicas,
        reserved_pods: beta.reserved_pods,
        updated_ready_replicas: beta.updated_ready_replicas,
        collision_count: beta.collision_count,
        current_revision: beta.current_revision.clone(),
        subset_replicas: named().map(|status| (status.name.clone(), status.replicas)).collect(),
        subset_statuses: beta.subset_statuses.clone(),
        conditions: beta.conditions.clone(),
        update_status,
        label_selector: beta.label_selector.clone(),
    }
}
