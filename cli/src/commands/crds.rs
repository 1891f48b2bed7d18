//! `kruise crds`: the CRD manifests, as multi-document YAML or one file per CRD.

use std::{io::Write, path::PathBuf, process::ExitCode};

use anyhow::Context;
use clap::Args;
use kruise_crds::crd::all_crds;

/// Arguments of `kruise crds`.
#[derive(Args)]
pub struct CrdsArgs {
    /// Write one file per CRD (`<plural>.<group>.yaml`) into this directory instead of printing.
    #[arg(long, value_name = "DIR", conflicts_with = "install")]
    output_dir: Option<PathBuf>,
    /// Apply the CRDs to the cluster (server-side apply, field manager `kruise`) and wait until
    /// each is Established, instead of printing them.
    #[arg(long)]
    install: bool,
    /// Kubeconfig of the cluster for `--install` (default: $KUBECONFIG, ~/.kube/config, or
    /// in-cluster).
    #[arg(long, value_name = "FILE", requires = "install")]
    kubeconfig: Option<PathBuf>,
}

/// Prints or writes the CRDs.
pub fn run(args: &CrdsArgs) -> anyhow::Result<ExitCode> {
    if args.install {
        return install(args);
    }
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

fn install(args: &CrdsArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging();
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let client = super::nodes::client_from(args.kubeconfig.as_ref()).await?;
        eprintln!("[1/2] applying the CRDs");
        let names = super::up::install_crds(&client).await?;
        eprintln!("[2/2] waiting until {} CRDs are Established", names.len());
        super::up::wait_crds_established(&client, &names).await?;
        eprintln!("installed {} CRDs; all Established", names.len());
        Ok(ExitCode::SUCCESS)
    })
}
