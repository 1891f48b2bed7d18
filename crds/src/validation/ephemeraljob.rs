//! EphemeralJob validation (upstream `pkg/webhook/ephemeraljob/validating`): the ephemeral
//! container rules Kubernetes applies when containers are added to a pod, checked up front, plus
//! the job's own selector and numbers.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{EnvFromSource, EnvVar, EphemeralContainer};

use super::meta::{
    dns1123_label_problems, is_env_var_name, validate_label_selector, validate_non_negative,
    validate_object_meta,
};
use crate::{
    apps::v1alpha1,
    field::{ErrorList, FieldError, FieldPath, quoted},
};

/// Validates an EphemeralJob. Every spec field may change on update, so `old` adds no rule.
pub fn validate_ephemeraljob(
    job: &v1alpha1::EphemeralJob,
    _old: Option<&v1alpha1::EphemeralJob>,
) -> ErrorList {
    let spec = &job.spec;
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&job.metadata, true);
    match &spec.selector {
        None => errors.push(FieldError::required(&path.child("selector"), "")),
        Some(selector) => errors.extend(validate_label_selector(selector, &path.child("selector"))),
    }
    for (name, value) in [
        ("replicas", spec.replicas.map(i64::from)),
        ("parallelism", spec.parallelism.map(i64::from)),
        ("ttlSecondsAfterFinished", spec.ttl_seconds_after_finished.map(i64::from)),
    ] {
        if let Some(value) = value {
            errors.extend(validate_non_negative(value, &path.child(name)));
        }
    }
    if let Some(deadline) = spec.active_deadline_seconds.filter(|d| *d <= 0) {
        errors.push(FieldError::invalid(
            &path.child("activeDeadlineSeconds"),
            deadline,
            "must be a positive integer",
        ));
    }
    let containers_path = path.child("template").child("ephemeralContainers");
    let containers = &spec.template.ephemeral_containers;
    if containers.is_empty() {
        errors.push(FieldError::required(&containers_path, "at least one ephemeral container is required"));
    }
    let mut names = BTreeSet::new();
    for (index, container) in containers.iter().enumerate() {
        let item = containers_path.index(index);
        errors.extend(validate_ephemeral_container(container, &item));
        if !container.name.is_empty() && !names.insert(container.name.as_str()) {
            errors.push(FieldError::duplicate(&item.child("name"), quoted(&container.name)));
        }
    }
    errors
}

fn validate_ephemeral_container(container: &EphemeralContainer, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let name_path = path.child("name");
    if container.name.is_empty() {
        errors.push(FieldError::required(&name_path, ""));
    }
    for problem in dns1123_label_problems(&container.name).into_iter().filter(|_| !container.name.is_empty())
    {
        errors.push(FieldError::invalid(&name_path, quoted(&container.name), problem));
    }
    match container.image.as_deref() {
        None | Some("") => errors.push(FieldError::required(&path.child("image"), "")),
        Some(image) if image.trim() != image => errors.push(FieldError::invalid(
            &path.child("image"),
            quoted(image),
            "must not have leading or trailing whitespace",
        )),
        Some(_) => {}
    }
    check_required_enum(
        &mut errors,
        &path.child("terminationMessagePolicy"),
        container.termination_message_policy.as_deref(),
        &["File", "FallbackToLogsOnError"],
    );
    check_required_enum(
        &mut errors,
        &path.child("imagePullPolicy"),
        container.image_pull_policy.as_deref(),
        &["Always", "IfNotPresent", "Never"],
    );
    for (index, var) in container.env.iter().flatten().enumerate() {
        errors.extend(validate_env_var(var, &path.child("env").index(index)));
    }
    for (index, source) in container.env_from.iter().flatten().enumerate() {
        errors.extend(validate_env_from(source, &path.child("envFrom").index(index)));
    }
    // Ephemeral containers may not serve the pod: no ports, resources, lifecycle or probes. As
    // upstream (a reflect zero check), an empty `resources: {}` is unset: Go clients send it.
    let resources_set = container.resources.as_ref().is_some_and(|r| *r != Default::default());
    for (field, set) in [
        ("ports", container.ports.as_ref().is_some_and(|v| !v.is_empty())),
        ("resources", resources_set),
        ("resizePolicy", container.resize_policy.as_ref().is_some_and(|v| !v.is_empty())),
        ("restartPolicy", container.restart_policy.is_some()),
        ("restartPolicyRules", container.restart_policy_rules.as_ref().is_some_and(|v| !v.is_empty())),
        ("lifecycle", container.lifecycle.is_some()),
        ("livenessProbe", container.liveness_probe.is_some()),
        ("readinessProbe", container.readiness_probe.is_some()),
        ("startupProbe", container.startup_probe.is_some()),
    ] {
        if set {
            errors
                .push(FieldError::forbidden(&path.child(field), "cannot be set for an Ephemeral Container"));
        }
    }
    for (index, mount) in container.volume_mounts.iter().flatten().enumerate() {
        let item = path.child("volumeMounts").index(index);
        if mount.name.is_empty() {
            errors.push(FieldError::required(&item.child("name"), ""));
        }
        if mount.mount_path.is_empty() {
            errors.push(FieldError::required(&item.child("mountPath"), ""));
        }
        for (field, value) in [("subPath", &mount.sub_path), ("subPathExpr", &mount.sub_path_expr)] {
            if value.as_deref().is_some_and(|v| !v.is_empty()) {
                errors.push(FieldError::forbidden(
                    &item.child(field),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
    }
    errors
}

fn check_required_enum(errors: &mut ErrorList, path: &FieldPath, value: Option<&str>, allowed: &[&str]) {
    match value {
        None | Some("") => errors.push(FieldError::required(path, "")),
        Some(value) if !allowed.contains(&value) => {
            errors.push(FieldError::not_supported(path, value, allowed))
        }
        Some(_) => {}
    }
}

fn validate_env_var(var: &EnvVar, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if var.name.is_empty() {
        errors.push(FieldError::required(&path.child("name"), ""));
    } else if !is_env_var_name(&var.name) {
        errors.push(FieldError::invalid(
            &path.child("name"),
            quoted(&var.name),
            "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', \
             and must not start with a digit",
        ));
    }
    if var.value_from.is_some() && var.value.as_deref().is_some_and(|v| !v.is_empty()) {
        errors.push(FieldError::invalid(
            &path.child("valueFrom"),
            "",
            "may not be specified when `value` is not empty",
        ));
    }
    errors
}

fn validate_env_from(source: &EnvFromSource, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(prefix) = source.prefix.as_deref().filter(|p| !p.is_empty())
        && !is_env_var_name(prefix)
    {
        errors.push(FieldError::invalid(
            &path.child("prefix"),
            quoted(prefix),
            "must be a valid environment variable name prefix",
        ));
    }
    match (&source.config_map_ref, &source.secret_ref) {
        (Some(_), Some(_)) => {
            errors.push(FieldError::invalid(path, "", "may not have more than one field specified at a time"))
        }
        (None, None) => {
            errors.push(FieldError::invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        }
        (Some(config_map), None) if config_map.name.is_empty() => {
            errors.push(FieldError::required(&path.child("configMapRef").child("name"), ""))
        }
        (None, Some(secret)) if secret.name.is_empty() => {
            errors.push(FieldError::required(&path.child("secretRef").child("name"), ""))
        }
        _ => {}
    }
    errors
}
