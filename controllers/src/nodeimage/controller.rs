//! The NodeImage controller loop: follows the shared caches of Nodes, NodeImages and
//! ImagePullJobs, and reconciles one NodeImage per node name on the queue harness (a NodeImage is reconciled whether or
//! not it exists yet). The decisions are in [`super::core`]; this file reads the caches, writes
//! through the API and publishes Events.

use std::{sync::Arc, time::Duration};

use k8s_openapi::{
    api::core::v1::{Node, ObjectReference},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{ImagePullJob, NodeImage};
use kube::{
    Api, Client,
    api::{DeleteParams, ObjectMeta, PostParams},
    runtime::reflector::ObjectRef,
};

use super::core::{Lifecycle, OwnerLookup, clean_spec, lifecycle, requeue, status_update};
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
pub const CONTROLLER_NAME: &str = "nodeimage";
/// Concurrent reconciles (upstream `--nodeimage-workers`).
pub const WORKERS: usize = 3;

/// How the controller runs.
#[derive(Clone, Debug)]
pub struct NodeImageOptions {
    /// Wait after a node turned Ready before creating its NodeImage.
    pub creation_delay: Duration,
}

impl Default for NodeImageOptions {
    fn default() -> Self {
        Self { creation_delay: super::core::DEFAULT_CREATION_DELAY }
    }
}

struct Context {
    client: Client,
    nodes: Informer<Node>,
    node_images: Informer<NodeImage>,
    jobs: Informer<ImagePullJob>,
    options: NodeImageOptions,
    recorder: EventRecorder,
}

fn labels_of(meta: &ObjectMeta) -> std::collections::BTreeMap<String, String> {
    meta.labels.clone().unwrap_or_default()
}

/// Runs the NodeImage controller until the future is dropped; `on_synced` is called once every
/// cache holds its initial list.
pub async fn run(
    caches: Caches,
    metrics: Metrics,
    options: NodeImageOptions,
    on_synced: impl FnOnce() + Send,
) {
    let client = caches.client().clone();
    let (nodes, node_images, jobs) =
        (caches.informer::<Node>(), caches.informer::<NodeImage>(), caches.informer::<ImagePullJob>());
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let ctx = Arc::new(Context {
        client: client.clone(),
        nodes: nodes.clone(),
        node_images: node_images.clone(),
        jobs: jobs.clone(),
        options,
        recorder: EventRecorder::new(client.clone(), "nodeimage-controller"),
    });

    let cached_images = node_images.clone();
    controller.watch(&nodes, move |event, queue| match event {
        CacheEvent::Applied { new, old } => {
            let name = new.metadata.name.clone().unwrap_or_default();
            let node_image = cached_images.get(&ObjectRef::new(&name));
            let labels_changed =
                node_image.as_ref().is_none_or(|ni| labels_of(&ni.metadata) != labels_of(&new.metadata));
            let ready_changed = old.as_ref().is_none_or(|old| {
                super::core::ready_for(old, Timestamp::now()).is_some()
                    != super::core::ready_for(new, Timestamp::now()).is_some()
            });
            if new.metadata.deletion_timestamp.is_some()
                || labels_changed
                || (node_image.is_none() && ready_changed)
            {
                queue.add(name);
            }
        }
        CacheEvent::Deleted(node) => queue.add(node.metadata.name.clone().unwrap_or_default()),
        CacheEvent::Synced => {}
    });
    controller.watch(&node_images, |event, queue| {
        if let Some(ni) = event.object() {
            queue.add(ni.metadata.name.clone().unwrap_or_default());
        }
    });
    let cached_images = node_images.clone();
    controller.watch(&jobs, move |event, queue| {
        // A deleted job: its tags leave the NodeImages that have them.
        if let CacheEvent::Deleted(job) = event {
            let uid = job.metadata.uid.clone();
            for ni in cached_images.state() {
                let owned = ni.spec.images.values().flat_map(|image| &image.tags).any(|tag| {
                    tag.owner_references.iter().any(|owner| owner.uid.is_some() && owner.uid == uid)
                });
                if owned {
                    queue.add(ni.metadata.name.clone().unwrap_or_default());
                }
            }
        }
    });
    let initial_keys = {
        let (nodes, node_images) = (nodes.clone(), node_images.clone());
        move || {
            let names = nodes.state().into_iter().map(|n| n.metadata.name.clone());
            names
                .chain(node_images.state().into_iter().map(|ni| ni.metadata.name.clone()))
                .flatten()
                .collect()
        }
    };
    controller
        .run(initial_keys, on_synced, move |name| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &name).await }
        })
        .await;
}

/// Looks up an ImagePullJob named by a tag's owner reference: in the cache, else (it may be
/// newer than the cache) through the API.
async fn lookup_job(ctx: &Context, owner: &ObjectReference) -> OwnerLookup {
    let namespace = owner.namespace.clone().unwrap_or_default();
    let name = owner.name.clone().unwrap_or_default();
    if let Some(job) = ctx.jobs.get(&ObjectRef::new(&name).within(&namespace)) {
        return OwnerLookup::Found(job.metadata.uid.clone().unwrap_or_default());
    }
    let api: Api<ImagePullJob> = Api::namespaced(ctx.client.clone(), &namespace);
    match api.get_opt(&name).await {
        Ok(Some(job)) => OwnerLookup::Found(job.metadata.uid.unwrap_or_default()),
        Ok(None) => OwnerLookup::Missing,
        Err(error) => {
            tracing::warn!(%namespace, %name, %error, "cannot look up an ImagePullJob owning a tag");
            OwnerLookup::Unknown
        }
    }
}

