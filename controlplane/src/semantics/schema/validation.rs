//! Validation of custom resources against their CRD's schema: the entry points, which run the
//! OpenAPI validator (`openapi`) and then the invariants kube checks besides the OpenAPI schema
//! (embedded resources, uniqueness in `x-kubernetes-list-type` sets and maps).

use std::collections::HashMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use kruise_machinery::field::{ErrorList, FieldError, FieldPath};
use serde_json::{Map, Value};

use super::{
    accessors::{additional_schema, is_embedded, item_schema, list, property},
    field_errors::{invalid_str, invalid_value},
    names, openapi,
};
use crate::semantics::jsonpath::gofmt;

// =============================================================================================

/// Validates against the schema and returns every problem with its path ("spec.replicas"), as
/// kube-apiserver's CRD validation reports them (field.ErrorType + message): type (integer,
/// number, boolean, string, object, array, int-or-string, and the supported string formats such
/// as date-time), required, enum, pattern, minimum/maximum (+exclusive), multipleOf,
/// minLength/maxLength, minItems/maxItems, minProperties/maxProperties, nullable,
/// additionalProperties, oneOf/anyOf/allOf/not used as value validation, then the invariants kube
/// checks besides the OpenAPI schema: embedded resources (`apiVersion`/`kind` present and valid)
/// and `x-kubernetes-list-type` set/map uniqueness (`Duplicate value`). Metadata at the root is
/// not validated here beyond what the schema declares (the caller validates ObjectMeta).
///
/// Messages read exactly like kube-apiserver's, e.g. `spec.replicas: Invalid value: "string":
/// spec.replicas in body must be of type integer: "string"`. Errors kube reports without a path
/// (a failed `anyOf` at the root) have the path `<nil>`, as kube prints them.
pub fn validate(object: &Value, schema: &JSONSchemaProps) -> ErrorList {
    validate_at(object, schema, None)
}

