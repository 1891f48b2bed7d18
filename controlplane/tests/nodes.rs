//! Simulated nodes seen through the Kubernetes API, as a user (or the Kruise controllers) sees
//! them: pods are scheduled, run and become Ready; an image change restarts only that
//! container; a CRI StopContainer restarts it; readiness gates hold Ready back; resize changes
//! status resources; deletion takes the grace period; NotReady nodes and their pods are reported;
//! unschedulable pods get their condition; job-style containers exit with their code.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_cri::v1 as cri;
use k8s_openapi::api::{
    core::v1::{Node, Pod},
    events::v1::Event,
};
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    controllers::node_lifecycle::NodeLifecycleConfig,
    nodes::{Simulation, SimulationConfig, cri::connect_cri},
};
use kube::{
    Api, Client, Config,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

struct Cluster {
    client: Client,
    simulation: Option<Simulation>,
    _server: ApiServer,
    dir: tempfile::TempDir,
}

async fn cluster(nodes: u32) -> Cluster {
    cluster_with(nodes, Duration::from_secs(40), Duration::from_secs(10)).await
}

/// A cluster whose nodes renew their lease every `heartbeat` and are declared Unknown after
/// `grace` without one.
async fn cluster_with(nodes: u32, grace: Duration, heartbeat: Duration) -> Cluster {
    let config = ApiServerConfig {
        node_lifecycle: NodeLifecycleConfig {
            monitor_grace: grace,
            orphan_quarantine: Duration::from_secs(1),
            period: Duration::from_millis(100),
        },
        ..Default::default()
    };
    let server = ApiServer::start(config).await.expect("server starts");
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut simulation =
        SimulationConfig { nodes, cri_dir: Some(dir.path().to_path_buf()), ..Default::default() };
    simulation.timing.heartbeat = heartbeat;
    let simulation = Simulation::start(client.clone(), &simulation).await.expect("nodes start");
    wait_nodes_ready(&client, nodes).await;
    Cluster { client, simulation: Some(simulation), _server: server, dir }
}

/// Waits until `count` nodes are Ready and schedulable (the not-ready taint removed), as a
/// cluster's setup would.
async fn wait_nodes_ready(client: &Client, count: u32) {
    let nodes: Api<Node> = Api::all(client.clone());
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let list = nodes.list(&ListParams::default()).await.unwrap();
        let ready = list
            .items
            .iter()
            .filter(|node| {
                let conditions = node.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
                let taints = node.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default();
                conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True")
                    && !taints.iter().any(|t| t.key.starts_with("node.kubernetes.io/"))
            })
            .count();
        if ready as u32 >= count {
            return;
        }
        assert!(Instant::now() < deadline, "nodes never became Ready");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

impl Cluster {
    fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.client.clone(), "default")
    }

    async fn create(&self, pod: Value) -> Pod {
        let pod: Pod = serde_json::from_value(pod).unwrap();
        self.pods().create(&PostParams::default(), &pod).await.unwrap()
    }

    /// Polls a pod until `check` holds (10 s), returning it.
    async fn wait_pod(&self, name: &str, what: &str, check: impl Fn(&Pod) -> bool) -> Pod {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(pod)) = self.pods().get_opt(name).await
                && check(&pod)
            {
                return pod;
            }
            if Instant::now() > deadline {
                let current = self.pods().get_opt(name).await.ok().flatten();
                panic!(
                    "timed out waiting for pod {name} to be {what}; now: {}",
                    serde_json::to_string_pretty(&current).unwrap()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until the pod is gone; returns when, measured from `since`.
    async fn wait_gone_since(&self, name: &str, since: Instant) -> Duration {
        let started = Instant::now();
        while self.pods().get_opt(name).await.unwrap().is_some() {
            assert!(started.elapsed() < Duration::from_secs(20), "pod {name} was never removed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        since.elapsed()
    }

    async fn wait_gone(&self, name: &str) -> Duration {
        self.wait_gone_since(name, Instant::now()).await
    }

    async fn events_for(&self, name: &str) -> Vec<(String, String)> {
        let events: Api<Event> = Api::namespaced(self.client.clone(), "default");
        let mut found = Vec::new();
        for event in events.list(&ListParams::default()).await.unwrap() {
            if event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name) {
                found.push((event.reason.unwrap_or_default(), event.note.unwrap_or_default()));
            }
        }
        found
    }
}

fn condition(pod: &Pod, kind: &str) -> Option<(String, Option<String>, Option<String>)> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

fn is_ready(pod: &Pod) -> bool {
    condition(pod, "Ready").is_some_and(|(status, _, _)| status == "True")
}

fn container<'a>(pod: &'a Pod, name: &str) -> &'a k8s_openapi::api::core::v1::ContainerStatus {
    find_container(pod, name).unwrap()
}

fn find_container<'a>(pod: &'a Pod, name: &str) -> Option<&'a k8s_openapi::api::core::v1::ContainerStatus> {
    pod.status.as_ref()?.container_statuses.as_ref()?.iter().find(|c| c.name == name)
}

