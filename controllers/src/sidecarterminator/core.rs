//! What the sidecar terminator decides about one pod (upstream `sidecarterminator/utils.go`),
//! as pure functions of the pod.
//!
//! A sidecar is a container with env `KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true` (stopped
//! through a ContainerRecreateRequest), or with `KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE`
//! on a virtual-kubelet node (stopped by swapping its image in place, as a virtual kubelet has no
//! daemon). `KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE=true` marks a sidecar whose exit code must
//! not fail the pod: the pod's phase is set from the main containers first, then it is stopped.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};

/// Env that marks a sidecar the terminator stops once the main containers finished.
pub const TERMINATE_SIDECAR_ENV: &str = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT";
/// Env whose value is the image a sidecar on a virtual-kubelet node is swapped to.
pub const TERMINATE_SIDECAR_WITH_IMAGE_ENV: &str = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE";
/// Env that marks a sidecar whose exit code does not decide the pod's phase.
pub const IGNORE_EXIT_CODE_ENV: &str = "KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE";

fn env_value<'a>(container: &'a Container, name: &str) -> Option<&'a str> {
    container.env.iter().flatten().find(|env| env.name == name).and_then(|env| env.value.as_deref())
}

fn is_normal_sidecar(container: &Container) -> bool {
    env_value(container, TERMINATE_SIDECAR_ENV).is_some_and(|value| value.eq_ignore_ascii_case("true"))
}

fn is_ignore_exit_code_sidecar(container: &Container) -> bool {
    is_normal_sidecar(container)
        && env_value(container, IGNORE_EXIT_CODE_ENV).is_some_and(|value| value.eq_ignore_ascii_case("true"))
}

fn in_place_image(container: &Container) -> Option<&str> {
    env_value(container, TERMINATE_SIDECAR_WITH_IMAGE_ENV).filter(|value| !value.is_empty())
}

fn is_sidecar(container: &Container) -> bool {
    is_normal_sidecar(container) || in_place_image(container).is_some()
}

fn containers(pod: &Pod) -> &[Container] {
    pod.spec.as_ref().map_or(&[], |spec| spec.containers.as_slice())
}

fn statuses(pod: &Pod) -> &[ContainerStatus] {
    pod.status.as_ref().and_then(|status| status.container_statuses.as_deref()).unwrap_or(&[])
}

/// The main containers' and the sidecars' names.
pub fn main_and_sidecars(pod: &Pod) -> (BTreeSet<String>, BTreeSet<String>) {
    containers(pod)
        .iter()
        .map(|c| c.name.clone())
        .partition(|name| !containers(pod).iter().any(|c| &c.name == name && is_sidecar(c)))
}

/// Whether every container in `names` has terminated (and the kubelet reported every
/// container: a status list shorter than the spec is not conclusive).
pub fn containers_completed(pod: &Pod, names: &BTreeSet<String>) -> bool {
    containers(pod).len() == statuses(pod).len()
        && statuses(pod)
            .iter()
            .filter(|status| names.contains(&status.name))
            .all(|status| status.state.as_ref().is_some_and(|state| state.terminated.is_some()))
}

/// Whether every container in `names` has terminated with exit code 0.
pub fn containers_succeeded(pod: &Pod, names: &BTreeSet<String>) -> bool {
    containers(pod).len() == statuses(pod).len()
        && statuses(pod).iter().filter(|status| names.contains(&status.name)).all(|status| {
            status
                .state
                .as_ref()
                .and_then(|state| state.terminated.as_ref())
                .is_some_and(|t| t.exit_code == 0)
        })
}

/// Whether the terminator has work on the pod: not being deleted, scheduled and started, not
/// `restartPolicy: Always`, with sidecars not all stopped, and its main containers finished
/// (`Never`) or succeeded (`OnFailure`, where a failed main container is restarted anyway).
pub fn is_interesting_pod(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
    let restart_policy = pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref()).unwrap_or("Always");
    if pod.metadata.deletion_timestamp.is_some() || phase == "Pending" || restart_policy == "Always" {
        return false;
    }
    let (main, sidecars) = main_and_sidecars(pod);
    if sidecars.is_empty() || containers_completed(pod, &sidecars) {
        return false;
    }
    match restart_policy {
        "Never" => containers_completed(pod, &main),
        "OnFailure" => containers_succeeded(pod, &main),
        _ => false,
    }
}

