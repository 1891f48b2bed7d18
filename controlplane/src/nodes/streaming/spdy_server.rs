//! The server side of a SPDY/3.1 streaming connection (`v4.channel.k8s.io`), as a kubelet
//! answers kube-apiserver: the client opens one stream per channel (`streamtype` header:
//! `error`, `stdin`, `stdout`, `stderr`, `resize`), each is answered with a `SYN_REPLY`; once
//! all the requested ones are there the job runs; its output goes out as data frames, the
//! `metav1.Status` on the error stream, then every output stream is finished (`FLAG_FIN`).
//! Pings are echoed; flow control frames are ignored, as Go's spdystream does.

use std::{collections::HashMap, time::Duration};

use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt},
    sync::mpsc,
};

use super::{
    Job, Output, StreamRequest,
    spdy::{FLAG_FIN, Frame, HeaderCodec, MAX_DATA, header},
};

/// The stream protocol this server speaks over SPDY.
pub const PROTOCOL: &str = "v4.channel.k8s.io";

/// How long the client has to open its streams.
const STREAM_CREATION_TIMEOUT: Duration = Duration::from_secs(30);

/// The protocol to answer with, from the client's `X-Stream-Protocol-Version` offers.
pub fn negotiate<'a>(offers: impl IntoIterator<Item = &'a str>) -> Option<&'static str> {
    offers.into_iter().flat_map(|h| h.split(',')).any(|p| p.trim() == PROTOCOL).then_some(PROTOCOL)
}

/// How many streams the client opens for a request: the error stream, one per requested
/// channel, and the resize stream of a terminal.
pub fn expected_streams(request: StreamRequest) -> usize {
    1 + usize::from(request.stdin)
        + usize::from(request.stdout)
        + usize::from(request.stderr)
        + usize::from(request.tty)
}

/// Serves one upgraded connection.
pub async fn serve<S>(io: S, request: StreamRequest, job: Job)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (read_half, write_half) = tokio::io::split(io);
    let (frames_tx, mut frames) = mpsc::channel::<Frame>(64);
    let (out_frames, out_frames_rx) = mpsc::channel::<Frame>(64);
    let reader = tokio::spawn(read_frames(read_half, frames_tx));
    let writer = tokio::spawn(write_frames(write_half, out_frames_rx));

    // The streams, by type.
    let mut streams: HashMap<String, u32> = HashMap::new();
    let deadline = tokio::time::sleep(STREAM_CREATION_TIMEOUT);
    tokio::pin!(deadline);
    while streams.len() < expected_streams(request) {
        let frame = tokio::select! {
            frame = frames.recv() => frame,
            _ = &mut deadline => {
                tracing::debug!("timed out waiting for the client to create streams");
                None
            }
        };
        let Some(frame) = frame else {
            reader.abort();
            return;
        };
        if !answer_control(&frame, &out_frames, &mut streams).await {
            reader.abort();
            return;
        }
    }

    let (stdin_tx, stdin_rx) = if request.stdin {
        let (tx, rx) = mpsc::channel::<Vec<u8>>(16);
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let mut stdin = stdin_tx;
    let stdin_id = streams.get("stdin").copied();
    let (out_tx, mut out_rx) = mpsc::channel::<Output>(64);
    let work = job(stdin_rx, out_tx);
    tokio::pin!(work);
    let status = loop {
        tokio::select! {
            Some(output) = out_rx.recv() => {
                if let Some(frame) = data_frame(&streams, output, request.tty) {
                    let _ = out_frames.send(frame).await;
                }
            }
            frame = frames.recv() => {
                let Some(frame) = frame else { break None };
                match &frame {
                    Frame::Data { stream_id, flags, data } if Some(*stream_id) == stdin_id => {
                        if !data.is_empty()
                            && let Some(tx) = &stdin
                            && tx.send(data.clone()).await.is_err()
                        {
                            stdin = None;
                        }
                        if flags & FLAG_FIN != 0 {
                            stdin = None;
                        }
                    }
                    Frame::RstStream { stream_id, .. } if Some(*stream_id) == stdin_id => stdin = None,
                    Frame::GoAway { .. } => break None,
                    _ => {
                        if !answer_control(&frame, &out_frames, &mut streams).await {
                            break None;
                        }
                    }
                }
            }
            status = &mut work => break Some(status),
        }
    };
    if let Some(status) = status {
        while let Ok(output) = out_rx.try_recv() {
            if let Some(frame) = data_frame(&streams, output, request.tty) {
                let _ = out_frames.send(frame).await;
            }
        }
        if let Some(&error) = streams.get("error") {
            let data = serde_json::to_vec(&status).unwrap_or_default();
            let _ = out_frames.send(Frame::Data { stream_id: error, flags: 0, data }).await;
        }
        for kind in ["stdout", "stderr", "error"] {
            if let Some(&id) = streams.get(kind) {
                let _ =
                    out_frames.send(Frame::Data { stream_id: id, flags: FLAG_FIN, data: Vec::new() }).await;
            }
        }
    }
    drop(out_frames);
    let _ = writer.await;
    reader.abort();
}

/// Handles a frame that is not stream data: replies to new streams and pings. False when the
/// connection must end.
async fn answer_control(
    frame: &Frame,
    out: &mpsc::Sender<Frame>,
    streams: &mut HashMap<String, u32>,
) -> bool {
    match frame {
        Frame::SynStream { stream_id, headers, .. } => {
            let kind = header(headers, "streamtype").unwrap_or_default().to_string();
            streams.insert(kind, *stream_id);
            out.send(Frame::SynReply { stream_id: *stream_id, flags: 0, headers: Vec::new() }).await.is_ok()
        }
        Frame::Ping { id } => out.send(Frame::Ping { id: *id }).await.is_ok(),
        Frame::GoAway { .. } => false,
        _ => true,
    }
}

