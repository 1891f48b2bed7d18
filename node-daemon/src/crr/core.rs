//! The decisions of the container recreate executor, as pure functions of the requests, the
//! runtime's view of the pod and the time (upstream `pkg/daemon/containerrecreate`):
//!
//! - [`pick_request`]: one request per pod at a time, the one already running first, then by
//!   age; the others wait as `Pending`;
//! - [`container_states`]: where each requested container stands, from the runtime's newest
//!   instance of it and the manager's snapshot of the pod status: `Pending` until stopped,
//!   `Recreating` once its instance exited or was replaced, `Succeeded` once the replacement is
//!   ready (as the pod status says) and has run `minStartedSeconds`;
//! - [`walk`] and [`after_failed_stop`]: which container to stop next (one per round; with
//!   `orderedRecreate` only once the previous one succeeded) and what a failed stop means under
//!   `failurePolicy`.

use std::{cmp::Ordering, collections::BTreeMap, time::Duration};

use k8s_cri::v1 as cri;
use k8s_openapi::{apimachinery::pkg::apis::meta::v1::Condition, jiff::Timestamp};
use kruise_crds::apps::v1beta1::{
    CONTAINER_RECREATE_REQUEST_PRE_RECREATE_GRACE_TYPE, ContainerRecreateRequest,
    ContainerRecreateRequestContainerRecreateState as RecreateState,
    ContainerRecreateRequestFailurePolicyType, ContainerRecreateRequestPhase as Phase,
    ContainerRecreateRequestSyncContainerStatus,
};

/// The kubelet's container label naming the container in the pod spec.
pub const LABEL_CONTAINER_NAME: &str = "io.kubernetes.container.name";
/// The kubelet's label carrying the pod UID on sandboxes and containers.
pub const LABEL_POD_UID: &str = "io.kubernetes.pod.uid";
/// The kubelet's container annotation carrying the restart count.
pub const ANNOTATION_RESTART_COUNT: &str = "io.kubernetes.container.restartCount";
/// Grace period when the request names none (a pod's default).
pub const DEFAULT_GRACE_SECONDS: i64 = 30;
/// Shortest grace period a stop gets after the preStop hook (the kubelet's
/// `minimumGracePeriodInSeconds`), so a container is never SIGKILLed at once.
pub const MINIMUM_GRACE_SECONDS: i64 = 2;

/// One container instance of the pod as the runtime reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeContainer {
    /// The runtime's id (without the `containerd://` prefix).
    pub id: String,
    /// The container's name in the pod spec.
    pub name: String,
    /// Whether it exited.
    pub exited: bool,
    /// The kubelet's restart count of this instance.
    pub restart_count: i32,
    /// When it was created (Unix nanoseconds).
    pub created_at: i64,
    /// When it started (Unix nanoseconds, 0 when it never did).
    pub started_at: i64,
}

impl RuntimeContainer {
    /// The runtime's view of one container, from its CRI status.
    pub fn from_status(status: &cri::ContainerStatus) -> Self {
        let name = status
            .labels
            .get(LABEL_CONTAINER_NAME)
            .cloned()
            .or_else(|| status.metadata.as_ref().map(|m| m.name.clone()))
            .unwrap_or_default();
        Self {
            id: status.id.clone(),
            name,
            exited: status.state == cri::ContainerState::ContainerExited as i32,
            restart_count: status
                .annotations
                .get(ANNOTATION_RESTART_COUNT)
                .and_then(|count| count.parse().ok())
                .unwrap_or(0),
            created_at: status.created_at,
            started_at: if status.state == cri::ContainerState::ContainerCreated as i32 {
                0
            } else {
                status.started_at
            },
        }
    }
}

/// Every container instance of one pod, newest first (the kubelet's `containerStatusByCreated`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodRuntimeStatus {
    /// The instances, newest first.
    pub containers: Vec<RuntimeContainer>,
}

impl PodRuntimeStatus {
    /// The instances, sorted newest first.
    pub fn new(mut containers: Vec<RuntimeContainer>) -> Self {
        containers.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| b.id.cmp(&a.id)));
        Self { containers }
    }

    /// The newest instance of a container.
    pub fn find(&self, name: &str) -> Option<&RuntimeContainer> {
        self.containers.iter().find(|c| c.name == name)
    }
}

