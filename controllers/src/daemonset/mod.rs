//! The Advanced DaemonSet controller (`apps.kruise.io/v1beta1` DaemonSet; upstream
//! `pkg/controller/daemonset`): one pod per node the template's scheduling constraints allow
//! (node selector, required node affinity, taints against the template's and the daemon
//! tolerations), pinned to its node through a `metadata.name` node affinity; misplaced, failed
//! and duplicate pods deleted; `burstReplicas` and slow start; rolling updates within
//! `maxUnavailable` or surging within `maxSurge`, held by `partition`, narrowed by `selector`,
//! stopped by `paused`, in place through the shared engine ([`crate::inplace`]) with
//! `InPlaceIfPossible`; `partitionedScaling`; the preDelete hook; upstream's status.
//!
//! - [`core`]: the decisions, as pure functions with table tests.
//! - [`revision`]: the ControllerRevisions of the pod template.
//! - [`sync`]: one reconcile: reads the caches, runs the decisions, writes.
//! - [`controller`]: the watches and the kube-runtime `Controller` that drives [`sync`].
//!
//! Image pre-download (gate `PreDownloadImageForDaemonSetUpdate`) goes through the shared
//! [`crate::predownload`]; gate `DaemonSetPruneIneligibleNodes` leaves pods on nodes that no
//! longer qualify out of the rolling update's `maxUnavailable` accounting.

pub mod controller;
pub mod core;
pub mod revision;
pub mod sync;
