//! CloneSet admission: defaulting (`/mutate-apps-kruise-io-cloneset`) and validation
//! (`/validate-apps-kruise-io-cloneset`) for both served versions, and the deletion check of
//! the `policy.kruise.io/delete-protection` label (upstream `pkg/webhook/cloneset/**` and
//! `pkg/webhook/util/deletionprotection`).
//!
//! Every decision is a pure function of the admission request (plus, for v1alpha1's
//! `podsToDelete` rule, the pods it names, looked up by the caller first).

use std::collections::BTreeMap;

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{default_cloneset_v1alpha1, default_cloneset_v1beta1},
    field::{ErrorList, FieldError, FieldPath, quoted},
    resource::APPS_GROUP,
    validation::{validate_cloneset_v1alpha1, validate_cloneset_v1beta1},
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::Value;

use super::{
    admission::{allowed, check, default_patch, errored, invalid, object_value, object_version, patched},
    deletion_protection::{ValidationOptions, workload_refusal},
};

/// Kind name used in responses.
const KIND: &str = "CloneSet";

/// The defaulting webhook: the defaults of the object's version as a JSON patch. Pod and PVC
/// template defaults are added on CREATE, and on UPDATE only when the template changed (so an
/// untouched template keeps its revision hash), as upstream without `TemplateNoDefaults`.
///
/// The patch holds only what defaulting changed: it is computed between the decoded object and
/// its defaulted form, so fields this build's types do not know are left as they were.
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
        "v1beta1" => default_patch::<v1beta1::CloneSet>(
            KIND,
            &raw,
            old_raw.as_ref(),
            |cloneset| &cloneset.spec.template,
            default_cloneset_v1beta1,
        ),
        "v1alpha1" => default_patch::<v1alpha1::CloneSet>(
            KIND,
            &raw,
            old_raw.as_ref(),
            |cloneset| &cloneset.spec.template,
            default_cloneset_v1alpha1,
        ),
        other => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match result {
        Ok(patch) => {
            if !patch.0.is_empty() {
                tracing::debug!(name = %request.name, namespace = ?request.namespace, operations = patch.0.len(), "defaulted a CloneSet");
            }
            patched(request, patch)
        }
        Err(message) => errored(request, 400, &message),
    }
}

/// What a lookup of a pod named in v1alpha1 `scaleStrategy.podsToDelete` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodLookup {
    /// The pod exists.
    Found {
        /// It has a deletionTimestamp.
        terminating: bool,
        /// UID of its controller owner, if any.
        controller_uid: Option<String>,
    },
    /// The lookup failed (the text is the API error, e.g. `pods "x" not found`).
    Failed(String),
}

/// The pods a v1alpha1 CREATE/UPDATE newly names in `scaleStrategy.podsToDelete`, which
/// upstream checks exist, are not terminating and belong to this CloneSet. Empty for v1beta1,
/// for other operations and when the list has duplicates (reported without lookups).
pub fn pods_to_look_up(request: &AdmissionRequest<DynamicObject>) -> Vec<String> {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return Vec::new();
    }
    let Ok(Some(raw)) = object_value(request.object.as_ref()) else { return Vec::new() };
    if object_version(request, Some(&raw)) != "v1alpha1" {
        return Vec::new();
    }
    let names = pods_to_delete(&raw);
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    if unique.len() != names.len() {
        return Vec::new();
    }
    let old = if request.operation == Operation::Update {
        object_value(request.old_object.as_ref())
            .ok()
            .flatten()
            .map(|old| pods_to_delete(&old))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    unique.retain(|name| !old.contains(name));
    unique
}

