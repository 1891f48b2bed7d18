//! How the simulated kubelet reports a pod: container statuses from what runs, the pod phase
//! (the kubelet's rules), and the conditions the kubelet owns (PodReadyToStartContainers,
//! Initialized, ContainersReady, Ready with readiness gates, PodScheduled). Pure functions: the
//! pod worker keeps the records, this module turns them into `PodStatus` fields.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{
        ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting,
        ContainerStatus, PodCondition, PodSpec, ResourceRequirements,
    },
    apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::Time},
    jiff::Timestamp,
};

/// One finished run of a container.
#[derive(Clone, Debug, PartialEq)]
pub struct Termination {
    /// Exit code.
    pub exit_code: i32,
    /// `Completed`, `Error`, ...
    pub reason: String,
    /// When it started.
    pub started_at: Option<Timestamp>,
    /// When it finished.
    pub finished_at: Timestamp,
    /// Runtime id (`containerd://...`).
    pub container_id: Option<String>,
}

/// What a container is doing now.
#[derive(Clone, Debug, PartialEq)]
pub enum RunState {
    /// Not running: `ContainerCreating`, `PodInitializing`, `ErrImagePull`, `ImagePullBackOff`,
    /// `CrashLoopBackOff`, ...
    Waiting {
        /// Reason.
        reason: String,
        /// Message, if any.
        message: Option<String>,
    },
    /// Running since `started_at`.
    Running {
        /// Start time.
        started_at: Timestamp,
    },
    /// Exited and not restarted.
    Terminated(Termination),
}

/// What the kubelet knows about one container of a pod.
#[derive(Clone, Debug, PartialEq)]
pub struct ContainerRecord {
    /// Container name.
    pub name: String,
    /// Image as written in the spec for the running incarnation.
    pub image: String,
    /// Image id of the running incarnation (`sha256:...`), once pulled.
    pub image_id: Option<String>,
    /// Runtime id of the current incarnation (`containerd://...`).
    pub container_id: Option<String>,
    /// Restarts so far.
    pub restart_count: i32,
    /// Current state.
    pub state: RunState,
    /// The previous run, once restarted.
    pub last_termination: Option<Termination>,
    /// Whether it passed its startup probe (true when running without one).
    pub started: bool,
    /// Whether it is ready.
    pub ready: bool,
    /// Resources actually applied (what the container runs with).
    pub resources: Option<ResourceRequirements>,
    /// Resources the kubelet admitted the container with (its allocation): the spec's until a
    /// resize is accepted; an infeasible resize leaves it as it was.
    pub allocated: Option<ResourceRequirements>,
}

impl ContainerRecord {
    /// A container the kubelet has not started yet.
    pub fn waiting(name: &str, image: &str, reason: &str) -> Self {
        Self {
            name: name.to_string(),
            image: image.to_string(),
            image_id: None,
            container_id: None,
            restart_count: 0,
            state: RunState::Waiting { reason: reason.to_string(), message: None },
            last_termination: None,
            started: false,
            ready: false,
            resources: None,
            allocated: None,
        }
    }

    /// Whether it is running.
    pub fn is_running(&self) -> bool {
        matches!(self.state, RunState::Running { .. })
    }

    /// Whether it exited with code 0 and stays exited.
    pub fn succeeded(&self) -> bool {
        matches!(&self.state, RunState::Terminated(t) if t.exit_code == 0)
    }
}

