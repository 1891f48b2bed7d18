//! API errors, answered as `metav1.Status` objects with the reason, code and causes
//! kube-apiserver would send, so that clients branch on them the same way (kube-rs `ErrorResponse`,
//! kubectl's messages, `apierrors.IsConflict`...).

use axum::{
    http::StatusCode,
    response::{IntoResponse, Response},
};
use kruise_machinery::field::ErrorList;
use serde_json::{Value, json};

/// One error response.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// Machine-readable reason (`NotFound`, `Conflict`, `Invalid`, ...).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
    /// `details` of the Status (name, group, kind, causes), when there are any.
    pub details: Option<Value>,
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self { code, reason, message: message.into(), details: None }
    }

    fn with_details(mut self, group: &str, kind: &str, name: &str) -> Self {
        let mut details = json!({ "kind": kind });
        if !name.is_empty() {
            details["name"] = json!(name);
        }
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        self.details = Some(details);
        self
    }

    /// 404: the object does not exist.
    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} \"{name}\" not found", qualified(group, resource)))
            .with_details(group, resource, name)
    }

    /// 404: no such resource or path.
    pub fn no_such_path() -> Self {
        Self::new(404, "NotFound", "the server could not find the requested resource")
    }

    /// 409: the object already exists.
    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        Self::new(409, "AlreadyExists", format!("{} \"{name}\" already exists", qualified(group, resource)))
            .with_details(group, resource, name)
    }

    /// 409: optimistic concurrency failure.
    pub fn conflict(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your \
                 changes to the latest version and try again",
                qualified(group, resource)
            ),
        )
        .with_details(group, resource, name)
    }

    /// 409: a server-side apply found fields owned by other managers.
    pub fn apply_conflict(group: &str, resource: &str, name: &str, conflicts: &[(String, String)]) -> Self {
        let mut error = Self::new(
            409,
            "Conflict",
            format!(
                "Apply failed with {} conflict{}: {}",
                conflicts.len(),
                if conflicts.len() == 1 { "" } else { "s" },
                conflicts
                    .iter()
                    .map(|(manager, field)| format!("conflict with \"{manager}\": {field}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        )
        .with_details(group, resource, name);
        if let Some(details) = error.details.as_mut() {
            details["causes"] = conflicts
                .iter()
                .map(|(manager, field)| {
                    json!({"reason": "FieldManagerConflict", "message": format!("conflict with \"{manager}\""), "field": field})
                })
                .collect();
        }
        error
    }

    /// 422: validation failed; one cause per field error.
    pub fn invalid(group: &str, kind: &str, name: &str, errors: &ErrorList) -> Self {
        let summary = errors.iter().map(|e| e.to_string()).collect::<Vec<_>>();
        let message = match summary.len() {
            1 => format!("{} \"{name}\" is invalid: {}", qualified_kind(group, kind), summary[0]),
            _ => format!("{} \"{name}\" is invalid: [{}]", qualified_kind(group, kind), summary.join(", ")),
        };
        let mut error = Self::new(422, "Invalid", message).with_details(group, kind, name);
        if let Some(details) = error.details.as_mut() {
            details["causes"] = errors
                .iter()
                .map(|e| json!({"reason": e.kind.reason(), "message": e.message(), "field": e.path.to_string()}))
                .collect();
        }
        error
    }

    /// 400: a malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 405: the verb is not supported on this resource.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 410: a watch or list asked for a resourceVersion no longer retained.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 403: refused (by an admission webhook, or a terminating namespace).
    pub fn forbidden(group: &str, resource: &str, name: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::new(
            403,
            "Forbidden",
            format!("{} \"{name}\" is forbidden: {message}", qualified(group, resource)),
        )
        .with_details(group, resource, name)
    }

    /// 415: the patch type is not supported for this resource.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }

    /// 406: no acceptable representation.
    pub fn not_acceptable(message: impl Into<String>) -> Self {
        Self::new(406, "NotAcceptable", message)
    }

    /// 429: an eviction blocked by a disruption budget.
    pub fn too_many_requests(message: impl Into<String>) -> Self {
        Self::new(429, "TooManyRequests", message)
    }

    /// 500: something failed on our side.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// 503: the server is not able to serve (shutting down, storage failing).
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(503, "ServiceUnavailable", message)
    }

    /// 504: a webhook or conversion timed out.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(504, "Timeout", message)
    }

    /// The `metav1.Status` body.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() { resource.to_string() } else { format!("{resource}.{group}") }
}

/// `Kind.group`, or just `Kind` in the core group (apimachinery's `GroupKind.String()`).
fn qualified_kind(group: &str, kind: &str) -> String {
    if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.reason, self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self.to_status()).unwrap_or_default();
        (code, [(http::header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kruise_machinery::field::{FieldError, FieldPath};

    #[test]
    fn statuses_carry_reason_code_and_details() {
        let status = ApiError::not_found("apps", "deployments", "web").to_status();
        assert_eq!(status["reason"], "NotFound");
        assert_eq!(status["code"], 404);
        assert_eq!(status["message"], "deployments.apps \"web\" not found");
        assert_eq!(status["details"], json!({"kind": "deployments", "name": "web", "group": "apps"}));
    }

    #[test]
    fn invalid_lists_each_field_as_a_cause() {
        let errors = vec![
            FieldError::required(&FieldPath::root("spec").child("selector"), ""),
            FieldError::invalid(
                &FieldPath::root("spec").child("replicas"),
                -1,
                "must be greater than or equal to 0",
            ),
        ];
        let status = ApiError::invalid("apps.kruise.io", "CloneSet", "web", &errors).to_status();
        assert_eq!(status["code"], 422);
        assert_eq!(status["details"]["causes"][0]["field"], "spec.selector");
        assert_eq!(status["details"]["causes"][1]["reason"], "FieldValueInvalid");
        assert!(
            status["message"].as_str().unwrap().starts_with("CloneSet.apps.kruise.io \"web\" is invalid: [")
        );
    }
}
