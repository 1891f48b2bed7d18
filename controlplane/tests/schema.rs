//! Behaviour of `semantics::schema` as a kubectl user sees it: the exact errors, pruned fields and
//! defaults kube-apiserver 1.34 produces for custom resources and CustomResourceDefinitions.
//!
//! Expected messages were captured from kube-apiserver's own validation code
//! (k8s.io/apiextensions-apiserver v0.34.4) run on the same inputs.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use kruise_controlplane::semantics::schema::{
    apply_defaults, default_crd, list_type_at, prune, validate, validate_at, validate_crd,
};
use kruise_machinery::field::{ErrorList, FieldPath};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn schema(value: Value) -> JSONSchemaProps {
    serde_json::from_value(value).expect("test schema")
}

/// Errors as `Reason|path: message`, sorted (kube's own order follows Go map iteration).
fn rendered(errors: &ErrorList) -> Vec<String> {
    let mut out: Vec<String> = errors.iter().map(|e| format!("{}|{e}", e.kind.reason())).collect();
    out.sort();
    out
}

/// The expected lines, sorted (kube's exact `reason|path: message` strings).
fn as_reported(expected: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = expected.iter().map(|e| e.to_string()).collect();
    out.sort();
    out
}

#[test]
fn validation_reports_what_kube_apiserver_reports() {
    let cases: &[(&str, Value, Value, &[&str])] = &[
        (
            "integer_given_string",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}),
            json!({"spec": {"replicas": "3"}}),
            &[
                r#"FieldValueTypeInvalid|spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
            ],
        ),
        (
            "integer_given_fraction",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}),
            json!({"spec": {"replicas": 1.5}}),
            &[
                r#"FieldValueTypeInvalid|spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number""#,
            ],
        ),
        (
            "integer_accepts_whole_float",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "format": "int32"}}}}}),
            json!({"spec": {"replicas": 2.0}}),
            &[],
        ),
        (
            "boolean_given_string",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"paused": {"type": "boolean"}}}}}),
            json!({"spec": {"paused": "true"}}),
            &[
                r#"FieldValueTypeInvalid|spec.paused: Invalid value: "string": spec.paused in body must be of type boolean: "string""#,
            ],
        ),
        (
            "object_given_array",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"selector": {"type": "object"}}}}}),
            json!({"spec": {"selector": []}}),
            &[
                r#"FieldValueTypeInvalid|spec.selector: Invalid value: "array": spec.selector in body must be of type object: "array""#,
            ],
        ),
        (
            "array_item_types",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}}}}}}),
            json!({"spec": {"args": ["a", 1, true]}}),
            &[
                r#"FieldValueTypeInvalid|spec.args[1]: Invalid value: "integer": spec.args[1] in body must be of type string: "integer""#,
                r#"FieldValueTypeInvalid|spec.args[2]: Invalid value: "boolean": spec.args[2] in body must be of type string: "boolean""#,
            ],
        ),
        (
            "null_for_non_nullable",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"selector": {"type": "object"}}}}}),
            json!({"spec": {"selector": null}}),
            &[
                r#"FieldValueTypeInvalid|spec.selector: Invalid value: "null": spec.selector in body must be of type object: "null""#,
            ],
        ),
        (
            "null_for_nullable",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"selector": {"type": "object", "nullable": true}}}}}),
            json!({"spec": {"selector": null}}),
            &[],
        ),
        (
            "int_or_string_rejects_bool",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"maxSurge": {"x-kubernetes-int-or-string": true}}}}}),
            json!({"spec": {"maxSurge": true}}),
            &[
                r#"FieldValueTypeInvalid|spec.maxSurge: Invalid value: "boolean": spec.maxSurge in body must be of type integer,string: "boolean""#,
            ],
        ),
        (
            "int_or_string_accepts_both",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"a": {"x-kubernetes-int-or-string": true}, "b": {"x-kubernetes-int-or-string": true}}}}}),
            json!({"spec": {"a": 1, "b": "25%"}}),
            &[],
        ),
        (
            "date_time_format",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}}}),
            json!({"spec": {"at": "yesterday"}}),
            &[
                r#"FieldValueTypeInvalid|spec.at: Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday""#,
            ],
        ),
        (
            "date_time_ok",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}}}),
            json!({"spec": {"at": "2024-05-06T07:08:09.5+02:00"}}),
            &[],
        ),
        (
            "unsupported_format_ignored",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"n": {"type": "string", "format": "k8s-short-name"}}}}}),
            json!({"spec": {"n": "Not A Name"}}),
            &[],
        ),
        (
            "required_nested",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"selector": {"type": "object"}, "template": {"type": "object"}}, "required": ["selector", "template"]}}}),
            json!({"spec": {}}),
            &[
                r#"FieldValueRequired|spec.selector: Required value"#,
                r#"FieldValueRequired|spec.template: Required value"#,
            ],
        ),
        (
            "required_root",
            json!({"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object"}}}),
            json!({}),
            &[r#"FieldValueRequired|spec: Required value"#],
        ),
        (
            "enum_string",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"policy": {"type": "string", "enum": ["Always", "Never"]}}}}}),
            json!({"spec": {"policy": "Sometimes"}}),
            &[
                r#"FieldValueNotSupported|spec.policy: Unsupported value: "Sometimes": supported values: "Always", "Never""#,
            ],
        ),
        (
            "enum_integer",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"level": {"type": "integer", "enum": [1, 2]}}}}}),
            json!({"spec": {"level": 3}}),
            &[r#"FieldValueNotSupported|spec.level: Unsupported value: 3: supported values: "1", "2""#],
        ),
        (
            "pattern",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}}}}}),
            json!({"spec": {"name": "Ab1"}}),
            &[
                r#"FieldValueInvalid|spec.name: Invalid value: "Ab1": spec.name in body should match '^[a-z]+$'"#,
            ],
        ),
        (
            "pattern_digits_are_ascii",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"n": {"type": "string", "pattern": "^\\d+$"}}}}}),
            json!({"spec": {"n": "\u{0661}\u{0662}"}}),
            &[r#"FieldValueInvalid|spec.n: Invalid value: "١٢": spec.n in body should match '^\d+$'"#],
        ),
        (
            "minimum",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 0}}}}}),
            json!({"spec": {"replicas": -1}}),
            &[
                r#"FieldValueInvalid|spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"#,
            ],
        ),
        (
            "exclusive_minimum",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 0, "exclusiveMinimum": true}}}}}),
            json!({"spec": {"replicas": 0}}),
            &[
                r#"FieldValueInvalid|spec.replicas: Invalid value: 0: spec.replicas in body should be greater than 0"#,
            ],
        ),
        (
            "maximum_float",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"ratio": {"type": "number", "maximum": 1}}}}}),
            json!({"spec": {"ratio": 1.5}}),
            &[
                r#"FieldValueInvalid|spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than or equal to 1"#,
            ],
        ),
        (
            "exclusive_maximum",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"ratio": {"type": "number", "maximum": 1, "exclusiveMaximum": true}}}}}),
            json!({"spec": {"ratio": 1}}),
            &[r#"FieldValueInvalid|spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1"#],
        ),
        (
            "big_bound_in_go_notation",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "number", "maximum": 1000000.0}}}}}),
            json!({"spec": {"size": 2500000.0}}),
            &[
                r#"FieldValueInvalid|spec.size: Invalid value: 2.5e+06: spec.size in body should be less than or equal to 1e+06"#,
            ],
        ),
        (
            "multiple_of_integer",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"step": {"type": "integer", "multipleOf": 5}}}}}),
            json!({"spec": {"step": 12}}),
            &[
                r#"FieldValueInvalid|spec.step: Invalid value: 12: spec.step in body should be a multiple of 5"#,
            ],
        ),
        (
            "multiple_of_fraction",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"step": {"type": "number", "multipleOf": 0.5}}}}}),
            json!({"spec": {"step": 0.75}}),
            &[
                r#"FieldValueInvalid|spec.step: Invalid value: 0.75: spec.step in body should be a multiple of 0.5"#,
            ],
        ),
        (
            "min_length",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"name": {"type": "string", "minLength": 3}}}}}),
            json!({"spec": {"name": "ab"}}),
            &[
                r#"FieldValueInvalid|spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long"#,
            ],
        ),
        (
            "max_length",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}}}}),
            json!({"spec": {"name": "abcd"}}),
            &[r#"FieldValueTooLong|spec.name: Too long: may not be more than 3 bytes"#],
        ),
        (
            "max_length_counts_characters",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}}}}),
            json!({"spec": {"name": "\u{00e9}\u{00e9}\u{00e9}"}}),
            &[],
        ),
        (
            "min_items",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}, "minItems": 2}}}}}),
            json!({"spec": {"args": ["a"]}}),
            &[
                r#"FieldValueInvalid|spec.args: Invalid value: 1: spec.args in body should have at least 2 items"#,
            ],
        ),
        (
            "max_items",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"args": {"type": "array", "items": {"type": "string"}, "maxItems": 1}}}}}),
            json!({"spec": {"args": ["a", "b"]}}),
            &[r#"FieldValueTooMany|spec.args: Too many: 2: must have at most 1 item"#],
        ),
        (
            "min_properties",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"labels": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "string"}}}}}}),
            json!({"spec": {"labels": {}}}),
            &[
                r#"FieldValueInvalid|spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties"#,
            ],
        ),
        (
            "max_properties",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"labels": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}}}}}}),
            json!({"spec": {"labels": {"a": "1", "b": "2"}}}),
            &[r#"FieldValueTooMany|spec.labels: Too many: 2: must have at most 1 item"#],
        ),
        (
            "additional_properties_schema",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}}),
            json!({"spec": {"labels": {"a": 1}}}),
            &[
                r#"FieldValueTypeInvalid|spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer""#,
            ],
        ),
        (
            "additional_properties_false",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"opts": {"type": "object", "additionalProperties": false}}}}}),
            json!({"spec": {"opts": {"x": 1}}}),
            &[
                r#"FieldValueInvalid|spec.opts: Invalid value: "x": spec.opts.x in body is a forbidden property"#,
            ],
        ),
        (
            "one_of_none",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}}}),
            json!({"spec": {}}),
            &[
                r#"FieldValueInvalid|<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found none valid"#,
                r#"FieldValueRequired|spec.a: Required value"#,
            ],
        ),
        (
            "one_of_both",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}}}),
            json!({"spec": {"a": "1", "b": "2"}}),
            &[
                r#"FieldValueInvalid|<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives"#,
            ],
        ),
        (
            "any_of_none",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}}}),
            json!({"spec": {}}),
            &[
                r#"FieldValueInvalid|<nil>: Invalid value: "": "spec" must validate at least one schema (anyOf)"#,
                r#"FieldValueRequired|spec.a: Required value"#,
            ],
        ),
        (
            "all_of",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"s": {"type": "string", "allOf": [{"maxLength": 2}, {"pattern": "^a"}]}}}}}),
            json!({"spec": {"s": "bcd"}}),
            &[
                r#"FieldValueInvalid|<nil>: Invalid value: "": "spec.s" must validate all the schemas (allOf). None validated"#,
                r#"FieldValueInvalid|spec.s: Invalid value: "bcd": spec.s in body should match '^a'"#,
                r#"FieldValueTooLong|spec.s: Too long: may not be more than 2 bytes"#,
            ],
        ),
        (
            "not",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"s": {"type": "string", "not": {"enum": ["forbidden"]}}}}}}),
            json!({"spec": {"s": "forbidden"}}),
            &[r#"FieldValueInvalid|<nil>: Invalid value: "": "spec.s" must not validate the schema (not)"#],
        ),
        (
            "root_any_of_has_nil_path",
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            json!({}),
            &[
                r#"FieldValueInvalid|<nil>: Invalid value: "": "" must validate at least one schema (anyOf)"#,
                r#"FieldValueRequired|a: Required value"#,
            ],
        ),
        (
            "list_type_set_duplicates",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}}}}}),
            json!({"spec": {"finalizers": ["a", "b", "a", "b", "a"]}}),
            &[
                r#"FieldValueDuplicate|spec.finalizers[2]: Duplicate value: "a""#,
                r#"FieldValueDuplicate|spec.finalizers[3]: Duplicate value: "b""#,
            ],
        ),
        (
            "list_type_map_duplicates",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"containers": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}}),
            json!({"spec": {"containers": [{"name": "a"}, {"name": "a"}, {}, {}]}}),
            &[
                r#"FieldValueDuplicate|spec.containers[1]: Duplicate value: {"name":"a"}"#,
                r#"FieldValueDuplicate|spec.containers[3]: Duplicate value: {}"#,
            ],
        ),
        (
            "list_type_map_two_keys",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"], "items": {"type": "object", "properties": {"port": {"type": "integer"}, "protocol": {"type": "string"}}}}}}}}),
            json!({"spec": {"ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}, {"port": 80, "protocol": "TCP"}]}}),
            &[r#"FieldValueDuplicate|spec.ports[2]: Duplicate value: {"port":80,"protocol":"TCP"}"#],
        ),
        (
            "list_type_map_needs_objects",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"containers": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}}),
            json!({"spec": {"containers": [{"name": "a"}, "b"]}}),
            &[
                r#"FieldValueInvalid|spec.containers[1]: Invalid value: "b": must be an object for an array of list-type map"#,
                r#"FieldValueTypeInvalid|spec.containers[1]: Invalid value: "string": spec.containers[1] in body must be of type object: "string""#,
            ],
        ),
        (
            "embedded_resource_needs_type_meta",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"resource": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}}}),
            json!({"spec": {"resource": {"metadata": {"name": "a/b"}}}}),
            &[
                r#"FieldValueInvalid|spec.resource.metadata.name: Invalid value: "a/b": may not contain '/'"#,
                r#"FieldValueRequired|spec.resource.apiVersion: Required value"#,
                r#"FieldValueRequired|spec.resource.kind: Required value"#,
            ],
        ),
        (
            "embedded_resource_kind_format",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"resource": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}}}),
            json!({"spec": {"resource": {"apiVersion": "a/b/c", "kind": "Config_Map"}}}),
            &[
                r#"FieldValueInvalid|spec.resource.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
                r#"FieldValueInvalid|spec.resource.kind: Invalid value: "Config_Map": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
            ],
        ),
    ];
    for (name, schema_json, object, expected) in cases {
        let errors = validate(object, &schema(schema_json.clone()));
        assert_eq!(rendered(&errors), as_reported(expected), "case {name}");
    }
}

