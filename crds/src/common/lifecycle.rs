//! Pod lifecycle hooks: points where a workload waits for a user's controller before moving a
//! pod on (after creation, before deletion, around an in-place update).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::enums::string_enum;

/// Label holding a pod's lifecycle state.
pub const LIFECYCLE_STATE_KEY: &str = "lifecycle.apps.kruise.io/state";
/// Annotation holding the RFC 3339 time the lifecycle state last changed.
pub const LIFECYCLE_TIMESTAMP_KEY: &str = "lifecycle.apps.kruise.io/timestamp";

string_enum! {
    /// Where a pod is in its lifecycle, as written to [`LIFECYCLE_STATE_KEY`].
    pub enum LifecycleState {
        /// Created, waiting for the preNormal hook (if any) before serving.
        PreparingNormal = "PreparingNormal",
        /// Serving normally.
        Normal = "Normal",
        /// Chosen for an in-place update, waiting for the inPlaceUpdate hook.
        PreparingUpdate = "PreparingUpdate",
        /// In-place update under way.
        Updating = "Updating",
        /// In-place update done, waiting for the inPlaceUpdate hook to release it.
        Updated = "Updated",
        /// Chosen for deletion, waiting for the preDelete hook.
        PreparingDelete = "PreparingDelete",
    }
}

/// Hooks for the pods of a workload.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    /// Held before a pod is deleted.
    pub pre_delete: Option<LifecycleHook>,
    /// Held before and after a pod is updated in place.
    pub in_place_update: Option<LifecycleHook>,
    /// Held after a pod is created, before it is considered normal.
    pub pre_normal: Option<LifecycleHook>,
}

/// One hook: the pod is held while it carries any of these labels or finalizers.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleHook {
    /// Labels whose presence (with these values) holds the pod.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub labels_handler: BTreeMap<String, String>,
    /// Finalizers whose presence holds the pod.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub finalizers_handler: Vec<String>,
    /// Mark the pod NotReady (through the KruisePodReady condition) while it is held in
    /// PreparingDelete or PreparingUpdate, so traffic drains first.
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub mark_pod_not_ready: bool,
}
