//! Image pre-pull through the node daemon, on both tiers: three simulated nodes, the Kruise
//! manager (NodeImage, ImagePullJob and ImageListPullJob controllers) and one node daemon per
//! node pulling over that node's CRI socket. An ImagePullJob over three nodes succeeds and every
//! runtime lists the image; a bad image fails on every node with the error and is not retried
//! past backoffLimit; activeDeadlineSeconds fails the unfinished nodes and
//! ttlSecondsAfterFinished deletes the job (and its tags leave the NodeImages); parallelism 1
//! never has two nodes pulling at once; an ImageListPullJob runs one ImagePullJob per image; an
//! unparsable NodeImage entry fails with the reason while the others pull; a daemon whose
//! runtime goes away reports NotReady and recovers.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::Duration;

use kruise_crds::apps::v1beta1::{ImageListPullJob, ImagePullJob, ImagePullPhase, NodeImage};
use kruise_integration::{Scene, Skip};
use kube::{
    ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::daemon_kit::{DaemonKit, NAMESPACE};

fn job(name: &str, image: &str, extra: Value) -> Value {
    let mut manifest = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ImagePullJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"image": image, "completionPolicy": {"type": "Always"}}
    });
    crate::cloneset_kit::merge(&mut manifest["spec"], extra);
    manifest
}

fn finished(job: &ImagePullJob) -> bool {
    job.status.as_ref().is_some_and(|s| s.completion_time.is_some())
}

/// (desired, active, succeeded, failed, failedNodes, message) of a job.
fn counts(job: &ImagePullJob) -> Value {
    let status = job.status.clone().unwrap_or_default();
    json!({
        "desired": status.desired,
        "active": status.active,
        "succeeded": status.succeeded,
        "failed": status.failed,
        "failedNodes": status.failed_nodes,
        "message": status.message,
    })
}

fn tag_phase(node_image: &NodeImage, name: &str, tag: &str) -> Option<(ImagePullPhase, String)> {
    let status = node_image.status.as_ref()?.image_statuses.get(name)?.tags.iter().find(|t| t.tag == tag)?;
    Some((status.phase.clone(), status.message.clone()))
}

pub async fn imagepulljob_over_three_nodes(scene: Scene) -> Result<(), Skip> {
    let kit = DaemonKit::start(&scene).await;
    let nodes = kit.node_names();
    for node in &nodes {
        let node_image = kit.node_images.get(node).await.unwrap();
        assert!(
            node_image.labels().contains_key("topology.kubernetes.io/zone"),
            "a NodeImage carries its node's labels: {:?}",
            node_image.labels()
        );
    }
    scene.observe("nodeimages", &nodes);

    // The webhook defaults and validates ImagePullJobs as upstream's.
    let invalid: ImagePullJob =
        serde_json::from_value(job("warm-invalid", "Not A Reference", json!({"parallelism": 3}))).unwrap();
    let refused = kit.jobs.create(&PostParams::default(), &invalid).await.unwrap_err();
    let kube::Error::Api(refused) = refused else { panic!("not an API error: {refused}") };
    assert_eq!(refused.code, 422, "{refused:?}");
    assert!(refused.message.contains("spec.image"), "{}", refused.message);
    scene.observe("invalid image refused", refused.code);

    let concurrency = kit.watch_concurrency("registry.example/team/web", "v1-slow-pull-1s");
    let created = kit
        .create_job(job("warm-web", "registry.example/team/web:v1-slow-pull-1s", json!({"parallelism": 3})))
        .await;
    let pull_policy = created.spec.template.pull_policy.clone().unwrap_or_default();
    assert_eq!((pull_policy.timeout_seconds, pull_policy.backoff_limit), (Some(600), Some(3)), "defaulted");
    assert_eq!(created.spec.template.image_pull_policy.as_str(), "IfNotPresent");
    // The protection finalizer goes in a write after the one that completes the status.
    let done = kit
        .wait_job("warm-web", "Succeeded on every node and the protection finalizer gone", |job| {
            finished(job) && job.finalizers().is_empty()
        })
        .await;
    scene.observe("job status", counts(&done));
    let status = done.status.clone().unwrap();
    assert_eq!((status.desired, status.succeeded, status.failed, status.active), (3, 3, 0, 0), "{status:?}");
    assert_eq!(status.message, "job has completed");
    assert!(status.start_time.is_some());
    for node in &nodes {
        let images = kit.cri_images(node).await;
        assert!(
            images.contains(&"registry.example/team/web:v1-slow-pull-1s".to_string()),
            "{node}'s runtime lists the image: {images:?}"
        );
        let node_image = kit.node_images.get(node).await.unwrap();
        let (phase, _) = tag_phase(&node_image, "registry.example/team/web", "v1-slow-pull-1s").unwrap();
        assert_eq!(phase, ImagePullPhase::Succeeded);
        let tag = &node_image.status.as_ref().unwrap().image_statuses["registry.example/team/web"].tags[0];
        assert_eq!(tag.progress, 100);
        assert!(tag.start_time.is_some() && tag.completion_time.is_some());
        assert!(tag.image_id.starts_with("registry.example/team/web@sha256:"), "{tag:?}");
    }
    let seen = concurrency.seen();
    assert_eq!(seen.nodes.len(), 3);
    scene.note(format!("parallelism 3: at most {} nodes pulling at once", seen.max_active));
    kit.shutdown().await;
    Ok(())
}

