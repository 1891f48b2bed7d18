//! Kubernetes' streaming protocols as the simulated kubelet serves them for `exec` and
//! `attach`: WebSocket channels (`v5.channel.k8s.io`, `v4.channel.k8s.io`, what kubectl
//! speaks and what the embedded API server tunnels through) and SPDY/3.1 streams (protocol
//! `v4.channel.k8s.io`, what kube-apiserver translates kubectl's WebSocket to on its way to a
//! kubelet). What runs on the streams ([`Job`]) knows nothing of the protocol.

pub mod exec;
pub mod spdy;
pub mod spdy_server;
pub mod websocket;

use std::{future::Future, pin::Pin};

use serde_json::Value;
use tokio::sync::mpsc;

pub use exec::Output;

/// Which streams the client asked for (the kubelet's `input`, `output`, `error`, `tty` query
/// parameters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamRequest {
    /// Standard input.
    pub stdin: bool,
    /// Standard output.
    pub stdout: bool,
    /// Standard error.
    pub stderr: bool,
    /// A terminal (then a resize stream too).
    pub tty: bool,
}

impl StreamRequest {
    /// The streams from the kubelet's query parameters (`1` or `true` means on).
    pub fn from_query(pairs: &[(String, String)]) -> Self {
        let on = |names: &[&str]| {
            pairs.iter().any(|(k, v)| names.contains(&k.as_str()) && matches!(v.as_str(), "1" | "true"))
        };
        Self {
            stdin: on(&["input", "stdin"]),
            stdout: on(&["output", "stdout"]),
            stderr: on(&["error", "stderr"]),
            tty: on(&["tty"]),
        }
    }
}

/// The future a [`Job`] returns: the `metav1.Status` for the error stream.
pub type JobFuture = Pin<Box<dyn Future<Output = Value> + Send>>;

/// What runs on the streams: gets standard input (when asked for; the channel closing is end
/// of input) and a sender for output, and ends with the status to report.
pub type Job = Box<dyn FnOnce(Option<mpsc::Receiver<Vec<u8>>>, mpsc::Sender<Output>) -> JobFuture + Send>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_flags_come_from_the_kubelet_query() {
        let query = |pairs: &[(&str, &str)]| {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>()
        };
        assert_eq!(
            StreamRequest::from_query(&query(&[("output", "1"), ("error", "1"), ("command", "ls")])),
            StreamRequest { stdin: false, stdout: true, stderr: true, tty: false }
        );
        assert_eq!(
            StreamRequest::from_query(&query(&[("stdin", "true"), ("tty", "1"), ("output", "0")])),
            StreamRequest { stdin: true, stdout: false, stderr: false, tty: true }
        );
    }
}