#[test]
fn string_formats_are_checked_like_kube() {
    let cases: &[(&str, &str, bool)] = &[
        ("date-time", "2024-01-02T03:04:05Z", true),
        ("date-time", "2024-01-02T03:04:05.123+02:00", true),
        ("date-time", "2024-01-02t03:04:05z", true),
        ("date-time", "2024-01-02", false),
        ("date-time", "2024-13-02T03:04:05Z", false),
        ("date", "2024-02-29", true),
        ("date", "2023-02-29", false),
        ("duration", "1h30m", true),
        ("duration", "1.5h", true),
        ("duration", "3 days", true),
        ("duration", "-1m30s", true),
        ("duration", "5x", false),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", true),
        ("uuid", "123e4567", false),
        ("ipv4", "10.0.0.1", true),
        ("ipv4", "010.0.0.1", true),
        ("ipv4", "::1", false),
        ("ipv6", "fe80::1", true),
        ("ipv6", "10.0.0.1", false),
        ("cidr", "10.0.0.0/8", true),
        ("cidr", "10.0.0.0/33", false),
        ("mac", "01:23:45:67:89:ab", true),
        ("mac", "0123.4567.89ab", true),
        ("mac", "0123456789ab", true),
        ("mac", "01:23", false),
        ("hostname", "example.com", true),
        ("hostname", "-bad", false),
        ("byte", "aGVsbG8=", true),
        ("byte", "hello", false),
        ("email", "Bob <bob@example.com>", true),
        ("email", "bob", false),
        ("uri", "https://example.com/x", true),
        ("uri", "/relative", true),
        ("uri", "relative", false),
        ("int32", "anything goes: unsupported formats are ignored", true),
        ("password", "anything", true),
    ];
    for (format, value, valid) in cases {
        let s = schema(json!({"type": "object", "properties": {"v": {"type": "string", "format": format}}}));
        let errors = validate(&json!({"v": value}), &s);
        let expected = if *valid {
            Vec::new()
        } else {
            vec![format!(
                r#"FieldValueTypeInvalid|v: Invalid value: {value:?}: v in body must be of type {format}: {value:?}"#
            )]
        };
        assert_eq!(rendered(&errors), expected, "{format} {value}");
    }
}

