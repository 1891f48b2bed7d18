//! ImageListPullJob, the storage version: pre-pulls a list of images by running one
//! ImagePullJob per image.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ImagePullJobTemplate;
use crate::resource::{APPS_GROUP, kruise_resource};

kruise_resource! {
    /// A job that pulls several images on the selected nodes, through one ImagePullJob each.
    ImageListPullJob {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "ImageListPullJob",
        plural: "imagelistpulljobs",
        scope: NamespaceResourceScope,
        spec: ImageListPullJobSpec,
        status: ImageListPullJobStatus,
    }
}

/// Desired state of an ImageListPullJob.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageListPullJobSpec {
    /// The images to pull; each must be unique.
    #[serde(default)]
    pub images: Vec<String>,
    /// Where and how to pull, applied to every image (inlined into the spec on the wire).
    #[serde(flatten)]
    pub template: ImagePullJobTemplate,
}

/// Observed state of an ImageListPullJob.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageListPullJobStatus {
    /// When the controller started working on the job.
    pub start_time: Option<Time>,
    /// When the job finished.
    pub completion_time: Option<Time>,
    /// Images to pull.
    #[serde(default)]
    pub desired: i32,
    /// ImagePullJobs still running.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub active: i32,
    /// ImagePullJobs that finished, whatever their outcome.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub completed: i32,
    /// ImagePullJobs that pulled their image on every node.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub succeeded: i32,
    /// The images that failed, with the ImagePullJob that reported it.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub failed_image_statuses: Vec<FailedImageStatus>,
}

/// One image an ImageListPullJob failed to pull.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailedImageStatus {
    /// Name of the ImagePullJob that pulled the image.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub image_pull_job: String,
    /// The image.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub name: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
}
