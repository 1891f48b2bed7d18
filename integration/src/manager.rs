//! The Kruise manager (controllers + webhook server) for scenarios, hosted in the test process
//! (through [`kruise_controllers::app::run_manager`], the same call `kruise manager` makes) or as
//! a `kruise manager` process that only knows the cluster's kubeconfig, so that it can be killed
//! the hard way. Its webhooks are registered by URL (`https://127.0.0.1:PORT`), which both the
//! embedded API server and a real kube-apiserver on loopback can reach.

use std::{
    net::{SocketAddr, TcpListener},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::Namespace;
use kruise_controllers::{
    app::{ControllerOptions, ManagerOptions, run_manager},
    nodeimage::NodeImageOptions,
    runtime::LeaderElectionConfig,
    webhook::{WebhookConfig, WebhookEndpoint},
};
use kruise_crds::features::{FeatureGates, Gate};
use kube::{Api, api::PostParams};
use tokio::{sync::oneshot, task::JoinHandle};

use crate::{Cluster, HarnessError, nodes::fresh_kruise_binary};

/// The namespace the scenarios' managers live in (Lease, webhook Secret).
pub const MANAGER_NAMESPACE: &str = "kruise-system";

/// How a manager runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ManagerHosting {
    /// In the test process.
    InProcess,
    /// As a `kruise manager` process.
    Process,
}

/// What to start.
#[derive(Clone, Debug)]
pub struct ManagerSpec {
    /// Where it runs.
    pub hosting: ManagerHosting,
    /// Lease leader election (several replicas); off: it always leads.
    pub leader_elect: bool,
    /// The replica's identity in the Lease (process hosting uses the `HOSTNAME` it is given).
    pub identity: String,
    /// `--feature-gates` ([`SCENARIO_FEATURE_GATES`] unless a scenario needs others).
    pub feature_gates: String,
}

/// The scenarios' gates: upstream's defaults plus the ImagePullJob controller (the image-pull
/// scenarios and the service API's pre-pulls need it) and the sidecar terminator (alpha; it
/// acts only on job pods whose sidecars ask for it).
pub const SCENARIO_FEATURE_GATES: &str = "ImagePullJobGate=true,SidecarTerminator=true";

impl ManagerSpec {
    /// One replica in the test process, no leader election.
    pub fn in_process() -> Self {
        Self {
            hosting: ManagerHosting::InProcess,
            leader_elect: false,
            identity: "manager-1".into(),
            feature_gates: SCENARIO_FEATURE_GATES.into(),
        }
    }

    /// One replica as a process, with leader election.
    pub fn process(identity: &str) -> Self {
        Self {
            hosting: ManagerHosting::Process,
            leader_elect: true,
            identity: identity.into(),
            feature_gates: SCENARIO_FEATURE_GATES.into(),
        }
    }

    /// The same replica with other feature gates.
    pub fn with_feature_gates(mut self, gates: &str) -> Self {
        self.feature_gates = gates.into();
        self
    }
}

/// A running manager replica.
pub struct KruiseManager {
    host: Option<Host>,
    health_addr: SocketAddr,
    identity: String,
}

enum Host {
    InProcess { stop: oneshot::Sender<()>, task: JoinHandle<()> },
    Process(Child),
}

