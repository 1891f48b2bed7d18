//! The simulated container runtime of one node: images, pod sandboxes and containers, shared by
//! the node's kubelet (which starts and restarts containers for pods) and its CRI server (which
//! lets the node daemon pull images, list and stop containers and exec into them over the real
//! CRI protocol). A change made through either side is seen by the other.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
    time::Duration,
};

use k8s_openapi::api::core::v1::Probe;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use tokio::sync::{broadcast, watch};

use super::{
    conventions::ENV_EXEC_EXIT,
    files::{self, ContainerFiles, Mount},
    shell,
};

/// Registry host whose images always fail to pull (test convention).
pub const FAILING_REGISTRY: &str = "invalid.example";

/// Whether pulls from `host` fail as from an unreachable registry: [`FAILING_REGISTRY`], a host
/// named `invalid.*` (Kubernetes' e2e images use `invalid.registry.k8s.io` for a pull that must
/// fail) or under the reserved `.invalid` top-level domain (RFC 2606).
pub fn is_unreachable_registry(host: &str) -> bool {
    host == FAILING_REGISTRY || host.starts_with("invalid.") || host.ends_with(".invalid")
}

/// How long pulls take on this node.
#[derive(Clone, Debug)]
pub struct PullTiming {
    /// Pull time of an image not yet on the node.
    pub first_pull: Duration,
    /// Time to "pull" an image already present (with policy Always).
    pub cached_pull: Duration,
}

impl Default for PullTiming {
    fn default() -> Self {
        Self { first_pull: Duration::from_millis(300), cached_pull: Duration::from_millis(20) }
    }
}

/// One image on the node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Image reference as pulled (`nginx:1.25`).
    pub reference: String,
    /// Stable digest of the reference (`sha256:...`).
    pub id: String,
    /// Size reported to the CRI (bytes).
    pub size: u64,
}

/// State of a container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerState {
    /// Created, not started.
    Created,
    /// Running.
    Running,
    /// Exited (see `exit_code`).
    Exited,
}

/// One container (one incarnation: a restart creates a new one with a new id).
#[derive(Clone, Debug)]
pub struct Container {
    /// Runtime id (64 hex characters, without the `containerd://` prefix).
    pub id: String,
    /// Sandbox (pod) id.
    pub sandbox_id: String,
    /// Container name in the pod.
    pub name: String,
    /// Image reference.
    pub image: String,
    /// Image id it runs.
    pub image_id: String,
    /// How many times this container name was restarted in the pod when this one was created.
    pub attempt: u32,
    /// Current state.
    pub state: ContainerState,
    /// Creation time (Unix nanoseconds).
    pub created_at: i64,
    /// Start time (Unix nanoseconds, 0 when not started).
    pub started_at: i64,
    /// Finish time (Unix nanoseconds, 0 while running).
    pub finished_at: i64,
    /// Exit code once exited.
    pub exit_code: i32,
    /// Why it exited (`Completed`, `Error`, `StoppedByCRI`, ...).
    pub reason: String,
    /// Labels (pod name, namespace, uid, container name, as the kubelet sets them).
    pub labels: BTreeMap<String, String>,
    /// Annotations (incl. the kubelet's container hash).
    pub annotations: BTreeMap<String, String>,
    /// Environment the container runs with (what `ExecSync env` prints).
    pub env: BTreeMap<String, String>,
    /// What this incarnation wrote (its log: the simulated start and stop lines and what its
    /// command prints).
    pub logs: Vec<LogLine>,
    /// Exited, and the kubelet will start a new incarnation (its restart policy says so): then
    /// this one is the "previous" container whose logs `--previous` shows.
    pub restart_pending: bool,
    /// What the container's commands see on disk (the image's files and its mounts).
    pub files: ContainerFiles,
}

/// One line a container wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// When.
    pub time: k8s_openapi::jiff::Timestamp,
    /// Written to standard error (else standard output).
    pub stderr: bool,
    /// The text, without its newline.
    pub text: String,
}

/// One pod sandbox.
#[derive(Clone, Debug)]
pub struct Sandbox {
    /// Sandbox id.
    pub id: String,
    /// Pod name.
    pub pod_name: String,
    /// Pod namespace.
    pub pod_namespace: String,
    /// Pod uid.
    pub pod_uid: String,
    /// Pod IP.
    pub ip: String,
    /// Whether the sandbox is ready (false once stopped).
    pub ready: bool,
    /// Creation time (Unix nanoseconds).
    pub created_at: i64,
    /// Pod labels.
    pub labels: BTreeMap<String, String>,
}

