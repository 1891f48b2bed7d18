//! SPDY/3.1 framing, as far as Kubernetes' streaming uses it (kube-apiserver reaches a
//! kubelet's `exec` and `attach` this way): control frames (`SYN_STREAM`, `SYN_REPLY`,
//! `RST_STREAM`, `SETTINGS`, `PING`, `GOAWAY`, `HEADERS`, `WINDOW_UPDATE`) and data frames,
//! with header blocks compressed by one zlib stream per direction primed with the SPDY/3
//! dictionary. Pure encoding and decoding; the connection logic is in
//! [`super::spdy_server`].

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The protocol version in every control frame.
pub const VERSION: u16 = 3;
/// `FLAG_FIN` of data frames and of `SYN_STREAM` / `SYN_REPLY`: the sender's last frame on
/// the stream.
pub const FLAG_FIN: u8 = 0x01;
/// The zlib dictionary of SPDY/3 header blocks (from the SPDY/3 specification).
pub const DICTIONARY: &[u8] = include_bytes!("spdy3_dictionary.bin");
/// The largest data frame payload.
pub const MAX_DATA: usize = (1 << 24) - 1;

/// Headers of a stream: lowercase names; several values of one name are joined by NUL on the
/// wire.
pub type Headers = Vec<(String, String)>;

/// One SPDY frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// The peer opens a stream.
    SynStream {
        /// Stream id (odd from the client).
        stream_id: u32,
        /// The stream it is associated to (server push; 0 otherwise).
        associated_to: u32,
        /// Priority (0 highest, 7 lowest).
        priority: u8,
        /// `FLAG_FIN`, `FLAG_UNIDIRECTIONAL`.
        flags: u8,
        /// Headers.
        headers: Headers,
    },
    /// The answer to a `SYN_STREAM`.
    SynReply {
        /// Stream id.
        stream_id: u32,
        /// `FLAG_FIN`.
        flags: u8,
        /// Headers.
        headers: Headers,
    },
    /// A stream is abandoned.
    RstStream {
        /// Stream id.
        stream_id: u32,
        /// Status code (1 protocol error, 5 cancel, ...).
        status: u32,
    },
    /// Connection settings (flag, id, value).
    Settings {
        /// Frame flags.
        flags: u8,
        /// Entries.
        entries: Vec<(u8, u32, u32)>,
    },
    /// A ping, echoed by the receiver.
    Ping {
        /// Ping id.
        id: u32,
    },
    /// The sender closes the connection.
    GoAway {
        /// Last stream id it accepted.
        last_good_stream_id: u32,
        /// Status code.
        status: u32,
    },
    /// More headers for a stream.
    Headers {
        /// Stream id.
        stream_id: u32,
        /// Frame flags.
        flags: u8,
        /// Headers.
        headers: Headers,
    },
    /// Flow control credit.
    WindowUpdate {
        /// Stream id (0: the connection).
        stream_id: u32,
        /// Credit in bytes.
        delta: u32,
    },
    /// Payload of a stream.
    Data {
        /// Stream id.
        stream_id: u32,
        /// `FLAG_FIN`.
        flags: u8,
        /// Payload.
        data: Vec<u8>,
    },
}

/// Why bytes are not valid SPDY.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpdyError {
    /// A control frame of another protocol version.
    #[error("unsupported SPDY version {0}")]
    Version(u16),
    /// A control frame type that does not exist.
    #[error("unknown SPDY control frame type {0}")]
    UnknownType(u16),
    /// A frame shorter than its fixed fields.
    #[error("SPDY {0} frame is too short")]
    TooShort(&'static str),
    /// The header block does not decompress or does not parse.
    #[error("invalid SPDY header block: {0}")]
    HeaderBlock(String),
    /// A data frame larger than the protocol allows.
    #[error("SPDY data frame of {0} bytes is too large")]
    TooLarge(usize),
}

/// The header compression state of one connection: one zlib stream each way, shared by all
/// frames, as SPDY requires.
pub struct HeaderCodec {
    compress: Compress,
    decompress: Decompress,
}

impl Default for HeaderCodec {
    fn default() -> Self {
        Self::new()
    }
}

impl HeaderCodec {
    /// Fresh compression contexts primed with the SPDY/3 dictionary.
    pub fn new() -> Self {
        let mut compress = Compress::new(Compression::best(), true);
        // Only fails for a dictionary set mid-stream; this is a fresh stream.
        let _ = compress.set_dictionary(DICTIONARY);
        Self { compress, decompress: Decompress::new(true) }
    }

