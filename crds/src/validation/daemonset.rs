//! Advanced DaemonSet validation (INVENTORY d.4; upstream
//! `pkg/webhook/daemonset/validating/daemonset_validation.go`), for both served versions.

use k8s_openapi::{
    api::core::v1::PodTemplateSpec,
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};

use super::{
    common::validate_selector_and_template,
    meta::{validate_label_selector, validate_non_negative, validate_object_meta},
    statefulset::{strict_percent, validate_percent_at_most_100, validate_strict_int_or_percent},
};
use crate::{
    apps::{v1alpha1, v1beta1},
    common::Lifecycle,
    field::{ErrorList, FieldError, FieldPath},
};

/// Validates a v1beta1 Advanced DaemonSet; with `old`, also the rules of an update.
pub fn validate_daemonset_v1beta1(
    daemonset: &v1beta1::DaemonSet,
    old: Option<&v1beta1::DaemonSet>,
) -> ErrorList {
    let spec = &daemonset.spec;
    let mut errors = validate_object_meta(&daemonset.metadata, true);
    errors.extend(validate_shared(&SharedSpec {
        selector: spec.selector.as_ref(),
        template: &spec.template,
        min_ready_seconds: spec.min_ready_seconds,
        revision_history_limit: spec.revision_history_limit,
        lifecycle: spec.lifecycle.as_ref(),
    }));
    let strategy = &spec.update_strategy;
    let rolling = strategy.rolling_update.as_ref().map(|rolling| RollingView {
        type_: rolling.type_.as_str(),
        known: v1beta1::DaemonSetRollingUpdateType::KNOWN,
        max_unavailable: rolling.max_unavailable.as_ref(),
        max_surge: rolling.max_surge.as_ref(),
        partition: rolling.partition.as_ref(),
        selector: rolling.selector.as_ref(),
    });
    errors.extend(validate_strategy(&strategy.type_, rolling.as_ref()));
    if let Some(old) = old {
        errors.extend(validate_update(spec.selector.as_ref(), old.spec.selector.as_ref()));
    }
    errors
}

/// Validates a v1alpha1 Advanced DaemonSet; with `old`, also the rules of an update. The
/// deprecated `Surging` rolling update type is accepted (with `maxUnavailable` 0).
pub fn validate_daemonset_v1alpha1(
    daemonset: &v1alpha1::DaemonSet,
    old: Option<&v1alpha1::DaemonSet>,
) -> ErrorList {
    let spec = &daemonset.spec;
    let mut errors = validate_object_meta(&daemonset.metadata, true);
    errors.extend(validate_shared(&SharedSpec {
        selector: spec.selector.as_ref(),
        template: &spec.template,
        min_ready_seconds: spec.min_ready_seconds,
        revision_history_limit: spec.revision_history_limit,
        lifecycle: spec.lifecycle.as_ref(),
    }));
    let strategy = &spec.update_strategy;
    let rolling = strategy.rolling_update.as_ref().map(|rolling| RollingView {
        type_: rolling.type_.as_str(),
        known: v1alpha1::DaemonSetRollingUpdateType::KNOWN,
        max_unavailable: rolling.max_unavailable.as_ref(),
        max_surge: rolling.max_surge.as_ref(),
        partition: rolling.partition.as_ref(),
        selector: rolling.selector.as_ref(),
    });
    errors.extend(validate_strategy(&strategy.type_, rolling.as_ref()));
    if let Some(old) = old {
        errors.extend(validate_update(spec.selector.as_ref(), old.spec.selector.as_ref()));
    }
    errors
}

struct SharedSpec<'a> {
    selector: Option<&'a LabelSelector>,
    template: &'a PodTemplateSpec,
    min_ready_seconds: i32,
    revision_history_limit: Option<i32>,
    lifecycle: Option<&'a Lifecycle>,
}

struct RollingView<'a> {
    type_: &'a str,
    known: &'static [&'static str],
    max_unavailable: Option<&'a IntOrString>,
    max_surge: Option<&'a IntOrString>,
    partition: Option<&'a IntOrString>,
    selector: Option<&'a LabelSelector>,
}

