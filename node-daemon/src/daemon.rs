//! The daemon as one call (upstream `pkg/daemon/daemon.go`): the health endpoint, the runtime
//! health monitor and every [`NodeWorker`], until shutdown. `kruise daemon` runs one; `kruise up`
//! runs one per simulated node in its own process, each on that node's CRI socket.

use std::{future::Future, net::SocketAddr, path::PathBuf, sync::Arc, time::Duration};

use kruise_runtime::health::{self, Readiness};
use tokio_util::sync::CancellationToken;

use crate::{
    containermeta::{ContainerMetaConfig, ContainerMetaReporter},
    cri::{CriClient, CriOptions, EndpointSource, MonitorOptions, endpoint::default_search_dirs, monitor},
    crr::{ContainerRecreator, RecreateConfig},
    error::DaemonError,
    imagepuller::{ImagePuller, ImagePullerConfig},
    metrics::DaemonMetrics,
    worker::{NodeWorker, WorkerContext, supervise},
};

/// Name of the readiness check the runtime monitor drives.
pub const CRI_CHECK: &str = "cri";

/// Everything a daemon runs with.
#[derive(Clone, Debug)]
pub struct DaemonConfig {
    /// The node (`NODE_NAME`).
    pub node_name: String,
    /// The CRI socket; `None` probes upstream's socket list under `socket_search_dirs`.
    pub runtime_endpoint: Option<PathBuf>,
    /// Directories probed for a CRI socket when no endpoint is given.
    pub socket_search_dirs: Vec<PathBuf>,
    /// Where `/healthz`, `/readyz` and `/metrics` are served (port 0 picks one).
    pub health_addr: SocketAddr,
    /// CRI call timeouts.
    pub cri: CriOptions,
    /// How often the runtime is checked.
    pub monitor: MonitorOptions,
    /// The image puller.
    pub image_puller: ImagePullerConfig,
    /// The container recreate executor.
    pub recreate: RecreateConfig,
    /// The container meta reporter; its `enabled` and `env_from_metadata` are the gates
    /// `DaemonWatchingPod` and `InPlaceUpdateEnvFromMetadata`.
    pub container_meta: ContainerMetaConfig,
    /// Whether the pod prober runs (gate `PodProbeMarkerGate`, default on).
    pub pod_probes: bool,
}

impl DaemonConfig {
    /// Defaults for `node_name`: upstream's health port (`:10221`), socket probing, two pulls
    /// at a time.
    pub fn new(node_name: &str) -> Self {
        Self {
            node_name: node_name.to_string(),
            runtime_endpoint: None,
            socket_search_dirs: default_search_dirs(),
            health_addr: SocketAddr::from(([0, 0, 0, 0], 10221)),
            cri: CriOptions::default(),
            monitor: MonitorOptions::default(),
            image_puller: ImagePullerConfig::default(),
            recreate: RecreateConfig::default(),
            container_meta: ContainerMetaConfig::default(),
            pod_probes: true,
        }
    }

    /// The same configuration with the workers the feature gates switch off left out (upstream's
    /// `DaemonWatchingPod`, `InPlaceUpdateEnvFromMetadata`, `PodProbeMarkerGate`).
    pub fn with_feature_gates(mut self, gates: &kruise_crds::features::FeatureGates) -> Self {
        use kruise_crds::features::Gate;
        self.container_meta.enabled = gates.enabled(Gate::DaemonWatchingPod);
        self.container_meta.env_from_metadata = gates.enabled(Gate::InPlaceUpdateEnvFromMetadata);
        self.pod_probes = gates.enabled(Gate::PodProbeMarkerGate);
        self
    }
}

/// What a started daemon tells its caller.
#[derive(Clone)]
pub struct DaemonStarted {
    /// The bound health endpoint.
    pub health_addr: SocketAddr,
    /// Its readiness checks (`cri`, one per worker cache).
    pub readiness: Readiness,
    /// Its metrics.
    pub metrics: DaemonMetrics,
    /// Its CRI client (shared with the workers).
    pub cri: CriClient,
}

