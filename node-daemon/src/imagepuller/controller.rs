//! The image puller's loop (upstream `imagepuller_controller.go`): it watches only its node's
//! NodeImage (`fieldSelector metadata.name=<node>`), syncs the pull workers when the spec
//! changes, and writes the NodeImage status from what the workers report: when the spec
//! changes, every 3-5 s while pulls are in progress or a write was limited, and every 20-30 min
//! otherwise. A finished pull is reported on the next of those passes, not the moment it ends,
//! as upstream's daemon does: clients (upstream's e2e specs among them) see a job's pull
//! secret copy and its Pulling phase for those seconds even when the image was already there.

use std::{
    sync::{Arc, atomic::Ordering},
    time::{Duration, Instant},
};

use futures::StreamExt;
use kruise_crds::apps::v1beta1::{NodeImage, NodeImageSpec, NodeImageStatus};
use kube::{
    Api,
    api::PostParams,
    runtime::{WatchStreamExt, watcher},
};

use super::{
    core::{RateLimiter, in_progress, node_status, resync_after},
    puller::Puller,
};
use crate::{
    error::DaemonError,
    events::EventPublisher,
    secrets::SecretCache,
    worker::{NodeWorker, WorkerContext, WorkerFuture},
};

/// Name of the worker, its readiness check and its event source.
pub const NAME: &str = "imagepuller";

/// Status writes per second allowed (upstream `statusUpdateQPS`).
pub const STATUS_UPDATE_QPS: f64 = 0.5;
/// Status writes allowed in a burst (upstream `statusUpdateBurst`).
pub const STATUS_UPDATE_BURST: u32 = 5;

/// How the image puller runs.
#[derive(Clone, Debug)]
pub struct ImagePullerConfig {
    /// Most pulls at a time on the node (`--max-workers-for-pull-image`; `None`: unlimited).
    pub max_workers: Option<usize>,
    /// Publish `PullImageSucceed` / `PullImageFailed` Events.
    pub events: bool,
}

impl Default for ImagePullerConfig {
    /// Two pulls at a time (the value upstream's DaemonSet manifest sets), with Events.
    fn default() -> Self {
        Self { max_workers: Some(2), events: true }
    }
}

/// The image puller worker.
pub struct ImagePuller {
    config: ImagePullerConfig,
}

impl ImagePuller {
    /// A puller with `config`.
    pub fn new(config: ImagePullerConfig) -> Self {
        Self { config }
    }
}

impl NodeWorker for ImagePuller {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(self: Arc<Self>, ctx: WorkerContext) -> WorkerFuture {
        Box::pin(run(self.config.clone(), ctx))
    }
}

/// What the loop knows between events.
struct Loop {
    api: Api<NodeImage>,
    puller: Puller,
    current: Option<NodeImage>,
    synced_spec: Option<NodeImageSpec>,
    written: Option<NodeImageStatus>,
    limiter: RateLimiter,
    ctx: WorkerContext,
}

