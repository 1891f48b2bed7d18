//! The object store behind the embedded API server.
//!
//! Objects are kept as JSON values, grouped by (group, resource, namespace, name). Every write
//! anywhere bumps one global, monotonic resourceVersion (RV), exactly like etcd's revision
//! behind kube-apiserver, and stamps it into `metadata.resourceVersion` of the stored copy.
//! Writes can be made conditional on the RV the caller last saw (optimistic concurrency).
//!
//! Each write also becomes a [`StoreEvent`] that is appended to a bounded history (so watches
//! can resume from an RV, or get `Gone` when it is too old, as with kube-apiserver's watch
//! cache) and pushed to the matching live watches. A watch has a bounded queue; a watcher
//! that falls behind is dropped instead of slowing writers down, and its client re-lists.
//!
//! With a data directory ([`Store::open`]), every write is appended to a write-ahead log and
//! fsync'd before it becomes visible; the log is folded into a snapshot when it grows, and
//! reopening the directory restores every object and continues the RV sequence.
//!
//! Locking: one mutex serialises writers (and covers the disk append), while the in-memory
//! state sits behind a read-write lock that writers take only briefly to publish a change, so
//! readers never wait for a disk flush. No lock is held across an `.await`.

mod persist;
mod watch;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use persist::{Op, Persist};
pub use watch::Watch;

/// Identifies one stored object. `group` is "" for the core group; `resource` is the plural name;
/// `namespace` is None for cluster-scoped resources.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// API group, "" for the core group.
    pub group: String,
    /// Plural resource name, e.g. "deployments".
    pub resource: String,
    /// Namespace, None for cluster-scoped objects (`Some("")` is treated the same as None).
    pub namespace: Option<String>,
    /// `metadata.name` of the object.
    pub name: String,
}

impl ObjectKey {
    /// The collection this object belongs to (restricted to its own namespace).
    pub fn collection(&self) -> CollectionKey {
        CollectionKey {
            group: self.group.clone(),
            resource: self.resource.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

/// Which collection a list or watch reads (all namespaces when namespace is None).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectionKey {
    /// API group, "" for the core group.
    pub group: String,
    /// Plural resource name.
    pub resource: String,
    /// Restricts the collection to one namespace; None means every namespace (and is the only
    /// meaningful value for cluster-scoped resources).
    pub namespace: Option<String>,
}

impl CollectionKey {
    /// Whether `key` names an object of this collection.
    pub fn contains(&self, key: &ObjectKey) -> bool {
        self.group == key.group
            && self.resource == key.resource
            && match ns_of(&self.namespace) {
                "" => true,
                ns => ns == ns_of(&key.namespace),
            }
    }
}

/// The kind of change an event reports, as in a Kubernetes watch stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// The object was created.
    Added,
    /// The object was replaced.
    Modified,
    /// The object was removed.
    Deleted,
}

/// One change. `object` is the object after the change (for Deleted: the last state, with the deletion's RV);
/// `previous` is the state before (None for Added) so that a watcher with a label/field selector can turn a
/// MODIFIED that starts/stops matching into ADDED/DELETED, as kube-apiserver does.
#[derive(Clone, Debug)]
pub struct StoreEvent {
    /// What happened.
    pub event_type: EventType,
    /// Which object changed.
    pub key: ObjectKey,
    /// The object after the change; for Deleted, its last state stamped with the deletion's RV.
    pub object: Arc<Value>,
    /// The object before the change; None for Added (and for synthetic initial ADDED events).
    pub previous: Option<Arc<Value>>,
    /// The RV of the change. For the synthetic ADDED events of [`WatchStart::CurrentState`] it
    /// is the RV of the object's last write.
    pub resource_version: u64,
}

/// Where a watch starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchStart {
    /// Only changes after the current RV.
    Now,
    /// Changes with RV strictly greater than this one, replayed from history; Err(Gone) when older than the
    /// oldest retained event (the client must re-list). RV equal to current is fine (nothing replayed).
    /// An RV above the current one is accepted: the watch then reports only changes beyond it.
    After(u64),
    /// Synthetic Added events for every object currently in the collection, in the RV order of
    /// their last writes (so a client interrupted part-way can resume with `After` from the last
    /// RV it saw without missing anything), then live changes; `Watch::initial_rv` tells the RV
    /// the synthetic state corresponds to.
    CurrentState,
}

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `create` found an object under the same key.
    #[error("already exists")]
    AlreadyExists,
    /// The object to update or delete does not exist.
    #[error("not found")]
    NotFound,
    /// Optimistic concurrency failure: the caller's resourceVersion is not the current one.
    #[error("conflict: the object has been modified")]
    Conflict,
    /// Too old a resourceVersion for a watch. `oldest` is the lowest RV a watch can still start
    /// after (the same number kube-apiserver puts in parentheses in its message).
    #[error("too old resource version: {requested} ({oldest})")]
    Gone {
        /// The RV the client asked to resume from.
        requested: u64,
        /// The lowest RV that can still be resumed from.
        oldest: u64,
    },
    /// Reading or writing the data directory failed; the write did not happen.
    #[error("storage I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The data directory holds something the store cannot read back, or a caller asked to
    /// store a value that is not a JSON object with object metadata.
    #[error("corrupt storage: {0}")]
    Corrupt(String),
}

