//! Simulated nodes: a scheduler, and per node a kubelet and a container runtime with a CRI
//! server. They are plain Kubernetes API clients (`kube::Client`), so they run the same against
//! the embedded API server and against a real kube-apiserver, in process or as a separate
//! process started with a kubeconfig.

pub mod admission;
pub mod container_logs;
pub mod conventions;
pub mod cri;
pub mod env;
pub mod files;
pub mod kubelet;
pub mod kubelet_server;
pub mod placement;
pub mod pod_status;
mod pod_worker;
pub mod pull_secrets;
pub mod resize;
pub mod runtime;
pub mod scheduler;
pub mod shell;
pub mod streaming;

use std::path::PathBuf;

use kube::Client;

pub use kubelet::{NodeCapacity, NodeConfig, NodeError, NodeTiming, SimulatedNode};
pub use runtime::PullTiming;
pub use scheduler::{Scheduler, SchedulerConfig};

/// A set of simulated nodes (and optionally the scheduler) to start against an API server.
#[derive(Clone, Debug)]
pub struct SimulationConfig {
    /// How many nodes.
    pub nodes: u32,
    /// Number of the first node (names and addresses count from it), so that several processes
    /// can each run a share of the nodes.
    pub first: u32,
    /// Node names are `{prefix}-{n}` from 1.
    pub name_prefix: String,
    /// Zones the nodes are spread over (round robin); empty for no zone label.
    pub zones: Vec<String>,
    /// The region label of every node.
    pub region: Option<String>,
    /// Capacity of each node.
    pub capacity: NodeCapacity,
    /// Timing of each node.
    pub timing: NodeTiming,
    /// Serve each node's CRI at `{dir}/{node}.sock`.
    pub cri_dir: Option<PathBuf>,
    /// Run the scheduler too (not against a cluster that has kube-scheduler).
    pub scheduler: Option<SchedulerConfig>,
}

impl Default for SimulationConfig {
    fn default() -> Self {
        Self {
            nodes: 3,
            first: 1,
            name_prefix: "sim-node".into(),
            zones: vec!["zone-a".into(), "zone-b".into(), "zone-c".into()],
            region: Some("region-1".into()),
            capacity: NodeCapacity::default(),
            timing: NodeTiming::default(),
            cri_dir: None,
            scheduler: Some(SchedulerConfig::default()),
        }
    }
}

impl SimulationConfig {
    /// The configuration of node `n` (from 1).
    pub fn node(&self, n: u32) -> NodeConfig {
        let name = format!("{}-{n}", self.name_prefix);
        let mut config = NodeConfig::new(&name, n);
        if !self.zones.is_empty() {
            config.zone = Some(self.zones[(n as usize - 1) % self.zones.len()].clone());
        }
        config.region = self.region.clone();
        config.capacity = self.capacity.clone();
        config.timing = self.timing.clone();
        config.cri_socket = self.cri_dir.as_ref().map(|dir| dir.join(format!("{name}.sock")));
        config
    }
}

/// Running simulated nodes and scheduler.
pub struct Simulation {
    /// The nodes, in order.
    pub nodes: Vec<SimulatedNode>,
    scheduler: Option<Scheduler>,
}

impl Simulation {
    /// Registers and starts every node, then the scheduler.
    pub async fn start(client: Client, config: &SimulationConfig) -> Result<Self, NodeError> {
        let mut nodes = Vec::new();
        for n in config.first.max(1)..config.first.max(1) + config.nodes {
            nodes.push(SimulatedNode::start(client.clone(), config.node(n)).await?);
        }
        let scheduler = config.scheduler.clone().map(|settings| Scheduler::start(client, settings));
        Ok(Self { nodes, scheduler })
    }

    /// A node by name.
    pub fn node(&self, name: &str) -> Option<&SimulatedNode> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// Removes one node from the simulation and stops its kubelet (the Node object stays).
    pub async fn stop_node(&mut self, name: &str) -> bool {
        let Some(index) = self.nodes.iter().position(|n| n.name == name) else { return false };
        self.nodes.remove(index).stop().await;
        true
    }

    /// Stops every node and the scheduler.
    pub async fn stop(self) {
        if let Some(scheduler) = self.scheduler {
            scheduler.stop().await;
        }
        for node in self.nodes {
            node.stop().await;
        }
    }
}
