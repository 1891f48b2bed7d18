//! SidecarSet, the storage version (cluster-scoped): sidecar containers injected into matching
//! pods at creation and upgraded in place afterwards.

use std::{borrow::Cow, collections::BTreeMap};

use k8s_openapi::{
    api::core::v1::{Container, LocalObjectReference, ObjectFieldSelector, Volume},
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::{
    common::{UpdatePriorityStrategy, UpdateScatterStrategy},
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

/// Label (v1alpha1) naming the custom version of a SidecarSet; also copied to its
/// ControllerRevisions so a version can be pinned by name. v1beta1 has `spec.customVersion`.
pub const SIDECARSET_CUSTOM_VERSION_LABEL: &str = "apps.kruise.io/sidecarset-custom-version";
/// Annotation marking a SidecarSet as a canary (`"true"`) that takes precedence over its base.
pub const SIDECARSET_CANARY_ANNOTATION: &str = "apps.kruise.io/sidecarset-canary";
/// Annotation naming the base SidecarSet a canary SidecarSet shadows.
pub const SIDECARSET_BASE_ANNOTATION: &str = "apps.kruise.io/sidecarset-base";

kruise_resource! {
    /// Sidecar containers, volumes and pod annotations injected into every matching pod in the
    /// cluster, and upgraded in place by the SidecarSet controller.
    SidecarSet {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "SidecarSet",
        plural: "sidecarsets",
        scope: ClusterResourceScope,
        spec: SidecarSetSpec,
        status: SidecarSetStatus,
    }
}

/// Desired state of a SidecarSet.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetSpec {
    /// Pods to inject into.
    pub selector: Option<LabelSelector>,
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
    /// A user-chosen version name, copied to the revisions so that
    /// `injectionStrategy.revision.customVersion` can pin it.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub custom_version: String,
}

/// Annotations written into injected pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetPatchPodMetadata {
    /// Annotation keys and values.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub annotations: BTreeMap<String, String>,
    /// Retain (default), Overwrite or MergePatchJson.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub patch_policy: SidecarSetPatchPolicyType,
}

string_enum! {
    /// What to do when the pod already has an annotation the SidecarSet sets.
    pub enum SidecarSetPatchPolicyType {
        /// Keep the pod's value; only set at injection.
        Retain = "Retain",
        /// Replace the pod's value, at injection and on in-place upgrade.
        Overwrite = "Overwrite",
        /// JSON-merge the SidecarSet's value into the pod's.
        MergePatchJson = "MergePatchJson",
    }
}

/// A container to inject: a core container plus how it is placed, shares volumes, takes
/// environment from other containers, computes its resources and is upgraded.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainer {
    /// The container itself (name, image, command, ...).
    #[serde(flatten)]
    pub container: Container,
    /// Before (default) or after the pod's own containers; ignored for init containers.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub pod_inject_policy: PodInjectPolicyType,
    /// ColdUpgrade (default) or HotUpgrade.
    #[serde(default)]
    pub upgrade_strategy: SidecarContainerUpgradeStrategy,
    /// Mount the volume mounts of the pod's own containers too.
    #[serde(default)]
    pub share_volume_policy: ShareVolumePolicy,
    /// Share the volume devices of the pod's own containers too (unset keeps the hash stable).
    pub share_volume_device_policy: Option<ShareVolumePolicy>,
    /// Environment variables copied from other containers of the pod.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub transfer_env: Vec<TransferEnvVar>,
    /// Resources computed from the pod's containers at creation (exclusive with `resources`).
    pub resources_policy: Option<ResourcesPolicy>,
}

/// The container body is left schemaless, as upstream does; only the Kruise fields are
/// described.
impl JsonSchema for SidecarContainer {
    fn schema_name() -> Cow<'static, str> {
        "SidecarContainer".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let pod_inject_policy = generator.subschema_for::<PodInjectPolicyType>();
        let upgrade_strategy = generator.subschema_for::<SidecarContainerUpgradeStrategy>();
        let share_volume_policy = generator.subschema_for::<ShareVolumePolicy>();
        let share_volume_device_policy = generator.subschema_for::<ShareVolumePolicy>();
        let transfer_env = generator.subschema_for::<Vec<TransferEnvVar>>();
        let resources_policy = generator.subschema_for::<ResourcesPolicy>();
        json_schema!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
            "properties": {
                "podInjectPolicy": pod_inject_policy,
                "upgradeStrategy": upgrade_strategy,
                "shareVolumePolicy": share_volume_policy,
                "shareVolumeDevicePolicy": share_volume_device_policy,
                "transferEnv": transfer_env,
                "resourcesPolicy": resources_policy,
            }
        })
    }
}

/// Whether a sidecar shares the pod's volumes or devices.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShareVolumePolicy {
    /// enabled or disabled (default).
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: ShareVolumePolicyType,
}

string_enum! {
    /// Where a sidecar goes among the pod's containers.
    pub enum PodInjectPolicyType {
        /// In front of the pod's own containers.
        BeforeAppContainer = "BeforeAppContainer",
        /// After the pod's own containers.
        AfterAppContainer = "AfterAppContainer",
    }
}

string_enum! {
    /// Switch of a share-volume policy.
    pub enum ShareVolumePolicyType {
        /// Share.
        Enabled = "enabled",
        /// Do not share.
        Disabled = "disabled",
    }
}

