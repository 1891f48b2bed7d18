//! One reconcile of one Advanced StatefulSet (upstream `Reconcile` + `UpdateStatefulSet`):
//! claim the pods, get the revisions, refresh in-place updates and lifecycle states, scale,
//! then (when scaling is done and nothing was refreshed) roll the update, and write the
//! status. The decisions come from [`super::core`]; this module executes them with
//! expectations, so a slow cache never makes it create or delete a pod twice.

use std::{
    collections::{BTreeMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{PersistentVolumeClaim, Pod},
    },
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{StatefulSet, StatefulSetStatus, StatefulSetUpdateStrategyType},
    common::{LIFECYCLE_STATE_KEY, LIFECYCLE_TIMESTAMP_KEY, LifecycleState},
};
use kube::{
    Api, Resource, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

use super::{
    controller::{CONTROLLER_NAME, Context, FIELD_MANAGER},
    core::{
        self, DeleteAction, Members, PodUpdateAction, ScaleStep, Slot, StatusInputs, SyncFailure, UpdateStep,
        Which,
        identity::{
            POD_INDEX_LABEL, POD_NAME_LABEL, claims_for, identity_matches, is_member_of, new_pod,
            storage_matches,
        },
        pods::is_finished,
        retention::{desired_owners, existing_claims, updated_claim_owners},
    },
    revision::ensure_update_revision,
};
use crate::{
    ControllerError,
    inplace::{Revision, UpdateOptions, completion::check_update_completed},
    runtime::{
        events::EventKind,
        expectations::{EXPECTATION_TIMEOUT, Satisfied, ScaleAction},
    },
    workload::{
        claim::{Claim, claim, controller_uid},
        lifecycle::{PreparingNormalRule, refresh_lifecycle_state},
        pod_ops::{self, PRE_DELETE_HOLDER, PRE_UPDATE_HOLDER},
        pods::{is_terminating, revision_hash},
        revision::{template_of, truncate_history},
    },
};

/// What a reconcile asks of the controller loop.
#[derive(Debug, Default)]
pub struct SyncOutcome {
    /// Reconcile again after this long at the latest.
    pub requeue_after: Option<Duration>,
}

fn earliest(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn key_of(set: &StatefulSet) -> String {
    format!("{}/{}", set.namespace().unwrap_or_default(), set.name_any())
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.namespace().unwrap_or_default(), pod.name_any())
}

/// The expectation name of a PVC (pods and PVCs share the set's expectations).
fn claim_key(name: &str) -> String {
    format!("pvc/{name}")
}

fn params() -> PatchParams {
    PatchParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() }
}

/// The revisions a reconcile works with.
struct Revisions {
    all: Vec<ControllerRevision>,
    current: ControllerRevision,
    update: ControllerRevision,
    collision_count: i32,
}

impl Revisions {
    fn named(&self, name: &str) -> Option<&ControllerRevision> {
        self.all.iter().find(|r| r.metadata.name.as_deref() == Some(name))
    }
}

