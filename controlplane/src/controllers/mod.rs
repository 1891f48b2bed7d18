//! The controllers a kube-apiserver plus kube-controller-manager would run for the objects we
//! store: CRD status (Established), namespace deletion, the `default` ServiceAccount of every
//! namespace, garbage collection by owner references, minimal Job, Deployment, ReplicaSet and
//! StatefulSet controllers, volume provisioning for the simulated nodes' StorageClass, and the node
//! lifecycle (heartbeats, taints, taint eviction, orphaned pods). They act through the same
//! [`Api`] operations as clients do.

mod crd;
pub mod deployment;
mod gc;
mod job;
mod namespace;
pub mod node_lifecycle;
pub mod replicaset;
pub mod service_account;
pub mod statefulset;
pub mod volume_binder;
mod workload;

use std::time::Duration;

use tokio::task::JoinHandle;

use crate::apiserver::api::Api;

/// How often the polling controllers look at the store.
pub(crate) const CONTROLLER_TICK: Duration = Duration::from_millis(200);

/// Starts every built-in controller; they stop when the returned handles are aborted.
pub fn start(api: Api, node_lifecycle: node_lifecycle::NodeLifecycleConfig) -> Vec<JoinHandle<()>> {
    vec![
        tokio::spawn(node_lifecycle::run(api.clone(), node_lifecycle)),
        tokio::spawn(crd::run(api.clone())),
        tokio::spawn(namespace::run(api.clone())),
        tokio::spawn(service_account::run(api.clone())),
        tokio::spawn(gc::run(api.clone())),
        tokio::spawn(job::run(api.clone())),
        tokio::spawn(replicaset::run(api.clone())),
        tokio::spawn(deployment::run(api.clone())),
        tokio::spawn(statefulset::run(api.clone())),
        tokio::spawn(volume_binder::run(api)),
    ]
}
