//! Waiting for a reflector store's first complete list.
//!
//! kube-runtime's `Store::wait_until_ready` keeps a single waker for every waiter of a store
//! (one oneshot receiver shared by the store's clones). When two tasks wait at once — a
//! `Controller` holding its runner until its store is ready, and a readiness check waiting on the
//! same store — only the one that polled last is woken; the other sleeps until something else
//! polls it, which may be never. That left `/readyz` reporting `controller-caches` forever in a
//! few starts out of ten, whenever the CloneSet list happened to finish last. [`until_synced`]
//! polls again on a short period, so a lost wake-up costs at most that period. Each poll takes
//! the shared waker, so do not use it on a store a `Controller` holds its runner on (the main
//! store of `Controller::new`/`for_stream`): read that stream's `InitDone` instead.

use std::time::Duration;

use kube::runtime::reflector::{Lookup, Store};

/// How often a waiter looks again when no wake-up came.
const RECHECK: Duration = Duration::from_millis(100);

/// Resolves once `store` holds its first complete list; `false` when its writer is gone (the
/// watch stream was dropped) before that.
pub async fn until_synced<K>(store: &Store<K>) -> bool
where
    K: Lookup + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    loop {
        match tokio::time::timeout(RECHECK, store.wait_until_ready()).await {
            Ok(result) => return result.is_ok(),
            Err(_elapsed) => continue,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::{reflector, watcher};

    use super::*;

    #[tokio::test]
    async fn every_concurrent_waiter_sees_the_store_synced() {
        let (store, mut writer) = reflector::store::<ConfigMap>();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move { until_synced(&store).await })
            })
            .collect();
        // Let every waiter register before the list completes.
        tokio::time::sleep(Duration::from_millis(50)).await;
        writer.apply_watcher_event(&watcher::Event::Init);
        writer.apply_watcher_event(&watcher::Event::InitDone);
        for waiter in waiters {
            let synced = tokio::time::timeout(Duration::from_secs(2), waiter).await.expect("woken").unwrap();
            assert!(synced);
        }
    }

    #[tokio::test]
    async fn a_dropped_writer_ends_the_wait_unsynced() {
        let (store, writer) = reflector::store::<ConfigMap>();
        drop(writer);
        assert!(!until_synced(&store).await);
    }
}
