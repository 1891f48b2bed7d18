//! UnitedDeployment, the storage version: one workload template spread over several subsets
//! (node pools), each run as its own StatefulSet, Advanced StatefulSet, CloneSet or Deployment.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{
        apps::v1 as apps,
        core::v1::{NodeSelectorTerm, Toleration},
    },
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta, Time},
        util::intstr::IntOrString,
    },
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CloneSetSpec, StatefulSetSpec};
use crate::{
    enums::string_enum,
    resource::{APPS_GROUP, kruise_resource},
};

/// Seconds an Adaptive UnitedDeployment waits before moving an unschedulable pod on, when
/// `rescheduleCriticalSeconds` is unset.
pub const UNITED_DEPLOYMENT_DEFAULT_RESCHEDULE_CRITICAL_SECONDS: i32 = 30;
/// Seconds a subset stays marked unschedulable, when `unschedulableDuration` is unset.
pub const UNITED_DEPLOYMENT_DEFAULT_UNSCHEDULABLE_DURATION_SECONDS: i32 = 300;

kruise_resource! {
    /// One workload spread over several subsets, with replicas allocated between them by the
    /// UnitedDeployment controller.
    UnitedDeployment {
        group: APPS_GROUP,
        version: "v1beta1",
        kind: "UnitedDeployment",
        plural: "uniteddeployments",
        scope: NamespaceResourceScope,
        spec: UnitedDeploymentSpec,
        status: UnitedDeploymentStatus,
    }
}

/// Desired state of a UnitedDeployment (identical at v1alpha1).
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentSpec {
    /// Total desired pods over all subsets (default 1).
    pub replicas: Option<i32>,
    /// Label query over the pods; must match the template labels.
    #[serialize_always] // Go writes `selector: null`; the CRD requires the key
    pub selector: Option<LabelSelector>,
    /// The workload each subset runs (exactly one kind).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub template: SubsetTemplate,
    /// The subsets and how pods are scheduled between them.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub topology: Topology,
    /// How template changes reach the subsets.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub update_strategy: UnitedDeploymentUpdateStrategy,
    /// Old revisions kept (default 10).
    pub revision_history_limit: Option<i32>,
}

/// The workload template of the subsets; exactly one is set.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubsetTemplate {
    /// Run each subset as a Kubernetes StatefulSet.
    pub stateful_set_template: Option<StatefulSetTemplateSpec>,
    /// Run each subset as an Advanced StatefulSet.
    pub advanced_stateful_set_template: Option<AdvancedStatefulSetTemplateSpec>,
    /// Run each subset as a CloneSet.
    pub clone_set_template: Option<CloneSetTemplateSpec>,
    /// Run each subset as a Kubernetes Deployment.
    pub deployment_template: Option<DeploymentTemplateSpec>,
}

/// Template of a Kubernetes StatefulSet subset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetTemplateSpec {
    /// Labels and annotations of the subset workloads.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub metadata: ObjectMeta,
    /// The StatefulSet spec.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub spec: apps::StatefulSetSpec,
}

/// Template of an Advanced StatefulSet subset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedStatefulSetTemplateSpec {
    /// Labels and annotations of the subset workloads.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub metadata: ObjectMeta,
    /// The Advanced StatefulSet spec (v1beta1).
    #[serde(default)]
    pub spec: StatefulSetSpec,
}

/// Template of a CloneSet subset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetTemplateSpec {
    /// Labels and annotations of the subset workloads.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub metadata: ObjectMeta,
    /// The CloneSet spec (v1beta1).
    #[serde(default)]
    pub spec: CloneSetSpec,
}

/// Template of a Kubernetes Deployment subset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentTemplateSpec {
    /// Labels and annotations of the subset workloads.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub metadata: ObjectMeta,
    /// The Deployment spec.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub spec: apps::DeploymentSpec,
}

/// How template changes reach the subsets.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentUpdateStrategy {
    /// Manual (default): every subset is updated, each held back by its own partition.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: UnitedDeploymentUpdateStrategyType,
    /// Parameters of Manual.
    pub manual_update: Option<ManualUpdate>,
}

string_enum! {
    /// Update strategy of a UnitedDeployment.
    pub enum UnitedDeploymentUpdateStrategyType {
        /// Per-subset partitions control how far each subset is updated.
        Manual = "Manual",
    }
    schema = ["Manual", ""]
}

/// Per-subset partitions of a Manual update.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManualUpdate {
    /// Pods kept at the old revision, by subset name.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub partitions: BTreeMap<String, i32>,
}

/// The subsets and how pods are scheduled between them.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    /// The subsets, in allocation order; names are unique.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub subsets: Vec<Subset>,
    /// Fixed (default) or Adaptive scheduling between subsets.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub schedule_strategy: UnitedDeploymentScheduleStrategy,
}

