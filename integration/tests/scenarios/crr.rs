//! ContainerRecreateRequests end to end, on both tiers: three simulated nodes, the Kruise
//! manager (webhook and CRR controller) and one node daemon per node stopping containers over
//! its node's CRI socket, the simulated kubelet restarting them.
//!
//! - a request restarts exactly the named containers of a two-container pod (new containerID,
//!   restartCount + 1, the other container untouched, the pod UID unchanged), runs the
//!   container's preStop hook first, reports `Completed` with every container `Succeeded`, and
//!   is deleted after `ttlSecondsAfterFinished`; with `unreadyGracePeriodSeconds` the pod is
//!   held not ready (`KruisePodReady`) before anything is stopped and released afterwards;
//! - `orderedRecreate` restarts the containers one after the other, in the request's order;
//! - a request for a missing pod or container (and other bad requests, and spec changes) is
//!   refused by the webhook with the field and the reason; a request past its
//!   `activeDeadlineSeconds`, or whose pod is deleted, ends `Completed` with a message saying so.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use futures::StreamExt;
use k8s_openapi::{
    api::{
        core::v1::{ContainerStatus, Pod},
        events::v1::Event,
    },
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{ContainerRecreateRequest, ContainerRecreateRequestPhase};
use kruise_integration::{Scene, Skip};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
    runtime::watcher,
};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::daemon_kit::{DaemonKit, NAMESPACE, SETTLE};

/// The pieces of a scenario.
struct Crr {
    kit: DaemonKit,
    pods: Api<Pod>,
    requests: Api<ContainerRecreateRequest>,
    events: Api<Event>,
}

