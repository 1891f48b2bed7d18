//! `kruise nodes`: simulated nodes (and optionally the scheduler) as a separate process, pointed
//! at any Kubernetes API server by kubeconfig: the embedded one, or a real kube-apiserver whose
//! cluster has no kubelets of its own.

use std::{path::PathBuf, process::ExitCode};

use anyhow::Context;
use clap::Args;
use kruise_controlplane::nodes::{SchedulerConfig, Simulation, SimulationConfig};
use kube::{
    Client, Config,
    config::{KubeConfigOptions, Kubeconfig},
};

/// Arguments of `kruise nodes`.
#[derive(Args)]
pub struct NodesArgs {
    /// Kubeconfig of the API server (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// How many nodes to run.
    #[arg(long, default_value_t = 3)]
    count: u32,
    /// Node names are PREFIX-N, PREFIX-N+1, ... from N = --first.
    #[arg(long, default_value = "sim-node")]
    prefix: String,
    /// Number of the first node (to split nodes over several processes).
    #[arg(long, default_value_t = 1)]
    first: u32,
    /// Zones to spread the nodes over (comma separated; empty for none).
    #[arg(long, default_value = "zone-a,zone-b,zone-c", value_delimiter = ',')]
    zones: Vec<String>,
    /// Also run the scheduler (leave off against a cluster that has kube-scheduler).
    #[arg(long)]
    scheduler: bool,
    /// Serve each node's CRI at DIR/NODE.sock.
    #[arg(long, value_name = "DIR")]
    cri_dir: Option<PathBuf>,
    /// Lease renewal period in milliseconds (the node heartbeat).
    #[arg(long, default_value_t = 10_000)]
    heartbeat_ms: u64,
}

/// Loads a client configuration from an explicit kubeconfig path or the usual places
/// (`$KUBECONFIG`, `~/.kube/config`, in-cluster).
pub(crate) async fn config_from(kubeconfig: Option<&PathBuf>) -> anyhow::Result<Config> {
    Ok(match kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path).with_context(|| format!("reading {}", path.display()))?;
            Config::from_custom_kubeconfig(file, &KubeConfigOptions::default()).await?
        }
        None => Config::infer().await.context("finding a kubeconfig")?,
    })
}

/// Loads a client from an explicit kubeconfig path or the usual places.
pub(crate) async fn client_from(kubeconfig: Option<&PathBuf>) -> anyhow::Result<Client> {
    Client::try_from(config_from(kubeconfig).await?).context("creating an API client")
}

/// Runs the nodes until Ctrl-C or SIGTERM.
pub fn run(args: &NodesArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging();
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let client = client_from(args.kubeconfig.as_ref()).await?;
        if let Some(dir) = &args.cri_dir {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut config = SimulationConfig {
            nodes: args.count,
            first: args.first,
            name_prefix: args.prefix.clone(),
            zones: args.zones.iter().filter(|z| !z.is_empty()).cloned().collect(),
            cri_dir: args.cri_dir.clone(),
            scheduler: args.scheduler.then(SchedulerConfig::default),
            ..Default::default()
        };
        config.timing.heartbeat = std::time::Duration::from_millis(args.heartbeat_ms.max(100));
        let simulation =
            Simulation::start(client.clone(), &config).await.context("starting the simulated nodes")?;
        super::up::wait_nodes_ready(&client, args.count).await;
        println!("{} simulated node(s) running", args.count);
        crate::shutdown_signal().await;
        simulation.stop().await;
        Ok(ExitCode::SUCCESS)
    })
}
