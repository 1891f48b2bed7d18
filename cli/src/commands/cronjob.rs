//! `kruise cronjob run NAME`: run an AdvancedCronJob now, outside its schedule, through the
//! service API (as `kubectl create job --from=cronjob/NAME` does for a CronJob). The run is the
//! Job, BroadcastJob or ImageListPullJob of the AdvancedCronJob's template, owned by it.

use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use kruise_api::model::CronJobRun;
use serde_json::{Value, json};

use super::client::{Client, ConnectArgs, segment};

/// Arguments of `kruise cronjob`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  kruise cronjob run nightly --reason \"re-run after the 02:00 failure\"\n  \
kruise cronjob run nightly --idempotency-key release-42 -o json\n  \
kruise broadcastjob results $(kruise cronjob run warm-cache -o json | jq -r .name)"
)]
pub struct CronjobArgs {
    #[command(subcommand)]
    command: CronjobCommand,
    #[command(flatten)]
    connect: ConnectArgs,
    /// The namespace of the AdvancedCronJob.
    #[arg(short, long, default_value = "default", env = "KRUISE_NAMESPACE", global = true)]
    namespace: String,
}

#[derive(Subcommand)]
enum CronjobCommand {
    /// Run an AdvancedCronJob now: create its Job, BroadcastJob or ImageListPullJob from the
    /// template (named NAME-manual-xxxxx; the schedule and lastScheduleTime are untouched).
    Run(RunArgs),
}

#[derive(Args)]
struct RunArgs {
    /// The AdvancedCronJob.
    name: String,
    /// Why (kept in the audit).
    #[arg(long)]
    reason: Option<String>,
    /// Makes retries safe: the same key (from the same token) answers with the same run
    /// instead of creating another.
    #[arg(long, value_name = "KEY")]
    idempotency_key: Option<String>,
}

/// The body of a run request.
fn run_body(args: &RunArgs) -> Value {
    match &args.reason {
        Some(reason) => json!({"reason": reason}),
        None => json!({}),
    }
}

/// Runs `kruise cronjob`.
pub fn run(args: &CronjobArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging_quiet();
    let client = Client::new(&args.connect)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        match &args.command {
            CronjobCommand::Run(run) => {
                let path = format!(
                    "/v1/namespaces/{}/advancedcronjobs/{}/runs",
                    segment(&args.namespace),
                    segment(&run.name)
                );
                let headers: Vec<(&str, String)> =
                    run.idempotency_key.iter().map(|key| ("Idempotency-Key", key.clone())).collect();
                let answer = client.post(&path, &run_body(run), &headers).await?;
                client.print(&answer, describe)?;
                Ok(ExitCode::SUCCESS)
            }
        }
    })
}

/// The human form of a run.
fn describe(run: &CronJobRun) -> String {
    format!(
        "{}/{} created from AdvancedCronJob {} in namespace {}",
        run.kind.as_str(),
        run.name,
        run.advanced_cron_job,
        run.namespace
    )
}

#[cfg(test)]
mod tests {
    use kruise_api::model::JobKind;

    use super::*;

    #[test]
    fn bodies_carry_the_reason_only_when_given() {
        let args = |reason: Option<&str>| RunArgs {
            name: "nightly".into(),
            reason: reason.map(str::to_string),
            idempotency_key: None,
        };
        assert_eq!(run_body(&args(None)), json!({}));
        assert_eq!(run_body(&args(Some("re-run"))), json!({"reason": "re-run"}));
    }

    #[test]
    fn a_run_reads_as_what_was_created() {
        let run = CronJobRun {
            namespace: "batch".into(),
            advanced_cron_job: "nightly".into(),
            kind: JobKind::BroadcastJob,
            api_version: "apps.kruise.io/v1beta1".into(),
            name: "nightly-manual-x7k2p".into(),
            uid: "u".into(),
            created_at: None,
            labels: Default::default(),
            annotations: Default::default(),
        };
        assert_eq!(
            describe(&run),
            "BroadcastJob/nightly-manual-x7k2p created from AdvancedCronJob nightly in namespace batch"
        );
    }
}
