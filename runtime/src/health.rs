//! The plain-HTTP endpoint every kruise process serves: `/healthz` (the process is alive),
//! `/readyz` (every readiness check passed; the body names what is missing) and `/metrics`.
//!
//! The manager and the daemon register different checks (caches synced, webhook certificate
//! loaded; the container runtime answers) and keep their metrics in their own registries, so the
//! endpoint takes the checks as [`Readiness`] and the metrics as a rendering closure.

use std::{
    collections::BTreeMap,
    future::Future,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use axum::{
    Router,
    extract::State,
    http::{StatusCode, header},
    response::IntoResponse,
    routing::get,
};
use parking_lot::Mutex;
use tokio::{net::TcpListener, task::JoinHandle};

use crate::RuntimeError;

/// The content type of the OpenMetrics text exposition `/metrics` serves.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Named readiness checks; the process is ready when every registered check passes.
#[derive(Clone, Default)]
pub struct Readiness {
    checks: Arc<Mutex<BTreeMap<String, Arc<AtomicBool>>>>,
}

impl Readiness {
    /// No checks (ready).
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a check, not yet passing; store `true` in the returned flag while it passes.
    pub fn check(&self, name: &str) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        self.checks.lock().insert(name.to_string(), flag.clone());
        flag
    }

    /// Removes a check (its component does not run in this configuration).
    pub fn forget(&self, name: &str) {
        self.checks.lock().remove(name);
    }

    /// Names of the checks not passing now, in name order.
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

/// Renders the metrics in the OpenMetrics text format.
type RenderMetrics = Arc<dyn Fn() -> String + Send + Sync>;

#[derive(Clone)]
struct HealthState {
    readiness: Readiness,
    metrics: RenderMetrics,
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
    (StatusCode::OK, [(header::CONTENT_TYPE, OPENMETRICS)], (state.metrics)())
}

/// Binds `addr` and serves the endpoint until `shutdown` completes; returns the bound address
/// (`addr` may ask for port 0) and the serving task. `render_metrics` produces the `/metrics`
/// body (the process's registry in the OpenMetrics text format) on each scrape.
pub async fn serve(
    addr: SocketAddr,
    readiness: Readiness,
    render_metrics: impl Fn() -> String + Send + Sync + 'static,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(SocketAddr, JoinHandle<()>), RuntimeError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| RuntimeError::Io { what: format!("binding the health endpoint {addr}"), source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| RuntimeError::Io { what: "reading the health endpoint address".into(), source })?;
    let router = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(HealthState { readiness, metrics: Arc::new(render_metrics) });
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).with_graceful_shutdown(shutdown).await {
            tracing::error!(%error, "health endpoint stopped");
        }
    });
    Ok((bound, task))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use tokio::{
        io::{AsyncReadExt, AsyncWriteExt},
        net::TcpStream,
        sync::oneshot,
    };

    use super::*;

    #[test]
    fn ready_while_every_check_passes() {
        let readiness = Readiness::new();
        assert!(readiness.is_ready());
        let cri = readiness.check("cri");
        let caches = readiness.check("caches");
        assert_eq!(readiness.failing(), ["caches", "cri"]);
        cri.store(true, Ordering::SeqCst);
        caches.store(true, Ordering::SeqCst);
        assert!(readiness.is_ready());
        cri.store(false, Ordering::SeqCst);
        assert_eq!(readiness.failing(), ["cri"]);
    }

    #[test]
    fn a_forgotten_check_no_longer_counts() {
        let readiness = Readiness::new();
        let _certs = readiness.check("webhook-certs");
        assert!(!readiness.is_ready());
        readiness.forget("webhook-certs");
        assert!(readiness.is_ready());
    }

    /// Sends a plain HTTP/1.0 GET and returns the whole response.
    async fn get(addr: SocketAddr, path: &str) -> String {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(format!("GET {path} HTTP/1.0\r\nHost: test\r\n\r\n").as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    }

    #[tokio::test]
    async fn serves_health_readiness_and_metrics_until_shutdown() {
        let readiness = Readiness::new();
        let caches = readiness.check("caches");
        let (stop, stopped) = oneshot::channel::<()>();
        let (addr, task) =
            serve("127.0.0.1:0".parse().unwrap(), readiness, || "# EOF\n".to_string(), async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        assert_ne!(addr.port(), 0, "the bound port is reported");

        let healthz = get(addr, "/healthz").await;
        assert!(healthz.starts_with("HTTP/1.0 200"), "{healthz}");
        let not_ready = get(addr, "/readyz").await;
        assert!(not_ready.starts_with("HTTP/1.0 503"), "{not_ready}");
        assert!(not_ready.ends_with("not ready: caches"), "{not_ready}");
        caches.store(true, Ordering::SeqCst);
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.0 200"));
        let metrics = get(addr, "/metrics").await;
        assert!(metrics.contains(OPENMETRICS) && metrics.ends_with("# EOF\n"), "{metrics}");

        stop.send(()).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), task).await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_taken_address_is_an_error() {
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = taken.local_addr().unwrap();
        let error = serve(addr, Readiness::new(), String::new, async {}).await.unwrap_err();
        assert!(error.to_string().starts_with(&format!("binding the health endpoint {addr}")), "{error}");
    }
}
