//! `resourcesPolicy` of a sidecar container (upstream `applyResourcesPolicy`): at pod creation
//! the sidecar's resources are computed from the pod's own containers, so a sidecar sized
//! "half the app's CPU, at least 50m" follows each workload without one SidecarSet per size.
//!
//! The target containers are the pod's containers and native sidecars (init containers with
//! `restartPolicy: Always`) whose names match the regex, Kruise sidecars excluded. Their values
//! are combined by sum or max; a limit some target lacks is unlimited, so the sidecar gets no
//! limit for that resource; a missing request counts as zero. Pure: no I/O.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::{Container, Pod, ResourceRequirements},
    apimachinery::pkg::api::resource::Quantity as KubeQuantity,
};
use kruise_crds::{
    apps::v1beta1::{ResourcesPolicy, TargetContainersModeType},
    quantity::Quantity,
    validation::parse_sidecar_resource_expr,
};
use regex::Regex;

/// Why a resources policy cannot be applied to a pod; the pod is refused with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourcesPolicyError {
    /// `targetContainersNameRegex` does not compile.
    #[error("invalid targetContainersNameRegex {regex:?}: {reason}")]
    BadRegex {
        /// The pattern.
        regex: String,
        /// The compiler's message.
        reason: String,
    },
    /// No container of the pod matches the pattern.
    #[error("no containers match the regex pattern {0:?}")]
    NoTarget(String),
    /// An expression does not evaluate (syntax, negative result, ...).
    #[error("failed to evaluate {field} expression {expr:?}: {reason}")]
    Expression {
        /// `limits.cpu`, `requests.memory`, ...
        field: &'static str,
        /// The expression.
        expr: String,
        /// Why.
        reason: String,
    },
}

/// Which resource an expression computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resource {
    Cpu,
    Memory,
}

impl Resource {
    fn key(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Memory => "memory",
        }
    }
}

/// The combined value of one resource over the targets: `None` is unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Combined {
    limit: Option<Quantity>,
    request: Quantity,
}

/// The pod's containers a policy reads: native sidecars then containers, matching `pattern`,
/// not named like a Kruise sidecar.
fn target_containers<'a>(
    pod: &'a Pod,
    pattern: &Regex,
    kruise_sidecars: &BTreeSet<String>,
) -> Vec<&'a Container> {
    let Some(spec) = pod.spec.as_ref() else {
        return Vec::new();
    };
    let native = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|container| container.restart_policy.as_deref() == Some("Always"));
    native
        .chain(spec.containers.iter())
        .filter(|container| !kruise_sidecars.contains(&container.name) && pattern.is_match(&container.name))
        .collect()
}

fn quantity_of(list: Option<&BTreeMap<String, KubeQuantity>>, resource: Resource) -> Option<Quantity> {
    list.and_then(|values| values.get(resource.key())).and_then(|value| Quantity::parse(&value.0).ok())
}

/// Sum or max of one resource over the targets.
fn combine(targets: &[&Container], resource: Resource, mode: &TargetContainersModeType) -> Combined {
    let fold = |values: &mut dyn Iterator<Item = Quantity>| -> Quantity {
        match mode {
            TargetContainersModeType::Max => values.max().unwrap_or_default(),
            _ => values.fold(Quantity::default(), Quantity::saturating_add),
        }
    };
    let limits: Option<Vec<Quantity>> = targets
        .iter()
        .map(|container| quantity_of(container.resources.as_ref().and_then(|r| r.limits.as_ref()), resource))
        .collect();
    let request = fold(&mut targets.iter().filter_map(|container| {
        quantity_of(container.resources.as_ref().and_then(|r| r.requests.as_ref()), resource)
    }));
    Combined { limit: limits.map(|values| fold(&mut values.into_iter())), request }
}

