//! The UnitedDeployment controller's I/O: the shared caches of UnitedDeployments, the four
//! workload kinds (and the ReplicaSets and pods under them), and ControllerRevisions; a queue of
//! UnitedDeployments fed by their changes and by changes of the workloads they control; and the
//! writes the pure modules decide: revisions, subset workloads created, updated and deleted,
//! reserved-pod labels, events and the status.

use std::{
    borrow::Cow,
    collections::{BTreeMap, HashMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{
        apps::v1::{ControllerRevision, Deployment, ReplicaSet, StatefulSet},
        core::v1::{ObjectReference, Pod},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{
    self as beta, CloneSet, UnitedDeployment, UnitedDeploymentConditionType, UnitedDeploymentStatus,
};
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use super::{
    allocator::{allocate, is_adaptive, reserves_unschedulable_pods},
    core::{
        RESERVED_POD_LABEL, Requeue, SubsetView, calculate_status, classify_subsets, condition,
        default_adaptive_status, init_status, new_revision, next_partitions, next_updates,
        post_process_reserved, provision_plan, reserved_adaptive_status, set_condition,
        set_updated_condition, status_selector, update_reason, updated_since,
    },
    workload::{SubsetKind, apply_subset_template, set_max_unavailable, view_of},
};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        events::{EventKind, EventRecorder},
        expectations::{EXPECTATION_TIMEOUT, ResourceVersionExpectations},
        harness::QueueController,
        workqueue::WorkQueue,
    },
    workload::{
        claim::controller_uid,
        revision::{
            create_revision, equal_data, next_revision_number, renumber_revision, revisions_to_truncate,
            sorted,
        },
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "uniteddeployment";
/// The `source.component` of its events (upstream `controllerName`).
const EVENT_COMPONENT: &str = "uniteddeployment-controller";
/// Concurrent reconciles (upstream `--uniteddeployment-workers`, 3).
pub const WORKERS: usize = 3;
/// Attempts at a write that keeps meeting conflicts (upstream `updateRetries`).
const ATTEMPTS: usize = 5;
/// How long a created subset workload may take to show in the cache before it is created again.
const CREATION_GRACE: Duration = Duration::from_secs(30);
/// How soon a UnitedDeployment waiting for its new subset workloads to show is looked at again.
const CREATION_RETRY: Duration = Duration::from_millis(500);
/// How soon a UnitedDeployment whose cached copy is older than the last status write is looked
/// at again (upstream requeues after a second).
const STALE_RETRY: Duration = Duration::from_millis(300);

/// A UnitedDeployment as cached: spec and status kept as JSON. Decoding the typed object (four
/// workload templates deep) inside the watch's event buffering overflowed a 2 MiB worker stack
/// in debug builds; it is decoded per reconcile instead ([`decode`]).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
pub struct CachedUnitedDeployment {
    /// Its metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Its spec, undecoded.
    #[serde(default)]
    pub spec: Value,
    /// Its status, undecoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
}

impl kube::Resource for CachedUnitedDeployment {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "UnitedDeployment".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "apps.kruise.io".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1beta1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "uniteddeployments".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// Stack for decoding a UnitedDeployment: ample for the deepest template in a debug build.
const DECODE_STACK: usize = 16 << 20;

/// The typed UnitedDeployment, decoded on a thread of its own with a large stack.
fn decode(cached: &CachedUnitedDeployment) -> Result<UnitedDeployment, ControllerError> {
    let value = json!({"metadata": cached.metadata, "spec": cached.spec, "status": cached.status});
    std::thread::scope(|scope| {
        let decoding = std::thread::Builder::new()
            .name("ud-decode".into())
            .stack_size(DECODE_STACK)
            .spawn_scoped(scope, || serde_json::from_value::<UnitedDeployment>(value))
            .map_err(|source| ControllerError::Io { what: "starting a decoding thread".into(), source })?;
        match decoding.join() {
            Ok(decoded) => decoded.map_err(ControllerError::from),
            Err(_) => Err(ControllerError::Invalid("decoding a UnitedDeployment panicked".into())),
        }
    })
}

struct Context {
    client: Client,
    uds: Informer<CachedUnitedDeployment>,
    statefulsets: Informer<StatefulSet>,
    advanced_statefulsets: Informer<beta::StatefulSet>,
    clonesets: Informer<CloneSet>,
    deployments: Informer<Deployment>,
    replicasets: Informer<ReplicaSet>,
    pods: Informer<Pod>,
    revisions: Informer<ControllerRevision>,
    recorder: EventRecorder,
    /// The resourceVersion of each UnitedDeployment's last status write.
    rv: ResourceVersionExpectations,
    /// Subset workloads created (`<namespace>/<ud>/<subset>`) that the cache may not show yet:
    /// not created again until it does or [`CREATION_GRACE`] passes.
    pending_creates: parking_lot::Mutex<HashMap<String, Instant>>,
}

fn key_of(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Queues the UnitedDeployment controlling a changed workload.
fn owner_changed<K: kube::Resource>(event: &CacheEvent<K>, queue: &WorkQueue) {
    let object = match event {
        CacheEvent::Applied { new, .. } => new.as_ref(),
        CacheEvent::Deleted(object) => object.as_ref(),
        CacheEvent::Synced => return,
    };
    let meta = object.meta();
    let owner = meta.owner_references.iter().flatten().find(|r| {
        r.controller == Some(true)
            && r.kind == "UnitedDeployment"
            && r.api_version.starts_with("apps.kruise.io/")
    });
    if let (Some(owner), Some(namespace)) = (owner, meta.namespace.as_deref()) {
        queue.add(key_of(namespace, &owner.name));
    }
}

/// Runs the controller until the future is dropped; `on_synced` is called once its caches hold
/// their first lists.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let ctx = Arc::new(Context {
        client: caches.client().clone(),
        uds: caches.informer::<CachedUnitedDeployment>(),
        statefulsets: caches.informer::<StatefulSet>(),
        advanced_statefulsets: caches.informer::<beta::StatefulSet>(),
        clonesets: caches.informer::<CloneSet>(),
        deployments: caches.informer::<Deployment>(),
        replicasets: caches.informer::<ReplicaSet>(),
        pods: caches.informer::<Pod>(),
        revisions: caches.informer::<ControllerRevision>(),
        recorder: EventRecorder::new(caches.client().clone(), EVENT_COMPONENT),
        rv: ResourceVersionExpectations::new(),
        pending_creates: parking_lot::Mutex::new(HashMap::new()),
    });
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let expectations = ctx.clone();
    controller.watch(&ctx.uds, move |event, queue| match event {
        CacheEvent::Applied { new, .. } => {
            queue.add(key_of(&new.namespace().unwrap_or_default(), &new.name_any()));
        }
        CacheEvent::Deleted(ud) => {
            let key = key_of(&ud.namespace().unwrap_or_default(), &ud.name_any());
            expectations.rv.delete(&key);
            expectations.pending_creates.lock().retain(|pending, _| !pending.starts_with(&format!("{key}/")));
        }
        CacheEvent::Synced => {}
    });
    controller.watch(&ctx.statefulsets, owner_changed);
    controller.watch(&ctx.advanced_statefulsets, owner_changed);
    controller.watch(&ctx.clonesets, owner_changed);
    controller.watch(&ctx.deployments, owner_changed);
    controller.reads(&ctx.replicasets).reads(&ctx.pods).reads(&ctx.revisions);
    let initial = ctx.uds.clone();
    let initial_keys = move || {
        initial.state().iter().map(|ud| key_of(&ud.namespace().unwrap_or_default(), &ud.name_any())).collect()
    };
    controller
        .run(initial_keys, on_synced, move |key| {
            let ctx = ctx.clone();
            async move { Box::pin(reconcile(&ctx, &key)).await }
        })
        .await;
}

fn is_status(error: &kube::Error, code: u16) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == code)
}

