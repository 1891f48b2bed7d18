//! Accessors over k8s-openapi's `JSONSchemaProps`, reading absent markers the way the
//! structural schema of kube-apiextensions-apiserver reads them (absent = false, empty, none).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

pub(super) fn is_meta_field(key: &str) -> bool {
    META_FIELDS.contains(&key)
}

pub(super) fn type_of(s: &JSONSchemaProps) -> &str {
    s.type_.as_deref().unwrap_or("")
}

pub(super) fn preserves_unknown(s: &JSONSchemaProps) -> bool {
    s.x_kubernetes_preserve_unknown_fields.unwrap_or(false)
}

pub(super) fn is_embedded(s: &JSONSchemaProps) -> bool {
    s.x_kubernetes_embedded_resource.unwrap_or(false)
}

pub(super) fn is_int_or_string(s: &JSONSchemaProps) -> bool {
    s.x_kubernetes_int_or_string.unwrap_or(false)
}

pub(super) fn is_nullable(s: &JSONSchemaProps) -> bool {
    s.nullable.unwrap_or(false)
}

pub(super) fn item_schema(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(schema)) => Some(schema),
        _ => None,
    }
}

pub(super) fn property<'s>(s: &'s JSONSchemaProps, name: &str) -> Option<&'s JSONSchemaProps> {
    s.properties.as_ref().and_then(|properties| properties.get(name))
}

pub(super) fn has_property(s: &JSONSchemaProps, name: &str) -> bool {
    property(s, name).is_some()
}

pub(super) fn properties(s: &JSONSchemaProps) -> impl Iterator<Item = (&String, &JSONSchemaProps)> {
    s.properties.iter().flatten()
}

/// `additionalProperties` as the structural schema sees it.
pub(super) enum Additional<'s> {
    Absent,
    Bool(bool),
    Schema(&'s JSONSchemaProps),
}

pub(super) fn additional(s: &JSONSchemaProps) -> Additional<'_> {
    match &s.additional_properties {
        None => Additional::Absent,
        Some(JSONSchemaPropsOrBool::Bool(allows)) => Additional::Bool(*allows),
        Some(JSONSchemaPropsOrBool::Schema(schema)) => Additional::Schema(schema),
    }
}

pub(super) fn additional_schema(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match additional(s) {
        Additional::Schema(schema) => Some(schema),
        _ => None,
    }
}

/// The schema's default; a JSON `null` default counts as none, as in kube-apiserver.
pub(super) fn default_of(s: &JSONSchemaProps) -> Option<&Value> {
    s.default.as_ref().map(|json| &json.0).filter(|value| !value.is_null())
}

pub(super) fn list<T>(items: &Option<Vec<T>>) -> &[T] {
    items.as_deref().unwrap_or(&[])
}

pub(super) fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("")
}
