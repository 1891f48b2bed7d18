//! The connect subresources of pods (`pods/log`, `pods/exec`, `pods/attach`) as
//! kube-apiserver serves them: the container is checked against the pod, the pod's node is
//! looked up, and the request goes to that node's kubelet server (its address by
//! [`PREFERRED_ADDRESS_TYPES`], its port from `status.daemonEndpoints`). Logs are streamed
//! back; exec and attach are upgraded connections tunnelled byte for byte (WebSocket or SPDY,
//! whatever the client and the kubelet agree on), as kube-apiserver's upgrade-aware proxy does.
//! The embedded API server talks to the simulated kubelets over loopback HTTPS without
//! verifying their self-signed certificates, as kube-apiserver does without
//! `--kubelet-certificate-authority`.

use std::sync::OnceLock;

use axum::{
    body::Body,
    extract::{Path, Request, State},
    http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use futures::TryStreamExt;
use serde_json::Value;

use super::{errors::ApiError, http::HttpState};

/// Which node address the API server dials, in order of preference (kube-apiserver's
/// `--kubelet-preferred-address-types`; simulated nodes advertise their loopback kubelet
/// server as `InternalDNS`).
pub const PREFERRED_ADDRESS_TYPES: [&str; 5] =
    ["InternalDNS", "Hostname", "InternalIP", "ExternalDNS", "ExternalIP"];

/// The kubelet port when a node reports none.
const DEFAULT_KUBELET_PORT: i64 = 10250;

/// Headers of an upgrade request that go to the kubelet.
const UPGRADE_HEADERS: [&str; 6] = [
    "connection",
    "upgrade",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-protocol",
    "x-stream-protocol-version",
];

fn kubelet_client() -> Result<&'static reqwest::Client, ApiError> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .danger_accept_invalid_certs(true)
                .http1_only()
                .no_proxy()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| ApiError::internal(format!("Internal error occurred: {e}")))
}

fn query_pairs(request: &Request) -> Vec<(String, String)> {
    request
        .uri()
        .query()
        .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

fn first<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn flag(pairs: &[(String, String)], name: &str) -> bool {
    first(pairs, name).is_some_and(|v| matches!(v, "true" | "1"))
}

/// Every container name of a pod spec: init, regular and ephemeral, in that order.
fn container_names(pod: &Value) -> Vec<String> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|field| {
            pod.pointer(&format!("/spec/{field}")).and_then(Value::as_array).cloned().unwrap_or_default()
        })
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// The container a request is about, as kube-apiserver's `validateContainer` decides it.
pub fn validate_container(pod: &Value, requested: Option<&str>) -> Result<String, ApiError> {
    let name = pod.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    match requested.filter(|c| !c.is_empty()) {
        Some(container) if container_names(pod).iter().any(|c| c == container) => Ok(container.to_string()),
        Some(container) => {
            Err(ApiError::bad_request(format!("container {container} is not valid for pod {name}")))
        }
        None => {
            let regular: Vec<&Value> = pod
                .pointer("/spec/containers")
                .and_then(Value::as_array)
                .map(|a| a.iter().collect())
                .unwrap_or_default();
            match regular.as_slice() {
                [only] => Ok(only.get("name").and_then(Value::as_str).unwrap_or_default().to_string()),
                [] => {
                    Err(ApiError::bad_request(format!("a container name must be specified for pod {name}")))
                }
                _ => Err(ApiError::bad_request(format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    container_names(pod).join(" ")
                ))),
            }
        }
    }
}

