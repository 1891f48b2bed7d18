//! Tables of the core kinds: pods (with kubectl's STATUS and RESTARTS logic), nodes, namespaces,
//! events (of both Event APIs), services, endpoints, config maps, secrets, service accounts,
//! volumes and claims, pod templates and resource quotas.

use serde_json::{Value, json};

use super::{
    AGE, ColumnDef, NAME, Printer, col,
    format::{self, int, list, or, text},
    wide,
};
use crate::{apiserver::events, semantics::jsonpath::human_duration};

/// The printer of a core kind (and of `events.k8s.io` Events, printed as core ones).
pub(super) fn printer(group: &str, kind: &str) -> Option<Printer> {
    Some(match (group, kind) {
        ("", "Pod") => Printer { columns: POD, cells: pod_cells, conditions: Some(pod_conditions) },
        ("", "Node") => Printer::new(NODE, node_cells),
        ("", "Namespace") => Printer::new(NAMESPACE, namespace_cells),
        ("" | "events.k8s.io", "Event") => Printer::new(EVENT, event_cells),
        ("", "Service") => Printer::new(SERVICE, service_cells),
        ("", "Endpoints") => Printer::new(ENDPOINTS, endpoints_cells),
        ("", "ConfigMap") => Printer::new(CONFIG_MAP, config_map_cells),
        ("", "Secret") => Printer::new(SECRET, secret_cells),
        ("", "ServiceAccount") => Printer::new(SERVICE_ACCOUNT, service_account_cells),
        ("", "PersistentVolumeClaim") => Printer::new(CLAIM, claim_cells),
        ("", "PersistentVolume") => Printer::new(VOLUME, volume_cells),
        ("", "PodTemplate") => Printer::new(POD_TEMPLATE, pod_template_cells),
        ("", "ResourceQuota") => Printer::new(RESOURCE_QUOTA, resource_quota_cells),
        _ => return None,
    })
}

fn name(object: &Value) -> Value {
    json!(text(object, "/metadata/name"))
}

fn deleting(object: &Value) -> bool {
    object.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null())
}

const POD: &[ColumnDef] = &[
    NAME,
    col("Ready", "string", "Ready containers out of all containers of the pod."),
    col("Status", "string", "Summary of the pod's phase and its containers' states."),
    col("Restarts", "string", "Container restarts, with the time since the latest one."),
    AGE,
    wide("IP", "string", "The pod's first IP address."),
    wide("Node", "string", "The node the pod is bound to."),
    wide("Nominated Node", "string", "The node the scheduler nominated for the pod after a preemption."),
    wide("Readiness Gates", "string", "Readiness gates whose condition is True, out of all of them."),
];

fn is_restartable_init(container: Option<&Value>) -> bool {
    container.is_some_and(|c| text(c, "/restartPolicy") == "Always")
}

fn condition_status<'a>(object: &'a Value, kind: &str) -> Option<&'a str> {
    list(object, "/status/conditions").iter().find(|c| text(c, "/type") == kind).map(|c| text(c, "/status"))
}

/// A finish time of a container's last termination, when later than `latest`.
fn later_termination(status: &Value, latest: Option<i64>) -> Option<i64> {
    let finished = format::timestamp(status, "/lastState/terminated/finishedAt");
    match (finished, latest) {
        (Some(at), Some(current)) if at > current => Some(at),
        (Some(at), None) => Some(at),
        _ => latest,
    }
}

