//! `kruise apiserver --data-dir` as a process: objects acknowledged before a `kill -9` are all
//! there after a restart, and resourceVersions continue.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
};

use serde_json::{Value, json};

fn start(data_dir: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["apiserver", "--bind", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let url = loop {
        let line = lines.next().expect("server printed its address").unwrap();
        if let Some(url) = line.strip_prefix("API server listening on ") {
            break url.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, url)
}

#[tokio::test]
async fn acknowledged_writes_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = start(dir.path());
    let http = reqwest::Client::new();
    let collection = format!("{url}/api/v1/namespaces/default/configmaps");
    let mut last_rv = 0u64;
    for index in 0..20 {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{index}")}, "data": {"i": index.to_string()}});
        let response = http.post(&collection).json(&body).send().await.unwrap();
        assert_eq!(response.status(), 201);
        let created: Value = response.json().await.unwrap();
        last_rv = created["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    }
    child.kill().unwrap(); // SIGKILL: no shutdown code runs
    child.wait().unwrap();

    let (mut child, url) = start(dir.path());
    let list: Value = http
        .get(format!("{url}/api/v1/namespaces/default/configmaps"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let names: Vec<&str> =
        list["items"].as_array().unwrap().iter().filter_map(|i| i["metadata"]["name"].as_str()).collect();
    assert_eq!(names.len(), 20, "{names:?}");
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after-restart"}});
    let created: Value = http
        .post(format!("{url}/api/v1/namespaces/default/configmaps"))
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rv: u64 = created["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    assert!(rv > last_rv, "resourceVersion {rv} continues after {last_rv}");
    child.kill().unwrap();
    child.wait().unwrap();
}