fn api_resource(kind: SubsetKind) -> ApiResource {
    let (group, version) = kind.api_version().split_once('/').unwrap_or(("", kind.api_version()));
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: kind.api_version().into(),
        kind: kind.kind().into(),
        plural: kind.plural().into(),
    }
}

fn reference(ud: &UnitedDeployment) -> ObjectReference {
    ObjectReference {
        api_version: Some("apps.kruise.io/v1beta1".into()),
        kind: Some("UnitedDeployment".into()),
        name: ud.metadata.name.clone(),
        namespace: ud.metadata.namespace.clone(),
        uid: ud.metadata.uid.clone(),
        resource_version: ud.metadata.resource_version.clone(),
        ..Default::default()
    }
}

impl Context {
    fn event(&self, ud: &UnitedDeployment, kind: EventKind, reason: &str, note: String) {
        self.recorder.publish(reference(ud), kind, reason, note);
    }

    /// The pods controlled by the object with `uid`.
    fn controlled_pods(&self, namespace: &str, uid: &str) -> Vec<Pod> {
        self.pods
            .owner_index()
            .owned_or_orphaned(namespace, uid)
            .into_iter()
            .filter(|pod| controller_uid(pod) == Some(uid))
            .map(|pod| (*pod).clone())
            .collect()
    }

