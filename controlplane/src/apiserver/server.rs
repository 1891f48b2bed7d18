//! Starting and stopping the embedded API server.

use std::{
    net::SocketAddr,
    path::PathBuf,
    sync::{Arc, atomic::AtomicBool},
};

use axum::{Router, routing::get};
use base64::Engine;
use serde_json::json;
use tokio::{net::TcpListener, sync::watch, task::JoinHandle};

use super::{
    admission::Admission,
    api::Api,
    conversion::Converter,
    counters::RequestCounts,
    http::{HttpState, handle},
    metrics::{ApiMetrics, instrument, metrics_response},
    options::{FieldValidation, WriteOptions},
    pod_admission::SYSTEM_PRIORITY_CLASSES,
    pod_streams, tls,
    webhook_client::WebhookClient,
};
use crate::{registry::Registry, storage::Store};

/// How to run the server.
#[derive(Clone, Debug)]
pub struct ApiServerConfig {
    /// Address to listen on (port 0 picks a free one).
    pub bind: SocketAddr,
    /// Persist objects here (durable before acknowledged); in memory when None.
    pub data_dir: Option<PathBuf>,
    /// Serve HTTPS with a generated CA instead of plain HTTP.
    pub tls: bool,
    /// Write a kubeconfig pointing at the server here.
    pub kubeconfig_path: Option<PathBuf>,
    /// Watch events kept for resumption.
    pub history: usize,
    /// Timing of the node lifecycle controller (heartbeat grace, orphaned pod quarantine).
    pub node_lifecycle: crate::controllers::node_lifecycle::NodeLifecycleConfig,
}

impl Default for ApiServerConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            data_dir: None,
            tls: false,
            kubeconfig_path: None,
            history: 100_000,
            node_lifecycle: Default::default(),
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Storage could not be opened.
    #[error("storage: {0}")]
    Storage(#[from] crate::storage::StoreError),
    /// The address could not be bound.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// TLS material could not be made.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// The kubeconfig could not be written.
    #[error("writing the kubeconfig: {0}")]
    Kubeconfig(std::io::Error),
}

/// A running API server.
pub struct ApiServer {
    /// The address it listens on.
    pub address: SocketAddr,
    /// Its base URL.
    pub url: String,
    /// A kubeconfig (YAML) for it.
    pub kubeconfig: String,
    /// The CA to trust, when serving HTTPS.
    pub ca_pem: Option<String>,
    /// The API operations (for in-process components and tests).
    pub api: Api,
    requests: RequestCounts,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl ApiServer {
    /// Starts the server, its built-in controllers and the default namespaces.
    pub async fn start(config: ApiServerConfig) -> Result<Self, ServerError> {
        let store = match &config.data_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(crate::storage::StoreError::Io)?;
                Store::open(dir, config.history)?
            }
            None => Store::in_memory(config.history),
        };
        let registry = Arc::new(Registry::with_builtins());
        let client = WebhookClient::new(store.clone());
        let api = Api::new(
            store.clone(),
            registry,
            Admission::new(store.clone(), client.clone()),
            Converter::new(client),
        );
        api.refresh_custom_resources();
        api.migrate_shared_storage().await;

        let listener = TcpListener::bind(config.bind)
            .await
            .map_err(|source| ServerError::Bind { addr: config.bind, source })?;
        let address =
            listener.local_addr().map_err(|source| ServerError::Bind { addr: config.bind, source })?;
        let ready = Arc::new(AtomicBool::new(false));
        let requests = RequestCounts::default();
        let state = HttpState {
            api: api.clone(),
            address: address.to_string(),
            ready: ready.clone(),
            requests: requests.clone(),
        };
        let metrics = ApiMetrics::new();
        let served = metrics.clone();
        let pod = "/api/v1/namespaces/{namespace}/pods/{name}";
        let router = Router::new()
            .route("/metrics", get(move || std::future::ready(metrics_response(&served))))
            .route(&format!("{pod}/log"), axum::routing::get(pod_streams::log))
            .route(&format!("{pod}/exec"), axum::routing::any(pod_streams::exec))
            .route(&format!("{pod}/attach"), axum::routing::any(pod_streams::attach))
            .fallback(handle)
            .with_state(state)
            .layer(axum::middleware::from_fn_with_state(metrics, instrument));
        let (shutdown, mut shutdown_rx) = watch::channel(false);

