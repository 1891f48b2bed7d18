//! Advanced StatefulSet defaults (upstream `SetDefaultsStatefulSet`). The v1alpha1 webhook
//! defaults through v1beta1, so both versions get the same values for the fields they share.

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, PodTemplateSpec},
    apimachinery::pkg::util::intstr::IntOrString,
};

use super::pod::{default_pod_spec, default_pvc_template};
use crate::apps::{v1alpha1, v1beta1};

/// Default number of old revisions an Advanced StatefulSet keeps.
pub const DEFAULT_STATEFULSET_REVISION_HISTORY_LIMIT: i32 = 10;

/// Fills in v1beta1 Advanced StatefulSet defaults. `inject_template_defaults` is true on create
/// and on an update that changed the pod template.
///
/// The PVC retention policy is defaulted because its feature gate (`StatefulSetAutoDeletePVC`)
/// is on by default; the `volumeClaimUpdateStrategy` belongs to a gate that is off by default,
/// see [`default_statefulset_volume_claim_update_strategy`].
pub fn default_statefulset_v1beta1(statefulset: &mut v1beta1::StatefulSet, inject_template_defaults: bool) {
    let spec = &mut statefulset.spec;
    default_shared_fields(
        &mut spec.pod_management_policy,
        &mut spec.update_strategy,
        &mut spec.replicas,
        &mut spec.revision_history_limit,
    );
    let retention = spec.persistent_volume_claim_retention_policy.get_or_insert_with(Default::default);
    if retention.when_deleted.is_unset() {
        retention.when_deleted = v1beta1::PersistentVolumeClaimRetentionPolicyType::Retain;
    }
    if retention.when_scaled.is_unset() {
        retention.when_scaled = v1beta1::PersistentVolumeClaimRetentionPolicyType::Retain;
    }
    if inject_template_defaults {
        inject_templates(&mut spec.template, &mut spec.volume_claim_templates);
    }
}

/// Fills in v1alpha1 Advanced StatefulSet defaults: those of v1beta1 that the v1alpha1 schema
/// can hold.
pub fn default_statefulset_v1alpha1(statefulset: &mut v1alpha1::StatefulSet, inject_template_defaults: bool) {
    let spec = &mut statefulset.spec;
    default_shared_fields(
        &mut spec.pod_management_policy,
        &mut spec.update_strategy,
        &mut spec.replicas,
        &mut spec.revision_history_limit,
    );
    if inject_template_defaults {
        inject_templates(&mut spec.template, &mut spec.volume_claim_templates);
    }
}

/// The default the `StatefulSetAutoResizePVCGate` feature gate adds: PVCs follow their claim
/// template only when deleted (`OnDelete`). Call it in addition to
/// [`default_statefulset_v1beta1`] when that gate is enabled.
pub fn default_statefulset_volume_claim_update_strategy(spec: &mut v1beta1::StatefulSetSpec) {
    let strategy = &mut spec.volume_claim_update_strategy;
    if strategy.type_.is_unset() {
        strategy.type_ = v1beta1::VolumeClaimUpdateStrategyType::OnDelete;
    }
}

fn default_shared_fields(
    pod_management_policy: &mut v1beta1::PodManagementPolicyType,
    strategy: &mut v1beta1::StatefulSetUpdateStrategy,
    replicas: &mut Option<i32>,
    revision_history_limit: &mut Option<i32>,
) {
    if pod_management_policy.is_unset() {
        *pod_management_policy = v1beta1::PodManagementPolicyType::OrderedReady;
    }
    if strategy.type_.is_unset() {
        strategy.type_ = v1beta1::StatefulSetUpdateStrategyType::RollingUpdate;
    }
    if strategy.type_ == v1beta1::StatefulSetUpdateStrategyType::RollingUpdate {
        let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
        rolling.partition.get_or_insert(0);
        rolling.max_unavailable.get_or_insert(IntOrString::Int(1));
        if rolling.pod_update_policy.is_unset() {
            rolling.pod_update_policy = v1beta1::PodUpdatePolicy::ReCreate;
        }
        rolling.min_ready_seconds.get_or_insert(0);
    }
    replicas.get_or_insert(1);
    revision_history_limit.get_or_insert(DEFAULT_STATEFULSET_REVISION_HISTORY_LIMIT);
}

fn inject_templates(template: &mut PodTemplateSpec, claims: &mut [PersistentVolumeClaim]) {
    default_pod_spec(template.spec.get_or_insert_with(Default::default));
    claims.iter_mut().for_each(default_pvc_template);
}
