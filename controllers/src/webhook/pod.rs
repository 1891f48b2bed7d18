//! Pod mutation on CREATE (`/mutate-pod`). Of upstream's pod mutations (`pkg/webhook/pod/
//! mutating`) two are served here, in upstream's order:
//!
//! - the readiness gate (`pod_readiness.go`): a pod whose controller owner belongs to
//!   `apps.kruise.io` gets the `KruisePodReady` readiness gate, which lets Kruise keep it
//!   NotReady (lifecycle hooks, `markPodNotReady`) without a writer race;
//! - container launch priority (`container_launch_priority_initialization.go`): a pod with the
//!   `apps.kruise.io/container-launch-priority: Ordered` annotation or differing
//!   `KRUISE_CONTAINER_PRIORITY` values gets a barrier env var per container (see
//!   [`kruise_crds::common::launch_priority`]); a pod created with only `generateName` gets its
//!   name here, since the barrier ConfigMap is named after it.
//!
//! The pod is handled as JSON so that nothing of it is lost or reformatted: each mutation edits
//! a copy and the answer is the JSON patch from the pod as sent.

use std::collections::BTreeMap;

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::Time};
use kruise_crds::{
    apps::v1beta1::SidecarSet,
    common::{launch_priority, well_known::KRUISE_POD_READY},
    resource::APPS_GROUP,
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::{Value, json};

use super::admission::{allowed, decode, errored, object_value, patched};
use super::workloadspread::SpreadAssignment;
use crate::{sidecarset::inject_sidecars, workloadspread::core::inject_into_pod};

/// The pod webhook's knobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodMutationOptions {
    /// Give every pod the gate, not only Kruise-owned ones (upstream feature gate
    /// `KruisePodReadinessGate`, off by default).
    pub readiness_gate_for_all_pods: bool,
    /// Sort injected sidecars by name on each side of the app containers (upstream feature
    /// gate `EnableSortSidecarContainerByName`).
    pub sort_sidecars_by_name: bool,
}

/// What sidecar injection reads from the cluster for one pod: the SidecarSets (from the
/// server's watch cache) and the labels of the pod's namespace (read only when a SidecarSet
/// has a namespace selector).
#[derive(Clone, Debug, Default)]
pub struct SidecarContext {
    /// Every SidecarSet.
    pub sidecarsets: Vec<SidecarSet>,
    /// The pod's namespace labels, `None` when not read or not found.
    pub namespace_labels: Option<BTreeMap<String, String>>,
    /// The time written into the pod's sidecar hash annotations.
    pub now: Option<Time>,
    /// What PersistentPodState injection reads (see [`super::pod_persistentpodstate`]).
    pub persistent_pod_state: super::pod_persistentpodstate::PersistentPodStateContext,
    /// The PodUnavailableBudget guarding the pod, named in its `pub.kruise.io/related-pub`
    /// annotation (see [`super::pod_unavailable_budget`]).
    pub related_pub: Option<String>,
}

/// The pod webhook: on CREATE, the readiness gate, the WorkloadSpread subset (`spread`, chosen
/// and recorded beforehand by [`super::workloadspread::assign_pod`]), the SidecarSets and the
/// launch-priority barriers when the pod needs them.
pub fn mutate(
    request: &AdmissionRequest<DynamicObject>,
    options: PodMutationOptions,
    sidecars: &SidecarContext,
    spread: Option<&SpreadAssignment>,
) -> AdmissionResponse {
    if request.operation != Operation::Create {
        return allowed(request);
    }
    let pod = match object_value(request.object.as_ref()) {
        Ok(Some(pod)) => pod,
        Ok(None) => return errored(request, 400, "there is no content to decode"),
        Err(error) => return errored(request, 400, &error.to_string()),
    };
    let mut mutated = pod.clone();
    if let Some(patch) = readiness_gate_patch(&pod, options) {
        tracing::debug!(namespace = ?request.namespace, name = %request.name, "injecting the KruisePodReady readiness gate");
        if let Err(error) = json_patch::patch(&mut mutated, &patch.0) {
            return errored(request, 500, &error.to_string());
        }
    }
    let is_pod =
        request.resource.resource == "pods" && request.sub_resource.as_deref().unwrap_or("").is_empty();
    if let Some(spread) = spread.filter(|_| is_pod) {
        match inject_into_pod(&spread.spread, &mut mutated, &spread.subset, &spread.generated_uid) {
            Ok(true) => {
                tracing::debug!(namespace = ?request.namespace, name = %request.name, subset = %spread.subset, "placed the pod in a WorkloadSpread subset");
            }
            Ok(false) => {}
            Err(message) => return errored(request, 500, &message),
        }
    }
    if is_pod {
        match inject_sidecarsets(&mut mutated, request.namespace.as_deref(), sidecars, options) {
            Ok(true) => {
                tracing::debug!(namespace = ?request.namespace, name = %request.name, "injected SidecarSets");
            }
            Ok(false) => {}
            Err(message) => return errored(request, 400, &message),
        }
        match inject_launch_priority(&mut mutated, &random_suffix) {
            Ok(true) => {
                tracing::debug!(namespace = ?request.namespace, name = %request.name, "injecting container launch priority barriers");
            }
            Ok(false) => {}
            Err(message) => return errored(request, 500, &message),
        }
        // PersistentPodState: the recorded node topology (upstream runs it after the above).
        if let Err(message) =
            super::pod_persistentpodstate::inject(&mut mutated, &sidecars.persistent_pod_state)
        {
            return errored(request, 500, &message);
        }
    }
    // PodUnavailableBudget hook-in: name the budget guarding the new pod.
    if is_pod && let Some(budget) = &sidecars.related_pub {
        super::pod_unavailable_budget::annotate_related_pub(&mut mutated, budget);
    }
    patched(request, json_patch::diff(&pod, &mutated))
}

