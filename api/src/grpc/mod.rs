//! The gRPC transport (tonic): services `kruise.api.v1.Rollouts`, `ImagePulls`, `Recreates`,
//! `Jobs` and `Audit`, generated from `api/proto`, with server reflection (v1 and v1alpha) on.
//!
//! Each method is as thin as a REST handler: it turns the call into a [`RequestContext`]
//! (bearer token from the `authorization` metadata, correlation id from `x-request-id` or a new
//! one, the method name as the recorded request), converts the message into the operation's
//! typed input, calls the same [`Operations`] method REST calls, and converts the answer. So
//! authorization, validation, auditing (with the gRPC status code recorded) and the change
//! itself are the same on both transports. Errors become status codes by
//! [`ApiError::grpc_code`]; a validation error carries a `google.rpc.BadRequest` in the status
//! details naming each field (REST's field names), and every answer carries `x-request-id`.

pub mod convert;

use std::{net::SocketAddr, pin::Pin, sync::Arc, time::Instant};

use futures::{Stream, StreamExt};
use prost::Message;
use serde_json::json;
use tonic::{Code, Request, Response, Status, metadata::MetadataValue};

use crate::{
    auth::TokenRegistry,
    error::{ApiError, ConfigError},
    operations::{Input, Operations, RequestContext, RolloutAction, Transport},
};

/// The generated messages, servers and clients of `kruise.api.v1`.
#[allow(missing_docs, clippy::all, clippy::unwrap_used)]
pub mod proto {
    tonic::include_proto!("kruise.api.v1");

    /// The encoded descriptors of every `kruise.api.v1` file (what reflection serves).
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("kruise_api_v1_descriptor");
}

/// The standard rich error messages (`google.rpc.Status` and `google.rpc.BadRequest`), encoded
/// into the `grpc-status-details-bin` trailer of an INVALID_ARGUMENT status so that any gRPC
/// client's error-details support can read which fields were wrong.
pub mod rpc {
    /// `google.rpc.Status`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct RpcStatus {
        /// The status code.
        #[prost(int32, tag = "1")]
        pub code: i32,
        /// The message.
        #[prost(string, tag = "2")]
        pub message: String,
        /// Typed details.
        #[prost(message, repeated, tag = "3")]
        pub details: Vec<prost_types::Any>,
    }

    /// `google.rpc.BadRequest`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BadRequest {
        /// One entry per invalid field.
        #[prost(message, repeated, tag = "1")]
        pub field_violations: Vec<FieldViolation>,
    }

    /// `google.rpc.BadRequest.FieldViolation`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct FieldViolation {
        /// The field (`strategy.partition`, `images[0]`).
        #[prost(string, tag = "1")]
        pub field: String,
        /// What is wrong with it.
        #[prost(string, tag = "2")]
        pub description: String,
    }

    /// The type URL of [`BadRequest`] in an `Any`.
    pub const BAD_REQUEST_TYPE_URL: &str = "type.googleapis.com/google.rpc.BadRequest";

    /// The field violations in a status's details, if it carries a `BadRequest`.
    pub fn field_violations(status: &tonic::Status) -> Vec<FieldViolation> {
        use prost::Message as _;
        let Ok(decoded) = RpcStatus::decode(status.details()) else { return Vec::new() };
        decoded
            .details
            .iter()
            .filter(|any| any.type_url == BAD_REQUEST_TYPE_URL)
            .filter_map(|any| BadRequest::decode(any.value.as_slice()).ok())
            .flat_map(|bad| bad.field_violations)
            .collect()
    }
}

/// The metadata key of the correlation id.
pub const REQUEST_ID: &str = "x-request-id";

/// The gRPC services over the operations.
#[derive(Clone)]
pub struct GrpcApi {
    ops: Operations,
    tokens: Arc<TokenRegistry>,
}

type Reply<T> = Result<Response<T>, Status>;

impl GrpcApi {
    /// The services over `ops`, accepting `tokens`.
    pub fn new(ops: Operations, tokens: Arc<TokenRegistry>) -> Self {
        Self { ops, tokens }
    }

