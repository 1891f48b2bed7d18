//! The AdvancedCronJob controller's I/O: cron jobs and their children (Jobs, BroadcastJobs,
//! ImageListPullJobs) from the shared caches, then the writes [`super::core::plan`] decides:
//! the status, the deletion of children beyond the history limits or replaced, the new child.
//! A reconcile asks to be run again at the next scheduled time.

use std::{fmt::Debug, sync::Arc};

use k8s_openapi::{NamespaceResourceScope, api::batch::v1::Job};
use kruise_crds::apps::v1beta1::{
    AdvancedCronJob, AdvancedCronJobStatus, BroadcastJob, ImageListPullJob, TemplateKind,
};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

use super::{
    core::{Action, CronChild, format_time, plan, summarize, template_kind},
    schedule::{Clock, SystemClock},
};
use crate::{
    ControllerError,
    runtime::{
        Metrics,
        cache::{CacheEvent, Cached, Caches, Informer},
        events::{EventKind, EventRecorder},
        harness::{QueueController, Reconciled},
        workqueue::WorkQueue,
    },
};

/// The controller's name in metrics and logs.
pub const CONTROLLER_NAME: &str = "advancedcronjob";
/// Concurrent reconciles (upstream's `--advancedcronjob-workers` default).
pub const WORKERS: usize = 3;

struct Context {
    client: Client,
    cron_jobs: Informer<AdvancedCronJob>,
    jobs: Informer<Job>,
    broadcast_jobs: Informer<BroadcastJob>,
    image_list_pull_jobs: Informer<ImageListPullJob>,
    recorder: EventRecorder,
    clock: Arc<dyn Clock>,
}

fn key_of<K: Resource>(object: &K) -> String {
    format!("{}/{}", object.meta().namespace.as_deref().unwrap_or_default(), object.name_any())
}

/// The key of the cron job controlling `child`, if an AdvancedCronJob (any version) does.
fn owner_key<K: Resource>(child: &K) -> Option<String> {
    let owner = child.owner_references().iter().find(|r| r.controller == Some(true))?;
    let group = owner.api_version.split_once('/').map(|(group, _)| group);
    (owner.kind == AdvancedCronJob::kind(&()) && group == Some(AdvancedCronJob::group(&()).as_ref()))
        .then(|| format!("{}/{}", child.meta().namespace.as_deref().unwrap_or_default(), owner.name))
}

/// Queues the owner of a child that changed or went away (upstream follows creates and
/// updates; a deletion is followed too, so `status.active` drops a child deleted by hand).
fn on_child<K: Resource>(event: &CacheEvent<K>, queue: &WorkQueue) {
    if let Some(key) = event.object().and_then(|child| owner_key(child.as_ref())) {
        queue.add(key);
    }
}

/// Runs the controller until the future is dropped; `on_synced` is called once the cron job
/// and child caches are synced.
pub async fn run(caches: Caches, metrics: Metrics, on_synced: impl FnOnce() + Send) {
    run_with_clock(caches, metrics, Arc::new(SystemClock), on_synced).await;
}