/// The STATUS of a pod as kubectl shows it, its ready and total container counts, its restart
/// count and the time of the latest restart.
pub(super) fn pod_summary(pod: &Value) -> (String, usize, usize, i64, Option<i64>) {
    let phase = text(pod, "/status/phase");
    let mut reason = or(text(pod, "/status/reason"), phase);
    if list(pod, "/status/conditions")
        .iter()
        .any(|c| text(c, "/type") == "PodScheduled" && text(c, "/reason") == "SchedulingGated")
    {
        reason = "SchedulingGated".into();
    }
    let init_specs = list(pod, "/spec/initContainers");
    let init_spec = |name: &str| init_specs.iter().find(|c| text(c, "/name") == name);
    let total = list(pod, "/spec/containers").len()
        + init_specs.iter().filter(|c| is_restartable_init(Some(c))).count();
    let mut ready = 0;
    let mut restarts = 0;
    let mut sidecar_restarts = 0;
    let mut last_restart: Option<i64> = None;
    let mut last_sidecar_restart: Option<i64> = None;

    let mut initializing = false;
    for (index, status) in list(pod, "/status/initContainerStatuses").iter().enumerate() {
        let name = text(status, "/name");
        let restartable = is_restartable_init(init_spec(name));
        restarts += int(status, "/restartCount");
        last_restart = later_termination(status, last_restart);
        if restartable {
            sidecar_restarts += int(status, "/restartCount");
            last_sidecar_restart = later_termination(status, last_sidecar_restart);
        }
        let terminated = status.pointer("/state/terminated").filter(|t| t.is_object());
        let waiting_reason = text(status, "/state/waiting/reason");
        if terminated.is_some_and(|t| int(t, "/exitCode") == 0) {
            continue;
        }
        if restartable && status.get("started").and_then(Value::as_bool) == Some(true) {
            if status.get("ready").and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        }
        reason = match terminated {
            Some(terminated) => match text(terminated, "/reason") {
                "" if int(terminated, "/signal") != 0 => {
                    format!("Init:Signal:{}", int(terminated, "/signal"))
                }
                "" => format!("Init:ExitCode:{}", int(terminated, "/exitCode")),
                terminated_reason => format!("Init:{terminated_reason}"),
            },
            None if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" => {
                format!("Init:{waiting_reason}")
            }
            None => format!("Init:{index}/{}", init_specs.len()),
        };
        initializing = true;
        break;
    }

    if !initializing || condition_status(pod, "Initialized") == Some("True") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        for status in list(pod, "/status/containerStatuses").iter().rev() {
            restarts += int(status, "/restartCount");
            last_restart = later_termination(status, last_restart);
            let waiting = text(status, "/state/waiting/reason");
            let terminated = status.pointer("/state/terminated").filter(|t| t.is_object());
            if !waiting.is_empty() {
                reason = waiting.to_string();
            } else if let Some(terminated) = terminated {
                reason = match text(terminated, "/reason") {
                    "" if int(terminated, "/signal") != 0 => format!("Signal:{}", int(terminated, "/signal")),
                    "" => format!("ExitCode:{}", int(terminated, "/exitCode")),
                    terminated_reason => terminated_reason.to_string(),
                };
            } else if status.get("ready").and_then(Value::as_bool) == Some(true)
                && status.pointer("/state/running").is_some_and(Value::is_object)
            {
                has_running = true;
                ready += 1;
            }
        }
        // A pod whose finished containers read "Completed" while others still run is not done.
        if reason == "Completed" && has_running {
            reason =
                if condition_status(pod, "Ready") == Some("True") { "Running" } else { "NotReady" }.into();
        }
    }

    if deleting(pod) && text(pod, "/status/reason") == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting(pod) && !matches!(phase, "Succeeded" | "Failed") {
        reason = "Terminating".into();
    }
    (reason, ready, total, restarts, last_restart)
}

fn pod_cells(pod: &Value, now: i64) -> Vec<Value> {
    let (status, ready, total, restarts, last_restart) = pod_summary(pod);
    let restarts = match last_restart {
        Some(at) if restarts != 0 => format!("{restarts} ({} ago)", human_duration(now - at)),
        _ => restarts.to_string(),
    };
    let ip = list(pod, "/status/podIPs")
        .first()
        .map(|ip| text(ip, "/ip"))
        .filter(|ip| !ip.is_empty())
        .unwrap_or_else(|| text(pod, "/status/podIP"));
    let gates = list(pod, "/spec/readinessGates");
    let readiness_gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let passing = gates
            .iter()
            .filter(|gate| condition_status(pod, text(gate, "/conditionType")) == Some("True"))
            .count();
        format!("{passing}/{}", gates.len())
    };
    vec![
        name(pod),
        json!(format!("{ready}/{total}")),
        json!(status),
        json!(restarts),
        json!(format::age(pod, now)),
        json!(or(ip, "<none>")),
        json!(or(text(pod, "/spec/nodeName"), "<none>")),
        json!(or(text(pod, "/status/nominatedNodeName"), "<none>")),
        json!(readiness_gates),
    ]
}

/// Finished pods are marked `Completed` in their row.
fn pod_conditions(pod: &Value) -> Option<Value> {
    let (reason, message) = match text(pod, "/status/phase") {
        "Succeeded" => ("Succeeded", "The pod has completed successfully."),
        "Failed" => ("Failed", "The pod failed."),
        _ => return None,
    };
    Some(json!([{"type": "Completed", "status": "True", "reason": reason, "message": message}]))
}

const NODE: &[ColumnDef] = &[
    NAME,
    col("Status", "string", "Whether the node is Ready, and SchedulingDisabled when cordoned."),
    col("Roles", "string", "The node's roles, from its node-role labels."),
    AGE,
    col("Version", "string", "The kubelet version the node reports."),
    wide("Internal-IP", "string", "The node's first internal address."),
    wide("External-IP", "string", "The node's first external address."),
    wide("OS-Image", "string", "The operating system image the node reports."),
    wide("Kernel-Version", "string", "The kernel version the node reports."),
    wide("Container-Runtime", "string", "The container runtime and version the node reports."),
];

