//! Errors of the node daemon.

use std::{path::PathBuf, time::Duration};

/// Why a CRI call could not be made or failed.
#[derive(Debug, thiserror::Error)]
pub enum CriError {
    /// No runtime endpoint was given and none of the probed sockets exists.
    #[error("no CRI socket found (searched {})", display_paths(.searched))]
    NoEndpoint {
        /// Every socket path that was tried.
        searched: Vec<PathBuf>,
    },
    /// The socket exists but the gRPC connection could not be set up.
    #[error("cannot connect to CRI socket {endpoint}: {source}")]
    Connect {
        /// Socket path.
        endpoint: PathBuf,
        /// Transport error.
        source: tonic::transport::Error,
    },
    /// The call did not finish in time.
    #[error("CRI {method} timed out after {after:?}")]
    Timeout {
        /// gRPC method.
        method: &'static str,
        /// The timeout.
        after: Duration,
    },
    /// The runtime answered with an error. Displayed as Go's gRPC errors are, so messages read
    /// as upstream's (`rpc error: code = Unknown desc = failed to pull and unpack image ...`).
    #[error("rpc error: code = {code} desc = {message}", code = code_name(.status.code()), message = .status.message())]
    Call {
        /// gRPC method.
        method: &'static str,
        /// The status the runtime answered.
        status: tonic::Status,
    },
}

impl CriError {
    /// Whether the runtime could not be reached at all (as opposed to answering with an
    /// error), so that the connection should be re-established.
    pub fn is_unreachable(&self) -> bool {
        match self {
            Self::NoEndpoint { .. } | Self::Connect { .. } => true,
            Self::Timeout { method, .. } => *method == "connect",
            Self::Call { status, .. } => status.code() == tonic::Code::Unavailable,
        }
    }
}

fn display_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// The Go name of a gRPC code (`Unknown`, `InvalidArgument`, ...), as grpc-go prints it.
fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "Canceled",
        Code::Unknown => "Unknown",
        Code::InvalidArgument => "InvalidArgument",
        Code::DeadlineExceeded => "DeadlineExceeded",
        Code::NotFound => "NotFound",
        Code::AlreadyExists => "AlreadyExists",
        Code::PermissionDenied => "PermissionDenied",
        Code::ResourceExhausted => "ResourceExhausted",
        Code::FailedPrecondition => "FailedPrecondition",
        Code::Aborted => "Aborted",
        Code::OutOfRange => "OutOfRange",
        Code::Unimplemented => "Unimplemented",
        Code::Internal => "Internal",
        Code::Unavailable => "Unavailable",
        Code::DataLoss => "DataLoss",
        Code::Unauthenticated => "Unauthenticated",
    }
}

/// Why the daemon (or one of its workers) stopped.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The Kubernetes API refused or failed a request.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// The container runtime failed.
    #[error("container runtime: {0}")]
    Cri(#[from] CriError),
    /// An object could not be (de)serialized.
    #[error("serialization: {0}")]
    Serde(#[from] serde_json::Error),
    /// The configuration cannot work (no node name, say).
    #[error("{0}")]
    Config(String),
    /// The shared process runtime (the health endpoint) could not start.
    #[error(transparent)]
    Runtime(#[from] kruise_runtime::RuntimeError),
    /// A watch stream failed.
    #[error("watch: {0}")]
    Watch(String),
    /// An object kept changing under a read-modify-write (it is tried again later).
    #[error("conflict: {0}")]
    Conflict(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_errors_read_like_grpc_go() {
        let error = CriError::Call {
            method: "PullImage",
            status: tonic::Status::unknown("failed to pull and unpack image \"x\""),
        };
        assert_eq!(
            error.to_string(),
            "rpc error: code = Unknown desc = failed to pull and unpack image \"x\""
        );
        assert!(!error.is_unreachable());
        let down =
            CriError::Call { method: "Version", status: tonic::Status::unavailable("transport error") };
        assert!(down.is_unreachable());
        let none = CriError::NoEndpoint { searched: vec!["/a.sock".into(), "/b.sock".into()] };
        assert_eq!(none.to_string(), "no CRI socket found (searched /a.sock, /b.sock)");
    }
}
