//! Benchmark of image pre-pull: one ImagePullJob across N simulated nodes with parallelism P.
//! The embedded API server, the simulated nodes (kubelet + CRI each), the Kruise manager
//! (controllers and webhook server) and one node daemon per node all run in this process; the
//! daemons run on a runtime of their own whose threads are named `kruise-daemon`, so their CPU
//! time is read per thread from `/proc/self/task/*/stat` (user + system ticks).
//!
//! Printed figures (never asserted):
//! - time from the job's creation to its `completionTime` with every node succeeded;
//! - API writes per node during the job, by client (`User-Agent`: `kruise-daemon` for the
//!   daemons, the manager's for the controllers), counted by the embedded API server;
//! - daemon CPU per node (the daemon threads' CPU seconds during the job, and while idle, divided
//!   by N) and daemon memory per node (the process's resident memory before and after the N
//!   daemons started, divided by N: what N daemons add, not a per-daemon RSS).
//!
//! Sizes from the environment: `KRUISE_BENCH_NODES` (200), `KRUISE_BENCH_PARALLELISM` (50),
//! `KRUISE_BENCH_PULL_MS` (first pull of an image on a node, 300), `KRUISE_BENCH_TIMEOUT`
//! (seconds, 600). Run with `cargo bench -p kruise --bench imagepull`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly on unexpected data

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::core::v1::Namespace, apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kruise_controllers::{
    app::{ControllerOptions, ManagerOptions, run_manager},
    nodeimage::NodeImageOptions,
    webhook::{WebhookConfig, WebhookEndpoint},
};
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig, counters::RequestKey},
    nodes::{Simulation, SimulationConfig, runtime::PullTiming},
};
use kruise_crds::apps::v1beta1::{ImagePullJob, NodeImage};
use kruise_daemon::{DaemonConfig, RunningDaemon, spawn_daemon};
use kube::{
    Api, Client, Config,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

/// CPU seconds (user + system) of this process's threads whose name starts with `prefix`.
fn thread_cpu_seconds(prefix: &str) -> f64 {
    let mut ticks = 0.0;
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.trim().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or_default().split_whitespace().collect();
        let field = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
        ticks += field(11) + field(12);
    }
    ticks / 100.0
}

/// CPU seconds of the whole process.
fn process_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or_default().split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (field(11) + field(12)) / 100.0
}

/// Resident memory of this process in MiB.
fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

