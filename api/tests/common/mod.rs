//! What the service API tests share: an embedded control plane with the Kruise CRDs (and, for
//! rollouts that must progress, three simulated nodes and the Kruise manager in process; for
//! image pulls, also a node daemon per node), a store (SQLite in a temporary directory, or a
//! PostgreSQL URL), the API server (REST and gRPC) with a fixed set of tokens, and an HTTP
//! client that returns status, headers and JSON.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kruise_api::{
    ApiOptions, ApiServer, Store, TokenRegistry,
    auth::{Action, Principal, Scope},
};
use kruise_crds::apps::v1beta1::{CloneSet, NodeImage};
use kruise_daemon::{DaemonConfig, RunningDaemon, spawn_daemon};
use kruise_integration::{
    Cluster,
    manager::{KruiseManager, ManagerSpec},
    nodes::{Hosting, SimNodes},
};
use kube::{
    Api, ResourceExt,
    api::{ListParams, PostParams},
};
use reqwest::{Method, StatusCode, header::HeaderMap};
use serde_json::{Value, json};

/// Token with every action in every namespace.
pub const ADMIN: &str = "admin-token-0123456789";
/// Token that may run rollouts in `default` only.
pub const CI: &str = "ci-token-0123456789";
/// Token that may read the whole audit.
pub const AUDITOR: &str = "auditor-token-0123456789";
/// Token that may read the audit of namespace `team` only.
pub const TEAM_AUDITOR: &str = "team-auditor-token-0123456789";
/// Token that may pre-pull images and recreate containers in `default` only.
pub const OPS: &str = "ops-token-0123456789";
/// Token that may run AdvancedCronJobs (and read job results) in `default` only.
pub const JOBS: &str = "jobs-token-0123456789";
/// Token that may read job results in `default` only.
pub const JOB_VIEWER: &str = "job-viewer-token-0123456789";

/// How long a rollout may take in a test.
pub const SETTLE: Duration = Duration::from_secs(90);

/// The tokens every test server accepts.
pub fn tokens() -> TokenRegistry {
    let principal = |name: &str, namespaces: Scope<String>, actions: Scope<Action>| Principal {
        name: name.into(),
        namespaces,
        actions,
    };
    TokenRegistry::default()
        .with_token(ADMIN, principal("admin", Scope::All, Scope::All))
        .with_token(
            CI,
            principal("ci", Scope::Only(vec!["default".into()]), Scope::Only(vec![Action::Rollout])),
        )
        .with_token(AUDITOR, principal("auditor", Scope::All, Scope::Only(vec![Action::AuditRead])))
        .with_token(
            TEAM_AUDITOR,
            principal("team-auditor", Scope::Only(vec!["team".into()]), Scope::Only(vec![Action::AuditRead])),
        )
        .with_token(
            OPS,
            principal(
                "ops",
                Scope::Only(vec!["default".into()]),
                Scope::Only(vec![Action::ImagePull, Action::Recreate]),
            ),
        )
        .with_token(
            JOBS,
            principal("jobs", Scope::Only(vec!["default".into()]), Scope::Only(vec![Action::Job])),
        )
        .with_token(
            JOB_VIEWER,
            principal("job-viewer", Scope::Only(vec!["default".into()]), Scope::Only(vec![Action::JobRead])),
        )
}

/// What runs beside the control plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cast {
    /// The control plane and the CRDs only.
    Bare,
    /// Three simulated nodes and the manager (workloads progress).
    Workloads,
    /// Also a node daemon per node (image pulls progress).
    Daemons,
}

/// Where the store lives.
pub enum StoreChoice {
    /// A fresh SQLite file.
    Sqlite,
    /// A database URL (PostgreSQL).
    Url(String),
}

/// A control plane, optionally nodes and the manager, a store and the API.
pub struct Env {
    pub cluster: Option<Cluster>,
    pub nodes: Option<SimNodes>,
    pub manager: Option<KruiseManager>,
    pub api: Option<ApiServer>,
    pub daemons: Vec<(String, RunningDaemon)>,
    pub client: kube::Client,
    pub sets: Api<CloneSet>,
    pub pods: Api<Pod>,
    pub http: reqwest::Client,
    pub base: String,
    /// The gRPC endpoint (`http://127.0.0.1:PORT`).
    pub grpc: String,
    store_url: String,
    _dir: tempfile::TempDir,
}

