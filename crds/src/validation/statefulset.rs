//! Advanced StatefulSet validation (INVENTORY, StatefulSet "Validation"; upstream
//! `pkg/webhook/statefulset/validating`), for both served versions so that errors name the
//! field as the user wrote it.

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, PodTemplateSpec},
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};

use super::{
    cloneset::first_non_image_change,
    common::{validate_priority_strategy, validate_selector_and_template},
    meta::{validate_non_negative, validate_object_meta},
};
use crate::{
    apps::{
        v1alpha1,
        v1beta1::{
            self, PodManagementPolicyType, PodUpdatePolicy, STATEFULSET_MAX_MIN_READY_SECONDS,
            StatefulSetUpdateStrategy, StatefulSetUpdateStrategyType,
        },
    },
    common::IN_PLACE_UPDATE_READY,
    field::{ErrorList, FieldError, FieldPath, quoted},
    intstr::{display, scaled_value},
};

/// Validates a v1beta1 Advanced StatefulSet; with `old`, also the rules of an update.
pub fn validate_statefulset_v1beta1(
    statefulset: &v1beta1::StatefulSet,
    old: Option<&v1beta1::StatefulSet>,
) -> ErrorList {
    let spec = &statefulset.spec;
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&statefulset.metadata, true);
    errors.extend(validate_shared(&SharedSpec::of_v1beta1(spec), &path));

    for (index, ordinal) in spec.reserve_ordinals.iter().enumerate() {
        if let Some(problem) = reserve_ordinal_problem(ordinal) {
            errors.push(FieldError::invalid(
                &path.child("reserveOrdinals").index(index),
                display(ordinal),
                problem,
            ));
        }
    }
    if let Some(max_unavailable) = spec.scale_strategy.as_ref().and_then(|s| s.max_unavailable.as_ref()) {
        errors.extend(validate_max_unavailable(
            max_unavailable,
            spec.pod_management_policy == PodManagementPolicyType::Parallel,
            &path.child("scaleStrategy").child("maxUnavailable"),
        ));
    }
    if let Some(retention) = &spec.persistent_volume_claim_retention_policy {
        let retention_path = path.child("persistentVolumeClaimRetentionPolicy");
        for (name, policy) in
            [("whenDeleted", &retention.when_deleted), ("whenScaled", &retention.when_scaled)]
        {
            if !policy.is_known() {
                errors.push(FieldError::not_supported(
                    &retention_path.child(name),
                    policy.as_str(),
                    v1beta1::PersistentVolumeClaimRetentionPolicyType::KNOWN,
                ));
            }
        }
    }
    if let Some(ordinals) = &spec.ordinals {
        errors.extend(validate_non_negative(ordinals.start.into(), &path.child("ordinals").child("start")));
    }

    if let Some(old) = old {
        errors.extend(validate_update(&SharedSpec::of_v1beta1(spec), &SharedSpec::of_v1beta1(&old.spec)));
    }
    errors
}

/// Validates a v1alpha1 Advanced StatefulSet; with `old`, also the rules of an update.
pub fn validate_statefulset_v1alpha1(
    statefulset: &v1alpha1::StatefulSet,
    old: Option<&v1alpha1::StatefulSet>,
) -> ErrorList {
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&statefulset.metadata, true);
    errors.extend(validate_shared(&SharedSpec::of_v1alpha1(&statefulset.spec), &path));
    if let Some(old) = old {
        errors.extend(validate_update(
            &SharedSpec::of_v1alpha1(&statefulset.spec),
            &SharedSpec::of_v1alpha1(&old.spec),
        ));
    }
    errors
}

