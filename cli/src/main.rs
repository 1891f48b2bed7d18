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
    /// Print the CustomResourceDefinitions of every Kruise kind.
    Crds(commands::crds::CrdsArgs),
    /// Check Kruise manifests offline: parse, default and validate every Kruise object.
    Validate(commands::validate::ValidateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Crds(args) => commands::crds::run(&args),
        Command::Validate(args) => commands::validate::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
