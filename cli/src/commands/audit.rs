//! `kruise audit`: query the service API's audit history (who asked for what, and how it
//! ended), newest first, with the server's filters.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use kruise_api::model::AuditList;

use super::client::{Client, ConnectArgs};

/// Arguments of `kruise audit`.
#[derive(Args)]
#[command(after_help = "Examples:\n  kruise audit --limit 20\n  \
kruise audit --action rollout --outcome rejected --since 2026-01-01T00:00:00Z -o json | jq '.items[].actor'")]
pub struct AuditArgs {
    #[command(flatten)]
    connect: ConnectArgs,
    /// Only this namespace.
    #[arg(short, long)]
    namespace: Option<String>,
    /// Only this actor (token name, or `anonymous`).
    #[arg(long)]
    actor: Option<String>,
    /// Only this action (`rollout.create`), or every action on a resource (`rollout`).
    #[arg(long)]
    action: Option<String>,
    /// Only this target (`CloneSet/web`).
    #[arg(long)]
    target: Option<String>,
    /// Only this outcome: pending, accepted, rejected, denied, unauthenticated or failed.
    #[arg(long)]
    outcome: Option<String>,
    /// At or after this time (RFC 3339).
    #[arg(long)]
    since: Option<String>,
    /// Before this time (RFC 3339).
    #[arg(long)]
    until: Option<String>,
    /// Page size (1-500, default 50).
    #[arg(long)]
    limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    #[arg(long)]
    cursor: Option<String>,
}

/// Runs `kruise audit`.
pub fn run(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging_quiet();
    let client = Client::new(&args.connect)?;
    let mut query = Vec::new();
    for (key, value) in [
        ("namespace", &args.namespace),
        ("actor", &args.actor),
        ("action", &args.action),
        ("target", &args.target),
        ("outcome", &args.outcome),
        ("since", &args.since),
        ("until", &args.until),
        ("cursor", &args.cursor),
    ] {
        if let Some(value) = value {
            query.push((key, value.clone()));
        }
    }
    if let Some(limit) = args.limit {
        query.push(("limit", limit.to_string()));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let answer = client.get("/v1/audit", &query).await?;
        client.print(&answer, |list: &AuditList| {
            let mut out = format!(
                "{:<20} {:<16} {:<18} {:<28} {:<16} {}\n",
                "TIME", "ACTOR", "ACTION", "TARGET", "OUTCOME", "STATUS"
            );
            for r in &list.items {
                let target = match &r.namespace {
                    Some(namespace) => format!("{namespace}/{}", r.target),
                    None => r.target.clone(),
                };
                out.push_str(&format!(
                    "{:<20} {:<16} {:<18} {:<28} {:<16} {}\n",
                    r.time.format("%Y-%m-%d %H:%M:%S"),
                    r.actor,
                    r.action,
                    target,
                    r.outcome.as_str(),
                    r.http_status
                ));
            }
            if let Some(cursor) = &list.next_cursor {
                out.push_str(&format!("more: --cursor {cursor}\n"));
            }
            out
        })?;
        Ok(ExitCode::SUCCESS)
    })
}
