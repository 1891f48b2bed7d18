//! What kube-controller-manager's node lifecycle and pod GC controllers do, for the embedded
//! control plane: a node that stops renewing its Lease becomes `Ready=Unknown`; nodes whose Ready
//! condition is not True get the `not-ready`/`unreachable` taints (NoSchedule and NoExecute), a
//! cordoned node the `unschedulable` taint, and lose them once Ready again; when a node goes
//! silent its pods are marked not ready, and so is any pod updated while its node is not Ready
//! (the kubelet's own NotReady report does not touch pods by itself); pods that do not tolerate a NoExecute taint are
//! evicted (at once, or after their `tolerationSeconds`); pods bound to a node that no longer
//! exists are deleted after a quarantine.

use std::{
    collections::{HashMap, HashSet},
    time::Duration,
};

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::{
    apiserver::{
        api::Api,
        builtin::{TAINT_NOT_READY, TAINT_UNREACHABLE},
        objects,
        options::DeleteOptions,
    },
    storage::{CollectionKey, Mutation, ObjectKey},
};

/// Taint key of a cordoned node.
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// Timing of the node lifecycle controller (kube-controller-manager's defaults by default).
#[derive(Clone, Copy, Debug)]
pub struct NodeLifecycleConfig {
    /// How long a node may go without renewing its Lease before it is `Ready=Unknown`
    /// (`--node-monitor-grace-period`, 40 s upstream).
    pub monitor_grace: Duration,
    /// How long a pod bound to a missing node waits before it is deleted (40 s upstream).
    pub orphan_quarantine: Duration,
    /// How often the controller looks.
    pub period: Duration,
}

impl Default for NodeLifecycleConfig {
    fn default() -> Self {
        Self {
            monitor_grace: Duration::from_secs(40),
            orphan_quarantine: Duration::from_secs(40),
            period: Duration::from_millis(500),
        }
    }
}

/// A node's health as the controller sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeHealth {
    /// Ready condition True and heartbeats recent.
    Ready,
    /// The kubelet reports Ready=False.
    NotReady,
    /// No recent heartbeat (or never reported).
    Unknown,
}

/// The health of a node from its Ready condition and the last time its kubelet was heard from
/// (Lease renewal or condition heartbeat), at `now`.
pub fn node_health(
    node: &Value,
    last_heard: Option<Timestamp>,
    now: Timestamp,
    grace: Duration,
) -> NodeHealth {
    let ready = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|conditions| conditions.iter().find(|c| c["type"] == "Ready"));
    let heard = last_heard
        .or_else(|| ready.and_then(|c| c["lastHeartbeatTime"].as_str()).and_then(|t| t.parse().ok()))
        .or_else(|| objects::meta_str(node, "creationTimestamp").and_then(|t| t.parse().ok()));
    let stale = heard.is_none_or(|heard| now.duration_since(heard).as_secs_f64() > grace.as_secs_f64());
    match ready.and_then(|c| c["status"].as_str()) {
        _ if stale => NodeHealth::Unknown,
        Some("True") => NodeHealth::Ready,
        Some("False") => NodeHealth::NotReady,
        _ => NodeHealth::Unknown,
    }
}

/// The taints a node should carry: its own taints, minus the ones this controller manages,
/// plus the ones its health and cordon call for (keeping `timeAdded` of those already there).
pub fn desired_taints(current: &[Value], health: NodeHealth, unschedulable: bool, now: &str) -> Vec<Value> {
    let managed = |key: &str| matches!(key, TAINT_NOT_READY | TAINT_UNREACHABLE | TAINT_UNSCHEDULABLE);
    let mut taints: Vec<Value> =
        current.iter().filter(|t| !managed(t["key"].as_str().unwrap_or_default())).cloned().collect();
    let mut wanted: Vec<(&str, &str)> = Vec::new();
    match health {
        NodeHealth::Ready => {}
        NodeHealth::NotReady => {
            wanted.extend([(TAINT_NOT_READY, "NoSchedule"), (TAINT_NOT_READY, "NoExecute")])
        }
        NodeHealth::Unknown => {
            wanted.extend([(TAINT_UNREACHABLE, "NoSchedule"), (TAINT_UNREACHABLE, "NoExecute")])
        }
    }
    if unschedulable {
        wanted.push((TAINT_UNSCHEDULABLE, "NoSchedule"));
    }
    for (key, effect) in wanted {
        let existing = current.iter().find(|t| t["key"] == key && t["effect"] == effect);
        taints.push(match existing {
            Some(existing) => existing.clone(),
            None if effect == "NoExecute" => json!({"key": key, "effect": effect, "timeAdded": now}),
            None => json!({"key": key, "effect": effect}),
        });
    }
    taints
}

