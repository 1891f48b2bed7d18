//! The in-place update engine shared by CloneSet, Advanced StatefulSet and Advanced DaemonSet
//! (upstream `pkg/util/inplaceupdate`).
//!
//! A workload controller asks two things of it:
//! - [`InPlaceEngine::update`]: move a pod from one revision to another without recreating
//!   it: mark it NotReady (`InPlaceUpdateReady=False`), write the revision labels and the
//!   `apps.kruise.io/inplace-update-state` annotation, change images and template metadata,
//!   resize cpu/memory through `pods/resize`, container launch-priority batch by batch, or park
//!   the change in `apps.kruise.io/inplace-update-grace` for a grace period;
//! - [`InPlaceEngine::refresh`]: on every reconcile, apply a due grace spec, start the next
//!   batch once the previous one runs Ready, and mark the pod `InPlaceUpdateReady=True` when
//!   the kubelet has finished.
//!
//! Every decision is a pure function of the revisions and the pod as read ([`spec`],
//! [`batch`], [`completion`], [`conditions`], [`plan`]), table-tested; [`engine`] only reads
//! pods and sends the planned writes.
//!
//! Env-from-metadata: when a label/annotation that a container reads through the downward API
//! changes, the engine writes the new value and records the container; the kubelet does not
//! restart containers for that, the node daemon does (it compares env hashes and reports them
//! in `apps.kruise.io/runtime-containers-meta`). Until that daemon runs, such an update stays
//! "not completed" ([`completion::NotCompleted::RuntimeMetaMissing`]).

pub mod batch;
pub mod completion;
pub mod conditions;
pub mod diff;
pub mod engine;
pub mod error;
pub mod gohash;
pub mod options;
pub mod plan;
pub mod resources;
pub mod spec;

pub use completion::{NotCompleted, check_update_completed};
pub use conditions::inject_readiness_gate;
pub use engine::{InPlaceEngine, RefreshResult, RefreshStatus, UpdateResult};
pub use error::InPlaceError;
pub use options::{
    CloneSetRevisionAdapter, DefaultRevisionAdapter, InPlaceGates, Revision, RevisionAdapter, UpdateOptions,
};
pub use spec::{UpdateSpec, calculate_update_spec, can_update_in_place};

#[cfg(test)]
mod tests;