/// Reconciles one set.
pub async fn sync(set: Arc<StatefulSet>, ctx: &Context) -> Result<SyncOutcome, ControllerError> {
    let key = key_of(&set);
    if set.metadata.deletion_timestamp.is_some() {
        ctx.scale_expectations.delete(&key);
        ctx.pre_download_cleaned.lock().remove(&set.uid().unwrap_or_default());
        return Ok(SyncOutcome::default());
    }
    let namespace = set.namespace().unwrap_or_default();
    let uid = set.uid().unwrap_or_default();
    let set_name = set.name_any();
    let now = Instant::now();

    // Only the pods this workload controls and the orphans it may adopt.
    let claimable: Vec<Arc<Pod>> = ctx.pods.owned_or_orphaned(&namespace, &uid);
    let claims: BTreeMap<String, PersistentVolumeClaim> = ctx
        .pvcs
        .state()
        .into_iter()
        .filter(|p| p.namespace().as_deref() == Some(namespace.as_str()))
        .map(|p| (p.name_any(), (*p).clone()))
        .collect();

    // Creates and deletes we asked for must show in the cache before deciding again.
    let mut present: HashSet<String> = claimable
        .iter()
        .filter(|p| controller_uid(p) == Some(uid.as_str()) && !is_terminating(p))
        .map(|p| p.name_any())
        .collect();
    present.extend(
        claims.values().filter(|c| c.metadata.deletion_timestamp.is_none()).map(|c| claim_key(&c.name_any())),
    );
    ctx.scale_expectations.observe(&key, &present);
    if let Satisfied::No { retry_after, pending } =
        ctx.scale_expectations.satisfied(&key, now, EXPECTATION_TIMEOUT)
    {
        tracing::debug!(statefulset = %key, pending, "waiting for the cache to show earlier creates and deletes");
        ctx.metrics.expectation_timeouts(CONTROLLER_NAME, ctx.scale_expectations.timeouts());
        return Ok(SyncOutcome { requeue_after: Some(retry_after.min(Duration::from_secs(5))) });
    }

    // Claim the pods: adopt orphans named and selected like ours, release ours that no longer are.
    let selector = set.spec.selector.clone().unwrap_or_default();
    let selects = |pod: &Pod| {
        !kruise_crds::selector::is_empty(&selector) && kruise_crds::selector::matches(&selector, pod.labels())
    };
    let keeps = |pod: &Pod| selects(pod) && is_member_of(&set_name, pod);
    let adopts = |pod: &Pod| keeps(pod) && !is_terminating(pod) && !is_finished(pod);
    let mut pods: Vec<Pod> = Vec::new();
    for pod in &claimable {
        match claim(pod, &uid, keeps, adopts) {
            Claim::Keep => pods.push((**pod).clone()),
            Claim::Release => {
                tracing::info!(statefulset = %key, pod = %pod.name_any(), "releasing a pod the set no longer selects");
                pod_ops::release(&ctx.client, pod, &uid).await?;
            }
            Claim::Adopt => {
                if let Some(owner) = core::identity::controller_reference(&set) {
                    tracing::info!(statefulset = %key, pod = %pod.name_any(), "adopting an orphan pod");
                    pod_ops::adopt(&ctx.client, pod, owner).await?;
                    return Ok(SyncOutcome { requeue_after: Some(Duration::from_millis(200)) });
                }
            }
            Claim::Ignore => {}
        }
    }

    // Revisions.
    let owned_revisions: Vec<ControllerRevision> = ctx
        .revisions
        .state()
        .into_iter()
        .filter(|r| r.namespace().as_deref() == Some(namespace.as_str()))
        .filter(|r| r.owner_references().iter().any(|o| o.uid == uid))
        .map(|r| (*r).clone())
        .collect();
    let (update, collision_count) = ensure_update_revision(&ctx.client, &set, &owned_revisions).await?;
    let current_name = set.status.as_ref().map(|s| s.current_revision.clone()).unwrap_or_default();
    let current = owned_revisions
        .iter()
        .find(|r| r.name_any() == current_name)
        .cloned()
        .unwrap_or_else(|| update.clone());
    let mut all = owned_revisions;
    if !all.iter().any(|r| r.name_any() == update.name_any()) {
        all.push(update.clone());
    }
    let revisions = Revisions { all, current, update, collision_count };
    let (current_name, update_name) = (revisions.current.name_any(), revisions.update.name_any());

    if ctx.pre_download {
        pre_download(&set, ctx, &revisions).await;
    }

    // Pods we wrote must be seen at least that new before acting on them again.
    for pod in &pods {
        let rv = pod.resource_version().unwrap_or_default();
        if !ctx.rv_expectations.is_satisfied(&pod_key(pod), &rv, now, EXPECTATION_TIMEOUT) {
            return Ok(SyncOutcome { requeue_after: Some(Duration::from_millis(500)) });
        }
    }

    let members = core::members(&set, &pods, &update_name, &ctx.options);
    let (refreshed, mut requeue) = refresh(&set, ctx, &pods, &update_name).await;

    let mut failures: Vec<(SyncFailure, String)> = Vec::new();
    let scale_plan = core::plan_scale(&set, &members, &claims, &ctx.options, Timestamp::now());
    requeue = earliest(requeue, scale_plan.requeue_after);
    if !scale_plan.steps.is_empty() || scale_plan.waiting_for.is_some() {
        tracing::debug!(statefulset = %key, steps = ?scale_plan.steps, waiting_for = ?scale_plan.waiting_for, "scale plan");
    }
    let mut scaled_ok = true;
    for step in &scale_plan.steps {
        if let Err((failure, error)) =
            execute_scale_step(&set, ctx, &members, &claims, &revisions, step).await
        {
            tracing::warn!(statefulset = %key, ?step, %error, "scaling step failed");
            failures.push((failure, error.to_string()));
            scaled_ok = false;
            break;
        }
    }

    let (mut current_leaving, mut updated_leaving) = (0, 0);
    if scaled_ok
        && !scale_plan.exit
        && !refreshed
        && set.spec.update_strategy.type_ == StatefulSetUpdateStrategyType::RollingUpdate
    {
        let gates = *ctx.engine.gates();
        let options = update_options(&set);
        let target = Revision::from_controller_revision(&revisions.update).ok();
        let can_in_place = |pod: &Pod| {
            let old =
                revisions.named(revision_hash(pod)).and_then(|r| Revision::from_controller_revision(r).ok());
            match (old, &target) {
                (Some(old), Some(target)) => ctx.engine.can_update_in_place(&old, target, &options),
                _ => false,
            }
        };
        let update_completed = |pod: &Pod| check_update_completed(pod, &gates).is_ok();
        let verdicts = core::PodVerdicts {
            update_completed: &update_completed,
            can_update_in_place: &can_in_place,
            resize_claims: core::resize::resize_enabled(&set, &ctx.options).then_some(&claims),
        };
        let plan = core::plan_update(
            &set,
            &members,
            &current_name,
            &update_name,
            &ctx.options,
            Timestamp::now(),
            &verdicts,
        );
        requeue = earliest(requeue, plan.requeue_after);
        if !plan.steps.is_empty() || plan.waiting_for.is_some() {
            tracing::debug!(statefulset = %key, steps = ?plan.steps, waiting_for = ?plan.waiting_for, "update plan");
        }
        current_leaving = plan.current_leaving;
        updated_leaving = plan.updated_leaving;
        for step in &plan.steps {
            match execute_update_step(&set, ctx, &members, &claims, &revisions, step).await {
                Ok(after) => requeue = earliest(requeue, after),
                Err(error) => {
                    tracing::warn!(statefulset = %key, ?step, %error, "update step failed");
                    failures.push((SyncFailure::UpdatePod, error.to_string()));
                    break;
                }
            }
        }
    }

    // Status, from the cache's view of the pods (the next event refreshes it).
    let status = core::compute_status(
        &set,
        &members,
        &StatusInputs {
            current_revision: &current_name,
            update_revision: &update_name,
            collision_count: revisions.collision_count,
            current_leaving,
            updated_leaving,
            failures: &failures,
            claims: &claims,
            now: Timestamp::now(),
        },
    );
    if set.status.as_ref() != Some(&status) {
        write_status(ctx, &set, status).await?;
    }

    let mut keep: HashSet<String> = [current_name.clone(), update_name.clone()].into();
    keep.extend(pods.iter().map(|p| revision_hash(p).to_string()));
    truncate_history(
        &ctx.client,
        &namespace,
        &revisions.all,
        &keep,
        set.spec.revision_history_limit.unwrap_or(10),
    )
    .await?;
    if let Some((_, message)) = failures.first() {
        return Err(ControllerError::Invalid(message.clone()));
    }
    Ok(SyncOutcome { requeue_after: requeue })
}

