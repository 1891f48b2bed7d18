//! NodeImage, the storage version: one per node (cluster-scoped, named after the node), listing
//! the images the node daemon should pull there and reporting how each pull went.

use std::collections::BTreeMap;

use k8s_openapi::{api::core::v1::ObjectReference, apimachinery::pkg::apis::meta::v1::Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ImagePullPolicy, SandboxConfig};
use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

/// [`ReferenceObject::mode`] of a secret synced once for all the jobs that use it (such
/// references are cleaned up together with their image entry).
pub const REFERENCE_OBJECT_MODE_BATCH: &str = "batch";

kruise_resource! {
    /// The images wanted on one node, and their pull state.
    NodeImage {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "NodeImage",
        plural: "nodeimages",
        scope: ClusterResourceScope,
        spec: NodeImageSpec,
        status: NodeImageStatus,
    }
}

/// Desired state of a NodeImage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageSpec {
    /// Images to pull, keyed by repository name (without tag).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub images: BTreeMap<String, ImageSpec>,
}

/// The tags of one repository to pull, and how.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageSpec {
    /// Secrets with registry credentials.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pull_secrets: Vec<ReferenceObject>,
    /// Tags to pull.
    #[serde(default)]
    pub tags: Vec<ImageTagSpec>,
    /// Labels and annotations of the pull sandbox.
    pub sandbox_config: Option<SandboxConfig>,
}

/// A reference to a namespaced object (a pull secret).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceObject {
    /// Namespace of the object.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub namespace: String,
    /// Name of the object.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub name: String,
    /// `batch` for a secret synced once and shared by all jobs; empty for the older per-job copy.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub mode: String,
}

/// One tag to pull.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageTagSpec {
    /// The tag.
    #[serde(default)]
    pub tag: String,
    /// When the tag was added to the node's list.
    pub created_at: Option<Time>,
    /// Timeout, retries and lifetime of the pull.
    pub pull_policy: Option<ImageTagPullPolicy>,
    /// The objects (ImagePullJobs, workloads) that asked for the tag.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub owner_references: Vec<ObjectReference>,
    /// Bumped to ask for a new pull of the same tag.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub version: i64,
    /// Always or IfNotPresent.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub image_pull_policy: ImagePullPolicy,
}

/// Timeout, retries and lifetime of one tag's pull.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageTagPullPolicy {
    /// Seconds one attempt may take (default 600).
    pub timeout_seconds: Option<i32>,
    /// Retries before the pull is failed (default 3).
    pub backoff_limit: Option<i32>,
    /// Seconds after finishing before the tag is removed from the list.
    pub ttl_seconds_after_finished: Option<i32>,
    /// Seconds the pull may be active, all attempts included.
    pub active_deadline_seconds: Option<i64>,
}

/// Observed state of a NodeImage.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageStatus {
    /// Tags to pull.
    #[serde(default)]
    pub desired: i32,
    /// Tags pulled.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub succeeded: i32,
    /// Tags that failed.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub failed: i32,
    /// Tags being pulled.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pulling: i32,
    /// Tags waiting to be pulled.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub waiting: i32,
    /// Pull state per repository name.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub image_statuses: BTreeMap<String, ImageStatus>,
    /// Outcome of the daemon's first sync with the node's runtime.
    pub first_sync_status: Option<SyncStatus>,
}

/// Pull state of one repository's tags.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageStatus {
    /// One entry per tag.
    #[serde(default)]
    pub tags: Vec<ImageTagStatus>,
}

/// Pull state of one tag.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageTagStatus {
    /// The tag.
    #[serde(default)]
    pub tag: String,
    /// Waiting, Pulling, Succeeded or Failed.
    #[serde(default)]
    pub phase: ImagePullPhase,
    /// Percentage pulled.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub progress: i32,
    /// When the pull started.
    pub start_time: Option<Time>,
    /// When the pull ended.
    pub completion_time: Option<Time>,
    /// The spec version this state is for.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub version: i64,
    /// Image ID reported by the runtime once pulled.
    #[serde(rename = "imageID", default, skip_serializing_if = "crate::is_default")]
    pub image_id: String,
    /// Details, for failures.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
}

string_enum! {
    /// Where the pull of one tag is.
    pub enum ImagePullPhase {
        /// Queued.
        Waiting = "Waiting",
        /// Being pulled.
        Pulling = "Pulling",
        /// Pulled.
        Succeeded = "Succeeded",
        /// Given up.
        Failed = "Failed",
    }
}

/// Outcome of a sync with the node's container runtime.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    /// When the sync happened.
    pub sync_at: Option<Time>,
    /// Succeeded or Failed.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub status: SyncStatusPhase,
    /// Details, for failures.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
}

string_enum! {
    /// Outcome of a sync.
    pub enum SyncStatusPhase {
        /// The sync worked.
        Succeeded = "Succeeded",
        /// The sync failed.
        Failed = "Failed",
    }
}