/// The runtime type of a request's containers (`containerd` for `containerd://<id>`), from
/// their `statusContext`: every container must have one, all of the same type.
pub fn runtime_type(crr: &ContainerRecreateRequest) -> Result<String, String> {
    let mut found: Option<String> = None;
    for container in &crr.spec.containers {
        let id = container.status_context.as_ref().map(|c| c.container_id.as_str()).unwrap_or_default();
        if id.is_empty() {
            return Err(format!("no statusContext or empty containerID in {} container", container.name));
        }
        let Some((kind, _)) =
            id.split_once("://").filter(|(kind, rest)| !kind.is_empty() && !rest.is_empty())
        else {
            return Err(format!("failed to parse containerID {id} in {} container", container.name));
        };
        match &found {
            None => found = Some(kind.to_string()),
            Some(previous) if previous != kind => {
                return Err(format!("has different runtime types {previous}, {kind} in Pod"));
            }
            Some(_) => {}
        }
    }
    found.ok_or_else(|| "no runtime type found in Pod".into())
}

fn phase_weight(phase: &Phase) -> u8 {
    match phase {
        Phase::Completed => 1,
        Phase::Recreating => 2,
        Phase::Pending => 3,
        _ => 4,
    }
}

fn is_done(crr: &ContainerRecreateRequest) -> bool {
    crr.metadata.deletion_timestamp.is_some()
        || crr.status.as_ref().is_some_and(|s| s.completion_time.is_some())
}

fn phase(crr: &ContainerRecreateRequest) -> Phase {
    crr.status.as_ref().map(|s| s.phase.clone()).unwrap_or_default()
}

/// Which of one pod's requests to carry out (a `Recreating` one first, then `Pending`, then
/// new ones, oldest first), and which new ones to mark `Pending` meanwhile (their names).
pub fn pick_request(
    requests: &[ContainerRecreateRequest],
) -> (Option<&ContainerRecreateRequest>, Vec<String>) {
    let mut sorted: Vec<&ContainerRecreateRequest> = requests.iter().filter(|crr| !is_done(crr)).collect();
    sorted.sort_by(|a, b| {
        phase_weight(&phase(a)).cmp(&phase_weight(&phase(b))).then_with(|| {
            let created =
                |crr: &ContainerRecreateRequest| crr.metadata.creation_timestamp.as_ref().map(|t| t.0);
            created(a).partial_cmp(&created(b)).unwrap_or(Ordering::Equal)
        })
    });
    let mut iter = sorted.into_iter();
    let picked = iter.next();
    let pending =
        iter.filter(|crr| phase(crr).is_unset()).filter_map(|crr| crr.metadata.name.clone()).collect();
    (picked, pending)
}

/// When the `PreRecreateGrace` condition (set by the manager once the pod is held not ready)
/// became True: the unready grace period counts from there.
pub fn pre_recreate_grace_since(crr: &ContainerRecreateRequest) -> Option<Timestamp> {
    let conditions: &[Condition] = crr.status.as_ref().map(|s| s.conditions.as_slice()).unwrap_or_default();
    conditions
        .iter()
        .find(|c| c.type_ == CONTAINER_RECREATE_REQUEST_PRE_RECREATE_GRACE_TYPE && c.status == "True")
        .map(|c| c.last_transition_time.0)
}

/// What to do about `unreadyGracePeriodSeconds` before stopping anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grace {
    /// No grace period, or it is over.
    Proceed,
    /// The manager has not held the pod not ready yet.
    AwaitHold,
    /// Wait this long more.
    Wait(Duration),
}

/// Where the request stands with its unready grace period at `now`.
pub fn unready_grace(crr: &ContainerRecreateRequest, now: Timestamp) -> Grace {
    let Some(grace) = crr.spec.strategy.as_ref().and_then(|s| s.unready_grace_period_seconds) else {
        return Grace::Proceed;
    };
    let Some(since) = pre_recreate_grace_since(crr) else { return Grace::AwaitHold };
    let elapsed = Duration::try_from(now.duration_since(since)).unwrap_or(Duration::ZERO);
    let left = Duration::from_secs(u64::try_from(grace).unwrap_or(0)).saturating_sub(elapsed);
    if left.is_zero() { Grace::Proceed } else { Grace::Wait(left) }
}

fn min_started(crr: &ContainerRecreateRequest) -> Duration {
    let seconds = crr.spec.strategy.as_ref().map(|s| s.min_started_seconds).unwrap_or(0);
    Duration::from_secs(u64::try_from(seconds).unwrap_or(0))
}

