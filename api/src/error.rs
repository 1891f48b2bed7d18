//! What can go wrong in a request, and how it is told to the client: every error is an
//! [`ApiError`], which REST renders as an RFC 9457 `application/problem+json` [`Problem`] (and the
//! gRPC transport, later, as a status code). The same value decides the audit outcome, so what
//! the client sees and what the audit records never disagree.

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// One problem with one field of a request (`strategy.partition`, `images.nginx`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FieldError {
    /// Path of the field in the request: dotted JSON names, `images.<container>` for map keys,
    /// `Idempotency-Key` for a header, `cursor` or `limit` for a query parameter.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl FieldError {
    /// A problem with `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }
}

/// An RFC 9457 problem document, the body of every error response.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// A URI naming the kind of problem (`urn:kruise-rs:problem:validation`); stable, so clients
    /// can branch on it.
    #[serde(rename = "type")]
    pub type_: String,
    /// Short summary of the kind of problem (the same for every occurrence).
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong in this request.
    pub detail: String,
    /// The request path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// The request's correlation id (also in the `X-Request-Id` response header and the audit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// Per-field problems (422 responses).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut response = (status, body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"kruise\""));
        }
        response
    }
}

/// Why a request failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ApiError {
    /// The body is not JSON, or not the expected shape at the top level.
    #[error("{0}")]
    BadRequest(String),
    /// No valid bearer token.
    #[error("{0}")]
    Unauthenticated(String),
    /// The token is valid but its scope does not cover the action or namespace.
    #[error("{0}")]
    Forbidden(String),
    /// The addressed object does not exist.
    #[error("{0}")]
    NotFound(String),
    /// Field-level validation failed.
    #[error("invalid request: {}", format_fields(.0))]
    Validation(Vec<FieldError>),
    /// The request conflicts with the current state (e.g. promoting a finished rollout).
    #[error("{0}")]
    Conflict(String),
    /// An `Idempotency-Key` was reused with a different body.
    #[error("{0}")]
    IdempotencyConflict(String),
    /// The body is larger than the server accepts.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// The audit store cannot be written or read: the request is refused and nothing is changed.
    #[error("the audit store is unavailable: {0}")]
    StoreUnavailable(String),
    /// Kubernetes could not be reached or answered with an unexpected error.
    #[error("kubernetes: {0}")]
    Kubernetes(String),
    /// Anything else (a bug).
    #[error("internal error: {0}")]
    Internal(String),
}

fn format_fields(errors: &[FieldError]) -> String {
    errors.iter().map(|e| format!("{}: {}", e.field, e.message)).collect::<Vec<_>>().join("; ")
}

impl ApiError {
    /// A validation error about one field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Validation(vec![FieldError::new(field, message)])
    }

    /// The HTTP status the error is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Conflict(_) | Self::IdempotencyConflict(_) => StatusCode::CONFLICT,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::StoreUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Kubernetes(_) => StatusCode::BAD_GATEWAY,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable slug of the problem type.
    pub fn slug(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "bad-request",
            Self::Unauthenticated(_) => "unauthenticated",
            Self::Forbidden(_) => "forbidden",
            Self::NotFound(_) => "not-found",
            Self::Validation(_) => "validation",
            Self::Conflict(_) => "conflict",
            Self::IdempotencyConflict(_) => "idempotency-key-reused",
            Self::PayloadTooLarge(_) => "payload-too-large",
            Self::StoreUnavailable(_) => "store-unavailable",
            Self::Kubernetes(_) => "kubernetes-unavailable",
            Self::Internal(_) => "internal",
        }
    }

    fn title(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "The request could not be read",
            Self::Unauthenticated(_) => "Authentication required",
            Self::Forbidden(_) => "Outside the token's scope",
            Self::NotFound(_) => "Not found",
            Self::Validation(_) => "The request is invalid",
            Self::Conflict(_) => "Conflict with the current state",
            Self::IdempotencyConflict(_) => "Idempotency key reused with a different request",
            Self::PayloadTooLarge(_) => "Request body too large",
            Self::StoreUnavailable(_) => "The audit store is unavailable",
            Self::Kubernetes(_) => "Kubernetes is unavailable",
            Self::Internal(_) => "Internal error",
        }
    }

    /// The audit outcome this error is recorded as.
    pub fn outcome(&self) -> crate::store::Outcome {
        use crate::store::Outcome;
        match self {
            Self::Unauthenticated(_) => Outcome::Unauthenticated,
            Self::Forbidden(_) => Outcome::Denied,
            Self::StoreUnavailable(_) | Self::Kubernetes(_) | Self::Internal(_) => Outcome::Failed,
            _ => Outcome::Rejected,
        }
    }

    /// The problem document for this error.
    pub fn problem(&self, instance: Option<String>, correlation_id: Option<String>) -> Problem {
        let (detail, errors) = match self {
            Self::Validation(errors) => {
                (format!("{} problem(s): {}", errors.len(), format_fields(errors)), errors.clone())
            }
            other => (other.to_string(), Vec::new()),
        };
        Problem {
            type_: format!("urn:kruise-rs:problem:{}", self.slug()),
            title: self.title().into(),
            status: self.status().as_u16(),
            detail,
            instance,
            correlation_id,
            errors,
        }
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(error: crate::store::StoreError) -> Self {
        Self::StoreUnavailable(error.to_string())
    }
}

impl From<kube::Error> for ApiError {
    fn from(error: kube::Error) -> Self {
        match &error {
            kube::Error::Api(status) if status.code == 404 => Self::NotFound(status.message.clone()),
            kube::Error::Api(status) if status.code == 409 => Self::Conflict(status.message.clone()),
            kube::Error::Api(status) if status.code == 422 || status.code == 400 => {
                Self::Validation(vec![FieldError::new("workload", status.message.clone())])
            }
            kube::Error::Api(status) if status.code == 403 => {
                Self::Kubernetes(format!("the API server refused the request: {}", status.message))
            }
            _ => Self::Kubernetes(error.to_string()),
        }
    }
}

/// Why the server could not be configured or started.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The tokens file could not be read or is invalid.
    #[error("tokens file {path}: {message}")]
    Tokens {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The store could not be opened or migrated.
    #[error("store: {0}")]
    Store(#[from] crate::store::StoreError),
    /// The listener could not be bound.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// The error.
        source: std::io::Error,
    },
}
