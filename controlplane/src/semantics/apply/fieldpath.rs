//! Field paths and sets of them (structured-merge-diff's `fieldpath` package): path elements,
//! the total order on values they rely on, and the `FieldsV1` encoding of managed fields.

use std::{
    cmp::Ordering,
    collections::{BTreeMap, BTreeSet},
    fmt,
};

use serde_json::{Map, Number, Value};

use super::list_types::{ListTypes, child_schema_path};

/// One step of a field path (structured-merge-diff's PathElement).
#[derive(Clone, Debug)]
pub(super) enum Pe {
    /// A field of a struct or an entry of a map.
    Field(String),
    /// The element of an associative list with these key values (sorted by key name).
    Key(Vec<(String, Value)>),
    /// The element of a set with this value.
    Value(Value),
    /// An element by position (only ever read from stored managed fields).
    Index(i64),
}

impl Pe {
    fn rank(&self) -> u8 {
        match self {
            Pe::Field(_) => 0,
            Pe::Key(_) => 1,
            Pe::Value(_) => 2,
            Pe::Index(_) => 3,
        }
    }
}

impl Ord for Pe {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Pe::Field(a), Pe::Field(b)) => a.cmp(b),
            (Pe::Key(a), Pe::Key(b)) => compare_field_lists(a, b),
            (Pe::Value(a), Pe::Value(b)) => compare_values(a, b),
            (Pe::Index(a), Pe::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Pe {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Pe {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Pe {}

impl fmt::Display for Pe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pe::Field(name) => write!(f, ".{name}"),
            Pe::Key(fields) => {
                let parts: Vec<String> =
                    fields.iter().map(|(name, value)| format!("{name}={}", value_to_string(value))).collect();
                write!(f, "[{}]", parts.join(","))
            }
            Pe::Value(value) => write!(f, "[={}]", value_to_string(value)),
            Pe::Index(index) => write!(f, "[{index}]"),
        }
    }
}

pub(super) fn path_to_string(path: &[Pe]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// A value as structured-merge-diff prints it in paths (strings quoted).
fn value_to_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::String(text) => go_quote(text),
        Value::Array(items) => {
            format!("[{}]", items.iter().map(value_to_string).collect::<Vec<_>>().join(","))
        }
        Value::Object(map) => {
            map.iter().map(|(key, value)| format!("{key}={}", value_to_string(value))).collect()
        }
        other => other.to_string(),
    }
}

pub(super) fn go_quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

enum NumberKind {
    Int(i128),
    Float(f64),
}

fn number_kind(number: &Number) -> NumberKind {
    if let Some(value) = number.as_i64() {
        NumberKind::Int(i128::from(value))
    } else if let Some(value) = number.as_u64() {
        NumberKind::Int(i128::from(value))
    } else {
        NumberKind::Float(number.as_f64().unwrap_or(0.0))
    }
}

