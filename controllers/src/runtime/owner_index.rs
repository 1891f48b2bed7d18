//! An index of a cache by controlling owner, so a workload reconcile reads the pods it controls
//! (and the orphans of its namespace, which it may adopt) instead of walking every cached pod.
//!
//! Walking the whole pod cache on each reconcile made the CloneSet controller's cost grow with
//! the cluster, not with the CloneSet: at 10,000 pods it dominated the manager's CPU. Upstream
//! lists a workload's pods through an owner-UID indexer for the same reason.
//!
//! The index holds the very `Arc`s of the reflector's [`Store`] (no second copy of the
//! objects). It follows the watch stream after the store applied each event: an object applied
//! is (re)filed under its owner, a deleted one removed, and a completed (re)list rebuilds the
//! index from the store.

use std::{collections::HashMap, sync::Arc};

use kube::{
    Resource, ResourceExt,
    runtime::{
        reflector::{ObjectRef, Store},
        watcher,
    },
};
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

/// The objects of a [`Store`] by controlling owner. Cheap to clone (shared).
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
    /// Follows one watch event that `store` has already applied.
    pub fn apply(&self, event: &watcher::Event<K>, store: &Store<K>) {
        match event {
            watcher::Event::Apply(object) => {
                let key = ObjectRef::from_obj(object);
                let mut entries = self.entries.write();
                match store.get(&key) {
                    Some(cached) => entries.insert(key, cached),
                    None => entries.remove(&key),
                }
            }
            watcher::Event::Delete(object) => self.entries.write().remove(&ObjectRef::from_obj(object)),
            watcher::Event::InitDone => {
                let mut rebuilt = Entries::default();
                for object in store.state() {
                    rebuilt.insert(ObjectRef::from_obj(object.as_ref()), object);
                }
                *self.entries.write() = rebuilt;
            }
            watcher::Event::Init | watcher::Event::InitApply(_) => {}
        }
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
    use kube::runtime::{reflector, watcher::Event};

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

    /// A store, its writer and an index that follows both.
    struct Fixture {
        store: Store<Pod>,
        writer: reflector::store::Writer<Pod>,
        index: OwnerIndex<Pod>,
    }

    impl Fixture {
        fn new() -> Self {
            let (store, writer) = reflector::store::<Pod>();
            Self { store, writer, index: OwnerIndex::default() }
        }

        fn event(&mut self, event: Event<Pod>) {
            self.writer.apply_watcher_event(&event);
            self.index.apply(&event, &self.store);
        }

        fn names(&self, namespace: &str, uid: &str) -> Vec<String> {
            let mut names: Vec<String> =
                self.index.owned_or_orphaned(namespace, uid).iter().map(|p| p.name_any()).collect();
            names.sort();
            names
        }
    }

    fn listed(pods: Vec<Pod>) -> Fixture {
        let mut fixture = Fixture::new();
        fixture.event(Event::Init);
        for pod in pods {
            fixture.event(Event::InitApply(pod));
        }
        fixture.event(Event::InitDone);
        fixture
    }

    #[test]
    fn a_lookup_returns_the_owned_pods_and_the_orphans_of_the_namespace() {
        let fixture = listed(vec![
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
            assert_eq!(fixture.names(namespace, uid), expected, "{namespace} {uid}");
        }
        assert_eq!(fixture.index.entries.read().group_of.len(), 6);
    }

    #[test]
    fn nothing_is_indexed_before_the_first_list_completes() {
        let mut fixture = Fixture::new();
        fixture.event(Event::Init);
        fixture.event(Event::InitApply(pod("a", "p", Some("u1"))));
        assert!(fixture.index.entries.read().group_of.is_empty());
        fixture.event(Event::InitDone);
        assert_eq!(fixture.names("a", "u1"), ["p"]);
    }

    #[test]
    fn adoption_release_and_deletion_move_or_drop_the_entry() {
        let mut fixture = listed(vec![pod("a", "p", None)]);
        assert_eq!(fixture.names("a", "u1"), ["p"]);

        fixture.event(Event::Apply(pod("a", "p", Some("u1"))));
        assert_eq!(fixture.names("a", "u1"), ["p"]);
        assert!(fixture.names("a", "u2").is_empty(), "an adopted pod is no longer an orphan");

        fixture.event(Event::Apply(pod("a", "p", Some("u2"))));
        assert!(fixture.names("a", "u1").is_empty());
        assert_eq!(fixture.names("a", "u2"), ["p"]);

        fixture.event(Event::Delete(pod("a", "p", Some("u2"))));
        assert!(fixture.names("a", "u2").is_empty());
        assert!(fixture.index.entries.read().group_of.is_empty());
    }

    #[test]
    fn the_index_shares_the_stores_latest_object() {
        let mut fixture = listed(vec![]);
        let mut updated = pod("a", "p", Some("u1"));
        fixture.event(Event::Apply(updated.clone()));
        updated.metadata.labels = Some([("version".to_string(), "2".to_string())].into());
        fixture.event(Event::Apply(updated));
        let found = fixture.index.owned_or_orphaned("a", "u1");
        let cached = fixture.store.get(&ObjectRef::from_obj(found[0].as_ref())).unwrap();
        assert!(Arc::ptr_eq(&found[0], &cached), "no second copy of the object");
        assert_eq!(found[0].labels().get("version").map(String::as_str), Some("2"));
    }

    #[test]
    fn a_relist_drops_what_disappeared_meanwhile() {
        let mut fixture = listed(vec![pod("a", "gone", Some("u1")), pod("a", "kept", Some("u1"))]);
        fixture.event(Event::Init);
        fixture.event(Event::InitApply(pod("a", "kept", Some("u1"))));
        assert_eq!(fixture.names("a", "u1"), ["gone", "kept"], "the old view holds until the list completes");
        fixture.event(Event::InitDone);
        assert_eq!(fixture.names("a", "u1"), ["kept"]);
    }
}