    /// The context of a call: who (the `authorization` metadata; never kept), the correlation
    /// id, and the method as the recorded request.
    fn context<T>(&self, request: &Request<T>, method: &'static str) -> RequestContext {
        let metadata = request.metadata();
        let correlation_id = metadata
            .get(REQUEST_ID)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| (0x21..=0x7e).contains(&b)))
            .map(str::to_string)
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let identity = self.tokens.authenticate(metadata.get("authorization").map(|v| v.as_bytes()));
        RequestContext::new(
            identity,
            correlation_id,
            Transport::Grpc,
            json!({"method": format!("/kruise.api.v1.{method}")}),
        )
    }

    /// Renders an operation's result, counting and logging the call.
    fn finish<T, M>(
        &self,
        ctx: &RequestContext,
        method: &'static str,
        started: Instant,
        result: Result<T, ApiError>,
        render: impl FnOnce(T) -> M,
    ) -> Reply<M> {
        let seconds = started.elapsed().as_secs_f64();
        let (code, http) = match &result {
            Ok(_) => (0, 200),
            Err(error) => (error.grpc_code(), error.status().as_u16()),
        };
        self.ops.metrics().request("GRPC", &format!("/kruise.api.v1.{method}"), http, seconds);
        tracing::info!(
            method,
            code,
            actor = ctx.identity.actor(),
            correlation_id = %ctx.correlation_id,
            ms = seconds * 1000.0,
            "grpc request"
        );
        match result {
            Ok(value) => {
                let mut response = Response::new(render(value));
                if let Ok(id) = MetadataValue::try_from(ctx.correlation_id.as_str()) {
                    response.metadata_mut().insert(REQUEST_ID, id);
                }
                Ok(response)
            }
            Err(error) => Err(status(&error, &ctx.correlation_id)),
        }
    }
}

/// The gRPC status of an error: its code, its message, field violations for a validation
/// error, and the correlation id in the metadata.
pub fn status(error: &ApiError, correlation_id: &str) -> Status {
    let code = Code::from_i32(error.grpc_code());
    let message = error.to_string();
    let mut status = match error {
        ApiError::Validation(fields) => {
            let bad = rpc::BadRequest {
                field_violations: fields
                    .iter()
                    .map(|f| rpc::FieldViolation { field: f.field.clone(), description: f.message.clone() })
                    .collect(),
            };
            let details = rpc::RpcStatus {
                code: code as i32,
                message: message.clone(),
                details: vec![prost_types::Any {
                    type_url: rpc::BAD_REQUEST_TYPE_URL.into(),
                    value: bad.encode_to_vec(),
                }],
            };
            Status::with_details(code, message, details.encode_to_vec().into())
        }
        _ => Status::new(code, message),
    };
    if let Ok(id) = MetadataValue::try_from(correlation_id) {
        status.metadata_mut().insert(REQUEST_ID, id);
    }
    status
}

#[tonic::async_trait]
impl proto::rollouts_server::Rollouts for GrpcApi {
    async fn create(
        &self,
        request: Request<proto::CreateRolloutRequest>,
    ) -> Reply<proto::CreateRolloutResponse> {
        let (started, ctx) = (Instant::now(), self.context(&request, "Rollouts/Create"));
        let message = request.into_inner();
        let input = match convert::rollout_request(message.rollout) {
            Ok(typed) => Input::Typed(typed),
            Err(error) => Input::Unreadable(error),
        };
        let result = self
            .ops
            .create_rollout(&ctx, &message.namespace, message.idempotency_key.as_deref(), input)
            .await;
        self.finish(&ctx, "Rollouts/Create", started, result, |created| proto::CreateRolloutResponse {
            rollout: Some(convert::rollout(&created.rollout)),
            replayed: created.replayed,
        })
    }

    async fn create_sidecar_set_rollout(
        &self,
        request: Request<proto::CreateSidecarSetRolloutRequest>,
    ) -> Reply<proto::CreateRolloutResponse> {
        let method = "Rollouts/CreateSidecarSetRollout";
        let (started, ctx) = (Instant::now(), self.context(&request, method));
        let message = request.into_inner();
        let input = Input::Typed(convert::sidecarset_rollout_request(&message));
        let result = self
            .ops
            .create_sidecarset_rollout(&ctx, &message.name, message.idempotency_key.as_deref(), input)
            .await;
        self.finish(&ctx, method, started, result, |created| proto::CreateRolloutResponse {
            rollout: Some(convert::rollout(&created.rollout)),
            replayed: created.replayed,
        })
    }

    async fn get(&self, request: Request<proto::GetRolloutRequest>) -> Reply<proto::Rollout> {
        let (started, ctx) = (Instant::now(), self.context(&request, "Rollouts/Get"));
        let message = request.into_inner();
        let result = match convert::rollout_scope(&message.namespace, &message.sidecar_set) {
            Ok(scope) => self.ops.get_rollout(&ctx, &scope, &message.id).await,
            Err(error) => Err(error),
        };
        self.finish(&ctx, "Rollouts/Get", started, result, |rollout| convert::rollout(&rollout))
    }