/// A node's STATUS: `Ready`/`NotReady` (`Unknown` without a Ready condition), plus
/// `SchedulingDisabled` when it is cordoned.
pub(super) fn node_status(node: &Value) -> String {
    let mut status = vec![match condition_status(node, "Ready") {
        Some("True") => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push("SchedulingDisabled");
    }
    status.join(",")
}

/// A node's roles: `node-role.kubernetes.io/<role>` label keys and the `kubernetes.io/role`
/// label's value, sorted.
pub(super) fn node_roles(node: &Value) -> String {
    let mut roles: Vec<&str> = node
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| match key.strip_prefix("node-role.kubernetes.io/") {
            Some(role) if !role.is_empty() => Some(role),
            Some(_) => None,
            None if key == "kubernetes.io/role" => value.as_str().filter(|v| !v.is_empty()),
            None => None,
        })
        .collect();
    roles.sort_unstable();
    roles.dedup();
    if roles.is_empty() { "<none>".into() } else { roles.join(",") }
}

fn node_address(node: &Value, kind: &str) -> String {
    list(node, "/status/addresses")
        .iter()
        .find(|address| text(address, "/type") == kind)
        .map_or_else(|| "<none>".to_string(), |address| text(address, "/address").to_string())
}

fn node_cells(node: &Value, now: i64) -> Vec<Value> {
    vec![
        name(node),
        json!(node_status(node)),
        json!(node_roles(node)),
        json!(format::age(node, now)),
        json!(text(node, "/status/nodeInfo/kubeletVersion")),
        json!(node_address(node, "InternalIP")),
        json!(node_address(node, "ExternalIP")),
        json!(or(text(node, "/status/nodeInfo/osImage"), "<unknown>")),
        json!(or(text(node, "/status/nodeInfo/kernelVersion"), "<unknown>")),
        json!(or(text(node, "/status/nodeInfo/containerRuntimeVersion"), "<unknown>")),
    ]
}

const NAMESPACE: &[ColumnDef] = &[NAME, col("Status", "string", "The namespace's phase."), AGE];

fn namespace_cells(namespace: &Value, now: i64) -> Vec<Value> {
    vec![name(namespace), json!(text(namespace, "/status/phase")), json!(format::age(namespace, now))]
}

const EVENT: &[ColumnDef] = &[
    col("Last Seen", "string", "Time since the event was last observed."),
    col("Type", "string", "Normal or Warning."),
    col("Reason", "string", "Short, machine-readable reason of the event."),
    col("Object", "string", "The object the event is about, as kind/name."),
    wide("Subobject", "string", "The part of the object the event is about (field path)."),
    wide("Source", "string", "The component (and instance) that reported the event."),
    col("Message", "string", "Human-readable description of the event."),
    wide("First Seen", "string", "Time since the event was first observed."),
    wide("Count", "string", "How many times the event was observed."),
    ColumnDef { priority: 1, ..NAME },
];

/// The cells of an Event of either API (read in the core shape).
fn event_cells(object: &Value, now: i64) -> Vec<Value> {
    let event = events::to_core(object);
    let first_seen = if format::timestamp(&event, "/firstTimestamp").is_some() {
        format::since(&event, "/firstTimestamp", now)
    } else {
        format::since(&event, "/eventTime", now)
    };
    let mut last_seen = if format::timestamp(&event, "/lastTimestamp").is_some() {
        format::since(&event, "/lastTimestamp", now)
    } else {
        first_seen.clone()
    };
    let mut count = int(&event, "/count");
    if event.get("series").is_some_and(Value::is_object) {
        last_seen = format::since(&event, "/series/lastObservedTime", now);
        count = int(&event, "/series/count");
    } else if count == 0 {
        // Events of the new API report single occurrences without a count.
        count = 1;
    }
    let kind = text(&event, "/involvedObject/kind").to_lowercase();
    let target = match text(&event, "/involvedObject/name") {
        "" => kind,
        involved => format!("{kind}/{involved}"),
    };
    let component = or(text(&event, "/source/component"), text(&event, "/reportingComponent"));
    let instance = or(text(&event, "/source/host"), text(&event, "/reportingInstance"));
    let source = if instance.is_empty() { component } else { format!("{component}, {instance}") };
    vec![
        json!(last_seen),
        json!(text(&event, "/type")),
        json!(text(&event, "/reason")),
        json!(target),
        json!(text(&event, "/involvedObject/fieldPath")),
        json!(source),
        json!(text(&event, "/message").trim()),
        json!(first_seen),
        json!(count),
        name(&event),
    ]
}

const SERVICE: &[ColumnDef] = &[
    NAME,
    col("Type", "string", "How the service is exposed."),
    col("Cluster-IP", "string", "The service's cluster IP."),
    col("External-IP", "string", "Addresses the service is reachable at from outside the cluster."),
    col("Port(s)", "string", "The service's ports (port[:nodePort]/protocol)."),
    AGE,
    wide("Selector", "string", "The labels of the pods the service routes to."),
];

