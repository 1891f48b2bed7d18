//! kruise-daemon: the per-node agent of OpenKruise (upstream `pkg/daemon`), one per node, doing
//! the node-local half of Kruise's features over the node's container runtime (CRI, `runtime.v1`
//! gRPC on a unix socket) and the Kubernetes API (kube-rs). It runs unchanged against the
//! simulated CRI of `kruise-controlplane` and against containerd or CRI-O.
//!
//! The daemon is a small supervisor around independent per-node workers, one module each:
//!
//! - [`cri`]: the CRI client (socket discovery in upstream's order, per-call timeouts,
//!   reconnection) and the health monitor that drives `/readyz`;
//! - [`imagepuller`]: pulls the images listed in the node's NodeImage and reports per-tag status
//!   (ImagePullJob / ImageListPullJob pre-pulls end up here);
//! - [`crr`]: carries out the ContainerRecreateRequests of the node's pods (preStop hooks, CRI
//!   `StopContainer`, per-container progress in the request's status);
//! - [`containermeta`]: reports `apps.kruise.io/runtime-containers-meta` for Kruise-managed pods
//!   and restarts containers whose env from labels/annotations went stale during an in-place
//!   update;
//! - [`podprobe`]: runs the probes of the node's NodePodProbe (exec, tcp, http) and reports
//!   their states in its status (PodProbeMarker results reach the pods from there);
//! - every module is a [`worker::NodeWorker`], see [`daemon::default_workers`].
//!
//! Shared plumbing: [`health`] (`/healthz`, `/readyz`, `/metrics`), [`metrics`], [`secrets`]
//! (registry credentials from pull secrets, never logged) and [`daemon`] (the entry point
//! `kruise daemon` and `kruise up` call).

pub mod containermeta;
pub mod cri;
pub mod crr;
pub mod daemon;
pub mod error;
pub mod events;
pub mod imagepuller;
pub mod metrics;
pub mod podprobe;
pub mod secrets;
pub mod worker;
pub mod workqueue;

pub use daemon::{DaemonConfig, DaemonStarted, RunningDaemon, run_daemon, spawn_daemon};
pub use error::{CriError, DaemonError};
pub use worker::{NodeWorker, WorkerContext};

/// The `User-Agent` program name the daemon's API requests carry (upstream names its clients
/// `kruise-daemon-<function>`); API servers and benchmarks count the daemon's requests by it.
pub const USER_AGENT: &str = "kruise-daemon";
