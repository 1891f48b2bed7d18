//! SidecarSets end to end, on both tiers: three simulated nodes and the Kruise manager (pod
//! webhook, SidecarSet webhooks and controller).
//!
//! A CloneSet's new pods get the SidecarSet's sidecar. A sidecar image change then upgrades it in
//! place on every matched pod: the pod keeps its UID, the app container is not restarted, the
//! sidecar is restarted once. `partition` keeps pods back and `paused` stops the rollout.
//!
//! A hot-upgrade sidecar runs as two containers: the new image goes into the idle one, which
//! becomes the working one once ready, and only then the old one goes back to the empty image,
//! so at every pod state a watch observes some sidecar container is ready on a real image.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1beta1::SidecarSet;
use kruise_integration::{Scene, Skip};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
    runtime::watcher,
};
use serde_json::json;

use crate::cloneset_kit::{Kit, SETTLE, cloneset};

fn container_names(pod: &Pod) -> Vec<String> {
    pod.spec.as_ref().unwrap().containers.iter().map(|c| c.name.clone()).collect()
}

fn image(pod: &Pod, container: &str) -> String {
    pod.spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .find(|c| c.name == container)
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
}

fn restarts(pod: &Pod, container: &str) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|all| all.iter().find(|s| s.name == container))
        .map_or(-1, |s| s.restart_count)
}

fn running_image(pod: &Pod, container: &str) -> String {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|all| all.iter().find(|s| s.name == container))
        .map(|s| s.image.clone())
        .unwrap_or_default()
}

async fn wait_status(
    sets: &Api<SidecarSet>,
    name: &str,
    what: &str,
    check: impl Fn(&SidecarSet) -> bool,
) -> SidecarSet {
    let deadline = Instant::now() + SETTLE;
    loop {
        let set = sets.get(name).await.unwrap();
        if check(&set) {
            return set;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for SidecarSet {name}: {what}; status {:?}",
            set.status
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn counts(set: &SidecarSet) -> (i32, i32, i32, i32) {
    let status = set.status.clone().unwrap_or_default();
    (status.matched_pods, status.updated_pods, status.ready_pods, status.updated_ready_pods)
}

pub async fn inject_and_upgrade_in_place(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    let sets: Api<SidecarSet> = Api::all(kit.client.clone());
    wait_served(&sets).await;

    // An invalid SidecarSet is refused with the fields at fault, and nothing is stored.
    let invalid: SidecarSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "broken"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "containers": [{"name": "agent"}, {"name": "agent", "image": "log-agent:1"}],
            "updateStrategy": {"partition": "120%"},
        },
    }))
    .unwrap();
    match sets.create(&PostParams::default(), &invalid).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            let fields: Vec<String> =
                status.details.iter().flat_map(|d| d.causes.iter()).map(|c| c.field.clone()).collect();
            for field in ["spec.containers[0].image", "spec.containers[1].name"] {
                assert!(fields.iter().any(|f| f == field), "{field} named in {fields:?}: {}", status.message);
            }
        }
        other => panic!("an invalid SidecarSet was not refused: {other:?}"),
    }
    assert!(sets.get_opt("broken").await.unwrap().is_none(), "nothing stored");

    let set: SidecarSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "logs"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "containers": [{"name": "agent", "image": "log-agent:1"}],
            "updateStrategy": {"maxUnavailable": 1, "partition": 1},
        },
    }))
    .unwrap();
    sets.create(&PostParams::default(), &set).await.unwrap();

    kit.create(cloneset("web", 3, "nginx:1.25", json!({}))).await.unwrap();
    let (_, pods) = kit.wait_settled("web", 3).await;
    for pod in &pods {
        assert_eq!(container_names(pod), ["agent", "main"], "{}", pod.name_any());
    }
    let injected =
        wait_status(&sets, "logs", "3 pods matched, updated and ready", |s| counts(s) == (3, 3, 3, 3)).await;
    let first_revision = injected.status.clone().unwrap().latest_revision;
    assert!(!first_revision.is_empty());
    let uids: Vec<String> = pods.iter().map(|p| p.uid().unwrap()).collect();

    // partition 1: two of the three pods get the new sidecar, one keeps the old one.
    let image_patch = json!({"spec": {"containers": [{"name": "agent", "image": "log-agent:2"}]}});
    sets.patch("logs", &PatchParams::default(), &Patch::Merge(&image_patch)).await.unwrap();
    let partial = wait_status(&sets, "logs", "2 pods updated and ready", |s| {
        let (matched, updated, _, updated_ready) = counts(s);
        matched == 3 && updated == 2 && updated_ready == 2
    })
    .await;
    assert_ne!(partial.status.unwrap().latest_revision, first_revision, "a new revision for the new image");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(counts(&sets.get("logs").await.unwrap()).1, 2, "the partition holds the third pod back");

    // paused: lowering the partition upgrades nothing until resumed.
    let pause = json!({"spec": {"updateStrategy": {"paused": true, "partition": 0}}});
    sets.patch("logs", &PatchParams::default(), &Patch::Merge(&pause)).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(counts(&sets.get("logs").await.unwrap()).1, 2, "paused: no pod upgraded");
    let resume = json!({"spec": {"updateStrategy": {"paused": false}}});
    sets.patch("logs", &PatchParams::default(), &Patch::Merge(&resume)).await.unwrap();
    wait_status(&sets, "logs", "3 pods updated and ready", |s| counts(s) == (3, 3, 3, 3)).await;

    let pods = kit.pods_of("web").await;
    let now_uids: Vec<String> = pods.iter().map(|p| p.uid().unwrap()).collect();
    assert_eq!(now_uids, uids, "upgraded in place: the same pods");
    for pod in &pods {
        let name = pod.name_any();
        assert_eq!(image(pod, "agent"), "log-agent:2", "{name}");
        assert_eq!(running_image(pod, "agent"), "log-agent:2", "{name}");
        assert_eq!(restarts(pod, "agent"), 1, "{name}: the sidecar restarted once");
        assert_eq!(restarts(pod, "main"), 0, "{name}: the app container was not restarted");
        assert_eq!(image(pod, "main"), "nginx:1.25", "{name}");
    }

    // A change beyond the image cannot be made in place: no pod is upgraded, and the counts
    // of updated pods drop to zero.
    let env_patch = json!({"spec": {"containers": [{"name": "agent", "image": "log-agent:2", "env": [{"name": "LEVEL", "value": "debug"}]}]}});
    sets.patch("logs", &PatchParams::default(), &Patch::Merge(&env_patch)).await.unwrap();
    wait_status(&sets, "logs", "3 matched and ready, none updated", |s| counts(s) == (3, 0, 3, 0)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    for pod in &kit.pods_of("web").await {
        assert_eq!(restarts(pod, "agent"), 1, "{}: not restarted for the env change", pod.name_any());
    }
    kit.shutdown().await;
    Ok(())
}