    fn encode_block(&mut self, headers: &Headers) -> Result<Vec<u8>, SpdyError> {
        let mut raw = Vec::new();
        let mut merged: Vec<(String, String)> = Vec::new();
        for (name, value) in headers {
            let name = name.to_ascii_lowercase();
            match merged.iter_mut().find(|(n, _)| *n == name) {
                Some((_, existing)) => {
                    existing.push('\0');
                    existing.push_str(value);
                }
                None => merged.push((name, value.clone())),
            }
        }
        raw.extend_from_slice(&(merged.len() as u32).to_be_bytes());
        for (name, value) in &merged {
            raw.extend_from_slice(&(name.len() as u32).to_be_bytes());
            raw.extend_from_slice(name.as_bytes());
            raw.extend_from_slice(&(value.len() as u32).to_be_bytes());
            raw.extend_from_slice(value.as_bytes());
        }
        let mut out = Vec::with_capacity(raw.len() + 64);
        let mut input = raw.as_slice();
        loop {
            out.reserve(256);
            let before = self.compress.total_in();
            self.compress
                .compress_vec(input, &mut out, FlushCompress::Sync)
                .map_err(|e| SpdyError::HeaderBlock(e.to_string()))?;
            let used = (self.compress.total_in() - before) as usize;
            input = &input[used..];
            if input.is_empty() && out.len() < out.capacity() {
                return Ok(out);
            }
        }
    }

    fn decode_block(&mut self, block: &[u8]) -> Result<Headers, SpdyError> {
        let error = |e: String| SpdyError::HeaderBlock(e);
        let mut raw = Vec::with_capacity(block.len() * 4 + 64);
        let mut input = block;
        loop {
            raw.reserve(1024);
            let before = self.decompress.total_in();
            let result = self.decompress.decompress_vec(input, &mut raw, FlushDecompress::Sync);
            let used = (self.decompress.total_in() - before) as usize;
            input = &input[used..];
            match result {
                Ok(Status::StreamEnd) => break,
                Ok(_) if input.is_empty() && raw.len() < raw.capacity() => break,
                Ok(_) => {}
                Err(e) if e.needs_dictionary().is_some() => {
                    self.decompress.set_dictionary(DICTIONARY).map_err(|e| error(e.to_string()))?;
                }
                Err(e) => return Err(error(e.to_string())),
            }
        }
        parse_block(&raw).ok_or_else(|| error("truncated name/value block".into()))
    }

    /// Encodes one frame.
    pub fn encode(&mut self, frame: &Frame) -> Result<Vec<u8>, SpdyError> {
        let control = |kind: u16, flags: u8, payload: Vec<u8>| {
            let mut out = Vec::with_capacity(payload.len() + 8);
            out.extend_from_slice(&(0x8000 | VERSION).to_be_bytes());
            out.extend_from_slice(&kind.to_be_bytes());
            out.extend_from_slice(&((u32::from(flags) << 24) | payload.len() as u32).to_be_bytes());
            out.extend_from_slice(&payload);
            out
        };
        let words = |values: &[u32]| values.iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<u8>>();
        Ok(match frame {
            Frame::SynStream { stream_id, associated_to, priority, flags, headers } => {
                let mut payload = words(&[stream_id & 0x7fff_ffff, associated_to & 0x7fff_ffff]);
                payload.push(priority << 5);
                payload.push(0);
                payload.extend(self.encode_block(headers)?);
                control(1, *flags, payload)
            }
            Frame::SynReply { stream_id, flags, headers } => {
                let mut payload = words(&[stream_id & 0x7fff_ffff]);
                payload.extend(self.encode_block(headers)?);
                control(2, *flags, payload)
            }
            Frame::RstStream { stream_id, status } => control(3, 0, words(&[*stream_id, *status])),
            Frame::Settings { flags, entries } => {
                let mut payload = words(&[entries.len() as u32]);
                for (flag, id, value) in entries {
                    payload.extend(words(&[(u32::from(*flag) << 24) | (id & 0xff_ffff), *value]));
                }
                control(4, *flags, payload)
            }
            Frame::Ping { id } => control(6, 0, words(&[*id])),
            Frame::GoAway { last_good_stream_id, status } => {
                control(7, 0, words(&[*last_good_stream_id, *status]))
            }
            Frame::Headers { stream_id, flags, headers } => {
                let mut payload = words(&[stream_id & 0x7fff_ffff]);
                payload.extend(self.encode_block(headers)?);
                control(8, *flags, payload)
            }
            Frame::WindowUpdate { stream_id, delta } => control(9, 0, words(&[*stream_id, *delta])),
            Frame::Data { stream_id, flags, data } => {
                if data.len() > MAX_DATA {
                    return Err(SpdyError::TooLarge(data.len()));
                }
                let mut out = Vec::with_capacity(data.len() + 8);
                out.extend_from_slice(&(stream_id & 0x7fff_ffff).to_be_bytes());
                out.extend_from_slice(&((u32::from(*flags) << 24) | data.len() as u32).to_be_bytes());
                out.extend_from_slice(data);
                out
            }
        })
    }

