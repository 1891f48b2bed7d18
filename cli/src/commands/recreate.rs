//! `kruise recreate`: restart containers of a pod, or of every pod of a workload, through the
//! service API (ContainerRecreateRequests), and `kruise recreate status ID`.

use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use kruise_api::model::Recreate;
use serde_json::{Value, json};

use super::client::{Client, ConnectArgs, parse_int_or_percent, parse_workload, segment};

/// Arguments of `kruise recreate`.
#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  kruise recreate --workload CloneSet/web --container sidecar --max-unavailable 50% --wait\n  \
kruise recreate --pod web-abcde --container app --force\n  kruise recreate status c-0123 -o json"
)]
pub struct RecreateArgs {
    #[command(subcommand)]
    command: Option<RecreateCommand>,
    #[command(flatten)]
    create: CreateArgs,
    #[command(flatten)]
    connect: ConnectArgs,
    /// The namespace of the pod or workload.
    #[arg(short, long, default_value = "default", env = "KRUISE_NAMESPACE", global = true)]
    namespace: String,
}

#[derive(Subcommand)]
enum RecreateCommand {
    /// Show a recreate: state and per-pod, per-container phases.
    Status(super::tasks::IdArg),
}

#[derive(Args)]
struct CreateArgs {
    /// The pod whose containers are recreated.
    #[arg(long, conflicts_with = "workload")]
    pod: Option<String>,
    /// Every pod of this workload: KIND/NAME.
    #[arg(long, value_name = "KIND/NAME", value_parser = parse_workload)]
    workload: Option<Value>,
    /// A container to recreate (repeat for several).
    #[arg(long = "container", value_name = "NAME")]
    containers: Vec<String>,
    /// Recreate the containers one after the other, in order.
    #[arg(long)]
    ordered: bool,
    /// What a failed container does: Fail (stop) or Ignore (go on).
    #[arg(long, value_name = "POLICY")]
    failure_policy: Option<String>,
    /// Grace period of the kill (default: the pod's).
    #[arg(long, value_name = "SECONDS")]
    termination_grace_period_seconds: Option<i64>,
    /// Seconds the pod is held not ready before the containers are stopped.
    #[arg(long, value_name = "SECONDS")]
    unready_grace_period_seconds: Option<i64>,
    /// Seconds a new container must run to count as started.
    #[arg(long, value_name = "SECONDS")]
    min_started_seconds: Option<i32>,
    /// Stop a container even if it is already restarting or an earlier recreate of it is still
    /// in progress (the preStop hook still runs).
    #[arg(long)]
    force: bool,
    /// Pods recreated at the same time (count or percentage; default 1).
    #[arg(long, value_parser = parse_int_or_percent)]
    max_unavailable: Option<Value>,
    /// Why (kept in the audit).
    #[arg(long)]
    reason: Option<String>,
    /// Then wait until the recreate ends; exit 0 only when it succeeded.
    #[arg(long)]
    wait: bool,
}

/// Runs `kruise recreate`.
pub fn run(args: &RecreateArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging_quiet();
    let client = Client::new(&args.connect)?;
    let base = format!("/v1/namespaces/{}/recreates", segment(&args.namespace));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        if let Some(RecreateCommand::Status(id)) = &args.command {
            let answer = client.get(&format!("{base}/{}", segment(&id.id)), &[]).await?;
            client.print(&answer, describe)?;
            return Ok(ExitCode::SUCCESS);
        }
        let create = &args.create;
        if create.pod.is_none() && create.workload.is_none() {
            anyhow::bail!("name a --pod or a --workload (see `kruise recreate --help`)");
        }
        let mut strategy = serde_json::Map::new();
        for (key, value) in [
            ("orderedRecreate", create.ordered.then_some(Value::Bool(true))),
            ("failurePolicy", create.failure_policy.clone().map(Value::from)),
            ("terminationGracePeriodSeconds", create.termination_grace_period_seconds.map(Value::from)),
            ("unreadyGracePeriodSeconds", create.unready_grace_period_seconds.map(Value::from)),
            ("minStartedSeconds", create.min_started_seconds.map(Value::from)),
            ("forceRecreate", create.force.then_some(Value::Bool(true))),
        ] {
            if let Some(value) = value {
                strategy.insert(key.into(), value);
            }
        }
        let mut body = json!({"containers": create.containers});
        for (key, value) in [
            ("pod", create.pod.clone().map(Value::from)),
            ("workload", create.workload.clone()),
            ("maxUnavailable", create.max_unavailable.clone()),
            ("reason", create.reason.clone().map(Value::from)),
        ] {
            if let Some(value) = value {
                body[key] = value;
            }
        }
        if !strategy.is_empty() {
            body["strategy"] = Value::Object(strategy);
        }
        let answer = client.post(&base, &body, &[]).await?;
        let recreate: Recreate = client.print(&answer, |r: &Recreate| {
            format!("recreate {} started for {} pod(s): {}", r.id, r.pods.len(), r.state.as_str())
        })?;
        if !create.wait {
            return Ok(ExitCode::SUCCESS);
        }
        let path = format!("{base}/{}", segment(&recreate.id));
        let (body, state) = super::tasks::wait(&client, &path).await?;
        client.print(&body, describe)?;
        Ok(super::tasks::exit_code(state))
    })
}

/// The human form of a recreate.
fn describe(r: &Recreate) -> String {
    let mut out = format!(
        "recreate {}\n  state:   {}\n  containers: {}\n  maxUnavailable: {}\n",
        r.id,
        r.state.as_str(),
        r.request.containers.join(", "),
        r.max_unavailable
    );
    if let Some(message) = &r.message {
        out.push_str(&format!("  message: {message}\n"));
    }
    out.push_str(&format!("  created: {} by {}\n", r.created_at.to_rfc3339(), r.created_by));
    for pod in &r.pods {
        out.push_str(&format!(
            "  pod {:<24} {}{}\n",
            pod.pod,
            pod.phase,
            pod.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
        ));
        for container in &pod.containers {
            out.push_str(&format!("    {:<22} {}\n", container.name, container.phase));
        }
    }
    out
}