pub async fn bad_image_fails_without_retrying_past_backoff_limit(scene: Scene) -> Result<(), Skip> {
    let kit = DaemonKit::start(&scene).await;
    let spec = json!({"parallelism": 3, "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": 5}});
    kit.create_job(job("warm-bad", "invalid.example/team/app:v1", spec)).await;
    let done = kit.wait_job("warm-bad", "Failed on every node", finished).await;
    scene.observe("job status", counts(&done));
    let status = done.status.clone().unwrap();
    assert_eq!((status.desired, status.succeeded, status.failed), (3, 0, 3), "{status:?}");
    assert_eq!(status.failed_nodes, kit.node_names(), "every node is named");
    for node in kit.node_names() {
        let node_image = kit.node_images.get(&node).await.unwrap();
        let (phase, message) = tag_phase(&node_image, "invalid.example/team/app", "v1").unwrap();
        assert_eq!(phase, ImagePullPhase::Failed);
        assert!(
            message.starts_with("Failed to pull image reference \"invalid.example/team/app:v1\": rpc error: code = Unknown desc = failed to pull and unpack image"),
            "{message}"
        );
        scene.observe(format!("{node} message"), &message);
        assert!(!kit.cri_images(&node).await.iter().any(|i| i.contains("invalid.example")));
    }
    // backoffLimit 1: two attempts per node, and none after the tag failed.
    let attempts = |kit: &DaemonKit| -> Vec<u64> {
        kit.daemons.iter().map(|(_, d)| d.started.metrics.pull_attempts(false)).collect()
    };
    assert_eq!(attempts(&kit), [2, 2, 2]);
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(attempts(&kit), [2, 2, 2], "nothing retried past backoffLimit");
    scene.observe("failed attempts per node", attempts(&kit));
    kit.shutdown().await;
    Ok(())
}

