//! The EphemeralJob controller's I/O: the shared caches of EphemeralJobs and pods, a queue of
//! jobs fed as upstream's handlers feed it (a job when it is created, starts being deleted or
//! changes `replicas`, `parallelism`, `paused` or `ttlSecondsAfterFinished`; a pod's change
//! wakes the jobs selecting it), and the writes [`super::core`] decides: the finalizer, the
//! `pods/ephemeralcontainers` patches in slow-start batches, the status, a `CreateFailed` Event
//! and the deletion of a finished job after its TTL.
//!
//! Each injection is an expectation named `<pod>-<container>` until the cache shows the
//! container on the pod (or the pod goes), so a reconcile never injects twice into a pod its
//! cache does not show injected yet; status and finalizer writes are followed by a
//! resourceVersion expectation for the same reason (a stale job would restart its clock).

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};
use kruise_crds::apps::v1alpha1::{EphemeralJob, EphemeralJobStatus};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

use super::core::{
    Decision, FINALIZER, Plan, decide, expectation_names, holds_finalizer, inject_patch, observed_names,
    wakes,
};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Caches, Informer},
        events::{EventKind, EventRecorder},
        expectations::{
            EXPECTATION_TIMEOUT, ResourceVersionExpectations, Satisfied, ScaleAction, ScaleExpectations,
        },
        harness::QueueController,
    },
    workload::pod_ops::create_slowly,
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "ephemeraljob";
/// Concurrent reconciles (upstream `concurrentReconciles`, 10).
pub const WORKERS: usize = 10;
/// How soon a job whose cached copy is older than the controller's last write is looked at
/// again.
const STALE_RETRY: Duration = Duration::from_millis(500);
/// Attempts at a status write that keeps meeting conflicts.
const STATUS_ATTEMPTS: usize = 5;
/// The subresource that adds ephemeral containers to a pod.
const SUBRESOURCE: &str = "ephemeralcontainers";

struct Context {
    client: Client,
    jobs: Informer<EphemeralJob>,
    pods: Informer<Pod>,
    scale: ScaleExpectations,
    rv: ResourceVersionExpectations,
    recorder: EventRecorder,
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

fn job_key(job: &EphemeralJob) -> String {
    key(
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default(),
    )
}

/// Whether a job update is one upstream's handler reacts to: the job started being deleted, or
/// a field the controller acts on changed (status writes do not wake the job).
fn job_changed(old: &EphemeralJob, new: &EphemeralJob) -> bool {
    if old.metadata.resource_version == new.metadata.resource_version {
        return false;
    }
    let (o, n) = (&old.spec, &new.spec);
    new.metadata.deletion_timestamp.is_some()
        || o.ttl_seconds_after_finished != n.ttl_seconds_after_finished
        || o.paused != n.paused
        || o.parallelism != n.parallelism
        || o.replicas != n.replicas
}

/// Whether a pod update can change what a job sees of it: its ephemeral containers or their
/// statuses (upstream's only trigger), or its labels, phase or deletion (whether it is a
/// target at all).
fn pod_changed(old: &Pod, new: &Pod) -> bool {
    if old.metadata.resource_version == new.metadata.resource_version {
        return false;
    }
    let statuses = |p: &Pod| p.status.as_ref().and_then(|s| s.ephemeral_container_statuses.clone());
    let phase = |p: &Pod| p.status.as_ref().and_then(|s| s.phase.clone());
    let containers = |p: &Pod| p.spec.as_ref().map(|s| s.ephemeral_containers.as_ref().map_or(0, Vec::len));
    statuses(old) != statuses(new)
        || containers(old) != containers(new)
        || old.metadata.labels != new.metadata.labels
        || phase(old) != phase(new)
        || old.metadata.deletion_timestamp != new.metadata.deletion_timestamp
}

/// Runs the controller until the future is dropped; `on_synced` is called once the job and pod
/// caches hold their first lists.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    let client = caches.client().clone();
    let (jobs, pods) = (caches.informer::<EphemeralJob>(), caches.informer::<Pod>());
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    let ctx = Arc::new(Context {
        client: client.clone(),
        jobs: jobs.clone(),
        pods: pods.clone(),
        scale: ScaleExpectations::new(),
        rv: ResourceVersionExpectations::new(),
        recorder: EventRecorder::new(client, "ephemeraljob-controller"),
    });

