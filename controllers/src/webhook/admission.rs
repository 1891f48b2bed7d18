//! The AdmissionReview envelope (`admission.k8s.io/v1` and `v1beta1`): decoding a request body
//! and building the answers upstream's controller-runtime handlers give (`Allowed`,
//! `PatchResponseFromRaw`, `Errored(code, err)`), with field errors carried the way the API
//! server reports them (`status.message` plus `details.causes`).

use base64::Engine;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use kruise_crds::{
    document::drop_null_fields,
    field::{ErrorList, FieldError},
};
use kube::core::{
    DynamicObject, Status,
    admission::{AdmissionRequest, AdmissionResponse, AdmissionReview},
    response::{StatusCause, StatusDetails},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

/// The request of a review, or the answer to send when the body is not a review at all.
pub fn parse_review(body: &[u8]) -> Result<AdmissionRequest<DynamicObject>, Box<AdmissionResponse>> {
    if body.is_empty() {
        return Err(Box::new(invalid_review("request body is empty")));
    }
    let review: AdmissionReview<DynamicObject> = serde_json::from_slice(body)
        .map_err(|error| Box::new(invalid_review(&format!("cannot decode the AdmissionReview: {error}"))))?;
    review.try_into().map_err(|_| Box::new(invalid_review("the AdmissionReview has no request")))
}

/// The answer to an undecodable review: denied with 400 and no uid (there is none to copy).
fn invalid_review(message: &str) -> AdmissionResponse {
    let mut response = AdmissionResponse::invalid(message);
    response.result = Status::failure(message, "BadRequest").with_code(400);
    response
}

/// The review to send back for `response`. The patch goes out base64-encoded, as the API
/// server reads a `[]byte` (kube's type would write it as an array of numbers).
pub fn into_review(response: AdmissionResponse) -> Value {
    let patch = response.patch.clone();
    let mut review = serde_json::to_value(response.into_review()).unwrap_or_else(|error| {
        serde_json::json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": "", "allowed": false, "status": {"code": 500, "message": error.to_string()}},
        })
    });
    if let (Some(bytes), Some(response)) = (patch, review.get_mut("response")) {
        response["patch"] = Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
    }
    review
}

/// Allowed, unchanged.
pub fn allowed(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    AdmissionResponse::from(request)
}

/// Allowed with `patch` applied (allowed unchanged when the patch is empty).
pub fn patched(request: &AdmissionRequest<DynamicObject>, patch: json_patch::Patch) -> AdmissionResponse {
    if patch.0.is_empty() {
        return allowed(request);
    }
    match AdmissionResponse::from(request).with_patch(patch) {
        Ok(response) => response,
        Err(error) => errored(request, 500, &error.to_string()),
    }
}

/// Denied with an HTTP-style code and a message, as controller-runtime's `Errored`; the reason
/// is the one Kubernetes pairs with the code.
pub fn errored(request: &AdmissionRequest<DynamicObject>, code: u16, message: &str) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request).deny(message);
    response.result = Status::failure(message, reason_for(code)).with_code(code);
    response
}

/// Denied with 422 `Invalid`: the message is the errors joined as Kubernetes' aggregate error
/// prints them (`a` alone, `[a, b]` for several, duplicates once), and every error is a cause
/// naming its field, so clients see each field path.
pub fn invalid(
    request: &AdmissionRequest<DynamicObject>,
    group: &str,
    kind: &str,
    name: &str,
    errors: &ErrorList,
) -> AdmissionResponse {
    let mut response = errored(request, 422, &aggregate_message(errors));
    response.result.details = Some(StatusDetails {
        name: name.to_string(),
        group: group.to_string(),
        kind: kind.to_string(),
        uid: String::new(),
        causes: errors.iter().map(cause).collect(),
        retry_after_seconds: 0,
    });
    response
}

