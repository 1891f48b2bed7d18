//! The scenario runner behind `tests/scenarios` (a test target with its own `main`): it runs every
//! scenario on each tier in a fresh cluster, two scenarios at a time, and prints the
//! [`DifferentialReport`] at the end of the suite. A failure on either tier or any difference
//! between the tiers makes the suite fail.
//!
//! Arguments (after `cargo test -p kruise-integration --test scenarios --`): names to filter by
//! (substring, or exact with `--exact`), `--skip NAME`, `--list`. `KRUISE_IT_TIERS=embedded` or
//! `=real` limits the tiers; `KRUISE_IT_PARALLEL=N` runs N scenarios at once (default 2, 1 for one
//! at a time); `KRUISE_IT_REPORT=FILE` also writes the whole report, every
//! observation included, as JSON.

use std::{
    collections::BTreeMap,
    panic::AssertUnwindSafe,
    pin::Pin,
    process::ExitCode,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use futures::FutureExt;
use parking_lot::Mutex;
use serde::Serialize;
use serde_json::Value;

use crate::{
    Cluster, Tier,
    real::{BIN_ENV, RealControlPlane},
    report::{DifferentialReport, Outcome, TierRun},
};

/// How long one scenario may take on one tier, cluster start included.
pub const SCENARIO_TIMEOUT: Duration = Duration::from_secs(600);

/// A scenario's future: `Ok` when it ran to the end, `Err(Skip)` when it could not run here.
pub type ScenarioFuture = Pin<Box<dyn Future<Output = Result<(), Skip>> + Send>>;

/// A scenario: written once, run on both tiers.
#[derive(Clone, Copy)]
pub struct Scenario {
    /// Its name in the report and for filtering.
    pub name: &'static str,
    /// Runs it against the cluster of a [`Scene`]; panics (failed assertions) fail it.
    pub run: fn(Scene) -> ScenarioFuture,
}

/// Why a scenario did not run (for example, a client binary is missing).
#[derive(Clone, Debug)]
pub struct Skip(pub String);

/// What a scenario gets: its cluster, and a place to record observations for the report.
#[derive(Clone)]
pub struct Scene {
    cluster: Arc<Cluster>,
    recorded: Arc<Mutex<Recorded>>,
}

#[derive(Default)]
struct Recorded {
    observations: BTreeMap<String, Value>,
    notes: Vec<String>,
}

impl Scene {
    /// The cluster of this run.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The tier of this run.
    pub fn tier(&self) -> Tier {
        self.cluster.tier()
    }

    /// Records an observable result under `name`; both tiers must record the same value. Recording
    /// a name twice keeps the last value.
    pub fn observe(&self, name: impl Into<String>, value: impl Serialize) {
        let value = serde_json::to_value(value)
            .unwrap_or_else(|error| Value::String(format!("<not serializable: {error}>")));
        self.recorded.lock().observations.insert(name.into(), value);
    }

    /// Leaves a note for the report (a part skipped, a figure worth seeing).
    pub fn note(&self, text: impl Into<String>) {
        self.recorded.lock().notes.push(text.into());
    }
}

struct Args {
    filters: Vec<String>,
    skips: Vec<String>,
    exact: bool,
    list: bool,
    ignored_only: bool,
}

fn parse_args() -> Args {
    let mut args =
        Args { filters: Vec::new(), skips: Vec::new(), exact: false, list: false, ignored_only: false };
    let mut iter = std::env::args().skip(1);
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--list" => args.list = true,
            "--exact" => args.exact = true,
            "--ignored" => args.ignored_only = true,
            "--skip" => args.skips.extend(iter.next()),
            "--test-threads" | "--format" | "--color" | "--logfile" | "-Z" | "--shuffle-seed" => {
                let _ = iter.next();
            }
            other if other.starts_with('-') => {}
            other => args.filters.push(other.to_string()),
        }
    }
    args
}

