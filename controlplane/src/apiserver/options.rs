//! Query parameters and bodies that steer requests (`dryRun`, `fieldManager`,
//! `fieldValidation`, list and watch parameters, `DeleteOptions`), parsed the way
//! kube-apiserver reads them.

use std::collections::HashMap;

use serde_json::Value;

use super::errors::ApiError;

/// How unknown or duplicate fields are treated (`fieldValidation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and warn (the server default).
    Warn,
    /// Reject the request.
    Strict,
}

/// Options of create, update and patch.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// `dryRun=All`: validate and admit, do not persist.
    pub dry_run: bool,
    /// `fieldManager` (default derived from the user agent, as kube-apiserver does).
    pub field_manager: String,
    /// `fieldValidation`.
    pub field_validation: FieldValidation,
    /// `force` (server-side apply).
    pub force: bool,
}

/// Options of list and watch.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// `labelSelector`.
    pub label_selector: String,
    /// `fieldSelector`.
    pub field_selector: String,
    /// `limit` (0 = all).
    pub limit: usize,
    /// `continue` token.
    pub continue_token: String,
    /// `resourceVersion`.
    pub resource_version: String,
    /// `resourceVersionMatch`.
    pub resource_version_match: String,
    /// `timeoutSeconds` of a watch.
    pub timeout_seconds: Option<u64>,
    /// `allowWatchBookmarks`.
    pub allow_bookmarks: bool,
    /// `sendInitialEvents`.
    pub send_initial_events: bool,
}

/// Options of delete (query parameters merged with a `DeleteOptions` body).
#[derive(Clone, Debug, Default)]
pub struct DeleteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Seconds of graceful deletion (None = the object's default).
    pub grace_period_seconds: Option<i64>,
    /// `Orphan`, `Background` or `Foreground`.
    pub propagation_policy: Option<String>,
    /// Precondition on the UID.
    pub precondition_uid: Option<String>,
    /// Precondition on the resourceVersion.
    pub precondition_rv: Option<String>,
}

fn flag(query: &HashMap<String, String>, name: &str) -> bool {
    query.get(name).is_some_and(|v| v == "true" || v == "1")
}

/// Write options from the query string (and user agent for the default field manager).
pub fn write_options(query: &HashMap<String, String>, user_agent: &str) -> Result<WriteOptions, ApiError> {
    let field_validation = match query.get("fieldValidation").map(String::as_str) {
        None | Some("") | Some("Warn") => FieldValidation::Warn,
        Some("Ignore") => FieldValidation::Ignore,
        Some("Strict") => FieldValidation::Strict,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "fieldValidation must be one of Ignore, Warn or Strict, got {other:?}"
            )));
        }
    };
    let dry_run = match query.get("dryRun").map(String::as_str) {
        None | Some("") => false,
        Some("All") => true,
        Some(other) => return Err(ApiError::bad_request(format!("unsupported dryRun value {other:?}"))),
    };
    let field_manager = query
        .get("fieldManager")
        .filter(|m| !m.is_empty())
        .cloned()
        .unwrap_or_else(|| default_manager(user_agent));
    if field_manager.len() > 128 {
        return Err(ApiError::bad_request("fieldManager must be no more than 128 characters"));
    }
    Ok(WriteOptions { dry_run, field_manager, field_validation, force: flag(query, "force") })
}

/// The manager name kube-apiserver derives from a user agent (`kubectl/v1.33.0 (linux/amd64)` -> `kubectl`).
fn default_manager(user_agent: &str) -> String {
    let name = user_agent.split('/').next().unwrap_or_default().trim();
    if name.is_empty() { "unknown".to_string() } else { name.chars().take(128).collect() }
}

