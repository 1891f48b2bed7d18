//! `kruise`: the one binary of kruise-rs. Subcommands run the parts of the system (the embedded
//! control plane, the manager, the node daemon, the service API) and the tools around them.

mod commands;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// OpenKruise rebuilt in Rust.
#[derive(Parser)]
#[command(name = "kruise", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the whole system on this machine: API server, simulated nodes, and every component.
    Up(commands::up::UpArgs),
    /// Print the CustomResourceDefinitions of every Kruise kind.
    Crds(commands::crds::CrdsArgs),
    /// Check Kruise manifests offline: parse, default and validate every Kruise object.
    Validate(commands::validate::ValidateArgs),
    /// Run only the embedded Kubernetes-compatible API server.
    Apiserver(commands::apiserver::ApiserverArgs),
    /// Run the Kruise controllers and webhook server against a cluster.
    Manager(commands::manager::ManagerArgs),
    /// Run simulated nodes (kubelet + CRI each, optionally the scheduler) against an API server.
    Nodes(commands::nodes::NodesArgs),
    /// Run the service API (REST and gRPC: rollouts, pre-pulls, recreates, job runs, audit) against a
    /// cluster; print its OpenAPI document.
    Api(commands::api::ApiArgs),
    /// Run the node daemon (kruise-daemon) of one node: image pre-pull over the node's CRI.
    Daemon(commands::daemon::DaemonArgs),
    /// Start, follow and steer rollouts through the service API (client).
    Rollout(commands::rollout::RolloutArgs),
    /// Pre-pull images on nodes through the service API (client).
    Prepull(commands::prepull::PrepullArgs),
    /// Recreate (restart) containers through the service API (client).
    Recreate(commands::recreate::RecreateArgs),
    /// Run an AdvancedCronJob now through the service API (client).
    Cronjob(commands::cronjob::CronjobArgs),
    /// Show a BroadcastJob's result on each node through the service API (client).
    Broadcastjob(commands::broadcastjob::BroadcastjobArgs),
    /// Query the service API's audit history (client).
    Audit(commands::audit::AuditArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Crds(args) => commands::crds::run(&args),
        Command::Validate(args) => commands::validate::run(&args),
        Command::Apiserver(args) => commands::apiserver::run(&args),
        Command::Up(args) => commands::up::run(&args),
        Command::Nodes(args) => commands::nodes::run(&args),
        Command::Manager(args) => commands::manager::run(&args),
        Command::Api(args) => commands::api::run(&args),
        Command::Daemon(args) => commands::daemon::run(&args),
        Command::Rollout(args) => commands::rollout::run(&args),
        Command::Prepull(args) => commands::prepull::run(&args),
        Command::Recreate(args) => commands::recreate::run(&args),
        Command::Cronjob(args) => commands::cronjob::run(&args),
        Command::Broadcastjob(args) => commands::broadcastjob::run(&args),
        Command::Audit(args) => commands::audit::run(&args),
    };
    match result {
        Ok(code) => code,
        // The server refused (a problem document): exit 1, as a failed rollout does; anything
        // else (bad arguments, unreachable server, local failures) exits 2.
        Err(error) if error.downcast_ref::<commands::client::ProblemError>().is_some() => {
            eprintln!("error: {error:#}");
            ExitCode::from(1)
        }
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// Structured logs to stderr, filtered by `RUST_LOG` (default `info`).
pub(crate) fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// Logs of the client subcommands: warnings only unless `RUST_LOG` asks for more, so that their
/// output stays what the user asked for.
pub(crate) fn init_logging_quiet() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// Completes on Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => {
                let _ = ctrl_c.await;
                return;
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
