//! Tables of ingresses, ingress classes and horizontal pod autoscalers, with kube-apiserver's
//! columns and cells.

use serde_json::{Value, json};

use super::{
    AGE, ColumnDef, NAME, Printer, col,
    format::{self, list, text},
};

/// The printer of a `networking.k8s.io` or `autoscaling` kind.
pub(super) fn printer(group: &str, kind: &str) -> Option<Printer> {
    Some(match (group, kind) {
        ("networking.k8s.io", "Ingress") => Printer::new(INGRESS, ingress_cells),
        ("networking.k8s.io", "IngressClass") => Printer::new(INGRESS_CLASS, ingress_class_cells),
        ("autoscaling", "HorizontalPodAutoscaler") => Printer::new(HPA, hpa_cells),
        _ => return None,
    })
}

const INGRESS: &[ColumnDef] = &[
    NAME,
    col(
        "Class",
        "string",
        "The name of the IngressClass resource that should be used for additional configuration",
    ),
    col("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
    col("Address", "string", "Address is a list containing ingress points for the load-balancer"),
    col("Ports", "string", "Ports of TLS configurations that open"),
    AGE,
];

/// How many characters of the address list a table shows (without `-o wide`).
const LOAD_BALANCER_WIDTH: usize = 16;

fn ingress_cells(ingress: &Value, now: i64) -> Vec<Value> {
    let class = ingress.pointer("/spec/ingressClassName").and_then(Value::as_str).unwrap_or("<none>");
    vec![
        json!(text(ingress, "/metadata/name")),
        json!(class),
        json!(hosts(list(ingress, "/spec/rules"))),
        json!(addresses(list(ingress, "/status/loadBalancer/ingress"))),
        json!(if list(ingress, "/spec/tls").is_empty() { "80" } else { "80, 443" }),
        json!(format::age(ingress, now)),
    ]
}

/// Up to three hosts, then `+ N more...`; `*` when no rule names one.
fn hosts(rules: &[Value]) -> String {
    const MAX: usize = 3;
    let mut shown: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if shown.len() == MAX {
            more = true;
        }
        let host = rule.get("host").and_then(Value::as_str).unwrap_or_default();
        if !more && !host.is_empty() {
            shown.push(host);
        }
    }
    if shown.is_empty() {
        return "*".into();
    }
    let joined = shown.join(",");
    if more { format!("{joined} + {} more...", rules.len() - MAX) } else { joined }
}

/// The load balancer's IPs (or host names), sorted and deduplicated, cut to the table width.
fn addresses(ingress: &[Value]) -> String {
    let mut found = std::collections::BTreeSet::new();
    for point in ingress {
        let ip = point.get("ip").and_then(Value::as_str).unwrap_or_default();
        let hostname = point.get("hostname").and_then(Value::as_str).unwrap_or_default();
        if !ip.is_empty() {
            found.insert(ip);
        } else if !hostname.is_empty() {
            found.insert(hostname);
        }
    }
    let joined = found.into_iter().collect::<Vec<_>>().join(",");
    if joined.len() > LOAD_BALANCER_WIDTH {
        format!("{}...", &joined[..LOAD_BALANCER_WIDTH - 3])
    } else {
        joined
    }
}

const INGRESS_CLASS: &[ColumnDef] = &[
    NAME,
    col("Controller", "string", "Controller that is responsible for handling this class"),
    col("Parameters", "string", "A reference to a resource with additional parameters"),
    AGE,
];

fn ingress_class_cells(class: &Value, now: i64) -> Vec<Value> {
    let parameters = match class.pointer("/spec/parameters") {
        Some(parameters) => {
            let kind = text(parameters, "/kind");
            let group = parameters.get("apiGroup").and_then(Value::as_str);
            let qualified = match group {
                Some(group) => format!("{kind}.{group}"),
                None => kind.to_string(),
            };
            format!("{qualified}/{}", text(parameters, "/name"))
        }
        None => "<none>".into(),
    };
    vec![
        json!(text(class, "/metadata/name")),
        json!(text(class, "/spec/controller")),
        json!(parameters),
        json!(format::age(class, now)),
    ]
}

const HPA: &[ColumnDef] = &[
    NAME,
    col(
        "Reference",
        "string",
        "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.",
    ),
    col(
        "Targets",
        "string",
        "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond.",
    ),
    col(
        "MinPods",
        "string",
        "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.",
    ),
    col(
        "MaxPods",
        "string",
        "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.",
    ),
    col(
        "Replicas",
        "string",
        "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.",
    ),
    AGE,
];