fn simple_pod(name: &str, image: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"containers": [{"name": "main", "image": image}]}
    })
}

#[tokio::test]
async fn a_pod_is_scheduled_runs_and_becomes_ready() {
    let cluster = cluster(3).await;
    cluster.create(simple_pod("web", "nginx:1.25")).await;
    let pod = cluster.wait_pod("web", "ready", is_ready).await;
    let spec = pod.spec.as_ref().unwrap();
    let status = pod.status.as_ref().unwrap();
    assert!(spec.node_name.as_deref().unwrap().starts_with("sim-node-"));
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert!(status.pod_ip.as_deref().unwrap().starts_with("10.244."), "{:?}", status.pod_ip);
    assert!(status.host_ip.as_deref().unwrap().starts_with("172.18."));
    assert!(status.start_time.is_some());
    for kind in ["PodScheduled", "Initialized", "ContainersReady", "Ready", "PodReadyToStartContainers"] {
        assert_eq!(condition(&pod, kind).unwrap().0, "True", "{kind}");
    }
    let main = container(&pod, "main");
    assert!(main.container_id.as_deref().unwrap().starts_with("containerd://"));
    assert!(main.image_id.starts_with("docker.io/library/nginx@sha256:"), "{}", main.image_id);
    assert_eq!(main.image, "nginx:1.25");
    assert_eq!((main.restart_count, main.ready, main.started), (0, true, Some(true)));
    assert!(main.state.as_ref().unwrap().running.is_some());

    // The node is Ready, carries its zone, and no longer has the not-ready taint.
    let nodes: Api<Node> = Api::all(cluster.client.clone());
    let node = nodes.get(spec.node_name.as_deref().unwrap()).await.unwrap();
    let labels = node.metadata.labels.clone().unwrap();
    assert!(labels["topology.kubernetes.io/zone"].starts_with("zone-"));
    assert_eq!(labels["kubernetes.io/hostname"], node.metadata.name.clone().unwrap());
    let ready = node.status.unwrap().conditions.unwrap().into_iter().find(|c| c.type_ == "Ready").unwrap();
    assert_eq!(ready.status, "True");
    assert!(node.spec.unwrap().taints.unwrap_or_default().is_empty());

    // Events tell the story, as the scheduler and kubelet write them.
    let mut reasons: Vec<String> = Vec::new();
    for _ in 0..40 {
        reasons = cluster.events_for("web").await.into_iter().map(|(reason, _)| reason).collect();
        if ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
            .iter()
            .all(|r| reasons.iter().any(|x| x == r))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for reason in ["Scheduled", "Pulling", "Pulled", "Created", "Started"] {
        assert!(reasons.iter().any(|r| r == reason), "missing {reason} in {reasons:?}");
    }
}

#[tokio::test]
async fn an_image_change_restarts_only_that_container() {
    let cluster = cluster(2).await;
    cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "two"},
            "spec": {"containers": [
                {"name": "app", "image": "registry.example/app:v1"},
                {"name": "sidecar", "image": "registry.example/log:v1"}
            ]}
        }))
        .await;
    let before = cluster.wait_pod("two", "ready", is_ready).await;
    let patch = json!({"spec": {"containers": [{"name": "app", "image": "registry.example/app:v2"}]}});
    cluster.pods().patch("two", &PatchParams::default(), &Patch::Strategic(&patch)).await.unwrap();
    let after = cluster
        .wait_pod("two", "restarted with v2", |p| {
            let app = container(p, "app");
            app.image == "registry.example/app:v2" && app.restart_count == 1 && app.ready
        })
        .await;
    assert_eq!(after.metadata.uid, before.metadata.uid);
    let (b, a) = (before.status.as_ref().unwrap(), after.status.as_ref().unwrap());
    assert_eq!(a.pod_ip, b.pod_ip);
    assert_eq!(after.spec.as_ref().unwrap().node_name, before.spec.as_ref().unwrap().node_name);
    let (old_app, new_app) = (container(&before, "app"), container(&after, "app"));
    assert_ne!(new_app.container_id, old_app.container_id);
    assert_ne!(new_app.image_id, old_app.image_id);
    let last = new_app.last_state.as_ref().unwrap().terminated.as_ref().unwrap();
    assert_eq!(last.container_id, old_app.container_id);
    let (old_side, new_side) = (container(&before, "sidecar"), container(&after, "sidecar"));
    assert_eq!(new_side.container_id, old_side.container_id, "the other container keeps running");
    assert_eq!(new_side.restart_count, 0);
    assert!(is_ready(&after));
}

