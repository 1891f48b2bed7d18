//! CloneSet, the storage version: a stateless workload whose pods can be updated in place.

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, PodTemplateSpec},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, Time},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{InPlaceUpdateStrategy, Lifecycle, UpdatePriorityStrategy, UpdateScatterStrategy},
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// A set of identical pods, scaled and updated (in place where possible) by the CloneSet
    /// controller.
    CloneSet {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "CloneSet",
        plural: "clonesets",
        scope: NamespaceResourceScope,
        spec: CloneSetSpec,
        status: CloneSetStatus,
    }
}

/// Desired state of a CloneSet.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetSpec {
    /// Desired number of pods (default 1).
    pub replicas: Option<i32>,
    /// Label query over the pods; must match the template labels.
    #[serialize_always] // Go writes `selector: null`; the CRD requires the key
    pub selector: Option<LabelSelector>,
    /// The pod template.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub template: PodTemplateSpec,
    /// One PVC per pod is created from each claim template.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub volume_claim_templates: Vec<PersistentVolumeClaim>,
    /// How pods are created and deleted.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub scale_strategy: CloneSetScaleStrategy,
    /// How pods move to a new revision.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub update_strategy: CloneSetUpdateStrategy,
    /// Old revisions kept for rollback (default 10).
    pub revision_history_limit: Option<i32>,
    /// Seconds a ready pod must stay ready to count as available.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub min_ready_seconds: i32,
    /// Hooks around pod creation, deletion and in-place update.
    pub lifecycle: Option<Lifecycle>,
    /// Seconds after which a rollout that makes no progress is reported as stalled.
    pub progress_deadline_seconds: Option<i32>,
}

/// How pods are created and deleted.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetScaleStrategy {
    /// Names of pods to delete (the count is kept by creating replacements).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pods_to_delete: Vec<String>,
    /// Most pods that may be unavailable because of scaling (default unlimited).
    pub max_unavailable: Option<IntOrString>,
    /// Reuse the PVCs of a deleted pod for its replacement.
    #[schemars(extend("x-kruise-default" = false))]
    #[serde(rename = "enablePVCReuse", default, skip_serializing_if = "crate::is_default")]
    pub enable_pvc_reuse: bool,
    /// Do not count pods in PreparingDelete when computing how many to create.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub exclude_preparing_delete: bool,
}

/// How pods move to a new revision.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetUpdateStrategy {
    /// RollingUpdate (default) or OnDelete; empty means RollingUpdate.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: CloneSetUpdateStrategyType,
    /// Parameters of RollingUpdate.
    pub rolling_update: Option<RollingUpdateCloneSetStrategy>,
}

string_enum! {
    /// Whether the controller updates pods itself.
    pub enum CloneSetUpdateStrategyType {
        /// The controller updates pods, within partition and availability limits.
        RollingUpdate = "RollingUpdate",
        /// Pods are only replaced when a user deletes them.
        OnDelete = "OnDelete",
    }
}

string_enum! {
    /// How one pod is moved to a new revision.
    pub enum PodUpdatePolicy {
        /// Delete the pod and create a new one.
        ReCreate = "ReCreate",
        /// Update in place when only images (or resources, metadata) changed, else recreate.
        InPlaceIfPossible = "InPlaceIfPossible",
        /// Only in-place updates are allowed; other template changes are rejected.
        InPlaceOnly = "InPlaceOnly",
    }
}

/// Parameters of a rolling update.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateCloneSetStrategy {
    /// Pods (count or percentage of replicas) kept at the old revision.
    pub partition: Option<IntOrString>,
    /// Most pods unavailable during the update (default 20%).
    pub max_unavailable: Option<IntOrString>,
    /// Most pods above replicas during the update (default 0).
    pub max_surge: Option<IntOrString>,
    /// ReCreate (default), InPlaceIfPossible or InPlaceOnly; empty means ReCreate.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pod_update_policy: PodUpdatePolicy,
    /// Stop updating pods (scaling goes on).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub paused: bool,
    /// Which pods are updated first.
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    /// Labels whose pods are spread through the update order.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub scatter_strategy: UpdateScatterStrategy,
    /// Grace period and image pre-download settings of in-place updates.
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
}

/// Observed state of a CloneSet.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetStatus {
    /// Generation of the spec this status reflects.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub observed_generation: i64,
    /// Pods owned by the CloneSet.
    #[serde(default)]
    pub replicas: i32,
    /// Pods that are Ready (and not mid in-place update).
    #[serde(default)]
    pub ready_replicas: i32,
    /// Ready pods that have been ready for minReadySeconds.
    #[serde(default)]
    pub available_replicas: i32,
    /// Pods at the update revision.
    #[serde(default)]
    pub updated_replicas: i32,
    /// Pods at the update revision that are Ready.
    #[serde(default)]
    pub updated_ready_replicas: i32,
    /// Pods at the update revision that are available.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub updated_available_replicas: i32,
    /// Pods that should be at the update revision (replicas - partition).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub expected_updated_replicas: i32,
    /// The latest revision (`<name>-<hash>`).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub update_revision: String,
    /// The revision all pods were at before the latest change.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub current_revision: String,
    /// Hash collisions met when naming revisions.
    pub collision_count: Option<i32>,
    /// Latest observations of the CloneSet's state.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<CloneSetCondition>,
    /// Serialized selector, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub label_selector: String,
}

/// One observation of a CloneSet's state.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetCondition {
    /// FailedScale, FailedUpdate or Progressing.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// True, False or Unknown.
    #[serde(default)]
    pub status: String,
    /// Last time the condition was written.
    pub last_update_time: Option<Time>,
    /// Last time the status changed.
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub reason: String,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
}
