//! Validation of names, labels, annotations and label selectors (Kubernetes apimachinery rules).

use std::{collections::BTreeMap, sync::LazyLock};

use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{LabelSelector, ObjectMeta},
    util::intstr::IntOrString,
};
use regex::Regex;

use crate::{
    field::{ErrorList, FieldError, FieldPath, quoted},
    intstr::parse_int_or_percent,
};

#[allow(clippy::unwrap_used)] // constant pattern
static DNS1123_LABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").unwrap());
#[allow(clippy::unwrap_used)] // constant pattern
static DNS1123_SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$").unwrap()
});
#[allow(clippy::unwrap_used)] // constant pattern
static QUALIFIED_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$").unwrap());
#[allow(clippy::unwrap_used)] // constant pattern
static ENV_VAR_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$").unwrap());

/// Problems with `value` as a DNS-1123 label (container, volume, port names).
pub fn dns1123_label_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    if !DNS1123_LABEL.is_match(value) {
        problems.push(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must \
             start and end with an alphanumeric character"
                .to_string(),
        );
    }
    problems
}

/// Problems with `value` as a DNS-1123 subdomain (object names).
pub fn dns1123_subdomain_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 253 {
        problems.push("must be no more than 253 characters".to_string());
    }
    if !DNS1123_SUBDOMAIN.is_match(value) {
        problems.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', \
             and must start and end with an alphanumeric character"
                .to_string(),
        );
    }
    problems
}

/// Problems with `value` as a qualified name (label and annotation keys: `[prefix/]name`).
pub fn qualified_name_problems(value: &str) -> Vec<String> {
    let (prefix, name) = match value.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, value),
    };
    let mut problems = Vec::new();
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            problems.push("prefix part must be non-empty".to_string());
        } else {
            problems
                .extend(dns1123_subdomain_problems(prefix).into_iter().map(|p| format!("prefix part {p}")));
        }
    }
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else {
        if name.len() > 63 {
            problems.push("name part must be no more than 63 characters".to_string());
        }
        if !QUALIFIED_NAME.is_match(name) {
            problems.push(
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
                 with an alphanumeric character"
                    .to_string(),
            );
        }
    }
    problems
}

/// Problems with `value` as a label value.
pub fn label_value_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !QUALIFIED_NAME.is_match(value) {
        problems.push(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', \
             and must start and end with an alphanumeric character"
                .to_string(),
        );
    }
    problems
}

/// Whether `value` is a valid environment variable name.
pub fn is_env_var_name(value: &str) -> bool {
    ENV_VAR_NAME.is_match(value)
}

/// Validates a map of labels.
pub fn validate_labels(labels: Option<&BTreeMap<String, String>>, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    for (key, value) in labels.into_iter().flatten() {
        for problem in qualified_name_problems(key) {
            errors.push(FieldError::invalid(path, quoted(key), problem));
        }
        for problem in label_value_problems(value) {
            errors.push(FieldError::invalid(&path.key(key), quoted(value), problem));
        }
    }
    errors
}

/// Validates a map of annotations (keys only, plus the 256 KiB total size limit).
pub fn validate_annotations(annotations: Option<&BTreeMap<String, String>>, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut total = 0usize;
    for (key, value) in annotations.into_iter().flatten() {
        total += key.len() + value.len();
        for problem in qualified_name_problems(&key.to_lowercase()) {
            errors.push(FieldError::invalid(path, quoted(key), problem));
        }
    }
    if total > 256 * 1024 {
        errors.push(FieldError::invalid(path, "", "annotations must have at most 262144 bytes"));
    }
    errors
}

/// Validates an object's metadata: a DNS-1123 subdomain name (or generateName), valid labels
/// and annotations.
pub fn validate_object_meta(meta: &ObjectMeta, namespaced: bool) -> ErrorList {
    let path = FieldPath::root("metadata");
    let mut errors = ErrorList::new();
    match (&meta.name, &meta.generate_name) {
        (Some(name), _) if !name.is_empty() => {
            for problem in dns1123_subdomain_problems(name) {
                errors.push(FieldError::invalid(&path.child("name"), quoted(name), problem));
            }
        }
        (_, Some(prefix)) if !prefix.is_empty() => {
            let candidate = format!("{prefix}a");
            for problem in dns1123_subdomain_problems(&candidate) {
                errors.push(FieldError::invalid(&path.child("generateName"), quoted(prefix), problem));
            }
        }
        _ => errors.push(FieldError::required(&path.child("name"), "name or generateName is required")),
    }
    if let Some(namespace) = meta.namespace.as_deref().filter(|ns| !ns.is_empty()) {
        if !namespaced {
            errors.push(FieldError::forbidden(&path.child("namespace"), "not allowed on this type"));
        } else {
            for problem in dns1123_label_problems(namespace) {
                errors.push(FieldError::invalid(&path.child("namespace"), quoted(namespace), problem));
            }
        }
    }
    errors.extend(validate_labels(meta.labels.as_ref(), &path.child("labels")));
    errors.extend(validate_annotations(meta.annotations.as_ref(), &path.child("annotations")));
    errors
}

