//! Admission webhooks: the registered Mutating- and ValidatingWebhookConfigurations are matched
//! against each write (rules, scope, namespaceSelector, objectSelector) and called with an
//! `admission.k8s.io/v1` AdmissionReview; JSONPatch responses are applied, denials and call
//! failures answered per `failurePolicy`, warnings passed back to the client.

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::{errors::ApiError, objects, webhook_client::WebhookClient};
use crate::{
    semantics::{patch::json_patch, selectors::LabelSelector},
    storage::{CollectionKey, ObjectKey, Store},
};

/// The operation being admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// A create (including subresource creates such as `pods/eviction`).
    Create,
    /// An update or patch.
    Update,
    /// A delete.
    Delete,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
        }
    }
    fn options_kind(self) -> &'static str {
        match self {
            Self::Create => "CreateOptions",
            Self::Update => "UpdateOptions",
            Self::Delete => "DeleteOptions",
        }
    }
}

/// Everything a webhook is told about one request.
pub struct AdmissionRequest<'a> {
    /// API group of the resource.
    pub group: &'a str,
    /// Version the objects are expressed in.
    pub version: &'a str,
    /// Kind of the objects.
    pub kind: &'a str,
    /// Plural resource.
    pub resource: &'a str,
    /// Subresource, or "".
    pub subresource: &'a str,
    /// Namespace of the object, or None.
    pub namespace: Option<&'a str>,
    /// Name of the object (may be empty on create with generateName).
    pub name: &'a str,
    /// The operation.
    pub operation: Operation,
    /// Whether the request is a dry run.
    pub dry_run: bool,
    /// Whether the resource is namespaced.
    pub namespaced: bool,
}

/// What admission decided for a request.
#[derive(Debug, Default)]
pub struct Admitted {
    /// Warnings for the client.
    pub warnings: Vec<String>,
}

/// Runs admission webhooks.
#[derive(Clone)]
pub struct Admission {
    store: Store,
    client: WebhookClient,
}

impl Admission {
    /// Admission reading its configurations from `store`.
    pub fn new(store: Store, client: WebhookClient) -> Self {
        Self { store, client }
    }

    /// Runs every matching mutating webhook in order (configurations sorted by name, webhooks in
    /// order), applying their patches to `object`.
    pub async fn mutate(
        &self,
        request: &AdmissionRequest<'_>,
        object: &mut Value,
        old: Option<&Value>,
    ) -> Result<Admitted, ApiError> {
        let mut admitted = Admitted::default();
        for webhook in self.webhooks("mutatingwebhookconfigurations") {
            if !self.matches(&webhook, request, Some(&*object), old) {
                continue;
            }
            let Some(response) = self.call(&webhook, request, Some(&*object), old).await? else { continue };
            admitted.warnings.extend(warnings(&response));
            check_allowed(&webhook, &response)?;
            if let Some(patch) = response.get("patch").and_then(Value::as_str) {
                let patch_type = response.get("patchType").and_then(Value::as_str).unwrap_or("JSONPatch");
                if patch_type != "JSONPatch" {
                    return Err(ApiError::internal(format!(
                        "admission webhook \"{}\" returned an unsupported patch type {patch_type:?}",
                        webhook_name(&webhook)
                    )));
                }
                let bytes = base64::engine::general_purpose::STANDARD.decode(patch).map_err(|error| {
                    ApiError::internal(format!(
                        "admission webhook \"{}\" returned a bad patch: {error}",
                        webhook_name(&webhook)
                    ))
                })?;
                let patch: Value = serde_json::from_slice(&bytes).map_err(|error| {
                    ApiError::internal(format!(
                        "admission webhook \"{}\" returned a bad patch: {error}",
                        webhook_name(&webhook)
                    ))
                })?;
                *object = json_patch(object, &patch).map_err(|error| {
                    ApiError::internal(format!(
                        "admission webhook \"{}\" returned a patch that does not apply: {error}",
                        webhook_name(&webhook)
                    ))
                })?;
            }
        }
        Ok(admitted)
    }

