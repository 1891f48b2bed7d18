//! The AdvancedCronJob's decisions, pure: which of its children are active, succeeded or
//! failed; the status that follows; which finished children the history limits remove; and
//! whether a run is due now and what the concurrency policy makes of it. [`super::controller`]
//! reads the children and carries out the [`Plan`].

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::{batch::v1::Job, core::v1::ObjectReference},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{
    AdvancedCronJob, AdvancedCronJobSpec, AdvancedCronJobStatus, BroadcastJob, ConcurrencyPolicy,
    ImageListPullJob, JobConditionType, TemplateKind,
};
use kube::{Resource, ResourceExt};

use super::schedule::{Schedule, ScheduleError, add_seconds, runs};

/// The annotation each child carries with the scheduled time it runs for (RFC 3339, UTC); the
/// cron job's `status.lastScheduleTime` is rebuilt from it.
pub const SCHEDULED_AT_ANNOTATION: &str = "apps.kruise.io/scheduled-at";

/// Which kind of child a cron job creates (upstream's `FindTemplateKind`): a Job template wins,
/// then an ImageListPullJob template; anything else is a BroadcastJob cron job.
pub fn template_kind(spec: &AdvancedCronJobSpec) -> TemplateKind {
    if spec.template.job_template.is_some() {
        TemplateKind::Job
    } else if spec.template.image_list_pull_job_template.is_some() {
        TemplateKind::ImageListPullJob
    } else {
        TemplateKind::BroadcastJob
    }
}

/// The name of the child for a scheduled time: the cron job's name and the time in Unix
/// seconds, so that one scheduled time can never be started twice.
pub fn child_name(cron_job: &str, scheduled: Timestamp) -> String {
    format!("{cron_job}-{}", scheduled.as_second())
}

/// Where a child stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildPhase {
    /// Still running (or not started).
    Active,
    /// Finished successfully.
    Succeeded,
    /// Finished and failed.
    Failed,
}

/// A kind of object a cron job runs: how to tell it finished and how to make one from the
/// cron job's template.
pub trait CronChild: Resource<DynamicType = ()> + Sized {
    /// The template kind that creates it.
    const TEMPLATE: TemplateKind;

    /// Whether it finished, and how.
    fn phase(&self) -> ChildPhase;

    /// When its controller started it (history pruning removes the oldest first).
    fn start_time(&self) -> Option<Timestamp>;

    /// The child for `scheduled`, from the cron job's template (none without the template).
    fn from_template(cron_job: &AdvancedCronJob, scheduled: Timestamp) -> Option<Self>;
}

/// Finished from the first `Complete` or `Failed` condition that is `True`.
fn phase_from_conditions<'a>(conditions: impl IntoIterator<Item = (&'a str, &'a str)>) -> ChildPhase {
    for (type_, status) in conditions {
        if status != "True" {
            continue;
        }
        match type_ {
            "Complete" => return ChildPhase::Succeeded,
            "Failed" => return ChildPhase::Failed,
            _ => {}
        }
    }
    ChildPhase::Active
}

impl CronChild for Job {
    const TEMPLATE: TemplateKind = TemplateKind::Job;

    fn phase(&self) -> ChildPhase {
        let conditions = self.status.as_ref().and_then(|s| s.conditions.as_ref());
        phase_from_conditions(conditions.into_iter().flatten().map(|c| (c.type_.as_str(), c.status.as_str())))
    }

    fn start_time(&self) -> Option<Timestamp> {
        self.status.as_ref().and_then(|s| s.start_time.as_ref()).map(|t| t.0)
    }

    fn from_template(cron_job: &AdvancedCronJob, scheduled: Timestamp) -> Option<Self> {
        let template = cron_job.spec.template.job_template.as_ref()?;
        Some(Job {
            metadata: child_metadata(cron_job, template.metadata.as_ref(), scheduled)?,
            spec: template.spec.clone(),
            status: None,
        })
    }
}

