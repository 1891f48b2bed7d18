//! Benchmark of the CloneSet controller on the embedded control plane: the API server, simulated
//! nodes (kubelet + scheduler) and the Kruise CRDs all run in this process, the manager
//! (controllers and webhook server) in process for the first two figures and as a separate
//! `kruise manager` process for the third, so that its resident memory is its own:
//!
//! 1. an image rollout of one CloneSet, in place (`podUpdatePolicy: InPlaceIfPossible`) against
//!    recreate (`ReCreate`), same nodes, same `maxUnavailable`: time from the template write
//!    until `status.updatedReadyReplicas == replicas` at the new generation, and the API writes
//!    the rollout cost (counted per request by the embedded API server, by `User-Agent`);
//! 2. scaling one CloneSet 0 -> N -> 0: time, pods created and deleted per second, and the
//!    duplicates (pods created beyond N, seen through a pod watch; 0 is expected);
//! 3. the manager's resident memory with S CloneSets of P pods each.
//!
//! Figures are printed, never asserted. Sizes come from the environment (defaults are the
//! issue's figures): `KRUISE_BENCH_ROLLOUT_PODS` (500), `KRUISE_BENCH_MAX_UNAVAILABLE` (20%),
//! `KRUISE_BENCH_SCALE_PODS` (1000), `KRUISE_BENCH_SETS` (100), `KRUISE_BENCH_PODS_PER_SET` (100),
//! `KRUISE_BENCH_NODES` (50), `KRUISE_BENCH_TIMEOUT` (seconds per wait, 900),
//! `KRUISE_BENCH_PHASES` (`rollout,scale,memory`), `KRUISE_BENCH_FEATURE_GATES` (the manager's
//! gates, default those of `kruise up`, so every controller it runs is on), `KRUISE_BIN` (the `kruise` binary for the
//! manager process), `KRUISE_BENCH_FRESH_VARIANTS` (more fresh managers in the memory phase, each
//! with its own environment: see `fresh_manager_variants`). `--quick` (or `KRUISE_BENCH_QUICK=1`) runs small sizes.
//!
//! Run with `cargo bench -p kruise --bench cloneset` (or `-- --quick`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly on unexpected data

mod common;

use std::{
    collections::{HashMap, HashSet},
    path::Path,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use common::{
    Cluster, Counters, InProcessManager, NAMESPACE, Workload, Writes, cpu_seconds, create_namespace, env_or,
    init_tracing, kruise_binary, manager_feature_gates, memory_mib, print_rollouts, quick_requested,
    start_manager_process, start_manager_process_with_env, timed_rollout, wait_for, wait_pods_gone,
};
use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::Pod;
use kruise_controlplane::apiserver::counters::RequestCounts;
use kruise_crds::{apps::v1beta1::CloneSet, common::well_known::CLONESET_INSTANCE_ID};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
    runtime::watcher,
};
use serde_json::json;
use tokio::task::JoinHandle;

/// What to run, and how big.
struct Sizes {
    quick: bool,
    rollout_pods: usize,
    max_unavailable: String,
    scale_pods: usize,
    sets: usize,
    pods_per_set: usize,
    nodes: u32,
    pods_per_node: u32,
    timeout: Duration,
    phases: Vec<String>,
}

