//! The PodProbeMarker decisions as pure functions: which pods a marker probes, and how a
//! NodePodProbe's spec changes when a marker is applied to or removed from a node.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Container, Pod},
    apimachinery::pkg::util::intstr::IntOrString,
};
use kruise_crds::apps::v1alpha1::{
    ContainerProbe, NodePodProbeSpec, PodContainerProbe, PodProbe, PodProbeMarker,
};

/// Finalizer that keeps a deleted marker until its probes are out of every NodePodProbe.
pub const FINALIZER: &str = "kruise.io/node-pod-probe-cleanup";

/// Label of virtual-kubelet (serverless) nodes, whose pods no daemon probes.
pub const VIRTUAL_KUBELET_LABEL: (&str, &str) = ("type", "virtual-kubelet");

/// The name a marker's probe has in a NodePodProbe: `<marker>#<probe>`.
pub fn node_probe_name(marker: &str, probe: &str) -> String {
    format!("{marker}#{probe}")
}

/// Splits a NodePodProbe probe name into marker and probe names (`None` without a `#`).
pub fn split_node_probe_name(name: &str) -> Option<(&str, &str)> {
    name.split_once('#')
}

/// Whether a pod can be probed (upstream `getMatchingPods`): active, initialized, on a node.
pub fn pod_is_probe_target(pod: &Pod) -> bool {
    crate::imagejob::pod_is_active_on_a_node(pod) && pod_initialized(pod)
}

/// Whether the pod's `Initialized` condition is `True`.
pub fn pod_initialized(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| conditions.iter().any(|c| c.type_ == "Initialized" && c.status == "True"))
}

/// Whether `pod` is one `marker` selects (same namespace, selector matches; a marker without
/// a selector selects nothing).
pub fn marker_selects(marker: &PodProbeMarker, pod: &Pod) -> bool {
    let empty = BTreeMap::new();
    marker.metadata.namespace == pod.metadata.namespace
        && marker.spec.selector.as_ref().is_some_and(|s| {
            kruise_crds::selector::matches(s, pod.metadata.labels.as_ref().unwrap_or(&empty))
        })
}

/// Whether a pod update should re-run the markers selecting it (upstream's pod handler): it
/// became initialized, or its IP changed, while being a probe target.
pub fn pod_change_matters(new: &Pod, old: Option<&Pod>) -> bool {
    if !pod_is_probe_target(new) {
        return false;
    }
    let Some(old) = old else { return true };
    let ip = |p: &Pod| p.status.as_ref().and_then(|s| s.pod_ip.clone());
    !pod_initialized(old) || ip(old) != ip(new) || old.metadata.labels != new.metadata.labels
}

/// Why a probe could not be compiled for a pod.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PortError {
    /// The probed container is not in the pod.
    #[error("container {container} not found in pod {namespace}/{pod}")]
    NoContainer {
        /// Container name.
        container: String,
        /// Pod namespace.
        namespace: String,
        /// Pod name.
        pod: String,
    },
    /// A named port the container does not declare.
    #[error("port {port} not found in container {container}")]
    NoPort {
        /// The port name.
        port: String,
        /// Container name.
        container: String,
    },
}

fn find_container<'a>(pod: &'a Pod, name: &str) -> Option<&'a Container> {
    let spec = pod.spec.as_ref()?;
    spec.containers.iter().chain(spec.init_containers.iter().flatten()).find(|c| c.name == name)
}

fn resolve(port: &IntOrString, container: &Container) -> Result<IntOrString, PortError> {
    match port {
        IntOrString::Int(_) => Ok(port.clone()),
        IntOrString::String(name) => {
            let by_name = container.ports.iter().flatten().find(|p| p.name.as_deref() == Some(name.as_str()));
            match (by_name, name.parse::<i32>()) {
                (Some(p), _) => Ok(IntOrString::Int(p.container_port)),
                (None, Ok(number)) => Ok(IntOrString::Int(number)),
                (None, Err(_)) => {
                    Err(PortError::NoPort { port: name.clone(), container: container.name.clone() })
                }
            }
        }
    }
}

