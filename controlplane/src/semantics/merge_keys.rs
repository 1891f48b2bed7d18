//! Patch metadata of the built-in kinds: how each list field is merged by a strategic merge patch
//! (the `patchStrategy`/`patchMergeKey` struct tags of k8s.io/api) and how server-side apply tracks
//! ownership inside it (the `x-kubernetes-list-type`/`-list-map-keys`/`-map-type` markers).
//!
//! The tables at the bottom of this file are generated from the OpenAPI v3 documents that
//! Kubernetes v1.34 publishes (which carry exactly those struct tags and markers), one entry per Go
//! type that has anything to say. A path is resolved by walking the types from the kind's root,
//! so the pod template nested in every workload, `metadata` everywhere and recursive types such as
//! the CRD schema need no special treatment.
//!
//! The tables also record, per field, how it shows in the Go zero value of its struct (from the
//! Go type declarations: non-pointer structs, times, required fields), which server-side apply
//! needs to compare objects the way kube-apiserver compares typed objects.
//!
//! Regenerate the tables (the part between the `BEGIN GENERATED TABLES` and `END GENERATED
//! TABLES` markers; edit nothing there by hand) with `controlplane/semantics-gen/generate.sh`,
//! which builds `controlplane/semantics-gen/merge-keys-gen.go` against k8s.io/api,
//! k8s.io/apimachinery, k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator v0.34.4 and
//! reads the documents from k8s.io/kubernetes v1.34.4 (`api/openapi-spec/v3`), both from the Go
//! module proxy; with those modules in the Go module cache, `GOFLAGS=-mod=mod GOPROXY=off
//! controlplane/semantics-gen/generate.sh` runs offline. The kinds described, and their order,
//! are listed in the generator.
//!
//! Paths are written from the object root with `.` between fields and `[]` for "an element of this
//! list"; the entry of a map-valued field is addressed by its key (`metadata.labels.app`).

use serde_json::Value;

/// How a list field is merged, taken from the `patchStrategy`/`patchMergeKey` struct tags of
/// k8s.io/api.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListStrategy {
    /// Merge elements by this key (`patchStrategy:"merge" patchMergeKey:"name"`): elements with the
    /// same key are merged field by field, others are kept or appended.
    MergeByKey(&'static str),
    /// Merge as a set of primitives (`patchStrategy:"merge"` without a key, e.g. finalizers).
    MergeSet,
    /// Replace wholesale (the default, and what every untagged list does).
    Replace,
}

/// How server-side apply tracks a list field (its `x-kubernetes-list-type`, or the patch strategy
/// when the list type is not declared, exactly as kube-apiserver derives its apply schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyListType {
    /// The whole list belongs to whoever set it last.
    Atomic,
    /// A set of primitives: every value is owned separately.
    Set,
    /// A list of objects identified by these key fields (`x-kubernetes-list-map-keys`).
    Map(&'static [&'static str]),
}

/// How a field shows in the Go zero value of its struct, which is what kube-apiserver compares
/// writes against: non-pointer structs are always there (as `{}`), required lists, maps and
/// pointers and non-pointer times as `null`, required scalars (and int-or-string values) as their
/// zero.
#[derive(Debug, Clone, PartialEq)]
pub enum ZeroValue {
    /// The field is an empty object (`spec`, `status`, a container's `resources`).
    EmptyObject,
    /// The field is present and null (a pod's `containers`, a deployment's `selector`, a
    /// condition's `lastTransitionTime`).
    Null,
    /// The field holds this zero (`""`, `0`, `false`; `0` for a service port's `targetPort`).
    Scalar(Value),
    /// The field is absent (`omitempty`), and a typed round trip drops it whenever it holds its
    /// zero (`""`, `0`, `false`): a deployment status's `replicas: 0` is not stored.
    Omitted,
}

impl ZeroValue {
    /// The JSON value of the field in the zero value (null for an omitted field).
    pub fn to_value(&self) -> Value {
        match self {
            ZeroValue::EmptyObject => Value::Object(serde_json::Map::new()),
            ZeroValue::Null | ZeroValue::Omitted => Value::Null,
            ZeroValue::Scalar(value) => value.clone(),
        }
    }
}

/// Patch metadata of one built-in kind: the strategy of every list field, addressed by its path
/// from the object root with list elements written as `[]` (e.g. "spec.containers",
/// "spec.containers[].env", "spec.template.spec.containers", "metadata.finalizers",
/// "metadata.ownerReferences", "status.conditions").
#[derive(Debug)]
pub struct KindPatchMeta {
    group: &'static str,
    kind: &'static str,
    root: u16,
}

