//! The container meta worker's loops (upstream `container_meta_controller.go` and
//! `container_meta_restarter.go`):
//!
//! - a watch of the pods on its node (`fieldSelector spec.nodeName=<node>`) keeps the
//!   Kruise-managed ones in a cache and queues a pod (after 1 s) when [`needs_sync`] says so;
//! - a sync reads the pod's containers from the runtime, reads the env of each newly started
//!   container inside it (`ExecSync env`) once, writes the new
//!   `apps.kruise.io/runtime-containers-meta` through `pods/status` when it changed, and queues
//!   the containers whose env from labels/annotations is stale while the pod is updated in
//!   place;
//! - the restarter stops those containers as the kubelet would (preStop hook, then CRI
//!   `StopContainer`), rate limited per container (3 s, doubling to 10 min); the kubelet starts
//!   them again with the new values, and the next report carries the new hash that the in-place
//!   update engine's completion check waits for.

use std::{
    collections::{HashMap, HashSet},
    convert::Infallible,
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kruise_crds::common::{RuntimeContainerMetaSet, containermeta_hash::current_env_from_metadata_hash};
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams},
    runtime::{WatchStreamExt, watcher},
};
use parking_lot::Mutex;

use super::{
    core::{
        ENV_READ_RETRY, RestartLimiter, SYNC_DELAY, is_kruise_managed, needs_sync, needs_sync_when_added,
        plan_meta_set, report_patch, reported_meta_set, restart_targets, runtime_name, split_container_id,
        syncable,
    },
    runtime::{StopTarget, pod_containers, read_env},
};
use crate::{
    cri::CriClient,
    crr::runtime::Stopper,
    error::{CriError, DaemonError},
    events::EventPublisher,
    metrics::DaemonMetrics,
    worker::{NodeWorker, WorkerContext, WorkerFuture},
    workqueue::{BACKOFF, WorkQueue},
};

/// Name of the worker and of its readiness check.
pub const NAME: &str = "containermeta";
/// The reporting controller of its Events (upstream's recorder component).
pub const EVENT_SOURCE: &str = "kruise-daemon-containermeta";

/// How the worker runs.
#[derive(Clone, Debug)]
pub struct ContainerMetaConfig {
    /// Whether it runs at all (upstream gate `DaemonWatchingPod`, default on: without the pod
    /// watch there is no container meta).
    pub enabled: bool,
    /// Gate `InPlaceUpdateEnvFromMetadata` (default on): hash the env-from-metadata values of
    /// running containers and restart the stale ones during in-place updates. Off, only the
    /// container IDs and kubelet hashes are reported.
    pub env_from_metadata: bool,
    /// Pods synced at once (upstream: 5).
    pub workers: usize,
    /// Containers restarted at once (upstream: 10).
    pub restart_workers: usize,
    /// Publish the kubelet's `Killing` Events on the pods whose containers are restarted.
    pub events: bool,
}

impl Default for ContainerMetaConfig {
    /// Upstream's defaults: both gates on, 5 sync and 10 restart workers, with Events.
    fn default() -> Self {
        Self { enabled: true, env_from_metadata: true, workers: 5, restart_workers: 10, events: true }
    }
}

/// The container meta reporter and restarter.
pub struct ContainerMetaReporter {
    config: ContainerMetaConfig,
}

impl ContainerMetaReporter {
    /// A worker with `config`.
    pub fn new(config: ContainerMetaConfig) -> Self {
        Self { config }
    }
}

impl NodeWorker for ContainerMetaReporter {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(self: Arc<Self>, ctx: WorkerContext) -> WorkerFuture {
        Box::pin(run(self.config.clone(), ctx))
    }
}

/// What the loops share.
struct Reporter {
    client: kube::Client,
    cri: CriClient,
    config: ContainerMetaConfig,
    /// The Kruise-managed pods of the node, newest version seen (from the watch or from our own
    /// writes), by `namespace/name`.
    pods: Mutex<HashMap<String, Arc<Pod>>>,
    queue: WorkQueue,
    restarts: WorkQueue,
    limiter: Mutex<RestartLimiter>,
    stopper: Stopper,
    metrics: DaemonMetrics,
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or_default(), pod.name_any())
}

fn resource_version(pod: &Pod) -> Option<u64> {
    pod.metadata.resource_version.as_deref()?.parse().ok()
}

/// Whether `pod` is not older than `cached` (resource versions compared as numbers, as
/// upstream's resource version expectation does; unparsable ones count as newer).
fn not_older(pod: &Pod, cached: &Pod) -> bool {
    match (resource_version(pod), resource_version(cached)) {
        (Some(new), Some(old)) => new >= old,
        _ => true,
    }
}

