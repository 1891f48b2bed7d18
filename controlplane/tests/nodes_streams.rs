//! `pods/exec` and `pods/log` end to end in process: a kube-rs client (WebSocket exec, as
//! kubectl) against the embedded API server, which proxies to a simulated node's kubelet
//! server over loopback HTTPS.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use futures::{AsyncBufReadExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    nodes::{Simulation, SimulationConfig},
};
use kube::{
    Api, Client, Config,
    api::{AttachParams, LogParams, PostParams},
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn start() -> (ApiServer, Simulation, Api<Pod>) {
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    let config = SimulationConfig { nodes: 1, ..Default::default() };
    let simulation = Simulation::start(client.clone(), &config).await.unwrap();
    (server, simulation, Api::namespaced(client, "default"))
}

async fn running(pods: &Api<Pod>, name: &str, command: serde_json::Value) {
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "main", "image": "busybox", "command": command}]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let pod = pods.get(name).await.unwrap();
        let running = pod
            .status
            .and_then(|s| s.container_statuses)
            .and_then(|c| c.first().and_then(|c| c.state.clone()))
            .is_some_and(|s| s.running.is_some());
        if running {
            return;
        }
        assert!(Instant::now() < deadline, "pod {name} never ran");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn exec_runs_the_simulated_command_through_the_api_server() {
    let (server, simulation, pods) = start().await;
    running(&pods, "shell", json!(["sh", "-c", "echo booted; sleep 3600"])).await;

    let started = Instant::now();
    let mut process = pods
        .exec(
            "shell",
            ["sh", "-c", "echo hi; echo err >&2; sleep 0.5; exit 3"],
            &AttachParams::default().stderr(true),
        )
        .await
        .unwrap();
    let mut stdout = String::new();
    process.stdout().unwrap().read_to_string(&mut stdout).await.unwrap();
    let status = process.take_status().unwrap().await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(500), "{:?}", started.elapsed());
    assert_eq!(stdout, "hi\n");
    assert_eq!(status.status.as_deref(), Some("Failure"));
    assert_eq!(status.reason.as_deref(), Some("NonZeroExitCode"));
    let cause = &status.details.unwrap().causes.unwrap()[0];
    assert_eq!((cause.reason.as_deref(), cause.message.as_deref()), (Some("ExitCode"), Some("3")));

    let mut echo =
        pods.exec("shell", ["cat"], &AttachParams::default().stdin(true).stderr(false)).await.unwrap();
    let mut stdin = echo.stdin().unwrap();
    stdin.write_all(b"ping\n").await.unwrap();
    // End of input (a split simplex pipe only closes on shutdown).
    stdin.shutdown().await.unwrap();
    let mut echoed = String::new();
    let mut output = echo.stdout().unwrap();
    let reading = output.read_to_string(&mut echoed);
    tokio::time::timeout(Duration::from_secs(10), reading).await.expect("cat ends with its input").unwrap();
    assert_eq!(echoed, "ping\n");
    let status = tokio::time::timeout(Duration::from_secs(10), echo.take_status().unwrap())
        .await
        .expect("the status of cat")
        .unwrap();
    assert_eq!(status.status.as_deref(), Some("Success"));

    let params = AttachParams::default().container("nope");
    let attempt = pods.exec("shell", ["true"], &params);
    let error = tokio::time::timeout(Duration::from_secs(10), attempt).await.expect("refused").err().unwrap();
    assert!(error.to_string().contains("container nope is not valid for pod shell"), "{error}");

    simulation.stop().await;
    server.shutdown().await;
}

#[tokio::test]
async fn logs_show_the_simulated_lines_and_follow_to_the_exit() {
    let (server, simulation, pods) = start().await;
    running(&pods, "job", json!(["sh", "-c", "echo working; sleep 1; exit 2"])).await;
    let logs = pods.logs("job", &LogParams::default()).await.unwrap();
    assert_eq!(
        logs,
        "kruise-sim: started container main (image docker.io/library/busybox:latest, restart 0)\nworking\n"
    );

    let started = Instant::now();
    let lines: Vec<String> = pods
        .log_stream("job", &LogParams { follow: true, ..Default::default() })
        .await
        .unwrap()
        .lines()
        .try_collect()
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300), "followed until the exit");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("kruise-sim: container main exited with code 2 (Error)")
    );

    // Restarted (restartPolicy Always): the previous incarnation's log stays readable.
    let deadline = Instant::now() + Duration::from_secs(20);
    let previous = loop {
        match pods.logs("job", &LogParams { previous: true, ..Default::default() }).await {
            Ok(previous) => break previous,
            Err(error) => {
                assert!(error.to_string().contains("previous terminated container"), "{error}");
                assert!(Instant::now() < deadline, "never restarted");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    assert!(previous.ends_with("exited with code 2 (Error)\n"), "{previous}");
    let stamped = pods
        .logs("job", &LogParams { timestamps: true, tail_lines: Some(1), ..Default::default() })
        .await
        .unwrap();
    let (time, _) = stamped.split_once(' ').unwrap();
    assert!(time.parse::<k8s_openapi::jiff::Timestamp>().is_ok(), "{stamped}");

    simulation.stop().await;
    server.shutdown().await;
}
