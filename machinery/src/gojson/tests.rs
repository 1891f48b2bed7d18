#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

fn template(value: Value) -> Value {
    marshal(POD_TEMPLATE_SPEC, &value, Types::Base).unwrap()
}

#[test]
fn a_plain_template_gets_what_go_always_writes() {
    let out = template(json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
    }));
    assert_eq!(
        out,
        json!({
            "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.25", "resources": {}}]}
        })
    );
}

#[test]
fn no_template_metadata_and_no_spec_still_write_the_structs() {
    assert_eq!(
        template(json!({})),
        json!({"metadata": {"creationTimestamp": null}, "spec": {"containers": null}})
    );
}

#[test]
fn unknown_and_later_fields_are_dropped_and_empty_values_omitted() {
    let out = template(json!({
        "metadata": {"labels": {}, "annotations": {"a": "<b>&"}, "bogus": 1},
        "spec": {
            "containers": [{"name": "c", "image": "i", "env": [], "ports": [{"containerPort": 80}],
                            "restartPolicyRules": [{"action": "Restart"}], "stdin": false}],
            "hostnameOverride": "h",
            "nodeSelector": {},
            "hostNetwork": false,
            "unknownField": true
        }
    }));
    assert_eq!(
        out,
        json!({
            "metadata": {"creationTimestamp": null, "annotations": {"a": "<b>&"}},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}], "resources": {}}]}
        })
    );
    // The current types keep the 1.34 fields and honour omitzero.
    let current = marshal(
        POD_TEMPLATE_SPEC,
        &json!({"spec": {"hostnameOverride": "h", "containers": []}}),
        Types::Current,
    )
    .unwrap();
    assert_eq!(current, json!({"metadata": {}, "spec": {"hostnameOverride": "h", "containers": []}}));
}

#[test]
fn custom_json_types_take_their_go_form() {
    let out = template(json!({
        "metadata": {"creationTimestamp": "2024-05-01T10:00:00.123+02:00"},
        "spec": {
            "containers": [{
                "name": "c",
                "resources": {"limits": {"cpu": "1000m", "memory": "1024Mi"}, "requests": {"cpu": 0.5, "memory": "1Gi"}},
                "livenessProbe": {"httpGet": {"port": "http"}},
                "readinessProbe": {"tcpSocket": {"port": 8080}}
            }],
            "volumes": [{"name": "cache", "emptyDir": {"sizeLimit": "2048Mi"}}]
        }
    }));
    assert_eq!(out["metadata"]["creationTimestamp"], json!("2024-05-01T08:00:00Z"));
    let container = &out["spec"]["containers"][0];
    assert_eq!(
        container["resources"],
        json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}})
    );
    assert_eq!(container["livenessProbe"], json!({"httpGet": {"port": "http"}}));
    assert_eq!(container["readinessProbe"], json!({"tcpSocket": {"port": 8080}}));
    assert_eq!(out["spec"]["volumes"][0]["emptyDir"], json!({"sizeLimit": "2Gi"}));
}

#[test]
fn preferred_terms_always_carry_their_preference() {
    let out = template(json!({"spec": {"containers": [], "affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]
    }}}}));
    assert_eq!(
        out["spec"]["affinity"],
        json!({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {}}]}})
    );
}

#[test]
fn nulls_read_as_unset_and_map_nulls_as_zero_values() {
    let out = template(json!({
        "metadata": {"labels": {"a": null}, "annotations": null},
        "spec": {"containers": null, "securityContext": null}
    }));
    assert_eq!(
        out,
        json!({"metadata": {"creationTimestamp": null, "labels": {"a": ""}}, "spec": {"containers": null}})
    );
}

#[test]
fn values_of_the_wrong_type_are_errors_with_a_path() {
    let error =
        marshal(POD_TEMPLATE_SPEC, &json!({"spec": {"containers": [{"name": 1}]}}), Types::Base).unwrap_err();
    assert_eq!(error.path, "spec.containers[0].name");
    let error = marshal(
        POD_TEMPLATE_SPEC,
        &json!({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "lots"}}}]}}),
        Types::Base,
    )
    .unwrap_err();
    assert_eq!(error.path, "spec.containers[0].resources.limits[cpu]");
    assert!(
        marshal(POD_TEMPLATE_SPEC, &json!({"spec": {"priority": 3_000_000_000_i64}}), Types::Base).is_err()
    );
    assert!(marshal("no.such/Type", &json!({}), Types::Base).is_err());
}

