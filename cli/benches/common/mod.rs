//! What the workload benchmarks share (`mod common;` in each): the embedded API server with its
//! request counters, the simulated nodes, the Kruise CRDs, the manager in this process, polling
//! waits that print progress, and the per-`User-Agent` count of API writes.
//!
//! Each benchmark uses part of it, hence `dead_code` is allowed here.
#![allow(dead_code)]

use std::{
    collections::{BTreeMap, HashMap},
    future::Future,
    net::{SocketAddr, TcpListener},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::core::v1::{Namespace, Node, Pod, PodTemplateSpec},
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
use kube::{
    Api, Client, Config, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;
use tokio::{sync::oneshot, task::JoinHandle};

/// The namespace of the benchmarks' workloads.
pub const NAMESPACE: &str = "bench";
/// The manager's namespace (Lease, webhook Secret).
pub const MANAGER_NAMESPACE: &str = "kruise-system";
/// `User-Agent`s of the clients, so the API server's counters tell their writes apart.
pub const AGENT_MANAGER: &str = "kruise-manager";
pub const AGENT_NODES: &str = "kruise-nodes";
pub const AGENT_BENCH: &str = "kruise-bench";
/// How often a wait prints where it stands.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// The environment variable `name` parsed, or `default` when unset (a bad value panics).
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(value) => value.trim().parse().unwrap_or_else(|_| panic!("{name}={value} is not a valid value")),
        Err(_) => default,
    }
}

/// `--quick` on the command line or `KRUISE_BENCH_QUICK=1`: small sizes.
pub fn quick_requested() -> bool {
    std::env::args().any(|a| a == "--quick") || env_or("KRUISE_BENCH_QUICK", 0u8) == 1
}

/// Logs to stderr when `RUST_LOG` is set.
pub fn init_tracing() {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .try_init();
    }
}

/// A kube client that names itself with `agent`.
pub fn client(url: &str, agent: &'static str) -> Client {
    let mut config = Config::new(url.parse().unwrap());
    config.headers.push((http::header::USER_AGENT, http::HeaderValue::from_static(agent)));
    Client::try_from(config).unwrap()
}

/// Waits until `probe` says done, printing its state every few seconds; `None` when it gave up
/// after `limit` (the last state is printed).
pub async fn wait_for<F, Fut>(what: &str, limit: Duration, mut probe: F) -> Option<Duration>
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

