//! WorkloadSpread end to end, on both tiers, with the manager's pod webhook and controller (gate
//! `WorkloadSpread`, on by default): the three simulated nodes are labelled one in `zone-a` and
//! two in `zone-b`; a WorkloadSpread over a CloneSet of five sends the first two pods to
//! `zone-a` (maxReplicas 2, with a label patch) and the rest to `zone-b` (no cap). Each pod
//! carries the `apps.kruise.io/matched-workloadspread` annotation naming its subset and runs on
//! that subset's nodes; the status counts two and three replicas with nothing missing in
//! `zone-a` and -1 (unlimited) in `zone-b`; the controller gives `zone-a` pods the higher
//! `controller.kubernetes.io/pod-deletion-cost`, so scaling the CloneSet down to two removes the
//! three `zone-b` pods and keeps the `zone-a` ones. Invalid WorkloadSpreads (at both versions)
//! and a second WorkloadSpread of the same workload are refused with a 422 naming the fields.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_crds::apps::v1beta1::WorkloadSpread;
use kruise_integration::{Scene, Skip};
use kube::{
    Api, ResourceExt,
    api::{ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, cloneset, is_ready};

/// How long the webhook and controller may take to reach a state.
const SETTLE: Duration = Duration::from_secs(90);
/// The node label the subsets select on (the scenario's own, so nothing else depends on it).
const ZONE: &str = "example.com/ws-zone";
const MATCHED: &str = "apps.kruise.io/matched-workloadspread";
const COST: &str = "controller.kubernetes.io/pod-deletion-cost";

fn dynamic_api(kit: &Kit, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apps.kruise.io", version, "WorkloadSpread");
    Api::namespaced_with(
        kit.client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(&gvk, "workloadspreads"),
    )
}

async fn start(scene: &Scene) -> Kit {
    let kit = Kit::start(scene).await;
    let spreads: Api<WorkloadSpread> = Api::namespaced(kit.client.clone(), "default");
    let deadline = Instant::now() + Duration::from_secs(30);
    while spreads.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(Instant::now() < deadline, "WorkloadSpreads are not served 30 s after the CRD");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    kit
}

fn subset_of(pod: &Pod) -> Option<String> {
    let value: Value = serde_json::from_str(pod.annotations().get(MATCHED)?).ok()?;
    value["subset"].as_str().map(str::to_string)
}

fn node_of(pod: &Pod) -> String {
    pod.spec.as_ref().and_then(|spec| spec.node_name.clone()).unwrap_or_default()
}

fn summary(pods: &[Pod]) -> Vec<String> {
    pods.iter()
        .map(|pod| {
            format!(
                "{} subset={:?} node={} cost={:?} ready={} deleting={}",
                pod.name_any(),
                subset_of(pod),
                node_of(pod),
                pod.annotations().get(COST),
                is_ready(pod),
                pod.metadata.deletion_timestamp.is_some()
            )
        })
        .collect()
}

/// Polls the CloneSet's pods and the WorkloadSpread until `check` holds.
async fn wait_for(
    kit: &Kit,
    what: &str,
    check: impl Fn(&[Pod], &WorkloadSpread) -> bool,
) -> (Vec<Pod>, WorkloadSpread) {
    let spreads: Api<WorkloadSpread> = Api::namespaced(kit.client.clone(), "default");
    let deadline = Instant::now() + SETTLE;
    loop {
        let pods: Vec<Pod> = kit.pods.list(&ListParams::default().labels("app=web")).await.unwrap().items;
        let spread = spreads.get("web-spread").await.unwrap();
        if check(&pods, &spread) {
            return (pods, spread);
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for: {what}\npods: {:#?}\nstatus: {}",
            summary(&pods),
            serde_json::to_string_pretty(&spread.status).unwrap()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

fn subset_counts(pods: &[Pod]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for pod in pods.iter().filter(|pod| pod.metadata.deletion_timestamp.is_none()) {
        *counts.entry(subset_of(pod).unwrap_or_default()).or_default() += 1;
    }
    counts
}

/// The status of subset `index` as (name, replicas, missingReplicas, creating, deleting).
fn subset_status(spread: &WorkloadSpread, index: usize) -> Option<(String, i32, i32, usize, usize)> {
    let status = spread.status.as_ref()?.subset_statuses.get(index)?;
    Some((
        status.name.clone(),
        status.replicas,
        status.missing_replicas,
        status.creating_pods.len(),
        status.deleting_pods.len(),
    ))
}

fn spread_manifest(version: &str, name: &str) -> Value {
    let required = if version == "v1alpha1" { "requiredNodeSelectorTerm" } else { "requiredNodeSelector" };
    json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "WorkloadSpread",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "subsets": [
                {"name": "zone-a", required: {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-a"]}]},
                 "maxReplicas": 2, "patch": {"metadata": {"labels": {"subset": "zone-a"}}}},
                {"name": "zone-b", required: {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-b"]}]},
                 "patch": {"metadata": {"labels": {"subset": "zone-b"}}}}
            ]
        }
    })
}

/// Pods are spread over two zones by the WorkloadSpread, counted in its status, and a scale-in
/// removes the later zone's pods first.
pub async fn spreads_a_cloneset_over_two_zones(scene: Scene) -> Result<(), Skip> {
    let kit = start(&scene).await;
    let nodes: Api<Node> = Api::all(kit.client.clone());
    for (node, zone) in [("sim-node-1", "zone-a"), ("sim-node-2", "zone-b"), ("sim-node-3", "zone-b")] {
        let patch = json!({"metadata": {"labels": {ZONE: zone}}});
        nodes.patch(node, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    }
    let beta = dynamic_api(&kit, "v1beta1");
    let spread: DynamicObject = serde_json::from_value(spread_manifest("v1beta1", "web-spread")).unwrap();
    beta.create(&PostParams::default(), &spread).await.unwrap();
    kit.create(cloneset("web", 5, "nginx:1.25", json!({}))).await.unwrap();

    let (pods, spread) =
        wait_for(&kit, "5 ready pods, 2 in zone-a and 3 in zone-b, counted in the status", |pods, spread| {
            let counts = subset_counts(pods);
            pods.len() == 5
                && pods.iter().all(is_ready)
                && counts.get("zone-a") == Some(&2)
                && counts.get("zone-b") == Some(&3)
                && subset_status(spread, 0) == Some(("zone-a".into(), 2, 0, 0, 0))
                && subset_status(spread, 1) == Some(("zone-b".into(), 3, -1, 0, 0))
                && pods.iter().all(|pod| pod.annotations().contains_key(COST))
        })
        .await;
    assert_eq!(
        spread.status.as_ref().unwrap().observed_generation,
        spread.metadata.generation.unwrap(),
        "the status reflects the current spec"
    );
    for pod in &pods {
        let subset = subset_of(pod).unwrap();
        let node = node_of(pod);
        let zone = nodes.get(&node).await.unwrap().labels().get(ZONE).cloned().unwrap_or_default();
        assert_eq!(zone, subset, "{} runs in its subset's zone", pod.name_any());
        assert_eq!(pod.labels().get("subset"), Some(&subset), "the subset's patch was applied");
        let cost = pod.annotations().get(COST).cloned().unwrap();
        let want = if subset == "zone-a" { "200" } else { "100" };
        assert_eq!(cost, want, "{}: zone-a pods cost more to delete", pod.name_any());
    }
    let zone_a: Vec<String> = pods
        .iter()
        .filter(|pod| subset_of(pod).as_deref() == Some("zone-a"))
        .map(|pod| pod.name_any())
        .collect();

    // Scale in: the zone-b pods go, the zone-a pods stay.
    kit.patch("web", json!({"spec": {"replicas": 2}})).await.unwrap();
    let (pods, _) =
        wait_for(&kit, "2 pods left, both in zone-a, and the status counting them", |pods, spread| {
            pods.len() == 2
                && subset_counts(pods).get("zone-a") == Some(&2)
                && subset_status(spread, 0) == Some(("zone-a".into(), 2, 0, 0, 0))
                && subset_status(spread, 1).is_some_and(|(_, replicas, missing, creating, _)| {
                    replicas == 0 && missing == -1 && creating == 0
                })
        })
        .await;
    let mut left: Vec<String> = pods.iter().map(|pod| pod.name_any()).collect();
    left.sort();
    let mut kept = zone_a.clone();
    kept.sort();
    assert_eq!(left, kept, "scale-in removed the zone-b pods and kept the zone-a ones");

    // Scale out again: zone-a is full, so the new pods go to zone-b.
    kit.patch("web", json!({"spec": {"replicas": 4}})).await.unwrap();
    wait_for(&kit, "4 pods again, the 2 new ones in zone-b", |pods, spread| {
        let counts = subset_counts(pods);
        pods.len() == 4
            && counts.get("zone-a") == Some(&2)
            && counts.get("zone-b") == Some(&2)
            && subset_status(spread, 1).is_some_and(|(_, replicas, _, _, _)| replicas == 2)
    })
    .await;

    kit.shutdown().await;
    Ok(())
}

/// Creates `manifest`, which must be refused with a 422 naming every one of `fields`.
async fn refused(api: &Api<DynamicObject>, manifest: Value, fields: &[&str]) {
    crate::cloneset_kit::refused_naming(api, manifest, fields).await;
}

/// Invalid WorkloadSpreads and a second one for the same workload are refused, naming the
/// fields.
pub async fn invalid_workloadspreads_are_refused_with_field_paths(scene: Scene) -> Result<(), Skip> {
    let kit = start(&scene).await;
    let beta = dynamic_api(&kit, "v1beta1");
    let alpha = dynamic_api(&kit, "v1alpha1");

    let mut duplicate = spread_manifest("v1beta1", "duplicate-subsets");
    duplicate["spec"]["subsets"][1]["name"] = json!("zone-a");
    refused(&beta, duplicate, &["spec.subsets[1].name"]).await;

    let mut mixed = spread_manifest("v1alpha1", "mixed-caps");
    mixed["spec"]["subsets"][1]["maxReplicas"] = json!("50%");
    mixed["spec"]["targetRef"]["kind"] = json!("DaemonSet");
    let response = {
        let object: DynamicObject = serde_json::from_value(mixed.clone()).unwrap();
        alpha.create(&PostParams::default(), &object).await
    };
    match response {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            let named: Vec<String> =
                status.details.iter().flat_map(|d| d.causes.iter()).map(|c| c.field.clone()).collect();
            assert!(named.iter().any(|f| f.starts_with("spec.targetRef")), "{named:?}: {}", status.message);
        }
        other => panic!("a DaemonSet target was not refused: {other:?}"),
    }

    let mut no_subsets = spread_manifest("v1beta1", "no-subsets");
    no_subsets["spec"]["subsets"] = json!([]);
    refused(&beta, no_subsets, &["spec.subsets"]).await;

    // One WorkloadSpread per workload.
    let first: DynamicObject = serde_json::from_value(spread_manifest("v1beta1", "first")).unwrap();
    beta.create(&PostParams::default(), &first).await.unwrap();
    refused(&alpha, spread_manifest("v1alpha1", "second"), &["spec.targetRef"]).await;

    // The target cannot change.
    let retarget = json!({"spec": {"targetRef": {"name": "other"}}});
    match beta.patch("first", &PatchParams::default(), &Patch::Merge(&retarget)).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            let named: Vec<String> =
                status.details.iter().flat_map(|d| d.causes.iter()).map(|c| c.field.clone()).collect();
            assert!(named.iter().any(|f| f == "spec.targetRef"), "{named:?}: {}", status.message);
        }
        other => panic!("changing the target was not refused: {other:?}"),
    }
    kit.shutdown().await;
    Ok(())
}
