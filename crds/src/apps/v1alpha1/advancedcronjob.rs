//! AdvancedCronJob v1alpha1: like v1beta1 without the ImageListPullJob template. Served for
//! existing manifests; stored as v1beta1.

use k8s_openapi::api::batch::v1::JobTemplateSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    AdvancedCronJobStatus, BroadcastJobTemplateSpec, ConcurrencyPolicy, TemplateKind,
};
use crate::resource::{APPS_GROUP, kruise_resource};

kruise_resource! {
    /// AdvancedCronJob as served at apps.kruise.io/v1alpha1.
    AdvancedCronJob {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "AdvancedCronJob",
        plural: "advancedcronjobs",
        scope: NamespaceResourceScope,
        spec: AdvancedCronJobSpec,
        status: AdvancedCronJobStatus,
    }
}

/// Desired state of a v1alpha1 AdvancedCronJob.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedCronJobSpec {
    /// The schedule, in cron format.
    #[serde(default)]
    pub schedule: String,
    /// IANA time zone the schedule is read in; the controller's local zone when unset.
    pub time_zone: Option<String>,
    /// Seconds after a missed scheduled time during which the run may still start.
    pub starting_deadline_seconds: Option<i64>,
    /// Allow (default), Forbid or Replace: what to do when a run is due while one is active.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub concurrency_policy: ConcurrencyPolicy,
    /// Suspend future runs (runs already started are not touched).
    pub paused: Option<bool>,
    /// Finished successful runs to keep (default 3).
    pub successful_jobs_history_limit: Option<i32>,
    /// Finished failed runs to keep (default 1).
    pub failed_jobs_history_limit: Option<i32>,
    /// What each run creates; exactly one template is set.
    #[serde(default)]
    pub template: CronJobTemplate,
}

/// The object each run creates (v1alpha1: a Job or a BroadcastJob).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJobTemplate {
    /// Create a batch/v1 Job.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub job_template: Option<JobTemplateSpec>,
    /// Create a BroadcastJob.
    pub broadcast_job_template: Option<BroadcastJobTemplateSpec>,
}
