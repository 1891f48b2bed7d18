//! The CloneSet controller.

pub mod pods;
pub mod revision;