pub async fn create_namespace(client: &Client, name: &str) {
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
pub async fn install_crds(client: &Client) {
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

pub async fn wait_nodes_ready(client: &Client, count: u32) {
    let nodes: Api<Node> = Api::all(client.clone());
    let ready = wait_for("nodes Ready", Duration::from_secs(300), || {
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

/// The embedded API server (counting requests), the Kruise CRDs, `nodes` simulated nodes of
/// `pods_per_node` pods and the benchmark's namespaces, all in this process.
pub struct Cluster {
    pub server: ApiServer,
    pub simulation: Simulation,
    /// The benchmark's own client (`User-Agent` [`AGENT_BENCH`]).
    pub client: Client,
    pub counts: RequestCounts,
    /// A kubeconfig for processes started against this server.
    pub kubeconfig: PathBuf,
    pub dir: tempfile::TempDir,
}

impl Cluster {
    pub async fn start(nodes: u32, pods_per_node: u32) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let server = ApiServer::start(ApiServerConfig {
            kubeconfig_path: Some(kubeconfig.clone()),
            ..Default::default()
        })
        .await
        .unwrap();
        let bench_client = client(&server.url, AGENT_BENCH);
        install_crds(&bench_client).await;
        let config = SimulationConfig {
            nodes,
            capacity: NodeCapacity { pods: pods_per_node, ..Default::default() },
            ..Default::default()
        };
        let simulation = Simulation::start(client(&server.url, AGENT_NODES), &config).await.unwrap();
        wait_nodes_ready(&bench_client, nodes).await;
        create_namespace(&bench_client, MANAGER_NAMESPACE).await;
        create_namespace(&bench_client, NAMESPACE).await;
        Self { counts: server.requests().clone(), client: bench_client, server, simulation, kubeconfig, dir }
    }

    /// A client for the manager (`User-Agent` [`AGENT_MANAGER`]).
    pub fn manager_client(&self) -> Client {
        client(&self.server.url, AGENT_MANAGER)
    }

    pub async fn stop(self) {
        self.simulation.stop().await;
        self.server.shutdown().await;
    }
}

/// The manager in this process, through the same call `kruise manager` makes.
pub struct InProcessManager {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl InProcessManager {
    pub async fn start(client: Client) -> Self {
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

    pub async fn stop(self) {
        let _ = self.stop.send(());
        if tokio::time::timeout(Duration::from_secs(30), self.task).await.is_err() {
            eprintln!("the in-process manager did not stop within 30 s");
        }
    }
}

pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

pub async fn pods_of(pods: &Api<Pod>, app: &str) -> Vec<Pod> {
    pods.list(&ListParams::default().labels(&format!("app={app}"))).await.map(|l| l.items).unwrap_or_default()
}

/// Waits until the pods labelled `app=<app>` are gone (after their workload was deleted).
pub async fn wait_pods_gone(pods: &Api<Pod>, app: &str, limit: Duration) {
    wait_for(&format!("{app} deleted"), limit, || async move {
        let left = pods_of(pods, app).await.len();
        (left == 0, format!("{left} pods left"))
    })
    .await;
}

/// The first container's image.
pub fn image_of(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref().and_then(|s| s.containers.first()).and_then(|c| c.image.as_deref())
}

/// Write requests between two counter snapshots.
pub struct Writes(pub Vec<(RequestKey, u64)>);

impl Writes {
    pub fn between(before: &HashMap<RequestKey, u64>, after: &HashMap<RequestKey, u64>) -> Self {
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

    pub fn total(&self, client: Option<&str>) -> u64 {
        self.0.iter().filter(|(k, _)| client.is_none_or(|c| k.client == c)).map(|(_, n)| n).sum()
    }

    pub fn failed(&self, client: Option<&str>) -> u64 {
        self.0
            .iter()
            .filter(|(k, _)| client.is_none_or(|c| k.client == c) && k.code >= 400)
            .map(|(_, n)| n)
            .sum()
    }

    /// `"500 PATCH pods, 40 PUT clonesets/status, ..."`, most first.
    pub fn detail(&self, client: &str) -> String {
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

    pub fn print(&self, indent: &str, pods: usize) {
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

/// One timed rollout: its update policy, the time it took (`None`: it did not finish) and the
/// API writes during it.
pub struct Rollout {
    pub policy: &'static str,
    pub time: Option<Duration>,
    pub writes: Writes,
}

impl Rollout {
    /// A rollout that did not get as far as the template write.
    pub fn failed(policy: &'static str) -> Self {
        Self { policy, time: None, writes: Writes(Vec::new()) }
    }
}

/// Prints an in-place rollout against another one (`other`, e.g. ReCreate) of `n` pods: times,
/// pods per second, writes by client and the ratios.
pub fn print_rollouts(n: usize, done_when: &str, in_place: &Rollout, other: &Rollout) {
    println!("\n  rollout of {n} pods (template write -> {done_when} at the new generation):");
    for run in [in_place, other] {
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
    for run in [in_place, other] {
        println!("    {}:", run.policy);
        run.writes.print("      ", n);
    }
    if let (Some(a), Some(b)) = (in_place.time, other.time) {
        let ratio = |r: u64, i: u64| if i == 0 { f64::NAN } else { r as f64 / i as f64 };
        println!(
            "  {} / {}: time {:.2}x, API writes {:.2}x (manager's writes {:.2}x)",
            other.policy,
            in_place.policy,
            b.as_secs_f64() / a.as_secs_f64(),
            ratio(other.writes.total(None), in_place.writes.total(None)),
            ratio(other.writes.total(Some(AGENT_MANAGER)), in_place.writes.total(Some(AGENT_MANAGER)))
        );
    }
}

/// A workload's status counters (`("ready", 40)`, ...) and the generation it observed.
pub struct Counters {
    pub observed_generation: i64,
    pub counters: Vec<(&'static str, i32)>,
}

/// A namespaced API object the benchmarks create, read and replace.
pub trait Object:
    kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + serde::Serialize
    + serde::de::DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> Object for K where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::Serialize
        + serde::de::DeserializeOwned
        + std::fmt::Debug
{
}

/// A workload a benchmark rolls out, by name in [`NAMESPACE`]: how to build it for an image,
/// read its counters, and reach its pod template.
pub struct Workload<'a, K> {
    pub api: &'a Api<K>,
    pub name: String,
    /// The object to create, running `image`.
    pub build: Box<dyn Fn(&str) -> K + 'a>,
    /// Its status counters (`None` before it has a status); it converged when it observed its
    /// generation and every counter equals the desired pod count.
    pub counters: fn(&K) -> Option<Counters>,
    pub template: fn(&mut K) -> &mut PodTemplateSpec,
    /// The pods it should run.
    pub desired: usize,
}

impl<K> Workload<'_, K>
where
    K: Object,
{
    async fn create(&self, image: &str) {
        self.api.create(&PostParams::default(), &(self.build)(image)).await.unwrap();
    }

    /// Whether it converged, and its status as one line.
    async fn converged(&self) -> (bool, String) {
        let object = match self.api.get(&self.name).await {
            Ok(object) => object,
            Err(error) => return (false, format!("error: {error}")),
        };
        let generation = object.meta().generation.unwrap_or(0);
        let Some(status) = (self.counters)(&object) else { return (false, "no status yet".into()) };
        let n = i32::try_from(self.desired).unwrap_or(i32::MAX);
        let done = status.observed_generation == generation && status.counters.iter().all(|(_, v)| *v == n);
        let line =
            status.counters.iter().map(|(name, v)| format!("{name} {v}")).collect::<Vec<_>>().join(", ");
        (done, format!("generation {}/{generation}, {line}", status.observed_generation))
    }

    async fn set_image(&self, image: &str) {
        let mut object = self.api.get(&self.name).await.unwrap();
        let template = (self.template)(&mut object);
        template.spec.as_mut().unwrap().containers[0].image = Some(image.to_string());
        self.api.replace(&self.name, &PostParams::default(), &object).await.unwrap();
    }

    async fn delete(&self) {
        let _ = self.api.delete(&self.name, &kube::api::DeleteParams::background()).await;
    }
}

/// Creates `workload` with its pods (labelled `app=<name>`) at `<name>:v1` and waits for them,
/// then times the rollout to `<name>:v2` from the template write until it converged, counting the API
/// writes in between, prints what the pods became (at v2, UIDs kept) and deletes it.
pub async fn timed_rollout<K>(
    workload: &Workload<'_, K>,
    counts: &RequestCounts,
    pods: &Api<Pod>,
    policy: &'static str,
    timeout: Duration,
) -> Rollout
where
    K: Object,
{
    let (app, n) = (workload.name.as_str(), workload.desired);
    // Each run has its own images, so that every run pulls on every node.
    let (v1, v2) = (format!("registry.local/{app}:v1"), format!("registry.local/{app}:v2"));
    println!("  [{policy}] creating {n} pods at {v1}");
    let created = Instant::now();
    workload.create(&v1).await;
    if wait_for(&format!("[{policy}] create"), timeout, || workload.converged()).await.is_none() {
        return Rollout::failed(policy);
    }
    println!("  [{policy}] {n} pods Ready in {:.2} s", created.elapsed().as_secs_f64());
    let uids_before: std::collections::HashSet<String> =
        pods_of(pods, app).await.iter().filter_map(|p| p.uid()).collect();
    tokio::time::sleep(Duration::from_secs(2)).await; // trailing status writes and events settle

    let before = counts.snapshot();
    let started = Instant::now();
    workload.set_image(&v2).await;
    let done = wait_for(&format!("[{policy}] rollout"), timeout, || workload.converged()).await;
    let time = done.map(|_| started.elapsed());
    let writes = Writes::between(&before, &counts.snapshot());

    let all = pods_of(pods, app).await;
    let live: Vec<&Pod> = all.iter().filter(|p| p.metadata.deletion_timestamp.is_none()).collect();
    let at_v2 = live.iter().filter(|p| is_ready(p) && image_of(p) == Some(v2.as_str())).count();
    let kept = live.iter().filter(|p| p.uid().is_some_and(|u| uids_before.contains(&u))).count();
    match time {
        Some(time) => println!(
            "  [{policy}] rollout to {v2}: {:.2} s; check: {at_v2}/{n} pods Ready at v2, {kept} kept their UID, {} new",
            time.as_secs_f64(),
            live.len() - kept
        ),
        None => println!("  [{policy}] rollout to {v2} did not finish: {at_v2}/{n} pods Ready at v2"),
    }
    workload.delete().await;
    wait_pods_gone(pods, app, timeout).await;
    Rollout { policy, time, writes }
}

// --- processes: the manager as its own process, and readings of a process from /proc ---

/// A child process killed when dropped.
pub struct Process(pub Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A field of `/proc/<pid>/status` in MiB (`VmRSS`, `VmHWM`).
pub fn memory_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0
}

pub fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

pub fn kruise_binary() -> PathBuf {
    std::env::var_os("KRUISE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kruise")))
}

/// (user + system CPU seconds) of a process, from /proc.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or_default().split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// The feature gates the benchmarks' manager runs with: `KRUISE_BENCH_FEATURE_GATES`, else
/// those `kruise up` passes (so every controller `kruise up` runs is on and caching).
pub fn manager_feature_gates() -> String {
    env_or(
        "KRUISE_BENCH_FEATURE_GATES",
        "ImagePullJobGate=true,PreDownloadImageForInPlaceUpdate=true,PreDownloadImageForDaemonSetUpdate=true"
            .to_string(),
    )
}

/// Starts `kruise manager` against the kubeconfig with these `--feature-gates` and waits for its
/// `/readyz`; `None` (with the log's path printed) when it never becomes ready.
pub async fn start_manager_process(kubeconfig: &Path, log_path: &Path, gates: &str) -> Option<Process> {
    start_manager_process_with_env(kubeconfig, log_path, gates, &[]).await
}

pub async fn start_manager_process_with_env(
    kubeconfig: &Path,
    log_path: &Path,
    gates: &str,
    env: &[(String, String)],
) -> Option<Process> {
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
        .args(["--feature-gates", gates])
        .env("RUST_LOG", std::env::var("KRUISE_BENCH_MANAGER_LOG").unwrap_or_else(|_| "warn".into()))
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
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
