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

/// A field of a type; fields that are plain scalars or plain structs are left out of the tables.
struct Field {
    name: &'static str,
    shape: Shape,
    retain_keys: bool,
}

const fn f(name: &'static str, shape: Shape, retain_keys: bool) -> Field {
    Field { name, shape, retain_keys }
}

/// Marks a struct whose type carries no metadata.
const PLAIN: u16 = u16::MAX;

#[derive(Clone, Copy)]
enum Shape {
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

// Generated from the Kubernetes v1.34 OpenAPI v3 documents (see the module documentation).
#[rustfmt::skip]
static TYPES: [TypeDef; 246] = [
    // 0
    TypeDef { name: "api.core.v1.Pod", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(51, false), false),
        f("status", Shape::Struct(52, false), false),
    ] },
    // 1
    TypeDef { name: "api.core.v1.PodTemplate", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("template", Shape::Struct(53, false), false),
    ] },
    // 2
    TypeDef { name: "api.core.v1.ReplicationController", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(54, false), false),
        f("status", Shape::Struct(55, false), false),
    ] },
    // 3
    TypeDef { name: "api.core.v1.Service", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(56, false), false),
        f("status", Shape::Struct(57, false), false),
    ] },
    // 4
    TypeDef { name: "api.core.v1.Node", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(58, false), false),
        f("status", Shape::Struct(59, false), false),
    ] },
    // 5
    TypeDef { name: "api.core.v1.Namespace", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(60, false), false),
        f("status", Shape::Struct(61, false), false),
    ] },
    // 6
    TypeDef { name: "api.core.v1.ConfigMap", atomic: false, fields: &[
        f("binaryData", Shape::Map(Elem::Plain, false), false),
        f("data", Shape::Map(Elem::Plain, false), false),
        f("metadata", Shape::Struct(50, false), false),
    ] },
    // 7
    TypeDef { name: "api.core.v1.Secret", atomic: false, fields: &[
        f("data", Shape::Map(Elem::Plain, false), false),
        f("metadata", Shape::Struct(50, false), false),
        f("stringData", Shape::Map(Elem::Plain, false), false),
    ] },
    // 8
    TypeDef { name: "api.core.v1.ServiceAccount", atomic: false, fields: &[
        f("imagePullSecrets", Shape::List(Elem::Struct(62), Smp::Replace, Ssa::Atomic), false),
        f("metadata", Shape::Struct(50, false), false),
        f("secrets", Shape::List(Elem::Struct(63), Smp::Merge("name"), Ssa::Map(&["name"], &[])), false),
    ] },
    // 9
    TypeDef { name: "api.core.v1.PersistentVolumeClaim", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(64, false), false),
        f("status", Shape::Struct(65, false), false),
    ] },
    // 10
    TypeDef { name: "api.core.v1.PersistentVolume", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(66, false), false),
    ] },
    // 11
    TypeDef { name: "api.core.v1.Event", atomic: false, fields: &[
        f("involvedObject", Shape::Struct(63, true), false),
        f("metadata", Shape::Struct(50, false), false),
        f("related", Shape::Struct(63, true), false),
    ] },
    // 12
    TypeDef { name: "api.core.v1.Endpoints", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("subsets", Shape::List(Elem::Struct(67), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 13
    TypeDef { name: "api.core.v1.LimitRange", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(68, false), false),
    ] },
    // 14
    TypeDef { name: "api.core.v1.ResourceQuota", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(69, false), false),
        f("status", Shape::Struct(70, false), false),
    ] },
    // 15
    TypeDef { name: "api.core.v1.Binding", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("target", Shape::Struct(63, true), false),
    ] },
    // 16
    TypeDef { name: "api.apps.v1.Deployment", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(71, false), false),
        f("status", Shape::Struct(72, false), false),
    ] },
    // 17
    TypeDef { name: "api.apps.v1.ReplicaSet", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(73, false), false),
        f("status", Shape::Struct(74, false), false),
    ] },
    // 18
    TypeDef { name: "api.apps.v1.StatefulSet", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(75, false), false),
        f("status", Shape::Struct(76, false), false),
    ] },
    // 19
    TypeDef { name: "api.apps.v1.DaemonSet", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(77, false), false),
        f("status", Shape::Struct(78, false), false),
    ] },
    // 20
    TypeDef { name: "api.apps.v1.ControllerRevision", atomic: false, fields: &[
        f("data", Shape::Any, false),
        f("metadata", Shape::Struct(50, false), false),
    ] },
    // 21
    TypeDef { name: "api.batch.v1.Job", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(79, false), false),
        f("status", Shape::Struct(80, false), false),
    ] },
    // 22
    TypeDef { name: "api.batch.v1.CronJob", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(81, false), false),
        f("status", Shape::Struct(82, false), false),
    ] },
    // 23
    TypeDef { name: "api.autoscaling.v1.Scale", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
    ] },
    // 24
    TypeDef { name: "api.autoscaling.v2.HorizontalPodAutoscaler", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(83, false), false),
        f("status", Shape::Struct(84, false), false),
    ] },
    // 25
    TypeDef { name: "api.coordination.v1.Lease", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
    ] },
    // 26
    TypeDef { name: "api.policy.v1.PodDisruptionBudget", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(85, false), false),
        f("status", Shape::Struct(86, false), false),
    ] },
    // 27
    TypeDef { name: "api.policy.v1.Eviction", atomic: false, fields: &[
        f("deleteOptions", Shape::Struct(87, false), false),
        f("metadata", Shape::Struct(50, false), false),
    ] },
    // 28
    TypeDef { name: "api.admissionregistration.v1.MutatingWebhookConfiguration", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("webhooks", Shape::List(Elem::Struct(88), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
    ] },
    // 29
    TypeDef { name: "api.admissionregistration.v1.ValidatingWebhookConfiguration", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("webhooks", Shape::List(Elem::Struct(89), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
    ] },
    // 30
    TypeDef { name: "api.admissionregistration.v1.ValidatingAdmissionPolicy", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(90, false), false),
        f("status", Shape::Struct(91, false), false),
    ] },
    // 31
    TypeDef { name: "api.admissionregistration.v1.ValidatingAdmissionPolicyBinding", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(92, false), false),
    ] },
    // 32
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(93, false), false),
        f("status", Shape::Struct(94, false), false),
    ] },
    // 33
    TypeDef { name: "kube-aggregator.pkg.apis.apiregistration.v1.APIService", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("status", Shape::Struct(95, false), false),
    ] },
    // 34
    TypeDef { name: "api.events.v1.Event", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("regarding", Shape::Struct(63, true), false),
        f("related", Shape::Struct(63, true), false),
    ] },
    // 35
    TypeDef { name: "api.discovery.v1.EndpointSlice", atomic: false, fields: &[
        f("endpoints", Shape::List(Elem::Struct(96), Smp::Replace, Ssa::Atomic), false),
        f("metadata", Shape::Struct(50, false), false),
        f("ports", Shape::List(Elem::Struct(97), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 36
    TypeDef { name: "api.rbac.v1.Role", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("rules", Shape::List(Elem::Struct(98), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 37
    TypeDef { name: "api.rbac.v1.ClusterRole", atomic: false, fields: &[
        f("aggregationRule", Shape::Struct(99, false), false),
        f("metadata", Shape::Struct(50, false), false),
        f("rules", Shape::List(Elem::Struct(98), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 38
    TypeDef { name: "api.rbac.v1.RoleBinding", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("roleRef", Shape::Struct(100, true), false),
        f("subjects", Shape::List(Elem::Struct(101), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 39
    TypeDef { name: "api.rbac.v1.ClusterRoleBinding", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("roleRef", Shape::Struct(100, true), false),
        f("subjects", Shape::List(Elem::Struct(101), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 40
    TypeDef { name: "api.networking.v1.Ingress", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(102, false), false),
        f("status", Shape::Struct(103, false), false),
    ] },
    // 41
    TypeDef { name: "api.networking.v1.IngressClass", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
    ] },
    // 42
    TypeDef { name: "api.networking.v1.NetworkPolicy", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(104, false), false),
    ] },
    // 43
    TypeDef { name: "api.scheduling.v1.PriorityClass", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
    ] },
    // 44
    TypeDef { name: "api.storage.v1.StorageClass", atomic: false, fields: &[
        f("allowedTopologies", Shape::List(Elem::Struct(105), Smp::Replace, Ssa::Atomic), false),
        f("metadata", Shape::Struct(50, false), false),
        f("mountOptions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("parameters", Shape::Map(Elem::Plain, false), false),
    ] },
    // 45
    TypeDef { name: "api.storage.v1.CSIDriver", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(106, false), false),
    ] },
    // 46
    TypeDef { name: "api.storage.v1.CSINode", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(107, false), false),
    ] },
    // 47
    TypeDef { name: "api.storage.v1.VolumeAttachment", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(108, false), false),
        f("status", Shape::Struct(109, false), false),
    ] },
    // 48
    TypeDef { name: "api.node.v1.RuntimeClass", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("overhead", Shape::Struct(110, false), false),
        f("scheduling", Shape::Struct(111, false), false),
    ] },
    // 49
    TypeDef { name: "api.certificates.v1.CertificateSigningRequest", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(112, false), false),
        f("status", Shape::Struct(113, false), false),
    ] },
    // 50
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.ObjectMeta", atomic: false, fields: &[
        f("annotations", Shape::Map(Elem::Plain, false), false),
        f("finalizers", Shape::List(Elem::Plain, Smp::MergeSet, Ssa::Set), false),
        f("labels", Shape::Map(Elem::Plain, false), false),
        f("managedFields", Shape::List(Elem::Struct(114), Smp::Replace, Ssa::Atomic), false),
        f("ownerReferences", Shape::List(Elem::Struct(115), Smp::Merge("uid"), Ssa::Map(&["uid"], &[("uid", "\"\"")])), false),
    ] },
    // 51
    TypeDef { name: "api.core.v1.PodSpec", atomic: false, fields: &[
        f("affinity", Shape::Struct(116, false), false),
        f("containers", Shape::List(Elem::Struct(117), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("dnsConfig", Shape::Struct(118, false), false),
        f("ephemeralContainers", Shape::List(Elem::Struct(119), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("hostAliases", Shape::List(Elem::Struct(120), Smp::Merge("ip"), Ssa::Map(&["ip"], &[("ip", "\"\"")])), false),
        f("imagePullSecrets", Shape::List(Elem::Struct(62), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("initContainers", Shape::List(Elem::Struct(117), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("nodeSelector", Shape::Map(Elem::Plain, true), false),
        f("overhead", Shape::Map(Elem::Plain, false), false),
        f("readinessGates", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("resourceClaims", Shape::List(Elem::Plain, Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), true),
        f("resources", Shape::Struct(121, false), false),
        f("schedulingGates", Shape::List(Elem::Plain, Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("securityContext", Shape::Struct(122, false), false),
        f("tolerations", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("topologySpreadConstraints", Shape::List(Elem::Struct(123), Smp::Merge("topologyKey"), Ssa::Map(&["topologyKey", "whenUnsatisfiable"], &[("topologyKey", "\"\""), ("whenUnsatisfiable", "\"\"")])), false),
        f("volumes", Shape::List(Elem::Struct(124), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), true),
    ] },
    // 52
    TypeDef { name: "api.core.v1.PodStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
        f("containerStatuses", Shape::List(Elem::Struct(125), Smp::Replace, Ssa::Atomic), false),
        f("ephemeralContainerStatuses", Shape::List(Elem::Struct(125), Smp::Replace, Ssa::Atomic), false),
        f("extendedResourceClaimStatus", Shape::Struct(126, false), false),
        f("hostIPs", Shape::List(Elem::Plain, Smp::Merge("ip"), Ssa::Atomic), false),
        f("initContainerStatuses", Shape::List(Elem::Struct(125), Smp::Replace, Ssa::Atomic), false),
        f("podIPs", Shape::List(Elem::Plain, Smp::Merge("ip"), Ssa::Map(&["ip"], &[("ip", "\"\"")])), false),
        f("resourceClaimStatuses", Shape::List(Elem::Plain, Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), true),
    ] },
    // 53
    TypeDef { name: "api.core.v1.PodTemplateSpec", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(51, false), false),
    ] },
    // 54
    TypeDef { name: "api.core.v1.ReplicationControllerSpec", atomic: false, fields: &[
        f("selector", Shape::Map(Elem::Plain, true), false),
        f("template", Shape::Struct(53, false), false),
    ] },
    // 55
    TypeDef { name: "api.core.v1.ReplicationControllerStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
    ] },
    // 56
    TypeDef { name: "api.core.v1.ServiceSpec", atomic: false, fields: &[
        f("clusterIPs", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("externalIPs", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("ipFamilies", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("loadBalancerSourceRanges", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("ports", Shape::List(Elem::Plain, Smp::Merge("port"), Ssa::Map(&["port", "protocol"], &[("port", "0"), ("protocol", "\"TCP\"")])), false),
        f("selector", Shape::Map(Elem::Plain, true), false),
    ] },
    // 57
    TypeDef { name: "api.core.v1.ServiceStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
        f("loadBalancer", Shape::Struct(127, false), false),
    ] },
    // 58
    TypeDef { name: "api.core.v1.NodeSpec", atomic: false, fields: &[
        f("podCIDRs", Shape::List(Elem::Plain, Smp::MergeSet, Ssa::Set), false),
        f("taints", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 59
    TypeDef { name: "api.core.v1.NodeStatus", atomic: false, fields: &[
        f("addresses", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
        f("allocatable", Shape::Map(Elem::Plain, false), false),
        f("capacity", Shape::Map(Elem::Plain, false), false),
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
        f("images", Shape::List(Elem::Struct(128), Smp::Replace, Ssa::Atomic), false),
        f("runtimeHandlers", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("volumesAttached", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("volumesInUse", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 60
    TypeDef { name: "api.core.v1.NamespaceSpec", atomic: false, fields: &[
        f("finalizers", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 61
    TypeDef { name: "api.core.v1.NamespaceStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
    ] },
    // 62
    TypeDef { name: "api.core.v1.LocalObjectReference", atomic: true, fields: &[] },
    // 63
    TypeDef { name: "api.core.v1.ObjectReference", atomic: true, fields: &[] },
    // 64
    TypeDef { name: "api.core.v1.PersistentVolumeClaimSpec", atomic: false, fields: &[
        f("accessModes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("dataSource", Shape::Struct(129, true), false),
        f("resources", Shape::Struct(130, false), false),
        f("selector", Shape::Struct(131, true), false),
    ] },
    // 65
    TypeDef { name: "api.core.v1.PersistentVolumeClaimStatus", atomic: false, fields: &[
        f("accessModes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("allocatedResourceStatuses", Shape::Map(Elem::Plain, false), false),
        f("allocatedResources", Shape::Map(Elem::Plain, false), false),
        f("capacity", Shape::Map(Elem::Plain, false), false),
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
    ] },
    // 66
    TypeDef { name: "api.core.v1.PersistentVolumeSpec", atomic: false, fields: &[
        f("accessModes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("capacity", Shape::Map(Elem::Plain, false), false),
        f("cephfs", Shape::Struct(132, false), false),
        f("cinder", Shape::Struct(133, false), false),
        f("claimRef", Shape::Struct(63, true), false),
        f("csi", Shape::Struct(134, false), false),
        f("fc", Shape::Struct(135, false), false),
        f("flexVolume", Shape::Struct(136, false), false),
        f("iscsi", Shape::Struct(137, false), false),
        f("mountOptions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("nodeAffinity", Shape::Struct(138, false), false),
        f("rbd", Shape::Struct(139, false), false),
        f("scaleIO", Shape::Struct(140, false), false),
        f("storageos", Shape::Struct(141, false), false),
    ] },
    // 67
    TypeDef { name: "api.core.v1.EndpointSubset", atomic: false, fields: &[
        f("addresses", Shape::List(Elem::Struct(142), Smp::Replace, Ssa::Atomic), false),
        f("notReadyAddresses", Shape::List(Elem::Struct(142), Smp::Replace, Ssa::Atomic), false),
        f("ports", Shape::List(Elem::Struct(143), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 68
    TypeDef { name: "api.core.v1.LimitRangeSpec", atomic: false, fields: &[
        f("limits", Shape::List(Elem::Struct(144), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 69
    TypeDef { name: "api.core.v1.ResourceQuotaSpec", atomic: false, fields: &[
        f("hard", Shape::Map(Elem::Plain, false), false),
        f("scopeSelector", Shape::Struct(145, true), false),
        f("scopes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 70
    TypeDef { name: "api.core.v1.ResourceQuotaStatus", atomic: false, fields: &[
        f("hard", Shape::Map(Elem::Plain, false), false),
        f("used", Shape::Map(Elem::Plain, false), false),
    ] },
    // 71
    TypeDef { name: "api.apps.v1.DeploymentSpec", atomic: false, fields: &[
        f("selector", Shape::Struct(131, true), false),
        f("strategy", Shape::Struct(PLAIN, false), true),
        f("template", Shape::Struct(53, false), false),
    ] },
    // 72
    TypeDef { name: "api.apps.v1.DeploymentStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
    ] },
    // 73
    TypeDef { name: "api.apps.v1.ReplicaSetSpec", atomic: false, fields: &[
        f("selector", Shape::Struct(131, true), false),
        f("template", Shape::Struct(53, false), false),
    ] },
    // 74
    TypeDef { name: "api.apps.v1.ReplicaSetStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
    ] },
    // 75
    TypeDef { name: "api.apps.v1.StatefulSetSpec", atomic: false, fields: &[
        f("selector", Shape::Struct(131, true), false),
        f("template", Shape::Struct(53, false), false),
        f("volumeClaimTemplates", Shape::List(Elem::Struct(9), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 76
    TypeDef { name: "api.apps.v1.StatefulSetStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
    ] },
    // 77
    TypeDef { name: "api.apps.v1.DaemonSetSpec", atomic: false, fields: &[
        f("selector", Shape::Struct(131, true), false),
        f("template", Shape::Struct(53, false), false),
    ] },
    // 78
    TypeDef { name: "api.apps.v1.DaemonSetStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
    ] },
    // 79
    TypeDef { name: "api.batch.v1.JobSpec", atomic: false, fields: &[
        f("podFailurePolicy", Shape::Struct(146, false), false),
        f("selector", Shape::Struct(131, true), false),
        f("successPolicy", Shape::Struct(147, false), false),
        f("template", Shape::Struct(53, false), false),
    ] },
    // 80
    TypeDef { name: "api.batch.v1.JobStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Atomic), false),
        f("uncountedTerminatedPods", Shape::Struct(148, false), false),
    ] },
    // 81
    TypeDef { name: "api.batch.v1.CronJobSpec", atomic: false, fields: &[
        f("jobTemplate", Shape::Struct(149, false), false),
    ] },
    // 82
    TypeDef { name: "api.batch.v1.CronJobStatus", atomic: false, fields: &[
        f("active", Shape::List(Elem::Struct(63), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 83
    TypeDef { name: "api.autoscaling.v2.HorizontalPodAutoscalerSpec", atomic: false, fields: &[
        f("behavior", Shape::Struct(150, false), false),
        f("metrics", Shape::List(Elem::Struct(151), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 84
    TypeDef { name: "api.autoscaling.v2.HorizontalPodAutoscalerStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
        f("currentMetrics", Shape::List(Elem::Struct(152), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 85
    TypeDef { name: "api.policy.v1.PodDisruptionBudgetSpec", atomic: false, fields: &[
        f("selector", Shape::Struct(131, true), false),
    ] },
    // 86
    TypeDef { name: "api.policy.v1.PodDisruptionBudgetStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
        f("disruptedPods", Shape::Map(Elem::Plain, false), false),
    ] },
    // 87
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.DeleteOptions", atomic: false, fields: &[
        f("dryRun", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 88
    TypeDef { name: "api.admissionregistration.v1.MutatingWebhook", atomic: false, fields: &[
        f("admissionReviewVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("matchConditions", Shape::List(Elem::Plain, Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("namespaceSelector", Shape::Struct(131, true), false),
        f("objectSelector", Shape::Struct(131, true), false),
        f("rules", Shape::List(Elem::Struct(153), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 89
    TypeDef { name: "api.admissionregistration.v1.ValidatingWebhook", atomic: false, fields: &[
        f("admissionReviewVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("matchConditions", Shape::List(Elem::Plain, Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("namespaceSelector", Shape::Struct(131, true), false),
        f("objectSelector", Shape::Struct(131, true), false),
        f("rules", Shape::List(Elem::Struct(153), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 90
    TypeDef { name: "api.admissionregistration.v1.ValidatingAdmissionPolicySpec", atomic: false, fields: &[
        f("auditAnnotations", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("matchConditions", Shape::List(Elem::Plain, Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("matchConstraints", Shape::Struct(154, true), false),
        f("paramKind", Shape::Struct(155, true), false),
        f("validations", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("variables", Shape::List(Elem::Struct(156), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
    ] },
    // 91
    TypeDef { name: "api.admissionregistration.v1.ValidatingAdmissionPolicyStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Map(&["type"], &[("type", "\"\"")])), false),
        f("typeChecking", Shape::Struct(157, false), false),
    ] },
    // 92
    TypeDef { name: "api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec", atomic: false, fields: &[
        f("matchResources", Shape::Struct(154, true), false),
        f("paramRef", Shape::Struct(158, true), false),
        f("validationActions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false),
    ] },
    // 93
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec", atomic: false, fields: &[
        f("conversion", Shape::Struct(159, false), false),
        f("names", Shape::Struct(160, false), false),
        f("versions", Shape::List(Elem::Struct(161), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 94
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus", atomic: false, fields: &[
        f("acceptedNames", Shape::Struct(160, false), false),
        f("conditions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Map(&["type"], &[("type", "\"\"")])), false),
        f("storedVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 95
    TypeDef { name: "kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Merge("type"), Ssa::Map(&["type"], &[("type", "\"\"")])), false),
    ] },
    // 96
    TypeDef { name: "api.discovery.v1.Endpoint", atomic: false, fields: &[
        f("addresses", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false),
        f("deprecatedTopology", Shape::Map(Elem::Plain, false), false),
        f("hints", Shape::Struct(162, false), false),
        f("targetRef", Shape::Struct(63, true), false),
    ] },
    // 97
    TypeDef { name: "api.discovery.v1.EndpointPort", atomic: true, fields: &[] },
    // 98
    TypeDef { name: "api.rbac.v1.PolicyRule", atomic: false, fields: &[
        f("apiGroups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("nonResourceURLs", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("resourceNames", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("resources", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("verbs", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 99
    TypeDef { name: "api.rbac.v1.AggregationRule", atomic: false, fields: &[
        f("clusterRoleSelectors", Shape::List(Elem::Struct(131), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 100
    TypeDef { name: "api.rbac.v1.RoleRef", atomic: true, fields: &[] },
    // 101
    TypeDef { name: "api.rbac.v1.Subject", atomic: true, fields: &[] },
    // 102
    TypeDef { name: "api.networking.v1.IngressSpec", atomic: false, fields: &[
        f("defaultBackend", Shape::Struct(163, false), false),
        f("rules", Shape::List(Elem::Struct(164), Smp::Replace, Ssa::Atomic), false),
        f("tls", Shape::List(Elem::Struct(165), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 103
    TypeDef { name: "api.networking.v1.IngressStatus", atomic: false, fields: &[
        f("loadBalancer", Shape::Struct(166, false), false),
    ] },
    // 104
    TypeDef { name: "api.networking.v1.NetworkPolicySpec", atomic: false, fields: &[
        f("egress", Shape::List(Elem::Struct(167), Smp::Replace, Ssa::Atomic), false),
        f("ingress", Shape::List(Elem::Struct(168), Smp::Replace, Ssa::Atomic), false),
        f("podSelector", Shape::Struct(131, true), false),
        f("policyTypes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 105
    TypeDef { name: "api.core.v1.TopologySelectorTerm", atomic: true, fields: &[
        f("matchLabelExpressions", Shape::List(Elem::Struct(169), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 106
    TypeDef { name: "api.storage.v1.CSIDriverSpec", atomic: false, fields: &[
        f("tokenRequests", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("volumeLifecycleModes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false),
    ] },
    // 107
    TypeDef { name: "api.storage.v1.CSINodeSpec", atomic: false, fields: &[
        f("drivers", Shape::List(Elem::Struct(170), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
    ] },
    // 108
    TypeDef { name: "api.storage.v1.VolumeAttachmentSpec", atomic: false, fields: &[
        f("source", Shape::Struct(171, false), false),
    ] },
    // 109
    TypeDef { name: "api.storage.v1.VolumeAttachmentStatus", atomic: false, fields: &[
        f("attachmentMetadata", Shape::Map(Elem::Plain, false), false),
    ] },
    // 110
    TypeDef { name: "api.node.v1.Overhead", atomic: false, fields: &[
        f("podFixed", Shape::Map(Elem::Plain, false), false),
    ] },
    // 111
    TypeDef { name: "api.node.v1.Scheduling", atomic: false, fields: &[
        f("nodeSelector", Shape::Map(Elem::Plain, true), false),
        f("tolerations", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 112
    TypeDef { name: "api.certificates.v1.CertificateSigningRequestSpec", atomic: false, fields: &[
        f("extra", Shape::Map(Elem::List, false), false),
        f("groups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("usages", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 113
    TypeDef { name: "api.certificates.v1.CertificateSigningRequestStatus", atomic: false, fields: &[
        f("conditions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Map(&["type"], &[("type", "\"\"")])), false),
    ] },
    // 114
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry", atomic: false, fields: &[
        f("fieldsV1", Shape::Any, false),
    ] },
    // 115
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.OwnerReference", atomic: true, fields: &[] },
    // 116
    TypeDef { name: "api.core.v1.Affinity", atomic: false, fields: &[
        f("nodeAffinity", Shape::Struct(172, false), false),
        f("podAffinity", Shape::Struct(173, false), false),
        f("podAntiAffinity", Shape::Struct(174, false), false),
    ] },
    // 117
    TypeDef { name: "api.core.v1.Container", atomic: false, fields: &[
        f("args", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("command", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("env", Shape::List(Elem::Struct(175), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("envFrom", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("lifecycle", Shape::Struct(176, false), false),
        f("livenessProbe", Shape::Struct(177, false), false),
        f("ports", Shape::List(Elem::Plain, Smp::Merge("containerPort"), Ssa::Map(&["containerPort", "protocol"], &[("containerPort", "0"), ("protocol", "\"TCP\"")])), false),
        f("readinessProbe", Shape::Struct(177, false), false),
        f("resizePolicy", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("resources", Shape::Struct(121, false), false),
        f("restartPolicyRules", Shape::List(Elem::Struct(178), Smp::Replace, Ssa::Atomic), false),
        f("securityContext", Shape::Struct(179, false), false),
        f("startupProbe", Shape::Struct(177, false), false),
        f("volumeDevices", Shape::List(Elem::Plain, Smp::Merge("devicePath"), Ssa::Map(&["devicePath"], &[("devicePath", "\"\"")])), false),
        f("volumeMounts", Shape::List(Elem::Plain, Smp::Merge("mountPath"), Ssa::Map(&["mountPath"], &[("mountPath", "\"\"")])), false),
    ] },
    // 118
    TypeDef { name: "api.core.v1.PodDNSConfig", atomic: false, fields: &[
        f("nameservers", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("options", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("searches", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 119
    TypeDef { name: "api.core.v1.EphemeralContainer", atomic: false, fields: &[
        f("args", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("command", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("env", Shape::List(Elem::Struct(175), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("envFrom", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("lifecycle", Shape::Struct(176, false), false),
        f("livenessProbe", Shape::Struct(177, false), false),
        f("ports", Shape::List(Elem::Plain, Smp::Merge("containerPort"), Ssa::Map(&["containerPort", "protocol"], &[("containerPort", "0"), ("protocol", "\"TCP\"")])), false),
        f("readinessProbe", Shape::Struct(177, false), false),
        f("resizePolicy", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("resources", Shape::Struct(121, false), false),
        f("restartPolicyRules", Shape::List(Elem::Struct(178), Smp::Replace, Ssa::Atomic), false),
        f("securityContext", Shape::Struct(179, false), false),
        f("startupProbe", Shape::Struct(177, false), false),
        f("volumeDevices", Shape::List(Elem::Plain, Smp::Merge("devicePath"), Ssa::Map(&["devicePath"], &[("devicePath", "\"\"")])), false),
        f("volumeMounts", Shape::List(Elem::Plain, Smp::Merge("mountPath"), Ssa::Map(&["mountPath"], &[("mountPath", "\"\"")])), false),
    ] },
    // 120
    TypeDef { name: "api.core.v1.HostAlias", atomic: false, fields: &[
        f("hostnames", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 121
    TypeDef { name: "api.core.v1.ResourceRequirements", atomic: false, fields: &[
        f("claims", Shape::List(Elem::Plain, Smp::Replace, Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("limits", Shape::Map(Elem::Plain, false), false),
        f("requests", Shape::Map(Elem::Plain, false), false),
    ] },
    // 122
    TypeDef { name: "api.core.v1.PodSecurityContext", atomic: false, fields: &[
        f("supplementalGroups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("sysctls", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 123
    TypeDef { name: "api.core.v1.TopologySpreadConstraint", atomic: false, fields: &[
        f("labelSelector", Shape::Struct(131, true), false),
        f("matchLabelKeys", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 124
    TypeDef { name: "api.core.v1.Volume", atomic: false, fields: &[
        f("cephfs", Shape::Struct(180, false), false),
        f("cinder", Shape::Struct(181, false), false),
        f("configMap", Shape::Struct(182, false), false),
        f("csi", Shape::Struct(183, false), false),
        f("downwardAPI", Shape::Struct(184, false), false),
        f("ephemeral", Shape::Struct(185, false), false),
        f("fc", Shape::Struct(135, false), false),
        f("flexVolume", Shape::Struct(186, false), false),
        f("iscsi", Shape::Struct(187, false), false),
        f("projected", Shape::Struct(188, false), false),
        f("rbd", Shape::Struct(189, false), false),
        f("scaleIO", Shape::Struct(190, false), false),
        f("secret", Shape::Struct(191, false), false),
        f("storageos", Shape::Struct(192, false), false),
    ] },
    // 125
    TypeDef { name: "api.core.v1.ContainerStatus", atomic: false, fields: &[
        f("allocatedResources", Shape::Map(Elem::Plain, false), false),
        f("allocatedResourcesStatus", Shape::List(Elem::Struct(193), Smp::Merge("name"), Ssa::Map(&["name"], &[("name", "\"\"")])), false),
        f("resources", Shape::Struct(121, false), false),
        f("user", Shape::Struct(194, false), false),
        f("volumeMounts", Shape::List(Elem::Plain, Smp::Merge("mountPath"), Ssa::Map(&["mountPath"], &[("mountPath", "\"\"")])), false),
    ] },
    // 126
    TypeDef { name: "api.core.v1.PodExtendedResourceClaimStatus", atomic: false, fields: &[
        f("requestMappings", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 127
    TypeDef { name: "api.core.v1.LoadBalancerStatus", atomic: false, fields: &[
        f("ingress", Shape::List(Elem::Struct(195), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 128
    TypeDef { name: "api.core.v1.ContainerImage", atomic: false, fields: &[
        f("names", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 129
    TypeDef { name: "api.core.v1.TypedLocalObjectReference", atomic: true, fields: &[] },
    // 130
    TypeDef { name: "api.core.v1.VolumeResourceRequirements", atomic: false, fields: &[
        f("limits", Shape::Map(Elem::Plain, false), false),
        f("requests", Shape::Map(Elem::Plain, false), false),
    ] },
    // 131
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.LabelSelector", atomic: true, fields: &[
        f("matchExpressions", Shape::List(Elem::Struct(196), Smp::Replace, Ssa::Atomic), false),
        f("matchLabels", Shape::Map(Elem::Plain, false), false),
    ] },
    // 132
    TypeDef { name: "api.core.v1.CephFSPersistentVolumeSource", atomic: false, fields: &[
        f("monitors", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("secretRef", Shape::Struct(197, true), false),
    ] },
    // 133
    TypeDef { name: "api.core.v1.CinderPersistentVolumeSource", atomic: false, fields: &[
        f("secretRef", Shape::Struct(197, true), false),
    ] },
    // 134
    TypeDef { name: "api.core.v1.CSIPersistentVolumeSource", atomic: false, fields: &[
        f("controllerExpandSecretRef", Shape::Struct(197, true), false),
        f("controllerPublishSecretRef", Shape::Struct(197, true), false),
        f("nodeExpandSecretRef", Shape::Struct(197, true), false),
        f("nodePublishSecretRef", Shape::Struct(197, true), false),
        f("nodeStageSecretRef", Shape::Struct(197, true), false),
        f("volumeAttributes", Shape::Map(Elem::Plain, false), false),
    ] },
    // 135
    TypeDef { name: "api.core.v1.FCVolumeSource", atomic: false, fields: &[
        f("targetWWNs", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("wwids", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 136
    TypeDef { name: "api.core.v1.FlexPersistentVolumeSource", atomic: false, fields: &[
        f("options", Shape::Map(Elem::Plain, false), false),
        f("secretRef", Shape::Struct(197, true), false),
    ] },
    // 137
    TypeDef { name: "api.core.v1.ISCSIPersistentVolumeSource", atomic: false, fields: &[
        f("portals", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("secretRef", Shape::Struct(197, true), false),
    ] },
    // 138
    TypeDef { name: "api.core.v1.VolumeNodeAffinity", atomic: false, fields: &[
        f("required", Shape::Struct(198, true), false),
    ] },
    // 139
    TypeDef { name: "api.core.v1.RBDPersistentVolumeSource", atomic: false, fields: &[
        f("monitors", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("secretRef", Shape::Struct(197, true), false),
    ] },
    // 140
    TypeDef { name: "api.core.v1.ScaleIOPersistentVolumeSource", atomic: false, fields: &[
        f("secretRef", Shape::Struct(197, true), false),
    ] },
    // 141
    TypeDef { name: "api.core.v1.StorageOSPersistentVolumeSource", atomic: false, fields: &[
        f("secretRef", Shape::Struct(63, true), false),
    ] },
    // 142
    TypeDef { name: "api.core.v1.EndpointAddress", atomic: true, fields: &[
        f("targetRef", Shape::Struct(63, true), false),
    ] },
    // 143
    TypeDef { name: "api.core.v1.EndpointPort", atomic: true, fields: &[] },
    // 144
    TypeDef { name: "api.core.v1.LimitRangeItem", atomic: false, fields: &[
        f("default", Shape::Map(Elem::Plain, false), false),
        f("defaultRequest", Shape::Map(Elem::Plain, false), false),
        f("max", Shape::Map(Elem::Plain, false), false),
        f("maxLimitRequestRatio", Shape::Map(Elem::Plain, false), false),
        f("min", Shape::Map(Elem::Plain, false), false),
    ] },
    // 145
    TypeDef { name: "api.core.v1.ScopeSelector", atomic: true, fields: &[
        f("matchExpressions", Shape::List(Elem::Struct(199), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 146
    TypeDef { name: "api.batch.v1.PodFailurePolicy", atomic: false, fields: &[
        f("rules", Shape::List(Elem::Struct(200), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 147
    TypeDef { name: "api.batch.v1.SuccessPolicy", atomic: false, fields: &[
        f("rules", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 148
    TypeDef { name: "api.batch.v1.UncountedTerminatedPods", atomic: false, fields: &[
        f("failed", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false),
        f("succeeded", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false),
    ] },
    // 149
    TypeDef { name: "api.batch.v1.JobTemplateSpec", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(79, false), false),
    ] },
    // 150
    TypeDef { name: "api.autoscaling.v2.HorizontalPodAutoscalerBehavior", atomic: false, fields: &[
        f("scaleDown", Shape::Struct(201, false), false),
        f("scaleUp", Shape::Struct(201, false), false),
    ] },
    // 151
    TypeDef { name: "api.autoscaling.v2.MetricSpec", atomic: false, fields: &[
        f("external", Shape::Struct(202, false), false),
        f("object", Shape::Struct(203, false), false),
        f("pods", Shape::Struct(204, false), false),
    ] },
    // 152
    TypeDef { name: "api.autoscaling.v2.MetricStatus", atomic: false, fields: &[
        f("external", Shape::Struct(205, false), false),
        f("object", Shape::Struct(206, false), false),
        f("pods", Shape::Struct(207, false), false),
    ] },
    // 153
    TypeDef { name: "api.admissionregistration.v1.RuleWithOperations", atomic: false, fields: &[
        f("apiGroups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("apiVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("operations", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("resources", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 154
    TypeDef { name: "api.admissionregistration.v1.MatchResources", atomic: true, fields: &[
        f("excludeResourceRules", Shape::List(Elem::Struct(208), Smp::Replace, Ssa::Atomic), false),
        f("namespaceSelector", Shape::Struct(131, true), false),
        f("objectSelector", Shape::Struct(131, true), false),
        f("resourceRules", Shape::List(Elem::Struct(208), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 155
    TypeDef { name: "api.admissionregistration.v1.ParamKind", atomic: true, fields: &[] },
    // 156
    TypeDef { name: "api.admissionregistration.v1.Variable", atomic: true, fields: &[] },
    // 157
    TypeDef { name: "api.admissionregistration.v1.TypeChecking", atomic: false, fields: &[
        f("expressionWarnings", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 158
    TypeDef { name: "api.admissionregistration.v1.ParamRef", atomic: true, fields: &[
        f("selector", Shape::Struct(131, true), false),
    ] },
    // 159
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceConversion", atomic: false, fields: &[
        f("webhook", Shape::Struct(209, false), false),
    ] },
    // 160
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames", atomic: false, fields: &[
        f("categories", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("shortNames", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 161
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion", atomic: false, fields: &[
        f("additionalPrinterColumns", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("schema", Shape::Struct(210, false), false),
        f("selectableFields", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("subresources", Shape::Struct(211, false), false),
    ] },
    // 162
    TypeDef { name: "api.discovery.v1.EndpointHints", atomic: false, fields: &[
        f("forNodes", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("forZones", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 163
    TypeDef { name: "api.networking.v1.IngressBackend", atomic: false, fields: &[
        f("resource", Shape::Struct(129, true), false),
        f("service", Shape::Struct(212, false), false),
    ] },
    // 164
    TypeDef { name: "api.networking.v1.IngressRule", atomic: false, fields: &[
        f("http", Shape::Struct(213, false), false),
    ] },
    // 165
    TypeDef { name: "api.networking.v1.IngressTLS", atomic: false, fields: &[
        f("hosts", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 166
    TypeDef { name: "api.networking.v1.IngressLoadBalancerStatus", atomic: false, fields: &[
        f("ingress", Shape::List(Elem::Struct(214), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 167
    TypeDef { name: "api.networking.v1.NetworkPolicyEgressRule", atomic: false, fields: &[
        f("ports", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("to", Shape::List(Elem::Struct(215), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 168
    TypeDef { name: "api.networking.v1.NetworkPolicyIngressRule", atomic: false, fields: &[
        f("from", Shape::List(Elem::Struct(215), Smp::Replace, Ssa::Atomic), false),
        f("ports", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 169
    TypeDef { name: "api.core.v1.TopologySelectorLabelRequirement", atomic: false, fields: &[
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 170
    TypeDef { name: "api.storage.v1.CSINodeDriver", atomic: false, fields: &[
        f("topologyKeys", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 171
    TypeDef { name: "api.storage.v1.VolumeAttachmentSource", atomic: false, fields: &[
        f("inlineVolumeSpec", Shape::Struct(66, false), false),
    ] },
    // 172
    TypeDef { name: "api.core.v1.NodeAffinity", atomic: false, fields: &[
        f("preferredDuringSchedulingIgnoredDuringExecution", Shape::List(Elem::Struct(216), Smp::Replace, Ssa::Atomic), false),
        f("requiredDuringSchedulingIgnoredDuringExecution", Shape::Struct(198, true), false),
    ] },
    // 173
    TypeDef { name: "api.core.v1.PodAffinity", atomic: false, fields: &[
        f("preferredDuringSchedulingIgnoredDuringExecution", Shape::List(Elem::Struct(217), Smp::Replace, Ssa::Atomic), false),
        f("requiredDuringSchedulingIgnoredDuringExecution", Shape::List(Elem::Struct(218), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 174
    TypeDef { name: "api.core.v1.PodAntiAffinity", atomic: false, fields: &[
        f("preferredDuringSchedulingIgnoredDuringExecution", Shape::List(Elem::Struct(217), Smp::Replace, Ssa::Atomic), false),
        f("requiredDuringSchedulingIgnoredDuringExecution", Shape::List(Elem::Struct(218), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 175
    TypeDef { name: "api.core.v1.EnvVar", atomic: false, fields: &[
        f("valueFrom", Shape::Struct(219, false), false),
    ] },
    // 176
    TypeDef { name: "api.core.v1.Lifecycle", atomic: false, fields: &[
        f("postStart", Shape::Struct(220, false), false),
        f("preStop", Shape::Struct(220, false), false),
    ] },
    // 177
    TypeDef { name: "api.core.v1.Probe", atomic: false, fields: &[
        f("exec", Shape::Struct(221, false), false),
        f("httpGet", Shape::Struct(222, false), false),
    ] },
    // 178
    TypeDef { name: "api.core.v1.ContainerRestartRule", atomic: false, fields: &[
        f("exitCodes", Shape::Struct(223, false), false),
    ] },
    // 179
    TypeDef { name: "api.core.v1.SecurityContext", atomic: false, fields: &[
        f("capabilities", Shape::Struct(224, false), false),
    ] },
    // 180
    TypeDef { name: "api.core.v1.CephFSVolumeSource", atomic: false, fields: &[
        f("monitors", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("secretRef", Shape::Struct(62, true), false),
    ] },
    // 181
    TypeDef { name: "api.core.v1.CinderVolumeSource", atomic: false, fields: &[
        f("secretRef", Shape::Struct(62, true), false),
    ] },
    // 182
    TypeDef { name: "api.core.v1.ConfigMapVolumeSource", atomic: false, fields: &[
        f("items", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 183
    TypeDef { name: "api.core.v1.CSIVolumeSource", atomic: false, fields: &[
        f("nodePublishSecretRef", Shape::Struct(62, true), false),
        f("volumeAttributes", Shape::Map(Elem::Plain, false), false),
    ] },
    // 184
    TypeDef { name: "api.core.v1.DownwardAPIVolumeSource", atomic: false, fields: &[
        f("items", Shape::List(Elem::Struct(225), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 185
    TypeDef { name: "api.core.v1.EphemeralVolumeSource", atomic: false, fields: &[
        f("volumeClaimTemplate", Shape::Struct(226, false), false),
    ] },
    // 186
    TypeDef { name: "api.core.v1.FlexVolumeSource", atomic: false, fields: &[
        f("options", Shape::Map(Elem::Plain, false), false),
        f("secretRef", Shape::Struct(62, true), false),
    ] },
    // 187
    TypeDef { name: "api.core.v1.ISCSIVolumeSource", atomic: false, fields: &[
        f("portals", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("secretRef", Shape::Struct(62, true), false),
    ] },
    // 188
    TypeDef { name: "api.core.v1.ProjectedVolumeSource", atomic: false, fields: &[
        f("sources", Shape::List(Elem::Struct(227), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 189
    TypeDef { name: "api.core.v1.RBDVolumeSource", atomic: false, fields: &[
        f("monitors", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("secretRef", Shape::Struct(62, true), false),
    ] },
    // 190
    TypeDef { name: "api.core.v1.ScaleIOVolumeSource", atomic: false, fields: &[
        f("secretRef", Shape::Struct(62, true), false),
    ] },
    // 191
    TypeDef { name: "api.core.v1.SecretVolumeSource", atomic: false, fields: &[
        f("items", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 192
    TypeDef { name: "api.core.v1.StorageOSVolumeSource", atomic: false, fields: &[
        f("secretRef", Shape::Struct(62, true), false),
    ] },
    // 193
    TypeDef { name: "api.core.v1.ResourceStatus", atomic: false, fields: &[
        f("resources", Shape::List(Elem::Plain, Smp::Replace, Ssa::Map(&["resourceID"], &[("resourceID", "\"\"")])), false),
    ] },
    // 194
    TypeDef { name: "api.core.v1.ContainerUser", atomic: false, fields: &[
        f("linux", Shape::Struct(228, false), false),
    ] },
    // 195
    TypeDef { name: "api.core.v1.LoadBalancerIngress", atomic: false, fields: &[
        f("ports", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 196
    TypeDef { name: "apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement", atomic: false, fields: &[
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 197
    TypeDef { name: "api.core.v1.SecretReference", atomic: true, fields: &[] },
    // 198
    TypeDef { name: "api.core.v1.NodeSelector", atomic: true, fields: &[
        f("nodeSelectorTerms", Shape::List(Elem::Struct(229), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 199
    TypeDef { name: "api.core.v1.ScopedResourceSelectorRequirement", atomic: false, fields: &[
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 200
    TypeDef { name: "api.batch.v1.PodFailurePolicyRule", atomic: false, fields: &[
        f("onExitCodes", Shape::Struct(230, false), false),
        f("onPodConditions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 201
    TypeDef { name: "api.autoscaling.v2.HPAScalingRules", atomic: false, fields: &[
        f("policies", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 202
    TypeDef { name: "api.autoscaling.v2.ExternalMetricSource", atomic: false, fields: &[
        f("metric", Shape::Struct(231, false), false),
    ] },
    // 203
    TypeDef { name: "api.autoscaling.v2.ObjectMetricSource", atomic: false, fields: &[
        f("metric", Shape::Struct(231, false), false),
    ] },
    // 204
    TypeDef { name: "api.autoscaling.v2.PodsMetricSource", atomic: false, fields: &[
        f("metric", Shape::Struct(231, false), false),
    ] },
    // 205
    TypeDef { name: "api.autoscaling.v2.ExternalMetricStatus", atomic: false, fields: &[
        f("metric", Shape::Struct(231, false), false),
    ] },
    // 206
    TypeDef { name: "api.autoscaling.v2.ObjectMetricStatus", atomic: false, fields: &[
        f("metric", Shape::Struct(231, false), false),
    ] },
    // 207
    TypeDef { name: "api.autoscaling.v2.PodsMetricStatus", atomic: false, fields: &[
        f("metric", Shape::Struct(231, false), false),
    ] },
    // 208
    TypeDef { name: "api.admissionregistration.v1.NamedRuleWithOperations", atomic: true, fields: &[
        f("apiGroups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("apiVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("operations", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("resourceNames", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("resources", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 209
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion", atomic: false, fields: &[
        f("conversionReviewVersions", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 210
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceValidation", atomic: false, fields: &[
        f("openAPIV3Schema", Shape::Struct(232, false), false),
    ] },
    // 211
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresources", atomic: false, fields: &[
        f("status", Shape::Any, false),
    ] },
    // 212
    TypeDef { name: "api.networking.v1.IngressServiceBackend", atomic: false, fields: &[
        f("port", Shape::Struct(233, true), false),
    ] },
    // 213
    TypeDef { name: "api.networking.v1.HTTPIngressRuleValue", atomic: false, fields: &[
        f("paths", Shape::List(Elem::Struct(234), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 214
    TypeDef { name: "api.networking.v1.IngressLoadBalancerIngress", atomic: false, fields: &[
        f("ports", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 215
    TypeDef { name: "api.networking.v1.NetworkPolicyPeer", atomic: false, fields: &[
        f("ipBlock", Shape::Struct(235, false), false),
        f("namespaceSelector", Shape::Struct(131, true), false),
        f("podSelector", Shape::Struct(131, true), false),
    ] },
    // 216
    TypeDef { name: "api.core.v1.PreferredSchedulingTerm", atomic: false, fields: &[
        f("preference", Shape::Struct(229, true), false),
    ] },
    // 217
    TypeDef { name: "api.core.v1.WeightedPodAffinityTerm", atomic: false, fields: &[
        f("podAffinityTerm", Shape::Struct(218, false), false),
    ] },
    // 218
    TypeDef { name: "api.core.v1.PodAffinityTerm", atomic: false, fields: &[
        f("labelSelector", Shape::Struct(131, true), false),
        f("matchLabelKeys", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("mismatchLabelKeys", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("namespaceSelector", Shape::Struct(131, true), false),
        f("namespaces", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 219
    TypeDef { name: "api.core.v1.EnvVarSource", atomic: false, fields: &[
        f("configMapKeyRef", Shape::Struct(236, true), false),
        f("fieldRef", Shape::Struct(237, true), false),
        f("fileKeyRef", Shape::Struct(238, true), false),
        f("resourceFieldRef", Shape::Struct(239, true), false),
        f("secretKeyRef", Shape::Struct(240, true), false),
    ] },
    // 220
    TypeDef { name: "api.core.v1.LifecycleHandler", atomic: false, fields: &[
        f("exec", Shape::Struct(221, false), false),
        f("httpGet", Shape::Struct(222, false), false),
    ] },
    // 221
    TypeDef { name: "api.core.v1.ExecAction", atomic: false, fields: &[
        f("command", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 222
    TypeDef { name: "api.core.v1.HTTPGetAction", atomic: false, fields: &[
        f("httpHeaders", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 223
    TypeDef { name: "api.core.v1.ContainerRestartRuleOnExitCodes", atomic: false, fields: &[
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false),
    ] },
    // 224
    TypeDef { name: "api.core.v1.Capabilities", atomic: false, fields: &[
        f("add", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("drop", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 225
    TypeDef { name: "api.core.v1.DownwardAPIVolumeFile", atomic: false, fields: &[
        f("fieldRef", Shape::Struct(237, true), false),
        f("resourceFieldRef", Shape::Struct(239, true), false),
    ] },
    // 226
    TypeDef { name: "api.core.v1.PersistentVolumeClaimTemplate", atomic: false, fields: &[
        f("metadata", Shape::Struct(50, false), false),
        f("spec", Shape::Struct(64, false), false),
    ] },
    // 227
    TypeDef { name: "api.core.v1.VolumeProjection", atomic: false, fields: &[
        f("clusterTrustBundle", Shape::Struct(241, false), false),
        f("configMap", Shape::Struct(242, false), false),
        f("downwardAPI", Shape::Struct(243, false), false),
        f("secret", Shape::Struct(244, false), false),
    ] },
    // 228
    TypeDef { name: "api.core.v1.LinuxContainerUser", atomic: false, fields: &[
        f("supplementalGroups", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 229
    TypeDef { name: "api.core.v1.NodeSelectorTerm", atomic: true, fields: &[
        f("matchExpressions", Shape::List(Elem::Struct(245), Smp::Replace, Ssa::Atomic), false),
        f("matchFields", Shape::List(Elem::Struct(245), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 230
    TypeDef { name: "api.batch.v1.PodFailurePolicyOnExitCodesRequirement", atomic: false, fields: &[
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Set), false),
    ] },
    // 231
    TypeDef { name: "api.autoscaling.v2.MetricIdentifier", atomic: false, fields: &[
        f("selector", Shape::Struct(131, true), false),
    ] },
    // 232
    TypeDef { name: "apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", atomic: false, fields: &[
        f("additionalItems", Shape::Any, false),
        f("additionalProperties", Shape::Any, false),
        f("allOf", Shape::List(Elem::Struct(232), Smp::Replace, Ssa::Atomic), false),
        f("anyOf", Shape::List(Elem::Struct(232), Smp::Replace, Ssa::Atomic), false),
        f("default", Shape::Any, false),
        f("definitions", Shape::Map(Elem::Struct(232), false), false),
        f("dependencies", Shape::Map(Elem::Any, false), false),
        f("enum", Shape::List(Elem::Any, Smp::Replace, Ssa::Atomic), false),
        f("example", Shape::Any, false),
        f("items", Shape::Any, false),
        f("not", Shape::Struct(232, false), false),
        f("oneOf", Shape::List(Elem::Struct(232), Smp::Replace, Ssa::Atomic), false),
        f("patternProperties", Shape::Map(Elem::Struct(232), false), false),
        f("properties", Shape::Map(Elem::Struct(232), false), false),
        f("required", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("x-kubernetes-list-map-keys", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
        f("x-kubernetes-validations", Shape::List(Elem::Plain, Smp::Merge("rule"), Ssa::Map(&["rule"], &[("rule", "\"\"")])), false),
    ] },
    // 233
    TypeDef { name: "api.networking.v1.ServiceBackendPort", atomic: true, fields: &[] },
    // 234
    TypeDef { name: "api.networking.v1.HTTPIngressPath", atomic: false, fields: &[
        f("backend", Shape::Struct(163, false), false),
    ] },
    // 235
    TypeDef { name: "api.networking.v1.IPBlock", atomic: false, fields: &[
        f("except", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 236
    TypeDef { name: "api.core.v1.ConfigMapKeySelector", atomic: true, fields: &[] },
    // 237
    TypeDef { name: "api.core.v1.ObjectFieldSelector", atomic: true, fields: &[] },
    // 238
    TypeDef { name: "api.core.v1.FileKeySelector", atomic: true, fields: &[] },
    // 239
    TypeDef { name: "api.core.v1.ResourceFieldSelector", atomic: true, fields: &[] },
    // 240
    TypeDef { name: "api.core.v1.SecretKeySelector", atomic: true, fields: &[] },
    // 241
    TypeDef { name: "api.core.v1.ClusterTrustBundleProjection", atomic: false, fields: &[
        f("labelSelector", Shape::Struct(131, true), false),
    ] },
    // 242
    TypeDef { name: "api.core.v1.ConfigMapProjection", atomic: false, fields: &[
        f("items", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 243
    TypeDef { name: "api.core.v1.DownwardAPIProjection", atomic: false, fields: &[
        f("items", Shape::List(Elem::Struct(225), Smp::Replace, Ssa::Atomic), false),
    ] },
    // 244
    TypeDef { name: "api.core.v1.SecretProjection", atomic: false, fields: &[
        f("items", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
    ] },
    // 245
    TypeDef { name: "api.core.v1.NodeSelectorRequirement", atomic: false, fields: &[
        f("values", Shape::List(Elem::Plain, Smp::Replace, Ssa::Atomic), false),
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
            ("batch", "CronJob", "spec.jobTemplate.spec.template.spec.containers", ListStrategy::MergeByKey("name")),
            ("policy", "PodDisruptionBudget", "status.conditions", ListStrategy::MergeByKey("type")),
            ("admissionregistration.k8s.io", "MutatingWebhookConfiguration", "webhooks", ListStrategy::MergeByKey("name")),
            ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "webhooks", ListStrategy::MergeByKey("name")),
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
