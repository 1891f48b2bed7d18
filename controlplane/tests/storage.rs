//! Behaviour of the object store as the API server (and so a Kubernetes client) sees it:
//! resourceVersions, optimistic concurrency, watch semantics, durability.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kruise_controlplane::storage::{
    CollectionKey, EventType, MutateError, Mutation, MutationOutcome, ObjectKey, Store, StoreError,
    StoreEvent, StoreOptions, Watch, WatchStart, resource_version_of,
};
use serde_json::{Value, json};

fn pod(ns: &str, name: &str) -> ObjectKey {
    ObjectKey { group: "".into(), resource: "pods".into(), namespace: Some(ns.into()), name: name.into() }
}

fn deploy(ns: &str, name: &str) -> ObjectKey {
    ObjectKey {
        group: "apps".into(),
        resource: "deployments".into(),
        namespace: Some(ns.into()),
        name: name.into(),
    }
}

fn node(name: &str) -> ObjectKey {
    ObjectKey { group: "".into(), resource: "nodes".into(), namespace: None, name: name.into() }
}

fn pods(ns: Option<&str>) -> CollectionKey {
    CollectionKey { group: "".into(), resource: "pods".into(), namespace: ns.map(str::to_string) }
}

fn obj(key: &ObjectKey, data: &str) -> Value {
    let mut metadata = json!({"name": key.name});
    if let Some(ns) = &key.namespace {
        metadata["namespace"] = json!(ns);
    }
    json!({"metadata": metadata, "data": data})
}

fn rv(object: &Value) -> u64 {
    resource_version_of(object).unwrap_or(u64::MAX)
}

