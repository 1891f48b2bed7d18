//! CloneSet features seen through the API, on both tiers: lifecycle hooks (preDelete,
//! inPlaceUpdate, preNormal, markPodNotReady, a cancelled scale-in); the rolling-update order
//! (weight and order priority, scatter) and `scaleStrategy.maxUnavailable`; the in-place
//! grace period and in-place resize; and the PVCs of `volumeClaimTemplates` (one per instance,
//! cleaned on scale-in, reused only when `enablePVCReuse` and the pod went away on its own).

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::{Duration, Instant},
};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use kruise_crds::apps::v1beta1::CloneSet;
use kruise_integration::{Scene, Skip};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
    runtime::watcher,
};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::cloneset_kit::{
    Kit, SETTLE, cloneset, image_of, is_ready, merge, pod_summary, restarts_of, revision_of, settled,
};

const STATE: &str = "lifecycle.apps.kruise.io/state";
const INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";
const BLOCKER: &str = "example.com/unready-blocker";
const HOLD_FINALIZER: &str = "example.com/hold";

// ---------------------------------------------------------------------------------------------
// Small readers and writers.

/// The pod's lifecycle state label (empty when absent).
fn lifecycle_of(pod: &Pod) -> &str {
    pod.labels().get(STATE).map_or("", String::as_str)
}

/// The status of one pod condition.
fn condition_of(pod: &Pod, kind: &str) -> Option<String> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == kind).map(|c| c.status.clone())
}

fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

fn uid_of(pod: &Pod) -> String {
    pod.uid().unwrap_or_default()
}

/// A JSON merge patch of a pod's metadata (labels set to null are removed).
async fn patch_pod_meta(kit: &Kit, pod: &str, metadata: Value) {
    kit.pods
        .patch(pod, &PatchParams::default(), &Patch::Merge(&json!({ "metadata": metadata })))
        .await
        .unwrap_or_else(|error| panic!("patching pod {pod}: {error}"));
}

async fn set_pod_label(kit: &Kit, pod: &str, key: &str, value: Option<&str>) {
    patch_pod_meta(kit, pod, json!({"labels": {key: value}})).await;
}

async fn set_replicas(kit: &Kit, name: &str, replicas: i32) {
    kit.patch(name, json!({"spec": {"replicas": replicas}})).await.unwrap();
}

