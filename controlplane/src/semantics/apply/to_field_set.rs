//! The fields a value sets (structured-merge-diff's ToFieldSet).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{
    fieldpath::{FieldSet, Pe, path_to_string},
    list_types::{ListKind, ListTypes, Schema, element_path, field_path, list_item_pe},
};

/// The fields a value sets (structured-merge-diff's ToFieldSet).
pub(super) fn to_field_set(value: &Value, schema: &Schema) -> Result<FieldSet, String> {
    let mut set = FieldSet::default();
    let mut errors = Vec::new();
    field_set_walk(value, "", &mut Vec::new(), &mut set, schema, &mut errors);
    match errors.first() {
        Some(first) => Err(first.clone()),
        None => Ok(set),
    }
}

fn field_set_walk(
    value: &Value,
    schema_path: &str,
    path: &mut Vec<Pe>,
    set: &mut FieldSet,
    schema: &Schema,
    errors: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            if schema.is_atomic(schema_path) {
                set.insert(path);
                return;
            }
            let is_map = schema.is_map(schema_path);
            for (key, child) in map {
                path.push(Pe::Field(key.clone()));
                field_set_walk(child, &field_path(schema_path, key), path, set, schema, errors);
                let empty_object = child.as_object().is_some_and(Map::is_empty);
                if child.is_null() || empty_object || is_map {
                    set.insert(path);
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            let kind = schema.list_kind(schema_path);
            if matches!(kind, ListKind::Atomic) {
                set.insert(path);
                return;
            }
            let mut pes = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                match list_item_pe(item, &kind, schema_path, schema) {
                    Ok(pe) => pes.push(Some(pe)),
                    Err(err) => {
                        errors.push(format!("{}: element {index}: {err}", path_to_string(path)));
                        pes.push(None);
                    }
                }
            }
            let mut seen = BTreeSet::new();
            let mut duplicates = BTreeSet::new();
            for pe in pes.iter().flatten() {
                if !seen.insert(pe.clone()) && duplicates.insert(pe.clone()) {
                    path.push(pe.clone());
                    set.insert(path);
                    path.pop();
                }
            }
            let child_path = element_path(schema_path);
            for (item, pe) in items.iter().zip(pes) {
                let Some(pe) = pe else { continue };
                if duplicates.contains(&pe) {
                    continue;
                }
                path.push(pe);
                field_set_walk(item, &child_path, path, set, schema, errors);
                set.insert(path);
                path.pop();
            }
        }
        _ => set.insert(path),
    }
}
