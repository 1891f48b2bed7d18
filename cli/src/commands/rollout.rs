//! `kruise rollout`: start, inspect, steer and follow rollouts through the service API (REST),
//! so an operator or a CI job needs no kubectl access to the cluster, only an API token.
//!
//! Workloads' rollouts are a namespace's (`-n`); a SidecarSet is cluster-scoped, so its rollouts
//! are started with `--workload SidecarSet/NAME` and followed with `--sidecarset NAME`.

use std::{collections::BTreeMap, process::ExitCode, time::Duration};

use anyhow::Context;
use clap::{Args, Subcommand};
use futures::StreamExt;
use kruise_api::{model::Rollout, store::RolloutState};
use serde_json::{Value, json};

use super::client::{
    Client, ConnectArgs, Output, ProblemError, SseParser, parse_int_or_percent, parse_pair,
    parse_rollout_target, segment,
};

/// Arguments of `kruise rollout`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  export KRUISE_API_URL=http://127.0.0.1:8080 KRUISE_API_TOKEN=$(cat .kruise/api-token)\n  \
kruise rollout start --workload CloneSet/web --image web=nginx:1.27 --partition 2 --watch\n  \
kruise rollout status r-0123 -o json\n  kruise rollout promote r-0123 --partition 0\n  kruise rollout watch r-0123\n  \
kruise rollout start --workload SidecarSet/logs --image agent=log-agent:2 --partition 50%\n  \
kruise rollout promote r-4567 --sidecarset logs"
)]
pub struct RolloutArgs {
    #[command(subcommand)]
    command: RolloutCommand,
    #[command(flatten)]
    connect: ConnectArgs,
    /// The namespace of the workload.
    #[arg(short, long, default_value = "default", env = "KRUISE_NAMESPACE", global = true)]
    namespace: String,
    /// Address the rollouts of this cluster-scoped SidecarSet instead of the namespace's
    /// (status, list, pause, resume, promote, abort, watch).
    #[arg(long, value_name = "NAME", global = true)]
    sidecarset: Option<String>,
}

#[derive(Subcommand)]
enum RolloutCommand {
    /// Start a rollout: new images (and resources, strategy) for a workload.
    Start(StartArgs),
    /// Show a rollout: state, progress, revisions, conditions and history.
    Status(IdArg),
    /// List the namespace's rollouts (or, with --sidecarset, a SidecarSet's), newest first.
    List(ListArgs),
    /// Pause a rollout (no more pods are updated until resume).
    Pause(IdArg),
    /// Resume a paused rollout.
    Resume(IdArg),
    /// Move the partition on (default: 0, every pod).
    Promote(PromoteArgs),
    /// Abort a rollout: roll the workload back to the previous revision.
    Abort(IdArg),
    /// Follow a rollout with a progress bar until it ends; exit 0 only when it succeeded.
    Watch(IdArg),
}

#[derive(Args)]
struct IdArg {
    /// The rollout id.
    id: String,
}

#[derive(Args)]
struct StartArgs {
    /// The workload: KIND/NAME (CloneSet, StatefulSet or DaemonSet), or SidecarSet/NAME to
    /// upgrade a SidecarSet's sidecars (images, partition, max unavailable and paused only).
    #[arg(long, value_name = "KIND/NAME", value_parser = parse_rollout_target)]
    workload: Value,
    /// New image of a container (of a SidecarSet: of a sidecar): CONTAINER=IMAGE (repeat for
    /// several containers).
    #[arg(long = "image", value_name = "CONTAINER=IMAGE", value_parser = parse_pair)]
    images: Vec<(String, String)>,
    /// New resource request of a container: CONTAINER.RESOURCE=QUANTITY (`web.cpu=500m`).
    #[arg(long = "request", value_name = "CONTAINER.RESOURCE=QUANTITY", value_parser = parse_pair)]
    requests: Vec<(String, String)>,
    /// New resource limit of a container: CONTAINER.RESOURCE=QUANTITY (`web.memory=1Gi`).
    #[arg(long = "limit", value_name = "CONTAINER.RESOURCE=QUANTITY", value_parser = parse_pair)]
    limits: Vec<(String, String)>,
    /// Pods kept at the previous revision (count or percentage); promote moves it on.
    #[arg(long, value_parser = parse_int_or_percent)]
    partition: Option<Value>,
    /// Pods that may be unavailable during the update (count or percentage).
    #[arg(long, value_parser = parse_int_or_percent)]
    max_unavailable: Option<Value>,
    /// Extra pods above the desired count during the update (count or percentage).
    #[arg(long, value_parser = parse_int_or_percent)]
    max_surge: Option<Value>,
    /// How pods move: ReCreate, InPlaceIfPossible or InPlaceOnly.
    #[arg(long, value_name = "POLICY")]
    pod_update_policy: Option<String>,
    /// Start paused.
    #[arg(long)]
    paused: bool,
    /// Pre-pull the new images on the workload's nodes first.
    #[arg(long)]
    pre_pull: bool,
    /// Why (kept in the audit).
    #[arg(long)]
    reason: Option<String>,
    /// Makes retries safe: the same key and body return the same rollout.
    #[arg(long, value_name = "KEY")]
    idempotency_key: Option<String>,
    /// Then follow it until it ends (as `kruise rollout watch`).
    #[arg(long)]
    watch: bool,
}