/// Kubernetes' `utilerrors.NewAggregate(errs).Error()`: one error as is, several deduplicated,
/// comma-separated and bracketed.
pub fn aggregate_message(errors: &ErrorList) -> String {
    let mut seen: Vec<String> = Vec::new();
    for error in errors {
        let text = error.to_string();
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen.remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}

fn cause(error: &FieldError) -> StatusCause {
    StatusCause {
        reason: error.kind.reason().to_string(),
        message: error.message(),
        field: error.path.to_string(),
    }
}

fn reason_for(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        403 => "Forbidden",
        404 => "NotFound",
        409 => "Conflict",
        422 => "Invalid",
        _ => "InternalError",
    }
}

/// The request's object as JSON (None when absent, e.g. on DELETE).
pub fn object_value(object: Option<&DynamicObject>) -> Result<Option<Value>, serde_json::Error> {
    object.map(serde_json::to_value).transpose()
}

/// The version of an admitted object: its own `apiVersion` when it says one, else the
/// request's resource version (upstream dispatches on the latter; they agree for CRDs).
pub fn object_version(request: &AdmissionRequest<DynamicObject>, object: Option<&Value>) -> String {
    object
        .and_then(|value| value.get("apiVersion"))
        .and_then(Value::as_str)
        .and_then(|api_version| api_version.rsplit_once('/').map(|(_, version)| version.to_string()))
        .unwrap_or_else(|| request.resource.version.clone())
}

/// The JSON patch that turns `raw` (a `kind`) into its defaulted form (only what defaulting
/// changed, so fields this build does not know are left as they were), for the workloads whose
/// defaults are a pure function of the typed object.
pub fn default_patch<T: DeserializeOwned + Serialize>(
    kind: &str,
    raw: &Value,
    old_raw: Option<&Value>,
    template: fn(&T) -> &PodTemplateSpec,
    apply_defaults: impl Fn(&mut T, bool),
) -> Result<json_patch::Patch, String> {
    let mut object: T = decode(kind, raw)?;
    let inject_template_defaults = match old_raw {
        Some(old_raw) => {
            let old: T = decode(kind, old_raw)?;
            template(&object) != template(&old)
        }
        None => true,
    };
    let before = serde_json::to_value(&object).map_err(|error| error.to_string())?;
    apply_defaults(&mut object, inject_template_defaults);
    patch_to(raw, &before, &object)
}

/// The JSON patch from `raw` to `after`, diffed from `before` (the typed round trip of `raw`)
/// so that fields the types do not know are left alone. The decoded form can differ from what
/// was sent, and the patch must apply to what was sent: when it does not, the patch is the
/// diff from `raw` itself.
pub fn patch_to<B: Serialize, A: Serialize>(
    raw: &Value,
    before: &B,
    after: &A,
) -> Result<json_patch::Patch, String> {
    let before = serde_json::to_value(before).map_err(|error| error.to_string())?;
    let after = serde_json::to_value(after).map_err(|error| error.to_string())?;
    let patch = json_patch::diff(&before, &after);
    let mut probe = raw.clone();
    if json_patch::patch(&mut probe, &patch.0).is_ok() {
        Ok(patch)
    } else {
        Ok(json_patch::diff(raw, &after))
    }
}

/// Decodes an admitted `kind` leniently, as upstream's decoder does: fields this build does not
/// know are ignored, `null` members count as absent.
pub fn decode<T: DeserializeOwned>(kind: &str, raw: &Value) -> Result<T, String> {
    let mut value = raw.clone();
    drop_null_fields(&mut value);
    serde_json::from_value(value).map_err(|error| format!("cannot decode the {kind}: {error}"))
}

