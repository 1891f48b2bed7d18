//! The ImagePullJob controller loop: caches of ImagePullJobs, NodeImages, pods and the synced
//! pull secrets (the manager's shared caches); a queue of jobs on the queue harness, fed by their
//! changes (a NodeImage change wakes the
//! jobs that target it, a pod change the jobs whose pod selector matches it); and the API
//! writes the decisions of [`super::core`] call for. Writes are followed by resourceVersion
//! expectations, so a reconcile never acts on a NodeImage or job older than its own last write
//! (which is what keeps `parallelism` exact).

use std::{
    collections::{BTreeMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::core::v1::{Namespace, ObjectReference, Pod, Secret},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{ImagePullJob, NodeImage, ReferenceObject};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams},
    runtime::reflector::ObjectRef,
};
use serde_json::json;

use super::core::{
    calculate_status, copy_reference, deadline_requeue, image_entry, jobs_for_source_secret, nodes_to_sync,
    owner_reference, plan_secrets, refreshed_copy, synced_copy, tag_pull_policy, ttl_left,
};
use crate::{
    ControllerError,
    imagejob::{
        DAEMON_CONFIG_NAMESPACE, PROTECTION_FINALIZER, image_name_tag, job_concerns_node_image, key,
        node_images_for_job, split_key,
    },
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        events::{EventKind, EventRecorder},
        expectations::{
            EXPECTATION_TIMEOUT, ResourceVersionExpectations, Satisfied, ScaleAction, ScaleExpectations,
        },
        harness::QueueController,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "imagepulljob";
/// Concurrent reconciles (upstream `--imagepulljob-workers`).
pub const WORKERS: usize = 3;

struct Context {
    client: Client,
    jobs: Informer<ImagePullJob>,
    node_images: Informer<NodeImage>,
    pods: Informer<Pod>,
    /// Every namespace's secrets (copies in the daemon's namespace and their sources).
    secrets: Informer<Secret>,
    rv: ResourceVersionExpectations,
    created_secrets: ScaleExpectations,
    recorder: EventRecorder,
}

fn job_key(job: &ImagePullJob) -> String {
    key(
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default(),
    )
}

fn is_active(job: &ImagePullJob) -> bool {
    job.metadata.deletion_timestamp.is_none()
        && job.status.as_ref().is_none_or(|s| s.completion_time.is_none())
}

/// Whether a NodeImage event matters to `job`: the job could target it, and its labels or the
/// entry (spec or status) of the job's image changed.
fn node_image_event_concerns(job: &ImagePullJob, new: &NodeImage, old: Option<&NodeImage>) -> bool {
    let concerned =
        job_concerns_node_image(job, new) || old.is_some_and(|old| job_concerns_node_image(job, old));
    if !concerned {
        return false;
    }
    let Some(old) = old else { return true };
    let Ok((name, _)) = image_name_tag(&job.spec.image) else { return false };
    let status_of = |ni: &NodeImage| ni.status.as_ref().and_then(|s| s.image_statuses.get(&name).cloned());
    old.metadata.labels != new.metadata.labels
        || old.spec.images.get(&name) != new.spec.images.get(&name)
        || status_of(old) != status_of(new)
}

/// Whether a pod change can move a pod-selected job: its node, labels or activity changed.
fn pod_moved(new: &Pod, old: Option<&Pod>) -> bool {
    let Some(old) = old else { return true };
    let node = |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone());
    node(new) != node(old)
        || new.metadata.labels != old.metadata.labels
        || crate::imagejob::pod_is_active_on_a_node(new) != crate::imagejob::pod_is_active_on_a_node(old)
}

fn pod_selected_jobs<'a>(
    jobs: &'a [Arc<ImagePullJob>],
    pod: &Pod,
    old: Option<&Pod>,
) -> Vec<&'a Arc<ImagePullJob>> {
    let empty = BTreeMap::new();
    jobs.iter()
        .filter(|job| is_active(job) && job.metadata.namespace == pod.metadata.namespace)
        .filter(|job| {
            job.spec.template.pod_selector.as_ref().is_some_and(|selector| {
                kruise_crds::selector::matches(selector, pod.metadata.labels.as_ref().unwrap_or(&empty))
                    || old.is_some_and(|old| {
                        kruise_crds::selector::matches(
                            selector,
                            old.metadata.labels.as_ref().unwrap_or(&empty),
                        )
                    })
            })
        })
        .collect()
}

