//! WorkloadSpread v1alpha1: subsets name their node selectors `requiredNodeSelectorTerm` and
//! `preferredNodeSelectorTerms`, and subset conditions are Kruise's own condition type rather
//! than the standard one. Stored as v1beta1.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{NodeSelectorTerm, PreferredSchedulingTerm, Toleration},
    apimachinery::pkg::{apis::meta::v1::Time, util::intstr::IntOrString},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    AdaptiveWorkloadSpreadStrategy, TargetFilter, TargetReference, WorkloadSpreadScheduleStrategy,
    WorkloadSpreadScheduleStrategyType,
};
use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

kruise_resource! {
    /// WorkloadSpread as served at apps.kruise.io/v1alpha1.
    WorkloadSpread {
        group: APPS_GROUP,
        version: "v1alpha1",
        kind: "WorkloadSpread",
        plural: "workloadspreads",
        scope: NamespaceResourceScope,
        spec: WorkloadSpreadSpec,
        status: WorkloadSpreadStatus,
    }
}

/// Desired state of a v1alpha1 WorkloadSpread.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSpec {
    /// The workload whose pods are spread.
    #[serde(rename = "targetRef")]
    #[serialize_always] // required by the CRD, as upstream
    pub target_reference: Option<TargetReference>,
    /// Only manage the pods this filter selects, counting replicas from the given paths.
    pub target_filter: Option<TargetFilter>,
    /// The subsets, in priority order.
    #[serde(default)]
    pub subsets: Vec<WorkloadSpreadSubset>,
    /// How pods are placed across the subsets.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub schedule_strategy: WorkloadSpreadScheduleStrategy,
}

/// One group of nodes and the share of pods it takes (v1alpha1 field names).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubset {
    /// Subset name, unique within the WorkloadSpread.
    #[serde(default)]
    pub name: String,
    /// Node selector term ANDed into the pod's required node affinity (v1beta1:
    /// `requiredNodeSelector`).
    pub required_node_selector_term: Option<NodeSelectorTerm>,
    /// Terms appended to the pod's preferred node affinity (v1beta1: `preferredNodeSelector`).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub preferred_node_selector_terms: Vec<PreferredSchedulingTerm>,
    /// Tolerations added to the pod.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub tolerations: Vec<Toleration>,
    /// Most pods in the subset (count or percentage of the workload); unset means no limit.
    pub max_replicas: Option<IntOrString>,
    /// Strategic merge patch applied to pods placed in the subset.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub patch: serde_json::Value,
}

/// Observed state of a v1alpha1 WorkloadSpread.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadStatus {
    /// Generation of the spec this status reflects.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub observed_generation: i64,
    /// One entry per subset.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub subset_statuses: Vec<WorkloadSpreadSubsetStatus>,
    /// Per-revision subset statuses, kept while a Deployment rolls out.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub versioned_subset_statuses: BTreeMap<String, Vec<WorkloadSpreadSubsetStatus>>,
}

/// Observed state of one subset (v1alpha1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubsetStatus {
    /// Subset name.
    #[serde(default)]
    pub name: String,
    /// Active pods in the subset.
    #[serde(default)]
    pub replicas: i32,
    /// Conditions of the subset (Schedulable).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<WorkloadSpreadSubsetCondition>,
    /// Pods the subset still lacks to reach maxReplicas (-1 means unlimited).
    #[serde(default)]
    pub missing_replicas: i32,
    /// Pods assigned to the subset by the webhook but not yet seen by the controller.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub creating_pods: BTreeMap<String, Time>,
    /// Pods whose deletion the webhook let through but the controller has not yet seen.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub deleting_pods: BTreeMap<String, Time>,
}

string_enum! {
    /// Types of v1alpha1 subset conditions.
    pub enum WorkloadSpreadSubsetConditionType {
        /// Whether new pods can currently be scheduled into the subset.
        Schedulable = "Schedulable",
    }
}

/// One observation of a subset's state (v1alpha1; v1beta1 uses the standard condition).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubsetCondition {
    /// Condition type.
    #[serde(rename = "type", default)]
    pub type_: WorkloadSpreadSubsetConditionType,
    /// True, False or Unknown.
    #[serde(default)]
    pub status: String,
    /// Last time the status changed.
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub reason: String,
    /// Human-readable message.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub message: String,
}
