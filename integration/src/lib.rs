//! Scenario tests on two tiers and the harness behind them.
//!
//! - [`RealControlPlane`]: etcd, kube-apiserver, kube-controller-manager and kube-scheduler
//!   (built by `integration/k8s/build.sh`) as local processes on loopback, envtest-style.
//! - [`Cluster`]: one handle over the embedded API server and the real one, so a scenario is
//!   written once; [`Tier`] says which one it is.
//! - [`DifferentialReport`]: what each scenario observed on each tier, and every difference.
//! - [`nodes`]: simulated nodes for scenarios, in the test process or as `kruise nodes`
//!   processes.
//! - [`manager`]: the Kruise manager for scenarios, in the test process or as a
//!   `kruise manager` process.
//! - [`postgres`]: a throwaway PostgreSQL server (initdb in a temporary directory, free port),
//!   which can be stopped and started again for store-outage tests.
//! - [`suite`]: the runner the `scenarios` test target uses to run everything on both tiers and
//!   print the report at the end.

pub mod certs;
pub mod cluster;
pub mod containerd;
mod error;
mod kubectl_output;
pub mod manager;
pub mod nodes;
pub mod postgres;
pub mod real;
pub mod registry;
pub mod report;
pub mod suite;
pub mod supervisor;
pub mod upstream;

use std::path::PathBuf;

pub use cluster::{AppliedCrd, Cluster, Tier};
pub use error::HarnessError;
pub use kubectl_output::without_client_logs;
pub use real::RealControlPlane;
pub use report::{Difference, DifferentialReport, Outcome, TierRun};
pub use suite::{Scenario, Scene, Skip};

/// The kubectl the scenarios drive: `$KRUISE_KUBECTL`, else the v1.33 binary
/// `integration/tools/fetch-kubectl.sh` caches; `None` when neither exists.
pub fn kubectl_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("KRUISE_KUBECTL") {
        return Some(PathBuf::from(path));
    }
    let cached = PathBuf::from(std::env::var_os("HOME")?).join(".cache/kruise-it/kubectl-v1.33/kubectl");
    cached.exists().then_some(cached)
}
