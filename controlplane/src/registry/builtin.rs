//! The built-in resources the embedded server stores: what kube-rs controllers, the node
//! simulator, kubectl and the Kruise components need (INVENTORY of the API server issue).

use super::{ResourceDef, StoredAs};

/// One built-in resource.
pub struct BuiltinResource {
    /// API group.
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Plural name.
    pub resource: &'static str,
    /// Singular name.
    pub singular: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Short names.
    pub short_names: &'static [&'static str],
    /// Categories.
    pub categories: &'static [&'static str],
    /// Subresources.
    pub subresources: &'static [&'static str],
    /// `(group, resource, version)` of the resource whose storage this one shares.
    pub stored_as: Option<(&'static str, &'static str, &'static str)>,
}

impl BuiltinResource {
    pub(super) fn to_def(&self) -> ResourceDef {
        ResourceDef {
            group: self.group.to_string(),
            kind: self.kind.to_string(),
            resource: self.resource.to_string(),
            singular: self.singular.to_string(),
            namespaced: self.namespaced,
            short_names: self.short_names.iter().map(|s| s.to_string()).collect(),
            categories: self.categories.iter().map(|s| s.to_string()).collect(),
            versions: vec![self.version.to_string()],
            storage_version: self.version.to_string(),
            subresources: self.subresources.iter().map(|s| s.to_string()).collect(),
            crd: None,
            stored_as: self.stored_as.map(|(group, resource, version)| StoredAs {
                group: group.to_string(),
                resource: resource.to_string(),
                version: version.to_string(),
            }),
        }
    }
}

macro_rules! builtin {
    ($group:literal, $version:literal, $resource:literal, $singular:literal, $kind:literal, $namespaced:literal,
     [$($short:literal),*], [$($category:literal),*], [$($sub:literal),*]) => {
        BuiltinResource {
            group: $group,
            version: $version,
            resource: $resource,
            singular: $singular,
            kind: $kind,
            namespaced: $namespaced,
            short_names: &[$($short),*],
            categories: &[$($category),*],
            subresources: &[$($sub),*],
            stored_as: None,
        }
    };
}

/// Every built-in resource.
pub static BUILTIN: &[BuiltinResource] = &[
    builtin!("", "v1", "namespaces", "namespace", "Namespace", false, ["ns"], [], ["status", "finalize"]),
    builtin!("", "v1", "nodes", "node", "Node", false, ["no"], [], ["status"]),
    builtin!(
        "",
        "v1",
        "pods",
        "pod",
        "Pod",
        true,
        ["po"],
        ["all"],
        ["status", "binding", "eviction", "resize", "ephemeralcontainers"]
    ),
    builtin!("", "v1", "configmaps", "configmap", "ConfigMap", true, ["cm"], [], []),
    builtin!("", "v1", "secrets", "secret", "Secret", true, [], [], []),
    builtin!("", "v1", "services", "service", "Service", true, ["svc"], ["all"], ["status"]),
    builtin!("", "v1", "endpoints", "endpoints", "Endpoints", true, ["ep"], [], []),
    builtin!("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, ["sa"], [], []),
    builtin!(
        "",
        "v1",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        "PersistentVolumeClaim",
        true,
        ["pvc"],
        [],
        ["status"]
    ),
    builtin!(
        "",
        "v1",
        "persistentvolumes",
        "persistentvolume",
        "PersistentVolume",
        false,
        ["pv"],
        [],
        ["status"]
    ),
    builtin!("", "v1", "events", "event", "Event", true, ["ev"], [], []),
    builtin!("", "v1", "podtemplates", "podtemplate", "PodTemplate", true, [], [], []),
    builtin!("", "v1", "resourcequotas", "resourcequota", "ResourceQuota", true, ["quota"], [], ["status"]),
    builtin!("", "v1", "limitranges", "limitrange", "LimitRange", true, ["limits"], [], []),
    builtin!(
        "apps",
        "v1",
        "controllerrevisions",
        "controllerrevision",
        "ControllerRevision",
        true,
        [],
        [],
        []
    ),
    builtin!(
        "apps",
        "v1",
        "deployments",
        "deployment",
        "Deployment",
        true,
        ["deploy"],
        ["all"],
        ["status", "scale"]
    ),
    builtin!(
        "apps",
        "v1",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        true,
        ["rs"],
        ["all"],
        ["status", "scale"]
    ),
    builtin!(
        "apps",
        "v1",
        "statefulsets",
        "statefulset",
        "StatefulSet",
        true,
        ["sts"],
        ["all"],
        ["status", "scale"]
    ),
    builtin!("apps", "v1", "daemonsets", "daemonset", "DaemonSet", true, ["ds"], ["all"], ["status"]),
    builtin!("batch", "v1", "jobs", "job", "Job", true, [], ["all"], ["status"]),
    builtin!("batch", "v1", "cronjobs", "cronjob", "CronJob", true, ["cj"], ["all"], ["status"]),
    builtin!("coordination.k8s.io", "v1", "leases", "lease", "Lease", true, [], [], []),
    builtin!(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "horizontalpodautoscaler",
        "HorizontalPodAutoscaler",
        true,
        ["hpa"],
        ["all"],
        ["status"]
    ),
    builtin!("networking.k8s.io", "v1", "ingresses", "ingress", "Ingress", true, ["ing"], [], ["status"]),
    builtin!("networking.k8s.io", "v1", "ingressclasses", "ingressclass", "IngressClass", false, [], [], []),
    builtin!(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        true,
        ["pdb"],
        [],
        ["status"]
    ),
    // kube-apiserver serves both Event APIs from one storage (objects stored as core/v1 Events).
    BuiltinResource {
        stored_as: Some(("", "events", "v1")),
        ..builtin!("events.k8s.io", "v1", "events", "event", "Event", true, ["ev"], [], [])
    },
    builtin!(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "priorityclass",
        "PriorityClass",
        false,
        ["pc"],
        [],
        []
    ),
    builtin!("storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", false, ["sc"], [], []),
    builtin!(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "clusterrole",
        "ClusterRole",
        false,
        [],
        [],
        []
    ),
    builtin!(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "clusterrolebinding",
        "ClusterRoleBinding",
        false,
        [],
        [],
        []
    ),
    builtin!("rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true, [], [], []),
    builtin!(
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        "rolebinding",
        "RoleBinding",
        true,
        [],
        [],
        []
    ),
    builtin!(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "mutatingwebhookconfiguration",
        "MutatingWebhookConfiguration",
        false,
        [],
        ["api-extensions"],
        []
    ),
    builtin!(
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "validatingwebhookconfiguration",
        "ValidatingWebhookConfiguration",
        false,
        [],
        ["api-extensions"],
        []
    ),
    builtin!(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "customresourcedefinition",
        "CustomResourceDefinition",
        false,
        ["crd", "crds"],
        ["api-extensions"],
        ["status"]
    ),
];
