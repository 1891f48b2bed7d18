//! The PersistentPodState controller's I/O: shared caches of PersistentPodStates, pods, nodes
//! and both StatefulSet kinds; a queue fed as upstream's event handlers feed theirs (a pod
//! that turned Ready or started terminating wakes its PersistentPodState; a StatefulSet whose
//! auto-generation annotations change queues a `generate#...` key; a StatefulSet being deleted
//! wakes its PersistentPodState); and the writes [`super::core`] decides.
//!
//! Custom workloads of the white list (`PPS_Watch_Custom_Workload_WhiteList` of
//! `kruise-configuration`, read once at start as upstream does) are watched with a dynamic
//! watch each, handled as the StatefulSets are, and read through the API when reconciled.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
    time::Duration,
};

use futures::StreamExt;

use k8s_openapi::api::{
    apps::v1::StatefulSet as BuiltinStatefulSet,
    core::v1::{Node, Pod},
};
use kruise_crds::apps::v1beta1::{
    PersistentPodState, PersistentPodStateStatus, StatefulSet, TargetReference,
};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams},
    runtime::{WatchStreamExt, watcher},
};

use super::core::{
    AUTO_GENERATE_PREFIX, AutoGenerateAction, PodInfo, WHITELIST_KEY, WhiteList, WorkloadInfo, WorkloadRef,
    auto_generate_action, auto_generate_key, auto_generation_changed, calculate_status,
    parse_auto_generate_name, pod_change_matters, select_for_target, wants_auto_generation,
};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        harness::QueueController,
        workqueue::WorkQueue,
    },
    statefulset::core::identity::ReservedOrdinals,
    workload::pods::{is_pod_active, is_pod_ready},
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "persistentpodstate";
/// Concurrent reconciles (upstream `concurrentReconciles`, 3).
pub const WORKERS: usize = 3;
/// Attempts at a write that keeps meeting conflicts.
const ATTEMPTS: usize = 5;
/// How soon a PersistentPodState of a custom workload is looked at again (nothing watches
/// custom workloads, so their scale-downs are noticed by polling).
const CUSTOM_RESYNC: Duration = Duration::from_secs(10);

const BUILTIN_API_VERSION: &str = "apps/v1";
const KRUISE_API_VERSION: &str = "apps.kruise.io/v1beta1";
const STATEFULSET: &str = "StatefulSet";

