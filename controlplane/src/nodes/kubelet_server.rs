//! The simulated kubelet's HTTPS server (the port in `status.daemonEndpoints`), with the
//! endpoints an API server proxies `pods/log`, `pods/exec` and `pods/attach` to:
//! `GET /containerLogs/{namespace}/{pod}/{container}` and `/exec/...`, `/attach/...`
//! upgraded to WebSocket channels or SPDY/3.1 streams. It listens on loopback with a
//! self-signed certificate (kube-apiserver does not verify kubelets without
//! `--kubelet-certificate-authority`); nodes advertise it as their `InternalDNS` address
//! `localhost`.

use std::net::SocketAddr;

use axum::{
    Router,
    body::Body,
    extract::{Path, Request, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{any, get},
};
use serde_json::json;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use super::{
    container_logs::{self, LogOptions},
    runtime::{ContainerState, NodeRuntime},
    streaming::{Job, Output, StreamRequest, exec, spdy_server, websocket},
};
use crate::apiserver::tls;

/// The address nodes advertise for their kubelet server (type `InternalDNS`).
pub const KUBELET_HOST: &str = "localhost";

/// Binds a free loopback port for a kubelet server.
pub async fn bind() -> std::io::Result<TcpListener> {
    TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await
}

/// Serves the kubelet endpoints of `runtime` on `listener` over HTTPS until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    runtime: NodeRuntime,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), tls::TlsError> {
    let certs = tls::generate()?;
    let config = tls::server_config(&certs)?;
    tls::serve_https(listener, router(runtime), config, shutdown).await;
    Ok(())
}

/// The kubelet endpoints.
pub fn router(runtime: NodeRuntime) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/containerLogs/{namespace}/{pod}/{container}", get(container_logs_handler))
        .route("/exec/{namespace}/{pod}/{container}", any(exec_handler))
        .route("/attach/{namespace}/{pod}/{container}", any(attach_handler))
        .with_state(runtime)
}

fn query_pairs(request: &Request) -> Vec<(String, String)> {
    request
        .uri()
        .query()
        .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

fn text(status: StatusCode, message: impl Into<String>) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message.into()).into_response()
}

