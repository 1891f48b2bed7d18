//! Pod template validation: the parts of Kubernetes' `ValidatePodTemplateSpec` that a workload
//! webhook must check itself, because the CRD keeps pod templates schemaless.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Container, EnvVar, PodSpec, PodTemplateSpec, Probe, ResourceRequirements, Volume,
};

use super::meta::{
    dns1123_label_problems, is_env_var_name, qualified_name_problems, validate_annotations, validate_labels,
};
use crate::{
    field::{ErrorList, FieldError, FieldPath, quoted},
    quantity::Quantity,
};

/// Validates a pod template. `claim_volumes` names volumes that will exist in every pod without
/// being in the template (a workload's volumeClaimTemplates).
pub fn validate_pod_template(
    template: &PodTemplateSpec,
    path: &FieldPath,
    claim_volumes: &[String],
) -> ErrorList {
    let mut errors = ErrorList::new();
    let meta_path = path.child("metadata");
    if let Some(meta) = &template.metadata {
        errors.extend(validate_labels(meta.labels.as_ref(), &meta_path.child("labels")));
        errors.extend(validate_annotations(meta.annotations.as_ref(), &meta_path.child("annotations")));
    }
    match &template.spec {
        Some(spec) => errors.extend(validate_pod_spec(spec, &path.child("spec"), claim_volumes)),
        None => errors.push(FieldError::required(&path.child("spec"), "")),
    }
    errors
}

