//! What a change added, modified and removed (structured-merge-diff's Compare).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{
    fieldpath::{FieldSet, Pe, values_equal},
    list_types::{ListKind, ListTypes, Schema, element_path, field_path, list_item_pe},
};

#[derive(Default)]
pub(super) struct Comparison {
    pub(super) added: FieldSet,
    pub(super) modified: FieldSet,
    pub(super) removed: FieldSet,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Object,
    List,
    Scalar,
}

pub(super) fn shape(value: &Value) -> Option<Shape> {
    match value {
        Value::Object(_) => Some(Shape::Object),
        Value::Array(_) => Some(Shape::List),
        Value::Null => None,
        _ => Some(Shape::Scalar),
    }
}

/// The fields `rhs` added, modified and removed relative to `lhs` (structured-merge-diff's
/// Compare).
pub(super) fn compare(lhs: &Value, rhs: &Value, schema: &Schema) -> Comparison {
    let mut out = Comparison::default();
    compare_walk(Some(lhs), Some(rhs), "", &mut Vec::new(), &mut out, schema);
    out
}

fn compare_walk(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    schema_path: &str,
    path: &mut Vec<Pe>,
    out: &mut Comparison,
    schema: &Schema,
) {
    // A null (or absent) side takes the shape of the other one.
    let left = lhs.and_then(shape);
    let right = rhs.and_then(shape);
    let mut in_leaf = false;
    match (left, right) {
        (Some(l), Some(r)) if l != r => {
            let mut copy_in_leaf = false;
            compare_shape(l, lhs, rhs, schema_path, path, out, schema, &mut copy_in_leaf);
            compare_shape(r, lhs, rhs, schema_path, path, out, schema, &mut in_leaf);
        }
        _ => {
            let chosen = right.or(left).unwrap_or(Shape::Scalar);
            compare_shape(chosen, lhs, rhs, schema_path, path, out, schema, &mut in_leaf);
        }
    }
    if !in_leaf {
        if lhs.is_none() {
            out.added.insert(path);
        } else if rhs.is_none() {
            out.removed.insert(path);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn compare_shape(
    kind: Shape,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    schema_path: &str,
    path: &mut Vec<Pe>,
    out: &mut Comparison,
    schema: &Schema,
    in_leaf: &mut bool,
) {
    let leaf = |out: &mut Comparison, path: &[Pe], in_leaf: &mut bool| {
        if *in_leaf {
            return;
        }
        *in_leaf = true;
        match (lhs, rhs) {
            (None, _) => out.added.insert(path),
            (_, None) => out.removed.insert(path),
            (Some(l), Some(r)) if !values_equal(l, r) => out.modified.insert(path),
            _ => {}
        }
    };
    match kind {
        Shape::Scalar => leaf(out, path, in_leaf),
        Shape::Object => {
            let left = lhs.and_then(Value::as_object);
            let right = rhs.and_then(Value::as_object);
            let empty = left.is_none_or(Map::is_empty) && right.is_none_or(Map::is_empty);
            if empty || schema.is_atomic(schema_path) {
                leaf(out, path, in_leaf);
                return;
            }
            let keys: BTreeSet<&String> = left.into_iter().chain(right).flat_map(|map| map.keys()).collect();
            for key in keys {
                path.push(Pe::Field(key.clone()));
                compare_walk(
                    left.and_then(|map| map.get(key)),
                    right.and_then(|map| map.get(key)),
                    &field_path(schema_path, key),
                    path,
                    out,
                    schema,
                );
                path.pop();
            }
        }
        Shape::List => {
            let left = lhs.and_then(Value::as_array);
            let right = rhs.and_then(Value::as_array);
            let empty = left.is_none_or(Vec::is_empty) && right.is_none_or(Vec::is_empty);
            let kind = schema.list_kind(schema_path);
            if empty || matches!(kind, ListKind::Atomic) {
                leaf(out, path, in_leaf);
                return;
            }
            compare_list_items(left, right, &kind, schema_path, path, out, schema);
        }
    }
}

fn compare_list_items(
    left: Option<&Vec<Value>>,
    right: Option<&Vec<Value>>,
    kind: &ListKind,
    schema_path: &str,
    path: &mut Vec<Pe>,
    out: &mut Comparison,
    schema: &Schema,
) {
    // Every element identity, once, with the elements carrying it on each side.
    let mut order: Vec<Pe> = Vec::new();
    let mut groups: BTreeMap<Pe, (Vec<&Value>, Vec<&Value>)> = BTreeMap::new();
    for (side, list) in [(0, left), (1, right)] {
        for item in list.into_iter().flatten() {
            let Ok(pe) = list_item_pe(item, kind, schema_path, schema) else { continue };
            let group = groups.entry(pe.clone()).or_insert_with(|| {
                order.push(pe);
                (Vec::new(), Vec::new())
            });
            if side == 0 { group.0.push(item) } else { group.1.push(item) }
        }
    }
    let child_path = element_path(schema_path);
    for pe in order {
        let Some((lefts, rights)) = groups.get(&pe) else { continue };
        path.push(pe);
        match (lefts.len(), rights.len()) {
            (l, r) if l <= 1 && r <= 1 => {
                compare_walk(lefts.first().copied(), rights.first().copied(), &child_path, path, out, schema)
            }
            (l, r) if l >= 2 && r >= 2 => {
                let same = l == r && lefts.iter().zip(rights.iter()).all(|(a, b)| values_equal(a, b));
                if !same {
                    out.modified.insert(path);
                }
            }
            (l, _) if l >= 2 => {
                if let Some(first) = rights.first() {
                    compare_walk(None, Some(first), &child_path, path, out, schema);
                }
                out.removed.insert(path);
            }
            _ => {
                if let Some(first) = lefts.first() {
                    compare_walk(Some(first), None, &child_path, path, out, schema);
                }
                out.added.insert(path);
            }
        }
        path.pop();
    }
}
