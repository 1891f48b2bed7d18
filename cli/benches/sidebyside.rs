//! Our manager side by side with upstream kruise-manager v1.9.0 (built by
//! `integration/upstream/build.sh`) on the same workload: each manager runs as its own process
//! against a fresh embedded API server with the same simulated nodes, and drives
//!
//! 1. a CloneSet of N pods (`InPlaceIfPossible`, maxUnavailable 20%) created until all Ready,
//!    then an image rollout until every pod is updated and Ready;
//! 2. the same with `ReCreate`.
//!
//! Before the first phase each fresh manager is left to write its one-off per-node objects
//! (a NodeImage per node, ...) and go quiet; those writes are printed apart, not per pod.
//!
//! For each manager it prints the times, the manager's CPU seconds and peak RSS, and every API
//! request it made (counted by the embedded API server, by verb, per pod, conflicts apart), then
//! ours / upstream as ratios. Upstream runs twice: with its default client limits (30 QPS,
//! burst 50) and with them raised out of the way, so that the comparison is of controllers, not
//! of rate limits. Figures are printed, never asserted.
//!
//! Sizes: `KRUISE_BENCH_PODS` (500), `KRUISE_BENCH_NODES` (20), `KRUISE_BENCH_TIMEOUT` (seconds per
//! wait, 900), `KRUISE_BENCH_SUBJECTS` (`ours,upstream,upstream-unlimited`); `--quick` runs 50
//! pods on 5 nodes. Skips with a message when the upstream binaries are not built.
//!
//! Run with `cargo bench -p kruise --bench sidebyside` (or `-- --quick`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly on unexpected data

mod common;

use std::{
    collections::{BTreeMap, HashMap},
    time::{Duration, Instant},
};

use common::{
    AGENT_BENCH, AGENT_NODES, Cluster, NAMESPACE, Process, cpu_seconds, env_or, init_tracing, memory_mib,
    quick_requested, start_manager_process, wait_for, wait_pods_gone,
};
use k8s_openapi::api::core::v1::Pod;
use kruise_controlplane::apiserver::{counters::RequestKey, request::Verb};
use kruise_crds::apps::{v1alpha1::NodeImage, v1beta1::CloneSet};
use kruise_integration::upstream::{
    self,
    manager::{UpstreamManager, UpstreamSpec},
};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

/// Which manager a run uses.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Subject {
    Ours,
    /// Upstream with its default client limits.
    Upstream,
    /// Upstream with the limits raised.
    UpstreamUnlimited,
}

impl Subject {
    fn label(self) -> &'static str {
        match self {
            Self::Ours => "ours",
            Self::Upstream => "upstream",
            Self::UpstreamUnlimited => "upstream-unlimited",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [Self::Ours, Self::Upstream, Self::UpstreamUnlimited].into_iter().find(|s| s.label() == text.trim())
    }
}

/// The running manager.
enum Manager {
    Ours(Process),
    Upstream(UpstreamManager),
}

impl Manager {
    fn pid(&self) -> u32 {
        match self {
            Self::Ours(process) => process.0.id(),
            Self::Upstream(manager) => manager.pid().unwrap_or(0),
        }
    }

    async fn stop(self) {
        match self {
            Self::Ours(process) => drop(process),
            Self::Upstream(manager) => manager.stop().await,
        }
    }
}

/// Requests of the manager between two counter snapshots: every client but the nodes and
/// this benchmark.
#[derive(Clone, Debug, Default)]
struct Requests {
    /// Count by `VERB resource[/sub]`.
    by_what: BTreeMap<String, u64>,
    total: u64,
    writes: u64,
    conflicts: u64,
    /// Conflicts (409) by `VERB resource[/sub]`, to tell where they come from.
    conflicts_by_what: BTreeMap<String, u64>,
    pod_gets: u64,
}