/// Moves in-place updates and lifecycle states forward, and sets `KruisePodReady` on pods that
/// carry its gate. True when a lifecycle state changed (the rolling update then waits a round,
/// as upstream). Failures are logged: one pod must not hold the whole set.
async fn refresh(
    set: &StatefulSet,
    ctx: &Context,
    pods: &[Pod],
    update_revision: &str,
) -> (bool, Option<Duration>) {
    let mut modified = false;
    let mut requeue = None;
    for pod in pods.iter().filter(|p| !is_terminating(p)) {
        let result: Result<(), ControllerError> = async {
            let refreshed = ctx.engine.refresh(pod).await.map_err(|e| ControllerError::Invalid(e.to_string()))?;
            requeue = earliest(requeue, refreshed.requeue_after);
            if let Some(rv) = &refreshed.resource_version {
                ctx.rv_expectations.expect(&pod_key(pod), rv, Instant::now());
            }
            let completed = check_update_completed(pod, ctx.engine.gates()).is_ok();
            let at_update_revision = revision_hash(pod) == update_revision;
            let lifecycle = set.spec.lifecycle.as_ref();
            let rule = PreparingNormalRule::AtOnce;
            if let Some(transition) =
                refresh_lifecycle_state(lifecycle, pod, at_update_revision, completed, rule)
            {
                if let Some(rv) = pod_ops::set_lifecycle(&ctx.client, pod, transition.state.as_str()).await? {
                    ctx.rv_expectations.expect(&pod_key(pod), &rv, Instant::now());
                    modified = true;
                    tracing::debug!(pod = %pod.name_any(), state = %transition.state.as_str(), "lifecycle state moved");
                }
                if transition.releases_update_hold() {
                    pod_ops::set_kruise_pod_ready(&ctx.client, pod, Some((PRE_UPDATE_HOLDER, false))).await?;
                }
            }
            pod_ops::set_kruise_pod_ready(&ctx.client, pod, None).await?;
            Ok(())
        }
        .await;
        if let Err(error) = result {
            tracing::warn!(statefulset = %key_of(set), pod = %pod.name_any(), %error, "refreshing a pod failed");
            requeue = earliest(requeue, Some(Duration::from_secs(1)));
        }
    }
    (modified, requeue)
}

