//! WorkloadSpread (upstream `pkg/util/workloadspread`, `pkg/controller/workloadspread`): spreads
//! the pods of an existing workload (CloneSet, Deployment, ReplicaSet, Job, StatefulSet, or a
//! whitelisted custom kind) over subsets of nodes, each with an optional cap, without touching
//! the workload. The pod webhook places each new pod in the first subset with room and records
//! it in the WorkloadSpread's status; the controller keeps the status true to the pods, adopts
//! pods created before the WorkloadSpread, sets pod deletion costs so that a scale-in empties
//! the later subsets first, and (Adaptive strategy) moves pods that cannot be scheduled in their
//! subset. [`core`] decides; [`controller`] and `crate::webhook::workloadspread` read and write.

pub mod controller;
pub mod core;
pub mod patch;

pub use controller::run;