impl Sizes {
    fn from_env() -> Self {
        let quick = quick_requested();
        let (rollout, scale, sets, per_set, nodes) =
            if quick { (50, 100, 10, 10, 10) } else { (500, 1000, 100, 100, 50) };
        let rollout_pods = env_or("KRUISE_BENCH_ROLLOUT_PODS", rollout);
        let scale_pods = env_or("KRUISE_BENCH_SCALE_PODS", scale);
        let sets = env_or("KRUISE_BENCH_SETS", sets);
        let pods_per_set = env_or("KRUISE_BENCH_PODS_PER_SET", per_set);
        let nodes: u32 = env_or("KRUISE_BENCH_NODES", nodes);
        let phases = env_or("KRUISE_BENCH_PHASES", "rollout,scale,memory".to_string())
            .split(',')
            .map(|p| p.trim().to_string())
            .collect();
        // Room for the largest phase plus a recreate rollout's replacements, never below a kubelet's 110.
        let most = (rollout_pods + rollout_pods / 2).max(scale_pods).max(sets * pods_per_set);
        let pods_per_node = ((most as u32 * 5 / 4).div_ceil(nodes.max(1))).max(110);
        Self {
            quick,
            rollout_pods,
            max_unavailable: env_or("KRUISE_BENCH_MAX_UNAVAILABLE", "20%".to_string()),
            scale_pods,
            sets,
            pods_per_set,
            nodes,
            pods_per_node,
            timeout: Duration::from_secs(env_or("KRUISE_BENCH_TIMEOUT", 900u64)),
            phases,
        }
    }

    fn runs(&self, phase: &str) -> bool {
        self.phases.iter().any(|p| p == phase)
    }
}

fn cloneset(name: &str, replicas: usize, image: &str, policy: &str, max_unavailable: &str) -> CloneSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image, "imagePullPolicy": "IfNotPresent"}]}
            },
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": policy, "maxUnavailable": max_unavailable}
            }
        }
    }))
    .unwrap()
}

/// True when the CloneSet reconciled its generation and has `replicas` pods, all updated and Ready.
fn settled(set: &CloneSet, replicas: usize) -> bool {
    let n = replicas as i32;
    set.status.as_ref().is_some_and(|s| {
        s.observed_generation == set.metadata.generation.unwrap_or(0)
            && s.replicas == n
            && s.updated_replicas == n
            && s.updated_ready_replicas == n
            && s.ready_replicas == n
    })
}

fn status_line(set: &CloneSet) -> String {
    match &set.status {
        Some(s) => format!(
            "generation {}/{}, replicas {}, ready {}, updated {}, updatedReady {}",
            s.observed_generation,
            set.metadata.generation.unwrap_or(0),
            s.replicas,
            s.ready_replicas,
            s.updated_replicas,
            s.updated_ready_replicas
        ),
        None => "no status yet".into(),
    }
}

async fn wait_settled(
    sets: &Api<CloneSet>,
    name: &str,
    replicas: usize,
    what: &str,
    limit: Duration,
) -> bool {
    wait_for(what, limit, || async move {
        match sets.get(name).await {
            Ok(set) => (settled(&set, replicas), status_line(&set)),
            Err(error) => (false, format!("error: {error}")),
        }
    })
    .await
    .is_some()
}

struct Bench {
    sizes: Sizes,
    counts: RequestCounts,
    sets: Api<CloneSet>,
    pods: Api<Pod>,
}

async fn rollouts(bench: &Bench) {
    let n = bench.sizes.rollout_pods;
    println!(
        "\n1. image rollout of a {n}-pod CloneSet, in place vs recreate (maxUnavailable {}, maxSurge 0, {} nodes)",
        bench.sizes.max_unavailable, bench.sizes.nodes
    );
    let mut runs = Vec::new();
    for policy in ["InPlaceIfPossible", "ReCreate"] {
        let name = format!("rollout-{}", policy.to_lowercase());
        let set = Workload {
            api: &bench.sets,
            name: name.clone(),
            build: Box::new(|image: &str| cloneset(&name, n, image, policy, &bench.sizes.max_unavailable)),
            counters: |set: &CloneSet| {
                set.status.as_ref().map(|s| Counters {
                    observed_generation: s.observed_generation,
                    counters: vec![
                        ("replicas", s.replicas),
                        ("ready", s.ready_replicas),
                        ("updated", s.updated_replicas),
                        ("updatedReady", s.updated_ready_replicas),
                    ],
                })
            },
            template: |set: &mut CloneSet| &mut set.spec.template,
            desired: n,
        };
        runs.push(timed_rollout(&set, &bench.counts, &bench.pods, policy, bench.sizes.timeout).await);
    }
    print_rollouts(n, &format!("updatedReadyReplicas == {n}"), &runs[0], &runs[1]);
}

