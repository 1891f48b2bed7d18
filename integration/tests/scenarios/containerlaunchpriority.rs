//! Container launch priority, on both tiers: a pod annotated
//! `apps.kruise.io/container-launch-priority: Ordered` gets a barrier env var per container from
//! the pod webhook, the manager releases the barrier ConfigMap's keys one priority at a time as
//! containers become ready, and the node starts the containers in the order they are listed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kruise_integration::{Scene, Skip};
use kube::{Api, api::PostParams};
use serde_json::json;

use crate::cloneset_kit::Kit;

fn container(name: &str, post_start: bool) -> serde_json::Value {
    let mut container = json!({"name": name, "image": "busybox:1.36", "command": ["sh", "-c", "sleep 3600"]});
    if post_start {
        // The next container waits for this one to be ready, which is after its hook ends.
        container["lifecycle"] = json!({"postStart": {"exec": {"command": ["sh", "-c", "sleep 1"]}}});
    }
    container
}

pub async fn ordered_pod_starts_containers_in_priority_order(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    let pods: Api<Pod> = Api::namespaced(kit.client.clone(), "default");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "ordered", "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}},
        "spec": {"containers": [container("first", true), container("second", true), container("third", false)]},
    }))
    .unwrap();
    let created = pods.create(&PostParams::default(), &pod).await.unwrap();
    for (index, container) in created.spec.as_ref().unwrap().containers.iter().enumerate() {
        let barrier = container.env.iter().flatten().find(|env| env.name == "KRUISE_CONTAINER_BARRIER");
        let key = barrier.and_then(|env| env.value_from.as_ref()?.config_map_key_ref.as_ref()).unwrap();
        assert_eq!(key.name, "ordered-barrier", "{}", container.name);
        // Listed first means highest priority: p_0, p_-1, p_-2.
        assert_eq!(key.key, format!("p_{}", -(index as i64)), "{}", container.name);
    }

    let deadline = Instant::now() + Duration::from_secs(60);
    let running = loop {
        let pod = pods.get("ordered").await.unwrap();
        let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.clone()).unwrap_or_default();
        let started: Vec<_> = ["first", "second", "third"]
            .iter()
            .filter_map(|name| {
                let status = statuses.iter().find(|s| s.name == *name)?;
                status.state.as_ref()?.running.as_ref()?.started_at.clone()
            })
            .collect();
        if started.len() == 3 {
            break started;
        }
        assert!(Instant::now() < deadline, "all three containers run within 60 s: {statuses:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Each container starts only after the one before it is ready, a second or more after its
    // start (its postStart hook sleeps 1 s), so the start times strictly increase.
    assert!(running[0].0 < running[1].0 && running[1].0 < running[2].0, "started in order: {running:?}");

    let barrier: Api<ConfigMap> = Api::namespaced(kit.client.clone(), "default");
    let keys: Vec<String> =
        barrier.get("ordered-barrier").await.unwrap().data.unwrap_or_default().into_keys().collect();
    for key in ["p_0", "p_-1", "p_-2"] {
        assert!(keys.iter().any(|k| k == key), "the barrier releases {key}: {keys:?}");
    }
    Ok(())
}
