//! UnitedDeployment defaults (upstream `SetDefaultsUnitedDeploymentV1beta1` and
//! `SetDefaultsUnitedDeployment`, which agree; both versions share one spec type).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::pod::{default_pod_spec, default_pvc_template};
use crate::apps::{v1alpha1, v1beta1};

/// Default number of old revisions a UnitedDeployment keeps.
pub const DEFAULT_UNITED_DEPLOYMENT_REVISION_HISTORY_LIMIT: i32 = 10;

/// Fills in v1beta1 UnitedDeployment defaults. `inject_template_defaults` is true on create
/// and on an update that changed the template; upstream then defaults the pod template (and
/// claim templates) of a `statefulSetTemplate` only.
pub fn default_uniteddeployment_v1beta1(
    united: &mut v1beta1::UnitedDeployment,
    inject_template_defaults: bool,
) {
    default_uniteddeployment_spec(&mut united.spec, inject_template_defaults);
}

/// Fills in v1alpha1 UnitedDeployment defaults (the same as v1beta1).
pub fn default_uniteddeployment_v1alpha1(
    united: &mut v1alpha1::UnitedDeployment,
    inject_template_defaults: bool,
) {
    default_uniteddeployment_spec(&mut united.spec, inject_template_defaults);
}

/// The spec-level defaults both versions apply: replicas 1, history limit 10, a Manual update
/// strategy with an (empty) `manualUpdate`, and, when subsets use only minReplicas/maxReplicas
/// (no subset sets `replicas`), a `minReplicas` of 0 on every subset that has none.
pub fn default_uniteddeployment_spec(
    spec: &mut v1beta1::UnitedDeploymentSpec,
    inject_template_defaults: bool,
) {
    spec.replicas.get_or_insert(1);
    spec.revision_history_limit.get_or_insert(DEFAULT_UNITED_DEPLOYMENT_REVISION_HISTORY_LIMIT);

    let strategy = &mut spec.update_strategy;
    if strategy.type_.is_unset() {
        strategy.type_ = v1beta1::UnitedDeploymentUpdateStrategyType::Manual;
    }
    if strategy.type_ == v1beta1::UnitedDeploymentUpdateStrategyType::Manual {
        strategy.manual_update.get_or_insert_with(Default::default);
    }

    if inject_template_defaults && let Some(statefulset) = spec.template.stateful_set_template.as_mut() {
        default_pod_spec(statefulset.spec.template.spec.get_or_insert_with(Default::default));
        statefulset.spec.volume_claim_templates.iter_mut().flatten().for_each(default_pvc_template);
    }

    let subsets = &mut spec.topology.subsets;
    let has_replicas = subsets.iter().any(|subset| subset.replicas.is_some());
    let has_capacity =
        subsets.iter().any(|subset| subset.min_replicas.is_some() || subset.max_replicas.is_some());
    if has_capacity && !has_replicas {
        for subset in subsets.iter_mut() {
            subset.min_replicas.get_or_insert(IntOrString::Int(0));
        }
    }
}
