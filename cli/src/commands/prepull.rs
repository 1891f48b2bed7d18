//! `kruise prepull`: pre-pull images on nodes through the service API (one ImagePullJob per
//! image), and `kruise prepull status ID` to see how far the pulls got on each node.

use std::{collections::BTreeMap, process::ExitCode};

use anyhow::Context;
use clap::{Args, Subcommand};
use kruise_api::model::ImagePull;
use serde_json::{Value, json};

use super::client::{Client, ConnectArgs, parse_pair, parse_workload, segment};

/// Arguments of `kruise prepull`.
#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  kruise prepull nginx:1.27 busybox:1.36 --workload CloneSet/web --parallelism 2 --wait\n  \
kruise prepull redis:7 --node sim-node-0 --node sim-node-1\n  kruise prepull status p-0123 -o json"
)]
pub struct PrepullArgs {
    #[command(subcommand)]
    command: Option<PrepullCommand>,
    #[command(flatten)]
    create: CreateArgs,
    #[command(flatten)]
    connect: ConnectArgs,
    /// The namespace (of the workload, pull secrets and the pull's jobs).
    #[arg(short, long, default_value = "default", env = "KRUISE_NAMESPACE", global = true)]
    namespace: String,
}

#[derive(Subcommand)]
enum PrepullCommand {
    /// Show an image pull: state and per-node progress of each image.
    Status(super::tasks::IdArg),
}

#[derive(Args)]
struct CreateArgs {
    /// Image references to pull (`repo:tag` or `repo@digest`).
    images: Vec<String>,
    /// Pull on this node (repeat for several).
    #[arg(long = "node", value_name = "NAME")]
    nodes: Vec<String>,
    /// Pull on the nodes with this label: KEY=VALUE (repeat for several).
    #[arg(long = "selector", value_name = "KEY=VALUE", value_parser = parse_pair)]
    selector: Vec<(String, String)>,
    /// Pull on the nodes of this workload's pods: KIND/NAME.
    #[arg(long, value_name = "KIND/NAME", value_parser = parse_workload)]
    workload: Option<Value>,
    /// Nodes pulling at the same time (default 1).
    #[arg(long)]
    parallelism: Option<i32>,
    /// Seconds one pull attempt may take (default 600).
    #[arg(long)]
    timeout_seconds: Option<i32>,
    /// Retries of a failed pull on a node (default 3).
    #[arg(long)]
    backoff_limit: Option<i32>,
    /// Secret in the namespace with registry credentials (repeat for several).
    #[arg(long = "pull-secret", value_name = "NAME")]
    pull_secrets: Vec<String>,
    /// Why (kept in the audit).
    #[arg(long)]
    reason: Option<String>,
    /// Then wait until the pull ends; exit 0 only when it succeeded.
    #[arg(long)]
    wait: bool,
}

/// Runs `kruise prepull`.
pub fn run(args: &PrepullArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging_quiet();
    let client = Client::new(&args.connect)?;
    let base = format!("/v1/namespaces/{}/image-pulls", segment(&args.namespace));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        if let Some(PrepullCommand::Status(id)) = &args.command {
            let answer = client.get(&format!("{base}/{}", segment(&id.id)), &[]).await?;
            client.print(&answer, describe)?;
            return Ok(ExitCode::SUCCESS);
        }
        let create = &args.create;
        if create.images.is_empty() {
            anyhow::bail!("name at least one image (see `kruise prepull --help`)");
        }
        let mut body = json!({"images": create.images});
        if !create.nodes.is_empty() || !create.selector.is_empty() {
            let labels: BTreeMap<&str, &str> =
                create.selector.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let mut selector = serde_json::Map::new();
            if !create.nodes.is_empty() {
                selector.insert("names".into(), json!(create.nodes));
            }
            if !labels.is_empty() {
                selector.insert("matchLabels".into(), json!(labels));
            }
            body["nodeSelector"] = Value::Object(selector);
        }
        for (key, value) in [
            ("workload", create.workload.clone()),
            ("parallelism", create.parallelism.map(Value::from)),
            ("timeoutSeconds", create.timeout_seconds.map(Value::from)),
            ("backoffLimit", create.backoff_limit.map(Value::from)),
            ("reason", create.reason.clone().map(Value::from)),
        ] {
            if let Some(value) = value {
                body[key] = value;
            }
        }
        if !create.pull_secrets.is_empty() {
            body["pullSecrets"] = json!(create.pull_secrets);
        }
        let answer = client.post(&base, &body, &[]).await?;
        let pull: ImagePull = client.print(&answer, |p: &ImagePull| {
            format!("image pull {} started for {}: {}", p.id, p.request.images.join(", "), p.state.as_str())
        })?;
        if !create.wait {
            return Ok(ExitCode::SUCCESS);
        }
        let path = format!("{base}/{}", segment(&pull.id));
        let (body, state) = super::tasks::wait(&client, &path).await?;
        client.print(&body, describe)?;
        Ok(super::tasks::exit_code(state))
    })
}

/// The human form of an image pull.
fn describe(p: &ImagePull) -> String {
    let mut out = format!("image pull {}\n  state:   {}\n", p.id, p.state.as_str());
    if let Some(message) = &p.message {
        out.push_str(&format!("  message: {message}\n"));
    }
    out.push_str(&format!("  created: {} by {}\n", p.created_at.to_rfc3339(), p.created_by));
    for image in &p.images {
        out.push_str(&format!(
            "  {} (job {}): {}/{} nodes succeeded, {} failed, {} active{}\n",
            image.image,
            image.job,
            image.succeeded,
            image.desired,
            image.failed,
            image.active,
            if image.completed { ", completed" } else { "" }
        ));
        for node in &image.nodes {
            out.push_str(&format!(
                "    {:<20} {}{}\n",
                node.node,
                node.phase,
                node.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
            ));
        }
    }
    out
}
