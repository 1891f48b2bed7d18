//! PersistentPodState v1alpha1: topology terms name their keys `nodeTopologyKeys`, and the
//! retention policy is not enumerated in the schema. Stored as v1beta1.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    PersistentPodAnnotation, PersistentPodStateStatus, PodState, TargetReference,
};
use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

/// Workload annotation (`"true"`) asking kruise to create a PersistentPodState for it.
pub const AUTO_GENERATE_PERSISTENT_POD_STATE_KEY: &str = "kruise.io/auto-generate-persistent-pod-state";
/// Workload annotation: comma-separated node label keys a recreated pod must match.
pub const REQUIRED_PERSISTENT_TOPOLOGY_KEY: &str = "kruise.io/required-persistent-topology";
/// Workload annotation: comma-separated node label keys a recreated pod should match (weight 100).
pub const PREFERRED_PERSISTENT_TOPOLOGY_KEY: &str = "kruise.io/preferred-persistent-topology";
/// Workload annotation: comma-separated pod annotation keys to persist.
pub const PERSISTENT_POD_ANNOTATIONS_KEY: &str = "kruise.io/persistent-pod-annotations";

kruise_resource! {
    /// PersistentPodState as served at apps.kruise.io/v1alpha1.
    PersistentPodState {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "PersistentPodState",
        plural: "persistentpodstates",
        scope: NamespaceResourceScope,
        spec: PersistentPodStateSpec,
        status: PersistentPodStateStatus,
    }
}

/// Desired state of a v1alpha1 PersistentPodState.
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
    /// Node labels a recreated pod must match.
    pub required_persistent_topology: Option<NodeTopologyTerm>,
    /// Node labels a recreated pod should match, with a weight.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub preferred_persistent_topology: Vec<PreferredTopologyTerm>,
    /// When recorded pod states are dropped: WhenScaled (default) or WhenDeleted.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub persistent_pod_state_retention_policy: PersistentPodStateRetentionPolicyType,
}

/// A weighted preference for the nodes carrying the recorded topology labels (v1alpha1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreferredTopologyTerm {
    /// Weight of the preference.
    #[serde(default)]
    pub weight: i32,
    /// The node labels to prefer.
    #[serde(default)]
    pub preference: NodeTopologyTerm,
}

/// A set of node label keys (v1alpha1 spelling; v1beta1 calls the list `keys`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeTopologyTerm {
    /// Node label keys.
    #[serde(default)]
    pub node_topology_keys: Vec<String>,
}

string_enum! {
    /// When the record of a pod is removed (v1alpha1: any string is accepted by the schema).
    pub enum PersistentPodStateRetentionPolicyType {
        /// Drop the record of a pod when the workload scales it away.
        WhenScaled = "WhenScaled",
        /// Keep records until the workload itself is deleted.
        WhenDeleted = "WhenDeleted",
    }
}
