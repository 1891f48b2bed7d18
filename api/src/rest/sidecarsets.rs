//! The REST handlers of SidecarSet rollouts (`/v1/sidecarsets/{name}/rollouts…`). A SidecarSet
//! is cluster-scoped, so its rollouts have their own collection instead of a namespace's; the
//! operations and the rollout documents are the namespaced ones'. Every call needs a token with
//! `rollout` for every namespace (`"*"`): a SidecarSet's sidecars run in pods of any namespace.

use axum::{
    Extension, Json,
    body::Bytes,
    extract::{Path, Query, State, rejection::BytesRejection, rejection::QueryRejection},
    http::HeaderMap,
    response::{IntoResponse, Response},
};

use super::{
    AppState,
    handlers::{act, body_input, created, event_stream, fail, idempotency_key, query},
};
use crate::{
    error::Problem,
    model::{
        PromoteRequest, Rollout, RolloutList, RolloutListParams, SidecarSetRolloutListParams,
        SidecarSetRolloutRequest,
    },
    operations::{Input, RequestContext, RolloutAction, RolloutScope},
};

/// Start a SidecarSet rollout.
///
/// Writes the requested sidecar images and strategy (`partition`, `maxUnavailable`, `paused`)
/// into the SidecarSet, whose controller upgrades the sidecars in place in the pods it matched,
/// and returns the rollout at once (202); follow it with `GET .../rollouts/{id}` or `.../events`.
/// The request is audited before the SidecarSet is changed, as for workloads; `Idempotency-Key`
/// works as for workloads. A SidecarSet is cluster-scoped and reaches pods in any namespace, so
/// the token needs `rollout` for every namespace (`"*"`).
#[utoipa::path(
    post,
    path = "/v1/sidecarsets/{name}/rollouts",
    tag = "rollouts",
    operation_id = "createSidecarSetRollout",
    params(
        ("name" = String, Path, description = "The SidecarSet (cluster-scoped)"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe: 1-255 visible ASCII characters, scoped to the token and to SidecarSets"),
    ),
    request_body(content = SidecarSetRolloutRequest, content_type = "application/json"),
    responses(
        (status = 202, description = "Recorded and applied to the SidecarSet", body = Rollout),
        (status = 400, description = "The body is not JSON", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token may not start rollouts in every namespace", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such SidecarSet", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Idempotency-Key reused with another body, or the SidecarSet kept changing", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body too large", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid request: unknown or init container, invalid image, partition out of range, update strategy NotUpdate (`name`), ... (`errors` names each field)", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was changed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn create_sidecarset_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let key = idempotency_key(&headers);
    let input: Input<SidecarSetRolloutRequest> = body_input(body);
    created(state.ops.create_sidecarset_rollout(&ctx, &name, key.as_deref(), input).await, &ctx)
}

/// List a SidecarSet's rollouts.
///
/// Newest first, with opaque cursor pagination (`nextCursor`), as a namespace's listing.
#[utoipa::path(
    get,
    path = "/v1/sidecarsets/{name}/rollouts",
    tag = "rollouts",
    operation_id = "listSidecarSetRollouts",
    params(("name" = String, Path, description = "The SidecarSet"), SidecarSetRolloutListParams),
    responses(
        (status = 200, description = "A page of rollouts", body = RolloutList),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token does not cover every namespace", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid filter, limit or cursor", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn list_sidecarset_rollouts(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path(name): Path<String>,
    params: Result<Query<SidecarSetRolloutListParams>, QueryRejection>,
) -> Response {
    let params: RolloutListParams = match query(params) {
        Ok(params) => params.into(),
        Err(error) => return fail(&ctx, error),
    };
    match state.ops.list_rollouts(&ctx, &RolloutScope::SidecarSet(&name), &params).await {
        Ok(list) => Json(list).into_response(),
        Err(error) => fail(&ctx, error),
    }
}

/// Get a SidecarSet rollout.
///
/// Its state, progress (matched pods: updated, ready, partition) and every recorded state
/// transition, as for a workload's.
#[utoipa::path(
    get,
    path = "/v1/sidecarsets/{name}/rollouts/{id}",
    tag = "rollouts",
    operation_id = "getSidecarSetRollout",
    params(("name" = String, Path, description = "The SidecarSet"), ("id" = String, Path, description = "The rollout id")),
    responses(
        (status = 200, description = "The rollout", body = Rollout),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token does not cover every namespace", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout of this SidecarSet", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn get_sidecarset_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((name, id)): Path<(String, String)>,
) -> Response {
    match state.ops.get_rollout(&ctx, &RolloutScope::SidecarSet(&name), &id).await {
        Ok(rollout) => Json(rollout).into_response(),
        Err(error) => fail(&ctx, error),
    }
}

/// Pause a SidecarSet rollout.
///
/// Sets `spec.updateStrategy.paused`: no more sidecars are upgraded until resume.
#[utoipa::path(
    post,
    path = "/v1/sidecarsets/{name}/rollouts/{id}/pause",
    tag = "rollouts",
    operation_id = "pauseSidecarSetRollout",
    params(("name" = String, Path, description = "The SidecarSet"), ("id" = String, Path, description = "The rollout id")),
    responses(
        (status = 202, description = "Paused", body = Rollout),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token does not cover every namespace", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The rollout has ended or was superseded", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was changed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn pause_sidecarset_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((name, id)): Path<(String, String)>,
) -> Response {
    act(state, ctx, RolloutScope::SidecarSet(&name), id, RolloutAction::Pause).await
}

/// Resume a paused SidecarSet rollout.
///
/// Clears `spec.updateStrategy.paused`. A rollout held by its partition stays at the
/// partition: promote moves it on.
#[utoipa::path(
    post,
    path = "/v1/sidecarsets/{name}/rollouts/{id}/resume",
    tag = "rollouts",
    operation_id = "resumeSidecarSetRollout",
    params(("name" = String, Path, description = "The SidecarSet"), ("id" = String, Path, description = "The rollout id")),
    responses(
        (status = 202, description = "Resumed", body = Rollout),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token does not cover every namespace", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The rollout has ended or was superseded", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was changed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn resume_sidecarset_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((name, id)): Path<(String, String)>,
) -> Response {
    act(state, ctx, RolloutScope::SidecarSet(&name), id, RolloutAction::Resume).await
}

/// Promote a SidecarSet rollout to the next step.
///
/// Lowers the partition to the body's `partition` (matched pods kept at the previous sidecars),
/// or to 0 (every matched pod) without a body, and resumes.
#[utoipa::path(
    post,
    path = "/v1/sidecarsets/{name}/rollouts/{id}/promote",
    tag = "rollouts",
    operation_id = "promoteSidecarSetRollout",
    params(("name" = String, Path, description = "The SidecarSet"), ("id" = String, Path, description = "The rollout id")),
    request_body(content = Option<PromoteRequest>, content_type = "application/json"),
    responses(
        (status = 202, description = "Promoted", body = Rollout),
        (status = 400, description = "The body is not JSON", body = Problem, content_type = "application/problem+json"),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token does not cover every namespace", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The rollout has ended or was superseded", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body too large", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Partition out of range or above the current one", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was changed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn promote_sidecarset_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((name, id)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let input: Input<PromoteRequest> = body_input(body);
    act(state, ctx, RolloutScope::SidecarSet(&name), id, RolloutAction::Promote(input)).await
}

/// Abort a SidecarSet rollout.
///
/// Puts back the sidecar images the previous revision recorded (its ControllerRevision, in the
/// Kruise manager's namespace), for every matched pod, unpaused; the rollout ends as Aborted.
#[utoipa::path(
    post,
    path = "/v1/sidecarsets/{name}/rollouts/{id}/abort",
    tag = "rollouts",
    operation_id = "abortSidecarSetRollout",
    params(("name" = String, Path, description = "The SidecarSet"), ("id" = String, Path, description = "The rollout id")),
    responses(
        (status = 202, description = "Aborted: rolling back", body = Rollout),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token does not cover every namespace", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The rollout has ended, was superseded, or has no previous revision", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "Kubernetes failed", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The audit store is unavailable; nothing was changed", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn abort_sidecarset_rollout(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((name, id)): Path<(String, String)>,
) -> Response {
    act(state, ctx, RolloutScope::SidecarSet(&name), id, RolloutAction::Abort).await
}

/// Follow a SidecarSet rollout.
///
/// Server-sent events, as for a workload's rollout: a `rollout` event now and at every change,
/// ending after a terminal state; an `error` event carries a problem document.
#[utoipa::path(
    get,
    path = "/v1/sidecarsets/{name}/rollouts/{id}/events",
    tag = "rollouts",
    operation_id = "watchSidecarSetRollout",
    params(("name" = String, Path, description = "The SidecarSet"), ("id" = String, Path, description = "The rollout id")),
    responses(
        (status = 200, description = "`text/event-stream` of `rollout` events (data: a Rollout)", body = Rollout, content_type = "text/event-stream"),
        (status = 401, description = "No valid bearer token", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The token does not cover every namespace", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such rollout", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = Problem, content_type = "application/problem+json"),
    ),
    security(("bearer" = []))
)]
pub async fn sidecarset_rollout_events(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    Path((name, id)): Path<(String, String)>,
) -> Response {
    match state.ops.watch_rollout(&ctx, &RolloutScope::SidecarSet(&name), &id).await {
        Ok(stream) => event_stream(&ctx, stream),
        Err(error) => fail(&ctx, error),
    }
}
