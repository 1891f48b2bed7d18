//! CloneSet validation (INVENTORY d.2), for both served versions so that errors name the field
//! as the user wrote it.

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, PodTemplateSpec},
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};

use super::{
    common::{validate_priority_strategy, validate_scatter_strategy, validate_selector_and_template},
    meta::{validate_non_negative, validate_object_meta},
};
use crate::{
    apps::{v1alpha1, v1beta1},
    common::InPlaceUpdateStrategy,
    field::{ErrorList, FieldError, FieldPath, quoted},
    intstr::{display, scaled_value},
};

/// Validates a v1beta1 CloneSet; with `old`, also the rules of an update.
pub fn validate_cloneset_v1beta1(cloneset: &v1beta1::CloneSet, old: Option<&v1beta1::CloneSet>) -> ErrorList {
    let spec = &cloneset.spec;
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&cloneset.metadata, true);
    let replicas = spec.replicas.unwrap_or(1);
    errors.extend(validate_common(
        replicas,
        spec.selector.as_ref(),
        &spec.template,
        &spec.volume_claim_templates,
        &spec.scale_strategy.pods_to_delete,
        &path,
    ));

    let strategy = &spec.update_strategy;
    let strategy_path = path.child("updateStrategy");
    if !strategy.type_.is_unset() && !strategy.type_.is_known() {
        errors.push(FieldError::invalid(
            &strategy_path.child("type"),
            quoted(strategy.type_.as_str()),
            "must be 'RollingUpdate' or 'OnDelete'",
        ));
    }
    if let Some(rolling) = &strategy.rolling_update {
        let rolling_path = strategy_path.child("rollingUpdate");
        if !rolling.pod_update_policy.is_unset() && !rolling.pod_update_policy.is_known() {
            errors.push(FieldError::invalid(
                &rolling_path.child("podUpdatePolicy"),
                quoted(rolling.pod_update_policy.as_str()),
                "must be 'ReCreate', 'InPlaceIfPossible' or 'InPlaceOnly'",
            ));
        }
        errors.extend(validate_rolling_numbers(
            replicas,
            rolling.partition.as_ref(),
            rolling.max_unavailable.as_ref(),
            rolling.max_surge.as_ref(),
            rolling.pod_update_policy == v1beta1::PodUpdatePolicy::InPlaceOnly,
            &rolling_path,
        ));
        if let Some(priority) = &rolling.priority_strategy {
            errors.extend(validate_priority_strategy(priority, &rolling_path.child("priorityStrategy")));
        }
        errors.extend(validate_scatter_strategy(
            &rolling.scatter_strategy,
            &rolling_path.child("scatterStrategy"),
        ));
        if let Some(in_place) = &rolling.in_place_update_strategy {
            errors.extend(validate_in_place_strategy(in_place, &rolling_path.child("inPlaceUpdateStrategy")));
        }
    }
    if let Some(old) = old {
        let in_place_only = strategy
            .rolling_update
            .as_ref()
            .is_some_and(|r| r.pod_update_policy == v1beta1::PodUpdatePolicy::InPlaceOnly);
        errors.extend(validate_update(
            &old.spec.selector,
            &spec.selector,
            &old.spec.template,
            &spec.template,
            in_place_only,
        ));
    }
    errors
}

