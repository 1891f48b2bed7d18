//! The CRI client the daemon's workers share: one gRPC channel to the runtime's unix socket,
//! opened lazily, with a timeout on every call, and dropped (to be reopened on the next call)
//! when the runtime cannot be reached, so a restarted containerd is picked up without
//! restarting the daemon.
//!
//! Requests are never logged: a `PullImageRequest` carries registry credentials.

use std::{path::PathBuf, sync::Arc, time::Duration};

use hyper_util::rt::TokioIo;
use k8s_cri::v1 as cri;
use k8s_cri::v1::{image_service_client::ImageServiceClient, runtime_service_client::RuntimeServiceClient};
use tokio::net::UnixStream;
use tonic::transport::Channel;

use super::endpoint::EndpointSource;
use crate::{error::CriError, metrics::DaemonMetrics};

/// Largest gRPC message accepted (upstream `maxMsgSize`, 16 MiB: image lists can be long).
const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Timeouts of the CRI client.
#[derive(Clone, Debug)]
pub struct CriOptions {
    /// Opening the socket and the HTTP/2 connection.
    pub connect_timeout: Duration,
    /// Every call but `PullImage` (whose timeout is the pull policy's).
    pub call_timeout: Duration,
}

impl Default for CriOptions {
    fn default() -> Self {
        Self { connect_timeout: Duration::from_secs(5), call_timeout: Duration::from_secs(10) }
    }
}

/// A cheap handle on the node's runtime; clone it into every worker.
#[derive(Clone)]
pub struct CriClient {
    inner: Arc<Inner>,
}

struct Inner {
    source: EndpointSource,
    options: CriOptions,
    channel: tokio::sync::Mutex<Option<(PathBuf, Channel)>>,
    metrics: DaemonMetrics,
}

impl CriClient {
    /// A client for the runtime found through `source` (nothing is opened yet).
    pub fn new(source: EndpointSource, options: CriOptions, metrics: DaemonMetrics) -> Self {
        Self { inner: Arc::new(Inner { source, options, channel: tokio::sync::Mutex::new(None), metrics }) }
    }

    /// The endpoint configuration.
    pub fn source(&self) -> &EndpointSource {
        &self.inner.source
    }

    /// The channel, opened now when there is none (or the socket moved).
    pub async fn channel(&self) -> Result<Channel, CriError> {
        let mut slot = self.inner.channel.lock().await;
        let endpoint = self.inner.source.resolve().map_err(|searched| CriError::NoEndpoint { searched })?;
        if let Some((path, channel)) = slot.as_ref()
            && *path == endpoint
        {
            return Ok(channel.clone());
        }
        let channel = connect(&endpoint, self.inner.options.connect_timeout).await?;
        tracing::info!(endpoint = %endpoint.display(), "connected to the container runtime");
        *slot = Some((endpoint, channel.clone()));
        Ok(channel)
    }

    /// Forgets the channel so that the next call reconnects.
    pub async fn reset(&self) {
        *self.inner.channel.lock().await = None;
    }

    /// A RuntimeService client on the shared channel (for workers that list or stop containers
    /// and exec into them).
    pub async fn runtime_service(&self) -> Result<RuntimeServiceClient<Channel>, CriError> {
        Ok(RuntimeServiceClient::new(self.channel().await?).max_decoding_message_size(MAX_MESSAGE_BYTES))
    }

    /// An ImageService client on the shared channel.
    pub async fn image_service(&self) -> Result<ImageServiceClient<Channel>, CriError> {
        Ok(ImageServiceClient::new(self.channel().await?).max_decoding_message_size(MAX_MESSAGE_BYTES))
    }

