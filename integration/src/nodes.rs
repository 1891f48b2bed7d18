//! Simulated nodes for scenarios, hosted two ways: in the test process
//! ([`kruise_controlplane::nodes::Simulation`]) or as separate `kruise nodes` processes that only
//! know the cluster's kubeconfig (one process per node, and one for the scheduler, so that a
//! single node can be killed). Both are plain API clients, so the same scenario runs on either
//! tier with either hosting. On the real tier kube-scheduler schedules, so no simulated scheduler
//! is started there.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::Node;
use kruise_controlplane::nodes::{SchedulerConfig, Simulation, SimulationConfig};
use kube::{Api, api::ListParams};

use crate::{Cluster, HarnessError, Tier};

/// How the simulated nodes run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hosting {
    /// In the test process.
    InProcess,
    /// As `kruise nodes` processes pointed at the cluster's kubeconfig.
    Process,
}

/// The node heartbeat the scenarios use (the real tier's node monitor grace is a few seconds).
pub const SCENARIO_HEARTBEAT: Duration = Duration::from_millis(1000);

/// The `kruise` binary: `$KRUISE_BIN`, else the one cargo built next to the test executable.
pub fn kruise_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("KRUISE_BIN") {
        return Some(PathBuf::from(path));
    }
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<test> -> target/<profile>/kruise
    let candidate = exe.parent()?.parent()?.join("kruise");
    candidate.exists().then_some(candidate)
}

/// The newest modification time of the sources the `kruise` binary is built from.
fn newest_source() -> Option<std::time::SystemTime> {
    fn walk(dir: &Path, newest: &mut Option<std::time::SystemTime>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, newest);
            } else if let Ok(modified) = entry.metadata().and_then(|m| m.modified()) {
                *newest = Some(newest.map_or(modified, |n: std::time::SystemTime| n.max(modified)));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let mut newest = None;
    for crate_dir in ["cli", "controllers", "controlplane", "crds", "node-daemon"] {
        walk(&root.join(crate_dir).join("src"), &mut newest);
    }
    newest
}

/// The `kruise` binary, refusing one older than its sources (a stale binary would test old
/// code; `cargo test --workspace` builds it first, `cargo build -p kruise` refreshes it).
pub fn fresh_kruise_binary() -> Result<PathBuf, HarnessError> {
    let binary = kruise_binary().ok_or_else(|| {
        HarnessError::Nodes("no kruise binary (cargo build -p kruise, or set KRUISE_BIN)".into())
    })?;
    if std::env::var_os("KRUISE_BIN").is_none() {
        let built = std::fs::metadata(&binary).and_then(|m| m.modified()).ok();
        if let (Some(built), Some(source)) = (built, newest_source())
            && built < source
        {
            return Err(HarnessError::Nodes(format!(
                "{} is older than its sources; run `cargo build -p kruise` (or test with --workspace)",
                binary.display()
            )));
        }
    }
    Ok(binary)
}

struct NodeProcess {
    name: String,
    child: Child,
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

enum Host {
    InProcess(Simulation),
    Process(Vec<NodeProcess>),
}

/// Running simulated nodes.
pub struct SimNodes {
    host: Option<Host>,
    names: Vec<String>,
    cri_dir: tempfile::TempDir,
}

impl SimNodes {
    /// Starts `count` nodes (`sim-node-1`...) for `cluster`, plus the simulated scheduler on the
    /// embedded tier, and waits until they are Ready and schedulable.
    pub async fn start(cluster: &Cluster, hosting: Hosting, count: u32) -> Result<Self, HarnessError> {
        // Short socket paths: a unix socket path must fit in 108 bytes.
        let cri_dir = tempfile::Builder::new()
            .prefix("kcri-")
            .tempdir_in("/tmp")
            .map_err(HarnessError::io("creating the CRI socket directory"))?;
        let scheduler = cluster.tier() == Tier::Embedded;
        let names: Vec<String> = (1..=count).map(|n| format!("sim-node-{n}")).collect();
        let host = match hosting {
            Hosting::InProcess => {
                let mut config = SimulationConfig {
                    nodes: count,
                    cri_dir: Some(cri_dir.path().to_path_buf()),
                    scheduler: scheduler.then(SchedulerConfig::default),
                    ..Default::default()
                };
                config.timing.heartbeat = SCENARIO_HEARTBEAT;
                let simulation = Simulation::start(cluster.client(), &config)
                    .await
                    .map_err(|error| HarnessError::Nodes(error.to_string()))?;
                Host::InProcess(simulation)
            }
            Hosting::Process => {
                let binary = fresh_kruise_binary()?;
                let mut processes = Vec::new();
                for n in 1..=count {
                    processes.push(spawn_nodes(
                        &binary,
                        cluster.kubeconfig_path(),
                        cri_dir.path(),
                        n,
                        1,
                        false,
                    )?);
                }
                if scheduler {
                    processes.push(spawn_nodes(
                        &binary,
                        cluster.kubeconfig_path(),
                        cri_dir.path(),
                        1,
                        0,
                        true,
                    )?);
                }
                Host::Process(processes)
            }
        };
        let nodes = Self { host: Some(host), names, cri_dir };
        nodes.wait_ready(cluster).await?;
        Ok(nodes)
    }

