//! WorkloadSpread, the storage version: spreads the pods of an existing workload over subsets of
//! nodes (zones, node pools, spot and on-demand capacity), with a cap per subset, by patching
//! pods as they are created.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{NodeSelectorTerm, PreferredSchedulingTerm, Toleration},
    apimachinery::pkg::{
        apis::meta::v1::{Condition, LabelSelector, Time},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::TargetReference;
use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

/// Subset condition type: whether new pods can currently be scheduled into the subset.
pub const WORKLOADSPREAD_SUBSET_SCHEDULABLE: &str = "Schedulable";

kruise_resource! {
    /// Spreads the pods of a target workload across subsets of nodes.
    WorkloadSpread {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "WorkloadSpread",
        plural: "workloadspreads",
        scope: NamespaceResourceScope,
        spec: WorkloadSpreadSpec,
        status: WorkloadSpreadStatus,
    }
}

/// Desired state of a WorkloadSpread.
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
    /// The subsets, in priority order (merged by name in strategic merge patches).
    #[serde(default)]
    pub subsets: Vec<WorkloadSpreadSubset>,
    /// How pods are placed across the subsets.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub schedule_strategy: WorkloadSpreadScheduleStrategy,
}

/// Restricts a WorkloadSpread to part of the target's pods (for example the workers of a
/// training job).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetFilter {
    /// The pods to manage.
    pub selector: Option<LabelSelector>,
    /// Paths in the target object whose integer values add up to the managed replica count.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub replicas_path_list: Vec<String>,
}

string_enum! {
    /// How a WorkloadSpread reacts to pods that cannot be scheduled in their subset.
    pub enum WorkloadSpreadScheduleStrategyType {
        /// Move pods that stay unschedulable to the next subset with room.
        Adaptive = "Adaptive",
        /// Keep pods in the subset they were assigned to (the default).
        Fixed = "Fixed",
    }
    schema = ["Adaptive", "Fixed", ""]
}

/// How pods are placed across the subsets.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadScheduleStrategy {
    /// Fixed (default) or Adaptive.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: WorkloadSpreadScheduleStrategyType,
    /// Parameters of the Adaptive strategy.
    pub adaptive: Option<AdaptiveWorkloadSpreadStrategy>,
}

/// Parameters of the Adaptive strategy.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveWorkloadSpreadStrategy {
    /// Skip the webhook's quick check that a pod fits a subset before assigning it there.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub disable_simulation_schedule: bool,
    /// Seconds a pod may stay unschedulable before it is moved to another subset.
    pub reschedule_critical_seconds: Option<i32>,
}

/// One group of nodes and the share of pods it takes.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubset {
    /// Subset name, unique within the WorkloadSpread.
    #[serde(default)]
    pub name: String,
    /// Node selector term ANDed into the pod's required node affinity.
    pub required_node_selector: Option<NodeSelectorTerm>,
    /// Terms appended to the pod's preferred node affinity.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub preferred_node_selector: Vec<PreferredSchedulingTerm>,
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

/// Observed state of a WorkloadSpread.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadStatus {
    /// Generation of the spec this status reflects.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub observed_generation: i64,
    /// One entry per subset.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub subset_statuses: Vec<WorkloadSpreadSubsetStatus>,
    /// Per-revision subset statuses, kept while a Deployment rolls out so that new pods are not
    /// counted against the old revision's places.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub versioned_subset_statuses: BTreeMap<String, Vec<WorkloadSpreadSubsetStatus>>,
}

/// Observed state of one subset.
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
    pub conditions: Vec<Condition>,
    /// Pods the subset still lacks to reach maxReplicas (-1 means unlimited).
    #[serde(default)]
    pub missing_replicas: i32,
    /// Pods the webhook assigned to the subset that the controller has not yet seen, by name,
    /// with the time of assignment.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub creating_pods: BTreeMap<String, Time>,
    /// Pods of the subset whose deletion the webhook let through but the controller has not
    /// yet seen, by name.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub deleting_pods: BTreeMap<String, Time>,
}
