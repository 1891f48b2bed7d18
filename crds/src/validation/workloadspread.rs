//! WorkloadSpread validation (INVENTORY "WorkloadSpread"; upstream
//! `pkg/webhook/workloadspread/validating/workloadspread_validation.go`), for both served
//! versions so that subset fields are reported under the name the user wrote.
//!
//! Rules that need the cluster are left to the webhook: that no other WorkloadSpread targets
//! the same workload, and that each subset `patch` merged into the target's pod template gives
//! a valid pod (here the patch is only checked to be an object that decodes as a pod).

use std::collections::BTreeSet;

use k8s_openapi::{
    api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm, Pod, PreferredSchedulingTerm, Toleration},
    apimachinery::pkg::util::intstr::IntOrString,
};
use serde_json::Value;

use super::meta::{
    dns1123_subdomain_problems, label_value_problems, qualified_name_problems, validate_label_selector,
    validate_object_meta,
};
use crate::{
    apps::{v1alpha1, v1beta1},
    field::{ErrorList, FieldError, FieldPath, quoted},
    intstr::display,
};

/// Longest time, in seconds, a pod may stay unschedulable before the Adaptive strategy gives up
/// on it; `rescheduleCriticalSeconds` is bounded so that a pod can try every subset within it.
pub const WORKLOADSPREAD_MAX_SCHEDULE_FAILED_SECONDS: i32 = 300;

/// Workload kinds a WorkloadSpread supports without configuration, as (kind, accepted API
/// groups).
pub const WORKLOADSPREAD_BUILTIN_TARGETS: &[(&str, &[&str])] = &[
    ("CloneSet", &["apps.kruise.io"]),
    ("Deployment", &["apps"]),
    ("ReplicaSet", &["apps"]),
    ("Job", &["batch"]),
    ("StatefulSet", &["apps", "apps.kruise.io"]),
];

/// Validates a v1beta1 WorkloadSpread against the built-in target kinds only; with `old`, also
/// that the target does not change.
pub fn validate_workloadspread_v1beta1(
    spread: &v1beta1::WorkloadSpread,
    old: Option<&v1beta1::WorkloadSpread>,
) -> ErrorList {
    validate_workloadspread_v1beta1_with_whitelist(spread, old, &[])
}

/// Validates a v1beta1 WorkloadSpread, also accepting targets whose (group, kind) is in
/// `custom_workloads` (the `WorkloadSpread_Watch_Custom_Workload_WhiteList` configuration).
pub fn validate_workloadspread_v1beta1_with_whitelist(
    spread: &v1beta1::WorkloadSpread,
    old: Option<&v1beta1::WorkloadSpread>,
    custom_workloads: &[(&str, &str)],
) -> ErrorList {
    let spec = &spread.spec;
    let subsets: Vec<SubsetView<'_>> = spec
        .subsets
        .iter()
        .map(|subset| SubsetView {
            name: &subset.name,
            required: subset.required_node_selector.as_ref(),
            preferred: &subset.preferred_node_selector,
            tolerations: &subset.tolerations,
            max_replicas: subset.max_replicas.as_ref(),
            patch: &subset.patch,
        })
        .collect();
    let mut errors = validate_object_meta(&spread.metadata, true);
    errors.extend(validate_spec(
        SpecView {
            target: spec.target_reference.as_ref(),
            filter: spec.target_filter.as_ref(),
            subsets: &subsets,
            strategy: &spec.schedule_strategy,
            required_field: "requiredNodeSelector",
            preferred_field: "preferredNodeSelector",
        },
        custom_workloads,
    ));
    if let Some(old) = old {
        errors.extend(validate_target_update(
            spec.target_reference.as_ref(),
            old.spec.target_reference.as_ref(),
        ));
    }
    errors
}

/// Validates a v1alpha1 WorkloadSpread against the built-in target kinds only; with `old`, also
/// that the target does not change.
pub fn validate_workloadspread_v1alpha1(
    spread: &v1alpha1::WorkloadSpread,
    old: Option<&v1alpha1::WorkloadSpread>,
) -> ErrorList {
    validate_workloadspread_v1alpha1_with_whitelist(spread, old, &[])
}

