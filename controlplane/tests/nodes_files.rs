//! What a simulated node does that tests see through the API: a readiness probe on a file that
//! `kubectl exec` creates, an HTTP probe of nginx's page that fails once the page is moved, a
//! pod rejected by the kubelet for a host port already taken, and busybox without a command
//! exiting at once (its default `sh` has no standard input) and restarting.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Event, Pod};
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    nodes::{Simulation, SimulationConfig},
};
use kube::{
    Api, Client, Config,
    api::{AttachParams, ListParams, PostParams},
};
use serde_json::json;
use tokio::io::AsyncReadExt;

async fn start() -> (ApiServer, Simulation, Client) {
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    let config = SimulationConfig { nodes: 1, ..Default::default() };
    let simulation = Simulation::start(client.clone(), &config).await.unwrap();
    (server, simulation, client)
}

async fn create(pods: &Api<Pod>, pod: serde_json::Value) {
    pods.create(&PostParams::default(), &serde_json::from_value(pod).unwrap()).await.unwrap();
}

async fn wait(pods: &Api<Pod>, name: &str, what: &str, check: impl Fn(&Pod) -> bool) -> Pod {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(pod) = pods.get(name).await
            && check(&pod)
        {
            return pod;
        }
        assert!(Instant::now() < deadline, "pod {name} never became {what}: {:?}", pods.get(name).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn ready(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.container_statuses.as_ref()).is_some_and(|c| c.iter().all(|c| c.ready))
}

fn running(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .is_some_and(|c| c.iter().all(|c| c.state.as_ref().is_some_and(|s| s.running.is_some())))
}

async fn exec(pods: &Api<Pod>, name: &str, script: &str) -> (String, String) {
    let mut process =
        pods.exec(name, ["sh", "-c", script], &AttachParams::default().stderr(false)).await.unwrap();
    let mut stdout = String::new();
    process.stdout().unwrap().read_to_string(&mut stdout).await.unwrap();
    let status = process.take_status().unwrap().await.unwrap();
    (stdout, status.status.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_follow_the_files_exec_changes() {
    let (server, simulation, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let probe = |handler: serde_json::Value| {
        let mut probe = json!({"periodSeconds": 1, "failureThreshold": 1});
        probe.as_object_mut().unwrap().extend(handler.as_object().unwrap().clone());
        probe
    };
    create(
        &pods,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "paused"}, "spec": {"containers": [{
            "name": "main", "image": "nginx:1.25",
            "readinessProbe": probe(json!({"exec": {"command": ["test", "-f", "/tmp/continue"]}}))
        }]}}),
    )
    .await;
    create(
        &pods,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [{
            "name": "main", "image": "nginx:1.25",
            "readinessProbe": probe(json!({"httpGet": {"path": "/index.html", "port": 80}}))
        }]}}),
    )
    .await;

    let paused = wait(&pods, "paused", "running", running).await;
    assert!(!ready(&paused), "the file is not there yet");
    let (_, status) = exec(&pods, "paused", "dd if=/dev/zero of=/tmp/continue bs=1 count=1").await;
    assert_eq!(status, "Success");
    wait(&pods, "paused", "ready", ready).await;
    let (hostname, _) = exec(&pods, "paused", "printf $(hostname)").await;
    assert_eq!(hostname, "paused");

    wait(&pods, "web", "ready", ready).await;
    let (moved, _) = exec(&pods, "web", "mv -v /usr/share/nginx/html/index.html /tmp/ || true").await;
    assert_eq!(moved, "'/usr/share/nginx/html/index.html' -> '/tmp/index.html'\n");
    wait(&pods, "web", "unready", |p| running(p) && !ready(p)).await;
    exec(&pods, "web", "mv -v /tmp/index.html /usr/share/nginx/html/ || true").await;
    wait(&pods, "web", "ready again", ready).await;

    simulation.stop().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubelet_rejects_a_taken_host_port_and_busybox_exits_without_stdin() {
    let (server, simulation, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let node = simulation.nodes[0].name.clone();
    let with_port = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
            "nodeName": node,
            "containers": [{"name": "main", "image": "nginx:1.25",
                "ports": [{"containerPort": 21017, "hostPort": 21017}]}]
        }})
    };
    create(&pods, with_port("holder")).await;
    wait(&pods, "holder", "running", running).await;
    create(&pods, with_port("late")).await;
    let late = wait(&pods, "late", "Failed", |p| {
        p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed")
    })
    .await;
    let status = late.status.unwrap();
    assert_eq!(status.reason.as_deref(), Some("NodePorts"));
    assert!(status.message.as_deref().unwrap_or_default().starts_with("Pod was rejected: "), "{status:?}");
    assert!(status.container_statuses.iter().flatten().all(|c| c.container_id.is_none()), "nothing ran");
    let events: Api<Event> = Api::namespaced(client, "default");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !events.list(&ListParams::default()).await.unwrap().items.iter().any(|e| {
        e.reason.as_deref() == Some("NodePorts") && e.involved_object.name.as_deref() == Some("late")
    }) {
        assert!(Instant::now() < deadline, "no NodePorts Event for the rejected pod");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    create(
        &pods,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "shell"},
               "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}),
    )
    .await;
    let restarted = wait(&pods, "shell", "restarted", |p| {
        p.status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|c| c.first())
            .is_some_and(|c| c.restart_count >= 1)
    })
    .await;
    let last = restarted.status.unwrap().container_statuses.unwrap()[0].last_state.clone().unwrap();
    assert_eq!(last.terminated.map(|t| (t.exit_code, t.reason)), Some((0, Some("Completed".into()))));

    simulation.stop().await;
    server.shutdown().await;
}
