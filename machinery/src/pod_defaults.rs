//! Kubernetes' core/v1 pod defaults (`SetDefaults_PodSpec`, `_Container`, `_Volume`,
//! `_Probe`, `_ResourceList` ...), as kube-apiserver applies them to a pod and the Kruise
//! webhooks to a workload's template.
//!
//! The rules are Go's: a string or number field that is empty or zero counts as unset (Go cannot
//! tell `""` from absent), a pointer only when absent; resource quantities are rounded up to
//! milli-units (`SetDefaults_ResourceList`) and written in Go's canonical form.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{
        Container, EnvVar, HTTPGetAction, LifecycleHandler, PodSecurityContext, PodSpec, Probe, Volume,
        VolumeProjection,
    },
    apimachinery::pkg::api::resource::Quantity,
};

use crate::quantity::go::round_up_milli;

/// Default file mode of secret, configmap, downward API and projected volumes (0644).
const DEFAULT_VOLUME_MODE: i32 = 0o644;

/// Go's `if field == "" { field = value }`.
pub fn fill(field: &mut Option<String>, value: &str) {
    if field.as_deref().is_none_or(str::is_empty) {
        *field = Some(value.to_string());
    }
}

/// Go's `if field == 0 { field = value }`.
fn fill_number(field: &mut Option<i32>, value: i32) {
    if field.is_none_or(|v| v == 0) {
        *field = Some(value);
    }
}

/// Applies only the Kubernetes core/v1 pod spec defaults (what the API server applies to a
/// pod: `imagePullPolicy` from the image tag).
pub fn default_core_pod_spec(spec: &mut PodSpec) {
    fill(&mut spec.dns_policy, "ClusterFirst");
    fill(&mut spec.restart_policy, "Always");
    spec.security_context.get_or_insert_with(PodSecurityContext::default);
    spec.termination_grace_period_seconds.get_or_insert(30);
    fill(&mut spec.scheduler_name, "default-scheduler");

    for volume in spec.volumes.iter_mut().flatten() {
        default_volume(volume);
    }
    for container in spec.init_containers.iter_mut().flatten() {
        default_container(container);
    }
    for container in &mut spec.containers {
        default_container(container);
    }
    for ephemeral in spec.ephemeral_containers.iter_mut().flatten() {
        for port in ephemeral.ports.iter_mut().flatten() {
            fill(&mut port.protocol, "TCP");
        }
        default_env(ephemeral.env.as_mut());
        if let Some(resources) = ephemeral.resources.as_mut() {
            default_resource_list(resources.limits.as_mut());
            default_resource_list(resources.requests.as_mut());
        }
        for probe in
            [&mut ephemeral.liveness_probe, &mut ephemeral.readiness_probe, &mut ephemeral.startup_probe]
                .into_iter()
                .flatten()
        {
            default_probe(probe);
        }
        if let Some(lifecycle) = ephemeral.lifecycle.as_mut() {
            default_lifecycle_handler(lifecycle.post_start.as_mut());
            default_lifecycle_handler(lifecycle.pre_stop.as_mut());
        }
    }
    default_resource_list(spec.overhead.as_mut());
}

/// `SetDefaults_ResourceList`: every quantity rounded up to milli-units, written as Go writes
/// it afterwards. A quantity Go could not parse is left alone (validation reports it).
pub fn default_resource_list(list: Option<&mut BTreeMap<String, Quantity>>) {
    for quantity in list.into_iter().flat_map(|list| list.values_mut()) {
        if let Ok(rounded) = round_up_milli(&quantity.0) {
            quantity.0 = rounded;
        }
    }
}

fn default_container(container: &mut Container) {
    if container.image_pull_policy.as_deref().is_none_or(str::is_empty) {
        let latest = image_tag(container.image.as_deref().unwrap_or_default()) == "latest";
        container.image_pull_policy = Some(if latest { "Always" } else { "IfNotPresent" }.into());
    }
    fill(&mut container.termination_message_path, "/dev/termination-log");
    fill(&mut container.termination_message_policy, "File");
    for port in container.ports.iter_mut().flatten() {
        fill(&mut port.protocol, "TCP");
    }
    default_env(container.env.as_mut());
    if let Some(resources) = container.resources.as_mut() {
        default_resource_list(resources.limits.as_mut());
        default_resource_list(resources.requests.as_mut());
    }
    for probe in [&mut container.liveness_probe, &mut container.readiness_probe, &mut container.startup_probe]
        .into_iter()
        .flatten()
    {
        default_probe(probe);
    }
    if let Some(lifecycle) = container.lifecycle.as_mut() {
        default_lifecycle_handler(lifecycle.post_start.as_mut());
        default_lifecycle_handler(lifecycle.pre_stop.as_mut());
    }
}

fn default_env(env: Option<&mut Vec<EnvVar>>) {
    for var in env.into_iter().flatten() {
        if let Some(field) = var.value_from.as_mut().and_then(|from| from.field_ref.as_mut()) {
            fill(&mut field.api_version, "v1");
        }
    }
}

