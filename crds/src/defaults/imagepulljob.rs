//! ImagePullJob defaults (upstream `SetDefaultsImagePullJobV1beta1` / `SetDefaultsImagePullJob`),
//! and the pull policy defaults ImageListPullJob and AdvancedCronJob share.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::apps::{
    v1alpha1,
    v1beta1::{self, CompletionPolicyType, ImagePullJobTemplate, ImagePullPolicy, PullPolicy},
};

/// Default seconds one pull attempt may take.
pub const DEFAULT_IMAGE_PULL_TIMEOUT_SECONDS: i32 = 600;
/// Default retries of a pull before a node is marked failed.
pub const DEFAULT_IMAGE_PULL_BACKOFF_LIMIT: i32 = 3;
/// Default number of nodes an ImagePullJob pulls on at the same time.
pub const DEFAULT_IMAGE_PULL_JOB_PARALLELISM: i32 = 1;

/// Fills in v1beta1 ImagePullJob defaults: completion policy Always, pull timeout 600s with 3
/// retries, image pull policy IfNotPresent, parallelism 1 (upstream leaves parallelism unset and
/// the controller reads unset as 1; writing it out changes nothing but makes it visible).
pub fn default_imagepulljob_v1beta1(job: &mut v1beta1::ImagePullJob) {
    default_imagepulljob_spec(&mut job.spec);
}

/// Fills in v1alpha1 ImagePullJob defaults (the same as v1beta1). Upstream's v1alpha1 webhook
/// also adds the `apps.kruise.io/deletion-protection` finalizer on create; the controller adds
/// it on its first reconcile anyway, so it is left to the controller here.
pub fn default_imagepulljob_v1alpha1(job: &mut v1alpha1::ImagePullJob) {
    default_imagepulljob_spec(&mut job.spec);
}

/// Fills in the defaults of an ImagePullJob spec.
pub fn default_imagepulljob_spec(spec: &mut v1beta1::ImagePullJobSpec) {
    default_image_pull_job_template(&mut spec.template);
    spec.template.parallelism.get_or_insert(IntOrString::Int(DEFAULT_IMAGE_PULL_JOB_PARALLELISM));
    if spec.template.image_pull_policy.is_unset() {
        spec.template.image_pull_policy = ImagePullPolicy::IfNotPresent;
    }
}

/// Fills in the pull settings every pull job defaults: completion policy Always and the pull
/// policy's timeout and retries.
pub fn default_image_pull_job_template(template: &mut ImagePullJobTemplate) {
    if template.completion_policy.type_.is_unset() {
        template.completion_policy.type_ = CompletionPolicyType::Always;
    }
    default_pull_policy(template.pull_policy.get_or_insert_with(PullPolicy::default));
}

/// Fills in a pull policy's timeout (600s) and retries (3).
pub fn default_pull_policy(policy: &mut PullPolicy) {
    policy.timeout_seconds.get_or_insert(DEFAULT_IMAGE_PULL_TIMEOUT_SECONDS);
    policy.backoff_limit.get_or_insert(DEFAULT_IMAGE_PULL_BACKOFF_LIMIT);
}