    async fn list(&self, request: Request<proto::ListRolloutsRequest>) -> Reply<proto::ListRolloutsResponse> {
        let (started, ctx) = (Instant::now(), self.context(&request, "Rollouts/List"));
        let message = request.into_inner();
        let scope = convert::rollout_scope(&message.namespace, &message.sidecar_set);
        let result = match (scope, convert::rollout_list_params(&message)) {
            (Ok(scope), Ok(params)) => self.ops.list_rollouts(&ctx, &scope, &params).await,
            (Err(error), _) | (_, Err(error)) => Err(error),
        };
        self.finish(&ctx, "Rollouts/List", started, result, |list| proto::ListRolloutsResponse {
            items: list.items.iter().map(convert::rollout).collect(),
            next_cursor: list.next_cursor,
        })
    }

    async fn pause(&self, request: Request<proto::RolloutActionRequest>) -> Reply<proto::Rollout> {
        self.act(request, "Rollouts/Pause", RolloutAction::Pause).await
    }

    async fn resume(&self, request: Request<proto::RolloutActionRequest>) -> Reply<proto::Rollout> {
        self.act(request, "Rollouts/Resume", RolloutAction::Resume).await
    }

    async fn promote(&self, request: Request<proto::PromoteRolloutRequest>) -> Reply<proto::Rollout> {
        let (started, ctx) = (Instant::now(), self.context(&request, "Rollouts/Promote"));
        let message = request.into_inner();
        let body = Input::Typed(convert::promote_request(message.partition.as_ref()));
        let result = match convert::rollout_scope(&message.namespace, &message.sidecar_set) {
            Ok(scope) => {
                self.ops.act_on_rollout(&ctx, &scope, &message.id, RolloutAction::Promote(body)).await
            }
            Err(error) => Err(error),
        };
        self.finish(&ctx, "Rollouts/Promote", started, result, |rollout| convert::rollout(&rollout))
    }

    async fn abort(&self, request: Request<proto::RolloutActionRequest>) -> Reply<proto::Rollout> {
        self.act(request, "Rollouts/Abort", RolloutAction::Abort).await
    }

    type WatchRolloutStream = Pin<Box<dyn Stream<Item = Result<proto::Rollout, Status>> + Send + 'static>>;

    async fn watch_rollout(
        &self,
        request: Request<proto::WatchRolloutRequest>,
    ) -> Reply<Self::WatchRolloutStream> {
        let (started, ctx) = (Instant::now(), self.context(&request, "Rollouts/WatchRollout"));
        let message = request.into_inner();
        let result = match convert::rollout_scope(&message.namespace, &message.sidecar_set) {
            Ok(scope) => self.ops.watch_rollout(&ctx, &scope, &message.id).await.map(|stream| stream.boxed()),
            Err(error) => Err(error),
        };
        let correlation_id = ctx.correlation_id.clone();
        self.finish(&ctx, "Rollouts/WatchRollout", started, result, move |stream| {
            let items = stream.map(move |item| match item {
                Ok(rollout) => Ok(convert::rollout(&rollout)),
                Err(error) => Err(status(&error, &correlation_id)),
            });
            Box::pin(items) as Self::WatchRolloutStream
        })
    }
}

impl GrpcApi {
    async fn act(
        &self,
        request: Request<proto::RolloutActionRequest>,
        method: &'static str,
        action: RolloutAction,
    ) -> Reply<proto::Rollout> {
        let (started, ctx) = (Instant::now(), self.context(&request, method));
        let message = request.into_inner();
        let result = match convert::rollout_scope(&message.namespace, &message.sidecar_set) {
            Ok(scope) => self.ops.act_on_rollout(&ctx, &scope, &message.id, action).await,
            Err(error) => Err(error),
        };
        self.finish(&ctx, method, started, result, |rollout| convert::rollout(&rollout))
    }
}

#[tonic::async_trait]
impl proto::image_pulls_server::ImagePulls for GrpcApi {
    async fn create(
        &self,
        request: Request<proto::CreateImagePullRequest>,
    ) -> Reply<proto::CreateImagePullResponse> {
        let (started, ctx) = (Instant::now(), self.context(&request, "ImagePulls/Create"));
        let message = request.into_inner();
        let input = match convert::image_pull_request(message.image_pull) {
            Ok(typed) => Input::Typed(typed),
            Err(error) => Input::Unreadable(error),
        };
        let result = self
            .ops
            .create_image_pull(&ctx, &message.namespace, message.idempotency_key.as_deref(), input)
            .await;
        self.finish(&ctx, "ImagePulls/Create", started, result, |created| proto::CreateImagePullResponse {
            image_pull: Some(convert::image_pull(&created.image_pull)),
            replayed: created.replayed,
        })
    }

    async fn get(&self, request: Request<proto::GetImagePullRequest>) -> Reply<proto::ImagePull> {
        let (started, ctx) = (Instant::now(), self.context(&request, "ImagePulls/Get"));
        let message = request.into_inner();
        let result = self.ops.get_image_pull(&ctx, &message.namespace, &message.id).await;
        self.finish(&ctx, "ImagePulls/Get", started, result, |pull| convert::image_pull(&pull))
    }
}