/// A scripted answer of `ExecSync` for a command in a container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecResult {
    /// Exit code.
    pub exit_code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Something that happened in the runtime that the kubelet reacts to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuntimeEvent {
    /// A container was stopped through the CRI (the kubelet restarts it per restartPolicy).
    ContainerStopped {
        /// Container id.
        id: String,
    },
    /// An image finished pulling through the CRI.
    ImagePulled {
        /// Image reference.
        reference: String,
    },
}

/// Why a pull failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PullError {
    /// The registry refused or does not exist.
    #[error("failed to pull and unpack image {0:?}: failed to resolve reference: registry unreachable")]
    Unreachable(String),
    /// Credentials were required and not given or wrong.
    #[error("failed to pull image {0:?}: unauthorized: authentication required")]
    Unauthorized(String),
    /// The reference does not parse.
    #[error("invalid image reference {0:?}")]
    InvalidReference(String),
}

#[derive(Default)]
struct State {
    images: BTreeMap<String, Image>,
    sandboxes: HashMap<String, Sandbox>,
    containers: HashMap<String, Container>,
    exec_scripts: HashMap<(String, String), ExecResult>,
    pull_times: HashMap<String, Duration>,
    credentials: HashMap<String, (String, String)>,
}

/// The runtime of one node.
#[derive(Clone)]
pub struct NodeRuntime {
    node: String,
    timing: PullTiming,
    state: Arc<Mutex<State>>,
    events: broadcast::Sender<RuntimeEvent>,
    log_changes: Arc<watch::Sender<u64>>,
}

/// A stable digest of an image reference, as the image id the runtime reports.
pub fn image_digest(reference: &str) -> String {
    let digest = Sha256::digest(normalize_reference(reference).as_bytes());
    format!("sha256:{}", hex::encode(digest))
}

/// `nginx` -> `docker.io/library/nginx:latest`, `r.io/x:1` unchanged.
pub fn normalize_reference(reference: &str) -> String {
    let (name, digest) = match reference.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (reference, None),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    let name =
        if last.contains(':') || digest.is_some() { name.to_string() } else { format!("{name}:latest") };
    let first = name.split('/').next().unwrap_or_default();
    let has_registry =
        name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let name = match (has_registry, name.contains('/')) {
        (true, _) => name,
        (false, true) => format!("docker.io/{name}"),
        (false, false) => format!("docker.io/library/{name}"),
    };
    match digest {
        Some(digest) => format!("{name}@{digest}"),
        None => name,
    }
}

/// The repo digest the kubelet reports as a container's `imageID`
/// (`docker.io/library/nginx@sha256:...`) for an image reference and its id.
pub fn repo_digest(reference: &str, id: &str) -> String {
    let normalized = normalize_reference(reference);
    let repository = match normalized.split_once('@') {
        Some((name, _)) => name.to_string(),
        None => match normalized.rfind(':') {
            Some(colon) if !normalized[colon..].contains('/') => normalized[..colon].to_string(),
            _ => normalized.clone(),
        },
    };
    format!("{repository}@{id}")
}

/// The registry host of a reference (`docker.io` when none is named).
pub fn registry_host(reference: &str) -> String {
    normalize_reference(reference).split('/').next().unwrap_or("docker.io").to_string()
}

fn random_hex(bytes: usize) -> String {
    use rand::RngCore;
    let mut buffer = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buffer);
    hex::encode(buffer)
}

fn now_nanos() -> i64 {
    k8s_openapi::jiff::Timestamp::now().as_nanosecond() as i64
}

impl NodeRuntime {
    /// A runtime for `node` with the given pull timing.
    pub fn new(node: &str, timing: PullTiming) -> Self {
        let (events, _) = broadcast::channel(1024);
        let (log_changes, _) = watch::channel(0);
        Self {
            node: node.to_string(),
            timing,
            state: Arc::default(),
            events,
            log_changes: Arc::new(log_changes),
        }
    }

    /// The node name.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Events for the kubelet.
    pub fn subscribe(&self) -> broadcast::Receiver<RuntimeEvent> {
        self.events.subscribe()
    }

