//! SidecarSet v1alpha1: a single `namespace` beside `namespaceSelector`, and the custom version
//! kept in a label rather than in the spec. Served for existing manifests; stored as v1beta1.

use k8s_openapi::api::core::v1::{LocalObjectReference, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    PodInjectPolicyType, ResourceExprLimits, ResourceExprRequests, ResourcesExpr, ResourcesPolicy,
    SIDECARSET_CUSTOM_VERSION_LABEL, ShareVolumePolicy, ShareVolumePolicyType, SidecarContainer,
    SidecarContainerUpgradeStrategy, SidecarContainerUpgradeType, SidecarSetInjectRevision,
    SidecarSetInjectRevisionPolicy, SidecarSetInjectionStrategy, SidecarSetPatchPodMetadata,
    SidecarSetPatchPolicyType, SidecarSetStatus, SidecarSetUpdateStrategy, SidecarSetUpdateStrategyType,
    SourceContainerNameSource, TargetContainersModeType, TransferEnvVar,
};
use crate::resource::{APPS_GROUP, kruise_resource};

/// Namespace label that Kubernetes sets to the namespace's own name; v1beta1 selects the
/// v1alpha1 `spec.namespace` through it.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

kruise_resource! {
    /// SidecarSet as served at apps.kruise.io/v1alpha1.
    SidecarSet {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "SidecarSet",
        plural: "sidecarsets",
        scope: ClusterResourceScope,
        spec: SidecarSetSpec,
        status: SidecarSetStatus,
    }
}

/// Desired state of a v1alpha1 SidecarSet.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetSpec {
    /// Pods to inject into.
    pub selector: Option<LabelSelector>,
    /// The only namespace whose pods are considered (takes precedence over the selector).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub namespace: String,
    /// Namespaces whose pods are considered (unset: every namespace).
    pub namespace_selector: Option<LabelSelector>,
    /// Init containers added to new pods (sorted by name).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub init_containers: Vec<SidecarContainer>,
    /// Sidecar containers added to pods and kept up to date.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub containers: Vec<SidecarContainer>,
    /// Volumes the sidecars mount, added to the pod when absent.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub volumes: Vec<Volume>,
    /// How injected pods are upgraded to a new revision.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub update_strategy: SidecarSetUpdateStrategy,
    /// Whether and which revision is injected into new pods.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub injection_strategy: SidecarSetInjectionStrategy,
    /// Pull secrets for the sidecar images, merged into the pod.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "crate::schema::local_object_references")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// Old revisions kept (default 10).
    pub revision_history_limit: Option<i32>,
    /// Pod annotations to set when injecting (and, for some policies, when upgrading).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub patch_pod_metadata: Vec<SidecarSetPatchPodMetadata>,
}