/// Whether a failed container fails the whole request.
pub fn ignores_failures(crr: &ContainerRecreateRequest) -> bool {
    crr.spec
        .strategy
        .as_ref()
        .is_some_and(|s| s.failure_policy == ContainerRecreateRequestFailurePolicyType::Ignore)
}

fn ordered(crr: &ContainerRecreateRequest) -> bool {
    crr.spec.strategy.as_ref().is_some_and(|s| s.ordered_recreate)
}

fn forced(crr: &ContainerRecreateRequest) -> bool {
    crr.spec.strategy.as_ref().is_some_and(|s| s.force_recreate)
}

/// Where each requested container stands now (upstream
/// `getCurrentCRRContainersRecreateStates`); `runtime_type` prefixes the runtime's ids as the
/// pod status does.
pub fn container_states(
    crr: &ContainerRecreateRequest,
    runtime: &PodRuntimeStatus,
    runtime_type: &str,
    now: Timestamp,
) -> Vec<RecreateState> {
    let stored: &[RecreateState] =
        crr.status.as_ref().map(|s| s.container_recreate_states.as_slice()).unwrap_or_default();
    let snapshot: BTreeMap<&str, &ContainerRecreateRequestSyncContainerStatus> =
        crr.status.iter().flat_map(|s| &s.container_status_snapshot).map(|s| (s.name.as_str(), s)).collect();
    let now_nanos = i64::try_from(now.as_nanosecond()).unwrap_or(i64::MAX);
    let min_started = min_started(crr);
    crr.spec
        .containers
        .iter()
        .map(|container| {
            let previous = stored.iter().find(|s| s.name == container.name);
            if let Some(previous) = previous
                && matches!(previous.phase, Phase::Failed | Phase::Succeeded)
            {
                return previous.clone();
            }
            let killed = previous.is_some_and(|p| p.is_killed);
            let state = |phase: Phase, is_killed: bool, message: &str| RecreateState {
                name: container.name.clone(),
                phase,
                message: message.into(),
                is_killed,
            };
            let Some(current) = runtime.find(&container.name) else {
                return state(Phase::Pending, killed, "not found container on Node");
            };
            if current.exited {
                return state(Phase::Recreating, killed, "");
            }
            if forced(crr) && !killed {
                return state(Phase::Pending, false, "");
            }
            let current_id = format!("{runtime_type}://{}", current.id);
            let Some(context) = &container.status_context else {
                return state(Phase::Pending, killed, "");
            };
            if current_id == context.container_id && current.restart_count <= context.restart_count {
                return state(Phase::Pending, killed, "");
            }
            let ran = Duration::from_nanos(
                u64::try_from(now_nanos.saturating_sub(current.started_at)).unwrap_or(0),
            );
            let ready_in_pod = snapshot
                .get(container.name.as_str())
                .is_some_and(|synced| synced.container_id == current_id && synced.ready);
            let phase = if ready_in_pod && ran > min_started { Phase::Succeeded } else { Phase::Recreating };
            state(phase, killed, "")
        })
        .collect()
}

/// One step of the walk over the containers (upstream `manage`'s loop).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WalkStep {
    /// A container failed and the failure policy is `Fail`: complete the request.
    Complete,
    /// Stop this container (index into the states) and its runtime instance.
    Stop {
        /// Index of the container in the request (and the states).
        index: usize,
        /// The runtime id of the instance to stop.
        id: String,
    },
    /// Nothing more this round.
    End,
}

/// Walks the containers from `from`, counting finished ones into `finished` and marking the
/// ones already recreating as killed, until a container has to be stopped, the request has to
/// complete, or (with `orderedRecreate`) a container is still recreating.
pub fn walk(
    crr: &ContainerRecreateRequest,
    states: &mut [RecreateState],
    runtime: &PodRuntimeStatus,
    from: usize,
    finished: &mut usize,
) -> WalkStep {
    for (index, state) in states.iter_mut().enumerate().skip(from) {
        match state.phase {
            Phase::Succeeded => {
                *finished += 1;
                continue;
            }
            Phase::Failed => {
                *finished += 1;
                if ignores_failures(crr) {
                    continue;
                }
                return WalkStep::Complete;
            }
            Phase::Recreating => {
                state.is_killed = true;
                if ordered(crr) {
                    return WalkStep::End;
                }
                continue;
            }
            _ => {}
        }
        return match runtime.find(&state.name) {
            Some(current) => WalkStep::Stop { index, id: current.id.clone() },
            None => WalkStep::End,
        };
    }
    WalkStep::End
}

