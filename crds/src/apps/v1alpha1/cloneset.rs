//! CloneSet v1alpha1: the older, flat update strategy (`type` names the pod update policy).
//! Served for existing manifests and for tools such as Kruise Rollout; stored as v1beta1.

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, PodTemplateSpec},
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{CloneSetCondition, CloneSetStatus};
use crate::{
    common::{InPlaceUpdateStrategy, Lifecycle, UpdatePriorityStrategy, UpdateScatterStrategy},
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// CloneSet as served at apps.kruise.io/v1alpha1.
    CloneSet {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "CloneSet",
        plural: "clonesets",
        scope: NamespaceResourceScope,
        spec: CloneSetSpec,
        status: CloneSetStatus,
    }
}

/// Desired state of a v1alpha1 CloneSet.
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

/// How pods are created and deleted (v1alpha1).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetScaleStrategy {
    /// Names of pods to delete (the count is kept by creating replacements).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pods_to_delete: Vec<String>,
    /// Most pods that may be unavailable because of scaling (default unlimited).
    pub max_unavailable: Option<IntOrString>,
    /// Do not reuse the PVCs of a deleted pod (v1beta1 inverts this as `enablePVCReuse`).
    #[serde(rename = "disablePVCReuse", default, skip_serializing_if = "crate::is_default")]
    pub disable_pvc_reuse: bool,
}

string_enum! {
    /// v1alpha1 update strategy type: the pod update policy, or OnDelete.
    pub enum CloneSetUpdateStrategyType {
        /// Delete and recreate pods.
        ReCreate = "ReCreate",
        /// In place when possible, else recreate.
        InPlaceIfPossible = "InPlaceIfPossible",
        /// In place only.
        InPlaceOnly = "InPlaceOnly",
        /// Only replace pods a user deletes.
        OnDelete = "OnDelete",
    }
}

/// The flat v1alpha1 update strategy.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetUpdateStrategy {
    /// ReCreate (default), InPlaceIfPossible, InPlaceOnly or OnDelete.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: CloneSetUpdateStrategyType,
    /// Pods (count or percentage of replicas) kept at the old revision.
    pub partition: Option<IntOrString>,
    /// Most pods unavailable during the update (default 20%).
    pub max_unavailable: Option<IntOrString>,
    /// Most pods above replicas during the update (default 0).
    pub max_surge: Option<IntOrString>,
    /// Stop updating pods.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub paused: bool,
    /// Which pods are updated first.
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    /// Labels whose pods are spread through the update order.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub scatter_strategy: UpdateScatterStrategy,
    /// Grace period (and, in v1beta1 only, image pre-download) settings.
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
}