/// Validates a v1alpha1 CloneSet; with `old`, also the rules of an update.
pub fn validate_cloneset_v1alpha1(
    cloneset: &v1alpha1::CloneSet,
    old: Option<&v1alpha1::CloneSet>,
) -> ErrorList {
    let spec = &cloneset.spec;
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&cloneset.metadata, true);
    let replicas = spec.replicas.unwrap_or(1);
    errors.extend(validate_common(
        replicas,
        spec.selector.as_ref(),
        &spec.template,
        &spec.volume_claim_templates,
        &spec.scale_strategy.pods_to_delete,
        &path,
    ));

    let strategy = &spec.update_strategy;
    let strategy_path = path.child("updateStrategy");
    let type_ok = matches!(
        strategy.type_,
        v1alpha1::CloneSetUpdateStrategyType::ReCreate
            | v1alpha1::CloneSetUpdateStrategyType::InPlaceIfPossible
            | v1alpha1::CloneSetUpdateStrategyType::InPlaceOnly
            | v1alpha1::CloneSetUpdateStrategyType::OnDelete
    ) || strategy.type_.is_unset();
    if !type_ok {
        errors.push(FieldError::invalid(
            &strategy_path.child("type"),
            quoted(strategy.type_.as_str()),
            "must be 'ReCreate', 'InPlaceIfPossible', 'InPlaceOnly' or 'OnDelete'",
        ));
    }
    errors.extend(validate_rolling_numbers(
        replicas,
        strategy.partition.as_ref(),
        strategy.max_unavailable.as_ref(),
        strategy.max_surge.as_ref(),
        strategy.type_ == v1alpha1::CloneSetUpdateStrategyType::InPlaceOnly,
        &strategy_path,
    ));
    if let Some(priority) = &strategy.priority_strategy {
        errors.extend(validate_priority_strategy(priority, &strategy_path.child("priorityStrategy")));
    }
    errors.extend(validate_scatter_strategy(
        &strategy.scatter_strategy,
        &strategy_path.child("scatterStrategy"),
    ));
    if let Some(in_place) = &strategy.in_place_update_strategy {
        errors.extend(validate_in_place_strategy(in_place, &strategy_path.child("inPlaceUpdateStrategy")));
    }
    if let Some(deadline) = spec.progress_deadline_seconds {
        let deadline_path = path.child("progressDeadlineSeconds");
        errors.extend(validate_non_negative(deadline.into(), &deadline_path));
        if deadline != i32::MAX && deadline <= spec.min_ready_seconds {
            errors.push(FieldError::invalid(
                &deadline_path,
                deadline,
                "must be greater than minReadySeconds",
            ));
        }
    }
    if let Some(old) = old {
        errors.extend(validate_update(
            &old.spec.selector,
            &spec.selector,
            &old.spec.template,
            &spec.template,
            strategy.type_ == v1alpha1::CloneSetUpdateStrategyType::InPlaceOnly,
        ));
    }
    errors
}