struct Context {
    client: Client,
    states: Informer<PersistentPodState>,
    pods: Informer<Pod>,
    nodes: Informer<Node>,
    builtin_sets: Informer<BuiltinStatefulSet>,
    kruise_sets: Informer<StatefulSet>,
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Queues the PersistentPodState targeting a workload, if any.
fn queue_target(
    states: &Informer<PersistentPodState>,
    queue: &WorkQueue,
    namespace: &str,
    target: TargetReference,
) {
    let all = states.state();
    let in_namespace =
        all.iter().map(AsRef::as_ref).filter(|s| s.metadata.namespace.as_deref() == Some(namespace));
    if let Some(state) = select_for_target(in_namespace, &target) {
        queue.add(key(namespace, &state.name_any()));
    }
}

/// The workload-event handler shared by both StatefulSet kinds (upstream
/// `enqueueRequestForStatefulSet` / `enqueueRequestForKruiseStatefulSet`).
fn workload_event<K: Resource>(
    event: &CacheEvent<K>,
    queue: &WorkQueue,
    states: &Informer<PersistentPodState>,
    api_version: &str,
) {
    let (namespace, name) = match event.object() {
        Some(object) => (
            object.meta().namespace.clone().unwrap_or_default(),
            object.meta().name.clone().unwrap_or_default(),
        ),
        None => return,
    };
    let target =
        TargetReference { api_version: api_version.into(), kind: STATEFULSET.into(), name: name.clone() };
    let generate = || auto_generate_key(&namespace, api_version, STATEFULSET, &name);
    match event {
        CacheEvent::Applied { new, old: None } => {
            if wants_auto_generation(new.meta().annotations.as_ref().unwrap_or(&BTreeMap::new())) {
                queue.add(generate());
            }
        }
        CacheEvent::Applied { new, old: Some(old) } => {
            let empty = BTreeMap::new();
            let (old_meta, new_meta) = (old.meta(), new.meta());
            if auto_generation_changed(
                old_meta.annotations.as_ref().unwrap_or(&empty),
                new_meta.annotations.as_ref().unwrap_or(&empty),
            ) {
                queue.add(generate());
            }
            if old_meta.deletion_timestamp.is_none() && new_meta.deletion_timestamp.is_some() {
                queue_target(states, queue, &namespace, target);
            }
        }
        CacheEvent::Deleted(_) => queue_target(states, queue, &namespace, target),
        CacheEvent::Synced => {}
    }
}

/// The pod-event handler (upstream `enqueueRequestForPod`): deletions, and updates where the
/// pod became Ready or started terminating, wake the PersistentPodState of its controller.
fn pod_event(event: &CacheEvent<Pod>, queue: &WorkQueue, states: &Informer<PersistentPodState>) {
    let pod = match event {
        CacheEvent::Deleted(pod) => pod,
        CacheEvent::Applied { new, old: Some(old) } => {
            if new.metadata.resource_version == old.metadata.resource_version
                || !pod_change_matters(
                    old.metadata.deletion_timestamp.is_some(),
                    new.metadata.deletion_timestamp.is_some(),
                    is_pod_ready(old),
                    is_pod_ready(new),
                )
            {
                return;
            }
            new
        }
        _ => return,
    };
    let namespace = pod.namespace().unwrap_or_default();
    let Some(owner) = pod.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true))
    else {
        return;
    };
    if let Some(name) = pod.annotations().get(super::core::ANNOTATION_INJECTED) {
        if states.get_named(Some(&namespace), name).is_some() {
            queue.add(key(&namespace, name));
        }
        return;
    }
    let target = TargetReference {
        api_version: owner.api_version.clone(),
        kind: owner.kind.clone(),
        name: owner.name.clone(),
    };
    queue_target(states, queue, &namespace, target);
}

/// The ConfigMap holding the white list (upstream `kruise-configuration`).
const KRUISE_CONFIGURATION: &str = "kruise-configuration";

/// Reads the white list from `kruise-configuration` in the manager namespace (empty when
/// either is missing or the JSON does not parse; the latter is logged).
async fn read_whitelist(client: &Client, namespace: &str) -> WhiteList {
    use k8s_openapi::api::core::v1::ConfigMap;
    let map = match Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .get_opt(KRUISE_CONFIGURATION)
        .await
    {
        Ok(map) => map,
        Err(error) => {
            tracing::warn!(%namespace, %error, "cannot read kruise-configuration; no custom workloads watched");
            return WhiteList::default();
        }
    };
    let text = map.and_then(|map| map.data).and_then(|data| data.get(WHITELIST_KEY).cloned());
    WhiteList::parse(text.as_deref()).unwrap_or_else(|error| {
        tracing::warn!(key = WHITELIST_KEY, %error, "the white list is not valid JSON; no custom workloads watched");
        WhiteList::default()
    })
}

/// Watches one white-listed workload kind (upstream `enqueueRequestForStatefulSetLike`):
/// creations and auto-generation annotation changes queue a `generate#...` key; a workload
/// starting to terminate or deleted wakes its PersistentPodState.
async fn watch_custom(
    client: Client,
    resource: ApiResource,
    states: Informer<PersistentPodState>,
    queue: WorkQueue,
) {
    let api: Api<DynamicObject> = Api::all_with(client, &resource);
    let mut seen: HashMap<(String, String), (BTreeMap<String, String>, bool)> = HashMap::new();
    let mut stream = watcher(api, watcher::Config::default()).default_backoff().boxed();
    while let Some(event) = stream.next().await {
        let (object, deleted) = match event {
            Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => (object, false),
            Ok(watcher::Event::Delete(object)) => (object, true),
            Ok(_) => continue,
            Err(error) => {
                tracing::debug!(kind = %resource.kind, %error, "custom workload watch error (retrying with back-off)");
                continue;
            }
        };
        let (namespace, name) = (object.namespace().unwrap_or_default(), object.name_any());
        let target = TargetReference {
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
            name: name.clone(),
        };
        if deleted {
            seen.remove(&(namespace.clone(), name));
            queue_target(&states, &queue, &namespace, target);
            continue;
        }
        let annotations = object.annotations().clone();
        let deleting = object.metadata.deletion_timestamp.is_some();
        let generate = auto_generate_key(&namespace, &resource.api_version, &resource.kind, &name);
        match seen.insert((namespace.clone(), name), (annotations.clone(), deleting)) {
            None if wants_auto_generation(&annotations) => queue.add(generate),
            None => {}
            Some((old, was_deleting)) => {
                if auto_generation_changed(&old, &annotations) {
                    queue.add(generate);
                }
                if !was_deleting && deleting {
                    queue_target(&states, &queue, &namespace, target);
                }
            }
        }
    }
}