#[test]
fn errors_render_like_kube() {
    let s = schema(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "minimum": 0},
        "name": {"type": "string", "maxLength": 3}
    }}}}));
    let errors = validate(&json!({"spec": {"replicas": -1, "name": "abcd"}}), &s);
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        vec![
            "spec.name: Too long: may not be more than 3 bytes".to_string(),
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
                .to_string(),
        ]
    );
    assert_eq!(errors[1].path, FieldPath::root("spec").child("replicas"));
    assert_eq!(
        errors[1].message(),
        "Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
    );
}

#[test]
fn status_updates_validate_against_the_status_schema_with_prefixed_paths() {
    let status = schema(json!({"type": "object", "required": ["phase"], "properties": {
        "replicas": {"type": "integer"},
        "phase": {"type": "string"}
    }}));
    let errors = validate_at(&json!({"replicas": "two"}), &status, Some(&FieldPath::root("status")));
    assert_eq!(
        rendered(&errors),
        vec![
            r#"FieldValueRequired|status.phase: Required value"#.to_string(),
            r#"FieldValueTypeInvalid|status.replicas: Invalid value: "string": replicas in body must be of type integer: "string""#.to_string(),
        ]
    );
}

#[test]
fn anyof_reports_the_first_of_equally_close_alternatives() {
    // kube-openapi keeps the failing alternative that matched most; on a tie, the first one.
    let s = schema(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "s": {"type": "string", "anyOf": [{"maxLength": 1}, {"pattern": "^a", "minLength": 5}]}
    }}}}));
    let errors = validate(&json!({"spec": {"s": "bcd"}}), &s);
    assert_eq!(
        rendered(&errors),
        as_reported(&[
            r#"FieldValueInvalid|<nil>: Invalid value: "": "spec.s" must validate at least one schema (anyOf)"#,
            r#"FieldValueTooLong|spec.s: Too long: may not be more than 1 byte"#,
        ])
    );
}