/// Validates a v1alpha1 WorkloadSpread, also accepting targets whose (group, kind) is in
/// `custom_workloads`. Subset node selectors are reported as `requiredNodeSelectorTerm` and
/// `preferredNodeSelectorTerms`.
pub fn validate_workloadspread_v1alpha1_with_whitelist(
    spread: &v1alpha1::WorkloadSpread,
    old: Option<&v1alpha1::WorkloadSpread>,
    custom_workloads: &[(&str, &str)],
) -> ErrorList {
    let spec = &spread.spec;
    let subsets: Vec<SubsetView<'_>> = spec
        .subsets
        .iter()
        .map(|subset| SubsetView {
            name: &subset.name,
            required: subset.required_node_selector_term.as_ref(),
            preferred: &subset.preferred_node_selector_terms,
            tolerations: &subset.tolerations,
            max_replicas: subset.max_replicas.as_ref(),
            patch: &subset.patch,
        })
        .collect();
    let mut errors = validate_object_meta(&spread.metadata, true);
    errors.extend(validate_spec(
        SpecView {
            target: spec.target_reference.as_ref(),
            filter: spec.target_filter.as_ref(),
            subsets: &subsets,
            strategy: &spec.schedule_strategy,
            required_field: "requiredNodeSelectorTerm",
            preferred_field: "preferredNodeSelectorTerms",
        },
        custom_workloads,
    ));
    if let Some(old) = old {
        errors.extend(validate_target_update(
            spec.target_reference.as_ref(),
            old.spec.target_reference.as_ref(),
        ));
    }
    errors
}

/// A subset of either version.
struct SubsetView<'a> {
    name: &'a str,
    required: Option<&'a NodeSelectorTerm>,
    preferred: &'a [PreferredSchedulingTerm],
    tolerations: &'a [Toleration],
    max_replicas: Option<&'a IntOrString>,
    patch: &'a Value,
}

/// The spec of either version, with the version's names of the subset node selector fields.
struct SpecView<'a> {
    target: Option<&'a v1beta1::TargetReference>,
    filter: Option<&'a v1beta1::TargetFilter>,
    subsets: &'a [SubsetView<'a>],
    strategy: &'a v1beta1::WorkloadSpreadScheduleStrategy,
    required_field: &'static str,
    preferred_field: &'static str,
}

fn validate_spec(spec: SpecView<'_>, custom_workloads: &[(&str, &str)]) -> ErrorList {
    let path = FieldPath::root("spec");
    let mut errors = validate_target(spec.target, custom_workloads, &path.child("targetRef"));
    let target_kind = spec.target.map(|target| target.kind.as_str());
    errors.extend(validate_subsets(&spec, target_kind, &path.child("subsets")));

    let strategy_path = path.child("scheduleStrategy");
    let strategy = spec.strategy;
    if !strategy.type_.is_unset() && !strategy.type_.is_known() {
        errors.push(FieldError::not_supported(
            &strategy_path.child("type"),
            strategy.type_.as_str(),
            &["Fixed", "Adaptive"],
        ));
    }
    if let Some(adaptive) = &strategy.adaptive {
        if strategy.type_ != v1beta1::WorkloadSpreadScheduleStrategyType::Adaptive {
            errors.push(FieldError::invalid(
                &strategy_path.child("type"),
                quoted(strategy.type_.as_str()),
                "must be Adaptive when scheduleStrategy.adaptive is set",
            ));
        }
        let count = spec.subsets.len();
        if let Some(last) = spec.subsets.last().and_then(|subset| subset.max_replicas).filter(|_| count > 1) {
            errors.push(FieldError::invalid(
                &path.child("subsets").index(count - 1).child("maxReplicas"),
                display(last),
                "the last subset must leave maxReplicas unset with the Adaptive schedule strategy",
            ));
        }
        let allowed = match i32::try_from(count) {
            Ok(count) if count > 1 => (WORKLOADSPREAD_MAX_SCHEDULE_FAILED_SECONDS - 5) / (count - 1),
            Ok(_) => i32::MAX,
            Err(_) => 0,
        };
        if let Some(seconds) = adaptive.reschedule_critical_seconds
            && !(0..=allowed).contains(&seconds)
        {
            errors.push(FieldError::invalid(
                &strategy_path.child("adaptive").child("rescheduleCriticalSeconds"),
                seconds,
                format!("must be between 0 and {allowed} with {count} subsets"),
            ));
        }
    }

    if let Some(selector) = spec.filter.and_then(|filter| filter.selector.as_ref()) {
        errors.extend(validate_label_selector(selector, &path.child("targetFilter").child("selector")));
    }
    errors
}

