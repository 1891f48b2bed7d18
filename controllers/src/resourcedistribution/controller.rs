//! The ResourceDistribution controller's I/O: the shared caches of distributions, namespaces,
//! Secrets and ConfigMaps; a queue of distributions fed by their spec changes, by namespace
//! changes that concern them (upstream `enqueueRequestForNamespace`) and by edits and deletions
//! of the copies they control (creations are their own writes and wake nobody, as upstream);
//! and the writes [`super::core`] decides: copies created and updated in slow-start batches
//! (1, 2, 4, ... namespaces at once, as upstream's `syncItSlowly`), copies deleted, the status.
//!
//! Existing copies are read from the cache. A cache that has not caught up with a copy yet
//! shows up as an `AlreadyExists` or `Conflict` answer; the copy is then read from the API and
//! the decision taken again once, so a lagging cache does not show up as a failure.

use std::{
    collections::HashMap,
    sync::Arc,
    time::{Duration, Instant},
};

use futures::future::join_all;
use k8s_openapi::{
    api::core::v1::{ConfigMap, Namespace, Secret},
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{ResourceDistribution, ResourceDistributionStatus};
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DeleteParams, DynamicObject, PostParams},
};
use serde_json::{Map, Value};

use super::core::{
    DistributeAction, DistributedResource, Failure, NamespaceChange, NamespaceFailure, ResourceKind,
    calculate_new_status, clean_action, controlling_distribution, deserialize_resource, distribute_action,
    distribution_changed, distributions_for_namespace_change, handle_errors, hash_resource,
    list_namespaces_for_distributor,
};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        expectations::{EXPECTATION_TIMEOUT, ResourceVersionExpectations},
        harness::QueueController,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "resourcedistribution";
/// Concurrent reconciles (upstream `--resourcedistribution-workers`, 3).
pub const WORKERS: usize = 3;
/// Attempts at a status write that keeps meeting conflicts.
const STATUS_ATTEMPTS: usize = 5;
/// How soon a distribution whose cached copy is older than the controller's last status write
/// is looked at again (its status would be compared with a stale one and the write skipped).
const STALE_RETRY: Duration = Duration::from_millis(300);

struct Context {
    client: Client,
    distributions: Informer<ResourceDistribution>,
    namespaces: Informer<Namespace>,
    secrets: Informer<Secret>,
    config_maps: Informer<ConfigMap>,
    /// The resourceVersion of each distribution's last status write.
    rv: ResourceVersionExpectations,
}

/// Queues the distribution controlling a changed or deleted copy (not a new one: upstream
/// ignores create events of copies, which are the controller's own writes).
fn copy_changed<K: kube::Resource>(event: &CacheEvent<K>, queue: &crate::runtime::workqueue::WorkQueue) {
    let object = match event {
        CacheEvent::Applied { new, old: Some(_) } => new.as_ref(),
        CacheEvent::Deleted(object) => object.as_ref(),
        _ => return,
    };
    if let Some(name) = controlling_distribution(object.meta()) {
        queue.add(name);
    }
}

/// Runs the controller until the future is dropped; `on_synced` is called once its caches hold
/// their first lists.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let ctx = Arc::new(Context {
        client: caches.client().clone(),
        distributions: caches.informer::<ResourceDistribution>(),
        namespaces: caches.informer::<Namespace>(),
        secrets: caches.informer::<Secret>(),
        config_maps: caches.informer::<ConfigMap>(),
        rv: ResourceVersionExpectations::new(),
    });
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let expectations = ctx.clone();
    controller.watch(&ctx.distributions, move |event, queue| match event {
        CacheEvent::Applied { new, old } if distribution_changed(old.as_deref(), new) => {
            queue.add(new.name_any());
        }
        CacheEvent::Deleted(distribution) => expectations.rv.delete(&distribution.name_any()),
        _ => {}
    });
    let all = ctx.distributions.clone();
    controller.watch(&ctx.namespaces, move |event, queue| {
        let change = match event {
            CacheEvent::Applied { new, old: None } => NamespaceChange::Created(new),
            CacheEvent::Applied { new, old: Some(old) } => NamespaceChange::Updated { old, new },
            CacheEvent::Deleted(namespace) => NamespaceChange::Deleted(namespace),
            CacheEvent::Synced => return,
        };
        let distributions = all.state();
        let refs: Vec<&ResourceDistribution> = distributions.iter().map(AsRef::as_ref).collect();
        for name in distributions_for_namespace_change(change, &refs) {
            queue.add(name);
        }
    });
    controller.watch(&ctx.secrets, copy_changed);
    controller.watch(&ctx.config_maps, copy_changed);
    let initial = ctx.distributions.clone();
    let initial_keys = move || initial.state().iter().map(|rd| rd.name_any()).collect();
    controller
        .run(initial_keys, on_synced, move |name| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &name).await }
        })
        .await;
}

