//! ContainerRecreateRequest, the storage version: asks the node daemon to restart (recreate)
//! some containers of one pod, optionally with a preStop hook and an unready grace period.

use k8s_openapi::{
    api::core::v1::{ContainerPort, ExecAction, HTTPGetAction, TCPSocketAction},
    apimachinery::pkg::apis::meta::v1::{Condition, Time},
};
use schemars::{JsonSchema, Schema};
use serde::{Deserialize, Serialize};

use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

/// Label with the UID of the pod a request targets.
pub const CONTAINER_RECREATE_REQUEST_POD_UID_KEY: &str = "crr.apps.kruise.io/pod-uid";
/// Label with the node of the pod a request targets.
pub const CONTAINER_RECREATE_REQUEST_NODE_NAME_KEY: &str = "crr.apps.kruise.io/node-name";
/// Label present (`true`) while a request is not finished.
pub const CONTAINER_RECREATE_REQUEST_ACTIVE_KEY: &str = "crr.apps.kruise.io/active";
/// Finalizer (and, at v1alpha1, annotation) recording that the pod was made not ready.
pub const CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY: &str = "crr.apps.kruise.io/unready-acquired";
/// Condition type set while the pod is held not ready before its containers are recreated.
pub const CONTAINER_RECREATE_REQUEST_PRE_RECREATE_GRACE_TYPE: &str = "PreRecreateGrace";

kruise_resource! {
    /// A request to recreate containers of one pod, carried out by the node daemon.
    ContainerRecreateRequest {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "ContainerRecreateRequest",
        plural: "containerrecreaterequests",
        scope: NamespaceResourceScope,
        spec: ContainerRecreateRequestSpec,
        status: ContainerRecreateRequestStatus,
    }
}

/// Desired state of a ContainerRecreateRequest.
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
    #[schemars(range(min = 0))]
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after finishing before the request is deleted.
    #[schemars(range(min = 0))]
    pub ttl_seconds_after_finished: Option<i32>,
}

/// One container to recreate.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestContainer {
    /// Container name.
    #[serde(default)]
    pub name: String,
    /// Hook run before the container is stopped (filled from the pod when left empty).
    pub pre_stop: Option<CRRProbeHandler>,
    /// Container ports, so that an httpGet/tcpSocket hook can name a port (filled from the pod).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "crate::schema::container_ports")]
    pub ports: Vec<ContainerPort>,
    /// The container's identity when the request was made (filled by the webhook).
    pub status_context: Option<ContainerRecreateRequestContainerContext>,
}

/// A hook action: exactly one of exec, httpGet or tcpSocket.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CRRProbeHandler {
    /// Run a command in the container.
    pub exec: Option<ExecAction>,
    /// Send an HTTP GET request.
    pub http_get: Option<HTTPGetAction>,
    /// Open a TCP connection.
    pub tcp_socket: Option<TCPSocketAction>,
}

/// A container's identity when the request was made; the daemon only recreates that instance.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestContainerContext {
    /// Runtime container ID.
    #[serde(rename = "containerID", default)]
    pub container_id: String,
    /// Restart count.
    #[serde(default)]
    pub restart_count: i32,
}

/// How the containers are recreated.
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
    #[schemars(range(min = 0))]
    pub termination_grace_period_seconds: Option<i64>,
    /// Seconds the pod is held not ready before the containers are stopped.
    #[schemars(range(min = 0))]
    pub unready_grace_period_seconds: Option<i64>,
    /// Seconds a recreated container must have run to count as recreated.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(range(min = 0))]
    pub min_started_seconds: i32,
}

string_enum! {
    /// Whether one container's failure fails the whole request.
    pub enum ContainerRecreateRequestFailurePolicyType {
        /// Fail the request.
        Fail = "Fail",
        /// Go on with the other containers.
        Ignore = "Ignore",
    }
    schema = ["Fail", "Ignore"]
}

/// Observed state of a ContainerRecreateRequest.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestStatus {
    /// Phase of the whole request.
    #[serde(default)]
    #[schemars(transform = without_default)]
    pub phase: ContainerRecreateRequestPhase,
    /// When the request finished.
    pub completion_time: Option<Time>,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
    /// Progress of each container.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub container_recreate_states: Vec<ContainerRecreateRequestContainerRecreateState>,
    /// The pod's container statuses as the controller last saw them, for the daemon.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub container_status_snapshot: Vec<ContainerRecreateRequestSyncContainerStatus>,
    /// Latest observations (PreRecreateGrace while the pod is held not ready).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<Condition>,
}

string_enum! {
    /// Phase of a request, or of one of its containers.
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
    schema = ["Pending", "Recreating", "Succeeded", "Failed", "Completed"]
}

/// Progress of one container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestContainerRecreateState {
    /// Container name.
    #[serde(default)]
    pub name: String,
    /// Phase of this container.
    #[serde(default)]
    #[schemars(transform = without_default)]
    pub phase: ContainerRecreateRequestPhase,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
    /// The container has been stopped by the daemon.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub is_killed: bool,
}

/// One container status of the pod, as the controller passes it on to the daemon.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestSyncContainerStatus {
    /// Container name.
    #[serde(default)]
    pub name: String,
    /// Whether the container is ready.
    #[serde(default)]
    pub ready: bool,
    /// Restart count.
    #[serde(default)]
    pub restart_count: i32,
    /// Runtime container ID.
    #[serde(rename = "containerID", default, skip_serializing_if = "crate::is_default")]
    pub container_id: String,
}

/// Drops the `default: ""` schemars derives for an always-written enum field: the empty string
/// is not one of the enum's values, and the API server rejects a CRD whose default fails its
/// own schema.
fn without_default(schema: &mut Schema) {
    schema.remove("default");
}
