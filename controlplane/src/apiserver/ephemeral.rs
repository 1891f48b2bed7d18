//! `pods/ephemeralcontainers`, as kube-apiserver serves it: a PUT or PATCH through it writes
//! `spec.ephemeralContainers` and nothing else of the pod, containers may only be added (an
//! existing one may be neither removed nor changed), a pod may not be created with ephemeral
//! containers, and each ephemeral container must pass the container rules plus the fields
//! ephemeral containers may not have (ports, probes, resources, lifecycle, ...).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Container, PodSpec};
use kruise_machinery::{
    field::{ErrorList, FieldError, FieldPath, quoted},
    validation::pod::validate_pod_spec,
};
use serde_json::Value;

/// The subresource's name.
pub const SUBRESOURCE: &str = "ephemeralcontainers";

/// The message upstream gives every field an ephemeral container may not set.
const NOT_FOR_EPHEMERAL: &str = "cannot be set for an Ephemeral Container";

/// Fields of `EphemeralContainerCommon` that ephemeral containers may not set (upstream's allow
/// list, inverted): they would make the debugging container part of the workload.
const FORBIDDEN_FIELDS: &[&str] = &[
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

/// The pod an ephemeralcontainers write proposes: the stored pod with only
/// `spec.ephemeralContainers` taken from the request (as upstream's strategy drops every other
/// change).
pub fn with_ephemeral_containers(current: &Value, proposed: &Value) -> Value {
    let mut object = current.clone();
    let wanted = proposed.pointer("/spec/ephemeralContainers").filter(|v| !v.is_null()).cloned();
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        match wanted {
            Some(list) => {
                spec.insert("ephemeralContainers".into(), list);
            }
            None => {
                spec.remove("ephemeralContainers");
            }
        }
    }
    object
}

/// The field rules of a pod's ephemeral containers (upstream `validateEphemeralContainers`):
/// the container rules, names unique across every container of the pod, a target that is a
/// regular or init container, no field ephemeral containers may not have, no subPath mounts.
pub fn validate_spec(spec: &Value) -> ErrorList {
    let path = FieldPath::root("spec").child("ephemeralContainers");
    let Some(list) = spec.get("ephemeralContainers").and_then(Value::as_array).filter(|l| !l.is_empty())
    else {
        return ErrorList::new();
    };
    let mut errors = ErrorList::new();
    let names = |key: &str| -> Vec<String> {
        spec.get(key)
            .and_then(Value::as_array)
            .map(|l| l.iter().filter_map(|c| c["name"].as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let others: BTreeSet<String> = names("containers").into_iter().chain(names("initContainers")).collect();
    let mut all = others.clone();
    // The container rules, on the common part read as a container.
    let mut as_containers = Vec::new();
    for (index, item) in list.iter().enumerate() {
        let item_path = path.index(index);
        let mut common = item.clone();
        if let Some(map) = common.as_object_mut() {
            map.remove("targetContainerName");
        }
        match serde_json::from_value::<Container>(common) {
            Ok(container) => as_containers.push(container),
            Err(error) => {
                errors.push(FieldError::invalid(&item_path, "", error.to_string()));
                continue;
            }
        }
        let name = item["name"].as_str().unwrap_or_default();
        if !name.is_empty() && !all.insert(name.to_string()) && others.contains(name) {
            errors.push(FieldError::duplicate(&item_path.child("name"), quoted(name)));
        }
        if let Some(target) = item["targetContainerName"].as_str().filter(|t| !t.is_empty())
            && !others.contains(target)
        {
            errors.push(FieldError::not_found(&item_path.child("targetContainerName"), quoted(target)));
        }
        for field in FORBIDDEN_FIELDS {
            if item.get(*field).is_some_and(|value| !is_zero(value)) {
                errors.push(FieldError::forbidden(&item_path.child(field), NOT_FOR_EPHEMERAL));
            }
        }
        for (mount_index, mount) in item["volumeMounts"].as_array().into_iter().flatten().enumerate() {
            for field in ["subPath", "subPathExpr"] {
                if mount[field].as_str().is_some_and(|s| !s.is_empty()) {
                    let mount_path = item_path.child("volumeMounts").index(mount_index).child(field);
                    errors.push(FieldError::forbidden(&mount_path, NOT_FOR_EPHEMERAL));
                }
            }
        }
    }
    let volumes = spec.get("volumes").cloned().and_then(|v| serde_json::from_value(v).ok());
    let as_spec = PodSpec { containers: as_containers, volumes, ..Default::default() };
    let prefix = "spec.containers";
    for error in validate_pod_spec(&as_spec, &FieldPath::root("spec"), &[]) {
        let Some(rest) = error.path.as_str().strip_prefix(prefix) else { continue };
        errors.push(FieldError { path: FieldPath::root(&format!("{}{rest}", path.as_str())), ..error });
    }
    errors
}

/// A value Go would see as its zero value (absent, null, empty object, list or string).
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.values().all(is_zero),
        Value::Array(list) => list.is_empty(),
        Value::String(text) => text.is_empty(),
        _ => false,
    }
}

/// A pod is created without ephemeral containers (they are added through the subresource).
pub fn validate_create(spec: &Value) -> ErrorList {
    match spec.get("ephemeralContainers").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => vec![FieldError::forbidden(
            &FieldPath::root("spec").child("ephemeralContainers"),
            "cannot be set on create",
        )],
        _ => ErrorList::new(),
    }
}

