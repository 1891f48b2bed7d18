//! Errors of the runtime crate.

/// Why the shared runtime could not start.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// Local I/O (binding the health endpoint).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}
