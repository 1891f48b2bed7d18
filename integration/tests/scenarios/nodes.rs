//! Simulated nodes through the Kubernetes API, run with the nodes in the test process and as
//! separate `kruise nodes` processes, on the embedded API server (with the simulated scheduler)
//! and on a real control plane (with kube-scheduler and kube-controller-manager): pods are
//! scheduled, run and become Ready; an image change restarts only that container; a CRI
//! StopContainer restarts it; readiness gates hold Ready back; resize changes status resources;
//! init containers and job-style containers; pull back-off; deletion takes the grace period;
//! unschedulable pods get their condition; NotReady, Unknown and deleted nodes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::BTreeSet,
    time::{Duration, Instant},
};

use k8s_cri::v1 as cri;
use k8s_openapi::api::{
    core::v1::{ContainerStatus, Node, Pod},
    events::v1::Event,
};
use kruise_controlplane::nodes::cri::connect_cri;
use kruise_integration::{
    Scene, Skip,
    nodes::{Hosting, SimNodes},
};
use kube::{
    Api, Client,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(45);

pub(crate) struct Pods {
    pub(crate) api: Api<Pod>,
    client: Client,
}

impl Pods {
    pub(crate) fn new(client: Client) -> Self {
        Self { api: Api::namespaced(client.clone(), "default"), client }
    }

    pub(crate) async fn create(&self, pod: Value) {
        let pod: Pod = serde_json::from_value(pod).unwrap();
        self.api.create(&PostParams::default(), &pod).await.unwrap();
    }

    pub(crate) async fn wait(&self, name: &str, what: &str, check: impl Fn(&Pod) -> bool) -> Pod {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok(Some(pod)) = self.api.get_opt(name).await
                && check(&pod)
            {
                return pod;
            }
            if Instant::now() > deadline {
                let current = self.api.get_opt(name).await.ok().flatten();
                panic!(
                    "timed out waiting for pod {name} to be {what}; now: {}",
                    serde_json::to_string_pretty(&current).unwrap()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn wait_gone(&self, name: &str, since: Instant, within: Duration) -> Duration {
        while self.api.get_opt(name).await.unwrap().is_some() {
            assert!(since.elapsed() < within, "pod {name} was never removed");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        since.elapsed()
    }

    /// The reasons of the events about a pod (once `wanted` are all there, or after a while).
    pub(crate) async fn event_reasons(&self, name: &str, wanted: &[&str]) -> BTreeSet<String> {
        let events: Api<Event> = Api::namespaced(self.client.clone(), "default");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let reasons: BTreeSet<String> = events
                .list(&ListParams::default())
                .await
                .unwrap()
                .items
                .into_iter()
                .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
                .filter_map(|e| e.reason)
                .collect();
            if wanted.iter().all(|w| reasons.contains(*w)) || Instant::now() > deadline {
                return reasons;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

pub(crate) fn condition(pod: &Pod, kind: &str) -> Option<(String, Option<String>, Option<String>)> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

pub(crate) fn is_ready(pod: &Pod) -> bool {
    condition(pod, "Ready").is_some_and(|(status, _, _)| status == "True")
}

pub(crate) fn find_container<'a>(pod: &'a Pod, name: &str) -> Option<&'a ContainerStatus> {
    pod.status.as_ref()?.container_statuses.as_ref()?.iter().find(|c| c.name == name)
}

pub(crate) fn container<'a>(pod: &'a Pod, name: &str) -> &'a ContainerStatus {
    find_container(pod, name).unwrap()
}

pub(crate) fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

pub(crate) fn simple_pod(name: &str, image: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"containers": [{"name": "main", "image": image}]}
    })
}

/// Conditions as `Type=Status(Reason)`, sorted, for the report.
pub(crate) fn condition_summary(pod: &Pod) -> Vec<String> {
    let mut summary: Vec<String> = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|c| format!("{}={}({})", c.type_, c.status, c.reason.unwrap_or_default()))
        .collect();
    summary.sort();
    summary
}

