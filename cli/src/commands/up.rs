//! `kruise up`: the whole system on one machine with no cluster. It starts the embedded API
//! server, installs the Kruise CRDs, registers simulated nodes (kubelet + CRI each) and the
//! scheduler, runs the Kruise manager and one node daemon per node (on that node's CRI socket),
//! writes `DIR/kubeconfig` and `DIR/endpoints.json`, and runs until Ctrl-C or SIGTERM.
//! Running it again with the same `--data-dir` resumes: objects, nodes and running pods stay.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    process::ExitCode,
    time::Duration,
};

use anyhow::Context;
use clap::Args;
use k8s_openapi::{
    api::storage::v1::StorageClass,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kruise_controllers::runtime::Readiness;
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    nodes::{NodeTiming, PullTiming, Simulation, SimulationConfig},
};
use kruise_daemon::{DaemonConfig, spawn_daemon};
use kube::{
    Api, Client,
    api::{Patch, PatchParams, PostParams},
};

use super::manager::{ManagerArgs, run_manager};
use serde_json::{Value, json};

/// Arguments of `kruise up`.
#[derive(Args)]
#[command(
    after_help = "Example:\n  kruise up --data-dir .kruise --nodes 3\n  export KUBECONFIG=.kruise/kubeconfig\n  \
kubectl get nodes\n\nEvery address takes HOST:PORT; port 0 picks a free port. The addresses actually bound are \
written to DATA_DIR/endpoints.json (keys apiserver, rest, grpc)."
)]
pub struct UpArgs {
    /// Where everything is kept (objects, kubeconfig, endpoints, CRI sockets). Reusing it resumes.
    #[arg(long, value_name = "DIR", default_value = ".kruise")]
    data_dir: PathBuf,
    /// How many simulated nodes to run (spread over zone-a, zone-b, zone-c).
    #[arg(long, default_value_t = 3)]
    nodes: u32,
    /// Address of the Kubernetes API server.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:6443")]
    apiserver_addr: SocketAddr,
    /// Address of the REST service API (rollouts, audit; Swagger UI at /docs/). Its admin token
    /// is written to DATA_DIR/api-token.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    rest_addr: SocketAddr,
    /// The service API's audit store (`postgres://...`); default: SQLite in DATA_DIR/api/audit.db.
    #[arg(long, value_name = "URL", env = "KRUISE_API_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// Address of the gRPC service API (package kruise.api.v1, with server reflection; the same
    /// token as REST).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:9090")]
    grpc_addr: SocketAddr,
    /// Kruise feature gates of the manager (`kruise manager --feature-gates`). `kruise up` turns
    /// on the ImagePullJob controller (the service API's image pre-pulls), image pre-download
    /// for in-place and DaemonSet updates, ResourceDistribution and the PodUnavailableBudget
    /// guard of in-place updates; upstream leaves them off.
    #[arg(
        long,
        default_value = "ImagePullJobGate=true,PreDownloadImageForInPlaceUpdate=true,PreDownloadImageForDaemonSetUpdate=true,ResourceDistributionGate=true,PodUnavailableBudgetUpdateGate=true",
        value_parser = kruise_crds::features::FeatureGates::parse
    )]
    feature_gates: kruise_crds::features::FeatureGates,
    /// How long a deleted pod stays listed, in its terminal status, after its containers
    /// stopped (milliseconds). A real kubelet removes it only once the pod's volumes and cgroup
    /// are reclaimed, a second or more; 0 removes it at once.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pod_removal_ms: u64,
    /// How long a simulated node takes to pull an image it does not have yet (milliseconds).
    /// A kubelet pulls a small image in a second or more; pre-pulls (ImagePullJob) and
    /// pre-download for updates are visible while they run. 0 pulls at once.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    image_pull_ms: u64,
}

/// Longest unix socket path (sun_path is 108 bytes with the terminating NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Where the nodes' CRI sockets go: under the data dir when the path is short enough for a unix
/// socket, else under the temp dir.
fn cri_dir(data_dir: &Path) -> PathBuf {
    let preferred = data_dir.join("cri");
    let longest = preferred.join("sim-node-999.sock");
    if longest.as_os_str().len() <= MAX_SOCKET_PATH {
        return preferred;
    }
    let digest =
        data_dir.to_string_lossy().bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    std::env::temp_dir().join(format!("kruise-cri-{digest:x}"))
}

/// Runs everything until Ctrl-C or SIGTERM.
pub fn run(args: &UpArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging();
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(up(args))
}