fn default_probe(probe: &mut Probe) {
    fill_number(&mut probe.timeout_seconds, 1);
    fill_number(&mut probe.period_seconds, 10);
    fill_number(&mut probe.success_threshold, 1);
    fill_number(&mut probe.failure_threshold, 3);
    if let Some(get) = probe.http_get.as_mut() {
        default_http_get(get);
    }
}

fn default_lifecycle_handler(handler: Option<&mut LifecycleHandler>) {
    if let Some(get) = handler.and_then(|h| h.http_get.as_mut()) {
        default_http_get(get);
    }
}

fn default_http_get(get: &mut HTTPGetAction) {
    fill(&mut get.path, "/");
    fill(&mut get.scheme, "HTTP");
}

fn default_volume(volume: &mut Volume) {
    let has_source = volume_has_source(volume);
    if !has_source {
        volume.empty_dir = Some(Default::default());
    }
    if let Some(host_path) = volume.host_path.as_mut() {
        host_path.type_.get_or_insert_with(String::new);
    }
    if let Some(secret) = volume.secret.as_mut() {
        secret.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
    }
    if let Some(config_map) = volume.config_map.as_mut() {
        config_map.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
    }
    if let Some(downward) = volume.downward_api.as_mut() {
        downward.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
        for item in downward.items.iter_mut().flatten() {
            if let Some(field) = item.field_ref.as_mut() {
                fill(&mut field.api_version, "v1");
            }
        }
    }
    if let Some(projected) = volume.projected.as_mut() {
        projected.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
        for source in projected.sources.iter_mut().flatten() {
            default_projection(source);
        }
    }
}

fn default_projection(source: &mut VolumeProjection) {
    if let Some(downward) = source.downward_api.as_mut() {
        for item in downward.items.iter_mut().flatten() {
            if let Some(field) = item.field_ref.as_mut() {
                fill(&mut field.api_version, "v1");
            }
        }
    }
    if let Some(token) = source.service_account_token.as_mut() {
        token.expiration_seconds.get_or_insert(3600);
    }
}

/// Whether any volume source is set; a volume with none defaults to an emptyDir.
fn volume_has_source(volume: &Volume) -> bool {
    // Compare against a volume that differs only in name: any set source makes them differ.
    let bare = Volume { name: volume.name.clone(), ..Default::default() };
    *volume != bare
}

