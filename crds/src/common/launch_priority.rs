//! Container launch priority (upstream `apis/apps/pub/launch_priority.go` and
//! `pkg/util/containerlaunchpriority`): the containers of a pod start in priority order, highest
//! first. The pod webhook gives every container an env var whose value comes from a key of the
//! ConfigMap `<pod>-barrier` (`p_<priority>`); a kubelet does not start a container whose env
//! refers to a missing key (`CreateContainerConfigError`), so the manager releases the
//! priorities one by one, each once every container of a higher priority is ready.
//!
//! Everything here is pure: the webhook's decision ([`launch_priorities`]), the env var
//! ([`barrier_env`]) and the manager's next step ([`next_release`]).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{ConfigMapKeySelector, Container, EnvVar, EnvVarSource, Pod};

/// Env var a user sets on containers to give them a priority (an integer; higher starts first).
pub const CONTAINER_LAUNCH_PRIORITY_ENV: &str = "KRUISE_CONTAINER_PRIORITY";
/// Env var the webhook injects; its `configMapKeyRef` names the barrier ConfigMap and key.
pub const CONTAINER_LAUNCH_BARRIER_ENV: &str = "KRUISE_CONTAINER_BARRIER";
/// Pod annotation asking that containers start in the order they are listed.
pub const CONTAINER_LAUNCH_PRIORITY_KEY: &str = "apps.kruise.io/container-launch-priority";
/// The value of [`CONTAINER_LAUNCH_PRIORITY_KEY`] for listing order.
pub const CONTAINER_LAUNCH_ORDERED: &str = "Ordered";
/// Pod annotation the manager sets once every priority is released.
pub const CONTAINER_LAUNCH_PRIORITY_COMPLETED_KEY: &str =
    "apps.kruise.io/container-launch-priority-completed";

/// The barrier ConfigMap of a pod.
pub fn barrier_name(pod_name: &str) -> String {
    format!("{pod_name}-barrier")
}

/// The barrier key of a priority (`p_<n>`).
pub fn barrier_key(priority: i64) -> String {
    format!("p_{priority}")
}

/// The barrier env var the webhook gives a container of `pod_name` with `priority`.
pub fn barrier_env(priority: i64, pod_name: &str) -> EnvVar {
    EnvVar {
        name: CONTAINER_LAUNCH_BARRIER_ENV.into(),
        value: None,
        value_from: Some(EnvVarSource {
            config_map_key_ref: Some(ConfigMapKeySelector {
                name: barrier_name(pod_name),
                key: barrier_key(priority),
                optional: None,
            }),
            ..Default::default()
        }),
    }
}

/// A container's launch priority, from its barrier env var (`p_<n>`; an unreadable number
/// counts as 0, as upstream); `None` when it has no barrier.
pub fn container_priority(container: &Container) -> Option<i64> {
    let env = container.env.iter().flatten().find(|e| e.name == CONTAINER_LAUNCH_BARRIER_ENV)?;
    let key = env.value_from.as_ref().and_then(|v| v.config_map_key_ref.as_ref()).map(|r| r.key.as_str());
    Some(key.and_then(|k| k.get(2..)).and_then(|n| n.parse().ok()).unwrap_or(0))
}

/// Why the webhook refuses a pod.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchPriorityError {
    /// A `KRUISE_CONTAINER_PRIORITY` value is not an integer.
    #[error("container {container}: {CONTAINER_LAUNCH_PRIORITY_ENV} {value:?} is not an integer")]
    NotAnInteger {
        /// The container.
        container: String,
        /// The value given.
        value: String,
    },
}

