//! The embedded control plane of kruise-rs: a Kubernetes-compatible API server in process (with
//! real watch semantics, admission webhooks, CRDs, garbage collection) and simulated nodes. It
//! knows nothing about Kruise: it serves any CRD, and everything else talks to it through the
//! Kubernetes API, exactly as it would to a real kube-apiserver.

pub mod apiserver;
pub mod controllers;
pub mod nodes;
pub mod registry;
pub mod semantics;
pub mod storage;
