//! What the built-in workload controllers (Job, ReplicaSet, Deployment) share: finding the
//! objects a controller owns, telling active and ready pods apart, making a pod from a template
//! with its controller reference, and writing a status.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::{
    apiserver::{
        api::Api,
        objects,
        options::{FieldValidation, WriteOptions},
    },
    storage::{CollectionKey, Mutation, ObjectKey},
};

/// Write options of a built-in controller, named as kube-controller-manager names its field
/// managers (`replicaset-controller`, ...).
pub(super) fn write_options(field_manager: &str) -> WriteOptions {
    WriteOptions {
        dry_run: false,
        field_manager: field_manager.into(),
        field_validation: FieldValidation::Ignore,
        force: false,
    }
}

/// The objects of `group`/`resource` in `namespace` with an owner reference to `owner_uid`.
pub(super) fn owned_by(
    api: &Api,
    group: &str,
    resource: &str,
    namespace: &str,
    owner_uid: &str,
) -> Vec<Arc<Value>> {
    let collection =
        CollectionKey { group: group.into(), resource: resource.into(), namespace: Some(namespace.into()) };
    let (all, _) = api.store.list(&collection);
    all.into_iter()
        .filter(|object| objects::owner_references(object).iter().any(|owner| owner.uid == owner_uid))
        .collect()
}

/// The pod's phase (`Pending` when it has none yet).
pub(super) fn pod_phase(pod: &Value) -> &str {
    pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("Pending")
}

/// A pod that counts towards its controller's replicas: not being deleted, not terminal.
pub(super) fn is_pod_active(pod: &Value) -> bool {
    !objects::is_deleting(pod) && !matches!(pod_phase(pod), "Succeeded" | "Failed")
}

/// Whether the pod's `Ready` condition is `True`.
pub(super) fn is_pod_ready(pod: &Value) -> bool {
    ready_condition(pod).is_some_and(|condition| condition["status"] == "True")
}

/// Whether the pod has been Ready for at least `min_ready_seconds` at `now` (unix seconds).
pub(super) fn is_pod_available(pod: &Value, min_ready_seconds: i64, now: i64) -> bool {
    if !is_pod_ready(pod) {
        return false;
    }
    if min_ready_seconds <= 0 {
        return true;
    }
    ready_condition(pod)
        .and_then(|condition| condition.get("lastTransitionTime"))
        .and_then(Value::as_str)
        .and_then(|time| time.parse::<k8s_openapi::jiff::Timestamp>().ok())
        .is_some_and(|since| now - since.as_second() >= min_ready_seconds)
}

fn ready_condition(pod: &Value) -> Option<&Value> {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|conditions| conditions.iter().find(|condition| condition["type"] == "Ready"))
}

/// The current time in unix seconds.
pub(super) fn unix_now() -> i64 {
    k8s_openapi::jiff::Timestamp::now().as_second()
}

/// The controller reference a built-in controller puts on what it makes.
pub(super) fn controller_reference(api_version: &str, kind: &str, owner: &Value) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "name": objects::name(owner).unwrap_or_default(),
        "uid": objects::uid(owner).unwrap_or_default(),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// Creates a pod from `template` (a PodTemplateSpec) named `<generate_name>xxxxx`, owned by
/// `owner_reference`, through the API (admission included, as for any client).
pub(super) async fn create_pod(
    api: &Api,
    namespace: &str,
    template: &Value,
    generate_name: &str,
    owner_reference: Value,
    field_manager: &str,
) -> Result<(), String> {
    let pod_def = api.registry.find("", "v1", "pods").ok_or("pods not served")?;
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": template.get("metadata").cloned().unwrap_or(json!({})),
        "spec": template.get("spec").cloned().unwrap_or(json!({})),
    });
    objects::set_meta(&mut pod, "generateName", Some(json!(generate_name)));
    objects::set_meta(&mut pod, "namespace", Some(json!(namespace)));
    objects::set_meta(&mut pod, "ownerReferences", Some(json!([owner_reference])));
    api.create(&pod_def, "v1", Some(namespace), pod, &write_options(field_manager))
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
}

/// Merges `status` into the stored object's status (fields of `status` replace the stored
/// ones, others stay); no write when nothing changes.
pub(super) fn merge_status(api: &Api, key: &ObjectKey, status: &Value) {
    let _ = api.store.mutate(key, |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        let mut merged = current.get("status").cloned().unwrap_or(json!({}));
        if let (Some(target), Some(source)) = (merged.as_object_mut(), status.as_object()) {
            for (field, value) in source {
                target.insert(field.clone(), value.clone());
            }
        }
        if current.get("status") == Some(&merged) {
            return Ok(Mutation::Keep);
        }
        let mut next = current.clone();
        next["status"] = merged;
        Ok(Mutation::Put(next))
    });
}

/// `spec.replicas` of a workload (1 when absent, as the API defaults it).
pub(super) fn desired_replicas(object: &Value) -> i64 {
    object.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(1).max(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(phase: &str, ready: Option<(&str, &str)>, deleting: bool) -> Value {
        let mut pod = json!({"metadata": {"name": "p"}, "status": {"phase": phase}});
        if let Some((status, since)) = ready {
            pod["status"]["conditions"] =
                json!([{"type": "Ready", "status": status, "lastTransitionTime": since}]);
        }
        if deleting {
            pod["metadata"]["deletionTimestamp"] = json!("2026-12-03T10:00:00Z");
        }
        pod
    }

    #[test]
    fn active_ready_and_available_pods() {
        let since = "2026-12-03T10:00:00Z";
        let at = since.parse::<k8s_openapi::jiff::Timestamp>().unwrap().as_second();
        let cases = [
            // (pod, active, ready, available with minReadySeconds 10 at since+5, at since+10)
            (pod("Running", Some(("True", since)), false), true, true, false, true),
            (pod("Running", Some(("False", since)), false), true, false, false, false),
            (pod("Pending", None, false), true, false, false, false),
            (pod("Running", Some(("True", since)), true), false, true, false, true),
            (pod("Succeeded", None, false), false, false, false, false),
            (pod("Failed", None, false), false, false, false, false),
        ];
        for (pod, active, ready, early, late) in cases {
            assert_eq!(is_pod_active(&pod), active, "{pod}");
            assert_eq!(is_pod_ready(&pod), ready, "{pod}");
            assert_eq!(is_pod_available(&pod, 10, at + 5), early, "{pod}");
            assert_eq!(is_pod_available(&pod, 10, at + 10), late, "{pod}");
            assert_eq!(is_pod_available(&pod, 0, at), ready, "{pod}");
        }
    }
}
