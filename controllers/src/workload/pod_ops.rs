//! The writes the workload controllers (CloneSet, Advanced StatefulSet, Advanced DaemonSet) make
//! to pods and PVCs: create (with the pod's PVCs, in slow-start batches), delete, lifecycle state
//! moves, the specified-delete label, hook handlers put back, the `KruisePodReady` condition
//! (also computed for the ContainerRecreateRequest controller), adoption and release. Each is a
//! small patch that touches only the keys it owns (Kruise Rollout and users write other labels on
//! the same pods).

use std::collections::BTreeMap;

use futures::future::join_all;
use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, Pod},
    jiff::Timestamp,
};
use kruise_crds::common::{
    LIFECYCLE_STATE_KEY, LIFECYCLE_TIMESTAMP_KEY,
    well_known::{KRUISE_POD_READY, SPECIFIED_DELETE},
};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions},
};
use serde_json::{Value, json};

use crate::ControllerError;

/// Field manager of the workload controllers' writes.
pub const FIELD_MANAGER: &str = "kruise-manager";

/// The `KruisePodReady` holder keys lifecycle hooks use (upstream `Lifecycle/<hook>`).
pub const PRE_DELETE_HOLDER: &str = "preDeleteHook";
/// The holder key of the inPlaceUpdate hook.
pub const PRE_UPDATE_HOLDER: &str = "preUpdateHook";

fn params() -> PatchParams {
    PatchParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() }
}

fn pods(client: &Client, pod: &Pod) -> Api<Pod> {
    Api::namespaced(client.clone(), &pod.namespace().unwrap_or_default())
}

/// Batches of a slow start: 1, 2, 4, ... up to `total` (upstream `DoItSlowly`).
pub fn slow_start_batches(total: usize) -> Vec<usize> {
    let mut batches = Vec::new();
    let (mut remaining, mut size) = (total, 1usize);
    while remaining > 0 {
        let batch = size.min(remaining);
        batches.push(batch);
        remaining -= batch;
        size = size.saturating_mul(2);
    }
    batches
}

/// Creates `items` in slow-start batches, stopping after the first batch with a failure; returns
/// the results in order (items of batches not attempted are `None`).
pub async fn create_slowly<T, F, Fut, E>(items: Vec<T>, create: F) -> Vec<Option<Result<(), E>>>
where
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = Result<(), E>>,
{
    let total = items.len();
    let mut results: Vec<Option<Result<(), E>>> = (0..total).map(|_| None).collect();
    let mut items = items.into_iter().enumerate();
    for batch in slow_start_batches(total) {
        let chunk: Vec<(usize, T)> = items.by_ref().take(batch).collect();
        let outcomes = join_all(chunk.into_iter().map(|(index, item)| {
            let future = create(item);
            async move { (index, future.await) }
        }))
        .await;
        let failed = outcomes.iter().any(|(_, result)| result.is_err());
        for (index, result) in outcomes {
            results[index] = Some(result);
        }
        if failed {
            break;
        }
    }
    results
}

/// Creates a pod's PVCs that do not exist yet, then the pod.
pub async fn create_pod(
    client: &Client,
    pod: &Pod,
    pvcs: &[PersistentVolumeClaim],
) -> Result<(), ControllerError> {
    let namespace = pod.namespace().unwrap_or_default();
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &namespace);
    let post = PostParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
    for pvc in pvcs {
        match claims.create(&post, pvc).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(error) => return Err(error.into()),
        }
    }
    Api::<Pod>::namespaced(client.clone(), &namespace).create(&post, pod).await?;
    Ok(())
}

