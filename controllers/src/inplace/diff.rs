//! Structural JSON differences: the operations that turn one pod template into another (what
//! upstream gets from a JSON patch between two revisions), and the strategic-merge patch that
//! carries a template's metadata change onto a pod.

use serde_json::{Map, Value};

/// Kind of a difference, as a JSON patch would name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// The path exists only in the new document.
    Add,
    /// The path exists only in the old document.
    Remove,
    /// The path exists in both with different values.
    Replace,
}

/// One difference between two JSON documents.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffOp {
    /// What happened at the path.
    pub kind: OpKind,
    /// Path segments (object keys and array indexes), unescaped.
    pub path: Vec<String>,
    /// The new value (`None` for a removal).
    pub value: Option<Value>,
}

/// Every difference between `old` and `new`: objects key by key, arrays index by index, other
/// values (and values of different types) replaced whole.
pub fn diff(old: &Value, new: &Value) -> Vec<DiffOp> {
    let mut ops = Vec::new();
    diff_into(old, new, &mut Vec::new(), &mut ops);
    ops
}

fn diff_into(old: &Value, new: &Value, path: &mut Vec<String>, ops: &mut Vec<DiffOp>) {
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            for (key, old_value) in old {
                path.push(key.clone());
                match new.get(key) {
                    Some(new_value) => diff_into(old_value, new_value, path, ops),
                    None => ops.push(DiffOp { kind: OpKind::Remove, path: path.clone(), value: None }),
                }
                path.pop();
            }
            for (key, new_value) in new {
                if !old.contains_key(key) {
                    path.push(key.clone());
                    ops.push(DiffOp {
                        kind: OpKind::Add,
                        path: path.clone(),
                        value: Some(new_value.clone()),
                    });
                    path.pop();
                }
            }
        }
        (Value::Array(old), Value::Array(new)) => {
            for index in 0..old.len().max(new.len()) {
                path.push(index.to_string());
                match (old.get(index), new.get(index)) {
                    (Some(o), Some(n)) => diff_into(o, n, path, ops),
                    (Some(_), None) => {
                        ops.push(DiffOp { kind: OpKind::Remove, path: path.clone(), value: None })
                    }
                    (None, Some(n)) => {
                        ops.push(DiffOp { kind: OpKind::Add, path: path.clone(), value: Some(n.clone()) })
                    }
                    (None, None) => {}
                }
                path.pop();
            }
        }
        (old, new) if old != new => {
            ops.push(DiffOp { kind: OpKind::Replace, path: path.clone(), value: Some(new.clone()) })
        }
        _ => {}
    }
}

/// The strategic-merge patch (`{"metadata": {...}}`) that turns a pod's metadata `old` into
/// `new`, as `CreateTwoWayMergePatch` writes it for ObjectMeta: label and annotation keys set or
/// nulled; `finalizers` (a merged primitive list) through `$setElementOrder/finalizers`, the
/// added items and `$deleteFromPrimitiveList/finalizers`; any other field set to its new value
/// or nulled. `None` when nothing differs.
pub fn metadata_merge_patch(old: &Map<String, Value>, new: &Map<String, Value>) -> Option<Value> {
    let mut patch = Map::new();
    for (key, old_value) in old {
        if !new.contains_key(key) {
            // A whole map going away deletes only its keys: a `null` map would also wipe the
            // labels and annotations other writers keep on the pod.
            let removed = match (key.as_str(), old_value) {
                ("labels" | "annotations", Value::Object(o)) => {
                    Value::Object(o.keys().map(|k| (k.clone(), Value::Null)).collect())
                }
                _ => Value::Null,
            };
            patch.insert(key.clone(), removed);
        } else if let Some(new_value) = new.get(key)
            && new_value != old_value
        {
            match (key.as_str(), old_value, new_value) {
                ("labels" | "annotations", Value::Object(o), Value::Object(n)) => {
                    let mut entries = Map::new();
                    for k in o.keys().filter(|k| !n.contains_key(*k)) {
                        entries.insert(k.clone(), Value::Null);
                    }
                    for (k, v) in n.iter().filter(|(k, v)| o.get(*k) != Some(*v)) {
                        entries.insert(k.clone(), v.clone());
                    }
                    patch.insert(key.clone(), Value::Object(entries));
                }
                ("finalizers", Value::Array(o), Value::Array(n)) => {
                    let added: Vec<Value> = n.iter().filter(|v| !o.contains(v)).cloned().collect();
                    let deleted: Vec<Value> = o.iter().filter(|v| !n.contains(v)).cloned().collect();
                    if !deleted.is_empty() {
                        patch.insert("$deleteFromPrimitiveList/finalizers".into(), Value::Array(deleted));
                    }
                    patch.insert("$setElementOrder/finalizers".into(), Value::Array(n.clone()));
                    if !added.is_empty() {
                        patch.insert(key.clone(), Value::Array(added));
                    }
                }
                _ => {
                    patch.insert(key.clone(), new_value.clone());
                }
            }
        }
    }
    for (key, new_value) in new {
        if !old.contains_key(key) {
            patch.insert(key.clone(), new_value.clone());
        }
    }
    (!patch.is_empty())
        .then(|| Value::Object([("metadata".to_string(), Value::Object(patch))].into_iter().collect()))
}

