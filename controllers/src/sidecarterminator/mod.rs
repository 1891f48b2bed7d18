//! The sidecar terminator (upstream `pkg/controller/sidecarterminator`, gate
//! `SidecarTerminator`): a Job pod (`restartPolicy` Never or OnFailure) whose main containers
//! finished still runs its sidecars (a log shipper, a mesh proxy), so the pod never completes and
//! neither does the Job. Once the main containers are done, the terminator stops the sidecars
//! that ask for it, through a ContainerRecreateRequest the node daemon carries out, so the pod
//! completes. [`core`] decides; [`controller`] reads and writes.

pub mod controller;
pub mod core;

pub use controller::run;
