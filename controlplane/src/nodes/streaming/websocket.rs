//! The WebSocket channel protocols of Kubernetes streaming (`channel.k8s.io`,
//! `v4.channel.k8s.io`, `v5.channel.k8s.io`): every binary message starts with its channel
//! (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize); in v5 a message `[255, n]` closes the
//! client's channel `n` (stdin: end of input). The server opens with an empty message on its
//! first output channel, as the kubelet does, writes the `metav1.Status` on the error channel
//! when the job ends and closes the connection.

use futures::{SinkExt, StreamExt};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    sync::mpsc,
};
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{
        Message,
        protocol::{CloseFrame, Role, frame::coding::CloseCode},
    },
};

use super::{Job, Output, StreamRequest};

/// `v5.channel.k8s.io`: v4 plus the close signal (what kubectl 1.30+ asks for).
pub const V5: &str = "v5.channel.k8s.io";
/// `v4.channel.k8s.io`: the error channel carries a JSON `metav1.Status`.
pub const V4: &str = "v4.channel.k8s.io";
/// `channel.k8s.io`: the first protocol (plain error text).
pub const V1: &str = "channel.k8s.io";

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const CLOSE: u8 = 255;

/// The protocol to answer with, from the client's `Sec-WebSocket-Protocol` offers (comma
/// separated, possibly several headers): the newest one this server speaks.
pub fn negotiate<'a>(offers: impl IntoIterator<Item = &'a str>) -> Option<&'static str> {
    let offered: Vec<String> =
        offers.into_iter().flat_map(|h| h.split(',')).map(|p| p.trim().to_string()).collect();
    [V5, V4, V1].into_iter().find(|p| offered.iter().any(|o| o == p))
}

/// What a client message means.
#[derive(Debug, PartialEq, Eq)]
enum Inbound {
    /// Bytes for standard input.
    Stdin(Vec<u8>),
    /// End of standard input.
    StdinClosed,
    /// Something else (resize, other channels).
    Ignored,
}

fn inbound(protocol: &str, data: &[u8]) -> Inbound {
    match data {
        [STDIN, rest @ ..] => Inbound::Stdin(rest.to_vec()),
        [CLOSE, STDIN, ..] if protocol == V5 => Inbound::StdinClosed,
        _ => Inbound::Ignored,
    }
}

fn message(channel: u8, data: &[u8]) -> Message {
    let mut bytes = Vec::with_capacity(data.len() + 1);
    bytes.push(channel);
    bytes.extend_from_slice(data);
    Message::Binary(bytes.into())
}

