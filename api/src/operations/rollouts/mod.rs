//! Rollouts: create (idempotent), read, list, watch, pause, resume, promote and abort — of a
//! namespace's workloads and of cluster-scoped SidecarSets alike ([`RolloutScope`]): every kind
//! goes through the same paths, reaching its object through [`RolloutTarget`].

use std::time::Duration;

use futures::Stream;
use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Pod},
    apimachinery::pkg::util::intstr::IntOrString,
};
use kube::{
    Api, ResourceExt,
    api::{ListParams, PostParams},
};
use serde_json::Value;

use super::{Draft, Input, Operations, RequestContext, RolloutScope, parse_limit};
use crate::{
    error::{ApiError, FieldError},
    model::{
        Progress, PromoteRequest, Rollout, RolloutList, RolloutListParams, RolloutRequest, Transition,
        WorkloadCondition, WorkloadKind, WorkloadRef,
    },
    store::{
        NewTransition, RolloutQuery, RolloutRow, RolloutState,
        cursor::{self, Listing},
        now,
    },
    workload::{self as wl, Derived, RevisionHome, RolloutTarget},
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
    /// Back to what the ControllerRevision `revision` recorded.
    Rollback {
        revision: String,
        recorded: Box<ControllerRevision>,
    },
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
                type $w = kruise_crds::apps::v1beta1::CloneSet;
                $body
            }
            WorkloadKind::StatefulSet => {
                type $w = kruise_crds::apps::v1beta1::StatefulSet;
                $body
            }
            WorkloadKind::DaemonSet => {
                type $w = kruise_crds::apps::v1beta1::DaemonSet;
                $body
            }
            WorkloadKind::SidecarSet => {
                type $w = kruise_crds::apps::v1beta1::SidecarSet;
                $body
            }
        }
    };
}