#[tokio::test]
async fn a_cri_stop_restarts_the_container() {
    let cluster = cluster(1).await;
    cluster.create(simple_pod("victim", "busybox:1.36")).await;
    let before = cluster.wait_pod("victim", "ready", is_ready).await;
    let node = before.spec.as_ref().unwrap().node_name.clone().unwrap();
    let socket = cluster.dir.path().join(format!("{node}.sock"));
    let channel = connect_cri(&socket).await.unwrap();
    let mut runtime = cri::runtime_service_client::RuntimeServiceClient::new(channel);
    let uid = before.metadata.uid.clone().unwrap();
    let listed = runtime
        .list_containers(cri::ListContainersRequest {
            filter: Some(cri::ContainerFilter {
                label_selector: [("io.kubernetes.pod.uid".to_string(), uid)].into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner()
        .containers;
    assert_eq!(listed.len(), 1);
    let old_id = format!("containerd://{}", listed[0].id);
    assert_eq!(container(&before, "main").container_id.as_deref(), Some(old_id.as_str()));
    runtime
        .stop_container(cri::StopContainerRequest { container_id: listed[0].id.clone(), timeout: 0 })
        .await
        .unwrap();
    let after = cluster
        .wait_pod("victim", "restarted", |p| {
            let main = container(p, "main");
            main.restart_count == 1 && main.ready
        })
        .await;
    assert_ne!(container(&after, "main").container_id.as_deref(), Some(old_id.as_str()));
    assert_eq!(after.metadata.uid, before.metadata.uid);
}

#[tokio::test]
async fn a_readiness_gated_pod_waits_for_its_condition() {
    let cluster = cluster(1).await;
    cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "gated"},
            "spec": {
                "readinessGates": [{"conditionType": "example.com/load-balancer"}],
                "containers": [{"name": "main", "image": "nginx"}]
            }
        }))
        .await;
    let pod = cluster
        .wait_pod("gated", "containers ready", |p| {
            condition(p, "ContainersReady").is_some_and(|c| c.0 == "True")
        })
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pod = cluster.pods().get("gated").await.unwrap_or(pod);
    let (status, reason, message) = condition(&pod, "Ready").unwrap();
    assert_eq!(status, "False");
    assert_eq!(reason.as_deref(), Some("ReadinessGatesNotReady"));
    assert!(message.unwrap().contains("example.com/load-balancer"));

    let patch = json!({"status": {"conditions": [{"type": "example.com/load-balancer", "status": "True"}]}});
    cluster.pods().patch_status("gated", &PatchParams::default(), &Patch::Strategic(&patch)).await.unwrap();
    let ready = cluster.wait_pod("gated", "ready", is_ready).await;
    assert_eq!(
        condition(&ready, "example.com/load-balancer").unwrap().0,
        "True",
        "the gate condition is kept"
    );
}

