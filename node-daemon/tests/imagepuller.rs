//! The daemon end to end against the embedded API server and a simulated node's CRI socket:
//! every entry of a NodeImage is pulled through CRI PullImage and reported in its status (a
//! private registry with credentials from a pull secret, an unparsable reference reported
//! failed while the others pull, a failing registry retried exactly `backoffLimit` times, a
//! slow pull that does not hold the others back), and `/readyz` follows the runtime's socket.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use base64::Engine as _;
use k8s_openapi::{
    ByteString, api::core::v1::Secret,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    nodes::{
        cri::serve_cri,
        runtime::{NodeRuntime, PullTiming},
    },
};
use kruise_crds::apps::v1beta1::{ImagePullPhase, ImageTagStatus, NodeImage, NodeImageStatus};
use kruise_daemon::{DaemonConfig, DaemonStarted, run_daemon};
use kube::{
    Api, Client,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;
use tokio::{sync::oneshot, task::JoinHandle};

async fn cluster() -> (ApiServer, Client) {
    let server = ApiServer::start(ApiServerConfig::default()).await.unwrap();
    let client = Client::try_from(kube::Config::new(server.url.parse().unwrap())).unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in kruise_crds::crd::all_crds().unwrap() {
        let name = crd.metadata.name.clone().unwrap();
        let mut body = serde_json::to_value(&crd).unwrap();
        body["apiVersion"] = json!("apiextensions.k8s.io/v1");
        body["kind"] = json!("CustomResourceDefinition");
        crds.patch(&name, &PatchParams::apply("test").force(), &Patch::Apply(&body)).await.unwrap();
    }
    let node_images: Api<NodeImage> = Api::all(client.clone());
    let deadline = Instant::now() + Duration::from_secs(10);
    while node_images.list(&Default::default()).await.is_err() {
        assert!(Instant::now() < deadline, "NodeImages never served");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (server, client)
}

struct Cri {
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Cri {
    fn serve(runtime: NodeRuntime, socket: &Path) -> Self {
        let (stop, stopped) = oneshot::channel::<()>();
        let socket = socket.to_path_buf();
        let task = tokio::spawn(async move {
            serve_cri(runtime, &socket, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        Self { stop: Some(stop), task }
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

struct Daemon {
    started: DaemonStarted,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Daemon {
    async fn start(client: Client, node: &str, socket: &Path, max_workers: Option<usize>) -> Self {
        let mut config = DaemonConfig::new(node);
        config.runtime_endpoint = Some(socket.to_path_buf());
        config.health_addr = SocketAddr::from(([127, 0, 0, 1], 0));
        config.monitor.healthy_interval = Duration::from_millis(300);
        config.monitor.max_backoff = Duration::from_millis(500);
        config.image_puller.max_workers = max_workers;
        let (stop, stopped) = oneshot::channel::<()>();
        let (started_tx, started_rx) = oneshot::channel();
        let task = tokio::spawn(async move {
            run_daemon(
                client,
                config,
                async {
                    let _ = stopped.await;
                },
                move |started| {
                    let _ = started_tx.send(started);
                },
            )
            .await
            .unwrap();
        });
        let started = started_rx.await.unwrap();
        Self { started, stop, task }
    }

    async fn readyz(&self) -> (u16, String) {
        let response = reqwest::get(format!("http://{}/readyz", self.started.health_addr)).await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    async fn wait_readyz(&self, code: u16) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let (status, body) = self.readyz().await;
            if status == code {
                return body;
            }
            assert!(Instant::now() < deadline, "/readyz stayed {status} ({body}), wanted {code}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

fn tag_status<'a>(status: &'a NodeImageStatus, image: &str, tag: &str) -> Option<&'a ImageTagStatus> {
    status.image_statuses.get(image)?.tags.iter().find(|t| t.tag == tag)
}

async fn wait_status(
    api: &Api<NodeImage>,
    name: &str,
    what: &str,
    check: impl Fn(&NodeImageStatus) -> bool,
) -> NodeImageStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = api.get(name).await.unwrap().status.unwrap_or_default();
        if check(&status) {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; status: {}",
            serde_json::to_string_pretty(&status).unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn phase_is(status: &NodeImageStatus, image: &str, tag: &str, phase: ImagePullPhase) -> bool {
    tag_status(status, image, tag).is_some_and(|t| t.phase == phase)
}

fn socket_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("containerd.sock")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pulls_every_entry_and_reports_each_outcome() {
    let (server, client) = cluster().await;
    let dir = tempfile::tempdir().unwrap();
    let socket = socket_path(&dir);
    let runtime = NodeRuntime::new(
        "node-a",
        PullTiming { first_pull: Duration::from_millis(50), cached_pull: Duration::from_millis(5) },
    );
    runtime.require_credentials("private.example", "robot", "s3cret");
    let cri = Cri::serve(runtime.clone(), &socket);

    let auth = base64::engine::general_purpose::STANDARD.encode("robot:s3cret");
    let config = json!({"auths": {"private.example": {"auth": auth}}});
    let secret = Secret {
        metadata: kube::api::ObjectMeta { name: Some("registry".into()), ..Default::default() },
        type_: Some("kubernetes.io/dockerconfigjson".into()),
        data: Some(
            [(".dockerconfigjson".to_string(), ByteString(serde_json::to_vec(&config).unwrap()))].into(),
        ),
        ..Default::default()
    };
    Api::<Secret>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();

    let policy =
        |backoff: i32| json!({"timeoutSeconds": 10, "backoffLimit": backoff, "ttlSecondsAfterFinished": 300});
    let created = "2025-01-01T00:00:00Z";
    let node_image: NodeImage = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "NodeImage",
        "metadata": {"name": "node-a"},
        "spec": {"images": {
            "nginx": {"tags": [{"tag": "1.25", "createdAt": created, "pullPolicy": policy(3)}]},
            "private.example/team/app": {
                "pullSecrets": [{"namespace": "default", "name": "registry"}],
                "tags": [{"tag": "v1", "createdAt": created, "pullPolicy": policy(0)}]
            },
            "Bad_Image!!": {"tags": [{"tag": "v1", "createdAt": created, "pullPolicy": policy(3)}]},
            "invalid.example/app": {"tags": [{"tag": "v1", "createdAt": created, "pullPolicy": policy(1)}]},
            "registry.example/slow": {"tags": [{"tag": "v1-slow-pull-8s", "createdAt": created, "pullPolicy": policy(0)}]}
        }}
    }))
    .unwrap();
    let api: Api<NodeImage> = Api::all(client.clone());
    api.create(&PostParams::default(), &node_image).await.unwrap();

    let daemon = Daemon::start(client.clone(), "node-a", &socket, Some(2)).await;
    daemon.wait_readyz(200).await;

    // Everything but the slow pull finishes while the slow one still holds its slot.
    let status = wait_status(&api, "node-a", "every fast entry finished", |s| {
        phase_is(s, "nginx", "1.25", ImagePullPhase::Succeeded)
            && phase_is(s, "private.example/team/app", "v1", ImagePullPhase::Succeeded)
            && phase_is(s, "Bad_Image!!", "v1", ImagePullPhase::Failed)
            && phase_is(s, "invalid.example/app", "v1", ImagePullPhase::Failed)
    })
    .await;
    let slow = tag_status(&status, "registry.example/slow", "v1-slow-pull-8s").unwrap();
    assert!(slow.completion_time.is_none(), "the slow pull is still running: {slow:?}");

    let nginx = tag_status(&status, "nginx", "1.25").unwrap();
    assert_eq!(nginx.progress, 100);
    assert!(nginx.image_id.starts_with("nginx@sha256:"), "{nginx:?}");
    assert!(nginx.completion_time.is_some() && nginx.start_time.is_some());
    let bad = tag_status(&status, "Bad_Image!!", "v1").unwrap();
    assert_eq!(
        bad.message,
        "invalid image reference \"Bad_Image!!:v1\": repository name (library/Bad_Image!!) must be lowercase"
    );
    let unreachable = tag_status(&status, "invalid.example/app", "v1").unwrap();
    assert!(
        unreachable.message.starts_with("Failed to pull image reference \"invalid.example/app:v1\": rpc error: code = Unknown desc = failed to pull and unpack image"),
        "{}",
        unreachable.message
    );
    assert_eq!(daemon.started.metrics.pull_attempts(false), 2, "backoffLimit 1: two attempts, no more");
    assert!(runtime.has_image("nginx:1.25"));
    assert!(runtime.has_image("private.example/team/app:v1"), "pulled with the secret's credentials");

    let status = wait_status(&api, "node-a", "the slow pull", |s| {
        phase_is(s, "registry.example/slow", "v1-slow-pull-8s", ImagePullPhase::Succeeded)
    })
    .await;
    assert_eq!(
        (status.desired, status.succeeded, status.failed, status.pulling, status.waiting),
        (5, 3, 2, 0, 0)
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(daemon.started.metrics.pull_attempts(false), 2, "a failed tag is not retried afterwards");

    // A new version of a finished tag is pulled again; removing an image drops its status.
    let mut current = api.get("node-a").await.unwrap();
    let nginx = current.spec.images.get_mut("nginx").unwrap();
    nginx.tags[0].version = 1;
    nginx.tags[0].image_pull_policy = "Always".into();
    current.spec.images.remove("invalid.example/app");
    api.replace("node-a", &PostParams::default(), &current).await.unwrap();
    let status = wait_status(&api, "node-a", "the new version pulled", |s| {
        tag_status(s, "nginx", "1.25").is_some_and(|t| t.version == 1 && t.phase == ImagePullPhase::Succeeded)
            && !s.image_statuses.contains_key("invalid.example/app")
    })
    .await;
    assert_eq!(status.desired, 4);
    let metrics = reqwest::get(format!("http://{}/metrics", daemon.started.health_addr))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("kruise_daemon_cri_up 1"), "{metrics}");

    daemon.stop().await;
    cri.stop().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_follows_the_runtime_socket() {
    let (server, client) = cluster().await;
    let dir = tempfile::tempdir().unwrap();
    let socket = socket_path(&dir);
    let daemon = Daemon::start(client.clone(), "node-b", &socket, Some(2)).await;
    let body = daemon.wait_readyz(503).await;
    assert!(body.contains("cri"), "{body}");

    let runtime = NodeRuntime::new("node-b", PullTiming::default());
    let cri = Cri::serve(runtime.clone(), &socket);
    daemon.wait_readyz(200).await;

    cri.stop().await;
    let body = daemon.wait_readyz(503).await;
    assert!(body.contains("cri"), "{body}");
    let cri = Cri::serve(runtime, &socket);
    daemon.wait_readyz(200).await;

    daemon.stop().await;
    cri.stop().await;
    server.shutdown().await;
}

/// Upstream's daemon reports a pull on its next pass over the NodeImage (every 3-5 s while
/// pulls run), not the moment it ends: even an image already on the node shows Waiting or
/// Pulling first. Clients see that window (upstream's e2e checks a job's copied pull secret in
/// it), so every phase the status goes through is recorded here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_present_image_is_reported_waiting_before_succeeded() {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, watcher};

    let (server, client) = cluster().await;
    let dir = tempfile::tempdir().unwrap();
    let socket = socket_path(&dir);
    let runtime = NodeRuntime::new(
        "node-b",
        PullTiming { first_pull: Duration::from_millis(10), cached_pull: Duration::from_millis(5) },
    );
    runtime.pull("nginx:1.25", None, false).await.unwrap();
    let cri = Cri::serve(runtime.clone(), &socket);
    let node_image: NodeImage = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "NodeImage",
        "metadata": {"name": "node-b"},
        "spec": {"images": {}}
    }))
    .unwrap();
    let api: Api<NodeImage> = Api::all(client.clone());
    api.create(&PostParams::default(), &node_image).await.unwrap();
    let daemon = Daemon::start(client.clone(), "node-b", &socket, Some(2)).await;
    daemon.wait_readyz(200).await;

    let mut phases: Vec<ImagePullPhase> = Vec::new();
    let mut stream = watcher(api.clone(), watcher::Config::default().fields("metadata.name=node-b"))
        .applied_objects()
        .boxed();
    let patch = json!({"spec": {"images": {"nginx": {"tags": [
        {"tag": "1.25", "createdAt": "2025-01-01T00:00:00Z", "imagePullPolicy": "IfNotPresent",
         "pullPolicy": {"timeoutSeconds": 10, "backoffLimit": 3}}
    ]}}}});
    api.patch("node-b", &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while phases.last() != Some(&ImagePullPhase::Succeeded) {
        let next = tokio::time::timeout_at(deadline, stream.next()).await;
        let object = next.expect("the pull was never reported Succeeded").unwrap().unwrap();
        let status = object.status.unwrap_or_default();
        if let Some(tag) = tag_status(&status, "nginx", "1.25")
            && phases.last() != Some(&tag.phase)
        {
            phases.push(tag.phase.clone());
        }
    }
    assert!(phases.len() >= 2, "reported {phases:?}");
    assert!(
        matches!(phases[0], ImagePullPhase::Waiting | ImagePullPhase::Pulling),
        "first reported {phases:?}"
    );

    daemon.stop().await;
    cri.stop().await;
    server.shutdown().await;
}
