//! The CRI gRPC server of a simulated node: the node daemon (kruise-daemon) speaks the real CRI
//! protocol (`runtime.v1`, on a unix socket) to pull images, find and stop a pod's containers
//! (ContainerRecreateRequest) and run probes (PodProbeMarker), so the simulated runtime has to
//! answer that protocol as containerd does, including its status codes and its idempotence rules.
//!
//! Only what the daemon and a kubelet-style status reader need is served: version and status,
//! images, sandbox and container listing and status, stop, remove and `ExecSync`. Creating pods
//! and containers stays with the simulated kubelet, which calls [`NodeRuntime`] directly; every
//! other method answers `Unimplemented`.

use std::{
    collections::{BTreeMap, HashMap},
    future::Future,
    path::{Path, PathBuf},
};

use base64::Engine as _;
use hyper_util::rt::TokioIo;
use k8s_cri::v1 as cri;
use k8s_cri::v1::{
    image_service_server::{ImageService, ImageServiceServer},
    runtime_service_server::{RuntimeService, RuntimeServiceServer},
};
use tokio::net::{UnixListener, UnixStream};
use tokio_stream::wrappers::UnixListenerStream;
use tonic::{Request, Response, Status};

use super::runtime::{
    Container, ContainerState, Image, NodeRuntime, PullError, Sandbox, normalize_reference, registry_host,
};

/// Name the server reports in `Version`, so a client can tell it talks to the simulation.
pub const RUNTIME_NAME: &str = "kruise-sim";

/// The CRI API version served (the only one the kubelet and kruise-daemon still speak).
pub const RUNTIME_API_VERSION: &str = "v1";

/// Mount point reported by `ImageFsInfo`, containerd's overlayfs snapshotter directory, so that
/// eviction-style code that looks at it sees a familiar path.
pub const IMAGE_FS_MOUNTPOINT: &str = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs";

/// Label the kubelet puts on sandboxes and containers naming the pod.
pub const LABEL_POD_NAME: &str = "io.kubernetes.pod.name";
/// Label the kubelet puts on sandboxes and containers naming the pod's namespace.
pub const LABEL_POD_NAMESPACE: &str = "io.kubernetes.pod.namespace";
/// Label the kubelet puts on sandboxes and containers naming the pod's uid; the daemon finds a
/// pod's sandbox and containers by it.
pub const LABEL_POD_UID: &str = "io.kubernetes.pod.uid";
/// Label the kubelet puts on containers naming the container in the pod spec.
pub const LABEL_CONTAINER_NAME: &str = "io.kubernetes.container.name";

/// Why the CRI socket could not be served or reached.
#[derive(Debug, thiserror::Error)]
pub enum CriError {
    /// The socket's directory could not be created or a stale socket file not removed.
    #[error("cannot prepare CRI socket {path}: {source}")]
    Prepare {
        /// Socket path.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// Binding the unix socket failed.
    #[error("cannot bind CRI socket {path}: {source}")]
    Bind {
        /// Socket path.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// The gRPC server failed while serving.
    #[error("CRI server on {path} failed: {source}")]
    Serve {
        /// Socket path.
        path: PathBuf,
        /// Underlying error.
        source: tonic::transport::Error,
    },
    /// Connecting to a CRI socket failed.
    #[error("cannot connect to CRI socket {path}: {source}")]
    Connect {
        /// Socket path.
        path: PathBuf,
        /// Underlying error.
        source: tonic::transport::Error,
    },
}

/// Serves the CRI of `runtime` on the unix socket `socket` until `shutdown` completes.
///
/// A socket file left by an earlier run is removed first (as containerd does on start), and the
/// socket file is removed again once the server stopped, so a restarted node binds cleanly.
pub async fn serve_cri(
    runtime: NodeRuntime,
    socket: &Path,
    shutdown: impl Future<Output = ()>,
) -> Result<(), CriError> {
    let prepare = |source| CriError::Prepare { path: socket.to_path_buf(), source };
    if let Some(parent) = socket.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(prepare)?;
    }
    match std::fs::remove_file(socket) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(prepare(error)),
    }
    let listener =
        UnixListener::bind(socket).map_err(|source| CriError::Bind { path: socket.to_path_buf(), source })?;
    tracing::info!(node = runtime.node(), socket = %socket.display(), "serving CRI");
    let server = CriServer::new(runtime);
    let served = tonic::transport::Server::builder()
        .add_service(RuntimeServiceServer::new(server.clone()))
        .add_service(ImageServiceServer::new(server))
        .serve_with_incoming_shutdown(UnixListenerStream::new(listener), shutdown)
        .await;
    let _ = std::fs::remove_file(socket);
    served.map_err(|source| CriError::Serve { path: socket.to_path_buf(), source })
}

/// A gRPC channel to the CRI socket `socket`, for `RuntimeServiceClient::new` and
/// `ImageServiceClient::new`; the node daemon reaches the runtime through it as crictl does.
pub async fn connect_cri(socket: &Path) -> Result<tonic::transport::Channel, CriError> {
    let path = socket.to_path_buf();
    let connect_error = |source| CriError::Connect { path: socket.to_path_buf(), source };
    // The URI is required by the HTTP/2 layer but never dialled: the connector below opens the
    // unix socket instead.
    let endpoint = tonic::transport::Endpoint::from_static("http://[::]:50051");
    endpoint
        .connect_with_connector(tower::service_fn(move |_: http::Uri| {
            let path = path.clone();
            async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(path).await?)) }
        }))
        .await
        .map_err(connect_error)
}

/// Both CRI services (runtime and image) over one [`NodeRuntime`]; cheap to clone, every clone
/// sees the same node.
#[derive(Clone)]
pub struct CriServer {
    runtime: NodeRuntime,
}