    /// A workload's pods (for a Deployment, the pods of its ReplicaSets).
    fn workload_pods(&self, kind: SubsetKind, namespace: &str, uid: &str) -> Vec<Pod> {
        if kind != SubsetKind::Deployment {
            return self.controlled_pods(namespace, uid);
        }
        self.replicasets
            .owner_index()
            .owned_or_orphaned(namespace, uid)
            .into_iter()
            .filter(|rs| rs.owner_references().iter().any(|r| r.controller == Some(true) && r.uid == uid))
            .flat_map(|rs| self.controlled_pods(namespace, rs.metadata.uid.as_deref().unwrap_or_default()))
            .collect()
    }

    /// The workloads of `kind` that the UnitedDeployment controls, as JSON.
    fn controlled_workloads(&self, kind: SubsetKind, namespace: &str, uid: &str) -> Vec<Value> {
        fn pick<K: kube::Resource<DynamicType = ()> + serde::Serialize + crate::runtime::cache::Cached>(
            informer: &Informer<K>,
            namespace: &str,
            uid: &str,
        ) -> Vec<Value> {
            informer
                .owner_index()
                .owned_or_orphaned(namespace, uid)
                .into_iter()
                .filter(|w| {
                    w.meta()
                        .owner_references
                        .iter()
                        .flatten()
                        .any(|r| r.controller == Some(true) && r.uid == uid)
                })
                .filter_map(|w| serde_json::to_value(&*w).ok())
                .collect()
        }
        let mut values = match kind {
            SubsetKind::StatefulSet => pick(&self.statefulsets, namespace, uid),
            SubsetKind::AdvancedStatefulSet => pick(&self.advanced_statefulsets, namespace, uid),
            SubsetKind::CloneSet => pick(&self.clonesets, namespace, uid),
            SubsetKind::Deployment => pick(&self.deployments, namespace, uid),
        };
        let (api_version, kind_name) = (kind.api_version(), kind.kind());
        for value in &mut values {
            if let Some(object) = value.as_object_mut() {
                object.insert("apiVersion".into(), json!(api_version));
                object.insert("kind".into(), json!(kind_name));
            }
        }
        values
    }

