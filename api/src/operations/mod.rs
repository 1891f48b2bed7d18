//! What the API does, independent of the transport: REST handlers and gRPC methods turn a
//! request into a [`RequestContext`] and typed input, call one method here, and render the
//! result. Every rule lives here once: authorization, validation, the audit record (written
//! before the cluster is changed), the change itself and the answer.
//!
//! Audit policy: every request that changes or tries to change something gets exactly one
//! record (written as `pending` before the cluster is touched, then completed with its outcome),
//! and so does every request refused for its credentials (401) or scope (403), whatever the
//! endpoint. Successful reads are not recorded (they change nothing; access logs cover them). If
//! the store cannot take a record, the request fails with 503 and nothing is changed.

mod audit;
mod image_pulls;
mod jobs;
mod recreates;
mod rollouts;
mod scope;
mod tasks;

pub use image_pulls::CreatedImagePull;
pub use jobs::{CreatedRun, MANUAL_INSTANTIATE_ANNOTATION};
pub use recreates::CreatedRecreate;
pub use rollouts::{CreatedRollout, RolloutAction, WATCHER_ACTOR};
pub(crate) use rollouts::{Live, PodCounts};
pub use scope::RolloutScope;
pub use tasks::reconcile_tasks;

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::{
    auth::{Action, Identity, Principal},
    error::{ApiError, FieldError},
    metrics::Metrics,
    store::{AuditFinish, NewAuditRecord, Outcome, Store},
};

/// The transport a request came in on (decides which status code the audit keeps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// HTTP/JSON.
    Rest,
    /// gRPC.
    Grpc,
}

/// Who sent a request and how to recognise it later.
#[derive(Clone, Debug)]
pub struct RequestContext {
    /// The caller, as authentication found it.
    pub identity: Identity,
    /// Correlation id (from `X-Request-Id` or generated), in the response and the audit.
    pub correlation_id: String,
    /// The transport.
    pub transport: Transport,
    /// The request as recorded: method, path and query (REST) or method name (gRPC). Never
    /// headers; the body is added, sanitized, by the operation.
    pub request: Value,
    /// When the request arrived.
    pub received: DateTime<Utc>,
}

impl RequestContext {
    /// A context for tests and embedding.
    pub fn new(
        identity: Identity,
        correlation_id: impl Into<String>,
        transport: Transport,
        request: Value,
    ) -> Self {
        Self {
            identity,
            correlation_id: correlation_id.into(),
            transport,
            request,
            received: crate::store::now(),
        }
    }
}

/// A request body: raw JSON from REST (parsed here so that parse errors are audited like any
/// other rejection), or an already typed value from another transport.
#[derive(Clone, Debug)]
pub enum Input<T> {
    /// A typed value.
    Typed(T),
    /// JSON bytes (empty: no body).
    Json(Bytes),
    /// The body could not be read (too large, broken connection).
    Unreadable(ApiError),
}

impl<T: DeserializeOwned> Input<T> {
    /// The value, or a 400/422 naming the offending field.
    fn parse(self) -> Result<T, ApiError> {
        match self {
            Self::Typed(value) => Ok(value),
            Self::Json(bytes) => parse_json(&bytes),
            Self::Unreadable(error) => Err(error),
        }
    }
}

/// Parses JSON, naming the field of the first problem (`strategy.partition`), and `body` when
/// the body is not JSON at all.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::field("body", "a JSON body is required"));
    }
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|error| ApiError::BadRequest(format!("the body is not valid JSON: {error}")))?;
    let mut tracker = serde_path_to_error::Track::new();
    let deserializer = serde_path_to_error::Deserializer::new(&value, &mut tracker);
    match T::deserialize(deserializer) {
        Ok(parsed) => Ok(parsed),
        Err(error) => {
            let path = tracker.path().to_string();
            let message = error.to_string();
            let join = |name: &str| {
                if path == "." {
                    name.to_string()
                } else if path.rsplit('.').next() == Some(name) {
                    path.clone()
                } else {
                    format!("{path}.{name}")
                }
            };
            let field = missing_field(&message)
                .or_else(|| unknown_field(&message))
                .map(join)
                .unwrap_or_else(|| if path == "." { "body".to_string() } else { path.clone() });
            Err(ApiError::field(field, message))
        }
    }
}

fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.split('`').next()
}

fn unknown_field(message: &str) -> Option<&str> {
    message.strip_prefix("unknown field `")?.split('`').next()
}

/// Replaces the values of keys that may hold secrets (`password`, `token`, `secret`,
/// `credential`, `authorization`, `pullSecrets`, …) with `"[REDACTED]"`, at any depth.
pub fn sanitize(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let lower = key.to_ascii_lowercase();
                    let secret =
                        ["password", "token", "secret", "credential", "authorization", "apikey", "api_key"]
                            .iter()
                            .any(|word| lower.contains(word));
                    (key.clone(), if secret { json!("[REDACTED]") } else { sanitize(value) })
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(sanitize).collect()),
        other => other.clone(),
    }
}

