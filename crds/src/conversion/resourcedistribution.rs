//! ResourceDistribution v1alpha1 <-> v1beta1.
//!
//! Upstream rules: two renames and nothing else. The namespace label selector is
//! `targets.namespaceLabelSelector` in v1alpha1 and `targets.namespaceSelector` in v1beta1, and
//! a status condition's namespace list is `failedNamespace` in v1alpha1 and `failedNamespaces`
//! in v1beta1. The distributed resource, the namespace lists, the counters and the metadata
//! carry over unchanged, so the natural conversion is one-to-one.

use super::{convert_lossless, impl_spec_status_parts};
use crate::apps::{v1alpha1, v1beta1};

impl_spec_status_parts!(v1alpha1::ResourceDistribution, v1beta1::ResourceDistribution);

/// Converts a v1alpha1 ResourceDistribution to v1beta1 (losslessly, see the module docs of
/// `conversion`).
pub fn resourcedistribution_to_v1beta1(
    alpha: &v1alpha1::ResourceDistribution,
) -> v1beta1::ResourceDistribution {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 ResourceDistribution to v1alpha1 (losslessly).
pub fn resourcedistribution_to_v1alpha1(
    beta: &v1beta1::ResourceDistribution,
) -> v1alpha1::ResourceDistribution {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::ResourceDistribution) -> v1beta1::ResourceDistribution {
    let targets = &alpha.spec.targets;
    v1beta1::ResourceDistribution {
        metadata: alpha.metadata.clone(),
        spec: v1beta1::ResourceDistributionSpec {
            resource: alpha.spec.resource.clone(),
            targets: v1beta1::ResourceDistributionTargets {
                all_namespaces: targets.all_namespaces,
                excluded_namespaces: targets.excluded_namespaces.clone(),
                included_namespaces: targets.included_namespaces.clone(),
                namespace_selector: targets.namespace_label_selector.clone(),
            },
        },
        status: alpha.status.as_ref().map(|status| v1beta1::ResourceDistributionStatus {
            desired: status.desired,
            succeeded: status.succeeded,
            failed: status.failed,
            observed_generation: status.observed_generation,
            conditions: status
                .conditions
                .iter()
                .map(|condition| v1beta1::ResourceDistributionCondition {
                    type_: condition.type_.clone(),
                    status: condition.status.clone(),
                    last_transition_time: condition.last_transition_time.clone(),
                    reason: condition.reason.clone(),
                    failed_namespaces: condition.failed_namespaces.clone(),
                })
                .collect(),
        }),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::ResourceDistribution) -> v1alpha1::ResourceDistribution {
    let targets = &beta.spec.targets;
    v1alpha1::ResourceDistribution {
        metadata: beta.metadata.clone(),
        spec: v1alpha1::ResourceDistributionSpec {
            resource: beta.spec.resource.clone(),
            targets: v1alpha1::ResourceDistributionTargets {
                all_namespaces: targets.all_namespaces,
                excluded_namespaces: targets.excluded_namespaces.clone(),
                included_namespaces: targets.included_namespaces.clone(),
                namespace_label_selector: targets.namespace_selector.clone(),
            },
        },
        status: beta.status.as_ref().map(|status| v1alpha1::ResourceDistributionStatus {
            desired: status.desired,
            succeeded: status.succeeded,
            failed: status.failed,
            observed_generation: status.observed_generation,
            conditions: status
                .conditions
                .iter()
                .map(|condition| v1alpha1::ResourceDistributionCondition {
                    type_: condition.type_.clone(),
                    status: condition.status.clone(),
                    last_transition_time: condition.last_transition_time.clone(),
                    reason: condition.reason.clone(),
                    failed_namespaces: condition.failed_namespaces.clone(),
                })
                .collect(),
        }),
    }
}
