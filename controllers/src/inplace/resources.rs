//! Container resources in an in-place update (vertical scaling): which resources may change in
//! place, the pod's QoS class (a change of it forbids an in-place update), the `pods/resize`
//! body, and whether the kubelet has applied a resize.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Container, ContainerStatus, PodSpec, ResourceRequirements},
    apimachinery::pkg::api::resource::Quantity,
};
use kruise_crds::quantity::Quantity as Parsed;
use serde_json::{Value, json};

/// The only resources that change in place: cpu and memory.
pub fn can_resize_in_place(resource: &str) -> bool {
    matches!(resource, "cpu" | "memory")
}

/// A pod's QoS class, as the kubelet computes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QosClass {
    /// Every container has equal cpu and memory requests and limits.
    Guaranteed,
    /// Something is requested or limited, but not guaranteed.
    Burstable,
    /// Nothing is requested or limited.
    BestEffort,
}

fn positive(quantity: &Quantity) -> Option<Parsed> {
    Parsed::parse(&quantity.0).ok().filter(|q| *q > Parsed::default())
}

/// The QoS class of a pod spec (`qos.GetPodQOS`): containers and init containers, cpu and
/// memory only, zero quantities ignored.
pub fn qos_class(spec: &PodSpec) -> QosClass {
    let mut requests: BTreeMap<&str, Parsed> = BTreeMap::new();
    let mut limits: BTreeMap<&str, Parsed> = BTreeMap::new();
    let mut guaranteed = true;
    let containers = spec.containers.iter().chain(spec.init_containers.iter().flatten());
    for container in containers {
        let resources = container.resources.as_ref();
        for (name, quantity) in resources.and_then(|r| r.requests.as_ref()).into_iter().flatten() {
            if let (true, Some(q)) = (can_resize_in_place(name), positive(quantity)) {
                let sum = requests.entry(name.as_str()).or_default();
                *sum = sum.saturating_add(q);
            }
        }
        let mut limited = 0;
        for (name, quantity) in resources.and_then(|r| r.limits.as_ref()).into_iter().flatten() {
            if let (true, Some(q)) = (can_resize_in_place(name), positive(quantity)) {
                limited += 1;
                let sum = limits.entry(name.as_str()).or_default();
                *sum = sum.saturating_add(q);
            }
        }
        if limited < 2 {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return QosClass::BestEffort;
    }
    if guaranteed
        && requests.len() == limits.len()
        && requests.iter().all(|(name, request)| limits.get(name) == Some(request))
    {
        return QosClass::Guaranteed;
    }
    QosClass::Burstable
}

/// Whether two resource lists hold the same quantities (semantically: `1` equals `1000m`;
/// a missing list equals an empty one).
pub fn same_resource_list(
    a: Option<&BTreeMap<String, Quantity>>,
    b: Option<&BTreeMap<String, Quantity>>,
) -> bool {
    let empty = BTreeMap::new();
    let (a, b) = (a.unwrap_or(&empty), b.unwrap_or(&empty));
    a.len() == b.len()
        && a.iter().all(|(name, quantity)| {
            b.get(name).is_some_and(|other| {
                quantity.0 == other.0 || Parsed::parse(&quantity.0).ok() == Parsed::parse(&other.0).ok()
            })
        })
}

fn same_quantity(a: Option<&Quantity>, b: &Quantity) -> bool {
    a.is_some_and(|a| {
        a.0 == b.0 || matches!((Parsed::parse(&a.0), Parsed::parse(&b.0)), (Ok(x), Ok(y)) if x == y)
    })
}

/// Whether the kubelet reports a container running with the resources its spec asks for.
pub fn container_resources_applied(container: &Container, status: Option<&ContainerStatus>) -> bool {
    let Some(reported) = status.and_then(|s| s.resources.as_ref()) else { return false };
    let wanted = container.resources.as_ref();
    same_resource_list(wanted.and_then(|r| r.limits.as_ref()), reported.limits.as_ref())
        && same_resource_list(wanted.and_then(|r| r.requests.as_ref()), reported.requests.as_ref())
}

/// The strategic-merge body for `pods/resize` that gives each container its expected cpu and
/// memory, listing only what differs from the pod's spec; `None` when nothing does.
pub fn resize_patch(
    containers: &[Container],
    expected: &BTreeMap<String, ResourceRequirements>,
) -> Option<Value> {
    let mut patched = Vec::new();
    for container in containers {
        let Some(wanted) = expected.get(&container.name) else { continue };
        let current = container.resources.as_ref();
        let changes = |wanted: Option<&BTreeMap<String, Quantity>>,
                       current: Option<&BTreeMap<String, Quantity>>| {
            wanted
                .into_iter()
                .flatten()
                .filter(|(name, quantity)| {
                    can_resize_in_place(name) && !same_quantity(current.and_then(|c| c.get(*name)), quantity)
                })
                .map(|(name, quantity)| (name.clone(), Value::String(quantity.0.clone())))
                .collect::<serde_json::Map<_, _>>()
        };
        let limits = changes(wanted.limits.as_ref(), current.and_then(|c| c.limits.as_ref()));
        let requests = changes(wanted.requests.as_ref(), current.and_then(|c| c.requests.as_ref()));
        if limits.is_empty() && requests.is_empty() {
            continue;
        }
        let mut resources = serde_json::Map::new();
        if !limits.is_empty() {
            resources.insert("limits".into(), Value::Object(limits));
        }
        if !requests.is_empty() {
            resources.insert("requests".into(), Value::Object(requests));
        }
        patched.push(json!({"name": container.name, "resources": resources}));
    }
    (!patched.is_empty()).then(|| json!({"spec": {"containers": patched}}))
}

/// Which of cpu and memory a resource change touches (limits or requests).
pub fn changed_resources(change: &ResourceRequirements) -> (bool, bool) {
    let touches = |name: &str| {
        change.limits.as_ref().is_some_and(|l| l.contains_key(name))
            || change.requests.as_ref().is_some_and(|r| r.contains_key(name))
    };
    (touches("cpu"), touches("memory"))
}

/// Whether a resize of these containers restarts one of them: a container whose
/// `resizePolicy` says `RestartContainer` for a resource that changes.
pub fn resize_restarts_a_container(
    containers: &[Container],
    changes: &BTreeMap<String, ResourceRequirements>,
) -> bool {
    containers.iter().any(|container| {
        let Some(change) = changes.get(&container.name) else { return false };
        let (cpu, memory) = changed_resources(change);
        container.resize_policy.iter().flatten().any(|policy| {
            policy.restart_policy == "RestartContainer"
                && ((policy.resource_name == "cpu" && cpu) || (policy.resource_name == "memory" && memory))
        })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::api::core::v1::ContainerResizePolicy;

    use super::*;

    fn list(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, Quantity>> {
        (!pairs.is_empty())
            .then(|| pairs.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect())
    }

    fn res(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> ResourceRequirements {
        ResourceRequirements { requests: list(requests), limits: list(limits), ..Default::default() }
    }

    fn container(name: &str, resources: ResourceRequirements) -> Container {
        Container { name: name.into(), resources: Some(resources), ..Default::default() }
    }

    fn spec(containers: Vec<Container>) -> PodSpec {
        PodSpec { containers, ..Default::default() }
    }

    #[test]
    fn qos_classes() {
        let g = [("cpu", "1"), ("memory", "1Gi")];
        let cases = [
            ("nothing", spec(vec![Container::default()]), QosClass::BestEffort),
            ("equal requests and limits", spec(vec![container("a", res(&g, &g))]), QosClass::Guaranteed),
            (
                "1 == 1000m",
                spec(vec![container("a", res(&[("cpu", "1000m"), ("memory", "1Gi")], &g))]),
                QosClass::Guaranteed,
            ),
            (
                "requests below limits",
                spec(vec![container("a", res(&[("cpu", "500m"), ("memory", "1Gi")], &g))]),
                QosClass::Burstable,
            ),
            (
                "only cpu limited",
                spec(vec![container("a", res(&[("cpu", "1")], &[("cpu", "1")]))]),
                QosClass::Burstable,
            ),
            (
                "one guaranteed, one best effort",
                spec(vec![container("a", res(&g, &g)), Container::default()]),
                QosClass::Burstable,
            ),
            (
                "zero quantities ignored",
                spec(vec![container("a", res(&[("cpu", "0")], &[("cpu", "0")]))]),
                QosClass::BestEffort,
            ),
            (
                "other resources ignored",
                spec(vec![container("a", res(&[("nvidia.com/gpu", "1")], &[]))]),
                QosClass::BestEffort,
            ),
        ];
        for (name, spec, expected) in cases {
            assert_eq!(qos_class(&spec), expected, "{name}");
        }
    }

    #[test]
    fn resize_bodies() {
        // Upstream TestGenerateResourcePatch, with our own data.
        let containers = vec![
            container(
                "main",
                res(&[("cpu", "100m"), ("memory", "128Mi")], &[("cpu", "200m"), ("memory", "256Mi")]),
            ),
            container("side", res(&[("cpu", "50m")], &[])),
        ];
        let expect = |pairs: Vec<(&str, ResourceRequirements)>| -> BTreeMap<String, ResourceRequirements> {
            pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
        };
        let cases = [
            (
                "both limit and request",
                expect(vec![("main", res(&[("cpu", "150m")], &[("cpu", "300m")]))]),
                Some(
                    json!({"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "300m"}, "requests": {"cpu": "150m"}}}]}}),
                ),
            ),
            (
                "only request",
                expect(vec![("main", res(&[("memory", "200Mi")], &[]))]),
                Some(
                    json!({"spec": {"containers": [{"name": "main", "resources": {"requests": {"memory": "200Mi"}}}]}}),
                ),
            ),
            (
                "same resources, written differently",
                expect(vec![("main", res(&[("cpu", "0.1")], &[("memory", "268435456")]))]),
                None,
            ),
            (
                "non-resizable resources",
                expect(vec![("main", res(&[("ephemeral-storage", "1Gi")], &[]))]),
                None,
            ),
            (
                "only the second container",
                expect(vec![("side", res(&[("cpu", "60m")], &[]))]),
                Some(
                    json!({"spec": {"containers": [{"name": "side", "resources": {"requests": {"cpu": "60m"}}}]}}),
                ),
            ),
            ("unknown container", expect(vec![("ghost", res(&[("cpu", "1")], &[]))]), None),
        ];
        for (name, expected_resources, expected) in cases {
            assert_eq!(resize_patch(&containers, &expected_resources), expected, "{name}");
        }
    }

    #[test]
    fn applied_resources() {
        // Upstream TestIsContainerUpdateCompleted, with our own data.
        let spec = container(
            "main",
            res(&[("cpu", "100m"), ("memory", "128Mi")], &[("cpu", "1"), ("memory", "1Gi")]),
        );
        let status = |r: Option<ResourceRequirements>| ContainerStatus {
            name: "main".into(),
            resources: r,
            ..Default::default()
        };
        let cases = [
            (
                "same",
                Some(status(Some(res(
                    &[("cpu", "100m"), ("memory", "128Mi")],
                    &[("cpu", "1000m"), ("memory", "1Gi")],
                )))),
                true,
            ),
            (
                "cpu limit differs",
                Some(status(Some(res(
                    &[("cpu", "100m"), ("memory", "128Mi")],
                    &[("cpu", "2"), ("memory", "1Gi")],
                )))),
                false,
            ),
            (
                "memory limit missing",
                Some(status(Some(res(&[("cpu", "100m"), ("memory", "128Mi")], &[("cpu", "1")])))),
                false,
            ),
            (
                "memory request differs",
                Some(status(Some(res(
                    &[("cpu", "100m"), ("memory", "256Mi")],
                    &[("cpu", "1"), ("memory", "1Gi")],
                )))),
                false,
            ),
            ("no resources reported", Some(status(None)), false),
            ("no status", None, false),
        ];
        for (name, status, expected) in cases {
            assert_eq!(container_resources_applied(&spec, status.as_ref()), expected, "{name}");
        }
        let empty = Container { name: "main".into(), ..Default::default() };
        assert!(container_resources_applied(&empty, Some(&status(Some(ResourceRequirements::default())))));
    }

    #[test]
    fn restart_by_resize_policy() {
        let policy = |cpu: &str, memory: &str| {
            Some(vec![
                ContainerResizePolicy { resource_name: "cpu".into(), restart_policy: cpu.into() },
                ContainerResizePolicy { resource_name: "memory".into(), restart_policy: memory.into() },
            ])
        };
        let with_policy = |p| Container { name: "main".into(), resize_policy: p, ..Default::default() };
        let changes = |r: ResourceRequirements| -> BTreeMap<String, ResourceRequirements> {
            [("main".to_string(), r)].into()
        };
        let cases = [
            ("no policy", with_policy(None), changes(res(&[("cpu", "1")], &[])), false),
            (
                "cpu restart, cpu changes",
                with_policy(policy("RestartContainer", "NotRequired")),
                changes(res(&[("cpu", "1")], &[])),
                true,
            ),
            (
                "cpu restart, memory changes",
                with_policy(policy("RestartContainer", "NotRequired")),
                changes(res(&[], &[("memory", "1Gi")])),
                false,
            ),
            (
                "memory restart, memory limit changes",
                with_policy(policy("NotRequired", "RestartContainer")),
                changes(res(&[], &[("memory", "1Gi")])),
                true,
            ),
            (
                "other container changes",
                with_policy(policy("RestartContainer", "RestartContainer")),
                [("x".to_string(), res(&[("cpu", "1")], &[]))].into(),
                false,
            ),
        ];
        for (name, container, changes, expected) in cases {
            assert_eq!(resize_restarts_a_container(&[container], &changes), expected, "{name}");
        }
    }
}
