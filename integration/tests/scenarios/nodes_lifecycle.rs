//! Simulated kubelet behaviour upstream Kruise's e2e suite relies on, through the API on both
//! tiers (nodes in the test process): an infeasible resize is not applied and is reported as
//! the kubelet does; a pod set to `Failed` stays Failed; postStart hooks (`exec`, `sleep`,
//! failing) hold the container back and kill it on failure; containers whose command ends
//! (`sh -c "sleep 1; exit 3"`, `true`, `exit 1`) exit with that code and the restart policy
//! applies.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kruise_integration::{
    Scene, Skip,
    nodes::{Hosting, SimNodes},
};
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::nodes::{Pods, condition, container, find_container, is_ready, phase};

fn requests(pod: &Pod) -> (String, String) {
    let requests = find_container(pod, "main")
        .and_then(|c| c.resources.clone())
        .and_then(|r| r.requests)
        .unwrap_or_default();
    let get = |name: &str| requests.get(name).map(|q| q.0.clone()).unwrap_or_default();
    (get("cpu"), get("memory"))
}

fn legacy_resize(pod: &Pod) -> Option<String> {
    serde_json::to_value(pod).ok()?.pointer("/status/resize")?.as_str().map(str::to_string)
}

fn waiting_reason(pod: &Pod, name: &str) -> Option<String> {
    find_container(pod, name)?.state.as_ref()?.waiting.as_ref()?.reason.clone()
}

fn terminated(pod: &Pod, name: &str, last: bool) -> Option<(i32, String)> {
    let status = find_container(pod, name)?;
    let state = if last { status.last_state.as_ref()? } else { status.state.as_ref()? };
    let terminated = state.terminated.as_ref()?;
    Some((terminated.exit_code, terminated.reason.clone().unwrap_or_default()))
}

