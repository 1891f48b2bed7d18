//! Admission for ResourceDistribution (upstream `pkg/webhook/resourcedistribution/validating`,
//! `vresourcedistribution.kb.io`): CREATE and UPDATE at both served versions are checked with
//! `kruise_crds::validation::validate_resourcedistribution_{v1alpha1,v1beta1}`: the resource
//! must be a complete core/v1 Secret or ConfigMap the API server would accept, its apiVersion,
//! kind and name cannot change, the target lists name valid namespaces and none is both
//! included and excluded, and the namespace selector is valid. A refusal is a 422 naming every
//! field. Upstream registers no defaulting webhook for this kind.
//!
//! As upstream, every write is refused while the `ResourceDistributionGate` feature gate is off.
//! An existing object of the same name in a target namespace is not a reason to refuse: the
//! controller leaves it alone and reports the namespace under the `ConflictOccurred` condition.
//!
//! Every decision is a pure function of the admission request.

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    resource::APPS_GROUP,
    validation::{validate_resourcedistribution_v1alpha1, validate_resourcedistribution_v1beta1},
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::Value;

use super::admission::{allowed, check, errored, invalid, object_value, object_version};

/// The kind's name.
const KIND: &str = "ResourceDistribution";

/// The validating webhook; `gate_enabled` is upstream's `ResourceDistributionGate`.
pub fn validate(request: &AdmissionRequest<DynamicObject>, gate_enabled: bool) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    if !gate_enabled {
        return errored(request, 403, "feature-gate ResourceDistributionGate is not enabled");
    }
    let (raw, old) = match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref()))
    {
        (Ok(Some(raw)), Ok(old)) => (raw, old.filter(|_| request.operation == Operation::Update)),
        (Ok(None), _) => return errored(request, 400, "there is no content to decode"),
        (Err(error), _) | (_, Err(error)) => return errored(request, 400, &error.to_string()),
    };
    let errors = match object_version(request, Some(&raw)).as_str() {
        "v1beta1" => check::<v1beta1::ResourceDistribution>(KIND, &raw, old.as_ref(), |object, old| {
            validate_resourcedistribution_v1beta1(object, old)
        }),
        "v1alpha1" => check::<v1alpha1::ResourceDistribution>(KIND, &raw, old.as_ref(), |object, old| {
            validate_resourcedistribution_v1alpha1(object, old)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;
    use crate::webhook::testing::{fields, review};

    const SECRET_NAME: &str = "test-secret-1";

    /// Upstream's `buildResourceDistributionWithSecret` (webhook tests), at `version`.
    fn with_resource(version: &str, resource: Value) -> Value {
        let selector = if version == "v1alpha1" { "namespaceLabelSelector" } else { "namespaceSelector" };
        json!({
            "apiVersion": format!("apps.kruise.io/{version}"), "kind": "ResourceDistribution",
            "metadata": {"name": "test-resource-distribution"},
            "spec": {
                "resource": resource,
                "targets": {
                    "excludedNamespaces": {"list": [{"name": "ns-3"}]},
                    "includedNamespaces": {"list": [{"name": "ns-1"}, {"name": "ns-2"}]},
                    selector: {"matchLabels": {"environment": "develop"}}
                }
            }
        })
    }

    fn secret_distribution(version: &str) -> Value {
        with_resource(
            version,
            json!({"apiVersion": "v1", "data": {"test": "dGVzdA=="}, "kind": "Secret",
                   "metadata": {"name": SECRET_NAME}, "type": "Opaque"}),
        )
    }

    fn config_map_distribution(version: &str) -> Value {
        with_resource(
            version,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "game-demo"},
                   "data": {"player_initial_lives": "3", "ui_properties_file_name": "user-interface.properties"}}),
        )
    }

    fn run(version: &str, operation: &str, object: Value, old: Value) -> AdmissionResponse {
        let request = review(
            "ResourceDistribution",
            "resourcedistributions",
            "test-resource-distribution",
            (operation, version),
            object,
            old,
        );
        validate(&request, true)
    }

    #[test]
    fn test_resource_distribution_create_validation() {
        for version in ["v1alpha1", "v1beta1"] {
            for object in [secret_distribution(version), config_map_distribution(version)] {
                let response = run(version, "CREATE", object, Value::Null);
                assert!(response.allowed, "{version}: {:?}", response.result);
            }
        }
    }

    #[test]
    fn test_resource_distribution_create_validation_with_empty_resource() {
        let mut object = secret_distribution("v1beta1");
        object["spec"]["resource"] = json!({});
        let response = run("v1beta1", "CREATE", object, Value::Null);
        assert!(!response.allowed);
        assert_eq!(fields(&response), ["spec.resource"]);
    }

    #[test]
    fn test_resource_distribution_create_validation_with_wrong_resource() {
        let mut object = secret_distribution("v1beta1");
        object["spec"]["resource"] = json!("something is wrong....!#@$#@$%@^^&#%$&");
        let response = run("v1beta1", "CREATE", object, Value::Null);
        assert!(!response.allowed);
        assert_eq!(fields(&response), ["spec.resource"]);
    }

    #[test]
    fn test_resource_distribution_update_validation() {
        let old = secret_distribution("v1beta1");
        let mut new = old.clone();
        new["spec"]["targets"]["includedNamespaces"]["list"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "ns-4"}));
        assert!(run("v1beta1", "UPDATE", new, old).allowed);
    }

    #[test]
    fn test_validate_resource_distribution_targets() {
        for version in ["v1alpha1", "v1beta1"] {
            let selector = if version == "v1alpha1" { "namespaceLabelSelector" } else { "namespaceSelector" };
            let mut object = secret_distribution(version);
            object["spec"]["targets"] = json!({
                "excludedNamespaces": {"list": [{"name": "ns-1"}]},
                "includedNamespaces": {"list": [{"name": "ns-1"}, {"name": "ns-2"}, {"name": "kube-system"}, {"name": "Bad_Name"}]},
                selector: {"matchLabels": {"$#%$%": "#@$@#$"}}
            });
            let response = run(version, "CREATE", object, Value::Null);
            assert!(!response.allowed);
            let fields = fields(&response);
            assert!(
                fields.contains(&"spec.targets.includedNamespaces.list[3].name".to_string()),
                "{fields:?}"
            );
            assert!(
                fields.contains(&"spec.targets.excludedNamespaces.list[0].name".to_string()),
                "{fields:?}"
            );
            assert!(
                fields.iter().any(|field| field.starts_with(&format!("spec.targets.{selector}"))),
                "{version}: {fields:?}"
            );
        }
    }

    #[test]
    fn test_resource_distribution_update_conflict() {
        let old = secret_distribution("v1beta1");
        let mut new = old.clone();
        new["spec"]["resource"]["metadata"]["name"] = json!("test-secret-2");
        new["spec"]["resource"]["data"] = json!({"test": "MWYyZDFlMmU2N2Rm"});
        let response = run("v1beta1", "UPDATE", new, old);
        assert!(!response.allowed);
        assert_eq!(fields(&response), ["spec.resource"], "the resource's name cannot change");
    }

    #[test]
    fn unsupported_kinds_and_the_gate() {
        let object = with_resource(
            "v1beta1",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}),
        );
        let response = run("v1beta1", "CREATE", object, Value::Null);
        assert!(!response.allowed);
        assert!(fields(&response).contains(&"spec.resource.kind".to_string()), "{:?}", fields(&response));

        let request = review(
            "ResourceDistribution",
            "resourcedistributions",
            "test-resource-distribution",
            ("CREATE", "v1beta1"),
            secret_distribution("v1beta1"),
            Value::Null,
        );
        let refused = validate(&request, false);
        assert!(!refused.allowed);
        assert_eq!(refused.result.code, 403);
        assert!(validate(&request, true).allowed);
    }
}