    /// The subset workloads of `kind`, read back with their pods.
    fn subsets_of(
        &self,
        kind: SubsetKind,
        namespace: &str,
        uid: &str,
        revision: &str,
    ) -> Vec<(SubsetView, Value)> {
        self.controlled_workloads(kind, namespace, uid)
            .into_iter()
            .filter_map(|workload| {
                let workload_uid =
                    workload.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default();
                let pods = self.workload_pods(kind, namespace, workload_uid);
                view_of(kind, &workload, pods, revision).map(|view| (view, workload))
            })
            .collect()
    }
}

async fn reconcile(ctx: &Context, key: &str) -> Result<Option<Duration>, ControllerError> {
    let Some((namespace, name)) = key.split_once('/') else {
        return Ok(None);
    };
    let Some(cached) = ctx.uds.get_named(Some(namespace), name) else {
        ctx.rv.delete(key);
        return Ok(None);
    };
    if cached.metadata.deletion_timestamp.is_some() {
        return Ok(None);
    }
    let cached_rv = cached.metadata.resource_version.as_deref().unwrap_or_default();
    if !ctx.rv.is_satisfied(key, cached_rv, Instant::now(), EXPECTATION_TIMEOUT) {
        return Ok(Some(STALE_RETRY));
    }
    let ud = match decode(&cached) {
        Ok(ud) => ud,
        Err(error) => {
            // Not retried: the next change of the object is looked at again.
            tracing::error!(uniteddeployment = %key, %error, "cannot decode the UnitedDeployment");
            return Ok(None);
        }
    };
    let uid = ud.metadata.uid.clone().unwrap_or_default();
    let now = Timestamp::now();
    let old_status = ud.status.clone().unwrap_or_default();
    let mut status = old_status.clone();
    init_status(&ud.spec, &mut status, now);

    let (current_revision, update_revision, collision_count) =
        match Box::pin(revisions(ctx, &ud, &status)).await {
            Ok(revisions) => revisions,
            Err(error) => {
                ctx.event(&ud, EventKind::Warning, "FailedRevisionProvision", error.to_string());
                return Err(error);
            }
        };
    // Upstream drops the count it computes; it is written here only once there was a collision.
    if collision_count != 0 || status.collision_count.is_some() {
        status.collision_count = Some(collision_count);
    }
    let Some(kind) = SubsetKind::of(&ud.spec) else {
        tracing::warn!(uniteddeployment = %key, "no subset template: nothing to run");
        return Ok(None);
    };
    let expected = update_revision.clone();
    set_updated_condition(&mut status, &current_revision, &expected, now);

    // The subset workloads; extra ones of a subset are deleted.
    let (mut existing, duplicates) = classify_subsets(
        ctx.subsets_of(kind, namespace, &uid, &expected).into_iter().map(|(view, _)| view).collect(),
    );
    for duplicate in duplicates {
        tracing::info!(uniteddeployment = %key, workload = duplicate.name(), subset = %duplicate.subset_name, "deleting a duplicated subset workload");
        Box::pin(delete_workload(ctx, kind, namespace, duplicate.name())).await.inspect_err(|error| {
            ctx.event(&ud, EventKind::Warning, "FailedDeleteDuplicatedSubsets", error.to_string());
        })?;
    }

    // The Adaptive strategy's view of each subset.
    let mut requeue = Requeue::default();
    if is_adaptive(&ud.spec) {
        let since = updated_since(&status).cloned();
        for (name, subset) in existing.iter_mut() {
            let entry = status.subset_status_mut(name);
            if reserves_unschedulable_pods(&ud.spec) {
                let to_patch =
                    reserved_adaptive_status(&ud.spec, entry, since.as_ref(), subset, now, &mut requeue);
                Box::pin(patch_reserved_labels(ctx, namespace, &to_patch)).await?;
            } else {
                default_adaptive_status(&ud.spec, entry, subset, now, &mut requeue);
            }
        }
    }

    let next_replicas = match allocate(&ud.spec, &existing) {
        Ok(next) => next,
        Err(error) => {
            tracing::warn!(uniteddeployment = %key, %error, "subset replicas cannot be allocated");
            ctx.event(
                &ud,
                EventKind::Warning,
                "Failed SpecifySubsetReplicas",
                format!("Specified subset replicas is ineffective: {error}"),
            );
            return Err(ControllerError::Invalid(format!("UnitedDeployment {key}: {error}")));
        }
    };
    if reserves_unschedulable_pods(&ud.spec) {
        for (name, subset) in &existing {
            let next = next_replicas.get(name).copied().unwrap_or(0);
            post_process_reserved(status.subset_status_mut(name), subset, next, now);
        }
    }
    let partitions = next_partitions(&ud.spec, &next_replicas);
    let updates = next_updates(&ud.spec, &next_replicas, &partitions);
    tracing::debug!(uniteddeployment = %key, ?next_replicas, ?partitions, "next subset replicas");

    // Provision: create missing subsets, delete removed ones and workloads of other kinds.
    let (mut creates, deletes) = provision_plan(&ud.spec, &existing);
    let pending_prefix = format!("{key}/");
    {
        // A workload created by an earlier reconcile that the cache does not show yet is not
        // created twice (which would leave a duplicate to delete).
        let mut pending = ctx.pending_creates.lock();
        let started = Instant::now();
        pending.retain(|pending_key, at| match pending_key.strip_prefix(&pending_prefix) {
            Some(subset) => !existing.contains_key(subset) && started.duration_since(*at) < CREATION_GRACE,
            None => true,
        });
        let before = creates.len();
        creates.retain(|subset| !pending.contains_key(&format!("{pending_prefix}{subset}")));
        if creates.len() != before {
            requeue.push(CREATION_RETRY);
        }
    }
    let mut provision_errors: Vec<String> = Vec::new();
    for subset in &creates {
        let update = updates.get(subset).cloned().unwrap_or_default();
        match apply_subset_template(&ud, kind, subset, &expected, update.replicas, update.partition, None) {
            Ok(workload) => match Box::pin(create_workload(ctx, kind, namespace, workload)).await {
                Ok(()) => {
                    ctx.pending_creates.lock().insert(format!("{pending_prefix}{subset}"), Instant::now());
                }
                Err(error) => provision_errors
                    .push(format!("fail to create Subset ({}) {subset}: {error}", kind.name())),
            },
            Err(error) => {
                provision_errors.push(format!("fail to create Subset ({}) {subset}: {error}", kind.name()))
            }
        }
    }
    if !creates.is_empty() && provision_errors.is_empty() {
        if is_adaptive(&ud.spec) {
            requeue.push(super::core::adaptive_durations(&ud.spec).0);
        }
        ctx.event(
            &ud,
            EventKind::Normal,
            "SuccessfulUpdateSubset",
            format!("Create {} Subset ({})", creates.len(), kind.name()),
        );
    }
    let mut deleted = 0;
    for subset in &deletes {
        if let Some(view) = existing.get(subset) {
            match Box::pin(delete_workload(ctx, kind, namespace, view.name())).await {
                Ok(()) => deleted += 1,
                Err(error) => provision_errors.push(format!(
                    "fail to delete Subset ({}) {namespace}/{} for {subset}: {error}",
                    kind.name(),
                    view.name()
                )),
            }
        }
    }
    if deleted > 0 {
        ctx.event(
            &ud,
            EventKind::Normal,
            "SuccessfulUpdateSubset",
            format!("Delete {deleted} Subset ({})", kind.name()),
        );
    }
    let mut cleaned = false;
    for other in SubsetKind::ALL.into_iter().filter(|k| *k != kind) {
        for workload in ctx.controlled_workloads(other, namespace, &uid) {
            let workload_name =
                workload.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
            cleaned = true;
            if let Err(error) = Box::pin(delete_workload(ctx, other, namespace, workload_name)).await {
                provision_errors.push(format!(
                    "fail to delete Subset {workload_name} of other type {} for UnitedDeployment {key}: {error}",
                    other.name()
                ));
            }
        }
    }
    let provision_failed = !provision_errors.is_empty();
    if provision_failed {
        let message = provision_errors.join("; ");
        set_condition(
            &mut status,
            condition(UnitedDeploymentConditionType::SubsetProvisioned, false, "Error", &message, now),
        );
        ctx.event(&ud, EventKind::Warning, "FailedUpdateSubset", message);
    } else if !creates.is_empty() || !deletes.is_empty() || cleaned {
        set_condition(
            &mut status,
            condition(UnitedDeploymentConditionType::SubsetProvisioned, true, "", "", now),
        );
    }

    // Update the existing subsets that need it, one at a time.
    let mut update_errors: Vec<String> = Vec::new();
    let mut new_pods = false;
    for (name, subset) in existing.iter().filter(|(name, _)| !deletes.contains(name)) {
        let Some(update) = updates.get(name) else { continue };
        let Some(reason) = update_reason(subset, &expected, update) else { continue };
        tracing::info!(
            uniteddeployment = %key, subset = %name, workload = subset.name(), reason,
            replicas = update.replicas, partition = update.partition, "updating subset workload"
        );
        new_pods |= subset.spec_replicas < update.replicas;
        if let Err(error) =
            Box::pin(update_workload(ctx, &ud, kind, subset, &expected, update.replicas, update.partition))
                .await
        {
            let message =
                format!("Error updating PodSet ({}) {} when updating: {error}", kind.name(), subset.name());
            ctx.event(&ud, EventKind::Warning, "FailedUpdateSubset", message.clone());
            update_errors.push(message);
        }
    }
    if update_errors.is_empty() {
        set_condition(
            &mut status,
            condition(UnitedDeploymentConditionType::SubsetUpdated, true, "", "", now),
        );
    } else {
        if is_adaptive(&ud.spec) && new_pods {
            requeue.push(super::core::adaptive_durations(&ud.spec).0);
        }
        let message = update_errors.join("; ");
        set_condition(
            &mut status,
            condition(UnitedDeploymentConditionType::SubsetUpdated, false, "Error", &message, now),
        );
    }

    status.label_selector = status_selector(&ud);
    calculate_status(&mut status, &existing, &next_replicas, &partitions, &current_revision, &expected);
    Box::pin(write_status(ctx, &ud, key, old_status, status)).await?;
    if provision_failed {
        return Err(ControllerError::Invalid(format!(
            "UnitedDeployment {key}: {}",
            provision_errors.join("; ")
        )));
    }
    if let Some(after) = requeue.0 {
        tracing::debug!(uniteddeployment = %key, after_seconds = after.as_secs_f64(), "requeue needed");
    }
    Ok(requeue.0)
}

