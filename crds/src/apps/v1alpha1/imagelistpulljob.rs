//! ImageListPullJob v1alpha1: the same schema as v1beta1, served for existing manifests and
//! stored as v1beta1.

pub use crate::apps::v1beta1::{FailedImageStatus, ImageListPullJobSpec, ImageListPullJobStatus};
use crate::resource::{APPS_GROUP, kruise_resource};

kruise_resource! {
    /// ImageListPullJob as served at apps.kruise.io/v1alpha1.
    ImageListPullJob {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "ImageListPullJob",
        plural: "imagelistpulljobs",
        scope: NamespaceResourceScope,
        spec: ImageListPullJobSpec,
        status: ImageListPullJobStatus,
    }
}
