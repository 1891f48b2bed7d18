//! `kruise manager`: the Kruise controllers and the webhook server against any cluster
//! (kubeconfig or in-cluster). The webhook serves on every replica; the controllers run only on
//! the replica holding the `kruise-manager` Lease. `/healthz`, `/readyz` (caches synced and
//! webhook certificate loaded) and `/metrics` are served on `--health-addr`.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

use anyhow::Context;
use clap::Args;
use kruise_controllers::{
    app::{self, ControllerOptions, ManagerOptions},
    nodeimage::NodeImageOptions,
    runtime::{LeaderElectionConfig, Readiness},
    webhook::{WebhookConfig, WebhookEndpoint},
};
use kruise_crds::features::{FeatureGates, Gate};
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
    /// Wait this long after a node turned Ready before creating its NodeImage, so that the
    /// node's daemon is up (`500ms`, `30s`, `1m`; upstream's flag and default).
    #[arg(long, default_value = "30s", value_parser = super::parse_duration)]
    pub nodeimage_creation_delay: std::time::Duration,
    /// Kruise feature gates, `Name=true|false,...` (also `AllAlpha=`, `AllBeta=`), with
    /// upstream's names and defaults (e.g. `ImagePullJobGate=true`,
    /// `PreDownloadImageForInPlaceUpdate=true`).
    #[arg(long, default_value = "", value_parser = FeatureGates::parse)]
    pub feature_gates: FeatureGates,
}

/// The webhook configuration for these arguments.
pub(crate) fn webhook_config(args: &ManagerArgs) -> WebhookConfig {
    let mut config = WebhookConfig {
        bind: args.webhook_addr,
        namespace: args.namespace.clone(),
        readiness_gate_for_all_pods: args.feature_gates.enabled(Gate::KruisePodReadinessGate),
        statefulset_auto_resize_pvc: args.feature_gates.enabled(Gate::StatefulSetAutoResizePVCGate),
        sidecarset_patch_metadata_defaults_allowed: args
            .feature_gates
            .enabled(Gate::SidecarSetPatchPodMetadataDefaultsAllowed),
        sort_sidecars_by_name: args.feature_gates.enabled(Gate::EnableSortSidecarContainerByName),
        resource_distribution_gate: args.feature_gates.enabled(Gate::ResourceDistributionGate),
        pod_unavailable_budget: kruise_controllers::webhook::pod_unavailable_budget::PubGates {
            delete: args.feature_gates.enabled(Gate::PodUnavailableBudgetDeleteGate),
            update: args.feature_gates.enabled(Gate::PodUnavailableBudgetUpdateGate),
            vertical_scaling: args.feature_gates.enabled(Gate::InPlacePodVerticalScaling),
        },
        workloadspread_gate: args.feature_gates.enabled(Gate::WorkloadSpread),
        crd_cascading_deletion_protection: args
            .feature_gates
            .enabled(Gate::DeletionProtectionForCRDCascadingGate),
        ..Default::default()
    };
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
    let options = ManagerOptions {
        health_addr: args.health_addr,
        webhook: Some(webhook_config(args)),
        leader_election,
        controllers: ControllerOptions {
            nodeimage: NodeImageOptions { creation_delay: args.nodeimage_creation_delay },
            feature_gates: args.feature_gates.clone(),
            namespace: args.namespace.clone(),
        },
    };
    tracing::info!(feature_gates = %args.feature_gates.to_flag(), "feature gates differing from the defaults");
    app::run_manager(client, options, shutdown, move |started| {
        on_health(started.health_addr, started.readiness)
    })
    .await
    .context("running the manager")
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
