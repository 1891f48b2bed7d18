//! Admission for the Job kinds (upstream `pkg/webhook/broadcastjob`,
//! `pkg/webhook/advancedcronjob`, `pkg/webhook/ephemeraljob`): defaulting and validation of
//! BroadcastJob and AdvancedCronJob at both served versions, and validation of EphemeralJob
//! (v1alpha1 only; upstream has no defaulting webhook for it), with the rules of
//! `kruise_crds::defaults` and `kruise_crds::validation`.
//!
//! Pod template defaults are added on CREATE, and on UPDATE only when `spec.template` changed,
//! as upstream without `TemplateNoDefaults`. Every decision is a pure function of the request.

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{
        default_advancedcronjob_v1alpha1, default_advancedcronjob_v1beta1, default_broadcastjob_v1alpha1,
        default_broadcastjob_v1beta1,
    },
    document::drop_null_fields,
    field::ErrorList,
    resource::APPS_GROUP,
    validation::{
        validate_advancedcronjob_v1alpha1, validate_advancedcronjob_v1beta1, validate_broadcastjob_v1alpha1,
        validate_broadcastjob_v1beta1, validate_ephemeraljob,
    },
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::admission::{allowed, errored, invalid, object_value, object_version, patch_to, patched};

/// One of the Job kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// `broadcastjobs`.
    BroadcastJob,
    /// `advancedcronjobs`.
    AdvancedCronJob,
    /// `ephemeraljobs` (validation only).
    EphemeralJob,
}

impl JobKind {
    /// The kind's name.
    pub fn kind(self) -> &'static str {
        match self {
            Self::BroadcastJob => "BroadcastJob",
            Self::AdvancedCronJob => "AdvancedCronJob",
            Self::EphemeralJob => "EphemeralJob",
        }
    }
}

fn decode<T: DeserializeOwned>(raw: &Value, kind: JobKind) -> Result<T, String> {
    let mut value = raw.clone();
    drop_null_fields(&mut value);
    serde_json::from_value(value).map_err(|error| format!("cannot decode the {}: {error}", kind.kind()))
}

/// Whether `spec.template` differs between the object and its previous version: the only case,
/// besides CREATE, where pod template defaults are added.
fn template_changed(raw: &Value, old: Option<&Value>) -> bool {
    old.is_none_or(|old| raw.pointer("/spec/template") != old.pointer("/spec/template"))
}

/// The JSON patch from `raw` to its defaulted form.
fn default_patch<T: DeserializeOwned + Serialize>(
    raw: &Value,
    old: Option<&Value>,
    kind: JobKind,
    apply_defaults: fn(&mut T, bool),
) -> Result<json_patch::Patch, String> {
    let mut object: T = decode(raw, kind)?;
    let before = serde_json::to_value(&object).map_err(|error| error.to_string())?;
    apply_defaults(&mut object, template_changed(raw, old));
    patch_to(raw, &before, &object)
}

/// The raw object and, on UPDATE, the raw old object of a CREATE or UPDATE review; the answer
/// to send instead when the review carries no usable object (boxed: a response is large).
fn objects(
    request: &AdmissionRequest<DynamicObject>,
) -> Result<(Value, Option<Value>), Box<AdmissionResponse>> {
    match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref())) {
        (Ok(Some(raw)), Ok(old)) => Ok((raw, old.filter(|_| request.operation == Operation::Update))),
        (Ok(None), _) => Err(Box::new(errored(request, 400, "there is no content to decode"))),
        (Err(error), _) | (_, Err(error)) => Err(Box::new(errored(request, 400, &error.to_string()))),
    }
}