/// Deletes a pod (only this incarnation: a UID precondition).
pub async fn delete_pod(client: &Client, pod: &Pod) -> Result<(), ControllerError> {
    let params = DeleteParams {
        preconditions: Some(Preconditions { uid: pod.metadata.uid.clone(), resource_version: None }),
        ..Default::default()
    };
    match pods(client, pod).delete(&pod.name_any(), &params).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// The lifecycle label/annotation patch for `state`.
pub fn lifecycle_patch(state: &str, now: Timestamp) -> Value {
    json!({"metadata": {
        "labels": {LIFECYCLE_STATE_KEY: state},
        "annotations": {LIFECYCLE_TIMESTAMP_KEY: now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()},
    }})
}

/// Moves a pod to a lifecycle state (no-op when it is there). Returns the new resourceVersion.
pub async fn set_lifecycle(
    client: &Client,
    pod: &Pod,
    state: &str,
) -> Result<Option<String>, ControllerError> {
    if pod.labels().get(LIFECYCLE_STATE_KEY).map(String::as_str) == Some(state) {
        return Ok(None);
    }
    let patched = pods(client, pod)
        .patch(&pod.name_any(), &params(), &Patch::Merge(&lifecycle_patch(state, Timestamp::now())))
        .await?;
    Ok(patched.metadata.resource_version)
}

/// Adds `apps.kruise.io/specified-delete=true` (a recreate: the workload's scaling deletes and
/// replaces the pod).
pub async fn mark_specified_delete(client: &Client, pod: &Pod) -> Result<Option<String>, ControllerError> {
    if pod.labels().contains_key(SPECIFIED_DELETE) {
        return Ok(None);
    }
    let patch = json!({"metadata": {"labels": {SPECIFIED_DELETE: "true"}}});
    let patched = pods(client, pod).patch(&pod.name_any(), &params(), &Patch::Merge(&patch)).await?;
    Ok(patched.metadata.resource_version)
}

/// Puts a hook's handler labels and finalizers back on a pod.
pub async fn restore_hook_handlers(
    client: &Client,
    pod: &Pod,
    labels: &BTreeMap<String, String>,
    finalizers: &[String],
) -> Result<(), ControllerError> {
    let mut all_finalizers = pod.finalizers().to_vec();
    for finalizer in finalizers {
        if !all_finalizers.contains(finalizer) {
            all_finalizers.push(finalizer.clone());
        }
    }
    let patch = json!({"metadata": {"labels": labels, "finalizers": all_finalizers, "resourceVersion": pod.resource_version()}});
    pods(client, pod).patch(&pod.name_any(), &params(), &Patch::Merge(&patch)).await?;
    Ok(())
}

/// The holders recorded in a `KruisePodReady=False` condition message (a JSON list of
/// `{"userAgent", "key"}`).
pub fn not_ready_holders(pod: &Pod) -> Vec<(String, String)> {
    let message = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == KRUISE_POD_READY))
        .and_then(|c| c.message.clone())
        .unwrap_or_default();
    let parsed: Vec<Value> = serde_json::from_str(&message).unwrap_or_default();
    parsed
        .iter()
        .filter_map(|v| {
            Some((v.get("userAgent")?.as_str()?.to_string(), v.get("key")?.as_str()?.to_string()))
        })
        .collect()
}

/// One holder in a `KruisePodReady` message; the field order is the JSON key order upstream's Go
/// struct writes (`userAgent` before `key`), which clients compare as a string.
#[derive(serde::Serialize)]
struct ReadinessHolder<'a> {
    #[serde(rename = "userAgent")]
    user_agent: &'a str,
    key: &'a str,
}

/// The `KruisePodReady` message for these holders, as upstream writes it: a JSON list sorted by
/// user agent, then key (pure).
pub fn readiness_message(holders: &[(String, String)]) -> String {
    let mut sorted: Vec<ReadinessHolder<'_>> =
        holders.iter().map(|(agent, key)| ReadinessHolder { user_agent: agent, key }).collect();
    sorted.sort_by(|a, b| (a.user_agent, a.key).cmp(&(b.user_agent, b.key)));
    serde_json::to_string(&sorted).unwrap_or_default()
}

fn has_gate(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .is_some_and(|gates| gates.iter().any(|g| g.condition_type == KRUISE_POD_READY))
}

/// The `KruisePodReady` condition a pod should have given its holders, or None when it
/// already has it (pure).
pub fn desired_kruise_pod_ready(pod: &Pod, holders: &[(String, String)]) -> Option<Value> {
    if !has_gate(pod) {
        return None;
    }
    let current = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == KRUISE_POD_READY));
    let status = if holders.is_empty() { "True" } else { "False" };
    let message = if holders.is_empty() { String::new() } else { readiness_message(holders) };
    if current.is_some_and(|c| c.status == status && c.message.clone().unwrap_or_default() == message) {
        return None;
    }
    let now = Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    // The message is always written (null removes it in the strategic merge): a condition
    // turning True must not keep the holders of its False days, or the next read of the
    // holders would bring them back.
    let message = if message.is_empty() { Value::Null } else { json!(message) };
    Some(json!({"type": KRUISE_POD_READY, "status": status, "lastTransitionTime": now, "message": message}))
}

/// Adds or removes a `KruisePodReady` holder (a lifecycle hook keeping the pod NotReady), and
/// sets the condition True when no holder is left (also for a new pod that has the gate but no
/// condition yet).
pub async fn set_kruise_pod_ready(
    client: &Client,
    pod: &Pod,
    holder: Option<(&str, bool)>,
) -> Result<bool, ControllerError> {
    let mut holders = not_ready_holders(pod);
    if let Some((key, hold)) = holder {
        let entry = ("Lifecycle".to_string(), key.to_string());
        holders.retain(|h| *h != entry);
        if hold {
            holders.push(entry);
        }
    }
    let Some(condition) = desired_kruise_pod_ready(pod, &holders) else { return Ok(false) };
    let patch = json!({"metadata": {"uid": pod.metadata.uid}, "status": {"conditions": [condition]}});
    match pods(client, pod).patch_status(&pod.name_any(), &params(), &Patch::Strategic(&patch)).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => Ok(false),
        Err(error) => Err(error.into()),
    }
}

