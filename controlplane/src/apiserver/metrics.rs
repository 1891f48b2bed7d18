//! `/metrics`: the request metrics of kube-apiserver under their names and labels
//! (`apiserver_request_total` and the `apiserver_request_duration_seconds` histogram of
//! `k8s.io/apiserver/pkg/endpoints/metrics`), in Prometheus text form, so that benchmarks and
//! dashboards count the API requests of components from outside the process. Every resource
//! request is observed once, when its response is ready (a watch when it starts streaming).

use std::{collections::BTreeSet, sync::Arc, time::Instant};

use axum::{
    extract::{Request, State},
    http::{HeaderValue, Method, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{counter::Counter, family::Family, histogram::Histogram},
    registry::Registry,
};

use super::request::{self, ResourceRequest, Target, Verb};

/// The latency buckets of kube-apiserver's `apiserver_request_duration_seconds`.
const DURATION_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0,
    20.0, 30.0, 45.0, 60.0,
];

/// The labels of `apiserver_request_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// `GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`, `CONNECT`.
    pub verb: String,
    /// The request's `dryRun` values, sorted ("" when none; `invalid` for values other than `All`).
    pub dry_run: String,
    /// API group ("" for core).
    pub group: String,
    /// Version in the URL.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
    /// Subresource ("" when none).
    pub subresource: String,
    /// `resource` (one object, or a create), `namespace` (a namespace's collection) or `cluster`.
    pub scope: String,
    /// Always `apiserver`.
    pub component: String,
    /// The HTTP status code.
    pub code: String,
}

/// The labels of `apiserver_request_duration_seconds` (those of the counter but the code).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DurationLabels {
    /// See [`RequestLabels::verb`].
    pub verb: String,
    /// See [`RequestLabels::dry_run`].
    pub dry_run: String,
    /// See [`RequestLabels::group`].
    pub group: String,
    /// See [`RequestLabels::version`].
    pub version: String,
    /// See [`RequestLabels::resource`].
    pub resource: String,
    /// See [`RequestLabels::subresource`].
    pub subresource: String,
    /// See [`RequestLabels::scope`].
    pub scope: String,
    /// See [`RequestLabels::component`].
    pub component: String,
}

/// The request metrics of one server.
#[derive(Clone)]
pub struct ApiMetrics {
    registry: Arc<Registry>,
    requests: Family<RequestLabels, Counter>,
    durations: Family<DurationLabels, Histogram>,
}

impl Default for ApiMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl ApiMetrics {
    /// A registry with both metrics, empty.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("apiserver");
        let requests = Family::<RequestLabels, Counter>::default();
        let durations = Family::<DurationLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(DURATION_BUCKETS.iter().copied())
        });
        registry.register(
            "request",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, \
             scope, component, and HTTP response code",
            requests.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version, resource, \
             subresource, scope and component",
            durations.clone(),
        );
        Self { registry: Arc::new(registry), requests, durations }
    }

    /// Records one answered resource request.
    pub fn observe(&self, labels: RequestLabels, seconds: f64) {
        let durations = DurationLabels {
            verb: labels.verb.clone(),
            dry_run: labels.dry_run.clone(),
            group: labels.group.clone(),
            version: labels.version.clone(),
            resource: labels.resource.clone(),
            subresource: labels.subresource.clone(),
            scope: labels.scope.clone(),
            component: labels.component.clone(),
        };
        self.requests.get_or_create(&labels).inc();
        self.durations.get_or_create(&durations).observe(seconds);
    }

    /// Every metric in the Prometheus text form.
    pub fn render(&self) -> String {
        let mut text = String::new();
        if encode(&mut text, &self.registry).is_err() {
            tracing::warn!("could not encode the API server metrics");
        }
        text
    }
}

/// The labels kube-apiserver gives a resource request (pure): `method` and `content_type` of the
/// HTTP request, its `dryRun` query values and the status code of the answer.
pub fn request_labels(
    method: &Method,
    request: &ResourceRequest,
    content_type: &str,
    dry_run: &[String],
    code: u16,
) -> RequestLabels {
    RequestLabels {
        verb: reported_verb(method, request, content_type).to_string(),
        dry_run: dry_run_label(dry_run),
        group: request.group.clone(),
        version: request.version.clone(),
        resource: request.resource.clone(),
        subresource: request.subresource.clone().unwrap_or_default(),
        scope: scope(request).to_string(),
        component: "apiserver".to_string(),
        code: code.to_string(),
    }
}

/// kube-apiserver's reported verb: the HTTP method, with GET of a collection as `LIST`, watches
/// as `WATCH`, server-side apply as `APPLY` and streaming subresources as `CONNECT`.
fn reported_verb(method: &Method, request: &ResourceRequest, content_type: &str) -> &'static str {
    if request
        .subresource
        .as_deref()
        .is_some_and(|s| matches!(s, "log" | "exec" | "portforward" | "attach" | "proxy"))
    {
        return "CONNECT";
    }
    match request.verb {
        Verb::Watch => "WATCH",
        Verb::List => "LIST",
        Verb::Get => "GET",
        Verb::Create => "POST",
        Verb::Update => "PUT",
        Verb::Patch if content_type.starts_with("application/apply-patch+yaml") => "APPLY",
        Verb::Patch => "PATCH",
        Verb::Delete | Verb::DeleteCollection if method == Method::DELETE => "DELETE",
        Verb::Delete | Verb::DeleteCollection => "OTHER",
    }
}

