//! `kruise broadcastjob results NAME`: a BroadcastJob's result on each node, through the
//! service API (its phase and counts, then one line per pod: node, phase, restarts, and how its
//! containers ended), optionally waiting until the job finishes.

use std::{process::ExitCode, time::Duration};

use anyhow::Context;
use clap::{Args, Subcommand};
use kruise_api::model::{BroadcastJobNodes, JobNodeResult};

use super::client::{Client, ConnectArgs, segment};

/// Arguments of `kruise broadcastjob`.
#[derive(Args)]
#[command(after_help = "Examples:\n  kruise broadcastjob results warm-cache\n  \
kruise broadcastjob results warm-cache --wait -o json | jq '.nodes[] | select(.phase == \"Failed\")'")]
pub struct BroadcastjobArgs {
    #[command(subcommand)]
    command: BroadcastjobCommand,
    #[command(flatten)]
    connect: ConnectArgs,
    /// The namespace of the BroadcastJob.
    #[arg(short, long, default_value = "default", env = "KRUISE_NAMESPACE", global = true)]
    namespace: String,
}

#[derive(Subcommand)]
enum BroadcastjobCommand {
    /// Show a BroadcastJob's phase, counts and the result of its pod on each node.
    Results(ResultsArgs),
}

#[derive(Args)]
struct ResultsArgs {
    /// The BroadcastJob.
    name: String,
    /// Wait until the job is completed or failed (polling every second); exit 0 only when it
    /// completed without failed pods.
    #[arg(long)]
    wait: bool,
}

/// Whether the job has finished (its phase says so).
fn finished(job: &BroadcastJobNodes) -> bool {
    matches!(job.phase.as_deref(), Some("completed" | "failed"))
}

/// 0 when the job completed without failures, 1 otherwise (failed, or failed pods).
fn exit_code(job: &BroadcastJobNodes) -> ExitCode {
    if job.phase.as_deref() == Some("completed") && job.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Runs `kruise broadcastjob`.
pub fn run(args: &BroadcastjobArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging_quiet();
    let client = Client::new(&args.connect)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        match &args.command {
            BroadcastjobCommand::Results(results) => {
                let path = format!(
                    "/v1/namespaces/{}/broadcastjobs/{}/nodes",
                    segment(&args.namespace),
                    segment(&results.name)
                );
                if !results.wait {
                    let answer = client.get(&path, &[]).await?;
                    client.print(&answer, describe)?;
                    return Ok(ExitCode::SUCCESS);
                }
                let mut last_phase = None;
                loop {
                    let answer = client.get(&path, &[]).await?;
                    let job: BroadcastJobNodes = serde_json::from_str(&answer)
                        .context("the server's answer is not what was expected")?;
                    if last_phase.as_ref() != Some(&job.phase) {
                        eprintln!("{}", job.phase.as_deref().unwrap_or("pending"));
                        last_phase = Some(job.phase.clone());
                    }
                    if finished(&job) {
                        client.print(&answer, describe)?;
                        return Ok(exit_code(&job));
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    })
}

/// How a pod ended (or stands): its containers' exit codes and reasons, else the pod's reason.
fn outcome(node: &JobNodeResult) -> String {
    let parts: Vec<String> = node
        .containers
        .iter()
        .filter(|c| c.exit_code.is_some() || c.reason.is_some())
        .map(|c| {
            let mut part = c.name.clone();
            if let Some(code) = c.exit_code {
                part.push_str(&format!(" exit {code}"));
            }
            if let Some(reason) = &c.reason {
                part.push_str(&format!(" {reason}"));
            }
            part
        })
        .collect();
    if parts.is_empty() { node.reason.clone().unwrap_or_default() } else { parts.join(", ") }
}

/// The human form of a job's results.
fn describe(job: &BroadcastJobNodes) -> String {
    let mut out = format!(
        "broadcastjob {}/{}\n  phase:   {}\n  pods:    {} desired, {} active, {} succeeded, {} failed\n",
        job.namespace,
        job.name,
        job.phase.as_deref().unwrap_or("(not reported yet)"),
        job.desired,
        job.active,
        job.succeeded,
        job.failed
    );
    if let Some(time) = job.completion_time {
        out.push_str(&format!("  finished: {}\n", time.to_rfc3339()));
    }
    for condition in job.conditions.iter().filter(|c| c.status == "True") {
        out.push_str(&format!(
            "  condition {}: {} {}\n",
            condition.type_, condition.reason, condition.message
        ));
    }
    if job.nodes.is_empty() {
        out.push_str("  no pods yet\n");
        return out;
    }
    out.push_str(&format!(
        "  {:<20} {:<28} {:<10} {:>8}  {}\n",
        "NODE", "POD", "PHASE", "RESTARTS", "RESULT"
    ));
    for node in &job.nodes {
        out.push_str(&format!(
            "  {:<20} {:<28} {:<10} {:>8}  {}\n",
            node.node.as_deref().unwrap_or("<unbound>"),
            node.pod,
            node.phase,
            node.restart_count,
            outcome(node)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    fn job(phase: Option<&str>, failed: i32) -> BroadcastJobNodes {
        serde_json::from_value(json!({
            "namespace": "default", "name": "warm", "uid": "u", "phase": phase,
            "desired": 2, "active": 0, "succeeded": 2 - failed, "failed": failed,
            "nodes": [
                {"node": "node-a", "pod": "warm-a", "phase": "Succeeded", "restartCount": 0,
                 "containers": [{"name": "box", "state": "terminated", "restartCount": 0, "exitCode": 0, "reason": "Completed"}]},
                {"pod": "warm-b", "phase": "Pending", "restartCount": 0,
                 "containers": [{"name": "box", "state": "unknown", "restartCount": 0}]}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn results_list_one_line_per_node() {
        let text = describe(&job(Some("running"), 0));
        assert!(text.contains("phase:   running"), "{text}");
        assert!(text.contains("2 desired, 0 active, 2 succeeded, 0 failed"), "{text}");
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("warm-")).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains("node-a") && lines[0].contains("box exit 0 Completed"), "{text}");
        assert!(lines[1].contains("<unbound>") && lines[1].contains("Pending"), "{text}");
        assert!(describe(&job(None, 0)).contains("(not reported yet)"));
    }

    #[test]
    fn waiting_ends_on_a_final_phase_and_exits_by_result() {
        assert!(!finished(&job(Some("running"), 0)));
        assert!(!finished(&job(None, 0)));
        assert!(finished(&job(Some("completed"), 0)));
        assert!(finished(&job(Some("failed"), 1)));
        assert_eq!(exit_code(&job(Some("completed"), 0)), ExitCode::SUCCESS);
        assert_eq!(exit_code(&job(Some("completed"), 1)), ExitCode::from(1), "failed pods fail the command");
        assert_eq!(exit_code(&job(Some("failed"), 1)), ExitCode::from(1));
    }
}
