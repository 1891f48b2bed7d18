//! Which objects a list or watch returns: label and field selectors (with the field labels each
//! resource supports, as kube-apiserver restricts them) and `continue` tokens for pagination.

use base64::Engine;
use serde_json::Value;

use super::{errors::ApiError, events, objects, options::ListOptions};
use crate::{
    registry::ResourceDef,
    semantics::selectors::{FieldSelector, LabelSelector},
};

/// A compiled list/watch filter.
pub struct Filter {
    labels: LabelSelector,
    fields: FieldSelector,
    /// Whether fields are read from the computed field set of Events (kube-apiserver's
    /// `ToSelectableFields`) rather than from object paths.
    event_fields: bool,
}

impl Filter {
    /// Parses the selectors of `options`, rejecting field labels the resource does not support.
    pub fn new(def: &ResourceDef, options: &ListOptions) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(&options.label_selector)
            .map_err(|error| ApiError::bad_request(format!("unable to parse requirement: {error}")))?;
        let fields = FieldSelector::parse(&options.field_selector)
            .map_err(|error| ApiError::bad_request(format!("invalid field selector: {error}")))?;
        let supported = supported_fields(def);
        for field in fields.fields() {
            if !supported.contains(&field.as_str()) && !custom_selectable(def, &field) {
                return Err(ApiError::bad_request(format!("field label not supported: {field}")));
            }
        }
        let event_fields = !def.is_custom() && def.kind == "Event";
        Ok(Self { labels, fields, event_fields })
    }

    /// Whether the (stored) object passes both selectors.
    pub fn matches(&self, object: &Value) -> bool {
        if !self.labels.matches_object(object) {
            return false;
        }
        if self.event_fields && !self.fields.is_empty() {
            return self.fields.matches_fields(&events::selectable_fields(object));
        }
        self.fields.matches_object(object)
    }
}

fn custom_selectable(def: &ResourceDef, field: &str) -> bool {
    def.crd.as_ref().is_some_and(|crd| {
        crd.spec.versions.iter().any(|version| {
            version
                .selectable_fields
                .iter()
                .flatten()
                .any(|selectable| selectable.json_path.trim_start_matches('.') == field)
        })
    })
}

/// The field labels a resource can be selected by.
fn supported_fields(def: &ResourceDef) -> Vec<&'static str> {
    let mut fields = vec!["metadata.name", "metadata.namespace"];
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "Pod") => fields.extend([
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ]),
        ("", "Node") => fields.push("spec.unschedulable"),
        ("", "Namespace") => fields.push("status.phase"),
        ("", "Secret") => fields.push("type"),
        ("" | "events.k8s.io", "Event") => return events::supported_fields(&def.group).to_vec(),
        ("batch", "Job") => fields.push("status.successful"),
        _ => {}
    }
    fields
}

/// Where an object sits in list order: (namespace, name).
pub fn position(object: &Value) -> (String, String) {
    (
        objects::namespace(object).unwrap_or_default().to_string(),
        objects::name(object).unwrap_or_default().to_string(),
    )
}

/// A continue token: the list's resourceVersion and the last position returned.
pub fn encode_continue(rv: u64, after: &(String, String)) -> String {
    let token =
        serde_json::json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{}/{}", after.0, after.1)});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token.to_string())
}

/// The position a continue token resumes after; None for no token.
pub fn decode_continue(token: &str) -> Result<Option<(String, String)>, ApiError> {
    if token.is_empty() {
        return Ok(None);
    }
    let invalid = || {
        ApiError::bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        )
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).map_err(|_| invalid())?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    let start = value.get("start").and_then(Value::as_str).ok_or_else(invalid)?;
    let (namespace, name) = start.split_once('/').ok_or_else(invalid)?;
    Ok(Some((namespace.to_string(), name.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip() {
        let token = encode_continue(42, &("ns".into(), "pod-7".into()));
        assert_eq!(decode_continue(&token).unwrap(), Some(("ns".into(), "pod-7".into())));
        assert_eq!(decode_continue("").unwrap(), None);
        assert_eq!(decode_continue("not-a-token!").unwrap_err().code, 400);
    }
}
