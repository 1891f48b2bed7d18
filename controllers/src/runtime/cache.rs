//! One cache per resource kind for the whole manager (client-go's shared informers).
//!
//! Every controller used to run its own watch and reflector of each kind it read: seven pod
//! caches over the same pods, each copy with every pod's `managedFields`, made a manager over
//! 10,000 pods hold close to a gigabyte. Here a [`Caches`] registry, made once per leadership
//! term, starts at most one watch per kind, the first time a controller asks for the kind's
//! [`Informer`]; every other controller reading that kind gets the same informer.
//!
//! - Objects are trimmed before they are stored ([`trim`]: `managedFields` and kubectl's
//!   last-applied annotation, which no controller reads), as controller-runtime's cache
//!   transforms do.
//! - The informer keeps an [`OwnerIndex`] of its objects (the very `Arc`s it stores), so a
//!   workload reconcile reads only its own pods and the orphans of its namespace.
//! - Each controller [`Informer::subscribe`]s and receives every change with the previous
//!   version of an updated object ([`CacheEvent`]); a late subscriber is first told of every
//!   object already cached, so no controller misses an object because it started later. Each
//!   subscriber has its own unbounded channel: a slow controller never holds up the others or
//!   the watch.
//! - A relist (after a watch expired) keeps the cache readable throughout and reports the
//!   objects that vanished meanwhile as deleted.

use std::{
    any::{Any, TypeId},
    collections::{HashMap, HashSet},
    fmt::Debug,
    sync::Arc,
};

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::{Pod, Volume};
use kube::{
    Api, Client, Resource, ResourceExt,
    runtime::{WatchStreamExt, reflector::ObjectRef, watcher},
};
use parking_lot::{Mutex, RwLock};
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, watch};
use tokio_util::task::AbortOnDropHandle;

use super::owner_index::OwnerIndex;

/// What a kind needs to be cached.
pub trait Cached:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

impl<K> Cached for K where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

/// kubectl's copy of the last applied manifest: as large as the object's spec, read by nobody
/// here.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Objects per page of a (re)list. A page is held whole while it is parsed, untrimmed
/// (`managedFields` included), next to the cache it fills, and the heap keeps that high-water
/// mark. Fresh manager over 10,000 pods (cloneset bench, memory phase): 175.1 MiB with kube's
/// default of 500, about 151 MiB with 100, 148.9 MiB with 50 (ready in 10.6 s; 25 saved one
/// MiB more but took 18.7 s). 50 is 200 requests to list 10,000 pods.
const LIST_PAGE_SIZE: u32 = 50;

/// The name prefix of the projected service-account token volume that the ServiceAccount
/// admission adds to every pod.
const TOKEN_VOLUME_PREFIX: &str = "kube-api-access-";

/// Drops what no controller reads before an object is cached, and stores it compactly.
///
/// - managed fields (often the largest part of a pod) and kubectl's last-applied annotation;
/// - on pods, the service-account token volume and its mounts: a `Volume` holds every volume
///   source inline (3.2 KiB empty), so this one volume is a quarter of a cached pod, and no
///   controller reads it (claims and other volumes stay: StatefulSet checks its claims on them);
/// - the spare capacity that parsing leaves in collections (a vector grows by doubling as
///   items arrive): the object is stored as an exact copy, a quarter smaller again.
///
/// No controller writes a pod back from the cache (every pod write is a patch of the fields it
/// owns), so what is dropped here is never dropped from the API.
pub fn trim<K: Resource + Clone + 'static>(object: &mut K) {
    let meta = object.meta_mut();
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty() {
            meta.annotations = None;
        }
    }
    if let Some(pod) = (object as &mut dyn Any).downcast_mut::<Pod>() {
        drop_token_volume(pod);
    }
    *object = object.clone();
}

