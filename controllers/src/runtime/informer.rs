//! A watch that keeps a reflector store and tells its handler what changed, with the previous
//! version of an updated object (client-go's informer event handlers: `OnAdd`, `OnUpdate(old,
//! new)`, `OnDelete`), so a controller can enqueue exactly the keys an event concerns.

use std::{fmt::Debug, hash::Hash, sync::Arc};

use futures::StreamExt;
use kube::{
    Api, Resource,
    runtime::{
        WatchStreamExt,
        reflector::{ObjectRef, Store, store::Writer},
        watcher,
    },
};
use serde::de::DeserializeOwned;

/// One change seen by a watch.
pub enum Change<'a, K> {
    /// An object was added or updated; `old` is its previous cached version, if any.
    Applied {
        /// The new version.
        new: &'a K,
        /// The version cached before, if any.
        old: Option<Arc<K>>,
    },
    /// An object was deleted (its last known version).
    Deleted(&'a K),
    /// The store holds the initial list (after a start or a relist).
    Synced,
}

/// Runs a watch on `api` until the future is dropped, applying every event to `writer`'s store
/// and passing each change to `handle` (after the store was updated).
pub async fn watch_store<K>(
    api: Api<K>,
    config: watcher::Config,
    mut writer: Writer<K>,
    mut handle: impl FnMut(Change<'_, K>),
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    let reader: Store<K> = writer.as_reader();
    let mut stream = watcher(api, config).default_backoff().boxed();
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                tracing::debug!(%error, "watch error (retrying with back-off)");
                continue;
            }
        };
        let old = match &event {
            watcher::Event::Apply(object) => reader.get(&ObjectRef::from_obj(object)),
            _ => None,
        };
        writer.apply_watcher_event(&event);
        match &event {
            watcher::Event::Apply(object) => handle(Change::Applied { new: object, old }),
            watcher::Event::InitApply(object) => handle(Change::Applied { new: object, old: None }),
            watcher::Event::Delete(object) => handle(Change::Deleted(object)),
            watcher::Event::InitDone => handle(Change::Synced),
            watcher::Event::Init => {}
        }
    }
}