async fn container_logs_handler(
    State(runtime): State<NodeRuntime>,
    Path((namespace, pod, container)): Path<(String, String, String)>,
    request: Request,
) -> Response {
    let options = match LogOptions::from_query(&query_pairs(&request)) {
        Ok(options) => options,
        Err(message) => return text(StatusCode::BAD_REQUEST, message),
    };
    if !runtime.has_pod(&namespace, &pod) {
        return text(StatusCode::NOT_FOUND, format!("pod {pod:?} does not exist"));
    }
    let incarnations = runtime.incarnations(&namespace, &pod, &container);
    let chosen = match container_logs::pick(&incarnations, &container, &pod, options.previous) {
        Ok(chosen) => chosen.clone(),
        Err(message) => return text(StatusCode::BAD_REQUEST, message),
    };
    let now = k8s_openapi::jiff::Timestamp::now();
    let mut remaining = options.limit_bytes;
    let first =
        container_logs::limit(container_logs::render(&chosen.logs, &options, true, now), &mut remaining);
    let done = !options.follow || chosen.state == ContainerState::Exited || remaining == Some(0);
    if done {
        return (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain")], first).into_response();
    }
    // Follow: the lines so far, then each new one, until the container exits.
    struct Follow {
        runtime: NodeRuntime,
        id: String,
        sent: usize,
        options: LogOptions,
        remaining: Option<usize>,
        changes: tokio::sync::watch::Receiver<u64>,
        first: Option<String>,
    }
    let state = Follow {
        changes: runtime.log_changes(),
        runtime,
        id: chosen.id.clone(),
        sent: chosen.logs.len(),
        options,
        remaining,
        first: Some(first),
    };
    let stream = futures::stream::unfold(state, |mut state| async move {
        if let Some(first) = state.first.take() {
            return Some((Ok::<_, std::io::Error>(first), state));
        }
        loop {
            if state.remaining == Some(0) {
                return None;
            }
            let container = state.runtime.container(&state.id)?;
            if container.logs.len() > state.sent {
                let now = k8s_openapi::jiff::Timestamp::now();
                let fresh = container_logs::render(&container.logs[state.sent..], &state.options, false, now);
                state.sent = container.logs.len();
                let fresh = container_logs::limit(fresh, &mut state.remaining);
                return Some((Ok(fresh), state));
            }
            if container.state == ContainerState::Exited {
                return None;
            }
            state.changes.changed().await.ok()?;
        }
    });
    (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain")], Body::from_stream(stream)).into_response()
}

/// The running container `name` of pod `namespace/pod`, or the kubelet's error response.
fn running_container(
    runtime: &NodeRuntime,
    namespace: &str,
    pod: &str,
    name: &str,
) -> Result<String, Box<Response>> {
    if !runtime.has_pod(namespace, pod) {
        return Err(Box::new(text(StatusCode::NOT_FOUND, format!("pod {pod:?} does not exist"))));
    }
    runtime
        .incarnations(namespace, pod, name)
        .into_iter()
        .find(|c| c.state == ContainerState::Running)
        .map(|c| c.id)
        .ok_or_else(|| Box::new(text(StatusCode::NOT_FOUND, format!("container not found ({name:?})"))))
}

async fn exec_handler(
    State(runtime): State<NodeRuntime>,
    Path((namespace, pod, container)): Path<(String, String, String)>,
    request: Request,
) -> Response {
    let pairs = query_pairs(&request);
    let command: Vec<String> = pairs.iter().filter(|(k, _)| k == "command").map(|(_, v)| v.clone()).collect();
    if command.is_empty() {
        return text(StatusCode::BAD_REQUEST, "you must specify at least 1 command");
    }
    let id = match running_container(&runtime, &namespace, &pod, &container) {
        Ok(id) => id,
        Err(response) => return *response,
    };
    tracing::debug!(%namespace, %pod, %container, ?command, "exec");
    let job: Job = Box::new(move |stdin, output| {
        Box::pin(async move {
            let end = exec::run(&runtime, &id, &command, stdin, output).await;
            exec::status(&end, &command)
        })
    });
    upgrade(request, StreamRequest::from_query(&pairs), job)
}

async fn attach_handler(
    State(runtime): State<NodeRuntime>,
    Path((namespace, pod, container)): Path<(String, String, String)>,
    request: Request,
) -> Response {
    let pairs = query_pairs(&request);
    let id = match running_container(&runtime, &namespace, &pod, &container) {
        Ok(id) => id,
        Err(response) => return *response,
    };
    // Attached: what the process writes from now on, until it exits.
    let job: Job = Box::new(move |_stdin, output| {
        Box::pin(async move {
            let mut changes = runtime.log_changes();
            let mut sent = runtime.container(&id).map(|c| c.logs.len()).unwrap_or(0);
            while let Some(container) = runtime.container(&id) {
                for line in container.logs.iter().skip(sent) {
                    let bytes = format!("{}\n", line.text).into_bytes();
                    let piece = if line.stderr { Output::Stderr(bytes) } else { Output::Stdout(bytes) };
                    let _ = output.send(piece).await;
                }
                sent = container.logs.len();
                if container.state == ContainerState::Exited {
                    break;
                }
                tokio::select! {
                    changed = changes.changed() => if changed.is_err() { break },
                    _ = output.closed() => break,
                }
            }
            json!({"metadata": {}, "status": "Success"})
        })
    });
    upgrade(request, StreamRequest::from_query(&pairs), job)
}

fn header_values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers.get_all(name).iter().filter_map(|v| v.to_str().ok()).collect()
}

/// Answers an upgrade request (WebSocket or SPDY/3.1) and runs `job` on the upgraded
/// connection.
fn upgrade(mut request: Request, streams: StreamRequest, job: Job) -> Response {
    let headers = request.headers().clone();
    let upgrade = header_values(&headers, "upgrade").join(",").to_ascii_lowercase();
    if upgrade.contains("websocket") {
        let Some(key) = headers.get("sec-websocket-key").map(|k| derive_accept_key(k.as_bytes())) else {
            return text(StatusCode::BAD_REQUEST, "missing Sec-WebSocket-Key");
        };
        let offered = header_values(&headers, "sec-websocket-protocol");
        let Some(protocol) = websocket::negotiate(offered.iter().copied()) else {
            return text(
                StatusCode::BAD_REQUEST,
                format!("unable to upgrade: no supported subprotocol in {offered:?}"),
            );
        };
        let on_upgrade = hyper::upgrade::on(&mut request);
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => {
                    websocket::serve(hyper_util::rt::TokioIo::new(upgraded), protocol, streams, job).await
                }
                Err(error) => tracing::debug!(%error, "websocket upgrade failed"),
            }
        });
        return Response::builder()
            .status(StatusCode::SWITCHING_PROTOCOLS)
            .header(header::UPGRADE, "websocket")
            .header(header::CONNECTION, "Upgrade")
            .header("Sec-WebSocket-Accept", key)
            .header("Sec-WebSocket-Protocol", protocol)
            .body(Body::empty())
            .unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "bad upgrade response"));
    }
    if upgrade.contains("spdy/3.1") {
        let offered = header_values(&headers, "x-stream-protocol-version");
        let Some(protocol) = spdy_server::negotiate(offered.iter().copied()) else {
            return text(
                StatusCode::BAD_REQUEST,
                format!(
                    "unable to upgrade: unable to negotiate protocol: client supports {offered:?}, server supports [{}]",
                    spdy_server::PROTOCOL
                ),
            );
        };
        let on_upgrade = hyper::upgrade::on(&mut request);
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => {
                    spdy_server::serve(hyper_util::rt::TokioIo::new(upgraded), streams, job).await
                }
                Err(error) => tracing::debug!(%error, "SPDY upgrade failed"),
            }
        });
        return Response::builder()
            .status(StatusCode::SWITCHING_PROTOCOLS)
            .header(header::CONNECTION, "Upgrade")
            .header(header::UPGRADE, "SPDY/3.1")
            .header("X-Stream-Protocol-Version", protocol)
            .body(Body::empty())
            .unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "bad upgrade response"));
    }
    text(StatusCode::BAD_REQUEST, "Upgrade request required")
}
