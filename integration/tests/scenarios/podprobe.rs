//! PodProbeMarker end to end, on both tiers: three simulated nodes (in the test process, so
//! that the scenario can script what a command run in a container exits with), the Kruise
//! manager (PodProbeMarker and NodePodProbe controllers) and one node daemon per node running
//! the probes over its node's CRI socket.
//!
//! - a marker selecting a pod with an exec probe `check` lands in the NodePodProbe of the pod's
//!   node as `<marker>#healthy`; with `check` scripted to exit 0 the daemon reports `Succeeded`
//!   and the pod gets condition `game.io/healthy` True and label `game.io/state: ready`;
//! - scripted to exit 1, the condition flips to False and the label to `down`;
//! - deleting the marker takes its probe out of the NodePodProbe (finalizer cleanup) before the
//!   marker goes;
//! - the validating webhook refuses a marker whose probe writes a reserved condition (`Ready`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1alpha1::{NodePodProbe, PodProbeMarker, ProbeState};
use kruise_integration::{Scene, Skip};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams, PostParams},
};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::daemon_kit::{DaemonKit, NAMESPACE, SETTLE};

const POD: &str = "probe-web";
const MARKER: &str = "game-health";
const PROBE: &str = "game-health#healthy";
const CONDITION: &str = "game.io/healthy";
const STATE_LABEL: &str = "game.io/state";

/// Polls `get` until `check` holds, panicking with the last value after [`SETTLE`].
async fn wait<T, F, Fut>(what: &str, get: F, check: impl Fn(&T) -> bool) -> T
where
    T: serde::Serialize + Clone,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + SETTLE;
    loop {
        let current = get().await;
        if let Some(current) = &current
            && check(current)
        {
            return current.clone();
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}\nnow: {}",
            serde_json::to_string_pretty(&current).unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn get<K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug>(
    api: &Api<K>,
    name: &str,
) -> Option<K> {
    api.get_opt(name).await.expect("reading an object")
}

fn condition(pod: &Pod, kind: &str) -> Option<String> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == kind).map(|c| c.status.clone())
}

fn label(pod: &Pod, key: &str) -> Option<String> {
    pod.labels().get(key).cloned()
}

/// The state the NodePodProbe reports for the pod's probe, when it lists the probe.
fn probe_state(npp: &NodePodProbe, uid: &str) -> Option<ProbeState> {
    let listed = npp.spec.pod_probes.iter().any(|p| p.uid == uid && p.probes.iter().any(|p| p.name == PROBE));
    if !listed {
        return None;
    }
    npp.status
        .as_ref()?
        .pod_probe_statuses
        .iter()
        .find(|s| s.uid == uid)?
        .probe_states
        .iter()
        .find(|s| s.name == PROBE)
        .map(|s| s.state.clone())
}

/// Scripts `check` in container `app` on every node to exit with `code`.
fn script_check(kit: &DaemonKit, code: i32) {
    let nodes = kit.nodes.as_ref().expect("the simulated nodes");
    for node in nodes.names() {
        assert!(nodes.script_exec(node, "app", "check", Some(code)), "scripting exec on {node}");
    }
}

