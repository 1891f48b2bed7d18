//! One group of upstream e2e specs run against a cluster (a fresh `kruise up`, or a given
//! kubeconfig), with a timeout, its JSON report kept, and what it printed judged against the
//! expectation file.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use super::{
    expectations::{Expectations, Verdict, judge},
    groups::Group,
    kruise_up::{KruiseUp, UpOptions},
    report::{self, SpecOutcome, State},
};
use crate::supervisor::Supervisor;

/// Where a group runs.
#[derive(Clone, Debug)]
pub enum Target {
    /// A fresh `kruise up` (this binary) per group.
    FreshKruiseUp {
        /// The `kruise` binary.
        binary: PathBuf,
        /// How to start it.
        options: UpOptions,
    },
    /// An existing cluster.
    Kubeconfig(PathBuf),
}

/// How groups are run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The directory `build.sh` filled (`e2e.test` is there).
    pub upstream_dir: PathBuf,
    /// Where reports and logs go (`<group>.json`, `<group>.log`, `<group>-kruise-up.log`).
    pub report_dir: PathBuf,
    /// The cluster.
    pub target: Target,
    /// Ginkgo's suite timeout for one group; the process is killed a minute after it.
    pub timeout: Duration,
    /// Upstream's `--e2e-verify-service-account` (on by default there, and here).
    pub verify_service_account: bool,
    /// Further arguments for `e2e.test` (e.g. `--ginkgo.focus=...`).
    pub extra_args: Vec<String>,
}

/// What one group run gave.
#[derive(Debug)]
pub struct GroupRun {
    /// The group.
    pub group: &'static Group,
    /// Every spec of the group's files in the report.
    pub specs: Vec<SpecOutcome>,
    /// Wall time, cluster start included.
    pub seconds: f64,
    /// Why the run itself went wrong (the cluster did not start, no report, killed at the
    /// timeout), if it did.
    pub error: Option<String>,
    /// The e2e binary's output.
    pub log: PathBuf,
}

/// Runs `group` and collects its report. Never panics: a run that breaks says why in `error`.
pub async fn run_group(group: &'static Group, options: &RunOptions) -> GroupRun {
    let started = Instant::now();
    let log = options.report_dir.join(format!("{}.log", group.name));
    let mut run = GroupRun { group, specs: Vec::new(), seconds: 0.0, error: None, log: log.clone() };
    if let Err(error) = std::fs::create_dir_all(&options.report_dir) {
        run.error = Some(format!("creating {}: {error}", options.report_dir.display()));
        return run;
    }
    let (cluster, kubeconfig) = match &options.target {
        Target::Kubeconfig(path) => (None, path.clone()),
        Target::FreshKruiseUp { binary, options: up } => match KruiseUp::start(binary, up).await {
            Ok(cluster) => {
                let kubeconfig = cluster.kubeconfig().to_path_buf();
                (Some(cluster), kubeconfig)
            }
            Err(error) => {
                run.error = Some(format!("kruise up did not start: {error}"));
                run.seconds = started.elapsed().as_secs_f64();
                return run;
            }
        },
    };
    let report_path = options.report_dir.join(format!("{}.json", group.name));
    let _ = std::fs::remove_file(&report_path);
    let mut args = vec![
        "-test.timeout=0".to_string(),
        "--ginkgo.no-color".into(),
        "--ginkgo.v".into(),
        format!("--ginkgo.focus-file={}", group.focus_file()),
        format!("--ginkgo.json-report={}", report_path.display()),
        format!("--ginkgo.timeout={}s", options.timeout.as_secs()),
        format!("--e2e-verify-service-account={}", options.verify_service_account),
    ];
    args.extend(options.extra_args.iter().cloned());
    let outcome =
        run_e2e_binary(&options.upstream_dir.join("e2e.test"), &args, &kubeconfig, options.timeout, &log)
            .await;
    if let Err(error) = outcome {
        run.error = Some(error);
    }
    match report::read(&report_path) {
        Ok(specs) => run.specs = specs.into_iter().filter(|spec| group.owns_key(&spec.key)).collect(),
        Err(error) => {
            let previous = run.error.take().map(|e| format!("{e}; ")).unwrap_or_default();
            run.error = Some(format!("{previous}no report: {error}"));
        }
    }
    if let Some(cluster) = cluster {
        let failed = run.error.is_some() || run.specs.iter().any(|spec| spec.state == State::Failed);
        if failed {
            let _ = std::fs::copy(
                cluster.log(),
                options.report_dir.join(format!("{}-kruise-up.log", group.name)),
            );
        }
        drop(cluster);
    }
    run.seconds = started.elapsed().as_secs_f64();
    run
}

