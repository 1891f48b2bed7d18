//! Update scatter: spread the pods carrying a label across the update order.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Pods whose label `key` equals `value` are spread evenly through the update order.
pub type UpdateScatterStrategy = Vec<UpdateScatterTerm>;

/// One label to scatter on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UpdateScatterTerm {
    /// Label key.
    #[serde(default)]
    pub key: String,
    /// Label value.
    #[serde(default)]
    pub value: String,
}