/// `resource` for one object or a create, `namespace` for a collection in a namespace, else
/// `cluster`.
fn scope(request: &ResourceRequest) -> &'static str {
    if request.name.is_some() || request.verb == Verb::Create {
        "resource"
    } else if request.namespace.is_some() {
        "namespace"
    } else {
        "cluster"
    }
}

/// The `dry_run` label: the values deduplicated and sorted, `invalid` unless each is `All`.
fn dry_run_label(values: &[String]) -> String {
    if values.iter().any(|value| value != "All") {
        return "invalid".to_string();
    }
    values.iter().map(String::as_str).collect::<BTreeSet<_>>().into_iter().collect::<Vec<_>>().join(",")
}

/// Middleware: times each resource request and records it once its response is ready.
pub async fn instrument(State(metrics): State<ApiMetrics>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let uri = request.uri().clone();
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let response = next.run(request).await;
    let query: Vec<(String, String)> = uri
        .query()
        .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let watch = query.iter().any(|(key, value)| key == "watch" && (value == "true" || value == "1"));
    if let Ok(Target::Resource(resource)) = request::parse(&method, uri.path(), watch) {
        let dry_run: Vec<String> =
            query.iter().filter(|(key, _)| key == "dryRun").map(|(_, value)| value.clone()).collect();
        let labels = request_labels(&method, &resource, &content_type, &dry_run, response.status().as_u16());
        metrics.observe(labels, started.elapsed().as_secs_f64());
    }
    response
}

/// `GET /metrics`.
pub fn metrics_response(metrics: &ApiMetrics) -> Response {
    let mut response = metrics.render().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        verb: Verb,
        namespace: Option<&str>,
        name: Option<&str>,
        subresource: Option<&str>,
    ) -> ResourceRequest {
        ResourceRequest {
            group: "apps".into(),
            version: "v1".into(),
            resource: "deployments".into(),
            namespace: namespace.map(str::to_string),
            name: name.map(str::to_string),
            subresource: subresource.map(str::to_string),
            verb,
        }
    }

    #[test]
    fn labels_follow_kube_apiserver() {
        let json = "application/json";
        let cases = [
            (Method::GET, request(Verb::List, Some("ns"), None, None), json, "LIST", "namespace"),
            (Method::GET, request(Verb::List, None, None, None), json, "LIST", "cluster"),
            (Method::GET, request(Verb::Watch, None, None, None), json, "WATCH", "cluster"),
            (Method::GET, request(Verb::Get, Some("ns"), Some("d"), None), json, "GET", "resource"),
            (Method::POST, request(Verb::Create, Some("ns"), None, None), json, "POST", "resource"),
            (
                Method::PUT,
                request(Verb::Update, Some("ns"), Some("d"), Some("status")),
                json,
                "PUT",
                "resource",
            ),
            (
                Method::PATCH,
                request(Verb::Patch, Some("ns"), Some("d"), None),
                "application/merge-patch+json",
                "PATCH",
                "resource",
            ),
            (
                Method::PATCH,
                request(Verb::Patch, Some("ns"), Some("d"), None),
                "application/apply-patch+yaml",
                "APPLY",
                "resource",
            ),
            (
                Method::DELETE,
                request(Verb::DeleteCollection, Some("ns"), None, None),
                json,
                "DELETE",
                "namespace",
            ),
            (
                Method::GET,
                request(Verb::Get, Some("ns"), Some("p"), Some("log")),
                json,
                "CONNECT",
                "resource",
            ),
        ];
        for (method, request, content_type, verb, scope) in cases {
            let labels = request_labels(&method, &request, content_type, &[], 200);
            assert_eq!((labels.verb.as_str(), labels.scope.as_str()), (verb, scope), "{request:?}");
            assert_eq!(labels.component, "apiserver");
        }
        let labels = request_labels(
            &Method::POST,
            &request(Verb::Create, Some("ns"), None, None),
            json,
            &["All".into(), "All".into()],
            201,
        );
        assert_eq!((labels.dry_run.as_str(), labels.code.as_str()), ("All", "201"));
        assert_eq!(dry_run_label(&["Some".into()]), "invalid");
        assert_eq!(dry_run_label(&[]), "");
    }

    #[test]
    fn the_text_form_carries_kube_apiserver_names() {
        let metrics = ApiMetrics::new();
        let labels = request_labels(&Method::GET, &request(Verb::List, Some("ns"), None, None), "", &[], 200);
        metrics.observe(labels.clone(), 0.01);
        metrics.observe(labels, 0.3);
        let text = metrics.render();
        assert!(
            text.contains(
                "apiserver_request_total{verb=\"LIST\",dry_run=\"\",group=\"apps\",version=\"v1\",resource=\"deployments\",subresource=\"\",scope=\"namespace\",component=\"apiserver\",code=\"200\"} 2"
            ),
            "{text}"
        );
        assert!(text.contains("apiserver_request_duration_seconds_count{verb=\"LIST\""), "{text}");
        let bucket = text.lines().find(|line| {
            line.starts_with("apiserver_request_duration_seconds_bucket{le=\"0.025\",verb=\"LIST\"")
        });
        assert!(bucket.is_some_and(|line| line.ends_with(" 1")), "one of the two under 25 ms: {text}");
    }
}
