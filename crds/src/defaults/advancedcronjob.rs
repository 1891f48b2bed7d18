//! AdvancedCronJob defaults (upstream `SetDefaultsAdvancedCronJob`).

use k8s_openapi::api::batch::v1::JobTemplateSpec;

use super::{imagepulljob::default_image_pull_job_template, pod::default_pod_spec};
use crate::apps::{
    v1alpha1,
    v1beta1::{self, BroadcastJobTemplateSpec, ConcurrencyPolicy, ImagePullPolicy},
};

/// Default number of finished successful runs kept.
pub const DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT: i32 = 3;
/// Default number of finished failed runs kept.
pub const DEFAULT_FAILED_JOBS_HISTORY_LIMIT: i32 = 1;

/// Fills in v1beta1 AdvancedCronJob defaults: concurrency policy Allow (Replace for an
/// ImageListPullJob template, whose concurrent runs would be useless), not paused, history
/// limits 3 and 1, and the ImageListPullJob template's completion and pull policies. With
/// `inject_template_defaults` (create, or an update that changed the template) the pod template
/// of a Job or BroadcastJob template gets the pod defaults.
pub fn default_advancedcronjob_v1beta1(job: &mut v1beta1::AdvancedCronJob, inject_template_defaults: bool) {
    let spec = &mut job.spec;
    let template = &mut spec.template;
    inject_pod_templates(
        template.job_template.as_mut(),
        template.broadcast_job_template.as_mut(),
        inject_template_defaults,
    );
    let image_list = template.image_list_pull_job_template.is_some();
    if let Some(image_list) = template.image_list_pull_job_template.as_mut() {
        let pull = &mut image_list.spec.template;
        default_image_pull_job_template(pull);
        if pull.image_pull_policy.is_unset() {
            pull.image_pull_policy = ImagePullPolicy::IfNotPresent;
        }
    }
    default_concurrency(&mut spec.concurrency_policy, image_list);
    default_run_settings(
        &mut spec.paused,
        &mut spec.successful_jobs_history_limit,
        &mut spec.failed_jobs_history_limit,
    );
}

/// Fills in v1alpha1 AdvancedCronJob defaults (as v1beta1, without the ImageListPullJob
/// template v1alpha1 cannot hold).
pub fn default_advancedcronjob_v1alpha1(job: &mut v1alpha1::AdvancedCronJob, inject_template_defaults: bool) {
    let spec = &mut job.spec;
    inject_pod_templates(
        spec.template.job_template.as_mut(),
        spec.template.broadcast_job_template.as_mut(),
        inject_template_defaults,
    );
    default_concurrency(&mut spec.concurrency_policy, false);
    default_run_settings(
        &mut spec.paused,
        &mut spec.successful_jobs_history_limit,
        &mut spec.failed_jobs_history_limit,
    );
}

fn inject_pod_templates(
    job: Option<&mut JobTemplateSpec>,
    broadcast: Option<&mut BroadcastJobTemplateSpec>,
    inject_template_defaults: bool,
) {
    if !inject_template_defaults {
        return;
    }
    if let Some(job) = job {
        let pod = &mut job.spec.get_or_insert_with(Default::default).template;
        default_pod_spec(pod.spec.get_or_insert_with(Default::default));
    }
    if let Some(broadcast) = broadcast {
        default_pod_spec(broadcast.spec.template.spec.get_or_insert_with(Default::default));
    }
}

fn default_concurrency(policy: &mut ConcurrencyPolicy, image_list: bool) {
    if policy.is_unset() {
        *policy = if image_list { ConcurrencyPolicy::Replace } else { ConcurrencyPolicy::Allow };
    }
}

fn default_run_settings(paused: &mut Option<bool>, successful: &mut Option<i32>, failed: &mut Option<i32>) {
    paused.get_or_insert(false);
    successful.get_or_insert(DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT);
    failed.get_or_insert(DEFAULT_FAILED_JOBS_HISTORY_LIMIT);
}