    /// Runs every matching validating webhook; any denial rejects the request.
    pub async fn validate(
        &self,
        request: &AdmissionRequest<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Admitted, ApiError> {
        let mut admitted = Admitted::default();
        for webhook in self.webhooks("validatingwebhookconfigurations") {
            if !self.matches(&webhook, request, object, old) {
                continue;
            }
            let Some(response) = self.call(&webhook, request, object, old).await? else { continue };
            admitted.warnings.extend(warnings(&response));
            check_allowed(&webhook, &response)?;
        }
        Ok(admitted)
    }

    fn webhooks(&self, resource: &str) -> Vec<Value> {
        let collection = CollectionKey {
            group: "admissionregistration.k8s.io".into(),
            resource: resource.into(),
            namespace: None,
        };
        let (configurations, _) = self.store.list(&collection);
        configurations
            .iter()
            .flat_map(|configuration| {
                configuration.get("webhooks").and_then(Value::as_array).cloned().unwrap_or_default()
            })
            .collect()
    }

    fn matches(
        &self,
        webhook: &Value,
        request: &AdmissionRequest<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> bool {
        let rules = webhook.get("rules").and_then(Value::as_array).cloned().unwrap_or_default();
        let rule_matches = rules.iter().any(|rule| rule_matches(rule, request));
        if !rule_matches {
            return false;
        }
        // objectSelector: new or old object labels.
        if let Some(selector) = webhook.get("objectSelector").filter(|s| !is_empty_selector(s)) {
            let Some(selector) = label_selector_from_object(selector) else { return false };
            let matches_new = object.is_some_and(|o| selector.matches(&objects::labels(o)));
            let matches_old = old.is_some_and(|o| selector.matches(&objects::labels(o)));
            if !matches_new && !matches_old {
                return false;
            }
        }
        // namespaceSelector: the namespace's labels (a Namespace's own labels for namespaces).
        if let Some(selector) = webhook.get("namespaceSelector").filter(|s| !is_empty_selector(s)) {
            let Some(selector) = label_selector_from_object(selector) else { return false };
            let labels = if request.group.is_empty() && request.resource == "namespaces" {
                object.or(old).map(objects::labels).unwrap_or_default()
            } else if let Some(namespace) = request.namespace.filter(|_| request.namespaced) {
                let key = ObjectKey {
                    group: String::new(),
                    resource: "namespaces".into(),
                    namespace: None,
                    name: namespace.to_string(),
                };
                let mut labels = self.store.get(&key).map(|ns| objects::labels(&ns)).unwrap_or_default();
                labels.entry("kubernetes.io/metadata.name".into()).or_insert_with(|| namespace.to_string());
                labels
            } else {
                // Cluster-scoped objects are not subject to namespace selectors.
                return true;
            };
            if !selector.matches(&labels) {
                return false;
            }
        }
        true
    }

    async fn call(
        &self,
        webhook: &Value,
        request: &AdmissionRequest<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<Option<Value>, ApiError> {
        let name = webhook_name(webhook);
        let ignore_failures = webhook.get("failurePolicy").and_then(Value::as_str) == Some("Ignore");
        if request.dry_run {
            let side_effects = webhook.get("sideEffects").and_then(Value::as_str).unwrap_or("Unknown");
            if !matches!(side_effects, "None" | "NoneOnDryRun") {
                return Err(ApiError::bad_request(format!(
                    "admission webhook \"{name}\" does not support dry run"
                )));
            }
        }
        let uid = objects::new_uid();
        let review = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": uid,
                "kind": {"group": request.group, "version": request.version, "kind": request.kind},
                "resource": {"group": request.group, "version": request.version, "resource": request.resource},
                "subResource": request.subresource,
                "requestKind": {"group": request.group, "version": request.version, "kind": request.kind},
                "requestResource": {"group": request.group, "version": request.version, "resource": request.resource},
                "requestSubResource": request.subresource,
                "name": request.name,
                "namespace": request.namespace.unwrap_or_default(),
                "operation": request.operation.as_str(),
                "userInfo": {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]},
                "object": object.cloned().unwrap_or(Value::Null),
                "oldObject": old.cloned().unwrap_or(Value::Null),
                "dryRun": request.dry_run,
                "options": {"apiVersion": "meta.k8s.io/v1", "kind": request.operation.options_kind()},
            }
        });
        let timeout = Duration::from_secs(
            webhook.get("timeoutSeconds").and_then(Value::as_u64).unwrap_or(10).clamp(1, 30),
        );
        let client_config = webhook.get("clientConfig").cloned().unwrap_or(json!({}));
        match self.client.call(&client_config, &review, timeout).await {
            Ok(answer) => match answer.get("response") {
                Some(response) if response.get("uid").and_then(Value::as_str) == Some(uid.as_str()) => {
                    Ok(Some(response.clone()))
                }
                _ if ignore_failures => Ok(None),
                _ => Err(ApiError::internal(format!(
                    "Internal error occurred: failed calling webhook \"{name}\": expected response.uid=\"{uid}\""
                ))),
            },
            Err(_) if ignore_failures => {
                tracing::warn!(webhook = %name, "ignoring a failed call to a webhook with failurePolicy Ignore");
                Ok(None)
            }
            Err(error) => Err(ApiError::internal(format!(
                "Internal error occurred: failed calling webhook \"{name}\": {error}"
            ))),
        }
    }
}

