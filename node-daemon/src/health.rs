//! The daemon's plain-HTTP endpoint (upstream `--addr`, `:10221`): `/healthz` (the process is
//! alive), `/readyz` (every readiness check passed: the runtime answers, each worker's cache is
//! synced; the body names what is missing) and `/metrics`.

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use axum::{Router, extract::State, http::StatusCode, response::IntoResponse, routing::get};
use parking_lot::Mutex;
use tokio::net::TcpListener;

use crate::{error::DaemonError, metrics::DaemonMetrics};

/// Named readiness checks; the daemon is ready when every registered check passes.
#[derive(Clone, Default)]
pub struct Readiness {
    checks: Arc<Mutex<BTreeMap<String, Arc<AtomicBool>>>>,
}

impl Readiness {
    /// No checks (ready).
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a check, not yet passing; store `true` in the flag while it passes.
    pub fn check(&self, name: &str) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        self.checks.lock().insert(name.to_string(), flag.clone());
        flag
    }

    /// Names of the checks not passing now.
    pub fn failing(&self) -> Vec<String> {
        self.checks
            .lock()
            .iter()
            .filter(|(_, flag)| !flag.load(Ordering::SeqCst))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Whether every check passes.
    pub fn is_ready(&self) -> bool {
        self.failing().is_empty()
    }
}

#[derive(Clone)]
struct HealthState {
    readiness: Readiness,
    metrics: DaemonMetrics,
}

async fn healthz() -> impl IntoResponse {
    (StatusCode::OK, "ok")
}

async fn readyz(State(state): State<HealthState>) -> impl IntoResponse {
    let failing = state.readiness.failing();
    if failing.is_empty() {
        (StatusCode::OK, "ok".to_string())
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {}", failing.join(", ")))
    }
}

async fn metrics(State(state): State<HealthState>) -> impl IntoResponse {
    (
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
        state.metrics.render(),
    )
}

/// Binds `addr` and serves until `shutdown`; returns the bound address and the serving task.
pub async fn serve(
    addr: SocketAddr,
    readiness: Readiness,
    metrics_registry: DaemonMetrics,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), DaemonError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| DaemonError::Io { what: format!("binding the health endpoint {addr}"), source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| DaemonError::Io { what: "reading the health endpoint address".into(), source })?;
    let router = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(HealthState { readiness, metrics: metrics_registry });
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).with_graceful_shutdown(shutdown).await {
            tracing::error!(%error, "health endpoint stopped");
        }
    });
    Ok((bound, task))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_while_every_check_passes() {
        let readiness = Readiness::new();
        assert!(readiness.is_ready());
        let cri = readiness.check("cri");
        let synced = readiness.check("imagepuller");
        assert_eq!(readiness.failing(), ["cri", "imagepuller"]);
        cri.store(true, Ordering::SeqCst);
        synced.store(true, Ordering::SeqCst);
        assert!(readiness.is_ready());
        cri.store(false, Ordering::SeqCst);
        assert_eq!(readiness.failing(), ["cri"]);
    }
}
