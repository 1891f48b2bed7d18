//! The checks apiextensions-apiserver adds for custom resources with a scale subresource: the
//! value at `specReplicasPath` (on create and update) and at `statusReplicasPath` (also on status
//! updates) must be an integer between 0 and 2^31-1 when present, and `labelSelectorPath`, when
//! set and present, must hold a string. Paths are reported as written in the CRD, leading dot
//! included, as kube-apiserver does.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceSubresourceScale;
use kruise_machinery::field::{ErrorList, FieldError, FieldPath};
use serde_json::Value;

fn at<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    let mut current = object;
    for segment in path.trim_start_matches('.').split('.') {
        current = current.as_object()?.get(segment)?;
    }
    Some(current)
}

fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::Null => "<nil>",
    }
}

fn replicas_errors(object: &Value, path: &str) -> ErrorList {
    let field = FieldPath::root(path);
    let Some(value) = at(object, path).filter(|v| !v.is_null()) else { return Vec::new() };
    match value.as_i64() {
        None => vec![FieldError::invalid(
            &field,
            0,
            format!(
                "{} accessor error: {value} is of the type {}, expected int64",
                path.trim_start_matches('.'),
                go_type(value)
            ),
        )],
        Some(n) if n < 0 => vec![FieldError::invalid(&field, n, "should be a non-negative integer")],
        Some(n) if n > i64::from(i32::MAX) => {
            vec![FieldError::invalid(&field, n, format!("should be less than or equal to {}", i32::MAX))]
        }
        Some(_) => Vec::new(),
    }
}

/// Errors of the spec replicas path (create and update of the main resource).
pub fn spec_errors(object: &Value, scale: &CustomResourceSubresourceScale) -> ErrorList {
    replicas_errors(object, &scale.spec_replicas_path)
}

/// Errors of the status replicas and label selector paths (every write).
pub fn status_errors(object: &Value, scale: &CustomResourceSubresourceScale) -> ErrorList {
    let mut errors = replicas_errors(object, &scale.status_replicas_path);
    if let Some(path) = &scale.label_selector_path
        && let Some(value) = at(object, path).filter(|v| !v.is_null() && !v.is_string())
    {
        errors.push(FieldError::invalid(
            &FieldPath::root(path),
            "\"\"",
            format!(
                "{} accessor error: {value} is of the type {}, expected string",
                path.trim_start_matches('.'),
                go_type(value)
            ),
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn scale() -> CustomResourceSubresourceScale {
        CustomResourceSubresourceScale {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".status.selector".into()),
        }
    }

    #[test]
    fn replicas_must_be_small_non_negative_integers() {
        let cases = [
            (json!({"spec": {"replicas": 3}}), None),
            (json!({"spec": {}}), None),
            (
                json!({"spec": {"replicas": -1}}),
                Some(".spec.replicas: Invalid value: -1: should be a non-negative integer"),
            ),
            (
                json!({"spec": {"replicas": 3_000_000_000_i64}}),
                Some(".spec.replicas: Invalid value: 3000000000: should be less than or equal to 2147483647"),
            ),
            (
                json!({"spec": {"replicas": 1.5}}),
                Some(
                    ".spec.replicas: Invalid value: 0: spec.replicas accessor error: 1.5 is of the type float64, expected int64",
                ),
            ),
        ];
        for (object, expected) in cases {
            let errors = spec_errors(&object, &scale());
            assert_eq!(errors.first().map(ToString::to_string).as_deref(), expected, "{object}");
        }
    }

    #[test]
    fn status_paths_are_checked_too() {
        let bad = json!({"status": {"replicas": -2, "selector": 5}});
        let errors: Vec<String> = status_errors(&bad, &scale()).iter().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].starts_with(".status.replicas: Invalid value: -2"));
        assert!(errors[1].contains("expected string"));
        assert!(status_errors(&json!({"status": {"replicas": 1, "selector": "a=b"}}), &scale()).is_empty());
    }
}
