//! Admission for NodePodProbe. Upstream has no webhook for this kind (only the PodProbeMarker
//! controller and the node daemon write it); kruise-rs validates it on CREATE and UPDATE with
//! `kruise_crds::validation::validate_nodepodprobe` so that a hand-written NodePodProbe the
//! daemon could not run is refused at the API with its field paths, as `kruise validate`
//! reports them, instead of being stored and skipped on the node.
//!
//! Status writes go to the status subresource, which this webhook does not see. Every decision
//! is a pure function of the admission request.

use kruise_crds::{apps::v1alpha1::NodePodProbe, validation::validate_nodepodprobe};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};

use super::admission::{allowed, check, errored, invalid, object_value};

const KIND: &str = "NodePodProbe";

/// The validating webhook (`vnodepodprobe.kb.io`): a refusal is a 422 whose causes name each
/// field at fault.
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
    match check::<NodePodProbe>(KIND, &raw, old.as_ref(), validate_nodepodprobe) {
        Ok(errors) if errors.is_empty() => allowed(request),
        Ok(errors) => invalid(request, "apps.kruise.io", KIND, &request.name, &errors),
        Err(message) => errored(request, 400, &message),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::{Value, json};

    use super::*;
    use crate::webhook::admission::parse_review;

    fn request(operation: &str, object: Value) -> AdmissionRequest<DynamicObject> {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "NodePodProbe"},
                "resource": {"group": "apps.kruise.io", "version": "v1alpha1", "resource": "nodepodprobes"},
                "name": "node-1", "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object,
            }
        });
        parse_review(body.to_string().as_bytes()).unwrap()
    }

    fn probe(pod_uid: &str, probe_name: &str, container: &str) -> Value {
        json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "NodePodProbe",
            "metadata": {"name": "node-1"},
            "spec": {"podProbes": [{"name": "web-0", "namespace": "default", "uid": pod_uid, "probes": [{
                "name": probe_name, "containerName": container,
                "probe": {"exec": {"command": ["true"]}},
            }]}]},
        })
    }

    #[test]
    fn valid_node_pod_probes_are_admitted() {
        let response = validate(&request("CREATE", probe("uid-1", "healthy", "main")));
        assert!(response.allowed, "{:?}", response.result);
    }

    #[test]
    fn invalid_node_pod_probes_are_refused_with_each_field_path() {
        let response = validate(&request("UPDATE", probe("", "healthy", "")));
        assert!(!response.allowed);
        assert_eq!(response.result.code, 422);
        let causes: Vec<String> =
            response.result.details.as_ref().unwrap().causes.iter().map(|c| c.field.clone()).collect();
        assert_eq!(causes, ["spec.podProbes[0].uid", "spec.podProbes[0].probes[0].containerName"]);
    }

    #[test]
    fn deletes_are_not_checked() {
        assert!(validate(&request("DELETE", Value::Null)).allowed);
    }
}