    /// Sets the pull time of one image (the `KRUISE_SIM_PULL_SECONDS` convention).
    pub fn set_pull_time(&self, reference: &str, time: Duration) {
        self.state.lock().pull_times.insert(normalize_reference(reference), time);
    }

    /// Requires `username`/`password` to pull from `registry`.
    pub fn require_credentials(&self, registry: &str, username: &str, password: &str) {
        self.state
            .lock()
            .credentials
            .insert(registry.to_string(), (username.to_string(), password.to_string()));
    }

    /// Whether an image is present.
    pub fn has_image(&self, reference: &str) -> bool {
        self.state.lock().images.contains_key(&normalize_reference(reference))
    }

    /// Every image present.
    pub fn images(&self) -> Vec<Image> {
        self.state.lock().images.values().cloned().collect()
    }

    /// One image, by reference or id.
    pub fn image(&self, reference_or_id: &str) -> Option<Image> {
        let state = self.state.lock();
        let normalized = normalize_reference(reference_or_id);
        state
            .images
            .get(&normalized)
            .cloned()
            .or_else(|| state.images.values().find(|i| i.id == reference_or_id).cloned())
    }

    /// Pulls an image (taking the simulated pull time), checking credentials when the registry
    /// requires them. `always` re-pulls a present image (policy Always) at the cached speed.
    pub async fn pull(
        &self,
        reference: &str,
        auth: Option<(&str, &str)>,
        always: bool,
    ) -> Result<Image, PullError> {
        let normalized = normalize_reference(reference);
        if reference.trim().is_empty() || reference.contains(' ') || reference.ends_with(':') {
            return Err(PullError::InvalidReference(reference.to_string()));
        }
        let host = registry_host(reference);
        if is_unreachable_registry(&host) {
            return Err(PullError::Unreachable(reference.to_string()));
        }
        let (delay, present) = {
            let state = self.state.lock();
            if let Some((username, password)) = state.credentials.get(&host) {
                match auth {
                    Some((u, p)) if u == username && p == password => {}
                    _ => return Err(PullError::Unauthorized(reference.to_string())),
                }
            }
            let present = state.images.contains_key(&normalized);
            let delay = match state.pull_times.get(&normalized) {
                Some(time) if !present => *time,
                _ if present => self.timing.cached_pull,
                _ => super::conventions::reference_pull_time(reference).unwrap_or(self.timing.first_pull),
            };
            (delay, present)
        };
        if present && !always {
            return self.image(reference).ok_or_else(|| PullError::InvalidReference(reference.to_string()));
        }
        tokio::time::sleep(delay).await;
        let image = Image { reference: normalized.clone(), id: image_digest(reference), size: 5_000_000 };
        self.state.lock().images.insert(normalized.clone(), image.clone());
        let _ = self.events.send(RuntimeEvent::ImagePulled { reference: normalized });
        Ok(image)
    }

    /// Removes an image.
    pub fn remove_image(&self, reference_or_id: &str) -> bool {
        let mut state = self.state.lock();
        let normalized = normalize_reference(reference_or_id);
        if state.images.remove(&normalized).is_some() {
            return true;
        }
        let key =
            state.images.iter().find(|(_, image)| image.id == reference_or_id).map(|(key, _)| key.clone());
        key.is_some_and(|key| state.images.remove(&key).is_some())
    }

    /// Creates (or returns the existing) sandbox of a pod.
    pub fn ensure_sandbox(
        &self,
        pod_namespace: &str,
        pod_name: &str,
        pod_uid: &str,
        ip: &str,
        labels: &BTreeMap<String, String>,
    ) -> Sandbox {
        let mut state = self.state.lock();
        if let Some(existing) = state.sandboxes.values().find(|s| s.pod_uid == pod_uid && s.ready) {
            return existing.clone();
        }
        let sandbox = Sandbox {
            id: random_hex(32),
            pod_name: pod_name.to_string(),
            pod_namespace: pod_namespace.to_string(),
            pod_uid: pod_uid.to_string(),
            ip: ip.to_string(),
            ready: true,
            created_at: now_nanos(),
            labels: labels.clone(),
        };
        state.sandboxes.insert(sandbox.id.clone(), sandbox.clone());
        sandbox
    }

