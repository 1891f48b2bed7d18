//! NodeImage validation (upstream `pkg/webhook/nodeimage/validating`), for both served
//! versions (they differ only in the pull secrets' `mode`, which has no rule).

use std::collections::BTreeSet;

use super::meta::{validate_non_negative, validate_object_meta};
use crate::{
    apps::{
        v1alpha1,
        v1beta1::{self, ImagePullPolicy, ImageTagSpec},
    },
    field::{ErrorList, FieldError, FieldPath, quoted},
};

/// Most images one NodeImage may list.
pub const NODE_IMAGE_MAX_IMAGES: usize = 256;

/// Validates a v1beta1 NodeImage. The controller and the node daemon own these objects and any
/// field may change, so `old` adds no rule.
pub fn validate_nodeimage_v1beta1(
    node_image: &v1beta1::NodeImage,
    _old: Option<&v1beta1::NodeImage>,
) -> ErrorList {
    let mut errors = validate_object_meta(&node_image.metadata, false);
    let images = node_image.spec.images.iter().map(|(name, image)| (name.as_str(), image.tags.as_slice()));
    errors.extend(validate_images(node_image.spec.images.len(), images));
    errors
}

/// Validates a v1alpha1 NodeImage (the same rules as v1beta1).
pub fn validate_nodeimage_v1alpha1(
    node_image: &v1alpha1::NodeImage,
    _old: Option<&v1alpha1::NodeImage>,
) -> ErrorList {
    let mut errors = validate_object_meta(&node_image.metadata, false);
    let images = node_image.spec.images.iter().map(|(name, image)| (name.as_str(), image.tags.as_slice()));
    errors.extend(validate_images(node_image.spec.images.len(), images));
    errors
}

/// At most 256 images, each with a name and tags that are non-empty, unique and fully
/// specified (creation time, pull policy with a TTL, non-negative version and numbers).
fn validate_images<'a>(
    count: usize,
    images: impl Iterator<Item = (&'a str, &'a [ImageTagSpec])>,
) -> ErrorList {
    let images_path = FieldPath::root("spec").child("images");
    let mut errors = ErrorList::new();
    if count > NODE_IMAGE_MAX_IMAGES {
        errors.push(FieldError::invalid(
            &images_path,
            count,
            format!("must have at most {NODE_IMAGE_MAX_IMAGES} images"),
        ));
    }
    for (name, tags) in images {
        let image_path = images_path.key(name);
        if name.is_empty() {
            errors.push(FieldError::required(&image_path, "image name can not be empty"));
        }
        let mut seen = BTreeSet::new();
        for (index, tag) in tags.iter().enumerate() {
            let tag_path = image_path.child("tags").index(index);
            errors.extend(validate_tag(tag, &tag_path));
            if !tag.tag.is_empty() && !seen.insert(tag.tag.as_str()) {
                errors.push(FieldError::duplicate(&tag_path.child("tag"), quoted(&tag.tag)));
            }
        }
    }
    errors
}

fn validate_tag(tag: &ImageTagSpec, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if tag.tag.is_empty() {
        errors.push(FieldError::required(&path.child("tag"), "tag can not be empty"));
    }
    if tag.created_at.is_none() {
        errors.push(FieldError::required(&path.child("createdAt"), ""));
    }
    errors.extend(validate_non_negative(tag.version, &path.child("version")));
    let policy_path = path.child("pullPolicy");
    match &tag.pull_policy {
        None => errors.push(FieldError::required(&policy_path, "")),
        Some(policy) => {
            if policy.ttl_seconds_after_finished.is_none() {
                errors.push(FieldError::required(&policy_path.child("ttlSecondsAfterFinished"), ""));
            }
            for (name, value) in [
                ("timeoutSeconds", policy.timeout_seconds.map(i64::from)),
                ("backoffLimit", policy.backoff_limit.map(i64::from)),
                ("ttlSecondsAfterFinished", policy.ttl_seconds_after_finished.map(i64::from)),
                ("activeDeadlineSeconds", policy.active_deadline_seconds),
            ] {
                if let Some(value) = value {
                    errors.extend(validate_non_negative(value, &policy_path.child(name)));
                }
            }
        }
    }
    let pull = &tag.image_pull_policy;
    if !pull.is_unset() && !pull.is_known() {
        errors.push(FieldError::not_supported(
            &path.child("imagePullPolicy"),
            pull.as_str(),
            ImagePullPolicy::KNOWN,
        ));
    }
    errors
}
