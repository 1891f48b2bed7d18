//! Advanced StatefulSet admission: defaulting (`/mutate-apps-kruise-io-statefulset`) and
//! validation (`/validate-apps-kruise-io-statefulset`) for both served versions, and the
//! deletion check of the `policy.kruise.io/delete-protection` label (upstream
//! `pkg/webhook/statefulset/**`). The rules themselves live in `kruise_crds` (defaults and
//! validation); this module decodes the review, applies them and answers.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{default_statefulset_v1alpha1, default_statefulset_v1beta1},
    document::drop_null_fields,
    field::ErrorList,
    resource::APPS_GROUP,
    validation::{validate_statefulset_v1alpha1, validate_statefulset_v1beta1},
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::{
    admission::{allowed, errored, invalid, object_value, object_version, patched},
    cloneset::{ValidationOptions, deletion_refusal},
};

/// Kind name used in responses.
const KIND: &str = "StatefulSet";

/// The defaulting webhook: the defaults of the object's version as a JSON patch. Pod and PVC
/// template defaults are added on CREATE, and on UPDATE only when the template changed (so an
/// untouched template keeps its revision hash), as upstream without `TemplateNoDefaults`.
pub fn mutate(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let (raw, old_raw) =
        match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref())) {
            (Ok(Some(raw)), Ok(old)) => (raw, old),
            (Ok(None), _) => return errored(request, 400, "there is no content to decode"),
            (Err(error), _) | (_, Err(error)) => return errored(request, 400, &error.to_string()),
        };
    let old_raw = old_raw.filter(|_| request.operation == Operation::Update);
    let result = match object_version(request, Some(&raw)).as_str() {
        "v1beta1" => default_patch::<v1beta1::StatefulSet>(
            &raw,
            old_raw.as_ref(),
            |set| &set.spec.template,
            default_statefulset_v1beta1,
        ),
        "v1alpha1" => default_patch::<v1alpha1::StatefulSet>(
            &raw,
            old_raw.as_ref(),
            |set| &set.spec.template,
            default_statefulset_v1alpha1,
        ),
        other => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match result {
        Ok(patch) => {
            if !patch.0.is_empty() {
                tracing::debug!(name = %request.name, namespace = ?request.namespace, operations = patch.0.len(), "defaulted a StatefulSet");
            }
            patched(request, patch)
        }
        Err(message) => errored(request, 400, &message),
    }
}

/// The JSON patch that turns `raw` into its defaulted form (only what defaulting changed, so
/// fields this build does not know are left as they were).
fn default_patch<T: DeserializeOwned + Serialize>(
    raw: &Value,
    old_raw: Option<&Value>,
    template: fn(&T) -> &PodTemplateSpec,
    apply_defaults: fn(&mut T, bool),
) -> Result<json_patch::Patch, String> {
    let mut object: T = decode(raw)?;
    let inject_template_defaults = match old_raw {
        Some(old_raw) => {
            let old: T = decode(old_raw)?;
            template(&object) != template(&old)
        }
        None => true,
    };
    let before = serde_json::to_value(&object).map_err(|error| error.to_string())?;
    apply_defaults(&mut object, inject_template_defaults);
    let after = serde_json::to_value(&object).map_err(|error| error.to_string())?;
    let patch = json_patch::diff(&before, &after);
    // The decoded form can differ from what was sent; the patch must apply to what was sent.
    let mut probe = raw.clone();
    if json_patch::patch(&mut probe, &patch.0).is_ok() {
        Ok(patch)
    } else {
        Ok(json_patch::diff(raw, &after))
    }
}

/// Decodes an admitted object leniently, as upstream's decoder does.
fn decode<T: DeserializeOwned>(raw: &Value) -> Result<T, String> {
    let mut value = raw.clone();
    drop_null_fields(&mut value);
    serde_json::from_value(value).map_err(|error| format!("cannot decode the {KIND}: {error}"))
}

fn check<T: DeserializeOwned>(
    raw: &Value,
    old_raw: Option<&Value>,
    validate: impl Fn(&T, Option<&T>) -> ErrorList,
) -> Result<ErrorList, String> {
    let object: T = decode(raw)?;
    let old: Option<T> = old_raw.map(decode).transpose()?;
    Ok(validate(&object, old.as_ref()))
}