fn validate_common(
    replicas: i32,
    selector: Option<&LabelSelector>,
    template: &PodTemplateSpec,
    claims: &[PersistentVolumeClaim],
    pods_to_delete: &[String],
    path: &FieldPath,
) -> ErrorList {
    let mut errors = validate_non_negative(replicas.into(), &path.child("replicas"));
    let claim_names: Vec<String> = claims.iter().filter_map(|claim| claim.metadata.name.clone()).collect();
    errors.extend(validate_selector_and_template(selector, template, &claim_names, path, "cloneset"));
    if let Some(spec) = &template.spec {
        let spec_path = path.child("template").child("spec");
        if let Some(policy) = spec.restart_policy.as_deref().filter(|p| !p.is_empty() && *p != "Always") {
            errors.push(FieldError::not_supported(&spec_path.child("restartPolicy"), policy, &["Always"]));
        }
        if spec.active_deadline_seconds.is_some() {
            errors.push(FieldError::forbidden(
                &spec_path.child("activeDeadlineSeconds"),
                "activeDeadlineSeconds in cloneset is not Supported",
            ));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let duplicates: Vec<&String> = pods_to_delete.iter().filter(|name| !seen.insert(*name)).collect();
    if !duplicates.is_empty() {
        errors.push(FieldError::invalid(
            &path.child("scaleStrategy").child("podsToDelete"),
            format!("{pods_to_delete:?}"),
            format!("duplicated items {duplicates:?}"),
        ));
    }
    errors
}

fn validate_rolling_numbers(
    replicas: i32,
    partition: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
    max_surge: Option<&IntOrString>,
    in_place_only: bool,
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let scaled = |value: Option<&IntOrString>, name: &str, errors: &mut ErrorList| -> i32 {
        let Some(value) = value else { return 0 };
        match scaled_value(value, replicas, true) {
            Ok(count) => count,
            Err(error) => {
                errors.push(FieldError::invalid(
                    &path.child(name),
                    display(value),
                    format!("must be an integer or a percentage: {error}"),
                ));
                0
            }
        }
    };
    let partition_count = scaled(partition, "partition", &mut errors);
    errors.extend(validate_non_negative(partition_count.into(), &path.child("partition")));
    let unavailable = scaled(max_unavailable, "maxUnavailable", &mut errors);
    let surge = scaled(max_surge, "maxSurge", &mut errors);
    if in_place_only && surge > 0 {
        let shown = max_surge.map(display).unwrap_or_default();
        errors.push(FieldError::invalid(
            &path.child("maxSurge"),
            shown,
            "can not use maxSurge with podUpdatePolicy InPlaceOnly",
        ));
    }
    if replicas > 0 && unavailable < 1 && surge < 1 {
        let shown = max_unavailable.map(display).unwrap_or_else(|| "null".into());
        errors.push(FieldError::invalid(
            &path.child("maxUnavailable"),
            shown,
            "maxUnavailable and maxSurge should not both be less than 1",
        ));
    }
    errors
}

fn validate_in_place_strategy(strategy: &InPlaceUpdateStrategy, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(parallelism) = &strategy.image_pre_download_parallelism {
        let field = path.child("imagePreDownloadParallelism");
        let shown = display(parallelism);
        match parallelism {
            IntOrString::String(text) if text.ends_with('%') => errors.push(FieldError::invalid(
                &field,
                shown,
                "imagePreDownloadParallelism does not support percentage value",
            )),
            IntOrString::String(text) => match text.parse::<i32>() {
                Err(error) => errors.push(FieldError::invalid(
                    &field,
                    shown,
                    format!("imagePreDownloadParallelism must be a valid integer: {error}"),
                )),
                Ok(value) if value < 0 => errors.push(FieldError::invalid(
                    &field,
                    shown,
                    "imagePreDownloadParallelism must be non-negative",
                )),
                Ok(_) => {}
            },
            IntOrString::Int(value) if *value < 0 => errors.push(FieldError::invalid(
                &field,
                shown,
                "imagePreDownloadParallelism must be non-negative",
            )),
            IntOrString::Int(_) => {}
        }
    }
    if let Some(timeout) = strategy.image_pre_download_timeout_seconds {
        errors.extend(validate_non_negative(timeout.into(), &path.child("imagePreDownloadTimeoutSeconds")));
    }
    if let Some(min_ready) = strategy.image_pre_download_min_updated_ready_pods {
        errors.extend(validate_non_negative(
            min_ready.into(),
            &path.child("imagePreDownloadMinUpdatedReadyPods"),
        ));
    }
    errors
}

/// Update rules: the selector is immutable (every other spec field may change), and with
/// InPlaceOnly the template spec may only change container images.
fn validate_update(
    old_selector: &Option<LabelSelector>,
    new_selector: &Option<LabelSelector>,
    old_template: &PodTemplateSpec,
    new_template: &PodTemplateSpec,
    in_place_only: bool,
) -> ErrorList {
    let mut errors = ErrorList::new();
    if old_selector != new_selector {
        errors.push(FieldError::forbidden(
            &FieldPath::root("spec"),
            "updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', 'scaleStrategy', \
             'updateStrategy', 'minReadySeconds', 'progressDeadlineSeconds', 'volumeClaimTemplates' and \
             'revisionHistoryLimit' are forbidden",
        ));
    }
    if in_place_only && let Some((operation, path)) = first_non_image_change(old_template, new_template) {
        errors.push(FieldError::forbidden(
            &FieldPath::root("spec"),
            format!("only allowed to update images in spec for InPlaceOnly, but found {operation} {path}"),
        ));
    }
    errors
}

/// The first change between two template specs that is not a container image replacement, as
/// a JSON patch operation and path (`replace /containers/0/env/0/value`).
pub fn first_non_image_change(old: &PodTemplateSpec, new: &PodTemplateSpec) -> Option<(String, String)> {
    let old_spec = serde_json::to_value(&old.spec).unwrap_or_default();
    let new_spec = serde_json::to_value(&new.spec).unwrap_or_default();
    let patch = json_patch::diff(&old_spec, &new_spec);
    patch.0.iter().find_map(|operation| {
        let (name, path) = match operation {
            json_patch::PatchOperation::Replace(op) => ("replace", op.path.to_string()),
            json_patch::PatchOperation::Add(op) => ("add", op.path.to_string()),
            json_patch::PatchOperation::Remove(op) => ("remove", op.path.to_string()),
            json_patch::PatchOperation::Move(op) => ("move", op.path.to_string()),
            json_patch::PatchOperation::Copy(op) => ("copy", op.path.to_string()),
            json_patch::PatchOperation::Test(op) => ("test", op.path.to_string()),
        };
        let image_replace = name == "replace" && is_container_image_path(&path);
        (!image_replace).then(|| (name.to_string(), path))
    })
}

fn is_container_image_path(path: &str) -> bool {
    let mut parts = path.trim_start_matches('/').split('/');
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some("containers"), Some(index), Some("image"), None) if index.parse::<usize>().is_ok()
    )
}
