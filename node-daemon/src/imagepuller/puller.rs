//! Pull workers (upstream `realPuller`, `realWorkerPool`, `pullWorker`): one task per image tag
//! to pull, restarted when the tag's `version` changes and stopped when it leaves the spec. A
//! worker reports `Waiting`, then `Pulling` once it holds one of the node's pull slots (bounded
//! by `--max-workers-for-pull-image`), tries `backoffLimit + 1` times with a per-attempt timeout
//! and a growing back-off, and ends `Succeeded` or `Failed` with the reason. Workers never block
//! each other beyond the slots, nor the loop that writes the NodeImage status.

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Instant,
};

use k8s_cri::v1 as cri;
use k8s_openapi::{
    api::core::v1::{ObjectReference, Secret},
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{
        ImagePullPhase, ImagePullPolicy, ImageTagSpec, ImageTagStatus, NodeImage, SandboxConfig,
    },
    validation::ImageReference,
};
use parking_lot::Mutex;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::core::{PullSettings, plan_tags, pull_reference, retry_delay, worker_must_stop};
use crate::{
    cri::CriClient,
    events::{EventPublisher, EventType},
    metrics::DaemonMetrics,
    secrets::{RegistryAuth, SecretCache, registry_auths},
};

/// Sandbox annotation every pull request carries (upstream `pullingImageSandboxConfigAnno`), so
/// runtimes that need a sandbox config get one and can tell who pulls.
pub const PULLING_IMAGE_BY_ANNOTATION: &str = "apps.kruise.io/pulling-image-by";

/// Reason of the Event about a tag pulled.
pub const REASON_SUCCEEDED: &str = "PullImageSucceed";
/// Reason of the Events about a tag that failed.
pub const REASON_FAILED: &str = "PullImageFailed";

struct WorkerHandle {
    id: u64,
    version: i64,
    stop: CancellationToken,
}

#[derive(Default)]
struct ImageState {
    statuses: BTreeMap<String, ImageTagStatus>,
    workers: BTreeMap<String, WorkerHandle>,
}

struct Shared {
    images: Mutex<BTreeMap<String, ImageState>>,
    cri: CriClient,
    slots: Option<Arc<Semaphore>>,
    metrics: DaemonMetrics,
    events: Option<EventPublisher>,
    next_id: AtomicU64,
}

/// Every pull worker of a node and the tag statuses they report.
#[derive(Clone)]
pub struct Puller {
    shared: Arc<Shared>,
    secrets: Arc<SecretCache>,
}

/// What a new worker needs.
struct PullTask {
    image: String,
    tag: ImageTagSpec,
    sandbox: Option<SandboxConfig>,
    secrets: Vec<Secret>,
    node_image: Option<ObjectReference>,
    id: u64,
    stop: CancellationToken,
    shared: Arc<Shared>,
}

impl Puller {
    /// A puller with at most `max_workers` pulls at a time (`None`: unlimited, as upstream's
    /// default `-1`).
    pub fn new(
        cri: CriClient,
        secrets: SecretCache,
        max_workers: Option<usize>,
        metrics: DaemonMetrics,
        events: Option<EventPublisher>,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                images: Mutex::new(BTreeMap::new()),
                cri,
                slots: max_workers.map(|n| Arc::new(Semaphore::new(n.max(1)))),
                metrics,
                events,
                next_id: AtomicU64::new(1),
            }),
            secrets: Arc::new(secrets),
        }
    }

    /// Brings the workers in line with `node_image`: stops workers of images and tags no
    /// longer wanted or at an older version, takes over the statuses of tags already finished
    /// at their version, and starts a worker for every other tag. Returns the tag statuses as of
    /// this sync, new tags Waiting, taken before any new worker runs: a pull that ends at once
    /// (the image is already there) is reported on the next pass, as upstream's daemon does.
    pub async fn sync(&self, node_image: &NodeImage) -> BTreeMap<String, Vec<ImageTagStatus>> {
        let spec = &node_image.spec;
        let api_status = node_image.status.clone().unwrap_or_default();
        let reference = object_reference(node_image);
        // Read the pull secrets first (cached), outside the lock.
        let mut secrets: BTreeMap<&str, Vec<Secret>> = BTreeMap::new();
        for (name, image) in &spec.images {
            if !image.pull_secrets.is_empty() {
                secrets.insert(name, self.secrets.get(&image.pull_secrets).await);
            }
        }
        let mut start = Vec::new();
        let snapshot;
        {
            let mut images = self.shared.images.lock();
            images.retain(|name, state| {
                let keep = spec.images.contains_key(name);
                if !keep {
                    tracing::info!(image = %name, "image removed from the NodeImage: stopping its workers");
                    for worker in state.workers.values() {
                        worker.stop.cancel();
                    }
                }
                keep
            });
            for (name, image) in &spec.images {
                let plan = plan_tags(image, api_status.image_statuses.get(name));
                let state = images.entry(name.clone()).or_default();
                for finished in &plan.finished {
                    state.statuses.insert(finished.tag.clone(), finished.clone());
                }
                state.workers.retain(|tag, worker| {
                    let stop = worker_must_stop(&plan, tag, worker.version);
                    if stop {
                        tracing::debug!(image = %name, %tag, version = worker.version, "stopping a pull worker");
                        worker.stop.cancel();
                    }
                    !stop
                });
                state.statuses.retain(|tag, _| plan.all.contains(tag));
                for (tag, tag_spec) in &plan.active {
                    if state.workers.contains_key(tag) {
                        continue;
                    }
                    let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
                    // A new worker's tag reads Waiting from the start (as upstream's
                    // `newPullWorker`), so the status written by this sync already lists it.
                    state.statuses.insert(
                        tag.clone(),
                        ImageTagStatus {
                            tag: tag.clone(),
                            phase: ImagePullPhase::Waiting,
                            version: tag_spec.version,
                            ..Default::default()
                        },
                    );
                    let stop = CancellationToken::new();
                    state.workers.insert(
                        tag.clone(),
                        WorkerHandle { id, version: tag_spec.version, stop: stop.clone() },
                    );
                    start.push(PullTask {
                        image: name.clone(),
                        tag: tag_spec.clone(),
                        sandbox: image.sandbox_config.clone(),
                        secrets: secrets.get(name.as_str()).cloned().unwrap_or_default(),
                        node_image: reference.clone(),
                        id,
                        stop,
                        shared: self.shared.clone(),
                    });
                }
            }
            snapshot = snapshot_of(&images);
        }
        for task in start {
            tracing::info!(image = %task.image, tag = %task.tag.tag, version = task.tag.version, "starting a pull worker");
            tokio::spawn(task.run());
        }
        snapshot
    }

    /// Stops every worker and forgets every status (the NodeImage is gone or the daemon stops).
    pub fn stop_all(&self) {
        let mut images = self.shared.images.lock();
        for state in images.values() {
            for worker in state.workers.values() {
                worker.stop.cancel();
            }
        }
        images.clear();
    }
}

