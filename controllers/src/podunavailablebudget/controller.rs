//! The PodUnavailableBudget controller's I/O: the shared caches of budgets, pods and the
//! workloads a budget can name; a queue of budgets fed by budget changes, by pod creations and
//! readiness changes (upstream `enqueueRequestForPod`) and by workload replica changes and
//! deletions (upstream `SetEnqueueRequestForPUB`); and the writes [`super::core`] decides: the
//! `pub.kruise.io/related-pub` annotation on guarded pods that lack it, `NoPods` and
//! `NotDeleted` events, and the status.
//!
//! The status is written with the resourceVersion of the budget it was computed from: the pod
//! webhook writes the same status when it spends a disruption, so a conflict means a record the
//! cache did not show yet; the budget is then read from the API and the status computed again
//! (upstream `RetryOnConflict` with its refresh).

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, ReplicaSet, StatefulSet as BuiltinStatefulSet},
        core::v1::{ObjectReference, Pod},
    },
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{CloneSet, StatefulSet},
    policy::v1beta1::{
        DEPRECATED_POD_RELATED_PUB_KEY, POD_RELATED_PUB_KEY, PodUnavailableBudget, TargetReference,
    },
    resource::APPS_GROUP,
};
use kube::{
    Api, Client, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

use super::core::{
    self, Workload, WorkloadFinder, compute_status, controller_of, desired_available, pods_for_budget,
    related_pub_name,
};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        events::{EventKind, EventRecorder},
        harness::QueueController,
        workqueue::WorkQueue,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "podunavailablebudget";
/// Concurrent reconciles (upstream `--podunavailablebudget-workers`, 3).
pub const WORKERS: usize = 3;
/// Attempts at a status write that keeps meeting conflicts (upstream `ConflictRetry.Steps`).
const STATUS_ATTEMPTS: usize = 4;

struct Context {
    client: Client,
    budgets: Informer<PodUnavailableBudget>,
    pods: Informer<Pod>,
    finder: CacheFinder,
    recorder: EventRecorder,
}

/// The controller finder over the shared caches (upstream `controllerfinder`): CloneSets,
/// Advanced and built-in StatefulSets, Deployments (through their ReplicaSets) and ReplicaSets.
#[derive(Clone)]
struct CacheFinder {
    clonesets: Informer<CloneSet>,
    statefulsets: Informer<StatefulSet>,
    builtin_statefulsets: Informer<BuiltinStatefulSet>,
    deployments: Informer<Deployment>,
    replica_sets: Informer<ReplicaSet>,
}

fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map(|(group, _)| group).unwrap_or_default()
}

fn workload_of<K: kube::Resource<DynamicType = ()>>(object: &K, replicas: Option<i32>) -> Workload {
    let meta = object.meta();
    let uid = meta.uid.clone().unwrap_or_default();
    Workload {
        api_version: K::api_version(&()).to_string(),
        kind: K::kind(&()).to_string(),
        name: meta.name.clone().unwrap_or_default(),
        uid: uid.clone(),
        replicas: replicas.unwrap_or(1),
        deleting: meta.deletion_timestamp.is_some(),
        pod_owner_uids: vec![uid],
    }
}

impl CacheFinder {
    fn deployment(&self, namespace: &str, name: &str) -> Option<Workload> {
        let deployment = self.deployments.get_named(Some(namespace), name)?;
        let mut workload =
            workload_of(deployment.as_ref(), deployment.spec.as_ref().and_then(|s| s.replicas));
        let owned: Vec<String> = self
            .replica_sets
            .state()
            .iter()
            .filter(|rs| rs.metadata.namespace.as_deref() == Some(namespace))
            .filter(|rs| rs.metadata.deletion_timestamp.is_none())
            .filter(|rs| {
                controller_of(rs.metadata.owner_references.as_ref())
                    .is_some_and(|o| Some(&o.uid) == deployment.metadata.uid.as_ref())
            })
            .filter_map(|rs| rs.metadata.uid.clone())
            .collect();
        if !owned.is_empty() {
            workload.pod_owner_uids = owned;
        }
        Some(workload)
    }
}

