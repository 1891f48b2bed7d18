//! A journal of pod events: after every event of the pods of one app, the view of all of them,
//! so that scenarios can check orders and limits at every step of a rollout rather than only
//! at its end. Each workload's scenarios choose what a view holds and what keys it.

use std::{collections::BTreeMap, sync::Arc};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::{Api, ResourceExt, runtime::watcher};
use parking_lot::Mutex;

/// The pods' views after each event, keyed by what [`Journal::start`]'s `view` returns.
pub type Snapshot<V> = BTreeMap<String, V>;

/// Watches the pods labelled `app=<app>` and records a [`Snapshot`] after every event (a
/// relist is recorded once complete). Dropping it stops the watch.
pub struct Journal<V> {
    snapshots: Arc<Mutex<Vec<Snapshot<V>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl<V: Clone + Send + 'static> Journal<V> {
    /// Starts recording; `view` gives each pod's key (its name or UID) and view.
    pub fn start(pods: Api<Pod>, app: &str, view: fn(&Pod) -> (String, V)) -> Self {
        let snapshots: Arc<Mutex<Vec<Snapshot<V>>>> = Arc::default();
        let config = watcher::Config::default().labels(&format!("app={app}"));
        let task = {
            let snapshots = snapshots.clone();
            tokio::spawn(async move {
                let mut current: Snapshot<V> = BTreeMap::new();
                let mut listing = true;
                let mut stream = watcher(pods, config).boxed();
                while let Some(event) = stream.next().await {
                    match event {
                        Ok(watcher::Event::Apply(pod)) | Ok(watcher::Event::InitApply(pod)) => {
                            let (key, value) = view(&pod);
                            current.insert(key, value);
                        }
                        Ok(watcher::Event::Delete(pod)) => {
                            current.remove(&view(&pod).0);
                        }
                        Ok(watcher::Event::Init) => {
                            listing = true;
                            current.clear();
                        }
                        Ok(watcher::Event::InitDone) => listing = false,
                        Err(_) => continue,
                    }
                    if !listing {
                        snapshots.lock().push(current.clone());
                    }
                }
            })
        };
        Self { snapshots, task }
    }

    /// Forgets what was recorded so far.
    pub fn reset(&self) {
        self.snapshots.lock().clear();
    }

    /// Every snapshot so far, oldest first.
    pub fn all(&self) -> Vec<Snapshot<V>> {
        self.snapshots.lock().clone()
    }
}

impl<V> Drop for Journal<V> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A pod's key by name, for [`Journal::start`].
pub fn by_name(pod: &Pod) -> String {
    pod.name_any()
}

/// A pod's key by UID (a name can come back as another pod), for [`Journal::start`].
pub fn by_uid(pod: &Pod) -> String {
    pod.uid().unwrap_or_default()
}
