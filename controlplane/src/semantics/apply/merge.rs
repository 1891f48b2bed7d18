//! Merging an applied configuration into the live object, and removing fields from a value
//! (structured-merge-diff's Merge and RemoveItems).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{
    compare::{Shape, shape},
    fieldpath::{FieldSet, Pe, path_to_string},
    list_types::{ListKind, ListTypes, Schema, element_path, field_path, list_item_pe},
};

/// Merges `rhs` (the applied configuration) into `lhs` (the live object): structured-merge-diff's
/// Merge with the "keep the right-hand side" rule for leaves.
pub(super) fn merge(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    schema_path: &str,
    path: &mut Vec<Pe>,
    schema: &Schema,
) -> Result<Option<Value>, String> {
    let left = lhs.and_then(shape);
    let right = rhs.and_then(shape);
    let chosen = match (left, right) {
        // Mismatched kinds: the right-hand side's kind decides (the left one is evaluated and
        // dropped by structured-merge-diff).
        (_, Some(r)) => r,
        (Some(l), None) => l,
        (None, None) => Shape::Scalar,
    };
    let keep_rhs = || Ok(rhs.or(lhs).cloned());
    match chosen {
        Shape::Scalar => keep_rhs(),
        Shape::Object => {
            let left_map = lhs.and_then(Value::as_object);
            let right_map = rhs.and_then(Value::as_object);
            let empty = left_map.is_none_or(Map::is_empty) && right_map.is_none_or(Map::is_empty);
            if empty || schema.is_atomic(schema_path) {
                return keep_rhs();
            }
            let keys: BTreeSet<&String> =
                left_map.into_iter().chain(right_map).flat_map(|map| map.keys()).collect();
            let mut out = Map::new();
            for key in keys {
                path.push(Pe::Field(key.clone()));
                let merged = merge(
                    left_map.and_then(|map| map.get(key)),
                    right_map.and_then(|map| map.get(key)),
                    &field_path(schema_path, key),
                    path,
                    schema,
                )?;
                path.pop();
                if let Some(merged) = merged {
                    out.insert(key.clone(), merged);
                }
            }
            Ok(if out.is_empty() { None } else { Some(Value::Object(out)) })
        }
        Shape::List => {
            let left_list = lhs.and_then(Value::as_array);
            let right_list = rhs.and_then(Value::as_array);
            let empty = left_list.is_none_or(Vec::is_empty) && right_list.is_none_or(Vec::is_empty);
            let kind = schema.list_kind(schema_path);
            if empty || matches!(kind, ListKind::Atomic) {
                return keep_rhs();
            }
            let merged = merge_list_items(left_list, right_list, &kind, schema_path, path, schema)?;
            Ok(if merged.is_empty() { None } else { Some(Value::Array(merged)) })
        }
    }
}

/// The element identities of a list, in order. The live side may hold duplicates (they are not
/// merged with the configuration); the configuration may not.
fn index_list(
    list: Option<&Vec<Value>>,
    kind: &ListKind,
    schema_path: &str,
    path: &[Pe],
    schema: &Schema,
    allow_duplicates: bool,
) -> Result<(Vec<Pe>, BTreeMap<Pe, Value>), String> {
    let mut pes = Vec::new();
    let mut observed: BTreeMap<Pe, Value> = BTreeMap::new();
    for (index, item) in list.into_iter().flatten().enumerate() {
        let pe = list_item_pe(item, kind, schema_path, schema)
            .map_err(|err| format!("{}: element {index}: {err}", path_to_string(path)))?;
        if observed.contains_key(&pe) {
            if !allow_duplicates {
                return Err(format!("{}: duplicate entries for key {pe}", path_to_string(path)));
            }
            observed.insert(pe.clone(), Value::Null);
        } else {
            observed.insert(pe.clone(), item.clone());
        }
        pes.push(pe);
    }
    Ok((pes, observed))
}