mod create;

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
        W::api(self.client().clone(), namespace)
    }

    async fn typed_workload<W: RolloutTarget>(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<W>, ApiError> {
        self.workloads::<W>(namespace).get_opt(name).await.map_err(|e| ApiError::Kubernetes(e.to_string()))
    }

    /// The pods a workload owns (`None`: the kind has no pods of its own to count).
    async fn pods_of<W: RolloutTarget>(&self, workload: &W) -> Result<Option<Vec<Pod>>, ApiError> {
        let Some(scope) = workload.pod_scope() else { return Ok(None) };
        let pods: Api<Pod> = Api::namespaced(self.client().clone(), &scope.namespace);
        let list = pods
            .list(&ListParams::default().labels(&scope.list_selector))
            .await
            .map_err(|e| ApiError::Kubernetes(e.to_string()))?;
        Ok(Some(
            list.items
                .into_iter()
                .filter(|pod| pod.owner_references().iter().any(|o| o.uid == scope.owner_uid))
                .collect(),
        ))
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

    /// `GET /v1/namespaces/{ns}/rollouts/{id}` and `GET /v1/sidecarsets/{name}/rollouts/{id}`.
    pub async fn get_rollout(
        &self,
        ctx: &RequestContext,
        scope: &RolloutScope<'_>,
        id: &str,
    ) -> Result<Rollout, ApiError> {
        let draft = self.draft(ctx, "rollout.get", scope.audit_namespace(), format!("rollouts/{id}"));
        self.authorize_rollouts(ctx, &draft, scope).await?;
        let row = self.row_in(scope, id).await?;
        self.view(&row, true).await
    }

    /// The rollout `id` of `scope`, or 404.
    async fn row_in(&self, scope: &RolloutScope<'_>, id: &str) -> Result<RolloutRow, ApiError> {
        match self.store().rollout(id).await? {
            Some(row) if scope.holds(&row) => Ok(row),
            _ => Err(scope.not_found(id)),
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

    /// `GET /v1/namespaces/{ns}/rollouts` and `GET /v1/sidecarsets/{name}/rollouts`.
    pub async fn list_rollouts(
        &self,
        ctx: &RequestContext,
        scope: &RolloutScope<'_>,
        params: &RolloutListParams,
    ) -> Result<RolloutList, ApiError> {
        let draft = self.draft(ctx, "rollout.list", scope.audit_namespace(), scope.collection());
        self.authorize_rollouts(ctx, &draft, scope).await?;
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
        let (workload_name, workload_kind) = match scope {
            // No namespace names no rollout (SidecarSets' are stored without one).
            RolloutScope::Namespace("") => {
                return Err(ApiError::field("namespace", "a namespace is required"));
            }
            RolloutScope::Namespace(_) => (params.workload.clone(), None),
            RolloutScope::SidecarSet(name) => {
                (Some(name.to_string()), Some(WorkloadKind::SidecarSet.as_str().to_string()))
            }
        };
        let query = RolloutQuery {
            namespace: scope.store_namespace().into(),
            workload_name,
            workload_kind,
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

    /// `POST …/rollouts/{id}/{pause|resume|promote|abort}`, in a namespace or of a SidecarSet.
    pub async fn act_on_rollout(
        &self,
        ctx: &RequestContext,
        scope: &RolloutScope<'_>,
        id: &str,
        action: RolloutAction,
    ) -> Result<Rollout, ApiError> {
        let verb = action.verb();
        let mut draft =
            self.draft(ctx, action.audit_action(), scope.audit_namespace(), format!("rollouts/{id}"));
        draft.rollout_id = Some(id.to_string());
        let principal = self.authorize_rollouts(ctx, &draft, scope).await?;
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
        let row = match self.row_in(scope, id).await {
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

    /// The ControllerRevision the rollout replaced, for abort: found where the kind keeps its
    /// revisions, and holding something to go back to.
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
        let kube_error = |e: kube::Error| ApiError::Kubernetes(e.to_string());
        let found = match workload.revision_home(&previous) {
            RevisionHome::Named { namespace, names } => {
                let revisions: Api<ControllerRevision> = Api::namespaced(self.client().clone(), &namespace);
                let mut found = None;
                for name in names {
                    found = revisions.get_opt(&name).await.map_err(kube_error)?;
                    if found.is_some() {
                        break;
                    }
                }
                found
            }
            RevisionHome::Labelled { selector, name, owner_uid } => {
                let revisions: Api<ControllerRevision> = Api::all(self.client().clone());
                let list =
                    revisions.list(&ListParams::default().labels(&selector)).await.map_err(kube_error)?;
                list.items.into_iter().find(|revision| {
                    revision.metadata.name.as_deref() == Some(name.as_str())
                        && revision.owner_references().iter().any(|owner| owner.uid == owner_uid)
                })
            }
        };
        let revision = found.ok_or_else(|| {
            ApiError::Conflict(format!("the previous revision {previous} no longer exists"))
        })?;
        if workload.rolled_back(&revision).is_none() {
            return Err(ApiError::Internal(format!("revision {previous} holds nothing to roll back to")));
        }
        Ok(Change::Rollback { revision: previous, recorded: Box::new(revision) })
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
                    Change::Rollback { revision, recorded } => {
                        current.rolled_back(recorded).ok_or_else(|| {
                            ApiError::Internal(format!("revision {revision} holds nothing to roll back to"))
                        })?
                    }
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

    /// `GET …/rollouts/{id}/events`, in a namespace or of a SidecarSet: the rollout now, then
    /// every change, until it reaches a terminal state.
    pub async fn watch_rollout(
        &self,
        ctx: &RequestContext,
        scope: &RolloutScope<'_>,
        id: &str,
    ) -> Result<impl Stream<Item = Result<Rollout, ApiError>> + Send + 'static, ApiError> {
        let draft = self.draft(ctx, "rollout.watch", scope.audit_namespace(), format!("rollouts/{id}"));
        self.authorize_rollouts(ctx, &draft, scope).await?;
        let row = self.row_in(scope, id).await?;
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
            PodCounts::Count => self.pods_of(&workload).await?,
            // A final snapshot without pod counts is still worth recording.
            PodCounts::WhenEnded if derived.state.is_terminal() => {
                self.pods_of(&workload).await.ok().flatten()
            }
            _ => None,
        };
        let progress = wl::progress(&workload, derived.revision.as_deref(), pods.as_deref(), row.created_at);
        Ok(Live { derived, progress: Some(progress), conditions: workload.status_view().conditions })
    }
}