fn slot_pod<'a>(members: &'a Members<'_>, ordinal: i32) -> Option<&'a Pod> {
    let index = members.range.index_of(ordinal)?;
    match members.slots.get(index) {
        Some(Slot::Pod(pod)) => Some(pod),
        _ => None,
    }
}

fn condemned_pod<'a>(members: &'a Members<'_>, ordinal: i32) -> Option<&'a Pod> {
    members.condemned.iter().copied().find(|pod| core::identity::ordinal_of(pod) == Some(ordinal))
}

fn missing_pod(ordinal: i32) -> ControllerError {
    ControllerError::Invalid(format!("no pod at ordinal {ordinal}"))
}

/// Executes one scaling step; an error carries the condition it is reported under.
async fn execute_scale_step(
    set: &StatefulSet,
    ctx: &Context,
    members: &Members<'_>,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
    revisions: &Revisions,
    step: &ScaleStep,
) -> Result<(), (SyncFailure, ControllerError)> {
    let update_failure = |error| (SyncFailure::UpdatePod, error);
    match step {
        ScaleStep::Create { ordinal, revision } => {
            create_pod(set, ctx, claims, revisions, *ordinal, *revision)
                .await
                .map_err(|e| (SyncFailure::CreatePod, e))
        }
        ScaleStep::DeleteFinished { ordinal, action } => {
            let pod = slot_pod(members, *ordinal).ok_or_else(|| update_failure(missing_pod(*ordinal)))?;
            delete_or_prepare(set, ctx, pod, action).await.map_err(update_failure)
        }
        ScaleStep::CreateMissingClaims { ordinal } => {
            let pod = slot_pod(members, *ordinal).ok_or_else(|| update_failure(missing_pod(*ordinal)))?;
            ensure_claims(set, ctx, claims, *ordinal).await.map_err(|e| (SyncFailure::CreatePod, e))?;
            apply_retention(set, ctx, pod, false, claims).await.map_err(update_failure)
        }
        ScaleStep::Repair { ordinal } => {
            let pod = slot_pod(members, *ordinal).ok_or_else(|| update_failure(missing_pod(*ordinal)))?;
            repair(set, ctx, pod, claims).await.map_err(update_failure)
        }
        ScaleStep::RetainCondemnedClaims { ordinal } => {
            let pod =
                condemned_pod(members, *ordinal).ok_or_else(|| update_failure(missing_pod(*ordinal)))?;
            apply_retention(set, ctx, pod, true, claims).await.map_err(update_failure)
        }
        ScaleStep::DeleteCondemned { ordinal, action } => {
            let pod =
                condemned_pod(members, *ordinal).ok_or_else(|| update_failure(missing_pod(*ordinal)))?;
            delete_or_prepare(set, ctx, pod, action).await.map_err(update_failure)
        }
    }
}

/// Creates the pod of `ordinal` at `which` revision, its PVCs first (upstream
/// `CreateStatefulPod`).
async fn create_pod(
    set: &StatefulSet,
    ctx: &Context,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
    revisions: &Revisions,
    ordinal: i32,
    which: Which,
) -> Result<(), ControllerError> {
    let revision = match which {
        Which::Current => &revisions.current,
        Which::Update => &revisions.update,
    };
    let template = template_of(revision).unwrap_or_else(|| set.spec.template.clone());
    let pod = new_pod(set, &template, &revision.name_any(), ordinal, &ctx.options, Timestamp::now());
    ensure_claims(set, ctx, claims, ordinal).await?;
    let key = key_of(set);
    let name = pod.name_any();
    ctx.scale_expectations.expect(&key, ScaleAction::Create, &name, Instant::now());
    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), &set.namespace().unwrap_or_default());
    let post = PostParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
    match api.create(&post, &pod).await {
        Ok(_) => {
            tracing::info!(statefulset = %key, pod = %name, revision = %revision.name_any(), "created pod");
            ctx.event(
                set,
                EventKind::Normal,
                "SuccessfulCreate",
                format!("create Pod {name} in StatefulSet {} successful", set.name_any()),
            );
            Ok(())
        }
        Err(error) => {
            ctx.scale_expectations.forget(&key, ScaleAction::Create, &name);
            ctx.event(
                set,
                EventKind::Warning,
                "FailedCreate",
                format!("create Pod {name} in StatefulSet {} failed error: {error}", set.name_any()),
            );
            Err(ControllerError::Invalid(format!("StatefulPodControl failed to create Pod error: {error}")))
        }
    }
}

