//! The PodProbeMarker controller (upstream `pkg/controller/podprobemarker`): it compiles each
//! marker's probes into the NodePodProbe of every node that runs a pod the marker selects
//! (probe `<marker>#<probe>`, named ports resolved against the pod's container), keeps the
//! marker's `matchedPods` status, and, on deletion, takes the marker's probes out of those
//! NodePodProbes before releasing its finalizer `kruise.io/node-pod-probe-cleanup`. The node
//! daemon runs the probes; the NodePodProbe controller turns their results into pod conditions
//! and marker labels/annotations.
//!
//! - [`core`]: the decisions (which pods, the NodePodProbe spec edits), as pure functions;
//! - [`controller`]: watches, the work queue and the API writes.

pub mod controller;
pub mod core;

pub use controller::{CONTROLLER_NAME, run};