/// List and watch options from the query string.
pub fn list_options(query: &HashMap<String, String>) -> Result<ListOptions, ApiError> {
    let limit = match query.get("limit").filter(|l| !l.is_empty()) {
        Some(text) => {
            text.parse::<i64>().map_err(|_| ApiError::bad_request(format!("invalid limit {text:?}")))?.max(0)
                as usize
        }
        None => 0,
    };
    let timeout_seconds = match query.get("timeoutSeconds").filter(|t| !t.is_empty()) {
        Some(text) => Some(
            text.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds {text:?}")))?,
        ),
        None => None,
    };
    Ok(ListOptions {
        label_selector: query.get("labelSelector").cloned().unwrap_or_default(),
        field_selector: query.get("fieldSelector").cloned().unwrap_or_default(),
        limit,
        continue_token: query.get("continue").cloned().unwrap_or_default(),
        resource_version: query.get("resourceVersion").cloned().unwrap_or_default(),
        resource_version_match: query.get("resourceVersionMatch").cloned().unwrap_or_default(),
        timeout_seconds,
        allow_bookmarks: flag(query, "allowWatchBookmarks"),
        send_initial_events: flag(query, "sendInitialEvents"),
    })
}

/// Delete options from the query string and an optional `DeleteOptions` body.
pub fn delete_options(
    query: &HashMap<String, String>,
    body: Option<&Value>,
) -> Result<DeleteOptions, ApiError> {
    let mut options = DeleteOptions {
        dry_run: query.get("dryRun").is_some_and(|v| v == "All"),
        grace_period_seconds: match query.get("gracePeriodSeconds").filter(|g| !g.is_empty()) {
            Some(text) => Some(
                text.parse()
                    .map_err(|_| ApiError::bad_request(format!("invalid gracePeriodSeconds {text:?}")))?,
            ),
            None => None,
        },
        propagation_policy: query.get("propagationPolicy").filter(|p| !p.is_empty()).cloned(),
        ..Default::default()
    };
    if let Some(body) = body.filter(|b| b.is_object()) {
        if let Some(grace) = body.get("gracePeriodSeconds").and_then(Value::as_i64) {
            options.grace_period_seconds = Some(grace);
        }
        if let Some(policy) = body.get("propagationPolicy").and_then(Value::as_str) {
            options.propagation_policy = Some(policy.to_string());
        }
        if body.get("orphanDependents").and_then(Value::as_bool) == Some(true)
            && options.propagation_policy.is_none()
        {
            options.propagation_policy = Some("Orphan".into());
        }
        if let Some(dry_run) = body.get("dryRun").and_then(Value::as_array) {
            options.dry_run |= dry_run.iter().any(|v| v == "All");
        }
        options.precondition_uid =
            body.pointer("/preconditions/uid").and_then(Value::as_str).map(str::to_string);
        options.precondition_rv =
            body.pointer("/preconditions/resourceVersion").and_then(Value::as_str).map(str::to_string);
    }
    if let Some(policy) = &options.propagation_policy
        && !matches!(policy.as_str(), "Orphan" | "Background" | "Foreground")
    {
        return Err(ApiError::bad_request(format!(
            "propagationPolicy must be one of Orphan, Background or Foreground, got {policy:?}"
        )));
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn field_manager_defaults_to_the_user_agent_program() {
        let options = write_options(&query(&[]), "kubectl/v1.33.9 (linux/amd64) kubernetes/abc").unwrap();
        assert_eq!(options.field_manager, "kubectl");
        assert_eq!(options.field_validation, FieldValidation::Warn);
        let options =
            write_options(&query(&[("fieldManager", "mgr"), ("fieldValidation", "Strict")]), "x").unwrap();
        assert_eq!(
            (options.field_manager.as_str(), options.field_validation),
            ("mgr", FieldValidation::Strict)
        );
        assert!(write_options(&query(&[("fieldValidation", "Loose")]), "x").is_err());
    }

    #[test]
    fn delete_options_merge_query_and_body() {
        let body = serde_json::json!({"propagationPolicy": "Foreground", "preconditions": {"uid": "u"}});
        let options = delete_options(&query(&[("gracePeriodSeconds", "5")]), Some(&body)).unwrap();
        assert_eq!(options.grace_period_seconds, Some(5));
        assert_eq!(options.propagation_policy.as_deref(), Some("Foreground"));
        assert_eq!(options.precondition_uid.as_deref(), Some("u"));
        assert!(delete_options(&query(&[("propagationPolicy", "Now")]), None).is_err());
    }
}