async fn run(config: ContainerMetaConfig, ctx: WorkerContext) -> Result<(), DaemonError> {
    let synced = ctx.readiness.check(NAME);
    synced.store(false, Ordering::SeqCst);
    // preStop HTTP hooks go to the pod as the kubelet's do: certificates are not verified.
    let http = reqwest::Client::builder().danger_accept_invalid_certs(true).build().map_err(|error| {
        DaemonError::Config(format!("cannot build the HTTP client for preStop hooks: {error}"))
    })?;
    let events = config.events.then(|| EventPublisher::new(ctx.client.clone(), EVENT_SOURCE, &ctx.node_name));
    let reporter = Arc::new(Reporter {
        client: ctx.client.clone(),
        cri: ctx.cri.clone(),
        config: config.clone(),
        pods: Mutex::new(HashMap::new()),
        queue: WorkQueue::new(BACKOFF),
        restarts: WorkQueue::new(BACKOFF),
        limiter: Mutex::new(RestartLimiter::default()),
        stopper: Stopper::new(ctx.cri.clone(), events, http),
        metrics: ctx.metrics.clone(),
    });
    let watch = {
        let (reporter, synced, node) = (reporter.clone(), synced.clone(), ctx.node_name.clone());
        let api: Api<Pod> = Api::all(ctx.client.clone());
        let fields = format!("spec.nodeName={node}");
        async move {
            let mut stream =
                watcher(api, watcher::Config::default().fields(&fields)).default_backoff().boxed();
            let mut listed: HashSet<String> = HashSet::new();
            while let Some(event) = stream.next().await {
                match event {
                    Ok(watcher::Event::Init) => listed.clear(),
                    Ok(watcher::Event::InitApply(pod)) => {
                        listed.insert(pod_key(&pod));
                        reporter.observe_event(pod);
                    }
                    Ok(watcher::Event::InitDone) => {
                        reporter.pods.lock().retain(|key, _| listed.contains(key));
                        listed.clear();
                        synced.store(true, Ordering::SeqCst);
                    }
                    Ok(watcher::Event::Apply(pod)) => reporter.observe_event(pod),
                    Ok(watcher::Event::Delete(pod)) => {
                        reporter.pods.lock().remove(&pod_key(&pod));
                    }
                    Err(error) => tracing::warn!(%node, %error, "pod watch error (container meta)"),
                }
            }
        }
    };
    let (queue, restarts) = (reporter.queue.clone(), reporter.restarts.clone());
    let workers = {
        let reporter = reporter.clone();
        queue.run(config.workers, move |key| {
            let reporter = reporter.clone();
            async move {
                let result = reporter.sync(&key).await;
                if let Err(error) = &result {
                    tracing::warn!(pod = %key, %error, "container meta sync failed (retrying with back-off)");
                }
                result
            }
        })
    };
    let restarters = {
        let reporter = reporter.clone();
        restarts.run(config.restart_workers, move |id| {
            let reporter = reporter.clone();
            async move { Ok::<_, Infallible>(reporter.restart(&id).await) }
        })
    };
    let result = tokio::select! {
        _ = ctx.shutdown.cancelled() => Ok(()),
        _ = watch => Err(DaemonError::Watch("the pod watch (container meta) ended".into())),
        _ = workers => Ok(()),
        _ = restarters => Ok(()),
    };
    synced.store(false, Ordering::SeqCst);
    result
}

impl Reporter {
    /// A pod event: cache it (unless the cache already holds a newer version, e.g. our own
    /// write) and queue it when the change calls for a sync.
    fn observe_event(&self, pod: Pod) {
        let key = pod_key(&pod);
        if !is_kruise_managed(&pod) {
            self.pods.lock().remove(&key);
            return;
        }
        let pod = Arc::new(pod);
        let old = {
            let mut pods = self.pods.lock();
            if let Some(cached) = pods.get(&key)
                && !not_older(&pod, cached)
            {
                return;
            }
            pods.insert(key.clone(), pod.clone())
        };
        let gate = self.config.env_from_metadata;
        let sync = match &old {
            Some(old) => needs_sync(Some(old), &pod, gate),
            None => needs_sync_when_added(&pod, gate),
        };
        if sync && syncable(&pod) {
            self.queue.add_after(key, SYNC_DELAY);
        }
    }

    /// Caches the pod our own write returned, so that the next sync does not act on a copy
    /// older than it (upstream waits for the resource version it wrote).
    fn observe_written(&self, pod: Pod) {
        let key = pod_key(&pod);
        let mut pods = self.pods.lock();
        if pods.get(&key).is_none_or(|cached| not_older(&pod, cached)) {
            pods.insert(key, Arc::new(pod));
        }
    }

