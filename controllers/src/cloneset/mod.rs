//! The CloneSet controller.