impl Requests {
    fn between(before: &HashMap<RequestKey, u64>, after: &HashMap<RequestKey, u64>) -> Self {
        let mut out = Self::default();
        for (key, n) in after {
            if key.client == AGENT_NODES || key.client == AGENT_BENCH {
                continue;
            }
            let delta = n - before.get(key).copied().unwrap_or(0);
            if delta == 0 {
                continue;
            }
            let verb = match key.verb {
                Verb::Create => "POST",
                Verb::Update => "PUT",
                Verb::Patch => "PATCH",
                Verb::Delete => "DELETE",
                Verb::DeleteCollection => "DELETE-collection",
                Verb::Get => "GET",
                Verb::List => "LIST",
                Verb::Watch => "WATCH",
            };
            let resource = match &key.subresource {
                Some(sub) => format!("{}/{sub}", key.resource),
                None => key.resource.clone(),
            };
            let what = format!("{verb} {resource}");
            if key.code == 409 {
                *out.conflicts_by_what.entry(what.clone()).or_default() += delta;
            }
            *out.by_what.entry(what).or_default() += delta;
            out.total += delta;
            if key.is_write() {
                out.writes += delta;
            }
            if key.code == 409 {
                out.conflicts += delta;
            }
            if key.verb == Verb::Get && key.resource == "pods" && key.subresource.is_none() {
                out.pod_gets += delta;
            }
        }
        out
    }

    fn detail(&self) -> String {
        let mut items: Vec<(&String, &u64)> = self.by_what.iter().collect();
        items.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let mut text =
            items.iter().take(8).map(|(what, n)| format!("{n} {what}")).collect::<Vec<_>>().join(", ");
        if !self.conflicts_by_what.is_empty() {
            let conflicts: Vec<String> =
                self.conflicts_by_what.iter().map(|(what, n)| format!("{n} {what}")).collect();
            text.push_str(&format!("; 409 on: {}", conflicts.join(", ")));
        }
        text
    }
}

/// One phase of one run.
#[derive(Clone, Debug, Default)]
struct Phase {
    seconds: Option<f64>,
    requests: Requests,
    kept_uids: usize,
}

/// Everything one manager did.
#[derive(Debug, Default)]
struct Run {
    phases: BTreeMap<&'static str, Phase>,
    cpu_seconds: f64,
    peak_rss_mib: f64,
}

fn cloneset(name: &str, replicas: usize, image: &str, policy: &str) -> CloneSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image, "imagePullPolicy": "IfNotPresent"}]}
            },
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": policy, "maxUnavailable": "20%"}
            }
        }
    }))
    .unwrap()
}

fn settled(set: &CloneSet, replicas: usize) -> (bool, String) {
    let n = replicas as i32;
    match &set.status {
        Some(s) => (
            s.observed_generation == set.metadata.generation.unwrap_or(0)
                && s.replicas == n
                && s.updated_replicas == n
                && s.updated_ready_replicas == n
                && s.ready_replicas == n,
            format!(
                "replicas {}, ready {}, updated {}, updatedReady {}",
                s.replicas, s.ready_replicas, s.updated_replicas, s.updated_ready_replicas
            ),
        ),
        None => (false, "no status yet".into()),
    }
}

async fn wait_settled(
    sets: &Api<CloneSet>,
    name: &str,
    n: usize,
    what: &str,
    limit: Duration,
) -> Option<f64> {
    let started = Instant::now();
    wait_for(what, limit, || async move {
        match sets.get(name).await {
            Ok(set) => settled(&set, n),
            Err(error) => (false, format!("error: {error}")),
        }
    })
    .await
    .map(|_| started.elapsed().as_secs_f64())
}

/// The phase, printed apart, in which a fresh manager writes its per-node objects.
const STARTUP_PHASE: &str = "manager start-up";

/// Waits until the fresh manager has written its one-off per-node objects (a NodeImage for
/// every node, and whatever else it writes at start) and then stays quiet for three seconds,
/// so that those writes are not counted as the first phase's writes per pod.
async fn settle_startup(cluster: &Cluster, nodes: u32, subject: &Subject, timeout: Duration) -> Phase {
    let before = cluster.counts.snapshot();
    let images: Api<NodeImage> = Api::all(cluster.client.clone());
    let seconds = wait_for(&format!("[{}] NodeImage per node", subject.label()), timeout, || {
        let images = images.clone();
        async move {
            match images.list(&ListParams::default()).await {
                Ok(list) => (list.items.len() >= nodes as usize, format!("{} of {nodes}", list.items.len())),
                Err(error) => (false, format!("error: {error}")),
            }
        }
    })
    .await
    .map(|d| d.as_secs_f64());
    let quiet_for = Duration::from_secs(3);
    let started = Instant::now();
    let mut last = Requests::between(&before, &cluster.counts.snapshot()).writes;
    let mut quiet_since = Instant::now();
    while quiet_since.elapsed() < quiet_for && started.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let writes = Requests::between(&before, &cluster.counts.snapshot()).writes;
        if writes != last {
            last = writes;
            quiet_since = Instant::now();
        }
    }
    Phase { seconds, requests: Requests::between(&before, &cluster.counts.snapshot()), kept_uids: 0 }
}

