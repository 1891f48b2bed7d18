//! The manager runtime: runs the controllers while this replica holds the leader lease, serves
//! `/healthz`, `/readyz` and `/metrics`, and stops cleanly (releasing the lease) on shutdown.
//! The webhook server runs on every replica, outside leader election.

pub mod cache;
pub mod events;
pub mod expectations;
pub mod harness;
pub mod leader;
pub mod metrics;
pub mod owner_index;
pub mod queue;
pub mod workload;
pub mod workqueue;

use std::{future::Future, net::SocketAddr, pin::Pin, sync::Arc};

use kube::Client;
use tokio::sync::watch;
use tokio_util::task::AbortOnDropHandle;

pub use kruise_runtime::health::Readiness;
pub use leader::LeaderElectionConfig;
pub use metrics::Metrics;

/// A controller's main loop; it runs until the future is dropped (leadership lost or shutdown).
pub type ControllerTask = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Starts a controller for the current leadership term, reading the term's shared caches.
pub type ControllerStarter = Arc<dyn Fn(cache::Caches) -> ControllerTask + Send + Sync>;

/// How the manager runs.
#[derive(Clone, Debug)]
pub struct ManagerConfig {
    /// Where `/healthz`, `/readyz` and `/metrics` are served.
    pub health_addr: SocketAddr,
    /// Leader election, or None to lead unconditionally (a single replica, `kruise up`).
    pub leader_election: Option<LeaderElectionConfig>,
}

/// A running manager.
pub struct Manager {
    client: Client,
    config: ManagerConfig,
    metrics: Metrics,
    readiness: Readiness,
}

impl Manager {
    /// A manager for `client`.
    pub fn new(client: Client, config: ManagerConfig) -> Self {
        Self { client, config, metrics: Metrics::new(), readiness: Readiness::new() }
    }

    /// The metrics controllers record into.
    pub fn metrics(&self) -> Metrics {
        self.metrics.clone()
    }

    /// The readiness checks (caches synced, webhook certificate loaded...).
    pub fn readiness(&self) -> Readiness {
        self.readiness.clone()
    }

    /// Runs until `shutdown` completes: health endpoints always, controllers while leading.
    /// `on_bound` receives the health endpoint's address once bound.
    pub async fn run(
        self,
        controllers: Vec<ControllerStarter>,
        shutdown: impl Future<Output = ()> + Send + 'static,
        on_bound: impl FnOnce(SocketAddr),
    ) -> Result<(), crate::ControllerError> {
        let (stop_tx, stop_rx) = watch::channel(false);
        let health_stop = {
            let mut stop_rx = stop_rx.clone();
            async move {
                let _ = stop_rx.wait_for(|stop| *stop).await;
            }
        };
        // Every task below is aborted when this future is dropped (a caller that aborts the
        // manager must not leave controllers or the election running behind its back).
        let metrics = self.metrics.clone();
        let (bound, health_task) = kruise_runtime::health::serve(
            self.config.health_addr,
            self.readiness.clone(),
            move || metrics.render(),
            health_stop,
        )
        .await?;
        let health_task = AbortOnDropHandle::new(health_task);
        on_bound(bound);

        let (leading_tx, mut leading_rx) = watch::channel(self.config.leader_election.is_none());
        // Without election the sender stays here, so `leading` stays true for the whole run.
        let (election, _always_leading) = match self.config.leader_election.clone() {
            Some(config) => (
                Some(AbortOnDropHandle::new(tokio::spawn(leader::run(
                    self.client.clone(),
                    config,
                    leading_tx,
                )))),
                None,
            ),
            None => (None, Some(leading_tx)),
        };

        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            // Follow until we lead (or are told to stop).
            tokio::select! {
                _ = &mut shutdown => break,
                result = leading_rx.wait_for(|leading| *leading) => if result.is_err() { break },
            }
            tracing::info!(controllers = controllers.len(), "leading: starting controllers");
            // One cache per kind for the whole term, shared by every controller.
            let caches = cache::Caches::new(self.client.clone());
            let tasks: Vec<_> = controllers
                .iter()
                .map(|start| AbortOnDropHandle::new(tokio::spawn(start(caches.clone()))))
                .collect();
            let stop = tokio::select! {
                _ = &mut shutdown => true,
                result = leading_rx.wait_for(|leading| !*leading) => {
                    if result.is_err() {
                        tracing::error!("leader election ended: stopping controllers");
                    }
                    result.is_err()
                }
            };
            for task in &tasks {
                task.abort();
            }
            for task in tasks {
                let _ = task.await;
            }
            drop(caches);
            if stop {
                break;
            }
            tracing::warn!("no longer leading: controllers stopped");
        }
        if let Some(election) = election {
            election.abort();
            let _ = election.await;
        }
        if let Some(config) = &self.config.leader_election {
            leader::release(&self.client, config).await;
        }
        let _ = stop_tx.send(true);
        let _ = health_task.await;
        tracing::info!("manager stopped");
        Ok(())
    }
}
