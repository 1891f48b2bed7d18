//! A strategic merge patch of a pod, enough for a WorkloadSpread subset's `patch`: objects are
//! merged key by key (`null` deletes a key), the pod's lists that Kubernetes merges by a key
//! (containers by `name`, volume mounts by `mountPath`, ...) are merged element by element (an
//! element with `"$patch": "delete"` removes its match), and every other list is replaced. The
//! embedded API server's full implementation lives in the control plane crate, which the
//! controllers do not depend on; the other directives (`$retainKeys`, `$setElementOrder`,
//! `$deleteFromPrimitiveList`) are dropped.

use serde_json::{Map, Value};

/// The key a pod list is merged by, from the field's name (`None`: the list is replaced).
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "resourceClaims"
        | "readinessGates" => {
            if field == "readinessGates" {
                "conditionType"
            } else {
                "name"
            }
        }
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "ports" => "containerPort",
        "hostAliases" => "ip",
        "topologySpreadConstraints" => "topologyKey",
        "ownerReferences" => "uid",
        _ => return None,
    })
}

const DIRECTIVE: &str = "$patch";

/// Applies `patch` to `target` (both pod JSON) in place.
pub fn merge_pod(target: &mut Value, patch: &Value) {
    if let (Value::Object(target), Value::Object(patch)) = (&mut *target, patch) {
        merge_map(target, patch);
    }
}

fn merge_map(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    if patch.get(DIRECTIVE).and_then(Value::as_str) == Some("replace") {
        *target =
            patch.iter().filter(|(k, _)| !k.starts_with('$')).map(|(k, v)| (k.clone(), v.clone())).collect();
        return;
    }
    for (key, value) in patch {
        if key.starts_with('$') {
            continue;
        }
        match value {
            Value::Null => {
                target.remove(key);
            }
            Value::Object(inner) => match target.get_mut(key) {
                Some(Value::Object(existing)) => merge_map(existing, inner),
                _ => {
                    let mut fresh = Map::new();
                    merge_map(&mut fresh, inner);
                    target.insert(key.clone(), Value::Object(fresh));
                }
            },
            Value::Array(items) => match (merge_key(key), target.get_mut(key)) {
                (Some(merge_by), Some(Value::Array(existing))) => merge_list(existing, items, merge_by),
                _ => {
                    let kept: Vec<Value> = items
                        .iter()
                        .filter(|item| item.get(DIRECTIVE).and_then(Value::as_str) != Some("delete"))
                        .map(strip_directives)
                        .collect();
                    target.insert(key.clone(), Value::Array(kept));
                }
            },
            other => {
                target.insert(key.clone(), other.clone());
            }
        }
    }
}

fn merge_list(existing: &mut Vec<Value>, items: &[Value], merge_by: &str) {
    for item in items {
        let Some(fields) = item.as_object() else {
            existing.push(item.clone());
            continue;
        };
        let wanted = fields.get(merge_by);
        let position = wanted
            .and_then(|wanted| existing.iter().position(|candidate| candidate.get(merge_by) == Some(wanted)));
        let delete = fields.get(DIRECTIVE).and_then(Value::as_str) == Some("delete");
        match (position, delete) {
            (Some(index), true) => {
                existing.remove(index);
            }
            (None, true) => {}
            (Some(index), false) => {
                if let Some(Value::Object(current)) = existing.get_mut(index) {
                    merge_map(current, fields);
                }
            }
            (None, false) => existing.push(strip_directives(item)),
        }
    }
}

fn strip_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, member)| !key.starts_with('$') && !member.is_null())
                .map(|(key, member)| (key.clone(), strip_directives(member)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn strategic_merge_of_a_pod_table() {
        let cases = [
            (
                "labels and annotations merge",
                json!({"metadata": {"labels": {"a": "1"}}}),
                json!({"metadata": {"labels": {"b": "2"}, "annotations": {"subset": "zone-a"}}}),
                json!({"metadata": {"labels": {"a": "1", "b": "2"}, "annotations": {"subset": "zone-a"}}}),
            ),
            (
                "null deletes a key",
                json!({"metadata": {"labels": {"a": "1", "b": "2"}}}),
                json!({"metadata": {"labels": {"b": null}}}),
                json!({"metadata": {"labels": {"a": "1"}}}),
            ),
            (
                "containers merge by name",
                json!({"spec": {"containers": [{"name": "main", "image": "nginx", "env": [{"name": "A", "value": "1"}]}]}}),
                json!({"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "2"}}, "env": [{"name": "B", "value": "2"}]}]}}),
                json!({"spec": {"containers": [{"name": "main", "image": "nginx", "resources": {"limits": {"cpu": "2"}}, "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]}}),
            ),
            (
                "a $patch delete element removes its match",
                json!({"spec": {"volumes": [{"name": "a"}, {"name": "b"}]}}),
                json!({"spec": {"volumes": [{"name": "a", "$patch": "delete"}]}}),
                json!({"spec": {"volumes": [{"name": "b"}]}}),
            ),
            (
                "lists without a merge key are replaced",
                json!({"spec": {"tolerations": [{"key": "a"}]}}),
                json!({"spec": {"tolerations": [{"key": "b"}]}}),
                json!({"spec": {"tolerations": [{"key": "b"}]}}),
            ),
        ];
        for (name, mut target, patch, want) in cases {
            merge_pod(&mut target, &patch);
            assert_eq!(target, want, "{name}");
        }
    }
}
