//! Rollouts on each workload kind, as pure functions over the workload object. CloneSet is the
//! one served today; Advanced StatefulSet and DaemonSet slot in beside it once their controllers
//! exist (same partition semantics).

pub mod cloneset;