/// Pods run, restart in place, honour gates, resize, and exit like real containers.
pub async fn pods_run_on_simulated_nodes(scene: Scene, hosting: Hosting) -> Result<(), Skip> {
    let cluster = scene.cluster();
    let nodes = SimNodes::start(cluster, hosting, 2).await.map_err(|error| skip_or_fail(hosting, error))?;
    let pods = Pods::new(cluster.client());

    pods.create(simple_pod("web", "nginx:1.25")).await;
    pods.create(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "two"},
        "spec": {"containers": [
            {"name": "app", "image": "registry.example/app:v1"},
            {"name": "sidecar", "image": "registry.example/log:v1"}
        ]}
    }))
    .await;
    pods.create(simple_pod("victim", "redis:7")).await;
    pods.create(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated"},
        "spec": {
            "readinessGates": [{"conditionType": "example.com/load-balancer"}],
            "containers": [{"name": "main", "image": "nginx"}]
        }
    }))
    .await;
    pods.create(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sized"},
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
    pods.create(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "staged"},
        "spec": {
            "initContainers": [{"name": "setup", "image": "busybox"}],
            "containers": [{"name": "main", "image": "nginx"}]
        }
    }))
    .await;
    let job = |name: &str, code: &str, policy: &str| {
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"restartPolicy": policy, "containers": [{"name": "main", "image": "busybox", "env": [
                {"name": "KRUISE_SIM_EXIT_AFTER", "value": "300ms"},
                {"name": "KRUISE_SIM_EXIT_CODE", "value": code}
            ]}]}
        })
    };
    pods.create(job("fails", "3", "Never")).await;
    pods.create(job("succeeds", "0", "Never")).await;
    pods.create(job("restarts", "1", "Always")).await;
    pods.create(simple_pod("broken", "invalid.example/app:1")).await;

    // Scheduled, running, Ready, with the status fields a kubelet reports.
    let web = pods.wait("web", "ready", is_ready).await;
    let status = web.status.as_ref().unwrap();
    assert!(nodes.names().contains(web.spec.as_ref().unwrap().node_name.as_ref().unwrap()));
    assert!(status.pod_ip.as_deref().unwrap().starts_with("10.244."), "{:?}", status.pod_ip);
    assert!(status.host_ip.as_deref().unwrap().starts_with("172.18."));
    let main = container(&web, "main");
    assert!(main.container_id.as_deref().unwrap().starts_with("containerd://"));
    assert!(main.image_id.starts_with("docker.io/library/nginx@sha256:"), "{}", main.image_id);
    assert_eq!((main.restart_count, main.ready, main.started), (0, true, Some(true)));
    scene.observe("web/phase", phase(&web));
    scene.observe("web/conditions", condition_summary(&web));
    scene.observe(
        "web/events",
        pods.event_reasons("web", &["Scheduled", "Pulling", "Pulled", "Created", "Started"]).await,
    );

    // An image change restarts only that container; the pod keeps its UID, IP and node.
    let before = pods.wait("two", "ready", is_ready).await;
    let patch = json!({"spec": {"containers": [{"name": "app", "image": "registry.example/app:v2"}]}});
    pods.api.patch("two", &PatchParams::default(), &Patch::Strategic(&patch)).await.unwrap();
    let after = pods
        .wait("two", "restarted with v2", |p| {
            find_container(p, "app")
                .is_some_and(|c| c.image == "registry.example/app:v2" && c.restart_count == 1)
                && is_ready(p)
        })
        .await;
    assert_eq!(after.metadata.uid, before.metadata.uid);
    assert_eq!(after.status.as_ref().unwrap().pod_ip, before.status.as_ref().unwrap().pod_ip);
    assert_eq!(after.spec.as_ref().unwrap().node_name, before.spec.as_ref().unwrap().node_name);
    assert_ne!(container(&after, "app").container_id, container(&before, "app").container_id);
    assert_ne!(container(&after, "app").image_id, container(&before, "app").image_id);
    assert_eq!(container(&after, "sidecar").container_id, container(&before, "sidecar").container_id);
    assert_eq!(container(&after, "sidecar").restart_count, 0);
    scene.observe(
        "two/restartCounts",
        [container(&after, "app").restart_count, container(&after, "sidecar").restart_count],
    );

    // A container stopped through the CRI is restarted by the kubelet.
    let victim = pods.wait("victim", "ready", is_ready).await;
    let socket = nodes.cri_socket(victim.spec.as_ref().unwrap().node_name.as_ref().unwrap());
    let mut runtime =
        cri::runtime_service_client::RuntimeServiceClient::new(connect_cri(&socket).await.unwrap());
    let listed = runtime
        .list_containers(cri::ListContainersRequest {
            filter: Some(cri::ContainerFilter {
                label_selector: [("io.kubernetes.pod.uid".to_string(), victim.metadata.uid.clone().unwrap())]
                    .into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner()
        .containers;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        container(&victim, "main").container_id.clone().unwrap(),
        format!("containerd://{}", listed[0].id)
    );
    runtime
        .stop_container(cri::StopContainerRequest { container_id: listed[0].id.clone(), timeout: 0 })
        .await
        .unwrap();
    let restarted = pods
        .wait("victim", "restarted", |p| {
            find_container(p, "main").is_some_and(|c| c.restart_count == 1 && c.ready)
        })
        .await;
    assert_ne!(container(&restarted, "main").container_id, container(&victim, "main").container_id);
    scene.observe("victim/restartCount", container(&restarted, "main").restart_count);

    // A readiness gate holds Ready back until its condition is True, and the condition stays.
    let gated = pods
        .wait("gated", "containers ready", |p| condition(p, "ContainersReady").is_some_and(|c| c.0 == "True"))
        .await;
    let (status, reason, message) = condition(&gated, "Ready").unwrap();
    assert_eq!((status.as_str(), reason.as_deref()), ("False", Some("ReadinessGatesNotReady")));
    assert!(message.unwrap().contains("example.com/load-balancer"));
    let patch = json!({"status": {"conditions": [{"type": "example.com/load-balancer", "status": "True"}]}});
    pods.api.patch_status("gated", &PatchParams::default(), &Patch::Strategic(&patch)).await.unwrap();
    let gated = pods.wait("gated", "ready", is_ready).await;
    assert_eq!(condition(&gated, "example.com/load-balancer").unwrap().0, "True");
    scene.observe("gated/conditions", condition_summary(&gated));

    // Resize: cpu in place, memory with a restart (resizePolicy), too big is Infeasible.
    let sized = pods.wait("sized", "ready", is_ready).await;
    let cpu = |p: &Pod| {
        find_container(p, "main")
            .and_then(|c| c.resources.as_ref())
            .and_then(|r| r.requests.as_ref())
            .map(|r| r["cpu"].0.clone())
    };
    let resize = |cpu: &str, memory: &str, limit_cpu: &str, limit_memory: &str| {
        json!({"spec": {"containers": [{"name": "main", "resources": {
            "requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": limit_cpu, "memory": limit_memory}}}]}})
    };
    pods.api
        .patch_resize(
            "sized",
            &PatchParams::default(),
            &Patch::Strategic(&resize("150m", "128Mi", "300m", "256Mi")),
        )
        .await
        .unwrap();
    let resized = pods.wait("sized", "resized", |p| cpu(p).as_deref() == Some("150m")).await;
    assert_eq!(container(&resized, "main").restart_count, 0);
    assert_eq!(container(&resized, "main").container_id, container(&sized, "main").container_id);
    pods.api
        .patch_resize(
            "sized",
            &PatchParams::default(),
            &Patch::Strategic(&resize("150m", "256Mi", "300m", "512Mi")),
        )
        .await
        .unwrap();
    let restarted = pods
        .wait("sized", "restarted for memory", |p| {
            find_container(p, "main").is_some_and(|c| c.restart_count == 1) && is_ready(p)
        })
        .await;
    let limits = container(&restarted, "main").resources.clone().unwrap().limits.unwrap();
    assert_eq!(limits["memory"].0, "512Mi");
    pods.api
        .patch_resize(
            "sized",
            &PatchParams::default(),
            &Patch::Strategic(&resize("64", "256Mi", "64", "512Mi")),
        )
        .await
        .unwrap();
    let pending = pods.wait("sized", "resize pending", |p| condition(p, "PodResizePending").is_some()).await;
    assert_eq!(condition(&pending, "PodResizePending").unwrap().1.as_deref(), Some("Infeasible"));
    scene.observe("sized/resizePending", condition(&pending, "PodResizePending").map(|c| (c.0, c.1)));

    // Init containers complete before the main container starts.
    let staged = pods.wait("staged", "ready", is_ready).await;
    let init = &staged.status.as_ref().unwrap().init_container_statuses.as_ref().unwrap()[0];
    let terminated = init.state.clone().unwrap().terminated.unwrap();
    assert_eq!((terminated.exit_code, terminated.reason.as_deref()), (0, Some("Completed")));
    let main_started = container(&staged, "main").state.clone().unwrap().running.unwrap().started_at.unwrap();
    assert!(terminated.finished_at.unwrap().0 <= main_started.0);
    scene.observe("staged/conditions", condition_summary(&staged));

    // Job-style containers exit with their code; restartPolicy decides what follows.
    let failed = pods.wait("fails", "failed", |p| phase(p) == Some("Failed")).await;
    let exited = container(&failed, "main").state.clone().unwrap().terminated.unwrap();
    assert_eq!((exited.exit_code, exited.reason.as_deref()), (3, Some("Error")));
    let succeeded = pods.wait("succeeds", "succeeded", |p| phase(p) == Some("Succeeded")).await;
    let exited = container(&succeeded, "main").state.clone().unwrap().terminated.unwrap();
    assert_eq!((exited.exit_code, exited.reason.as_deref()), (0, Some("Completed")));
    let restarting = pods
        .wait("restarts", "restarted", |p| find_container(p, "main").is_some_and(|c| c.restart_count >= 1))
        .await;
    assert_eq!(phase(&restarting), Some("Running"));
    scene.observe("jobs/phases", [phase(&failed), phase(&succeeded), phase(&restarting)]);
    scene.observe("jobs/conditions", [condition_summary(&failed), condition_summary(&succeeded)]);

    // The failing registry: ErrImagePull, then ImagePullBackOff, and the pod stays Pending.
    let waiting =
        |p: &Pod| find_container(p, "main").and_then(|c| c.state.as_ref()?.waiting.as_ref()?.reason.clone());
    pods.wait("broken", "ErrImagePull", |p| waiting(p).as_deref() == Some("ErrImagePull")).await;
    let broken =
        pods.wait("broken", "ImagePullBackOff", |p| waiting(p).as_deref() == Some("ImagePullBackOff")).await;
    assert_eq!(phase(&broken), Some("Pending"));
    scene.observe("broken/phase", phase(&broken));

    nodes.shutdown().await;
    Ok(())
}

/// Graceful deletion, unschedulable pods, and taint eviction.
pub async fn deletion_and_scheduling(scene: Scene, hosting: Hosting) -> Result<(), Skip> {
    let cluster = scene.cluster();
    let nodes = SimNodes::start(cluster, hosting, 3).await.map_err(|error| skip_or_fail(hosting, error))?;
    let pods = Pods::new(cluster.client());
    let node_api: Api<Node> = Api::all(cluster.client());

    pods.create(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stubborn"},
        "spec": {
            "terminationGracePeriodSeconds": 2,
            "containers": [{"name": "main", "image": "nginx", "env": [{"name": "KRUISE_SIM_TERM_SECONDS", "value": "100"}]}]
        }
    }))
    .await;
    pods.create(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "draining"},
        "spec": {
            "terminationGracePeriodSeconds": 30,
            "containers": [{"name": "main", "image": "nginx", "lifecycle": {"preStop": {"sleep": {"seconds": 1}}}}]
        }
    }))
    .await;
    let mut nowhere = simple_pod("nowhere", "nginx");
    nowhere["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    pods.create(nowhere).await;

    pods.wait("stubborn", "ready", is_ready).await;
    pods.wait("draining", "ready", is_ready).await;
    let deleted = Instant::now();
    pods.api.delete("stubborn", &DeleteParams::default()).await.unwrap();
    pods.api.delete("draining", &DeleteParams::default()).await.unwrap();
    let marked = pods.api.get("stubborn").await.unwrap();
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(2));
    let (stubborn, draining) = tokio::join!(
        pods.wait_gone("stubborn", deleted, Duration::from_secs(30)),
        pods.wait_gone("draining", deleted, Duration::from_secs(30))
    );
    assert!(stubborn >= Duration::from_millis(1800), "killed after the 2 s grace period, took {stubborn:?}");
    assert!(draining >= Duration::from_millis(900), "preStop sleeps 1 s, took {draining:?}");
    assert!(draining < Duration::from_secs(10), "but not the whole 30 s grace period, took {draining:?}");

    // No node has the label: the scheduler says so in PodScheduled and an event.
    let nowhere = pods
        .wait("nowhere", "unschedulable", |p| condition(p, "PodScheduled").is_some_and(|c| c.0 == "False"))
        .await;
    let (_, reason, message) = condition(&nowhere, "PodScheduled").unwrap();
    assert_eq!(reason.as_deref(), Some("Unschedulable"));
    assert_eq!(
        message.as_deref(),
        Some(
            "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/3 nodes \
             are available: 3 Preemption is not helpful for scheduling."
        )
    );
    scene.observe("nowhere/PodScheduled", (reason, message));
    scene.observe("nowhere/events", pods.event_reasons("nowhere", &["FailedScheduling"]).await);
    let label = json!({"metadata": {"labels": {"disk": "ssd"}}});
    node_api.patch("sim-node-2", &PatchParams::default(), &Patch::Merge(&label)).await.unwrap();
    let placed = pods.wait("nowhere", "ready", is_ready).await;
    assert_eq!(placed.spec.unwrap().node_name.as_deref(), Some("sim-node-2"));

    // A pod that tolerates a not-ready node for 0 seconds is evicted when its node goes NotReady.
    let mut intolerant = simple_pod("intolerant", "nginx");
    intolerant["spec"]["nodeName"] = json!("sim-node-3");
    intolerant["spec"]["tolerations"] = json!([
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}
    ]);
    pods.create(intolerant).await;
    pods.wait("intolerant", "ready", is_ready).await;
    let down = json!({"metadata": {"annotations": {"sim.kruise.io/ready": "false"}}});
    node_api.patch("sim-node-3", &PatchParams::default(), &Patch::Merge(&down)).await.unwrap();
    let evicted = pods.wait("intolerant", "evicted", |p| p.metadata.deletion_timestamp.is_some()).await;
    let disruption = condition(&evicted, "DisruptionTarget").unwrap();
    assert_eq!((disruption.0.as_str(), disruption.1.as_deref()), ("True", Some("DeletionByTaintManager")));
    scene.observe("intolerant/DisruptionTarget", (disruption.0, disruption.1, disruption.2));

    nodes.shutdown().await;
    Ok(())
}