/// What a [`Store::mutate`] callback decided.
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Leave the object as it is (no write, no event, no new RV).
    Keep,
    /// Store this value (creating the object if it was absent).
    Put(Value),
    /// Remove the object (fails with NotFound if it was absent).
    Delete,
}

/// What [`Store::mutate`] did.
#[derive(Clone, Debug)]
pub enum MutationOutcome {
    /// Nothing was written; carries the current object, if any.
    Unchanged(Option<Arc<Value>>),
    /// The object was created or replaced; carries the stored copy with its new RV.
    Written(Arc<Value>),
    /// The object was removed; carries its last state stamped with the deletion's RV.
    Deleted(Arc<Value>),
}

/// Failure of [`Store::mutate`]: either the store refused the write or the callback rejected it.
#[derive(Debug, thiserror::Error)]
pub enum MutateError<E> {
    /// The store failed (not found, I/O, ...).
    #[error(transparent)]
    Store(StoreError),
    /// The callback returned an error; nothing was written.
    #[error("{0}")]
    Rejected(E),
}

/// Tuning knobs of a store; [`Store::in_memory`] and [`Store::open`] use the defaults except
/// for `history`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreOptions {
    /// How many events are kept for watch resumption.
    pub history: usize,
    /// Fold the WAL into a new snapshot once it holds more than this many records (or more
    /// records than there are live objects, whichever is larger).
    pub compact_after: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions { history: 100_000, compact_after: 10_000 }
    }
}

/// The object store. Cheap to clone: all clones share the same state.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    /// Serialises writers; holds the WAL when the store is durable.
    writer: Mutex<Option<Persist>>,
    state: RwLock<State>,
}

/// The latest state of one object and the RV of its last write.
struct Entry {
    rv: u64,
    object: Arc<Value>,
}

/// Objects of one resource: namespace ("" for cluster-scoped) → name → entry. Ordered maps
/// give lists their (namespace, name) order for free.
type Bucket = BTreeMap<String, BTreeMap<String, Entry>>;

/// One registered live watch.
struct Watcher {
    /// Only this namespace ("" = every namespace).
    namespace: String,
    /// Only this name.
    name: Option<String>,
    /// Only events above this RV.
    min_rv: u64,
    tx: mpsc::Sender<StoreEvent>,
}

impl Watcher {
    fn wants(&self, event: &StoreEvent) -> bool {
        event.resource_version > self.min_rv && key_matches(&self.namespace, self.name.as_deref(), &event.key)
    }
}

struct State {
    rv: u64,
    /// Every event with an RV above this one is in `history`.
    floor: u64,
    count: usize,
    objects: HashMap<String, HashMap<String, Bucket>>,
    history: VecDeque<StoreEvent>,
    history_cap: usize,
    watchers: HashMap<String, HashMap<String, Vec<Watcher>>>,
}

fn ns_of(namespace: &Option<String>) -> &str {
    namespace.as_deref().unwrap_or("")
}

fn key_matches(namespace: &str, name: Option<&str>, key: &ObjectKey) -> bool {
    (namespace.is_empty() || namespace == ns_of(&key.namespace)) && name.is_none_or(|n| n == key.name)
}