/// Creates the PVCs of `ordinal` that do not exist (upstream `createPersistentVolumeClaims`);
/// a PVC being deleted is an error until it is gone. With `whenDeleted: Delete` the set owns
/// the new PVCs from the start.
async fn ensure_claims(
    set: &StatefulSet,
    ctx: &Context,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
    ordinal: i32,
) -> Result<(), ControllerError> {
    let key = key_of(set);
    let api: Api<PersistentVolumeClaim> =
        Api::namespaced(ctx.client.clone(), &set.namespace().unwrap_or_default());
    let post = PostParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
    let pod_name = core::identity::pod_name(&set.name_any(), ordinal);
    let owner = (ctx.options.auto_delete_pvc && desired_owners(set, false).set)
        .then(|| set.metadata.uid.clone())
        .flatten()
        .map(|uid| k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
            api_version: "apps.kruise.io/v1beta1".into(),
            kind: "StatefulSet".into(),
            name: set.name_any(),
            uid,
            ..Default::default()
        });
    let mut errors = Vec::new();
    for mut claim in claims_for(set, ordinal) {
        let name = claim.name_any();
        match claims.get(&name) {
            Some(existing) if existing.metadata.deletion_timestamp.is_some() => {
                errors.push(format!("pvc {name} is to be deleted"));
                continue;
            }
            Some(_) => continue,
            None => {}
        }
        claim.metadata.owner_references = owner.clone().map(|o| vec![o]);
        ctx.scale_expectations.expect(&key, ScaleAction::Create, &claim_key(&name), Instant::now());
        match api.create(&post, &claim).await {
            Ok(_) => ctx.event(
                set,
                EventKind::Normal,
                "SuccessfulCreate",
                format!("create Claim {name} Pod {pod_name} in StatefulSet {} success", set.name_any()),
            ),
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(error) => {
                ctx.scale_expectations.forget(&key, ScaleAction::Create, &claim_key(&name));
                ctx.event(
                    set,
                    EventKind::Warning,
                    "FailedCreate",
                    format!(
                        "create Claim {name} for Pod {pod_name} in StatefulSet {} failed error: {error}",
                        set.name_any()
                    ),
                );
                errors.push(format!("failed to create PVC {name}: {error}"));
            }
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(ControllerError::Invalid(errors.join(", "))) }
}

/// Brings the owners of the pod's existing PVCs in line with the retention policy.
async fn apply_retention(
    set: &StatefulSet,
    ctx: &Context,
    pod: &Pod,
    scaled_down: bool,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
) -> Result<(), ControllerError> {
    if !ctx.options.auto_delete_pvc {
        return Ok(());
    }
    let want = desired_owners(set, scaled_down);
    let api: Api<PersistentVolumeClaim> =
        Api::namespaced(ctx.client.clone(), &set.namespace().unwrap_or_default());
    for claim in existing_claims(set, pod, claims) {
        let Some(references) = updated_claim_owners(claim, set, pod, want) else { continue };
        let patch =
            json!({"metadata": {"ownerReferences": references, "resourceVersion": claim.resource_version()}});
        match api.patch(&claim.name_any(), &params(), &Patch::Merge(&patch)).await {
            Ok(_) => {
                tracing::debug!(claim = %claim.name_any(), ?want, "PVC owners follow the retention policy")
            }
            Err(kube::Error::Api(status)) if status.code == 409 || status.code == 404 => {}
            Err(error) => {
                return Err(ControllerError::Invalid(format!(
                    "Could not update claim {} for delete policy ownerRefs: {error}",
                    claim.name_any()
                )));
            }
        }
    }
    Ok(())
}

