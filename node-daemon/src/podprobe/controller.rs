//! The pod probe worker's loop (upstream `pod_probe_controller.go` and `worker.go`): it watches
//! its node's NodePodProbe (field selector `metadata.name=<node>`), keeps one probe task per
//! probe of its spec (started, retimed or stopped as the spec changes), and writes the
//! results into the NodePodProbe's status whenever a probe's state changes (read fresh,
//! written with its resourceVersion, retried on conflicts).
//!
//! A probe task finds the pod's latest container of the probed name in the runtime (CRI
//! `ListContainers` by the kubelet's pod UID label), reports `Failed` while it is not running,
//! waits out `initialDelaySeconds` (at least 1 s) after its start, then probes every
//! `periodSeconds`, reporting a result once `failureThreshold`/`successThreshold` results in a
//! row agree. A new container (or a new probe handler) starts again from `Unknown`.

use std::{
    collections::BTreeMap,
    sync::{Arc, atomic::Ordering},
    time::{Duration, Instant},
};

use futures::StreamExt;
use k8s_cri::v1 as cri;
use k8s_openapi::{api::core::v1::ObjectReference, apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};
use kruise_crds::apps::v1alpha1::{ContainerProbeSpec, NodePodProbe, NodePodProbeSpec, ProbeState};
use kube::{
    Api,
    api::PostParams,
    runtime::{WatchStreamExt, watcher},
};
use parking_lot::Mutex;
use rand::Rng;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::{
    core::{
        ProbeKey, ProbeResult, Streak, initial_delay_seconds, period_seconds, same_handler, updated_status,
        wanted_probes,
    },
    prober::Prober,
};
use crate::{
    cri::CriClient,
    crr::core::LABEL_POD_UID,
    error::DaemonError,
    events::{EventPublisher, EventType},
    worker::{NodeWorker, WorkerContext, WorkerFuture},
};

/// Name of the worker and of its readiness check.
pub const NAME: &str = "podprobe";
/// Attempts of a status write that keeps meeting conflicts.
const CONFLICT_RETRIES: usize = 5;
/// Event reasons upstream records on the pod.
const EVENT_SUCCEEDED: &str = "KruiseProbeSucceeded";
const EVENT_FAILED: &str = "KruiseProbeFailed";

/// The pod probe worker.
#[derive(Default)]
pub struct PodProber;

impl PodProber {
    /// The worker.
    pub fn new() -> Self {
        Self
    }
}

impl NodeWorker for PodProber {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(self: Arc<Self>, ctx: WorkerContext) -> WorkerFuture {
        Box::pin(run(ctx))
    }
}

/// What the probe tasks share with the status writer.
struct Shared {
    cri: CriClient,
    prober: Prober,
    results: Mutex<BTreeMap<ProbeKey, ProbeResult>>,
    changed: Notify,
    events: EventPublisher,
    started: Instant,
}

impl Shared {
    /// Records a probe's result; the status writer is woken when its state changed.
    fn set(&self, key: &ProbeKey, state: ProbeState, message: String) {
        let probed_at = (state != ProbeState::StateUnknown).then(|| Time(Timestamp::now()));
        let changed = {
            let mut results = self.results.lock();
            let changed = results.get(key).is_none_or(|r| r.state != state);
            if changed {
                results.insert(
                    key.clone(),
                    ProbeResult { state: state.clone(), message: message.clone(), probed_at },
                );
            }
            changed
        };
        if !changed {
            return;
        }
        tracing::info!(namespace = %key.namespace, pod = %key.pod, probe = %key.probe, state = %state.as_str(), "probe state changed");
        if state != ProbeState::StateUnknown {
            let (type_, reason) = if state == ProbeState::Succeeded {
                (EventType::Normal, EVENT_SUCCEEDED)
            } else {
                (EventType::Normal, EVENT_FAILED)
            };
            let regarding = ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Pod".into()),
                namespace: Some(key.namespace.clone()),
                name: Some(key.pod.clone()),
                uid: Some(key.uid.clone()),
                ..Default::default()
            };
            self.events.publish(regarding, type_, reason, message);
        }
        self.changed.notify_one();
    }

    fn remove(&self, key: &ProbeKey) {
        if self.results.lock().remove(key).is_some() {
            self.changed.notify_one();
        }
    }
}

/// A running probe task.
struct Task {
    spec: watch::Sender<ContainerProbeSpec>,
    stop: CancellationToken,
}

