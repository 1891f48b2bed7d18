//! The extension point of the daemon: a [`NodeWorker`] is one job the daemon does on its node
//! (upstream's `Runnable`s: the image puller, the container recreate executor and the container
//! meta reporter today; pod probes next). Each gets a [`WorkerContext`] with everything node-local it
//! needs, runs until the daemon stops, and is restarted with a back-off if it fails, so one
//! broken worker neither stops the others nor the daemon.
//!
//! Adding a worker: implement [`NodeWorker`] in its own module (register its readiness checks
//! through `ctx.readiness`, watch only objects of `ctx.node_name`, call the runtime through
//! `ctx.cri`) and add it to [`crate::daemon::default_workers`].

use std::{future::Future, pin::Pin, sync::Arc, time::Duration};

use kruise_runtime::health::Readiness;
use tokio_util::sync::CancellationToken;

use crate::{cri::CriClient, error::DaemonError, metrics::DaemonMetrics};

/// A worker's main loop.
pub type WorkerFuture = Pin<Box<dyn Future<Output = Result<(), DaemonError>> + Send>>;

/// One job of the daemon on its node.
pub trait NodeWorker: Send + Sync + 'static {
    /// Short name for logs and readiness checks (`imagepuller`, `crr`, `probes`).
    fn name(&self) -> &'static str;

    /// Runs until `ctx.shutdown` is cancelled (then returns `Ok`). An `Err` is logged and the
    /// worker is started again after a back-off; its state is rebuilt from the API and the
    /// runtime, as after a daemon restart.
    fn run(self: Arc<Self>, ctx: WorkerContext) -> WorkerFuture;
}

/// What every worker gets.
#[derive(Clone)]
pub struct WorkerContext {
    /// The node this daemon runs on (`NODE_NAME`).
    pub node_name: String,
    /// Kubernetes API client (user agent `kruise-daemon`).
    pub client: kube::Client,
    /// The node's container runtime.
    pub cri: CriClient,
    /// Register readiness checks here (`/readyz`).
    pub readiness: Readiness,
    /// The daemon's metrics.
    pub metrics: DaemonMetrics,
    /// Cancelled when the daemon stops.
    pub shutdown: CancellationToken,
}

/// Back-off between restarts of a failed worker: 1 s, doubling, at most 30 s.
pub fn restart_delay(failures: u32) -> Duration {
    Duration::from_secs(1u64 << failures.saturating_sub(1).min(5)).min(Duration::from_secs(30))
}

/// Runs `worker` until shutdown, restarting it after failures.
pub async fn supervise(worker: Arc<dyn NodeWorker>, ctx: WorkerContext) {
    let mut failures = 0u32;
    loop {
        let name = worker.name();
        let result = worker.clone().run(ctx.clone()).await;
        if ctx.shutdown.is_cancelled() {
            return;
        }
        failures = failures.saturating_add(1);
        let delay = restart_delay(failures);
        match result {
            Ok(()) => tracing::warn!(worker = name, ?delay, "worker returned before shutdown: restarting"),
            Err(error) => tracing::error!(worker = name, %error, ?delay, "worker failed: restarting"),
        }
        tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_back_off_to_thirty_seconds() {
        let delays: Vec<u64> = (1..=8).map(|n| restart_delay(n).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
