//! The PersistentPodState controller (upstream `pkg/controller/persistentpodstate`): remembers,
//! for each Ready pod of a StatefulSet (apps/v1, Advanced, or a white-listed custom kind), the
//! node it ran on, that node's values of the chosen topology labels and chosen pod
//! annotations, in `status.podStates`, so that the pod webhook can steer a recreated pod of the
//! same name back to the same zone or node. It also creates, updates and deletes the
//! PersistentPodState of a StatefulSet annotated `kruise.io/auto-generate-persistent-pod-state`.
//! [`core`] decides; [`controller`] reads and writes.

pub mod controller;
pub mod core;

pub use controller::run;
