//! The UnitedDeployment controller (upstream `pkg/controller/uniteddeployment`): one workload
//! template (StatefulSet, Advanced StatefulSet, CloneSet or Deployment) run as one workload per
//! topology subset, so that an application spread over node pools or zones is managed as one
//! object. Each subset's workload gets the subset's node affinity, tolerations and pod template
//! patch and its share of the replicas: fixed counts or percentages (`replicas`), elastic bounds
//! (`minReplicas`/`maxReplicas`), or the Adaptive strategy that moves pods stuck unschedulable to
//! later subsets. Template changes are recorded as ControllerRevisions and rolled out to every
//! subset, each held back by its own `manualUpdate.partitions` entry.
//!
//! [`allocator`] splits the replicas, [`core`] takes the other decisions (subset status,
//! adaptive scheduling, conditions, revisions), [`workload`] builds the subset workloads and
//! [`controller`] reads and writes.

pub mod allocator;
pub mod controller;
pub mod core;
pub mod workload;

pub use controller::run;
