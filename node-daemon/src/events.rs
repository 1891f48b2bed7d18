//! Events the daemon's workers publish (upstream records `PullImageSucceed` / `PullImageFailed`
//! about the NodeImage and the ImagePullJobs that asked for the image), as `events.k8s.io/v1`
//! Events with the worker as reporting controller and the node as instance. Publishing is
//! best-effort and never blocks a worker: a bounded queue feeds one writer task; when full,
//! events are dropped and logged.

use k8s_openapi::{
    api::{core::v1::ObjectReference, events::v1::Event},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::Timestamp,
};
use kube::{Api, Client, api::PostParams};
use tokio::sync::mpsc;

/// Events waiting to be written; beyond this they are dropped.
const QUEUE_DEPTH: usize = 1024;

/// `Normal` or `Warning`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Something expected happened.
    Normal,
    /// Something went wrong.
    Warning,
}

struct Pending {
    regarding: ObjectReference,
    type_: EventType,
    reason: String,
    note: String,
}

/// A cheap handle; `publish` never waits.
#[derive(Clone)]
pub struct EventPublisher {
    queue: mpsc::Sender<Pending>,
}

impl EventPublisher {
    /// Starts the writer task for `controller` (e.g. `kruise-daemon-imagepuller`) on `node`.
    pub fn new(client: Client, controller: &str, node: &str) -> Self {
        let (queue, mut receiver) = mpsc::channel::<Pending>(QUEUE_DEPTH);
        let (controller, node) = (controller.to_string(), node.to_string());
        tokio::spawn(async move {
            while let Some(pending) = receiver.recv().await {
                write(&client, &controller, &node, pending).await;
            }
        });
        Self { queue }
    }

    /// Queues an Event about `regarding`.
    pub fn publish(&self, regarding: ObjectReference, type_: EventType, reason: &str, note: String) {
        let pending = Pending { regarding, type_, reason: reason.to_string(), note };
        if self.queue.try_send(pending).is_err() {
            tracing::warn!(reason, "event queue full or closed: event dropped");
        }
    }
}

async fn write(client: &Client, controller: &str, node: &str, pending: Pending) {
    // Events about cluster-scoped objects (NodeImage) go to `default`, as client-go does.
    let namespace =
        pending.regarding.namespace.clone().filter(|ns| !ns.is_empty()).unwrap_or_else(|| "default".into());
    let now = Timestamp::now();
    let event = Event {
        metadata: ObjectMeta {
            name: Some(format!(
                "{}.{:x}",
                pending.regarding.name.as_deref().unwrap_or("object"),
                now.as_nanosecond()
            )),
            namespace: Some(namespace.clone()),
            ..Default::default()
        },
        event_time: Some(MicroTime(now)),
        action: Some(pending.reason.clone()),
        reason: Some(pending.reason.clone()),
        note: Some(pending.note),
        type_: Some(match pending.type_ {
            EventType::Normal => "Normal".into(),
            EventType::Warning => "Warning".into(),
        }),
        regarding: Some(pending.regarding),
        reporting_controller: Some(controller.to_string()),
        reporting_instance: Some(node.to_string()),
        ..Default::default()
    };
    let api: Api<Event> = Api::namespaced(client.clone(), &namespace);
    if let Err(error) = api.create(&PostParams::default(), &event).await {
        tracing::debug!(%error, reason = %pending.reason, "could not publish an event");
    }
}
