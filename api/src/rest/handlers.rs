//! The REST handlers: HTTP in, one [`Operations`](crate::operations::Operations) call, HTTP out.

use std::{collections::BTreeMap, convert::Infallible, time::Duration};

use axum::{
    Extension, Json,
    body::Bytes,
    extract::{Path, Query, State, rejection::BytesRejection, rejection::QueryRejection},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
};
use futures::StreamExt;
use serde_json::Value;

use super::AppState;
use crate::{
    error::{ApiError, Problem},
    model::{
        AuditList, AuditListParams, Health, ImagePull, ImagePullRequest, PromoteRequest, Recreate,
        RecreateRequest, Rollout, RolloutList, RolloutListParams, RolloutRequest,
    },
    operations::{CreatedRollout, Input, RequestContext, RolloutAction, RolloutScope},
};

/// The problem response for an error, naming the request path and correlation id.
pub(super) fn fail(ctx: &RequestContext, error: ApiError) -> Response {
    let path = ctx.request.get("path").and_then(Value::as_str).map(str::to_string);
    error.problem(path, Some(ctx.correlation_id.clone())).into_response()
}

pub(super) fn body_input<T>(body: Result<Bytes, BytesRejection>) -> Input<T> {
    match body {
        Ok(bytes) => Input::Json(bytes),
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => Input::Unreadable(
            ApiError::PayloadTooLarge(format!("the body is larger than {} bytes", super::MAX_BODY_BYTES)),
        ),
        Err(rejection) => Input::Unreadable(ApiError::BadRequest(rejection.body_text())),
    }
}

pub(super) fn query<T: Default>(query: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    query.map(|Query(params)| params).map_err(|rejection| {
        ApiError::field("query", format!("the query string cannot be read: {}", rejection.body_text()))
    })
}

/// A 202 with the rollout and its `Location` (where it is read and steered).
pub(super) fn accepted(rollout: &Rollout) -> Response {
    accepted_at(rollout, rollout.location(), false)
}

/// The answer to a rollout create: 202, `Location`, and `Idempotent-Replayed` for a replay.
pub(super) fn created(result: Result<CreatedRollout, ApiError>, ctx: &RequestContext) -> Response {
    match result {
        Ok(created) => accepted_at(&created.rollout, created.rollout.location(), created.replayed),
        Err(error) => fail(ctx, error),
    }
}