fn pods_to_delete(raw: &Value) -> Vec<String> {
    raw.pointer("/spec/scaleStrategy/podsToDelete")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(|item| item.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// The validating webhook. `pods` holds the lookups of [`pods_to_look_up`]'s names.
pub fn validate(
    request: &AdmissionRequest<DynamicObject>,
    pods: &BTreeMap<String, PodLookup>,
    options: ValidationOptions,
) -> AdmissionResponse {
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
            let Some(old) = old else {
                tracing::info!(name = %request.name, "no old object on a CloneSet DELETE; allowing it");
                return allowed(request);
            };
            if !options.deletion_protection {
                return allowed(request);
            }
            match workload_refusal(&old) {
                Some(message) => {
                    tracing::info!(name = %request.name, namespace = ?request.namespace, user = ?request.user_info.username, %message, "refused a protected CloneSet deletion");
                    errored(request, 403, &message)
                }
                None => allowed(request),
            }
        }
        Operation::Create | Operation::Update => {
            let Some(raw) = object else { return errored(request, 400, "there is no content to decode") };
            let old = old.filter(|_| request.operation == Operation::Update);
            let version = object_version(request, Some(&raw));
            let errors = match version.as_str() {
                "v1beta1" => check::<v1beta1::CloneSet>(KIND, &raw, old.as_ref(), |new, old| {
                    validate_cloneset_v1beta1(new, old)
                }),
                "v1alpha1" => check::<v1alpha1::CloneSet>(KIND, &raw, old.as_ref(), |new, old| {
                    let mut errors = validate_cloneset_v1alpha1(new, old);
                    errors.extend(pods_to_delete_errors(new, pods));
                    errors
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
        Operation::Connect => allowed(request),
    }
}

/// Upstream's v1alpha1 `validateScaleStrategy` lookups, as field errors.
fn pods_to_delete_errors(cloneset: &v1alpha1::CloneSet, pods: &BTreeMap<String, PodLookup>) -> ErrorList {
    let path = FieldPath::root("spec").child("scaleStrategy").child("podsToDelete");
    let uid = cloneset.metadata.uid.clone().unwrap_or_default();
    let mut names: Vec<&String> = pods.keys().collect();
    names.sort();
    names
        .into_iter()
        .filter(|name| cloneset.spec.scale_strategy.pods_to_delete.contains(name))
        .filter_map(|name| {
            let detail = match pods.get(name)? {
                PodLookup::Failed(error) => format!("find pod {name} failed: {error}"),
                PodLookup::Found { terminating: true, .. } => format!("find pod {name} already terminating"),
                PodLookup::Found { controller_uid, .. }
                    if controller_uid.as_deref() != Some(uid.as_str()) || uid.is_empty() =>
                {
                    format!("find pod {name} owner is not this CloneSet")
                }
                PodLookup::Found { .. } => return None,
            };
            Some(FieldError::invalid(&path, quoted(name), detail))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use kruise_crds::common::well_known::DELETE_PROTECTION;
    use serde_json::json;

    use super::*;
    use crate::webhook::admission::{into_review, parse_review};

    fn request(operation: &str, version: &str, object: Value, old: Value) -> AdmissionRequest<DynamicObject> {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "apps.kruise.io", "version": version, "kind": "CloneSet"},
                "resource": {"group": "apps.kruise.io", "version": version, "resource": "clonesets"},
                "name": "web", "namespace": "default", "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object, "oldObject": old,
            }
        });
        parse_review(body.to_string().as_bytes()).unwrap()
    }

    fn cloneset(version: &str, spec: Value) -> Value {
        json!({
            "apiVersion": format!("apps.kruise.io/{version}"), "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default", "uid": "cs-uid"},
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

    #[test]
    fn defaults_follow_the_version() {
        let beta = cloneset("v1beta1", minimal_spec());
        let response = mutate(&request("CREATE", "v1beta1", beta.clone(), Value::Null));
        assert!(response.allowed);
        let defaulted = apply(&response, &beta);
        assert_eq!(defaulted["spec"]["replicas"], 1);
        assert_eq!(defaulted["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(
            defaulted["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "ReCreate", "partition": 0, "maxUnavailable": "20%", "maxSurge": 0}})
        );
        let container = &defaulted["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["imagePullPolicy"], "Always");
        assert_eq!(container["terminationMessagePath"], "/dev/termination-log");

        let alpha = cloneset("v1alpha1", minimal_spec());
        let defaulted = apply(&mutate(&request("CREATE", "v1alpha1", alpha.clone(), Value::Null)), &alpha);
        assert_eq!(defaulted["spec"]["updateStrategy"]["type"], "ReCreate");
        assert_eq!(defaulted["spec"]["updateStrategy"]["maxUnavailable"], "20%");
        assert!(defaulted["spec"]["updateStrategy"].get("rollingUpdate").is_none());
    }

    #[test]
    fn template_defaults_on_update_only_when_the_template_changed() {
        let mut old = cloneset("v1beta1", minimal_spec());
        old["spec"]["replicas"] = json!(3);
        let mut new = old.clone();
        new["spec"]["replicas"] = json!(4);
        let defaulted = apply(&mutate(&request("UPDATE", "v1beta1", new.clone(), old.clone())), &new);
        assert!(defaulted["spec"]["template"]["spec"]["containers"][0].get("imagePullPolicy").is_none());
        assert_eq!(defaulted["spec"]["updateStrategy"]["type"], "RollingUpdate");

        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.26");
        let defaulted = apply(&mutate(&request("UPDATE", "v1beta1", new.clone(), old)), &new);
        assert_eq!(defaulted["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"], "Always");
    }

    #[test]
    fn unknown_fields_survive_defaulting() {
        let mut object = cloneset("v1beta1", minimal_spec());
        object["spec"]["template"]["spec"]["containers"][0]["futureField"] = json!({"x": 1});
        let defaulted = apply(&mutate(&request("CREATE", "v1beta1", object.clone(), Value::Null)), &object);
        assert_eq!(defaulted["spec"]["template"]["spec"]["containers"][0]["futureField"], json!({"x": 1}));
    }

    #[test]
    fn an_already_defaulted_object_gets_no_patch() {
        let object = cloneset("v1beta1", minimal_spec());
        let once = apply(&mutate(&request("CREATE", "v1beta1", object.clone(), Value::Null)), &object);
        let response = mutate(&request("CREATE", "v1beta1", once.clone(), Value::Null));
        assert!(response.allowed);
        assert!(response.patch.is_none(), "{:?}", response.patch.map(String::from_utf8));
    }

    #[test]
    fn mutation_failures_are_answers() {
        let cases = [
            (request("CREATE", "v2", cloneset("v2", minimal_spec()), Value::Null), "unsupported version: v2"),
            (request("CREATE", "v1beta1", Value::Null, Value::Null), "there is no content to decode"),
            (
                request("CREATE", "v1beta1", cloneset("v1beta1", json!({"replicas": "many"})), Value::Null),
                "cannot decode the CloneSet",
            ),
        ];
        for (request, expected) in cases {
            let response = mutate(&request);
            assert!(!response.allowed);
            assert_eq!(response.result.code, 400);
            assert!(response.result.message.contains(expected), "{}", response.result.message);
        }
        assert!(
            mutate(&request("DELETE", "v1beta1", Value::Null, cloneset("v1beta1", minimal_spec()))).allowed
        );
    }

    #[test]
    fn validation_reports_field_paths() {
        let mut spec = minimal_spec();
        spec["replicas"] = json!(-1);
        spec["selector"] = json!({"matchLabels": {"app": "other"}});
        let response = validate(
            &request("CREATE", "v1beta1", cloneset("v1beta1", spec), Value::Null),
            &BTreeMap::new(),
            ValidationOptions::default(),
        );
        assert!(!response.allowed);
        assert_eq!(response.result.code, 422);
        let fields: Vec<String> = response
            .result
            .details
            .as_ref()
            .unwrap()
            .causes
            .iter()
            .map(|cause| cause.field.clone())
            .collect();
        assert!(fields.contains(&"spec.replicas".to_string()), "{fields:?}");
        assert!(fields.contains(&"spec.template.metadata.labels".to_string()), "{fields:?}");
        assert!(response.result.message.starts_with('['), "{}", response.result.message);

        let ok = validate(
            &request("CREATE", "v1beta1", cloneset("v1beta1", minimal_spec()), Value::Null),
            &BTreeMap::new(),
            ValidationOptions::default(),
        );
        assert!(ok.allowed);
    }

    #[test]
    fn in_place_only_rejects_non_image_changes() {
        let mut old_spec = minimal_spec();
        old_spec["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceOnly", "maxUnavailable": 1}});
        let old = cloneset("v1beta1", old_spec);
        let mut image_only = old.clone();
        image_only["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.26");
        let response = validate(
            &request("UPDATE", "v1beta1", image_only, old.clone()),
            &BTreeMap::new(),
            ValidationOptions::default(),
        );
        assert!(response.allowed, "{}", response.result.message);

        let mut env_change = old.clone();
        env_change["spec"]["template"]["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
        let response = validate(
            &request("UPDATE", "v1beta1", env_change, old),
            &BTreeMap::new(),
            ValidationOptions::default(),
        );
        assert!(!response.allowed);
        assert_eq!(response.result.code, 422);
        assert!(
            response.result.message.contains("only allowed to update images"),
            "{}",
            response.result.message
        );
    }

    #[test]
    fn deletion_protection_table() {
        let with = |label: Option<&str>, replicas: i64, deleting: bool| {
            let mut object = cloneset("v1beta1", json!({"replicas": replicas}));
            if let Some(label) = label {
                object["metadata"]["labels"] = json!({DELETE_PROTECTION: label});
            }
            if deleting {
                object["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
            }
            object
        };
        // The label's values are tabled in `deletion_protection`; here the CloneSet review.
        let cascading = validate(
            &request("DELETE", "v1alpha1", Value::Null, with(Some("Cascading"), 3, false)),
            &BTreeMap::new(),
            ValidationOptions::default(),
        );
        assert_eq!(
            cascading.result.message,
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 3>0"
        );
        assert!(
            validate(
                &request("DELETE", "v1beta1", Value::Null, with(Some("Cascading"), 0, false)),
                &BTreeMap::new(),
                ValidationOptions::default()
            )
            .allowed
        );
        assert!(
            validate(
                &request("DELETE", "v1beta1", Value::Null, with(Some("Always"), 3, true)),
                &BTreeMap::new(),
                ValidationOptions::default()
            )
            .allowed
        );
        let protected = with(Some("Always"), 1, false);
        let response = validate(
            &request("DELETE", "v1beta1", Value::Null, protected.clone()),
            &BTreeMap::new(),
            ValidationOptions::default(),
        );
        assert_eq!(response.result.code, 403);
        assert!(!response.allowed);
        let off = ValidationOptions { deletion_protection: false };
        assert!(
            validate(&request("DELETE", "v1beta1", Value::Null, protected), &BTreeMap::new(), off).allowed
        );
        assert!(
            validate(
                &request("DELETE", "v1beta1", Value::Null, Value::Null),
                &BTreeMap::new(),
                ValidationOptions::default()
            )
            .allowed
        );
    }

    #[test]
    fn v1alpha1_pods_to_delete_are_looked_up() {
        let mut old_spec = minimal_spec();
        old_spec["scaleStrategy"] = json!({"podsToDelete": ["web-a"]});
        old_spec["updateStrategy"] = json!({"type": "ReCreate", "maxUnavailable": 1});
        let old = cloneset("v1alpha1", old_spec);
        let mut new = old.clone();
        new["spec"]["scaleStrategy"]["podsToDelete"] = json!(["web-a", "web-b", "web-c", "web-d", "web-e"]);
        let update = request("UPDATE", "v1alpha1", new, old);
        assert_eq!(pods_to_look_up(&update), vec!["web-b", "web-c", "web-d", "web-e"]);

        let pods: BTreeMap<String, PodLookup> = [
            (
                "web-b".to_string(),
                PodLookup::Found { terminating: false, controller_uid: Some("cs-uid".into()) },
            ),
            ("web-c".to_string(), PodLookup::Failed("pods \"web-c\" not found".into())),
            (
                "web-d".to_string(),
                PodLookup::Found { terminating: true, controller_uid: Some("cs-uid".into()) },
            ),
            (
                "web-e".to_string(),
                PodLookup::Found { terminating: false, controller_uid: Some("other".into()) },
            ),
        ]
        .into();
        let response = validate(&update, &pods, ValidationOptions::default());
        assert_eq!(
            response.result.message,
            "[spec.scaleStrategy.podsToDelete: Invalid value: \"web-c\": find pod web-c failed: pods \"web-c\" not found, \
             spec.scaleStrategy.podsToDelete: Invalid value: \"web-d\": find pod web-d already terminating, \
             spec.scaleStrategy.podsToDelete: Invalid value: \"web-e\": find pod web-e owner is not this CloneSet]"
        );

        let mut duplicated = cloneset("v1alpha1", minimal_spec());
        duplicated["spec"]["scaleStrategy"] = json!({"podsToDelete": ["x", "x"]});
        assert!(pods_to_look_up(&request("CREATE", "v1alpha1", duplicated, Value::Null)).is_empty());
        let mut beta = cloneset("v1beta1", minimal_spec());
        beta["spec"]["scaleStrategy"] = json!({"podsToDelete": ["x"]});
        assert!(pods_to_look_up(&request("CREATE", "v1beta1", beta, Value::Null)).is_empty());
    }

    #[test]
    fn responses_serialize_as_reviews() {
        let response =
            mutate(&request("CREATE", "v1beta1", cloneset("v1beta1", minimal_spec()), Value::Null));
        let review = into_review(response);
        assert_eq!(review["response"]["patchType"], "JSONPatch");
        assert!(review["response"]["patch"].is_string());
    }
}
