//! Upstream kruise-manager v1.9.0 (built by `integration/upstream/build.sh`) on our API server
//! and on a real kube-apiserver: it reconciles a CloneSet as it does on any cluster, and a
//! cluster it ran can be handed over to our manager without a pod being touched.
//!
//! Both scenarios skip with a message when the upstream binaries are not built.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use futures::StreamExt;
use k8s_openapi::api::{apps::v1::ControllerRevision, core::v1::Pod};
use kruise_integration::{
    Scene, Skip,
    manager::{KruiseManager, ManagerSpec},
    nodes::{Hosting, SimNodes},
    upstream::{
        self,
        manager::{UpstreamManager, UpstreamSpec},
    },
};
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams},
};
use serde_json::{Value, json};

use crate::cloneset_kit::{is_ready, merge, pod_summary, revision_of};

const NAMESPACE: &str = "default";
const SETTLE: Duration = Duration::from_secs(180);

/// The three workload kinds upstream and ours both run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[allow(clippy::enum_variant_names)] // named as the kinds are
enum Kind {
    CloneSet,
    StatefulSet,
    DaemonSet,
}

impl Kind {
    fn resource(self) -> ApiResource {
        let (kind, plural) = match self {
            Self::CloneSet => ("CloneSet", "clonesets"),
            Self::StatefulSet => ("StatefulSet", "statefulsets"),
            Self::DaemonSet => ("DaemonSet", "daemonsets"),
        };
        ApiResource {
            group: "apps.kruise.io".into(),
            version: "v1beta1".into(),
            api_version: "apps.kruise.io/v1beta1".into(),
            kind: kind.into(),
            plural: plural.into(),
        }
    }

    fn api(self, client: &Client) -> Api<DynamicObject> {
        Api::namespaced_with(client.clone(), NAMESPACE, &self.resource())
    }