/// `host:port` of a node's kubelet server.
pub fn kubelet_authority(node: &Value) -> Result<String, ApiError> {
    let addresses = node.pointer("/status/addresses").and_then(Value::as_array).cloned().unwrap_or_default();
    let address = PREFERRED_ADDRESS_TYPES
        .iter()
        .find_map(|kind| {
            addresses
                .iter()
                .find(|a| a.get("type").and_then(Value::as_str) == Some(kind))
                .and_then(|a| a.get("address").and_then(Value::as_str))
        })
        .ok_or_else(|| {
            ApiError::internal(format!(
                "Internal error occurred: no preferred addresses found; known addresses: {addresses:?}"
            ))
        })?;
    let port = node
        .pointer("/status/daemonEndpoints/kubeletEndpoint/Port")
        .and_then(Value::as_i64)
        .filter(|p| *p > 0)
        .unwrap_or(DEFAULT_KUBELET_PORT);
    let host = if address.contains(':') { format!("[{address}]") } else { address.to_string() };
    Ok(format!("{host}:{port}"))
}

/// The pod, its container and the kubelet's `host:port` (`None` when the pod is not scheduled).
async fn locate(
    state: &HttpState,
    namespace: &str,
    name: &str,
    container: Option<&str>,
) -> Result<(String, Option<String>), ApiError> {
    let registry = &state.api.registry;
    let pods = registry.find("", "v1", "pods").ok_or_else(ApiError::no_such_path)?;
    let nodes = registry.find("", "v1", "nodes").ok_or_else(ApiError::no_such_path)?;
    let pod = state.api.get(&pods, "v1", Some(namespace), name).await?;
    let container = validate_container(&pod, container)?;
    let Some(node_name) = pod.pointer("/spec/nodeName").and_then(Value::as_str).filter(|n| !n.is_empty())
    else {
        return Ok((container, None));
    };
    let node = state.api.get(&nodes, "v1", None, node_name).await?;
    Ok((container, Some(kubelet_authority(&node)?)))
}

/// The API error kube-apiserver makes of a kubelet's non-2xx answer to a log request.
fn kubelet_error(code: u16, body: &str, name: &str) -> ApiError {
    match code {
        400 => ApiError::bad_request(body),
        500 => ApiError::internal(format!("Internal error occurred: {body}")),
        404 => {
            let mut error = ApiError::no_such_path();
            error.message = format!("the server could not find the requested resource ( pods/log {name})");
            error
        }
        _ => ApiError::internal(format!(
            "an error on the server ({body:?}) has prevented the request from succeeding ( pods/log {name})"
        )),
    }
}

/// `GET .../pods/{name}/log`.
pub async fn log(
    State(state): State<HttpState>,
    Path((namespace, name)): Path<(String, String)>,
    request: Request,
) -> Response {
    log_response(&state, &namespace, &name, &query_pairs(&request))
        .await
        .unwrap_or_else(IntoResponse::into_response)
}

async fn log_response(
    state: &HttpState,
    namespace: &str,
    name: &str,
    pairs: &[(String, String)],
) -> Result<Response, ApiError> {
    for numeric in ["tailLines", "limitBytes", "sinceSeconds"] {
        if let Some(value) = first(pairs, numeric)
            && value.parse::<i64>().is_err()
        {
            return Err(ApiError::bad_request(format!("invalid value {value:?} for {numeric}")));
        }
    }
    let (container, authority) = locate(state, namespace, name, first(pairs, "container")).await?;
    let Some(authority) = authority else {
        return Ok((StatusCode::OK, [(header::CONTENT_TYPE, "text/plain")], "").into_response());
    };
    let url =
        format!("https://{authority}/containerLogs/{namespace}/{name}/{container}?{}", log_query(pairs));
    let response = kubelet_client()?
        .get(&url)
        .send()
        .await
        .map_err(|e| ApiError::internal(format!("Internal error occurred: Get {url:?}: {e}")))?;
    let code = response.status().as_u16();
    if !(200..=206).contains(&code) {
        let body = response.text().await.unwrap_or_default();
        return Err(kubelet_error(code, &body, name));
    }
    let stream = response.bytes_stream().map_err(std::io::Error::other);
    Ok((StatusCode::OK, [(header::CONTENT_TYPE, "text/plain")], Body::from_stream(stream)).into_response())
}

