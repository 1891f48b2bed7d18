//! Which objects a list or watch returns: label and field selectors (with the field labels each
//! resource supports and their values, as kube-apiserver has them) and `continue` tokens for
//! pagination.

use base64::Engine;
use serde_json::Value;

use super::{errors::ApiError, events, objects, options::ListOptions};
use crate::{
    registry::ResourceDef,
    semantics::{
        field_sets,
        selectors::{FieldSelector, LabelSelector},
    },
};

/// A compiled list/watch filter.
pub struct Filter {
    labels: LabelSelector,
    fields: FieldSelector,
    /// Where field values come from.
    source: FieldSource,
}

/// How an object's field label values are read.
enum FieldSource {
    /// A built-in kind's selectable field set (absent fields read as their zero value).
    Builtin { group: String, kind: String, namespaced: bool },
    /// The computed field set of Events (kube-apiserver's `ToSelectableFields` for them).
    Event,
    /// A custom resource: metadata and its selectable fields, read at their paths.
    Custom,
}

impl Filter {
    /// Parses the selectors of `options`, rejecting field labels the resource does not support
    /// with the message kube-apiserver gives.
    pub fn new(def: &ResourceDef, options: &ListOptions) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(&options.label_selector)
            .map_err(|error| ApiError::bad_request(format!("unable to parse requirement: {error}")))?;
        let fields = FieldSelector::parse(&options.field_selector)
            .map_err(|error| ApiError::bad_request(format!("invalid field selector: {error}")))?;
        let source = if def.is_custom() {
            FieldSource::Custom
        } else if def.kind == "Event" {
            FieldSource::Event
        } else {
            FieldSource::Builtin {
                group: def.group.clone(),
                kind: def.kind.clone(),
                namespaced: def.namespaced,
            }
        };
        for field in fields.fields() {
            let supported = match &source {
                FieldSource::Custom => {
                    field == "metadata.name"
                        || (def.namespaced && field == "metadata.namespace")
                        || custom_selectable(def, &field)
                }
                FieldSource::Event => events::supported_fields(&def.group).contains(&field.as_str()),
                FieldSource::Builtin { group, kind, .. } => {
                    field_sets::supported_labels(group, kind).contains(&field.as_str())
                }
            };
            if !supported {
                return Err(ApiError::bad_request(field_sets::unsupported_label_message(
                    def.storage_group(),
                    &def.kind,
                    &field,
                )));
            }
        }
        Ok(Self { labels, fields, source })
    }

    /// Whether the (stored) object passes both selectors.
    pub fn matches(&self, object: &Value) -> bool {
        if !self.labels.matches_object(object) {
            return false;
        }
        if self.fields.is_empty() {
            return true;
        }
        match &self.source {
            FieldSource::Event => self.fields.matches_fields(&events::selectable_fields(object)),
            FieldSource::Builtin { group, kind, namespaced } => {
                self.fields.matches_fields(&field_sets::selectable_fields(group, kind, *namespaced, object))
            }
            FieldSource::Custom => self.fields.matches_object(object),
        }
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