/// The probe with named `tcpSocket`/`httpGet` ports replaced by the container's port numbers
/// (upstream `convertTcpSocketProbeCheckPort` / `convertHttpGetProbeCheckPort`).
pub fn resolve_ports(probe: &PodContainerProbe, pod: &Pod) -> Result<PodContainerProbe, PortError> {
    let mut probe = probe.clone();
    let named = |p: &IntOrString| matches!(p, IntOrString::String(_));
    let needs = probe.probe.tcp_socket.as_ref().is_some_and(|t| named(&t.port))
        || probe.probe.http_get.as_ref().is_some_and(|h| named(&h.port));
    if !needs {
        return Ok(probe);
    }
    let container = find_container(pod, &probe.container_name).ok_or_else(|| PortError::NoContainer {
        container: probe.container_name.clone(),
        namespace: pod.metadata.namespace.clone().unwrap_or_default(),
        pod: pod.metadata.name.clone().unwrap_or_default(),
    })?;
    if let Some(tcp) = probe.probe.tcp_socket.as_mut() {
        tcp.port = resolve(&tcp.port, container)?;
    }
    if let Some(http) = probe.probe.http_get.as_mut() {
        http.port = resolve(&http.port, container)?;
    }
    Ok(probe)
}

/// The marker's probes as compiled for `pod` (probes whose port cannot be resolved are left
/// out, as upstream does, with the reason).
pub fn compiled_probes(marker: &PodProbeMarker, pod: &Pod) -> (Vec<ContainerProbe>, Vec<PortError>) {
    let marker_name = marker.metadata.name.as_deref().unwrap_or_default();
    let mut probes = Vec::new();
    let mut errors = Vec::new();
    for probe in &marker.spec.probes {
        match resolve_ports(probe, pod) {
            Ok(probe) => probes.push(ContainerProbe {
                name: node_probe_name(marker_name, &probe.name),
                container_name: probe.container_name,
                probe: probe.probe,
            }),
            Err(error) => errors.push(error),
        }
    }
    (probes, errors)
}

/// `spec` with `marker`'s probes set for each of `pods` (upstream `updateNodePodProbes`): a
/// pod already listed (same name, namespace and UID) gets its IP filled in and each probe
/// added or replaced; a pod not listed is appended with the probes.
pub fn apply_marker(
    spec: &NodePodProbeSpec,
    marker: &PodProbeMarker,
    pods: &[&Pod],
) -> (NodePodProbeSpec, Vec<PortError>) {
    let mut spec = spec.clone();
    let mut errors = Vec::new();
    for pod in pods {
        let (name, namespace, uid) = (
            pod.metadata.name.clone().unwrap_or_default(),
            pod.metadata.namespace.clone().unwrap_or_default(),
            pod.metadata.uid.clone().unwrap_or_default(),
        );
        let ip = pod.status.as_ref().and_then(|s| s.pod_ip.clone()).unwrap_or_default();
        let (probes, mut failed) = compiled_probes(marker, pod);
        errors.append(&mut failed);
        match spec.pod_probes.iter_mut().find(|p| p.name == name && p.namespace == namespace && p.uid == uid)
        {
            Some(entry) => {
                if entry.ip.is_empty() {
                    entry.ip = ip;
                }
                for probe in probes {
                    match entry.probes.iter_mut().find(|p| p.name == probe.name) {
                        Some(existing) => *existing = probe,
                        None => entry.probes.push(probe),
                    }
                }
            }
            None => spec.pod_probes.push(PodProbe { name, namespace, uid, ip, probes }),
        }
    }
    (spec, errors)
}

