//! Validation returning every problem with its field path (INVENTORY section d). The same
//! functions back the validating webhook, the embedded API server's CRD checks and
//! `kruise validate`.

mod cloneset;
pub mod common;
pub mod meta;
pub mod pod;

pub use cloneset::*;
