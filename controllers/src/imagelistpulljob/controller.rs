//! The ImageListPullJob controller loop: the shared caches of ImageListPullJobs and
//! ImagePullJobs, a queue of lists on the queue harness (a child's change wakes its list), and the writes [`super::core`]
//! decides: the template hash label, children created and deleted (with create expectations,
//! so a slow cache never doubles a child), the status, and the TTL deletion.

use std::{
    collections::{BTreeMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::{api::core::v1::ObjectReference, jiff::Timestamp};
use kruise_crds::apps::v1beta1::{ImageListPullJob, ImagePullJob};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams},
    runtime::reflector::ObjectRef,
};
use serde_json::json;

use super::core::{TEMPLATE_HASH_LABEL, calculate_status, child_actions, new_child, template_hash, ttl_left};
use crate::{
    ControllerError,
    imagejob::{key, split_key},
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        events::{EventKind, EventRecorder},
        expectations::{EXPECTATION_TIMEOUT, Satisfied, ScaleAction, ScaleExpectations},
        harness::QueueController,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "imagelistpulljob";
/// Concurrent reconciles.
pub const WORKERS: usize = 3;

struct Context {
    client: Client,
    lists: Informer<ImageListPullJob>,
    children: Informer<ImagePullJob>,
    created: ScaleExpectations,
    recorder: EventRecorder,
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
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let client = caches.client().clone();
    let (lists, children) = (caches.informer::<ImageListPullJob>(), caches.informer::<ImagePullJob>());
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let ctx = Arc::new(Context {
        client: client.clone(),
        lists: lists.clone(),
        children: children.clone(),
        created: ScaleExpectations::new(),
        recorder: EventRecorder::new(client.clone(), "imagelistpulljob-controller"),
    });
    let expectations = ctx.clone();
    controller.watch(&lists, move |event, queue| match event {
        CacheEvent::Applied { new, .. } => queue.add(list_key(new)),
        CacheEvent::Deleted(list) => expectations.created.delete(&list_key(list)),
        CacheEvent::Synced => {}
    });
    controller.watch(&children, |event, queue| {
        if let Some(owner) = event.object().and_then(|child| owner_key(child)) {
            queue.add(owner);
        }
    });
    let initial_keys = move || lists.state().iter().map(|list| list_key(list)).collect();
    controller
        .run(initial_keys, on_synced, move |key| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &key).await }
        })
        .await;
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