impl CronChild for BroadcastJob {
    const TEMPLATE: TemplateKind = TemplateKind::BroadcastJob;

    fn phase(&self) -> ChildPhase {
        let conditions = self.status.iter().flat_map(|s| &s.conditions);
        phase_from_conditions(conditions.map(|c| {
            let type_ = match &c.type_ {
                JobConditionType::Complete => "Complete",
                JobConditionType::Failed => "Failed",
                JobConditionType::Unknown(_) => "",
            };
            (type_, c.status.as_str())
        }))
    }

    fn start_time(&self) -> Option<Timestamp> {
        self.status.as_ref().and_then(|s| s.start_time.as_ref()).map(|t| t.0)
    }

    fn from_template(cron_job: &AdvancedCronJob, scheduled: Timestamp) -> Option<Self> {
        let template = cron_job.spec.template.broadcast_job_template.as_ref()?;
        Some(BroadcastJob {
            metadata: child_metadata(cron_job, Some(&template.metadata), scheduled)?,
            spec: template.spec.clone(),
            status: None,
        })
    }
}

impl CronChild for ImageListPullJob {
    const TEMPLATE: TemplateKind = TemplateKind::ImageListPullJob;

    /// An ImageListPullJob has no conditions: finished once it has a completion time,
    /// successfully when every image was pulled (upstream's rule).
    fn phase(&self) -> ChildPhase {
        match &self.status {
            Some(status) if status.completion_time.is_some() => {
                if status.succeeded == status.desired {
                    ChildPhase::Succeeded
                } else {
                    ChildPhase::Failed
                }
            }
            _ => ChildPhase::Active,
        }
    }

    fn start_time(&self) -> Option<Timestamp> {
        self.status.as_ref().and_then(|s| s.start_time.as_ref()).map(|t| t.0)
    }

    fn from_template(cron_job: &AdvancedCronJob, scheduled: Timestamp) -> Option<Self> {
        let template = cron_job.spec.template.image_list_pull_job_template.as_ref()?;
        Some(ImageListPullJob {
            metadata: child_metadata(cron_job, Some(&template.metadata), scheduled)?,
            spec: template.spec.clone(),
            status: None,
        })
    }
}

