//! The OpenAPI v2 document in its protobuf form (gnostic's `openapi.v2.Document`,
//! `application/com.github.proto-openapi.spec.v2.v1.0+protobuf`), which kubectl asks for before
//! client-side validation; converted from the JSON document `openapi::v2` builds.
//!
//! Vendor extensions (`x-kubernetes-group-version-kind`, `x-kubernetes-action`...) are carried
//! as YAML text, as gnostic does; schema keywords Swagger 2.0 has no field for (`anyOf`,
//! `nullable`) are left out, as kube-apiserver's v2 document leaves them out.

use serde_json::{Map, Value};

use super::protobuf::wire::{self, FIXED64};

/// The media type of the protobuf form.
pub const MEDIA_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

fn put_string(out: &mut Vec<u8>, number: u32, value: Option<&Value>) {
    if let Some(text) = value.and_then(Value::as_str).filter(|text| !text.is_empty()) {
        wire::put_bytes(out, number, text.as_bytes());
    }
}

fn put_bool(out: &mut Vec<u8>, number: u32, value: Option<&Value>) {
    if value.and_then(Value::as_bool) == Some(true) {
        wire::put_varint_field(out, number, 1);
    }
}

fn put_int(out: &mut Vec<u8>, number: u32, value: Option<&Value>) {
    if let Some(int) = value.and_then(Value::as_i64).filter(|int| *int != 0) {
        wire::put_varint_field(out, number, int as u64);
    }
}

fn put_double(out: &mut Vec<u8>, number: u32, value: Option<&Value>) {
    if let Some(float) = value.and_then(Value::as_f64).filter(|float| *float != 0.0) {
        wire::put_key(out, number, FIXED64);
        out.extend_from_slice(&float.to_bits().to_le_bytes());
    }
}

/// gnostic `Any`: the value as YAML text.
fn any(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let yaml = serde_yaml::to_string(value).unwrap_or_default();
    wire::put_bytes(&mut out, 2, yaml.as_bytes());
    out
}

/// `NamedAny` entries for the `x-` keys of an object.
fn vendor_extensions(out: &mut Vec<u8>, number: u32, object: &Map<String, Value>) {
    for (key, value) in object.iter().filter(|(key, _)| key.starts_with("x-")) {
        let mut named = Vec::new();
        wire::put_bytes(&mut named, 1, key.as_bytes());
        wire::put_bytes(&mut named, 2, &any(value));
        wire::put_bytes(out, number, &named);
    }
}

fn named(name: &str, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    wire::put_bytes(&mut out, 1, name.as_bytes());
    wire::put_bytes(&mut out, 2, value);
    out
}

/// gnostic `Schema`.
fn schema(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let Some(object) = value.as_object() else { return out };
    let get = |key: &str| object.get(key);
    put_string(&mut out, 1, get("$ref"));
    put_string(&mut out, 2, get("format"));
    put_string(&mut out, 3, get("title"));
    put_string(&mut out, 4, get("description"));
    if let Some(default) = get("default") {
        wire::put_bytes(&mut out, 5, &any(default));
    }
    put_double(&mut out, 6, get("multipleOf"));
    put_double(&mut out, 7, get("maximum"));
    put_bool(&mut out, 8, get("exclusiveMaximum"));
    put_double(&mut out, 9, get("minimum"));
    put_bool(&mut out, 10, get("exclusiveMinimum"));
    for (number, key) in [(11, "maxLength"), (12, "minLength")] {
        put_int(&mut out, number, get(key));
    }
    put_string(&mut out, 13, get("pattern"));
    for (number, key) in [(14, "maxItems"), (15, "minItems")] {
        put_int(&mut out, number, get(key));
    }
    put_bool(&mut out, 16, get("uniqueItems"));
    for (number, key) in [(17, "maxProperties"), (18, "minProperties")] {
        put_int(&mut out, number, get(key));
    }
    for required in get("required").and_then(Value::as_array).into_iter().flatten() {
        put_string(&mut out, 19, Some(required));
    }
    for item in get("enum").and_then(Value::as_array).into_iter().flatten() {
        wire::put_bytes(&mut out, 20, &any(item));
    }
    match get("additionalProperties") {
        Some(Value::Bool(allowed)) => {
            let mut item = Vec::new();
            wire::put_varint_field(&mut item, 2, u64::from(*allowed));
            wire::put_bytes(&mut out, 21, &item);
        }
        Some(nested @ Value::Object(_)) => {
            let mut item = Vec::new();
            wire::put_bytes(&mut item, 1, &schema(nested));
            wire::put_bytes(&mut out, 21, &item);
        }
        _ => {}
    }
    let types: Vec<&Value> = match get("type") {
        Some(Value::Array(types)) => types.iter().collect(),
        Some(single @ Value::String(_)) => vec![single],
        _ => Vec::new(),
    };
    if !types.is_empty() {
        let mut item = Vec::new();
        for kind in types {
            put_string(&mut item, 1, Some(kind));
        }
        wire::put_bytes(&mut out, 22, &item);
    }
    let items: Vec<&Value> = match get("items") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(single @ Value::Object(_)) => vec![single],
        _ => Vec::new(),
    };
    if !items.is_empty() {
        let mut item = Vec::new();
        for nested in items {
            wire::put_bytes(&mut item, 1, &schema(nested));
        }
        wire::put_bytes(&mut out, 23, &item);
    }
    for nested in get("allOf").and_then(Value::as_array).into_iter().flatten() {
        wire::put_bytes(&mut out, 24, &schema(nested));
    }
    if let Some(properties) = get("properties").and_then(Value::as_object).filter(|p| !p.is_empty()) {
        let mut item = Vec::new();
        for (name, nested) in properties {
            wire::put_bytes(&mut item, 1, &named(name, &schema(nested)));
        }
        wire::put_bytes(&mut out, 25, &item);
    }
    put_string(&mut out, 26, get("discriminator"));
    put_bool(&mut out, 27, get("readOnly"));
    if let Some(example) = get("example") {
        wire::put_bytes(&mut out, 30, &any(example));
    }
    vendor_extensions(&mut out, 31, object);
    out
}

