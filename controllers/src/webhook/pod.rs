//! Pod mutation on CREATE (`/mutate-pod`). Of upstream's pod mutations only the readiness
//! gate is served here (`pkg/webhook/pod/mutating/pod_readiness.go`): a pod whose controller
//! owner belongs to `apps.kruise.io` gets the `KruisePodReady` readiness gate, which lets Kruise
//! keep it NotReady (lifecycle hooks, `markPodNotReady`) without a writer race. The pod is
//! handled as JSON so that nothing of it is lost or reformatted.

use kruise_crds::{common::well_known::KRUISE_POD_READY, resource::APPS_GROUP};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::{Value, json};

use super::admission::{allowed, errored, object_value, patched};

/// The pod webhook's knobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodMutationOptions {
    /// Give every pod the gate, not only Kruise-owned ones (upstream feature gate
    /// `KruisePodReadinessGate`, off by default).
    pub readiness_gate_for_all_pods: bool,
}

/// The pod webhook: on CREATE, the readiness-gate patch when the pod needs one.
pub fn mutate(request: &AdmissionRequest<DynamicObject>, options: PodMutationOptions) -> AdmissionResponse {
    if request.operation != Operation::Create {
        return allowed(request);
    }
    let pod = match object_value(request.object.as_ref()) {
        Ok(Some(pod)) => pod,
        Ok(None) => return errored(request, 400, "there is no content to decode"),
        Err(error) => return errored(request, 400, &error.to_string()),
    };
    match readiness_gate_patch(&pod, options) {
        Some(patch) => {
            tracing::debug!(namespace = ?request.namespace, name = %request.name, "injecting the KruisePodReady readiness gate");
            patched(request, patch)
        }
        None => allowed(request),
    }
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
        let all = PodMutationOptions { readiness_gate_for_all_pods: true };
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
        assert!(mutate(&review("CREATE", owned.clone()), PodMutationOptions::default()).patch.is_some());
        assert!(mutate(&review("UPDATE", owned), PodMutationOptions::default()).patch.is_none());
        let missing = mutate(&review("CREATE", Value::Null), PodMutationOptions::default());
        assert_eq!(missing.result.code, 400);
    }
}
