//! ContainerRecreateRequest v1alpha1: no status conditions or snapshot (the controller kept
//! them in annotations) and no enum checks in the schema. Served for existing manifests;
//! stored as v1beta1.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    CRRProbeHandler, ContainerRecreateRequestContainer, ContainerRecreateRequestContainerContext,
    ContainerRecreateRequestSyncContainerStatus,
};
use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

/// v1alpha1 annotation holding the pod's container statuses (JSON list of
/// [`ContainerRecreateRequestSyncContainerStatus`]); v1beta1 `status.containerStatusSnapshot`.
pub const CONTAINER_RECREATE_REQUEST_SYNC_CONTAINER_STATUSES_KEY: &str =
    "crr.apps.kruise.io/sync-container-statuses";

kruise_resource! {
    /// ContainerRecreateRequest as served at apps.kruise.io/v1alpha1.
    ContainerRecreateRequest {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "ContainerRecreateRequest",
        plural: "containerrecreaterequests",
        scope: NamespaceResourceScope,
        spec: ContainerRecreateRequestSpec,
        status: ContainerRecreateRequestStatus,
    }
}

/// Desired state of a v1alpha1 ContainerRecreateRequest.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestSpec {
    /// Name of the pod, in the request's namespace.
    #[serde(default)]
    pub pod_name: String,
    /// Containers to recreate.
    #[serde(default)]
    pub containers: Vec<ContainerRecreateRequestContainer>,
    /// How to recreate them.
    pub strategy: Option<ContainerRecreateRequestStrategy>,
    /// Seconds the request may stay active before it is failed.
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after finishing before the request is deleted.
    pub ttl_seconds_after_finished: Option<i32>,
}

/// How the containers are recreated (v1alpha1).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestStrategy {
    /// Fail (default) or Ignore: whether one container's failure fails the request.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub failure_policy: ContainerRecreateRequestFailurePolicyType,
    /// Recreate one container at a time, waiting for each to start.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub ordered_recreate: bool,
    /// Stop a container even if its previous instance is already restarting (the preStop hook
    /// still runs).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub force_recreate: bool,
    /// Grace period of the kill; the pod's when unset.
    pub termination_grace_period_seconds: Option<i64>,
    /// Seconds the pod is held not ready before the containers are stopped.
    pub unready_grace_period_seconds: Option<i64>,
    /// Seconds a recreated container must have run to count as recreated.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub min_started_seconds: i32,
}

string_enum! {
    /// Whether one container's failure fails the whole request (v1alpha1).
    pub enum ContainerRecreateRequestFailurePolicyType {
        /// Fail the request.
        Fail = "Fail",
        /// Go on with the other containers.
        Ignore = "Ignore",
    }
}

/// Observed state of a v1alpha1 ContainerRecreateRequest.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestStatus {
    /// Phase of the whole request.
    #[serde(default)]
    pub phase: ContainerRecreateRequestPhase,
    /// When the request finished.
    pub completion_time: Option<Time>,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
    /// Progress of each container.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub container_recreate_states: Vec<ContainerRecreateRequestContainerRecreateState>,
}

string_enum! {
    /// Phase of a request, or of one of its containers (v1alpha1).
    pub enum ContainerRecreateRequestPhase {
        /// Not started.
        Pending = "Pending",
        /// Containers being recreated.
        Recreating = "Recreating",
        /// Recreated (per container).
        Succeeded = "Succeeded",
        /// Failed.
        Failed = "Failed",
        /// The request finished.
        Completed = "Completed",
    }
}

/// Progress of one container (v1alpha1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestContainerRecreateState {
    /// Container name.
    #[serde(default)]
    pub name: String,
    /// Phase of this container.
    #[serde(default)]
    pub phase: ContainerRecreateRequestPhase,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
    /// The container has been stopped by the daemon.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub is_killed: bool,
}
