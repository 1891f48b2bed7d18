//! How kube-apiserver's printers render values in table cells: ages, label maps, label
//! selectors, container lists, quantities and booleans.

use std::time::SystemTime;

use serde_json::Value;

use crate::semantics::jsonpath::{human_duration, parse_rfc3339};

/// The current time in Unix seconds (the reference for every age in a table).
pub fn now_seconds() -> i64 {
    match SystemTime::now().duration_since(SystemTime::UNIX_EPOCH) {
        Ok(elapsed) => i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

/// The text at a JSON pointer ("" when absent or not a string).
pub fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// The integer at a JSON pointer (0 when absent).
pub fn int(object: &Value, pointer: &str) -> i64 {
    object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// The array at a JSON pointer (empty when absent).
pub fn list<'a>(object: &'a Value, pointer: &str) -> &'a [Value] {
    object.pointer(pointer).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The number of entries of the map or list at a JSON pointer.
pub fn count(object: &Value, pointer: &str) -> i64 {
    let len = match object.pointer(pointer) {
        Some(Value::Object(map)) => map.len(),
        Some(Value::Array(items)) => items.len(),
        _ => 0,
    };
    i64::try_from(len).unwrap_or(i64::MAX)
}

/// A timestamp in Unix seconds; None when unset (absent, null, empty) or unreadable.
pub fn timestamp(object: &Value, pointer: &str) -> Option<i64> {
    object.pointer(pointer).and_then(Value::as_str).filter(|t| !t.is_empty()).and_then(parse_rfc3339)
}

/// The time since the timestamp at `pointer` (`5m`, `2d3h`), or `<unknown>` when it is unset.
pub fn since(object: &Value, pointer: &str, now: i64) -> String {
    match timestamp(object, pointer) {
        Some(at) => human_duration(now - at),
        None => "<unknown>".into(),
    }
}

/// The age of an object.
pub fn age(object: &Value, now: i64) -> String {
    since(object, "/metadata/creationTimestamp", now)
}

/// A label map as `k1=v1,k2=v2` (sorted by key), `<none>` when empty.
pub fn labels(map: Option<&Value>) -> String {
    let pairs: Vec<String> = map
        .and_then(Value::as_object)
        .map(|map| {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            entries
                .into_iter()
                .map(|(key, value)| format!("{key}={}", value.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() { "<none>".into() } else { pairs.join(",") }
}

/// A `metav1.LabelSelector` as selector text (`app=web,tier in (a,b),!legacy`): "" for an absent
/// or empty selector, None for one that does not convert (unknown operator, missing values).
pub fn selector(selector: Option<&Value>) -> Option<String> {
    let Some(selector) = selector.filter(|s| s.is_object()) else { return Some(String::new()) };
    let mut terms: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (key, value) in labels {
            terms.push((key.clone(), format!("{key}={}", value.as_str().unwrap_or_default())));
        }
    }
    for expression in selector.get("matchExpressions").and_then(Value::as_array).into_iter().flatten() {
        let key = text(expression, "/key").to_string();
        let mut values: Vec<&str> =
            list(expression, "/values").iter().map(|v| v.as_str().unwrap_or_default()).collect();
        values.sort_unstable();
        values.dedup();
        let term = match text(expression, "/operator") {
            "In" | "NotIn" if values.is_empty() => return None,
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" if values.is_empty() => key.clone(),
            "DoesNotExist" if values.is_empty() => format!("!{key}"),
            _ => return None,
        };
        terms.push((key, term));
    }
    terms.sort_by(|a, b| a.0.cmp(&b.0));
    Some(terms.into_iter().map(|(_, term)| term).collect::<Vec<_>>().join(","))
}

/// A label selector as the printers' `Selector` columns show it: `<none>` when it selects
/// everything (or is absent), `<error>` when it does not convert.
pub fn selector_column(value: Option<&Value>) -> String {
    match selector(value) {
        Some(text) if text.is_empty() => "<none>".into(),
        Some(text) => text,
        None => "<error>".into(),
    }
}

/// The `Containers` and `Images` cells of a pod template: names and images joined by commas.
pub fn containers(pod_spec: Option<&Value>) -> (String, String) {
    let containers = pod_spec.map(|spec| list(spec, "/containers")).unwrap_or_default();
    let names: Vec<&str> = containers.iter().map(|c| text(c, "/name")).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(c, "/image")).collect();
    (names.join(","), images.join(","))
}

/// A quantity as written (`0` when absent).
pub fn quantity(object: &Value, pointer: &str) -> String {
    match object.pointer(pointer) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(number)) => number.to_string(),
        _ => "0".into(),
    }
}

/// An int-or-string value as text.
pub fn int_or_string(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        _ => String::new(),
    }
}

/// A boolean as `True`/`False`, `<unset>` when absent.
pub fn bool_or_unset(value: Option<&Value>) -> String {
    match value.and_then(Value::as_bool) {
        Some(true) => "True".into(),
        Some(false) => "False".into(),
        None => "<unset>".into(),
    }
}

/// A volume's access modes as `RWO,ROX,RWX,RWOP` (in that order, each once).
pub fn access_modes(modes: &[Value]) -> String {
    let has = |mode: &str| modes.iter().any(|m| m.as_str() == Some(mode));
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .into_iter()
    .filter(|(mode, _)| has(mode))
    .map(|(_, short)| short)
    .collect::<Vec<_>>()
    .join(",")
}

/// A string, or `placeholder` when it is empty.
pub fn or(value: &str, placeholder: &str) -> String {
    if value.is_empty() { placeholder.to_string() } else { value.to_string() }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn label_maps_are_sorted_and_none_when_empty() {
        assert_eq!(labels(Some(&json!({"b": "2", "a": "1"}))), "a=1,b=2");
        assert_eq!(labels(Some(&json!({}))), "<none>");
        assert_eq!(labels(None), "<none>");
    }

    #[test]
    fn selectors_render_like_apimachinery() {
        let value = json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["b", "a"]},
                {"key": "legacy", "operator": "DoesNotExist"},
                {"key": "zone", "operator": "Exists"},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
            ],
        });
        assert_eq!(selector(Some(&value)).unwrap(), "app=web,env notin (dev),!legacy,tier in (a,b),zone");
        assert_eq!(selector_column(Some(&json!({}))), "<none>");
        assert_eq!(selector_column(None), "<none>");
        let bad = json!({"matchExpressions": [{"key": "k", "operator": "In", "values": []}]});
        assert_eq!(selector_column(Some(&bad)), "<error>");
    }

    #[test]
    fn ages_and_placeholders() {
        let object = json!({"metadata": {"creationTimestamp": "2024-01-01T00:00:00Z"}});
        let created = parse_rfc3339("2024-01-01T00:00:00Z").unwrap();
        assert_eq!(age(&object, created + 125), "2m5s");
        assert_eq!(age(&object, created + 3 * 86_400 + 3600), "3d1h");
        assert_eq!(age(&json!({}), created), "<unknown>");
        assert_eq!(
            access_modes(&[json!("ReadWriteMany"), json!("ReadWriteOnce"), json!("ReadWriteOnce")]),
            "RWO,RWX"
        );
        assert_eq!(bool_or_unset(None), "<unset>");
        let spec = json!({"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y"}]});
        assert_eq!(containers(Some(&spec)), ("a,b".to_string(), "x:1,y".to_string()));
    }
}