    let expectations = ctx.clone();
    controller.watch(&jobs, move |event, queue| match event {
        CacheEvent::Applied { new, old: None } => queue.add(job_key(new)),
        CacheEvent::Applied { new, old: Some(old) } => {
            if job_changed(old, new) {
                queue.add(job_key(new));
            }
        }
        CacheEvent::Deleted(job) => {
            expectations.scale.delete(&job_key(job));
            expectations.rv.delete(&job_key(job));
        }
        CacheEvent::Synced => {}
    });
    // A pod change wakes the jobs selecting the pod (before or after the change); a deleted
    // pod also settles the injections expected into it.
    let (all_jobs, expectations) = (jobs.clone(), ctx.clone());
    controller.watch(&pods, move |event, queue| {
        let (new, old, deleted) = match event {
            CacheEvent::Applied { new, old: None } => (new, None, false),
            CacheEvent::Applied { new, old: Some(old) } => {
                if !pod_changed(old, new) {
                    return;
                }
                (new, Some(old), false)
            }
            CacheEvent::Deleted(pod) => (pod, None, true),
            CacheEvent::Synced => return,
        };
        for job in all_jobs.state() {
            if !(wakes(&job, new) || old.is_some_and(|old| wakes(&job, old))) {
                continue;
            }
            let job_key = job_key(&job);
            if deleted {
                for name in expectation_names(&job, new.metadata.name.as_deref().unwrap_or_default()) {
                    expectations.scale.forget(&job_key, ScaleAction::Create, &name);
                }
            }
            queue.add(job_key);
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

async fn reconcile(ctx: &Context, job_key: &str) -> Result<Option<Duration>, ControllerError> {
    let (namespace, name) = job_key.split_once('/').unwrap_or(("", job_key));
    let Some(job) = ctx.jobs.get_named(Some(namespace), name) else {
        ctx.scale.delete(job_key);
        ctx.rv.delete(job_key);
        return Ok(None);
    };
    let clock = Instant::now();
    let cached_rv = job.metadata.resource_version.as_deref().unwrap_or_default();
    if !ctx.rv.is_satisfied(job_key, cached_rv, clock, EXPECTATION_TIMEOUT) {
        return Ok(Some(STALE_RETRY));
    }
    let api: Api<EphemeralJob> = Api::namespaced(ctx.client.clone(), namespace);
    let cached = ctx.pods.state();
    let pods: Vec<&Pod> = cached
        .iter()
        .map(|pod| pod.as_ref())
        .filter(|pod| pod.metadata.namespace.as_deref() == Some(namespace))
        .collect();

    let mut job = EphemeralJob::clone(&job);
    let now = Timestamp::now();
    let decision = decide(&job, &pods, now);
    if let Decision::Release { holds_finalizer } = decision {
        // Kubernetes cannot remove ephemeral containers from a pod (upstream's
        // `RemoveEphemeralContainer` is a no-op too): the containers stay, the job goes.
        if holds_finalizer {
            tracing::info!(ephemeraljob = %job_key, "releasing the finalizer of a deleted EphemeralJob");
            set_finalizers(ctx, &api, &job, false).await?;
        }
        return Ok(None);
    }
    if !holds_finalizer(&job) {
        job = set_finalizers(ctx, &api, &job, true).await?;
    }
    let plan = match decision {
        Decision::Release { .. } => return Ok(None),
        Decision::Finished { delete, requeue } => {
            if delete {
                tracing::info!(ephemeraljob = %job_key, "deleting the EphemeralJob after its ttlSecondsAfterFinished");
                match api.delete(name, &DeleteParams::default()).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(error) => return Err(error.into()),
                }
                ctx.scale.delete(job_key);
            }
            return Ok(requeue);
        }
        Decision::Sync(plan) => plan,
    };

    ctx.scale.observe(job_key, &observed_names(&job, &pods));
    if let Satisfied::No { retry_after, pending } = ctx.scale.satisfied(job_key, clock, EXPECTATION_TIMEOUT) {
        tracing::debug!(ephemeraljob = %job_key, pending, "waiting for the cache to show the job's injections");
        return Ok(Some(retry_after));
    }
    let Plan { status, inject, requeue } = plan;
    tracing::debug!(
        ephemeraljob = %job_key,
        phase = %status.phase.as_str(),
        matches = status.matches,
        running = status.running,
        waiting = status.waiting,
        succeeded = status.succeeded,
        failed = status.failed,
        to_inject = inject.len(),
        "reconciling"
    );
    let inject_error = inject_into(ctx, &job, job_key, &inject).await;
    write_status(ctx, &api, &job, status).await?;
    match inject_error {
        Some(error) => Err(error),
        None => Ok(requeue),
    }
}

/// Adds or removes [`FINALIZER`] with a merge patch carrying the cached resourceVersion (a
/// conflict retries the reconcile on a fresh copy); returns the written job.
async fn set_finalizers(
    ctx: &Context,
    api: &Api<EphemeralJob>,
    job: &EphemeralJob,
    hold: bool,
) -> Result<EphemeralJob, ControllerError> {
    let mut finalizers: Vec<String> = job.finalizers().iter().filter(|f| *f != FINALIZER).cloned().collect();
    if hold {
        finalizers.push(FINALIZER.into());
    }
    let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": job.resource_version()}});
    let written = api.patch(&job.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await?;
    ctx.rv.expect(
        &job_key(job),
        written.metadata.resource_version.as_deref().unwrap_or_default(),
        Instant::now(),
    );
    Ok(written)
}

/// Adds the job's containers to the pods through `pods/ephemeralcontainers`, in slow-start
/// batches (upstream `DoItSlowly`), stopping after a batch with a failure; a failure is also a
/// `CreateFailed` Event on the job. A pod gone meanwhile is skipped.
async fn inject_into(
    ctx: &Context,
    job: &EphemeralJob,
    job_key: &str,
    pods: &[&Pod],
) -> Option<ControllerError> {
    if pods.is_empty() {
        return None;
    }
    let patch = match inject_patch(job) {
        Ok(patch) => Patch::Strategic(patch),
        Err(error) => return Some(error.into()),
    };
    let api: Api<Pod> =
        Api::namespaced(ctx.client.clone(), job.metadata.namespace.as_deref().unwrap_or_default());
    let results = create_slowly(pods.to_vec(), |pod: &Pod| {
        let (api, patch) = (api.clone(), &patch);
        let pod_name = pod.name_any();
        async move {
            let names = expectation_names(job, &pod_name);
            for name in &names {
                ctx.scale.expect(job_key, ScaleAction::Create, name, Instant::now());
            }
            let forget = || {
                for name in &names {
                    ctx.scale.forget(job_key, ScaleAction::Create, name);
                }
            };
            match api.patch_subresource(SUBRESOURCE, &pod_name, &PatchParams::default(), patch).await {
                Ok(_) => {
                    tracing::info!(ephemeraljob = %job_key, pod = %pod_name, "injected ephemeral containers");
                    Ok(())
                }
                Err(kube::Error::Api(status)) if status.code == 404 => {
                    forget();
                    tracing::info!(ephemeraljob = %job_key, pod = %pod_name, "the pod is gone; nothing injected");
                    Ok(())
                }
                Err(error) => {
                    forget();
                    let message = format!(
                        "failed to create ephemeral container in pod {}/{pod_name}: {error}",
                        pod.namespace().unwrap_or_default()
                    );
                    tracing::warn!(ephemeraljob = %job_key, pod = %pod_name, %error, "could not inject ephemeral containers");
                    ctx.recorder.publish(job.object_ref(&()), EventKind::Warning, "CreateFailed", message);
                    Err(ControllerError::from(error))
                }
            }
        }
    })
    .await;
    results.into_iter().flatten().find_map(Result::err)
}

/// Writes the status when it changed (a conflict is retried on a fresh copy), then waits for
/// the cache to show the write.
async fn write_status(
    ctx: &Context,
    api: &Api<EphemeralJob>,
    job: &EphemeralJob,
    status: EphemeralJobStatus,
) -> Result<(), ControllerError> {
    let name = job.name_any();
    let mut current = job.clone();
    for _ in 0..STATUS_ATTEMPTS {
        if current.status.as_ref() == Some(&status) {
            return Ok(());
        }
        current.status = Some(status.clone());
        match api.replace_status(&name, &PostParams::default(), &current).await {
            Ok(written) => {
                let rv = written.metadata.resource_version.unwrap_or_default();
                ctx.rv.expect(&job_key(job), &rv, Instant::now());
                return Ok(());
            }
            Err(kube::Error::Api(response)) if response.code == 409 => match api.get_opt(&name).await? {
                Some(fresh) => current = fresh,
                None => return Ok(()),
            },
            Err(kube::Error::Api(response)) if response.code == 404 => return Ok(()),
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid(format!("EphemeralJob {}: status write kept conflicting", job_key(job))))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::{Value, json};

    use super::*;

    fn job(rv: &str, spec: Value, deleting: bool) -> EphemeralJob {
        let mut job: EphemeralJob = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "EphemeralJob",
            "metadata": {"name": "j", "namespace": "ns", "resourceVersion": rv},
            "spec": spec,
        }))
        .unwrap();
        if deleting {
            job.metadata.deletion_timestamp =
                Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Timestamp::now()));
        }
        job
    }