    /// A manifest with one `main` container and in-place updates.
    fn manifest(self, name: &str, replicas: i32, image: &str) -> Value {
        let mut spec = json!({
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "main", "image": image}]}
            }
        });
        let extra = match self {
            Self::CloneSet => json!({"replicas": replicas,
                "updateStrategy": {"type": "RollingUpdate",
                    "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "50%"}}}),
            Self::StatefulSet => {
                json!({"replicas": replicas, "serviceName": name, "podManagementPolicy": "Parallel",
                "updateStrategy": {"type": "RollingUpdate",
                    "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "50%"}},
                "template": {"spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}}})
            }
            Self::DaemonSet => json!({"updateStrategy": {"type": "RollingUpdate",
                "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": "50%"}}}),
        };
        merge(&mut spec, extra);
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": self.resource().kind, "metadata": {"name": name}, "spec": spec})
    }
}

/// What a workload's status says about its rollout.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
struct Rollout {
    update_revision: String,
    current_revision: Option<String>,
    updated: i64,
    ready: i64,
    desired: i64,
}

fn rollout_of(kind: Kind, object: &DynamicObject) -> Option<Rollout> {
    let status = object.data.get("status")?;
    let number = |field: &str| status.get(field).and_then(Value::as_i64).unwrap_or(0);
    let (updated, ready, desired) = match kind {
        Kind::DaemonSet => {
            (number("updatedNumberScheduled"), number("numberReady"), number("desiredNumberScheduled"))
        }
        _ => (
            number("updatedReplicas"),
            number("readyReplicas"),
            object.data["spec"]["replicas"].as_i64().unwrap_or(0),
        ),
    };
    let generation = object.metadata.generation.unwrap_or(0);
    if number("observedGeneration") != generation {
        return None;
    }
    Some(Rollout {
        update_revision: status.get("updateRevision")?.as_str()?.to_string(),
        current_revision: status.get("currentRevision").and_then(Value::as_str).map(str::to_string),
        updated,
        ready,
        desired,
    })
}

/// The workload's pods (by owner UID), sorted by name.
async fn pods_of(client: &Client, kind: Kind, name: &str) -> Vec<Pod> {
    let Ok(owner) = kind.api(client).get(name).await else { return Vec::new() };
    let uid = owner.uid().unwrap_or_default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let mut owned: Vec<Pod> = pods
        .list(&ListParams::default())
        .await
        .map(|list| list.items)
        .unwrap_or_default()
        .into_iter()
        .filter(|pod| pod.owner_references().iter().any(|owner| owner.uid == uid))
        .collect();
    owned.sort_by_key(|pod| pod.name_any());
    owned
}

/// Waits until every pod of the workload is Ready at its update revision running `image`, and
/// the status says so for `replicas` pods; returns the status.
async fn wait_rolled_out(client: &Client, kind: Kind, name: &str, replicas: i64, image: &str) -> Rollout {
    let deadline = Instant::now() + SETTLE;
    loop {
        let object = kind.api(client).get(name).await.expect("reading the workload");
        let pods = pods_of(client, kind, name).await;
        if let Some(rollout) = rollout_of(kind, &object) {
            let hash = rollout.update_revision.rsplit('-').next().unwrap_or_default().to_string();
            let at_update = |pod: &Pod| {
                let label = revision_of(pod).unwrap_or_default();
                label == rollout.update_revision || label == hash || label.ends_with(&format!("-{hash}"))
            };
            let done = rollout.updated == replicas
                && rollout.ready == replicas
                && rollout.desired == replicas
                && pods.len() == replicas as usize
                && pods.iter().all(|pod| {
                    is_ready(pod)
                        && pod.metadata.deletion_timestamp.is_none()
                        && at_update(pod)
                        && pod.spec.as_ref().and_then(|s| s.containers[0].image.as_deref()) == Some(image)
                });
            if done {
                return rollout;
            }
        }
        if Instant::now() > deadline {
            panic!(
                "{kind:?} {name}: not rolled out to {image} on {replicas} pods after {SETTLE:?}\nstatus: {}\npods: {:#?}",
                serde_json::to_string_pretty(&object.data.get("status")).unwrap_or_default(),
                pods.iter().map(pod_summary).collect::<Vec<_>>()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn create(client: &Client, kind: Kind, manifest: Value) {
    let object: DynamicObject = serde_json::from_value(manifest).expect("a manifest");
    kind.api(client)
        .create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|error| panic!("creating a {kind:?}: {error}"));
}

async fn set_image(client: &Client, kind: Kind, name: &str, image: &str) {
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}});
    kind.api(client)
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_or_else(|error| panic!("updating the image of {kind:?} {name}: {error}"));
}

fn upstream_dir() -> Result<std::path::PathBuf, Skip> {
    upstream::binary_dir().ok_or_else(|| Skip(upstream::missing_message()))
}

/// Nodes for `count` daemon pods, the CRDs, and upstream's manager.
async fn start_upstream(scene: &Scene, nodes: u32) -> Result<(SimNodes, UpstreamManager), Skip> {
    let dir = upstream_dir()?;
    let cluster = scene.cluster();
    cluster.install_crds().await.expect("installing the CRDs");
    let nodes = SimNodes::start(cluster, Hosting::InProcess, nodes).await.expect("starting simulated nodes");
    let manager =
        UpstreamManager::start(&cluster.client(), cluster.kubeconfig_path(), &dir, &UpstreamSpec::default())
            .await
            .expect("starting upstream kruise-manager");
    Ok((nodes, manager))
}

/// Upstream kruise-manager creates, scales and updates a CloneSet in place on this API server.
pub async fn upstream_manager_reconciles_a_cloneset(scene: Scene) -> Result<(), Skip> {
    let (nodes, mut manager) = start_upstream(&scene, 3).await?;
    let client = scene.cluster().client();
    create(&client, Kind::CloneSet, Kind::CloneSet.manifest("web", 3, "nginx:1.25")).await;
    wait_rolled_out(&client, Kind::CloneSet, "web", 3, "nginx:1.25").await;
    Kind::CloneSet
        .api(&client)
        .patch("web", &PatchParams::default(), &Patch::Merge(&json!({"spec": {"replicas": 5}})))
        .await
        .expect("scaling");
    wait_rolled_out(&client, Kind::CloneSet, "web", 5, "nginx:1.25").await;
    let before: BTreeMap<String, String> = pods_of(&client, Kind::CloneSet, "web")
        .await
        .iter()
        .map(|p| (p.name_any(), p.uid().unwrap_or_default()))
        .collect();
    set_image(&client, Kind::CloneSet, "web", "nginx:1.26").await;
    let rollout = wait_rolled_out(&client, Kind::CloneSet, "web", 5, "nginx:1.26").await;
    let after = pods_of(&client, Kind::CloneSet, "web").await;
    let kept = after.iter().filter(|pod| before.get(&pod.name_any()) == pod.uid().as_ref()).count();
    assert_eq!(
        kept,
        5,
        "the image update kept every pod (in place): {:#?}",
        after.iter().map(pod_summary).collect::<Vec<_>>()
    );
    let restarted = after
        .iter()
        .filter(|pod| {
            pod.status
                .as_ref()
                .and_then(|s| s.container_statuses.as_ref())
                .is_some_and(|c| c[0].restart_count == 1)
        })
        .count();
    assert_eq!(restarted, 5, "each pod's container restarted once");
    manager.check_alive().expect("upstream kruise-manager is still running");
    scene.observe(
        "upstream_cloneset_in_place",
        json!({"pods": after.len(), "kept": kept, "updated": rollout.updated}),
    );
    manager.stop().await;
    nodes.shutdown().await;
    Ok(())
}

/// What the handover must not change.
#[derive(Debug, PartialEq)]
struct Snapshot {
    pods: BTreeMap<String, (String, String)>,
    revisions: Vec<String>,
    rollouts: BTreeMap<String, Rollout>,
}

async fn snapshot(client: &Client, names: &[(Kind, &str)]) -> (Snapshot, String) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let list = pods.list(&ListParams::default()).await.expect("listing pods");
    let resource_version = list.metadata.resource_version.clone().unwrap_or_default();
    let revisions: Api<ControllerRevision> = Api::namespaced(client.clone(), NAMESPACE);
    let mut revision_names: Vec<String> = revisions
        .list(&ListParams::default())
        .await
        .expect("listing revisions")
        .items
        .iter()
        .map(|r| r.name_any())
        .collect();
    revision_names.sort();
    let mut rollouts = BTreeMap::new();
    for (kind, name) in names {
        let object = kind.api(client).get(name).await.expect("reading a workload");
        rollouts.insert(format!("{kind:?}/{name}"), rollout_of(*kind, &object).expect("a settled status"));
    }
    let snapshot = Snapshot {
        pods: list
            .items
            .iter()
            .map(|pod| {
                (pod.name_any(), (pod.uid().unwrap_or_default(), pod.resource_version().unwrap_or_default()))
            })
            .collect(),
        revisions: revision_names,
        rollouts,
    };
    (snapshot, resource_version)
}

/// Upstream kruise-manager runs a CloneSet, an Advanced StatefulSet and an Advanced DaemonSet (20
/// pods each) and is stopped; ours starts and writes no pod, keeps every revision and status,
/// then rolls out a new image in place.
pub async fn takeover_from_upstream_without_a_rollout(scene: Scene) -> Result<(), Skip> {
    const PODS: i64 = 20;
    let (nodes, upstream_manager) = start_upstream(&scene, PODS as u32).await?;
    let client = scene.cluster().client();
    let workloads = [(Kind::CloneSet, "web"), (Kind::StatefulSet, "db"), (Kind::DaemonSet, "agent")];
    for (kind, name) in workloads {
        create(&client, kind, kind.manifest(name, PODS as i32, "nginx:1.25")).await;
    }
    let mut by_upstream = BTreeMap::new();
    for (kind, name) in workloads {
        by_upstream.insert(
            format!("{kind:?}/{name}"),
            wait_rolled_out(&client, kind, name, PODS, "nginx:1.25").await,
        );
    }
    upstream_manager.stop().await;
    let (before, resource_version) = snapshot(&client, &workloads).await;

    // Every pod write from here on shows up on this watch.
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let mut stream = pods
        .watch(&WatchParams::default().timeout(290), &resource_version)
        .await
        .expect("watching pods from the snapshot")
        .boxed();
    let writes = tokio::spawn(async move {
        let mut writes = Vec::new();
        while let Some(event) = stream.next().await {
            match event {
                Ok(WatchEvent::Added(pod) | WatchEvent::Modified(pod) | WatchEvent::Deleted(pod)) => {
                    writes.push(format!(
                        "{} rv {}",
                        pod.name_any(),
                        pod.resource_version().unwrap_or_default()
                    ));
                }
                Ok(WatchEvent::Bookmark(_)) => {}
                Ok(WatchEvent::Error(error)) => writes.push(format!("watch error: {error:?}")),
                Err(error) => writes.push(format!("watch failed: {error}")),
            }
        }
        writes
    });

    let ours =
        KruiseManager::start(scene.cluster(), ManagerSpec::in_process()).await.expect("starting our manager");
    // Our manager reconciles each workload at start: give it time to act if it would.
    tokio::time::sleep(Duration::from_secs(15)).await;
    let (after, _) = snapshot(&client, &workloads).await;
    writes.abort();
    let writes = writes.await.unwrap_or_default();
    assert!(writes.is_empty(), "our manager wrote pods it took over: {writes:#?}");
    assert_eq!(after.revisions, before.revisions, "the revisions upstream made are the ones ours uses");
    assert_eq!(after.rollouts, before.rollouts, "update revision and updated counts unchanged");
    assert_eq!(after.pods, before.pods, "no pod created, deleted or written");
    scene.observe("takeover_pod_writes", writes.len());
    scene.observe("takeover_pods", after.pods.len());
    scene.observe("takeover_revisions", after.revisions.len());

    // Then a rollout by ours, in place.
    for (kind, name) in workloads {
        set_image(&client, kind, name, "nginx:1.26").await;
    }
    for (kind, name) in workloads {
        wait_rolled_out(&client, kind, name, PODS, "nginx:1.26").await;
        let now = pods_of(&client, kind, name).await;
        let kept = now
            .iter()
            .filter(|pod| before.pods.get(&pod.name_any()).map(|(uid, _)| uid) == pod.uid().as_ref())
            .count();
        assert_eq!(kept, PODS as usize, "{kind:?} {name}: the rollout by ours kept every pod");
        scene.observe(format!("takeover_rollout_{name}"), kept);
    }
    ours.stop().await;
    nodes.shutdown().await;
    Ok(())
}
