//! The CRD conversion webhook (`/convert`): ConversionReview (`apiextensions.k8s.io/v1`, and
//! `v1beta1` echoed back in kind) for every Kruise kind served at v1alpha1 and v1beta1, through
//! the lossless conversions of `kruise_crds::conversion` (v1beta1 is the hub).
//!
//! Only what a conversion may change is taken from the converted object: spec, status, labels
//! and annotations. The rest of the metadata is returned exactly as sent, as the API server
//! requires.

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    conversion,
    document::drop_null_fields,
    policy,
    resource::{APPS_GROUP, POLICY_GROUP},
};
use kube::core::{
    Status,
    conversion::{ConversionRequest, ConversionResponse, ConversionReview},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

/// One kind's two conversions, on JSON.
struct KindConverter {
    group: &'static str,
    kind: &'static str,
    to_v1beta1: fn(&Value) -> Result<Value, String>,
    to_v1alpha1: fn(&Value) -> Result<Value, String>,
}

macro_rules! converters {
    ($( $group:expr, $kind:literal: $alpha:ty => $beta:ty, $up:path, $down:path; )+) => {
        &[ $( KindConverter {
            group: $group,
            kind: $kind,
            to_v1beta1: |value| typed::<$alpha, $beta>(value, $up),
            to_v1alpha1: |value| typed::<$beta, $alpha>(value, $down),
        }, )+ ]
    };
}

/// Every kind served at both versions.
const CONVERTERS: &[KindConverter] = converters! {
    APPS_GROUP, "CloneSet": v1alpha1::CloneSet => v1beta1::CloneSet, conversion::cloneset_to_v1beta1, conversion::cloneset_to_v1alpha1;
    APPS_GROUP, "StatefulSet": v1alpha1::StatefulSet => v1beta1::StatefulSet, conversion::statefulset_to_v1beta1, conversion::statefulset_to_v1alpha1;
    APPS_GROUP, "DaemonSet": v1alpha1::DaemonSet => v1beta1::DaemonSet, conversion::daemonset_to_v1beta1, conversion::daemonset_to_v1alpha1;
    APPS_GROUP, "SidecarSet": v1alpha1::SidecarSet => v1beta1::SidecarSet, conversion::sidecarset_to_v1beta1, conversion::sidecarset_to_v1alpha1;
    APPS_GROUP, "UnitedDeployment": v1alpha1::UnitedDeployment => v1beta1::UnitedDeployment, conversion::uniteddeployment_to_v1beta1, conversion::uniteddeployment_to_v1alpha1;
    APPS_GROUP, "BroadcastJob": v1alpha1::BroadcastJob => v1beta1::BroadcastJob, conversion::broadcastjob_to_v1beta1, conversion::broadcastjob_to_v1alpha1;
    APPS_GROUP, "AdvancedCronJob": v1alpha1::AdvancedCronJob => v1beta1::AdvancedCronJob, conversion::advancedcronjob_to_v1beta1, conversion::advancedcronjob_to_v1alpha1;
    APPS_GROUP, "ImagePullJob": v1alpha1::ImagePullJob => v1beta1::ImagePullJob, conversion::imagepulljob_to_v1beta1, conversion::imagepulljob_to_v1alpha1;
    APPS_GROUP, "ImageListPullJob": v1alpha1::ImageListPullJob => v1beta1::ImageListPullJob, conversion::imagelistpulljob_to_v1beta1, conversion::imagelistpulljob_to_v1alpha1;
    APPS_GROUP, "NodeImage": v1alpha1::NodeImage => v1beta1::NodeImage, conversion::nodeimage_to_v1beta1, conversion::nodeimage_to_v1alpha1;
    APPS_GROUP, "ContainerRecreateRequest": v1alpha1::ContainerRecreateRequest => v1beta1::ContainerRecreateRequest, conversion::containerrecreaterequest_to_v1beta1, conversion::containerrecreaterequest_to_v1alpha1;
    APPS_GROUP, "ResourceDistribution": v1alpha1::ResourceDistribution => v1beta1::ResourceDistribution, conversion::resourcedistribution_to_v1beta1, conversion::resourcedistribution_to_v1alpha1;
    APPS_GROUP, "WorkloadSpread": v1alpha1::WorkloadSpread => v1beta1::WorkloadSpread, conversion::workloadspread_to_v1beta1, conversion::workloadspread_to_v1alpha1;
    APPS_GROUP, "PersistentPodState": v1alpha1::PersistentPodState => v1beta1::PersistentPodState, conversion::persistentpodstate_to_v1beta1, conversion::persistentpodstate_to_v1alpha1;
    POLICY_GROUP, "PodUnavailableBudget": policy::v1alpha1::PodUnavailableBudget => policy::v1beta1::PodUnavailableBudget, conversion::podunavailablebudget_to_v1beta1, conversion::podunavailablebudget_to_v1alpha1;
};

/// Whether `/convert` converts `kind` of `group` (the CRDs the configuration controller may
/// point at this server).
pub fn converts(group: &str, kind: &str) -> bool {
    CONVERTERS.iter().any(|converter| converter.group == group && converter.kind == kind)
}

fn typed<S: DeserializeOwned, T: Serialize>(value: &Value, convert: fn(&S) -> T) -> Result<Value, String> {
    let mut value = value.clone();
    drop_null_fields(&mut value);
    let source: S = serde_json::from_value(value).map_err(|error| error.to_string())?;
    serde_json::to_value(convert(&source)).map_err(|error| error.to_string())
}

/// `object` expressed at `desired_api_version` (unchanged when already there).
pub fn convert_object(object: &Value, desired_api_version: &str) -> Result<Value, String> {
    let api_version =
        object.get("apiVersion").and_then(Value::as_str).ok_or("the object has no apiVersion")?;
    let kind = object.get("kind").and_then(Value::as_str).ok_or("the object has no kind")?;
    if api_version == desired_api_version {
        return Ok(object.clone());
    }
    let (group, from) =
        api_version.split_once('/').ok_or_else(|| format!("unsupported apiVersion {api_version:?}"))?;
    let (desired_group, to) = desired_api_version
        .split_once('/')
        .ok_or_else(|| format!("unsupported desired apiVersion {desired_api_version:?}"))?;
    if group != desired_group {
        return Err(format!("cannot convert {api_version} to another group ({desired_api_version})"));
    }
    let converter = CONVERTERS
        .iter()
        .find(|converter| converter.group == group && converter.kind == kind)
        .ok_or_else(|| format!("no conversion for kind {kind} of {group}"))?;
    let converted = match (from, to) {
        ("v1alpha1", "v1beta1") => (converter.to_v1beta1)(object)?,
        ("v1beta1", "v1alpha1") => (converter.to_v1alpha1)(object)?,
        _ => return Err(format!("unsupported conversion of {kind} from {from} to {to}")),
    };
    Ok(with_original_metadata(object, converted))
}

/// `converted`, with the metadata of `original` apart from labels and annotations.
fn with_original_metadata(original: &Value, mut converted: Value) -> Value {
    let mut metadata = original.get("metadata").cloned().unwrap_or_else(|| Value::Object(Default::default()));
    if let Some(map) = metadata.as_object_mut() {
        for key in ["labels", "annotations"] {
            match converted.pointer(&format!("/metadata/{key}")) {
                Some(value) if !value.is_null() => {
                    map.insert(key.to_string(), value.clone());
                }
                _ => {
                    map.remove(key);
                }
            }
        }
    }
    converted["metadata"] = metadata;
    converted
}

/// Answers one review: every object converted, or a `Failure` naming the first object that
/// could not be (the API server then fails the whole request, as with upstream).
pub fn review(review: ConversionReview) -> ConversionReview {
    let request = match ConversionRequest::from_review(review) {
        Ok(request) => request,
        Err(error) => {
            return ConversionResponse::invalid(
                Status::failure(&error.to_string(), "BadRequest").with_code(400),
            )
            .into_review();
        }
    };
    let desired = request.desired_api_version.clone();
    let mut converted = Vec::with_capacity(request.objects.len());
    let mut failure = None;
    for (index, object) in request.objects.iter().enumerate() {
        match convert_object(object, &desired) {
            Ok(value) => converted.push(value),
            Err(error) => {
                let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
                let namespace =
                    object.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default();
                let kind = object.get("kind").and_then(Value::as_str).unwrap_or("object");
                failure = Some(format!(
                    "conversion of object {index} ({kind} {namespace}/{name}) to {desired} failed: {error}"
                ));
                break;
            }
        }
    }
    let response = ConversionResponse::for_request(request);
    match failure {
        Some(message) => {
            tracing::warn!(%message, "conversion failed");
            response.failure(Status::failure(&message, "Invalid")).into_review()
        }
        None => response.success(converted).into_review(),
    }
}

/// Handles a `/convert` body: the review to send back (a `Failure` review for bad input).
pub fn handle(body: &[u8]) -> Value {
    let answer = match serde_json::from_slice::<ConversionReview>(body) {
        Ok(incoming) => review(incoming),
        Err(error) => ConversionResponse::invalid(
            Status::failure(&format!("cannot decode the ConversionReview: {error}"), "BadRequest")
                .with_code(400),
        )
        .into_review(),
    };
    serde_json::to_value(answer).unwrap_or_else(|error| {
        serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "", "result": {"status": "Failure", "message": error.to_string()}, "convertedObjects": []},
        })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    fn alpha_cloneset(strategy: Value) -> Value {
        json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {
                "name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7",
                "creationTimestamp": "2024-05-01T10:00:00Z", "generation": 2,
                "labels": {"apps.kruise.io/cloneset-scaling-exclude-preparing-delete": "true", "app": "web"},
            },
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main", "image": "nginx"}]}},
                "updateStrategy": strategy,
            },
        })
    }

    #[test]
    fn the_catalog_kinds_with_a_conversion_webhook_are_all_converted() {
        for kind in kruise_crds::catalog::all_kinds() {
            if kind.conversion_webhook {
                assert!(
                    converts(kind.group, kind.kind),
                    "{} has a conversion webhook but no converter",
                    kind.kind
                );
            }
        }
        assert!(!converts(APPS_GROUP, "EphemeralJob"));
    }

    #[test]
    fn conversion_table() {
        let alpha = alpha_cloneset(json!({"type": "InPlaceIfPossible", "partition": 1}));
        let beta = convert_object(&alpha, "apps.kruise.io/v1beta1").unwrap();
        assert_eq!(beta["apiVersion"], "apps.kruise.io/v1beta1");
        assert_eq!(beta["spec"]["updateStrategy"]["type"], "RollingUpdate");
        assert_eq!(beta["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"], "InPlaceIfPossible");
        assert_eq!(beta["spec"]["scaleStrategy"]["excludePreparingDelete"], true);
        // The label moved into the spec; everything else of the metadata is as sent.
        assert_eq!(beta["metadata"]["labels"], json!({"app": "web"}));
        for key in ["uid", "resourceVersion", "creationTimestamp", "generation", "name", "namespace"] {
            assert_eq!(beta["metadata"][key], alpha["metadata"][key], "{key}");
        }
        let back = convert_object(&beta, "apps.kruise.io/v1alpha1").unwrap();
        assert_eq!(back, alpha);

        assert_eq!(convert_object(&alpha, "apps.kruise.io/v1alpha1").unwrap(), alpha);
        let failures = [
            (json!({"kind": "CloneSet"}), "apps.kruise.io/v1beta1", "no apiVersion"),
            (json!({"apiVersion": "apps.kruise.io/v1alpha1"}), "apps.kruise.io/v1beta1", "no kind"),
            (
                json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "Nope"}),
                "apps.kruise.io/v1beta1",
                "no conversion for kind Nope",
            ),
            (alpha.clone(), "policy.kruise.io/v1beta1", "another group"),
            (alpha.clone(), "apps.kruise.io/v2", "unsupported conversion"),
            (
                json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "spec": {"replicas": "x"}}),
                "apps.kruise.io/v1beta1",
                "invalid type",
            ),
        ];
        for (object, desired, expected) in failures {
            let error = convert_object(&object, desired).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn reviews_convert_every_object_or_fail_naming_one() {
        let body = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "r-1", "desiredAPIVersion": "apps.kruise.io/v1beta1", "objects": [
                alpha_cloneset(json!({"type": "OnDelete"})),
                alpha_cloneset(json!({"type": "ReCreate"})),
            ]},
        });
        let answer = handle(body.to_string().as_bytes());
        assert_eq!(answer["response"]["uid"], "r-1");
        assert_eq!(answer["response"]["result"]["status"], "Success");
        let objects = answer["response"]["convertedObjects"].as_array().unwrap();
        assert_eq!(objects.len(), 2);
        assert_eq!(objects[0]["spec"]["updateStrategy"]["type"], "OnDelete");

        let mut bad = body.clone();
        bad["request"]["objects"][1]["kind"] = json!("Mystery");
        let answer = handle(bad.to_string().as_bytes());
        assert_eq!(answer["response"]["result"]["status"], "Failure");
        let message = answer["response"]["result"]["message"].as_str().unwrap();
        assert!(message.contains("object 1 (Mystery default/web)"), "{message}");

        for body in ["", "{", r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}"#] {
            let answer = handle(body.as_bytes());
            assert_eq!(answer["response"]["result"]["status"], "Failure", "{body}");
        }

        let mut v1beta1 = body;
        v1beta1["apiVersion"] = json!("apiextensions.k8s.io/v1beta1");
        assert_eq!(handle(v1beta1.to_string().as_bytes())["apiVersion"], "apiextensions.k8s.io/v1beta1");
    }
}
