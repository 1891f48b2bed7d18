//! What the workload controllers (CloneSet, Advanced StatefulSet, Advanced DaemonSet) share
//! around kube-runtime's `Controller`: the change streams of the shared caches they read
//! ([`super::cache`]), the watch of the workload itself (which tells when its first list is complete and feeds the pending-queue
//! gauge), the task that declares the caches synced, the mapping of a reconcile's outcome to the
//! next action with its metrics, and the loop that drains the controller's stream.
//!
//! Each controller keeps what is its own: the context, the mappers from a watched object to the
//! workloads it wakes, and the reconcile.

use std::{
    fmt::{Debug, Display},
    future::Future,
    sync::Arc,
    time::{Duration, Instant},
};

use futures::{Stream, StreamExt};
use kube::{
    Api, Client, Resource,
    runtime::{
        WatchStreamExt,
        controller::Action,
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};
use serde::de::DeserializeOwned;
use tokio::{sync::watch, task::JoinHandle};

use super::{
    Metrics,
    cache::{CacheEvent, Cached, Informer, trim},
    queue::PendingQueue,
};
use crate::ControllerError;

/// How soon a reconcile that ran before the caches were synced is tried again.
pub const NOT_SYNCED_RETRY: Duration = Duration::from_millis(200);
/// Shortest requeue a reconcile may ask for.
pub const MIN_REQUEUE: Duration = Duration::from_millis(50);
/// Resync period of a workload that asked for nothing.
pub const RESYNC: Duration = Duration::from_secs(300);
/// Retry delay after a failed reconcile.
pub const ERROR_RETRY: Duration = Duration::from_secs(1);

/// Becomes true once the workload watch delivered its first complete list.
///
/// The `Controller` itself waits on the workload store's readiness, and kube-runtime keeps one
/// waker per store: a second waiter on the same store could take the Controller's wake-up (or
/// lose its own), so readiness reads the stream's `InitDone` instead.
pub struct Listed(watch::Receiver<bool>);

/// The watch of the workload kind `K`: its cache, the stream for `Controller::for_stream`
/// (each changed workload marked pending in `queue` under `key`), and when it is listed.
pub fn workload_watch<K>(
    client: &Client,
    queue: PendingQueue,
    key: fn(&K) -> String,
) -> (Store<K>, impl Stream<Item = Result<K, watcher::Error>> + Send + use<K>, Listed)
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (store, writer) = reflector::store::<K>();
    let (listed, listed_rx) = watch::channel(false);
    let stream = watcher(Api::<K>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .modify(|object| trim(object))
        .reflect(writer)
        .inspect(move |event| {
            if matches!(event, Ok(watcher::Event::InitDone)) {
                listed.send_replace(true);
            }
        })
        .touched_objects()
        .inspect(move |result| {
            if let Ok(object) = result {
                queue.triggered(key(object));
            }
        });
    (store, stream, Listed(listed_rx))
}

/// Marks the workloads `refs` pending in `queue` and hands them on (a watch mapper's tail).
pub fn triggered<K: Resource>(queue: &PendingQueue, refs: Vec<ObjectRef<K>>) -> Vec<ObjectRef<K>> {
    for owner in &refs {
        queue.triggered(format!("{}/{}", owner.namespace.as_deref().unwrap_or_default(), owner.name));
    }
    refs
}

/// Waits for every cache in `caches` (each given as its [`cache_synced`] future) and for the
/// workload list, then calls `synced`. Abort the returned task when the controller stops.
pub fn when_synced(
    controller: &'static str,
    caches: Vec<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>>,
    listed: Listed,
    synced: impl FnOnce() + Send + 'static,
) -> JoinHandle<()> {
    let Listed(mut listed) = listed;
    tokio::spawn(async move {
        for cache in caches {
            cache.await;
        }
        let _ = listed.wait_for(|listed| *listed).await;
        tracing::info!(controller, "controller caches synced");
        synced();
    })
}

/// The future of a shared cache's first list, boxed for [`when_synced`].
pub fn cache_synced<K: Cached>(informer: &Informer<K>) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
    let informer = informer.clone();
    Box::pin(async move { informer.until_synced().await })
}