fn validate_shared(spec: &SharedSpec<'_>) -> ErrorList {
    let path = FieldPath::root("spec");
    let mut errors = validate_selector_and_template(spec.selector, spec.template, &[], &path, "daemonset");
    if let Some(pod) = &spec.template.spec {
        let pod_path = path.child("template").child("spec");
        // An empty restart policy is defaulted to Always before upstream compares it.
        if let Some(policy) = pod.restart_policy.as_deref().filter(|p| !p.is_empty() && *p != "Always") {
            errors.push(FieldError::not_supported(&pod_path.child("restartPolicy"), policy, &["Always"]));
        }
        if pod.active_deadline_seconds.is_some() {
            errors.push(FieldError::forbidden(
                &pod_path.child("activeDeadlineSeconds"),
                "activeDeadlineSeconds is not supported in a DaemonSet",
            ));
        }
    }
    errors.extend(validate_non_negative(spec.min_ready_seconds.into(), &path.child("minReadySeconds")));
    if let Some(limit) = spec.revision_history_limit {
        errors.extend(validate_non_negative(limit.into(), &path.child("revisionHistoryLimit")));
    }
    if spec.lifecycle.is_some_and(|lifecycle| lifecycle.in_place_update.is_some()) {
        errors.push(FieldError::forbidden(
            &path.child("lifecycle").child("inPlaceUpdate"),
            "the inPlaceUpdate hook is not supported by DaemonSet",
        ));
    }
    errors
}

fn validate_strategy(
    type_: &v1beta1::DaemonSetUpdateStrategyType,
    rolling: Option<&RollingView<'_>>,
) -> ErrorList {
    let path = FieldPath::root("spec").child("updateStrategy");
    match type_ {
        v1beta1::DaemonSetUpdateStrategyType::OnDelete => ErrorList::new(),
        v1beta1::DaemonSetUpdateStrategyType::RollingUpdate => match rolling {
            None => vec![FieldError::required(&path.child("rollingUpdate"), "")],
            Some(rolling) => validate_rolling(rolling, &path.child("rollingUpdate")),
        },
        other => vec![FieldError::not_supported(
            &path.child("type"),
            other.as_str(),
            v1beta1::DaemonSetUpdateStrategyType::KNOWN,
        )],
    }
}

/// Whether an int-or-percent asks for a non-zero number of pods (a malformed value counts as
/// zero, as upstream reads it).
fn is_non_zero(value: Option<&IntOrString>) -> bool {
    match value {
        None => false,
        Some(IntOrString::Int(count)) => *count != 0,
        Some(IntOrString::String(text)) => match strict_percent(text) {
            Some(percent) => percent != 0,
            None => text.parse::<i64>().is_ok_and(|count| count != 0),
        },
    }
}

fn validate_rolling(rolling: &RollingView<'_>, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    for (name, value) in [("maxUnavailable", rolling.max_unavailable), ("maxSurge", rolling.max_surge)] {
        if let Some(value) = value {
            errors.extend(validate_strict_int_or_percent(value, &path.child(name)));
            errors.extend(validate_percent_at_most_100(value, &path.child(name)));
        }
    }
    let has_unavailable = is_non_zero(rolling.max_unavailable);
    let has_surge = is_non_zero(rolling.max_surge);
    if has_unavailable && has_surge {
        errors.push(FieldError::invalid(
            &path.child("maxSurge"),
            rolling.max_surge.map(crate::intstr::display).unwrap_or_default(),
            "may not be set when maxUnavailable is non-zero",
        ));
    } else if !has_unavailable && !has_surge {
        errors.push(FieldError::required(&path.child("maxUnavailable"), "cannot be 0 when maxSurge is 0"));
    }

    match rolling.type_ {
        "" | "Standard" => {}
        "InPlaceIfPossible" => {
            if has_surge {
                errors.push(FieldError::required(
                    &path.child("maxSurge"),
                    "must be 0 for rollingUpdateType InPlaceIfPossible",
                ));
            }
        }
        "Surging" if rolling.known.contains(&"Surging") => {
            if has_unavailable {
                errors.push(FieldError::required(
                    &path.child("maxUnavailable"),
                    "must be 0 for rollingUpdateType Surging",
                ));
            }
        }
        other => {
            errors.push(FieldError::not_supported(&path.child("rollingUpdateType"), other, rolling.known))
        }
    }

    if let Some(partition) = rolling.partition {
        errors.extend(validate_strict_int_or_percent(partition, &path.child("partition")));
        errors.extend(validate_percent_at_most_100(partition, &path.child("partition")));
    }
    if let Some(selector) = rolling.selector {
        errors.extend(validate_label_selector(selector, &path.child("selector")));
    }
    errors
}

/// Update rule: only the selector is immutable (template, strategies, lifecycle, burst,
/// minReadySeconds, history limit and scale strategy may change).
fn validate_update(new: Option<&LabelSelector>, old: Option<&LabelSelector>) -> ErrorList {
    if new == old {
        return ErrorList::new();
    }
    vec![FieldError::forbidden(
        &FieldPath::root("spec").child("selector"),
        "may not be changed: only 'burstReplicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', \
         'minReadySeconds' and 'revisionHistoryLimit' may",
    )]
}
