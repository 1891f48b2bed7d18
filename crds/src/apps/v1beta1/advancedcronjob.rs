//! AdvancedCronJob, the storage version: creates a Job, a BroadcastJob or an ImageListPullJob
//! on a cron schedule.

use k8s_openapi::{
    api::{batch::v1::JobTemplateSpec, core::v1::ObjectReference},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::{BroadcastJobSpec, ImageListPullJobSpec};
use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// A cron job whose runs can be Jobs, BroadcastJobs or ImageListPullJobs.
    AdvancedCronJob {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "AdvancedCronJob",
        plural: "advancedcronjobs",
        scope: NamespaceResourceScope,
        spec: AdvancedCronJobSpec,
        status: AdvancedCronJobStatus,
    }
}

/// Desired state of an AdvancedCronJob.
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
    /// Allow, Forbid or Replace: what to do when a run is due while one is active (default
    /// Allow; Replace for image-list runs).
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

/// The object each run creates: one of the templates.
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
    /// Create an ImageListPullJob.
    pub image_list_pull_job_template: Option<ImageListPullJobTemplateSpec>,
}

string_enum! {
    /// Which kind of object an AdvancedCronJob creates.
    pub enum TemplateKind {
        /// batch/v1 Job.
        Job = "Job",
        /// Kruise BroadcastJob.
        BroadcastJob = "BroadcastJob",
        /// Kruise ImageListPullJob.
        ImageListPullJob = "ImageListPullJob",
    }
}

/// Metadata and spec of the BroadcastJobs an AdvancedCronJob creates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobTemplateSpec {
    /// Labels and annotations copied to each BroadcastJob.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "template_metadata_schema")]
    pub metadata: ObjectMeta,
    /// Spec of each BroadcastJob.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub spec: BroadcastJobSpec,
}

/// Metadata and spec of the ImageListPullJobs an AdvancedCronJob creates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageListPullJobTemplateSpec {
    /// Labels and annotations copied to each ImageListPullJob.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "template_metadata_schema")]
    pub metadata: ObjectMeta,
    /// Spec of each ImageListPullJob.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub spec: ImageListPullJobSpec,
}

string_enum! {
    /// What to do when a run is due while an earlier one is still active.
    pub enum ConcurrencyPolicy {
        /// Start the new run alongside.
        Allow = "Allow",
        /// Skip the new run.
        Forbid = "Forbid",
        /// Delete the active run and start the new one.
        Replace = "Replace",
    }
    schema = ["Allow", "Forbid", "Replace"]
}

/// Observed state of an AdvancedCronJob.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedCronJobStatus {
    /// Kind of object the runs are.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: TemplateKind,
    /// The runs currently active.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub active: Vec<ObjectReference>,
    /// When a run was last started.
    pub last_schedule_time: Option<Time>,
}

/// Schema of a template's metadata: an object kept as written (upstream declares a bare
/// `type: object`, under which the API server would prune the labels and annotations).
fn template_metadata_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true })
}