/// The kubelet query of a log request.
fn log_query(pairs: &[(String, String)]) -> String {
    let mut params = url::form_urlencoded::Serializer::new(String::new());
    for key in ["follow", "previous", "timestamps"] {
        if flag(pairs, key) {
            params.append_pair(key, "true");
        }
    }
    for key in ["sinceSeconds", "sinceTime", "tailLines", "limitBytes"] {
        if let Some(value) = first(pairs, key) {
            params.append_pair(key, value);
        }
    }
    params.finish()
}

/// `GET|POST .../pods/{name}/exec`.
pub async fn exec(
    State(state): State<HttpState>,
    Path((namespace, name)): Path<(String, String)>,
    request: Request,
) -> Response {
    connect(&state, "exec", &namespace, &name, request).await.unwrap_or_else(IntoResponse::into_response)
}

/// `GET|POST .../pods/{name}/attach`.
pub async fn attach(
    State(state): State<HttpState>,
    Path((namespace, name)): Path<(String, String)>,
    request: Request,
) -> Response {
    connect(&state, "attach", &namespace, &name, request).await.unwrap_or_else(IntoResponse::into_response)
}

/// The kubelet query of an exec or attach (the API's `stdin`/`stdout`/`stderr`/`tty` become
/// the kubelet's `input`/`output`/`error`/`tty`, as kube-apiserver's `streamParams`).
pub fn kubelet_stream_query(kind: &str, pairs: &[(String, String)]) -> Result<String, ApiError> {
    let mut params = url::form_urlencoded::Serializer::new(String::new());
    let commands: Vec<&str> = pairs.iter().filter(|(k, _)| k == "command").map(|(_, v)| v.as_str()).collect();
    if kind == "exec" && commands.is_empty() {
        return Err(ApiError::bad_request("you must specify at least 1 command"));
    }
    let (stdin, stdout, stderr, tty) =
        (flag(pairs, "stdin"), flag(pairs, "stdout"), flag(pairs, "stderr"), flag(pairs, "tty"));
    if !(stdin || stdout || stderr) {
        return Err(ApiError::bad_request("you must specify at least 1 of stdin, stdout, stderr"));
    }
    for command in commands {
        params.append_pair("command", command);
    }
    for (on, key) in [(stdin, "input"), (stdout, "output"), (stderr, "error"), (tty, "tty")] {
        if on {
            params.append_pair(key, "1");
        }
    }
    Ok(params.finish())
}

async fn connect(
    state: &HttpState,
    kind: &str,
    namespace: &str,
    name: &str,
    mut request: Request,
) -> Result<Response, ApiError> {
    let pairs = query_pairs(&request);
    let query = kubelet_stream_query(kind, &pairs)?;
    let (container, authority) = locate(state, namespace, name, first(&pairs, "container")).await?;
    let authority = authority
        .ok_or_else(|| ApiError::bad_request(format!("pod {name} does not have a host assigned")))?;
    if !request.headers().contains_key(header::UPGRADE) {
        return Err(ApiError::bad_request("Upgrade request required"));
    }
    let url = format!("https://{authority}/{kind}/{namespace}/{name}/{container}?{query}");
    let method =
        reqwest::Method::from_bytes(request.method().as_str().as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut forwarded = reqwest::header::HeaderMap::new();
    for name in UPGRADE_HEADERS {
        for value in request.headers().get_all(name) {
            if let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                reqwest::header::HeaderValue::from_bytes(value.as_bytes()),
            ) {
                forwarded.append(name, value);
            }
        }
    }
    let backend =
        kubelet_client()?.request(method, &url).headers(forwarded).send().await.map_err(|e| {
            ApiError::internal(format!("Internal error occurred: error dialing backend: {e}"))
        })?;
    let status = backend.status().as_u16();
    let headers = copy_headers(backend.headers());
    if status != 101 {
        // The kubelet refused the upgrade: its answer goes back as it is.
        let body = backend.bytes().await.unwrap_or_default();
        let mut response =
            (StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY), body).into_response();
        response.headers_mut().extend(headers);
        return Ok(response);
    }
    let client_upgrade = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        let (Ok(mut kubelet), Ok(client)) = (backend.upgrade().await, client_upgrade.await) else {
            tracing::debug!("an exec or attach upgrade did not complete");
            return;
        };
        let mut client = hyper_util::rt::TokioIo::new(client);
        if let Err(error) = tokio::io::copy_bidirectional(&mut client, &mut kubelet).await {
            tracing::debug!(%error, "exec or attach tunnel closed");
        }
    });
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    *response.headers_mut() = headers;
    Ok(response)
}

