//! A real containerd for tests of the node daemon's CRI client: Debian's `containerd` (1.6,
//! CRI plugin built in) with its root, state and socket in a temporary directory, the `native`
//! snapshotter (no overlay mounts needed) and `restrict_oom_score_adj` (no CAP_SYS_RESOURCE
//! here), pulling from the given plain-HTTP registries through `certs.d` host files
//! (`../shared/reference/real-control-plane.md` section 4). Only image operations are used, so
//! no CNI and no runc are involved.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use crate::HarnessError;

const CONTAINERD_BINARY: &str = "/usr/bin/containerd";

/// A running containerd; dropping it stops the process and removes its directories.
pub struct Containerd {
    child: Child,
    dir: tempfile::TempDir,
}

impl Containerd {
    /// Whether containerd is installed (`apt-get install containerd`).
    pub fn available() -> bool {
        Path::new(CONTAINERD_BINARY).exists()
    }

    /// Starts containerd trusting `registries` (`host:port`) over plain HTTP and waits until its
    /// socket accepts connections.
    pub async fn start(registries: &[String]) -> Result<Self, HarnessError> {
        if !Self::available() {
            return Err(HarnessError::ProgramMissing {
                program: CONTAINERD_BINARY.into(),
                hint: "apt-get install containerd".into(),
            });
        }
        // A short path: the socket path must fit in sun_path (108 bytes).
        let dir = tempfile::Builder::new()
            .prefix("ctd-")
            .tempdir_in("/tmp")
            .map_err(HarnessError::io("creating the containerd directory"))?;
        let root = dir.path();
        for registry in registries {
            let host_dir = root.join("certs.d").join(registry);
            std::fs::create_dir_all(&host_dir).map_err(HarnessError::io("creating certs.d"))?;
            std::fs::write(
                host_dir.join("hosts.toml"),
                format!(
                    "server = \"http://{registry}\"\n[host.\"http://{registry}\"]\n  capabilities = [\"pull\", \"resolve\"]\n  skip_verify = true\n"
                ),
            )
            .map_err(HarnessError::io("writing hosts.toml"))?;
        }
        let config = format!(
            r#"version = 2
root = "{root}/root"
state = "{root}/state"
[grpc]
  address = "{root}/containerd.sock"
[ttrpc]
  address = "{root}/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  restrict_oom_score_adj = true
  tolerate_missing_hugetlb_controller = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "{root}/certs.d"
"#,
            root = root.display()
        );
        let config_path = root.join("config.toml");
        std::fs::write(&config_path, config).map_err(HarnessError::io("writing the containerd config"))?;
        let log = std::fs::File::create(root.join("containerd.log"))
            .map_err(HarnessError::io("creating the containerd log"))?;
        let child = Command::new(CONTAINERD_BINARY)
            .arg("--config")
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(HarnessError::io("opening the containerd log"))?)
            .stderr(log)
            .spawn()
            .map_err(|source| HarnessError::Spawn { name: "containerd".into(), source })?;
        let mut containerd = Self { child, dir };
        containerd.wait_socket().await?;
        Ok(containerd)
    }

    async fn wait_socket(&mut self) -> Result<(), HarnessError> {
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(HarnessError::Exited {
                    name: "containerd".into(),
                    status: status.to_string(),
                    log: self.log_path(),
                    tail: self.log_tail(),
                });
            }
            if tokio::net::UnixStream::connect(self.socket()).await.is_ok() {
                return Ok(());
            }
            if started.elapsed() > Duration::from_secs(30) {
                return Err(HarnessError::Timeout {
                    what: "containerd's socket".into(),
                    waited: started.elapsed(),
                    last: self.log_tail(),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The CRI (and containerd) socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("containerd.sock")
    }

    /// containerd's log file.
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("containerd.log")
    }

    /// The last lines of the log (for failure messages).
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("containerd log (last lines):\n{}", self.log_tail());
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The native snapshotter leaves read-only files; make them removable for TempDir.
        let _ = Command::new("chmod").arg("-R").arg("u+w").arg(self.dir.path()).status();
    }
}
