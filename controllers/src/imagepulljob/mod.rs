//! The ImagePullJob controller (upstream `pkg/controller/imagepulljob`): it picks the nodes a
//! job targets (`selector` by names or labels, or `podSelector`), adds the image to their
//! NodeImages at most `parallelism` at a time, copies the job's pull secrets where the node
//! daemons read them, aggregates the NodeImage statuses into the job's status, completes an
//! `Always` job (or fails its unfinished nodes at `activeDeadlineSeconds`) and deletes it after
//! `ttlSecondsAfterFinished`.
//!
//! - [`core`]: the decisions, as pure functions with table tests;
//! - [`controller`]: watches, the work queue and the API writes.

pub mod controller;
pub mod core;

pub use controller::{CONTROLLER_NAME, run};
