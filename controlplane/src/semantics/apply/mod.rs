//! Server-side apply and managed fields: who owns which field of an object.
//!
//! This is a port of the semantics kube-apiserver gets from structured-merge-diff and its
//! managed-fields pipeline, working on JSON values with a [`ListTypes`] lookup instead of a typed
//! schema:
//!
//! * [`apply`] merges an applied configuration into the live object (maps merged, associative
//!   lists merged by key, sets unioned, atomic values replaced), reports conflicts with fields
//!   other managers own and hold other values for (unless forced, which takes them over), removes
//!   fields the applier owned before and no longer applies (unless someone else owns them too),
//!   and records the applier's ownership.
//! * [`record_update`] records the ownership a create/update/patch takes: the fields it changed,
//!   which other managers lose.
//!
//! Built-in kinds are compared in their Go typed form, as kube-apiserver does (optional empty
//! lists, maps and nulls are absent, the structs and times of the zero value present), which is
//! why a container's owner also owns `f:resources` and a status writer's entry has no `.` on
//! `f:status`. Custom resources are compared as they are.
//!
//! Ownership is kept in `metadata.managedFields` in the real `FieldsV1` encoding (`f:<field>`,
//! `k:{"name":"x"}`, `v:<value>`, `.`), entries sorted and keyed exactly as kube-apiserver does it,
//! so `kubectl apply --server-side`, `kubectl get --show-managed-fields` and kube-rs `Patch::Apply`
//! see what they would see against a real cluster.

use std::{
    cmp::Ordering,
    collections::{BTreeMap, BTreeSet},
    fmt,
};

use serde_json::{Map, Number, Value};

use super::merge_keys::{self, ApplyListType, KindPatchMeta, ListStrategy, ZeroValue};

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/// How list fields are identified for ownership: built-ins use merge_keys (MergeByKey ->
/// associative list keyed by that field, MergeSet -> set, Replace -> atomic); custom resources use
/// `x-kubernetes-list-type`/`-list-map-keys` of their schema, passed as the same
/// KindPatchMeta-like lookup.
///
/// Paths are written from the object root with list elements as `[]`
/// (`spec.template.spec.containers[].ports`) and map entries by their key (`metadata.labels.app`).
/// Only `list_strategy` is required; the other methods refine the picture when the schema knows
/// more (a `KindPatchMeta` answers all of them from the Kubernetes API definitions).
pub trait ListTypes {
    /// How the list at `path` is tracked.
    fn list_strategy(&self, path: &str) -> ListStrategy;

    /// All key fields of the associative list at `path` (`x-kubernetes-list-map-keys`); by default
    /// the single key of `MergeByKey`. Runtime schemas whose keys are not `'static` can answer
    /// `MergeByKey` with any key and list the real ones here.
    fn list_map_keys(&self, path: &str) -> Vec<String> {
        match self.list_strategy(path) {
            ListStrategy::MergeByKey(key) => vec![key.to_string()],
            _ => Vec::new(),
        }
    }

    /// The schema default of a key field of the associative list at `path`, which identifies
    /// elements that omit it (`protocol: TCP` of ports).
    fn list_key_default(&self, _path: &str, _key: &str) -> Option<Value> {
        None
    }

    /// Whether the object at `path` is owned as a whole (`x-kubernetes-map-type: atomic`).
    fn is_atomic(&self, _path: &str) -> bool {
        false
    }

    /// Whether the object at `path` is a map with data keys (labels, `additionalProperties`,
    /// untyped values) rather than a struct with declared fields.
    fn is_map(&self, _path: &str) -> bool {
        false
    }

    /// How the fields of the struct at `path` show in its Go zero value (built-in kinds only:
    /// kube-apiserver compares their typed form, where `spec`, `status` or a container's
    /// `resources` exist even when empty and `omitempty` scalars vanish when zero; custom
    /// resources have none).
    fn zero_value_fields(&self, _path: &str) -> Vec<(String, ZeroValue)> {
        Vec::new()
    }

    /// Whether kube-apiserver handles these objects as Go types (built-in kinds): then ownership
    /// is computed on their typed form, where optional empty lists, maps and nulls are absent
    /// and the zero value's fields present. Custom resources are compared as they are.
    fn is_typed(&self) -> bool {
        false
    }
}

/// References answer like what they point to (so `Box::new(meta)` of a `&'static KindPatchMeta`
/// is a `Box<dyn ListTypes + Send + Sync>`).
impl<T: ListTypes + ?Sized> ListTypes for &T {
    fn list_strategy(&self, path: &str) -> ListStrategy {
        (**self).list_strategy(path)
    }

    fn list_map_keys(&self, path: &str) -> Vec<String> {
        (**self).list_map_keys(path)
    }

    fn list_key_default(&self, path: &str, key: &str) -> Option<Value> {
        (**self).list_key_default(path, key)
    }

    fn is_atomic(&self, path: &str) -> bool {
        (**self).is_atomic(path)
    }

    fn is_map(&self, path: &str) -> bool {
        (**self).is_map(path)
    }

    fn zero_value_fields(&self, path: &str) -> Vec<(String, ZeroValue)> {
        (**self).zero_value_fields(path)
    }

    fn is_typed(&self) -> bool {
        (**self).is_typed()
    }
}

/// Boxed lookups (as chosen per resource at run time) answer like their contents.
impl<T: ListTypes + ?Sized> ListTypes for Box<T> {
    fn list_strategy(&self, path: &str) -> ListStrategy {
        (**self).list_strategy(path)
    }

