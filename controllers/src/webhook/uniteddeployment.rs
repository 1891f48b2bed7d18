//! Admission for UnitedDeployment (upstream `pkg/webhook/uniteddeployment`):
//!
//! - `muniteddeployment.kb.io` (`/mutate-apps-kruise-io-uniteddeployment`), CREATE and UPDATE at
//!   both versions: `kruise_crds::defaults::default_uniteddeployment_{v1alpha1,v1beta1}`
//!   (replicas 1, revisionHistoryLimit 10, the Manual update strategy, `minReplicas: 0` on every
//!   subset of an elastic topology, pod defaults in a StatefulSet template when the template is
//!   new or changed) and the status cleared, as upstream's handler does;
//! - `vuniteddeployment.kb.io` (`/validate-apps-kruise-io-uniteddeployment`), CREATE, UPDATE and
//!   DELETE: `kruise_crds::validation::validate_uniteddeployment_{v1alpha1,v1beta1}` (422 naming
//!   every field), and on DELETE the `policy.kruise.io/delete-protection` check of workloads.
//!
//! Every decision is a pure function of the admission request.

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{default_uniteddeployment_v1alpha1, default_uniteddeployment_v1beta1},
    resource::APPS_GROUP,
    validation::{validate_uniteddeployment_v1alpha1, validate_uniteddeployment_v1beta1},
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::{
    admission::{allowed, check, decode, errored, invalid, object_value, object_version, patch_to, patched},
    deletion_protection::{ValidationOptions, workload_refusal},
};

/// The kind's name.
const KIND: &str = "UnitedDeployment";

/// The raw object and, on UPDATE, the raw old object; the answer to send instead when the review
/// carries no usable object (boxed: a response is large).
fn objects(
    request: &AdmissionRequest<DynamicObject>,
) -> Result<(Value, Option<Value>), Box<AdmissionResponse>> {
    match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref())) {
        (Ok(Some(raw)), Ok(old)) => Ok((raw, old.filter(|_| request.operation == Operation::Update))),
        (Ok(None), _) => Err(Box::new(errored(request, 400, "there is no content to decode"))),
        (Err(error), _) | (_, Err(error)) => Err(Box::new(errored(request, 400, &error.to_string()))),
    }
}

/// The defaulted form of `raw` as a JSON patch: defaults applied (template defaults only on
/// CREATE or when `spec.template` changed) and the status cleared.
fn default_patch<T: DeserializeOwned + Serialize>(
    raw: &Value,
    old: Option<&Value>,
    apply_defaults: fn(&mut T, bool),
) -> Result<json_patch::Patch, String> {
    let mut object: T = decode(KIND, raw)?;
    let before = serde_json::to_value(&object).map_err(|error| error.to_string())?;
    let inject = old.is_none_or(|old| raw.pointer("/spec/template") != old.pointer("/spec/template"));
    apply_defaults(&mut object, inject);
    let mut after = serde_json::to_value(&object).map_err(|error| error.to_string())?;
    if let Some(map) = after.as_object_mut() {
        map.remove("status");
    }
    patch_to(raw, &before, &after)
}

