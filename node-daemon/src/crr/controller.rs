//! The container recreate executor's loop (upstream `crr_daemon_controller.go`): it watches the
//! active ContainerRecreateRequests of its node (label selector
//! `crr.apps.kruise.io/node-name=<node>,crr.apps.kruise.io/active=true`), queues them by pod,
//! and carries out one request per pod at a time, reading the pod's requests fresh from the
//! API on every round (so a round never acts on a copy older than its own last write):
//!
//! 1. the picked request goes `Recreating` (the others of the pod `Pending`);
//! 2. with `unreadyGracePeriodSeconds`, it waits until the manager held the pod not ready
//!    (`PreRecreateGrace`) and the grace period passed;
//! 3. each round computes the containers' states from the runtime and the manager's snapshot,
//!    writes them when they changed, else stops the next container (preStop hook, then CRI
//!    `StopContainer`), and completes the request once every container succeeded or failed.

use std::{
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use futures::StreamExt;
use k8s_openapi::{apimachinery::pkg::apis::meta::v1::Time, jiff::Timestamp};
use kruise_crds::apps::v1beta1::{
    CONTAINER_RECREATE_REQUEST_ACTIVE_KEY, CONTAINER_RECREATE_REQUEST_NODE_NAME_KEY,
    CONTAINER_RECREATE_REQUEST_POD_UID_KEY, ContainerRecreateRequest,
    ContainerRecreateRequestContainerRecreateState as RecreateState, ContainerRecreateRequestPhase as Phase,
};
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams, PostParams},
    runtime::{WatchStreamExt, watcher},
};
use serde_json::json;

use super::{
    core::{
        AfterFailedStop, Grace, WalkStep, after_failed_stop, after_stop, container_states, grace_seconds,
        pick_request, recheck_after, runtime_type, unready_grace, walk,
    },
    runtime::{PodTarget, Stopper, pod_status},
};
use crate::{
    cri::CriClient,
    error::DaemonError,
    events::EventPublisher,
    metrics::DaemonMetrics,
    worker::{NodeWorker, WorkerContext, WorkerFuture},
    workqueue::{BACKOFF, WorkQueue},
};

/// Name of the worker and of its readiness check.
pub const NAME: &str = "crr";
/// Attempts of a read-modify-write of a request's status that keeps meeting conflicts.
const CONFLICT_RETRIES: usize = 5;

/// How the executor runs.
#[derive(Clone, Debug)]
pub struct RecreateConfig {
    /// Pods worked on at once (upstream: 32 workers).
    pub workers: usize,
    /// Publish the kubelet's `Killing` / `FailedPreStopHook` Events on the pods.
    pub events: bool,
}

impl Default for RecreateConfig {
    /// Upstream's 32 workers, with Events.
    fn default() -> Self {
        Self { workers: 32, events: true }
    }
}

/// The container recreate worker.
pub struct ContainerRecreator {
    config: RecreateConfig,
}

impl ContainerRecreator {
    /// An executor with `config`.
    pub fn new(config: RecreateConfig) -> Self {
        Self { config }
    }
}

impl NodeWorker for ContainerRecreator {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(self: Arc<Self>, ctx: WorkerContext) -> WorkerFuture {
        Box::pin(run(self.config.clone(), ctx))
    }
}

/// What every round needs.
struct Executor {
    client: kube::Client,
    selector: String,
    cri: CriClient,
    stopper: Stopper,
    metrics: DaemonMetrics,
}

fn pod_key(crr: &ContainerRecreateRequest) -> String {
    format!("{}/{}", crr.metadata.namespace.as_deref().unwrap_or_default(), crr.spec.pod_name)
}

fn is_done(crr: &ContainerRecreateRequest) -> bool {
    crr.metadata.deletion_timestamp.is_some()
        || crr.status.as_ref().is_some_and(|s| s.completion_time.is_some())
}

