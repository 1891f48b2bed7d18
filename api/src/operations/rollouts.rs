//! Rollouts: create (idempotent), read, list, watch, pause, resume, promote and abort.

use std::time::{Duration, Instant};

use futures::Stream;
use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Pod},
    apimachinery::pkg::util::intstr::IntOrString,
};
use kruise_crds::apps::v1beta1::{CloneSet, DaemonSet, StatefulSet};
use kube::{
    Api, ResourceExt,
    api::{DynamicObject, ListParams, PostParams},
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Draft, Input, Operations, RequestContext, check_namespace, parse_limit};
use crate::{
    auth::Action,
    error::{ApiError, FieldError},
    model::{
        Progress, PromoteRequest, Rollout, RolloutList, RolloutListParams, RolloutRequest, Transition,
        WorkloadCondition, WorkloadKind, WorkloadRef,
    },
    store::{
        NewRollout, NewTransition, RolloutQuery, RolloutRow, RolloutState,
        cursor::{self, Listing},
        now,
    },
    workload::{self as wl, Derived, RolloutTarget},
};

/// The actor of transitions observed on the workload.
pub const WATCHER_ACTOR: &str = "watcher";

/// How many times a write that lost an optimistic-concurrency race is retried.
const CONFLICT_RETRIES: usize = 5;

/// A created (or replayed) rollout.
#[derive(Clone, Debug)]
pub struct CreatedRollout {
    /// The rollout.
    pub rollout: Rollout,
    /// True when an earlier request with the same idempotency key and body created it.
    pub replayed: bool,
}

/// What pause, resume, promote and abort do.
#[derive(Clone, Debug)]
pub enum RolloutAction {
    /// Stop updating pods.
    Pause,
    /// Go on updating pods.
    Resume,
    /// Lower the partition (the body's, or 0) and resume.
    Promote(Input<PromoteRequest>),
    /// Roll back to the previous revision.
    Abort,
}

impl RolloutAction {
    fn verb(&self) -> &'static str {
        match self {
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Promote(_) => "promote",
            Self::Abort => "abort",
        }
    }

    fn audit_action(&self) -> &'static str {
        match self {
            Self::Pause => "rollout.pause",
            Self::Resume => "rollout.resume",
            Self::Promote(_) => "rollout.promote",
            Self::Abort => "rollout.abort",
        }
    }
}

/// The change an action makes, once validated.
enum Change {
    Paused(bool),
    Partition(Option<IntOrString>),
    Rollback { revision: String, template: Box<k8s_openapi::api::core::v1::PodTemplateSpec> },
}

/// When the live view of a rollout lists the workload's pods (to count in-place updates and
/// recreations, which the status does not say).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PodCounts {
    /// Not at all (lists, streams).
    Skip,
    /// Always (single-rollout reads).
    Count,
    /// Only when the derived state is terminal (the watcher's final snapshot).
    WhenEnded,
}

/// A running rollout as its workload shows it.
pub(crate) struct Live {
    /// The state the workload implies.
    pub derived: Derived,
    /// The progress, when the workload exists.
    pub progress: Option<Progress>,
    /// The workload's conditions.
    pub conditions: Vec<WorkloadCondition>,
}

/// Calls `$body` with `$w` bound to the workload type of `$kind`.
macro_rules! by_kind {
    ($kind:expr, $w:ident => $body:expr) => {
        match $kind {
            WorkloadKind::CloneSet => {
                type $w = CloneSet;
                $body
            }
            WorkloadKind::StatefulSet => {
                type $w = StatefulSet;
                $body
            }
            WorkloadKind::DaemonSet => {
                type $w = DaemonSet;
                $body
            }
        }
    };
}

/// The kind a stored rollout names.
fn row_kind(row: &RolloutRow) -> Result<WorkloadKind, ApiError> {
    WorkloadKind::parse(&row.workload_kind).ok_or_else(|| {
        ApiError::Internal(format!(
            "rollout {} names an unknown workload kind {:?}",
            row.id, row.workload_kind
        ))
    })
}

impl Operations {
    fn workloads<W: RolloutTarget>(&self, namespace: &str) -> Api<W> {
        Api::namespaced(self.client().clone(), namespace)
    }

