//! SidecarSets end to end, on both tiers: three simulated nodes and the Kruise manager (pod
//! webhook, SidecarSet webhooks and controller).
//!
//! A CloneSet's new pods get the SidecarSet's sidecar. A sidecar image change then upgrades it in
//! place on every matched pod: the pod keeps its UID, the app container is not restarted, the
//! sidecar is restarted once. `partition` keeps pods back and `paused` stops the rollout.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1beta1::SidecarSet;
use kruise_integration::{Scene, Skip};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
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
    let deadline = Instant::now() + Duration::from_secs(30);
    while sets.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(Instant::now() < deadline, "SidecarSets are not served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
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
    kit.shutdown().await;
    Ok(())
}
