//! Creating a rollout: the request checked and audited, an idempotent retry answered as the
//! first request was, the target changed (re-read and re-applied on a write conflict), the
//! revision it moves to recorded, and the other running rollouts of the target superseded.

use std::time::{Duration, Instant};

use kube::{
    Api, ResourceExt,
    api::{DynamicObject, PostParams},
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{CreatedRollout, canonical_json};
use crate::{
    auth::Principal,
    error::{ApiError, FieldError},
    model::{RolloutRequest, SidecarSetRolloutRequest, WorkloadKind},
    operations::{
        Draft, Input, Operations, RequestContext, RolloutScope, Transport, tasks::check_idempotency_key,
    },
    store::{NewRollout, NewTransition, Outcome, RolloutRow, RolloutState, StoreError, now},
    workload::{self as wl, RolloutTarget},
};

impl Operations {
    /// `POST /v1/namespaces/{ns}/rollouts`.
    pub async fn create_rollout(
        &self,
        ctx: &RequestContext,
        namespace: &str,
        idempotency_key: Option<&str>,
        body: Input<RolloutRequest>,
    ) -> Result<CreatedRollout, ApiError> {
        let scope = RolloutScope::Namespace(namespace);
        let mut draft = self.draft(ctx, "rollout.create", Some(namespace), scope.collection());
        let principal = self.authorize_rollouts(ctx, &draft, &scope).await?;
        if let Err(error) = scope.check() {
            return self.refuse(ctx, &draft, error).await;
        }
        let request = match body.parse() {
            Ok(request) => request,
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        let recorded = serde_json::to_value(&request).unwrap_or(Value::Null);
        draft.with_body(&recorded);
        draft.target = format!("{}/{}", request.workload.kind.as_str(), request.workload.name);
        if request.workload.kind.is_cluster_scoped() {
            let error = ApiError::field(
                "workload.kind",
                format!(
                    "a {kind} is cluster-scoped: start its rollouts with POST /v1/sidecarsets/{{name}}/rollouts",
                    kind = request.workload.kind.as_str()
                ),
            );
            return self.refuse(ctx, &draft, error).await;
        }
        let mut errors = Vec::new();
        check_idempotency_key(idempotency_key, &mut errors);
        let name_problems = kruise_crds::validation::meta::dns1123_subdomain_problems(&request.workload.name);
        if !name_problems.is_empty() {
            errors.push(FieldError::new("workload.name", name_problems.join("; ")));
        }
        if !errors.is_empty() {
            return self.refuse(ctx, &draft, ApiError::Validation(errors)).await;
        }
        self.create_checked(ctx, &mut draft, &scope, &principal, idempotency_key, request).await
    }

    /// `POST /v1/sidecarsets/{name}/rollouts`: the same as a namespace's rollout, for the
    /// cluster-scoped SidecarSet `name` (which needs a token for every namespace).
    pub async fn create_sidecarset_rollout(
        &self,
        ctx: &RequestContext,
        name: &str,
        idempotency_key: Option<&str>,
        body: Input<SidecarSetRolloutRequest>,
    ) -> Result<CreatedRollout, ApiError> {
        let scope = RolloutScope::SidecarSet(name);
        let mut draft = self.draft(ctx, "rollout.create", None, format!("SidecarSet/{name}"));
        let principal = self.authorize_rollouts(ctx, &draft, &scope).await?;
        if let Err(error) = scope.check() {
            return self.refuse(ctx, &draft, error).await;
        }
        let request = match body.parse() {
            Ok(request) => request,
            Err(error) => return self.refuse(ctx, &draft, error).await,
        };
        draft.with_body(&serde_json::to_value(&request).unwrap_or(Value::Null));
        let mut errors = Vec::new();
        check_idempotency_key(idempotency_key, &mut errors);
        if !errors.is_empty() {
            return self.refuse(ctx, &draft, ApiError::Validation(errors)).await;
        }
        let request = request.into_rollout_request(name);
        self.create_checked(ctx, &mut draft, &scope, &principal, idempotency_key, request).await
    }

    /// The part of creating a rollout once its request is checked: the replay of an earlier
    /// request with the same idempotency key, then the target's kind.
    async fn create_checked(
        &self,
        ctx: &RequestContext,
        draft: &mut Draft,
        scope: &RolloutScope<'_>,
        principal: &Principal,
        idempotency_key: Option<&str>,
        request: RolloutRequest,
    ) -> Result<CreatedRollout, ApiError> {
        let body_value = serde_json::to_value(&request).unwrap_or(Value::Null);
        let body_hash = hex::encode(Sha256::digest(canonical_json(&body_value).as_bytes()));

        let namespace = scope.store_namespace();
        if let Some(key) = idempotency_key {
            match self.store().rollout_by_idempotency_key(&principal.name, namespace, key).await {
                Ok(Some(existing)) => return self.replay(ctx, draft, existing, &body_hash).await,
                Ok(None) => {}
                Err(error) => return self.refuse(ctx, draft, error.into()).await,
            }
        }

        let created = Created { principal: &principal.name, idempotency_key, body_value, body_hash };
        by_kind!(request.workload.kind, W => {
            self.create_rollout_of::<W>(ctx, draft, scope, request, created).await
        })
    }

    /// The part of `create_rollout` that reads and writes the workload.
    async fn create_rollout_of<W: RolloutTarget>(
        &self,
        ctx: &RequestContext,
        draft: &mut Draft,
        scope: &RolloutScope<'_>,
        request: RolloutRequest,
        created: Created<'_>,
    ) -> Result<CreatedRollout, ApiError> {
        let Created { principal, idempotency_key, body_value, body_hash } = created;
        let kind = W::KIND.as_str();
        let name = request.workload.name.clone();
        let namespace = scope.store_namespace();
        let current = match self.typed_workload::<W>(namespace, &name).await {
            Ok(Some(workload)) => workload,
            Ok(None) => {
                let error = match scope {
                    RolloutScope::Namespace(namespace) => ApiError::field(
                        scope.name_field(),
                        format!("{kind} {name:?} not found in namespace {namespace:?}"),
                    ),
                    RolloutScope::SidecarSet(_) => ApiError::NotFound(format!("{kind} {name:?} not found")),
                };
                return self.refuse(ctx, draft, error).await;
            }
            Err(error) => return self.refuse(ctx, draft, error).await,
        };
        if let Err(errors) = current.apply(&request) {
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
        let intent = draft.record(ctx, Outcome::Pending, 0, None, None);
        match self.store().create_rollout(&intent, &rollout).await {
            Ok(()) => self.metrics().audit_written("pending"),
            Err(StoreError::Duplicate) if idempotency_key.is_some() => {
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
            .update_workload(current, |latest| latest.apply(request).map_err(ApiError::Validation))
            .await?;
        let generation = written.meta().generation;
        if request.pre_pull
            && let Some(scope) = written.pod_scope()
        {
            self.create_pre_pulls::<W>(&written, &scope, id, request).await;
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
    async fn create_pre_pulls<W: RolloutTarget>(
        &self,
        set: &W,
        scope: &wl::PodScope,
        id: &str,
        request: &RolloutRequest,
    ) {
        let namespace = scope.namespace.clone();
        let resource = kube::api::ApiResource {
            group: "apps.kruise.io".into(),
            version: "v1beta1".into(),
            api_version: "apps.kruise.io/v1beta1".into(),
            kind: "ImagePullJob".into(),
            plural: "imagepulljobs".into(),
        };
        let api: Api<DynamicObject> = Api::namespaced_with(self.client().clone(), &namespace, &resource);
        let short: String = id.chars().take(8).collect();
        let selector = scope.selector.clone();
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
        let grpc = (ctx.transport == Transport::Grpc).then_some(0);
        let record = draft.record(
            ctx,
            Outcome::Accepted,
            202,
            grpc,
            Some(format!("idempotent retry: answered with rollout {}", existing.id)),
        );
        self.write_audit(&record).await?;
        Ok(CreatedRollout { rollout, replayed: true })
    }
}

/// What `create_rollout` hands on once the request is checked.
struct Created<'a> {
    principal: &'a str,
    idempotency_key: Option<&'a str>,
    body_value: Value,
    body_hash: String,
}
