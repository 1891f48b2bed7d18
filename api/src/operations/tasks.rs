//! What image pulls and recreates share: resolving the workload a request names (its pod
//! selector and pods), recording a task before the cluster is changed, answering idempotent
//! retries, reading a task back with its history, recording its state transitions, and the pass
//! of the watcher that carries every running task on ([`reconcile_tasks`]).

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::LabelSelector};
use kube::{
    Api, ResourceExt,
    api::{ApiResource, DynamicObject, ListParams},
};
use serde_json::Value;

use super::{Draft, Operations, RequestContext, Transport, WATCHER_ACTOR};
use crate::{
    error::{ApiError, FieldError},
    model::{TaskTransition, WorkloadKind, WorkloadRef},
    store::{
        NewAuditRecord, NewTask, NewTaskTransition, Outcome, StoreError, TaskKind, TaskRow, TaskState, now,
    },
};

/// A workload a request named, as found in the cluster.
#[derive(Clone, Debug)]
pub(super) struct Workload {
    /// Its kind.
    pub kind: WorkloadKind,
    /// Its name.
    pub name: String,
    /// Its uid (its pods carry it in their owner references).
    pub uid: String,
    /// Its pod selector.
    pub selector: LabelSelector,
}

impl Workload {
    /// `CloneSet/web`.
    pub fn target(&self) -> String {
        format!("{}/{}", self.kind.as_str(), self.name)
    }
}

/// The API resource of a workload kind (each served at its storage version, v1beta1).
fn workload_resource(kind: WorkloadKind) -> ApiResource {
    let (kind_name, plural) = match kind {
        WorkloadKind::CloneSet => ("CloneSet", "clonesets"),
        WorkloadKind::StatefulSet => ("StatefulSet", "statefulsets"),
        WorkloadKind::DaemonSet => ("DaemonSet", "daemonsets"),
        WorkloadKind::SidecarSet => ("SidecarSet", "sidecarsets"),
    };
    ApiResource {
        group: "apps.kruise.io".into(),
        version: "v1beta1".into(),
        api_version: "apps.kruise.io/v1beta1".into(),
        kind: kind_name.into(),
        plural: plural.into(),
    }
}

/// Checks a workload reference: a kind with pods of its own in the namespace (not a
/// cluster-scoped SidecarSet, whose pods are other workloads'), naming `workload.kind`, and its
/// name, naming `workload.name`.
pub(super) fn check_workload_ref(workload: &WorkloadRef, errors: &mut Vec<FieldError>) {
    if workload.kind.is_cluster_scoped() {
        errors.push(FieldError::new(
            "workload.kind",
            format!(
                "a {} is cluster-scoped and owns no pods: name the workload whose pods it is",
                workload.kind.as_str()
            ),
        ));
    }
    let problems = kruise_crds::validation::meta::dns1123_subdomain_problems(&workload.name);
    if !problems.is_empty() {
        errors.push(FieldError::new("workload.name", problems.join("; ")));
    }
}

/// Checks an `Idempotency-Key`: 1-255 visible ASCII characters.
pub(super) fn check_idempotency_key(key: Option<&str>, errors: &mut Vec<FieldError>) {
    if let Some(key) = key
        && (key.is_empty() || key.len() > 255 || !key.bytes().all(|b| (0x21..=0x7e).contains(&b)))
    {
        errors.push(FieldError::new("Idempotency-Key", "must be 1-255 visible ASCII characters"));
    }
}

/// Whether a pod runs (or is about to run) on a node: scheduled, not terminating, not finished.
pub(super) fn pod_is_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    pod.metadata.deletion_timestamp.is_none()
        && !matches!(phase, Some("Succeeded") | Some("Failed"))
        && pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty())
}

/// A state change of a task.
pub(super) struct Change<'a> {
    /// The new state.
    pub to: TaskState,
    /// Who caused it.
    pub actor: &'a str,
    /// Machine-readable reason.
    pub reason: &'a str,
    /// Detail.
    pub message: Option<String>,
}

impl<'a> Change<'a> {
    /// A change to `to` by `actor` for `reason`.
    pub fn new(to: TaskState, actor: &'a str, reason: &'a str, message: Option<String>) -> Self {
        Self { to, actor, reason, message }
    }
}

