//! The Advanced StatefulSet controller (`apps.kruise.io/v1beta1` StatefulSet; upstream
//! `pkg/controller/statefulset`): pods with stable identities `<set>-<ordinal>` and their PVCs,
//! created and deleted by ordinal (`OrderedReady` or `Parallel`), reserved ordinals, rolling
//! updates highest ordinal first down to a partition, in place through the shared engine
//! ([`crate::inplace`]) where the policy and the change allow, lifecycle hooks, PVC retention
//! and the status upstream reports.
//!
//! - [`core`]: the decisions, as pure functions with table tests.
//! - [`revision`]: the ControllerRevisions of the pod template.
//! - [`predownload`]: ImagePullJobs that pre-pull the images of an in-place rollout.
//! - [`sync`]: one reconcile: reads the caches, runs the decisions, writes.
//! - [`controller`]: the watches and the kube-runtime `Controller` that drives [`sync`].

pub mod controller;
pub mod core;
pub mod predownload;
pub mod revision;
pub mod sync;
