//! The SidecarSet controller loop (upstream `sidecarset_controller.go` and
//! `sidecarset_processor.go`): a queue of SidecarSets on the queue harness, fed by their
//! changes and by changes of the pods they manage; per SidecarSet it keeps the latest
//! ControllerRevision in the manager namespace, writes the status, and upgrades the next pods
//! in place (or resets hot-upgrade containers) as [`super::core`] decides.
//!
//! Pod writes are JSON patches of the changed images and annotations only, each guarded by the
//! container's name at that position, so a concurrent writer (the kubelet, another controller)
//! loses nothing. After writing a pod, the controller waits until its cache holds that
//! version before deciding again, so that a stale cache cannot exceed `maxUnavailable`.

use std::{
    collections::{BTreeMap, BTreeSet, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{Namespace, Pod},
    },
    apimachinery::pkg::{
        apis::meta::v1::{ObjectMeta, OwnerReference, Time},
        runtime::RawExtension,
    },
};
use kruise_crds::{
    apps::v1beta1::{SIDECARSET_CUSTOM_VERSION_LABEL, SidecarSet, SidecarSetUpdateStrategyType},
    validation::SIDECARSET_REVISION_OWNER_LABEL,
};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{DeleteParams, Patch, PatchParams},
    runtime::reflector::ObjectRef,
};
use serde_json::{Value, json};

use super::core::{
    hot_upgrade_flipped, hot_upgrade_ready_to_flip, is_updated, manages_pod, next_upgrade,
    sidecarset_revisions_to_truncate, status_of, upgradable_condition, upgraded_pod, upgrades_pods,
};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        events::{EventKind, EventRecorder},
        expectations::{EXPECTATION_TIMEOUT, ResourceVersionExpectations},
        harness::QueueController,
    },
    workload::revision::{
        RevisionPlan, create_revision, data_bytes, plan_revision, renumber_revision, revision_hash,
        revision_name, sorted,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "sidecarset";
/// Concurrent reconciles (upstream `--sidecarset-workers`, default 3).
pub const WORKERS: usize = 3;
/// How soon to look again while a pod write is not in the cache yet.
const IN_FLIGHT_RETRY: Duration = Duration::from_secs(1);
/// How long pod events wait to be handled together (the first one's deadline holds).
const POD_EVENT_COALESCING: Duration = Duration::from_millis(200);

struct Context {
    client: Client,
    namespace: String,
    sidecarsets: Informer<SidecarSet>,
    pods: Informer<Pod>,
    namespaces: Informer<Namespace>,
    revisions: Informer<ControllerRevision>,
    pod_versions: ResourceVersionExpectations,
    recorder: EventRecorder,
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.namespace().unwrap_or_default(), pod.name_any())
}

/// The SidecarSets whose pods `pod` may be: those it names in its injected list.
fn sidecarsets_of(pod: &Pod) -> Vec<String> {
    super::injected_sidecarsets(&pod.metadata).into_iter().collect()
}

/// Runs the SidecarSet controller until the future is dropped; `namespace` is the manager
/// namespace, where the SidecarSets' ControllerRevisions live.
pub async fn run(caches: Caches, metrics: Metrics, namespace: String, on_synced: impl FnOnce() + Send) {
    let sidecarsets = caches.informer::<SidecarSet>();
    let pods = caches.informer::<Pod>();
    let namespaces = caches.informer::<Namespace>();
    let revisions = caches.informer::<ControllerRevision>();
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let ctx = Arc::new(Context {
        client: caches.client().clone(),
        namespace,
        sidecarsets: sidecarsets.clone(),
        pods: pods.clone(),
        namespaces: namespaces.clone(),
        revisions: revisions.clone(),
        pod_versions: ResourceVersionExpectations::new(),
        recorder: EventRecorder::new(caches.client().clone(), "sidecarset-controller"),
    });
    // As upstream, a SidecarSet's own updates wake it only when its spec changed (generation):
    // its status writes do not, so a `NotUpdate` SidecarSet's counts move only with pod creates
    // and deletes, as upstream's e2e expects.
    controller.watch(&sidecarsets, |event, queue| {
        if let CacheEvent::Applied { new, old } = event
            && old.as_ref().is_none_or(|old| old.metadata.generation != new.metadata.generation)
        {
            queue.add(new.name_any());
        }
    });
    // A reconcile reads every pod of the SidecarSet, so pod events are coalesced: a burst of
    // pod creates (a CloneSet scaling up) costs a few reconciles and status writes, not one each.
    // As upstream, a pod's updates do not wake a `NotUpdate` SidecarSet (it upgrades nothing);
    // its status follows pod creates and deletes and its own changes.
    let sets_of_pods = sidecarsets.clone();
    controller.watch(&pods, move |event, queue| match event {
        CacheEvent::Applied { new, old } => {
            let mut names = sidecarsets_of(new);
            if let Some(old) = old {
                names.extend(sidecarsets_of(old));
                names.retain(|name| {
                    sets_of_pods.get_named(None, name).is_none_or(|set| {
                        set.spec.update_strategy.type_ != SidecarSetUpdateStrategyType::NotUpdate
                    })
                });
            }
            for name in names {
                queue.add_after(name, POD_EVENT_COALESCING);
            }
        }
        CacheEvent::Deleted(pod) => {
            for name in sidecarsets_of(pod) {
                queue.add_after(name, POD_EVENT_COALESCING);
            }
        }
        CacheEvent::Synced => {}
    });
    controller.reads(&namespaces);
    controller.reads(&revisions);
    let initial_keys = move || sidecarsets.state().iter().map(|set| set.name_any()).collect();
    controller
        .run(initial_keys, on_synced, move |key| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &key).await }
        })
        .await;
}