/// Removes the projected `kube-api-access-*` volume and every container's mount of it.
fn drop_token_volume(pod: &mut Pod) {
    let Some(spec) = pod.spec.as_mut() else { return };
    let Some(volumes) = spec.volumes.as_mut() else { return };
    let is_token =
        |volume: &Volume| volume.name.starts_with(TOKEN_VOLUME_PREFIX) && volume.projected.is_some();
    let tokens: Vec<String> = volumes.iter().filter(|v| is_token(v)).map(|v| v.name.clone()).collect();
    if tokens.is_empty() {
        return;
    }
    volumes.retain(|volume| !is_token(volume));
    if volumes.is_empty() {
        spec.volumes = None;
    }
    let containers = spec.containers.iter_mut().chain(spec.init_containers.iter_mut().flatten());
    for container in containers {
        if let Some(mounts) = container.volume_mounts.as_mut() {
            mounts.retain(|mount| !tokens.contains(&mount.name));
            if mounts.is_empty() {
                container.volume_mounts = None;
            }
        }
    }
}

/// One change of a cached kind, after the cache applied it.
pub enum CacheEvent<K> {
    /// An object was added or updated; `old` is the version cached before, if any.
    Applied {
        /// The version now cached.
        new: Arc<K>,
        /// The version cached before.
        old: Option<Arc<K>>,
    },
    /// An object was deleted (its last known version).
    Deleted(Arc<K>),
    /// The cache holds a complete list (after the first list, and after every relist).
    Synced,
}

impl<K> Clone for CacheEvent<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Applied { new, old } => Self::Applied { new: new.clone(), old: old.clone() },
            Self::Deleted(object) => Self::Deleted(object.clone()),
            Self::Synced => Self::Synced,
        }
    }
}

impl<K> CacheEvent<K> {
    /// The object the event is about (none for [`CacheEvent::Synced`]).
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Self::Applied { new, .. } => Some(new),
            Self::Deleted(object) => Some(object),
            Self::Synced => None,
        }
    }
}

/// The key an object is cached under: namespace and name only.
pub fn key_of<K: Resource<DynamicType = ()>>(object: &K) -> ObjectRef<K> {
    let reference = ObjectRef::new(&object.name_any());
    match object.namespace() {
        Some(namespace) => reference.within(&namespace),
        None => reference,
    }
}

struct State<K: Resource<DynamicType = ()>> {
    objects: HashMap<ObjectRef<K>, Arc<K>>,
    /// Keys seen by the list in progress (a relist drops the rest when it completes).
    listing: Option<HashSet<ObjectRef<K>>>,
    synced: bool,
    subscribers: Vec<mpsc::UnboundedSender<CacheEvent<K>>>,
}

impl<K: Resource<DynamicType = ()>> State<K> {
    fn notify(&mut self, event: &CacheEvent<K>) {
        self.subscribers.retain(|subscriber| subscriber.send(event.clone()).is_ok());
    }
}

struct Shared<K: Resource<DynamicType = ()>> {
    state: RwLock<State<K>>,
    index: OwnerIndex<K>,
    synced: watch::Sender<bool>,
}

/// The manager's cache of one kind: readable by every controller, with a change feed per
/// subscriber. Cheap to clone (shared).
pub struct Informer<K: Resource<DynamicType = ()>> {
    shared: Arc<Shared<K>>,
}

impl<K: Resource<DynamicType = ()>> Clone for Informer<K> {
    fn clone(&self) -> Self {
        Self { shared: self.shared.clone() }
    }
}

impl<K: Cached> Default for Informer<K> {
    /// An empty informer that nothing feeds yet ([`Informer::apply`] does; for tests, or a
    /// watch of one's own).
    fn default() -> Self {
        let (synced, _) = watch::channel(false);
        Self {
            shared: Arc::new(Shared {
                state: RwLock::new(State {
                    objects: HashMap::new(),
                    listing: None,
                    synced: false,
                    subscribers: Vec::new(),
                }),
                index: OwnerIndex::default(),
                synced,
            }),
        }
    }
}

impl<K: Cached> Informer<K> {
    /// The cached object with this key.
    pub fn get(&self, key: &ObjectRef<K>) -> Option<Arc<K>> {
        self.shared.state.read().objects.get(key).cloned()
    }

    /// The cached object `namespace/name` (`namespace` None for cluster-scoped kinds).
    pub fn get_named(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        let reference = ObjectRef::new(name);
        self.get(&match namespace {
            Some(namespace) => reference.within(namespace),
            None => reference,
        })
    }

