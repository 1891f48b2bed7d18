//! The NodePodProbe controller loop: the shared caches of NodePodProbes, nodes, pods and
//! PodProbeMarkers; a queue of node names on the queue harness, fed by their changes (a ready node without a NodePodProbe, a
//! node deleted, a NodePodProbe whose status changed, a listed pod deleted or finished); and
//! the writes [`super::core`] calls for. Pod labels and annotations are merge-patched, pod
//! conditions written through the status subresource with the pod's resourceVersion (upstream
//! writes both through `pods/status`, which a real API server does not apply to metadata:
//! openkruise/kruise#1597).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_crds::apps::v1alpha1::{NodePodProbe, PodProbeMarker, PodProbeStatus};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams},
    runtime::reflector::ObjectRef,
};

use super::core::{marks, metadata_patch, node_is_probed, node_is_ready, prune_spec, updated_conditions};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        harness::QueueController,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "nodepodprobe";
/// Concurrent reconciles (upstream `--nodepodprobe-workers`).
pub const WORKERS: usize = 3;
/// Attempts of a pod status write that keeps meeting conflicts.
const CONFLICT_RETRIES: usize = 5;

struct Context {
    client: Client,
    probes: Informer<NodePodProbe>,
    nodes: Informer<Node>,
    pods: Informer<Pod>,
    markers: Informer<PodProbeMarker>,
}

fn node_of(pod: &Pod) -> Option<String> {
    pod.spec.as_ref().and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty())
}

/// Whether the node's NodePodProbe lists the pod.
fn lists_pod(probes: &Informer<NodePodProbe>, node: &str, pod: &Pod) -> bool {
    probes.get(&ObjectRef::new(node)).is_some_and(|npp| {
        npp.spec.pod_probes.iter().any(|p| {
            Some(&p.name) == pod.metadata.name.as_ref()
                && Some(&p.namespace) == pod.metadata.namespace.as_ref()
        })
    })
}

/// Runs the NodePodProbe controller until the future is dropped; `on_synced` is called once
/// every cache holds its initial list.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let (probes, nodes, pods, markers) = (
        caches.informer::<NodePodProbe>(),
        caches.informer::<Node>(),
        caches.informer::<Pod>(),
        caches.informer::<PodProbeMarker>(),
    );
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let ctx = Arc::new(Context {
        client: caches.client().clone(),
        probes: probes.clone(),
        nodes: nodes.clone(),
        pods: pods.clone(),
        markers: markers.clone(),
    });
    controller.watch(&probes, |event, queue| match event {
        CacheEvent::Applied { new, old } if old.as_ref().is_none_or(|old| old.status != new.status) => {
            queue.add(new.name_any())
        }
        CacheEvent::Deleted(npp) => queue.add(npp.name_any()),
        _ => {}
    });
    let node_probes = probes.clone();
    controller.watch(&nodes, move |event, queue| {
        let (node, deleted) = match event {
            CacheEvent::Applied { new, .. } => (new, new.metadata.deletion_timestamp.is_some()),
            CacheEvent::Deleted(node) => (node, true),
            CacheEvent::Synced => return,
        };
        if !node_is_probed(node) {
            return;
        }
        let name = node.name_any();
        let exists = node_probes.get(&ObjectRef::new(&name)).is_some();
        if (deleted && exists) || (!deleted && !exists && node_is_ready(node)) {
            queue.add(name);
        }
    });
    let pod_probes = probes.clone();
    controller.watch(&pods, move |event, queue| {
        use crate::workload::pods::is_pod_active;
        let pod = match event {
            CacheEvent::Applied { new, old: Some(old) } if is_pod_active(old) && !is_pod_active(new) => new,
            CacheEvent::Deleted(pod) => pod,
            _ => return,
        };
        if let Some(node) = node_of(pod)
            && lists_pod(&pod_probes, &node, pod)
        {
            queue.add(node);
        }
    });
    controller.reads(&markers);
    let initial_keys = move || {
        let mut keys: Vec<String> = probes.state().iter().map(|npp| npp.name_any()).collect();
        keys.extend(
            nodes
                .state()
                .iter()
                .filter(|node| node_is_probed(node) && node_is_ready(node))
                .map(|node| node.name_any()),
        );
        keys
    };
    controller
        .run(initial_keys, on_synced, move |key| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &key).await }
        })
        .await;
}

