//! The REST transport (axum): routes, the request middleware (correlation id, authentication,
//! metrics, one structured log line per request), problem+json errors, the OpenAPI document and
//! Swagger UI. Handlers are thin: they turn HTTP into a [`RequestContext`] and typed input, call
//! one [`Operations`] method and render its result.

mod handlers;
mod jobs;
mod sidecarsets;

use std::{sync::Arc, time::Instant};

use axum::{
    Router,
    extract::{DefaultBodyLimit, MatchedPath, Request, State},
    http::{HeaderName, HeaderValue, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use serde_json::{Map, Value, json};
use utoipa::{
    Modify, OpenApi,
    openapi::{
        ObjectBuilder, OneOfBuilder, Ref, RefOr, Schema, Type,
        security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
    },
};
use utoipa_swagger_ui::SwaggerUi;

use crate::{
    auth::TokenRegistry,
    error::ApiError,
    operations::{Operations, RequestContext, Transport, sanitize},
};

/// The header carrying the correlation id (taken from the request when valid, else generated).
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The operations.
    pub ops: Operations,
    /// The accepted tokens.
    pub tokens: Arc<TokenRegistry>,
}

/// The OpenAPI document of the REST API, generated from the handlers and types.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "kruise-rs service API",
        version = "v1",
        description = "Rollouts, image pre-pulls, container recreates and job runs for CI/CD systems, with an audit \
history (the same operations are served over gRPC, package kruise.api.v1). Every `/v1` request needs `Authorization: Bearer <token>`; errors are `application/problem+json` \
(RFC 9457) with per-field `errors` on 422.",
        license(name = "Apache-2.0")
    ),
    paths(
        handlers::create_rollout,
        handlers::list_rollouts,
        handlers::get_rollout,
        handlers::pause_rollout,
        handlers::resume_rollout,
        handlers::promote_rollout,
        handlers::abort_rollout,
        handlers::rollout_events,
        sidecarsets::create_sidecarset_rollout,
        sidecarsets::list_sidecarset_rollouts,
        sidecarsets::get_sidecarset_rollout,
        sidecarsets::pause_sidecarset_rollout,
        sidecarsets::resume_sidecarset_rollout,
        sidecarsets::promote_sidecarset_rollout,
        sidecarsets::abort_sidecarset_rollout,
        sidecarsets::sidecarset_rollout_events,
        handlers::create_image_pull,
        handlers::get_image_pull,
        handlers::create_recreate,
        handlers::get_recreate,
        jobs::run_advancedcronjob,
        jobs::broadcastjob_nodes,
        handlers::list_audit,
        handlers::healthz,
        handlers::readyz,
        handlers::metrics,
    ),
    components(schemas(
        crate::error::Problem,
        crate::error::FieldError,
        crate::model::RolloutRequest,
        crate::model::SidecarSetRolloutRequest,
        crate::model::Rollout,
        crate::model::RolloutList,
        crate::model::PromoteRequest,
        crate::model::ImagePullRequest,
        crate::model::ImagePull,
        crate::model::RecreateRequest,
        crate::model::Recreate,
        crate::model::CronJobRunRequest,
        crate::model::CronJobRun,
        crate::model::JobKind,
        crate::model::BroadcastJobNodes,
        crate::model::JobNodeResult,
        crate::model::JobContainerResult,
        crate::model::AuditRecord,
        crate::model::AuditList,
        crate::model::Health,
    )),
    modifiers(&BearerAuth, &RolloutEventStream),
    tags(
        (name = "rollouts", description = "Roll a workload to new images or resources, or a SidecarSet's sidecars to new images; follow, pause, resume, promote, abort."),
        (name = "image-pulls", description = "Pull images on nodes ahead of a rollout; follow the per-node results."),
        (name = "recreates", description = "Restart containers of a pod, or of a workload's pods batch by batch; follow the per-pod results."),
        (name = "jobs", description = "Run an AdvancedCronJob now; read a BroadcastJob's result on each node."),
        (name = "audit", description = "Who asked for what, when, and how it ended."),
        (name = "health", description = "Liveness, readiness and metrics (no token needed)."),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A token from the tokens file (`kruise up` writes one to DATA_DIR/api-token).",
                    ))
                    .build(),
            ),
        );
    }
}