/// Tunables of the operations.
#[derive(Clone, Debug)]
pub struct OperationsConfig {
    /// How long creating a rollout waits for the controller to name the new revision before
    /// answering (the answer then carries `revision`; otherwise the watcher fills it in).
    pub revision_wait: Duration,
}

impl Default for OperationsConfig {
    fn default() -> Self {
        Self { revision_wait: Duration::from_secs(2) }
    }
}

/// The operations of the API, shared by every transport.
#[derive(Clone)]
pub struct Operations {
    inner: Arc<Inner>,
}

struct Inner {
    client: kube::Client,
    store: Store,
    metrics: Metrics,
    config: OperationsConfig,
    /// Bumped whenever a watched workload changes, so event streams re-read promptly.
    changes: watch::Sender<u64>,
}

impl Operations {
    /// Operations over a cluster and a store.
    pub fn new(client: kube::Client, store: Store, metrics: Metrics, config: OperationsConfig) -> Self {
        let (changes, _) = watch::channel(0);
        Self { inner: Arc::new(Inner { client, store, metrics, config, changes }) }
    }

    /// The Kubernetes client.
    pub fn client(&self) -> &kube::Client {
        &self.inner.client
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// Tells event streams that workloads changed.
    pub(crate) fn notify_changed(&self) {
        self.inner.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A receiver of change notifications.
    pub(crate) fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// A draft audit record for a request.
    fn draft(
        &self,
        ctx: &RequestContext,
        action: &'static str,
        namespace: Option<&str>,
        target: String,
    ) -> Draft {
        Draft {
            id: uuid::Uuid::new_v4().to_string(),
            action,
            namespace: namespace.map(str::to_string),
            target,
            rollout_id: None,
            task_id: None,
            request: ctx.request.clone(),
            actor: ctx.identity.actor().to_string(),
        }
    }

    /// The principal, when its scope covers `action` in `namespace` (`None`: any namespace the
    /// token has); a 401 or 403 is recorded and returned otherwise.
    async fn authorize(
        &self,
        ctx: &RequestContext,
        draft: &Draft,
        action: Action,
        namespace: Option<&str>,
    ) -> Result<Arc<Principal>, ApiError> {
        let principal = self.authenticated(ctx, draft).await?;
        let allowed = match namespace {
            Some(namespace) => principal.may(action, namespace),
            None => principal.actions.grants(action),
        };
        if !allowed {
            let message = match namespace {
                Some(namespace) => format!(
                    "token {:?} may not perform {action:?} in namespace {namespace:?}",
                    principal.name,
                    action = action.as_str()
                ),
                None => format!("token {:?} may not perform {:?}", principal.name, action.as_str()),
            };
            return self.refuse(ctx, draft, ApiError::Forbidden(message)).await;
        }
        Ok(principal)
    }

    /// The principal of an authenticated request; a 401 is recorded and returned otherwise.
    async fn authenticated(&self, ctx: &RequestContext, draft: &Draft) -> Result<Arc<Principal>, ApiError> {
        match &ctx.identity {
            Identity::Anonymous(reason) => {
                self.refuse(ctx, draft, ApiError::Unauthenticated(reason.message().into())).await
            }
            Identity::Principal(principal) => Ok(principal.clone()),
        }
    }

    /// Records a refused request (one final record) and returns its error — or 503 when the
    /// record cannot be written.
    async fn refuse<T>(&self, ctx: &RequestContext, draft: &Draft, error: ApiError) -> Result<T, ApiError> {
        let grpc = (ctx.transport == Transport::Grpc).then(|| error.grpc_code());
        let record =
            draft.record(ctx, error.outcome(), error.status().as_u16(), grpc, Some(error.to_string()));
        match self.write_audit(&record).await {
            Ok(()) => Err(error),
            Err(store_error) => Err(store_error),
        }
    }

    /// Writes a record (refusals, replays); a store failure is a 503.
    async fn write_audit(&self, record: &NewAuditRecord) -> Result<(), ApiError> {
        match self.inner.store.insert_audit(record).await {
            Ok(()) => {
                self.inner.metrics.audit_written(record.outcome.as_str());
                Ok(())
            }
            Err(error) => {
                self.inner.metrics.audit_failed();
                tracing::warn!(%error, action = %record.action, correlation_id = %record.correlation_id, "audit write failed: request refused");
                Err(ApiError::StoreUnavailable(error.to_string()))
            }
        }
    }

    /// Records the intent of a change (`pending`) before the cluster is touched.
    async fn record_intent(&self, ctx: &RequestContext, draft: &Draft) -> Result<(), ApiError> {
        self.write_audit(&draft.record(ctx, Outcome::Pending, 0, None, None)).await
    }

    /// Completes the record of a change with its outcome; a failure here is logged (the change
    /// was made, and the record says `pending`).
    async fn record_outcome<T>(
        &self,
        ctx: &RequestContext,
        draft: &Draft,
        result: Result<T, ApiError>,
        success_status: u16,
    ) -> Result<T, ApiError> {
        self.record_outcome_with(ctx, draft, result, success_status, None).await
    }

    /// [`Self::record_outcome`], keeping `success_message` in the record when the change was
    /// made (what was created, when the request could not say it in advance).
    async fn record_outcome_with<T>(
        &self,
        ctx: &RequestContext,
        draft: &Draft,
        result: Result<T, ApiError>,
        success_status: u16,
        success_message: Option<String>,
    ) -> Result<T, ApiError> {
        let (outcome, status, message) = match &result {
            Ok(_) => (Outcome::Accepted, success_status, success_message),
            Err(error) => (error.outcome(), error.status().as_u16(), Some(error.to_string())),
        };
        let grpc = grpc_status(ctx, &result);
        match self
            .inner
            .store
            .finish_audit(
                &draft.id,
                &AuditFinish {
                    outcome,
                    http_status: status,
                    grpc_status: grpc,
                    message: message.as_deref(),
                    rollout_id: draft.rollout_id.as_deref(),
                    task_id: draft.task_id.as_deref(),
                },
            )
            .await
        {
            Ok(()) => self.inner.metrics.audit_written(outcome.as_str()),
            Err(error) => {
                self.inner.metrics.audit_failed();
                tracing::warn!(%error, audit_id = %draft.id, "could not record the outcome of a request (left pending)");
            }
        }
        result
    }
}

/// The gRPC status code recorded for a gRPC request (none for REST).
fn grpc_status<T>(ctx: &RequestContext, result: &Result<T, ApiError>) -> Option<i32> {
    (ctx.transport == Transport::Grpc).then(|| match result {
        Ok(_) => 0,
        Err(error) => error.grpc_code(),
    })
}

impl ApiError {
    /// The gRPC status code of this error (`google.rpc.Code`).
    pub fn grpc_code(&self) -> i32 {
        match self {
            Self::BadRequest(_) | Self::Validation(_) => 3, // INVALID_ARGUMENT
            Self::NotFound(_) => 5,                         // NOT_FOUND
            Self::Conflict(_) | Self::IdempotencyConflict(_) => 9, // FAILED_PRECONDITION
            Self::Forbidden(_) => 7,                        // PERMISSION_DENIED
            Self::PayloadTooLarge(_) => 8,                  // RESOURCE_EXHAUSTED
            Self::StoreUnavailable(_) | Self::Kubernetes(_) => 14, // UNAVAILABLE
            Self::Internal(_) => 13,                        // INTERNAL
            Self::Unauthenticated(_) => 16,                 // UNAUTHENTICATED
        }
    }
}

/// An audit record being prepared.
#[derive(Clone, Debug)]
struct Draft {
    id: String,
    action: &'static str,
    namespace: Option<String>,
    target: String,
    rollout_id: Option<String>,
    task_id: Option<String>,
    request: Value,
    actor: String,
}

impl Draft {
    /// Adds the parsed body to the recorded request. Bodies are recorded as parsed into their
    /// type, never as received, so that only declared fields are kept; a type with secret fields
    /// passes its value through [`sanitize`] first. A body that does not parse is not recorded.
    fn with_body(&mut self, body: &Value) {
        if let Value::Object(map) = &mut self.request {
            map.insert("body".into(), body.clone());
        }
    }

    fn record(
        &self,
        ctx: &RequestContext,
        outcome: Outcome,
        http_status: u16,
        grpc_status: Option<i32>,
        message: Option<String>,
    ) -> NewAuditRecord {
        NewAuditRecord {
            id: self.id.clone(),
            time: ctx.received,
            actor: self.actor.clone(),
            action: self.action.into(),
            namespace: self.namespace.clone(),
            target: self.target.clone(),
            rollout_id: self.rollout_id.clone(),
            task_id: self.task_id.clone(),
            request: self.request.clone(),
            outcome,
            http_status,
            grpc_status,
            correlation_id: ctx.correlation_id.clone(),
            message,
        }
    }
}

/// Checks a namespace name from a path (a DNS-1123 label).
fn check_namespace(namespace: &str) -> Result<(), ApiError> {
    let problems = kruise_crds::validation::meta::dns1123_label_problems(namespace);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ApiError::field(
            "namespace",
            format!("{namespace:?} is not a valid namespace: {}", problems.join("; ")),
        ))
    }
}

/// Reads a page size (`1..=500`, default 50).
fn parse_limit(limit: Option<&str>) -> Result<u32, FieldError> {
    match limit {
        None => Ok(50),
        Some(text) => match text.parse::<u32>() {
            Ok(n) if (1..=500).contains(&n) => Ok(n),
            _ => Err(FieldError::new("limit", format!("{text:?} must be an integer between 1 and 500"))),
        },
    }
}