fn workload_schema() -> JSONSchemaProps {
    schema(json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                             "properties": {"typed": {"type": "object", "properties": {"known": {"type": "string"}}}}},
                "containers": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
                "resource": {"type": "object", "x-kubernetes-embedded-resource": true,
                             "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}},
                "raw": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
            }},
            "status": {"type": "object", "properties": {"ready": {"type": "integer"}}}
        }
    }))
}

#[test]
fn prune_drops_undeclared_fields_and_reports_them() {
    let mut object = json!({
        "apiVersion": "apps.example.com/v1", "kind": "Workload",
        "metadata": {"name": "w", "anything": "kept, metadata is coerced separately"},
        "junk": 1,
        "spec": {
            "replicas": 2, "surprise": {"deep": true},
            "template": {"free": {"form": [1, 2]}, "typed": {"known": "k", "unknown": "u"}},
            "containers": [{"name": "a", "image": "nginx"}, {"name": "b"}],
            "labels": {"x": {"v": "1", "w": "2"}},
            "resource": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "labels": {"a": "b"}},
                         "spec": {"size": 1, "color": "red"}, "data": {"k": "v"}},
            "raw": {"apiVersion": "v1", "kind": "Secret", "anything": {"goes": 1}}
        },
        "status": {"ready": 1, "observedGeneration": 3}
    });
    let unknown = prune(&mut object, &workload_schema());
    assert_eq!(
        unknown,
        vec![
            "junk",
            "spec.containers[0].image",
            "spec.labels.x.w",
            "spec.resource.data",
            "spec.resource.spec.color",
            "spec.surprise",
            "spec.template.typed.unknown",
            "status.observedGeneration",
        ]
    );
    assert_eq!(
        object,
        json!({
            "apiVersion": "apps.example.com/v1", "kind": "Workload",
            "metadata": {"name": "w", "anything": "kept, metadata is coerced separately"},
            "spec": {
                "replicas": 2,
                "template": {"free": {"form": [1, 2]}, "typed": {"known": "k"}},
                "containers": [{"name": "a"}, {"name": "b"}],
                "labels": {"x": {"v": "1"}},
                "resource": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "labels": {"a": "b"}},
                             "spec": {"size": 1}},
                "raw": {"apiVersion": "v1", "kind": "Secret", "anything": {"goes": 1}}
            },
            "status": {"ready": 1}
        })
    );
}

