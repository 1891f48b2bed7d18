//! A manager replica becomes ready every time it starts (its readiness once waited on a store
//! whose wake-up the CloneSet controller could take, so a few starts in ten never became
//! ready), also right after another replica stopped and while its webhook re-points the CRDs it
//! watches; and two live replicas do not take turns rewriting the webhook configurations (each
//! CRD write restarts every watch on its kind). Both run on the embedded control plane and, when
//! its binaries are built, on a real kube-apiserver (`KRUISE_IT_TIERS` selects).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kruise_integration::{
    Cluster, RealControlPlane, Tier,
    manager::{KruiseManager, ManagerSpec},
};

fn tiers() -> Vec<Tier> {
    let selected = std::env::var("KRUISE_IT_TIERS").ok();
    Tier::ALL
        .into_iter()
        .filter(|tier| {
            selected.as_deref().is_none_or(|value| value.split(',').any(|t| t.trim() == tier.name()))
        })
        .filter(|tier| {
            let available = *tier == Tier::Embedded || RealControlPlane::available();
            if !available {
                eprintln!("skipped on {}: no real control-plane binaries", tier.name());
            }
            available
        })
        .collect()
}

fn starts(default: usize) -> usize {
    std::env::var("KRUISE_IT_STARTS").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

async fn crd_version(cluster: &Cluster) -> Option<String> {
    let crds: kube::Api<CustomResourceDefinition> = kube::Api::all(cluster.client());
    crds.get("clonesets.apps.kruise.io").await.unwrap().metadata.resource_version
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_becomes_ready_on_every_start() {
    for tier in tiers() {
        let cluster = Cluster::start(tier).await.unwrap();
        cluster.install_crds().await.unwrap();
        let starts = starts(10);
        let mut failures = 0;
        for start in 0..starts {
            let began = Instant::now();
            match KruiseManager::start(&cluster, ManagerSpec::in_process()).await {
                Ok(manager) => {
                    eprintln!(
                        "{} start {start}: ready in {:.1}s",
                        tier.name(),
                        began.elapsed().as_secs_f64()
                    );
                    manager.stop().await;
                }
                Err(error) => {
                    eprintln!("{} start {start}: NOT READY: {error}", tier.name());
                    failures += 1;
                }
            }
        }
        assert_eq!(failures, 0, "{}: {failures} of {starts} starts never became ready", tier.name());
        cluster.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_hand_over_and_become_ready() {
    for tier in tiers() {
        let cluster = Cluster::start(tier).await.unwrap();
        cluster.install_crds().await.unwrap();
        let mut leader = KruiseManager::start(&cluster, ManagerSpec::process("r0")).await.unwrap();
        leader.wait_endpoint("/readyz").await.unwrap();
        let handovers = starts(3);
        let mut failures = 0;
        for handover in 1..=handovers {
            let next =
                KruiseManager::start(&cluster, ManagerSpec::process(&format!("r{handover}"))).await.unwrap();
            // While both run, the follower leaves the configurations to the live leader.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let before = crd_version(&cluster).await;
            tokio::time::sleep(Duration::from_secs(3)).await;
            assert_eq!(
                crd_version(&cluster).await,
                before,
                "{} handover {handover}: the CloneSet CRD was rewritten while two replicas ran",
                tier.name()
            );
            leader.stop().await;
            let began = Instant::now();
            match next.wait_endpoint("/readyz").await {
                Ok(()) => eprintln!(
                    "{} handover {handover}: ready in {:.1}s",
                    tier.name(),
                    began.elapsed().as_secs_f64()
                ),
                Err(error) => {
                    eprintln!("{} handover {handover}: NOT READY: {error}", tier.name());
                    failures += 1;
                }
            }
            leader = next;
        }
        assert_eq!(failures, 0, "{}: {failures} of {handovers} handovers never became ready", tier.name());
        leader.stop().await;
        cluster.shutdown().await;
    }
}
