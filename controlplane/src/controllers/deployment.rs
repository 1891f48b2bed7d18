//! A minimal apps/v1 Deployment controller, as kube-controller-manager's: one ReplicaSet per
//! pod template (named `<deployment>-<pod-template-hash>`, the hash also in its selector and
//! pods' labels), rolled with `RollingUpdate` (maxSurge / maxUnavailable, 25 % each by default)
//! or `Recreate`, held while `paused`, and a status summed from its ReplicaSets with the
//! `Available` and `Progressing` conditions. The ReplicaSet controller makes the pods.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{CONTROLLER_TICK, workload};
use crate::{
    apiserver::{
        api::{Api, PatchType},
        objects,
        subresources::int_or_percent,
    },
    storage::{CollectionKey, ObjectKey},
};

/// The field manager of this controller's writes.
const FIELD_MANAGER: &str = "deployment-controller";

/// The label (and selector term) that ties a ReplicaSet and its pods to one pod template.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";

/// The annotation carrying a ReplicaSet's revision within its Deployment.
const REVISION: &str = "deployment.kubernetes.io/revision";

/// The `pod-template-hash` of a template (pure): FNV-1a (32 bit) of its JSON, its decimal
/// digits mapped to the alphabet kube-controller-manager uses for the hash (no vowels).
pub fn template_hash(template: &Value) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let hash = template
        .to_string()
        .bytes()
        .fold(0x811c_9dc5_u32, |hash, byte| (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193));
    hash.to_string().bytes().map(|digit| ALPHABET[usize::from(digit) % ALPHABET.len()] as char).collect()
}

/// One ReplicaSet as the rollout arithmetic sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaSetCounts {
    /// Its name.
    pub name: String,
    /// `spec.replicas`.
    pub spec: i64,
    /// `status.availableReplicas`.
    pub available: i64,
    /// `status.replicas` (pods that still exist).
    pub existing: i64,
}

/// How a Deployment replaces its pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// New pods first, within bounds.
    RollingUpdate {
        /// Pods allowed above the desired count.
        max_surge: i64,
        /// Pods allowed below the desired count that are not available.
        max_unavailable: i64,
    },
    /// Every old pod gone before a new one is made.
    Recreate,
}

/// The `spec.replicas` targets of a rollout step: the new ReplicaSet's, then each old one's by
/// name.
pub type ScalePlan = (i64, Vec<(String, i64)>);

/// The `spec.replicas` each ReplicaSet should have next (pure): the new one's, then each old
/// one's by name, for `desired` replicas. Old ReplicaSets are listed oldest first and are
/// scaled down in that order.
pub fn plan(
    desired: i64,
    strategy: Strategy,
    new: &ReplicaSetCounts,
    old: &[ReplicaSetCounts],
) -> (i64, Vec<(String, i64)>) {
    let old_spec: i64 = old.iter().map(|rs| rs.spec).sum();
    match strategy {
        Strategy::Recreate => {
            let old_pods: i64 = old.iter().map(|rs| rs.existing).sum();
            let new_target = if old_spec == 0 && old_pods == 0 { desired } else { new.spec.min(desired) };
            (new_target, old.iter().map(|rs| (rs.name.clone(), 0)).collect())
        }
        Strategy::RollingUpdate { max_surge, max_unavailable } => {
            // Both zero would never progress; the API refuses it, treat it as one unavailable.
            let max_unavailable = if max_surge == 0 && max_unavailable == 0 { 1 } else { max_unavailable };
            let new_target = if new.spec >= desired || old_spec == 0 {
                desired
            } else {
                let room = (desired + max_surge) - (new.spec + old_spec);
                (new.spec + room.max(0)).min(desired)
            };
            let min_available = desired - max_unavailable;
            let new_unavailable = (new_target - new.available).max(0);
            let mut scale_down = (new_target + old_spec - min_available - new_unavailable).max(0);
            let old_targets = old
                .iter()
                .map(|rs| {
                    let cut = scale_down.min(rs.spec);
                    scale_down -= cut;
                    (rs.name.clone(), rs.spec - cut)
                })
                .collect();
            (new_target, old_targets)
        }
    }
}

