//! Benchmark of the REST service API over the embedded control plane and the Kruise manager in
//! process (no nodes: rollouts are recorded and applied to their CloneSets, and the controller
//! names each new revision, which is what the API's latency depends on; `KRUISE_BENCH_MANAGER=0`
//! leaves the manager out, so that every POST waits out the revision wait).
//! Concurrent clients on loopback, one CloneSet each (rollouts of one workload serialize on its
//! resourceVersion, which is not what this measures).
//!
//! Printed figures (never asserted):
//! - POST rollout (audit record written before the workload is patched, then finished): p50,
//!   p99 and requests per second, with the SQLite store and with PostgreSQL;
//! - GET rollout status (store read plus the live CloneSet): p50, p99 and requests per second,
//!   with each store;
//! - audit inserts per second straight into the store, from the same number of concurrent
//!   writers, with SQLite and with PostgreSQL (started by `kruise_integration::postgres`;
//!   skipped with a message when no PostgreSQL binaries are found).
//!
//! Sizes from the environment: `KRUISE_BENCH_CLIENTS` (100), `KRUISE_BENCH_POSTS` (posts per
//! client, 5), `KRUISE_BENCH_GETS` (gets per client, 20), `KRUISE_BENCH_INSERTS` (audit inserts
//! per writer, 20). Run with `cargo bench -p kruise-api --bench api`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly on unexpected data

use std::time::{Duration, Instant};

use kruise_api::{
    ApiOptions, ApiServer, Store, TokenRegistry,
    auth::{Principal, Scope},
    store::{NewAuditRecord, Outcome},
};
use kruise_crds::apps::v1beta1::CloneSet;
use kruise_integration::{
    Cluster,
    manager::{KruiseManager, ManagerSpec},
    postgres::Postgres,
};
use kube::{
    Api,
    api::{ListParams, PostParams},
};
use serde_json::json;

const TOKEN: &str = "bench-token-0123456789";

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn report(what: &str, mut latencies: Vec<Duration>, errors: usize, elapsed: Duration) {
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{what:<34} n={:<5} p50={:>7.2} ms  p99={:>7.2} ms  max={:>7.2} ms  {:>8.0} req/s  errors={errors}",
        latencies.len(),
        ms(percentile(&latencies, 50.0)),
        ms(percentile(&latencies, 99.0)),
        ms(latencies.last().copied().unwrap_or_default()),
        latencies.len() as f64 / elapsed.as_secs_f64()
    );
}

