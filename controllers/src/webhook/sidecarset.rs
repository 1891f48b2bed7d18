//! Admission for SidecarSets (upstream `pkg/webhook/sidecarset`): defaulting plus the
//! `kruise.io/sidecarset-hash` / `-hash-without-image` annotations, and validation with the
//! rules of `kruise_crds::validation` at both served versions.
//!
//! Validation has rules that read the cluster (the other SidecarSets, the pinned
//! ControllerRevision, the patch-metadata whitelist). The server reads them into a
//! [`SidecarSetLookups`] (see [`lookups_needed`]); the decision itself is a pure function of
//! the request and the lookups.

use k8s_openapi::api::apps::v1::ControllerRevision;
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    conversion::sidecarset_to_v1beta1,
    defaults::{
        default_sidecarset_v1alpha1, default_sidecarset_v1beta1, set_sidecarset_hash_annotations_v1alpha1,
        set_sidecarset_hash_annotations_v1beta1,
    },
    field::ErrorList,
    resource::APPS_GROUP,
    validation::{
        SidecarSetPatchMetadataWhitelist, sidecarset_conflicts, validate_sidecarset_injection_revision,
        validate_sidecarset_patch_metadata_whitelist, validate_sidecarset_v1alpha1,
        validate_sidecarset_v1beta1,
    },
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::Value;

use super::admission::{allowed, decode, errored, invalid, object_value, object_version, patch_to, patched};

const KIND: &str = "SidecarSet";

/// Switches of SidecarSet admission.
#[derive(Clone, Copy, Debug, Default)]
pub struct SidecarSetAdmission {
    /// Upstream feature gate `SidecarSetPatchPodMetadataDefaultsAllowed`: with it, a missing
    /// whitelist (or one with no rule for the SidecarSet) allows every annotation key.
    pub patch_metadata_defaults_allowed: bool,
}

/// What validation read from the cluster.
#[derive(Clone, Debug, Default)]
pub struct SidecarSetLookups {
    /// Every stored SidecarSet (at v1beta1); the candidate's own stored version is ignored.
    pub others: Vec<v1beta1::SidecarSet>,
    /// The ControllerRevisions the injection strategy may pin (kruise namespace).
    pub revisions: Vec<ControllerRevision>,
    /// The patch-metadata whitelist, `None` when the ConfigMap or its key is absent.
    pub whitelist: Option<SidecarSetPatchMetadataWhitelist>,
}

/// What the server must read before [`validate`] can decide, taken from the request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LookupsNeeded {
    /// List the SidecarSets (every CREATE and UPDATE: the conflict rules).
    pub sidecarsets: bool,
    /// The ControllerRevision named by `injectionStrategy.revision.revisionName`.
    pub revision_name: Option<String>,
    /// The SidecarSet whose revisions carry `injectionStrategy.revision.customVersion`.
    pub custom_version_owner: Option<String>,
    /// Read the whitelist (the SidecarSet patches pod metadata).
    pub whitelist: bool,
}

/// The request's object at v1beta1 (a v1alpha1 object is converted, as upstream does).
fn decode_v1beta1(raw: &Value, version: &str) -> Result<v1beta1::SidecarSet, String> {
    match version {
        "v1beta1" => decode(KIND, raw),
        "v1alpha1" => decode::<v1alpha1::SidecarSet>(KIND, raw).map(|alpha| sidecarset_to_v1beta1(&alpha)),
        other => Err(format!("unsupported version: {other}")),
    }
}