impl CriServer {
    /// A server answering for `runtime`.
    pub fn new(runtime: NodeRuntime) -> Self {
        Self { runtime }
    }

    /// The runtime served, for callers that embed the services in their own gRPC server.
    pub fn runtime(&self) -> &NodeRuntime {
        &self.runtime
    }

    fn container_view(&self, container: &Container) -> BTreeMap<String, String> {
        container_labels(container, self.runtime.sandbox(&container.sandbox_id).as_ref())
    }
}

// ---------------------------------------------------------------------------------------------
// Pure CRI <-> runtime mapping
// ---------------------------------------------------------------------------------------------

/// The CRI state of a runtime container state.
pub fn container_state(state: ContainerState) -> cri::ContainerState {
    match state {
        ContainerState::Created => cri::ContainerState::ContainerCreated,
        ContainerState::Running => cri::ContainerState::ContainerRunning,
        ContainerState::Exited => cri::ContainerState::ContainerExited,
    }
}

/// The CRI state of a sandbox: ready until stopped.
pub fn sandbox_state(ready: bool) -> cri::PodSandboxState {
    if ready { cri::PodSandboxState::SandboxReady } else { cri::PodSandboxState::SandboxNotready }
}

/// Whether `labels` carry every key/value of a CRI label selector (an empty selector matches
/// everything; CRI selectors are equality-only).
pub fn labels_match(selector: &HashMap<String, String>, labels: &BTreeMap<String, String>) -> bool {
    selector.iter().all(|(key, value)| labels.get(key) == Some(value))
}

/// Whether a filter id names `id`: empty matches all, otherwise a prefix, as containerd resolves
/// truncated ids (`crictl ps --id 3f2a`).
pub fn id_matches(filter_id: &str, id: &str) -> bool {
    filter_id.is_empty() || id.starts_with(filter_id)
}

/// The labels a sandbox shows: the pod's labels plus the kubelet's pod name, namespace and uid
/// labels, which the kubelet sets on every sandbox and by which the daemon finds a pod's sandbox.
pub fn sandbox_labels(sandbox: &Sandbox) -> BTreeMap<String, String> {
    let mut labels = sandbox.labels.clone();
    labels.insert(LABEL_POD_NAME.into(), sandbox.pod_name.clone());
    labels.insert(LABEL_POD_NAMESPACE.into(), sandbox.pod_namespace.clone());
    labels.insert(LABEL_POD_UID.into(), sandbox.pod_uid.clone());
    labels
}

/// The labels a container shows: those it was started with, completed with the kubelet's
/// well-known labels where missing (taken from its sandbox), so that the daemon's lookup by pod
/// uid works even for a container started without them.
pub fn container_labels(container: &Container, sandbox: Option<&Sandbox>) -> BTreeMap<String, String> {
    let mut labels = container.labels.clone();
    labels.entry(LABEL_CONTAINER_NAME.into()).or_insert_with(|| container.name.clone());
    if let Some(sandbox) = sandbox {
        labels.entry(LABEL_POD_NAME.into()).or_insert_with(|| sandbox.pod_name.clone());
        labels.entry(LABEL_POD_NAMESPACE.into()).or_insert_with(|| sandbox.pod_namespace.clone());
        labels.entry(LABEL_POD_UID.into()).or_insert_with(|| sandbox.pod_uid.clone());
    }
    labels
}

/// Whether a container passes a `ListContainers` filter (`labels` as [`container_labels`]).
pub fn container_matches(
    filter: Option<&cri::ContainerFilter>,
    container: &Container,
    labels: &BTreeMap<String, String>,
) -> bool {
    let Some(filter) = filter else { return true };
    id_matches(&filter.id, &container.id)
        && id_matches(&filter.pod_sandbox_id, &container.sandbox_id)
        && filter.state.as_ref().is_none_or(|s| s.state == container_state(container.state) as i32)
        && labels_match(&filter.label_selector, labels)
}

/// Whether a sandbox passes a `ListPodSandbox` filter.
pub fn sandbox_matches(filter: Option<&cri::PodSandboxFilter>, sandbox: &Sandbox) -> bool {
    let Some(filter) = filter else { return true };
    id_matches(&filter.id, &sandbox.id)
        && filter.state.as_ref().is_none_or(|s| s.state == sandbox_state(sandbox.ready) as i32)
        && labels_match(&filter.label_selector, &sandbox_labels(sandbox))
}

/// The repository of a normalized reference, without tag or digest
/// (`docker.io/library/nginx:1.25` -> `docker.io/library/nginx`).
fn repository(reference: &str) -> &str {
    let name = reference.split_once('@').map_or(reference, |(name, _)| name);
    match name.rfind(':') {
        Some(colon) if !name[colon..].contains('/') => &name[..colon],
        _ => name,
    }
}

/// The repo digest of an image (`docker.io/library/nginx@sha256:...`): what containerd reports
/// as a container's `image_ref` and the kubelet copies into `status.containerStatuses[].imageID`.
pub fn repo_digest(reference: &str, id: &str) -> String {
    format!("{}@{id}", repository(reference))
}

/// Whether `query` names `image`: its reference (normalized like the runtime does), its id with
/// or without the `sha256:` prefix, or its repo digest, as containerd resolves image names.
pub fn image_matches(image: &Image, query: &str) -> bool {
    let query = query.trim();
    !query.is_empty()
        && (image.id == query
            || image.id.strip_prefix("sha256:") == Some(query)
            || image.reference == normalize_reference(query)
            || repo_digest(&image.reference, &image.id) == query)
}