#[derive(Args)]
struct ListArgs {
    /// Only rollouts of this workload name.
    #[arg(long)]
    workload: Option<String>,
    /// Only rollouts in this state.
    #[arg(long)]
    state: Option<String>,
    /// Page size.
    #[arg(long)]
    limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    #[arg(long)]
    cursor: Option<String>,
}

#[derive(Args)]
struct PromoteArgs {
    /// The rollout id.
    id: String,
    /// The next partition (count or percentage); default 0 (every pod).
    #[arg(long, value_parser = parse_int_or_percent)]
    partition: Option<Value>,
}

/// Runs `kruise rollout`.
pub fn run(args: &RolloutArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging_quiet();
    let client = Client::new(&args.connect)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(rollout(&client, args))
}

/// The collection of the rollouts addressed: a SidecarSet's, or the namespace's.
fn collection(namespace: &str, sidecarset: Option<&str>) -> String {
    match sidecarset {
        Some(name) => format!("/v1/sidecarsets/{}/rollouts", segment(name)),
        None => format!("/v1/namespaces/{}/rollouts", segment(namespace)),
    }
}

/// The SidecarSet a `start --workload SidecarSet/NAME` names (`None`: a workload).
fn started_sidecarset(start: &StartArgs) -> Option<&str> {
    (start.workload["kind"] == "SidecarSet").then(|| start.workload["name"].as_str()).flatten()
}