/// Restores a pod's identity labels, missing PVCs and PVC owners (upstream
/// `UpdateStatefulPod`; a running pod's volumes cannot change, so only its PVCs are created).
async fn repair(
    set: &StatefulSet,
    ctx: &Context,
    pod: &Pod,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
) -> Result<(), ControllerError> {
    let name = pod.name_any();
    if !identity_matches(set, pod) {
        let mut labels = serde_json::Map::new();
        labels.insert(POD_NAME_LABEL.into(), json!(name));
        if ctx.options.pod_index_label
            && let Some(ordinal) = core::identity::ordinal_of(pod)
        {
            labels.insert(POD_INDEX_LABEL.into(), json!(ordinal.to_string()));
        }
        let api: Api<Pod> = Api::namespaced(ctx.client.clone(), &set.namespace().unwrap_or_default());
        let patched =
            api.patch(&name, &params(), &Patch::Merge(&json!({"metadata": {"labels": labels}}))).await?;
        if let Some(rv) = patched.metadata.resource_version {
            ctx.rv_expectations.expect(&pod_key(pod), &rv, Instant::now());
        }
        ctx.event(
            set,
            EventKind::Normal,
            "SuccessfulUpdate",
            format!("update Pod {name} in StatefulSet {} successful", set.name_any()),
        );
    }
    if !storage_matches(set, pod)
        && let Some(ordinal) = core::identity::ordinal_of(pod)
    {
        ensure_claims(set, ctx, claims, ordinal).await?;
    }
    apply_retention(set, ctx, pod, false, claims).await
}

/// Deletes a pod, or moves it to `PreparingDelete` while the preDelete hook holds it.
async fn delete_or_prepare(
    set: &StatefulSet,
    ctx: &Context,
    pod: &Pod,
    action: &DeleteAction,
) -> Result<(), ControllerError> {
    match action {
        DeleteAction::PrepareDelete { mark_pod_not_ready } => {
            if let Some(rv) =
                pod_ops::set_lifecycle(&ctx.client, pod, LifecycleState::PreparingDelete.as_str()).await?
            {
                ctx.rv_expectations.expect(&pod_key(pod), &rv, Instant::now());
            }
            if *mark_pod_not_ready {
                pod_ops::set_kruise_pod_ready(&ctx.client, pod, Some((PRE_DELETE_HOLDER, true))).await?;
            }
            Ok(())
        }
        DeleteAction::Delete => {
            let key = key_of(set);
            let name = pod.name_any();
            ctx.scale_expectations.expect(&key, ScaleAction::Delete, &name, Instant::now());
            match pod_ops::delete_pod(&ctx.client, pod).await {
                Ok(()) => {
                    tracing::info!(statefulset = %key, pod = %name, "deleted pod");
                    ctx.event(
                        set,
                        EventKind::Normal,
                        "SuccessfulDelete",
                        format!("delete Pod {name} in StatefulSet {} successful", set.name_any()),
                    );
                    Ok(())
                }
                Err(error) => {
                    ctx.scale_expectations.forget(&key, ScaleAction::Delete, &name);
                    ctx.event(
                        set,
                        EventKind::Warning,
                        "FailedDelete",
                        format!("delete Pod {name} in StatefulSet {} failed error: {error}", set.name_any()),
                    );
                    Err(error)
                }
            }
        }
    }
}

/// Expands the pod's PVCs that request less than their template (upstream `TryPatchPVC`): only
/// when nothing but the size differs and the StorageClass allows expansion.
async fn expand_claims(
    set: &StatefulSet,
    ctx: &Context,
    pod: &Pod,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
) -> Result<(), ControllerError> {
    use core::resize::{ClaimComparison, PVC_OWNED_BY_STS, compare_claim, pod_claims};
    let api: Api<PersistentVolumeClaim> =
        Api::namespaced(ctx.client.clone(), &set.namespace().unwrap_or_default());
    for (claim, template) in pod_claims(set, pod, claims) {
        let name = claim.name_any();
        match compare_claim(claim, template) {
            ClaimComparison::Matched => continue,
            ClaimComparison::Incompatible => {
                ctx.event(
                    set,
                    EventKind::Warning,
                    "FailedUpdatePVC",
                    format!("failed to update pvc {name}: contains diff other than spec resource, wait pvc to be deleted"),
                );
                return Err(ControllerError::Invalid(format!(
                    "can not patch pvc {name}: contains diff other than spec resource, wait pvc to be deleted"
                )));
            }
            ClaimComparison::Expand => {}
        }
        if let Some(class) = claim.spec.as_ref().and_then(|s| s.storage_class_name.as_deref()) {
            let classes: Api<k8s_openapi::api::storage::v1::StorageClass> = Api::all(ctx.client.clone());
            let allowed =
                classes.get_opt(class).await?.and_then(|c| c.allow_volume_expansion).unwrap_or(false);
            if !allowed {
                return Err(ControllerError::Invalid(format!(
                    "storage class {class} for {} does not support volume expansion",
                    pod.name_any()
                )));
            }
        }
        let resources = template.spec.as_ref().and_then(|s| s.resources.clone());
        let patch = json!({
            "metadata": {"annotations": {PVC_OWNED_BY_STS: set.name_any()}, "resourceVersion": claim.resource_version()},
            "spec": {"resources": resources},
        });
        match api.patch(&name, &params(), &Patch::Merge(&patch)).await {
            Ok(_) => ctx.event(
                set,
                EventKind::Normal,
                "SuccessfulResize",
                format!(
                    "resize Claim {name} Pod {} in StatefulSet {} success",
                    pod.name_any(),
                    set.name_any()
                ),
            ),
            Err(error) => {
                ctx.event(
                    set,
                    EventKind::Warning,
                    "FailedResize",
                    format!(
                        "resize Claim {name} for Pod {} in StatefulSet {} failed error: {error}",
                        pod.name_any(),
                        set.name_any()
                    ),
                );
                return Err(ControllerError::Invalid(format!("could not update claim {name}: {error}")));
            }
        }
    }
    Ok(())
}