/// Reads `metadata.resourceVersion` of an object as a number, as the store writes it.
pub fn resource_version_of(object: &Value) -> Option<u64> {
    object.get("metadata")?.get("resourceVersion")?.as_str()?.parse().ok()
}

/// Writes `rv` into `metadata.resourceVersion` (creating `metadata` if absent). Refuses values
/// that are not JSON objects or whose metadata is not an object, since such values cannot be
/// Kubernetes objects.
fn stamp_rv(object: &mut Value, rv: u64) -> Result<(), StoreError> {
    let Value::Object(map) = object else {
        return Err(StoreError::Corrupt("refusing to store a value that is not a JSON object".into()));
    };
    let metadata = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if metadata.is_null() {
        *metadata = Value::Object(Map::new());
    }
    let Value::Object(metadata) = metadata else {
        return Err(StoreError::Corrupt(
            "refusing to store an object whose metadata is not an object".into(),
        ));
    };
    metadata.insert("resourceVersion".into(), Value::String(rv.to_string()));
    Ok(())
}

impl State {
    fn new(history_cap: usize) -> State {
        State {
            rv: 0,
            floor: 0,
            count: 0,
            objects: HashMap::new(),
            history: VecDeque::new(),
            history_cap,
            watchers: HashMap::new(),
        }
    }

    fn bucket(&self, group: &str, resource: &str) -> Option<&Bucket> {
        self.objects.get(group)?.get(resource)
    }

    fn entry(&self, key: &ObjectKey) -> Option<&Entry> {
        self.bucket(&key.group, &key.resource)?.get(ns_of(&key.namespace))?.get(&key.name)
    }

    fn insert(&mut self, key: &ObjectKey, entry: Entry) -> Option<Entry> {
        let names = self
            .objects
            .entry(key.group.clone())
            .or_default()
            .entry(key.resource.clone())
            .or_default()
            .entry(ns_of(&key.namespace).to_string())
            .or_default();
        let previous = names.insert(key.name.clone(), entry);
        if previous.is_none() {
            self.count += 1;
        }
        previous
    }

    /// Removes an object, pruning maps that become empty so that
    /// `collections_in_namespace` only reports collections that really have objects.
    fn remove(&mut self, key: &ObjectKey) -> Option<Entry> {
        let resources = self.objects.get_mut(&key.group)?;
        let bucket = resources.get_mut(&key.resource)?;
        let ns = ns_of(&key.namespace);
        let names = bucket.get_mut(ns)?;
        let removed = names.remove(&key.name)?;
        self.count -= 1;
        if names.is_empty() {
            bucket.remove(ns);
            if bucket.is_empty() {
                resources.remove(&key.resource);
                if resources.is_empty() {
                    self.objects.remove(&key.group);
                }
            }
        }
        Some(removed)
    }

    fn apply_put(&mut self, key: &ObjectKey, rv: u64, object: Arc<Value>) {
        let previous = self.insert(key, Entry { rv, object: object.clone() });
        self.rv = rv;
        self.record(StoreEvent {
            event_type: if previous.is_some() { EventType::Modified } else { EventType::Added },
            key: key.clone(),
            object,
            previous: previous.map(|e| e.object),
            resource_version: rv,
        });
    }

    fn apply_delete(&mut self, key: &ObjectKey, rv: u64, deleted: Arc<Value>) {
        let previous = self.remove(key);
        self.rv = rv;
        self.record(StoreEvent {
            event_type: EventType::Deleted,
            key: key.clone(),
            object: deleted,
            previous: previous.map(|e| e.object),
            resource_version: rv,
        });
    }

    /// Hands an event to the matching watchers and appends it to the history. A watcher whose
    /// queue is full (or whose receiver is gone) is unregistered; dropping its sender ends its
    /// stream once the already queued events are read.
    fn record(&mut self, event: StoreEvent) {
        if let Some(watchers) =
            self.watchers.get_mut(&event.key.group).and_then(|m| m.get_mut(&event.key.resource))
        {
            watchers.retain(|w| !w.wants(&event) || w.tx.try_send(event.clone()).is_ok());
        }
        self.history.push_back(event);
        while self.history.len() > self.history_cap {
            match self.history.pop_front() {
                Some(evicted) => self.floor = evicted.resource_version,
                None => break,
            }
        }
    }