/// What a pod watch saw of one CloneSet's pods.
#[derive(Default)]
struct PodLog {
    /// First sight of each UID, with the pod's name and instance id.
    created: HashMap<String, (Instant, String, String)>,
    /// When each UID was first seen terminating.
    terminating: HashMap<String, Instant>,
    /// Pods present now, by UID.
    live: HashSet<String>,
    /// Most pods present at once.
    max_live: usize,
    relisting: Option<HashSet<String>>,
}

impl PodLog {
    fn see(&mut self, pod: &Pod) {
        let Some(uid) = pod.uid() else { return };
        let now = Instant::now();
        let id = pod.labels().get(CLONESET_INSTANCE_ID).cloned().unwrap_or_default();
        self.created.entry(uid.clone()).or_insert((now, pod.name_any(), id));
        if pod.metadata.deletion_timestamp.is_some() {
            self.terminating.entry(uid.clone()).or_insert(now);
        }
        if let Some(relisting) = &mut self.relisting {
            relisting.insert(uid.clone());
        }
        self.live.insert(uid);
        self.max_live = self.max_live.max(self.live.len());
    }
}

fn watch_pods(pods: Api<Pod>, app: &str) -> (Arc<Mutex<PodLog>>, JoinHandle<()>) {
    let log = Arc::new(Mutex::new(PodLog::default()));
    let config = watcher::Config::default().labels(&format!("app={app}"));
    let task = {
        let log = log.clone();
        tokio::spawn(async move {
            let mut events = watcher(pods, config).boxed();
            while let Some(event) = events.next().await {
                let mut log = log.lock().unwrap();
                match event {
                    Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) => log.see(&pod),
                    Ok(watcher::Event::Delete(pod)) => {
                        if let Some(uid) = pod.uid() {
                            log.live.remove(&uid);
                        }
                    }
                    Ok(watcher::Event::Init) => log.relisting = Some(HashSet::new()),
                    Ok(watcher::Event::InitDone) => {
                        if let Some(relisted) = log.relisting.take() {
                            log.live = relisted;
                        }
                    }
                    Err(_) => {}
                }
            }
        })
    };
    (log, task)
}

