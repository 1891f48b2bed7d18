//! Throughput and latency of the embedded API server, printed as figures (no assertions):
//! pod creates per second for 10,000 pods over HTTP (and the ratio to writing the same objects
//! straight into the store in the same process), watch events per second delivered to 10
//! watchers, p50/p99 latency of creates and gets, and resident memory per stored pod.
//!
//! `cargo bench -p kruise-controlplane --bench apiserver` (set `PODS` to change the count).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use futures::StreamExt;
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    storage::{ObjectKey, Store},
};
use serde_json::{Value, json};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn pod(index: usize) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("pod-{index}"), "labels": {"app": "bench", "shard": (index % 10).to_string()}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
    })
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let pods: usize = std::env::var("PODS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async move {
        // Baseline: the same objects written straight into a store, no HTTP, no admission.
        let store = Store::in_memory(100_000);
        let started = Instant::now();
        for index in 0..pods {
            let key = ObjectKey {
                group: String::new(),
                resource: "pods".into(),
                namespace: Some("default".into()),
                name: format!("pod-{index}"),
            };
            store.create(&key, pod(index)).unwrap();
        }
        let baseline = pods as f64 / started.elapsed().as_secs_f64();
        drop(store);

        let rss_before = rss_kib();
        let server =
            ApiServer::start(ApiServerConfig { history: 200_000, ..Default::default() }).await.unwrap();
        let url = server.url.clone();
        let http = reqwest::Client::builder().pool_max_idle_per_host(32).build().unwrap();

        // 10 watchers of the pod collection, counting events.
        let mut watchers = Vec::new();
        let watch_start = Instant::now();
        for _ in 0..10 {
            let response = http
                .get(format!("{url}/api/v1/namespaces/default/pods?watch=true&resourceVersion=1"))
                .send()
                .await
                .unwrap();
            let expected = pods;
            watchers.push(tokio::spawn(async move {
                let mut stream = response.bytes_stream();
                let mut events = 0usize;
                let mut pending = Vec::new();
                while let Some(chunk) = stream.next().await {
                    pending.extend_from_slice(&chunk.unwrap());
                    while let Some(end) = pending.iter().position(|b| *b == b'\n') {
                        pending.drain(..=end);
                        events += 1;
                    }
                    if events >= expected {
                        break;
                    }
                }
                (events, Instant::now())
            }));
        }

        // Creates from 16 concurrent clients.
        let latencies = Arc::new(parking_lot::Mutex::new(Vec::with_capacity(pods)));
        let started = Instant::now();
        let clients = 16;
        let mut tasks = Vec::new();
        for client in 0..clients {
            let http = http.clone();
            let url = url.clone();
            let latencies = latencies.clone();
            tasks.push(tokio::spawn(async move {
                let mut index = client;
                while index < pods {
                    let begin = Instant::now();
                    let response = http
                        .post(format!("{url}/api/v1/namespaces/default/pods"))
                        .json(&pod(index))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(response.status(), 201);
                    let _ = response.bytes().await;
                    latencies.lock().push(begin.elapsed());
                    index += clients;
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        let create_elapsed = started.elapsed();
        let mut create_latencies = latencies.lock().clone();
        create_latencies.sort();

        let mut delivered = 0usize;
        let mut last = watch_start;
        for watcher in watchers {
            let (events, finished) =
                tokio::time::timeout(Duration::from_secs(120), watcher).await.unwrap().unwrap();
            delivered += events;
            last = last.max(finished);
        }
        let watch_rate = delivered as f64 / (last - watch_start).as_secs_f64();

        // GET latency.
        let mut get_latencies = Vec::new();
        for index in (0..pods).step_by((pods / 1000).max(1)) {
            let begin = Instant::now();
            let response =
                http.get(format!("{url}/api/v1/namespaces/default/pods/pod-{index}")).send().await.unwrap();
            let _ = response.bytes().await;
            get_latencies.push(begin.elapsed());
        }
        get_latencies.sort();
        let rss_after = rss_kib();

        let create_rate = pods as f64 / create_elapsed.as_secs_f64();
        println!("embedded API server, {pods} pods, 16 HTTP clients, 2 worker threads");
        println!("  pod creates/s over HTTP:        {create_rate:>10.0}");
        println!(
            "  pod creates/s straight to store: {baseline:>9.0}  (HTTP/baseline ratio {:.3})",
            create_rate / baseline
        );
        println!("  watch events/s to 10 watchers:  {watch_rate:>10.0}  ({delivered} events)");
        println!(
            "  create latency p50 / p99:        {:>7.2} ms / {:.2} ms",
            percentile(&create_latencies, 0.50).as_secs_f64() * 1e3,
            percentile(&create_latencies, 0.99).as_secs_f64() * 1e3
        );
        println!(
            "  get latency p50 / p99:           {:>7.2} ms / {:.2} ms",
            percentile(&get_latencies, 0.50).as_secs_f64() * 1e3,
            percentile(&get_latencies, 0.99).as_secs_f64() * 1e3
        );
        println!(
            "  resident memory per stored pod:  {:>7.2} KiB  (RSS {} -> {} KiB, incl. watch history)",
            (rss_after.saturating_sub(rss_before)) as f64 / pods as f64,
            rss_before,
            rss_after
        );
        server.shutdown().await;
    });
}
