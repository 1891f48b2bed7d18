//! Running one probe (upstream `prober.go`, the kubelet's probers): `exec` through CRI
//! `ExecSync` in the container (exit code 0 succeeds), `tcpSocket` by opening a connection,
//! `httpGet` by a GET answered with a status in 200..400 (redirects not followed). `grpc` is
//! not run by upstream's daemon either: such a probe reports an error.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_crds::apps::v1alpha1::{ContainerProbeSpec, ProbeState};

use super::core::truncate_message;
use crate::cri::CriClient;

/// Why a probe produced no result (the worker logs it and tries again next period).
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The runtime could not run the command.
    #[error("exec in container {container_id}: {source}")]
    Exec {
        /// Container ID.
        container_id: String,
        /// The CRI error.
        source: crate::error::CriError,
    },
    /// The probe has no handler this daemon runs.
    #[error("missing probe handler (exec, httpGet or tcpSocket)")]
    NoHandler,
    /// The port is not a number (named ports are resolved by the manager).
    #[error("invalid port {0:?}")]
    Port(IntOrString),
    /// The HTTP request could not be built.
    #[error("invalid httpGet probe: {0}")]
    Http(String),
}

/// Runs probes for one node.
#[derive(Clone)]
pub struct Prober {
    cri: CriClient,
    http: reqwest::Client,
}

fn port_number(port: &IntOrString) -> Result<u16, ProbeError> {
    let number = match port {
        IntOrString::Int(n) => i64::from(*n),
        IntOrString::String(s) => s.parse::<i64>().map_err(|_| ProbeError::Port(port.clone()))?,
    };
    u16::try_from(number).ok().filter(|n| *n > 0).ok_or_else(|| ProbeError::Port(port.clone()))
}

impl Prober {
    /// A prober on the node's runtime.
    pub fn new(cri: CriClient) -> Result<Self, ProbeError> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .danger_accept_invalid_certs(true)
            .build()
            .map_err(|error| ProbeError::Http(error.to_string()))?;
        Ok(Self { cri, http })
    }

    /// Runs `spec` against the container `container_id` of the pod at `pod_ip`.
    pub async fn probe(
        &self,
        spec: &ContainerProbeSpec,
        container_id: &str,
        pod_ip: &str,
    ) -> Result<(ProbeState, String), ProbeError> {
        let timeout = Duration::from_secs(super::core::timeout_seconds(spec));
        let (state, message) = if let Some(exec) = &spec.exec {
            let command = exec.command.clone().unwrap_or_default();
            let response = self
                .cri
                .exec_sync(container_id, command, timeout)
                .await
                .map_err(|source| ProbeError::Exec { container_id: container_id.to_string(), source })?;
            let mut output = String::from_utf8_lossy(&response.stdout).into_owned();
            output.push_str(&String::from_utf8_lossy(&response.stderr));
            let state = if response.exit_code == 0 { ProbeState::Succeeded } else { ProbeState::Failed };
            (state, output)
        } else if let Some(tcp) = &spec.tcp_socket {
            let port = port_number(&tcp.port)?;
            let host = tcp.host.clone().filter(|h| !h.is_empty()).unwrap_or_else(|| pod_ip.to_string());
            match tokio::time::timeout(timeout, tokio::net::TcpStream::connect((host.as_str(), port))).await {
                Ok(Ok(_)) => (ProbeState::Succeeded, String::new()),
                Ok(Err(error)) => (ProbeState::Failed, format!("dial tcp {host}:{port}: {error}")),
                Err(_) => (ProbeState::Failed, format!("dial tcp {host}:{port}: i/o timeout")),
            }
        } else if let Some(http) = &spec.http_get {
            let port = port_number(&http.port)?;
            let scheme = http.scheme.as_deref().unwrap_or("HTTP").to_ascii_lowercase();
            let host = http.host.clone().filter(|h| !h.is_empty()).unwrap_or_else(|| pod_ip.to_string());
            let path = http.path.clone().unwrap_or_default();
            let path = if path.starts_with('/') { path } else { format!("/{path}") };
            let url = format!("{scheme}://{host}:{port}{path}");
            let mut request = self.http.get(&url).timeout(timeout);
            let headers = http.http_headers.clone().unwrap_or_default();
            if !headers.iter().any(|h| h.name.eq_ignore_ascii_case("user-agent")) {
                request = request.header("User-Agent", "kube-probe");
            }
            if !headers.iter().any(|h| h.name.eq_ignore_ascii_case("accept")) {
                request = request.header("Accept", "*/*");
            }
            for header in headers {
                request = request.header(header.name, header.value);
            }
            match request.send().await {
                Ok(response) => {
                    let code = response.status().as_u16();
                    let body = response.text().await.unwrap_or_default();
                    let state =
                        if (200..400).contains(&code) { ProbeState::Succeeded } else { ProbeState::Failed };
                    let message = if state == ProbeState::Succeeded {
                        body
                    } else {
                        format!("HTTP probe failed with statuscode: {code}")
                    };
                    (state, message)
                }
                Err(error) => (ProbeState::Failed, format!("Get \"{url}\": {error}")),
            }
        } else {
            return Err(ProbeError::NoHandler);
        };
        Ok((state, truncate_message(&message)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_must_be_numbers_in_range() {
        assert_eq!(port_number(&IntOrString::Int(80)).ok(), Some(80));
        assert_eq!(port_number(&IntOrString::String("8080".into())).ok(), Some(8080));
        assert!(port_number(&IntOrString::String("http".into())).is_err());
        assert!(port_number(&IntOrString::Int(0)).is_err());
        assert!(port_number(&IntOrString::Int(70000)).is_err());
    }
}