fn now() -> Time {
    let second = k8s_openapi::jiff::Timestamp::now().as_second();
    Time(
        k8s_openapi::jiff::Timestamp::from_second(second)
            .unwrap_or_else(|_| k8s_openapi::jiff::Timestamp::now()),
    )
}

/// The revision of the SidecarSet's injectable parts (upstream `getPatch`: containers, init
/// containers, volumes, pull secrets and metadata patches, replaced whole).
pub fn new_revision(
    set: &SidecarSet,
    namespace: &str,
    number: i64,
    collision_count: i32,
) -> ControllerRevision {
    let spec = &set.spec;
    let field = |value: Value| if value == json!([]) { Value::Null } else { value };
    let data = json!({"spec": {
        "$patch": "replace",
        "containers": field(serde_json::to_value(&spec.containers).unwrap_or(Value::Null)),
        "initContainers": field(serde_json::to_value(&spec.init_containers).unwrap_or(Value::Null)),
        "volumes": field(serde_json::to_value(&spec.volumes).unwrap_or(Value::Null)),
        "imagePullSecrets": field(serde_json::to_value(&spec.image_pull_secrets).unwrap_or(Value::Null)),
        "patchPodMetadata": field(serde_json::to_value(&spec.patch_pod_metadata).unwrap_or(Value::Null)),
    }});
    let name = set.name_any();
    let hash = revision_hash(&data_bytes(&data), Some(collision_count));
    let mut labels = set.metadata.labels.clone().unwrap_or_default();
    labels.insert(SIDECARSET_REVISION_OWNER_LABEL.into(), name.clone());
    if !spec.custom_version.is_empty() {
        labels.insert(SIDECARSET_CUSTOM_VERSION_LABEL.into(), spec.custom_version.clone());
    }
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(&name, &hash)),
            namespace: Some(namespace.to_string()),
            labels: Some(labels),
            annotations: set.metadata.annotations.clone(),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps.kruise.io/v1beta1".into(),
                kind: "SidecarSet".into(),
                name,
                uid: set.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        },
        data: Some(RawExtension(data)),
        revision: number,
    }
}

