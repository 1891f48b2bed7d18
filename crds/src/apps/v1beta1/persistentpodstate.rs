//! PersistentPodState, the storage version: remembers where the pods of a StatefulSet ran (node
//! topology, chosen annotations) so that a recreated pod can be steered back to the same place.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// Records the node placement of a workload's pods and asks the pod webhook to reuse it.
    PersistentPodState {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "PersistentPodState",
        plural: "persistentpodstates",
        scope: NamespaceResourceScope,
        spec: PersistentPodStateSpec,
        status: PersistentPodStateStatus,
    }
}

/// Desired state of a PersistentPodState.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersistentPodStateSpec {
    /// The workload whose pods are tracked (only StatefulSets are supported).
    #[serde(rename = "targetRef", default)]
    pub target_reference: TargetReference,
    /// Pod annotations whose values are recorded and restored on recreated pods.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub persistent_pod_annotations: Vec<PersistentPodAnnotation>,
    /// Node labels a recreated pod must match (a required node affinity).
    pub required_persistent_topology: Option<NodeTopologyTerm>,
    /// Node labels a recreated pod should match, with a weight (a preferred node affinity).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub preferred_persistent_topology: Vec<PreferredTopologyTerm>,
    /// When recorded pod states are dropped: WhenScaled (default) or WhenDeleted.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub persistent_pod_state_retention_policy: PersistentPodStateRetentionPolicyType,
}

/// A weighted preference for the nodes carrying the recorded topology labels.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreferredTopologyTerm {
    /// Weight of the preference (0 or more).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub weight: i32,
    /// The node labels to prefer.
    #[serde(default)]
    pub preference: NodeTopologyTerm,
}

/// A set of node label keys whose recorded values a pod is sent back to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeTopologyTerm {
    /// Node label keys (for example `kubernetes.io/hostname`, `topology.kubernetes.io/zone`).
    #[serde(default)]
    pub keys: Vec<String>,
}

/// One pod annotation to persist.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersistentPodAnnotation {
    /// Annotation key.
    #[serde(default)]
    pub key: String,
}

string_enum! {
    /// When the record of a pod is removed.
    pub enum PersistentPodStateRetentionPolicyType {
        /// Drop the record of a pod when the workload scales it away.
        WhenScaled = "WhenScaled",
        /// Keep records until the workload itself is deleted.
        WhenDeleted = "WhenDeleted",
    }
    schema = ["WhenScaled", "WhenDeleted"]
}

/// Observed state of a PersistentPodState.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersistentPodStateStatus {
    /// Generation of the spec this status reflects.
    #[serde(default)]
    pub observed_generation: i64,
    /// What was recorded per pod name once the pod became ready.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pod_states: BTreeMap<String, PodState>,
}

/// What was recorded about one pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodState {
    /// The node the pod ran on.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub node_name: String,
    /// Values of the topology label keys on that node.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub node_topology_labels: BTreeMap<String, String>,
    /// Values of the persisted annotations.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub annotations: BTreeMap<String, String>,
}

/// Names a workload by apiVersion, kind and name (used by PersistentPodState and
/// WorkloadSpread).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetReference {
    /// API version of the workload.
    #[serde(default)]
    pub api_version: String,
    /// Kind of the workload.
    #[serde(default)]
    pub kind: String,
    /// Name of the workload.
    #[serde(default)]
    pub name: String,
}