#[test]
fn prune_treats_meta_fields_as_ordinary_below_the_root() {
    let s = schema(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "inner": {"type": "object", "properties": {}}
    }}}}));
    let mut object = json!({"spec": {"inner": {"metadata": {"a": 1}, "kind": "K"}}});
    assert_eq!(prune(&mut object, &s), vec!["spec.inner.kind", "spec.inner.metadata"]);
    assert_eq!(object, json!({"spec": {"inner": {}}}));
}

fn defaulting_schema() -> JSONSchemaProps {
    schema(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "default": 1},
        "strategy": {"type": "object", "default": {"type": "RollingUpdate", "junk": 1}, "properties": {
            "type": {"type": "string"},
            "rolling": {"type": "object", "properties": {"maxSurge": {"x-kubernetes-int-or-string": true, "default": "25%"}}}
        }},
        "containers": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"},
            "pullPolicy": {"type": "string", "default": "IfNotPresent"}
        }}},
        "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string", "default": "d"}}}},
        "nullable": {"type": "string", "nullable": true, "default": "n"},
        "plain": {"type": "string"},
        "defaulted": {"type": "string", "default": "z"},
        "names": {"type": "array", "items": {"type": "string", "default": "unnamed"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string", "default": "none"}}
    }}}}))
}

#[test]
fn defaults_fill_absent_fields_in_objects_arrays_and_maps() {
    let mut object = json!({"spec": {
        "containers": [{"name": "a"}, {"name": "b", "pullPolicy": "Always"}],
        "labels": {"x": {}, "y": {"v": "kept"}},
        "strategy": {"rolling": {}}
    }});
    apply_defaults(&mut object, &defaulting_schema());
    assert_eq!(
        object,
        json!({"spec": {
            "replicas": 1,
            "defaulted": "z",
            "nullable": "n",
            "containers": [{"name": "a", "pullPolicy": "IfNotPresent"}, {"name": "b", "pullPolicy": "Always"}],
            "labels": {"x": {"v": "d"}, "y": {"v": "kept"}},
            "strategy": {"rolling": {"maxSurge": "25%"}}
        }})
    );
}