impl KruiseManager {
    /// Starts a replica against `cluster` (creating the manager namespace when missing) and
    /// waits until `/readyz` answers 200 (caches synced, webhook certificate loaded) — for a
    /// replica that does not lead, until `/healthz` answers.
    pub async fn start(cluster: &Cluster, spec: ManagerSpec) -> Result<Self, HarnessError> {
        ensure_namespace(cluster).await?;
        let health_addr = free_loopback_addr()?;
        let webhook_addr = free_loopback_addr()?;
        let host = match spec.hosting {
            ManagerHosting::InProcess => {
                let feature_gates = FeatureGates::parse(&spec.feature_gates)
                    .map_err(|error| HarnessError::Nodes(format!("--feature-gates: {error}")))?;
                // The scenarios' nodes and daemons start together, so NodeImages are created as
                // soon as a node is Ready (upstream waits 30 s for the daemon on a new node).
                let options = ManagerOptions {
                    health_addr,
                    webhook: Some(webhook_config(webhook_addr, &feature_gates)),
                    leader_election: spec.leader_elect.then(|| lease_config(&spec.identity)),
                    controllers: ControllerOptions {
                        nodeimage: NodeImageOptions { creation_delay: Duration::ZERO },
                        feature_gates,
                        namespace: MANAGER_NAMESPACE.into(),
                    },
                };
                let client = cluster.client();
                let (stop, stopped) = oneshot::channel::<()>();
                let task = tokio::spawn(async move {
                    let shutdown = async move {
                        let _ = stopped.await;
                    };
                    if let Err(error) = run_manager(client, options, shutdown, |_| {}).await {
                        eprintln!("the in-process manager stopped with an error: {error}");
                    }
                });
                Host::InProcess { stop, task }
            }
            ManagerHosting::Process => {
                let binary = fresh_kruise_binary()?;
                let child = Command::new(binary)
                    .arg("manager")
                    .arg("--kubeconfig")
                    .arg(cluster.kubeconfig_path())
                    .args(["--namespace", MANAGER_NAMESPACE])
                    .args(["--health-addr", &health_addr.to_string()])
                    .args(["--webhook-addr", &webhook_addr.to_string()])
                    .args(["--webhook-host", "127.0.0.1"])
                    .args(["--leader-elect", if spec.leader_elect { "true" } else { "false" }])
                    .args(["--nodeimage-creation-delay", "0s"])
                    .args(["--feature-gates", &spec.feature_gates])
                    .env("HOSTNAME", &spec.identity)
                    .env("RUST_LOG", std::env::var("KRUISE_IT_MANAGER_LOG").unwrap_or_else(|_| "warn".into()))
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::inherit())
                    .spawn()
                    .map_err(|source| HarnessError::Spawn { name: "kruise manager".into(), source })?;
                Host::Process(child)
            }
        };
        let manager = Self { host: Some(host), health_addr, identity: spec.identity.clone() };
        manager.wait_endpoint(if spec.leader_elect { "/healthz" } else { "/readyz" }).await?;
        Ok(manager)
    }

    /// The replica's identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The `/healthz`, `/readyz`, `/metrics` endpoint.
    pub fn health_addr(&self) -> SocketAddr {
        self.health_addr
    }

    /// Waits (up to 60 s) until `path` answers 200.
    pub async fn wait_endpoint(&self, path: &str) -> Result<(), HarnessError> {
        let started = Instant::now();
        let http = reqwest::Client::builder().timeout(Duration::from_secs(2)).build()?;
        let mut last;
        loop {
            match http.get(format!("http://{}{path}", self.health_addr)).send().await {
                Ok(response) if response.status().is_success() => return Ok(()),
                Ok(response) => {
                    last = format!("{}: {}", response.status(), response.text().await.unwrap_or_default())
                }
                Err(error) => last = error.to_string(),
            }
            if started.elapsed() > Duration::from_secs(60) {
                return Err(HarnessError::Timeout {
                    what: format!("the manager's {path}"),
                    waited: started.elapsed(),
                    last,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The Prometheus text of `/metrics`.
    pub async fn metrics(&self) -> Result<String, HarnessError> {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(5)).build()?;
        Ok(http.get(format!("http://{}/metrics", self.health_addr)).send().await?.text().await?)
    }

    /// Stops the replica the hard way: SIGKILL for a process, an aborted task in process (no
    /// lease release, no cleanup: what a crash looks like to the cluster).
    pub async fn kill(mut self) {
        match self.host.take() {
            Some(Host::Process(mut child)) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            Some(Host::InProcess { stop, task }) => {
                drop(stop);
                task.abort();
                let _ = task.await;
            }
            None => {}
        }
    }

    /// Stops the replica gracefully (SIGTERM; it releases its Lease).
    pub async fn stop(mut self) {
        match self.host.take() {
            Some(Host::Process(mut child)) => {
                let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
                let deadline = Instant::now() + Duration::from_secs(20);
                while Instant::now() < deadline {
                    if let Ok(Some(_)) = child.try_wait() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                let _ = child.kill();
                let _ = child.wait();
            }
            Some(Host::InProcess { stop, task }) => {
                let _ = stop.send(());
                let _ = tokio::time::timeout(Duration::from_secs(20), task).await;
            }
            None => {}
        }
    }
}

impl Drop for KruiseManager {
    fn drop(&mut self) {
        match self.host.take() {
            Some(Host::Process(mut child)) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            Some(Host::InProcess { task, .. }) => task.abort(),
            None => {}
        }
    }
}

/// The in-process replica's webhook settings (the StatefulSet PVC-resize, CRD cascading
/// deletion-protection and SidecarSet patch-metadata gates as `kruise manager` sets them).
fn webhook_config(bind: SocketAddr, gates: &FeatureGates) -> WebhookConfig {
    WebhookConfig {
        bind,
        namespace: MANAGER_NAMESPACE.into(),
        endpoint: WebhookEndpoint::Url { host: "127.0.0.1".into(), port: None },
        statefulset_auto_resize_pvc: gates.enabled(Gate::StatefulSetAutoResizePVCGate),
        crd_cascading_deletion_protection: gates.enabled(Gate::DeletionProtectionForCRDCascadingGate),
        sidecarset_patch_metadata_defaults_allowed: gates
            .enabled(Gate::SidecarSetPatchPodMetadataDefaultsAllowed),
        sort_sidecars_by_name: gates.enabled(Gate::EnableSortSidecarContainerByName),
        resource_distribution_gate: gates.enabled(Gate::ResourceDistributionGate),
        pod_unavailable_budget: kruise_controllers::webhook::pod_unavailable_budget::PubGates {
            delete: gates.enabled(Gate::PodUnavailableBudgetDeleteGate),
            update: gates.enabled(Gate::PodUnavailableBudgetUpdateGate),
            vertical_scaling: gates.enabled(Gate::InPlacePodVerticalScaling),
        },
        workloadspread_gate: gates.enabled(Gate::WorkloadSpread),
        ..Default::default()
    }
}

fn lease_config(identity: &str) -> LeaderElectionConfig {
    LeaderElectionConfig::new(MANAGER_NAMESPACE, "kruise-manager", identity)
}

async fn ensure_namespace(cluster: &Cluster) -> Result<(), HarnessError> {
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    if namespaces.get_opt(MANAGER_NAMESPACE).await?.is_none() {
        let namespace: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": MANAGER_NAMESPACE}
        }))
        .map_err(|error| HarnessError::Nodes(error.to_string()))?;
        match namespaces.create(&PostParams::default(), &namespace).await {
            Ok(_) => {}
            Err(kube::Error::Api(response)) if response.code == 409 => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

/// A loopback address with a port free right now (bound, read, released).
fn free_loopback_addr() -> Result<SocketAddr, HarnessError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(HarnessError::io("picking a free port"))?;
    listener.local_addr().map_err(HarnessError::io("reading the free port"))
}
