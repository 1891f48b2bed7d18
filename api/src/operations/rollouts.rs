//! Rollouts: create (idempotent), read, list, watch, pause, resume, promote and abort.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use futures::Stream;
use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Pod},
    apimachinery::pkg::util::intstr::IntOrString,
};
use kruise_crds::apps::v1beta1::CloneSet;
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
        IntOrPercent, PromoteRequest, Rollout, RolloutList, RolloutListParams, RolloutRequest, Transition,
        WorkloadKind, WorkloadRef,
    },
    store::{
        NewRollout, NewTransition, RolloutQuery, RolloutRow, RolloutState,
        cursor::{self, Listing},
        now,
    },
    workload::cloneset as cs,
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

impl Operations {
    fn clonesets(&self, namespace: &str) -> Api<CloneSet> {
        Api::namespaced(self.client().clone(), namespace)
    }

    async fn cloneset(&self, namespace: &str, name: &str) -> Result<Option<CloneSet>, ApiError> {
        self.clonesets(namespace).get_opt(name).await.map_err(|e| ApiError::Kubernetes(e.to_string()))
    }

    /// The pods a CloneSet owns.
    async fn pods_of(&self, set: &CloneSet) -> Result<Vec<Pod>, ApiError> {
        let namespace = set.namespace().unwrap_or_default();
        let uid = set.uid().unwrap_or_default();
        let selector = set
            .status
            .as_ref()
            .map(|s| s.label_selector.clone())
            .filter(|s| !s.is_empty())
            .or_else(|| {
                let labels = set.spec.selector.as_ref()?.match_labels.as_ref()?;
                Some(labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","))
            })
            .unwrap_or_default();
        let pods: Api<Pod> = Api::namespaced(self.client().clone(), &namespace);
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| ApiError::Kubernetes(e.to_string()))?;
        Ok(list.items.into_iter().filter(|pod| pod.owner_references().iter().any(|o| o.uid == uid)).collect())
    }

    /// Replaces the CloneSet with `change(current)`, re-reading and re-applying on a conflict.
    async fn update_cloneset(
        &self,
        first: CloneSet,
        change: impl Fn(&CloneSet) -> Result<CloneSet, ApiError>,
    ) -> Result<CloneSet, ApiError> {
        let namespace = first.namespace().unwrap_or_default();
        let name = first.name_any();
        let api = self.clonesets(&namespace);
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
                                "CloneSet {name} was deleted while it was being changed"
                            ))
                        })?;
                }
                Err(error) => return Err(error.into()),
            }
        }
        Err(ApiError::Conflict(format!("CloneSet {name} kept changing under the request; retry")))
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
        match request.workload.kind {
            WorkloadKind::CloneSet => {}
            other => errors.push(FieldError::new(
                "workload.kind",
                format!("{} rollouts are not supported yet: only CloneSet", other.as_str()),
            )),
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

        let name = request.workload.name.clone();
        let current = match self.cloneset(namespace, &name).await {
            Ok(Some(set)) => set,
            Ok(None) => {
                let error = ApiError::field(
                    "workload.name",
                    format!("CloneSet {name:?} not found in namespace {namespace:?}"),
                );
                return self.refuse(ctx, &draft, error).await;
            }
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        if let Err(errors) = cs::apply_request(&current, &request) {
            return self.refuse(ctx, &draft, ApiError::Validation(errors)).await;
        }

        let id = uuid::Uuid::new_v4().to_string();
        draft.rollout_id = Some(id.clone());
        let status = current.status.clone().unwrap_or_default();
        let previous_revision =
            Some(if status.observed_generation >= current.metadata.generation.unwrap_or(0) {
                status.update_revision.clone()
            } else {
                status.current_revision.clone()
            })
            .filter(|r| !r.is_empty());
        let rollout = NewRollout {
            id: id.clone(),
            namespace: namespace.into(),
            workload_kind: request.workload.kind.as_str().into(),
            workload_name: name.clone(),
            spec: body_value.clone(),
            previous_revision: previous_revision.clone(),
            created_by: principal.name.clone(),
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
                return match self.store().rollout_by_idempotency_key(&principal.name, namespace, key).await {
                    Ok(Some(existing)) => self.replay(ctx, &mut draft, existing, &body_hash).await,
                    Ok(None) => {
                        self.refuse(ctx, &draft, ApiError::Internal("idempotency key vanished".into())).await
                    }
                    Err(error) => self.refuse(ctx, &draft, error.into()).await,
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
            self.apply_rollout(&principal.name, &id, current, &request, previous_revision.as_deref()).await;
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
                    actor: principal.name.clone(),
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
        self.record_outcome(ctx, &draft, result, 202).await
    }

    /// Writes the rollout into the CloneSet, then records what the change produced.
    async fn apply_rollout(
        &self,
        actor: &str,
        id: &str,
        current: CloneSet,
        request: &RolloutRequest,
        previous_revision: Option<&str>,
    ) -> Result<(), ApiError> {
        let namespace = current.namespace().unwrap_or_default();
        let name = current.name_any();
        let written = self
            .update_cloneset(current, |latest| {
                cs::apply_request(latest, request).map_err(ApiError::Validation)
            })
            .await?;
        let generation = written.metadata.generation;
        if request.pre_pull {
            self.create_pre_pulls(&written, id, request).await;
        }
        let revision = match generation {
            Some(generation) => self.wait_revision(&namespace, &name, generation).await,
            None => None,
        };
        if let Err(error) =
            self.store().set_rollout_target(id, generation, revision.as_deref(), previous_revision).await
        {
            tracing::warn!(%error, rollout = %id, "could not record the rollout's target revision");
        }
        self.supersede_others(actor, id, &namespace, &name).await;
        self.notify_changed();
        Ok(())
    }

    /// Waits (up to the configured time) until the controller has named the revision of
    /// `generation`.
    async fn wait_revision(&self, namespace: &str, name: &str, generation: i64) -> Option<String> {
        let deadline = Instant::now() + self.inner.config.revision_wait;
        loop {
            if let Ok(Some(set)) = self.cloneset(namespace, name).await
                && let Some(status) = &set.status
                && status.observed_generation >= generation
                && !status.update_revision.is_empty()
            {
                return Some(status.update_revision.clone());
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Marks the other running rollouts of the same workload as superseded.
    async fn supersede_others(&self, actor: &str, id: &str, namespace: &str, name: &str) {
        let Ok(active) = self.store().active_rollouts().await else { return };
        for other in active.iter().filter(|r| {
            r.id != id && r.namespace == namespace && r.workload_name == name && r.workload_kind == "CloneSet"
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

    /// Creates one ImagePullJob per new image, pulling on the nodes of the CloneSet's pods.
    /// Failures are logged: pre-pulling only speeds the rollout up.
    async fn create_pre_pulls(&self, set: &CloneSet, id: &str, request: &RolloutRequest) {
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
        let selector = set.spec.selector.clone().unwrap_or_default();
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
                        "kind": "CloneSet",
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
        let set = if row.state().is_terminal() {
            None
        } else {
            Some(self.cloneset(&row.namespace, &row.workload_name).await?)
        };
        let pods = match &set {
            Some(Some(set)) if history => Some(self.pods_of(set).await?),
            _ => None,
        };
        let mut rollout = assemble(row, set.as_ref().map(Option::as_ref), pods.as_deref())?;
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
        let mut sets: HashMap<String, Option<CloneSet>> = HashMap::new();
        let mut items = Vec::with_capacity(page.items.len());
        for row in &page.items {
            let set = if row.state().is_terminal() {
                None
            } else {
                if !sets.contains_key(&row.workload_name) {
                    let set = self.cloneset(namespace, &row.workload_name).await?;
                    sets.insert(row.workload_name.clone(), set);
                }
                sets.get(&row.workload_name).map(Option::as_ref)
            };
            items.push(assemble(row, set, None)?);
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
        let set = match self.cloneset(namespace, &row.workload_name).await {
            Ok(Some(set)) => set,
            Ok(None) => {
                let error = ApiError::Conflict(format!("CloneSet {} no longer exists", row.workload_name));
                return self.refuse(ctx, &draft, error).await;
            }
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        let derived = cs::derive(stored, row.generation, row.revision.as_deref(), Some(&set));
        if derived.state.is_terminal() {
            let error = ApiError::Conflict(format!(
                "rollout {id} is {}{}: there is nothing to {verb}",
                derived.state.as_str(),
                derived.message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default()
            ));
            return self.refuse(ctx, &draft, error).await;
        }
        let change = match (&promote, verb) {
            (Some(request), _) => match &request.partition {
                None => Change::Partition(None),
                Some(partition) => match check_promotion(&set, partition) {
                    Ok(value) => Change::Partition(Some(value)),
                    Err(error) => return self.refuse(ctx, &draft, error).await,
                },
            },
            (None, "pause") => Change::Paused(true),
            (None, "resume") => Change::Paused(false),
            _ => match self.rollback_target(&row).await {
                Ok(change) => change,
                Err(error) => return self.refuse(ctx, &draft, error).await,
            },
        };

        self.record_intent(ctx, &draft).await?;
        let result =
            self.apply_action(&principal.name, &row, set, derived.revision.as_deref(), change, verb).await;
        let result = match result {
            Ok(()) => self.rollout_view(id, true).await,
            Err(error) => Err(error),
        };
        self.record_outcome(ctx, &draft, result, 202).await
    }

    /// The previous revision's template, for abort.
    async fn rollback_target(&self, row: &RolloutRow) -> Result<Change, ApiError> {
        let Some(previous) = row.previous_revision.clone() else {
            return Err(ApiError::Conflict(format!(
                "rollout {} has no previous revision to go back to (the workload had none when it started)",
                row.id
            )));
        };
        let revisions: Api<ControllerRevision> = Api::namespaced(self.client().clone(), &row.namespace);
        let revision =
            revisions.get_opt(&previous).await.map_err(|e| ApiError::Kubernetes(e.to_string()))?.ok_or_else(
                || ApiError::Conflict(format!("the previous revision {previous} no longer exists")),
            )?;
        let template = cs::revision_template(&revision)
            .ok_or_else(|| ApiError::Internal(format!("revision {previous} holds no pod template")))?;
        Ok(Change::Rollback { revision: previous, template: Box::new(template) })
    }

    async fn apply_action(
        &self,
        actor: &str,
        row: &RolloutRow,
        set: CloneSet,
        revision: Option<&str>,
        change: Change,
        verb: &str,
    ) -> Result<(), ApiError> {
        let before = cs::progress(&set, revision, None, row.created_at);
        let written = self
            .update_cloneset(set, |current| {
                Ok(match &change {
                    Change::Paused(paused) => cs::with_paused(current, *paused),
                    Change::Partition(partition) => cs::with_partition(current, partition.clone()),
                    Change::Rollback { template, .. } => cs::rolled_back(current, (**template).clone()),
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
            serde_json::to_value(cs::progress(&written, revision, None, row.created_at)).ok()
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

/// Checks a promotion's partition: in range, and not above the current one.
fn check_promotion(set: &CloneSet, partition: &IntOrPercent) -> Result<IntOrString, ApiError> {
    let value =
        cs::check_partition(partition, cs::replicas(set)).map_err(|m| ApiError::field("partition", m))?;
    let next = kruise_crds::intstr::partition_replicas(Some(&value), Some(cs::replicas(set))).unwrap_or(0);
    let current = cs::kept_by_partition(set);
    if next > current {
        return Err(ApiError::field(
            "partition",
            format!(
                "keeps {next} pod(s) back, more than the current partition ({current}): promote only moves forward"
            ),
        ));
    }
    Ok(value)
}

/// A rollout from its row and, while it runs, the live workload (`Some(None)`: deleted).
fn assemble(
    row: &RolloutRow,
    set: Option<Option<&CloneSet>>,
    pods: Option<&[Pod]>,
) -> Result<Rollout, ApiError> {
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
    if let Some(set) = set {
        let derived = cs::derive(stored, row.generation, row.revision.as_deref(), set);
        rollout.state = derived.state;
        rollout.message = derived.message.or(rollout.message);
        rollout.revision = derived.revision;
        if let Some(set) = set {
            rollout.progress = Some(cs::progress(set, rollout.revision.as_deref(), pods, row.created_at));
            rollout.conditions = cs::conditions(set);
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
    /// The pods of a CloneSet for a progress snapshot (`None` when they cannot be listed).
    pub(crate) async fn pods_for_progress(&self, set: &CloneSet) -> Option<Vec<Pod>> {
        self.pods_of(set).await.ok()
    }
}
