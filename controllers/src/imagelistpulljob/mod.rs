//! The ImageListPullJob controller (upstream `pkg/controller/imagelistpulljob`): one child
//! ImagePullJob per listed image, sharing the list's selector, parallelism, pull and completion
//! policies; children are replaced when that template changes and removed with their image;
//! the list's status counts its children, and a finished list is deleted after its TTL.
//!
//! - [`core`]: the decisions, as pure functions with table tests;
//! - [`controller`]: watches, the work queue and the API writes.

pub mod controller;
pub mod core;

pub use controller::{CONTROLLER_NAME, run};
