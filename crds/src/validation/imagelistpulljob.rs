//! ImageListPullJob validation (upstream `pkg/webhook/imagelistpulljob/validating`): the image
//! list plus the pull settings shared with ImagePullJob.

use super::{
    imagepulljob::{validate_image_list, validate_image_pull_job_template},
    meta::validate_object_meta,
};
use crate::{
    apps::{v1alpha1, v1beta1},
    field::{ErrorList, FieldPath},
};

/// Validates a v1beta1 ImageListPullJob. Every spec field may change on update, so `old` adds
/// no rule.
pub fn validate_imagelistpulljob_v1beta1(
    job: &v1beta1::ImageListPullJob,
    _old: Option<&v1beta1::ImageListPullJob>,
) -> ErrorList {
    let mut errors = validate_object_meta(&job.metadata, true);
    errors.extend(validate_imagelistpulljob_spec(&job.spec, &FieldPath::root("spec")));
    errors
}

/// Validates a v1alpha1 ImageListPullJob (same schema as v1beta1).
pub fn validate_imagelistpulljob_v1alpha1(
    job: &v1alpha1::ImageListPullJob,
    _old: Option<&v1alpha1::ImageListPullJob>,
) -> ErrorList {
    let mut errors = validate_object_meta(&job.metadata, true);
    errors.extend(validate_imagelistpulljob_spec(&job.spec, &FieldPath::root("spec")));
    errors
}

/// Validates an ImageListPullJob spec at `path`: 1 to 255 distinct, parseable images and valid
/// pull settings.
pub fn validate_imagelistpulljob_spec(spec: &v1beta1::ImageListPullJobSpec, path: &FieldPath) -> ErrorList {
    let mut errors = validate_image_list(&spec.images, &path.child("images"));
    errors.extend(validate_image_pull_job_template(&spec.template, path));
    errors
}