/// Runs the ImagePullJob controller until the future is dropped; `on_synced` is called once
/// every cache holds its initial list.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let client = caches.client().clone();
    let (jobs, node_images, pods, secrets) = (
        caches.informer::<ImagePullJob>(),
        caches.informer::<NodeImage>(),
        caches.informer::<Pod>(),
        caches.informer::<Secret>(),
    );
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let ctx = Arc::new(Context {
        client: client.clone(),
        jobs: jobs.clone(),
        node_images: node_images.clone(),
        pods: pods.clone(),
        secrets: secrets.clone(),
        rv: ResourceVersionExpectations::new(),
        created_secrets: ScaleExpectations::new(),
        recorder: EventRecorder::new(client.clone(), "imagepulljob-controller"),
    });

    let expectations = ctx.clone();
    controller.watch(&jobs, move |event, queue| match event {
        CacheEvent::Applied { new, .. } => queue.add(job_key(new)),
        CacheEvent::Deleted(job) => {
            expectations.rv.delete(&job_key(job));
            expectations.created_secrets.delete(&job_key(job));
        }
        CacheEvent::Synced => {}
    });
    let all_jobs = jobs.clone();
    controller.watch(&node_images, move |event, queue| {
        let (new, old) = match event {
            CacheEvent::Applied { new, old } => (new, old.as_deref()),
            CacheEvent::Deleted(ni) => (ni, None),
            CacheEvent::Synced => return,
        };
        for job in all_jobs.state().iter().filter(|job| is_active(job)) {
            if node_image_event_concerns(job, new, old) {
                queue.add(job_key(job));
            }
        }
    });
    let all_jobs = jobs.clone();
    controller.watch(&pods, move |event, queue| {
        let (pod, old) = match event {
            CacheEvent::Applied { new, old } if pod_moved(new, old.as_deref()) => (new, old.as_deref()),
            CacheEvent::Deleted(pod) => (pod, None),
            _ => return,
        };
        let all = all_jobs.state();
        for job in pod_selected_jobs(&all, pod, old) {
            queue.add(job_key(job));
        }
    });
    // Every secret: a synced copy in the daemon's namespace wakes the jobs it serves, and a
    // source secret that appears or changes wakes the running jobs naming it, so their copies
    // follow the source.
    let all_jobs = jobs.clone();
    controller.watch(&secrets, move |event, queue| {
        let CacheEvent::Applied { new, old } = event else { return };
        if new.metadata.namespace.as_deref() == Some(DAEMON_CONFIG_NAMESPACE) {
            for job in super::core::secret_references(new) {
                queue.add(job);
            }
            return;
        }
        let all = all_jobs.state();
        for job in jobs_for_source_secret(all.iter().map(|job| &**job), new, old.as_deref()) {
            queue.add(job);
        }
    });
    let initial_keys = move || jobs.state().iter().map(|job| job_key(job)).collect();
    controller
        .run(initial_keys, on_synced, move |key| {
            let ctx = ctx.clone();
            async move { reconcile(&ctx, &key).await }
        })
        .await;
}

fn job_reference(job: &ImagePullJob) -> ObjectReference {
    ObjectReference { resource_version: job.metadata.resource_version.clone(), ..owner_reference(job) }
}

/// The secrets in the daemon's namespace (the cache holds every namespace's secrets).
fn synced_secrets(ctx: &Context) -> Vec<Secret> {
    ctx.secrets
        .state()
        .iter()
        .filter(|s| s.metadata.namespace.as_deref() == Some(DAEMON_CONFIG_NAMESPACE))
        .map(|s| (**s).clone())
        .collect()
}