async fn scale(bench: &Bench) {
    let n = bench.sizes.scale_pods;
    let name = "scale";
    println!("\n2. scale one CloneSet 0 -> {n} -> 0 ({} nodes)", bench.sizes.nodes);
    let image = "registry.local/scale:v1";
    bench
        .sets
        .create(
            &PostParams::default(),
            &cloneset(name, 0, image, "InPlaceIfPossible", &bench.sizes.max_unavailable),
        )
        .await
        .unwrap();
    wait_settled(&bench.sets, name, 0, "[scale] create", bench.sizes.timeout).await;
    let (log, watch) = watch_pods(bench.pods.clone(), name);
    tokio::time::sleep(Duration::from_secs(1)).await; // the watch has its initial (empty) list

    let before = bench.counts.snapshot();
    let up_started = Instant::now();
    bench
        .sets
        .patch(name, &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": n}})))
        .await
        .unwrap();
    let up_done = wait_for("[scale] 0 -> up", bench.sizes.timeout, || async {
        let created = log.lock().unwrap().created.len();
        match bench.sets.get(name).await {
            Ok(set) => (settled(&set, n), format!("{created} pods created; {}", status_line(&set))),
            Err(error) => (false, format!("error: {error}")),
        }
    })
    .await
    .map(|_| up_started.elapsed());
    let up_writes = Writes::between(&before, &bench.counts.snapshot());
    tokio::time::sleep(Duration::from_secs(2)).await; // any late duplicate would show now
    let (created, all_created_at, names, ids, max_live) = {
        let log = log.lock().unwrap();
        let mut times: Vec<Instant> = log.created.values().map(|(t, _, _)| *t).collect();
        times.sort();
        let all_created_at = times.get(n.saturating_sub(1)).map(|t| t.duration_since(up_started));
        let names: HashSet<&String> = log.created.values().map(|(_, name, _)| name).collect();
        let ids: HashSet<&String> = log.created.values().map(|(_, _, id)| id).collect();
        (log.created.len(), all_created_at, names.len(), ids.len(), log.max_live)
    };

    let before = bench.counts.snapshot();
    let down_started = Instant::now();
    bench
        .sets
        .patch(name, &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 0}})))
        .await
        .unwrap();
    let down_done = wait_for("[scale] -> 0", bench.sizes.timeout, || async {
        let (live, terminating) = {
            let log = log.lock().unwrap();
            (log.live.len(), log.terminating.len())
        };
        match bench.sets.get(name).await {
            Ok(set) => (
                live == 0 && settled(&set, 0),
                format!("{live} pods left, {terminating} marked for deletion; {}", status_line(&set)),
            ),
            Err(error) => (false, format!("error: {error}")),
        }
    })
    .await
    .map(|_| down_started.elapsed());
    let down_writes = Writes::between(&before, &bench.counts.snapshot());
    let (all_terminating_at, created_while_down) = {
        let log = log.lock().unwrap();
        let mut times: Vec<Instant> =
            log.terminating.values().copied().filter(|t| *t >= down_started).collect();
        times.sort();
        let created_while_down = log.created.values().filter(|(t, _, _)| *t >= down_started).count();
        (times.last().map(|t| t.duration_since(down_started)), created_while_down)
    };
    watch.abort();
    let _ = bench.sets.delete(name, &DeleteParams::background()).await;
    wait_pods_gone(&bench.pods, name, bench.sizes.timeout).await;

    let rate = |d: Duration| n as f64 / d.as_secs_f64();
    println!("\n  scale 0 -> {n}:");
    if let Some(t) = all_created_at {
        println!(
            "    all {n} pods created (pod watch)    {:>8.2} s  ({:.1} pods created/s)",
            t.as_secs_f64(),
            rate(t)
        );
    }
    match up_done {
        Some(t) => println!(
            "    all {n} Ready (status)             {:>8.2} s  ({:.1} pods/s)",
            t.as_secs_f64(),
            rate(t)
        ),
        None => println!("    did not reach {n} Ready pods"),
    }
    println!(
        "    pods created: {created} distinct UIDs, {names} distinct names, {ids} distinct instance ids, at most {max_live} at once"
    );
    println!("    duplicates: {}", created.saturating_sub(n) + created.saturating_sub(names));
    up_writes.print("    ", n);
    println!("  scale {n} -> 0:");
    if let Some(t) = all_terminating_at {
        println!(
            "    all {n} pods deleted (deletionTimestamp set) {:>8.2} s  ({:.1} pods deleted/s)",
            t.as_secs_f64(),
            rate(t)
        );
    }
    match down_done {
        Some(t) => println!(
            "    all {n} pods gone from the API     {:>8.2} s  ({:.1} pods/s, kubelet termination included)",
            t.as_secs_f64(),
            rate(t)
        ),
        None => println!("    did not reach 0 pods"),
    }
    println!("    pods created while scaling down: {created_while_down}");
    down_writes.print("    ", n);
}

