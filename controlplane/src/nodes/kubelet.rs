//! The simulated kubelet of one node: registers the Node (labels, capacity, addresses, Ready
//! condition), renews its Lease, reports its images, and runs one pod worker per pod bound to
//! it. It is a plain API client: it watches its pods by `spec.nodeName` and writes pod status,
//! exactly as a real kubelet does, so it runs against any Kubernetes API server.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    net::Ipv4Addr,
    path::PathBuf,
    sync::Arc,
    time::Duration,
};

use futures::StreamExt;
use k8s_openapi::{
    api::{
        coordination::v1::{Lease, LeaseSpec},
        core::v1::{
            ContainerImage, DaemonEndpoint, Node, NodeAddress, NodeCondition, NodeDaemonEndpoints, NodeSpec,
            NodeStatus, NodeSystemInfo, ObjectReference, Pod, Taint,
        },
    },
    apimachinery::pkg::{
        api::resource::Quantity,
        apis::meta::v1::{MicroTime, ObjectMeta, Time},
    },
    jiff::Timestamp,
};
use kube::{
    Api, Client,
    api::{Patch, PatchParams, PostParams},
    runtime::{
        WatchStreamExt,
        events::{Event as KubeEvent, EventType, Recorder, Reporter},
        watcher,
    },
};
use parking_lot::Mutex;
use serde_json::json;
use tokio::{sync::watch, task::JoinHandle};

use super::{
    admission,
    conventions::ANNOTATION_NODE_READY,
    pod_worker::PodWorker,
    runtime::{NodeRuntime, PullTiming},
};

/// The version the simulated kubelet reports.
pub const KUBELET_VERSION: &str = "v1.34.4-kruise-sim";
/// Field manager of the kubelet's writes.
pub const FIELD_MANAGER: &str = "kubelet";

/// Capacity of a simulated node.
#[derive(Clone, Debug)]
pub struct NodeCapacity {
    /// CPU cores (`"8"`).
    pub cpu: String,
    /// Memory (`"32Gi"`).
    pub memory: String,
    /// Max pods.
    pub pods: u32,
    /// Ephemeral storage (`"100Gi"`).
    pub ephemeral_storage: String,
}

impl Default for NodeCapacity {
    fn default() -> Self {
        Self { cpu: "8".into(), memory: "32Gi".into(), pods: 110, ephemeral_storage: "100Gi".into() }
    }
}

/// How fast a simulated node does things.
#[derive(Clone, Debug)]
pub struct NodeTiming {
    /// Image pull times.
    pub pull: PullTiming,
    /// From "image ready" to "container running".
    pub start: Duration,
    /// Minimum time from start to ready for containers with a readiness probe.
    pub readiness: Duration,
    /// First restart back-off of an exited container (doubles per restart, capped at 10x).
    pub restart_backoff: Duration,
    /// First back-off after a failed pull (doubles, capped at 10x).
    pub pull_backoff: Duration,
    /// Lease renewal period (node heartbeat).
    pub heartbeat: Duration,
    /// Full node status report period (conditions and images are also sent when they change).
    pub status_report: Duration,
    /// From a deleted pod's last container stopping to its removal from the API. A kubelet
    /// reports the terminal status first and removes the pod only once its volumes and cgroup
    /// are reclaimed (housekeeping runs every 2 s), so on a real node a deleted pod stays
    /// listed for a second or more; clients that count pods (upstream's e2e specs among them)
    /// see that. Zero removes the pod at once, which keeps tests fast.
    pub removal: Duration,
    /// From a container's postStart hook ending to the container counting as ready. The
    /// kubelet runs the hook inside the pod sync and learns the outcome on its next pass over
    /// the pod (the PLEG relists every second), so on a real node the container turns ready
    /// about a second after its hook ended. Clients compare these times at the API's second
    /// precision: upstream's e2e specs check that the next in-place batch stops a container
    /// more than the hook's 10 s after the first batch's container started.
    pub post_start_report: Duration,
}