impl Args {
    fn selects(&self, name: &str) -> bool {
        let matches =
            |pattern: &String| if self.exact { name == pattern } else { name.contains(pattern.as_str()) };
        !self.ignored_only
            && (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skips.iter().any(matches)
    }
}

fn selected_tiers() -> Vec<Tier> {
    match std::env::var("KRUISE_IT_TIERS") {
        Ok(value) => {
            Tier::ALL.into_iter().filter(|tier| value.split(',').any(|t| t.trim() == tier.name())).collect()
        }
        Err(_) => Tier::ALL.to_vec(),
    }
}

/// Runs `scenarios` on the selected tiers, prints progress and the differential report, and
/// returns the test binary's exit code.
pub fn run_suite(scenarios: &[Scenario]) -> ExitCode {
    let args = parse_args();
    if args.list {
        for scenario in scenarios {
            println!("{}: test", scenario.name);
        }
        return ExitCode::SUCCESS;
    }
    let tiers = selected_tiers();
    let real_unavailable = real_tier_unavailable();
    match (&real_unavailable, tiers.contains(&Tier::Real)) {
        (Some(outcome), true) => println!("real tier: {}", outcome_text(outcome)),
        (None, true) => {
            let dir = RealControlPlane::binary_dir().map(|dir| dir.display().to_string()).unwrap_or_default();
            println!("real tier: binaries in {dir}");
        }
        (_, false) => println!("real tier: not selected (KRUISE_IT_TIERS)"),
    }

    let selected: Vec<&Scenario> = scenarios.iter().filter(|scenario| args.selects(scenario.name)).collect();
    println!("\nrunning {} scenarios on {} tier(s)", selected.len(), tiers.len());
    let suite_started = Instant::now();
    let mut report = DifferentialReport::new();
    let concurrent = tiers_run_concurrently();
    if concurrent && tiers.len() > 1 {
        println!(
            "the tiers of each scenario run concurrently (KRUISE_IT_CONCURRENT_TIERS=0 runs them one after the other)"
        );
    }
    let runnable: Vec<Tier> =
        tiers.iter().copied().filter(|tier| !(real_unavailable.is_some() && *tier == Tier::Real)).collect();
    let at_once = scenarios_at_once().min(selected.len().max(1));
    if at_once > 1 {
        println!("{at_once} scenarios run at once (KRUISE_IT_PARALLEL=1 runs them one after the other)");
    }
    // Workers take the next scenario until none is left; each prints its lines as it ends, and
    // the report is filled in the scenarios' order afterwards, so it reads the same either way.
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<ScenarioRuns>>> = Mutex::new((0..selected.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..at_once {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(scenario) = selected.get(index) else { break };
                    let runs = scenario_runs(scenario, &tiers, &runnable, &real_unavailable, concurrent);
                    for (tier, run) in &runs {
                        println!(
                            "scenario {} on {tier} ... {} ({:.1}s)",
                            scenario.name,
                            outcome_text(&run.outcome),
                            run.duration.as_secs_f64()
                        );
                    }
                    results.lock()[index] = Some(runs);
                }
            });
        }
    });
    for (scenario, runs) in selected.iter().zip(results.into_inner()) {
        for (tier, run) in runs.unwrap_or_default() {
            report.record(scenario.name, tier, run);
        }
    }
    println!("\n{}", report.render());
    if let Some(path) = std::env::var_os("KRUISE_IT_REPORT") {
        let text = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
        match std::fs::write(&path, text) {
            Ok(()) => println!("full report (every observation) written to {}", path.to_string_lossy()),
            Err(error) => println!("could not write the report to {}: {error}", path.to_string_lossy()),
        }
    }
    let failures = report.failures().len();
    let differences = report.differences().len();
    println!(
        "test result: {}. {} scenarios, {failures} failed run(s), {differences} difference(s); finished in {:.1}s\n",
        if report.is_clean() { "ok" } else { "FAILED" },
        selected.len(),
        suite_started.elapsed().as_secs_f64()
    );
    if report.is_clean() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// Why the real tier cannot run: skipped when no binaries were built, failed when
/// `KRUISE_K8S_BIN` names a directory without them.
fn real_tier_unavailable() -> Option<Outcome> {
    if RealControlPlane::available() {
        return None;
    }
    let dir = match RealControlPlane::binary_dir() {
        Ok(dir) => dir.display().to_string(),
        Err(error) => return Some(Outcome::Skipped(error.to_string())),
    };
    if std::env::var_os(BIN_ENV).is_some() {
        Some(Outcome::Failed(format!(
            "{BIN_ENV}={dir} lacks some of etcd, kube-apiserver, kube-controller-manager, kube-scheduler"
        )))
    } else {
        Some(Outcome::Skipped(format!(
            "no real control-plane binaries in {dir} (run `bash integration/k8s/build.sh` or set {BIN_ENV})"
        )))
    }
}

fn outcome_text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Passed => "ok".to_string(),
        Outcome::Failed(message) => format!("FAILED: {message}"),
        Outcome::Skipped(reason) => format!("skipped: {reason}"),
    }
}

/// How many scenarios run at once by default. Each runs on its own clusters and mostly waits on
/// them (a schedule's next minute, a grace period, a pod's start), so two at once on two cores
/// take little more than the slower of the pair.
pub const DEFAULT_SCENARIOS_AT_ONCE: usize = 2;

/// How many scenarios run at once: `KRUISE_IT_PARALLEL`, else [`DEFAULT_SCENARIOS_AT_ONCE`].
fn scenarios_at_once() -> usize {
    std::env::var("KRUISE_IT_PARALLEL")
        .ok()
        .and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|count| *count > 0)
        .unwrap_or(DEFAULT_SCENARIOS_AT_ONCE)
}