/// Runs the controller until the future is dropped; `on_synced` is called once its caches hold
/// their first lists. `manager_namespace` holds `kruise-configuration`.
pub async fn run(
    caches: Caches,
    metrics: Metrics,
    manager_namespace: String,
    on_synced: impl FnOnce() + Send,
) {
    let ctx = Arc::new(Context {
        client: caches.client().clone(),
        states: caches.informer::<PersistentPodState>(),
        pods: caches.informer::<Pod>(),
        nodes: caches.informer::<Node>(),
        builtin_sets: caches.informer::<BuiltinStatefulSet>(),
        kruise_sets: caches.informer::<StatefulSet>(),
    });
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    controller.watch(&ctx.states, |event, queue| {
        if let CacheEvent::Applied { new, .. } = event {
            queue.add(key(&new.namespace().unwrap_or_default(), &new.name_any()));
        }
    });
    let states = ctx.states.clone();
    controller.watch(&ctx.pods, move |event, queue| pod_event(event, queue, &states));
    let states = ctx.states.clone();
    controller.watch(&ctx.builtin_sets, move |event, queue| {
        workload_event(event, queue, &states, BUILTIN_API_VERSION);
    });
    let states = ctx.states.clone();
    controller.watch(&ctx.kruise_sets, move |event, queue| {
        workload_event(event, queue, &states, KRUISE_API_VERSION);
    });
    controller.reads(&ctx.nodes);
    let whitelist = read_whitelist(&ctx.client, &manager_namespace).await;
    for workload in &whitelist.workloads {
        let gvk = GroupVersionKind::gvk(&workload.group, &workload.version, &workload.kind);
        match kube::discovery::pinned_kind(&ctx.client, &gvk).await {
            Ok((resource, _)) => {
                tracing::info!(kind = %workload.kind, group = %workload.group, "watching a white-listed custom workload");
                let task = watch_custom(ctx.client.clone(), resource, ctx.states.clone(), controller.queue());
                controller.alongside(task, std::future::ready(()));
            }
            Err(error) => {
                tracing::warn!(kind = %workload.kind, group = %workload.group, %error, "white-listed workload kind is not served");
            }
        }
    }
    let initial = ctx.clone();
    let initial_keys = move || {
        let mut keys: Vec<String> = initial
            .states
            .state()
            .iter()
            .map(|s| key(&s.namespace().unwrap_or_default(), &s.name_any()))
            .collect();
        for set in initial.builtin_sets.state() {
            if wants_auto_generation(set.annotations()) {
                keys.push(auto_generate_key(
                    &set.namespace().unwrap_or_default(),
                    BUILTIN_API_VERSION,
                    STATEFULSET,
                    &set.name_any(),
                ));
            }
        }
        for set in initial.kruise_sets.state() {
            if wants_auto_generation(set.annotations()) {
                keys.push(auto_generate_key(
                    &set.namespace().unwrap_or_default(),
                    KRUISE_API_VERSION,
                    STATEFULSET,
                    &set.name_any(),
                ));
            }
        }
        keys
    };
    controller
        .run(initial_keys, on_synced, move |key| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &key).await }
        })
        .await;
}