/// The current and update revisions (by name) and the collision count (upstream
/// `constructUnitedDeploymentRevisions`): old revisions beyond `revisionHistoryLimit` deleted,
/// the template's revision found, renumbered (a rollback) or created.
async fn revisions(
    ctx: &Context,
    ud: &UnitedDeployment,
    status: &UnitedDeploymentStatus,
) -> Result<(String, String, i32), ControllerError> {
    let namespace = ud.namespace().unwrap_or_default();
    let uid = ud.metadata.uid.clone().unwrap_or_default();
    let api: Api<ControllerRevision> = Api::namespaced(ctx.client.clone(), &namespace);
    let mut collision_count = status.collision_count.unwrap_or(0);
    let owned: Vec<ControllerRevision> = ctx
        .revisions
        .owner_index()
        .owned_or_orphaned(&namespace, &uid)
        .into_iter()
        .filter(|r| r.owner_references().iter().any(|o| o.controller == Some(true) && o.uid == uid))
        .map(|r| (*r).clone())
        .collect();
    let mut history = sorted(owned);

    let limit = ud.spec.revision_history_limit.unwrap_or(10);
    let mut keep: HashSet<String> = HashSet::new();
    keep.insert(status.current_revision.clone());
    if !status.updated_revision.is_empty() {
        keep.insert(status.updated_revision.clone());
    }
    let expired = revisions_to_truncate(&history, &keep, limit);
    for name in &expired {
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(error) if is_status(&error, 404) => {}
            Err(error) => return Err(error.into()),
        }
    }
    history.retain(|r| !expired.contains(&r.name_any()));

    let number = next_revision_number(&history);
    let candidate = new_revision(ud, number, collision_count);
    let equal: Vec<&ControllerRevision> = history.iter().filter(|r| equal_data(r, &candidate)).collect();
    let update = match (equal.last(), history.last()) {
        (Some(last_equal), Some(latest)) if last_equal.metadata.name == latest.metadata.name => {
            latest.name_any()
        }
        (Some(last_equal), _) => {
            renumber_revision(&api, last_equal, number, &BTreeMap::new()).await?;
            last_equal.name_any()
        }
        (None, _) => loop {
            let revision = new_revision(ud, number, collision_count);
            match create_revision(&api, &revision).await {
                Ok(created) => break created.name_any(),
                Err(error) if is_status(&error, 409) => {
                    let name = revision.name_any();
                    match api.get_opt(&name).await? {
                        Some(found) if equal_data(&found, &revision) => break name,
                        Some(_) => collision_count += 1,
                        None => continue,
                    }
                }
                Err(error) => return Err(error.into()),
            }
        },
    };
    let current = if history.iter().any(|r| r.name_any() == status.current_revision) {
        status.current_revision.clone()
    } else {
        update.clone()
    };
    Ok((current, update, collision_count))
}