/// Whether a toleration tolerates a taint (key, operator Exists/Equal, value, effect).
pub fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = toleration["effect"].as_str().unwrap_or_default();
    if !effect.is_empty() && Some(effect) != taint["effect"].as_str() {
        return false;
    }
    let key = toleration["key"].as_str().unwrap_or_default();
    let operator = toleration["operator"].as_str().unwrap_or("Equal");
    if key.is_empty() {
        return operator == "Exists";
    }
    if Some(key) != taint["key"].as_str() {
        return false;
    }
    match operator {
        "Exists" => true,
        _ => toleration["value"].as_str().unwrap_or_default() == taint["value"].as_str().unwrap_or_default(),
    }
}

/// When a pod must be evicted from a node with these NoExecute taints: `Some(now)` when a taint
/// is not tolerated at all, the earliest `timeAdded + tolerationSeconds` when tolerated for a
/// while, `None` when tolerated forever.
pub fn eviction_time(tolerations: &[Value], taints: &[Value], now: Timestamp) -> Option<Timestamp> {
    let mut earliest: Option<Timestamp> = None;
    for taint in taints.iter().filter(|t| t["effect"] == "NoExecute") {
        let matching: Vec<&Value> = tolerations.iter().filter(|t| tolerates(t, taint)).collect();
        if matching.is_empty() {
            return Some(now);
        }
        if matching.iter().any(|t| t["tolerationSeconds"].as_i64().is_none()) {
            continue;
        }
        let seconds =
            matching.iter().filter_map(|t| t["tolerationSeconds"].as_i64()).min().unwrap_or(0).max(0);
        let added = taint["timeAdded"].as_str().and_then(|t| t.parse::<Timestamp>().ok()).unwrap_or(now);
        let due = added.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(seconds)).unwrap_or(added);
        earliest = Some(earliest.map_or(due, |e| e.min(due)));
    }
    earliest
}

fn key(group: &str, resource: &str, namespace: Option<&str>, name: &str) -> ObjectKey {
    ObjectKey {
        group: group.into(),
        resource: resource.into(),
        namespace: namespace.map(str::to_string),
        name: name.to_string(),
    }
}

fn parse_time(value: Option<&str>) -> Option<Timestamp> {
    value.and_then(|t| t.parse().ok())
}

/// Memory of the controller between passes.
#[derive(Default)]
struct Observed {
    orphans: HashMap<String, Timestamp>,
    /// The resourceVersion each pod had at the last pass: a changed pod is "updated", which is
    /// when kube-controller-manager re-checks it against its node's health.
    pod_versions: HashMap<String, u64>,
}

pub(super) async fn run(api: Api, config: NodeLifecycleConfig) {
    let mut observed = Observed::default();
    loop {
        pass(&api, &config, &mut observed).await;
        tokio::time::sleep(config.period).await;
    }
}