/// Infeasible resize, a pod set to Failed, postStart hooks, and commands that exit.
pub async fn kubelet_conventions(scene: Scene) -> Result<(), Skip> {
    let cluster = scene.cluster();
    let nodes = SimNodes::start(cluster, Hosting::InProcess, 2).await.unwrap();
    let pods = Pods::new(cluster.client());
    let busybox = |name: &str, policy: &str, command: Value| {
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"restartPolicy": policy, "terminationGracePeriodSeconds": 3,
                     "containers": [{"name": "main", "image": "busybox:1.36", "command": command}]}
        })
    };
    pods.create(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vpa"},
        "spec": {"containers": [{
            "name": "main", "image": "nginx:1.25",
            "resources": {"requests": {"cpu": "200m", "memory": "200Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
            "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "RestartContainer"},
                             {"resourceName": "memory", "restartPolicy": "RestartContainer"}]
        }]}
    }))
    .await;
    pods.create(busybox("marked", "Always", json!(["sleep", "3600"]))).await;
    pods.create(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hooked"},
        "spec": {"containers": [
            {"name": "main", "image": "nginx:1.25",
             "lifecycle": {"postStart": {"exec": {"command": ["sh", "-c", "sleep 2"]}}}},
            {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "3600"],
             "lifecycle": {"postStart": {"sleep": {"seconds": 1}}}}
        ]}
    }))
    .await;
    let created_hooked = Instant::now();
    pods.create(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "badhook"},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25",
                 "lifecycle": {"postStart": {"exec": {"command": ["/bin/sh", "-c", "exit 1"]}}}}]}
    }))
    .await;
    pods.create(busybox("job-fails", "Never", json!(["/bin/sh", "-c", "sleep 1; exit 3"]))).await;
    pods.create(busybox("job-succeeds", "OnFailure", json!(["true"]))).await;
    pods.create(busybox("crashing", "Always", json!(["/bin/sh", "-c", "exit 1"]))).await;
    pods.create(busybox("sleeper", "Always", json!(["sleep", "1"]))).await;

    // postStart: the container is not running (nor the pod ready) until its hook finished.
    let hooked = pods
        .wait("hooked", "ready", |p| {
            let running = find_container(p, "main").and_then(|c| c.state.as_ref()?.running.clone());
            assert!(
                running.is_none() || created_hooked.elapsed() >= Duration::from_millis(1900),
                "main reported running {:?} after creation, before its 2 s postStart hook ended",
                created_hooked.elapsed()
            );
            is_ready(p)
        })
        .await;
    assert!(created_hooked.elapsed() >= Duration::from_secs(2), "{:?}", created_hooked.elapsed());
    assert_eq!(container(&hooked, "main").restart_count, 0);
    assert_eq!(container(&hooked, "sidecar").restart_count, 0);
    scene.observe("hooked/ready", is_ready(&hooked));

    // A failing postStart hook: reported, the container killed and restarted.
    let badhook = pods
        .wait("badhook", "restarted after its hook failed", |p| {
            find_container(p, "main").is_some_and(|c| c.restart_count >= 1)
        })
        .await;
    assert!(!is_ready(&badhook));
    let reasons = pods.event_reasons("badhook", &["FailedPostStartHook", "Killing"]).await;
    assert!(reasons.contains("FailedPostStartHook"), "{reasons:?}");
    let waiting = waiting_reason(&badhook, "main");
    assert!(
        matches!(waiting.as_deref(), Some("PostStartHookError" | "CrashLoopBackOff" | "ContainerCreating")),
        "{waiting:?}"
    );
    scene.observe("badhook/events", reasons.contains("FailedPostStartHook"));

    // Commands that end: exit code, reason, and what the restart policy does next.
    let failed = pods.wait("job-fails", "failed", |p| phase(p) == Some("Failed")).await;
    assert_eq!(terminated(&failed, "main", false), Some((3, "Error".to_string())));
    let succeeded = pods.wait("job-succeeds", "succeeded", |p| phase(p) == Some("Succeeded")).await;
    assert_eq!(terminated(&succeeded, "main", false), Some((0, "Completed".to_string())));
    let crashing = pods
        .wait("crashing", "in back-off", |p| {
            find_container(p, "main").is_some_and(|c| c.restart_count >= 2)
                && waiting_reason(p, "main").as_deref() == Some("CrashLoopBackOff")
        })
        .await;
    assert_eq!(terminated(&crashing, "main", true), Some((1, "Error".to_string())));
    assert_eq!(phase(&crashing), Some("Running"));
    let sleeper = pods
        .wait("sleeper", "restarted after its sleep", |p| {
            find_container(p, "main").is_some_and(|c| c.restart_count >= 1)
        })
        .await;
    assert_eq!(terminated(&sleeper, "main", true), Some((0, "Completed".to_string())));
    scene.observe(
        "exits",
        json!({
            "job-fails": [phase(&failed), terminated(&failed, "main", false)],
            "job-succeeds": [phase(&succeeded), terminated(&succeeded, "main", false)],
            "crashing": [phase(&crashing), terminated(&crashing, "main", true), waiting_reason(&crashing, "main")],
            "sleeper": terminated(&sleeper, "main", true),
        }),
    );
    // A Failed pod stays Failed.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(phase(&pods.api.get("job-fails").await.unwrap()), Some("Failed"));

    // A pod set to Failed by a status write: torn down, and never Running again.
    let marked = pods.wait("marked", "ready", is_ready).await;
    let mut failed_by_hand = marked.clone();
    failed_by_hand.metadata.resource_version = None;
    failed_by_hand.status.as_mut().unwrap().phase = Some("Failed".into());
    pods.api.replace_status("marked", &PostParams::default(), &failed_by_hand).await.unwrap();
    let torn_down =
        pods.wait("marked", "torn down", |p| terminated(p, "main", false).is_some() && !is_ready(p)).await;
    assert_eq!(phase(&torn_down), Some("Failed"));
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        let now = pods.api.get("marked").await.unwrap();
        assert_eq!(phase(&now), Some("Failed"), "went back: {:?}", now.status);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    scene.observe(
        "marked",
        (
            phase(&torn_down),
            condition(&torn_down, "Ready").map(|c| c.0),
            find_container(&torn_down, "main").map(|c| c.restart_count),
        ),
    );

    // Infeasible resize: not applied, reported as the kubelet does, kept across a restart.
    let vpa = pods.wait("vpa", "ready", is_ready).await;
    let big = json!({"spec": {"containers": [{"name": "main", "resources": {
        "requests": {"cpu": "100", "memory": "1000Gi"}, "limits": {"cpu": "800", "memory": "8000Gi"}}}]}});
    pods.api.patch_resize("vpa", &PatchParams::default(), &Patch::Strategic(&big)).await.unwrap();
    let pending = pods
        .wait("vpa", "resize infeasible", |p| {
            condition(p, "PodResizePending").is_some_and(|c| c.1.as_deref() == Some("Infeasible"))
        })
        .await;
    let (status, reason, message) = condition(&pending, "PodResizePending").unwrap();
    assert_eq!(status, "True");
    assert_eq!(
        message.as_deref(),
        Some("Node didn't have enough capacity: memory, requested: 1073741824000, capacity: 34359738368")
    );
    assert_eq!(legacy_resize(&pending).as_deref(), Some("Infeasible"));
    assert_eq!(requests(&pending), ("200m".to_string(), "200Mi".to_string()), "not applied");
    assert_eq!(container(&pending, "main").container_id, container(&vpa, "main").container_id);
    scene.observe("vpa/pending", (status, reason, message, legacy_resize(&pending)));
    // An image change restarts the container with what it was allocated, not the spec.
    let image = json!({"spec": {"containers": [{"name": "main", "image": "nginx:1.26"}]}});
    pods.api.patch("vpa", &PatchParams::default(), &Patch::Strategic(&image)).await.unwrap();
    let restarted = pods
        .wait("vpa", "restarted with the new image", |p| {
            find_container(p, "main").is_some_and(|c| c.restart_count == 1 && c.image == "nginx:1.26")
                && is_ready(p)
        })
        .await;
    assert_eq!(requests(&restarted), ("200m".to_string(), "200Mi".to_string()));
    assert!(condition(&restarted, "PodResizePending").is_some());
    // A resize that fits is applied (a restart, as the resize policy says) and clears it.
    let small = json!({"spec": {"containers": [{"name": "main", "resources": {
        "requests": {"cpu": "100m", "memory": "100Mi"}, "limits": {"cpu": "800m", "memory": "800Mi"}}}]}});
    pods.api.patch_resize("vpa", &PatchParams::default(), &Patch::Strategic(&small)).await.unwrap();
    let resized = pods
        .wait("vpa", "resized", |p| {
            requests(p) == ("100m".to_string(), "100Mi".to_string())
                && condition(p, "PodResizePending").is_none()
                && is_ready(p)
        })
        .await;
    assert_eq!(legacy_resize(&resized), None);
    assert_eq!(container(&resized, "main").restart_count, 2);
    let allocated = container(&resized, "main").allocated_resources.clone().unwrap();
    assert_eq!(allocated["cpu"].0, "100m");
    scene.observe("vpa/resized", (requests(&resized), container(&resized, "main").restart_count));

    nodes.shutdown().await;
    Ok(())
}