/// The defaulting webhook.
pub fn mutate(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let (raw, old) = match objects(request) {
        Ok(objects) => objects,
        Err(response) => return *response,
    };
    let result = match object_version(request, Some(&raw)).as_str() {
        "v1beta1" => {
            default_patch::<v1beta1::UnitedDeployment>(&raw, old.as_ref(), default_uniteddeployment_v1beta1)
        }
        "v1alpha1" => {
            default_patch::<v1alpha1::UnitedDeployment>(&raw, old.as_ref(), default_uniteddeployment_v1alpha1)
        }
        other => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match result {
        Ok(patch) => patched(request, patch),
        Err(message) => errored(request, 400, &message),
    }
}

/// The validating webhook.
pub fn validate(request: &AdmissionRequest<DynamicObject>, options: ValidationOptions) -> AdmissionResponse {
    match request.operation {
        Operation::Delete => {
            let old = match object_value(request.old_object.as_ref()) {
                Ok(Some(old)) => old,
                Ok(None) => return allowed(request),
                Err(error) => return errored(request, 400, &error.to_string()),
            };
            if !options.deletion_protection {
                return allowed(request);
            }
            match workload_refusal(&old) {
                Some(message) => {
                    tracing::info!(name = %request.name, namespace = ?request.namespace, user = ?request.user_info.username, %message, "refused a protected UnitedDeployment deletion");
                    errored(request, 403, &message)
                }
                None => allowed(request),
            }
        }
        Operation::Create | Operation::Update => {
            let (raw, old) = match objects(request) {
                Ok(objects) => objects,
                Err(response) => return *response,
            };
            let errors = match object_version(request, Some(&raw)).as_str() {
                "v1beta1" => check::<v1beta1::UnitedDeployment>(KIND, &raw, old.as_ref(), |object, old| {
                    validate_uniteddeployment_v1beta1(object, old)
                }),
                "v1alpha1" => check::<v1alpha1::UnitedDeployment>(KIND, &raw, old.as_ref(), |object, old| {
                    validate_uniteddeployment_v1alpha1(object, old)
                }),
                other => return errored(request, 400, &format!("unsupported version: {other}")),
            };
            match errors {
                Ok(errors) if errors.is_empty() => allowed(request),
                Ok(errors) => {
                    let name = raw.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(&request.name);
                    invalid(request, APPS_GROUP, KIND, name, &errors)
                }
                Err(message) => errored(request, 400, &message),
            }
        }
        _ => allowed(request),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;
    use crate::webhook::testing::{apply, fields, review};

    /// Upstream's `newBetaDeploymentUnitedDeployment` (mutating tests), at `version`.
    fn deployment_ud(version: &str) -> Value {
        json!({
            "apiVersion": format!("apps.kruise.io/{version}"), "kind": "UnitedDeployment",
            "metadata": {"name": "test-ud", "namespace": "default"},
            "spec": {
                "replicas": 5, "revisionHistoryLimit": 12,
                "selector": {"matchLabels": {"app": "demo"}},
                "template": {"deploymentTemplate": {
                    "metadata": {"labels": {"app": "demo"}},
                    "spec": {"selector": {"matchLabels": {"app": "demo"}}, "template": {
                        "metadata": {"labels": {"app": "demo"}},
                        "spec": {"restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "containers": [{
                            "name": "main", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent",
                            "terminationMessagePolicy": "File"}]}}}}},
                "topology": {"subsets": [{"name": "subset-a", "minReplicas": 1}]}
            }
        })
    }

    fn run_mutate(version: &str, operation: &str, object: Value, old: Value) -> AdmissionResponse {
        mutate(&review(KIND, "uniteddeployments", "test-ud", (operation, version), object, old))
    }

    fn run_validate(version: &str, operation: &str, object: Value, old: Value) -> AdmissionResponse {
        validate(
            &review(KIND, "uniteddeployments", "test-ud", (operation, version), object, old),
            ValidationOptions::default(),
        )
    }

    /// Upstream `TestUnitedDeploymentCreateUpdateHandlerHandle{V1beta1,V1alpha1}CreateDefaultsAndClearsStatus`.
    #[test]
    fn create_defaults_and_clears_status() {
        for version in ["v1beta1", "v1alpha1"] {
            let mut object = deployment_ud(version);
            let spec = object["spec"].as_object_mut().unwrap();
            spec.remove("replicas");
            spec.remove("revisionHistoryLimit");
            spec["topology"]["subsets"][0] = json!({"name": "subset-a", "maxReplicas": 5});
            object["status"] = json!({"replicas": 99});
            let response = run_mutate(version, "CREATE", object.clone(), Value::Null);
            assert!(response.allowed, "{version}");
            let mutated = apply(&response, &object);
            assert_eq!(mutated["spec"]["replicas"], 1, "{version}");
            assert_eq!(mutated["spec"]["revisionHistoryLimit"], 10);
            assert_eq!(mutated["spec"]["updateStrategy"]["type"], "Manual");
            assert!(mutated["spec"]["updateStrategy"]["manualUpdate"].is_object());
            assert_eq!(mutated["spec"]["topology"]["subsets"][0]["minReplicas"], 0);
            assert!(mutated.get("status").is_none(), "{version}: status cleared");
        }
    }

    /// Upstream `TestUnitedDeploymentCreateUpdateHandlerHandle{V1beta1,V1alpha1}UpdatePreservesExplicitSpec`.
    #[test]
    fn update_preserves_explicit_spec() {
        for version in ["v1beta1", "v1alpha1"] {
            let mut old = deployment_ud(version);
            old["spec"]["updateStrategy"] =
                json!({"type": "Manual", "manualUpdate": {"partitions": {"subset-a": 1}}});
            let mut object = old.clone();
            object["status"] = json!({"replicas": 100});
            let response = run_mutate(version, "UPDATE", object.clone(), old.clone());
            assert!(response.allowed);
            let mutated = apply(&response, &object);
            assert_eq!(mutated["spec"], old["spec"], "{version}");
            assert!(mutated.get("status").is_none());
        }
    }

    /// Upstream `TestUnitedDeploymentCreateUpdateHandlerHandleUnsupportedVersionErrors`.
    #[test]
    fn unsupported_version_errors() {
        let mut object = deployment_ud("v1beta1");
        object["apiVersion"] = json!("apps.kruise.io/v2");
        let response = run_mutate("v2", "CREATE", object, Value::Null);
        assert!(!response.allowed);
        assert_eq!(response.result.code, 400);
    }

    /// Upstream `TestUnitedDeploymentCreateUpdateHandlerHandleV1beta1CreateRejectsReservedStatefulWorkload`.
    #[test]
    fn create_rejects_reserved_stateful_workload() {
        let mut object = deployment_ud("v1beta1");
        let template = object["spec"]["template"]["deploymentTemplate"].take();
        object["spec"]["template"] = json!({"statefulSetTemplate": template});
        object["spec"]["topology"] = json!({
            "subsets": [{"name": "subset-a"}],
            "scheduleStrategy": {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": true}}
        });
        let response = run_validate("v1beta1", "CREATE", object, Value::Null);
        assert!(!response.allowed);
        assert_eq!(response.result.code, 422);
    }

    /// Upstream `TestUnitedDeploymentCreateUpdateHandlerHandle{V1beta1,V1alpha1}CreateAllowsValidDeploymentWorkload`.
    #[test]
    fn create_allows_valid_deployment_workload() {
        for version in ["v1beta1", "v1alpha1"] {
            let response = run_validate(version, "CREATE", deployment_ud(version), Value::Null);
            assert!(response.allowed, "{version}: {:?}", response.result);
        }
    }

    /// Upstream `TestUnitedDeploymentCreateUpdateHandlerHandle{V1beta1,V1alpha1}UpdateRejectsNodeSelectorMutation`
    /// and `...V1beta1UpdateAllowsReplicaChange`.
    #[test]
    fn update_rejects_node_selector_mutation_and_allows_replica_change() {
        for version in ["v1beta1", "v1alpha1"] {
            let mut old = deployment_ud(version);
            old["spec"]["topology"]["subsets"][0] = json!({"name": "subset-a", "nodeSelectorTerm": {
                "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}});
            let mut moved = old.clone();
            moved["spec"]["topology"]["subsets"][0]["nodeSelectorTerm"]["matchExpressions"][0]["values"] =
                json!(["zone-b"]);
            let response = run_validate(version, "UPDATE", moved, old.clone());
            assert!(!response.allowed, "{version}");
            assert_eq!(response.result.code, 422);
            assert!(
                fields(&response).iter().any(|f| f.starts_with("spec.topology.subsets")),
                "{:?}",
                fields(&response)
            );
            let mut scaled = old.clone();
            scaled["spec"]["replicas"] = json!(4);
            assert!(run_validate(version, "UPDATE", scaled, old).allowed, "{version}");
        }
    }

    #[test]
    fn invalid_subset_replicas_name_their_field() {
        let mut object = deployment_ud("v1beta1");
        object["spec"]["topology"]["subsets"][0] = json!({"name": "subset-a", "replicas": "120%"});
        let response = run_validate("v1beta1", "CREATE", object, Value::Null);
        assert_eq!(response.result.code, 422);
        assert!(
            fields(&response).iter().any(|f| f.starts_with("spec.topology.subsets[0]")),
            "{:?}",
            fields(&response)
        );
    }

    #[test]
    fn protected_deletion_is_refused() {
        let mut old = deployment_ud("v1beta1");
        old["metadata"]["labels"] = json!({"policy.kruise.io/delete-protection": "Always"});
        let response = run_validate("v1beta1", "DELETE", Value::Null, old.clone());
        assert!(!response.allowed);
        assert_eq!(response.result.code, 403);
        old["metadata"]["labels"] = json!({});
        assert!(run_validate("v1beta1", "DELETE", Value::Null, old).allowed);
    }
}
