//! The PodUnavailableBudget controller and guard (upstream `pkg/controller/podunavailablebudget`
//! and `pkg/control/pubcontrol`): a PodUnavailableBudget (PUB) limits how many pods of a
//! workload or selector voluntary disruptions may take away at once, like a
//! PodDisruptionBudget, but it also guards deletions and in-place updates, not only evictions.
//!
//! - [`controller`] keeps each budget's status (`unavailableAllowed`, `currentAvailable`,
//!   `desiredAvailable`, `totalReplicas`) and its records of disruptions in flight
//!   (`disruptedPods`, `unavailablePods`, dropped after 20 s and 10 s), and names the budget on
//!   its pods (`pub.kruise.io/related-pub`);
//! - [`admit`] spends a disruption when the pod webhook (or the CloneSet controller before an
//!   in-place update) asks, or refuses with upstream's message when none is left;
//! - [`core`] holds every decision, as pure functions.

pub mod admit;
pub mod controller;
pub mod core;

pub use controller::run;