fn name_of(object: &Value) -> String {
    object["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

/// Everything a watch has queued right now, and whether it has ended.
fn drain(watch: &mut Watch) -> Vec<StoreEvent> {
    let mut out = Vec::new();
    while let Some(event) = watch.try_recv() {
        out.push(event);
    }
    out
}

fn summary(events: &[StoreEvent]) -> Vec<(EventType, String, u64)> {
    events.iter().map(|e| (e.event_type, e.key.name.clone(), e.resource_version)).collect()
}

#[test]
fn resource_version_grows_by_one_per_write_across_collections() {
    let store = Store::in_memory(100);
    assert_eq!(store.current_rv(), 0);
    let a = store.create(&pod("default", "a"), obj(&pod("default", "a"), "1")).ok();
    let b = store.create(&deploy("default", "b"), obj(&deploy("default", "b"), "1")).ok();
    let n = store.create(&node("n1"), obj(&node("n1"), "1")).ok();
    let a2 = store.update(&pod("default", "a"), obj(&pod("default", "a"), "2"), None).ok();
    let gone = store.delete(&deploy("default", "b"), None).ok();
    let versions: Vec<u64> = [a, b, n, a2, gone].iter().map(|o| o.as_deref().map(rv).unwrap_or(0)).collect();
    assert_eq!(versions, vec![1, 2, 3, 4, 5]);
    assert_eq!(store.current_rv(), 5);
    // The stored copy carries the RV as a decimal string, as kube-apiserver does.
    let stored = store.get(&pod("default", "a"));
    assert_eq!(stored.as_deref().map(|o| o["metadata"]["resourceVersion"].clone()), Some(json!("4")));
    assert_eq!(stored.as_deref().map(|o| o["data"].clone()), Some(json!("2")));
}

#[test]
fn create_of_existing_object_fails_and_changes_nothing() {
    let store = Store::in_memory(100);
    let key = pod("default", "a");
    assert!(store.create(&key, obj(&key, "first")).is_ok());
    let mut watch = store.watch(&pods(None), None, WatchStart::Now, 10).ok();
    let result = store.create(&key, obj(&key, "second"));
    assert!(matches!(result, Err(StoreError::AlreadyExists)));
    assert_eq!(store.current_rv(), 1);
    assert_eq!(store.get(&key).as_deref().map(|o| o["data"].clone()), Some(json!("first")));
    assert_eq!(watch.as_mut().map(|w| drain(w).len()), Some(0));
}

#[test]
fn stale_expected_rv_is_a_conflict_without_change_or_event() {
    let store = Store::in_memory(100);
    let key = pod("default", "a");
    let created = store.create(&key, obj(&key, "v1"));
    assert_eq!(created.as_deref().ok().map(rv), Some(1));
    assert!(store.update(&key, obj(&key, "v2"), Some(1)).is_ok());
    let mut watch = store.watch(&pods(None), None, WatchStart::Now, 10).ok();

    assert!(matches!(store.update(&key, obj(&key, "stale"), Some(1)), Err(StoreError::Conflict)));
    assert!(matches!(store.delete(&key, Some(1)), Err(StoreError::Conflict)));
    assert_eq!(store.current_rv(), 2);
    assert_eq!(store.get(&key).as_deref().map(|o| o["data"].clone()), Some(json!("v2")));
    assert_eq!(watch.as_mut().map(|w| drain(w).len()), Some(0));

    // The current RV succeeds; so does an unconditional write.
    assert!(store.update(&key, obj(&key, "v3"), Some(2)).is_ok());
    assert!(store.update(&key, obj(&key, "v4"), None).is_ok());
    assert_eq!(store.delete(&key, Some(4)).as_deref().ok().map(rv), Some(5));
}

#[test]
fn update_and_delete_of_missing_object_are_not_found() {
    let store = Store::in_memory(100);
    let key = pod("default", "missing");
    assert!(matches!(store.update(&key, obj(&key, "x"), None), Err(StoreError::NotFound)));
    assert!(matches!(store.update(&key, obj(&key, "x"), Some(3)), Err(StoreError::NotFound)));
    assert!(matches!(store.delete(&key, None), Err(StoreError::NotFound)));
    assert_eq!(store.current_rv(), 0);
}

#[test]
fn values_that_are_not_objects_are_refused_without_consuming_an_rv() {
    let store = Store::in_memory(100);
    let key = pod("default", "a");
    assert!(matches!(store.create(&key, json!([1, 2, 3])), Err(StoreError::Corrupt(_))));
    assert!(matches!(store.create(&key, json!({"metadata": "nope"})), Err(StoreError::Corrupt(_))));
    assert_eq!(store.current_rv(), 0);
    assert!(store.get(&key).is_none());
    // An object without metadata gets one holding the resourceVersion.
    let stored = store.create(&key, json!({"kind": "Pod"}));
    assert_eq!(stored.as_deref().ok().map(rv), Some(1));
}

#[test]
fn delete_returns_last_state_with_the_deletions_rv_and_emits_it() {
    let store = Store::in_memory(100);
    let key = pod("default", "a");
    assert!(store.create(&key, obj(&key, "last")).is_ok());
    let mut watch = store.watch(&pods(Some("default")), None, WatchStart::Now, 10).ok();
    let deleted = store.delete(&key, None);
    assert_eq!(deleted.as_deref().ok().map(rv), Some(2));
    assert_eq!(deleted.as_deref().ok().map(|o| o["data"].clone()), Some(json!("last")));
    assert!(store.get(&key).is_none());
    let events = watch.as_mut().map(drain).unwrap_or_default();
    assert_eq!(summary(&events), vec![(EventType::Deleted, "a".to_string(), 2)]);
    assert_eq!(rv(&events[0].object), 2);
    assert_eq!(events[0].previous.as_deref().map(rv), Some(1));
    // The key is free again.
    assert_eq!(store.create(&key, obj(&key, "again")).as_deref().ok().map(rv), Some(3));
}

#[test]
fn events_carry_previous_state_for_selector_transitions() {
    let store = Store::in_memory(100);
    let key = pod("default", "a");
    let mut watch = store.watch(&pods(None), None, WatchStart::Now, 10).ok();
    assert!(store.create(&key, obj(&key, "1")).is_ok());
    assert!(store.update(&key, obj(&key, "2"), None).is_ok());
    let events = watch.as_mut().map(drain).unwrap_or_default();
    assert_eq!(
        summary(&events),
        vec![(EventType::Added, "a".into(), 1), (EventType::Modified, "a".into(), 2)]
    );
    assert!(events[0].previous.is_none());
    assert_eq!(events[1].previous.as_deref().map(|p| p["data"].clone()), Some(json!("1")));
    assert_eq!(events[1].object["data"], json!("2"));
}

#[test]
fn mutate_writes_only_what_the_callback_decides() {
    let store = Store::in_memory(100);
    let key = pod("default", "a");
    let mut watch = store.watch(&pods(None), None, WatchStart::Now, 10).ok();

    // Put on an absent object creates it.
    let created = store.mutate(&key, |current| {
        assert!(current.is_none());
        Ok::<_, String>(Mutation::Put(obj(&key, "made")))
    });
    assert!(matches!(&created, Ok(MutationOutcome::Written(o)) if rv(o) == 1));

    // Keep writes nothing.
    let kept = store.mutate(&key, |current| {
        assert_eq!(current.map(|c| c["data"].clone()), Some(json!("made")));
        Ok::<_, String>(Mutation::Keep)
    });
    assert!(matches!(&kept, Ok(MutationOutcome::Unchanged(Some(o))) if rv(o) == 1));

    // A rejection writes nothing and surfaces the caller's error.
    let rejected = store.mutate(&key, |_| Err::<Mutation, _>("finalizers pending".to_string()));
    assert!(matches!(&rejected, Err(MutateError::Rejected(e)) if e == "finalizers pending"));
    assert_eq!(rejected.err().map(|e| e.to_string()), Some("finalizers pending".to_string()));
    assert_eq!(store.current_rv(), 1);

    // Put on an existing object replaces it, computed from the current state.
    let bumped = store.mutate(&key, |current| {
        let mut next = current.cloned().unwrap_or_default();
        next["data"] = json!("bumped");
        Ok::<_, String>(Mutation::Put(next))
    });
    assert!(matches!(&bumped, Ok(MutationOutcome::Written(o)) if rv(o) == 2 && o["data"] == "bumped"));

    let deleted = store.mutate(&key, |_| Ok::<_, String>(Mutation::Delete));
    assert!(matches!(&deleted, Ok(MutationOutcome::Deleted(o)) if rv(o) == 3));
    let missing = store.mutate(&key, |_| Ok::<_, String>(Mutation::Delete));
    assert!(matches!(missing, Err(MutateError::Store(StoreError::NotFound))));
    let kept_absent = store.mutate(&key, |_| Ok::<_, String>(Mutation::Keep));
    assert!(matches!(kept_absent, Ok(MutationOutcome::Unchanged(None))));

    let events = watch.as_mut().map(drain).unwrap_or_default();
    assert_eq!(
        summary(&events),
        vec![
            (EventType::Added, "a".into(), 1),
            (EventType::Modified, "a".into(), 2),
            (EventType::Deleted, "a".into(), 3),
        ]
    );
}

#[test]
fn list_is_sorted_by_namespace_then_name_and_scoped_to_the_collection() {
    let store = Store::in_memory(100);
    for (ns, name) in [("kube-system", "z"), ("default", "b"), ("default", "a"), ("apps", "m")] {
        assert!(store.create(&pod(ns, name), obj(&pod(ns, name), "")).is_ok());
    }
    assert!(store.create(&deploy("default", "d"), obj(&deploy("default", "d"), "")).is_ok());
    let (all, list_rv) = store.list(&pods(None));
    let names: Vec<(String, String)> = all
        .iter()
        .map(|o| (o["metadata"]["namespace"].as_str().unwrap_or_default().to_string(), name_of(o)))
        .collect();
    let expected: Vec<(String, String)> =
        [("apps", "m"), ("default", "a"), ("default", "b"), ("kube-system", "z")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    assert_eq!(names, expected);
    assert_eq!(list_rv, 5);

    let (in_default, _) = store.list(&pods(Some("default")));
    assert_eq!(in_default.iter().map(|o| name_of(o)).collect::<Vec<_>>(), vec!["a", "b"]);
    assert!(store.list(&pods(Some("nowhere"))).0.is_empty());
    let none = CollectionKey { group: "batch".into(), resource: "jobs".into(), namespace: None };
    assert_eq!(store.list(&none), (vec![], 5));

    for name in ["n2", "n1"] {
        assert!(store.create(&node(name), obj(&node(name), "")).is_ok());
    }
    let nodes = CollectionKey { group: "".into(), resource: "nodes".into(), namespace: None };
    assert_eq!(store.list(&nodes).0.iter().map(|o| name_of(o)).collect::<Vec<_>>(), vec!["n1", "n2"]);
}

#[test]
fn collections_in_namespace_reports_only_non_empty_collections() {
    let store = Store::in_memory(100);
    assert!(store.create(&pod("team", "p"), obj(&pod("team", "p"), "")).is_ok());
    assert!(store.create(&deploy("team", "d"), obj(&deploy("team", "d"), "")).is_ok());
    assert!(store.create(&pod("other", "p"), obj(&pod("other", "p"), "")).is_ok());
    assert!(store.create(&node("n"), obj(&node("n"), "")).is_ok());
    let found = store.collections_in_namespace("team");
    assert_eq!(
        found,
        vec![
            CollectionKey { group: "".into(), resource: "pods".into(), namespace: Some("team".into()) },
            CollectionKey {
                group: "apps".into(),
                resource: "deployments".into(),
                namespace: Some("team".into())
            },
        ]
    );
    assert!(store.delete(&pod("team", "p"), None).is_ok());
    assert_eq!(store.collections_in_namespace("team").len(), 1);
    assert!(store.delete(&deploy("team", "d"), None).is_ok());
    assert!(store.collections_in_namespace("team").is_empty());
    assert!(store.collections_in_namespace("").is_empty());
}

#[test]
fn watches_see_only_their_collection_namespace_and_name() {
    let store = Store::in_memory(100);
    let mut all_pods = store.watch(&pods(None), None, WatchStart::Now, 100).ok();
    let mut default_pods = store.watch(&pods(Some("default")), None, WatchStart::Now, 100).ok();
    let mut one_pod = store.watch(&pods(Some("default")), Some("a"), WatchStart::Now, 100).ok();
    let nodes = CollectionKey { group: "".into(), resource: "nodes".into(), namespace: None };
    let mut one_node = store.watch(&nodes, Some("n1"), WatchStart::Now, 100).ok();

    for key in
        [pod("default", "a"), pod("default", "b"), pod("other", "a"), deploy("default", "a"), node("n1")]
    {
        assert!(store.create(&key, obj(&key, "")).is_ok());
    }
    let seen = |w: &mut Option<Watch>| {
        w.as_mut()
            .map(drain)
            .unwrap_or_default()
            .iter()
            .map(|e| {
                format!("{}/{}/{}", e.key.resource, e.key.namespace.clone().unwrap_or_default(), e.key.name)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(seen(&mut all_pods), vec!["pods/default/a", "pods/default/b", "pods/other/a"]);
    assert_eq!(seen(&mut default_pods), vec!["pods/default/a", "pods/default/b"]);
    assert_eq!(seen(&mut one_pod), vec!["pods/default/a"]);
    assert_eq!(seen(&mut one_node), vec!["nodes//n1"]);
}

#[test]
fn watch_after_replays_history_and_reports_gone_when_too_old() {
    let store = Store::in_memory(3);
    for i in 0..5 {
        let key = pod("default", &format!("p{i}"));
        assert!(store.create(&key, obj(&key, "")).is_ok());
    }
    // History keeps RVs 3, 4, 5: resuming after 2 works, after 1 does not.
    assert_eq!(store.history_floor(), 2);
    let mut resumed = store.watch(&pods(None), None, WatchStart::After(2), 10).ok();
    assert_eq!(resumed.as_ref().map(Watch::initial_rv), Some(2));
    let replayed = resumed.as_mut().map(drain).unwrap_or_default();
    assert_eq!(replayed.iter().map(|e| e.resource_version).collect::<Vec<_>>(), vec![3, 4, 5]);

    let gone = store.watch(&pods(None), None, WatchStart::After(1), 10);
    assert!(matches!(gone, Err(StoreError::Gone { requested: 1, oldest: 2 })));
    if let Err(e) = gone {
        assert_eq!(e.to_string(), "too old resource version: 1 (2)");
    }

    // Resuming at the current RV replays nothing but sees what follows.
    let mut current = store.watch(&pods(None), None, WatchStart::After(5), 10).ok();
    assert_eq!(current.as_mut().map(|w| drain(w).len()), Some(0));
    let key = pod("default", "p0");
    assert!(store.update(&key, obj(&key, "x"), None).is_ok());
    assert_eq!(
        current.as_mut().map(|w| summary(&drain(w))),
        Some(vec![(EventType::Modified, "p0".into(), 6)])
    );
    assert_eq!(
        resumed.as_mut().map(|w| summary(&drain(w))),
        Some(vec![(EventType::Modified, "p0".into(), 6)])
    );

    // A replay only includes events of the watched collection.
    assert!(store.create(&deploy("default", "d"), obj(&deploy("default", "d"), "")).is_ok());
    let mut after5 = store.watch(&pods(None), None, WatchStart::After(5), 10).ok();
    assert_eq!(
        after5.as_mut().map(|w| summary(&drain(w))),
        Some(vec![(EventType::Modified, "p0".into(), 6)])
    );

    // An RV from the future only reports changes beyond it.
    let mut future = store.watch(&pods(None), None, WatchStart::After(8), 10).ok();
    assert!(store.update(&key, obj(&key, "y"), None).is_ok()); // rv 8
    assert!(store.update(&key, obj(&key, "z"), None).is_ok()); // rv 9
    assert_eq!(
        future.as_mut().map(|w| summary(&drain(w))),
        Some(vec![(EventType::Modified, "p0".into(), 9)])
    );
}

#[test]
fn zero_history_still_allows_resuming_from_the_current_rv() {
    let store = Store::in_memory(0);
    let key = pod("default", "a");
    assert!(store.create(&key, obj(&key, "")).is_ok());
    assert!(store.watch(&pods(None), None, WatchStart::After(1), 10).is_ok());
    assert!(matches!(store.watch(&pods(None), None, WatchStart::After(0), 10), Err(StoreError::Gone { .. })));
}

#[test]
fn current_state_watch_sends_synthetic_adds_in_rv_order_then_live_changes() {
    let store = Store::in_memory(100);
    for name in ["c", "a", "b"] {
        assert!(store.create(&pod("default", name), obj(&pod("default", name), "")).is_ok());
    }
    assert!(store.update(&pod("default", "c"), obj(&pod("default", "c"), "new"), None).is_ok());
    assert!(store.create(&pod("other", "x"), obj(&pod("other", "x"), "")).is_ok());
    assert!(store.create(&deploy("default", "d"), obj(&deploy("default", "d"), "")).is_ok());

    let mut watch = store.watch(&pods(Some("default")), None, WatchStart::CurrentState, 1).ok();
    assert_eq!(watch.as_ref().map(Watch::initial_rv), Some(6));
    let key = pod("default", "a");
    assert!(store.update(&key, obj(&key, "live"), None).is_ok());
    let events = watch.as_mut().map(drain).unwrap_or_default();
    assert_eq!(
        summary(&events),
        vec![
            (EventType::Added, "a".into(), 2),
            (EventType::Added, "b".into(), 3),
            (EventType::Added, "c".into(), 4),
            (EventType::Modified, "a".into(), 7),
        ]
    );
    assert!(events[..3].iter().all(|e| e.previous.is_none()));
    assert_eq!(events[2].object["data"], json!("new"));

    let mut single = store.watch(&pods(Some("default")), Some("b"), WatchStart::CurrentState, 1).ok();
    assert_eq!(single.as_mut().map(|w| summary(&drain(w))), Some(vec![(EventType::Added, "b".into(), 3)]));
    let mut empty = store.watch(&pods(Some("nowhere")), None, WatchStart::CurrentState, 1).ok();
    assert_eq!(empty.as_mut().map(|w| drain(w).len()), Some(0));
}

#[test]
fn registration_is_atomic_with_concurrent_writes() {
    let store = Store::in_memory(100_000);
    let key = pod("default", "hot");
    assert!(store.create(&key, obj(&key, "0")).is_ok());
    let writes = 3_000u64;
    let writer = {
        let store = store.clone();
        let key = key.clone();
        std::thread::spawn(move || {
            for i in 0..writes {
                if store.update(&key, obj(&key, &i.to_string()), None).is_err() {
                    return false;
                }
            }
            true
        })
    };
    let mut watches = Vec::new();
    while !writer.is_finished() && watches.len() < 300 {
        let start = match watches.len() % 3 {
            0 => WatchStart::Now,
            1 => WatchStart::CurrentState,
            _ => WatchStart::After(store.current_rv().saturating_sub(5)),
        };
        if let Ok(w) = store.watch(&pods(None), None, start, 10_000) {
            watches.push(w);
        }
        std::thread::yield_now();
    }
    assert!(writer.join().unwrap_or(false));
    let last = store.current_rv();
    assert_eq!(last, writes + 1);
    assert!(watches.len() > 3, "registered {} watches", watches.len());
    for mut watch in watches {
        let initial = watch.initial_rv();
        let events = drain(&mut watch);
        // Synthetic ADDED events (if any) describe the state at initial_rv; after them, every
        // change above initial_rv arrives exactly once, in order.
        let live: Vec<u64> = events
            .iter()
            .filter(|e| !(e.event_type == EventType::Added && e.resource_version <= initial))
            .map(|e| e.resource_version)
            .collect();
        let expected: Vec<u64> = (initial + 1..=last).collect();
        assert_eq!(live, expected, "watch starting at {initial}");
    }
}

#[test]
fn a_watcher_that_never_reads_is_dropped_without_slowing_writers() {
    let store = Store::in_memory(100_000);
    let mut stuck = store.watch(&pods(None), None, WatchStart::Now, 10).ok();
    let mut healthy = store.watch(&pods(None), None, WatchStart::Now, 20_000).ok();
    let mut healthy_ns = store.watch(&pods(Some("default")), None, WatchStart::Now, 20_000).ok();
    let started = Instant::now();
    for i in 0..10_000 {
        let key = pod("default", &format!("p{i}"));
        assert!(store.create(&key, obj(&key, "")).is_ok());
    }
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(5), "10k writes took {elapsed:?}");

    // The stuck watcher got what fit in its queue, then its stream ended.
    let stuck_events = stuck.as_mut().map(drain).unwrap_or_default();
    assert_eq!(stuck_events.len(), 10);
    let rt = tokio::runtime::Builder::new_current_thread().build();
    if let (Ok(rt), Some(stuck)) = (rt, stuck.as_mut()) {
        assert!(rt.block_on(stuck.recv()).is_none());
    }
    for watch in [&mut healthy, &mut healthy_ns] {
        let events = watch.as_mut().map(drain).unwrap_or_default();
        assert_eq!(events.len(), 10_000);
        assert!(events.windows(2).all(|w| w[0].resource_version + 1 == w[1].resource_version));
    }
}

#[test]
fn many_threads_read_and_write_concurrently() {
    let store = Store::in_memory(100_000);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                let mut ok = true;
                for i in 0..500 {
                    let key = pod(&format!("ns{t}"), &format!("p{i}"));
                    ok &= store.create(&key, obj(&key, "")).is_ok();
                    ok &= store.update(&key, obj(&key, "u"), None).is_ok();
                    ok &= store.get(&key).is_some();
                    let (list, list_rv) = store.list(&pods(Some(&format!("ns{t}"))));
                    ok &= list.len() == i + 1 && list_rv >= rv(&list[i]);
                }
                ok
            })
        })
        .collect();
    for thread in threads {
        assert!(thread.join().unwrap_or(false));
    }
    assert_eq!(store.current_rv(), 4 * 500 * 2);
    assert_eq!(store.list(&pods(None)).0.len(), 2000);
    assert_eq!(store.object_count(), 2000);
}

#[tokio::test]
async fn watch_is_an_async_stream_and_ends_when_watches_stop_or_the_store_goes() {
    let store = Store::in_memory(100);
    let watch = store.watch(&pods(None), None, WatchStart::Now, 100);
    let mut by_recv = store.watch(&pods(None), None, WatchStart::Now, 100).ok();
    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            for i in 0..3 {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let key = pod("default", &format!("p{i}"));
                let _ = store.create(&key, obj(&key, ""));
            }
        })
    };
    let first_three: Vec<StoreEvent> = match watch {
        Ok(w) => w.take(3).collect().await,
        Err(_) => Vec::new(),
    };
    assert_eq!(first_three.iter().map(|e| e.resource_version).collect::<Vec<_>>(), vec![1, 2, 3]);
    let _ = writer.await;

    if let Some(w) = by_recv.as_mut() {
        assert_eq!(w.recv().await.map(|e| e.resource_version), Some(1));
    }
    store.stop_watches();
    if let Some(w) = by_recv.as_mut() {
        // Already queued events still arrive, then the end.
        assert_eq!(w.recv().await.map(|e| e.resource_version), Some(2));
        assert_eq!(w.recv().await.map(|e| e.resource_version), Some(3));
        assert!(w.recv().await.is_none());
    }

    let watch = store.watch(&pods(None), None, WatchStart::Now, 100);
    drop(store);
    if let Ok(w) = watch {
        let rest: Vec<StoreEvent> = w.collect().await;
        assert!(rest.is_empty());
    }
}

