//! Advanced StatefulSet admission: defaulting (`/mutate-apps-kruise-io-statefulset`) and
//! validation (`/validate-apps-kruise-io-statefulset`) for both served versions, and the
//! deletion check of the `policy.kruise.io/delete-protection` label (upstream
//! `pkg/webhook/statefulset/**`). The rules themselves live in `kruise_crds` (defaults and
//! validation); this module decodes the review, applies them and answers. With the gate
//! `StatefulSetAutoResizePVCGate` ([`StatefulSetAdmission`]) `volumeClaimUpdateStrategy` is
//! defaulted and claim template updates are checked, including the StorageClass of a resized
//! template, which the server looks up ([`storage_classes_to_look_up`]) before validating.

use std::collections::BTreeMap;

use k8s_openapi::api::storage::v1::StorageClass;
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{
        default_statefulset_v1alpha1, default_statefulset_v1beta1,
        default_statefulset_volume_claim_update_strategy,
    },
    field::ErrorList,
    resource::APPS_GROUP,
    validation::{
        StorageClassLookup, resized_claim_templates, validate_claim_template_expansion,
        validate_statefulset_v1alpha1, validate_statefulset_v1beta1,
        validate_statefulset_volume_claim_templates_update,
    },
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::Value;

use super::{
    admission::{
        allowed, check, decode, default_patch, errored, invalid, object_value, object_version, patched,
    },
    deletion_protection::{ValidationOptions, workload_refusal},
};

/// Kind name used in responses.
const KIND: &str = "StatefulSet";

/// What the feature gates change in StatefulSet admission.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatefulSetAdmission {
    /// Gate `StatefulSetAutoResizePVCGate` (off by default): `volumeClaimUpdateStrategy.type`
    /// defaults to `OnDelete`, and with `OnPodRollingUpdate` claim templates may only change in
    /// size, on a StorageClass that allows expansion.
    pub auto_resize_pvc: bool,
}

/// The StorageClasses the validating webhook needs, by `storageClassName` (`None`: the
/// cluster's default class).
pub type StorageClasses = BTreeMap<Option<String>, StorageClassLookup>;

/// The StorageClasses of the claim templates a v1beta1 UPDATE resizes (`None` for the default
/// class), for the server to look up; empty without the gate or when nothing is resized.
pub fn storage_classes_to_look_up(
    request: &AdmissionRequest<DynamicObject>,
    admission: StatefulSetAdmission,
) -> Vec<Option<String>> {
    if !admission.auto_resize_pvc || request.operation != Operation::Update {
        return Vec::new();
    }
    let (Ok(Some(raw)), Ok(Some(old_raw))) =
        (object_value(request.object.as_ref()), object_value(request.old_object.as_ref()))
    else {
        return Vec::new();
    };
    if object_version(request, Some(&raw)) != "v1beta1" {
        return Vec::new();
    }
    let (Ok(new), Ok(old)) =
        (decode::<v1beta1::StatefulSet>(KIND, &raw), decode::<v1beta1::StatefulSet>(KIND, &old_raw))
    else {
        return Vec::new();
    };
    let mut classes: Vec<Option<String>> =
        resized_claim_templates(&new.spec, &old.spec).into_iter().map(|c| c.storage_class).collect();
    classes.sort();
    classes.dedup();
    classes
}

/// Annotation naming the cluster's default StorageClass.
const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";

/// Reads the StorageClass `name`, or with `None` the cluster's default one, for the validating
/// webhook.
pub async fn look_up_storage_class(client: &kube::Client, name: Option<&str>) -> StorageClassLookup {
    let api: kube::Api<StorageClass> = kube::Api::all(client.clone());
    let found = match name {
        Some(name) => api.get_opt(name).await.map(|class| class.into_iter().collect::<Vec<_>>()),
        None => api.list(&Default::default()).await.map(|list| list.items),
    };
    match found {
        Ok(classes) => classify_storage_class(name, &classes),
        Err(error) => {
            tracing::warn!(class = ?name, %error, "cannot read the StorageClass of a resized claim template");
            StorageClassLookup::Failed
        }
    }
}

/// What the webhook makes of the StorageClasses read for `name`: the named class (missing:
/// unreadable), or for `None` the default one, the newest of those annotated as the default
/// (upstream `GetDefaultStorageClass`; none: nothing to check).
fn classify_storage_class(name: Option<&str>, classes: &[StorageClass]) -> StorageClassLookup {
    let class = match name {
        Some(name) => classes.iter().find(|class| class.metadata.name.as_deref() == Some(name)),
        None => default_storage_class(classes),
    };
    match (class, name) {
        (Some(class), _) => StorageClassLookup::Found {
            name: class.metadata.name.clone().unwrap_or_default(),
            allow_volume_expansion: class.allow_volume_expansion,
        },
        (None, None) => StorageClassLookup::NoDefault,
        (None, Some(_)) => StorageClassLookup::Failed,
    }
}

