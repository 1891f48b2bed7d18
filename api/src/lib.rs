//! The kruise-rs service API: what CI/CD systems call to roll workloads out, follow, pause,
//! resume, promote and abort them, to pre-pull images, recreate containers, run an
//! AdvancedCronJob now and read a BroadcastJob's per-node results, and what auditors ask who
//! did what, when, and how it ended.
//!
//! - [`store`]: the audit records, rollouts and their state transitions (PostgreSQL in
//!   production, SQLite for `kruise up`), with embedded migrations.
//! - [`auth`]: bearer tokens (kept hashed) and their scopes (namespaces, actions).
//! - [`operations`]: every operation, transport-neutral: authorization, validation, the audit
//!   record written before the cluster is changed, the change, the answer.
//! - [`workload`]: rollouts on each kind (CloneSet, Advanced StatefulSet, Advanced DaemonSet,
//!   and the cluster-scoped SidecarSet) as pure functions.
//! - [`watcher`]: follows running rollouts and records their state transitions.
//! - [`rest`]: the REST transport (axum), its OpenAPI document and Swagger UI.
//! - [`grpc`]: the gRPC transport (tonic, package `kruise.api.v1`, protos in `api/proto`),
//!   with server reflection.
//! - [`ApiServer`]: all of it started together, as `kruise api` and `kruise up` run it.

pub mod auth;
pub mod error;
pub mod grpc;
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
    /// Where gRPC is served (port 0 picks a free port); `None`: not served.
    pub grpc_addr: Option<SocketAddr>,
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
            grpc_addr: None,
            watch_interval: Duration::from_secs(2),
            watcher: true,
            operations: OperationsConfig::default(),
        }
    }
}

/// A running API: the REST server, the gRPC server (when asked for) and the watcher.
pub struct ApiServer {
    rest_addr: SocketAddr,
    grpc_addr: Option<SocketAddr>,
    ops: Operations,
    stop: Option<oneshot::Sender<()>>,
    stop_grpc: Option<oneshot::Sender<()>>,
    stop_watcher: Option<oneshot::Sender<()>>,
    server: JoinHandle<()>,
    grpc: Option<JoinHandle<()>>,
    watcher: Option<JoinHandle<()>>,
}

impl ApiServer {
    /// Binds the REST (and gRPC) listeners and starts serving, with the watcher alongside.
    pub async fn start(
        client: kube::Client,
        store: Store,
        tokens: TokenRegistry,
        options: ApiOptions,
    ) -> Result<Self, ConfigError> {
        let ops = Operations::new(client, store, metrics::Metrics::new(), options.operations.clone());
        let tokens = Arc::new(tokens);
        let state = rest::AppState { ops: ops.clone(), tokens: tokens.clone() };
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
        let (grpc_addr, stop_grpc, grpc) = match options.grpc_addr {
            Some(addr) => {
                let listener = grpc::bind(addr).await?;
                let bound = listener.local_addr().map_err(|source| ConfigError::Bind { addr, source })?;
                let (tx, rx) = oneshot::channel::<()>();
                let api = grpc::GrpcApi::new(ops.clone(), tokens.clone());
                let task = tokio::spawn(async move {
                    let shutdown = async move {
                        let _ = rx.await;
                    };
                    if let Err(error) = grpc::serve(listener, api, shutdown).await {
                        tracing::error!(%error, "the gRPC server stopped");
                    }
                });
                (Some(bound), Some(tx), Some(task))
            }
            None => (None, None, None),
        };
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
        tracing::info!(%rest_addr, grpc_addr = ?grpc_addr, store = ?ops.store().kind(), "service API listening");
        Ok(Self {
            rest_addr,
            grpc_addr,
            ops,
            stop: Some(stop),
            stop_grpc,
            stop_watcher,
            server,
            grpc,
            watcher,
        })
    }

    /// The bound gRPC address, when gRPC is served.
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.grpc_addr
    }

    /// The gRPC endpoint (`http://127.0.0.1:PORT`), when gRPC is served.
    pub fn grpc_url(&self) -> Option<String> {
        self.grpc_addr.map(|addr| format!("http://{addr}"))
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
        if let Some(stop) = self.stop_grpc.take() {
            let _ = stop.send(());
        }
        if let Some(stop) = self.stop_watcher.take() {
            let _ = stop.send(());
        }
        if tokio::time::timeout(Duration::from_secs(5), &mut self.server).await.is_err() {
            self.server.abort();
        }
        if let Some(mut grpc) = self.grpc.take()
            && tokio::time::timeout(Duration::from_secs(5), &mut grpc).await.is_err()
        {
            grpc.abort();
        }
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.await;
        }
        self.ops.store().close().await;
    }
}
