//! The container launch priority controller loop: the shared pod cache, a queue of the pods
//! still awaiting releases on the queue harness, and per round one read of the pod's barrier and at most one write
//! to it (plus the completion mark on the pod).

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use k8s_openapi::{
    api::core::v1::{ConfigMap, Pod},
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};
use kruise_crds::common::launch_priority::{
    CONTAINER_LAUNCH_PRIORITY_COMPLETED_KEY, Release, awaiting_release, barrier_key, barrier_name,
    next_release,
};
use kube::{
    Api, Client, ResourceExt,
    api::{ObjectMeta, Patch, PatchParams, PostParams},
    runtime::reflector::ObjectRef,
};
use serde_json::json;

use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        harness::QueueController,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "containerlaunchpriority";
/// Concurrent reconciles (upstream's 4).
pub const WORKERS: usize = 4;

struct Context {
    client: Client,
    pods: Informer<Pod>,
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or_default(), pod.name_any())
}

/// Runs the controller until the future is dropped; `on_synced` is called once the pod cache
/// holds its initial list.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let pods = caches.informer::<Pod>();
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let ctx = Arc::new(Context { client: caches.client().clone(), pods: pods.clone() });
    controller.watch(&pods, |event, queue| {
        if let CacheEvent::Applied { new, .. } = event
            && new.metadata.deletion_timestamp.is_none()
            && awaiting_release(new)
        {
            queue.add(pod_key(new));
        }
    });
    let initial_keys =
        move || pods.state().iter().filter(|pod| awaiting_release(pod)).map(|pod| pod_key(pod)).collect();
    controller
        .run(initial_keys, on_synced, move |key| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &key).await }
        })
        .await;
}

async fn reconcile(ctx: &Context, key: &str) -> Result<Option<Duration>, ControllerError> {
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    let Some(pod) = ctx.pods.get(&ObjectRef::new(name).within(namespace)) else { return Ok(None) };
    if pod.metadata.deletion_timestamp.is_some() || !awaiting_release(&pod) {
        return Ok(None);
    }
    let config_maps: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), namespace);
    let barrier = barrier_name(name);
    let released: BTreeSet<String> = match config_maps.get_opt(&barrier).await? {
        Some(existing) => existing.data.unwrap_or_default().into_keys().collect(),
        None => {
            create_barrier(&config_maps, &barrier, &pod).await?;
            BTreeSet::new()
        }
    };
    match next_release(&pod, &released) {
        Release::Wait => Ok(None),
        Release::Complete => {
            mark_completed(ctx, &pod).await?;
            Ok(None)
        }
        Release::Add { priority, completes } => {
            let patch = json!({"data": {barrier_key(priority): "true"}});
            config_maps.patch(&barrier, &PatchParams::default(), &Patch::Merge(&patch)).await?;
            tracing::info!(namespace, pod = name, priority, "released a container launch priority");
            if completes {
                mark_completed(ctx, &pod).await?;
            }
            Ok(None)
        }
    }
}

/// Creates the pod's empty barrier, owned by the pod (so it goes with it).
async fn create_barrier(api: &Api<ConfigMap>, barrier: &str, pod: &Pod) -> Result<(), ControllerError> {
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some(barrier.to_string()),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name: pod.name_any(),
                uid: pod.metadata.uid.clone().unwrap_or_default(),
                ..Default::default()
            }]),
            ..Default::default()
        },
        ..Default::default()
    };
    match api.create(&PostParams::default(), &config_map).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

async fn mark_completed(ctx: &Context, pod: &Pod) -> Result<(), ControllerError> {
    let api: Api<Pod> =
        Api::namespaced(ctx.client.clone(), pod.metadata.namespace.as_deref().unwrap_or_default());
    let patch = json!({"metadata": {"annotations": {CONTAINER_LAUNCH_PRIORITY_COMPLETED_KEY: "true"}}});
    match api.patch(&pod.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error.into()),
    }
}
