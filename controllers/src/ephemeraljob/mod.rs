//! The EphemeralJob controller (upstream `pkg/controller/ephemeraljob`): an EphemeralJob runs
//! debugging or maintenance containers inside pods that are already running, without
//! restarting them, by adding its ephemeral containers to the pods its selector matches
//! (`pods/ephemeralcontainers`), within `replicas` and `parallelism`. It follows the containers
//! through the pods' `ephemeralContainerStatuses` to a phase (Waiting, Running, Succeeded,
//! Failed, Paused, Error), fails a job active past `activeDeadlineSeconds` and deletes a
//! finished job after `ttlSecondsAfterFinished`. Injected containers carry `KRUISE_EJOB_ID`
//! set to the job's UID, which is how a job tells its containers from same-named others.
//!
//! - [`core`]: the decisions, as pure functions with table tests;
//! - [`controller`]: watches, the work queue and the API writes.

pub mod controller;
pub mod core;

pub use controller::{CONTROLLER_NAME, run};