/// [`run`] with the time taken from `clock`.
pub async fn run_with_clock(
    caches: Caches,
    metrics: Metrics,
    clock: Arc<dyn Clock>,
    on_synced: impl FnOnce() + Send,
) {
    let cron_jobs = caches.informer::<AdvancedCronJob>();
    let jobs = caches.informer::<Job>();
    let broadcast_jobs = caches.informer::<BroadcastJob>();
    let image_list_pull_jobs = caches.informer::<ImageListPullJob>();
    let mut controller = QueueController::new(CONTROLLER_NAME, WORKERS, metrics);
    // A new cron job or a spec change; the controller's own status writes wake nothing.
    controller.watch(&cron_jobs, |event, queue| {
        if let CacheEvent::Applied { new, old } = event
            && old.as_ref().is_none_or(|old| old.metadata.generation != new.metadata.generation)
        {
            queue.add(key_of(new.as_ref()));
        }
    });
    controller.watch(&jobs, on_child);
    controller.watch(&broadcast_jobs, on_child);
    controller.watch(&image_list_pull_jobs, on_child);
    let context = Arc::new(Context {
        client: caches.client().clone(),
        recorder: EventRecorder::new(caches.client().clone(), "advancedcronjob-controller"),
        cron_jobs,
        jobs,
        broadcast_jobs,
        image_list_pull_jobs,
        clock,
    });
    let initial = {
        let context = context.clone();
        move || context.cron_jobs.state().iter().map(|job| key_of(job.as_ref())).collect()
    };
    controller
        .run(initial, on_synced, move |key| {
            let context = context.clone();
            async move { reconcile(&context, &key).await }
        })
        .await;
}

async fn reconcile(context: &Context, key: &str) -> Reconciled {
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    let Some(cron_job) = context.cron_jobs.get_named(Some(namespace), name) else { return Ok(None) };
    if cron_job.metadata.deletion_timestamp.is_some() {
        return Ok(None);
    }
    match template_kind(&cron_job.spec) {
        TemplateKind::Job => reconcile_kind(context, &cron_job, &context.jobs).await,
        TemplateKind::ImageListPullJob => {
            reconcile_kind(context, &cron_job, &context.image_list_pull_jobs).await
        }
        _ => reconcile_kind(context, &cron_job, &context.broadcast_jobs).await,
    }
}

