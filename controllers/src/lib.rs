//! The Kruise controllers, the in-place update engine they share, and the admission and
//! conversion webhook server. Everything here talks to Kubernetes only through the Kubernetes
//! API (kube-rs), so the same code runs against the embedded control plane and a real cluster.
//!
//! - [`app`]: the manager composition (webhook server + controllers) as one call.
//! - [`runtime`]: the manager: leader election, health, readiness and metrics, running controllers.
//! - [`inplace`]: the in-place update engine (what qualifies, pod markers, batches, completion).
//! - [`workload`]: what the workload controllers share (pod predicates, pod and PVC writes,
//!   ControllerRevisions, update order, the lifecycle state machine, claiming).
//! - [`cloneset`]: the CloneSet controller (decision core as pure functions, I/O at the edges).
//! - [`statefulset`]: the Advanced StatefulSet controller (decision core as pure functions,
//!   reusing the in-place engine and [`workload`]).
//! - [`daemonset`]: the Advanced DaemonSet controller (one pod per eligible node; decision core
//!   as pure functions, reusing the in-place engine and [`workload`]).
//! - [`webhook`]: the HTTPS webhook server (defaulting, validation, conversion, pod mutation).
//! - [`nodeimage`], [`imagepulljob`], [`imagelistpulljob`]: image pre-pull (one NodeImage per
//!   node, which the node daemon pulls from; jobs that fill them), sharing [`imagejob`].
//! - [`containerrecreaterequest`]: the manager's half of container recreation (the node daemon
//!   stops the containers).
//! - [`containerlaunchpriority`]: releases the containers of a pod in launch-priority order
//!   (through the barrier ConfigMap the pod webhook points them at).
//! - [`podprobemarker`], [`nodepodprobe`]: custom pod probes (markers compiled into one
//!   NodePodProbe per node, which the node daemon runs; results written back onto the pods).
//! - [`resourcedistribution`]: copies one Secret or ConfigMap into the namespaces a
//!   ResourceDistribution targets and keeps the copies in sync.
//! - [`uniteddeployment`]: one workload per topology subset of a UnitedDeployment, with the
//!   replicas split over the subsets and template updates rolled out with per-subset partitions.
//! - [`persistentpodstate`]: records where each StatefulSet pod ran so that its replacement
//!   is scheduled back there (with the pod webhook), and auto-generates PersistentPodStates.
//! - [`podunavailablebudget`]: PodUnavailableBudget status, and the guard the pod webhook and
//!   CloneSet in-place updates consult before a disruption.
//! - [`workloadspread`]: spreads a workload's pods over subsets of nodes with a cap per subset
//!   (with the pod webhook), keeping the status and pod deletion costs.

pub mod advancedcronjob;
pub mod app;
pub mod broadcastjob;
pub mod cloneset;
pub mod containerlaunchpriority;
pub mod containerrecreaterequest;
pub mod daemonset;
pub mod ephemeraljob;
pub mod error;
pub mod imagejob;
pub mod imagelistpulljob;
pub mod imagepulljob;
pub mod inplace;
pub mod nodeimage;
pub mod nodepodprobe;
pub mod persistentpodstate;
pub mod podprobemarker;
pub mod podreadiness;
pub mod podunavailablebudget;
pub mod predownload;
pub mod resourcedistribution;
pub mod runtime;
pub mod sidecarset;
pub mod sidecarterminator;
pub mod statefulset;
pub mod uniteddeployment;
pub mod webhook;
pub mod workload;
pub mod workloadspread;

#[cfg(test)]
mod revision_fixtures;

pub use error::ControllerError;
