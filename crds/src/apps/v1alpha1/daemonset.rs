//! Advanced DaemonSet v1alpha1: no `scaleStrategy` (progressive creation is asked for with an
//! annotation), the deprecated `Surging` rolling update type, and `status.daemonSetHash` in
//! place of `updateRevision`. Served for existing manifests; stored as v1beta1.

use k8s_openapi::{
    api::{apps::v1::DaemonSetCondition, core::v1::PodTemplateSpec},
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::DaemonSetUpdateStrategyType;
use crate::{
    common::Lifecycle,
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

/// v1alpha1 annotation asking for progressive pod creation (`"true"`); v1beta1 has
/// `spec.scaleStrategy.partitionedScaling` instead.
pub const PROGRESSIVE_CREATE_POD_ANNOTATION: &str = "daemonset.kruise.io/progressive-create-pod";

kruise_resource! {
    /// Advanced DaemonSet as served at apps.kruise.io/v1alpha1.
    DaemonSet {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "DaemonSet",
        plural: "daemonsets",
        scope: NamespaceResourceScope,
        spec: DaemonSetSpec,
        status: DaemonSetStatus,
    }
}

/// Desired state of a v1alpha1 Advanced DaemonSet.
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
}

/// How pods move to a new revision (v1alpha1).
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
    /// How a rolling update replaces each pod (v1alpha1).
    pub enum DaemonSetRollingUpdateType {
        /// Delete the old pod and create a new one (or surge first when maxSurge is set).
        Standard = "Standard",
        /// Update the pod in place when only images changed, else recreate it.
        InPlaceIfPossible = "InPlaceIfPossible",
        /// Deprecated: surge a new pod before removing the old one; now Standard with maxSurge.
        Surging = "Surging",
    }
}

/// Parameters of a rolling update (v1alpha1).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDaemonSet {
    /// Standard (default), InPlaceIfPossible or the deprecated Surging.
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

/// Observed state of a v1alpha1 Advanced DaemonSet.
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
    /// Hash of the latest revision (v1beta1 `updateRevision`).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub daemon_set_hash: String,
}
