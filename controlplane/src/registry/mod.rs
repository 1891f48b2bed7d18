//! The resources the server serves: the built-in kinds of the table below, plus one entry per
//! established CustomResourceDefinition. Handlers look resources up here by (group, version,
//! resource) from the URL or by kind from a body; discovery and OpenAPI are rendered from it.

mod builtin;

use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion, JSONSchemaProps,
};
use parking_lot::RwLock;

pub use builtin::BUILTIN;

/// A served resource.
#[derive(Clone, Debug)]
pub struct ResourceDef {
    /// API group ("" for core).
    pub group: String,
    /// Kind of its objects.
    pub kind: String,
    /// Plural name (the URL segment).
    pub resource: String,
    /// Singular name.
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// kubectl short names.
    pub short_names: Vec<String>,
    /// Categories (`kubectl get all`).
    pub categories: Vec<String>,
    /// Served versions, preferred first.
    pub versions: Vec<String>,
    /// Version objects are stored at.
    pub storage_version: String,
    /// Subresources (`status`, `scale`, `binding`, `eviction`, `resize`, `finalize`).
    pub subresources: Vec<String>,
    /// The CRD behind a custom resource.
    pub crd: Option<Arc<CustomResourceDefinition>>,
    /// Another resource whose storage this one shares (`events.k8s.io/events` is stored as core
    /// `events`): keys and collections are derived from it, objects are kept in its shape and
    /// converted on the way in and out. None for a resource with storage of its own.
    pub stored_as: Option<StoredAs>,
}

/// Where a resource that shares another's storage keeps its objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAs {
    /// API group of the owning resource ("" for core).
    pub group: String,
    /// Plural name of the owning resource.
    pub resource: String,
    /// Version (of the owning group) objects are stored at.
    pub version: String,
}

impl StoredAs {
    /// The `apiVersion` of stored objects.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }
}

impl ResourceDef {
    /// `<Kind>List`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// `group/version` or `version` for the core group.
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() { version.to_string() } else { format!("{}/{version}", self.group) }
    }

    /// Whether the `status` subresource is served (then the main resource ignores status changes
    /// and status writes ignore everything else).
    pub fn has_status(&self) -> bool {
        self.subresources.iter().any(|s| s == "status")
    }

    /// Whether `name` is a served subresource.
    pub fn has_subresource(&self, name: &str) -> bool {
        self.subresources.iter().any(|s| s == name)
    }

    /// Whether objects are served at `version`.
    pub fn serves(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v == version)
    }

    /// The CRD version entry for `version` of a custom resource.
    pub fn crd_version(&self, version: &str) -> Option<&CustomResourceDefinitionVersion> {
        self.crd.as_ref()?.spec.versions.iter().find(|v| v.name == version)
    }

    /// The structural schema of a custom resource at `version`.
    pub fn schema(&self, version: &str) -> Option<&JSONSchemaProps> {
        self.crd_version(version)?.schema.as_ref()?.open_api_v3_schema.as_ref()
    }

    /// Whether this is a custom resource.
    pub fn is_custom(&self) -> bool {
        self.crd.is_some()
    }

    /// The group objects are stored under (the owner's, for a resource sharing storage).
    pub fn storage_group(&self) -> &str {
        self.stored_as.as_ref().map_or(self.group.as_str(), |stored| stored.group.as_str())
    }

    /// The resource objects are stored under (the owner's, for a resource sharing storage).
    pub fn storage_resource(&self) -> &str {
        self.stored_as.as_ref().map_or(self.resource.as_str(), |stored| stored.resource.as_str())
    }

    /// The `apiVersion` of objects as stored.
    pub fn storage_api_version(&self) -> String {
        match &self.stored_as {
            Some(stored) => stored.api_version(),
            None => self.api_version(&self.storage_version),
        }
    }

    /// Whether this resource is another view of a resource stored elsewhere (then the owning
    /// resource is the one to walk when visiting every stored object).
    pub fn shares_storage(&self) -> bool {
        self.stored_as.is_some()
    }
}

/// All served resources.
#[derive(Default)]
pub struct Registry {
    resources: RwLock<Vec<Arc<ResourceDef>>>,
}

impl Registry {
    /// A registry of the built-in resources only.
    pub fn with_builtins() -> Self {
        let resources = BUILTIN.iter().map(|entry| Arc::new(entry.to_def())).collect();
        Self { resources: RwLock::new(resources) }
    }

    /// The resource served at `group/version/resource`.
    pub fn find(&self, group: &str, version: &str, resource: &str) -> Option<Arc<ResourceDef>> {
        self.resources
            .read()
            .iter()
            .find(|def| def.group == group && def.resource == resource && def.serves(version))
            .cloned()
    }

