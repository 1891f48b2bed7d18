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
//! `KRUISE_BENCH_PHASES` (`rollout,scale,memory`), `KRUISE_BIN` (the `kruise` binary for the
//! manager process). `--quick` (or `KRUISE_BENCH_QUICK=1`) runs small sizes.
//!
//! Run with `cargo bench -p kruise --bench cloneset` (or `-- --quick`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly on unexpected data

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    future::Future,
    net::{SocketAddr, TcpListener},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures::{StreamExt, stream};
use k8s_openapi::{
    api::core::v1::{Namespace, Node, Pod},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kruise_controllers::{
    app::{ManagerOptions, run_manager},
    webhook::{WebhookConfig, WebhookEndpoint},
};
use kruise_controlplane::{
    apiserver::{
        ApiServer, ApiServerConfig,
        counters::{RequestCounts, RequestKey},
        request::Verb,
    },
    nodes::{NodeCapacity, Simulation, SimulationConfig},
};
use kruise_crds::{apps::v1beta1::CloneSet, common::well_known::CLONESET_INSTANCE_ID};
use kube::{
    Api, Client, Config, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
    runtime::watcher,
};
use serde_json::json;
use tokio::{sync::oneshot, task::JoinHandle};

/// The namespace of the benchmark's CloneSets.
const NAMESPACE: &str = "bench";
/// The manager's namespace (Lease, webhook Secret).
const MANAGER_NAMESPACE: &str = "kruise-system";
/// `User-Agent`s of the clients, so the API server's counters tell their writes apart.
const AGENT_MANAGER: &str = "kruise-manager";
const AGENT_NODES: &str = "kruise-nodes";
const AGENT_BENCH: &str = "kruise-bench";
/// How often a wait prints where it stands.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

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

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(value) => value.trim().parse().unwrap_or_else(|_| panic!("{name}={value} is not a valid value")),
        Err(_) => default,
    }
}