impl Default for NodeTiming {
    fn default() -> Self {
        Self {
            pull: PullTiming::default(),
            start: Duration::from_millis(50),
            readiness: Duration::from_millis(0),
            restart_backoff: Duration::from_millis(200),
            pull_backoff: Duration::from_millis(500),
            heartbeat: Duration::from_secs(10),
            status_report: Duration::from_secs(60),
            removal: Duration::ZERO,
            post_start_report: Duration::from_secs(1),
        }
    }
}

/// One simulated node.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// Node name (also its hostname label).
    pub name: String,
    /// Index used for its addresses: InternalIP `172.18.x.y`, pod CIDR `10.x.y.0/24`.
    pub index: u32,
    /// `topology.kubernetes.io/zone`.
    pub zone: Option<String>,
    /// `topology.kubernetes.io/region`.
    pub region: Option<String>,
    /// Extra labels.
    pub labels: BTreeMap<String, String>,
    /// Taints it registers with.
    pub taints: Vec<Taint>,
    /// Capacity (allocatable is the same: nothing is reserved).
    pub capacity: NodeCapacity,
    /// Timing.
    pub timing: NodeTiming,
    /// Serve the CRI on this unix socket.
    pub cri_socket: Option<PathBuf>,
    /// Port of the kubelet's HTTPS server (logs, exec, attach), as reported in
    /// `status.daemonEndpoints`; [`SimulatedNode::start`] sets it to the free loopback port
    /// it binds.
    pub kubelet_port: u16,
}

impl NodeConfig {
    /// A node with defaults.
    pub fn new(name: &str, index: u32) -> Self {
        Self {
            name: name.to_string(),
            index,
            zone: None,
            region: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            capacity: NodeCapacity::default(),
            timing: NodeTiming::default(),
            cri_socket: None,
            kubelet_port: 10250,
        }
    }

    /// The node's InternalIP.
    pub fn internal_ip(&self) -> Ipv4Addr {
        let n = self.index + 2;
        Ipv4Addr::new(172, 18, (n / 250) as u8, (n % 250) as u8)
    }

    /// The node's pod CIDR base (`10.244.1.0` for index 1).
    pub fn pod_cidr_base(&self) -> Ipv4Addr {
        let n = 244 * 256 + self.index;
        Ipv4Addr::new(10, (n / 256).min(255) as u8, (n % 256) as u8, 0)
    }

    /// The labels the node registers with.
    pub fn node_labels(&self) -> BTreeMap<String, String> {
        let mut labels = BTreeMap::from([
            ("kubernetes.io/hostname".to_string(), self.name.clone()),
            ("kubernetes.io/os".to_string(), "linux".to_string()),
            ("kubernetes.io/arch".to_string(), "amd64".to_string()),
            ("beta.kubernetes.io/os".to_string(), "linux".to_string()),
            ("beta.kubernetes.io/arch".to_string(), "amd64".to_string()),
        ]);
        if let Some(zone) = &self.zone {
            labels.insert("topology.kubernetes.io/zone".into(), zone.clone());
        }
        if let Some(region) = &self.region {
            labels.insert("topology.kubernetes.io/region".into(), region.clone());
        }
        labels.extend(self.labels.clone());
        labels
    }
}

/// Why a node could not start.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The API refused the Node or Lease.
    #[error("registering node {node}: {source}")]
    Register {
        /// Node name.
        node: String,
        /// API error.
        source: kube::Error,
    },
    /// The kubelet's HTTPS server could not listen.
    #[error("serving the kubelet endpoints of node {node}: {message}")]
    KubeletServer {
        /// Node name.
        node: String,
        /// What failed.
        message: String,
    },
    /// The CRI socket could not be served.
    #[error("serving the CRI of node {node}: {message}")]
    Cri {
        /// Node name.
        node: String,
        /// What failed.
        message: String,
    },
}