async fn up(args: &UpArgs) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.data_dir)
        .with_context(|| format!("creating the data directory {}", args.data_dir.display()))?;
    let data_dir = std::fs::canonicalize(&args.data_dir).context("resolving the data directory")?;
    let kubeconfig_path = data_dir.join("kubeconfig");
    let resuming = data_dir.join("apiserver").exists();

    eprintln!("[1/6] starting the API server on {}", args.apiserver_addr);
    let server = ApiServer::start(ApiServerConfig {
        bind: args.apiserver_addr,
        data_dir: Some(data_dir.join("apiserver")),
        kubeconfig_path: Some(kubeconfig_path.clone()),
        ..Default::default()
    })
    .await
    .with_context(|| format!("starting the API server on {}", args.apiserver_addr))?;
    let client = Client::try_from(kube::Config::new(server.url.parse().context("the server URL")?))
        .context("creating an API client")?;

    eprintln!("[2/6] installing the Kruise CustomResourceDefinitions");
    install_crds(&client).await?;
    ensure_storage_class(&client).await?;

    eprintln!("[3/6] starting {} simulated node(s) and the scheduler", args.nodes);
    let cri_dir = cri_dir(&data_dir);
    std::fs::create_dir_all(&cri_dir).with_context(|| format!("creating {}", cri_dir.display()))?;
    let config = SimulationConfig {
        nodes: args.nodes,
        cri_dir: Some(cri_dir.clone()),
        timing: NodeTiming {
            removal: Duration::from_millis(args.pod_removal_ms),
            pull: PullTiming {
                first_pull: Duration::from_millis(args.image_pull_ms),
                ..PullTiming::default()
            },
            ..NodeTiming::default()
        },
        ..Default::default()
    };
    let simulation =
        Simulation::start(client.clone(), &config).await.context("starting the simulated nodes")?;
    wait_nodes_ready(&client, args.nodes).await;

    eprintln!("[4/6] starting the Kruise manager and webhook server");
    let manager_args = ManagerArgs {
        kubeconfig: None,
        namespace: "kruise-system".into(),
        health_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        webhook_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        webhook_host: Some("127.0.0.1".into()),
        leader_elect: false,
        leader_election_id: "kruise-manager".into(),
        install_crds: false,
        // The daemons start with the nodes, so the NodeImages need not wait for them.
        nodeimage_creation_delay: Duration::ZERO,
        feature_gates: args.feature_gates.clone(),
    };
    let (stop_manager, manager_stopped) = tokio::sync::oneshot::channel::<()>();
    let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
    let manager = {
        let client = client.clone();
        tokio::spawn(async move {
            let shutdown = async move {
                let _ = manager_stopped.await;
            };
            let result = run_manager(client, &manager_args, shutdown, move |addr, readiness| {
                let _ = bound_tx.send((addr, readiness));
            })
            .await;
            if let Err(error) = result {
                tracing::error!(error = %format!("{error:#}"), "the manager stopped");
            }
        })
    };
    let (health_addr, readiness) = bound_rx.await.context("the manager did not start")?;
    wait_ready(&readiness).await;

    eprintln!("[5/6] starting one node daemon per node");
    let daemon_client =
        super::daemon::daemon_client(kube::Config::new(server.url.parse().context("the server URL")?))?;
    let mut daemons = Vec::new();
    for node in &simulation.nodes {
        let mut config = DaemonConfig::new(&node.name);
        config.runtime_endpoint = Some(cri_dir.join(format!("{}.sock", node.name)));
        config.health_addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let daemon = spawn_daemon(daemon_client.clone(), config)
            .await
            .with_context(|| format!("starting the daemon of node {}", node.name))?;
        daemons.push((node.name.clone(), daemon));
    }
    let daemon_endpoints: serde_json::Map<String, serde_json::Value> = daemons
        .iter()
        .map(|(name, daemon)| (name.clone(), json!(format!("http://{}", daemon.started.health_addr))))
        .collect();

    eprintln!(
        "[6/6] starting the service API on {} (REST) and {} (gRPC) and writing {}",
        args.rest_addr,
        args.grpc_addr,
        data_dir.join("endpoints.json").display()
    );
    let (api, api_token) = super::api::start_embedded(
        client.clone(),
        &data_dir,
        args.rest_addr,
        args.grpc_addr,
        args.database_url.as_deref(),
    )
    .await?;
    let endpoints = json!({
        "apiserver": server.url,
        "rest": api.rest_url(),
        "apiTokenFile": api_token,
        "grpc": api.grpc_url(),
        "manager": format!("http://{health_addr}"),
        "criSockets": cri_dir,
        "daemons": daemon_endpoints,
    });
    std::fs::write(data_dir.join("endpoints.json"), serde_json::to_string_pretty(&endpoints)?)
        .context("writing endpoints.json")?;

    println!();
    println!(
        "kruise-rs is up{}: API server {} with {} simulated node(s).",
        if resuming { " (resumed)" } else { "" },
        server.url,
        args.nodes
    );
    println!("Next steps:");
    println!("  export KUBECONFIG={}", kubeconfig_path.display());
    println!("  kubectl get nodes");
    println!("  kubectl apply -f your-kruise-manifests.yaml");
    println!(
        "Service API: {} (Swagger UI {}/docs/), gRPC {}, bearer token in {}",
        api.rest_url(),
        api.rest_url(),
        api.grpc_url().unwrap_or_default(),
        api_token.display()
    );
    println!(
        "Data is kept in {}; run `kruise up --data-dir {}` again to resume. Ctrl-C stops.",
        data_dir.display(),
        data_dir.display()
    );

    crate::shutdown_signal().await;
    eprintln!("stopping...");
    api.shutdown().await;
    for (name, daemon) in daemons {
        if let Err(error) = daemon.stop().await {
            tracing::warn!(node = %name, %error, "the node daemon stopped with an error");
        }
    }
    let _ = stop_manager.send(());
    let _ = manager.await;
    simulation.stop().await;
    server.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// Applies every Kruise CRD (server-side apply, so a resume updates them in place).