/// Update rule of the `StatefulSetAutoResizePVCGate` feature gate (off by default), for the
/// webhook to add when the gate is on: with `volumeClaimUpdateStrategy.type: OnPodRollingUpdate`
/// claim templates can be neither added, removed nor renamed, and may change only in size. The
/// StorageClass `allowVolumeExpansion` check needs the cluster and is not done here.
pub fn validate_statefulset_volume_claim_templates_update(
    new: &v1beta1::StatefulSetSpec,
    old: &v1beta1::StatefulSetSpec,
) -> ErrorList {
    let mut errors = ErrorList::new();
    if new.volume_claim_update_strategy.type_ != v1beta1::VolumeClaimUpdateStrategyType::OnPodRollingUpdate {
        return errors;
    }
    let path = FieldPath::root("spec").child("volumeClaimTemplates");
    if new.volume_claim_templates.len() != old.volume_claim_templates.len() {
        errors.push(FieldError::invalid(
            &path,
            format!("{} templates", new.volume_claim_templates.len()),
            format!(
                "claim templates can not be added or removed with volumeClaimUpdateStrategy OnPodRollingUpdate \
                 (there were {})",
                old.volume_claim_templates.len()
            ),
        ));
    }
    for (index, claim) in new.volume_claim_templates.iter().enumerate() {
        let name = claim.metadata.name.as_deref().unwrap_or_default();
        let item = path.index(index);
        match old
            .volume_claim_templates
            .iter()
            .find(|o| o.metadata.name.as_deref().unwrap_or_default() == name)
        {
            None => errors.push(FieldError::forbidden(
                &item.child("metadata").child("name"),
                format!("claim template {name:?} is new: claim templates can not be renamed or added"),
            )),
            Some(previous) if !claims_compatible_apart_from_size(previous, claim) => {
                errors.push(FieldError::invalid(
                    &item,
                    quoted(name),
                    "only the storage size of a claim template may change with volumeClaimUpdateStrategy \
                     OnPodRollingUpdate",
                ));
            }
            Some(_) => {}
        }
    }
    errors
}

/// A claim template whose storage size an update changes (nothing else), so that the webhook
/// checks its StorageClass allows expansion (upstream `ValidateVolumeClaimTemplateUpdate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResizedClaimTemplate {
    /// Position in `spec.volumeClaimTemplates`.
    pub index: usize,
    /// The template's `storageClassName`; `None` means the cluster's default class.
    pub storage_class: Option<String>,
}

/// The claim templates an update resizes, only with `volumeClaimUpdateStrategy.type:
/// OnPodRollingUpdate` (templates that change in more than size are refused by
/// [`validate_statefulset_volume_claim_templates_update`]).
pub fn resized_claim_templates(
    new: &v1beta1::StatefulSetSpec,
    old: &v1beta1::StatefulSetSpec,
) -> Vec<ResizedClaimTemplate> {
    if new.volume_claim_update_strategy.type_ != v1beta1::VolumeClaimUpdateStrategyType::OnPodRollingUpdate {
        return Vec::new();
    }
    new.volume_claim_templates
        .iter()
        .enumerate()
        .filter_map(|(index, claim)| {
            let previous =
                old.volume_claim_templates.iter().find(|o| o.metadata.name == claim.metadata.name)?;
            (claims_compatible_apart_from_size(previous, claim) && storage_size_differs(previous, claim))
                .then(|| ResizedClaimTemplate {
                    index,
                    storage_class: claim.spec.as_ref().and_then(|s| s.storage_class_name.clone()),
                })
        })
        .collect()
}

/// What the webhook found about the StorageClass of a resized claim template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageClassLookup {
    /// The class (named, or the default one) and its `allowVolumeExpansion`.
    Found {
        /// The class's name.
        name: String,
        /// `allowVolumeExpansion` as set (`None` when unset).
        allow_volume_expansion: Option<bool>,
    },
    /// No class is annotated as the default: nothing to check, as upstream.
    NoDefault,
    /// The named class could not be read (or the classes could not be listed).
    Failed,
}

/// Refuses resizing a claim template whose StorageClass forbids expansion
/// (`allowVolumeExpansion: false`) or cannot be read; an unset `allowVolumeExpansion` is
/// accepted, as upstream.
pub fn validate_claim_template_expansion(
    resized: &[(ResizedClaimTemplate, StorageClassLookup)],
) -> ErrorList {
    let mut errors = ErrorList::new();
    for (claim, lookup) in resized {
        let spec = FieldPath::root("spec").child("volumeClaimTemplates").index(claim.index).child("spec");
        match lookup {
            StorageClassLookup::Found { name, allow_volume_expansion: Some(false) } => {
                errors.push(FieldError::forbidden(
                    &spec.child("resources").child("requests").child("storage"),
                    format!("storage class {name} does not support volume expansion"),
                ));
            }
            StorageClassLookup::Failed => errors.push(FieldError::invalid(
                &spec.child("storageClassName"),
                claim.storage_class.clone().unwrap_or_else(|| "nil".into()),
                "can not get the storage class",
            )),
            StorageClassLookup::Found { .. } | StorageClassLookup::NoDefault => {}
        }
    }
    errors
}

