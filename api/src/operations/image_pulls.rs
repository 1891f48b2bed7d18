//! Image pre-pulls: one ImagePullJob per image (upstream's unit of pre-pulling; an
//! ImageListPullJob would only fan out into the same jobs), on the nodes a node selector picks
//! or on the nodes of a workload's pods (the job's `podSelector` is the workload's selector, as
//! upstream's pre-pull for a workload does). The API records the request, creates the jobs, and
//! reports per image the job's counts and per node the NodeImage's pull status; the watcher
//! keeps the last observed results in the store, so a finished pull reads the same after its
//! jobs are gone.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::{Node, Pod, Secret},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, ObjectMeta},
        util::intstr::IntOrString,
    },
};
use kruise_crds::{
    apps::v1beta1::{
        CompletionPolicy, CompletionPolicyType, ImagePullJob, ImagePullJobNodeSelector, ImagePullJobSpec,
        ImagePullJobTemplate, ImagePullPhase, NodeImage, PullPolicy,
    },
    field::FieldPath,
    validation::{parse_image_reference, validate_image_list},
};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams, PostParams},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{
    Input, Operations, RequestContext, WATCHER_ACTOR, check_namespace,
    rollouts::canonical_json,
    sanitize,
    tasks::{Change, Recorded, check_idempotency_key, check_workload_ref, pod_is_active},
};
use crate::{
    auth::Action,
    error::{ApiError, FieldError},
    model::{ImagePull, ImagePullImage, ImagePullRequest, NodePullResult},
    store::{NewTask, TaskKind, TaskRow, TaskState},
};

/// Label on every ImagePullJob of a pull, with the pull's id.
pub const IMAGE_PULL_LABEL: &str = "kruise.io/image-pull-id";

/// How long a pull may stay Pending before the watcher takes it as interrupted (the API
/// stopped between recording it and creating its jobs).
const INTERRUPTED_AFTER: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

/// A created (or replayed) image pull.
#[derive(Clone, Debug)]
pub struct CreatedImagePull {
    /// The pull.
    pub image_pull: ImagePull,
    /// True when an earlier request with the same idempotency key and body created it.
    pub replayed: bool,
}

/// What the store keeps to follow a pull: the job of each image.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct PullPlan {
    jobs: Vec<PlannedJob>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct PlannedJob {
    image: String,
    job: String,
}

/// The checks that need no cluster: images, the node choice, numbers, secret names.
fn static_checks(request: &ImagePullRequest, errors: &mut Vec<FieldError>) {
    for error in validate_image_list(&request.images, &FieldPath::root("images")) {
        errors.push(FieldError::new(error.path.as_str(), error.message()));
    }
    match (&request.node_selector, &request.workload) {
        (None, None) => errors.push(FieldError::new(
            "nodeSelector",
            "one of nodeSelector (nodes by name or labels; {} for every node) or workload is required",
        )),
        (Some(_), Some(_)) => {
            errors.push(FieldError::new("workload", "nodeSelector and workload may not both be set"))
        }
        (Some(selector), None) => {
            if !selector.names.is_empty() && !selector.match_labels.is_empty() {
                errors.push(FieldError::new("nodeSelector", "names and matchLabels may not both be set"));
            }
            let mut seen = BTreeSet::new();
            for (index, name) in selector.names.iter().enumerate() {
                let field = format!("nodeSelector.names[{index}]");
                let problems = kruise_crds::validation::meta::dns1123_subdomain_problems(name);
                if !problems.is_empty() {
                    errors.push(FieldError::new(field, problems.join("; ")));
                } else if !seen.insert(name) {
                    errors.push(FieldError::new(field, format!("{name:?} is listed twice")));
                }
            }
            for (key, value) in &selector.match_labels {
                let field = format!("nodeSelector.matchLabels.{key}");
                let mut problems = kruise_crds::validation::meta::qualified_name_problems(key);
                problems.extend(kruise_crds::validation::meta::label_value_problems(value));
                if !problems.is_empty() {
                    errors.push(FieldError::new(field, problems.join("; ")));
                }
            }
        }
        (None, Some(workload)) => check_workload_ref(workload, errors),
    }
    if let Some(parallelism) = request.parallelism
        && parallelism < 1
    {
        errors.push(FieldError::new("parallelism", format!("{parallelism} must be at least 1")));
    }
    if let Some(timeout) = request.timeout_seconds
        && timeout < 1
    {
        errors.push(FieldError::new("timeoutSeconds", format!("{timeout} must be at least 1")));
    }
    if let Some(backoff) = request.backoff_limit
        && backoff < 0
    {
        errors.push(FieldError::new("backoffLimit", format!("{backoff} must not be negative")));
    }
    for (index, name) in request.pull_secrets.iter().enumerate() {
        let problems = kruise_crds::validation::meta::dns1123_subdomain_problems(name);
        if !problems.is_empty() {
            errors.push(FieldError::new(format!("pullSecrets[{index}]"), problems.join("; ")));
        }
    }
}

