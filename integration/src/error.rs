//! The harness's errors.

use std::{path::PathBuf, time::Duration};

/// Why a control plane could not be started or driven.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// Some of the real control-plane binaries are missing.
    #[error(
        "real control plane: {missing:?} not found in {dir} (run `bash integration/k8s/build.sh` or set KRUISE_K8S_BIN)"
    )]
    BinariesMissing {
        /// The directory searched.
        dir: PathBuf,
        /// The binaries not found there.
        missing: Vec<String>,
    },
    /// A local program the test needs is not installed (containerd, docker-registry).
    #[error("{program} is not installed: {hint}")]
    ProgramMissing {
        /// The program.
        program: String,
        /// How to get it.
        hint: String,
    },
    /// No PostgreSQL binaries were found (tests that need PostgreSQL skip with this message).
    #[error("PostgreSQL: {0}")]
    PostgresMissing(String),
    /// No directory to look for binaries in (neither KRUISE_K8S_BIN nor HOME is set).
    #[error("real control plane: neither KRUISE_K8S_BIN nor HOME is set")]
    NoBinaryDir,
    /// A file-system operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// Certificates or keys could not be generated.
    #[error("generating certificates: {0}")]
    Certs(#[from] rcgen::Error),
    /// Simulated nodes could not be started or driven.
    #[error("simulated nodes: {0}")]
    Nodes(String),
    /// A process could not be started.
    #[error("starting {name}: {source}")]
    Spawn {
        /// The process.
        name: String,
        /// The error.
        source: std::io::Error,
    },
    /// A process exited while it should have been running.
    #[error("{name} exited with {status} (log {}):\n{tail}", log.display())]
    Exited {
        /// The process.
        name: String,
        /// How it ended.
        status: String,
        /// Its log file.
        log: PathBuf,
        /// The last lines of its log.
        tail: String,
    },
    /// Something did not happen in time.
    #[error("timed out after {waited:?} waiting for {what} (last: {last})")]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long.
        waited: Duration,
        /// The last observation or error.
        last: String,
    },
    /// The embedded API server could not start.
    #[error("embedded API server: {0}")]
    Embedded(#[from] kruise_controlplane::apiserver::ServerError),
    /// A kubeconfig could not be read or turned into a client configuration.
    #[error("kubeconfig: {0}")]
    Kubeconfig(#[from] kube::config::KubeconfigError),
    /// A kube-rs request failed.
    #[error("kube: {0}")]
    Kube(#[from] kube::Error),
    /// A raw HTTP request failed.
    #[error("http: {0}")]
    Http(#[from] reqwest::Error),
    /// A header value could not be built (a token with characters HTTP does not allow).
    #[error("header value: {0}")]
    Header(#[from] reqwest::header::InvalidHeaderValue),
    /// The CRD manifests could not be built.
    #[error("building the Kruise CRDs: {0}")]
    Crds(#[from] kruise_crds::schema::SchemaError),
    /// YAML could not be rendered.
    #[error("yaml: {0}")]
    Yaml(#[from] serde_yaml::Error),
    /// The API server refused a request.
    #[error("{what}: HTTP {status}: {body}")]
    Rejected {
        /// The request.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The response body.
        body: String,
    },
}

impl HarnessError {
    /// An [`HarnessError::Io`] with context.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }
}
