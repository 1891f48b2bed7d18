//! Admission for PodProbeMarker (upstream `pkg/webhook/podprobemarker/validating`): CREATE and
//! UPDATE are checked with `kruise_crds::validation::validate_podprobemarker` (selector
//! required, non-empty and immutable; probe names unique; one handler per probe, a container
//! name, no reserved condition type, Succeeded/Failed marker policies with valid labels and
//! annotations). As upstream, a refusal is a 400 whose message is the aggregated field errors.
//!
//! Every decision is a pure function of the admission request.

use kruise_crds::{apps::v1alpha1::PodProbeMarker, validation::validate_podprobemarker};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::Value;

use super::admission::{aggregate_message, allowed, errored, object_value};

fn decode(raw: &Value) -> Result<PodProbeMarker, String> {
    serde_json::from_value(raw.clone()).map_err(|error| format!("cannot decode the PodProbeMarker: {error}"))
}

/// The validating webhook (`vpodprobemarker.kb.io`).
pub fn validate(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let (raw, old) = match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref()))
    {
        (Ok(Some(raw)), Ok(old)) => (raw, old.filter(|_| request.operation == Operation::Update)),
        (Ok(None), _) => return errored(request, 400, "there is no content to decode"),
        (Err(error), _) | (_, Err(error)) => return errored(request, 400, &error.to_string()),
    };
    let marker = match decode(&raw) {
        Ok(marker) => marker,
        Err(message) => return errored(request, 400, &message),
    };
    let old = match old.as_ref().map(decode).transpose() {
        Ok(old) => old,
        Err(message) => return errored(request, 400, &message),
    };
    // As upstream's `allErrs.ToAggregate()`: each error with its field path.
    let errors = validate_podprobemarker(&marker, old.as_ref());
    if errors.is_empty() { allowed(request) } else { errored(request, 400, &aggregate_message(&errors)) }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;
    use crate::webhook::admission::{into_review, parse_review};

    fn request(operation: &str, object: Value, old: Option<Value>) -> AdmissionRequest<DynamicObject> {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "PodProbeMarker"},
                "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "podprobemarkers"},
                "name": "m", "namespace": "default", "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object,
                "oldObject": old,
            }
        });
        parse_review(body.to_string().as_bytes()).unwrap()
    }

    fn marker(app: &str, condition: &str) -> Value {
        json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
            "metadata": {"name": "m", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}, "probes": [{
                "name": "healthy", "containerName": "app",
                "probe": {"exec": {"command": ["check"]}},
                "podConditionType": condition,
                "markerPolicy": [{"state": "Succeeded", "labels": {"state": "ready"}}]
            }]}
        })
    }

    fn verdict(review: Value) -> (bool, String) {
        (
            review["response"]["allowed"].as_bool().unwrap(),
            review["response"]["status"]["message"].as_str().unwrap_or_default().to_string(),
        )
    }

    #[test]
    fn valid_markers_pass_and_bad_ones_are_refused() {
        let ok = verdict(into_review(validate(&request("CREATE", marker("web", "game.io/healthy"), None))));
        assert_eq!(ok, (true, String::new()));
        let (allowed, message) =
            verdict(into_review(validate(&request("CREATE", marker("web", "Ready"), None))));
        assert!(!allowed);
        assert!(message.contains("podConditionType"), "{message}");
    }

    #[test]
    fn the_selector_is_immutable() {
        let old = marker("web", "game.io/healthy");
        let (allowed, message) =
            verdict(into_review(validate(&request("UPDATE", marker("api", "game.io/healthy"), Some(old)))));
        assert!(!allowed);
        assert!(message.contains("selector"), "{message}");
    }
}
