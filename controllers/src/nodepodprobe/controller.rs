//! The NodePodProbe controller loop: caches of NodePodProbes, nodes, pods and PodProbeMarkers;
//! a [`WorkQueue`] of node names fed by their watches (a ready node without a NodePodProbe, a
//! node deleted, a NodePodProbe whose status changed, a listed pod deleted or finished); and
//! the writes [`super::core`] calls for. Pod labels and annotations are merge-patched, pod
//! conditions written through the status subresource with the pod's resourceVersion (upstream
//! writes both through `pods/status`, which a real API server does not apply to metadata:
//! openkruise/kruise#1597).

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_crds::apps::v1alpha1::{NodePodProbe, PodProbeMarker, PodProbeStatus};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams},
    runtime::{
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};

use super::core::{marks, metadata_patch, node_is_probed, node_is_ready, prune_spec, updated_conditions};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        informer::{Change, watch_store},
        workqueue::{BACKOFF, WorkQueue},
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
    probes: Store<NodePodProbe>,
    nodes: Store<Node>,
    pods: Store<Pod>,
    markers: Store<PodProbeMarker>,
    metrics: Metrics,
    synced: AtomicBool,
}

fn node_of(pod: &Pod) -> Option<String> {
    pod.spec.as_ref().and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty())
}

/// Whether the node's NodePodProbe lists the pod.
fn lists_pod(probes: &Store<NodePodProbe>, node: &str, pod: &Pod) -> bool {
    probes.get(&ObjectRef::new(node)).is_some_and(|npp| {
        npp.spec.pod_probes.iter().any(|p| {
            Some(&p.name) == pod.metadata.name.as_ref()
                && Some(&p.namespace) == pod.metadata.namespace.as_ref()
        })
    })
}

/// Runs the NodePodProbe controller until the future is dropped; `on_synced` is called once
/// every cache holds its initial list.
pub async fn run(client: Client, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let (probes, probe_writer) = reflector::store::<NodePodProbe>();
    let (nodes, node_writer) = reflector::store::<Node>();
    let (pods, pod_writer) = reflector::store::<Pod>();
    let (markers, marker_writer) = reflector::store::<PodProbeMarker>();
    metrics.init_controller(CONTROLLER_NAME);
    let ctx = Arc::new(Context {
        client: client.clone(),
        probes: probes.clone(),
        nodes: nodes.clone(),
        pods: pods.clone(),
        markers: markers.clone(),
        metrics: metrics.clone(),
        synced: AtomicBool::new(false),
    });
    let queue = WorkQueue::new(BACKOFF);
    let probe_watch = {
        let queue = queue.clone();
        watch_store(
            Api::<NodePodProbe>::all(client.clone()),
            watcher::Config::default(),
            probe_writer,
            move |change| match change {
                Change::Applied { new, old } if old.as_ref().is_none_or(|old| old.status != new.status) => {
                    queue.add(new.name_any())
                }
                Change::Deleted(npp) => queue.add(npp.name_any()),
                _ => {}
            },
        )
    };
    let node_watch = {
        let (queue, probes) = (queue.clone(), probes.clone());
        watch_store(
            Api::<Node>::all(client.clone()),
            watcher::Config::default(),
            node_writer,
            move |change| {
                let (node, deleted) = match change {
                    Change::Applied { new, .. } => (new, new.metadata.deletion_timestamp.is_some()),
                    Change::Deleted(node) => (node, true),
                    Change::Synced => return,
                };
                if !node_is_probed(node) {
                    return;
                }
                let name = node.name_any();
                let exists = probes.get(&ObjectRef::new(&name)).is_some();
                if (deleted && exists) || (!deleted && !exists && node_is_ready(node)) {
                    queue.add(name);
                }
            },
        )
    };
    let pod_watch = {
        let (queue, probes) = (queue.clone(), probes.clone());
        watch_store(Api::<Pod>::all(client.clone()), watcher::Config::default(), pod_writer, move |change| {
            use crate::cloneset::core::pods::is_pod_active;
            let pod = match change {
                Change::Applied { new, old: Some(old) } if is_pod_active(&old) && !is_pod_active(new) => new,
                Change::Deleted(pod) => pod,
                _ => return,
            };
            if let Some(node) = node_of(pod)
                && lists_pod(&probes, &node, pod)
            {
                queue.add(node);
            }
        })
    };
    let marker_watch = watch_store(
        Api::<PodProbeMarker>::all(client.clone()),
        watcher::Config::default(),
        marker_writer,
        |_| {},
    );
    let sync_watch = {
        let (ctx, queue) = (ctx.clone(), queue.clone());
        async move {
            let _ = crate::runtime::store_sync::until_synced(&ctx.probes).await;
            let _ = crate::runtime::store_sync::until_synced(&ctx.nodes).await;
            let _ = crate::runtime::store_sync::until_synced(&ctx.pods).await;
            let _ = crate::runtime::store_sync::until_synced(&ctx.markers).await;
            ctx.synced.store(true, Ordering::SeqCst);
            tracing::info!("nodepodprobe controller caches synced");
            for npp in ctx.probes.state() {
                queue.add(npp.name_any());
            }
            for node in ctx.nodes.state() {
                if node_is_probed(&node) && node_is_ready(&node) {
                    queue.add(node.name_any());
                }
            }
            on_synced();
            std::future::pending::<()>().await;
        }
    };
    let depth = {
        let (queue, metrics) = (queue.clone(), metrics.clone());
        async move {
            loop {
                metrics.set_queue_depth(CONTROLLER_NAME, i64::try_from(queue.len()).unwrap_or(i64::MAX));
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    };
    let workers = {
        let ctx = ctx.clone();
        queue.run(WORKERS, move |key| {
            let ctx = ctx.clone();
            async move { reconcile_and_record(&ctx, &key).await }
        })
    };
    tokio::join!(probe_watch, node_watch, pod_watch, marker_watch, sync_watch, depth, workers);
}

async fn reconcile_and_record(ctx: &Context, key: &str) -> Result<Option<Duration>, ControllerError> {
    if !ctx.synced.load(Ordering::SeqCst) {
        return Ok(Some(Duration::from_millis(200)));
    }
    let started = Instant::now();
    let result = reconcile(ctx, key).await;
    let seconds = started.elapsed().as_secs_f64();
    match &result {
        Ok(Some(_)) => ctx.metrics.reconciled(CONTROLLER_NAME, "requeue", seconds),
        Ok(None) => ctx.metrics.reconciled(CONTROLLER_NAME, "success", seconds),
        Err(error) => {
            ctx.metrics.reconciled(CONTROLLER_NAME, "error", seconds);
            tracing::warn!(nodepodprobe = %key, %error, "reconcile failed");
        }
    }
    result
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
