//! `kruise daemon`: the node daemon of one node (upstream `kruise-daemon`, a DaemonSet pod per
//! node): it pulls the images its NodeImage lists over the node's CRI socket and reports them.
//! The node comes from `NODE_NAME` or `--node-name`; the CRI socket from `--runtime-endpoint`,
//! `--socket-file` (a name under `/hostvarrun`, as upstream), or upstream's probe order.
//! `/healthz`, `/readyz` (NotReady while the runtime does not answer) and `/metrics` are served
//! on `--health-addr`.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

use anyhow::Context;
use clap::Args;
use kruise_daemon::{
    DaemonConfig, DaemonStarted,
    cri::endpoint::{HOST_VAR_RUN, parse_endpoint},
    run_daemon,
};
use kube::Client;

/// Arguments of `kruise daemon`.
#[derive(Args, Clone)]
#[command(
    after_help = "Example:\n  NODE_NAME=node-1 kruise daemon --runtime-endpoint unix:///run/containerd/containerd.sock\n\n\
Without --runtime-endpoint or --socket-file the daemon probes containerd.sock, containerd/containerd.sock, \
crio.sock, crio/crio.sock, cri-dockerd.sock and cri-dockerd/cri-dockerd.sock under /hostvarrun, /var/run \
and /run, in that order."
)]
pub struct DaemonArgs {
    /// The node this daemon serves.
    #[arg(long, env = "NODE_NAME")]
    pub node_name: String,
    /// Kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The CRI socket (`unix:///path` or a path).
    #[arg(long, value_name = "ENDPOINT", env = "CONTAINER_RUNTIME_ENDPOINT")]
    pub runtime_endpoint: Option<String>,
    /// The CRI socket's file name under /hostvarrun (upstream's flag).
    #[arg(long, value_name = "NAME", conflicts_with = "runtime_endpoint")]
    pub socket_file: Option<String>,
    /// Where `/healthz`, `/readyz` and `/metrics` are served (upstream `--addr`).
    #[arg(long, alias = "addr", default_value = "0.0.0.0:10221")]
    pub health_addr: SocketAddr,
    /// Most image pulls at a time on the node; -1 for no limit.
    #[arg(long, default_value_t = 2, allow_negative_numbers = true)]
    pub max_workers_for_pull_image: i64,
    /// Kruise feature gates (`Name=true|false,...`; upstream's names and defaults). Off
    /// `DaemonWatchingPod`, `InPlaceUpdateEnvFromMetadata` or `PodProbeMarkerGate` leaves out
    /// the container meta reporter, its env-from-metadata restarts, or the pod prober.
    #[arg(long, default_value = "", value_parser = kruise_crds::features::FeatureGates::parse)]
    pub feature_gates: kruise_crds::features::FeatureGates,
}

impl DaemonArgs {
    /// The daemon configuration these arguments describe.
    pub fn config(&self) -> anyhow::Result<DaemonConfig> {
        let mut config = DaemonConfig::new(&self.node_name).with_feature_gates(&self.feature_gates);
        config.health_addr = self.health_addr;
        if let Some(endpoint) = &self.runtime_endpoint {
            let path = parse_endpoint(endpoint).with_context(|| {
                format!("--runtime-endpoint {endpoint:?}: only unix sockets are supported (unix:///path or a path)")
            })?;
            config.runtime_endpoint = Some(path);
        } else if let Some(file) = &self.socket_file {
            config.runtime_endpoint = Some(PathBuf::from(HOST_VAR_RUN).join(file));
        }
        config.image_puller.max_workers =
            usize::try_from(self.max_workers_for_pull_image).ok().filter(|n| *n > 0);
        Ok(config)
    }
}

/// A client whose requests say `User-Agent: kruise-daemon/<version>`, so API servers (and the
/// benchmarks) can count the daemon's requests.
pub(crate) fn daemon_client(mut config: kube::Config) -> anyhow::Result<Client> {
    let agent = format!("{}/{}", kruise_daemon::USER_AGENT, env!("CARGO_PKG_VERSION"));
    let value = http::HeaderValue::from_str(&agent).context("the user agent")?;
    config.headers.push((http::header::USER_AGENT, value));
    Client::try_from(config).context("creating an API client")
}

/// Runs the daemon until Ctrl-C or SIGTERM.
pub fn run(args: &DaemonArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging();
    if args.node_name.trim().is_empty() {
        anyhow::bail!("the node name is required: set NODE_NAME or pass --node-name");
    }
    let config = args.config()?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let client = daemon_client(super::nodes::config_from(args.kubeconfig.as_ref()).await?)?;
        run_daemon(client, config, crate::shutdown_signal(), |started: DaemonStarted| {
            tracing::info!(addr = %started.health_addr, "health, readiness and metrics endpoint listening");
        })
        .await
        .context("running the daemon")?;
        Ok(ExitCode::SUCCESS)
    })
}