/// One environment variable (or several) copied from another container of the pod.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransferEnvVar {
    /// Container to copy from.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub source_container_name: String,
    /// Container to copy from, named by a field of the pod.
    pub source_container_name_from: Option<SourceContainerNameSource>,
    /// Variable to copy.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub env_name: String,
    /// Variables to copy.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub env_names: Vec<String>,
}

/// Where the source container's name is read from.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceContainerNameSource {
    /// A pod field: `metadata.name`, `metadata.labels['k']` or `metadata.annotations['k']`.
    pub field_ref: Option<ObjectFieldSelector>,
}

/// Sidecar resources derived from the pod's other containers when the pod is created.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesPolicy {
    /// Combine the matched containers' resources by sum or max.
    #[serde(default)]
    pub target_containers_mode: TargetContainersModeType,
    /// Which of the pod's containers (not Kruise sidecars) are combined (default `.*`).
    #[schemars(extend("x-kruise-default" = ".*"))]
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub target_containers_name_regex: String,
    /// Expressions over the combined `cpu` and `memory`.
    #[serde(default)]
    pub resources_expr: ResourcesExpr,
}

string_enum! {
    /// How the matched containers' resources are combined.
    pub enum TargetContainersModeType {
        /// Add them up.
        Sum = "sum",
        /// Take the largest.
        Max = "max",
    }
    schema = ["sum", "max"]
}

/// Expressions giving the sidecar's limits and requests.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesExpr {
    /// Limit expressions (an unlimited result leaves the limit unset).
    pub limits: Option<ResourceExprLimits>,
    /// Request expressions (missing requests count as 0).
    pub requests: Option<ResourceExprRequests>,
}

/// Limit expressions: `+ - * /`, `max()`, `min()` over the variable of the same name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceExprLimits {
    /// CPU limit expression over `cpu`.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub cpu: String,
    /// Memory limit expression over `memory`.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub memory: String,
}

/// Request expressions: `+ - * /`, `max()`, `min()` over the variable of the same name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceExprRequests {
    /// CPU request expression over `cpu`.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub cpu: String,
    /// Memory request expression over `memory`.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub memory: String,
}

string_enum! {
    /// How a sidecar container is upgraded in place.
    pub enum SidecarContainerUpgradeType {
        /// Restart the container with the new image.
        ColdUpgrade = "ColdUpgrade",
        /// Run two copies and switch between them, without interrupting the service.
        HotUpgrade = "HotUpgrade",
    }
}

/// How a sidecar container is upgraded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainerUpgradeStrategy {
    /// ColdUpgrade (default) or HotUpgrade.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub upgrade_type: SidecarContainerUpgradeType,
    /// Image that idles in the spare copy during a hot upgrade.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub hot_upgrade_empty_image: String,
}

/// Whether and which revision is injected into new pods.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectionStrategy {
    /// Stop injecting into new pods (injected pods are still upgraded).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub paused: bool,
    /// Inject a pinned revision instead of the latest.
    pub revision: Option<SidecarSetInjectRevision>,
}

/// A pinned revision to inject.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectRevision {
    /// Pin the revision carrying this custom version.
    pub custom_version: Option<String>,
    /// Pin the ControllerRevision of this name.
    pub revision_name: Option<String>,
    /// Always (default) or Partial.
    #[schemars(extend("x-kruise-default" = "Always"))]
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub policy: SidecarSetInjectRevisionPolicy,
}

string_enum! {
    /// When the pinned revision is injected.
    pub enum SidecarSetInjectRevisionPolicy {
        /// Every new pod gets the pinned revision, unless the update selector picks it.
        Always = "Always",
        /// Pods outside the update selector get the pinned revision; the rest get the latest
        /// with a probability of 1 - partition.
        Partial = "Partial",
    }
    schema = ["Always", "Partial"]
}

/// How injected pods are upgraded to a new revision.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetUpdateStrategy {
    /// RollingUpdate (default) or NotUpdate (only new pods get the new revision).
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: SidecarSetUpdateStrategyType,
    /// Stop upgrading injected pods.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub paused: bool,
    /// Only these pods are upgraded (and, with a pinned injection revision, get the latest
    /// revision when created).
    pub selector: Option<LabelSelector>,
    /// Pods (count or percentage) kept at old revisions.
    pub partition: Option<IntOrString>,
    /// Most pods unavailable during the upgrade (default 1, never 0).
    pub max_unavailable: Option<IntOrString>,
    /// Which pods are upgraded first.
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    /// Labels whose pods are spread through the upgrade order.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub scatter_strategy: UpdateScatterStrategy,
}

string_enum! {
    /// Whether injected pods are upgraded.
    pub enum SidecarSetUpdateStrategyType {
        /// Injected pods keep their sidecars; only new pods get the new revision.
        NotUpdate = "NotUpdate",
        /// Injected pods are upgraded in place within the strategy's limits.
        RollingUpdate = "RollingUpdate",
    }
}

/// Observed state of a SidecarSet.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetStatus {
    /// Generation of the spec this status reflects.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub observed_generation: i64,
    /// Pods matching the selector that were created after the SidecarSet.
    #[serde(default)]
    pub matched_pods: i32,
    /// Matched pods running the latest sidecars.
    #[serde(default)]
    pub updated_pods: i32,
    /// Matched pods that are Ready.
    #[serde(default)]
    pub ready_pods: i32,
    /// Matched pods that are both updated and Ready.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub updated_ready_pods: i32,
    /// Name of the latest ControllerRevision.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub latest_revision: String,
    /// Hash collisions met when naming revisions.
    pub collision_count: Option<i32>,
}
