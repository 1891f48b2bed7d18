//! Advanced DaemonSet, the storage version: one pod per eligible node, with partitioned,
//! node-selected, surging or in-place rolling updates.

use k8s_openapi::{
    api::{apps::v1::DaemonSetCondition, core::v1::PodTemplateSpec},
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::Lifecycle,
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// A pod on every node that the template's scheduling constraints allow, kept there and
    /// updated by the Advanced DaemonSet controller.
    DaemonSet {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "DaemonSet",
        plural: "daemonsets",
        scope: NamespaceResourceScope,
        spec: DaemonSetSpec,
        status: DaemonSetStatus,
    }
}

/// Desired state of an Advanced DaemonSet.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetSpec {
    /// Label query over the pods; must match the template labels.
    #[serialize_always] // Go writes `selector: null`; the CRD requires the key
    pub selector: Option<LabelSelector>,
    /// The pod template.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub template: PodTemplateSpec,
    /// How pods move to a new revision.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub update_strategy: DaemonSetUpdateStrategy,
    /// Seconds a ready pod must stay ready to count as available.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub min_ready_seconds: i32,
    /// Most pods created or deleted in one sync (count or percentage; default 250).
    pub burst_replicas: Option<IntOrString>,
    /// Old revisions kept for rollback (default 10).
    pub revision_history_limit: Option<i32>,
    /// Hooks around pod deletion.
    pub lifecycle: Option<Lifecycle>,
    /// How pods are created on new nodes.
    pub scale_strategy: Option<DaemonSetScaleStrategy>,
}

/// How pods are created on nodes that have none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetScaleStrategy {
    /// Let `rollingUpdate.partition` also hold back pod creation, so a new DaemonSet reaches
    /// its nodes progressively.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub partitioned_scaling: bool,
}

/// How pods move to a new revision.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetUpdateStrategy {
    /// RollingUpdate (default) or OnDelete.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: DaemonSetUpdateStrategyType,
    /// Parameters of RollingUpdate.
    pub rolling_update: Option<RollingUpdateDaemonSet>,
}

string_enum! {
    /// Whether the controller updates pods itself.
    pub enum DaemonSetUpdateStrategyType {
        /// The controller replaces pods node by node within the configured limits.
        RollingUpdate = "RollingUpdate",
        /// Pods are only replaced when a user deletes them.
        OnDelete = "OnDelete",
    }
}

string_enum! {
    /// How a rolling update replaces each pod.
    pub enum DaemonSetRollingUpdateType {
        /// Delete the old pod and create a new one (or surge first when maxSurge is set).
        Standard = "Standard",
        /// Update the pod in place when only images changed, else recreate it.
        InPlaceIfPossible = "InPlaceIfPossible",
    }
}

/// Parameters of a rolling update.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDaemonSet {
    /// Standard (default) or InPlaceIfPossible.
    #[serde(rename = "rollingUpdateType", default, skip_serializing_if = "crate::is_default")]
    pub type_: DaemonSetRollingUpdateType,
    /// Most nodes whose pod may be unavailable during the update (count or percentage).
    pub max_unavailable: Option<IntOrString>,
    /// Most nodes that may run an extra new pod beside the old one during the update.
    pub max_surge: Option<IntOrString>,
    /// Only nodes whose labels match are updated.
    pub selector: Option<LabelSelector>,
    /// Nodes (count or percentage) kept at the old revision.
    pub partition: Option<IntOrString>,
    /// Stop updating pods.
    pub paused: Option<bool>,
}

/// Observed state of an Advanced DaemonSet.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetStatus {
    /// Nodes running at least one daemon pod that should.
    #[serde(default)]
    pub current_number_scheduled: i32,
    /// Nodes running a daemon pod that should not.
    #[serde(default)]
    pub number_misscheduled: i32,
    /// Nodes that should run a daemon pod.
    #[serde(default)]
    pub desired_number_scheduled: i32,
    /// Nodes whose daemon pod is Ready.
    #[serde(default)]
    pub number_ready: i32,
    /// Generation of the spec this status reflects.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub observed_generation: i64,
    /// Nodes running a daemon pod of the update revision.
    #[serde(default)]
    pub updated_number_scheduled: i32,
    /// Nodes whose daemon pod has been ready for minReadySeconds.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub number_available: i32,
    /// Nodes that should run an available daemon pod and do not.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub number_unavailable: i32,
    /// Hash collisions met when naming revisions.
    pub collision_count: Option<i32>,
    /// Latest observations of the DaemonSet's state.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<DaemonSetCondition>,
    /// The latest revision's hash (v1alpha1 `daemonSetHash`).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub update_revision: String,
}