    fn list_map_keys(&self, path: &str) -> Vec<String> {
        (**self).list_map_keys(path)
    }

    fn list_key_default(&self, path: &str, key: &str) -> Option<Value> {
        (**self).list_key_default(path, key)
    }

    fn is_atomic(&self, path: &str) -> bool {
        (**self).is_atomic(path)
    }

    fn is_map(&self, path: &str) -> bool {
        (**self).is_map(path)
    }

    fn zero_value_fields(&self, path: &str) -> Vec<(String, ZeroValue)> {
        (**self).zero_value_fields(path)
    }

    fn is_typed(&self) -> bool {
        (**self).is_typed()
    }
}

/// Built-in kinds answer with their apply schema: the list types, list-map keys (several for
/// ports), key defaults, atomic structs and maps of the Kubernetes API definitions. (The inherent
/// `KindPatchMeta::list_strategy` answers for strategic merge patches instead.)
impl ListTypes for KindPatchMeta {
    fn list_strategy(&self, path: &str) -> ListStrategy {
        match self.apply_list_type(path) {
            ApplyListType::Atomic => ListStrategy::Replace,
            ApplyListType::Set => ListStrategy::MergeSet,
            ApplyListType::Map(keys) => match keys.first() {
                Some(key) => ListStrategy::MergeByKey(key),
                None => ListStrategy::MergeSet,
            },
        }
    }

    fn list_map_keys(&self, path: &str) -> Vec<String> {
        match self.apply_list_type(path) {
            ApplyListType::Map(keys) => keys.iter().map(|key| key.to_string()).collect(),
            _ => Vec::new(),
        }
    }

    fn list_key_default(&self, path: &str, key: &str) -> Option<Value> {
        KindPatchMeta::list_key_default(self, path, key)
    }

    fn is_atomic(&self, path: &str) -> bool {
        KindPatchMeta::is_atomic(self, path)
    }

    fn is_map(&self, path: &str) -> bool {
        KindPatchMeta::is_map(self, path)
    }

    fn zero_value_fields(&self, path: &str) -> Vec<(String, ZeroValue)> {
        KindPatchMeta::zero_value_fields(self, path)
            .into_iter()
            .map(|(name, zero)| (name.to_string(), zero))
            .collect()
    }

    fn is_typed(&self) -> bool {
        true
    }
}

/// The list types of a resource without a schema: every list atomic, every object a map of data
/// keys (what kube-apiserver's deduced type converter does).
#[derive(Debug, Clone, Copy, Default)]
pub struct DeducedListTypes;

impl ListTypes for DeducedListTypes {
    fn list_strategy(&self, _path: &str) -> ListStrategy {
        ListStrategy::Replace
    }

    fn is_map(&self, _path: &str) -> bool {
        true
    }
}

/// A manager's claim on a field whose value it does not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The name of the manager that owns the field (`kubectl`, `kube-controller-manager`, ...).
    pub manager: String,
    /// The field, as kube-apiserver prints it (`.spec.replicas`,
    /// `.spec.template.spec.containers[name="nginx"].image`).
    pub field: String,
}

/// Why an apply was refused.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// Fields the configuration sets are owned by other managers with other values (409).
    #[error("conflicts")]
    Conflicts(Vec<Conflict>),
    /// The configuration cannot be applied (bad object, duplicate list keys, ...).
    #[error("{0}")]
    Invalid(String),
}

/// Applies `config` (a full or partial object in the applier's intent) as `manager` onto `live`
/// (None = create): fields owned by other managers with different values are conflicts (unless
/// `force`, which takes them over); fields this manager applied before but omits now are removed
/// (unless another manager also owns them); maps are merged, associative lists merged by key, sets
/// unioned, atomic lists replaced. Returns the new object with `metadata.managedFields` updated
/// (fieldsType FieldsV1, operation Apply, apiVersion of the config, time = `now` RFC 3339).
pub fn apply(
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    force: bool,
    lists: &dyn ListTypes,
    now: &str,
) -> Result<Value, ApplyError> {
    apply_to(live, config, manager, None, force, lists, now)
}

/// [`apply`] to a subresource (`PATCH .../status?fieldManager=x` with an apply patch): the
/// ownership is recorded under an entry with `subresource` set.
pub fn apply_subresource(
    live: &Value,
    config: &Value,
    manager: &str,
    subresource: &str,
    force: bool,
    lists: &dyn ListTypes,
    now: &str,
) -> Result<Value, ApplyError> {
    apply_to(Some(live), config, manager, Some(subresource), force, lists, now)
}

/// Records, for a non-apply write (create/update/patch) by `manager`, ownership of the fields whose
/// values changed between `old` (None on create: all fields) and `new`, as kube-apiserver's
/// managed-fields updater does (operation Update; other managers lose fields that this write
/// changed). Returns `new` with managedFields updated.
pub fn record_update(
    old: Option<&Value>,
    new: &Value,
    manager: &str,
    lists: &dyn ListTypes,
    now: &str,
) -> Value {
    record(old, new, manager, None, lists, now)
}

/// [`record_update`] for a write to a subresource (`status`, `scale`): the managed fields in the
/// request are ignored (the stored ones are kept) and the entry records the subresource.
pub fn record_subresource_update(
    old: &Value,
    new: &Value,
    manager: &str,
    subresource: &str,
    lists: &dyn ListTypes,
    now: &str,
) -> Value {
    record(Some(old), new, manager, Some(subresource), lists, now)
}