    /// Every object with the RV of its last write, for a snapshot.
    fn all_entries(&self) -> Vec<(ObjectKey, u64, Arc<Value>)> {
        let mut out = Vec::with_capacity(self.count);
        for (group, resources) in &self.objects {
            for (resource, bucket) in resources {
                for (ns, names) in bucket {
                    for (name, entry) in names {
                        let key = ObjectKey {
                            group: group.clone(),
                            resource: resource.clone(),
                            namespace: (!ns.is_empty()).then(|| ns.clone()),
                            name: name.clone(),
                        };
                        out.push((key, entry.rv, entry.object.clone()));
                    }
                }
            }
        }
        out
    }

    /// Rebuilds the state from what a data directory holds; WAL records become history.
    fn recover(recovered: persist::Recovered, history_cap: usize) -> Result<State, StoreError> {
        let mut state = State::new(history_cap);
        for (key, rv, object) in recovered.snapshot.objects {
            if state.insert(&key, Entry { rv, object: Arc::new(object) }).is_some() {
                return Err(StoreError::Corrupt(format!("snapshot holds {key:?} twice")));
            }
        }
        state.rv = recovered.snapshot.rv;
        state.floor = recovered.snapshot.rv;
        for record in recovered.wal {
            let key = record.key();
            match (record.op, record.o) {
                (Op::Put, Some(mut object)) => {
                    stamp_rv(&mut object, record.rv)?;
                    state.apply_put(&key, record.rv, Arc::new(object));
                }
                (Op::Del, _) => {
                    let Some(current) = state.entry(&key) else {
                        return Err(StoreError::Corrupt(format!(
                            "WAL deletes {key:?} at resourceVersion {} but it does not exist",
                            record.rv
                        )));
                    };
                    let mut deleted = Value::clone(&current.object);
                    stamp_rv(&mut deleted, record.rv)?;
                    state.apply_delete(&key, record.rv, Arc::new(deleted));
                }
                (Op::Put, None) => {
                    return Err(StoreError::Corrupt(format!("WAL put of {key:?} has no object")));
                }
            }
        }
        Ok(state)
    }
}

impl Store {
    /// In memory; `history` = how many events are kept for watch resumption (e.g. 100_000).
    pub fn in_memory(history: usize) -> Store {
        Store::from_parts(None, State::new(history))
    }

    /// Durable: every write is on disk (fsync'd) before the call returns; reopening the same directory restores
    /// all objects and continues RVs from the last one. Torn trailing records after a crash are ignored.
    /// The directory is created if needed and locked while the store (any clone of it) lives.
    pub fn open(dir: &Path, history: usize) -> Result<Store, StoreError> {
        Store::open_with(dir, StoreOptions { history, ..StoreOptions::default() })
    }

    /// Like [`Store::open`], with every tuning knob explicit (tests use a small `compact_after`).
    /// The writes found in the WAL are replayed into the watch history, so watches can resume
    /// from any RV since the last snapshot.
    pub fn open_with(dir: &Path, options: StoreOptions) -> Result<Store, StoreError> {
        let (persist, recovered) = Persist::open(dir, options.compact_after)?;
        let state = State::recover(recovered, options.history)?;
        Ok(Store::from_parts(Some(persist), state))
    }

    fn from_parts(persist: Option<Persist>, state: State) -> Store {
        Store { inner: Arc::new(Inner { writer: Mutex::new(persist), state: RwLock::new(state) }) }
    }

    /// The RV of the latest write (0 for a store that was never written).
    pub fn current_rv(&self) -> u64 {
        self.inner.state.read().rv
    }

    /// The lowest RV a watch can start after with [`WatchStart::After`]; older ones get `Gone`.
    pub fn history_floor(&self) -> u64 {
        self.inner.state.read().floor
    }

    /// How many objects the store holds across all collections.
    pub fn object_count(&self) -> usize {
        self.inner.state.read().count
    }

    /// The current state of one object.
    pub fn get(&self, key: &ObjectKey) -> Option<Arc<Value>> {
        self.inner.state.read().entry(key).map(|e| e.object.clone())
    }

