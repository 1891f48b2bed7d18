//! The pod readiness controller (upstream `pkg/controller/podreadiness`): the pod webhook gives
//! new pods the `KruisePodReady` readiness gate (Kruise-owned pods, or every pod with the
//! `KruisePodReadinessGate` feature gate on), and a pod with a readiness gate is Ready only once
//! a condition of that type is `True`. Kruise's workload controllers manage that condition on
//! their own pods (and hold it `False` while a lifecycle hook asks for it, so this controller
//! leaves pods a Kruise workload controls alone, where upstream would race them); this
//! controller adds it, `True`, to every other pod that carries the gate and has no such
//! condition yet, as upstream does, so that a Deployment's or a Job's pods still become Ready. Afterwards the condition belongs to whoever changes it (PodUnavailableBudget,
//! in-place updates).

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api, Client, ResourceExt,
    api::{Patch, PatchParams},
};
use serde_json::json;

use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        harness::QueueController,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "podreadiness";
/// Concurrent reconciles (upstream's 3).
pub const WORKERS: usize = 3;
/// The readiness gate and condition type.
pub const KRUISE_POD_READY: &str = "KruisePodReady";
/// The API group of the workloads that manage the condition on their own pods.
const APPS_GROUP: &str = "apps.kruise.io";

/// Whether the pod needs its `KruisePodReady` condition added (pure): not being deleted, not
/// controlled by a Kruise workload, with the readiness gate, and no condition of that type yet.
pub fn needs_condition(pod: &Pod) -> bool {
    let kruise_controlled = pod.metadata.owner_references.as_ref().is_some_and(|owners| {
        owners.iter().any(|owner| {
            owner.controller == Some(true)
                && owner.api_version.split_once('/').map(|(group, _)| group) == Some(APPS_GROUP)
        })
    });
    if kruise_controlled {
        return false;
    }
    let spec = pod.spec.as_ref();
    let gated = spec
        .and_then(|spec| spec.readiness_gates.as_ref())
        .is_some_and(|gates| gates.iter().any(|gate| gate.condition_type == KRUISE_POD_READY));
    let has_condition = pod
        .status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .is_some_and(|conditions| conditions.iter().any(|condition| condition.type_ == KRUISE_POD_READY));
    pod.metadata.deletion_timestamp.is_none() && gated && !has_condition
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or_default(), pod.name_any())
}

/// Runs the controller until the future is dropped; `on_synced` is called once the shared pod
/// cache holds every pod. A pod needing the condition is queued from its change and read again
/// from the cache when its turn comes.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let pods = caches.informer::<Pod>();
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    controller.watch(&pods, |event, queue| {
        if let CacheEvent::Applied { new, .. } = event
            && needs_condition(new)
        {
            queue.add(pod_key(new));
        }
    });
    let client = caches.client().clone();
    controller
        .run(Vec::new, on_synced, move |key| {
            let (client, pods) = (client.clone(), pods.clone());
            async move { reconcile(&client, &pods, &key).await }
        })
        .await;
}

async fn reconcile(
    client: &Client,
    pods: &Informer<Pod>,
    key: &str,
) -> Result<Option<Duration>, ControllerError> {
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let Some(pod) = pods.get_named(Some(namespace), name) else { return Ok(None) };
    if !needs_condition(&pod) {
        return Ok(None);
    }
    // Strategic merge: conditions merge by type, so the kubelet's own ones stay.
    let now = k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let patch = json!({"status": {"conditions": [
        {"type": KRUISE_POD_READY, "status": "True", "lastTransitionTime": now}
    ]}});
    match api.patch_status(name, &PatchParams::default(), &Patch::Strategic(&patch)).await {
        Ok(_) => Ok(None),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
        Err(error) => Err(error.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned_by(mut pod: Pod, api_version: &str) -> Pod {
        pod.metadata.owner_references = Some(vec![
            serde_json::from_value(
                json!({"apiVersion": api_version, "kind": "X", "name": "x", "uid": "u", "controller": true}),
            )
            .unwrap(),
        ]);
        pod
    }

    fn pod(gates: &[&str], conditions: &[&str], deleting: bool) -> Pod {
        let gates: Vec<_> = gates.iter().map(|gate| json!({"conditionType": gate})).collect();
        let conditions: Vec<_> = conditions.iter().map(|c| json!({"type": c, "status": "False"})).collect();
        let mut pod = json!({
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c"}], "readinessGates": gates},
            "status": {"conditions": conditions},
        });
        if deleting {
            pod["metadata"]["deletionTimestamp"] = json!("2026-12-03T10:00:00Z");
        }
        serde_json::from_value(pod).unwrap()
    }

    #[test]
    fn only_gated_pods_without_the_condition_get_it() {
        let cases = [
            ("gate, no condition", pod(&[KRUISE_POD_READY], &["Ready"], false), true),
            ("no gate", pod(&[], &["Ready"], false), false),
            ("another gate only", pod(&["example.com/ready"], &[], false), false),
            (
                "condition already there (even False)",
                pod(&[KRUISE_POD_READY], &[KRUISE_POD_READY], false),
                false,
            ),
            ("being deleted", pod(&[KRUISE_POD_READY], &[], true), false),
            ("a ReplicaSet's pod", owned_by(pod(&[KRUISE_POD_READY], &[], false), "apps/v1"), true),
            (
                "a CloneSet's pod",
                owned_by(pod(&[KRUISE_POD_READY], &[], false), "apps.kruise.io/v1beta1"),
                false,
            ),
        ];
        for (name, pod, expected) in cases {
            assert_eq!(needs_condition(&pod), expected, "{name}");
        }
    }
}
