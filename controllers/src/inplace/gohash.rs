//! The Go-compatible container hashes (kubelet container hash, env-from-metadata hash). They
//! moved to [`kruise_crds::common::containermeta_hash`] so that the node daemon, which reports
//! them, and this engine, which checks them, share one implementation without the daemon
//! linking the manager's crate; this module re-exports them under their old path.

pub use kruise_crds::common::containermeta_hash::*;