/// The validating webhook: CREATE and UPDATE are validated with field paths (422); DELETE is
/// refused (403) while `policy.kruise.io/delete-protection` forbids it.
pub fn validate(request: &AdmissionRequest<DynamicObject>, options: ValidationOptions) -> AdmissionResponse {
    let object = match object_value(request.object.as_ref()) {
        Ok(object) => object,
        Err(error) => return errored(request, 400, &error.to_string()),
    };
    let old = match object_value(request.old_object.as_ref()) {
        Ok(old) => old,
        Err(error) => return errored(request, 400, &error.to_string()),
    };
    match request.operation {
        Operation::Delete => {
            let Some(old) = old else { return allowed(request) };
            if !options.deletion_protection {
                return allowed(request);
            }
            match deletion_refusal(&old) {
                Some(message) => {
                    tracing::info!(name = %request.name, namespace = ?request.namespace, user = ?request.user_info.username, %message, "refused a protected StatefulSet deletion");
                    errored(request, 403, &message)
                }
                None => allowed(request),
            }
        }
        Operation::Create | Operation::Update => {
            let Some(raw) = object else { return errored(request, 400, "there is no content to decode") };
            let old = old.filter(|_| request.operation == Operation::Update);
            let errors = match object_version(request, Some(&raw)).as_str() {
                "v1beta1" => check::<v1beta1::StatefulSet>(&raw, old.as_ref(), validate_statefulset_v1beta1),
                "v1alpha1" => {
                    check::<v1alpha1::StatefulSet>(&raw, old.as_ref(), validate_statefulset_v1alpha1)
                }
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
        Operation::Connect => allowed(request),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use serde_json::json;

    use super::*;
    use crate::webhook::admission::parse_review;

    fn request(operation: &str, version: &str, object: Value, old: Value) -> AdmissionRequest<DynamicObject> {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "apps.kruise.io", "version": version, "kind": "StatefulSet"},
                "resource": {"group": "apps.kruise.io", "version": version, "resource": "statefulsets"},
                "name": "web", "namespace": "default", "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object, "oldObject": old,
            }
        });
        parse_review(body.to_string().as_bytes()).unwrap()
    }

    fn statefulset(version: &str, spec: Value) -> Value {
        json!({
            "apiVersion": format!("apps.kruise.io/{version}"), "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default", "uid": "sts-uid"},
            "spec": spec,
        })
    }

    fn minimal_spec() -> Value {
        json!({
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}},
        })
    }

    fn apply(response: &AdmissionResponse, object: &Value) -> Value {
        let mut object = object.clone();
        if let Some(bytes) = &response.patch {
            let patch: json_patch::Patch = serde_json::from_slice(bytes).unwrap();
            json_patch::patch(&mut object, &patch.0).unwrap();
        }
        object
    }

    fn fields(response: &AdmissionResponse) -> Vec<String> {
        response
            .result
            .details
            .as_ref()
            .map(|d| d.causes.iter().map(|c| c.field.clone()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn defaults_of_both_versions() {
        let beta = statefulset("v1beta1", minimal_spec());
        let defaulted = apply(&mutate(&request("CREATE", "v1beta1", beta.clone(), Value::Null)), &beta);
        assert_eq!(defaulted["spec"]["replicas"], 1);
        assert_eq!(defaulted["spec"]["podManagementPolicy"], "OrderedReady");
        assert_eq!(defaulted["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(
            defaulted["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1, "podUpdatePolicy": "ReCreate", "minReadySeconds": 0}})
        );
        assert_eq!(
            defaulted["spec"]["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
        assert_eq!(defaulted["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"], "Always");

        let alpha = statefulset("v1alpha1", minimal_spec());
        let defaulted = apply(&mutate(&request("CREATE", "v1alpha1", alpha.clone(), Value::Null)), &alpha);
        assert_eq!(defaulted["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"], "ReCreate");
        assert!(
            defaulted["spec"].get("persistentVolumeClaimRetentionPolicy").is_none(),
            "not a v1alpha1 field"
        );
        let again = mutate(&request(
            "CREATE",
            "v1beta1",
            apply(&mutate(&request("CREATE", "v1beta1", beta.clone(), Value::Null)), &beta),
            Value::Null,
        ));
        assert!(again.patch.is_none(), "defaulting is idempotent");
    }

    #[test]
    fn template_defaults_only_when_the_template_changed() {
        let mut old = statefulset("v1beta1", minimal_spec());
        old["spec"]["replicas"] = json!(3);
        let mut new = old.clone();
        new["spec"]["replicas"] = json!(4);
        let defaulted = apply(&mutate(&request("UPDATE", "v1beta1", new.clone(), old.clone())), &new);
        assert!(defaulted["spec"]["template"]["spec"]["containers"][0].get("imagePullPolicy").is_none());
        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.26");
        let defaulted = apply(&mutate(&request("UPDATE", "v1beta1", new.clone(), old)), &new);
        assert_eq!(defaulted["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"], "Always");
    }

    /// Each rule of upstream `statefulset_validation.go` that the scenarios exercise, with its
    /// field path.
    #[test]
    fn validation_names_fields() {
        let defaulted = |spec: Value| {
            let object = statefulset("v1beta1", spec);
            apply(&mutate(&request("CREATE", "v1beta1", object.clone(), Value::Null)), &object)
        };
        let with = |change: &dyn Fn(&mut Value)| {
            let mut object = defaulted(minimal_spec());
            change(&mut object);
            validate(&request("CREATE", "v1beta1", object, Value::Null), ValidationOptions::default())
        };
        let cases: Vec<(&str, Box<dyn Fn(&mut Value)>, &str)> = vec![
            ("negative replicas", Box::new(|o| o["spec"]["replicas"] = json!(-1)), "spec.replicas"),
            (
                "selector mismatch",
                Box::new(|o| o["spec"]["selector"] = json!({"matchLabels": {"app": "x"}})),
                "spec.template.metadata.labels",
            ),
            (
                "bad policy",
                Box::new(|o| o["spec"]["podManagementPolicy"] = json!("Random")),
                "spec.podManagementPolicy",
            ),
            (
                "maxUnavailable 2 ordered",
                Box::new(|o| o["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!(2)),
                "spec.updateStrategy.rollingUpdate.maxUnavailable",
            ),
            (
                "negative partition",
                Box::new(|o| o["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(-1)),
                "spec.updateStrategy.rollingUpdate.partition",
            ),
            (
                "in place without the gate",
                Box::new(|o| {
                    o["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"] =
                        json!("InPlaceIfPossible")
                }),
                "spec.template.spec.readinessGates",
            ),
            (
                "bad reserve ordinal",
                Box::new(|o| o["spec"]["reserveOrdinals"] = json!([1, "5-3"])),
                "spec.reserveOrdinals[1]",
            ),
            (
                "restartPolicy",
                Box::new(|o| o["spec"]["template"]["spec"]["restartPolicy"] = json!("Never")),
                "spec.template.spec.restartPolicy",
            ),
            (
                "minReadySeconds too long",
                Box::new(|o| o["spec"]["updateStrategy"]["rollingUpdate"]["minReadySeconds"] = json!(301)),
                "spec.updateStrategy.rollingUpdate.minReadySeconds",
            ),
        ];
        for (name, change, field) in cases {
            let response = with(change.as_ref());
            assert!(!response.allowed, "{name}");
            assert_eq!(response.result.code, 422, "{name}");
            assert!(fields(&response).contains(&field.to_string()), "{name}: {:?}", fields(&response));
        }
        assert!(with(&|_| {}).allowed);
    }

    #[test]
    fn update_rules() {
        let object = {
            let object = statefulset("v1beta1", minimal_spec());
            apply(&mutate(&request("CREATE", "v1beta1", object.clone(), Value::Null)), &object)
        };
        let mut renamed = object.clone();
        renamed["spec"]["serviceName"] = json!("other");
        let response =
            validate(&request("UPDATE", "v1beta1", renamed, object.clone()), ValidationOptions::default());
        assert!(!response.allowed);
        assert!(fields(&response).contains(&"spec.serviceName".to_string()));
        let mut scaled = object.clone();
        scaled["spec"]["replicas"] = json!(5);
        assert!(
            validate(&request("UPDATE", "v1beta1", scaled, object), ValidationOptions::default()).allowed
        );
    }

    #[test]
    fn deletion_protection() {
        let mut protected = statefulset("v1beta1", json!({"replicas": 2}));
        protected["metadata"]["labels"] = json!({"policy.kruise.io/delete-protection": "Cascading"});
        let response = validate(
            &request("DELETE", "v1beta1", Value::Null, protected.clone()),
            ValidationOptions::default(),
        );
        assert_eq!((response.allowed, response.result.code), (false, 403));
        let off = ValidationOptions { deletion_protection: false };
        assert!(validate(&request("DELETE", "v1beta1", Value::Null, protected), off).allowed);
    }
}
