//! Calls to admission and conversion webhooks: HTTPS with the configuration's `caBundle` as the
//! only trusted root, reaching either the configured `url` or a `service` (resolved, as
//! kube-apiserver does with endpoint routing, to the address of its Endpoints object while the
//! TLS server name stays `<service>.<namespace>.svc`).

use std::{collections::HashMap, net::SocketAddr, sync::Arc, time::Duration};

use base64::Engine;
use parking_lot::Mutex;
use serde_json::Value;

use crate::storage::{ObjectKey, Store};

/// Why a webhook could not be called.
#[derive(Debug, thiserror::Error)]
pub enum WebhookCallError {
    /// The client configuration is unusable (no url/service, bad CA bundle).
    #[error("invalid webhook client config: {0}")]
    Config(String),
    /// The service has no ready endpoint address.
    #[error("service {0} has no endpoints")]
    NoEndpoints(String),
    /// The request failed (connection, TLS, timeout).
    #[error("{0}")]
    Transport(String),
    /// The call timed out.
    #[error("context deadline exceeded")]
    Timeout,
    /// The webhook answered something that is not a valid review.
    #[error("invalid response: {0}")]
    BadResponse(String),
}

/// A service host name and the endpoint address it resolves to.
type Resolved = (String, SocketAddr);

/// Clients by (CA bundle, resolved service).
type ClientCache = HashMap<(String, Option<Resolved>), reqwest::Client>;

/// Sends reviews to webhooks, caching one HTTPS client per (CA bundle, resolved service).
#[derive(Clone)]
pub struct WebhookClient {
    store: Store,
    clients: Arc<Mutex<ClientCache>>,
}

impl WebhookClient {
    /// A client that resolves services through `store`.
    pub fn new(store: Store) -> Self {
        Self { store, clients: Arc::default() }
    }

    /// POSTs `review` to the webhook described by `client_config` (the `clientConfig` object of a
    /// webhook or CRD conversion) and returns the review it answers.
    pub async fn call(
        &self,
        client_config: &Value,
        review: &Value,
        timeout: Duration,
    ) -> Result<Value, WebhookCallError> {
        let ca_bundle = client_config.get("caBundle").and_then(Value::as_str).unwrap_or_default().to_string();
        let (url, resolve) = self.target(client_config)?;
        let client = self.client(&ca_bundle, resolve)?;
        let request = client.post(&url).json(review).timeout(timeout).send();
        let response = match tokio::time::timeout(timeout, request).await {
            Err(_) => return Err(WebhookCallError::Timeout),
            Ok(Err(error)) if error.is_timeout() => return Err(WebhookCallError::Timeout),
            Ok(Err(error)) => return Err(WebhookCallError::Transport(error_chain(&error))),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        let body = response.bytes().await.map_err(|error| WebhookCallError::Transport(error.to_string()))?;
        if !status.is_success() {
            return Err(WebhookCallError::BadResponse(format!(
                "the server responded with the status code {}",
                status.as_u16()
            )));
        }
        serde_json::from_slice(&body).map_err(|error| WebhookCallError::BadResponse(error.to_string()))
    }

    fn target(&self, config: &Value) -> Result<(String, Option<Resolved>), WebhookCallError> {
        if let Some(url) = config.get("url").and_then(Value::as_str) {
            return Ok((url.to_string(), None));
        }
        let service = config
            .get("service")
            .ok_or_else(|| WebhookCallError::Config("neither url nor service".into()))?;
        let namespace = service.get("namespace").and_then(Value::as_str).unwrap_or_default();
        let name = service.get("name").and_then(Value::as_str).unwrap_or_default();
        let path = service.get("path").and_then(Value::as_str).unwrap_or("/");
        let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
        let host = format!("{name}.{namespace}.svc");
        let address = self
            .endpoint_address(namespace, name, port)
            .ok_or_else(|| WebhookCallError::NoEndpoints(host.clone()))?;
        Ok((format!("https://{host}:{}{path}", address.port()), Some((host, address))))
    }

    /// The first address of the service's Endpoints, on the endpoint port that backs the service
    /// port (or the service port itself when the Endpoints name no ports).
    fn endpoint_address(&self, namespace: &str, name: &str, service_port: i64) -> Option<SocketAddr> {
        let key = |resource: &str| ObjectKey {
            group: String::new(),
            resource: resource.to_string(),
            namespace: Some(namespace.to_string()),
            name: name.to_string(),
        };
        let endpoints = self.store.get(&key("endpoints"))?;
        let subset = endpoints.get("subsets")?.as_array()?.first()?;
        let ip = subset.get("addresses")?.as_array()?.first()?.get("ip")?.as_str()?;
        let port = subset
            .get("ports")
            .and_then(Value::as_array)
            .and_then(|ports| ports.first())
            .and_then(|p| p.get("port"))
            .and_then(Value::as_i64)
            .unwrap_or(service_port);
        format!("{ip}:{port}").parse().ok()
    }

    fn client(
        &self,
        ca_bundle: &str,
        resolve: Option<Resolved>,
    ) -> Result<reqwest::Client, WebhookCallError> {
        let cache_key = (ca_bundle.to_string(), resolve.clone());
        if let Some(client) = self.clients.lock().get(&cache_key) {
            return Ok(client.clone());
        }
        let mut builder = reqwest::Client::builder().use_rustls_tls().tls_built_in_root_certs(false);
        if !ca_bundle.is_empty() {
            let pem = base64::engine::general_purpose::STANDARD
                .decode(ca_bundle.trim())
                .map_err(|error| WebhookCallError::Config(format!("caBundle is not base64: {error}")))?;
            let certificates = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|error| WebhookCallError::Config(format!("caBundle: {error}")))?;
            for certificate in certificates {
                builder = builder.add_root_certificate(certificate);
            }
        }
        if let Some((host, address)) = &resolve {
            builder = builder.resolve(host, *address);
        }
        let client = builder.build().map_err(|error| WebhookCallError::Config(error.to_string()))?;
        self.clients.lock().insert(cache_key, client.clone());
        Ok(client)
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}