/// The EXTERNAL-IP of a service (load balancer addresses are not shortened: the server prints
/// wide).
pub(super) fn service_external_ip(service: &Value) -> String {
    let external: Vec<&str> = list(service, "/spec/externalIPs").iter().filter_map(Value::as_str).collect();
    match text(service, "/spec/type") {
        "ClusterIP" | "NodePort" => {
            if external.is_empty() {
                "<none>".into()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let mut addresses: Vec<String> = list(service, "/status/loadBalancer/ingress")
                .iter()
                .map(|ingress| or(text(ingress, "/ip"), text(ingress, "/hostname")))
                .filter(|address| !address.is_empty())
                .collect();
            addresses.sort();
            addresses.dedup();
            addresses.extend(external.iter().map(|ip| ip.to_string()));
            if addresses.is_empty() { "<pending>".into() } else { addresses.join(",") }
        }
        "ExternalName" => text(service, "/spec/externalName").to_string(),
        _ => "<unknown>".into(),
    }
}

fn service_ports(service: &Value) -> String {
    let ports: Vec<String> = list(service, "/spec/ports")
        .iter()
        .map(|port| {
            let protocol = or(text(port, "/protocol"), "TCP");
            match int(port, "/nodePort") {
                node_port if node_port > 0 => format!("{}:{node_port}/{protocol}", int(port, "/port")),
                _ => format!("{}/{protocol}", int(port, "/port")),
            }
        })
        .collect();
    if ports.is_empty() { "<none>".into() } else { ports.join(",") }
}

fn service_cells(service: &Value, now: i64) -> Vec<Value> {
    let cluster_ip = list(service, "/spec/clusterIPs")
        .first()
        .and_then(Value::as_str)
        .filter(|ip| !ip.is_empty())
        .unwrap_or_else(|| text(service, "/spec/clusterIP"));
    vec![
        name(service),
        json!(text(service, "/spec/type")),
        json!(or(cluster_ip, "<none>")),
        json!(service_external_ip(service)),
        json!(service_ports(service)),
        json!(format::age(service, now)),
        json!(format::labels(service.pointer("/spec/selector"))),
    ]
}

const ENDPOINTS: &[ColumnDef] =
    &[NAME, col("Endpoints", "string", "Up to three of the addresses (with ports) behind the service."), AGE];

/// Up to three `ip:port` endpoints, then `+ N more...`; `<none>` without subsets.
pub(super) fn endpoints_summary(endpoints: &Value) -> String {
    const SHOWN: usize = 3;
    let subsets = list(endpoints, "/subsets");
    if subsets.is_empty() {
        return "<none>".into();
    }
    let mut shown: Vec<String> = Vec::new();
    let mut total = 0;
    for subset in subsets {
        let addresses = list(subset, "/addresses");
        let ports = list(subset, "/ports");
        if ports.is_empty() {
            total += addresses.len();
            for address in addresses {
                if shown.len() == SHOWN {
                    break;
                }
                shown.push(text(address, "/ip").to_string());
            }
            continue;
        }
        for port in ports {
            total += addresses.len();
            for address in addresses {
                if shown.len() == SHOWN {
                    break;
                }
                let ip = text(address, "/ip");
                let host = if ip.contains(':') { format!("[{ip}]") } else { ip.to_string() };
                shown.push(format!("{host}:{}", int(port, "/port")));
            }
        }
    }
    let joined = shown.join(",");
    if total > SHOWN { format!("{joined} + {} more...", total - SHOWN) } else { joined }
}

fn endpoints_cells(endpoints: &Value, now: i64) -> Vec<Value> {
    vec![name(endpoints), json!(endpoints_summary(endpoints)), json!(format::age(endpoints, now))]
}

const CONFIG_MAP: &[ColumnDef] =
    &[NAME, col("Data", "string", "Number of data and binary data entries."), AGE];

fn config_map_cells(config_map: &Value, now: i64) -> Vec<Value> {
    let entries = format::count(config_map, "/data") + format::count(config_map, "/binaryData");
    vec![name(config_map), json!(entries), json!(format::age(config_map, now))]
}

const SECRET: &[ColumnDef] = &[
    NAME,
    col("Type", "string", "The secret's type."),
    col("Data", "string", "Number of data entries."),
    AGE,
];

fn secret_cells(secret: &Value, now: i64) -> Vec<Value> {
    vec![
        name(secret),
        json!(text(secret, "/type")),
        json!(format::count(secret, "/data")),
        json!(format::age(secret, now)),
    ]
}

const SERVICE_ACCOUNT: &[ColumnDef] =
    &[NAME, col("Secrets", "string", "Number of secrets listed for the service account."), AGE];

fn service_account_cells(account: &Value, now: i64) -> Vec<Value> {
    vec![name(account), json!(format::count(account, "/secrets")), json!(format::age(account, now))]
}

const CLAIM: &[ColumnDef] = &[
    NAME,
    col("Status", "string", "The claim's phase (Terminating while it is deleted)."),
    col("Volume", "string", "The volume bound to the claim."),
    col("Capacity", "string", "Storage of the bound volume."),
    col("Access Modes", "string", "Access modes of the bound volume."),
    col("StorageClass", "string", "The claim's storage class."),
    col("VolumeAttributesClass", "string", "The claim's volume attributes class."),
    AGE,
    wide("VolumeMode", "string", "Filesystem or Block."),
];

fn storage_class_of(object: &Value) -> String {
    match object.pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class") {
        Some(Value::String(class)) => class.clone(),
        _ => text(object, "/spec/storageClassName").to_string(),
    }
}