/// What [`validate`] needs read for `request` (nothing for a DELETE or an undecodable object,
/// which [`validate`] answers on its own).
pub fn lookups_needed(request: &AdmissionRequest<DynamicObject>) -> LookupsNeeded {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return LookupsNeeded::default();
    }
    let Ok(Some(raw)) = object_value(request.object.as_ref()) else {
        return LookupsNeeded::default();
    };
    let Ok(sidecarset) = decode_v1beta1(&raw, &object_version(request, Some(&raw))) else {
        return LookupsNeeded::default();
    };
    let pinned = sidecarset.spec.injection_strategy.revision.as_ref();
    let revision_name = pinned.and_then(|revision| revision.revision_name.clone());
    let custom_version_owner = pinned
        .filter(|revision| revision.revision_name.is_none() && revision.custom_version.is_some())
        .and_then(|_| sidecarset.metadata.name.clone());
    LookupsNeeded {
        sidecarsets: true,
        revision_name,
        custom_version_owner,
        whitelist: !sidecarset.spec.patch_pod_metadata.is_empty(),
    }
}

/// The defaulting webhook (CREATE and UPDATE): defaults, then the two hash annotations.
pub fn mutate(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let raw = match object_value(request.object.as_ref()) {
        Ok(Some(raw)) => raw,
        Ok(None) => return errored(request, 400, "there is no content to decode"),
        Err(error) => return errored(request, 400, &error.to_string()),
    };
    let result = match object_version(request, Some(&raw)).as_str() {
        "v1beta1" => decode::<v1beta1::SidecarSet>(KIND, &raw).and_then(|mut sidecarset| {
            let before = sidecarset.clone();
            default_sidecarset_v1beta1(&mut sidecarset);
            set_sidecarset_hash_annotations_v1beta1(&mut sidecarset);
            patch_to(&raw, &before, &sidecarset)
        }),
        "v1alpha1" => decode::<v1alpha1::SidecarSet>(KIND, &raw).and_then(|mut sidecarset| {
            let before = sidecarset.clone();
            default_sidecarset_v1alpha1(&mut sidecarset);
            set_sidecarset_hash_annotations_v1alpha1(&mut sidecarset);
            patch_to(&raw, &before, &sidecarset)
        }),
        other => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match result {
        Ok(patch) => patched(request, patch),
        Err(message) => errored(request, 400, &message),
    }
}

/// The object rules of the request's version, then (when those pass) the rules that involve
/// the cluster, in upstream's order.
fn errors_of(
    raw: &Value,
    old: Option<&Value>,
    version: &str,
    lookups: &SidecarSetLookups,
    options: SidecarSetAdmission,
) -> Result<ErrorList, String> {
    let mut errors = match version {
        "v1beta1" => {
            let object: v1beta1::SidecarSet = decode(KIND, raw)?;
            let old: Option<v1beta1::SidecarSet> = old.map(|old| decode(KIND, old)).transpose()?;
            validate_sidecarset_v1beta1(&object, old.as_ref())
        }
        "v1alpha1" => {
            let object: v1alpha1::SidecarSet = decode(KIND, raw)?;
            let old: Option<v1alpha1::SidecarSet> = old.map(|old| decode(KIND, old)).transpose()?;
            validate_sidecarset_v1alpha1(&object, old.as_ref())
        }
        other => return Err(format!("unsupported version: {other}")),
    };
    let sidecarset = decode_v1beta1(raw, version)?;
    errors.extend(validate_sidecarset_injection_revision(&sidecarset, &lookups.revisions));
    errors.extend(validate_sidecarset_patch_metadata_whitelist(
        &sidecarset,
        lookups.whitelist.as_ref(),
        options.patch_metadata_defaults_allowed,
    ));
    if errors.is_empty() {
        errors = sidecarset_conflicts(&sidecarset, &lookups.others);
    }
    Ok(errors)
}

/// The validating webhook (CREATE and UPDATE): denied with 422 and every field path.
pub fn validate(
    request: &AdmissionRequest<DynamicObject>,
    lookups: &SidecarSetLookups,
    options: SidecarSetAdmission,
) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let (raw, old) = match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref()))
    {
        (Ok(Some(raw)), Ok(old)) => (raw, old.filter(|_| request.operation == Operation::Update)),
        (Ok(None), _) => return errored(request, 400, "there is no content to decode"),
        (Err(error), _) | (_, Err(error)) => return errored(request, 400, &error.to_string()),
    };
    let version = object_version(request, Some(&raw));
    match errors_of(&raw, old.as_ref(), &version, lookups, options) {
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
    use crate::webhook::admission::{into_review, parse_review};

    fn request(version: &str, operation: &str, object: Value) -> AdmissionRequest<DynamicObject> {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "apps.kruise.io", "version": version, "kind": "SidecarSet"},
                "resource": {"group": "apps.kruise.io", "version": version, "resource": "sidecarsets"},
                "name": object["metadata"]["name"], "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object,
            }
        });
        parse_review(body.to_string().as_bytes()).unwrap()
    }

    fn sidecarset(name: &str, app: &str, container: &str) -> Value {
        json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": name},
            "spec": {
                "selector": {"matchLabels": {"app": app}},
                "containers": [{"name": container, "image": "busybox:1.36"}]
            }
        })
    }

    /// A SidecarSet as the API server hands it to validation: after the defaulting webhook.
    fn defaulted(name: &str, app: &str, container: &str) -> Value {
        let object = sidecarset(name, app, container);
        applied(&into_review(mutate(&request("v1beta1", "CREATE", object.clone()))), &object)
    }

    fn applied(review: &Value, object: &Value) -> Value {
        use base64::Engine as _;
        let patch = review["response"]["patch"].as_str().unwrap();
        let patch: json_patch::Patch =
            serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(patch).unwrap())
                .unwrap();
        let mut object = object.clone();
        json_patch::patch(&mut object, &patch.0).unwrap();
        object
    }

    #[test]
    fn defaulting_fills_the_strategy_and_writes_both_hashes_at_either_version() {
        for version in ["v1beta1", "v1alpha1"] {
            let mut object = sidecarset("logs", "web", "agent");
            object["apiVersion"] = json!(format!("apps.kruise.io/{version}"));
            let review = into_review(mutate(&request(version, "CREATE", object.clone())));
            assert_eq!(review["response"]["allowed"], true, "{version}: {review}");
            let defaulted = applied(&review, &object);
            assert_eq!(defaulted["spec"]["updateStrategy"]["type"], "RollingUpdate", "{version}");
            assert_eq!(defaulted["spec"]["containers"][0]["podInjectPolicy"], "BeforeAppContainer");
            assert_eq!(defaulted["spec"]["revisionHistoryLimit"], 10);
            let annotations = &defaulted["metadata"]["annotations"];
            assert!(annotations["kruise.io/sidecarset-hash"].as_str().is_some_and(|hash| !hash.is_empty()));
            assert!(annotations["kruise.io/sidecarset-hash-without-image"].as_str().is_some());
        }
    }

    #[test]
    fn an_image_change_changes_the_hash_but_not_the_hash_without_image() {
        let hashes = |image: &str| {
            let mut object = sidecarset("logs", "web", "agent");
            object["spec"]["containers"][0]["image"] = json!(image);
            let defaulted =
                applied(&into_review(mutate(&request("v1beta1", "CREATE", object.clone()))), &object);
            let annotations = defaulted["metadata"]["annotations"].clone();
            (
                annotations["kruise.io/sidecarset-hash"].clone(),
                annotations["kruise.io/sidecarset-hash-without-image"].clone(),
            )
        };
        let (first, first_without) = hashes("busybox:1.36");
        let (second, second_without) = hashes("busybox:1.37");
        assert_ne!(first, second);
        assert_eq!(first_without, second_without);
    }

    #[test]
    fn an_invalid_sidecarset_is_denied_with_field_paths() {
        let mut object = sidecarset("logs", "web", "agent");
        object["spec"]["selector"] = Value::Null;
        object["spec"]["containers"][0]["podInjectPolicy"] = json!("Sideways");
        let review = into_review(validate(
            &request("v1beta1", "CREATE", object),
            &SidecarSetLookups::default(),
            Default::default(),
        ));
        assert_eq!(review["response"]["allowed"], false);
        assert_eq!(review["response"]["status"]["code"], 422);
        let fields: Vec<&str> = review["response"]["status"]["details"]["causes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|cause| cause["field"].as_str())
            .collect();
        assert!(fields.contains(&"spec.selector"), "{fields:?}");
        assert!(
            fields.iter().any(|field| field.starts_with("spec.containers[0].podInjectPolicy")),
            "{fields:?}"
        );
    }

    #[test]
    fn a_container_name_taken_by_an_overlapping_sidecarset_is_a_conflict() {
        let existing: v1beta1::SidecarSet =
            serde_json::from_value(defaulted("first", "web", "agent")).unwrap();
        let lookups = SidecarSetLookups { others: vec![existing], ..Default::default() };
        let same_pods = request("v1beta1", "CREATE", defaulted("second", "web", "agent"));
        let review = into_review(validate(&same_pods, &lookups, Default::default()));
        assert_eq!(review["response"]["allowed"], false, "{review}");
        assert!(
            review["response"]["status"]["message"].as_str().unwrap().contains("spec.containers"),
            "{review}"
        );

        let other_pods = request("v1beta1", "CREATE", defaulted("second", "db", "agent"));
        assert_eq!(
            into_review(validate(&other_pods, &lookups, Default::default()))["response"]["allowed"],
            true
        );
        let own_update = request("v1beta1", "CREATE", defaulted("first", "web", "agent"));
        assert_eq!(
            into_review(validate(&own_update, &lookups, Default::default()))["response"]["allowed"],
            true
        );
    }

    #[test]
    fn a_pinned_revision_must_exist_and_is_what_the_server_is_asked_to_read() {
        let mut object = defaulted("logs", "web", "agent");
        object["spec"]["injectionStrategy"] = json!({"revision": {"revisionName": "logs-abc"}});
        let create = request("v1beta1", "CREATE", object);
        assert_eq!(
            lookups_needed(&create),
            LookupsNeeded { sidecarsets: true, revision_name: Some("logs-abc".into()), ..Default::default() }
        );
        let review = into_review(validate(&create, &SidecarSetLookups::default(), Default::default()));
        assert_eq!(review["response"]["allowed"], false);
        let revision: ControllerRevision = serde_json::from_value(
            json!({"metadata": {"name": "logs-abc", "namespace": "kruise-system"}, "revision": 1}),
        )
        .unwrap();
        let lookups = SidecarSetLookups { revisions: vec![revision], ..Default::default() };
        assert_eq!(into_review(validate(&create, &lookups, Default::default()))["response"]["allowed"], true);
    }

    #[test]
    fn patched_metadata_needs_the_whitelist_unless_the_defaults_gate_is_on() {
        let mut object = defaulted("logs", "web", "agent");
        object["spec"]["patchPodMetadata"] = json!([{"annotations": {"team": "a"}, "patchPolicy": "Retain"}]);
        let create = request("v1beta1", "CREATE", object);
        assert!(lookups_needed(&create).whitelist);
        let denied = into_review(validate(&create, &SidecarSetLookups::default(), Default::default()));
        assert_eq!(denied["response"]["allowed"], false, "{denied}");
        let gate = SidecarSetAdmission { patch_metadata_defaults_allowed: true };
        assert_eq!(
            into_review(validate(&create, &SidecarSetLookups::default(), gate))["response"]["allowed"],
            true
        );
    }

    #[test]
    fn deletes_are_allowed_without_lookups() {
        let delete = request("v1beta1", "DELETE", defaulted("logs", "web", "agent"));
        assert_eq!(lookups_needed(&delete), LookupsNeeded::default());
        assert_eq!(
            into_review(validate(&delete, &SidecarSetLookups::default(), Default::default()))["response"]["allowed"],
            true
        );
    }
}