fn float_cmp(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// structured-merge-diff's total order on values: numbers (ints and floats compared numerically),
/// then strings, booleans, lists, maps and null.
fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(value: &Value) -> u8 {
        match value {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (number_kind(x), number_kind(y)) {
            (NumberKind::Int(x), NumberKind::Int(y)) => x.cmp(&y),
            (NumberKind::Int(x), NumberKind::Float(y)) => float_cmp(x as f64, y),
            (NumberKind::Float(x), NumberKind::Int(y)) => float_cmp(x, y as f64),
            (NumberKind::Float(x), NumberKind::Float(y)) => float_cmp(x, y),
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (left, right) in x.iter().zip(y.iter()) {
                let order = compare_values(left, right);
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            for ((left_key, left), (right_key, right)) in x.iter().zip(y.iter()) {
                let order = left_key.cmp(right_key).then_with(|| compare_values(left, right));
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

pub(super) fn values_equal(a: &Value, b: &Value) -> bool {
    compare_values(a, b) == Ordering::Equal
}

fn compare_field_lists(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for ((left_name, left), (right_name, right)) in a.iter().zip(b.iter()) {
        let order = left_name.cmp(right_name).then_with(|| compare_values(left, right));
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// A set of field paths, as a tree: `members` are paths ending here, `children` lead further.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct FieldSet {
    pub(super) members: BTreeSet<Pe>,
    pub(super) children: BTreeMap<Pe, FieldSet>,
}

impl FieldSet {
    pub(super) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(FieldSet::is_empty)
    }

    pub(super) fn insert(&mut self, path: &[Pe]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    pub(super) fn child(&self, pe: &Pe) -> Option<&FieldSet> {
        self.children.get(pe).filter(|child| !child.is_empty())
    }

    pub(super) fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(existing) => existing.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out.prune_empty();
        out
    }

    pub(super) fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            members: self.members.difference(&other.members).cloned().collect(),
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            let remaining = match other.children.get(pe) {
                Some(other_child) => child.difference(other_child),
                None => child.clone(),
            };
            if !remaining.is_empty() {
                out.children.insert(pe.clone(), remaining);
            }
        }
        out
    }

    pub(super) fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            members: self.members.intersection(&other.members).cloned().collect(),
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            if let Some(other_child) = other.children.get(pe) {
                let common = child.intersection(other_child);
                if !common.is_empty() {
                    out.children.insert(pe.clone(), common);
                }
            }
        }
        out
    }

    fn prune_empty(&mut self) {
        self.children.retain(|_, child| {
            child.prune_empty();
            !child.is_empty()
        });
    }

    /// Every member path, members before children at each level.
    pub(super) fn paths(&self) -> Vec<Vec<Pe>> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<Pe>, out: &mut Vec<Vec<Pe>>) {
        for member in &self.members {
            let mut path = prefix.clone();
            path.push(member.clone());
            out.push(path);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// Makes every declared struct field on the way to a member a member too (what
    /// structured-merge-diff does before pruning, so that emptied structs go away with their
    /// fields).
    pub(super) fn ensure_named_fields_are_members(
        &self,
        schema_path: &str,
        lists: &dyn ListTypes,
    ) -> FieldSet {
        let mut out = FieldSet { members: self.members.clone(), children: BTreeMap::new() };
        let parent_is_struct = !lists.is_map(schema_path);
        for (pe, child) in &self.children {
            if parent_is_struct && matches!(pe, Pe::Field(_)) {
                out.members.insert(pe.clone());
            }
            let child_path = child_schema_path(schema_path, pe);
            out.children.insert(pe.clone(), child.ensure_named_fields_are_members(&child_path, lists));
        }
        out
    }

    /// The `fieldsV1` encoding.
    pub(super) fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false))
    }

    fn emit(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self {
            out.insert(".".to_string(), Value::Object(Map::new()));
        }
        for member in &self.members {
            if self.children.get(member).is_none_or(FieldSet::is_empty) {
                out.insert(serialize_pe(member), Value::Object(Map::new()));
            }
        }
        for (pe, child) in &self.children {
            if child.is_empty() {
                continue;
            }
            out.insert(serialize_pe(pe), Value::Object(child.emit(self.members.contains(pe))));
        }
        out
    }

    /// Reads the `fieldsV1` encoding.
    pub(super) fn from_fields_v1(value: &Value) -> Result<FieldSet, String> {
        let Value::Object(map) = value else {
            return Err("fieldsV1 must be an object".to_string());
        };
        Ok(read_fields_v1(map)?.0)
    }
}

/// Reads one level of `fieldsV1`: the set below, and whether the level marks itself a member.
fn read_fields_v1(map: &Map<String, Value>) -> Result<(FieldSet, bool), String> {
    let mut set = FieldSet::default();
    let mut is_member = false;
    for (key, child) in map {
        if key == "." {
            is_member = true;
            continue;
        }
        let Some(pe) = deserialize_pe(key)? else { continue };
        let Value::Object(child_map) = child else {
            return Err(format!("parsing key as path element: {key}: value must be an object"));
        };
        let (grandchildren, child_is_member) = read_fields_v1(child_map)?;
        if child_is_member {
            set.members.insert(pe.clone());
        }
        if !grandchildren.members.is_empty() || !grandchildren.children.is_empty() {
            set.children.insert(pe, grandchildren);
        }
    }
    if set.members.is_empty() && set.children.is_empty() {
        is_member = true;
    }
    Ok((set, is_member))
}

