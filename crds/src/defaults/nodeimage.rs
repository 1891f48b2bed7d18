//! NodeImage defaults (upstream `SetDefaultsNodeImageV1beta1` / `SetDefaultsNodeImage` plus the
//! tag sorting of the NodeImage mutating webhook).

use k8s_openapi::{apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};

use super::imagepulljob::{DEFAULT_IMAGE_PULL_BACKOFF_LIMIT, DEFAULT_IMAGE_PULL_TIMEOUT_SECONDS};
use crate::apps::{
    v1alpha1,
    v1beta1::{self, ImageTagPullPolicy, ImageTagSpec, NodeImageStatus},
};

/// Fills in v1beta1 NodeImage defaults with the current time as the creation time of new tags
/// (see [`default_nodeimage_v1beta1_at`]).
pub fn default_nodeimage_v1beta1(node_image: &mut v1beta1::NodeImage) {
    default_nodeimage_v1beta1_at(node_image, &Time(Timestamp::now()));
}

/// Fills in v1beta1 NodeImage defaults: each tag without `createdAt` gets `now`, each tag's pull
/// policy gets timeout 600s and 3 retries, and the tags of every image (in spec and status) are
/// sorted by tag.
pub fn default_nodeimage_v1beta1_at(node_image: &mut v1beta1::NodeImage, now: &Time) {
    for image in node_image.spec.images.values_mut() {
        default_tags(&mut image.tags, now);
    }
    if let Some(status) = node_image.status.as_mut() {
        sort_status_tags(status);
    }
}

/// Fills in v1alpha1 NodeImage defaults with the current time (see
/// [`default_nodeimage_v1alpha1_at`]).
pub fn default_nodeimage_v1alpha1(node_image: &mut v1alpha1::NodeImage) {
    default_nodeimage_v1alpha1_at(node_image, &Time(Timestamp::now()));
}

/// Fills in v1alpha1 NodeImage defaults (the same as v1beta1).
pub fn default_nodeimage_v1alpha1_at(node_image: &mut v1alpha1::NodeImage, now: &Time) {
    for image in node_image.spec.images.values_mut() {
        default_tags(&mut image.tags, now);
    }
    if let Some(status) = node_image.status.as_mut() {
        sort_status_tags(status);
    }
}

/// Fills in a tag pull policy's timeout (600s) and retries (3).
pub fn default_image_tag_pull_policy(policy: &mut ImageTagPullPolicy) {
    policy.timeout_seconds.get_or_insert(DEFAULT_IMAGE_PULL_TIMEOUT_SECONDS);
    policy.backoff_limit.get_or_insert(DEFAULT_IMAGE_PULL_BACKOFF_LIMIT);
}

fn default_tags(tags: &mut [ImageTagSpec], now: &Time) {
    for tag in tags.iter_mut() {
        tag.created_at.get_or_insert_with(|| now.clone());
        default_image_tag_pull_policy(tag.pull_policy.get_or_insert_with(Default::default));
    }
    tags.sort_by(|a, b| a.tag.cmp(&b.tag));
}

fn sort_status_tags(status: &mut NodeImageStatus) {
    for image in status.image_statuses.values_mut() {
        image.tags.sort_by(|a, b| a.tag.cmp(&b.tag));
    }
}
