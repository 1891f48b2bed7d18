//! Errors of the in-place update engine.

/// Why the engine could not compute or carry out an in-place update.
#[derive(Debug, thiserror::Error)]
pub enum InPlaceError {
    /// The Kubernetes API refused or failed a request.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// A JSON document the engine builds could not be (de)serialized.
    #[error("serialization: {0}")]
    Serde(#[from] serde_json::Error),
    /// An annotation the engine owns holds something it cannot read.
    #[error("pod annotation {key} is not valid: {reason}")]
    InvalidAnnotation {
        /// The annotation key.
        key: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A ControllerRevision's data does not hold a pod template.
    #[error("controller revision {name}: {reason}")]
    InvalidRevision {
        /// The revision name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The pod object lacks something every pod in the API has (name, namespace).
    #[error("pod is missing {0}")]
    InvalidPod(&'static str),
    /// The pod carries a grace annotation but no state annotation (upstream treats this as an
    /// error too: the state tells when the grace period started).
    #[error("pod has the in-place update grace annotation but no in-place update state")]
    GraceWithoutState,
}

impl InPlaceError {
    /// Whether the API answered 409 Conflict (a stale resourceVersion): the caller re-reads.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Kube(kube::Error::Api(status)) if status.code == 409)
    }

    /// Whether the API answered 404 Not Found (the pod is gone).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Kube(kube::Error::Api(status)) if status.code == 404)
    }
}

impl From<InPlaceError> for crate::ControllerError {
    fn from(error: InPlaceError) -> Self {
        match error {
            InPlaceError::Kube(error) => Self::Kube(error),
            InPlaceError::Serde(error) => Self::Serde(error),
            other => Self::Invalid(other.to_string()),
        }
    }
}
