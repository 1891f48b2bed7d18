//! The NodeImage controller (upstream `pkg/controller/nodeimage`): one NodeImage per node, named
//! after it and labelled like it, created once the node is Ready (after
//! `--nodeimage-creation-delay`) and deleted with the node; tags whose ImagePullJobs are gone or
//! whose TTL after completion passed leave its spec; tags the node's daemon never answered for
//! are marked failed.
//!
//! - [`core`]: the decisions, as pure functions with table tests;
//! - [`controller`]: watches, the work queue and the API writes.

pub mod controller;
pub mod core;

pub use controller::{CONTROLLER_NAME, NodeImageOptions, run};