/// How a task create ended in the store.
pub(super) enum Recorded {
    /// The task and its audit intent are written: change the cluster now.
    Created,
    /// A concurrent retry with the same idempotency key won the race: answer as it did.
    Raced(Box<TaskRow>),
}

impl Operations {
    /// The workload `reference` names in `namespace` (`None`: it does not exist).
    pub(super) async fn workload(
        &self,
        namespace: &str,
        reference: &WorkloadRef,
    ) -> Result<Option<Workload>, ApiError> {
        if reference.kind.is_cluster_scoped() {
            let mut errors = Vec::new();
            check_workload_ref(reference, &mut errors);
            return Err(ApiError::Validation(errors));
        }
        let resource = workload_resource(reference.kind);
        let api: Api<DynamicObject> = Api::namespaced_with(self.client().clone(), namespace, &resource);
        let Some(object) =
            api.get_opt(&reference.name).await.map_err(|e| ApiError::Kubernetes(e.to_string()))?
        else {
            return Ok(None);
        };
        let selector: LabelSelector = object
            .data
            .pointer("/spec/selector")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| {
                ApiError::Internal(format!(
                    "{} {} has an unreadable selector: {e}",
                    resource.kind, reference.name
                ))
            })?
            .unwrap_or_default();
        Ok(Some(Workload {
            kind: reference.kind,
            name: reference.name.clone(),
            uid: object.uid().unwrap_or_default(),
            selector,
        }))
    }

    /// The pods a workload owns (its selector and its uid in their owner references), by name.
    pub(super) async fn workload_pods(
        &self,
        namespace: &str,
        workload: &Workload,
    ) -> Result<Vec<Pod>, ApiError> {
        let pods: Api<Pod> = Api::namespaced(self.client().clone(), namespace);
        let selector = kruise_crds::selector::to_selector_string(&workload.selector);
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| ApiError::Kubernetes(e.to_string()))?;
        let mut owned: Vec<Pod> = list
            .items
            .into_iter()
            .filter(|pod| pod.owner_references().iter().any(|o| o.uid == workload.uid))
            .filter(|pod| {
                kruise_crds::selector::matches(
                    &workload.selector,
                    pod.metadata.labels.as_ref().unwrap_or(&Default::default()),
                )
            })
            .collect();
        owned.sort_by_key(|pod| pod.name_any());
        Ok(owned)
    }

    /// The task `id` of `kind` in `namespace`, or 404.
    pub(super) async fn task_in(
        &self,
        kind: TaskKind,
        namespace: &str,
        id: &str,
    ) -> Result<TaskRow, ApiError> {
        match self.store().task(id).await? {
            Some(row) if row.namespace == namespace && row.kind == kind.as_str() => Ok(row),
            _ => Err(ApiError::NotFound(format!(
                "{} {id:?} not found in namespace {namespace:?}",
                kind.noun()
            ))),
        }
    }

    /// A task's transitions, oldest first.
    pub(super) async fn task_history(&self, id: &str) -> Result<Vec<TaskTransition>, ApiError> {
        Ok(self
            .store()
            .task_transitions(id)
            .await?
            .into_iter()
            .map(|t| TaskTransition {
                time: t.time,
                from: t.from_state.as_deref().and_then(TaskState::parse),
                to: TaskState::parse(&t.to_state).unwrap_or(TaskState::Failed),
                actor: t.actor,
                reason: t.reason,
                message: t.message,
            })
            .collect())
    }

    /// Writes the audit intent and the task in one transaction. A store failure is a 503 (the
    /// audit could not be written, so nothing is changed).
    pub(super) async fn record_task(
        &self,
        ctx: &RequestContext,
        draft: &Draft,
        task: &NewTask,
    ) -> Result<Recorded, ApiError> {
        let intent: NewAuditRecord = draft.record(ctx, Outcome::Pending, 0, None, None);
        match self.store().create_task(&intent, task).await {
            Ok(()) => {
                self.metrics().audit_written("pending");
                Ok(Recorded::Created)
            }
            Err(StoreError::Duplicate) if task.idempotency_key.is_some() => {
                let key = task.idempotency_key.as_deref().unwrap_or_default();
                match self
                    .store()
                    .task_by_idempotency_key(task.kind, &task.created_by, &task.namespace, key)
                    .await
                {
                    Ok(Some(existing)) => Ok(Recorded::Raced(Box::new(existing))),
                    Ok(None) => {
                        self.refuse(ctx, draft, ApiError::Internal("idempotency key vanished".into())).await
                    }
                    Err(error) => self.refuse(ctx, draft, error.into()).await,
                }
            }
            Err(error) => {
                self.metrics().audit_failed();
                tracing::warn!(%error, correlation_id = %ctx.correlation_id, kind = task.kind.as_str(), "audit write failed: request refused");
                Err(error.into())
            }
        }
    }

    /// Answers a retry with an idempotency key: `Ok(row)` when the body matches (recorded as
    /// accepted), 409 otherwise (recorded as rejected).
    pub(super) async fn replay_task(
        &self,
        ctx: &RequestContext,
        draft: &mut Draft,
        existing: &TaskRow,
        body_hash: &str,
    ) -> Result<(), ApiError> {
        draft.task_id = Some(existing.id.clone());
        if existing.body_hash.as_deref() != Some(body_hash) {
            let error = ApiError::IdempotencyConflict(format!(
                "Idempotency-Key was already used for {} {} with a different request body",
                TaskKind::parse(&existing.kind).map(TaskKind::noun).unwrap_or("task"),
                existing.id
            ));
            return self.refuse(ctx, draft, error).await;
        }
        let grpc = (ctx.transport == Transport::Grpc).then_some(0);
        let record = draft.record(
            ctx,
            Outcome::Accepted,
            202,
            grpc,
            Some(format!("idempotent retry: answered with {}", existing.id)),
        );
        self.write_audit(&record).await
    }

    /// Moves a task to `change.to` (compare-and-set from its stored state) with its plan and
    /// result; returns whether this call made the change. Failures to record are logged.
    pub(super) async fn move_task(
        &self,
        row: &TaskRow,
        change: Change<'_>,
        plan: Option<&Value>,
        result: Option<&Value>,
    ) -> bool {
        let from = row.state();
        let Change { to, actor, reason, message } = change;
        let transition = NewTaskTransition {
            task_id: row.id.clone(),
            time: now(),
            from_state: Some(from),
            to_state: to,
            actor: actor.into(),
            reason: reason.into(),
            message,
        };
        match self.store().task_transition(from, &transition, plan, result).await {
            Ok(true) => {
                self.metrics().transition(to.as_str());
                tracing::info!(
                    task = %row.id,
                    kind = %row.kind,
                    namespace = %row.namespace,
                    target = %row.target,
                    from = from.as_str(),
                    to = to.as_str(),
                    reason,
                    "task state changed"
                );
                true
            }
            Ok(false) => false,
            Err(error) => {
                tracing::warn!(%error, task = %row.id, "could not record a task transition");
                false
            }
        }
    }
}

