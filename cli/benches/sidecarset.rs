//! Benchmark of SidecarSet on the embedded control plane: the API server, simulated nodes
//! (kubelet + scheduler), the Kruise CRDs and the manager (controllers and webhook server) all
//! run in this process.
//!
//! 1. Pod create latency, as a client sees it (one create at a time), over the same number of
//!    pods in three set-ups measured one after the other in this process: no pod webhook (the
//!    manager not started yet, the baseline), the manager's pod webhook with no SidecarSet, and
//!    the pod webhook injecting a SidecarSet (two sidecars, a volume, transferred env). The pods
//!    name a scheduler nobody runs, so nothing else loads the server while they are created.
//! 2. A sidecar image upgrade of a SidecarSet over the pods of one CloneSet, against the
//!    CloneSet's own in-place image rollout of the same number of pods (the baseline), same nodes,
//!    same `maxUnavailable`: time from the write until every pod is updated and ready at the new
//!    generation, and the API writes it cost by client.
//!
//! Figures are printed, never asserted. Sizes come from the environment:
//! `KRUISE_BENCH_LATENCY_PODS` (1000), `KRUISE_BENCH_UPGRADE_PODS` (500), `KRUISE_BENCH_NODES`
//! (50), `KRUISE_BENCH_MAX_UNAVAILABLE` (20%), `KRUISE_BENCH_TIMEOUT` (seconds per wait, 900),
//! `KRUISE_BENCH_PHASES` (`latency,upgrade`). `--quick` (or `KRUISE_BENCH_QUICK=1`) runs small
//! sizes.
//!
//! Run with `cargo bench -p kruise --bench sidecarset` (or `-- --quick`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly on unexpected data

mod common;

use std::time::{Duration, Instant};

use common::{
    AGENT_MANAGER, Cluster, Counters, InProcessManager, NAMESPACE, Rollout, Workload, Writes, env_or,
    init_tracing, is_ready, pods_of, quick_requested, timed_rollout, wait_for, wait_pods_gone,
};
use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1beta1::{CloneSet, SidecarSet};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

/// What to run, and how big.
struct Sizes {
    quick: bool,
    latency_pods: usize,
    upgrade_pods: usize,
    nodes: u32,
    max_unavailable: String,
    timeout: Duration,
    phases: Vec<String>,
}

impl Sizes {
    fn from_env() -> Self {
        let quick = quick_requested();
        let (latency, upgrade, nodes) = if quick { (200, 50, 10) } else { (1000, 500, 50) };
        Self {
            quick,
            latency_pods: env_or("KRUISE_BENCH_LATENCY_PODS", latency),
            upgrade_pods: env_or("KRUISE_BENCH_UPGRADE_PODS", upgrade),
            nodes: env_or("KRUISE_BENCH_NODES", nodes),
            max_unavailable: env_or("KRUISE_BENCH_MAX_UNAVAILABLE", "20%".to_string()),
            timeout: Duration::from_secs(env_or("KRUISE_BENCH_TIMEOUT", 900u64)),
            phases: env_or("KRUISE_BENCH_PHASES", "latency,upgrade".to_string())
                .split(',')
                .map(|phase| phase.trim().to_string())
                .collect(),
        }
    }

    fn runs(&self, phase: &str) -> bool {
        self.phases.iter().any(|p| p == phase)
    }
}

/// Latency percentiles of one set-up.
struct Latency {
    p50: Duration,
    p99: Duration,
    max: Duration,
    injected: usize,
}

fn percentile(sorted: &[Duration], per_cent: usize) -> Duration {
    let index = (sorted.len() * per_cent / 100).min(sorted.len().saturating_sub(1));
    sorted.get(index).copied().unwrap_or_default()
}

