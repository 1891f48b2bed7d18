//! ImagePullJob, the storage version: pre-pulls one image on a set of nodes. Also holds the
//! pull settings ImageListPullJob (and AdvancedCronJob's image-list template) share with it.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{LabelSelector, Time},
    util::intstr::IntOrString,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CompletionPolicy;
use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// A job that has the node daemon pull one image on the selected nodes.
    ImagePullJob {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "ImagePullJob",
        plural: "imagepulljobs",
        scope: NamespaceResourceScope,
        spec: ImagePullJobSpec,
        status: ImagePullJobStatus,
    }
}

/// Desired state of an ImagePullJob.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobSpec {
    /// The image to pull (`repo:tag` or `repo@digest`).
    #[serde(default)]
    pub image: String,
    /// Where and how to pull (inlined into the spec on the wire).
    #[serde(flatten)]
    pub template: ImagePullJobTemplate,
}

/// Where and how an image is pulled; inlined in ImagePullJob and ImageListPullJob specs.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobTemplate {
    /// Secrets, in the job's namespace, with registry credentials.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pull_secrets: Vec<String>,
    /// Nodes to pull on (by name or labels); all nodes when unset.
    pub selector: Option<ImagePullJobNodeSelector>,
    /// Pull only on the nodes running pods matched by this selector.
    pub pod_selector: Option<ImagePullJobPodSelector>,
    /// Most nodes pulling at the same time (integer; default 1).
    pub parallelism: Option<IntOrString>,
    /// Timeout and retries of each pull.
    pub pull_policy: Option<PullPolicy>,
    /// When the job is finished.
    #[serde(default)]
    pub completion_policy: CompletionPolicy,
    /// Labels and annotations of the pod sandbox used for the pull (some runtimes need them).
    pub sandbox_config: Option<SandboxConfig>,
    /// Always or IfNotPresent (default): whether to pull an image the node already has.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub image_pull_policy: ImagePullPolicy,
}

string_enum! {
    /// Whether a node pulls an image it already has.
    pub enum ImagePullPolicy {
        /// Pull every time.
        Always = "Always",
        /// Pull only when the node does not have the image.
        IfNotPresent = "IfNotPresent",
    }
}

/// Nodes selected by name and/or by a label selector (the selector's fields are inlined).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobNodeSelector {
    /// Node names; may not be combined with the label selector.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub names: Vec<String>,
    /// Node label query (`matchLabels`, `matchExpressions`).
    #[serde(flatten)]
    pub label_selector: LabelSelector,
}

/// Pods whose nodes pull the image: a plain label selector.
pub type ImagePullJobPodSelector = LabelSelector;

/// Timeout and retries of one image pull.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PullPolicy {
    /// Seconds one pull attempt may take (default 600).
    pub timeout_seconds: Option<i32>,
    /// Retries before a node is marked failed (default 3).
    pub backoff_limit: Option<i32>,
}

/// Metadata of the pod sandbox the runtime creates to pull an image.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxConfig {
    /// Sandbox labels.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub labels: BTreeMap<String, String>,
    /// Sandbox annotations.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub annotations: BTreeMap<String, String>,
}

/// Observed state of an ImagePullJob.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobStatus {
    /// When the controller started working on the job.
    pub start_time: Option<Time>,
    /// When the job finished.
    pub completion_time: Option<Time>,
    /// Nodes that should pull the image.
    #[serde(default)]
    pub desired: i32,
    /// Nodes pulling right now.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub active: i32,
    /// Nodes that pulled the image.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub succeeded: i32,
    /// Nodes that failed to pull the image.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub failed: i32,
    /// Human-readable summary of the job's state.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
    /// Names of the nodes that failed.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub failed_nodes: Vec<String>,
}
