//! `kruise api`: the service API (REST and gRPC) against any cluster, with PostgreSQL (or SQLite) as the
//! audit store and bearer tokens from a tokens file. `kruise api openapi` prints the OpenAPI
//! document; `kruise api hash-token` prints the hash a tokens file keeps for a token. `kruise up`
//! runs the same server in process ([`start_embedded`]).

use std::{
    io::{BufRead, Write},
    net::SocketAddr,
    os::unix::fs::{OpenOptionsExt, PermissionsExt},
    path::{Path, PathBuf},
    process::ExitCode,
    time::Duration,
};

use anyhow::Context;
use clap::{Args, Subcommand};
use kruise_api::{ApiOptions, ApiServer, Store, TokenRegistry, auth};

/// Arguments of `kruise api`.
#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Example:\n  kruise api --kubeconfig ~/.kube/config --database-url postgres://kruise@db/kruise \\\n    \
--tokens-file tokens.yaml --rest-addr 0.0.0.0:8080 --grpc-addr 0.0.0.0:9090\n\nTokens file (YAML or JSON; hashes from `kruise api hash-token`):\n  \
tokens:\n    - name: ci-pipeline\n      hash: sha256:<64 hex>\n      namespaces: [default, staging]   # or \"*\"\n      \
actions: [rollout, audit-read]      # rollout, image-pull, recreate, job, job-read, audit-read; or \"*\""
)]
pub struct ApiArgs {
    #[command(subcommand)]
    command: Option<ApiCommand>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand)]
enum ApiCommand {
    /// Print the OpenAPI document of the REST API (what openapi/kruise-api.json holds).
    Openapi,
    /// Print the `sha256:` hash of a token (read from stdin) for the tokens file.
    HashToken(HashTokenArgs),
}

/// Arguments of `kruise api hash-token`.
#[derive(Args)]
struct HashTokenArgs {
    /// Make a new random token and print it with its hash (instead of reading one from stdin).
    #[arg(long)]
    generate: bool,
}

/// Arguments of the server.
#[derive(Args)]
struct ServeArgs {
    /// Kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config, or in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Where REST is served (port 0 picks a free port).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080", env = "KRUISE_API_REST_ADDR")]
    rest_addr: SocketAddr,
    /// Where gRPC is served (package kruise.api.v1, with server reflection; port 0 picks a free
    /// port).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:9090", env = "KRUISE_API_GRPC_ADDR")]
    grpc_addr: SocketAddr,
    /// The audit store: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (production) or
    /// `sqlite:PATH` (single replica). Migrations run at start.
    #[arg(long, value_name = "URL", env = "KRUISE_API_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// The tokens file (YAML or JSON): name, hash, namespaces and actions of each token.
    #[arg(long, value_name = "FILE", env = "KRUISE_API_TOKENS_FILE")]
    tokens_file: Option<PathBuf>,
    /// Do not run the rollout watcher in this replica (another replica records transitions).
    #[arg(long)]
    no_watcher: bool,
}

/// Runs `kruise api` (the server until Ctrl-C or SIGTERM, or a subcommand).
pub fn run(args: &ApiArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        Some(ApiCommand::Openapi) => {
            println!("{}", kruise_api::rest::openapi_json());
            Ok(ExitCode::SUCCESS)
        }
        Some(ApiCommand::HashToken(hash)) => hash_token(hash),
        None => serve(&args.serve),
    }
}

fn hash_token(args: &HashTokenArgs) -> anyhow::Result<ExitCode> {
    if args.generate {
        let token = auth::generate_token();
        println!("token: {token}");
        println!("hash:  {}", auth::hash_token(&token));
        eprintln!("Give the token to its user; put only the hash in the tokens file.");
        return Ok(ExitCode::SUCCESS);
    }
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).context("reading the token from stdin")?;
    let token = line.trim_end_matches(['\r', '\n']);
    if token.is_empty() {
        anyhow::bail!("no token on stdin (or use --generate)");
    }
    if token.len() < 16 {
        eprintln!("warning: a token shorter than 16 characters is easy to guess");
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", auth::hash_token(token))?;
    Ok(ExitCode::SUCCESS)
}

fn serve(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    crate::init_logging();
    let url = args
        .database_url
        .clone()
        .context("--database-url is required: postgres://USER@HOST/DB (production) or sqlite:PATH")?;
    let tokens_file =
        args.tokens_file.clone().context("--tokens-file is required (see `kruise api --help`)")?;
    let tokens = TokenRegistry::load(&tokens_file)?;
    if tokens.is_empty() {
        anyhow::bail!("{} lists no token: every request would be refused", tokens_file.display());
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let client = super::nodes::client_from(args.kubeconfig.as_ref()).await?;
        let store = connect_store(&url).await?;
        let options = ApiOptions {
            rest_addr: args.rest_addr,
            grpc_addr: Some(args.grpc_addr),
            watcher: !args.no_watcher,
            ..Default::default()
        };
        let server = ApiServer::start(client, store, tokens, options).await?;
        let grpc = server.grpc_url().unwrap_or_default();
        println!("service API listening on {} (REST) and {grpc} (gRPC)", server.rest_url());
        tracing::info!(url = %server.rest_url(), grpc = %grpc, docs = %format!("{}/docs/", server.rest_url()), "serving the service API");
        crate::shutdown_signal().await;
        server.shutdown().await;
        Ok(ExitCode::SUCCESS)
    })
}

/// Connects to the store, retrying for up to 30 s while it is starting. The URL is never logged
/// (it may hold a password).
async fn connect_store(url: &str) -> anyhow::Result<Store> {
    let mut attempt = 0;
    loop {
        match Store::connect(url).await {
            Ok(store) => return Ok(store),
            Err(kruise_api::store::StoreError::Database(error)) if attempt < 30 => {
                attempt += 1;
                tracing::warn!(%error, attempt, "the store is not reachable yet; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(error) => return Err(error).context("opening the store"),
        }
    }
}

/// The service API as `kruise up` runs it: an admin token kept in `DATA_DIR/api-token` (mode
/// 0600; made on first start, reused when resuming) and, without `database_url`, an SQLite
/// store in `DATA_DIR/api/audit.db`. Returns the server and the token file's path.
pub(crate) async fn start_embedded(
    client: kube::Client,
    data_dir: &Path,
    rest_addr: SocketAddr,
    grpc_addr: SocketAddr,
    database_url: Option<&str>,
) -> anyhow::Result<(ApiServer, PathBuf)> {
    let token_path = data_dir.join("api-token");
    let token = admin_token(&token_path)?;
    let store = match database_url {
        Some(url) => connect_store(url).await?,
        None => {
            let dir = data_dir.join("api");
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            Store::open_sqlite(&dir.join("audit.db")).await.context("opening the SQLite audit store")?
        }
    };
    let options = ApiOptions { rest_addr, grpc_addr: Some(grpc_addr), ..Default::default() };
    let server = ApiServer::start(client, store, TokenRegistry::admin("admin", &token), options)
        .await
        .with_context(|| format!("starting the service API on {rest_addr} (REST) and {grpc_addr} (gRPC)"))?;
    Ok((server, token_path))
}

/// The admin token in `path`, made (mode 0600) when the file does not exist yet.
fn admin_token(path: &Path) -> anyhow::Result<String> {
    if let Ok(text) = std::fs::read_to_string(path) {
        let token = text.trim().to_string();
        if !token.is_empty() {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .with_context(|| format!("restricting {}", path.display()))?;
            return Ok(token);
        }
    }
    let token = auth::generate_token();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("restricting {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("writing {}", path.display()))?;
    Ok(token)
}
