//! Field errors phrased the way kube-apiserver's `field` package phrases them, shared by the
//! validations of custom resources and of CustomResourceDefinitions.

use kruise_machinery::field::{ErrorType, FieldError, FieldPath};
use serde_json::Value;

use crate::semantics::jsonpath::gofmt;

/// A `Too long` error (kube's `field.TooLong`). `kruise_machinery::field::ErrorType` has no `TooLong`
/// kind yet, so the closest kind (`Invalid`) carries kube's detail text.
pub(super) fn too_long(path: &FieldPath, max: i64) -> FieldError {
    let unit = if max == 1 { "byte" } else { "bytes" };
    FieldError {
        kind: ErrorType::TooLong,
        path: path.clone(),
        value: None,
        detail: format!("may not be more than {max} {unit}"),
    }
}

/// A `Too many` error (kube's `field.TooMany`), mapped like [`too_long`].
pub(super) fn too_many(path: &FieldPath, actual: i64, max: i64) -> FieldError {
    let unit = if max == 1 { "item" } else { "items" };
    FieldError {
        kind: ErrorType::TooMany,
        path: path.clone(),
        value: (actual >= 0).then(|| actual.to_string()),
        detail: format!("must have at most {max} {unit}"),
    }
}

pub(super) fn invalid_value(path: &FieldPath, value: &Value, detail: impl Into<String>) -> FieldError {
    FieldError {
        kind: ErrorType::Invalid,
        path: path.clone(),
        value: Some(gofmt::field_value(value)),
        detail: detail.into(),
    }
}

pub(super) fn invalid_str(path: &FieldPath, value: &str, detail: impl Into<String>) -> FieldError {
    FieldError::invalid(path, gofmt::quote(value), detail)
}

pub(super) fn not_supported(path: &FieldPath, value: &str, supported: &[&str]) -> FieldError {
    let list = supported.iter().map(|s| gofmt::quote(s)).collect::<Vec<_>>().join(", ");
    FieldError {
        kind: ErrorType::NotSupported,
        path: path.clone(),
        value: Some(gofmt::quote(value)),
        detail: if supported.is_empty() { String::new() } else { format!("supported values: {list}") },
    }
}
