//! `kruise up` as a user runs it: a real kubectl with `DATA_DIR/kubeconfig` sees three Ready
//! nodes and runs a pod to Ready; one node daemon per node is ready and an ImagePullJob applied
//! with kubectl pulls on every node; `endpoints.json` names the bound API server and the service
//! API, whose admin token is in `DATA_DIR/api-token` (mode 0600, kept on resume); SIGTERM stops it
//! cleanly; running it again with the same data directory resumes with the pod still running
//! (same container, no restart). Skipped with a message when no kubectl is found
//! (`integration/tools/fetch-kubectl.sh` or `KRUISE_KUBECTL`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::Value;

fn kubectl_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("KRUISE_KUBECTL") {
        return Some(PathBuf::from(path));
    }
    let cached = PathBuf::from(std::env::var("HOME").ok()?).join(".cache/kruise-it/kubectl-v1.33/kubectl");
    cached.exists().then_some(cached)
}

struct Up {
    child: Child,
    data_dir: PathBuf,
}

impl Up {
    fn start(data_dir: &Path) -> Self {
        let _ = std::fs::remove_file(data_dir.join("endpoints.json"));
        let child = Command::new(env!("CARGO_BIN_EXE_kruise"))
            .args(["up", "--nodes", "3", "--apiserver-addr", "127.0.0.1:0", "--rest-addr", "127.0.0.1:0"])
            .args(["--grpc-addr", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(data_dir)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let up = Self { child, data_dir: data_dir.to_path_buf() };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !data_dir.join("endpoints.json").exists() {
            assert!(Instant::now() < deadline, "kruise up never wrote endpoints.json");
            std::thread::sleep(Duration::from_millis(100));
        }
        up
    }

    fn endpoints(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.data_dir.join("endpoints.json")).unwrap()).unwrap()
    }

    fn kubectl(&self, kubectl: &Path, args: &[&str]) -> String {
        let output = Command::new(kubectl)
            .args(args)
            .env("KUBECONFIG", self.data_dir.join("kubeconfig"))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "kubectl {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "kruise up did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The HTTP status of a GET with a bearer token (plain HTTP on loopback), 0 when it cannot connect.
fn http_status_with_token(url: &str, token: &str) -> u16 {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let client = reqwest::Client::new();
        client.get(url).bearer_auth(token).send().await.map(|r| r.status().as_u16()).unwrap_or(0)
    })
}

/// The service API of `kruise up`: ready, its admin token (mode 0600) accepted, no token refused.
fn check_service_api(up: &Up) -> String {
    use std::os::unix::fs::PermissionsExt;
    let endpoints = up.endpoints();
    let rest = endpoints["rest"].as_str().unwrap_or_else(|| panic!("rest in {endpoints}")).to_string();
    assert!(rest.starts_with("http://127.0.0.1:"), "{endpoints}");
    let token_file = up.data_dir.join("api-token");
    assert_eq!(endpoints["apiTokenFile"].as_str(), token_file.to_str());
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the token file is readable by its owner only");
    let token = std::fs::read_to_string(&token_file).unwrap().trim().to_string();
    assert_eq!(http_status(&format!("{rest}/readyz")), 200);
    assert_eq!(http_status(&format!("{rest}/v1/audit")), 401);
    assert_eq!(http_status_with_token(&format!("{rest}/v1/audit"), &token), 200);
    assert_eq!(http_status_with_token(&format!("{rest}/v1/namespaces/default/rollouts"), &token), 200);
    assert_eq!(http_status(&format!("{rest}/docs/")), 200);
    token
}

/// The HTTP status of a GET (plain HTTP on loopback), 0 when it cannot connect.
fn http_status(url: &str) -> u16 {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async { reqwest::get(url).await.map(|r| r.status().as_u16()).unwrap_or(0) })
}

#[test]
fn daemon_help_and_a_missing_node_name() {
    let help = Command::new(env!("CARGO_BIN_EXE_kruise")).args(["daemon", "--help"]).output().unwrap();
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in
        ["--node-name", "--runtime-endpoint", "--kubeconfig", "--health-addr", "--max-workers-for-pull-image"]
    {
        assert!(text.contains(flag), "{flag} in {text}");
    }
    let missing =
        Command::new(env!("CARGO_BIN_EXE_kruise")).arg("daemon").env_remove("NODE_NAME").output().unwrap();
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("--node-name") || stderr.contains("NODE_NAME"), "{stderr}");
}