/// A marker's condition and label follow its exec probe's result as the result flips.
pub async fn marker_condition_follows_the_probe(scene: Scene) -> Result<(), Skip> {
    let kit = DaemonKit::start(&scene).await;
    let client = scene.cluster().client();
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let markers: Api<PodProbeMarker> = Api::namespaced(client.clone(), NAMESPACE);
    let node_probes: Api<NodePodProbe> = Api::all(client.clone());
    let deadline = Instant::now() + Duration::from_secs(30);
    while markers.list(&ListParams::default().limit(1)).await.is_err()
        || node_probes.list(&ListParams::default().limit(1)).await.is_err()
    {
        assert!(Instant::now() < deadline, "PodProbeMarkers and NodePodProbes are not served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    script_check(&kit, 0);

    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": POD, "namespace": NAMESPACE, "labels": {"app": POD}},
        "spec": {"containers": [{"name": "app", "image": "registry.example/probe/app:v1"}]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.expect("creating the pod");
    let pod =
        wait("the pod to be Ready", || get(&pods, POD), |p| condition(p, "Ready").as_deref() == Some("True"))
            .await;
    let uid = pod.uid().expect("a pod UID");
    let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).expect("a scheduled pod");
    wait(&format!("the NodePodProbe of {node}"), || get(&node_probes, &node), |_| true).await;

    let marker: PodProbeMarker = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
        "metadata": {"name": MARKER, "namespace": NAMESPACE},
        "spec": {
            "selector": {"matchLabels": {"app": POD}},
            "probes": [{
                "name": "healthy", "containerName": "app",
                "probe": {"exec": {"command": ["check"]}, "periodSeconds": 1},
                "podConditionType": CONDITION,
                "markerPolicy": [
                    {"state": "Succeeded", "labels": {STATE_LABEL: "ready"}},
                    {"state": "Failed", "labels": {STATE_LABEL: "down"}},
                ],
            }],
        },
    }))
    .unwrap();
    // The webhook refuses a marker writing a condition Kubernetes owns.
    let mut reserved = marker.clone();
    reserved.metadata.name = Some("reserved".into());
    reserved.spec.probes[0].pod_condition_type = "Ready".into();
    match markers.create(&PostParams::default(), &reserved).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 400, "{}", status.message);
            assert!(status.message.contains("podConditionType"), "{}", status.message);
        }
        other => panic!("a marker with condition type Ready was not refused: {other:?}"),
    }
    markers.create(&PostParams::default(), &marker).await.expect("creating the PodProbeMarker");

    let npp = wait(
        "the NodePodProbe to report the probe Succeeded",
        || get(&node_probes, &node),
        |npp| probe_state(npp, &uid) == Some(ProbeState::Succeeded),
    )
    .await;
    let entry = npp.spec.pod_probes.iter().find(|p| p.uid == uid).unwrap();
    assert_eq!((entry.name.as_str(), entry.namespace.as_str()), (POD, NAMESPACE));
    assert_eq!(entry.ip, pod.status.as_ref().and_then(|s| s.pod_ip.clone()).unwrap_or_default());
    let up = wait(
        "the pod's probe condition True and label ready",
        || get(&pods, POD),
        |p| {
            condition(p, CONDITION).as_deref() == Some("True")
                && label(p, STATE_LABEL).as_deref() == Some("ready")
        },
    )
    .await;
    let marker = wait(
        "the marker's status to count the pod",
        || get(&markers, MARKER),
        |m| m.status.as_ref().is_some_and(|s| s.matched_pods == 1 && s.observed_generation == 1),
    )
    .await;
    assert!(marker.finalizers().iter().any(|f| f == "kruise.io/node-pod-probe-cleanup"));
    scene.observe(
        "probe succeeded",
        json!({"condition": condition(&up, CONDITION), "label": label(&up, STATE_LABEL)}),
    );

    // The probe starts failing: the condition and the label flip.
    script_check(&kit, 1);
    wait(
        "the NodePodProbe to report the probe Failed",
        || get(&node_probes, &node),
        |npp| probe_state(npp, &uid) == Some(ProbeState::Failed),
    )
    .await;
    let down = wait(
        "the pod's probe condition False and label down",
        || get(&pods, POD),
        |p| {
            condition(p, CONDITION).as_deref() == Some("False")
                && label(p, STATE_LABEL).as_deref() == Some("down")
        },
    )
    .await;
    scene.observe(
        "probe failed",
        json!({"condition": condition(&down, CONDITION), "label": label(&down, STATE_LABEL)}),
    );

    // And recovers.
    script_check(&kit, 0);
    wait(
        "the pod's probe condition True and label ready again",
        || get(&pods, POD),
        |p| {
            condition(p, CONDITION).as_deref() == Some("True")
                && label(p, STATE_LABEL).as_deref() == Some("ready")
        },
    )
    .await;

    // Deleting the marker takes its probe out of the NodePodProbe, then the marker goes.
    markers.delete(MARKER, &DeleteParams::default()).await.expect("deleting the PodProbeMarker");
    wait(
        "the NodePodProbe without the marker's probe",
        || get(&node_probes, &node),
        |npp| {
            !npp.spec.pod_probes.iter().any(|p| p.probes.iter().any(|p| p.name.starts_with("game-health#")))
        },
    )
    .await;
    let deadline = Instant::now() + SETTLE;
    while get(&markers, MARKER).await.is_some() {
        assert!(Instant::now() < deadline, "the PodProbeMarker was not deleted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    kit.shutdown().await;
    Ok(())
}