/// The workers this build runs: the image puller, the container recreate executor, the pod
/// prober (the probes of the node's NodePodProbe) and (unless `DaemonWatchingPod` is off) the
/// container meta reporter.
pub fn default_workers(config: &DaemonConfig) -> Vec<Arc<dyn NodeWorker>> {
    let mut workers: Vec<Arc<dyn NodeWorker>> = vec![
        Arc::new(ImagePuller::new(config.image_puller.clone())),
        Arc::new(ContainerRecreator::new(config.recreate.clone())),
    ];
    if config.pod_probes {
        workers.push(Arc::new(crate::podprobe::PodProber::new()));
    }
    if config.container_meta.enabled {
        workers.push(Arc::new(ContainerMetaReporter::new(config.container_meta.clone())));
    }
    workers
}

/// Runs the daemon with [`default_workers`] until `shutdown` completes.
pub async fn run_daemon(
    client: kube::Client,
    config: DaemonConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
    on_started: impl FnOnce(DaemonStarted),
) -> Result<(), DaemonError> {
    let workers = default_workers(&config);
    run_daemon_with(client, config, workers, shutdown, on_started).await
}

/// Runs the daemon with the given workers until `shutdown` completes.
pub async fn run_daemon_with(
    client: kube::Client,
    config: DaemonConfig,
    workers: Vec<Arc<dyn NodeWorker>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    on_started: impl FnOnce(DaemonStarted),
) -> Result<(), DaemonError> {
    if config.node_name.trim().is_empty() {
        return Err(DaemonError::Config("the node name is required (NODE_NAME or --node-name)".into()));
    }
    let metrics = DaemonMetrics::new();
    let readiness = Readiness::new();
    let source = EndpointSource::new(config.runtime_endpoint.clone(), &config.socket_search_dirs);
    let cri = CriClient::new(source, config.cri.clone(), metrics.clone());
    let stop = CancellationToken::new();
    let health_stop = stop.clone();
    let scraped = metrics.clone();
    let (health_addr, health_task) =
        health::serve(config.health_addr, readiness.clone(), move || scraped.render(), async move {
            health_stop.cancelled().await
        })
        .await?;
    tracing::info!(node = %config.node_name, addr = %health_addr, "kruise-daemon health endpoint listening");

    let cri_ready = readiness.check(CRI_CHECK);
    let monitor_task = tokio::spawn(monitor::monitor(
        cri.clone(),
        cri_ready,
        metrics.clone(),
        config.monitor.clone(),
        stop.clone(),
    ));
    let ctx = WorkerContext {
        node_name: config.node_name.clone(),
        client,
        cri: cri.clone(),
        readiness: readiness.clone(),
        metrics: metrics.clone(),
        shutdown: stop.clone(),
    };
    let tasks: Vec<_> = workers
        .into_iter()
        .map(|worker| {
            tracing::info!(node = %config.node_name, worker = worker.name(), "starting worker");
            tokio::spawn(supervise(worker, ctx.clone()))
        })
        .collect();
    on_started(DaemonStarted { health_addr, readiness, metrics, cri });

    shutdown.await;
    tracing::info!(node = %config.node_name, "kruise-daemon stopping");
    stop.cancel();
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    }
    let _ = monitor_task.await;
    let _ = health_task.await;
    Ok(())
}

/// A daemon running as a task of the current runtime (`kruise up`, the scenario tests and the
/// benchmarks run one per simulated node in their own process).
pub struct RunningDaemon {
    /// What it reported once started.
    pub started: DaemonStarted,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), DaemonError>>,
}

impl RunningDaemon {
    /// Stops it and waits until it stopped.
    pub async fn stop(mut self) -> Result<(), DaemonError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match (&mut self.task).await {
            Ok(result) => result,
            Err(error) => Err(DaemonError::Config(format!("the daemon task failed: {error}"))),
        }
    }
}

impl Drop for RunningDaemon {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Starts [`run_daemon`] as a task and returns once its health endpoint is bound.
pub async fn spawn_daemon(client: kube::Client, config: DaemonConfig) -> Result<RunningDaemon, DaemonError> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let mut task = tokio::spawn(run_daemon(
        client,
        config,
        async move {
            let _ = stopped.await;
        },
        move |started| {
            let _ = started_tx.send(started);
        },
    ));
    match started_rx.await {
        Ok(started) => Ok(RunningDaemon { started, stop: Some(stop), task }),
        Err(_) => match (&mut task).await {
            Ok(Err(error)) => Err(error),
            Ok(Ok(())) => Err(DaemonError::Config("the daemon stopped before it started".into())),
            Err(error) => Err(DaemonError::Config(format!("the daemon task failed: {error}"))),
        },
    }
}