#[test]
fn creating_ten_thousand_small_objects_in_memory_is_fast() {
    let store = Store::in_memory(100_000);
    let started = Instant::now();
    for i in 0..10_000 {
        let key = pod("default", &format!("p{i}"));
        assert!(store.create(&key, obj(&key, "x")).is_ok());
    }
    // Generous bound for unoptimised test builds; release builds take a few milliseconds.
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
}

// ---------------------------------------------------------------------------------------------
// Durability

fn open(dir: &std::path::Path) -> Store {
    match Store::open(dir, 1000) {
        Ok(store) => store,
        Err(e) => panic!("open {}: {e}", dir.display()),
    }
}

fn tempdir() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => panic!("tempdir: {e}"),
    }
}

#[test]
fn reopening_restores_objects_and_continues_rvs() {
    let dir = tempdir();
    let before: Vec<Arc<Value>>;
    {
        let store = open(dir.path());
        for i in 0..5 {
            let key = pod("default", &format!("p{i}"));
            assert!(store.create(&key, obj(&key, "v1")).is_ok());
        }
        assert!(store.update(&pod("default", "p1"), obj(&pod("default", "p1"), "v2"), Some(2)).is_ok());
        assert!(store.delete(&pod("default", "p3"), None).is_ok());
        assert!(store.create(&node("n1"), obj(&node("n1"), "")).is_ok());
        assert_eq!(store.current_rv(), 8);
        before = store.list(&pods(None)).0;
    }
    let store = open(dir.path());
    assert_eq!(store.current_rv(), 8);
    let (after, list_rv) = store.list(&pods(None));
    assert_eq!(list_rv, 8);
    assert_eq!(after, before);
    assert_eq!(after.iter().map(|o| name_of(o)).collect::<Vec<_>>(), vec!["p0", "p1", "p2", "p4"]);
    assert_eq!(store.get(&pod("default", "p1")).as_deref().map(rv), Some(6));
    assert!(store.get(&node("n1")).is_some());
    // Optimistic concurrency keeps working with the restored RVs.
    assert!(matches!(
        store.update(&pod("default", "p1"), obj(&pod("default", "p1"), "x"), Some(2)),
        Err(StoreError::Conflict)
    ));
    let next = store.update(&pod("default", "p1"), obj(&pod("default", "p1"), "v3"), Some(6));
    assert_eq!(next.as_deref().ok().map(rv), Some(9));

    // The writes in the log are replayed into the watch history.
    let mut resumed = store.watch(&pods(None), None, WatchStart::After(5), 100).ok();
    let events = resumed.as_mut().map(drain).unwrap_or_default();
    assert_eq!(
        summary(&events),
        vec![
            (EventType::Modified, "p1".into(), 6),
            (EventType::Deleted, "p3".into(), 7),
            (EventType::Modified, "p1".into(), 9),
        ]
    );
}

