//! Prometheus metrics of one daemon, served on `/metrics`: whether the runtime answers, CRI
//! errors by method, image pull attempts and outcomes, pull workers busy, NodeImage status
//! writes (written, rate limited, failed), containers stopped for ContainerRecreateRequests
//! and the requests finished, and container meta reports written and env-from-metadata
//! restarts. Each daemon has its own registry, so several daemons
//! in one process (`kruise up`) report separately.

use std::sync::Arc;

use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

/// A `method` label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct MethodLabels {
    /// gRPC method (`PullImage`, ...).
    pub method: String,
}

/// A `result` label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    /// `succeeded`, `failed`, `written`, `limited`, `error`, ...
    pub result: String,
}

/// Every metric of a daemon.
#[derive(Clone)]
pub struct DaemonMetrics {
    registry: Arc<Registry>,
    cri_up: Gauge,
    cri_errors: Family<MethodLabels, Counter>,
    pull_attempts: Family<ResultLabels, Counter>,
    pulls: Family<ResultLabels, Counter>,
    pull_duration: Histogram,
    pull_workers_busy: Gauge,
    status_updates: Family<ResultLabels, Counter>,
    container_stops: Family<ResultLabels, Counter>,
    recreate_requests: Family<ResultLabels, Counter>,
    meta_reports: Family<ResultLabels, Counter>,
    meta_restarts: Family<ResultLabels, Counter>,
}