    /// Removes a pod's sandbox and containers.
    pub fn remove_pod(&self, pod_uid: &str) {
        let mut state = self.state.lock();
        let sandboxes: Vec<String> =
            state.sandboxes.values().filter(|s| s.pod_uid == pod_uid).map(|s| s.id.clone()).collect();
        for id in &sandboxes {
            state.sandboxes.remove(id);
        }
        state.containers.retain(|_, c| !sandboxes.contains(&c.sandbox_id));
        drop(state);
        files::forget_pod(pod_uid);
    }

    /// Gives a container its volume mounts (the kubelet knows them from the pod spec).
    pub fn set_mounts(&self, id: &str, mounts: Vec<Mount>) {
        if let Some(container) = self.state.lock().containers.get_mut(id) {
            let image = container.image.clone();
            container.files = ContainerFiles::new(&image, mounts);
        }
    }

    /// Whether a probe of a running container passes now: an exec probe by what its command
    /// ends with, an HTTP probe by whether the image's web server has the page (images that
    /// are not known web servers answer), TCP and gRPC probes always.
    pub fn probe(&self, id: &str, probe: &Probe) -> bool {
        if let Some(command) = probe.exec.as_ref().and_then(|e| e.command.clone()) {
            return self.exec(id, &command).is_some_and(|result| result.exit_code == 0);
        }
        if let Some(http) = &probe.http_get {
            let mut state = self.state.lock();
            let Some(container) = state.containers.get_mut(id) else { return false };
            if container.state != ContainerState::Running {
                return false;
            }
            let image = container.image.clone();
            return container.files.serves(&image, http.path.as_deref().unwrap_or("/"));
        }
        true
    }

    /// Every sandbox.
    pub fn sandboxes(&self) -> Vec<Sandbox> {
        self.state.lock().sandboxes.values().cloned().collect()
    }

    /// One sandbox.
    pub fn sandbox(&self, id: &str) -> Option<Sandbox> {
        self.state.lock().sandboxes.get(id).cloned()
    }

    /// Starts a new incarnation of a container in a sandbox (the previous one, if any, stays as
    /// exited history).
    #[allow(clippy::too_many_arguments)]
    pub fn start_container(
        &self,
        sandbox_id: &str,
        name: &str,
        image: &Image,
        attempt: u32,
        labels: BTreeMap<String, String>,
        annotations: BTreeMap<String, String>,
        env: BTreeMap<String, String>,
    ) -> Container {
        let now = now_nanos();
        let container = Container {
            id: random_hex(32),
            sandbox_id: sandbox_id.to_string(),
            name: name.to_string(),
            image: image.reference.clone(),
            image_id: image.id.clone(),
            attempt,
            state: ContainerState::Running,
            created_at: now,
            started_at: now,
            finished_at: 0,
            exit_code: 0,
            reason: String::new(),
            labels,
            annotations,
            env,
            logs: vec![LogLine {
                time: k8s_openapi::jiff::Timestamp::now(),
                stderr: false,
                text: format!(
                    "kruise-sim: started container {name} (image {}, restart {attempt})",
                    image.reference
                ),
            }],
            restart_pending: false,
            files: ContainerFiles::new(&image.reference, Vec::new()),
        };
        let mut state = self.state.lock();
        // One exited incarnation is kept per name (the kubelet's garbage collection keeps one
        // dead container per container): the previous one, whose logs `--previous` shows.
        let newest_exited = state
            .containers
            .values()
            .filter(|c| c.sandbox_id == sandbox_id && c.name == name && c.state == ContainerState::Exited)
            .max_by_key(|c| c.created_at)
            .map(|c| c.id.clone());
        state.containers.retain(|id, c| {
            !(c.sandbox_id == sandbox_id
                && c.name == name
                && c.state == ContainerState::Exited
                && Some(id) != newest_exited.as_ref())
        });
        state.containers.insert(container.id.clone(), container.clone());
        drop(state);
        self.log_changes.send_modify(|n| *n += 1);
        container
    }

    /// Appends lines to a container's log (what its command prints).
    pub fn append_log(&self, id: &str, stderr: bool, text: &str) {
        if let Some(container) = self.state.lock().containers.get_mut(id) {
            let time = k8s_openapi::jiff::Timestamp::now();
            for line in text.lines() {
                container.logs.push(LogLine { time, stderr, text: line.to_string() });
            }
        }
        self.log_changes.send_modify(|n| *n += 1);
    }