/// The storage request or limit differs (compared as quantities).
fn storage_size_differs(old: &PersistentVolumeClaim, new: &PersistentVolumeClaim) -> bool {
    let storage = |claim: &PersistentVolumeClaim, limits: bool| {
        let resources = claim.spec.as_ref().and_then(|s| s.resources.as_ref());
        let list = if limits {
            resources.and_then(|r| r.limits.as_ref())
        } else {
            resources.and_then(|r| r.requests.as_ref())
        };
        list.and_then(|l| l.get("storage"))
            .map(|q| crate::quantity::Quantity::parse(&q.0).map_err(|_| q.0.clone()))
    };
    [false, true].into_iter().any(|limits| storage(old, limits) != storage(new, limits))
}

/// The parts of the spec that both versions have.
struct SharedSpec<'a> {
    replicas: Option<i32>,
    selector: Option<&'a LabelSelector>,
    template: &'a PodTemplateSpec,
    claims: &'a [PersistentVolumeClaim],
    service_name: &'a str,
    pod_management_policy: &'a PodManagementPolicyType,
    update_strategy: &'a StatefulSetUpdateStrategy,
}

impl<'a> SharedSpec<'a> {
    fn of_v1beta1(spec: &'a v1beta1::StatefulSetSpec) -> Self {
        Self {
            replicas: spec.replicas,
            selector: spec.selector.as_ref(),
            template: &spec.template,
            claims: &spec.volume_claim_templates,
            service_name: &spec.service_name,
            pod_management_policy: &spec.pod_management_policy,
            update_strategy: &spec.update_strategy,
        }
    }

    fn of_v1alpha1(spec: &'a v1alpha1::StatefulSetSpec) -> Self {
        Self {
            replicas: spec.replicas,
            selector: spec.selector.as_ref(),
            template: &spec.template,
            claims: &spec.volume_claim_templates,
            service_name: &spec.service_name,
            pod_management_policy: &spec.pod_management_policy,
            update_strategy: &spec.update_strategy,
        }
    }
}

fn validate_shared(spec: &SharedSpec<'_>, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let policy_path = path.child("podManagementPolicy");
    if spec.pod_management_policy.is_unset() {
        errors.push(FieldError::required(&policy_path, ""));
    } else if !spec.pod_management_policy.is_known() {
        errors.push(FieldError::not_supported(
            &policy_path,
            spec.pod_management_policy.as_str(),
            PodManagementPolicyType::KNOWN,
        ));
    }
    let parallel = *spec.pod_management_policy == PodManagementPolicyType::Parallel;
    errors.extend(validate_update_strategy(spec, parallel, path));

    if let Some(replicas) = spec.replicas {
        errors.extend(validate_non_negative(replicas.into(), &path.child("replicas")));
    }
    let claim_names: Vec<String> =
        spec.claims.iter().filter_map(|claim| claim.metadata.name.clone()).collect();
    errors.extend(validate_selector_and_template(
        spec.selector,
        spec.template,
        &claim_names,
        path,
        "statefulset",
    ));
    if let Some(pod) = &spec.template.spec {
        let pod_path = path.child("template").child("spec");
        if let Some(policy) = pod.restart_policy.as_deref().filter(|p| !p.is_empty() && *p != "Always") {
            errors.push(FieldError::not_supported(&pod_path.child("restartPolicy"), policy, &["Always"]));
        }
        if pod.active_deadline_seconds.is_some() {
            errors.push(FieldError::forbidden(
                &pod_path.child("activeDeadlineSeconds"),
                "activeDeadlineSeconds is not supported in a StatefulSet",
            ));
        }
    }
    errors
}