#[test]
fn a_torn_or_corrupt_last_wal_line_is_ignored() {
    for tail in [&b"{\"rv\":4,\"op\":\"put\",\"g\":\"\",\"r\":\"po"[..], &b"\x00\x00\x00\n"[..]] {
        let dir = tempdir();
        {
            let store = open(dir.path());
            for i in 0..3 {
                let key = pod("default", &format!("p{i}"));
                assert!(store.create(&key, obj(&key, "")).is_ok());
            }
        }
        let wal = dir.path().join("wal.jsonl");
        let appended =
            std::fs::OpenOptions::new().append(true).open(&wal).and_then(|mut f| f.write_all(tail));
        assert!(appended.is_ok());
        {
            let store = open(dir.path());
            assert_eq!(store.current_rv(), 3);
            assert_eq!(store.list(&pods(None)).0.len(), 3);
            let key = pod("default", "p3");
            assert_eq!(store.create(&key, obj(&key, "")).as_deref().ok().map(rv), Some(4));
        }
        // The torn tail was cut, so the write after it is readable too.
        let store = open(dir.path());
        assert_eq!(store.current_rv(), 4);
        assert!(store.get(&pod("default", "p3")).is_some());
    }
}

#[test]
fn damage_before_the_last_wal_line_is_reported_as_corruption() {
    let dir = tempdir();
    {
        let store = open(dir.path());
        let key = pod("default", "a");
        assert!(store.create(&key, obj(&key, "")).is_ok());
    }
    let wal = dir.path().join("wal.jsonl");
    let original = std::fs::read(&wal).unwrap_or_default();
    let damaged = [b"not json\n".to_vec(), original].concat();
    assert!(std::fs::write(&wal, damaged).is_ok());
    assert!(matches!(Store::open(dir.path(), 10), Err(StoreError::Corrupt(_))));
}

