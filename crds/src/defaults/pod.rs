//! Pod template defaults, as the Kruise webhooks inject them into workload templates
//! (upstream `SetDefaultPodSpec`: the Kubernetes core/v1 defaults of
//! [`kruise_machinery::pod_defaults`] plus Kruise's choice of `imagePullPolicy: Always` for app
//! containers without one), and the PVC template defaults.
//!
//! Defaulting the template in the workload, rather than leaving it to the pod's own defaulting,
//! keeps the revision hash of a template stable between what the user applied and what the
//! API server stores.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodSpec};
use kruise_machinery::pod_defaults::fill;
pub use kruise_machinery::pod_defaults::{default_core_pod_spec, default_resource_list, image_tag};

/// Applies the pod template defaults to `spec`: Kruise's `imagePullPolicy: Always` for app
/// containers without one, then the Kubernetes core/v1 defaults.
pub fn default_pod_spec(spec: &mut PodSpec) {
    for container in &mut spec.containers {
        fill(&mut container.image_pull_policy, "Always");
    }
    default_core_pod_spec(spec);
}

/// Applies the PVC template defaults Kruise applies (`SetDefaults_PersistentVolumeClaim`: phase
/// Pending; resource lists rounded up). Not `volumeMode`: upstream's webhook leaves it unset.
pub fn default_pvc_template(claim: &mut PersistentVolumeClaim) {
    if let Some(resources) = claim.spec.as_mut().and_then(|spec| spec.resources.as_mut()) {
        default_resource_list(resources.limits.as_mut());
        default_resource_list(resources.requests.as_mut());
    }
    let status = claim.status.get_or_insert_with(Default::default);
    fill(&mut status.phase, "Pending");
    default_resource_list(status.capacity.as_mut());
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{
        api::core::v1::{Container, ContainerPort},
        apimachinery::pkg::api::resource::Quantity,
    };

    use super::*;

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
    fn claim_templates_get_a_phase_and_rounded_requests_but_no_volume_mode() {
        use k8s_openapi::api::core::v1::{PersistentVolumeClaimSpec, VolumeResourceRequirements};
        let mut claim = PersistentVolumeClaim {
            spec: Some(PersistentVolumeClaimSpec {
                resources: Some(VolumeResourceRequirements {
                    requests: Some([("storage".to_string(), Quantity("1024Mi".into()))].into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        default_pvc_template(&mut claim);
        let spec = claim.spec.unwrap();
        assert_eq!(spec.volume_mode, None);
        assert_eq!(spec.resources.unwrap().requests.unwrap()["storage"], Quantity("1Gi".into()));
        assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Pending"));
    }
}
