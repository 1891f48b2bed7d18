//! Subresources with their own request and response types: `scale` (autoscaling/v1 Scale for
//! HPA and `kubectl scale`), `pods/binding` (the scheduler's decision) and `pods/eviction`
//! (deletion that respects PodDisruptionBudgets).

use serde_json::{Value, json};

use super::{
    api::{Api, PatchType},
    errors::ApiError,
    objects,
    options::{DeleteOptions, WriteOptions},
};
use crate::{registry::ResourceDef, semantics::patch, storage::CollectionKey};

/// Paths of the scale subresource: spec replicas, status replicas, label selector.
fn scale_paths(def: &ResourceDef, version: &str) -> (String, String, Option<String>) {
    if let Some(scale) =
        def.crd_version(version).and_then(|v| v.subresources.as_ref()).and_then(|s| s.scale.as_ref())
    {
        return (
            scale.spec_replicas_path.clone(),
            scale.status_replicas_path.clone(),
            scale.label_selector_path.clone(),
        );
    }
    (".spec.replicas".into(), ".status.replicas".into(), None)
}

fn read_path<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    let pointer = format!("/{}", path.trim_start_matches('.').replace('.', "/"));
    object.pointer(&pointer)
}

fn write_path(object: &mut Value, path: &str, value: Value) {
    let mut node = object;
    let parts: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    for (index, part) in parts.iter().enumerate() {
        if !node.is_object() {
            *node = json!({});
        }
        let Some(map) = node.as_object_mut() else { return };
        if index + 1 == parts.len() {
            map.insert(part.to_string(), value);
            return;
        }
        node = map.entry(part.to_string()).or_insert_with(|| json!({}));
    }
}

fn scale_of(def: &ResourceDef, version: &str, object: &Value) -> Value {
    let (spec_path, status_path, selector_path) = scale_paths(def, version);
    let selector = match selector_path {
        Some(path) => read_path(object, &path).and_then(Value::as_str).unwrap_or_default().to_string(),
        None => object
            .pointer("/spec/selector")
            .and_then(|s| serde_json::from_value(s.clone()).ok())
            .map(|s| kruise_machinery::selector::to_selector_string(&s))
            .unwrap_or_default(),
    };
    let mut metadata = json!({});
    for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(value) = object.pointer(&format!("/metadata/{field}")) {
            metadata[field] = value.clone();
        }
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": read_path(object, &spec_path).and_then(Value::as_i64).unwrap_or(0)},
        "status": {
            "replicas": read_path(object, &status_path).and_then(Value::as_i64).unwrap_or(0),
            "selector": selector,
        },
    })
}

/// GET `.../scale`.
pub async fn get_scale(
    api: &Api,
    def: &ResourceDef,
    version: &str,
    namespace: Option<&str>,
    name: &str,
) -> Result<Value, ApiError> {
    let object = api.get(def, version, namespace, name).await?;
    Ok(scale_of(def, version, &object))
}

/// PUT or PATCH `.../scale`: the new replicas go to the object's spec replicas path.
#[allow(clippy::too_many_arguments)]
pub async fn set_scale(
    api: &Api,
    def: &ResourceDef,
    version: &str,
    namespace: Option<&str>,
    name: &str,
    patch_type: Option<PatchType>,
    body: Value,
    options: &WriteOptions,
) -> Result<Value, ApiError> {
    let current = api.get(def, version, namespace, name).await?;
    let scale = scale_of(def, version, &current);
    let desired = match patch_type {
        None => body,
        Some(PatchType::Json) => {
            patch::json_patch(&scale, &body).map_err(|e| ApiError::bad_request(e.to_string()))?
        }
        Some(PatchType::Merge | PatchType::Strategic | PatchType::Apply) => {
            patch::merge_patch(&scale, &body).map_err(|e| ApiError::bad_request(e.to_string()))?
        }
    };
    let replicas = desired
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .ok_or_else(|| ApiError::bad_request("the scale has no spec.replicas"))?;
    if replicas < 0 {
        let errors = vec![kruise_machinery::field::FieldError::invalid(
            &kruise_machinery::field::FieldPath::root("spec").child("replicas"),
            replicas,
            "must be greater than or equal to 0",
        )];
        return Err(ApiError::invalid("autoscaling", "Scale", name, &errors));
    }
    let precondition =
        desired.pointer("/metadata/resourceVersion").and_then(Value::as_str).map(str::to_string);
    let (spec_path, _, _) = scale_paths(def, version);
    let mut patch_body = json!({});
    write_path(&mut patch_body, &spec_path, json!(replicas));
    if let Some(rv) = precondition.filter(|_| patch_type.is_none()) {
        patch_body["metadata"] = json!({"resourceVersion": rv});
    }
    let written =
        api.patch(def, version, namespace, name, None, PatchType::Merge, patch_body, options).await?;
    Ok(scale_of(def, version, &written.object))
}