/// A rollout's server-sent events: `rollout` events, or an `error` event with a problem.
pub(super) fn event_stream(
    ctx: &RequestContext,
    stream: impl futures::Stream<Item = Result<Rollout, ApiError>> + Send + 'static,
) -> Response {
    let correlation_id = ctx.correlation_id.clone();
    let events = stream.map(move |item| {
        let event = match item {
            Ok(rollout) => Event::default().event("rollout").json_data(&rollout),
            Err(error) => {
                Event::default().event("error").json_data(error.problem(None, Some(correlation_id.clone())))
            }
        };
        Ok::<Event, Infallible>(event.unwrap_or_else(|_| Event::default().event("error").data("{}")))
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response()
}

/// Start a rollout.
///
/// Applies the requested images, resources and strategy to the workload and returns the rollout
/// at once (202); follow it with `GET .../rollouts/{id}` or `.../events`. The request is recorded
/// in the audit before the workload is changed: if the audit store is unavailable the answer is
/// 503 and nothing is changed. With `Idempotency-Key`, a retry with the same body returns the same
/// rollout (header `Idempotent-Replayed: true`) and the same key with another body is 409.
#[utoipa::path(
    post,
    path = "/v1/namespaces/{namespace}/rollouts",
    tag = "rollouts",
    operation_id = "createRollout",
    params(
        ("namespace" = String, Path, description = "The workload's namespace"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe: 1-255 visible ASCII characters, scoped to the token and namespace"),
    ),
    request_body(content = RolloutRequest, content_type = "application/json"),
    responses(
        (status = 202, description = "Recorded and applied to the workload", body = Rollout),
        (status = 400, description = "The body is not JSON", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token may not start rollouts in this namespace", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Idempotency-Key reused with another body, or the workload kept changing", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body too large", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid request: unknown workload or container, invalid image, partition out of range, ... (`errors` names each field)", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was changed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn create_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path(namespace): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let key = idempotency_key(&headers);
    let input: Input<RolloutRequest> = body_input(body);
    created(state.ops.create_rollout(&ctx, &namespace, key.as_deref(), input).await, &ctx)
}

/// List rollouts.
///
/// Newest first, with opaque cursor pagination (`nextCursor`). States are live for running
/// rollouts and as recorded for finished ones.
#[utoipa::path(
    get,
    path = "/v1/namespaces/{namespace}/rollouts",
    tag = "rollouts",
    operation_id = "listRollouts",
    params(("namespace" = String, Path, description = "The namespace"), RolloutListParams),
    responses(
        (status = 200, description = "A page of rollouts", body = RolloutList),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Outside the token's scope", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid filter, limit or cursor", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn list_rollouts(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path(namespace): Path<String>,
    params: Result<Query<RolloutListParams>, QueryRejection>,
) -> Response {
    let params = match query(params) {
        Ok(params) => params,
        Err(error) => return fail(&ctx, error),
    };
    match state.ops.list_rollouts(&ctx, &RolloutScope::Namespace(&namespace), &params).await {
        Ok(list) => Json(list).into_response(),
        Err(error) => fail(&ctx, error),
    }
}

/// Get a rollout.
///
/// Its state (Pending, Progressing, Paused, Succeeded, Failed, Aborted), progress (pods updated,
/// ready, in place or recreated, partition), the workload's conditions and every recorded
/// state transition.
#[utoipa::path(
    get,
    path = "/v1/namespaces/{namespace}/rollouts/{id}",
    tag = "rollouts",
    operation_id = "getRollout",
    params(("namespace" = String, Path, description = "The namespace"), ("id" = String, Path, description = "The rollout id")),
    responses(
        (status = 200, description = "The rollout", body = Rollout),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Outside the token's scope", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout in this namespace", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn get_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((namespace, id)): Path<(String, String)>,
) -> Response {
    match state.ops.get_rollout(&ctx, &RolloutScope::Namespace(&namespace), &id).await {
        Ok(rollout) => Json(rollout).into_response(),
        Err(error) => fail(&ctx, error),
    }
}

pub(super) async fn act(
    state: AppState,
    ctx: RequestContext,
    scope: RolloutScope<'_>,
    id: String,
    action: RolloutAction,
) -> Response {
    match state.ops.act_on_rollout(&ctx, &scope, &id, action).await {
        Ok(rollout) => accepted(&rollout),
        Err(error) => fail(&ctx, error),
    }
}

/// Pause a rollout.
///
/// Sets the workload's `paused`: no more pods are updated until resume.
#[utoipa::path(
    post,
    path = "/v1/namespaces/{namespace}/rollouts/{id}/pause",
    tag = "rollouts",
    operation_id = "pauseRollout",
    params(("namespace" = String, Path, description = "The namespace"), ("id" = String, Path, description = "The rollout id")),
    responses(
        (status = 202, description = "Paused", body = Rollout),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Outside the token's scope", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The rollout has ended or was superseded", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was changed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn pause_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((namespace, id)): Path<(String, String)>,
) -> Response {
    act(state, ctx, RolloutScope::Namespace(&namespace), id, RolloutAction::Pause).await
}

/// Resume a paused rollout.
///
/// Clears the workload's `paused`. A rollout held by its partition stays at the partition:
/// promote moves it on.
#[utoipa::path(
    post,
    path = "/v1/namespaces/{namespace}/rollouts/{id}/resume",
    tag = "rollouts",
    operation_id = "resumeRollout",
    params(("namespace" = String, Path, description = "The namespace"), ("id" = String, Path, description = "The rollout id")),
    responses(
        (status = 202, description = "Resumed", body = Rollout),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Outside the token's scope", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The rollout has ended or was superseded", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was changed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn resume_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((namespace, id)): Path<(String, String)>,
) -> Response {
    act(state, ctx, RolloutScope::Namespace(&namespace), id, RolloutAction::Resume).await
}

/// Promote a rollout to the next step.
///
/// Lowers the partition to the body's `partition` (pods kept at the previous revision), or to 0
/// (every pod) without a body, and resumes.
#[utoipa::path(
    post,
    path = "/v1/namespaces/{namespace}/rollouts/{id}/promote",
    tag = "rollouts",
    operation_id = "promoteRollout",
    params(("namespace" = String, Path, description = "The namespace"), ("id" = String, Path, description = "The rollout id")),
    request_body(content = Option<PromoteRequest>, content_type = "application/json"),
    responses(
        (status = 202, description = "Promoted", body = Rollout),
        (status = 400, description = "The body is not JSON", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Outside the token's scope", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The rollout has ended or was superseded", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body too large", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Partition out of range or above the current one", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was changed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn promote_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((namespace, id)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let input: Input<PromoteRequest> = body_input(body);
    act(state, ctx, RolloutScope::Namespace(&namespace), id, RolloutAction::Promote(input)).await
}

/// Abort a rollout.
///
/// Rolls the workload back to the previous revision's pod template (every pod, unpaused); the
/// rollout ends as Aborted.
#[utoipa::path(
    post,
    path = "/v1/namespaces/{namespace}/rollouts/{id}/abort",
    tag = "rollouts",
    operation_id = "abortRollout",
    params(("namespace" = String, Path, description = "The namespace"), ("id" = String, Path, description = "The rollout id")),
    responses(
        (status = 202, description = "Aborted: rolling back", body = Rollout),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Outside the token's scope", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The rollout has ended, was superseded, or has no previous revision", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was changed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn abort_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((namespace, id)): Path<(String, String)>,
) -> Response {
    act(state, ctx, RolloutScope::Namespace(&namespace), id, RolloutAction::Abort).await
}

/// Follow a rollout.
///
/// Server-sent events: a `rollout` event with the rollout now, then one at every change of state
/// or progress; the stream ends after the event that carries a terminal state (Succeeded,
/// Failed, Aborted). An `error` event carries a problem document.
#[utoipa::path(
    get,
    path = "/v1/namespaces/{namespace}/rollouts/{id}/events",
    tag = "rollouts",
    operation_id = "watchRollout",
    params(("namespace" = String, Path, description = "The namespace"), ("id" = String, Path, description = "The rollout id")),
    responses(
        (status = 200, description = "`text/event-stream` of `rollout` events (data: a Rollout)", body = Rollout, content_type = "text/event-stream"),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Outside the token's scope", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn rollout_events(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((namespace, id)): Path<(String, String)>,
) -> Response {
    match state.ops.watch_rollout(&ctx, &RolloutScope::Namespace(&namespace), &id).await {
        Ok(stream) => event_stream(&ctx, stream),
        Err(error) => fail(&ctx, error),
    }
}

/// Query the audit history.
///
/// Newest first, with opaque cursor pagination. Every request that changed or tried to change
/// something has one record (written before the cluster was touched), and so has every request
/// refused for its token (401) or scope (403). Needs `audit-read`; a token limited to some
/// namespaces sees only their records.
#[utoipa::path(
    get,
    path = "/v1/audit",
    tag = "audit",
    operation_id = "listAudit",
    params(AuditListParams),
    responses(
        (status = 200, description = "A page of audit records", body = AuditList),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token lacks audit-read for the namespace", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid filter, time, limit or cursor", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn list_audit(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    params: Result<Query<AuditListParams>, QueryRejection>,
) -> Response {
    let params = match query(params) {
        Ok(params) => params,
        Err(error) => return fail(&ctx, error),
    };
    match state.ops.list_audit(&ctx, &params).await {
        Ok(list) => Json::<AuditList>(list).into_response(),
        Err(error) => fail(&ctx, error),
    }
}

/// A 202 with the body, its `Location`, and `Idempotent-Replayed: true` for a replay.
pub(super) fn accepted_at<T: serde::Serialize>(body: &T, location: String, replayed: bool) -> Response {
    let mut response = (StatusCode::ACCEPTED, Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    if replayed {
        response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    response
}

/// The `Idempotency-Key` header, if sent.
pub(super) fn idempotency_key(headers: &HeaderMap) -> Option<String> {
    headers.get("idempotency-key").map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// Pre-pull images.
///
/// Creates one ImagePullJob per image, pulling on the nodes `nodeSelector` picks (by name, or
/// by labels; `{}` for every node) or on the nodes running the pods of `workload` (exactly one
/// of the two), and returns the pull at once (202); follow it with `GET .../image-pulls/{id}`.
/// The request is recorded in the audit before anything is created: if the audit store is
/// unavailable the answer is 503 and nothing is created. `Idempotency-Key` works as for
/// rollouts.
#[utoipa::path(
    post,
    path = "/v1/namespaces/{namespace}/image-pulls",
    tag = "image-pulls",
    operation_id = "createImagePull",
    params(
        ("namespace" = String, Path, description = "The namespace of the jobs (and of the workload and pull secrets)"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe: 1-255 visible ASCII characters, scoped to the token and namespace"),
    ),
    request_body(content = ImagePullRequest, content_type = "application/json"),
    responses(
        (status = 202, description = "Recorded; the ImagePullJobs are created", body = ImagePull),
        (status = 400, description = "The body is not JSON", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token may not pre-pull in this namespace", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Idempotency-Key reused with another body", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body too large", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid request: missing images, invalid image reference, unknown workload, node or pull secret, ... (`errors` names each field)", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was created", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn create_image_pull(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path(namespace): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let input: Input<ImagePullRequest> = body_input(body);
    let key = idempotency_key(&headers);
    match state.ops.create_image_pull(&ctx, &namespace, key.as_deref(), input).await {
        Ok(created) => {
            let pull = &created.image_pull;
            let location = format!("/v1/namespaces/{}/image-pulls/{}", pull.namespace, pull.id);
            accepted_at(pull, location, created.replayed)
        }
        Err(error) => fail(&ctx, error),
    }
}

/// Get an image pull.
///
/// Its state (Pending, Running, Succeeded, Failed) and, per image, the ImagePullJob's counts
/// (desired, active, succeeded, failed nodes) and each node's result; every recorded state
/// transition. Live while it runs; as recorded at the end once it ended.
#[utoipa::path(
    get,
    path = "/v1/namespaces/{namespace}/image-pulls/{id}",
    tag = "image-pulls",
    operation_id = "getImagePull",
    params(("namespace" = String, Path, description = "The namespace"), ("id" = String, Path, description = "The image pull id")),
    responses(
        (status = 200, description = "The image pull", body = ImagePull),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Outside the token's scope", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such image pull in this namespace", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn get_image_pull(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((namespace, id)): Path<(String, String)>,
) -> Response {
    match state.ops.get_image_pull(&ctx, &namespace, &id).await {
        Ok(pull) => Json(pull).into_response(),
        Err(error) => fail(&ctx, error),
    }
}

/// Recreate containers.
///
/// Restarts the named containers of `pod`, or of every running pod of `workload` at most
/// `maxUnavailable` pods at a time (exactly one of the two), each pod through a
/// ContainerRecreateRequest; returns at once (202) with the first batch started; follow it with
/// `GET .../recreates/{id}`. The request is recorded in the audit before anything is created:
/// if the audit store is unavailable the answer is 503 and nothing is created.
/// `Idempotency-Key` works as for rollouts.
#[utoipa::path(
    post,
    path = "/v1/namespaces/{namespace}/recreates",
    tag = "recreates",
    operation_id = "createRecreate",
    params(
        ("namespace" = String, Path, description = "The namespace of the pod or workload"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe: 1-255 visible ASCII characters, scoped to the token and namespace"),
    ),
    request_body(content = RecreateRequest, content_type = "application/json"),
    responses(
        (status = 202, description = "Recorded; the first ContainerRecreateRequests are created", body = Recreate),
        (status = 400, description = "The body is not JSON", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token may not recreate in this namespace", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Idempotency-Key reused with another body", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body too large", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid request: missing containers, unknown pod, workload or container, pod not running, ... (`errors` names each field)", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was created", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn create_recreate(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path(namespace): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let input: Input<RecreateRequest> = body_input(body);
    let key = idempotency_key(&headers);
    match state.ops.create_recreate(&ctx, &namespace, key.as_deref(), input).await {
        Ok(created) => {
            let recreate = &created.recreate;
            let location = format!("/v1/namespaces/{}/recreates/{}", recreate.namespace, recreate.id);
            accepted_at(recreate, location, created.replayed)
        }
        Err(error) => fail(&ctx, error),
    }
}

/// Get a recreate.
///
/// Its state (Pending, Running, Succeeded, Failed) and, per pod, its ContainerRecreateRequest
/// and the result of each container (pods not started yet are `Waiting`); every recorded
/// state transition.
#[utoipa::path(
    get,
    path = "/v1/namespaces/{namespace}/recreates/{id}",
    tag = "recreates",
    operation_id = "getRecreate",
    params(("namespace" = String, Path, description = "The namespace"), ("id" = String, Path, description = "The recreate id")),
    responses(
        (status = 200, description = "The recreate", body = Recreate),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Outside the token's scope", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such recreate in this namespace", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn get_recreate(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((namespace, id)): Path<(String, String)>,
) -> Response {
    match state.ops.get_recreate(&ctx, &namespace, &id).await {
        Ok(recreate) => Json(recreate).into_response(),
        Err(error) => fail(&ctx, error),
    }
}

/// Liveness: the process serves requests.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "health",
    operation_id = "healthz",
    responses((status = 200, description = "Alive", body = Health))
)]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok".into(), checks: BTreeMap::new() })
}

/// Readiness: Kubernetes and the store answer.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "health",
    operation_id = "readyz",
    responses(
        (status = 200, description = "Ready", body = Health),
        (status = 503, description = "Kubernetes or the store does not answer (`checks` says which)", body = Health),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> Response {
    let limit = Duration::from_secs(2);
    let store = match tokio::time::timeout(limit, state.ops.store().ping()).await {
        Ok(Ok(())) => "ok".to_string(),
        Ok(Err(error)) => error.to_string(),
        Err(_) => "timed out".to_string(),
    };
    let kubernetes = match tokio::time::timeout(limit, state.ops.client().apiserver_version()).await {
        Ok(Ok(_)) => "ok".to_string(),
        Ok(Err(error)) => error.to_string(),
        Err(_) => "timed out".to_string(),
    };
    let ready = store == "ok" && kubernetes == "ok";
    let health = Health {
        status: if ready { "ok" } else { "unavailable" }.into(),
        checks: [("kubernetes".to_string(), kubernetes), ("store".to_string(), store)].into(),
    };
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(health)).into_response()
}

/// Prometheus metrics (text exposition format).
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "health",
    operation_id = "metrics",
    responses((status = 200, description = "Metrics", body = String, content_type = "text/plain"))
)]
pub async fn metrics(State(state): State<AppState>) -> Response {
    let mut response = state.ops.metrics().render().into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"));
    response
}