/// The data frame for one piece of output, on its stream (stderr goes to stdout on a terminal).
fn data_frame(streams: &HashMap<String, u32>, output: Output, tty: bool) -> Option<Frame> {
    let (kind, data) = match output {
        Output::Stdout(data) => ("stdout", data),
        Output::Stderr(data) if tty => ("stdout", data),
        Output::Stderr(data) => ("stderr", data),
    };
    let stream_id = *streams.get(kind)?;
    Some(Frame::Data { stream_id, flags: 0, data: data.into_iter().take(MAX_DATA).collect() })
}

async fn read_frames<R: AsyncRead + Unpin>(mut read: R, frames: mpsc::Sender<Frame>) {
    let mut codec = HeaderCodec::new();
    let mut buffer: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        loop {
            match codec.decode(&buffer) {
                Ok(Some((frame, used))) => {
                    buffer.drain(..used);
                    if frames.send(frame).await.is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    tracing::debug!(%error, "bad SPDY input; closing the connection");
                    return;
                }
            }
        }
        match read.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
}

async fn write_frames<W: AsyncWrite + Unpin>(mut write: W, mut frames: mpsc::Receiver<Frame>) {
    let mut codec = HeaderCodec::new();
    while let Some(frame) = frames.recv().await {
        let Ok(bytes) = codec.encode(&frame) else { continue };
        if write.write_all(&bytes).await.is_err() || write.flush().await.is_err() {
            return;
        }
    }
    let _ = write.shutdown().await;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn protocol_and_stream_count() {
        assert_eq!(negotiate(["v4.channel.k8s.io,v3.channel.k8s.io"]), Some(PROTOCOL));
        assert_eq!(negotiate(["v3.channel.k8s.io", "channel.k8s.io"]), None);
        let request = StreamRequest { stdin: false, stdout: true, stderr: true, tty: false };
        assert_eq!(expected_streams(request), 3);
        assert_eq!(
            expected_streams(StreamRequest { stdin: true, stdout: true, stderr: false, tty: true }),
            4
        );
    }

    /// A client as client-go's SPDY executor behaves: it opens the streams, sends stdin, reads
    /// output and the status until every stream is finished.
    #[tokio::test]
    async fn a_client_runs_a_job_over_spdy() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let request = StreamRequest { stdin: true, stdout: true, stderr: true, tty: false };
        let job: Job = Box::new(|stdin, out| {
            Box::pin(async move {
                let mut stdin = stdin.expect("stdin was asked for");
                while let Some(bytes) = stdin.recv().await {
                    let _ = out.send(Output::Stdout(bytes)).await;
                }
                let _ = out.send(Output::Stderr(b"done\n".to_vec())).await;
                json!({"metadata": {}, "status": "Success"})
            })
        });
        let served = tokio::spawn(serve(server, request, job));
        let (mut read, mut write) = tokio::io::split(client);
        let mut codec = HeaderCodec::new();
        for (id, kind) in [(1, "error"), (3, "stdin"), (5, "stdout"), (7, "stderr")] {
            let frame = Frame::SynStream {
                stream_id: id,
                associated_to: 0,
                priority: 0,
                flags: 0,
                headers: vec![("streamtype".into(), kind.into())],
            };
            write.write_all(&codec.encode(&frame).unwrap()).await.unwrap();
        }
        write.write_all(&codec.encode(&Frame::Ping { id: 2 }).unwrap()).await.unwrap();
        let stdin = Frame::Data { stream_id: 3, flags: FLAG_FIN, data: b"hello".to_vec() };
        write.write_all(&codec.encode(&stdin).unwrap()).await.unwrap();

        let mut decoder = HeaderCodec::new();
        let mut buffer = Vec::new();
        let mut frames = Vec::new();
        let mut chunk = vec![0u8; 4096];
        loop {
            let n = read.read(&mut chunk).await.unwrap();
            if n == 0 {
                break;
            }
            buffer.extend_from_slice(&chunk[..n]);
            while let Some((frame, used)) = decoder.decode(&buffer).unwrap() {
                buffer.drain(..used);
                frames.push(frame);
            }
        }
        served.await.unwrap();
        let replies: Vec<u32> = frames
            .iter()
            .filter_map(|f| match f {
                Frame::SynReply { stream_id, .. } => Some(*stream_id),
                _ => None,
            })
            .collect();
        assert_eq!(replies, vec![1, 3, 5, 7]);
        assert!(frames.contains(&Frame::Ping { id: 2 }));
        let data = |id: u32| -> Vec<u8> {
            frames
                .iter()
                .filter_map(|f| match f {
                    Frame::Data { stream_id, data, .. } if *stream_id == id => Some(data.clone()),
                    _ => None,
                })
                .flatten()
                .collect()
        };
        assert_eq!(data(5), b"hello");
        assert_eq!(data(7), b"done\n");
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&data(1)).unwrap()["status"], "Success");
        for id in [1, 5, 7] {
            assert!(
                frames.iter().any(|f| matches!(f, Frame::Data { stream_id, flags, .. } if *stream_id == id && flags & FLAG_FIN != 0)),
                "stream {id} finished"
            );
        }
    }
}
