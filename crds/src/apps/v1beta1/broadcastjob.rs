//! BroadcastJob, the storage version: runs one pod to completion on every eligible node, like a
//! DaemonSet whose pods are jobs.

use k8s_openapi::{
    api::core::v1::PodTemplateSpec,
    apimachinery::pkg::{apis::meta::v1::Time, util::intstr::IntOrString},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// A job that runs one pod on each node the pod template can be scheduled to.
    BroadcastJob {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "BroadcastJob",
        plural: "broadcastjobs",
        scope: NamespaceResourceScope,
        spec: BroadcastJobSpec,
        status: BroadcastJobStatus,
    }
}

/// Desired state of a BroadcastJob.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobSpec {
    /// Most pods running at the same time (count or percentage of nodes); unlimited when unset.
    pub parallelism: Option<IntOrString>,
    /// The pod run on each node.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub template: PodTemplateSpec,
    /// When the job is considered finished.
    #[serde(default, skip_serializing_if = "crate::always_write")]
    pub completion_policy: CompletionPolicy,
    /// Stop creating pods; pods already running are left alone.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub paused: bool,
    /// What the job does when its pods fail.
    #[serde(default, skip_serializing_if = "crate::always_write")]
    pub failure_policy: FailurePolicy,
}

/// When a job is finished (shared by BroadcastJob, ImagePullJob and ImageListPullJob).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompletionPolicy {
    /// Always (default): finish once every pod ended; Never: keep running, picking up new nodes.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: CompletionPolicyType,
    /// Seconds the job may stay active before it is failed (Always only).
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after finishing before the job is deleted (Always only); kept forever when unset.
    pub ttl_seconds_after_finished: Option<i32>,
}

string_enum! {
    /// Whether a job ever finishes on its own.
    pub enum CompletionPolicyType {
        /// The job finishes when all its work ended (or the deadline passed).
        Always = "Always",
        /// The job never finishes; it keeps serving nodes that appear later.
        Never = "Never",
    }
}

/// What a BroadcastJob does when pods fail.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailurePolicy {
    /// FailFast (default), Continue or Pause.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: FailurePolicyType,
    /// Container restarts tolerated across the job's pods before the job counts as failed.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub restart_limit: i32,
}

string_enum! {
    /// Reaction of a BroadcastJob to a failed pod.
    pub enum FailurePolicyType {
        /// Keep going; the job may still complete.
        Continue = "Continue",
        /// Fail the job at the first failed pod.
        FailFast = "FailFast",
        /// Pause the job at the first failed pod.
        Pause = "Pause",
    }
}

/// Observed state of a BroadcastJob.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobStatus {
    /// Latest observations of the job's state.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<JobCondition>,
    /// When the controller started working on the job.
    pub start_time: Option<Time>,
    /// When the job finished.
    pub completion_time: Option<Time>,
    /// Pods currently running.
    #[serde(default, skip_serializing_if = "crate::always_write")]
    pub active: i32,
    /// Pods that succeeded.
    #[serde(default, skip_serializing_if = "crate::always_write")]
    pub succeeded: i32,
    /// Pods that failed.
    #[serde(default, skip_serializing_if = "crate::always_write")]
    pub failed: i32,
    /// Pods the job should run (one per eligible node).
    #[serde(default, skip_serializing_if = "crate::always_write")]
    pub desired: i32,
    /// Overall phase of the job.
    #[serde(default, skip_serializing_if = "crate::always_write")]
    pub phase: BroadcastJobPhase,
}

string_enum! {
    /// Overall phase of a BroadcastJob (lower-case on the wire).
    pub enum BroadcastJobPhase {
        /// Every pod finished.
        Completed = "completed",
        /// Pods are being run.
        Running = "running",
        /// Paused by the user or by the failure policy.
        Paused = "paused",
        /// The job failed.
        Failed = "failed",
    }
}

string_enum! {
    /// Type of a [`JobCondition`].
    pub enum JobConditionType {
        /// The job finished successfully.
        Complete = "Complete",
        /// The job failed.
        Failed = "Failed",
    }
}

/// One observation of a BroadcastJob's state.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobCondition {
    /// Complete or Failed.
    #[serde(rename = "type", default)]
    pub type_: JobConditionType,
    /// True, False or Unknown.
    #[serde(default)]
    pub status: String,
    /// Last time the condition was checked.
    pub last_probe_time: Option<Time>,
    /// Last time the status changed.
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last transition.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub reason: String,
    /// Human-readable details of the last transition.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
}