    #[test]
    fn job_updates_that_wake_the_job() {
        let base = json!({"selector": {"matchLabels": {"a": "b"}}, "parallelism": 1});
        let cases = [
            (job("1", base.clone(), false), job("1", json!({"parallelism": 5}), false), false),
            (job("1", base.clone(), false), job("2", base.clone(), false), false),
            (
                job("1", base.clone(), false),
                job("2", json!({"selector": {"matchLabels": {"a": "b"}}, "parallelism": 2}), false),
                true,
            ),
            (
                job("1", base.clone(), false),
                job(
                    "2",
                    json!({"selector": {"matchLabels": {"a": "b"}}, "parallelism": 1, "paused": true}),
                    false,
                ),
                true,
            ),
            (
                job("1", base.clone(), false),
                job(
                    "2",
                    json!({"selector": {"matchLabels": {"a": "b"}}, "parallelism": 1, "replicas": 3}),
                    false,
                ),
                true,
            ),
            (
                job("1", base.clone(), false),
                job(
                    "2",
                    json!({"selector": {"matchLabels": {"a": "b"}}, "parallelism": 1, "ttlSecondsAfterFinished": 3}),
                    false,
                ),
                true,
            ),
            (job("1", base.clone(), false), job("2", base.clone(), true), true),
        ];
        for (i, (old, new, want)) in cases.iter().enumerate() {
            assert_eq!(job_changed(old, new), *want, "case {i}");
        }
    }

