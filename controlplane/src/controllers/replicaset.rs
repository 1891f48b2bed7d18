//! A minimal apps/v1 ReplicaSet controller, as kube-controller-manager's: keeps `spec.replicas`
//! active pods made from the template (owned by the ReplicaSet), removes the surplus in the
//! order kube-controller-manager does (unscheduled, pending, not ready, newest first), and
//! reports `replicas`, `readyReplicas`, `availableReplicas` and `observedGeneration`. Deployments
//! (see `deployment.rs`) scale their ReplicaSets; this controller makes their pods.

use std::cmp::Reverse;

use serde_json::{Value, json};

use super::{CONTROLLER_TICK, workload};
use crate::{
    apiserver::{api::Api, objects, options::DeleteOptions},
    storage::{CollectionKey, ObjectKey},
};

/// The field manager of this controller's writes.
const FIELD_MANAGER: &str = "replicaset-controller";

/// Most pods made or removed per ReplicaSet in one pass (kube-controller-manager's burst is 500).
const BURST: usize = 500;

/// The pod's `controller.kubernetes.io/pod-deletion-cost` (0 when absent or not an int32, as
/// kube-controller-manager reads it).
fn deletion_cost(pod: &Value) -> i32 {
    pod.pointer("/metadata/annotations/controller.kubernetes.io~1pod-deletion-cost")
        .and_then(Value::as_str)
        .and_then(|value| value.parse::<i32>().ok())
        .unwrap_or(0)
}

/// The names of the `surplus` pods to remove first (pure): pods not yet on a node, then
/// pending, then not ready, then the lowest `controller.kubernetes.io/pod-deletion-cost`, then
/// the most recently created, as kube-controller-manager ranks them for a scale-down.
pub fn pods_to_remove(pods: &[&Value], surplus: usize) -> Vec<String> {
    let mut ranked: Vec<&Value> = pods.to_vec();
    ranked.sort_by_key(|pod| {
        let scheduled = pod.pointer("/spec/nodeName").and_then(Value::as_str).is_some_and(|n| !n.is_empty());
        let phase_rank = match workload::pod_phase(pod) {
            "Pending" => 0,
            "Unknown" => 1,
            _ => 2,
        };
        let created = objects::meta_str(pod, "creationTimestamp").unwrap_or_default().to_string();
        (scheduled, phase_rank, workload::is_pod_ready(pod), deletion_cost(pod), Reverse(created))
    });
    ranked.into_iter().take(surplus).filter_map(|pod| objects::name(pod).map(str::to_string)).collect()
}

pub(super) async fn run(api: Api) {
    let collection = CollectionKey { group: "apps".into(), resource: "replicasets".into(), namespace: None };
    loop {
        let (all, _) = api.store.list(&collection);
        for replica_set in all.iter().filter(|rs| !objects::is_deleting(rs)) {
            if let Err(error) = sync(&api, replica_set).await {
                let name = objects::name(replica_set).unwrap_or_default();
                tracing::debug!(replicaset = name, %error, "replicaset sync failed");
            }
        }
        tokio::time::sleep(CONTROLLER_TICK).await;
    }
}

async fn sync(api: &Api, replica_set: &Value) -> Result<(), String> {
    let namespace = objects::namespace(replica_set).unwrap_or_default().to_string();
    let name = objects::name(replica_set).unwrap_or_default().to_string();
    let uid = objects::uid(replica_set).unwrap_or_default().to_string();
    let owned = workload::owned_by(api, "", "pods", &namespace, &uid);
    let active: Vec<&Value> =
        owned.iter().map(|pod| &**pod).filter(|pod| workload::is_pod_active(pod)).collect();
    let desired = workload::desired_replicas(replica_set) as usize;

    if active.len() < desired {
        let template = replica_set.pointer("/spec/template").cloned().unwrap_or(json!({}));
        for _ in 0..(desired - active.len()).min(BURST) {
            let owner = workload::controller_reference("apps/v1", "ReplicaSet", replica_set);
            workload::create_pod(api, &namespace, &template, &format!("{name}-"), owner, FIELD_MANAGER)
                .await?;
        }
    } else if active.len() > desired {
        let pod_def = api.registry.find("", "v1", "pods").ok_or("pods not served")?;
        for pod_name in pods_to_remove(&active, (active.len() - desired).min(BURST)) {
            match api.delete(&pod_def, "v1", Some(&namespace), &pod_name, &DeleteOptions::default()).await {
                Ok(_) => {}
                Err(error) if error.code == 404 => {}
                Err(error) => return Err(error.to_string()),
            }
        }
    }

    let min_ready = replica_set.pointer("/spec/minReadySeconds").and_then(Value::as_i64).unwrap_or(0);
    let now = workload::unix_now();
    let count = |keep: &dyn Fn(&Value) -> bool| active.iter().filter(|pod| keep(pod)).count();
    let status = json!({
        "replicas": active.len(),
        "fullyLabeledReplicas": active.len(),
        "readyReplicas": count(&workload::is_pod_ready),
        "availableReplicas": count(&|pod| workload::is_pod_available(pod, min_ready, now)),
        "observedGeneration": objects::generation(replica_set),
    });
    let key =
        ObjectKey { group: "apps".into(), resource: "replicasets".into(), namespace: Some(namespace), name };
    workload::merge_status(api, &key, &status);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, node: Option<&str>, phase: &str, ready: bool, created: &str) -> Value {
        json!({
            "metadata": {"name": name, "creationTimestamp": created},
            "spec": {"nodeName": node},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
        })
    }

    #[test]
    fn surplus_pods_are_removed_least_useful_first() {
        let unscheduled = pod("unscheduled", None, "Pending", false, "2026-12-03T10:00:00Z");
        let pending = pod("pending", Some("n1"), "Pending", false, "2026-12-03T10:00:00Z");
        let not_ready = pod("not-ready", Some("n1"), "Running", false, "2026-12-03T10:00:00Z");
        let ready_old = pod("ready-old", Some("n1"), "Running", true, "2026-12-03T09:00:00Z");
        let ready_new = pod("ready-new", Some("n1"), "Running", true, "2026-12-03T11:00:00Z");
        let all = [&ready_old, &ready_new, &not_ready, &pending, &unscheduled];
        let cases: [(usize, &[&str]); 4] = [
            (0, &[]),
            (1, &["unscheduled"]),
            (3, &["unscheduled", "pending", "not-ready"]),
            (5, &["unscheduled", "pending", "not-ready", "ready-new", "ready-old"]),
        ];
        for (surplus, expected) in cases {
            assert_eq!(pods_to_remove(&all, surplus), expected, "surplus {surplus}");
        }
    }

    #[test]
    fn a_lower_deletion_cost_goes_first_among_ready_pods() {
        let mut cheap = pod("cheap-old", Some("n1"), "Running", true, "2026-12-03T09:00:00Z");
        cheap["metadata"]["annotations"] = json!({"controller.kubernetes.io/pod-deletion-cost": "100"});
        let mut dear = pod("dear-new", Some("n1"), "Running", true, "2026-12-03T11:00:00Z");
        dear["metadata"]["annotations"] = json!({"controller.kubernetes.io/pod-deletion-cost": "200"});
        let plain = pod("plain", Some("n1"), "Running", true, "2026-12-03T10:00:00Z");
        let not_ready = pod("not-ready", Some("n1"), "Running", false, "2026-12-03T10:00:00Z");
        assert_eq!(
            pods_to_remove(&[&dear, &cheap, &plain, &not_ready], 3),
            ["not-ready", "plain", "cheap-old"]
        );
    }
}
