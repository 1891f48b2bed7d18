//! The API client subcommands as a user runs them against `kruise up`: `rollout start` and
//! `rollout status -o json` (server and token from the environment, then from flags and a token
//! file), `rollout watch` exiting 0 on Succeeded, a bad token refused with the 401 message and a
//! non-zero exit, a 422 naming the offending field, and `audit -o json` listing the records of
//! all of it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

/// `kruise up` with one node in a temp dir, stopped on drop.
struct Up {
    child: Child,
    data_dir: PathBuf,
}

impl Up {
    fn start(data_dir: &Path) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_kruise"))
            .args(["up", "--nodes", "1", "--apiserver-addr", "127.0.0.1:0", "--rest-addr", "127.0.0.1:0"])
            .args(["--grpc-addr", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let up = Self { child, data_dir: data_dir.to_path_buf() };
        let deadline = Instant::now() + Duration::from_secs(90);
        while !data_dir.join("endpoints.json").exists() {
            assert!(Instant::now() < deadline, "kruise up never wrote endpoints.json");
            std::thread::sleep(Duration::from_millis(100));
        }
        up
    }

    fn endpoint(&self, key: &str) -> String {
        let endpoints: Value =
            serde_json::from_str(&std::fs::read_to_string(self.data_dir.join("endpoints.json")).unwrap())
                .unwrap();
        endpoints[key].as_str().unwrap_or_else(|| panic!("{key} in {endpoints}")).to_string()
    }

    fn token(&self) -> String {
        std::fs::read_to_string(self.data_dir.join("api-token")).unwrap().trim().to_string()
    }

    /// `kruise ARGS` with the server and token in the environment; waits at most 2 minutes.
    fn client(&self, args: &[&str]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kruise"));
        command
            .args(args)
            .env("KRUISE_API_URL", self.endpoint("rest"))
            .env("KRUISE_API_TOKEN", self.token())
            .env_remove("KRUISE_API_TOKEN_FILE");
        run(command)
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(mut command: Command) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the client did not finish within 2 minutes: {command:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Creates CloneSet `web` (one replica, container `web`) through the embedded API server.
fn create_cloneset(apiserver: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let body = json!({
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}
                },
                "updateStrategy": {"type": "InPlaceIfPossible"}
            }
        });
        let response = reqwest::Client::new()
            .post(format!("{apiserver}/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets"))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status();
        assert!(status.is_success(), "creating the CloneSet: {status} {}", response.text().await.unwrap());
    });
}

#[test]
fn rollout_status_watch_errors_and_audit_through_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let up = Up::start(&dir.path().join("data"));
    create_cloneset(&up.endpoint("apiserver"));

    // start, server and token from the environment.
    let started = up.client(&[
        "rollout",
        "start",
        "--workload",
        "CloneSet/web",
        "--image",
        "web=nginx:1.27",
        "--reason",
        "cli test",
        "-o",
        "json",
    ]);
    assert!(started.status.success(), "rollout start failed: {}", text(&started.stderr));
    let rollout: Value = serde_json::from_slice(&started.stdout).unwrap();
    let id = rollout["id"].as_str().unwrap().to_string();
    assert_eq!(rollout["workload"], json!({"kind": "CloneSet", "name": "web"}));

    // status -o json, server and token from flags (a token file, which wins over the environment).
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{}\n", up.token())).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_kruise"));
    command
        .args(["rollout", "status", &id, "-o", "json", "--server", &up.endpoint("rest"), "--token-file"])
        .arg(&token_file)
        .env_remove("KRUISE_API_URL")
        .env("KRUISE_API_TOKEN", "kr_the-token-file-wins");
    let status = run(command);
    assert!(status.status.success(), "rollout status failed: {}", text(&status.stderr));
    let document: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(document["id"], json!(id));
    assert_eq!(document["request"]["images"], json!({"web": "nginx:1.27"}));
    assert!(document["state"].is_string(), "{document}");

    // human status names the rollout and its images.
    let human = up.client(&["rollout", "status", &id]);
    assert!(human.status.success());
    let human = text(&human.stdout);
    assert!(human.contains(&format!("rollout {id}")) && human.contains("web=nginx:1.27"), "{human}");

    // watch follows the events until Succeeded and exits 0.
    let watched = up.client(&["rollout", "watch", &id]);
    assert!(
        watched.status.success(),
        "watch: {:?}\nstdout: {}\nstderr: {}",
        watched.status,
        text(&watched.stdout),
        text(&watched.stderr)
    );
    assert!(text(&watched.stdout).contains("Succeeded"), "{}", text(&watched.stdout));

    // a bad token: the 401 problem, a non-zero exit.
    let mut command = Command::new(env!("CARGO_BIN_EXE_kruise"));
    command
        .args(["rollout", "status", &id, "--server", &up.endpoint("rest"), "--token", "kr_not-a-valid-token"])
        .env_remove("KRUISE_API_TOKEN_FILE");
    let refused = run(command);
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    assert!(stderr.starts_with("error: Authentication required: "), "{stderr}");
    assert!(refused.stdout.is_empty());

    // a 422 names the field.
    let invalid =
        up.client(&["rollout", "start", "--workload", "CloneSet/web", "--image", "nosuch=nginx:1.27"]);
    assert!(!invalid.status.success());
    let stderr = text(&invalid.stderr);
    assert!(stderr.starts_with("error: The request is invalid: "), "{stderr}");
    assert!(stderr.lines().any(|line| line.trim_start().starts_with("images.nosuch: ")), "{stderr}");

    // no token at all: refused before any request.
    let mut command = Command::new(env!("CARGO_BIN_EXE_kruise"));
    command.args(["audit"]).env_remove("KRUISE_API_TOKEN").env_remove("KRUISE_API_TOKEN_FILE");
    let tokenless = run(command);
    assert!(!tokenless.status.success());
    assert!(text(&tokenless.stderr).contains("no token"), "{}", text(&tokenless.stderr));

    // audit -o json lists all of it, newest first.
    let audit = up.client(&["audit", "-o", "json", "--action", "rollout"]);
    assert!(audit.status.success(), "audit failed: {}", text(&audit.stderr));
    let list: Value = serde_json::from_slice(&audit.stdout).unwrap();
    let records: Vec<(String, String)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["action"].as_str().unwrap().to_string(), r["outcome"].as_str().unwrap().to_string()))
        .collect();
    assert!(records.contains(&("rollout.create".into(), "accepted".into())), "{records:?}");
    assert!(records.contains(&("rollout.create".into(), "rejected".into())), "{records:?}");
    let unauthenticated = up.client(&["audit", "-o", "json", "--outcome", "unauthenticated"]);
    let list: Value = serde_json::from_slice(&unauthenticated.stdout).unwrap();
    assert!(!list["items"].as_array().unwrap().is_empty(), "the bad token is audited: {list}");

    // human audit is a table.
    let table = up.client(&["audit", "--limit", "5"]);
    assert!(table.status.success());
    assert!(text(&table.stdout).starts_with("TIME"), "{}", text(&table.stdout));
}

#[test]
fn client_arguments_are_checked_before_any_request() {
    let output = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["rollout", "start", "--workload", "Deployment/web", "--image", "web=nginx", "--token", "x"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(text(&output.stderr).contains("unknown workload kind"), "{}", text(&output.stderr));
    let output = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["audit", "--server", "ftp://example", "--token", "x"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(text(&output.stderr).contains("http:// or https://"), "{}", text(&output.stderr));
}
