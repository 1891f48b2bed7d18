//! The BroadcastJob controller (upstream `pkg/controller/broadcastjob`): a BroadcastJob runs one
//! pod to completion on every node its pod template fits, like a DaemonSet whose pods are jobs
//! (node maintenance, image warm-up, log collection). It creates the pods within `parallelism`,
//! follows them to success or failure under the job's completion and failure policies, keeps
//! the job's status (phase, counts, conditions) and Events, and deletes finished jobs after
//! their `ttlSecondsAfterFinished`. [`core`] decides; [`controller`] reads and writes.

pub mod controller;
pub mod core;

pub use controller::run;