async fn patch_reserved_labels(
    ctx: &Context,
    namespace: &str,
    pods: &[(String, bool)],
) -> Result<(), ControllerError> {
    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), namespace);
    for (name, reserved) in pods {
        let patch = json!({"metadata": {"labels": {RESERVED_POD_LABEL: reserved.to_string()}}});
        match api.patch(name, &PatchParams::default(), &Patch::Strategic(&patch)).await {
            Ok(_) => {}
            Err(error) if is_status(&error, 404) => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

async fn create_workload(
    ctx: &Context,
    kind: SubsetKind,
    namespace: &str,
    workload: Value,
) -> Result<(), ControllerError> {
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), namespace, &api_resource(kind));
    let object: DynamicObject = serde_json::from_value(workload)?;
    match api.create(&PostParams::default(), &object).await {
        Ok(created) => {
            tracing::info!(namespace, workload = %created.name_any(), kind = kind.name(), "created subset workload");
            Ok(())
        }
        Err(error) => Err(error.into()),
    }
}

async fn delete_workload(
    ctx: &Context,
    kind: SubsetKind,
    namespace: &str,
    name: &str,
) -> Result<(), ControllerError> {
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), namespace, &api_resource(kind));
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(error) if is_status(&error, 404) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Writes a subset workload (upstream `UpdateSubset`): the cached object with the template
/// applied, read again from the API on a conflict.
async fn update_workload(
    ctx: &Context,
    ud: &UnitedDeployment,
    kind: SubsetKind,
    subset: &SubsetView,
    revision: &str,
    replicas: i32,
    partition: i32,
) -> Result<(), ControllerError> {
    let namespace = ud.namespace().unwrap_or_default();
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &namespace, &api_resource(kind));
    let mut current: Option<Value> = None;
    for _ in 0..ATTEMPTS {
        let base = match current.take() {
            Some(base) => base,
            None => match api.get_opt(subset.name()).await? {
                Some(live) => serde_json::to_value(live)?,
                None => return Ok(()),
            },
        };
        let mut workload =
            apply_subset_template(ud, kind, &subset.subset_name, revision, replicas, partition, Some(&base))
                .map_err(|error| ControllerError::Invalid(error.to_string()))?;
        if subset.status.unschedulable.unschedulable && reserves_unschedulable_pods(&ud.spec) {
            let max_unavailable = subset.spec_replicas - subset.status.ready_replicas
                + subset.status.unschedulable.update_timeout_pods;
            set_max_unavailable(kind, &mut workload, max_unavailable);
        }
        let object: DynamicObject = serde_json::from_value(workload)?;
        match api.replace(subset.name(), &PostParams::default(), &object).await {
            Ok(_) => {
                if kind == SubsetKind::StatefulSet {
                    delete_stuck_pods(ctx, subset, revision, partition, &object).await?;
                }
                return Ok(());
            }
            Err(error) if is_status(&error, 409) => continue,
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!(
        "subset workload {} kept changing while it was written",
        subset.name()
    )))
}