    /// Marks an exited container as about to be replaced by a new incarnation.
    pub fn mark_restart_pending(&self, id: &str) {
        if let Some(container) = self.state.lock().containers.get_mut(id) {
            container.restart_pending = container.state == ContainerState::Exited;
        }
    }

    /// Changes whenever a log grows or a container exits (for `kubectl logs -f`).
    pub fn log_changes(&self) -> watch::Receiver<u64> {
        self.log_changes.subscribe()
    }

    /// The incarnations of container `name` of the pod `namespace/pod` that runs on this
    /// node, newest first (the current one, then the previous one when kept).
    pub fn incarnations(&self, namespace: &str, pod: &str, name: &str) -> Vec<Container> {
        let state = self.state.lock();
        let sandboxes: Vec<&String> = state
            .sandboxes
            .values()
            .filter(|s| s.pod_namespace == namespace && s.pod_name == pod)
            .map(|s| &s.id)
            .collect();
        let mut found: Vec<Container> = state
            .containers
            .values()
            .filter(|c| c.name == name && sandboxes.contains(&&c.sandbox_id))
            .cloned()
            .collect();
        found.sort_by_key(|c| std::cmp::Reverse((c.state == ContainerState::Running, c.created_at)));
        found
    }

    /// Whether a pod `namespace/name` has a sandbox on this node.
    pub fn has_pod(&self, namespace: &str, name: &str) -> bool {
        self.state.lock().sandboxes.values().any(|s| s.pod_namespace == namespace && s.pod_name == name)
    }

    /// Marks a container exited with a code and reason (used by the kubelet for job-style exits).
    pub fn exit_container(&self, id: &str, exit_code: i32, reason: &str) -> Option<Container> {
        let mut state = self.state.lock();
        let container = state.containers.get_mut(id)?;
        if container.state != ContainerState::Running {
            return Some(container.clone());
        }
        container.state = ContainerState::Exited;
        container.exit_code = exit_code;
        container.finished_at = now_nanos();
        container.reason = reason.to_string();
        container.logs.push(LogLine {
            time: k8s_openapi::jiff::Timestamp::now(),
            stderr: false,
            text: format!("kruise-sim: container {} exited with code {exit_code} ({reason})", container.name),
        });
        let exited = container.clone();
        drop(state);
        self.log_changes.send_modify(|n| *n += 1);
        Some(exited)
    }

    /// Stops a container through the CRI: it exits and the kubelet is told, so that it restarts
    /// it per the pod's restartPolicy. A process that exits on SIGTERM within `timeout` (its
    /// `KRUISE_SIM_TERM_SECONDS`, 0 by default, as a server handling the signal) exits 0; one
    /// that needs longer is killed (137), as containerd does after the timeout. `None` as
    /// timeout is a kill without grace.
    pub fn stop_container(&self, id: &str, timeout: Option<Duration>) -> Option<Container> {
        let container = self.container(id)?;
        let was_running = container.state == ContainerState::Running;
        let term_time = super::conventions::behaviour(&container.env).term_time;
        let graceful = timeout.is_some_and(|timeout| term_time <= timeout);
        let stopped = if graceful {
            self.exit_container(id, 0, "Completed")
        } else {
            self.exit_container(id, 137, "Error")
        };
        if stopped.is_some() && was_running {
            let _ = self.events.send(RuntimeEvent::ContainerStopped { id: id.to_string() });
        }
        stopped
    }

    /// Removes an exited container.
    pub fn remove_container(&self, id: &str) -> bool {
        self.state.lock().containers.remove(id).is_some()
    }

    /// Every container.
    pub fn containers(&self) -> Vec<Container> {
        self.state.lock().containers.values().cloned().collect()
    }

    /// One container.
    pub fn container(&self, id: &str) -> Option<Container> {
        self.state.lock().containers.get(id).cloned()
    }

    /// The running (or latest) container of a name in a pod.
    pub fn pod_container(&self, pod_uid: &str, name: &str) -> Option<Container> {
        let state = self.state.lock();
        let sandboxes: Vec<&String> =
            state.sandboxes.values().filter(|s| s.pod_uid == pod_uid).map(|s| &s.id).collect();
        state
            .containers
            .values()
            .filter(|c| c.name == name && sandboxes.contains(&&c.sandbox_id))
            .max_by_key(|c| (c.state == ContainerState::Running, c.created_at))
            .cloned()
    }