/// The objects a shared cache changed, for `Controller::watches_shared_stream`; a deleted
/// object is handed on with a `deletionTimestamp` (now, when it had none), so a mapper can tell
/// it is gone.
pub fn changed_or_deleted<K: Cached>(informer: &Informer<K>) -> impl Stream<Item = Arc<K>> + Send + use<K> {
    informer.subscribe().into_stream().filter_map(|event| {
        futures::future::ready(match event {
            CacheEvent::Applied { new, .. } => Some(new),
            CacheEvent::Deleted(object) if object.meta().deletion_timestamp.is_some() => Some(object),
            CacheEvent::Deleted(object) => {
                let mut gone = (*object).clone();
                gone.meta_mut().deletion_timestamp = Some(
                    k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now()),
                );
                Some(Arc::new(gone))
            }
            CacheEvent::Synced => None,
        })
    })
}

/// The next action after a reconcile that started at `started` and asked to look again after
/// `Ok(Some(d))` (or only on the next event, `Ok(None)`), recorded in the reconcile metrics.
pub fn reconciled(
    metrics: &Metrics,
    controller: &str,
    started: Instant,
    outcome: Result<Option<Duration>, ControllerError>,
) -> Result<Action, ControllerError> {
    let seconds = started.elapsed().as_secs_f64();
    match outcome {
        Ok(requeue_after) => {
            let result = if requeue_after.is_some() { "requeue" } else { "success" };
            metrics.reconciled(controller, result, seconds);
            Ok(next_action(requeue_after))
        }
        Err(error) => {
            metrics.reconciled(controller, "error", seconds);
            Err(error)
        }
    }
}

/// The requeue a reconcile asked for, at least [`MIN_REQUEUE`]; [`RESYNC`] when it asked for none.
pub fn next_action(requeue_after: Option<Duration>) -> Action {
    match requeue_after {
        Some(after) => Action::requeue(after.max(MIN_REQUEUE)),
        None => Action::requeue(RESYNC),
    }
}

/// The manager's own status writes per workload (by UID): the resourceVersion the latest one
/// produced, and the versions known to be older than it (those our writes were based on).
///
/// A reconcile reads its workload from the shared cache, which sees the manager's own status
/// write only when the watch delivers it. A reconcile that runs in between (a pod event) would
/// send a version our write already replaced and meet a 409 it caused itself. When the cached
/// version is one our writes superseded, our latest write's version is the one to send; if
/// somebody else wrote since, the API server still answers 409, so optimistic concurrency holds
/// against every other writer.
#[derive(Debug, Default)]
pub struct OwnStatusWrites {
    by_uid: std::sync::Mutex<std::collections::HashMap<String, OwnWrites>>,
}

/// What [`OwnStatusWrites`] keeps for one workload.
#[derive(Debug, Default)]
struct OwnWrites {
    latest: String,
    superseded: std::collections::VecDeque<String>,
}

/// Entries kept before the memory forgets all (deleted workloads leave theirs behind).
const OWN_WRITES_LIMIT: usize = 50_000;
/// Superseded versions kept per workload: the cache lags by a few writes at most.
const SUPERSEDED_KEPT: usize = 16;

impl OwnStatusWrites {
    /// The resourceVersion to send for a workload cached at `cached`: our latest write's when
    /// `cached` is older than it, else `cached`.
    pub fn version_to_send(&self, uid: &str, cached: &str) -> String {
        let writes = self.by_uid.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match writes.get(uid) {
            Some(own) if own.superseded.iter().any(|v| v == cached) => own.latest.clone(),
            _ => cached.to_string(),
        }
    }

    /// Remembers that a write based on `based_on` succeeded and produced `produced`: every
    /// version seen before is older than `produced`.
    pub fn record(&self, uid: &str, based_on: &str, produced: &str) {
        let mut writes = self.by_uid.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if writes.len() >= OWN_WRITES_LIMIT && !writes.contains_key(uid) {
            writes.clear();
        }
        let own = writes.entry(uid.to_string()).or_default();
        let previous = std::mem::replace(&mut own.latest, produced.to_string());
        for older in [previous, based_on.to_string()] {
            if !older.is_empty() && older != produced && !own.superseded.contains(&older) {
                own.superseded.push_back(older);
            }
        }
        while own.superseded.len() > SUPERSEDED_KEPT {
            own.superseded.pop_front();
        }
    }
}

/// The manager's memory of its own status writes, shared by the workload controllers.
fn own_status_writes() -> &'static OwnStatusWrites {
    static WRITES: std::sync::OnceLock<OwnStatusWrites> = std::sync::OnceLock::new();
    WRITES.get_or_init(OwnStatusWrites::default)
}