/// The ordinal of a StatefulSet pod (`<set>-<ordinal>`).
fn ordinal(pod: &Pod) -> i32 {
    pod.name_any().rsplit('-').next().and_then(|o| o.parse().ok()).unwrap_or(-1)
}

/// After a built-in StatefulSet rolling update, deletes its not-ready pods at an old revision
/// at or above the partition, which the StatefulSet controller would wait on forever (upstream
/// `StatefulSetAdapter.PostUpdate`).
async fn delete_stuck_pods(
    ctx: &Context,
    subset: &SubsetView,
    revision: &str,
    partition: i32,
    workload: &DynamicObject,
) -> Result<(), ControllerError> {
    if workload.data.pointer("/spec/updateStrategy/type").and_then(Value::as_str) == Some("OnDelete") {
        return Ok(());
    }
    let namespace = subset.meta.namespace.clone().unwrap_or_default();
    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), &namespace);
    for pod in &subset.pods {
        let pod_revision = pod.labels().get(super::core::REVISION_LABEL).map_or("", String::as_str);
        if ordinal(pod) >= partition && pod_revision != revision && !super::core::is_pod_ready(pod) {
            match api.delete(&pod.name_any(), &DeleteParams::background()).await {
                Ok(_) => {}
                Err(error) if is_status(&error, 404) => {}
                Err(error) => return Err(error.into()),
            }
        }
    }
    Ok(())
}