async fn wait_served(sets: &Api<SidecarSet>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while sets.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(Instant::now() < deadline, "SidecarSets are not served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The working container of hot-upgrade sidecar `sidecar`, by the pod's annotation.
fn working_container(pod: &Pod, sidecar: &str) -> Option<String> {
    let text = pod.annotations().get("kruise.io/sidecarset-working-hotupgrade-container")?;
    let working: BTreeMap<String, String> = serde_json::from_str(text).ok()?;
    working.get(sidecar).cloned()
}

/// Names of `containers` that are running, ready and not on `empty_image`, by the pod status.
fn ready_on_real_image(pod: &Pod, containers: &[&str], empty_image: &str) -> Vec<String> {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .filter(|s| containers.contains(&s.name.as_str()) && s.ready && s.image != empty_image)
        .filter(|s| s.state.as_ref().is_some_and(|state| state.running.is_some()))
        .map(|s| s.name.clone())
        .collect()
}

pub async fn hot_upgrade_keeps_a_sidecar_ready(scene: Scene) -> Result<(), Skip> {
    const EMPTY: &str = "mesh-proxy:empty";
    // A proxy is ready 2 s after it starts, so an upgrade that stopped the old one before the
    // new one is ready would show pod states with no ready sidecar.
    let probe = json!({"exec": {"command": ["true"]}, "initialDelaySeconds": 2, "periodSeconds": 1});

    let kit = Kit::start(&scene).await;
    let sets: Api<SidecarSet> = Api::all(kit.client.clone());
    wait_served(&sets).await;
    let set: SidecarSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "mesh"},
        "spec": {
            "selector": {"matchLabels": {"app": "shop"}},
            "containers": [{
                "name": "proxy", "image": "mesh-proxy:1",
                "readinessProbe": probe.clone(),
                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": EMPTY},
            }],
            "updateStrategy": {"maxUnavailable": 1},
        },
    }))
    .unwrap();
    sets.create(&PostParams::default(), &set).await.unwrap();

    kit.create(cloneset("shop", 2, "nginx:1.25", json!({}))).await.unwrap();
    let (_, pods) = kit.wait_settled("shop", 2).await;
    for pod in &pods {
        let name = pod.name_any();
        assert_eq!(container_names(pod), ["proxy-1", "proxy-2", "main"], "{name}");
        assert_eq!(working_container(pod, "proxy").as_deref(), Some("proxy-1"), "{name}");
        assert_eq!(image(pod, "proxy-1"), "mesh-proxy:1", "{name}");
        assert_eq!(image(pod, "proxy-2"), EMPTY, "{name}");
        assert_eq!(
            pod.annotations().get("version.sidecarset.kruise.io/proxy-1").map(String::as_str),
            Some("1")
        );
        assert_eq!(
            pod.annotations().get("version.sidecarset.kruise.io/proxy-2").map(String::as_str),
            Some("0")
        );
    }
    wait_status(&sets, "mesh", "2 pods matched, updated and ready", |s| counts(s) == (2, 2, 2, 2)).await;
    let uids: Vec<String> = pods.iter().map(|p| p.uid().unwrap()).collect();

    // Every pod state the watch delivers during the upgrade: which sidecar containers serve.
    let gaps: Arc<Mutex<Vec<String>>> = Arc::default();
    let states = Arc::new(Mutex::new(0_usize));
    let pods_api: Api<Pod> = Api::namespaced(kit.client.clone(), "default");
    let (synced_tx, synced_rx) = tokio::sync::oneshot::channel();
    let watch = {
        let (gaps, states) = (gaps.clone(), states.clone());
        let config = watcher::Config::default().labels("app=shop");
        tokio::spawn(async move {
            let mut synced = Some(synced_tx);
            let mut stream = watcher(pods_api, config).boxed();
            while let Some(event) = stream.next().await {
                let pod = match event {
                    Ok(watcher::Event::Apply(pod)) | Ok(watcher::Event::InitApply(pod)) => pod,
                    Ok(watcher::Event::InitDone) => {
                        if let Some(tx) = synced.take() {
                            let _ = tx.send(());
                        }
                        continue;
                    }
                    _ => continue,
                };
                *states.lock().unwrap() += 1;
                if ready_on_real_image(&pod, &["proxy-1", "proxy-2"], EMPTY).is_empty() {
                    gaps.lock().unwrap().push(format!(
                        "{} rv {:?}: {:?}",
                        pod.name_any(),
                        pod.resource_version(),
                        pod.status.as_ref().and_then(|s| s.container_statuses.clone())
                    ));
                }
            }
        })
    };
    synced_rx.await.unwrap();

    let upgrade = |image: &str| {
        json!({"spec": {"containers": [{
            "name": "proxy", "image": image, "readinessProbe": probe.clone(),
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": EMPTY},
        }]}})
    };
    for (image_now, working_now, idle_now) in
        [("mesh-proxy:2", "proxy-2", "proxy-1"), ("mesh-proxy:3", "proxy-1", "proxy-2")]
    {
        sets.patch("mesh", &PatchParams::default(), &Patch::Merge(&upgrade(image_now))).await.unwrap();
        let deadline = Instant::now() + SETTLE;
        loop {
            let pods = kit.pods_of("shop").await;
            let done = pods.iter().all(|pod| {
                working_container(pod, "proxy").as_deref() == Some(working_now)
                    && running_image(pod, working_now) == image_now
                    && running_image(pod, idle_now) == EMPTY
                    && ready_on_real_image(pod, &[working_now], EMPTY).len() == 1
            });
            let status_done = counts(&sets.get("mesh").await.unwrap()) == (2, 2, 2, 2);
            if done && status_done {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "hot upgrade to {image_now} did not finish: {:?}",
                pods.iter()
                    .map(|p| (p.name_any(), working_container(p, "proxy"), p.status.clone()))
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    // Let the watch drain the last states.
    tokio::time::sleep(Duration::from_millis(500)).await;
    watch.abort();
    let gaps = gaps.lock().unwrap().clone();
    let observed = *states.lock().unwrap();
    assert!(observed >= 8, "the watch saw the upgrade's pod states ({observed})");
    assert!(gaps.is_empty(), "pod states with no ready sidecar ({} of {observed}): {gaps:#?}", gaps.len());

    let pods = kit.pods_of("shop").await;
    assert_eq!(pods.iter().map(|p| p.uid().unwrap()).collect::<Vec<_>>(), uids, "upgraded in place");
    for pod in &pods {
        let name = pod.name_any();
        assert_eq!(restarts(pod, "main"), 0, "{name}: the app container was not restarted");
        assert_eq!(image(pod, "proxy-1"), "mesh-proxy:3", "{name}");
        assert_eq!(image(pod, "proxy-2"), EMPTY, "{name}");
    }
    kit.shutdown().await;
    Ok(())
}