async fn pass(api: &Api, config: &NodeLifecycleConfig, observed: &mut Observed) {
    let now = Timestamp::now();
    let now_text = objects::now_rfc3339();
    let (nodes, _) =
        api.store.list(&CollectionKey { group: String::new(), resource: "nodes".into(), namespace: None });
    let (leases, _) = api.store.list(&CollectionKey {
        group: "coordination.k8s.io".into(),
        resource: "leases".into(),
        namespace: Some("kube-node-lease".into()),
    });
    let renewals: HashMap<&str, Timestamp> = leases
        .iter()
        .filter_map(|lease| {
            Some((
                objects::name(lease)?,
                parse_time(lease.pointer("/spec/renewTime").and_then(Value::as_str))?,
            ))
        })
        .collect();
    let mut names = HashSet::new();
    let mut healths: HashMap<String, NodeHealth> = HashMap::new();
    let mut became_unknown = Vec::new();
    let mut no_execute: HashMap<String, Vec<Value>> = HashMap::new();
    for node in &nodes {
        let Some(name) = objects::name(node) else { continue };
        names.insert(name.to_string());
        let health = node_health(node, renewals.get(name).copied(), now, config.monitor_grace);
        healths.insert(name.to_string(), health);
        if health == NodeHealth::Unknown {
            // The controller's own transition (the kubelet went silent while reporting Ready)
            // marks every pod of the node not ready, as kube-controller-manager does.
            if ready_status(node) == Some("True") {
                became_unknown.push(name.to_string());
            }
            mark_node_unknown(api, name, &now_text);
        }
        let unschedulable = node.pointer("/spec/unschedulable").and_then(Value::as_bool).unwrap_or(false);
        let current: Vec<Value> =
            node.pointer("/spec/taints").and_then(Value::as_array).cloned().unwrap_or_default();
        let desired = desired_taints(&current, health, unschedulable, &now_text);
        if desired != current {
            set_taints(api, name, &desired);
        }
        let executing: Vec<Value> = desired.into_iter().filter(|t| t["effect"] == "NoExecute").collect();
        if !executing.is_empty() {
            no_execute.insert(name.to_string(), executing);
        }
    }

    let (pods, _) =
        api.store.list(&CollectionKey { group: String::new(), resource: "pods".into(), namespace: None });
    let mut seen = HashSet::new();
    for pod in &pods {
        let node = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or_default();
        let uid = objects::uid(pod).unwrap_or_default().to_string();
        let version = objects::resource_version(pod).unwrap_or(0);
        let updated = observed.pod_versions.insert(uid.clone(), version) != Some(version);
        seen.insert(uid);
        let unhealthy = healths.get(node).is_some_and(|h| *h != NodeHealth::Ready);
        if became_unknown.iter().any(|n| n == node) || (updated && unhealthy) {
            mark_pod_not_ready(api, pod, &now_text);
        }
        if let Some(taints) = no_execute.get(node) {
            let tolerations =
                pod.pointer("/spec/tolerations").and_then(Value::as_array).cloned().unwrap_or_default();
            if eviction_time(&tolerations, taints, now).is_some_and(|due| due <= now)
                && !objects::is_deleting(pod)
            {
                evict(api, pod).await;
            }
        }
    }
    observed.pod_versions.retain(|uid, _| seen.contains(uid));
    check_orphans(api, config, observed, &pods, &names, now).await;
}

fn ready_status(node: &Value) -> Option<&str> {
    node.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|conditions| conditions.iter().find(|c| c["type"] == "Ready"))
        .and_then(|c| c["status"].as_str())
}

async fn check_orphans(
    api: &Api,
    config: &NodeLifecycleConfig,
    observed: &mut Observed,
    pods: &[std::sync::Arc<Value>],
    nodes: &HashSet<String>,
    now: Timestamp,
) {
    let mut seen = HashSet::new();
    for pod in pods {
        let node = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or_default();
        if node.is_empty() || nodes.contains(node) {
            continue;
        }
        let Some(uid) = objects::uid(pod) else { continue };
        seen.insert(uid.to_string());
        let first = *observed.orphans.entry(uid.to_string()).or_insert(now);
        if now.duration_since(first).as_secs_f64() >= config.orphan_quarantine.as_secs_f64() {
            let Some(def) = api.registry.find("", "v1", "pods") else { return };
            let options = DeleteOptions {
                grace_period_seconds: Some(0),
                precondition_uid: Some(uid.to_string()),
                ..DeleteOptions::default()
            };
            let name = objects::name(pod).unwrap_or_default();
            match api.delete(&def, "v1", objects::namespace(pod), name, &options).await {
                Ok(_) => {
                    tracing::info!(pod = name, node, "deleted a pod bound to a node that no longer exists")
                }
                Err(error) => tracing::debug!(pod = name, %error, "could not delete an orphaned pod"),
            }
        }
    }
    observed.orphans.retain(|uid, _| seen.contains(uid));
}

