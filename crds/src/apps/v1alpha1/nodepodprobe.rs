//! NodePodProbe (v1alpha1 only, cluster-scoped): one per node, named after it. Lists the probes
//! the node daemon runs for the pods on the node (compiled from PodProbeMarkers) and reports
//! their results.

use k8s_openapi::{
    api::core::v1::{ExecAction, GRPCAction, HTTPGetAction, TCPSocketAction},
    apimachinery::pkg::apis::meta::v1::Time,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// The probes to run on one node, and their latest results.
    NodePodProbe {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "NodePodProbe",
        plural: "nodepodprobes",
        scope: ClusterResourceScope,
        spec: NodePodProbeSpec,
        status: NodePodProbeStatus,
    }
}

/// Desired state of a NodePodProbe.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbeSpec {
    /// One entry per pod on the node that has probes.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pod_probes: Vec<PodProbe>,
}

/// The probes of one pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbe {
    /// Pod name.
    #[serde(default)]
    pub name: String,
    /// Pod namespace.
    #[serde(default)]
    pub namespace: String,
    /// Pod UID.
    #[serde(default)]
    pub uid: String,
    /// Pod IP, the target of network probes.
    #[serde(rename = "IP", default)]
    pub ip: String,
    /// The probes.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub probes: Vec<ContainerProbe>,
}

/// One probe of one container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProbe {
    /// Probe name, `<marker>#<probe>` (unique in the pod).
    #[serde(default)]
    pub name: String,
    /// The container probed.
    #[serde(default)]
    pub container_name: String,
    /// What to run, and how often.
    #[serde(default)]
    pub probe: ContainerProbeSpec,
}

/// A probe as in a container spec: one handler (exec, httpGet, tcpSocket or grpc) and timing.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProbeSpec {
    /// Run a command in the container.
    pub exec: Option<ExecAction>,
    /// Send an HTTP GET request.
    pub http_get: Option<HTTPGetAction>,
    /// Open a TCP connection.
    pub tcp_socket: Option<TCPSocketAction>,
    /// Call the gRPC health check service.
    #[schemars(schema_with = "crate::schema::grpc_action")]
    pub grpc: Option<GRPCAction>,
    /// Seconds after the container started before the first probe.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub initial_delay_seconds: i32,
    /// Seconds one probe may take (default 1).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub timeout_seconds: i32,
    /// Seconds between probes (default 10).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub period_seconds: i32,
    /// Successes in a row that count as success after a failure (default 1).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub success_threshold: i32,
    /// Failures in a row that count as failure (default 3).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub failure_threshold: i32,
    /// Grace period of a kill caused by this probe (unused by Kruise probes).
    pub termination_grace_period_seconds: Option<i64>,
}

/// Observed state of a NodePodProbe.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbeStatus {
    /// Results per pod.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pod_probe_statuses: Vec<PodProbeStatus>,
}

/// Probe results of one pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeStatus {
    /// Pod name.
    #[serde(default)]
    pub name: String,
    /// Pod namespace.
    #[serde(default)]
    pub namespace: String,
    /// Pod UID.
    #[serde(default)]
    pub uid: String,
    /// One entry per probe.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub probe_states: Vec<ContainerProbeState>,
}

/// The latest result of one probe.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProbeState {
    /// Probe name.
    #[serde(default)]
    pub name: String,
    /// Succeeded, Failed or Unknown.
    #[serde(default)]
    pub state: ProbeState,
    /// When the probe last ran.
    pub last_probe_time: Option<Time>,
    /// When the state last changed.
    pub last_transition_time: Option<Time>,
    /// Output of the probe.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
}

string_enum! {
    /// Result of a probe.
    pub enum ProbeState {
        /// The probe passed.
        Succeeded = "Succeeded",
        /// The probe failed.
        Failed = "Failed",
        /// The wire value `Unknown`: no result yet, or the probe could not run.
        StateUnknown = "Unknown",
    }
}

impl ProbeState {
    /// Whether this state matches a pod condition status (`True`, `False`, anything else).
    pub fn matches_condition_status(&self, status: &str) -> bool {
        match status {
            "True" => *self == Self::Succeeded,
            "False" => *self == Self::Failed,
            _ => *self == Self::StateUnknown,
        }
    }
}
