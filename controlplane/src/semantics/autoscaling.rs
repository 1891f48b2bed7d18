//! `autoscaling/v2` HorizontalPodAutoscaler as kube-apiserver defaults and validates it
//! (`pkg/apis/autoscaling/{v2/defaults.go,validation}`), with its field paths and messages.

use k8s_openapi::api::autoscaling::v2::{
    HPAScalingPolicy, HPAScalingRules, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricSpec,
    MetricTarget, ResourceMetricSource,
};
use kruise_machinery::{
    field::{ErrorList, FieldError, FieldPath, quoted},
    quantity::Quantity,
};

/// `minReplicas: 1`, a CPU utilization target of 80 % when no metric is given, and every scaling
/// rule filled in once `behavior` is set.
pub fn default_hpa(hpa: &mut HorizontalPodAutoscaler) {
    let spec = hpa.spec.get_or_insert_with(Default::default);
    spec.min_replicas.get_or_insert(1);
    if spec.metrics.as_ref().is_none_or(Vec::is_empty) {
        spec.metrics = Some(vec![MetricSpec {
            type_: "Resource".into(),
            resource: Some(ResourceMetricSource {
                name: "cpu".into(),
                target: MetricTarget {
                    type_: "Utilization".into(),
                    average_utilization: Some(80),
                    ..Default::default()
                },
            }),
            ..Default::default()
        }]);
    }
    if let Some(behavior) = spec.behavior.as_mut() {
        let up = HPAScalingRules {
            stabilization_window_seconds: Some(0),
            select_policy: Some("Max".into()),
            policies: Some(vec![policy("Pods", 4, 15), policy("Percent", 100, 15)]),
            tolerance: None,
        };
        let down = HPAScalingRules {
            stabilization_window_seconds: None,
            select_policy: Some("Max".into()),
            policies: Some(vec![policy("Percent", 100, 15)]),
            tolerance: None,
        };
        behavior.scale_up = Some(fill_rules(behavior.scale_up.take(), up));
        behavior.scale_down = Some(fill_rules(behavior.scale_down.take(), down));
    }
}

fn policy(type_: &str, value: i32, period_seconds: i32) -> HPAScalingPolicy {
    HPAScalingPolicy { type_: type_.into(), value, period_seconds }
}

/// The rules given, with the defaults for every field they leave unset.
fn fill_rules(given: Option<HPAScalingRules>, mut defaults: HPAScalingRules) -> HPAScalingRules {
    let Some(given) = given else { return defaults };
    if given.select_policy.is_some() {
        defaults.select_policy = given.select_policy;
    }
    if given.stabilization_window_seconds.is_some() {
        defaults.stabilization_window_seconds = given.stabilization_window_seconds;
    }
    if given.policies.is_some() {
        defaults.policies = given.policies;
    }
    if given.tolerance.is_some() {
        defaults.tolerance = given.tolerance;
    }
    defaults
}

