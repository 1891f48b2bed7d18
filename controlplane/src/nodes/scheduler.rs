//! The simulated scheduler: watches pods and nodes, places each pending pod of its scheduler
//! name with [`placement`](super::placement), binds it through `pods/binding`, and reports
//! unschedulable pods with `PodScheduled=False` (reason `Unschedulable`) and a
//! `FailedScheduling` event, as kube-scheduler does. A plain API client.

use std::{collections::HashMap, sync::Arc, time::Duration};

use futures::StreamExt;
use k8s_openapi::{
    api::core::v1::{Binding, Node, ObjectReference, Pod},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Status},
};
use kube::{
    Api, Client,
    api::{Patch, PatchParams, PostParams},
    runtime::{
        WatchStreamExt,
        events::{Event as KubeEvent, EventType, Recorder, Reporter},
        reflector::{self, Store},
        watcher,
    },
};
use serde_json::json;
use tokio::{sync::Notify, task::JoinHandle, time::Instant};

use super::placement::{Placement, Snapshot};

/// Settings of the simulated scheduler.
#[derive(Clone, Debug)]
pub struct SchedulerConfig {
    /// The `schedulerName` it serves (`default-scheduler`).
    pub name: String,
    /// How often unschedulable pods are tried again without any change.
    pub retry: Duration,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self { name: "default-scheduler".into(), retry: Duration::from_secs(2) }
    }
}

/// A running scheduler.
pub struct Scheduler {
    tasks: Vec<JoinHandle<()>>,
}

impl Scheduler {
    /// Starts watching and scheduling.
    pub fn start(client: Client, config: SchedulerConfig) -> Self {
        let notify = Arc::new(Notify::new());
        let (pods, pod_writer) = reflector::store::<Pod>();
        let (nodes, node_writer) = reflector::store::<Node>();
        let follow_pods = {
            let notify = notify.clone();
            let stream = watcher(Api::<Pod>::all(client.clone()), watcher::Config::default())
                .default_backoff()
                .reflect(pod_writer)
                .applied_objects();
            tokio::spawn(async move {
                let mut stream = stream.boxed();
                while stream.next().await.is_some() {
                    notify.notify_one();
                }
            })
        };
        let follow_nodes = {
            let notify = notify.clone();
            let stream = watcher(Api::<Node>::all(client.clone()), watcher::Config::default())
                .default_backoff()
                .reflect(node_writer)
                .applied_objects();
            tokio::spawn(async move {
                let mut stream = stream.boxed();
                while stream.next().await.is_some() {
                    notify.notify_one();
                }
            })
        };
        let schedule = tokio::spawn(run(client, config, pods, nodes, notify));
        Self { tasks: vec![follow_pods, follow_nodes, schedule] }
    }

