//! Advanced DaemonSet admission: defaulting (`/mutate-apps-kruise-io-daemonset`) and
//! validation (`/validate-apps-kruise-io-daemonset`) for both served versions (upstream
//! `pkg/webhook/daemonset/**`). Both are registered for CREATE and UPDATE only: upstream has no
//! `policy.kruise.io/delete-protection` check for DaemonSets, so a DELETE is never sent here
//! (and is allowed if it is). The rules live in `kruise_crds` (defaults and validation); this
//! module decodes the review, applies them and answers.

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{default_daemonset_v1alpha1, default_daemonset_v1beta1},
    resource::APPS_GROUP,
    validation::{validate_daemonset_v1alpha1, validate_daemonset_v1beta1},
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde_json::Value;

use super::admission::{
    allowed, check, default_patch, errored, invalid, object_value, object_version, patched,
};

/// Kind name used in responses.
const KIND: &str = "DaemonSet";

/// The defaulting webhook: the defaults of the object's version as a JSON patch. Upstream adds
/// no pod defaults to a DaemonSet's template, so the template is left as written on CREATE and
/// UPDATE alike.
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
        "v1beta1" => default_patch::<v1beta1::DaemonSet>(
            KIND,
            &raw,
            None,
            |set| &set.spec.template,
            |set, _| default_daemonset_v1beta1(set),
        ),
        "v1alpha1" => default_patch::<v1alpha1::DaemonSet>(
            KIND,
            &raw,
            None,
            |set| &set.spec.template,
            |set, _| default_daemonset_v1alpha1(set),
        ),
        other => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match result {
        Ok(patch) => {
            if !patch.0.is_empty() {
                tracing::debug!(name = %request.name, namespace = ?request.namespace, operations = patch.0.len(), "defaulted a DaemonSet");
            }
            patched(request, patch)
        }
        Err(message) => errored(request, 400, &message),
    }
}