#[test]
fn untyped_numbers_go_through_float64() {
    let value = untyped(json!({"a": 9_007_199_254_740_993_i64, "b": 30, "c": 1.5, "d": [-7]}));
    assert_eq!(value, json!({"a": 9_007_199_254_740_992_i64, "b": 30, "c": 1.5, "d": [-7]}));
    assert_eq!(to_string(&value), r#"{"a":9007199254740992,"b":30,"c":1.5,"d":[-7]}"#);
}

#[test]
fn micro_times_keep_microseconds() {
    let out = custom(names::MICRO_TIME, Some(&json!("2024-05-01T10:00:00.1234567Z")), "t").unwrap();
    assert_eq!(out, json!("2024-05-01T10:00:00.123456Z"));
    assert_eq!(custom(names::TIME, Some(&json!("0001-01-01T00:00:00Z")), "t").unwrap(), Value::Null);
}

/// The golden fixtures written by upstream's Go code from Kruise manifests
/// (`crds/gojson/generate.sh`, which keeps them next to the Kruise types in
/// `crds/src/gojson/fixtures`): read here as data files only, no Kruise crate is linked.
mod fixtures {
    use std::path::PathBuf;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::quantity::go::{canonical, round_up_milli};

    fn dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crds/src/gojson/fixtures")
    }

    fn read(name: &str) -> Value {
        let text = std::fs::read_to_string(dir().join(name)).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn manifests() -> Vec<Value> {
        let mut names: Vec<String> = std::fs::read_dir(dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json") && n != "quantities.json" && n != "templates.json")
            .collect();
        names.sort();
        names.iter().map(|n| read(n)).collect()
    }

    /// `getPatch` of a template: Go's typed JSON, through `interface{}`, with `$patch`.
    fn revision_data(template: &Value) -> String {
        let mut template = untyped(marshal(POD_TEMPLATE_SPEC, template, Types::Base).unwrap());
        template.as_object_mut().unwrap().insert("$patch".into(), json!("replace"));
        to_string(&json!({"spec": {"template": template}}))
    }

    #[test]
    fn quantities_print_as_go_prints_them() {
        let rows = read("quantities.json");
        let rows = rows.as_array().unwrap();
        assert!(rows.len() > 80);
        for row in rows {
            let input = row["input"].as_str().unwrap();
            match row.get("error").and_then(Value::as_str) {
                Some(message) => {
                    assert_eq!(
                        canonical(input).map_err(|e| e.to_string()),
                        Err(message.to_string()),
                        "{input:?}"
                    );
                }
                None => {
                    assert_eq!(canonical(input).as_deref(), Ok(row["output"].as_str().unwrap()), "{input:?}");
                    assert_eq!(
                        round_up_milli(input).as_deref(),
                        Ok(row["roundedUpMilli"].as_str().unwrap()),
                        "{input:?} rounded up"
                    );
                }
            }
        }
    }

    /// Byte for byte, fields in Go's declaration order.
    #[test]
    fn templates_marshal_as_go_marshals_the_typed_struct() {
        let rows = read("templates.json");
        for row in rows.as_array().unwrap() {
            let name = row["name"].as_str().unwrap();
            let out = marshal(POD_TEMPLATE_SPEC, &row["input"], Types::Base);
            match row.get("output").and_then(Value::as_str) {
                Some(expected) => {
                    let bytes = to_vec_typed(POD_TEMPLATE_SPEC, &out.unwrap());
                    assert_eq!(String::from_utf8(bytes).unwrap(), expected, "{name}");
                }
                None => assert!(out.is_err(), "{name}: Go failed with {}", row["error"]),
            }
        }
    }

    /// Every stored object's template gives upstream's revision data, byte for byte.
    #[test]
    fn stored_templates_give_upstream_revision_data() {
        let fixtures = manifests();
        assert_eq!(fixtures.len(), 16);
        for fixture in fixtures {
            let name = fixture["name"].as_str().unwrap();
            let data = fixture["revision"]["data"].as_str().unwrap();
            assert_eq!(revision_data(&fixture["stored"]["spec"]["template"]), data, "{name} (stored)");
            assert_eq!(
                revision_data(&fixture["controller"]["spec"]["template"]),
                data,
                "{name} (controller)"
            );
            // The data read back (as kube-rs reads it) is the value we compute.
            let parsed: Value = serde_json::from_str(data).unwrap();
            assert_eq!(to_string(&parsed), data, "{name}: Go's bytes are what we write for their value");
        }
    }

    /// Advanced DaemonSet templates get no defaults: the manifest as written gives the data.
    #[test]
    fn daemonset_manifests_give_upstream_revision_data_as_written() {
        for fixture in manifests().iter().filter(|f| f["manifest"]["kind"] == "DaemonSet") {
            let name = fixture["name"].as_str().unwrap();
            let data = fixture["revision"]["data"].as_str().unwrap();
            assert_eq!(revision_data(&fixture["manifest"]["spec"]["template"]), data, "{name}");
        }
    }
}