/// The rollout strategy of a Deployment spec for `desired` replicas.
fn strategy(spec: &Value, desired: i64) -> Strategy {
    if spec.pointer("/strategy/type").and_then(Value::as_str) == Some("Recreate") {
        return Strategy::Recreate;
    }
    let total = i32::try_from(desired).unwrap_or(i32::MAX);
    let field = |name: &str| spec.pointer(&format!("/strategy/rollingUpdate/{name}")).cloned();
    let max_surge = int_or_percent(&field("maxSurge").unwrap_or(json!("25%")), total, true);
    let max_unavailable = int_or_percent(&field("maxUnavailable").unwrap_or(json!("25%")), total, false);
    Strategy::RollingUpdate { max_surge: i64::from(max_surge), max_unavailable: i64::from(max_unavailable) }
}

pub(super) async fn run(api: Api) {
    let collection = CollectionKey { group: "apps".into(), resource: "deployments".into(), namespace: None };
    loop {
        let (all, _) = api.store.list(&collection);
        for deployment in all.iter().filter(|d| !objects::is_deleting(d)) {
            if let Err(error) = sync(&api, deployment).await {
                let name = objects::name(deployment).unwrap_or_default();
                tracing::debug!(deployment = name, %error, "deployment sync failed");
            }
        }
        tokio::time::sleep(CONTROLLER_TICK).await;
    }
}

fn counts(replica_set: &Value) -> ReplicaSetCounts {
    let status =
        |field: &str| replica_set.pointer(&format!("/status/{field}")).and_then(Value::as_i64).unwrap_or(0);
    ReplicaSetCounts {
        name: objects::name(replica_set).unwrap_or_default().to_string(),
        spec: workload::desired_replicas(replica_set),
        available: status("availableReplicas"),
        existing: status("replicas"),
    }
}

fn revision(replica_set: &Value) -> i64 {
    replica_set
        .pointer(&format!("/metadata/annotations/{}", REVISION.replace('/', "~1")))
        .and_then(Value::as_str)
        .and_then(|revision| revision.parse().ok())
        .unwrap_or(0)
}

