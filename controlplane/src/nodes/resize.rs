//! In-place resize decisions of the simulated kubelet, as the kubelet's allocation manager
//! makes them (v1.34): a resize is accepted (allocated) only when the pod's requests with the
//! new resources fit the node's allocatable; otherwise the pod keeps running with what it was
//! allocated and reports `PodResizePending` with reason `Infeasible` and the kubelet's message.
//! Pure functions: the pod worker keeps the allocations and applies the decisions.

use k8s_openapi::{
    api::core::v1::{Container, PodCondition, PodSpec},
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::Timestamp,
};
use kruise_machinery::quantity::Quantity;

/// The condition a resize that cannot be allocated sets.
pub const PENDING: &str = "PodResizePending";
/// The condition a resize being applied sets.
pub const IN_PROGRESS: &str = "PodResizeInProgress";
/// `PodResizePending` reason: the node can never fit it.
pub const INFEASIBLE: &str = "Infeasible";

/// The requests of one container for `resource`, in milli-units (bytes x 1000 for memory).
fn request(container: &Container, resource: &str) -> i128 {
    container
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|requests| requests.get(resource))
        .and_then(|q| Quantity::parse(&q.0).ok())
        .map(|q| q.millis())
        .unwrap_or(0)
}

/// A pod's effective request of `resource` in milli-units, as `resource.GetResourceRequest`:
/// the app containers and sidecars together, or the largest regular init container with the
/// sidecars started before it, whichever is more, plus the pod overhead.
pub fn pod_request(spec: &PodSpec, resource: &str) -> i128 {
    let mut sidecars = 0i128;
    let mut init_peak = 0i128;
    for init in spec.init_containers.iter().flatten() {
        if init.restart_policy.as_deref() == Some("Always") {
            sidecars += request(init, resource);
            init_peak = init_peak.max(sidecars);
        } else {
            init_peak = init_peak.max(sidecars + request(init, resource));
        }
    }
    let apps: i128 = spec.containers.iter().map(|c| request(c, resource)).sum();
    let overhead = spec
        .overhead
        .as_ref()
        .and_then(|o| o.get(resource))
        .and_then(|q| Quantity::parse(&q.0).ok())
        .map(|q| q.millis())
        .unwrap_or(0);
    (apps + sidecars).max(init_peak) + overhead
}

/// Milli-units of a capacity quantity (`"8"`, `"32Gi"`); unparsable means unlimited.
fn capacity_millis(text: &str) -> i128 {
    Quantity::parse(text).map(|q| q.millis()).unwrap_or(i128::MAX)
}

/// Whether a pod with the desired resources fits a node of this allocatable cpu and memory:
/// `Err` carries the kubelet's message (memory is named first when both are short; cpu in
/// millicores, memory in bytes).
pub fn check_fit(desired: &PodSpec, cpu: &str, memory: &str) -> Result<(), String> {
    let (cpu_requested, cpu_available) = (pod_request(desired, "cpu"), capacity_millis(cpu));
    let (memory_requested, memory_available) = (pod_request(desired, "memory"), capacity_millis(memory));
    // Value() of a memory quantity rounds up to whole bytes.
    let bytes = |millis: i128| if millis == i128::MAX { millis } else { (millis + 999).div_euclid(1000) };
    if memory_requested > memory_available {
        return Err(format!(
            "Node didn't have enough capacity: memory, requested: {}, capacity: {}",
            bytes(memory_requested),
            bytes(memory_available)
        ));
    }
    if cpu_requested > cpu_available {
        return Err(format!(
            "Node didn't have enough capacity: cpu, requested: {cpu_requested}, capacity: {cpu_available}"
        ));
    }
    Ok(())
}

/// A resize condition (`PodResizePending` or `PodResizeInProgress`) as the kubelet's status
/// manager sets it: status True, the transition time kept while the reason stays the same, the
/// probe time of this evaluation, and the pod generation it answers.
pub fn condition(
    kind: &str,
    previous: Option<&PodCondition>,
    reason: Option<&str>,
    message: Option<String>,
    generation: Option<i64>,
    now: Timestamp,
) -> PodCondition {
    let transition = match previous {
        Some(previous) if previous.reason.as_deref() == reason => previous.last_transition_time.clone(),
        _ => Some(Time(now)),
    };
    PodCondition {
        type_: kind.to_string(),
        status: "True".into(),
        reason: reason.map(str::to_string),
        message,
        last_probe_time: Some(Time(now)),
        last_transition_time: transition,
        observed_generation: generation,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::{
        api::core::v1::ResourceRequirements, apimachinery::pkg::api::resource::Quantity as K8sQuantity,
    };

    use super::*;

    fn container(name: &str, cpu: &str, memory: &str, sidecar: bool) -> Container {
        Container {
            name: name.into(),
            restart_policy: sidecar.then(|| "Always".to_string()),
            resources: Some(ResourceRequirements {
                requests: Some(BTreeMap::from([
                    ("cpu".to_string(), K8sQuantity(cpu.into())),
                    ("memory".to_string(), K8sQuantity(memory.into())),
                ])),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn pod(apps: Vec<Container>, init: Vec<Container>) -> PodSpec {
        PodSpec { containers: apps, init_containers: Some(init), ..Default::default() }
    }

    #[test]
    fn pod_requests_count_sidecars_and_the_largest_init_container() {
        let spec = pod(
            vec![container("a", "100m", "100Mi", false), container("b", "200m", "0", false)],
            vec![container("big-init", "2", "1Gi", false), container("proxy", "50m", "10Mi", true)],
        );
        assert_eq!(pod_request(&spec, "cpu"), 2000, "the init container needs more than the apps");
        let spec = pod(
            vec![container("a", "1", "100Mi", false)],
            vec![container("proxy", "50m", "10Mi", true), container("init", "500m", "1Mi", false)],
        );
        assert_eq!(pod_request(&spec, "cpu"), 1050, "apps plus sidecars");
        assert_eq!(pod_request(&spec, "memory"), 110 * 1024 * 1024 * 1000);
    }

    #[test]
    fn fit_against_allocatable_with_the_kubelet_messages() {
        let cases = [
            ("100m", "100Mi", None),
            ("8", "32Gi", None),
            (
                "100",
                "1000Gi",
                Some(
                    "Node didn't have enough capacity: memory, requested: 1073741824000, capacity: 34359738368",
                ),
            ),
            ("100", "1Gi", Some("Node didn't have enough capacity: cpu, requested: 100000, capacity: 8000")),
            ("8001m", "1Gi", Some("Node didn't have enough capacity: cpu, requested: 8001, capacity: 8000")),
        ];
        for (cpu, memory, expected) in cases {
            let spec = pod(vec![container("main", cpu, memory, false)], vec![]);
            assert_eq!(check_fit(&spec, "8", "32Gi").err().as_deref(), expected, "{cpu} {memory}");
        }
    }

    #[test]
    fn conditions_keep_their_transition_while_the_reason_holds() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let t1: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let first = condition(PENDING, None, Some(INFEASIBLE), Some("m".into()), Some(2), t0);
        assert_eq!((first.status.as_str(), first.observed_generation), ("True", Some(2)));
        let again = condition(PENDING, Some(&first), Some(INFEASIBLE), Some("m".into()), Some(3), t1);
        assert_eq!(again.last_transition_time, Some(Time(t0)));
        assert_eq!(again.last_probe_time, Some(Time(t1)));
        let other = condition(PENDING, Some(&first), Some("Deferred"), None, Some(3), t1);
        assert_eq!(other.last_transition_time, Some(Time(t1)));
    }
}