async fn rollout(client: &Client, args: &RolloutArgs) -> anyhow::Result<ExitCode> {
    let base = collection(&args.namespace, args.sidecarset.as_deref());
    match &args.command {
        RolloutCommand::Start(start) => {
            let (base, body) = match started_sidecarset(start) {
                Some(name) => {
                    if args.sidecarset.as_deref().is_some_and(|other| other != name) {
                        anyhow::bail!(
                            "--sidecarset {:?} and --workload SidecarSet/{name} disagree",
                            args.sidecarset
                        );
                    }
                    (collection(&args.namespace, Some(name)), sidecarset_body(start)?)
                }
                None => (base, start_body(start)?),
            };
            let headers: Vec<(&str, String)> =
                start.idempotency_key.iter().map(|key| ("idempotency-key", key.clone())).collect();
            let answer = client.post(&base, &body, &headers).await?;
            let rollout: Rollout = client.print(&answer, |r: &Rollout| {
                let follow = if r.workload.kind.is_cluster_scoped() {
                    format!(" (follow it with --sidecarset {})", r.workload.name)
                } else {
                    String::new()
                };
                format!("rollout {} started for {}: {}{follow}", r.id, target(r), r.state.as_str())
            })?;
            if start.watch {
                return watch(client, &format!("{base}/{}", segment(&rollout.id))).await;
            }
            Ok(ExitCode::SUCCESS)
        }
        RolloutCommand::Status(IdArg { id }) => {
            let answer = client.get(&format!("{base}/{}", segment(id)), &[]).await?;
            client.print(&answer, describe)?;
            Ok(ExitCode::SUCCESS)
        }
        RolloutCommand::List(list) => {
            let mut query = Vec::new();
            if let Some(workload) = &list.workload {
                query.push(("workload", workload.clone()));
            }
            if let Some(state) = &list.state {
                query.push(("state", state.clone()));
            }
            if let Some(limit) = list.limit {
                query.push(("limit", limit.to_string()));
            }
            if let Some(cursor) = &list.cursor {
                query.push(("cursor", cursor.clone()));
            }
            let answer = client.get(&base, &query).await?;
            client.print(&answer, |list: &kruise_api::model::RolloutList| {
                let mut out = format!("{:<28} {:<28} {:<12} {}\n", "ID", "WORKLOAD", "STATE", "CREATED");
                for r in &list.items {
                    out.push_str(&format!(
                        "{:<28} {:<28} {:<12} {}\n",
                        r.id,
                        format!("{}/{}", workload_kind(r), r.workload.name),
                        r.state.as_str(),
                        r.created_at.format("%Y-%m-%d %H:%M:%S")
                    ));
                }
                if let Some(cursor) = &list.next_cursor {
                    out.push_str(&format!("more: --cursor {cursor}\n"));
                }
                out
            })?;
            Ok(ExitCode::SUCCESS)
        }
        RolloutCommand::Pause(IdArg { id }) => act(client, &base, id, "pause", &json!({})).await,
        RolloutCommand::Resume(IdArg { id }) => act(client, &base, id, "resume", &json!({})).await,
        RolloutCommand::Abort(IdArg { id }) => act(client, &base, id, "abort", &json!({})).await,
        RolloutCommand::Promote(promote) => {
            let body = match &promote.partition {
                Some(partition) => json!({"partition": partition}),
                None => json!({}),
            };
            act(client, &base, &promote.id, "promote", &body).await
        }
        RolloutCommand::Watch(IdArg { id }) => watch(client, &format!("{base}/{}", segment(id))).await,
    }
}

/// The body of a SidecarSet rollout: sidecar images and the strategy a SidecarSet has.
fn sidecarset_body(start: &StartArgs) -> anyhow::Result<Value> {
    for (flag, given) in [
        ("--request", !start.requests.is_empty()),
        ("--limit", !start.limits.is_empty()),
        ("--max-surge", start.max_surge.is_some()),
        ("--pod-update-policy", start.pod_update_policy.is_some()),
        ("--pre-pull", start.pre_pull),
    ] {
        if given {
            anyhow::bail!(
                "{flag} does not apply to a SidecarSet: its rollouts upgrade sidecar images in place \
                 (--image, --partition, --max-unavailable, --paused)"
            );
        }
    }
    let images: BTreeMap<&str, &str> = start.images.iter().map(|(c, i)| (c.as_str(), i.as_str())).collect();
    let mut strategy = serde_json::Map::new();
    for (key, value) in [
        ("partition", start.partition.clone()),
        ("maxUnavailable", start.max_unavailable.clone()),
        ("paused", start.paused.then_some(Value::Bool(true))),
    ] {
        if let Some(value) = value {
            strategy.insert(key.into(), value);
        }
    }
    let mut body = json!({"images": images});
    if !strategy.is_empty() {
        body["strategy"] = Value::Object(strategy);
    }
    if let Some(reason) = &start.reason {
        body["reason"] = Value::String(reason.clone());
    }
    Ok(body)
}