/// The tag of an image reference as the kubelet sees it: `latest` when there is neither a tag
/// nor a digest.
pub fn image_tag(image: &str) -> &str {
    let without_digest = image.split('@').next().unwrap_or(image);
    let has_digest = without_digest.len() != image.len();
    let last_segment = without_digest.rsplit('/').next().unwrap_or(without_digest);
    match last_segment.rsplit_once(':') {
        Some((_, tag)) => tag,
        None if has_digest => "",
        None => "latest",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ContainerPort, EphemeralContainer, SecretVolumeSource};

    fn container(image: &str, policy: Option<&str>) -> Container {
        Container {
            name: "c".into(),
            image: Some(image.into()),
            image_pull_policy: policy.map(Into::into),
            ports: Some(vec![ContainerPort { container_port: 80, ..Default::default() }]),
            ..Default::default()
        }
    }

    #[test]
    fn pod_level_defaults_are_filled_only_when_missing() {
        let mut spec = PodSpec {
            containers: vec![container("a:1", None)],
            termination_grace_period_seconds: Some(5),
            ..Default::default()
        };
        default_core_pod_spec(&mut spec);
        assert_eq!(spec.dns_policy.as_deref(), Some("ClusterFirst"));
        assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
        assert_eq!(spec.scheduler_name.as_deref(), Some("default-scheduler"));
        assert_eq!(spec.termination_grace_period_seconds, Some(5));
        assert!(spec.security_context.is_some());
        let c = &spec.containers[0];
        assert_eq!(c.termination_message_path.as_deref(), Some("/dev/termination-log"));
        assert_eq!(c.termination_message_policy.as_deref(), Some("File"));
        assert_eq!(c.ports.as_ref().unwrap()[0].protocol.as_deref(), Some("TCP"));
    }

    #[test]
    fn ports_of_every_container_kind_get_tcp() {
        let mut spec = PodSpec {
            containers: vec![container("a:1", None)],
            init_containers: Some(vec![container("b:1", None)]),
            ephemeral_containers: Some(vec![EphemeralContainer {
                name: "debug".into(),
                ports: Some(vec![ContainerPort { container_port: 9, ..Default::default() }]),
                ..Default::default()
            }]),
            ..Default::default()
        };
        default_core_pod_spec(&mut spec);
        let ephemeral = &spec.ephemeral_containers.unwrap()[0];
        assert_eq!(ephemeral.ports.as_ref().unwrap()[0].protocol.as_deref(), Some("TCP"));
        assert_eq!(
            spec.init_containers.unwrap()[0].ports.as_ref().unwrap()[0].protocol.as_deref(),
            Some("TCP")
        );
    }

    #[test]
    fn probes_get_their_thresholds_and_http_defaults() {
        let mut c = container("a:1", None);
        c.liveness_probe = Some(Probe {
            http_get: Some(HTTPGetAction { port: Default::default(), ..Default::default() }),
            ..Default::default()
        });
        let mut spec = PodSpec { containers: vec![c], ..Default::default() };
        default_core_pod_spec(&mut spec);
        let probe = spec.containers[0].liveness_probe.clone().unwrap();
        assert_eq!(
            (probe.timeout_seconds, probe.period_seconds, probe.success_threshold, probe.failure_threshold),
            (Some(1), Some(10), Some(1), Some(3))
        );
        let get = probe.http_get.unwrap();
        assert_eq!((get.path.as_deref(), get.scheme.as_deref()), (Some("/"), Some("HTTP")));
    }

    #[test]
    fn volumes_get_modes_and_a_source() {
        let mut spec = PodSpec {
            containers: vec![container("a:1", None)],
            volumes: Some(vec![
                Volume { name: "bare".into(), ..Default::default() },
                Volume {
                    name: "secret".into(),
                    secret: Some(SecretVolumeSource { secret_name: Some("s".into()), ..Default::default() }),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        };
        default_core_pod_spec(&mut spec);
        let volumes = spec.volumes.unwrap();
        assert!(volumes[0].empty_dir.is_some());
        assert_eq!(volumes[1].secret.as_ref().unwrap().default_mode, Some(0o644));
        assert!(volumes[1].empty_dir.is_none());
    }

    /// Go cannot tell `""` or `0` from absent: they get the default too; pointers only when absent.
    #[test]
    fn empty_strings_and_zeros_count_as_unset() {
        let mut c = container("a:1", Some(""));
        c.termination_message_path = Some(String::new());
        c.liveness_probe = Some(Probe {
            timeout_seconds: Some(0),
            period_seconds: Some(5),
            http_get: Some(HTTPGetAction { path: Some(String::new()), ..Default::default() }),
            ..Default::default()
        });
        let mut spec = PodSpec {
            containers: vec![c],
            dns_policy: Some(String::new()),
            termination_grace_period_seconds: Some(0),
            ..Default::default()
        };
        default_core_pod_spec(&mut spec);
        assert_eq!(spec.dns_policy.as_deref(), Some("ClusterFirst"));
        assert_eq!(spec.termination_grace_period_seconds, Some(0), "a pointer set to 0 is set");
        let c = &spec.containers[0];
        assert_eq!(
            c.image_pull_policy.as_deref(),
            Some("IfNotPresent"),
            "an empty policy is unset: by the tag"
        );
        assert_eq!(c.termination_message_path.as_deref(), Some("/dev/termination-log"));
        let probe = c.liveness_probe.as_ref().unwrap();
        assert_eq!((probe.timeout_seconds, probe.period_seconds), (Some(1), Some(5)));
        assert_eq!(probe.http_get.as_ref().unwrap().path.as_deref(), Some("/"));
    }

    /// `SetDefaults_ResourceList`: rounded up to milli-units, in Go's canonical form.
    #[test]
    fn resource_lists_are_rounded_up_to_millis() {
        use k8s_openapi::api::core::v1::ResourceRequirements;
        let quantities = |pairs: &[(&str, &str)]| {
            Some(pairs.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect())
        };
        let mut c = container("a:1", None);
        c.resources = Some(ResourceRequirements {
            limits: quantities(&[("cpu", "10u"), ("memory", "1024Mi")]),
            requests: quantities(&[("cpu", "0.5"), ("memory", "+1Gi")]),
            ..Default::default()
        });
        let mut spec =
            PodSpec { containers: vec![c], overhead: quantities(&[("cpu", "1000m")]), ..Default::default() };
        default_core_pod_spec(&mut spec);
        let resources = spec.containers[0].resources.clone().unwrap();
        assert_eq!(resources.limits, quantities(&[("cpu", "1m"), ("memory", "1Gi")]));
        assert_eq!(resources.requests, quantities(&[("cpu", "500m"), ("memory", "+1Gi")]));
        assert_eq!(spec.overhead, quantities(&[("cpu", "1")]));
    }

    #[test]
    fn image_tags_are_read_like_the_kubelet() {
        let cases = [
            ("nginx", "latest"),
            ("nginx:1.25", "1.25"),
            ("registry:5000/team/app", "latest"),
            ("registry:5000/team/app:v2", "v2"),
            ("app@sha256:abc", ""),
            ("app:v1@sha256:abc", "v1"),
        ];
        for (image, tag) in cases {
            assert_eq!(image_tag(image), tag, "{image}");
        }
    }
}