#[tokio::test]
async fn resize_changes_status_resources_and_restarts_where_asked() {
    let cluster = cluster(1).await;
    cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "sized"},
            "spec": {"containers": [{
                "name": "main", "image": "nginx",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "200m", "memory": "256Mi"}},
                "resizePolicy": [
                    {"resourceName": "cpu", "restartPolicy": "NotRequired"},
                    {"resourceName": "memory", "restartPolicy": "RestartContainer"}
                ]
            }]}
        }))
        .await;
    let before = cluster.wait_pod("sized", "ready", is_ready).await;
    let cpu = |p: &Pod| {
        container(p, "main").resources.as_ref().and_then(|r| r.requests.as_ref()).map(|r| r["cpu"].0.clone())
    };
    assert_eq!(cpu(&before).as_deref(), Some("100m"));
    let patch = json!({"spec": {"containers": [{"name": "main", "resources": {
        "requests": {"cpu": "150m", "memory": "128Mi"}, "limits": {"cpu": "300m", "memory": "256Mi"}}}]}});
    cluster.pods().patch_resize("sized", &PatchParams::default(), &Patch::Strategic(&patch)).await.unwrap();
    let resized = cluster.wait_pod("sized", "resized", |p| cpu(p).as_deref() == Some("150m")).await;
    assert_eq!(container(&resized, "main").restart_count, 0, "cpu resizes in place");
    assert_eq!(container(&resized, "main").container_id, container(&before, "main").container_id);
    assert_eq!(container(&resized, "main").allocated_resources.as_ref().unwrap()["cpu"].0, "150m");

    let patch = json!({"spec": {"containers": [{"name": "main", "resources": {
        "requests": {"cpu": "150m", "memory": "256Mi"}, "limits": {"cpu": "300m", "memory": "512Mi"}}}]}});
    cluster.pods().patch_resize("sized", &PatchParams::default(), &Patch::Strategic(&patch)).await.unwrap();
    let restarted = cluster
        .wait_pod("sized", "restarted for memory", |p| container(p, "main").restart_count == 1 && is_ready(p))
        .await;
    let memory = container(&restarted, "main").resources.as_ref().unwrap().limits.as_ref().unwrap()["memory"]
        .0
        .clone();
    assert_eq!(memory, "512Mi");
    assert!(condition(&restarted, "PodResizeInProgress").is_none(), "resize finished");

    let huge = json!({"spec": {"containers": [{"name": "main", "resources": {
        "requests": {"cpu": "64", "memory": "256Mi"}, "limits": {"cpu": "64", "memory": "512Mi"}}}]}});
    cluster.pods().patch_resize("sized", &PatchParams::default(), &Patch::Strategic(&huge)).await.unwrap();
    let pending =
        cluster.wait_pod("sized", "resize pending", |p| condition(p, "PodResizePending").is_some()).await;
    assert_eq!(condition(&pending, "PodResizePending").unwrap().1.as_deref(), Some("Infeasible"));
}

