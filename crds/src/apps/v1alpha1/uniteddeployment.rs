//! UnitedDeployment v1alpha1: the same spec as v1beta1; the status keeps per-subset replicas
//! in a `subsetReplicas` map and the update progress in `updateStatus` (updated revision and
//! per-subset partitions). Served for existing manifests; stored as v1beta1.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    AdaptiveUnitedDeploymentStrategy, AdvancedStatefulSetTemplateSpec, CloneSetTemplateSpec,
    DeploymentTemplateSpec, ManualUpdate, StatefulSetTemplateSpec, Subset, SubsetTemplate, Topology,
    UnitedDeploymentCondition, UnitedDeploymentConditionType, UnitedDeploymentScheduleStrategy,
    UnitedDeploymentScheduleStrategyType, UnitedDeploymentSpec, UnitedDeploymentSubsetCondition,
    UnitedDeploymentSubsetConditionType, UnitedDeploymentSubsetStatus, UnitedDeploymentUpdateStrategy,
    UnitedDeploymentUpdateStrategyType,
};
use crate::resource::{APPS_GROUP, kruise_resource};

kruise_resource! {
    /// UnitedDeployment as served at apps.kruise.io/v1alpha1.
    UnitedDeployment {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "UnitedDeployment",
        plural: "uniteddeployments",
        scope: NamespaceResourceScope,
        spec: UnitedDeploymentSpec,
        status: UnitedDeploymentStatus,
    }
}

/// Observed state of a v1alpha1 UnitedDeployment.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentStatus {
    /// Generation of the spec this status reflects.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub observed_generation: i64,
    /// Pods that are Ready.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub ready_replicas: i32,
    /// Pods over all subsets.
    #[serde(default)]
    pub replicas: i32,
    /// Pods at the updated revision.
    #[serde(default)]
    pub updated_replicas: i32,
    /// Pods kept pending by Adaptive scheduling with reservation.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub reserved_pods: i32,
    /// Pods at the updated revision that are Ready.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub updated_ready_replicas: i32,
    /// Hash collisions met when naming revisions.
    pub collision_count: Option<i32>,
    /// The revision the subsets were at before the latest change.
    #[serde(default)]
    pub current_revision: String,
    /// Replicas given to each subset, by subset name.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub subset_replicas: BTreeMap<String, i32>,
    /// Status of each subset.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub subset_statuses: Vec<UnitedDeploymentSubsetStatus>,
    /// Latest observations of the UnitedDeployment's state.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<UnitedDeploymentCondition>,
    /// Progress of the latest update.
    pub update_status: Option<UnitedDeploymentUpdateStatus>,
    /// Serialized selector, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub label_selector: String,
}

/// Progress of the latest update (v1alpha1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentUpdateStatus {
    /// The latest revision.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub updated_revision: String,
    /// Partition currently applied to each subset, by subset name.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub current_partitions: BTreeMap<String, i32>,
}
