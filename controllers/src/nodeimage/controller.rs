//! The NodeImage controller loop: watches Nodes, NodeImages and ImagePullJobs, and reconciles
//! one NodeImage per node name through a [`WorkQueue`] (a NodeImage is reconciled whether or
//! not it exists yet). The decisions are in [`super::core`]; this file reads the caches, writes
//! through the API and publishes Events.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::core::v1::{Node, ObjectReference},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{ImagePullJob, NodeImage};
use kube::{
    Api, Client,
    api::{DeleteParams, ObjectMeta, PostParams},
    runtime::{
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};

use super::core::{Lifecycle, OwnerLookup, clean_spec, lifecycle, requeue, status_update};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        events::{EventKind, EventRecorder},
        informer::{Change, watch_store},
        workqueue::{BACKOFF, WorkQueue},
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
    nodes: Store<Node>,
    node_images: Store<NodeImage>,
    jobs: Store<ImagePullJob>,
    options: NodeImageOptions,
    metrics: Metrics,
    recorder: EventRecorder,
    synced: AtomicBool,
}

fn labels_of(meta: &ObjectMeta) -> std::collections::BTreeMap<String, String> {
    meta.labels.clone().unwrap_or_default()
}

/// Runs the NodeImage controller until the future is dropped; `on_synced` is called once every
/// cache holds its initial list.
pub async fn run(
    client: Client,
    metrics: Metrics,
    options: NodeImageOptions,
    on_synced: impl FnOnce() + Send,
) {
    let (nodes, node_writer) = reflector::store::<Node>();
    let (node_images, node_image_writer) = reflector::store::<NodeImage>();
    let (jobs, job_writer) = reflector::store::<ImagePullJob>();
    metrics.init_controller(CONTROLLER_NAME);
    let ctx = Arc::new(Context {
        client: client.clone(),
        nodes: nodes.clone(),
        node_images: node_images.clone(),
        jobs: jobs.clone(),
        options,
        metrics: metrics.clone(),
        recorder: EventRecorder::new(client.clone(), "nodeimage-controller"),
        synced: AtomicBool::new(false),
    });
    let queue = WorkQueue::new(BACKOFF);

    let node_watch = {
        let (queue, node_images) = (queue.clone(), node_images.clone());
        watch_store(
            Api::<Node>::all(client.clone()),
            watcher::Config::default(),
            node_writer,
            move |change| match change {
                Change::Applied { new, old } => {
                    let name = new.metadata.name.clone().unwrap_or_default();
                    let node_image = node_images.get(&ObjectRef::new(&name));
                    let labels_changed = node_image
                        .as_ref()
                        .is_none_or(|ni| labels_of(&ni.metadata) != labels_of(&new.metadata));
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
                Change::Deleted(node) => queue.add(node.metadata.name.clone().unwrap_or_default()),
                Change::Synced => {}
            },
        )
    };
    let node_image_watch = {
        let queue = queue.clone();
        watch_store(
            Api::<NodeImage>::all(client.clone()),
            watcher::Config::default(),
            node_image_writer,
            move |change| match change {
                Change::Applied { new, .. } => queue.add(new.metadata.name.clone().unwrap_or_default()),
                Change::Deleted(ni) => queue.add(ni.metadata.name.clone().unwrap_or_default()),
                Change::Synced => {}
            },
        )
    };
    let job_watch = {
        let (queue, node_images) = (queue.clone(), node_images.clone());
        watch_store(
            Api::<ImagePullJob>::all(client.clone()),
            watcher::Config::default(),
            job_writer,
            move |change| {
                // A deleted job: its tags leave the NodeImages that have them.
                if let Change::Deleted(job) = change {
                    let uid = job.metadata.uid.clone();
                    for ni in node_images.state() {
                        let owned = ni.spec.images.values().flat_map(|image| &image.tags).any(|tag| {
                            tag.owner_references.iter().any(|owner| owner.uid.is_some() && owner.uid == uid)
                        });
                        if owned {
                            queue.add(ni.metadata.name.clone().unwrap_or_default());
                        }
                    }
                }
            },
        )
    };
    let sync_watch = {
        let ctx = ctx.clone();
        let queue = queue.clone();
        async move {
            let _ = crate::runtime::store_sync::until_synced(&nodes).await;
            let _ = crate::runtime::store_sync::until_synced(&node_images).await;
            let _ = crate::runtime::store_sync::until_synced(&jobs).await;
            ctx.synced.store(true, Ordering::SeqCst);
            tracing::info!("nodeimage controller caches synced");
            for node in ctx.nodes.state() {
                queue.add(node.metadata.name.clone().unwrap_or_default());
            }
            for ni in ctx.node_images.state() {
                queue.add(ni.metadata.name.clone().unwrap_or_default());
            }
            on_synced();
            std::future::pending::<()>().await;
        }
    };
    let workers = {
        let ctx = ctx.clone();
        queue.run(WORKERS, move |name| {
            let ctx = ctx.clone();
            async move { reconcile_and_record(&ctx, &name).await }
        })
    };
    tokio::join!(node_watch, node_image_watch, job_watch, sync_watch, workers);
}

async fn reconcile_and_record(ctx: &Context, name: &str) -> Result<Option<Duration>, ControllerError> {
    if !ctx.synced.load(Ordering::SeqCst) {
        return Ok(Some(Duration::from_millis(200)));
    }
    let started = Instant::now();
    let result = reconcile(ctx, name).await;
    let seconds = started.elapsed().as_secs_f64();
    match &result {
        Ok(Some(_)) => ctx.metrics.reconciled(CONTROLLER_NAME, "requeue", seconds),
        Ok(None) => ctx.metrics.reconciled(CONTROLLER_NAME, "success", seconds),
        Err(error) => {
            ctx.metrics.reconciled(CONTROLLER_NAME, "error", seconds);
            tracing::warn!(nodeimage = %name, %error, "reconcile failed");
        }
    }
    result
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
