//! PodUnavailableBudget validation (INVENTORY "PodUnavailableBudget" and d.4; upstream
//! `pkg/webhook/podunavailablebudget/validating`), for both served versions. v1alpha1 carries
//! the guarded operations and the replica override as annotations, so their problems are
//! reported at those annotations.
//!
//! Left to the webhook because it needs the cluster: that no other budget in the namespace
//! targets the same workload or has an overlapping selector.

use k8s_openapi::apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString};

use super::meta::{validate_label_selector, validate_object_meta};
use crate::{
    field::{ErrorList, FieldError, FieldPath, quoted},
    intstr::display,
    policy::{v1alpha1, v1beta1},
    selector,
};

/// Validates a v1beta1 PodUnavailableBudget; with `old`, also that the selector and target do
/// not change.
pub fn validate_podunavailablebudget_v1beta1(
    budget: &v1beta1::PodUnavailableBudget,
    old: Option<&v1beta1::PodUnavailableBudget>,
) -> ErrorList {
    let spec = &budget.spec;
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&budget.metadata, true);

    let annotations = budget.metadata.annotations.as_ref();
    if let Some(value) = annotations.and_then(|a| a.get(v1beta1::PUB_PROTECT_TOTAL_REPLICAS_KEY)) {
        let annotation_path = annotation_path(v1beta1::PUB_PROTECT_TOTAL_REPLICAS_KEY);
        match value.parse::<i32>() {
            Err(_) => {
                errors.push(FieldError::invalid(&annotation_path, quoted(value), "must be a 32-bit integer"))
            }
            Ok(_) => {
                if let Some(replicas) = spec.protect_total_replicas.filter(|r| *value != r.to_string()) {
                    errors.push(FieldError::invalid(
                        &annotation_path,
                        quoted(value),
                        format!("must equal spec.protectTotalReplicas ({replicas}) when both are set"),
                    ));
                }
            }
        }
    }

    errors.extend(validate_common(
        spec.selector.as_ref(),
        spec.target_reference.as_ref(),
        spec.max_unavailable.as_ref(),
        spec.min_available.as_ref(),
        &path,
    ));
    for (index, operation) in spec.protect_operations.iter().enumerate() {
        if !operation.is_known() {
            errors.push(FieldError::not_supported(
                &path.child("protectOperations").index(index),
                operation.as_str(),
                v1beta1::PubOperation::KNOWN,
            ));
        }
    }
    if let Some(replicas) = spec.protect_total_replicas.filter(|replicas| *replicas < 1) {
        errors.push(FieldError::invalid(&path.child("protectTotalReplicas"), replicas, "must be at least 1"));
    }
    if let Some(ignored) = &spec.ignored_pod_selector {
        let ignored_path = path.child("ignoredPodSelector");
        errors.extend(validate_label_selector(ignored, &ignored_path));
        if selector::is_empty(ignored) {
            errors.push(FieldError::invalid(
                &ignored_path,
                "{}",
                "an empty ignoredPodSelector would exempt every pod",
            ));
        }
    }
    if let Some(old) = old {
        errors.extend(validate_update(
            (&spec.selector, &old.spec.selector),
            spec.target_reference != old.spec.target_reference,
            &path,
        ));
    }
    errors
}

/// Validates a v1alpha1 PodUnavailableBudget, including the annotations that stand in for the
/// v1beta1 `protectOperations` and `protectTotalReplicas`; with `old`, also that the selector
/// and target do not change.
pub fn validate_podunavailablebudget_v1alpha1(
    budget: &v1alpha1::PodUnavailableBudget,
    old: Option<&v1alpha1::PodUnavailableBudget>,
) -> ErrorList {
    let spec = &budget.spec;
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&budget.metadata, true);

    let annotations = budget.metadata.annotations.as_ref();
    if let Some(value) = annotations.and_then(|a| a.get(v1alpha1::PUB_PROTECT_OPERATIONS_KEY)) {
        let annotation_path = annotation_path(v1alpha1::PUB_PROTECT_OPERATIONS_KEY);
        for item in value.split(',').map(str::trim).filter(|item| !item.is_empty()) {
            if !v1alpha1::PubOperation::from(item).is_known() {
                errors.push(FieldError::not_supported(&annotation_path, item, v1alpha1::PubOperation::KNOWN));
            }
        }
    }
    if let Some(value) = annotations.and_then(|a| a.get(v1alpha1::PUB_PROTECT_TOTAL_REPLICAS_KEY))
        && value.parse::<i32>().is_err()
    {
        errors.push(FieldError::invalid(
            &annotation_path(v1alpha1::PUB_PROTECT_TOTAL_REPLICAS_KEY),
            quoted(value),
            "must be a 32-bit integer",
        ));
    }

    errors.extend(validate_common(
        spec.selector.as_ref(),
        spec.target_reference.as_ref(),
        spec.max_unavailable.as_ref(),
        spec.min_available.as_ref(),
        &path,
    ));
    if let Some(old) = old {
        errors.extend(validate_update(
            (&spec.selector, &old.spec.selector),
            spec.target_reference != old.spec.target_reference,
            &path,
        ));
    }
    errors
}