/// A workload as the controller sees it: identity, annotations and what the status needs.
struct Workload {
    reference: WorkloadRef,
    annotations: BTreeMap<String, String>,
    info: WorkloadInfo,
}

/// Finds the target workload (upstream `GetScaleAndSelectorForRef`): the StatefulSets from the
/// caches, white-listed kinds through the API.
async fn find_workload(
    ctx: &Context,
    namespace: &str,
    api_version: &str,
    kind: &str,
    name: &str,
) -> Result<Option<Workload>, ControllerError> {
    let group = super::core::api_group(api_version).unwrap_or_default();
    let reference = |uid: Option<&String>| WorkloadRef {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: namespace.into(),
        name: name.into(),
        uid: uid.cloned().unwrap_or_default(),
    };
    if kind == STATEFULSET && group == "apps" {
        return Ok(ctx.builtin_sets.get_named(Some(namespace), name).map(|set| Workload {
            reference: reference(set.metadata.uid.as_ref()),
            annotations: set.annotations().clone(),
            info: WorkloadInfo {
                replicas: set.spec.as_ref().and_then(|spec| spec.replicas).unwrap_or(1),
                reserved: ReservedOrdinals::default(),
                deleting: set.metadata.deletion_timestamp.is_some(),
            },
        }));
    }
    if kind == STATEFULSET && group == "apps.kruise.io" {
        return Ok(ctx.kruise_sets.get_named(Some(namespace), name).map(|set| Workload {
            reference: reference(set.metadata.uid.as_ref()),
            annotations: set.annotations().clone(),
            info: WorkloadInfo {
                replicas: set.spec.replicas.unwrap_or(1),
                reserved: ReservedOrdinals::parse(&set.spec.reserve_ordinals),
                deleting: set.metadata.deletion_timestamp.is_some(),
            },
        }));
    }
    let Some((group, version)) = api_version.split_once('/') else { return Ok(None) };
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (resource, _) = match kube::discovery::pinned_kind(&ctx.client, &gvk).await {
        Ok(found) => found,
        Err(error) => {
            tracing::debug!(%api_version, %kind, %error, "custom workload kind not served");
            return Ok(None);
        }
    };
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), namespace, &resource);
    let Some(object) = api.get_opt(name).await? else { return Ok(None) };
    let replicas = object
        .data
        .pointer("/spec/replicas")
        .and_then(serde_json::Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(1);
    Ok(Some(Workload {
        reference: reference(object.metadata.uid.as_ref()),
        annotations: object.annotations().clone(),
        info: WorkloadInfo {
            replicas,
            reserved: ReservedOrdinals::default(),
            deleting: object.metadata.deletion_timestamp.is_some(),
        },
    }))
}

fn is_status(error: &kube::Error, code: u16) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == code)
}

async fn reconcile(ctx: &Context, key: &str) -> Result<Option<Duration>, ControllerError> {
    let Some((namespace, name)) = key.split_once('/') else { return Ok(None) };
    if name.starts_with(AUTO_GENERATE_PREFIX) {
        return auto_generate(ctx, namespace, name).await.map(|()| None);
    }
    let Some(state) = ctx.states.get_named(Some(namespace), name) else { return Ok(None) };
    let target = &state.spec.target_reference;
    let workload = find_workload(ctx, namespace, &target.api_version, &target.kind, &target.name).await?;
    let pods: Vec<PodInfo> = match &workload {
        Some(workload) if !workload.info.deleting => ctx
            .pods
            .state()
            .iter()
            .filter(|pod| pod.metadata.namespace.as_deref() == Some(namespace) && is_pod_active(pod))
            .filter(|pod| {
                pod.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.controller == Some(true) && o.uid == workload.reference.uid)
            })
            .map(|pod| PodInfo {
                name: pod.name_any(),
                node_name: pod.spec.as_ref().and_then(|spec| spec.node_name.clone()).unwrap_or_default(),
                ready: is_pod_ready(pod),
                annotations: pod.annotations().clone(),
            })
            .collect(),
        _ => Vec::new(),
    };
    let node_labels = |node: &str| ctx.nodes.get_named(None, node).map(|node| node.labels().clone());
    let status = calculate_status(&state, workload.as_ref().map(|w| &w.info), &pods, &node_labels);
    tracing::debug!(
        persistentpodstate = %key,
        workload = workload.is_some(),
        pods = pods.len(),
        states = status.pod_states.len(),
        "reconciled"
    );
    write_status(ctx, &state, status).await?;
    let custom = target.kind != STATEFULSET;
    Ok(custom.then_some(CUSTOM_RESYNC))
}