/// Writes the status when it changed (upstream `updateUnitedDeployment`), retrying conflicts on
/// a fresh copy.
async fn write_status(
    ctx: &Context,
    ud: &UnitedDeployment,
    key: &str,
    old: UnitedDeploymentStatus,
    mut status: UnitedDeploymentStatus,
) -> Result<(), ControllerError> {
    let generation = ud.metadata.generation.unwrap_or(0);
    let unchanged = UnitedDeploymentStatus { observed_generation: old.observed_generation, ..status.clone() };
    if old == unchanged && old.observed_generation == generation {
        return Ok(());
    }
    status.observed_generation = generation;
    let namespace = ud.namespace().unwrap_or_default();
    let resource = ApiResource::erase::<CachedUnitedDeployment>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &namespace, &resource);
    let status_value = serde_json::to_value(&status)?;
    let mut current: Value = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": ud.metadata, "spec": serde_json::to_value(&ud.spec)?,
    });
    for _ in 0..ATTEMPTS {
        current["status"] = status_value.clone();
        let object: DynamicObject = serde_json::from_value(current.clone())?;
        match api.replace_status(&ud.name_any(), &PostParams::default(), &object).await {
            Ok(written) => {
                ctx.rv.expect(
                    key,
                    written.metadata.resource_version.as_deref().unwrap_or_default(),
                    Instant::now(),
                );
                return Ok(());
            }
            Err(error) if is_status(&error, 409) => match api.get_opt(&ud.name_any()).await? {
                Some(fresh) => current = serde_json::to_value(fresh)?,
                None => return Ok(()),
            },
            Err(error) if is_status(&error, 404) => return Ok(()),
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!("UnitedDeployment {key}: status write kept conflicting")))
}