/// The rules of an HPA spec (with `HPAScaleToZero` off: `minReplicas` at least 1); `old` is
/// the stored spec on an update (an unchanged target's apiVersion is not checked again).
pub fn validate_hpa(
    spec: Option<&HorizontalPodAutoscalerSpec>,
    old: Option<&HorizontalPodAutoscalerSpec>,
) -> ErrorList {
    let root = FieldPath::root("spec");
    let default_spec = HorizontalPodAutoscalerSpec::default();
    let spec = spec.unwrap_or(&default_spec);
    let mut errors = Vec::new();
    if let Some(min) = spec.min_replicas
        && min < 1
    {
        errors.push(FieldError::invalid(
            &root.child("minReplicas"),
            min,
            "must be greater than or equal to 1",
        ));
    }
    if spec.max_replicas < 1 {
        errors.push(FieldError::invalid(
            &root.child("maxReplicas"),
            spec.max_replicas,
            "must be greater than 0",
        ));
    }
    if let Some(min) = spec.min_replicas
        && spec.max_replicas < min
    {
        errors.push(FieldError::invalid(
            &root.child("maxReplicas"),
            spec.max_replicas,
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let target = root.child("scaleTargetRef");
    for (value, field) in [(&spec.scale_target_ref.kind, "kind"), (&spec.scale_target_ref.name, "name")] {
        if value.is_empty() {
            errors.push(FieldError::required(&target.child(field), ""));
        } else {
            for problem in path_segment_problems(value) {
                errors.push(FieldError::invalid(&target.child(field), quoted(value), problem));
            }
        }
    }
    let reference = &spec.scale_target_ref;
    let unchanged = old.is_some_and(|old| {
        old.scale_target_ref.api_version == reference.api_version
            && old.scale_target_ref.kind == reference.kind
    });
    if !unchanged {
        let api_version = reference.api_version.as_deref().unwrap_or_default();
        let problem = match api_version.split('/').collect::<Vec<_>>().as_slice() {
            [_, _, _, ..] => Some(format!("unexpected GroupVersion string: {api_version}")),
            [group, _] if !group.is_empty() => None,
            // The core group has one scalable kind.
            _ if reference.kind == "ReplicationController" => None,
            _ => Some("apiVersion must specify API group".to_string()),
        };
        if let Some(problem) = problem {
            errors.push(FieldError::invalid(&target.child("apiVersion"), quoted(api_version), problem));
        }
    }
    for (index, metric) in spec.metrics.iter().flatten().enumerate() {
        errors.extend(validate_metric(metric, &root.child("metrics").index(index)));
    }
    let scales_by_object =
        spec.metrics.iter().flatten().any(|m| matches!(m.type_.as_str(), "Object" | "External"));
    if spec.min_replicas == Some(0) && !scales_by_object {
        errors.push(FieldError::forbidden(
            &root.child("metrics"),
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    if let Some(behavior) = &spec.behavior {
        let path = root.child("behavior");
        for (rules, field) in [(&behavior.scale_up, "scaleUp"), (&behavior.scale_down, "scaleDown")] {
            if let Some(rules) = rules {
                errors.extend(validate_rules(rules, &path.child(field)));
            }
        }
    }
    errors
}

fn path_segment_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value == "." || value == ".." {
        problems.push(format!("may not be '{value}'"));
    }
    for forbidden in ["/", "%"] {
        if value.contains(forbidden) {
            problems.push(format!("may not contain '{forbidden}'"));
        }
    }
    problems
}

const METRIC_SOURCE_TYPES: [&str; 5] = ["ContainerResource", "External", "Object", "Pods", "Resource"];

fn validate_metric(metric: &MetricSpec, path: &FieldPath) -> ErrorList {
    let mut errors = Vec::new();
    if metric.type_.is_empty() {
        errors.push(FieldError::required(&path.child("type"), "must specify a metric source type"));
    }
    if !METRIC_SOURCE_TYPES.contains(&metric.type_.as_str()) {
        errors.push(FieldError::not_supported(&path.child("type"), &metric.type_, &METRIC_SOURCE_TYPES));
    }
    let present: Vec<(&str, Option<&MetricTarget>)> = [
        ("object", metric.object.as_ref().map(|s| &s.target)),
        ("external", metric.external.as_ref().map(|s| &s.target)),
        ("pods", metric.pods.as_ref().map(|s| &s.target)),
        ("resource", metric.resource.as_ref().map(|s| &s.target)),
        ("containerResource", metric.container_resource.as_ref().map(|s| &s.target)),
    ]
    .into_iter()
    .filter(|(_, target)| target.is_some())
    .collect();
    // Only the first source present is validated, as upstream does.
    if let Some((field, Some(target))) = present.first() {
        let source = path.child(field);
        errors.extend(validate_target(target, &source.child("target")));
        if let Some(resource) = metric.resource.as_ref().filter(|_| *field == "resource") {
            if resource.name.is_empty() {
                errors.push(FieldError::required(&source.child("name"), "must specify a resource name"));
            }
            errors.extend(utilization_or_value(target, &source.child("target")));
        }
        if let Some(resource) = metric.container_resource.as_ref().filter(|_| *field == "containerResource") {
            if resource.name.is_empty() {
                errors.push(FieldError::required(&source.child("name"), "must specify a resource name"));
            }
            if resource.container.is_empty() {
                errors.push(FieldError::required(&source.child("container"), "must specify a container"));
            }
            errors.extend(utilization_or_value(target, &source.child("target")));
        }
    }
    let expected = match metric.type_.as_str() {
        "Object" => Some(("object", metric.object.is_some())),
        "Pods" => Some(("pods", metric.pods.is_some())),
        "Resource" => Some(("resource", metric.resource.is_some())),
        "External" => Some(("external", metric.external.is_some())),
        "ContainerResource" => Some(("containerResource", metric.container_resource.is_some())),
        _ => None,
    };
    // An unknown type was reported above (upstream reports it twice; its message shows it once).
    if let Some((field, false)) = expected {
        errors.push(FieldError::required(
            &path.child(field),
            "must populate information for the given metric source",
        ));
    }
    if present.len() != 1 {
        let expected_field = expected.map(|(field, _)| field).unwrap_or_default();
        let mut others: Vec<&str> =
            present.iter().map(|(field, _)| *field).filter(|field| *field != expected_field).collect();
        others.sort_unstable();
        for field in others {
            errors.push(FieldError::forbidden(
                &path.child(field),
                "must populate the given metric source only",
            ));
        }
    }
    errors
}

fn utilization_or_value(target: &MetricTarget, path: &FieldPath) -> ErrorList {
    let mut errors = Vec::new();
    match (target.average_utilization, &target.average_value) {
        (None, None) => errors.push(FieldError::required(
            &path.child("averageUtilization"),
            "must set either a target raw value or a target utilization",
        )),
        (Some(_), Some(_)) => errors.push(FieldError::forbidden(
            &path.child("averageValue"),
            "may not set both a target raw value and a target utilization",
        )),
        _ => {}
    }
    errors
}

fn validate_target(target: &MetricTarget, path: &FieldPath) -> ErrorList {
    let mut errors = Vec::new();
    if target.type_.is_empty() {
        errors.push(FieldError::required(&path.child("type"), "must specify a metric target type"));
    }
    if !matches!(target.type_.as_str(), "Utilization" | "Value" | "AverageValue") {
        errors.push(FieldError::invalid(
            &path.child("type"),
            quoted(&target.type_),
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for (value, field) in [(&target.value, "value"), (&target.average_value, "averageValue")] {
        if let Some(value) = value
            && Quantity::parse(&value.0).is_ok_and(|q| q <= Quantity::default())
        {
            errors.push(FieldError::invalid(&path.child(field), quoted(&value.0), "must be positive"));
        }
    }
    if let Some(utilization) = target.average_utilization
        && utilization < 1
    {
        errors.push(FieldError::invalid(
            &path.child("averageUtilization"),
            utilization,
            "must be greater than 0",
        ));
    }
    errors
}

fn validate_rules(rules: &HPAScalingRules, path: &FieldPath) -> ErrorList {
    let mut errors = Vec::new();
    if let Some(window) = rules.stabilization_window_seconds {
        let field = path.child("stabilizationWindowSeconds");
        if window < 0 {
            errors.push(FieldError::invalid(&field, window, "must be greater than or equal to zero"));
        }
        if window > 3600 {
            errors.push(FieldError::invalid(&field, window, "must be less than or equal to 3600"));
        }
    }
    if let Some(select) = rules.select_policy.as_deref()
        && !matches!(select, "Disabled" | "Max" | "Min")
    {
        errors.push(FieldError::not_supported(
            &path.child("selectPolicy"),
            select,
            &["Disabled", "Max", "Min"],
        ));
    }
    let policies = path.child("policies");
    let given = rules.policies.as_deref().unwrap_or_default();
    if given.is_empty() {
        errors.push(FieldError::required(&policies, "must specify at least one Policy"));
    }
    for (index, policy) in given.iter().enumerate() {
        let path = policies.index(index);
        if !matches!(policy.type_.as_str(), "Pods" | "Percent") {
            errors.push(FieldError::not_supported(&path.child("type"), &policy.type_, &["Percent", "Pods"]));
        }
        if policy.value <= 0 {
            errors.push(FieldError::invalid(&path.child("value"), policy.value, "must be greater than zero"));
        }
        if policy.period_seconds <= 0 {
            errors.push(FieldError::invalid(
                &path.child("periodSeconds"),
                policy.period_seconds,
                "must be greater than zero",
            ));
        }
        if policy.period_seconds > 1800 {
            errors.push(FieldError::invalid(
                &path.child("periodSeconds"),
                policy.period_seconds,
                "must be less than or equal to 1800",
            ));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn hpa(spec: Value) -> HorizontalPodAutoscaler {
        serde_json::from_value(json!({"metadata": {"name": "h"}, "spec": spec})).unwrap()
    }

    fn messages(errors: ErrorList) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn defaults_fill_min_replicas_the_cpu_target_and_scaling_rules() {
        let mut plain =
            hpa(json!({"maxReplicas": 5, "scaleTargetRef": {"kind": "Deployment", "name": "web"}}));
        default_hpa(&mut plain);
        let spec = serde_json::to_value(plain.spec.unwrap()).unwrap();
        assert_eq!(spec["minReplicas"], 1);
        assert_eq!(
            spec["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}])
        );
        assert!(spec.get("behavior").is_none());
        let mut shaped = hpa(json!({
            "maxReplicas": 5, "scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
        }));
        default_hpa(&mut shaped);
        let behavior = serde_json::to_value(shaped.spec.unwrap().behavior.unwrap()).unwrap();
        assert_eq!(
            behavior,
            json!({
                "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                    {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
                "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
                    {"type": "Percent", "value": 100, "periodSeconds": 15}]},
            })
        );
    }

    #[test]
    fn validation_reports_kube_apiserver_paths_and_messages() {
        let target = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"});
        let cases: Vec<(&str, Value, Vec<&str>)> = vec![
            ("valid", json!({"minReplicas": 1, "maxReplicas": 3, "scaleTargetRef": target}), vec![]),
            (
                "min above max",
                json!({"minReplicas": 4, "maxReplicas": 3, "scaleTargetRef": target}),
                vec!["spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"],
            ),
            (
                "zero",
                json!({"minReplicas": 0, "maxReplicas": 0, "scaleTargetRef": target}),
                vec![
                    "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
                    "spec.maxReplicas: Invalid value: 0: must be greater than 0",
                    "spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
                ],
            ),
            (
                "no target",
                json!({"maxReplicas": 3, "scaleTargetRef": {}}),
                vec![
                    "spec.scaleTargetRef.kind: Required value",
                    "spec.scaleTargetRef.name: Required value",
                    "spec.scaleTargetRef.apiVersion: Invalid value: \"\": apiVersion must specify API group",
                ],
            ),
            (
                "utilization below one",
                json!({"maxReplicas": 3, "scaleTargetRef": target, "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 0}}}]}),
                vec![
                    "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
                ],
            ),
            (
                "missing source",
                json!({"maxReplicas": 3, "scaleTargetRef": target, "metrics": [{"type": "Pods"}]}),
                vec![
                    "spec.metrics[0].pods: Required value: must populate information for the given metric source",
                ],
            ),
            (
                "bad policy",
                json!({"maxReplicas": 3, "scaleTargetRef": target, "behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 2000}]}}}),
                vec![
                    "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
                    "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 2000: must be less than or equal to 1800",
                ],
            ),
        ];
        for (case, spec, expected) in cases {
            assert_eq!(messages(validate_hpa(hpa(spec).spec.as_ref(), None)), expected, "{case}");
        }
    }
}
