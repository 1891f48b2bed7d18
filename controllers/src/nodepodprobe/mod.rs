//! The NodePodProbe controller (upstream `pkg/controller/nodepodprobe`): one NodePodProbe per
//! ready node, created with the node and deleted with it; probes of pods that are gone or no
//! longer active are pruned from its spec; and the probe results the node daemon writes into
//! its status become, per the PodProbeMarker that asked for the probe, a pod condition
//! (`podConditionType`: `True` on `Succeeded`, `False` otherwise) and the labels/annotations
//! of the matching `markerPolicy` (those of the opposite policy removed).
//!
//! - [`core`]: the decisions, as pure functions;
//! - [`controller`]: watches, the work queue and the API writes.

pub mod controller;
pub mod core;

pub use controller::{CONTROLLER_NAME, run};