    fn pod(rv: &str, extra: Value) -> Pod {
        let mut value = json!({"metadata": {"name": "p", "namespace": "ns", "resourceVersion": rv, "labels": {"a": "b"}},
                               "spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}});
        if let (Some(target), Value::Object(extra)) = (value.as_object_mut(), extra) {
            for (key, value) in extra {
                target.insert(key, value);
            }
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn pod_updates_that_wake_jobs() {
        let base = pod("1", json!({}));
        let cases = [
            (pod("1", json!({"status": {"phase": "Failed"}})), false),
            (pod("2", json!({})), false),
            (
                pod(
                    "2",
                    json!({"status": {"phase": "Running", "ephemeralContainerStatuses": [
                {"name": "d", "image": "b", "imageID": "", "ready": false, "restartCount": 0}]}}),
                ),
                true,
            ),
            (
                pod(
                    "2",
                    json!({"spec": {"containers": [{"name": "c", "image": "i"}],
                "ephemeralContainers": [{"name": "d", "image": "b"}]}}),
                ),
                true,
            ),
            (pod("2", json!({"metadata": {"name": "p", "namespace": "ns", "resourceVersion": "2"}})), true),
            (pod("2", json!({"status": {"phase": "Succeeded"}})), true),
        ];
        for (i, (new, want)) in cases.iter().enumerate() {
            assert_eq!(pod_changed(&base, new), *want, "case {i}");
        }
    }
}
