//! Process plumbing shared by the manager (`kruise-controllers`) and the node daemon
//! (`kruise-daemon`). The daemon does not link the manager's crate, so what both processes need
//! lives here rather than in two copies:
//!
//! - [`workqueue`]: a keyed, rate-limited, delaying work queue; each process supplies its own
//!   retry [`workqueue::Backoff`].
//! - [`health`]: named [`health::Readiness`] checks and the `/healthz`, `/readyz` and `/metrics`
//!   HTTP endpoint; each process supplies its own metrics rendering.

pub mod error;
pub mod health;
pub mod workqueue;

pub use error::RuntimeError;
pub use health::Readiness;
pub use workqueue::{Backoff, WorkQueue};
