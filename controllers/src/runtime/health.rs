//! The manager's plain-HTTP endpoints: `/healthz` (the process is alive), `/readyz` (every
//! readiness check passed: caches synced, webhook certificate loaded) and `/metrics`.

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

use super::metrics::Metrics;
use crate::ControllerError;

/// Named readiness checks; the manager is ready when every registered check passed.
#[derive(Clone, Default)]
pub struct Readiness {
    checks: Arc<Mutex<BTreeMap<String, Arc<AtomicBool>>>>,
}

impl Readiness {
    /// No checks (ready).
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a check, not yet passed; set the returned flag when it passes.
    pub fn check(&self, name: &str) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        self.checks.lock().insert(name.to_string(), flag.clone());
        flag
    }

    /// Removes a check (its component does not run in this configuration).
    pub fn forget(&self, name: &str) {
        self.checks.lock().remove(name);
    }

    /// Names of the checks not passed yet.
    pub fn failing(&self) -> Vec<String> {
        self.checks
            .lock()
            .iter()
            .filter(|(_, flag)| !flag.load(Ordering::SeqCst))
            .map(|(name, _)| name.clone())
            .collect()
    }
}

#[derive(Clone)]
struct HealthState {
    readiness: Readiness,
    metrics: Metrics,
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

/// Binds the endpoints; returns the bound address and the serving future.
pub async fn serve(
    addr: SocketAddr,
    readiness: Readiness,
    metrics_registry: Metrics,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), ControllerError> {
    let listener = TcpListener::bind(addr).await.map_err(|source| ControllerError::Io {
        what: format!("binding the health endpoint {addr}"),
        source,
    })?;
    let bound = listener.local_addr().map_err(|source| ControllerError::Io {
        what: "reading the health endpoint address".into(),
        source,
    })?;
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
    fn ready_once_every_check_passed() {
        let readiness = Readiness::new();
        assert!(readiness.failing().is_empty());
        let caches = readiness.check("caches");
        let certs = readiness.check("webhook-certs");
        assert_eq!(readiness.failing(), ["caches", "webhook-certs"]);
        caches.store(true, Ordering::SeqCst);
        certs.store(true, Ordering::SeqCst);
        assert!(readiness.failing().is_empty());
    }
}
