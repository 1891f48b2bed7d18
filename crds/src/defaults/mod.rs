//! Defaults the mutating webhook applies (INVENTORY section b, "Defaults" of each kind).

mod cloneset;
pub mod pod;

pub use cloneset::*;