#[test]
fn defaults_are_pruned_and_defaulted_themselves() {
    let mut object = json!({"spec": {}});
    apply_defaults(&mut object, &defaulting_schema());
    // The object default loses its undeclared `junk` field, as kube prunes defaults when it
    // loads the CRD.
    assert_eq!(object["spec"]["strategy"], json!({"type": "RollingUpdate"}));
}

#[test]
fn nulls_of_non_nullable_fields_are_dropped_or_defaulted() {
    let mut object = json!({"spec": {
        "nullable": null, "plain": null, "defaulted": null,
        "names": ["a", null], "annotations": {"a": null, "b": "x"}
    }});
    apply_defaults(&mut object, &defaulting_schema());
    let spec = &object["spec"];
    assert_eq!(spec["nullable"], Value::Null, "nullable fields keep their null");
    assert!(spec.get("plain").is_none(), "a null without default is dropped");
    assert_eq!(spec["defaulted"], json!("z"));
    assert_eq!(spec["names"], json!(["a", "unnamed"]));
    assert_eq!(spec["annotations"], json!({"a": "none", "b": "x"}));
}

#[test]
fn list_types_are_found_through_items_and_maps() {
    let s = schema(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "containers": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                          "items": {"type": "object", "properties": {"containerPort": {"type": "integer"}}}},
                "args": {"type": "array", "items": {"type": "string"}}
            }}},
        "finalizers": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "byZone": {"type": "object", "additionalProperties": {"type": "array", "x-kubernetes-list-type": "atomic",
                                                              "items": {"type": "string"}}}
    }}}}));
    let owned = |t: &str, keys: &[&str]| Some((t.to_string(), keys.iter().map(|k| k.to_string()).collect()));
    assert_eq!(list_type_at(&s, "spec.containers"), owned("map", &["name"]));
    assert_eq!(list_type_at(&s, ".spec.containers"), owned("map", &["name"]));
    assert_eq!(list_type_at(&s, "spec.containers[].ports"), owned("map", &["containerPort", "protocol"]));
    assert_eq!(list_type_at(&s, "spec.finalizers"), owned("set", &[]));
    assert_eq!(list_type_at(&s, "spec.byZone.zone-a"), owned("atomic", &[]));
    assert_eq!(list_type_at(&s, "spec.containers[].args"), None, "no declared type");
    assert_eq!(list_type_at(&s, "spec.missing"), None);
    assert_eq!(list_type_at(&s, "spec"), None, "not a list");
}