impl Sizes {
    fn from_env() -> Self {
        let quick = std::env::args().any(|a| a == "--quick") || env_or("KRUISE_BENCH_QUICK", 0u8) == 1;
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

/// A kube client that names itself with `agent`.
fn client(url: &str, agent: &'static str) -> Client {
    let mut config = Config::new(url.parse().unwrap());
    config.headers.push((http::header::USER_AGENT, http::HeaderValue::from_static(agent)));
    Client::try_from(config).unwrap()
}

/// Waits until `probe` says done, printing its state every few seconds; `None` when it gave up
/// after `limit` (the last state is printed).
async fn wait_for<F, Fut>(what: &str, limit: Duration, mut probe: F) -> Option<Duration>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = (bool, String)>,
{
    let started = Instant::now();
    let mut printed = started;
    loop {
        let (done, state) = probe().await;
        if done {
            return Some(started.elapsed());
        }
        if started.elapsed() > limit {
            println!(
                "    {what}: gave up after {:.0} s; last state: {state}",
                started.elapsed().as_secs_f64()
            );
            return None;
        }
        if printed.elapsed() >= PROGRESS_EVERY {
            println!("    {what}: {:>5.1} s, {state}", started.elapsed().as_secs_f64());
            printed = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn create_namespace(client: &Client, name: &str) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    match namespaces.create(&PostParams::default(), &namespace).await {
        Ok(_) => {}
        Err(kube::Error::Api(error)) if error.code == 409 => {}
        Err(error) => panic!("creating namespace {name}: {error}"),
    }
}

/// Server-side apply of every Kruise CRD (as `kruise up` does), then waits until all are
/// Established.
async fn install_crds(client: &Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply("kruise").force();
    let mut names = Vec::new();
    for crd in kruise_crds::crd::all_crds().unwrap() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let mut body = serde_json::to_value(&crd).unwrap();
        body["apiVersion"] = json!("apiextensions.k8s.io/v1");
        body["kind"] = json!("CustomResourceDefinition");
        crds.patch(&name, &params, &Patch::Apply(&body)).await.unwrap();
        names.push(name);
    }
    let established = wait_for("CRDs Established", Duration::from_secs(60), || {
        let crds = crds.clone();
        let names = names.clone();
        async move {
            let list = crds.list(&ListParams::default()).await.map(|l| l.items).unwrap_or_default();
            let ready = list
                .iter()
                .filter(|crd| names.contains(&crd.name_any()))
                .filter(|crd| {
                    crd.status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| c.iter().any(|c| c.type_ == "Established" && c.status == "True"))
                })
                .count();
            (ready == names.len(), format!("{ready}/{} Established", names.len()))
        }
    })
    .await;
    established.expect("the CRDs never became Established");
}

async fn wait_nodes_ready(client: &Client, count: u32) {
    let nodes: Api<Node> = Api::all(client.clone());
    let ready = wait_for("nodes Ready", Duration::from_secs(120), || {
        let nodes = nodes.clone();
        async move {
            let list = nodes.list(&ListParams::default()).await.map(|l| l.items).unwrap_or_default();
            let ready = list
                .iter()
                .filter(|node| {
                    node.status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
                        && node.spec.as_ref().and_then(|s| s.taints.as_ref()).is_none_or(|t| t.is_empty())
                })
                .count();
            (ready as u32 >= count, format!("{ready}/{count} Ready"))
        }
    })
    .await;
    ready.expect("the simulated nodes never became Ready");
}

/// The manager in this process, through the same call `kruise manager` makes.
struct InProcessManager {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl InProcessManager {
    async fn start(client: Client) -> Self {
        let options = ManagerOptions {
            health_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            webhook: Some(WebhookConfig {
                bind: SocketAddr::from(([127, 0, 0, 1], 0)),
                namespace: MANAGER_NAMESPACE.into(),
                endpoint: WebhookEndpoint::Url { host: "127.0.0.1".into(), port: None },
                ..Default::default()
            }),
            leader_election: None,
            ..Default::default()
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let (started_tx, started_rx) = oneshot::channel();
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            if let Err(error) = run_manager(client, options, shutdown, move |started| {
                let _ = started_tx.send(started.readiness);
            })
            .await
            {
                eprintln!("the in-process manager stopped: {error}");
            }
        });
        let readiness = started_rx.await.expect("the manager did not start");
        let ready = wait_for("manager ready", Duration::from_secs(60), || {
            let failing = readiness.failing();
            async move { (failing.is_empty(), format!("waiting for {}", failing.join(", "))) }
        })
        .await;
        ready.expect("the manager never became ready");
        Self { stop, task }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        if tokio::time::timeout(Duration::from_secs(30), self.task).await.is_err() {
            eprintln!("the in-process manager did not stop within 30 s");
        }
    }
}

/// A child process killed when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A field of `/proc/<pid>/status` in MiB (`VmRSS`, `VmHWM`).
fn memory_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
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

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

async fn pods_of(pods: &Api<Pod>, app: &str) -> Vec<Pod> {
    pods.list(&ListParams::default().labels(&format!("app={app}"))).await.map(|l| l.items).unwrap_or_default()
}

/// Deletes a CloneSet and waits until its pods are gone.
async fn delete_cloneset(sets: &Api<CloneSet>, pods: &Api<Pod>, name: &str, limit: Duration) {
    let _ = sets.delete(name, &DeleteParams::background()).await;
    wait_for(&format!("{name} deleted"), limit, || async move {
        let left = pods_of(pods, name).await.len();
        (left == 0, format!("{left} pods left"))
    })
    .await;
}

/// Write requests between two counter snapshots.
struct Writes(Vec<(RequestKey, u64)>);

impl Writes {
    fn between(before: &HashMap<RequestKey, u64>, after: &HashMap<RequestKey, u64>) -> Self {
        Self(
            after
                .iter()
                .filter(|(key, _)| key.is_write())
                .filter_map(|(key, n)| {
                    let delta = n - before.get(key).copied().unwrap_or(0);
                    (delta > 0).then(|| (key.clone(), delta))
                })
                .collect(),
        )
    }

    fn total(&self, client: Option<&str>) -> u64 {
        self.0.iter().filter(|(k, _)| client.is_none_or(|c| k.client == c)).map(|(_, n)| n).sum()
    }

    fn failed(&self, client: Option<&str>) -> u64 {
        self.0
            .iter()
            .filter(|(k, _)| client.is_none_or(|c| k.client == c) && k.code >= 400)
            .map(|(_, n)| n)
            .sum()
    }

    /// `"500 PATCH pods, 40 PUT clonesets/status, ..."`, most first.
    fn detail(&self, client: &str) -> String {
        let mut by_what: BTreeMap<String, u64> = BTreeMap::new();
        for (key, n) in self.0.iter().filter(|(k, _)| k.client == client) {
            let verb = match key.verb {
                Verb::Create => "POST",
                Verb::Update => "PUT",
                Verb::Patch => "PATCH",
                Verb::Delete => "DELETE",
                Verb::DeleteCollection => "DELETE-collection",
                _ => "READ",
            };
            let resource = match &key.subresource {
                Some(sub) => format!("{}/{sub}", key.resource),
                None => key.resource.clone(),
            };
            let failed = if key.code >= 400 { format!(" ({})", key.code) } else { String::new() };
            *by_what.entry(format!("{verb} {resource}{failed}")).or_default() += n;
        }
        let mut items: Vec<(String, u64)> = by_what.into_iter().collect();
        items.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        items.iter().map(|(what, n)| format!("{n} {what}")).collect::<Vec<_>>().join(", ")
    }

    fn print(&self, indent: &str, pods: usize) {
        for (label, agent) in [
            ("manager", AGENT_MANAGER),
            ("nodes (kubelet + scheduler)", AGENT_NODES),
            ("benchmark", AGENT_BENCH),
        ] {
            let total = self.total(Some(agent));
            if total == 0 {
                continue;
            }
            println!(
                "{indent}{label:<28} {total:>7} writes ({:.2}/pod, {} failed): {}",
                total as f64 / pods as f64,
                self.failed(Some(agent)),
                self.detail(agent)
            );
        }
        println!(
            "{indent}{:<28} {:>7} writes ({:.2}/pod)",
            "all clients",
            self.total(None),
            self.total(None) as f64 / pods as f64
        );
    }
}

struct Bench {
    sizes: Sizes,
    counts: RequestCounts,
    sets: Api<CloneSet>,
    pods: Api<Pod>,
}

struct Rollout {
    policy: &'static str,
    time: Option<Duration>,
    writes: Writes,
}

/// One CloneSet of `rollout_pods` pods at v1, then the template's image set to v2 and the
/// rollout timed and its writes counted.
async fn rollout(bench: &Bench, policy: &'static str) -> Rollout {
    let n = bench.sizes.rollout_pods;
    let name = format!("rollout-{}", policy.to_lowercase());
    // Each run has its own images, so that both pull on every node (no run finds the other's cached).
    let (v1, v2) = (format!("registry.local/{name}:v1"), format!("registry.local/{name}:v2"));
    println!("  [{policy}] creating {n} pods at {v1}");
    let created = Instant::now();
    bench
        .sets
        .create(&PostParams::default(), &cloneset(&name, n, &v1, policy, &bench.sizes.max_unavailable))
        .await
        .unwrap();
    if !wait_settled(&bench.sets, &name, n, &format!("[{policy}] create"), bench.sizes.timeout).await {
        return Rollout { policy, time: None, writes: Writes(Vec::new()) };
    }
    println!("  [{policy}] {n} pods Ready in {:.2} s", created.elapsed().as_secs_f64());
    let uids_before: HashSet<String> =
        pods_of(&bench.pods, &name).await.iter().filter_map(|p| p.uid()).collect();
    tokio::time::sleep(Duration::from_secs(2)).await; // trailing status writes and events settle

    let mut set = bench.sets.get(&name).await.unwrap();
    set.spec.template.spec.as_mut().unwrap().containers[0].image = Some(v2.clone());
    let before = bench.counts.snapshot();
    let started = Instant::now();
    bench.sets.replace(&name, &PostParams::default(), &set).await.unwrap();
    let done = wait_settled(&bench.sets, &name, n, &format!("[{policy}] rollout"), bench.sizes.timeout).await;
    let time = done.then(|| started.elapsed());
    let writes = Writes::between(&before, &bench.counts.snapshot());

    let pods = pods_of(&bench.pods, &name).await;
    let live: Vec<&Pod> = pods.iter().filter(|p| p.metadata.deletion_timestamp.is_none()).collect();
    let at_v2 = live
        .iter()
        .filter(|p| {
            is_ready(p) && p.spec.as_ref().and_then(|s| s.containers[0].image.as_deref()) == Some(v2.as_str())
        })
        .count();
    let kept = live.iter().filter(|p| p.uid().is_some_and(|u| uids_before.contains(&u))).count();
    match time {
        Some(time) => println!(
            "  [{policy}] rollout to {v2}: {:.2} s; check: {at_v2}/{n} pods Ready at v2, {kept} kept their UID, {} new",
            time.as_secs_f64(),
            live.len() - kept
        ),
        None => println!("  [{policy}] rollout to {v2} did not finish: {at_v2}/{n} pods Ready at v2"),
    }
    delete_cloneset(&bench.sets, &bench.pods, &name, bench.sizes.timeout).await;
    Rollout { policy, time, writes }
}

async fn rollouts(bench: &Bench) {
    let n = bench.sizes.rollout_pods;
    println!(
        "\n1. image rollout of a {n}-pod CloneSet, in place vs recreate (maxUnavailable {}, maxSurge 0, {} nodes)",
        bench.sizes.max_unavailable, bench.sizes.nodes
    );
    let in_place = rollout(bench, "InPlaceIfPossible").await;
    let recreate = rollout(bench, "ReCreate").await;
    println!(
        "\n  rollout of {n} pods (template write -> updatedReadyReplicas == {n} at the new generation):"
    );
    for run in [&in_place, &recreate] {
        match run.time {
            Some(time) => println!(
                "    {:<18} {:>8.2} s  ({:.1} pods/s)",
                run.policy,
                time.as_secs_f64(),
                n as f64 / time.as_secs_f64()
            ),
            None => println!("    {:<18} did not finish", run.policy),
        }
    }
    println!(
        "  API writes during the rollout (every POST/PUT/PATCH/DELETE the embedded API server answered, by User-Agent):"
    );
    for run in [&in_place, &recreate] {
        println!("    {}:", run.policy);
        run.writes.print("      ", n);
    }
    if let (Some(a), Some(b)) = (in_place.time, recreate.time) {
        let ratio = |r: u64, i: u64| if i == 0 { f64::NAN } else { r as f64 / i as f64 };
        println!(
            "  ReCreate / in-place: time {:.2}x, API writes {:.2}x (manager's writes {:.2}x)",
            b.as_secs_f64() / a.as_secs_f64(),
            ratio(recreate.writes.total(None), in_place.writes.total(None)),
            ratio(recreate.writes.total(Some(AGENT_MANAGER)), in_place.writes.total(Some(AGENT_MANAGER)))
        );
    }
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
    delete_cloneset(&bench.sets, &bench.pods, name, bench.sizes.timeout).await;

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

fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

fn kruise_binary() -> PathBuf {
    std::env::var_os("KRUISE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kruise")))
}

/// (user + system CPU seconds) of a process, from /proc.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or_default().split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Starts `kruise manager` against the kubeconfig and waits for its `/readyz`; `None` (with
/// the log's path printed) when it never becomes ready.
async fn start_manager_process(kubeconfig: &Path, log_path: &Path) -> Option<Process> {
    let health = free_port();
    let binary = kruise_binary();
    let log = std::fs::File::create(log_path).unwrap();
    let child = Command::new(&binary)
        .arg("manager")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--namespace", MANAGER_NAMESPACE])
        .args(["--health-addr", &health.to_string()])
        .args(["--webhook-addr", "127.0.0.1:0", "--webhook-host", "127.0.0.1", "--leader-elect", "false"])
        .env("RUST_LOG", std::env::var("KRUISE_BENCH_MANAGER_LOG").unwrap_or_else(|_| "warn".into()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|error| panic!("starting {}: {error}", binary.display()));
    let process = Process(child);
    let http = reqwest::Client::builder().timeout(Duration::from_secs(2)).build().unwrap();
    let ready = wait_for("manager process /readyz", Duration::from_secs(120), || {
        let http = http.clone();
        async move {
            match http.get(format!("http://{health}/readyz")).send().await {
                Ok(response) => (response.status().is_success(), response.status().to_string()),
                Err(error) => (false, error.to_string()),
            }
        }
    })
    .await;
    match ready {
        Some(_) => Some(process),
        None => {
            println!("  the manager process never became ready; its log: {}", log_path.display());
            None
        }
    }
}

async fn memory(bench: &Bench, client: &Client, kubeconfig: &Path, dir: &Path) {
    let (sets_n, per_set) = (bench.sizes.sets, bench.sizes.pods_per_set);
    let total = sets_n * per_set;
    println!(
        "\n3. manager resident memory with {sets_n} CloneSets x {per_set} pods ({total} pods, {} nodes; manager as a `kruise manager` process)",
        bench.sizes.nodes
    );
    let log_path = dir.join("manager.log");
    let Some(manager) = start_manager_process(kubeconfig, &log_path).await else { return };
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
    let Some(manager) = start_manager_process(kubeconfig, &dir.join("manager-restarted.log")).await else {
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
    println!(
        "  this process (API server + simulated nodes + benchmark; the manager of phases 1-2 ran here too): RSS {:.1} MiB, peak {:.1} MiB",
        memory_mib(std::process::id(), "VmRSS:"),
        memory_mib(std::process::id(), "VmHWM:")
    );
}

async fn pods_of_namespace(client: &Client, namespace: &str) -> usize {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    pods.list(&ListParams::default()).await.map(|l| l.items.len()).unwrap_or(0)
}

#[tokio::main]
async fn main() {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .try_init();
    }
    let sizes = Sizes::from_env();
    println!(
        "CloneSet benchmark{}: {} simulated nodes ({} pods each), API server, nodes and CRDs in this process",
        if sizes.quick { " (quick)" } else { "" },
        sizes.nodes,
        sizes.pods_per_node
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let server =
        ApiServer::start(ApiServerConfig { kubeconfig_path: Some(kubeconfig.clone()), ..Default::default() })
            .await
            .unwrap();
    let bench_client = client(&server.url, AGENT_BENCH);
    install_crds(&bench_client).await;
    let config = SimulationConfig {
        nodes: sizes.nodes,
        capacity: NodeCapacity { pods: sizes.pods_per_node, ..Default::default() },
        ..Default::default()
    };
    let simulation = Simulation::start(client(&server.url, AGENT_NODES), &config).await.unwrap();
    wait_nodes_ready(&bench_client, sizes.nodes).await;
    create_namespace(&bench_client, MANAGER_NAMESPACE).await;
    create_namespace(&bench_client, NAMESPACE).await;

    let bench = Bench {
        counts: server.requests().clone(),
        sets: Api::namespaced(bench_client.clone(), NAMESPACE),
        pods: Api::namespaced(bench_client.clone(), NAMESPACE),
        sizes,
    };
    if bench.sizes.runs("rollout") || bench.sizes.runs("scale") {
        let manager = InProcessManager::start(client(&server.url, AGENT_MANAGER)).await;
        if bench.sizes.runs("rollout") {
            rollouts(&bench).await;
        }
        if bench.sizes.runs("scale") {
            scale(&bench).await;
        }
        manager.stop().await;
    }
    if bench.sizes.runs("memory") {
        memory(&bench, &bench_client, &kubeconfig, dir.path()).await;
    }
    simulation.stop().await;
    server.shutdown().await;
}