async fn reconcile(ctx: &Context, name: &str) -> Result<Option<Duration>, ControllerError> {
    let api: Api<NodePodProbe> = Api::all(ctx.client.clone());
    let node = ctx.nodes.get(&ObjectRef::new(name));
    let node_gone = node.as_ref().is_none_or(|n| n.metadata.deletion_timestamp.is_some());
    let Some(npp) = ctx.probes.get(&ObjectRef::new(name)) else {
        if node_gone || node.as_ref().is_some_and(|n| !node_is_probed(n)) {
            return Ok(None);
        }
        let npp = NodePodProbe {
            metadata: ObjectMeta { name: Some(name.to_string()), ..Default::default() },
            spec: Default::default(),
            status: None,
        };
        match api.create(&PostParams::default(), &npp).await {
            Ok(_) => tracing::info!(node = name, "created the node's NodePodProbe"),
            Err(kube::Error::Api(response)) if response.code == 409 => {}
            Err(error) => return Err(error.into()),
        }
        return Ok(None);
    };
    if node_gone {
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => tracing::info!(node = name, "deleted the NodePodProbe of a deleted node"),
            Err(kube::Error::Api(response)) if response.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
        return Ok(None);
    }
    let pods: Vec<Arc<Pod>> = npp
        .spec
        .pod_probes
        .iter()
        .filter_map(|entry| ctx.pods.get(&ObjectRef::new(&entry.name).within(&entry.namespace)))
        .collect();
    let live: BTreeMap<String, &Pod> = pods
        .iter()
        .map(|p| {
            (format!("{}/{}", p.metadata.namespace.as_deref().unwrap_or_default(), p.name_any()), p.as_ref())
        })
        .collect();
    let pruned = prune_spec(&npp.spec, &live);
    if pruned != npp.spec {
        prune(&api, name, &live).await?;
    }
    let statuses = npp.status.as_ref().map(|s| s.pod_probe_statuses.clone()).unwrap_or_default();
    for status in &statuses {
        let Some(pod) = pruned
            .pod_probes
            .iter()
            .find(|entry| entry.uid == status.uid)
            .and_then(|entry| live.get(&format!("{}/{}", entry.namespace, entry.name)))
        else {
            continue;
        };
        mark_pod(ctx, pod, status).await?;
    }
    Ok(None)
}

/// Re-reads the NodePodProbe and writes its pruned spec (retrying on conflicts).
async fn prune(
    api: &Api<NodePodProbe>,
    name: &str,
    live: &BTreeMap<String, &Pod>,
) -> Result<(), ControllerError> {
    for _ in 0..CONFLICT_RETRIES {
        let Some(mut fresh) = api.get_opt(name).await? else { return Ok(()) };
        let spec = prune_spec(&fresh.spec, live);
        if spec == fresh.spec {
            return Ok(());
        }
        fresh.spec = spec;
        match api.replace(name, &PostParams::default(), &fresh).await {
            Ok(_) => {
                tracing::info!(node = name, "pruned probes of pods gone from the NodePodProbe");
                return Ok(());
            }
            Err(kube::Error::Api(response)) if response.code == 409 => continue,
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!("NodePodProbe {name}: too many conflicts while pruning")))
}

/// Writes one pod's probe results onto it: labels and annotations, then conditions.
async fn mark_pod(ctx: &Context, pod: &Pod, status: &PodProbeStatus) -> Result<(), ControllerError> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let markers: Vec<Arc<PodProbeMarker>> = ctx
        .markers
        .state()
        .into_iter()
        .filter(|m| {
            m.metadata.namespace.as_deref() == Some(namespace) && m.metadata.deletion_timestamp.is_none()
        })
        .collect();
    let marks = marks(status, |name| markers.iter().find(|m| m.name_any() == name).map(|m| m.as_ref()));
    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), namespace);
    let pod_name = pod.name_any();
    if let Some(patch) = metadata_patch(pod, &marks) {
        match api.patch(&pod_name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => {
                tracing::info!(pod = %pod_name, namespace, %patch, "marked the pod per its probe results")
            }
            Err(kube::Error::Api(response)) if response.code == 404 => return Ok(()),
            Err(error) => return Err(error.into()),
        }
    }
    if updated_conditions(pod, &marks).is_none() {
        return Ok(());
    }
    for _ in 0..CONFLICT_RETRIES {
        let Some(mut fresh) = api.get_opt(&pod_name).await? else { return Ok(()) };
        let Some(conditions) = updated_conditions(&fresh, &marks) else { return Ok(()) };
        fresh.status.get_or_insert_with(Default::default).conditions = Some(conditions);
        match api.replace_status(&pod_name, &PostParams::default(), &fresh).await {
            Ok(_) => {
                tracing::info!(pod = %pod_name, namespace, "set the pod's probe conditions");
                return Ok(());
            }
            Err(kube::Error::Api(response)) if response.code == 409 => continue,
            Err(kube::Error::Api(response)) if response.code == 404 => return Ok(()),
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!("pod {namespace}/{pod_name}: too many conflicts on its status")))
}