/// The sidecars by how they are stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SidecarGroups {
    /// Stopped through a ContainerRecreateRequest once the main containers finished.
    pub normal: BTreeSet<String>,
    /// Stopped the same way, after the pod's phase was set from the main containers.
    pub ignore_exit_code: BTreeSet<String>,
    /// On a virtual-kubelet node: stopped by swapping to the image their env names.
    pub in_place: BTreeSet<String>,
}

/// Groups the pod's sidecars; `virtual_kubelet` is whether its node is one.
pub fn sidecar_groups(pod: &Pod, virtual_kubelet: bool) -> SidecarGroups {
    let mut groups = SidecarGroups::default();
    for container in containers(pod) {
        let name = container.name.clone();
        if virtual_kubelet {
            if in_place_image(container).is_some() {
                groups.in_place.insert(name);
            }
        } else if is_ignore_exit_code_sidecar(container) {
            groups.ignore_exit_code.insert(name);
        } else if is_normal_sidecar(container) {
            groups.normal.insert(name);
        }
    }
    groups
}

/// The sidecars in `names` still running (no terminated state).
pub fn uncompleted(pod: &Pod, names: &BTreeSet<String>) -> BTreeSet<String> {
    let mut left = names.clone();
    for status in statuses(pod) {
        if status.state.as_ref().is_some_and(|state| state.terminated.is_some()) {
            left.remove(&status.name);
        }
    }
    left
}

/// The phase a pod whose sidecars' exit codes are ignored ends in: `Succeeded` when every main
/// container exited 0, else `Failed`. `None` when the pod already ended.
pub fn terminated_phase(pod: &Pod) -> Option<&'static str> {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default();
    if phase == "Succeeded" || phase == "Failed" {
        return None;
    }
    let (main, _) = main_and_sidecars(pod);
    Some(if containers_succeeded(pod, &main) { "Succeeded" } else { "Failed" })
}

/// The pod's containers in `names` swapped to the image their env names; `None` when none
/// changes.
pub fn in_place_terminated(pod: &Pod, names: &BTreeSet<String>) -> Option<Pod> {
    let mut updated = pod.clone();
    let mut changed = false;
    for container in updated.spec.as_mut().map(|s| s.containers.iter_mut()).into_iter().flatten() {
        if !names.contains(&container.name) {
            continue;
        }
        let Some(image) = in_place_image(container).map(str::to_string) else { continue };
        if container.image.as_deref() != Some(image.as_str()) {
            container.image = Some(image);
            changed = true;
        }
    }
    changed.then_some(updated)
}

