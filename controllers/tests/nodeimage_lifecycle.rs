//! The NodeImage controller against the embedded API server: a Ready node gets its NodeImage,
//! named and labelled like it (labels follow the node); a tag whose ImagePullJob does not exist
//! leaves the spec; the NodeImage goes when its node is deleted; a node that is not Ready gets
//! none.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::{
    api::core::v1::Node, apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kruise_controllers::{
    nodeimage::{NodeImageOptions, run},
    runtime::Metrics,
};
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};
use kruise_crds::apps::v1beta1::NodeImage;
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

async fn eventually<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn node(name: &str, ready: bool) -> Node {
    let now = k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"zone": "a"}},
        "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }, "lastTransitionTime": now}]}
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_images_follow_their_nodes() {
    let server = ApiServer::start(ApiServerConfig::default()).await.unwrap();
    let client = Client::try_from(kube::Config::new(server.url.parse().unwrap())).unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in kruise_crds::crd::all_crds().unwrap() {
        let mut body = serde_json::to_value(&crd).unwrap();
        body["apiVersion"] = json!("apiextensions.k8s.io/v1");
        body["kind"] = json!("CustomResourceDefinition");
        crds.patch(&crd.name_any(), &PatchParams::apply("test").force(), &Patch::Apply(&body)).await.unwrap();
    }
    let node_images: Api<NodeImage> = Api::all(client.clone());
    eventually("NodeImages served", async || node_images.list(&ListParams::default()).await.ok()).await;

    let nodes: Api<Node> = Api::all(client.clone());
    nodes.create(&PostParams::default(), &node("ready", true)).await.unwrap();
    nodes.create(&PostParams::default(), &node("not-ready", false)).await.unwrap();
    let controller = tokio::spawn(run(
        kruise_controllers::runtime::cache::Caches::new(client.clone()),
        Metrics::new(),
        NodeImageOptions { creation_delay: Duration::ZERO },
        || {},
    ));

    let created =
        eventually("the Ready node's NodeImage", async || node_images.get_opt("ready").await.unwrap()).await;
    assert_eq!(created.labels().get("zone").map(String::as_str), Some("a"), "labelled like its node");
    nodes
        .patch(
            "ready",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"zone": "b"}}})),
        )
        .await
        .unwrap();
    eventually("the labels to follow the node", async || {
        let ni = node_images.get("ready").await.unwrap();
        (ni.labels().get("zone").map(String::as_str) == Some("b")).then_some(())
    })
    .await;

    // A tag owned by a job that does not exist is dropped, with its image.
    let created_at = k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let orphan: Value = json!({"spec": {"images": {"nginx": {"tags": [{
        "tag": "1.25", "createdAt": created_at,
        "pullPolicy": {"ttlSecondsAfterFinished": 600},
        "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob", "namespace": "default", "name": "gone", "uid": "u"}]
    }]}}}});
    node_images.patch("ready", &PatchParams::default(), &Patch::Merge(orphan)).await.unwrap();
    eventually("the orphaned tag to leave", async || {
        node_images.get("ready").await.unwrap().spec.images.is_empty().then_some(())
    })
    .await;

    nodes.delete("ready", &DeleteParams::default()).await.unwrap();
    eventually("the NodeImage to go with its node", async || {
        node_images.get_opt("ready").await.unwrap().is_none().then_some(())
    })
    .await;
    assert!(
        node_images.get_opt("not-ready").await.unwrap().is_none(),
        "a node that is not Ready gets no NodeImage"
    );

    controller.abort();
    server.shutdown().await;
}