/// JSON text the way Go's encoder writes it (HTML-sensitive characters escaped).
fn go_json(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

fn serialize_pe(pe: &Pe) -> String {
    match pe {
        Pe::Field(name) => format!("f:{name}"),
        Pe::Key(fields) => {
            let map: Map<String, Value> = fields.iter().cloned().collect();
            format!("k:{}", go_json(&Value::Object(map)))
        }
        Pe::Value(value) => format!("v:{}", go_json(value)),
        Pe::Index(index) => format!("i:{index}"),
    }
}

/// Parses one `fieldsV1` key; `None` for element types this version does not know (skipped, as
/// kube-apiserver does).
fn deserialize_pe(key: &str) -> Result<Option<Pe>, String> {
    let bytes = key.as_bytes();
    if bytes.len() < 2 {
        return Err("key must be 2 characters long:".to_string());
    }
    if bytes[1] != b':' {
        return Err(format!("missing colon: {key}"));
    }
    let rest = &key[2..];
    Ok(Some(match bytes[0] {
        b'f' => Pe::Field(rest.to_string()),
        b'v' => Pe::Value(serde_json::from_str(rest).map_err(|err| err.to_string())?),
        b'k' => {
            let Value::Object(map) = serde_json::from_str(rest).map_err(|err| err.to_string())? else {
                return Err(format!("invalid key element: {key}"));
            };
            Pe::Key(map.into_iter().collect())
        }
        b'i' => Pe::Index(rest.parse::<i64>().map_err(|err| err.to_string())?),
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_v1_round_trips() {
        let encoded = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}, "f:finalizers": {"v:\"a/b\"": {}}},
            "f:spec": {"f:containers": {
                "k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:ports": {
                    "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}
                }}
            }},
            "f:status": {"f:old": {"i:0": {}}}
        });
        let set = match FieldSet::from_fields_v1(&encoded) {
            Ok(set) => set,
            Err(err) => panic!("{err}"),
        };
        assert_eq!(set.to_fields_v1(), encoded);
        let paths: Vec<String> = set.paths().iter().map(|path| path_to_string(path)).collect();
        assert_eq!(
            paths,
            vec![
                ".metadata.labels",
                ".metadata.finalizers[=\"a/b\"]",
                ".metadata.labels.app",
                ".spec.containers[name=\"c\"]",
                ".spec.containers[name=\"c\"].image",
                ".spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"TCP\"]",
                ".spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"TCP\"].containerPort",
                ".status.old[0]",
            ]
        );
    }

    #[test]
    fn fields_v1_reading_rules() {
        let cases = [
            // Unknown element types are skipped, an entry with only "." is a member.
            (json!({"x:foo": {}, "f:a": {".": {}}}), Ok(json!({"f:a": {}}))),
            (json!({"f:a": {"f:b": {}}}), Ok(json!({"f:a": {"f:b": {}}}))),
            (json!({"f": {}}), Err("key must be 2 characters long:".to_string())),
            (json!({"fa": {}}), Err("missing colon: fa".to_string())),
            (json!([]), Err("fieldsV1 must be an object".to_string())),
        ];
        for (input, expected) in cases {
            let actual = FieldSet::from_fields_v1(&input).map(|set| set.to_fields_v1());
            assert_eq!(actual, expected, "{input}");
        }
    }

    #[test]
    fn values_order_like_structured_merge_diff() {
        let ascending =
            [json!(-1), json!(1), json!(1.5), json!(2), json!("a"), json!("b"), json!(false), json!(true)];
        for pair in ascending.windows(2) {
            assert_eq!(compare_values(&pair[0], &pair[1]), Ordering::Less, "{} < {}", pair[0], pair[1]);
        }
        assert!(values_equal(&json!(1), &json!(1.0)));
        assert!(!values_equal(&json!("1"), &json!(1)));
        assert_eq!(compare_values(&json!(null), &json!({})), Ordering::Greater);
    }
}
