//! Admission for the image pre-pull kinds (upstream `pkg/webhook/imagepulljob`,
//! `pkg/webhook/imagelistpulljob`, `pkg/webhook/nodeimage`): defaulting and validation of
//! ImagePullJob, ImageListPullJob and NodeImage at both served versions, with the rules of
//! `kruise_crds::defaults` and `kruise_crds::validation`.
//!
//! Every decision is a pure function of the admission request.

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{
        default_imagelistpulljob_v1alpha1, default_imagelistpulljob_v1beta1, default_imagepulljob_v1alpha1,
        default_imagepulljob_v1beta1, default_nodeimage_v1alpha1, default_nodeimage_v1beta1,
    },
    document::drop_null_fields,
    field::ErrorList,
    resource::APPS_GROUP,
    validation::{
        validate_imagelistpulljob_v1alpha1, validate_imagelistpulljob_v1beta1,
        validate_imagepulljob_v1alpha1, validate_imagepulljob_v1beta1, validate_nodeimage_v1alpha1,
        validate_nodeimage_v1beta1,
    },
};
use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::admission::{allowed, errored, invalid, object_value, object_version, patch_to, patched};

/// One of the image pre-pull kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// `imagepulljobs`.
    ImagePullJob,
    /// `imagelistpulljobs`.
    ImageListPullJob,
    /// `nodeimages`.
    NodeImage,
}

impl ImageKind {
    /// The kind's name.
    pub fn kind(self) -> &'static str {
        match self {
            Self::ImagePullJob => "ImagePullJob",
            Self::ImageListPullJob => "ImageListPullJob",
            Self::NodeImage => "NodeImage",
        }
    }
}

fn decode<T: DeserializeOwned>(raw: &Value, kind: ImageKind) -> Result<T, String> {
    let mut value = raw.clone();
    drop_null_fields(&mut value);
    serde_json::from_value(value).map_err(|error| format!("cannot decode the {}: {error}", kind.kind()))
}

/// The JSON patch from `raw` to its defaulted form.
fn default_patch<T: DeserializeOwned + Serialize>(
    raw: &Value,
    kind: ImageKind,
    apply_defaults: fn(&mut T),
) -> Result<json_patch::Patch, String> {
    let mut object: T = decode(raw, kind)?;
    let before = serde_json::to_value(&object).map_err(|error| error.to_string())?;
    apply_defaults(&mut object);
    patch_to(raw, &before, &object)
}

