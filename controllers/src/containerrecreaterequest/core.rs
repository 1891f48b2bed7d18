//! The decisions of the ContainerRecreateRequest controller, as pure functions of the request,
//! its pod and the time (upstream `crr_controller.go#Reconcile`):
//!
//! - a finished (or deleted) request releases the pod's not-ready hold, drops its
//!   `crr.apps.kruise.io/active` label (so the node daemon stops watching it) and is deleted
//!   `ttlSecondsAfterFinished` after its completion;
//! - a request whose pod is gone (deleted, or replaced by one with another UID), whose daemon
//!   never answered within a minute, or that ran past `activeDeadlineSeconds` is completed
//!   with a message saying which;
//! - while `Recreating`, the pod's fresh container statuses are copied into
//!   `status.containerStatusSnapshot` (the daemon counts a container recreated only once the
//!   snapshot shows its new instance ready), and with `unreadyGracePeriodSeconds` the pod is
//!   held not ready through its `KruisePodReady` gate before the daemon may stop anything.

use std::time::Duration;

use k8s_openapi::{
    api::core::v1::Pod,
    apimachinery::pkg::apis::meta::v1::{Condition, Time},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{
    CONTAINER_RECREATE_REQUEST_ACTIVE_KEY, CONTAINER_RECREATE_REQUEST_POD_UID_KEY,
    CONTAINER_RECREATE_REQUEST_PRE_RECREATE_GRACE_TYPE, CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY,
    ContainerRecreateRequest, ContainerRecreateRequestPhase, ContainerRecreateRequestSyncContainerStatus,
};
use serde_json::Value;

use crate::{imagejob::elapsed, workload::pod_ops};

/// How long the daemon may leave a new request without a phase (upstream `responseTimeout`).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a `Recreating` request is looked at even without pod events (upstream polls at
/// 3 s in case pod events are delayed).
pub const RECREATING_POLL: Duration = Duration::from_secs(3);
/// The `userAgent` of the request's entry in the pod's `KruisePodReady` message.
pub const READINESS_USER_AGENT: &str = "ContainerRecreateRequest";

/// Message of a request completed because its pod went away.
pub const POD_GONE: &str = "pod has gone";
/// Message of a request completed because no daemon picked it up.
pub const DAEMON_SILENT: &str = "daemon has not responded for a long time";
/// Message of a request completed at its deadline.
pub const DEADLINE_EXCEEDED: &str = "recreating has exceeded the activeDeadlineSeconds";

/// What one reconcile of a request does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Finished or deleting and still holding the pod not ready: release the pod and drop the
    /// `unready-acquired` finalizer.
    Release,
    /// Deleting: nothing more.
    Nothing,
    /// Finished: remove the `active` label.
    Deactivate,
    /// Finished and its TTL ran out: delete it.
    Delete,
    /// Complete it now, unsuccessfully, with this message.
    Complete(String),
    /// Nothing to write; look again after the duration (None: on the next event).
    Wait(Option<Duration>),
    /// Recreating: refresh the snapshot (and acquire the not-ready hold when asked), then look
    /// again after `requeue`.
    Recreating {
        /// When to look again.
        requeue: Duration,
        /// Hold the pod not ready and set the `PreRecreateGrace` condition.
        acquire_unready: bool,
    },
}

/// Whether the request is done (completed or being deleted).
pub fn is_finished(crr: &ContainerRecreateRequest) -> bool {
    crr.metadata.deletion_timestamp.is_some()
        || crr.status.as_ref().is_some_and(|status| status.completion_time.is_some())
}

/// Whether the request holds its pod not ready (the `unready-acquired` finalizer).
pub fn holds_unready(crr: &ContainerRecreateRequest) -> bool {
    crr.metadata.finalizers.iter().flatten().any(|f| f == CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY)
}

fn label<'a>(crr: &'a ContainerRecreateRequest, key: &str) -> Option<&'a str> {
    crr.metadata.labels.as_ref().and_then(|labels| labels.get(key)).map(String::as_str)
}

/// Whether the pod the request was made for is gone: absent, terminating, or another pod with
/// the same name (its UID differs from the `pod-uid` label).
pub fn pod_gone(crr: &ContainerRecreateRequest, pod: Option<&Pod>) -> bool {
    let Some(pod) = pod else { return true };
    pod.metadata.deletion_timestamp.is_some()
        || pod.metadata.uid.as_deref().unwrap_or_default()
            != label(crr, CONTAINER_RECREATE_REQUEST_POD_UID_KEY).unwrap_or_default()
}

