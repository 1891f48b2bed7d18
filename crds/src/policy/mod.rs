//! Kinds of the `policy.kruise.io` group.

pub mod v1alpha1;
pub mod v1beta1;