/// The message of the 409 Status kube-apiserver answers an apply conflict with
/// (`Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas`); `live` is the
/// object the apply was made against, whose managed fields describe the managers.
pub fn conflict_message(live: Option<&Value>, conflicts: &[Conflict]) -> String {
    let described = describe_conflicts(live, conflicts);
    if let ([conflict], [(_, description)]) = (conflicts, described.as_slice()) {
        return format!("Apply failed with 1 conflict: conflict with {description}: {}", conflict.field);
    }
    // Grouped by manager entry, in the order of their identifiers.
    let mut groups: BTreeMap<&(ManagerKey, String), Vec<&str>> = BTreeMap::new();
    for (conflict, entry) in conflicts.iter().zip(described.iter()) {
        groups.entry(entry).or_default().push(conflict.field.as_str());
    }
    let mut lines = Vec::new();
    for ((_, description), fields) in groups {
        lines.push(format!("conflicts with {description}:"));
        lines.extend(fields.into_iter().map(|field| format!("- {field}")));
    }
    format!("Apply failed with {} conflicts: {}", conflicts.len(), lines.join("\n"))
}

/// The message of one `FieldManagerConflict` cause of that Status (`conflict with "kubectl"`,
/// or `conflict with "kube-controller-manager" using apps/v1` for an updater).
pub fn conflict_cause_message(live: Option<&Value>, conflict: &Conflict) -> String {
    let described = describe_conflicts(live, std::slice::from_ref(conflict));
    let description = described.into_iter().next().map(|(_, text)| text).unwrap_or_default();
    format!("conflict with {description}")
}