/// The tag statuses of every image, per image.
fn snapshot_of(images: &BTreeMap<String, ImageState>) -> BTreeMap<String, Vec<ImageTagStatus>> {
    images.iter().map(|(name, state)| (name.clone(), state.statuses.values().cloned().collect())).collect()
}

fn object_reference(node_image: &NodeImage) -> Option<ObjectReference> {
    Some(ObjectReference {
        api_version: Some("apps.kruise.io/v1beta1".into()),
        kind: Some("NodeImage".into()),
        name: node_image.metadata.name.clone(),
        uid: node_image.metadata.uid.clone(),
        resource_version: node_image.metadata.resource_version.clone(),
        ..Default::default()
    })
}

fn now() -> Time {
    Time(Timestamp::now())
}

/// Why a pull ended without an outcome to report.
struct Stopped;

impl PullTask {
    /// Records `status` if this worker is still the tag's worker; the status writer reads it
    /// on its next pass.
    fn report(&self, status: ImageTagStatus) -> bool {
        let mut images = self.shared.images.lock();
        let Some(state) = images.get_mut(&self.image) else { return false };
        if state.workers.get(&self.tag.tag).is_none_or(|w| w.id != self.id) {
            return false;
        }
        state.statuses.insert(self.tag.tag.clone(), status);
        true
    }

    async fn run(self) {
        let mut status = ImageTagStatus {
            tag: self.tag.tag.clone(),
            phase: ImagePullPhase::Waiting,
            version: self.tag.version,
            ..Default::default()
        };
        if !self.report(status.clone()) {
            return;
        }
        let permit = match &self.shared.slots {
            Some(slots) => tokio::select! {
                _ = self.stop.cancelled() => return,
                permit = slots.clone().acquire_owned() => match permit {
                    Ok(permit) => Some(permit),
                    Err(_) => return,
                },
            },
            None => None,
        };
        self.shared.metrics.pull_workers_busy(1);
        let started = Instant::now();
        status.phase = ImagePullPhase::Pulling;
        status.start_time = Some(now());
        self.report(status.clone());

        let outcome = match pull_reference(&self.image, &self.tag.tag) {
            Ok((full, parsed)) => self.attempts(&full, &parsed, started).await,
            Err(message) => Ok(Err(message)),
        };
        drop(permit);
        self.shared.metrics.pull_workers_busy(-1);
        let Ok(outcome) = outcome else {
            tracing::info!(image = %self.image, tag = %self.tag.tag, "pull worker stopped");
            return;
        };
        let elapsed = started.elapsed();
        status.completion_time = Some(now());
        match outcome {
            Ok(image_id) => {
                status.phase = ImagePullPhase::Succeeded;
                status.progress = 100;
                status.image_id = image_id;
                tracing::info!(image = %self.image, tag = %self.tag.tag, ?elapsed, "image pulled");
            }
            Err(message) => {
                status.phase = ImagePullPhase::Failed;
                status.message = message;
                tracing::warn!(image = %self.image, tag = %self.tag.tag, ?elapsed, message = %status.message, "image pull failed");
            }
        }
        let succeeded = status.phase == ImagePullPhase::Succeeded;
        let message = status.message.clone();
        if !self.report(status) {
            return;
        }
        self.shared.metrics.pull_finished(succeeded, elapsed.as_secs_f64());
        self.publish_events(succeeded, &message, elapsed);
    }