        let (url, ca_pem, tls_config) = if config.tls {
            let certs = tls::generate()?;
            let server_config = tls::server_config(&certs)?;
            (format!("https://{address}"), Some(certs.ca_pem), Some(server_config))
        } else {
            (format!("http://{address}"), None, None)
        };

        let mut tasks = Vec::new();
        let serve = match tls_config {
            None => tokio::spawn(async move {
                let result = axum::serve(listener, router)
                    .with_graceful_shutdown(async move {
                        let _ = shutdown_rx.wait_for(|stop| *stop).await;
                    })
                    .await;
                if let Err(error) = result {
                    tracing::error!(%error, "API server stopped");
                }
            }),
            Some(server_config) => {
                tokio::spawn(tls::serve_https(listener, router, server_config, async move {
                    let _ = shutdown_rx.wait_for(|stop| *stop).await;
                }))
            }
        };
        tasks.push(serve);
        tasks.extend(crate::controllers::start(api.clone(), config.node_lifecycle));
        bootstrap(&api).await;
        ready.store(true, std::sync::atomic::Ordering::SeqCst);

        let kubeconfig = kubeconfig(&url, ca_pem.as_deref());
        if let Some(path) = &config.kubeconfig_path {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(ServerError::Kubeconfig)?;
            }
            std::fs::write(path, &kubeconfig).map_err(ServerError::Kubeconfig)?;
        }
        tracing::info!(%url, "embedded API server listening");
        Ok(Self { address, url, kubeconfig, ca_pem, api, requests, shutdown, tasks })
    }

    /// Counts of the resource requests answered over HTTP so far, by client (`User-Agent`),
    /// verb, resource and status code. Writes made in process through [`Self::api`] (the
    /// built-in controllers) are not requests and are not counted.
    pub fn requests(&self) -> &RequestCounts {
        &self.requests
    }

    /// Stops serving, ends watches and the controllers.
    pub async fn shutdown(self) {
        let _ = self.shutdown.send(true);
        self.api.store.stop_watches();
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// The namespaces and priority classes every cluster starts with.
async fn bootstrap(api: &Api) {
    let options = WriteOptions {
        dry_run: false,
        field_manager: "kube-apiserver".into(),
        field_validation: FieldValidation::Ignore,
        force: false,
    };
    let mut objects = Vec::new();
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        objects.push((
            "",
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
        ));
    }
    for (name, value, description) in SYSTEM_PRIORITY_CLASSES {
        objects.push((
            "scheduling.k8s.io",
            "priorityclasses",
            json!({
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": name}, "value": value, "description": description,
            }),
        ));
    }
    for (group, resource, object) in objects {
        let Some(def) = api.registry.find(group, "v1", resource) else { continue };
        let name = object.pointer("/metadata/name").cloned().unwrap_or_default();
        match api.create(&def, "v1", None, object, &options).await {
            Ok(_) => {}
            Err(error) if error.code == 409 => {}
            Err(error) => tracing::warn!(%error, %name, resource, "could not create a bootstrap object"),
        }
    }
}

/// A kubeconfig for `url` (with the CA when serving HTTPS).
pub fn kubeconfig(url: &str, ca_pem: Option<&str>) -> String {
    let cluster = match ca_pem {
        Some(ca) => format!(
            "    server: {url}\n    certificate-authority-data: {}\n",
            base64::engine::general_purpose::STANDARD.encode(ca)
        ),
        None => format!("    server: {url}\n"),
    };
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kruise\n  cluster:\n{cluster}contexts:\n- name: kruise\n  context:\n    cluster: kruise\n    user: admin\n    namespace: default\ncurrent-context: kruise\nusers:\n- name: admin\n  user: {{}}\n"
    )
}
