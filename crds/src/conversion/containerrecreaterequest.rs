//! ContainerRecreateRequest v1alpha1 <-> v1beta1.
//!
//! Upstream rules: spec fields and the common status fields are copied as is. Two pieces of
//! state that the v1alpha1 controller kept in annotations are status fields at v1beta1:
//!
//! - `crr.apps.kruise.io/sync-container-statuses` (a JSON list) is
//!   `status.containerStatusSnapshot`;
//! - `crr.apps.kruise.io/unready-acquired` (an RFC 3339 time) is a `PreRecreateGrace` condition
//!   with status True whose `lastTransitionTime` is that time.
//!
//! On the way up an annotation that parses is moved into the field (removed from the
//! annotations). A value that parses but is spelled differently from how the way down writes it
//! (extra spaces, a time with an offset) also stays in the annotations, so the way down
//! reproduces it exactly; a value that does not parse stays where it is and sets nothing. On
//! the way down a non-empty snapshot is written back as JSON and the first True
//! `PreRecreateGrace` condition as its time in UTC at second precision; other conditions have no
//! v1alpha1 form. (Upstream leaves the annotations in place on the way up.)

use k8s_openapi::{
    apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time},
    jiff::Timestamp,
};

use super::{convert_lossless, impl_spec_status_parts, put_annotation, take_annotation};
use crate::apps::{
    v1alpha1::{self, CONTAINER_RECREATE_REQUEST_SYNC_CONTAINER_STATUSES_KEY as SYNC_KEY},
    v1beta1::{
        self, CONTAINER_RECREATE_REQUEST_PRE_RECREATE_GRACE_TYPE as PRE_RECREATE_GRACE,
        CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY as UNREADY_KEY,
        ContainerRecreateRequestSyncContainerStatus as SyncStatus,
    },
};

/// Message of the PreRecreateGrace condition made from the v1alpha1 annotation.
const PRE_RECREATE_GRACE_MESSAGE: &str = "pod held not ready for the unready grace period before recreation";

impl_spec_status_parts!(v1alpha1::ContainerRecreateRequest, v1beta1::ContainerRecreateRequest);