/// Finds, for each conflict, the managed-fields entry it is with (the same name may have an
/// Apply and an Update entry, both owning the field: they come in that order) and describes it
/// the way kube-apiserver does: quoted, with the subresource if any, and for updaters with the
/// API version they wrote (its manager identifiers carry no time).
fn describe_conflicts(live: Option<&Value>, conflicts: &[Conflict]) -> Vec<(ManagerKey, String)> {
    let mut entries: Vec<(ManagerKey, BTreeSet<String>)> = live
        .and_then(managed_fields_of)
        .and_then(|fields| decode_managers(fields).ok())
        .unwrap_or_default()
        .into_iter()
        .map(|(key, entry)| (key, entry.set.paths().iter().map(|path| path_to_string(path)).collect()))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut totals: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for conflict in conflicts {
        *totals.entry((conflict.manager.as_str(), conflict.field.as_str())).or_insert(0) += 1;
    }
    let mut seen: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    conflicts
        .iter()
        .map(|conflict| {
            let pair = (conflict.manager.as_str(), conflict.field.as_str());
            let total = totals.get(&pair).copied().unwrap_or(1);
            let occurrence = seen.entry(pair).or_insert(0);
            let named: Vec<&(ManagerKey, BTreeSet<String>)> =
                entries.iter().filter(|(key, _)| key.manager == conflict.manager).collect();
            let owning: Vec<&&(ManagerKey, BTreeSet<String>)> =
                named.iter().filter(|(_, paths)| paths.contains(&conflict.field)).collect();
            // An owner that did not conflict is the applier itself: its Apply entry comes first.
            let skipped = owning.len().saturating_sub(total);
            let chosen = owning
                .get(skipped + *occurrence)
                .or(owning.last())
                .map(|entry| &entry.0)
                .or(named.first().map(|e| &e.0));
            *occurrence += 1;
            let key = chosen.cloned().unwrap_or_else(|| ManagerKey {
                manager: conflict.manager.clone(),
                operation: Operation::Apply,
                api_version: String::new(),
                subresource: String::new(),
            });
            let mut text = go_quote(&key.manager);
            if !key.subresource.is_empty() {
                text = format!("{text} with subresource {}", go_quote(&key.subresource));
            }
            if key.operation == Operation::Update {
                text = format!("{text} using {}", key.api_version);
            }
            (key, text)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Field paths and field sets
// ---------------------------------------------------------------------------------------------

/// One step of a field path (structured-merge-diff's PathElement).
#[derive(Clone, Debug)]
enum Pe {
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

fn path_to_string(path: &[Pe]) -> String {
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

fn go_quote(text: &str) -> String {
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

fn values_equal(a: &Value, b: &Value) -> bool {
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
struct FieldSet {
    members: BTreeSet<Pe>,
    children: BTreeMap<Pe, FieldSet>,
}

impl FieldSet {
    fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(FieldSet::is_empty)
    }

    fn insert(&mut self, path: &[Pe]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    fn child(&self, pe: &Pe) -> Option<&FieldSet> {
        self.children.get(pe).filter(|child| !child.is_empty())
    }

    fn union(&self, other: &FieldSet) -> FieldSet {
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

    fn difference(&self, other: &FieldSet) -> FieldSet {
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

    fn intersection(&self, other: &FieldSet) -> FieldSet {
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
    fn paths(&self) -> Vec<Vec<Pe>> {
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
    fn ensure_named_fields_are_members(&self, schema_path: &str, lists: &dyn ListTypes) -> FieldSet {
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
    fn to_fields_v1(&self) -> Value {
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
    fn from_fields_v1(value: &Value) -> Result<FieldSet, String> {
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

fn child_schema_path(schema_path: &str, pe: &Pe) -> String {
    match pe {
        Pe::Field(name) if schema_path.is_empty() => name.clone(),
        Pe::Field(name) => format!("{schema_path}.{name}"),
        _ => format!("{schema_path}[]"),
    }
}

// ---------------------------------------------------------------------------------------------
// Schema-aware walks over values
// ---------------------------------------------------------------------------------------------

/// How a list is identified for ownership.
enum ListKind {
    Atomic,
    Set,
    Map(Vec<String>),
}

/// Answers metadata paths with ObjectMeta's schema (as kube-apiserver does for every kind,
/// custom resources included) and everything else from the resource's own list types.
struct Schema<'a> {
    lists: &'a dyn ListTypes,
    object_meta: Option<&'static KindPatchMeta>,
}

impl<'a> Schema<'a> {
    fn new(lists: &'a dyn ListTypes) -> Self {
        Schema { lists, object_meta: merge_keys::kind_patch_meta("", "ConfigMap") }
    }

    fn source(&self, path: &str) -> &dyn ListTypes {
        match self.object_meta {
            Some(meta)
                if path == "metadata" || path.starts_with("metadata.") || path.starts_with("metadata[") =>
            {
                meta
            }
            _ => self.lists,
        }
    }

    fn list_kind(&self, path: &str) -> ListKind {
        let source = self.source(path);
        match source.list_strategy(path) {
            ListStrategy::Replace => ListKind::Atomic,
            ListStrategy::MergeSet => ListKind::Set,
            ListStrategy::MergeByKey(_) => {
                let keys = source.list_map_keys(path);
                if keys.is_empty() { ListKind::Set } else { ListKind::Map(keys) }
            }
        }
    }
}

impl ListTypes for Schema<'_> {
    fn list_strategy(&self, path: &str) -> ListStrategy {
        self.source(path).list_strategy(path)
    }

    fn list_map_keys(&self, path: &str) -> Vec<String> {
        self.source(path).list_map_keys(path)
    }

    fn list_key_default(&self, path: &str, key: &str) -> Option<Value> {
        self.source(path).list_key_default(path, key)
    }

    fn is_atomic(&self, path: &str) -> bool {
        self.source(path).is_atomic(path)
    }

    fn is_map(&self, path: &str) -> bool {
        self.source(path).is_map(path)
    }

    fn zero_value_fields(&self, path: &str) -> Vec<(String, ZeroValue)> {
        self.lists.zero_value_fields(path)
    }

    fn is_typed(&self) -> bool {
        self.lists.is_typed()
    }
}

fn element_path(schema_path: &str) -> String {
    format!("{schema_path}[]")
}

fn field_path(schema_path: &str, name: &str) -> String {
    if schema_path.is_empty() { name.to_string() } else { format!("{schema_path}.{name}") }
}

/// The path element identifying a list item.
fn list_item_pe(item: &Value, kind: &ListKind, schema_path: &str, schema: &Schema) -> Result<Pe, String> {
    match kind {
        ListKind::Map(keys) => {
            let map = match item {
                Value::Null => {
                    return Err("associative list with keys may not have a null element".to_string());
                }
                Value::Object(map) => map,
                _ => return Err("associative list with keys may not have non-map elements".to_string()),
            };
            let mut fields = Vec::with_capacity(keys.len());
            for key in keys {
                if let Some(value) = map.get(key) {
                    fields.push((key.clone(), value.clone()));
                } else if let Some(default) = schema.list_key_default(schema_path, key) {
                    fields.push((key.clone(), default));
                }
            }
            if fields.is_empty() {
                return Err(format!(
                    "associative list with keys has an element that omits all key fields {} (and doesn't \
                     have default values for any key fields)",
                    serde_json::to_string(keys).unwrap_or_default()
                ));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(Pe::Key(fields))
        }
        _ => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".to_string())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".to_string()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".to_string())
            }
            scalar => Ok(Pe::Value(scalar.clone())),
        },
    }
}

/// The fields a value sets (structured-merge-diff's ToFieldSet).
fn to_field_set(value: &Value, schema: &Schema) -> Result<FieldSet, String> {
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

#[derive(Default)]
struct Comparison {
    added: FieldSet,
    modified: FieldSet,
    removed: FieldSet,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Object,
    List,
    Scalar,
}

fn shape(value: &Value) -> Option<Shape> {
    match value {
        Value::Object(_) => Some(Shape::Object),
        Value::Array(_) => Some(Shape::List),
        Value::Null => None,
        _ => Some(Shape::Scalar),
    }
}

/// The fields `rhs` added, modified and removed relative to `lhs` (structured-merge-diff's
/// Compare).
fn compare(lhs: &Value, rhs: &Value, schema: &Schema) -> Comparison {
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

/// Merges `rhs` (the applied configuration) into `lhs` (the live object): structured-merge-diff's
/// Merge with the "keep the right-hand side" rule for leaves.
fn merge(
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
fn remove_items(value: &Value, set: &FieldSet, schema_path: &str, schema: &Schema) -> Option<Value> {
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

/// An object in the form kube-apiserver compares it. Built-in kinds are compared as Go values:
/// optional fields that are null, empty lists or maps, or `omitempty` scalars holding their zero
/// are absent, and the fields the zero value always carries are present (see
/// [`ListTypes::zero_value_fields`]).
fn typed_form(value: &Value, schema: &Schema) -> Value {
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
fn drop_nulls(value: &mut Value) {
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

// ---------------------------------------------------------------------------------------------
// Managers
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// What identifies a managed-fields entry: appliers are one entry whatever the API version,
/// updaters one per API version.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ManagerKey {
    manager: String,
    operation: Operation,
    /// Empty for appliers.
    api_version: String,
    subresource: String,
}

#[derive(Clone, Debug)]
struct ManagerEntry {
    set: FieldSet,
    api_version: String,
    applied: bool,
    time: Option<String>,
}

type Managers = BTreeMap<ManagerKey, ManagerEntry>;

/// The fields no manager ever owns.
fn strip_set() -> FieldSet {
    let mut set = FieldSet::default();
    for path in [
        &["apiVersion"][..],
        &["kind"],
        &["metadata"],
        &["metadata", "name"],
        &["metadata", "namespace"],
        &["metadata", "creationTimestamp"],
        &["metadata", "selfLink"],
        &["metadata", "uid"],
        &["metadata", "clusterName"],
        &["metadata", "generation"],
        &["metadata", "managedFields"],
        &["metadata", "resourceVersion"],
    ] {
        let pes: Vec<Pe> = path.iter().map(|name| Pe::Field(name.to_string())).collect();
        set.insert(&pes);
    }
    set
}

fn decode_managers(entries: &Value) -> Result<Managers, String> {
    let Value::Array(entries) = entries else {
        return Err("managedFields must be a list".to_string());
    };
    let mut managers = Managers::new();
    for (index, entry) in entries.iter().enumerate() {
        let text = |name: &str| entry.get(name).and_then(Value::as_str).unwrap_or("").to_string();
        let operation = match text("operation").as_str() {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => return Err("operation must be `Apply` or `Update`".to_string()),
        };
        let api_version = text("apiVersion");
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".to_string());
        }
        match text("fieldsType").as_str() {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {index}")),
            other => return Err(format!("invalid fieldsType {other:?} in managed fields entry {index}")),
        }
        let set = match entry.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::default(),
            Some(fields) => {
                FieldSet::from_fields_v1(fields).map_err(|err| format!("error decoding set: {err}"))?
            }
        };
        let key = ManagerKey {
            manager: text("manager"),
            operation,
            api_version: if operation == Operation::Apply { String::new() } else { api_version.clone() },
            subresource: text("subresource"),
        };
        let time = entry.get("time").and_then(Value::as_str).map(str::to_string);
        managers.insert(key, ManagerEntry { set, api_version, applied: operation == Operation::Apply, time });
    }
    Ok(managers)
}

/// Seconds since the epoch of an RFC 3339 time (0 when absent or unreadable), for ordering.
fn unix_seconds(time: Option<&str>) -> i64 {
    fn parse(text: &str) -> Option<i64> {
        let (date, rest) = text.split_once(['T', 't'])?;
        let mut date_parts = date.split('-');
        let year: i64 = date_parts.next()?.parse().ok()?;
        let month: i64 = date_parts.next()?.parse().ok()?;
        let day: i64 = date_parts.next()?.parse().ok()?;
        let clock_end = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
        let (clock, zone) = rest.split_at(clock_end);
        let clock = clock.split('.').next()?;
        let mut clock_parts = clock.split(':');
        let hour: i64 = clock_parts.next()?.parse().ok()?;
        let minute: i64 = clock_parts.next()?.parse().ok()?;
        let second: i64 = clock_parts.next()?.parse().ok()?;
        let offset = match zone {
            "" | "Z" | "z" => 0,
            _ => {
                let sign = if zone.starts_with('-') { -1 } else { 1 };
                let (h, m) = zone[1..].split_once(':')?;
                sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60)
            }
        };
        // Days from the civil date (proleptic Gregorian).
        let y = if month <= 2 { year - 1 } else { year };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (month + 9) % 12;
        let doy = (153 * mp + 2) / 5 + day - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        Some(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
    }
    time.and_then(parse).unwrap_or(0)
}

fn encode_managers(managers: &Managers) -> Option<Value> {
    if managers.is_empty() {
        return None;
    }
    let mut entries: Vec<(&ManagerKey, &ManagerEntry)> = managers.iter().collect();
    let operation_of = |entry: &ManagerEntry, key: &ManagerKey| {
        if entry.applied { Operation::Apply } else { key.operation }
    };
    entries.sort_by(|(key_a, a), (key_b, b)| {
        operation_of(a, key_a)
            .as_str()
            .cmp(operation_of(b, key_b).as_str())
            .then_with(|| unix_seconds(a.time.as_deref()).cmp(&unix_seconds(b.time.as_deref())))
            .then_with(|| key_a.manager.cmp(&key_b.manager))
            .then_with(|| a.api_version.cmp(&b.api_version))
            .then_with(|| key_a.subresource.cmp(&key_b.subresource))
    });
    let encoded = entries
        .into_iter()
        .map(|(key, entry)| {
            let mut map = Map::new();
            if !key.manager.is_empty() {
                map.insert("manager".into(), Value::String(key.manager.clone()));
            }
            map.insert("operation".into(), Value::String(operation_of(entry, key).as_str().to_string()));
            map.insert("apiVersion".into(), Value::String(entry.api_version.clone()));
            if let Some(time) = &entry.time {
                map.insert("time".into(), Value::String(time.clone()));
            }
            map.insert("fieldsType".into(), Value::String("FieldsV1".into()));
            map.insert("fieldsV1".into(), entry.set.to_fields_v1());
            if !key.subresource.is_empty() {
                map.insert("subresource".into(), Value::String(key.subresource.clone()));
            }
            Value::Object(map)
        })
        .collect();
    Some(Value::Array(encoded))
}

fn managed_fields_of(object: &Value) -> Option<&Value> {
    object.pointer("/metadata/managedFields")
}

fn without_managed_fields(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(metadata) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
    }
    copy
}

fn with_managed_fields(mut object: Value, managers: &Managers) -> Value {
    let encoded = encode_managers(managers);
    if let Value::Object(root) = &mut object {
        match encoded {
            Some(encoded) => {
                let metadata = root.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(metadata) = metadata {
                    metadata.insert("managedFields".into(), encoded);
                }
            }
            None => {
                if let Some(Value::Object(metadata)) = root.get_mut("metadata") {
                    metadata.remove("managedFields");
                }
            }
        }
    }
    object
}

/// structured-merge-diff's `update`: managers other than `current` lose the fields this change
/// modified (a conflict unless forced) or removed.
fn settle_ownership(
    comparison: &Comparison,
    managers: &mut Managers,
    current: &ManagerKey,
    force: bool,
) -> Result<(), ApplyError> {
    let changed = comparison.modified.union(&comparison.added);
    let mut conflicts: Vec<(ManagerKey, FieldSet)> = Vec::new();
    for (key, entry) in managers.iter() {
        if key == current {
            continue;
        }
        let conflict = entry.set.intersection(&changed);
        if !conflict.is_empty() {
            conflicts.push((key.clone(), conflict));
        }
    }
    if !force && !conflicts.is_empty() {
        let list = conflicts
            .iter()
            .flat_map(|(key, set)| {
                set.paths()
                    .into_iter()
                    .map(|path| Conflict { manager: key.manager.clone(), field: path_to_string(&path) })
            })
            .collect();
        return Err(ApplyError::Conflicts(list));
    }
    for (key, conflict) in conflicts {
        if let Some(entry) = managers.get_mut(&key) {
            entry.set = entry.set.difference(&conflict);
        }
    }
    if !comparison.removed.is_empty() {
        for (key, entry) in managers.iter_mut() {
            if key != current {
                entry.set = entry.set.difference(&comparison.removed);
            }
        }
    }
    managers.retain(|_, entry| !entry.set.is_empty());
    Ok(())
}

/// Records an Update by `manager` (the managed-fields updater with its "current operation"
/// bookkeeping, the stripping of identity fields and the cap on updaters).
fn record_into(
    old: &Value,
    new: &Value,
    managers: &mut Managers,
    key: &ManagerKey,
    api_version: &str,
    schema: &Schema,
    now: &str,
) {
    let comparison = compare(old, new, schema);
    let current = ManagerKey {
        manager: "\u{0}current-operation".into(),
        operation: Operation::Update,
        api_version: api_version.to_string(),
        subresource: String::new(),
    };
    // Forced, so this cannot fail.
    let _ = settle_ownership(&comparison, managers, &current, true);
    let changed = comparison.modified.union(&comparison.added).difference(&strip_set());
    if !changed.is_empty() {
        let previous = managers.remove(key).map(|entry| entry.set).unwrap_or_default();
        managers.insert(
            key.clone(),
            ManagerEntry {
                set: changed.union(&previous),
                api_version: api_version.to_string(),
                applied: false,
                time: Some(now.to_string()),
            },
        );
    }
    cap_updaters(managers);
}

const MAX_UPDATE_MANAGERS: usize = 10;

/// Folds the oldest updaters into "ancient-changes" entries (per API version) once there are more
/// than ten of them, as kube-apiserver does.
fn cap_updaters(managers: &mut Managers) {
    let mut updaters: Vec<ManagerKey> =
        managers.iter().filter(|(_, entry)| !entry.applied).map(|(key, _)| key.clone()).collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by(|a, b| {
        let time = |key: &ManagerKey| unix_seconds(managers.get(key).and_then(|entry| entry.time.as_deref()));
        time(a).cmp(&time(b)).then_with(|| a.cmp(b))
    });
    let mut first_by_version: BTreeMap<String, ManagerKey> = BTreeMap::new();
    let mut remaining = updaters.len();
    for key in updaters {
        if remaining <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(entry) = managers.get(&key).cloned() else { continue };
        let version = entry.api_version.clone();
        let bucket = ManagerKey {
            manager: "ancient-changes".into(),
            operation: Operation::Update,
            api_version: version.clone(),
            subresource: String::new(),
        };
        match first_by_version.get(&version) {
            Some(first) => {
                if !managers.contains_key(&bucket)
                    && let Some(first_entry) = managers.remove(first)
                {
                    managers.insert(bucket.clone(), first_entry);
                }
                managers.remove(&key);
                if let Some(bucket_entry) = managers.get_mut(&bucket) {
                    bucket_entry.set = entry.set.union(&bucket_entry.set);
                    bucket_entry.time = entry.time.clone();
                }
                remaining -= 1;
            }
            None => {
                first_by_version.insert(version, key);
            }
        }
    }
}

fn api_version_of(object: &Value) -> &str {
    object.get("apiVersion").and_then(Value::as_str).unwrap_or("")
}

fn record(
    old: Option<&Value>,
    new: &Value,
    manager: &str,
    subresource: Option<&str>,
    lists: &dyn ListTypes,
    now: &str,
) -> Value {
    let schema = Schema::new(lists);
    let decode_old = || {
        old.and_then(managed_fields_of).and_then(|fields| decode_managers(fields).ok()).unwrap_or_default()
    };
    let mut managers = if subresource.is_some() {
        decode_old()
    } else {
        match managed_fields_of(new) {
            Some(Value::Array(entries)) if is_reset(entries) => Managers::new(),
            Some(fields) => match decode_managers(fields) {
                Ok(managers) if !managers.is_empty() => managers,
                _ => decode_old(),
            },
            None => decode_old(),
        }
    };
    let new_plain = without_managed_fields(new);
    // Objects that exist without managed fields are not tracked until someone applies.
    let exists = old.is_some_and(|old| {
        old.pointer("/metadata/uid").and_then(Value::as_str).is_some_and(|uid| !uid.is_empty())
    });
    if managers.is_empty() && exists {
        return new_plain;
    }
    let old_plain = match old {
        Some(old) => without_managed_fields(old),
        None => Value::Object(Map::new()),
    };
    let api_version = match api_version_of(new) {
        "" => old.map(api_version_of).unwrap_or("").to_string(),
        version => version.to_string(),
    };
    let key = ManagerKey {
        manager: if manager.is_empty() { "unknown".into() } else { manager.to_string() },
        operation: Operation::Update,
        api_version: api_version.clone(),
        subresource: subresource.unwrap_or("").to_string(),
    };
    record_into(
        &typed_form(&old_plain, &schema),
        &typed_form(&new_plain, &schema),
        &mut managers,
        &key,
        &api_version,
        &schema,
        now,
    );
    with_managed_fields(new_plain, &managers)
}

/// `managedFields: []` or `[{}]` in a write asks for the managed fields to be reset.
fn is_reset(entries: &[Value]) -> bool {
    match entries {
        [] => true,
        [only] => only.as_object().is_some_and(|map| map.values().all(Value::is_null) || map.is_empty()),
        _ => false,
    }
}

fn gvk_text(object: &Value) -> String {
    let api_version = api_version_of(object);
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let (group, version) = match api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    };
    format!("{group}/{version}, Kind={kind}")
}

fn apply_to(
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    subresource: Option<&str>,
    force: bool,
    lists: &dyn ListTypes,
    now: &str,
) -> Result<Value, ApplyError> {
    let schema = Schema::new(lists);
    let Value::Object(config_map) = config else {
        return Err(ApplyError::Invalid("apply configuration must be an object".to_string()));
    };
    if api_version_of(config).is_empty()
        || config.get("kind").and_then(Value::as_str).unwrap_or("").is_empty()
    {
        return Err(ApplyError::Invalid(format!("invalid object type: {}", gvk_text(config))));
    }
    if config_map
        .get("metadata")
        .and_then(|metadata| metadata.get("managedFields"))
        .is_some_and(|v| !v.is_null())
    {
        return Err(ApplyError::Invalid("metadata.managedFields must be nil".to_string()));
    }
    // The configuration must be of the kind and version of the endpoint (here: of the live object).
    if let Some(live) = live {
        let live_kind = live.get("kind").and_then(Value::as_str).unwrap_or("");
        let live_version = api_version_of(live);
        let kind_differs =
            !live_kind.is_empty() && config.get("kind").and_then(Value::as_str) != Some(live_kind);
        let version_differs = !live_version.is_empty() && api_version_of(config) != live_version;
        if kind_differs || version_differs {
            return Err(ApplyError::Invalid(format!("invalid object type: {}", gvk_text(config))));
        }
    }
    let api_version = api_version_of(config).to_string();
    let mut managers = match live.and_then(managed_fields_of) {
        Some(fields) => decode_managers(fields)
            .map_err(|err| ApplyError::Invalid(format!("failed to decode managed fields: {err}")))?,
        None => Managers::new(),
    };
    let live_plain = match live {
        Some(live) => without_managed_fields(live),
        None => {
            let mut empty = Map::new();
            empty.insert("apiVersion".into(), Value::String(api_version.clone()));
            if let Some(kind) = config.get("kind") {
                empty.insert("kind".into(), kind.clone());
            }
            Value::Object(empty)
        }
    };

    // Fields of an object nobody tracked yet belong to "before-first-apply".
    if managers.is_empty() && live.is_some() {
        let key = ManagerKey {
            manager: "before-first-apply".into(),
            operation: Operation::Update,
            api_version: api_version.clone(),
            subresource: String::new(),
        };
        let zero = typed_form(&Value::Object(Map::new()), &schema);
        record_into(
            &zero,
            &typed_form(&live_plain, &schema),
            &mut managers,
            &key,
            &api_version,
            &schema,
            now,
        );
    }

    let key = ManagerKey {
        manager: if manager.is_empty() { "unknown".into() } else { manager.to_string() },
        operation: Operation::Apply,
        api_version: String::new(),
        subresource: subresource.unwrap_or("").to_string(),
    };

    validate_config(config, &schema)?;
    // Ownership is worked out on the typed form of the live object, exactly as kube-apiserver
    // does; the object returned is the same merge done on the stored form, so that no typed
    // artifact (zero values) leaks into it.
    let typed_live = typed_form(&live_plain, &schema);
    let merge_config = |live: &Value| {
        merge(Some(live), Some(config), "", &mut Vec::new(), &schema)
            .map(|merged| merged.unwrap_or_else(|| Value::Object(Map::new())))
            .map_err(|err| ApplyError::Invalid(format!("failed to merge config: {err}")))
    };
    let merged_typed = merge_config(&typed_live)?;
    let merged_stored = merge_config(&live_plain)?;
    let previous = managers.get(&key).cloned();
    let applied = to_field_set(config, &schema).map_err(ApplyError::Invalid)?;
    managers.insert(
        key.clone(),
        ManagerEntry {
            set: applied,
            api_version: api_version.clone(),
            applied: true,
            time: previous.as_ref().and_then(|entry| entry.time.clone()),
        },
    );
    let (new_typed, mut new_object) =
        match previous.as_ref().map(|entry| &entry.set).filter(|set| !set.is_empty()) {
            Some(last) => (
                prune(&merged_typed, &managers, last, &schema).map_err(ApplyError::Invalid)?,
                prune(&merged_stored, &managers, last, &schema).map_err(ApplyError::Invalid)?,
            ),
            None => (merged_typed, merged_stored),
        };
    drop_nulls(&mut new_object);

    let comparison = compare(&typed_live, &new_typed, &schema);
    settle_ownership(&comparison, &mut managers, &key, force)?;

    let changed = !values_equal(&typed_live, &new_typed);
    if let Some(entry) = managers.get_mut(&key) {
        entry.set = entry.set.difference(&strip_set());
        if changed {
            entry.time = Some(now.to_string());
        }
    }
    managers.retain(|_, entry| !entry.set.is_empty());
    let result = if changed { new_object } else { live_plain };
    Ok(with_managed_fields(result, &managers))
}

/// Checks an applied configuration the way converting it to a typed value does: list elements
/// must carry their keys, and keys may not repeat.
fn validate_config(config: &Value, schema: &Schema) -> Result<(), ApplyError> {
    let mut errors = Vec::new();
    validate_walk(config, "", "", schema, &mut errors);
    if errors.is_empty() {
        return Ok(());
    }
    let detail = match errors.as_slice() {
        [only] => only.clone(),
        _ => {
            let lines: Vec<String> = errors.iter().map(|error| format!("  {error}")).collect();
            format!("errors:\n{}", lines.join("\n"))
        }
    };
    let text = |pointer: &str| config.pointer(pointer).and_then(Value::as_str).unwrap_or("").to_string();
    Err(ApplyError::Invalid(format!(
        "failed to create typed patch object ({}/{}; {}): {detail}",
        text("/metadata/namespace"),
        text("/metadata/name"),
        gvk_text(config)
    )))
}

fn validate_walk(value: &Value, schema_path: &str, path: &str, schema: &Schema, errors: &mut Vec<String>) {
    let located = |message: String| if path.is_empty() { message } else { format!("{path}: {message}") };
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                validate_walk(child, &field_path(schema_path, key), &format!("{path}.{key}"), schema, errors);
            }
        }
        Value::Array(items) => {
            let kind = schema.list_kind(schema_path);
            let child_path = element_path(schema_path);
            let mut seen = BTreeSet::new();
            for (index, item) in items.iter().enumerate() {
                let pe = match kind {
                    ListKind::Atomic => Pe::Index(i64::try_from(index).unwrap_or(i64::MAX)),
                    _ => match list_item_pe(item, &kind, schema_path, schema) {
                        Ok(pe) => pe,
                        Err(err) => {
                            errors.push(located(format!("element {index}: {err}")));
                            return;
                        }
                    },
                };
                if !matches!(kind, ListKind::Atomic) && !seen.insert(pe.clone()) {
                    errors.push(located(format!("duplicate entries for key {pe}")));
                }
                validate_walk(item, &child_path, &format!("{path}{pe}"), schema, errors);
            }
        }
        _ => {}
    }
}

/// Removes what the applier owned last time and no longer applies, unless another manager (or
/// this apply) still owns it.
fn prune(merged: &Value, managers: &Managers, last: &FieldSet, schema: &Schema) -> Result<Value, String> {
    let ensure = |set: &FieldSet| set.ensure_named_fields_are_members("", schema);
    let remove = |value: &Value, set: &FieldSet| {
        remove_items(value, set, "", schema).unwrap_or_else(|| Value::Object(Map::new()))
    };
    let last = ensure(last);
    let pruned = remove(merged, &last);

    // Add back what anybody still owns.
    let owned = managers.values().fold(FieldSet::default(), |all, entry| all.union(&entry.set));
    let merged_set = ensure(&to_field_set(merged, schema)?);
    let pruned_set = ensure(&to_field_set(&pruned, schema)?);
    let pruned = remove(merged, &merged_set.difference(&pruned_set.union(&ensure(&owned))));

    // Only what the applier owned before may go.
    let pruned_set = ensure(&to_field_set(&pruned, schema)?);
    Ok(remove(merged, &merged_set.difference(&pruned_set).intersection(&last)))
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

    #[test]
    fn times_sort_by_their_instant() {
        let cases = [
            (Some("1970-01-01T00:00:00Z"), 0),
            (Some("2024-05-01T10:00:00Z"), 1_714_557_600),
            (Some("2024-05-01T10:00:00.5Z"), 1_714_557_600),
            (Some("2024-05-01T12:00:00+02:00"), 1_714_557_600),
            (Some("garbage"), 0),
            (None, 0),
        ];
        for (time, seconds) in cases {
            assert_eq!(unix_seconds(time), seconds, "{time:?}");
        }
    }

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
