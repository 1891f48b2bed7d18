//! `policy.kruise.io/v1beta1`.

mod podunavailablebudget;

pub use podunavailablebudget::*;
