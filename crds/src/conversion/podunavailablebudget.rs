//! PodUnavailableBudget v1alpha1 <-> v1beta1.
//!
//! Upstream rules: the v1alpha1 PUB annotation `kruise.io/pub-protect-operations` (a
//! comma-separated list such as `DELETE,EVICT`; blanks around items and empty items are ignored)
//! is the v1beta1 field `spec.protectOperations`, and the annotation
//! `pub.kruise.io/protect-total-replicas` (a decimal 32-bit integer) is
//! `spec.protectTotalReplicas`. Going to v1beta1 an annotation that parses is moved into the
//! field (removed from the annotations); one that does not parse (an unknown operation, a
//! non-number, an empty value) is left where it is and the field stays unset. Going to v1alpha1 a
//! set field is written to its annotation (operations joined with `,`), and an unset field drops
//! an annotation still holding a parseable value, so a stale `DELETE` left on a v1beta1 object is
//! not shown to v1alpha1 clients. v1beta1 `spec.ignoredPodSelector` has no v1alpha1 form (the
//! per-pod `pub.kruise.io/no-protect` annotation it replaces lives on pods, not on the PUB) and is
//! dropped by the natural conversion; `convert_lossless` keeps it across round trips. Status and
//! the remaining spec fields carry over unchanged.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{convert_lossless, impl_spec_status_parts, put_annotation, take_annotation};
use crate::policy::{
    v1alpha1,
    v1beta1::{self, PUB_PROTECT_OPERATIONS_KEY, PUB_PROTECT_TOTAL_REPLICAS_KEY, PubOperation},
};

impl_spec_status_parts!(v1alpha1::PodUnavailableBudget, v1beta1::PodUnavailableBudget);

/// Converts a v1alpha1 PodUnavailableBudget to v1beta1 (losslessly, see the module docs of
/// `conversion`).
pub fn podunavailablebudget_to_v1beta1(
    alpha: &v1alpha1::PodUnavailableBudget,
) -> v1beta1::PodUnavailableBudget {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 PodUnavailableBudget to v1alpha1 (losslessly).
pub fn podunavailablebudget_to_v1alpha1(
    beta: &v1beta1::PodUnavailableBudget,
) -> v1alpha1::PodUnavailableBudget {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::PodUnavailableBudget) -> v1beta1::PodUnavailableBudget {
    let mut metadata = alpha.metadata.clone();
    let protect_operations =
        take_parsed(&mut metadata, PUB_PROTECT_OPERATIONS_KEY, parse_operations).unwrap_or_default();
    let protect_total_replicas = take_parsed(&mut metadata, PUB_PROTECT_TOTAL_REPLICAS_KEY, parse_replicas);
    let spec = &alpha.spec;
    v1beta1::PodUnavailableBudget {
        metadata,
        spec: v1beta1::PodUnavailableBudgetSpec {
            selector: spec.selector.clone(),
            target_reference: spec.target_reference.clone(),
            max_unavailable: spec.max_unavailable.clone(),
            min_available: spec.min_available.clone(),
            protect_operations,
            protect_total_replicas,
            ignored_pod_selector: None,
        },
        status: alpha.status.as_ref().map(|status| v1beta1::PodUnavailableBudgetStatus {
            observed_generation: status.observed_generation,
            disrupted_pods: status.disrupted_pods.clone(),
            unavailable_pods: status.unavailable_pods.clone(),
            unavailable_allowed: status.unavailable_allowed,
            current_available: status.current_available,
            desired_available: status.desired_available,
            total_replicas: status.total_replicas,
        }),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::PodUnavailableBudget) -> v1alpha1::PodUnavailableBudget {
    let mut metadata = beta.metadata.clone();
    let spec = &beta.spec;
    if spec.protect_operations.is_empty() {
        drop_parseable(&mut metadata, PUB_PROTECT_OPERATIONS_KEY, parse_operations);
    } else {
        let joined = spec
            .protect_operations
            .iter()
            .map(PubOperation::as_str)
            .filter(|operation| !operation.is_empty())
            .collect::<Vec<_>>()
            .join(",");
        put_annotation(&mut metadata, PUB_PROTECT_OPERATIONS_KEY, joined);
    }
    match spec.protect_total_replicas {
        Some(replicas) => put_annotation(&mut metadata, PUB_PROTECT_TOTAL_REPLICAS_KEY, replicas.to_string()),
        None => drop_parseable(&mut metadata, PUB_PROTECT_TOTAL_REPLICAS_KEY, parse_replicas),
    }
    v1alpha1::PodUnavailableBudget {
        metadata,
        spec: v1alpha1::PodUnavailableBudgetSpec {
            selector: spec.selector.clone(),
            target_reference: spec.target_reference.clone(),
            max_unavailable: spec.max_unavailable.clone(),
            min_available: spec.min_available.clone(),
        },
        status: beta.status.as_ref().map(|status| v1alpha1::PodUnavailableBudgetStatus {
            observed_generation: status.observed_generation,
            disrupted_pods: status.disrupted_pods.clone(),
            unavailable_pods: status.unavailable_pods.clone(),
            unavailable_allowed: status.unavailable_allowed,
            current_available: status.current_available,
            desired_available: status.desired_available,
            total_replicas: status.total_replicas,
        }),
    }
}

/// `DELETE, EVICT` -> [DELETE, EVICT]; `None` when an item is not a known operation or when
/// nothing is listed.
fn parse_operations(text: &str) -> Option<Vec<PubOperation>> {
    let operations = text
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| Some(PubOperation::from(item)).filter(PubOperation::is_known))
        .collect::<Option<Vec<_>>>()?;
    (!operations.is_empty()).then_some(operations)
}

fn parse_replicas(text: &str) -> Option<i32> {
    text.parse().ok()
}

/// Removes the annotation and returns its parsed value; leaves it in place when it does not
/// parse.
fn take_parsed<T>(metadata: &mut ObjectMeta, key: &str, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
    let value = parse(metadata.annotations.as_ref()?.get(key)?)?;
    take_annotation(metadata, key);
    Some(value)
}

/// Removes the annotation when it holds a value that would have been moved into a field.
fn drop_parseable<T>(metadata: &mut ObjectMeta, key: &str, parse: impl Fn(&str) -> Option<T>) {
    let parseable = metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(key))
        .is_some_and(|text| parse(text).is_some());
    if parseable {
        take_annotation(metadata, key);
    }
}
