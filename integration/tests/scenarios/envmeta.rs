//! Env from metadata through an in-place update, end to end on both tiers: three simulated
//! nodes, the Kruise manager (CloneSet controller and its in-place update engine) and one node
//! daemon per node reporting `apps.kruise.io/runtime-containers-meta` and restarting containers
//! over its node's CRI socket.
//!
//! A CloneSet (`InPlaceIfPossible`) whose container reads `APP_VERSION` from the pod label
//! `app-version` runs three pods; every pod carries the daemon's report (its container ID, the
//! kubelet's hash, the hash of the env values read inside the container). Changing only the
//! template's label is an in-place update: each pod keeps its UID, gets the new label, and its
//! container is restarted by the daemon (restartCount + 1, a new container ID, a `Killing` Event
//! from `kruise-daemon-containermeta`), after which `env` inside the container shows the new
//! value, the report shows the new hash, and the CloneSet reaches `updatedReadyReplicas ==
//! replicas`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use k8s_cri::v1 as cri;
use k8s_openapi::api::{
    core::v1::{ContainerStatus, Pod},
    events::v1::Event,
};
use kruise_controlplane::nodes::cri::connect_cri;
use kruise_crds::{
    apps::v1beta1::CloneSet,
    common::{
        RUNTIME_CONTAINERS_META_KEY, RuntimeContainerMetaSet,
        containermeta_hash::{expected_env_from_metadata_hash, kubelet_container_hash},
    },
};
use kruise_integration::{Scene, Skip};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

use crate::{
    cloneset_kit::{pod_summary, settled},
    daemon_kit::{DaemonKit, NAMESPACE},
};

/// How long the in-place rollout of three pods, one at a time, may take.
const ROLLOUT: Duration = Duration::from_secs(150);
const NAME: &str = "envmeta";
const CONTAINER: &str = "main";
const LABEL: &str = "app-version";

/// The pieces of the scenario.
struct EnvMeta {
    kit: DaemonKit,
    sets: Api<CloneSet>,
    pods: Api<Pod>,
    events: Api<Event>,
}

impl EnvMeta {
    async fn start(scene: &Scene) -> Self {
        let kit = DaemonKit::start(scene).await;
        let client = scene.cluster().client();
        Self {
            kit,
            sets: Api::namespaced(client.clone(), NAMESPACE),
            pods: Api::namespaced(client.clone(), NAMESPACE),
            events: Api::namespaced(client, NAMESPACE),
        }
    }

