//! `upstream-e2e`: runs upstream OpenKruise's own e2e suite (built by
//! `integration/upstream/build.sh`) against kruise-rs, one group at a time on a fresh
//! `kruise up` (or against a given kubeconfig), prints a table per group with a line per failing
//! spec and its first error, then a summary, and judges every spec against
//! `integration/upstream/expectations.tsv`.
//!
//! Exit status: 0 when no spec the file marks `pass` failed, no spec is unlisted and every group
//! ran; 1 otherwise; 2 on bad arguments or missing binaries.

use std::{
    path::PathBuf,
    process::ExitCode,
    sync::Arc,
    time::{Duration, Instant},
};

use clap::Parser;
use kruise_integration::upstream::{
    self,
    e2e::{GroupRun, RunOptions, Target, group_table, run_group, summary_table},
    expectations::{Expectations, Verdict, header_of, judge, record},
    groups::{self, GROUPS, Group},
    kruise_up::UpOptions,
    report,
};

/// Runs upstream OpenKruise's e2e suite against kruise-rs.
#[derive(Parser)]
#[command(name = "upstream-e2e")]
struct Args {
    /// Groups to run, comma-separated (see --list-groups).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["all", "implemented", "ci"])]
    groups: Vec<String>,
    /// Every group, also those of kinds not built yet.
    #[arg(long)]
    all: bool,
    /// Every group of an implemented kind (the default).
    #[arg(long)]
    implemented: bool,
    /// The bounded subset CI runs (groups listed in the expectation file's `# ci:` line), after
    /// checking that the file lists every spec of the suite and nothing else.
    #[arg(long)]
    ci: bool,
    /// Run against this cluster instead of a fresh `kruise up` per group.
    #[arg(long, value_name = "PATH")]
    kubeconfig: Option<PathBuf>,
    /// The `kruise` binary (default: $KRUISE_BIN, else next to this program).
    #[arg(long, value_name = "PATH")]
    kruise: Option<PathBuf>,
    /// Simulated nodes of each `kruise up`.
    #[arg(long, default_value_t = 3)]
    nodes: u32,
    /// Feature gates of each `kruise up` (upstream's e2e runs with all alpha and beta gates on).
    #[arg(long, default_value = "AllAlpha=true,AllBeta=true")]
    feature_gates: String,
    /// Ginkgo's timeout per group, in minutes.
    #[arg(long, default_value_t = 40)]
    timeout_minutes: u64,
    /// Groups run at once (each on its own `kruise up`).
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Where reports and logs go.
    #[arg(long, value_name = "DIR", default_value = "target/upstream-e2e")]
    report_dir: PathBuf,
    /// The expectation file.
    #[arg(long, value_name = "FILE")]
    expectations: Option<PathBuf>,
    /// Run with upstream's service-account check off (`--e2e-verify-service-account=false`).
    #[arg(long)]
    no_verify_service_account: bool,
    /// Only this Ginkgo focus regex within the groups (passed on as --ginkgo.focus).
    #[arg(long, value_name = "REGEX")]
    focus: Option<String>,
    /// After the run, write what it learned into the expectation file: `unverified` specs that
    /// ran become `pass` or `fails` (with their first error, the cause still to be named).
    #[arg(long)]
    record: bool,
    /// Print the groups and exit.
    #[arg(long)]
    list_groups: bool,
    /// List every spec of the suite (a Ginkgo dry run, no cluster) with its group and expected
    /// status, and exit.
    #[arg(long)]
    list_specs: bool,
}

fn default_expectations() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("upstream/expectations.tsv")
}

