//! Admission of ContainerRecreateRequests (upstream
//! `pkg/webhook/containerrecreaterequest/mutating`, webhook `mcontainerrecreaterequest.kb.io`).
//! Upstream has one mutating webhook that does everything, and so does this one:
//!
//! - UPDATE: the spec and the `crr.apps.kruise.io/pod-uid` / `node-name` labels are immutable
//!   (and, at v1alpha1, the unready-acquired annotation once set);
//! - CREATE: the request is validated (pod name, containers, deadlines, failure policy), then
//!   defaulted (`strategy: {}`, `failurePolicy: Fail`), then the target pod is looked up and
//!   copied in: labels `crr.apps.kruise.io/{pod-uid,node-name,active}`, the termination grace
//!   period, and per container `preStop`, `ports` and `statusContext {containerID,
//!   restartCount}`. A pod that does not exist, is not running on a node, or lacks a named
//!   container is refused here, so such a request never reaches a node daemon.
//!
//! Every refusal is a 422 `Invalid` whose causes name the field (`spec.podName`,
//! `spec.containers[1].name`, ...). The decision is a pure function of the request and of the
//! pod and node the server looked up ([`pod_to_look_up`], [`PodLookup`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{
        default_containerrecreaterequest_v1alpha1, default_containerrecreaterequest_v1beta1,
        inject_pod_into_containerrecreaterequest_v1alpha1, inject_pod_into_containerrecreaterequest_v1beta1,
    },
    document::drop_null_fields,
    field::{ErrorList, FieldError, FieldPath, quoted},
    resource::APPS_GROUP,
    validation::{validate_containerrecreaterequest_v1alpha1, validate_containerrecreaterequest_v1beta1},
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::admission::{allowed, errored, invalid, object_value, object_version, patch_to, patched};

const KIND: &str = "ContainerRecreateRequest";

/// What the server found for the request's pod (and its node).
#[derive(Clone, Debug)]
pub enum PodLookup {
    /// The pod, and the labels of its node when the pod is bound and the node exists.
    Found {
        /// The pod as read from the API.
        pod: Box<Pod>,
        /// Its node's labels; `None` when the node could not be found.
        node_labels: Option<BTreeMap<String, String>>,
    },
    /// No pod of that name in the request's namespace.
    NotFound,
    /// The lookup failed (the API server did not answer): the request is refused with 500,
    /// as upstream, rather than admitted unchecked.
    Failed(String),
}

/// The `(namespace, pod name)` the server must look up before calling [`mutate`]: only a
/// CREATE needs the pod, and only when the request names one.
pub fn pod_to_look_up(request: &AdmissionRequest<DynamicObject>) -> Option<(String, String)> {
    if request.operation != Operation::Create {
        return None;
    }
    let object = object_value(request.object.as_ref()).ok().flatten()?;
    let pod = object.pointer("/spec/podName").and_then(Value::as_str).filter(|name| !name.is_empty())?;
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| request.namespace.clone())
        .unwrap_or_default();
    Some((namespace, pod.to_string()))
}

fn decode<T: DeserializeOwned>(raw: &Value) -> Result<T, String> {
    let mut value = raw.clone();
    drop_null_fields(&mut value);
    serde_json::from_value(value).map_err(|error| format!("cannot decode the {KIND}: {error}"))
}

/// The refusal when the pod could not be used at all (missing, or its node missing).
fn pod_error(pod: &str, detail: String) -> FieldError {
    FieldError { detail, ..FieldError::not_found(&FieldPath::root("spec").child("podName"), quoted(pod)) }
}

/// What one version of the kind needs from this module.
struct VersionOps<T> {
    validate: fn(&T, Option<&T>) -> ErrorList,
    default: fn(&mut T),
    inject: fn(&mut T, &Pod, Option<&BTreeMap<String, String>>) -> ErrorList,
}

const V1BETA1: VersionOps<v1beta1::ContainerRecreateRequest> = VersionOps {
    validate: validate_containerrecreaterequest_v1beta1,
    default: default_containerrecreaterequest_v1beta1,
    inject: inject_pod_into_containerrecreaterequest_v1beta1,
};

const V1ALPHA1: VersionOps<v1alpha1::ContainerRecreateRequest> = VersionOps {
    validate: validate_containerrecreaterequest_v1alpha1,
    default: default_containerrecreaterequest_v1alpha1,
    inject: inject_pod_into_containerrecreaterequest_v1alpha1,
};

/// The outcome of one admission, before it is put in a response.
enum Outcome {
    Allowed,
    Patch(json_patch::Patch),
    Invalid(ErrorList),
    Errored(u16, String),
}