/// The engine options of the set's in-place updates.
fn update_options(set: &StatefulSet) -> UpdateOptions {
    let grace = set
        .spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.in_place_update_strategy.as_ref())
        .map_or(0, |s| s.grace_period_seconds);
    UpdateOptions { grace_period_seconds: grace, ..Default::default() }
}

/// Executes one rolling-update step; returns when to look again.
async fn execute_update_step(
    set: &StatefulSet,
    ctx: &Context,
    members: &Members<'_>,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
    revisions: &Revisions,
    step: &UpdateStep,
) -> Result<Option<Duration>, ControllerError> {
    let (ordinal, action) = match step {
        UpdateStep::DeleteSpecified { ordinal, action } => {
            let pod = slot_pod(members, *ordinal).ok_or_else(|| missing_pod(*ordinal))?;
            delete_or_prepare(set, ctx, pod, action).await?;
            return Ok(None);
        }
        UpdateStep::ExpandClaims { ordinal } => {
            let pod = slot_pod(members, *ordinal).ok_or_else(|| missing_pod(*ordinal))?;
            expand_claims(set, ctx, pod, claims).await?;
            return Ok(Some(Duration::from_secs(5)));
        }
        UpdateStep::UpdatePod { ordinal, action } => (*ordinal, action),
    };
    let pod = slot_pod(members, ordinal).ok_or_else(|| missing_pod(ordinal))?;
    match action {
        PodUpdateAction::PrepareInPlaceUpdate { mark_pod_not_ready } => {
            if let Some(rv) =
                pod_ops::set_lifecycle(&ctx.client, pod, LifecycleState::PreparingUpdate.as_str()).await?
            {
                ctx.rv_expectations.expect(&pod_key(pod), &rv, Instant::now());
            }
            if *mark_pod_not_ready {
                pod_ops::set_kruise_pod_ready(&ctx.client, pod, Some((PRE_UPDATE_HOLDER, true))).await?;
            }
            Ok(None)
        }
        PodUpdateAction::PrepareAgain(hook) => {
            pod_ops::restore_hook_handlers(&ctx.client, pod, &hook.labels_handler, &hook.finalizers_handler)
                .await?;
            if let Some(rv) =
                pod_ops::set_lifecycle(&ctx.client, pod, LifecycleState::PreparingUpdate.as_str()).await?
            {
                ctx.rv_expectations.expect(&pod_key(pod), &rv, Instant::now());
            }
            if hook.mark_pod_not_ready {
                pod_ops::set_kruise_pod_ready(&ctx.client, pod, Some((PRE_UPDATE_HOLDER, true))).await?;
            }
            Ok(None)
        }
        PodUpdateAction::Wait => Ok(None),
        PodUpdateAction::InPlace { set_updating } => {
            let update = Revision::from_controller_revision(&revisions.update)
                .map_err(|e| ControllerError::Invalid(e.to_string()))?;
            let old = revisions
                .named(revision_hash(pod))
                .and_then(|r| Revision::from_controller_revision(r).ok())
                .ok_or_else(|| {
                    ControllerError::Invalid(format!(
                        "revision {} of pod {} not found",
                        revision_hash(pod),
                        pod.name_any()
                    ))
                })?;
            let mut options = update_options(set);
            if *set_updating {
                options
                    .extra_labels
                    .insert(LIFECYCLE_STATE_KEY.into(), LifecycleState::Updating.as_str().into());
                options.extra_annotations.insert(
                    LIFECYCLE_TIMESTAMP_KEY.into(),
                    Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                );
            }
            let result = match ctx.engine.update(pod, &old, &update, &options).await {
                Ok(result) => result,
                Err(error) => {
                    ctx.event(
                        set,
                        EventKind::Warning,
                        "FailedUpdatePodInPlace",
                        format!(
                            "failed to update pod {} in-place(revision {}): {error}",
                            pod.name_any(),
                            update.name
                        ),
                    );
                    return Err(ControllerError::Invalid(format!(
                        "in-place update of pod {}: {error}",
                        pod.name_any()
                    )));
                }
            };
            if !result.in_place {
                // The engine found the change cannot be made in place after all: recreate.
                if let Some(action) = core::scale::deletion_action(set, pod) {
                    delete_or_prepare(set, ctx, pod, &action).await?;
                }
                return Ok(None);
            }
            if let Some(rv) = &result.resource_version {
                ctx.rv_expectations.expect(&pod_key(pod), rv, Instant::now());
            }
            ctx.metrics.pod_updated(CONTROLLER_NAME, true);
            ctx.event(
                set,
                EventKind::Normal,
                "SuccessfulUpdatePodInPlace",
                format!("successfully update pod {} in-place(revision {})", pod.name_any(), update.name),
            );
            Ok(result.requeue_after)
        }
        PodUpdateAction::Recreate(Some(action)) => {
            delete_or_prepare(set, ctx, pod, action).await?;
            Ok(None)
        }
        PodUpdateAction::Recreate(None) => Ok(None),
        PodUpdateAction::InPlaceImpossible => {
            let message =
                format!("find strategy is InPlaceOnly but Pod {} can not update in-place", pod.name_any());
            ctx.event(set, EventKind::Warning, "FailedUpdatePodInPlace", message.clone());
            Err(ControllerError::Invalid(message))
        }
        PodUpdateAction::NotAllowed(state) => Err(ControllerError::Invalid(format!(
            "not allowed to in-place update pod {} in state {}",
            pod.name_any(),
            state.as_str()
        ))),
    }
}

