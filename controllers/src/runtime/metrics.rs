//! Prometheus metrics of the manager: reconciles (count, errors, duration) and queue depth per
//! controller, expectation timeouts, and how pods were updated (in place or recreated), served as
//! text on `/metrics`.

use std::sync::{Arc, atomic::AtomicU64};

use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

/// Labels naming a controller.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ControllerLabels {
    /// `cloneset`, ...
    pub controller: String,
}

/// Labels of a reconcile outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    /// The controller.
    pub controller: String,
    /// `success`, `error` or `requeue`.
    pub result: String,
}

/// Labels of a pod update.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpdateLabels {
    /// The controller.
    pub controller: String,
    /// `inplace` or `recreate`.
    pub method: String,
}

/// Every metric the manager exports.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    reconciles: Family<ResultLabels, Counter>,
    errors: Family<ControllerLabels, Counter>,
    durations: Family<ControllerLabels, Histogram>,
    queue_depth: Family<ControllerLabels, Gauge>,
    expectation_timeouts: Family<ControllerLabels, Counter<u64, AtomicU64>>,
    pod_updates: Family<UpdateLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh registry with every metric registered.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("kruise");
        let reconciles = Family::<ResultLabels, Counter>::default();
        let errors = Family::<ControllerLabels, Counter>::default();
        let durations = Family::<ControllerLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(0.0005, 2.0, 16))
        });
        let queue_depth = Family::<ControllerLabels, Gauge>::default();
        let expectation_timeouts = Family::<ControllerLabels, Counter<u64, AtomicU64>>::default();
        let pod_updates = Family::<UpdateLabels, Counter>::default();
        registry.register("controller_reconcile", "Reconciles by controller and result", reconciles.clone());
        registry.register("controller_reconcile_errors", "Reconciles that failed", errors.clone());
        registry.register(
            "controller_reconcile_duration_seconds",
            "Time spent in one reconcile",
            durations.clone(),
        );
        registry.register("controller_queue_depth", "Objects waiting to be reconciled", queue_depth.clone());
        registry.register(
            "controller_expectation_timeouts",
            "Creates or deletes the cache never showed within the timeout",
            expectation_timeouts.clone(),
        );
        registry.register(
            "pod_updates",
            "Pods updated, by method (inplace or recreate)",
            pod_updates.clone(),
        );
        Self {
            registry: Arc::new(registry),
            reconciles,
            errors,
            durations,
            queue_depth,
            expectation_timeouts,
            pod_updates,
        }
    }

    fn labels(controller: &str) -> ControllerLabels {
        ControllerLabels { controller: controller.to_string() }
    }

    /// Creates every series of `controller` at zero, so that dashboards and alerts see the
    /// series (0 errors, 0 timeouts) before the first event instead of no data.
    pub fn init_controller(&self, controller: &str) {
        for result in ["success", "requeue", "error"] {
            let _ = self
                .reconciles
                .get_or_create(&ResultLabels { controller: controller.into(), result: result.into() });
        }
        let _ = self.errors.get_or_create(&Self::labels(controller));
        let _ = self.expectation_timeouts.get_or_create(&Self::labels(controller));
        let _ = self.queue_depth.get_or_create(&Self::labels(controller));
        let _ = self.durations.get_or_create(&Self::labels(controller));
        for method in ["inplace", "recreate"] {
            let _ = self
                .pod_updates
                .get_or_create(&UpdateLabels { controller: controller.into(), method: method.into() });
        }
    }

    /// Records one reconcile.
    pub fn reconciled(&self, controller: &str, result: &str, seconds: f64) {
        self.reconciles
            .get_or_create(&ResultLabels { controller: controller.into(), result: result.into() })
            .inc();
        if result == "error" {
            self.errors.get_or_create(&Self::labels(controller)).inc();
        }
        self.durations.get_or_create(&Self::labels(controller)).observe(seconds);
    }

    /// Sets the number of objects waiting.
    pub fn set_queue_depth(&self, controller: &str, depth: i64) {
        self.queue_depth.get_or_create(&Self::labels(controller)).set(depth);
    }

    /// Counts expectations that timed out.
    pub fn expectation_timeouts(&self, controller: &str, count: u64) {
        if count > 0 {
            self.expectation_timeouts.get_or_create(&Self::labels(controller)).inc_by(count);
        }
    }

    /// Counts a pod updated in place or by recreation.
    pub fn pod_updated(&self, controller: &str, in_place: bool) {
        let method = if in_place { "inplace" } else { "recreate" };
        self.pod_updates
            .get_or_create(&UpdateLabels { controller: controller.into(), method: method.into() })
            .inc();
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
    fn metrics_render_with_labels() {
        let metrics = Metrics::new();
        metrics.reconciled("cloneset", "success", 0.01);
        metrics.reconciled("cloneset", "error", 0.02);
        metrics.pod_updated("cloneset", true);
        metrics.pod_updated("cloneset", false);
        metrics.set_queue_depth("cloneset", 3);
        metrics.expectation_timeouts("cloneset", 2);
        let text = metrics.render();
        assert!(
            text.contains("kruise_controller_reconcile_total{controller=\"cloneset\",result=\"success\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("kruise_controller_reconcile_errors_total{controller=\"cloneset\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("kruise_pod_updates_total{controller=\"cloneset\",method=\"inplace\"} 1"),
            "{text}"
        );
        assert!(text.contains("kruise_controller_queue_depth{controller=\"cloneset\"} 3"), "{text}");
        assert!(
            text.contains("kruise_controller_expectation_timeouts_total{controller=\"cloneset\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("kruise_controller_reconcile_duration_seconds_count{controller=\"cloneset\"} 2"),
            "{text}"
        );
    }
}
