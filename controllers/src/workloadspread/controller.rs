//! The WorkloadSpread controller's I/O (upstream `workloadspread_controller.go`,
//! `update_pod_deletion_cost.go`, `reschedule.go`, `workloadspread_event_handler.go`): shared
//! caches of WorkloadSpreads, pods, nodes and the target kinds; a queue of WorkloadSpreads fed
//! by their changes, by changes of pods they recorded (created, deleted, no longer active, new
//! revision) and by workload changes that move their numbers (replicas, a new revision); and
//! the writes [`super::core`] decides: the matched annotation on pods created before the
//! WorkloadSpread, pod deletion costs, the status, and the deletion of pods the Adaptive
//! strategy gives up on.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, ReplicaSet, StatefulSet},
        batch::v1::Job,
        core::v1::{Node, ObjectReference, Pod},
    },
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{self, CloneSet, TargetReference, WorkloadSpread, WorkloadSpreadStatus},
    common::well_known::POD_DELETION_COST,
};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use super::core::{
    CustomWorkloadWhiteList, StatusEvent, StatusNotes, VERSION_IGNORED, VersionedPods, api_group,
    calculate_status, deletion_cost_applies, deletion_costs, existing_pod_patch, group_pods_by_subset,
    injected, is_pod_selected, pod_version,
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
    workload::pods::is_pod_active,
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "workloadspread";
/// Concurrent reconciles (upstream `--workloadspread-workers`, 3).
pub const WORKERS: usize = 3;

struct Context {
    client: Client,
    recorder: EventRecorder,
    spreads: Informer<WorkloadSpread>,
    pods: Informer<Pod>,
    nodes: Informer<Node>,
    clonesets: Informer<CloneSet>,
    deployments: Informer<Deployment>,
    replicasets: Informer<ReplicaSet>,
    jobs: Informer<Job>,
    statefulsets: Informer<StatefulSet>,
    advanced_statefulsets: Informer<v1beta1::StatefulSet>,
    /// The manager namespace (where `kruise-configuration` lives).
    namespace: String,
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Queues the WorkloadSpread a pod is recorded in, when the change matters (upstream
/// `podEventHandler`): creation, deletion, and updates that end the pod or change its version.
fn pod_changed(event: &CacheEvent<Pod>, queue: &WorkQueue) {
    let pod = match event {
        CacheEvent::Applied { new, old: Some(old) } => {
            let ended = is_pod_active(old) && !is_pod_active(new);
            if !ended && pod_version(old) == pod_version(new) {
                return;
            }
            new.as_ref()
        }
        CacheEvent::Applied { new, old: None } => new.as_ref(),
        CacheEvent::Deleted(pod) => pod.as_ref(),
        CacheEvent::Synced => return,
    };
    if let Some(injected) = injected(pod) {
        queue.add(key(&pod.namespace().unwrap_or_default(), &injected.name));
    }
}

/// The WorkloadSpread of a namespace that targets the workload (group, kind, name), or the
/// owning Deployment of a ReplicaSet (upstream `getWorkloadSpreadForWorkload`).
fn spread_for_workload(
    spreads: &[Arc<WorkloadSpread>],
    namespace: &str,
    group: &str,
    kind: &str,
    name: &str,
    owner: Option<(&str, &str, &str)>,
) -> Option<String> {
    spreads.iter().find_map(|spread| {
        if spread.namespace().as_deref() != Some(namespace) || spread.metadata.deletion_timestamp.is_some() {
            return None;
        }
        let target = spread.spec.target_reference.as_ref()?;
        let target_group = api_group(&target.api_version);
        let direct = target_group == group && target.kind == kind && target.name == name;
        let via_owner = owner.is_some_and(|(owner_group, owner_kind, owner_name)| {
            kind == "ReplicaSet"
                && owner_kind == "Deployment"
                && target_group == owner_group
                && target.kind == owner_kind
                && target.name == owner_name
        });
        (direct || via_owner).then(|| key(namespace, &spread.name_any()))
    })
}

/// Follows a workload kind: queues the WorkloadSpread targeting an object that appeared, went,
/// or changed `replicas` or revision (upstream `workloadEventHandler`).
fn watch_workload<K>(
    controller: &mut QueueController,
    informer: &Informer<K>,
    spreads: &Informer<WorkloadSpread>,
    group: &'static str,
    kind: &'static str,
    numbers: fn(&K) -> (i64, String),
) where
    K: crate::runtime::cache::Cached,
{
    let spreads = spreads.clone();
    controller.watch(informer, move |event, queue| {
        let object = match event {
            CacheEvent::Applied { new, old: Some(old) } => {
                let (old_replicas, old_revision) = numbers(old);
                let (new_replicas, new_revision) = numbers(new);
                if old_replicas == new_replicas && old_revision == new_revision {
                    return;
                }
                new.as_ref()
            }
            CacheEvent::Applied { new, old: None } => new.as_ref(),
            CacheEvent::Deleted(object) => object.as_ref(),
            CacheEvent::Synced => return,
        };
        let meta = object.meta();
        let owner = meta.owner_references.iter().flatten().find(|owner| owner.controller == Some(true));
        let owner =
            owner.map(|owner| (api_group(&owner.api_version), owner.kind.as_str(), owner.name.as_str()));
        if let Some(name) = spread_for_workload(
            &spreads.state(),
            meta.namespace.as_deref().unwrap_or_default(),
            group,
            kind,
            meta.name.as_deref().unwrap_or_default(),
            owner,
        ) {
            queue.add(name);
        }
    });
}

/// Runs the controller until the future is dropped; `on_synced` is called once its caches hold
/// their first lists.
pub async fn run(
    caches: Caches,
    metrics: Metrics,
    manager_namespace: String,
    on_synced: impl FnOnce() + Send,
) {
    let client = caches.client().clone();
    let ctx = Arc::new(Context {
        recorder: EventRecorder::new(client.clone(), "workloadspread-controller"),
        client,
        spreads: caches.informer::<WorkloadSpread>(),
        pods: caches.informer::<Pod>(),
        nodes: caches.informer::<Node>(),
        clonesets: caches.informer::<CloneSet>(),
        deployments: caches.informer::<Deployment>(),
        replicasets: caches.informer::<ReplicaSet>(),
        jobs: caches.informer::<Job>(),
        statefulsets: caches.informer::<StatefulSet>(),
        advanced_statefulsets: caches.informer::<v1beta1::StatefulSet>(),
        namespace: manager_namespace,
    });
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    controller.watch(&ctx.spreads, |event, queue| {
        if let CacheEvent::Applied { new, old } = event {
            let changed = old.as_ref().is_none_or(|old| {
                old.metadata.generation != new.metadata.generation
                    || old.metadata.annotations != new.metadata.annotations
                    || old.metadata.deletion_timestamp != new.metadata.deletion_timestamp
                    || old.status != new.status
            });
            if changed {
                queue.add(key(&new.namespace().unwrap_or_default(), &new.name_any()));
            }
        }
    });
    controller.watch(&ctx.pods, pod_changed);
    controller.reads(&ctx.nodes);
    watch_workload(&mut controller, &ctx.clonesets, &ctx.spreads, "apps.kruise.io", "CloneSet", |cs| {
        let status = cs.status.as_ref();
        let update = status.map(|s| s.update_revision.clone()).unwrap_or_default();
        let current = status.map(|s| s.current_revision.clone()).unwrap_or_default();
        (i64::from(cs.spec.replicas.unwrap_or(1)), if update == current { String::new() } else { update })
    });
    watch_workload(&mut controller, &ctx.deployments, &ctx.spreads, "apps", "Deployment", |deployment| {
        let revision = deployment
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("deployment.kubernetes.io/revision"))
            .cloned()
            .unwrap_or_default();
        (i64::from(deployment.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)), revision)
    });
    watch_workload(&mut controller, &ctx.replicasets, &ctx.spreads, "apps", "ReplicaSet", |rs| {
        (i64::from(rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)), String::new())
    });
    watch_workload(&mut controller, &ctx.jobs, &ctx.spreads, "batch", "Job", |job| {
        (i64::from(job.spec.as_ref().and_then(|s| s.parallelism).unwrap_or(1)), String::new())
    });
    watch_workload(&mut controller, &ctx.statefulsets, &ctx.spreads, "apps", "StatefulSet", |sts| {
        (i64::from(sts.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)), String::new())
    });
    watch_workload(
        &mut controller,
        &ctx.advanced_statefulsets,
        &ctx.spreads,
        "apps.kruise.io",
        "StatefulSet",
        |sts| (i64::from(sts.spec.replicas.unwrap_or(1)), String::new()),
    );
    let initial = ctx.spreads.clone();
    let initial_keys = move || {
        initial.state().iter().map(|ws| key(&ws.namespace().unwrap_or_default(), &ws.name_any())).collect()
    };
    controller
        .run(initial_keys, on_synced, move |name| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &name).await }
        })
        .await;
}

