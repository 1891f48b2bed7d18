//! The in-place update engine against the embedded API server and simulated nodes (a kubelet
//! that restarts a container when its image changes, applies `pods/resize`, and reports
//! imageIDs). A small loop plays the workload controller: it reads the pod and calls
//! `refresh` until the pod reaches the state a user expects, recording what it saw.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{ConfigMap, ContainerStatus, Pod, PodTemplateSpec};
use kruise_controllers::inplace::{
    CloneSetRevisionAdapter, InPlaceEngine, InPlaceGates, NotCompleted, RefreshResult, RefreshStatus,
    Revision, UpdateOptions, completion::update_state, gohash,
};
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    nodes::{Simulation, SimulationConfig},
};
use kruise_crds::common::{IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_READY, RUNTIME_CONTAINERS_META_KEY};
use kube::{
    Client,
    api::{Api, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(30);

struct Env {
    apiserver: Option<ApiServer>,
    nodes: Option<Simulation>,
    pods: Api<Pod>,
    client: Client,
    engine: InPlaceEngine,
}

impl Env {
    async fn start() -> Self {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("kruise_controllers=debug")
            .with_test_writer()
            .try_init();
        let apiserver = ApiServer::start(ApiServerConfig::default()).await.unwrap();
        let client = Client::try_from(kube::Config::new(apiserver.url.parse().unwrap())).unwrap();
        let config = SimulationConfig { nodes: 1, ..Default::default() };
        let nodes = Simulation::start(client.clone(), &config).await.unwrap();
        let engine = InPlaceEngine::new(client.clone(), Arc::new(CloneSetRevisionAdapter::default()));
        Self {
            apiserver: Some(apiserver),
            nodes: Some(nodes),
            pods: Api::namespaced(client.clone(), "default"),
            client,
            engine,
        }
    }

    async fn stop(mut self) {
        if let Some(nodes) = self.nodes.take() {
            nodes.stop().await;
        }
        if let Some(apiserver) = self.apiserver.take() {
            apiserver.shutdown().await;
        }
    }

    /// Creates a pod from a revision's template, labelled with that revision.
    async fn create(&self, name: &str, revision: &Revision) -> Pod {
        let mut pod: Value = serde_json::to_value(&revision.template).unwrap();
        pod["apiVersion"] = json!("v1");
        pod["kind"] = json!("Pod");
        pod["metadata"]["name"] = json!(name);
        pod["metadata"]["labels"]["controller-revision-hash"] = json!(revision.name);
        pod["spec"]["readinessGates"] = json!([{"conditionType": IN_PLACE_UPDATE_READY}]);
        let pod: Pod = serde_json::from_value(pod).unwrap();
        self.pods.create(&PostParams::default(), &pod).await.unwrap()
    }

    /// Plays the controller: refresh until `done` holds for the pod read afterwards. Returns
    /// that pod and the refresh statuses seen (consecutive repeats folded).
    async fn drive(
        &self,
        name: &str,
        what: &str,
        done: impl Fn(&Pod, &RefreshResult) -> bool,
    ) -> (Pod, Vec<RefreshStatus>) {
        let started = Instant::now();
        let mut seen: Vec<RefreshStatus> = Vec::new();
        loop {
            let pod = self.pods.get(name).await.unwrap();
            let result = self.engine.refresh(&pod).await.unwrap();
            if seen.last() != Some(&result.status) {
                seen.push(result.status.clone());
            }
            let after = self.pods.get(name).await.unwrap();
            if done(&after, &result) {
                return (after, seen);
            }
            assert!(started.elapsed() < TIMEOUT, "{name}: timed out waiting for {what}; saw {seen:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits for the pod to be Ready with the gate condition True (the controller refreshing).
    async fn ready(&self, name: &str) -> Pod {
        self.drive(name, "ready", |pod, _| is_ready(pod)).await.0
    }
}

fn revision(name: &str, template: Value) -> Revision {
    Revision {
        name: name.into(),
        template: serde_json::from_value::<PodTemplateSpec>(template).unwrap(),
        volume_claim_templates_hash: None,
    }
}

fn condition(pod: &Pod, type_: &str) -> Option<String> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    conditions.iter().find(|c| c.type_ == type_).map(|c| c.status.clone())
}

fn is_ready(pod: &Pod) -> bool {
    condition(pod, "Ready").as_deref() == Some("True")
        && condition(pod, IN_PLACE_UPDATE_READY).as_deref() == Some("True")
}

fn status<'a>(pod: &'a Pod, container: &str) -> &'a ContainerStatus {
    pod.status
        .as_ref()
        .unwrap()
        .container_statuses
        .as_ref()
        .unwrap()
        .iter()
        .find(|s| s.name == container)
        .unwrap()
}

fn image<'a>(pod: &'a Pod, container: &str) -> &'a str {
    pod.spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .find(|c| c.name == container)
        .unwrap()
        .image
        .as_deref()
        .unwrap()
}

fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.annotations.as_ref()?.get(key).map(String::as_str)
}

fn single(image: &str) -> Value {
    json!({"metadata": {"labels": {"app": "shop"}}, "spec": {"containers": [{"name": "main", "image": image}]}})
}

fn updating_options() -> UpdateOptions {
    UpdateOptions {
        extra_labels: [("lifecycle.apps.kruise.io/state".to_string(), "Updating".to_string())].into(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_update_keeps_the_pod_and_restarts_the_container() {
    let env = Env::start().await;
    let (old, new) =
        (revision("shop-aaaaa", single("nginx:1.25")), revision("shop-bbbbb", single("nginx:1.26")));
    env.create("shop-0", &old).await;
    let before = env.ready("shop-0").await;
    // Kruise Rollout's label on the pod must survive the update.
    let foreign = json!({"metadata": {"labels": {"rollouts.kruise.io/stable-revision": "aaaaa"}}});
    env.pods.patch("shop-0", &PatchParams::default(), &Patch::Strategic(&foreign)).await.unwrap();
    let before_status = status(&before, "main").clone();

    assert!(env.engine.can_update_in_place(&old, &new, &UpdateOptions::default()));
    let result = env.engine.update(&before, &old, &new, &updating_options()).await.unwrap();
    assert!(result.in_place);
    assert_eq!(result.batch, ["main"]);
    assert_eq!(result.requeue_after, None);

    // Right after the update: NotReady, new revision, new image in the spec, state written.
    let updating = env.pods.get("shop-0").await.unwrap();
    assert_eq!(condition(&updating, IN_PLACE_UPDATE_READY).as_deref(), Some("False"));
    assert_eq!(condition(&updating, "Ready").as_deref(), Some("False"));
    assert_eq!(label(&updating, "controller-revision-hash"), Some("shop-bbbbb"));
    assert_eq!(label(&updating, "pod-template-hash"), Some("bbbbb"));
    assert_eq!(label(&updating, "lifecycle.apps.kruise.io/state"), Some("Updating"));
    assert_eq!(label(&updating, "rollouts.kruise.io/stable-revision"), Some("aaaaa"));
    assert_eq!(image(&updating, "main"), "nginx:1.26");
    let state = update_state(&updating).unwrap().unwrap();
    assert_eq!(state.revision, "shop-bbbbb");
    assert_eq!(
        state.last_container_statuses["main"].image_id.as_deref(),
        Some(before_status.image_id.as_str())
    );

    // Calling update again (a stale cache) changes nothing.
    let again = env.engine.update(&before, &old, &new, &updating_options()).await.unwrap();
    assert!(again.in_place);
    let unchanged = env.pods.get("shop-0").await.unwrap();
    let state_key = kruise_crds::common::IN_PLACE_UPDATE_STATE_KEY;
    assert_eq!(annotation(&unchanged, state_key), annotation(&updating, state_key));
    let gate_condition = |pod: &Pod| {
        let conditions = pod.status.as_ref().unwrap().conditions.clone().unwrap();
        conditions.into_iter().find(|c| c.type_ == IN_PLACE_UPDATE_READY)
    };
    assert_eq!(gate_condition(&unchanged), gate_condition(&updating));

    let (after, seen) = env.drive("shop-0", "the update to finish", |pod, _| is_ready(pod)).await;
    assert!(seen.contains(&RefreshStatus::MarkedReady), "{seen:?}");
    assert_eq!(after.metadata.uid, before.metadata.uid, "same pod");
    let after_status = status(&after, "main");
    assert_eq!(after_status.restart_count, before_status.restart_count + 1);
    assert_ne!(after_status.image_id, before_status.image_id);
    assert_ne!(after_status.container_id, before_status.container_id);
    assert_eq!(after_status.image, "nginx:1.26");
    assert_eq!(label(&after, "rollouts.kruise.io/stable-revision"), Some("aaaaa"));
    assert_eq!(env.engine.refresh(&after).await.unwrap().status, RefreshStatus::Idle);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_when_the_template_changes_otherwise() {
    let env = Env::start().await;
    let old = revision("shop-aaaaa", single("nginx:1.25"));
    let mut changed = single("nginx:1.26");
    changed["spec"]["containers"][0]["env"] = json!([{"name": "MODE", "value": "fast"}]);
    let new = revision("shop-ccccc", changed);
    let pod = env.create("shop-1", &old).await;
    assert!(!env.engine.can_update_in_place(&old, &new, &UpdateOptions::default()));
    let result = env.engine.update(&pod, &old, &new, &UpdateOptions::default()).await.unwrap();
    assert!(!result.in_place);
    let untouched = env.pods.get("shop-1").await.unwrap();
    assert_eq!(image(&untouched, "main"), "nginx:1.25");
    assert_eq!(label(&untouched, "controller-revision-hash"), Some("shop-aaaaa"));
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grace_period_delays_the_image_patch() {
    let env = Env::start().await;
    let (old, new) =
        (revision("shop-aaaaa", single("nginx:1.25")), revision("shop-bbbbb", single("nginx:1.26")));
    env.create("shop-0", &old).await;
    let before = env.ready("shop-0").await;

    let options = UpdateOptions { grace_period_seconds: 2, ..updating_options() };
    let started = Instant::now();
    let result = env.engine.update(&before, &old, &new, &options).await.unwrap();
    assert!(result.in_place);
    assert_eq!(result.requeue_after, Some(Duration::from_secs(2)));
    assert!(result.batch.is_empty());

    let parked = env.pods.get("shop-0").await.unwrap();
    assert_eq!(image(&parked, "main"), "nginx:1.25", "the spec waits for the grace period");
    assert_eq!(condition(&parked, IN_PLACE_UPDATE_READY).as_deref(), Some("False"));
    assert_eq!(label(&parked, "controller-revision-hash"), Some("shop-bbbbb"));
    let grace: Value = serde_json::from_str(annotation(&parked, IN_PLACE_UPDATE_GRACE_KEY).unwrap()).unwrap();
    assert_eq!(
        grace,
        json!({"revision": "shop-bbbbb", "containerImages": {"main": "nginx:1.26"}, "graceSeconds": 2})
    );

    let waiting = env.engine.refresh(&parked).await.unwrap();
    assert_eq!(waiting.status, RefreshStatus::InGrace);
    assert!(waiting.requeue_after.is_some_and(|d| d <= Duration::from_secs(2) && d > Duration::ZERO));

    let (after, seen) = env
        .drive("shop-0", "the grace period to pass", |pod, r| {
            matches!(r.status, RefreshStatus::GraceApplied(_)) || image(pod, "main") == "nginx:1.26"
        })
        .await;
    // The state's start time has whole seconds (as upstream's metav1.Time), so the wait is
    // between grace - 1s and grace.
    assert!(started.elapsed() >= Duration::from_secs(1), "applied after {:?}", started.elapsed());
    assert_eq!(seen.first(), Some(&RefreshStatus::InGrace));
    assert!(annotation(&after, IN_PLACE_UPDATE_GRACE_KEY).is_none());

    let (done, _) = env.drive("shop-0", "the update to finish", |pod, _| is_ready(pod)).await;
    assert_eq!(status(&done, "main").restart_count, 1);
    assert_eq!(done.metadata.uid, before.metadata.uid);
    env.stop().await;
}

fn sized(cpu_request: &str, cpu_limit: &str, cpu_policy: &str) -> Value {
    json!({"metadata": {"labels": {"app": "sized"}}, "spec": {"containers": [{
        "name": "main", "image": "nginx:1.25",
        "resources": {"requests": {"cpu": cpu_request, "memory": "128Mi"}, "limits": {"cpu": cpu_limit, "memory": "256Mi"}},
        "resizePolicy": [{"resourceName": "cpu", "restartPolicy": cpu_policy},
                         {"resourceName": "memory", "restartPolicy": "NotRequired"}]
    }]}})
}

fn cpu_request(pod: &Pod) -> Option<String> {
    let resources = status(pod, "main").resources.as_ref()?;
    resources.requests.as_ref()?.get("cpu").map(|q| q.0.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_resize_in_place() {
    let env = Env::start().await;

    // cpu may change without a restart: the pod stays Ready throughout.
    let (old, new) = (
        revision("sized-aaaaa", sized("100m", "200m", "NotRequired")),
        revision("sized-bbbbb", sized("150m", "300m", "NotRequired")),
    );
    env.create("sized-0", &old).await;
    let before = env.ready("sized-0").await;
    let result = env.engine.update(&before, &old, &new, &updating_options()).await.unwrap();
    assert!(result.in_place);
    let resized = env.pods.get("sized-0").await.unwrap();
    assert_eq!(
        condition(&resized, IN_PLACE_UPDATE_READY).as_deref(),
        Some("True"),
        "no need to leave endpoints"
    );
    assert_eq!(image(&resized, "main"), "nginx:1.25");
    assert_eq!(update_state(&resized).unwrap().unwrap().update_resources, Some(true));
    let (after, seen) = env
        .drive("sized-0", "the resize", |pod, r| {
            r.status == RefreshStatus::Idle && cpu_request(pod).as_deref() == Some("150m")
        })
        .await;
    assert!(!seen.contains(&RefreshStatus::MarkedReady), "{seen:?}");
    assert_eq!(status(&after, "main").restart_count, 0);
    assert_eq!(status(&after, "main").container_id, status(&before, "main").container_id);
    assert!(is_ready(&after));

    // cpu with resizePolicy RestartContainer: NotReady first, the container restarts.
    let (old, new) = (
        revision("sized-ccccc", sized("100m", "200m", "RestartContainer")),
        revision("sized-ddddd", sized("150m", "300m", "RestartContainer")),
    );
    env.create("sized-1", &old).await;
    let before = env.ready("sized-1").await;
    env.engine.update(&before, &old, &new, &updating_options()).await.unwrap();
    let restarting = env.pods.get("sized-1").await.unwrap();
    assert_eq!(condition(&restarting, IN_PLACE_UPDATE_READY).as_deref(), Some("False"));
    let (after, seen) = env.drive("sized-1", "the resize with restart", |pod, _| is_ready(pod)).await;
    assert!(seen.contains(&RefreshStatus::MarkedReady), "{seen:?}");
    assert_eq!(status(&after, "main").restart_count, 1);
    assert_eq!(cpu_request(&after).as_deref(), Some("150m"));
    assert_eq!(after.metadata.uid, before.metadata.uid);
    env.stop().await;
}

fn prioritized(sidecar: &str, main: &str) -> Value {
    let barrier = |priority: i32| {
        json!({"name": "KRUISE_CONTAINER_BARRIER",
               "valueFrom": {"configMapKeyRef": {"name": "duo-0-barrier", "key": format!("p_{priority}")}}})
    };
    json!({"metadata": {"labels": {"app": "duo"}}, "spec": {"containers": [
        {"name": "main", "image": main, "env": [barrier(0)]},
        {"name": "sidecar", "image": sidecar, "env": [barrier(1000)]}
    ]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_priorities_update_in_two_batches() {
    let env = Env::start().await;
    // The barrier ConfigMap the launch-priority controller would keep (all keys released).
    let barrier: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "duo-0-barrier"}, "data": {"p_0": "true", "p_1000": "true"}
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(env.client.clone(), "default")
        .create(&PostParams::default(), &barrier)
        .await
        .unwrap();
    let (old, new) = (
        revision("duo-aaaaa", prioritized("redis:7.0", "nginx:1.25")),
        revision("duo-bbbbb", prioritized("redis:7.2", "nginx:1.26")),
    );
    env.create("duo-0", &old).await;
    let before = env.ready("duo-0").await;

    let result = env.engine.update(&before, &old, &new, &updating_options()).await.unwrap();
    assert_eq!(result.batch, ["sidecar"], "the higher priority goes first");
    let first = env.pods.get("duo-0").await.unwrap();
    assert_eq!(image(&first, "sidecar"), "redis:7.2");
    assert_eq!(image(&first, "main"), "nginx:1.25");
    let state = update_state(&first).unwrap().unwrap();
    assert_eq!(
        state.next_container_images,
        Some(BTreeMap::from([("main".to_string(), "nginx:1.26".to_string())]))
    );

    // The second batch starts only once the sidecar runs its new image and is Ready.
    let (second, seen) = env
        .drive("duo-0", "the second batch", |_, r| matches!(r.status, RefreshStatus::NextBatchStarted(_)))
        .await;
    assert_eq!(seen.last(), Some(&RefreshStatus::NextBatchStarted(vec!["main".into()])), "{seen:?}");
    let sidecar = status(&second, "sidecar");
    assert!(sidecar.ready && sidecar.restart_count == 1 && sidecar.image == "redis:7.2", "{sidecar:?}");
    assert_eq!(image(&second, "main"), "nginx:1.26");

    let (after, _) = env.drive("duo-0", "both batches", |pod, _| is_ready(pod)).await;
    assert_eq!(status(&after, "main").restart_count, 1);
    assert_eq!(status(&after, "sidecar").restart_count, 1);
    let state = update_state(&after).unwrap().unwrap();
    let batches: Vec<Vec<String>> =
        state.container_batches_record.unwrap().into_iter().map(|b| b.containers).collect();
    assert_eq!(batches, [vec!["sidecar".to_string()], vec!["main".to_string()]]);
    assert_eq!(after.metadata.uid, before.metadata.uid);
    env.stop().await;
}

fn tiered(tier: &str) -> Value {
    json!({"metadata": {"labels": {"app": "tiered", "tier": tier}}, "spec": {"containers": [{
        "name": "main", "image": "nginx:1.25",
        "env": [{"name": "TIER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['tier']"}}}]
    }]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_from_metadata_waits_for_the_node_daemon() {
    let env = Env::start().await;
    let (old, new) = (revision("tiered-aaaaa", tiered("web")), revision("tiered-bbbbb", tiered("api")));
    env.create("tiered-0", &old).await;
    let before = env.ready("tiered-0").await;

    let result = env.engine.update(&before, &old, &new, &updating_options()).await.unwrap();
    assert!(result.in_place);
    let updating = env.pods.get("tiered-0").await.unwrap();
    assert_eq!(label(&updating, "tier"), Some("api"));
    assert_eq!(update_state(&updating).unwrap().unwrap().update_env_from_metadata, Some(true));

    // No node daemon reports the container's env yet: the update does not complete.
    let waiting = env.engine.refresh(&updating).await.unwrap();
    assert_eq!(waiting.status, RefreshStatus::WaitingForContainers(NotCompleted::RuntimeMetaMissing));
    assert!(waiting.requeue_after.is_some());

    // What the daemon would write once it restarted the container with the new value.
    let container = &updating.spec.as_ref().unwrap().containers[0];
    let labels = updating.metadata.labels.clone().unwrap();
    let meta = json!({"containers": [{
        "name": "main",
        "containerID": status(&updating, "main").container_id,
        "restartCount": status(&updating, "main").restart_count,
        "hashes": {
            "plainHash": gohash::kubelet_container_hash(container),
            "extractedEnvFromMetadataHash": gohash::expected_env_from_metadata_hash(container, &labels, &BTreeMap::new())
        }
    }]});
    let patch = json!({"metadata": {"annotations": {RUNTIME_CONTAINERS_META_KEY: meta.to_string()}}});
    env.pods.patch("tiered-0", &PatchParams::default(), &Patch::Strategic(&patch)).await.unwrap();
    let (after, seen) = env.drive("tiered-0", "the daemon's report", |pod, _| is_ready(pod)).await;
    assert!(seen.contains(&RefreshStatus::MarkedReady), "{seen:?}");
    assert_eq!(after.metadata.uid, before.metadata.uid);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_do_not_lose_updates() {
    let env = Env::start().await;
    let (old, new) =
        (revision("shop-aaaaa", single("nginx:1.25")), revision("shop-bbbbb", single("nginx:1.26")));
    env.create("shop-0", &old).await;
    let before = env.ready("shop-0").await;

    // Another writer keeps patching its own label while the engine works.
    let pods = env.pods.clone();
    let writer = tokio::spawn(async move {
        for n in 0..200 {
            let patch = json!({"metadata": {"labels": {"example.com/counter": n.to_string()}}});
            pods.patch("shop-0", &PatchParams::default(), &Patch::Strategic(&patch)).await.unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    // The engine retries a conflicting write a few times, then returns the conflict and its
    // controller requeues the pod; against a writer this busy (a patch every few ms, for
    // seconds) that can happen, so the test requeues as the controller would.
    let mut current = before;
    let mut requeues = 0;
    let result = loop {
        match env.engine.update(&current, &old, &new, &updating_options()).await {
            Ok(result) => break result,
            Err(error) if error.is_conflict() && requeues < 20 => {
                requeues += 1;
                current = env.pods.get("shop-0").await.unwrap();
            }
            Err(error) => panic!("update failed after {requeues} requeues: {error}"),
        }
    };
    assert!(result.in_place);
    let (after, _) = env.drive("shop-0", "the update to finish", |pod, _| is_ready(pod)).await;
    writer.await.unwrap();
    let after = env.pods.get(after.metadata.name.as_deref().unwrap()).await.unwrap();
    assert_eq!(label(&after, "example.com/counter"), Some("199"));
    assert_eq!(label(&after, "controller-revision-hash"), Some("shop-bbbbb"));
    assert_eq!(image(&after, "main"), "nginx:1.26");
    assert_eq!(status(&after, "main").restart_count, 1);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gates_can_turn_vertical_scaling_off() {
    let env = Env::start().await;
    let engine =
        env.engine.clone().with_gates(InPlaceGates { vertical_scaling: false, ..Default::default() });
    let (old, new) = (
        revision("sized-aaaaa", sized("100m", "200m", "NotRequired")),
        revision("sized-bbbbb", sized("150m", "300m", "NotRequired")),
    );
    assert!(!engine.can_update_in_place(&old, &new, &UpdateOptions::default()));
    assert!(env.engine.can_update_in_place(&old, &new, &UpdateOptions::default()));
    env.stop().await;
}
