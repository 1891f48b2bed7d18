//! A throwaway PostgreSQL server for tests: `initdb` in a temporary directory, `postgres` on a
//! free loopback port with its unix socket in that directory, trust authentication for the
//! `kruise` role, stopped (and the directory removed) on drop. It can be stopped and started
//! again on the same port and data, which is how store-outage tests take it away.
//!
//! Binaries are looked up in `$KRUISE_PG_BIN`, then on `PATH`, then in
//! `/usr/lib/postgresql/*/bin` (Debian's `postgresql` package; the newest version wins). PostgreSQL
//! refuses to run as root, so when the tests run as root the server runs as `nobody` (the data
//! directory is handed to that user).

use std::{
    fs::File,
    net::TcpListener,
    os::unix::{fs::MetadataExt, process::CommandExt},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use crate::HarnessError;

/// The role tests connect as.
pub const USER: &str = "kruise";

/// A running (or stopped) test server.
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    run_as: Option<(u32, u32)>,
    child: Option<Child>,
}

impl Postgres {
    /// The directory holding `initdb`, `pg_ctl` and `postgres`, if any.
    pub fn binaries() -> Option<PathBuf> {
        let complete = |dir: &Path| ["initdb", "pg_ctl", "postgres"].iter().all(|b| dir.join(b).is_file());
        if let Some(dir) = std::env::var_os("KRUISE_PG_BIN").map(PathBuf::from) {
            return complete(&dir).then_some(dir);
        }
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path) {
                if complete(&dir) {
                    // Resolve symlinks (/usr/local/bin/initdb -> /usr/lib/postgresql/15/bin) so
                    // the server finds its share directory.
                    let real = std::fs::canonicalize(dir.join("initdb"))
                        .ok()
                        .and_then(|p| p.parent().map(Path::to_path_buf));
                    return Some(real.filter(|d| complete(d)).unwrap_or(dir));
                }
            }
        }
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let version = entry.file_name().to_string_lossy().parse::<u32>().ok()?;
                let bin = entry.path().join("bin");
                complete(&bin).then_some((version, bin))
            })
            .collect();
        versions.sort();
        versions.pop().map(|(_, bin)| bin)
    }

    /// Initializes a cluster in a fresh temporary directory and starts the server.
    pub fn start() -> Result<Self, HarnessError> {
        let bin = Self::binaries().ok_or_else(|| {
            HarnessError::PostgresMissing(
                "initdb/pg_ctl/postgres not found in $KRUISE_PG_BIN, on PATH or in /usr/lib/postgresql/*/bin \
                 (install Debian's `postgresql` package)"
                    .into(),
            )
        })?;
        let run_as = if running_as_root() { Some(unprivileged_user()?) } else { None };
        // The server's user must reach its directory: under root's own TMPDIR it might not, so
        // a server run as `nobody` lives under /tmp.
        let parent = if run_as.is_some() { PathBuf::from("/tmp") } else { std::env::temp_dir() };
        let dir = tempfile::Builder::new()
            .prefix("kruise-pg-")
            .tempdir_in(parent)
            .map_err(HarnessError::io("creating the PostgreSQL directory"))?;
        if let Some((uid, gid)) = run_as {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(HarnessError::io("handing the PostgreSQL directory to the server's user"))?;
        }
        let port = free_port()?;
        let mut server = Self { dir, bin, port, run_as, child: None };
        let log = server.log_path();
        let status = server
            .command("initdb")
            .arg("-D")
            .arg(server.data_dir())
            .args(["-A", "trust", "-U", USER, "-E", "UTF8", "--locale=C", "--no-sync"])
            .stdout(server.log_file()?)
            .stderr(server.log_file()?)
            .status()
            .map_err(|source| HarnessError::Spawn { name: "initdb".into(), source })?;
        if !status.success() {
            return Err(HarnessError::Exited {
                name: "initdb".into(),
                status: status.to_string(),
                tail: tail(&log),
                log,
            });
        }
        server.start_again()?;
        Ok(server)
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(self.bin.join(program));
        command.stdin(Stdio::null()).current_dir(self.dir.path());
        if let Some((uid, gid)) = self.run_as {
            command.uid(uid).gid(gid);
        }
        command
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The server's log (initdb's output first).
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("postgres.log")
    }

    fn log_file(&self) -> Result<File, HarnessError> {
        let path = self.log_path();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(HarnessError::io(format!("opening {}", path.display())))?;
        if let Some((uid, gid)) = self.run_as {
            let _ = std::os::unix::fs::chown(&path, Some(uid), Some(gid));
        }
        Ok(file)
    }

    /// `postgres://kruise@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/postgres", self.port)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the server is running.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Starts the server (again) on the same port and data, and waits until it accepts
    /// connections.
    pub fn start_again(&mut self) -> Result<(), HarnessError> {
        if self.child.is_some() {
            return Ok(());
        }
        let log = self.log_path();
        let before = std::fs::read_to_string(&log).map(|t| t.len()).unwrap_or(0);
        let child = self
            .command("postgres")
            .arg("-D")
            .arg(self.data_dir())
            .args(["-p", &self.port.to_string(), "-c", "listen_addresses=127.0.0.1"])
            .arg("-k")
            .arg(self.dir.path())
            .stdout(self.log_file()?)
            .stderr(self.log_file()?)
            .spawn()
            .map_err(|source| HarnessError::Spawn { name: "postgres".into(), source })?;
        self.child = Some(child);
        let started = Instant::now();
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text
                .get(before..)
                .is_some_and(|new| new.contains("database system is ready to accept connections"))
            {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(HarnessError::Exited {
                    name: "postgres".into(),
                    status: status.to_string(),
                    tail: tail(&log),
                    log,
                });
            }
            if started.elapsed() > Duration::from_secs(30) {
                return Err(HarnessError::Timeout {
                    what: "PostgreSQL to accept connections".into(),
                    waited: started.elapsed(),
                    last: tail(&log),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the server (fast shutdown: open connections are cut) and waits until it is gone.
    pub fn stop(&mut self) -> Result<(), HarnessError> {
        self.stop_with("fast")
    }

    fn stop_with(&mut self, mode: &str) -> Result<(), HarnessError> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        let stopped = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data_dir())
            .args(["-m", mode, "-w", "-t", "30", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !stopped {
            let _ = child.kill();
        }
        child.wait().map_err(HarnessError::io("waiting for postgres to exit"))?;
        Ok(())
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.stop_with("immediate");
    }
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

/// The uid and gid of `nobody` (from /etc/passwd; 65534 when it is not listed).
fn unprivileged_user() -> Result<(u32, u32), HarnessError> {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    Ok(passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&"nobody") && fields.len() > 3)
                .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
                .flatten()
        })
        .unwrap_or((65534, 65534)))
}

fn free_port() -> Result<u16, HarnessError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(HarnessError::io("finding a free port"))?;
    let port = listener.local_addr().map_err(HarnessError::io("finding a free port"))?.port();
    Ok(port)
}

fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