/// The name of the ContainerRecreateRequest that stops a pod's sidecars (one per pod UID).
pub fn crr_name(pod: &Pod) -> String {
    format!("sidecar-termination-{}", pod.metadata.uid.as_deref().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn sidecar_env(ignore: bool) -> Value {
        let mut env = vec![json!({"name": TERMINATE_SIDECAR_ENV, "value": "true"})];
        if ignore {
            env.push(json!({"name": IGNORE_EXIT_CODE_ENV, "value": "true"}));
        }
        json!(env)
    }

    /// A pod with a main and a sidecar container: `main` and `sidecar` are their states
    /// (`None` running, `Some(code)` terminated with it).
    fn pod(restart_policy: &str, phase: &str, main: Option<i32>, sidecar: Option<i32>, ignore: bool) -> Pod {
        let state = |code: Option<i32>| match code {
            None => json!({"running": {}}),
            Some(code) => json!({"terminated": {"exitCode": code}}),
        };
        serde_json::from_value(json!({
            "metadata": {"name": "job-1", "namespace": "ns", "uid": "u-1"},
            "spec": {"restartPolicy": restart_policy, "nodeName": "node-1", "containers": [
                {"name": "main", "image": "busybox"},
                {"name": "sidecar", "image": "nginx", "env": sidecar_env(ignore)},
            ]},
            "status": {"phase": phase, "containerStatuses": [
                {"name": "main", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0, "state": state(main)},
                {"name": "sidecar", "image": "nginx", "imageID": "", "ready": true, "restartCount": 0, "state": state(sidecar)},
            ]},
        }))
        .expect("pod")
    }

    #[test]
    fn interesting_pods() {
        let cases = [
            ("never, main done", pod("Never", "Running", Some(0), None, false), true),
            ("never, main failed", pod("Never", "Running", Some(1), None, false), true),
            ("never, main running", pod("Never", "Running", None, None, false), false),
            ("on failure, main succeeded", pod("OnFailure", "Running", Some(0), None, false), true),
            ("on failure, main failed (restarts)", pod("OnFailure", "Running", Some(1), None, false), false),
            ("always", pod("Always", "Running", Some(0), None, false), false),
            ("pending", pod("Never", "Pending", Some(0), None, false), false),
            ("sidecar already stopped", pod("Never", "Running", Some(0), Some(0), false), false),
        ];
        for (name, pod, expected) in cases {
            assert_eq!(is_interesting_pod(&pod), expected, "{name}");
        }
        let mut deleting = pod("Never", "Running", Some(0), None, false);
        deleting.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ));
        assert!(!is_interesting_pod(&deleting), "being deleted");
        let mut no_sidecar = pod("Never", "Running", Some(0), None, false);
        no_sidecar.spec.as_mut().unwrap().containers[1].env = None;
        assert!(!is_interesting_pod(&no_sidecar), "no sidecar");
    }

    #[test]
    fn groups_by_how_sidecars_stop() {
        let normal = pod("Never", "Running", Some(0), None, false);
        assert_eq!(sidecar_groups(&normal, false).normal, BTreeSet::from(["sidecar".to_string()]));
        let ignore = pod("Never", "Running", Some(0), None, true);
        let groups = sidecar_groups(&ignore, false);
        assert!(groups.normal.is_empty());
        assert_eq!(groups.ignore_exit_code, BTreeSet::from(["sidecar".to_string()]));
        // On a virtual kubelet only the image-swap sidecars are handled.
        assert_eq!(sidecar_groups(&normal, true), SidecarGroups::default());
        let mut swap = normal.clone();
        swap.spec.as_mut().unwrap().containers[1].env = Some(
            serde_json::from_value(json!([{"name": TERMINATE_SIDECAR_WITH_IMAGE_ENV, "value": "pause:3.9"}]))
                .unwrap(),
        );
        assert_eq!(sidecar_groups(&swap, true).in_place, BTreeSet::from(["sidecar".to_string()]));
        let swapped = in_place_terminated(&swap, &sidecar_groups(&swap, true).in_place).expect("changes");
        assert_eq!(swapped.spec.unwrap().containers[1].image.as_deref(), Some("pause:3.9"));
    }

    #[test]
    fn phase_follows_the_main_containers() {
        assert_eq!(terminated_phase(&pod("Never", "Running", Some(0), None, true)), Some("Succeeded"));
        assert_eq!(terminated_phase(&pod("Never", "Running", Some(2), None, true)), Some("Failed"));
        assert_eq!(terminated_phase(&pod("Never", "Succeeded", Some(0), Some(0), true)), None);
    }

    #[test]
    fn incomplete_status_lists_are_not_conclusive() {
        let mut partial = pod("Never", "Running", Some(0), None, false);
        partial.status.as_mut().unwrap().container_statuses.as_mut().unwrap().pop();
        assert!(!containers_completed(&partial, &BTreeSet::from(["main".to_string()])));
        assert!(!is_interesting_pod(&partial));
        assert_eq!(crr_name(&partial), "sidecar-termination-u-1");
    }
}
