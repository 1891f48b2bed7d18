//! Benchmark of the Advanced StatefulSet controller on the embedded control plane: the API
//! server, simulated nodes (kubelet + scheduler), the Kruise CRDs and the manager (controllers
//! and webhook server) all run in this process.
//!
//! An image rollout of one `Parallel` Advanced StatefulSet, in place
//! (`podUpdatePolicy: InPlaceIfPossible`, with the `InPlaceUpdateReady` readiness gate) against
//! recreate (`ReCreate`), same nodes, same `maxUnavailable`: time from the template write until
//! `status.updatedReadyReplicas == replicas` at the new generation, and the API writes the
//! rollout cost (counted per request by the embedded API server, by `User-Agent`).
//!
//! Figures are printed, never asserted. Sizes come from the environment:
//! `KRUISE_BENCH_STS_PODS` (200), `KRUISE_BENCH_MAX_UNAVAILABLE` (20%), `KRUISE_BENCH_NODES`
//! (20), `KRUISE_BENCH_TIMEOUT` (seconds per wait, 900). `--quick` (or `KRUISE_BENCH_QUICK=1`)
//! runs 30 pods on 5 nodes.
//!
//! Run with `cargo bench -p kruise --bench statefulset` (or `-- --quick`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly on unexpected data

mod common;

use std::time::Duration;

use common::{
    Cluster, Counters, InProcessManager, NAMESPACE, Workload, env_or, init_tracing, print_rollouts,
    quick_requested, timed_rollout,
};
use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1beta1::StatefulSet;
use kube::Api;
use serde_json::json;

/// How big.
struct Sizes {
    quick: bool,
    pods: usize,
    max_unavailable: String,
    nodes: u32,
    pods_per_node: u32,
    timeout: Duration,
}

impl Sizes {
    fn from_env() -> Self {
        let quick = quick_requested();
        let (pods, nodes) = if quick { (30, 5) } else { (200, 20) };
        let pods: usize = env_or("KRUISE_BENCH_STS_PODS", pods);
        let nodes: u32 = env_or("KRUISE_BENCH_NODES", nodes);
        // Room for a recreate rollout's replacements, never below a kubelet's 110.
        let pods_per_node = ((pods as u32 * 3 / 2).div_ceil(nodes.max(1))).max(110);
        Self {
            quick,
            pods,
            max_unavailable: env_or("KRUISE_BENCH_MAX_UNAVAILABLE", "20%".to_string()),
            nodes,
            pods_per_node,
            timeout: Duration::from_secs(env_or("KRUISE_BENCH_TIMEOUT", 900u64)),
        }
    }
}

fn statefulset(name: &str, replicas: usize, image: &str, policy: &str, max_unavailable: &str) -> StatefulSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                    "containers": [{"name": "main", "image": image, "imagePullPolicy": "IfNotPresent"}]
                }
            },
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": policy, "maxUnavailable": max_unavailable}
            }
        }
    }))
    .unwrap()
}

/// The counters that reach `replicas` once the rollout is over.
fn counters(set: &StatefulSet) -> Option<Counters> {
    set.status.as_ref().map(|s| Counters {
        observed_generation: s.observed_generation,
        counters: vec![
            ("replicas", s.replicas),
            ("ready", s.ready_replicas),
            ("updated", s.updated_replicas),
            ("updatedReady", s.updated_ready_replicas),
        ],
    })
}

#[tokio::main]
async fn main() {
    init_tracing();
    let sizes = Sizes::from_env();
    let n = sizes.pods;
    println!(
        "Advanced StatefulSet benchmark{}: {} simulated nodes ({} pods each), API server, nodes, CRDs and manager in this process",
        if sizes.quick { " (quick)" } else { "" },
        sizes.nodes,
        sizes.pods_per_node
    );
    let cluster = Cluster::start(sizes.nodes, sizes.pods_per_node).await;
    let sets: Api<StatefulSet> = Api::namespaced(cluster.client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NAMESPACE);
    let manager = InProcessManager::start(cluster.manager_client()).await;
    println!(
        "\nimage rollout of a {n}-pod Parallel StatefulSet, in place vs recreate (maxUnavailable {}, {} nodes)",
        sizes.max_unavailable, sizes.nodes
    );
    let mut runs = Vec::new();
    for policy in ["InPlaceIfPossible", "ReCreate"] {
        let name = format!("sts-{}", policy.to_lowercase());
        let set = Workload {
            api: &sets,
            name: name.clone(),
            build: Box::new(|image: &str| statefulset(&name, n, image, policy, &sizes.max_unavailable)),
            counters,
            template: |set: &mut StatefulSet| &mut set.spec.template,
            desired: n,
        };
        runs.push(timed_rollout(&set, &cluster.counts, &pods, policy, sizes.timeout).await);
    }
    print_rollouts(n, &format!("updatedReadyReplicas == {n}"), &runs[0], &runs[1]);
    manager.stop().await;
    cluster.stop().await;
}