impl TaskKind {
    /// Parses the stored form.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::ImagePull, Self::Recreate].into_iter().find(|kind| kind.as_str() == text)
    }
}

/// One pass of the watcher over every running image pull and recreate: records what happened
/// in the cluster (per-node and per-pod results, state transitions) and, for recreates of a
/// workload, creates the next pods' ContainerRecreateRequests as earlier ones finish. Runs in
/// every API replica that runs the watcher; every step is idempotent (deterministic object
/// names, compare-and-set transitions), so replicas and restarts do not repeat work.
pub async fn reconcile_tasks(ops: &Operations) {
    let rows = match ops.store().active_tasks().await {
        Ok(rows) => rows,
        Err(error) => {
            tracing::warn!(%error, "task watcher: the store is unavailable; retrying");
            return;
        }
    };
    for row in rows {
        let result = match TaskKind::parse(&row.kind) {
            Some(TaskKind::ImagePull) => ops.reconcile_image_pull(&row).await,
            Some(TaskKind::Recreate) => ops.reconcile_recreate(&row).await,
            None => {
                tracing::warn!(task = %row.id, kind = %row.kind, "unknown task kind: marking it failed");
                ops.move_task(
                    &row,
                    Change::new(TaskState::Failed, WATCHER_ACTOR, "UnknownKind", None),
                    None,
                    None,
                )
                .await;
                Ok(())
            }
        };
        if let Err(error) = result {
            tracing::debug!(%error, task = %row.id, "task watcher: will retry");
        }
    }
}
