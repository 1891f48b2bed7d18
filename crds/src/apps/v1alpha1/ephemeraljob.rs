//! EphemeralJob (v1alpha1 only): injects ephemeral containers into the pods a selector matches,
//! and tracks them like a job.

use k8s_openapi::{
    api::core::v1::EphemeralContainer,
    apimachinery::pkg::apis::meta::v1::{LabelSelector, Time},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

/// Environment variable set in each injected container to the owning job's UID.
pub const EPHEMERAL_CONTAINER_ENV_KEY: &str = "KRUISE_EJOB_ID";

kruise_resource! {
    /// A job whose work is ephemeral containers injected into existing pods.
    EphemeralJob {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "EphemeralJob",
        plural: "ephemeraljobs",
        scope: NamespaceResourceScope,
        spec: EphemeralJobSpec,
        status: EphemeralJobStatus,
    }
}

/// Desired state of an EphemeralJob.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralJobSpec {
    /// Pods to inject into.
    #[serialize_always] // Go writes `selector: null`; the CRD requires the key
    pub selector: Option<LabelSelector>,
    /// Most pods to inject into (all matched pods when unset).
    pub replicas: Option<i32>,
    /// Most pods running the ephemeral containers at once (default 1).
    pub parallelism: Option<i32>,
    /// The ephemeral containers to inject.
    #[serde(default)]
    pub template: EphemeralContainerTemplateSpec,
    /// Stop injecting into further pods.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub paused: bool,
    /// Seconds the job may stay active before it is failed.
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after finishing before the job is deleted (default 1800).
    pub ttl_seconds_after_finished: Option<i32>,
}

/// The ephemeral containers an EphemeralJob injects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralContainerTemplateSpec {
    /// Containers added to each matched pod.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub ephemeral_containers: Vec<EphemeralContainer>,
}

/// Observed state of an EphemeralJob.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralJobStatus {
    /// Latest observations of the job's state.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<EphemeralJobCondition>,
    /// When the controller started working on the job.
    pub start_time: Option<Time>,
    /// When the job finished.
    pub completion_time: Option<Time>,
    /// Overall phase of the job.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub phase: EphemeralJobPhase,
    /// Pods the selector matches.
    #[serde(rename = "match", default, skip_serializing_if = "crate::is_default")]
    pub matches: i32,
    /// Pods whose ephemeral containers are running.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub running: i32,
    /// Pods whose ephemeral containers succeeded.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub succeeded: i32,
    /// Pods whose ephemeral containers are waiting to start.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub waiting: i32,
    /// Pods whose ephemeral containers failed.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub failed: i32,
}

/// One observation of an EphemeralJob's state.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralJobCondition {
    /// What the condition is about.
    #[serde(rename = "type", default)]
    pub type_: EphemeralJobConditionType,
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

string_enum! {
    /// Type of an [`EphemeralJobCondition`].
    pub enum EphemeralJobConditionType {
        /// Every target ran its containers successfully.
        JobSucceeded = "JobSucceeded",
        /// The job failed.
        JobFailed = "JobFailed",
        /// The job hit an error it cannot get past.
        JobError = "JobError",
        /// The controller has started working on the job.
        Initialized = "Initialized",
        /// The selector matches no pod.
        MatchedEmpty = "MatchedEmpty",
    }
}

string_enum! {
    /// Overall phase of an EphemeralJob.
    pub enum EphemeralJobPhase {
        /// Finished successfully.
        Succeeded = "Succeeded",
        /// Finished with failures.
        Failed = "Failed",
        /// Waiting for containers to start.
        Waiting = "Waiting",
        /// Containers running.
        Running = "Running",
        /// Paused by the user.
        Paused = "Paused",
        /// Stopped by an error.
        Error = "Error",
        /// The wire value `Unknown`: the controller cannot tell.
        PhaseUnknown = "Unknown",
    }
}