/// Merges `overlay` into `base` as a JSON merge patch would (objects key by key, anything else
/// replaced), so that several partial patches of one object become one request.
pub fn merge_into(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(&key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge_into(existing, value)
                    }
                    _ => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, overlay) => *base = overlay,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    fn ops(old: Value, new: Value) -> Vec<(OpKind, String, Option<Value>)> {
        diff(&old, &new).into_iter().map(|op| (op.kind, op.path.join("/"), op.value)).collect()
    }

    #[test]
    fn differences() {
        use OpKind::*;
        let cases = [
            (json!({"a": 1}), json!({"a": 1}), vec![]),
            (json!({"a": 1}), json!({"a": 2}), vec![(Replace, "a".to_string(), Some(json!(2)))]),
            (
                json!({"a": 1}),
                json!({"b": 1}),
                vec![(Remove, "a".into(), None), (Add, "b".into(), Some(json!(1)))],
            ),
            (
                json!({"c": [{"n": "x", "i": "a"}]}),
                json!({"c": [{"n": "x", "i": "b"}]}),
                vec![(Replace, "c/0/i".into(), Some(json!("b")))],
            ),
            (json!({"c": [1]}), json!({"c": [1, 2]}), vec![(Add, "c/1".into(), Some(json!(2)))]),
            (json!({"c": [1, 2]}), json!({"c": [1]}), vec![(Remove, "c/1".into(), None)]),
            (json!({"a": {"b": 1}}), json!({"a": "s"}), vec![(Replace, "a".into(), Some(json!("s")))]),
            (
                json!({"labels": {"a/b": "1"}}),
                json!({"labels": {"a/b": "2"}}),
                vec![(Replace, "labels/a/b".into(), Some(json!("2")))],
            ),
        ];
        for (old, new, expected) in cases {
            assert_eq!(ops(old.clone(), new.clone()), expected, "{old} -> {new}");
        }
    }

    #[test]
    fn metadata_patches() {
        let as_map = |v: Value| v.as_object().cloned().unwrap();
        let cases = [
            (json!({"labels": {"k": "v"}}), json!({"labels": {"k": "v"}}), None),
            (
                json!({"labels": {"k": "v"}}),
                json!({"labels": {"k": "v", "k1": "v1"}}),
                Some(json!({"metadata": {"labels": {"k1": "v1"}}})),
            ),
            // Upstream TestCalculateInPlaceUpdateSpec: finalizers and a removed label.
            (
                json!({"labels": {"k": "v", "k2": "v2"}, "finalizers": ["fz1", "fz2"]}),
                json!({"labels": {"k": "v", "k1": "v1"}, "finalizers": ["fz2"]}),
                Some(json!({"metadata": {
                    "$deleteFromPrimitiveList/finalizers": ["fz1"],
                    "$setElementOrder/finalizers": ["fz2"],
                    "labels": {"k1": "v1", "k2": null}
                }})),
            ),
            (
                json!({"finalizers": ["a"]}),
                json!({"finalizers": ["a", "b"]}),
                Some(json!({"metadata": {"$setElementOrder/finalizers": ["a", "b"], "finalizers": ["b"]}})),
            ),
            (
                json!({"annotations": {"x": "1"}}),
                json!({}),
                Some(json!({"metadata": {"annotations": {"x": null}}})),
            ),
            (json!({"name": "a"}), json!({}), Some(json!({"metadata": {"name": null}}))),
            (
                json!({}),
                json!({"annotations": {"x": "1"}}),
                Some(json!({"metadata": {"annotations": {"x": "1"}}})),
            ),
        ];
        for (old, new, expected) in cases {
            assert_eq!(
                metadata_merge_patch(&as_map(old.clone()), &as_map(new.clone())),
                expected,
                "{old} -> {new}"
            );
        }
    }

    #[test]
    fn merging_patches() {
        let mut base = json!({"metadata": {"labels": {"a": "1"}, "x": [1]}, "spec": {}});
        merge_into(&mut base, json!({"metadata": {"labels": {"b": null}, "x": [2]}}));
        assert_eq!(base, json!({"metadata": {"labels": {"a": "1", "b": null}, "x": [2]}, "spec": {}}));
    }
}