/// A child's metadata: its deterministic name, the template's labels and annotations, the
/// scheduled-at annotation and the cron job as its controlling owner (so it is garbage
/// collected with the cron job). None when the cron job has no name or UID yet.
fn child_metadata(
    cron_job: &AdvancedCronJob,
    template: Option<&ObjectMeta>,
    scheduled: Timestamp,
) -> Option<ObjectMeta> {
    let name = cron_job.metadata.name.clone()?;
    let uid = cron_job.metadata.uid.clone()?;
    let labels = template.and_then(|m| m.labels.clone()).filter(|l| !l.is_empty());
    let mut annotations: BTreeMap<String, String> =
        template.and_then(|m| m.annotations.clone()).unwrap_or_default();
    annotations.insert(SCHEDULED_AT_ANNOTATION.into(), format_time(scheduled));
    Some(ObjectMeta {
        name: Some(child_name(&name, scheduled)),
        namespace: cron_job.metadata.namespace.clone(),
        labels,
        annotations: Some(annotations),
        owner_references: Some(vec![OwnerReference {
            api_version: AdvancedCronJob::api_version(&()).into_owned(),
            kind: AdvancedCronJob::kind(&()).into_owned(),
            name,
            uid,
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]),
        ..Default::default()
    })
}

/// RFC 3339 in UTC with whole seconds, as Go's `time.RFC3339` writes a UTC time.
pub fn format_time(time: Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// What the cron job needs to know of one child.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildSummary {
    /// A reference to it (what `status.active` lists).
    pub reference: ObjectReference,
    /// Whether it finished.
    pub phase: ChildPhase,
    /// The scheduled time it runs for, from its annotation.
    pub scheduled_at: Option<Timestamp>,
    /// The annotation's value when it is not a time (the child is then left out of
    /// `lastScheduleTime`, as upstream does).
    pub unparsable_scheduled_at: Option<String>,
    /// When it started.
    pub start_time: Option<Timestamp>,
}

/// Summarizes a child of kind `K`.
pub fn summarize<K: CronChild>(child: &K) -> ChildSummary {
    let meta = child.meta();
    let raw = child.annotations().get(SCHEDULED_AT_ANNOTATION).filter(|v| !v.is_empty());
    let parsed = raw.map(|value| value.parse::<Timestamp>());
    ChildSummary {
        reference: ObjectReference {
            api_version: Some(K::api_version(&()).into_owned()),
            kind: Some(K::kind(&()).into_owned()),
            name: meta.name.clone(),
            namespace: meta.namespace.clone(),
            uid: meta.uid.clone(),
            resource_version: meta.resource_version.clone(),
            field_path: None,
        },
        phase: child.phase(),
        scheduled_at: parsed.as_ref().and_then(|p| p.as_ref().ok().copied()),
        unparsable_scheduled_at: raw.filter(|_| parsed.as_ref().is_some_and(Result::is_err)).cloned(),
        start_time: child.start_time(),
    }
}

/// What to do about runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `spec.paused`: no run is started.
    Paused,
    /// The schedule does not parse: nothing runs until it is fixed.
    InvalidSchedule(String),
    /// More than 100 runs were missed and no starting deadline bounds them.
    TooManyMissed,
    /// No run is due.
    Wait,
    /// The latest due run is older than `startingDeadlineSeconds`.
    TooLate {
        /// The run that was missed.
        missed: Timestamp,
    },
    /// A run is due but `Forbid` holds it back while children are active.
    Forbidden {
        /// The run held back.
        scheduled: Timestamp,
        /// How many children are active.
        active: usize,
    },
    /// Start the run: delete `replace` first (`Replace`), then create the child `name`.
    Run {
        /// The scheduled time the run is for.
        scheduled: Timestamp,
        /// The child's name.
        name: String,
        /// Active children to delete first.
        replace: Vec<ObjectReference>,
    },
}

/// One reconcile's decisions.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The status to write.
    pub status: AdvancedCronJobStatus,
    /// Finished children beyond the history limits, to delete.
    pub prune: Vec<ObjectReference>,
    /// Whether a run starts.
    pub action: Action,
    /// The next scheduled time after now, when the schedule fires again.
    pub next: Option<Timestamp>,
}

impl Plan {
    /// When to look again without any change: at the next scheduled time, unless paused or the
    /// schedule is unusable (then only a change of the cron job helps).
    pub fn requeue_after(&self, now: Timestamp) -> Option<Duration> {
        match self.action {
            Action::Paused | Action::InvalidSchedule(_) | Action::TooManyMissed => None,
            _ => self.next.map(|next| {
                let nanos = next.as_nanosecond().saturating_sub(now.as_nanosecond()).max(0);
                Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
            }),
        }
    }
}