fn has_pre_recreate_grace(crr: &ContainerRecreateRequest) -> bool {
    crr.status.iter().flat_map(|s| &s.conditions).any(|condition| {
        condition.type_ == CONTAINER_RECREATE_REQUEST_PRE_RECREATE_GRACE_TYPE && condition.status == "True"
    })
}

fn seconds(value: i64) -> Duration {
    Duration::from_secs(u64::try_from(value).unwrap_or(0))
}

fn earliest(current: Option<Duration>, candidate: Duration) -> Option<Duration> {
    Some(current.map_or(candidate, |current| current.min(candidate)))
}

/// The next step for `crr`, whose pod was read as `pod` (None: not found), at `now`.
pub fn decide(crr: &ContainerRecreateRequest, pod: Option<&Pod>, now: Timestamp) -> Step {
    let status = crr.status.clone().unwrap_or_default();
    if is_finished(crr) {
        if holds_unready(crr) {
            return Step::Release;
        }
        if crr.metadata.deletion_timestamp.is_some() {
            return Step::Nothing;
        }
        if label(crr, CONTAINER_RECREATE_REQUEST_ACTIVE_KEY).is_some() {
            return Step::Deactivate;
        }
        let (Some(ttl), Some(completed)) =
            (crr.spec.ttl_seconds_after_finished, status.completion_time.as_ref())
        else {
            return Step::Wait(None);
        };
        let left = seconds(ttl.into()).saturating_sub(elapsed(completed, now));
        return if left.is_zero() { Step::Delete } else { Step::Wait(Some(left)) };
    }
    if pod_gone(crr, pod) {
        return Step::Complete(POD_GONE.into());
    }
    let created = crr.metadata.creation_timestamp.as_ref().map(|t| elapsed(t, now)).unwrap_or_default();
    let mut requeue = None;
    if status.phase.is_unset() {
        let left = RESPONSE_TIMEOUT.saturating_sub(created);
        if left.is_zero() {
            return Step::Complete(DAEMON_SILENT.into());
        }
        requeue = earliest(requeue, left);
    }
    if let Some(deadline) = crr.spec.active_deadline_seconds {
        let left = seconds(deadline).saturating_sub(created);
        if left.is_zero() {
            return Step::Complete(DEADLINE_EXCEEDED.into());
        }
        requeue = earliest(requeue, left);
    }
    if status.phase != ContainerRecreateRequestPhase::Recreating {
        return Step::Wait(requeue);
    }
    let unready = crr.spec.strategy.as_ref().is_some_and(|s| s.unready_grace_period_seconds.is_some());
    Step::Recreating {
        requeue: requeue.map_or(RECREATING_POLL, |left| left.min(RECREATING_POLL)),
        acquire_unready: unready && !has_pre_recreate_grace(crr),
    }
}

/// The snapshot of the requested containers' statuses to write, or None when the stored one
/// is to be kept: only running instances started at or after the request was created count
/// (older ones are what is being replaced), and an empty result keeps the last snapshot while
/// a container is between its old instance's exit and its new one's start.
pub fn container_status_snapshot(
    crr: &ContainerRecreateRequest,
    pod: &Pod,
) -> Option<Vec<ContainerRecreateRequestSyncContainerStatus>> {
    let created = crr.metadata.creation_timestamp.as_ref().map(|t| t.0);
    let statuses = pod.status.as_ref().map(|status| {
        status.container_statuses.iter().flatten().chain(status.init_container_statuses.iter().flatten())
    });
    let snapshot: Vec<ContainerRecreateRequestSyncContainerStatus> = crr
        .spec
        .containers
        .iter()
        .filter_map(|container| {
            let status = statuses.clone()?.find(|status| status.name == container.name)?;
            let started = status.state.as_ref()?.running.as_ref()?.started_at.as_ref().map(|t| t.0);
            if let (Some(started), Some(created)) = (started, created)
                && started < created
            {
                return None;
            }
            Some(ContainerRecreateRequestSyncContainerStatus {
                name: status.name.clone(),
                ready: status.ready,
                restart_count: status.restart_count,
                container_id: status.container_id.clone().unwrap_or_default(),
            })
        })
        .collect();
    let stored = crr.status.as_ref().map(|s| s.container_status_snapshot.as_slice()).unwrap_or_default();
    if (snapshot.is_empty() && !stored.is_empty()) || snapshot.as_slice() == stored {
        return None;
    }
    Some(snapshot)
}