fn claim_cells(claim: &Value, now: i64) -> Vec<Value> {
    let phase = if deleting(claim) { "Terminating" } else { text(claim, "/status/phase") };
    let volume = text(claim, "/spec/volumeName");
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            format::quantity(claim, "/status/capacity/storage"),
            format::access_modes(list(claim, "/status/accessModes")),
        )
    };
    vec![
        name(claim),
        json!(phase),
        json!(volume),
        json!(capacity),
        json!(modes),
        json!(storage_class_of(claim)),
        json!(or(text(claim, "/spec/volumeAttributesClassName"), "<unset>")),
        json!(format::age(claim, now)),
        json!(or(text(claim, "/spec/volumeMode"), "<unset>")),
    ]
}

const VOLUME: &[ColumnDef] = &[
    NAME,
    col("Capacity", "string", "Storage of the volume."),
    col("Access Modes", "string", "How the volume can be mounted."),
    col("Reclaim Policy", "string", "What happens to the volume when its claim is released."),
    col("Status", "string", "The volume's phase (Terminating while it is deleted)."),
    col("Claim", "string", "The claim bound to the volume, as namespace/name."),
    col("StorageClass", "string", "The volume's storage class."),
    col("VolumeAttributesClass", "string", "The volume's attributes class."),
    col("Reason", "string", "Why the volume is in its phase."),
    AGE,
    wide("VolumeMode", "string", "Filesystem or Block."),
];

fn volume_cells(volume: &Value, now: i64) -> Vec<Value> {
    let claim = match volume.pointer("/spec/claimRef").filter(|c| c.is_object()) {
        Some(claim) => format!("{}/{}", text(claim, "/namespace"), text(claim, "/name")),
        None => String::new(),
    };
    let phase = if deleting(volume) { "Terminating" } else { text(volume, "/status/phase") };
    let class = match volume.pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class") {
        Some(Value::String(class)) => class.clone(),
        _ => text(volume, "/spec/storageClassName").to_string(),
    };
    vec![
        name(volume),
        json!(format::quantity(volume, "/spec/capacity/storage")),
        json!(format::access_modes(list(volume, "/spec/accessModes"))),
        json!(text(volume, "/spec/persistentVolumeReclaimPolicy")),
        json!(phase),
        json!(claim),
        json!(class),
        json!(or(text(volume, "/spec/volumeAttributesClassName"), "<unset>")),
        json!(text(volume, "/status/reason")),
        json!(format::age(volume, now)),
        json!(or(text(volume, "/spec/volumeMode"), "<unset>")),
    ]
}

const POD_TEMPLATE: &[ColumnDef] = &[
    NAME,
    col("Containers", "string", "Names of the template's containers."),
    col("Images", "string", "Images of the template's containers."),
    col("Pod Labels", "string", "Labels of the template's pods."),
];

fn pod_template_cells(template: &Value, _now: i64) -> Vec<Value> {
    let (names, images) = format::containers(template.pointer("/template/spec"));
    vec![
        name(template),
        json!(names),
        json!(images),
        json!(format::labels(template.pointer("/template/metadata/labels"))),
    ]
}

const RESOURCE_QUOTA: &[ColumnDef] = &[
    NAME,
    col("Request", "string", "Used out of hard limits for request-type resources."),
    col("Limit", "string", "Used out of hard limits for limits.* resources."),
    AGE,
];

/// The REQUEST and LIMIT cells of a quota: `resource: used/hard` pairs, sorted by resource,
/// `limits.*` resources in the second.
pub(super) fn quota_usage(quota: &Value) -> (String, String) {
    let mut resources: Vec<&String> = quota
        .pointer("/status/hard")
        .and_then(Value::as_object)
        .map(|hard| hard.keys().collect())
        .unwrap_or_default();
    resources.sort();
    let (mut requests, mut limits) = (Vec::new(), Vec::new());
    for resource in resources {
        let key = resource.replace('~', "~0").replace('/', "~1");
        let entry = format!(
            "{resource}: {}/{}",
            format::quantity(quota, &format!("/status/used/{key}")),
            format::quantity(quota, &format!("/status/hard/{key}"))
        );
        let is_limit = resource.split('.').count() > 1 && resource.split('.').next() == Some("limits");
        if is_limit { limits.push(entry) } else { requests.push(entry) }
    }
    (requests.join(", "), limits.join(", "))
}