async fn sync(api: &Api, deployment: &Value) -> Result<(), String> {
    let namespace = objects::namespace(deployment).unwrap_or_default().to_string();
    let name = objects::name(deployment).unwrap_or_default().to_string();
    let uid = objects::uid(deployment).unwrap_or_default().to_string();
    let spec = deployment.get("spec").cloned().unwrap_or(json!({}));
    let desired = workload::desired_replicas(deployment);
    let template = spec.get("template").cloned().unwrap_or(json!({}));
    let hash = template_hash(&template);
    let rs_def = api.registry.find("apps", "v1", "replicasets").ok_or("replicasets not served")?;

    // The store's shared copies: this runs every tick for every Deployment, nothing is cloned.
    let mut owned: Vec<Arc<Value>> = workload::owned_by(api, "apps", "replicasets", &namespace, &uid);
    owned.retain(|rs| !objects::is_deleting(rs));
    owned.sort_by_key(|rs| (revision(rs), objects::meta_str(rs, "creationTimestamp").map(str::to_string)));
    let is_new = |rs: &Value| objects::labels(rs).get(POD_TEMPLATE_HASH) == Some(&hash);
    let old: Vec<ReplicaSetCounts> = owned.iter().filter(|rs| !is_new(rs)).map(|rs| counts(rs)).collect();
    let paused = spec.get("paused").and_then(Value::as_bool).unwrap_or(false);
    let strategy = strategy(&spec, desired);

    let new = match owned.iter().find(|rs| is_new(rs)) {
        Some(rs) => Some(rs.clone()),
        None if paused => None,
        None => {
            let empty = ReplicaSetCounts { name: String::new(), spec: 0, available: 0, existing: 0 };
            let (initial, _) = plan(desired, strategy, &empty, &old);
            let next_revision = owned.iter().map(|rs| revision(rs)).max().unwrap_or(0) + 1;
            let replica_set = new_replica_set(deployment, &template, &hash, initial, next_revision);
            let options = workload::write_options(FIELD_MANAGER);
            match api.create(&rs_def, "v1", Some(&namespace), replica_set, &options).await {
                Ok(written) => Some(Arc::new(written.object)),
                Err(error) if error.code == 409 => None,
                Err(error) => return Err(error.to_string()),
            }
        }
    };

    if let (Some(new), false) = (&new, paused) {
        let (new_target, old_targets) = plan(desired, strategy, &counts(new), &old);
        let mut scales = vec![(counts(new), new_target)];
        scales.extend(old.iter().cloned().zip(old_targets.into_iter().map(|(_, target)| target)));
        for (replica_set, target) in scales.into_iter().filter(|(rs, target)| rs.spec != *target) {
            let patch = json!({"spec": {"replicas": target}});
            let options = workload::write_options(FIELD_MANAGER);
            api.patch(
                &rs_def,
                "v1",
                Some(&namespace),
                &replica_set.name,
                None,
                PatchType::Merge,
                patch,
                &options,
            )
            .await
            .map_err(|error| error.to_string())?;
        }
    }

    let sum = |field: &str| -> i64 {
        owned
            .iter()
            .map(|rs| rs.pointer(&format!("/status/{field}")).and_then(Value::as_i64).unwrap_or(0))
            .sum()
    };
    let updated = new.as_ref().map(|rs| counts(rs).existing).unwrap_or(0);
    let available = sum("availableReplicas");
    let max_unavailable = match strategy {
        Strategy::RollingUpdate { max_unavailable, .. } => max_unavailable,
        Strategy::Recreate => 0,
    };
    let existing = sum("replicas");
    let complete = updated == desired && existing == desired && available == desired;
    let minimum_available = available >= desired - max_unavailable;
    let conditions = vec![
        condition(
            deployment,
            "Available",
            minimum_available,
            if minimum_available {
                ("MinimumReplicasAvailable", "Deployment has minimum availability.")
            } else {
                ("MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
            },
        ),
        condition(
            deployment,
            "Progressing",
            true,
            if complete {
                ("NewReplicaSetAvailable", "ReplicaSet has successfully progressed.")
            } else {
                ("ReplicaSetUpdated", "ReplicaSet is progressing.")
            },
        ),
    ];
    let status = json!({
        "observedGeneration": objects::generation(deployment),
        "replicas": existing,
        "updatedReplicas": updated,
        "readyReplicas": sum("readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": (desired - available).max(0),
        "conditions": conditions,
    });
    let key =
        ObjectKey { group: "apps".into(), resource: "deployments".into(), namespace: Some(namespace), name };
    workload::merge_status(api, &key, &status);
    Ok(())
}

/// The ReplicaSet of `template`: the template's labels plus the hash, on it, its selector and
/// its pods.
fn new_replica_set(deployment: &Value, template: &Value, hash: &str, replicas: i64, revision: i64) -> Value {
    let name = objects::name(deployment).unwrap_or_default();
    let mut template = template.clone();
    template["metadata"]["labels"][POD_TEMPLATE_HASH] = json!(hash);
    let mut selector = deployment.pointer("/spec/selector").cloned().unwrap_or(json!({}));
    selector["matchLabels"][POD_TEMPLATE_HASH] = json!(hash);
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": format!("{name}-{hash}"),
            "labels": template["metadata"]["labels"].clone(),
            "annotations": {
                REVISION: revision.to_string(),
                "deployment.kubernetes.io/desired-replicas": workload::desired_replicas(deployment).to_string(),
            },
            "ownerReferences": [workload::controller_reference("apps/v1", "Deployment", deployment)],
        },
        "spec": {
            "replicas": replicas,
            "minReadySeconds": deployment.pointer("/spec/minReadySeconds").cloned().unwrap_or(json!(0)),
            "selector": selector,
            "template": template,
        },
    })
}