/// A response: status, headers, body as JSON (or a JSON string of the text when not JSON).
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    /// The content type.
    pub fn content_type(&self) -> &str {
        self.headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    /// The fields named in a problem's `errors`.
    pub fn fields(&self) -> Vec<String> {
        self.body["errors"]
            .as_array()
            .map(|errors| errors.iter().map(|e| e["field"].as_str().unwrap_or("").to_string()).collect())
            .unwrap_or_default()
    }
}

impl Env {
    /// CRDs, the store and the API; with `workloads`, also three simulated nodes and the
    /// manager, so that rollouts progress.
    pub async fn start(store: StoreChoice, workloads: bool) -> Self {
        Self::start_cast(store, if workloads { Cast::Workloads } else { Cast::Bare }).await
    }

    /// CRDs, the store and the API, with `cast` beside them.
    pub async fn start_cast(store: StoreChoice, cast: Cast) -> Self {
        let workloads = cast != Cast::Bare;
        let _ = tracing_subscriber::fmt()
            .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "kruise_api=info,warn".into()))
            .with_test_writer()
            .try_init();
        let cluster = Cluster::embedded().await.expect("starting the embedded API server");
        cluster.install_crds().await.expect("installing the CRDs");
        let client = cluster.client();
        let sets: Api<CloneSet> = Api::namespaced(client.clone(), "default");
        let deadline = Instant::now() + Duration::from_secs(30);
        while sets.list(&ListParams::default().limit(1)).await.is_err() {
            assert!(Instant::now() < deadline, "CloneSets are not served");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let (nodes, manager) = if workloads {
            let nodes =
                SimNodes::start(&cluster, Hosting::InProcess, 3).await.expect("starting simulated nodes");
            let manager = KruiseManager::start(&cluster, ManagerSpec::in_process())
                .await
                .expect("starting the manager");
            (Some(nodes), Some(manager))
        } else {
            (None, None)
        };
        let mut daemons = Vec::new();
        if let (Cast::Daemons, Some(nodes)) = (cast, &nodes) {
            let node_images: Api<NodeImage> = Api::all(client.clone());
            for name in nodes.names().to_vec() {
                let mut config = DaemonConfig::new(&name);
                config.runtime_endpoint = Some(nodes.cri_socket(&name));
                config.health_addr = "127.0.0.1:0".parse().unwrap();
                let daemon = spawn_daemon(client.clone(), config).await.expect("starting a node daemon");
                daemons.push((name.clone(), daemon));
                let deadline = Instant::now() + SETTLE;
                while node_images.get_opt(&name).await.unwrap().is_none() {
                    assert!(Instant::now() < deadline, "no NodeImage for node {name}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let store_url = match store {
            StoreChoice::Sqlite => format!("sqlite:{}", dir.path().join("api.db").display()),
            StoreChoice::Url(url) => url,
        };
        let mut env = Self {
            cluster: Some(cluster),
            nodes,
            manager,
            api: None,
            daemons,
            pods: Api::namespaced(client.clone(), "default"),
            sets,
            client,
            http: reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap(),
            base: String::new(),
            grpc: String::new(),
            store_url,
            _dir: dir,
        };
        env.start_api().await;
        env
    }

    /// Starts (or restarts) the API server on the same store.
    pub async fn start_api(&mut self) {
        if let Some(api) = self.api.take() {
            api.shutdown().await;
        }
        let store = Store::connect(&self.store_url).await.expect("opening the store");
        let options = ApiOptions {
            rest_addr: "127.0.0.1:0".parse().unwrap(),
            grpc_addr: Some("127.0.0.1:0".parse().unwrap()),
            watch_interval: Duration::from_millis(500),
            ..Default::default()
        };
        let api =
            ApiServer::start(self.client.clone(), store, tokens(), options).await.expect("starting the API");
        self.base = api.rest_url();
        self.grpc = api.grpc_url().expect("gRPC is served");
        self.api = Some(api);
    }

    /// Stops everything.
    pub async fn shutdown(mut self) {
        if let Some(api) = self.api.take() {
            api.shutdown().await;
        }
        for (_, daemon) in self.daemons.drain(..) {
            let _ = daemon.stop().await;
        }
        if let Some(manager) = self.manager.take() {
            manager.stop().await;
        }
        if let Some(nodes) = self.nodes.take() {
            nodes.shutdown().await;
        }
        if let Some(cluster) = self.cluster.take() {
            cluster.shutdown().await;
        }
    }

    /// Sends a request with a token (none: no Authorization header) and extra headers.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Reply { status, headers, body }
    }

    /// GET with the admin token.
    pub async fn get(&self, path: &str) -> Reply {
        self.call(Method::GET, path, Some(ADMIN), None, &[]).await
    }

    /// POST with the admin token.
    pub async fn post(&self, path: &str, body: Option<&Value>) -> Reply {
        self.call(Method::POST, path, Some(ADMIN), body, &[]).await
    }

    /// Creates a CloneSet `name` in `default` (nginx container `nginx`, in-place updates).
    pub async fn create_cloneset(&self, name: &str, replicas: i32, image: &str) -> CloneSet {
        let set: CloneSet = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "CloneSet",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "nginx", "image": image}]}
                },
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "50%"}}
            }
        }))
        .unwrap();
        self.sets.create(&PostParams::default(), &set).await.unwrap()
    }

    /// Waits until `check` holds for the CloneSet and its pods.
    pub async fn wait_set(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(&CloneSet, &[Pod]) -> bool,
    ) -> (CloneSet, Vec<Pod>) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let set = self.sets.get(name).await.unwrap();
            let pods = self.pods_of(&set).await;
            if check(&set, &pods) {
                return (set, pods);
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for CloneSet {name}: {what}\nstatus: {:?}",
                set.status
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until every pod of the CloneSet is at its update revision and ready.
    pub async fn wait_settled(&self, name: &str, replicas: i32) -> (CloneSet, Vec<Pod>) {
        self.wait_set(name, "settled", |set, pods| {
            let Some(status) = &set.status else { return false };
            status.observed_generation == set.metadata.generation.unwrap_or(0)
                && status.replicas == replicas
                && status.updated_ready_replicas == replicas
                && status.ready_replicas == replicas
                && pods.len() == replicas as usize
                && pods.iter().all(|p| p.metadata.deletion_timestamp.is_none())
        })
        .await
    }

    /// The pods a CloneSet owns, by name.
    pub async fn pods_of(&self, set: &CloneSet) -> Vec<Pod> {
        let uid = set.uid().unwrap();
        let mut pods: Vec<Pod> = self
            .pods
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|pod| pod.owner_references().iter().any(|o| o.uid == uid))
            .collect();
        pods.sort_by_key(|pod| pod.name_any());
        pods
    }

    /// Polls a rollout until its state is `state`.
    pub async fn wait_rollout(&self, id: &str, state: &str) -> Value {
        let deadline = Instant::now() + SETTLE;
        loop {
            let reply = self.get(&format!("/v1/namespaces/default/rollouts/{id}")).await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            if reply.body["state"] == state {
                return reply.body;
            }
            assert!(
                Instant::now() < deadline,
                "rollout {id} never reached {state}: {}",
                serde_json::to_string_pretty(&reply.body).unwrap()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Polls until the stored history of a rollout (as recorded by the watcher) ends in `state`.
    pub async fn wait_recorded(&self, id: &str, state: &str) -> Value {
        let deadline = Instant::now() + SETTLE;
        loop {
            let reply = self.get(&format!("/v1/namespaces/default/rollouts/{id}")).await;
            let history = reply.body["history"].as_array().cloned().unwrap_or_default();
            if history.last().is_some_and(|t| t["to"] == state) {
                return reply.body;
            }
            assert!(Instant::now() < deadline, "rollout {id}: {state} never recorded: {}", reply.body);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Audit records matching a query string (admin token), newest first.
    pub async fn audit(&self, query: &str) -> Vec<Value> {
        let reply = self.get(&format!("/v1/audit?{query}")).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        reply.body["items"].as_array().cloned().unwrap_or_default()
    }
}

/// The image of the first container of a pod.
pub fn image_of(pod: &Pod) -> String {
    pod.spec.as_ref().and_then(|s| s.containers[0].image.clone()).unwrap_or_default()
}

/// The image of the first container of a CloneSet's template.
pub fn template_image(set: &CloneSet) -> String {
    set.spec.template.spec.as_ref().and_then(|s| s.containers[0].image.clone()).unwrap_or_default()
}

/// The partition (`"0"` when unset: the webhook defaults it so) and paused flag of a CloneSet.
pub fn strategy_of(set: &CloneSet) -> (String, bool) {
    let rolling = set.spec.update_strategy.rolling_update.as_ref();
    (
        rolling
            .and_then(|r| r.partition.as_ref())
            .map(|p| serde_json::to_string(p).unwrap())
            .unwrap_or_else(|| "0".into()),
        rolling.is_some_and(|r| r.paused),
    )
}