    /// Runs one call with `timeout`, counting failures and dropping the channel when the
    /// runtime is unreachable.
    pub async fn call<T, F>(
        &self,
        method: &'static str,
        timeout: Duration,
        call: impl FnOnce(Channel) -> F,
    ) -> Result<T, CriError>
    where
        F: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let result = async {
            let channel = self.channel().await?;
            match tokio::time::timeout(timeout, call(channel)).await {
                Ok(Ok(response)) => Ok(response.into_inner()),
                Ok(Err(status)) => Err(CriError::Call { method, status }),
                Err(_) => Err(CriError::Timeout { method, after: timeout }),
            }
        }
        .await;
        if let Err(error) = &result {
            self.inner.metrics.cri_error(method);
            if error.is_unreachable() {
                self.reset().await;
            }
        }
        result
    }

    /// `Version`: the runtime's name and API version (the health check).
    pub async fn version(&self) -> Result<cri::VersionResponse, CriError> {
        self.call("Version", self.inner.options.call_timeout, |channel| async move {
            RuntimeServiceClient::new(channel).version(cri::VersionRequest { version: "v1".into() }).await
        })
        .await
    }

    /// `ListImages`: every image on the node.
    pub async fn list_images(&self) -> Result<Vec<cri::Image>, CriError> {
        let response = self
            .call("ListImages", self.inner.options.call_timeout, |channel| async move {
                ImageServiceClient::new(channel)
                    .max_decoding_message_size(MAX_MESSAGE_BYTES)
                    .list_images(cri::ListImagesRequest { filter: None })
                    .await
            })
            .await?;
        Ok(response.images)
    }

    /// `ImageStatus`: the image `reference` names, or `None` when the node does not have it.
    pub async fn image_status(&self, reference: &str) -> Result<Option<cri::Image>, CriError> {
        let request = cri::ImageStatusRequest {
            image: Some(cri::ImageSpec { image: reference.to_string(), ..Default::default() }),
            verbose: false,
        };
        let response = self
            .call("ImageStatus", self.inner.options.call_timeout, |channel| async move {
                ImageServiceClient::new(channel).image_status(request).await
            })
            .await?;
        Ok(response.image)
    }

    /// `PullImage` with the given timeout; returns the image reference the runtime answers
    /// (its ID or digest).
    pub async fn pull_image(
        &self,
        request: cri::PullImageRequest,
        timeout: Duration,
    ) -> Result<String, CriError> {
        let response = self
            .call("PullImage", timeout, |channel| async move {
                ImageServiceClient::new(channel).pull_image(request).await
            })
            .await?;
        Ok(response.image_ref)
    }

    /// `ListContainers` with `filter` (container recreation finds a pod's containers by the
    /// kubelet's `io.kubernetes.pod.uid` label).
    pub async fn list_containers(
        &self,
        filter: cri::ContainerFilter,
    ) -> Result<Vec<cri::Container>, CriError> {
        let response = self
            .call("ListContainers", self.inner.options.call_timeout, |channel| async move {
                RuntimeServiceClient::new(channel)
                    .max_decoding_message_size(MAX_MESSAGE_BYTES)
                    .list_containers(cri::ListContainersRequest { filter: Some(filter) })
                    .await
            })
            .await?;
        Ok(response.containers)
    }

    /// `ContainerStatus` of one container (`None` when the runtime answers without a status).
    pub async fn container_status(&self, id: &str) -> Result<Option<cri::ContainerStatus>, CriError> {
        let request = cri::ContainerStatusRequest { container_id: id.to_string(), verbose: false };
        let response = self
            .call("ContainerStatus", self.inner.options.call_timeout, |channel| async move {
                RuntimeServiceClient::new(channel).container_status(request).await
            })
            .await?;
        Ok(response.status)
    }

    /// `StopContainer`: SIGTERM, then SIGKILL after `grace_seconds`; the call may take that
    /// long, so its own timeout is the grace period plus the usual call timeout.
    pub async fn stop_container(&self, id: &str, grace_seconds: i64) -> Result<(), CriError> {
        let request = cri::StopContainerRequest { container_id: id.to_string(), timeout: grace_seconds };
        let timeout =
            self.inner.options.call_timeout + Duration::from_secs(u64::try_from(grace_seconds).unwrap_or(0));
        self.call("StopContainer", timeout, |channel| async move {
            RuntimeServiceClient::new(channel).stop_container(request).await
        })
        .await?;
        Ok(())
    }

    /// `ExecSync`: runs `command` in a container, the runtime cutting it after `timeout`
    /// (whole seconds, at least one).
    pub async fn exec_sync(
        &self,
        id: &str,
        command: Vec<String>,
        timeout: Duration,
    ) -> Result<cri::ExecSyncResponse, CriError> {
        let seconds = i64::try_from(timeout.as_secs().max(1)).unwrap_or(i64::MAX);
        let request = cri::ExecSyncRequest { container_id: id.to_string(), cmd: command, timeout: seconds };
        self.call("ExecSync", timeout + self.inner.options.call_timeout, |channel| async move {
            RuntimeServiceClient::new(channel).exec_sync(request).await
        })
        .await
    }

    /// `ListPodSandbox` with `filter`.
    pub async fn list_pod_sandbox(
        &self,
        filter: cri::PodSandboxFilter,
    ) -> Result<Vec<cri::PodSandbox>, CriError> {
        let response = self
            .call("ListPodSandbox", self.inner.options.call_timeout, |channel| async move {
                RuntimeServiceClient::new(channel)
                    .max_decoding_message_size(MAX_MESSAGE_BYTES)
                    .list_pod_sandbox(cri::ListPodSandboxRequest { filter: Some(filter) })
                    .await
            })
            .await?;
        Ok(response.items)
    }

    /// `PodSandboxStatus` of one sandbox.
    pub async fn pod_sandbox_status(&self, id: &str) -> Result<Option<cri::PodSandboxStatus>, CriError> {
        let request = cri::PodSandboxStatusRequest { pod_sandbox_id: id.to_string(), verbose: false };
        let response = self
            .call("PodSandboxStatus", self.inner.options.call_timeout, |channel| async move {
                RuntimeServiceClient::new(channel).pod_sandbox_status(request).await
            })
            .await?;
        Ok(response.status)
    }
}

/// Opens a gRPC channel over the unix socket at `path` (the URI is required by the HTTP/2
/// layer but never dialled).
async fn connect(path: &std::path::Path, timeout: Duration) -> Result<Channel, CriError> {
    let socket = path.to_path_buf();
    let endpoint = tonic::transport::Endpoint::from_static("http://[::]:50051").connect_timeout(timeout);
    let connect = endpoint.connect_with_connector(tower::service_fn(move |_: http::Uri| {
        let socket = socket.clone();
        async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(socket).await?)) }
    }));
    match tokio::time::timeout(timeout, connect).await {
        Ok(Ok(channel)) => Ok(channel),
        Ok(Err(source)) => Err(CriError::Connect { endpoint: path.to_path_buf(), source }),
        Err(_) => Err(CriError::Timeout { method: "connect", after: timeout }),
    }
}