fn kruise_binary(explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit
        .or_else(|| std::env::var_os("KRUISE_BIN").map(PathBuf::from))
        .or_else(|| {
            let sibling = std::env::current_exe().ok()?.parent()?.join("kruise");
            sibling.exists().then_some(sibling)
        })
        .or_else(kruise_integration::nodes::kruise_binary)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if args.list_groups {
        for group in GROUPS {
            println!(
                "{:<30} {:<28} {}{}",
                group.name,
                group.kind,
                group.files.join(" "),
                if group.implemented { "" } else { "  (not implemented)" }
            );
        }
        return ExitCode::SUCCESS;
    }
    let Some(upstream_dir) = upstream::binary_dir() else {
        eprintln!("{}", upstream::missing_message());
        return ExitCode::from(2);
    };
    let expectations_path = args.expectations.clone().unwrap_or_else(default_expectations);
    let expectations_text = std::fs::read_to_string(&expectations_path).unwrap_or_default();
    let expectations = match Expectations::parse(&expectations_text) {
        Ok(expectations) => expectations,
        Err(error) => {
            eprintln!("{}: {error}", expectations_path.display());
            return ExitCode::from(2);
        }
    };
    if args.list_specs {
        return list_specs(&upstream_dir, &args.report_dir, &expectations).await;
    }
    if args.ci {
        match check_listing(&upstream_dir, &args.report_dir, &expectations).await {
            Ok(count) => eprintln!("{}: lists all {count} specs of the suite", expectations_path.display()),
            Err(problems) => {
                for problem in &problems {
                    eprintln!("{}: {problem}", expectations_path.display());
                }
                return ExitCode::FAILURE;
            }
        }
    }
    let selected: Vec<&'static Group> = if args.all {
        GROUPS.iter().collect()
    } else if args.ci {
        let names = ci_groups(&expectations_text);
        if names.is_empty() {
            eprintln!("{}: no `# ci:` line naming the CI groups", expectations_path.display());
            return ExitCode::from(2);
        }
        match names.iter().map(|name| groups::by_name(name).ok_or(name)).collect::<Result<Vec<_>, _>>() {
            Ok(groups) => groups,
            Err(name) => {
                eprintln!("unknown group {name:?} in the `# ci:` line");
                return ExitCode::from(2);
            }
        }
    } else if !args.groups.is_empty() {
        match args.groups.iter().map(|name| groups::by_name(name).ok_or(name)).collect::<Result<Vec<_>, _>>()
        {
            Ok(groups) => groups,
            Err(name) => {
                eprintln!("unknown group {name:?} (see --list-groups)");
                return ExitCode::from(2);
            }
        }
    } else {
        GROUPS.iter().filter(|group| group.implemented).collect()
    };
    let target = match &args.kubeconfig {
        Some(path) => Target::Kubeconfig(path.clone()),
        None => {
            let Some(binary) = kruise_binary(args.kruise.clone()) else {
                eprintln!("no kruise binary: `cargo build -p kruise`, or pass --kruise / set KRUISE_BIN");
                return ExitCode::from(2);
            };
            Target::FreshKruiseUp {
                binary,
                options: UpOptions { nodes: args.nodes, feature_gates: args.feature_gates.clone() },
            }
        }
    };
    let mut extra_args = Vec::new();
    if let Some(focus) = &args.focus {
        extra_args.push(format!("--ginkgo.focus={focus}"));
    }
    let options = Arc::new(RunOptions {
        upstream_dir,
        report_dir: args.report_dir.clone(),
        target,
        timeout: Duration::from_secs(args.timeout_minutes * 60),
        verify_service_account: !args.no_verify_service_account,
        extra_args,
    });
    eprintln!(
        "upstream e2e {}: {} group(s), {} at a time, reports in {}",
        upstream::KRUISE_VERSION,
        selected.len(),
        args.jobs.max(1),
        args.report_dir.display()
    );
    let started = Instant::now();
    let runs = run_all(selected, options, args.jobs.max(1), &expectations).await;
    println!("\n{}", summary_table(&runs, &expectations));
    let regressions: Vec<String> = runs
        .iter()
        .flat_map(|run| run.specs.iter())
        .filter(|spec| matches!(judge(&expectations, spec), Verdict::Regression | Verdict::Unlisted))
        .map(|spec| spec.key.clone())
        .collect();
    let broken: Vec<&str> = runs.iter().filter(|run| run.error.is_some()).map(|run| run.group.name).collect();
    println!("finished in {:.0} s", started.elapsed().as_secs_f64());
    if args.record {
        let (recorded, changed) = record(&expectations, runs.iter().flat_map(|run| &run.specs));
        let text = recorded.render(&header_of(&expectations_text));
        match std::fs::write(&expectations_path, text) {
            Ok(()) => println!("{}: {changed} spec(s) recorded", expectations_path.display()),
            Err(error) => eprintln!("writing {}: {error}", expectations_path.display()),
        }
    }
    if regressions.is_empty() && broken.is_empty() {
        println!("every spec marked `pass` passed");
        ExitCode::SUCCESS
    } else {
        for key in &regressions {
            println!("failed or unlisted: {key}");
        }
        for name in &broken {
            println!("group did not run to its end: {name}");
        }
        ExitCode::FAILURE
    }
}