/// Writes the status when it changed (a conflict is retried on a fresh copy).
async fn write_status(
    ctx: &Context,
    state: &PersistentPodState,
    status: PersistentPodStateStatus,
) -> Result<(), ControllerError> {
    let namespace = state.namespace().unwrap_or_default();
    let api: Api<PersistentPodState> = Api::namespaced(ctx.client.clone(), &namespace);
    let name = state.name_any();
    let mut current = state.clone();
    for _ in 0..ATTEMPTS {
        if current.status.as_ref() == Some(&status) {
            return Ok(());
        }
        current.status = Some(status.clone());
        match api.replace_status(&name, &PostParams::default(), &current).await {
            Ok(_) => {
                tracing::debug!(persistentpodstate = %name, %namespace, states = status.pod_states.len(), "status written");
                return Ok(());
            }
            Err(error) if is_status(&error, 409) => match api.get_opt(&name).await? {
                Some(fresh) => current = fresh,
                None => return Ok(()),
            },
            Err(error) if is_status(&error, 404) => return Ok(()),
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!(
        "PersistentPodState {namespace}/{name}: status write kept conflicting"
    )))
}

/// Creates, updates or deletes the PersistentPodState a workload's annotations ask for.
async fn auto_generate(ctx: &Context, namespace: &str, name: &str) -> Result<(), ControllerError> {
    let Some((api_version, kind, workload_name)) = parse_auto_generate_name(name) else {
        tracing::info!(key = %name, "malformed auto-generation key");
        return Ok(());
    };
    let Some(workload) = find_workload(ctx, namespace, &api_version, &kind, &workload_name).await? else {
        tracing::debug!(%namespace, workload = %workload_name, "auto-generation: workload not found");
        return Ok(());
    };
    let api: Api<PersistentPodState> = Api::namespaced(ctx.client.clone(), namespace);
    let existing = api.get_opt(&workload_name).await?;
    match auto_generate_action(&workload.reference, &workload.annotations, existing.as_ref()) {
        AutoGenerateAction::None => Ok(()),
        AutoGenerateAction::Create(state) => match api.create(&PostParams::default(), &state).await {
            Ok(_) => {
                tracing::info!(%namespace, name = %workload_name, "created the workload's PersistentPodState");
                Ok(())
            }
            Err(error) if is_status(&error, 409) => Ok(()),
            Err(error) => Err(error.into()),
        },
        AutoGenerateAction::UpdateSpec(spec) => {
            let mut current = existing;
            for _ in 0..ATTEMPTS {
                let Some(mut object) = current.take() else { return Ok(()) };
                object.spec = (*spec).clone();
                match api.replace(&workload_name, &PostParams::default(), &object).await {
                    Ok(_) => {
                        tracing::info!(%namespace, name = %workload_name, "updated the workload's PersistentPodState");
                        return Ok(());
                    }
                    Err(error) if is_status(&error, 409) => current = api.get_opt(&workload_name).await?,
                    Err(error) => return Err(error.into()),
                }
            }
            Err(ControllerError::Invalid(format!(
                "PersistentPodState {namespace}/{workload_name}: update kept conflicting"
            )))
        }
        AutoGenerateAction::Delete => match api.delete(&workload_name, &DeleteParams::default()).await {
            Ok(_) => {
                tracing::info!(%namespace, name = %workload_name, "deleted the workload's PersistentPodState");
                Ok(())
            }
            Err(error) if is_status(&error, 404) => Ok(()),
            Err(error) => Err(error.into()),
        },
    }
}
