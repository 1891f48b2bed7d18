//! The ImageListPullJob controller loop: caches of ImageListPullJobs and ImagePullJobs, a
//! [`WorkQueue`] of lists (a child's change wakes its list), and the writes [`super::core`]
//! decides: the template hash label, children created and deleted (with create expectations,
//! so a slow cache never doubles a child), the status, and the TTL deletion.

use std::{
    collections::{BTreeMap, HashSet},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use k8s_openapi::{api::core::v1::ObjectReference, jiff::Timestamp};
use kruise_crds::apps::v1beta1::{ImageListPullJob, ImagePullJob};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams},
    runtime::{
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};
use serde_json::json;

use super::core::{TEMPLATE_HASH_LABEL, calculate_status, child_actions, new_child, template_hash, ttl_left};
use crate::{
    ControllerError,
    imagejob::{key, split_key},
    runtime::{
        Metrics,
        events::{EventKind, EventRecorder},
        expectations::{EXPECTATION_TIMEOUT, Satisfied, ScaleAction, ScaleExpectations},
        informer::{Change, watch_store},
        workqueue::{BACKOFF, WorkQueue},
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "imagelistpulljob";
/// Concurrent reconciles.
pub const WORKERS: usize = 3;

struct Context {
    client: Client,
    lists: Store<ImageListPullJob>,
    children: Store<ImagePullJob>,
    created: ScaleExpectations,
    metrics: Metrics,
    recorder: EventRecorder,
    synced: AtomicBool,
}

fn list_key(list: &ImageListPullJob) -> String {
    key(
        list.metadata.namespace.as_deref().unwrap_or_default(),
        list.metadata.name.as_deref().unwrap_or_default(),
    )
}

/// The list controlling a child, as a queue key.
fn owner_key(child: &ImagePullJob) -> Option<String> {
    let owner = child
        .metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true) && o.kind == "ImageListPullJob")?;
    Some(key(child.metadata.namespace.as_deref().unwrap_or_default(), &owner.name))
}

/// Runs the ImageListPullJob controller until the future is dropped; `on_synced` is called once
/// both caches hold their initial list.
pub async fn run(client: Client, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let (lists, list_writer) = reflector::store::<ImageListPullJob>();
    let (children, child_writer) = reflector::store::<ImagePullJob>();
    metrics.init_controller(CONTROLLER_NAME);
    let ctx = Arc::new(Context {
        client: client.clone(),
        lists: lists.clone(),
        children: children.clone(),
        created: ScaleExpectations::new(),
        metrics: metrics.clone(),
        recorder: EventRecorder::new(client.clone(), "imagelistpulljob-controller"),
        synced: AtomicBool::new(false),
    });
    let queue = WorkQueue::new(BACKOFF);
    let list_watch = {
        let (queue, ctx) = (queue.clone(), ctx.clone());
        watch_store(
            Api::<ImageListPullJob>::all(client.clone()),
            watcher::Config::default(),
            list_writer,
            move |change| match change {
                Change::Applied { new, .. } => queue.add(list_key(new)),
                Change::Deleted(list) => ctx.created.delete(&list_key(list)),
                Change::Synced => {}
            },
        )
    };
    let child_watch = {
        let queue = queue.clone();
        watch_store(
            Api::<ImagePullJob>::all(client.clone()),
            watcher::Config::default(),
            child_writer,
            move |change| {
                let child = match change {
                    Change::Applied { new, .. } => new,
                    Change::Deleted(child) => child,
                    Change::Synced => return,
                };
                if let Some(owner) = owner_key(child) {
                    queue.add(owner);
                }
            },
        )
    };
    let sync_watch = {
        let (ctx, queue) = (ctx.clone(), queue.clone());
        async move {
            let _ = crate::runtime::store_sync::until_synced(&ctx.lists).await;
            let _ = crate::runtime::store_sync::until_synced(&ctx.children).await;
            ctx.synced.store(true, Ordering::SeqCst);
            tracing::info!("imagelistpulljob controller caches synced");
            for list in ctx.lists.state() {
                queue.add(list_key(&list));
            }
            on_synced();
            std::future::pending::<()>().await;
        }
    };
    let workers = {
        let ctx = ctx.clone();
        queue.run(WORKERS, move |key| {
            let ctx = ctx.clone();
            async move {
                if !ctx.synced.load(Ordering::SeqCst) {
                    return Ok(Some(Duration::from_millis(200)));
                }
                let started = Instant::now();
                let result = reconcile(&ctx, &key).await;
                let seconds = started.elapsed().as_secs_f64();
                match &result {
                    Ok(Some(_)) => ctx.metrics.reconciled(CONTROLLER_NAME, "requeue", seconds),
                    Ok(None) => ctx.metrics.reconciled(CONTROLLER_NAME, "success", seconds),
                    Err(error) => {
                        ctx.metrics.reconciled(CONTROLLER_NAME, "error", seconds);
                        tracing::warn!(imagelistpulljob = %key, %error, "reconcile failed");
                    }
                }
                result
            }
        })
    };
    tokio::join!(list_watch, child_watch, sync_watch, workers);
}

