//! What every node daemon scenario needs: a cluster with the Kruise CRDs, three simulated nodes,
//! a Kruise manager in the test process, and one in-process node daemon per node on that node's
//! CRI socket (optionally through a proxy the scenario can cut, to take the runtime away); jobs
//! created from JSON and read back typed; waits that print the state they gave up on; a CRI
//! client per node.

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use futures::StreamExt;
use k8s_cri::v1 as cri;
use kruise_controlplane::nodes::cri::connect_cri;
use kruise_crds::apps::v1beta1::{CloneSet, ImageListPullJob, ImagePullJob, ImagePullPhase, NodeImage};
use kruise_daemon::{DaemonConfig, RunningDaemon, spawn_daemon};
use kruise_integration::{
    Scene,
    manager::{KruiseManager, ManagerSpec},
    nodes::{Hosting, SimNodes},
};
use kube::{
    Api, ResourceExt,
    api::{ListParams, PostParams},
    runtime::watcher,
};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::{net::UnixListener, task::JoinHandle};

/// How long a job may take to reach a state in a scenario.
pub const SETTLE: Duration = Duration::from_secs(90);

/// The namespace the scenarios' jobs live in.
pub const NAMESPACE: &str = "default";

/// A cluster with nodes, a manager and a daemon per node.
pub struct DaemonKit {
    pub jobs: Api<ImagePullJob>,
    pub lists: Api<ImageListPullJob>,
    pub node_images: Api<NodeImage>,
    pub nodes: Option<SimNodes>,
    pub manager: Option<KruiseManager>,
    pub daemons: Vec<(String, RunningDaemon)>,
    pub proxies: BTreeMap<String, CriProxy>,
    proxy_dir: Option<tempfile::TempDir>,
}

impl DaemonKit {
    /// CRDs, three simulated nodes, the manager and a daemon per node on its CRI socket; waits
    /// until every node has its NodeImage and every daemon is ready.
    pub async fn start(scene: &Scene) -> Self {
        Self::start_with(scene, false).await
    }

