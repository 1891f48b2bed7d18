//! Jobs: run an AdvancedCronJob now, and read a BroadcastJob's result on each node.
//!
//! A manual run is what `kubectl create job --from=cronjob/NAME` is for a CronJob: the object
//! the AdvancedCronJob's template describes (a Job, a BroadcastJob or an ImageListPullJob),
//! built exactly as the AdvancedCronJob controller builds a scheduled run (the template's
//! labels and annotations, its spec, and the AdvancedCronJob as controlling owner, so the
//! controller counts it among its active runs and prunes it with its history), with two
//! differences kubectl makes too: the annotation `cronjob.kubernetes.io/instantiate: manual`
//! instead of the scheduled-time annotation (a manual run has no scheduled time, so it never
//! moves the AdvancedCronJob's `lastScheduleTime`), and a name of its own,
//! `<advancedcronjob>-manual-<5 characters>`. A paused AdvancedCronJob can be run by hand (its
//! schedule is paused, not the job). The run is created at once and answered 201; the audit
//! record is written before it is created and names it afterwards.
//!
//! The per-node results of a BroadcastJob are read live from its pods (label
//! `broadcastjob-name=<name>`, owner uid the job's): they are the job's own record, kept until
//! the job is deleted, so nothing is copied to the store. Reading needs `job-read` (or `job`).

use k8s_openapi::{
    api::core::v1::{ContainerStatus, Pod},
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};
use kruise_crds::apps::v1beta1::{AdvancedCronJob, BroadcastJob};
use kube::{
    Api, Resource, ResourceExt,
    api::{ApiResource, DynamicObject, ListParams, PostParams},
};
use rand::RngCore;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Input, Operations, RequestContext, check_namespace, sanitize, tasks::check_idempotency_key};
use crate::{
    auth::Action,
    error::{ApiError, FieldError},
    model::{
        BroadcastJobNodes, CronJobRun, CronJobRunRequest, JobContainerResult, JobKind, JobNodeResult,
        WorkloadCondition,
    },
    workload::to_chrono,
};

/// The annotation marking a run created by hand (the key and value kubectl sets on a Job it
/// creates from a CronJob).
pub const MANUAL_INSTANTIATE_ANNOTATION: (&str, &str) = ("cronjob.kubernetes.io/instantiate", "manual");

/// The request field problems with the addressed object are reported on (the path's name).
const NAME_FIELD: &str = "name";

/// Longest name of a run: the jobs' names go into pod label values (`job-name`,
/// `broadcastjob-name`), which hold at most 63 characters.
const MAX_RUN_NAME: usize = 63;

/// Characters of the random part of a run's name (those Kubernetes uses for generated names:
/// no vowels, so no words, and no look-alike digits).
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Length of the random part of a run's name.
const SUFFIX_LEN: usize = 5;

/// How many names a run tries when a random one is taken.
const NAME_ATTEMPTS: usize = 3;

/// A run created (or, for a retry with the same `Idempotency-Key`, found).
#[derive(Clone, Debug)]
pub struct CreatedRun {
    /// The run.
    pub run: CronJobRun,
    /// True when an earlier request with the same idempotency key created it.
    pub replayed: bool,
}

/// The object a manual run creates, ready to post.
#[derive(Clone, Debug)]
struct RunObject {
    kind: JobKind,
    object: DynamicObject,
}

/// The API resource of a run's kind.
fn run_resource(kind: JobKind) -> ApiResource {
    let (group, version, plural) = match kind {
        JobKind::Job => ("batch", "v1", "jobs"),
        JobKind::BroadcastJob => ("apps.kruise.io", "v1beta1", "broadcastjobs"),
        JobKind::ImageListPullJob => ("apps.kruise.io", "v1beta1", "imagelistpulljobs"),
    };
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: kind.api_version().into(),
        kind: kind.as_str().into(),
        plural: plural.into(),
    }
}

/// The random part of a run's name.
fn random_suffix() -> String {
    let mut bytes = [0u8; SUFFIX_LEN];
    rand::rng().fill_bytes(&mut bytes);
    suffix_from(&bytes)
}

