//! `kruise crds --install --kubeconfig F` against a `kruise apiserver` process: every Kruise CRD
//! is applied and Established, clonesets are then served, and a second run is a no-op that still
//! succeeds (server-side apply).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
};

use serde_json::Value;

#[tokio::test]
async fn crds_install_applies_every_crd_and_waits_until_established() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut server = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["apiserver", "--bind", "127.0.0.1:0", "--kubeconfig"])
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("server printed its address").unwrap();
        if let Some(url) = line.strip_prefix("API server listening on ") {
            break url.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});

    for run in 0..2 {
        let output = Command::new(env!("CARGO_BIN_EXE_kruise"))
            .args(["crds", "--install", "--kubeconfig"])
            .arg(&kubeconfig)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "run {run}: {stderr}");
        assert!(stderr.contains("installed 18 CRDs; all Established"), "run {run}: {stderr}");
    }

    let http = reqwest::Client::new();
    let crds: Value = http
        .get(format!("{url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let items = crds["items"].as_array().unwrap();
    assert_eq!(items.len(), 18);
    for crd in items {
        let established = crd["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
        assert!(established, "{}", crd["metadata"]["name"]);
    }
    let list = http.get(format!("{url}/apis/apps.kruise.io/v1beta1/clonesets")).send().await.unwrap();
    assert_eq!(list.status(), 200);

    // Without a reachable cluster the command fails with a reason, not a panic.
    let missing = dir.path().join("missing-kubeconfig");
    let output = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["crds", "--install", "--kubeconfig"])
        .arg(&missing)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"));

    server.kill().unwrap();
    server.wait().unwrap();
}