/// Serves one upgraded connection: runs `job` on the channels `request` asks for.
pub async fn serve<S>(io: S, protocol: &'static str, request: StreamRequest, job: Job)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let socket = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
    let (mut sink, mut source) = socket.split();
    let first = if request.stdout {
        STDOUT
    } else if request.stderr {
        STDERR
    } else {
        ERROR
    };
    if sink.send(message(first, &[])).await.is_err() {
        return;
    }
    let (stdin_tx, stdin_rx) = if request.stdin {
        let (tx, rx) = mpsc::channel::<Vec<u8>>(16);
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let reader = async move {
        let mut stdin = stdin_tx;
        while let Some(Ok(received)) = source.next().await {
            tracing::trace!(?received, "websocket message from the client");
            match received {
                Message::Binary(data) => match inbound(protocol, &data) {
                    Inbound::Stdin(bytes) => {
                        if let Some(tx) = &stdin
                            && tx.send(bytes).await.is_err()
                        {
                            stdin = None;
                        }
                    }
                    Inbound::StdinClosed => stdin = None,
                    Inbound::Ignored => {}
                },
                Message::Close(_) => break,
                _ => {}
            }
        }
    };
    let (out_tx, mut out_rx) = mpsc::channel::<Output>(64);
    let work = job(stdin_rx, out_tx);
    tokio::pin!(reader, work);
    let status = loop {
        tokio::select! {
            Some(output) = out_rx.recv() => {
                if sink.send(outbound(output, request.tty)).await.is_err() {
                    return;
                }
            }
            status = &mut work => break status,
            _ = &mut reader => return,
        }
    };
    while let Ok(output) = out_rx.try_recv() {
        if sink.send(outbound(output, request.tty)).await.is_err() {
            return;
        }
    }
    let status_bytes = if protocol == V1 {
        // channel.k8s.io carries the error as plain text, nothing on success.
        match status.get("status").and_then(|s| s.as_str()) {
            Some("Success") => Vec::new(),
            _ => status.get("message").and_then(|m| m.as_str()).unwrap_or_default().as_bytes().to_vec(),
        }
    } else {
        serde_json::to_vec(&status).unwrap_or_default()
    };
    let _ = sink.send(message(ERROR, &status_bytes)).await;
    let close = CloseFrame { code: CloseCode::Normal, reason: "".into() };
    let _ = sink.send(Message::Close(Some(close))).await;
    let _ = sink.close().await;
}

fn outbound(output: Output, tty: bool) -> Message {
    match output {
        Output::Stdout(bytes) => message(STDOUT, &bytes),
        // A terminal has one output stream.
        Output::Stderr(bytes) if tty => message(STDOUT, &bytes),
        Output::Stderr(bytes) => message(STDERR, &bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v5 client: sends input, closes stdin with the close signal, reads output and the
    /// status until the server closes.
    #[tokio::test]
    async fn a_v5_client_runs_a_job() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let request = StreamRequest { stdin: true, stdout: true, stderr: false, tty: false };
        let job: Job = Box::new(|stdin, out| {
            Box::pin(async move {
                let mut stdin = stdin.expect("stdin was asked for");
                while let Some(bytes) = stdin.recv().await {
                    let _ = out.send(Output::Stdout(bytes)).await;
                }
                serde_json::json!({"metadata": {}, "status": "Success"})
            })
        });
        let served = tokio::spawn(serve(server, V5, request, job));
        let mut socket = WebSocketStream::from_raw_socket(client, Role::Client, None).await;
        socket.send(message(STDIN, b"ping")).await.unwrap();
        socket.send(Message::Binary(vec![CLOSE, STDIN].into())).await.unwrap();
        let mut received = Vec::new();
        while let Some(Ok(item)) = socket.next().await {
            match item {
                Message::Binary(data) => received.push(data.to_vec()),
                Message::Close(_) => break,
                _ => {}
            }
        }
        served.await.unwrap();
        assert_eq!(received[0], vec![STDOUT], "the opening empty message");
        assert!(received.contains(&b"\x01ping".to_vec()), "{received:?}");
        let status = received.iter().find(|m| m.first() == Some(&ERROR)).unwrap();
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&status[1..]).unwrap()["status"], "Success");
    }

    #[test]
    fn the_newest_offered_protocol_wins() {
        assert_eq!(negotiate(["v5.channel.k8s.io"]), Some(V5));
        assert_eq!(negotiate(["v4.channel.k8s.io, v5.channel.k8s.io"]), Some(V5));
        assert_eq!(negotiate(["base64.channel.k8s.io", "v4.channel.k8s.io"]), Some(V4));
        assert_eq!(negotiate(["channel.k8s.io"]), Some(V1));
        assert_eq!(negotiate(["base64.channel.k8s.io"]), None);
    }

    #[test]
    fn client_messages_by_channel() {
        assert_eq!(inbound(V5, &[0, b'a', b'b']), Inbound::Stdin(b"ab".to_vec()));
        assert_eq!(inbound(V5, &[255, 0]), Inbound::StdinClosed);
        assert_eq!(inbound(V4, &[255, 0]), Inbound::Ignored, "no close signal before v5");
        assert_eq!(inbound(V5, &[4, b'{']), Inbound::Ignored);
        assert_eq!(inbound(V5, &[]), Inbound::Ignored);
        assert_eq!(outbound(Output::Stderr(b"x".to_vec()), true), message(STDOUT, b"x"));
        assert_eq!(outbound(Output::Stderr(b"x".to_vec()), false), message(STDERR, b"x"));
    }
}