/// Decides one reconcile of `cron_job` over its `children` at `now` (upstream's
/// `reconcileJob`, the same for each template kind).
///
/// `status.lastScheduleTime` is the latest scheduled-at of the children, as upstream rebuilds
/// it, but never earlier than the one already recorded: upstream resets it when every child
/// was deleted (a history limit of 0), and would then start the latest scheduled time again.
pub fn plan(cron_job: &AdvancedCronJob, children: &[ChildSummary], now: Timestamp) -> Plan {
    let spec = &cron_job.spec;
    let active: Vec<&ChildSummary> = children.iter().filter(|c| c.phase == ChildPhase::Active).collect();
    let by_phase = |phase| children.iter().filter(move |c: &&ChildSummary| c.phase == phase);
    let most_recent = children.iter().filter_map(|c| c.scheduled_at).max();
    let recorded = cron_job.status.as_ref().and_then(|s| s.last_schedule_time.as_ref()).map(|t| t.0);
    let last_schedule = most_recent.max(recorded);
    let status = AdvancedCronJobStatus {
        type_: template_kind(spec),
        active: active.iter().map(|c| c.reference.clone()).collect(),
        last_schedule_time: last_schedule.map(Time),
    };
    let mut prune = beyond_limit(by_phase(ChildPhase::Failed).collect(), spec.failed_jobs_history_limit);
    prune.extend(beyond_limit(by_phase(ChildPhase::Succeeded).collect(), spec.successful_jobs_history_limit));
    let decide = |action, next| Plan { status: status.clone(), prune: prune.clone(), action, next };

    if spec.paused == Some(true) {
        return decide(Action::Paused, None);
    }
    let schedule = match Schedule::of(spec) {
        Ok(schedule) => schedule,
        Err(error) => return decide(Action::InvalidSchedule(error.to_string()), None),
    };
    let since =
        last_schedule.or_else(|| cron_job.metadata.creation_timestamp.as_ref().map(|t| t.0)).unwrap_or(now);
    let runs = match runs(&schedule, since, spec.starting_deadline_seconds, now) {
        Ok(runs) => runs,
        Err(ScheduleError::TooManyMissed) => return decide(Action::TooManyMissed, None),
        Err(error) => return decide(Action::InvalidSchedule(error.to_string()), None),
    };
    let Some(missed) = runs.missed else { return decide(Action::Wait, runs.next) };
    if spec.starting_deadline_seconds.is_some_and(|deadline| add_seconds(missed, deadline) < now) {
        return decide(Action::TooLate { missed }, runs.next);
    }
    let replace = match spec.concurrency_policy {
        ConcurrencyPolicy::Forbid if !active.is_empty() => {
            return decide(Action::Forbidden { scheduled: missed, active: active.len() }, runs.next);
        }
        ConcurrencyPolicy::Replace => active.iter().map(|c| c.reference.clone()).collect(),
        _ => Vec::new(),
    };
    let name = child_name(&cron_job.name_any(), missed);
    decide(Action::Run { scheduled: missed, name, replace }, runs.next)
}