#[test]
fn compaction_bounds_the_wal_and_keeps_everything_recoverable() {
    let dir = tempdir();
    let options = StoreOptions { history: 10_000, compact_after: 20 };
    let wal = dir.path().join("wal.jsonl");
    let wal_lines =
        || std::fs::read(&wal).map(|b| b.iter().filter(|c| **c == b'\n').count()).unwrap_or(usize::MAX);
    {
        let store = Store::open_with(dir.path(), options);
        let Ok(store) = store else { panic!("open failed") };
        for i in 0..10 {
            let key = pod("default", &format!("p{i}"));
            assert!(store.create(&key, obj(&key, "0")).is_ok());
        }
        for round in 0..50 {
            for i in 0..10 {
                let key = pod("default", &format!("p{i}"));
                assert!(store.update(&key, obj(&key, &round.to_string()), None).is_ok());
                assert!(wal_lines() <= 21, "WAL holds {} records", wal_lines());
            }
        }
        assert!(store.delete(&pod("default", "p9"), None).is_ok());
        assert_eq!(store.current_rv(), 511);
    }
    assert!(dir.path().join("snapshot.jsonl").exists());
    let total: u64 = std::fs::read_dir(dir.path())
        .map(|entries| entries.filter_map(|e| e.ok()?.metadata().ok()).map(|m| m.len()).sum())
        .unwrap_or(u64::MAX);
    assert!(total < 20_000, "data dir holds {total} bytes");

    let Ok(store) = Store::open_with(dir.path(), options) else { panic!("reopen failed") };
    assert_eq!(store.current_rv(), 511);
    let (objects, _) = store.list(&pods(None));
    assert_eq!(objects.len(), 9);
    assert!(objects.iter().all(|o| o["data"] == json!("49")));
    assert_eq!(store.get(&pod("default", "p0")).as_deref().map(rv), Some(501));
    // History before the snapshot is gone; later writes are resumable.
    assert!(store.history_floor() > 0);
    assert!(matches!(store.watch(&pods(None), None, WatchStart::After(1), 10), Err(StoreError::Gone { .. })));
    let floor = store.history_floor();
    assert!(store.watch(&pods(None), None, WatchStart::After(floor), 10).is_ok());
    let key = pod("default", "p0");
    assert_eq!(store.update(&key, obj(&key, "after"), Some(501)).as_deref().ok().map(rv), Some(512));
}