    /// Every cached object, in no particular order.
    pub fn state(&self) -> Vec<Arc<K>> {
        self.shared.state.read().objects.values().cloned().collect()
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.shared.state.read().objects.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cache by controlling owner.
    pub fn owner_index(&self) -> &OwnerIndex<K> {
        &self.shared.index
    }

    /// Whether the first complete list is in.
    pub fn is_synced(&self) -> bool {
        *self.shared.synced.borrow()
    }

    /// Resolves once the first complete list is in (at once if it is).
    pub async fn until_synced(&self) {
        let mut synced = self.shared.synced.subscribe();
        let _ = synced.wait_for(|synced| *synced).await;
    }

    /// A feed of every change from now on, preceded by an [`CacheEvent::Applied`] for each
    /// object already cached (and [`CacheEvent::Synced`] when the list is complete), so that a
    /// subscriber sees every object whenever it subscribes.
    pub fn subscribe(&self) -> Subscription<K> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut state = self.shared.state.write();
        for object in state.objects.values() {
            let _ = sender.send(CacheEvent::Applied { new: object.clone(), old: None });
        }
        if state.synced {
            let _ = sender.send(CacheEvent::Synced);
        }
        state.subscribers.push(sender);
        Subscription { receiver }
    }

    /// Applies one watch event (trimmed already) and tells every subscriber what changed.
    pub fn apply(&self, event: watcher::Event<K>) {
        let mut state = self.shared.state.write();
        match event {
            watcher::Event::Init => state.listing = Some(HashSet::new()),
            watcher::Event::InitApply(object) | watcher::Event::Apply(object) => {
                let key = key_of(&object);
                let new = Arc::new(object);
                if let Some(listing) = state.listing.as_mut() {
                    listing.insert(key.clone());
                }
                let old = state.objects.insert(key, new.clone());
                self.shared.index.insert(new.clone());
                state.notify(&CacheEvent::Applied { new, old });
            }
            watcher::Event::Delete(object) => {
                let key = key_of(&object);
                let removed = state.objects.remove(&key).unwrap_or_else(|| Arc::new(object));
                self.shared.index.remove(&key);
                state.notify(&CacheEvent::Deleted(removed));
            }
            watcher::Event::InitDone => {
                let seen = state.listing.take().unwrap_or_default();
                let gone: Vec<_> = state.objects.keys().filter(|key| !seen.contains(*key)).cloned().collect();
                for key in gone {
                    if let Some(removed) = state.objects.remove(&key) {
                        self.shared.index.remove(&key);
                        state.notify(&CacheEvent::Deleted(removed));
                    }
                }
                state.synced = true;
                state.notify(&CacheEvent::Synced);
                self.shared.synced.send_replace(true);
            }
        }
    }

    /// Runs the watch that feeds this informer until the future is dropped.
    async fn feed(self, api: Api<K>) {
        let config = watcher::Config::default().page_size(LIST_PAGE_SIZE);
        let mut stream = watcher(api, config).default_backoff().modify(|object| trim(object)).boxed();
        while let Some(event) = stream.next().await {
            match event {
                Ok(event) => self.apply(event),
                Err(error) => {
                    tracing::debug!(kind = %K::kind(&()), %error, "watch error (retrying with back-off)")
                }
            }
        }
    }
}

/// One subscriber's feed of changes.
pub struct Subscription<K> {
    receiver: mpsc::UnboundedReceiver<CacheEvent<K>>,
}

impl<K: Send + Sync + 'static> Subscription<K> {
    /// The next change; None once the informer is gone.
    pub async fn next(&mut self) -> Option<CacheEvent<K>> {
        self.receiver.recv().await
    }

    /// Every change as a stream.
    pub fn into_stream(self) -> impl Stream<Item = CacheEvent<K>> + Send + use<K> {
        futures::stream::unfold(self.receiver, |mut receiver| async move {
            receiver.recv().await.map(|event| (event, receiver))
        })
    }

    /// The objects added, updated or deleted, for `Controller::watches_shared_stream`.
    pub fn touched(self) -> impl Stream<Item = Arc<K>> + Send + use<K> {
        self.into_stream().filter_map(|event| futures::future::ready(event.object().cloned()))
    }

    /// Runs `handle` on every change until the informer is gone.
    pub async fn for_each(mut self, mut handle: impl FnMut(CacheEvent<K>)) {
        while let Some(event) = self.next().await {
            handle(event);
        }
    }
}