/// The conditions with `PreRecreateGrace=True` set (its transition time kept when it already
/// was True, as `meta.SetStatusCondition`: the daemon counts the grace period from it), or None
/// when nothing changes.
pub fn with_pre_recreate_grace(conditions: &[Condition], now: Timestamp) -> Option<Vec<Condition>> {
    const REASON: &str = "PreRecreateGrace";
    const MESSAGE: &str = "Pod has been forced to not-ready for unreadyGracePeriodSeconds drain";
    let mut conditions = conditions.to_vec();
    match conditions.iter_mut().find(|c| c.type_ == CONTAINER_RECREATE_REQUEST_PRE_RECREATE_GRACE_TYPE) {
        Some(existing)
            if existing.status == "True" && existing.reason == REASON && existing.message == MESSAGE =>
        {
            return None;
        }
        Some(existing) => {
            if existing.status != "True" {
                existing.status = "True".into();
                existing.last_transition_time = Time(now);
            }
            existing.reason = REASON.into();
            existing.message = MESSAGE.into();
        }
        None => conditions.push(Condition {
            type_: CONTAINER_RECREATE_REQUEST_PRE_RECREATE_GRACE_TYPE.into(),
            status: "True".into(),
            last_transition_time: Time(now),
            reason: REASON.into(),
            message: MESSAGE.into(),
            observed_generation: None,
        }),
    }
    Some(conditions)
}

