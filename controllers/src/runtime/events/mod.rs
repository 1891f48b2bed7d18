//! Publishing Events about the objects a controller manages, as upstream's manager does through
//! client-go's recorder: core/v1 Events with `source.component` set to the controller, passed
//! through client-go's correlator ([`correlator`]: identical occurrences counted into one Event,
//! too many similar ones combined, at most a burst of 25 writes per object and then one per
//! five minutes), so a 10,000-pod rollout does not write 10,000 Events and one object's history
//! stays readable in `kubectl describe`. One task publishes, in order.

pub mod correlator;

use k8s_openapi::{
    api::core::v1::{Event, ObjectReference},
    jiff::Timestamp,
};
use kube::{
    Api, Client,
    api::{Patch, PatchParams, PostParams},
};
use tokio::sync::mpsc;

use self::correlator::{Correlator, Occurrence, Write};

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
    /// Starts the publishing task for `controller` (the `source.component` of every Event).
    pub fn new(client: Client, controller: &str) -> Self {
        let (queue, receiver) = mpsc::channel(QUEUE_DEPTH);
        tokio::spawn(publish_loop(client, controller.to_string(), receiver));
        Self { queue }
    }

    /// Queues an Event about `regarding`.
    pub fn publish(&self, regarding: ObjectReference, kind: EventKind, reason: &str, note: String) {
        let pending = Pending { regarding, kind, reason: reason.to_string(), note };
        if self.queue.try_send(pending).is_err() {
            tracing::warn!(reason, "event queue full or closed: event dropped");
        }
    }
}

async fn publish_loop(client: Client, controller: String, mut receiver: mpsc::Receiver<Pending>) {
    let mut correlator = Correlator::new(&controller);
    while let Some(pending) = receiver.recv().await {
        let occurrence = Occurrence {
            regarding: pending.regarding,
            type_: pending.kind.as_str().to_string(),
            reason: pending.reason,
            message: pending.note,
        };
        let (event, patch) = match correlator.correlate(&occurrence, Timestamp::now()) {
            Write::Skip => {
                tracing::debug!(reason = %occurrence.reason, "event dropped by the spam filter");
                continue;
            }
            Write::Create(event) => (event, None),
            Write::Patch { event, patch } => (event, Some(patch)),
        };
        let namespace = event.metadata.namespace.clone().unwrap_or_else(|| "default".into());
        let events: Api<Event> = Api::namespaced(client.clone(), &namespace);
        let name = event.metadata.name.clone().unwrap_or_default();
        let mut written = None;
        if let Some(patch) = patch {
            match events.patch(&name, &PatchParams::default(), &Patch::Strategic(&patch)).await {
                Ok(stored) => written = Some(stored),
                // Gone (expired on the server): created again below.
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => tracing::debug!(%error, "could not update an event"),
            }
        }
        if written.is_none() {
            match events.create(&PostParams::default(), &event).await {
                Ok(stored) => written = Some(stored),
                Err(error) => {
                    tracing::debug!(%error, reason = %occurrence.reason, "could not publish an event")
                }
            }
        }
        if let Some(stored) = written {
            correlator.stored(&occurrence, &stored);
        }
    }
}