    /// Stops the scheduler.
    pub async fn stop(self) {
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// Whether this scheduler should place the pod now.
pub fn is_pending(pod: &Pod, scheduler_name: &str) -> bool {
    let Some(spec) = pod.spec.as_ref() else { return false };
    spec.node_name.as_deref().is_none_or(str::is_empty)
        && spec.scheduler_name.as_deref().unwrap_or("default-scheduler") == scheduler_name
        && pod.metadata.deletion_timestamp.is_none()
        && spec.scheduling_gates.as_ref().is_none_or(|g| g.is_empty())
        && !matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed"))
}

/// Scheduling order: higher priority first, then older first.
pub fn queue_order(a: &Pod, b: &Pod) -> std::cmp::Ordering {
    let priority = |p: &Pod| p.spec.as_ref().and_then(|s| s.priority).unwrap_or(0);
    priority(b)
        .cmp(&priority(a))
        .then_with(|| a.metadata.creation_timestamp.cmp(&b.metadata.creation_timestamp))
        .then_with(|| a.metadata.namespace.cmp(&b.metadata.namespace))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

async fn run(
    client: Client,
    config: SchedulerConfig,
    pods: Store<Pod>,
    nodes: Store<Node>,
    notify: Arc<Notify>,
) {
    let _ = pods.wait_until_ready().await;
    let _ = nodes.wait_until_ready().await;
    let reporter = Reporter { controller: config.name.clone(), instance: None };
    let recorder = Recorder::new(client.clone(), reporter);
    // Pods bound by us that the watch does not show bound yet.
    let mut assumed: HashMap<String, (String, Instant)> = HashMap::new();
    // The last unschedulable message written per pod (to write it once).
    let mut reported: HashMap<String, String> = HashMap::new();
    loop {
        tokio::select! {
            _ = notify.notified() => {}
            _ = tokio::time::sleep(config.retry) => {}
        }
        let all_pods: Vec<Pod> = pods.state().iter().map(|p| (**p).clone()).collect();
        let all_nodes: Vec<Node> = nodes.state().iter().map(|n| (**n).clone()).collect();
        assumed.retain(|uid, (_, at)| {
            at.elapsed() < Duration::from_secs(30)
                && all_pods.iter().any(|p| {
                    p.metadata.uid.as_deref() == Some(uid.as_str())
                        && p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_none_or(str::is_empty)
                })
        });
        let mut pending: Vec<Pod> = all_pods
            .iter()
            .filter(|p| is_pending(p, &config.name))
            .filter(|p| p.metadata.uid.as_ref().is_none_or(|uid| !assumed.contains_key(uid)))
            .cloned()
            .collect();
        if pending.is_empty() {
            continue;
        }
        pending.sort_by(queue_order);
        let mut with_assumed = all_pods.clone();
        for pod in with_assumed.iter_mut() {
            if let Some((node, _)) = pod.metadata.uid.as_ref().and_then(|uid| assumed.get(uid)) {
                pod.spec.get_or_insert_with(Default::default).node_name = Some(node.clone());
            }
        }
        let mut snapshot = Snapshot::new(all_nodes, with_assumed);
        let present: std::collections::HashSet<String> =
            all_pods.iter().filter_map(|p| p.metadata.uid.clone()).collect();
        reported.retain(|uid, _| present.contains(uid));
        for pod in pending {
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            match snapshot.place(&pod) {
                Placement::Node(node) => {
                    if bind(&client, &pod, &node).await {
                        let target = format!(
                            "{}/{}",
                            pod.metadata.namespace.as_deref().unwrap_or_default(),
                            pod.metadata.name.as_deref().unwrap_or_default()
                        );
                        publish(
                            &recorder,
                            &pod,
                            EventType::Normal,
                            "Scheduled",
                            format!("Successfully assigned {target} to {node}"),
                        );
                        assumed.insert(uid.clone(), (node.clone(), Instant::now()));
                        reported.remove(&uid);
                        snapshot.assume(pod, &node);
                    }
                }
                Placement::Unschedulable(message) => {
                    if reported.get(&uid) != Some(&message) {
                        if report_unschedulable(&client, &pod, &message).await {
                            publish(&recorder, &pod, EventType::Warning, "FailedScheduling", message.clone());
                        }
                        reported.insert(uid, message);
                    }
                }
            }
        }
    }
}

async fn bind(client: &Client, pod: &Pod, node: &str) -> bool {
    let namespace = pod.metadata.namespace.clone().unwrap_or_else(|| "default".into());
    let name = pod.metadata.name.clone().unwrap_or_default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let binding = Binding {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(namespace.clone()),
            uid: pod.metadata.uid.clone(),
            ..Default::default()
        },
        target: ObjectReference {
            kind: Some("Node".into()),
            name: Some(node.to_string()),
            ..Default::default()
        },
    };
    match pods.create_subresource::<_, Status>("binding", &name, &PostParams::default(), &binding).await {
        Ok(_) => true,
        Err(error) => {
            tracing::debug!(pod = %name, node, %error, "binding failed");
            false
        }
    }
}

async fn report_unschedulable(client: &Client, pod: &Pod, message: &str) -> bool {
    let namespace = pod.metadata.namespace.clone().unwrap_or_else(|| "default".into());
    let name = pod.metadata.name.clone().unwrap_or_default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    let previous = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "PodScheduled"));
    let transition = match previous {
        Some(previous) if previous.status == "False" => {
            previous.last_transition_time.as_ref().map(|t| t.0.to_string()).unwrap_or(now)
        }
        _ => now,
    };
    let patch = json!({
        "metadata": {"uid": pod.metadata.uid},
        "status": {"conditions": [{
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
            "lastProbeTime": null,
            "lastTransitionTime": transition,
        }]}
    });
    let params = PatchParams { field_manager: Some("default-scheduler".into()), ..Default::default() };
    match pods.patch_status(&name, &params, &Patch::Strategic(&patch)).await {
        Ok(_) => true,
        Err(error) => {
            tracing::debug!(pod = %name, %error, "could not report an unschedulable pod");
            false
        }
    }
}

fn publish(recorder: &Recorder, pod: &Pod, kind: EventType, reason: &str, note: String) {
    let reference = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        name: pod.metadata.name.clone(),
        namespace: pod.metadata.namespace.clone(),
        uid: pod.metadata.uid.clone(),
        ..Default::default()
    };
    let event = KubeEvent {
        type_: kind,
        reason: reason.into(),
        note: Some(note),
        action: "Scheduling".into(),
        secondary: None,
    };
    let recorder = recorder.clone();
    tokio::spawn(async move {
        if let Err(error) = recorder.publish(&event, &reference).await {
            tracing::debug!(%error, "could not publish a scheduler event");
        }
    });
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{PodSchedulingGate, PodSpec};

    use super::*;

    fn pod(name: &str, priority: i32, node: Option<&str>) -> Pod {
        Pod {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            spec: Some(PodSpec {
                priority: Some(priority),
                node_name: node.map(str::to_string),
                ..Default::default()
            }),
            status: None,
        }
    }

    #[test]
    fn pending_means_unbound_ours_and_not_gated() {
        assert!(is_pending(&pod("a", 0, None), "default-scheduler"));
        assert!(!is_pending(&pod("a", 0, Some("n")), "default-scheduler"));
        assert!(!is_pending(&pod("a", 0, None), "other-scheduler"));
        let mut gated = pod("a", 0, None);
        gated.spec.as_mut().unwrap().scheduling_gates = Some(vec![PodSchedulingGate { name: "wait".into() }]);
        assert!(!is_pending(&gated, "default-scheduler"));
    }

    #[test]
    fn higher_priority_goes_first() {
        let mut queue = [pod("low", 0, None), pod("high", 100, None), pod("also-low", 0, None)];
        queue.sort_by(queue_order);
        let names: Vec<_> = queue.iter().map(|p| p.metadata.name.clone().unwrap()).collect();
        assert_eq!(names, ["high", "also-low", "low"]);
    }
}