/// Runs the e2e binary to its end (or kills it a minute after Ginkgo's own timeout), its output
/// copied to `log`.
async fn run_e2e_binary(
    binary: &Path,
    args: &[String],
    kubeconfig: &Path,
    timeout: Duration,
    log: &Path,
) -> Result<(), String> {
    let mut supervisor =
        Supervisor::new("kruise-upstream-e2e-", "upstream e2e").map_err(|e| e.to_string())?;
    let env = [("KUBECONFIG".to_string(), kubeconfig.display().to_string())];
    supervisor.spawn_with_env("e2e", binary, args, &env).map_err(|e| e.to_string())?;
    let status = supervisor.wait_exit("e2e", timeout + Duration::from_secs(60)).await;
    let _ = std::fs::copy(supervisor.log_path("e2e"), log);
    match status {
        None => Err(format!("e2e.test killed after {} s", (timeout + Duration::from_secs(60)).as_secs())),
        // Ginkgo exits 1 when a spec failed; the report says which.
        Some(_) => Ok(()),
    }
}

impl Group {
    /// Whether a spec key (see [`report::spec_key`]) names one of this group's files.
    pub fn owns_key(&self, key: &str) -> bool {
        self.files.iter().any(|file| key.starts_with(&format!("{file}: ")))
    }
}

/// Counts of one group run, for the tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Specs in the report.
    pub specs: usize,
    /// Passed.
    pub passed: usize,
    /// Failed (any failing end).
    pub failed: usize,
    /// Skipped or pending.
    pub skipped: usize,
    /// Specs the file marks `pass`.
    pub expected_pass: usize,
    /// Marked `pass` and failed.
    pub regressions: usize,
    /// Passed though not marked `pass`.
    pub unexpected_passes: usize,
    /// Not in the file.
    pub unlisted: usize,
}

impl Counts {
    /// Counts a run against the file (pure).
    pub fn of(run: &GroupRun, expectations: &Expectations) -> Self {
        let mut counts = Self { specs: run.specs.len(), ..Self::default() };
        for spec in &run.specs {
            match spec.state {
                State::Passed => counts.passed += 1,
                State::Failed => counts.failed += 1,
                State::Skipped => counts.skipped += 1,
            }
            if expectations
                .specs
                .get(&spec.key)
                .is_some_and(|e| e.expected == super::expectations::Expected::Pass)
            {
                counts.expected_pass += 1;
            }
            match judge(expectations, spec) {
                Verdict::Regression => counts.regressions += 1,
                Verdict::UnexpectedPass => counts.unexpected_passes += 1,
                Verdict::Unlisted => counts.unlisted += 1,
                Verdict::AsExpected | Verdict::NotRun => {}
            }
        }
        counts
    }
}

/// The group's table: a heading line, then one line per spec that did not pass or did not do
/// what the file says, with its first error (pure).
pub fn group_table(run: &GroupRun, expectations: &Expectations) -> String {
    let counts = Counts::of(run, expectations);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "== {} ({}): {} specs, {} passed, {} failed, {} skipped in {:.0} s; {} expected to pass, {} regression(s), {} unexpected pass(es), {} unlisted",
        run.group.name,
        run.group.kind,
        counts.specs,
        counts.passed,
        counts.failed,
        counts.skipped,
        run.seconds,
        counts.expected_pass,
        counts.regressions,
        counts.unexpected_passes,
        counts.unlisted
    );
    if let Some(error) = &run.error {
        let _ = writeln!(out, "   RUN ERROR  {error} (log {})", run.log.display());
    }
    for spec in &run.specs {
        let verdict = judge(expectations, spec);
        let expected = expectations.specs.get(&spec.key).map_or("unlisted", |e| e.expected.word());
        let label = match (&verdict, spec.state) {
            (Verdict::Regression, _) => "REGRESSION",
            (Verdict::Unlisted, _) => "UNLISTED",
            (Verdict::UnexpectedPass, _) => "unexpected pass",
            (_, State::Failed) => "failed",
            (Verdict::NotRun, _) => "not run",
            _ => continue,
        };
        let error = spec.first_error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "   {label:<15} [{expected}; {} {:.0}s] {}{error}",
            spec.ginkgo_state, spec.seconds, spec.key
        );
    }
    out
}

