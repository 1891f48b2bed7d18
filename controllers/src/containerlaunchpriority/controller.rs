//! The container launch priority controller loop: a cache of pods, a [`WorkQueue`] of the pods
//! still awaiting releases, and per round one read of the pod's barrier and at most one write
//! to it (plus the completion mark on the pod).

use std::{
    collections::BTreeSet,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

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
    runtime::{
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};
use serde_json::json;

use crate::{
    ControllerError,
    runtime::{
        Metrics,
        informer::{Change, watch_store},
        workqueue::{BACKOFF, WorkQueue},
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "containerlaunchpriority";
/// Concurrent reconciles (upstream's 4).
pub const WORKERS: usize = 4;

struct Context {
    client: Client,
    pods: Store<Pod>,
    metrics: Metrics,
    synced: AtomicBool,
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or_default(), pod.name_any())
}

/// Runs the controller until the future is dropped; `on_synced` is called once the pod cache
/// holds its initial list.
pub async fn run(client: Client, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let (pods, pod_writer) = reflector::store::<Pod>();
    metrics.init_controller(CONTROLLER_NAME);
    let ctx = Arc::new(Context {
        client: client.clone(),
        pods: pods.clone(),
        metrics: metrics.clone(),
        synced: AtomicBool::new(false),
    });
    let queue = WorkQueue::new(BACKOFF);
    let pod_watch = {
        let queue = queue.clone();
        watch_store(Api::<Pod>::all(client.clone()), watcher::Config::default(), pod_writer, move |change| {
            if let Change::Applied { new, .. } = change
                && new.metadata.deletion_timestamp.is_none()
                && awaiting_release(new)
            {
                queue.add(pod_key(new));
            }
        })
    };
    let sync_watch = {
        let (ctx, queue) = (ctx.clone(), queue.clone());
        async move {
            let _ = crate::runtime::store_sync::until_synced(&ctx.pods).await;
            ctx.synced.store(true, Ordering::SeqCst);
            tracing::info!("containerlaunchpriority controller caches synced");
            for pod in ctx.pods.state().iter().filter(|pod| awaiting_release(pod)) {
                queue.add(pod_key(pod));
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
    tokio::join!(pod_watch, sync_watch, depth, workers);
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
            tracing::warn!(pod = %key, %error, "reconcile failed");
        }
    }
    result
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
