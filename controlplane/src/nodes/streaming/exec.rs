//! One `exec` in a simulated container, independent of the wire protocol: the command runs as
//! the runtime's simulated shell says (it takes its time, prints what it prints, exits with its
//! code); `cat` echoes standard input until it closes and a shell without `-c` runs the lines
//! it reads, as they would in a real container. The result is reported the way the kubelet
//! reports it, as a `metav1.Status` on the error stream.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::nodes::runtime::NodeRuntime;

/// Bytes for the client's standard output or error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Standard output.
    Stdout(Vec<u8>),
    /// Standard error.
    Stderr(Vec<u8>),
}

/// How an exec ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecEnd {
    /// The command exited with this code.
    Exited(i32),
    /// It could not run (the container is gone, ...).
    Error(String),
}

/// The `metav1.Status` the kubelet writes on the error stream when an exec ends (protocol v4
/// and later): `Success`, or `NonZeroExitCode` with the code as an `ExitCode` cause.
pub fn status(end: &ExecEnd, command: &[String]) -> Value {
    match end {
        ExecEnd::Exited(0) => json!({"metadata": {}, "status": "Success"}),
        ExecEnd::Exited(code) => json!({
            "metadata": {},
            "status": "Failure",
            "message": format!(
                "command terminated with non-zero exit code: error executing command [{}], exit code {code}",
                command.join(" ")
            ),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
        }),
        ExecEnd::Error(message) => json!({
            "metadata": {},
            "status": "Failure",
            "message": format!("Internal error occurred: {message}"),
            "reason": "InternalError",
            "details": {"causes": [{"message": message}]},
            "code": 500,
        }),
    }
}

/// Runs `command` in container `container_id`: standard input arrives on `stdin` (`None`
/// when the client does not send any; the channel closing is end of input), output leaves on
/// `output`. Returns when the command ends.
pub async fn run(
    runtime: &NodeRuntime,
    container_id: &str,
    command: &[String],
    mut stdin: Option<mpsc::Receiver<Vec<u8>>>,
    output: mpsc::Sender<Output>,
) -> ExecEnd {
    let program = command.first().map(|p| p.rsplit('/').next().unwrap_or(p.as_str())).unwrap_or_default();
    let interactive_shell = matches!(program, "sh" | "bash" | "ash") && command.len() == 1;
    match (&mut stdin, program, command.len()) {
        (Some(input), "cat", 1) => {
            while let Some(chunk) = input.recv().await {
                if output.send(Output::Stdout(chunk)).await.is_err() {
                    break;
                }
            }
            return ExecEnd::Exited(0);
        }
        (Some(input), _, _) if interactive_shell => {
            return shell_session(runtime, container_id, input, &output).await;
        }
        _ => {}
    }
    let Some((runs_for, result)) = runtime.exec_plan(container_id, command, stdin.is_some()) else {
        return ExecEnd::Error(format!("container {container_id:?} not found"));
    };
    if !result.stdout.is_empty() {
        let _ = output.send(Output::Stdout(result.stdout.into_bytes())).await;
    }
    if !result.stderr.is_empty() {
        let _ = output.send(Output::Stderr(result.stderr.into_bytes())).await;
    }
    match (runs_for, stdin.as_mut()) {
        (Some(time), _) => tokio::time::sleep(time).await,
        // Blocked on input: until it closes.
        (None, Some(input)) => while input.recv().await.is_some() {},
        // Never ends: until the client goes away.
        (None, None) => output.closed().await,
    }
    ExecEnd::Exited(result.exit_code)
}

