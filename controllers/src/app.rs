//! The whole manager as one call: the webhook server on every replica, and the controllers on
//! the replica that leads. `kruise manager`, `kruise up`, the integration harness and the
//! benchmarks all start it through [`run_manager`], so they run the same composition.

use std::{
    future::Future,
    net::SocketAddr,
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use kruise_crds::features::{FeatureGates, Gate};
use kube::Client;

use crate::{
    ControllerError,
    runtime::{
        ControllerStarter, ControllerTask, LeaderElectionConfig, Manager, ManagerConfig, Metrics, Readiness,
        cache::Caches,
    },
    webhook::{WebhookConfig, WebhookServer},
};

/// Settings of individual controllers (upstream's per-controller flags).
#[derive(Clone, Debug, Default)]
pub struct ControllerOptions {
    /// The NodeImage controller (`--nodeimage-creation-delay`).
    pub nodeimage: crate::nodeimage::NodeImageOptions,
    /// `--feature-gates`: which controllers run and what they do (upstream's gates and defaults).
    pub feature_gates: kruise_crds::features::FeatureGates,
    /// The manager namespace (upstream `POD_NAMESPACE`), where SidecarSet revisions live; empty
    /// means `kruise-system`.
    pub namespace: String,
}

impl ControllerOptions {
    /// The manager namespace, `kruise-system` when not set.
    pub fn manager_namespace(&self) -> String {
        if self.namespace.is_empty() {
            crate::webhook::DEFAULT_NAMESPACE.to_string()
        } else {
            self.namespace.clone()
        }
    }
}

/// What a manager replica runs with.
#[derive(Clone, Debug)]
pub struct ManagerOptions {
    /// Where `/healthz`, `/readyz` and `/metrics` are served (port 0 picks a free port).
    pub health_addr: SocketAddr,
    /// The webhook server; `None` runs the controllers without it (for example when another
    /// replica or an external deployment serves the webhooks).
    pub webhook: Option<WebhookConfig>,
    /// Lease leader election; `None`: this replica always leads.
    pub leader_election: Option<LeaderElectionConfig>,
    /// Per-controller settings.
    pub controllers: ControllerOptions,
}

impl Default for ManagerOptions {
    /// Health on `0.0.0.0:8000`, the webhook server with in-cluster defaults, no election.
    fn default() -> Self {
        Self {
            health_addr: std::net::SocketAddr::from(([0, 0, 0, 0], 8000)),
            webhook: Some(WebhookConfig::default()),
            leader_election: None,
            controllers: ControllerOptions::default(),
        }
    }
}

/// What a started manager tells its caller once its health endpoint is bound.
#[derive(Clone)]
pub struct ManagerStarted {
    /// The health, readiness and metrics endpoint.
    pub health_addr: SocketAddr,
    /// The webhook server's address, when it runs.
    pub webhook_addr: Option<SocketAddr>,
    /// The readiness checks (caches synced, webhook certificate loaded).
    pub readiness: Readiness,
    /// The manager's metrics registry.
    pub metrics: Metrics,
}

/// What a controller's start is handed: the term's shared caches, the metrics, the per-controller
/// settings and the call that marks its readiness check once its caches are synced.
type Start = fn(Caches, Metrics, &ControllerOptions, Synced) -> ControllerTask;

/// Marks a controller's caches synced.
type Synced = Box<dyn FnOnce() + Send>;

/// One controller of the manager: its readiness check, whether the feature gates run it, and
/// how it starts.
struct Entry {
    readiness_check: &'static str,
    enabled: fn(&FeatureGates) -> bool,
    start: Start,
}

fn always(_: &FeatureGates) -> bool {
    true
}

/// Every controller of this build. Upstream's gating: the NodeImage and
/// ContainerRecreateRequest controllers need the daemon; the pod probe ones the daemon and
/// `PodProbeMarkerGate`; the ImagePullJob ones `ImagePullJobGate` (on with pre-download);
/// ResourceDistribution `ResourceDistributionGate`; PodUnavailableBudget either of its two gates.
/// Launch priority and pod readiness are not gated upstream.
const CONTROLLERS: &[Entry] = &[
    Entry {
        readiness_check: "controller-caches",
        enabled: always,
        start: |caches, metrics, options, synced| {
            let settings = crate::cloneset::controller::Settings::from_gates(&options.feature_gates);
            Box::pin(crate::cloneset::controller::run(caches, metrics, settings, synced))
        },
    },
    Entry {
        readiness_check: "statefulset-caches",
        enabled: always,
        start: |caches, metrics, options, synced| {
            let settings = crate::statefulset::controller::Settings::from_gates(&options.feature_gates);
            Box::pin(crate::statefulset::controller::run(caches, metrics, settings, synced))
        },
    },
    Entry {
        readiness_check: "daemonset-caches",
        enabled: always,
        start: |caches, metrics, options, synced| {
            let settings = crate::daemonset::controller::Settings::from_gates(&options.feature_gates);
            Box::pin(crate::daemonset::controller::run(caches, metrics, settings, synced))
        },
    },
    Entry {
        readiness_check: "containerlaunchpriority-caches",
        enabled: always,
        start: |caches, metrics, _, synced| {
            Box::pin(crate::containerlaunchpriority::run(caches, metrics, synced))
        },
    },
    Entry {
        readiness_check: "podreadiness-caches",
        enabled: always,
        start: |caches, metrics, _, synced| Box::pin(crate::podreadiness::run(caches, metrics, synced)),
    },
    Entry {
        readiness_check: "nodeimage-caches",
        enabled: |gates| gates.enabled(Gate::KruiseDaemon),
        start: |caches, metrics, options, synced| {
            Box::pin(crate::nodeimage::run(caches, metrics, options.nodeimage.clone(), synced))
        },
    },
    Entry {
        readiness_check: "containerrecreaterequest-caches",
        enabled: |gates| gates.enabled(Gate::KruiseDaemon),
        start: |caches, metrics, _, synced| {
            Box::pin(crate::containerrecreaterequest::run(caches, metrics, synced))
        },
    },
    Entry {
        readiness_check: "podprobemarker-caches",
        enabled: |gates| gates.enabled(Gate::PodProbeMarkerGate) && gates.enabled(Gate::KruiseDaemon),
        start: |caches, metrics, _, synced| Box::pin(crate::podprobemarker::run(caches, metrics, synced)),
    },
    Entry {
        readiness_check: "nodepodprobe-caches",
        enabled: |gates| gates.enabled(Gate::PodProbeMarkerGate) && gates.enabled(Gate::KruiseDaemon),
        start: |caches, metrics, _, synced| Box::pin(crate::nodepodprobe::run(caches, metrics, synced)),
    },
    Entry {
        readiness_check: "sidecarset-caches",
        enabled: always,
        start: |caches, metrics, options, synced| {
            Box::pin(crate::sidecarset::controller::run(caches, metrics, options.manager_namespace(), synced))
        },
    },
    Entry {
        readiness_check: "sidecarterminator-caches",
        enabled: |gates| gates.enabled(Gate::SidecarTerminator),
        start: |caches, metrics, _, synced| Box::pin(crate::sidecarterminator::run(caches, metrics, synced)),
    },
    Entry {
        readiness_check: "imagepulljob-caches",
        enabled: |gates| gates.enabled(Gate::ImagePullJobGate),
        start: |caches, metrics, _, synced| Box::pin(crate::imagepulljob::run(caches, metrics, synced)),
    },
    Entry {
        readiness_check: "imagelistpulljob-caches",
        enabled: |gates| gates.enabled(Gate::ImagePullJobGate),
        start: |caches, metrics, _, synced| Box::pin(crate::imagelistpulljob::run(caches, metrics, synced)),
    },
    Entry {
        readiness_check: "broadcastjob-caches",
        enabled: always,
        start: |caches, metrics, _, synced| Box::pin(crate::broadcastjob::run(caches, metrics, synced)),
    },
    Entry {
        readiness_check: "advancedcronjob-caches",
        enabled: always,
        start: |caches, metrics, _, synced| Box::pin(crate::advancedcronjob::run(caches, metrics, synced)),
    },
    Entry {
        readiness_check: "ephemeraljob-caches",
        enabled: always,
        start: |caches, metrics, _, synced| Box::pin(crate::ephemeraljob::run(caches, metrics, synced)),
    },
    Entry {
        readiness_check: "resourcedistribution-caches",
        enabled: |gates| gates.enabled(Gate::ResourceDistributionGate),
        start: |caches, metrics, _, synced| {
            Box::pin(crate::resourcedistribution::run(caches, metrics, synced))
        },
    },
    Entry {
        readiness_check: "uniteddeployment-caches",
        enabled: always,
        start: |caches, metrics, _, synced| Box::pin(crate::uniteddeployment::run(caches, metrics, synced)),
    },
    Entry {
        readiness_check: "persistentpodstate-caches",
        enabled: always,
        start: |caches, metrics, options, synced| {
            Box::pin(crate::persistentpodstate::run(caches, metrics, options.manager_namespace(), synced))
        },
    },
    Entry {
        readiness_check: "podunavailablebudget-caches",
        enabled: |gates| {
            gates.enabled(Gate::PodUnavailableBudgetDeleteGate)
                || gates.enabled(Gate::PodUnavailableBudgetUpdateGate)
        },
        start: |caches, metrics, _, synced| {
            Box::pin(crate::podunavailablebudget::run(caches, metrics, synced))
        },
    },
    Entry {
        readiness_check: "workloadspread-caches",
        enabled: |gates| gates.enabled(Gate::WorkloadSpread),
        start: |caches, metrics, options, synced| {
            Box::pin(crate::workloadspread::run(caches, metrics, options.manager_namespace(), synced))
        },
    },
];

/// The controllers the feature gates enable, each marking its readiness check
/// (`controller-caches` for CloneSet, `<name>-caches` for the others) ready once synced.
pub fn controllers(
    metrics: Metrics,
    readiness: &Readiness,
    options: &ControllerOptions,
) -> Vec<ControllerStarter> {
    CONTROLLERS
        .iter()
        .filter_map(|entry| {
            if !(entry.enabled)(&options.feature_gates) {
                return None;
            }
            let (metrics, options, start) = (metrics.clone(), options.clone(), entry.start);
            let check = readiness.check(entry.readiness_check);
            let starter: ControllerStarter = Arc::new(move |caches: Caches| {
                let check = check.clone();
                start(
                    caches,
                    metrics.clone(),
                    &options,
                    Box::new(move || check.store(true, Ordering::SeqCst)),
                )
            });
            Some(starter)
        })
        .collect()
}

/// Runs the webhook server and the manager until `shutdown` completes; `on_started` is called
/// once the health endpoint is bound.
pub async fn run_manager(
    client: Client,
    options: ManagerOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
    on_started: impl FnOnce(ManagerStarted),
) -> Result<(), ControllerError> {
    let manager = Manager::new(
        client.clone(),
        ManagerConfig { health_addr: options.health_addr, leader_election: options.leader_election.clone() },
    );
    let readiness = manager.readiness();
    let metrics = manager.metrics();
    let webhook = match options.webhook {
        Some(config) => Some(WebhookServer::start(client.clone(), config).await?),
        None => None,
    };
    let webhook_addr = webhook.as_ref().map(WebhookServer::local_addr);
    let watch_webhook = webhook.as_ref().map(|webhook| {
        tracing::info!(addr = ?webhook.local_addr(), "webhook server listening");
        let webhook_ready = readiness.check("webhook");
        let webhook_readiness = webhook.readiness();
        tokio::spawn(async move {
            while !webhook_readiness.is_ready() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            webhook_ready.store(true, Ordering::SeqCst);
        })
    });
    let controllers = controllers(metrics.clone(), &readiness, &options.controllers);
    let started_readiness = readiness.clone();
    let result = manager
        .run(controllers, shutdown, move |health_addr| {
            on_started(ManagerStarted { health_addr, webhook_addr, readiness: started_readiness, metrics })
        })
        .await;
    if let Some(task) = watch_webhook {
        task.abort();
    }
    if let Some(webhook) = webhook {
        webhook.shutdown().await;
    }
    result
}