fn mark_node_unknown(api: &Api, name: &str, now: &str) {
    let _ = api.store.mutate(&key("", "nodes", None, name), |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        let mut next = current.clone();
        let Some(conditions) = next.pointer_mut("/status/conditions").and_then(Value::as_array_mut) else {
            return Ok(Mutation::Keep);
        };
        let mut changed = false;
        for condition in conditions.iter_mut() {
            let kind = condition["type"].as_str().unwrap_or_default();
            if matches!(kind, "Ready" | "MemoryPressure" | "DiskPressure" | "PIDPressure")
                && condition["status"] != "Unknown"
            {
                condition["status"] = json!("Unknown");
                condition["reason"] = json!("NodeStatusUnknown");
                condition["message"] = json!("Kubelet stopped posting node status.");
                condition["lastTransitionTime"] = json!(now);
                changed = true;
            }
        }
        Ok(if changed { Mutation::Put(next) } else { Mutation::Keep })
    });
}

fn set_taints(api: &Api, name: &str, taints: &[Value]) {
    let _ = api.store.mutate(&key("", "nodes", None, name), |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        let mut next = current.clone();
        if !next.get("spec").is_some_and(Value::is_object) {
            next["spec"] = json!({});
        }
        if taints.is_empty() {
            next["spec"].as_object_mut().map(|spec| spec.remove("taints"));
        } else {
            next["spec"]["taints"] = json!(taints);
        }
        Ok(if next == *current { Mutation::Keep } else { Mutation::Put(next) })
    });
}

fn mark_pod_not_ready(api: &Api, pod: &Value, now: &str) {
    let (Some(name), namespace) = (objects::name(pod), objects::namespace(pod)) else { return };
    let _ = api.store.mutate(&key("", "pods", namespace, name), |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        let mut next = current.clone();
        let Some(conditions) = next.pointer_mut("/status/conditions").and_then(Value::as_array_mut) else {
            return Ok(Mutation::Keep);
        };
        let Some(ready) = conditions.iter_mut().find(|c| c["type"] == "Ready" && c["status"] != "False")
        else {
            return Ok(Mutation::Keep);
        };
        ready["status"] = json!("False");
        ready["lastTransitionTime"] = json!(now);
        Ok(Mutation::Put(next))
    });
}