/// Decodes the object (and the old one of an update) and runs `validate` on them.
pub fn check<T: DeserializeOwned>(
    kind: &str,
    raw: &Value,
    old_raw: Option<&Value>,
    validate: impl Fn(&T, Option<&T>) -> ErrorList,
) -> Result<ErrorList, String> {
    let object: T = decode(kind, raw)?;
    let old: Option<T> = old_raw.map(|old| decode(kind, old)).transpose()?;
    Ok(validate(&object, old.as_ref()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use kruise_crds::field::FieldPath;
    use serde_json::json;

    use super::*;

    fn request() -> AdmissionRequest<DynamicObject> {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1beta1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u-1",
                "kind": {"group": "apps.kruise.io", "version": "v1beta1", "kind": "CloneSet"},
                "resource": {"group": "apps.kruise.io", "version": "v1beta1", "resource": "clonesets"},
                "name": "web", "namespace": "default", "operation": "CREATE",
                "userInfo": {"username": "admin"},
                "object": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": "web"}},
            }
        });
        parse_review(body.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn bad_bodies_are_answered_not_panicked_on() {
        for (body, expected) in [
            ("", "request body is empty"),
            ("{", "cannot decode the AdmissionReview"),
            (r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#, "has no request"),
            (r#"{"request": 5}"#, "cannot decode"),
        ] {
            let response = parse_review(body.as_bytes()).unwrap_err();
            assert!(!response.allowed, "{body}");
            assert_eq!(response.result.code, 400, "{body}");
            assert!(response.result.message.contains(expected), "{body}: {}", response.result.message);
        }
    }

    #[test]
    fn the_review_version_is_echoed() {
        let request = request();
        let review = into_review(allowed(&request));
        assert_eq!(review["apiVersion"], "admission.k8s.io/v1beta1");
        assert_eq!(review["response"]["uid"], "u-1");
        assert_eq!(review["response"]["allowed"], true);
    }

    #[test]
    fn the_object_version_comes_from_the_object() {
        let request = request();
        let object = object_value(request.object.as_ref()).unwrap();
        assert_eq!(object_version(&request, object.as_ref()), "v1alpha1");
        assert_eq!(object_version(&request, None), "v1beta1");
    }

    #[test]
    fn field_errors_become_an_aggregate_message_and_causes() {
        let spec = FieldPath::root("spec");
        let cases: Vec<(ErrorList, &str)> = vec![
            (vec![], ""),
            (
                vec![FieldError::invalid(&spec.child("replicas"), -1, "must be greater than or equal to 0")],
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                vec![
                    FieldError::required(&spec.child("selector"), ""),
                    FieldError::required(&spec.child("selector"), ""),
                    FieldError::forbidden(&spec.child("template"), "no"),
                ],
                "[spec.selector: Required value, spec.template: Forbidden: no]",
            ),
        ];
        for (errors, expected) in cases {
            assert_eq!(aggregate_message(&errors), expected);
        }
        let errors = vec![FieldError::required(&spec.child("selector"), "")];
        let response = invalid(&request(), "apps.kruise.io", "CloneSet", "web", &errors);
        let review = into_review(response);
        assert_eq!(review["response"]["allowed"], false);
        assert_eq!(review["response"]["status"]["code"], 422);
        assert_eq!(review["response"]["status"]["reason"], "Invalid");
        assert_eq!(review["response"]["status"]["message"], "spec.selector: Required value");
        assert_eq!(
            review["response"]["status"]["details"]["causes"],
            json!([{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.selector"}])
        );
    }

    #[test]
    fn empty_patches_are_plain_allows() {
        let request = request();
        let response = patched(&request, json_patch::Patch(vec![]));
        assert!(response.patch.is_none());
        let patch: json_patch::Patch =
            serde_json::from_value(json!([{"op": "add", "path": "/spec", "value": {}}])).unwrap();
        let review = into_review(patched(&request, patch));
        assert_eq!(review["response"]["patchType"], "JSONPatch");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(review["response"]["patch"].as_str().unwrap())
            .unwrap();
        let sent: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(sent, json!([{"op": "add", "path": "/spec", "value": {}}]));
    }
}