fn start_body(start: &StartArgs) -> anyhow::Result<Value> {
    let images: BTreeMap<&str, &str> = start.images.iter().map(|(c, i)| (c.as_str(), i.as_str())).collect();
    let mut resources: BTreeMap<String, BTreeMap<&str, BTreeMap<String, String>>> = BTreeMap::new();
    for (section, pairs) in [("requests", &start.requests), ("limits", &start.limits)] {
        for (key, quantity) in pairs {
            let (container, resource) = key.split_once('.').with_context(|| {
                format!("--{} takes CONTAINER.RESOURCE=QUANTITY, not {key:?}", &section[..section.len() - 1])
            })?;
            resources
                .entry(container.to_string())
                .or_default()
                .entry(section)
                .or_default()
                .insert(resource.to_string(), quantity.clone());
        }
    }
    let mut strategy = serde_json::Map::new();
    for (key, value) in [
        ("partition", start.partition.clone()),
        ("maxUnavailable", start.max_unavailable.clone()),
        ("maxSurge", start.max_surge.clone()),
        ("podUpdatePolicy", start.pod_update_policy.clone().map(Value::String)),
        ("paused", start.paused.then_some(Value::Bool(true))),
    ] {
        if let Some(value) = value {
            strategy.insert(key.into(), value);
        }
    }
    let mut body = json!({"workload": start.workload, "images": images});
    if !resources.is_empty() {
        body["resources"] = json!(resources);
    }
    if !strategy.is_empty() {
        body["strategy"] = Value::Object(strategy);
    }
    if start.pre_pull {
        body["prePull"] = Value::Bool(true);
    }
    if let Some(reason) = &start.reason {
        body["reason"] = Value::String(reason.clone());
    }
    Ok(body)
}

async fn act(client: &Client, base: &str, id: &str, action: &str, body: &Value) -> anyhow::Result<ExitCode> {
    let answer = client.post(&format!("{base}/{}/{action}", segment(id)), body, &[]).await?;
    client.print(&answer, |r: &Rollout| {
        format!("rollout {}: {} requested, now {}", r.id, action, r.state.as_str())
    })?;
    Ok(ExitCode::SUCCESS)
}