/// The group names of the file's `# ci: a, b` line.
fn ci_groups(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("# ci:"))
        .flat_map(|names| names.split(','))
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .collect()
}

async fn run_all(
    selected: Vec<&'static Group>,
    options: Arc<RunOptions>,
    jobs: usize,
    expectations: &Expectations,
) -> Vec<GroupRun> {
    let permits = Arc::new(tokio::sync::Semaphore::new(jobs));
    let mut tasks = tokio::task::JoinSet::new();
    for (index, group) in selected.into_iter().enumerate() {
        let options = options.clone();
        let permits = permits.clone();
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            eprintln!("-- {} starting", group.name);
            (index, run_group(group, &options).await)
        });
    }
    let mut runs = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((index, run)) => {
                println!("{}", group_table(&run, expectations));
                runs.push((index, run));
            }
            Err(error) => eprintln!("a group task failed: {error}"),
        }
    }
    runs.sort_by_key(|(index, _)| *index);
    runs.into_iter().map(|(_, run)| run).collect()
}

/// Every spec of the suite, from a Ginkgo dry run (no cluster needed).
async fn dry_run(
    upstream_dir: &std::path::Path,
    report_dir: &std::path::Path,
) -> Result<Vec<report::SpecOutcome>, String> {
    std::fs::create_dir_all(report_dir)
        .map_err(|error| format!("creating {}: {error}", report_dir.display()))?;
    let report_path = report_dir.join("dry-run.json");
    tokio::process::Command::new(upstream_dir.join("e2e.test"))
        .args([
            "-test.timeout=0".to_string(),
            "--ginkgo.dry-run".into(),
            "--ginkgo.no-color".into(),
            format!("--ginkgo.json-report={}", report_path.display()),
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .await
        .map_err(|error| format!("running e2e.test: {error}"))?;
    report::read(&report_path).map_err(|error| error.to_string())
}

/// Lists every spec with its group and what the file says.
async fn list_specs(
    upstream_dir: &std::path::Path,
    report_dir: &std::path::Path,
    expectations: &Expectations,
) -> ExitCode {
    let specs = match dry_run(upstream_dir, report_dir).await {
        Ok(specs) => specs,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    for spec in &specs {
        let expected = expectations.specs.get(&spec.key).map_or("unlisted", |e| e.expected.word());
        println!("{}\t{}\t{}", spec.group.unwrap_or("-"), expected, spec.key);
    }
    eprintln!("{} specs", specs.len());
    ExitCode::SUCCESS
}

/// Problems of the file against the suite: specs it does not list, and lines naming no spec.
async fn check_listing(
    upstream_dir: &std::path::Path,
    report_dir: &std::path::Path,
    expectations: &Expectations,
) -> Result<usize, Vec<String>> {
    let specs = dry_run(upstream_dir, report_dir).await.map_err(|error| vec![error])?;
    let keys: std::collections::BTreeSet<&str> = specs.iter().map(|spec| spec.key.as_str()).collect();
    let mut problems: Vec<String> = keys
        .iter()
        .filter(|key| !expectations.specs.contains_key(**key))
        .map(|key| format!("unlisted spec: {key}"))
        .collect();
    problems.extend(
        expectations
            .specs
            .keys()
            .filter(|key| !keys.contains(key.as_str()))
            .map(|key| format!("no such spec: {key}")),
    );
    if problems.is_empty() { Ok(keys.len()) } else { Err(problems) }
}