/// Describes each server-sent event of `watchRollout` as what it is on the wire: an `event`
/// name and a `data` string holding JSON (a Rollout, or a Problem on an `error` event). In
/// OpenAPI 3.1 the schema of a `text/event-stream` response is the schema of one event, so a
/// plain `Rollout` there claims each event is a rollout object, which no event is.
struct RolloutEventStream;

impl Modify for RolloutEventStream {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let data = ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("The rollout (event `rollout`) or a problem (event `error`), as JSON."))
            .content_media_type("application/json")
            .content_schema(Some(Schema::OneOf(
                OneOfBuilder::new()
                    .item(Ref::from_schema_name("Rollout"))
                    .item(Ref::from_schema_name("Problem"))
                    .build(),
            )));
        let event = ObjectBuilder::new()
            .schema_type(Type::Object)
            .property(
                "event",
                ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["rollout", "error"])),
            )
            .property("data", data)
            .required("event")
            .required("data");
        let event = Schema::Object(event.build());
        for path in
            ["/v1/namespaces/{namespace}/rollouts/{id}/events", "/v1/sidecarsets/{name}/rollouts/{id}/events"]
        {
            let response = openapi
                .paths
                .paths
                .get_mut(path)
                .and_then(|item| item.get.as_mut())
                .and_then(|operation| operation.responses.responses.get_mut("200"));
            if let Some(RefOr::T(response)) = response
                && let Some(RefOr::T(content)) = response.content.get_mut("text/event-stream")
            {
                content.schema = Some(RefOr::T(event.clone()));
            }
        }
    }
}

/// The OpenAPI document as pretty JSON (what `openapi/kruise-api.json` holds).
pub fn openapi_json() -> String {
    ApiDoc::openapi()
        .to_pretty_json()
        .unwrap_or_else(|error| format!("{{\"error\": {:?}}}", error.to_string()))
}

/// The router of the whole REST API.
pub fn router(state: AppState) -> Router {
    let v1 = Router::new()
        .route(
            "/v1/namespaces/{namespace}/rollouts",
            post(handlers::create_rollout).get(handlers::list_rollouts),
        )
        .route("/v1/namespaces/{namespace}/rollouts/{id}", get(handlers::get_rollout))
        .route("/v1/namespaces/{namespace}/rollouts/{id}/pause", post(handlers::pause_rollout))
        .route("/v1/namespaces/{namespace}/rollouts/{id}/resume", post(handlers::resume_rollout))
        .route("/v1/namespaces/{namespace}/rollouts/{id}/promote", post(handlers::promote_rollout))
        .route("/v1/namespaces/{namespace}/rollouts/{id}/abort", post(handlers::abort_rollout))
        .route("/v1/namespaces/{namespace}/rollouts/{id}/events", get(handlers::rollout_events))
        .route(
            "/v1/sidecarsets/{name}/rollouts",
            post(sidecarsets::create_sidecarset_rollout).get(sidecarsets::list_sidecarset_rollouts),
        )
        .route("/v1/sidecarsets/{name}/rollouts/{id}", get(sidecarsets::get_sidecarset_rollout))
        .route("/v1/sidecarsets/{name}/rollouts/{id}/pause", post(sidecarsets::pause_sidecarset_rollout))
        .route("/v1/sidecarsets/{name}/rollouts/{id}/resume", post(sidecarsets::resume_sidecarset_rollout))
        .route("/v1/sidecarsets/{name}/rollouts/{id}/promote", post(sidecarsets::promote_sidecarset_rollout))
        .route("/v1/sidecarsets/{name}/rollouts/{id}/abort", post(sidecarsets::abort_sidecarset_rollout))
        .route("/v1/sidecarsets/{name}/rollouts/{id}/events", get(sidecarsets::sidecarset_rollout_events))
        .route("/v1/namespaces/{namespace}/image-pulls", post(handlers::create_image_pull))
        .route("/v1/namespaces/{namespace}/image-pulls/{id}", get(handlers::get_image_pull))
        .route("/v1/namespaces/{namespace}/recreates", post(handlers::create_recreate))
        .route("/v1/namespaces/{namespace}/recreates/{id}", get(handlers::get_recreate))
        .route("/v1/namespaces/{namespace}/advancedcronjobs/{name}/runs", post(jobs::run_advancedcronjob))
        .route("/v1/namespaces/{namespace}/broadcastjobs/{name}/nodes", get(jobs::broadcastjob_nodes))
        .route("/v1/audit", get(handlers::list_audit))
        .route("/healthz", get(handlers::healthz))
        .route("/readyz", get(handlers::readyz))
        .route("/metrics", get(handlers::metrics))
        .with_state(state.clone());
    let docs: Router = SwaggerUi::new("/docs").url("/openapi.json", ApiDoc::openapi()).into();
    v1.merge(docs)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(state, request_context))
}