    async fn pods_of_set(&self) -> Vec<Pod> {
        let Some(uid) = self.sets.get_opt(NAME).await.unwrap().and_then(|set| set.uid()) else {
            return Vec::new();
        };
        let mut pods: Vec<Pod> = self
            .pods
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|pod| pod.owner_references().iter().any(|owner| owner.uid == uid))
            .collect();
        pods.sort_by_key(|pod| pod.name_any());
        pods
    }

    /// Waits until `check` holds for the CloneSet and its pods; panics with both (and the
    /// pods' reports) when it never does.
    async fn wait_for(
        &self,
        what: &str,
        within: Duration,
        check: impl Fn(&CloneSet, &[Pod]) -> bool,
    ) -> (CloneSet, Vec<Pod>) {
        let deadline = Instant::now() + within;
        loop {
            let set = self.sets.get(NAME).await.unwrap();
            let pods = self.pods_of_set().await;
            if check(&set, &pods) {
                return (set, pods);
            }
            if Instant::now() > deadline {
                let details: Vec<String> = pods
                    .iter()
                    .map(|pod| {
                        format!(
                            "{}\n    labels: {:?}\n    conditions: {:?}\n    container: {:?}\n    report: {}",
                            pod_summary(pod),
                            pod.labels(),
                            pod.status.as_ref().and_then(|s| s.conditions.as_ref()).map(|c| c
                                .iter()
                                .map(|c| format!("{}={}", c.type_, c.status))
                                .collect::<Vec<_>>()),
                            main_status(pod).map(|s| (s.container_id.clone(), s.restart_count, s.ready)),
                            pod.annotations().get(RUNTIME_CONTAINERS_META_KEY).cloned().unwrap_or_default()
                        )
                    })
                    .collect();
                panic!(
                    "timed out waiting for CloneSet {NAME}: {what}\nstatus: {}\npods:\n{}",
                    serde_json::to_string_pretty(&set.status).unwrap(),
                    details.join("\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// What `env` prints inside the pod's `main` container (CRI `ExecSync` on the pod's node).
    async fn env_inside(&self, pod: &Pod) -> BTreeMap<String, String> {
        let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).expect("a scheduled pod");
        let socket = self.kit.nodes.as_ref().expect("nodes").cri_socket(&node);
        let id = container_id(pod);
        let runtime_id = id.split_once("://").map_or(id.as_str(), |(_, id)| id).to_string();
        let mut client =
            cri::runtime_service_client::RuntimeServiceClient::new(connect_cri(&socket).await.unwrap());
        let response = client
            .exec_sync(cri::ExecSyncRequest { container_id: runtime_id, cmd: vec!["env".into()], timeout: 3 })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(response.exit_code, 0, "env in {}", pod.name_any());
        String::from_utf8_lossy(&response.stdout)
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Notes of the `Killing` Events the container meta restarter published about a pod.
    async fn restarter_events(&self, pod: &str) -> Vec<String> {
        let events = self.events.list(&ListParams::default()).await.unwrap().items;
        events
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("Killing"))
            .filter(|e| e.reporting_controller.as_deref() == Some("kruise-daemon-containermeta"))
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(pod))
            .filter_map(|e| e.note)
            .collect()
    }

    fn restarts(&self) -> u64 {
        self.kit.daemons.iter().map(|(_, daemon)| daemon.started.metrics.container_meta_restarts(true)).sum()
    }
}

fn main_status(pod: &Pod) -> Option<&ContainerStatus> {
    pod.status.as_ref()?.container_statuses.as_ref()?.iter().find(|s| s.name == CONTAINER)
}

fn container_id(pod: &Pod) -> String {
    main_status(pod).and_then(|s| s.container_id.clone()).unwrap_or_default()
}

fn restart_count(pod: &Pod) -> i32 {
    main_status(pod).map_or(-1, |s| s.restart_count)
}

fn report(pod: &Pod) -> Option<RuntimeContainerMetaSet> {
    serde_json::from_str(pod.annotations().get(RUNTIME_CONTAINERS_META_KEY)?).ok()
}

/// Whether the daemon's report of the pod describes its running `main` container: same
/// container ID as the pod status, the kubelet's hash of its spec, and the env hash its current
/// labels give (so the values inside are the current ones).
fn reported_current(pod: &Pod) -> bool {
    let Some(report) = report(pod) else { return false };
    let Some(spec) = pod.spec.as_ref().and_then(|s| s.containers.iter().find(|c| c.name == CONTAINER)) else {
        return false;
    };
    let empty = BTreeMap::new();
    let expected = expected_env_from_metadata_hash(
        spec,
        pod.metadata.labels.as_ref().unwrap_or(&empty),
        pod.metadata.annotations.as_ref().unwrap_or(&empty),
    );
    report.containers.iter().any(|meta| {
        meta.name == CONTAINER
            && !meta.container_id.is_empty()
            && meta.container_id == container_id(pod)
            && meta.hashes.plain_hash == kubelet_container_hash(spec)
            && meta.hashes.extracted_env_from_metadata_hash == Some(expected)
    })
}

fn condition(pod: &Pod, kind: &str) -> Option<String> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == kind).map(|c| c.status.clone())
}