fn resource_quota_cells(quota: &Value, now: i64) -> Vec<Value> {
    let (requests, limits) = quota_usage(quota);
    vec![name(quota), json!(requests), json!(limits), json!(format::age(quota, now))]
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_704_067_200; // 2024-01-01T00:00:00Z

    fn pod(status: Value) -> Value {
        json!({
            "metadata": {"name": "p", "creationTimestamp": "2023-12-31T23:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": status,
        })
    }

    fn running(name: &str, ready: bool, restarts: i64) -> Value {
        json!({"name": name, "ready": ready, "restartCount": restarts, "state": {"running": {"startedAt": "2023-12-31T23:00:00Z"}}})
    }

    #[test]
    fn pod_status_column() {
        let cases: Vec<(&str, Value, &str)> = vec![
            ("pending without statuses", json!({"phase": "Pending"}), "Pending"),
            (
                "running",
                json!({"phase": "Running", "containerStatuses": [running("a", true, 0), running("b", true, 0)]}),
                "Running",
            ),
            (
                "image pull",
                json!({"phase": "Pending", "containerStatuses": [
                    {"name": "a", "state": {"waiting": {"reason": "ErrImagePull"}}}, running("b", true, 0)]}),
                "ErrImagePull",
            ),
            (
                "completed",
                json!({"phase": "Succeeded", "containerStatuses": [
                    {"name": "a", "state": {"terminated": {"reason": "Completed", "exitCode": 0}}},
                    {"name": "b", "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}]}),
                "Completed",
            ),
            (
                "completed container beside a running one, pod not ready",
                json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}], "containerStatuses": [
                    {"name": "a", "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}, running("b", true, 0)]}),
                "NotReady",
            ),
            (
                "completed container beside a running one, pod ready",
                json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "containerStatuses": [
                    {"name": "a", "state": {"terminated": {"reason": "Completed", "exitCode": 0}}}, running("b", true, 0)]}),
                "Running",
            ),
            (
                "exit code without reason",
                json!({"phase": "Failed", "containerStatuses": [{"name": "a", "state": {"terminated": {"exitCode": 3}}}]}),
                "ExitCode:3",
            ),
            (
                "signal without reason",
                json!({"phase": "Failed", "containerStatuses": [{"name": "a", "state": {"terminated": {"exitCode": 137, "signal": 9}}}]}),
                "Signal:9",
            ),
            ("evicted", json!({"phase": "Failed", "reason": "Evicted"}), "Evicted"),
            (
                "scheduling gated",
                json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
                "SchedulingGated",
            ),
        ];
        for (what, status, expected) in cases {
            assert_eq!(pod_summary(&pod(status)).0, expected, "{what}");
        }
    }

    #[test]
    fn init_containers_show_progress_and_failures() {
        let with_init = |statuses: Value| {
            let mut object = pod(json!({"phase": "Pending", "initContainerStatuses": statuses}));
            object["spec"]["initContainers"] = json!([{"name": "i1"}, {"name": "i2"}]);
            object
        };
        let done = json!({"name": "i1", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}});
        let pending = json!({"name": "i2", "state": {"waiting": {"reason": "PodInitializing"}}});
        assert_eq!(pod_summary(&with_init(json!([pending.clone(), pending.clone()]))).0, "Init:0/2");
        assert_eq!(pod_summary(&with_init(json!([done.clone(), pending]))).0, "Init:1/2");
        let crash = json!({"name": "i2", "state": {"waiting": {"reason": "CrashLoopBackOff"}}});
        assert_eq!(pod_summary(&with_init(json!([done.clone(), crash]))).0, "Init:CrashLoopBackOff");
        let failed = json!({"name": "i2", "state": {"terminated": {"exitCode": 2}}});
        assert_eq!(pod_summary(&with_init(json!([done.clone(), failed]))).0, "Init:ExitCode:2");
        let oom = json!({"name": "i1", "state": {"terminated": {"exitCode": 1, "reason": "OOMKilled"}}});
        assert_eq!(pod_summary(&with_init(json!([oom]))).0, "Init:OOMKilled");

        // Main containers waiting for init: their PodInitializing reason shows once init is done.
        let mut initialized = with_init(json!([done.clone(), done.clone()]));
        initialized["status"]["containerStatuses"] =
            json!([{"name": "a", "state": {"waiting": {"reason": "PodInitializing"}}}]);
        assert_eq!(pod_summary(&initialized).0, "PodInitializing");

        // A started sidecar (restartable init container) counts as a container.
        let mut sidecar = with_init(json!([
            {"name": "i1", "started": true, "ready": true, "restartCount": 2,
             "lastState": {"terminated": {"finishedAt": "2023-12-31T23:58:00Z"}}, "state": {"running": {}}},
        ]));
        sidecar["spec"]["initContainers"] = json!([{"name": "i1", "restartPolicy": "Always"}]);
        sidecar["status"]["phase"] = json!("Running");
        sidecar["status"]["containerStatuses"] = json!([running("a", true, 0), running("b", false, 1)]);
        let (status, ready, total, restarts, _) = pod_summary(&sidecar);
        assert_eq!((status.as_str(), ready, total, restarts), ("Running", 2, 3, 3));
        assert_eq!(pod_cells(&sidecar, NOW)[3], json!("3 (2m ago)"));
    }

    #[test]
    fn terminating_and_unknown_pods() {
        let mut deleted = pod(json!({"phase": "Running", "containerStatuses": [running("a", true, 0)]}));
        deleted["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        assert_eq!(pod_summary(&deleted).0, "Terminating");
        deleted["status"]["reason"] = json!("NodeLost");
        assert_eq!(pod_summary(&deleted).0, "Unknown");
        let mut finished = pod(json!({"phase": "Succeeded"}));
        finished["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        assert_eq!(pod_summary(&finished).0, "Succeeded");
        assert_eq!(pod_conditions(&finished).unwrap()[0]["reason"], "Succeeded");
        assert!(pod_conditions(&pod(json!({"phase": "Running"}))).is_none());
    }

    #[test]
    fn pod_row_with_restarts_and_wide_columns() {
        let mut object = pod(json!({
            "phase": "Running",
            "podIPs": [{"ip": "10.0.0.7"}],
            "conditions": [{"type": "example.com/gate", "status": "True"}],
            "containerStatuses": [
                running("a", true, 0),
                {"name": "b", "ready": true, "restartCount": 4, "state": {"running": {}},
                 "lastState": {"terminated": {"finishedAt": "2023-12-31T23:59:15Z"}}},
            ],
        }));
        object["spec"]["nodeName"] = json!("node-1");
        object["spec"]["readinessGates"] =
            json!([{"conditionType": "example.com/gate"}, {"conditionType": "example.com/other"}]);
        assert_eq!(
            pod_cells(&object, NOW),
            [
                json!("p"),
                json!("2/2"),
                json!("Running"),
                json!("4 (45s ago)"),
                json!("60m"),
                json!("10.0.0.7"),
                json!("node-1"),
                json!("<none>"),
                json!("1/2"),
            ]
        );
        let bare = pod(json!({"phase": "Pending"}));
        let cells = pod_cells(&bare, NOW);
        assert_eq!(cells[1..4], [json!("0/2"), json!("Pending"), json!("0")]);
        assert_eq!(cells[5..], [json!("<none>"), json!("<none>"), json!("<none>"), json!("<none>")]);
    }

    #[test]
    fn node_status_roles_and_addresses() {
        let node = json!({
            "metadata": {"name": "n", "labels": {
                "node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": "",
                "kubernetes.io/role": "infra", "node-role.kubernetes.io/": "x"}},
            "spec": {"unschedulable": true},
            "status": {
                "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}],
                "addresses": [{"type": "Hostname", "address": "n"}, {"type": "InternalIP", "address": "10.1.0.2"}],
                "nodeInfo": {"kubeletVersion": "v1.34.4", "osImage": "Sim", "containerRuntimeVersion": "sim://1"},
            },
        });
        assert_eq!(node_status(&node), "Ready,SchedulingDisabled");
        assert_eq!(node_roles(&node), "control-plane,infra,worker");
        let cells = node_cells(&node, NOW);
        assert_eq!(
            cells[4..],
            [
                json!("v1.34.4"),
                json!("10.1.0.2"),
                json!("<none>"),
                json!("Sim"),
                json!("<unknown>"),
                json!("sim://1"),
            ]
        );
        let not_ready = json!({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}});
        assert_eq!(node_status(&not_ready), "NotReady");
        assert_eq!(node_status(&json!({})), "Unknown");
        assert_eq!(node_roles(&json!({})), "<none>");
    }

    #[test]
    fn event_rows_of_both_apis() {
        let legacy = json!({
            "apiVersion": "v1", "kind": "Event", "metadata": {"name": "p.1"},
            "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{a}"},
            "reason": "Pulled", "message": " pulled \n", "type": "Normal",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2023-12-31T23:00:00Z", "lastTimestamp": "2023-12-31T23:59:00Z", "count": 3,
        });
        assert_eq!(
            event_cells(&legacy, NOW),
            [
                json!("60s"),
                json!("Normal"),
                json!("Pulled"),
                json!("pod/p"),
                json!("spec.containers{a}"),
                json!("kubelet, n1"),
                json!("pulled"),
                json!("60m"),
                json!(3),
                json!("p.1"),
            ]
        );
        let new_style = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "n.1"},
            "eventTime": "2023-12-31T23:50:00.000000Z", "regarding": {"kind": "Node", "name": "n"},
            "reason": "Started", "note": "up", "type": "Normal", "action": "Start",
            "reportingController": "kubelet", "reportingInstance": "n",
        });
        let cells = event_cells(&new_style, NOW);
        assert_eq!(cells[0], json!("10m"));
        assert_eq!(cells[3], json!("node/n"));
        assert_eq!(cells[5], json!("kubelet, n"));
        assert_eq!(cells[7], json!("10m"));
        assert_eq!(cells[8], json!(1));
        let mut series = new_style.clone();
        series["series"] = json!({"count": 5, "lastObservedTime": "2023-12-31T23:59:30.000000Z"});
        let cells = event_cells(&series, NOW);
        assert_eq!((cells[0].clone(), cells[8].clone()), (json!("30s"), json!(5)));
        let no_name = json!({"apiVersion": "v1", "kind": "Event", "involvedObject": {"kind": "Node"}});
        assert_eq!(event_cells(&no_name, NOW)[3], json!("node"));
        assert_eq!(event_cells(&no_name, NOW)[0], json!("<unknown>"));
    }

    #[test]
    fn service_columns() {
        let service = json!({
            "metadata": {"name": "web"},
            "spec": {"type": "NodePort", "clusterIPs": ["10.0.0.9"], "ports": [
                {"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
                "selector": {"app": "web"}},
        });
        let cells = service_cells(&service, NOW);
        assert_eq!(
            cells[1..5],
            [json!("NodePort"), json!("10.0.0.9"), json!("<none>"), json!("80:30080/TCP,53/UDP")]
        );
        assert_eq!(cells[6], json!("app=web"));
        let balancer = json!({"spec": {"type": "LoadBalancer", "externalIPs": ["1.2.3.4"]},
            "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example"}, {"ip": "5.6.7.8"}]}}});
        assert_eq!(service_external_ip(&balancer), "5.6.7.8,lb.example,1.2.3.4");
        assert_eq!(service_external_ip(&json!({"spec": {"type": "LoadBalancer"}})), "<pending>");
        assert_eq!(
            service_external_ip(&json!({"spec": {"type": "ExternalName", "externalName": "x.example"}})),
            "x.example"
        );
        assert_eq!(service_external_ip(&json!({"spec": {}})), "<unknown>");
    }

    #[test]
    fn endpoints_are_summarized() {
        let endpoints = json!({"subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443}]},
        ]});
        assert_eq!(endpoints_summary(&endpoints), "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...");
        assert_eq!(endpoints_summary(&json!({"subsets": [{"addresses": [{"ip": "fd00::1"}]}]})), "fd00::1");
        assert_eq!(endpoints_summary(&json!({})), "<none>");
    }

    #[test]
    fn claims_volumes_and_quotas() {
        let claim = json!({
            "metadata": {"name": "data", "annotations": {"volume.beta.kubernetes.io/storage-class": "fast"}},
            "spec": {"volumeName": "pv-1", "storageClassName": "slow", "volumeMode": "Filesystem"},
            "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]},
        });
        let cells = claim_cells(&claim, NOW);
        assert_eq!(
            cells[1..7],
            [json!("Bound"), json!("pv-1"), json!("1Gi"), json!("RWO"), json!("fast"), json!("<unset>")]
        );
        assert_eq!(cells[8], json!("Filesystem"));
        let pending =
            json!({"spec": {"resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Pending"}});
        assert_eq!(claim_cells(&pending, NOW)[3], json!(""));

        let volume = json!({"spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain", "claimRef": {"namespace": "ns", "name": "data"}},
            "status": {"phase": "Bound"}});
        let cells = volume_cells(&volume, NOW);
        assert_eq!(
            cells[1..6],
            [json!("5Gi"), json!("RWX"), json!("Retain"), json!("Bound"), json!("ns/data")]
        );

        let quota = json!({"status": {
            "hard": {"pods": "10", "limits.cpu": "4", "requests.cpu": "2"},
            "used": {"pods": "3", "requests.cpu": "500m"}}});
        assert_eq!(
            quota_usage(&quota),
            ("pods: 3/10, requests.cpu: 500m/2".to_string(), "limits.cpu: 0/4".to_string())
        );
    }

    #[test]
    fn counts_of_config_maps_secrets_and_accounts() {
        let config_map = json!({"data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
        assert_eq!(config_map_cells(&config_map, NOW)[1], json!(3));
        let secret = json!({"type": "Opaque", "data": {"a": "MQ=="}});
        assert_eq!(secret_cells(&secret, NOW)[1..3], [json!("Opaque"), json!(1)]);
        assert_eq!(service_account_cells(&json!({}), NOW)[1], json!(0));
        let template = json!({"template": {"metadata": {"labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}});
        assert_eq!(pod_template_cells(&template, NOW)[1..], [json!("c"), json!("i"), json!("app=x")]);
    }
}
