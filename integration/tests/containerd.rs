//! The node daemon against a real containerd (Debian's 1.6, CRI plugin): an image built here,
//! offline, and served by a local registry is listed in the node's NodeImage; the daemon pulls
//! it through containerd's CRI, reports the tag Succeeded with its image ID, and containerd's
//! ListImages shows it; a tag the registry does not have is reported Failed with containerd's
//! reason. Skipped with a message when containerd or docker-registry is not installed
//! (`.ci/run` installs both).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};

use kruise_crds::apps::v1beta1::{ImagePullPhase, NodeImage};
use kruise_daemon::{
    DaemonConfig,
    cri::{CriClient, CriOptions, EndpointSource},
    metrics::DaemonMetrics,
    spawn_daemon,
};
use kruise_integration::{Cluster, containerd::Containerd, registry::LocalRegistry};
use kube::{Api, api::PostParams};
use serde_json::json;

const NODE: &str = "ctd-node";

fn tag_status(node_image: &NodeImage, name: &str, tag: &str) -> Option<(ImagePullPhase, String, String)> {
    let status = node_image.status.as_ref()?.image_statuses.get(name)?.tags.iter().find(|t| t.tag == tag)?;
    Some((status.phase.clone(), status.message.clone(), status.image_id.clone()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_pulls_through_a_real_containerd() {
    if !Containerd::available() || !LocalRegistry::available() {
        eprintln!(
            "skipped: containerd or docker-registry is not installed (apt-get install containerd docker-registry)"
        );
        return;
    }
    let registry = LocalRegistry::start().await.expect("the local registry starts");
    let script: &[u8] = b"#!/bin/sh\necho hello from kruise-rs\n";
    let pushed = registry
        .push_image("kruise-test/hello", "1.0", &[("hello", script)])
        .await
        .expect("the image is pushed");
    let containerd = Containerd::start(&[registry.host()]).await.expect("containerd starts on this machine");

    let cluster = Cluster::embedded().await.unwrap();
    cluster.install_crds().await.unwrap();
    let config = DaemonConfig {
        runtime_endpoint: Some(containerd.socket()),
        health_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        ..DaemonConfig::new(NODE)
    };
    let daemon = spawn_daemon(cluster.client(), config).await.expect("the daemon starts");

    let name = format!("{}/kruise-test/hello", registry.host());
    let node_images: Api<NodeImage> = Api::all(cluster.client());
    let node_image: NodeImage = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "NodeImage",
        "metadata": {"name": NODE},
        "spec": {"images": {
            name.clone(): {"tags": [
                {"tag": "1.0", "pullPolicy": {"timeoutSeconds": 60, "backoffLimit": 1}},
                {"tag": "no-such-tag", "pullPolicy": {"timeoutSeconds": 60, "backoffLimit": 1}},
            ]},
        }},
    }))
    .unwrap();
    node_images.create(&PostParams::default(), &node_image).await.unwrap();

    let deadline = Instant::now() + Duration::from_secs(120);
    let (pulled, missing) = loop {
        let current = node_images.get(NODE).await.unwrap();
        let pulled = tag_status(&current, &name, "1.0");
        let missing = tag_status(&current, &name, "no-such-tag");
        let done = |status: &Option<(ImagePullPhase, String, String)>| {
            status.as_ref().is_some_and(|(phase, _, _)| {
                matches!(phase, ImagePullPhase::Succeeded | ImagePullPhase::Failed)
            })
        };
        if done(&pulled) && done(&missing) {
            break (pulled.unwrap(), missing.unwrap());
        }
        assert!(
            Instant::now() < deadline,
            "the pulls did not finish: {:?}\ncontainerd:\n{}",
            current.status,
            containerd.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert_eq!(pulled.0, ImagePullPhase::Succeeded, "{pulled:?}\ncontainerd:\n{}", containerd.log_tail());
    assert!(pulled.2.starts_with("sha256:") || pulled.2.contains("@sha256:"), "an image ID: {pulled:?}");
    assert_eq!(missing.0, ImagePullPhase::Failed, "{missing:?}");
    assert!(missing.1.contains("not found"), "containerd's reason is reported: {}", missing.1);
    eprintln!(
        "pulled {} (manifest {}), image id {}; missing tag: {}",
        pushed.reference, pushed.digest, pulled.2, missing.1
    );

    // containerd itself lists the image, asked through the CRI.
    let cri = CriClient::new(
        EndpointSource::new(Some(containerd.socket()), &[]),
        CriOptions::default(),
        DaemonMetrics::new(),
    );
    let tags: Vec<String> =
        cri.list_images().await.unwrap().into_iter().flat_map(|image| image.repo_tags).collect();
    assert!(tags.contains(&pushed.reference), "containerd lists {}: {tags:?}", pushed.reference);

    daemon.stop().await.unwrap();
    cluster.shutdown().await;
}