/// Creates `n` pods labelled `app=<app>` one at a time and times each create.
async fn create_latency(
    cluster: &Cluster,
    pods: &Api<Pod>,
    setup: &'static str,
    app: &str,
    n: usize,
) -> Latency {
    let before = cluster.counts.snapshot();
    let mut times = Vec::with_capacity(n);
    let mut injected = 0;
    for index in 0..n {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": format!("{app}-{index}"), "labels": {"app": app}},
            "spec": {
                "schedulerName": "nobody",
                "containers": [{"name": "main", "image": "registry.local/app:v1", "env": [{"name": "REGION", "value": "eu"}]}],
            },
        }))
        .unwrap();
        let started = Instant::now();
        let created = pods.create(&PostParams::default(), &pod).await.unwrap();
        times.push(started.elapsed());
        injected += usize::from(created.spec.as_ref().is_some_and(|spec| spec.containers.len() > 1));
    }
    times.sort();
    let latency = Latency {
        p50: percentile(&times, 50),
        p99: percentile(&times, 99),
        max: times.last().copied().unwrap_or_default(),
        injected,
    };
    println!(
        "  {setup:<34} p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  ({injected}/{n} injected)",
        ms(latency.p50),
        ms(latency.p99),
        ms(latency.max)
    );
    let writes = Writes::between(&before, &cluster.counts.snapshot());
    if writes.total(Some(AGENT_MANAGER)) > 0 {
        println!("    the manager meanwhile: {}", writes.detail(AGENT_MANAGER));
    }
    let _ = pods
        .delete_collection(&DeleteParams::default(), &ListParams::default().labels(&format!("app={app}")))
        .await;
    latency
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn sidecarset(name: &str, app: &str, image: &str, max_unavailable: &str) -> SidecarSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": app}},
            "containers": [
                {"name": "log-agent", "image": image, "transferEnv": [{"sourceContainerName": "main", "envName": "REGION"}],
                 "volumeMounts": [{"name": "logs", "mountPath": "/var/log/app"}]},
                {"name": "proxy", "image": "registry.local/proxy:v1", "podInjectPolicy": "AfterAppContainer"},
            ],
            "volumes": [{"name": "logs", "emptyDir": {}}],
            "updateStrategy": {"maxUnavailable": max_unavailable},
        },
    }))
    .unwrap()
}

fn cloneset(name: &str, replicas: usize, image: &str, max_unavailable: &str) -> CloneSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image, "imagePullPolicy": "IfNotPresent",
                    "env": [{"name": "REGION", "value": "eu"}]}]},
            },
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": max_unavailable}},
        },
    }))
    .unwrap()
}