async fn run(ctx: WorkerContext) -> Result<(), DaemonError> {
    let synced = ctx.readiness.check(NAME);
    synced.store(false, Ordering::SeqCst);
    let prober = Prober::new(ctx.cri.clone()).map_err(|error| DaemonError::Config(error.to_string()))?;
    let shared = Arc::new(Shared {
        cri: ctx.cri.clone(),
        prober,
        results: Mutex::new(BTreeMap::new()),
        changed: Notify::new(),
        events: EventPublisher::new(ctx.client.clone(), "kruise-daemon-podprobe", &ctx.node_name),
        started: Instant::now(),
    });
    let api: Api<NodePodProbe> = Api::all(ctx.client.clone());
    let (spec_tx, mut spec_rx) = watch::channel::<Option<NodePodProbeSpec>>(None);
    let stop = ctx.shutdown.child_token();

    let watch_task = {
        let (api, synced, node) = (api.clone(), synced.clone(), ctx.node_name.clone());
        async move {
            let config = watcher::Config::default().fields(&format!("metadata.name={node}"));
            let mut stream = watcher(api, config).default_backoff().boxed();
            while let Some(event) = stream.next().await {
                match event {
                    Ok(watcher::Event::Apply(npp) | watcher::Event::InitApply(npp)) => {
                        let spec = (npp.metadata.deletion_timestamp.is_none()).then_some(npp.spec);
                        spec_tx.send_if_modified(|current| {
                            let changed = *current != spec;
                            *current = spec.clone();
                            changed
                        });
                    }
                    Ok(watcher::Event::Delete(_)) => {
                        spec_tx.send_replace(None);
                    }
                    Ok(watcher::Event::InitDone) => synced.store(true, Ordering::SeqCst),
                    Ok(watcher::Event::Init) => {}
                    Err(error) => {
                        tracing::debug!(%error, "NodePodProbe watch error (retrying with back-off)")
                    }
                }
            }
        }
    };
    let tasks_loop = {
        let (shared, stop) = (shared.clone(), stop.clone());
        async move {
            let mut tasks: BTreeMap<ProbeKey, Task> = BTreeMap::new();
            loop {
                let spec = spec_rx.borrow_and_update().clone().unwrap_or_default();
                let wanted = wanted_probes(&spec);
                tasks.retain(|key, task| {
                    let keep = wanted.contains_key(key);
                    if !keep {
                        tracing::info!(namespace = %key.namespace, pod = %key.pod, probe = %key.probe, "stopping probe");
                        task.stop.cancel();
                    }
                    keep
                });
                for (key, probe) in wanted {
                    match tasks.get(&key) {
                        Some(task) => {
                            task.spec.send_if_modified(|current| {
                                let changed = *current != probe;
                                *current = probe.clone();
                                changed
                            });
                        }
                        None => {
                            tracing::info!(namespace = %key.namespace, pod = %key.pod, probe = %key.probe, "starting probe");
                            let (tx, rx) = watch::channel(probe);
                            let task_stop = stop.child_token();
                            tokio::spawn(probe_task(shared.clone(), key.clone(), rx, task_stop.clone()));
                            tasks.insert(key, Task { spec: tx, stop: task_stop });
                        }
                    }
                }
                shared.changed.notify_one();
                if spec_rx.changed().await.is_err() {
                    return;
                }
            }
        }
    };
    let status_loop = {
        let (shared, api, node) = (shared.clone(), api.clone(), ctx.node_name.clone());
        async move {
            loop {
                shared.changed.notified().await;
                if let Err(error) = write_status(&api, &node, &shared).await {
                    tracing::warn!(node, %error, "cannot write the NodePodProbe's status (retrying)");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    shared.changed.notify_one();
                }
            }
        }
    };
    let result = tokio::select! {
        _ = ctx.shutdown.cancelled() => Ok(()),
        _ = watch_task => Err(DaemonError::Watch("the NodePodProbe watch ended".into())),
        _ = tasks_loop => Ok(()),
        _ = status_loop => Ok(()),
    };
    stop.cancel();
    synced.store(false, Ordering::SeqCst);
    result
}