#[test]
fn crd_validation_reports_what_kube_apiserver_reports() {
    let cases: &[(&str, Value, &[&str])] = &[
        (
            "valid",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[],
        ),
        (
            "name_must_be_plural_dot_group",
            json!({"metadata": {"name": "gadgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueInvalid|metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group"#,
            ],
        ),
        (
            "names",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "Widgets", "kind": "wid_get", "shortNames": ["W"], "listKind": "wid_get"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueInvalid|metadata.name: Invalid value: "widgets.example.com": must be spec.names.plural+"."+spec.group"#,
                r#"FieldValueInvalid|spec.names.kind: Invalid value: "wid_get": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
                r#"FieldValueInvalid|spec.names.listKind: Invalid value: "wid_get": kind and listKind may not be the same"#,
                r#"FieldValueInvalid|spec.names.listKind: Invalid value: "wid_get": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
                r#"FieldValueInvalid|spec.names.plural: Invalid value: "Widgets": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
                r#"FieldValueInvalid|spec.names.shortNames[0]: Invalid value: "W": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
                r#"FieldValueInvalid|spec.names.singular: Invalid value: "wid_get": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
            ],
        ),
        (
            "group_needs_a_dot",
            json!({"metadata": {"name": "widgets.example"}, "spec": {"group": "example", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueInvalid|spec.group: Invalid value: "example": should be a domain with at least one dot"#,
            ],
        ),
        (
            "scope",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Global", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueNotSupported|spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#,
            ],
        ),
        (
            "no_storage_version",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueInvalid|spec.versions: Invalid value: [{"Name":"v1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must have exactly one version marked as storage version"#,
                r#"FieldValueInvalid|status.storedVersions: Invalid value: null: must have at least one stored version"#,
            ],
        ),
        (
            "version_name",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "V1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueInvalid|spec.version: Invalid value: "V1": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
                r#"FieldValueInvalid|spec.versions[0].name: Invalid value: "V1": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
            ],
        ),
        (
            "schema_required",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[r#"FieldValueRequired|spec.versions[0].schema.openAPIV3Schema: Required value"#],
        ),
        (
            "types_required",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}, "untyped": {"description": "no type"}, "list": {"type": "array"}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueRequired|spec.validation.openAPIV3Schema.properties[spec].properties[list].items: Required value: must be specified"#,
                r#"FieldValueRequired|spec.validation.openAPIV3Schema.properties[spec].properties[untyped].type: Required value: must not be empty for specified object fields"#,
            ],
        ),
        (
            "per_version_schema_paths",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}, {"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}, "extra": {"type": "string"}, "bad": {"type": "str"}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueNotSupported|spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[bad].type: Unsupported value: "str": supported values: "array", "boolean", "integer", "number", "object", "string""#,
            ],
        ),
        (
            "ref_unsupported",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}, "ref": {"$ref": "#/definitions/x"}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueForbidden|spec.validation.openAPIV3Schema.properties[spec].properties[ref].$ref: Forbidden: $ref is not supported"#,
            ],
        ),
        (
            "properties_and_additional_properties",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}, "additionalProperties": {"type": "string"}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueForbidden|spec.validation.openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"#,
            ],
        ),
        (
            "metadata_only_name",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}, "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueForbidden|spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"#,
            ],
        ),
        (
            "default_must_validate",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": "one", "minimum": 0}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueTypeInvalid|spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string""#,
            ],
        ),
        (
            "default_unknown_fields",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}, "strategy": {"type": "object", "properties": {"type": {"type": "string"}}, "default": {"type": "A", "junk": 1}}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueInvalid|spec.validation.openAPIV3Schema.properties[spec].properties[strategy].default: Invalid value: {"junk":1,"type":"A"}: must not have unknown fields"#,
            ],
        ),
        (
            "value_validation_structural",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}, "anyOf": [{"type": "object", "description": "x", "properties": {"nope": {"type": "string"}}}]}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueForbidden|spec.validation.openAPIV3Schema.properties[spec].anyOf[0].description: Forbidden: must be empty to be structural"#,
                r#"FieldValueForbidden|spec.validation.openAPIV3Schema.properties[spec].anyOf[0].properties[nope].type: Forbidden: must be empty to be structural"#,
                r#"FieldValueForbidden|spec.validation.openAPIV3Schema.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural"#,
            ],
        ),
        (
            "list_map_keys",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}, "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "missing"], "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueInvalid|spec.validation.openAPIV3Schema.properties[spec].properties[items].x-kubernetes-list-map-keys: Invalid value: ["name","missing"]: entries must all be names of item properties"#,
                r#"FieldValueRequired|spec.validation.openAPIV3Schema.properties[spec].properties[items].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"#,
            ],
        ),
        (
            "scale_paths",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".status.replicas", "statusReplicasPath": "replicas", "labelSelectorPath": ".metadata.labels"}}}]}}),
            &[
                r#"FieldValueInvalid|spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status"#,
                r#"FieldValueInvalid|spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec"#,
                r#"FieldValueInvalid|spec.subresources.scale.statusReplicasPath: Invalid value: "replicas": must be a simple json path starting with ."#,
            ],
        ),
        (
            "printer_columns",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}, "additionalPrinterColumns": [{"name": "", "type": "int", "format": "weird", "jsonPath": "spec.x"}]}]}}),
            &[
                r#"FieldValueInvalid|spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.x": must be a simple json path starting with ."#,
                r#"FieldValueInvalid|spec.additionalPrinterColumns[0].format: Invalid value: "weird": must be one of byte,date,date-time,double,float,int32,int64,password"#,
                r#"FieldValueInvalid|spec.additionalPrinterColumns[0].type: Invalid value: "int": must be one of boolean,date,integer,number,string"#,
                r#"FieldValueRequired|spec.additionalPrinterColumns[0].name: Required value"#,
            ],
        ),
        (
            "webhook_conversion_needs_config",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}], "conversion": {"strategy": "Webhook"}}}),
            &[
                r#"FieldValueRequired|spec.conversion.conversionReviewVersions: Required value"#,
                r#"FieldValueRequired|spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook"#,
            ],
        ),
        (
            "webhook_conversion_service",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}], "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "", "path": "convert", "port": 70000}}, "conversionReviewVersions": ["v2"]}}}}),
            &[
                r#"FieldValueInvalid|spec.conversion.conversionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1"#,
                r#"FieldValueInvalid|spec.conversion.webhookClientConfig.service.path: Invalid value: "convert": must start with a '/'"#,
                r#"FieldValueInvalid|spec.conversion.webhookClientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive"#,
                r#"FieldValueRequired|spec.conversion.webhookClientConfig.service.name: Required value"#,
            ],
        ),
        (
            "webhook_conversion_url",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}], "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"url": "http://host/convert?x=1"}, "conversionReviewVersions": ["v1"]}}}}),
            &[
                r#"FieldValueInvalid|spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]"#,
                r#"FieldValueInvalid|spec.conversion.webhookClientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL"#,
            ],
        ),
        (
            "none_conversion_with_webhook",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}], "conversion": {"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"]}}}}),
            &[
                r#"FieldValueForbidden|spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook"#,
            ],
        ),
        (
            "conversion_strategy",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}], "conversion": {"strategy": "Magic"}}}),
            &[
                r#"FieldValueNotSupported|spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook""#,
            ],
        ),
        (
            "protected_group",
            json!({"metadata": {"name": "widgets.widgets.k8s.io"}, "spec": {"group": "widgets.k8s.io", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}]}}),
            &[
                r#"FieldValueRequired|metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111"#,
            ],
        ),
        (
            "preserve_unknown_fields",
            json!({"metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"}, "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}, "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}}], "preserveUnknownFields": true}}),
            &[
                r#"FieldValueInvalid|spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"#,
                r#"FieldValueInvalid|spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema"#,
            ],
        ),
    ];
    for (name, crd_json, expected) in cases {
        let crd: CustomResourceDefinition = serde_json::from_value(crd_json.clone()).expect("test CRD");
        assert_eq!(rendered(&validate_crd(&crd)), as_reported(expected), "case {name}");
    }
}