fn cloneset_counters(set: &CloneSet) -> Option<Counters> {
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

/// Whether the SidecarSet has every one of `n` pods updated and ready at its generation, and
/// its status as one line.
async fn sidecarset_converged(sets: &Api<SidecarSet>, name: &str, n: usize) -> (bool, String) {
    let Ok(set) = sets.get(name).await else { return (false, "not readable".into()) };
    let status = set.status.clone().unwrap_or_default();
    let n = i32::try_from(n).unwrap_or(i32::MAX);
    let done = status.observed_generation == set.metadata.generation.unwrap_or_default()
        && [status.matched_pods, status.updated_pods, status.ready_pods, status.updated_ready_pods]
            .iter()
            .all(|count| *count == n);
    let line = format!(
        "matched {}, updated {}, ready {}, updatedReady {}",
        status.matched_pods, status.updated_pods, status.ready_pods, status.updated_ready_pods
    );
    (done, line)
}

/// The sidecar upgrade: a CloneSet of `n` pods gets the SidecarSet's sidecars at creation, then
/// the sidecar image changes and the time until every pod runs it ready is taken.
async fn sidecar_upgrade(cluster: &Cluster, sizes: &Sizes) -> Rollout {
    let policy = "sidecar upgrade";
    let n = sizes.upgrade_pods;
    let app = "meshed";
    let sets: Api<SidecarSet> = Api::all(cluster.client.clone());
    let clonesets: Api<CloneSet> = Api::namespaced(cluster.client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NAMESPACE);
    let (v1, v2) = ("registry.local/log-agent:v1", "registry.local/log-agent:v2");
    sets.create(&PostParams::default(), &sidecarset("mesh", app, v1, &sizes.max_unavailable)).await.unwrap();
    println!("  [{policy}] creating {n} pods with the sidecars at {v1}");
    let created = Instant::now();
    clonesets
        .create(&PostParams::default(), &cloneset(app, n, "registry.local/meshed:v1", &sizes.max_unavailable))
        .await
        .unwrap();
    if wait_for(&format!("[{policy}] create"), sizes.timeout, || sidecarset_converged(&sets, "mesh", n))
        .await
        .is_none()
    {
        return Rollout::failed(policy);
    }
    println!("  [{policy}] {n} pods with sidecars Ready in {:.2} s", created.elapsed().as_secs_f64());
    let uids: std::collections::HashSet<String> =
        pods_of(&pods, app).await.iter().filter_map(|p| p.uid()).collect();
    tokio::time::sleep(Duration::from_secs(2)).await; // trailing status writes and events settle

    let before = cluster.counts.snapshot();
    let started = Instant::now();
    let patch: Value = json!({"spec": {"containers": [
        {"name": "log-agent", "image": v2, "transferEnv": [{"sourceContainerName": "main", "envName": "REGION"}],
         "volumeMounts": [{"name": "logs", "mountPath": "/var/log/app"}]},
        {"name": "proxy", "image": "registry.local/proxy:v1", "podInjectPolicy": "AfterAppContainer"},
    ]}});
    sets.patch("mesh", &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    let done =
        wait_for(&format!("[{policy}] upgrade"), sizes.timeout, || sidecarset_converged(&sets, "mesh", n))
            .await;
    let time = done.map(|_| started.elapsed());
    let writes = Writes::between(&before, &cluster.counts.snapshot());

    let all = pods_of(&pods, app).await;
    let sidecar_image = |pod: &Pod| {
        pod.spec
            .as_ref()
            .and_then(|s| s.containers.iter().find(|c| c.name == "log-agent"))
            .and_then(|c| c.image.clone())
    };
    let at_v2 = all.iter().filter(|p| is_ready(p) && sidecar_image(p).as_deref() == Some(v2)).count();
    let kept = all.iter().filter(|p| p.uid().is_some_and(|u| uids.contains(&u))).count();
    match time {
        Some(time) => println!(
            "  [{policy}] sidecar to {v2}: {:.2} s; check: {at_v2}/{n} pods Ready with it, {kept} kept their UID",
            time.as_secs_f64()
        ),
        None => println!("  [{policy}] sidecar to {v2} did not finish: {at_v2}/{n} pods Ready with it"),
    }
    let _ = clonesets.delete(app, &DeleteParams::background()).await;
    wait_pods_gone(&pods, app, sizes.timeout).await;
    let _ = sets.delete("mesh", &DeleteParams::default()).await;
    Rollout { policy, time, writes }
}

#[tokio::main]
async fn main() {
    init_tracing();
    let sizes = Sizes::from_env();
    println!(
        "SidecarSet benchmark{}: {} simulated nodes, API server, nodes, CRDs and manager in this process",
        if sizes.quick { " (quick)" } else { "" },
        sizes.nodes
    );
    let per_node = (sizes.upgrade_pods as u32).div_ceil(sizes.nodes.max(1)).max(110);
    let cluster = Cluster::start(sizes.nodes, per_node).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NAMESPACE);
    let mut latencies = Vec::new();
    if sizes.runs("latency") {
        println!("\npod create latency, {} pods created one at a time per set-up:", sizes.latency_pods);
        latencies.push(
            create_latency(&cluster, &pods, "no pod webhook (baseline)", "bare", sizes.latency_pods).await,
        );
    }
    let manager = InProcessManager::start(cluster.manager_client()).await;
    if sizes.runs("latency") {
        latencies.push(
            create_latency(&cluster, &pods, "pod webhook, no SidecarSet", "plain", sizes.latency_pods).await,
        );
        let sets: Api<SidecarSet> = Api::all(cluster.client.clone());
        sets.create(
            &PostParams::default(),
            &sidecarset("latency", "injected", "registry.local/log-agent:v1", "100%"),
        )
        .await
        .unwrap();
        // The webhook's SidecarSet cache sees it within moments; wait until a pod gets it.
        let probe_pods = pods.clone();
        wait_for("the SidecarSet reaches the webhook", Duration::from_secs(60), || {
            let probe_pods = probe_pods.clone();
            async move {
                let pod: Pod = serde_json::from_value(json!({
                    "metadata": {"generateName": "probe-", "labels": {"app": "injected"}},
                    "spec": {"schedulerName": "nobody", "containers": [{"name": "main", "image": "registry.local/app:v1"}]},
                }))
                .unwrap();
                let created = probe_pods.create(&PostParams::default(), &pod).await.unwrap();
                let injected = created.spec.is_some_and(|s| s.containers.len() > 1);
                (injected, "not injected yet".to_string())
            }
        })
        .await;
        let _ = pods
            .delete_collection(&DeleteParams::default(), &ListParams::default().labels("app=injected"))
            .await;
        latencies.push(
            create_latency(
                &cluster,
                &pods,
                "pod webhook injecting a SidecarSet",
                "injected",
                sizes.latency_pods,
            )
            .await,
        );
        let _ = sets.delete("latency", &DeleteParams::default()).await;
        if let [baseline, webhook, injecting] = latencies.as_slice() {
            let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(f64::EPSILON);
            println!(
                "  added by the webhook: p50 +{:.2} ms ({:.2}x), p99 +{:.2} ms ({:.2}x); by injection on top: p50 +{:.2} ms, p99 +{:.2} ms",
                ms(webhook.p50.saturating_sub(baseline.p50)),
                ratio(webhook.p50, baseline.p50),
                ms(webhook.p99.saturating_sub(baseline.p99)),
                ratio(webhook.p99, baseline.p99),
                ms(injecting.p50.saturating_sub(webhook.p50)),
                ms(injecting.p99.saturating_sub(webhook.p99)),
            );
            println!(
                "  injecting / no webhook: p50 {:.2}x, p99 {:.2}x ({} of {} pods injected)",
                ratio(injecting.p50, baseline.p50),
                ratio(injecting.p99, baseline.p99),
                injecting.injected,
                sizes.latency_pods
            );
        }
    }
    if sizes.runs("upgrade") {
        let n = sizes.upgrade_pods;
        println!(
            "\nsidecar image upgrade of {n} pods vs the CloneSet's in-place image rollout of {n} pods (maxUnavailable {})",
            sizes.max_unavailable
        );
        let clonesets: Api<CloneSet> = Api::namespaced(cluster.client.clone(), NAMESPACE);
        let baseline = Workload {
            api: &clonesets,
            name: "plain".to_string(),
            build: Box::new(|image: &str| cloneset("plain", n, image, &sizes.max_unavailable)),
            counters: cloneset_counters,
            template: |set: &mut CloneSet| &mut set.spec.template,
            desired: n,
        };
        let in_place =
            timed_rollout(&baseline, &cluster.counts, &pods, "CloneSet in place", sizes.timeout).await;
        let sidecar = sidecar_upgrade(&cluster, &sizes).await;
        for run in [&in_place, &sidecar] {
            match run.time {
                Some(time) => println!(
                    "    {:<18} {:>8.2} s  ({:.1} pods/s), manager writes {} ({:.2}/pod), all writes {}",
                    run.policy,
                    time.as_secs_f64(),
                    n as f64 / time.as_secs_f64(),
                    run.writes.total(Some(AGENT_MANAGER)),
                    run.writes.total(Some(AGENT_MANAGER)) as f64 / n as f64,
                    run.writes.total(None)
                ),
                None => println!("    {:<18} did not finish", run.policy),
            }
            run.writes.print("      ", n);
        }
        if let (Some(a), Some(b)) = (in_place.time, sidecar.time) {
            println!("  sidecar upgrade / CloneSet in place: time {:.2}x", b.as_secs_f64() / a.as_secs_f64());
        }
    }
    manager.stop().await;
    cluster.stop().await;
}