async fn run(config: RecreateConfig, ctx: WorkerContext) -> Result<(), DaemonError> {
    let synced = ctx.readiness.check(NAME);
    synced.store(false, Ordering::SeqCst);
    let selector = format!(
        "{CONTAINER_RECREATE_REQUEST_NODE_NAME_KEY}={},{CONTAINER_RECREATE_REQUEST_ACTIVE_KEY}=true",
        ctx.node_name
    );
    // preStop HTTP hooks go to the pod as the kubelet's do: certificates are not verified.
    let http = reqwest::Client::builder().danger_accept_invalid_certs(true).build().map_err(|error| {
        DaemonError::Config(format!("cannot build the HTTP client for preStop hooks: {error}"))
    })?;
    let events =
        config.events.then(|| EventPublisher::new(ctx.client.clone(), "kruise-daemon-crr", &ctx.node_name));
    let executor = Arc::new(Executor {
        client: ctx.client.clone(),
        selector: selector.clone(),
        cri: ctx.cri.clone(),
        stopper: Stopper::new(ctx.cri.clone(), events, http),
        metrics: ctx.metrics.clone(),
    });
    let queue = WorkQueue::new(BACKOFF);
    let watch = {
        let (queue, synced, node) = (queue.clone(), synced.clone(), ctx.node_name.clone());
        let api: Api<ContainerRecreateRequest> = Api::all(ctx.client.clone());
        async move {
            let mut stream =
                watcher(api, watcher::Config::default().labels(&selector)).default_backoff().boxed();
            while let Some(event) = stream.next().await {
                match event {
                    Ok(watcher::Event::Apply(crr) | watcher::Event::InitApply(crr)) if !is_done(&crr) => {
                        queue.add(pod_key(&crr));
                    }
                    Ok(watcher::Event::InitDone) => synced.store(true, Ordering::SeqCst),
                    Ok(_) => {}
                    Err(error) => tracing::warn!(%node, %error, "ContainerRecreateRequest watch error"),
                }
            }
        }
    };
    let workers = {
        let executor = executor.clone();
        queue.run(config.workers, move |key| {
            let executor = executor.clone();
            async move {
                let result = executor.sync(&key).await;
                if let Err(error) = &result {
                    tracing::warn!(pod = %key, %error, "container recreate round failed (retrying with back-off)");
                }
                result
            }
        })
    };
    let result = tokio::select! {
        _ = ctx.shutdown.cancelled() => Ok(()),
        _ = watch => Err(DaemonError::Watch("the ContainerRecreateRequest watch ended".into())),
        _ = workers => Ok(()),
    };
    synced.store(false, Ordering::SeqCst);
    result
}

impl Executor {
    /// One round for the pod `namespace/name`; returns when to look again (None: on the next
    /// event).
    async fn sync(&self, key: &str) -> Result<Option<Duration>, DaemonError> {
        let (namespace, pod) = key.split_once('/').unwrap_or(("", key));
        let api: Api<ContainerRecreateRequest> = Api::namespaced(self.client.clone(), namespace);
        let requests: Vec<ContainerRecreateRequest> = api
            .list(&ListParams::default().labels(&self.selector))
            .await?
            .items
            .into_iter()
            .filter(|crr| crr.spec.pod_name == pod)
            .collect();
        let (picked, pending) = pick_request(&requests);
        for name in pending {
            self.set_phase(&api, &name, Phase::Pending).await?;
        }
        let Some(crr) = picked else { return Ok(None) };
        let name = crr.metadata.name.clone().unwrap_or_default();
        if crr.status.as_ref().map(|s| &s.phase) != Some(&Phase::Recreating) {
            tracing::info!(namespace, request = %name, pod, "recreating containers");
            self.set_phase(&api, &name, Phase::Recreating).await?;
            return Ok(None);
        }
        match unready_grace(crr, Timestamp::now()) {
            Grace::Proceed => self.manage(&api, crr).await,
            Grace::AwaitHold => {
                tracing::info!(namespace, request = %name, "waiting for the pod to be held not ready");
                Ok(None)
            }
            Grace::Wait(left) => {
                tracing::info!(namespace, request = %name, ?left, "waiting out the unready grace period");
                Ok(Some(left + Duration::from_millis(100)))
            }
        }
    }