    /// Objects of the collection sorted by (namespace, name), plus the RV the list is consistent with.
    pub fn list(&self, collection: &CollectionKey) -> (Vec<Arc<Value>>, u64) {
        let state = self.inner.state.read();
        let Some(bucket) = state.bucket(&collection.group, &collection.resource) else {
            return (Vec::new(), state.rv);
        };
        let objects = match ns_of(&collection.namespace) {
            "" => bucket.values().flat_map(|names| names.values()).map(|e| e.object.clone()).collect(),
            ns => bucket
                .get(ns)
                .map(|names| names.values().map(|e| e.object.clone()).collect())
                .unwrap_or_default(),
        };
        (objects, state.rv)
    }

    /// Every collection key that has objects in `namespace` (used to empty a namespace being deleted),
    /// sorted by (group, resource).
    pub fn collections_in_namespace(&self, namespace: &str) -> Vec<CollectionKey> {
        if namespace.is_empty() {
            return Vec::new();
        }
        let state = self.inner.state.read();
        let mut out: Vec<CollectionKey> = state
            .objects
            .iter()
            .flat_map(|(group, resources)| {
                resources.iter().filter(|(_, bucket)| bucket.contains_key(namespace)).map(|(resource, _)| {
                    CollectionKey {
                        group: group.clone(),
                        resource: resource.clone(),
                        namespace: Some(namespace.to_string()),
                    }
                })
            })
            .collect();
        out.sort_by(|a, b| (&a.group, &a.resource).cmp(&(&b.group, &b.resource)));
        out
    }

    /// Stores a new object; writes the new RV into `metadata.resourceVersion` (as a decimal string) of the stored copy.
    pub fn create(&self, key: &ObjectKey, object: Value) -> Result<Arc<Value>, StoreError> {
        let mut writer = self.inner.writer.lock();
        if self.inner.state.read().entry(key).is_some() {
            return Err(StoreError::AlreadyExists);
        }
        self.write_put(&mut writer, key, object)
    }

    /// Replaces an existing object. `expected_rv`: Some(rv) fails with Conflict unless it is the current RV of the object.
    pub fn update(
        &self,
        key: &ObjectKey,
        object: Value,
        expected_rv: Option<u64>,
    ) -> Result<Arc<Value>, StoreError> {
        let mut writer = self.inner.writer.lock();
        self.check_current(key, expected_rv)?;
        self.write_put(&mut writer, key, object)
    }

    /// Removes an object (with the same `expected_rv` check); returns the removed object carrying the deletion's RV.
    pub fn delete(&self, key: &ObjectKey, expected_rv: Option<u64>) -> Result<Arc<Value>, StoreError> {
        let mut writer = self.inner.writer.lock();
        let current = self.check_current(key, expected_rv)?;
        self.write_delete(&mut writer, key, &current)
    }

    /// Read-modify-write under the store's lock, for callers that compute the new state from the current one
    /// (GC, finalizers, status merges): `f` receives the current object (None if absent) and returns what to do.
    ///
    /// No other write can happen while `f` runs. `f` may read the store (`get`, `list`) but must
    /// not write to it (that would deadlock). `Mutation::Put` on an absent object creates it
    /// (ADDED); `Mutation::Delete` on an absent object fails with NotFound; `Mutation::Keep` and
    /// a rejection write nothing and emit no event.
    pub fn mutate<E>(
        &self,
        key: &ObjectKey,
        f: impl FnOnce(Option<&Value>) -> Result<Mutation, E>,
    ) -> Result<MutationOutcome, MutateError<E>> {
        let mut writer = self.inner.writer.lock();
        let current = self.get(key);
        match f(current.as_deref()).map_err(MutateError::Rejected)? {
            Mutation::Keep => Ok(MutationOutcome::Unchanged(current)),
            Mutation::Put(object) => self
                .write_put(&mut writer, key, object)
                .map(MutationOutcome::Written)
                .map_err(MutateError::Store),
            Mutation::Delete => match current {
                None => Err(MutateError::Store(StoreError::NotFound)),
                Some(current) => self
                    .write_delete(&mut writer, key, &current)
                    .map(MutationOutcome::Deleted)
                    .map_err(MutateError::Store),
            },
        }
    }