/// The ImagePullJob that pulls `image` for pull `id`.
fn job_for(
    id: &str,
    index: usize,
    namespace: &str,
    image: &str,
    request: &ImagePullRequest,
    pod_selector: Option<&LabelSelector>,
) -> ImagePullJob {
    let selector = request.node_selector.as_ref().map(|selector| ImagePullJobNodeSelector {
        names: selector.names.clone(),
        label_selector: LabelSelector {
            match_labels: (!selector.match_labels.is_empty()).then(|| selector.match_labels.clone()),
            match_expressions: None,
        },
    });
    let mut job = ImagePullJob::new(
        &job_name(id, index),
        ImagePullJobSpec {
            image: image.to_string(),
            template: ImagePullJobTemplate {
                pull_secrets: request.pull_secrets.clone(),
                selector,
                pod_selector: pod_selector.cloned(),
                parallelism: request.parallelism.map(IntOrString::Int),
                pull_policy: Some(PullPolicy {
                    timeout_seconds: request.timeout_seconds,
                    backoff_limit: request.backoff_limit,
                }),
                completion_policy: CompletionPolicy {
                    type_: CompletionPolicyType::Always,
                    ..Default::default()
                },
                ..Default::default()
            },
        },
    );
    job.metadata = ObjectMeta {
        name: Some(job_name(id, index)),
        namespace: Some(namespace.to_string()),
        labels: Some(BTreeMap::from([(IMAGE_PULL_LABEL.to_string(), id.to_string())])),
        ..Default::default()
    };
    job
}

/// The deterministic name of a pull's job (so retries and replicas never create it twice).
fn job_name(id: &str, index: usize) -> String {
    format!("imagepull-{id}-{index}")
}

impl Operations {
    fn image_pull_jobs(&self, namespace: &str) -> Api<ImagePullJob> {
        Api::namespaced(self.client().clone(), namespace)
    }