/// Writes a workload's status with its resourceVersion (`set_status` puts the new status into
/// the object). The version sent is the cached one, or the one our own last status write
/// produced from it ([`OwnStatusWrites`]). On a conflict it re-reads the object and tries
/// again, up to three times; it stops quietly when the spec moved on (the next reconcile
/// computes a fresh status) or the object is gone. Returns the object as stored when the status
/// was written, `None` when not.
pub async fn replace_status<K>(
    client: &Client,
    workload: &K,
    set_status: impl Fn(&mut K),
) -> Result<Option<K>, ControllerError>
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + Debug,
{
    let namespace = workload.meta().namespace.clone().unwrap_or_default();
    let name = workload.meta().name.clone().unwrap_or_default();
    let uid = workload.meta().uid.clone().unwrap_or_default();
    let writes = own_status_writes();
    let api: Api<K> = Api::namespaced(client.clone(), &namespace);
    let mut object = workload.clone();
    if let Some(cached) = object.meta().resource_version.clone() {
        object.meta_mut().resource_version = Some(writes.version_to_send(&uid, &cached));
    }
    for _ in 0..3 {
        set_status(&mut object);
        let based_on = object.meta().resource_version.clone().unwrap_or_default();
        match api.replace_status(&name, &kube::api::PostParams::default(), &object).await {
            Ok(stored) => {
                if let Some(produced) = stored.meta().resource_version.as_deref() {
                    writes.record(&uid, &based_on, produced);
                }
                return Ok(Some(stored));
            }
            Err(kube::Error::Api(error)) if error.code == 409 => {
                object = api.get(&name).await?;
                if object.meta().generation != workload.meta().generation {
                    return Ok(None);
                }
            }
            Err(kube::Error::Api(error)) if error.code == 404 => return Ok(None),
            Err(error) => return Err(error.into()),
        }
    }
    Ok(None)
}

/// Runs a controller's output stream to its end, logging its errors at debug level (failed
/// reconciles are logged by the error policies).
pub async fn drain<T, E: Display>(controller: &'static str, stream: impl Stream<Item = Result<T, E>>) {
    stream
        .for_each(|result| {
            if let Err(error) = result {
                tracing::debug!(controller, %error, "controller event");
            }
            futures::future::ready(())
        })
        .await;
}

/// Test helpers of the workload controllers.
#[cfg(test)]
pub mod testing {
    use kube::runtime::watcher::Event;

    use super::*;

    /// A store that listed exactly `objects`.
    pub fn listed_store<K>(objects: Vec<K>) -> Store<K>
    where
        K: Resource<DynamicType = ()> + Clone + 'static,
    {
        let (store, mut writer) = reflector::store::<K>();
        writer.apply_watcher_event(&Event::Init);
        for object in objects {
            writer.apply_watcher_event(&Event::InitApply(object));
        }
        writer.apply_watcher_event(&Event::InitDone);
        store
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_status_writes_send_the_latest_version_only_for_versions_they_superseded() {
        let writes = OwnStatusWrites::default();
        // Nothing written yet: the cached version goes out as it is.
        assert_eq!(writes.version_to_send("u", "10"), "10");
        writes.record("u", "10", "11");
        // The cache has not seen our write: send the write's version.
        assert_eq!(writes.version_to_send("u", "10"), "11");
        // A second write based on the first: both older versions map to the newest.
        writes.record("u", "11", "12");
        assert_eq!(writes.version_to_send("u", "10"), "12");
        assert_eq!(writes.version_to_send("u", "11"), "12");
        // The cache caught up, or holds somebody else's newer write: sent as cached.
        assert_eq!(writes.version_to_send("u", "12"), "12");
        assert_eq!(writes.version_to_send("u", "15"), "15");
        // Another workload is not affected.
        assert_eq!(writes.version_to_send("other", "10"), "10");
    }

    #[test]
    fn next_action_table() {
        let cases = [
            (None, RESYNC),
            (Some(Duration::from_secs(3)), Duration::from_secs(3)),
            (Some(Duration::from_millis(1)), MIN_REQUEUE),
            (Some(Duration::ZERO), MIN_REQUEUE),
        ];
        for (asked, expected) in cases {
            assert_eq!(next_action(asked), Action::requeue(expected), "asked {asked:?}");
        }
    }
}