/// The part of a run's name derived from an `Idempotency-Key` (with who sent it and for which
/// AdvancedCronJob), so that a retry names the same object and cannot create a second run.
fn keyed_suffix(actor: &str, namespace: &str, cron_job: &str, key: &str) -> String {
    let digest = Sha256::digest(format!("{actor}\0{namespace}\0{cron_job}\0{key}").as_bytes());
    suffix_from(&digest[..SUFFIX_LEN])
}

fn suffix_from(bytes: &[u8]) -> String {
    bytes.iter().map(|b| char::from(SUFFIX_ALPHABET[usize::from(*b) % SUFFIX_ALPHABET.len()])).collect()
}

/// `<advancedcronjob>-manual-<suffix>`, the AdvancedCronJob's name shortened (without a
/// trailing `-` or `.`) so that the whole stays a valid label value.
fn run_name(cron_job: &str, suffix: &str) -> String {
    let infix = "-manual-";
    let room = MAX_RUN_NAME.saturating_sub(infix.len() + suffix.len());
    let prefix: String = cron_job.chars().take(room).collect();
    let prefix = prefix.trim_end_matches(['-', '.']);
    format!("{prefix}{infix}{suffix}")
}

/// The template kind an AdvancedCronJob runs, in the controller's order of precedence (a Job
/// template, else an ImageListPullJob template, else a BroadcastJob template); `None` when it
/// has none.
fn template_kind(cron_job: &AdvancedCronJob) -> Option<JobKind> {
    let template = &cron_job.spec.template;
    if template.job_template.is_some() {
        Some(JobKind::Job)
    } else if template.image_list_pull_job_template.is_some() {
        Some(JobKind::ImageListPullJob)
    } else if template.broadcast_job_template.is_some() {
        Some(JobKind::BroadcastJob)
    } else {
        None
    }
}

/// Why an AdvancedCronJob's template cannot be run: what the webhook says about
/// `spec.template` (no template, several, or an invalid one). Its schedule does not matter to
/// a manual run.
fn template_problems(cron_job: &AdvancedCronJob) -> Vec<FieldError> {
    let name = cron_job.name_any();
    kruise_crds::validation::validate_advancedcronjob_v1beta1(cron_job, None)
        .into_iter()
        .filter(|error| error.path.as_str().starts_with("spec.template"))
        .map(|error| FieldError::new(NAME_FIELD, format!("AdvancedCronJob {name:?} cannot be run: {error}")))
        .collect()
}