/// An integer at a dotted path of a JSON object (numeric segments index lists), 0 when absent
/// (upstream `GetReplicasFromObject`).
pub fn replicas_at(object: &Value, path: &str) -> i32 {
    if path.is_empty() {
        return 0;
    }
    let mut node = object;
    for segment in path.split('.') {
        node = match node {
            Value::Object(map) => match map.get(segment) {
                Some(next) => next,
                None => return 0,
            },
            Value::Array(items) => match segment.parse::<usize>().ok().and_then(|index| items.get(index)) {
                Some(next) => next,
                None => return 0,
            },
            _ => return 0,
        };
    }
    node.as_i64().and_then(|value| i32::try_from(value).ok()).unwrap_or(0)
}

/// The replica count a WorkloadSpread scales percentages against (upstream
/// `getWorkloadReplicas` / `filterWorkload`): the sum of `targetFilter.replicasPathList`, else a
/// whitelisted custom workload's `replicasPath`, else the kind's own field (a Job's
/// `parallelism`).
pub fn replicas_of(
    object: &Value,
    spread: &WorkloadSpread,
    target: &TargetReference,
    custom: &CustomWorkloadWhiteList,
) -> i32 {
    if let Some(filter) =
        spread.spec.target_filter.as_ref().filter(|filter| !filter.replicas_path_list.is_empty())
    {
        return filter.replicas_path_list.iter().map(|path| replicas_at(object, path)).sum();
    }
    let group = api_group(&target.api_version);
    let builtin = super::core::BUILTIN_WORKLOADS
        .iter()
        .any(|(kind, groups)| *kind == target.kind && groups.contains(&group));
    if !builtin {
        return custom
            .workloads
            .iter()
            .find(|workload| workload.group == group && workload.kind == target.kind)
            .map(|workload| replicas_at(object, &workload.replicas_path))
            .unwrap_or(0);
    }
    let field = if target.kind == "Job" { "/spec/parallelism" } else { "/spec/replicas" };
    object.pointer(field).and_then(Value::as_i64).and_then(|value| i32::try_from(value).ok()).unwrap_or(1)
}