/// Waits until a pod (by name) satisfies `check`; panics with the pod when it never does.
async fn wait_pod(kit: &Kit, name: &str, what: &str, check: impl Fn(&Pod) -> bool) -> Pod {
    let deadline = Instant::now() + SETTLE;
    loop {
        let pod = kit.pods.get_opt(name).await.unwrap();
        if let Some(pod) = &pod
            && check(pod)
        {
            return pod.clone();
        }
        if Instant::now() > deadline {
            let pod = pod.map(|mut p| {
                p.metadata.managed_fields = None;
                (p.metadata, p.status)
            });
            panic!(
                "timed out waiting for pod {name}: {what}\nnow: {}",
                serde_json::to_string_pretty(&pod).unwrap()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Checks for `period` that `check` keeps holding for the CloneSet's pods (a hook must hold).
async fn holds_for(kit: &Kit, name: &str, period: Duration, what: &str, check: impl Fn(&[Pod]) -> bool) {
    let until = Instant::now() + period;
    while Instant::now() < until {
        let pods = kit.pods_of(name).await;
        assert!(
            check(&pods),
            "CloneSet {name}: expected {what} to hold, pods now: {:#?}",
            pods.iter().map(summary).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// [`pod_summary`] plus the lifecycle state and the Kruise conditions.
fn summary(pod: &Pod) -> String {
    format!(
        "{} state={} KruisePodReady={:?} InPlaceUpdateReady={:?} labels={:?} finalizers={:?}",
        pod_summary(pod),
        lifecycle_of(pod),
        condition_of(pod, "KruisePodReady"),
        condition_of(pod, "InPlaceUpdateReady"),
        pod.labels(),
        pod.finalizers()
    )
}

/// Waits until the CloneSet is settled with every pod in lifecycle state Normal.
async fn wait_settled_normal(kit: &Kit, name: &str, replicas: i32) -> (CloneSet, Vec<Pod>) {
    kit.wait_for(name, &format!("{replicas} pods updated, ready and Normal"), |set, pods| {
        settled(set, pods, replicas) && pods.iter().all(|p| lifecycle_of(p) == "Normal")
    })
    .await
}

/// Waits until the CloneSet's events include `reason` (events are published in the background).
async fn wait_event(kit: &Kit, name: &str, reason: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if kit.event_reasons("CloneSet", name).await.contains_key(reason) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// A pod watcher recording, on every event, the order of revision changes and readiness counts.

#[derive(Default)]
struct Watched {
    synced: bool,
    current: BTreeMap<String, Pod>,
    /// The revision each pod had when first seen.
    first_revision: BTreeMap<String, String>,
    /// Pods in the order their revision label first changed.
    updated: Vec<String>,
    /// Most non-terminating pods not Ready at once (after the initial list).
    max_not_ready: usize,
}

/// Watches the pods labelled `app=<app>` from now on.
struct PodWatch {
    state: Arc<Mutex<Watched>>,
    task: tokio::task::JoinHandle<()>,
}

impl PodWatch {
    async fn start(kit: &Kit, app: &str) -> Self {
        let state = Arc::new(Mutex::new(Watched::default()));
        let config = watcher::Config::default().labels(&format!("app={app}"));
        let stream = watcher(kit.pods.clone(), config);
        let task = {
            let state = state.clone();
            tokio::spawn(async move {
                let mut stream = stream.boxed();
                while let Some(event) = stream.next().await {
                    let mut state = state.lock();
                    match event {
                        Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) => {
                            state.current.insert(pod.name_any(), pod);
                        }
                        Ok(watcher::Event::Delete(pod)) => {
                            state.current.remove(&pod.name_any());
                        }
                        Ok(watcher::Event::Init) => state.current.clear(),
                        Ok(watcher::Event::InitDone) => state.synced = true,
                        Err(_) => continue,
                    }
                    if !state.synced {
                        continue;
                    }
                    let Watched { current, first_revision, updated, max_not_ready, .. } = &mut *state;
                    let mut not_ready = 0;
                    for (name, pod) in current.iter() {
                        if !is_terminating(pod) && !is_ready(pod) {
                            not_ready += 1;
                        }
                        let revision = revision_of(pod).unwrap_or_default().to_string();
                        match first_revision.get(name) {
                            None => {
                                first_revision.insert(name.clone(), revision);
                            }
                            Some(first) if *first != revision && !updated.contains(name) => {
                                updated.push(name.clone())
                            }
                            Some(_) => {}
                        }
                    }
                    *max_not_ready = (*max_not_ready).max(not_ready);
                }
            })
        };
        let watch = Self { state, task };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !watch.state.lock().synced {
            assert!(Instant::now() < deadline, "the pod watch for app={app} never listed");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        watch
    }

    fn updated_order(&self) -> Vec<String> {
        self.state.lock().updated.clone()
    }

    fn max_not_ready(&self) -> usize {
        self.state.lock().max_not_ready
    }
}

impl Drop for PodWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Lifecycle hooks.

/// preDelete (labels handler, markPodNotReady), preDelete with a finalizer handler and a
/// scale-in cancelled by a scale-up, the inPlaceUpdate hook around an in-place update, and the
/// preNormal hook.
pub async fn lifecycle_hooks(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    pre_delete_with_label(&scene, &kit).await;
    pre_delete_with_finalizer(&scene, &kit).await;
    in_place_update_hook(&scene, &kit).await;
    pre_normal_hook(&scene, &kit).await;
    kit.shutdown().await;
    Ok(())
}

/// Scale-in of pods the preDelete label holds: the chosen pod waits in PreparingDelete, marked
/// NotReady, until its label goes.
async fn pre_delete_with_label(scene: &Scene, kit: &Kit) {
    let name = "hook-delete";
    kit.create(cloneset(
        name,
        2,
        "nginx:1.25",
        json!({"lifecycle": {"preDelete": {"labelsHandler": {BLOCKER: "true"}, "markPodNotReady": true}}}),
    ))
    .await
    .unwrap();
    let (_, pods) = wait_settled_normal(kit, name, 2).await;
    scene.observe("preDelete/states before", pods.iter().map(lifecycle_of).collect::<Vec<_>>());
    for pod in &pods {
        set_pod_label(kit, &pod.name_any(), BLOCKER, Some("true")).await;
    }

    set_replicas(kit, name, 1).await;
    let (set, pods) = kit
        .wait_for(name, "one pod held in PreparingDelete and marked NotReady", |_, pods| {
            pods.iter().any(|p| {
                lifecycle_of(p) == "PreparingDelete"
                    && condition_of(p, "KruisePodReady").as_deref() == Some("False")
                    && !is_ready(p)
            })
        })
        .await;
    let held = pods.iter().find(|p| lifecycle_of(p) == "PreparingDelete").unwrap().name_any();
    scene.observe(
        "preDelete/held",
        json!({
            "pods": pods.len(),
            "preparingDelete": pods.iter().filter(|p| lifecycle_of(p) == "PreparingDelete").count(),
            "terminating": pods.iter().filter(|p| is_terminating(p)).count(),
            "statusReplicas": set.status.as_ref().map(|s| s.replicas),
        }),
    );
    holds_for(kit, name, Duration::from_secs(3), "the held pod to stay, not deleted", |pods| {
        pods.len() == 2
            && pods.iter().all(|p| !is_terminating(p))
            && pods.iter().any(|p| p.name_any() == held && lifecycle_of(p) == "PreparingDelete")
    })
    .await;
    let other = pods.iter().find(|p| p.name_any() != held).unwrap();
    assert_eq!(lifecycle_of(other), "Normal", "the kept pod stays Normal: {}", summary(other));
    assert!(is_ready(other), "the kept pod stays Ready: {}", summary(other));

    // The hook lets go: the pod is deleted, the other one stays.
    set_pod_label(kit, &held, BLOCKER, None).await;
    let (_, pods) = kit.wait_settled(name, 1).await;
    assert_eq!(pods[0].name_any(), other.name_any(), "the kept pod survives");
    scene.observe("preDelete/after release", json!({"pods": pods.len(), "state": lifecycle_of(&pods[0])}));
}

/// A finalizer handler holds a pod in PreparingDelete; scaling back up takes it back
/// (PreparingNormal, then Normal) when no hook marks pods NotReady; the next scale-in holds it
/// again, and removing the finalizer lets it go.
async fn pre_delete_with_finalizer(scene: &Scene, kit: &Kit) {
    let name = "hook-finalizer";
    kit.create(cloneset(
        name,
        2,
        "nginx:1.25",
        json!({"lifecycle": {"preDelete": {"finalizersHandler": [HOLD_FINALIZER]}}}),
    ))
    .await
    .unwrap();
    let (_, pods) = kit.wait_settled(name, 2).await;
    for pod in &pods {
        patch_pod_meta(kit, &pod.name_any(), json!({"finalizers": [HOLD_FINALIZER]})).await;
    }
    let uids: BTreeSet<String> = pods.iter().map(uid_of).collect();

    set_replicas(kit, name, 1).await;
    let (_, pods) = kit
        .wait_for(name, "one pod in PreparingDelete", |_, pods| {
            pods.iter().any(|p| lifecycle_of(p) == "PreparingDelete")
        })
        .await;
    let held = pods.iter().find(|p| lifecycle_of(p) == "PreparingDelete").unwrap().name_any();
    let held_pod = pods.iter().find(|p| p.name_any() == held).unwrap();
    // Without markPodNotReady the pod stays Ready while it waits.
    assert!(is_ready(held_pod), "no markPodNotReady, the held pod stays Ready: {}", summary(held_pod));
    scene.observe(
        "preDeleteFinalizer/held",
        json!({"pods": pods.len(), "heldReady": is_ready(held_pod), "terminating": pods.iter().filter(|p| is_terminating(p)).count()}),
    );

    // Scale back up: the held pod is taken back instead of creating one.
    set_replicas(kit, name, 2).await;
    let (_, pods) = wait_settled_normal(kit, name, 2).await;
    let now: BTreeSet<String> = pods.iter().map(uid_of).collect();
    assert_eq!(now, uids, "the cancelled scale-in keeps the same pods");
    let taken_back = pods.iter().find(|p| p.name_any() == held).unwrap();
    assert_eq!(lifecycle_of(taken_back), "Normal", "{}", summary(taken_back));
    scene.observe(
        "preDeleteFinalizer/cancelled",
        json!({"samePods": now == uids, "state": lifecycle_of(taken_back)}),
    );

    // Scale in again, then release the hook.
    set_replicas(kit, name, 1).await;
    let (_, pods) = kit
        .wait_for(name, "one pod in PreparingDelete again", |_, pods| {
            pods.iter().any(|p| lifecycle_of(p) == "PreparingDelete")
        })
        .await;
    let held = pods.iter().find(|p| lifecycle_of(p) == "PreparingDelete").unwrap().name_any();
    holds_for(kit, name, Duration::from_secs(2), "the finalizer to hold the pod", |pods| {
        pods.len() == 2 && pods.iter().all(|p| !is_terminating(p))
    })
    .await;
    patch_pod_meta(kit, &held, json!({"finalizers": null})).await;
    let (_, pods) = kit.wait_settled(name, 1).await;
    assert_ne!(pods[0].name_any(), held);
    scene.observe("preDeleteFinalizer/after release", pods.len());
    // The survivor still carries its finalizer: drop it so nothing lingers.
    patch_pod_meta(kit, &pods[0].name_any(), json!({"finalizers": null})).await;
}

/// The inPlaceUpdate hook: an image change waits in PreparingUpdate (NotReady, image unchanged)
/// while the label is on; without it the pod updates in place and ends in Updated (Ready) until
/// the label is back, then Normal.
async fn in_place_update_hook(scene: &Scene, kit: &Kit) {
    let name = "hook-update";
    kit.create(cloneset(
        name,
        1,
        "nginx:1.25",
        json!({
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}},
            "lifecycle": {"inPlaceUpdate": {"labelsHandler": {BLOCKER: "true"}, "markPodNotReady": true}}
        }),
    ))
    .await
    .unwrap();
    let (_, pods) = kit.wait_settled(name, 1).await;
    let pod = pods[0].name_any();
    let (uid, revision, restarts) =
        (uid_of(&pods[0]), revision_of(&pods[0]).unwrap().to_string(), restarts_of(&pods[0]));
    set_pod_label(kit, &pod, BLOCKER, Some("true")).await;

    kit.set_image(name, "nginx:1.26").await;
    let held = wait_pod(kit, &pod, "PreparingUpdate and NotReady", |p| {
        lifecycle_of(p) == "PreparingUpdate"
            && condition_of(p, "KruisePodReady").as_deref() == Some("False")
            && !is_ready(p)
    })
    .await;
    assert_eq!(image_of(&held), "nginx:1.25", "the hook holds the image back");
    holds_for(
        kit,
        name,
        Duration::from_secs(3),
        "the pod to wait in PreparingUpdate, old image and revision",
        |pods| {
            pods.len() == 1
                && lifecycle_of(&pods[0]) == "PreparingUpdate"
                && image_of(&pods[0]) == "nginx:1.25"
                && revision_of(&pods[0]) == Some(revision.as_str())
        },
    )
    .await;
    scene.observe(
        "inPlaceUpdateHook/held",
        json!({"state": lifecycle_of(&held), "image": image_of(&held), "KruisePodReady": condition_of(&held, "KruisePodReady"), "ready": is_ready(&held)}),
    );

    // Release: updated in place, then Updated (the hook is not back yet), Ready again.
    set_pod_label(kit, &pod, BLOCKER, None).await;
    let updated = wait_pod(kit, &pod, "updated in place, lifecycle Updated and Ready", |p| {
        image_of(p) == "nginx:1.26"
            && lifecycle_of(p) == "Updated"
            && condition_of(p, "InPlaceUpdateReady").as_deref() == Some("True")
            && is_ready(p)
    })
    .await;
    assert_eq!(uid_of(&updated), uid, "the same pod, updated in place");
    assert_ne!(revision_of(&updated), Some(revision.as_str()));
    scene.observe(
        "inPlaceUpdateHook/updated",
        json!({
            "samePod": uid_of(&updated) == uid,
            "state": lifecycle_of(&updated),
            "restartsAdded": restarts_of(&updated) - restarts,
            "KruisePodReady": condition_of(&updated, "KruisePodReady"),
            "ready": is_ready(&updated),
        }),
    );

    // The hook label comes back: Normal.
    set_pod_label(kit, &pod, BLOCKER, Some("true")).await;
    let normal = wait_pod(kit, &pod, "lifecycle Normal", |p| lifecycle_of(p) == "Normal").await;
    kit.wait_settled(name, 1).await;
    scene.observe("inPlaceUpdateHook/rearmed", lifecycle_of(&normal));
}

/// preNormal: pods become Ready but stay PreparingNormal (not available) until every handler is
/// on the pod.
async fn pre_normal_hook(scene: &Scene, kit: &Kit) {
    let name = "hook-normal";
    let registered = "example.com/registered";
    kit.create(cloneset(
        name,
        2,
        "nginx:1.25",
        json!({"lifecycle": {"preNormal": {"labelsHandler": {registered: "true"}}}}),
    ))
    .await
    .unwrap();
    let (_, pods) = kit
        .wait_for(name, "2 pods Ready", |set, pods| {
            set.status.as_ref().is_some_and(|s| s.ready_replicas == 2) && pods.len() == 2
        })
        .await;
    holds_for(kit, name, Duration::from_secs(2), "Ready pods to stay PreparingNormal", |pods| {
        pods.len() == 2 && pods.iter().all(|p| lifecycle_of(p) == "PreparingNormal")
    })
    .await;
    let set = kit.sets.get(name).await.unwrap();
    let status = set.status.unwrap();
    assert_eq!(status.available_replicas, 0, "PreparingNormal pods are not available");
    scene.observe(
        "preNormal/waiting",
        json!({"states": pods.iter().map(lifecycle_of).collect::<Vec<_>>(), "ready": status.ready_replicas, "available": status.available_replicas}),
    );

    let first = pods[0].name_any();
    set_pod_label(kit, &first, registered, Some("true")).await;
    let (set, pods) = kit
        .wait_for(name, "the registered pod Normal and available", |set, pods| {
            pods.iter().any(|p| p.name_any() == first && lifecycle_of(p) == "Normal")
                && set.status.as_ref().is_some_and(|s| s.available_replicas == 1)
        })
        .await;
    let states: BTreeMap<bool, String> =
        pods.iter().map(|p| (p.name_any() == first, lifecycle_of(p).to_string())).collect();
    assert_eq!(states.get(&false).map(String::as_str), Some("PreparingNormal"), "the other pod still waits");
    scene.observe(
        "preNormal/one registered",
        json!({"registered": states.get(&true), "other": states.get(&false), "available": set.status.map(|s| s.available_replicas)}),
    );
}

// ---------------------------------------------------------------------------------------------
// 2. Update order and scale-up limit.

/// Rolling in-place updates one pod at a time follow `priorityStrategy` (weights, then ordered
/// label values) and `scatterStrategy`; a scale-up with `scaleStrategy.maxUnavailable: 2` never
/// has more than two unready pods.
pub async fn priority_scatter_and_scale_limit(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    let one_at_a_time = |extra: Value| {
        let mut rolling = json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1});
        merge(&mut rolling, extra);
        json!({"updateStrategy": {"rollingUpdate": rolling}})
    };
    let tier = |value: &str| json!({"matchLabels": {"example.com/tier": value}});
    let weight = kit.create(cloneset(
        "by-weight",
        4,
        "nginx:1.25",
        one_at_a_time(json!({"priorityStrategy": {"weightPriority": [
            {"weight": 10, "matchSelector": tier("low")},
            {"weight": 100, "matchSelector": tier("high")},
            {"weight": 50, "matchSelector": tier("mid")},
        ]}})),
    ));
    let order = kit.create(cloneset(
        "by-order",
        4,
        "nginx:1.25",
        one_at_a_time(json!({"priorityStrategy": {"orderPriority": [{"orderedKey": "example.com/order"}]}})),
    ));
    let scatter = kit.create(cloneset(
        "scatter",
        6,
        "nginx:1.25",
        one_at_a_time(json!({
            "priorityStrategy": {"weightPriority": [{"weight": 100, "matchSelector": {"matchLabels": {"example.com/zone": "a"}}}]},
            "scatterStrategy": [{"key": "example.com/zone", "value": "a"}],
        })),
    ));
    let (weight, order, scatter) = tokio::join!(weight, order, scatter);
    for created in [weight, order, scatter] {
        created.unwrap();
    }

    // Label the pods: each CloneSet's pods by name get one value each.
    let plans: [(&str, usize, &str, Vec<Option<&str>>); 3] = [
        ("by-weight", 4, "example.com/tier", vec![Some("mid"), None, Some("high"), Some("low")]),
        ("by-order", 4, "example.com/order", vec![Some("o-3"), Some("o-12"), Some("o-1"), Some("o-7")]),
        (
            "scatter",
            6,
            "example.com/zone",
            vec![Some("b"), Some("a"), Some("b"), Some("a"), Some("a"), Some("b")],
        ),
    ];
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    let mut watches = Vec::new();
    for (name, replicas, key, labels) in &plans {
        let (_, pods) = kit.wait_settled(name, *replicas as i32).await;
        for (pod, value) in pods.iter().zip(labels) {
            if let Some(value) = value {
                set_pod_label(&kit, &pod.name_any(), key, Some(value)).await;
            }
            values.insert(pod.name_any(), value.unwrap_or("none").to_string());
        }
        watches.push(PodWatch::start(&kit, name).await);
    }
    for (name, _, _, _) in &plans {
        kit.set_image(name, "nginx:1.26").await;
    }
    for ((name, replicas, _, _), watch) in plans.iter().zip(&watches) {
        let (_, pods) = kit.wait_settled(name, *replicas as i32).await;
        assert!(pods.iter().all(|p| image_of(p) == "nginx:1.26"));
        let order: Vec<&str> = watch.updated_order().iter().map(|pod| values[pod].as_str()).collect();
        let expected: &[&str] = match *name {
            // Higher total weight first; a pod no term matches last.
            "by-weight" => &["high", "mid", "low", "none"],
            // The bigger number at the end of the ordered key's value first.
            "by-order" => &["o-12", "o-7", "o-3", "o-1"],
            // Weight alone would take a, a, a first; scatter spreads them: the first of them,
            // then one other, then the next, and the last "a" pod once no "b" pod can sit
            // between; then the rest.
            _ => &["a", "b", "a", "a", "b", "b"],
        };
        assert_eq!(order, expected, "update order of {name} (pods updated: {:?})", watch.updated_order());
        scene.observe(format!("updateOrder/{name}"), order);
    }
    drop(watches);

    // Scale-up limited by scaleStrategy.maxUnavailable.
    let name = "scale-limit";
    kit.create(cloneset(name, 0, "nginx:1.25", json!({"scaleStrategy": {"maxUnavailable": 2}})))
        .await
        .unwrap();
    kit.wait_settled(name, 0).await;
    let watch = PodWatch::start(&kit, name).await;
    set_replicas(&kit, name, 6).await;
    kit.wait_settled(name, 6).await;
    let most = watch.max_not_ready();
    assert!(most <= 2, "at most 2 pods may be unready while scaling up, saw {most}");
    assert!(most >= 1, "the watch saw the new pods before they were Ready");
    let limited = wait_event(&kit, name, "ScaleUpLimited").await;
    assert!(limited, "a ScaleUpLimited event: {:?}", kit.event_reasons("CloneSet", name).await);
    scene.note(format!(
        "scale-up 0 -> 6 with scaleStrategy.maxUnavailable 2: at most {most} unready pods at once"
    ));
    scene.observe("scaleLimit", json!({"atMostTwoUnready": most <= 2, "scaleUpLimitedEvent": limited}));

    kit.shutdown().await;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 3. In-place grace period and resize.

/// `inPlaceUpdateStrategy.gracePeriodSeconds`: the pod is marked not ready and labelled with the
/// new revision first, its spec changes only after the grace period. A cpu/memory-only change
/// is applied in place through resize: same pods, no restart, never unready.
pub async fn grace_and_resize(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    grace_period(&scene, &kit).await;
    resize(&scene, &kit).await;
    kit.shutdown().await;
    Ok(())
}

async fn grace_period(scene: &Scene, kit: &Kit) {
    let name = "grace";
    kit.create(cloneset(
        name,
        1,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {
            "podUpdatePolicy": "InPlaceIfPossible",
            "inPlaceUpdateStrategy": {"gracePeriodSeconds": 5}
        }}}),
    ))
    .await
    .unwrap();
    let (_, pods) = kit.wait_settled(name, 1).await;
    let pod = pods[0].name_any();
    let (uid, revision, restarts) =
        (uid_of(&pods[0]), revision_of(&pods[0]).unwrap().to_string(), restarts_of(&pods[0]));

    kit.set_image(name, "nginx:1.26").await;
    let marked =
        wait_pod(kit, &pod, "the new revision label", |p| revision_of(p) != Some(revision.as_str())).await;
    let labelled_at = Instant::now();
    assert_eq!(condition_of(&marked, "InPlaceUpdateReady").as_deref(), Some("False"), "{}", summary(&marked));
    assert_eq!(image_of(&marked), "nginx:1.25", "the spec waits out the grace period");
    assert!(
        marked.annotations().contains_key("apps.kruise.io/inplace-update-grace"),
        "the pending spec is kept in the grace annotation: {:?}",
        marked.annotations()
    );
    scene.observe(
        "grace/labelled",
        json!({"InPlaceUpdateReady": condition_of(&marked, "InPlaceUpdateReady"), "image": image_of(&marked), "state": lifecycle_of(&marked)}),
    );

    tokio::time::sleep(Duration::from_secs(2).saturating_sub(labelled_at.elapsed())).await;
    let still = kit.pods.get(&pod).await.unwrap();
    assert_eq!(image_of(&still), "nginx:1.25", "2 s into a 5 s grace period the image is unchanged");
    assert!(!is_ready(&still), "the pod is not Ready during the grace period: {}", summary(&still));
    scene.observe("grace/after 2s", json!({"image": image_of(&still), "ready": is_ready(&still)}));

    let changed = wait_pod(kit, &pod, "the new image in the spec", |p| image_of(p) == "nginx:1.26").await;
    let waited = labelled_at.elapsed();
    assert!(
        waited >= Duration::from_secs(3),
        "the spec changed {:.1} s after the revision label, before the 5 s grace period",
        waited.as_secs_f64()
    );
    assert!(!changed.annotations().contains_key("apps.kruise.io/inplace-update-grace"));
    scene.note(format!(
        "grace period 5 s: spec image changed {:.1} s after the revision label",
        waited.as_secs_f64()
    ));
    let (_, pods) = kit.wait_settled(name, 1).await;
    assert_eq!(uid_of(&pods[0]), uid, "updated in place");
    scene.observe(
        "grace/done",
        json!({"samePod": uid_of(&pods[0]) == uid, "restartsAdded": restarts_of(&pods[0]) - restarts, "state": lifecycle_of(&pods[0])}),
    );
}

/// The requests of the first container's status (what the kubelet reports it runs with).
fn status_requests(pod: &Pod) -> Option<BTreeMap<String, String>> {
    let status = pod.status.as_ref()?.container_statuses.as_ref()?.first()?;
    let requests = status.resources.as_ref()?.requests.as_ref()?;
    Some(requests.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect())
}

fn spec_requests(pod: &Pod) -> BTreeMap<String, String> {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers[0].resources.as_ref())
        .and_then(|r| r.requests.as_ref())
        .map_or_else(BTreeMap::new, |requests| {
            requests.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect()
        })
}

async fn resize(scene: &Scene, kit: &Kit) {
    let name = "resize";
    let container = |cpu: &str, memory: &str| {
        json!({"name": "main", "image": "nginx:1.25", "resources": {
            "requests": {"cpu": cpu, "memory": memory},
            "limits": {"cpu": "500m", "memory": "256Mi"}
        }})
    };
    kit.create(cloneset(
        name,
        2,
        "nginx:1.25",
        json!({
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2}},
            "template": {"spec": {"containers": [container("100m", "64Mi")]}}
        }),
    ))
    .await
    .unwrap();
    let (_, before) = kit.wait_settled(name, 2).await;
    let watch = PodWatch::start(kit, name).await;
    kit.patch(name, json!({"spec": {"template": {"spec": {"containers": [container("200m", "128Mi")]}}}}))
        .await
        .unwrap();
    let wanted: BTreeMap<String, String> =
        [("cpu", "200m"), ("memory", "128Mi")].map(|(k, v)| (k.to_string(), v.to_string())).into();
    let (_, after) = kit
        .wait_for(name, "both pods resized in place and reported", |set, pods| {
            settled(set, pods, 2)
                && pods
                    .iter()
                    .all(|p| spec_requests(p) == wanted && status_requests(p).as_ref() == Some(&wanted))
        })
        .await;
    let before_uids: BTreeSet<String> = before.iter().map(uid_of).collect();
    let after_uids: BTreeSet<String> = after.iter().map(uid_of).collect();
    assert_eq!(before_uids, after_uids, "resized in place, not recreated");
    let restarts: Vec<i32> = after.iter().map(restarts_of).collect();
    assert!(restarts.iter().all(|r| *r == 0), "a resize needs no restart: {restarts:?}");
    let unready = watch.max_not_ready();
    assert_eq!(unready, 0, "a cpu/memory-only resize keeps the pods Ready");
    scene.observe(
        "resize",
        json!({
            "samePods": before_uids == after_uids,
            "restarts": restarts,
            "specRequests": spec_requests(&after[0]),
            "statusRequests": status_requests(&after[0]),
            "everUnready": unready > 0,
        }),
    );
}