    /// Moves the request on by one step: states, or one container stopped, or completion.
    async fn manage(
        &self,
        api: &Api<ContainerRecreateRequest>,
        crr: &ContainerRecreateRequest,
    ) -> Result<Option<Duration>, DaemonError> {
        let name = crr.metadata.name.clone().unwrap_or_default();
        let runtime = match runtime_type(crr) {
            Ok(runtime) => runtime,
            Err(message) => {
                self.complete(api, &name, format!("failed to find runtime service: {message}"), false)
                    .await?;
                return Ok(None);
            }
        };
        let pod = PodTarget {
            namespace: crr.metadata.namespace.clone().unwrap_or_default(),
            name: crr.spec.pod_name.clone(),
            uid: crr
                .metadata
                .labels
                .as_ref()
                .and_then(|labels| labels.get(CONTAINER_RECREATE_REQUEST_POD_UID_KEY))
                .cloned()
                .unwrap_or_default(),
        };
        let status = pod_status(&self.cri, &pod.uid).await?;
        let stored: Vec<RecreateState> =
            crr.status.as_ref().map(|s| s.container_recreate_states.clone()).unwrap_or_default();
        let mut states = container_states(crr, &status, &runtime, Timestamp::now());
        if states != stored {
            self.write_states(api, &name, &states).await?;
            return Ok(None);
        }
        let (mut from, mut finished) = (0, 0);
        loop {
            match walk(crr, &mut states, &status, from, &mut finished) {
                WalkStep::End => break,
                WalkStep::Complete => {
                    self.complete(api, &name, failures(&states), false).await?;
                    return Ok(None);
                }
                WalkStep::Stop { index, id } => {
                    let Some(container) = crr.spec.containers.get(index) else { break };
                    match self.stopper.stop(&pod, &name, container, &id, grace_seconds(crr)).await {
                        Ok(()) => {
                            self.metrics.container_stop(true);
                            after_stop(&mut states, index);
                            break;
                        }
                        Err(error) => {
                            self.metrics.container_stop(false);
                            tracing::warn!(request = %name, container = %container.name, %error, "cannot stop the container");
                            match after_failed_stop(crr, &mut states, index, &error) {
                                AfterFailedStop::Continue(next) => from = next,
                                AfterFailedStop::WriteStates => {
                                    self.write_states(api, &name, &states).await?;
                                    return Ok(None);
                                }
                            }
                        }
                    }
                }
            }
        }
        if states != stored {
            self.write_states(api, &name, &states).await?;
            return Ok(None);
        }
        if finished == states.len() {
            let message = failures(&states);
            let succeeded = message.is_empty();
            self.complete(api, &name, message, succeeded).await?;
            return Ok(None);
        }
        Ok(recheck_after(crr))
    }

    async fn write_states(
        &self,
        api: &Api<ContainerRecreateRequest>,
        name: &str,
        states: &[RecreateState],
    ) -> Result<(), DaemonError> {
        tracing::debug!(request = name, ?states, "writing container recreate states");
        let patch = json!({"status": {"containerRecreateStates": states}});
        match api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// Sets the request's phase (read fresh, written with its resourceVersion).
    async fn set_phase(
        &self,
        api: &Api<ContainerRecreateRequest>,
        name: &str,
        phase: Phase,
    ) -> Result<(), DaemonError> {
        self.update_status(api, name, |status| status.phase = phase.clone()).await
    }

    /// Completes the request: phase `Completed`, completion time, message.
    async fn complete(
        &self,
        api: &Api<ContainerRecreateRequest>,
        name: &str,
        message: String,
        succeeded: bool,
    ) -> Result<(), DaemonError> {
        let now = Time(Timestamp::now());
        self.update_status(api, name, |status| {
            status.phase = Phase::Completed;
            status.completion_time = Some(now.clone());
            status.message = message.clone();
        })
        .await?;
        self.metrics.recreate_completed(succeeded);
        tracing::info!(request = name, succeeded, %message, "container recreate request completed");
        Ok(())
    }

    async fn update_status(
        &self,
        api: &Api<ContainerRecreateRequest>,
        name: &str,
        edit: impl Fn(&mut kruise_crds::apps::v1beta1::ContainerRecreateRequestStatus),
    ) -> Result<(), DaemonError> {
        for _ in 0..CONFLICT_RETRIES {
            let Some(mut fresh) = api.get_opt(name).await? else { return Ok(()) };
            edit(fresh.status.get_or_insert_with(Default::default));
            match api.replace_status(name, &PostParams::default(), &fresh).await {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(status)) if status.code == 409 => continue,
                Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
                Err(error) => return Err(error.into()),
            }
        }
        Err(DaemonError::Conflict(format!(
            "ContainerRecreateRequest {name}: too many conflicts on its status"
        )))
    }
}

/// The request's message when containers failed (upstream leaves it empty; naming the failed
/// containers and why saves a look at every state).
fn failures(states: &[RecreateState]) -> String {
    let failed: Vec<String> = states
        .iter()
        .filter(|s| s.phase == Phase::Failed)
        .map(|s| if s.message.is_empty() { s.name.clone() } else { format!("{}: {}", s.name, s.message) })
        .collect();
    if failed.is_empty() { String::new() } else { format!("failed to recreate {}", failed.join("; ")) }
}
