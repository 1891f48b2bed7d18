//! CloneSet defaults (upstream `SetDefaultsCloneSetV1beta1` / `SetDefaultsCloneSet`).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::pod::{default_pod_spec, default_pvc_template};
use crate::apps::{v1alpha1, v1beta1};

/// Default `maxUnavailable` of a rolling update.
pub const DEFAULT_CLONESET_MAX_UNAVAILABLE: &str = "20%";
/// Default number of old revisions kept.
pub const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;

/// Fills in v1beta1 CloneSet defaults. `inject_template_defaults` is true on create and on an
/// update that changed the template (so that an untouched template keeps its revision hash).
pub fn default_cloneset_v1beta1(cloneset: &mut v1beta1::CloneSet, inject_template_defaults: bool) {
    let spec = &mut cloneset.spec;
    spec.replicas.get_or_insert(1);
    spec.revision_history_limit.get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    if inject_template_defaults {
        inject_templates(&mut spec.template, &mut spec.volume_claim_templates);
    }

    let strategy = &mut spec.update_strategy;
    if strategy.type_.is_unset() {
        strategy.type_ = v1beta1::CloneSetUpdateStrategyType::RollingUpdate;
    }
    if strategy.type_ == v1beta1::CloneSetUpdateStrategyType::RollingUpdate {
        let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
        if rolling.pod_update_policy.is_unset() {
            rolling.pod_update_policy = v1beta1::PodUpdatePolicy::ReCreate;
        }
        if matches!(
            rolling.pod_update_policy,
            v1beta1::PodUpdatePolicy::InPlaceIfPossible | v1beta1::PodUpdatePolicy::InPlaceOnly
        ) {
            rolling.in_place_update_strategy.get_or_insert_with(Default::default);
        }
        rolling.partition.get_or_insert(IntOrString::Int(0));
        rolling
            .max_unavailable
            .get_or_insert_with(|| IntOrString::String(DEFAULT_CLONESET_MAX_UNAVAILABLE.into()));
        rolling.max_surge.get_or_insert(IntOrString::Int(0));
    }
}

/// Fills in v1alpha1 CloneSet defaults (flat strategy, `ReCreate` by default).
pub fn default_cloneset_v1alpha1(cloneset: &mut v1alpha1::CloneSet, inject_template_defaults: bool) {
    let spec = &mut cloneset.spec;
    spec.replicas.get_or_insert(1);
    spec.revision_history_limit.get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    if inject_template_defaults {
        inject_templates(&mut spec.template, &mut spec.volume_claim_templates);
    }
    let strategy = &mut spec.update_strategy;
    match strategy.type_ {
        ref unset if unset.is_unset() => strategy.type_ = v1alpha1::CloneSetUpdateStrategyType::ReCreate,
        v1alpha1::CloneSetUpdateStrategyType::InPlaceIfPossible
        | v1alpha1::CloneSetUpdateStrategyType::InPlaceOnly => {
            strategy.in_place_update_strategy.get_or_insert_with(Default::default);
        }
        _ => {}
    }
    strategy.partition.get_or_insert(IntOrString::Int(0));
    strategy
        .max_unavailable
        .get_or_insert_with(|| IntOrString::String(DEFAULT_CLONESET_MAX_UNAVAILABLE.into()));
    strategy.max_surge.get_or_insert(IntOrString::Int(0));
}

fn inject_templates(
    template: &mut k8s_openapi::api::core::v1::PodTemplateSpec,
    claims: &mut [k8s_openapi::api::core::v1::PersistentVolumeClaim],
) {
    default_pod_spec(template.spec.get_or_insert_with(Default::default));
    claims.iter_mut().for_each(default_pvc_template);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_v1beta1_cloneset_gets_upstream_defaults() {
        let mut cs = v1beta1::CloneSet::default();
        default_cloneset_v1beta1(&mut cs, true);
        assert_eq!(cs.spec.replicas, Some(1));
        assert_eq!(cs.spec.revision_history_limit, Some(10));
        assert_eq!(cs.spec.update_strategy.type_, v1beta1::CloneSetUpdateStrategyType::RollingUpdate);
        let rolling = cs.spec.update_strategy.rolling_update.unwrap();
        assert_eq!(rolling.pod_update_policy, v1beta1::PodUpdatePolicy::ReCreate);
        assert_eq!(rolling.partition, Some(IntOrString::Int(0)));
        assert_eq!(rolling.max_unavailable, Some(IntOrString::String("20%".into())));
        assert_eq!(rolling.max_surge, Some(IntOrString::Int(0)));
        assert_eq!(rolling.in_place_update_strategy, None);
        assert_eq!(cs.spec.template.spec.unwrap().restart_policy.as_deref(), Some("Always"));
    }

    #[test]
    fn in_place_policies_get_an_in_place_strategy_and_explicit_values_stay() {
        let mut cs = v1beta1::CloneSet::default();
        cs.spec.replicas = Some(7);
        cs.spec.update_strategy.rolling_update = Some(v1beta1::RollingUpdateCloneSetStrategy {
            pod_update_policy: v1beta1::PodUpdatePolicy::InPlaceIfPossible,
            max_unavailable: Some(IntOrString::Int(2)),
            ..Default::default()
        });
        default_cloneset_v1beta1(&mut cs, false);
        assert_eq!(cs.spec.replicas, Some(7));
        let rolling = cs.spec.update_strategy.rolling_update.unwrap();
        assert!(rolling.in_place_update_strategy.is_some());
        assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(2)));
        assert!(cs.spec.template.spec.is_none(), "template untouched without inject_template_defaults");
    }

    #[test]
    fn on_delete_gets_no_rolling_update_block() {
        let mut cs = v1beta1::CloneSet::default();
        cs.spec.update_strategy.type_ = v1beta1::CloneSetUpdateStrategyType::OnDelete;
        default_cloneset_v1beta1(&mut cs, false);
        assert!(cs.spec.update_strategy.rolling_update.is_none());
    }

    #[test]
    fn empty_v1alpha1_cloneset_gets_upstream_defaults() {
        let mut cs = v1alpha1::CloneSet::default();
        default_cloneset_v1alpha1(&mut cs, true);
        let strategy = &cs.spec.update_strategy;
        assert_eq!(strategy.type_, v1alpha1::CloneSetUpdateStrategyType::ReCreate);
        assert_eq!(strategy.partition, Some(IntOrString::Int(0)));
        assert_eq!(strategy.max_unavailable, Some(IntOrString::String("20%".into())));
        assert_eq!(strategy.max_surge, Some(IntOrString::Int(0)));
    }
}