/// What the kubelet's parts share: the API client, the runtime, the node's settings and state.
pub(crate) struct Kubelet {
    pub client: Client,
    pub runtime: NodeRuntime,
    pub config: NodeConfig,
    pub recorder: Recorder,
    /// False while the node is made NotReady (pods are not synced).
    pub ready: watch::Receiver<bool>,
    /// Serializes image pulls, as the kubelet does by default.
    pub pull_lock: tokio::sync::Mutex<()>,
    ips: Mutex<HashSet<Ipv4Addr>>,
}

impl Kubelet {
    /// The node's InternalIP as text.
    pub fn host_ip(&self) -> String {
        self.config.internal_ip().to_string()
    }

    /// A free pod IP in the node's CIDR.
    pub fn allocate_ip(&self) -> Ipv4Addr {
        let base = self.config.pod_cidr_base().octets();
        let mut used = self.ips.lock();
        let free = (2..=254u8)
            .map(|last| Ipv4Addr::new(base[0], base[1], base[2], last))
            .find(|ip| !used.contains(ip))
            .unwrap_or(Ipv4Addr::new(base[0], base[1], base[2], 254));
        used.insert(free);
        free
    }

    /// Marks a pod IP as taken (pods adopted after a restart).
    pub fn claim_ip(&self, ip: Ipv4Addr) {
        self.ips.lock().insert(ip);
    }

    /// Frees a pod IP.
    pub fn release_ip(&self, ip: &str) {
        if let Ok(ip) = ip.parse() {
            self.ips.lock().remove(&ip);
        }
    }

    /// Whether the node currently syncs pods.
    pub fn is_ready(&self) -> bool {
        *self.ready.borrow()
    }

    /// Publishes an event about a pod (in the background: events never block a pod).
    pub fn event(&self, pod: &Pod, field_path: Option<String>, warning: bool, reason: &str, note: String) {
        let reference = ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            name: pod.metadata.name.clone(),
            namespace: pod.metadata.namespace.clone(),
            uid: pod.metadata.uid.clone(),
            field_path,
            ..Default::default()
        };
        let event = KubeEvent {
            type_: if warning { EventType::Warning } else { EventType::Normal },
            reason: reason.to_string(),
            note: Some(note),
            action: reason.to_string(),
            secondary: None,
        };
        let recorder = self.recorder.clone();
        tokio::spawn(async move {
            if let Err(error) = recorder.publish(&event, &reference).await {
                tracing::debug!(%error, "could not publish a kubelet event");
            }
        });
    }
}

