//! Defaulting: `default`s of a structural schema applied to absent fields, and the dropping of
//! `null`s the schema does not allow.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::Value;

use super::{
    accessors::{additional_schema, default_of, is_nullable, item_schema, properties, property},
    prune::prune_nested,
};

/// Applies `default`s from the schema to absent fields (and to `null` values of non-nullable
/// fields, which are dropped first as kube-apiserver does when they have no default), recursing
/// into objects, arrays and additionalProperties. Defaults are pruned against their own schema
/// before use, as kube-apiserver prunes them when it loads the CRD.
pub fn apply_defaults(object: &mut Value, schema: &JSONSchemaProps) {
    drop_non_nullable_nulls(object, Some(schema));
    default_value(object, schema);
}

/// Drops the `null`s of non-nullable fields without a default (apiextensions'
/// `PruneNonNullableNullsWithoutDefaults`): what kube-apiserver does to every custom resource it
/// decodes, conversion webhook output included, before validating it. Nulls the schema allows
/// (`nullable`, or inside `x-kubernetes-preserve-unknown-fields`) stay.
pub fn drop_disallowed_nulls(object: &mut Value, schema: &JSONSchemaProps) {
    drop_non_nullable_nulls(object, Some(schema));
}

fn schema_for_field<'s>(key: &str, s: Option<&'s JSONSchemaProps>) -> Option<&'s JSONSchemaProps> {
    let s = s?;
    property(s, key).or_else(|| additional_schema(s))
}

fn drop_non_nullable_nulls(value: &mut Value, schema: Option<&JSONSchemaProps>) {
    match value {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                let field_schema = schema_for_field(&key, schema);
                let drop = matches!(map.get(&key), Some(Value::Null))
                    && field_schema.is_some_and(|fs| !is_nullable(fs) && default_of(fs).is_none());
                if drop {
                    map.remove(&key);
                } else if let Some(item) = map.get_mut(&key) {
                    drop_non_nullable_nulls(item, field_schema);
                }
            }
        }
        Value::Array(items) => {
            let item_s = schema.and_then(item_schema);
            for item in items {
                drop_non_nullable_nulls(item, item_s);
            }
        }
        _ => {}
    }
}

fn pruned_default(default: &Value, schema: &JSONSchemaProps) -> Value {
    let mut value = default.clone();
    prune_nested(&mut value, schema);
    value
}

fn default_value(value: &mut Value, s: &JSONSchemaProps) {
    match value {
        Value::Object(map) => {
            for (key, prop) in properties(s) {
                let Some(default) = default_of(prop) else { continue };
                let apply = match map.get(key) {
                    None => true,
                    Some(Value::Null) => !is_nullable(prop),
                    Some(_) => false,
                };
                if apply {
                    map.insert(key.clone(), pruned_default(default, prop));
                }
            }
            let addl = additional_schema(s);
            for (key, item) in map.iter_mut() {
                if let Some(prop) = property(s, key) {
                    default_value(item, prop);
                } else if let Some(addl) = addl {
                    if item.is_null() && !is_nullable(addl) {
                        *item = default_of(addl).map(|d| pruned_default(d, addl)).unwrap_or(Value::Null);
                    }
                    default_value(item, addl);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_s) = item_schema(s) else { return };
            for item in items {
                if item.is_null() && !is_nullable(item_s) {
                    *item = default_of(item_s).map(|d| pruned_default(d, item_s)).unwrap_or(Value::Null);
                }
                default_value(item, item_s);
            }
        }
        _ => {}
    }
}