/// `spec` without the probes of marker `namespace/marker` (upstream
/// `removePodProbeFromNodePodProbe`); pods left without probes are dropped.
pub fn remove_marker(spec: &NodePodProbeSpec, namespace: &str, marker: &str) -> NodePodProbeSpec {
    let prefix = format!("{marker}#");
    let pod_probes = spec
        .pod_probes
        .iter()
        .filter_map(|pod| {
            if pod.namespace != namespace {
                return Some(pod.clone());
            }
            let probes: Vec<ContainerProbe> =
                pod.probes.iter().filter(|p| !p.name.starts_with(&prefix)).cloned().collect();
            (!probes.is_empty()).then(|| PodProbe { probes, ..pod.clone() })
        })
        .collect();
    NodePodProbeSpec { pod_probes }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    fn pod(name: &str, uid: &str, ip: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": uid, "labels": {"app": "game"}},
            "spec": {"nodeName": "n1", "containers": [{"name": "app", "ports": [{"name": "http", "containerPort": 8080}]}]},
            "status": {"phase": "Running", "podIP": ip, "conditions": [{"type": "Initialized", "status": "True"}]}
        }))
        .unwrap()
    }

    fn marker(probes: serde_json::Value) -> PodProbeMarker {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
            "metadata": {"name": "ppm", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "game"}}, "probes": probes}
        }))
        .unwrap()
    }

    #[test]
    fn selects_initialized_active_pods_of_its_namespace() {
        let m = marker(json!([]));
        let p = pod("a", "u1", "10.0.0.1");
        assert!(marker_selects(&m, &p) && pod_is_probe_target(&p));
        let mut other = p.clone();
        other.metadata.namespace = Some("other".into());
        assert!(!marker_selects(&m, &other));
        let mut uninitialized = p.clone();
        uninitialized.status.as_mut().unwrap().conditions = None;
        assert!(!pod_is_probe_target(&uninitialized));
        assert!(pod_change_matters(&p, Some(&uninitialized)));
        assert!(!pod_change_matters(&p, Some(&p)));
    }

    #[test]
    fn applies_probes_with_named_ports_resolved() {
        let m = marker(json!([
            {"name": "healthy", "containerName": "app", "probe": {"exec": {"command": ["check"]}}},
            {"name": "web", "containerName": "app", "probe": {"httpGet": {"port": "http"}}},
            {"name": "bad", "containerName": "app", "probe": {"tcpSocket": {"port": "nope"}}}
        ]));
        let a = pod("a", "u1", "10.0.0.1");
        let (spec, errors) = apply_marker(&NodePodProbeSpec::default(), &m, &[&a]);
        assert_eq!(errors.len(), 1);
        assert_eq!(spec.pod_probes.len(), 1);
        let names: Vec<&str> = spec.pod_probes[0].probes.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["ppm#healthy", "ppm#web"]);
        assert_eq!(spec.pod_probes[0].ip, "10.0.0.1");
        assert_eq!(
            spec.pod_probes[0].probes[1].probe.http_get.as_ref().unwrap().port,
            IntOrString::Int(8080)
        );
        // Applying again changes nothing.
        let (again, _) = apply_marker(&spec, &m, &[&a]);
        assert_eq!(again, spec);
    }

    #[test]
    fn removes_only_the_markers_probes() {
        let m = marker(
            json!([{"name": "healthy", "containerName": "app", "probe": {"exec": {"command": ["check"]}}}]),
        );
        let a = pod("a", "u1", "10.0.0.1");
        let (mut spec, _) = apply_marker(&NodePodProbeSpec::default(), &m, &[&a]);
        spec.pod_probes[0].probes.push(ContainerProbe { name: "ppm2#x".into(), ..Default::default() });
        let removed = remove_marker(&spec, "ns", "ppm");
        assert_eq!(removed.pod_probes[0].probes.len(), 1);
        assert_eq!(removed.pod_probes[0].probes[0].name, "ppm2#x");
        let none = remove_marker(&removed, "ns", "ppm2");
        assert!(none.pod_probes.is_empty());
        assert_eq!(remove_marker(&spec, "other", "ppm"), spec);
    }
}