pub async fn env_from_metadata_in_place_update(scene: Scene) -> Result<(), Skip> {
    let scenario = EnvMeta::start(&scene).await;
    let manifest = crate::cloneset_kit::cloneset(
        NAME,
        3,
        "registry.example/envmeta/app:v1",
        json!({
            "template": {
                "metadata": {"labels": {LABEL: "v1"}},
                "spec": {"containers": [{
                    "name": CONTAINER,
                    "image": "registry.example/envmeta/app:v1",
                    "env": [
                        {"name": "APP_VERSION", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app-version']"}}},
                        {"name": "STATIC", "value": "kept"},
                    ],
                }]},
            },
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}},
        }),
    );
    let mut manifest = manifest;
    manifest["metadata"]["namespace"] = json!(NAMESPACE);
    let set: CloneSet = serde_json::from_value(manifest).unwrap();
    scenario.sets.create(&PostParams::default(), &set).await.expect("creating the CloneSet");

    // Running, and reported by the daemons with the env hash read inside each container.
    let (_, before) = scenario
        .wait_for("3 pods ready and reported by the node daemons", Duration::from_secs(90), |set, pods| {
            settled(set, pods, 3) && pods.iter().all(reported_current)
        })
        .await;
    let nodes: std::collections::BTreeSet<_> =
        before.iter().filter_map(|p| p.spec.as_ref().and_then(|s| s.node_name.clone())).collect();
    for pod in &before {
        assert_eq!(scenario.env_inside(pod).await.get("APP_VERSION").map(String::as_str), Some("v1"));
        let report = report(pod).unwrap();
        assert_eq!(report.containers.len(), 1, "one entry per container: {report:?}");
        assert_eq!(report.containers[0].restart_count, restart_count(pod));
    }
    let revision_before = before[0].labels().get("controller-revision-hash").cloned();
    assert_eq!(scenario.restarts(), 0, "nothing is restarted outside an in-place update");

    // A metadata-only change of the template: in place, the daemon restarts the containers.
    scenario
        .sets
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"metadata": {"labels": {LABEL: "v2"}}}}})),
        )
        .await
        .expect("patching the template's label");
    let by_name: BTreeMap<String, Pod> = before.iter().map(|p| (p.name_any(), p.clone())).collect();
    let (set, after) = scenario
        .wait_for(
            "every pod updated in place, restarted once by the daemon and ready",
            ROLLOUT,
            |set, pods| {
                settled(set, pods, 3)
                    && pods.iter().all(|pod| {
                        by_name.get(&pod.name_any()).is_some_and(|old| {
                            old.uid() == pod.uid()
                                && restart_count(pod) == restart_count(old) + 1
                                && container_id(pod) != container_id(old)
                        }) && pod.labels().get(LABEL).map(String::as_str) == Some("v2")
                            && condition(pod, "InPlaceUpdateReady").as_deref() == Some("True")
                            && reported_current(pod)
                    })
            },
        )
        .await;
    let status = set.status.clone().unwrap();
    assert_eq!((status.replicas, status.updated_replicas, status.updated_ready_replicas), (3, 3, 3));
    assert_ne!(after[0].labels().get("controller-revision-hash").cloned(), revision_before);
    let nodes_after: std::collections::BTreeSet<_> =
        after.iter().filter_map(|p| p.spec.as_ref().and_then(|s| s.node_name.clone())).collect();
    assert_eq!(nodes_after, nodes, "pods stay on their nodes");
    for pod in &after {
        let env = scenario.env_inside(pod).await;
        assert_eq!(env.get("APP_VERSION").map(String::as_str), Some("v2"), "env inside {}", pod.name_any());
        assert_eq!(env.get("STATIC").map(String::as_str), Some("kept"));
        let report = report(pod).unwrap();
        assert_eq!(report.containers[0].container_id, container_id(pod));
        assert_eq!(report.containers[0].restart_count, restart_count(pod));
    }
    assert_eq!(scenario.restarts(), 3, "one restart per pod");

    // The restarter said so on each pod (Events are written in the background).
    let deadline = Instant::now() + Duration::from_secs(20);
    for pod in &before {
        let old_id = container_id(pod);
        loop {
            let notes = scenario.restarter_events(&pod.name_any()).await;
            if notes
                .iter()
                .any(|note| note == &format!("Stopping containerID {old_id} by container meta restarter"))
            {
                break;
            }
            assert!(Instant::now() < deadline, "no Killing Event for {old_id}: {notes:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    scenario.kit.shutdown().await;
    Ok(())
}
