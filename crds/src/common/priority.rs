//! Update priority: which pods a rolling update takes first.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Rules ordering pods for update. Only one of the two term lists may be used.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityStrategy {
    /// Pods sorted by the integer suffix of a label's value, highest first.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub order_priority: Vec<UpdatePriorityOrderTerm>,
    /// Pods sorted by the sum of the weights of the terms they match, highest first.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub weight_priority: Vec<UpdatePriorityWeightTerm>,
}

/// Order by the value of one label.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityOrderTerm {
    /// The label key whose value orders the pods.
    #[serde(default)]
    pub ordered_key: String,
}

/// Pods matching the selector gain the weight.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityWeightTerm {
    /// Weight in the range 0-100.
    #[serde(default)]
    pub weight: i32,
    /// Pods this term applies to.
    #[serde(default)]
    pub match_selector: LabelSelector,
}