impl WorkloadFinder for CacheFinder {
    fn workload(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<Workload> {
        let group = group_of(api_version);
        match (group, kind) {
            ("apps", "ReplicaSet") => {
                let rs = self.replica_sets.get_named(Some(namespace), name)?;
                if let Some(owner) = controller_of(rs.metadata.owner_references.as_ref())
                    && owner.kind == "Deployment"
                    && group_of(&owner.api_version) == "apps"
                {
                    return self.deployment(namespace, &owner.name);
                }
                Some(workload_of(rs.as_ref(), rs.spec.as_ref().and_then(|s| s.replicas)))
            }
            ("apps", "Deployment") => self.deployment(namespace, name),
            ("apps", "StatefulSet") => {
                let set = self.builtin_statefulsets.get_named(Some(namespace), name)?;
                Some(workload_of(set.as_ref(), set.spec.as_ref().and_then(|s| s.replicas)))
            }
            (APPS_GROUP, "StatefulSet") => {
                let set = self.statefulsets.get_named(Some(namespace), name)?;
                let mut workload = workload_of(set.as_ref(), set.spec.replicas);
                workload.api_version = api_version.to_string();
                Some(workload)
            }
            (APPS_GROUP, "CloneSet") => {
                let set = self.clonesets.get_named(Some(namespace), name)?;
                let mut workload = workload_of(set.as_ref(), set.spec.replicas);
                workload.api_version = api_version.to_string();
                Some(workload)
            }
            _ => None,
        }
    }
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Queues the budget a pod names, when it has one that exists.
fn queue_related(budgets: &Informer<PodUnavailableBudget>, pod: &Pod, queue: &WorkQueue, delay: Duration) {
    let Some(name) = related_pub_name(pod) else { return };
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    if budgets.get_named(Some(namespace), name).is_some() {
        if delay.is_zero() {
            queue.add(key(namespace, name));
        } else {
            queue.add_after(key(namespace, name), delay);
        }
    }
}

/// Queues the budget guarding a workload whose replicas changed or that was deleted.
fn queue_for_workload<K: kube::Resource<DynamicType = ()>>(
    budgets: &Informer<PodUnavailableBudget>,
    event: &CacheEvent<K>,
    queue: &WorkQueue,
    replicas: impl Fn(&K) -> Option<i32>,
    template_labels: impl Fn(&K) -> Option<BTreeMap<String, String>>,
) {
    let object = match event {
        CacheEvent::Applied { new, old: Some(old) } if replicas(old) != replicas(new) => new.as_ref(),
        CacheEvent::Applied { new, old: None } => new.as_ref(),
        CacheEvent::Deleted(object) => object.as_ref(),
        _ => return,
    };
    let meta = object.meta();
    let namespace = meta.namespace.clone().unwrap_or_default();
    let target = TargetReference {
        api_version: K::api_version(&()).to_string(),
        kind: K::kind(&()).to_string(),
        name: meta.name.clone().unwrap_or_default(),
    };
    let labels = template_labels(object).unwrap_or_default();
    let all = budgets.state();
    if let Some(budget) =
        core::matching_budget(all.iter().map(AsRef::as_ref), &namespace, Some(&target), &labels)
    {
        queue.add(key(&namespace, &budget.name_any()));
    }
}

/// Runs the controller until the future is dropped; `on_synced` is called once its caches hold
/// their first lists.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let client = caches.client().clone();
    let ctx = Arc::new(Context {
        client: client.clone(),
        budgets: caches.informer::<PodUnavailableBudget>(),
        pods: caches.informer::<Pod>(),
        finder: CacheFinder {
            clonesets: caches.informer::<CloneSet>(),
            statefulsets: caches.informer::<StatefulSet>(),
            builtin_statefulsets: caches.informer::<BuiltinStatefulSet>(),
            deployments: caches.informer::<Deployment>(),
            replica_sets: caches.informer::<ReplicaSet>(),
        },
        recorder: EventRecorder::new(client, "podunavailablebudget-controller"),
    });
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    controller.watch(&ctx.budgets, |event, queue| {
        if let CacheEvent::Applied { new, .. } = event {
            queue.add(key(new.metadata.namespace.as_deref().unwrap_or_default(), &new.name_any()));
        }
    });
    let budgets = ctx.budgets.clone();
    controller.watch(&ctx.pods, move |event, queue| match event {
        CacheEvent::Applied { new, old: None } => queue_related(&budgets, new, queue, Duration::ZERO),
        CacheEvent::Applied { new, old: Some(old) } => {
            if new.metadata.resource_version == old.metadata.resource_version {
                return;
            }
            if let Some(delay) = core::is_pod_available_changed(old, new) {
                queue_related(&budgets, new, queue, delay);
            }
        }
        _ => {}
    });
    let budgets = ctx.budgets.clone();
    controller.watch(&ctx.finder.deployments, move |event, queue| {
        queue_for_workload(
            &budgets,
            event,
            queue,
            |d: &Deployment| d.spec.as_ref().and_then(|s| s.replicas),
            |d| d.spec.as_ref().and_then(|s| s.template.metadata.as_ref()).and_then(|m| m.labels.clone()),
        )
    });
    let budgets = ctx.budgets.clone();
    controller.watch(&ctx.finder.statefulsets, move |event, queue| {
        queue_for_workload(
            &budgets,
            event,
            queue,
            |s: &StatefulSet| s.spec.replicas,
            |s| s.spec.template.metadata.as_ref().and_then(|m| m.labels.clone()),
        )
    });
    let budgets = ctx.budgets.clone();
    controller.watch(&ctx.finder.clonesets, move |event, queue| {
        queue_for_workload(
            &budgets,
            event,
            queue,
            |s: &CloneSet| s.spec.replicas,
            |s| s.spec.template.metadata.as_ref().and_then(|m| m.labels.clone()),
        )
    });
    let budgets = ctx.budgets.clone();
    controller.watch(&ctx.finder.builtin_statefulsets, move |event, queue| {
        queue_for_workload(
            &budgets,
            event,
            queue,
            |s: &BuiltinStatefulSet| s.spec.as_ref().and_then(|s| s.replicas),
            |s| s.spec.as_ref().and_then(|s| s.template.metadata.as_ref()).and_then(|m| m.labels.clone()),
        )
    });
    controller.reads(&ctx.finder.replica_sets);
    let initial = ctx.budgets.clone();
    let initial_keys = move || {
        initial
            .state()
            .iter()
            .map(|b| key(b.metadata.namespace.as_deref().unwrap_or_default(), &b.name_any()))
            .collect()
    };
    controller
        .run(initial_keys, on_synced, move |key| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &key).await }
        })
        .await;
}

