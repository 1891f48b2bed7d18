//! Container meta and env-from-metadata restarts on the node (upstream
//! `pkg/daemon/containermeta`). For every pod of a Kruise workload (or with a SidecarSet
//! injection) on its node, the daemon keeps the annotation `apps.kruise.io/runtime-containers-meta`
//! up to date: per running container its ID, restart count, the kubelet's container hash and
//! the hash of the env values it took from labels/annotations, read inside the container once
//! (CRI `ExecSync env`). Downward-API env is fixed when a container starts, so when an in-place
//! update changes such a label or annotation (the pod's `InPlaceUpdateReady` is `False`), the
//! daemon restarts the containers whose hash no longer matches; the kubelet starts them with the
//! new values, and the in-place update engine (`kruise_controllers::inplace::completion`)
//! finishes the update once the report shows the new hash.
//!
//! - [`core`]: pure decisions (which pods, the new report, which containers to restart);
//! - [`runtime`]: the pod's containers and a container's env from the CRI, and what stopping
//!   one needs from the kubelet's annotations;
//! - [`controller`]: the [`ContainerMetaReporter`] worker: the pod watch, the per-pod queue, the
//!   report writes and the rate-limited restarter.

pub mod controller;
pub mod core;
pub mod runtime;

pub use controller::{ContainerMetaConfig, ContainerMetaReporter};