fn validate_update_strategy(spec: &SharedSpec<'_>, parallel: bool, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let strategy = spec.update_strategy;
    let strategy_path = path.child("updateStrategy");
    let rolling_path = strategy_path.child("rollingUpdate");
    match &strategy.type_ {
        unset if unset.is_unset() => errors.push(FieldError::required(&strategy_path.child("type"), "")),
        StatefulSetUpdateStrategyType::OnDelete => {
            if strategy.rolling_update.is_some() {
                errors.push(FieldError::invalid(
                    &rolling_path,
                    "{...}",
                    "only allowed for updateStrategy type 'RollingUpdate'",
                ));
            }
        }
        StatefulSetUpdateStrategyType::RollingUpdate => {
            if let Some(rolling) = &strategy.rolling_update {
                if let Some(partition) = rolling.partition {
                    errors.extend(validate_non_negative(partition.into(), &rolling_path.child("partition")));
                }
                if let Some(seconds) = rolling.min_ready_seconds {
                    let seconds_path = rolling_path.child("minReadySeconds");
                    errors.extend(validate_non_negative(seconds.into(), &seconds_path));
                    if seconds > STATEFULSET_MAX_MIN_READY_SECONDS {
                        errors.push(FieldError::invalid(
                            &seconds_path,
                            seconds,
                            format!("must be no more than {STATEFULSET_MAX_MIN_READY_SECONDS} seconds"),
                        ));
                    }
                }
                match &rolling.max_unavailable {
                    None => errors.push(FieldError::required(&rolling_path.child("maxUnavailable"), "")),
                    Some(value) => errors.extend(validate_max_unavailable(
                        value,
                        parallel,
                        &rolling_path.child("maxUnavailable"),
                    )),
                }
                let policy_path = rolling_path.child("podUpdatePolicy");
                match &rolling.pod_update_policy {
                    unset if unset.is_unset() => errors.push(FieldError::required(&policy_path, "")),
                    PodUpdatePolicy::ReCreate => {}
                    PodUpdatePolicy::InPlaceIfPossible | PodUpdatePolicy::InPlaceOnly => {
                        let has_gate = spec
                            .template
                            .spec
                            .as_ref()
                            .and_then(|pod| pod.readiness_gates.as_ref())
                            .is_some_and(|gates| {
                                gates.iter().any(|g| g.condition_type == IN_PLACE_UPDATE_READY)
                            });
                        if !has_gate {
                            errors.push(FieldError::invalid(
                                &path.child("template").child("spec").child("readinessGates"),
                                "[]",
                                format!(
                                    "must contain the {IN_PLACE_UPDATE_READY} readiness gate when podUpdatePolicy \
                                     is {}",
                                    rolling.pod_update_policy
                                ),
                            ));
                        }
                    }
                    other => errors.push(FieldError::not_supported(
                        &policy_path,
                        other.as_str(),
                        PodUpdatePolicy::KNOWN,
                    )),
                }
                if let Some(unordered) = &rolling.unordered_update {
                    let unordered_path = rolling_path.child("unorderedUpdate");
                    if !parallel {
                        errors.push(FieldError::required(
                            &unordered_path,
                            "unorderedUpdate needs podManagementPolicy Parallel",
                        ));
                    }
                    if let Some(priority) = &unordered.priority_strategy {
                        errors.extend(validate_priority_strategy(
                            priority,
                            &unordered_path.child("priorityStrategy"),
                        ));
                    }
                }
            }
        }
        other => errors.push(FieldError::not_supported(
            &strategy_path.child("type"),
            other.as_str(),
            StatefulSetUpdateStrategyType::KNOWN,
        )),
    }
    errors
}

/// `maxUnavailable` (of an update or of scaling): a whole count or percentage that comes to at
/// least one pod; anything but the integer 1 needs podManagementPolicy Parallel.
fn validate_max_unavailable(value: &IntOrString, parallel: bool, path: &FieldPath) -> ErrorList {
    let mut errors = validate_strict_int_or_percent(value, path);
    if errors.is_empty() && scaled_value(value, 1, true).is_ok_and(|count| count < 1) {
        errors.push(FieldError::invalid(path, display(value), "must not be less than 1"));
    }
    if !parallel && *value != IntOrString::Int(1) {
        errors.push(FieldError::invalid(
            path,
            display(value),
            "values other than 1 need podManagementPolicy Parallel",
        ));
    }
    errors
}