    async fn wait_ready(&self, cluster: &Cluster) -> Result<(), HarnessError> {
        let api: Api<Node> = Api::all(cluster.client());
        let started = Instant::now();
        loop {
            let list =
                api.list(&ListParams::default()).await.map_err(|e| HarnessError::Nodes(e.to_string()))?;
            let ready = list
                .items
                .iter()
                .filter(|node| self.names.iter().any(|n| node.metadata.name.as_ref() == Some(n)))
                .filter(|node| {
                    let conditions =
                        node.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
                    let taints = node.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default();
                    conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True")
                        && !taints.iter().any(|t| t.key.starts_with("node.kubernetes.io/"))
                })
                .count();
            if ready == self.names.len() {
                return Ok(());
            }
            if started.elapsed() > Duration::from_secs(60) {
                return Err(HarnessError::Timeout {
                    what: "the simulated nodes to be Ready".into(),
                    waited: started.elapsed(),
                    last: format!("{ready} of {} ready", self.names.len()),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The node names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The CRI socket of a node.
    pub fn cri_socket(&self, node: &str) -> PathBuf {
        self.cri_dir.path().join(format!("{node}.sock"))
    }

    /// Stops one node's kubelet as if the machine died (no more heartbeats); its Node and pods
    /// stay in the API.
    pub async fn kill_node(&mut self, node: &str) -> bool {
        match self.host.as_mut() {
            Some(Host::InProcess(simulation)) => simulation.stop_node(node).await,
            Some(Host::Process(processes)) => match processes.iter().position(|p| p.name == node) {
                Some(index) => {
                    drop(processes.remove(index));
                    true
                }
                None => false,
            },
            None => false,
        }
    }

    /// Scripts the exit code of `command` (its words joined by spaces) run by CRI `ExecSync` in
    /// the containers named `container` on `node` (`None` removes the script, so the command
    /// runs by the simulated runtime's conventions again). This is how a scenario flips the
    /// result of an exec probe while the daemon runs it; only in-process nodes can be scripted
    /// (returns `false` for nodes run as processes, or an unknown node).
    pub fn script_exec(&self, node: &str, container: &str, command: &str, exit_code: Option<i32>) -> bool {
        let Some(Host::InProcess(simulation)) = self.host.as_ref() else { return false };
        let Some(sim_node) = simulation.node(node) else { return false };
        let result = exit_code.map(|exit_code| kruise_controlplane::nodes::runtime::ExecResult {
            exit_code,
            stdout: String::new(),
            stderr: if exit_code == 0 {
                String::new()
            } else {
                format!("{command}: exit status {exit_code}")
            },
        });
        sim_node.runtime().script_exec(container, command, result);
        true
    }

    /// Stops every node (and the scheduler).
    pub async fn shutdown(mut self) {
        match self.host.take() {
            Some(Host::InProcess(simulation)) => simulation.stop().await,
            Some(Host::Process(processes)) => drop(processes),
            None => {}
        }
    }
}

fn spawn_nodes(
    binary: &Path,
    kubeconfig: &Path,
    cri_dir: &Path,
    first: u32,
    count: u32,
    scheduler: bool,
) -> Result<NodeProcess, HarnessError> {
    let mut command = Command::new(binary);
    command
        .args(["nodes", "--count", &count.to_string(), "--first", &first.to_string()])
        .args(["--heartbeat-ms", &SCENARIO_HEARTBEAT.as_millis().to_string()])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cri-dir")
        .arg(cri_dir)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    if scheduler {
        command.arg("--scheduler");
    }
    let name = if count == 0 { "scheduler".to_string() } else { format!("sim-node-{first}") };
    let child = command
        .spawn()
        .map_err(|source| HarnessError::Spawn { name: format!("kruise nodes ({name})"), source })?;
    Ok(NodeProcess { name, child })
}