/// A condition of `kind`, keeping the stored one's transition time when its status and reason
/// did not change.
fn condition(deployment: &Value, kind: &str, status: bool, (reason, message): (&str, &str)) -> Value {
    let status = if status { "True" } else { "False" };
    let stored = deployment
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|conditions| conditions.iter().find(|c| c["type"] == kind));
    if let Some(stored) = stored.filter(|c| c["status"] == status && c["reason"] == reason) {
        return stored.clone();
    }
    let now = objects::now_rfc3339();
    json!({"type": kind, "status": status, "reason": reason, "message": message,
           "lastUpdateTime": now, "lastTransitionTime": now})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(name: &str, spec: i64, available: i64) -> ReplicaSetCounts {
        ReplicaSetCounts { name: name.into(), spec, available, existing: spec }
    }

    #[test]
    fn template_hash_is_stable_and_follows_the_template() {
        let a = json!({"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}});
        let b = json!({"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "nginx:2"}]}});
        assert_eq!(template_hash(&a), template_hash(&a.clone()));
        assert_ne!(template_hash(&a), template_hash(&b));
        assert!(template_hash(&a).bytes().all(|c| b"bcdfghjklmnpqrstvwxz2456789".contains(&c)));
    }

    #[test]
    fn rolling_update_keeps_within_surge_and_unavailability() {
        let rolling = Strategy::RollingUpdate { max_surge: 1, max_unavailable: 1 };
        let cases: Vec<(&str, i64, ReplicaSetCounts, Vec<ReplicaSetCounts>, ScalePlan)> = vec![
            ("first rollout: all at once", 4, rs("new", 0, 0), vec![], (4, vec![])),
            ("scale up without old pods", 6, rs("new", 4, 4), vec![], (6, vec![])),
            ("scale down without old pods", 2, rs("new", 4, 4), vec![], (2, vec![])),
            (
                "start: surge one, drop one old",
                4,
                rs("new", 0, 0),
                vec![rs("old", 4, 4)],
                (1, vec![("old".into(), 3)]),
            ),
            (
                "new pod not yet available: old may not drop further",
                4,
                rs("new", 2, 0),
                vec![rs("old", 3, 3)],
                (2, vec![("old".into(), 3)]),
            ),
            (
                "new pods available: old drops",
                4,
                rs("new", 2, 2),
                vec![rs("old", 3, 3)],
                (2, vec![("old".into(), 1)]),
            ),
            (
                "oldest scaled down first",
                4,
                rs("new", 4, 4),
                vec![rs("oldest", 1, 1), rs("older", 2, 2)],
                (4, vec![("oldest".into(), 0), ("older".into(), 0)]),
            ),
        ];
        for (name, desired, new, old, expected) in cases {
            assert_eq!(plan(desired, rolling, &new, &old), expected, "{name}");
        }
    }

    #[test]
    fn recreate_waits_for_old_pods_to_be_gone() {
        let old_running = ReplicaSetCounts { name: "old".into(), spec: 3, available: 3, existing: 3 };
        let old_stopping = ReplicaSetCounts { name: "old".into(), spec: 0, available: 0, existing: 2 };
        let old_gone = ReplicaSetCounts { name: "old".into(), spec: 0, available: 0, existing: 0 };
        let new = rs("new", 0, 0);
        assert_eq!(plan(3, Strategy::Recreate, &new, &[old_running]), (0, vec![("old".into(), 0)]));
        assert_eq!(plan(3, Strategy::Recreate, &new, &[old_stopping]), (0, vec![("old".into(), 0)]));
        assert_eq!(plan(3, Strategy::Recreate, &new, &[old_gone]), (3, vec![("old".into(), 0)]));
    }

    #[test]
    fn strategy_defaults_to_a_quarter_each_way() {
        assert_eq!(strategy(&json!({}), 8), Strategy::RollingUpdate { max_surge: 2, max_unavailable: 2 });
        assert_eq!(strategy(&json!({}), 1), Strategy::RollingUpdate { max_surge: 1, max_unavailable: 0 });
        let explicit = json!({"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "50%"}}});
        assert_eq!(strategy(&explicit, 4), Strategy::RollingUpdate { max_surge: 0, max_unavailable: 2 });
        assert_eq!(strategy(&json!({"strategy": {"type": "Recreate"}}), 4), Strategy::Recreate);
    }
}