/// [`validate`] for a value found under `base` (the `status` of a `/status` update, validated
/// against the schema of `status` alone, as kube-apiserver does): error paths are prefixed with
/// `base` while messages keep the path relative to the value (`replicas in body must be ...`).
pub fn validate_at(value: &Value, schema: &JSONSchemaProps, base: Option<&FieldPath>) -> ErrorList {
    let outcome = openapi::validate(value, schema, "");
    let mut errors = openapi::to_field_errors(&outcome, base);
    let root = base.cloned().unwrap_or_default();
    embedded_resources(&root, value, schema, &mut errors);
    if let Value::Object(map) = value {
        errors.extend(list_sets_and_maps(&root, schema, map));
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// Invariants kube validates besides the OpenAPI schema
// ---------------------------------------------------------------------------------------------

fn embedded_resources(path: &FieldPath, value: &Value, s: &JSONSchemaProps, errors: &mut ErrorList) {
    match value {
        Value::Object(map) => {
            if is_embedded(s) {
                validate_embedded_resource(path, map, errors);
            }
            for (key, item) in map {
                if let Some(prop) = property(s, key) {
                    embedded_resources(&path.child(key), item, prop, errors);
                } else if let Some(addl) = additional_schema(s) {
                    embedded_resources(&path.key(key), item, addl, errors);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_s) = item_schema(s) {
                for (index, item) in items.iter().enumerate() {
                    embedded_resources(&path.index(index), item, item_s, errors);
                }
            }
        }
        _ => {}
    }
}

fn validate_embedded_resource(path: &FieldPath, map: &Map<String, Value>, errors: &mut ErrorList) {
    if !map.contains_key("apiVersion") {
        errors.push(FieldError::required(&path.child("apiVersion"), ""));
    }
    if !map.contains_key("kind") {
        errors.push(FieldError::required(&path.child("kind"), ""));
    }
    for (key, value) in map {
        let field = path.child(key);
        match key.as_str() {
            "apiVersion" => match value {
                Value::String(v) if v.is_empty() => errors.push(invalid_str(&field, v, "must not be empty")),
                Value::String(v) if v.matches('/').count() > 1 => {
                    errors.push(invalid_str(&field, v, format!("unexpected GroupVersion string: {v}")));
                }
                Value::String(_) => {}
                other => errors.push(invalid_value(&field, other, "must be a string")),
            },
            "kind" => match value {
                Value::String(v) if v.is_empty() => errors.push(invalid_str(&field, v, "must not be empty")),
                Value::String(v) => {
                    let problems = names::dns1035_label(&v.to_lowercase());
                    if !problems.is_empty() {
                        errors.push(invalid_str(
                            &field,
                            v,
                            format!(
                                "may have mixed case, but should otherwise match: {}",
                                problems.join(",")
                            ),
                        ));
                    }
                }
                other => errors.push(invalid_value(&field, other, "must be a string")),
            },
            "metadata" => match value {
                Value::Object(meta) => {
                    for name_field in ["name", "generateName"] {
                        if let Some(Value::String(name)) = meta.get(name_field) {
                            for problem in names::path_segment_name(name, name_field == "generateName") {
                                errors.push(invalid_str(&field.child(name_field), name, problem));
                            }
                        }
                    }
                    if let Some(Value::String(namespace)) = meta.get("namespace")
                        && !namespace.is_empty()
                    {
                        for problem in names::dns1123_label(namespace) {
                            errors.push(invalid_str(&field.child("namespace"), namespace, problem));
                        }
                    }
                }
                Value::Null => {}
                other => errors.push(invalid_value(&field, other, "must be an object")),
            },
            _ => {}
        }
    }
}

fn list_sets_and_maps(path: &FieldPath, s: &JSONSchemaProps, map: &Map<String, Value>) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(addl) = additional_schema(s) {
        for (key, value) in map {
            errors.extend(list_value(&path.key(key), addl, value));
        }
    }
    if s.properties.is_some() {
        for (key, value) in map {
            if let Some(prop) = property(s, key) {
                errors.extend(list_value(&path.child(key), prop, value));
            }
        }
    }
    errors
}

fn list_value(path: &FieldPath, s: &JSONSchemaProps, value: &Value) -> ErrorList {
    match value {
        Value::Array(items) => list_array(path, s, items),
        Value::Object(map) => list_sets_and_maps(path, s, map),
        _ => ErrorList::new(),
    }
}

/// A key that distinguishes values the way Go's map keys and JSON encoding do (an integer and a
/// float with the same value are different set members).
fn identity(value: &Value) -> String {
    match value {
        Value::Number(n) if n.is_f64() => format!("f:{}", gofmt::json(value)),
        _ => gofmt::json(value),
    }
}

/// Indices of the second occurrence of every repeated key (later repetitions are not reported).
fn second_occurrences(keys: &[String]) -> Vec<usize> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut result = Vec::new();
    for (index, key) in keys.iter().enumerate() {
        let count = seen.entry(key.as_str()).or_insert(0);
        *count += 1;
        if *count == 2 {
            result.push(index);
        }
    }
    result
}

fn list_array(path: &FieldPath, s: &JSONSchemaProps, items: &[Value]) -> ErrorList {
    let mut errors = ErrorList::new();
    match s.x_kubernetes_list_type.as_deref() {
        Some("set") if items.len() > 1 => {
            let keys: Vec<String> = items.iter().map(identity).collect();
            for index in second_occurrences(&keys) {
                errors.push(FieldError::duplicate(&path.index(index), gofmt::field_value(&items[index])));
            }
        }
        Some("map") => errors.extend(list_map(path, s, items)),
        _ => {}
    }
    if let Some(item_s) = item_schema(s) {
        for (index, item) in items.iter().enumerate() {
            errors.extend(list_value(&path.index(index), item_s, item));
        }
    }
    errors
}

fn list_map(path: &FieldPath, s: &JSONSchemaProps, items: &[Value]) -> ErrorList {
    for (index, item) in items.iter().enumerate() {
        if !item.is_null() && !item.is_object() {
            return vec![invalid_value(
                &path.index(index),
                item,
                "must be an object for an array of list-type map",
            )];
        }
    }
    if items.len() <= 1 {
        return ErrorList::new();
    }
    let key_fields = list(&s.x_kubernetes_list_map_keys);
    let key_maps: Vec<Value> = items
        .iter()
        .map(|item| {
            let mut key = Map::new();
            if let Value::Object(map) = item {
                for field in key_fields {
                    if let Some(v) = map.get(field) {
                        key.insert(field.clone(), v.clone());
                    }
                }
            }
            Value::Object(key)
        })
        .collect();
    let identities: Vec<String> = if key_fields.len() == 1 {
        // A missing key is its own "unspecified" value, distinct from every real value.
        key_maps
            .iter()
            .map(|k| match k.get(&key_fields[0]) {
                Some(v) => identity(v),
                None => "\u{0}unspecified".to_string(),
            })
            .collect()
    } else {
        key_maps.iter().map(identity).collect()
    };
    second_occurrences(&identities)
        .into_iter()
        .map(|index| FieldError::duplicate(&path.index(index), gofmt::json(&key_maps[index])))
        .collect()
}
