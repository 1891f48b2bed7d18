//! The CloneSet controller.

pub mod controller;
pub mod pod_ops;
pub mod pods;
pub mod predownload;
pub mod revision;
pub mod sync;

pub mod core;
