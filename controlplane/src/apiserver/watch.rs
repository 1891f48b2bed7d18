//! Watch responses: a chunked stream of `{"type": ..., "object": ...}` lines (or of
//! length-prefixed protobuf `WatchEvent` frames), starting from a
//! resourceVersion (or the current state), filtered by selectors with the transitions
//! kube-apiserver produces (an object that stops matching is DELETED for the watcher), with
//! bookmarks, the `sendInitialEvents` end marker, `timeoutSeconds`, and an in-stream 410 ERROR
//! when the requested version is too old.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{
    api::Api, errors::ApiError, filter::Filter, negotiation::Codec, objects, options::ListOptions, protobuf,
    table,
};
use crate::{
    registry::ResourceDef,
    storage::{EventType, StoreError, StoreEvent, WatchStart},
};

/// How often a bookmark is sent to watchers that allow them.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(10);
/// Events queued for a watcher before the store drops it as too slow.
const WATCH_BUFFER: usize = 4096;

/// The shape of event objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventFormat {
    /// The full object.
    Object,
    /// A one-row Table (`kubectl get -w`).
    Table,
    /// PartialObjectMetadata (metadata-only watchers).
    Metadata,
}

/// Starts a watch and returns the receiver of its serialized event lines.
#[allow(clippy::too_many_arguments)]
pub fn start(
    api: Api,
    def: Arc<ResourceDef>,
    version: String,
    namespace: Option<String>,
    name: Option<String>,
    options: ListOptions,
    format: EventFormat,
    codec: Codec,
) -> Result<mpsc::Receiver<Result<Bytes, std::io::Error>>, ApiError> {
    let filter = Filter::new(&def, &options)?;
    let collection = Api::collection(&def, namespace.as_deref());
    let initial_end_marker = options.send_initial_events;
    let start = match options.resource_version.as_str() {
        "" | "0" => WatchStart::CurrentState,
        rv => match rv.parse::<u64>() {
            // sendInitialEvents with resourceVersionMatch=NotOlderThan: the current state is newer.
            Ok(_) if options.send_initial_events => WatchStart::CurrentState,
            Ok(rv) => WatchStart::After(rv),
            Err(_) => return Err(ApiError::bad_request(format!("invalid resource version {rv:?}"))),
        },
    };
    let (sender, receiver) = mpsc::channel::<Result<Bytes, std::io::Error>>(64);
    let watch = api.store.watch(&collection, name.as_deref(), start, WATCH_BUFFER);
    let mut watch = match watch {
        Ok(watch) => watch,
        Err(StoreError::Gone { requested, oldest }) => {
            let status =
                ApiError::gone(format!("too old resource version: {requested} ({oldest})")).to_status();
            let line = event_bytes(codec, "ERROR", &status);
            tokio::spawn(async move {
                let _ = sender.send(Ok(line)).await;
            });
            return Ok(receiver);
        }
        Err(error) => return Err(ApiError::internal(error.to_string())),
    };
    let initial_rv = watch.initial_rv();
    let timeout = options.timeout_seconds.map(Duration::from_secs).unwrap_or(Duration::from_secs(1800));
    let allow_bookmarks = options.allow_bookmarks;
    let mut task = WatchTask {
        api,
        def,
        version,
        filter,
        format,
        codec,
        sender,
        table_header_sent: false,
        last_rv: initial_rv,
    };
    tokio::spawn(async move {
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut bookmarks = tokio::time::interval(BOOKMARK_INTERVAL);
        bookmarks.tick().await;
        let mut initial_pending = initial_end_marker;
        loop {
            // With sendInitialEvents, the replayed state (events up to `initial_rv`, held in the
            // watch and available at once) is followed by a bookmark marking its end.
            if initial_pending {
                match watch.try_recv() {
                    Some(event) if event.resource_version <= initial_rv => {
                        if !task.deliver(event).await {
                            return;
                        }
                        continue;
                    }
                    next => {
                        initial_pending = false;
                        let rv = task.last_rv.max(initial_rv);
                        if !task.send("BOOKMARK", &bookmark(&task.def, &task.version, rv, true)).await {
                            return;
                        }
                        if let Some(event) = next
                            && !task.deliver(event).await
                        {
                            return;
                        }
                        continue;
                    }
                }
            }
            tokio::select! {
                _ = &mut deadline => return,
                _ = bookmarks.tick(), if allow_bookmarks => {
                    let line = bookmark(&task.def, &task.version, task.last_rv, false);
                    if !task.send("BOOKMARK", &line).await {
                        return;
                    }
                }
                event = watch.recv() => {
                    let Some(event) = event else { return };
                    if !task.deliver(event).await {
                        return;
                    }
                }
            }
        }
    });
    Ok(receiver)
}

