//! Benchmark of the Advanced DaemonSet controller on the embedded control plane: the API
//! server, simulated nodes (kubelet + scheduler), the Kruise CRDs and the manager (controllers
//! and webhook server) all run in this process.
//!
//! An image rollout of one Advanced DaemonSet (one pod per simulated node), in place
//! (`rollingUpdateType: InPlaceIfPossible`) against recreate (`Standard`, `maxSurge: 0`), same
//! nodes, same `maxUnavailable`: time from the template write until every scheduled pod is
//! updated, Ready and available at the new generation, and the API writes the rollout cost
//! (counted per request by the embedded API server, by `User-Agent`).
//!
//! Figures are printed, never asserted. Sizes come from the environment:
//! `KRUISE_BENCH_DS_NODES` (200), `KRUISE_BENCH_MAX_UNAVAILABLE` (20%), `KRUISE_BENCH_TIMEOUT`
//! (seconds per wait, 900). `--quick` (or `KRUISE_BENCH_QUICK=1`) runs 20 nodes.
//!
//! Run with `cargo bench -p kruise --bench daemonset` (or `-- --quick`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly on unexpected data

mod common;

use std::time::Duration;

use common::{
    Cluster, Counters, InProcessManager, NAMESPACE, Workload, env_or, init_tracing, print_rollouts,
    quick_requested, timed_rollout,
};
use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1alpha1::DaemonSet;
use kube::Api;
use serde_json::json;

/// How big.
struct Sizes {
    quick: bool,
    nodes: u32,
    max_unavailable: String,
    timeout: Duration,
}

impl Sizes {
    fn from_env() -> Self {
        let quick = quick_requested();
        Self {
            quick,
            nodes: env_or("KRUISE_BENCH_DS_NODES", if quick { 20 } else { 200 }),
            max_unavailable: env_or("KRUISE_BENCH_MAX_UNAVAILABLE", "20%".to_string()),
            timeout: Duration::from_secs(env_or("KRUISE_BENCH_TIMEOUT", 900u64)),
        }
    }
}

fn daemonset(name: &str, image: &str, rolling_update_type: &str, max_unavailable: &str) -> DaemonSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image, "imagePullPolicy": "IfNotPresent"}]}
            },
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "rollingUpdateType": rolling_update_type,
                    "maxUnavailable": max_unavailable,
                    "maxSurge": 0
                }
            }
        }
    }))
    .unwrap()
}

/// The counters that reach the node count once the rollout is over.
fn counters(set: &DaemonSet) -> Option<Counters> {
    set.status.as_ref().map(|s| Counters {
        observed_generation: s.observed_generation,
        counters: vec![
            ("desired", s.desired_number_scheduled),
            ("current", s.current_number_scheduled),
            ("updated", s.updated_number_scheduled),
            ("ready", s.number_ready),
            ("available", s.number_available),
        ],
    })
}

#[tokio::main]
async fn main() {
    init_tracing();
    let sizes = Sizes::from_env();
    let n = sizes.nodes as usize;
    println!(
        "Advanced DaemonSet benchmark{}: {} simulated nodes, API server, nodes, CRDs and manager in this process",
        if sizes.quick { " (quick)" } else { "" },
        sizes.nodes
    );
    let cluster = Cluster::start(sizes.nodes, 110).await;
    let sets: Api<DaemonSet> = Api::namespaced(cluster.client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NAMESPACE);
    let manager = InProcessManager::start(cluster.manager_client()).await;
    println!(
        "\nimage rollout of an Advanced DaemonSet on {n} nodes, in place vs Standard (maxUnavailable {}, maxSurge 0)",
        sizes.max_unavailable
    );
    let mut runs = Vec::new();
    for rolling_update_type in ["InPlaceIfPossible", "Standard"] {
        let name = format!("ds-{}", rolling_update_type.to_lowercase());
        let set = Workload {
            api: &sets,
            name: name.clone(),
            build: Box::new(|image: &str| {
                daemonset(&name, image, rolling_update_type, &sizes.max_unavailable)
            }),
            counters,
            template: |set: &mut DaemonSet| &mut set.spec.template,
            desired: n,
        };
        runs.push(timed_rollout(&set, &cluster.counts, &pods, rolling_update_type, sizes.timeout).await);
    }
    print_rollouts(n, &format!("updatedNumberScheduled == numberAvailable == {n}"), &runs[0], &runs[1]);
    manager.stop().await;
    cluster.stop().await;
}
