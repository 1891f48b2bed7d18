//! The whole manager as one call: the webhook server on every replica, and the controllers on
//! the replica that leads. `kruise manager`, `kruise up`, the integration harness and the
//! benchmarks all start it through [`run_manager`], so they run the same composition.

use std::{
    future::Future,
    net::SocketAddr,
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use kruise_crds::features::Gate;
use kube::Client;

use crate::{
    ControllerError,
    runtime::{ControllerStarter, LeaderElectionConfig, Manager, ManagerConfig, Metrics, Readiness},
    webhook::{WebhookConfig, WebhookServer},
};

/// Settings of individual controllers (upstream's per-controller flags).
#[derive(Clone, Debug, Default)]
pub struct ControllerOptions {
    /// The NodeImage controller (`--nodeimage-creation-delay`).
    pub nodeimage: crate::nodeimage::NodeImageOptions,
    /// `--feature-gates`: which controllers run and what they do (upstream's gates and defaults).
    pub feature_gates: kruise_crds::features::FeatureGates,
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

/// The controllers this build runs, each marking its readiness check (`controller-caches` for
/// CloneSet, `<name>-caches` for the others) ready once synced.
pub fn controllers(
    metrics: Metrics,
    readiness: &Readiness,
    options: &ControllerOptions,
) -> Vec<ControllerStarter> {
    let gates = &options.feature_gates;
    let caches = readiness.check("controller-caches");
    let cloneset: ControllerStarter = {
        let metrics = metrics.clone();
        let settings = crate::cloneset::controller::Settings::from_gates(gates);
        Arc::new(move |client: Client| {
            let metrics = metrics.clone();
            let caches = caches.clone();
            Box::pin(async move {
                crate::cloneset::controller::run(client, metrics, settings, move || {
                    caches.store(true, Ordering::SeqCst)
                })
                .await;
            })
        })
    };
    let statefulset: ControllerStarter = {
        let (metrics, caches) = (metrics.clone(), readiness.check("statefulset-caches"));
        let settings = crate::statefulset::controller::Settings::from_gates(gates);
        Arc::new(move |client: Client| {
            let (metrics, caches) = (metrics.clone(), caches.clone());
            Box::pin(async move {
                crate::statefulset::controller::run(client, metrics, settings, move || {
                    caches.store(true, Ordering::SeqCst)
                })
                .await;
            })
        })
    };
    let daemonset: ControllerStarter = {
        let (metrics, caches) = (metrics.clone(), readiness.check("daemonset-caches"));
        let settings = crate::daemonset::controller::Settings::from_gates(gates);
        Arc::new(move |client: Client| {
            let (metrics, caches) = (metrics.clone(), caches.clone());
            Box::pin(async move {
                crate::daemonset::controller::run(client, metrics, settings, move || {
                    caches.store(true, Ordering::SeqCst)
                })
                .await;
            })
        })
    };
    let nodeimage: ControllerStarter = {
        let (metrics, caches, options) =
            (metrics.clone(), readiness.check("nodeimage-caches"), options.nodeimage.clone());
        Arc::new(move |client: Client| {
            let (metrics, caches, options) = (metrics.clone(), caches.clone(), options.clone());
            Box::pin(async move {
                crate::nodeimage::run(client, metrics, options, move || caches.store(true, Ordering::SeqCst))
                    .await;
            })
        })
    };
    let imagepulljob: ControllerStarter = {
        let (metrics, caches) = (metrics.clone(), readiness.check("imagepulljob-caches"));
        Arc::new(move |client: Client| {
            let (metrics, caches) = (metrics.clone(), caches.clone());
            Box::pin(async move {
                crate::imagepulljob::run(client, metrics, move || caches.store(true, Ordering::SeqCst)).await;
            })
        })
    };
    let containerrecreaterequest: ControllerStarter = {
        let (metrics, caches) = (metrics.clone(), readiness.check("containerrecreaterequest-caches"));
        Arc::new(move |client: Client| {
            let (metrics, caches) = (metrics.clone(), caches.clone());
            Box::pin(async move {
                crate::containerrecreaterequest::run(client, metrics, move || {
                    caches.store(true, Ordering::SeqCst)
                })
                .await;
            })
        })
    };
    let podprobemarker: ControllerStarter = {
        let (metrics, caches) = (metrics.clone(), readiness.check("podprobemarker-caches"));
        Arc::new(move |client: Client| {
            let (metrics, caches) = (metrics.clone(), caches.clone());
            Box::pin(async move {
                crate::podprobemarker::run(client, metrics, move || caches.store(true, Ordering::SeqCst))
                    .await;
            })
        })
    };
    let nodepodprobe: ControllerStarter = {
        let (metrics, caches) = (metrics.clone(), readiness.check("nodepodprobe-caches"));
        Arc::new(move |client: Client| {
            let (metrics, caches) = (metrics.clone(), caches.clone());
            Box::pin(async move {
                crate::nodepodprobe::run(client, metrics, move || caches.store(true, Ordering::SeqCst)).await;
            })
        })
    };
    let containerlaunchpriority: ControllerStarter = {
        let (metrics, caches) = (metrics.clone(), readiness.check("containerlaunchpriority-caches"));
        Arc::new(move |client: Client| {
            let (metrics, caches) = (metrics.clone(), caches.clone());
            Box::pin(async move {
                crate::containerlaunchpriority::run(client, metrics, move || {
                    caches.store(true, Ordering::SeqCst)
                })
                .await;
            })
        })
    };
    let podreadiness: ControllerStarter = {
        let (metrics, caches) = (metrics.clone(), readiness.check("podreadiness-caches"));
        Arc::new(move |client: Client| {
            let (metrics, caches) = (metrics.clone(), caches.clone());
            Box::pin(async move {
                crate::podreadiness::run(client, metrics, move || caches.store(true, Ordering::SeqCst)).await;
            })
        })
    };
    let imagelistpulljob: ControllerStarter = {
        let caches = readiness.check("imagelistpulljob-caches");
        Arc::new(move |client: Client| {
            let (metrics, caches) = (metrics.clone(), caches.clone());
            Box::pin(async move {
                crate::imagelistpulljob::run(client, metrics, move || caches.store(true, Ordering::SeqCst))
                    .await;
            })
        })
    };
    // Upstream's gating: the NodeImage and ContainerRecreateRequest controllers need the daemon;
    // the ImagePullJob ones need `ImagePullJobGate` (on with pre-download).
    // Launch priority and pod readiness are not gated upstream.
    let mut starters = vec![cloneset, statefulset, daemonset, containerlaunchpriority, podreadiness];
    if gates.enabled(Gate::KruiseDaemon) {
        starters.extend([nodeimage, containerrecreaterequest]);
    } else {
        readiness.forget("nodeimage-caches");
        readiness.forget("containerrecreaterequest-caches");
    }
    // The pod probe controllers need the daemon and `PodProbeMarkerGate`.
    if gates.enabled(Gate::PodProbeMarkerGate) && gates.enabled(Gate::KruiseDaemon) {
        starters.extend([podprobemarker, nodepodprobe]);
    } else {
        readiness.forget("podprobemarker-caches");
        readiness.forget("nodepodprobe-caches");
    }
    if gates.enabled(Gate::ImagePullJobGate) {
        starters.extend([imagepulljob, imagelistpulljob]);
    } else {
        readiness.forget("imagepulljob-caches");
        readiness.forget("imagelistpulljob-caches");
    }
    starters
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
