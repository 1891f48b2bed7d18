//! `kruise crds`: the CRD manifests, as multi-document YAML or one file per CRD.

use std::{io::Write, path::PathBuf, process::ExitCode};

use anyhow::Context;
use clap::Args;
use kruise_crds::crd::all_crds;

/// Arguments of `kruise crds`.
#[derive(Args)]
pub struct CrdsArgs {
    /// Write one file per CRD (`<plural>.<group>.yaml`) into this directory instead of printing.
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
}

/// Prints or writes the CRDs.
pub fn run(args: &CrdsArgs) -> anyhow::Result<ExitCode> {
    let crds = all_crds().context("building CRD schemas")?;
    match &args.output_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for crd in &crds {
                let name = crd.metadata.name.clone().unwrap_or_default();
                let path = dir.join(format!("{name}.yaml"));
                let text = serde_yaml::to_string(crd).context("rendering CRD")?;
                std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            }
            eprintln!("wrote {} CRDs to {}", crds.len(), dir.display());
        }
        None => {
            let mut out = std::io::stdout().lock();
            for crd in &crds {
                writeln!(out, "---")?;
                out.write_all(serde_yaml::to_string(crd).context("rendering CRD")?.as_bytes())?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
