//! Publishing Events about the objects a controller manages.
//!
//! kube-runtime's `Recorder` keys its series cache on (type, reason, action, object) but not on
//! the note, so "successfully update pod a" and "... pod b" about the same CloneSet collapse
//! into one Event whose count grows and whose text names only the first pod; concurrent
//! publishes also race on that cache. Users read these Events (`kubectl describe`) to learn
//! which pod was created, deleted or updated, so this recorder keys on the note as well (as
//! client-go's correlator does) and publishes from one task, in order.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{core::v1::ObjectReference, events::v1::Event, events::v1::EventSeries},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::Timestamp,
};
use kube::{
    Api, Client,
    api::{Patch, PatchParams, PostParams},
};
use tokio::sync::mpsc;

/// How long an identical event keeps counting into the same Event object.
const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);
/// Events waiting to be written; beyond this, new ones are dropped (and logged).
const QUEUE_DEPTH: usize = 4096;

/// `Normal` or `Warning`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// Something expected happened.
    Normal,
    /// Something went wrong.
    Warning,
}

impl EventKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "Normal",
            Self::Warning => "Warning",
        }
    }
}

struct Pending {
    regarding: ObjectReference,
    kind: EventKind,
    reason: String,
    note: String,
}

/// A cheap handle: clone it freely; `publish` never blocks.
#[derive(Clone)]
pub struct EventRecorder {
    queue: mpsc::Sender<Pending>,
}

impl EventRecorder {
    /// Starts the publishing task for `controller` (the `reportingController` of every Event).
    pub fn new(client: Client, controller: &str) -> Self {
        let (queue, receiver) = mpsc::channel(QUEUE_DEPTH);
        let instance = std::env::var("HOSTNAME").unwrap_or_else(|_| controller.to_string());
        tokio::spawn(publish_loop(client, controller.to_string(), instance, receiver));
        Self { queue }
    }

    /// Queues an Event about `regarding` (`reason` doubles as the action, as upstream does).
    pub fn publish(&self, regarding: ObjectReference, kind: EventKind, reason: &str, note: String) {
        let pending = Pending { regarding, kind, reason: reason.to_string(), note };
        if self.queue.try_send(pending).is_err() {
            tracing::warn!(reason, "event queue full or closed: event dropped");
        }
    }
}

#[derive(Hash, PartialEq, Eq)]
struct SeriesKey {
    uid: String,
    kind: EventKind,
    reason: String,
    note: String,
}

struct Series {
    namespace: String,
    name: String,
    count: i32,
    last: Instant,
}

async fn publish_loop(
    client: Client,
    controller: String,
    instance: String,
    mut receiver: mpsc::Receiver<Pending>,
) {
    let mut series: HashMap<SeriesKey, Series> = HashMap::new();
    while let Some(pending) = receiver.recv().await {
        series.retain(|_, s| s.last.elapsed() < SERIES_WINDOW);
        let namespace = pending.regarding.namespace.clone().unwrap_or_else(|| "default".into());
        let events: Api<Event> = Api::namespaced(client.clone(), &namespace);
        let key = SeriesKey {
            uid: pending.regarding.uid.clone().unwrap_or_default(),
            kind: pending.kind,
            reason: pending.reason.clone(),
            note: pending.note.clone(),
        };
        let now = MicroTime(Timestamp::now());
        if let Some(existing) = series.get_mut(&key) {
            existing.count += 1;
            existing.last = Instant::now();
            let patch = serde_json::json!({
                "series": EventSeries { count: existing.count, last_observed_time: now.clone() },
            });
            let events: Api<Event> = Api::namespaced(client.clone(), &existing.namespace);
            match events.patch(&existing.name, &PatchParams::default(), &Patch::Merge(&patch)).await {
                Ok(_) => continue,
                // Gone (expired on the server): start a new one below.
                Err(error) => tracing::debug!(%error, "could not extend an event series"),
            }
        }
        let name = format!(
            "{}.{:x}",
            pending.regarding.name.as_deref().unwrap_or("object"),
            Timestamp::now().as_nanosecond()
        );
        let event = Event {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                ..Default::default()
            },
            event_time: Some(now),
            action: Some(pending.reason.clone()),
            reason: Some(pending.reason.clone()),
            note: Some(pending.note.clone()),
            type_: Some(pending.kind.as_str().to_string()),
            regarding: Some(pending.regarding.clone()),
            reporting_controller: Some(controller.clone()),
            reporting_instance: Some(instance.clone()),
            ..Default::default()
        };
        match events.create(&PostParams::default(), &event).await {
            Ok(_) => {
                series.insert(key, Series { namespace, name, count: 1, last: Instant::now() });
            }
            Err(error) => tracing::debug!(%error, reason = %pending.reason, "could not publish an event"),
        }
    }
}
