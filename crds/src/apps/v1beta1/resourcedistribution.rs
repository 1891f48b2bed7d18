//! ResourceDistribution, the storage version: copies one Secret or ConfigMap into a chosen set of
//! namespaces and keeps the copies in sync. Cluster-scoped.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// A resource distributed to many namespaces by the ResourceDistribution controller.
    ResourceDistribution {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "ResourceDistribution",
        plural: "resourcedistributions",
        scope: ClusterResourceScope,
        spec: ResourceDistributionSpec,
        status: ResourceDistributionStatus,
    }
}

/// Desired state of a ResourceDistribution.
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

/// The namespaces to distribute to: (all | included | selector matches) minus excluded.
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
    /// Namespaces to distribute to by label.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub namespace_selector: LabelSelector,
}

/// A list of namespaces by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionTargetNamespaces {
    /// The namespaces (merged by name in strategic merge patches).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub list: Vec<ResourceDistributionNamespace>,
}

/// One namespace named in a target list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionNamespace {
    /// Namespace name.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub name: String,
}

/// Observed state of a ResourceDistribution (written by the controller only).
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

/// One kind of problem and the namespaces it affected.
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
    /// The namespaces affected.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub failed_namespaces: Vec<String>,
}

string_enum! {
    /// Kinds of ResourceDistribution problems.
    pub enum ResourceDistributionConditionType {
        /// A namespace already holds an object of that name not owned by this distribution.
        ConflictOccurred = "ConflictOccurred",
        /// Some target namespaces do not exist.
        NamespaceNotExists = "NamespaceNotExists",
        /// Reading existing copies failed.
        GetResourceFailed = "GetResourceFailed",
        /// Creating copies failed.
        CreateResourceFailed = "CreateResourceFailed",
        /// Updating copies failed.
        UpdateResourceFailed = "UpdateResourceFailed",
        /// Deleting copies that are no longer wanted failed.
        DeleteResourceFailed = "DeleteResourceFailed",
    }
}