fn controlled_by(pod: &Pod, uid: &str) -> bool {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|owner| owner.controller == Some(true) && owner.uid == uid)
}

/// The target's pods, its object as JSON and the latest version key (for deletion costs),
/// from the caches; `None` when the target does not exist.
struct Target {
    object: Value,
    pods: Vec<Arc<Pod>>,
    latest_version: String,
}

fn owned_pods(ctx: &Context, namespace: &str, uid: &str) -> Vec<Arc<Pod>> {
    ctx.pods
        .owner_index()
        .owned_or_orphaned(namespace, uid)
        .into_iter()
        .filter(|pod| controlled_by(pod, uid))
        .collect()
}

fn to_json<K: serde::Serialize>(object: &K) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
}

async fn load_target(
    ctx: &Context,
    namespace: &str,
    target: &TargetReference,
    custom: &CustomWorkloadWhiteList,
) -> Result<Option<Target>, ControllerError> {
    let group = api_group(&target.api_version);
    let found = |object: Value, uid: Option<&String>, latest_version: String| {
        let uid = uid.cloned().unwrap_or_default();
        Target { pods: owned_pods(ctx, namespace, &uid), object, latest_version }
    };
    let name = target.name.as_str();
    Ok(match (group, target.kind.as_str()) {
        ("apps.kruise.io", "CloneSet") => ctx
            .clonesets
            .get_named(Some(namespace), name)
            .map(|cs| found(to_json(&*cs), cs.metadata.uid.as_ref(), VERSION_IGNORED.into())),
        ("apps", "ReplicaSet") => ctx.replicasets.get_named(Some(namespace), name).map(|rs| {
            let version = rs
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("pod-template-hash"))
                .cloned()
                .unwrap_or_default();
            found(to_json(&*rs), rs.metadata.uid.as_ref(), version)
        }),
        ("batch", "Job") => ctx.jobs.get_named(Some(namespace), name).map(|job| {
            let selector = job.spec.as_ref().and_then(|spec| spec.selector.clone());
            let mut target = found(to_json(&*job), job.metadata.uid.as_ref(), VERSION_IGNORED.into());
            if let Some(selector) = selector {
                target.pods.retain(|pod| kruise_crds::selector::matches(&selector, &pod.labels().clone()));
            }
            target
        }),
        ("apps", "StatefulSet") => ctx
            .statefulsets
            .get_named(Some(namespace), name)
            .map(|sts| found(to_json(&*sts), sts.metadata.uid.as_ref(), VERSION_IGNORED.into())),
        ("apps.kruise.io", "StatefulSet") => ctx
            .advanced_statefulsets
            .get_named(Some(namespace), name)
            .map(|sts| found(to_json(&*sts), sts.metadata.uid.as_ref(), VERSION_IGNORED.into())),
        ("apps", "Deployment") => ctx.deployments.get_named(Some(namespace), name).map(|deployment| {
            let uid = deployment.metadata.uid.clone().unwrap_or_default();
            let revision = |rs: &ReplicaSet| {
                rs.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get("deployment.kubernetes.io/revision"))
                    .and_then(|r| r.parse::<i64>().ok())
                    .unwrap_or(0)
            };
            let sets: Vec<Arc<ReplicaSet>> = ctx
                .replicasets
                .owner_index()
                .owned_or_orphaned(namespace, &uid)
                .into_iter()
                .filter(|rs| {
                    rs.metadata
                        .owner_references
                        .iter()
                        .flatten()
                        .any(|o| o.controller == Some(true) && o.uid == uid)
                })
                .collect();
            let latest = sets
                .iter()
                .filter(|rs| rs.metadata.deletion_timestamp.is_none())
                .max_by_key(|rs| revision(rs))
                .and_then(|rs| rs.metadata.labels.as_ref().and_then(|l| l.get("pod-template-hash")).cloned())
                .unwrap_or_default();
            let pods = sets
                .iter()
                .flat_map(|rs| owned_pods(ctx, namespace, rs.metadata.uid.as_deref().unwrap_or_default()))
                .collect();
            Target { object: to_json(&*deployment), pods, latest_version: latest }
        }),
        _ => {
            // A whitelisted custom workload, read from the API; its pods are those it controls.
            if !custom
                .workloads
                .iter()
                .any(|workload| workload.group == group && workload.kind == target.kind)
            {
                return Ok(None);
            }
            let api: Api<kube::api::DynamicObject> = Api::namespaced_with(
                ctx.client.clone(),
                namespace,
                &custom_resource(&target.api_version, &target.kind),
            );
            match api.get_opt(name).await? {
                Some(object) => {
                    let uid = object.metadata.uid.clone().unwrap_or_default();
                    let pods = owned_pods(ctx, namespace, &uid);
                    Some(Target { object: to_json(&object), pods, latest_version: VERSION_IGNORED.into() })
                }
                None => None,
            }
        }
    })
}