#[test]
fn kubectl_sees_ready_nodes_and_runs_a_pod_and_a_restart_resumes() {
    let Some(kubectl) = kubectl_binary() else {
        eprintln!("skipped: no kubectl (run integration/tools/fetch-kubectl.sh or set KRUISE_KUBECTL)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("kruise");
    let up = Up::start(&data_dir);
    let endpoints = up.endpoints();
    assert!(endpoints["apiserver"].as_str().unwrap().starts_with("http://127.0.0.1:"), "{endpoints}");
    for key in ["rest", "grpc"] {
        let url = endpoints[key].as_str().unwrap_or_else(|| panic!("endpoints.json has {key}: {endpoints}"));
        assert!(url.starts_with("http://127.0.0.1:"), "{key}: {endpoints}");
    }
    let token = check_service_api(&up);

    let nodes = up.kubectl(&kubectl, &["get", "nodes", "--no-headers"]);
    let ready: Vec<&str> =
        nodes.lines().filter(|line| line.split_whitespace().nth(1) == Some("Ready")).collect();
    assert_eq!(ready.len(), 3, "{nodes}");
    let zones = up.kubectl(
        &kubectl,
        &["get", "nodes", "-o", "jsonpath={.items[*].metadata.labels.topology\\.kubernetes\\.io/zone}"],
    );
    let mut zones: Vec<&str> = zones.split_whitespace().collect();
    zones.sort();
    assert_eq!(zones, ["zone-a", "zone-b", "zone-c"], "nodes are spread over zones");

    up.kubectl(&kubectl, &["run", "web", "--image=nginx:1.25"]);
    up.kubectl(&kubectl, &["wait", "--for=condition=Ready", "pod/web", "--timeout=30s"]);
    let phase = up.kubectl(&kubectl, &["get", "pod", "web", "-o", "jsonpath={.status.phase}"]);
    assert_eq!(phase, "Running");
    let container = |up: &Up| {
        up.kubectl(
            &kubectl,
            &["get", "pod", "web", "-o", "jsonpath={.status.containerStatuses[0].containerID}"],
        )
    };
    let before = container(&up);
    assert!(before.starts_with("containerd://"), "{before}");

    let manifest = dir.path().join("pod.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: applied\nspec:\n  containers:\n  - name: app\n    image: \
         registry.example/app:v1\n    readinessProbe:\n      httpGet: {path: /healthz, port: 8080}\n",
    )
    .unwrap();
    up.kubectl(&kubectl, &["apply", "-f", manifest.to_str().unwrap()]);
    up.kubectl(&kubectl, &["wait", "--for=condition=Ready", "pod/applied", "--timeout=30s"]);

    // One node daemon per node: each ready, each node with its NodeImage; an ImagePullJob
    // applied with kubectl pulls on every node.
    let daemons = endpoints["daemons"].as_object().unwrap_or_else(|| panic!("daemons in {endpoints}"));
    assert_eq!(daemons.len(), 3, "{endpoints}");
    for (node, url) in daemons {
        let readyz = format!("{}/readyz", url.as_str().unwrap());
        let status = http_status(&readyz);
        assert_eq!(status, 200, "the daemon of {node} is ready");
    }
    let node_images = up.kubectl(&kubectl, &["get", "nodeimages", "--no-headers"]);
    assert_eq!(node_images.lines().count(), 3, "{node_images}");
    let job = dir.path().join("job.yaml");
    std::fs::write(
        &job,
        "apiVersion: apps.kruise.io/v1beta1\nkind: ImagePullJob\nmetadata:\n  name: warm\nspec:\n  image: \
         registry.example/warm:v1\n  parallelism: 3\n  completionPolicy:\n    type: Always\n",
    )
    .unwrap();
    up.kubectl(&kubectl, &["apply", "-f", job.to_str().unwrap()]);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let succeeded =
            up.kubectl(&kubectl, &["get", "imagepulljob", "warm", "-o", "jsonpath={.status.succeeded}"]);
        if succeeded == "3" {
            break;
        }
        assert!(Instant::now() < deadline, "the ImagePullJob did not succeed on 3 nodes: {succeeded:?}");
        std::thread::sleep(Duration::from_millis(200));
    }

    let status = up.terminate();
    assert!(status.success(), "kruise up exits 0 on SIGTERM: {status:?}");

    let up = Up::start(&data_dir);
    up.kubectl(&kubectl, &["wait", "--for=condition=Ready", "pod/web", "--timeout=30s"]);
    assert_eq!(container(&up), before, "the pod kept its container across the restart");
    let restarts = up.kubectl(
        &kubectl,
        &["get", "pod", "web", "-o", "jsonpath={.status.containerStatuses[0].restartCount}"],
    );
    assert_eq!(restarts, "0");
    let nodes = up.kubectl(&kubectl, &["get", "nodes", "--no-headers"]);
    assert_eq!(nodes.lines().count(), 3, "no duplicate nodes after a resume: {nodes}");
    assert_eq!(check_service_api(&up), token, "a resume keeps the admin token");
    assert!(up.terminate().success());
}