fn merge_list_items(
    left: Option<&Vec<Value>>,
    right: Option<&Vec<Value>>,
    kind: &ListKind,
    schema_path: &str,
    path: &mut Vec<Pe>,
    schema: &Schema,
) -> Result<Vec<Value>, String> {
    let (right_pes, observed_right) = index_list(right, kind, schema_path, path, schema, false)?;
    let (left_pes, observed_left) = index_list(left, kind, schema_path, path, schema, true)?;
    let child_path = element_path(schema_path);
    let mut shared: std::collections::VecDeque<&Pe> =
        right_pes.iter().filter(|pe| observed_left.contains_key(pe)).collect();
    let mut next_shared = shared.pop_front();
    let mut merged_right: BTreeSet<Pe> = BTreeSet::new();
    let mut out = Vec::new();
    let (mut li, mut ri) = (0, 0);
    let mut merge_item = |pe: &Pe, l: Option<&Value>, r: Option<&Value>, out: &mut Vec<Value>| {
        path.push(pe.clone());
        let merged = merge(l, r, &child_path, path, schema);
        path.pop();
        if let Some(value) = merged? {
            out.push(value);
        }
        Ok::<(), String>(())
    };
    while li < left_pes.len() || ri < right_pes.len() {
        if li < left_pes.len() && ri < right_pes.len() {
            let pe = &left_pes[li];
            if *pe == right_pes[ri] {
                merged_right.insert(pe.clone());
                merge_item(pe, observed_left.get(pe), observed_right.get(pe), &mut out)?;
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if observed_right.contains_key(pe) && next_shared.is_some_and(|shared_pe| shared_pe != pe) {
                li += 1;
                continue;
            }
        }
        if li < left_pes.len() {
            let pe = &left_pes[li];
            if !observed_right.contains_key(pe) {
                let item = left.and_then(|items| items.get(li));
                merge_item(pe, item, None, &mut out)?;
                li += 1;
                continue;
            } else if merged_right.contains(pe) {
                li += 1;
            }
        }
        if ri < right_pes.len() {
            let pe = &right_pes[ri];
            merged_right.insert(pe.clone());
            merge_item(pe, observed_left.get(pe), observed_right.get(pe), &mut out)?;
            ri += 1;
            if next_shared.is_some_and(|shared_pe| shared_pe == pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    Ok(out)
}

/// Removes the members of `set` (with everything below them) from a value
/// (structured-merge-diff's RemoveItems). `None` stands for a value that became empty.
pub(super) fn remove_items(
    value: &Value,
    set: &FieldSet,
    schema_path: &str,
    schema: &Schema,
) -> Option<Value> {
    match value {
        Value::Object(map) => {
            if map.is_empty() || schema.is_atomic(schema_path) {
                return None;
            }
            let mut out = Map::new();
            for (key, child) in map {
                let pe = Pe::Field(key.clone());
                if set.members.contains(&pe) {
                    continue;
                }
                let kept = match set.child(&pe) {
                    Some(subset) => remove_items(child, subset, &field_path(schema_path, key), schema)
                        .unwrap_or(Value::Null),
                    None => child.clone(),
                };
                out.insert(key.clone(), kept);
            }
            if out.is_empty() { None } else { Some(Value::Object(out)) }
        }
        Value::Array(items) => {
            let kind = schema.list_kind(schema_path);
            if items.is_empty() || matches!(kind, ListKind::Atomic) {
                return None;
            }
            let child_path = element_path(schema_path);
            let mut out = Vec::new();
            for item in items {
                let Ok(pe) = list_item_pe(item, &kind, schema_path, schema) else {
                    out.push(item.clone());
                    continue;
                };
                if set.members.contains(&pe) {
                    continue;
                }
                match set.child(&pe) {
                    Some(subset) => {
                        out.push(remove_items(item, subset, &child_path, schema).unwrap_or(Value::Null))
                    }
                    None => out.push(item.clone()),
                }
            }
            if out.is_empty() { None } else { Some(Value::Array(out)) }
        }
        scalar => Some(scalar.clone()),
    }
}
