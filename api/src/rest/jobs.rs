//! The REST handlers of the job kinds: a manual run of an AdvancedCronJob
//! (`POST /v1/namespaces/{namespace}/advancedcronjobs/{name}/runs`) and the per-node results of
//! a BroadcastJob (`GET /v1/namespaces/{namespace}/broadcastjobs/{name}/nodes`). The rules
//! (scopes, validation, audit) live in the operations; these turn HTTP into a call and back.

use axum::{
    Extension, Json,
    body::Bytes,
    extract::{Path, State, rejection::BytesRejection},
    http::{HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};

use super::{
    AppState,
    handlers::{body_input, fail, idempotency_key},
};
use crate::{
    error::Problem,
    model::{BroadcastJobNodes, CronJobRun, CronJobRunRequest},
    operations::{CreatedRun, Input, RequestContext},
};

/// The answer to a run: 201 with the run, and `Idempotent-Replayed: true` when an earlier
/// request with the same `Idempotency-Key` created it.
fn run_created(created: &CreatedRun) -> Response {
    let mut response = (StatusCode::CREATED, Json(&created.run)).into_response();
    if created.replayed {
        response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    response
}

/// Run an AdvancedCronJob now.
///
/// Creates, at once, the object the AdvancedCronJob's template describes (a Job, a BroadcastJob
/// or an ImageListPullJob), as a scheduled run would be created but named
/// `<advancedcronjob>-manual-<5 characters>` and annotated `cronjob.kubernetes.io/instantiate:
/// manual` (as `kubectl create job --from=cronjob/NAME` does): the AdvancedCronJob owns it, counts
/// it among its active runs and prunes it with its history; its `lastScheduleTime` does not
/// move. A paused AdvancedCronJob can be run. The body (`reason`) is optional. The request is
/// recorded in the audit before the run is created: if the audit store is unavailable the answer
/// is 503 and nothing is created. With `Idempotency-Key`, a retry names the same run and is
/// answered with it (header `Idempotent-Replayed: true`). Needs `job`.
#[utoipa::path(
    post,
    path = "/v1/namespaces/{namespace}/advancedcronjobs/{name}/runs",
    tag = "jobs",
    operation_id = "runAdvancedCronJob",
    params(
        ("namespace" = String, Path, description = "The AdvancedCronJob's namespace"),
        ("name" = String, Path, description = "The AdvancedCronJob"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe: 1-255 visible ASCII characters, scoped to the token, namespace and AdvancedCronJob"),
    ),
    request_body(content = Option<CronJobRunRequest>, content_type = "application/json"),
    responses(
        (status = 201, description = "Recorded; the run is created", body = CronJobRun),
        (status = 400, description = "The body is not JSON", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token may not run jobs in this namespace", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such AdvancedCronJob (or namespace)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The run's name is taken by an object that is not a run of this AdvancedCronJob", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body too large", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid request: invalid name or Idempotency-Key, unknown body field, or a template that cannot be run (none, several, invalid, or refused by Kubernetes) (`errors` names each field)", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was created", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn run_advancedcronjob(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((namespace, name)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let key = idempotency_key(&headers);
    let input: Input<CronJobRunRequest> = body_input(body);
    match state.ops.run_advancedcronjob(&ctx, &namespace, &name, key.as_deref(), input).await {
        Ok(created) => run_created(&created),
        Err(error) => fail(&ctx, error),
    }
}

/// Get a BroadcastJob's result on each node.
///
/// The job's phase and counts (desired, active, succeeded, failed), its conditions, and, per pod
/// it owns, the node, the pod's phase, restarts and each container's state with its exit code
/// and reason, by node (pods not bound to a node yet last). Read live from the job and its pods.
/// Needs `job-read` (or `job`).
#[utoipa::path(
    get,
    path = "/v1/namespaces/{namespace}/broadcastjobs/{name}/nodes",
    tag = "jobs",
    operation_id = "getBroadcastJobNodes",
    params(
        ("namespace" = String, Path, description = "The BroadcastJob's namespace"),
        ("name" = String, Path, description = "The BroadcastJob"),
    ),
    responses(
        (status = 200, description = "The job and its per-node results", body = BroadcastJobNodes),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token may not read jobs in this namespace", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such BroadcastJob in this namespace", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid namespace or name", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn broadcastjob_nodes(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((namespace, name)): Path<(String, String)>,
) -> Response {
    match state.ops.broadcastjob_nodes(&ctx, &namespace, &name).await {
        Ok(nodes) => Json(nodes).into_response(),
        Err(error) => fail(&ctx, error),
    }
}
