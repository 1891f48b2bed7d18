//! PodUnavailableBudget, the storage version: limits how many of a group of pods voluntary
//! disruptions (deletion, eviction, in-place update, resize) may make unavailable at once. Unlike
//! the core PodDisruptionBudget it also guards deletes and in-place changes.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{LabelSelector, Time},
    util::intstr::IntOrString,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    enums::string_enum,
    resource::{POLICY_GROUP, kruise_resource},
};

/// Deprecated PUB annotation form of `spec.protectOperations` (comma-separated operations).
pub const PUB_PROTECT_OPERATIONS_KEY: &str = "kruise.io/pub-protect-operations";
/// Deprecated PUB annotation form of `spec.protectTotalReplicas`.
pub const PUB_PROTECT_TOTAL_REPLICAS_KEY: &str = "pub.kruise.io/protect-total-replicas";
/// Deprecated pod annotation (`"true"`) exempting a pod from PUB protection; superseded by
/// `spec.ignoredPodSelector`.
pub const POD_PUB_NO_PROTECTION_KEY: &str = "pub.kruise.io/no-protect";
/// Pod annotation naming the PUB that protects the pod (written by the pod webhook).
pub const POD_RELATED_PUB_KEY: &str = "pub.kruise.io/related-pub";
/// Older name of [`POD_RELATED_PUB_KEY`], still read on existing pods.
pub const DEPRECATED_POD_RELATED_PUB_KEY: &str = "kruise.io/related-pub";

kruise_resource! {
    /// A budget of voluntary disruptions for a group of pods.
    PodUnavailableBudget {
        group: POLICY_GROUP,
        version: "v1beta1",
        kind: "PodUnavailableBudget",
        plural: "podunavailablebudgets",
        scope: NamespaceResourceScope,
        spec: PodUnavailableBudgetSpec,
        status: PodUnavailableBudgetStatus,
    }
}

string_enum! {
    /// A voluntary disruption a PUB can guard against.
    pub enum PubOperation {
        /// Deleting a pod.
        Delete = "DELETE",
        /// Changing a pod's spec in place (images, metadata-driven env).
        Update = "UPDATE",
        /// Evicting a pod through the eviction API.
        Evict = "EVICT",
        /// Resizing a pod's resources in place.
        Resize = "RESIZE",
    }
    schema = ["DELETE", "UPDATE", "EVICT", "RESIZE"]
}

/// Desired state of a PodUnavailableBudget.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudgetSpec {
    /// The pods guarded, by label (exclusive with `targetRef`).
    pub selector: Option<LabelSelector>,
    /// The pods guarded, as those of a workload (wins over `selector`).
    #[serde(rename = "targetRef")]
    pub target_reference: Option<TargetReference>,
    /// Most pods that may be unavailable after a disruption (wins over `minAvailable`).
    pub max_unavailable: Option<IntOrString>,
    /// Fewest pods that must stay available after a disruption.
    pub min_available: Option<IntOrString>,
    /// Operations guarded; empty means DELETE, UPDATE and EVICT.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub protect_operations: Vec<PubOperation>,
    /// Replica count to budget against when the pods' workload cannot tell (1 or more).
    #[schemars(range(min = 1))]
    pub protect_total_replicas: Option<i32>,
    /// Pods that are never guarded.
    pub ignored_pod_selector: Option<LabelSelector>,
}

/// Names the workload whose pods a PUB guards.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetReference {
    /// API version of the workload.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub api_version: String,
    /// Kind of the workload.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub kind: String,
    /// Name of the workload.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub name: String,
}

/// Observed state of a PodUnavailableBudget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudgetStatus {
    /// Generation of the spec this status reflects; the counts are only valid when it is current.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub observed_generation: i64,
    /// Pods whose deletion or eviction was allowed but not yet observed, with the time allowed.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub disrupted_pods: BTreeMap<String, Time>,
    /// Pods updated in place that have not yet become available again, with the time allowed.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub unavailable_pods: BTreeMap<String, Time>,
    /// Disruptions allowed right now.
    #[serde(default)]
    pub unavailable_allowed: i32,
    /// Pods currently available.
    #[serde(default)]
    pub current_available: i32,
    /// Fewest pods that must stay available.
    #[serde(default)]
    pub desired_available: i32,
    /// Pods counted by the budget.
    #[serde(default)]
    pub total_replicas: i32,
}
