//! Local processes for the harness, each in its own process group, killed (the whole group)
//! when the [`Supervisor`] is dropped, also while a test panics. A small `sh` reaper holds the
//! read end of a pipe whose write end only this process holds: if the test process dies without
//! running destructors (killed, Ctrl-C), the pipe closes and the reaper kills the groups.

use std::{
    fs::File,
    io::Write,
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, ExitStatus, Stdio},
    sync::atomic::{AtomicBool, Ordering},
    time::{Duration, Instant},
};

use tempfile::TempDir;

use crate::HarnessError;

/// How often [`Supervisor::wait_for`] probes.
const POLL: Duration = Duration::from_millis(200);

/// Processes started in one temporary directory, each logging to `<name>.log` there.
pub struct Supervisor {
    label: String,
    dir: TempDir,
    pub(crate) processes: Vec<Process>,
    reaper: Option<(Child, ChildStdin)>,
    pub(crate) keep: AtomicBool,
}

/// One started process.
pub(crate) struct Process {
    pub(crate) name: String,
    pub(crate) child: Child,
    log: PathBuf,
}

/// Waits for EOF on stdin, then kills every process group whose id it was sent.
const REAPER: &str = r#"groups=; while read -r g; do groups="$groups $g"; done; for g in $groups; do env kill -KILL -- "-$g"; done"#;

impl Supervisor {
    /// A supervisor whose temporary directory is named `<prefix>XXXX`; `label` names it in the
    /// message printed when its directory is kept.
    pub fn new(prefix: &str, label: &str) -> Result<Self, HarnessError> {
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .map_err(HarnessError::io("creating the temporary directory"))?;
        let mut reaper = Command::new("sh")
            .args(["-c", REAPER])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|source| HarnessError::Spawn { name: "sh (process reaper)".into(), source })?;
        let stdin = reaper.stdin.take();
        let reaper = match stdin {
            Some(stdin) => Some((reaper, stdin)),
            None => {
                let _ = reaper.kill();
                let _ = reaper.wait();
                None
            }
        };
        Ok(Self {
            label: label.to_string(),
            dir,
            processes: Vec::new(),
            reaper,
            keep: AtomicBool::new(false),
        })
    }

    /// The temporary directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Keeps the directory (and its logs) when dropped, and prints its path then.
    pub fn keep_artifacts(&self) {
        self.keep.store(true, Ordering::SeqCst);
    }

    /// Starts `program` in its own process group, logging stdout and stderr to `<name>.log`.
    pub fn spawn(&mut self, name: &str, program: &Path, args: &[String]) -> Result<(), HarnessError> {
        self.spawn_with_env(name, program, args, &[])
    }

    /// [`Supervisor::spawn`] with extra environment variables.
    pub fn spawn_with_env(
        &mut self,
        name: &str,
        program: &Path,
        args: &[String],
        env: &[(String, String)],
    ) -> Result<(), HarnessError> {
        let log = self.log_path(name);
        let out = File::create(&log).map_err(HarnessError::io(format!("creating {}", log.display())))?;
        let err = out.try_clone().map_err(HarnessError::io(format!("opening {}", log.display())))?;
        let child = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(key, value)| (key.as_str(), value.as_str())))
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|source| HarnessError::Spawn { name: name.to_string(), source })?;
        if let Some((_, stdin)) = &mut self.reaper {
            let _ = writeln!(stdin, "{}", child.id()).and_then(|()| stdin.flush());
        }
        self.processes.push(Process { name: name.to_string(), child, log });
        Ok(())
    }

    /// Where the process `name` logs.
    pub fn log_path(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("{name}.log"))
    }

    /// An error naming the first process that has exited.
    pub fn check_alive(&mut self) -> Result<(), HarnessError> {
        for process in &mut self.processes {
            if let Ok(Some(status)) = process.child.try_wait() {
                return Err(HarnessError::Exited {
                    name: process.name.clone(),
                    status: status.to_string(),
                    log: process.log.clone(),
                    tail: log_tail(&process.log, 30),
                });
            }
        }
        Ok(())
    }

    /// Waits until the process `name` exits by itself, or kills its group after `timeout`
    /// (then `None`).
    pub async fn wait_exit(&mut self, name: &str, timeout: Duration) -> Option<ExitStatus> {
        let started = Instant::now();
        let index = self.processes.iter().position(|process| process.name == name)?;
        loop {
            if let Ok(Some(status)) = self.processes[index].child.try_wait() {
                return Some(status);
            }
            if started.elapsed() > timeout {
                kill_group(&mut self.processes[index].child, "-TERM");
                tokio::time::sleep(Duration::from_secs(5)).await;
                kill_group(&mut self.processes[index].child, "-KILL");
                let _ = self.processes[index].child.wait();
                return None;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Polls `probe` until it succeeds, failing early when a process exits.
    pub async fn wait_for<F, Fut>(
        &mut self,
        what: &str,
        timeout: Duration,
        mut probe: F,
    ) -> Result<(), HarnessError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<(), String>>,
    {
        let started = Instant::now();
        loop {
            self.check_alive()?;
            let last = match probe().await {
                Ok(()) => return Ok(()),
                Err(last) => last,
            };
            if started.elapsed() > timeout {
                return Err(HarnessError::Timeout { what: what.to_string(), waited: timeout, last });
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Kills every process group (newest first) and reaps the processes.
    pub fn stop(&mut self) {
        if let Some((mut reaper, stdin)) = self.reaper.take() {
            // Stop the reaper first so it never signals a group id that has been reused.
            let _ = reaper.kill();
            drop(stdin);
            let _ = reaper.wait();
        }
        for process in self.processes.iter_mut().rev() {
            kill_group(&mut process.child, "-KILL");
        }
        for process in &mut self.processes {
            let _ = process.child.wait();
        }
        self.processes.clear();
    }
}

/// Sends `signal` to the child's process group (and the child itself).
fn kill_group(child: &mut Child, signal: &str) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill")
        .args([signal, "--", &group])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if signal == "-KILL" {
        let _ = child.kill();
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        let names: Vec<String> =
            self.processes.iter().map(|process| format!("{}.log", process.name)).collect();
        self.stop();
        if self.keep.load(Ordering::SeqCst) || std::thread::panicking() {
            self.dir.disable_cleanup(true);
            eprintln!(
                "{}: kept {} (logs: {})",
                self.label,
                self.dir.path().display(),
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            );
        }
    }
}

/// The last `lines` lines of a log file.
pub(crate) fn log_tail(path: &Path, lines: usize) -> String {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(error) => format!("(could not read {}: {error})", path.display()),
    }
}