async fn audit_inserts(label: &str, store: Store, writers: usize, per_writer: usize) {
    let started = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|writer| {
            let store = store.clone();
            tokio::spawn(async move {
                for n in 0..per_writer {
                    let record = NewAuditRecord {
                        id: uuid::Uuid::new_v4().to_string(),
                        time: chrono::Utc::now(),
                        actor: "bench".into(),
                        action: "rollout.create".into(),
                        namespace: Some("default".into()),
                        target: format!("CloneSet/bench-{writer}"),
                        rollout_id: None,
                        task_id: None,
                        request: json!({"images": {"web": format!("nginx:1.{n}")}}),
                        outcome: Outcome::Accepted,
                        http_status: 202,
                        grpc_status: None,
                        correlation_id: uuid::Uuid::new_v4().to_string(),
                        message: None,
                    };
                    store.insert_audit(&record).await.expect("inserting an audit record");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = started.elapsed();
    let total = writers * per_writer;
    println!(
        "audit inserts, {label:<10} {total} records from {writers} writers in {:.2} s: {:.0} inserts/s",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
}

/// POST rollout (each client rolls its CloneSet `posts` times, one request after the other, to
/// `IMAGE_PREFIX:1.n`) and then GET rollout status (each client reads its last rollout `gets`
/// times), through an API server on `store`.
async fn rollout_phases(
    label: &str,
    client: kube::Client,
    store: Store,
    clients: usize,
    posts: usize,
    gets: usize,
    image_prefix: &str,
) {
    let tokens = TokenRegistry::default()
        .with_token(TOKEN, Principal { name: "bench".into(), namespaces: Scope::All, actions: Scope::All });
    let options = ApiOptions {
        rest_addr: "127.0.0.1:0".parse().unwrap(),
        grpc_addr: None,
        watcher: false,
        ..Default::default()
    };
    let api = ApiServer::start(client.clone(), store, tokens, options).await.expect("starting the API");
    let base = api.rest_url();
    let http = reqwest::Client::builder().pool_max_idle_per_host(clients).build().unwrap();

    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|i| {
            let (http, base, prefix) = (http.clone(), base.clone(), image_prefix.to_string());
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut errors = 0;
                let mut last_id = None;
                for n in 0..posts {
                    let body = json!({
                        "workload": {"kind": "CloneSet", "name": format!("bench-{i}")},
                        "images": {"web": format!("{prefix}:1.{}", n + 1)}
                    });
                    let sent = Instant::now();
                    let response = http
                        .post(format!("{base}/v1/namespaces/default/rollouts"))
                        .bearer_auth(TOKEN)
                        .json(&body)
                        .send()
                        .await
                        .unwrap();
                    let status = response.status();
                    let value: serde_json::Value = response.json().await.unwrap_or_default();
                    latencies.push(sent.elapsed());
                    if status.as_u16() == 202 {
                        last_id = value["id"].as_str().map(str::to_string);
                    } else {
                        errors += 1;
                        if errors == 1 {
                            eprintln!("POST rollout answered {status}: {value}");
                        }
                    }
                }
                (latencies, errors, last_id)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut ids = Vec::new();
    for task in tasks {
        let (l, e, id) = task.await.unwrap();
        latencies.extend(l);
        errors += e;
        ids.extend(id);
    }
    report(&format!("POST rollout ({label} audit)"), latencies, errors, started.elapsed());

    // GET rollout status: each client reads its last rollout `gets` times.
    let started = Instant::now();
    let tasks: Vec<_> = ids
        .iter()
        .cloned()
        .map(|id| {
            let (http, base) = (http.clone(), base.clone());
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut errors = 0;
                for _ in 0..gets {
                    let sent = Instant::now();
                    let response = http
                        .get(format!("{base}/v1/namespaces/default/rollouts/{id}"))
                        .bearer_auth(TOKEN)
                        .send()
                        .await
                        .unwrap();
                    let ok = response.status().is_success();
                    let _ = response.bytes().await;
                    latencies.push(sent.elapsed());
                    if !ok {
                        errors += 1;
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (l, e) = task.await.unwrap();
        latencies.extend(l);
        errors += e;
    }
    report(&format!("GET rollout status ({label})"), latencies, errors, started.elapsed());
    api.shutdown().await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(run());
}

async fn run() {
    let clients = env_number("KRUISE_BENCH_CLIENTS", 100);
    let posts = env_number("KRUISE_BENCH_POSTS", 5);
    let gets = env_number("KRUISE_BENCH_GETS", 20);
    let inserts = env_number("KRUISE_BENCH_INSERTS", 20);
    println!("service API benchmark: {clients} concurrent clients on loopback, embedded control plane");

    let cluster = Cluster::embedded().await.expect("starting the embedded API server");
    cluster.install_crds().await.expect("installing the CRDs");
    let client = cluster.client();
    let sets: Api<CloneSet> = Api::namespaced(client.clone(), "default");
    let deadline = Instant::now() + Duration::from_secs(30);
    while sets.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(Instant::now() < deadline, "CloneSets are not served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for i in 0..clients {
        let set: CloneSet = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "CloneSet",
            "metadata": {"name": format!("bench-{i}"), "namespace": "default"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": format!("bench-{i}")}},
                "template": {
                    "metadata": {"labels": {"app": format!("bench-{i}")}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.0"}]}
                }
            }
        }))
        .unwrap();
        sets.create(&PostParams::default(), &set).await.expect("creating a CloneSet");
    }

    // The CloneSet controller names each new revision, which a POST waits for (up to
    // `revision_wait`, 2 s); without it every POST would wait out that time and the figure would
    // be the timeout, not the API.
    let manager = if std::env::var("KRUISE_BENCH_MANAGER").as_deref() == Ok("0") {
        println!("no manager: every POST waits the full revision wait");
        None
    } else {
        Some(KruiseManager::start(&cluster, ManagerSpec::in_process()).await.expect("starting the manager"))
    };

    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::connect(&format!("sqlite:{}", dir.path().join("api.db").display()))
        .await
        .expect("opening the SQLite store");
    rollout_phases("SQLite", client.clone(), sqlite, clients, posts, gets, "nginx").await;
    match Postgres::start() {
        Ok(postgres) => {
            let store = Store::connect(&postgres.url()).await.expect("connecting to PostgreSQL");
            rollout_phases("PostgreSQL", client.clone(), store, clients, posts, gets, "httpd").await;
            drop(postgres);
        }
        Err(error) => println!("POST/GET with PostgreSQL skipped: {error}"),
    }
    if let Some(manager) = manager {
        manager.stop().await;
    }
    cluster.shutdown().await;

    // Audit inserts straight into the store.
    let sqlite = Store::connect(&format!("sqlite:{}", dir.path().join("inserts.db").display()))
        .await
        .expect("opening the SQLite store");
    audit_inserts("SQLite", sqlite.clone(), clients, inserts).await;
    sqlite.close().await;
    match Postgres::start() {
        Ok(postgres) => {
            let store = Store::connect(&postgres.url()).await.expect("connecting to PostgreSQL");
            audit_inserts("PostgreSQL", store.clone(), clients, inserts).await;
            store.close().await;
            drop(postgres);
        }
        Err(error) => println!("audit inserts, PostgreSQL: skipped ({error})"),
    }
}