/// The state of one watch response.
struct WatchTask {
    api: Api,
    def: Arc<ResourceDef>,
    version: String,
    filter: Filter,
    format: EventFormat,
    codec: Codec,
    sender: mpsc::Sender<Result<Bytes, std::io::Error>>,
    table_header_sent: bool,
    last_rv: u64,
}

impl WatchTask {
    /// Sends one event; false when the client went away.
    async fn send(&self, kind: &str, object: &Value) -> bool {
        self.sender.send(Ok(event_bytes(self.codec, kind, object))).await.is_ok()
    }

    /// Filters, converts and sends one store event; false when the watch must end.
    async fn deliver(&mut self, event: StoreEvent) -> bool {
        self.last_rv = self.last_rv.max(event.resource_version);
        let now_matches = self.filter.matches(&event.object);
        let was_matching = event.previous.as_ref().is_some_and(|previous| self.filter.matches(previous));
        let kind = match (event.event_type, was_matching, now_matches) {
            (EventType::Added, _, true) => "ADDED",
            (EventType::Modified, true, true) => "MODIFIED",
            (EventType::Modified, false, true) => "ADDED",
            (EventType::Modified, true, false) => "DELETED",
            (EventType::Deleted, _, true) => "DELETED",
            _ => return true,
        };
        let object = match self.api.to_version(&self.def, (*event.object).clone(), &self.version).await {
            Ok(object) => object,
            Err(error) => {
                self.send("ERROR", &error.to_status()).await;
                return false;
            }
        };
        let object = match self.format {
            EventFormat::Object => object,
            EventFormat::Metadata => table::partial_metadata(&object),
            EventFormat::Table => {
                let rv = objects::meta_str(&object, "resourceVersion").unwrap_or_default().to_string();
                let mut rendered =
                    table::table(&self.def, &self.version, std::slice::from_ref(&object), "Object", &rv);
                if self.table_header_sent {
                    rendered.as_object_mut().map(|t| t.remove("columnDefinitions"));
                }
                self.table_header_sent = true;
                rendered
            }
        };
        self.send(kind, &object).await
    }
}

fn bookmark(def: &ResourceDef, version: &str, rv: u64, initial_end: bool) -> Value {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    json!({"kind": def.kind, "apiVersion": def.api_version(version), "metadata": metadata})
}

/// One event in the stream's serializer: a JSON line, or a protobuf frame (an object that does
/// not encode becomes an in-stream 500 ERROR, as kube-apiserver reports a failed encode).
fn event_bytes(codec: Codec, kind: &str, object: &Value) -> Bytes {
    if codec == Codec::Protobuf {
        let frame = protobuf::watch_frame(kind, object).or_else(|error| {
            tracing::warn!(%error, "watch event does not encode as protobuf");
            protobuf::watch_frame(
                "ERROR",
                &ApiError::internal(format!("encoding protobuf: {error}")).to_status(),
            )
        });
        return Bytes::from(frame.unwrap_or_default());
    }
    let mut line = serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}