fn api_resource(kind: ResourceKind) -> ApiResource {
    match kind {
        ResourceKind::Secret => ApiResource::erase::<Secret>(&()),
        ResourceKind::ConfigMap => ApiResource::erase::<ConfigMap>(&()),
    }
}

fn as_object(value: Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(object) => Some(object),
        _ => None,
    }
}

/// The cached copy of the resource in `namespace`, as JSON.
fn cached_copy(ctx: &Context, resource: &DistributedResource, namespace: &str) -> Option<Map<String, Value>> {
    let value = match resource.kind {
        ResourceKind::Secret => ctx
            .secrets
            .get_named(Some(namespace), &resource.name)
            .and_then(|s| serde_json::to_value(&*s).ok()),
        ResourceKind::ConfigMap => ctx
            .config_maps
            .get_named(Some(namespace), &resource.name)
            .and_then(|c| serde_json::to_value(&*c).ok()),
    };
    value.and_then(as_object)
}

/// The metadata of the cached copy in `namespace`.
fn cached_meta(ctx: &Context, resource: &DistributedResource, namespace: &str) -> Option<ObjectMeta> {
    match resource.kind {
        ResourceKind::Secret => {
            ctx.secrets.get_named(Some(namespace), &resource.name).map(|s| s.metadata.clone())
        }
        ResourceKind::ConfigMap => {
            ctx.config_maps.get_named(Some(namespace), &resource.name).map(|c| c.metadata.clone())
        }
    }
}

fn failure(failure: Failure, namespace: &str, error: impl std::fmt::Display) -> NamespaceFailure {
    NamespaceFailure { failure, namespace: namespace.to_string(), message: error.to_string() }
}

fn is_status(error: &kube::Error, code: u16) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == code)
}

/// What happened to a write: done, or the cache was behind (read the copy live and decide
/// again), or a failure.
enum Written {
    Done,
    Stale,
    Failed(NamespaceFailure),
}

async fn write(api: &Api<DynamicObject>, namespace: &str, name: &str, action: DistributeAction) -> Written {
    let (object, update) = match action {
        DistributeAction::UpToDate => return Written::Done,
        DistributeAction::Fail(failed) => return Written::Failed(failed),
        DistributeAction::Create(object) => (object, false),
        DistributeAction::Update(object) => (object, true),
    };
    let kind = if update { Failure::Update } else { Failure::Create };
    let object: DynamicObject = match serde_json::from_value(object) {
        Ok(object) => object,
        Err(error) => return Written::Failed(failure(kind, namespace, error)),
    };
    let result = if update {
        api.replace(name, &PostParams::default(), &object).await
    } else {
        api.create(&PostParams::default(), &object).await
    };
    match result {
        Ok(_) => {
            tracing::debug!(%namespace, resource = %name, update, "wrote a distributed copy");
            Written::Done
        }
        Err(error) if is_status(&error, 409) => Written::Stale,
        Err(error) => Written::Failed(failure(kind, namespace, error)),
    }
}

/// Brings the copy in one target namespace in line (upstream `distributeResource`'s function).
async fn distribute_one(
    ctx: &Context,
    distribution: &ResourceDistribution,
    resource: &DistributedResource,
    hash: &str,
    namespace: &str,
    namespace_object: Option<&Namespace>,
) -> Result<(), NamespaceFailure> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(ctx.client.clone(), namespace, &api_resource(resource.kind));
    let existing = cached_copy(ctx, resource, namespace);
    let action =
        distribute_action(distribution, resource, hash, namespace, namespace_object, existing.as_ref());
    match write(&api, namespace, &resource.name, action).await {
        Written::Done => return Ok(()),
        Written::Failed(failed) => return Err(failed),
        Written::Stale => {}
    }
    let live = match api.get_opt(&resource.name).await {
        Ok(live) => live.and_then(|object| serde_json::to_value(object).ok()).and_then(as_object),
        Err(error) => return Err(failure(Failure::Get, namespace, error)),
    };
    let action = distribute_action(distribution, resource, hash, namespace, namespace_object, live.as_ref());
    match write(&api, namespace, &resource.name, action).await {
        Written::Done => Ok(()),
        Written::Failed(failed) => Err(failed),
        Written::Stale => {
            Err(failure(Failure::Update, namespace, "the copy kept changing while it was being written"))
        }
    }
}

/// Deletes this distribution's copy from a namespace it no longer targets (upstream
/// `cleanResource`'s function).
async fn clean_one(
    ctx: &Context,
    resource: &DistributedResource,
    namespace: &str,
) -> Result<(), NamespaceFailure> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(ctx.client.clone(), namespace, &api_resource(resource.kind));
    match api.delete(&resource.name, &DeleteParams::default()).await {
        Ok(_) => {
            tracing::debug!(%namespace, resource = %resource.name, "deleted a copy no longer targeted");
            Ok(())
        }
        Err(error) if is_status(&error, 404) => Ok(()),
        Err(error) => Err(failure(Failure::Delete, namespace, error)),
    }
}