/// The group of an apiVersion (`apps/v1` → `apps`, `v1` → core), or why it does not parse.
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

fn validate_target(
    target: Option<&v1beta1::TargetReference>,
    custom_workloads: &[(&str, &str)],
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(target) = target else {
        errors.push(FieldError::required(path, "the workload to spread is required"));
        return errors;
    };
    let mut complete = true;
    for (field, value) in
        [("apiVersion", &target.api_version), ("kind", &target.kind), ("name", &target.name)]
    {
        if value.is_empty() {
            errors.push(FieldError::required(&path.child(field), ""));
            complete = false;
        }
    }
    if !complete {
        return errors;
    }
    let group = match api_group(&target.api_version) {
        Ok(group) => group,
        Err(message) => {
            errors.push(FieldError::invalid(&path.child("apiVersion"), quoted(&target.api_version), message));
            return errors;
        }
    };
    match WORKLOADSPREAD_BUILTIN_TARGETS.iter().find(|(kind, _)| *kind == target.kind) {
        Some((kind, groups)) => {
            if !groups.contains(&group) {
                let expected = groups.join(" or ");
                errors.push(FieldError::invalid(
                    &path.child("apiVersion"),
                    quoted(&target.api_version),
                    format!("a {kind} target must be in API group {expected}"),
                ));
            }
        }
        None => {
            let whitelisted = custom_workloads
                .iter()
                .any(|(custom_group, custom_kind)| *custom_kind == target.kind && *custom_group == group);
            if !whitelisted {
                errors.push(FieldError::invalid(
                    &path.child("kind"),
                    quoted(&target.kind),
                    "must be CloneSet, Deployment, ReplicaSet, Job, StatefulSet or a workload in the \
                     WorkloadSpread custom workload whitelist",
                ));
            }
        }
    }
    errors
}

fn validate_target_update(
    new: Option<&v1beta1::TargetReference>,
    old: Option<&v1beta1::TargetReference>,
) -> ErrorList {
    let (Some(new), Some(old)) = (new, old) else {
        return ErrorList::new();
    };
    let new_group = api_group(&new.api_version).unwrap_or_default();
    let old_group = api_group(&old.api_version).unwrap_or_default();
    if new_group != old_group || new.kind != old.kind || new.name != old.name {
        vec![FieldError::invalid(
            &FieldPath::root("spec").child("targetRef"),
            format!("{}/{}/{}", new.api_version, new.kind, new.name),
            "the target workload of a WorkloadSpread cannot be changed",
        )]
    } else {
        Vec::new()
    }
}

/// `maxReplicas` resolved the way upstream does it (an integer, or an integer percentage).
fn max_replicas_value(value: &IntOrString) -> Option<i32> {
    match value {
        IntOrString::Int(count) => Some(*count),
        IntOrString::String(text) => text.strip_suffix('%')?.parse::<i32>().ok(),
    }
}

