//! Advanced DaemonSet defaults (upstream `SetDefaultsDaemonSetV1beta1` / `SetDefaultsDaemonSet`).
//!
//! Unlike the other workloads, upstream does not inject pod defaults into a DaemonSet's
//! template, so these functions leave the template as written.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::apps::{v1alpha1, v1beta1};

/// Default `burstReplicas`: pods created or deleted in one sync.
pub const DEFAULT_DAEMONSET_BURST_REPLICAS: i32 = 250;
/// Default number of old revisions an Advanced DaemonSet keeps.
pub const DEFAULT_DAEMONSET_REVISION_HISTORY_LIMIT: i32 = 10;

/// Fills in v1beta1 Advanced DaemonSet defaults.
pub fn default_daemonset_v1beta1(daemonset: &mut v1beta1::DaemonSet) {
    let spec = &mut daemonset.spec;
    spec.burst_replicas.get_or_insert(IntOrString::Int(DEFAULT_DAEMONSET_BURST_REPLICAS));
    let strategy = &mut spec.update_strategy;
    if strategy.type_.is_unset() {
        strategy.type_ = v1beta1::DaemonSetUpdateStrategyType::RollingUpdate;
    }
    if strategy.type_ == v1beta1::DaemonSetUpdateStrategyType::RollingUpdate {
        let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
        if rolling.type_.is_unset() {
            rolling.type_ = v1beta1::DaemonSetRollingUpdateType::Standard;
        }
        default_unavailable_and_surge(&mut rolling.max_unavailable, &mut rolling.max_surge);
    }
    spec.revision_history_limit.get_or_insert(DEFAULT_DAEMONSET_REVISION_HISTORY_LIMIT);
}

/// Fills in v1alpha1 Advanced DaemonSet defaults. The deprecated `Surging` rolling update type
/// becomes `Standard` with a surge of one pod (and no unavailable pod) unless set otherwise.
pub fn default_daemonset_v1alpha1(daemonset: &mut v1alpha1::DaemonSet) {
    let spec = &mut daemonset.spec;
    spec.burst_replicas.get_or_insert(IntOrString::Int(DEFAULT_DAEMONSET_BURST_REPLICAS));
    let strategy = &mut spec.update_strategy;
    if strategy.type_.is_unset() {
        strategy.type_ = v1beta1::DaemonSetUpdateStrategyType::RollingUpdate;
    }
    if strategy.type_ == v1beta1::DaemonSetUpdateStrategyType::RollingUpdate {
        let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
        if rolling.type_ == v1alpha1::DaemonSetRollingUpdateType::Surging {
            rolling.max_surge.get_or_insert(IntOrString::Int(1));
            rolling.max_unavailable.get_or_insert(IntOrString::Int(0));
        }
        if rolling.type_.is_unset() || rolling.type_ == v1alpha1::DaemonSetRollingUpdateType::Surging {
            rolling.type_ = v1alpha1::DaemonSetRollingUpdateType::Standard;
        }
        default_unavailable_and_surge(&mut rolling.max_unavailable, &mut rolling.max_surge);
    }
    spec.revision_history_limit.get_or_insert(DEFAULT_DAEMONSET_REVISION_HISTORY_LIMIT);
}

/// With neither limit set, one pod at a time is taken down and none is surged.
fn default_unavailable_and_surge(
    max_unavailable: &mut Option<IntOrString>,
    max_surge: &mut Option<IntOrString>,
) {
    if max_unavailable.is_none() && max_surge.is_none() {
        *max_unavailable = Some(IntOrString::Int(1));
        *max_surge = Some(IntOrString::Int(0));
    }
}