fn copy_headers(from: &reqwest::header::HeaderMap) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in from {
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name.as_str().as_bytes()), HeaderValue::from_bytes(value.as_bytes()))
        {
            headers.append(name, value);
        }
    }
    headers
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn containers_are_chosen_as_kube_apiserver_does() {
        let one = json!({"metadata": {"name": "web"}, "spec": {"containers": [{"name": "main"}]}});
        assert_eq!(validate_container(&one, None).unwrap(), "main");
        assert_eq!(validate_container(&one, Some("")).unwrap(), "main");
        let error = validate_container(&one, Some("other")).unwrap_err();
        assert_eq!((error.code, error.message.as_str()), (400, "container other is not valid for pod web"));
        let many = json!({"metadata": {"name": "web"}, "spec": {
            "initContainers": [{"name": "setup"}], "containers": [{"name": "a"}, {"name": "b"}]}});
        assert_eq!(
            validate_container(&many, None).unwrap_err().message,
            "a container name must be specified for pod web, choose one of: [setup a b]"
        );
        assert_eq!(validate_container(&many, Some("setup")).unwrap(), "setup");
    }

    #[test]
    fn the_kubelet_is_reached_by_the_preferred_address() {
        let node = json!({"status": {
            "addresses": [{"type": "InternalIP", "address": "172.18.0.3"}, {"type": "Hostname", "address": "n1"},
                          {"type": "InternalDNS", "address": "localhost"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 41234}}}});
        assert_eq!(kubelet_authority(&node).unwrap(), "localhost:41234");
        let bare = json!({"status": {"addresses": [{"type": "InternalIP", "address": "::1"}]}});
        assert_eq!(kubelet_authority(&bare).unwrap(), "[::1]:10250");
        assert_eq!(kubelet_authority(&json!({})).unwrap_err().code, 500);
    }

    #[test]
    fn stream_queries_become_the_kubelets() {
        let query = kubelet_stream_query(
            "exec",
            &pairs(&[
                ("command", "sh"),
                ("command", "-c"),
                ("command", "exit 3"),
                ("stdout", "true"),
                ("stderr", "true"),
            ]),
        )
        .unwrap();
        assert_eq!(query, "command=sh&command=-c&command=exit+3&output=1&error=1");
        assert_eq!(kubelet_stream_query("exec", &pairs(&[("stdout", "true")])).unwrap_err().code, 400);
        assert_eq!(kubelet_stream_query("attach", &pairs(&[("command", "x")])).unwrap_err().code, 400);
        assert_eq!(
            kubelet_stream_query("attach", &pairs(&[("stdin", "1"), ("tty", "1")])).unwrap(),
            "input=1&tty=1"
        );
    }

    #[test]
    fn kubelet_errors_become_api_errors() {
        let previous =
            kubelet_error(400, "previous terminated container \"main\" in pod \"p\" not found", "p");
        assert_eq!((previous.code, previous.reason), (400, "BadRequest"));
        assert_eq!(previous.message, "previous terminated container \"main\" in pod \"p\" not found");
        assert_eq!(
            kubelet_error(404, "pod \"p\" does not exist", "p").message,
            "the server could not find the requested resource ( pods/log p)"
        );
        assert_eq!(kubelet_error(500, "boom", "p").message, "Internal error occurred: boom");
    }
}
