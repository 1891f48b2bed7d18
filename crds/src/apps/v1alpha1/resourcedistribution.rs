//! ResourceDistribution v1alpha1: the label selector of target namespaces is called
//! `namespaceLabelSelector` and a condition lists its namespaces under `failedNamespace`.
//! Stored as v1beta1.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    ResourceDistributionConditionType, ResourceDistributionNamespace, ResourceDistributionTargetNamespaces,
};
use crate::resource::{APPS_GROUP, kruise_resource};

kruise_resource! {
    /// ResourceDistribution as served at apps.kruise.io/v1alpha1.
    ResourceDistribution {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "ResourceDistribution",
        plural: "resourcedistributions",
        scope: ClusterResourceScope,
        spec: ResourceDistributionSpec,
        status: ResourceDistributionStatus,
    }
}

/// Desired state of a v1alpha1 ResourceDistribution.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionSpec {
    /// The complete object to copy (apiVersion, kind, metadata and body).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::embedded_resource")]
    pub resource: serde_json::Value,
    /// Which namespaces receive a copy.
    #[serde(default)]
    pub targets: ResourceDistributionTargets,
}

/// The namespaces to distribute to (v1alpha1 field names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionTargets {
    /// Every namespace (kube-system and kube-public are always left out).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub all_namespaces: bool,
    /// Namespaces never to distribute to; wins over every other option.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub excluded_namespaces: ResourceDistributionTargetNamespaces,
    /// Namespaces to distribute to by name.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub included_namespaces: ResourceDistributionTargetNamespaces,
    /// Namespaces to distribute to by label (v1beta1: `namespaceSelector`).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub namespace_label_selector: LabelSelector,
}

/// Observed state of a v1alpha1 ResourceDistribution.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionStatus {
    /// Number of target namespaces.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub desired: i32,
    /// Namespaces whose copy is up to date.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub succeeded: i32,
    /// Namespaces whose copy could not be written.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub failed: i32,
    /// Generation of the spec this status reflects.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub observed_generation: i64,
    /// Problems met while creating, updating or deleting copies.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<ResourceDistributionCondition>,
}

/// One kind of problem and the namespaces it affected (v1alpha1 field names).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionCondition {
    /// What went wrong.
    #[serde(rename = "type", default)]
    pub type_: ResourceDistributionConditionType,
    /// True, False or Unknown.
    #[serde(default)]
    pub status: String,
    /// Last time the status changed.
    pub last_transition_time: Option<Time>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub reason: String,
    /// The namespaces affected (singular `failedNamespace` on the wire).
    #[serde(rename = "failedNamespace", default, skip_serializing_if = "crate::is_default")]
    pub failed_namespaces: Vec<String>,
}