/// POST `pods/{name}/binding`: assigns the pod to a node, once.
pub async fn bind(
    api: &Api,
    def: &ResourceDef,
    namespace: Option<&str>,
    name: &str,
    binding: &Value,
    options: &WriteOptions,
) -> Result<(), ApiError> {
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| ApiError::bad_request("binding.target.name is required"))?
        .to_string();
    let pod = api.get(def, "v1", namespace, name).await?;
    if let Some(assigned) = pod.pointer("/spec/nodeName").and_then(Value::as_str).filter(|n| !n.is_empty()) {
        let mut error = ApiError::conflict("", "pods", name);
        error.message = format!(
            "Operation cannot be fulfilled on pods/binding \"{name}\": pod {name} is already assigned to node \"{assigned}\""
        );
        return Err(error);
    }
    if objects::is_deleting(&pod) {
        return Err(ApiError::conflict("", "pods", name));
    }
    if pod.pointer("/spec/schedulingGates").and_then(Value::as_array).is_some_and(|g| !g.is_empty()) {
        let mut error = ApiError::conflict("", "pods", name);
        error.message = format!(
            "Operation cannot be fulfilled on pods/binding \"{name}\": pod {name} has non-empty .spec.schedulingGates"
        );
        return Err(error);
    }
    let mut patch_body = json!({"spec": {"nodeName": node}});
    if let Some(annotations) = binding.pointer("/metadata/annotations").filter(|a| a.is_object()) {
        let mut merged = pod.pointer("/metadata/annotations").cloned().unwrap_or(json!({}));
        if let (Some(target), Some(source)) = (merged.as_object_mut(), annotations.as_object()) {
            target.extend(source.clone());
        }
        patch_body["metadata"] = json!({"annotations": merged});
    }
    api.patch(def, "v1", namespace, name, Some("binding"), PatchType::Merge, patch_body, options).await?;
    Ok(())
}

/// POST `pods/{name}/eviction`: deletes the pod unless a PodDisruptionBudget selecting it has
/// no disruption left (429, as kube-apiserver answers).
pub async fn evict(
    api: &Api,
    def: &ResourceDef,
    namespace: Option<&str>,
    name: &str,
    eviction: &Value,
) -> Result<(), ApiError> {
    let pod = api.get(def, "v1", namespace, name).await?;
    let namespace_name = namespace.unwrap_or_default().to_string();
    let terminal =
        matches!(pod.pointer("/status/phase").and_then(Value::as_str), Some("Succeeded" | "Failed"));
    if !terminal && !objects::is_deleting(&pod) {
        let budgets = CollectionKey {
            group: "policy".into(),
            resource: "poddisruptionbudgets".into(),
            namespace: Some(namespace_name.clone()),
        };
        let (budgets, _) = api.store.list(&budgets);
        let pods =
            CollectionKey { group: String::new(), resource: "pods".into(), namespace: Some(namespace_name) };
        let (pods, _) = api.store.list(&pods);
        let pod_labels = objects::labels(&pod);
        for budget in budgets.iter() {
            let Some(selector) = budget.pointer("/spec/selector").and_then(|s| {
                serde_json::from_value::<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>(
                    s.clone(),
                )
                .ok()
            }) else {
                continue;
            };
            if kruise_machinery::selector::is_empty(&selector)
                || !kruise_machinery::selector::matches(&selector, &pod_labels)
            {
                continue;
            }
            let selected: Vec<_> = pods
                .iter()
                .filter(|p| {
                    !objects::is_deleting(p)
                        && kruise_machinery::selector::matches(&selector, &objects::labels(p))
                })
                .collect();
            let healthy = selected.iter().filter(|p| is_ready(p)).count() as i64;
            let expected = selected.len() as i32;
            let allowed = if let Some(min) = budget.pointer("/spec/minAvailable") {
                let min = int_or_percent(min, expected, true);
                healthy - i64::from(min)
            } else if let Some(max) = budget.pointer("/spec/maxUnavailable") {
                let max = int_or_percent(max, expected, true);
                let unhealthy = i64::from(expected) - healthy;
                i64::from(max) - unhealthy
            } else {
                1
            };
            if allowed <= 0 {
                return Err(ApiError::too_many_requests(
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                ));
            }
        }
    }
    let options = DeleteOptions {
        grace_period_seconds: eviction.pointer("/deleteOptions/gracePeriodSeconds").and_then(Value::as_i64),
        precondition_uid: eviction
            .pointer("/deleteOptions/preconditions/uid")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..Default::default()
    };
    api.delete(def, "v1", namespace, name, &options).await?;
    Ok(())
}

fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conditions| conditions.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

/// An int-or-percent field scaled against `total` (a percent rounded up or down); 0 when malformed.
pub(crate) fn int_or_percent(value: &Value, total: i32, round_up: bool) -> i32 {
    let parsed = match value {
        Value::Number(n) => {
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n.as_i64().unwrap_or(0) as i32)
        }
        Value::String(s) => k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s.clone()),
        _ => return 0,
    };
    kruise_machinery::intstr::scaled_value(&parsed, total, round_up).unwrap_or(0)
}