async fn evict(api: &Api, pod: &Value) {
    let Some(def) = api.registry.find("", "v1", "pods") else { return };
    let name = objects::name(pod).unwrap_or_default();
    let namespace = objects::namespace(pod);
    let now = objects::now_rfc3339();
    let _ = api.store.mutate(&key("", "pods", namespace, name), |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        let mut next = current.clone();
        if !next.get("status").is_some_and(Value::is_object) {
            next["status"] = json!({});
        }
        let conditions = next["status"]
            .as_object_mut()
            .map(|status| status.entry("conditions").or_insert_with(|| json!([])));
        if let Some(conditions) = conditions.and_then(Value::as_array_mut)
            && !conditions.iter().any(|c| c["type"] == "DisruptionTarget")
        {
            conditions.push(json!({
                "type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint", "lastProbeTime": null,
                "lastTransitionTime": now,
            }));
        }
        Ok(Mutation::Put(next))
    });
    let options =
        DeleteOptions { precondition_uid: objects::uid(pod).map(str::to_string), ..DeleteOptions::default() };
    match api.delete(&def, "v1", namespace, name, &options).await {
        Ok(_) => tracing::info!(
            pod = name,
            "evicted a pod from a node with a NoExecute taint it does not tolerate"
        ),
        Err(error) => tracing::debug!(pod = name, %error, "taint eviction failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(ready: Option<&str>, heartbeat: &str) -> Value {
        let mut node =
            json!({"metadata": {"name": "n", "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": {}});
        if let Some(ready) = ready {
            node["status"]["conditions"] =
                json!([{"type": "Ready", "status": ready, "lastHeartbeatTime": heartbeat}]);
        }
        node
    }

    #[test]
    fn health_follows_the_ready_condition_and_heartbeats() {
        let now: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let grace = Duration::from_secs(40);
        let recent = "2026-01-01T00:00:50Z";
        assert_eq!(node_health(&node(Some("True"), recent), None, now, grace), NodeHealth::Ready);
        assert_eq!(node_health(&node(Some("False"), recent), None, now, grace), NodeHealth::NotReady);
        assert_eq!(
            node_health(&node(Some("True"), "2026-01-01T00:00:10Z"), None, now, grace),
            NodeHealth::Unknown
        );
        let lease: Timestamp = "2026-01-01T00:00:55Z".parse().unwrap();
        assert_eq!(
            node_health(&node(Some("True"), "2026-01-01T00:00:10Z"), Some(lease), now, grace),
            NodeHealth::Ready,
            "a renewed lease counts as a heartbeat"
        );
        assert_eq!(node_health(&node(None, recent), None, now, grace), NodeHealth::Unknown, "never reported");
    }

    #[test]
    fn taints_follow_health_and_cordon() {
        let now = "2026-01-01T00:00:00Z";
        let own = json!({"key": "dedicated", "value": "db", "effect": "NoSchedule"});
        let initial = vec![own.clone(), json!({"key": TAINT_NOT_READY, "effect": "NoSchedule"})];
        assert_eq!(desired_taints(&initial, NodeHealth::Ready, false, now), vec![own.clone()]);
        let not_ready = desired_taints(std::slice::from_ref(&own), NodeHealth::NotReady, false, now);
        assert_eq!(not_ready.len(), 3);
        assert_eq!(not_ready[2], json!({"key": TAINT_NOT_READY, "effect": "NoExecute", "timeAdded": now}));
        let later = desired_taints(&not_ready, NodeHealth::NotReady, false, "2026-01-01T00:05:00Z");
        assert_eq!(later, not_ready, "timeAdded is kept");
        let unknown = desired_taints(&[], NodeHealth::Unknown, true, now);
        let keys: Vec<_> = unknown
            .iter()
            .map(|t| format!("{}:{}", t["key"].as_str().unwrap(), t["effect"].as_str().unwrap()))
            .collect();
        assert_eq!(
            keys,
            [
                "node.kubernetes.io/unreachable:NoSchedule",
                "node.kubernetes.io/unreachable:NoExecute",
                "node.kubernetes.io/unschedulable:NoSchedule"
            ]
        );
    }

    #[test]
    fn eviction_waits_for_toleration_seconds() {
        let now: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let taint =
            json!({"key": TAINT_NOT_READY, "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"});
        let for_300 = json!({"key": TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300});
        let forever = json!({"operator": "Exists"});
        let due = eviction_time(&[for_300], std::slice::from_ref(&taint), now).unwrap();
        assert_eq!(due.to_string(), "2026-01-01T00:05:00Z");
        assert_eq!(eviction_time(&[forever], std::slice::from_ref(&taint), now), None);
        assert_eq!(eviction_time(&[], std::slice::from_ref(&taint), now), Some(now), "not tolerated");
        let other = json!({"key": "x", "operator": "Equal", "value": "y", "effect": "NoExecute"});
        assert!(!tolerates(&other, &taint));
        assert!(tolerates(&other, &json!({"key": "x", "value": "y", "effect": "NoExecute"})));
    }
}