fn custom_resource(api_version: &str, kind: &str) -> kube::api::ApiResource {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    kube::api::ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk(group, version, kind),
        &format!("{}s", kind.to_ascii_lowercase()),
    )
}

fn reference(spread: &WorkloadSpread) -> ObjectReference {
    ObjectReference {
        api_version: Some(WorkloadSpread::api_version(&()).to_string()),
        kind: Some("WorkloadSpread".into()),
        name: spread.metadata.name.clone(),
        namespace: spread.metadata.namespace.clone(),
        uid: spread.metadata.uid.clone(),
        resource_version: spread.metadata.resource_version.clone(),
        ..Default::default()
    }
}

async fn reconcile(ctx: &Context, key: &str) -> Result<Option<Duration>, ControllerError> {
    let Some((namespace, name)) = key.split_once('/') else { return Ok(None) };
    let Some(spread) = ctx.spreads.get_named(Some(namespace), name) else { return Ok(None) };
    if spread.metadata.deletion_timestamp.is_some() {
        return Ok(None);
    }
    let Some(target) = spread.spec.target_reference.clone() else {
        tracing::info!(workloadspread = %key, "WorkloadSpread has no target reference");
        return Ok(None);
    };
    let custom = crate::webhook::workloadspread::custom_workloads(&ctx.client, &ctx.namespace).await;
    let loaded = load_target(ctx, namespace, &target, &custom).await?;
    let (pods, replicas, latest_version) = match &loaded {
        Some(found) => {
            let replicas = replicas_of(&found.object, &spread, &target, &custom);
            let filter = spread.spec.target_filter.as_ref().filter(|filter| filter.selector.is_some());
            let pods: Vec<&Pod> = found
                .pods
                .iter()
                .map(AsRef::as_ref)
                .filter(|pod| {
                    filter.is_none_or(|filter| is_pod_selected(Some(filter), &pod.labels().clone()))
                })
                .collect();
            (pods, replicas, found.latest_version.clone())
        }
        None => (Vec::new(), 0, String::new()),
    };

    // Group pods by version, then subset; adopt pods created before the WorkloadSpread.
    let mut by_version: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
    for pod in &pods {
        by_version.entry(pod_version(pod)).or_default().push(pod);
    }
    let nodes = ctx.nodes.clone();
    let node = move |name: &str| nodes.get_named(None, name).map(|node| (*node).clone());
    let mut versioned: VersionedPods<'_> = BTreeMap::new();
    for (version, pods) in &by_version {
        let grouping = group_pods_by_subset(&spread, pods, replicas, &node);
        for (pod_index, subset_index) in &grouping.adopt {
            let (Some(pod), Some(subset)) = (pods.get(*pod_index), spread.spec.subsets.get(*subset_index))
            else {
                continue;
            };
            let patch = existing_pod_patch(&spread, subset);
            let api: Api<Pod> = Api::namespaced(ctx.client.clone(), namespace);
            match api.patch(&pod.name_any(), &PatchParams::default(), &Patch::Strategic(&patch)).await {
                Ok(_) => {
                    tracing::info!(workloadspread = %key, pod = %pod.name_any(), subset = %subset.name, "adopted an existing pod into a subset")
                }
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error.into()),
            }
        }
        let mut by_subset: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
        for (subset, indexes) in &grouping.by_subset {
            by_subset.insert(
                subset.clone(),
                indexes.iter().filter_map(|index| pods.get(*index).copied()).collect(),
            );
        }
        versioned.insert(version.clone(), by_subset);
    }

    // Deletion costs: later subsets and pods beyond a cap go first on scale-in.
    if deletion_cost_applies(&target) {
        for (version, by_subset) in &versioned {
            let reverse = *version != latest_version;
            for (pod, cost) in deletion_costs(&spread, by_subset, replicas, reverse) {
                let patch = json!({"metadata": {"annotations": {POD_DELETION_COST: cost}}});
                let api: Api<Pod> = Api::namespaced(ctx.client.clone(), namespace);
                match api.patch(&pod.name_any(), &PatchParams::default(), &Patch::Strategic(&patch)).await {
                    Ok(_) => {
                        tracing::debug!(workloadspread = %key, pod = %pod.name_any(), %cost, "set the pod deletion cost")
                    }
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(error) => {
                        ctx.recorder.publish(
                            reference(&spread),
                            EventKind::Warning,
                            "PatchPodDeletionCostFailed",
                            format!("WorkloadSpread {key} failed to patch deletion-cost annotation to {cost} for Pod {namespace}/{}", pod.name_any()),
                        );
                        return Err(error.into());
                    }
                }
            }
        }
    }

    // Status.
    let mut notes = StatusNotes::default();
    let Some((status, failed)) =
        calculate_status(&spread, &versioned, replicas, Timestamp::now(), &mut notes)
    else {
        tracing::error!(workloadspread = %key, "a subset's maxReplicas cannot be computed");
        return Ok(None);
    };
    for event in &notes.events {
        let (kind, reason, note) = match event {
            StatusEvent::CreatePodFailed(pod) => (
                EventKind::Warning,
                "CreatePodFailed",
                format!("Pod {namespace}/{pod} was expected to be created but it wasn't"),
            ),
            StatusEvent::DeletePodFailed(pod) => (
                EventKind::Warning,
                "DeletePodFailed",
                format!("Pod {namespace}/{pod} was expected to be deleted but it wasn't"),
            ),
            StatusEvent::RecoverSchedulable(subset) => (
                EventKind::Normal,
                "RecoverSchedulable",
                format!(
                    "Subset {subset} of WorkloadSpread {key} is recovered from unschedulable to schedulable"
                ),
            ),
        };
        ctx.recorder.publish(reference(&spread), kind, reason, note);
    }
    write_status(ctx, &spread, status).await?;

    // The Adaptive strategy: delete pods that could not be scheduled in their subset.
    for (subset, pods) in failed {
        for pod in pods {
            let api: Api<Pod> = Api::namespaced(ctx.client.clone(), namespace);
            match api.delete(&pod.name_any(), &DeleteParams::default()).await {
                Ok(_) => {
                    tracing::info!(workloadspread = %key, pod = %pod.name_any(), %subset, "deleted a pod that could not be scheduled in its subset")
                }
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => {
                    ctx.recorder.publish(
                        reference(&spread),
                        EventKind::Warning,
                        "DeletePodFailed",
                        format!("Failed to delete unschedulabe Pod {namespace}/{} in Subset {subset} of WorkloadSpread {key}", pod.name_any()),
                    );
                    return Err(error.into());
                }
            }
        }
    }
    Ok(notes.requeue.map(|after| after + Duration::from_millis(100)))
}

