//! What the executor asks of the container runtime (upstream `pkg/daemon/kuberuntime`, a cut
//! of the kubelet's): a pod's container instances (CRI `ListContainers` by the kubelet's pod
//! UID label, then `ContainerStatus` of each), and stopping one container as the kubelet would:
//! the preStop hook first (exec through CRI `ExecSync`, or an HTTP GET), within the grace
//! period, then CRI `StopContainer` with what is left of it (at least 2 s). The kubelet (real
//! or simulated) then restarts the container per the pod's `restartPolicy`.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use k8s_cri::v1 as cri;
use k8s_openapi::{
    api::core::v1::{ContainerPort, HTTPGetAction, ObjectReference},
    apimachinery::pkg::util::intstr::IntOrString,
};
use kruise_crds::apps::v1beta1::{CRRProbeHandler, ContainerRecreateRequestContainer};

use super::core::{LABEL_POD_UID, PodRuntimeStatus, RuntimeContainer, grace_after_hook};
use crate::{
    cri::CriClient,
    error::CriError,
    events::{EventPublisher, EventType},
};

/// The pod a request targets, as events and hooks need it.
#[derive(Clone, Debug)]
pub struct PodTarget {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID (the request's `crr.apps.kruise.io/pod-uid` label).
    pub uid: String,
}

impl PodTarget {
    fn container_reference(&self, container: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            namespace: Some(self.namespace.clone()),
            name: Some(self.name.clone()),
            uid: Some(self.uid.clone()),
            field_path: Some(format!("spec.containers{{{container}}}")),
            ..Default::default()
        }
    }
}

/// Every container instance of the pod the runtime knows (an instance removed between the
/// list and its status is skipped).
pub async fn pod_status(cri: &CriClient, pod_uid: &str) -> Result<PodRuntimeStatus, CriError> {
    let filter = cri::ContainerFilter {
        label_selector: [(LABEL_POD_UID.to_string(), pod_uid.to_string())].into(),
        ..Default::default()
    };
    let mut instances = Vec::new();
    for container in cri.list_containers(filter).await? {
        match cri.container_status(&container.id).await {
            Ok(Some(status)) => instances.push(RuntimeContainer::from_status(&status)),
            Ok(None) => {}
            Err(CriError::Call { status, .. }) if status.code() == tonic::Code::NotFound => {}
            Err(error) => return Err(error),
        }
    }
    Ok(PodRuntimeStatus::new(instances))
}

/// Stops containers for requests, publishing the kubelet's `Killing` and `FailedPreStopHook`
/// Events on the pod.
#[derive(Clone)]
pub struct Stopper {
    cri: CriClient,
    events: Option<EventPublisher>,
    http: reqwest::Client,
}

impl Stopper {
    /// A stopper over the node's runtime.
    pub fn new(cri: CriClient, events: Option<EventPublisher>, http: reqwest::Client) -> Self {
        Self { cri, events, http }
    }

    fn event(&self, pod: &PodTarget, container: &str, kind: EventType, reason: &str, note: String) {
        if let Some(events) = &self.events {
            events.publish(pod.container_reference(container), kind, reason, note);
        }
    }

    /// Runs the container's preStop hook (when it has one and there is a grace period), then
    /// stops its instance `id` with what is left of `grace` seconds. A failing hook is
    /// reported and the container is stopped anyway, as the kubelet does; only a failed stop
    /// is an error.
    pub async fn stop(
        &self,
        pod: &PodTarget,
        request: &str,
        container: &ContainerRecreateRequestContainer,
        id: &str,
        grace: i64,
    ) -> Result<(), String> {
        let note = format!("Stopping container {} by ContainerRecreateRequest {request}", container.name);
        self.kill(pod, container, id, grace, note).await
    }

    /// What [`Self::stop`] does, with the `Killing` Event's note given (the kubelet's
    /// `killContainer` with a message): the container meta restarter stops containers whose
    /// env from metadata went stale through here too.
    pub async fn kill(
        &self,
        pod: &PodTarget,
        container: &ContainerRecreateRequestContainer,
        id: &str,
        grace: i64,
        note: String,
    ) -> Result<(), String> {
        let name = container.name.as_str();
        tracing::info!(pod = %pod.name, container = name, id, %note, "stopping container");
        self.event(pod, name, EventType::Normal, "Killing", note);
        let remaining = match container.pre_stop.as_ref().filter(|_| grace > 0) {
            Some(hook) => {
                let started = Instant::now();
                let limit = Duration::from_secs(u64::try_from(grace).unwrap_or(0));
                match tokio::time::timeout(limit, self.run_hook(hook, pod, container, id, limit)).await {
                    Ok(Ok(())) => {
                        tracing::debug!(pod = %pod.name, container = name, "preStop hook completed")
                    }
                    Ok(Err(message)) => {
                        tracing::warn!(pod = %pod.name, container = name, %message, "preStop hook failed");
                        self.event(pod, name, EventType::Warning, "FailedPreStopHook", message);
                    }
                    Err(_) => {
                        tracing::info!(pod = %pod.name, container = name, grace, "preStop hook did not complete within the grace period");
                    }
                }
                grace_after_hook(grace, started.elapsed())
            }
            None => grace_after_hook(grace, Duration::ZERO),
        };
        tracing::debug!(pod = %pod.name, container = name, id, grace = remaining, "CRI StopContainer");
        self.cri.stop_container(id, remaining).await.map_err(|error| error.to_string())
    }