/// The defaulting webhook of `kind` (CREATE and UPDATE); EphemeralJob has none upstream, so it
/// is allowed unchanged.
pub fn mutate(kind: JobKind, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let (raw, old) = match objects(request) {
        Ok(objects) => objects,
        Err(response) => return *response,
    };
    let old = old.as_ref();
    let result = match (kind, object_version(request, Some(&raw)).as_str()) {
        (JobKind::BroadcastJob, "v1beta1") => {
            default_patch::<v1beta1::BroadcastJob>(&raw, old, kind, default_broadcastjob_v1beta1)
        }
        (JobKind::BroadcastJob, "v1alpha1") => {
            default_patch::<v1alpha1::BroadcastJob>(&raw, old, kind, default_broadcastjob_v1alpha1)
        }
        (JobKind::AdvancedCronJob, "v1beta1") => {
            default_patch::<v1beta1::AdvancedCronJob>(&raw, old, kind, default_advancedcronjob_v1beta1)
        }
        (JobKind::AdvancedCronJob, "v1alpha1") => {
            default_patch::<v1alpha1::AdvancedCronJob>(&raw, old, kind, default_advancedcronjob_v1alpha1)
        }
        (JobKind::EphemeralJob, _) => return allowed(request),
        (_, other) => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match result {
        Ok(patch) => patched(request, patch),
        Err(message) => errored(request, 400, &message),
    }
}

fn check<T: DeserializeOwned>(
    raw: &Value,
    old: Option<&Value>,
    kind: JobKind,
    validate: fn(&T, Option<&T>) -> ErrorList,
) -> Result<ErrorList, String> {
    let object: T = decode(raw, kind)?;
    let old: Option<T> = old.map(|old| decode(old, kind)).transpose()?;
    Ok(validate(&object, old.as_ref()))
}

/// The validating webhook of `kind` (CREATE and UPDATE; field errors with paths).
pub fn validate(kind: JobKind, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let (raw, old) = match objects(request) {
        Ok(objects) => objects,
        Err(response) => return *response,
    };
    let old = old.as_ref();
    let errors = match (kind, object_version(request, Some(&raw)).as_str()) {
        (JobKind::BroadcastJob, "v1beta1") => check(&raw, old, kind, validate_broadcastjob_v1beta1),
        (JobKind::BroadcastJob, "v1alpha1") => check(&raw, old, kind, validate_broadcastjob_v1alpha1),
        (JobKind::AdvancedCronJob, "v1beta1") => check(&raw, old, kind, validate_advancedcronjob_v1beta1),
        (JobKind::AdvancedCronJob, "v1alpha1") => check(&raw, old, kind, validate_advancedcronjob_v1alpha1),
        (JobKind::EphemeralJob, "v1alpha1") => check(&raw, old, kind, validate_ephemeraljob),
        (_, other) => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match errors {
        Ok(errors) if errors.is_empty() => allowed(request),
        Ok(errors) => {
            let name = raw.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(&request.name);
            invalid(request, APPS_GROUP, kind.kind(), name, &errors)
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

    fn request(
        kind: &str,
        version: &str,
        operation: &str,
        object: Value,
        old: Option<Value>,
    ) -> AdmissionRequest<DynamicObject> {
        let resource = format!("{}s", kind.to_lowercase());
        let body = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "apps.kruise.io", "version": version, "kind": kind},
                "resource": {"group": "apps.kruise.io", "version": version, "resource": resource},
                "name": "job", "namespace": "default", "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object,
                "oldObject": old,
            }
        });
        parse_review(body.to_string().as_bytes()).unwrap()
    }

    fn patched_object(review: &Value, object: &Value) -> Value {
        assert_eq!(review["response"]["allowed"], true, "{review}");
        let patch = review["response"]["patch"].as_str().map(|encoded| {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).unwrap();
            serde_json::from_slice::<json_patch::Patch>(&bytes).unwrap()
        });
        let mut object = object.clone();
        if let Some(patch) = patch {
            json_patch::patch(&mut object, &patch.0).unwrap();
        }
        object
    }

    fn broadcast_job(version: &str, spec: Value) -> Value {
        json!({
            "apiVersion": format!("apps.kruise.io/{version}"), "kind": "BroadcastJob",
            "metadata": {"name": "job", "namespace": "default"},
            "spec": spec,
        })
    }

    fn pod_template() -> Value {
        json!({"spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl"}]}})
    }

    #[test]
    fn broadcast_jobs_get_upstream_defaults_at_both_versions() {
        for version in ["v1alpha1", "v1beta1"] {
            let job = broadcast_job(version, json!({"template": pod_template()}));
            let review = into_review(mutate(
                JobKind::BroadcastJob,
                &request("BroadcastJob", version, "CREATE", job.clone(), None),
            ));
            let defaulted = patched_object(&review, &job);
            assert_eq!(defaulted["spec"]["completionPolicy"]["type"], "Always", "{version}");
            assert_eq!(defaulted["spec"]["failurePolicy"]["type"], "FailFast", "{version}");
            assert_eq!(defaulted["spec"]["parallelism"], i32::MAX, "{version}");
            let container = &defaulted["spec"]["template"]["spec"]["containers"][0];
            assert_eq!(container["terminationMessagePath"], "/dev/termination-log", "{version}");
        }
    }

    #[test]
    fn template_defaults_are_added_on_update_only_when_the_template_changed() {
        let old = broadcast_job("v1beta1", json!({"template": pod_template(), "paused": false}));
        let unchanged = broadcast_job("v1beta1", json!({"template": pod_template(), "paused": true}));
        let review = into_review(mutate(
            JobKind::BroadcastJob,
            &request("BroadcastJob", "v1beta1", "UPDATE", unchanged.clone(), Some(old.clone())),
        ));
        let defaulted = patched_object(&review, &unchanged);
        assert!(
            defaulted["spec"]["template"]["spec"]["containers"][0].get("terminationMessagePath").is_none()
        );

        let mut changed_template = pod_template();
        changed_template["spec"]["containers"][0]["image"] = json!("perl:5");
        let changed = broadcast_job("v1beta1", json!({"template": changed_template}));
        let review = into_review(mutate(
            JobKind::BroadcastJob,
            &request("BroadcastJob", "v1beta1", "UPDATE", changed.clone(), Some(old)),
        ));
        let defaulted = patched_object(&review, &changed);
        assert_eq!(
            defaulted["spec"]["template"]["spec"]["containers"][0]["terminationMessagePath"],
            "/dev/termination-log"
        );
    }

    #[test]
    fn invalid_broadcast_jobs_are_refused_with_field_paths() {
        let mut template = pod_template();
        template["spec"]["restartPolicy"] = json!("Always");
        let job = broadcast_job("v1beta1", json!({"template": template, "parallelism": -1}));
        let review = into_review(validate(
            JobKind::BroadcastJob,
            &request("BroadcastJob", "v1beta1", "CREATE", job, None),
        ));
        assert_eq!(review["response"]["allowed"], false);
        assert_eq!(review["response"]["status"]["code"], 422);
        let message = review["response"]["status"]["message"].as_str().unwrap();
        assert!(message.contains("spec.template.spec.restartPolicy"), "{message}");
    }

    fn cron_job(version: &str, schedule: &str) -> Value {
        json!({
            "apiVersion": format!("apps.kruise.io/{version}"), "kind": "AdvancedCronJob",
            "metadata": {"name": "cron", "namespace": "default"},
            "spec": {"schedule": schedule, "template": {"broadcastJobTemplate": {"spec": {"template": pod_template()}}}},
        })
    }

    #[test]
    fn advanced_cron_jobs_are_defaulted_and_their_schedule_validated() {
        for version in ["v1alpha1", "v1beta1"] {
            let job = cron_job(version, "*/1 * * * *");
            let review = into_review(mutate(
                JobKind::AdvancedCronJob,
                &request("AdvancedCronJob", version, "CREATE", job.clone(), None),
            ));
            let defaulted = patched_object(&review, &job);
            assert_eq!(defaulted["spec"]["concurrencyPolicy"], "Allow", "{version}");
            assert_eq!(defaulted["spec"]["successfulJobsHistoryLimit"], 3, "{version}");
            assert_eq!(defaulted["spec"]["failedJobsHistoryLimit"], 1, "{version}");
            let review = into_review(validate(
                JobKind::AdvancedCronJob,
                &request("AdvancedCronJob", version, "CREATE", defaulted, None),
            ));
            assert_eq!(review["response"]["allowed"], true, "{version}: {review}");

            let bad = cron_job(version, "every minute");
            let review = into_review(validate(
                JobKind::AdvancedCronJob,
                &request("AdvancedCronJob", version, "CREATE", bad, None),
            ));
            assert_eq!(review["response"]["allowed"], false, "{version}");
            let message = review["response"]["status"]["message"].as_str().unwrap();
            assert!(message.contains("spec.schedule"), "{version}: {message}");
        }
    }

    #[test]
    fn ephemeral_jobs_are_validated_and_not_mutated() {
        let job = json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "EphemeralJob",
            "metadata": {"name": "debug", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"ephemeralContainers": []}},
        });
        let review = into_review(mutate(
            JobKind::EphemeralJob,
            &request("EphemeralJob", "v1alpha1", "CREATE", job.clone(), None),
        ));
        assert_eq!(review["response"]["allowed"], true);
        assert!(review["response"].get("patch").is_none_or(Value::is_null));
        let review = into_review(validate(
            JobKind::EphemeralJob,
            &request("EphemeralJob", "v1alpha1", "CREATE", job, None),
        ));
        assert_eq!(review["response"]["allowed"], false, "{review}");
        let message = review["response"]["status"]["message"].as_str().unwrap();
        assert!(message.contains("spec.template.ephemeralContainers"), "{message}");
    }
}