/// Writes the status when it changed (a conflict is retried on a fresh copy: the webhook
/// writes the same status concurrently).
async fn write_status(
    ctx: &Context,
    spread: &WorkloadSpread,
    status: WorkloadSpreadStatus,
) -> Result<(), ControllerError> {
    let namespace = spread.namespace().unwrap_or_default();
    let name = spread.name_any();
    let api: Api<WorkloadSpread> = Api::namespaced(ctx.client.clone(), &namespace);
    if spread.status.as_ref() == Some(&status) {
        return Ok(());
    }
    let mut current = spread.clone();
    current.status = Some(status);
    match api.replace_status(&name, &PostParams::default(), &current).await {
        Ok(_) => {
            tracing::debug!(workloadspread = %name, %namespace, "wrote the status");
            Ok(())
        }
        // The webhook recorded a pod meanwhile; its write wakes this WorkloadSpread again and
        // the status is computed from the fresh object then.
        Err(kube::Error::Api(error)) if error.code == 409 || error.code == 404 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    #[test]
    fn get_replicas_from_object_table() {
        // Upstream TestGetReplicasFromObject.
        let object = json!({"spec": {"replicas": 3, "name": "x", "list": [{"replicas": 2}]}});
        let cases = [
            ("empty path", "", 0),
            ("not exist", "spec.nothing", 0),
            ("error e.g. string field", "spec.name", 0),
            ("success", "spec.replicas", 3),
            ("success in slice", "spec.list.0.replicas", 2),
        ];
        for (name, path, want) in cases {
            assert_eq!(replicas_at(&object, path), want, "{name}");
        }
    }

    #[test]
    fn get_replicas_from_workload_with_target_filter() {
        // Upstream TestGetReplicasFromWorkloadWithTargetFilter and TestGetWorkloadReplicas.
        let object = json!({"spec": {"replicas": 9, "parallelism": 4,
            "replicaSpecs": {"PS": {"replicas": 1}, "Worker": {"replicas": 5}, "Master": {"replicas": 3}}}});
        let mut spread: WorkloadSpread = serde_json::from_value(json!({
            "metadata": {"name": "ws"},
            "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "c"}, "subsets": []}
        }))
        .unwrap();
        let target = spread.spec.target_reference.clone().unwrap();
        let none = CustomWorkloadWhiteList::default();
        assert_eq!(replicas_of(&object, &spread, &target, &none), 9, "filter default path");
        let job = TargetReference { api_version: "batch/v1".into(), kind: "Job".into(), name: "j".into() };
        assert_eq!(replicas_of(&object, &spread, &job, &none), 4, "job");
        spread.spec.target_filter = Some(kruise_crds::apps::v1beta1::TargetFilter {
            selector: None,
            replicas_path_list: vec![
                "spec.replicaSpecs.Worker.replicas".into(),
                "spec.replicaSpecs.Master.replicas".into(),
            ],
        });
        assert_eq!(replicas_of(&object, &spread, &target, &none), 8, "filter assigned replicas path");
        spread.spec.target_filter = None;
        let tfjob =
            TargetReference { api_version: "kubeflow.org/v1".into(), kind: "TFJob".into(), name: "t".into() };
        let custom: CustomWorkloadWhiteList = serde_json::from_value(json!({"workloads": [
            {"Group": "kubeflow.org", "Version": "v1", "Kind": "TFJob", "replicasPath": "spec.replicaSpecs.Master.replicas"}]}))
        .unwrap();
        assert_eq!(replicas_of(&object, &spread, &tfjob, &custom), 3, "custom workload");
        assert_eq!(replicas_of(&object, &spread, &tfjob, &none), 0, "custom workload not whitelisted");
    }

    fn spread(
        name: &str,
        api_version: &str,
        kind: &str,
        target: &str,
        deleting: bool,
    ) -> Arc<WorkloadSpread> {
        let mut metadata = json!({"name": name, "namespace": "default"});
        if deleting {
            metadata["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        Arc::new(
            serde_json::from_value(json!({"metadata": metadata, "spec": {
                "targetRef": {"apiVersion": api_version, "kind": kind, "name": target}, "subsets": []}}))
            .unwrap(),
        )
    }

    #[test]
    fn get_workloadspread_for_workload_table() {
        // Upstream TestGetWorkloadSpreadFor{CloneSet,Deployment,Job,ReplicaSet,StatefulSet,
        // AdvancedStatefulSet}.
        type Workload<'a> = (&'a str, &'a str, &'a str);
        type Case<'a> =
            (&'a str, Vec<Arc<WorkloadSpread>>, Workload<'a>, Option<Workload<'a>>, Option<&'a str>);
        let cases: Vec<Case<'_>> = vec![
            (
                "no matched WorkloadSpread",
                vec![spread("ws-1", "apps.kruise.io/v1alpha1", "CloneSet", "other", false)],
                ("apps.kruise.io", "CloneSet", "cs"),
                None,
                None,
            ),
            (
                "deletionTimestamp is not nil, no matched WorkloadSpread",
                vec![spread("ws-1", "apps.kruise.io/v1alpha1", "CloneSet", "cs", true)],
                ("apps.kruise.io", "CloneSet", "cs"),
                None,
                None,
            ),
            (
                "matched WorkloadSpread ws-1",
                vec![spread("ws-1", "apps.kruise.io/v1alpha1", "CloneSet", "cs", false)],
                ("apps.kruise.io", "CloneSet", "cs"),
                None,
                Some("default/ws-1"),
            ),
            (
                "different version, matched WorkloadSpread ws-1",
                vec![spread("ws-1", "apps.kruise.io/v1beta1", "CloneSet", "cs", false)],
                ("apps.kruise.io", "CloneSet", "cs"),
                None,
                Some("default/ws-1"),
            ),
            (
                "job: matched WorkloadSpread ws-1",
                vec![spread("ws-1", "batch/v1", "Job", "job", false)],
                ("batch", "Job", "job"),
                None,
                Some("default/ws-1"),
            ),
            (
                "replicaset of a targeted deployment: matched WorkloadSpread ws-1",
                vec![spread("ws-1", "apps/v1", "Deployment", "dep", false)],
                ("apps", "ReplicaSet", "dep-7b5c"),
                Some(("apps", "Deployment", "dep")),
                Some("default/ws-1"),
            ),
            (
                "advanced statefulset is not a built-in one",
                vec![spread("ws-1", "apps/v1", "StatefulSet", "sts", false)],
                ("apps.kruise.io", "StatefulSet", "sts"),
                None,
                None,
            ),
        ];
        for (name, spreads, (group, kind, workload), owner, want) in cases {
            assert_eq!(
                spread_for_workload(&spreads, "default", group, kind, workload, owner).as_deref(),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn pod_events_queue_the_recorded_workloadspread() {
        // Upstream workloadspread_event_handler_test: creations and deletions of recorded pods,
        // and updates that end a pod, queue its WorkloadSpread; other updates do not.
        let pod = |phase: &str, annotated: bool| -> Arc<Pod> {
            let annotations = if annotated {
                json!({super::super::core::MATCHED_WORKLOADSPREAD_ANNOTATION: r#"{"name":"ws","subset":"a"}"#})
            } else {
                json!({})
            };
            Arc::new(
                serde_json::from_value(
                    json!({"metadata": {"name": "p", "namespace": "ns", "annotations": annotations},
                    "status": {"phase": phase}}),
                )
                .unwrap(),
            )
        };
        let cases = [
            ("create recorded pod", CacheEvent::Applied { new: pod("Pending", true), old: None }, true),
            ("create unrecorded pod", CacheEvent::Applied { new: pod("Pending", false), old: None }, false),
            (
                "pod turns failed",
                CacheEvent::Applied { new: pod("Failed", true), old: Some(pod("Running", true)) },
                true,
            ),
            (
                "pod turns running",
                CacheEvent::Applied { new: pod("Running", true), old: Some(pod("Pending", true)) },
                false,
            ),
            ("delete recorded pod", CacheEvent::Deleted(pod("Running", true)), true),
        ];
        for (name, event, want) in cases {
            let queue = WorkQueue::new(crate::runtime::workqueue::BACKOFF);
            pod_changed(&event, &queue);
            assert_eq!(queue.len() == 1, want, "{name}");
        }
    }
}