    /// Starts a watch of a collection (optionally one name). `buffer` bounds the events queued for this watcher;
    /// when a write finds the queue full the watcher is dropped (its stream ends), so a slow watcher never
    /// blocks writers: the client sees its watch close and re-lists, as with kube-apiserver.
    ///
    /// Registration is atomic with writes: every change is seen exactly once, either in the
    /// replayed part or live. Replayed events do not count against `buffer` (a `buffer` of 0 is
    /// treated as 1).
    pub fn watch(
        &self,
        collection: &CollectionKey,
        name: Option<&str>,
        start: WatchStart,
        buffer: usize,
    ) -> Result<Watch, StoreError> {
        let (tx, rx) = mpsc::channel(buffer.max(1));
        let namespace = ns_of(&collection.namespace).to_string();
        let in_collection = |key: &ObjectKey| {
            key.group == collection.group
                && key.resource == collection.resource
                && key_matches(&namespace, name, key)
        };

        let mut state = self.inner.state.write();
        let (pending, initial_rv, min_rv) = match start {
            WatchStart::Now => (VecDeque::new(), state.rv, state.rv),
            WatchStart::After(rv) => {
                if rv < state.floor {
                    return Err(StoreError::Gone { requested: rv, oldest: state.floor });
                }
                let from = state.history.partition_point(|e| e.resource_version <= rv);
                let pending =
                    state.history.range(from..).filter(|e| in_collection(&e.key)).cloned().collect();
                (pending, rv, rv)
            }
            WatchStart::CurrentState => {
                let mut current: Vec<(u64, ObjectKey, Arc<Value>)> = Vec::new();
                if let Some(bucket) = state.bucket(&collection.group, &collection.resource) {
                    let namespaces: Box<dyn Iterator<Item = (&String, &BTreeMap<String, Entry>)>> =
                        if namespace.is_empty() {
                            Box::new(bucket.iter())
                        } else {
                            Box::new(bucket.get_key_value(&namespace).into_iter())
                        };
                    for (ns, names) in namespaces {
                        let entries: Box<dyn Iterator<Item = (&String, &Entry)>> = match name {
                            Some(n) => Box::new(names.get_key_value(n).into_iter()),
                            None => Box::new(names.iter()),
                        };
                        for (n, entry) in entries {
                            let key = ObjectKey {
                                group: collection.group.clone(),
                                resource: collection.resource.clone(),
                                namespace: (!ns.is_empty()).then(|| ns.clone()),
                                name: n.clone(),
                            };
                            current.push((entry.rv, key, entry.object.clone()));
                        }
                    }
                }
                current.sort_by_key(|(rv, _, _)| *rv);
                let pending = current
                    .into_iter()
                    .map(|(rv, key, object)| StoreEvent {
                        event_type: EventType::Added,
                        key,
                        object,
                        previous: None,
                        resource_version: rv,
                    })
                    .collect();
                (pending, state.rv, state.rv)
            }
        };
        let watchers = state
            .watchers
            .entry(collection.group.clone())
            .or_default()
            .entry(collection.resource.clone())
            .or_default();
        watchers.retain(|w| !w.tx.is_closed());
        watchers.push(Watcher { namespace, name: name.map(str::to_string), min_rv, tx });
        Ok(Watch { pending, rx, initial_rv })
    }

    /// Ends every live watch (their streams yield the events already queued, then `None`), for
    /// an orderly shutdown of the API server.
    pub fn stop_watches(&self) {
        self.inner.state.write().watchers.clear();
    }

    /// Fails unless the object exists and, when `expected_rv` is given, was last written at it.
    fn check_current(&self, key: &ObjectKey, expected_rv: Option<u64>) -> Result<Arc<Value>, StoreError> {
        let state = self.inner.state.read();
        let entry = state.entry(key).ok_or(StoreError::NotFound)?;
        match expected_rv {
            Some(rv) if rv != entry.rv => Err(StoreError::Conflict),
            _ => Ok(entry.object.clone()),
        }
    }

    /// Makes `object` the new state of `key` at the next RV. The caller holds the writer lock.
    fn write_put(
        &self,
        persist: &mut Option<Persist>,
        key: &ObjectKey,
        mut object: Value,
    ) -> Result<Arc<Value>, StoreError> {
        let rv = self.inner.state.read().rv + 1;
        stamp_rv(&mut object, rv)?;
        if let Some(persist) = persist.as_mut() {
            persist.append(rv, key, Some(&object))?;
        }
        let object = Arc::new(object);
        self.inner.state.write().apply_put(key, rv, object.clone());
        self.after_write(persist);
        Ok(object)
    }

