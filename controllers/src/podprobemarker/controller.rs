//! The PodProbeMarker controller loop: the shared caches of markers, pods and nodes; a queue of
//! markers on the queue harness, fed by their changes (and by pods that became probe targets or changed IP or labels);
//! and the writes [`super::core`] calls for. NodePodProbes are read fresh and replaced with
//! their resourceVersion, so a concurrent write (the NodePodProbe controller pruning, another
//! marker) is retried rather than lost.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_crds::apps::v1alpha1::{NodePodProbe, PodProbeMarker};
use kube::{
    Api, Client, ResourceExt,
    api::{Patch, PatchParams, PostParams},
    runtime::reflector::ObjectRef,
};
use serde_json::json;

use super::core::{
    FINALIZER, VIRTUAL_KUBELET_LABEL, apply_marker, marker_selects, pod_change_matters, pod_is_probe_target,
    remove_marker,
};
use crate::{
    ControllerError,
    imagejob::{key, split_key},
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        harness::QueueController,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "podprobemarker";
/// Concurrent reconciles (upstream `--podprobemarker-workers`).
pub const WORKERS: usize = 3;
/// When to look again at a marker whose pods run on a node without a NodePodProbe yet.
const NODE_PROBE_MISSING_RETRY: Duration = Duration::from_secs(2);

struct Context {
    client: Client,
    markers: Informer<PodProbeMarker>,
    pods: Informer<Pod>,
    nodes: Informer<Node>,
}

fn marker_key(marker: &PodProbeMarker) -> String {
    key(
        marker.metadata.namespace.as_deref().unwrap_or_default(),
        marker.metadata.name.as_deref().unwrap_or_default(),
    )
}

/// Runs the PodProbeMarker controller until the future is dropped; `on_synced` is called once
/// every cache holds its initial list.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let (markers, pods, nodes) =
        (caches.informer::<PodProbeMarker>(), caches.informer::<Pod>(), caches.informer::<Node>());
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let ctx = Arc::new(Context {
        client: caches.client().clone(),
        markers: markers.clone(),
        pods: pods.clone(),
        nodes: nodes.clone(),
    });
    controller.watch(&markers, |event, queue| {
        if let CacheEvent::Applied { new, .. } = event {
            queue.add(marker_key(new));
        }
    });
    let all_markers = markers.clone();
    controller.watch(&pods, move |event, queue| {
        let CacheEvent::Applied { new, old } = event else { return };
        if !pod_change_matters(new, old.as_deref()) {
            return;
        }
        for marker in all_markers.state().iter().filter(|m| marker_selects(m, new)) {
            queue.add(marker_key(marker));
        }
    });
    controller.reads(&nodes);
    let initial_keys = move || markers.state().iter().map(|marker| marker_key(marker)).collect();
    controller
        .run(initial_keys, on_synced, move |key| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &key).await }
        })
        .await;
}

/// The selected probe targets grouped by node, leaving out pods whose node is unknown and
/// pods of virtual-kubelet nodes (no daemon probes them; upstream marks them only with
/// `EnablePodProbeMarkerOnServerless`, off by default). Returns the groups and the count of
/// matched pods (serverless ones included, as upstream counts them).
fn pods_by_node(ctx: &Context, marker: &PodProbeMarker) -> (BTreeMap<String, Vec<Arc<Pod>>>, usize) {
    let mut groups: BTreeMap<String, Vec<Arc<Pod>>> = BTreeMap::new();
    let mut matched = 0;
    for pod in ctx.pods.state().into_iter().filter(|p| marker_selects(marker, p) && pod_is_probe_target(p)) {
        let node_name = pod.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
        let Some(node) = ctx.nodes.get(&ObjectRef::new(&node_name)) else { continue };
        matched += 1;
        let serverless = node
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(VIRTUAL_KUBELET_LABEL.0))
            .is_some_and(|v| v == VIRTUAL_KUBELET_LABEL.1);
        if !serverless {
            groups.entry(node_name).or_default().push(pod);
        }
    }
    (groups, matched)
}