#[test]
fn wal_records_already_in_the_snapshot_are_skipped_after_a_crash_mid_compaction() {
    let dir = tempdir();
    let options = StoreOptions { history: 100, compact_after: 1_000 };
    let wal = dir.path().join("wal.jsonl");
    let wal_len = || std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(u64::MAX);
    let saved_wal;
    {
        let Ok(store) = Store::open_with(dir.path(), options) else { panic!("open failed") };
        for i in 0..5 {
            let key = pod("default", &format!("p{i}"));
            assert!(store.create(&key, obj(&key, "")).is_ok());
        }
        saved_wal = std::fs::read(&wal).unwrap_or_default();
    }
    {
        // Force a compaction by reopening with a tiny threshold and writing once.
        let tight = StoreOptions { compact_after: 1, ..options };
        let Ok(store) = Store::open_with(dir.path(), tight) else { panic!("open failed") };
        let key = pod("default", "p0");
        // The threshold is at least the number of live objects, so a few writes are needed.
        while !dir.path().join("snapshot.jsonl").exists() && store.current_rv() < 100 {
            assert!(store.update(&key, obj(&key, "compacted"), None).is_ok());
        }
        assert_eq!(store.current_rv(), 6);
        assert_eq!(wal_len(), 0);
    }
    // Simulate the crash: the snapshot is in place but the WAL was never emptied.
    assert!(std::fs::write(&wal, &saved_wal).is_ok());
    let Ok(store) = Store::open_with(dir.path(), options) else { panic!("reopen failed") };
    assert_eq!(store.current_rv(), 6);
    assert_eq!(store.list(&pods(None)).0.len(), 5);
    assert_eq!(
        store.get(&pod("default", "p0")).as_deref().map(|o| o["data"].clone()),
        Some(json!("compacted"))
    );
    let key = pod("default", "p5");
    assert_eq!(store.create(&key, obj(&key, "")).as_deref().ok().map(rv), Some(7));
}

#[test]
fn a_data_directory_is_used_by_one_store_at_a_time() {
    let dir = tempdir();
    let first = open(dir.path());
    let second = Store::open(dir.path(), 10);
    assert!(matches!(second, Err(StoreError::Io(_))));
    drop(first);
    assert!(Store::open(dir.path(), 10).is_ok());
}