/// Injects the SidecarSets that select `pod` (JSON, edited in place: only the fields
/// injection changes are rewritten); returns whether anything changed.
pub fn inject_sidecarsets(
    pod: &mut Value,
    request_namespace: Option<&str>,
    sidecars: &SidecarContext,
    options: PodMutationOptions,
) -> Result<bool, String> {
    if sidecars.sidecarsets.is_empty() {
        return Ok(false);
    }
    let mut typed: Pod = decode("Pod", pod)?;
    if typed.metadata.namespace.as_deref().unwrap_or_default().is_empty() {
        typed.metadata.namespace =
            Some(request_namespace.filter(|ns| !ns.is_empty()).unwrap_or("default").into());
    }
    let now = sidecars.now.clone().unwrap_or_else(|| {
        let second = k8s_openapi::jiff::Timestamp::now().as_second();
        Time(
            k8s_openapi::jiff::Timestamp::from_second(second)
                .unwrap_or_else(|_| k8s_openapi::jiff::Timestamp::now()),
        )
    });
    let injected = inject_sidecars(
        &typed,
        &sidecars.sidecarsets,
        sidecars.namespace_labels.as_ref(),
        &now,
        options.sort_sidecars_by_name,
    )
    .map_err(|error| error.to_string())?;
    let Some(injected) = injected else { return Ok(false) };
    write_field(pod, &["metadata", "annotations"], &injected.metadata.annotations)?;
    let spec = injected.spec.unwrap_or_default();
    write_field(pod, &["spec", "containers"], &Some(spec.containers))?;
    write_field(pod, &["spec", "initContainers"], &spec.init_containers)?;
    write_field(pod, &["spec", "volumes"], &spec.volumes)?;
    write_field(pod, &["spec", "imagePullSecrets"], &spec.image_pull_secrets)?;
    Ok(true)
}

/// Sets `path` of `document` to `value` (creating objects on the way) when it is `Some`.
fn write_field<T: serde::Serialize>(
    document: &mut Value,
    path: &[&str],
    value: &Option<T>,
) -> Result<(), String> {
    let Some(value) = value else { return Ok(()) };
    let value = serde_json::to_value(value).map_err(|error| error.to_string())?;
    let Some((last, parents)) = path.split_last() else { return Ok(()) };
    let mut node = document;
    for key in parents {
        let object = node.as_object_mut().ok_or_else(|| format!("the pod's {key} is not an object"))?;
        node = object.entry(key.to_string()).or_insert_with(|| json!({}));
    }
    node.as_object_mut().ok_or("the pod is not an object")?.insert(last.to_string(), value);
    Ok(())
}

/// A random suffix for a generated name: 5 characters of the alphabet kube-apiserver uses.
fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5).map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char).collect()
}

/// The name kube-apiserver would generate from `generateName` (the prefix cut to 58
/// characters, then 5 random ones).
fn generated_name(prefix: &str, suffix: &str) -> String {
    const MAX_PREFIX: usize = 63 - 5;
    let cut: String = prefix.chars().take(MAX_PREFIX).collect();
    format!("{cut}{suffix}")
}