    /// Decodes the first frame of `buffer`: `None` while it is incomplete, else the frame and
    /// how many bytes it took.
    pub fn decode(&mut self, buffer: &[u8]) -> Result<Option<(Frame, usize)>, SpdyError> {
        if buffer.len() < 8 {
            return Ok(None);
        }
        let word =
            |at: usize| u32::from_be_bytes([buffer[at], buffer[at + 1], buffer[at + 2], buffer[at + 3]]);
        let first = word(0);
        let flags = buffer[4];
        let length = (word(4) & 0xff_ffff) as usize;
        if buffer.len() < 8 + length {
            return Ok(None);
        }
        let payload = &buffer[8..8 + length];
        let used = 8 + length;
        if first & 0x8000_0000 == 0 {
            let frame = Frame::Data { stream_id: first & 0x7fff_ffff, flags, data: payload.to_vec() };
            return Ok(Some((frame, used)));
        }
        let version = ((first >> 16) & 0x7fff) as u16;
        if version != VERSION {
            return Err(SpdyError::Version(version));
        }
        let kind = (first & 0xffff) as u16;
        let need = |n: usize, name: &'static str| {
            if payload.len() < n { Err(SpdyError::TooShort(name)) } else { Ok(()) }
        };
        let at = |i: usize| u32::from_be_bytes([payload[i], payload[i + 1], payload[i + 2], payload[i + 3]]);
        let frame = match kind {
            1 => {
                need(10, "SYN_STREAM")?;
                Frame::SynStream {
                    stream_id: at(0) & 0x7fff_ffff,
                    associated_to: at(4) & 0x7fff_ffff,
                    priority: payload[8] >> 5,
                    flags,
                    headers: self.decode_block(&payload[10..])?,
                }
            }
            2 => {
                need(4, "SYN_REPLY")?;
                Frame::SynReply {
                    stream_id: at(0) & 0x7fff_ffff,
                    flags,
                    headers: self.decode_block(&payload[4..])?,
                }
            }
            3 => {
                need(8, "RST_STREAM")?;
                Frame::RstStream { stream_id: at(0) & 0x7fff_ffff, status: at(4) }
            }
            4 => {
                need(4, "SETTINGS")?;
                let count = at(0) as usize;
                need(4 + count.saturating_mul(8), "SETTINGS")?;
                let entries = (0..count)
                    .map(|i| {
                        let id = at(4 + i * 8);
                        ((id >> 24) as u8, id & 0xff_ffff, at(8 + i * 8))
                    })
                    .collect();
                Frame::Settings { flags, entries }
            }
            6 => {
                need(4, "PING")?;
                Frame::Ping { id: at(0) }
            }
            7 => {
                need(8, "GOAWAY")?;
                Frame::GoAway { last_good_stream_id: at(0) & 0x7fff_ffff, status: at(4) }
            }
            8 => {
                need(4, "HEADERS")?;
                Frame::Headers {
                    stream_id: at(0) & 0x7fff_ffff,
                    flags,
                    headers: self.decode_block(&payload[4..])?,
                }
            }
            9 => {
                need(8, "WINDOW_UPDATE")?;
                Frame::WindowUpdate { stream_id: at(0) & 0x7fff_ffff, delta: at(4) & 0x7fff_ffff }
            }
            other => return Err(SpdyError::UnknownType(other)),
        };
        Ok(Some((frame, used)))
    }
}