fn rule_matches(rule: &Value, request: &AdmissionRequest<'_>) -> bool {
    let list = |field: &str| -> Vec<String> {
        rule.get(field)
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let contains = |items: &[String], value: &str| items.iter().any(|item| item == "*" || item == value);
    if !contains(&list("operations"), request.operation.as_str()) {
        return false;
    }
    if !contains(&list("apiGroups"), request.group) {
        return false;
    }
    // matchPolicy Equivalent: a rule for another version of the same resource still matches; the
    // object is sent in the version it was requested in.
    if list("apiVersions").is_empty() {
        return false;
    }
    let resource_matches = list("resources").iter().any(|pattern| {
        let (resource, subresource) = pattern.split_once('/').unwrap_or((pattern.as_str(), ""));
        let resource_ok = resource == "*" || resource == request.resource;
        let subresource_ok = if request.subresource.is_empty() {
            subresource.is_empty()
        } else {
            subresource == "*" || subresource == request.subresource
        };
        resource_ok && subresource_ok
    });
    if !resource_matches {
        return false;
    }
    match rule.get("scope").and_then(Value::as_str).unwrap_or("*") {
        "Cluster" => !request.namespaced,
        "Namespaced" => request.namespaced,
        _ => true,
    }
}

fn is_empty_selector(selector: &Value) -> bool {
    selector.as_object().is_none_or(|map| {
        map.values().all(|value| match value {
            Value::Null => true,
            Value::Object(inner) => inner.is_empty(),
            Value::Array(items) => items.is_empty(),
            _ => false,
        })
    })
}

/// Turns a `metav1.LabelSelector` object into the string form and parses it.
fn label_selector_from_object(selector: &Value) -> Option<LabelSelector> {
    let typed: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector =
        serde_json::from_value(selector.clone()).ok()?;
    LabelSelector::parse(&kruise_machinery::selector::to_selector_string(&typed)).ok()
}

fn webhook_name(webhook: &Value) -> String {
    webhook.get("name").and_then(Value::as_str).unwrap_or_default().to_string()
}

fn warnings(response: &Value) -> Vec<String> {
    response
        .get("warnings")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(|w| w.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn check_allowed(webhook: &Value, response: &Value) -> Result<(), ApiError> {
    if response.get("allowed").and_then(Value::as_bool) == Some(true) {
        return Ok(());
    }
    let status = response.get("status").cloned().unwrap_or(json!({}));
    let message = status.get("message").and_then(Value::as_str).unwrap_or_default();
    let code =
        status.get("code").and_then(Value::as_u64).filter(|c| (400..600).contains(c)).unwrap_or(403) as u16;
    let reason = match code {
        400 => "BadRequest",
        404 => "NotFound",
        409 => "Conflict",
        422 => "Invalid",
        _ => "Forbidden",
    };
    let mut error = ApiError::internal("");
    error.code = code;
    error.reason = reason;
    error.message = format!("admission webhook \"{}\" denied the request: {message}", webhook_name(webhook));
    if let Some(details) = status.get("details") {
        error.details = Some(details.clone());
    }
    Err(error)
}