/// One subset: a group of nodes and its share of the replicas.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Subset {
    /// Subset name (a DNS label), part of the subset workload's name.
    #[serde(default)]
    pub name: String,
    /// Nodes of the subset (merged into the pods' required node affinity; immutable).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub node_selector_term: NodeSelectorTerm,
    /// Tolerations added to the subset's pods (immutable).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub tolerations: Vec<Toleration>,
    /// Fixed replicas (count or percentage of the total); unset shares the remainder evenly.
    pub replicas: Option<IntOrString>,
    /// Replicas the subset gets before others get more (default 0).
    pub min_replicas: Option<IntOrString>,
    /// Most replicas the subset gets (unset: no limit).
    pub max_replicas: Option<IntOrString>,
    /// Strategic-merge patch over the workload template for this subset; wins over the other
    /// fields.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown")]
    pub patch: Option<serde_json::Value>,
}

string_enum! {
    /// How pods are scheduled between subsets.
    pub enum UnitedDeploymentScheduleStrategyType {
        /// Pods that cannot be scheduled in their subset move on to later subsets.
        Adaptive = "Adaptive",
        /// Pods stay in their subset even when they cannot be scheduled.
        Fixed = "Fixed",
    }
    schema = ["Adaptive", "Fixed", ""]
}

/// How pods are scheduled between subsets.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentScheduleStrategy {
    /// Fixed (default) or Adaptive.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: UnitedDeploymentScheduleStrategyType,
    /// Parameters of Adaptive.
    pub adaptive: Option<AdaptiveUnitedDeploymentStrategy>,
}

/// Parameters of Adaptive scheduling.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveUnitedDeploymentStrategy {
    /// Seconds a pod may stay unschedulable before it is moved to another subset (default 30).
    pub reschedule_critical_seconds: Option<i32>,
    /// Seconds a subset stays marked unschedulable (default 300).
    pub unschedulable_duration: Option<i32>,
    /// Keep the unschedulable pods and run temporary substitutes elsewhere until they start.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub reserve_unschedulable_pods: bool,
}

/// Observed state of a UnitedDeployment.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentStatus {
    /// Generation of the spec this status reflects.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub observed_generation: i64,
    /// Pods that are Ready.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub ready_replicas: i32,
    /// Pods over all subsets.
    #[serde(default)]
    pub replicas: i32,
    /// Pods at the updated revision.
    #[serde(default)]
    pub updated_replicas: i32,
    /// Pods kept pending by Adaptive scheduling with reservation.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub reserved_pods: i32,
    /// Pods at the updated revision that are Ready.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub updated_ready_replicas: i32,
    /// Hash collisions met when naming revisions.
    pub collision_count: Option<i32>,
    /// The revision the subsets were at before the latest change.
    #[serde(default)]
    pub current_revision: String,
    /// The latest revision.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub updated_revision: String,
    /// Status of each subset.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub subset_statuses: Vec<UnitedDeploymentSubsetStatus>,
    /// Latest observations of the UnitedDeployment's state.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<UnitedDeploymentCondition>,
    /// Serialized selector, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub label_selector: String,
}

impl UnitedDeploymentStatus {
    /// The status of the named subset, if recorded.
    pub fn subset_status(&self, name: &str) -> Option<&UnitedDeploymentSubsetStatus> {
        self.subset_statuses.iter().find(|status| status.name == name)
    }

    /// The status of the named subset, appended (empty) when not yet recorded.
    pub fn subset_status_mut(&mut self, name: &str) -> &mut UnitedDeploymentSubsetStatus {
        let index = match self.subset_statuses.iter().position(|status| status.name == name) {
            Some(index) => index,
            None => {
                self.subset_statuses
                    .push(UnitedDeploymentSubsetStatus { name: name.to_string(), ..Default::default() });
                self.subset_statuses.len() - 1
            }
        };
        &mut self.subset_statuses[index]
    }
}

string_enum! {
    /// Kinds of UnitedDeployment condition.
    pub enum UnitedDeploymentConditionType {
        /// Every wanted subset workload exists and no unwanted one does.
        SubsetProvisioned = "SubsetProvisioned",
        /// Every subset workload has the latest template.
        SubsetUpdated = "SubsetUpdated",
        /// A subset workload failed to reconcile.
        SubsetFailure = "SubsetFailure",
        /// The current revision is the updated revision.
        UnitedDeploymentUpdated = "UnitedDeploymentUpdated",
    }
}

/// One observation of a UnitedDeployment's state.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentCondition {
    /// Which condition.
    #[serde(rename = "type", default, skip_serializing_if = "crate::is_default")]
    pub type_: UnitedDeploymentConditionType,
    /// True, False or Unknown.
    #[serde(default, skip_serializing_if = "crate::is_default")]
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

/// Status of one subset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentSubsetStatus {
    /// Subset name, as in the topology.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub name: String,
    /// Replicas the subset is currently given.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub replicas: i32,
    /// Ready pods of the subset.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub ready_replicas: i32,
    /// Partition currently applied to the subset workload.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub partition: i32,
    /// Pods of the subset kept pending by reservation.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub reserved_pods: i32,
    /// Observations of the subset's state.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub conditions: Vec<UnitedDeploymentSubsetCondition>,
}

string_enum! {
    /// Kinds of subset condition.
    pub enum UnitedDeploymentSubsetConditionType {
        /// False while new pods of the subset would stay pending.
        Schedulable = "Schedulable",
    }
}

/// One observation of a subset's state.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentSubsetCondition {
    /// Which condition.
    #[serde(rename = "type", default)]
    pub type_: UnitedDeploymentSubsetConditionType,
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
