//! Advanced StatefulSet, the storage version: ordered pods with stable identities, plus in-place
//! update, unordered update, reserved ordinals, scale limits and PVC resizing.

use k8s_openapi::{
    api::{
        apps::v1::StatefulSetCondition,
        core::v1::{PersistentVolumeClaim, PodTemplateSpec},
    },
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::PodUpdatePolicy;
use crate::{
    common::{InPlaceUpdateStrategy, Lifecycle, UpdatePriorityStrategy},
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

/// Largest `rollingUpdate.minReadySeconds` an Advanced StatefulSet accepts.
pub const STATEFULSET_MAX_MIN_READY_SECONDS: i32 = 300;
/// Condition type set while the controller fails to create pods.
pub const STATEFULSET_CONDITION_FAILED_CREATE_POD: &str = "FailedCreatePod";
/// Condition type set while the controller fails to update pods.
pub const STATEFULSET_CONDITION_FAILED_UPDATE_POD: &str = "FailedUpdatePod";

kruise_resource! {
    /// Pods with stable names and storage, created, updated (in place where possible) and
    /// deleted by ordinal by the Advanced StatefulSet controller.
    StatefulSet {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "StatefulSet",
        plural: "statefulsets",
        scope: NamespaceResourceScope,
        spec: StatefulSetSpec,
        status: StatefulSetStatus,
    }
}

/// Desired state of an Advanced StatefulSet.
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
    /// When changes to the claim templates reach existing PVCs (needs the resize feature gate).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub volume_claim_update_strategy: VolumeClaimUpdateStrategy,
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
    /// Ordinals (numbers or `a-b` ranges) that are skipped; replicas counts the others.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub reserve_ordinals: Vec<IntOrString>,
    /// Hooks around pod deletion and in-place update.
    pub lifecycle: Option<Lifecycle>,
    /// Limits on scaling.
    pub scale_strategy: Option<StatefulSetScaleStrategy>,
    /// Whether PVCs are deleted with the set or when it scales down.
    pub persistent_volume_claim_retention_policy: Option<StatefulSetPersistentVolumeClaimRetentionPolicy>,
    /// Where ordinal numbering starts.
    pub ordinals: Option<StatefulSetOrdinals>,
}

string_enum! {
    /// How pods are created and removed relative to each other.
    pub enum PodManagementPolicyType {
        /// One at a time, in ordinal order, each waiting for the previous to be ready.
        OrderedReady = "OrderedReady",
        /// All at once, without waiting.
        Parallel = "Parallel",
    }
}

/// How pods move to a new revision.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetUpdateStrategy {
    /// RollingUpdate (default) or OnDelete.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: StatefulSetUpdateStrategyType,
    /// Parameters of RollingUpdate.
    pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
}

string_enum! {
    /// Whether the controller updates pods itself.
    pub enum StatefulSetUpdateStrategyType {
        /// The controller replaces pods, highest ordinal first, within the partition.
        RollingUpdate = "RollingUpdate",
        /// Pods are only replaced when a user deletes them.
        OnDelete = "OnDelete",
    }
}

/// Parameters of a rolling update.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateStatefulSetStrategy {
    /// Pods with an ordinal below this stay at the old revision (default 0).
    pub partition: Option<i32>,
    /// Most pods unavailable during the update (default 1; above 1 needs Parallel).
    pub max_unavailable: Option<IntOrString>,
    /// ReCreate (default), InPlaceIfPossible or InPlaceOnly.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pod_update_policy: PodUpdatePolicy,
    /// Stop updating pods.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub paused: bool,
    /// Update pods in priority order instead of by ordinal (needs Parallel).
    pub unordered_update: Option<UnorderedUpdateStrategy>,
    /// Grace period and image pre-download settings of in-place updates.
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
    /// Seconds an updated pod must be ready before the next is taken (0-300).
    pub min_ready_seconds: Option<i32>,
}

/// Ordering of an unordered update.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnorderedUpdateStrategy {
    /// Which pods are updated first.
    pub priority_strategy: Option<UpdatePriorityStrategy>,
}

/// Limits on scaling.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetScaleStrategy {
    /// Most pods unavailable because of scaling (needs Parallel).
    pub max_unavailable: Option<IntOrString>,
}

/// When existing PVCs follow changes to the claim templates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeClaimUpdateStrategy {
    /// OnDelete (default) or OnPodRollingUpdate.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: VolumeClaimUpdateStrategyType,
}

string_enum! {
    /// When a PVC is brought in line with its claim template.
    pub enum VolumeClaimUpdateStrategyType {
        /// PVCs are updated (resized) as their pods are rolled.
        OnPodRollingUpdate = "OnPodRollingUpdate",
        /// Only PVCs that a user deletes are recreated from the new template.
        OnDelete = "OnDelete",
    }
}

/// What happens to the PVCs of the set's pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetPersistentVolumeClaimRetentionPolicy {
    /// Retain (default) or Delete the PVCs when the set is deleted.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub when_deleted: PersistentVolumeClaimRetentionPolicyType,
    /// Retain (default) or Delete the PVCs of pods removed by a scale-down.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub when_scaled: PersistentVolumeClaimRetentionPolicyType,
}

string_enum! {
    /// Keep or delete PVCs.
    pub enum PersistentVolumeClaimRetentionPolicyType {
        /// Leave the PVCs in place.
        Retain = "Retain",
        /// Delete the PVCs.
        Delete = "Delete",
    }
}

/// Numbering of the pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetOrdinals {
    /// Ordinal of the first pod (default 0).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub start: i32,
}

/// Observed state of an Advanced StatefulSet.
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
    /// Pods at the update revision that are Ready.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub updated_ready_replicas: i32,
    /// Pods at the update revision that are available.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub updated_available_replicas: i32,
    /// Revision of the pods below the update boundary.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub current_revision: String,
    /// The latest revision.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub update_revision: String,
    /// Hash collisions met when naming revisions.
    pub collision_count: Option<i32>,
    /// Latest observations of the set's state (FailedCreatePod, FailedUpdatePod, ...).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<StatefulSetCondition>,
    /// Serialized selector, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub label_selector: String,
    /// How many PVCs of each claim template already match it.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub volume_claims: Vec<VolumeClaimStatus>,
}

/// How far the PVCs of one claim template have caught up with it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeClaimStatus {
    /// Name of the claim template.
    #[serde(default)]
    pub volume_claim_name: String,
    /// Pods whose PVC requests at least what the template asks for.
    #[serde(default)]
    pub compatible_replicas: i32,
    /// Of those, pods whose PVC capacity has also grown to the request.
    #[serde(default)]
    pub compatible_ready_replicas: i32,
}