async fn memory(bench: &Bench, client: &Client, kubeconfig: &Path, dir: &Path) {
    let (sets_n, per_set) = (bench.sizes.sets, bench.sizes.pods_per_set);
    let total = sets_n * per_set;
    println!(
        "\n3. manager resident memory with {sets_n} CloneSets x {per_set} pods ({total} pods, {} nodes; manager as a `kruise manager` process)",
        bench.sizes.nodes
    );
    let log_path = dir.join("manager.log");
    let Some(manager) = start_manager_process(kubeconfig, &log_path, &manager_feature_gates()).await else {
        return;
    };
    let pid = manager.0.id();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle = memory_mib(pid, "VmRSS:");
    println!("  {} (pid {pid}) ready; idle RSS {idle:.1} MiB", kruise_binary().display());

    let namespace = "memory";
    create_namespace(client, namespace).await;
    let sets: Api<CloneSet> = Api::namespaced(client.clone(), namespace);
    let (manager_cpu, own_cpu) = (cpu_seconds(pid), cpu_seconds(std::process::id()));
    let started = Instant::now();
    stream::iter(0..sets_n)
        .for_each_concurrent(8, |i| {
            let sets = sets.clone();
            let max_unavailable = bench.sizes.max_unavailable.clone();
            async move {
                let mut set = cloneset(
                    &format!("mem-{i}"),
                    per_set,
                    "registry.local/memory:v1",
                    "InPlaceIfPossible",
                    &max_unavailable,
                );
                set.metadata.namespace = Some(namespace.into());
                sets.create(&PostParams::default(), &set).await.unwrap();
            }
        })
        .await;
    let done = wait_for("[memory] all CloneSets Ready", bench.sizes.timeout, || {
        let rss = memory_mib(pid, "VmRSS:");
        let sets = sets.clone();
        async move {
            let list = sets.list(&ListParams::default()).await.map(|l| l.items).unwrap_or_default();
            let pods: i32 = list.iter().filter_map(|s| s.status.as_ref()).map(|s| s.replicas).sum();
            let ready: i32 = list.iter().filter_map(|s| s.status.as_ref()).map(|s| s.ready_replicas).sum();
            let done = list.iter().filter(|s| settled(s, per_set)).count();
            (
                done == sets_n,
                format!(
                    "{done}/{sets_n} CloneSets settled, {pods} pods in status, {ready}/{total} Ready; manager RSS {rss:.1} MiB"
                ),
            )
        }
    })
    .await
    .map(|_| started.elapsed());
    let (manager_cpu, own_cpu) = (cpu_seconds(pid) - manager_cpu, cpu_seconds(std::process::id()) - own_cpu);
    match done {
        Some(t) => println!(
            "  {total} pods Ready in {:.1} s ({:.1} pods/s); CPU meanwhile: manager {manager_cpu:.1} s, this process (API server + nodes) {own_cpu:.1} s",
            t.as_secs_f64(),
            total as f64 / t.as_secs_f64()
        ),
        None => println!("  not every CloneSet settled; manager log: {}", log_path.display()),
    }
    tokio::time::sleep(Duration::from_secs(5)).await; // steady state
    let steady = memory_mib(pid, "VmRSS:");
    let hwm = memory_mib(pid, "VmHWM:");
    let pods_now = pods_of_namespace(client, namespace).await;
    println!(
        "  manager RSS: idle {idle:.1} MiB; after bringing up {pods_now} pods in {sets_n} CloneSets {steady:.1} MiB (peak {hwm:.1} MiB)"
    );
    drop(manager);

    // A fresh manager over the settled cluster: its caches and one reconcile of every CloneSet,
    // without the allocations of the ramp-up.
    let before = bench.counts.snapshot();
    let restarted = Instant::now();
    let Some(manager) =
        start_manager_process(kubeconfig, &dir.join("manager-restarted.log"), &manager_feature_gates()).await
    else {
        return;
    };
    let pid = manager.0.id();
    let ready = restarted.elapsed();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let steady = memory_mib(pid, "VmRSS:");
    let hwm = memory_mib(pid, "VmHWM:");
    // The manager process sends no User-Agent: its requests are the ones counted under "".
    let writes = Writes::between(&before, &bench.counts.snapshot());
    let restart_writes = writes.total(Some(""));
    println!(
        "  manager restarted over the settled cluster: ready in {:.1} s, RSS 10 s later {steady:.1} MiB (peak {hwm:.1} MiB, {:.1} KiB per pod over idle); CPU {:.1} s; writes {restart_writes}{}",
        ready.as_secs_f64(),
        (steady - idle) * 1024.0 / pods_now.max(1) as f64,
        cpu_seconds(pid),
        if restart_writes > 0 { format!(" ({})", writes.detail("")) } else { String::new() }
    );
    drop(manager);
    fresh_manager_variants(kubeconfig, dir).await;
    println!(
        "  this process (API server + simulated nodes + benchmark; the manager of phases 1-2 ran here too): RSS {:.1} MiB, peak {:.1} MiB",
        memory_mib(std::process::id(), "VmRSS:"),
        memory_mib(std::process::id(), "VmHWM:")
    );
}