/// What the walk does after stopping a container failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AfterFailedStop {
    /// `Ignore`: go on with the next container (from this index).
    Continue(usize),
    /// `Fail`: write the states now (the failed container ends the request next round).
    WriteStates,
}

/// Marks the container at `index` failed with `error` and says how the walk goes on.
pub fn after_failed_stop(
    crr: &ContainerRecreateRequest,
    states: &mut [RecreateState],
    index: usize,
    error: &str,
) -> AfterFailedStop {
    if let Some(state) = states.get_mut(index) {
        state.phase = Phase::Failed;
        state.message = format!("kill container error: {error}");
    }
    if ignores_failures(crr) { AfterFailedStop::Continue(index + 1) } else { AfterFailedStop::WriteStates }
}

/// Marks the container at `index` stopped (recreating, killed by the daemon).
pub fn after_stop(states: &mut [RecreateState], index: usize) {
    if let Some(state) = states.get_mut(index) {
        state.is_killed = true;
        state.phase = Phase::Recreating;
    }
}

/// The grace period of a stop: the request's, else 30 s.
pub fn grace_seconds(crr: &ContainerRecreateRequest) -> i64 {
    crr.spec
        .strategy
        .as_ref()
        .and_then(|s| s.termination_grace_period_seconds)
        .unwrap_or(DEFAULT_GRACE_SECONDS)
}

/// What is left of the grace period after a preStop hook that took `hook` (whole seconds
/// elapsed are subtracted, as the kubelet does), never less than the minimum.
pub fn grace_after_hook(grace: i64, hook: Duration) -> i64 {
    let spent = i64::try_from(hook.as_secs()).unwrap_or(i64::MAX);
    grace.saturating_sub(spent).max(MINIMUM_GRACE_SECONDS)
}

