//! WorkloadSpread defaults. Upstream registers no mutating webhook and no defaulting function
//! for this kind (an empty `scheduleStrategy.type` is read as Fixed and an unset `maxReplicas`
//! as "no limit" where they are used), so nothing is filled in.

use crate::apps::{v1alpha1, v1beta1};

/// Defaults of a v1beta1 WorkloadSpread: none upstream, so the object is left as it is.
pub fn default_workloadspread_v1beta1(_spread: &mut v1beta1::WorkloadSpread) {}

/// Defaults of a v1alpha1 WorkloadSpread: none upstream, so the object is left as it is.
pub fn default_workloadspread_v1alpha1(_spread: &mut v1alpha1::WorkloadSpread) {}
