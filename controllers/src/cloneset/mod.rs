//! The CloneSet controller.

pub mod controller;
pub mod pods;
pub mod predownload;
pub mod revision;
pub mod sync;

pub mod core;
