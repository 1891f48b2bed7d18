//! `kruise api` as an operator runs it: `openapi` prints the checked-in document, `hash-token`
//! hashes a token from stdin (or makes one), the server refuses to start without a store or
//! tokens file, and against a `kruise apiserver` process it serves readiness, refuses requests
//! without a token, records a refused rollout in its SQLite audit, and stops cleanly on SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    io::{BufRead, BufReader, Write},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

fn kruise() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kruise"))
}

/// Starts a process and waits for the stdout line starting with `prefix`; returns the rest.
fn start(command: &mut Command, prefix: &str) -> (Child, String) {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let rest = loop {
        let line =
            lines.next().unwrap_or_else(|| panic!("the process exited before printing {prefix:?}")).unwrap();
        if let Some(rest) = line.strip_prefix(prefix) {
            break rest.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, rest)
}

#[test]
fn openapi_prints_the_checked_in_document() {
    let output = kruise().args(["api", "openapi"]).output().unwrap();
    assert!(output.status.success());
    let checked_in =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi/kruise-api.json")).unwrap();
    assert_eq!(String::from_utf8(output.stdout).unwrap(), checked_in);
}

#[test]
fn hash_token_from_stdin_and_generated() {
    let mut child =
        kruise().args(["api", "hash-token"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"secret-token-value-123\n").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).unwrap().trim(),
        "sha256:e18d0d445696a836b7065f53d7d06d5953a1d46542a1c35667b7d15eb388f5a8"
    );

    let generated = kruise().args(["api", "hash-token", "--generate"]).output().unwrap();
    assert!(generated.status.success());
    let text = String::from_utf8(generated.stdout).unwrap();
    let token = text.lines().find_map(|l| l.strip_prefix("token: ")).unwrap().trim().to_string();
    let hash = text.lines().find_map(|l| l.strip_prefix("hash:")).unwrap().trim().to_string();
    assert!(token.starts_with("kr_") && token.len() >= 40, "{token}");
    let mut child =
        kruise().args(["api", "hash-token"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(token.as_bytes()).unwrap();
    let again = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8(again.stdout).unwrap().trim(), hash);
}

#[test]
fn serve_needs_a_store_and_tokens() {
    let output = kruise()
        .args(["api", "--tokens-file", "/nonexistent"])
        .env_remove("KRUISE_API_DATABASE_URL")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--database-url"));
    let output = kruise()
        .args(["api", "--database-url", "sqlite::memory:"])
        .env_remove("KRUISE_API_TOKENS_FILE")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--tokens-file"));
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("tokens.yaml");
    std::fs::write(
        &plain,
        "tokens:\n  - name: ci\n    token: hunter2\n    namespaces: '*'\n    actions: '*'\n",
    )
    .unwrap();
    let output = kruise()
        .args(["api", "--database-url", "sqlite::memory:", "--tokens-file"])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("stored hashed"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "the token was echoed: {stderr}");
}

#[tokio::test]
async fn serves_against_an_apiserver_process_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let (mut apiserver, _url) = start(
        kruise().args(["apiserver", "--bind", "127.0.0.1:0", "--data-dir"]).arg(dir.path().join("apiserver")),
        "API server listening on ",
    );
    let kubeconfig = dir.path().join("apiserver/kubeconfig");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !kubeconfig.exists() {
        assert!(Instant::now() < deadline, "no kubeconfig written");
        std::thread::sleep(Duration::from_millis(50));
    }
    let tokens = dir.path().join("tokens.json");
    let hash = "sha256:e18d0d445696a836b7065f53d7d06d5953a1d46542a1c35667b7d15eb388f5a8";
    std::fs::write(
        &tokens,
        json!({"tokens": [{"name": "ops", "hash": hash, "namespaces": "*", "actions": "*"}]}).to_string(),
    )
    .unwrap();
    let database = format!("sqlite:{}", dir.path().join("audit.db").display());
    let (mut api, listening) = start(
        kruise()
            .args(["api", "--rest-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"])
            .args(["--database-url", &database, "--kubeconfig"])
            .arg(&kubeconfig)
            .arg("--tokens-file")
            .arg(&tokens)
            .env("RUST_LOG", "warn"),
        "service API listening on ",
    );
    // "<rest> (REST) and <grpc> (gRPC)"
    let (rest, grpc) = listening.split_once(" (REST) and ").unwrap_or_else(|| panic!("{listening}"));
    let grpc = grpc.strip_suffix(" (gRPC)").unwrap_or_else(|| panic!("{listening}"));
    let grpc_addr = grpc.strip_prefix("http://").unwrap_or_else(|| panic!("{listening}"));
    assert!(std::net::TcpStream::connect(grpc_addr).is_ok(), "gRPC is served on {grpc}");

    let http = reqwest::Client::new();
    let ready = http.get(format!("{rest}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let anonymous = http.get(format!("{rest}/v1/audit")).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    let refused = http
        .post(format!("{rest}/v1/namespaces/default/rollouts"))
        .bearer_auth("secret-token-value-123")
        .json(&json!({"workload": {"kind": "CloneSet", "name": "web"}, "images": {"web": "nginx:1"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422);
    let audit: Value = http
        .get(format!("{rest}/v1/audit"))
        .bearer_auth("secret-token-value-123")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let outcomes: Vec<(&str, &str)> = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["actor"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(outcomes, [("ops", "rejected"), ("anonymous", "unauthenticated")]);

    let status = Command::new("kill").args(["-TERM", &api.id().to_string()]).status().unwrap();
    assert!(status.success());
    let exit = api.wait().unwrap();
    assert!(exit.success(), "kruise api exits 0 on SIGTERM: {exit:?}");
    apiserver.kill().unwrap();
    apiserver.wait().unwrap();
}