/// The defaulting webhook of `kind` (CREATE and UPDATE).
pub fn mutate(kind: ImageKind, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let raw = match object_value(request.object.as_ref()) {
        Ok(Some(raw)) => raw,
        Ok(None) => return errored(request, 400, "there is no content to decode"),
        Err(error) => return errored(request, 400, &error.to_string()),
    };
    let result = match (kind, object_version(request, Some(&raw)).as_str()) {
        (ImageKind::ImagePullJob, "v1beta1") => {
            default_patch::<v1beta1::ImagePullJob>(&raw, kind, default_imagepulljob_v1beta1)
        }
        (ImageKind::ImagePullJob, "v1alpha1") => {
            default_patch::<v1alpha1::ImagePullJob>(&raw, kind, default_imagepulljob_v1alpha1)
        }
        (ImageKind::ImageListPullJob, "v1beta1") => {
            default_patch::<v1beta1::ImageListPullJob>(&raw, kind, default_imagelistpulljob_v1beta1)
        }
        (ImageKind::ImageListPullJob, "v1alpha1") => {
            default_patch::<v1alpha1::ImageListPullJob>(&raw, kind, default_imagelistpulljob_v1alpha1)
        }
        (ImageKind::NodeImage, "v1beta1") => {
            default_patch::<v1beta1::NodeImage>(&raw, kind, default_nodeimage_v1beta1)
        }
        (ImageKind::NodeImage, "v1alpha1") => {
            default_patch::<v1alpha1::NodeImage>(&raw, kind, default_nodeimage_v1alpha1)
        }
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
    kind: ImageKind,
    validate: fn(&T, Option<&T>) -> ErrorList,
) -> Result<ErrorList, String> {
    let object: T = decode(raw, kind)?;
    let old: Option<T> = old.map(|old| decode(old, kind)).transpose()?;
    Ok(validate(&object, old.as_ref()))
}

/// The validating webhook of `kind` (CREATE and UPDATE; field errors with paths).
pub fn validate(kind: ImageKind, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return allowed(request);
    }
    let (raw, old) = match (object_value(request.object.as_ref()), object_value(request.old_object.as_ref()))
    {
        (Ok(Some(raw)), Ok(old)) => (raw, old.filter(|_| request.operation == Operation::Update)),
        (Ok(None), _) => return errored(request, 400, "there is no content to decode"),
        (Err(error), _) | (_, Err(error)) => return errored(request, 400, &error.to_string()),
    };
    let old = old.as_ref();
    let errors = match (kind, object_version(request, Some(&raw)).as_str()) {
        (ImageKind::ImagePullJob, "v1beta1") => check(&raw, old, kind, validate_imagepulljob_v1beta1),
        (ImageKind::ImagePullJob, "v1alpha1") => check(&raw, old, kind, validate_imagepulljob_v1alpha1),
        (ImageKind::ImageListPullJob, "v1beta1") => check(&raw, old, kind, validate_imagelistpulljob_v1beta1),
        (ImageKind::ImageListPullJob, "v1alpha1") => {
            check(&raw, old, kind, validate_imagelistpulljob_v1alpha1)
        }
        (ImageKind::NodeImage, "v1beta1") => check(&raw, old, kind, validate_nodeimage_v1beta1),
        (ImageKind::NodeImage, "v1alpha1") => check(&raw, old, kind, validate_nodeimage_v1alpha1),
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
        resource: &str,
        operation: &str,
        object: Value,
    ) -> AdmissionRequest<DynamicObject> {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "apps.kruise.io", "version": "v1beta1", "kind": kind},
                "resource": {"group": "apps.kruise.io", "version": "v1beta1", "resource": resource},
                "name": "warm", "namespace": "default", "operation": operation,
                "userInfo": {"username": "admin"},
                "object": object,
            }
        });
        parse_review(body.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn image_pull_jobs_are_defaulted_and_validated() {
        let job = json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob",
            "metadata": {"name": "warm", "namespace": "default"},
            "spec": {"image": "nginx:1.25", "completionPolicy": {}}
        });
        let review = into_review(mutate(
            ImageKind::ImagePullJob,
            &request("ImagePullJob", "imagepulljobs", "CREATE", job),
        ));
        assert_eq!(review["response"]["allowed"], true);
        assert_eq!(review["response"]["patchType"], "JSONPatch");

        let bad = json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob",
            "metadata": {"name": "warm", "namespace": "default"},
            "spec": {"image": "Not A Reference", "completionPolicy": {"type": "Always"}}
        });
        let review = into_review(validate(
            ImageKind::ImagePullJob,
            &request("ImagePullJob", "imagepulljobs", "CREATE", bad),
        ));
        assert_eq!(review["response"]["allowed"], false);
        assert_eq!(review["response"]["status"]["code"], 422);
        let message = review["response"]["status"]["message"].as_str().unwrap();
        assert!(message.contains("spec.image"), "{message}");
    }

    #[test]
    fn node_images_need_dated_tags_with_a_ttl() {
        let node_image = json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "NodeImage", "metadata": {"name": "n1"},
            "spec": {"images": {"nginx": {"tags": [{"tag": "1.25"}]}}}
        });
        let review = into_review(validate(
            ImageKind::NodeImage,
            &request("NodeImage", "nodeimages", "CREATE", node_image.clone()),
        ));
        assert_eq!(review["response"]["allowed"], false);
        let review = into_review(mutate(
            ImageKind::NodeImage,
            &request("NodeImage", "nodeimages", "CREATE", node_image),
        ));
        let patch = serde_json::to_string(&review["response"]["patch"]).unwrap();
        assert!(!patch.is_empty());
        let list = json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "ImageListPullJob",
            "metadata": {"name": "warm", "namespace": "default"},
            "spec": {"images": ["nginx:1", "nginx:1"], "completionPolicy": {"type": "Always"}}
        });
        let review = into_review(validate(
            ImageKind::ImageListPullJob,
            &request("ImageListPullJob", "imagelistpulljobs", "CREATE", list),
        ));
        assert_eq!(review["response"]["allowed"], false, "duplicate images are refused");
    }
}
