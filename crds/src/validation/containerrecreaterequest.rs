//! ContainerRecreateRequest validation: the checks upstream's mutating webhook
//! (`pkg/webhook/containerrecreaterequest/mutating`) makes before defaulting, and its update
//! immutability rules, for both served versions.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::meta::{validate_non_negative, validate_object_meta};
use crate::{
    apps::{
        v1alpha1,
        v1beta1::{
            self, CONTAINER_RECREATE_REQUEST_NODE_NAME_KEY, CONTAINER_RECREATE_REQUEST_POD_UID_KEY,
            CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY, ContainerRecreateRequestContainer,
        },
    },
    field::{ErrorList, FieldError, FieldPath, quoted},
};

/// Shortest `activeDeadlineSeconds` a request may have.
pub const CONTAINER_RECREATE_REQUEST_MIN_DEADLINE_SECONDS: i64 = 3;

/// Validates a v1beta1 ContainerRecreateRequest. On create (`old` is None): a pod name, at least
/// one container with unique names, a deadline of at least 3s, non-negative grace periods and a
/// known failure policy. On update: the spec and the pod-uid and node-name labels are immutable.
/// That the pod exists, is active and scheduled needs the cluster (see
/// `defaults::inject_pod_into_containerrecreaterequest_v1beta1`).
pub fn validate_containerrecreaterequest_v1beta1(
    request: &v1beta1::ContainerRecreateRequest,
    old: Option<&v1beta1::ContainerRecreateRequest>,
) -> ErrorList {
    let mut errors = validate_object_meta(&request.metadata, true);
    match old {
        Some(old) => {
            if old.spec != request.spec {
                errors.push(immutable_spec_error());
            }
            errors.extend(validate_immutable_labels(&request.metadata, &old.metadata));
        }
        None => {
            let spec = &request.spec;
            let strategy = spec.strategy.as_ref().map(|s| StrategyView {
                failure_policy: (
                    s.failure_policy.as_str(),
                    s.failure_policy.is_unset() || s.failure_policy.is_known(),
                ),
                termination_grace_period_seconds: s.termination_grace_period_seconds,
                unready_grace_period_seconds: s.unready_grace_period_seconds,
                min_started_seconds: s.min_started_seconds,
            });
            errors.extend(validate_spec(
                &spec.pod_name,
                &spec.containers,
                strategy,
                spec.active_deadline_seconds,
                spec.ttl_seconds_after_finished,
                v1beta1::ContainerRecreateRequestFailurePolicyType::KNOWN,
            ));
        }
    }
    errors
}

/// Validates a v1alpha1 ContainerRecreateRequest (the v1beta1 rules, plus: once the
/// unready-acquired annotation is set it may not change).
pub fn validate_containerrecreaterequest_v1alpha1(
    request: &v1alpha1::ContainerRecreateRequest,
    old: Option<&v1alpha1::ContainerRecreateRequest>,
) -> ErrorList {
    let mut errors = validate_object_meta(&request.metadata, true);
    match old {
        Some(old) => {
            if old.spec != request.spec {
                errors.push(immutable_spec_error());
            }
            errors.extend(validate_immutable_labels(&request.metadata, &old.metadata));
            let key = CONTAINER_RECREATE_REQUEST_UNREADY_ACQUIRED_KEY;
            let annotation = |meta: &ObjectMeta| meta.annotations.as_ref().and_then(|a| a.get(key)).cloned();
            let previous = annotation(&old.metadata).unwrap_or_default();
            if !previous.is_empty() && annotation(&request.metadata).unwrap_or_default() != previous {
                errors.push(FieldError::forbidden(
                    &FieldPath::root("metadata").child("annotations").key(key),
                    format!("annotation {key} is immutable once set"),
                ));
            }
        }
        None => {
            let spec = &request.spec;
            let strategy = spec.strategy.as_ref().map(|s| StrategyView {
                failure_policy: (
                    s.failure_policy.as_str(),
                    s.failure_policy.is_unset() || s.failure_policy.is_known(),
                ),
                termination_grace_period_seconds: s.termination_grace_period_seconds,
                unready_grace_period_seconds: s.unready_grace_period_seconds,
                min_started_seconds: s.min_started_seconds,
            });
            errors.extend(validate_spec(
                &spec.pod_name,
                &spec.containers,
                strategy,
                spec.active_deadline_seconds,
                spec.ttl_seconds_after_finished,
                v1alpha1::ContainerRecreateRequestFailurePolicyType::KNOWN,
            ));
        }
    }
    errors
}