async fn reconcile(ctx: &Context, marker_key: &str) -> Result<Option<Duration>, ControllerError> {
    let (namespace, name) = split_key(marker_key);
    let Some(marker) = ctx.markers.get(&ObjectRef::new(name).within(namespace)) else { return Ok(None) };
    let api: Api<PodProbeMarker> = Api::namespaced(ctx.client.clone(), namespace);
    let node_probes: Api<NodePodProbe> = Api::all(ctx.client.clone());
    let (groups, matched) = pods_by_node(ctx, &marker);
    let has_finalizer = marker.finalizers().iter().any(|f| f == FINALIZER);

    if marker.metadata.deletion_timestamp.is_some() {
        if !has_finalizer {
            return Ok(None);
        }
        for node in groups.keys() {
            edit_node_probe(&node_probes, node, |spec| remove_marker(spec, namespace, name)).await?;
        }
        let finalizers: Vec<String> =
            marker.finalizers().iter().filter(|f| *f != FINALIZER).cloned().collect();
        set_finalizers(&api, &marker, finalizers).await?;
        tracing::info!(podprobemarker = %marker_key, "removed the marker's probes from its NodePodProbes");
        return Ok(None);
    }
    if !has_finalizer {
        let mut finalizers = marker.finalizers().to_vec();
        finalizers.push(FINALIZER.into());
        set_finalizers(&api, &marker, finalizers).await?;
    }
    let mut missing = false;
    for (node, pods) in &groups {
        let pods: Vec<&Pod> = pods.iter().map(|p| p.as_ref()).collect();
        missing |= !edit_node_probe(&node_probes, node, |spec| {
            let (spec, errors) = apply_marker(spec, &marker, &pods);
            for error in errors {
                tracing::warn!(podprobemarker = %marker_key, %error, "probe left out");
            }
            spec
        })
        .await?;
    }
    let generation = marker.metadata.generation.unwrap_or_default();
    let matched = i64::try_from(matched).unwrap_or(i64::MAX);
    let status = marker.status.clone().unwrap_or_default();
    if status.observed_generation != generation || status.matched_pods != matched {
        let patch = json!({"status": {"observedGeneration": generation, "matchedPods": matched}});
        match api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => {}
            Err(kube::Error::Api(response)) if response.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
    }
    // A node whose NodePodProbe is not created yet: look again (upstream waits for the next pod
    // event; a pod already running would not send one).
    Ok(missing.then_some(NODE_PROBE_MISSING_RETRY))
}

/// Reads the node's NodePodProbe fresh and replaces its spec with `edit`'s result when that
/// differs; returns `false` when the node has no NodePodProbe (yet: its controller creates it).
async fn edit_node_probe(
    api: &Api<NodePodProbe>,
    node: &str,
    edit: impl FnOnce(
        &kruise_crds::apps::v1alpha1::NodePodProbeSpec,
    ) -> kruise_crds::apps::v1alpha1::NodePodProbeSpec,
) -> Result<bool, ControllerError> {
    let Some(mut npp) = api.get_opt(node).await? else {
        tracing::info!(node, "no NodePodProbe for the node yet");
        return Ok(false);
    };
    let spec = edit(&npp.spec);
    if spec == npp.spec {
        return Ok(true);
    }
    npp.spec = spec;
    api.replace(node, &PostParams::default(), &npp).await?;
    tracing::debug!(node, "updated the NodePodProbe's spec");
    Ok(true)
}

async fn set_finalizers(
    api: &Api<PodProbeMarker>,
    marker: &PodProbeMarker,
    finalizers: Vec<String>,
) -> Result<(), ControllerError> {
    let patch = json!({"metadata": {
        "finalizers": finalizers,
        "resourceVersion": marker.metadata.resource_version,
    }});
    match api.patch(&marker.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(response)) if response.code == 404 => Ok(()),
        Err(error) => Err(error.into()),
    }
}