// ---------------------------------------------------------------------------------------------
// 4. volumeClaimTemplates.

async fn pvcs_of(kit: &Kit, app: &str) -> Vec<PersistentVolumeClaim> {
    let api: Api<PersistentVolumeClaim> = Api::namespaced(kit.client.clone(), "default");
    let mut claims = api.list(&ListParams::default().labels(&format!("app={app}"))).await.unwrap().items;
    claims.sort_by_key(|c| c.name_any());
    claims
}

/// Waits until the live (not terminating) PVCs of the CloneSet are exactly one per pod, each
/// named `data-<cloneset>-<instance id>`.
async fn wait_claims_match_pods(
    kit: &Kit,
    name: &str,
    replicas: i32,
) -> (Vec<Pod>, Vec<PersistentVolumeClaim>) {
    let deadline = Instant::now() + SETTLE;
    loop {
        let (_, pods) = kit.wait_settled(name, replicas).await;
        let claims: Vec<PersistentVolumeClaim> = pvcs_of(kit, name)
            .await
            .into_iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
            .collect();
        let wanted: BTreeSet<String> =
            pods.iter().map(|p| format!("data-{name}-{}", p.labels()[INSTANCE_ID])).collect();
        let live: BTreeSet<String> = claims.iter().map(|c| c.name_any()).collect();
        let all = pvcs_of(kit, name).await;
        if wanted == live && all.len() == claims.len() {
            return (pods, claims);
        }
        if Instant::now() > deadline {
            panic!(
                "timed out waiting for the PVCs of {name} to match its pods: want {wanted:?}, have {:?}",
                all.iter()
                    .map(|c| (c.name_any(), c.metadata.deletion_timestamp.is_some()))
                    .collect::<Vec<_>>()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Each pod's `data` volume claims its own PVC, which the CloneSet controls.
fn claims_wired(name: &str, pods: &[Pod], claims: &[PersistentVolumeClaim], set_uid: &str) -> bool {
    let by_name: BTreeMap<String, &PersistentVolumeClaim> =
        claims.iter().map(|c| (c.name_any(), c)).collect();
    pods.iter().all(|pod| {
        let id = &pod.labels()[INSTANCE_ID];
        let claim_name = format!("data-{name}-{id}");
        let mounted = pod.spec.as_ref().and_then(|s| s.volumes.as_ref()).is_some_and(|volumes| {
            volumes.iter().any(|v| {
                v.name == "data"
                    && v.persistent_volume_claim.as_ref().is_some_and(|c| c.claim_name == claim_name)
            })
        });
        let claim = by_name.get(&claim_name);
        let owned = claim.is_some_and(|c| {
            c.owner_references()
                .iter()
                .any(|r| r.controller == Some(true) && r.kind == "CloneSet" && r.uid == set_uid)
        });
        let labelled = claim.is_some_and(|c| c.labels().get(INSTANCE_ID) == Some(id));
        mounted && owned && labelled
    })
}

/// Claim name -> UID.
fn claim_uids(claims: &[PersistentVolumeClaim]) -> BTreeMap<String, String> {
    claims.iter().map(|c| (c.name_any(), c.uid().unwrap_or_default())).collect()
}

/// Volumes for the claims (the real tier binds them; kube-scheduler waits for that, the
/// embedded tier's scheduler does not look at volumes).
async fn create_volumes(kit: &Kit, count: usize) {
    let api: Api<PersistentVolume> = Api::all(kit.client.clone());
    for n in 0..count {
        let volume: PersistentVolume = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": format!("it-volume-{n}")},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain",
                "hostPath": {"path": format!("/tmp/kruise-it-volume-{n}")}
            }
        }))
        .unwrap();
        api.create(&PostParams::default(), &volume).await.unwrap();
    }
}

