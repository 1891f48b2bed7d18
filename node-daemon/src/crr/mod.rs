//! Container recreation on the node (upstream `pkg/daemon/containerrecreate`): the daemon
//! carries out the ContainerRecreateRequests of the pods on its node, stopping the named
//! containers through the CRI (after their preStop hooks) so that the kubelet restarts them,
//! and reports each container's progress in the request's status. The manager's controller
//! (`kruise_controllers::containerrecreaterequest`) feeds it the pod's container statuses and
//! holds the pod not ready when asked.
//!
//! - [`core`]: pure decisions (which request, each container's state, what to stop next);
//! - [`runtime`]: the pod's containers from the CRI, and stopping one (preStop, StopContainer);
//! - [`controller`]: the [`ContainerRecreator`] worker: the watch, the per-pod queue, the
//!   status writes.

pub mod controller;
pub mod core;
pub mod runtime;

pub use controller::{ContainerRecreator, RecreateConfig};
