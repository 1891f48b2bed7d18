//! In-place update: the strategy knobs on workloads and the JSON payloads the in-place update
//! engine, the kubelet-facing node daemon and the workload controllers exchange through pod
//! annotations.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{PodTemplateSpec, ResourceRequirements},
    apimachinery::pkg::{
        apis::meta::v1::{ObjectMeta, Time},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Readiness gate and condition type that keeps a pod NotReady while it is updated in place.
pub const IN_PLACE_UPDATE_READY: &str = "InPlaceUpdateReady";
/// Annotation holding the [`InPlaceUpdateState`] of a pod.
pub const IN_PLACE_UPDATE_STATE_KEY: &str = "apps.kruise.io/inplace-update-state";
/// Legacy name of [`IN_PLACE_UPDATE_STATE_KEY`], still read.
pub const IN_PLACE_UPDATE_STATE_KEY_OLD: &str = "inplace-update-state";
/// Annotation holding the [`InPlaceUpdateSpec`] to apply once the grace period ends.
pub const IN_PLACE_UPDATE_GRACE_KEY: &str = "apps.kruise.io/inplace-update-grace";
/// Legacy name of [`IN_PLACE_UPDATE_GRACE_KEY`], still read.
pub const IN_PLACE_UPDATE_GRACE_KEY_OLD: &str = "inplace-update-grace";
/// Annotation the node daemon writes with the [`RuntimeContainerMetaSet`] of a pod.
pub const RUNTIME_CONTAINERS_META_KEY: &str = "apps.kruise.io/runtime-containers-meta";

/// Knobs of in-place updates on a workload.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateStrategy {
    /// Seconds between marking a pod NotReady and changing its spec, so that endpoints drain.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub grace_period_seconds: i32,
    /// How many nodes pre-pull the new images at once (integer only; percentages are rejected).
    pub image_pre_download_parallelism: Option<IntOrString>,
    /// Timeout of each image pre-pull.
    pub image_pre_download_timeout_seconds: Option<i32>,
    /// Updated ready pods needed before the next batch's images are pre-pulled.
    pub image_pre_download_min_updated_ready_pods: Option<i32>,
}

/// What the engine recorded when it started an in-place update of a pod; used to tell when the
/// kubelet has finished (the imageIDs it must see change) and what batches remain.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateState {
    /// Revision the pod is being moved to.
    #[serde(default)]
    pub revision: String,
    /// When the update started.
    pub update_timestamp: Option<Time>,
    /// imageID of each updated container before the update.
    #[serde(default)]
    pub last_container_statuses: BTreeMap<String, InPlaceUpdateContainerStatus>,
    /// Containers take env from labels/annotations that changed (restarted by the node daemon).
    pub update_env_from_metadata: Option<bool>,
    /// Container resources are being resized.
    pub update_resources: Option<bool>,
    /// Container images are being changed.
    pub update_images: Option<bool>,
    /// Images of later launch-priority batches.
    pub next_container_images: Option<BTreeMap<String, String>>,
    /// Metadata of later batches' env-from-metadata containers.
    pub next_container_ref_metadata: Option<BTreeMap<String, ObjectMeta>>,
    /// Resources of later batches.
    pub next_container_resources: Option<BTreeMap<String, ResourceRequirements>>,
    /// What must hold before the next batch starts.
    pub pre_check_before_next: Option<InPlaceUpdatePreCheckBeforeNext>,
    /// History of the batches applied so far.
    pub container_batches_record: Option<Vec<InPlaceUpdateContainerBatch>>,
}

/// Containers that must be Ready before the next batch.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdatePreCheckBeforeNext {
    /// Container names.
    pub containers_required_ready: Option<Vec<String>>,
}

/// One applied batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateContainerBatch {
    /// When the batch was applied.
    pub timestamp: Time,
    /// Containers in the batch.
    #[serde(default)]
    pub containers: Vec<String>,
}

/// A container's status recorded before an in-place update.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateContainerStatus {
    /// imageID reported by the kubelet before the update.
    #[serde(rename = "imageID")]
    pub image_id: Option<String>,
}

/// The change to apply to a pod in place (stored in the grace annotation while it waits).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateSpec {
    /// Target revision.
    #[serde(default)]
    pub revision: String,
    /// New image per container name.
    pub container_images: Option<BTreeMap<String, String>>,
    /// Metadata each env-from-metadata container must see.
    pub container_ref_metadata: Option<BTreeMap<String, ObjectMeta>>,
    /// New resources per container name.
    pub container_resources: Option<BTreeMap<String, ResourceRequirements>>,
    /// Strategic-merge patch of the pod's labels and annotations, base64 encoded (the upstream
    /// wire form of a byte slice).
    pub meta_data_patch: Option<String>,
    /// Some container reads env from changed metadata.
    pub update_env_from_metadata: Option<bool>,
    /// Grace period still to wait before applying the change.
    pub grace_seconds: Option<i32>,
    /// The pod template of the revision being left (resource resize compares against it).
    pub old_template: Option<PodTemplateSpec>,
    /// The pod template of the target revision.
    pub new_template: Option<PodTemplateSpec>,
}

/// What the node daemon reports about a pod's running containers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContainerMetaSet {
    /// One entry per running container.
    #[serde(default)]
    pub containers: Vec<RuntimeContainerMeta>,
}

/// One running container as the runtime sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContainerMeta {
    /// Container name.
    pub name: String,
    /// Runtime container ID (`<runtime>://<id>`).
    #[serde(rename = "containerID")]
    pub container_id: String,
    /// Restart count.
    pub restart_count: i32,
    /// Hashes of the container spec and of its env-from-metadata values.
    pub hashes: RuntimeContainerHashes,
}

/// Hashes the completion check compares against the pod spec.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContainerHashes {
    /// Hash of the container spec, as the kubelet computes it.
    pub plain_hash: u64,
    /// Hash of the env values taken from labels/annotations.
    pub extracted_env_from_metadata_hash: Option<u64>,
}