/// Adds the barrier env var to every container of `pod` (JSON) when it asks for a launch
/// order, naming the pod first when it only has `generateName`; returns whether it changed.
pub fn inject_launch_priority(pod: &mut Value, suffix: &dyn Fn() -> String) -> Result<bool, String> {
    let typed: Pod = decode("Pod", pod)?;
    let Some(priorities) = launch_priority::launch_priorities(&typed).map_err(|error| error.to_string())?
    else {
        return Ok(false);
    };
    let name = match typed.metadata.name.as_deref().filter(|n| !n.is_empty()) {
        Some(name) => name.to_string(),
        None => {
            let prefix = typed.metadata.generate_name.clone().unwrap_or_default();
            if prefix.is_empty() {
                String::new()
            } else {
                let name = generated_name(&prefix, &suffix());
                if let Some(metadata) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
                    metadata.insert("name".into(), json!(name));
                }
                name
            }
        }
    };
    let Some(containers) = pod.pointer_mut("/spec/containers").and_then(Value::as_array_mut) else {
        return Ok(false);
    };
    for (container, priority) in containers.iter_mut().zip(priorities) {
        let env = serde_json::to_value(launch_priority::barrier_env(priority, &name))
            .map_err(|error| error.to_string())?;
        let Some(container) = container.as_object_mut() else { continue };
        match container.get_mut("env") {
            Some(Value::Array(list)) => list.push(env),
            _ => {
                container.insert("env".into(), json!([env]));
            }
        }
    }
    Ok(true)
}

/// Whether the pod's controller owner (the first owner reference with `controller: true`) is
/// an `apps.kruise.io` object.
pub fn owned_by_kruise(pod: &Value) -> bool {
    pod.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .and_then(|owners| {
            owners.iter().find(|owner| owner.get("controller").and_then(Value::as_bool) == Some(true))
        })
        .and_then(|owner| owner.get("apiVersion").and_then(Value::as_str))
        .is_some_and(|api_version| api_version.split_once('/').map(|(group, _)| group) == Some(APPS_GROUP))
}