/// gnostic `ParametersItem` of a query parameter.
fn parameter(value: &Value) -> Vec<u8> {
    let get = |key: &str| value.get(key);
    let mut sub_schema = Vec::new();
    put_bool(&mut sub_schema, 1, get("required"));
    put_string(&mut sub_schema, 2, get("in"));
    put_string(&mut sub_schema, 3, get("description"));
    put_string(&mut sub_schema, 4, get("name"));
    put_string(&mut sub_schema, 6, get("type"));
    put_bool(&mut sub_schema, 20, get("uniqueItems"));
    if let Some(object) = value.as_object() {
        vendor_extensions(&mut sub_schema, 23, object);
    }
    // NonBodyParameter's query_parameter_sub_schema (the document has query parameters only).
    let mut non_body = Vec::new();
    wire::put_bytes(&mut non_body, 3, &sub_schema);
    let mut parameter = Vec::new();
    wire::put_bytes(&mut parameter, 2, &non_body);
    let mut item = Vec::new();
    wire::put_bytes(&mut item, 1, &parameter);
    item
}

/// gnostic `Operation`.
fn operation(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    put_string(&mut out, 2, value.get("summary"));
    put_string(&mut out, 3, value.get("description"));
    put_string(&mut out, 5, value.get("operationId"));
    for item in value.get("parameters").and_then(Value::as_array).into_iter().flatten() {
        wire::put_bytes(&mut out, 8, &parameter(item));
    }
    if let Some(responses) = value.get("responses").and_then(Value::as_object) {
        let mut codes = Vec::new();
        for (code, response) in responses {
            let mut body = Vec::new();
            put_string(&mut body, 1, response.get("description"));
            if let Some(nested) = response.get("schema").filter(|s| s.is_object()) {
                let mut item = Vec::new();
                wire::put_bytes(&mut item, 1, &schema(nested));
                wire::put_bytes(&mut body, 2, &item);
            }
            let mut response_value = Vec::new();
            wire::put_bytes(&mut response_value, 1, &body);
            wire::put_bytes(&mut codes, 1, &named(code, &response_value));
        }
        wire::put_bytes(&mut out, 9, &codes);
    }
    if let Some(object) = value.as_object() {
        vendor_extensions(&mut out, 13, object);
    }
    out
}

/// The protobuf form of a Swagger 2.0 JSON document.
pub fn v2_document(document: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    put_string(&mut out, 1, document.get("swagger"));
    if let Some(info) = document.get("info") {
        let mut body = Vec::new();
        put_string(&mut body, 1, info.get("title"));
        put_string(&mut body, 2, info.get("version"));
        wire::put_bytes(&mut out, 2, &body);
    }
    if let Some(paths) = document.get("paths").and_then(Value::as_object) {
        let mut body = Vec::new();
        for (path, item) in paths {
            let mut path_item = Vec::new();
            for (number, verb) in [(2, "get"), (3, "put"), (4, "post"), (5, "delete"), (8, "patch")] {
                if let Some(op) = item.get(verb) {
                    wire::put_bytes(&mut path_item, number, &operation(op));
                }
            }
            wire::put_bytes(&mut body, 2, &named(path, &path_item));
        }
        wire::put_bytes(&mut out, 8, &body);
    }
    if let Some(definitions) = document.get("definitions").and_then(Value::as_object) {
        let mut body = Vec::new();
        for (name, definition) in definitions {
            wire::put_bytes(&mut body, 1, &named(name, &schema(definition)));
        }
        wire::put_bytes(&mut out, 9, &body);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn schemas_keep_types_properties_and_extensions() {
        let bytes = schema(&json!({
            "type": "object",
            "required": ["spec"],
            "properties": {"spec": {"type": "integer", "minimum": 1}},
            "additionalProperties": false,
            "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "Widget", "version": "v1"}],
            "anyOf": [{"type": "string"}],
        }));
        let fields = wire::fields(&bytes).unwrap();
        let numbers: Vec<u32> = fields.iter().map(|(number, _)| *number).collect();
        assert_eq!(numbers, vec![19, 21, 22, 25, 31]);
        let Some((_, wire::Raw::Bytes(extension))) = fields.last() else { panic!("extension") };
        let text = String::from_utf8_lossy(extension);
        assert!(text.contains("x-kubernetes-group-version-kind") && text.contains("kind: Widget"), "{text}");
        let document = v2_document(
            &json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.34.0"}, "paths": {}, "definitions": {}}),
        );
        assert_eq!(&document[..5], &[0x0a, 0x03, b'2', b'.', b'0']);
    }
}