fn admit<T: DeserializeOwned + Serialize + Clone>(
    ops: &VersionOps<T>,
    operation: &Operation,
    raw: &Value,
    old: Option<&Value>,
    lookup: Option<&PodLookup>,
    namespace: &str,
) -> Outcome {
    let object: T = match decode(raw) {
        Ok(object) => object,
        Err(message) => return Outcome::Errored(400, message),
    };
    if *operation == Operation::Update {
        let Some(old) = old else { return Outcome::Errored(400, "the old object is missing".into()) };
        let old: T = match decode(old) {
            Ok(old) => old,
            Err(message) => return Outcome::Errored(400, message),
        };
        let errors = (ops.validate)(&object, Some(&old));
        return if errors.is_empty() { Outcome::Allowed } else { Outcome::Invalid(errors) };
    }
    let errors = (ops.validate)(&object, None);
    if !errors.is_empty() {
        return Outcome::Invalid(errors);
    }
    let mut mutated = object.clone();
    (ops.default)(&mut mutated);
    let pod_name = raw.pointer("/spec/podName").and_then(Value::as_str).unwrap_or_default();
    let (pod, node_labels) = match lookup {
        Some(PodLookup::Found { pod, node_labels }) => (pod, node_labels),
        Some(PodLookup::NotFound) => {
            return Outcome::Invalid(vec![pod_error(
                pod_name,
                format!("no Pod named {} in namespace {}", quoted(pod_name), quoted(namespace)),
            )]);
        }
        Some(PodLookup::Failed(message)) => {
            return Outcome::Errored(500, format!("failed to find Pod {pod_name}: {message}"));
        }
        None => return Outcome::Errored(500, "the Pod was not looked up".into()),
    };
    let node_name = pod.spec.as_ref().and_then(|spec| spec.node_name.clone()).unwrap_or_default();
    if !node_name.is_empty() && node_labels.is_none() {
        return Outcome::Invalid(vec![pod_error(
            pod_name,
            format!("the Pod's node {} does not exist", quoted(&node_name)),
        )]);
    }
    let errors = (ops.inject)(&mut mutated, pod, node_labels.as_ref());
    if !errors.is_empty() {
        return Outcome::Invalid(errors);
    }
    match patch_to(raw, &object, &mutated) {
        Ok(patch) => Outcome::Patch(patch),
        Err(message) => Outcome::Errored(500, message),
    }
}

