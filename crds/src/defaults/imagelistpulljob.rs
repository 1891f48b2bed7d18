//! ImageListPullJob defaults (upstream `SetDefaultsImageListPullJobV1beta1` /
//! `SetDefaultsImageListPullJob`): completion policy and pull policy only; the image pull policy
//! is left to each child ImagePullJob's own defaults.

use super::imagepulljob::default_image_pull_job_template;
use crate::apps::{v1alpha1, v1beta1};

/// Fills in v1beta1 ImageListPullJob defaults: completion policy Always, pull timeout 600s
/// with 3 retries.
pub fn default_imagelistpulljob_v1beta1(job: &mut v1beta1::ImageListPullJob) {
    default_image_pull_job_template(&mut job.spec.template);
}

/// Fills in v1alpha1 ImageListPullJob defaults (the same as v1beta1).
pub fn default_imagelistpulljob_v1alpha1(job: &mut v1alpha1::ImageListPullJob) {
    default_image_pull_job_template(&mut job.spec.template);
}
