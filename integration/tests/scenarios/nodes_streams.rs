//! `kubectl exec` and `kubectl logs` (kubectl 1.33) against simulated pods, on both tiers: the
//! embedded API server tunnels kubectl's WebSocket to the node's kubelet server; kube-apiserver
//! translates it to SPDY/3.1 towards the same server. Exit codes, output and log lines must be
//! the same on both. Skipped when no kubectl binary is found.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    process::Output,
    time::{Duration, Instant},
};

use kruise_integration::{
    Scene, Skip,
    nodes::{Hosting, SimNodes},
};
use serde_json::json;

use crate::{
    kubectl::Kubectl,
    nodes::{Pods, find_container, is_ready},
};

/// Runs kubectl off the async runtime (the nodes and the embedded API server share it).
async fn kubectl(scene: &Scene, args: &[&str], input: &str) -> Output {
    let scene = scene.clone();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let input = input.to_string();
    tokio::task::spawn_blocking(move || {
        let kubectl = Kubectl::for_scene(&scene).expect("kubectl was found before");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        kubectl.output(&args, &input)
    })
    .await
    .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What kubectl printed on stderr for the user, without its own klog diagnostics (they carry
/// timestamps and pids, and one of them comes from a client-side race: see
/// `kruise_integration::without_client_logs`).
fn stderr(output: &Output) -> String {
    kruise_integration::without_client_logs(&text(&output.stderr))
}

/// `(exit code, stdout, stderr)` of a kubectl run.
fn outcome(output: &Output) -> (Option<i32>, String, String) {
    (output.status.code(), text(&output.stdout), stderr(output))
}

/// `kubectl exec` runs the simulated runtime's commands; `kubectl logs` shows the simulated
/// start and stop lines of the current and previous container.
pub async fn kubectl_exec_and_logs(scene: Scene) -> Result<(), Skip> {
    Kubectl::for_scene(&scene)?;
    let cluster = scene.cluster();
    let nodes = SimNodes::start(cluster, Hosting::InProcess, 1).await.unwrap();
    let pods = Pods::new(cluster.client());
    let pod = |name: &str, policy: &str, containers: serde_json::Value| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
               "spec": {"restartPolicy": policy, "terminationGracePeriodSeconds": 1, "containers": containers}})
    };
    pods.create(pod(
        "shell",
        "Always",
        json!([{"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "echo booted; sleep 3600"],
                "env": [{"name": "GREETING", "value": "hello"}]}]),
    ))
    .await;
    pods.create(pod(
        "flaky",
        "Always",
        json!([{"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "echo run; sleep 1; exit 1"]}]),
    ))
    .await;
    pods.create(pod(
        "duo",
        "Always",
        json!([{"name": "web", "image": "nginx:1.25"},
               {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "3600"]}]),
    ))
    .await;
    pods.wait("shell", "ready", is_ready).await;
    pods.wait("duo", "ready", is_ready).await;

    // exec: time taken, exit codes, output, standard input.
    let started = Instant::now();
    let slept = kubectl(&scene, &["exec", "shell", "--", "sleep", "1"], "").await;
    let took = started.elapsed();
    assert_eq!(outcome(&slept), (Some(0), String::new(), String::new()));
    assert!(took >= Duration::from_secs(1), "sleep 1 took {took:?}");
    let failed = kubectl(&scene, &["exec", "shell", "--", "sh", "-c", "exit 3"], "").await;
    assert_eq!(failed.status.code(), Some(3), "{:?}", outcome(&failed));
    assert!(stderr(&failed).contains("command terminated with exit code 3"), "{:?}", outcome(&failed));
    let echoed =
        kubectl(&scene, &["exec", "shell", "--", "sh", "-c", "echo $GREETING; echo oops >&2"], "").await;
    assert_eq!(echoed.status.code(), Some(0), "{:?}", outcome(&echoed));
    assert_eq!(text(&echoed.stdout), "hello\n");
    let piped = kubectl(&scene, &["exec", "-i", "shell", "--", "cat"], "abc\n").await;
    assert_eq!(outcome(&piped), (Some(0), "abc\n".to_string(), String::new()));
    let missing = kubectl(&scene, &["exec", "shell", "--", "no-such-tool"], "").await;
    assert_eq!(missing.status.code(), Some(126), "{:?}", outcome(&missing));
    let sidecar = kubectl(&scene, &["exec", "duo", "-c", "sidecar", "--", "true"], "").await;
    assert_eq!(sidecar.status.code(), Some(0), "{:?}", outcome(&sidecar));
    let wrong = kubectl(&scene, &["exec", "duo", "-c", "nope", "--", "true"], "").await;
    assert_ne!(wrong.status.code(), Some(0));
    assert!(stderr(&wrong).contains("container nope is not valid for pod duo"), "{:?}", outcome(&wrong));
    scene.observe(
        "exec",
        json!({
            "sleep": outcome(&slept),
            "exit3": [failed.status.code(), stderr(&failed).trim()],
            "echo": outcome(&echoed).1,
            "cat": outcome(&piped),
            "missing": [missing.status.code(), stderr(&missing).trim()],
            "wrongContainer": stderr(&wrong).trim(),
        }),
    );

    // logs: the current container, one of several, the previous one, following to the end.
    let logs = kubectl(&scene, &["logs", "shell"], "").await;
    assert_eq!(
        outcome(&logs),
        (
            Some(0),
            "kruise-sim: started container main (image docker.io/library/busybox:1.36, restart 0)\nbooted\n"
                .to_string(),
            String::new()
        )
    );
    let web = kubectl(&scene, &["logs", "duo", "-c", "web"], "").await;
    assert!(text(&web.stdout).starts_with("kruise-sim: started container web"), "{:?}", outcome(&web));
    let no_previous = kubectl(&scene, &["logs", "shell", "--previous"], "").await;
    assert_ne!(no_previous.status.code(), Some(0));
    assert!(
        stderr(&no_previous).contains("previous terminated container \"main\" in pod \"shell\" not found"),
        "{:?}",
        outcome(&no_previous)
    );
    pods.wait("flaky", "restarted", |p| find_container(p, "main").is_some_and(|c| c.restart_count >= 1))
        .await;
    let previous = kubectl(&scene, &["logs", "flaky", "--previous"], "").await;
    let previous_lines: Vec<String> = text(&previous.stdout).lines().map(str::to_string).collect();
    assert_eq!(previous.status.code(), Some(0), "{:?}", outcome(&previous));
    assert!(
        previous_lines.first().is_some_and(|line| line.starts_with("kruise-sim: started container main")),
        "{previous_lines:?}"
    );
    assert_eq!(previous_lines.get(1).map(String::as_str), Some("run"));
    assert_eq!(
        previous_lines.last().map(String::as_str),
        Some("kruise-sim: container main exited with code 1 (Error)"),
        "{previous_lines:?}"
    );
    pods.create(pod(
        "job",
        "Never",
        json!([{"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "echo working; sleep 2"]}]),
    ))
    .await;
    pods.wait("job", "running", |p| {
        find_container(p, "main").is_some_and(|c| c.state.as_ref().is_some_and(|s| s.running.is_some()))
    })
    .await;
    let started = Instant::now();
    let followed = kubectl(&scene, &["logs", "-f", "job"], "").await;
    let followed_for = started.elapsed();
    assert_eq!(
        outcome(&followed),
        (
            Some(0),
            "kruise-sim: started container main (image docker.io/library/busybox:1.36, restart 0)\nworking\n\
             kruise-sim: container main exited with code 0 (Completed)\n"
                .to_string(),
            String::new()
        )
    );
    assert!(
        followed_for >= Duration::from_millis(500),
        "-f returned after {followed_for:?}, before the exit"
    );
    scene.observe(
        "logs",
        json!({
            "current": outcome(&logs),
            "noPrevious": [no_previous.status.code(), stderr(&no_previous).trim()],
            // Which earlier instance `--previous` shows depends on how many restarts happened
            // before kubectl ran (back-off timing), so the restart number is not compared.
            "previous": previous_lines.iter().map(|line| without_restart_number(line)).collect::<Vec<_>>(),
            "followed": outcome(&followed),
        }),
    );

    nodes.shutdown().await;
    Ok(())
}

/// A container log line with the restart number of a `kruise-sim: started container` line
/// replaced by `N`.
fn without_restart_number(line: &str) -> String {
    match line.rsplit_once(", restart ") {
        Some((head, tail)) if line.starts_with("kruise-sim: started container") && tail.ends_with(')') => {
            format!("{head}, restart N)")
        }
        _ => line.to_string(),
    }
}