    /// Removes `key` (whose current state is `current`) at the next RV. The caller holds the
    /// writer lock.
    fn write_delete(
        &self,
        persist: &mut Option<Persist>,
        key: &ObjectKey,
        current: &Value,
    ) -> Result<Arc<Value>, StoreError> {
        let rv = self.inner.state.read().rv + 1;
        let mut deleted = current.clone();
        stamp_rv(&mut deleted, rv)?;
        if let Some(persist) = persist.as_mut() {
            persist.append(rv, key, None)?;
        }
        let deleted = Arc::new(deleted);
        self.inner.state.write().apply_delete(key, rv, deleted.clone());
        self.after_write(persist);
        Ok(deleted)
    }

    /// Compacts the WAL into a snapshot when it has grown enough. A failure here does not undo
    /// the write that triggered it (that write is already durable in the WAL); it is logged and
    /// retried on the next write.
    fn after_write(&self, persist: &mut Option<Persist>) {
        let Some(persist) = persist.as_mut() else {
            return;
        };
        let (rv, count) = {
            let state = self.inner.state.read();
            (state.rv, state.count)
        };
        if !persist.should_compact(count) {
            return;
        }
        let objects = self.inner.state.read().all_entries();
        if let Err(error) = persist.compact(rv, &objects) {
            tracing::warn!(%error, wal_records = persist.wal_records(), "storage compaction failed; will retry");
        }
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.read();
        f.debug_struct("Store").field("rv", &state.rv).field("objects", &state.count).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stamp_rv_sets_decimal_string_and_rejects_non_objects() {
        let cases: Vec<(Value, Option<Value>)> = vec![
            (
                json!({"metadata": {"name": "a"}}),
                Some(json!({"metadata": {"name": "a", "resourceVersion": "7"}})),
            ),
            (json!({"kind": "X"}), Some(json!({"kind": "X", "metadata": {"resourceVersion": "7"}}))),
            (json!({"metadata": null}), Some(json!({"metadata": {"resourceVersion": "7"}}))),
            (
                json!({"metadata": {"resourceVersion": "3"}}),
                Some(json!({"metadata": {"resourceVersion": "7"}})),
            ),
            (json!([1, 2]), None),
            (json!("x"), None),
            (json!({"metadata": 5}), None),
        ];
        for (mut input, expected) in cases {
            let result = stamp_rv(&mut input, 7);
            match expected {
                Some(expected) => {
                    assert!(result.is_ok());
                    assert_eq!(input, expected);
                }
                None => assert!(matches!(result, Err(StoreError::Corrupt(_)))),
            }
        }
    }

    #[test]
    fn resource_version_of_reads_decimal_strings_only() {
        assert_eq!(resource_version_of(&json!({"metadata": {"resourceVersion": "42"}})), Some(42));
        assert_eq!(resource_version_of(&json!({"metadata": {"resourceVersion": 42}})), None);
        assert_eq!(resource_version_of(&json!({"metadata": {"resourceVersion": "x"}})), None);
        assert_eq!(resource_version_of(&json!({})), None);
    }

    #[test]
    fn collection_contains_respects_namespace_scope() {
        let key = |ns: Option<&str>, name: &str| ObjectKey {
            group: "".into(),
            resource: "pods".into(),
            namespace: ns.map(str::to_string),
            name: name.into(),
        };
        let all = CollectionKey { group: "".into(), resource: "pods".into(), namespace: None };
        let default = CollectionKey { namespace: Some("default".into()), ..all.clone() };
        let other_resource = CollectionKey { resource: "services".into(), ..all.clone() };
        assert!(all.contains(&key(Some("a"), "x")));
        assert!(default.contains(&key(Some("default"), "x")));
        assert!(!default.contains(&key(Some("kube-system"), "x")));
        assert!(!other_resource.contains(&key(Some("default"), "x")));
        assert_eq!(key(Some("default"), "x").collection(), default);
    }

    #[test]
    fn store_is_send_sync_and_watch_is_send() {
        fn assert_send_sync<T: Send + Sync>() {}
        fn assert_send<T: Send>() {}
        assert_send_sync::<Store>();
        assert_send::<Watch>();
    }
}
