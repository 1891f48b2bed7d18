//! An index of a cache by controlling owner, so a workload reconcile reads the pods it controls
//! (and the orphans of its namespace, which it may adopt) instead of walking every cached pod.
//!
//! Walking the whole pod cache on each reconcile made the CloneSet controller's cost grow with
//! the cluster, not with the CloneSet: at 10,000 pods it dominated the manager's CPU. Upstream
//! lists a workload's pods through an owner-UID indexer for the same reason.
//!
//! The index holds the very `Arc`s of its [`super::cache::Informer`] (no second copy of the
//! objects), which files every object it caches and drops every object it forgets.

use std::{collections::HashMap, sync::Arc};

use kube::{Resource, ResourceExt, runtime::reflector::ObjectRef};
use parking_lot::RwLock;

/// Where an object is filed.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum Group {
    /// Controlled by the object with this UID, in this namespace (owner references never cross
    /// namespaces; a pod that claims otherwise is not the workload's).
    Owner(String, String),
    /// No controlling owner, in this namespace.
    Orphan(String),
}

fn group_of<K: Resource>(object: &K) -> Group {
    let namespace = object.meta().namespace.clone().unwrap_or_default();
    match object.owner_references().iter().find(|r| r.controller == Some(true)) {
        Some(owner) => Group::Owner(namespace, owner.uid.clone()),
        None => Group::Orphan(namespace),
    }
}

struct Entries<K: Resource<DynamicType = ()>> {
    by_group: HashMap<Group, HashMap<ObjectRef<K>, Arc<K>>>,
    group_of: HashMap<ObjectRef<K>, Group>,
}

impl<K: Resource<DynamicType = ()>> Default for Entries<K> {
    fn default() -> Self {
        Self { by_group: HashMap::new(), group_of: HashMap::new() }
    }
}

impl<K: Resource<DynamicType = ()>> Entries<K> {
    fn remove(&mut self, key: &ObjectRef<K>) {
        if let Some(group) = self.group_of.remove(key)
            && let Some(members) = self.by_group.get_mut(&group)
        {
            members.remove(key);
            if members.is_empty() {
                self.by_group.remove(&group);
            }
        }
    }

    fn insert(&mut self, key: ObjectRef<K>, object: Arc<K>) {
        self.remove(&key);
        let group = group_of(object.as_ref());
        self.group_of.insert(key.clone(), group.clone());
        self.by_group.entry(group).or_default().insert(key, object);
    }
}

/// The objects of a cache by controlling owner. Cheap to clone (shared).
pub struct OwnerIndex<K: Resource<DynamicType = ()>> {
    entries: Arc<RwLock<Entries<K>>>,
}

impl<K: Resource<DynamicType = ()>> Clone for OwnerIndex<K> {
    fn clone(&self) -> Self {
        Self { entries: self.entries.clone() }
    }
}

impl<K: Resource<DynamicType = ()>> Default for OwnerIndex<K> {
    fn default() -> Self {
        Self { entries: Arc::default() }
    }
}

impl<K> OwnerIndex<K>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    /// Files (or refiles) the cached `object` under its controlling owner.
    pub fn insert(&self, object: Arc<K>) {
        self.entries.write().insert(super::cache::key_of(object.as_ref()), object);
    }

    /// Drops the object with this key.
    pub fn remove(&self, key: &ObjectRef<K>) {
        self.entries.write().remove(key);
    }

    /// The objects of `namespace` controlled by the owner with UID `owner_uid`, then those no
    /// one controls, in no particular order.
    pub fn owned_or_orphaned(&self, namespace: &str, owner_uid: &str) -> Vec<Arc<K>> {
        let entries = self.entries.read();
        [Group::Owner(namespace.to_string(), owner_uid.to_string()), Group::Orphan(namespace.to_string())]
            .iter()
            .filter_map(|group| entries.by_group.get(group))
            .flat_map(|members| members.values().cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::OwnerReference};

    use super::*;

    fn pod(namespace: &str, name: &str, owner: Option<&str>) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.namespace = Some(namespace.into());
        pod.metadata.name = Some(name.into());
        pod.metadata.owner_references = owner.map(|uid| {
            vec![OwnerReference {
                uid: uid.into(),
                controller: Some(true),
                kind: "CloneSet".into(),
                name: "owner".into(),
                api_version: "apps.kruise.io/v1alpha1".into(),
                ..Default::default()
            }]
        });
        pod
    }

    fn names(index: &OwnerIndex<Pod>, namespace: &str, uid: &str) -> Vec<String> {
        let mut names: Vec<String> =
            index.owned_or_orphaned(namespace, uid).iter().map(|p| p.name_any()).collect();
        names.sort();
        names
    }

    fn indexed(pods: Vec<Pod>) -> OwnerIndex<Pod> {
        let index = OwnerIndex::default();
        for pod in pods {
            index.insert(Arc::new(pod));
        }
        index
    }

    #[test]
    fn a_lookup_returns_the_owned_pods_and_the_orphans_of_the_namespace() {
        let index = indexed(vec![
            pod("a", "mine-1", Some("u1")),
            pod("a", "mine-2", Some("u1")),
            pod("a", "theirs", Some("u2")),
            pod("a", "orphan", None),
            pod("b", "orphan-elsewhere", None),
            // Owner references never cross namespaces: this one is not u1's pod in "a".
            pod("b", "stray", Some("u1")),
        ]);
        let cases = [
            ("a", "u1", vec!["mine-1", "mine-2", "orphan"]),
            ("b", "u1", vec!["orphan-elsewhere", "stray"]),
            ("a", "u2", vec!["orphan", "theirs"]),
            ("b", "u2", vec!["orphan-elsewhere"]),
            ("c", "u3", vec![]),
        ];
        for (namespace, uid, expected) in cases {
            assert_eq!(names(&index, namespace, uid), expected, "{namespace} {uid}");
        }
        assert_eq!(index.entries.read().group_of.len(), 6);
    }

    #[test]
    fn adoption_release_and_deletion_move_or_drop_the_entry() {
        let index = indexed(vec![pod("a", "p", None)]);
        assert_eq!(names(&index, "a", "u1"), ["p"]);

        index.insert(Arc::new(pod("a", "p", Some("u1"))));
        assert_eq!(names(&index, "a", "u1"), ["p"]);
        assert!(names(&index, "a", "u2").is_empty(), "an adopted pod is no longer an orphan");

        index.insert(Arc::new(pod("a", "p", Some("u2"))));
        assert!(names(&index, "a", "u1").is_empty());
        assert_eq!(names(&index, "a", "u2"), ["p"]);

        index.remove(&ObjectRef::new("p").within("a"));
        assert!(names(&index, "a", "u2").is_empty());
        assert!(index.entries.read().group_of.is_empty());
    }

    #[test]
    fn the_index_holds_the_latest_object_it_was_given() {
        let index = indexed(vec![]);
        let mut updated = pod("a", "p", Some("u1"));
        index.insert(Arc::new(updated.clone()));
        updated.metadata.labels = Some([("version".to_string(), "2".to_string())].into());
        let latest = Arc::new(updated);
        index.insert(latest.clone());
        let found = index.owned_or_orphaned("a", "u1");
        assert!(Arc::ptr_eq(&found[0], &latest), "no second copy of the object");
        assert_eq!(found[0].labels().get("version").map(String::as_str), Some("2"));
    }
}