async fn not_found(request: Request) -> Response {
    let path = request.uri().path().to_string();
    ApiError::NotFound(format!("no route for {path}")).problem(Some(path), None).into_response()
}

async fn method_not_allowed(request: Request) -> Response {
    let path = request.uri().path().to_string();
    let mut problem = ApiError::BadRequest(format!("{} is not allowed on {path}", request.method()))
        .problem(Some(path), None);
    problem.status = 405;
    problem.title = "Method not allowed".into();
    problem.type_ = "urn:kruise-rs:problem:method-not-allowed".into();
    problem.into_response()
}

/// Builds the [`RequestContext`] (correlation id, identity, the request as recorded), runs the
/// request, then sets `X-Request-Id`, counts it and logs it. The token never leaves this
/// function: only the identity it maps to does.
async fn request_context(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let correlation_id = request
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| (0x21..=0x7e).contains(&b)))
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let identity =
        state.tokens.authenticate(request.headers().get(header::AUTHORIZATION).map(|v| v.as_bytes()));
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let query: Map<String, Value> = request
        .uri()
        .query()
        .map(|q| url_pairs(q).into_iter().map(|(k, v)| (k, Value::String(v))).collect())
        .unwrap_or_default();
    let recorded = json!({"method": method, "path": path, "query": sanitize(&Value::Object(query))});
    let ctx = RequestContext::new(identity, correlation_id.clone(), Transport::Rest, recorded);
    let actor = ctx.identity.actor().to_string();
    request.extensions_mut().insert(ctx);
    let mut response = next.run(request).await;
    if let Ok(value) = HeaderValue::from_str(&correlation_id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    let status = response.status().as_u16();
    let seconds = started.elapsed().as_secs_f64();
    state.ops.metrics().request(&method, &route, status, seconds);
    if route.starts_with("/v1/") || status >= 400 {
        tracing::info!(%method, %route, %path, status, actor, correlation_id, ms = seconds * 1000.0, "request");
    } else {
        tracing::debug!(%method, %route, status, ms = seconds * 1000.0, "request");
    }
    response
}

/// Decodes `a=b&c=d` (percent-decoding, `+` as space).
fn url_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(key), percent_decode(value))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let hex = |byte: u8| (byte as char).to_digit(16).and_then(|d| u8::try_from(d).ok());
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'+', _, _) => out.push(b' '),
            (b'%', Some(high), Some(low)) => {
                out.push(high * 16 + low);
                i += 2;
            }
            (byte, _, _) => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_pairs_are_decoded() {
        assert_eq!(
            url_pairs("actor=ci%2Dbot&since=2024-01-01T00%3A00%3A00%2B00%3A00&x=a+b&bad=%zz&tail=%4"),
            vec![
                ("actor".to_string(), "ci-bot".to_string()),
                ("since".to_string(), "2024-01-01T00:00:00+00:00".to_string()),
                ("x".to_string(), "a b".to_string()),
                ("bad".to_string(), "%zz".to_string()),
                ("tail".to_string(), "%4".to_string()),
            ]
        );
    }
}