fn validate_subsets(spec: &SpecView<'_>, target_kind: Option<&str>, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if spec.subsets.is_empty() {
        errors.push(FieldError::required(path, "at least one subset is required"));
        return errors;
    }
    let mut names = BTreeSet::new();
    let mut first_is_percent: Option<bool> = None;
    let mut percent_sum: i64 = 0;
    let mut max_replicas_ok = true;
    for (index, subset) in spec.subsets.iter().enumerate() {
        let item = path.index(index);
        if subset.name.is_empty() {
            errors.push(FieldError::required(&item.child("name"), "subset name is required"));
        } else if !names.insert(subset.name) {
            errors.push(FieldError::duplicate(&item.child("name"), quoted(subset.name)));
        }
        if let Some(term) = subset.required {
            errors.extend(validate_node_selector_term(term, &item.child(spec.required_field)));
        }
        for (term_index, term) in subset.preferred.iter().enumerate() {
            let term_path = item.child(spec.preferred_field).index(term_index);
            if !(1..=100).contains(&term.weight) {
                errors.push(FieldError::invalid(
                    &term_path.child("weight"),
                    term.weight,
                    "must be in the range 1-100",
                ));
            }
            errors.extend(validate_node_selector_term(&term.preference, &term_path.child("preference")));
        }
        errors.extend(validate_tolerations(subset.tolerations, &item.child("tolerations")));
        errors.extend(validate_patch(subset.patch, &item.child("patch")));

        let Some(max_replicas) = subset.max_replicas else { continue };
        let max_path = item.child("maxReplicas");
        let is_percent = matches!(max_replicas, IntOrString::String(_));
        match first_is_percent {
            None => first_is_percent = Some(is_percent),
            Some(first) if first != is_percent => {
                errors.push(FieldError::invalid(
                    &max_path,
                    display(max_replicas),
                    "every subset's maxReplicas must be of the same type: all integers or all percentages",
                ));
                max_replicas_ok = false;
                continue;
            }
            Some(_) => {}
        }
        if target_kind == Some("StatefulSet") && is_percent {
            errors.push(FieldError::invalid(
                &max_path,
                display(max_replicas),
                "must be an integer when the target is a StatefulSet",
            ));
            max_replicas_ok = false;
            continue;
        }
        match max_replicas_value(max_replicas) {
            Some(value) if value >= 0 => {
                if is_percent {
                    let before = percent_sum;
                    percent_sum += i64::from(value);
                    if before <= 100 && percent_sum > 100 {
                        errors.push(FieldError::invalid(
                            &max_path,
                            display(max_replicas),
                            "the maxReplicas percentages of all subsets add up to more than 100%",
                        ));
                        max_replicas_ok = false;
                    }
                }
            }
            _ => {
                errors.push(FieldError::invalid(
                    &max_path,
                    display(max_replicas),
                    "must be a non-negative integer or a non-negative integer percentage such as '30%'",
                ));
                max_replicas_ok = false;
            }
        }
    }
    let last_has_max = spec.subsets.last().is_some_and(|subset| subset.max_replicas.is_some());
    let first_max = spec.subsets.iter().enumerate().find_map(|(index, s)| s.max_replicas.map(|m| (index, m)));
    let all_percent = first_is_percent == Some(true);
    if let Some((first, value)) =
        first_max.filter(|_| max_replicas_ok && all_percent && percent_sum < 100 && last_has_max)
    {
        errors.push(FieldError::invalid(
            &path.index(first).child("maxReplicas"),
            display(value),
            "when every subset sets a percentage maxReplicas the percentages must add up to 100% \
             (or leave the last subset's maxReplicas unset)",
        ));
    }
    errors
}

/// A node selector term as a pod's node affinity accepts it.
fn validate_node_selector_term(term: &NodeSelectorTerm, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    for (index, requirement) in term.match_expressions.iter().flatten().enumerate() {
        errors.extend(validate_node_requirement(requirement, &path.child("matchExpressions").index(index)));
    }
    for (index, requirement) in term.match_fields.iter().flatten().enumerate() {
        errors.extend(validate_node_field_requirement(requirement, &path.child("matchFields").index(index)));
    }
    errors
}