impl Crr {
    async fn start(scene: &Scene) -> Self {
        let kit = DaemonKit::start(scene).await;
        let client = scene.cluster().client();
        let requests: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), NAMESPACE);
        let deadline = Instant::now() + Duration::from_secs(30);
        while requests.list(&ListParams::default().limit(1)).await.is_err() {
            assert!(Instant::now() < deadline, "ContainerRecreateRequests are not served");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Self {
            kit,
            pods: Api::namespaced(client.clone(), NAMESPACE),
            requests,
            events: Api::namespaced(client, NAMESPACE),
        }
    }

    /// Creates a pod and waits until it is Ready; with `gate`, the pod has the `KruisePodReady`
    /// readiness gate, set True here as Kruise's readiness controller would.
    async fn ready_pod(&self, manifest: Value, gate: bool) -> Pod {
        let pod: Pod = serde_json::from_value(manifest).unwrap();
        let name = pod.name_any();
        self.pods.create(&PostParams::default(), &pod).await.expect("creating the pod");
        if gate {
            self.wait_pod(&name, "containers ready", |p| {
                condition(p, "ContainersReady") == Some("True".into())
            })
            .await;
            let patch = json!({"status": {"conditions": [{"type": "KruisePodReady", "status": "True"}]}});
            self.pods.patch_status(&name, &PatchParams::default(), &Patch::Strategic(&patch)).await.unwrap();
        }
        self.wait_pod(&name, "Ready", is_ready).await
    }

    async fn wait_pod(&self, name: &str, what: &str, check: impl Fn(&Pod) -> bool) -> Pod {
        let deadline = Instant::now() + SETTLE;
        loop {
            let pod = self.pods.get_opt(name).await.expect("reading the pod");
            if let Some(pod) = &pod
                && check(pod)
            {
                return pod.clone();
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for pod {name}: {what}\npod status: {}",
                    serde_json::to_string_pretty(&pod.and_then(|p| p.status)).unwrap()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn create(&self, manifest: Value) -> Result<ContainerRecreateRequest, kube::Error> {
        let request: ContainerRecreateRequest = serde_json::from_value(manifest).unwrap();
        self.requests.create(&PostParams::default(), &request).await
    }

    /// The webhook's refusal of `manifest`: (code, the message from the field on).
    async fn refused(&self, manifest: Value) -> (u16, String) {
        let error = self.create(manifest).await.expect_err("the request is refused");
        let kube::Error::Api(status) = error else { panic!("not an API error: {error}") };
        let message = status
            .message
            .find("spec.")
            .map_or(status.message.clone(), |at| status.message[at..].to_string());
        (status.code, message)
    }

    async fn wait_request(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(&ContainerRecreateRequest) -> bool,
    ) -> ContainerRecreateRequest {
        let deadline = Instant::now() + SETTLE;
        loop {
            let current = self.requests.get_opt(name).await.expect("reading the request");
            if let Some(current) = &current
                && check(current)
            {
                return current.clone();
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for ContainerRecreateRequest {name}: {what}\nnow: {}",
                    serde_json::to_string_pretty(&current).unwrap()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn wait_request_gone(&self, name: &str, within: Duration) {
        let deadline = Instant::now() + within;
        while self.requests.get_opt(name).await.expect("reading the request").is_some() {
            assert!(
                Instant::now() < deadline,
                "ContainerRecreateRequest {name} was not deleted within {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// `Killing` Events the daemons published about a pod's containers.
    async fn killing_events(&self, pod: &str) -> Vec<String> {
        let events = self.events.list(&ListParams::default()).await.unwrap().items;
        let mut notes: Vec<String> = events
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("Killing"))
            .filter(|e| e.reporting_controller.as_deref() == Some("kruise-daemon-crr"))
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(pod))
            .filter_map(|e| e.note)
            .collect();
        notes.sort();
        notes
    }

    async fn container_stops(&self) -> u64 {
        self.kit.daemons.iter().map(|(_, daemon)| daemon.started.metrics.container_stops(true)).sum()
    }

    async fn shutdown(self) {
        self.kit.shutdown().await;
    }
}

fn pod_manifest(name: &str, containers: Value, extra: Value) -> Value {
    let mut manifest = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": name}},
        "spec": {"containers": containers, "terminationGracePeriodSeconds": 10},
    });
    crate::cloneset_kit::merge(&mut manifest["spec"], extra);
    manifest
}

fn request_manifest(name: &str, pod: &str, containers: &[&str], extra: Value) -> Value {
    let mut manifest = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ContainerRecreateRequest",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "podName": pod,
            "containers": containers.iter().map(|c| json!({"name": c})).collect::<Vec<_>>(),
        },
    });
    crate::cloneset_kit::merge(&mut manifest["spec"], extra);
    manifest
}

fn condition(pod: &Pod, kind: &str) -> Option<String> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == kind).map(|c| c.status.clone())
}

fn condition_message(pod: &Pod, kind: &str) -> String {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == kind))
        .and_then(|c| c.message.clone())
        .unwrap_or_default()
}

fn is_ready(pod: &Pod) -> bool {
    condition(pod, "Ready").as_deref() == Some("True")
}

fn container<'a>(pod: &'a Pod, name: &str) -> &'a ContainerStatus {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|statuses| statuses.iter().find(|c| c.name == name))
        .unwrap_or_else(|| panic!("pod {} has no status of container {name}", pod.name_any()))
}

fn id_of(pod: &Pod, name: &str) -> String {
    container(pod, name).container_id.clone().unwrap_or_default()
}

fn restarts(pod: &Pod, name: &str) -> i32 {
    container(pod, name).restart_count
}

/// When the container's current instance started.
fn started_at(pod: &Pod, name: &str) -> Timestamp {
    container(pod, name)
        .state
        .as_ref()
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.clone())
        .unwrap()
        .0
}

/// When the container's previous instance finished.
fn previous_finished_at(pod: &Pod, name: &str) -> Timestamp {
    container(pod, name)
        .last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .and_then(|t| t.finished_at.clone())
        .unwrap()
        .0
}

fn seconds_between(from: Timestamp, to: Timestamp) -> i64 {
    to.as_second() - from.as_second()
}

fn completed(crr: &ContainerRecreateRequest) -> bool {
    crr.status
        .as_ref()
        .is_some_and(|s| s.phase == ContainerRecreateRequestPhase::Completed && s.completion_time.is_some())
}

