//! Pruning: the removal of fields a structural schema does not declare.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::Value;

use super::accessors::{
    Additional, additional, is_embedded, is_meta_field, item_schema, preserves_unknown, property,
};

/// Removes fields the schema does not declare, except under `x-kubernetes-preserve-unknown-fields:
/// true` (and `x-kubernetes-embedded-resource` keeping apiVersion/kind/metadata); at the root,
/// `apiVersion`, `kind` and `metadata` are always kept. Returns the pruned field paths, sorted, in
/// kube-apiserver's notation (`spec.foo`, `spec.containers[0].bar`, without a leading dot) so that
/// the caller can answer `fieldValidation=Strict` requests with `unknown field "spec.foo"` errors
/// and `Warn` with warnings of the same text.
pub fn prune(object: &mut Value, schema: &JSONSchemaProps) -> Vec<String> {
    let mut pruner = Pruner { path: String::new(), unknown: Vec::new(), track: true };
    pruner.prune(object, Some(schema), true);
    pruner.unknown.sort();
    pruner.unknown
}

/// Prunes a value that is not a resource root (a default, a sub-tree), with no meta-field
/// exemption unless the schema itself is an embedded resource.
pub(super) fn prune_nested(value: &mut Value, schema: &JSONSchemaProps) {
    let mut pruner = Pruner { path: String::new(), unknown: Vec::new(), track: false };
    pruner.prune(value, Some(schema), false);
}

/// A pruning walk: the path it is at and, when `track` is on, the pruned fields it found.
pub(super) struct Pruner {
    pub(super) path: String,
    pub(super) unknown: Vec<String>,
    pub(super) track: bool,
}

impl Pruner {
    fn record(&mut self, key: &str) {
        if !self.track {
            return;
        }
        if self.path.is_empty() {
            self.unknown.push(key.to_string());
        } else {
            self.unknown.push(format!("{}.{key}", self.path));
        }
    }

    fn descend_key(&mut self, key: &str, value: &mut Value, schema: Option<&JSONSchemaProps>, skip: bool) {
        let len = self.path.len();
        if self.track {
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(key);
        }
        if skip {
            if let Some(schema) = schema {
                self.skip_prune(value, schema, false);
            }
        } else {
            self.prune(value, schema, false);
        }
        self.path.truncate(len);
    }

    fn descend_index(
        &mut self,
        index: usize,
        value: &mut Value,
        schema: Option<&JSONSchemaProps>,
        skip: bool,
    ) {
        let len = self.path.len();
        if self.track {
            self.path.push_str(&format!("[{index}]"));
        }
        if skip {
            if let Some(schema) = schema {
                self.skip_prune(value, schema, false);
            }
        } else {
            self.prune(value, schema, false);
        }
        self.path.truncate(len);
    }

    pub(super) fn prune(&mut self, value: &mut Value, schema: Option<&JSONSchemaProps>, resource_root: bool) {
        if let Some(s) = schema
            && preserves_unknown(s)
        {
            self.skip_prune(value, s, resource_root);
            return;
        }
        match value {
            Value::Object(map) => {
                let Some(s) = schema else {
                    let keys: Vec<String> = map.keys().cloned().collect();
                    for key in keys {
                        self.record(&key);
                    }
                    map.clear();
                    return;
                };
                let embedded = resource_root || is_embedded(s);
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    if embedded && is_meta_field(&key) {
                        continue;
                    }
                    let child_schema = match (property(s, &key), additional(s)) {
                        (Some(prop), _) => Some(Some(prop)),
                        (None, Additional::Schema(schema)) => Some(Some(schema)),
                        (None, Additional::Bool(_)) => Some(None),
                        (None, Additional::Absent) => None,
                    };
                    match child_schema {
                        Some(child) => {
                            if let Some(item) = map.get_mut(&key) {
                                self.descend_key(&key, item, child, false);
                            }
                        }
                        None => {
                            self.record(&key);
                            map.remove(&key);
                        }
                    }
                }
            }
            Value::Array(items) => {
                let item_s = schema.and_then(item_schema);
                for (index, item) in items.iter_mut().enumerate() {
                    self.descend_index(index, item, item_s, false);
                }
            }
            _ => {}
        }
    }

    fn skip_prune(&mut self, value: &mut Value, s: &JSONSchemaProps, resource_root: bool) {
        match value {
            Value::Object(map) => {
                let embedded = resource_root || is_embedded(s);
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    if embedded && is_meta_field(&key) {
                        continue;
                    }
                    let child_schema = match (property(s, &key), additional(s)) {
                        (Some(prop), _) => Some(Some(prop)),
                        (None, Additional::Schema(schema)) => Some(Some(schema)),
                        (None, Additional::Bool(_)) => Some(None),
                        (None, Additional::Absent) => None,
                    };
                    if let (Some(child), Some(item)) = (child_schema, map.get_mut(&key)) {
                        self.descend_key(&key, item, child, false);
                    }
                }
            }
            Value::Array(items) => {
                let item_s = item_schema(s);
                for (index, item) in items.iter_mut().enumerate() {
                    self.descend_index(index, item, item_s, true);
                }
            }
            _ => {}
        }
    }
}
