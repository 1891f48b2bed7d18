//! Upstream OpenKruise as the yardstick: its own e2e suite and its own manager, built from the
//! Go module proxy by `integration/upstream/build.sh` (never committed), run against kruise-rs.
//!
//! - [`groups`]: the e2e suite cut into groups (by source file), each run on a fresh cluster.
//! - [`report`]: Ginkgo's JSON report read into one outcome per spec.
//! - [`expectations`]: the checked-in file that says, for every spec, whether it must pass here
//!   and why not when it need not.
//! - [`kruise_up`]: `kruise up` as a process on free ports, the cluster a group runs against.
//! - [`e2e`]: one group run (the e2e binary against a kubeconfig, with a timeout) and its table.
//! - [`manager`]: upstream kruise-manager as a process against any cluster.

pub mod e2e;
pub mod expectations;
pub mod groups;
pub mod kruise_up;
pub mod manager;
pub mod report;

use std::path::PathBuf;

/// The upstream version `build.sh` pins.
pub const KRUISE_VERSION: &str = "v1.9.0";
/// Environment variable naming the directory of the upstream binaries (overrides the cache).
pub const BIN_ENV: &str = "KRUISE_UPSTREAM_BIN";

/// The directory holding `kruise-manager`, `e2e.test` and `webhook-manifests.yaml`:
/// `$KRUISE_UPSTREAM_BIN`, else the cache `build.sh` fills (`$KRUISE_IT_CACHE` or
/// `~/.cache/kruise-it`, then `upstream-kruise-<version>`). `None` when neither holds a build.
pub fn binary_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(BIN_ENV) {
        return Some(PathBuf::from(dir));
    }
    let cache = match std::env::var_os("KRUISE_IT_CACHE") {
        Some(cache) => PathBuf::from(cache),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/kruise-it"),
    };
    let dir = cache.join(format!("upstream-kruise-{KRUISE_VERSION}"));
    dir.join(".complete").exists().then_some(dir)
}

/// Why the upstream binaries are not there, for a skip message.
pub fn missing_message() -> String {
    format!(
        "upstream OpenKruise {KRUISE_VERSION} is not built: run `bash integration/upstream/build.sh` \
         (or set {BIN_ENV})"
    )
}