/// Writes the results into the NodePodProbe's status when they change it.
async fn write_status(api: &Api<NodePodProbe>, node: &str, shared: &Shared) -> Result<(), DaemonError> {
    for _ in 0..CONFLICT_RETRIES {
        let Some(mut npp) = api.get_opt(node).await? else { return Ok(()) };
        let current = npp.status.clone().unwrap_or_default();
        let results = shared.results.lock().clone();
        let status = updated_status(&npp.spec, &current, &results, &Time(Timestamp::now()));
        if status == current {
            return Ok(());
        }
        npp.status = Some(status);
        match api.replace_status(node, &PostParams::default(), &npp).await {
            Ok(_) => {
                tracing::debug!(node, "wrote the NodePodProbe's status");
                return Ok(());
            }
            Err(kube::Error::Api(response)) if response.code == 409 => continue,
            Err(kube::Error::Api(response)) if response.code == 404 => return Ok(()),
            Err(error) => return Err(error.into()),
        }
    }
    Err(DaemonError::Conflict(format!("NodePodProbe {node}: too many conflicts on its status")))
}

/// The latest container of `name` in the pod, with its status.
async fn latest_container(
    cri: &CriClient,
    pod_uid: &str,
    name: &str,
) -> Result<Option<cri::ContainerStatus>, DaemonError> {
    let filter = cri::ContainerFilter {
        label_selector: [(LABEL_POD_UID.to_string(), pod_uid.to_string())].into(),
        ..Default::default()
    };
    let latest = cri
        .list_containers(filter)
        .await?
        .into_iter()
        .filter(|c| c.metadata.as_ref().is_some_and(|m| m.name == name))
        .max_by_key(|c| c.created_at);
    match latest {
        Some(container) => Ok(cri.container_status(&container.id).await?),
        None => Ok(None),
    }
}

/// One probe, every period, until stopped (upstream `worker.run`).
async fn probe_task(
    shared: Arc<Shared>,
    key: ProbeKey,
    mut spec_rx: watch::Receiver<ContainerProbeSpec>,
    stop: CancellationToken,
) {
    let mut spec = spec_rx.borrow_and_update().clone();
    // Spread the first probes of a just-started daemon over one period.
    let period = Duration::from_secs(period_seconds(&spec));
    if shared.started.elapsed() < period {
        let jitter = period.mul_f64(rand::rng().random::<f64>());
        tokio::select! {
            _ = stop.cancelled() => { shared.remove(&key); return; }
            _ = tokio::time::sleep(jitter) => {}
        }
    }
    let mut container_id = String::new();
    let mut streak = Streak::default();
    loop {
        if spec_rx.has_changed().unwrap_or(false) {
            let next = spec_rx.borrow_and_update().clone();
            if !same_handler(&spec, &next) && !container_id.is_empty() {
                shared.set(&key, ProbeState::StateUnknown, String::new());
                streak = Streak::default();
            }
            spec = next;
        }
        probe_once(&shared, &key, &spec, &mut container_id, &mut streak).await;
        let period = Duration::from_secs(period_seconds(&spec));
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(period) => {}
        }
    }
    shared.remove(&key);
}

/// One round of a probe (upstream `worker.doProbe`).
async fn probe_once(
    shared: &Shared,
    key: &ProbeKey,
    spec: &ContainerProbeSpec,
    container_id: &mut String,
    streak: &mut Streak,
) {
    let container = match latest_container(&shared.cri, &key.uid, &key.container).await {
        Ok(Some(container)) => container,
        Ok(None) => {
            tracing::debug!(namespace = %key.namespace, pod = %key.pod, container = %key.container, "container not found");
            return;
        }
        Err(error) => {
            tracing::warn!(namespace = %key.namespace, pod = %key.pod, %error, "cannot read the pod's containers");
            return;
        }
    };
    if *container_id != container.id {
        tracing::debug!(namespace = %key.namespace, pod = %key.pod, from = %container_id, to = %container.id, "probed container changed");
        container_id.clone_from(&container.id);
        *streak = Streak::default();
        shared.set(key, ProbeState::StateUnknown, String::new());
    }
    if container.state != cri::ContainerState::ContainerRunning as i32 {
        shared.set(key, ProbeState::Failed, format!("Container({}) is Non-running", key.container));
        return;
    }
    let running_for = Timestamp::now().as_nanosecond().saturating_sub(i128::from(container.started_at));
    if running_for < i128::from(initial_delay_seconds(spec)) * 1_000_000_000 {
        return;
    }
    match shared.prober.probe(spec, &container.id, &key.ip).await {
        Ok((state, message)) => {
            if streak.observe(&state, spec) {
                shared.set(key, state, message);
            }
        }
        Err(error) => {
            tracing::warn!(namespace = %key.namespace, pod = %key.pod, probe = %key.probe, %error, "probe could not run");
        }
    }
}