#[tokio::test]
async fn deletion_honours_the_grace_period_and_pre_stop() {
    let cluster = cluster(1).await;
    cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "stubborn"},
            "spec": {
                "terminationGracePeriodSeconds": 2,
                "containers": [{"name": "main", "image": "nginx", "env": [{"name": "KRUISE_SIM_TERM_SECONDS", "value": "100"}]}]
            }
        }))
        .await;
    cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "draining"},
            "spec": {
                "terminationGracePeriodSeconds": 30,
                "containers": [{"name": "main", "image": "nginx", "lifecycle": {"preStop": {"sleep": {"seconds": 1}}}}]
            }
        }))
        .await;
    cluster.wait_pod("stubborn", "ready", is_ready).await;
    cluster.wait_pod("draining", "ready", is_ready).await;

    let deleted = Instant::now();
    cluster.pods().delete("stubborn", &DeleteParams::default()).await.unwrap();
    cluster.pods().delete("draining", &DeleteParams::default()).await.unwrap();
    let marked = cluster.pods().get("stubborn").await.unwrap();
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(2));
    let (stubborn, draining) = tokio::join!(
        cluster.wait_gone_since("stubborn", deleted),
        cluster.wait_gone_since("draining", deleted)
    );
    assert!(stubborn >= Duration::from_millis(1800), "killed after the 2 s grace period, took {stubborn:?}");
    assert!(draining >= Duration::from_millis(900), "preStop sleeps 1 s, took {draining:?}");
    assert!(draining < Duration::from_secs(10), "but not the whole 30 s grace period, took {draining:?}");
}

