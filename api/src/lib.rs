//! The kruise-rs service API: what CI/CD systems call to roll workloads out, follow, pause,
//! resume, promote and abort them, and what auditors ask who did what, when, and how it ended.
//!
//! - [`store`]: the audit records, rollouts and their state transitions (PostgreSQL in
//!   production, SQLite for `kruise up`), with embedded migrations.
//! - [`auth`]: bearer tokens (kept hashed) and their scopes (namespaces, actions).
//! - [`operations`]: every operation, transport-neutral: authorization, validation, the audit
//!   record written before the cluster is changed, the change, the answer.
//! - [`workload`]: rollouts on each workload kind as pure functions (CloneSet today).
//! - [`watcher`]: follows running rollouts and records their state transitions.
//! - [`rest`]: the REST transport (axum), its OpenAPI document and Swagger UI.
//! - [`ApiServer`]: all of it started together, as `kruise api` and `kruise up` run it.

pub mod auth;
pub mod error;
pub mod metrics;
pub mod model;
pub mod operations;
pub mod rest;
pub mod store;
pub mod watcher;
pub mod workload;

use std::{net::SocketAddr, sync::Arc, time::Duration};

use tokio::{sync::oneshot, task::JoinHandle};

pub use auth::TokenRegistry;
pub use error::{ApiError, ConfigError, Problem};
pub use operations::{Operations, OperationsConfig};
pub use store::Store;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ApiOptions {
    /// Where REST is served (port 0 picks a free port).
    pub rest_addr: SocketAddr,
    /// How often the watcher re-checks running rollouts besides reacting to watch events.
    pub watch_interval: Duration,
    /// Whether this replica runs the rollout watcher.
    pub watcher: bool,
    /// Tunables of the operations.
    pub operations: OperationsConfig,
}

impl Default for ApiOptions {
    fn default() -> Self {
        Self {
            rest_addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            watch_interval: Duration::from_secs(2),
            watcher: true,
            operations: OperationsConfig::default(),
        }
    }
}

/// A running API: the REST server and the rollout watcher.
pub struct ApiServer {
    rest_addr: SocketAddr,
    ops: Operations,
    stop: Option<oneshot::Sender<()>>,
    stop_watcher: Option<oneshot::Sender<()>>,
    server: JoinHandle<()>,
    watcher: Option<JoinHandle<()>>,
}

impl ApiServer {
    /// Binds the REST listener and starts serving, with the rollout watcher alongside.
    pub async fn start(
        client: kube::Client,
        store: Store,
        tokens: TokenRegistry,
        options: ApiOptions,
    ) -> Result<Self, ConfigError> {
        let ops = Operations::new(client, store, metrics::Metrics::new(), options.operations.clone());
        let state = rest::AppState { ops: ops.clone(), tokens: Arc::new(tokens) };
        let listener = tokio::net::TcpListener::bind(options.rest_addr)
            .await
            .map_err(|source| ConfigError::Bind { addr: options.rest_addr, source })?;
        let rest_addr =
            listener.local_addr().map_err(|source| ConfigError::Bind { addr: options.rest_addr, source })?;
        let (stop, stopped) = oneshot::channel::<()>();
        let app = rest::router(state);
        let server = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            if let Err(error) = axum::serve(listener, app).with_graceful_shutdown(shutdown).await {
                tracing::error!(%error, "the REST server stopped");
            }
        });
        let (stop_watcher, watcher) = if options.watcher {
            let (tx, rx) = oneshot::channel::<()>();
            let ops = ops.clone();
            let interval = options.watch_interval;
            let task = tokio::spawn(async move {
                watcher::run(ops, interval, async move {
                    let _ = rx.await;
                })
                .await;
            });
            (Some(tx), Some(task))
        } else {
            (None, None)
        };
        tracing::info!(%rest_addr, store = ?ops.store().kind(), "service API listening");
        Ok(Self { rest_addr, ops, stop: Some(stop), stop_watcher, server, watcher })
    }

    /// The bound REST address.
    pub fn rest_addr(&self) -> SocketAddr {
        self.rest_addr
    }

    /// The REST base URL (`http://127.0.0.1:PORT`).
    pub fn rest_url(&self) -> String {
        format!("http://{}", self.rest_addr)
    }

    /// The operations (for embedding and tests).
    pub fn operations(&self) -> &Operations {
        &self.ops
    }

    /// Stops serving: new connections are refused, requests in flight get up to 5 s (event
    /// streams are cut), the watcher stops, the store is closed.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(stop) = self.stop_watcher.take() {
            let _ = stop.send(());
        }
        if tokio::time::timeout(Duration::from_secs(5), &mut self.server).await.is_err() {
            self.server.abort();
        }
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.await;
        }
        self.ops.store().close().await;
    }
}
