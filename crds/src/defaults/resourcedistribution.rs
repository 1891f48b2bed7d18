//! ResourceDistribution defaults. Upstream registers no mutating webhook and no defaulting
//! function for this kind, so nothing is filled in; the functions exist so that every kind is
//! defaulted the same way.

use crate::apps::{v1alpha1, v1beta1};

/// Defaults of a v1beta1 ResourceDistribution: none upstream, so the object is left as it is.
pub fn default_resourcedistribution_v1beta1(_distribution: &mut v1beta1::ResourceDistribution) {}

/// Defaults of a v1alpha1 ResourceDistribution: none upstream, so the object is left as it is.
pub fn default_resourcedistribution_v1alpha1(_distribution: &mut v1alpha1::ResourceDistribution) {}
