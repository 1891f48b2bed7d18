//! Prometheus metrics of the service API, served as text on `/metrics`: requests by route and
//! status, their latency, audit writes by outcome (and failures), and rollout transitions by
//! state. Routes are the matched path templates (`/v1/namespaces/{namespace}/rollouts/{id}`),
//! so ids never become label values.

use std::sync::Arc;

use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{counter::Counter, family::Family, histogram::Histogram},
    registry::Registry,
};

/// Labels of a request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// HTTP method.
    pub method: String,
    /// The route template.
    pub route: String,
    /// The status code.
    pub status: String,
}

/// Labels of a request's latency.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    /// HTTP method.
    pub method: String,
    /// The route template.
    pub route: String,
}

/// Labels of an audit write.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    /// The recorded outcome.
    pub outcome: String,
}

/// Labels of a rollout transition.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StateLabels {
    /// The state entered.
    pub state: String,
}

/// Every metric of the API.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    requests: Family<RequestLabels, Counter>,
    durations: Family<RouteLabels, Histogram>,
    audit_records: Family<OutcomeLabels, Counter>,
    audit_failures: Counter,
    transitions: Family<StateLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh registry with every metric registered (and the audit series at zero).
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("kruise_api");
        let requests = Family::<RequestLabels, Counter>::default();
        let durations = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(0.0005, 2.0, 16))
        });
        let audit_records = Family::<OutcomeLabels, Counter>::default();
        let audit_failures = Counter::default();
        let transitions = Family::<StateLabels, Counter>::default();
        registry.register("requests", "Requests by method, route and status", requests.clone());
        registry.register("request_duration_seconds", "Time to answer a request", durations.clone());
        registry.register("audit_records", "Audit records written, by outcome", audit_records.clone());
        registry.register(
            "audit_write_failures",
            "Audit writes that failed (the request was refused with 503 or its outcome stayed pending)",
            audit_failures.clone(),
        );
        registry.register(
            "rollout_transitions",
            "Rollout state transitions recorded, by state",
            transitions.clone(),
        );
        for outcome in ["pending", "accepted", "rejected", "denied", "unauthenticated", "failed"] {
            let _ = audit_records.get_or_create(&OutcomeLabels { outcome: outcome.into() });
        }
        Self { registry: Arc::new(registry), requests, durations, audit_records, audit_failures, transitions }
    }

    /// Records one answered request.
    pub fn request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                method: method.into(),
                route: route.into(),
                status: status.to_string(),
            })
            .inc();
        self.durations
            .get_or_create(&RouteLabels { method: method.into(), route: route.into() })
            .observe(seconds);
    }

    /// Counts an audit record written with `outcome`.
    pub fn audit_written(&self, outcome: &str) {
        self.audit_records.get_or_create(&OutcomeLabels { outcome: outcome.into() }).inc();
    }

    /// Counts a failed audit write.
    pub fn audit_failed(&self) {
        self.audit_failures.inc();
    }

    /// Counts a rollout transition into `state`.
    pub fn transition(&self, state: &str) {
        self.transitions.get_or_create(&StateLabels { state: state.into() }).inc();
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
