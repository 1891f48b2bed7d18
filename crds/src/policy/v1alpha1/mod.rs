//! `policy.kruise.io/v1alpha1`.

mod podunavailablebudget;

pub use podunavailablebudget::*;