/// Runs `work` over `items` in slow-start batches (1, 2, 4, ...), each batch at once; unlike
/// pod creation, a failure does not stop the later batches (upstream `syncItSlowly`).
async fn sync_slowly<'a, T: Sync, F, Fut>(items: &'a [T], work: F) -> Vec<Result<(), NamespaceFailure>>
where
    F: Fn(&'a T) -> Fut,
    Fut: std::future::Future<Output = Result<(), NamespaceFailure>>,
{
    let mut results = Vec::with_capacity(items.len());
    let (mut start, mut size) = (0, 1);
    while start < items.len() {
        let end = (start + size).min(items.len());
        let batch = items.get(start..end).unwrap_or_default();
        results.extend(join_all(batch.iter().map(&work)).await);
        start = end;
        size *= 2;
    }
    results
}

async fn reconcile(ctx: &Context, name: &str) -> Result<Option<Duration>, ControllerError> {
    let Some(distribution) = ctx.distributions.get_named(None, name) else {
        ctx.rv.delete(name);
        return Ok(None);
    };
    let cached_rv = distribution.metadata.resource_version.as_deref().unwrap_or_default();
    if !ctx.rv.is_satisfied(name, cached_rv, Instant::now(), EXPECTATION_TIMEOUT) {
        return Ok(Some(STALE_RETRY));
    }
    let resource = match deserialize_resource(&distribution.spec.resource) {
        Ok(resource) => resource,
        Err(error) => {
            // Retrying cannot help; the next spec change is looked at again.
            tracing::error!(resourcedistribution = %name, %error, "cannot distribute the resource");
            return Ok(None);
        }
    };
    let hash = hash_resource(&distribution.spec.resource);
    let namespaces = ctx.namespaces.state();
    let refs: Vec<&Namespace> = namespaces.iter().map(AsRef::as_ref).collect();
    let by_name: HashMap<&str, &Namespace> =
        refs.iter().filter_map(|ns| ns.metadata.name.as_deref().map(|name| (name, *ns))).collect();
    let (matched, unmatched) = list_namespaces_for_distributor(&distribution.spec.targets, &refs);

    // 1. distribute to the targets
    let distributed = sync_slowly(&matched, |namespace: &String| {
        let namespace_object = by_name.get(namespace.as_str()).copied();
        distribute_one(ctx, &distribution, &resource, &hash, namespace, namespace_object)
    })
    .await;
    let succeeded = distributed.iter().filter(|result| result.is_ok()).count();
    let mut failures: Vec<NamespaceFailure> = distributed.into_iter().filter_map(Result::err).collect();

    // 2. delete this distribution's copies from the other namespaces
    let to_clean: Vec<&String> = unmatched
        .iter()
        .filter(|namespace| {
            let meta = cached_meta(ctx, &resource, namespace);
            clean_action(&distribution, by_name.get(namespace.as_str()).copied(), meta.as_ref())
        })
        .collect();
    let cleaned = sync_slowly(&to_clean, |namespace: &&String| clean_one(ctx, &resource, namespace)).await;
    failures.extend(cleaned.into_iter().filter_map(Result::err));

    // 3. the status
    let (conditions, retry) = handle_errors(&failures);
    let desired = i32::try_from(matched.len()).unwrap_or(i32::MAX);
    let succeeded = i32::try_from(succeeded).unwrap_or(i32::MAX);
    let status = calculate_new_status(&distribution, conditions, desired, succeeded, Timestamp::now());
    tracing::debug!(
        resourcedistribution = %name,
        desired,
        succeeded,
        failures = failures.len(),
        cleaned = to_clean.len(),
        "reconciled"
    );
    let status_result = write_status(ctx, &distribution, status).await;
    if !retry.is_empty() {
        return Err(ControllerError::Invalid(format!("ResourceDistribution {name}: {}", retry.join("; "))));
    }
    status_result.map(|()| None)
}

/// Writes the status when it changed (a conflict is retried on a fresh copy, as upstream's
/// `RetryOnConflict`).
async fn write_status(
    ctx: &Context,
    distribution: &ResourceDistribution,
    status: ResourceDistributionStatus,
) -> Result<(), ControllerError> {
    let api: Api<ResourceDistribution> = Api::all(ctx.client.clone());
    let name = distribution.name_any();
    let mut current = distribution.clone();
    for _ in 0..STATUS_ATTEMPTS {
        if current.status.as_ref() == Some(&status) {
            return Ok(());
        }
        current.status = Some(status.clone());
        match api.replace_status(&name, &PostParams::default(), &current).await {
            Ok(written) => {
                let rv = written.metadata.resource_version.unwrap_or_default();
                ctx.rv.expect(&name, &rv, Instant::now());
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
    Err(ControllerError::Invalid(format!("ResourceDistribution {name}: status write kept conflicting")))
}