fn workload_kind(rollout: &Rollout) -> String {
    serde_json::to_value(rollout.workload.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// What a rollout drives: `CloneSet default/web`, or `SidecarSet logs` (cluster-scoped).
fn target(rollout: &Rollout) -> String {
    if rollout.workload.kind.is_cluster_scoped() {
        format!("{} {}", workload_kind(rollout), rollout.workload.name)
    } else {
        format!("{} {}/{}", workload_kind(rollout), rollout.namespace, rollout.workload.name)
    }
}

/// The human form of a rollout.
fn describe(r: &Rollout) -> String {
    let mut out =
        format!("rollout {}\n  workload:  {}\n  state:     {}\n", r.id, target(r), r.state.as_str());
    if let Some(message) = &r.message {
        out.push_str(&format!("  message:   {message}\n"));
    }
    if let Some(revision) = &r.revision {
        let previous = r.previous_revision.as_deref().unwrap_or("-");
        out.push_str(&format!("  revision:  {revision} (previous {previous})\n"));
    }
    let images: Vec<String> = r.request.images.iter().map(|(c, i)| format!("{c}={i}")).collect();
    out.push_str(&format!("  images:    {}\n", images.join(", ")));
    if let Some(p) = &r.progress {
        out.push_str(&format!(
            "  progress:  {}/{} updated ({} ready), {} ready of {}, partition {}{}\n",
            p.updated,
            p.expected_updated,
            p.updated_ready,
            p.ready,
            p.replicas,
            p.partition,
            if p.paused { ", paused" } else { "" }
        ));
    }
    out.push_str(&format!("  created:   {} by {}\n", r.created_at.to_rfc3339(), r.created_by));
    if let Some(finished) = r.finished_at {
        out.push_str(&format!("  finished:  {}\n", finished.to_rfc3339()));
    }
    for condition in &r.conditions {
        out.push_str(&format!(
            "  condition: {}={} {} {}\n",
            condition.type_, condition.status, condition.reason, condition.message
        ));
    }
    if !r.history.is_empty() {
        out.push_str("  history:\n");
        for t in &r.history {
            let from = t.from.map(RolloutState::as_str).unwrap_or("-");
            out.push_str(&format!(
                "    {} {from} -> {} by {} ({}){}\n",
                t.time.format("%Y-%m-%d %H:%M:%S"),
                t.to.as_str(),
                t.actor,
                t.reason,
                t.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
            ));
        }
    }
    out
}

/// Follows `GET {path}/events` until a terminal state: a progress bar on stderr (a line per
/// change when stderr is no terminal), the final state on stdout (or every event's JSON with
/// `-o json`). Exit 0 only on Succeeded.
async fn watch(client: &Client, path: &str) -> anyhow::Result<ExitCode> {
    let response = client.events(&format!("{path}/events")).await?;
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {prefix} [{bar:30}] {pos}/{len} updated ready {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut parser = SseParser::default();
    let mut stream = response.bytes_stream();
    let mut last_line = String::new();
    let mut last: Option<Rollout> = None;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.context("the event stream broke")?;
        for event in parser.feed(&chunk) {
            match event.event.as_str() {
                "rollout" => {
                    let rollout: Rollout =
                        serde_json::from_str(&event.data).context("an event is not a rollout")?;
                    if client.output == Output::Json {
                        bar.suspend(|| println!("{}", event.data));
                    }
                    let (done, total) = rollout
                        .progress
                        .as_ref()
                        .map(|p| (p.updated_ready.max(0), p.expected_updated.max(0)))
                        .unwrap_or((0, 0));
                    bar.set_prefix(format!("{} {}", rollout.id, rollout.state.as_str()));
                    bar.set_length(u64::try_from(total).unwrap_or(0));
                    bar.set_position(u64::try_from(done).unwrap_or(0));
                    bar.set_message(rollout.message.clone().unwrap_or_default());
                    let line = format!(
                        "{} {} {done}/{total} updated ready{}",
                        rollout.id,
                        rollout.state.as_str(),
                        rollout.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
                    );
                    if bar.is_hidden() && line != last_line {
                        eprintln!("{line}");
                    }
                    last_line = line;
                    let terminal = rollout.state.is_terminal();
                    last = Some(rollout);
                    if terminal {
                        break;
                    }
                }
                "error" => {
                    bar.finish_and_clear();
                    let problem =
                        ProblemError::from_body(reqwest::StatusCode::INTERNAL_SERVER_ERROR, &event.data);
                    return Err(problem.into());
                }
                _ => {}
            }
        }
        if last.as_ref().is_some_and(|r| r.state.is_terminal()) {
            break;
        }
    }
    bar.finish_and_clear();
    let Some(rollout) = last else {
        anyhow::bail!("the event stream ended without any rollout event");
    };
    if client.output == Output::Human {
        println!(
            "rollout {} {}{}",
            rollout.id,
            rollout.state.as_str(),
            rollout.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
        );
    }
    match rollout.state {
        RolloutState::Succeeded => Ok(ExitCode::SUCCESS),
        state if state.is_terminal() => Ok(ExitCode::from(1)),
        state => anyhow::bail!("the event stream ended while the rollout was {}", state.as_str()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Start {
        #[command(flatten)]
        start: StartArgs,
    }

    fn start(args: &[&str]) -> StartArgs {
        Start::try_parse_from(std::iter::once("start").chain(args.iter().copied())).unwrap().start
    }

    #[test]
    fn sidecarset_rollouts_have_their_own_collection_and_body() {
        assert_eq!(collection("default", None), "/v1/namespaces/default/rollouts");
        assert_eq!(collection("default", Some("logs")), "/v1/sidecarsets/logs/rollouts");
        let args = start(&[
            "--workload",
            "SidecarSet/logs",
            "--image",
            "agent=log-agent:2",
            "--partition",
            "50%",
            "--max-unavailable",
            "1",
            "--paused",
            "--reason",
            "agent 2",
        ]);
        assert_eq!(started_sidecarset(&args), Some("logs"));
        assert_eq!(
            sidecarset_body(&args).unwrap(),
            json!({"images": {"agent": "log-agent:2"},
                   "strategy": {"partition": "50%", "maxUnavailable": 1, "paused": true},
                   "reason": "agent 2"})
        );
        let workload = start(&["--workload", "CloneSet/web", "--image", "nginx=nginx:1.27"]);
        assert_eq!(started_sidecarset(&workload), None);
        for extra in [
            &["--request", "agent.cpu=100m"][..],
            &["--max-surge", "1"],
            &["--pod-update-policy", "ReCreate"],
            &["--pre-pull"],
        ] {
            let mut argv = vec!["--workload", "SidecarSet/logs", "--image", "agent=log-agent:2"];
            argv.extend_from_slice(extra);
            let error = sidecarset_body(&start(&argv)).unwrap_err().to_string();
            assert!(error.contains(extra[0]) && error.contains("SidecarSet"), "{error}");
        }
    }
}