/// NotReady, Unknown and deleted nodes.
pub async fn node_loss(scene: Scene, hosting: Hosting) -> Result<(), Skip> {
    let cluster = scene.cluster();
    let mut nodes =
        SimNodes::start(cluster, hosting, 3).await.map_err(|error| skip_or_fail(hosting, error))?;
    let pods = Pods::new(cluster.client());
    let node_api: Api<Node> = Api::all(cluster.client());
    for (pod, node) in [("resident", "sim-node-1"), ("orphaned", "sim-node-2"), ("stranded", "sim-node-3")] {
        let mut manifest = simple_pod(pod, "nginx");
        manifest["spec"]["nodeName"] = json!(node);
        pods.create(manifest).await;
    }
    for pod in ["resident", "orphaned", "stranded"] {
        pods.wait(pod, "ready", is_ready).await;
    }
    // The deleted node goes first: the pod GC's quarantine of its pods (40 s) then runs while
    // the NotReady and Unknown phases do, not after them.
    node_api.delete("sim-node-3", &DeleteParams::default()).await.unwrap();
    let deleted_at = Instant::now();

    // NotReady: the kubelet reports Ready=False; the node is tainted and its pods are not ready.
    let down = json!({"metadata": {"annotations": {"sim.kruise.io/ready": "false"}}});
    node_api.patch("sim-node-1", &PatchParams::default(), &Patch::Merge(&down)).await.unwrap();
    let node = wait_node(&node_api, "sim-node-1", "NotReady and tainted", |node| {
        ready_status(node).as_deref() == Some("False")
            && has_taint(node, "node.kubernetes.io/not-ready", "NoExecute")
    })
    .await;
    scene.observe("notReady/taints", taint_summary(&node));
    let resident = pods.wait("resident", "not ready", |p| !is_ready(p)).await;
    assert_eq!(phase(&resident), Some("Running"));
    assert!(resident.metadata.deletion_timestamp.is_none(), "tolerates not-ready for 300 s");
    scene.observe("notReady/pod", (phase(&resident), condition(&resident, "Ready").map(|c| c.0)));
    let mut newcomer = simple_pod("newcomer", "nginx");
    newcomer["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["sim-node-1"]}]}]}}});
    pods.create(newcomer).await;
    let newcomer = pods
        .wait("newcomer", "unschedulable", |p| condition(p, "PodScheduled").is_some_and(|c| c.0 == "False"))
        .await;
    scene.observe("notReady/newcomer", condition(&newcomer, "PodScheduled"));
    let up = json!({"metadata": {"annotations": {"sim.kruise.io/ready": null}}});
    node_api.patch("sim-node-1", &PatchParams::default(), &Patch::Merge(&up)).await.unwrap();
    pods.wait("resident", "ready again", is_ready).await;
    pods.wait("newcomer", "scheduled once the node is back", is_ready).await;

    // Unknown: the kubelet stops; its lease expires; the node is unreachable, its pods not ready.
    assert!(nodes.kill_node("sim-node-2").await);
    let node = wait_node(&node_api, "sim-node-2", "Unknown", |node| {
        ready_status(node).as_deref() == Some("Unknown")
            && has_taint(node, "node.kubernetes.io/unreachable", "NoExecute")
    })
    .await;
    scene.observe("unknown/taints", taint_summary(&node));
    let orphaned = pods.wait("orphaned", "not ready", |p| !is_ready(p)).await;
    assert!(orphaned.metadata.deletion_timestamp.is_none(), "tolerates unreachable for 300 s");

    // A deleted node's pods are removed (after the pod GC's quarantine, which the phases above
    // ran inside of rather than after).
    let gone = pods.wait_gone("stranded", deleted_at, Duration::from_secs(120)).await;
    assert!(gone >= Duration::from_secs(1), "the pod GC removed the pod before its quarantine");
    scene.note(format!("pods of a deleted node removed after {:.1} s", gone.as_secs_f64()));

    nodes.shutdown().await;
    Ok(())
}

fn ready_status(node: &Node) -> Option<String> {
    node.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == "Ready").map(|c| c.status.clone())
}

fn has_taint(node: &Node, key: &str, effect: &str) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key == key && t.effect == effect))
}

fn taint_summary(node: &Node) -> Vec<String> {
    let mut taints: Vec<String> = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|t| format!("{}:{}", t.key, t.effect))
        .collect();
    taints.sort();
    taints
}

async fn wait_node(api: &Api<Node>, name: &str, what: &str, check: impl Fn(&Node) -> bool) -> Node {
    let deadline = Instant::now() + WAIT;
    loop {
        let node = api.get(name).await.unwrap();
        if check(&node) {
            return node;
        }
        assert!(Instant::now() < deadline, "node {name} never became {what}: {node:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Without a `kruise` binary the process-hosted runs are skipped, not failed.
fn skip_or_fail(hosting: Hosting, error: kruise_integration::HarnessError) -> Skip {
    match hosting {
        Hosting::Process if kruise_integration::nodes::kruise_binary().is_none() => Skip(error.to_string()),
        _ => panic!("simulated nodes did not start: {error}"),
    }
}
