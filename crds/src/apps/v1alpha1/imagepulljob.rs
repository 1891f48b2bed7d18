//! ImagePullJob v1alpha1: the same schema as v1beta1, served for existing manifests and stored
//! as v1beta1.

pub use crate::apps::v1beta1::{
    ImagePullJobNodeSelector, ImagePullJobPodSelector, ImagePullJobSpec, ImagePullJobStatus,
    ImagePullJobTemplate, ImagePullPolicy, PullPolicy, SandboxConfig,
};
use crate::resource::{APPS_GROUP, kruise_resource};

kruise_resource! {
    /// ImagePullJob as served at apps.kruise.io/v1alpha1.
    ImagePullJob {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "ImagePullJob",
        plural: "imagepulljobs",
        scope: NamespaceResourceScope,
        spec: ImagePullJobSpec,
        status: ImagePullJobStatus,
    }
}