/// When to look at a request that is not finished again: after `minStartedSeconds`, when set
/// (a recreated container counts only once it ran that long).
pub fn recheck_after(crr: &ContainerRecreateRequest) -> Option<Duration> {
    let min = min_started(crr);
    (!min.is_zero()).then_some(min)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
    use kruise_crds::apps::v1beta1::{
        ContainerRecreateRequestContainer, ContainerRecreateRequestContainerContext,
        ContainerRecreateRequestSpec, ContainerRecreateRequestStatus, ContainerRecreateRequestStrategy,
    };

    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + second).unwrap()
    }

    fn nanos(second: i64) -> i64 {
        i64::try_from(at(second).as_nanosecond()).unwrap()
    }

    fn crr(strategy: ContainerRecreateRequestStrategy) -> ContainerRecreateRequest {
        let container = |name: &str, id: &str| ContainerRecreateRequestContainer {
            name: name.into(),
            status_context: Some(ContainerRecreateRequestContainerContext {
                container_id: format!("containerd://{id}"),
                restart_count: 0,
            }),
            ..Default::default()
        };
        ContainerRecreateRequest {
            metadata: ObjectMeta {
                name: Some("restart".into()),
                namespace: Some("default".into()),
                creation_timestamp: Some(Time(at(0))),
                ..Default::default()
            },
            spec: ContainerRecreateRequestSpec {
                pod_name: "web-0".into(),
                containers: vec![container("app", "a1"), container("sidecar", "s1")],
                strategy: Some(strategy),
                ..Default::default()
            },
            status: Some(ContainerRecreateRequestStatus { phase: Phase::Recreating, ..Default::default() }),
        }
    }

    fn instance(name: &str, id: &str, created: i64, exited: bool, restarts: i32) -> RuntimeContainer {
        RuntimeContainer {
            id: id.into(),
            name: name.into(),
            exited,
            restart_count: restarts,
            created_at: nanos(created),
            started_at: nanos(created),
        }
    }

    fn synced(name: &str, id: &str, ready: bool) -> ContainerRecreateRequestSyncContainerStatus {
        ContainerRecreateRequestSyncContainerStatus {
            name: name.into(),
            ready,
            restart_count: 1,
            container_id: format!("containerd://{id}"),
        }
    }

    fn phases(states: &[RecreateState]) -> Vec<(String, Phase, bool)> {
        states.iter().map(|s| (s.name.clone(), s.phase.clone(), s.is_killed)).collect()
    }

    #[test]
    fn the_runtime_type_comes_from_the_status_contexts() {
        let good = crr(Default::default());
        assert_eq!(runtime_type(&good), Ok("containerd".into()));
        let mut missing = good.clone();
        missing.spec.containers[1].status_context = None;
        assert_eq!(
            runtime_type(&missing),
            Err("no statusContext or empty containerID in sidecar container".into())
        );
        let mut mixed = good.clone();
        mixed.spec.containers[1].status_context.as_mut().unwrap().container_id = "cri-o://x".into();
        assert_eq!(runtime_type(&mixed), Err("has different runtime types containerd, cri-o in Pod".into()));
        let mut bare = good;
        bare.spec.containers[0].status_context.as_mut().unwrap().container_id = "abc".into();
        assert!(runtime_type(&bare).unwrap_err().starts_with("failed to parse containerID abc"));
    }

    #[test]
    fn one_request_per_pod_running_ones_first() {
        let make = |name: &str, created: i64, phase: Phase, done: bool| {
            let mut crr = crr(Default::default());
            crr.metadata.name = Some(name.into());
            crr.metadata.creation_timestamp = Some(Time(at(created)));
            let status = crr.status.as_mut().unwrap();
            status.phase = phase;
            if done {
                status.completion_time = Some(Time(at(created + 1)));
            }
            crr
        };
        let requests = vec![
            make("new-late", 9, Phase::default(), false),
            make("pending", 5, Phase::Pending, false),
            make("done", 1, Phase::Completed, true),
            make("new-early", 3, Phase::default(), false),
            make("running", 7, Phase::Recreating, false),
        ];
        let (picked, pending) = pick_request(&requests);
        assert_eq!(picked.and_then(|c| c.metadata.name.as_deref()), Some("running"));
        assert_eq!(pending, ["new-early", "new-late"]);
        let (picked, pending) = pick_request(&requests[..1]);
        assert_eq!(picked.and_then(|c| c.metadata.name.as_deref()), Some("new-late"));
        assert!(pending.is_empty());
        assert!(pick_request(&requests[2..3]).0.is_none(), "finished requests are not picked");
    }

    #[test]
    fn container_states_table() {
        use Phase::*;
        let ordered = ContainerRecreateRequestStrategy { ordered_recreate: true, ..Default::default() };
        let forced = ContainerRecreateRequestStrategy { force_recreate: true, ..Default::default() };
        let min_started = ContainerRecreateRequestStrategy { min_started_seconds: 10, ..Default::default() };
        let untouched = vec![instance("app", "a1", -60, false, 0), instance("sidecar", "s1", -60, false, 0)];
        let app_exited = vec![instance("app", "a1", -60, true, 0), instance("sidecar", "s1", -60, false, 0)];
        let app_replaced = vec![
            instance("app", "a1", -60, true, 0),
            instance("app", "a2", 2, false, 1),
            instance("sidecar", "s1", -60, false, 0),
        ];
        let app_gone = vec![instance("sidecar", "s1", -60, false, 0)];
        /// (case, strategy, runtime instances, manager's snapshot, now, expected states)
        type Case<'a> = (
            &'a str,
            ContainerRecreateRequestStrategy,
            Vec<RuntimeContainer>,
            Vec<ContainerRecreateRequestSyncContainerStatus>,
            i64,
            Vec<(&'a str, Phase, bool)>,
        );
        let cases: Vec<Case> = vec![
            (
                "nothing stopped yet",
                Default::default(),
                untouched.clone(),
                vec![],
                5,
                vec![("app", Pending, false), ("sidecar", Pending, false)],
            ),
            (
                "the old instance exited",
                Default::default(),
                app_exited,
                vec![],
                5,
                vec![("app", Recreating, false), ("sidecar", Pending, false)],
            ),
            (
                "replaced, not yet ready in the pod status",
                Default::default(),
                app_replaced.clone(),
                vec![synced("app", "a2", false)],
                5,
                vec![("app", Recreating, false), ("sidecar", Pending, false)],
            ),
            (
                "replaced and ready",
                Default::default(),
                app_replaced.clone(),
                vec![synced("app", "a2", true)],
                5,
                vec![("app", Succeeded, false), ("sidecar", Pending, false)],
            ),
            (
                "ready but the snapshot shows another instance",
                Default::default(),
                app_replaced.clone(),
                vec![synced("app", "a1", true)],
                5,
                vec![("app", Recreating, false), ("sidecar", Pending, false)],
            ),
            (
                "ready but not for minStartedSeconds",
                min_started.clone(),
                app_replaced.clone(),
                vec![synced("app", "a2", true)],
                5,
                vec![("app", Recreating, false), ("sidecar", Pending, false)],
            ),
            (
                "ready for minStartedSeconds",
                min_started,
                app_replaced.clone(),
                vec![synced("app", "a2", true)],
                13,
                vec![("app", Succeeded, false), ("sidecar", Pending, false)],
            ),
            (
                "forced: a restarted container not killed by us is stopped again",
                forced,
                app_replaced,
                vec![],
                5,
                vec![("app", Pending, false), ("sidecar", Pending, false)],
            ),
            (
                "not on the node",
                ordered,
                app_gone,
                vec![],
                5,
                vec![("app", Pending, false), ("sidecar", Pending, false)],
            ),
        ];
        for (case, strategy, runtime, snapshot, now, expected) in cases {
            let mut request = crr(strategy);
            request.status.as_mut().unwrap().container_status_snapshot = snapshot;
            let states = container_states(&request, &PodRuntimeStatus::new(runtime), "containerd", at(now));
            let expected: Vec<(String, Phase, bool)> =
                expected.into_iter().map(|(n, p, k)| (n.to_string(), p, k)).collect();
            assert_eq!(phases(&states), expected, "{case}");
        }
        let mut request = crr(Default::default());
        request.status.as_mut().unwrap().container_recreate_states = vec![RecreateState {
            name: "app".into(),
            phase: Failed,
            message: "kill container error: boom".into(),
            is_killed: false,
        }];
        let states = container_states(&request, &PodRuntimeStatus::new(untouched), "containerd", at(5));
        assert_eq!(states[0].message, "kill container error: boom", "finished states are kept");
        assert_eq!(
            container_states(&request, &PodRuntimeStatus::default(), "containerd", at(5))[1].message,
            "not found container on Node"
        );
    }

    #[test]
    fn the_walk_stops_one_container_per_round() {
        use Phase::*;
        let runtime = PodRuntimeStatus::new(vec![
            instance("app", "a1", -60, false, 0),
            instance("sidecar", "s1", -60, false, 0),
        ]);
        let state = |name: &str, phase: Phase| RecreateState {
            name: name.into(),
            phase,
            message: String::new(),
            is_killed: false,
        };
        let ordered = ContainerRecreateRequestStrategy { ordered_recreate: true, ..Default::default() };
        let ignore = ContainerRecreateRequestStrategy {
            failure_policy: ContainerRecreateRequestFailurePolicyType::Ignore,
            ..Default::default()
        };
        let cases: Vec<(&str, ContainerRecreateRequestStrategy, Vec<RecreateState>, WalkStep, usize)> = vec![
            (
                "first pending container",
                Default::default(),
                vec![state("app", Pending), state("sidecar", Pending)],
                WalkStep::Stop { index: 0, id: "a1".into() },
                0,
            ),
            (
                "unordered: the next one while the first recreates",
                Default::default(),
                vec![state("app", Recreating), state("sidecar", Pending)],
                WalkStep::Stop { index: 1, id: "s1".into() },
                0,
            ),
            (
                "ordered: wait for the first",
                ordered.clone(),
                vec![state("app", Recreating), state("sidecar", Pending)],
                WalkStep::End,
                0,
            ),
            (
                "ordered: the next once the first succeeded",
                ordered,
                vec![state("app", Succeeded), state("sidecar", Pending)],
                WalkStep::Stop { index: 1, id: "s1".into() },
                1,
            ),
            (
                "Fail: a failed container completes the request",
                Default::default(),
                vec![state("app", Failed), state("sidecar", Pending)],
                WalkStep::Complete,
                1,
            ),
            (
                "Ignore: a failed container is skipped",
                ignore,
                vec![state("app", Failed), state("sidecar", Pending)],
                WalkStep::Stop { index: 1, id: "s1".into() },
                1,
            ),
            (
                "all finished",
                Default::default(),
                vec![state("app", Succeeded), state("sidecar", Succeeded)],
                WalkStep::End,
                2,
            ),
        ];
        for (case, strategy, mut states, expected, finished) in cases {
            let request = crr(strategy);
            let mut counted = 0;
            assert_eq!(walk(&request, &mut states, &runtime, 0, &mut counted), expected, "{case}");
            assert_eq!(counted, finished, "{case}");
        }
        let mut recreating = vec![state("app", Recreating), state("sidecar", Succeeded)];
        let mut counted = 0;
        assert_eq!(walk(&crr(Default::default()), &mut recreating, &runtime, 0, &mut counted), WalkStep::End);
        assert!(recreating[0].is_killed, "a recreating container counts as killed");
        let gone = PodRuntimeStatus::default();
        let mut pending = vec![state("app", Pending)];
        assert_eq!(walk(&crr(Default::default()), &mut pending, &gone, 0, &mut counted), WalkStep::End);
    }

    #[test]
    fn failed_stops_follow_the_failure_policy() {
        let state = |name: &str| RecreateState {
            name: name.into(),
            phase: Phase::Pending,
            message: String::new(),
            is_killed: false,
        };
        let mut states = vec![state("app"), state("sidecar")];
        assert_eq!(
            after_failed_stop(&crr(Default::default()), &mut states, 0, "boom"),
            AfterFailedStop::WriteStates
        );
        assert_eq!(
            (states[0].phase.clone(), states[0].message.as_str()),
            (Phase::Failed, "kill container error: boom")
        );
        let ignore = crr(ContainerRecreateRequestStrategy {
            failure_policy: ContainerRecreateRequestFailurePolicyType::Ignore,
            ..Default::default()
        });
        assert_eq!(after_failed_stop(&ignore, &mut states, 0, "boom"), AfterFailedStop::Continue(1));
        after_stop(&mut states, 1);
        assert_eq!((states[1].phase.clone(), states[1].is_killed), (Phase::Recreating, true));
    }

    #[test]
    fn grace_periods() {
        let mut request = crr(Default::default());
        assert_eq!(grace_seconds(&request), 30);
        request.spec.strategy.as_mut().unwrap().termination_grace_period_seconds = Some(5);
        assert_eq!(grace_seconds(&request), 5);
        assert_eq!(grace_after_hook(5, Duration::from_millis(1900)), 4);
        assert_eq!(grace_after_hook(5, Duration::from_secs(4)), 2, "never below the minimum");
        assert_eq!(grace_after_hook(0, Duration::ZERO), 2);
        assert_eq!(recheck_after(&request), None);

        assert_eq!(unready_grace(&request, at(0)), Grace::Proceed);
        request.spec.strategy.as_mut().unwrap().unready_grace_period_seconds = Some(3);
        assert_eq!(unready_grace(&request, at(0)), Grace::AwaitHold);
        request.status.as_mut().unwrap().conditions = vec![Condition {
            type_: CONTAINER_RECREATE_REQUEST_PRE_RECREATE_GRACE_TYPE.into(),
            status: "True".into(),
            last_transition_time: Time(at(10)),
            reason: "PreRecreateGrace".into(),
            message: String::new(),
            observed_generation: None,
        }];
        assert_eq!(unready_grace(&request, at(11)), Grace::Wait(Duration::from_secs(2)));
        assert_eq!(unready_grace(&request, at(13)), Grace::Proceed);
    }

    #[test]
    fn runtime_statuses_read_the_kubelet_labels() {
        let status = cri::ContainerStatus {
            id: "abc".into(),
            state: cri::ContainerState::ContainerRunning as i32,
            created_at: 5,
            started_at: 7,
            labels: [(LABEL_CONTAINER_NAME.to_string(), "app".to_string())].into(),
            annotations: [(ANNOTATION_RESTART_COUNT.to_string(), "3".to_string())].into(),
            ..Default::default()
        };
        let container = RuntimeContainer::from_status(&status);
        assert_eq!(
            container,
            RuntimeContainer {
                id: "abc".into(),
                name: "app".into(),
                exited: false,
                restart_count: 3,
                created_at: 5,
                started_at: 7
            }
        );
        let pod = PodRuntimeStatus::new(vec![
            RuntimeContainer { created_at: 1, id: "old".into(), ..container.clone() },
            RuntimeContainer { created_at: 9, id: "new".into(), ..container },
        ]);
        assert_eq!(pod.find("app").map(|c| c.id.as_str()), Some("new"));
    }
}