#[tokio::test]
async fn a_not_ready_node_and_its_pods_are_reported() {
    let cluster = cluster(2).await;
    cluster.create(simple_pod("resident", "nginx")).await;
    let pod = cluster.wait_pod("resident", "ready", is_ready).await;
    let node_name = pod.spec.unwrap().node_name.unwrap();
    let nodes: Api<Node> = Api::all(cluster.client.clone());
    let down = json!({"metadata": {"annotations": {"sim.kruise.io/ready": "false"}}});
    nodes.patch(&node_name, &PatchParams::default(), &Patch::Merge(&down)).await.unwrap();

    let deadline = Instant::now() + Duration::from_secs(10);
    let node = loop {
        let node = nodes.get(&node_name).await.unwrap();
        let ready = node
            .status
            .as_ref()
            .unwrap()
            .conditions
            .as_ref()
            .unwrap()
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "False");
        let tainted = node
            .spec
            .as_ref()
            .unwrap()
            .taints
            .iter()
            .flatten()
            .any(|t| t.key == "node.kubernetes.io/not-ready");
        if ready && tainted {
            break node;
        }
        assert!(Instant::now() < deadline, "node never reported NotReady: {node:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let effects: Vec<String> = node.spec.unwrap().taints.unwrap().into_iter().map(|t| t.effect).collect();
    assert!(
        effects.contains(&"NoSchedule".to_string()) && effects.contains(&"NoExecute".to_string()),
        "{effects:?}"
    );
    let unready = cluster.wait_pod("resident", "not ready", |p| !is_ready(p)).await;
    assert_eq!(unready.status.unwrap().phase.as_deref(), Some("Running"), "still running, just not ready");

    // New pods avoid the node; the resident pod tolerates not-ready for 300 s and stays.
    cluster.create(simple_pod("newcomer", "nginx")).await;
    let newcomer = cluster.wait_pod("newcomer", "ready", is_ready).await;
    assert_ne!(newcomer.spec.unwrap().node_name.unwrap(), node_name);

    let up = json!({"metadata": {"annotations": {"sim.kruise.io/ready": null}}});
    nodes.patch(&node_name, &PatchParams::default(), &Patch::Merge(&up)).await.unwrap();
    cluster.wait_pod("resident", "ready again", is_ready).await;
}

#[tokio::test]
async fn pods_of_a_deleted_node_are_removed() {
    let cluster = cluster(1).await;
    cluster.create(simple_pod("stranded", "nginx")).await;
    let pod = cluster.wait_pod("stranded", "ready", is_ready).await;
    let nodes: Api<Node> = Api::all(cluster.client.clone());
    nodes.delete(&pod.spec.unwrap().node_name.unwrap(), &DeleteParams::default()).await.unwrap();
    cluster.wait_gone("stranded").await;
}

#[tokio::test]
async fn an_unschedulable_pod_gets_its_condition() {
    let cluster = cluster(3).await;
    let mut pod = simple_pod("nowhere", "nginx");
    pod["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    cluster.create(pod).await;
    let pod = cluster
        .wait_pod("nowhere", "unschedulable", |p| {
            condition(p, "PodScheduled").is_some_and(|c| c.0 == "False")
        })
        .await;
    let (_, reason, message) = condition(&pod, "PodScheduled").unwrap();
    assert_eq!(reason.as_deref(), Some("Unschedulable"));
    assert_eq!(
        message.as_deref(),
        Some(
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes \
             are available: 3 Preemption is not helpful for scheduling."
        )
    );
    assert_eq!(pod.status.unwrap().phase.as_deref(), Some("Pending"));
    let mut events = Vec::new();
    for _ in 0..40 {
        events = cluster.events_for("nowhere").await;
        if events.iter().any(|(reason, _)| reason == "FailedScheduling") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        events.iter().any(|(reason, note)| reason == "FailedScheduling" && note.contains("0/3 nodes")),
        "{events:?}"
    );

    // Labelling a node makes it fit.
    let nodes: Api<Node> = Api::all(cluster.client.clone());
    let label = json!({"metadata": {"labels": {"disk": "ssd"}}});
    nodes.patch("sim-node-2", &PatchParams::default(), &Patch::Merge(&label)).await.unwrap();
    let placed = cluster.wait_pod("nowhere", "ready", is_ready).await;
    assert_eq!(placed.spec.unwrap().node_name.as_deref(), Some("sim-node-2"));
}

#[tokio::test]
async fn job_style_containers_exit_with_their_code() {
    let cluster = cluster(1).await;
    let job = |name: &str, code: &str| {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox", "env": [
                {"name": "KRUISE_SIM_EXIT_AFTER", "value": "200ms"},
                {"name": "KRUISE_SIM_EXIT_CODE", "value": code}
            ]}]}
        })
    };
    cluster.create(job("fails", "3")).await;
    cluster.create(job("succeeds", "0")).await;
    let failed = cluster
        .wait_pod("fails", "failed", |p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed"))
        .await;
    let terminated = container(&failed, "main").state.clone().unwrap().terminated.unwrap();
    assert_eq!((terminated.exit_code, terminated.reason.as_deref()), (3, Some("Error")));
    let succeeded = cluster
        .wait_pod("succeeds", "succeeded", |p| {
            p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded")
        })
        .await;
    let terminated = container(&succeeded, "main").state.clone().unwrap().terminated.unwrap();
    assert_eq!((terminated.exit_code, terminated.reason.as_deref()), (0, Some("Completed")));

    // With restartPolicy Always the same container is restarted instead.
    let mut always = job("restarts", "1");
    always["spec"]["restartPolicy"] = json!("Always");
    cluster.create(always).await;
    let restarted = cluster
        .wait_pod("restarts", "restarted", |p| {
            find_container(p, "main").is_some_and(|c| c.restart_count >= 1)
        })
        .await;
    assert_eq!(restarted.status.unwrap().phase.as_deref(), Some("Running"));
}

#[tokio::test]
async fn images_from_the_failing_registry_back_off() {
    let cluster = cluster(1).await;
    cluster.create(simple_pod("broken", "invalid.example/app:1")).await;
    let waiting_reason = |p: &Pod| {
        p.status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|c| c.first())
            .and_then(|c| c.state.as_ref()?.waiting.as_ref()?.reason.clone())
    };
    cluster
        .wait_pod("broken", "ErrImagePull", |p| waiting_reason(p).as_deref() == Some("ErrImagePull"))
        .await;
    let backoff = cluster
        .wait_pod("broken", "ImagePullBackOff", |p| waiting_reason(p).as_deref() == Some("ImagePullBackOff"))
        .await;
    assert_eq!(backoff.status.unwrap().phase.as_deref(), Some("Pending"));
}