    fn publish_events(&self, succeeded: bool, message: &str, elapsed: std::time::Duration) {
        let Some(events) = &self.shared.events else { return };
        let image = format!("{}:{}", self.image, self.tag.tag);
        if succeeded {
            if let Some(reference) = &self.node_image {
                events.publish(
                    reference.clone(),
                    EventType::Normal,
                    REASON_SUCCEEDED,
                    format!("Image {image}, ecalpsedTime {elapsed:?}"),
                );
            }
            return;
        }
        let note = format!("Image {image} {message}");
        for owner in self.tag.owner_references.iter().chain(self.node_image.iter()) {
            events.publish(owner.clone(), EventType::Warning, REASON_FAILED, note.clone());
        }
    }

    /// Up to `backoffLimit + 1` attempts within the active deadline; `Err(Stopped)` when the
    /// worker was stopped, else the image ID or the last error.
    async fn attempts(
        &self,
        full: &str,
        parsed: &ImageReference,
        started: Instant,
    ) -> Result<Result<String, String>, Stopped> {
        let settings = PullSettings::of(&self.tag);
        let auths = registry_auths(&self.secrets, parsed);
        let mut last_error = String::new();
        for attempt in 0..=settings.backoff_limit {
            let Some(timeout) = settings.attempt_timeout(started.elapsed()) else {
                last_error = "pulling exceeds the activeDeadlineSeconds".into();
                break;
            };
            let result = tokio::select! {
                _ = self.stop.cancelled() => return Err(Stopped),
                result = self.attempt(full, &auths, timeout) => result,
            };
            self.shared.metrics.pull_attempt(result.is_ok());
            match result {
                Ok(image_id) => return Ok(Ok(image_id)),
                Err(message) => {
                    tracing::warn!(image = %full, attempt = attempt + 1, error = %message, "pulling image failed");
                    last_error = message;
                }
            }
            if attempt < settings.backoff_limit {
                tokio::select! {
                    _ = self.stop.cancelled() => return Err(Stopped),
                    _ = tokio::time::sleep(retry_delay(attempt)) => {}
                }
            }
        }
        Ok(Err(last_error))
    }

    /// One attempt: skipped when the node has the image and the policy is IfNotPresent; else a
    /// CRI PullImage with each matching credential in turn (anonymous when none matches).
    async fn attempt(
        &self,
        full: &str,
        auths: &[RegistryAuth],
        timeout: std::time::Duration,
    ) -> Result<String, String> {
        let cri = &self.shared.cri;
        if self.tag.image_pull_policy == ImagePullPolicy::IfNotPresent
            && let Ok(Some(image)) = cri.image_status(full).await
        {
            tracing::info!(image = %full, "image already present");
            return Ok(format!("{}@{}", self.image, image.id));
        }
        let mut annotations = self.sandbox.as_ref().map(|s| s.annotations.clone()).unwrap_or_default();
        annotations.insert(PULLING_IMAGE_BY_ANNOTATION.into(), "kruise-daemon".into());
        let labels = self.sandbox.as_ref().map(|s| s.labels.clone()).unwrap_or_default();
        let request = cri::PullImageRequest {
            image: Some(cri::ImageSpec { image: full.to_string(), ..Default::default() }),
            auth: None,
            sandbox_config: Some(cri::PodSandboxConfig {
                labels: labels.into_iter().collect(),
                annotations: annotations.into_iter().collect(),
                ..Default::default()
            }),
        };
        let pulled = if auths.is_empty() {
            cri.pull_image(request, timeout)
                .await
                .map_err(|error| format!("Failed to pull image reference {full:?}: {error}"))
        } else {
            tracing::debug!(image = %full, credentials = auths.len(), "pulling with registry credentials");
            let mut errors = Vec::new();
            let mut pulled = None;
            for auth in auths {
                let mut request = request.clone();
                request.auth = Some(cri::AuthConfig {
                    username: auth.username.clone(),
                    password: auth.password.clone(),
                    ..Default::default()
                });
                match cri.pull_image(request, timeout).await {
                    Ok(image_ref) => {
                        pulled = Some(image_ref);
                        break;
                    }
                    Err(error) => errors.push(error.to_string()),
                }
            }
            match pulled {
                Some(image_ref) => Ok(image_ref),
                None if errors.len() == 1 => Err(errors.remove(0)),
                None => Err(format!("[{}]", errors.join(", "))),
            }
        }?;
        match cri.image_status(full).await {
            Ok(Some(image)) => Ok(format!("{}@{}", self.image, image.id)),
            _ => Ok(format!("{}@{pulled}", self.image)),
        }
    }
}