    async fn run_hook(
        &self,
        hook: &CRRProbeHandler,
        pod: &PodTarget,
        container: &ContainerRecreateRequestContainer,
        id: &str,
        limit: Duration,
    ) -> Result<(), String> {
        if let Some(exec) = &hook.exec {
            let command = exec.command.clone().unwrap_or_default();
            let failed = |error: String| {
                format!(
                    "Exec lifecycle hook ({command:?}) for Container {:?} in Pod \"{}_{}\" failed - error: {error}",
                    container.name, pod.name, pod.namespace
                )
            };
            let response =
                self.cri.exec_sync(id, command.clone(), limit).await.map_err(|e| failed(e.to_string()))?;
            if response.exit_code != 0 {
                let output =
                    String::from_utf8_lossy(&[response.stdout, response.stderr].concat()).into_owned();
                return Err(failed(format!(
                    "command '{}' exited with {}: {output}",
                    command.join(" "),
                    response.exit_code
                )));
            }
            return Ok(());
        }
        if let Some(http) = &hook.http_get {
            return self.run_http_hook(http, pod, &container.ports, limit).await.map_err(|error| {
                format!(
                    "HTTP lifecycle hook ({}) for Container {:?} in Pod \"{}_{}\" failed - error: {error}",
                    http.path.as_deref().unwrap_or("/"),
                    container.name,
                    pod.name,
                    pod.namespace
                )
            });
        }
        if hook.tcp_socket.is_some() {
            return Err(format!(
                "tcpSocket is not supported as a lifecycle hook (container {:?} in Pod \"{}_{}\")",
                container.name, pod.name, pod.namespace
            ));
        }
        Ok(())
    }

    async fn run_http_hook(
        &self,
        action: &HTTPGetAction,
        pod: &PodTarget,
        ports: &[ContainerPort],
        limit: Duration,
    ) -> Result<(), String> {
        let host = match action.host.clone().filter(|h| !h.is_empty()) {
            Some(host) => host,
            None => self.pod_ip(&pod.uid).await?,
        };
        let port = http_port(&action.port, ports, action.scheme.as_deref())?;
        let url = hook_url(action.scheme.as_deref(), &host, port, action.path.as_deref());
        let mut request = self.http.get(&url).timeout(limit);
        for header in action.http_headers.iter().flatten() {
            request = request.header(header.name.as_str(), header.value.as_str());
        }
        let response = request.send().await.map_err(|error| error.to_string())?;
        let status = response.status();
        if status.is_client_error() || status.is_server_error() {
            return Err(format!("HTTP GET {url} answered {status}"));
        }
        Ok(())
    }

    /// The pod's IP, from its ready sandbox.
    async fn pod_ip(&self, pod_uid: &str) -> Result<String, String> {
        let filter = cri::PodSandboxFilter {
            label_selector: HashMap::from([(LABEL_POD_UID.to_string(), pod_uid.to_string())]),
            ..Default::default()
        };
        let sandboxes = self.cri.list_pod_sandbox(filter).await.map_err(|e| e.to_string())?;
        let ready = sandboxes
            .iter()
            .filter(|s| s.state == cri::PodSandboxState::SandboxReady as i32)
            .max_by_key(|s| s.created_at)
            .ok_or_else(|| "the pod has no ready sandbox to send the request to".to_string())?;
        let status = self.cri.pod_sandbox_status(&ready.id).await.map_err(|e| e.to_string())?;
        status
            .and_then(|s| s.network)
            .map(|n| n.ip)
            .filter(|ip| !ip.is_empty())
            .ok_or_else(|| "the pod's sandbox has no IP".to_string())
    }
}

/// The port of an HTTP hook: a number, or the name of one of the container's ports (an empty
/// one means the scheme's default, as in the kubelet).
pub fn http_port(port: &IntOrString, ports: &[ContainerPort], scheme: Option<&str>) -> Result<u16, String> {
    let number = match port {
        IntOrString::Int(number) => *number,
        IntOrString::String(text) if text.is_empty() => {
            if scheme.is_some_and(|s| s.eq_ignore_ascii_case("https")) { 443 } else { 80 }
        }
        IntOrString::String(text) => match text.parse::<i32>() {
            Ok(number) => number,
            Err(_) => ports
                .iter()
                .find(|p| p.name.as_deref() == Some(text.as_str()))
                .map(|p| p.container_port)
                .ok_or_else(|| format!("couldn't find port: {text} in the container's ports"))?,
        },
    };
    u16::try_from(number).ok().filter(|n| *n > 0).ok_or_else(|| format!("invalid port number: {number}"))
}

/// The URL of an HTTP hook.
pub fn hook_url(scheme: Option<&str>, host: &str, port: u16, path: Option<&str>) -> String {
    let scheme =
        scheme.map(str::to_ascii_lowercase).filter(|s| !s.is_empty()).unwrap_or_else(|| "http".into());
    let host =
        if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.to_string() };
    let path = path.unwrap_or_default();
    let path = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
    format!("{scheme}://{host}:{port}{path}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    #[test]
    fn hook_ports_and_urls() {
        let ports =
            vec![ContainerPort { name: Some("admin".into()), container_port: 9000, ..Default::default() }];
        assert_eq!(http_port(&IntOrString::Int(8080), &ports, None), Ok(8080));
        assert_eq!(http_port(&IntOrString::String("admin".into()), &ports, None), Ok(9000));
        assert_eq!(http_port(&IntOrString::String("81".into()), &ports, None), Ok(81));
        assert_eq!(http_port(&IntOrString::String(String::new()), &ports, Some("HTTPS")), Ok(443));
        assert!(http_port(&IntOrString::String("web".into()), &ports, None).unwrap_err().contains("web"));
        assert!(http_port(&IntOrString::Int(0), &ports, None).is_err());
        assert_eq!(hook_url(None, "10.0.0.5", 8080, Some("drain")), "http://10.0.0.5:8080/drain");
        assert_eq!(hook_url(Some("HTTPS"), "fd00::1", 443, None), "https://[fd00::1]:443/");
    }
}
