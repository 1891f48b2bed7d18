//! The controllers a kube-apiserver plus kube-controller-manager would run for the objects we
//! store: CRD status (Established), namespace deletion, garbage collection by owner references,
//! and a minimal Job controller. They act through the same [`Api`] operations as clients do.

mod crd;
mod gc;
mod job;
mod namespace;

use std::time::Duration;

use tokio::task::JoinHandle;

use crate::apiserver::api::Api;

/// How often the polling controllers look at the store.
pub(crate) const CONTROLLER_TICK: Duration = Duration::from_millis(200);

/// Starts every built-in controller; they stop when the returned handles are aborted.
pub fn start(api: Api) -> Vec<JoinHandle<()>> {
    vec![
        tokio::spawn(crd::run(api.clone())),
        tokio::spawn(namespace::run(api.clone())),
        tokio::spawn(gc::run(api.clone())),
        tokio::spawn(job::run(api)),
    ]
}