/// The mutating webhook (CREATE and UPDATE, both versions). `lookup` is what the server found
/// for [`pod_to_look_up`] (None when it named nothing to look up).
pub fn mutate(request: &AdmissionRequest<DynamicObject>, lookup: Option<&PodLookup>) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let (raw, old) = match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref()))
    {
        (Ok(Some(raw)), Ok(old)) => (raw, old),
        (Ok(None), _) => return errored(request, 400, "there is no content to decode"),
        (Err(error), _) | (_, Err(error)) => return errored(request, 400, &error.to_string()),
    };
    let namespace = raw
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .or(request.namespace.as_deref())
        .unwrap_or_default();
    let operation = &request.operation;
    let outcome = match object_version(request, Some(&raw)).as_str() {
        "v1beta1" => admit(&V1BETA1, operation, &raw, old.as_ref(), lookup, namespace),
        "v1alpha1" => admit(&V1ALPHA1, operation, &raw, old.as_ref(), lookup, namespace),
        other => return errored(request, 400, &format!("unsupported version: {other}")),
    };
    match outcome {
        Outcome::Allowed => allowed(request),
        Outcome::Patch(patch) => {
            tracing::debug!(namespace = ?request.namespace, name = %request.name, "ContainerRecreateRequest filled in from its Pod");
            patched(request, patch)
        }
        Outcome::Invalid(errors) => {
            let name = raw
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .filter(|name| !name.is_empty())
                .unwrap_or(&request.name);
            tracing::info!(namespace = ?request.namespace, name, errors = errors.len(), "ContainerRecreateRequest refused");
            invalid(request, APPS_GROUP, KIND, name, &errors)
        }
        Outcome::Errored(code, message) => errored(request, code, &message),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use base64::Engine;
    use k8s_openapi::api::core::v1::{
        Container, ContainerStatus, ExecAction, Lifecycle, LifecycleHandler, PodSpec, PodStatus,
    };
    use serde_json::json;

    use super::*;
    use crate::webhook::admission::{into_review, parse_review};

    fn request(
        operation: &str,
        version: &str,
        object: Value,
        old: Option<Value>,
    ) -> AdmissionRequest<DynamicObject> {
        let mut body = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "apps.kruise.io", "version": version, "kind": KIND},
                "resource": {"group": "apps.kruise.io", "version": version, "resource": "containerrecreaterequests"},
                "name": "restart", "namespace": "default", "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object,
            }
        });
        if let Some(old) = old {
            body["request"]["oldObject"] = old;
        }
        parse_review(body.to_string().as_bytes()).unwrap()
    }

    fn crr(version: &str, containers: &[&str]) -> Value {
        json!({
            "apiVersion": format!("apps.kruise.io/{version}"), "kind": KIND,
            "metadata": {"name": "restart", "namespace": "default"},
            "spec": {
                "podName": "web-0",
                "containers": containers.iter().map(|name| json!({"name": name})).collect::<Vec<_>>(),
            }
        })
    }

    fn pod() -> Pod {
        Pod {
            metadata: kube::api::ObjectMeta {
                name: Some("web-0".into()),
                namespace: Some("default".into()),
                uid: Some("uid-1".into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: Some("node-1".into()),
                termination_grace_period_seconds: Some(20),
                containers: vec![
                    Container {
                        name: "app".into(),
                        lifecycle: Some(Lifecycle {
                            pre_stop: Some(LifecycleHandler {
                                exec: Some(ExecAction { command: Some(vec!["sleep".into(), "1".into()]) }),
                                ..Default::default()
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                    Container { name: "sidecar".into(), ..Default::default() },
                ],
                ..Default::default()
            }),
            status: Some(PodStatus {
                phase: Some("Running".into()),
                container_statuses: Some(vec![
                    ContainerStatus {
                        name: "app".into(),
                        container_id: Some("containerd://a1".into()),
                        restart_count: 3,
                        ..Default::default()
                    },
                    ContainerStatus {
                        name: "sidecar".into(),
                        container_id: Some("containerd://s1".into()),
                        ..Default::default()
                    },
                ]),
                ..Default::default()
            }),
        }
    }

    fn found() -> PodLookup {
        PodLookup::Found { pod: Box::new(pod()), node_labels: Some(BTreeMap::new()) }
    }

    fn applied(review: &Value, object: &Value) -> Value {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(review["response"]["patch"].as_str().unwrap())
            .unwrap();
        let patch: json_patch::Patch = serde_json::from_slice(&bytes).unwrap();
        let mut object = object.clone();
        json_patch::patch(&mut object, &patch.0).unwrap();
        object
    }

    #[test]
    fn only_creates_with_a_pod_name_are_looked_up() {
        let create = request("CREATE", "v1beta1", crr("v1beta1", &["app"]), None);
        assert_eq!(pod_to_look_up(&create), Some(("default".into(), "web-0".into())));
        let update = request("UPDATE", "v1beta1", crr("v1beta1", &["app"]), Some(crr("v1beta1", &["app"])));
        assert_eq!(pod_to_look_up(&update), None);
        let mut nameless = crr("v1beta1", &["app"]);
        nameless["spec"]["podName"] = json!("");
        assert_eq!(pod_to_look_up(&request("CREATE", "v1beta1", nameless, None)), None);
    }

    #[test]
    fn a_create_is_defaulted_and_filled_from_the_pod_at_both_versions() {
        for version in ["v1beta1", "v1alpha1"] {
            let object = crr(version, &["app", "sidecar"]);
            let review =
                into_review(mutate(&request("CREATE", version, object.clone(), None), Some(&found())));
            assert_eq!(review["response"]["allowed"], true, "{version}: {review}");
            let mutated = applied(&review, &object);
            assert_eq!(
                mutated["metadata"]["labels"],
                json!({
                    "crr.apps.kruise.io/active": "true",
                    "crr.apps.kruise.io/node-name": "node-1",
                    "crr.apps.kruise.io/pod-uid": "uid-1",
                }),
                "{version}"
            );
            assert_eq!(
                mutated["spec"]["strategy"],
                json!({"failurePolicy": "Fail", "terminationGracePeriodSeconds": 20}),
                "{version}"
            );
            assert_eq!(
                mutated["spec"]["containers"],
                json!([
                    {"name": "app", "preStop": {"exec": {"command": ["sleep", "1"]}},
                     "statusContext": {"containerID": "containerd://a1", "restartCount": 3}},
                    {"name": "sidecar", "statusContext": {"containerID": "containerd://s1", "restartCount": 0}},
                ]),
                "{version}"
            );
        }
    }

    /// (case, object, lookup, expected code, expected message fragment)
    #[test]
    fn bad_creates_are_refused_with_field_paths() {
        let mut duplicate = crr("v1beta1", &["app", "app"]);
        duplicate["spec"]["activeDeadlineSeconds"] = json!(1);
        let mut short_deadline = crr("v1beta1", &["app"]);
        short_deadline["spec"]["activeDeadlineSeconds"] = json!(2);
        let mut bad_policy = crr("v1beta1", &["app"]);
        bad_policy["spec"]["strategy"] = json!({"failurePolicy": "Sometimes"});
        let mut preset = crr("v1beta1", &["app"]);
        preset["spec"]["containers"][0]["statusContext"] = json!({"containerID": "x", "restartCount": 0});
        let mut unscheduled = pod();
        unscheduled.spec.as_mut().unwrap().node_name = None;
        let cases: Vec<(&str, Value, PodLookup, u16, &str)> = vec![
            (
                "missing pod",
                crr("v1beta1", &["app"]),
                PodLookup::NotFound,
                422,
                "spec.podName: Not found: \"web-0\": no Pod named \"web-0\" in namespace \"default\"",
            ),
            (
                "missing container",
                crr("v1beta1", &["app", "db"]),
                found(),
                422,
                "spec.containers[1].name: Not found: \"db\": no container of that name in Pod web-0 (containers: app, sidecar)",
            ),
            (
                "duplicate container",
                duplicate,
                found(),
                422,
                "spec.containers[1].name: Duplicate value: \"app\"",
            ),
            ("no containers", crr("v1beta1", &[]), found(), 422, "spec.containers: Required value"),
            ("short deadline", short_deadline, found(), 422, "spec.activeDeadlineSeconds: Invalid value: 2"),
            ("unknown policy", bad_policy, found(), 422, "spec.strategy.failurePolicy: Unsupported value"),
            ("read-only field", preset, found(), 422, "spec.containers[0].statusContext: Forbidden"),
            (
                "pending pod",
                crr("v1beta1", &["app"]),
                PodLookup::Found { pod: Box::new(unscheduled), node_labels: None },
                422,
                "not allowed to recreate containers in a pending Pod",
            ),
            (
                "missing node",
                crr("v1beta1", &["app"]),
                PodLookup::Found { pod: Box::new(pod()), node_labels: None },
                422,
                "the Pod's node \"node-1\" does not exist",
            ),
            ("lookup failed", crr("v1beta1", &["app"]), PodLookup::Failed("timeout".into()), 500, "timeout"),
        ];
        for (case, object, lookup, code, fragment) in cases {
            let review = into_review(mutate(&request("CREATE", "v1beta1", object, None), Some(&lookup)));
            assert_eq!(review["response"]["allowed"], false, "{case}");
            assert_eq!(review["response"]["status"]["code"], code, "{case}");
            let message = review["response"]["status"]["message"].as_str().unwrap();
            assert!(message.contains(fragment), "{case}: {message}");
            if code == 422 {
                assert!(
                    !review["response"]["status"]["details"]["causes"][0]["field"]
                        .as_str()
                        .unwrap()
                        .is_empty(),
                    "{case}"
                );
            }
        }
    }

    #[test]
    fn updates_keep_the_spec_and_the_identity_labels() {
        let mut old = crr("v1beta1", &["app"]);
        old["metadata"]["labels"] =
            json!({"crr.apps.kruise.io/pod-uid": "uid-1", "crr.apps.kruise.io/active": "true"});
        let mut finished = old.clone();
        finished["metadata"]["labels"] = json!({"crr.apps.kruise.io/pod-uid": "uid-1"});
        let review = into_review(mutate(&request("UPDATE", "v1beta1", finished, Some(old.clone())), None));
        assert_eq!(review["response"]["allowed"], true, "removing the active label is allowed");

        let mut respec = old.clone();
        respec["spec"]["containers"] = json!([{"name": "sidecar"}]);
        let review = into_review(mutate(&request("UPDATE", "v1beta1", respec, Some(old.clone())), None));
        assert_eq!(review["response"]["allowed"], false);
        assert!(review["response"]["status"]["message"].as_str().unwrap().contains("spec: Forbidden"));

        let mut moved = old.clone();
        moved["metadata"]["labels"]["crr.apps.kruise.io/pod-uid"] = json!("uid-2");
        let review = into_review(mutate(&request("UPDATE", "v1beta1", moved, Some(old)), None));
        assert_eq!(review["response"]["allowed"], false);
        assert!(
            review["response"]["status"]["message"]
                .as_str()
                .unwrap()
                .contains("metadata.labels[crr.apps.kruise.io/pod-uid]"),
            "{review}"
        );
    }
}