/// One reconcile of a cron job whose children are of kind `K`.
async fn reconcile_kind<K>(
    context: &Context,
    cron_job: &AdvancedCronJob,
    children: &Informer<K>,
) -> Reconciled
where
    K: CronChild + Cached + Serialize + DeserializeOwned + Debug + Resource<Scope = NamespaceResourceScope>,
{
    let now = context.clock.now();
    let namespace = cron_job.namespace().unwrap_or_default();
    let uid = cron_job.uid().unwrap_or_default();
    let mut owned: Vec<Arc<K>> = children
        .owner_index()
        .owned_or_orphaned(&namespace, &uid)
        .into_iter()
        .filter(|child| child.owner_references().iter().any(|r| r.controller == Some(true) && r.uid == uid))
        .collect();
    owned.sort_by_key(|child| child.name_any());
    let summaries: Vec<_> = owned.iter().map(|child| summarize(child.as_ref())).collect();
    for summary in &summaries {
        if let Some(value) = &summary.unparsable_scheduled_at {
            tracing::warn!(
                cron_job = %key_of(cron_job), child = ?summary.reference.name, %value,
                "unable to parse the scheduled time of a child"
            );
        }
    }
    let plan = plan(cron_job, &summaries, now);
    tracing::debug!(
        cron_job = %key_of(cron_job), kind = %K::TEMPLATE, children = summaries.len(),
        active = plan.status.active.len(), action = ?plan.action, "planned"
    );
    if !write_status(context, cron_job, &plan.status).await? {
        return Ok(None);
    }
    let api: Api<K> = Api::namespaced(context.client.clone(), &namespace);
    // Best effort, as upstream: a child that cannot be deleted now is tried on the next pass.
    for reference in &plan.prune {
        let child = reference.name.as_deref().unwrap_or_default();
        match delete_child(&api, child).await {
            Ok(deleted) => {
                if deleted {
                    tracing::info!(cron_job = %key_of(cron_job), child, "deleted a finished child beyond the history limit");
                    context.publish(
                        cron_job,
                        EventKind::Normal,
                        "SuccessfulDelete",
                        format!("Deleted {} {child}", K::kind(&())),
                    );
                }
            }
            Err(error) => {
                tracing::warn!(cron_job = %key_of(cron_job), child, %error, "unable to delete an old child");
            }
        }
    }
    match &plan.action {
        Action::Paused => tracing::debug!(cron_job = %key_of(cron_job), "paused"),
        Action::Wait => {}
        Action::InvalidSchedule(message) => {
            tracing::warn!(cron_job = %key_of(cron_job), %message, "unable to figure out the schedule");
            context.publish(cron_job, EventKind::Warning, "UnparseableSchedule", message.clone());
        }
        Action::TooManyMissed => {
            let message = super::schedule::ScheduleError::TooManyMissed.to_string();
            tracing::warn!(cron_job = %key_of(cron_job), %message, "not starting");
            context.publish(cron_job, EventKind::Warning, "TooManyMissedTimes", message);
        }
        Action::TooLate { missed } => {
            context.publish(
                cron_job,
                EventKind::Warning,
                "MissSchedule",
                format!("Missed scheduled time to start a job: {}", format_time(*missed)),
            );
        }
        Action::Forbidden { scheduled, active } => {
            tracing::debug!(cron_job = %key_of(cron_job), active, scheduled = %scheduled, "concurrency policy blocks the run");
            context.publish(
                cron_job,
                EventKind::Normal,
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid".into(),
            );
        }
        Action::Run { scheduled, name, replace } => {
            for reference in replace {
                let child = reference.name.as_deref().unwrap_or_default();
                if delete_child(&api, child).await? {
                    context.publish(
                        cron_job,
                        EventKind::Normal,
                        "SuccessfulDelete",
                        format!("Deleted {} {child}", K::kind(&())),
                    );
                }
            }
            let Some(child) = K::from_template(cron_job, *scheduled) else {
                let message = format!("no {} template to create a run from", K::kind(&()));
                context.publish(cron_job, EventKind::Warning, "FailedCreate", message);
                return Ok(plan.requeue_after(now));
            };
            match api.create(&PostParams::default(), &child).await {
                Ok(_) => {
                    tracing::info!(cron_job = %key_of(cron_job), child = %name, scheduled = %format_time(*scheduled), "created a run");
                    context.publish(
                        cron_job,
                        EventKind::Normal,
                        "SuccessfulCreate",
                        format!("Created {} {name}", K::kind(&())),
                    );
                }
                // Named after its scheduled time: it exists, this run was started already.
                Err(kube::Error::Api(status)) if status.code == 409 => {}
                Err(error) => {
                    context.publish(
                        cron_job,
                        EventKind::Warning,
                        "FailedCreate",
                        format!("Error creating {} {name}: {error}", K::kind(&())),
                    );
                    return Err(error.into());
                }
            }
        }
    }
    Ok(plan.requeue_after(now))
}

impl Context {
    fn publish(&self, cron_job: &AdvancedCronJob, kind: EventKind, reason: &str, note: String) {
        self.recorder.publish(cron_job.object_ref(&()), kind, reason, note);
    }
}

/// Deletes a child, its pods in the background; false when it was already gone.
async fn delete_child<K>(api: &Api<K>, name: &str) -> Result<bool, ControllerError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(error) => Err(error.into()),
    }
}

/// Writes `status` when it differs from the cached one; false when the cron job is gone.
async fn write_status(
    context: &Context,
    cron_job: &AdvancedCronJob,
    status: &AdvancedCronJobStatus,
) -> Result<bool, ControllerError> {
    if cron_job.status.as_ref() == Some(status) {
        return Ok(true);
    }
    let active = if status.active.is_empty() { Value::Null } else { serde_json::to_value(&status.active)? };
    let patch = json!({"status": {
        "type": status.type_,
        "active": active,
        "lastScheduleTime": status.last_schedule_time.as_ref().map(|t| format_time(t.0)),
    }});
    let api: Api<AdvancedCronJob> =
        Api::namespaced(context.client.clone(), cron_job.namespace().as_deref().unwrap_or_default());
    match api.patch_status(&cron_job.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(error) => Err(error.into()),
    }
}
