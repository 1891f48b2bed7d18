//! Benchmark of the simulated nodes: 500 pods on 50 nodes brought to Ready, then 500 in-place
//! container restarts (image patches), with the simulator (`kruise nodes`, a separate process
//! with the scheduler) measured for CPU seconds and peak memory. The baseline, run against the
//! same API server, is the work a zero-cost kubelet would need: create each pod, bind it and write
//! a Ready status directly. Run with `cargo bench -p kruise --bench nodes`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly on unexpected data

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::{
    Api, Client, Config,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

const PODS: usize = 500;
const NODES: u32 = 50;
const CONCURRENCY: usize = 32;

struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_apiserver(kubeconfig: &std::path::Path) -> (Process, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["apiserver", "--bind", "127.0.0.1:0", "--kubeconfig"])
        .arg(kubeconfig)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("the server prints its address").unwrap();
        if let Some(url) = line.strip_prefix("API server listening on ") {
            break url.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (Process(child), url)
}

/// (user + system CPU seconds, peak resident memory in MiB) of a process, from /proc.
fn usage(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or_default().split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    let cpu = (ticks(11) + ticks(12)) / 100.0;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let peak_kib = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    (cpu, peak_kib / 1024.0)
}

fn pod(name: &str, image: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "spec": {"containers": [{"name": "app", "image": image, "imagePullPolicy": "IfNotPresent"}]}
    }))
    .unwrap()
}

async fn count_ready(pods: &Api<Pod>, image: &str) -> usize {
    let list = pods.list(&ListParams::default().labels("app=bench")).await.unwrap();
    list.items
        .iter()
        .filter(|p| {
            let statuses = p.status.as_ref().and_then(|s| s.container_statuses.clone()).unwrap_or_default();
            statuses.iter().any(|c| c.image == image && c.ready)
        })
        .count()
}

async fn wait_all(pods: &Api<Pod>, image: &str) -> Duration {
    let started = Instant::now();
    while count_ready(pods, image).await < PODS {
        assert!(started.elapsed() < Duration::from_secs(300), "pods never all became ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    started.elapsed()
}

/// The baseline: create, bind and mark Ready 500 pods straight through the API.
async fn baseline(client: &Client) -> Duration {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "baseline");
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let ns = serde_json::from_value(json!({"metadata": {"name": "baseline"}})).unwrap();
    namespaces.create(&PostParams::default(), &ns).await.unwrap();
    let started = Instant::now();
    stream::iter(0..PODS)
        .for_each_concurrent(CONCURRENCY, |i| {
            let pods = pods.clone();
            async move {
                let name = format!("base-{i}");
                let mut spec = pod(&name, "nginx:1.25");
                spec.spec.as_mut().unwrap().node_name = Some(format!("sim-node-{}", i % NODES as usize + 1));
                pods.create(&PostParams::default(), &spec).await.unwrap();
                let status = json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                    "containerStatuses": [{"name": "app", "image": "nginx:1.25", "imageID": "x", "ready": true, "restartCount": 0}]}});
                pods.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status)).await.unwrap();
            }
        })
        .await;
    started.elapsed()
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let (_server, url) = start_apiserver(&kubeconfig);
    let client = Client::try_from(Config::new(url.parse().unwrap())).unwrap();

    let nodes_process = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["nodes", "--scheduler", "--count", &NODES.to_string(), "--kubeconfig"])
        .arg(&kubeconfig)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = nodes_process.id();
    let _nodes = Process(nodes_process);
    let nodes: Api<Node> = Api::all(client.clone());
    let registered = Instant::now();
    while nodes.list(&ListParams::default()).await.unwrap().items.len() < NODES as usize {
        assert!(registered.elapsed() < Duration::from_secs(60), "nodes never registered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (idle_cpu, _) = usage(pid);

    let base = baseline(&client).await;

    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let started = Instant::now();
    stream::iter(0..PODS)
        .for_each_concurrent(CONCURRENCY, |i| {
            let pods = pods.clone();
            async move {
                pods.create(&PostParams::default(), &pod(&format!("bench-{i}"), "nginx:1.25")).await.unwrap();
            }
        })
        .await;
    while count_ready(&pods, "nginx:1.25").await < PODS {
        assert!(started.elapsed() < Duration::from_secs(300), "pods never all became ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let to_ready = started.elapsed();
    let (ready_cpu, _) = usage(pid);

    let restart_started = Instant::now();
    stream::iter(0..PODS)
        .for_each_concurrent(CONCURRENCY, |i| {
            let pods = pods.clone();
            async move {
                let patch = json!({"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}});
                pods.patch(&format!("bench-{i}"), &PatchParams::default(), &Patch::Strategic(&patch))
                    .await
                    .unwrap();
            }
        })
        .await;
    let restarts = wait_all(&pods, "nginx:1.26").await.max(restart_started.elapsed());
    let (total_cpu, peak_mib) = usage(pid);

    let rate = PODS as f64 / to_ready.as_secs_f64();
    let base_rate = PODS as f64 / base.as_secs_f64();
    println!(
        "simulated nodes: {PODS} pods on {NODES} nodes (simulator in its own process, with the scheduler)"
    );
    println!("  pods to Ready:            {:>8.2} s  ({rate:.1} pods/s)", to_ready.as_secs_f64());
    println!(
        "  baseline (API only):      {:>8.2} s  ({base_rate:.1} pods/s; simulator reaches {:.1}% of it)",
        base.as_secs_f64(),
        100.0 * rate / base_rate
    );
    println!(
        "  {PODS} in-place restarts:    {:>8.2} s  ({:.1} restarts/s)",
        restarts.as_secs_f64(),
        PODS as f64 / restarts.as_secs_f64()
    );
    println!(
        "  simulator CPU:            {:>8.2} s  (idle {idle_cpu:.2} s, to Ready {:.2} s, restarts {:.2} s)",
        total_cpu,
        ready_cpu - idle_cpu,
        total_cpu - ready_cpu
    );
    println!("  simulator peak memory:    {peak_mib:>8.1} MiB");
}
