//! The embedded API server: HTTP(S) on loopback, serving built-in kinds and CRDs with
//! kube-apiserver's semantics, and writing a kubeconfig for clients.

pub mod admission;
pub mod api;
pub mod builtin;
pub mod claim_admission;
pub mod conversion;
pub mod counters;
pub mod discovery;
pub mod ephemeral;
pub mod errors;
pub mod events;
pub mod filter;
pub mod http;
pub mod metrics;
pub mod negotiation;
pub mod objects;
pub mod openapi;
pub mod openapi_protobuf;
pub mod options;
pub mod pod_admission;
pub mod pod_streams;
pub mod protobuf;
pub mod request;
pub mod respond;
pub mod scale_validation;
mod server;
pub mod subresources;
pub mod table;
pub mod tls;
pub mod watch;
pub mod webhook_client;

pub use server::{ApiServer, ApiServerConfig, ServerError};