    /// As [`Self::start`]; with `proxied`, each daemon reaches its node's CRI through a
    /// [`CriProxy`] the scenario can stop and start.
    pub async fn start_with(scene: &Scene, proxied: bool) -> Self {
        let cluster = scene.cluster();
        cluster.install_crds().await.expect("installing the CRDs");
        let client = cluster.client();
        let jobs: Api<ImagePullJob> = Api::namespaced(client.clone(), NAMESPACE);
        // Established is not yet served everywhere on a real API server: wait until every kind
        // the manager watches lists, so that its watches do not start in backoff.
        let deadline = Instant::now() + Duration::from_secs(30);
        let lists = ListParams::default().limit(1);
        let (sets, lists_api, node_images) = (
            Api::<CloneSet>::all(client.clone()),
            Api::<ImageListPullJob>::all(client.clone()),
            Api::<NodeImage>::all(client.clone()),
        );
        while jobs.list(&lists).await.is_err()
            || sets.list(&lists).await.is_err()
            || lists_api.list(&lists).await.is_err()
            || node_images.list(&lists).await.is_err()
        {
            assert!(
                Instant::now() < deadline,
                "the Kruise kinds are not served 30 s after their CRDs were Established"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let nodes = SimNodes::start(cluster, Hosting::InProcess, 3).await.expect("starting simulated nodes");
        let manager = crate::cloneset_kit::start_manager(scene, ManagerSpec::in_process()).await;
        let proxy_dir = proxied.then(|| {
            tempfile::Builder::new()
                .prefix("kcrp-")
                .tempdir_in("/tmp")
                .expect("a directory for the CRI proxies")
        });
        // The daemons use the cluster's client as they would their own kubeconfig.
        let daemon_client = cluster.client();
        let mut daemons = Vec::new();
        let mut proxies = BTreeMap::new();
        for name in nodes.names().to_vec() {
            let mut socket = nodes.cri_socket(&name);
            if let Some(dir) = &proxy_dir {
                let path = dir.path().join(format!("{name}.sock"));
                proxies.insert(name.clone(), CriProxy::start(&path, &socket));
                socket = path;
            }
            let mut config = DaemonConfig::new(&name);
            config.runtime_endpoint = Some(socket);
            config.health_addr = SocketAddr::from(([127, 0, 0, 1], 0));
            config.monitor.healthy_interval = Duration::from_millis(500);
            config.monitor.max_backoff = Duration::from_secs(1);
            let daemon = spawn_daemon(daemon_client.clone(), config).await.expect("starting a node daemon");
            daemons.push((name, daemon));
        }
        let kit = Self {
            jobs,
            lists: Api::namespaced(client.clone(), NAMESPACE),
            node_images: Api::all(client.clone()),
            nodes: Some(nodes),
            manager: Some(manager),
            daemons,
            proxies,
            proxy_dir,
        };
        for name in kit.node_names() {
            kit.wait_node_image(&name, "created for its node", |_| true).await;
        }
        for (name, _) in &kit.daemons {
            kit.wait_readyz(name, 200).await;
        }
        kit
    }

    /// The node names.
    pub fn node_names(&self) -> Vec<String> {
        self.nodes.as_ref().map(|n| n.names().to_vec()).unwrap_or_default()
    }

    /// The daemon of a node.
    pub fn daemon(&self, node: &str) -> &RunningDaemon {
        &self.daemons.iter().find(|(name, _)| name == node).expect("a daemon for the node").1
    }

    /// Stops the daemons, the manager and the nodes.
    pub async fn shutdown(mut self) {
        for (_, daemon) in self.daemons.drain(..) {
            let _ = daemon.stop().await;
        }
        if let Some(manager) = self.manager.take() {
            manager.stop().await;
        }
        if let Some(nodes) = self.nodes.take() {
            nodes.shutdown().await;
        }
        for (_, proxy) in std::mem::take(&mut self.proxies) {
            proxy.stop();
        }
        drop(self.proxy_dir.take());
    }

    /// Creates an ImagePullJob from its JSON.
    pub async fn create_job(&self, manifest: Value) -> ImagePullJob {
        let job: ImagePullJob = serde_json::from_value(manifest).expect("an ImagePullJob manifest");
        self.jobs.create(&PostParams::default(), &job).await.expect("creating the ImagePullJob")
    }

    /// Waits until `check` holds for the job; panics with its status when it never does.
    pub async fn wait_job(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(&ImagePullJob) -> bool,
    ) -> ImagePullJob {
        let deadline = Instant::now() + SETTLE;
        loop {
            let job = self.jobs.get_opt(name).await.expect("reading the job");
            if let Some(job) = &job
                && check(job)
            {
                return job.clone();
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for ImagePullJob {name}: {what}\njob: {}\nnodeimages: {}",
                    serde_json::to_string_pretty(&job).unwrap(),
                    self.node_images_summary().await
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until the job is gone.
    pub async fn wait_job_gone(&self, name: &str) {
        let deadline = Instant::now() + SETTLE;
        while self.jobs.get_opt(name).await.expect("reading the job").is_some() {
            assert!(Instant::now() < deadline, "ImagePullJob {name} was never deleted");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until `check` holds for a node's NodeImage.
    pub async fn wait_node_image(
        &self,
        node: &str,
        what: &str,
        check: impl Fn(&NodeImage) -> bool,
    ) -> NodeImage {
        let deadline = Instant::now() + SETTLE;
        loop {
            let current = self.node_images.get_opt(node).await.expect("reading the NodeImage");
            if let Some(current) = &current
                && check(current)
            {
                return current.clone();
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for NodeImage {node}: {what}\nnow: {}",
                    serde_json::to_string_pretty(&current).unwrap()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Every NodeImage, shortened, for failure messages.
    pub async fn node_images_summary(&self) -> String {
        let list = self.node_images.list(&ListParams::default()).await.map(|l| l.items).unwrap_or_default();
        let summary: Vec<Value> = list
            .iter()
            .map(|ni| serde_json::json!({"name": ni.name_any(), "spec": ni.spec, "status": ni.status}))
            .collect();
        serde_json::to_string_pretty(&summary).unwrap_or_default()
    }

    /// The image references the node's runtime lists (CRI `ListImages`).
    pub async fn cri_images(&self, node: &str) -> Vec<String> {
        let socket = self.nodes.as_ref().expect("nodes").cri_socket(node);
        let mut client =
            cri::image_service_client::ImageServiceClient::new(connect_cri(&socket).await.unwrap());
        let response =
            client.list_images(cri::ListImagesRequest { filter: None }).await.unwrap().into_inner();
        let mut images: Vec<String> = response.images.into_iter().flat_map(|image| image.repo_tags).collect();
        images.sort();
        images
    }

    /// The node daemon's `/readyz` answer.
    pub async fn readyz(&self, node: &str) -> (u16, String) {
        let addr = self.daemon(node).started.health_addr;
        match reqwest::get(format!("http://{addr}/readyz")).await {
            Ok(response) => (response.status().as_u16(), response.text().await.unwrap_or_default()),
            Err(error) => (0, error.to_string()),
        }
    }

    /// Waits until the node daemon's `/readyz` answers `code`; returns the body.
    pub async fn wait_readyz(&self, node: &str, code: u16) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (status, body) = self.readyz(node).await;
            if status == code {
                return body;
            }
            assert!(
                Instant::now() < deadline,
                "the daemon of {node} answered /readyz {status} ({body}), not {code}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Starts watching the NodeImages for how many nodes have an unfinished pull of `image`
    /// (`name`, `tag`) at once.
    pub fn watch_concurrency(&self, name: &str, tag: &str) -> Concurrency {
        Concurrency::start(self.node_images.clone(), name, tag)
    }
}

/// A unix socket that forwards every connection to a node's CRI socket, until stopped (then
/// its socket file and every open connection are gone, as when containerd stops).
pub struct CriProxy {
    path: PathBuf,
    task: JoinHandle<()>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl CriProxy {
    /// Listens on `path`, forwarding to `target`.
    pub fn start(path: &Path, target: &Path) -> Self {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).expect("binding the CRI proxy");
        let connections: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let (target, open) = (target.to_path_buf(), connections.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let target = target.clone();
                open.lock().push(tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::UnixStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                }));
            }
        });
        Self { path: path.to_path_buf(), task, connections }
    }

    /// Stops listening and cuts every connection.
    pub fn stop(self) {
        self.task.abort();
        for connection in self.connections.lock().drain(..) {
            connection.abort();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What a [`Concurrency`] watcher saw.
#[derive(Clone, Debug, Default)]
pub struct ConcurrencySeen {
    /// Most nodes with an unfinished pull of the image at once.
    pub max_active: usize,
    /// Nodes that ever had the image in their spec.
    pub nodes: std::collections::BTreeSet<String>,
    /// NodeImage events processed.
    pub events: usize,
}

/// Watches NodeImages and counts, on every event, the nodes whose spec has the tag and whose
/// status does not yet report it finished (Succeeded or Failed) at the spec's version.
pub struct Concurrency {
    seen: Arc<Mutex<ConcurrencySeen>>,
    task: JoinHandle<()>,
}

impl Concurrency {
    fn start(api: Api<NodeImage>, name: &str, tag: &str) -> Self {
        let seen = Arc::new(Mutex::new(ConcurrencySeen::default()));
        let (name, tag, record) = (name.to_string(), tag.to_string(), seen.clone());
        let task = tokio::spawn(async move {
            let mut active: BTreeMap<String, bool> = BTreeMap::new();
            let mut stream = watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = stream.next().await {
                let (node_image, deleted) = match event {
                    Ok(watcher::Event::Apply(ni)) | Ok(watcher::Event::InitApply(ni)) => (ni, false),
                    Ok(watcher::Event::Delete(ni)) => (ni, true),
                    _ => continue,
                };
                let node = node_image.name_any();
                let spec =
                    node_image.spec.images.get(&name).and_then(|i| i.tags.iter().find(|t| t.tag == tag));
                let unfinished = !deleted
                    && spec.is_some_and(|spec| {
                        let status = node_image
                            .status
                            .as_ref()
                            .and_then(|s| s.image_statuses.get(&name))
                            .and_then(|s| s.tags.iter().find(|t| t.tag == tag));
                        status.is_none_or(|s| {
                            s.version != spec.version
                                || !matches!(s.phase, ImagePullPhase::Succeeded | ImagePullPhase::Failed)
                        })
                    });
                active.insert(node.clone(), unfinished);
                let mut seen = record.lock();
                if spec.is_some() {
                    seen.nodes.insert(node);
                }
                seen.events += 1;
                let now = active.values().filter(|a| **a).count();
                seen.max_active = seen.max_active.max(now);
            }
        });
        Self { seen, task }
    }

    /// What was seen so far.
    pub fn seen(&self) -> ConcurrencySeen {
        self.seen.lock().clone()
    }
}

impl Drop for Concurrency {
    fn drop(&mut self) {
        self.task.abort();
    }
}
