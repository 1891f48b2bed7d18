//! Sub-types shared by several kinds (upstream `apis/apps/pub`), kept in one place so that the
//! CloneSet, Advanced StatefulSet and Advanced DaemonSet controllers share one meaning of each.

pub mod containermeta_hash;
pub mod inplace;
pub mod launch_priority;
pub mod lifecycle;
pub mod priority;
pub mod scatter;
pub mod well_known;

pub use inplace::*;
pub use lifecycle::*;
pub use priority::*;
pub use scatter::*;