    async fn typed_workload<W: RolloutTarget>(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<W>, ApiError> {
        self.workloads::<W>(namespace).get_opt(name).await.map_err(|e| ApiError::Kubernetes(e.to_string()))
    }

    /// The pods a workload owns.
    async fn pods_of<W: RolloutTarget>(&self, workload: &W) -> Result<Vec<Pod>, ApiError> {
        let namespace = workload.namespace().unwrap_or_default();
        let uid = workload.uid().unwrap_or_default();
        let selector = wl::pod_selector(workload);
        let pods: Api<Pod> = Api::namespaced(self.client().clone(), &namespace);
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| ApiError::Kubernetes(e.to_string()))?;
        Ok(list.items.into_iter().filter(|pod| pod.owner_references().iter().any(|o| o.uid == uid)).collect())
    }

    /// Replaces the workload with `change(current)`, re-reading and re-applying on a conflict.
    async fn update_workload<W: RolloutTarget>(
        &self,
        first: W,
        change: impl Fn(&W) -> Result<W, ApiError>,
    ) -> Result<W, ApiError> {
        let namespace = first.namespace().unwrap_or_default();
        let name = first.name_any();
        let kind = W::KIND.as_str();
        let api = self.workloads::<W>(&namespace);
        let mut current = first;
        for _ in 0..CONFLICT_RETRIES {
            let next = change(&current)?;
            match api.replace(&name, &PostParams::default(), &next).await {
                Ok(written) => return Ok(written),
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    current = api
                        .get_opt(&name)
                        .await
                        .map_err(|e| ApiError::Kubernetes(e.to_string()))?
                        .ok_or_else(|| {
                            ApiError::Conflict(format!(
                                "{kind} {name} was deleted while it was being changed"
                            ))
                        })?;
                }
                Err(error) => return Err(error.into()),
            }
        }
        Err(ApiError::Conflict(format!("{kind} {name} kept changing under the request; retry")))
    }

    /// `POST /v1/namespaces/{ns}/rollouts`.
    pub async fn create_rollout(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        idempotency_key: Option<&str>,
        body: Input<RolloutRequest>,
    ) -> Result<CreatedRollout, ApiError> {
        let mut draft =
            self.draft(ctx, "rollout.create", Some(namespace), format!("namespaces/{namespace}/rollouts"));
        let principal = self.authorize(ctx, &draft, Action::Rollout, Some(namespace)).await?;
        if let Err(error) = check_namespace(namespace) {
            return self.refuse(ctx, &draft, error).await;
        }
        let request = match body.parse() {
            Ok(request) => request,
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        let body_value = serde_json::to_value(&request).unwrap_or(Value::Null);
        draft.with_body(&body_value);
        draft.target = format!("{}/{}", request.workload.kind.as_str(), request.workload.name);
        let mut errors = Vec::new();
        if let Some(key) = idempotency_key
            && (key.is_empty() || key.len() > 255 || !key.bytes().all(|b| (0x21..=0x7e).contains(&b)))
        {
            errors.push(FieldError::new("Idempotency-Key", "must be 1-255 visible ASCII characters"));
        }
        let name_problems = kruise_crds::validation::meta::dns1123_subdomain_problems(&request.workload.name);
        if !name_problems.is_empty() {
            errors.push(FieldError::new("workload.name", name_problems.join("; ")));
        }
        if !errors.is_empty() {
            return self.refuse(ctx, &draft, ApiError::Validation(errors)).await;
        }
        let body_hash = hex::encode(Sha256::digest(canonical_json(&body_value).as_bytes()));

        if let Some(key) = idempotency_key {
            match self.store().rollout_by_idempotency_key(&principal.name, namespace, key).await {
                Ok(Some(existing)) => return self.replay(ctx, &mut draft, existing, &body_hash).await,
                Ok(None) => {}
                Err(error) => return self.refuse(ctx, &draft, error.into()).await,
            }
        }

        let created = Created { principal: &principal.name, idempotency_key, body_value, body_hash };
        by_kind!(request.workload.kind, W => {
            self.create_rollout_of::<W>(ctx, &mut draft, namespace, request, created).await
        })
    }

    /// The part of `create_rollout` that reads and writes the workload.
    async fn create_rollout_of<W: RolloutTarget>(
        &self,
        ctx: &RequestContext,
        draft: &mut Draft,
        namespace: &str,
        request: RolloutRequest,
        created: Created<'_>,
    ) -> Result<CreatedRollout, ApiError> {
        let Created { principal, idempotency_key, body_value, body_hash } = created;
        let kind = W::KIND.as_str();
        let name = request.workload.name.clone();
        let current = match self.typed_workload::<W>(namespace, &name).await {
            Ok(Some(workload)) => workload,
            Ok(None) => {
                let error = ApiError::field(
                    "workload.name",
                    format!("{kind} {name:?} not found in namespace {namespace:?}"),
                );
                return self.refuse(ctx, draft, error).await;
            }
            Err(error) => return self.refuse(ctx, draft, error).await,
        };
        if let Err(errors) = wl::apply_request(&current, &request) {
            return self.refuse(ctx, draft, ApiError::Validation(errors)).await;
        }

        let id = uuid::Uuid::new_v4().to_string();
        draft.rollout_id = Some(id.clone());
        let previous_revision = wl::previous_revision(&current);
        let rollout = NewRollout {
            id: id.clone(),
            namespace: namespace.into(),
            workload_kind: request.workload.kind.as_str().into(),
            workload_name: name.clone(),
            spec: body_value.clone(),
            previous_revision: previous_revision.clone(),
            created_by: principal.to_string(),
            created_at: ctx.received,
            idempotency_key: idempotency_key.map(str::to_string),
            body_hash: Some(body_hash.clone()),
            reason: request.reason.clone(),
        };
        let intent = draft.record(ctx, crate::store::Outcome::Pending, 0, None, None);
        match self.store().create_rollout(&intent, &rollout).await {
            Ok(()) => self.metrics().audit_written("pending"),
            Err(crate::store::StoreError::Duplicate) if idempotency_key.is_some() => {
                // A concurrent retry with the same key won the race: answer as it did.
                let key = idempotency_key.unwrap_or_default();
                return match self.store().rollout_by_idempotency_key(principal, namespace, key).await {
                    Ok(Some(existing)) => self.replay(ctx, draft, existing, &body_hash).await,
                    Ok(None) => {
                        self.refuse(ctx, draft, ApiError::Internal("idempotency key vanished".into())).await
                    }
                    Err(error) => self.refuse(ctx, draft, error.into()).await,
                };
            }
            Err(error) => {
                self.metrics().audit_failed();
                tracing::warn!(%error, correlation_id = %ctx.correlation_id, "audit write failed: rollout refused");
                return Err(error.into());
            }
        }

        // Recorded: now the cluster is changed.
        let result =
            self.apply_rollout(principal, &id, current, &request, previous_revision.as_deref()).await;
        let result = match result {
            Ok(()) => {
                self.rollout_view(&id, true).await.map(|rollout| CreatedRollout { rollout, replayed: false })
            }
            Err(error) => {
                let failed = NewTransition {
                    rollout_id: id.clone(),
                    time: now(),
                    from_state: Some(RolloutState::Pending),
                    to_state: RolloutState::Failed,
                    actor: principal.to_string(),
                    reason: "ApplyFailed".into(),
                    message: Some(error.to_string()),
                    progress: None,
                };
                if let Err(store_error) = self.store().transition(RolloutState::Pending, None, &failed).await
                {
                    tracing::warn!(error = %store_error, rollout = %id, "could not record the failed rollout");
                }
                Err(error)
            }
        };
        self.record_outcome(ctx, draft, result, 202).await
    }

    /// Writes the rollout into the workload, then records what the change produced.
    async fn apply_rollout<W: RolloutTarget>(
        &self,
        actor: &str,
        id: &str,
        current: W,
        request: &RolloutRequest,
        previous_revision: Option<&str>,
    ) -> Result<(), ApiError> {
        let namespace = current.namespace().unwrap_or_default();
        let name = current.name_any();
        let written = self
            .update_workload(current, |latest| {
                wl::apply_request(latest, request).map_err(ApiError::Validation)
            })
            .await?;
        let generation = written.meta().generation;
        if request.pre_pull {
            self.create_pre_pulls(&written, id, request).await;
        }
        let revision = match generation {
            Some(generation) => self.wait_revision::<W>(&namespace, &name, generation).await,
            None => None,
        };
        if let Err(error) =
            self.store().set_rollout_target(id, generation, revision.as_deref(), previous_revision).await
        {
            tracing::warn!(%error, rollout = %id, "could not record the rollout's target revision");
        }
        self.supersede_others(actor, id, &namespace, W::KIND, &name).await;
        self.notify_changed();
        Ok(())
    }

    /// Waits (up to the configured time) until the controller has named the revision of
    /// `generation`. It polls the object: a watch per request (tried) cost the embedded API
    /// server more than these GETs under a hundred concurrent rollouts.
    async fn wait_revision<W: RolloutTarget>(
        &self,
        namespace: &str,
        name: &str,
        generation: i64,
    ) -> Option<String> {
        let deadline = Instant::now() + self.inner.config.revision_wait;
        loop {
            if let Ok(Some(workload)) = self.typed_workload::<W>(namespace, name).await {
                let status = workload.status_view();
                if status.observed_generation >= generation && !status.update_revision.is_empty() {
                    return Some(status.update_revision);
                }
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Marks the other running rollouts of the same workload as superseded.
    async fn supersede_others(&self, actor: &str, id: &str, namespace: &str, kind: WorkloadKind, name: &str) {
        let Ok(active) = self.store().active_rollouts().await else { return };
        for other in active.iter().filter(|r| {
            r.id != id
                && r.namespace == namespace
                && r.workload_name == name
                && r.workload_kind == kind.as_str()
        }) {
            let transition = NewTransition {
                rollout_id: other.id.clone(),
                time: now(),
                from_state: Some(other.state()),
                to_state: RolloutState::Aborted,
                actor: actor.into(),
                reason: "Superseded".into(),
                message: Some(format!("superseded by rollout {id}")),
                progress: other.progress.as_ref().map(|p| p.0.clone()),
            };
            match self.store().transition(other.state(), None, &transition).await {
                Ok(true) => self.metrics().transition(RolloutState::Aborted.as_str()),
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(%error, rollout = %other.id, "could not record a superseded rollout")
                }
            }
        }
    }

    /// Creates one ImagePullJob per new image, pulling on the nodes of the workload's pods.
    /// Failures are logged: pre-pulling only speeds the rollout up.
    async fn create_pre_pulls<W: RolloutTarget>(&self, set: &W, id: &str, request: &RolloutRequest) {
        let namespace = set.namespace().unwrap_or_default();
        let resource = kube::api::ApiResource {
            group: "apps.kruise.io".into(),
            version: "v1beta1".into(),
            api_version: "apps.kruise.io/v1beta1".into(),
            kind: "ImagePullJob".into(),
            plural: "imagepulljobs".into(),
        };
        let api: Api<DynamicObject> = Api::namespaced_with(self.client().clone(), &namespace, &resource);
        let short: String = id.chars().take(8).collect();
        let selector = set.selector().cloned().unwrap_or_default();
        for (index, (container, image)) in request.images.iter().enumerate() {
            let name = format!("{}-prepull-{short}-{index}", set.name_any());
            let object = json!({
                "apiVersion": "apps.kruise.io/v1beta1",
                "kind": "ImagePullJob",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": {"kruise.io/rollout-id": id},
                    "annotations": {"kruise.io/container": container},
                    "ownerReferences": [{
                        "apiVersion": "apps.kruise.io/v1beta1",
                        "kind": W::KIND.as_str(),
                        "name": set.name_any(),
                        "uid": set.uid().unwrap_or_default(),
                    }],
                },
                "spec": {
                    "image": image,
                    "podSelector": selector,
                    "parallelism": 2,
                    "pullPolicy": {"timeoutSeconds": 300, "backoffLimit": 3},
                    "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 1800, "ttlSecondsAfterFinished": 600},
                },
            });
            let result = match serde_json::from_value::<DynamicObject>(object) {
                Ok(object) => {
                    api.create(&PostParams::default(), &object).await.map(|_| ()).map_err(|e| e.to_string())
                }
                Err(error) => Err(error.to_string()),
            };
            if let Err(error) = result {
                tracing::warn!(%error, rollout = %id, %image, "could not create the pre-pull ImagePullJob");
            }
        }
    }

    /// Answers a retry: the same rollout when the body matches, 409 otherwise; recorded either way.
    async fn replay(
        &self,
        ctx: &RequestContext,
        draft: &mut Draft,
        existing: RolloutRow,
        body_hash: &str,
    ) -> Result<CreatedRollout, ApiError> {
        draft.rollout_id = Some(existing.id.clone());
        if existing.body_hash.as_deref() != Some(body_hash) {
            let error = ApiError::IdempotencyConflict(format!(
                "Idempotency-Key was already used for rollout {} with a different request body",
                existing.id
            ));
            return self.refuse(ctx, draft, error).await;
        }
        let rollout = match self.view(&existing, true).await {
            Ok(rollout) => rollout,
            Err(error) => return self.refuse(ctx, draft, error).await,
        };
        let grpc = (ctx.transport == super::Transport::Grpc).then_some(0);
        let record = draft.record(
            ctx,
            crate::store::Outcome::Accepted,
            202,
            grpc,
            Some(format!("idempotent retry: answered with rollout {}", existing.id)),
        );
        self.write_audit(&record).await?;
        Ok(CreatedRollout { rollout, replayed: true })
    }

    /// `GET /v1/namespaces/{ns}/rollouts/{id}`.
    pub async fn get_rollout(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        id: &str,
    ) -> Result<Rollout, ApiError> {
        let draft = self.draft(ctx, "rollout.get", Some(namespace), format!("rollouts/{id}"));
        self.authorize(ctx, &draft, Action::Rollout, Some(namespace)).await?;
        let row = self.row_in(namespace, id).await?;
        self.view(&row, true).await
    }

    /// The rollout `id` of `namespace`, or 404.
    async fn row_in(&self, namespace: &str, id: &str) -> Result<RolloutRow, ApiError> {
        match self.store().rollout(id).await? {
            Some(row) if row.namespace == namespace => Ok(row),
            _ => Err(ApiError::NotFound(format!("rollout {id:?} not found in namespace {namespace:?}"))),
        }
    }

    async fn rollout_view(&self, id: &str, history: bool) -> Result<Rollout, ApiError> {
        let row =
            self.store().rollout(id).await?.ok_or_else(|| ApiError::NotFound(format!("rollout {id:?}")))?;
        self.view(&row, history).await
    }

    /// The rollout as clients see it: live from the workload while it runs, as recorded once
    /// it ended.
    pub(crate) async fn view(&self, row: &RolloutRow, history: bool) -> Result<Rollout, ApiError> {
        let live = if row.state().is_terminal() {
            None
        } else {
            Some(self.live(row, if history { PodCounts::Count } else { PodCounts::Skip }).await?)
        };
        if history && let Some(live) = &live {
            crate::watcher::record_live(self, row, live).await;
        }
        let mut rollout = assemble(row, live)?;
        if history {
            rollout.history = self
                .store()
                .transitions(&row.id)
                .await?
                .into_iter()
                .map(|t| Transition {
                    time: t.time,
                    from: t.from_state.as_deref().and_then(RolloutState::parse),
                    to: RolloutState::parse(&t.to_state).unwrap_or(RolloutState::Failed),
                    actor: t.actor,
                    reason: t.reason,
                    message: t.message,
                })
                .collect();
        }
        Ok(rollout)
    }

    /// `GET /v1/namespaces/{ns}/rollouts`.
    pub async fn list_rollouts(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        params: &RolloutListParams,
    ) -> Result<RolloutList, ApiError> {
        let draft =
            self.draft(ctx, "rollout.list", Some(namespace), format!("namespaces/{namespace}/rollouts"));
        self.authorize(ctx, &draft, Action::Rollout, Some(namespace)).await?;
        let mut errors = Vec::new();
        let limit = parse_limit(params.limit.as_deref()).map_err(|e| errors.push(e)).unwrap_or(50);
        let state = params.state.as_deref().and_then(|text| {
            let state = RolloutState::parse(text);
            if state.is_none() {
                errors.push(FieldError::new(
                    "state",
                    format!(
                        "{text:?}: expected one of Pending, Progressing, Paused, Succeeded, Failed, Aborted"
                    ),
                ));
            }
            state
        });
        let before_seq = params.cursor.as_deref().and_then(|text| {
            let seq = cursor::decode(Listing::Rollouts, text);
            if seq.is_none() {
                errors.push(FieldError::new(
                    "cursor",
                    "not a cursor of this listing (use nextCursor as given)",
                ));
            }
            seq
        });
        if !errors.is_empty() {
            return Err(ApiError::Validation(errors));
        }
        let query = RolloutQuery {
            namespace: namespace.into(),
            workload_name: params.workload.clone(),
            workload_kind: None,
            state,
            limit,
            before_seq,
        };
        let page = self.store().list_rollouts(&query).await?;
        let mut items = Vec::with_capacity(page.items.len());
        for row in &page.items {
            items.push(self.view(row, false).await?);
        }
        Ok(RolloutList {
            items,
            next_cursor: page.next_before.map(|seq| cursor::encode(Listing::Rollouts, seq)),
        })
    }

    /// `POST /v1/namespaces/{ns}/rollouts/{id}/{pause|resume|promote|abort}`.
    pub async fn act_on_rollout(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        id: &str,
        action: RolloutAction,
    ) -> Result<Rollout, ApiError> {
        let verb = action.verb();
        let mut draft = self.draft(ctx, action.audit_action(), Some(namespace), format!("rollouts/{id}"));
        draft.rollout_id = Some(id.to_string());
        let principal = self.authorize(ctx, &draft, Action::Rollout, Some(namespace)).await?;
        let promote = match action {
            RolloutAction::Promote(body) => {
                let body = match body {
                    Input::Json(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => {
                        Input::Typed(PromoteRequest::default())
                    }
                    other => other,
                };
                match body.parse() {
                    Ok(request) => {
                        draft.with_body(&serde_json::to_value(&request).unwrap_or(Value::Null));
                        Some(request)
                    }
                    Err(error) => return self.refuse(ctx, &draft, error).await,
                }
            }
            _ => None,
        };
        let row = match self.row_in(namespace, id).await {
            Ok(row) => row,
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        draft.target = format!("{}/{}", row.workload_kind, row.workload_name);
        let stored = row.state();
        if stored.is_terminal() {
            let error = ApiError::Conflict(format!(
                "rollout {id} is {}: there is nothing to {verb}",
                stored.as_str()
            ));
            return self.refuse(ctx, &draft, error).await;
        }
        let kind = match row_kind(&row) {
            Ok(kind) => kind,
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        by_kind!(kind, W => self.act_on_rollout_of::<W>(ctx, &draft, &principal.name, &row, promote, verb).await)
    }

    /// The part of `act_on_rollout` that reads and writes the workload.
    async fn act_on_rollout_of<W: RolloutTarget>(
        &self,
        ctx: &RequestContext,
        draft: &Draft,
        actor: &str,
        row: &RolloutRow,
        promote: Option<PromoteRequest>,
        verb: &'static str,
    ) -> Result<Rollout, ApiError> {
        let id = row.id.as_str();
        let stored = row.state();
        let set = match self.typed_workload::<W>(&row.namespace, &row.workload_name).await {
            Ok(Some(set)) => set,
            Ok(None) => {
                let error = ApiError::Conflict(format!(
                    "{} {} no longer exists",
                    W::KIND.as_str(),
                    row.workload_name
                ));
                return self.refuse(ctx, draft, error).await;
            }
            Err(error) => return self.refuse(ctx, draft, error).await,
        };
        let derived = wl::derive(stored, row.generation, row.revision.as_deref(), Some(&set));
        if derived.state.is_terminal() {
            let error = ApiError::Conflict(format!(
                "rollout {id} is {}{}: there is nothing to {verb}",
                derived.state.as_str(),
                derived.message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default()
            ));
            return self.refuse(ctx, draft, error).await;
        }
        let change = match (&promote, verb) {
            (Some(request), _) => match &request.partition {
                None => Change::Partition(None),
                Some(partition) => match wl::check_promotion(&set, partition) {
                    Ok(value) => Change::Partition(Some(value)),
                    Err(message) => {
                        return self.refuse(ctx, draft, ApiError::field("partition", message)).await;
                    }
                },
            },
            (None, "pause") => Change::Paused(true),
            (None, "resume") => Change::Paused(false),
            _ => match self.rollback_target(row, &set).await {
                Ok(change) => change,
                Err(error) => return self.refuse(ctx, draft, error).await,
            },
        };

        self.record_intent(ctx, draft).await?;
        let result = self.apply_action(actor, row, set, derived.revision.as_deref(), change, verb).await;
        let result = match result {
            Ok(()) => self.rollout_view(id, true).await,
            Err(error) => Err(error),
        };
        self.record_outcome(ctx, draft, result, 202).await
    }

    /// The previous revision's template, for abort.
    async fn rollback_target<W: RolloutTarget>(
        &self,
        row: &RolloutRow,
        workload: &W,
    ) -> Result<Change, ApiError> {
        let Some(previous) = row.previous_revision.clone() else {
            return Err(ApiError::Conflict(format!(
                "rollout {} has no previous revision to go back to (the workload had none when it started)",
                row.id
            )));
        };
        let revisions: Api<ControllerRevision> = Api::namespaced(self.client().clone(), &row.namespace);
        let mut found = None;
        for name in workload.revision_object_names(&previous) {
            found = revisions.get_opt(&name).await.map_err(|e| ApiError::Kubernetes(e.to_string()))?;
            if found.is_some() {
                break;
            }
        }
        let revision = found.ok_or_else(|| {
            ApiError::Conflict(format!("the previous revision {previous} no longer exists"))
        })?;
        let template = wl::revision_template(&revision)
            .ok_or_else(|| ApiError::Internal(format!("revision {previous} holds no pod template")))?;
        Ok(Change::Rollback { revision: previous, template: Box::new(template) })
    }

    async fn apply_action<W: RolloutTarget>(
        &self,
        actor: &str,
        row: &RolloutRow,
        set: W,
        revision: Option<&str>,
        change: Change,
        verb: &str,
    ) -> Result<(), ApiError> {
        let before = wl::progress(&set, revision, None, row.created_at);
        let written = self
            .update_workload(set, |current| {
                Ok(match &change {
                    Change::Paused(paused) => wl::with_paused(current, *paused),
                    Change::Partition(partition) => wl::with_partition(current, partition.clone()),
                    Change::Rollback { template, .. } => wl::rolled_back(current, (**template).clone()),
                })
            })
            .await?;
        let (to, reason, message) = match &change {
            Change::Paused(true) => (RolloutState::Paused, "Paused", format!("paused by {actor}")),
            Change::Paused(false) => (RolloutState::Progressing, "Resumed", format!("resumed by {actor}")),
            Change::Partition(partition) => (
                RolloutState::Progressing,
                "Promoted",
                format!(
                    "promoted by {actor} to partition {}",
                    partition
                        .as_ref()
                        .map(kruise_crds::intstr::display)
                        .unwrap_or_else(|| "0 (every pod)".into())
                ),
            ),
            Change::Rollback { revision, .. } => (
                RolloutState::Aborted,
                "Aborted",
                format!("aborted by {actor}: rolling back to revision {revision}"),
            ),
        };
        let progress = if to.is_terminal() {
            serde_json::to_value(&before).ok()
        } else {
            serde_json::to_value(wl::progress(&written, revision, None, row.created_at)).ok()
        };
        let mut from = row.state();
        for _ in 0..3 {
            let transition = NewTransition {
                rollout_id: row.id.clone(),
                time: now(),
                from_state: Some(from),
                to_state: to,
                actor: actor.into(),
                reason: reason.into(),
                message: Some(message.clone()),
                progress: progress.clone(),
            };
            match self.store().transition(from, revision, &transition).await {
                Ok(true) => {
                    self.metrics().transition(to.as_str());
                    break;
                }
                Ok(false) => match self.store().rollout(&row.id).await {
                    Ok(Some(latest)) if !latest.state().is_terminal() => from = latest.state(),
                    _ => break,
                },
                Err(error) => {
                    tracing::warn!(%error, rollout = %row.id, verb, "could not record the rollout transition");
                    break;
                }
            }
        }
        self.notify_changed();
        Ok(())
    }

    /// `GET /v1/namespaces/{ns}/rollouts/{id}/events`: the rollout now, then every change, until
    /// it reaches a terminal state.
    pub async fn watch_rollout(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        id: &str,
    ) -> Result<impl Stream<Item = Result<Rollout, ApiError>> + Send + 'static, ApiError> {
        let draft = self.draft(ctx, "rollout.watch", Some(namespace), format!("rollouts/{id}"));
        self.authorize(ctx, &draft, Action::Rollout, Some(namespace)).await?;
        let row = self.row_in(namespace, id).await?;
        let ops = self.clone();
        let changes = self.subscribe_changes();
        struct Watch {
            ops: Operations,
            id: String,
            changes: tokio::sync::watch::Receiver<u64>,
            last: Option<Rollout>,
            done: bool,
            first: bool,
        }
        let state = Watch { ops, id: row.id, changes, last: None, done: false, first: true };
        Ok(futures::stream::unfold(state, |mut state| async move {
            if state.done {
                return None;
            }
            loop {
                if !state.first {
                    let _ = tokio::time::timeout(Duration::from_secs(1), state.changes.changed()).await;
                }
                state.first = false;
                let view = match state.ops.rollout_view(&state.id, false).await {
                    Ok(view) => view,
                    Err(error) => {
                        state.done = true;
                        return Some((Err(error), state));
                    }
                };
                let changed = state.last.as_ref().is_none_or(|last| {
                    last.state != view.state
                        || last.progress != view.progress
                        || last.revision != view.revision
                });
                if changed {
                    state.done = view.state.is_terminal();
                    state.last = Some(view.clone());
                    return Some((Ok(view), state));
                }
            }
        }))
    }
}

/// A rollout from its row and, while it runs, what its workload shows.
fn assemble(row: &RolloutRow, live: Option<Live>) -> Result<Rollout, ApiError> {
    let request: RolloutRequest = serde_json::from_value(row.spec.0.clone())
        .map_err(|e| ApiError::Internal(format!("stored rollout {} does not read back: {e}", row.id)))?;
    let stored = row.state();
    let mut rollout = Rollout {
        id: row.id.clone(),
        namespace: row.namespace.clone(),
        workload: WorkloadRef {
            kind: WorkloadKind::parse(&row.workload_kind).unwrap_or(WorkloadKind::CloneSet),
            name: row.workload_name.clone(),
        },
        state: stored,
        message: row.message.clone(),
        revision: row.revision.clone(),
        previous_revision: row.previous_revision.clone(),
        created_by: row.created_by.clone(),
        created_at: row.created_at,
        updated_at: row.updated_at,
        finished_at: row.finished_at,
        request,
        progress: row.progress.as_ref().and_then(|p| serde_json::from_value(p.0.clone()).ok()),
        conditions: Vec::new(),
        history: Vec::new(),
    };
    if let Some(Live { derived, progress, conditions }) = live {
        rollout.state = derived.state;
        rollout.message = derived.message.or(rollout.message);
        rollout.revision = derived.revision;
        if progress.is_some() {
            rollout.progress = progress;
            rollout.conditions = conditions;
        }
    }
    Ok(rollout)
}

/// JSON with object keys sorted at every level (the body hash must not depend on key order).
pub(super) fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|key| format!("{}:{}", Value::String(key.clone()), canonical_json(&map[key])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(","))
        }
        other => other.to_string(),
    }
}