/// The manager's informers, at most one per kind, each watching from the first time a
/// controller asks for it until the registry is dropped. Cheap to clone (shared).
#[derive(Clone)]
pub struct Caches {
    inner: Arc<CachesInner>,
}

struct CachesInner {
    client: Client,
    informers: Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>,
    watches: Mutex<Vec<AbortOnDropHandle<()>>>,
}

impl Caches {
    /// A registry whose watches go through `client`.
    pub fn new(client: Client) -> Self {
        Self {
            inner: Arc::new(CachesInner {
                client,
                informers: Mutex::new(HashMap::new()),
                watches: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The client the watches use.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The informer of kind `K` over every namespace, started on first use.
    pub fn informer<K: Cached>(&self) -> Informer<K> {
        let mut informers = self.inner.informers.lock();
        if let Some(informer) =
            informers.get(&TypeId::of::<K>()).and_then(|any| any.downcast_ref::<Informer<K>>())
        {
            return informer.clone();
        }
        let informer = Informer::<K>::default();
        informers.insert(TypeId::of::<K>(), Box::new(informer.clone()));
        let api = Api::<K>::all(self.inner.client.clone());
        let watch = tokio::spawn(informer.clone().feed(api));
        self.inner.watches.lock().push(AbortOnDropHandle::new(watch));
        tracing::debug!(kind = %K::kind(&()), "started a shared cache");
        informer
    }

    /// How many kinds are watched.
    pub fn kinds(&self) -> usize {
        self.inner.informers.lock().len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::{
        api::core::v1::Pod,
        apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, OwnerReference},
    };
    use kube::api::ObjectMeta;

    use super::*;

    fn pod(name: &str, version: &str, owner: Option<&str>) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                resource_version: Some(version.into()),
                owner_references: owner.map(|uid| {
                    vec![OwnerReference {
                        uid: uid.into(),
                        controller: Some(true),
                        kind: "CloneSet".into(),
                        name: "web".into(),
                        api_version: "apps.kruise.io/v1alpha1".into(),
                        ..Default::default()
                    }]
                }),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn drain(subscription: &mut Subscription<Pod>) -> Vec<String> {
        let mut seen = Vec::new();
        while let Ok(event) = subscription.receiver.try_recv() {
            seen.push(match event {
                CacheEvent::Applied { new, old } => format!(
                    "applied {}@{} (was {})",
                    new.name_any(),
                    new.resource_version().unwrap_or_default(),
                    old.map(|o| o.resource_version().unwrap_or_default()).unwrap_or_else(|| "-".into())
                ),
                CacheEvent::Deleted(pod) => format!("deleted {}", pod.name_any()),
                CacheEvent::Synced => "synced".into(),
            });
        }
        seen
    }

    #[test]
    fn trimming_drops_managed_fields_and_the_last_applied_copy() {
        let mut object = pod("a", "1", None);
        object.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
        object.metadata.annotations =
            Some([(LAST_APPLIED.to_string(), "{}".to_string()), ("keep".into(), "me".into())].into());
        trim(&mut object);
        assert_eq!(object.metadata.managed_fields, None);
        assert_eq!(object.metadata.annotations, Some([("keep".to_string(), "me".to_string())].into()));
    }

    #[test]
    fn trimming_a_pod_drops_the_token_volume_and_spare_capacity_only() {
        let mut object: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-0", "namespace": "ns"},
            "spec": {
                "containers": [{"name": "main", "image": "nginx", "volumeMounts": [
                    {"name": "data", "mountPath": "/data"},
                    {"name": "kube-api-access-x1y2z", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
                "initContainers": [{"name": "init", "image": "busybox", "volumeMounts": [
                    {"name": "kube-api-access-x1y2z", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
                "volumes": [
                    {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
                    {"name": "kube-api-access-x1y2z", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
                    {"name": "kube-api-access-mine", "emptyDir": {}}]
            },
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]}
        }))
        .unwrap();
        object.status.as_mut().unwrap().conditions.as_mut().unwrap().reserve(30);
        trim(&mut object);
        let spec = object.spec.as_ref().unwrap();
        let names: Vec<&str> = spec.volumes.iter().flatten().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            ["data", "kube-api-access-mine"],
            "claims and look-alikes that are not the token stay"
        );
        let mounts: Vec<&str> =
            spec.containers[0].volume_mounts.iter().flatten().map(|m| m.name.as_str()).collect();
        assert_eq!(mounts, ["data"]);
        assert_eq!(spec.init_containers.as_ref().unwrap()[0].volume_mounts, None);
        let conditions = object.status.as_ref().unwrap().conditions.as_ref().unwrap();
        assert_eq!((conditions.len(), conditions.capacity()), (2, 2), "stored without spare capacity");
    }

    #[test]
    fn subscribers_see_changes_with_the_previous_version() {
        let informer = Informer::<Pod>::default();
        let mut early = informer.subscribe();
        informer.apply(watcher::Event::Init);
        informer.apply(watcher::Event::InitApply(pod("a", "1", Some("u1"))));
        informer.apply(watcher::Event::InitDone);
        informer.apply(watcher::Event::Apply(pod("a", "2", Some("u1"))));
        informer.apply(watcher::Event::Delete(pod("a", "2", Some("u1"))));
        assert_eq!(drain(&mut early), ["applied a@1 (was -)", "synced", "applied a@2 (was 1)", "deleted a"]);
        assert!(informer.is_empty());
        assert!(informer.owner_index().owned_or_orphaned("ns", "u1").is_empty());
    }

    #[test]
    fn a_late_subscriber_is_told_of_every_cached_object_first() {
        let informer = Informer::<Pod>::default();
        informer.apply(watcher::Event::Init);
        informer.apply(watcher::Event::InitApply(pod("a", "1", None)));
        let mut during_list = informer.subscribe();
        informer.apply(watcher::Event::InitApply(pod("b", "1", None)));
        informer.apply(watcher::Event::InitDone);
        let mut after_list = informer.subscribe();
        assert_eq!(drain(&mut during_list), ["applied a@1 (was -)", "applied b@1 (was -)", "synced"]);
        let mut late = drain(&mut after_list);
        late.sort();
        assert_eq!(late, ["applied a@1 (was -)", "applied b@1 (was -)", "synced"]);
        assert!(informer.is_synced());
    }

    #[test]
    fn a_relist_keeps_the_cache_readable_and_reports_what_vanished() {
        let informer = Informer::<Pod>::default();
        informer.apply(watcher::Event::Init);
        informer.apply(watcher::Event::InitApply(pod("a", "1", Some("u1"))));
        informer.apply(watcher::Event::InitApply(pod("b", "1", Some("u1"))));
        informer.apply(watcher::Event::InitDone);
        let mut subscription = informer.subscribe();
        drain(&mut subscription);
        informer.apply(watcher::Event::Init);
        informer.apply(watcher::Event::InitApply(pod("a", "3", Some("u1"))));
        // Mid-relist, b is still readable.
        assert!(informer.get_named(Some("ns"), "b").is_some());
        informer.apply(watcher::Event::InitDone);
        assert_eq!(drain(&mut subscription), ["applied a@3 (was 1)", "deleted b", "synced"]);
        let owned: Vec<_> =
            informer.owner_index().owned_or_orphaned("ns", "u1").iter().map(|p| p.name_any()).collect();
        assert_eq!(owned, ["a"]);
    }

    #[tokio::test]
    async fn one_informer_per_kind() {
        let client = {
            let (service, _handle) = tower_test::mock::pair::<
                http::Request<kube::client::Body>,
                http::Response<kube::client::Body>,
            >();
            Client::new(service, "default")
        };
        let caches = Caches::new(client);
        let first = caches.informer::<Pod>();
        let second = caches.informer::<Pod>();
        assert!(Arc::ptr_eq(&first.shared, &second.shared));
        assert_eq!(caches.kinds(), 1);
    }
}
