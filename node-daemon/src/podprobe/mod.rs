//! Pod probes on the node (upstream `pkg/daemon/podprobe`): the daemon runs the probes its
//! node's NodePodProbe lists (compiled there by the manager from PodProbeMarkers) — `exec`
//! through CRI `ExecSync`, `tcpSocket` and `httpGet` against the pod's IP — with their periods,
//! initial delays and thresholds, and writes each probe's state into the NodePodProbe's status.
//! The manager's NodePodProbe controller turns those states into pod conditions and marker
//! labels/annotations.
//!
//! - [`core`]: pure decisions (probe keys, thresholds, the status the results make);
//! - [`prober`]: running one probe;
//! - [`controller`]: the [`PodProber`] worker: the watch, one task per probe, status writes.

pub mod controller;
pub mod core;
pub mod prober;

pub use controller::PodProber;