async fn install_crds(client: &Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in kruise_crds::crd::all_crds().unwrap() {
        let name = crd.metadata.name.clone().unwrap();
        let mut body = serde_json::to_value(&crd).unwrap();
        body["apiVersion"] = json!("apiextensions.k8s.io/v1");
        body["kind"] = json!("CustomResourceDefinition");
        crds.patch(&name, &PatchParams::apply("bench").force(), &Patch::Apply(&body)).await.unwrap();
    }
    let jobs: Api<ImagePullJob> = Api::all(client.clone());
    while jobs.list(&ListParams::default().limit(1)).await.is_err() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn client_with_agent(url: &str, agent: &'static str) -> Client {
    let mut config = Config::new(url.parse().unwrap());
    config.headers.push((http::header::USER_AGENT, http::HeaderValue::from_static(agent)));
    Client::try_from(config).unwrap()
}

async fn wait_until(what: &str, timeout: Duration, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn writes_by_client(
    before: &std::collections::HashMap<RequestKey, u64>,
    after: &std::collections::HashMap<RequestKey, u64>,
) -> BTreeMap<String, u64> {
    let mut writes = BTreeMap::new();
    for (key, count) in after {
        if key.is_write() {
            let delta = count - before.get(key).copied().unwrap_or(0);
            if delta > 0 {
                *writes
                    .entry(format!(
                        "{} {:?} {}{}",
                        key.client,
                        key.verb,
                        key.resource,
                        key.subresource.as_ref().map(|s| format!("/{s}")).unwrap_or_default()
                    ))
                    .or_insert(0) += delta;
            }
        }
    }
    writes
}

fn main() {
    let nodes = u32::try_from(env_number("KRUISE_BENCH_NODES", 200)).unwrap();
    let parallelism = env_number("KRUISE_BENCH_PARALLELISM", 50);
    let pull = Duration::from_millis(env_number("KRUISE_BENCH_PULL_MS", 300));
    let timeout = Duration::from_secs(env_number("KRUISE_BENCH_TIMEOUT", 600));
    let main_runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().thread_name("bench-main").build().unwrap();
    let daemon_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("kruise-daemon")
        .build()
        .unwrap();
    main_runtime.block_on(async {
        let cri_dir = tempfile::Builder::new().prefix("kbp-").tempdir_in("/tmp").unwrap();
        let server = ApiServer::start(ApiServerConfig::default()).await.unwrap();
        let admin = client_with_agent(&server.url, "bench");
        install_crds(&admin).await;
        let namespaces: Api<Namespace> = Api::all(admin.clone());
        let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": "kruise-system"}})).unwrap();
        let _ = namespaces.create(&PostParams::default(), &namespace).await;

        let mut config =
            SimulationConfig { nodes, cri_dir: Some(cri_dir.path().to_path_buf()), scheduler: None, ..Default::default() };
        config.timing.pull = PullTiming { first_pull: pull, cached_pull: Duration::from_millis(20) };
        let started = Instant::now();
        let simulation = Simulation::start(admin.clone(), &config).await.unwrap();
        eprintln!("{nodes} simulated nodes started in {:.1}s", started.elapsed().as_secs_f64());

        let options = ManagerOptions {
            health_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            webhook: Some(WebhookConfig {
                bind: SocketAddr::from(([127, 0, 0, 1], 0)),
                namespace: "kruise-system".into(),
                endpoint: WebhookEndpoint::Url { host: "127.0.0.1".into(), port: None },
                ..Default::default()
            }),
            leader_election: None,
            controllers: ControllerOptions {
                nodeimage: NodeImageOptions { creation_delay: Duration::ZERO },
                feature_gates: kruise_crds::features::FeatureGates::with(&[(
                    kruise_crds::features::Gate::ImagePullJobGate,
                    true,
                )]),
                ..Default::default()
            },
        };
        let (stop_manager, manager_stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let manager_client = client_with_agent(&server.url, "kruise-manager");
        let manager = tokio::spawn(async move {
            let _ = run_manager(manager_client, options, async move { let _ = manager_stopped.await; }, move |started| {
                let _ = ready_tx.send(started.readiness);
            })
            .await;
        });
        let readiness = ready_rx.await.unwrap();
        wait_until("the manager", timeout, async || readiness.failing().is_empty()).await;
        let node_images: Api<NodeImage> = Api::all(admin.clone());
        wait_until("a NodeImage per node", timeout, async || {
            node_images.list(&ListParams::default()).await.map(|l| l.items.len() as u32 >= nodes).unwrap_or(false)
        })
        .await;

        // N daemons on their own runtime: memory and CPU they add.
        let rss_before = rss_mib();
        let daemon_cpu_start = thread_cpu_seconds("kruise-daemon");
        let daemon_client = client_with_agent(&server.url, "kruise-daemon");
        let names: Vec<String> = simulation.nodes.iter().map(|n| n.name.clone()).collect();
        let sockets = cri_dir.path().to_path_buf();
        let daemons: Vec<RunningDaemon> = daemon_runtime
            .spawn(async move {
                let mut daemons = Vec::new();
                for name in names {
                    let mut config = DaemonConfig::new(&name);
                    config.runtime_endpoint = Some(sockets.join(format!("{name}.sock")));
                    config.health_addr = SocketAddr::from(([127, 0, 0, 1], 0));
                    daemons.push(spawn_daemon(daemon_client.clone(), config).await.unwrap());
                }
                daemons
            })
            .await
            .unwrap();
        wait_until("every daemon ready", timeout, async || daemons.iter().all(|d| d.started.readiness.is_ready())).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let rss_daemons = rss_mib();
        let daemon_cpu_started = thread_cpu_seconds("kruise-daemon");

        let idle = Duration::from_secs(10);
        tokio::time::sleep(idle).await;
        let daemon_cpu_idle = thread_cpu_seconds("kruise-daemon") - daemon_cpu_started;

        // The job.
        let jobs: Api<ImagePullJob> = Api::namespaced(admin.clone(), "default");
        let job: ImagePullJob = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob",
            "metadata": {"name": "bench"},
            "spec": {"image": "registry.example/bench/app:v1", "parallelism": parallelism, "completionPolicy": {"type": "Always"}}
        }))
        .unwrap();
        let requests_before = server.requests().snapshot();
        let daemon_cpu_before = thread_cpu_seconds("kruise-daemon");
        let process_cpu_before = process_cpu_seconds();
        let created = Instant::now();
        jobs.create(&PostParams::default(), &job).await.unwrap();
        let mut last = String::new();
        wait_until("the job to complete", timeout, async || {
            let job = jobs.get("bench").await.unwrap();
            let status = job.status.unwrap_or_default();
            last = format!("{}/{} succeeded, {} failed", status.succeeded, status.desired, status.failed);
            status.completion_time.is_some()
        })
        .await;
        let took = created.elapsed();
        let daemon_cpu_job = thread_cpu_seconds("kruise-daemon") - daemon_cpu_before;
        let process_cpu_job = process_cpu_seconds() - process_cpu_before;
        let rss_after_job = rss_mib();
        tokio::time::sleep(Duration::from_secs(1)).await;
        let writes = writes_by_client(&requests_before, &server.requests().snapshot());
        let by_agent = |agent: &str| -> u64 {
            writes.iter().filter(|(k, _)| k.starts_with(&format!("{agent} "))).map(|(_, v)| v).sum()
        };
        let daemon_writes = by_agent("kruise-daemon");
        let manager_writes = by_agent("kruise-manager");
        let n = f64::from(nodes);

        println!("\nImagePullJob across {nodes} simulated nodes, parallelism {parallelism}, first pull {} ms per node ({} build):", pull.as_millis(), if cfg!(debug_assertions) { "debug" } else { "release" });
        println!("| figure | value |");
        println!("| --- | --- |");
        println!("| time to done (create -> completionTime) | {:.2} s ({last}) |", took.as_secs_f64());
        println!("| API writes per node during the job | {:.2} ({:.2} daemon, {:.2} manager) |", (daemon_writes + manager_writes) as f64 / n, daemon_writes as f64 / n, manager_writes as f64 / n);
        println!("| daemon CPU per node, during the job | {:.1} ms |", daemon_cpu_job * 1000.0 / n);
        println!("| daemon CPU per node, idle | {:.2} ms/s |", daemon_cpu_idle * 1000.0 / n / idle.as_secs_f64());
        println!("| daemon CPU per node, start | {:.1} ms |", (daemon_cpu_started - daemon_cpu_start) * 1000.0 / n);
        println!("| daemon memory per node (RSS added by {nodes} daemons / {nodes}) | {:.2} MiB |", (rss_daemons - rss_before) / n);
        println!("| whole process CPU during the job (API server, nodes, manager, daemons) | {process_cpu_job:.2} s |");
        println!("| process RSS: before daemons / with daemons / after the job | {rss_before:.0} / {rss_daemons:.0} / {rss_after_job:.0} MiB |");
        println!("\nwrites during the job, by client, verb and resource:");
        for (key, count) in &writes {
            println!("  {key}: {count}");
        }

        for daemon in daemons {
            let _ = daemon_runtime.spawn(daemon.stop()).await;
        }
        let _ = stop_manager.send(());
        let _ = tokio::time::timeout(Duration::from_secs(30), manager).await;
        simulation.stop().await;
        server.shutdown().await;
    });
    daemon_runtime.shutdown_timeout(Duration::from_secs(5));
}