pub async fn deadline_and_ttl(scene: Scene) -> Result<(), Skip> {
    let kit = DaemonKit::start(&scene).await;
    // A pull that takes far longer than the job may, one node at a time: at the deadline the
    // node pulling and the two not reached yet are all failed.
    let slow = json!({
        "parallelism": 1,
        "pullPolicy": {"timeoutSeconds": 5, "backoffLimit": 0},
        "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 5}
    });
    kit.create_job(job("warm-slow", "registry.example/big:v1-slow-pull-60s", slow)).await;
    let expired = kit.wait_job("warm-slow", "past its deadline", finished).await;
    scene.observe("deadline status", counts(&expired));
    let status = expired.status.clone().unwrap();
    assert_eq!(status.message, "job exceeds activeDeadlineSeconds");
    assert_eq!((status.desired, status.succeeded, status.failed), (3, 0, 3), "{status:?}");
    let started = status.start_time.unwrap().0;
    let completed = status.completion_time.unwrap().0;
    let took = completed.duration_since(started).as_secs_f64();
    assert!((4.0..=10.0).contains(&took), "completed {took} s after the start");

    // A job with a TTL is deleted that long after it finished; its tags then leave the nodes.
    let ttl = json!({"parallelism": 3, "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 2}});
    kit.create_job(job("warm-ttl", "registry.example/small:v1", ttl)).await;
    let done = kit.wait_job("warm-ttl", "Succeeded", finished).await;
    scene.observe("ttl job status", counts(&done));
    kit.wait_job_gone("warm-ttl").await;
    for node in kit.node_names() {
        kit.wait_node_image(&node, "the deleted job's tag removed", |ni| {
            !ni.spec.images.contains_key("registry.example/small")
        })
        .await;
    }
    kit.shutdown().await;
    Ok(())
}

pub async fn parallelism_one_pulls_one_node_at_a_time(scene: Scene) -> Result<(), Skip> {
    let kit = DaemonKit::start(&scene).await;
    let concurrency = kit.watch_concurrency("registry.example/serial", "v1-slow-pull-1s");
    kit.create_job(job("warm-serial", "registry.example/serial:v1-slow-pull-1s", json!({"parallelism": 1})))
        .await;
    let done = kit.wait_job("warm-serial", "Succeeded on every node", finished).await;
    scene.observe("job status", counts(&done));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = concurrency.seen();
    assert_eq!(seen.nodes.len(), 3, "{seen:?}");
    assert_eq!(seen.max_active, 1, "never two nodes pulling at once: {seen:?}");
    scene.observe("most nodes pulling at once", seen.max_active);
    kit.shutdown().await;
    Ok(())
}

pub async fn imagelistpulljob_creates_one_job_per_image(scene: Scene) -> Result<(), Skip> {
    let kit = DaemonKit::start(&scene).await;
    let list: ImageListPullJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ImageListPullJob",
        "metadata": {"name": "warm-list", "namespace": NAMESPACE},
        "spec": {
            "images": ["registry.example/list/a:v1", "registry.example/list/b:v2"],
            "parallelism": 3,
            "completionPolicy": {"type": "Always"}
        }
    }))
    .unwrap();
    kit.lists.create(&PostParams::default(), &list).await.unwrap();
    let deadline = std::time::Instant::now() + crate::daemon_kit::SETTLE;
    let list = loop {
        let current = kit.lists.get("warm-list").await.unwrap();
        if current.status.as_ref().is_some_and(|s| s.completion_time.is_some()) {
            break current;
        }
        assert!(std::time::Instant::now() < deadline, "the list never completed: {:?}", current.status);
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let status = list.status.clone().unwrap();
    scene.observe(
        "list status",
        json!({"desired": status.desired, "completed": status.completed, "succeeded": status.succeeded,
               "active": status.active, "failed": status.failed_image_statuses.len()}),
    );
    assert_eq!((status.desired, status.completed, status.succeeded), (2, 2, 2), "{status:?}");
    let uid = list.uid().unwrap();
    let children: Vec<ImagePullJob> = kit
        .jobs
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|job| job.owner_references().iter().any(|o| o.uid == uid && o.controller == Some(true)))
        .collect();
    let mut images: Vec<String> = children.iter().map(|job| job.spec.image.clone()).collect();
    images.sort();
    assert_eq!(images, ["registry.example/list/a:v1", "registry.example/list/b:v2"], "one job per image");
    for child in &children {
        assert!(child.name_any().starts_with("warm-list-"), "{}", child.name_any());
        assert_eq!(child.spec.template.parallelism, list.spec.template.parallelism);
        assert_eq!(child.status.as_ref().map(|s| s.succeeded), Some(3));
    }
    scene.observe("children images", &images);
    for node in kit.node_names() {
        let images = kit.cri_images(&node).await;
        assert!(images.contains(&"registry.example/list/a:v1".to_string()), "{node}: {images:?}");
        assert!(images.contains(&"registry.example/list/b:v2".to_string()), "{node}: {images:?}");
    }
    kit.shutdown().await;
    Ok(())
}