/// The object a manual run of `cron_job` named `name` creates: the template's kind, labels,
/// annotations and spec, owned (as controller) by the AdvancedCronJob, marked as instantiated
/// by hand. A 422 naming `name` when the template cannot be run.
fn manual_run(cron_job: &AdvancedCronJob, name: &str) -> Result<RunObject, ApiError> {
    let problems = template_problems(cron_job);
    if !problems.is_empty() {
        return Err(ApiError::Validation(problems));
    }
    let Some(kind) = template_kind(cron_job) else {
        // The validation above reports a missing template; this is its belt and braces.
        return Err(ApiError::field(NAME_FIELD, "the AdvancedCronJob has no template"));
    };
    let template = &cron_job.spec.template;
    let unreadable =
        |error: serde_json::Error| ApiError::Internal(format!("the template does not serialize: {error}"));
    let (labels, annotations, spec) = match kind {
        JobKind::Job => {
            let job = template.job_template.clone().unwrap_or_default();
            let meta = job.metadata.unwrap_or_default();
            (
                meta.labels,
                meta.annotations,
                serde_json::to_value(job.spec.unwrap_or_default()).map_err(unreadable)?,
            )
        }
        JobKind::BroadcastJob => {
            let job = template.broadcast_job_template.clone().unwrap_or_default();
            (
                job.metadata.labels,
                job.metadata.annotations,
                serde_json::to_value(&job.spec).map_err(unreadable)?,
            )
        }
        JobKind::ImageListPullJob => {
            let job = template.image_list_pull_job_template.clone().unwrap_or_default();
            (
                job.metadata.labels,
                job.metadata.annotations,
                serde_json::to_value(&job.spec).map_err(unreadable)?,
            )
        }
    };
    let mut annotations = annotations.unwrap_or_default();
    annotations.insert(MANUAL_INSTANTIATE_ANNOTATION.0.into(), MANUAL_INSTANTIATE_ANNOTATION.1.into());
    let mut object = DynamicObject::new(name, &run_resource(kind));
    object.metadata.namespace = cron_job.namespace();
    object.metadata.labels = labels.filter(|labels| !labels.is_empty());
    object.metadata.annotations = Some(annotations);
    object.metadata.owner_references = Some(vec![OwnerReference {
        api_version: AdvancedCronJob::api_version(&()).into_owned(),
        kind: AdvancedCronJob::kind(&()).into_owned(),
        name: cron_job.name_any(),
        uid: cron_job.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    object.data = json!({ "spec": spec });
    Ok(RunObject { kind, object })
}

/// The run as the API answers it, from the created object.
fn run_view(cron_job: &str, kind: JobKind, object: &DynamicObject) -> CronJobRun {
    CronJobRun {
        namespace: object.namespace().unwrap_or_default(),
        advanced_cron_job: cron_job.to_string(),
        kind,
        api_version: kind.api_version().into(),
        name: object.name_any(),
        uid: object.uid().unwrap_or_default(),
        created_at: object.metadata.creation_timestamp.as_ref().and_then(|t| to_chrono(&t.0)),
        labels: object.metadata.labels.clone().unwrap_or_default(),
        annotations: object.metadata.annotations.clone().unwrap_or_default(),
    }
}

/// Whether `object` is a run of the AdvancedCronJob with uid `owner` (controlled by it).
fn is_run_of(object: &DynamicObject, owner: &str) -> bool {
    object.owner_references().iter().any(|o| o.uid == owner && o.controller == Some(true))
}

/// Checks the name of an object in the path: a DNS-1123 subdomain that is also a label value
/// (job names are pod label values).
fn check_job_name(kind: &str, name: &str) -> Result<(), ApiError> {
    let mut problems = kruise_crds::validation::meta::dns1123_subdomain_problems(name);
    if problems.is_empty() {
        problems = kruise_crds::validation::meta::label_value_problems(name);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ApiError::field(
            NAME_FIELD,
            format!("{name:?} is not a valid {kind} name: {}", problems.join("; ")),
        ))
    }
}

/// A Kubernetes refusal of a run's create, for the client: the webhook's or the API server's
/// reason as a 422 on `name` (the AdvancedCronJob whose template it is), 404 when the
/// namespace is gone, 502 otherwise.
fn create_error(kind: JobKind, error: kube::Error) -> ApiError {
    match &error {
        kube::Error::Api(status) if status.code == 404 => ApiError::NotFound(status.message.clone()),
        kube::Error::Api(status) if matches!(status.code, 400 | 403 | 422) => ApiError::field(
            NAME_FIELD,
            format!("the {} was refused by Kubernetes: {}", kind.as_str(), status.message),
        ),
        _ => ApiError::Kubernetes(error.to_string()),
    }
}

/// The state of one container, for a job's results.
fn container_result(status: &ContainerStatus) -> JobContainerResult {
    let state = status.state.clone().unwrap_or_default();
    let last = status.last_state.as_ref().and_then(|s| s.terminated.as_ref());
    let time =
        |t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>| t.and_then(|t| to_chrono(&t.0));
    let text = |s: Option<&String>| s.filter(|s| !s.is_empty()).cloned();
    let mut result = JobContainerResult {
        name: status.name.clone(),
        state: "unknown".into(),
        restart_count: status.restart_count,
        exit_code: None,
        reason: None,
        message: None,
        started_at: None,
        finished_at: None,
    };
    if let Some(terminated) = &state.terminated {
        result.state = "terminated".into();
        result.exit_code = Some(terminated.exit_code);
        result.reason = text(terminated.reason.as_ref());
        result.message = text(terminated.message.as_ref());
        result.started_at = time(terminated.started_at.as_ref());
        result.finished_at = time(terminated.finished_at.as_ref());
        return result;
    }
    if let Some(running) = &state.running {
        result.state = "running".into();
        result.started_at = time(running.started_at.as_ref());
    } else if let Some(waiting) = &state.waiting {
        result.state = "waiting".into();
        result.reason = text(waiting.reason.as_ref());
        result.message = text(waiting.message.as_ref());
    }
    // A container restarted after it ended: how its last run ended is the result so far.
    if let Some(last) = last {
        result.exit_code = Some(last.exit_code);
        if result.reason.is_none() {
            result.reason = text(last.reason.as_ref());
            result.message = text(last.message.as_ref());
        }
        result.finished_at = time(last.finished_at.as_ref());
    }
    result
}

/// One pod of a BroadcastJob as its result on its node. Containers the kubelet has not
/// reported yet are `unknown`; init containers come first.
fn node_result(pod: &Pod) -> JobNodeResult {
    let spec = pod.spec.clone().unwrap_or_default();
    let status = pod.status.clone().unwrap_or_default();
    let phase = status.phase.clone().filter(|p| !p.is_empty()).unwrap_or_else(|| "Pending".into());
    let reported: Vec<&ContainerStatus> = status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(status.container_statuses.iter().flatten())
        .collect();
    let declared =
        spec.init_containers.iter().flatten().chain(spec.containers.iter()).map(|c| c.name.clone());
    let mut containers: Vec<JobContainerResult> = Vec::new();
    for name in declared {
        containers.push(match reported.iter().find(|s| s.name == name) {
            Some(status) => container_result(status),
            None => JobContainerResult {
                name,
                state: "unknown".into(),
                restart_count: 0,
                exit_code: None,
                reason: None,
                message: None,
                started_at: None,
                finished_at: None,
            },
        });
    }
    let finished = matches!(phase.as_str(), "Succeeded" | "Failed");
    JobNodeResult {
        node: spec.node_name.filter(|n| !n.is_empty()),
        pod: pod.name_any(),
        restart_count: containers.iter().map(|c| c.restart_count).sum(),
        reason: status.reason.filter(|r| !r.is_empty()),
        message: status.message.filter(|m| !m.is_empty()),
        start_time: status.start_time.as_ref().and_then(|t| to_chrono(&t.0)),
        finish_time: if finished { containers.iter().filter_map(|c| c.finished_at).max() } else { None },
        phase,
        containers,
    }
}

/// A BroadcastJob's status and the results of the pods it owns (`pods` may hold others: only
/// those whose owner reference carries the job's uid count), by node then pod name, pods not
/// bound to a node last.
fn broadcastjob_view(job: &BroadcastJob, pods: &[Pod]) -> BroadcastJobNodes {
    let uid = job.uid().unwrap_or_default();
    let mut nodes: Vec<JobNodeResult> = pods
        .iter()
        .filter(|pod| pod.owner_references().iter().any(|o| o.uid == uid))
        .map(node_result)
        .collect();
    nodes.sort_by(|a, b| (a.node.is_none(), &a.node, &a.pod).cmp(&(b.node.is_none(), &b.node, &b.pod)));
    let status = job.status.clone().unwrap_or_default();
    let phase = (!status.phase.is_unset()).then(|| status.phase.as_str().to_string());
    BroadcastJobNodes {
        namespace: job.namespace().unwrap_or_default(),
        name: job.name_any(),
        uid,
        phase,
        desired: status.desired,
        active: status.active,
        succeeded: status.succeeded,
        failed: status.failed,
        start_time: status.start_time.as_ref().and_then(|t| to_chrono(&t.0)),
        completion_time: status.completion_time.as_ref().and_then(|t| to_chrono(&t.0)),
        conditions: status
            .conditions
            .iter()
            .map(|c| WorkloadCondition {
                type_: c.type_.as_str().to_string(),
                status: c.status.clone(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                last_transition_time: c.last_transition_time.as_ref().and_then(|t| to_chrono(&t.0)),
            })
            .collect(),
        nodes,
    }
}

impl Operations {
    /// `POST /v1/namespaces/{ns}/advancedcronjobs/{name}/runs`: creates a run of the
    /// AdvancedCronJob now (see the module). Audited before the run is created; 404 when the
    /// AdvancedCronJob does not exist, 422 (on `name`) when its template cannot be run.
    pub async fn run_advancedcronjob(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
        idempotency_key: Option<&str>,
        body: Input<CronJobRunRequest>,
    ) -> Result<CreatedRun, ApiError> {
        let mut draft =
            self.draft(ctx, "advancedcronjob.run", Some(namespace), format!("AdvancedCronJob/{name}"));
        let principal = self.authorize(ctx, &draft, Action::Job, Some(namespace)).await?;
        if let Err(error) = check_namespace(namespace).and_then(|()| check_job_name("AdvancedCronJob", name))
        {
            return self.refuse(ctx, &draft, error).await;
        }
        let request = match body {
            Input::Json(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => CronJobRunRequest::default(),
            body => match body.parse() {
                Ok(request) => request,
                Err(error) => return self.refuse(ctx, &draft, error).await,
            },
        };
        draft.with_body(&sanitize(&serde_json::to_value(&request).unwrap_or(Value::Null)));
        let mut errors = Vec::new();
        check_idempotency_key(idempotency_key, &mut errors);
        if !errors.is_empty() {
            return self.refuse(ctx, &draft, ApiError::Validation(errors)).await;
        }
        let cron_job = match self.advancedcronjob(namespace, name).await {
            Ok(cron_job) => cron_job,
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        let suffix = match idempotency_key {
            Some(key) => keyed_suffix(&principal.name, namespace, name, key),
            None => random_suffix(),
        };
        let run = match manual_run(&cron_job, &run_name(name, &suffix)) {
            Ok(run) => run,
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };

        // Recorded: now the run is created.
        self.record_intent(ctx, &draft).await?;
        let owner = cron_job.uid().unwrap_or_default();
        let result = self.create_run(namespace, name, &owner, run, idempotency_key.is_some()).await;
        let message = result.as_ref().ok().map(|created| {
            let what = format!("{}/{}", created.run.kind.as_str(), created.run.name);
            if created.replayed {
                format!("idempotent retry: answered with {what}")
            } else {
                format!("created {what}")
            }
        });
        if let Ok(created) = &result {
            tracing::info!(
                namespace,
                advanced_cron_job = name,
                kind = created.run.kind.as_str(),
                run = %created.run.name,
                replayed = created.replayed,
                actor = %principal.name,
                "manual run of an AdvancedCronJob"
            );
        }
        self.record_outcome_with(ctx, &draft, result, 201, message).await
    }

    /// The AdvancedCronJob `name`, read at its storage version; 404 when it does not exist,
    /// 422 on `name` when it cannot be read as one.
    async fn advancedcronjob(&self, namespace: &str, name: &str) -> Result<AdvancedCronJob, ApiError> {
        let resource = ApiResource::erase::<AdvancedCronJob>(&());
        let api: Api<DynamicObject> = Api::namespaced_with(self.client().clone(), namespace, &resource);
        let object =
            api.get_opt(name).await.map_err(|e| ApiError::Kubernetes(e.to_string()))?.ok_or_else(|| {
                ApiError::NotFound(format!("AdvancedCronJob {name:?} not found in namespace {namespace:?}"))
            })?;
        let value = serde_json::to_value(&object).map_err(|e| ApiError::Internal(e.to_string()))?;
        serde_json::from_value(value).map_err(|error| {
            ApiError::field(NAME_FIELD, format!("AdvancedCronJob {name:?} cannot be read: {error}"))
        })
    }

    /// Creates a run. A taken name is retried with another random suffix; with an
    /// idempotency key, the name is the key's, and an object of that name that is a run of the
    /// same AdvancedCronJob is the answer (`replayed`).
    async fn create_run(
        &self,
        namespace: &str,
        cron_job: &str,
        owner: &str,
        mut run: RunObject,
        keyed: bool,
    ) -> Result<CreatedRun, ApiError> {
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client().clone(), namespace, &run_resource(run.kind));
        let mut attempt = 1;
        loop {
            match api.create(&PostParams::default(), &run.object).await {
                Ok(created) => {
                    return Ok(CreatedRun { run: run_view(cron_job, run.kind, &created), replayed: false });
                }
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    let name = run.object.name_any();
                    if keyed {
                        return match api
                            .get_opt(&name)
                            .await
                            .map_err(|e| ApiError::Kubernetes(e.to_string()))?
                        {
                            Some(existing) if is_run_of(&existing, owner) => Ok(CreatedRun {
                                run: run_view(cron_job, run.kind, &existing),
                                replayed: true,
                            }),
                            _ => Err(ApiError::Conflict(format!(
                                "a {} named {name:?} exists and is not a run of AdvancedCronJob {cron_job:?}",
                                run.kind.as_str()
                            ))),
                        };
                    }
                    if attempt >= NAME_ATTEMPTS {
                        return Err(ApiError::Conflict(format!(
                            "{NAME_ATTEMPTS} generated names for a run of AdvancedCronJob {cron_job:?} were all taken"
                        )));
                    }
                    attempt += 1;
                    let fresh = run_name(cron_job, &random_suffix());
                    run.object.metadata.name = Some(fresh);
                }
                Err(error) => return Err(create_error(run.kind, error)),
            }
        }
    }

    /// `GET /v1/namespaces/{ns}/broadcastjobs/{name}/nodes`: the BroadcastJob's status and,
    /// per pod, its node and result. Needs `job-read` (or `job`); 404 when the job does not
    /// exist.
    pub async fn broadcastjob_nodes(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        name: &str,
    ) -> Result<BroadcastJobNodes, ApiError> {
        let draft = self.draft(ctx, "broadcastjob.nodes", Some(namespace), format!("BroadcastJob/{name}"));
        self.authorize(ctx, &draft, Action::JobRead, Some(namespace)).await?;
        check_namespace(namespace)?;
        check_job_name("BroadcastJob", name)?;
        let jobs: Api<BroadcastJob> = Api::namespaced(self.client().clone(), namespace);
        let job =
            jobs.get_opt(name).await.map_err(|e| ApiError::Kubernetes(e.to_string()))?.ok_or_else(|| {
                ApiError::NotFound(format!("BroadcastJob {name:?} not found in namespace {namespace:?}"))
            })?;
        let pods: Api<Pod> = Api::namespaced(self.client().clone(), namespace);
        let selector = format!("{}={name}", kruise_crds::validation::BROADCASTJOB_NAME_LABEL);
        let pods = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| ApiError::Kubernetes(e.to_string()))?
            .items;
        Ok(broadcastjob_view(&job, &pods))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    fn cron_job(template: Value) -> AdvancedCronJob {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "AdvancedCronJob",
            "metadata": {"name": "nightly", "namespace": "batch", "uid": "acj-uid"},
            "spec": {"schedule": "0 2 * * *", "template": template}
        }))
        .unwrap()
    }

    fn pod_template() -> Value {
        json!({"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}})
    }

    #[test]
    fn each_template_kind_becomes_its_object() {
        let cases = [
            (
                "job template",
                json!({"jobTemplate": {"metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
                                       "spec": {"backoffLimit": 2, "template": pod_template()}}}),
                JobKind::Job,
                "batch/v1",
                "/spec/backoffLimit",
                json!(2),
            ),
            (
                "broadcast job template",
                json!({"broadcastJobTemplate": {"metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
                                                "spec": {"parallelism": 2, "template": pod_template()}}}),
                JobKind::BroadcastJob,
                "apps.kruise.io/v1beta1",
                "/spec/parallelism",
                json!(2),
            ),
            (
                "image list pull job template",
                json!({"imageListPullJobTemplate": {"metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
                                                    "spec": {"images": ["nginx:1.27"], "completionPolicy": {"type": "Always"}}}}),
                JobKind::ImageListPullJob,
                "apps.kruise.io/v1beta1",
                "/spec/images/0",
                json!("nginx:1.27"),
            ),
        ];
        for (case, template, kind, api_version, pointer, value) in cases {
            let mut acj = cron_job(template);
            if kind == JobKind::ImageListPullJob {
                acj.spec.concurrency_policy = kruise_crds::apps::v1beta1::ConcurrencyPolicy::Replace;
            }
            let run = manual_run(&acj, "nightly-manual-abcde").unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_eq!(run.kind, kind, "{case}");
            let object = serde_json::to_value(&run.object).unwrap();
            assert_eq!(object["apiVersion"], api_version, "{case}");
            assert_eq!(object["kind"], kind.as_str(), "{case}");
            assert_eq!(object["metadata"]["name"], "nightly-manual-abcde", "{case}");
            assert_eq!(object["metadata"]["namespace"], "batch", "{case}");
            assert_eq!(object["metadata"]["labels"], json!({"team": "a"}), "{case}");
            assert_eq!(
                object["metadata"]["annotations"],
                json!({"note": "x", "cronjob.kubernetes.io/instantiate": "manual"}),
                "{case}"
            );
            assert_eq!(
                object["metadata"]["ownerReferences"],
                json!([{"apiVersion": "apps.kruise.io/v1beta1", "kind": "AdvancedCronJob", "name": "nightly",
                        "uid": "acj-uid", "controller": true, "blockOwnerDeletion": true}]),
                "{case}"
            );
            assert_eq!(object.pointer(pointer), Some(&value), "{case}: {object}");
            assert!(
                object["metadata"]["annotations"].get("apps.kruise.io/scheduled-at").is_none(),
                "{case}: a manual run has no scheduled time"
            );
        }
    }

    #[test]
    fn unusable_templates_are_refused_on_name() {
        let cases = [
            ("no template", json!({}), "must have one template"),
            (
                "two templates",
                json!({"jobTemplate": {"spec": {"template": pod_template()}},
                       "broadcastJobTemplate": {"spec": {"template": pod_template()}}}),
                "only one template",
            ),
            (
                "invalid broadcast job template",
                json!({"broadcastJobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}}),
                "spec.template.broadcastJobTemplate.spec",
            ),
        ];
        for (case, template, expected) in cases {
            let error = manual_run(&cron_job(template), "nightly-manual-abcde").unwrap_err();
            let ApiError::Validation(fields) = &error else { panic!("{case}: {error:?}") };
            assert!(fields.iter().all(|f| f.field == "name"), "{case}: {fields:?}");
            assert!(fields.iter().any(|f| f.message.contains(expected)), "{case}: {fields:?}");
        }
    }

    #[test]
    fn a_bad_schedule_does_not_stop_a_manual_run() {
        let mut acj = cron_job(json!({"broadcastJobTemplate": {"spec": {"template": pod_template()}}}));
        acj.spec.schedule = "not a schedule".into();
        assert!(manual_run(&acj, "n").is_ok());
    }

    #[test]
    fn run_names_fit_a_label_value() {
        assert_eq!(run_name("nightly", "abcde"), "nightly-manual-abcde");
        let long = "a".repeat(52);
        let name = run_name(&long, "abcde");
        assert_eq!(name.len(), 63, "{name}");
        assert!(name.ends_with("-manual-abcde"));
        let dashed = format!("{}-b", "a".repeat(49));
        assert_eq!(run_name(&dashed, "abcde"), format!("{}-manual-abcde", "a".repeat(49)), "no `--`");
        for name in [name, run_name("nightly", &random_suffix())] {
            assert!(kruise_crds::validation::meta::label_value_problems(&name).is_empty(), "{name}");
            assert!(kruise_crds::validation::meta::dns1123_subdomain_problems(&name).is_empty(), "{name}");
        }
    }

    #[test]
    fn keyed_suffixes_are_stable_per_caller_and_key() {
        let a = keyed_suffix("ci", "batch", "nightly", "release-42");
        assert_eq!(a, keyed_suffix("ci", "batch", "nightly", "release-42"));
        assert_eq!(a.len(), SUFFIX_LEN);
        assert!(a.bytes().all(|b| SUFFIX_ALPHABET.contains(&b)));
        assert_ne!(a, keyed_suffix("ci", "batch", "nightly", "release-43"));
        assert_ne!(a, keyed_suffix("other", "batch", "nightly", "release-42"));
    }

    fn pod(name: &str, node: Option<&str>, owner: &str, status: Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "batch",
                         "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "BroadcastJob",
                                              "name": "bj", "uid": owner, "controller": true}]},
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "busybox"}]},
            "status": status
        }))
        .unwrap()
    }

    #[test]
    fn node_results_come_from_the_job_pods() {
        let job: BroadcastJob = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "BroadcastJob",
            "metadata": {"name": "bj", "namespace": "batch", "uid": "bj-uid"},
            "spec": {"template": pod_template()},
            "status": {"phase": "running", "desired": 3, "active": 1, "succeeded": 1, "failed": 1,
                       "startTime": "2026-01-01T00:00:00Z",
                       "conditions": [{"type": "Failed", "status": "False", "reason": "R"}]}
        }))
        .unwrap();
        let pods = vec![
            pod(
                "bj-c",
                Some("node-c"),
                "bj-uid",
                json!({"phase": "Running", "startTime": "2026-01-01T00:00:01Z",
                "containerStatuses": [{"name": "main", "image": "busybox", "imageID": "", "ready": false, "restartCount": 2,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 3, "reason": "Error", "finishedAt": "2026-01-01T00:00:09Z"}}}]}),
            ),
            pod(
                "bj-a",
                Some("node-a"),
                "bj-uid",
                json!({"phase": "Succeeded", "startTime": "2026-01-01T00:00:01Z",
                "containerStatuses": [{"name": "main", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0,
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                        "startedAt": "2026-01-01T00:00:02Z", "finishedAt": "2026-01-01T00:00:05Z"}}}]}),
            ),
            pod("bj-pending", None, "bj-uid", json!({"phase": "Pending"})),
            pod("other", Some("node-a"), "someone-else", json!({"phase": "Running"})),
        ];
        let view = broadcastjob_view(&job, &pods);
        assert_eq!(view.phase.as_deref(), Some("running"));
        assert_eq!((view.desired, view.active, view.succeeded, view.failed), (3, 1, 1, 1));
        assert_eq!(view.conditions[0].type_, "Failed");
        let names: Vec<&str> = view.nodes.iter().map(|n| n.pod.as_str()).collect();
        assert_eq!(names, ["bj-a", "bj-c", "bj-pending"], "by node, unbound last, others' pods left out");
        let done = &view.nodes[0];
        assert_eq!((done.node.as_deref(), done.phase.as_str()), (Some("node-a"), "Succeeded"));
        assert_eq!(done.containers[0].state, "terminated");
        assert_eq!(done.containers[0].exit_code, Some(0));
        assert_eq!(done.containers[0].reason.as_deref(), Some("Completed"));
        assert_eq!(done.finish_time.map(|t| t.to_rfc3339()).as_deref(), Some("2026-01-01T00:00:05+00:00"));
        let crashing = &view.nodes[1];
        assert_eq!(crashing.restart_count, 2);
        assert_eq!(crashing.finish_time, None, "still running");
        assert_eq!(crashing.containers[0].state, "waiting");
        assert_eq!(crashing.containers[0].exit_code, Some(3), "the last run's exit code");
        assert_eq!(crashing.containers[0].reason.as_deref(), Some("CrashLoopBackOff"));
        let pending = &view.nodes[2];
        assert_eq!((pending.node.as_ref(), pending.phase.as_str()), (None, "Pending"));
        assert_eq!(pending.containers[0].state, "unknown");
    }

    #[test]
    fn a_job_without_status_has_no_phase() {
        let job: BroadcastJob = serde_json::from_value(json!({
            "metadata": {"name": "bj", "namespace": "batch", "uid": "u"}, "spec": {"template": pod_template()}
        }))
        .unwrap();
        let view = broadcastjob_view(&job, &[]);
        assert_eq!(view.phase, None);
        assert_eq!((view.desired, view.active, view.succeeded, view.failed), (0, 0, 0, 0));
        assert!(view.nodes.is_empty());
    }
}