async fn reconcile(ctx: &Context, job_key: &str) -> Result<Option<Duration>, ControllerError> {
    let (namespace, name) = split_key(job_key);
    let Some(job) = ctx.jobs.get(&ObjectRef::new(name).within(namespace)) else { return Ok(None) };
    let now = Timestamp::now();
    let clock = Instant::now();
    if !ctx.rv.is_satisfied(
        job_key,
        job.metadata.resource_version.as_deref().unwrap_or(""),
        clock,
        EXPECTATION_TIMEOUT,
    ) {
        return Ok(Some(Duration::from_millis(500)));
    }
    let present: HashSet<String> = synced_secrets(ctx).iter().map(|s| s.name_any()).collect();
    ctx.created_secrets.observe(job_key, &present);
    if let Satisfied::No { retry_after, .. } =
        ctx.created_secrets.satisfied(job_key, clock, EXPECTATION_TIMEOUT)
    {
        return Ok(Some(retry_after.min(Duration::from_secs(1))));
    }
    let api: Api<ImagePullJob> = Api::namespaced(ctx.client.clone(), namespace);

    if job.metadata.deletion_timestamp.is_some() {
        finalize(ctx, &api, &job).await?;
        return Ok(None);
    }
    if job.status.as_ref().is_some_and(|s| s.completion_time.is_some()) {
        finalize(ctx, &api, &job).await?;
        return match ttl_left(&job, now) {
            Some(left) if left.is_zero() => {
                tracing::info!(imagepulljob = %job_key, "deleting the ImagePullJob after its ttlSecondsAfterFinished");
                match api.delete(name, &DeleteParams::default()).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(response)) if response.code == 404 => {}
                    Err(error) => return Err(error.into()),
                }
                Ok(None)
            }
            other => Ok(other),
        };
    }
    if !job.finalizers().iter().any(|f| f == PROTECTION_FINALIZER) {
        let mut finalizers = job.finalizers().to_vec();
        finalizers.push(PROTECTION_FINALIZER.into());
        set_finalizers(ctx, &api, &job, finalizers).await?;
        return Ok(None);
    }

    let all: BTreeMap<String, NodeImage> =
        ctx.node_images.state().iter().map(|ni| (ni.name_any(), (**ni).clone())).collect();
    let pods = ctx.pods.state();
    let pod_refs: Vec<&Pod> = pods.iter().map(|p| p.as_ref()).collect();
    let selected = node_images_for_job(&job, &all, &pod_refs);
    for node_image in &selected {
        let rv = node_image.metadata.resource_version.as_deref().unwrap_or("");
        if !ctx.rv.is_satisfied(
            &format!("nodeimage/{}", node_image.name_any()),
            rv,
            clock,
            EXPECTATION_TIMEOUT,
        ) {
            return Ok(Some(Duration::from_millis(500)));
        }
    }
    let secrets = sync_secrets(ctx, &job).await?;
    let progress = match calculate_status(&job, &selected, &secrets, now) {
        Ok(progress) => progress,
        Err(message) => {
            ctx.recorder.publish(job_reference(&job), EventKind::Warning, "InvalidImage", message);
            return Ok(None);
        }
    };
    let policy = tag_pull_policy(&job, rand::random_range(0..300), rand::random_range(-600..600));
    for node in nodes_to_sync(&job, &progress) {
        add_image(ctx, &node, &job, &policy, &secrets, now).await?;
    }
    let old = job.status.clone().unwrap_or_default();
    if old != progress.status {
        let mut updated = (*job).clone();
        updated.status = Some(progress.status.clone());
        let written = api.replace_status(name, &PostParams::default(), &updated).await?;
        ctx.rv.expect(job_key, written.metadata.resource_version.as_deref().unwrap_or(""), Instant::now());
        if progress.status.completion_time.is_some() {
            let status = &progress.status;
            let (kind, reason) = if status.failed > 0 {
                (EventKind::Warning, "JobFinishedWithFailures")
            } else {
                (EventKind::Normal, "JobCompleted")
            };
            ctx.recorder.publish(
                job_reference(&job),
                kind,
                reason,
                format!(
                    "{}: {} of {} node(s) succeeded, {} failed",
                    status.message, status.succeeded, status.desired, status.failed
                ),
            );
        }
        return Ok(None);
    }
    Ok(deadline_requeue(&job, &progress.status, now))
}