fn validate_node_requirement(requirement: &NodeSelectorRequirement, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let values = requirement.values.as_deref().unwrap_or_default();
    match requirement.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => errors.push(FieldError::required(
            &path.child("values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if !values.is_empty() => errors.push(FieldError::forbidden(
            &path.child("values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "Gt" | "Lt" if values.len() != 1 => errors.push(FieldError::required(
            &path.child("values"),
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
        other => errors.push(FieldError::not_supported(
            &path.child("operator"),
            other,
            &["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"],
        )),
    }
    for problem in qualified_name_problems(&requirement.key) {
        errors.push(FieldError::invalid(&path.child("key"), quoted(&requirement.key), problem));
    }
    errors
}

fn validate_node_field_requirement(requirement: &NodeSelectorRequirement, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let values = requirement.values.as_deref().unwrap_or_default();
    match requirement.operator.as_str() {
        "In" | "NotIn" => {
            if values.len() != 1 {
                errors.push(FieldError::required(
                    &path.child("values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                ));
            }
        }
        other => errors.push(FieldError::not_supported(&path.child("operator"), other, &["In", "NotIn"])),
    }
    if requirement.key == "metadata.name" {
        for (index, value) in values.iter().enumerate() {
            for problem in dns1123_subdomain_problems(value) {
                errors.push(FieldError::invalid(&path.child("values").index(index), quoted(value), problem));
            }
        }
    } else {
        errors.push(FieldError::not_supported(&path.child("key"), &requirement.key, &["metadata.name"]));
    }
    errors
}

/// Tolerations as a pod spec accepts them.
fn validate_tolerations(tolerations: &[Toleration], path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    for (index, toleration) in tolerations.iter().enumerate() {
        let item = path.index(index);
        let key = toleration.key.as_deref().unwrap_or_default();
        let operator = toleration.operator.as_deref().unwrap_or_default();
        let value = toleration.value.as_deref().unwrap_or_default();
        let effect = toleration.effect.as_deref().unwrap_or_default();
        if !key.is_empty() {
            for problem in qualified_name_problems(key) {
                errors.push(FieldError::invalid(&item.child("key"), quoted(key), problem));
            }
        } else if operator != "Exists" {
            errors.push(FieldError::invalid(
                &item.child("operator"),
                quoted(operator),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if toleration.toleration_seconds.is_some() && effect != "NoExecute" {
            errors.push(FieldError::invalid(
                &item.child("effect"),
                quoted(effect),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            "" | "Equal" => {
                for problem in label_value_problems(value) {
                    errors.push(FieldError::invalid(&item.child("value"), quoted(value), problem));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    errors.push(FieldError::invalid(
                        &item.child("value"),
                        quoted(value),
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            other => {
                errors.push(FieldError::not_supported(&item.child("operator"), other, &["Equal", "Exists"]))
            }
        }
        if !effect.is_empty() && !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
            errors.push(FieldError::not_supported(
                &item.child("effect"),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
    errors
}

/// A subset patch must be a JSON object that, read as a strategic merge patch of a pod, has
/// the pod's shape (directives and deletions set aside).
fn validate_patch(patch: &Value, path: &FieldPath) -> ErrorList {
    match patch {
        Value::Null => Vec::new(),
        Value::Object(_) => match serde_json::from_value::<Pod>(without_directives(patch)) {
            Ok(_) => Vec::new(),
            Err(error) => {
                vec![FieldError::invalid(
                    path,
                    "",
                    format!("is not a strategic merge patch of a pod: {error}"),
                )]
            }
        },
        other => vec![FieldError::invalid(
            path,
            other.to_string(),
            "must be an object: a strategic merge patch of the pod",
        )],
    }
}

/// A copy of a strategic merge patch without `$` directives, null (delete) values and list
/// items that only carry directives, so that what remains can be decoded as a pod.
fn without_directives(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(key, value)| !key.starts_with('$') && !value.is_null())
                .map(|(key, value)| (key.clone(), without_directives(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|item| !matches!(item, Value::Object(o) if !o.is_empty() && o.keys().all(|k| k.starts_with('$'))))
                .filter(|item| !item.is_null())
                .map(without_directives)
                .collect(),
        ),
        other => other.clone(),
    }
}
