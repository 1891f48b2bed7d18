//! Pod template defaults, as the Kruise webhooks inject them into workload templates
//! (upstream `SetDefaultPodSpec`: the Kubernetes core/v1 defaults plus Kruise's choice of
//! `imagePullPolicy: Always` for app containers without one).
//!
//! Defaulting the template in the workload, rather than leaving it to the pod's own defaulting,
//! keeps the revision hash of a template stable between what the user applied and what the
//! API server stores.

use k8s_openapi::api::core::v1::{
    Container, EnvVar, HTTPGetAction, LifecycleHandler, PersistentVolumeClaim, PodSecurityContext, PodSpec,
    Probe, Volume, VolumeProjection,
};

/// Default file mode of secret, configmap, downward API and projected volumes (0644).
const DEFAULT_VOLUME_MODE: i32 = 0o644;

/// Applies the pod template defaults to `spec`: Kruise's `imagePullPolicy: Always` for app
/// containers without one, then the Kubernetes core/v1 defaults.
pub fn default_pod_spec(spec: &mut PodSpec) {
    for container in &mut spec.containers {
        container.image_pull_policy.get_or_insert_with(|| "Always".into());
    }
    default_core_pod_spec(spec);
}

/// Applies only the Kubernetes core/v1 pod spec defaults (what the API server applies to a
/// pod: `imagePullPolicy` from the image tag).
pub fn default_core_pod_spec(spec: &mut PodSpec) {
    spec.dns_policy.get_or_insert_with(|| "ClusterFirst".into());
    spec.restart_policy.get_or_insert_with(|| "Always".into());
    spec.security_context.get_or_insert_with(PodSecurityContext::default);
    spec.termination_grace_period_seconds.get_or_insert(30);
    spec.scheduler_name.get_or_insert_with(|| "default-scheduler".into());

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
            port.protocol.get_or_insert_with(|| "TCP".into());
        }
        default_env(ephemeral.env.as_mut());
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
}

/// Applies the PVC template defaults (volume mode Filesystem, phase Pending).
pub fn default_pvc_template(claim: &mut PersistentVolumeClaim) {
    if let Some(spec) = claim.spec.as_mut() {
        spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
    }
    let status = claim.status.get_or_insert_with(Default::default);
    status.phase.get_or_insert_with(|| "Pending".into());
}

fn default_container(container: &mut Container) {
    if container.image_pull_policy.is_none() {
        let latest = image_tag(container.image.as_deref().unwrap_or_default()) == "latest";
        container.image_pull_policy = Some(if latest { "Always" } else { "IfNotPresent" }.into());
    }
    container.termination_message_path.get_or_insert_with(|| "/dev/termination-log".into());
    container.termination_message_policy.get_or_insert_with(|| "File".into());
    for port in container.ports.iter_mut().flatten() {
        port.protocol.get_or_insert_with(|| "TCP".into());
    }
    default_env(container.env.as_mut());
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
            field.api_version.get_or_insert_with(|| "v1".into());
        }
    }
}

fn default_probe(probe: &mut Probe) {
    probe.timeout_seconds.get_or_insert(1);
    probe.period_seconds.get_or_insert(10);
    probe.success_threshold.get_or_insert(1);
    probe.failure_threshold.get_or_insert(3);
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
    get.path.get_or_insert_with(|| "/".into());
    get.scheme.get_or_insert_with(|| "HTTP".into());
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
                field.api_version.get_or_insert_with(|| "v1".into());
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
                field.api_version.get_or_insert_with(|| "v1".into());
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
    fn app_containers_default_to_pull_always_and_init_containers_by_tag() {
        let mut spec = PodSpec {
            containers: vec![container("nginx:1.25", None), container("nginx:1.25", Some("Never"))],
            init_containers: Some(vec![container("busybox", None), container("busybox:1.36", None)]),
            ..Default::default()
        };
        default_pod_spec(&mut spec);
        let pulls: Vec<_> = spec.containers.iter().map(|c| c.image_pull_policy.clone().unwrap()).collect();
        assert_eq!(pulls, ["Always", "Never"]);
        let init: Vec<_> =
            spec.init_containers.unwrap().iter().map(|c| c.image_pull_policy.clone().unwrap()).collect();
        assert_eq!(init, ["Always", "IfNotPresent"]);
    }

    #[test]
    fn pod_level_defaults_are_filled_only_when_missing() {
        let mut spec = PodSpec {
            containers: vec![container("a:1", None)],
            termination_grace_period_seconds: Some(5),
            ..Default::default()
        };
        default_pod_spec(&mut spec);
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
        default_pod_spec(&mut spec);
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
        default_pod_spec(&mut spec);
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
        default_pod_spec(&mut spec);
        let volumes = spec.volumes.unwrap();
        assert!(volumes[0].empty_dir.is_some());
        assert_eq!(volumes[1].secret.as_ref().unwrap().default_mode, Some(0o644));
        assert!(volumes[1].empty_dir.is_none());
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