/// Parses an uncompressed name/value block.
fn parse_block(raw: &[u8]) -> Option<Headers> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let slice = raw.get(at..at.checked_add(n)?)?;
        at += n;
        Some(slice)
    };
    let count = u32::from_be_bytes(take(4)?.try_into().ok()?) as usize;
    let mut headers = Vec::new();
    for _ in 0..count {
        let length = u32::from_be_bytes(take(4)?.try_into().ok()?) as usize;
        let name = String::from_utf8_lossy(take(length)?).to_ascii_lowercase();
        let length = u32::from_be_bytes(take(4)?.try_into().ok()?) as usize;
        let value = String::from_utf8_lossy(take(length)?).to_string();
        for part in value.split('\0') {
            headers.push((name.clone(), part.to_string()));
        }
    }
    Some(headers)
}

/// The first value of a header.
pub fn header<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> Headers {
        pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_dictionary_is_the_spdy3_one() {
        assert_eq!(DICTIONARY.len(), 1423);
        assert!(DICTIONARY.starts_with(b"\0\0\0\x07options"));
        assert!(DICTIONARY.ends_with(b"enq=0."));
    }

    #[test]
    fn frames_round_trip_through_one_connection_state() {
        let frames = vec![
            Frame::SynStream {
                stream_id: 1,
                associated_to: 0,
                priority: 0,
                flags: 0,
                headers: headers(&[("streamtype", "error")]),
            },
            Frame::SynStream {
                stream_id: 3,
                associated_to: 0,
                priority: 7,
                flags: FLAG_FIN,
                headers: headers(&[("streamtype", "stdout"), ("x-multi", "a"), ("x-multi", "b")]),
            },
            Frame::SynReply { stream_id: 1, flags: 0, headers: vec![] },
            Frame::Data { stream_id: 3, flags: 0, data: b"hello".to_vec() },
            Frame::Data { stream_id: 3, flags: FLAG_FIN, data: vec![] },
            Frame::RstStream { stream_id: 5, status: 5 },
            Frame::Settings { flags: 0, entries: vec![(0, 7, 65536)] },
            Frame::Ping { id: 2 },
            Frame::GoAway { last_good_stream_id: 3, status: 0 },
            Frame::Headers { stream_id: 1, flags: 0, headers: headers(&[("a", "b")]) },
            Frame::WindowUpdate { stream_id: 3, delta: 1024 },
        ];
        let (mut sender, mut receiver) = (HeaderCodec::new(), HeaderCodec::new());
        let mut wire = Vec::new();
        for frame in &frames {
            wire.extend(sender.encode(frame).unwrap());
        }
        let mut decoded = Vec::new();
        let mut rest = wire.as_slice();
        while let Some((frame, used)) = receiver.decode(rest).unwrap() {
            decoded.push(frame);
            rest = &rest[used..];
        }
        assert!(rest.is_empty());
        assert_eq!(decoded, frames);
    }

    #[test]
    fn incomplete_frames_wait_for_more_bytes() {
        let mut codec = HeaderCodec::new();
        let wire = codec.encode(&Frame::Data { stream_id: 1, flags: 0, data: vec![1, 2, 3] }).unwrap();
        assert_eq!(wire, vec![0, 0, 0, 1, 0, 0, 0, 3, 1, 2, 3]);
        let mut other = HeaderCodec::new();
        assert_eq!(other.decode(&wire[..5]).unwrap(), None);
        assert_eq!(other.decode(&wire[..10]).unwrap(), None);
        assert!(other.decode(&wire).unwrap().is_some());
    }

    #[test]
    fn control_frame_layout_and_bad_input() {
        let mut codec = HeaderCodec::new();
        let ping = codec.encode(&Frame::Ping { id: 9 }).unwrap();
        assert_eq!(ping, vec![0x80, 3, 0, 6, 0, 0, 0, 4, 0, 0, 0, 9]);
        assert_eq!(codec.decode(&[0x80, 2, 0, 6, 0, 0, 0, 4, 0, 0, 0, 9]), Err(SpdyError::Version(2)));
        assert_eq!(codec.decode(&[0x80, 3, 0, 42, 0, 0, 0, 0]), Err(SpdyError::UnknownType(42)));
        assert_eq!(codec.decode(&[0x80, 3, 0, 3, 0, 0, 0, 2, 0, 0]), Err(SpdyError::TooShort("RST_STREAM")));
        let garbage = [0x80, 3, 0, 1, 0, 0, 0, 14, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4];
        assert!(matches!(codec.decode(&garbage), Err(SpdyError::HeaderBlock(_))));
    }
}