/// Writes the job's finalizers (a merge patch guarded by its resourceVersion).
async fn set_finalizers(
    ctx: &Context,
    api: &Api<ImagePullJob>,
    job: &ImagePullJob,
    finalizers: Vec<String>,
) -> Result<(), ControllerError> {
    let patch =
        json!({"metadata": {"finalizers": finalizers, "resourceVersion": job.metadata.resource_version}});
    let written = api.patch(&job.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await?;
    ctx.rv.expect(&job_key(job), written.metadata.resource_version.as_deref().unwrap_or(""), Instant::now());
    Ok(())
}

/// Releases the job's synced secrets and removes its finalizer.
async fn finalize(ctx: &Context, api: &Api<ImagePullJob>, job: &ImagePullJob) -> Result<(), ControllerError> {
    if !job.finalizers().iter().any(|f| f == PROTECTION_FINALIZER) {
        return Ok(());
    }
    sync_secrets(ctx, job).await?;
    let finalizers: Vec<String> =
        job.finalizers().iter().filter(|f| *f != PROTECTION_FINALIZER).cloned().collect();
    match set_finalizers(ctx, api, job, finalizers).await {
        Err(ControllerError::Kube(kube::Error::Api(response))) if response.code == 404 => Ok(()),
        other => other,
    }
}

/// Adds the job's image to one NodeImage (retrying conflicts with a fresh copy).
async fn add_image(
    ctx: &Context,
    node: &str,
    job: &ImagePullJob,
    policy: &kruise_crds::apps::v1beta1::ImageTagPullPolicy,
    secrets: &[ReferenceObject],
    now: Timestamp,
) -> Result<(), ControllerError> {
    let api: Api<NodeImage> = Api::all(ctx.client.clone());
    let mut current = match ctx.node_images.get(&ObjectRef::new(node)) {
        Some(cached) => (*cached).clone(),
        None => return Ok(()),
    };
    for _ in 0..5 {
        let entry = image_entry(&current, job, policy, secrets, now).map_err(ControllerError::Invalid)?;
        let Some((name, image)) = entry else { return Ok(()) };
        current.spec.images.insert(name, image);
        match api.replace(node, &PostParams::default(), &current).await {
            Ok(written) => {
                let rv = written.metadata.resource_version.unwrap_or_default();
                ctx.rv.expect(&format!("nodeimage/{node}"), &rv, Instant::now());
                tracing::info!(imagepulljob = %job_key(job), nodeimage = %node, image = %job.spec.image, "added the image to a NodeImage");
                return Ok(());
            }
            Err(kube::Error::Api(response)) if response.code == 409 => current = api.get(node).await?,
            Err(kube::Error::Api(response)) if response.code == 404 => return Ok(()),
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!(
        "NodeImage {node}: too many conflicts while adding {}",
        job.spec.image
    )))
}

/// Copies the job's pull secrets into the daemon's namespace (and releases copies it no longer
/// needs); returns the references NodeImages get (upstream `syncJobPullSecrets`).
async fn sync_secrets(ctx: &Context, job: &ImagePullJob) -> Result<Vec<ReferenceObject>, ControllerError> {
    let namespace = job.metadata.namespace.clone().unwrap_or_default();
    let running = is_active(job);
    if job.spec.template.pull_secrets.is_empty() && running {
        return Ok(Vec::new());
    }
    if namespace == DAEMON_CONFIG_NAMESPACE {
        let refs = if running { job.spec.template.pull_secrets.as_slice() } else { &[] };
        return Ok(refs
            .iter()
            .map(|name| ReferenceObject {
                namespace: namespace.clone(),
                name: name.clone(),
                mode: String::new(),
            })
            .collect());
    }
    let plan = plan_secrets(job, &synced_secrets(ctx));
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), DAEMON_CONFIG_NAMESPACE);
    for (copy, remaining) in &plan.release {
        let name = copy.name_any();
        if remaining.is_empty() {
            match secrets.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error.into()),
            }
        } else {
            let mut updated = copy.clone();
            updated
                .metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert(super::core::SECRET_REFERENCES_ANNOTATION.into(), remaining.join(","));
            match secrets.replace(&name, &PostParams::default(), &updated).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error.into()),
            }
        }
    }
    if plan.claim.is_empty() {
        return Ok(Vec::new());
    }
    ensure_daemon_namespace(ctx).await?;
    let key = job_key(job);
    let mut refs = Vec::new();
    for ((source_namespace, source_name), copy) in &plan.claim {
        let sources: Api<Secret> = Api::namespaced(ctx.client.clone(), source_namespace);
        let Some(source) = sources.get_opt(source_name).await? else {
            tracing::warn!(imagepulljob = %key, secret = %source_name, "pull secret not found");
            continue;
        };
        match copy {
            None => {
                let suffix = format!("{:06x}", rand::random_range(0..0x100_0000u32));
                let created = synced_copy(&source, &key, &suffix);
                let created_name = created.name_any();
                ctx.created_secrets.expect(&key, ScaleAction::Create, &created_name, Instant::now());
                match secrets.create(&PostParams::default(), &created).await {
                    Ok(written) => refs.push(copy_reference(&written)),
                    Err(error) => {
                        ctx.created_secrets.forget(&key, ScaleAction::Create, &created_name);
                        return Err(error.into());
                    }
                }
            }
            Some(copy) => {
                refs.push(copy_reference(copy));
                if let Some(updated) = refreshed_copy(copy, &source, &key) {
                    secrets.replace(&copy.name_any(), &PostParams::default(), &updated).await?;
                }
            }
        }
    }
    Ok(refs)
}

/// Creates the daemon's secret namespace when missing (upstream expects it from the
/// installation; here the controller makes it so pull secrets work on a fresh cluster).
async fn ensure_daemon_namespace(ctx: &Context) -> Result<(), ControllerError> {
    let namespaces: Api<Namespace> = Api::all(ctx.client.clone());
    if namespaces.get_opt(DAEMON_CONFIG_NAMESPACE).await?.is_some() {
        return Ok(());
    }
    let namespace = Namespace {
        metadata: ObjectMeta { name: Some(DAEMON_CONFIG_NAMESPACE.into()), ..Default::default() },
        ..Default::default()
    };
    match namespaces.create(&PostParams::default(), &namespace).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error.into()),
    }
}