/// A running simulated node.
pub struct SimulatedNode {
    /// Node name.
    pub name: String,
    runtime: NodeRuntime,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl SimulatedNode {
    /// Registers the node and starts its kubelet (and CRI server when configured).
    pub async fn start(client: Client, mut config: NodeConfig) -> Result<Self, NodeError> {
        let runtime = NodeRuntime::new(&config.name, config.timing.pull.clone());
        let server_error = |error: std::io::Error| NodeError::KubeletServer {
            node: config.name.clone(),
            message: error.to_string(),
        };
        let listener = super::kubelet_server::bind().await.map_err(server_error)?;
        config.kubelet_port = listener.local_addr().map_err(server_error)?.port();
        register(&client, &config, &runtime).await?;
        let (ready_tx, ready_rx) = watch::channel(true);
        let reporter = Reporter { controller: "kubelet".into(), instance: Some(config.name.clone()) };
        let kubelet = Arc::new(Kubelet {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            runtime: runtime.clone(),
            config: config.clone(),
            ready: ready_rx,
            pull_lock: tokio::sync::Mutex::new(()),
            ips: Mutex::new(HashSet::new()),
        });
        let (stop, stop_rx) = watch::channel(false);
        let mut tasks = vec![
            tokio::spawn(heartbeat(kubelet.clone(), stop_rx.clone())),
            tokio::spawn(watch_node(kubelet.clone(), ready_tx)),
            tokio::spawn(run_pods(kubelet.clone())),
        ];
        {
            let runtime = runtime.clone();
            let mut stop_server = stop_rx.clone();
            let name = config.name.clone();
            tasks.push(tokio::spawn(async move {
                let shutdown = async move {
                    let _ = stop_server.wait_for(|stop| *stop).await;
                };
                if let Err(error) = super::kubelet_server::serve(listener, runtime, shutdown).await {
                    tracing::error!(node = %name, %error, "the kubelet server stopped");
                }
            }));
        }
        if let Some(socket) = &config.cri_socket {
            let socket = socket.clone();
            let runtime = runtime.clone();
            let mut stop_cri = stop_rx.clone();
            let name = config.name.clone();
            tasks.push(tokio::spawn(async move {
                let shutdown = async move {
                    let _ = stop_cri.wait_for(|stop| *stop).await;
                };
                if let Err(error) = super::cri::serve_cri(runtime, &socket, shutdown).await {
                    tracing::error!(node = %name, %error, "the CRI server stopped");
                }
            }));
        }
        tracing::info!(node = %config.name, "simulated node started");
        Ok(Self { name: config.name, runtime, stop, tasks })
    }

    /// The node's container runtime (what its CRI server serves).
    pub fn runtime(&self) -> &NodeRuntime {
        &self.runtime
    }

    /// Stops the kubelet as if the machine went away: no more heartbeats or pod updates. The
    /// Node and its pods stay in the API (the node lifecycle controller marks it Unknown).
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

fn quantity(text: &str) -> Quantity {
    Quantity(text.to_string())
}

fn capacity_map(capacity: &NodeCapacity) -> BTreeMap<String, Quantity> {
    BTreeMap::from([
        ("cpu".to_string(), quantity(&capacity.cpu)),
        ("memory".to_string(), quantity(&capacity.memory)),
        ("pods".to_string(), quantity(&capacity.pods.to_string())),
        ("ephemeral-storage".to_string(), quantity(&capacity.ephemeral_storage)),
        ("hugepages-1Gi".to_string(), quantity("0")),
        ("hugepages-2Mi".to_string(), quantity("0")),
    ])
}

/// The node status the kubelet reports, with the Ready condition it wants (`ready`), keeping
/// transition times from `previous` conditions whose status did not change.
pub fn node_status(
    config: &NodeConfig,
    runtime: &NodeRuntime,
    ready: bool,
    previous: &[NodeCondition],
    now: Timestamp,
) -> NodeStatus {
    let condition = |kind: &str, status: bool, reason: &str, message: &str| {
        let status = if status { "True" } else { "False" }.to_string();
        let transition = previous
            .iter()
            .find(|c| c.type_ == kind && c.status == status)
            .and_then(|c| c.last_transition_time.clone())
            .unwrap_or(Time(now));
        NodeCondition {
            type_: kind.to_string(),
            status,
            reason: Some(reason.to_string()),
            message: Some(message.to_string()),
            last_heartbeat_time: Some(Time(now)),
            last_transition_time: Some(transition),
        }
    };
    let ready_condition = if ready {
        condition("Ready", true, "KubeletReady", "kubelet is posting ready status")
    } else {
        condition("Ready", false, "KubeletNotReady", "container runtime is down (simulated)")
    };
    let mut images: Vec<ContainerImage> = runtime
        .images()
        .into_iter()
        .map(|image| ContainerImage {
            names: Some(vec![
                super::runtime::repo_digest(&image.reference, &image.id),
                image.reference.clone(),
            ]),
            size_bytes: Some(image.size as i64),
        })
        .collect();
    images.sort_by(|a, b| a.names.cmp(&b.names));
    NodeStatus {
        capacity: Some(capacity_map(&config.capacity)),
        allocatable: Some(capacity_map(&config.capacity)),
        conditions: Some(vec![
            condition(
                "MemoryPressure",
                false,
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            condition("DiskPressure", false, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            condition(
                "PIDPressure",
                false,
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            ready_condition,
        ]),
        // The kubelet server listens on loopback: API servers reach it through the
        // `InternalDNS` address (kube-apiserver with `--kubelet-preferred-address-types`
        // starting with InternalDNS; the embedded API server prefers it by default).
        addresses: Some(vec![
            NodeAddress { type_: "InternalIP".into(), address: config.internal_ip().to_string() },
            NodeAddress { type_: "InternalDNS".into(), address: super::kubelet_server::KUBELET_HOST.into() },
            NodeAddress { type_: "Hostname".into(), address: config.name.clone() },
        ]),
        daemon_endpoints: Some(NodeDaemonEndpoints {
            kubelet_endpoint: Some(DaemonEndpoint { port: i32::from(config.kubelet_port) }),
        }),
        node_info: Some(NodeSystemInfo {
            architecture: "amd64".into(),
            boot_id: format!("sim-boot-{}", config.name),
            container_runtime_version: "kruise-sim://0.1.0".into(),
            kernel_version: "6.1.0-sim".into(),
            kube_proxy_version: String::new(),
            kubelet_version: KUBELET_VERSION.into(),
            machine_id: format!("sim-machine-{}", config.name),
            operating_system: "linux".into(),
            os_image: "kruise-rs simulated node".into(),
            system_uuid: format!("sim-{}", config.name),
            ..Default::default()
        }),
        images: Some(images),
        ..Default::default()
    }
}

async fn register(client: &Client, config: &NodeConfig, runtime: &NodeRuntime) -> Result<(), NodeError> {
    let nodes: Api<Node> = Api::all(client.clone());
    let error = |source| NodeError::Register { node: config.name.clone(), source };
    let cidr = format!("{}/24", config.pod_cidr_base());
    let now = Timestamp::now();
    let node = Node {
        metadata: ObjectMeta {
            name: Some(config.name.clone()),
            labels: Some(config.node_labels()),
            annotations: Some(BTreeMap::from([(
                "node.alpha.kubernetes.io/ttl".to_string(),
                "0".to_string(),
            )])),
            ..Default::default()
        },
        spec: Some(NodeSpec {
            pod_cidr: Some(cidr.clone()),
            pod_cidrs: Some(vec![cidr]),
            taints: (!config.taints.is_empty()).then(|| config.taints.clone()),
            ..Default::default()
        }),
        status: None,
    };
    let existing = nodes.get_opt(&config.name).await.map_err(error)?;
    let previous = match existing {
        None => {
            nodes
                .create(
                    &PostParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() },
                    &node,
                )
                .await
                .map_err(error)?;
            Vec::new()
        }
        Some(existing) => {
            // A restarted kubelet keeps the Node and refreshes its labels.
            let patch = json!({"metadata": {"labels": config.node_labels()}});
            nodes.patch(&config.name, &PatchParams::default(), &Patch::Merge(&patch)).await.map_err(error)?;
            existing.status.and_then(|s| s.conditions).unwrap_or_default()
        }
    };
    let status = node_status(config, runtime, true, &previous, now);
    let patch = json!({"status": status});
    nodes.patch_status(&config.name, &PatchParams::default(), &Patch::Merge(&patch)).await.map_err(error)?;
    renew_lease(client, &config.name, config.timing.heartbeat).await.map_err(error)?;
    Ok(())
}

async fn renew_lease(client: &Client, node: &str, period: Duration) -> Result<(), kube::Error> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-node-lease");
    let now = MicroTime(Timestamp::now());
    match leases.get_opt(node).await? {
        Some(mut lease) => {
            let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
            spec.renew_time = Some(now);
            spec.holder_identity = Some(node.to_string());
            leases.replace(node, &PostParams::default(), &lease).await?;
        }
        None => {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(node.to_string()),
                    namespace: Some("kube-node-lease".into()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(node.to_string()),
                    lease_duration_seconds: Some((period.as_secs() as i32 * 4).max(40)),
                    renew_time: Some(now),
                    ..Default::default()
                }),
            };
            leases.create(&PostParams::default(), &lease).await?;
        }
    }
    Ok(())
}

/// Renews the Lease every heartbeat and reports node status when it changes (readiness,
/// images) or every `status_report`.
async fn heartbeat(kubelet: Arc<Kubelet>, mut stop: watch::Receiver<bool>) {
    let nodes: Api<Node> = Api::all(kubelet.client.clone());
    let name = kubelet.config.name.clone();
    let mut ready = kubelet.ready.clone();
    let mut last_lease = tokio::time::Instant::now();
    let mut last_report = tokio::time::Instant::now();
    let mut reported: Option<(bool, Vec<String>)> = None;
    let mut runtime_events = kubelet.runtime.subscribe();
    loop {
        let is_ready = *ready.borrow();
        let images: Vec<String> = kubelet.runtime.images().into_iter().map(|i| i.reference).collect();
        let changed = reported.as_ref() != Some(&(is_ready, images.clone()));
        if changed || last_report.elapsed() >= kubelet.config.timing.status_report {
            let previous = match nodes.get_opt(&name).await {
                Ok(Some(node)) => node.status.and_then(|s| s.conditions).unwrap_or_default(),
                Ok(None) => {
                    tracing::warn!(node = %name, "the Node object is gone; the kubelet stops reporting");
                    return;
                }
                Err(error) => {
                    tracing::debug!(node = %name, %error, "could not read the node");
                    Vec::new()
                }
            };
            let status =
                node_status(&kubelet.config, &kubelet.runtime, is_ready, &previous, Timestamp::now());
            match nodes
                .patch_status(&name, &PatchParams::default(), &Patch::Merge(&json!({"status": status})))
                .await
            {
                Ok(_) => {
                    reported = Some((is_ready, images));
                    last_report = tokio::time::Instant::now();
                }
                Err(error) => tracing::debug!(node = %name, %error, "could not report node status"),
            }
        }
        if last_lease.elapsed() >= kubelet.config.timing.heartbeat {
            if let Err(error) = renew_lease(&kubelet.client, &name, kubelet.config.timing.heartbeat).await {
                tracing::debug!(node = %name, %error, "could not renew the node lease");
            }
            last_lease = tokio::time::Instant::now();
        }
        let wait = kubelet
            .config
            .timing
            .heartbeat
            .saturating_sub(last_lease.elapsed())
            .max(Duration::from_millis(10));
        tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return,
            _ = ready.changed() => {}
            _ = runtime_events.recv() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// Follows the node's own object: the `sim.kruise.io/ready` annotation switches readiness.
async fn watch_node(kubelet: Arc<Kubelet>, ready: watch::Sender<bool>) {
    let nodes: Api<Node> = Api::all(kubelet.client.clone());
    let config = watcher::Config::default().fields(&format!("metadata.name={}", kubelet.config.name));
    let mut stream = watcher(nodes, config).default_backoff().applied_objects().boxed();
    while let Some(item) = stream.next().await {
        let Ok(node) = item else { continue };
        let wanted = node
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(ANNOTATION_NODE_READY))
            .is_none_or(|value| !value.eq_ignore_ascii_case("false"));
        ready.send_if_modified(|current| {
            let changed = *current != wanted;
            *current = wanted;
            changed
        });
    }
}

/// Watches the pods bound to the node and runs one worker per pod.
async fn run_pods(kubelet: Arc<Kubelet>) {
    let pods: Api<Pod> = Api::all(kubelet.client.clone());
    let config = watcher::Config::default().fields(&format!("spec.nodeName={}", kubelet.config.name));
    let mut stream = watcher(pods, config).default_backoff().boxed();
    let mut workers: HashMap<String, watch::Sender<Option<Arc<Pod>>>> = HashMap::new();
    let mut listed: HashSet<String> = HashSet::new();
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                tracing::debug!(node = %kubelet.config.name, %error, "pod watch error");
                continue;
            }
        };
        workers.retain(|_, sender| !sender.is_closed());
        match event {
            watcher::Event::Init => listed.clear(),
            watcher::Event::InitApply(pod) => {
                if let Some(uid) = pod.metadata.uid.clone() {
                    listed.insert(uid);
                }
                dispatch(&kubelet, &mut workers, pod);
            }
            watcher::Event::InitDone => {
                for (uid, sender) in &workers {
                    if !listed.contains(uid) {
                        let _ = sender.send(None);
                    }
                }
            }
            watcher::Event::Apply(pod) => dispatch(&kubelet, &mut workers, pod),
            watcher::Event::Delete(pod) => {
                if let Some(sender) = pod.metadata.uid.as_ref().and_then(|uid| workers.get(uid)) {
                    let _ = sender.send(None);
                }
            }
        }
    }
}

