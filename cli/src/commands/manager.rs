//! `kruise manager`: the Kruise controllers and the webhook server against any cluster
//! (kubeconfig or in-cluster). The webhook serves on every replica; the controllers run only on
//! the replica holding the `kruise-manager` Lease. `/healthz`, `/readyz` (caches synced and
//! webhook certificate loaded) and `/metrics` are served on `--health-addr`.

use std::{
    net::SocketAddr,
    path::PathBuf,
    process::ExitCode,
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use anyhow::Context;
use clap::Args;
use kruise_controllers::{
    runtime::{ControllerStarter, LeaderElectionConfig, Manager, ManagerConfig, Metrics, Readiness},
    webhook::{WebhookConfig, WebhookEndpoint, WebhookServer},
};
use kube::Client;

/// Arguments of `kruise manager`.
#[derive(Args, Clone)]
pub struct ManagerArgs {
    /// Kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Namespace of the manager: its Lease, webhook Secret and Service.
    #[arg(long, default_value = "kruise-system", env = "POD_NAMESPACE")]
    pub namespace: String,
    /// Where `/healthz`, `/readyz` and `/metrics` are served.
    #[arg(long, default_value = "0.0.0.0:8000")]
    pub health_addr: SocketAddr,
    /// Where the webhook server listens (HTTPS).
    #[arg(long, default_value = "0.0.0.0:9876", env = "WEBHOOK_ADDR")]
    pub webhook_addr: SocketAddr,
    /// Register the webhooks as `https://HOST:PORT` instead of through the `kruise-webhook-service`
    /// Service (for a manager running outside the cluster).
    #[arg(long, value_name = "HOST", env = "WEBHOOK_HOST")]
    pub webhook_host: Option<String>,
    /// Elect a leader among replicas through a Lease (off: this replica always leads).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_elect: bool,
    /// Name of the leader election Lease.
    #[arg(long, default_value = "kruise-manager")]
    pub leader_election_id: String,
    /// Apply the Kruise CRDs at start (server-side apply).
    #[arg(long)]
    pub install_crds: bool,
}

/// The controllers this build runs.
pub(crate) fn controllers(metrics: Metrics, readiness: Readiness) -> Vec<ControllerStarter> {
    let caches = readiness.check("controller-caches");
    let starter: ControllerStarter = Arc::new(move |client: Client| {
        let metrics = metrics.clone();
        let caches = caches.clone();
        Box::pin(async move {
            kruise_controllers::cloneset::controller::run(client, metrics, move || {
                caches.store(true, Ordering::SeqCst)
            })
            .await;
        })
    });
    vec![starter]
}

/// The webhook configuration for these arguments.
pub(crate) fn webhook_config(args: &ManagerArgs) -> WebhookConfig {
    let mut config =
        WebhookConfig { bind: args.webhook_addr, namespace: args.namespace.clone(), ..Default::default() };
    if let Some(host) = &args.webhook_host {
        config.endpoint = WebhookEndpoint::Url { host: host.clone(), port: None };
    }
    config
}

/// Runs the webhook server and the manager until `shutdown` completes.
pub(crate) async fn run_manager(
    client: Client,
    args: &ManagerArgs,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    on_health: impl FnOnce(SocketAddr, Readiness),
) -> anyhow::Result<()> {
    if args.install_crds {
        super::up::install_crds(&client).await?;
    }
    let leader_election = args.leader_elect.then(|| {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "kruise-manager".into());
        let identity = format!("{host}_{}", uuid_like());
        LeaderElectionConfig::new(&args.namespace, &args.leader_election_id, &identity)
    });
    let manager =
        Manager::new(client.clone(), ManagerConfig { health_addr: args.health_addr, leader_election });
    let readiness = manager.readiness();
    let webhook = WebhookServer::start(client.clone(), webhook_config(args))
        .await
        .context("starting the webhook server")?;
    tracing::info!(addr = %webhook.local_addr(), "webhook server listening");
    let webhook_ready = readiness.check("webhook");
    let webhook_readiness = webhook.readiness();
    let watch_webhook = tokio::spawn(async move {
        loop {
            if webhook_readiness.is_ready() {
                webhook_ready.store(true, Ordering::SeqCst);
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let controllers = controllers(manager.metrics(), readiness.clone());
    let result = manager.run(controllers, shutdown, move |addr| on_health(addr, readiness)).await;
    watch_webhook.abort();
    webhook.shutdown().await;
    result.context("running the manager")
}

fn uuid_like() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{:x}{:x}", nanos, std::process::id())
}

/// Runs until Ctrl-C or SIGTERM.
pub fn run(args: &ManagerArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging();
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let client = super::nodes::client_from(args.kubeconfig.as_ref()).await?;
        run_manager(client, args, crate::shutdown_signal(), |addr, _| {
            tracing::info!(%addr, "health, readiness and metrics endpoint listening");
        })
        .await?;
        Ok(ExitCode::SUCCESS)
    })
}
