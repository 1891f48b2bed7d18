//! PodUnavailableBudget defaults. Upstream registers no mutating webhook and no defaulting
//! function for this kind (empty `protectOperations` is read as DELETE, UPDATE and EVICT where
//! the budget is enforced), so nothing is filled in.

use crate::policy::{v1alpha1, v1beta1};

/// Defaults of a v1beta1 PodUnavailableBudget: none upstream, so the object is left as it is.
pub fn default_podunavailablebudget_v1beta1(_budget: &mut v1beta1::PodUnavailableBudget) {}

/// Defaults of a v1alpha1 PodUnavailableBudget: none upstream, so the object is left as it is.
pub fn default_podunavailablebudget_v1alpha1(_budget: &mut v1alpha1::PodUnavailableBudget) {}