/// The validating webhook: CREATE and UPDATE are validated with field paths (422); an update
/// may change everything but the selector. Other operations are allowed.
pub fn validate(request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let (raw, old) = match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref()))
    {
        (Ok(Some(raw)), Ok(old)) => (raw, old),
        (Ok(None), _) => return errored(request, 400, "there is no content to decode"),
        (Err(error), _) | (_, Err(error)) => return errored(request, 400, &error.to_string()),
    };
    let old = old.filter(|_| request.operation == Operation::Update);
    let errors = match object_version(request, Some(&raw)).as_str() {
        "v1beta1" => check::<v1beta1::DaemonSet>(KIND, &raw, old.as_ref(), validate_daemonset_v1beta1),
        "v1alpha1" => check::<v1alpha1::DaemonSet>(KIND, &raw, old.as_ref(), validate_daemonset_v1alpha1),
        other => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match errors {
        Ok(errors) if errors.is_empty() => allowed(request),
        Ok(errors) => {
            let name = raw.pointer("/metadata/name").and_then(Value::as_str).unwrap_or(&request.name);
            tracing::debug!(%name, namespace = ?request.namespace, errors = errors.len(), "refused an invalid DaemonSet");
            invalid(request, APPS_GROUP, KIND, name, &errors)
        }
        Err(message) => errored(request, 400, &message),
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
        review(KIND, "daemonsets", "agent", (operation, version), object, old)
    }

    fn daemonset(version: &str, spec: Value) -> Value {
        json!({
            "apiVersion": format!("apps.kruise.io/{version}"), "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "default", "resourceVersion": "1"},
            "spec": spec,
        })
    }

    fn minimal_spec() -> Value {
        json!({
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "main", "image": "agent:v1"}]},
            },
        })
    }

    fn defaulted(version: &str, spec: Value) -> Value {
        let object = daemonset(version, spec);
        apply(&mutate(&request("CREATE", version, object.clone(), Value::Null)), &object)
    }

    #[test]
    fn defaults_of_both_versions_leave_the_template_alone() {
        for version in ["v1beta1", "v1alpha1"] {
            let object = defaulted(version, minimal_spec());
            assert_eq!(object["spec"]["burstReplicas"], 250, "{version}");
            assert_eq!(object["spec"]["revisionHistoryLimit"], 10, "{version}");
            assert_eq!(
                object["spec"]["updateStrategy"],
                json!({"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Standard", "maxUnavailable": 1, "maxSurge": 0}}),
                "{version}"
            );
            assert_eq!(object["spec"]["template"], minimal_spec()["template"], "{version}: no pod defaults");
            let again = mutate(&request("CREATE", version, object.clone(), Value::Null));
            assert!(again.patch.is_none(), "{version}: defaulting is idempotent");
            assert!(validate(&request("CREATE", version, object, Value::Null)).allowed, "{version}");
        }
    }

    /// Table of the defaulting rules that depend on what the user wrote.
    #[test]
    fn strategy_defaults() {
        let cases: Vec<(&str, &str, Value, Value)> = vec![
            (
                "on delete gets no rolling update",
                "v1beta1",
                json!({"type": "OnDelete"}),
                json!({"type": "OnDelete"}),
            ),
            (
                "a set maxSurge keeps maxUnavailable unset",
                "v1beta1",
                json!({"rollingUpdate": {"maxSurge": "10%"}}),
                json!({"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Standard", "maxSurge": "10%"}}),
            ),
            (
                "in place kept",
                "v1beta1",
                json!({"rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible"}}),
                json!({"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 1, "maxSurge": 0}}),
            ),
            (
                "deprecated Surging becomes Standard with one surge pod",
                "v1alpha1",
                json!({"rollingUpdate": {"rollingUpdateType": "Surging"}}),
                json!({"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Standard", "maxUnavailable": 0, "maxSurge": 1}}),
            ),
        ];
        for (name, version, strategy, expected) in cases {
            let mut spec = minimal_spec();
            spec["updateStrategy"] = strategy;
            assert_eq!(defaulted(version, spec)["spec"]["updateStrategy"], expected, "{name}");
        }
    }

    /// The handler scenarios of upstream `daemonset_create_update_handler_test.go`, as
    /// (name, operation, version, object, old object, `Ok` or the refusal's status code).
    #[test]
    fn handler_scenarios() {
        let valid = |version: &str| defaulted(version, minimal_spec());
        let with = |mut object: Value, change: &dyn Fn(&mut Value)| {
            change(&mut object);
            object
        };
        let new_image =
            |o: &mut Value| o["spec"]["template"]["spec"]["containers"][0]["image"] = json!("agent:v2");
        let other_selector = |o: &mut Value| {
            o["spec"]["selector"] = json!({"matchLabels": {"app": "other"}});
            o["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"});
        };
        let cases: Vec<(&str, &str, &str, Value, Value, Result<(), u16>)> = vec![
            ("v1alpha1 create", "CREATE", "v1alpha1", valid("v1alpha1"), Value::Null, Ok(())),
            (
                "v1alpha1 create invalid",
                "CREATE",
                "v1alpha1",
                with(valid("v1alpha1"), &|o| o["spec"]["selector"] = json!({})),
                Value::Null,
                Err(422),
            ),
            (
                "v1alpha1 update of the template",
                "UPDATE",
                "v1alpha1",
                with(valid("v1alpha1"), &new_image),
                valid("v1alpha1"),
                Ok(()),
            ),
            (
                "v1alpha1 update of the selector",
                "UPDATE",
                "v1alpha1",
                with(valid("v1alpha1"), &other_selector),
                valid("v1alpha1"),
                Err(422),
            ),
            ("v1beta1 create", "CREATE", "v1beta1", valid("v1beta1"), Value::Null, Ok(())),
            (
                "v1beta1 update of template, strategy, burst, history and scale strategy",
                "UPDATE",
                "v1beta1",
                with(valid("v1beta1"), &|o| {
                    new_image(o);
                    o["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
                    o["spec"]["burstReplicas"] = json!(10);
                    o["spec"]["minReadySeconds"] = json!(5);
                    o["spec"]["revisionHistoryLimit"] = json!(3);
                    o["spec"]["scaleStrategy"] = json!({"partitionedScaling": true});
                }),
                valid("v1beta1"),
                Ok(()),
            ),
            (
                "v1beta1 update of the selector",
                "UPDATE",
                "v1beta1",
                with(valid("v1beta1"), &other_selector),
                valid("v1beta1"),
                Err(422),
            ),
            ("unsupported version", "CREATE", "v1gamma1", json!({}), Value::Null, Err(400)),
            (
                "undecodable object",
                "CREATE",
                "v1alpha1",
                json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet", "spec": "not an object"}),
                Value::Null,
                Err(400),
            ),
            ("delete is not checked", "DELETE", "v1beta1", Value::Null, valid("v1beta1"), Ok(())),
        ];
        for (name, operation, version, object, old, want) in cases {
            let response = validate(&request(operation, version, object, old));
            let got = if response.allowed { Ok(()) } else { Err(response.result.code) };
            assert_eq!(got, want, "{name}: {:?}", response.result);
        }
    }

    #[test]
    fn mutate_refuses_what_it_cannot_read() {
        let unsupported = mutate(&request("CREATE", "v1gamma1", json!({"spec": {}}), Value::Null));
        assert_eq!((unsupported.allowed, unsupported.result.code), (false, 400));
        let undecodable = mutate(&request(
            "CREATE",
            "v1beta1",
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet", "spec": 5}),
            Value::Null,
        ));
        assert_eq!((undecodable.allowed, undecodable.result.code), (false, 400));
    }

    /// Refusals name the offending field.
    #[test]
    fn validation_names_fields() {
        let cases: Vec<(&str, &str, Box<dyn Fn(&mut Value)>, &str)> = vec![
            ("empty selector", "v1beta1", Box::new(|o| o["spec"]["selector"] = json!({})), "spec.selector"),
            (
                "selector mismatch",
                "v1beta1",
                Box::new(|o| o["spec"]["selector"] = json!({"matchLabels": {"app": "x"}})),
                "spec.template.metadata.labels",
            ),
            (
                "restart policy",
                "v1alpha1",
                Box::new(|o| o["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure")),
                "spec.template.spec.restartPolicy",
            ),
            (
                "both limits",
                "v1beta1",
                Box::new(|o| o["spec"]["updateStrategy"]["rollingUpdate"]["maxSurge"] = json!(1)),
                "spec.updateStrategy.rollingUpdate.maxSurge",
            ),
            (
                "negative history limit",
                "v1alpha1",
                Box::new(|o| o["spec"]["revisionHistoryLimit"] = json!(-1)),
                "spec.revisionHistoryLimit",
            ),
        ];
        for (name, version, change, field) in cases {
            let mut object = defaulted(version, minimal_spec());
            change(&mut object);
            let response = validate(&request("CREATE", version, object, Value::Null));
            assert_eq!((response.allowed, response.result.code), (false, 422), "{name}");
            assert!(fields(&response).contains(&field.to_string()), "{name}: {:?}", fields(&response));
        }
    }
}
