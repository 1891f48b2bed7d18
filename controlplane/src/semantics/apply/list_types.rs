//! How lists and maps are identified for ownership: the [`ListTypes`] lookup a caller passes in
//! (the built-in kinds' apply schema, a CRD's list types, or none), the per-path answer with
//! ObjectMeta's schema for `metadata`, and the path element that identifies a list item.

use serde_json::Value;

use super::fieldpath::Pe;
use crate::semantics::merge_keys::{self, ApplyListType, KindPatchMeta, ListStrategy, ZeroValue};

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

/// How a list is identified for ownership.
pub(super) enum ListKind {
    Atomic,
    Set,
    Map(Vec<String>),
}

/// Answers metadata paths with ObjectMeta's schema (as kube-apiserver does for every kind,
/// custom resources included) and everything else from the resource's own list types.
pub(super) struct Schema<'a> {
    lists: &'a dyn ListTypes,
    object_meta: Option<&'static KindPatchMeta>,
}

impl<'a> Schema<'a> {
    pub(super) fn new(lists: &'a dyn ListTypes) -> Self {
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

    pub(super) fn list_kind(&self, path: &str) -> ListKind {
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

/// The path element identifying a list item.
pub(super) fn list_item_pe(
    item: &Value,
    kind: &ListKind,
    schema_path: &str,
    schema: &Schema,
) -> Result<Pe, String> {
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

pub(super) fn element_path(schema_path: &str) -> String {
    format!("{schema_path}[]")
}

pub(super) fn field_path(schema_path: &str, name: &str) -> String {
    if schema_path.is_empty() { name.to_string() } else { format!("{schema_path}.{name}") }
}

pub(super) fn child_schema_path(schema_path: &str, pe: &Pe) -> String {
    match pe {
        Pe::Field(name) if schema_path.is_empty() => name.clone(),
        Pe::Field(name) => format!("{schema_path}.{name}"),
        _ => format!("{schema_path}[]"),
    }
}