async fn run_subject(subject: Subject, pods_n: usize, nodes: u32, timeout: Duration) -> Option<Run> {
    let pods_per_node = ((pods_n as u32 * 2).div_ceil(nodes.max(1))).max(110);
    let cluster = Cluster::start(nodes, pods_per_node).await;
    let manager = match subject {
        Subject::Ours => {
            let log = cluster.dir.path().join("manager.log");
            // The feature gates' defaults, as upstream runs here.
            Manager::Ours(start_manager_process(&cluster.kubeconfig, &log, "").await?)
        }
        Subject::Upstream | Subject::UpstreamUnlimited => {
            let dir = upstream::binary_dir()?;
            let spec = UpstreamSpec {
                client_limits: (subject == Subject::UpstreamUnlimited).then_some((100_000, 100_000)),
                verbosity: 1,
                ..Default::default()
            };
            match UpstreamManager::start(&cluster.client, &cluster.kubeconfig, &dir, &spec).await {
                Ok(manager) => Manager::Upstream(manager),
                Err(error) => {
                    println!("  upstream kruise-manager did not start: {error}");
                    return None;
                }
            }
        }
    };
    let pid = manager.pid();
    let cpu_before = cpu_seconds(pid);
    let sets: Api<CloneSet> = Api::namespaced(cluster.client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NAMESPACE);
    let mut run = Run::default();
    let startup = settle_startup(&cluster, nodes, &subject, timeout).await;
    run.phases.insert(STARTUP_PHASE, startup);
    for (policy, create_phase, rollout_phase) in [
        ("InPlaceIfPossible", "create (in-place set)", "in-place rollout"),
        ("ReCreate", "create (recreate set)", "recreate rollout"),
    ] {
        let name = format!("side-{}", policy.to_lowercase());
        let before = cluster.counts.snapshot();
        sets.create(&PostParams::default(), &cloneset(&name, pods_n, "registry.local/side:v1", policy))
            .await
            .unwrap();
        let seconds =
            wait_settled(&sets, &name, pods_n, &format!("[{}] {create_phase}", subject.label()), timeout)
                .await;
        let requests = Requests::between(&before, &cluster.counts.snapshot());
        run.phases.insert(create_phase, Phase { seconds, requests, kept_uids: 0 });
        tokio::time::sleep(Duration::from_secs(2)).await;
        let uids: std::collections::HashSet<String> = pods
            .list(&ListParams::default().labels(&format!("app={name}")))
            .await
            .unwrap()
            .items
            .iter()
            .filter_map(|p| p.uid())
            .collect();

        let before = cluster.counts.snapshot();
        // A JSON patch of the image alone, as `kubectl set image` changes it. A merge patch of
        // `containers` replaces the whole list and drops `imagePullPolicy: IfNotPresent`, which
        // Kruise's template defaulting then sets to `Always`: a change in more than the image,
        // so every pod would be recreated instead of updated in place.
        let patch: json_patch::Patch = serde_json::from_value(json!([
            {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "registry.local/side:v2"}
        ]))
        .unwrap();
        sets.patch(&name, &PatchParams::default(), &Patch::Json::<()>(patch)).await.unwrap();
        let seconds =
            wait_settled(&sets, &name, pods_n, &format!("[{}] {rollout_phase}", subject.label()), timeout)
                .await;
        let requests = Requests::between(&before, &cluster.counts.snapshot());
        let kept_uids = pods
            .list(&ListParams::default().labels(&format!("app={name}")))
            .await
            .unwrap()
            .items
            .iter()
            .filter(|p| p.uid().is_some_and(|u| uids.contains(&u)))
            .count();
        run.phases.insert(rollout_phase, Phase { seconds, requests, kept_uids });
        let _ = sets.delete(&name, &DeleteParams::background()).await;
        wait_pods_gone(&pods, &name, timeout).await;
    }
    run.cpu_seconds = cpu_seconds(pid) - cpu_before;
    run.peak_rss_mib = memory_mib(pid, "VmHWM:");
    manager.stop().await;
    cluster.stop().await;
    Some(run)
}

