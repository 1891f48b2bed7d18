//! List types of a CRD schema for server-side apply (`x-kubernetes-list-type` and
//! `-list-map-keys` at a path).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

use super::accessors::{additional_schema, item_schema, property, type_of};

/// The list types of a CRD version's schema for server-side apply / strategic handling: for a path
/// like "spec.containers" (lists written as `[]` in the path, e.g. "spec.containers[].ports"; a
/// leading dot is allowed), the declared `x-kubernetes-list-type` and `-list-map-keys`. `None`
/// when the path leads nowhere, to something that is not a list, or to a list without a declared
/// type (which server-side apply treats as `atomic`). Map values are reached through
/// `additionalProperties` by any key name.
pub fn list_type_at(schema: &JSONSchemaProps, path: &str) -> Option<(String, Vec<String>)> {
    let mut current = schema;
    let trimmed = path.strip_prefix('.').unwrap_or(path);
    if !trimmed.is_empty() {
        for segment in trimmed.split('.') {
            let (name, mut depth) = strip_list_markers(segment);
            if !name.is_empty() {
                current = property(current, name).or_else(|| additional_schema(current))?;
            }
            while depth > 0 {
                current = item_schema(current)?;
                depth -= 1;
            }
        }
    }
    if type_of(current) != "array" && item_schema(current).is_none() {
        return None;
    }
    let list_type = current.x_kubernetes_list_type.clone()?;
    Some((list_type, current.x_kubernetes_list_map_keys.clone().unwrap_or_default()))
}

fn strip_list_markers(segment: &str) -> (&str, usize) {
    let mut name = segment;
    let mut depth = 0;
    while let Some(rest) = name.strip_suffix("[]") {
        name = rest;
        depth += 1;
    }
    (name, depth)
}