/// A shell reading commands from standard input, one line at a time.
async fn shell_session(
    runtime: &NodeRuntime,
    container_id: &str,
    input: &mut mpsc::Receiver<Vec<u8>>,
    output: &mpsc::Sender<Output>,
) -> ExecEnd {
    let mut pending = String::new();
    let mut status = 0;
    loop {
        while let Some(end) = pending.find('\n') {
            let line: String = pending.drain(..=end).collect();
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let argv = vec!["sh".to_string(), "-c".to_string(), line.to_string()];
            let Some((runs_for, result)) = runtime.exec_plan(container_id, &argv, false) else {
                return ExecEnd::Error(format!("container {container_id:?} not found"));
            };
            let _ = output.send(Output::Stdout(result.stdout.into_bytes())).await;
            if !result.stderr.is_empty() {
                let _ = output.send(Output::Stderr(result.stderr.into_bytes())).await;
            }
            tokio::time::sleep(runs_for.unwrap_or(Duration::ZERO)).await;
            status = result.exit_code;
            if line == "exit" || line.starts_with("exit ") {
                return ExecEnd::Exited(status);
            }
        }
        match input.recv().await {
            Some(chunk) => pending.push_str(&String::from_utf8_lossy(&chunk)),
            None => return ExecEnd::Exited(status),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::nodes::runtime::{Image, PullTiming, image_digest};

    fn runtime_with_container() -> (NodeRuntime, String) {
        let runtime = NodeRuntime::new("n", PullTiming::default());
        let sandbox = runtime.ensure_sandbox("ns", "p", "uid", "10.0.0.1", &BTreeMap::new());
        let image = Image { reference: "busybox".into(), id: image_digest("busybox"), size: 1 };
        let env = BTreeMap::from([("GREETING".to_string(), "hi".to_string())]);
        let container =
            runtime.start_container(&sandbox.id, "main", &image, 0, BTreeMap::new(), BTreeMap::new(), env);
        (runtime, container.id)
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    async fn collect(mut output: mpsc::Receiver<Output>) -> Vec<Output> {
        let mut all = Vec::new();
        while let Some(item) = output.recv().await {
            all.push(item);
        }
        all
    }

    #[test]
    fn statuses_are_the_kubelets() {
        let command = argv(&["sh", "-c", "exit 3"]);
        assert_eq!(status(&ExecEnd::Exited(0), &command), json!({"metadata": {}, "status": "Success"}));
        let failed = status(&ExecEnd::Exited(3), &command);
        assert_eq!(failed["reason"], "NonZeroExitCode");
        assert_eq!(failed["details"]["causes"][0], json!({"reason": "ExitCode", "message": "3"}));
        assert_eq!(
            failed["message"],
            "command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3"
        );
        assert_eq!(status(&ExecEnd::Error("gone".into()), &command)["code"], 500);
    }

    #[tokio::test]
    async fn commands_take_their_time_and_print() {
        let (runtime, id) = runtime_with_container();
        let (tx, rx) = mpsc::channel(16);
        let started = std::time::Instant::now();
        let end =
            run(&runtime, &id, &argv(&["sh", "-c", "echo $GREETING; sleep 0.3; exit 4"]), None, tx).await;
        assert_eq!(end, ExecEnd::Exited(4));
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(collect(rx).await, vec![Output::Stdout(b"hi\n".to_vec())]);
        let (tx, _rx) = mpsc::channel(16);
        assert!(matches!(run(&runtime, "nope", &argv(&["true"]), None, tx).await, ExecEnd::Error(_)));
    }

    #[tokio::test]
    async fn cat_echoes_and_a_shell_reads_lines() {
        let (runtime, id) = runtime_with_container();
        let (input_tx, input_rx) = mpsc::channel(4);
        let (tx, rx) = mpsc::channel(16);
        input_tx.send(b"abc".to_vec()).await.unwrap();
        drop(input_tx);
        assert_eq!(run(&runtime, &id, &argv(&["cat"]), Some(input_rx), tx).await, ExecEnd::Exited(0));
        assert_eq!(collect(rx).await, vec![Output::Stdout(b"abc".to_vec())]);

        let (input_tx, input_rx) = mpsc::channel(4);
        let (tx, rx) = mpsc::channel(16);
        input_tx.send(b"echo one\nfailed\n".to_vec()).await.unwrap();
        input_tx.send(b"exit 2\n".to_vec()).await.unwrap();
        assert_eq!(run(&runtime, &id, &argv(&["sh"]), Some(input_rx), tx).await, ExecEnd::Exited(2));
        let printed = collect(rx).await;
        assert!(printed.contains(&Output::Stdout(b"one\n".to_vec())), "{printed:?}");
        assert!(printed.contains(&Output::Stderr(b"sh: failed: not found\n".to_vec())), "{printed:?}");
    }
}