/// The priority of each container (in spec order) the webhook injects on CREATE, or `None` when
/// the pod needs none: with one container; with the `Ordered` annotation, 0, -1, -2, ... in
/// listing order; otherwise from `KRUISE_CONTAINER_PRIORITY` (0 when unset), only when some
/// priorities differ.
pub fn launch_priorities(pod: &Pod) -> Result<Option<Vec<i64>>, LaunchPriorityError> {
    let Some(spec) = pod.spec.as_ref() else { return Ok(None) };
    if spec.containers.len() <= 1 {
        return Ok(None);
    }
    let ordered = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CONTAINER_LAUNCH_PRIORITY_KEY))
        .is_some_and(|v| v == CONTAINER_LAUNCH_ORDERED);
    if ordered {
        return Ok(Some((0..spec.containers.len()).map(|i| -(i as i64)).collect()));
    }
    let mut priorities = Vec::with_capacity(spec.containers.len());
    for container in &spec.containers {
        let mut priority = 0;
        for env in container.env.iter().flatten().filter(|e| e.name == CONTAINER_LAUNCH_PRIORITY_ENV) {
            let value = env.value.clone().unwrap_or_default();
            priority = value.parse::<i64>().map_err(|_| LaunchPriorityError::NotAnInteger {
                container: container.name.clone(),
                value: value.clone(),
            })?;
        }
        priorities.push(priority);
    }
    let all_equal = priorities.iter().all(|p| *p == priorities[0]);
    Ok((!all_equal).then_some(priorities))
}

/// What the manager does next for a pod whose containers wait on a barrier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Release {
    /// Add this priority's key to the barrier; `completes` when it is the last one.
    Add {
        /// The priority to release.
        priority: i64,
        /// Whether the pod is done once it is released.
        completes: bool,
    },
    /// Every priority is released: mark the pod completed.
    Complete,
    /// Wait for the released containers to become ready.
    Wait,
}

/// The priorities of the containers not ready yet, ascending (upstream `findNextPriorities`).
pub fn pending_priorities(pod: &Pod) -> Vec<i64> {
    let ready: BTreeSet<&str> = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .filter(|s| s.ready)
        .map(|s| s.name.as_str())
        .collect();
    let mut priorities: Vec<i64> = pod
        .spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .filter(|c| !ready.contains(c.name.as_str()))
        .filter_map(container_priority)
        .collect();
    priorities.sort_unstable();
    priorities
}

/// Whether the manager still has to release priorities for a pod (upstream `shouldEnqueue`,
/// before it reads the barrier): not marked completed, its containers not all ready, and some
/// container not ready waits on a barrier.
pub fn awaiting_release(pod: &Pod) -> bool {
    let completed = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CONTAINER_LAUNCH_PRIORITY_COMPLETED_KEY))
        .is_some_and(|v| v == "true");
    let containers_ready = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "ContainersReady" && c.status == "True");
    !completed && !containers_ready && !pending_priorities(pod).is_empty()
}