/// The key of the request in its pod's `KruisePodReady` message (`namespace/name`).
pub fn readiness_key(crr: &ContainerRecreateRequest) -> String {
    format!(
        "{}/{}",
        crr.metadata.namespace.as_deref().unwrap_or_default(),
        crr.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Whether the pod has the `KruisePodReady` readiness gate (without it nobody can hold it not
/// ready, and upstream goes on without the hold).
pub fn has_kruise_readiness_gate(pod: &Pod) -> bool {
    pod.spec.as_ref().and_then(|s| s.readiness_gates.as_ref()).is_some_and(|gates| {
        gates.iter().any(|g| g.condition_type == kruise_crds::common::well_known::KRUISE_POD_READY)
    })
}

/// The `KruisePodReady` condition to write so that the request holds (`hold`) or releases the
/// pod, or None when the pod already says so (or has no gate). Other holders (lifecycle hooks,
/// other requests) are kept.
pub fn kruise_pod_ready_condition(pod: &Pod, key: &str, hold: bool) -> Option<Value> {
    let mut holders = pod_ops::not_ready_holders(pod);
    let entry = (READINESS_USER_AGENT.to_string(), key.to_string());
    let present = holders.contains(&entry);
    if present == hold {
        return None;
    }
    holders.retain(|holder| *holder != entry);
    if hold {
        holders.push(entry);
    }
    pod_ops::desired_kruise_pod_ready(pod, &holders)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::{
        api::core::v1::{
            ContainerState, ContainerStateRunning, ContainerStatus, PodCondition, PodReadinessGate, PodSpec,
            PodStatus,
        },
        apimachinery::pkg::apis::meta::v1::ObjectMeta,
    };
    use kruise_crds::apps::v1beta1::{
        ContainerRecreateRequestContainer, ContainerRecreateRequestSpec, ContainerRecreateRequestStatus,
        ContainerRecreateRequestStrategy,
    };

    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + second).unwrap()
    }

    fn crr() -> ContainerRecreateRequest {
        ContainerRecreateRequest {
            metadata: ObjectMeta {
                name: Some("restart".into()),
                namespace: Some("default".into()),
                creation_timestamp: Some(Time(at(0))),
                labels: Some(
                    [
                        (CONTAINER_RECREATE_REQUEST_POD_UID_KEY.to_string(), "uid-1".to_string()),
                        (CONTAINER_RECREATE_REQUEST_ACTIVE_KEY.to_string(), "true".to_string()),
                    ]
                    .into(),
                ),
                ..Default::default()
            },
            spec: ContainerRecreateRequestSpec {
                pod_name: "web-0".into(),
                containers: vec![
                    ContainerRecreateRequestContainer { name: "app".into(), ..Default::default() },
                    ContainerRecreateRequestContainer { name: "sidecar".into(), ..Default::default() },
                ],
                strategy: Some(ContainerRecreateRequestStrategy::default()),
                ..Default::default()
            },
            status: None,
        }
    }

    fn with_phase(
        mut crr: ContainerRecreateRequest,
        phase: ContainerRecreateRequestPhase,
    ) -> ContainerRecreateRequest {
        crr.status.get_or_insert_with(Default::default).phase = phase;
        crr
    }

    fn completed(mut crr: ContainerRecreateRequest, second: i64) -> ContainerRecreateRequest {
        let status = crr.status.get_or_insert_with(Default::default);
        status.phase = ContainerRecreateRequestPhase::Completed;
        status.completion_time = Some(Time(at(second)));
        crr
    }

    fn running(name: &str, id: &str, started: i64, ready: bool) -> ContainerStatus {
        ContainerStatus {
            name: name.into(),
            container_id: Some(id.into()),
            ready,
            restart_count: 1,
            state: Some(ContainerState {
                running: Some(ContainerStateRunning { started_at: Some(Time(at(started))) }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn pod(statuses: Vec<ContainerStatus>) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("web-0".into()),
                uid: Some("uid-1".into()),
                ..Default::default()
            },
            spec: Some(PodSpec::default()),
            status: Some(PodStatus { container_statuses: Some(statuses), ..Default::default() }),
        }
    }

    #[test]
    fn decisions_follow_upstream_order() {
        use ContainerRecreateRequestPhase::*;
        let live = pod(vec![]);
        let mut other_pod = live.clone();
        other_pod.metadata.uid = Some("uid-2".into());
        let mut terminating_pod = live.clone();
        terminating_pod.metadata.deletion_timestamp = Some(Time(at(1)));
        let mut holding = completed(crr(), 10);
        holding.metadata.finalizers = Some(vec![CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY.into()]);
        let mut deleting = crr();
        deleting.metadata.deletion_timestamp = Some(Time(at(5)));
        let mut inactive = completed(crr(), 10);
        inactive.metadata.labels.as_mut().unwrap().remove(CONTAINER_RECREATE_REQUEST_ACTIVE_KEY);
        let mut with_ttl = inactive.clone();
        with_ttl.spec.ttl_seconds_after_finished = Some(5);
        let mut with_deadline = with_phase(crr(), Pending);
        with_deadline.spec.active_deadline_seconds = Some(30);
        let mut graced = with_phase(crr(), Recreating);
        graced.spec.strategy.as_mut().unwrap().unready_grace_period_seconds = Some(3);
        let mut graced_acquired = graced.clone();
        graced_acquired.status.as_mut().unwrap().conditions = with_pre_recreate_grace(&[], at(1)).unwrap();

        let cases: Vec<(&str, ContainerRecreateRequest, Option<&Pod>, i64, Step)> = vec![
            ("finished and holding the pod", holding, Some(&live), 20, Step::Release),
            ("being deleted", deleting, Some(&live), 20, Step::Nothing),
            ("finished, still labelled active", completed(crr(), 10), Some(&live), 20, Step::Deactivate),
            ("finished without TTL", inactive.clone(), Some(&live), 20, Step::Wait(None)),
            ("TTL running", with_ttl.clone(), Some(&live), 12, Step::Wait(Some(Duration::from_secs(3)))),
            ("TTL over", with_ttl, Some(&live), 15, Step::Delete),
            ("pod missing", crr(), None, 1, Step::Complete(POD_GONE.into())),
            ("pod replaced", crr(), Some(&other_pod), 1, Step::Complete(POD_GONE.into())),
            ("pod terminating", crr(), Some(&terminating_pod), 1, Step::Complete(POD_GONE.into())),
            ("daemon silent", crr(), Some(&live), 60, Step::Complete(DAEMON_SILENT.into())),
            ("waiting for the daemon", crr(), Some(&live), 45, Step::Wait(Some(Duration::from_secs(15)))),
            (
                "pending with a deadline",
                with_deadline.clone(),
                Some(&live),
                10,
                Step::Wait(Some(Duration::from_secs(20))),
            ),
            ("deadline over", with_deadline, Some(&live), 30, Step::Complete(DEADLINE_EXCEEDED.into())),
            ("pending", with_phase(crr(), Pending), Some(&live), 100, Step::Wait(None)),
            (
                "recreating",
                with_phase(crr(), Recreating),
                Some(&live),
                100,
                Step::Recreating { requeue: RECREATING_POLL, acquire_unready: false },
            ),
            (
                "recreating with an unready grace period",
                graced,
                Some(&live),
                100,
                Step::Recreating { requeue: RECREATING_POLL, acquire_unready: true },
            ),
            (
                "grace already acquired",
                graced_acquired,
                Some(&live),
                100,
                Step::Recreating { requeue: RECREATING_POLL, acquire_unready: false },
            ),
        ];
        for (case, crr, pod, now, expected) in cases {
            assert_eq!(decide(&crr, pod, at(now)), expected, "{case}");
        }
    }

    #[test]
    fn the_snapshot_holds_fresh_running_instances_only() {
        let crr = with_phase(crr(), ContainerRecreateRequestPhase::Recreating);
        let old_instances =
            pod(vec![running("app", "c://a1", -50, true), running("sidecar", "c://s1", -50, true)]);
        assert_eq!(container_status_snapshot(&crr, &old_instances), None, "nothing fresh, nothing stored");

        let fresh = pod(vec![running("app", "c://a2", 3, false), running("sidecar", "c://s1", -50, true)]);
        let snapshot = container_status_snapshot(&crr, &fresh).unwrap();
        assert_eq!(
            snapshot,
            [ContainerRecreateRequestSyncContainerStatus {
                name: "app".into(),
                ready: false,
                restart_count: 1,
                container_id: "c://a2".into()
            }]
        );
        let mut stored = crr.clone();
        stored.status.as_mut().unwrap().container_status_snapshot = snapshot;
        assert_eq!(container_status_snapshot(&stored, &fresh), None, "unchanged");
        assert_eq!(container_status_snapshot(&stored, &old_instances), None, "kept between instances");
        let ready = pod(vec![running("app", "c://a2", 3, true)]);
        assert!(container_status_snapshot(&stored, &ready).unwrap()[0].ready);
    }

    #[test]
    fn the_grace_condition_keeps_its_transition_time() {
        let first = with_pre_recreate_grace(&[], at(1)).unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].last_transition_time, Time(at(1)));
        assert_eq!(with_pre_recreate_grace(&first, at(9)), None);
        let mut off = first.clone();
        off[0].status = "False".into();
        let on_again = with_pre_recreate_grace(&off, at(9)).unwrap();
        assert_eq!(
            (on_again[0].status.as_str(), on_again[0].last_transition_time.clone()),
            ("True", Time(at(9)))
        );
    }

    #[test]
    fn readiness_holds_are_added_and_released_next_to_others() {
        let mut gated = pod(vec![]);
        gated.spec.as_mut().unwrap().readiness_gates =
            Some(vec![PodReadinessGate { condition_type: "KruisePodReady".into() }]);
        assert_eq!(kruise_pod_ready_condition(&pod(vec![]), "default/restart", true), None, "no gate");
        let hold = kruise_pod_ready_condition(&gated, "default/restart", true).unwrap();
        assert_eq!(hold["status"], "False");
        let holders = |condition: &Value| -> Value {
            serde_json::from_str(condition["message"].as_str().unwrap_or("[]")).unwrap()
        };
        assert_eq!(
            holders(&hold),
            serde_json::json!([{"key": "default/restart", "userAgent": "ContainerRecreateRequest"}])
        );
        let mut held = gated.clone();
        held.status.as_mut().unwrap().conditions = Some(vec![PodCondition {
            type_: "KruisePodReady".into(),
            status: "False".into(),
            message: Some(
                r#"[{"userAgent":"Lifecycle","key":"preDelete"},{"userAgent":"ContainerRecreateRequest","key":"default/restart"}]"#
                    .into(),
            ),
            ..Default::default()
        }]);
        assert_eq!(kruise_pod_ready_condition(&held, "default/restart", true), None, "already held");
        let release = kruise_pod_ready_condition(&held, "default/restart", false).unwrap();
        assert_eq!(release["status"], "False", "the lifecycle hold stays");
        assert_eq!(holders(&release), serde_json::json!([{"key": "preDelete", "userAgent": "Lifecycle"}]));
        assert_eq!(kruise_pod_ready_condition(&gated, "default/restart", false), None, "nothing to release");
    }

    #[test]
    fn status_defaults_do_not_confuse_the_decisions() {
        let mut crr = crr();
        crr.status = Some(ContainerRecreateRequestStatus::default());
        assert_eq!(decide(&crr, Some(&pod(vec![])), at(1)), Step::Wait(Some(Duration::from_secs(59))));
    }
}