/// Makes sure the SidecarSet's latest revision exists and returns its name; drops revisions
/// beyond `revisionHistoryLimit` that no managed pod runs.
async fn ensure_latest_revision(
    ctx: &Context,
    set: &SidecarSet,
    pods: &[&Pod],
) -> Result<String, ControllerError> {
    let name = set.name_any();
    let mut revisions: Vec<ControllerRevision> = ctx
        .revisions
        .state()
        .iter()
        .filter(|r| r.metadata.namespace.as_deref() == Some(ctx.namespace.as_str()))
        .filter(|r| r.labels().get(SIDECARSET_REVISION_OWNER_LABEL) == Some(&name))
        .map(|r| (**r).clone())
        .collect();
    let collision_count = set.status.as_ref().and_then(|s| s.collision_count).unwrap_or(0);
    let api: Api<ControllerRevision> = Api::namespaced(ctx.client.clone(), &ctx.namespace);
    let latest = match plan_revision(&revisions, |number| {
        new_revision(set, &ctx.namespace, number, collision_count)
    }) {
        RevisionPlan::UseLatest(latest) => latest,
        RevisionPlan::Reuse { name, number } => {
            let Some(existing) = revisions.iter().find(|r| r.name_any() == name) else { return Ok(name) };
            renumber_revision(&api, existing, number, &BTreeMap::new()).await?;
            name
        }
        RevisionPlan::Create(revision) => match create_revision(&api, &revision).await {
            Ok(created) => {
                // Counted against the history limit now, not at the next reconcile.
                let name = created.name_any();
                revisions.push(created);
                name
            }
            Err(kube::Error::Api(status)) if status.code == 409 => revision.name_any(),
            Err(error) => return Err(error.into()),
        },
    };
    let custom_version = &set.spec.custom_version;
    if let Some(revision) = revisions.iter().find(|r| r.name_any() == latest)
        && !custom_version.is_empty()
        && revision.labels().get(SIDECARSET_CUSTOM_VERSION_LABEL) != Some(custom_version)
    {
        let patch = json!({"metadata": {"labels": {SIDECARSET_CUSTOM_VERSION_LABEL: custom_version}}});
        api.patch(&latest, &PatchParams::default(), &Patch::Merge(&patch)).await?;
    }
    let mut keep: HashSet<String> = pods
        .iter()
        .filter_map(|pod| {
            super::upgrade_specs(&pod.metadata, kruise_crds::defaults::SIDECARSET_HASH_ANNOTATION)
                .remove(&name)
                .map(|spec| spec.controller_revision)
        })
        .collect();
    keep.insert(latest.clone());
    if let Some(pinned) = set.spec.injection_strategy.revision.as_ref().and_then(|r| r.revision_name.clone())
    {
        keep.insert(pinned);
    }
    keep.remove(&latest);
    let sorted_names: Vec<String> = sorted(revisions).iter().map(|r| r.name_any()).collect();
    let active: BTreeSet<String> = keep.into_iter().collect();
    let limit = set.spec.revision_history_limit.unwrap_or(10);
    for doomed in sidecarset_revisions_to_truncate(&sorted_names, &active, limit) {
        match api.delete(&doomed, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(latest)
}

/// The JSON patch from `old` to `new` for the parts an upgrade changes (container images and
/// annotations), guarded by each changed container's name.
fn pod_patch(old: &Pod, new: &Pod) -> json_patch::Patch {
    let project = |pod: &Pod| {
        let containers: Vec<Value> = pod
            .spec
            .iter()
            .flat_map(|s| &s.containers)
            .map(|c| json!({"name": c.name, "image": c.image}))
            .collect();
        json!({"metadata": {"annotations": pod.metadata.annotations.clone().unwrap_or_default()},
               "spec": {"containers": containers}})
    };
    let mut ops: Vec<Value> = Vec::new();
    let diff = json_patch::diff(&project(old), &project(new));
    for op in serde_json::to_value(&diff).ok().and_then(|v| v.as_array().cloned()).unwrap_or_default() {
        if let Some(path) = op.get("path").and_then(Value::as_str)
            && let Some(rest) = path.strip_prefix("/spec/containers/")
            && let Some((index, _)) = rest.split_once('/')
            && let Some(name) = index
                .parse::<usize>()
                .ok()
                .and_then(|i| old.spec.as_ref()?.containers.get(i))
                .map(|c| c.name.clone())
        {
            ops.push(json!({"op": "test", "path": format!("/spec/containers/{index}/name"), "value": name}));
        }
        ops.push(op);
    }
    if old.metadata.annotations.is_none() && !ops.is_empty() {
        ops.insert(0, json!({"op": "add", "path": "/metadata/annotations", "value": {}}));
    }
    serde_json::from_value(Value::Array(ops)).unwrap_or(json_patch::Patch(Vec::new()))
}

/// Writes `new` over `old` (images and annotations) and remembers the version written.
async fn write_pod(ctx: &Context, old: &Pod, new: &Pod) -> Result<(), ControllerError> {
    let patch = pod_patch(old, new);
    if patch.0.is_empty() {
        return Ok(());
    }
    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), &old.namespace().unwrap_or_default());
    match api.patch(&old.name_any(), &PatchParams::default(), &Patch::<()>::Json(patch)).await {
        Ok(written) => {
            if let Some(version) = written.resource_version() {
                ctx.pod_versions.expect(&pod_key(old), &version, Instant::now());
            }
            Ok(())
        }
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

async fn set_upgradable(
    ctx: &Context,
    set: &SidecarSet,
    pod: &Pod,
    upgradable: bool,
) -> Result<(), ControllerError> {
    let Some(condition) = upgradable_condition(set, pod, upgradable, &now()) else { return Ok(()) };
    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), &pod.namespace().unwrap_or_default());
    let patch = json!({"status": {"conditions": [condition]}});
    match api.patch_status(&pod.name_any(), &PatchParams::default(), &Patch::Strategic(&patch)).await {
        Ok(_) | Err(kube::Error::Api(_)) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

async fn reconcile(ctx: &Context, name: &str) -> Result<Option<Duration>, ControllerError> {
    let Some(set) = ctx.sidecarsets.get(&ObjectRef::new(name)) else { return Ok(None) };
    if set.metadata.deletion_timestamp.is_some() {
        return Ok(None);
    }
    let all_pods = ctx.pods.state();
    let labels_of = |namespace: &str| {
        ctx.namespaces
            .get(&ObjectRef::new(namespace))
            .map(|ns| ns.metadata.labels.clone().unwrap_or_default())
    };
    let mut pods: Vec<&Pod> = all_pods
        .iter()
        .map(AsRef::as_ref)
        .filter(|pod| {
            let namespace_labels = set
                .spec
                .namespace_selector
                .as_ref()
                .and_then(|_| labels_of(&pod.namespace().unwrap_or_default()));
            manages_pod(&set, pod, namespace_labels.as_ref())
        })
        .collect();
    pods.sort_by_key(|pod| pod_key(pod));

    let latest = ensure_latest_revision(ctx, &set, &pods).await?;
    let collision_count = set.status.as_ref().and_then(|s| s.collision_count).unwrap_or(0);
    let status = status_of(&set, &pods, &latest, collision_count);
    if set.status.as_ref() != Some(&status) {
        let api: Api<SidecarSet> = Api::all(ctx.client.clone());
        let mut body = serde_json::to_value(&status).unwrap_or_default();
        // The serialized status omits zero counts; a merge patch must clear them explicitly.
        if let Some(fields) = body.as_object_mut() {
            fields.insert("updatedReadyPods".into(), json!(status.updated_ready_pods));
        }
        let patch = json!({"status": body});
        match api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => {}
            Err(kube::Error::Api(response)) if response.code == 404 => return Ok(None),
            Err(error) => return Err(error.into()),
        }
    }
    let now_instant = Instant::now();
    let in_flight = pods.iter().any(|pod| {
        !ctx.pod_versions.is_satisfied(
            &pod_key(pod),
            pod.resource_version().as_deref().unwrap_or_default(),
            now_instant,
            EXPECTATION_TIMEOUT,
        )
    });
    if in_flight {
        return Ok(Some(IN_FLIGHT_RETRY));
    }
    if !upgrades_pods(&set) {
        return Ok(None);
    }
    let now = now();
    let flips: Vec<&Pod> = pods.iter().copied().filter(|pod| hot_upgrade_ready_to_flip(&set, pod)).collect();
    if !flips.is_empty() {
        for pod in flips {
            if let Some(flipped) = hot_upgrade_flipped(&set, pod, &now) {
                write_pod(ctx, pod, &flipped).await?;
                ctx.recorder.publish(
                    pod.object_ref(&()),
                    EventKind::Normal,
                    "ResetContainerSucceed",
                    "reset sidecar container image empty successfully".into(),
                );
            }
        }
        return Ok(Some(IN_FLIGHT_RETRY));
    }
    if pods.iter().all(|pod| is_updated(&set, pod)) {
        return Ok(None);
    }
    // Upgrade against the revision just recorded, so the pods' entries name it.
    let mut current = (*set).clone();
    current.status = Some(status);
    let (upgrade, not_upgradable) = next_upgrade(&current, &pods);
    for &index in &not_upgradable {
        set_upgradable(ctx, &current, pods[index], false).await?;
    }
    if !not_upgradable.is_empty() {
        ctx.recorder.publish(
            current.object_ref(&()),
            EventKind::Normal,
            "NotUpgradablePods",
            format!(
                "SidecarSet in-place update detected {} not upgradable pod(s) in this round, will skip them.",
                not_upgradable.len()
            ),
        );
    }
    for &index in &upgrade {
        let pod = pods[index];
        match upgraded_pod(&current, pod, &now) {
            Ok(Some(upgraded)) => {
                write_pod(ctx, pod, &upgraded).await?;
                set_upgradable(ctx, &current, pod, true).await?;
            }
            Ok(None) => {}
            Err(error) => {
                ctx.recorder.publish(
                    current.object_ref(&()),
                    EventKind::Warning,
                    "UpdatePodFailed",
                    error.to_string(),
                );
            }
        }
    }
    tracing::debug!(sidecarset = name, upgraded = upgrade.len(), "upgraded pods in place");
    // Upgraded pods become ready through pod events; look again in any case so a pod that
    // never reports does not stall the rollout.
    Ok((!upgrade.is_empty()).then_some(IN_FLIGHT_RETRY))
}