    /// `POST /v1/namespaces/{ns}/image-pulls`.
    pub async fn create_image_pull(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        idempotency_key: Option<&str>,
        body: Input<ImagePullRequest>,
    ) -> Result<CreatedImagePull, ApiError> {
        let mut draft = self.draft(
            ctx,
            "image-pull.create",
            Some(namespace),
            format!("namespaces/{namespace}/image-pulls"),
        );
        let principal = self.authorize(ctx, &draft, Action::ImagePull, Some(namespace)).await?;
        if let Err(error) = check_namespace(namespace) {
            return self.refuse(ctx, &draft, error).await;
        }
        let request = match body.parse() {
            Ok(request) => request,
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        let body_value = serde_json::to_value(&request).unwrap_or(Value::Null);
        draft.with_body(&sanitize(&body_value));
        draft.target = match &request.workload {
            Some(workload) => format!("{}/{}", workload.kind.as_str(), workload.name),
            None => "nodes".into(),
        };
        let mut errors = Vec::new();
        check_idempotency_key(idempotency_key, &mut errors);
        static_checks(&request, &mut errors);
        if !errors.is_empty() {
            return self.refuse(ctx, &draft, ApiError::Validation(errors)).await;
        }
        let body_hash = hex::encode(Sha256::digest(canonical_json(&body_value).as_bytes()));
        if let Some(key) = idempotency_key {
            match self
                .store()
                .task_by_idempotency_key(TaskKind::ImagePull, &principal.name, namespace, key)
                .await
            {
                Ok(Some(existing)) => {
                    self.replay_task(ctx, &mut draft, &existing, &body_hash).await?;
                    let image_pull = self.image_pull_view(&existing, true).await?;
                    return Ok(CreatedImagePull { image_pull, replayed: true });
                }
                Ok(None) => {}
                Err(error) => return self.refuse(ctx, &draft, error.into()).await,
            }
        }

        // What the request names must exist.
        let pod_selector = match &request.workload {
            None => None,
            Some(reference) => match self.workload(namespace, reference).await {
                Ok(Some(workload)) => Some(workload.selector),
                Ok(None) => {
                    let error = ApiError::field(
                        "workload.name",
                        format!(
                            "{} {:?} not found in namespace {namespace:?}",
                            reference.kind.as_str(),
                            reference.name
                        ),
                    );
                    return self.refuse(ctx, &draft, error).await;
                }
                Err(error) => return self.refuse(ctx, &draft, error).await,
            },
        };
        if let Err(error) = self.check_pull_references(namespace, &request).await {
            return self.refuse(ctx, &draft, error).await;
        }

        let id = uuid::Uuid::new_v4().to_string();
        draft.task_id = Some(id.clone());
        let jobs: Vec<ImagePullJob> = request
            .images
            .iter()
            .enumerate()
            .map(|(index, image)| job_for(&id, index, namespace, image, &request, pod_selector.as_ref()))
            .collect();
        // The webhook's own rules, as a last check before anything is written.
        let mut problems = Vec::new();
        for job in &jobs {
            let mut defaulted = job.clone();
            kruise_crds::defaults::default_imagepulljob_v1beta1(&mut defaulted);
            for error in kruise_crds::validation::validate_imagepulljob_v1beta1(&defaulted, None) {
                problems.push(FieldError::new("body", error.to_string()));
            }
        }
        if !problems.is_empty() {
            return self.refuse(ctx, &draft, ApiError::Validation(problems)).await;
        }
        let plan = PullPlan {
            jobs: jobs
                .iter()
                .zip(&request.images)
                .map(|(job, image)| PlannedJob { image: image.clone(), job: job.name_any() })
                .collect(),
        };
        let task = NewTask {
            id: id.clone(),
            kind: TaskKind::ImagePull,
            namespace: namespace.into(),
            target: draft.target.clone(),
            spec: body_value.clone(),
            plan: serde_json::to_value(&plan).unwrap_or(Value::Null),
            created_by: principal.name.clone(),
            created_at: ctx.received,
            idempotency_key: idempotency_key.map(str::to_string),
            body_hash: Some(body_hash.clone()),
            reason: request.reason.clone(),
        };
        match self.record_task(ctx, &draft, &task).await? {
            Recorded::Created => {}
            Recorded::Raced(existing) => {
                self.replay_task(ctx, &mut draft, &existing, &body_hash).await?;
                let image_pull = self.image_pull_view(&existing, true).await?;
                return Ok(CreatedImagePull { image_pull, replayed: true });
            }
        }

        // Recorded: now the cluster is changed.
        let result = self.create_pull_jobs(&principal.name, &id, namespace, &jobs).await;
        let result = match result {
            Ok(()) => match self.store().task(&id).await {
                Ok(Some(row)) => self
                    .image_pull_view(&row, true)
                    .await
                    .map(|image_pull| CreatedImagePull { image_pull, replayed: false }),
                Ok(None) => Err(ApiError::Internal(format!("image pull {id} vanished from the store"))),
                Err(error) => Err(error.into()),
            },
            Err(error) => Err(error),
        };
        self.record_outcome(ctx, &draft, result, 202).await
    }

    /// Nodes named by name and pull secrets must exist (422 naming the entry otherwise).
    async fn check_pull_references(
        &self,
        namespace: &str,
        request: &ImagePullRequest,
    ) -> Result<(), ApiError> {
        let mut errors = Vec::new();
        if let Some(selector) = &request.node_selector {
            let nodes: Api<Node> = Api::all(self.client().clone());
            for (index, name) in selector.names.iter().enumerate() {
                if nodes.get_opt(name).await.map_err(|e| ApiError::Kubernetes(e.to_string()))?.is_none() {
                    errors.push(FieldError::new(
                        format!("nodeSelector.names[{index}]"),
                        format!("node {name:?} not found"),
                    ));
                }
            }
        }
        let secrets: Api<Secret> = Api::namespaced(self.client().clone(), namespace);
        for (index, name) in request.pull_secrets.iter().enumerate() {
            // Only existence is checked (metadata); the secret's data never leaves the cluster.
            if secrets
                .get_metadata_opt(name)
                .await
                .map_err(|e| ApiError::Kubernetes(e.to_string()))?
                .is_none()
            {
                errors.push(FieldError::new(
                    format!("pullSecrets[{index}]"),
                    format!("secret {name:?} not found in namespace {namespace:?}"),
                ));
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(ApiError::Validation(errors)) }
    }

    /// Creates the jobs (an existing one of the same name is this pull's, from a retry); on a
    /// failure deletes those created and records the pull as failed. Then Pending -> Running.
    async fn create_pull_jobs(
        &self,
        actor: &str,
        id: &str,
        namespace: &str,
        jobs: &[ImagePullJob],
    ) -> Result<(), ApiError> {
        let api = self.image_pull_jobs(namespace);
        let mut created = Vec::new();
        for job in jobs {
            match api.create(&PostParams::default(), job).await {
                Ok(_) => created.push(job.name_any()),
                Err(kube::Error::Api(status)) if status.code == 409 => created.push(job.name_any()),
                Err(error) => {
                    let error = ApiError::from(error);
                    for name in &created {
                        if let Err(delete_error) = api.delete(name, &DeleteParams::background()).await {
                            tracing::warn!(error = %delete_error, job = %name, "could not delete the ImagePullJob of a failed pull");
                        }
                    }
                    if let Ok(Some(row)) = self.store().task(id).await {
                        self.move_task(
                            &row,
                            Change::new(TaskState::Failed, actor, "CreateFailed", Some(error.to_string())),
                            None,
                            None,
                        )
                        .await;
                    }
                    return Err(error);
                }
            }
        }
        if let Ok(Some(row)) = self.store().task(id).await {
            let message = format!("created {} ImagePullJob(s)", created.len());
            self.move_task(
                &row,
                Change::new(TaskState::Running, actor, "Created", Some(message)),
                None,
                None,
            )
            .await;
        }
        tracing::info!(image_pull = %id, namespace, jobs = created.len(), "image pull started");
        Ok(())
    }

    /// `GET /v1/namespaces/{ns}/image-pulls/{id}`.
    pub async fn get_image_pull(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        id: &str,
    ) -> Result<ImagePull, ApiError> {
        let mut draft = self.draft(ctx, "image-pull.get", Some(namespace), format!("image-pulls/{id}"));
        draft.task_id = Some(id.to_string());
        self.authorize(ctx, &draft, Action::ImagePull, Some(namespace)).await?;
        let row = self.task_in(TaskKind::ImagePull, namespace, id).await?;
        self.image_pull_view(&row, true).await
    }

    /// The pull as clients see it: live from the jobs and NodeImages while it runs, as
    /// recorded once it ended.
    async fn image_pull_view(&self, row: &TaskRow, history: bool) -> Result<ImagePull, ApiError> {
        let request: ImagePullRequest = serde_json::from_value(row.spec.0.clone()).map_err(|e| {
            ApiError::Internal(format!("stored image pull {} does not read back: {e}", row.id))
        })?;
        let stored = stored_images(row);
        let (state, message, images) = if row.state().is_terminal() {
            (row.state(), row.message.clone(), stored)
        } else {
            let observed = self.observe_pull(row, &request, &stored).await?;
            let (state, message) = derive_state(row, &observed);
            (state, message.or_else(|| row.message.clone()), observed.images)
        };
        Ok(ImagePull {
            id: row.id.clone(),
            namespace: row.namespace.clone(),
            state,
            message,
            created_by: row.created_by.clone(),
            created_at: row.created_at,
            updated_at: row.updated_at,
            finished_at: row.finished_at,
            request,
            images,
            history: if history { self.task_history(&row.id).await? } else { Vec::new() },
        })
    }

    /// Per image, the job's counts and per-node results, read now from the cluster (an image
    /// whose job is gone keeps its last stored result).
    async fn observe_pull(
        &self,
        row: &TaskRow,
        request: &ImagePullRequest,
        stored: &[ImagePullImage],
    ) -> Result<Observed, ApiError> {
        let plan: PullPlan = serde_json::from_value(row.plan.0.clone()).unwrap_or_default();
        let jobs: BTreeMap<String, ImagePullJob> = self
            .image_pull_jobs(&row.namespace)
            .list(&ListParams::default().labels(&format!("{IMAGE_PULL_LABEL}={}", row.id)))
            .await
            .map_err(|e| ApiError::Kubernetes(e.to_string()))?
            .items
            .into_iter()
            .map(|job| (job.name_any(), job))
            .collect();
        let node_images: Vec<NodeImage> = if jobs.is_empty() {
            Vec::new()
        } else {
            Api::<NodeImage>::all(self.client().clone())
                .list(&ListParams::default())
                .await
                .map_err(|e| ApiError::Kubernetes(e.to_string()))?
                .items
        };
        let targets =
            if jobs.is_empty() { Vec::new() } else { self.pull_targets(row, request, &node_images).await? };
        let mut observed = Observed { images: Vec::with_capacity(plan.jobs.len()), missing: 0 };
        for planned in &plan.jobs {
            if let Some(job) = jobs.get(&planned.job) {
                observed.images.push(image_result(planned, job, &node_images, &targets));
                continue;
            }
            match stored.iter().find(|image| image.job == planned.job) {
                Some(last) => {
                    if !last.completed {
                        observed.missing += 1;
                    }
                    observed.images.push(last.clone());
                }
                None => {
                    let pending = row.state() == TaskState::Pending;
                    if !pending {
                        observed.missing += 1;
                    }
                    observed.images.push(ImagePullImage {
                        image: planned.image.clone(),
                        job: planned.job.clone(),
                        message: Some(if pending {
                            "the ImagePullJob is not created yet".into()
                        } else {
                            "the ImagePullJob no longer exists".into()
                        }),
                        ..Default::default()
                    });
                }
            }
        }
        Ok(observed)
    }

    /// The nodes a pull targets (what the controller selects): the nodes of the active pods the
    /// workload's selector matches, the named nodes, the nodes whose labels match, or all.
    async fn pull_targets(
        &self,
        row: &TaskRow,
        request: &ImagePullRequest,
        node_images: &[NodeImage],
    ) -> Result<Vec<String>, ApiError> {
        let all: Vec<String> = node_images.iter().map(|n| n.name_any()).collect();
        if let Some(reference) = &request.workload {
            let Some(workload) = self.workload(&row.namespace, reference).await? else {
                return Ok(Vec::new());
            };
            let pods: Api<Pod> = Api::namespaced(self.client().clone(), &row.namespace);
            let list = pods
                .list(
                    &ListParams::default()
                        .labels(&kruise_crds::selector::to_selector_string(&workload.selector)),
                )
                .await
                .map_err(|e| ApiError::Kubernetes(e.to_string()))?;
            let nodes: BTreeSet<String> = list
                .items
                .iter()
                .filter(|pod| pod_is_active(pod))
                .filter_map(|pod| pod.spec.as_ref().and_then(|s| s.node_name.clone()))
                .filter(|node| all.contains(node))
                .collect();
            return Ok(nodes.into_iter().collect());
        }
        let selector = request.node_selector.clone().unwrap_or_default();
        if !selector.names.is_empty() {
            return Ok(selector.names.iter().filter(|name| all.contains(name)).cloned().collect());
        }
        let selector = LabelSelector { match_labels: Some(selector.match_labels), match_expressions: None };
        Ok(node_images
            .iter()
            .filter(|n| {
                kruise_crds::selector::matches(
                    &selector,
                    n.metadata.labels.as_ref().unwrap_or(&BTreeMap::new()),
                )
            })
            .map(|n| n.name_any())
            .collect())
    }

    /// One watcher pass over a running pull: records the latest results and, once every job
    /// finished, the final state.
    pub(super) async fn reconcile_image_pull(&self, row: &TaskRow) -> Result<(), ApiError> {
        if row.state() == TaskState::Pending {
            if crate::store::now() - row.created_at < INTERRUPTED_AFTER {
                return Ok(()); // the request creating its jobs may still be running
            }
            let message = "the API stopped before the pull's ImagePullJobs were created; request it again";
            self.move_task(
                row,
                Change::new(TaskState::Failed, WATCHER_ACTOR, "Interrupted", Some(message.into())),
                None,
                None,
            )
            .await;
            return Ok(());
        }
        let request: ImagePullRequest = serde_json::from_value(row.spec.0.clone()).map_err(|e| {
            ApiError::Internal(format!("stored image pull {} does not read back: {e}", row.id))
        })?;
        let stored = stored_images(row);
        let observed = self.observe_pull(row, &request, &stored).await?;
        let (state, message) = derive_state(row, &observed);
        let result = serde_json::to_value(&observed.images).unwrap_or(Value::Null);
        if state.is_terminal() {
            let reason = if observed.missing > 0 { "JobDeleted" } else { "Completed" };
            self.move_task(row, Change::new(state, WATCHER_ACTOR, reason, message), None, Some(&result))
                .await;
        } else if observed.images != stored {
            self.store().update_task(&row.id, None, Some(&result)).await?;
        }
        Ok(())
    }
}

/// What a pull's jobs show now.
struct Observed {
    /// Per image.
    images: Vec<ImagePullImage>,
    /// Jobs of a running pull that are gone before they finished.
    missing: usize,
}

/// The results last stored for a pull.
fn stored_images(row: &TaskRow) -> Vec<ImagePullImage> {
    row.result.as_ref().and_then(|r| serde_json::from_value(r.0.clone()).ok()).unwrap_or_default()
}

/// A pull's state from its images: Succeeded when every job completed without a failed node,
/// Failed when every job completed and some node failed (or a job was deleted before it
/// finished), else Running.
fn derive_state(row: &TaskRow, observed: &Observed) -> (TaskState, Option<String>) {
    if row.state() == TaskState::Pending {
        return (TaskState::Pending, None);
    }
    let images = &observed.images;
    if observed.missing > 0 {
        return (
            TaskState::Failed,
            Some(format!("{} ImagePullJob(s) were deleted before they finished", observed.missing)),
        );
    }
    let desired: i32 = images.iter().map(|i| i.desired).sum();
    if !images.iter().all(|image| image.completed) {
        let done: i32 = images.iter().map(|i| i.succeeded + i.failed).sum();
        return (TaskState::Running, Some(format!("{done} of {desired} node pull(s) finished")));
    }
    let failed: BTreeSet<&str> =
        images.iter().flat_map(|i| i.failed_nodes.iter().map(String::as_str)).collect();
    let count: i32 = images.iter().map(|i| i.failed).sum();
    if failed.is_empty() && count == 0 {
        (TaskState::Succeeded, Some(format!("{desired} node pull(s) succeeded")))
    } else {
        let nodes = failed.into_iter().collect::<Vec<_>>().join(", ");
        (TaskState::Failed, Some(format!("{count} of {desired} node pull(s) failed (nodes: {nodes})")))
    }
}

/// One image's result from its job and the NodeImages.
fn image_result(
    planned: &PlannedJob,
    job: &ImagePullJob,
    node_images: &[NodeImage],
    targets: &[String],
) -> ImagePullImage {
    let status = job.status.clone().unwrap_or_default();
    let uid = job.uid();
    let (name, tag) = match parse_image_reference(&job.spec.image) {
        Ok(reference) => (reference.familiar_name(), reference.pull_tag()),
        Err(_) => (job.spec.image.clone(), "latest".into()),
    };
    let mut nodes: BTreeMap<String, NodePullResult> = targets
        .iter()
        .map(|node| {
            (
                node.clone(),
                NodePullResult { node: node.clone(), phase: "Waiting".into(), progress: None, message: None },
            )
        })
        .collect();
    for node_image in node_images {
        let node = node_image.name_any();
        let Some(version) = node_image.spec.images.get(&name).and_then(|image| {
            image
                .tags
                .iter()
                .find(|t| t.tag == tag && t.owner_references.iter().any(|o| o.uid.is_some() && o.uid == uid))
                .map(|t| t.version)
        }) else {
            continue;
        };
        let tag_status = node_image
            .status
            .as_ref()
            .and_then(|s| s.image_statuses.get(&name))
            .and_then(|s| s.tags.iter().find(|t| t.tag == tag && t.version == version));
        let result = match tag_status {
            Some(t) => NodePullResult {
                node: node.clone(),
                phase: match &t.phase {
                    ImagePullPhase::Succeeded => "Succeeded".into(),
                    ImagePullPhase::Failed => "Failed".into(),
                    ImagePullPhase::Waiting => "Waiting".into(),
                    _ => "Pulling".into(),
                },
                progress: Some(t.progress),
                message: Some(t.message.clone()).filter(|m| !m.is_empty()),
            },
            None => {
                NodePullResult { node: node.clone(), phase: "Pulling".into(), progress: None, message: None }
            }
        };
        nodes.insert(node, result);
    }
    for failed in &status.failed_nodes {
        let entry = nodes.entry(failed.clone()).or_insert_with(|| NodePullResult {
            node: failed.clone(),
            phase: "Failed".into(),
            progress: None,
            message: None,
        });
        if entry.phase != "Failed" {
            entry.phase = "Failed".into();
            entry.message.get_or_insert_with(|| status.message.clone());
        }
    }
    ImagePullImage {
        image: planned.image.clone(),
        job: planned.job.clone(),
        desired: status.desired,
        active: status.active,
        succeeded: status.succeeded,
        failed: status.failed,
        failed_nodes: status.failed_nodes.clone(),
        completed: status.completion_time.is_some(),
        message: Some(status.message.clone()).filter(|m| !m.is_empty()),
        nodes: nodes.into_values().collect(),
    }
}