    /// Scripts the answer of `ExecSync` of `command` (joined by spaces) in container `name`
    /// of any pod; `None` removes the script.
    pub fn script_exec(&self, container_name: &str, command: &str, result: Option<ExecResult>) {
        let mut state = self.state.lock();
        let key = (container_name.to_string(), command.to_string());
        match result {
            Some(result) => {
                state.exec_scripts.insert(key, result);
            }
            None => {
                state.exec_scripts.remove(&key);
            }
        }
    }

    /// Runs a command in a container at once (exec probes): what [`Self::exec_plan`] says it
    /// ends with, without waiting for it.
    pub fn exec(&self, id: &str, command: &[String]) -> Option<ExecResult> {
        self.exec_plan(id, command, false).map(|(_, result)| result)
    }

    /// What a command run in a container does: how long it runs (`None`: until stopped) and
    /// what it ends with. Scripted results first ([`Self::script_exec`]), then the container's
    /// `KRUISE_SIM_EXEC_EXIT`, then the simulated shell ([`super::shell`]: `sleep N`, `exit N`,
    /// `sh -c '...'`, `env`, `echo`, ...). `None` when there is no such container.
    pub fn exec_plan(
        &self,
        id: &str,
        command: &[String],
        stdin: bool,
    ) -> Option<(Option<Duration>, ExecResult)> {
        let mut guard = self.state.lock();
        let state = &mut *guard;
        let container = state.containers.get_mut(id)?;
        if container.state != ContainerState::Running {
            let result = ExecResult {
                exit_code: 126,
                stdout: String::new(),
                stderr: "container is not running".into(),
            };
            return Some((Some(Duration::ZERO), result));
        }
        let hostname =
            state.sandboxes.get(&container.sandbox_id).map(|s| s.pod_name.clone()).unwrap_or_default();
        let context = shell::Context { env: container.env.clone(), stdin, hostname };
        let outcome = shell::run_with_files(command, shell::Mode::Exec, &context, &mut container.files);
        let joined = command.join(" ");
        if let Some(result) = state.exec_scripts.get(&(container.name.clone(), joined)) {
            return Some((outcome.runs_for, result.clone()));
        }
        if let Some(code) = container.env.get(ENV_EXEC_EXIT).and_then(|code| code.trim().parse().ok()) {
            let result = ExecResult { exit_code: code, stdout: String::new(), stderr: String::new() };
            return Some((outcome.runs_for, result));
        }
        let result =
            ExecResult { exit_code: outcome.exit_code, stdout: outcome.stdout, stderr: outcome.stderr };
        Some((outcome.runs_for, result))
    }

    /// Puts back a sandbox the kubelet knew before it restarted (the runtime of a simulated
    /// node lives in memory; the pod's status in the API is the record of what ran).
    pub fn restore_sandbox(&self, sandbox: Sandbox) {
        self.state.lock().sandboxes.insert(sandbox.id.clone(), sandbox);
    }

    /// Puts back a container the kubelet knew before it restarted.
    pub fn restore_container(&self, container: Container) {
        self.state.lock().containers.insert(container.id.clone(), container);
    }

    /// Puts back an image a restored container runs (no pull time).
    pub fn restore_image(&self, reference: &str) -> Image {
        let normalized = normalize_reference(reference);
        let image = Image { reference: normalized.clone(), id: image_digest(reference), size: 5_000_000 };
        self.state.lock().images.entry(normalized).or_insert(image).clone()
    }