/// The CRI view of an image.
pub fn to_cri_image(image: &Image) -> cri::Image {
    let tagged = !image.reference.contains('@');
    cri::Image {
        id: image.id.clone(),
        repo_tags: if tagged { vec![image.reference.clone()] } else { Vec::new() },
        repo_digests: vec![if tagged {
            repo_digest(&image.reference, &image.id)
        } else {
            image.reference.clone()
        }],
        size: image.size,
        spec: Some(image_spec(&image.reference)),
        ..Default::default()
    }
}

fn image_spec(reference: &str) -> cri::ImageSpec {
    cri::ImageSpec { image: reference.to_string(), ..Default::default() }
}

fn to_hash_map(labels: &BTreeMap<String, String>) -> HashMap<String, String> {
    labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// The CRI list entry of a container (`labels` as [`container_labels`]).
pub fn to_cri_container(container: &Container, labels: &BTreeMap<String, String>) -> cri::Container {
    cri::Container {
        id: container.id.clone(),
        pod_sandbox_id: container.sandbox_id.clone(),
        metadata: Some(cri::ContainerMetadata { name: container.name.clone(), attempt: container.attempt }),
        image: Some(image_spec(&container.image)),
        image_ref: repo_digest(&container.image, &container.image_id),
        image_id: container.image_id.clone(),
        state: container_state(container.state) as i32,
        created_at: container.created_at,
        labels: to_hash_map(labels),
        annotations: to_hash_map(&container.annotations),
    }
}

/// The reason of an exited container: the runtime's, or containerd's default from the exit code
/// (`Completed` for 0, `Error` otherwise); empty while not exited.
pub fn exit_reason(container: &Container) -> String {
    match container.state {
        ContainerState::Exited if !container.reason.is_empty() => container.reason.clone(),
        ContainerState::Exited if container.exit_code == 0 => "Completed".into(),
        ContainerState::Exited => "Error".into(),
        _ => String::new(),
    }
}

/// The CRI status of a container (`labels` as [`container_labels`]); timestamps are Unix
/// nanoseconds, as the runtime keeps them, 0 for "not yet".
pub fn to_cri_container_status(
    container: &Container,
    labels: &BTreeMap<String, String>,
) -> cri::ContainerStatus {
    cri::ContainerStatus {
        id: container.id.clone(),
        metadata: Some(cri::ContainerMetadata { name: container.name.clone(), attempt: container.attempt }),
        state: container_state(container.state) as i32,
        created_at: container.created_at,
        started_at: container.started_at,
        finished_at: if container.state == ContainerState::Exited { container.finished_at } else { 0 },
        exit_code: if container.state == ContainerState::Exited { container.exit_code } else { 0 },
        image: Some(image_spec(&container.image)),
        image_ref: repo_digest(&container.image, &container.image_id),
        image_id: container.image_id.clone(),
        reason: exit_reason(container),
        labels: to_hash_map(labels),
        annotations: to_hash_map(&container.annotations),
        ..Default::default()
    }
}

fn sandbox_metadata(sandbox: &Sandbox) -> cri::PodSandboxMetadata {
    cri::PodSandboxMetadata {
        name: sandbox.pod_name.clone(),
        uid: sandbox.pod_uid.clone(),
        namespace: sandbox.pod_namespace.clone(),
        attempt: 0,
    }
}

/// The CRI list entry of a sandbox.
pub fn to_cri_sandbox(sandbox: &Sandbox) -> cri::PodSandbox {
    cri::PodSandbox {
        id: sandbox.id.clone(),
        metadata: Some(sandbox_metadata(sandbox)),
        state: sandbox_state(sandbox.ready) as i32,
        created_at: sandbox.created_at,
        labels: to_hash_map(&sandbox_labels(sandbox)),
        ..Default::default()
    }
}

/// The CRI status of a sandbox.
pub fn to_cri_sandbox_status(sandbox: &Sandbox) -> cri::PodSandboxStatus {
    cri::PodSandboxStatus {
        id: sandbox.id.clone(),
        metadata: Some(sandbox_metadata(sandbox)),
        state: sandbox_state(sandbox.ready) as i32,
        created_at: sandbox.created_at,
        network: Some(cri::PodSandboxNetworkStatus { ip: sandbox.ip.clone(), additional_ips: Vec::new() }),
        labels: to_hash_map(&sandbox_labels(sandbox)),
        ..Default::default()
    }
}

/// Registry host names that all mean Docker Hub in an auth config's `server_address`.
const DOCKER_HUB_HOSTS: [&str; 3] = ["docker.io", "index.docker.io", "registry-1.docker.io"];

fn server_host(server_address: &str) -> &str {
    let address = server_address.trim();
    let address = address.split_once("://").map_or(address, |(_, rest)| rest);
    address.split('/').next().unwrap_or(address)
}

/// The username and password to pull from `host` with, from a CRI `AuthConfig` as containerd
/// reads it: credentials for another `server_address` are ignored; `username`/`password` win
/// over the base64 `auth` (`user:password`). `Err` is a message for a malformed `auth`.
pub fn pull_credentials(
    auth: Option<&cri::AuthConfig>,
    host: &str,
) -> Result<Option<(String, String)>, String> {
    let Some(auth) = auth else { return Ok(None) };
    if !auth.server_address.is_empty() {
        let server = server_host(&auth.server_address);
        let same = server == host || (DOCKER_HUB_HOSTS.contains(&server) && DOCKER_HUB_HOSTS.contains(&host));
        if !same {
            return Ok(None);
        }
    }
    if !auth.username.is_empty() {
        return Ok(Some((auth.username.clone(), auth.password.clone())));
    }
    if auth.auth.is_empty() {
        return Ok(None);
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(auth.auth.trim())
        .map_err(|error| format!("failed to decode auth: {error}"))?;
    let decoded = String::from_utf8(decoded).map_err(|_| "invalid decoded auth: not UTF-8".to_string())?;
    let (username, password) =
        decoded.split_once(':').ok_or_else(|| "invalid decoded auth: no ':' separator".to_string())?;
    Ok(Some((username.to_string(), password.trim_end_matches('\0').to_string())))
}

/// The gRPC status of a failed pull. containerd answers every registry failure with `Unknown`
/// and a message starting "failed to pull and unpack image"; the kubelet and the daemon only
/// look at the message.
pub fn pull_error_status(error: &PullError) -> Status {
    match error {
        PullError::InvalidReference(_) => Status::invalid_argument(error.to_string()),
        PullError::Unreachable(_) | PullError::Unauthorized(_) => Status::unknown(error.to_string()),
    }
}

fn container_not_found(id: &str) -> Status {
    Status::not_found(format!("an error occurred when try to find container {id:?}: not found"))
}

fn sandbox_not_found(id: &str) -> Status {
    Status::not_found(format!("an error occurred when try to find sandbox {id:?}: not found"))
}

fn unimplemented(method: &str) -> Status {
    Status::unimplemented(format!(
        "{method} is not implemented by the simulated runtime {RUNTIME_NAME}: pods and containers are \
         created by the simulated kubelet"
    ))
}

fn required_image(spec: Option<&cri::ImageSpec>) -> Result<&str, Status> {
    match spec.map(|s| s.image.trim()) {
        Some(image) if !image.is_empty() => Ok(image),
        _ => Err(Status::invalid_argument("image spec with a non-empty image is required")),
    }
}

fn now_nanos() -> i64 {
    i64::try_from(k8s_openapi::jiff::Timestamp::now().as_nanosecond()).unwrap_or(i64::MAX)
}

// ---------------------------------------------------------------------------------------------
// RuntimeService
// ---------------------------------------------------------------------------------------------

type GrpcResult<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl RuntimeService for CriServer {
    async fn version(&self, _request: Request<cri::VersionRequest>) -> GrpcResult<cri::VersionResponse> {
        Ok(Response::new(cri::VersionResponse {
            version: "0.1.0".into(),
            runtime_name: RUNTIME_NAME.into(),
            runtime_version: env!("CARGO_PKG_VERSION").into(),
            runtime_api_version: RUNTIME_API_VERSION.into(),
        }))
    }

    async fn status(&self, _request: Request<cri::StatusRequest>) -> GrpcResult<cri::StatusResponse> {
        let condition =
            |kind: &str| cri::RuntimeCondition { r#type: kind.into(), status: true, ..Default::default() };
        Ok(Response::new(cri::StatusResponse {
            status: Some(cri::RuntimeStatus {
                conditions: vec![condition("RuntimeReady"), condition("NetworkReady")],
            }),
            ..Default::default()
        }))
    }

    async fn runtime_config(
        &self,
        _request: Request<cri::RuntimeConfigRequest>,
    ) -> GrpcResult<cri::RuntimeConfigResponse> {
        Ok(Response::new(cri::RuntimeConfigResponse {
            linux: Some(cri::LinuxRuntimeConfiguration { cgroup_driver: cri::CgroupDriver::Systemd as i32 }),
        }))
    }

    async fn list_pod_sandbox(
        &self,
        request: Request<cri::ListPodSandboxRequest>,
    ) -> GrpcResult<cri::ListPodSandboxResponse> {
        let filter = request.into_inner().filter;
        let mut items: Vec<cri::PodSandbox> = self
            .runtime
            .sandboxes()
            .iter()
            .filter(|sandbox| sandbox_matches(filter.as_ref(), sandbox))
            .map(to_cri_sandbox)
            .collect();
        items.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(Response::new(cri::ListPodSandboxResponse { items }))
    }

    async fn pod_sandbox_status(
        &self,
        request: Request<cri::PodSandboxStatusRequest>,
    ) -> GrpcResult<cri::PodSandboxStatusResponse> {
        let id = request.into_inner().pod_sandbox_id;
        let sandbox = self.runtime.sandbox(&id).ok_or_else(|| sandbox_not_found(&id))?;
        Ok(Response::new(cri::PodSandboxStatusResponse {
            status: Some(to_cri_sandbox_status(&sandbox)),
            timestamp: now_nanos(),
            ..Default::default()
        }))
    }

    async fn list_containers(
        &self,
        request: Request<cri::ListContainersRequest>,
    ) -> GrpcResult<cri::ListContainersResponse> {
        let filter = request.into_inner().filter;
        let mut containers: Vec<cri::Container> = self
            .runtime
            .containers()
            .iter()
            .filter_map(|container| {
                let labels = self.container_view(container);
                container_matches(filter.as_ref(), container, &labels)
                    .then(|| to_cri_container(container, &labels))
            })
            .collect();
        containers.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(Response::new(cri::ListContainersResponse { containers }))
    }

    async fn container_status(
        &self,
        request: Request<cri::ContainerStatusRequest>,
    ) -> GrpcResult<cri::ContainerStatusResponse> {
        let id = request.into_inner().container_id;
        let container = self.runtime.container(&id).ok_or_else(|| container_not_found(&id))?;
        let labels = self.container_view(&container);
        Ok(Response::new(cri::ContainerStatusResponse {
            status: Some(to_cri_container_status(&container, &labels)),
            ..Default::default()
        }))
    }

    /// The simulated process exits on SIGTERM at once, so every stop completes well within its
    /// timeout; stopping an exited container succeeds without telling the kubelet again.
    async fn stop_container(
        &self,
        request: Request<cri::StopContainerRequest>,
    ) -> GrpcResult<cri::StopContainerResponse> {
        let request = request.into_inner();
        let id = request.container_id;
        let container = self.runtime.container(&id).ok_or_else(|| container_not_found(&id))?;
        if container.state != ContainerState::Exited {
            let timeout = std::time::Duration::from_secs(request.timeout.max(0) as u64);
            self.runtime.stop_container(&id, Some(timeout)).ok_or_else(|| container_not_found(&id))?;
        }
        Ok(Response::new(cri::StopContainerResponse {}))
    }

    /// Idempotent as containerd: an unknown container was already removed; a running one is
    /// stopped first (so the kubelet learns it is gone) and then removed.
    async fn remove_container(
        &self,
        request: Request<cri::RemoveContainerRequest>,
    ) -> GrpcResult<cri::RemoveContainerResponse> {
        let id = request.into_inner().container_id;
        if let Some(container) = self.runtime.container(&id) {
            if container.state == ContainerState::Running {
                self.runtime.stop_container(&id, None);
            }
            self.runtime.remove_container(&id);
        }
        Ok(Response::new(cri::RemoveContainerResponse {}))
    }

    /// Runs the command as [`NodeRuntime::exec`] does. A `sleep N` takes N seconds, as in a
    /// real container, and is cut at the request's `timeout` (0: none) with containerd's
    /// `DeadlineExceeded`; preStop hooks run through here by the node daemon take their time.
    async fn exec_sync(&self, request: Request<cri::ExecSyncRequest>) -> GrpcResult<cri::ExecSyncResponse> {
        let request = request.into_inner();
        if request.cmd.is_empty() {
            return Err(Status::invalid_argument("cmd must not be empty"));
        }
        let (runs_for, result) = self
            .runtime
            .exec_plan(&request.container_id, &request.cmd, false)
            .ok_or_else(|| container_not_found(&request.container_id))?;
        let runs_for = runs_for.unwrap_or(super::conventions::FOREVER);
        if !runs_for.is_zero() {
            let limit =
                u64::try_from(request.timeout).ok().filter(|t| *t > 0).map(std::time::Duration::from_secs);
            match limit {
                Some(limit) if runs_for > limit => {
                    tokio::time::sleep(limit).await;
                    return Err(Status::deadline_exceeded(format!(
                        "failed to exec in container: timeout {}s exceeded: context deadline exceeded",
                        request.timeout
                    )));
                }
                _ => tokio::time::sleep(runs_for).await,
            }
        }
        Ok(Response::new(cri::ExecSyncResponse {
            stdout: result.stdout.into_bytes(),
            stderr: result.stderr.into_bytes(),
            exit_code: result.exit_code,
        }))
    }

    async fn run_pod_sandbox(
        &self,
        _request: Request<cri::RunPodSandboxRequest>,
    ) -> GrpcResult<cri::RunPodSandboxResponse> {
        Err(unimplemented("RunPodSandbox"))
    }

    async fn stop_pod_sandbox(
        &self,
        _request: Request<cri::StopPodSandboxRequest>,
    ) -> GrpcResult<cri::StopPodSandboxResponse> {
        Err(unimplemented("StopPodSandbox"))
    }

    async fn remove_pod_sandbox(
        &self,
        _request: Request<cri::RemovePodSandboxRequest>,
    ) -> GrpcResult<cri::RemovePodSandboxResponse> {
        Err(unimplemented("RemovePodSandbox"))
    }

    async fn create_container(
        &self,
        _request: Request<cri::CreateContainerRequest>,
    ) -> GrpcResult<cri::CreateContainerResponse> {
        Err(unimplemented("CreateContainer"))
    }

    async fn start_container(
        &self,
        _request: Request<cri::StartContainerRequest>,
    ) -> GrpcResult<cri::StartContainerResponse> {
        Err(unimplemented("StartContainer"))
    }

    async fn update_container_resources(
        &self,
        _request: Request<cri::UpdateContainerResourcesRequest>,
    ) -> GrpcResult<cri::UpdateContainerResourcesResponse> {
        Err(unimplemented("UpdateContainerResources"))
    }

    async fn reopen_container_log(
        &self,
        _request: Request<cri::ReopenContainerLogRequest>,
    ) -> GrpcResult<cri::ReopenContainerLogResponse> {
        Err(unimplemented("ReopenContainerLog"))
    }

    async fn exec(&self, _request: Request<cri::ExecRequest>) -> GrpcResult<cri::ExecResponse> {
        Err(unimplemented("Exec (streaming; use ExecSync)"))
    }

    async fn attach(&self, _request: Request<cri::AttachRequest>) -> GrpcResult<cri::AttachResponse> {
        Err(unimplemented("Attach"))
    }

    async fn port_forward(
        &self,
        _request: Request<cri::PortForwardRequest>,
    ) -> GrpcResult<cri::PortForwardResponse> {
        Err(unimplemented("PortForward"))
    }

    async fn container_stats(
        &self,
        _request: Request<cri::ContainerStatsRequest>,
    ) -> GrpcResult<cri::ContainerStatsResponse> {
        Err(unimplemented("ContainerStats"))
    }

    async fn list_container_stats(
        &self,
        _request: Request<cri::ListContainerStatsRequest>,
    ) -> GrpcResult<cri::ListContainerStatsResponse> {
        Err(unimplemented("ListContainerStats"))
    }

    async fn pod_sandbox_stats(
        &self,
        _request: Request<cri::PodSandboxStatsRequest>,
    ) -> GrpcResult<cri::PodSandboxStatsResponse> {
        Err(unimplemented("PodSandboxStats"))
    }

    async fn list_pod_sandbox_stats(
        &self,
        _request: Request<cri::ListPodSandboxStatsRequest>,
    ) -> GrpcResult<cri::ListPodSandboxStatsResponse> {
        Err(unimplemented("ListPodSandboxStats"))
    }

    async fn update_runtime_config(
        &self,
        _request: Request<cri::UpdateRuntimeConfigRequest>,
    ) -> GrpcResult<cri::UpdateRuntimeConfigResponse> {
        Err(unimplemented("UpdateRuntimeConfig"))
    }

    async fn checkpoint_container(
        &self,
        _request: Request<cri::CheckpointContainerRequest>,
    ) -> GrpcResult<cri::CheckpointContainerResponse> {
        Err(unimplemented("CheckpointContainer"))
    }

    type GetContainerEventsStream = tokio_stream::Empty<Result<cri::ContainerEventResponse, Status>>;

    async fn get_container_events(
        &self,
        _request: Request<cri::GetEventsRequest>,
    ) -> GrpcResult<Self::GetContainerEventsStream> {
        Err(unimplemented("GetContainerEvents"))
    }

    async fn list_metric_descriptors(
        &self,
        _request: Request<cri::ListMetricDescriptorsRequest>,
    ) -> GrpcResult<cri::ListMetricDescriptorsResponse> {
        Err(unimplemented("ListMetricDescriptors"))
    }

    async fn list_pod_sandbox_metrics(
        &self,
        _request: Request<cri::ListPodSandboxMetricsRequest>,
    ) -> GrpcResult<cri::ListPodSandboxMetricsResponse> {
        Err(unimplemented("ListPodSandboxMetrics"))
    }
}

// ---------------------------------------------------------------------------------------------
// ImageService
// ---------------------------------------------------------------------------------------------

#[tonic::async_trait]
impl ImageService for CriServer {
    async fn list_images(
        &self,
        request: Request<cri::ListImagesRequest>,
    ) -> GrpcResult<cri::ListImagesResponse> {
        let wanted = request.into_inner().filter.and_then(|f| f.image).map(|spec| spec.image);
        let images = self
            .runtime
            .images()
            .iter()
            .filter(|image| wanted.as_deref().is_none_or(|w| w.trim().is_empty() || image_matches(image, w)))
            .map(to_cri_image)
            .collect();
        Ok(Response::new(cri::ListImagesResponse { images }))
    }

    /// An absent image is `image: None` with success, as containerd answers.
    async fn image_status(
        &self,
        request: Request<cri::ImageStatusRequest>,
    ) -> GrpcResult<cri::ImageStatusResponse> {
        let request = request.into_inner();
        let query = required_image(request.image.as_ref())?;
        let image = self.runtime.images().into_iter().find(|image| image_matches(image, query));
        Ok(Response::new(cri::ImageStatusResponse {
            image: image.as_ref().map(to_cri_image),
            ..Default::default()
        }))
    }

    /// Always pulls (the kubelet or daemon decided the policy already); a present image takes the
    /// node's cached pull time. Answers the image id as containerd does.
    async fn pull_image(
        &self,
        request: Request<cri::PullImageRequest>,
    ) -> GrpcResult<cri::PullImageResponse> {
        let request = request.into_inner();
        let reference = required_image(request.image.as_ref())?;
        let credentials = pull_credentials(request.auth.as_ref(), &registry_host(reference))
            .map_err(|message| Status::invalid_argument(format!("failed to parse credential: {message}")))?;
        let auth = credentials.as_ref().map(|(u, p)| (u.as_str(), p.as_str()));
        let image =
            self.runtime.pull(reference, auth, true).await.map_err(|error| pull_error_status(&error))?;
        Ok(Response::new(cri::PullImageResponse { image_ref: image.id }))
    }

    /// Idempotent as containerd: removing an absent image succeeds.
    async fn remove_image(
        &self,
        request: Request<cri::RemoveImageRequest>,
    ) -> GrpcResult<cri::RemoveImageResponse> {
        let request = request.into_inner();
        let query = required_image(request.image.as_ref())?;
        for image in self.runtime.images().iter().filter(|image| image_matches(image, query)) {
            self.runtime.remove_image(&image.reference);
        }
        Ok(Response::new(cri::RemoveImageResponse {}))
    }

    async fn image_fs_info(
        &self,
        _request: Request<cri::ImageFsInfoRequest>,
    ) -> GrpcResult<cri::ImageFsInfoResponse> {
        let images = self.runtime.images();
        let usage = cri::FilesystemUsage {
            timestamp: now_nanos(),
            fs_id: Some(cri::FilesystemIdentifier { mountpoint: IMAGE_FS_MOUNTPOINT.into() }),
            used_bytes: Some(cri::UInt64Value { value: images.iter().map(|image| image.size).sum() }),
            inodes_used: Some(cri::UInt64Value { value: images.len() as u64 }),
        };
        Ok(Response::new(cri::ImageFsInfoResponse {
            image_filesystems: vec![usage],
            container_filesystems: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::runtime::image_digest;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn selector(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn sandbox() -> Sandbox {
        Sandbox {
            id: "sb1234".into(),
            pod_name: "web-0".into(),
            pod_namespace: "ns".into(),
            pod_uid: "uid-1".into(),
            ip: "10.0.0.7".into(),
            ready: true,
            created_at: 5,
            labels: map(&[("app", "web")]),
        }
    }

    fn container(state: ContainerState) -> Container {
        Container {
            id: "c0ffee".into(),
            sandbox_id: "sb1234".into(),
            name: "main".into(),
            image: "docker.io/library/nginx:1.25".into(),
            image_id: image_digest("nginx:1.25"),
            attempt: 2,
            state,
            created_at: 10,
            started_at: 11,
            finished_at: if state == ContainerState::Exited { 12 } else { 0 },
            exit_code: if state == ContainerState::Exited { 137 } else { 0 },
            reason: String::new(),
            labels: map(&[(LABEL_CONTAINER_NAME, "main"), (LABEL_POD_UID, "uid-1")]),
            annotations: map(&[("io.kubernetes.container.hash", "abc")]),
            env: BTreeMap::new(),
            logs: Vec::new(),
            restart_pending: false,
            files: Default::default(),
        }
    }

    #[test]
    fn states_map_to_cri_enums() {
        for (state, expected) in [
            (ContainerState::Created, cri::ContainerState::ContainerCreated),
            (ContainerState::Running, cri::ContainerState::ContainerRunning),
            (ContainerState::Exited, cri::ContainerState::ContainerExited),
        ] {
            assert_eq!(container_state(state), expected, "{state:?}");
        }
        assert_eq!(sandbox_state(true), cri::PodSandboxState::SandboxReady);
        assert_eq!(sandbox_state(false), cri::PodSandboxState::SandboxNotready);
    }

    #[test]
    fn label_selectors_require_every_pair() {
        let labels = map(&[("a", "1"), ("b", "2")]);
        for (pairs, expected) in [
            (vec![], true),
            (vec![("a", "1")], true),
            (vec![("a", "1"), ("b", "2")], true),
            (vec![("a", "2")], false),
            (vec![("a", "1"), ("c", "3")], false),
            (vec![("c", "")], false),
        ] {
            assert_eq!(labels_match(&selector(&pairs), &labels), expected, "{pairs:?}");
        }
    }

    #[test]
    fn ids_match_exactly_or_by_prefix() {
        for (filter, id, expected) in [
            ("", "abc", true),
            ("abc", "abc", true),
            ("ab", "abc", true),
            ("abcd", "abc", false),
            ("b", "abc", false),
        ] {
            assert_eq!(id_matches(filter, id), expected, "{filter:?} {id:?}");
        }
    }

    #[test]
    fn container_filters_combine_id_sandbox_state_and_labels() {
        let running = container(ContainerState::Running);
        let labels = container_labels(&running, Some(&sandbox()));
        let state = |s: cri::ContainerState| Some(cri::ContainerStateValue { state: s as i32 });
        let cases = [
            (cri::ContainerFilter::default(), true),
            (cri::ContainerFilter { id: "c0f".into(), ..Default::default() }, true),
            (cri::ContainerFilter { id: "dead".into(), ..Default::default() }, false),
            (cri::ContainerFilter { pod_sandbox_id: "sb1234".into(), ..Default::default() }, true),
            (cri::ContainerFilter { pod_sandbox_id: "other".into(), ..Default::default() }, false),
            (
                cri::ContainerFilter {
                    state: state(cri::ContainerState::ContainerRunning),
                    ..Default::default()
                },
                true,
            ),
            (
                cri::ContainerFilter {
                    state: state(cri::ContainerState::ContainerExited),
                    ..Default::default()
                },
                false,
            ),
            (
                cri::ContainerFilter {
                    label_selector: selector(&[(LABEL_POD_NAME, "web-0"), (LABEL_POD_NAMESPACE, "ns")]),
                    ..Default::default()
                },
                true,
            ),
            (
                cri::ContainerFilter {
                    label_selector: selector(&[(LABEL_POD_NAME, "web-1")]),
                    ..Default::default()
                },
                false,
            ),
        ];
        for (filter, expected) in cases {
            assert_eq!(container_matches(Some(&filter), &running, &labels), expected, "{filter:?}");
        }
        assert!(container_matches(None, &running, &labels));
    }

    #[test]
    fn container_labels_are_completed_from_the_sandbox_without_overriding() {
        let mut c = container(ContainerState::Running);
        c.labels = map(&[(LABEL_POD_NAME, "set-by-kubelet")]);
        let labels = container_labels(&c, Some(&sandbox()));
        assert_eq!(
            labels,
            map(&[
                (LABEL_CONTAINER_NAME, "main"),
                (LABEL_POD_NAME, "set-by-kubelet"),
                (LABEL_POD_NAMESPACE, "ns"),
                (LABEL_POD_UID, "uid-1"),
            ])
        );
        assert_eq!(
            container_labels(&c, None),
            map(&[(LABEL_CONTAINER_NAME, "main"), (LABEL_POD_NAME, "set-by-kubelet")])
        );
    }

    #[test]
    fn sandbox_filters_and_labels() {
        let ready = sandbox();
        let mut stopped = sandbox();
        stopped.ready = false;
        assert_eq!(sandbox_labels(&ready).get(LABEL_POD_UID).map(String::as_str), Some("uid-1"));
        assert_eq!(sandbox_labels(&ready).get("app").map(String::as_str), Some("web"));
        let state = |s: cri::PodSandboxState| Some(cri::PodSandboxStateValue { state: s as i32 });
        let cases = [
            (cri::PodSandboxFilter::default(), &ready, true),
            (cri::PodSandboxFilter { id: "sb".into(), ..Default::default() }, &ready, true),
            (cri::PodSandboxFilter { id: "x".into(), ..Default::default() }, &ready, false),
            (
                cri::PodSandboxFilter {
                    state: state(cri::PodSandboxState::SandboxReady),
                    ..Default::default()
                },
                &ready,
                true,
            ),
            (
                cri::PodSandboxFilter {
                    state: state(cri::PodSandboxState::SandboxReady),
                    ..Default::default()
                },
                &stopped,
                false,
            ),
            (
                cri::PodSandboxFilter {
                    label_selector: selector(&[(LABEL_POD_UID, "uid-1")]),
                    ..Default::default()
                },
                &ready,
                true,
            ),
            (
                cri::PodSandboxFilter { label_selector: selector(&[("app", "db")]), ..Default::default() },
                &ready,
                false,
            ),
        ];
        for (filter, sandbox, expected) in cases {
            assert_eq!(sandbox_matches(Some(&filter), sandbox), expected, "{filter:?}");
        }
    }

    #[test]
    fn images_are_found_by_reference_id_and_repo_digest() {
        let image = Image {
            reference: "docker.io/library/nginx:1.25".into(),
            id: image_digest("nginx:1.25"),
            size: 7,
        };
        let bare_id = image.id.trim_start_matches("sha256:").to_string();
        let digest = format!("docker.io/library/nginx@{}", image.id);
        for (query, expected) in [
            ("nginx:1.25", true),
            ("docker.io/library/nginx:1.25", true),
            (image.id.as_str(), true),
            (bare_id.as_str(), true),
            (digest.as_str(), true),
            ("nginx:1.26", false),
            ("nginx", false),
            ("", false),
        ] {
            assert_eq!(image_matches(&image, query), expected, "{query:?}");
        }
        let cri_image = to_cri_image(&image);
        assert_eq!(cri_image.repo_tags, vec!["docker.io/library/nginx:1.25".to_string()]);
        assert_eq!(cri_image.repo_digests, vec![digest]);
        assert_eq!(cri_image.size, 7);
    }

    #[test]
    fn repo_digests_strip_tags_but_not_registry_ports() {
        for (reference, expected) in [
            ("docker.io/library/nginx:1.25", "docker.io/library/nginx@sha256:x"),
            ("127.0.0.1:5000/app:latest", "127.0.0.1:5000/app@sha256:x"),
            ("127.0.0.1:5000/app", "127.0.0.1:5000/app@sha256:x"),
            ("r.io/x@sha256:ab", "r.io/x@sha256:x"),
        ] {
            assert_eq!(repo_digest(reference, "sha256:x"), expected, "{reference}");
        }
    }

    #[test]
    fn container_status_carries_times_exit_and_reason() {
        let labels = map(&[("l", "v")]);
        let running = to_cri_container_status(&container(ContainerState::Running), &labels);
        assert_eq!(running.state, cri::ContainerState::ContainerRunning as i32);
        assert_eq!((running.created_at, running.started_at, running.finished_at), (10, 11, 0));
        assert_eq!((running.exit_code, running.reason.as_str()), (0, ""));
        let exited = to_cri_container_status(&container(ContainerState::Exited), &labels);
        assert_eq!(exited.state, cri::ContainerState::ContainerExited as i32);
        assert_eq!((exited.finished_at, exited.exit_code, exited.reason.as_str()), (12, 137, "Error"));
        assert_eq!(exited.metadata, Some(cri::ContainerMetadata { name: "main".into(), attempt: 2 }));
        assert_eq!(exited.image.map(|i| i.image), Some("docker.io/library/nginx:1.25".to_string()));
        assert!(exited.image_ref.starts_with("docker.io/library/nginx@sha256:"));
        assert_eq!(exited.labels.get("l").map(String::as_str), Some("v"));
        assert_eq!(exited.annotations.get("io.kubernetes.container.hash").map(String::as_str), Some("abc"));
        for (state, code, reason, expected) in [
            (ContainerState::Exited, 0, "", "Completed"),
            (ContainerState::Exited, 1, "", "Error"),
            (ContainerState::Exited, 137, "OOMKilled", "OOMKilled"),
            (ContainerState::Running, 0, "", ""),
        ] {
            let mut c = container(state);
            c.exit_code = code;
            c.reason = reason.into();
            assert_eq!(exit_reason(&c), expected);
        }
    }

    #[test]
    fn pull_credentials_follow_containerd() {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let auth = |username: &str, password: &str, encoded: &str, server: &str| cri::AuthConfig {
            username: username.into(),
            password: password.into(),
            auth: encoded.into(),
            server_address: server.into(),
            ..Default::default()
        };
        let some = |u: &str, p: &str| Ok(Some((u.to_string(), p.to_string())));
        let cases = [
            (auth("u", "p", "", ""), "r.io", some("u", "p")),
            (auth("", "", &b64("u:p:q"), ""), "r.io", some("u", "p:q")),
            (auth("u", "p", &b64("x:y"), ""), "r.io", some("u", "p")),
            (auth("u", "p", "", "https://r.io/v2/"), "r.io", some("u", "p")),
            (auth("u", "p", "", "other.io"), "r.io", Ok(None)),
            (auth("u", "p", "", "https://index.docker.io/v1/"), "docker.io", some("u", "p")),
            (auth("", "", "", ""), "r.io", Ok(None)),
        ];
        for (config, host, expected) in cases {
            assert_eq!(pull_credentials(Some(&config), host), expected, "{config:?}");
        }
        assert_eq!(pull_credentials(None, "r.io"), Ok(None));
        assert!(pull_credentials(Some(&auth("", "", "!!!", "")), "r.io").is_err());
        assert!(pull_credentials(Some(&auth("", "", &b64("nocolon"), "")), "r.io").is_err());
    }

    #[test]
    fn pull_errors_map_to_containerd_codes() {
        for (error, code, fragment) in [
            (
                PullError::Unreachable("invalid.example/a:1".into()),
                tonic::Code::Unknown,
                "failed to pull and unpack image",
            ),
            (PullError::Unauthorized("r.io/a:1".into()), tonic::Code::Unknown, "unauthorized"),
            (
                PullError::InvalidReference("a b".into()),
                tonic::Code::InvalidArgument,
                "invalid image reference",
            ),
        ] {
            let status = pull_error_status(&error);
            assert_eq!(status.code(), code, "{error:?}");
            assert!(status.message().contains(fragment), "{}", status.message());
        }
    }
}