async fn run(config: ImagePullerConfig, ctx: WorkerContext) -> Result<(), DaemonError> {
    let synced = ctx.readiness.check(NAME);
    synced.store(false, Ordering::SeqCst);
    let api: Api<NodeImage> = Api::all(ctx.client.clone());
    let events = config
        .events
        .then(|| EventPublisher::new(ctx.client.clone(), "kruise-daemon-imagepuller", &ctx.node_name));
    let puller = Puller::new(
        ctx.cri.clone(),
        SecretCache::new(ctx.client.clone()),
        config.max_workers,
        ctx.metrics.clone(),
        events,
    );
    let watch_config = watcher::Config::default().fields(&format!("metadata.name={}", ctx.node_name));
    let mut stream = watcher(api.clone(), watch_config).default_backoff().boxed();
    let mut state = Loop {
        api,
        puller: puller.clone(),
        current: None,
        synced_spec: None,
        written: None,
        limiter: RateLimiter::new(STATUS_UPDATE_QPS, STATUS_UPDATE_BURST, Instant::now()),
        ctx: ctx.clone(),
    };
    let mut initial: Option<NodeImage> = None;
    let mut next_sync: Option<tokio::time::Instant> = None;
    let result = loop {
        let sleep_until =
            next_sync.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(3600));
        let sync_now = tokio::select! {
            _ = ctx.shutdown.cancelled() => break Ok(()),
            event = stream.next() => match event {
                None => break Err(DaemonError::Watch("the NodeImage watch ended".into())),
                Some(Err(error)) => {
                    tracing::warn!(node = %ctx.node_name, %error, "NodeImage watch error");
                    false
                }
                Some(Ok(watcher::Event::Init)) => {
                    initial = None;
                    false
                }
                Some(Ok(watcher::Event::InitApply(object))) => {
                    initial = Some(object);
                    false
                }
                Some(Ok(watcher::Event::InitDone)) => {
                    synced.store(true, Ordering::SeqCst);
                    match initial.take() {
                        Some(object) => state.observe(object),
                        None => state.gone(),
                    }
                }
                Some(Ok(watcher::Event::Apply(object))) => state.observe(object),
                Some(Ok(watcher::Event::Delete(_))) => state.gone(),
            },
            _ = tokio::time::sleep_until(sleep_until) => true,
        };
        if sync_now {
            next_sync = state.sync().await.map(|after| tokio::time::Instant::now() + after);
        }
    };
    puller.stop_all();
    synced.store(false, Ordering::SeqCst);
    result
}

impl Loop {
    /// A new version of the NodeImage arrived; true when its spec changed (sync now).
    fn observe(&mut self, object: NodeImage) -> bool {
        if object.metadata.deletion_timestamp.is_some() {
            self.current = Some(object);
            return false;
        }
        let changed = self.synced_spec.as_ref() != Some(&object.spec);
        self.current = Some(object);
        changed
    }

    /// The NodeImage is gone: stop every pull.
    fn gone(&mut self) -> bool {
        if self.current.take().is_some() || self.synced_spec.is_some() {
            tracing::info!(node = %self.ctx.node_name, "NodeImage deleted: stopping every pull");
        }
        self.synced_spec = None;
        self.written = None;
        self.puller.stop_all();
        false
    }

    /// Syncs the workers and writes the status; returns when to sync again.
    async fn sync(&mut self) -> Option<Duration> {
        let node_image = self.current.clone()?;
        if node_image.metadata.deletion_timestamp.is_some() {
            return None;
        }
        let statuses = self.puller.sync(&node_image).await;
        self.synced_spec = Some(node_image.spec.clone());
        let status = node_status(&node_image.spec, &statuses);
        let busy = in_progress(&node_image.spec, &status);
        let (limited, retry_soon) = self.write_status(&node_image, status).await;
        if retry_soon {
            return Some(Duration::from_millis(500));
        }
        Some(resync_after(busy || limited, rand::random::<f64>()))
    }

    /// Writes `status` unless the NodeImage already says it or it is what this loop wrote
    /// last (upstream compares with its previous write, so a status the NodeImage controller
    /// amended is not overwritten with the same answer); returns (rate limited, failed and
    /// worth retrying soon).
    async fn write_status(&mut self, node_image: &NodeImage, status: NodeImageStatus) -> (bool, bool) {
        let stored = node_image.status.clone().unwrap_or_default();
        if stored == status || self.written.as_ref() == Some(&status) {
            return (false, false);
        }
        if !self.limiter.allow(Instant::now()) {
            self.ctx.metrics.status_update("limited");
            return (true, false);
        }
        let name = node_image.metadata.name.clone().unwrap_or_default();
        let mut updated = node_image.clone();
        updated.status = Some(status.clone());
        match self.api.replace_status(&name, &PostParams::default(), &updated).await {
            Ok(written) => {
                self.ctx.metrics.status_update("written");
                self.written = Some(status);
                self.current = Some(written);
                (false, false)
            }
            Err(kube::Error::Api(response)) if response.code == 409 => {
                // The spec or the controller's status changed meanwhile: the watch brings the
                // new version, then write again.
                self.ctx.metrics.status_update("conflict");
                (false, true)
            }
            Err(error) => {
                self.ctx.metrics.status_update("error");
                tracing::warn!(node = %self.ctx.node_name, %error, "cannot write the NodeImage status");
                (false, true)
            }
        }
    }
}