fn hpa_cells(hpa: &Value, now: i64) -> Vec<Value> {
    let reference =
        format!("{}/{}", text(hpa, "/spec/scaleTargetRef/kind"), text(hpa, "/spec/scaleTargetRef/name"));
    let min = hpa
        .pointer("/spec/minReplicas")
        .and_then(Value::as_i64)
        .map_or("<unset>".to_string(), |m| m.to_string());
    vec![
        json!(text(hpa, "/metadata/name")),
        json!(reference),
        json!(hpa_targets(list(hpa, "/spec/metrics"), list(hpa, "/status/currentMetrics"))),
        json!(min),
        json!(format::int(hpa, "/spec/maxReplicas")),
        json!(format::int(hpa, "/status/currentReplicas")),
        json!(format::age(hpa, now)),
    ]
}

/// `cpu: 40%/80%, ...`: up to two metrics as current/target, `<unknown>` before the autoscaler
/// measured them.
fn hpa_targets(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".into();
    }
    const MAX: usize = 2;
    let quantity = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
    let mut shown = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        let status = statuses.get(index);
        let current = |source: &str, field: &str| {
            status.and_then(|s| s.get(source)).and_then(|s| quantity(s.pointer(&format!("/current/{field}"))))
        };
        let unknown = || "<unknown>".to_string();
        let entry = match spec.get("type").and_then(Value::as_str).unwrap_or_default() {
            source_type @ ("External" | "Object") => {
                let source = if source_type == "External" { "external" } else { "object" };
                let target = spec.get(source).and_then(|s| s.get("target"));
                match target.and_then(|t| quantity(t.get("averageValue"))) {
                    Some(average) => {
                        format!("{}/{average} (avg)", current(source, "averageValue").unwrap_or_else(unknown))
                    }
                    None => format!(
                        "{}/{}",
                        current(source, "value").unwrap_or_else(unknown),
                        target.and_then(|t| quantity(t.get("value"))).unwrap_or_default()
                    ),
                }
            }
            "Pods" => format!(
                "{}/{}",
                current("pods", "averageValue").unwrap_or_else(unknown),
                spec.pointer("/pods/target/averageValue").and_then(Value::as_str).unwrap_or_default()
            ),
            source_type @ ("Resource" | "ContainerResource") => {
                let source = if source_type == "Resource" { "resource" } else { "containerResource" };
                let name =
                    spec.pointer(&format!("/{source}/name")).and_then(Value::as_str).unwrap_or_default();
                let target = spec.pointer(&format!("/{source}/target"));
                match target.and_then(|t| quantity(t.get("averageValue"))) {
                    Some(average) => {
                        format!(
                            "{name}: {}/{average}",
                            current(source, "averageValue").unwrap_or_else(unknown)
                        )
                    }
                    None => {
                        let current = status
                            .and_then(|s| s.pointer(&format!("/{source}/current/averageUtilization")))
                            .and_then(Value::as_i64)
                            .map_or_else(unknown, |u| format!("{u}%"));
                        let goal = target
                            .and_then(|t| t.get("averageUtilization"))
                            .and_then(Value::as_i64)
                            .map_or("<auto>".to_string(), |u| format!("{u}%"));
                        format!("{name}: {current}/{goal}")
                    }
                }
            }
            _ => "<unknown type>".to_string(),
        };
        shown.push(entry);
    }
    if shown.len() > MAX {
        let more = shown.len() - MAX;
        shown.truncate(MAX);
        return format!("{} + {more} more...", shown.join(", "));
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_kube_apiserver_printers() {
        let ingress = json!({
            "metadata": {"name": "web"},
            "spec": {"rules": [{"host": "a.example.com"}, {"host": "b.example.com"}, {}, {"host": "c.example.com"}, {"host": "d.example.com"}], "tls": [{}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example.com"}]}},
        });
        let cells = ingress_cells(&ingress, 0);
        assert_eq!(cells[1], "<none>");
        assert_eq!(cells[2], "a.example.com,b.example.com,c.example.com + 2 more...");
        assert_eq!(cells[3], "10.0.0.2,lb.e...", "cut to 16 characters");
        assert_eq!(cells[4], "80, 443");
        assert_eq!(hosts(&[]), "*");

        let class = json!({"metadata": {"name": "c"}, "spec": {"controller": "example.com/x", "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "p"}}});
        assert_eq!(ingress_class_cells(&class, 0)[2], "Params.k8s.example.com/p");

        let hpa = json!({
            "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5, "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
                {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}},
                {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}},
            ]},
            "status": {"currentReplicas": 2, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}]},
        });
        let cells = hpa_cells(&hpa, 0);
        assert_eq!(cells[1], "Deployment/web");
        assert_eq!(cells[2], "cpu: 40%/80%, <unknown>/1k + 1 more...");
        assert_eq!((&cells[3], &cells[4], &cells[5]), (&json!("<unset>"), &json!(5), &json!(2)));
    }
}