fn list_reference(list: &ImageListPullJob) -> ObjectReference {
    ObjectReference {
        api_version: Some("apps.kruise.io/v1beta1".into()),
        kind: Some("ImageListPullJob".into()),
        name: list.metadata.name.clone(),
        namespace: list.metadata.namespace.clone(),
        uid: list.metadata.uid.clone(),
        ..Default::default()
    }
}

async fn reconcile(ctx: &Context, list_key: &str) -> Result<Option<Duration>, ControllerError> {
    let (namespace, name) = split_key(list_key);
    let Some(list) = ctx.lists.get(&ObjectRef::new(name).within(namespace)) else { return Ok(None) };
    if list.metadata.deletion_timestamp.is_some() {
        return Ok(None);
    }
    let now = Timestamp::now();
    let api: Api<ImageListPullJob> = Api::namespaced(ctx.client.clone(), namespace);
    let hash = template_hash(&list.spec.template);
    if list.labels().get(TEMPLATE_HASH_LABEL) != Some(&hash) {
        let patch = json!({"metadata": {"labels": {TEMPLATE_HASH_LABEL: hash}}});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await?;
    }
    if list.status.as_ref().is_some_and(|s| s.completion_time.is_some()) {
        return match ttl_left(&list, now) {
            Some(left) if left.is_zero() => {
                tracing::info!(imagelistpulljob = %list_key, "deleting the ImageListPullJob after its ttlSecondsAfterFinished");
                match api.delete(name, &DeleteParams::default()).await {
                    Ok(_) => Ok(None),
                    Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
                    Err(error) => Err(error.into()),
                }
            }
            other => Ok(other),
        };
    }
    let uid = list.metadata.uid.clone().unwrap_or_default();
    let children: BTreeMap<String, ImagePullJob> = ctx
        .children
        .state()
        .iter()
        .filter(|child| child.metadata.namespace.as_deref() == Some(namespace))
        .filter(|child| child.metadata.deletion_timestamp.is_none())
        .filter(|child| child.owner_references().iter().any(|o| o.controller == Some(true) && o.uid == uid))
        .map(|child| (child.spec.image.clone(), (**child).clone()))
        .collect();
    let present: HashSet<String> = children.keys().cloned().collect();
    ctx.created.observe(list_key, &present);
    if let Satisfied::No { retry_after, .. } =
        ctx.created.satisfied(list_key, Instant::now(), EXPECTATION_TIMEOUT)
    {
        return Ok(Some(retry_after.min(Duration::from_secs(1))));
    }
    let status = calculate_status(&list, &children, now);
    let actions = child_actions(&list, &children, &hash);
    let jobs: Api<ImagePullJob> = Api::namespaced(ctx.client.clone(), namespace);
    for image in &actions.create {
        ctx.created.expect(list_key, ScaleAction::Create, image, Instant::now());
        if let Err(error) = jobs.create(&PostParams::default(), &new_child(&list, image, &hash)).await {
            ctx.created.forget(list_key, ScaleAction::Create, image);
            return Err(error.into());
        }
    }
    if !actions.create.is_empty() {
        ctx.recorder.publish(
            list_reference(&list),
            EventKind::Normal,
            "SuccessfulCreate",
            format!("Create {} ImagePullJob", actions.create.len()),
        );
    }
    for child in &actions.delete {
        match jobs.delete(child, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
    }
    if list.status.as_ref() != Some(&status) {
        let mut updated = (*list).clone();
        updated.status = Some(status);
        api.replace_status(name, &PostParams::default(), &updated).await?;
    }
    Ok(None)
}