/// Image pre-download for the rollout under way, or clean-up of its jobs once it converged.
/// Failures are logged and do not stop the reconcile (as upstream).
async fn pre_download(set: &StatefulSet, ctx: &Context, revisions: &Revisions) {
    let (current, update) = (&revisions.current, &revisions.update);
    let (current_name, update_name) = (current.name_any(), update.name_any());
    let uid = set.uid().unwrap_or_default();
    let result = if current_name != update_name {
        let (Some(current_template), Some(update_template), Some(owner)) =
            (template_of(current), template_of(update), set.controller_owner_ref(&()))
        else {
            return;
        };
        let in_place_possible =
            match (Revision::from_controller_revision(current), Revision::from_controller_revision(update)) {
                (Ok(old), Ok(new)) => ctx.engine.can_update_in_place(&old, &new, &update_options(set)),
                _ => false,
            };
        let status = set.status.clone().unwrap_or_default();
        let labels = update.labels().clone();
        let inputs = super::predownload::Inputs {
            set,
            update_revision_labels: &labels,
            status_is_for_update_revision: status.update_revision == update_name,
            updated_ready_replicas: status.updated_ready_replicas,
            in_place_possible,
            current_template: &current_template,
            update_template: &update_template,
        };
        super::predownload::reconcile(ctx, set, owner, &inputs, update).await
    } else if update.labels().contains_key(kruise_crds::common::well_known::IMAGE_PRE_DOWNLOAD_CREATED)
        && ctx.pre_download_cleaned.lock().get(&uid) != Some(&update_name)
    {
        let result = super::predownload::delete_jobs(ctx, set).await;
        if result.is_ok() {
            ctx.pre_download_cleaned.lock().insert(uid, update_name);
        }
        result
    } else {
        Ok(())
    };
    if let Err(error) = result {
        tracing::warn!(statefulset = %key_of(set), %error, "image pre-download failed");
    }
}

/// Writes the status with the set's resourceVersion, re-reading on a conflict (upstream
/// `UpdateStatefulSetStatus`).
async fn write_status(
    ctx: &Context,
    set: &StatefulSet,
    status: StatefulSetStatus,
) -> Result<(), ControllerError> {
    crate::runtime::workload::replace_status(&ctx.client, set, |object| object.status = Some(status.clone()))
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requeue_takes_the_earliest() {
        let (a, b) = (Some(Duration::from_secs(1)), Some(Duration::from_secs(2)));
        assert_eq!(earliest(a, b), a);
        assert_eq!(earliest(None, b), b);
        assert_eq!(earliest(None, None), None);
        assert_eq!(claim_key("data-web-0"), "pvc/data-web-0");
    }
}
