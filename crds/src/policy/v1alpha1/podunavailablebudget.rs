//! PodUnavailableBudget v1alpha1: the guarded operations and the replica override are PUB
//! annotations rather than spec fields, and there is no ignored-pod selector. Stored as v1beta1.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::{
    apis::meta::v1::{LabelSelector, Time},
    util::intstr::IntOrString,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::policy::v1beta1::{
    POD_PUB_NO_PROTECTION_KEY, PUB_PROTECT_OPERATIONS_KEY, PUB_PROTECT_TOTAL_REPLICAS_KEY, PubOperation,
    TargetReference,
};
use crate::resource::{POLICY_GROUP, kruise_resource};

kruise_resource! {
    /// PodUnavailableBudget as served at policy.kruise.io/v1alpha1.
    PodUnavailableBudget {
        group: POLICY_GROUP,
        version: "v1alpha1",
        kind: "PodUnavailableBudget",
        plural: "podunavailablebudgets",
        scope: NamespaceResourceScope,
        spec: PodUnavailableBudgetSpec,
        status: PodUnavailableBudgetStatus,
    }
}

/// Desired state of a v1alpha1 PodUnavailableBudget.
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
}

/// Observed state of a v1alpha1 PodUnavailableBudget (`observedGeneration` always written).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudgetStatus {
    /// Generation of the spec this status reflects.
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