async fn reconcile(ctx: &Context, name: &str) -> Result<Option<Duration>, ControllerError> {
    let api: Api<NodeImage> = Api::all(ctx.client.clone());
    let now = Timestamp::now();
    let node = ctx.nodes.get(&ObjectRef::new(name));
    let cached = ctx.node_images.get(&ObjectRef::new(name));
    match lifecycle(node.as_deref(), cached.as_deref(), ctx.options.creation_delay, now) {
        Lifecycle::Done => Ok(None),
        Lifecycle::CreateAfter(delay) => Ok(Some(delay)),
        Lifecycle::Delete => {
            match api.delete(name, &DeleteParams::default()).await {
                Ok(_) => tracing::info!(nodeimage = %name, "deleted the NodeImage of a deleted node"),
                Err(kube::Error::Api(response)) if response.code == 404 => {}
                Err(error) => return Err(error.into()),
            }
            Ok(None)
        }
        Lifecycle::Create => {
            let labels = node.as_deref().map(|n| labels_of(&n.metadata)).filter(|l| !l.is_empty());
            let mut node_image = NodeImage::new(name, Default::default());
            node_image.metadata.labels = labels;
            match api.create(&PostParams::default(), &node_image).await {
                Ok(_) => tracing::info!(nodeimage = %name, "created the NodeImage of a node"),
                Err(kube::Error::Api(response)) if response.code == 409 => {}
                Err(error) => return Err(error.into()),
            }
            Ok(None)
        }
        Lifecycle::Sync => {
            let Some(cached) = cached else { return Ok(None) };
            let node_labels = node.as_deref().map(|n| labels_of(&n.metadata));
            if let Some(after) = sync_spec(ctx, &api, name, (*cached).clone(), node_labels.as_ref()).await? {
                return Ok(after);
            }
            let update = status_update(&cached, now);
            if let Some(status) = update.status.clone() {
                let mut updated = (*cached).clone();
                updated.status = Some(status);
                api.replace_status(name, &PostParams::default(), &updated).await?;
                for failed in &update.failed {
                    let note = format!(
                        "Failed to pull image {} on node {name} for {}",
                        failed.image, failed.message
                    );
                    for owner in &failed.owners {
                        ctx.recorder.publish(
                            owner.clone(),
                            EventKind::Warning,
                            "PullImageFailed",
                            note.clone(),
                        );
                    }
                    ctx.recorder.publish(
                        node_image_reference(&cached),
                        EventKind::Warning,
                        "PullImageFailed",
                        note,
                    );
                }
            }
            let ttl = clean_spec(&cached, node_labels.as_ref(), &|_| OwnerLookup::Unknown, now).requeue_after;
            Ok(requeue(&[ttl, update.requeue_after], rand::random::<f64>()))
        }
    }
}

fn node_image_reference(node_image: &NodeImage) -> ObjectReference {
    ObjectReference {
        api_version: Some("apps.kruise.io/v1beta1".into()),
        kind: Some("NodeImage".into()),
        name: node_image.metadata.name.clone(),
        uid: node_image.metadata.uid.clone(),
        ..Default::default()
    }
}

/// Cleans the spec and labels, retrying on conflicts with a fresh copy; `Some(requeue)` when
/// something was written (the update event brings the NodeImage back), `None` when the spec
/// was already clean.
async fn sync_spec(
    ctx: &Context,
    api: &Api<NodeImage>,
    name: &str,
    mut current: NodeImage,
    node_labels: Option<&std::collections::BTreeMap<String, String>>,
) -> Result<Option<Option<Duration>>, ControllerError> {
    for _ in 0..5 {
        let mut lookups = std::collections::BTreeMap::new();
        for owner in current.spec.images.values().flat_map(|i| &i.tags).flat_map(|t| &t.owner_references) {
            if owner.kind.as_deref() == Some("ImagePullJob") {
                let key =
                    (owner.namespace.clone().unwrap_or_default(), owner.name.clone().unwrap_or_default());
                if let std::collections::btree_map::Entry::Vacant(entry) = lookups.entry(key) {
                    entry.insert(lookup_job(ctx, owner).await);
                }
            }
        }
        let lookup = |owner: &ObjectReference| {
            let key = (owner.namespace.clone().unwrap_or_default(), owner.name.clone().unwrap_or_default());
            lookups.get(&key).cloned().unwrap_or(OwnerLookup::Unknown)
        };
        let cleanup = clean_spec(&current, node_labels, &lookup, Timestamp::now());
        if !cleanup.modified() {
            return Ok(None);
        }
        if let Some(labels) = &cleanup.labels {
            current.metadata.labels = Some(labels.clone());
        }
        if let Some(images) = cleanup.images.clone() {
            current.spec.images = images;
        }
        match api.replace(name, &PostParams::default(), &current).await {
            Ok(_) => {
                tracing::info!(nodeimage = %name, changes = ?cleanup.messages, "updated the NodeImage");
                return Ok(Some(None));
            }
            Err(kube::Error::Api(response)) if response.code == 409 => {
                current = api.get(name).await?;
            }
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!("NodeImage {name}: too many conflicts while cleaning its spec")))
}