    /// Updates the environment of a running container (what a restart with fresh downward-API
    /// values would give; used when the kubelet restarts a container).
    pub fn set_env(&self, id: &str, env: BTreeMap<String, String>) {
        if let Some(container) = self.state.lock().containers.get_mut(id) {
            container.env = env;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_normalize_like_the_docker_hub_defaults() {
        assert_eq!(normalize_reference("nginx"), "docker.io/library/nginx:latest");
        assert_eq!(normalize_reference("nginx:1.25"), "docker.io/library/nginx:1.25");
        assert_eq!(normalize_reference("team/app:v1"), "docker.io/team/app:v1");
        assert_eq!(normalize_reference("127.0.0.1:5000/app"), "127.0.0.1:5000/app:latest");
        assert_eq!(normalize_reference("r.io/x@sha256:ab"), "r.io/x@sha256:ab");
        assert_eq!(image_digest("nginx"), image_digest("docker.io/library/nginx:latest"));
        assert_ne!(image_digest("nginx:1"), image_digest("nginx:2"));
        assert_eq!(repo_digest("nginx:1.25", "sha256:ab"), "docker.io/library/nginx@sha256:ab");
        assert_eq!(repo_digest("127.0.0.1:5000/app", "sha256:cd"), "127.0.0.1:5000/app@sha256:cd");
    }

    #[tokio::test]
    async fn pulls_take_time_once_and_fail_for_the_failing_registry() {
        let runtime = NodeRuntime::new(
            "n",
            PullTiming { first_pull: Duration::from_millis(50), cached_pull: Duration::ZERO },
        );
        let started = std::time::Instant::now();
        runtime.pull("nginx:1", None, false).await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(50));
        let again = std::time::Instant::now();
        runtime.pull("nginx:1", None, false).await.unwrap();
        assert!(again.elapsed() < Duration::from_millis(40), "cached");
        for unreachable in
            ["invalid.example/app:1", "invalid.registry.k8s.io/invalid/alpine:3.1", "registry.invalid/a:1"]
        {
            assert!(
                matches!(runtime.pull(unreachable, None, false).await, Err(PullError::Unreachable(_))),
                "{unreachable}"
            );
        }
        runtime.require_credentials("private.io", "u", "p");
        assert!(matches!(
            runtime.pull("private.io/app:1", None, false).await,
            Err(PullError::Unauthorized(_))
        ));
        assert!(runtime.pull("private.io/app:1", Some(("u", "p")), false).await.is_ok());
    }

    #[tokio::test]
    async fn a_slow_pull_marker_sets_the_first_pull_time() {
        let runtime =
            NodeRuntime::new("n", PullTiming { first_pull: Duration::ZERO, cached_pull: Duration::ZERO });
        let started = std::time::Instant::now();
        runtime.pull("registry.example/app:v1-slow-pull-200ms", None, true).await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(200), "first pull takes the marked time");
        let again = std::time::Instant::now();
        runtime.pull("registry.example/app:v1-slow-pull-200ms", None, true).await.unwrap();
        assert!(again.elapsed() < Duration::from_millis(150), "a present image pulls at the cached speed");
    }

    #[test]
    fn stopping_a_container_tells_the_kubelet() {
        let runtime = NodeRuntime::new("n", PullTiming::default());
        let mut events = runtime.subscribe();
        let sandbox = runtime.ensure_sandbox("ns", "p", "uid", "10.0.0.1", &BTreeMap::new());
        let image = Image { reference: "x".into(), id: image_digest("x"), size: 1 };
        let container = runtime.start_container(
            &sandbox.id,
            "c",
            &image,
            0,
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
        );
        runtime.stop_container(&container.id, None);
        assert_eq!(runtime.container(&container.id).unwrap().state, ContainerState::Exited);
        assert_eq!(events.try_recv().unwrap(), RuntimeEvent::ContainerStopped { id: container.id });
    }

    #[test]
    fn a_stop_with_grace_exits_zero_unless_the_process_needs_longer() {
        let runtime = NodeRuntime::new("n", PullTiming::default());
        let sandbox = runtime.ensure_sandbox("ns", "p", "uid", "10.0.0.1", &BTreeMap::new());
        let image = Image { reference: "x".into(), id: image_digest("x"), size: 1 };
        let slow: BTreeMap<String, String> =
            [(super::super::conventions::ENV_TERM_SECONDS.to_string(), "20".to_string())].into();
        let cases = [
            ("server, 10 s grace", BTreeMap::new(), Some(Duration::from_secs(10)), 0),
            ("no grace", BTreeMap::new(), None, 137),
            ("needs 20 s, 10 s grace", slow.clone(), Some(Duration::from_secs(10)), 137),
            ("needs 20 s, 30 s grace", slow, Some(Duration::from_secs(30)), 0),
        ];
        for (case, env, timeout, code) in cases {
            let container =
                runtime.start_container(&sandbox.id, case, &image, 0, BTreeMap::new(), BTreeMap::new(), env);
            runtime.stop_container(&container.id, timeout);
            assert_eq!(runtime.container(&container.id).unwrap().exit_code, code, "{case}");
        }
    }
}