/// How a computed quantity is written: CPU in cores or millicores, memory in the largest
/// binary unit that divides it (`200Mi`), else in bytes.
fn format_quantity(value: Quantity, resource: Resource) -> String {
    if resource == Resource::Memory && value.millis() % 1000 == 0 && value.units() > 0 {
        let units = value.units();
        for (suffix, size) in [("Ti", 1_i128 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
            if units % size == 0 {
                return format!("{}{suffix}", units / size);
            }
        }
    }
    value.to_string()
}

fn evaluate(
    expr: &str,
    field: &'static str,
    resource: Resource,
    value: Quantity,
) -> Result<Quantity, ResourcesPolicyError> {
    let failed = |reason: String| ResourcesPolicyError::Expression { field, expr: expr.to_string(), reason };
    let parsed = parse_sidecar_resource_expr(expr).map_err(|error| failed(error.to_string()))?;
    let result = parsed.evaluate(resource.key(), value).map_err(|error| failed(error.to_string()))?;
    Ok(result.into_quantity(resource == Resource::Memory))
}

/// One resource list from its expressions: an empty expression, or a combined value of `None`
/// (unlimited), leaves that resource out; `None` when nothing is left.
fn evaluate_list(
    entries: [(&String, &'static str, Resource, Option<Quantity>); 2],
) -> Result<Option<BTreeMap<String, KubeQuantity>>, ResourcesPolicyError> {
    let mut values = BTreeMap::new();
    for (expr, field, resource, combined) in entries {
        let (false, Some(combined)) = (expr.is_empty(), combined) else { continue };
        let value = evaluate(expr, field, resource, combined)?;
        values.insert(resource.key().to_string(), KubeQuantity(format_quantity(value, resource)));
    }
    Ok((!values.is_empty()).then_some(values))
}

/// The resources `policy` gives a sidecar in `pod`. `kruise_sidecars` are the names of every
/// container the matching SidecarSets inject; they never count as targets.
pub fn resources_from_policy(
    policy: &ResourcesPolicy,
    pod: &Pod,
    kruise_sidecars: &BTreeSet<String>,
) -> Result<ResourceRequirements, ResourcesPolicyError> {
    let regex_text = match policy.target_containers_name_regex.as_str() {
        "" => ".*",
        text => text,
    };
    let pattern = Regex::new(regex_text).map_err(|error| ResourcesPolicyError::BadRegex {
        regex: regex_text.into(),
        reason: error.to_string(),
    })?;
    let targets = target_containers(pod, &pattern, kruise_sidecars);
    if targets.is_empty() {
        return Err(ResourcesPolicyError::NoTarget(regex_text.into()));
    }
    let mode = &policy.target_containers_mode;
    let cpu = combine(&targets, Resource::Cpu, mode);
    let memory = combine(&targets, Resource::Memory, mode);
    let limits = policy.resources_expr.limits.as_ref().map(|limits| {
        // An unlimited target (no limit on some container) leaves the limit unset.
        evaluate_list([
            (&limits.cpu, "limits.cpu", Resource::Cpu, cpu.limit),
            (&limits.memory, "limits.memory", Resource::Memory, memory.limit),
        ])
    });
    let requests = policy.resources_expr.requests.as_ref().map(|requests| {
        evaluate_list([
            (&requests.cpu, "requests.cpu", Resource::Cpu, Some(cpu.request)),
            (&requests.memory, "requests.memory", Resource::Memory, Some(memory.request)),
        ])
    });
    let resources = ResourceRequirements {
        limits: limits.transpose()?.flatten(),
        requests: requests.transpose()?.flatten(),
        ..Default::default()
    };
    Ok(resources)
}

#[cfg(test)]
mod tests {
    use kruise_crds::apps::v1beta1::{ResourceExprLimits, ResourceExprRequests, ResourcesExpr};
    use serde_json::json;

    use super::*;

    fn policy(mode: TargetContainersModeType, regex: &str) -> ResourcesPolicy {
        ResourcesPolicy {
            target_containers_mode: mode,
            target_containers_name_regex: regex.into(),
            resources_expr: ResourcesExpr {
                limits: Some(ResourceExprLimits { cpu: "max(cpu*50%, 50m)".into(), memory: "200Mi".into() }),
                requests: Some(ResourceExprRequests {
                    cpu: "max(cpu*50%, 50m)".into(),
                    memory: "100Mi".into(),
                }),
            },
        }
    }

    fn container(name: &str, limits: &[(&str, &str)], requests: &[(&str, &str)]) -> serde_json::Value {
        let list = |pairs: &[(&str, &str)]| -> serde_json::Map<String, serde_json::Value> {
            pairs.iter().map(|(key, value)| (key.to_string(), json!(value))).collect()
        };
        json!({"name": name, "image": "app", "resources": {"limits": list(limits), "requests": list(requests)}})
    }

    fn pod(init: Vec<serde_json::Value>, containers: Vec<serde_json::Value>) -> Pod {
        serde_json::from_value(
            json!({"metadata": {"name": "p"}, "spec": {"initContainers": init, "containers": containers}}),
        )
        .expect("pod")
    }

    fn engines() -> Pod {
        pod(
            vec![],
            vec![
                container(
                    "large-engine-v4",
                    &[("cpu", "200m"), ("memory", "200Mi")],
                    &[("cpu", "50m"), ("memory", "100Mi")],
                ),
                container(
                    "large-engine-v8",
                    &[("cpu", "400m"), ("memory", "400Mi")],
                    &[("cpu", "100m"), ("memory", "200Mi")],
                ),
            ],
        )
    }

    fn shown(list: &Option<BTreeMap<String, KubeQuantity>>, key: &str) -> Option<String> {
        list.as_ref().and_then(|values| values.get(key)).map(|value| value.0.clone())
    }

    fn millis(list: &Option<BTreeMap<String, KubeQuantity>>, key: &str) -> Option<i128> {
        shown(list, key).and_then(|text| Quantity::parse(&text).ok()).map(|q| q.millis())
    }

    #[test]
    fn story_1_resources_policy_with_specific_container_name_regex() {
        let got = resources_from_policy(
            &policy(TargetContainersModeType::Sum, "^large-engine-v4$"),
            &engines(),
            &BTreeSet::new(),
        )
        .expect("applies");
        assert_eq!(shown(&got.limits, "cpu").as_deref(), Some("100m"));
        assert_eq!(shown(&got.limits, "memory").as_deref(), Some("200Mi"));
        assert_eq!(shown(&got.requests, "cpu").as_deref(), Some("50m"));
        assert_eq!(shown(&got.requests, "memory").as_deref(), Some("100Mi"));
    }

    #[test]
    fn story_2_resources_policy_with_sum_mode() {
        let got = resources_from_policy(
            &policy(TargetContainersModeType::Sum, "^large-engine-v.*$"),
            &engines(),
            &BTreeSet::new(),
        )
        .expect("applies");
        assert_eq!(shown(&got.limits, "cpu").as_deref(), Some("300m"));
        assert_eq!(shown(&got.requests, "cpu").as_deref(), Some("75m"));
    }

    #[test]
    fn story_3_resources_policy_with_max_mode() {
        let got = resources_from_policy(
            &policy(TargetContainersModeType::Max, "^large-engine-v.*$"),
            &engines(),
            &BTreeSet::new(),
        )
        .expect("applies");
        assert_eq!(shown(&got.limits, "cpu").as_deref(), Some("200m"));
        assert_eq!(shown(&got.requests, "cpu").as_deref(), Some("50m"));
    }

    #[test]
    fn story_4_resources_policy_with_unlimited_resources() {
        let unlimited_cpu = pod(
            vec![],
            vec![
                container(
                    "large-engine-v4",
                    &[("cpu", "200m"), ("memory", "200Mi")],
                    &[("cpu", "50m"), ("memory", "100Mi")],
                ),
                container("large-engine-v8", &[("memory", "400Mi")], &[("cpu", "100m"), ("memory", "200Mi")]),
            ],
        );
        let got = resources_from_policy(
            &policy(TargetContainersModeType::Max, "^large-engine-v.*$"),
            &unlimited_cpu,
            &BTreeSet::new(),
        )
        .expect("applies");
        assert_eq!(shown(&got.limits, "cpu"), None, "one target has no CPU limit: the sidecar gets none");
        assert_eq!(shown(&got.limits, "memory").as_deref(), Some("200Mi"));
    }

    #[test]
    fn story_5_resources_policy_with_complex_linear_expression() {
        let mut complex = policy(TargetContainersModeType::Sum, ".*");
        complex.resources_expr.limits = Some(ResourceExprLimits {
            cpu: "min(max(cpu*30% + 20m, 100m), 500m)".into(),
            memory: "memory/2 + 10Mi".into(),
        });
        complex.resources_expr.requests = None;
        let got = resources_from_policy(&complex, &engines(), &BTreeSet::new()).expect("applies");
        // cpu: 600m * 0.3 + 20m = 200m; memory: 600Mi / 2 + 10Mi = 310Mi.
        assert_eq!(millis(&got.limits, "cpu"), Some(200));
        assert_eq!(shown(&got.limits, "memory").as_deref(), Some("310Mi"));
        assert_eq!(got.requests, None);
    }

    #[test]
    fn story_6_init_container_native_sidecar_counts_as_a_target() {
        let with_native = pod(
            vec![
                json!({"name": "native", "image": "n", "restartPolicy": "Always", "resources": {"limits": {"cpu": "100m"}}}),
                json!({"name": "setup", "image": "s", "resources": {"limits": {"cpu": "4"}}}),
            ],
            vec![container("main", &[("cpu", "100m")], &[])],
        );
        let mut only_cpu = policy(TargetContainersModeType::Sum, ".*");
        only_cpu.resources_expr.limits =
            Some(ResourceExprLimits { cpu: "cpu".into(), memory: String::new() });
        let got = resources_from_policy(&only_cpu, &with_native, &BTreeSet::new()).expect("applies");
        assert_eq!(
            shown(&got.limits, "cpu").as_deref(),
            Some("200m"),
            "native sidecar plus main; plain init container ignored"
        );
    }

    #[test]
    fn filtering_kruise_sidecar_containers_and_init_containers() {
        let kruise: BTreeSet<String> = ["large-engine-v8".to_string()].into();
        let got = resources_from_policy(&policy(TargetContainersModeType::Sum, ".*"), &engines(), &kruise)
            .expect("applies");
        assert_eq!(shown(&got.limits, "cpu").as_deref(), Some("100m"), "the Kruise sidecar is not a target");
    }

    #[test]
    fn missing_requests_count_as_zero() {
        let bare = pod(vec![], vec![container("main", &[], &[])]);
        let mut requests_only = policy(TargetContainersModeType::Sum, ".*");
        requests_only.resources_expr.limits = None;
        let got = resources_from_policy(&requests_only, &bare, &BTreeSet::new()).expect("applies");
        assert_eq!(shown(&got.requests, "cpu").as_deref(), Some("50m"));
        assert_eq!(got.limits, None);
    }

    #[test]
    fn no_matching_container_or_bad_input_is_an_error() {
        let none = resources_from_policy(
            &policy(TargetContainersModeType::Sum, "^nothing$"),
            &engines(),
            &BTreeSet::new(),
        );
        assert_eq!(none, Err(ResourcesPolicyError::NoTarget("^nothing$".into())));
        let bad =
            resources_from_policy(&policy(TargetContainersModeType::Sum, "("), &engines(), &BTreeSet::new());
        assert!(matches!(bad, Err(ResourcesPolicyError::BadRegex { .. })), "{bad:?}");
        let mut negative = policy(TargetContainersModeType::Sum, ".*");
        negative.resources_expr.requests =
            Some(ResourceExprRequests { cpu: "cpu - 1".into(), memory: String::new() });
        let error = resources_from_policy(&negative, &engines(), &BTreeSet::new()).expect_err("negative");
        assert!(error.to_string().contains("requests.cpu"), "{error}");
    }
}
