//! NodeImage v1alpha1: like v1beta1 without the pull secrets' `mode`. Served for existing
//! manifests; stored as v1beta1.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    ImagePullPhase, ImageStatus, ImageTagPullPolicy, ImageTagSpec, ImageTagStatus, NodeImageStatus,
    SyncStatus, SyncStatusPhase,
};
use crate::{
    apps::v1beta1::SandboxConfig,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// NodeImage as served at apps.kruise.io/v1alpha1.
    NodeImage {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "NodeImage",
        plural: "nodeimages",
        scope: ClusterResourceScope,
        spec: NodeImageSpec,
        status: NodeImageStatus,
    }
}

/// Desired state of a v1alpha1 NodeImage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageSpec {
    /// Images to pull, keyed by repository name (without tag).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub images: BTreeMap<String, ImageSpec>,
}

/// The tags of one repository to pull, and how (v1alpha1).
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

/// A reference to a namespaced object (a pull secret), v1alpha1.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceObject {
    /// Namespace of the object.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub namespace: String,
    /// Name of the object.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub name: String,
}