fn default_storage_class(classes: &[StorageClass]) -> Option<&StorageClass> {
    classes
        .iter()
        .filter(|class| {
            class
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(DEFAULT_CLASS_ANNOTATION))
                .map(String::as_str)
                == Some("true")
        })
        .max_by(|a, b| a.metadata.creation_timestamp.cmp(&b.metadata.creation_timestamp))
}

/// The v1beta1 checks of the `StatefulSetAutoResizePVCGate` gate on an update: claim templates
/// change only in size, on StorageClasses that allow expansion (a class missing from `classes`
/// counts as unreadable).
fn validate_claim_templates_update(
    new: &v1beta1::StatefulSet,
    old: &v1beta1::StatefulSet,
    classes: &StorageClasses,
) -> ErrorList {
    let mut errors = validate_statefulset_volume_claim_templates_update(&new.spec, &old.spec);
    let resized: Vec<_> = resized_claim_templates(&new.spec, &old.spec)
        .into_iter()
        .map(|claim| {
            let lookup = classes.get(&claim.storage_class).cloned().unwrap_or(StorageClassLookup::Failed);
            (claim, lookup)
        })
        .collect();
    errors.extend(validate_claim_template_expansion(&resized));
    errors
}

/// The defaulting webhook: the defaults of the object's version as a JSON patch. Pod and PVC
/// template defaults are added on CREATE, and on UPDATE only when the template changed (so an
/// untouched template keeps its revision hash), as upstream without `TemplateNoDefaults`.
pub fn mutate(
    request: &AdmissionRequest<DynamicObject>,
    admission: StatefulSetAdmission,
) -> AdmissionResponse {
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
            KIND,
            &raw,
            old_raw.as_ref(),
            |set| &set.spec.template,
            |set, inject| {
                default_statefulset_v1beta1(set, inject);
                if admission.auto_resize_pvc {
                    default_statefulset_volume_claim_update_strategy(&mut set.spec);
                }
            },
        ),
        "v1alpha1" => default_patch::<v1alpha1::StatefulSet>(
            KIND,
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

/// The validating webhook: CREATE and UPDATE are validated with field paths (422); DELETE is
/// refused (403) while `policy.kruise.io/delete-protection` forbids it. `classes` holds what the
/// server found for [`storage_classes_to_look_up`].
pub fn validate(
    request: &AdmissionRequest<DynamicObject>,
    options: ValidationOptions,
    admission: StatefulSetAdmission,
    classes: &StorageClasses,
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
            let Some(old) = old else { return allowed(request) };
            if !options.deletion_protection {
                return allowed(request);
            }
            match workload_refusal(&old) {
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
                "v1beta1" => check::<v1beta1::StatefulSet>(KIND, &raw, old.as_ref(), |new, old| {
                    let mut errors = validate_statefulset_v1beta1(new, old);
                    if let (true, Some(old)) = (admission.auto_resize_pvc, old) {
                        errors.extend(validate_claim_templates_update(new, old, classes));
                    }
                    errors
                }),
                "v1alpha1" => {
                    check::<v1alpha1::StatefulSet>(KIND, &raw, old.as_ref(), validate_statefulset_v1alpha1)
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
    use crate::webhook::testing::{apply, fields, review};

    fn request(operation: &str, version: &str, object: Value, old: Value) -> AdmissionRequest<DynamicObject> {
        review("StatefulSet", "statefulsets", "web", (operation, version), object, old)
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

    fn mutate_off(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        mutate(request, StatefulSetAdmission::default())
    }

    fn validate_off(
        request: &AdmissionRequest<DynamicObject>,
        options: ValidationOptions,
    ) -> AdmissionResponse {
        validate(request, options, StatefulSetAdmission::default(), &StorageClasses::new())
    }

    #[test]
    fn defaults_of_both_versions() {
        let beta = statefulset("v1beta1", minimal_spec());
        let defaulted = apply(&mutate_off(&request("CREATE", "v1beta1", beta.clone(), Value::Null)), &beta);
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
        let defaulted =
            apply(&mutate_off(&request("CREATE", "v1alpha1", alpha.clone(), Value::Null)), &alpha);
        assert_eq!(defaulted["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"], "ReCreate");
        assert!(
            defaulted["spec"].get("persistentVolumeClaimRetentionPolicy").is_none(),
            "not a v1alpha1 field"
        );
        let again = mutate_off(&request(
            "CREATE",
            "v1beta1",
            apply(&mutate_off(&request("CREATE", "v1beta1", beta.clone(), Value::Null)), &beta),
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
        let defaulted = apply(&mutate_off(&request("UPDATE", "v1beta1", new.clone(), old.clone())), &new);
        assert!(defaulted["spec"]["template"]["spec"]["containers"][0].get("imagePullPolicy").is_none());
        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.26");
        let defaulted = apply(&mutate_off(&request("UPDATE", "v1beta1", new.clone(), old)), &new);
        assert_eq!(defaulted["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"], "Always");
    }

    /// Each rule of upstream `statefulset_validation.go` that the scenarios exercise, with its
    /// field path.
    #[test]
    fn validation_names_fields() {
        let defaulted = |spec: Value| {
            let object = statefulset("v1beta1", spec);
            apply(&mutate_off(&request("CREATE", "v1beta1", object.clone(), Value::Null)), &object)
        };
        let with = |change: &dyn Fn(&mut Value)| {
            let mut object = defaulted(minimal_spec());
            change(&mut object);
            validate_off(&request("CREATE", "v1beta1", object, Value::Null), ValidationOptions::default())
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
            apply(&mutate_off(&request("CREATE", "v1beta1", object.clone(), Value::Null)), &object)
        };
        let mut renamed = object.clone();
        renamed["spec"]["serviceName"] = json!("other");
        let response = validate_off(
            &request("UPDATE", "v1beta1", renamed, object.clone()),
            ValidationOptions::default(),
        );
        assert!(!response.allowed);
        assert!(fields(&response).contains(&"spec.serviceName".to_string()));
        let mut scaled = object.clone();
        scaled["spec"]["replicas"] = json!(5);
        assert!(
            validate_off(&request("UPDATE", "v1beta1", scaled, object), ValidationOptions::default()).allowed
        );
    }

    fn with_claim(storage: &str, class: Option<&str>) -> Value {
        let mut spec = minimal_spec();
        spec["volumeClaimUpdateStrategy"] = json!({"type": "OnPodRollingUpdate"});
        spec["volumeClaimTemplates"] = json!([{
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
        }]);
        if let Some(class) = class {
            spec["volumeClaimTemplates"][0]["spec"]["storageClassName"] = json!(class);
        }
        let object = statefulset("v1beta1", spec);
        let gate = StatefulSetAdmission { auto_resize_pvc: true };
        apply(&mutate(&request("CREATE", "v1beta1", object.clone(), Value::Null), gate), &object)
    }

    #[test]
    fn volume_claim_update_strategy_defaulted_only_with_the_gate() {
        let object = statefulset("v1beta1", minimal_spec());
        let on = StatefulSetAdmission { auto_resize_pvc: true };
        let defaulted =
            apply(&mutate(&request("CREATE", "v1beta1", object.clone(), Value::Null), on), &object);
        assert_eq!(defaulted["spec"]["volumeClaimUpdateStrategy"], json!({"type": "OnDelete"}));
        let defaulted =
            apply(&mutate_off(&request("CREATE", "v1beta1", object.clone(), Value::Null)), &object);
        assert!(defaulted["spec"].get("volumeClaimUpdateStrategy").is_none(), "{}", defaulted["spec"]);
        let kept = with_claim("1Gi", None);
        assert_eq!(kept["spec"]["volumeClaimUpdateStrategy"], json!({"type": "OnPodRollingUpdate"}));
    }

    /// Upstream `ValidateVolumeClaimTemplateUpdate`, only with the gate: size changes need a
    /// StorageClass that does not forbid expansion; anything else is refused.
    #[test]
    fn claim_template_updates_with_the_gate() {
        let on = StatefulSetAdmission { auto_resize_pvc: true };
        let found = |allow: Option<bool>| StorageClassLookup::Found {
            name: "fast".into(),
            allow_volume_expansion: allow,
        };
        let old = with_claim("1Gi", Some("fast"));
        let resized = with_claim("2Gi", Some("fast"));
        let update = request("UPDATE", "v1beta1", resized.clone(), old.clone());
        assert_eq!(storage_classes_to_look_up(&update, on), [Some("fast".to_string())]);
        assert!(storage_classes_to_look_up(&update, StatefulSetAdmission::default()).is_empty());
        let storage = "spec.volumeClaimTemplates[0].spec.resources.requests.storage";
        let class_path = "spec.volumeClaimTemplates[0].spec.storageClassName";
        let cases: Vec<(&str, Option<StorageClassLookup>, bool, Option<&str>)> = vec![
            ("expansion allowed", Some(found(Some(true))), true, None),
            ("expansion unset", Some(found(None)), true, None),
            ("expansion forbidden", Some(found(Some(false))), false, Some(storage)),
            ("class unreadable", Some(StorageClassLookup::Failed), false, Some(class_path)),
            ("class not looked up", None, false, Some(class_path)),
        ];
        for (name, lookup, allowed, field) in cases {
            let classes: StorageClasses = lookup.into_iter().map(|l| (Some("fast".to_string()), l)).collect();
            let response = validate(&update, ValidationOptions::default(), on, &classes);
            assert_eq!(response.allowed, allowed, "{name}: {:?}", fields(&response));
            if let Some(field) = field {
                assert!(fields(&response).contains(&field.to_string()), "{name}: {:?}", fields(&response));
            }
        }
        let forbidden: StorageClasses = [(Some("fast".to_string()), found(Some(false)))].into();
        assert!(
            validate(&update, ValidationOptions::default(), StatefulSetAdmission::default(), &forbidden)
                .allowed,
            "without the gate nothing is checked"
        );

        // The default class (no storageClassName): none annotated means nothing to check.
        let (old_default, new_default) = (with_claim("1Gi", None), with_claim("2Gi", None));
        let update = request("UPDATE", "v1beta1", new_default, old_default);
        assert_eq!(storage_classes_to_look_up(&update, on), [None]);
        let none: StorageClasses = [(None, StorageClassLookup::NoDefault)].into();
        assert!(validate(&update, ValidationOptions::default(), on, &none).allowed);

        // More than the size, or renamed: refused whatever the class.
        let mut modes = resized.clone();
        modes["spec"]["volumeClaimTemplates"][0]["spec"]["accessModes"] = json!(["ReadWriteMany"]);
        let mut renamed = old.clone();
        renamed["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] = json!("logs");
        for (object, field) in
            [(modes, "spec.volumeClaimTemplates[0]"), (renamed, "spec.volumeClaimTemplates[0].metadata.name")]
        {
            let update = request("UPDATE", "v1beta1", object, old.clone());
            assert!(storage_classes_to_look_up(&update, on).is_empty());
            let response = validate(&update, ValidationOptions::default(), on, &StorageClasses::new());
            assert!(!response.allowed);
            assert!(fields(&response).contains(&field.to_string()), "{:?}", fields(&response));
        }
    }

    #[test]
    fn storage_classes_named_or_the_newest_default() {
        let class = |name: &str, default: bool, created: &str, allow: Option<bool>| -> StorageClass {
            serde_json::from_value(json!({
                "metadata": {
                    "name": name, "creationTimestamp": created,
                    "annotations": {DEFAULT_CLASS_ANNOTATION: if default { "true" } else { "false" }}
                },
                "provisioner": "x",
                "allowVolumeExpansion": allow,
            }))
            .unwrap()
        };
        let classes = [
            class("old", true, "2024-01-01T00:00:00Z", Some(false)),
            class("new", true, "2025-01-01T00:00:00Z", Some(true)),
            class("newest-not-default", false, "2026-01-01T00:00:00Z", None),
        ];
        let found = |name: &str, allow: Option<bool>| StorageClassLookup::Found {
            name: name.into(),
            allow_volume_expansion: allow,
        };
        let cases: Vec<(Option<&str>, &[StorageClass], StorageClassLookup)> = vec![
            (None, &classes, found("new", Some(true))),
            (None, &classes[2..], StorageClassLookup::NoDefault),
            (Some("old"), &classes, found("old", Some(false))),
            (Some("newest-not-default"), &classes, found("newest-not-default", None)),
            (Some("gone"), &classes, StorageClassLookup::Failed),
        ];
        for (name, classes, expected) in cases {
            assert_eq!(classify_storage_class(name, classes), expected, "{name:?}");
        }
    }

    #[test]
    fn deletion_protection() {
        let mut protected = statefulset("v1beta1", json!({"replicas": 2}));
        protected["metadata"]["labels"] = json!({"policy.kruise.io/delete-protection": "Cascading"});
        let response = validate_off(
            &request("DELETE", "v1beta1", Value::Null, protected.clone()),
            ValidationOptions::default(),
        );
        assert_eq!((response.allowed, response.result.code), (false, 403));
        let off = ValidationOptions { deletion_protection: false };
        assert!(validate_off(&request("DELETE", "v1beta1", Value::Null, protected), off).allowed);
    }
}
