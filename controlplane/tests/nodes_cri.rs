//! The CRI server of a simulated node as kruise-daemon sees it: real `runtime.v1` gRPC clients
//! over a unix socket, against a runtime the (simulated) kubelet fills directly.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use k8s_cri::v1 as cri;
use k8s_cri::v1::image_service_client::ImageServiceClient;
use k8s_cri::v1::runtime_service_client::RuntimeServiceClient;
use kruise_controlplane::nodes::cri::{CriError, connect_cri, serve_cri};
use kruise_controlplane::nodes::runtime::{
    Container, ContainerState, ExecResult, NodeRuntime, PullTiming, RuntimeEvent,
};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::Code;
use tonic::transport::Channel;

struct Node {
    runtime: NodeRuntime,
    socket: PathBuf,
    runtime_client: RuntimeServiceClient<Channel>,
    image_client: ImageServiceClient<Channel>,
    shutdown: Option<oneshot::Sender<()>>,
    server: JoinHandle<Result<(), CriError>>,
    _dir: tempfile::TempDir,
}

async fn connect(socket: &Path) -> Channel {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match connect_cri(socket).await {
            Ok(channel) => return channel,
            Err(error) if Instant::now() > deadline => panic!("CRI socket never came up: {error}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

async fn start(timing: PullTiming) -> Node {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("run/containerd/containerd.sock");
    let runtime = NodeRuntime::new("node-1", timing);
    let (tx, rx) = oneshot::channel::<()>();
    let server = tokio::spawn({
        let runtime = runtime.clone();
        let socket = socket.clone();
        async move {
            serve_cri(runtime, &socket, async {
                let _ = rx.await;
            })
            .await
        }
    });
    let channel = connect(&socket).await;
    Node {
        runtime,
        socket,
        runtime_client: RuntimeServiceClient::new(channel.clone()),
        image_client: ImageServiceClient::new(channel),
        shutdown: Some(tx),
        server,
        _dir: dir,
    }
}

fn fast() -> PullTiming {
    PullTiming { first_pull: Duration::from_millis(1), cached_pull: Duration::ZERO }
}

fn spec(image: &str) -> Option<cri::ImageSpec> {
    Some(cri::ImageSpec { image: image.into(), ..Default::default() })
}

fn pull_request(image: &str, auth: Option<cri::AuthConfig>) -> cri::PullImageRequest {
    cri::PullImageRequest { image: spec(image), auth, sandbox_config: None }
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn selector(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Starts a pod's container the way the simulated kubelet does: pull, sandbox, container with the
/// kubelet's labels and annotations.
async fn kubelet_start(
    runtime: &NodeRuntime,
    namespace: &str,
    pod: &str,
    uid: &str,
    container: &str,
    image: &str,
    env: &[(&str, &str)],
) -> Container {
    let image = runtime.pull(image, None, false).await.unwrap();
    let sandbox = runtime.ensure_sandbox(namespace, pod, uid, "10.1.0.5", &map(&[("app", pod)]));
    let labels = map(&[
        ("io.kubernetes.pod.name", pod),
        ("io.kubernetes.pod.namespace", namespace),
        ("io.kubernetes.pod.uid", uid),
        ("io.kubernetes.container.name", container),
    ]);
    let annotations =
        map(&[("io.kubernetes.container.hash", "1a2b3c"), ("io.kubernetes.container.restartCount", "0")]);
    runtime.start_container(&sandbox.id, container, &image, 0, labels, annotations, map(env))
}

#[tokio::test]
async fn version_and_status_report_a_ready_runtime() {
    let mut node = start(fast()).await;
    let version = node.runtime_client.version(cri::VersionRequest::default()).await.unwrap().into_inner();
    assert_eq!(version.runtime_name, "kruise-sim");
    assert_eq!(version.runtime_api_version, "v1");
    assert!(!version.runtime_version.is_empty());
    let status = node.runtime_client.status(cri::StatusRequest::default()).await.unwrap().into_inner();
    let conditions: Vec<(String, bool)> =
        status.status.unwrap().conditions.into_iter().map(|c| (c.r#type, c.status)).collect();
    assert_eq!(conditions, vec![("RuntimeReady".to_string(), true), ("NetworkReady".to_string(), true)]);
    let config = node.runtime_client.runtime_config(cri::RuntimeConfigRequest::default()).await.unwrap();
    assert_eq!(config.into_inner().linux.unwrap().cgroup_driver, cri::CgroupDriver::Systemd as i32);
}

#[tokio::test]
async fn pulls_take_the_simulated_time_once_and_show_everywhere() {
    let mut node =
        start(PullTiming { first_pull: Duration::from_millis(300), cached_pull: Duration::ZERO }).await;

    let absent = node
        .image_client
        .image_status(cri::ImageStatusRequest { image: spec("nginx:1.25"), verbose: false })
        .await
        .unwrap();
    assert_eq!(absent.into_inner().image, None, "absent image: no error, no image (containerd)");

    let started = Instant::now();
    let pulled = node.image_client.pull_image(pull_request("nginx:1.25", None)).await.unwrap().into_inner();
    assert!(started.elapsed() >= Duration::from_millis(300), "first pull takes the pull time");
    let again = Instant::now();
    let repulled = node.image_client.pull_image(pull_request("nginx:1.25", None)).await.unwrap().into_inner();
    assert!(again.elapsed() < Duration::from_millis(250), "second pull is cached: {:?}", again.elapsed());
    assert!(pulled.image_ref.starts_with("sha256:"), "{}", pulled.image_ref);
    assert_eq!(pulled.image_ref, repulled.image_ref);

    assert!(node.runtime.has_image("nginx:1.25"));
    assert!(node.runtime.has_image("docker.io/library/nginx:1.25"));

    node.image_client.pull_image(pull_request("busybox", None)).await.unwrap();
    let all =
        node.image_client.list_images(cri::ListImagesRequest::default()).await.unwrap().into_inner().images;
    let mut tags: Vec<String> = all.iter().flat_map(|i| i.repo_tags.clone()).collect();
    tags.sort();
    assert_eq!(tags, vec!["docker.io/library/busybox:latest", "docker.io/library/nginx:1.25"]);

    let filtered = node
        .image_client
        .list_images(cri::ListImagesRequest { filter: Some(cri::ImageFilter { image: spec("nginx:1.25") }) })
        .await
        .unwrap()
        .into_inner()
        .images;
    assert_eq!(filtered.len(), 1);
    let image = &filtered[0];
    assert_eq!(image.id, pulled.image_ref);
    assert_eq!(image.repo_digests, vec![format!("docker.io/library/nginx@{}", pulled.image_ref)]);
    assert!(image.size > 0);

    for query in ["nginx:1.25", "docker.io/library/nginx:1.25", pulled.image_ref.as_str()] {
        let status = node
            .image_client
            .image_status(cri::ImageStatusRequest { image: spec(query), verbose: false })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(status.image.map(|i| i.id), Some(pulled.image_ref.clone()), "{query}");
    }

    let fs = node.image_client.image_fs_info(cri::ImageFsInfoRequest {}).await.unwrap().into_inner();
    assert_eq!(fs.image_filesystems.len(), 1);
    let used = fs.image_filesystems[0].used_bytes.as_ref().unwrap().value;
    assert_eq!(used, node.runtime.images().iter().map(|i| i.size).sum::<u64>());
    assert!(fs.image_filesystems[0].fs_id.as_ref().is_some_and(|id| !id.mountpoint.is_empty()));
}

#[tokio::test]
async fn pulls_from_the_failing_registry_fail_like_containerd() {
    let mut node = start(fast()).await;
    let error = node.image_client.pull_image(pull_request("invalid.example/app:1", None)).await.unwrap_err();
    assert_eq!(error.code(), Code::Unknown);
    assert!(error.message().contains("failed to pull and unpack image"), "{}", error.message());
    assert!(!node.runtime.has_image("invalid.example/app:1"));

    let missing = node.image_client.pull_image(cri::PullImageRequest::default()).await.unwrap_err();
    assert_eq!(missing.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn private_registries_need_the_right_credentials() {
    let mut node = start(fast()).await;
    node.runtime.require_credentials("private.example.com", "robot", "s3cret");
    let image = "private.example.com/team/app:v1";
    let auth = |username: &str, password: &str| {
        Some(cri::AuthConfig { username: username.into(), password: password.into(), ..Default::default() })
    };

    for attempt in [None, auth("robot", "wrong")] {
        let error = node.image_client.pull_image(pull_request(image, attempt.clone())).await.unwrap_err();
        assert!(matches!(error.code(), Code::Unknown | Code::Unauthenticated), "{error:?}");
        assert!(error.message().contains("unauthorized"), "{}", error.message());
    }
    assert!(!node.runtime.has_image(image));

    // Credentials for another registry are not sent to this one.
    let elsewhere = Some(cri::AuthConfig {
        username: "robot".into(),
        password: "s3cret".into(),
        server_address: "other.example.com".into(),
        ..Default::default()
    });
    assert!(node.image_client.pull_image(pull_request(image, elsewhere)).await.is_err());

    node.image_client.pull_image(pull_request(image, auth("robot", "s3cret"))).await.unwrap();
    assert!(node.runtime.has_image(image));

    // The docker-config form: base64 "user:password" in `auth`, as kruise-daemon sends from a
    // pull secret.
    let encoded = base64::engine::general_purpose::STANDARD.encode("robot:s3cret");
    let docker_config = Some(cri::AuthConfig {
        auth: encoded,
        server_address: "private.example.com".into(),
        ..Default::default()
    });
    node.image_client
        .pull_image(pull_request("private.example.com/team/other:v2", docker_config))
        .await
        .unwrap();
    assert!(node.runtime.has_image("private.example.com/team/other:v2"));

    let garbage = Some(cri::AuthConfig { auth: "%%%".into(), ..Default::default() });
    let error = node.image_client.pull_image(pull_request(image, garbage)).await.unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn removing_images_is_idempotent() {
    let mut node = start(fast()).await;
    node.image_client.pull_image(pull_request("nginx:1.25", None)).await.unwrap();
    node.image_client.pull_image(pull_request("redis:7", None)).await.unwrap();
    let redis_id = node.runtime.image("redis:7").unwrap().id;

    node.image_client.remove_image(cri::RemoveImageRequest { image: spec("nginx:1.25") }).await.unwrap();
    assert!(!node.runtime.has_image("nginx:1.25"));
    node.image_client.remove_image(cri::RemoveImageRequest { image: spec("nginx:1.25") }).await.unwrap();
    node.image_client.remove_image(cri::RemoveImageRequest { image: spec("never-pulled:1") }).await.unwrap();

    node.image_client.remove_image(cri::RemoveImageRequest { image: spec(&redis_id) }).await.unwrap();
    assert!(!node.runtime.has_image("redis:7"), "removed by id");
    assert!(
        node.image_client
            .list_images(cri::ListImagesRequest::default())
            .await
            .unwrap()
            .into_inner()
            .images
            .is_empty()
    );
}

#[tokio::test]
async fn kubelet_containers_are_found_by_pod_labels() {
    let mut node = start(fast()).await;
    let web_main = kubelet_start(&node.runtime, "ns", "web-0", "uid-web", "main", "nginx:1.25", &[]).await;
    let web_sidecar = kubelet_start(&node.runtime, "ns", "web-0", "uid-web", "sidecar", "busybox", &[]).await;
    let db = kubelet_start(&node.runtime, "other", "db-0", "uid-db", "main", "redis:7", &[]).await;
    node.runtime.stop_container(&db.id, None);

    let list = |filter: cri::ContainerFilter| {
        let mut client = node.runtime_client.clone();
        async move {
            let containers = client
                .list_containers(cri::ListContainersRequest { filter: Some(filter) })
                .await
                .unwrap()
                .into_inner()
                .containers;
            let mut ids: Vec<String> = containers.into_iter().map(|c| c.id).collect();
            ids.sort();
            ids
        }
    };
    let sorted = |ids: &[&str]| {
        let mut ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        ids.sort();
        ids
    };

    let by_uid = cri::ContainerFilter {
        label_selector: selector(&[("io.kubernetes.pod.uid", "uid-web")]),
        ..Default::default()
    };
    assert_eq!(list(by_uid).await, sorted(&[&web_main.id, &web_sidecar.id]));
    let by_name = cri::ContainerFilter {
        label_selector: selector(&[
            ("io.kubernetes.pod.name", "web-0"),
            ("io.kubernetes.pod.namespace", "ns"),
            ("io.kubernetes.container.name", "sidecar"),
        ]),
        ..Default::default()
    };
    assert_eq!(list(by_name).await, sorted(&[&web_sidecar.id]));
    let by_sandbox = cri::ContainerFilter { pod_sandbox_id: db.sandbox_id.clone(), ..Default::default() };
    assert_eq!(list(by_sandbox).await, sorted(&[&db.id]));
    let running = cri::ContainerFilter {
        state: Some(cri::ContainerStateValue { state: cri::ContainerState::ContainerRunning as i32 }),
        ..Default::default()
    };
    assert_eq!(list(running).await, sorted(&[&web_main.id, &web_sidecar.id]));
    let by_id = cri::ContainerFilter { id: web_main.id[..12].to_string(), ..Default::default() };
    assert_eq!(list(by_id).await, sorted(&[&web_main.id]));
    assert_eq!(list(cri::ContainerFilter::default()).await.len(), 3);

    let listed = node
        .runtime_client
        .list_containers(cri::ListContainersRequest { filter: None })
        .await
        .unwrap()
        .into_inner()
        .containers;
    let entry = listed.iter().find(|c| c.id == web_main.id).unwrap();
    assert_eq!(entry.metadata.as_ref().unwrap().name, "main");
    assert_eq!(entry.pod_sandbox_id, web_main.sandbox_id);
    assert_eq!(entry.state, cri::ContainerState::ContainerRunning as i32);
    assert_eq!(entry.image.as_ref().unwrap().image, "docker.io/library/nginx:1.25");

    // The sandbox is found by the pod uid label the kubelet puts on it.
    let sandboxes = node
        .runtime_client
        .list_pod_sandbox(cri::ListPodSandboxRequest {
            filter: Some(cri::PodSandboxFilter {
                label_selector: selector(&[("io.kubernetes.pod.uid", "uid-web")]),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner()
        .items;
    assert_eq!(sandboxes.len(), 1);
    assert_eq!(sandboxes[0].id, web_main.sandbox_id);
    assert_eq!(sandboxes[0].state, cri::PodSandboxState::SandboxReady as i32);
    let metadata = sandboxes[0].metadata.as_ref().unwrap();
    assert_eq!(
        (metadata.name.as_str(), metadata.namespace.as_str(), metadata.uid.as_str()),
        ("web-0", "ns", "uid-web")
    );

    let status = node
        .runtime_client
        .pod_sandbox_status(cri::PodSandboxStatusRequest {
            pod_sandbox_id: web_main.sandbox_id.clone(),
            verbose: false,
        })
        .await
        .unwrap()
        .into_inner()
        .status
        .unwrap();
    assert_eq!(status.network.unwrap().ip, "10.1.0.5");
    assert_eq!(status.labels.get("app").map(String::as_str), Some("web-0"));
    let missing = node
        .runtime_client
        .pod_sandbox_status(cri::PodSandboxStatusRequest { pod_sandbox_id: "nope".into(), verbose: false })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
}

#[tokio::test]
async fn container_status_reports_what_the_daemon_reads() {
    let mut node = start(fast()).await;
    let container = kubelet_start(&node.runtime, "ns", "web-0", "uid-web", "main", "nginx:1.25", &[]).await;
    let status = node
        .runtime_client
        .container_status(cri::ContainerStatusRequest { container_id: container.id.clone(), verbose: true })
        .await
        .unwrap()
        .into_inner()
        .status
        .unwrap();
    assert_eq!(status.id, container.id);
    assert_eq!(status.metadata, Some(cri::ContainerMetadata { name: "main".into(), attempt: 0 }));
    assert_eq!(status.state, cri::ContainerState::ContainerRunning as i32);
    assert_eq!(status.created_at, container.created_at);
    assert_eq!(status.started_at, container.started_at);
    assert!(
        status.started_at > 1_600_000_000_000_000_000,
        "nanoseconds since the epoch: {}",
        status.started_at
    );
    assert_eq!((status.finished_at, status.exit_code, status.reason.as_str()), (0, 0, ""));
    assert_eq!(status.image.unwrap().image, "docker.io/library/nginx:1.25");
    assert_eq!(status.image_ref, format!("docker.io/library/nginx@{}", container.image_id));
    assert_eq!(status.image_id, container.image_id);
    assert_eq!(status.labels.get("io.kubernetes.pod.uid").map(String::as_str), Some("uid-web"));
    assert_eq!(status.labels.get("io.kubernetes.container.name").map(String::as_str), Some("main"));
    assert_eq!(status.annotations.get("io.kubernetes.container.hash").map(String::as_str), Some("1a2b3c"));

    node.runtime.exit_container(&container.id, 0, "Completed");
    let exited = node
        .runtime_client
        .container_status(cri::ContainerStatusRequest { container_id: container.id.clone(), verbose: false })
        .await
        .unwrap()
        .into_inner()
        .status
        .unwrap();
    assert_eq!(exited.state, cri::ContainerState::ContainerExited as i32);
    assert_eq!((exited.exit_code, exited.reason.as_str()), (0, "Completed"));
    assert!(exited.finished_at >= exited.started_at);

    let missing = node
        .runtime_client
        .container_status(cri::ContainerStatusRequest { container_id: "nope".into(), verbose: false })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
}

#[tokio::test]
async fn stop_container_exits_it_and_tells_the_kubelet() {
    let mut node = start(fast()).await;
    let container = kubelet_start(&node.runtime, "ns", "web-0", "uid-web", "main", "nginx:1.25", &[]).await;
    let mut events = node.runtime.subscribe();

    let started = Instant::now();
    node.runtime_client
        .stop_container(cri::StopContainerRequest { container_id: container.id.clone(), timeout: 30 })
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(30), "exits within the grace period");
    let stopped = node.runtime.container(&container.id).unwrap();
    assert_eq!(stopped.state, ContainerState::Exited);
    assert!(stopped.finished_at > 0);
    let event = tokio::time::timeout(Duration::from_secs(5), events.recv()).await.unwrap().unwrap();
    assert_eq!(event, RuntimeEvent::ContainerStopped { id: container.id.clone() });

    let status = node
        .runtime_client
        .container_status(cri::ContainerStatusRequest { container_id: container.id.clone(), verbose: false })
        .await
        .unwrap()
        .into_inner()
        .status
        .unwrap();
    assert_eq!(status.state, cri::ContainerState::ContainerExited as i32);

    // Stopping again succeeds and does not make the kubelet restart it twice.
    node.runtime_client
        .stop_container(cri::StopContainerRequest { container_id: container.id.clone(), timeout: 0 })
        .await
        .unwrap();
    assert!(events.try_recv().is_err(), "no second ContainerStopped event");

    let unknown = node
        .runtime_client
        .stop_container(cri::StopContainerRequest { container_id: "nope".into(), timeout: 1 })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);

    node.runtime_client
        .remove_container(cri::RemoveContainerRequest { container_id: container.id.clone() })
        .await
        .unwrap();
    assert!(node.runtime.container(&container.id).is_none());
    node.runtime_client
        .remove_container(cri::RemoveContainerRequest { container_id: container.id.clone() })
        .await
        .unwrap();
}

#[tokio::test]
async fn exec_sync_runs_scripted_commands_and_prints_env() {
    let mut node = start(fast()).await;
    let container = kubelet_start(
        &node.runtime,
        "ns",
        "web-0",
        "uid-web",
        "main",
        "nginx:1.25",
        &[("POD_NAME", "web-0"), ("TIER", "front")],
    )
    .await;
    node.runtime.script_exec(
        "main",
        "cat /tmp/ready",
        Some(ExecResult { exit_code: 0, stdout: "ready\n".into(), stderr: String::new() }),
    );
    node.runtime.script_exec(
        "main",
        "check-db",
        Some(ExecResult { exit_code: 3, stdout: String::new(), stderr: "db down\n".into() }),
    );
    let exec = |cmd: &[&str]| {
        let mut client = node.runtime_client.clone();
        let request = cri::ExecSyncRequest {
            container_id: container.id.clone(),
            cmd: cmd.iter().map(|s| s.to_string()).collect(),
            timeout: 5,
        };
        async move { client.exec_sync(request).await }
    };

    let ready = exec(&["cat", "/tmp/ready"]).await.unwrap().into_inner();
    assert_eq!(
        (ready.exit_code, ready.stdout.as_slice(), ready.stderr.as_slice()),
        (0, &b"ready\n"[..], &b""[..])
    );
    let failing = exec(&["check-db"]).await.unwrap().into_inner();
    assert_eq!((failing.exit_code, String::from_utf8(failing.stderr).unwrap().as_str()), (3, "db down\n"));
    let env = exec(&["env"]).await.unwrap().into_inner();
    assert_eq!(String::from_utf8(env.stdout).unwrap(), "POD_NAME=web-0\nTIER=front\n");
    assert_eq!(exec(&["sh", "-c", "exit 7"]).await.unwrap().into_inner().exit_code, 7);
    let missing = exec(&["sh", "-c", "failed /"]).await.unwrap().into_inner();
    assert_eq!((missing.exit_code, missing.stderr.as_slice()), (127, &b"sh: failed: not found\n"[..]));
    assert_eq!(exec(&["true"]).await.unwrap().into_inner().exit_code, 0);
    assert_eq!(exec(&[]).await.unwrap_err().code(), Code::InvalidArgument);

    // `sleep` takes its time, cut at the request's timeout as containerd does.
    let started = Instant::now();
    assert_eq!(exec(&["sh", "-c", "sleep 1"]).await.unwrap().into_inner().exit_code, 0);
    assert!(started.elapsed() >= Duration::from_secs(1), "{:?}", started.elapsed());
    let mut client = node.runtime_client.clone();
    let started = Instant::now();
    let cut = client
        .exec_sync(cri::ExecSyncRequest {
            container_id: container.id.clone(),
            cmd: vec!["sleep".into(), "30".into()],
            timeout: 1,
        })
        .await
        .unwrap_err();
    assert_eq!(cut.code(), Code::DeadlineExceeded, "{cut:?}");
    assert!(cut.message().contains("timeout 1s exceeded"), "{}", cut.message());
    assert!(started.elapsed() < Duration::from_secs(5));

    let unknown = node
        .runtime_client
        .exec_sync(cri::ExecSyncRequest { container_id: "nope".into(), cmd: vec!["env".into()], timeout: 1 })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);
}

#[tokio::test]
async fn unimplemented_methods_say_so() {
    let mut node = start(fast()).await;
    let client = &mut node.runtime_client;
    let errors = [
        client.run_pod_sandbox(cri::RunPodSandboxRequest::default()).await.unwrap_err(),
        client.create_container(cri::CreateContainerRequest::default()).await.unwrap_err(),
        client.start_container(cri::StartContainerRequest::default()).await.unwrap_err(),
        client.exec(cri::ExecRequest::default()).await.unwrap_err(),
        client.container_stats(cri::ContainerStatsRequest::default()).await.unwrap_err(),
        client.get_container_events(cri::GetEventsRequest::default()).await.unwrap_err(),
    ];
    for error in errors {
        assert_eq!(error.code(), Code::Unimplemented, "{error:?}");
        assert!(error.message().contains("not implemented"), "{}", error.message());
    }
}

#[tokio::test]
async fn serve_cri_replaces_a_stale_socket_and_cleans_up_on_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("cri.sock");
    std::fs::write(&socket, b"stale").unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let server = tokio::spawn({
        let socket = socket.clone();
        async move {
            serve_cri(NodeRuntime::new("n", fast()), &socket, async {
                let _ = rx.await;
            })
            .await
        }
    });
    let mut client = RuntimeServiceClient::new(connect(&socket).await);
    client.version(cri::VersionRequest::default()).await.unwrap();
    drop(client);
    tx.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), server).await.unwrap().unwrap().unwrap();
    assert!(!socket.exists(), "socket removed on shutdown");

    let nowhere = connect_cri(&dir.path().join("missing.sock")).await.unwrap_err();
    assert!(matches!(nowhere, CriError::Connect { .. }), "{nowhere}");
}

#[tokio::test]
async fn node_shutdown_stops_the_server() {
    let mut node = start(fast()).await;
    node.shutdown.take().unwrap().send(()).unwrap();
    drop(node.runtime_client);
    drop(node.image_client);
    tokio::time::timeout(Duration::from_secs(10), node.server).await.unwrap().unwrap().unwrap();
    assert!(!node.socket.exists());
}