pub(crate) async fn install_crds(client: &Client) -> anyhow::Result<Vec<String>> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply("kruise").force();
    let mut names = Vec::new();
    for crd in kruise_crds::crd::all_crds().context("building the CRDs")? {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let mut body = serde_json::to_value(&crd)?;
        body["apiVersion"] = json!("apiextensions.k8s.io/v1");
        body["kind"] = json!("CustomResourceDefinition");
        // A manager outside the cluster (`kruise up`, `--webhook-host`) points the conversion
        // webhook at its URL; applying the manifest's Service reference over that would leave
        // both set, which the API server rejects on a resume. Keep the registered client.
        if let Some(existing) = crds.get_opt(&name).await? {
            let stored = serde_json::to_value(&existing.spec.conversion)?;
            let client_config = stored.pointer("/webhook/clientConfig").cloned().unwrap_or(Value::Null);
            if client_config.get("url").is_some_and(|url| !url.is_null())
                && let Some(webhook) = body.pointer_mut("/spec/conversion/webhook")
            {
                webhook["clientConfig"] = client_config;
            }
        }
        crds.patch(&name, &params, &Patch::Apply(&body))
            .await
            .with_context(|| format!("installing CRD {name}"))?;
        names.push(name);
    }
    Ok(names)
}

/// The StorageClass `kruise up` provides, as kind provides its own (and, as there, the default
/// class): claims that name it, or no class, are provisioned and bound by the simulated nodes'
/// provisioner.
pub(crate) const STORAGE_CLASS: &str = "standard";

/// Creates the `standard` StorageClass of the simulated provisioner unless a class of that name
/// exists (a resumed data dir, or one the user made).
async fn ensure_storage_class(client: &Client) -> anyhow::Result<()> {
    let classes: Api<StorageClass> = Api::all(client.clone());
    if classes.get_opt(STORAGE_CLASS).await?.is_some() {
        return Ok(());
    }
    let class: StorageClass = serde_json::from_value(json!({
        "metadata": {
            "name": STORAGE_CLASS,
            // The cluster's default, as kind's: claims that name no class get it.
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": kruise_controlplane::controllers::volume_binder::SIMULATED_PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
    }))?;
    match classes.create(&PostParams::default(), &class).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error).context("creating the standard StorageClass"),
    }
}

/// Waits (up to 60 s) until every named CRD reports `Established`.
pub(crate) async fn wait_crds_established(client: &Client, names: &[String]) -> anyhow::Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let started = std::time::Instant::now();
    loop {
        let mut pending = Vec::new();
        for name in names {
            let established = crds.get_opt(name).await?.and_then(|crd| crd.status).is_some_and(|status| {
                status
                    .conditions
                    .unwrap_or_default()
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            });
            if !established {
                pending.push(name.as_str());
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(60) {
            anyhow::bail!("CRDs not Established after 60 s: {}", pending.join(", "));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits (up to 30 s) until the manager reports ready (caches synced, webhook configured).
async fn wait_ready(readiness: &Readiness) {
    for _ in 0..300 {
        if readiness.failing().is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tracing::warn!(failing = ?readiness.failing(), "the manager is not ready after 30 s");
}

/// Waits (up to 30 s) until `count` nodes report Ready.
pub(crate) async fn wait_nodes_ready(client: &Client, count: u32) {
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
    for _ in 0..300 {
        if let Ok(list) = nodes.list(&Default::default()).await {
            let ready = list
                .items
                .iter()
                .filter(|node| {
                    node.status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
                        && !node
                            .spec
                            .as_ref()
                            .and_then(|s| s.taints.as_ref())
                            .is_some_and(|t| t.iter().any(|t| t.key == "node.kubernetes.io/not-ready"))
                })
                .count();
            if ready as u32 >= count {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tracing::warn!(count, "not every node reported Ready within 30 s");
}
