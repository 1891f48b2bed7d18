//! The ContainerRecreateRequest controller (upstream `pkg/controller/containerrecreaterequest`),
//! the manager's half of container recreation; the node daemon's executor does the recreating.
//! It fails requests whose pod went away, whose daemon never answered or that ran past their
//! deadline; feeds the daemon the pod's fresh container statuses while a request is
//! `Recreating`; holds the pod not ready (`KruisePodReady`) for `unreadyGracePeriodSeconds`
//! before anything is stopped and releases it afterwards; deactivates finished requests and
//! deletes them after `ttlSecondsAfterFinished`.
//!
//! - [`core`]: the decisions, as pure functions with table tests;
//! - [`controller`]: watches, the work queue and the API writes.

pub mod controller;
pub mod core;

pub use controller::{CONTROLLER_NAME, run};