/// (phase, message, [(container, phase, isKilled, message)]) of a request.
fn outcome(crr: &ContainerRecreateRequest) -> Value {
    let status = crr.status.clone().unwrap_or_default();
    json!({
        "phase": status.phase.as_str(),
        "message": status.message,
        "containers": status.container_recreate_states.iter()
            .map(|s| json!([s.name, s.phase.as_str(), s.is_killed, s.message]))
            .collect::<Vec<_>>(),
    })
}

fn label(crr: &ContainerRecreateRequest, key: &str) -> Option<String> {
    crr.labels().get(key).cloned()
}

pub async fn recreates_exactly_the_named_containers(scene: Scene) -> Result<(), Skip> {
    let crr = Crr::start(&scene).await;
    let containers = json!([
        {"name": "app", "image": "registry.example/crr/app:v1",
         "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 2"]}}}},
        {"name": "sidecar", "image": "registry.example/crr/sidecar:v1"},
    ]);
    let extra = json!({"readinessGates": [{"conditionType": "KruisePodReady"}]});
    let before = crr.ready_pod(pod_manifest("crr-web", containers, extra), true).await;

    // One container: the webhook fills the request in from the pod.
    let created = crr
        .create(request_manifest("restart-app", "crr-web", &["app"], json!({"ttlSecondsAfterFinished": 3})))
        .await
        .expect("creating the request");
    assert_eq!(label(&created, "crr.apps.kruise.io/pod-uid"), before.metadata.uid);
    assert_eq!(label(&created, "crr.apps.kruise.io/node-name"), before.spec.as_ref().unwrap().node_name);
    assert_eq!(label(&created, "crr.apps.kruise.io/active").as_deref(), Some("true"));
    let spec = serde_json::to_value(&created.spec).unwrap();
    assert_eq!(spec["containers"][0]["statusContext"]["containerID"], json!(id_of(&before, "app")));
    scene.observe(
        "defaulted spec",
        json!({
            "strategy": spec["strategy"],
            "preStop": spec["containers"][0]["preStop"],
            "restartCount": spec["containers"][0]["statusContext"]["restartCount"],
        }),
    );
    assert_eq!(spec["strategy"], json!({"failurePolicy": "Fail", "terminationGracePeriodSeconds": 10}));

    let done = crr.wait_request("restart-app", "Completed", completed).await;
    scene.observe("restart-app outcome", outcome(&done));
    let status = done.status.clone().unwrap();
    assert_eq!(status.message, "");
    assert_eq!(outcome(&done)["containers"], json!([["app", "Succeeded", true, ""]]));
    let after = crr.wait_pod("crr-web", "Ready again", is_ready).await;
    assert_eq!(after.metadata.uid, before.metadata.uid, "the pod is the same pod");
    assert_ne!(id_of(&after, "app"), id_of(&before, "app"), "app is a new container");
    assert_eq!(restarts(&after, "app"), restarts(&before, "app") + 1);
    assert_eq!(id_of(&after, "sidecar"), id_of(&before, "sidecar"), "sidecar untouched");
    assert_eq!(restarts(&after, "sidecar"), restarts(&before, "sidecar"));
    assert!(
        status
            .container_status_snapshot
            .iter()
            .any(|s| s.name == "app" && s.ready && s.container_id == id_of(&after, "app")),
        "the manager's snapshot shows the new instance ready: {:?}",
        status.container_status_snapshot
    );
    // The preStop hook (`sleep 2`) ran before the container was stopped.
    let requested = created.metadata.creation_timestamp.clone().unwrap().0;
    let stopped = previous_finished_at(&after, "app");
    assert!(seconds_between(requested, stopped) >= 2, "stopped {stopped} for a request made at {requested}");
    scene.observe(
        "restart-app restarts",
        json!({"app": restarts(&after, "app"), "sidecar": restarts(&after, "sidecar")}),
    );
    // Finished: no longer active, then deleted after its TTL.
    let inactive = crr
        .wait_request("restart-app", "no longer active", |c| label(c, "crr.apps.kruise.io/active").is_none())
        .await;
    assert!(completed(&inactive));
    crr.wait_request_gone("restart-app", Duration::from_secs(15)).await;
    scene.observe("restart-app deleted after its TTL", true);

    // Both containers, with an unready grace period: held not ready first, released after.
    crr.create(request_manifest(
        "restart-both",
        "crr-web",
        &["app", "sidecar"],
        json!({"strategy": {"unreadyGracePeriodSeconds": 2}}),
    ))
    .await
    .expect("creating the second request");
    let held = crr
        .wait_pod("crr-web", "held not ready by the request", |p| {
            condition(p, "KruisePodReady").as_deref() == Some("False")
                && condition_message(p, "KruisePodReady").contains("default/restart-both")
        })
        .await;
    assert!(condition_message(&held, "KruisePodReady").contains("ContainerRecreateRequest"));
    let holding = crr.requests.get("restart-both").await.unwrap();
    assert!(
        holding.finalizers().iter().any(|f| f == "crr.apps.kruise.io/unready-acquired"),
        "{:?}",
        holding.finalizers()
    );
    let grace_since = crr
        .wait_request("restart-both", "PreRecreateGrace", |c| {
            c.status.as_ref().is_some_and(|s| {
                s.conditions.iter().any(|c| c.type_ == "PreRecreateGrace" && c.status == "True")
            })
        })
        .await
        .status
        .unwrap()
        .conditions
        .into_iter()
        .find(|c| c.type_ == "PreRecreateGrace")
        .unwrap()
        .last_transition_time
        .0;
    let done = crr.wait_request("restart-both", "Completed", completed).await;
    scene.observe("restart-both outcome", outcome(&done));
    assert_eq!(
        outcome(&done)["containers"],
        json!([["app", "Succeeded", true, ""], ["sidecar", "Succeeded", true, ""]])
    );
    let released = crr
        .wait_pod("crr-web", "released and Ready", |p| {
            is_ready(p) && condition(p, "KruisePodReady").as_deref() == Some("True")
        })
        .await;
    assert!(!condition_message(&released, "KruisePodReady").contains("restart-both"));
    let finished = crr
        .wait_request("restart-both", "finalizer and active label gone", |c| {
            c.finalizers().is_empty() && label(c, "crr.apps.kruise.io/active").is_none()
        })
        .await;
    assert!(completed(&finished));
    assert_eq!(released.metadata.uid, before.metadata.uid);
    assert_eq!(restarts(&released, "app"), restarts(&before, "app") + 2);
    assert_eq!(restarts(&released, "sidecar"), restarts(&before, "sidecar") + 1);
    let sidecar_stopped = previous_finished_at(&released, "sidecar");
    assert!(
        seconds_between(grace_since, sidecar_stopped) >= 2,
        "nothing stopped before the unready grace period ended ({grace_since} -> {sidecar_stopped})"
    );
    scene.observe(
        "restart-both restarts",
        json!({"app": restarts(&released, "app"), "sidecar": restarts(&released, "sidecar")}),
    );

    // The daemons stopped exactly three containers and said so on the pod.
    assert_eq!(crr.container_stops().await, 3);
    let deadline = Instant::now() + Duration::from_secs(10);
    let killing = loop {
        let killing = crr.killing_events("crr-web").await;
        if killing.len() >= 3 || Instant::now() > deadline {
            break killing;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    scene.observe("killing events", &killing);
    assert_eq!(
        killing,
        [
            "Stopping container app by ContainerRecreateRequest restart-app",
            "Stopping container app by ContainerRecreateRequest restart-both",
            "Stopping container sidecar by ContainerRecreateRequest restart-both",
        ]
    );
    crr.shutdown().await;
    Ok(())
}

pub async fn ordered_recreate_restarts_in_order(scene: Scene) -> Result<(), Skip> {
    let crr = Crr::start(&scene).await;
    let containers = json!([
        {"name": "app", "image": "registry.example/crr/app:v1"},
        {"name": "sidecar", "image": "registry.example/crr/sidecar:v1"},
    ]);
    let before = crr.ready_pod(pod_manifest("crr-ordered", containers, json!({})), false).await;
    let old = (id_of(&before, "app"), id_of(&before, "sidecar"));

    // Every distinct (app, sidecar) pair of instances the pod status goes through.
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let watch = {
        let (seen, api) = (seen.clone(), crr.pods.clone());
        tokio::spawn(async move {
            let config = watcher::Config::default().fields("metadata.name=crr-ordered");
            let mut stream = watcher(api, config).boxed();
            while let Some(event) = stream.next().await {
                let (Ok(watcher::Event::Apply(pod)) | Ok(watcher::Event::InitApply(pod))) = event else {
                    continue;
                };
                let ids = |name: &str| {
                    pod.status
                        .as_ref()
                        .and_then(|s| s.container_statuses.as_ref())
                        .and_then(|s| s.iter().find(|c| c.name == name))
                        .and_then(|c| c.container_id.clone())
                        .unwrap_or_default()
                };
                let pair = (ids("app"), ids("sidecar"));
                let mut seen = seen.lock();
                if seen.last() != Some(&pair) {
                    seen.push(pair);
                }
            }
        })
    };

    // The request's order (sidecar, then app), not the pod's.
    crr.create(request_manifest(
        "ordered",
        "crr-ordered",
        &["sidecar", "app"],
        json!({"strategy": {"orderedRecreate": true, "minStartedSeconds": 2}}),
    ))
    .await
    .expect("creating the request");
    let done = crr.wait_request("ordered", "Completed", completed).await;
    scene.observe("ordered outcome", outcome(&done));
    assert_eq!(
        outcome(&done)["containers"],
        json!([["sidecar", "Succeeded", true, ""], ["app", "Succeeded", true, ""]])
    );
    let after = crr.wait_pod("crr-ordered", "Ready again", is_ready).await;
    watch.abort();
    let new = (id_of(&after, "app"), id_of(&after, "sidecar"));
    assert!(new.0 != old.0 && new.1 != old.1, "both restarted: {old:?} -> {new:?}");
    assert_eq!((restarts(&after, "app"), restarts(&after, "sidecar")), (1, 1));
    assert_eq!(after.metadata.uid, before.metadata.uid);

    // The sidecar's new instance was running while app was still the old one, and app never
    // had a new instance while the sidecar had its old one.
    let seen = seen.lock().clone();
    let only_sidecar_new =
        seen.iter().any(|(app, sidecar)| *app == old.0 && *sidecar != old.1 && !sidecar.is_empty());
    let app_first = seen.iter().any(|(app, sidecar)| *sidecar == old.1 && *app != old.0 && !app.is_empty());
    assert!(only_sidecar_new && !app_first, "instances seen in order: {seen:#?}");
    // Start times: app was stopped only after the new sidecar had run (minStartedSeconds: 2;
    // the pod status keeps whole seconds, so at least one of them shows).
    let sidecar_started = started_at(&after, "sidecar");
    let app_stopped = previous_finished_at(&after, "app");
    assert!(
        seconds_between(sidecar_started, app_stopped) >= 1,
        "app stopped at {app_stopped}, the new sidecar started at {sidecar_started}"
    );
    assert!(started_at(&after, "app") > sidecar_started, "app restarted after the sidecar");
    scene.observe("restart order", ["sidecar", "app"]);
    crr.shutdown().await;
    Ok(())
}

pub async fn bad_requests_are_refused_or_fail_with_a_message(scene: Scene) -> Result<(), Skip> {
    let crr = Crr::start(&scene).await;
    let containers = json!([{"name": "app", "image": "registry.example/crr/app:v1"}]);
    let target = crr.ready_pod(pod_manifest("crr-target", containers.clone(), json!({})), false).await;

    let cases = [
        ("missing pod", request_manifest("bad-pod", "nope", &["app"], json!({}))),
        ("missing container", request_manifest("bad-container", "crr-target", &["db"], json!({}))),
        ("duplicate container", request_manifest("bad-duplicate", "crr-target", &["app", "app"], json!({}))),
        (
            "short deadline",
            request_manifest("bad-deadline", "crr-target", &["app"], json!({"activeDeadlineSeconds": 1})),
        ),
        ("read-only field", request_manifest("bad-context", "crr-target", &["app"], json!({}))),
    ];
    let mut refusals = Vec::new();
    for (case, mut manifest) in cases {
        if case == "read-only field" {
            manifest["spec"]["containers"][0]["statusContext"] =
                json!({"containerID": "containerd://x", "restartCount": 0});
        }
        let (code, message) = crr.refused(manifest).await;
        assert_eq!(code, 422, "{case}: {message}");
        refusals.push(json!({"case": case, "message": message}));
    }
    scene.observe("refusals", &refusals);
    let messages: Vec<String> = refusals.iter().map(|r| r["message"].as_str().unwrap().to_string()).collect();
    assert!(
        messages[0]
            .contains(r#"spec.podName: Not found: "nope": no Pod named "nope" in namespace "default""#),
        "{}",
        messages[0]
    );
    assert!(
        messages[1].contains(r#"spec.containers[0].name: Not found: "db": no container of that name in Pod crr-target (containers: app)"#),
        "{}",
        messages[1]
    );
    assert!(messages[2].contains(r#"spec.containers[1].name: Duplicate value: "app""#), "{}", messages[2]);
    assert!(messages[3].contains("spec.activeDeadlineSeconds: Invalid value: 1"), "{}", messages[3]);
    assert!(messages[4].contains("spec.containers[0].statusContext: Forbidden"), "{}", messages[4]);
    assert!(crr.requests.list(&ListParams::default()).await.unwrap().items.is_empty(), "nothing was created");

    // Past its deadline (held back by a long unready grace period): completed with the reason,
    // nothing restarted. Its spec cannot change meanwhile.
    crr.create(request_manifest(
        "too-slow",
        "crr-target",
        &["app"],
        json!({"activeDeadlineSeconds": 3, "strategy": {"unreadyGracePeriodSeconds": 600}}),
    ))
    .await
    .expect("creating the request");
    let patch = json!({"spec": {"containers": [{"name": "app"}, {"name": "other"}]}});
    let error =
        crr.requests.patch("too-slow", &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap_err();
    let kube::Error::Api(status) = error else { panic!("not an API error: {error}") };
    assert_eq!(status.code, 422, "{status:?}");
    assert!(
        status.message.contains("spec: Forbidden: spec of ContainerRecreateRequest is immutable"),
        "{}",
        status.message
    );
    scene.observe("spec change refused", status.code);
    let done = crr.wait_request("too-slow", "Completed at its deadline", completed).await;
    scene.observe("too-slow outcome", outcome(&done));
    assert_eq!(done.status.as_ref().unwrap().message, "recreating has exceeded the activeDeadlineSeconds");
    let unchanged = crr.pods.get("crr-target").await.unwrap();
    assert_eq!(id_of(&unchanged, "app"), id_of(&target, "app"), "nothing was stopped");

    // Its pod deleted while it waits: completed, "pod has gone".
    crr.create(request_manifest(
        "orphaned",
        "crr-target",
        &["app"],
        json!({"strategy": {"unreadyGracePeriodSeconds": 600}}),
    ))
    .await
    .expect("creating the request");
    crr.wait_request("orphaned", "Recreating", |c| {
        c.status.as_ref().is_some_and(|s| s.phase == ContainerRecreateRequestPhase::Recreating)
    })
    .await;
    crr.pods.delete("crr-target", &DeleteParams::default()).await.unwrap();
    let done = crr.wait_request("orphaned", "Completed once the pod went", completed).await;
    scene.observe("orphaned outcome", outcome(&done));
    assert_eq!(done.status.as_ref().unwrap().message, "pod has gone");
    assert_eq!(crr.container_stops().await, 0);
    crr.shutdown().await;
    Ok(())
}