/// Validates a label selector's syntax.
pub fn validate_label_selector(selector: &LabelSelector, path: &FieldPath) -> ErrorList {
    let mut errors = validate_labels(selector.match_labels.as_ref(), &path.child("matchLabels"));
    for (index, requirement) in selector.match_expressions.iter().flatten().enumerate() {
        let item = path.child("matchExpressions").index(index);
        let values = requirement.values.as_deref().unwrap_or_default();
        match requirement.operator.as_str() {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errors.push(FieldError::required(
                        &item.child("values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errors.push(FieldError::forbidden(
                        &item.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            other => errors.push(FieldError::not_supported(
                &item.child("operator"),
                other,
                &["In", "NotIn", "Exists", "DoesNotExist"],
            )),
        }
        for problem in qualified_name_problems(&requirement.key) {
            errors.push(FieldError::invalid(&item.child("key"), quoted(&requirement.key), problem));
        }
    }
    errors
}

/// Validates an int-or-percent field: a non-negative count or a `N%` percentage.
pub fn validate_int_or_percent(value: &IntOrString, path: &FieldPath) -> ErrorList {
    let display = crate::intstr::display(value);
    match parse_int_or_percent(value) {
        Err(error) => {
            vec![FieldError::invalid(path, display, format!("must be an integer or percentage: {error}"))]
        }
        Ok(crate::intstr::IntOrPercent::Int(count)) if count < 0 => {
            vec![FieldError::invalid(path, display, "must be greater than or equal to 0")]
        }
        Ok(crate::intstr::IntOrPercent::Percent(percent)) if percent < 0.0 => {
            vec![FieldError::invalid(path, display, "must be greater than or equal to 0")]
        }
        Ok(_) => Vec::new(),
    }
}

/// Error when a numeric field is negative.
pub fn validate_non_negative(value: i64, path: &FieldPath) -> ErrorList {
    if value < 0 {
        vec![FieldError::invalid(path, value, "must be greater than or equal to 0")]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_rfc_1123() {
        assert!(dns1123_subdomain_problems("web-1.example").is_empty());
        assert!(!dns1123_subdomain_problems("Web").is_empty());
        assert!(!dns1123_label_problems("a.b").is_empty());
        assert!(!dns1123_label_problems(&"a".repeat(64)).is_empty());
    }

    #[test]
    fn qualified_names_allow_a_dns_prefix() {
        assert!(qualified_name_problems("apps.kruise.io/state").is_empty());
        assert!(qualified_name_problems("app").is_empty());
        assert!(!qualified_name_problems("/app").is_empty());
        assert!(!qualified_name_problems("Bad_Prefix/app").is_empty());
        assert!(!qualified_name_problems("app-").is_empty());
    }

    #[test]
    fn selector_operators_and_values_agree() {
        let selector = LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                    key: "a".into(),
                    operator: "In".into(),
                    values: None,
                },
                k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                    key: "b".into(),
                    operator: "Exists".into(),
                    values: Some(vec!["x".into()]),
                },
                k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                    key: "c".into(),
                    operator: "Equals".into(),
                    values: None,
                },
            ]),
        };
        let paths: Vec<String> =
            validate_label_selector(&selector, &FieldPath::root("spec").child("selector"))
                .iter()
                .map(|e| e.path.to_string())
                .collect();
        assert_eq!(
            paths,
            [
                "spec.selector.matchExpressions[0].values",
                "spec.selector.matchExpressions[1].values",
                "spec.selector.matchExpressions[2].operator"
            ]
        );
    }

    #[test]
    fn int_or_percent_must_parse_and_be_non_negative() {
        let path = FieldPath::root("x");
        assert!(validate_int_or_percent(&IntOrString::Int(3), &path).is_empty());
        assert!(validate_int_or_percent(&IntOrString::String("25%".into()), &path).is_empty());
        assert_eq!(validate_int_or_percent(&IntOrString::Int(-1), &path).len(), 1);
        assert_eq!(validate_int_or_percent(&IntOrString::String("abc".into()), &path).len(), 1);
        assert_eq!(validate_int_or_percent(&IntOrString::String("-5%".into()), &path).len(), 1);
    }
}