fn budget_reference(budget: &PodUnavailableBudget) -> ObjectReference {
    ObjectReference {
        api_version: Some("policy.kruise.io/v1beta1".into()),
        kind: Some("PodUnavailableBudget".into()),
        name: budget.metadata.name.clone(),
        namespace: budget.metadata.namespace.clone(),
        uid: budget.metadata.uid.clone(),
        ..Default::default()
    }
}

fn pod_reference(pod: &Pod) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        name: pod.metadata.name.clone(),
        namespace: pod.metadata.namespace.clone(),
        uid: pod.metadata.uid.clone(),
        ..Default::default()
    }
}

/// Names the budget on guarded pods that do not name one yet (upstream
/// `patchRelatedPubAnnotationInPod`), so that the pod webhook finds it.
async fn annotate_pods(client: &Client, budget_name: &str, pods: &[&Pod]) -> Result<(), ControllerError> {
    for pod in pods.iter().filter(|pod| related_pub_name(pod).is_none()) {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let patch = json!({"metadata": {"annotations": {
            POD_RELATED_PUB_KEY: budget_name,
            DEPRECATED_POD_RELATED_PUB_KEY: budget_name,
        }}});
        match api.patch(&pod.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

async fn reconcile(ctx: &Context, key: &str) -> Result<Option<Duration>, ControllerError> {
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    let Some(budget) = ctx.budgets.get_named(Some(namespace), name) else { return Ok(None) };
    if budget.metadata.deletion_timestamp.is_some() {
        return Ok(None);
    }
    let all_pods = ctx.pods.state();
    let in_namespace: Vec<&Pod> = all_pods
        .iter()
        .map(AsRef::as_ref)
        .filter(|pod| pod.metadata.namespace.as_deref() == Some(namespace))
        .collect();
    let (pods, expected) = pods_for_budget(&budget, &in_namespace, &ctx.finder);
    if pods.is_empty() {
        ctx.recorder.publish(
            budget_reference(&budget),
            EventKind::Normal,
            "NoPods",
            "No matching pods found".into(),
        );
    } else {
        annotate_pods(&ctx.client, name, &pods).await?;
    }
    let desired = match desired_available(&budget, expected) {
        Ok(desired) => desired,
        Err(error) => {
            ctx.recorder.publish(
                budget_reference(&budget),
                EventKind::Warning,
                "CalculateExpectedPodCountFailed",
                format!("Failed to calculate the number of expected pods: {error}"),
            );
            return Err(ControllerError::Invalid(format!("PodUnavailableBudget {key}: {error}")));
        }
    };
    let api: Api<PodUnavailableBudget> = Api::namespaced(ctx.client.clone(), namespace);
    let mut current = (*budget).clone();
    for attempt in 0..STATUS_ATTEMPTS {
        let now = Timestamp::now();
        let (status, records) = compute_status(&current, &pods, expected, desired, now);
        for pod_name in &records.not_deleted {
            if let Some(pod) = pods.iter().find(|pod| pod.metadata.name.as_deref() == Some(pod_name)) {
                ctx.recorder.publish(
                    pod_reference(pod),
                    EventKind::Warning,
                    "NotDeleted",
                    format!("Pod was expected by PUB {namespace}/{name} to be deleted but it wasn't"),
                );
            }
        }
        let recheck = records.recheck.map(|at| {
            let wait = at.duration_since(now).as_millis().max(0);
            Duration::from_millis(u64::try_from(wait).unwrap_or(0)) + Duration::from_millis(100)
        });
        if current.status.as_ref() == Some(&status) {
            return Ok(recheck);
        }
        tracing::debug!(
            pub_name = %key,
            pods = pods.len(),
            expected,
            desired,
            available = status.current_available,
            allowed = status.unavailable_allowed,
            disrupted = status.disrupted_pods.len(),
            unavailable = status.unavailable_pods.len(),
            "updating status"
        );
        current.status = Some(status);
        match api.replace_status(name, &PostParams::default(), &current).await {
            Ok(_) => return Ok(recheck),
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(None),
            Err(kube::Error::Api(status)) if status.code == 409 && attempt + 1 < STATUS_ATTEMPTS => {
                match api.get_opt(name).await? {
                    Some(fresh) => current = fresh,
                    None => return Ok(None),
                }
            }
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!("PodUnavailableBudget {key}: status write kept conflicting")))
}