/// A pod deleted by the user (not by the controller), waited for until it is gone.
async fn delete_pod_and_wait(kit: &Kit, pod: &Pod) {
    kit.pods.delete(&pod.name_any(), &DeleteParams::default()).await.unwrap();
    let deadline = Instant::now() + SETTLE;
    while kit.pods.get_opt(&pod.name_any()).await.unwrap().is_some_and(|p| p.uid() == pod.uid()) {
        assert!(Instant::now() < deadline, "pod {} was never removed", pod.name_any());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// PVCs from volumeClaimTemplates: one per instance id, owned by the CloneSet, mounted by its
/// pod; deleted with the pod on scale-in and on a recreate update (also with `enablePVCReuse`);
/// a pod deleted by someone else is replaced by a new instance with new PVCs, or, with
/// `enablePVCReuse`, by the same instance id on the same PVC.
pub async fn volume_claims(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    create_volumes(&kit, 8).await;
    scene.note(
        "8 hostPath PersistentVolumes are created first: on the real tier the claims must bind before \
         kube-scheduler places the pods (the embedded scheduler does not look at volumes; PVC phases are \
         not compared)",
    );
    let name = "claims";
    kit.create(cloneset(
        name,
        3,
        "nginx:1.25",
        json!({
            "template": {"spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                "name": "main", "image": "nginx:1.25", "volumeMounts": [{"name": "data", "mountPath": "/data"}]
            }]}},
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }]
        }),
    ))
    .await
    .unwrap();
    let set_uid = kit.sets.get(name).await.unwrap().uid().unwrap();

    // One PVC per pod.
    let (pods, claims) = wait_claims_match_pods(&kit, name, 3).await;
    assert!(
        claims_wired(name, &pods, &claims, &set_uid),
        "each pod mounts its own PVC owned by the CloneSet"
    );
    scene.observe("claims/created", json!({"pods": pods.len(), "claims": claims.len(), "wired": true}));

    // Scale-in deletes the PVC of the removed pod.
    set_replicas(&kit, name, 2).await;
    let (pods, claims) = wait_claims_match_pods(&kit, name, 2).await;
    assert!(claims_wired(name, &pods, &claims, &set_uid));
    scene.observe("claims/scaled in", claims.len());

    // A pod deleted by the user, without PVC reuse: a new instance id, new PVC, old one cleaned.
    let victim = pods[0].clone();
    let old_claims = claim_uids(&claims);
    delete_pod_and_wait(&kit, &victim).await;
    let (pods, claims) = wait_claims_match_pods(&kit, name, 2).await;
    assert!(claims_wired(name, &pods, &claims, &set_uid));
    let ids: BTreeSet<&str> = pods.iter().map(|p| p.labels()[INSTANCE_ID].as_str()).collect();
    assert!(!ids.contains(victim.labels()[INSTANCE_ID].as_str()), "without reuse the instance id is new");
    let kept = claim_uids(&claims).iter().filter(|(n, uid)| old_claims.get(*n) == Some(*uid)).count();
    assert_eq!(kept, 1, "only the untouched pod keeps its PVC");
    scene.observe("claims/pod deleted without reuse", json!({"newInstance": true, "claimsKept": kept}));

    // With reuse: the replacement gets the same instance id (so the same name) and the same PVC.
    kit.patch(name, json!({"spec": {"scaleStrategy": {"enablePVCReuse": true}}})).await.unwrap();
    let victim = pods[0].clone();
    let old_claims = claim_uids(&claims);
    delete_pod_and_wait(&kit, &victim).await;
    let (pods, claims) = wait_claims_match_pods(&kit, name, 2).await;
    assert!(claims_wired(name, &pods, &claims, &set_uid));
    let replacement = pods.iter().find(|p| p.name_any() == victim.name_any());
    assert!(replacement.is_some_and(|p| p.uid() != victim.uid()), "a new pod with the old instance id");
    assert_eq!(claim_uids(&claims), old_claims, "the same PVCs, reused");
    scene.observe(
        "claims/pod deleted with reuse",
        json!({"sameInstance": replacement.is_some(), "sameClaims": claim_uids(&claims) == old_claims}),
    );

    // Scale-in deletes the PVC even with reuse enabled (the controller deleted the pod).
    set_replicas(&kit, name, 1).await;
    let (pods, claims) = wait_claims_match_pods(&kit, name, 1).await;
    assert!(claims_wired(name, &pods, &claims, &set_uid));
    scene.observe("claims/scaled in with reuse", claims.len());

    // A recreate update deletes the pod with its PVC and makes a new instance with a new PVC.
    let before = pods[0].clone();
    let old_claims = claim_uids(&claims);
    kit.set_image(name, "nginx:1.26").await;
    let (pods, claims) = wait_claims_match_pods(&kit, name, 1).await;
    assert!(claims_wired(name, &pods, &claims, &set_uid));
    assert_ne!(pods[0].uid(), before.uid(), "recreated");
    assert_eq!(image_of(&pods[0]), "nginx:1.26");
    let reused = claim_uids(&claims).iter().any(|(n, uid)| old_claims.get(n) == Some(uid));
    assert!(
        !reused,
        "a recreate update gets a new PVC: before {old_claims:?}, after {:?}",
        claim_uids(&claims)
    );
    scene.observe(
        "claims/recreate update",
        json!({"newInstance": pods[0].labels()[INSTANCE_ID] != before.labels()[INSTANCE_ID], "claimReused": reused}),
    );

    kit.shutdown().await;
    Ok(())
}
