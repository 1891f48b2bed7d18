//! `application/vnd.kubernetes.protobuf` for the built-in kinds: objects are stored as JSON and
//! converted at the edge, with one generic converter driven by the wire schema of the Go types
//! ([`kruise_machinery::gotypes`]), so that what a client-go program decodes is what kube-apiserver would have
//! sent for the same JSON object.
//!
//! On the wire an object is the 4-byte magic `k8s\0` and a `runtime.Unknown` envelope
//! (`typeMeta{apiVersion, kind}`, `raw` = the object's message, `contentEncoding`,
//! `contentType`); a watch is a stream of 4-byte big-endian length-prefixed `meta.v1.WatchEvent`
//! messages whose `object.raw` holds the object encoded as above.

mod decode;
mod encode;
mod time;
pub(crate) mod wire;

use kruise_machinery::gotypes::SCHEMA;
use serde_json::Value;

/// The protobuf media type.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
/// The media type of protobuf watch streams.
pub const STREAM_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";
/// What every protobuf-encoded object starts with.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// Why a body could not be converted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CodecError {
    /// The data ends inside a field.
    #[error("unexpected end of protobuf data")]
    Truncated,
    /// The data is not valid protobuf.
    #[error("invalid protobuf data: {0}")]
    Malformed(String),
    /// The data does not start with `k8s\0`.
    #[error("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]")]
    NoMagic,
    /// No built-in kind of that `apiVersion` and `kind`.
    #[error("no kind {kind:?} is registered for version {api_version:?}")]
    UnknownKind {
        /// `apiVersion` read.
        api_version: String,
        /// `kind` read.
        kind: String,
    },
    /// A message the schema lacks (a schema bug).
    #[error("unknown protobuf message {0}")]
    UnknownMessage(String),
    /// A JSON value of the wrong type for its field.
    #[error("{path}: expected {expected}")]
    Type {
        /// Field path.
        path: String,
        /// What the field holds.
        expected: String,
    },
    /// A value that does not convert (bad time, bad base64, embedded data that is not JSON).
    #[error("{path}: {message}")]
    Value {
        /// Field path.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl CodecError {
    fn type_error(path: &str, expected: &str) -> Self {
        Self::Type { path: path.to_string(), expected: expected.to_string() }
    }
}

/// Whether objects of this `apiVersion` and `kind` have a protobuf form.
pub fn supports(api_version: &str, kind: &str) -> bool {
    SCHEMA.kind(api_version, kind).is_some()
}

fn kind_of(object: &Value) -> (&str, &str) {
    (
        object.get("apiVersion").and_then(Value::as_str).unwrap_or_default(),
        object.get("kind").and_then(Value::as_str).unwrap_or_default(),
    )
}

/// Encodes a JSON object (with `apiVersion` and `kind`) as a protobuf body.
pub fn encode(object: &Value) -> Result<Vec<u8>, CodecError> {
    let (api_version, kind) = kind_of(object);
    let message = SCHEMA.kind(api_version, kind).ok_or_else(|| CodecError::UnknownKind {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
    })?;
    let raw = encode::message(message, object, "")?;
    let mut type_meta = Vec::new();
    wire::put_bytes(&mut type_meta, 1, api_version.as_bytes());
    wire::put_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = MAGIC.to_vec();
    wire::put_bytes(&mut out, 1, &type_meta);
    wire::put_bytes(&mut out, 2, &raw);
    wire::put_bytes(&mut out, 3, b"");
    wire::put_bytes(&mut out, 4, b"");
    Ok(out)
}

/// The `apiVersion`, `kind` and message bytes of a protobuf body.
fn envelope(body: &[u8]) -> Result<(String, String, &[u8]), CodecError> {
    let data = body.strip_prefix(MAGIC.as_slice()).ok_or(CodecError::NoMagic)?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    for (number, value) in wire::fields(data)? {
        match (number, value) {
            (1, wire::Raw::Bytes(type_meta)) => {
                for (number, value) in wire::fields(type_meta)? {
                    if let wire::Raw::Bytes(text) = value {
                        let text = String::from_utf8_lossy(text).into_owned();
                        match number {
                            1 => api_version = text,
                            2 => kind = text,
                            _ => {}
                        }
                    }
                }
            }
            (2, wire::Raw::Bytes(bytes)) => raw = bytes,
            (3, wire::Raw::Bytes(encoding)) if !encoding.is_empty() => {
                return Err(CodecError::Malformed(format!(
                    "unsupported content encoding {:?}",
                    String::from_utf8_lossy(encoding)
                )));
            }
            _ => {}
        }
    }
    Ok((api_version, kind, raw))
}

/// The `apiVersion` and `kind` a protobuf body declares.
pub fn declared_kind(body: &[u8]) -> Result<(String, String), CodecError> {
    envelope(body).map(|(api_version, kind, _)| (api_version, kind))
}

/// Decodes a protobuf body into the JSON object (with `apiVersion` and `kind`) a JSON client
/// would have sent.
pub fn decode(body: &[u8]) -> Result<Value, CodecError> {
    let (api_version, kind, raw) = envelope(body)?;
    let message = SCHEMA
        .kind(&api_version, &kind)
        .ok_or_else(|| CodecError::UnknownKind { api_version: api_version.clone(), kind: kind.clone() })?;
    let mut object = decode::message(message, raw, "")?;
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".into(), Value::String(api_version));
        map.insert("kind".into(), Value::String(kind));
    }
    Ok(object)
}

/// One watch event as a length-prefixed `WatchEvent` frame: `object` is encoded as a protobuf
/// body and carried in the event's `RawExtension`.
pub fn watch_frame(event_type: &str, object: &Value) -> Result<Vec<u8>, CodecError> {
    let embedded = encode(object)?;
    let mut raw_extension = Vec::new();
    wire::put_bytes(&mut raw_extension, 1, &embedded);
    let mut event = Vec::new();
    wire::put_bytes(&mut event, 1, event_type.as_bytes());
    wire::put_bytes(&mut event, 2, &raw_extension);
    let length = u32::try_from(event.len()).map_err(|_| CodecError::Malformed("event too large".into()))?;
    let mut frame = length.to_be_bytes().to_vec();
    frame.extend_from_slice(&event);
    Ok(frame)
}

/// Reads one frame written by [`watch_frame`]: the event type, the object, and the rest of the
/// stream (for clients and tests).
pub fn read_watch_frame(stream: &[u8]) -> Result<(String, Value, &[u8]), CodecError> {
    let length_bytes: [u8; 4] =
        stream.get(..4).and_then(|b| b.try_into().ok()).ok_or(CodecError::Truncated)?;
    let length = u32::from_be_bytes(length_bytes) as usize;
    let event = stream.get(4..4 + length).ok_or(CodecError::Truncated)?;
    let mut event_type = String::new();
    let mut object = Value::Null;
    for (number, value) in wire::fields(event)? {
        match (number, value) {
            (1, wire::Raw::Bytes(text)) => event_type = String::from_utf8_lossy(text).into_owned(),
            (2, wire::Raw::Bytes(raw_extension)) => {
                for (number, value) in wire::fields(raw_extension)? {
                    if let (1, wire::Raw::Bytes(embedded)) = (number, value) {
                        object = decode(embedded)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok((event_type, object, &stream[4 + length..]))
}

#[cfg(test)]
mod tests;