/// Validates a pod spec.
pub fn validate_pod_spec(spec: &PodSpec, path: &FieldPath, claim_volumes: &[String]) -> ErrorList {
    let mut errors = ErrorList::new();

    let mut volume_names: BTreeSet<String> = claim_volumes.iter().cloned().collect();
    for (index, volume) in spec.volumes.iter().flatten().enumerate() {
        let item = path.child("volumes").index(index);
        errors.extend(validate_volume(volume, &item));
        if !volume_names.insert(volume.name.clone()) && !claim_volumes.contains(&volume.name) {
            errors.push(FieldError::duplicate(&item.child("name"), quoted(&volume.name)));
        }
    }

    if spec.containers.is_empty() {
        errors.push(FieldError::required(&path.child("containers"), ""));
    }
    let mut container_names = BTreeSet::new();
    let init = spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| (path.child("initContainers").index(i), c));
    let main = spec.containers.iter().enumerate().map(|(i, c)| (path.child("containers").index(i), c));
    for (item, container) in init.chain(main) {
        if !container.name.is_empty() && !container_names.insert(container.name.clone()) {
            errors.push(FieldError::duplicate(&item.child("name"), quoted(&container.name)));
        }
        errors.extend(validate_container(container, &item, &volume_names));
    }

    if let Some(policy) = &spec.restart_policy {
        check_enum(&mut errors, &path.child("restartPolicy"), policy, &["Always", "OnFailure", "Never"]);
    }
    if let Some(policy) = &spec.dns_policy {
        check_enum(
            &mut errors,
            &path.child("dnsPolicy"),
            policy,
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        );
    }
    if let Some(seconds) = spec.termination_grace_period_seconds.filter(|s| *s < 0) {
        errors.push(FieldError::invalid(
            &path.child("terminationGracePeriodSeconds"),
            seconds,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(seconds) = spec.active_deadline_seconds.filter(|s| *s <= 0) {
        errors.push(FieldError::invalid(
            &path.child("activeDeadlineSeconds"),
            seconds,
            "must be greater than 0",
        ));
    }
    errors.extend(validate_labels(spec.node_selector.as_ref(), &path.child("nodeSelector")));
    for (index, toleration) in spec.tolerations.iter().flatten().enumerate() {
        let item = path.child("tolerations").index(index);
        if let Some(operator) = &toleration.operator {
            check_enum(&mut errors, &item.child("operator"), operator, &["Exists", "Equal"]);
            if operator == "Exists" && toleration.value.as_deref().is_some_and(|v| !v.is_empty()) {
                errors.push(FieldError::invalid(
                    &item.child("operator"),
                    quoted(operator),
                    "value must be empty when `operator` is 'Exists'",
                ));
            }
        }
        if let Some(effect) = toleration.effect.as_deref().filter(|e| !e.is_empty()) {
            check_enum(
                &mut errors,
                &item.child("effect"),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            );
        }
    }
    errors
}

fn validate_volume(volume: &Volume, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if volume.name.is_empty() {
        errors.push(FieldError::required(&path.child("name"), ""));
    }
    for problem in dns1123_label_problems(&volume.name).into_iter().filter(|_| !volume.name.is_empty()) {
        errors.push(FieldError::invalid(&path.child("name"), quoted(&volume.name), problem));
    }
    let sources = serde_json::to_value(volume)
        .ok()
        .and_then(|value| value.as_object().map(|object| object.keys().filter(|k| *k != "name").count()))
        .unwrap_or(0);
    if sources == 0 {
        errors.push(FieldError::required(path, "must specify a volume type"));
    } else if sources > 1 {
        errors.push(FieldError::forbidden(path, "may not specify more than 1 volume type"));
    }
    errors
}

fn validate_container(container: &Container, path: &FieldPath, volumes: &BTreeSet<String>) -> ErrorList {
    let mut errors = ErrorList::new();
    if container.name.is_empty() {
        errors.push(FieldError::required(&path.child("name"), ""));
    } else {
        for problem in dns1123_label_problems(&container.name) {
            errors.push(FieldError::invalid(&path.child("name"), quoted(&container.name), problem));
        }
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
    if let Some(policy) = &container.image_pull_policy {
        check_enum(&mut errors, &path.child("imagePullPolicy"), policy, &["Always", "IfNotPresent", "Never"]);
    }
    if let Some(policy) = &container.termination_message_policy {
        check_enum(
            &mut errors,
            &path.child("terminationMessagePolicy"),
            policy,
            &["File", "FallbackToLogsOnError"],
        );
    }

    let mut port_names = BTreeSet::new();
    for (index, port) in container.ports.iter().flatten().enumerate() {
        let item = path.child("ports").index(index);
        if !(1..=65535).contains(&port.container_port) {
            errors.push(FieldError::invalid(
                &item.child("containerPort"),
                port.container_port,
                "must be between 1 and 65535, inclusive",
            ));
        }
        if let Some(host_port) = port.host_port.filter(|p| !(0..=65535).contains(p)) {
            errors.push(FieldError::invalid(
                &item.child("hostPort"),
                host_port,
                "must be between 0 and 65535, inclusive",
            ));
        }
        if let Some(protocol) = &port.protocol {
            check_enum(&mut errors, &item.child("protocol"), protocol, &["TCP", "UDP", "SCTP"]);
        }
        if let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) {
            if !is_iana_svc_name(name) {
                errors.push(FieldError::invalid(
                    &item.child("name"),
                    quoted(name),
                    "must be no more than 15 characters, contain only lowercase letters, digits and '-', \
                     contain at least one letter and not start, end or repeat '-'",
                ));
            }
            if !port_names.insert(name.to_string()) {
                errors.push(FieldError::duplicate(&item.child("name"), quoted(name)));
            }
        }
    }

    for (index, var) in container.env.iter().flatten().enumerate() {
        errors.extend(validate_env_var(var, &path.child("env").index(index)));
    }

    let mut mount_paths = BTreeSet::new();
    for (index, mount) in container.volume_mounts.iter().flatten().enumerate() {
        let item = path.child("volumeMounts").index(index);
        if mount.name.is_empty() {
            errors.push(FieldError::required(&item.child("name"), ""));
        } else if !volumes.contains(&mount.name) {
            errors.push(FieldError::not_found(&item.child("name"), quoted(&mount.name)));
        }
        if mount.mount_path.is_empty() {
            errors.push(FieldError::required(&item.child("mountPath"), ""));
        } else if !mount_paths.insert(mount.mount_path.clone()) {
            errors.push(FieldError::invalid(
                &item.child("mountPath"),
                quoted(&mount.mount_path),
                "must be unique",
            ));
        }
    }

    if let Some(resources) = &container.resources {
        errors.extend(validate_resources(resources, &path.child("resources")));
    }
    for (name, probe) in [
        ("livenessProbe", &container.liveness_probe),
        ("readinessProbe", &container.readiness_probe),
        ("startupProbe", &container.startup_probe),
    ] {
        if let Some(probe) = probe {
            errors.extend(validate_probe(probe, &path.child(name)));
        }
    }
    errors
}

fn validate_env_var(var: &EnvVar, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if var.name.is_empty() {
        errors.push(FieldError::required(&path.child("name"), ""));
    } else if !is_env_var_name(&var.name) {
        errors.push(FieldError::invalid(
            &path.child("name"),
            quoted(&var.name),
            "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or \
             '.', and must not start with a digit",
        ));
    }
    if let Some(from) = &var.value_from {
        if var.value.as_deref().is_some_and(|v| !v.is_empty()) {
            errors.push(FieldError::invalid(
                &path.child("valueFrom"),
                "",
                "may not be specified when `value` is not empty",
            ));
        }
        let sources = [
            from.field_ref.is_some(),
            from.resource_field_ref.is_some(),
            from.config_map_key_ref.is_some(),
            from.secret_key_ref.is_some(),
            from.file_key_ref.is_some(),
        ]
        .into_iter()
        .filter(|set| *set)
        .count();
        if sources != 1 {
            errors.push(FieldError::invalid(
                &path.child("valueFrom"),
                "",
                "must specify exactly one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or \
                 `fileKeyRef`",
            ));
        }
    }
    errors
}

/// Validates resource quantities and that requests do not exceed limits.
pub fn validate_resources(resources: &ResourceRequirements, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut parsed: BTreeMap<(&str, &str), Quantity> = BTreeMap::new();
    for (kind, list) in [("limits", &resources.limits), ("requests", &resources.requests)] {
        for (name, quantity) in list.iter().flatten() {
            let item = path.child(kind).key(name);
            for problem in qualified_name_problems(name) {
                errors.push(FieldError::invalid(&item, quoted(name), problem));
            }
            match Quantity::parse(&quantity.0) {
                Ok(value) if value.is_negative() => errors.push(FieldError::invalid(
                    &item,
                    quoted(&quantity.0),
                    "must be greater than or equal to 0",
                )),
                Ok(value) => {
                    parsed.insert((kind, name.as_str()), value);
                }
                Err(error) => errors.push(FieldError::invalid(&item, quoted(&quantity.0), error.to_string())),
            }
        }
    }
    for ((kind, name), request) in &parsed {
        if *kind != "requests" {
            continue;
        }
        if let Some(limit) = parsed.get(&("limits", name))
            && request > limit
        {
            errors.push(FieldError::invalid(
                &path.child("requests").key(name),
                quoted(&request.to_string()),
                format!("must be less than or equal to {name} limit of {limit}"),
            ));
        }
    }
    errors
}

fn validate_probe(probe: &Probe, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    for (name, value) in [
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("periodSeconds", probe.period_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ] {
        if let Some(value) = value.filter(|v| *v < 0) {
            errors.push(FieldError::invalid(&path.child(name), value, "must be greater than or equal to 0"));
        }
    }
    let handlers =
        [probe.exec.is_some(), probe.http_get.is_some(), probe.tcp_socket.is_some(), probe.grpc.is_some()]
            .into_iter()
            .filter(|set| *set)
            .count();
    if handlers == 0 {
        errors.push(FieldError::required(path, "must specify a handler type"));
    } else if handlers > 1 {
        errors.push(FieldError::forbidden(path, "may not specify more than 1 handler type"));
    }
    errors
}

fn check_enum(errors: &mut ErrorList, path: &FieldPath, value: &str, allowed: &[&str]) {
    if !allowed.contains(&value) {
        errors.push(FieldError::not_supported(path, value, allowed));
    }
}

fn is_iana_svc_name(name: &str) -> bool {
    name.len() <= 15
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && name.bytes().any(|b| b.is_ascii_lowercase())
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::{
        api::core::v1::{ContainerPort, VolumeMount},
        apimachinery::pkg::api::resource::Quantity as K8sQuantity,
    };

    fn template(containers: Vec<Container>) -> PodTemplateSpec {
        PodTemplateSpec { metadata: None, spec: Some(PodSpec { containers, ..Default::default() }) }
    }

    fn container(name: &str, image: &str) -> Container {
        Container { name: name.into(), image: Some(image.into()), ..Default::default() }
    }

    fn paths(errors: &ErrorList) -> Vec<String> {
        errors.iter().map(|e| format!("{} {}", e.path, e.kind.reason())).collect()
    }

    #[test]
    fn a_plain_template_is_valid() {
        let errors =
            validate_pod_template(&template(vec![container("main", "nginx")]), &FieldPath::root("t"), &[]);
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn each_container_rule_reports_its_field() {
        let mut bad = container("Main_1", "");
        bad.ports = Some(vec![
            ContainerPort { container_port: 0, name: Some("http".into()), ..Default::default() },
            ContainerPort {
                container_port: 80,
                name: Some("http".into()),
                protocol: Some("ICMP".into()),
                ..Default::default()
            },
        ]);
        bad.volume_mounts = Some(vec![VolumeMount {
            name: "missing".into(),
            mount_path: "/data".into(),
            ..Default::default()
        }]);
        bad.env = Some(vec![EnvVar { name: "1BAD".into(), ..Default::default() }]);
        bad.resources = Some(ResourceRequirements {
            limits: Some([("cpu".to_string(), K8sQuantity("1".into()))].into()),
            requests: Some(
                [
                    ("cpu".to_string(), K8sQuantity("2".into())),
                    ("memory".to_string(), K8sQuantity("lots".into())),
                ]
                .into(),
            ),
            ..Default::default()
        });
        let errors =
            validate_pod_template(&template(vec![bad, container("main", "x")]), &FieldPath::root("t"), &[]);
        assert_eq!(
            paths(&errors),
            [
                "t.spec.containers[0].name FieldValueInvalid",
                "t.spec.containers[0].image FieldValueRequired",
                "t.spec.containers[0].ports[0].containerPort FieldValueInvalid",
                "t.spec.containers[0].ports[1].protocol FieldValueNotSupported",
                "t.spec.containers[0].ports[1].name FieldValueDuplicate",
                "t.spec.containers[0].env[0].name FieldValueInvalid",
                "t.spec.containers[0].volumeMounts[0].name FieldValueNotFound",
                "t.spec.containers[0].resources.requests[memory] FieldValueInvalid",
                "t.spec.containers[0].resources.requests[cpu] FieldValueInvalid",
            ]
        );
    }

    #[test]
    fn claim_templates_count_as_volumes_and_names_must_be_unique() {
        let mut c = container("main", "x");
        c.volume_mounts =
            Some(vec![VolumeMount { name: "data".into(), mount_path: "/data".into(), ..Default::default() }]);
        let ok = validate_pod_template(&template(vec![c.clone()]), &FieldPath::root("t"), &["data".into()]);
        assert!(ok.is_empty(), "{ok:?}");
        let dup =
            validate_pod_template(&template(vec![c.clone(), c]), &FieldPath::root("t"), &["data".into()]);
        assert_eq!(paths(&dup), ["t.spec.containers[1].name FieldValueDuplicate"]);
    }

    #[test]
    fn missing_spec_and_containers_are_required() {
        let none = PodTemplateSpec::default();
        assert_eq!(
            paths(&validate_pod_template(&none, &FieldPath::root("t"), &[])),
            ["t.spec FieldValueRequired"]
        );
        assert_eq!(
            paths(&validate_pod_template(&template(vec![]), &FieldPath::root("t"), &[])),
            ["t.spec.containers FieldValueRequired"]
        );
    }
}
