//! `kruise apiserver`: the embedded API server on its own, for tests, benchmarks and tools that
//! want a Kubernetes API without the rest of the system.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

use anyhow::Context;
use clap::Args;
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};

/// Arguments of `kruise apiserver`.
#[derive(Args)]
pub struct ApiserverArgs {
    /// Address to listen on (`HOST:PORT`; port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:0")]
    bind: SocketAddr,
    /// Keep objects in this directory (each write is on disk before it is acknowledged).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Serve HTTPS with a generated CA (written into the kubeconfig).
    #[arg(long)]
    tls: bool,
    /// Where to write the kubeconfig (default: DATA_DIR/kubeconfig, or ./kubeconfig).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
}

/// Runs the server until Ctrl-C or SIGTERM.
pub fn run(args: &ApiserverArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging();
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let kubeconfig = args.kubeconfig.clone().unwrap_or_else(|| {
            args.data_dir.clone().unwrap_or_else(|| PathBuf::from(".")).join("kubeconfig")
        });
        let config = ApiServerConfig {
            bind: args.bind,
            data_dir: args.data_dir.clone(),
            tls: args.tls,
            kubeconfig_path: Some(kubeconfig.clone()),
            ..Default::default()
        };
        let server = ApiServer::start(config).await.context("starting the API server")?;
        println!("API server listening on {}", server.url);
        println!("export KUBECONFIG={}", kubeconfig.display());
        crate::shutdown_signal().await;
        server.shutdown().await;
        Ok(ExitCode::SUCCESS)
    })
}
