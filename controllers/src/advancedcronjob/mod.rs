//! The AdvancedCronJob controller (upstream `pkg/controller/advancedcronjob`): on a cron
//! schedule, in a time zone, it creates a Job, a BroadcastJob or an ImageListPullJob named
//! after the scheduled time, applies the concurrency policy (Allow, Forbid, Replace), the
//! starting deadline and `paused`, keeps `successfulJobsHistoryLimit` and
//! `failedJobsHistoryLimit` finished children, and reports the active children and the last
//! scheduled time in its status. [`schedule`] computes run times, [`core`] decides,
//! [`controller`] reads and writes.

pub mod controller;
pub mod core;
pub mod schedule;

pub use controller::run;