impl Default for DaemonMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl DaemonMetrics {
    /// A fresh registry with every series created at zero (dashboards see 0, not no data).
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("kruise_daemon");
        let cri_up = Gauge::default();
        let cri_errors = Family::<MethodLabels, Counter>::default();
        let pull_attempts = Family::<ResultLabels, Counter>::default();
        let pulls = Family::<ResultLabels, Counter>::default();
        let pull_duration =
            Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(0.01, 2.0, 16));
        let pull_workers_busy = Gauge::default();
        let status_updates = Family::<ResultLabels, Counter>::default();
        let container_stops = Family::<ResultLabels, Counter>::default();
        let recreate_requests = Family::<ResultLabels, Counter>::default();
        let meta_reports = Family::<ResultLabels, Counter>::default();
        let meta_restarts = Family::<ResultLabels, Counter>::default();
        registry.register("cri_up", "1 when the container runtime answers, else 0", cri_up.clone());
        registry.register("cri_errors", "Failed CRI calls by method", cri_errors.clone());
        registry.register(
            "image_pull_attempts",
            "CRI PullImage attempts by outcome (retries included)",
            pull_attempts.clone(),
        );
        registry.register("image_pulls", "Image tags pulled to the end, by outcome", pulls.clone());
        registry.register(
            "image_pull_duration_seconds",
            "Time from the start of a tag's pull to its outcome",
            pull_duration.clone(),
        );
        registry.register(
            "image_pull_workers_busy",
            "Pull workers holding a pull slot",
            pull_workers_busy.clone(),
        );
        registry.register(
            "nodeimage_status_updates",
            "NodeImage status writes by outcome (written, limited, conflict, error)",
            status_updates.clone(),
        );
        registry.register(
            "crr_container_stops",
            "Containers stopped (preStop hook, then CRI StopContainer) for ContainerRecreateRequests, by outcome",
            container_stops.clone(),
        );
        registry.register(
            "crr_completed",
            "ContainerRecreateRequests this daemon completed, by outcome (succeeded, failed)",
            recreate_requests.clone(),
        );
        registry.register(
            "containermeta_reports",
            "apps.kruise.io/runtime-containers-meta annotations written, by outcome (written, failed)",
            meta_reports.clone(),
        );
        registry.register(
            "containermeta_restarts",
            "Containers restarted because their env from labels/annotations was stale during an in-place update, by outcome",
            meta_restarts.clone(),
        );
        let metrics = Self {
            registry: Arc::new(registry),
            cri_up,
            cri_errors,
            pull_attempts,
            pulls,
            pull_duration,
            pull_workers_busy,
            status_updates,
            container_stops,
            recreate_requests,
            meta_reports,
            meta_restarts,
        };
        for result in ["succeeded", "failed"] {
            let _ = metrics.pull_attempts.get_or_create(&ResultLabels { result: result.into() });
            let _ = metrics.pulls.get_or_create(&ResultLabels { result: result.into() });
            let _ = metrics.container_stops.get_or_create(&ResultLabels { result: result.into() });
            let _ = metrics.recreate_requests.get_or_create(&ResultLabels { result: result.into() });
            let _ = metrics.meta_restarts.get_or_create(&ResultLabels { result: result.into() });
        }
        for result in ["written", "failed"] {
            let _ = metrics.meta_reports.get_or_create(&ResultLabels { result: result.into() });
        }
        for result in ["written", "limited", "conflict", "error"] {
            let _ = metrics.status_updates.get_or_create(&ResultLabels { result: result.into() });
        }
        metrics
    }

    /// Records whether the runtime answers.
    pub fn set_cri_up(&self, up: bool) {
        self.cri_up.set(i64::from(up));
    }

    /// Counts a failed CRI call.
    pub fn cri_error(&self, method: &str) {
        self.cri_errors.get_or_create(&MethodLabels { method: method.into() }).inc();
    }

    /// Counts one PullImage attempt.
    pub fn pull_attempt(&self, succeeded: bool) {
        let result = if succeeded { "succeeded" } else { "failed" };
        self.pull_attempts.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    /// Records a tag's final outcome and how long it took.
    pub fn pull_finished(&self, succeeded: bool, seconds: f64) {
        let result = if succeeded { "succeeded" } else { "failed" };
        self.pulls.get_or_create(&ResultLabels { result: result.into() }).inc();
        self.pull_duration.observe(seconds);
    }

    /// A worker took (+1) or released (-1) a pull slot.
    pub fn pull_workers_busy(&self, delta: i64) {
        self.pull_workers_busy.inc_by(delta);
    }

    /// Counts a NodeImage status write by outcome.
    pub fn status_update(&self, result: &str) {
        self.status_updates.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    /// Counts a container stopped (or not) for a ContainerRecreateRequest.
    pub fn container_stop(&self, succeeded: bool) {
        let result = if succeeded { "succeeded" } else { "failed" };
        self.container_stops.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    /// Counts a ContainerRecreateRequest completed by this daemon.
    pub fn recreate_completed(&self, succeeded: bool) {
        let result = if succeeded { "succeeded" } else { "failed" };
        self.recreate_requests.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    /// Counts a container meta report written (or not).
    pub fn container_meta_report(&self, written: bool) {
        let result = if written { "written" } else { "failed" };
        self.meta_reports.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    /// Counts a container restarted (or not) for stale env from metadata.
    pub fn container_meta_restart(&self, succeeded: bool) {
        let result = if succeeded { "succeeded" } else { "failed" };
        self.meta_restarts.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    /// The number of containers restarted for stale env from metadata with this outcome so far.
    pub fn container_meta_restarts(&self, succeeded: bool) -> u64 {
        let result = if succeeded { "succeeded" } else { "failed" };
        self.meta_restarts.get_or_create(&ResultLabels { result: result.into() }).get()
    }

    /// The number of container meta reports written so far.
    pub fn container_meta_reports(&self) -> u64 {
        self.meta_reports.get_or_create(&ResultLabels { result: "written".into() }).get()
    }

    /// The number of containers stopped with this outcome so far.
    pub fn container_stops(&self, succeeded: bool) -> u64 {
        let result = if succeeded { "succeeded" } else { "failed" };
        self.container_stops.get_or_create(&ResultLabels { result: result.into() }).get()
    }

    /// The number of PullImage attempts with this outcome so far.
    pub fn pull_attempts(&self, succeeded: bool) -> u64 {
        let result = if succeeded { "succeeded" } else { "failed" };
        self.pull_attempts.get_or_create(&ResultLabels { result: result.into() }).get()
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut text = String::new();
        if let Err(error) = encode(&mut text, &self.registry) {
            tracing::warn!(%error, "could not encode metrics");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_render_with_zero_series() {
        let metrics = DaemonMetrics::new();
        let text = metrics.render();
        assert!(text.contains("kruise_daemon_image_pulls_total{result=\"failed\"} 0"), "{text}");
        metrics.set_cri_up(true);
        metrics.cri_error("PullImage");
        metrics.pull_attempt(false);
        metrics.pull_attempt(false);
        metrics.pull_finished(false, 1.5);
        metrics.status_update("written");
        let text = metrics.render();
        assert!(text.contains("kruise_daemon_cri_up 1"), "{text}");
        assert!(text.contains("kruise_daemon_cri_errors_total{method=\"PullImage\"} 1"), "{text}");
        assert!(text.contains("kruise_daemon_image_pull_attempts_total{result=\"failed\"} 2"), "{text}");
        assert!(
            text.contains("kruise_daemon_nodeimage_status_updates_total{result=\"written\"} 1"),
            "{text}"
        );
        assert_eq!(metrics.pull_attempts(false), 2);
    }
}