/// The summary table over all groups run (pure).
pub fn summary_table(runs: &[GroupRun], expectations: &Expectations) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<30} {:>5} {:>6} {:>6} {:>7} {:>9} {:>11} {:>8}",
        "group", "specs", "passed", "failed", "skipped", "exp.pass", "regressions", "seconds"
    );
    let mut total = Counts::default();
    let mut seconds = 0.0;
    for run in runs {
        let c = Counts::of(run, expectations);
        let _ = writeln!(
            out,
            "{:<30} {:>5} {:>6} {:>6} {:>7} {:>9} {:>11} {:>8.0}{}",
            run.group.name,
            c.specs,
            c.passed,
            c.failed,
            c.skipped,
            c.expected_pass,
            c.regressions,
            run.seconds,
            if run.error.is_some() { "  (run error)" } else { "" }
        );
        total.specs += c.specs;
        total.passed += c.passed;
        total.failed += c.failed;
        total.skipped += c.skipped;
        total.expected_pass += c.expected_pass;
        total.regressions += c.regressions;
        seconds += run.seconds;
    }
    let _ = writeln!(
        out,
        "{:<30} {:>5} {:>6} {:>6} {:>7} {:>9} {:>11} {:>8.0}",
        "total",
        total.specs,
        total.passed,
        total.failed,
        total.skipped,
        total.expected_pass,
        total.regressions,
        seconds
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::groups;

    fn spec(key: &str, state: State, error: Option<&str>) -> SpecOutcome {
        SpecOutcome {
            key: key.into(),
            group: Some("crr-v1beta1"),
            state,
            ginkgo_state: match state {
                State::Passed => "passed",
                State::Failed => "failed",
                State::Skipped => "skipped",
            }
            .into(),
            first_error: error.map(str::to_string),
            seconds: 3.0,
        }
    }

    #[test]
    fn tables_name_every_spec_that_did_not_do_what_the_file_says() {
        let group = groups::by_name("crr-v1beta1").unwrap();
        let key = |text: &str| format!("apps/v1beta1/containerrecreaterequest.go: CRR / {text}");
        let file = Expectations::parse(&format!(
            "pass\t{}\t\npass\t{}\t\nneeds-real-node\t{}\texec into a real container\n",
            key("a"),
            key("b"),
            key("c")
        ))
        .unwrap();
        let run = GroupRun {
            group,
            specs: vec![
                spec(&key("a"), State::Passed, None),
                spec(&key("b"), State::Failed, Some("Expected 1 to equal 2 [x.go:9]")),
                spec(&key("c"), State::Failed, Some("exec failed")),
                spec(&key("d"), State::Passed, None),
            ],
            seconds: 42.0,
            error: None,
            log: PathBuf::from("/tmp/x.log"),
        };
        let counts = Counts::of(&run, &file);
        assert_eq!(
            counts,
            Counts {
                specs: 4,
                passed: 2,
                failed: 2,
                skipped: 0,
                expected_pass: 2,
                regressions: 1,
                unexpected_passes: 0,
                unlisted: 1
            }
        );
        let table = group_table(&run, &file);
        assert!(table.contains("REGRESSION      [pass; failed 3s] apps/v1beta1/containerrecreaterequest.go: CRR / b: Expected 1 to equal 2 [x.go:9]"), "{table}");
        assert!(table.contains("failed          [needs-real-node; failed 3s]"), "{table}");
        assert!(table.contains("UNLISTED"), "{table}");
        assert!(!table.contains("CRR / a"), "a spec that passed as expected is not listed: {table}");
        let summary = summary_table(&[run], &file);
        assert!(summary.lines().last().unwrap().starts_with("total"), "{summary}");
        assert!(group.owns_key(&key("a")));
        assert!(!group.owns_key("apps/v1alpha1/containerrecreate.go: x"));
    }
}
