//! The kubelet's own admission of a pod bound to its node. The scheduler checks host ports
//! too, but a pod created with `spec.nodeName` set skips the scheduler; the kubelet then runs
//! the same predicates against the pods it already runs and rejects the newcomer: phase
//! `Failed`, the predicate as the reason, "Pod was rejected: ..." as the message, and a
//! Warning Event. Controllers see the Failed pod and replace it (the StatefulSet "recreate
//! evicted" behaviour relies on it).

use k8s_openapi::api::core::v1::Pod;

use super::placement::host_ports_conflict;

/// Why the kubelet refused to run a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// `status.reason` and the Event's reason: the predicate's name.
    pub reason: String,
    /// `status.message` and the Event's note.
    pub message: String,
}

/// Whether the kubelet still has to admit `pod`: it was never started here (no container of
/// it has an id), is not terminal and is not being deleted. Pods already running when the
/// kubelet (re)starts are taken over, not admitted again.
pub fn needs_admission(pod: &Pod) -> bool {
    if pod.metadata.deletion_timestamp.is_some() {
        return false;
    }
    let Some(status) = &pod.status else { return true };
    if matches!(status.phase.as_deref(), Some("Failed" | "Succeeded")) {
        return false;
    }
    let started = status
        .container_statuses
        .iter()
        .chain(status.init_container_statuses.iter())
        .flatten()
        .any(|c| c.container_id.is_some());
    !started
}

/// Whether a pod holds node resources the kubelet admits against (not terminal).
pub fn is_active(pod: &Pod) -> bool {
    !matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Failed" | "Succeeded"))
}

/// The kubelet's verdict on `pod` given the active pods it already runs (`pod` itself is
/// skipped when listed): rejected when a host port it asks for is taken.
pub fn admit(pod: &Pod, running: &[&Pod]) -> Result<(), Rejection> {
    let others: Vec<&Pod> =
        running.iter().copied().filter(|p| p.metadata.uid != pod.metadata.uid && is_active(p)).collect();
    if host_ports_conflict(pod, &others) {
        return Err(Rejection {
            reason: "NodePorts".into(),
            message: "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the \
                      requested pod ports"
                .into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{
        api::core::v1::{Container, ContainerPort, ContainerStatus, PodSpec, PodStatus},
        apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
        jiff::Timestamp,
    };

    use super::*;

    fn pod(uid: &str, host_port: Option<i32>, phase: Option<&str>) -> Pod {
        Pod {
            metadata: ObjectMeta { uid: Some(uid.into()), name: Some(uid.into()), ..Default::default() },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "c".into(),
                    ports: host_port.map(|port| {
                        vec![ContainerPort {
                            container_port: port,
                            host_port: Some(port),
                            ..Default::default()
                        }]
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: phase.map(|phase| PodStatus { phase: Some(phase.into()), ..Default::default() }),
        }
    }

    #[test]
    fn host_ports_taken_by_active_pods_reject() {
        let running = pod("a", Some(21017), Some("Running"));
        let failed = pod("f", Some(21017), Some("Failed"));
        let cases = [
            ("port taken", pod("n", Some(21017), None), vec![&running], Some("NodePorts")),
            ("other port", pod("n", Some(8080), None), vec![&running], None),
            ("no host port", pod("n", None, None), vec![&running], None),
            ("holder failed", pod("n", Some(21017), None), vec![&failed], None),
            ("itself listed", pod("a", Some(21017), None), vec![&running], None),
            ("empty node", pod("n", Some(21017), None), vec![], None),
        ];
        for (name, candidate, others, expected) in cases {
            let verdict = admit(&candidate, &others);
            assert_eq!(verdict.as_ref().err().map(|r| r.reason.as_str()), expected, "{name}");
            if let Err(rejection) = verdict {
                assert!(rejection.message.starts_with("Pod was rejected: "), "{name}");
            }
        }
    }

    #[test]
    fn only_pods_never_started_here_are_admitted() {
        let mut started = pod("s", None, Some("Running"));
        if let Some(status) = started.status.as_mut() {
            status.container_statuses = Some(vec![ContainerStatus {
                name: "c".into(),
                container_id: Some("containerd://1".into()),
                ..Default::default()
            }]);
        }
        let mut deleted = pod("d", None, None);
        deleted.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
        let cases = [
            ("new", pod("n", None, None), true),
            ("pending", pod("p", None, Some("Pending")), true),
            ("running with containers", started, false),
            ("failed", pod("f", None, Some("Failed")), false),
            ("succeeded", pod("o", None, Some("Succeeded")), false),
            ("deleted", deleted, false),
        ];
        for (name, candidate, expected) in cases {
            assert_eq!(needs_admission(&candidate), expected, "{name}");
        }
    }
}