    /// One sync of the pod `namespace/name`; returns when to look again (None: on the next
    /// event).
    async fn sync(&self, key: &str) -> Result<Option<Duration>, DaemonError> {
        let Some(pod) = self.pods.lock().get(key).cloned() else { return Ok(None) };
        if !syncable(&pod) {
            return Ok(None);
        }
        let runtime = match runtime_name(&pod) {
            Ok(Some(runtime)) => runtime,
            Ok(None) => return Ok(None),
            Err(message) => {
                tracing::warn!(pod = key, %message, "cannot tell the pod's container runtime");
                return Ok(None);
            }
        };
        let gate = self.config.env_from_metadata;
        let instances = pod_containers(&self.cri, pod.metadata.uid.as_deref().unwrap_or_default()).await?;
        let old = reported_meta_set(&pod).unwrap_or_else(|error| {
            tracing::warn!(pod = key, %error, "the pod's runtime-containers-meta is not valid: rebuilding it");
            None
        });
        let mut planned = plan_meta_set(&pod, &instances, old.as_ref(), &runtime, gate);
        let mut again = None;
        for container in planned.iter_mut().filter(|p| p.read_env) {
            match read_env(&self.cri, &container.runtime_id).await {
                Ok(env) => {
                    let hash = current_env_from_metadata_hash(&container.spec, |name| {
                        Ok::<_, Infallible>(env.get(name).cloned().unwrap_or_default())
                    })
                    .unwrap_or_else(|never| match never {});
                    tracing::debug!(pod = key, container = %container.meta.name, id = %container.meta.container_id, hash, "extracted env from metadata");
                    container.meta.hashes.extracted_env_from_metadata_hash = Some(hash);
                }
                Err(error) => {
                    tracing::warn!(pod = key, container = %container.meta.name, id = %container.meta.container_id, %error, "cannot read the container's env");
                    again = Some(ENV_READ_RETRY);
                }
            }
        }
        for id in restart_targets(&pod, &planned, gate) {
            let delay = self.limiter.lock().when(&id);
            tracing::info!(
                pod = key,
                id,
                ?delay,
                "restarting the container: its env from metadata is stale while the pod is updated in place"
            );
            self.restarts.add_after(id, delay);
        }
        let set = RuntimeContainerMetaSet { containers: planned.into_iter().map(|p| p.meta).collect() };
        if old.as_ref() != Some(&set) {
            self.report(&pod, &set).await?;
        }
        Ok(again)
    }

    /// Writes the report through `pods/status` (a strategic-merge patch of the annotation, as
    /// upstream: no pod admission webhook is involved).
    async fn report(&self, pod: &Pod, set: &RuntimeContainerMetaSet) -> Result<(), DaemonError> {
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.name_any();
        let patch = report_patch(set)?;
        tracing::info!(%namespace, pod = %name, containers = set.containers.len(), "reporting container meta");
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &namespace);
        match api.patch_status(&name, &PatchParams::default(), &Patch::Strategic(&patch)).await {
            Ok(written) => {
                self.metrics.container_meta_report(true);
                self.observe_written(written);
                Ok(())
            }
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => {
                self.metrics.container_meta_report(false);
                Err(error.into())
            }
        }
    }

    /// Restarts the container `id` (`containerd://<id>`) if it still runs; returns when to try
    /// again after a failure (rate limited).
    async fn restart(&self, id: &str) -> Option<Duration> {
        let Some((_, runtime_id)) = split_container_id(id) else {
            self.limiter.lock().forget(id);
            return None;
        };
        let status = match self.cri.container_status(runtime_id).await {
            Ok(status) => status,
            Err(CriError::Call { status, .. }) if status.code() == tonic::Code::NotFound => None,
            Err(error) => {
                tracing::warn!(id, %error, "cannot look at the container to restart");
                return Some(self.limiter.lock().when(id));
            }
        };
        let Some(target) = status.as_ref().and_then(StopTarget::from_status) else {
            tracing::debug!(id, "not restarting the container: not found or not running");
            self.limiter.lock().forget(id);
            return None;
        };
        let note = format!("Stopping containerID {id} by container meta restarter");
        match self.stopper.kill(&target.pod, &target.container, runtime_id, target.grace_seconds, note).await
        {
            Ok(()) => {
                self.metrics.container_meta_restart(true);
                self.limiter.lock().forget(id);
                None
            }
            Err(message) => {
                self.metrics.container_meta_restart(false);
                tracing::warn!(id, %message, "cannot restart the container");
                Some(self.limiter.lock().when(id))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    fn pod(rv: Option<&str>) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.resource_version = rv.map(str::to_string);
        pod
    }

    #[test]
    fn cache_keeps_the_newest_version() {
        let cases = [
            (Some("12"), Some("10"), true),
            (Some("10"), Some("10"), true),
            (Some("9"), Some("10"), false),
            (None, Some("10"), true),
            (Some("x"), Some("10"), true),
        ];
        for (new, cached, expected) in cases {
            assert_eq!(not_older(&pod(new), &pod(cached)), expected, "{new:?} over {cached:?}");
        }
    }
}