impl KindPatchMeta {
    /// The API group of the kind ("" for the core group).
    pub fn group(&self) -> &'static str {
        self.group
    }

    /// The kind this metadata describes.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// How a strategic merge patch merges the list at `path`; `Replace` for paths that are not
    /// lists of this kind (the strategic merge patch default).
    pub fn list_strategy(&self, path: &str) -> ListStrategy {
        match self.resolve(path).list() {
            Some((Smp::Merge(key), _)) => ListStrategy::MergeByKey(key),
            Some((Smp::MergeSet, _)) => ListStrategy::MergeSet,
            _ => ListStrategy::Replace,
        }
    }

    /// Fields with `patchStrategy:"retainKeys"` (e.g. volumes' sources, deployment strategy): a
    /// `$retainKeys` directive in a patch of them clears the keys it does not list. For a list
    /// such as "spec.volumes" both the list and its elements ("spec.volumes[]") answer true.
    pub fn retains_keys(&self, path: &str) -> bool {
        self.resolve(path).last_field.is_some_and(|field| field.retain_keys)
    }

    /// How server-side apply tracks the list at `path` (`Atomic` for anything that is not a list
    /// this kind declares).
    pub fn apply_list_type(&self, path: &str) -> ApplyListType {
        match self.resolve(path).list() {
            Some((_, Ssa::Set)) => ApplyListType::Set,
            Some((_, Ssa::Map(keys, _))) if !keys.is_empty() => ApplyListType::Map(keys),
            Some((_, Ssa::Map(..))) => ApplyListType::Set,
            _ => ApplyListType::Atomic,
        }
    }

    /// The schema default of a key field of the associative list at `path` (`protocol` of
    /// container and service ports defaults to "TCP"), which server-side apply uses to identify
    /// elements that omit the key.
    pub fn list_key_default(&self, path: &str, key: &str) -> Option<Value> {
        match self.resolve(path).list() {
            Some((_, Ssa::Map(_, defaults))) => defaults
                .iter()
                .find(|(name, _)| *name == key)
                .and_then(|(_, json)| serde_json::from_str(json).ok()),
            _ => None,
        }
    }

    /// Whether the object at `path` is atomic for server-side apply
    /// (`x-kubernetes-map-type: atomic`, e.g. label selectors, node selectors, object references):
    /// it is owned as a whole rather than field by field.
    pub fn is_atomic(&self, path: &str) -> bool {
        let resolved = self.resolve(path);
        match resolved.pos {
            Pos::Struct(index, atomic) => atomic || type_def(index).is_some_and(|def| def.atomic),
            Pos::PlainStruct(atomic) => atomic,
            Pos::Map(_, atomic) => atomic,
            _ => false,
        }
    }

    /// How the fields of the struct at `path` show in its Go zero value (see [`ZeroValue`]): the
    /// ones it always carries, and the `omitempty` scalars a typed round trip drops when zero;
    /// empty for anything that is not a struct of this kind.
    pub fn zero_value_fields(&self, path: &str) -> Vec<(&'static str, ZeroValue)> {
        let Pos::Struct(index, _) = self.resolve(path).pos else { return Vec::new() };
        type_def(index)
            .map(|def| {
                def.fields
                    .iter()
                    .filter_map(|field| match field.zero {
                        Zero::Empty => Some((field.name, ZeroValue::EmptyObject)),
                        Zero::Null => Some((field.name, ZeroValue::Null)),
                        Zero::Value(json) => serde_json::from_str(json)
                            .ok()
                            .map(|value| (field.name, ZeroValue::Scalar(value))),
                        Zero::OmitEmpty => Some((field.name, ZeroValue::Omitted)),
                        Zero::Absent => None,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the object at `path` is a map whose keys are data (labels, annotations, a
    /// ConfigMap's data, untyped values) rather than a struct with declared fields. Server-side
    /// apply records each entry of such a map as a field of its own.
    pub fn is_map(&self, path: &str) -> bool {
        matches!(self.resolve(path).pos, Pos::Map(..) | Pos::Any)
    }

    fn resolve(&self, path: &str) -> Resolved {
        let mut resolved = Resolved { pos: Pos::Struct(self.root, false), last_field: None };
        if path.is_empty() {
            return resolved;
        }
        for segment in path.split('.') {
            let mut name = segment;
            let mut brackets = 0;
            while let Some(stripped) = name.strip_suffix("[]") {
                name = stripped;
                brackets += 1;
            }
            if !name.is_empty() {
                resolved = match resolved.pos {
                    Pos::Struct(index, _) => match type_def(index).and_then(|def| def.field(name)) {
                        Some(field) => Resolved { pos: Pos::of_shape(field.shape), last_field: Some(field) },
                        None => Resolved { pos: Pos::Unknown, last_field: None },
                    },
                    Pos::Map(elem, _) => Resolved { pos: Pos::of_elem(elem), last_field: None },
                    Pos::Any => Resolved { pos: Pos::Any, last_field: None },
                    _ => Resolved { pos: Pos::Unknown, last_field: None },
                };
            }
            for _ in 0..brackets {
                resolved.pos = match resolved.pos {
                    Pos::List(elem) => Pos::of_elem(elem),
                    Pos::Any => Pos::Any,
                    _ => Pos::Unknown,
                };
            }
        }
        resolved
    }
}

/// The patch metadata for a built-in (group, kind), e.g. ("", "Pod"), ("apps", "Deployment"),
/// ("batch", "Job"); `None` for kinds we do not know (custom resources, which do not support
/// strategic merge patches: the caller answers 415 UnsupportedMediaType).
pub fn kind_patch_meta(group: &str, kind: &str) -> Option<&'static KindPatchMeta> {
    KINDS.iter().find(|meta| meta.group == group && meta.kind == kind)
}

/// Every built-in kind this module describes, as (group, kind) pairs.
pub fn known_kinds() -> impl Iterator<Item = (&'static str, &'static str)> {
    KINDS.iter().map(|meta| (meta.group, meta.kind))
}

/// One Go type with something to say about patching.
struct TypeDef {
    #[allow(dead_code)] // kept for readers of the table
    name: &'static str,
    atomic: bool,
    /// Sorted by name.
    fields: &'static [Field],
}

impl TypeDef {
    fn field(&self, name: &str) -> Option<&'static Field> {
        let fields: &'static [Field] = self.fields;
        fields.binary_search_by(|field| field.name.cmp(name)).ok().and_then(|index| fields.get(index))
    }
}

fn type_def(index: u16) -> Option<&'static TypeDef> {
    TYPES.get(usize::from(index))
}

/// A field of a type; plain scalars, and plain structs absent from the zero value, are left out
/// of the tables.
struct Field {
    name: &'static str,
    shape: Shape,
    retain_keys: bool,
    zero: Zero,
}

const fn f(name: &'static str, shape: Shape, retain_keys: bool, zero: Zero) -> Field {
    Field { name, shape, retain_keys, zero }
}

/// How the field shows in the Go zero value of its struct.
#[derive(Clone, Copy)]
enum Zero {
    Absent,
    Empty,
    Null,
    /// A scalar zero, JSON-encoded.
    Value(&'static str),
    /// An `omitempty` scalar: absent, and dropped when zero.
    OmitEmpty,
}

/// Marks a struct whose type carries no metadata.
const PLAIN: u16 = u16::MAX;

#[derive(Clone, Copy)]
enum Shape {
    /// A scalar (only listed for its zero value, e.g. a non-pointer `metav1.Time`).
    Scalar,
    /// Any JSON value (RawExtension, the CRD schema's JSON values).
    Any,
    /// A struct of the given type (or `PLAIN`), atomic when the second field is true.
    Struct(u16, bool),
    /// A list: its elements, its strategic-merge strategy and its apply list type.
    List(Elem, Smp, Ssa),
    /// A map with data keys: its values, and whether it is atomic.
    Map(Elem, bool),
}

#[derive(Clone, Copy)]
enum Elem {
    /// Scalars or structs without metadata.
    Plain,
    /// Any JSON value.
    Any,
    /// Nested lists (never merged).
    List,
    /// Structs of the given type.
    Struct(u16),
}

#[derive(Clone, Copy)]
enum Smp {
    Replace,
    MergeSet,
    Merge(&'static str),
}

#[derive(Clone, Copy)]
enum Ssa {
    Atomic,
    Set,
    /// Key fields, and the JSON-encoded schema defaults of some of them.
    Map(&'static [&'static str], &'static [(&'static str, &'static str)]),
}

#[derive(Clone, Copy)]
enum Pos {
    Struct(u16, bool),
    PlainStruct(bool),
    List(Elem),
    Map(Elem, bool),
    Any,
    Plain,
    Unknown,
}

impl Pos {
    fn of_shape(shape: Shape) -> Pos {
        match shape {
            Shape::Scalar => Pos::Plain,
            Shape::Any => Pos::Any,
            Shape::Struct(PLAIN, atomic) => Pos::PlainStruct(atomic),
            Shape::Struct(index, atomic) => Pos::Struct(index, atomic),
            Shape::List(elem, ..) => Pos::List(elem),
            Shape::Map(elem, atomic) => Pos::Map(elem, atomic),
        }
    }

    fn of_elem(elem: Elem) -> Pos {
        match elem {
            Elem::Plain => Pos::Plain,
            Elem::Any => Pos::Any,
            Elem::List => Pos::List(Elem::Plain),
            Elem::Struct(index) => Pos::Struct(index, false),
        }
    }
}

struct Resolved {
    pos: Pos,
    /// The field named by the last segment of the path (even when `[]` follow it).
    last_field: Option<&'static Field>,
}

impl Resolved {
    /// The list metadata when the path names a declared list itself (not one of its elements).
    fn list(&self) -> Option<(Smp, Ssa)> {
        match (self.pos, self.last_field.map(|field| field.shape)) {
            (Pos::List(_), Some(Shape::List(_, smp, ssa))) => Some((smp, ssa)),
            _ => None,
        }
    }
}

// BEGIN GENERATED TABLES
// Generated by controlplane/semantics-gen/generate.sh from the Kubernetes v1.34 OpenAPI v3
// documents and Go types (see the module documentation).
#[rustfmt::skip]
static TYPES: [TypeDef; 369] = [
    // 0
    TypeDef { name: "api.core.v1.Pod", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(51, false), false, Zero::Empty),
        f("status", Shape::Struct(52, false), false, Zero::Empty),
    ] },
    // 1
    TypeDef { name: "api.core.v1.PodTemplate", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("template", Shape::Struct(53, false), false, Zero::Empty),
    ] },
    // 2
    TypeDef { name: "api.core.v1.ReplicationController", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(54, false), false, Zero::Empty),
        f("status", Shape::Struct(55, false), false, Zero::Empty),
    ] },
    // 3
    TypeDef { name: "api.core.v1.Service", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(56, false), false, Zero::Empty),
        f("status", Shape::Struct(57, false), false, Zero::Empty),
    ] },
    // 4
    TypeDef { name: "api.core.v1.Node", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(58, false), false, Zero::Empty),
        f("status", Shape::Struct(59, false), false, Zero::Empty),
    ] },
    // 5
    TypeDef { name: "api.core.v1.Namespace", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(60, false), false, Zero::Empty),
        f("status", Shape::Struct(61, false), false, Zero::Empty),
    ] },
    // 6
    TypeDef { name: "api.core.v1.ConfigMap", atomic: false, fields: &[
        f("binaryData", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("data", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
    ] },
    // 7
    TypeDef { name: "api.core.v1.Secret", atomic: false, fields: &[
        f("data", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("stringData", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("type", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 8
    TypeDef { name: "api.core.v1.ServiceAccount", atomic: false, fields: &[
        f("imagePullSecrets", Shape::List(Elem::Struct(62), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("secrets", Shape::List(Elem::Struct(63), Smp::Merge("name"), Ssa::Map(&["name"], &[])), false, Zero::Absent),
    ] },
    // 9
    TypeDef { name: "api.core.v1.PersistentVolumeClaim", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(64, false), false, Zero::Empty),
        f("status", Shape::Struct(65, false), false, Zero::Empty),
    ] },
    // 10
    TypeDef { name: "api.core.v1.PersistentVolume", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(66, false), false, Zero::Empty),
        f("status", Shape::Struct(67, false), false, Zero::Empty),
    ] },
    // 11
    TypeDef { name: "api.core.v1.Event", atomic: false, fields: &[
        f("action", Shape::Scalar, false, Zero::OmitEmpty),
        f("count", Shape::Scalar, false, Zero::OmitEmpty),
        f("eventTime", Shape::Scalar, false, Zero::Null),
        f("firstTimestamp", Shape::Scalar, false, Zero::Null),
        f("involvedObject", Shape::Struct(63, true), false, Zero::Empty),
        f("lastTimestamp", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("related", Shape::Struct(63, true), false, Zero::Absent),
        f("reportingComponent", Shape::Scalar, false, Zero::Value("\"\"")),
        f("reportingInstance", Shape::Scalar, false, Zero::Value("\"\"")),
        f("series", Shape::Struct(68, false), false, Zero::Absent),
        f("source", Shape::Struct(69, false), false, Zero::Empty),
        f("type", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 12
    TypeDef { name: "api.core.v1.Endpoints", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("subsets", Shape::List(Elem::Struct(70), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 13
    TypeDef { name: "api.core.v1.LimitRange", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(71, false), false, Zero::Empty),
    ] },
    // 14
    TypeDef { name: "api.core.v1.ResourceQuota", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(72, false), false, Zero::Empty),
        f("status", Shape::Struct(73, false), false, Zero::Empty),
    ] },
    // 15
    TypeDef { name: "api.core.v1.Binding", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("target", Shape::Struct(63, true), false, Zero::Empty),
    ] },
    // 16
    TypeDef { name: "api.apps.v1.Deployment", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(74, false), false, Zero::Empty),
        f("status", Shape::Struct(75, false), false, Zero::Empty),
    ] },
    // 17
    TypeDef { name: "api.apps.v1.ReplicaSet", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(76, false), false, Zero::Empty),
        f("status", Shape::Struct(77, false), false, Zero::Empty),
    ] },
    // 18
    TypeDef { name: "api.apps.v1.StatefulSet", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(78, false), false, Zero::Empty),
        f("status", Shape::Struct(79, false), false, Zero::Empty),
    ] },
    // 19
    TypeDef { name: "api.apps.v1.DaemonSet", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(80, false), false, Zero::Empty),
        f("status", Shape::Struct(81, false), false, Zero::Empty),
    ] },
    // 20
    TypeDef { name: "api.apps.v1.ControllerRevision", atomic: false, fields: &[
        f("data", Shape::Any, false, Zero::Empty),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("revision", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 21
    TypeDef { name: "api.batch.v1.Job", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(82, false), false, Zero::Empty),
        f("status", Shape::Struct(83, false), false, Zero::Empty),
    ] },
    // 22
    TypeDef { name: "api.batch.v1.CronJob", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(84, false), false, Zero::Empty),
        f("status", Shape::Struct(85, false), false, Zero::Empty),
    ] },
    // 23
    TypeDef { name: "api.autoscaling.v1.Scale", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(86, false), false, Zero::Empty),
        f("status", Shape::Struct(87, false), false, Zero::Empty),
    ] },
    // 24
    TypeDef { name: "api.autoscaling.v2.HorizontalPodAutoscaler", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(88, false), false, Zero::Empty),
        f("status", Shape::Struct(89, false), false, Zero::Empty),
    ] },
    // 25
    TypeDef { name: "api.coordination.v1.Lease", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(PLAIN, false), false, Zero::Empty),
    ] },
    // 26
    TypeDef { name: "api.policy.v1.PodDisruptionBudget", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(90, false), false, Zero::Empty),
        f("status", Shape::Struct(91, false), false, Zero::Empty),
    ] },
    // 27
    TypeDef { name: "api.policy.v1.Eviction", atomic: false, fields: &[
        f("deleteOptions", Shape::Struct(92, false), false, Zero::Absent),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
    ] },
    // 28
    TypeDef { name: "api.admissionregistration.v1.MutatingWebhookConfiguration", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("webhooks", Shape::List(Elem::Struct(93), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
    ] },
    // 29
    TypeDef { name: "api.admissionregistration.v1.ValidatingWebhookConfiguration", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("webhooks", Shape::List(Elem::Struct(94), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
    ] },
    // 30
    TypeDef { name: "api.admissionregistration.v1.ValidatingAdmissionPolicy", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(95, false), false, Zero::Empty),
        f("status", Shape::Struct(96, false), false, Zero::Empty),
    ] },
    // 31
    TypeDef { name: "api.admissionregistration.v1.ValidatingAdmissionPolicyBinding", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(97, false), false, Zero::Empty),
    ] },
    // 32
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(98, false), false, Zero::Empty),
        f("status", Shape::Struct(99, false), false, Zero::Empty),
    ] },
    // 33
    TypeDef { name: "kube-aggregator.pkg.apis.apiregistration.v1.APIService", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(100, false), false, Zero::Empty),
        f("status", Shape::Struct(101, false), false, Zero::Empty),
    ] },
    // 34
    TypeDef { name: "api.events.v1.Event", atomic: false, fields: &[
        f("action", Shape::Scalar, false, Zero::OmitEmpty),
        f("deprecatedCount", Shape::Scalar, false, Zero::OmitEmpty),
        f("deprecatedFirstTimestamp", Shape::Scalar, false, Zero::Null),
        f("deprecatedLastTimestamp", Shape::Scalar, false, Zero::Null),
        f("deprecatedSource", Shape::Struct(69, false), false, Zero::Empty),
        f("eventTime", Shape::Scalar, false, Zero::Null),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("note", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("regarding", Shape::Struct(63, true), false, Zero::Empty),
        f("related", Shape::Struct(63, true), false, Zero::Absent),
        f("reportingController", Shape::Scalar, false, Zero::OmitEmpty),
        f("reportingInstance", Shape::Scalar, false, Zero::OmitEmpty),
        f("series", Shape::Struct(102, false), false, Zero::Absent),
        f("type", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 35
    TypeDef { name: "api.discovery.v1.EndpointSlice", atomic: false, fields: &[
        f("addressType", Shape::Scalar, false, Zero::Value("\"\"")),
        f("endpoints", Shape::List(Elem::Struct(103), Smp::Replace, Ssa::Atomic), false, Zero::Null),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("ports", Shape::List(Elem::Struct(104), Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 36
    TypeDef { name: "api.rbac.v1.Role", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("rules", Shape::List(Elem::Struct(105), Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 37
    TypeDef { name: "api.rbac.v1.ClusterRole", atomic: false, fields: &[
        f("aggregationRule", Shape::Struct(106, false), false, Zero::Absent),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("rules", Shape::List(Elem::Struct(105), Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 38
    TypeDef { name: "api.rbac.v1.RoleBinding", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("roleRef", Shape::Struct(107, true), false, Zero::Empty),
        f("subjects", Shape::List(Elem::Struct(108), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 39
    TypeDef { name: "api.rbac.v1.ClusterRoleBinding", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("roleRef", Shape::Struct(107, true), false, Zero::Empty),
        f("subjects", Shape::List(Elem::Struct(108), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 40
    TypeDef { name: "api.networking.v1.Ingress", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(109, false), false, Zero::Empty),
        f("status", Shape::Struct(110, false), false, Zero::Empty),
    ] },
    // 41
    TypeDef { name: "api.networking.v1.IngressClass", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(111, false), false, Zero::Empty),
    ] },
    // 42
    TypeDef { name: "api.networking.v1.NetworkPolicy", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(112, false), false, Zero::Empty),
    ] },
    // 43
    TypeDef { name: "api.scheduling.v1.PriorityClass", atomic: false, fields: &[
        f("description", Shape::Scalar, false, Zero::OmitEmpty),
        f("globalDefault", Shape::Scalar, false, Zero::OmitEmpty),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("value", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 44
    TypeDef { name: "api.storage.v1.StorageClass", atomic: false, fields: &[
        f("allowedTopologies", Shape::List(Elem::Struct(113), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("mountOptions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("parameters", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("provisioner", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 45
    TypeDef { name: "api.storage.v1.CSIDriver", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(114, false), false, Zero::Empty),
    ] },
    // 46
    TypeDef { name: "api.storage.v1.CSINode", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(115, false), false, Zero::Empty),
    ] },
    // 47
    TypeDef { name: "api.storage.v1.VolumeAttachment", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(116, false), false, Zero::Empty),
        f("status", Shape::Struct(117, false), false, Zero::Empty),
    ] },
    // 48
    TypeDef { name: "api.node.v1.RuntimeClass", atomic: false, fields: &[
        f("handler", Shape::Scalar, false, Zero::Value("\"\"")),
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("overhead", Shape::Struct(118, false), false, Zero::Absent),
        f("scheduling", Shape::Struct(119, false), false, Zero::Absent),
    ] },
    // 49
    TypeDef { name: "api.certificates.v1.CertificateSigningRequest", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(120, false), false, Zero::Empty),
        f("status", Shape::Struct(121, false), false, Zero::Empty),
    ] },
    // 50
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.ObjectMeta", atomic: false, fields: &[
        f("annotations", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("creationTimestamp", Shape::Scalar, false, Zero::Null),
        f("finalizers", Shape::List(Elem::Plain, Smp::MergeSet, Ssa::Set), false, Zero::Absent),
        f("generateName", Shape::Scalar, false, Zero::OmitEmpty),
        f("generation", Shape::Scalar, false, Zero::OmitEmpty),
        f("labels", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("managedFields", Shape::List(Elem::Struct(122), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
        f("namespace", Shape::Scalar, false, Zero::OmitEmpty),
        f("ownerReferences", Shape::List(Elem::Struct(123), Smp::Merge("uid"), Ssa::Map(&["uid"], &[("uid", "\"\"")])), false, Zero::Absent),
        f("resourceVersion", Shape::Scalar, false, Zero::OmitEmpty),
        f("selfLink", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 51
    TypeDef { name: "api.core.v1.PodSpec", atomic: false, fields: &[
        f("affinity", Shape::Struct(124, false), false, Zero::Absent),
        f("containers", Shape::List(Elem::Struct(125), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Null),
        f("dnsConfig", Shape::Struct(126, false), false, Zero::Absent),
        f("dnsPolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("ephemeralContainers", Shape::List(Elem::Struct(127), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("hostAliases", Shape::List(Elem::Struct(128), Smp::Merge("ip"), Ssa::Map(&["ip"], &[("ip", "\"\"")])), false, Zero::Absent),
        f("hostIPC", Shape::Scalar, false, Zero::OmitEmpty),
        f("hostNetwork", Shape::Scalar, false, Zero::OmitEmpty),
        f("hostPID", Shape::Scalar, false, Zero::OmitEmpty),
        f("hostname", Shape::Scalar, false, Zero::OmitEmpty),
        f("imagePullSecrets", Shape::List(Elem::Struct(62), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("initContainers", Shape::List(Elem::Struct(125), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("nodeName", Shape::Scalar, false, Zero::OmitEmpty),
        f("nodeSelector", Shape::Map(Elem::Plain, true), false, Zero::Absent),
        f("os", Shape::Struct(129, false), false, Zero::Absent),
        f("overhead", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("priorityClassName", Shape::Scalar, false, Zero::OmitEmpty),
        f("readinessGates", Shape::List(Elem::Struct(130), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("resourceClaims", Shape::List(Elem::Struct(131), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), true, Zero::Absent),
        f("resources", Shape::Struct(132, false), false, Zero::Absent),
        f("restartPolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("schedulerName", Shape::Scalar, false, Zero::OmitEmpty),
        f("schedulingGates", Shape::List(Elem::Struct(133), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("securityContext", Shape::Struct(134, false), false, Zero::Absent),
        f("serviceAccount", Shape::Scalar, false, Zero::OmitEmpty),
        f("serviceAccountName", Shape::Scalar, false, Zero::OmitEmpty),
        f("subdomain", Shape::Scalar, false, Zero::OmitEmpty),
        f("tolerations", Shape::List(Elem::Struct(135), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("topologySpreadConstraints", Shape::List(Elem::Struct(136), Smp::Merge("topologyKey"), Ssa::Map(&["topologyKey", "whenUnsatisfiable"], &[("topologyKey", "\"\""), ("whenUnsatisfiable", "\"\"")])), false, Zero::Absent),
        f("volumes", Shape::List(Elem::Struct(137), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), true, Zero::Absent),
    ] },
    // 52
    TypeDef { name: "api.core.v1.PodStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Struct(138), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("containerStatuses", Shape::List(Elem::Struct(139), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("ephemeralContainerStatuses", Shape::List(Elem::Struct(139), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("extendedResourceClaimStatus", Shape::Struct(140, false), false, Zero::Absent),
        f("hostIP", Shape::Scalar, false, Zero::OmitEmpty),
        f("hostIPs", Shape::List(Elem::Struct(141), Smp::Merge("ip"), Ssa::Atomic), false, Zero::Absent),
        f("initContainerStatuses", Shape::List(Elem::Struct(139), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("nominatedNodeName", Shape::Scalar, false, Zero::OmitEmpty),
        f("observedGeneration", Shape::Scalar, false, Zero::OmitEmpty),
        f("phase", Shape::Scalar, false, Zero::OmitEmpty),
        f("podIP", Shape::Scalar, false, Zero::OmitEmpty),
        f("podIPs", Shape::List(Elem::Struct(142), Smp::Merge("ip"), Ssa::Map(&["ip"], &[("ip", "\"\"")])), false, Zero::Absent),
        f("qosClass", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("resize", Shape::Scalar, false, Zero::OmitEmpty),
        f("resourceClaimStatuses", Shape::List(Elem::Struct(143), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), true, Zero::Absent),
    ] },
    // 53
    TypeDef { name: "api.core.v1.PodTemplateSpec", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(51, false), false, Zero::Empty),
    ] },
    // 54
    TypeDef { name: "api.core.v1.ReplicationControllerSpec", atomic: false, fields: &[
        f("minReadySeconds", Shape::Scalar, false, Zero::OmitEmpty),
        f("selector", Shape::Map(Elem::Plain, true), false, Zero::Absent),
        f("template", Shape::Struct(53, false), false, Zero::Absent),
    ] },
    // 55
    TypeDef { name: "api.core.v1.ReplicationControllerStatus", atomic: false, fields: &[
        f("availableReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("conditions", Shape::List(Elem::Struct(144), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("fullyLabeledReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("observedGeneration", Shape::Scalar, false, Zero::OmitEmpty),
        f("readyReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("replicas", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 56
    TypeDef { name: "api.core.v1.ServiceSpec", atomic: false, fields: &[
        f("clusterIP", Shape::Scalar, false, Zero::OmitEmpty),
        f("clusterIPs", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("externalIPs", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("externalName", Shape::Scalar, false, Zero::OmitEmpty),
        f("externalTrafficPolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("healthCheckNodePort", Shape::Scalar, false, Zero::OmitEmpty),
        f("ipFamilies", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("loadBalancerIP", Shape::Scalar, false, Zero::OmitEmpty),
        f("loadBalancerSourceRanges", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("ports", Shape::List(Elem::Struct(145), Smp::Merge("port"), Ssa::Map(&["port", "protocol"], &[("port", "0"), ("protocol", "\"TCP\"")])), false, Zero::Absent),
        f("publishNotReadyAddresses", Shape::Scalar, false, Zero::OmitEmpty),
        f("selector", Shape::Map(Elem::Plain, true), false, Zero::Absent),
        f("sessionAffinity", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 57
    TypeDef { name: "api.core.v1.ServiceStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Struct(146), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("loadBalancer", Shape::Struct(147, false), false, Zero::Empty),
    ] },
    // 58
    TypeDef { name: "api.core.v1.NodeSpec", atomic: false, fields: &[
        f("configSource", Shape::Struct(148, false), false, Zero::Absent),
        f("externalID", Shape::Scalar, false, Zero::OmitEmpty),
        f("podCIDR", Shape::Scalar, false, Zero::OmitEmpty),
        f("podCIDRs", Shape::List(Elem::Plain, Smp::MergeSet, Ssa::Set), false, Zero::Absent),
        f("providerID", Shape::Scalar, false, Zero::OmitEmpty),
        f("taints", Shape::List(Elem::Struct(149), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("unschedulable", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 59
    TypeDef { name: "api.core.v1.NodeStatus", atomic: false, fields: &[
        f("addresses", Shape::List(Elem::Struct(150), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("allocatable", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("capacity", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("conditions", Shape::List(Elem::Struct(151), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("config", Shape::Struct(152, false), false, Zero::Absent),
        f("daemonEndpoints", Shape::Struct(153, false), false, Zero::Empty),
        f("images", Shape::List(Elem::Struct(154), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("nodeInfo", Shape::Struct(155, false), false, Zero::Empty),
        f("phase", Shape::Scalar, false, Zero::OmitEmpty),
        f("runtimeHandlers", Shape::List(Elem::Struct(156), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("volumesAttached", Shape::List(Elem::Struct(157), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("volumesInUse", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 60
    TypeDef { name: "api.core.v1.NamespaceSpec", atomic: false, fields: &[
        f("finalizers", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 61
    TypeDef { name: "api.core.v1.NamespaceStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Struct(158), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("phase", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 62
    TypeDef { name: "api.core.v1.LocalObjectReference", atomic: true, fields: &[
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 63
    TypeDef { name: "api.core.v1.ObjectReference", atomic: true, fields: &[
        f("apiVersion", Shape::Scalar, false, Zero::OmitEmpty),
        f("fieldPath", Shape::Scalar, false, Zero::OmitEmpty),
        f("kind", Shape::Scalar, false, Zero::OmitEmpty),
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
        f("namespace", Shape::Scalar, false, Zero::OmitEmpty),
        f("resourceVersion", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 64
    TypeDef { name: "api.core.v1.PersistentVolumeClaimSpec", atomic: false, fields: &[
        f("accessModes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("dataSource", Shape::Struct(159, true), false, Zero::Absent),
        f("dataSourceRef", Shape::Struct(160, false), false, Zero::Absent),
        f("resources", Shape::Struct(161, false), false, Zero::Empty),
        f("selector", Shape::Struct(162, true), false, Zero::Absent),
        f("volumeName", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 65
    TypeDef { name: "api.core.v1.PersistentVolumeClaimStatus", atomic: false, fields: &[
        f("accessModes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("allocatedResourceStatuses", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("allocatedResources", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("capacity", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("conditions", Shape::List(Elem::Struct(163), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("modifyVolumeStatus", Shape::Struct(164, false), false, Zero::Absent),
        f("phase", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 66
    TypeDef { name: "api.core.v1.PersistentVolumeSpec", atomic: false, fields: &[
        f("accessModes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("awsElasticBlockStore", Shape::Struct(165, false), false, Zero::Absent),
        f("azureDisk", Shape::Struct(166, false), false, Zero::Absent),
        f("azureFile", Shape::Struct(167, false), false, Zero::Absent),
        f("capacity", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("cephfs", Shape::Struct(168, false), false, Zero::Absent),
        f("cinder", Shape::Struct(169, false), false, Zero::Absent),
        f("claimRef", Shape::Struct(63, true), false, Zero::Absent),
        f("csi", Shape::Struct(170, false), false, Zero::Absent),
        f("fc", Shape::Struct(171, false), false, Zero::Absent),
        f("flexVolume", Shape::Struct(172, false), false, Zero::Absent),
        f("flocker", Shape::Struct(173, false), false, Zero::Absent),
        f("gcePersistentDisk", Shape::Struct(174, false), false, Zero::Absent),
        f("glusterfs", Shape::Struct(175, false), false, Zero::Absent),
        f("hostPath", Shape::Struct(176, false), false, Zero::Absent),
        f("iscsi", Shape::Struct(177, false), false, Zero::Absent),
        f("local", Shape::Struct(178, false), false, Zero::Absent),
        f("mountOptions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("nfs", Shape::Struct(179, false), false, Zero::Absent),
        f("nodeAffinity", Shape::Struct(180, false), false, Zero::Absent),
        f("persistentVolumeReclaimPolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("photonPersistentDisk", Shape::Struct(181, false), false, Zero::Absent),
        f("portworxVolume", Shape::Struct(182, false), false, Zero::Absent),
        f("quobyte", Shape::Struct(183, false), false, Zero::Absent),
        f("rbd", Shape::Struct(184, false), false, Zero::Absent),
        f("scaleIO", Shape::Struct(185, false), false, Zero::Absent),
        f("storageClassName", Shape::Scalar, false, Zero::OmitEmpty),
        f("storageos", Shape::Struct(186, false), false, Zero::Absent),
        f("vsphereVolume", Shape::Struct(187, false), false, Zero::Absent),
    ] },
    // 67
    TypeDef { name: "api.core.v1.PersistentVolumeStatus", atomic: false, fields: &[
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("phase", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 68
    TypeDef { name: "api.core.v1.EventSeries", atomic: false, fields: &[
        f("count", Shape::Scalar, false, Zero::OmitEmpty),
        f("lastObservedTime", Shape::Scalar, false, Zero::Null),
    ] },
    // 69
    TypeDef { name: "api.core.v1.EventSource", atomic: false, fields: &[
        f("component", Shape::Scalar, false, Zero::OmitEmpty),
        f("host", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 70
    TypeDef { name: "api.core.v1.EndpointSubset", atomic: false, fields: &[
        f("addresses", Shape::List(Elem::Struct(188), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("notReadyAddresses", Shape::List(Elem::Struct(188), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("ports", Shape::List(Elem::Struct(189), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 71
    TypeDef { name: "api.core.v1.LimitRangeSpec", atomic: false, fields: &[
        f("limits", Shape::List(Elem::Struct(190), Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 72
    TypeDef { name: "api.core.v1.ResourceQuotaSpec", atomic: false, fields: &[
        f("hard", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("scopeSelector", Shape::Struct(191, true), false, Zero::Absent),
        f("scopes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 73
    TypeDef { name: "api.core.v1.ResourceQuotaStatus", atomic: false, fields: &[
        f("hard", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("used", Shape::Map(Elem::Plain, false), false, Zero::Absent),
    ] },
    // 74
    TypeDef { name: "api.apps.v1.DeploymentSpec", atomic: false, fields: &[
        f("minReadySeconds", Shape::Scalar, false, Zero::OmitEmpty),
        f("paused", Shape::Scalar, false, Zero::OmitEmpty),
        f("selector", Shape::Struct(162, true), false, Zero::Null),
        f("strategy", Shape::Struct(192, false), true, Zero::Empty),
        f("template", Shape::Struct(53, false), false, Zero::Empty),
    ] },
    // 75
    TypeDef { name: "api.apps.v1.DeploymentStatus", atomic: false, fields: &[
        f("availableReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("conditions", Shape::List(Elem::Struct(193), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("observedGeneration", Shape::Scalar, false, Zero::OmitEmpty),
        f("readyReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("replicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("unavailableReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("updatedReplicas", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 76
    TypeDef { name: "api.apps.v1.ReplicaSetSpec", atomic: false, fields: &[
        f("minReadySeconds", Shape::Scalar, false, Zero::OmitEmpty),
        f("selector", Shape::Struct(162, true), false, Zero::Null),
        f("template", Shape::Struct(53, false), false, Zero::Empty),
    ] },
    // 77
    TypeDef { name: "api.apps.v1.ReplicaSetStatus", atomic: false, fields: &[
        f("availableReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("conditions", Shape::List(Elem::Struct(194), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("fullyLabeledReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("observedGeneration", Shape::Scalar, false, Zero::OmitEmpty),
        f("readyReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("replicas", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 78
    TypeDef { name: "api.apps.v1.StatefulSetSpec", atomic: false, fields: &[
        f("minReadySeconds", Shape::Scalar, false, Zero::OmitEmpty),
        f("ordinals", Shape::Struct(195, false), false, Zero::Absent),
        f("persistentVolumeClaimRetentionPolicy", Shape::Struct(196, false), false, Zero::Absent),
        f("podManagementPolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("selector", Shape::Struct(162, true), false, Zero::Null),
        f("serviceName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("template", Shape::Struct(53, false), false, Zero::Empty),
        f("updateStrategy", Shape::Struct(197, false), false, Zero::Empty),
        f("volumeClaimTemplates", Shape::List(Elem::Struct(9), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 79
    TypeDef { name: "api.apps.v1.StatefulSetStatus", atomic: false, fields: &[
        f("availableReplicas", Shape::Scalar, false, Zero::Value("0")),
        f("conditions", Shape::List(Elem::Struct(198), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("currentReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("currentRevision", Shape::Scalar, false, Zero::OmitEmpty),
        f("observedGeneration", Shape::Scalar, false, Zero::OmitEmpty),
        f("readyReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("replicas", Shape::Scalar, false, Zero::Value("0")),
        f("updateRevision", Shape::Scalar, false, Zero::OmitEmpty),
        f("updatedReplicas", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 80
    TypeDef { name: "api.apps.v1.DaemonSetSpec", atomic: false, fields: &[
        f("minReadySeconds", Shape::Scalar, false, Zero::OmitEmpty),
        f("selector", Shape::Struct(162, true), false, Zero::Null),
        f("template", Shape::Struct(53, false), false, Zero::Empty),
        f("updateStrategy", Shape::Struct(199, false), false, Zero::Empty),
    ] },
    // 81
    TypeDef { name: "api.apps.v1.DaemonSetStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Struct(200), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("currentNumberScheduled", Shape::Scalar, false, Zero::Value("0")),
        f("desiredNumberScheduled", Shape::Scalar, false, Zero::Value("0")),
        f("numberAvailable", Shape::Scalar, false, Zero::OmitEmpty),
        f("numberMisscheduled", Shape::Scalar, false, Zero::Value("0")),
        f("numberReady", Shape::Scalar, false, Zero::Value("0")),
        f("numberUnavailable", Shape::Scalar, false, Zero::OmitEmpty),
        f("observedGeneration", Shape::Scalar, false, Zero::OmitEmpty),
        f("updatedNumberScheduled", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 82
    TypeDef { name: "api.batch.v1.JobSpec", atomic: false, fields: &[
        f("podFailurePolicy", Shape::Struct(201, false), false, Zero::Absent),
        f("selector", Shape::Struct(162, true), false, Zero::Absent),
        f("successPolicy", Shape::Struct(202, false), false, Zero::Absent),
        f("template", Shape::Struct(53, false), false, Zero::Empty),
    ] },
    // 83
    TypeDef { name: "api.batch.v1.JobStatus", atomic: false, fields: &[
        f("active", Shape::Scalar, false, Zero::OmitEmpty),
        f("completedIndexes", Shape::Scalar, false, Zero::OmitEmpty),
        f("conditions", Shape::List(Elem::Struct(203), Smp::Merge("type"), Ssa::Atomic), false, Zero::Absent),
        f("failed", Shape::Scalar, false, Zero::OmitEmpty),
        f("succeeded", Shape::Scalar, false, Zero::OmitEmpty),
        f("uncountedTerminatedPods", Shape::Struct(204, false), false, Zero::Absent),
    ] },
    // 84
    TypeDef { name: "api.batch.v1.CronJobSpec", atomic: false, fields: &[
        f("concurrencyPolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("jobTemplate", Shape::Struct(205, false), false, Zero::Empty),
        f("schedule", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 85
    TypeDef { name: "api.batch.v1.CronJobStatus", atomic: false, fields: &[
        f("active", Shape::List(Elem::Struct(63), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 86
    TypeDef { name: "api.autoscaling.v1.ScaleSpec", atomic: false, fields: &[
        f("replicas", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 87
    TypeDef { name: "api.autoscaling.v1.ScaleStatus", atomic: false, fields: &[
        f("replicas", Shape::Scalar, false, Zero::Value("0")),
        f("selector", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 88
    TypeDef { name: "api.autoscaling.v2.HorizontalPodAutoscalerSpec", atomic: false, fields: &[
        f("behavior", Shape::Struct(206, false), false, Zero::Absent),
        f("maxReplicas", Shape::Scalar, false, Zero::Value("0")),
        f("metrics", Shape::List(Elem::Struct(207), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("scaleTargetRef", Shape::Struct(208, false), false, Zero::Empty),
    ] },
    // 89
    TypeDef { name: "api.autoscaling.v2.HorizontalPodAutoscalerStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Struct(209), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("currentMetrics", Shape::List(Elem::Struct(210), Smp::Replace, Ssa::Atomic), false, Zero::Null),
        f("currentReplicas", Shape::Scalar, false, Zero::OmitEmpty),
        f("desiredReplicas", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 90
    TypeDef { name: "api.policy.v1.PodDisruptionBudgetSpec", atomic: false, fields: &[
        f("selector", Shape::Struct(162, true), false, Zero::Absent),
    ] },
    // 91
    TypeDef { name: "api.policy.v1.PodDisruptionBudgetStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Struct(146), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("currentHealthy", Shape::Scalar, false, Zero::Value("0")),
        f("desiredHealthy", Shape::Scalar, false, Zero::Value("0")),
        f("disruptedPods", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("disruptionsAllowed", Shape::Scalar, false, Zero::Value("0")),
        f("expectedPods", Shape::Scalar, false, Zero::Value("0")),
        f("observedGeneration", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 92
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.DeleteOptions", atomic: false, fields: &[
        f("apiVersion", Shape::Scalar, false, Zero::OmitEmpty),
        f("dryRun", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("kind", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 93
    TypeDef { name: "api.admissionregistration.v1.MutatingWebhook", atomic: false, fields: &[
        f("admissionReviewVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
        f("clientConfig", Shape::Struct(211, false), false, Zero::Empty),
        f("matchConditions", Shape::List(Elem::Struct(212), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("namespaceSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("objectSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("rules", Shape::List(Elem::Struct(213), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("sideEffects", Shape::Scalar, false, Zero::Null),
    ] },
    // 94
    TypeDef { name: "api.admissionregistration.v1.ValidatingWebhook", atomic: false, fields: &[
        f("admissionReviewVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
        f("clientConfig", Shape::Struct(211, false), false, Zero::Empty),
        f("matchConditions", Shape::List(Elem::Struct(212), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("namespaceSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("objectSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("rules", Shape::List(Elem::Struct(213), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("sideEffects", Shape::Scalar, false, Zero::Null),
    ] },
    // 95
    TypeDef { name: "api.admissionregistration.v1.ValidatingAdmissionPolicySpec", atomic: false, fields: &[
        f("auditAnnotations", Shape::List(Elem::Struct(214), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("matchConditions", Shape::List(Elem::Struct(212), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("matchConstraints", Shape::Struct(215, true), false, Zero::Absent),
        f("paramKind", Shape::Struct(216, true), false, Zero::Absent),
        f("validations", Shape::List(Elem::Struct(217), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("variables", Shape::List(Elem::Struct(218), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
    ] },
    // 96
    TypeDef { name: "api.admissionregistration.v1.ValidatingAdmissionPolicyStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Struct(146), Smp::Replace, Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
        f("observedGeneration", Shape::Scalar, false, Zero::OmitEmpty),
        f("typeChecking", Shape::Struct(219, false), false, Zero::Absent),
    ] },
    // 97
    TypeDef { name: "api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec", atomic: false, fields: &[
        f("matchResources", Shape::Struct(215, true), false, Zero::Absent),
        f("paramRef", Shape::Struct(220, true), false, Zero::Absent),
        f("policyName", Shape::Scalar, false, Zero::OmitEmpty),
        f("validationActions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false, Zero::Absent),
    ] },
    // 98
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec", atomic: false, fields: &[
        f("conversion", Shape::Struct(221, false), false, Zero::Absent),
        f("group", Shape::Scalar, false, Zero::Value("\"\"")),
        f("names", Shape::Struct(222, false), false, Zero::Empty),
        f("preserveUnknownFields", Shape::Scalar, false, Zero::OmitEmpty),
        f("scope", Shape::Scalar, false, Zero::Value("\"\"")),
        f("versions", Shape::List(Elem::Struct(223), Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 99
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus", atomic: false, fields: &[
        f("acceptedNames", Shape::Struct(222, false), false, Zero::Empty),
        f("conditions", Shape::List(Elem::Struct(224), Smp::Replace, Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Null),
        f("storedVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 100
    TypeDef { name: "kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec", atomic: false, fields: &[
        f("group", Shape::Scalar, false, Zero::OmitEmpty),
        f("groupPriorityMinimum", Shape::Scalar, false, Zero::Value("0")),
        f("insecureSkipTLSVerify", Shape::Scalar, false, Zero::OmitEmpty),
        f("service", Shape::Struct(225, false), false, Zero::Absent),
        f("version", Shape::Scalar, false, Zero::OmitEmpty),
        f("versionPriority", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 101
    TypeDef { name: "kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Struct(226), Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
    ] },
    // 102
    TypeDef { name: "api.events.v1.EventSeries", atomic: false, fields: &[
        f("count", Shape::Scalar, false, Zero::Value("0")),
        f("lastObservedTime", Shape::Scalar, false, Zero::Null),
    ] },
    // 103
    TypeDef { name: "api.discovery.v1.Endpoint", atomic: false, fields: &[
        f("addresses", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false, Zero::Null),
        f("conditions", Shape::Struct(PLAIN, false), false, Zero::Empty),
        f("deprecatedTopology", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("hints", Shape::Struct(227, false), false, Zero::Absent),
        f("targetRef", Shape::Struct(63, true), false, Zero::Absent),
    ] },
    // 104
    TypeDef { name: "api.discovery.v1.EndpointPort", atomic: true, fields: &[] },
    // 105
    TypeDef { name: "api.rbac.v1.PolicyRule", atomic: false, fields: &[
        f("apiGroups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("nonResourceURLs", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("resourceNames", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("resources", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("verbs", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 106
    TypeDef { name: "api.rbac.v1.AggregationRule", atomic: false, fields: &[
        f("clusterRoleSelectors", Shape::List(Elem::Struct(162), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 107
    TypeDef { name: "api.rbac.v1.RoleRef", atomic: true, fields: &[
        f("apiGroup", Shape::Scalar, false, Zero::Value("\"\"")),
        f("kind", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 108
    TypeDef { name: "api.rbac.v1.Subject", atomic: true, fields: &[
        f("apiGroup", Shape::Scalar, false, Zero::OmitEmpty),
        f("kind", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("namespace", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 109
    TypeDef { name: "api.networking.v1.IngressSpec", atomic: false, fields: &[
        f("defaultBackend", Shape::Struct(228, false), false, Zero::Absent),
        f("rules", Shape::List(Elem::Struct(229), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("tls", Shape::List(Elem::Struct(230), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 110
    TypeDef { name: "api.networking.v1.IngressStatus", atomic: false, fields: &[
        f("loadBalancer", Shape::Struct(231, false), false, Zero::Empty),
    ] },
    // 111
    TypeDef { name: "api.networking.v1.IngressClassSpec", atomic: false, fields: &[
        f("controller", Shape::Scalar, false, Zero::OmitEmpty),
        f("parameters", Shape::Struct(232, false), false, Zero::Absent),
    ] },
    // 112
    TypeDef { name: "api.networking.v1.NetworkPolicySpec", atomic: false, fields: &[
        f("egress", Shape::List(Elem::Struct(233), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("ingress", Shape::List(Elem::Struct(234), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("podSelector", Shape::Struct(162, true), false, Zero::Empty),
        f("policyTypes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 113
    TypeDef { name: "api.core.v1.TopologySelectorTerm", atomic: true, fields: &[
        f("matchLabelExpressions", Shape::List(Elem::Struct(235), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 114
    TypeDef { name: "api.storage.v1.CSIDriverSpec", atomic: false, fields: &[
        f("tokenRequests", Shape::List(Elem::Struct(236), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("volumeLifecycleModes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false, Zero::Absent),
    ] },
    // 115
    TypeDef { name: "api.storage.v1.CSINodeSpec", atomic: false, fields: &[
        f("drivers", Shape::List(Elem::Struct(237), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Null),
    ] },
    // 116
    TypeDef { name: "api.storage.v1.VolumeAttachmentSpec", atomic: false, fields: &[
        f("attacher", Shape::Scalar, false, Zero::Value("\"\"")),
        f("nodeName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("source", Shape::Struct(238, false), false, Zero::Empty),
    ] },
    // 117
    TypeDef { name: "api.storage.v1.VolumeAttachmentStatus", atomic: false, fields: &[
        f("attachError", Shape::Struct(239, false), false, Zero::Absent),
        f("attached", Shape::Scalar, false, Zero::Value("false")),
        f("attachmentMetadata", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("detachError", Shape::Struct(239, false), false, Zero::Absent),
    ] },
    // 118
    TypeDef { name: "api.node.v1.Overhead", atomic: false, fields: &[
        f("podFixed", Shape::Map(Elem::Plain, false), false, Zero::Absent),
    ] },
    // 119
    TypeDef { name: "api.node.v1.Scheduling", atomic: false, fields: &[
        f("nodeSelector", Shape::Map(Elem::Plain, true), false, Zero::Absent),
        f("tolerations", Shape::List(Elem::Struct(135), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 120
    TypeDef { name: "api.certificates.v1.CertificateSigningRequestSpec", atomic: false, fields: &[
        f("extra", Shape::Map(Elem::List, false), false, Zero::Absent),
        f("groups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("request", Shape::Scalar, false, Zero::Null),
        f("signerName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("uid", Shape::Scalar, false, Zero::OmitEmpty),
        f("usages", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("username", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 121
    TypeDef { name: "api.certificates.v1.CertificateSigningRequestStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Struct(240), Smp::Replace, Ssa::Map(&["type"], &[("type", "\"\"")])), false, Zero::Absent),
    ] },
    // 122
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry", atomic: false, fields: &[
        f("apiVersion", Shape::Scalar, false, Zero::OmitEmpty),
        f("fieldsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("fieldsV1", Shape::Any, false, Zero::Absent),
        f("manager", Shape::Scalar, false, Zero::OmitEmpty),
        f("operation", Shape::Scalar, false, Zero::OmitEmpty),
        f("subresource", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 123
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.OwnerReference", atomic: true, fields: &[
        f("apiVersion", Shape::Scalar, false, Zero::Value("\"\"")),
        f("kind", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 124
    TypeDef { name: "api.core.v1.Affinity", atomic: false, fields: &[
        f("nodeAffinity", Shape::Struct(241, false), false, Zero::Absent),
        f("podAffinity", Shape::Struct(242, false), false, Zero::Absent),
        f("podAntiAffinity", Shape::Struct(243, false), false, Zero::Absent),
    ] },
    // 125
    TypeDef { name: "api.core.v1.Container", atomic: false, fields: &[
        f("args", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("command", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("env", Shape::List(Elem::Struct(244), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("envFrom", Shape::List(Elem::Struct(245), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("image", Shape::Scalar, false, Zero::OmitEmpty),
        f("imagePullPolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("lifecycle", Shape::Struct(246, false), false, Zero::Absent),
        f("livenessProbe", Shape::Struct(247, false), false, Zero::Absent),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("ports", Shape::List(Elem::Struct(248), Smp::Merge("containerPort"), Ssa::Map(&["containerPort", "protocol"], &[("containerPort", "0"), ("protocol", "\"TCP\"")])), false, Zero::Absent),
        f("readinessProbe", Shape::Struct(247, false), false, Zero::Absent),
        f("resizePolicy", Shape::List(Elem::Struct(249), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("resources", Shape::Struct(132, false), false, Zero::Empty),
        f("restartPolicyRules", Shape::List(Elem::Struct(250), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("securityContext", Shape::Struct(251, false), false, Zero::Absent),
        f("startupProbe", Shape::Struct(247, false), false, Zero::Absent),
        f("stdin", Shape::Scalar, false, Zero::OmitEmpty),
        f("stdinOnce", Shape::Scalar, false, Zero::OmitEmpty),
        f("terminationMessagePath", Shape::Scalar, false, Zero::OmitEmpty),
        f("terminationMessagePolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("tty", Shape::Scalar, false, Zero::OmitEmpty),
        f("volumeDevices", Shape::List(Elem::Struct(252), Smp::Merge("devicePath"), Ssa::Map(&["devicePath"], &[("devicePath", "\"\"")])), false, Zero::Absent),
        f("volumeMounts", Shape::List(Elem::Struct(253), Smp::Merge("mountPath"), Ssa::Map(&["mountPath"], &[("mountPath", "\"\"")])), false, Zero::Absent),
        f("workingDir", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 126
    TypeDef { name: "api.core.v1.PodDNSConfig", atomic: false, fields: &[
        f("nameservers", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("options", Shape::List(Elem::Struct(254), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("searches", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 127
    TypeDef { name: "api.core.v1.EphemeralContainer", atomic: false, fields: &[
        f("args", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("command", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("env", Shape::List(Elem::Struct(244), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("envFrom", Shape::List(Elem::Struct(245), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("image", Shape::Scalar, false, Zero::OmitEmpty),
        f("imagePullPolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("lifecycle", Shape::Struct(246, false), false, Zero::Absent),
        f("livenessProbe", Shape::Struct(247, false), false, Zero::Absent),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("ports", Shape::List(Elem::Struct(248), Smp::Merge("containerPort"), Ssa::Map(&["containerPort", "protocol"], &[("containerPort", "0"), ("protocol", "\"TCP\"")])), false, Zero::Absent),
        f("readinessProbe", Shape::Struct(247, false), false, Zero::Absent),
        f("resizePolicy", Shape::List(Elem::Struct(249), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("resources", Shape::Struct(132, false), false, Zero::Empty),
        f("restartPolicyRules", Shape::List(Elem::Struct(250), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("securityContext", Shape::Struct(251, false), false, Zero::Absent),
        f("startupProbe", Shape::Struct(247, false), false, Zero::Absent),
        f("stdin", Shape::Scalar, false, Zero::OmitEmpty),
        f("stdinOnce", Shape::Scalar, false, Zero::OmitEmpty),
        f("targetContainerName", Shape::Scalar, false, Zero::OmitEmpty),
        f("terminationMessagePath", Shape::Scalar, false, Zero::OmitEmpty),
        f("terminationMessagePolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("tty", Shape::Scalar, false, Zero::OmitEmpty),
        f("volumeDevices", Shape::List(Elem::Struct(252), Smp::Merge("devicePath"), Ssa::Map(&["devicePath"], &[("devicePath", "\"\"")])), false, Zero::Absent),
        f("volumeMounts", Shape::List(Elem::Struct(253), Smp::Merge("mountPath"), Ssa::Map(&["mountPath"], &[("mountPath", "\"\"")])), false, Zero::Absent),
        f("workingDir", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 128
    TypeDef { name: "api.core.v1.HostAlias", atomic: false, fields: &[
        f("hostnames", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("ip", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 129
    TypeDef { name: "api.core.v1.PodOS", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 130
    TypeDef { name: "api.core.v1.PodReadinessGate", atomic: false, fields: &[
        f("conditionType", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 131
    TypeDef { name: "api.core.v1.PodResourceClaim", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 132
    TypeDef { name: "api.core.v1.ResourceRequirements", atomic: false, fields: &[
        f("claims", Shape::List(Elem::Struct(255), Smp::Replace, Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("limits", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("requests", Shape::Map(Elem::Plain, false), false, Zero::Absent),
    ] },
    // 133
    TypeDef { name: "api.core.v1.PodSchedulingGate", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 134
    TypeDef { name: "api.core.v1.PodSecurityContext", atomic: false, fields: &[
        f("appArmorProfile", Shape::Struct(256, false), false, Zero::Absent),
        f("seLinuxOptions", Shape::Struct(257, false), false, Zero::Absent),
        f("seccompProfile", Shape::Struct(258, false), false, Zero::Absent),
        f("supplementalGroups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("sysctls", Shape::List(Elem::Struct(259), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 135
    TypeDef { name: "api.core.v1.Toleration", atomic: false, fields: &[
        f("effect", Shape::Scalar, false, Zero::OmitEmpty),
        f("key", Shape::Scalar, false, Zero::OmitEmpty),
        f("operator", Shape::Scalar, false, Zero::OmitEmpty),
        f("value", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 136
    TypeDef { name: "api.core.v1.TopologySpreadConstraint", atomic: false, fields: &[
        f("labelSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("matchLabelKeys", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("maxSkew", Shape::Scalar, false, Zero::Value("0")),
        f("topologyKey", Shape::Scalar, false, Zero::Value("\"\"")),
        f("whenUnsatisfiable", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 137
    TypeDef { name: "api.core.v1.Volume", atomic: false, fields: &[
        f("awsElasticBlockStore", Shape::Struct(165, false), false, Zero::Absent),
        f("azureDisk", Shape::Struct(166, false), false, Zero::Absent),
        f("azureFile", Shape::Struct(260, false), false, Zero::Absent),
        f("cephfs", Shape::Struct(261, false), false, Zero::Absent),
        f("cinder", Shape::Struct(262, false), false, Zero::Absent),
        f("configMap", Shape::Struct(263, false), false, Zero::Absent),
        f("csi", Shape::Struct(264, false), false, Zero::Absent),
        f("downwardAPI", Shape::Struct(265, false), false, Zero::Absent),
        f("emptyDir", Shape::Struct(266, false), false, Zero::Absent),
        f("ephemeral", Shape::Struct(267, false), false, Zero::Absent),
        f("fc", Shape::Struct(171, false), false, Zero::Absent),
        f("flexVolume", Shape::Struct(268, false), false, Zero::Absent),
        f("flocker", Shape::Struct(173, false), false, Zero::Absent),
        f("gcePersistentDisk", Shape::Struct(174, false), false, Zero::Absent),
        f("gitRepo", Shape::Struct(269, false), false, Zero::Absent),
        f("glusterfs", Shape::Struct(270, false), false, Zero::Absent),
        f("hostPath", Shape::Struct(176, false), false, Zero::Absent),
        f("image", Shape::Struct(271, false), false, Zero::Absent),
        f("iscsi", Shape::Struct(272, false), false, Zero::Absent),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("nfs", Shape::Struct(179, false), false, Zero::Absent),
        f("persistentVolumeClaim", Shape::Struct(273, false), false, Zero::Absent),
        f("photonPersistentDisk", Shape::Struct(181, false), false, Zero::Absent),
        f("portworxVolume", Shape::Struct(182, false), false, Zero::Absent),
        f("projected", Shape::Struct(274, false), false, Zero::Absent),
        f("quobyte", Shape::Struct(183, false), false, Zero::Absent),
        f("rbd", Shape::Struct(275, false), false, Zero::Absent),
        f("scaleIO", Shape::Struct(276, false), false, Zero::Absent),
        f("secret", Shape::Struct(277, false), false, Zero::Absent),
        f("storageos", Shape::Struct(278, false), false, Zero::Absent),
        f("vsphereVolume", Shape::Struct(187, false), false, Zero::Absent),
    ] },
    // 138
    TypeDef { name: "api.core.v1.PodCondition", atomic: false, fields: &[
        f("lastProbeTime", Shape::Scalar, false, Zero::Null),
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("observedGeneration", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("status", Shape::Scalar, false, Zero::Value("\"\"")),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 139
    TypeDef { name: "api.core.v1.ContainerStatus", atomic: false, fields: &[
        f("allocatedResources", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("allocatedResourcesStatus", Shape::List(Elem::Struct(279), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false, Zero::Absent),
        f("containerID", Shape::Scalar, false, Zero::OmitEmpty),
        f("image", Shape::Scalar, false, Zero::Value("\"\"")),
        f("imageID", Shape::Scalar, false, Zero::Value("\"\"")),
        f("lastState", Shape::Struct(280, false), false, Zero::Empty),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("ready", Shape::Scalar, false, Zero::Value("false")),
        f("resources", Shape::Struct(132, false), false, Zero::Absent),
        f("restartCount", Shape::Scalar, false, Zero::Value("0")),
        f("state", Shape::Struct(280, false), false, Zero::Empty),
        f("user", Shape::Struct(281, false), false, Zero::Absent),
        f("volumeMounts", Shape::List(Elem::Struct(282), Smp::Merge("mountPath"), Ssa::Map(&["mountPath"], &[("mountPath", "\"\"")])), false, Zero::Absent),
    ] },
    // 140
    TypeDef { name: "api.core.v1.PodExtendedResourceClaimStatus", atomic: false, fields: &[
        f("requestMappings", Shape::List(Elem::Struct(283), Smp::Replace, Ssa::Atomic), false, Zero::Null),
        f("resourceClaimName", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 141
    TypeDef { name: "api.core.v1.HostIP", atomic: false, fields: &[
        f("ip", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 142
    TypeDef { name: "api.core.v1.PodIP", atomic: false, fields: &[
        f("ip", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 143
    TypeDef { name: "api.core.v1.PodResourceClaimStatus", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 144
    TypeDef { name: "api.core.v1.ReplicationControllerCondition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("status", Shape::Scalar, false, Zero::Value("\"\"")),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 145
    TypeDef { name: "api.core.v1.ServicePort", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
        f("nodePort", Shape::Scalar, false, Zero::OmitEmpty),
        f("port", Shape::Scalar, false, Zero::Value("0")),
        f("protocol", Shape::Scalar, false, Zero::OmitEmpty),
        f("targetPort", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 146
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.Condition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::Value("\"\"")),
        f("observedGeneration", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::Value("\"\"")),
        f("status", Shape::Scalar, false, Zero::Value("\"\"")),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 147
    TypeDef { name: "api.core.v1.LoadBalancerStatus", atomic: false, fields: &[
        f("ingress", Shape::List(Elem::Struct(284), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 148
    TypeDef { name: "api.core.v1.NodeConfigSource", atomic: false, fields: &[
        f("configMap", Shape::Struct(285, false), false, Zero::Absent),
    ] },
    // 149
    TypeDef { name: "api.core.v1.Taint", atomic: false, fields: &[
        f("effect", Shape::Scalar, false, Zero::Value("\"\"")),
        f("key", Shape::Scalar, false, Zero::Value("\"\"")),
        f("value", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 150
    TypeDef { name: "api.core.v1.NodeAddress", atomic: false, fields: &[
        f("address", Shape::Scalar, false, Zero::Value("\"\"")),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 151
    TypeDef { name: "api.core.v1.NodeCondition", atomic: false, fields: &[
        f("lastHeartbeatTime", Shape::Scalar, false, Zero::Null),
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("status", Shape::Scalar, false, Zero::Value("\"\"")),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 152
    TypeDef { name: "api.core.v1.NodeConfigStatus", atomic: false, fields: &[
        f("active", Shape::Struct(148, false), false, Zero::Absent),
        f("assigned", Shape::Struct(148, false), false, Zero::Absent),
        f("error", Shape::Scalar, false, Zero::OmitEmpty),
        f("lastKnownGood", Shape::Struct(148, false), false, Zero::Absent),
    ] },
    // 153
    TypeDef { name: "api.core.v1.NodeDaemonEndpoints", atomic: false, fields: &[
        f("kubeletEndpoint", Shape::Struct(286, false), false, Zero::Empty),
    ] },
    // 154
    TypeDef { name: "api.core.v1.ContainerImage", atomic: false, fields: &[
        f("names", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
        f("sizeBytes", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 155
    TypeDef { name: "api.core.v1.NodeSystemInfo", atomic: false, fields: &[
        f("architecture", Shape::Scalar, false, Zero::Value("\"\"")),
        f("bootID", Shape::Scalar, false, Zero::Value("\"\"")),
        f("containerRuntimeVersion", Shape::Scalar, false, Zero::Value("\"\"")),
        f("kernelVersion", Shape::Scalar, false, Zero::Value("\"\"")),
        f("kubeProxyVersion", Shape::Scalar, false, Zero::Value("\"\"")),
        f("kubeletVersion", Shape::Scalar, false, Zero::Value("\"\"")),
        f("machineID", Shape::Scalar, false, Zero::Value("\"\"")),
        f("operatingSystem", Shape::Scalar, false, Zero::Value("\"\"")),
        f("osImage", Shape::Scalar, false, Zero::Value("\"\"")),
        f("systemUUID", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 156
    TypeDef { name: "api.core.v1.NodeRuntimeHandler", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 157
    TypeDef { name: "api.core.v1.AttachedVolume", atomic: false, fields: &[
        f("devicePath", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 158
    TypeDef { name: "api.core.v1.NamespaceCondition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("status", Shape::Scalar, false, Zero::Value("\"\"")),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 159
    TypeDef { name: "api.core.v1.TypedLocalObjectReference", atomic: true, fields: &[
        f("apiGroup", Shape::Scalar, false, Zero::Null),
        f("kind", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 160
    TypeDef { name: "api.core.v1.TypedObjectReference", atomic: false, fields: &[
        f("apiGroup", Shape::Scalar, false, Zero::Null),
        f("kind", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 161
    TypeDef { name: "api.core.v1.VolumeResourceRequirements", atomic: false, fields: &[
        f("limits", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("requests", Shape::Map(Elem::Plain, false), false, Zero::Absent),
    ] },
    // 162
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.LabelSelector", atomic: true, fields: &[
        f("matchExpressions", Shape::List(Elem::Struct(287), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("matchLabels", Shape::Map(Elem::Plain, false), false, Zero::Absent),
    ] },
    // 163
    TypeDef { name: "api.core.v1.PersistentVolumeClaimCondition", atomic: false, fields: &[
        f("lastProbeTime", Shape::Scalar, false, Zero::Null),
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("status", Shape::Scalar, false, Zero::Value("\"\"")),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 164
    TypeDef { name: "api.core.v1.ModifyVolumeStatus", atomic: false, fields: &[
        f("status", Shape::Scalar, false, Zero::Value("\"\"")),
        f("targetVolumeAttributesClassName", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 165
    TypeDef { name: "api.core.v1.AWSElasticBlockStoreVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("partition", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("volumeID", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 166
    TypeDef { name: "api.core.v1.AzureDiskVolumeSource", atomic: false, fields: &[
        f("diskName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("diskURI", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 167
    TypeDef { name: "api.core.v1.AzureFilePersistentVolumeSource", atomic: false, fields: &[
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("secretNamespace", Shape::Scalar, false, Zero::Null),
        f("shareName", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 168
    TypeDef { name: "api.core.v1.CephFSPersistentVolumeSource", atomic: false, fields: &[
        f("monitors", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
        f("path", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretFile", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(288, true), false, Zero::Absent),
        f("user", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 169
    TypeDef { name: "api.core.v1.CinderPersistentVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(288, true), false, Zero::Absent),
        f("volumeID", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 170
    TypeDef { name: "api.core.v1.CSIPersistentVolumeSource", atomic: false, fields: &[
        f("controllerExpandSecretRef", Shape::Struct(288, true), false, Zero::Absent),
        f("controllerPublishSecretRef", Shape::Struct(288, true), false, Zero::Absent),
        f("driver", Shape::Scalar, false, Zero::Value("\"\"")),
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("nodeExpandSecretRef", Shape::Struct(288, true), false, Zero::Absent),
        f("nodePublishSecretRef", Shape::Struct(288, true), false, Zero::Absent),
        f("nodeStageSecretRef", Shape::Struct(288, true), false, Zero::Absent),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("volumeAttributes", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("volumeHandle", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 171
    TypeDef { name: "api.core.v1.FCVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("targetWWNs", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("wwids", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 172
    TypeDef { name: "api.core.v1.FlexPersistentVolumeSource", atomic: false, fields: &[
        f("driver", Shape::Scalar, false, Zero::Value("\"\"")),
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("options", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(288, true), false, Zero::Absent),
    ] },
    // 173
    TypeDef { name: "api.core.v1.FlockerVolumeSource", atomic: false, fields: &[
        f("datasetName", Shape::Scalar, false, Zero::OmitEmpty),
        f("datasetUUID", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 174
    TypeDef { name: "api.core.v1.GCEPersistentDiskVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("partition", Shape::Scalar, false, Zero::OmitEmpty),
        f("pdName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 175
    TypeDef { name: "api.core.v1.GlusterfsPersistentVolumeSource", atomic: false, fields: &[
        f("endpoints", Shape::Scalar, false, Zero::Value("\"\"")),
        f("path", Shape::Scalar, false, Zero::Value("\"\"")),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 176
    TypeDef { name: "api.core.v1.HostPathVolumeSource", atomic: false, fields: &[
        f("path", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 177
    TypeDef { name: "api.core.v1.ISCSIPersistentVolumeSource", atomic: false, fields: &[
        f("chapAuthDiscovery", Shape::Scalar, false, Zero::OmitEmpty),
        f("chapAuthSession", Shape::Scalar, false, Zero::OmitEmpty),
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("iqn", Shape::Scalar, false, Zero::Value("\"\"")),
        f("iscsiInterface", Shape::Scalar, false, Zero::OmitEmpty),
        f("lun", Shape::Scalar, false, Zero::Value("0")),
        f("portals", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(288, true), false, Zero::Absent),
        f("targetPortal", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 178
    TypeDef { name: "api.core.v1.LocalVolumeSource", atomic: false, fields: &[
        f("path", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 179
    TypeDef { name: "api.core.v1.NFSVolumeSource", atomic: false, fields: &[
        f("path", Shape::Scalar, false, Zero::Value("\"\"")),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("server", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 180
    TypeDef { name: "api.core.v1.VolumeNodeAffinity", atomic: false, fields: &[
        f("required", Shape::Struct(289, true), false, Zero::Absent),
    ] },
    // 181
    TypeDef { name: "api.core.v1.PhotonPersistentDiskVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("pdID", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 182
    TypeDef { name: "api.core.v1.PortworxVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("volumeID", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 183
    TypeDef { name: "api.core.v1.QuobyteVolumeSource", atomic: false, fields: &[
        f("group", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("registry", Shape::Scalar, false, Zero::Value("\"\"")),
        f("tenant", Shape::Scalar, false, Zero::OmitEmpty),
        f("user", Shape::Scalar, false, Zero::OmitEmpty),
        f("volume", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 184
    TypeDef { name: "api.core.v1.RBDPersistentVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("image", Shape::Scalar, false, Zero::Value("\"\"")),
        f("keyring", Shape::Scalar, false, Zero::OmitEmpty),
        f("monitors", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
        f("pool", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(288, true), false, Zero::Absent),
        f("user", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 185
    TypeDef { name: "api.core.v1.ScaleIOPersistentVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("gateway", Shape::Scalar, false, Zero::Value("\"\"")),
        f("protectionDomain", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(288, true), false, Zero::Null),
        f("sslEnabled", Shape::Scalar, false, Zero::OmitEmpty),
        f("storageMode", Shape::Scalar, false, Zero::OmitEmpty),
        f("storagePool", Shape::Scalar, false, Zero::OmitEmpty),
        f("system", Shape::Scalar, false, Zero::Value("\"\"")),
        f("volumeName", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 186
    TypeDef { name: "api.core.v1.StorageOSPersistentVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(63, true), false, Zero::Absent),
        f("volumeName", Shape::Scalar, false, Zero::OmitEmpty),
        f("volumeNamespace", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 187
    TypeDef { name: "api.core.v1.VsphereVirtualDiskVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("storagePolicyID", Shape::Scalar, false, Zero::OmitEmpty),
        f("storagePolicyName", Shape::Scalar, false, Zero::OmitEmpty),
        f("volumePath", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 188
    TypeDef { name: "api.core.v1.EndpointAddress", atomic: true, fields: &[
        f("hostname", Shape::Scalar, false, Zero::OmitEmpty),
        f("ip", Shape::Scalar, false, Zero::Value("\"\"")),
        f("targetRef", Shape::Struct(63, true), false, Zero::Absent),
    ] },
    // 189
    TypeDef { name: "api.core.v1.EndpointPort", atomic: true, fields: &[
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
        f("port", Shape::Scalar, false, Zero::Value("0")),
        f("protocol", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 190
    TypeDef { name: "api.core.v1.LimitRangeItem", atomic: false, fields: &[
        f("default", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("defaultRequest", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("max", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("maxLimitRequestRatio", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("min", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 191
    TypeDef { name: "api.core.v1.ScopeSelector", atomic: true, fields: &[
        f("matchExpressions", Shape::List(Elem::Struct(290), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 192
    TypeDef { name: "api.apps.v1.DeploymentStrategy", atomic: false, fields: &[
        f("type", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 193
    TypeDef { name: "api.apps.v1.DeploymentCondition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("lastUpdateTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 194
    TypeDef { name: "api.apps.v1.ReplicaSetCondition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 195
    TypeDef { name: "api.apps.v1.StatefulSetOrdinals", atomic: false, fields: &[
        f("start", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 196
    TypeDef { name: "api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy", atomic: false, fields: &[
        f("whenDeleted", Shape::Scalar, false, Zero::OmitEmpty),
        f("whenScaled", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 197
    TypeDef { name: "api.apps.v1.StatefulSetUpdateStrategy", atomic: false, fields: &[
        f("type", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 198
    TypeDef { name: "api.apps.v1.StatefulSetCondition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 199
    TypeDef { name: "api.apps.v1.DaemonSetUpdateStrategy", atomic: false, fields: &[
        f("type", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 200
    TypeDef { name: "api.apps.v1.DaemonSetCondition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 201
    TypeDef { name: "api.batch.v1.PodFailurePolicy", atomic: false, fields: &[
        f("rules", Shape::List(Elem::Struct(291), Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 202
    TypeDef { name: "api.batch.v1.SuccessPolicy", atomic: false, fields: &[
        f("rules", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 203
    TypeDef { name: "api.batch.v1.JobCondition", atomic: false, fields: &[
        f("lastProbeTime", Shape::Scalar, false, Zero::Null),
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 204
    TypeDef { name: "api.batch.v1.UncountedTerminatedPods", atomic: false, fields: &[
        f("failed", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false, Zero::Absent),
        f("succeeded", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false, Zero::Absent),
    ] },
    // 205
    TypeDef { name: "api.batch.v1.JobTemplateSpec", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(82, false), false, Zero::Empty),
    ] },
    // 206
    TypeDef { name: "api.autoscaling.v2.HorizontalPodAutoscalerBehavior", atomic: false, fields: &[
        f("scaleDown", Shape::Struct(292, false), false, Zero::Absent),
        f("scaleUp", Shape::Struct(292, false), false, Zero::Absent),
    ] },
    // 207
    TypeDef { name: "api.autoscaling.v2.MetricSpec", atomic: false, fields: &[
        f("containerResource", Shape::Struct(293, false), false, Zero::Absent),
        f("external", Shape::Struct(294, false), false, Zero::Absent),
        f("object", Shape::Struct(295, false), false, Zero::Absent),
        f("pods", Shape::Struct(296, false), false, Zero::Absent),
        f("resource", Shape::Struct(297, false), false, Zero::Absent),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 208
    TypeDef { name: "api.autoscaling.v2.CrossVersionObjectReference", atomic: false, fields: &[
        f("apiVersion", Shape::Scalar, false, Zero::OmitEmpty),
        f("kind", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 209
    TypeDef { name: "api.autoscaling.v2.HorizontalPodAutoscalerCondition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 210
    TypeDef { name: "api.autoscaling.v2.MetricStatus", atomic: false, fields: &[
        f("containerResource", Shape::Struct(298, false), false, Zero::Absent),
        f("external", Shape::Struct(299, false), false, Zero::Absent),
        f("object", Shape::Struct(300, false), false, Zero::Absent),
        f("pods", Shape::Struct(301, false), false, Zero::Absent),
        f("resource", Shape::Struct(302, false), false, Zero::Absent),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 211
    TypeDef { name: "api.admissionregistration.v1.WebhookClientConfig", atomic: false, fields: &[
        f("service", Shape::Struct(303, false), false, Zero::Absent),
    ] },
    // 212
    TypeDef { name: "api.admissionregistration.v1.MatchCondition", atomic: false, fields: &[
        f("expression", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 213
    TypeDef { name: "api.admissionregistration.v1.RuleWithOperations", atomic: false, fields: &[
        f("apiGroups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("apiVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("operations", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("resources", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 214
    TypeDef { name: "api.admissionregistration.v1.AuditAnnotation", atomic: false, fields: &[
        f("key", Shape::Scalar, false, Zero::Value("\"\"")),
        f("valueExpression", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 215
    TypeDef { name: "api.admissionregistration.v1.MatchResources", atomic: true, fields: &[
        f("excludeResourceRules", Shape::List(Elem::Struct(304), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("namespaceSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("objectSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("resourceRules", Shape::List(Elem::Struct(304), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 216
    TypeDef { name: "api.admissionregistration.v1.ParamKind", atomic: true, fields: &[
        f("apiVersion", Shape::Scalar, false, Zero::OmitEmpty),
        f("kind", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 217
    TypeDef { name: "api.admissionregistration.v1.Validation", atomic: false, fields: &[
        f("expression", Shape::Scalar, false, Zero::Value("\"\"")),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("messageExpression", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 218
    TypeDef { name: "api.admissionregistration.v1.Variable", atomic: true, fields: &[
        f("expression", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 219
    TypeDef { name: "api.admissionregistration.v1.TypeChecking", atomic: false, fields: &[
        f("expressionWarnings", Shape::List(Elem::Struct(305), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 220
    TypeDef { name: "api.admissionregistration.v1.ParamRef", atomic: true, fields: &[
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
        f("namespace", Shape::Scalar, false, Zero::OmitEmpty),
        f("selector", Shape::Struct(162, true), false, Zero::Absent),
    ] },
    // 221
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceConversion", atomic: false, fields: &[
        f("strategy", Shape::Scalar, false, Zero::Value("\"\"")),
        f("webhook", Shape::Struct(306, false), false, Zero::Absent),
    ] },
    // 222
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames", atomic: false, fields: &[
        f("categories", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("kind", Shape::Scalar, false, Zero::Value("\"\"")),
        f("listKind", Shape::Scalar, false, Zero::OmitEmpty),
        f("plural", Shape::Scalar, false, Zero::Value("\"\"")),
        f("shortNames", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("singular", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 223
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion", atomic: false, fields: &[
        f("additionalPrinterColumns", Shape::List(Elem::Struct(307), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("deprecated", Shape::Scalar, false, Zero::OmitEmpty),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("schema", Shape::Struct(308, false), false, Zero::Absent),
        f("selectableFields", Shape::List(Elem::Struct(309), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("served", Shape::Scalar, false, Zero::Value("false")),
        f("storage", Shape::Scalar, false, Zero::Value("false")),
        f("subresources", Shape::Struct(310, false), false, Zero::Absent),
    ] },
    // 224
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("status", Shape::Scalar, false, Zero::Value("\"\"")),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 225
    TypeDef { name: "kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
        f("namespace", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 226
    TypeDef { name: "kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("status", Shape::Scalar, false, Zero::Value("\"\"")),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 227
    TypeDef { name: "api.discovery.v1.EndpointHints", atomic: false, fields: &[
        f("forNodes", Shape::List(Elem::Struct(311), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("forZones", Shape::List(Elem::Struct(312), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 228
    TypeDef { name: "api.networking.v1.IngressBackend", atomic: false, fields: &[
        f("resource", Shape::Struct(159, true), false, Zero::Absent),
        f("service", Shape::Struct(313, false), false, Zero::Absent),
    ] },
    // 229
    TypeDef { name: "api.networking.v1.IngressRule", atomic: false, fields: &[
        f("host", Shape::Scalar, false, Zero::OmitEmpty),
        f("http", Shape::Struct(314, false), false, Zero::Absent),
    ] },
    // 230
    TypeDef { name: "api.networking.v1.IngressTLS", atomic: false, fields: &[
        f("hosts", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("secretName", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 231
    TypeDef { name: "api.networking.v1.IngressLoadBalancerStatus", atomic: false, fields: &[
        f("ingress", Shape::List(Elem::Struct(315), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 232
    TypeDef { name: "api.networking.v1.IngressClassParametersReference", atomic: false, fields: &[
        f("kind", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("scope", Shape::Scalar, false, Zero::Null),
    ] },
    // 233
    TypeDef { name: "api.networking.v1.NetworkPolicyEgressRule", atomic: false, fields: &[
        f("ports", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("to", Shape::List(Elem::Struct(316), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 234
    TypeDef { name: "api.networking.v1.NetworkPolicyIngressRule", atomic: false, fields: &[
        f("from", Shape::List(Elem::Struct(316), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("ports", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 235
    TypeDef { name: "api.core.v1.TopologySelectorLabelRequirement", atomic: false, fields: &[
        f("key", Shape::Scalar, false, Zero::Value("\"\"")),
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 236
    TypeDef { name: "api.storage.v1.TokenRequest", atomic: false, fields: &[
        f("audience", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 237
    TypeDef { name: "api.storage.v1.CSINodeDriver", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("nodeID", Shape::Scalar, false, Zero::Value("\"\"")),
        f("topologyKeys", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 238
    TypeDef { name: "api.storage.v1.VolumeAttachmentSource", atomic: false, fields: &[
        f("inlineVolumeSpec", Shape::Struct(66, false), false, Zero::Absent),
    ] },
    // 239
    TypeDef { name: "api.storage.v1.VolumeError", atomic: false, fields: &[
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("time", Shape::Scalar, false, Zero::Null),
    ] },
    // 240
    TypeDef { name: "api.certificates.v1.CertificateSigningRequestCondition", atomic: false, fields: &[
        f("lastTransitionTime", Shape::Scalar, false, Zero::Null),
        f("lastUpdateTime", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 241
    TypeDef { name: "api.core.v1.NodeAffinity", atomic: false, fields: &[
        f("preferredDuringSchedulingIgnoredDuringExecution", Shape::List(Elem::Struct(317), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("requiredDuringSchedulingIgnoredDuringExecution", Shape::Struct(289, true), false, Zero::Absent),
    ] },
    // 242
    TypeDef { name: "api.core.v1.PodAffinity", atomic: false, fields: &[
        f("preferredDuringSchedulingIgnoredDuringExecution", Shape::List(Elem::Struct(318), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("requiredDuringSchedulingIgnoredDuringExecution", Shape::List(Elem::Struct(319), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 243
    TypeDef { name: "api.core.v1.PodAntiAffinity", atomic: false, fields: &[
        f("preferredDuringSchedulingIgnoredDuringExecution", Shape::List(Elem::Struct(318), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("requiredDuringSchedulingIgnoredDuringExecution", Shape::List(Elem::Struct(319), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 244
    TypeDef { name: "api.core.v1.EnvVar", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("value", Shape::Scalar, false, Zero::OmitEmpty),
        f("valueFrom", Shape::Struct(320, false), false, Zero::Absent),
    ] },
    // 245
    TypeDef { name: "api.core.v1.EnvFromSource", atomic: false, fields: &[
        f("configMapRef", Shape::Struct(321, false), false, Zero::Absent),
        f("prefix", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(322, false), false, Zero::Absent),
    ] },
    // 246
    TypeDef { name: "api.core.v1.Lifecycle", atomic: false, fields: &[
        f("postStart", Shape::Struct(323, false), false, Zero::Absent),
        f("preStop", Shape::Struct(323, false), false, Zero::Absent),
    ] },
    // 247
    TypeDef { name: "api.core.v1.Probe", atomic: false, fields: &[
        f("exec", Shape::Struct(324, false), false, Zero::Absent),
        f("failureThreshold", Shape::Scalar, false, Zero::OmitEmpty),
        f("grpc", Shape::Struct(325, false), false, Zero::Absent),
        f("httpGet", Shape::Struct(326, false), false, Zero::Absent),
        f("initialDelaySeconds", Shape::Scalar, false, Zero::OmitEmpty),
        f("periodSeconds", Shape::Scalar, false, Zero::OmitEmpty),
        f("successThreshold", Shape::Scalar, false, Zero::OmitEmpty),
        f("tcpSocket", Shape::Struct(327, false), false, Zero::Absent),
        f("timeoutSeconds", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 248
    TypeDef { name: "api.core.v1.ContainerPort", atomic: false, fields: &[
        f("containerPort", Shape::Scalar, false, Zero::Value("0")),
        f("hostIP", Shape::Scalar, false, Zero::OmitEmpty),
        f("hostPort", Shape::Scalar, false, Zero::OmitEmpty),
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
        f("protocol", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 249
    TypeDef { name: "api.core.v1.ContainerResizePolicy", atomic: false, fields: &[
        f("resourceName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("restartPolicy", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 250
    TypeDef { name: "api.core.v1.ContainerRestartRule", atomic: false, fields: &[
        f("action", Shape::Scalar, false, Zero::OmitEmpty),
        f("exitCodes", Shape::Struct(328, false), false, Zero::Absent),
    ] },
    // 251
    TypeDef { name: "api.core.v1.SecurityContext", atomic: false, fields: &[
        f("appArmorProfile", Shape::Struct(256, false), false, Zero::Absent),
        f("capabilities", Shape::Struct(329, false), false, Zero::Absent),
        f("seLinuxOptions", Shape::Struct(257, false), false, Zero::Absent),
        f("seccompProfile", Shape::Struct(258, false), false, Zero::Absent),
    ] },
    // 252
    TypeDef { name: "api.core.v1.VolumeDevice", atomic: false, fields: &[
        f("devicePath", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 253
    TypeDef { name: "api.core.v1.VolumeMount", atomic: false, fields: &[
        f("mountPath", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("subPath", Shape::Scalar, false, Zero::OmitEmpty),
        f("subPathExpr", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 254
    TypeDef { name: "api.core.v1.PodDNSConfigOption", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 255
    TypeDef { name: "api.core.v1.ResourceClaim", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("request", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 256
    TypeDef { name: "api.core.v1.AppArmorProfile", atomic: false, fields: &[
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 257
    TypeDef { name: "api.core.v1.SELinuxOptions", atomic: false, fields: &[
        f("level", Shape::Scalar, false, Zero::OmitEmpty),
        f("role", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::OmitEmpty),
        f("user", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 258
    TypeDef { name: "api.core.v1.SeccompProfile", atomic: false, fields: &[
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 259
    TypeDef { name: "api.core.v1.Sysctl", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("value", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 260
    TypeDef { name: "api.core.v1.AzureFileVolumeSource", atomic: false, fields: &[
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("shareName", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 261
    TypeDef { name: "api.core.v1.CephFSVolumeSource", atomic: false, fields: &[
        f("monitors", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
        f("path", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretFile", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(62, true), false, Zero::Absent),
        f("user", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 262
    TypeDef { name: "api.core.v1.CinderVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(62, true), false, Zero::Absent),
        f("volumeID", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 263
    TypeDef { name: "api.core.v1.ConfigMapVolumeSource", atomic: false, fields: &[
        f("items", Shape::List(Elem::Struct(330), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 264
    TypeDef { name: "api.core.v1.CSIVolumeSource", atomic: false, fields: &[
        f("driver", Shape::Scalar, false, Zero::Value("\"\"")),
        f("nodePublishSecretRef", Shape::Struct(62, true), false, Zero::Absent),
        f("volumeAttributes", Shape::Map(Elem::Plain, false), false, Zero::Absent),
    ] },
    // 265
    TypeDef { name: "api.core.v1.DownwardAPIVolumeSource", atomic: false, fields: &[
        f("items", Shape::List(Elem::Struct(331), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 266
    TypeDef { name: "api.core.v1.EmptyDirVolumeSource", atomic: false, fields: &[
        f("medium", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 267
    TypeDef { name: "api.core.v1.EphemeralVolumeSource", atomic: false, fields: &[
        f("volumeClaimTemplate", Shape::Struct(332, false), false, Zero::Absent),
    ] },
    // 268
    TypeDef { name: "api.core.v1.FlexVolumeSource", atomic: false, fields: &[
        f("driver", Shape::Scalar, false, Zero::Value("\"\"")),
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("options", Shape::Map(Elem::Plain, false), false, Zero::Absent),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(62, true), false, Zero::Absent),
    ] },
    // 269
    TypeDef { name: "api.core.v1.GitRepoVolumeSource", atomic: false, fields: &[
        f("directory", Shape::Scalar, false, Zero::OmitEmpty),
        f("repository", Shape::Scalar, false, Zero::Value("\"\"")),
        f("revision", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 270
    TypeDef { name: "api.core.v1.GlusterfsVolumeSource", atomic: false, fields: &[
        f("endpoints", Shape::Scalar, false, Zero::Value("\"\"")),
        f("path", Shape::Scalar, false, Zero::Value("\"\"")),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 271
    TypeDef { name: "api.core.v1.ImageVolumeSource", atomic: false, fields: &[
        f("pullPolicy", Shape::Scalar, false, Zero::OmitEmpty),
        f("reference", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 272
    TypeDef { name: "api.core.v1.ISCSIVolumeSource", atomic: false, fields: &[
        f("chapAuthDiscovery", Shape::Scalar, false, Zero::OmitEmpty),
        f("chapAuthSession", Shape::Scalar, false, Zero::OmitEmpty),
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("iqn", Shape::Scalar, false, Zero::Value("\"\"")),
        f("iscsiInterface", Shape::Scalar, false, Zero::OmitEmpty),
        f("lun", Shape::Scalar, false, Zero::Value("0")),
        f("portals", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(62, true), false, Zero::Absent),
        f("targetPortal", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 273
    TypeDef { name: "api.core.v1.PersistentVolumeClaimVolumeSource", atomic: false, fields: &[
        f("claimName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 274
    TypeDef { name: "api.core.v1.ProjectedVolumeSource", atomic: false, fields: &[
        f("sources", Shape::List(Elem::Struct(333), Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 275
    TypeDef { name: "api.core.v1.RBDVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("image", Shape::Scalar, false, Zero::Value("\"\"")),
        f("keyring", Shape::Scalar, false, Zero::OmitEmpty),
        f("monitors", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
        f("pool", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(62, true), false, Zero::Absent),
        f("user", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 276
    TypeDef { name: "api.core.v1.ScaleIOVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("gateway", Shape::Scalar, false, Zero::Value("\"\"")),
        f("protectionDomain", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(62, true), false, Zero::Null),
        f("sslEnabled", Shape::Scalar, false, Zero::OmitEmpty),
        f("storageMode", Shape::Scalar, false, Zero::OmitEmpty),
        f("storagePool", Shape::Scalar, false, Zero::OmitEmpty),
        f("system", Shape::Scalar, false, Zero::Value("\"\"")),
        f("volumeName", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 277
    TypeDef { name: "api.core.v1.SecretVolumeSource", atomic: false, fields: &[
        f("items", Shape::List(Elem::Struct(330), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("secretName", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 278
    TypeDef { name: "api.core.v1.StorageOSVolumeSource", atomic: false, fields: &[
        f("fsType", Shape::Scalar, false, Zero::OmitEmpty),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
        f("secretRef", Shape::Struct(62, true), false, Zero::Absent),
        f("volumeName", Shape::Scalar, false, Zero::OmitEmpty),
        f("volumeNamespace", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 279
    TypeDef { name: "api.core.v1.ResourceStatus", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("resources", Shape::List(Elem::Struct(334), Smp::Replace, Ssa::Map(&["resourceID"], &[("resourceID", "\"\"")])), false, Zero::Absent),
    ] },
    // 280
    TypeDef { name: "api.core.v1.ContainerState", atomic: false, fields: &[
        f("running", Shape::Struct(335, false), false, Zero::Absent),
        f("terminated", Shape::Struct(336, false), false, Zero::Absent),
        f("waiting", Shape::Struct(337, false), false, Zero::Absent),
    ] },
    // 281
    TypeDef { name: "api.core.v1.ContainerUser", atomic: false, fields: &[
        f("linux", Shape::Struct(338, false), false, Zero::Absent),
    ] },
    // 282
    TypeDef { name: "api.core.v1.VolumeMountStatus", atomic: false, fields: &[
        f("mountPath", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("readOnly", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 283
    TypeDef { name: "api.core.v1.ContainerExtendedResourceRequest", atomic: false, fields: &[
        f("containerName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("requestName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("resourceName", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 284
    TypeDef { name: "api.core.v1.LoadBalancerIngress", atomic: false, fields: &[
        f("hostname", Shape::Scalar, false, Zero::OmitEmpty),
        f("ip", Shape::Scalar, false, Zero::OmitEmpty),
        f("ports", Shape::List(Elem::Struct(339), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 285
    TypeDef { name: "api.core.v1.ConfigMapNodeConfigSource", atomic: false, fields: &[
        f("kubeletConfigKey", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("namespace", Shape::Scalar, false, Zero::Value("\"\"")),
        f("resourceVersion", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 286
    TypeDef { name: "api.core.v1.DaemonEndpoint", atomic: false, fields: &[
        f("Port", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 287
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement", atomic: false, fields: &[
        f("key", Shape::Scalar, false, Zero::Value("\"\"")),
        f("operator", Shape::Scalar, false, Zero::Value("\"\"")),
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 288
    TypeDef { name: "api.core.v1.SecretReference", atomic: true, fields: &[
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
        f("namespace", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 289
    TypeDef { name: "api.core.v1.NodeSelector", atomic: true, fields: &[
        f("nodeSelectorTerms", Shape::List(Elem::Struct(340), Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 290
    TypeDef { name: "api.core.v1.ScopedResourceSelectorRequirement", atomic: false, fields: &[
        f("operator", Shape::Scalar, false, Zero::Value("\"\"")),
        f("scopeName", Shape::Scalar, false, Zero::Value("\"\"")),
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 291
    TypeDef { name: "api.batch.v1.PodFailurePolicyRule", atomic: false, fields: &[
        f("action", Shape::Scalar, false, Zero::Value("\"\"")),
        f("onExitCodes", Shape::Struct(341, false), false, Zero::Absent),
        f("onPodConditions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 292
    TypeDef { name: "api.autoscaling.v2.HPAScalingRules", atomic: false, fields: &[
        f("policies", Shape::List(Elem::Struct(342), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 293
    TypeDef { name: "api.autoscaling.v2.ContainerResourceMetricSource", atomic: false, fields: &[
        f("container", Shape::Scalar, false, Zero::Value("\"\"")),
        f("target", Shape::Struct(343, false), false, Zero::Empty),
    ] },
    // 294
    TypeDef { name: "api.autoscaling.v2.ExternalMetricSource", atomic: false, fields: &[
        f("metric", Shape::Struct(344, false), false, Zero::Empty),
        f("target", Shape::Struct(343, false), false, Zero::Empty),
    ] },
    // 295
    TypeDef { name: "api.autoscaling.v2.ObjectMetricSource", atomic: false, fields: &[
        f("describedObject", Shape::Struct(208, false), false, Zero::Empty),
        f("metric", Shape::Struct(344, false), false, Zero::Empty),
        f("target", Shape::Struct(343, false), false, Zero::Empty),
    ] },
    // 296
    TypeDef { name: "api.autoscaling.v2.PodsMetricSource", atomic: false, fields: &[
        f("metric", Shape::Struct(344, false), false, Zero::Empty),
        f("target", Shape::Struct(343, false), false, Zero::Empty),
    ] },
    // 297
    TypeDef { name: "api.autoscaling.v2.ResourceMetricSource", atomic: false, fields: &[
        f("target", Shape::Struct(343, false), false, Zero::Empty),
    ] },
    // 298
    TypeDef { name: "api.autoscaling.v2.ContainerResourceMetricStatus", atomic: false, fields: &[
        f("container", Shape::Scalar, false, Zero::Value("\"\"")),
        f("current", Shape::Struct(PLAIN, false), false, Zero::Empty),
    ] },
    // 299
    TypeDef { name: "api.autoscaling.v2.ExternalMetricStatus", atomic: false, fields: &[
        f("current", Shape::Struct(PLAIN, false), false, Zero::Empty),
        f("metric", Shape::Struct(344, false), false, Zero::Empty),
    ] },
    // 300
    TypeDef { name: "api.autoscaling.v2.ObjectMetricStatus", atomic: false, fields: &[
        f("current", Shape::Struct(PLAIN, false), false, Zero::Empty),
        f("describedObject", Shape::Struct(208, false), false, Zero::Empty),
        f("metric", Shape::Struct(344, false), false, Zero::Empty),
    ] },
    // 301
    TypeDef { name: "api.autoscaling.v2.PodsMetricStatus", atomic: false, fields: &[
        f("current", Shape::Struct(PLAIN, false), false, Zero::Empty),
        f("metric", Shape::Struct(344, false), false, Zero::Empty),
    ] },
    // 302
    TypeDef { name: "api.autoscaling.v2.ResourceMetricStatus", atomic: false, fields: &[
        f("current", Shape::Struct(PLAIN, false), false, Zero::Empty),
    ] },
    // 303
    TypeDef { name: "api.admissionregistration.v1.ServiceReference", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("namespace", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 304
    TypeDef { name: "api.admissionregistration.v1.NamedRuleWithOperations", atomic: true, fields: &[
        f("apiGroups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("apiVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("operations", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("resourceNames", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("resources", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 305
    TypeDef { name: "api.admissionregistration.v1.ExpressionWarning", atomic: false, fields: &[
        f("fieldRef", Shape::Scalar, false, Zero::Value("\"\"")),
        f("warning", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 306
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion", atomic: false, fields: &[
        f("clientConfig", Shape::Struct(345, false), false, Zero::Absent),
        f("conversionReviewVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 307
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition", atomic: false, fields: &[
        f("description", Shape::Scalar, false, Zero::OmitEmpty),
        f("format", Shape::Scalar, false, Zero::OmitEmpty),
        f("jsonPath", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("priority", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 308
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceValidation", atomic: false, fields: &[
        f("openAPIV3Schema", Shape::Struct(346, false), false, Zero::Absent),
    ] },
    // 309
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.SelectableField", atomic: false, fields: &[
        f("jsonPath", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 310
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresources", atomic: false, fields: &[
        f("scale", Shape::Struct(347, false), false, Zero::Absent),
        f("status", Shape::Any, false, Zero::Absent),
    ] },
    // 311
    TypeDef { name: "api.discovery.v1.ForNode", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 312
    TypeDef { name: "api.discovery.v1.ForZone", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 313
    TypeDef { name: "api.networking.v1.IngressServiceBackend", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("port", Shape::Struct(348, true), false, Zero::Empty),
    ] },
    // 314
    TypeDef { name: "api.networking.v1.HTTPIngressRuleValue", atomic: false, fields: &[
        f("paths", Shape::List(Elem::Struct(349), Smp::Replace, Ssa::Atomic), false, Zero::Null),
    ] },
    // 315
    TypeDef { name: "api.networking.v1.IngressLoadBalancerIngress", atomic: false, fields: &[
        f("hostname", Shape::Scalar, false, Zero::OmitEmpty),
        f("ip", Shape::Scalar, false, Zero::OmitEmpty),
        f("ports", Shape::List(Elem::Struct(350), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 316
    TypeDef { name: "api.networking.v1.NetworkPolicyPeer", atomic: false, fields: &[
        f("ipBlock", Shape::Struct(351, false), false, Zero::Absent),
        f("namespaceSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("podSelector", Shape::Struct(162, true), false, Zero::Absent),
    ] },
    // 317
    TypeDef { name: "api.core.v1.PreferredSchedulingTerm", atomic: false, fields: &[
        f("preference", Shape::Struct(340, true), false, Zero::Empty),
        f("weight", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 318
    TypeDef { name: "api.core.v1.WeightedPodAffinityTerm", atomic: false, fields: &[
        f("podAffinityTerm", Shape::Struct(319, false), false, Zero::Empty),
        f("weight", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 319
    TypeDef { name: "api.core.v1.PodAffinityTerm", atomic: false, fields: &[
        f("labelSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("matchLabelKeys", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("mismatchLabelKeys", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("namespaceSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("namespaces", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("topologyKey", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 320
    TypeDef { name: "api.core.v1.EnvVarSource", atomic: false, fields: &[
        f("configMapKeyRef", Shape::Struct(352, true), false, Zero::Absent),
        f("fieldRef", Shape::Struct(353, true), false, Zero::Absent),
        f("fileKeyRef", Shape::Struct(354, true), false, Zero::Absent),
        f("resourceFieldRef", Shape::Struct(355, true), false, Zero::Absent),
        f("secretKeyRef", Shape::Struct(356, true), false, Zero::Absent),
    ] },
    // 321
    TypeDef { name: "api.core.v1.ConfigMapEnvSource", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 322
    TypeDef { name: "api.core.v1.SecretEnvSource", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 323
    TypeDef { name: "api.core.v1.LifecycleHandler", atomic: false, fields: &[
        f("exec", Shape::Struct(324, false), false, Zero::Absent),
        f("httpGet", Shape::Struct(326, false), false, Zero::Absent),
        f("sleep", Shape::Struct(357, false), false, Zero::Absent),
        f("tcpSocket", Shape::Struct(327, false), false, Zero::Absent),
    ] },
    // 324
    TypeDef { name: "api.core.v1.ExecAction", atomic: false, fields: &[
        f("command", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 325
    TypeDef { name: "api.core.v1.GRPCAction", atomic: false, fields: &[
        f("port", Shape::Scalar, false, Zero::Value("0")),
        f("service", Shape::Scalar, false, Zero::Null),
    ] },
    // 326
    TypeDef { name: "api.core.v1.HTTPGetAction", atomic: false, fields: &[
        f("host", Shape::Scalar, false, Zero::OmitEmpty),
        f("httpHeaders", Shape::List(Elem::Struct(358), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("path", Shape::Scalar, false, Zero::OmitEmpty),
        f("port", Shape::Scalar, false, Zero::Value("0")),
        f("scheme", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 327
    TypeDef { name: "api.core.v1.TCPSocketAction", atomic: false, fields: &[
        f("host", Shape::Scalar, false, Zero::OmitEmpty),
        f("port", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 328
    TypeDef { name: "api.core.v1.ContainerRestartRuleOnExitCodes", atomic: false, fields: &[
        f("operator", Shape::Scalar, false, Zero::OmitEmpty),
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false, Zero::Absent),
    ] },
    // 329
    TypeDef { name: "api.core.v1.Capabilities", atomic: false, fields: &[
        f("add", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("drop", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 330
    TypeDef { name: "api.core.v1.KeyToPath", atomic: false, fields: &[
        f("key", Shape::Scalar, false, Zero::Value("\"\"")),
        f("path", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 331
    TypeDef { name: "api.core.v1.DownwardAPIVolumeFile", atomic: false, fields: &[
        f("fieldRef", Shape::Struct(353, true), false, Zero::Absent),
        f("path", Shape::Scalar, false, Zero::Value("\"\"")),
        f("resourceFieldRef", Shape::Struct(355, true), false, Zero::Absent),
    ] },
    // 332
    TypeDef { name: "api.core.v1.PersistentVolumeClaimTemplate", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false, Zero::Empty),
        f("spec", Shape::Struct(64, false), false, Zero::Empty),
    ] },
    // 333
    TypeDef { name: "api.core.v1.VolumeProjection", atomic: false, fields: &[
        f("clusterTrustBundle", Shape::Struct(359, false), false, Zero::Absent),
        f("configMap", Shape::Struct(360, false), false, Zero::Absent),
        f("downwardAPI", Shape::Struct(361, false), false, Zero::Absent),
        f("podCertificate", Shape::Struct(362, false), false, Zero::Absent),
        f("secret", Shape::Struct(363, false), false, Zero::Absent),
        f("serviceAccountToken", Shape::Struct(364, false), false, Zero::Absent),
    ] },
    // 334
    TypeDef { name: "api.core.v1.ResourceHealth", atomic: false, fields: &[
        f("health", Shape::Scalar, false, Zero::OmitEmpty),
        f("resourceID", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 335
    TypeDef { name: "api.core.v1.ContainerStateRunning", atomic: false, fields: &[
        f("startedAt", Shape::Scalar, false, Zero::Null),
    ] },
    // 336
    TypeDef { name: "api.core.v1.ContainerStateTerminated", atomic: false, fields: &[
        f("containerID", Shape::Scalar, false, Zero::OmitEmpty),
        f("exitCode", Shape::Scalar, false, Zero::Value("0")),
        f("finishedAt", Shape::Scalar, false, Zero::Null),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
        f("signal", Shape::Scalar, false, Zero::OmitEmpty),
        f("startedAt", Shape::Scalar, false, Zero::Null),
    ] },
    // 337
    TypeDef { name: "api.core.v1.ContainerStateWaiting", atomic: false, fields: &[
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("reason", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 338
    TypeDef { name: "api.core.v1.LinuxContainerUser", atomic: false, fields: &[
        f("gid", Shape::Scalar, false, Zero::Value("0")),
        f("supplementalGroups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("uid", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 339
    TypeDef { name: "api.core.v1.PortStatus", atomic: false, fields: &[
        f("port", Shape::Scalar, false, Zero::Value("0")),
        f("protocol", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 340
    TypeDef { name: "api.core.v1.NodeSelectorTerm", atomic: true, fields: &[
        f("matchExpressions", Shape::List(Elem::Struct(365), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("matchFields", Shape::List(Elem::Struct(365), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 341
    TypeDef { name: "api.batch.v1.PodFailurePolicyOnExitCodesRequirement", atomic: false, fields: &[
        f("operator", Shape::Scalar, false, Zero::Value("\"\"")),
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false, Zero::Null),
    ] },
    // 342
    TypeDef { name: "api.autoscaling.v2.HPAScalingPolicy", atomic: false, fields: &[
        f("periodSeconds", Shape::Scalar, false, Zero::Value("0")),
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
        f("value", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 343
    TypeDef { name: "api.autoscaling.v2.MetricTarget", atomic: false, fields: &[
        f("type", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 344
    TypeDef { name: "api.autoscaling.v2.MetricIdentifier", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("selector", Shape::Struct(162, true), false, Zero::Absent),
    ] },
    // 345
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookClientConfig", atomic: false, fields: &[
        f("service", Shape::Struct(366, false), false, Zero::Absent),
    ] },
    // 346
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", atomic: false, fields: &[
        f("$schema", Shape::Scalar, false, Zero::OmitEmpty),
        f("additionalItems", Shape::Any, false, Zero::Absent),
        f("additionalProperties", Shape::Any, false, Zero::Absent),
        f("allOf", Shape::List(Elem::Struct(346), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("anyOf", Shape::List(Elem::Struct(346), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("default", Shape::Any, false, Zero::Absent),
        f("definitions", Shape::Map(Elem::Struct(346), false), false, Zero::Absent),
        f("dependencies", Shape::Map(Elem::Any, false), false, Zero::Absent),
        f("description", Shape::Scalar, false, Zero::OmitEmpty),
        f("enum", Shape::List(Elem::Any, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("example", Shape::Any, false, Zero::Absent),
        f("exclusiveMaximum", Shape::Scalar, false, Zero::OmitEmpty),
        f("exclusiveMinimum", Shape::Scalar, false, Zero::OmitEmpty),
        f("externalDocs", Shape::Struct(367, false), false, Zero::Absent),
        f("format", Shape::Scalar, false, Zero::OmitEmpty),
        f("id", Shape::Scalar, false, Zero::OmitEmpty),
        f("items", Shape::Any, false, Zero::Absent),
        f("not", Shape::Struct(346, false), false, Zero::Absent),
        f("nullable", Shape::Scalar, false, Zero::OmitEmpty),
        f("oneOf", Shape::List(Elem::Struct(346), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("pattern", Shape::Scalar, false, Zero::OmitEmpty),
        f("patternProperties", Shape::Map(Elem::Struct(346), false), false, Zero::Absent),
        f("properties", Shape::Map(Elem::Struct(346), false), false, Zero::Absent),
        f("required", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("title", Shape::Scalar, false, Zero::OmitEmpty),
        f("type", Shape::Scalar, false, Zero::OmitEmpty),
        f("uniqueItems", Shape::Scalar, false, Zero::OmitEmpty),
        f("x-kubernetes-embedded-resource", Shape::Scalar, false, Zero::OmitEmpty),
        f("x-kubernetes-int-or-string", Shape::Scalar, false, Zero::OmitEmpty),
        f("x-kubernetes-list-map-keys", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("x-kubernetes-validations", Shape::List(Elem::Struct(368), Smp::Merge("rule"), Ssa::Map(&["rule"], &[("rule", "\"\"")])), false, Zero::Absent),
    ] },
    // 347
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceScale", atomic: false, fields: &[
        f("specReplicasPath", Shape::Scalar, false, Zero::Value("\"\"")),
        f("statusReplicasPath", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 348
    TypeDef { name: "api.networking.v1.ServiceBackendPort", atomic: true, fields: &[
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
        f("number", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 349
    TypeDef { name: "api.networking.v1.HTTPIngressPath", atomic: false, fields: &[
        f("backend", Shape::Struct(228, false), false, Zero::Empty),
        f("path", Shape::Scalar, false, Zero::OmitEmpty),
        f("pathType", Shape::Scalar, false, Zero::Null),
    ] },
    // 350
    TypeDef { name: "api.networking.v1.IngressPortStatus", atomic: false, fields: &[
        f("port", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 351
    TypeDef { name: "api.networking.v1.IPBlock", atomic: false, fields: &[
        f("cidr", Shape::Scalar, false, Zero::Value("\"\"")),
        f("except", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 352
    TypeDef { name: "api.core.v1.ConfigMapKeySelector", atomic: true, fields: &[
        f("key", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 353
    TypeDef { name: "api.core.v1.ObjectFieldSelector", atomic: true, fields: &[
        f("apiVersion", Shape::Scalar, false, Zero::OmitEmpty),
        f("fieldPath", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 354
    TypeDef { name: "api.core.v1.FileKeySelector", atomic: true, fields: &[
        f("key", Shape::Scalar, false, Zero::Value("\"\"")),
        f("path", Shape::Scalar, false, Zero::Value("\"\"")),
        f("volumeName", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 355
    TypeDef { name: "api.core.v1.ResourceFieldSelector", atomic: true, fields: &[
        f("containerName", Shape::Scalar, false, Zero::OmitEmpty),
        f("divisor", Shape::Scalar, false, Zero::Value("\"0\"")),
        f("resource", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 356
    TypeDef { name: "api.core.v1.SecretKeySelector", atomic: true, fields: &[
        f("key", Shape::Scalar, false, Zero::Value("\"\"")),
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 357
    TypeDef { name: "api.core.v1.SleepAction", atomic: false, fields: &[
        f("seconds", Shape::Scalar, false, Zero::Value("0")),
    ] },
    // 358
    TypeDef { name: "api.core.v1.HTTPHeader", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("value", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 359
    TypeDef { name: "api.core.v1.ClusterTrustBundleProjection", atomic: false, fields: &[
        f("labelSelector", Shape::Struct(162, true), false, Zero::Absent),
        f("path", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 360
    TypeDef { name: "api.core.v1.ConfigMapProjection", atomic: false, fields: &[
        f("items", Shape::List(Elem::Struct(330), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 361
    TypeDef { name: "api.core.v1.DownwardAPIProjection", atomic: false, fields: &[
        f("items", Shape::List(Elem::Struct(331), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 362
    TypeDef { name: "api.core.v1.PodCertificateProjection", atomic: false, fields: &[
        f("certificateChainPath", Shape::Scalar, false, Zero::OmitEmpty),
        f("credentialBundlePath", Shape::Scalar, false, Zero::OmitEmpty),
        f("keyPath", Shape::Scalar, false, Zero::OmitEmpty),
        f("keyType", Shape::Scalar, false, Zero::OmitEmpty),
        f("signerName", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 363
    TypeDef { name: "api.core.v1.SecretProjection", atomic: false, fields: &[
        f("items", Shape::List(Elem::Struct(330), Smp::Replace, Ssa::Atomic), false, Zero::Absent),
        f("name", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 364
    TypeDef { name: "api.core.v1.ServiceAccountTokenProjection", atomic: false, fields: &[
        f("audience", Shape::Scalar, false, Zero::OmitEmpty),
        f("path", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 365
    TypeDef { name: "api.core.v1.NodeSelectorRequirement", atomic: false, fields: &[
        f("key", Shape::Scalar, false, Zero::Value("\"\"")),
        f("operator", Shape::Scalar, false, Zero::Value("\"\"")),
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false, Zero::Absent),
    ] },
    // 366
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference", atomic: false, fields: &[
        f("name", Shape::Scalar, false, Zero::Value("\"\"")),
        f("namespace", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
    // 367
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.ExternalDocumentation", atomic: false, fields: &[
        f("description", Shape::Scalar, false, Zero::OmitEmpty),
        f("url", Shape::Scalar, false, Zero::OmitEmpty),
    ] },
    // 368
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule", atomic: false, fields: &[
        f("fieldPath", Shape::Scalar, false, Zero::OmitEmpty),
        f("message", Shape::Scalar, false, Zero::OmitEmpty),
        f("messageExpression", Shape::Scalar, false, Zero::OmitEmpty),
        f("rule", Shape::Scalar, false, Zero::Value("\"\"")),
    ] },
];

#[rustfmt::skip]
static KINDS: [KindPatchMeta; 50] = [
    KindPatchMeta { group: "", kind: "Pod", root: 0 },
    KindPatchMeta { group: "", kind: "PodTemplate", root: 1 },
    KindPatchMeta { group: "", kind: "ReplicationController", root: 2 },
    KindPatchMeta { group: "", kind: "Service", root: 3 },
    KindPatchMeta { group: "", kind: "Node", root: 4 },
    KindPatchMeta { group: "", kind: "Namespace", root: 5 },
    KindPatchMeta { group: "", kind: "ConfigMap", root: 6 },
    KindPatchMeta { group: "", kind: "Secret", root: 7 },
    KindPatchMeta { group: "", kind: "ServiceAccount", root: 8 },
    KindPatchMeta { group: "", kind: "PersistentVolumeClaim", root: 9 },
    KindPatchMeta { group: "", kind: "PersistentVolume", root: 10 },
    KindPatchMeta { group: "", kind: "Event", root: 11 },
    KindPatchMeta { group: "", kind: "Endpoints", root: 12 },
    KindPatchMeta { group: "", kind: "LimitRange", root: 13 },
    KindPatchMeta { group: "", kind: "ResourceQuota", root: 14 },
    KindPatchMeta { group: "", kind: "Binding", root: 15 },
    KindPatchMeta { group: "apps", kind: "Deployment", root: 16 },
    KindPatchMeta { group: "apps", kind: "ReplicaSet", root: 17 },
    KindPatchMeta { group: "apps", kind: "StatefulSet", root: 18 },
    KindPatchMeta { group: "apps", kind: "DaemonSet", root: 19 },
    KindPatchMeta { group: "apps", kind: "ControllerRevision", root: 20 },
    KindPatchMeta { group: "batch", kind: "Job", root: 21 },
    KindPatchMeta { group: "batch", kind: "CronJob", root: 22 },
    KindPatchMeta { group: "autoscaling", kind: "Scale", root: 23 },
    KindPatchMeta { group: "autoscaling", kind: "HorizontalPodAutoscaler", root: 24 },
    KindPatchMeta { group: "coordination.k8s.io", kind: "Lease", root: 25 },
    KindPatchMeta { group: "policy", kind: "PodDisruptionBudget", root: 26 },
    KindPatchMeta { group: "policy", kind: "Eviction", root: 27 },
    KindPatchMeta { group: "admissionregistration.k8s.io", kind: "MutatingWebhookConfiguration", root: 28 },
    KindPatchMeta { group: "admissionregistration.k8s.io", kind: "ValidatingWebhookConfiguration", root: 29 },
    KindPatchMeta { group: "admissionregistration.k8s.io", kind: "ValidatingAdmissionPolicy", root: 30 },
    KindPatchMeta { group: "admissionregistration.k8s.io", kind: "ValidatingAdmissionPolicyBinding", root: 31 },
    KindPatchMeta { group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", root: 32 },
    KindPatchMeta { group: "apiregistration.k8s.io", kind: "APIService", root: 33 },
    KindPatchMeta { group: "events.k8s.io", kind: "Event", root: 34 },
    KindPatchMeta { group: "discovery.k8s.io", kind: "EndpointSlice", root: 35 },
    KindPatchMeta { group: "rbac.authorization.k8s.io", kind: "Role", root: 36 },
    KindPatchMeta { group: "rbac.authorization.k8s.io", kind: "ClusterRole", root: 37 },
    KindPatchMeta { group: "rbac.authorization.k8s.io", kind: "RoleBinding", root: 38 },
    KindPatchMeta { group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding", root: 39 },
    KindPatchMeta { group: "networking.k8s.io", kind: "Ingress", root: 40 },
    KindPatchMeta { group: "networking.k8s.io", kind: "IngressClass", root: 41 },
    KindPatchMeta { group: "networking.k8s.io", kind: "NetworkPolicy", root: 42 },
    KindPatchMeta { group: "scheduling.k8s.io", kind: "PriorityClass", root: 43 },
    KindPatchMeta { group: "storage.k8s.io", kind: "StorageClass", root: 44 },
    KindPatchMeta { group: "storage.k8s.io", kind: "CSIDriver", root: 45 },
    KindPatchMeta { group: "storage.k8s.io", kind: "CSINode", root: 46 },
    KindPatchMeta { group: "storage.k8s.io", kind: "VolumeAttachment", root: 47 },
    KindPatchMeta { group: "node.k8s.io", kind: "RuntimeClass", root: 48 },
    KindPatchMeta { group: "certificates.k8s.io", kind: "CertificateSigningRequest", root: 49 },
];
// END GENERATED TABLES

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(group: &str, kind: &str) -> &'static KindPatchMeta {
        match kind_patch_meta(group, kind) {
            Some(meta) => meta,
            None => panic!("no patch metadata for {group}/{kind}"),
        }
    }

    #[test]
    fn list_strategies_follow_the_struct_tags() {
        let cases: &[(&str, &str, &str, ListStrategy)] = &[
            ("", "Pod", "spec.containers", ListStrategy::MergeByKey("name")),
            ("", "Pod", "spec.initContainers", ListStrategy::MergeByKey("name")),
            ("", "Pod", "spec.containers[].env", ListStrategy::MergeByKey("name")),
            ("", "Pod", "spec.containers[].ports", ListStrategy::MergeByKey("containerPort")),
            ("", "Pod", "spec.containers[].volumeMounts", ListStrategy::MergeByKey("mountPath")),
            ("", "Pod", "spec.containers[].args", ListStrategy::Replace),
            ("", "Pod", "spec.volumes", ListStrategy::MergeByKey("name")),
            ("", "Pod", "spec.tolerations", ListStrategy::Replace),
            ("", "Pod", "spec.imagePullSecrets", ListStrategy::MergeByKey("name")),
            ("", "Pod", "status.conditions", ListStrategy::MergeByKey("type")),
            ("", "Pod", "metadata.finalizers", ListStrategy::MergeSet),
            ("", "Pod", "metadata.ownerReferences", ListStrategy::MergeByKey("uid")),
            ("", "Pod", "metadata.managedFields", ListStrategy::Replace),
            ("", "Pod", "spec.containers", ListStrategy::MergeByKey("name")),
            ("", "PodTemplate", "template.spec.containers", ListStrategy::MergeByKey("name")),
            ("", "ReplicationController", "spec.template.spec.volumes", ListStrategy::MergeByKey("name")),
            ("", "Service", "spec.ports", ListStrategy::MergeByKey("port")),
            ("", "Node", "spec.taints", ListStrategy::Replace),
            ("", "Node", "status.addresses", ListStrategy::MergeByKey("type")),
            ("", "Node", "status.conditions", ListStrategy::MergeByKey("type")),
            ("", "Namespace", "spec.finalizers", ListStrategy::Replace),
            ("", "ServiceAccount", "secrets", ListStrategy::MergeByKey("name")),
            ("", "PersistentVolumeClaim", "status.conditions", ListStrategy::MergeByKey("type")),
            ("apps", "Deployment", "spec.template.spec.containers", ListStrategy::MergeByKey("name")),
            ("apps", "Deployment", "spec.template.spec.containers[].env", ListStrategy::MergeByKey("name")),
            ("apps", "Deployment", "status.conditions", ListStrategy::MergeByKey("type")),
            ("apps", "StatefulSet", "spec.volumeClaimTemplates", ListStrategy::Replace),
            ("apps", "DaemonSet", "spec.template.spec.volumes", ListStrategy::MergeByKey("name")),
            ("apps", "ReplicaSet", "status.conditions", ListStrategy::MergeByKey("type")),
            ("batch", "Job", "spec.template.spec.containers", ListStrategy::MergeByKey("name")),
            ("batch", "Job", "status.conditions", ListStrategy::MergeByKey("type")),
            (
                "batch",
                "CronJob",
                "spec.jobTemplate.spec.template.spec.containers",
                ListStrategy::MergeByKey("name"),
            ),
            ("policy", "PodDisruptionBudget", "status.conditions", ListStrategy::MergeByKey("type")),
            (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration",
                "webhooks",
                ListStrategy::MergeByKey("name"),
            ),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
                "webhooks",
                ListStrategy::MergeByKey("name"),
            ),
            ("apiextensions.k8s.io", "CustomResourceDefinition", "spec.versions", ListStrategy::Replace),
            ("coordination.k8s.io", "Lease", "metadata.finalizers", ListStrategy::MergeSet),
            // Not lists, or not declared: the strategic merge patch default.
            ("", "Pod", "spec.containers[]", ListStrategy::Replace),
            ("", "Pod", "spec", ListStrategy::Replace),
            ("", "Pod", "spec.nonexistent", ListStrategy::Replace),
            ("", "Pod", "metadata.labels.app", ListStrategy::Replace),
        ];
        for (group, kind, path, expected) in cases {
            assert_eq!(meta(group, kind).list_strategy(path), *expected, "{group}/{kind} {path}");
        }
    }

    #[test]
    fn retain_keys_fields() {
        let deployment = meta("apps", "Deployment");
        assert!(deployment.retains_keys("spec.strategy"));
        assert!(deployment.retains_keys("spec.template.spec.volumes"));
        assert!(deployment.retains_keys("spec.template.spec.volumes[]"));
        assert!(!deployment.retains_keys("spec.template.spec.containers"));
        assert!(!deployment.retains_keys("spec"));
        assert!(meta("", "Pod").retains_keys("spec.volumes"));
    }

    #[test]
    fn apply_list_types_follow_the_list_markers() {
        let pod = meta("", "Pod");
        assert_eq!(pod.apply_list_type("spec.containers"), ApplyListType::Map(&["name"]));
        assert_eq!(
            pod.apply_list_type("spec.containers[].ports"),
            ApplyListType::Map(&["containerPort", "protocol"])
        );
        assert_eq!(pod.apply_list_type("spec.tolerations"), ApplyListType::Atomic);
        assert_eq!(pod.apply_list_type("metadata.finalizers"), ApplyListType::Set);
        assert_eq!(pod.apply_list_type("metadata.ownerReferences"), ApplyListType::Map(&["uid"]));
        assert_eq!(pod.apply_list_type("spec.containers[].args"), ApplyListType::Atomic);
        assert_eq!(
            pod.list_key_default("spec.containers[].ports", "protocol"),
            Some(Value::String("TCP".into()))
        );
        assert_eq!(pod.list_key_default("spec.containers", "protocol"), None);
        let service = meta("", "Service");
        assert_eq!(service.apply_list_type("spec.ports"), ApplyListType::Map(&["port", "protocol"]));
    }

    #[test]
    fn atomic_and_map_shaped_objects() {
        let deployment = meta("apps", "Deployment");
        assert!(deployment.is_atomic("spec.selector"));
        assert!(deployment.is_atomic("spec.template.spec.nodeSelector"));
        assert!(deployment.is_atomic("metadata.ownerReferences[]"));
        assert!(!deployment.is_atomic("spec.template.spec"));
        assert!(deployment.is_map("metadata.labels"));
        assert!(deployment.is_map("spec.template.metadata.annotations"));
        assert!(deployment.is_map("spec.template.spec.containers[].resources.limits"));
        assert!(!deployment.is_map("spec.template.spec"));
        assert!(meta("", "ConfigMap").is_map("data"));
        let crd = meta("apiextensions.k8s.io", "CustomResourceDefinition");
        assert!(crd.is_map("spec.versions[].schema.openAPIV3Schema.properties"));
        assert!(!crd.is_map("spec.versions[].schema.openAPIV3Schema.properties.spec"));
        assert!(crd.is_map("spec.versions[].schema.openAPIV3Schema.properties.spec.default"));
    }

    #[test]
    fn zero_values_of_structs() {
        let deployment = Present(meta("apps", "Deployment"));
        assert_eq!(
            deployment.zero_value_fields(""),
            vec![
                ("metadata", ZeroValue::EmptyObject),
                ("spec", ZeroValue::EmptyObject),
                ("status", ZeroValue::EmptyObject)
            ]
        );
        assert_eq!(
            deployment.zero_value_fields("spec"),
            vec![
                ("selector", ZeroValue::Null),
                ("strategy", ZeroValue::EmptyObject),
                ("template", ZeroValue::EmptyObject)
            ]
        );
        assert_eq!(deployment.zero_value_fields("spec.template.spec"), vec![("containers", ZeroValue::Null)]);
        assert_eq!(
            deployment.zero_value_fields("spec.template.spec.containers[]"),
            vec![("name", ZeroValue::Scalar(Value::from(""))), ("resources", ZeroValue::EmptyObject)]
        );
        assert_eq!(deployment.zero_value_fields("metadata"), vec![("creationTimestamp", ZeroValue::Null)]);
        let service = Present(meta("", "Service"));
        assert_eq!(
            service.zero_value_fields("spec.ports[]"),
            vec![
                ("port", ZeroValue::Scalar(Value::from(0))),
                ("targetPort", ZeroValue::Scalar(Value::from(0)))
            ]
        );
        assert!(deployment.zero_value_fields("metadata.labels").is_empty());
        let status = meta("apps", "Deployment").zero_value_fields("status");
        assert!(status.contains(&("replicas", ZeroValue::Omitted)), "{status:?}");
        assert!(status.contains(&("observedGeneration", ZeroValue::Omitted)), "{status:?}");
    }

    /// The fields a zero value carries, leaving out the omitted ones.
    struct Present(&'static KindPatchMeta);

    impl Present {
        fn zero_value_fields(&self, path: &str) -> Vec<(&'static str, ZeroValue)> {
            self.0
                .zero_value_fields(path)
                .into_iter()
                .filter(|(_, zero)| *zero != ZeroValue::Omitted)
                .collect()
        }
    }

    #[test]
    fn unknown_kinds_have_no_metadata() {
        assert!(kind_patch_meta("apps.kruise.io", "CloneSet").is_none());
        assert!(kind_patch_meta("apps", "Pod").is_none());
        for (group, kind) in [
            ("", "Pod"),
            ("", "PodTemplate"),
            ("", "ReplicationController"),
            ("", "Service"),
            ("", "Node"),
            ("", "Namespace"),
            ("", "ConfigMap"),
            ("", "Secret"),
            ("", "ServiceAccount"),
            ("", "PersistentVolumeClaim"),
            ("", "Event"),
            ("apps", "Deployment"),
            ("apps", "ReplicaSet"),
            ("apps", "StatefulSet"),
            ("apps", "DaemonSet"),
            ("apps", "ControllerRevision"),
            ("batch", "Job"),
            ("coordination.k8s.io", "Lease"),
            ("policy", "PodDisruptionBudget"),
            ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
            ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
            ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ] {
            assert!(kind_patch_meta(group, kind).is_some(), "{group}/{kind}");
        }
    }

    #[test]
    fn tables_are_sorted_for_binary_search() {
        for def in TYPES.iter() {
            assert!(def.fields.windows(2).all(|pair| pair[0].name < pair[1].name), "{}", def.name);
            for field in def.fields {
                let index = match field.shape {
                    Shape::Struct(index, _) if index != PLAIN => Some(index),
                    Shape::List(Elem::Struct(index), ..) | Shape::Map(Elem::Struct(index), _) => Some(index),
                    _ => None,
                };
                if let Some(index) = index {
                    assert!(type_def(index).is_some(), "{}.{}", def.name, field.name);
                }
            }
        }
    }
}
