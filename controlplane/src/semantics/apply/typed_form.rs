//! The form kube-apiserver compares objects in: built-in kinds as Go typed values (zero-value
//! fields present, optional empty ones absent), custom resources as they are.

use serde_json::Value;

use super::list_types::{ListTypes, Schema, element_path, field_path};
use crate::semantics::merge_keys::ZeroValue;

/// An object in the form kube-apiserver compares it. Built-in kinds are compared as Go values:
/// optional fields that are null, empty lists or maps, or `omitempty` scalars holding their zero
/// are absent, and the fields the zero value always carries are present (see
/// [`ListTypes::zero_value_fields`]).
pub(super) fn typed_form(value: &Value, schema: &Schema) -> Value {
    let mut typed = value.clone();
    if schema.is_typed() {
        to_typed_form(&mut typed, "", schema);
    }
    typed
}

fn to_typed_form(value: &mut Value, schema_path: &str, schema: &Schema) {
    match value {
        Value::Object(map) => {
            if !schema.is_map(schema_path) {
                let zeros = schema.zero_value_fields(schema_path);
                let zero_of = |key: &str| zeros.iter().find(|(name, _)| name == key).map(|(_, zero)| zero);
                map.retain(|key, member| {
                    let zero = zero_of(key);
                    let omitted = zero == Some(&ZeroValue::Omitted);
                    let in_zero_value = zero.is_some() && !omitted;
                    match member {
                        Value::Null => in_zero_value,
                        Value::Array(items) if items.is_empty() => in_zero_value,
                        Value::Object(entries) if entries.is_empty() => {
                            in_zero_value || !schema.is_map(&field_path(schema_path, key))
                        }
                        Value::String(text) if text.is_empty() => !omitted,
                        Value::Bool(false) => !omitted,
                        Value::Number(number) if number.as_f64() == Some(0.0) => !omitted,
                        _ => true,
                    }
                });
                for (name, zero) in zeros {
                    if zero == ZeroValue::Omitted {
                        continue;
                    }
                    let slot = map.entry(name).or_insert(Value::Null);
                    if slot.is_null() {
                        *slot = zero.to_value();
                    }
                }
            }
            for (key, child) in map.iter_mut() {
                to_typed_form(child, &field_path(schema_path, key), schema);
            }
        }
        Value::Array(items) => {
            let child_path = element_path(schema_path);
            for item in items {
                to_typed_form(item, &child_path, schema);
            }
        }
        _ => {}
    }
}

/// Drops null members and null list elements (what decoding into the typed object does).
pub(super) fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, member| !member.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => {
            items.retain(|item| !item.is_null());
            items.iter_mut().for_each(drop_nulls);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::semantics::{apply::list_types::DeducedListTypes, merge_keys};

    #[test]
    fn built_ins_compare_in_typed_form() {
        let meta = match merge_keys::kind_patch_meta("apps", "Deployment") {
            Some(meta) => meta,
            None => panic!("no Deployment metadata"),
        };
        let schema = Schema::new(meta);
        let stored = json!({
            "metadata": {"name": "d", "labels": {}},
            "spec": {
                "paused": false,
                "replicas": 0,
                "template": {"spec": {"containers": [{"name": "c", "env": []}]}}
            },
            "status": {"replicas": 0}
        });
        assert_eq!(
            typed_form(&stored, &schema),
            json!({
                "metadata": {"name": "d", "creationTimestamp": null},
                "spec": {
                    "replicas": 0,
                    "selector": null,
                    "strategy": {},
                    "template": {
                        "metadata": {"creationTimestamp": null},
                        "spec": {"containers": [{"name": "c", "resources": {}}]}
                    }
                },
                "status": {}
            })
        );
        let custom = Schema::new(&DeducedListTypes);
        assert_eq!(typed_form(&stored, &custom), stored, "custom resources compare as they are");
    }
}