fn termination_state(termination: &Termination) -> ContainerState {
    ContainerState {
        terminated: Some(ContainerStateTerminated {
            exit_code: termination.exit_code,
            reason: Some(termination.reason.clone()),
            started_at: termination.started_at.map(Time),
            finished_at: Some(Time(termination.finished_at)),
            container_id: termination.container_id.clone(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The API status of one container.
pub fn container_status(record: &ContainerRecord) -> ContainerStatus {
    let state = match &record.state {
        RunState::Waiting { reason, message } => ContainerState {
            waiting: Some(ContainerStateWaiting { reason: Some(reason.clone()), message: message.clone() }),
            ..Default::default()
        },
        RunState::Running { started_at } => ContainerState {
            running: Some(ContainerStateRunning { started_at: Some(Time(*started_at)) }),
            ..Default::default()
        },
        RunState::Terminated(termination) => termination_state(termination),
    };
    let allocated: Option<BTreeMap<String, Quantity>> = record
        .allocated
        .as_ref()
        .or(record.resources.as_ref())
        .and_then(|r| r.requests.clone())
        .filter(|r| !r.is_empty());
    ContainerStatus {
        name: record.name.clone(),
        image: record.image.clone(),
        image_id: record.image_id.clone().unwrap_or_default(),
        container_id: record.container_id.clone(),
        restart_count: record.restart_count,
        ready: record.ready,
        started: Some(record.started),
        state: Some(state),
        last_state: Some(record.last_termination.as_ref().map(termination_state).unwrap_or_default()),
        resources: record.resources.clone(),
        allocated_resources: allocated,
        ..Default::default()
    }
}

/// The API status of one ephemeral container: as a container's, but never ready, without
/// `started` (the kubelet's probe manager does not look at ephemeral containers) and without
/// resources (an ephemeral container has none of its own).
pub fn ephemeral_container_status(record: &ContainerRecord) -> ContainerStatus {
    ContainerStatus {
        ready: false,
        started: None,
        resources: None,
        allocated_resources: None,
        ..container_status(record)
    }
}

/// Whether an init container is a sidecar (restartPolicy Always): it keeps running.
pub fn is_sidecar(spec: &PodSpec, name: &str) -> bool {
    spec.init_containers
        .iter()
        .flatten()
        .any(|c| c.name == name && c.restart_policy.as_deref() == Some("Always"))
}

/// The names of init containers not done yet (regular ones not succeeded, sidecars not started).
pub fn incomplete_init(spec: &PodSpec, init: &[ContainerRecord]) -> Vec<String> {
    spec.init_containers
        .iter()
        .flatten()
        .filter(|c| {
            let record = init.iter().find(|r| r.name == c.name);
            match record {
                None => true,
                Some(record) if is_sidecar(spec, &c.name) => !(record.is_running() && record.started),
                Some(record) => !record.succeeded(),
            }
        })
        .map(|c| c.name.clone())
        .collect()
}

/// The pod phase, by the kubelet's rules: Pending until initialized and every container has
/// started once; Running while any runs or will restart; Succeeded/Failed once every container
/// exited for good.
pub fn phase(spec: &PodSpec, init: &[ContainerRecord], containers: &[ContainerRecord]) -> &'static str {
    let restart_policy = spec.restart_policy.as_deref().unwrap_or("Always");
    let failed_init = init.iter().any(|r| {
        !is_sidecar(spec, &r.name) && matches!(&r.state, RunState::Terminated(t) if t.exit_code != 0)
    });
    if failed_init && restart_policy == "Never" {
        return "Failed";
    }
    if !incomplete_init(spec, init).is_empty() {
        return "Pending";
    }
    let (mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0);
    for name in spec.containers.iter().map(|c| &c.name) {
        match containers.iter().find(|r| &r.name == name) {
            None => waiting += 1,
            Some(record) => match &record.state {
                RunState::Running { .. } => running += 1,
                RunState::Terminated(t) => {
                    stopped += 1;
                    if t.exit_code == 0 {
                        succeeded += 1;
                    }
                }
                RunState::Waiting { .. } if record.last_termination.is_some() => stopped += 1,
                RunState::Waiting { .. } => waiting += 1,
            },
        }
    }
    if waiting > 0 {
        return "Pending";
    }
    if running > 0 {
        return "Running";
    }
    if stopped == 0 {
        return "Pending";
    }
    match restart_policy {
        "Always" => "Running",
        "OnFailure" if stopped == succeeded => "Succeeded",
        "OnFailure" => "Running",
        _ if stopped == succeeded => "Succeeded",
        _ => "Failed",
    }
}

/// The condition types the kubelet owns (others, like readiness gates, are left as they are).
pub const KUBELET_CONDITIONS: [&str; 5] =
    ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"];

fn condition(kind: &str, status: bool, reason: Option<&str>, message: Option<String>) -> PodCondition {
    PodCondition {
        type_: kind.to_string(),
        status: if status { "True" } else { "False" }.to_string(),
        reason: if status { None } else { reason.map(str::to_string) },
        message: if status { None } else { message },
        ..Default::default()
    }
}

/// The kubelet's conditions for a pod: `sandbox_ready` once the sandbox exists;
/// `existing` are the pod's current conditions (readiness gates are read from them, and
/// transition times are kept where the status did not change), `now` stamps new transitions.
pub fn conditions(
    spec: &PodSpec,
    sandbox_ready: bool,
    init: &[ContainerRecord],
    containers: &[ContainerRecord],
    phase: &str,
    existing: &[PodCondition],
    now: Timestamp,
) -> Vec<PodCondition> {
    let incomplete = incomplete_init(spec, init);
    let initialized = condition(
        "Initialized",
        incomplete.is_empty(),
        Some("ContainersNotInitialized"),
        Some(format!("containers with incomplete status: [{}]", incomplete.join(" "))),
    );
    let unready: Vec<String> = spec
        .containers
        .iter()
        .filter(|c| !containers.iter().any(|r| r.name == c.name && r.ready))
        .map(|c| c.name.clone())
        .chain(
            spec.init_containers
                .iter()
                .flatten()
                .filter(|c| is_sidecar(spec, &c.name) && !init.iter().any(|r| r.name == c.name && r.ready))
                .map(|c| c.name.clone()),
        )
        .collect();
    let completed = phase == "Succeeded";
    let containers_ready = if completed {
        condition("ContainersReady", false, Some("PodCompleted"), None)
    } else {
        condition(
            "ContainersReady",
            unready.is_empty(),
            Some("ContainersNotReady"),
            Some(format!("containers with unready status: [{}]", unready.join(" "))),
        )
    };
    let mut ready = containers_ready.clone();
    ready.type_ = "Ready".into();
    if ready.status == "True" {
        for gate in spec.readiness_gates.iter().flatten() {
            match existing.iter().find(|c| c.type_ == gate.condition_type) {
                None => {
                    ready = condition(
                        "Ready",
                        false,
                        Some("ReadinessGatesNotReady"),
                        Some(format!(
                            "corresponding condition of pod readiness gate \"{}\" does not exist.",
                            gate.condition_type
                        )),
                    );
                    break;
                }
                Some(c) if c.status != "True" => {
                    ready = condition(
                        "Ready",
                        false,
                        Some("ReadinessGatesNotReady"),
                        Some(format!(
                            "the status of pod readiness gate \"{}\" is not \"True\", but {}",
                            gate.condition_type, c.status
                        )),
                    );
                    break;
                }
                Some(_) => {}
            }
        }
    }
    let mut result = vec![
        condition("PodReadyToStartContainers", sandbox_ready, None, None),
        initialized,
        ready,
        containers_ready,
        condition("PodScheduled", true, None, None),
    ];
    for new in &mut result {
        let previous = existing.iter().find(|c| c.type_ == new.type_);
        new.last_transition_time = match previous {
            Some(previous) if previous.status == new.status => previous.last_transition_time.clone(),
            _ => Some(Time(now)),
        };
        new.last_probe_time = None;
    }
    result
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Container, PodReadinessGate};

    use super::*;

    fn spec(containers: &[&str], init: &[(&str, bool)], restart: &str) -> PodSpec {
        PodSpec {
            containers: containers
                .iter()
                .map(|n| Container { name: n.to_string(), ..Default::default() })
                .collect(),
            init_containers: (!init.is_empty()).then(|| {
                init.iter()
                    .map(|(n, sidecar)| Container {
                        name: n.to_string(),
                        restart_policy: sidecar.then(|| "Always".to_string()),
                        ..Default::default()
                    })
                    .collect()
            }),
            restart_policy: Some(restart.into()),
            ..Default::default()
        }
    }

    fn running(name: &str, ready: bool) -> ContainerRecord {
        ContainerRecord {
            state: RunState::Running { started_at: Timestamp::UNIX_EPOCH },
            started: true,
            ready,
            ..ContainerRecord::waiting(name, "img", "")
        }
    }

    fn exited(name: &str, code: i32) -> ContainerRecord {
        ContainerRecord {
            state: RunState::Terminated(Termination {
                exit_code: code,
                reason: if code == 0 { "Completed" } else { "Error" }.into(),
                started_at: None,
                finished_at: Timestamp::UNIX_EPOCH,
                container_id: None,
            }),
            ..ContainerRecord::waiting(name, "img", "")
        }
    }

    #[test]
    fn phase_follows_the_kubelet_rules() {
        let creating = ContainerRecord::waiting("a", "img", "ContainerCreating");
        let mut crashing = ContainerRecord::waiting("a", "img", "CrashLoopBackOff");
        crashing.last_termination = exited("a", 1).last_termination.or(Some(Termination {
            exit_code: 1,
            reason: "Error".into(),
            started_at: None,
            finished_at: Timestamp::UNIX_EPOCH,
            container_id: None,
        }));
        type Case = (&'static str, PodSpec, Vec<ContainerRecord>, Vec<ContainerRecord>, &'static str);
        let cases: Vec<Case> = vec![
            ("nothing started", spec(&["a"], &[], "Always"), vec![], vec![creating.clone()], "Pending"),
            ("running", spec(&["a"], &[], "Always"), vec![], vec![running("a", true)], "Running"),
            ("init pending", spec(&["a"], &[("i", false)], "Always"), vec![], vec![], "Pending"),
            (
                "init done",
                spec(&["a"], &[("i", false)], "Always"),
                vec![exited("i", 0)],
                vec![running("a", false)],
                "Running",
            ),
            (
                "sidecar running counts as initialized",
                spec(&["a"], &[("s", true)], "Always"),
                vec![running("s", true)],
                vec![running("a", true)],
                "Running",
            ),
            (
                "init failed, never",
                spec(&["a"], &[("i", false)], "Never"),
                vec![exited("i", 1)],
                vec![],
                "Failed",
            ),
            ("restarting counts as running", spec(&["a"], &[], "Always"), vec![], vec![crashing], "Running"),
            ("job succeeded", spec(&["a"], &[], "Never"), vec![], vec![exited("a", 0)], "Succeeded"),
            ("job failed", spec(&["a"], &[], "Never"), vec![], vec![exited("a", 3)], "Failed"),
            (
                "on failure, success",
                spec(&["a"], &[], "OnFailure"),
                vec![],
                vec![exited("a", 0)],
                "Succeeded",
            ),
            (
                "one of two still running",
                spec(&["a", "b"], &[], "Never"),
                vec![],
                vec![exited("a", 0), running("b", true)],
                "Running",
            ),
        ];
        for (name, spec, init, containers, expected) in cases {
            assert_eq!(phase(&spec, &init, &containers), expected, "{name}");
        }
    }

    #[test]
    fn ready_needs_every_container_and_every_gate() {
        let now = Timestamp::UNIX_EPOCH;
        let mut gated = spec(&["a", "b"], &[], "Always");
        let find = |conditions: &[PodCondition], kind: &str| {
            conditions.iter().find(|c| c.type_ == kind).cloned().unwrap()
        };

        let partly =
            conditions(&gated, true, &[], &[running("a", true), running("b", false)], "Running", &[], now);
        assert_eq!(find(&partly, "ContainersReady").status, "False");
        assert_eq!(find(&partly, "Ready").message.as_deref(), Some("containers with unready status: [b]"));

        let all = [running("a", true), running("b", true)];
        assert_eq!(find(&conditions(&gated, true, &[], &all, "Running", &[], now), "Ready").status, "True");

        gated.readiness_gates = Some(vec![PodReadinessGate { condition_type: "example.com/lb".into() }]);
        let missing = conditions(&gated, true, &[], &all, "Running", &[], now);
        assert_eq!(find(&missing, "ContainersReady").status, "True");
        assert_eq!(find(&missing, "Ready").status, "False");
        assert_eq!(find(&missing, "Ready").reason.as_deref(), Some("ReadinessGatesNotReady"));
        let gate = |status: &str| PodCondition {
            type_: "example.com/lb".into(),
            status: status.into(),
            ..Default::default()
        };
        assert_eq!(
            find(&conditions(&gated, true, &[], &all, "Running", &[gate("False")], now), "Ready").status,
            "False"
        );
        assert_eq!(
            find(&conditions(&gated, true, &[], &all, "Running", &[gate("True")], now), "Ready").status,
            "True"
        );
    }

    #[test]
    fn transition_times_are_kept_while_the_status_holds() {
        let earlier: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let later: Timestamp = "2026-01-01T00:10:00Z".parse().unwrap();
        let spec = spec(&["a"], &[], "Always");
        let first = conditions(&spec, true, &[], &[running("a", true)], "Running", &[], earlier);
        let again = conditions(&spec, true, &[], &[running("a", true)], "Running", &first, later);
        assert_eq!(again, first);
        let unready = conditions(&spec, true, &[], &[running("a", false)], "Running", &first, later);
        let ready = unready.iter().find(|c| c.type_ == "Ready").unwrap();
        assert_eq!(ready.last_transition_time, Some(Time(later)));
    }

    #[test]
    fn container_status_reports_ids_restarts_and_last_state() {
        let mut record = running("a", true);
        record.container_id = Some("containerd://abc".into());
        record.image_id = Some("sha256:1".into());
        record.restart_count = 1;
        record.last_termination = Some(Termination {
            exit_code: 0,
            reason: "Completed".into(),
            started_at: None,
            finished_at: Timestamp::UNIX_EPOCH,
            container_id: Some("containerd://old".into()),
        });
        let status = container_status(&record);
        assert_eq!(status.container_id.as_deref(), Some("containerd://abc"));
        assert_eq!(status.image_id, "sha256:1");
        assert_eq!(status.restart_count, 1);
        assert!(status.state.unwrap().running.is_some());
        let last = status.last_state.unwrap().terminated.unwrap();
        assert_eq!(last.container_id.as_deref(), Some("containerd://old"));
    }
}