/// Makes `owner` (the workload's controller reference) the controller of an orphan pod (only if
/// the pod is still as read: the patch carries its resourceVersion).
pub async fn adopt(
    client: &Client,
    pod: &Pod,
    owner: k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference,
) -> Result<(), ControllerError> {
    let mut references = pod.owner_references().to_vec();
    references.push(owner);
    let patch =
        json!({"metadata": {"ownerReferences": references, "resourceVersion": pod.resource_version()}});
    pods(client, pod).patch(&pod.name_any(), &params(), &Patch::Merge(&patch)).await?;
    Ok(())
}

/// Drops the workload's controller reference (`owner_uid`) from a pod it no longer selects.
pub async fn release(client: &Client, pod: &Pod, owner_uid: &str) -> Result<(), ControllerError> {
    let references: Vec<_> = pod.owner_references().iter().filter(|r| r.uid != owner_uid).cloned().collect();
    let patch =
        json!({"metadata": {"ownerReferences": references, "resourceVersion": pod.resource_version()}});
    match pods(client, pod).patch(&pod.name_any(), &params(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{PodCondition, PodReadinessGate, PodSpec, PodStatus};

    use super::*;

    #[test]
    fn slow_start_doubles() {
        assert_eq!(slow_start_batches(0), Vec::<usize>::new());
        assert_eq!(slow_start_batches(1), [1]);
        assert_eq!(slow_start_batches(10), [1, 2, 4, 3]);
    }

    #[tokio::test]
    async fn slow_start_stops_after_a_failing_batch() {
        let results = create_slowly((0..10).collect::<Vec<i32>>(), |i| async move {
            if i == 2 { Err("boom") } else { Ok(()) }
        })
        .await;
        let attempted = results.iter().filter(|r| r.is_some()).count();
        assert_eq!(attempted, 3, "batches 1 and 2 ran, batch of 4 never started");
        assert!(results[2].as_ref().is_some_and(|r| r.is_err()));
    }

    #[test]
    fn kruise_pod_ready_follows_its_holders() {
        let mut pod = Pod {
            spec: Some(PodSpec {
                readiness_gates: Some(vec![PodReadinessGate { condition_type: KRUISE_POD_READY.into() }]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let initial = desired_kruise_pod_ready(&pod, &[]).unwrap();
        assert_eq!(initial["status"], "True");
        let held = desired_kruise_pod_ready(&pod, &[("Lifecycle".into(), PRE_DELETE_HOLDER.into())]).unwrap();
        assert_eq!(held["status"], "False");
        pod.status = Some(PodStatus {
            conditions: Some(vec![PodCondition {
                type_: KRUISE_POD_READY.into(),
                status: "False".into(),
                message: held["message"].as_str().map(str::to_string),
                ..Default::default()
            }]),
            ..Default::default()
        });
        assert_eq!(not_ready_holders(&pod), [("Lifecycle".to_string(), PRE_DELETE_HOLDER.to_string())]);
        assert!(desired_kruise_pod_ready(&pod, &not_ready_holders(&pod)).is_none(), "already so");
        let released = desired_kruise_pod_ready(&pod, &[]).unwrap();
        assert_eq!(released["status"], "True");
        assert!(
            released.get("message").is_some_and(Value::is_null),
            "releasing the last holder removes the message: {released}"
        );
        assert!(desired_kruise_pod_ready(&Pod::default(), &[]).is_none(), "no gate, no condition");
    }

    #[test]
    fn readiness_messages_are_written_as_upstream_writes_them() {
        let holders = [
            ("Lifecycle".to_string(), "preDelete".to_string()),
            ("ContainerRecreateRequest".to_string(), "ns/b".to_string()),
            ("ContainerRecreateRequest".to_string(), "ns/a".to_string()),
        ];
        assert_eq!(
            readiness_message(&holders),
            concat!(
                r#"[{"userAgent":"ContainerRecreateRequest","key":"ns/a"},"#,
                r#"{"userAgent":"ContainerRecreateRequest","key":"ns/b"},"#,
                r#"{"userAgent":"Lifecycle","key":"preDelete"}]"#
            )
        );
        assert_eq!(readiness_message(&[]), "[]");
    }
}