/// A Kubernetes "positive int or percent": a non-negative integer, or a string of digits
/// followed by `%` (no sign, no fraction).
pub(crate) fn validate_strict_int_or_percent(value: &IntOrString, path: &FieldPath) -> ErrorList {
    match value {
        IntOrString::Int(count) => validate_non_negative((*count).into(), path),
        IntOrString::String(text) if strict_percent(text).is_some() => ErrorList::new(),
        IntOrString::String(text) => vec![FieldError::invalid(
            path,
            quoted(text),
            "must be an integer or a percentage of digits followed by '%' (e.g. '5%')",
        )],
    }
}

/// An error when `value` is a percentage above 100%.
pub(crate) fn validate_percent_at_most_100(value: &IntOrString, path: &FieldPath) -> ErrorList {
    match value {
        IntOrString::String(text) if strict_percent(text).is_some_and(|percent| percent > 100) => {
            vec![FieldError::invalid(path, quoted(text), "must not be greater than 100%")]
        }
        _ => ErrorList::new(),
    }
}

/// The number of a `N%` string made of ASCII digits and a percent sign.
pub(crate) fn strict_percent(text: &str) -> Option<u64> {
    let digits = text.strip_suffix('%')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u64>().unwrap_or(u64::MAX))
}

/// Why a reserved ordinal is invalid: a negative number, or a string that is not an ascending
/// `start-end` range of non-negative numbers.
fn reserve_ordinal_problem(ordinal: &IntOrString) -> Option<String> {
    match ordinal {
        IntOrString::Int(value) if *value < 0 => Some("a reserved ordinal must not be negative".to_string()),
        IntOrString::Int(_) => None,
        IntOrString::String(text) => {
            let Some((start, end)) = text.split_once('-') else {
                return Some("must be a number or a range such as \"3-5\"".to_string());
            };
            let number = |part: &str| {
                (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| part.parse::<i32>().ok())
                    .flatten()
            };
            match (number(start), number(end)) {
                (Some(start), Some(end)) if start <= end => None,
                (Some(_), Some(_)) => Some("the start of a range must not be above its end".to_string()),
                _ => Some(
                    "must be a number or a range of two non-negative numbers such as \"3-5\"".to_string(),
                ),
            }
        }
    }
}

/// Update rules: selector, serviceName and podManagementPolicy are immutable (replicas,
/// template, claim templates, strategies, ordinals, lifecycle and history limit may change), and
/// with InPlaceOnly the pod spec may only change container images.
fn validate_update(new: &SharedSpec<'_>, old: &SharedSpec<'_>) -> ErrorList {
    let mut errors = ErrorList::new();
    let path = FieldPath::root("spec");
    let immutable = "may not be changed: only 'replicas', 'ordinals', 'template', 'reserveOrdinals', 'lifecycle', \
                     'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', 'volumeClaimTemplates', \
                     'volumeClaimUpdateStrategy', 'scaleStrategy' and 'updateStrategy' may";
    if new.selector != old.selector {
        errors.push(FieldError::forbidden(&path.child("selector"), immutable));
    }
    if new.service_name != old.service_name {
        errors.push(FieldError::forbidden(&path.child("serviceName"), immutable));
    }
    if new.pod_management_policy != old.pod_management_policy {
        errors.push(FieldError::forbidden(&path.child("podManagementPolicy"), immutable));
    }
    let in_place_only = new
        .update_strategy
        .rolling_update
        .as_ref()
        .is_some_and(|rolling| rolling.pod_update_policy == PodUpdatePolicy::InPlaceOnly);
    if in_place_only && let Some((operation, change)) = first_non_image_change(old.template, new.template) {
        errors.push(FieldError::forbidden(
            &path.child("template"),
            format!("with podUpdatePolicy InPlaceOnly only container images may change, but found {operation} {change}"),
        ));
    }
    errors
}

/// Storage class (when both name one) and access modes unchanged.
fn claims_compatible_apart_from_size(old: &PersistentVolumeClaim, new: &PersistentVolumeClaim) -> bool {
    let (Some(old_spec), Some(new_spec)) = (&old.spec, &new.spec) else {
        return old.spec.is_none() && new.spec.is_none();
    };
    let classes_agree = match (&old_spec.storage_class_name, &new_spec.storage_class_name) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    classes_agree
        && old_spec.access_modes.as_deref().unwrap_or_default()
            == new_spec.access_modes.as_deref().unwrap_or_default()
}