#[tonic::async_trait]
impl proto::recreates_server::Recreates for GrpcApi {
    async fn create(
        &self,
        request: Request<proto::CreateRecreateRequest>,
    ) -> Reply<proto::CreateRecreateResponse> {
        let (started, ctx) = (Instant::now(), self.context(&request, "Recreates/Create"));
        let message = request.into_inner();
        let input = match convert::recreate_request(message.recreate) {
            Ok(typed) => Input::Typed(typed),
            Err(error) => Input::Unreadable(error),
        };
        let result = self
            .ops
            .create_recreate(&ctx, &message.namespace, message.idempotency_key.as_deref(), input)
            .await;
        self.finish(&ctx, "Recreates/Create", started, result, |created| proto::CreateRecreateResponse {
            recreate: Some(convert::recreate(&created.recreate)),
            replayed: created.replayed,
        })
    }

    async fn get(&self, request: Request<proto::GetRecreateRequest>) -> Reply<proto::Recreate> {
        let (started, ctx) = (Instant::now(), self.context(&request, "Recreates/Get"));
        let message = request.into_inner();
        let result = self.ops.get_recreate(&ctx, &message.namespace, &message.id).await;
        self.finish(&ctx, "Recreates/Get", started, result, |recreate| convert::recreate(&recreate))
    }
}

#[tonic::async_trait]
impl proto::jobs_server::Jobs for GrpcApi {
    async fn run_advanced_cron_job(
        &self,
        request: Request<proto::RunAdvancedCronJobRequest>,
    ) -> Reply<proto::RunAdvancedCronJobResponse> {
        let method = "Jobs/RunAdvancedCronJob";
        let (started, ctx) = (Instant::now(), self.context(&request, method));
        let message = request.into_inner();
        let input = Input::Typed(convert::cron_job_run_request(&message));
        let result = self
            .ops
            .run_advancedcronjob(
                &ctx,
                &message.namespace,
                &message.name,
                message.idempotency_key.as_deref(),
                input,
            )
            .await;
        self.finish(&ctx, method, started, result, |created| proto::RunAdvancedCronJobResponse {
            run: Some(convert::cron_job_run(&created.run)),
            replayed: created.replayed,
        })
    }

    async fn get_broadcast_job_nodes(
        &self,
        request: Request<proto::GetBroadcastJobNodesRequest>,
    ) -> Reply<proto::BroadcastJobNodes> {
        let method = "Jobs/GetBroadcastJobNodes";
        let (started, ctx) = (Instant::now(), self.context(&request, method));
        let message = request.into_inner();
        let result = self.ops.broadcastjob_nodes(&ctx, &message.namespace, &message.name).await;
        self.finish(&ctx, method, started, result, |job| convert::broadcastjob_nodes(&job))
    }
}

#[tonic::async_trait]
impl proto::audit_server::Audit for GrpcApi {
    async fn list(&self, request: Request<proto::ListAuditRequest>) -> Reply<proto::ListAuditResponse> {
        let (started, ctx) = (Instant::now(), self.context(&request, "Audit/List"));
        let message = request.into_inner();
        let result = match convert::audit_list_params(&message) {
            Ok(params) => self.ops.list_audit(&ctx, &params).await,
            Err(error) => Err(error),
        };
        self.finish(&ctx, "Audit/List", started, result, |list| proto::ListAuditResponse {
            items: list.items.iter().map(convert::audit_record).collect(),
            next_cursor: list.next_cursor,
        })
    }
}

/// Serves the five services and reflection on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    api: GrpcApi,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> Result<(), GrpcError> {
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;
    tonic::transport::Server::builder()
        .add_service(proto::rollouts_server::RolloutsServer::new(api.clone()))
        .add_service(proto::image_pulls_server::ImagePullsServer::new(api.clone()))
        .add_service(proto::recreates_server::RecreatesServer::new(api.clone()))
        .add_service(proto::jobs_server::JobsServer::new(api.clone()))
        .add_service(proto::audit_server::AuditServer::new(api))
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .serve_with_incoming_shutdown(tonic::transport::server::TcpIncoming::from(listener), shutdown)
        .await?;
    Ok(())
}

/// Binds the gRPC listener (port 0 picks a free port).
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, ConfigError> {
    tokio::net::TcpListener::bind(addr).await.map_err(|source| ConfigError::Bind { addr, source })
}

/// Why the gRPC server stopped.
#[derive(Debug, thiserror::Error)]
pub enum GrpcError {
    /// The reflection service could not read the descriptors (a build problem).
    #[error("reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The server failed.
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
}
