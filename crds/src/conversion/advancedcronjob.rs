//! AdvancedCronJob v1alpha1 <-> v1beta1.
//!
//! Upstream rules: every field is copied as is, in both directions; the only difference is
//! v1beta1's `template.imageListPullJobTemplate`, which v1alpha1 cannot express. Upstream
//! refuses to show such an object at v1alpha1; here the natural conversion leaves the template
//! out and the lossless wrapper keeps it in the stash annotation, so a round trip restores it.

use super::{convert_lossless, impl_spec_status_parts};
use crate::apps::{v1alpha1, v1beta1};

impl_spec_status_parts!(v1alpha1::AdvancedCronJob, v1beta1::AdvancedCronJob);

/// Converts a v1alpha1 AdvancedCronJob to v1beta1.
pub fn advancedcronjob_to_v1beta1(alpha: &v1alpha1::AdvancedCronJob) -> v1beta1::AdvancedCronJob {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 AdvancedCronJob to v1alpha1 (an ImageListPullJob template is kept only
/// in the stash annotation).
pub fn advancedcronjob_to_v1alpha1(beta: &v1beta1::AdvancedCronJob) -> v1alpha1::AdvancedCronJob {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::AdvancedCronJob) -> v1beta1::AdvancedCronJob {
    let spec = &alpha.spec;
    v1beta1::AdvancedCronJob {
        metadata: alpha.metadata.clone(),
        spec: v1beta1::AdvancedCronJobSpec {
            schedule: spec.schedule.clone(),
            time_zone: spec.time_zone.clone(),
            starting_deadline_seconds: spec.starting_deadline_seconds,
            concurrency_policy: spec.concurrency_policy.clone(),
            paused: spec.paused,
            successful_jobs_history_limit: spec.successful_jobs_history_limit,
            failed_jobs_history_limit: spec.failed_jobs_history_limit,
            template: v1beta1::CronJobTemplate {
                job_template: spec.template.job_template.clone(),
                broadcast_job_template: spec.template.broadcast_job_template.clone(),
                image_list_pull_job_template: None,
            },
        },
        status: alpha.status.clone(),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::AdvancedCronJob) -> v1alpha1::AdvancedCronJob {
    let spec = &beta.spec;
    v1alpha1::AdvancedCronJob {
        metadata: beta.metadata.clone(),
        spec: v1alpha1::AdvancedCronJobSpec {
            schedule: spec.schedule.clone(),
            time_zone: spec.time_zone.clone(),
            starting_deadline_seconds: spec.starting_deadline_seconds,
            concurrency_policy: spec.concurrency_policy.clone(),
            paused: spec.paused,
            successful_jobs_history_limit: spec.successful_jobs_history_limit,
            failed_jobs_history_limit: spec.failed_jobs_history_limit,
            template: v1alpha1::CronJobTemplate {
                job_template: spec.template.job_template.clone(),
                broadcast_job_template: spec.template.broadcast_job_template.clone(),
            },
        },
        status: beta.status.clone(),
    }
}
