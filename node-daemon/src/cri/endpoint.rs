//! Where the container runtime's CRI socket is: an explicit `--runtime-endpoint`, or the first
//! socket that exists among upstream's candidates (`pkg/daemon/criruntime/factory_unix.go`):
//! containerd, then CRI-O, then cri-dockerd, each at `<dir>/<name>.sock` and
//! `<dir>/<name>/<name>.sock`, under each search directory in turn (upstream mounts the host's
//! `/var/run` at `/hostvarrun`; on a host the daemon looks in `/var/run` and `/run` too).

use std::path::{Path, PathBuf};

/// Where upstream's DaemonSet mounts the host's `/var/run`.
pub const HOST_VAR_RUN: &str = "/hostvarrun";

/// The directories searched when no endpoint is given, in order.
pub fn default_search_dirs() -> Vec<PathBuf> {
    vec![PathBuf::from(HOST_VAR_RUN), PathBuf::from("/var/run"), PathBuf::from("/run")]
}

/// The socket file names probed under a directory, in upstream's order.
pub const SOCKET_CANDIDATES: [&str; 6] = [
    "containerd.sock",
    "containerd/containerd.sock",
    "crio.sock",
    "crio/crio.sock",
    "cri-dockerd.sock",
    "cri-dockerd/cri-dockerd.sock",
];

/// Every candidate socket path under `dirs`, in probe order.
pub fn candidate_sockets(dirs: &[PathBuf]) -> Vec<PathBuf> {
    dirs.iter().flat_map(|dir| SOCKET_CANDIDATES.iter().map(move |name| dir.join(name))).collect()
}

/// The socket path of an endpoint written as `unix:///path`, `unix:/path` or a plain path.
/// `None` for other schemes (`tcp://`, `npipe://`), which this daemon does not speak.
pub fn parse_endpoint(endpoint: &str) -> Option<PathBuf> {
    let endpoint = endpoint.trim();
    if let Some(rest) = endpoint.strip_prefix("unix://") {
        return (!rest.is_empty()).then(|| PathBuf::from(rest));
    }
    if let Some(rest) = endpoint.strip_prefix("unix:") {
        return (!rest.is_empty()).then(|| PathBuf::from(rest));
    }
    if endpoint.contains("://") || endpoint.is_empty() {
        return None;
    }
    Some(PathBuf::from(endpoint))
}

/// How the daemon finds its runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndpointSource {
    /// This socket, whether or not it exists yet.
    Fixed(PathBuf),
    /// The first of these sockets that exists (looked up again on every connection attempt,
    /// so a runtime that starts after the daemon is found).
    Probe(Vec<PathBuf>),
}

impl EndpointSource {
    /// An explicit endpoint, or probing the candidates under `search_dirs`.
    pub fn new(explicit: Option<PathBuf>, search_dirs: &[PathBuf]) -> Self {
        match explicit {
            Some(path) => Self::Fixed(path),
            None => Self::Probe(candidate_sockets(search_dirs)),
        }
    }

    /// The socket to connect to now, or every path tried when none exists.
    pub fn resolve(&self) -> Result<PathBuf, Vec<PathBuf>> {
        self.resolve_with(|path| path.exists())
    }

    /// [`Self::resolve`] with an injectable existence check (for tests).
    pub fn resolve_with(&self, exists: impl Fn(&Path) -> bool) -> Result<PathBuf, Vec<PathBuf>> {
        match self {
            Self::Fixed(path) => Ok(path.clone()),
            Self::Probe(candidates) => {
                candidates.iter().find(|path| exists(path)).cloned().ok_or_else(|| candidates.clone())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_like_crictl() {
        let cases = [
            ("unix:///run/containerd/containerd.sock", Some("/run/containerd/containerd.sock")),
            ("unix:/tmp/x.sock", Some("/tmp/x.sock")),
            ("/tmp/y.sock", Some("/tmp/y.sock")),
            ("tcp://127.0.0.1:1234", None),
            ("unix://", None),
            ("", None),
        ];
        for (endpoint, expected) in cases {
            assert_eq!(parse_endpoint(endpoint), expected.map(PathBuf::from), "{endpoint}");
        }
    }

    #[test]
    fn probing_follows_upstreams_order() {
        let dirs = vec![PathBuf::from("/hostvarrun"), PathBuf::from("/var/run")];
        let candidates = candidate_sockets(&dirs);
        assert_eq!(candidates.len(), 12);
        assert_eq!(candidates[0], PathBuf::from("/hostvarrun/containerd.sock"));
        assert_eq!(candidates[2], PathBuf::from("/hostvarrun/crio.sock"));
        assert_eq!(candidates[6], PathBuf::from("/var/run/containerd.sock"));
        let source = EndpointSource::new(None, &dirs);
        let found = source.resolve_with(|p| {
            p == Path::new("/hostvarrun/crio/crio.sock") || p == Path::new("/var/run/containerd.sock")
        });
        assert_eq!(
            found,
            Ok(PathBuf::from("/hostvarrun/crio/crio.sock")),
            "containerd before CRI-O, dirs first"
        );
        assert_eq!(source.resolve_with(|_| false).unwrap_err().len(), 12);
        let fixed = EndpointSource::new(Some("/x.sock".into()), &dirs);
        assert_eq!(fixed.resolve_with(|_| false), Ok(PathBuf::from("/x.sock")));
    }
}