fn immutable_spec_error() -> FieldError {
    FieldError::forbidden(&FieldPath::root("spec"), "spec of ContainerRecreateRequest is immutable")
}

fn validate_immutable_labels(new: &ObjectMeta, old: &ObjectMeta) -> ErrorList {
    let label =
        |meta: &ObjectMeta, key: &str| meta.labels.as_ref().and_then(|labels| labels.get(key)).cloned();
    [CONTAINER_RECREATE_REQUEST_POD_UID_KEY, CONTAINER_RECREATE_REQUEST_NODE_NAME_KEY]
        .into_iter()
        .filter(|key| label(new, key) != label(old, key))
        .map(|key| {
            FieldError::forbidden(
                &FieldPath::root("metadata").child("labels").key(key),
                format!("label {key} is immutable"),
            )
        })
        .collect()
}

/// The strategy fields both versions share (the failure policy as its text and whether it is
/// unset or known).
struct StrategyView<'a> {
    failure_policy: (&'a str, bool),
    termination_grace_period_seconds: Option<i64>,
    unready_grace_period_seconds: Option<i64>,
    min_started_seconds: i32,
}

fn validate_spec(
    pod_name: &str,
    containers: &[ContainerRecreateRequestContainer],
    strategy: Option<StrategyView<'_>>,
    active_deadline_seconds: Option<i64>,
    ttl_seconds_after_finished: Option<i32>,
    failure_policies: &[&str],
) -> ErrorList {
    let path = FieldPath::root("spec");
    let mut errors = ErrorList::new();
    if pod_name.is_empty() {
        errors.push(FieldError::required(&path.child("podName"), "podName can not be empty"));
    }
    if containers.is_empty() {
        errors.push(FieldError::required(&path.child("containers"), "at least one container is required"));
    }
    let mut seen = BTreeSet::new();
    for (index, container) in containers.iter().enumerate() {
        let name_path = path.child("containers").index(index).child("name");
        if container.name.is_empty() {
            errors.push(FieldError::required(&name_path, ""));
        } else if !seen.insert(container.name.as_str()) {
            errors.push(FieldError::duplicate(&name_path, quoted(&container.name)));
        }
    }
    if let Some(deadline) =
        active_deadline_seconds.filter(|d| *d < CONTAINER_RECREATE_REQUEST_MIN_DEADLINE_SECONDS)
    {
        errors.push(FieldError::invalid(
            &path.child("activeDeadlineSeconds"),
            deadline,
            format!(
                "activeDeadlineSeconds can not be less than {CONTAINER_RECREATE_REQUEST_MIN_DEADLINE_SECONDS}"
            ),
        ));
    }
    if let Some(ttl) = ttl_seconds_after_finished {
        errors.extend(validate_non_negative(ttl.into(), &path.child("ttlSecondsAfterFinished")));
    }
    if let Some(strategy) = strategy {
        let strategy_path = path.child("strategy");
        for (name, value) in [
            ("terminationGracePeriodSeconds", strategy.termination_grace_period_seconds),
            ("unreadyGracePeriodSeconds", strategy.unready_grace_period_seconds),
            ("minStartedSeconds", Some(strategy.min_started_seconds.into())),
        ] {
            if let Some(value) = value {
                errors.extend(validate_non_negative(value, &strategy_path.child(name)));
            }
        }
        let (policy, ok) = strategy.failure_policy;
        if !ok {
            errors.push(FieldError::not_supported(
                &strategy_path.child("failurePolicy"),
                policy,
                failure_policies,
            ));
        }
    }
    errors
}