/// The oldest (by start time, unstarted first) of `finished` beyond `limit`; none without a
/// limit.
fn beyond_limit(mut finished: Vec<&ChildSummary>, limit: Option<i32>) -> Vec<ObjectReference> {
    let Some(limit) = limit else { return Vec::new() };
    finished.sort_by_key(|c| (c.start_time.is_some(), c.start_time));
    let excess = i64::try_from(finished.len()).unwrap_or(i64::MAX) - i64::from(limit);
    let excess = usize::try_from(excess.max(0)).unwrap_or(0);
    finished.into_iter().take(excess).map(|c| c.reference.clone()).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::api::batch::v1::{JobCondition, JobStatus};
    use kruise_crds::apps::v1beta1::{ImageListPullJobStatus, JobCondition as KruiseCondition};
    use serde_json::json;

    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    /// Upstream's test clock: 2025-10-10 09:00 UTC.
    const CREATED: &str = "2025-10-10T09:00:00Z";

    /// Upstream's `createJob`: `*/5`, Replace, not paused, history limits 2 and 1.
    fn cron_job(name: &str, template: serde_json::Value) -> AdvancedCronJob {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "uid": "12345", "creationTimestamp": CREATED},
            "spec": {
                "schedule": "*/5 * * * *", "concurrencyPolicy": "Replace", "paused": false,
                "successfulJobsHistoryLimit": 2, "failedJobsHistoryLimit": 1, "template": template,
            },
        }))
        .unwrap()
    }

    fn broadcast_template() -> serde_json::Value {
        json!({"broadcastJobTemplate": {"spec": {"template": {"spec": {}}}}})
    }

    fn job_template() -> serde_json::Value {
        json!({"jobTemplate": {"spec": {"template": {"spec": {}}}}})
    }

    fn image_list_template() -> serde_json::Value {
        json!({"imageListPullJobTemplate": {"spec": {
            "images": ["busybox:latest", "alpine:latest"],
            "selector": {"names": ["node2", "node3"]},
        }}})
    }

    /// Upstream's `createImageListPullJob`: a child scheduled `minutes` after the test clock.
    fn image_list_child(
        parent: &AdvancedCronJob,
        minutes: i64,
        desired: i32,
        succeeded: i32,
        completed: i32,
    ) -> ImageListPullJob {
        let time = add_seconds(at(CREATED), minutes * 60);
        let mut child = ImageListPullJob::from_template(parent, time).unwrap();
        child.metadata.name = Some(format!("job1-t{minutes}"));
        child.metadata.uid = Some(format!("{}", 100 + minutes));
        child.status = Some(ImageListPullJobStatus {
            start_time: Some(Time(time)),
            completion_time: (desired == completed).then_some(Time(time)),
            desired,
            completed,
            succeeded,
            ..Default::default()
        });
        child
    }

    fn names(references: &[ObjectReference]) -> Vec<String> {
        references.iter().map(|r| r.name.clone().unwrap_or_default()).collect()
    }

    /// Upstream's `TestReconcileAdvancedJobCreateBroadcastJob`: the status names the kind;
    /// nothing is due at creation.
    #[test]
    fn test_reconcile_advanced_job_create_broadcast_job() {
        let job = cron_job("job1", broadcast_template());
        let plan = plan(&job, &[], at(CREATED));
        assert_eq!(plan.status.type_, TemplateKind::BroadcastJob);
        assert_eq!(plan.action, Action::Wait);
        assert_eq!(plan.next, Some(at("2025-10-10T09:05:00Z")));
        assert_eq!(plan.requeue_after(at(CREATED)), Some(Duration::from_secs(300)));
    }

    /// Upstream's `TestReconcileAdvancedJobCreateJob`.
    #[test]
    fn test_reconcile_advanced_job_create_job() {
        let job = cron_job("job2", job_template());
        let plan = plan(&job, &[], at(CREATED));
        assert_eq!(plan.status.type_, TemplateKind::Job);
        assert_eq!(plan.action, Action::Wait);
    }

    /// Upstream's `TestReconcileAdvancedJobCreateImageListPullJob`: five minutes later one
    /// ImageListPullJob is created.
    #[test]
    fn test_reconcile_advanced_job_create_image_list_pull_job() {
        let job = cron_job("job1", image_list_template());
        let now = at("2025-10-10T09:05:00Z");
        let plan = plan(&job, &[], now);
        assert_eq!(plan.status.type_, TemplateKind::ImageListPullJob);
        let scheduled = at("2025-10-10T09:05:00Z");
        assert_eq!(plan.action, Action::Run { scheduled, name: "job1-1760087100".into(), replace: vec![] });
        let child = ImageListPullJob::from_template(&job, scheduled).unwrap();
        assert_eq!(child.metadata.name.as_deref(), Some("job1-1760087100"));
        assert_eq!(child.spec.images, ["busybox:latest", "alpine:latest"]);
    }

    /// Upstream's `TestReconcileAdvancedJobCreateImageListPullJobAgain`: of six children (three
    /// succeeded, two failed, one active) the limits keep two succeeded and one failed; Replace
    /// deletes the active one and a new one starts: four remain.
    #[test]
    fn test_reconcile_advanced_job_create_image_list_pull_job_again() {
        let mut template = image_list_template();
        template["imageListPullJobTemplate"]["metadata"] =
            json!({"annotations": {"key1": "value1"}, "labels": {"key1": "value1"}});
        let mut job = cron_job("job1", template);
        job.spec.starting_deadline_seconds = Some(360);
        let children: Vec<ChildSummary> = [
            image_list_child(&job, -25, 3, 3, 3),
            image_list_child(&job, -20, 2, 1, 2),
            image_list_child(&job, -15, 2, 1, 2),
            image_list_child(&job, -10, 2, 2, 2),
            image_list_child(&job, -5, 2, 2, 2),
            image_list_child(&job, 0, 2, 0, 1),
        ]
        .iter()
        .map(summarize)
        .collect();
        let now = at("2025-10-10T09:05:00Z");
        let plan = plan(&job, &children, now);
        assert_eq!(plan.status.type_, TemplateKind::ImageListPullJob);
        assert_eq!(names(&plan.status.active), ["job1-t0"]);
        assert_eq!(plan.status.last_schedule_time, Some(Time(at(CREATED))));
        assert_eq!(names(&plan.prune), ["job1-t-20", "job1-t-25"]);
        let Action::Run { name, replace, .. } = &plan.action else { panic!("{:?}", plan.action) };
        assert_eq!(names(replace), ["job1-t0"]);
        let remaining = children.len() - plan.prune.len() - replace.len() + 1;
        assert_eq!(remaining, 4, "1 failed + 2 successful + 1 running");
        let created = ImageListPullJob::from_template(&job, at("2025-10-10T09:05:00Z")).unwrap();
        assert_eq!(created.metadata.name.as_ref(), Some(name));
        let annotations = created.metadata.annotations.unwrap();
        assert_eq!(annotations["key1"], "value1");
        assert_eq!(annotations[SCHEDULED_AT_ANNOTATION], "2025-10-10T09:05:00Z");
        assert_eq!(created.metadata.labels.unwrap()["key1"], "value1");
    }

    fn job_child(
        parent: &AdvancedCronJob,
        scheduled: &str,
        phase: ChildPhase,
        start: Option<&str>,
    ) -> ChildSummary {
        let mut job = Job::from_template(parent, at(scheduled)).unwrap();
        let condition = match phase {
            ChildPhase::Active => None,
            ChildPhase::Succeeded => Some("Complete"),
            ChildPhase::Failed => Some("Failed"),
        };
        job.status = Some(JobStatus {
            start_time: start.map(|s| Time(at(s))),
            conditions: condition.map(|type_| {
                vec![JobCondition { type_: type_.into(), status: "True".into(), ..Default::default() }]
            }),
            ..Default::default()
        });
        summarize(&job)
    }

    fn every_minute(policy: &str, deadline: Option<i64>) -> AdvancedCronJob {
        let mut job = cron_job("acj", job_template());
        job.spec.schedule = "*/1 * * * *".into();
        job.spec.concurrency_policy = policy.into();
        job.spec.starting_deadline_seconds = deadline;
        job.spec.successful_jobs_history_limit = Some(3);
        job.spec.failed_jobs_history_limit = Some(1);
        job
    }

    fn running(job: &AdvancedCronJob) -> ChildSummary {
        job_child(job, "2025-10-10T09:09:00Z", ChildPhase::Active, Some("2025-10-10T09:09:01Z"))
    }

    /// The decision for each policy and timing. With a starting deadline the search for missed
    /// runs starts at `now - deadline`, so a missed run is never older than the deadline
    /// (upstream's "too late" check cannot trigger after it): it is simply not seen.
    #[test]
    fn decisions_table() {
        use ChildPhase::*;
        let t = "2025-10-10T09:10:00Z";
        struct Case {
            name: &'static str,
            job: AdvancedCronJob,
            children: fn(&AdvancedCronJob) -> Vec<ChildSummary>,
            now: &'static str,
            expected: Action,
        }
        let run = |scheduled: &str, replace: Vec<ObjectReference>| Action::Run {
            scheduled: at(scheduled),
            name: child_name("acj", at(scheduled)),
            replace,
        };
        let paused = {
            let mut job = every_minute("Allow", None);
            job.spec.paused = Some(true);
            job
        };
        let bad_schedule = {
            let mut job = every_minute("Allow", None);
            job.spec.schedule = "every minute".into();
            job
        };
        let cases = vec![
            Case { name: "allow starts alongside an active run", job: every_minute("Allow", None),
                children: |j| vec![job_child(j, "2025-10-10T09:09:00Z", Active, None)], now: t,
                expected: run(t, vec![]) },
            Case { name: "an unset policy allows", job: every_minute("", None),
                children: |j| vec![job_child(j, "2025-10-10T09:09:00Z", Active, None)], now: t,
                expected: run(t, vec![]) },
            Case { name: "forbid skips while a run is active", job: every_minute("Forbid", None),
                children: |j| vec![job_child(j, "2025-10-10T09:09:00Z", Active, None)], now: t,
                expected: Action::Forbidden { scheduled: at(t), active: 1 } },
            Case { name: "forbid starts once runs finished", job: every_minute("Forbid", None),
                children: |j| vec![job_child(j, "2025-10-10T09:09:00Z", Succeeded, None)], now: t,
                expected: run(t, vec![]) },
            Case { name: "replace deletes the active run", job: every_minute("Replace", None),
                children: |j| vec![running(j)], now: t,
                expected: run(t, vec![running(&every_minute("Replace", None)).reference]) },
            Case { name: "already started for this time", job: every_minute("Allow", None),
                children: |j| vec![job_child(j, "2025-10-10T09:10:00Z", Active, None)], now: "2025-10-10T09:10:30Z",
                expected: Action::Wait },
            Case { name: "paused", job: paused, children: |_| vec![], now: t, expected: Action::Paused },
            Case { name: "unparsable schedule", job: bad_schedule, children: |_| vec![], now: t,
                expected: Action::InvalidSchedule("unparsable schedule \"every minute\": expected exactly 5 fields, found 2: \"every minute\"".into()) },
            Case { name: "a missed run older than the deadline is not started", job: every_minute("Allow", Some(10)),
                children: |j| vec![job_child(j, "2025-10-10T09:09:00Z", Succeeded, None)], now: "2025-10-10T09:10:30Z",
                expected: Action::Wait },
            Case { name: "within the starting deadline", job: every_minute("Allow", Some(45)),
                children: |j| vec![job_child(j, "2025-10-10T09:09:00Z", Succeeded, None)], now: "2025-10-10T09:10:30Z",
                expected: run(t, vec![]) },
            Case { name: "over 100 missed runs", job: every_minute("Allow", None),
                children: |_| vec![], now: "2025-10-10T10:41:00Z", expected: Action::TooManyMissed },
            Case { name: "a deadline makes a long outage recoverable", job: every_minute("Allow", Some(30)),
                children: |_| vec![], now: "2025-10-11T10:41:10Z", expected: run("2025-10-11T10:41:00Z", vec![]) },
        ];
        for case in cases {
            let children = (case.children)(&case.job);
            let got = plan(&case.job, &children, at(case.now));
            assert_eq!(got.action, case.expected, "{}", case.name);
        }
    }

    #[test]
    fn history_limits_prune_the_oldest_finished() {
        use ChildPhase::*;
        let job = every_minute("Allow", None);
        let children = vec![
            job_child(&job, "2025-10-10T09:01:00Z", Succeeded, Some("2025-10-10T09:01:01Z")),
            job_child(&job, "2025-10-10T09:02:00Z", Succeeded, Some("2025-10-10T09:02:01Z")),
            job_child(&job, "2025-10-10T09:03:00Z", Succeeded, None),
            job_child(&job, "2025-10-10T09:04:00Z", Succeeded, Some("2025-10-10T09:04:01Z")),
            job_child(&job, "2025-10-10T09:05:00Z", Succeeded, Some("2025-10-10T09:05:01Z")),
            job_child(&job, "2025-10-10T09:06:00Z", Failed, Some("2025-10-10T09:06:01Z")),
            job_child(&job, "2025-10-10T09:07:00Z", Failed, Some("2025-10-10T09:07:01Z")),
            job_child(&job, "2025-10-10T09:08:00Z", Active, Some("2025-10-10T09:08:01Z")),
        ];
        let plan = plan(&job, &children, at("2025-10-10T09:08:30Z"));
        let unix = |t: &str| format!("acj-{}", at(t).as_second());
        // One failed kept (the newest), three succeeded kept; unstarted counts as oldest.
        assert_eq!(
            names(&plan.prune),
            [unix("2025-10-10T09:06:00Z"), unix("2025-10-10T09:03:00Z"), unix("2025-10-10T09:01:00Z")]
        );
        assert_eq!(names(&plan.status.active), [unix("2025-10-10T09:08:00Z")]);
        assert_eq!(plan.status.last_schedule_time, Some(Time(at("2025-10-10T09:08:00Z"))));

        let mut unlimited = job.clone();
        unlimited.spec.successful_jobs_history_limit = None;
        unlimited.spec.failed_jobs_history_limit = Some(0);
        let plan = super::plan(&unlimited, &children, at("2025-10-10T09:08:30Z"));
        assert_eq!(names(&plan.prune), [unix("2025-10-10T09:06:00Z"), unix("2025-10-10T09:07:00Z")]);
    }

    #[test]
    fn last_schedule_time_never_goes_back() {
        let mut job = every_minute("Allow", None);
        job.status = Some(AdvancedCronJobStatus {
            last_schedule_time: Some(Time(at("2025-10-10T09:09:00Z"))),
            ..Default::default()
        });
        // Every child was pruned: the recorded time holds, the 09:09 run is not started again.
        let plan = plan(&job, &[], at("2025-10-10T09:09:30Z"));
        assert_eq!(plan.status.last_schedule_time, Some(Time(at("2025-10-10T09:09:00Z"))));
        assert_eq!(plan.action, Action::Wait);
    }

    #[test]
    fn template_kinds_and_children() {
        let job = cron_job("acj", broadcast_template());
        assert_eq!(template_kind(&job.spec), TemplateKind::BroadcastJob);
        let scheduled = at("2026-12-06T07:31:00Z");
        let child = BroadcastJob::from_template(&job, scheduled).unwrap();
        assert_eq!(child.metadata.name.as_deref(), Some("acj-1796542260"));
        let owner = &child.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.api_version.as_str(), owner.kind.as_str(), owner.uid.as_str(), owner.controller),
            ("apps.kruise.io/v1beta1", "AdvancedCronJob", "12345", Some(true))
        );
        assert_eq!(child.metadata.labels, None, "no template labels, none set");
        assert!(Job::from_template(&job, scheduled).is_none(), "no Job template");
        let mut finished = child.clone();
        finished.status = Some(Default::default());
        assert_eq!(finished.phase(), ChildPhase::Active);
        finished.status.as_mut().unwrap().conditions = vec![KruiseCondition {
            type_: JobConditionType::Failed,
            status: "True".into(),
            ..Default::default()
        }];
        assert_eq!(finished.phase(), ChildPhase::Failed);
        let summary = summarize(&child);
        assert_eq!(summary.scheduled_at, Some(scheduled));
        assert_eq!(summary.reference.kind.as_deref(), Some("BroadcastJob"));

        let mut odd = child;
        odd.metadata.annotations =
            Some([(SCHEDULED_AT_ANNOTATION.to_string(), "yesterday".to_string())].into());
        let summary = summarize(&odd);
        assert_eq!(
            (summary.scheduled_at, summary.unparsable_scheduled_at.as_deref()),
            (None, Some("yesterday"))
        );
    }

    #[test]
    fn image_list_pull_jobs_finish_by_completion_time() {
        let job = cron_job("job1", image_list_template());
        let cases = [
            ((2, 0, 1), ChildPhase::Active),
            ((2, 2, 2), ChildPhase::Succeeded),
            ((2, 1, 2), ChildPhase::Failed),
        ];
        for ((desired, succeeded, completed), expected) in cases {
            let child = image_list_child(&job, 0, desired, succeeded, completed);
            assert_eq!(child.phase(), expected, "{desired}/{succeeded}/{completed}");
        }
    }
}