fn annotation_path(key: &str) -> FieldPath {
    FieldPath::root("metadata").child("annotations").key(key)
}

/// The group of an apiVersion, or why it does not parse.
fn api_group(api_version: &str) -> Result<&str, String> {
    if api_version.is_empty() || api_version == "/" {
        return Ok("");
    }
    match api_version.split_once('/') {
        None => Ok(""),
        Some((group, version)) if !version.contains('/') => Ok(group),
        Some(_) => Err(format!("unexpected GroupVersion string: {api_version}")),
    }
}

/// The spec rules both versions share: exactly one of selector and targetRef, exactly one of
/// maxUnavailable and minAvailable, each well formed.
fn validate_common(
    pod_selector: Option<&LabelSelector>,
    target: Option<&v1beta1::TargetReference>,
    max_unavailable: Option<&IntOrString>,
    min_available: Option<&IntOrString>,
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    match (pod_selector, target) {
        (None, None) => errors
            .push(FieldError::required(&path.child("selector"), "one of selector and targetRef is required")),
        (Some(_), Some(_)) => errors.push(FieldError::forbidden(
            &path.child("selector"),
            "selector and targetRef are mutually exclusive",
        )),
        _ => {}
    }
    if let Some(target) = target {
        let target_path = path.child("targetRef");
        for (field, value) in
            [("apiVersion", &target.api_version), ("kind", &target.kind), ("name", &target.name)]
        {
            if value.is_empty() {
                errors.push(FieldError::required(&target_path.child(field), ""));
            }
        }
        if let Err(message) = api_group(&target.api_version) {
            errors.push(FieldError::invalid(
                &target_path.child("apiVersion"),
                quoted(&target.api_version),
                message,
            ));
        }
    }
    if let Some(pod_selector) = pod_selector {
        let selector_path = path.child("selector");
        errors.extend(validate_label_selector(pod_selector, &selector_path));
        if selector::is_empty(pod_selector) {
            errors.push(FieldError::invalid(
                &selector_path,
                "{}",
                "an empty selector is not valid for a budget",
            ));
        }
    }

    match (max_unavailable, min_available) {
        (None, None) => errors.push(FieldError::required(
            &path.child("maxUnavailable"),
            "one of maxUnavailable and minAvailable is required",
        )),
        (Some(_), Some(_)) => errors.push(FieldError::forbidden(
            &path.child("minAvailable"),
            "maxUnavailable and minAvailable are mutually exclusive",
        )),
        _ => {}
    }
    if let Some(value) = max_unavailable {
        errors.extend(validate_budget_number(value, &path.child("maxUnavailable")));
    }
    if let Some(value) = min_available {
        errors.extend(validate_budget_number(value, &path.child("minAvailable")));
    }
    errors
}

/// A non-negative integer or an integer percentage (`"25%"`) of at most 100%.
fn validate_budget_number(value: &IntOrString, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    match value {
        IntOrString::Int(count) if *count < 0 => {
            errors.push(FieldError::invalid(path, count, "must be greater than or equal to 0"))
        }
        IntOrString::Int(_) => {}
        IntOrString::String(text) => {
            let digits =
                text.strip_suffix('%').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            match digits {
                None => errors.push(FieldError::invalid(
                    path,
                    display(value),
                    "must be an integer or a percentage: digits followed by '%' (e.g. '25%')",
                )),
                Some(digits) => {
                    if digits.parse::<u64>().is_ok_and(|percent| percent > 100)
                        || digits.parse::<u64>().is_err()
                    {
                        errors.push(FieldError::invalid(
                            path,
                            display(value),
                            "must not be greater than 100%",
                        ));
                    }
                }
            }
        }
    }
    errors
}

/// On update the pods a budget guards may not change.
fn validate_update(
    selectors: (&Option<LabelSelector>, &Option<LabelSelector>),
    target_changed: bool,
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    if selectors.0 != selectors.1 {
        errors.push(FieldError::forbidden(&path.child("selector"), "selector cannot be changed"));
    }
    if target_changed {
        errors.push(FieldError::forbidden(&path.child("targetRef"), "targetRef cannot be changed"));
    }
    errors
}