fn dispatch(
    kubelet: &Arc<Kubelet>,
    workers: &mut HashMap<String, watch::Sender<Option<Arc<Pod>>>>,
    pod: Pod,
) {
    let Some(uid) = pod.metadata.uid.clone() else { return };
    let pod = Arc::new(pod);
    match workers.get(&uid) {
        Some(sender) => {
            let _ = sender.send(Some(pod));
        }
        None => {
            let rejection = if admission::needs_admission(&pod) {
                let running: Vec<Arc<Pod>> = workers.values().filter_map(|w| w.borrow().clone()).collect();
                let running: Vec<&Pod> = running.iter().map(Arc::as_ref).collect();
                admission::admit(&pod, &running).err()
            } else {
                None
            };
            if let Some(rejection) = &rejection {
                tracing::debug!(node = %kubelet.config.name, pod = ?pod.metadata.name, reason = %rejection.reason,
                    "pod rejected at admission");
            }
            let (sender, receiver) = watch::channel(Some(pod));
            workers.insert(uid, sender);
            tokio::spawn(PodWorker::new(kubelet.clone(), receiver, rejection).run());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_labels_follow_the_index_and_zone() {
        let mut config = NodeConfig::new("sim-node-2", 2);
        config.zone = Some("zone-b".into());
        assert_eq!(config.internal_ip(), Ipv4Addr::new(172, 18, 0, 4));
        assert_eq!(config.pod_cidr_base(), Ipv4Addr::new(10, 244, 2, 0));
        assert_eq!(NodeConfig::new("n", 300).pod_cidr_base(), Ipv4Addr::new(10, 245, 44, 0));
        let labels = config.node_labels();
        assert_eq!(labels["kubernetes.io/hostname"], "sim-node-2");
        assert_eq!(labels["topology.kubernetes.io/zone"], "zone-b");
        assert!(!labels.contains_key("topology.kubernetes.io/region"));
    }

    #[test]
    fn node_status_keeps_transition_times_and_reports_not_ready() {
        let config = NodeConfig::new("n", 0);
        let runtime = NodeRuntime::new("n", PullTiming::default());
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let t1: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let first = node_status(&config, &runtime, true, &[], t0);
        let conditions = first.conditions.clone().unwrap();
        let again = node_status(&config, &runtime, true, &conditions, t1);
        let ready = again.conditions.unwrap().into_iter().find(|c| c.type_ == "Ready").unwrap();
        assert_eq!(ready.last_transition_time, Some(Time(t0)));
        assert_eq!(ready.last_heartbeat_time, Some(Time(t1)));
        let down = node_status(&config, &runtime, false, &conditions, t1);
        let ready = down.conditions.unwrap().into_iter().find(|c| c.type_ == "Ready").unwrap();
        assert_eq!((ready.status.as_str(), ready.last_transition_time), ("False", Some(Time(t1))));
        assert_eq!(first.allocatable.unwrap()["pods"].0, "110");
    }
}