/// Converts a v1alpha1 ContainerRecreateRequest to v1beta1.
pub fn containerrecreaterequest_to_v1beta1(
    alpha: &v1alpha1::ContainerRecreateRequest,
) -> v1beta1::ContainerRecreateRequest {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 ContainerRecreateRequest to v1alpha1.
pub fn containerrecreaterequest_to_v1alpha1(
    beta: &v1beta1::ContainerRecreateRequest,
) -> v1alpha1::ContainerRecreateRequest {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::ContainerRecreateRequest) -> v1beta1::ContainerRecreateRequest {
    let mut metadata = alpha.metadata.clone();
    let snapshot =
        promote(&mut metadata, SYNC_KEY, parse_snapshot, |s| render_snapshot(s)).unwrap_or_default();
    let conditions: Vec<Condition> = promote(&mut metadata, UNREADY_KEY, parse_time, render_time)
        .map(|time| {
            vec![Condition {
                type_: PRE_RECREATE_GRACE.to_string(),
                status: "True".to_string(),
                last_transition_time: Time(time),
                reason: PRE_RECREATE_GRACE.to_string(),
                message: PRE_RECREATE_GRACE_MESSAGE.to_string(),
                observed_generation: None,
            }]
        })
        .unwrap_or_default();

    let status = if alpha.status.is_none() && snapshot.is_empty() && conditions.is_empty() {
        None
    } else {
        let status = alpha.status.clone().unwrap_or_default();
        Some(v1beta1::ContainerRecreateRequestStatus {
            phase: status.phase.as_str().into(),
            completion_time: status.completion_time,
            message: status.message,
            container_recreate_states: status
                .container_recreate_states
                .into_iter()
                .map(|state| v1beta1::ContainerRecreateRequestContainerRecreateState {
                    name: state.name,
                    phase: state.phase.as_str().into(),
                    message: state.message,
                    is_killed: state.is_killed,
                })
                .collect(),
            container_status_snapshot: snapshot,
            conditions,
        })
    };

    let spec = &alpha.spec;
    v1beta1::ContainerRecreateRequest {
        metadata,
        spec: v1beta1::ContainerRecreateRequestSpec {
            pod_name: spec.pod_name.clone(),
            containers: spec.containers.clone(),
            strategy: spec.strategy.as_ref().map(|strategy| v1beta1::ContainerRecreateRequestStrategy {
                failure_policy: strategy.failure_policy.as_str().into(),
                ordered_recreate: strategy.ordered_recreate,
                force_recreate: strategy.force_recreate,
                termination_grace_period_seconds: strategy.termination_grace_period_seconds,
                unready_grace_period_seconds: strategy.unready_grace_period_seconds,
                min_started_seconds: strategy.min_started_seconds,
            }),
            active_deadline_seconds: spec.active_deadline_seconds,
            ttl_seconds_after_finished: spec.ttl_seconds_after_finished,
        },
        status,
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::ContainerRecreateRequest) -> v1alpha1::ContainerRecreateRequest {
    let mut metadata = beta.metadata.clone();
    let status = beta.status.as_ref().map(|status| {
        if !status.container_status_snapshot.is_empty() {
            let snapshot = &status.container_status_snapshot;
            demote(&mut metadata, SYNC_KEY, snapshot, parse_snapshot, |s| render_snapshot(s));
        }
        let grace = status
            .conditions
            .iter()
            .find(|condition| condition.type_ == PRE_RECREATE_GRACE && condition.status == "True");
        if let Some(condition) = grace {
            demote(&mut metadata, UNREADY_KEY, &condition.last_transition_time.0, parse_time, render_time);
        }
        v1alpha1::ContainerRecreateRequestStatus {
            phase: status.phase.as_str().into(),
            completion_time: status.completion_time.clone(),
            message: status.message.clone(),
            container_recreate_states: status
                .container_recreate_states
                .iter()
                .map(|state| v1alpha1::ContainerRecreateRequestContainerRecreateState {
                    name: state.name.clone(),
                    phase: state.phase.as_str().into(),
                    message: state.message.clone(),
                    is_killed: state.is_killed,
                })
                .collect(),
        }
    });

    let spec = &beta.spec;
    v1alpha1::ContainerRecreateRequest {
        metadata,
        spec: v1alpha1::ContainerRecreateRequestSpec {
            pod_name: spec.pod_name.clone(),
            containers: spec.containers.clone(),
            strategy: spec.strategy.as_ref().map(|strategy| v1alpha1::ContainerRecreateRequestStrategy {
                failure_policy: strategy.failure_policy.as_str().into(),
                ordered_recreate: strategy.ordered_recreate,
                force_recreate: strategy.force_recreate,
                termination_grace_period_seconds: strategy.termination_grace_period_seconds,
                unready_grace_period_seconds: strategy.unready_grace_period_seconds,
                min_started_seconds: strategy.min_started_seconds,
            }),
            active_deadline_seconds: spec.active_deadline_seconds,
            ttl_seconds_after_finished: spec.ttl_seconds_after_finished,
        },
        status,
    }
}

/// Parses the annotation `key`. When it parses it is removed, unless `render` would not write
/// it back the same way (then it stays, so that the way back keeps the user's text).
fn promote<T>(
    metadata: &mut ObjectMeta,
    key: &str,
    parse: impl Fn(&str) -> Option<T>,
    render: impl Fn(&T) -> String,
) -> Option<T> {
    let text = metadata.annotations.as_ref()?.get(key)?;
    let value = parse(text)?;
    if render(&value) == *text {
        take_annotation(metadata, key);
    }
    Some(value)
}

/// Writes `value` to the annotation `key`, keeping the text already there when it says the
/// same thing.
fn demote<T: PartialEq>(
    metadata: &mut ObjectMeta,
    key: &str,
    value: &T,
    parse: impl Fn(&str) -> Option<T>,
    render: impl Fn(&T) -> String,
) {
    let current = metadata.annotations.as_ref().and_then(|annotations| annotations.get(key));
    if current.and_then(|text| parse(text)).is_some_and(|parsed| parsed == *value) {
        return;
    }
    put_annotation(metadata, key, render(value));
}

/// A non-empty JSON list of container statuses.
fn parse_snapshot(text: &str) -> Option<Vec<SyncStatus>> {
    serde_json::from_str::<Vec<SyncStatus>>(text).ok().filter(|statuses| !statuses.is_empty())
}

fn render_snapshot(statuses: &[SyncStatus]) -> String {
    serde_json::to_string(statuses).unwrap_or_default()
}

/// An RFC 3339 time.
fn parse_time(text: &str) -> Option<Timestamp> {
    if text.is_empty() {
        return None;
    }
    text.parse().ok()
}

/// UTC, second precision, `Z` suffix (the form Kubernetes writes times in).
fn render_time(time: &Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}
