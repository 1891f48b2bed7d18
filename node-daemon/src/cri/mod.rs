//! The container runtime, over CRI `runtime.v1` on a unix socket (upstream
//! `pkg/daemon/criruntime`): [`endpoint`] finds the socket, [`CriClient`] calls it with
//! timeouts and reconnects, [`monitor`] keeps the `cri` readiness check current.

pub mod client;
pub mod endpoint;
pub mod monitor;

pub use client::{CriClient, CriOptions};
pub use endpoint::EndpointSource;
pub use monitor::MonitorOptions;
