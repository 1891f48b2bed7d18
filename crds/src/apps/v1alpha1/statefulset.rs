//! Advanced StatefulSet v1alpha1: the v1beta1 shape without lifecycle hooks, reserved
//! ordinals, scale limits, PVC retention and resizing, or ordinal start. Served for existing
//! manifests; stored as v1beta1.

use k8s_openapi::{
    api::{
        apps::v1::StatefulSetCondition,
        core::v1::{PersistentVolumeClaim, PodTemplateSpec},
    },
    apimachinery::pkg::apis::meta::v1::LabelSelector,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    PodManagementPolicyType, PodUpdatePolicy, RollingUpdateStatefulSetStrategy, StatefulSetUpdateStrategy,
    StatefulSetUpdateStrategyType, UnorderedUpdateStrategy,
};
use crate::resource::{APPS_GROUP, kruise_resource};

kruise_resource! {
    /// Advanced StatefulSet as served at apps.kruise.io/v1alpha1.
    StatefulSet {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "StatefulSet",
        plural: "statefulsets",
        scope: NamespaceResourceScope,
        spec: StatefulSetSpec,
        status: StatefulSetStatus,
    }
}

/// Desired state of a v1alpha1 Advanced StatefulSet.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetSpec {
    /// Desired number of pods (default 1).
    pub replicas: Option<i32>,
    /// Label query over the pods; must match the template labels.
    #[serialize_always] // Go writes `selector: null`; the CRD requires the key
    pub selector: Option<LabelSelector>,
    /// The pod template; each pod also gets its ordinal identity.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub template: PodTemplateSpec,
    /// Claims stamped out once per pod and mounted by name.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub volume_claim_templates: Vec<PersistentVolumeClaim>,
    /// Headless service giving the pods their DNS names.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub service_name: String,
    /// OrderedReady (default) or Parallel creation and deletion.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pod_management_policy: PodManagementPolicyType,
    /// How pods move to a new revision.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub update_strategy: StatefulSetUpdateStrategy,
    /// Old revisions kept for rollback (default 10).
    pub revision_history_limit: Option<i32>,
}

/// Observed state of a v1alpha1 Advanced StatefulSet.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetStatus {
    /// Generation of the spec this status reflects.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub observed_generation: i64,
    /// Pods owned by the set.
    #[serde(default)]
    pub replicas: i32,
    /// Pods that are Ready.
    #[serde(default)]
    pub ready_replicas: i32,
    /// Ready pods that have been ready for minReadySeconds.
    #[serde(default)]
    pub available_replicas: i32,
    /// Pods at the current revision.
    #[serde(default)]
    pub current_replicas: i32,
    /// Pods at the update revision.
    #[serde(default)]
    pub updated_replicas: i32,
    /// Revision of the pods below the update boundary.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub current_revision: String,
    /// The latest revision.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub update_revision: String,
    /// Hash collisions met when naming revisions.
    pub collision_count: Option<i32>,
    /// Latest observations of the set's state.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<StatefulSetCondition>,
    /// Serialized selector, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub label_selector: String,
}