/// An ephemeralcontainers write may only add containers (upstream
/// `ValidatePodEphemeralContainersUpdate`): each existing one must still be there, unchanged;
/// static pods take none.
pub fn validate_update(old: &Value, new: &Value) -> ErrorList {
    if old.pointer("/metadata/annotations/kubernetes.io~1config.mirror").is_some() {
        return vec![FieldError::forbidden(
            &FieldPath::root(""),
            "static pods do not support ephemeral containers",
        )];
    }
    let path = FieldPath::root("spec").child("ephemeralContainers");
    let list = |pod: &Value| pod.pointer("/spec/ephemeralContainers").and_then(Value::as_array).cloned();
    let new_list = list(new).unwrap_or_default();
    let mut errors = ErrorList::new();
    for existing in list(old).unwrap_or_default() {
        let name = existing["name"].as_str().unwrap_or_default();
        match new_list.iter().find(|c| c["name"].as_str() == Some(name)) {
            None => errors.push(FieldError::forbidden(
                &path,
                format!("existing ephemeral containers {} may not be removed\n", quoted(name)),
            )),
            Some(now) if *now != existing => errors.push(FieldError::forbidden(
                &path.key(name),
                format!("existing ephemeral containers {} may not be changed\n", quoted(name)),
            )),
            Some(_) => {}
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn paths(errors: &ErrorList) -> Vec<String> {
        errors.iter().map(|e| format!("{}: {}", e.path.as_str(), e.kind.reason())).collect()
    }

    fn spec(ephemeral: Value) -> Value {
        json!({
            "containers": [{"name": "main", "image": "nginx"}],
            "initContainers": [{"name": "setup", "image": "busybox"}],
            "ephemeralContainers": ephemeral,
        })
    }

    #[test]
    fn field_rules_of_ephemeral_containers() {
        type Case = (&'static str, Value, Vec<&'static str>);
        let cases: Vec<Case> = vec![
            (
                "valid",
                json!([{"name": "debugger", "image": "busybox", "targetContainerName": "main"}]),
                vec![],
            ),
            (
                "target an init container",
                json!([{"name": "d", "image": "busybox", "targetContainerName": "setup"}]),
                vec![],
            ),
            (
                "no name",
                json!([{"image": "busybox"}]),
                vec!["spec.ephemeralContainers[0].name: FieldValueRequired"],
            ),
            (
                "no image",
                json!([{"name": "d"}]),
                vec!["spec.ephemeralContainers[0].image: FieldValueRequired"],
            ),
            (
                "name of a regular container",
                json!([{"name": "main", "image": "busybox"}]),
                vec!["spec.ephemeralContainers[0].name: FieldValueDuplicate"],
            ),
            (
                "two with one name",
                json!([{"name": "d", "image": "busybox"}, {"name": "d", "image": "busybox"}]),
                vec!["spec.ephemeralContainers[1].name: FieldValueDuplicate"],
            ),
            (
                "unknown target",
                json!([{"name": "d", "image": "busybox", "targetContainerName": "nope"}]),
                vec!["spec.ephemeralContainers[0].targetContainerName: FieldValueNotFound"],
            ),
            (
                "ports, probes and resources",
                json!([{"name": "d", "image": "busybox", "ports": [{"containerPort": 80}],
                        "readinessProbe": {"exec": {"command": ["true"]}},
                        "resources": {"limits": {"cpu": "1"}}}]),
                vec![
                    "spec.ephemeralContainers[0].ports: FieldValueForbidden",
                    "spec.ephemeralContainers[0].resources: FieldValueForbidden",
                    "spec.ephemeralContainers[0].readinessProbe: FieldValueForbidden",
                ],
            ),
            (
                "empty resources as Go writes them",
                json!([{"name": "d", "image": "busybox", "resources": {}}]),
                vec![],
            ),
            (
                "subPath mount",
                json!([{"name": "d", "image": "busybox", "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "x"}]}]),
                vec!["spec.ephemeralContainers[0].volumeMounts[0].subPath: FieldValueForbidden"],
            ),
        ];
        for (name, ephemeral, expected) in cases {
            let mut spec = spec(ephemeral);
            if name == "subPath mount" {
                spec["volumes"] = json!([{"name": "v", "emptyDir": {}}]);
            }
            let mut got = paths(&validate_spec(&spec));
            got.sort();
            let mut expected: Vec<String> = expected.into_iter().map(String::from).collect();
            expected.sort();
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn only_additions_pass_an_update() {
        let pod = |list: Value| json!({"metadata": {"name": "p"}, "spec": spec(list)});
        let debugger = json!({"name": "debugger", "image": "busybox"});
        let old = pod(json!([debugger]));
        let cases = [
            ("unchanged", pod(json!([debugger])), vec![]),
            ("added", pod(json!([debugger, {"name": "two", "image": "busybox"}])), vec![]),
            ("removed", pod(json!([])), vec!["spec.ephemeralContainers: FieldValueForbidden"]),
            (
                "changed",
                pod(json!([{"name": "debugger", "image": "alpine"}])),
                vec!["spec.ephemeralContainers[debugger]: FieldValueForbidden"],
            ),
        ];
        for (name, new, expected) in cases {
            assert_eq!(paths(&validate_update(&old, &new)), expected, "{name}");
        }
        let mut static_pod = old.clone();
        static_pod["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
        assert_eq!(paths(&validate_update(&static_pod, &old)), vec![": FieldValueForbidden"]);
    }

    #[test]
    fn creates_refuse_ephemeral_containers() {
        assert_eq!(
            paths(&validate_create(&spec(json!([{"name": "d", "image": "busybox"}])))),
            vec!["spec.ephemeralContainers: FieldValueForbidden"]
        );
        assert!(validate_create(&spec(json!([]))).is_empty());
    }

    #[test]
    fn the_subresource_takes_only_ephemeral_containers() {
        let current = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
        let proposed = json!({
            "metadata": {"labels": {"a": "2"}},
            "spec": {"containers": [{"name": "c", "image": "y"}], "ephemeralContainers": [{"name": "d", "image": "busybox"}]},
        });
        let written = with_ephemeral_containers(&current, &proposed);
        assert_eq!(written["metadata"]["labels"]["a"], "1");
        assert_eq!(written["spec"]["containers"][0]["image"], "x");
        assert_eq!(written["spec"]["ephemeralContainers"][0]["name"], "d");
    }
}