fn print_table(pods_n: usize, runs: &[(Subject, Run)]) {
    let phases = ["create (in-place set)", "in-place rollout", "create (recreate set)", "recreate rollout"];
    let ours = runs.iter().find(|(s, _)| *s == Subject::Ours).map(|(_, r)| r);
    let mut header = format!("  {:<44}", "");
    for (subject, _) in runs {
        header.push_str(&format!(" {:>18}", subject.label()));
    }
    for (subject, _) in runs.iter().filter(|(s, _)| *s != Subject::Ours) {
        header.push_str(&format!(" {:>18}", format!("ours/{}", subject.label())));
    }
    println!("\n{header}");
    let row = |label: String, value: &dyn Fn(&Run) -> Option<f64>, digits: usize| {
        let mut line = format!("  {label:<44}");
        for (_, run) in runs {
            match value(run) {
                Some(v) => line.push_str(&format!(" {v:>18.digits$}")),
                None => line.push_str(&format!(" {:>18}", "-")),
            }
        }
        for (_, run) in runs.iter().filter(|(s, _)| *s != Subject::Ours) {
            match (ours.and_then(value), value(run)) {
                (Some(a), Some(b)) if b != 0.0 => line.push_str(&format!(" {:>17.2}x", a / b)),
                _ => line.push_str(&format!(" {:>18}", "-")),
            }
        }
        println!("{line}");
    };
    let per_pod = |n: u64| n as f64 / pods_n as f64;
    row(
        format!("{STARTUP_PHASE}: writes (one-off, per node)"),
        &|r: &Run| r.phases.get(STARTUP_PHASE).map(|p| p.requests.writes as f64),
        0,
    );
    for phase in phases {
        row(format!("{phase}: seconds"), &|r: &Run| r.phases.get(phase).and_then(|p| p.seconds), 2);
        row(
            format!("{phase}: requests/pod"),
            &|r: &Run| r.phases.get(phase).map(|p| per_pod(p.requests.total)),
            2,
        );
        row(
            format!("{phase}: writes/pod"),
            &|r: &Run| r.phases.get(phase).map(|p| per_pod(p.requests.writes)),
            2,
        );
        row(
            format!("{phase}: conflicts (409)"),
            &|r: &Run| r.phases.get(phase).map(|p| p.requests.conflicts as f64),
            0,
        );
        row(
            format!("{phase}: pod GETs"),
            &|r: &Run| r.phases.get(phase).map(|p| p.requests.pod_gets as f64),
            0,
        );
    }
    row(
        "in-place rollout: pods that kept their UID".into(),
        &|r: &Run| r.phases.get("in-place rollout").map(|p| p.kept_uids as f64),
        0,
    );
    row("manager CPU seconds (all phases)".into(), &|r: &Run| Some(r.cpu_seconds), 1);
    row("manager peak RSS (MiB)".into(), &|r: &Run| Some(r.peak_rss_mib), 1);
    println!("\n  requests by kind (top 8 per phase):");
    for (subject, run) in runs {
        for (phase, p) in &run.phases {
            println!("    {:<18} {:<24} {}", subject.label(), phase, p.requests.detail());
        }
    }
}

#[tokio::main]
async fn main() {
    init_tracing();
    let quick = quick_requested();
    let pods_n: usize = env_or("KRUISE_BENCH_PODS", if quick { 50 } else { 500 });
    let nodes: u32 = env_or("KRUISE_BENCH_NODES", if quick { 5 } else { 20 });
    let timeout = Duration::from_secs(env_or("KRUISE_BENCH_TIMEOUT", 900u64));
    let subjects: Vec<Subject> =
        env_or("KRUISE_BENCH_SUBJECTS", "ours,upstream,upstream-unlimited".to_string())
            .split(',')
            .map(|s| Subject::parse(s).unwrap_or_else(|| panic!("unknown subject {s:?}")))
            .collect();
    if upstream::binary_dir().is_none() && subjects.iter().any(|s| *s != Subject::Ours) {
        println!("side-by-side benchmark skipped: {}", upstream::missing_message());
        return;
    }
    println!(
        "side by side with upstream kruise-manager {}: {pods_n}-pod CloneSets on {nodes} simulated nodes, each manager as its own process on a fresh embedded API server",
        upstream::KRUISE_VERSION
    );
    let mut runs = Vec::new();
    for subject in subjects {
        println!("\n[{}]", subject.label());
        match run_subject(subject, pods_n, nodes, timeout).await {
            Some(run) => runs.push((subject, run)),
            None => println!("  [{}] did not run", subject.label()),
        }
    }
    print_table(pods_n, &runs);
}
