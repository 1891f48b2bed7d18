//! Validation rules several workloads share: selector/template agreement and update ordering
//! strategies.

use k8s_openapi::{api::core::v1::PodTemplateSpec, apimachinery::pkg::apis::meta::v1::LabelSelector};

use super::{meta::validate_label_selector, pod::validate_pod_template};
use crate::{
    common::{UpdatePriorityStrategy, UpdateScatterStrategy},
    field::{ErrorList, FieldError, FieldPath},
    selector,
};

/// The selector is required, valid, non-empty and matches the template labels; the template
/// itself is a valid pod template (with `claim_volumes` counted as volumes). `kind` names the
/// workload in messages ("empty selector is invalid for cloneset").
pub fn validate_selector_and_template(
    selector_value: Option<&LabelSelector>,
    template: &PodTemplateSpec,
    claim_volumes: &[String],
    path: &FieldPath,
    kind: &str,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let selector_path = path.child("selector");
    match selector_value {
        None => errors.push(FieldError::required(&selector_path, "")),
        Some(value) => {
            errors.extend(validate_label_selector(value, &selector_path));
            if selector::is_empty(value) {
                errors.push(FieldError::invalid(
                    &selector_path,
                    "{}",
                    format!("empty selector is invalid for {kind}"),
                ));
            } else {
                let labels = template.metadata.as_ref().and_then(|m| m.labels.clone()).unwrap_or_default();
                if !selector::matches(value, &labels) {
                    errors.push(FieldError::invalid(
                        &path.child("template").child("metadata").child("labels"),
                        format!("{labels:?}"),
                        "`selector` does not match template `labels`",
                    ));
                }
            }
        }
    }
    errors.extend(validate_pod_template(template, &path.child("template"), claim_volumes));
    errors
}

/// Priority strategy: weight or order terms, not both; weights 0-100 with a non-empty valid
/// selector; order keys non-empty.
pub fn validate_priority_strategy(strategy: &UpdatePriorityStrategy, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if !strategy.weight_priority.is_empty() && !strategy.order_priority.is_empty() {
        errors.push(FieldError::required(path, "only one of weightPriority and orderPriority can be used"));
    }
    for (index, term) in strategy.weight_priority.iter().enumerate() {
        let item = path.child("weightPriority").index(index);
        if !(0..=100).contains(&term.weight) {
            errors.push(FieldError::invalid(
                &item.child("weight"),
                term.weight,
                "weight must be in the range 0-100",
            ));
        }
        if selector::is_empty(&term.match_selector) {
            errors.push(FieldError::required(&item.child("matchSelector"), "selector can not be empty"));
        }
        errors.extend(validate_label_selector(&term.match_selector, &item.child("matchSelector")));
    }
    for (index, term) in strategy.order_priority.iter().enumerate() {
        if term.ordered_key.is_empty() {
            errors.push(FieldError::required(
                &path.child("orderPriority").index(index).child("orderedKey"),
                "order key can not be empty",
            ));
        }
    }
    errors
}

/// Scatter strategy: keys non-empty, no key=value pair twice.
pub fn validate_scatter_strategy(strategy: &UpdateScatterStrategy, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut seen = std::collections::BTreeSet::new();
    for (index, term) in strategy.iter().enumerate() {
        let item = path.index(index);
        if term.key.is_empty() {
            errors.push(FieldError::required(&item.child("key"), "key should not be empty"));
        }
        if !seen.insert((&term.key, &term.value)) {
            errors.push(FieldError::duplicate(&item, format!("{}={}", term.key, term.value)));
        }
    }
    errors
}