/// The JSON patch adding the `KruisePodReady` gate, or None when the pod is not to get it or
/// already has it.
pub fn readiness_gate_patch(pod: &Value, options: PodMutationOptions) -> Option<json_patch::Patch> {
    if !options.readiness_gate_for_all_pods && !owned_by_kruise(pod) {
        return None;
    }
    let gate = json!({"conditionType": KRUISE_POD_READY});
    let operations = match pod.pointer("/spec/readinessGates") {
        Some(Value::Array(gates)) => {
            if gates.iter().any(|g| g.get("conditionType").and_then(Value::as_str) == Some(KRUISE_POD_READY))
            {
                return None;
            }
            json!([{"op": "add", "path": "/spec/readinessGates/-", "value": gate}])
        }
        _ if pod.get("spec").is_some_and(Value::is_object) => {
            json!([{"op": "add", "path": "/spec/readinessGates", "value": [gate]}])
        }
        _ => json!([{"op": "add", "path": "/spec", "value": {"readinessGates": [gate]}}]),
    };
    serde_json::from_value(operations).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;
    use crate::webhook::admission::parse_review;

    fn pod(owners: Value, gates: Option<Value>) -> Value {
        let mut pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "ownerReferences": owners},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        });
        if let Some(gates) = gates {
            pod["spec"]["readinessGates"] = gates;
        }
        pod
    }

    fn owner(api_version: &str, controller: bool) -> Value {
        json!({"apiVersion": api_version, "kind": "X", "name": "x", "uid": "u", "controller": controller})
    }

    fn gates_after(pod: &Value, options: PodMutationOptions) -> Option<Value> {
        let patch = readiness_gate_patch(pod, options)?;
        let mut patched = pod.clone();
        json_patch::patch(&mut patched, &patch.0).unwrap();
        Some(patched["spec"]["readinessGates"].clone())
    }

    #[test]
    fn readiness_gate_table() {
        let ready = json!({"conditionType": "KruisePodReady"});
        let other = json!({"conditionType": "Other"});
        let default = PodMutationOptions::default();
        let all = PodMutationOptions { readiness_gate_for_all_pods: true, ..Default::default() };
        let cases = [
            (
                "cloneset controller",
                pod(json!([owner("apps.kruise.io/v1beta1", true)]), None),
                default,
                Some(json!([ready])),
            ),
            (
                "v1alpha1 owner",
                pod(json!([owner("apps.kruise.io/v1alpha1", true)]), None),
                default,
                Some(json!([ready])),
            ),
            (
                "keeps other gates",
                pod(json!([owner("apps.kruise.io/v1beta1", true)]), Some(json!([other]))),
                default,
                Some(json!([other, ready])),
            ),
            (
                "already gated",
                pod(json!([owner("apps.kruise.io/v1beta1", true)]), Some(json!([ready]))),
                default,
                None,
            ),
            ("not the controller", pod(json!([owner("apps.kruise.io/v1beta1", false)]), None), default, None),
            ("apps/v1 owner", pod(json!([owner("apps/v1", true)]), None), default, None),
            ("core owner", pod(json!([owner("v1", true)]), None), default, None),
            ("no owner", pod(json!([]), None), default, None),
            (
                "first controller decides",
                pod(json!([owner("apps/v1", true), owner("apps.kruise.io/v1beta1", true)]), None),
                default,
                None,
            ),
            ("gate for all pods", pod(json!([]), None), all, Some(json!([ready]))),
        ];
        for (name, pod, options, expected) in cases {
            assert_eq!(gates_after(&pod, options), expected, "{name}");
        }
    }

    #[test]
    fn only_creates_are_mutated() {
        let review = |operation: &str, object: Value| {
            let body = json!({
                "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "request": {
                    "uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "resource": {"group": "", "version": "v1", "resource": "pods"},
                    "name": "p", "namespace": "default", "operation": operation, "userInfo": {},
                    "object": object,
                }
            });
            parse_review(body.to_string().as_bytes()).unwrap()
        };
        let owned = pod(json!([owner("apps.kruise.io/v1beta1", true)]), None);
        assert!(
            mutate(
                &review("CREATE", owned.clone()),
                PodMutationOptions::default(),
                &SidecarContext::default(),
                None
            )
            .patch
            .is_some()
        );
        assert!(
            mutate(&review("UPDATE", owned), PodMutationOptions::default(), &SidecarContext::default(), None)
                .patch
                .is_none()
        );
        let missing = mutate(
            &review("CREATE", Value::Null),
            PodMutationOptions::default(),
            &SidecarContext::default(),
            None,
        );
        assert_eq!(missing.result.code, 400);
    }

    fn barrier(priority: i64, pod: &str) -> Value {
        json!({"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {"name": format!("{pod}-barrier"), "key": format!("p_{priority}")}}})
    }

    #[test]
    fn launch_priority_table() {
        let priority = |value: &str| json!({"name": "KRUISE_CONTAINER_PRIORITY", "value": value});
        let test = json!({"name": "test", "value": "foo"});
        let cases = [
            (
                "env priorities, named pod",
                json!({"metadata": {"name": "web-0"}, "spec": {"containers": [
                    {"name": "main", "env": [test]},
                    {"name": "c2", "env": [priority("10"), test]}
                ]}}),
                Ok(Some(json!({"metadata": {"name": "web-0"}, "spec": {"containers": [
                    {"name": "main", "env": [test, barrier(0, "web-0")]},
                    {"name": "c2", "env": [priority("10"), test, barrier(10, "web-0")]}
                ]}}))),
            ),
            (
                "ordered, generated name, containers without env",
                json!({"metadata": {"generateName": "deploy-abc-", "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}},
                       "spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}),
                Ok(Some(
                    json!({"metadata": {"generateName": "deploy-abc-", "name": "deploy-abc-xyz12", "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}},
                    "spec": {"containers": [
                        {"name": "a", "env": [barrier(0, "deploy-abc-xyz12")]},
                        {"name": "b", "env": [barrier(-1, "deploy-abc-xyz12")]},
                        {"name": "c", "env": [barrier(-2, "deploy-abc-xyz12")]}
                    ]}}),
                )),
            ),
            (
                "equal priorities",
                json!({"metadata": {"name": "p"}, "spec": {"containers": [
                    {"name": "a", "env": [priority("1")]}, {"name": "b", "env": [priority("1")]}
                ]}}),
                Ok(None),
            ),
            (
                "single container",
                json!({"metadata": {"name": "p", "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}},
                       "spec": {"containers": [{"name": "a"}]}}),
                Ok(None),
            ),
            (
                "bad priority",
                json!({"metadata": {"name": "p"}, "spec": {"containers": [
                    {"name": "a"}, {"name": "b", "env": [priority("x")]}
                ]}}),
                Err("container b: KRUISE_CONTAINER_PRIORITY \"x\" is not an integer".to_string()),
            ),
        ];
        for (name, pod, expected) in cases {
            let mut mutated = pod.clone();
            let result = inject_launch_priority(&mut mutated, &|| "xyz12".to_string());
            let outcome = result.map(|changed| changed.then_some(mutated));
            assert_eq!(outcome, expected, "{name}");
        }
        assert_eq!(generated_name(&"a".repeat(70), "xyz12").len(), 63);
    }

    #[test]
    fn both_mutations_make_one_patch() {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "name": "", "namespace": "default", "operation": "CREATE", "userInfo": {},
                "object": {
                    "apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "web-0", "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"},
                                 "ownerReferences": [owner("apps.kruise.io/v1beta1", true)]},
                    "spec": {"containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "i"}]}
                },
            }
        });
        let request = parse_review(body.to_string().as_bytes()).unwrap();
        let response = mutate(&request, PodMutationOptions::default(), &SidecarContext::default(), None);
        let patch: json_patch::Patch = serde_json::from_slice(&response.patch.unwrap()).unwrap();
        let mut pod = body["request"]["object"].clone();
        json_patch::patch(&mut pod, &patch.0).unwrap();
        assert_eq!(pod["spec"]["readinessGates"], json!([{"conditionType": "KruisePodReady"}]));
        assert_eq!(pod["spec"]["containers"][1]["env"], json!([barrier(-1, "web-0")]));
    }
}
