//! The sidecar terminator's I/O: pods from the shared cache, nodes for the virtual-kubelet
//! check, and the writes [`super::core`] decides (a ContainerRecreateRequest, a pod status
//! patch, an image swap).

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_crds::{
    apps::v1beta1::ContainerRecreateRequest,
    defaults::{
        CONTAINER_RECREATE_REQUEST_SIDECAR_TERMINATED_CONDITION,
        CONTAINER_RECREATE_REQUEST_VIRTUAL_KUBELET_LABEL,
    },
};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

use super::core::{
    SidecarGroups, containers_completed, crr_name, in_place_terminated, is_interesting_pod, sidecar_groups,
    terminated_phase, uncompleted,
};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        events::{EventKind, EventRecorder},
        harness::QueueController,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "sidecarterminator";
/// Concurrent reconciles (upstream's 3).
pub const WORKERS: usize = 3;

struct Context {
    client: Client,
    pods: Informer<Pod>,
    nodes: Informer<Node>,
    recorder: EventRecorder,
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or_default(), pod.name_any())
}

/// Runs the controller until the future is dropped; `on_synced` is called once the shared pod
/// and node caches are synced. Pods are queued when they become interesting.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let pods = caches.informer::<Pod>();
    let nodes = caches.informer::<Node>();
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    controller.watch(&pods, |event, queue| {
        if let CacheEvent::Applied { new, .. } = event
            && is_interesting_pod(new)
        {
            queue.add(pod_key(new));
        }
    });
    controller.reads(&nodes);
    let context = std::sync::Arc::new(Context {
        client: caches.client().clone(),
        pods,
        nodes,
        recorder: EventRecorder::new(caches.client().clone(), "sidecarterminator-controller"),
    });
    controller
        .run(Vec::new, on_synced, move |key| {
            let context = context.clone();
            async move { reconcile(&context, &key).await }
        })
        .await;
}

fn on_virtual_kubelet(context: &Context, pod: &Pod) -> bool {
    let node_name = pod.spec.as_ref().and_then(|spec| spec.node_name.as_deref()).unwrap_or_default();
    let (key, value) = CONTAINER_RECREATE_REQUEST_VIRTUAL_KUBELET_LABEL;
    context
        .nodes
        .get_named(None, node_name)
        .is_some_and(|node| node.labels().get(key).is_some_and(|v| v == value))
}

async fn reconcile(context: &Context, key: &str) -> Result<Option<Duration>, ControllerError> {
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    let Some(pod) = context.pods.get_named(Some(namespace), name) else { return Ok(None) };
    if !is_interesting_pod(&pod) {
        return Ok(None);
    }
    let SidecarGroups { normal, ignore_exit_code, in_place } =
        sidecar_groups(&pod, on_virtual_kubelet(context, &pod));
    swap_images(context, &pod, &in_place).await?;
    stop_through_crr(context, &pod, &normal).await?;
    if ignore_exit_code.is_empty()
        || !containers_completed(&pod, &normal)
        || !containers_completed(&pod, &in_place)
    {
        return Ok(None);
    }
    mark_terminated(context, &pod).await?;
    stop_through_crr(context, &pod, &ignore_exit_code).await?;
    Ok(None)
}

/// Swaps the still-running image-swap sidecars to their stop image (virtual kubelet).
async fn swap_images(
    context: &Context,
    pod: &Pod,
    names: &std::collections::BTreeSet<String>,
) -> Result<(), ControllerError> {
    let left = uncompleted(pod, names);
    let Some(swapped) = in_place_terminated(pod, &left) else { return Ok(()) };
    let containers: Vec<_> = swapped
        .spec
        .iter()
        .flat_map(|spec| &spec.containers)
        .filter(|c| left.contains(&c.name))
        .map(|c| json!({"name": c.name, "image": c.image}))
        .collect();
    let api: Api<Pod> =
        Api::namespaced(context.client.clone(), pod.namespace().as_deref().unwrap_or_default());
    let patch = json!({"spec": {"containers": containers}});
    match api.patch(&pod.name_any(), &PatchParams::default(), &Patch::Strategic(&patch)).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
        Err(error) => return Err(error.into()),
    }
    context.recorder.publish(
        pod.object_ref(&()),
        EventKind::Normal,
        "SidecarTerminator",
        format!("Kruise SidecarTerminator is trying to terminate sidecar {left:?} using in-place update"),
    );
    Ok(())
}

/// Creates the pod's ContainerRecreateRequest for the still-running sidecars in `names`
/// (once: an existing one is waited for).
async fn stop_through_crr(
    context: &Context,
    pod: &Pod,
    names: &std::collections::BTreeSet<String>,
) -> Result<(), ControllerError> {
    let left = uncompleted(pod, names);
    if left.is_empty() {
        return Ok(());
    }
    let namespace = pod.namespace().unwrap_or_default();
    let api: Api<ContainerRecreateRequest> = Api::namespaced(context.client.clone(), &namespace);
    let name = crr_name(pod);
    let request: ContainerRecreateRequest = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": name, "namespace": namespace, "ownerReferences": [{
            "apiVersion": "v1", "kind": "Pod", "name": pod.name_any(),
            "uid": pod.metadata.uid.clone().unwrap_or_default(), "controller": true, "blockOwnerDeletion": true,
        }]},
        "spec": {
            "podName": pod.name_any(),
            "containers": left.iter().map(|name| json!({"name": name})).collect::<Vec<_>>(),
            "strategy": {"forceRecreate": true, "failurePolicy": "Ignore"},
        },
    }))?;
    match api.create(&PostParams::default(), &request).await {
        Ok(_) => {
            context.recorder.publish(
                pod.object_ref(&()),
                EventKind::Normal,
                "SidecarTerminator",
                format!("Kruise SidecarTerminator is trying to terminate sidecar {left:?} using crr"),
            );
            Ok(())
        }
        // Already asked: the request is under way.
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Sets the phase of a pod whose sidecars' exit codes are ignored from its main containers,
/// with the `SidecarTerminated` condition.
async fn mark_terminated(context: &Context, pod: &Pod) -> Result<(), ControllerError> {
    let Some(phase) = terminated_phase(pod) else { return Ok(()) };
    let now = k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let patch = json!({"status": {"phase": phase, "conditions": [{
        "type": CONTAINER_RECREATE_REQUEST_SIDECAR_TERMINATED_CONDITION, "status": "True",
        "lastTransitionTime": now, "message": "Terminated by Sidecar Terminator",
    }]}});
    let api: Api<Pod> =
        Api::namespaced(context.client.clone(), pod.namespace().as_deref().unwrap_or_default());
    match api.patch_status(&pod.name_any(), &PatchParams::default(), &Patch::Strategic(&patch)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error.into()),
    }
}