    /// The resource of a kind in a group (any version).
    pub fn find_kind(&self, group: &str, kind: &str) -> Option<Arc<ResourceDef>> {
        self.resources.read().iter().find(|def| def.group == group && def.kind == kind).cloned()
    }

    /// The resource of a group regardless of version.
    pub fn find_resource(&self, group: &str, resource: &str) -> Option<Arc<ResourceDef>> {
        self.resources.read().iter().find(|def| def.group == group && def.resource == resource).cloned()
    }

    /// Every served resource.
    pub fn all(&self) -> Vec<Arc<ResourceDef>> {
        self.resources.read().clone()
    }

    /// Replaces the custom resources with those of the given established CRDs.
    pub fn set_custom_resources(&self, crds: &[CustomResourceDefinition]) {
        let mut resources: Vec<Arc<ResourceDef>> =
            BUILTIN.iter().map(|entry| Arc::new(entry.to_def())).collect();
        for crd in crds {
            if let Some(def) = custom_resource_def(crd) {
                resources.push(Arc::new(def));
            }
        }
        *self.resources.write() = resources;
    }
}

/// The resource a CRD defines, or None when it serves no version.
pub fn custom_resource_def(crd: &CustomResourceDefinition) -> Option<ResourceDef> {
    let spec = &crd.spec;
    let mut served: Vec<&CustomResourceDefinitionVersion> =
        spec.versions.iter().filter(|v| v.served).collect();
    if served.is_empty() {
        return None;
    }
    served.sort_by_key(|v| std::cmp::Reverse(version_priority(&v.name)));
    let storage = spec.versions.iter().find(|v| v.storage).map(|v| v.name.clone())?;
    let mut subresources = Vec::new();
    if spec.versions.iter().any(|v| v.subresources.as_ref().is_some_and(|s| s.status.is_some())) {
        subresources.push("status".to_string());
    }
    if spec.versions.iter().any(|v| v.subresources.as_ref().is_some_and(|s| s.scale.is_some())) {
        subresources.push("scale".to_string());
    }
    Some(ResourceDef {
        group: spec.group.clone(),
        kind: spec.names.kind.clone(),
        resource: spec.names.plural.clone(),
        singular: spec.names.singular.clone().unwrap_or_else(|| spec.names.kind.to_lowercase()),
        namespaced: spec.scope == "Namespaced",
        short_names: spec.names.short_names.clone().unwrap_or_default(),
        categories: spec.names.categories.clone().unwrap_or_default(),
        versions: served.iter().map(|v| v.name.clone()).collect(),
        storage_version: storage,
        subresources,
        crd: Some(Arc::new(crd.clone())),
        stored_as: None,
    })
}

/// Kubernetes version ordering: GA > beta > alpha, higher numbers first, non-conforming names last
/// (what decides the preferred version in discovery).
pub fn version_priority(version: &str) -> (u8, u32, u32, String) {
    let Some(rest) = version.strip_prefix('v') else { return (0, 0, 0, version.to_string()) };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let Ok(major) = digits.parse::<u32>() else { return (0, 0, 0, version.to_string()) };
    let tail = &rest[digits.len()..];
    let (stability, minor) = if tail.is_empty() {
        (3, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n.parse().unwrap_or(0))
    } else {
        return (0, 0, 0, version.to_string());
    };
    (stability, major, minor, String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_as_kubernetes_prefers_them() {
        let mut versions = vec!["v1alpha1", "v1beta1", "v1", "v2beta1", "v1beta2", "foo"];
        versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        assert_eq!(versions, ["v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"]);
    }

    #[test]
    fn builtins_are_found_by_resource_and_kind() {
        let registry = Registry::with_builtins();
        let pods = registry.find("", "v1", "pods").unwrap();
        assert!(pods.namespaced && pods.has_subresource("binding"));
        assert_eq!(registry.find_kind("apps", "Deployment").unwrap().resource, "deployments");
        assert!(registry.find("apps", "v1beta1", "deployments").is_none());
    }

    #[test]
    fn events_k8s_io_shares_the_core_event_storage() {
        let registry = Registry::with_builtins();
        let core = registry.find("", "v1", "events").unwrap();
        let events = registry.find("events.k8s.io", "v1", "events").unwrap();
        assert!(!core.shares_storage() && events.shares_storage());
        assert_eq!((core.storage_group(), core.storage_resource()), ("", "events"));
        assert_eq!((events.storage_group(), events.storage_resource()), ("", "events"));
        assert_eq!(events.storage_api_version(), "v1");
        assert_eq!(registry.find("apps", "v1", "deployments").unwrap().storage_api_version(), "apps/v1");
    }
}