#[tokio::test]
async fn init_containers_run_first_and_complete() {
    let cluster = cluster(1).await;
    cluster
        .create(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "staged"},
            "spec": {
                "initContainers": [{"name": "setup", "image": "busybox"}],
                "containers": [{"name": "main", "image": "nginx"}]
            }
        }))
        .await;
    let pod = cluster.wait_pod("staged", "ready", is_ready).await;
    let init = &pod.status.as_ref().unwrap().init_container_statuses.as_ref().unwrap()[0];
    let terminated = init.state.clone().unwrap().terminated.unwrap();
    assert_eq!((terminated.exit_code, terminated.reason.as_deref()), (0, Some("Completed")));
    let main_started = container(&pod, "main").state.clone().unwrap().running.unwrap().started_at.unwrap();
    assert!(terminated.finished_at.unwrap().0 <= main_started.0, "init finished before main started");
}

#[tokio::test]
async fn stopping_the_simulation_leaves_the_api_alone() {
    let mut cluster = cluster(1).await;
    cluster.create(simple_pod("left", "nginx")).await;
    cluster.wait_pod("left", "ready", is_ready).await;
    cluster.simulation.take().unwrap().stop().await;
    assert!(cluster.pods().get_opt("left").await.unwrap().is_some());
}

#[tokio::test]
async fn a_node_whose_kubelet_stops_becomes_unknown() {
    let mut cluster = cluster_with(2, Duration::from_millis(1500), Duration::from_millis(200)).await;
    cluster.create(simple_pod("orphaned", "nginx")).await;
    let pod = cluster.wait_pod("orphaned", "ready", is_ready).await;
    let node_name = pod.spec.unwrap().node_name.unwrap();
    assert!(cluster.simulation.as_mut().unwrap().stop_node(&node_name).await);

    let nodes: Api<Node> = Api::all(cluster.client.clone());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let node = nodes.get(&node_name).await.unwrap();
        let ready =
            node.status.unwrap().conditions.unwrap().into_iter().find(|c| c.type_ == "Ready").unwrap();
        let taints = node.spec.unwrap().taints.unwrap_or_default();
        if ready.status == "Unknown"
            && taints.iter().any(|t| t.key == "node.kubernetes.io/unreachable" && t.effect == "NoExecute")
        {
            assert_eq!(ready.reason.as_deref(), Some("NodeStatusUnknown"));
            break;
        }
        assert!(Instant::now() < deadline, "node never became Unknown");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pod = cluster.wait_pod("orphaned", "not ready", |p| !is_ready(p)).await;
    assert!(pod.metadata.deletion_timestamp.is_none(), "pods tolerate an unreachable node for 300 s");
    let tolerations = pod.spec.unwrap().tolerations.unwrap();
    assert!(
        tolerations.iter().any(|t| t.key.as_deref() == Some("node.kubernetes.io/unreachable")
            && t.toleration_seconds == Some(300))
    );
}

#[tokio::test]
async fn pods_that_do_not_tolerate_a_not_ready_node_are_evicted() {
    let cluster = cluster(2).await;
    let mut pod = simple_pod("intolerant", "nginx");
    // Tolerating not-ready for 0 seconds means leaving at once.
    pod["spec"]["tolerations"] = json!([
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}
    ]);
    cluster.create(pod).await;
    let pod = cluster.wait_pod("intolerant", "ready", is_ready).await;
    let node_name = pod.spec.unwrap().node_name.unwrap();
    let nodes: Api<Node> = Api::all(cluster.client.clone());
    let down = json!({"metadata": {"annotations": {"sim.kruise.io/ready": "false"}}});
    nodes.patch(&node_name, &PatchParams::default(), &Patch::Merge(&down)).await.unwrap();
    let evicted =
        cluster.wait_pod("intolerant", "evicted", |p| p.metadata.deletion_timestamp.is_some()).await;
    let (status, reason, _) = condition(&evicted, "DisruptionTarget").unwrap();
    assert_eq!((status.as_str(), reason.as_deref()), ("True", Some("DeletionByTaintManager")));
}