/// Fresh managers over the same settled cluster, one per variant of
/// `KRUISE_BENCH_FRESH_VARIANTS` (`|`-separated; each a space-separated list of `NAME=value`
/// set in the manager's environment, e.g. `MALLOC_ARENA_MAX=1|RUST_LOG=info`): one ramp-up,
/// several memory samples; a variant that changes nothing (`X=1`) measures the noise.
async fn fresh_manager_variants(kubeconfig: &Path, dir: &Path) {
    let variants = std::env::var("KRUISE_BENCH_FRESH_VARIANTS").unwrap_or_default();
    for variant in variants.split('|').filter(|v| !v.trim().is_empty()) {
        let env: Vec<(String, String)> = variant
            .split_whitespace()
            .filter_map(|pair| pair.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        let started = Instant::now();
        let log = dir.join("manager-variant.log");
        let Some(manager) =
            start_manager_process_with_env(kubeconfig, &log, &manager_feature_gates(), &env).await
        else {
            continue;
        };
        let pid = manager.0.id();
        let ready = started.elapsed();
        tokio::time::sleep(Duration::from_secs(10)).await;
        println!(
            "  fresh manager [{variant}]: ready in {:.1} s, RSS 10 s later {:.1} MiB (anonymous {:.1}, file {:.1}; peak {:.1}), CPU {:.1} s",
            ready.as_secs_f64(),
            memory_mib(pid, "VmRSS:"),
            memory_mib(pid, "RssAnon:"),
            memory_mib(pid, "RssFile:"),
            memory_mib(pid, "VmHWM:"),
            cpu_seconds(pid)
        );
    }
}

async fn pods_of_namespace(client: &Client, namespace: &str) -> usize {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    pods.list(&ListParams::default()).await.map(|l| l.items.len()).unwrap_or(0)
}

#[tokio::main]
async fn main() {
    init_tracing();
    let sizes = Sizes::from_env();
    println!(
        "CloneSet benchmark{}: {} simulated nodes ({} pods each), API server, nodes and CRDs in this process",
        if sizes.quick { " (quick)" } else { "" },
        sizes.nodes,
        sizes.pods_per_node
    );
    let cluster = Cluster::start(sizes.nodes, sizes.pods_per_node).await;
    let bench = Bench {
        counts: cluster.counts.clone(),
        sets: Api::namespaced(cluster.client.clone(), NAMESPACE),
        pods: Api::namespaced(cluster.client.clone(), NAMESPACE),
        sizes,
    };
    if bench.sizes.runs("rollout") || bench.sizes.runs("scale") {
        let manager = InProcessManager::start(cluster.manager_client()).await;
        if bench.sizes.runs("rollout") {
            rollouts(&bench).await;
        }
        if bench.sizes.runs("scale") {
            scale(&bench).await;
        }
        manager.stop().await;
    }
    if bench.sizes.runs("memory") {
        memory(&bench, &cluster.client, &cluster.kubeconfig, cluster.dir.path()).await;
    }
    cluster.stop().await;
}
