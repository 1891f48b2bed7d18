//! BroadcastJob v1alpha1: the same schema as v1beta1, served for existing manifests and stored
//! as v1beta1.

pub use crate::apps::v1beta1::{
    BroadcastJobPhase, BroadcastJobSpec, BroadcastJobStatus, CompletionPolicy, CompletionPolicyType,
    FailurePolicy, FailurePolicyType, JobCondition, JobConditionType,
};
use crate::resource::{APPS_GROUP, kruise_resource};

kruise_resource! {
    /// BroadcastJob as served at apps.kruise.io/v1alpha1.
    BroadcastJob {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "BroadcastJob",
        plural: "broadcastjobs",
        scope: NamespaceResourceScope,
        spec: BroadcastJobSpec,
        status: BroadcastJobStatus,
    }
}