impl Operations {
    /// A running rollout as its workload shows it now: the state it implies, and (when the
    /// workload exists) its progress and conditions.
    pub(crate) async fn live(&self, row: &RolloutRow, pods: PodCounts) -> Result<Live, ApiError> {
        by_kind!(row_kind(row)?, W => self.live_of::<W>(row, pods).await)
    }

    async fn live_of<W: RolloutTarget>(&self, row: &RolloutRow, pods: PodCounts) -> Result<Live, ApiError> {
        let workload = self.typed_workload::<W>(&row.namespace, &row.workload_name).await?;
        let derived = wl::derive(row.state(), row.generation, row.revision.as_deref(), workload.as_ref());
        let Some(workload) = workload else {
            return Ok(Live { derived, progress: None, conditions: Vec::new() });
        };
        let pods = match pods {
            PodCounts::Count => Some(self.pods_of(&workload).await?),
            // A final snapshot without pod counts is still worth recording.
            PodCounts::WhenEnded if derived.state.is_terminal() => self.pods_of(&workload).await.ok(),
            _ => None,
        };
        let progress = wl::progress(&workload, derived.revision.as_deref(), pods.as_deref(), row.created_at);
        Ok(Live { derived, progress: Some(progress), conditions: workload.status_view().conditions })
    }
}

/// What `create_rollout` hands on once the request is checked.
struct Created<'a> {
    principal: &'a str,
    idempotency_key: Option<&'a str>,
    body_value: Value,
    body_hash: String,
}