/// The next step for a pod given the keys its barrier holds (upstream `handle`): release the
/// highest priority still pending, and complete when the lowest is released.
pub fn next_release(pod: &Pod, released: &BTreeSet<String>) -> Release {
    let pending = pending_priorities(pod);
    let (Some(lowest), Some(highest)) = (pending.first(), pending.last()) else {
        return Release::Complete;
    };
    if released.contains(&barrier_key(*lowest)) {
        return Release::Complete;
    }
    if released.contains(&barrier_key(*highest)) {
        return Release::Wait;
    }
    Release::Add { priority: *highest, completes: lowest == highest }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::{Value, json};

    use super::*;

    fn pod(annotations: Value, containers: Value, ready: &[&str]) -> Pod {
        let statuses: Vec<Value> = containers
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap();
                json!({"name": name, "ready": ready.contains(&name), "restartCount": 0, "image": "i", "imageID": ""})
            })
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": "web-0", "annotations": annotations},
            "spec": {"containers": containers},
            "status": {"containerStatuses": statuses}
        }))
        .unwrap()
    }

    fn with_priority(name: &str, priority: &str) -> Value {
        json!({"name": name, "env": [{"name": CONTAINER_LAUNCH_PRIORITY_ENV, "value": priority}, {"name": "x", "value": "y"}]})
    }

    /// The priorities the webhook should write, or its refusal.
    type WebhookOutcome = Result<Option<Vec<i64>>, LaunchPriorityError>;

    #[test]
    fn webhook_priorities() {
        let plain = |name: &str| json!({"name": name});
        let cases: [(&str, Pod, WebhookOutcome); 7] = [
            ("one container", pod(json!({}), json!([with_priority("a", "5")]), &[]), Ok(None)),
            ("no priorities", pod(json!({}), json!([plain("a"), plain("b")]), &[]), Ok(None)),
            (
                "all equal",
                pod(json!({}), json!([with_priority("a", "3"), with_priority("b", "3")]), &[]),
                Ok(None),
            ),
            (
                "env priorities",
                pod(json!({}), json!([plain("main"), with_priority("c2", "10")]), &[]),
                Ok(Some(vec![0, 10])),
            ),
            (
                "ordered annotation wins",
                pod(
                    json!({CONTAINER_LAUNCH_PRIORITY_KEY: "Ordered"}),
                    json!([plain("a"), with_priority("b", "10"), plain("c")]),
                    &[],
                ),
                Ok(Some(vec![0, -1, -2])),
            ),
            (
                "other annotation value",
                pod(json!({CONTAINER_LAUNCH_PRIORITY_KEY: "Random"}), json!([plain("a"), plain("b")]), &[]),
                Ok(None),
            ),
            (
                "not an integer",
                pod(json!({}), json!([plain("a"), with_priority("b", "high")]), &[]),
                Err(LaunchPriorityError::NotAnInteger { container: "b".into(), value: "high".into() }),
            ),
        ];
        for (name, pod, expected) in cases {
            assert_eq!(launch_priorities(&pod), expected, "{name}");
        }
    }

    #[test]
    fn barrier_env_round_trips() {
        let env = barrier_env(-2, "web-0");
        let container = Container { name: "a".into(), env: Some(vec![env.clone()]), ..Default::default() };
        assert_eq!(container_priority(&container), Some(-2));
        assert_eq!(
            serde_json::to_value(&env).unwrap(),
            json!({"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {"name": "web-0-barrier", "key": "p_-2"}}})
        );
        assert_eq!(container_priority(&Container::default()), None);
    }

    #[test]
    fn pods_awaiting_release() {
        let waiting = json!([{"name": "a", "env": [serde_json::to_value(barrier_env(0, "web-0")).unwrap()]}, {"name": "b"}]);
        let mut completed =
            pod(json!({CONTAINER_LAUNCH_PRIORITY_COMPLETED_KEY: "true"}), waiting.clone(), &[]);
        let mut containers_ready = pod(json!({}), waiting.clone(), &[]);
        if let Some(status) = containers_ready.status.as_mut() {
            status.conditions = Some(vec![
                serde_json::from_value(json!({"type": "ContainersReady", "status": "True"})).unwrap(),
            ]);
        }
        let cases = [
            ("barrier pending", pod(json!({}), waiting.clone(), &[]), true),
            ("barrier container ready", pod(json!({}), waiting.clone(), &["a"]), false),
            ("no barriers", pod(json!({}), json!([{"name": "a"}, {"name": "b"}]), &[]), false),
            ("completed", std::mem::take(&mut completed), false),
            ("containers ready", std::mem::take(&mut containers_ready), false),
        ];
        for (name, pod, expected) in cases {
            assert_eq!(awaiting_release(&pod), expected, "{name}");
        }
    }

    #[test]
    fn releases_follow_readiness() {
        let barrier = |priority: i64, name: &str| json!({"name": name, "env": [serde_json::to_value(barrier_env(priority, "web-0")).unwrap()]});
        let containers = json!([barrier(0, "main"), barrier(10, "c2"), barrier(10, "c3")]);
        let keys = |keys: &[&str]| keys.iter().map(|k| k.to_string()).collect::<BTreeSet<_>>();
        let cases = [
            ("nothing released", &[][..], keys(&[]), Release::Add { priority: 10, completes: false }),
            ("highest released, not ready", &[][..], keys(&["p_10"]), Release::Wait),
            ("one of two ready", &["c2"][..], keys(&["p_10"]), Release::Wait),
            (
                "highest ready",
                &["c2", "c3"][..],
                keys(&["p_10"]),
                Release::Add { priority: 0, completes: true },
            ),
            ("all released", &["c2", "c3"][..], keys(&["p_10", "p_0"]), Release::Complete),
            ("all ready", &["main", "c2", "c3"][..], keys(&[]), Release::Complete),
        ];
        for (name, ready, released, expected) in cases {
            let pod = pod(json!({}), containers.clone(), ready);
            assert_eq!(next_release(&pod, &released), expected, "{name}");
        }
    }
}
