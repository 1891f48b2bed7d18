//! WorkloadSpread v1alpha1 <-> v1beta1.
//!
//! Upstream rules: a subset's `requiredNodeSelectorTerm` is v1beta1 `requiredNodeSelector` and
//! its `preferredNodeSelectorTerms` is `preferredNodeSelector`; everything else in the spec
//! carries over. Subset conditions (in `subsetStatuses` and in every list of
//! `versionedSubsetStatuses`) become standard conditions, whose reason may not be empty: an empty
//! v1alpha1 reason becomes `Unknown`, and the standard condition's `observedGeneration` has no
//! v1alpha1 counterpart and is dropped on the way back. The standard condition also requires a
//! transition time: an unset v1alpha1 time becomes Go's zero time (0001-01-01T00:00:00Z), which
//! turns back into "unset". Those three cases are where the natural conversion is not
//! one-to-one; the stash of `convert_lossless` keeps round trips exact.

use k8s_openapi::{
    apimachinery::pkg::apis::meta::v1::{Condition, Time},
    jiff::Timestamp,
};

use super::{convert_lossless, impl_spec_status_parts};
use crate::apps::{v1alpha1, v1beta1};

impl_spec_status_parts!(v1alpha1::WorkloadSpread, v1beta1::WorkloadSpread);

/// Reason given to a v1beta1 condition converted from a v1alpha1 condition without one.
const DEFAULT_CONDITION_REASON: &str = "Unknown";

/// Seconds from the Unix epoch back to 0001-01-01T00:00:00Z, Go's zero time.
const GO_ZERO_TIME_SECONDS: i64 = -62_135_596_800;

/// Converts a v1alpha1 WorkloadSpread to v1beta1 (losslessly, see the module docs of
/// `conversion`).
pub fn workloadspread_to_v1beta1(alpha: &v1alpha1::WorkloadSpread) -> v1beta1::WorkloadSpread {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 WorkloadSpread to v1alpha1 (losslessly).
pub fn workloadspread_to_v1alpha1(beta: &v1beta1::WorkloadSpread) -> v1alpha1::WorkloadSpread {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::WorkloadSpread) -> v1beta1::WorkloadSpread {
    let spec = &alpha.spec;
    v1beta1::WorkloadSpread {
        metadata: alpha.metadata.clone(),
        spec: v1beta1::WorkloadSpreadSpec {
            target_reference: spec.target_reference.clone(),
            target_filter: spec.target_filter.clone(),
            subsets: spec
                .subsets
                .iter()
                .map(|subset| v1beta1::WorkloadSpreadSubset {
                    name: subset.name.clone(),
                    required_node_selector: subset.required_node_selector_term.clone(),
                    preferred_node_selector: subset.preferred_node_selector_terms.clone(),
                    tolerations: subset.tolerations.clone(),
                    max_replicas: subset.max_replicas.clone(),
                    patch: subset.patch.clone(),
                })
                .collect(),
            schedule_strategy: spec.schedule_strategy.clone(),
        },
        status: alpha.status.as_ref().map(|status| v1beta1::WorkloadSpreadStatus {
            observed_generation: status.observed_generation,
            subset_statuses: subset_statuses_to_v1beta1(&status.subset_statuses),
            versioned_subset_statuses: status
                .versioned_subset_statuses
                .iter()
                .map(|(version, statuses)| (version.clone(), subset_statuses_to_v1beta1(statuses)))
                .collect(),
        }),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::WorkloadSpread) -> v1alpha1::WorkloadSpread {
    let spec = &beta.spec;
    v1alpha1::WorkloadSpread {
        metadata: beta.metadata.clone(),
        spec: v1alpha1::WorkloadSpreadSpec {
            target_reference: spec.target_reference.clone(),
            target_filter: spec.target_filter.clone(),
            subsets: spec
                .subsets
                .iter()
                .map(|subset| v1alpha1::WorkloadSpreadSubset {
                    name: subset.name.clone(),
                    required_node_selector_term: subset.required_node_selector.clone(),
                    preferred_node_selector_terms: subset.preferred_node_selector.clone(),
                    tolerations: subset.tolerations.clone(),
                    max_replicas: subset.max_replicas.clone(),
                    patch: subset.patch.clone(),
                })
                .collect(),
            schedule_strategy: spec.schedule_strategy.clone(),
        },
        status: beta.status.as_ref().map(|status| v1alpha1::WorkloadSpreadStatus {
            observed_generation: status.observed_generation,
            subset_statuses: subset_statuses_to_v1alpha1(&status.subset_statuses),
            versioned_subset_statuses: status
                .versioned_subset_statuses
                .iter()
                .map(|(version, statuses)| (version.clone(), subset_statuses_to_v1alpha1(statuses)))
                .collect(),
        }),
    }
}

fn subset_statuses_to_v1beta1(
    statuses: &[v1alpha1::WorkloadSpreadSubsetStatus],
) -> Vec<v1beta1::WorkloadSpreadSubsetStatus> {
    statuses
        .iter()
        .map(|status| v1beta1::WorkloadSpreadSubsetStatus {
            name: status.name.clone(),
            replicas: status.replicas,
            conditions: status.conditions.iter().map(condition_to_v1beta1).collect(),
            missing_replicas: status.missing_replicas,
            creating_pods: status.creating_pods.clone(),
            deleting_pods: status.deleting_pods.clone(),
        })
        .collect()
}

fn subset_statuses_to_v1alpha1(
    statuses: &[v1beta1::WorkloadSpreadSubsetStatus],
) -> Vec<v1alpha1::WorkloadSpreadSubsetStatus> {
    statuses
        .iter()
        .map(|status| v1alpha1::WorkloadSpreadSubsetStatus {
            name: status.name.clone(),
            replicas: status.replicas,
            conditions: status.conditions.iter().map(condition_to_v1alpha1).collect(),
            missing_replicas: status.missing_replicas,
            creating_pods: status.creating_pods.clone(),
            deleting_pods: status.deleting_pods.clone(),
        })
        .collect()
}

fn condition_to_v1beta1(condition: &v1alpha1::WorkloadSpreadSubsetCondition) -> Condition {
    let reason = if condition.reason.is_empty() {
        DEFAULT_CONDITION_REASON.to_string()
    } else {
        condition.reason.clone()
    };
    Condition {
        type_: condition.type_.as_str().to_string(),
        status: condition.status.clone(),
        last_transition_time: condition.last_transition_time.clone().unwrap_or_else(go_zero_time),
        reason,
        message: condition.message.clone(),
        observed_generation: None,
    }
}

fn condition_to_v1alpha1(condition: &Condition) -> v1alpha1::WorkloadSpreadSubsetCondition {
    v1alpha1::WorkloadSpreadSubsetCondition {
        type_: condition.type_.as_str().into(),
        status: condition.status.clone(),
        last_transition_time: Some(condition.last_transition_time.clone())
            .filter(|time| *time != go_zero_time()),
        reason: condition.reason.clone(),
        message: condition.message.clone(),
    }
}

/// The time an unset Go `metav1.Time` holds.
fn go_zero_time() -> Time {
    Time(Timestamp::from_second(GO_ZERO_TIME_SECONDS).expect("0001-01-01 is within the supported range"))
}
