//! Behaviour of `semantics::jsonpath`: the JSONPath dialect of printer columns and
//! `kubectl -o jsonpath`, and the `meta.k8s.io/v1 Table` kube-apiserver serves for `kubectl get`.
//!
//! Expected results were captured from client-go's `util/jsonpath` and apiextensions-apiserver's
//! table convertor (v0.34.4) run on the same inputs.

use std::time::{Duration, SystemTime};

use kruise_controlplane::semantics::jsonpath::{
    Column, JsonPath, JsonPathError, TableOptions, gofmt, human_duration, is_valid_include_object,
    parse_rfc3339, render_table, render_table_with,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn workload() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "resourceVersion": "42",
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "labels": {"crr.apps.kruise.io/node-name": "node-1", "app": "web"}
        },
        "spec": {
            "replicas": 3,
            "ratio": 0.5,
            "big": 1_000_000.0,
            "scheduleStrategy": {"type": "Adaptive"},
            "types": ["Fixed", "Adaptive"],
            "template": {"spec": {"containers": [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "redis:7"}]}}
        },
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}],
            "replicas": 2,
            "nothing": null,
            "flag": true
        }
    })
}

#[test]
fn select_follows_client_go() {
    let object = workload();
    let cases: &[(&str, Value)] = &[
        (".spec.replicas", json!([3])),
        (".metadata.labels.crr\\.apps\\.kruise\\.io/node-name", json!(["node-1"])),
        (".metadata.labels.missing", json!([])),
        (".status.conditions[?(@.type == \"Ready\")].status", json!(["True"])),
        (".status.conditions[?(@.type==\"Nope\")].status", json!([])),
        (".status.conditions[?(@.status)].type", json!(["Ready", "Synced"])),
        // A filter applies to lists only: on a string it is an error, which selects nothing.
        (".spec.scheduleStrategy.type[?(@ == \"Adaptive\")]", json!([])),
        (".spec.types[?(@ == \"Adaptive\")]", json!(["Adaptive"])),
        (".spec.types[?(@ != \"Adaptive\")]", json!(["Fixed"])),
        (".spec.template.spec.containers[*].name", json!(["a", "b"])),
        (".spec.template.spec.containers[0].image", json!(["nginx:1"])),
        (".spec.template.spec.containers[-1].name", json!(["b"])),
        (".spec.template.spec.containers[5].name", json!([])),
        (".spec.template.spec.containers[0:1].name", json!(["a"])),
        (".spec.template.spec.containers[0,1].name", json!(["a", "b"])),
        (".spec.template.spec.containers[?(@.name > \"a\")].image", json!(["redis:7"])),
        (".status.conditions[::2].type", json!(["Ready"])),
        (".status.conditions[0:0]", json!([])),
        ("['spec']['replicas']", json!([3])),
        ("$.spec.replicas", json!([3])),
        (".status.nothing", json!([null])),
        (".status.conditions[?(@.type == 1)].status", json!([])),
        (".spec.replicas[0]", json!([])),
        (".metadata..app", json!(["web"])),
    ];
    for (path, expected) in cases {
        let parsed = JsonPath::parse(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let selected: Vec<Value> = parsed.select(&object).into_iter().cloned().collect();
        assert_eq!(Value::Array(selected), *expected, "path {path}");
    }
}

#[test]
fn evaluation_errors_match_client_go() {
    let object = workload();
    let cases: &[(&str, &str)] = &[
        (".spec.template.spec.containers[5].name", "array index out of bounds: index 5, length 2"),
        (
            ".spec.scheduleStrategy.type[?(@ == \"Adaptive\")]",
            "Adaptive is not array or slice and cannot be filtered",
        ),
        (".status.conditions[?(@.type == 1)].status", "incompatible types for comparison"),
        (".spec.replicas[0]", "int64 is not array or slice"),
    ];
    for (path, message) in cases {
        let parsed = JsonPath::parse(path).expect("valid path");
        assert_eq!(
            parsed.find_results(&object),
            Err(JsonPathError::Eval(message.to_string())),
            "path {path}"
        );
    }
}

#[test]
fn syntax_errors_are_reported() {
    let cases: &[(&str, &str)] = &[
        (".a[", "unterminated array"),
        (".a[?(@.x", "unterminated filter"),
        (".status.conditions[x]", "invalid array index x"),
        ("{.a", "unclosed action"),
        ("{#}", "unrecognized character in action: U+0023 '#'"),
        ("{....a}", "invalid multiple recursive descent"),
    ];
    for (text, message) in cases {
        assert_eq!(JsonPath::parse(text), Err(JsonPathError::Syntax(message.to_string())), "text {text}");
    }
}

#[test]
fn templates_render_like_kubectl() {
    let object = workload();
    let cases: &[(&str, &str)] = &[
        ("{.metadata.name}{\"\\t\"}{.spec.replicas}{\"\\n\"}", "web\t3\n"),
        ("{range .spec.template.spec.containers[*]}{.name}={.image};{end}", "a=nginx:1;b=redis:7;"),
        ("{.spec.replicas} and {.status.replicas}", "3 and 2"),
        ("{.spec.template.spec.containers[*].name}", "a b"),
        ("{.spec.ratio} {.spec.big}", "0.5 1e+06"),
        ("{.status.flag} {.status.nothing}", "true null"),
        ("{.spec.template.spec.containers[0]}", r#"{"image":"nginx:1","name":"a"}"#),
        ("{.metadata.missing}", ""),
    ];
    for (template, expected) in cases {
        let parsed = JsonPath::parse(template).expect("valid template");
        assert_eq!(parsed.render(&object).as_deref(), Ok(*expected), "template {template}");
    }
    let strict = JsonPath::parse("{.metadata.missing}").expect("valid").with_allow_missing_keys(false);
    assert_eq!(strict.render(&object), Err(JsonPathError::Eval("missing is not found".into())));
}

fn column(name: &str, type_: &str, json_path: &str) -> Column {
    Column { name: name.into(), type_: type_.into(), json_path: json_path.into(), ..Column::default() }
}

fn at(text: &str) -> SystemTime {
    let seconds = parse_rfc3339(text).expect("timestamp");
    SystemTime::UNIX_EPOCH + Duration::from_secs(seconds as u64)
}

#[test]
fn table_cells_follow_the_crd_table_convertor() {
    let object = workload();
    let columns = vec![
        column("Replicas", "integer", ".spec.replicas"),
        column("Ratio", "integer", ".spec.ratio"),
        column("Big", "number", ".spec.big"),
        column("Node", "string", ".metadata.labels.crr\\.apps\\.kruise\\.io/node-name"),
        // Only the first match is shown.
        column("Images", "string", ".spec.template.spec.containers[*].image"),
        column("Containers", "string", ".spec.template.spec.containers"),
        column("Nothing", "string", ".status.nothing"),
        column("BigText", "string", ".spec.big"),
        column("Adaptive", "boolean", ".spec.scheduleStrategy.type[?(@ == \"Adaptive\")]"),
        column("Flag", "boolean", ".status.flag"),
        column("Missing", "integer", ".status.missing"),
        column("Ready", "string", ".status.conditions[?(@.type == \"Ready\")].status"),
        column("NotADate", "date", ".metadata.name"),
        column("WrongType", "integer", ".metadata.name"),
        column("Age", "date", ".metadata.creationTimestamp"),
    ];
    let options = TableOptions {
        include_object: "None",
        resource_version: "7",
        continue_token: "",
        remaining_item_count: None,
        now: at("2024-01-03T05:00:00Z"),
        no_headers: false,
    };
    let table = render_table_with(&columns, &[&object], &options);
    assert_eq!(
        table["rows"][0]["cells"],
        json!([
            "web",
            3,
            0,
            1_000_000.0,
            "node-1",
            "nginx:1",
            r#"[{"image":"nginx:1","name":"a"},{"image":"redis:7","name":"b"}]"#,
            "<no value>",
            "1e+06",
            null,
            true,
            null,
            "True",
            "<invalid>",
            null,
            "2d5h"
        ])
    );
    assert_eq!(table["rows"][0]["object"], Value::Null);
}

#[test]
fn tables_have_the_shape_kubectl_expects() {
    let object = workload();
    let columns = vec![
        Column {
            name: "Desired".into(),
            type_: "integer".into(),
            description: "The desired number of pods.".into(),
            json_path: ".spec.replicas".into(),
            ..Column::default()
        },
        Column {
            priority: 1,
            format: "date-time".into(),
            ..column("Age", "date", ".metadata.creationTimestamp")
        },
    ];
    let table = render_table(&columns, &[&object], "Metadata", "100");
    let definitions = json!([
        {"name": "Name", "type": "string", "format": "name", "priority": 0,
         "description": kruise_controlplane::semantics::jsonpath::NAME_COLUMN_DESCRIPTION},
        {"name": "Desired", "type": "integer", "format": "", "priority": 0, "description": "The desired number of pods."},
        {"name": "Age", "type": "date", "format": "date-time", "priority": 1,
         "description": "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp"}
    ]);
    assert_eq!(table["kind"], json!("Table"));
    assert_eq!(table["apiVersion"], json!("meta.k8s.io/v1"));
    assert_eq!(table["metadata"], json!({"resourceVersion": "100"}));
    assert_eq!(table["columnDefinitions"], definitions);
    assert_eq!(
        table["rows"][0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": object["metadata"]})
    );
    assert_eq!(table["rows"][0]["cells"][1], json!(3));

    let full = render_table(&columns, &[&object], "Object", "100");
    assert_eq!(full["rows"][0]["object"], object);
    let empty = render_table(&columns, &[], "", "5");
    assert_eq!(empty["rows"], json!([]));

    let headless = render_table_with(
        &columns,
        &[&object],
        &TableOptions {
            include_object: "",
            resource_version: "",
            continue_token: "next",
            remaining_item_count: Some(3),
            now: SystemTime::now(),
            no_headers: true,
        },
    );
    assert_eq!(headless["columnDefinitions"], Value::Null);
    assert_eq!(headless["metadata"], json!({"continue": "next", "remainingItemCount": 3}));
    assert!(is_valid_include_object("Metadata") && is_valid_include_object(""));
    assert!(!is_valid_include_object("Everything"));
}

#[test]
fn ages_read_like_kubectl() {
    let cases: &[(i64, &str)] = &[
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (200, "3m20s"),
        (600, "10m"),
        (3 * 3600 + 5 * 60, "3h5m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (2 * 86_400 + 3 * 3600, "2d3h"),
        (8 * 86_400, "8d"),
        (3 * 365 * 86_400 + 12 * 86_400, "3y12d"),
        (9 * 365 * 86_400, "9y"),
    ];
    for (seconds, expected) in cases {
        assert_eq!(human_duration(*seconds), *expected, "{seconds}s");
    }
}

#[test]
fn timestamps_parse_as_rfc3339() {
    let cases: &[(&str, Option<i64>)] = &[
        ("1970-01-01T00:00:00Z", Some(0)),
        ("2024-01-01T00:00:00Z", Some(1_704_067_200)),
        ("2024-01-01T02:00:00.123+02:00", Some(1_704_067_200)),
        ("2024-02-30T00:00:00Z", None),
        ("2024-01-01 00:00:00Z", None),
        ("2024-01-01T00:00:00", None),
        ("yesterday", None),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_rfc3339(text), *expected, "{text}");
    }
}

#[test]
fn go_renderings() {
    let floats: &[(f64, &str, &str)] = &[
        (0.5, "0.5", "0.5"),
        (3.0, "3", "3"),
        (123_456.0, "123456", "123456"),
        (1_234_567.0, "1.234567e+06", "1234567"),
        (1e21, "1e+21", "1e+21"),
        (0.0001, "0.0001", "0.0001"),
        (0.00001, "1e-05", "0.00001"),
        (1e-7, "1e-07", "1e-7"),
        (-2.5, "-2.5", "-2.5"),
    ];
    for (value, print, json) in floats {
        assert_eq!(gofmt::float(*value), *print, "fmt of {value}");
        assert_eq!(gofmt::json_float(*value), *json, "json of {value}");
    }
    assert_eq!(gofmt::quote("a\"b\\c\n\u{1}é"), r#""a\"b\\c\n\x01é""#);
    assert_eq!(gofmt::json(&json!({"b": [1, 2.5], "a": "<&>"})), r#"{"a":"\u003c\u0026\u003e","b":[1,2.5]}"#);
    assert_eq!(gofmt::field_value(&json!("x")), r#""x""#);
    assert_eq!(gofmt::field_value(&json!(7)), "7");
    assert_eq!(gofmt::field_value(&json!({"k": null})), r#"{"k":null}"#);
}