#[test]
fn status_subresource_restricts_the_root_of_the_schema() {
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "minProperties": 1}}}]}
    }))
    .expect("test CRD");
    let errors = validate_crd(&crd);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].path.as_str(), "spec.validation.openAPIV3Schema");
    assert!(errors[0].detail.starts_with("only [Description Type Format Title"), "{}", errors[0]);
    assert!(errors[0].value.as_deref().is_some_and(|v| v.contains(r#""MinProperties":1"#)));
}

#[test]
fn defaults_are_checked_against_the_structural_schema() {
    // kube checks defaults against its structural form of the schema: int-or-string carries no
    // type there, and formats are kept (so an int32 default reports the Go type it decoded to).
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                     "type": "object", "properties": {"spec": {"type": "object", "properties": {
                         "maxSurge": {"x-kubernetes-int-or-string": true, "default": true},
                         "count": {"type": "integer", "format": "int32", "default": 1.5}
                     }}}
                 }}}]}
    }))
    .expect("test CRD");
    assert_eq!(
        rendered(&validate_crd(&crd)),
        vec![
            r#"FieldValueTypeInvalid|spec.validation.openAPIV3Schema.properties[spec].properties[count].default: Invalid value: "float64":  in body must be of type int32: "float64""#
                .to_string()
        ]
    );
}

#[test]
fn crd_defaults_fill_names_and_conversion() {
    let mut crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": []}
    }))
    .expect("test CRD");
    default_crd(&mut crd);
    assert_eq!(crd.spec.names.singular.as_deref(), Some("widget"));
    assert_eq!(crd.spec.names.list_kind.as_deref(), Some("WidgetList"));
    assert_eq!(crd.spec.conversion.map(|c| c.strategy), Some("None".to_string()));
}