/// One scenario's run on each selected tier, in the tiers' order.
type ScenarioRuns = Vec<(Tier, TierRun)>;

/// The runs of one scenario on every selected tier: `runnable` ones are run, the others get the
/// outcome that explains why not.
fn scenario_runs(
    scenario: &Scenario,
    tiers: &[Tier],
    runnable: &[Tier],
    real_unavailable: &Option<Outcome>,
    concurrent: bool,
) -> ScenarioRuns {
    let mut runs = run_tiers(scenario, runnable, concurrent);
    tiers
        .iter()
        .map(|&tier| {
            let run = match (real_unavailable, runs.remove(&tier)) {
                (_, Some(run)) => run,
                (Some(outcome), None) => TierRun {
                    outcome: outcome.clone(),
                    observations: BTreeMap::new(),
                    notes: Vec::new(),
                    duration: Duration::ZERO,
                },
                (None, None) => TierRun {
                    outcome: Outcome::Failed("the run ended without a result".into()),
                    observations: BTreeMap::new(),
                    notes: Vec::new(),
                    duration: Duration::ZERO,
                },
            };
            (tier, run)
        })
        .collect()
}

/// Whether the tiers of one scenario run at the same time (the default). Each tier has its own
/// cluster, processes and runtime, and a scenario mostly waits on its cluster, so on two cores the
/// pair takes about as long as its slower half; `KRUISE_IT_CONCURRENT_TIERS=0` runs them in turn.
fn tiers_run_concurrently() -> bool {
    std::env::var("KRUISE_IT_CONCURRENT_TIERS").map(|value| value.trim() != "0").unwrap_or(true)
}

/// Runs `scenario` on each of `tiers`, on one thread per tier when `concurrent`.
fn run_tiers(scenario: &Scenario, tiers: &[Tier], concurrent: bool) -> BTreeMap<Tier, TierRun> {
    if !concurrent {
        return tiers.iter().map(|&tier| (tier, run_one(scenario, tier))).collect();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            tiers.iter().map(|&tier| (tier, scope.spawn(move || run_one(scenario, tier)))).collect();
        handles
            .into_iter()
            .map(|(tier, handle)| {
                let run = handle.join().unwrap_or_else(|payload| TierRun {
                    outcome: Outcome::Failed(panic_message(payload.as_ref())),
                    observations: BTreeMap::new(),
                    notes: Vec::new(),
                    duration: Duration::ZERO,
                });
                (tier, run)
            })
            .collect()
    })
}

/// One scenario on one tier, in a fresh cluster and a fresh runtime.
fn run_one(scenario: &Scenario, tier: Tier) -> TierRun {
    let started = Instant::now();
    let recorded = Arc::new(Mutex::new(Recorded::default()));
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            return TierRun {
                outcome: Outcome::Failed(format!("no tokio runtime: {error}")),
                observations: BTreeMap::new(),
                notes: Vec::new(),
                duration: started.elapsed(),
            };
        }
    };
    let outcome = runtime.block_on(async {
        let cluster = match Cluster::start(tier).await {
            Ok(cluster) => Arc::new(cluster),
            Err(error) => return Outcome::Failed(format!("the {tier} cluster did not start: {error}")),
        };
        let scene = Scene { cluster: cluster.clone(), recorded: recorded.clone() };
        // Polled here, on the thread in `block_on`, not spawned: scenarios run blocking commands
        // (kubectl), and a blocked worker thread can stall the runtime's I/O driver.
        let run = AssertUnwindSafe((scenario.run)(scene)).catch_unwind();
        let outcome = match tokio::time::timeout(SCENARIO_TIMEOUT, run).await {
            Ok(Ok(Ok(()))) => Outcome::Passed,
            Ok(Ok(Err(Skip(reason)))) => Outcome::Skipped(reason),
            Ok(Err(payload)) => Outcome::Failed(panic_message(payload.as_ref())),
            Err(_) => Outcome::Failed(format!("timed out after {SCENARIO_TIMEOUT:?}")),
        };
        if matches!(outcome, Outcome::Failed(_)) {
            cluster.keep_artifacts();
        }
        match Arc::try_unwrap(cluster) {
            Ok(cluster) => cluster.shutdown().await,
            Err(cluster) => drop(cluster),
        }
        outcome
    });
    runtime.shutdown_timeout(Duration::from_secs(10));
    let recorded = std::mem::take(&mut *recorded.lock());
    TierRun {
        outcome,
        observations: recorded.observations,
        notes: recorded.notes,
        duration: started.elapsed(),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|text| text.to_string()))
        .unwrap_or_else(|| "a panic without a message".to_string());
    let first_line = text.lines().next().unwrap_or_default();
    format!("panicked: {first_line} (full message above)")
}
