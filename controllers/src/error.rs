//! Errors of the controllers crate.

/// Why a controller, the engine or the webhook server failed.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The Kubernetes API refused or failed a request.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// An object could not be (de)serialized.
    #[error("serialization: {0}")]
    Serde(#[from] serde_json::Error),
    /// An object in the cluster is not what the controller can work with.
    #[error("{0}")]
    Invalid(String),
    /// Local I/O (certificates, sockets).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The shared process runtime (the health endpoint) could not start.
    #[error(transparent)]
    Runtime(#[from] kruise_runtime::RuntimeError),
    /// TLS material could not be generated or loaded.
    #[error("tls: {0}")]
    Tls(String),
}