pub async fn bad_node_image_entry_fails_while_others_pull(scene: Scene) -> Result<(), Skip> {
    let kit = DaemonKit::start(&scene).await;
    let node = kit.node_names()[0].clone();
    let now = k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let tag = |tag: &str| json!({"tag": tag, "createdAt": now, "pullPolicy": {"timeoutSeconds": 10, "backoffLimit": 1, "ttlSecondsAfterFinished": 600}});
    let patch = json!({"spec": {"images": {
        "Bad_Image!!": {"tags": [tag("v1")]},
        "registry.example/good": {"tags": [tag("v1")]},
        "registry.example/also-good": {"tags": [tag("v2")]}
    }}});
    kit.node_images.patch(&node, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    let node_image = kit
        .wait_node_image(&node, "every entry finished", |ni| {
            let done = |name: &str, tag: &str| {
                tag_phase(ni, name, tag)
                    .is_some_and(|(p, _)| matches!(p, ImagePullPhase::Succeeded | ImagePullPhase::Failed))
            };
            done("Bad_Image!!", "v1")
                && done("registry.example/good", "v1")
                && done("registry.example/also-good", "v2")
        })
        .await;
    let (phase, message) = tag_phase(&node_image, "Bad_Image!!", "v1").unwrap();
    assert_eq!(phase, ImagePullPhase::Failed);
    assert_eq!(
        message,
        "invalid image reference \"Bad_Image!!:v1\": repository name (library/Bad_Image!!) must be lowercase"
    );
    scene.observe("bad entry", json!({"phase": phase.as_str(), "message": message}));
    for (name, tag) in [("registry.example/good", "v1"), ("registry.example/also-good", "v2")] {
        let (phase, _) = tag_phase(&node_image, name, tag).unwrap();
        assert_eq!(phase, ImagePullPhase::Succeeded, "{name}:{tag}");
    }
    let status = node_image.status.clone().unwrap();
    scene.observe("counts", json!([status.desired, status.succeeded, status.failed]));
    assert_eq!((status.desired, status.succeeded, status.failed), (3, 2, 1));
    assert_eq!(
        kit.daemon(&node).started.metrics.pull_attempts(false),
        0,
        "an unparsable reference is never sent to the runtime"
    );
    let images = kit.cri_images(&node).await;
    assert!(images.contains(&"registry.example/good:v1".to_string()), "{images:?}");
    kit.shutdown().await;
    Ok(())
}

pub async fn cri_unavailable_then_recovers(scene: Scene) -> Result<(), Skip> {
    let mut kit = DaemonKit::start_with(&scene, true).await;
    let node = kit.node_names()[0].clone();
    let proxy = kit.proxies.remove(&node).unwrap();
    proxy.stop();
    let body = kit.wait_readyz(&node, 503).await;
    assert!(body.contains("cri"), "{body}");
    scene.observe("readyz without the runtime", &body);
    let metrics = reqwest::get(format!("http://{}/metrics", kit.daemon(&node).started.health_addr))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("kruise_daemon_cri_up 0"), "{metrics}");
    // The other daemons are unaffected.
    for other in kit.node_names().iter().filter(|n| **n != node) {
        assert_eq!(kit.readyz(other).await.0, 200);
    }

    let target = kit.nodes.as_ref().unwrap().cri_socket(&node);
    let proxy_path = proxy_path(&kit, &node);
    kit.proxies.insert(node.clone(), crate::daemon_kit::CriProxy::start(&proxy_path, &target));
    kit.wait_readyz(&node, 200).await;
    scene.observe("readyz after recovery", kit.readyz(&node).await);

    // It pulls again once the runtime is back.
    kit.create_job(job(
        "warm-after",
        "registry.example/after:v1",
        json!({"parallelism": 3, "selector": {"names": [node]}}),
    ))
    .await;
    let done = kit.wait_job("warm-after", "Succeeded", finished).await;
    scene.observe("job status", counts(&done));
    assert_eq!(done.status.as_ref().map(|s| s.succeeded), Some(1));
    assert!(kit.cri_images(&node).await.contains(&"registry.example/after:v1".to_string()));
    kit.shutdown().await;
    Ok(())
}

fn proxy_path(kit: &DaemonKit, node: &str) -> std::path::PathBuf {
    match &kit.daemon(node).started.cri.source() {
        kruise_daemon::cri::EndpointSource::Fixed(path) => path.clone(),
        kruise_daemon::cri::EndpointSource::Probe(_) => panic!("the kit gives every daemon a fixed endpoint"),
    }
}
