//! One reconcile of one CloneSet (upstream `doReconcile` + `syncCloneSet`): revisions, then
//! scaling, then (if scaling changed nothing) the lifecycle refresh and the rolling update, then
//! the status. The decisions come from [`super::core`]; this module executes them with
//! expectations, so a slow cache never makes it create or delete a pod twice.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{Node, PersistentVolumeClaim, Pod},
    },
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::CloneSet,
    common::{LifecycleState, well_known::CLONESET_INSTANCE_ID},
    policy::v1beta1::PubOperation,
};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, Patch, PatchParams},
    runtime::events::EventType,
};
use serde_json::json;

use super::{
    controller::Context,
    core::{
        self, DeletionAction, NodeLabels, PodUpdateAction, SyncFailure, UpdateSkip, deletion_action,
        plan_scale, plan_update, pod_update_action,
    },
    pods::{instance_ids, new_pod, new_pvcs, owner_reference, random_instance_id},
    revision,
};
use crate::{
    ControllerError,
    inplace::{Revision, UpdateOptions},
    runtime::expectations::{EXPECTATION_TIMEOUT, Satisfied, ScaleAction},
    workload::{
        claim::{Claim, claim, controller_uid},
        lifecycle::{PreparingNormalRule, refresh_lifecycle_state},
        pod_ops::{self, PRE_DELETE_HOLDER, PRE_UPDATE_HOLDER},
        pods::{equal_to_revision_hash, is_pod_active, node_name, revision_hash},
        revision::{short_hash, template_of, truncate_history},
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

pub(super) fn key_of(cs: &CloneSet) -> String {
    format!("{}/{}", cs.namespace().unwrap_or_default(), cs.name_any())
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.namespace().unwrap_or_default(), pod.name_any())
}

/// Reconciles one CloneSet.
pub async fn sync(cs: Arc<CloneSet>, ctx: &Context) -> Result<SyncOutcome, ControllerError> {
    let key = key_of(&cs);
    let namespace = cs.namespace().unwrap_or_default();
    let uid = cs.uid().unwrap_or_default();
    if cs.metadata.deletion_timestamp.is_some() {
        ctx.scale_expectations.delete(&key);
        ctx.pre_download_cleaned.lock().remove(&uid);
        return Ok(SyncOutcome::default());
    }
    let now = Instant::now();
    let selector = cs.spec.selector.clone().unwrap_or_default();

    // What the cache shows; creates and deletes we asked for must be visible before scaling again.
    // Only the pods this workload controls and the orphans it may adopt.
    let claimable: Vec<Arc<Pod>> = ctx.pods.owned_or_orphaned(&namespace, &uid);
    let owned_pvcs: Vec<PersistentVolumeClaim> = ctx
        .pvcs
        .state()
        .into_iter()
        .filter(|p| p.namespace().as_deref() == Some(namespace.as_str()))
        .filter(|p| {
            p.owner_references().iter().any(|r| r.uid == uid) && p.metadata.deletion_timestamp.is_none()
        })
        .map(|p| (*p).clone())
        .collect();
    let mut present: HashSet<String> = claimable
        .iter()
        .filter(|p| controller_uid(p) == Some(uid.as_str()) && p.metadata.deletion_timestamp.is_none())
        .map(|p| p.name_any())
        .collect();
    present.extend(owned_pvcs.iter().map(|p| p.name_any()));
    ctx.scale_expectations.observe(&key, &present);
    if let Satisfied::No { retry_after, pending } =
        ctx.scale_expectations.satisfied(&key, now, EXPECTATION_TIMEOUT)
    {
        tracing::debug!(cloneset = %key, pending, "waiting for the cache to show earlier creates and deletes");
        ctx.metrics
            .expectation_timeouts(super::controller::CONTROLLER_NAME, ctx.scale_expectations.timeouts());
        return Ok(SyncOutcome { requeue_after: Some(retry_after.min(Duration::from_secs(5))) });
    }

    // Adopt orphans the selector matches, release pods it no longer matches.
    // Only pods this CloneSet controls and orphans are looked at (and copied): matching the
    // selector against every pod of the namespace on each reconcile dominated the manager's CPU.
    let keeps = |pod: &Pod| {
        kruise_crds::selector::is_empty(&selector) || kruise_crds::selector::matches(&selector, pod.labels())
    };
    let adopts = |pod: &Pod| {
        !kruise_crds::selector::is_empty(&selector)
            && is_pod_active(pod)
            && kruise_crds::selector::matches(&selector, pod.labels())
    };
    let mut pods: Vec<Pod> = Vec::new();
    for pod in &claimable {
        match claim(pod, &uid, keeps, adopts) {
            Claim::Keep => pods.push((**pod).clone()),
            Claim::Release => pod_ops::release(&ctx.client, pod, &uid).await?,
            Claim::Adopt => {
                if let Some(owner) = owner_reference(&cs) {
                    pod_ops::adopt(&ctx.client, pod, owner).await?;
                    return Ok(SyncOutcome { requeue_after: Some(Duration::from_millis(200)) });
                }
            }
            Claim::Ignore => {}
        }
    }
    let live_instance_ids: HashSet<String> = pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.labels().get(CLONESET_INSTANCE_ID).cloned())
        .collect();
    let active: Vec<Pod> = pods.into_iter().filter(is_pod_active).collect();

    // Revisions.
    let revisions: Vec<ControllerRevision> = ctx
        .revisions
        .state()
        .into_iter()
        .filter(|r| r.namespace().as_deref() == Some(namespace.as_str()))
        .filter(|r| r.owner_references().iter().any(|o| o.uid == uid))
        .map(|r| (*r).clone())
        .collect();
    let (update_revision, collision_count) =
        revision::ensure_update_revision(&ctx.client, &cs, &revisions).await?;
    let update_name = update_revision.name_any();
    let current_status = cs.status.clone().unwrap_or_default();
    let current_revision = revisions
        .iter()
        .find(|r| r.name_any() == current_status.current_revision)
        .cloned()
        .unwrap_or_else(|| update_revision.clone());
    let current_name = current_revision.name_any();
    let mut all_revisions = revisions.clone();
    if !all_revisions.iter().any(|r| r.name_any() == update_name) {
        all_revisions.push(update_revision.clone());
    }

    if ctx.pre_download {
        pre_download(&cs, ctx, &current_revision, &update_revision, &current_status).await;
    }

    // Pods written by us must be seen at least that new before acting on them again.
    for pod in &active {
        let rv = pod.resource_version().unwrap_or_default();
        if !ctx.rv_expectations.is_satisfied(&pod_key(pod), &rv, now, EXPECTATION_TIMEOUT) {
            return Ok(SyncOutcome { requeue_after: Some(Duration::from_millis(500)) });
        }
    }

    let mut failures: Vec<(SyncFailure, String)> = Vec::new();
    let mut requeue: Option<Duration> = None;
    let scaled = match scale(&cs, ctx, &active, &owned_pvcs, &current_revision, &update_revision).await {
        Ok(scaled) => scaled,
        Err(error) => {
            failures.push((SyncFailure::Scale, error.to_string()));
            true
        }
    };
    if !scaled {
        match update(&cs, ctx, &active, &current_name, &update_name, &all_revisions).await {
            Ok(delay) => requeue = earliest(requeue, delay),
            Err(error) => failures.push((SyncFailure::Update, error.to_string())),
        }
    }
    if !cs.spec.scale_strategy.enable_pvc_reuse {
        cleanup_orphan_pvcs(ctx, &namespace, &owned_pvcs, &live_instance_ids).await?;
    }

    // Status (from the cache's view of the pods; the next event refreshes it).
    let outcome = core::compute_status(
        &cs,
        &active,
        &current_name,
        &update_name,
        collision_count,
        &failures,
        Timestamp::now(),
    );
    requeue = earliest(requeue, outcome.requeue_after);
    if outcome.changed {
        write_status(ctx, &cs, outcome.status).await?;
    }
    truncate_pods_to_delete(ctx, &cs, &active).await?;
    let mut keep: HashSet<String> = [current_name.clone(), update_name.clone()].into();
    keep.extend(active.iter().map(|p| revision_hash(p).to_string()));
    truncate_history(
        &ctx.client,
        &namespace,
        &all_revisions,
        &keep,
        cs.spec.revision_history_limit.unwrap_or(10),
    )
    .await?;
    if let Some((_, message)) = failures.first() {
        return Err(ControllerError::Invalid(message.clone()));
    }
    Ok(SyncOutcome { requeue_after: requeue })
}

/// Labels of the nodes the pods run on, when the template spreads pods over topologies.
async fn node_labels(ctx: &Context, cs: &CloneSet, pods: &[Pod]) -> NodeLabels {
    let mut labels = NodeLabels::new();
    if core::spread_constraints(cs).is_empty() {
        return labels;
    }
    let nodes: Api<Node> = Api::all(ctx.client.clone());
    let names: HashSet<&str> = pods.iter().map(node_name).filter(|n| !n.is_empty()).collect();
    for name in names {
        if let Ok(Some(node)) = nodes.get_opt(name).await {
            labels.insert(name.to_string(), node.metadata.labels.unwrap_or_default());
        }
    }
    labels
}

/// Runs the scale plan; true when it changed something (then the update waits a round).
async fn scale(
    cs: &CloneSet,
    ctx: &Context,
    pods: &[Pod],
    pvcs: &[PersistentVolumeClaim],
    current: &ControllerRevision,
    update: &ControllerRevision,
) -> Result<bool, ControllerError> {
    let nodes = node_labels(ctx, cs, pods).await;
    let plan =
        plan_scale(cs, pods, &current.name_any(), &update.name_any(), &ctx.options, &nodes, Timestamp::now());
    if plan.is_empty() {
        return Ok(false);
    }
    tracing::debug!(cloneset = %key_of(cs), ?plan, "scale plan");
    // 1. Scale-in cancelled by a scale-up: back to PreparingNormal.
    let mut changed = false;
    for &index in &plan.cancel_preparing_delete {
        changed |= pod_ops::set_lifecycle(&ctx.client, &pods[index], "PreparingNormal").await?.is_some();
    }
    if changed {
        return Ok(true);
    }
    // 2. Creation ends scaling for this round.
    if let Some(create) = &plan.create {
        if create.limited() {
            ctx.event(
                cs,
                EventType::Warning,
                "ScaleUpLimited",
                format!(
                    "scaleUp is limited because of scaleStrategy.maxUnavailable, limit: {}",
                    create.total()
                ),
            );
        }
        return create_pods(
            cs,
            ctx,
            pods,
            pvcs,
            current,
            update,
            create.current_revision,
            create.update_revision,
        )
        .await;
    }
    // 3-5. Deletions, stage by stage.
    for stage in [&plan.delete_preparing_delete, &plan.delete_specified, &plan.scale_in] {
        let mut stage_changed = false;
        for &index in stage.iter() {
            stage_changed |= delete_or_prepare(cs, ctx, &pods[index], pvcs).await?;
        }
        if stage_changed {
            return Ok(true);
        }
    }
    Ok(false)
}

#[allow(clippy::too_many_arguments)]
async fn create_pods(
    cs: &CloneSet,
    ctx: &Context,
    pods: &[Pod],
    pvcs: &[PersistentVolumeClaim],
    current: &ControllerRevision,
    update: &ControllerRevision,
    from_current: usize,
    from_update: usize,
) -> Result<bool, ControllerError> {
    let key = key_of(cs);
    let pod_ids: HashSet<String> =
        pods.iter().filter_map(|p| p.labels().get(CLONESET_INSTANCE_ID).cloned()).collect();
    let pvc_ids: HashSet<String> =
        pvcs.iter().filter_map(|p| p.labels().get(CLONESET_INSTANCE_ID).cloned()).collect();
    let ids = instance_ids(
        from_current + from_update,
        &pod_ids,
        &pvc_ids,
        cs.spec.scale_strategy.enable_pvc_reuse,
        random_instance_id,
    );
    let existing_pvcs: HashSet<String> = pvcs.iter().map(|p| p.name_any()).collect();
    let current_template = template_of(current).unwrap_or_else(|| cs.spec.template.clone());
    let update_template = template_of(update).unwrap_or_else(|| cs.spec.template.clone());
    let now = Timestamp::now();
    let mut planned: Vec<(Pod, Vec<PersistentVolumeClaim>)> = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        let (template, revision) = if n < from_current {
            (&current_template, current.name_any())
        } else {
            (&update_template, update.name_any())
        };
        let pod = new_pod(cs, template, &revision, id, now);
        let claims: Vec<PersistentVolumeClaim> =
            new_pvcs(cs, id).into_iter().filter(|c| !existing_pvcs.contains(&c.name_any())).collect();
        for claim in &claims {
            ctx.scale_expectations.expect(&key, ScaleAction::Create, &claim.name_any(), Instant::now());
        }
        ctx.scale_expectations.expect(&key, ScaleAction::Create, &pod.name_any(), Instant::now());
        planned.push((pod, claims));
    }
    let names: Vec<(String, Vec<String>)> =
        planned.iter().map(|(p, c)| (p.name_any(), c.iter().map(|c| c.name_any()).collect())).collect();
    let results = pod_ops::create_slowly(planned, |(pod, claims)| {
        let client = ctx.client.clone();
        async move { pod_ops::create_pod(&client, &pod, &claims).await }
    })
    .await;
    let mut created = 0;
    let mut first_error = None;
    for ((pod_name, claim_names), result) in names.into_iter().zip(results) {
        match result {
            Some(Ok(())) => {
                created += 1;
                ctx.event(
                    cs,
                    EventType::Normal,
                    "SuccessfulCreate",
                    format!("succeed to create pod {pod_name}"),
                );
            }
            other => {
                ctx.scale_expectations.forget(&key, ScaleAction::Create, &pod_name);
                for claim in claim_names {
                    ctx.scale_expectations.forget(&key, ScaleAction::Create, &claim);
                }
                if let Some(Err(error)) = other {
                    ctx.event(
                        cs,
                        EventType::Warning,
                        "FailedCreate",
                        format!("failed to create pod {pod_name}: {error}"),
                    );
                    first_error.get_or_insert(error);
                }
            }
        }
    }
    match first_error {
        Some(error) if created == 0 => Err(error),
        Some(error) => {
            tracing::warn!(cloneset = %key, %error, created, "some pods could not be created");
            Ok(true)
        }
        None => Ok(created > 0),
    }
}

/// Deletes a pod (and the PVCs of its instance id) or moves it to PreparingDelete while the
/// preDelete hook holds it. True when something changed.
async fn delete_or_prepare(
    cs: &CloneSet,
    ctx: &Context,
    pod: &Pod,
    pvcs: &[PersistentVolumeClaim],
) -> Result<bool, ControllerError> {
    match deletion_action(cs, pod) {
        DeletionAction::PrepareDelete { mark_pod_not_ready } => {
            let changed = pod_ops::set_lifecycle(&ctx.client, pod, "PreparingDelete").await?;
            if mark_pod_not_ready {
                pod_ops::set_kruise_pod_ready(&ctx.client, pod, Some((PRE_DELETE_HOLDER, true))).await?;
            }
            if let Some(rv) = &changed {
                ctx.rv_expectations.expect(&pod_key(pod), rv, Instant::now());
            }
            Ok(changed.is_some())
        }
        DeletionAction::Delete => {
            let key = key_of(cs);
            ctx.scale_expectations.expect(&key, ScaleAction::Delete, &pod.name_any(), Instant::now());
            if let Err(error) = pod_ops::delete_pod(&ctx.client, pod).await {
                ctx.scale_expectations.forget(&key, ScaleAction::Delete, &pod.name_any());
                ctx.event(
                    cs,
                    EventType::Warning,
                    "FailedDelete",
                    format!("failed to delete pod {}: {error}", pod.name_any()),
                );
                return Err(error);
            }
            ctx.event(
                cs,
                EventType::Normal,
                "SuccessfulDelete",
                format!("succeed to delete pod {}", pod.name_any()),
            );
            // A pod the controller deletes takes its PVCs along, whether or not PVCs are reused
            // (upstream `deletePods`; reuse is for pods that went away by other hands). The
            // deletes are expected, so that a stale cache never offers their instance id again.
            if let Some(id) = pod.labels().get(CLONESET_INSTANCE_ID) {
                let claims: Vec<String> = pvcs
                    .iter()
                    .filter(|c| c.labels().get(CLONESET_INSTANCE_ID) == Some(id))
                    .map(|c| c.name_any())
                    .collect();
                for claim in &claims {
                    ctx.scale_expectations.expect(&key, ScaleAction::Delete, claim, Instant::now());
                }
                let namespace = pod.namespace().unwrap_or_default();
                if let Err(error) = delete_pvcs_of(&ctx.client, &namespace, pvcs, id).await {
                    for claim in &claims {
                        ctx.scale_expectations.forget(&key, ScaleAction::Delete, claim);
                    }
                    return Err(error);
                }
            }
            Ok(true)
        }
    }
}

fn revision_of<'a>(revisions: &'a [ControllerRevision], name: &str) -> Option<&'a ControllerRevision> {
    revisions.iter().find(|r| r.name_any() == name || short_hash(&r.name_any()) == name)
}

fn update_options(cs: &CloneSet) -> UpdateOptions {
    let rolling = cs.spec.update_strategy.rolling_update.as_ref();
    UpdateOptions {
        grace_period_seconds: rolling
            .and_then(|r| r.in_place_update_strategy.as_ref())
            .map(|s| s.grace_period_seconds)
            .unwrap_or(0),
        ignore_volume_claim_templates_hash_diff: rolling
            .is_some_and(|r| r.pod_update_policy == kruise_crds::apps::v1beta1::PodUpdatePolicy::InPlaceOnly),
        ..Default::default()
    }
}

/// The rolling update: refresh in-place updates and lifecycle states first; if nothing changed,
/// update the pods the plan picks. Returns when to look again.
async fn update(
    cs: &CloneSet,
    ctx: &Context,
    pods: &[Pod],
    current: &str,
    update_revision: &str,
    revisions: &[ControllerRevision],
) -> Result<Option<Duration>, ControllerError> {
    let mut requeue = None;
    let mut changed = false;
    for pod in pods {
        let refresh = ctx.engine.refresh(pod).await.map_err(|e| ControllerError::Invalid(e.to_string()))?;
        requeue = earliest(requeue, refresh.requeue_after);
        if let Some(rv) = &refresh.resource_version {
            ctx.rv_expectations.expect(&pod_key(pod), rv, Instant::now());
        }
        let completed = crate::inplace::completion::check_update_completed(pod, ctx.engine.gates()).is_ok();
        let at_update_revision = equal_to_revision_hash(pod, update_revision);
        let lifecycle = cs.spec.lifecycle.as_ref();
        let rule = PreparingNormalRule::OnceScheduled;
        if let Some(transition) = refresh_lifecycle_state(lifecycle, pod, at_update_revision, completed, rule)
        {
            let state = lifecycle_name(&transition.state);
            if let Some(rv) = pod_ops::set_lifecycle(&ctx.client, pod, &state).await? {
                ctx.rv_expectations.expect(&pod_key(pod), &rv, Instant::now());
                changed = true;
            }
            if transition.releases_update_hold() {
                pod_ops::set_kruise_pod_ready(&ctx.client, pod, Some((PRE_UPDATE_HOLDER, false))).await?;
            }
        }
        pod_ops::set_kruise_pod_ready(&ctx.client, pod, None).await?;
    }
    if changed {
        return Ok(requeue.or(Some(Duration::from_millis(100))));
    }
    let plan = plan_update(cs, pods, current, update_revision, &ctx.options, Timestamp::now());
    if let Some(skip) = plan.skipped {
        if skip != UpdateSkip::NothingToUpdate {
            tracing::debug!(cloneset = %key_of(cs), ?skip, "not updating pods");
        }
        return Ok(requeue);
    }
    let target = revision_of(revisions, &plan.target_revision)
        .ok_or_else(|| ControllerError::Invalid(format!("revision {} not found", plan.target_revision)))?;
    let target_revision =
        Revision::from_controller_revision(target).map_err(|e| ControllerError::Invalid(e.to_string()))?;
    let options = update_options(cs);
    for index in plan.pods {
        let pod = &pods[index];
        let old = revision_of(revisions, revision_hash(pod))
            .and_then(|r| Revision::from_controller_revision(r).ok());
        let can_in_place =
            old.as_ref().is_some_and(|old| ctx.engine.can_update_in_place(old, &target_revision, &options));
        // Gate PodUnavailableBudgetUpdateGate: the pod's budget must allow the update (and
        // records it); otherwise the rollout waits and asks again in a second.
        if let Some(guard) = &ctx.pub_guard {
            let verdict = guard
                .validate_pod(
                    pod,
                    &PubOperation::Update,
                    crate::podunavailablebudget::core::MANAGER_USER,
                    false,
                )
                .await?;
            if let crate::podunavailablebudget::admit::Verdict::Refused(reason) = verdict {
                tracing::debug!(cloneset = %key_of(cs), pod = %pod.name_any(), %reason, "PodUnavailableBudget holds the update");
                return Ok(earliest(requeue, Some(Duration::from_secs(1))));
            }
        }
        match pod_update_action(cs, pod, can_in_place) {
            PodUpdateAction::InPlace => {
                let (Some(old), mut options) = (old, options.clone()) else { continue };
                options
                    .extra_labels
                    .insert(kruise_crds::common::LIFECYCLE_STATE_KEY.into(), "Updating".into());
                options.extra_annotations.insert(
                    kruise_crds::common::LIFECYCLE_TIMESTAMP_KEY.into(),
                    Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                );
                let result = ctx.engine.update(pod, &old, &target_revision, &options).await.map_err(|e| {
                    ControllerError::Invalid(format!("in-place update of pod {}: {e}", pod.name_any()))
                })?;
                if result.in_place {
                    if let Some(rv) = &result.resource_version {
                        ctx.rv_expectations.expect(&pod_key(pod), rv, Instant::now());
                    }
                    requeue = earliest(requeue, result.requeue_after);
                    ctx.metrics.pod_updated(super::controller::CONTROLLER_NAME, true);
                    ctx.event(
                        cs,
                        EventType::Normal,
                        "SuccessfulUpdatePodInPlace",
                        format!(
                            "successfully update pod {} in-place(revision {})",
                            pod.name_any(),
                            target_revision.name
                        ),
                    );
                } else if let Some(rv) = pod_ops::mark_specified_delete(&ctx.client, pod).await? {
                    ctx.rv_expectations.expect(&pod_key(pod), &rv, Instant::now());
                    ctx.metrics.pod_updated(super::controller::CONTROLLER_NAME, false);
                }
            }
            PodUpdateAction::Recreate => {
                if let Some(rv) = pod_ops::mark_specified_delete(&ctx.client, pod).await? {
                    ctx.rv_expectations.expect(&pod_key(pod), &rv, Instant::now());
                    ctx.metrics.pod_updated(super::controller::CONTROLLER_NAME, false);
                }
            }
            PodUpdateAction::PrepareInPlaceUpdate { mark_pod_not_ready } => {
                if let Some(rv) = pod_ops::set_lifecycle(&ctx.client, pod, "PreparingUpdate").await? {
                    ctx.rv_expectations.expect(&pod_key(pod), &rv, Instant::now());
                }
                if mark_pod_not_ready {
                    pod_ops::set_kruise_pod_ready(&ctx.client, pod, Some((PRE_UPDATE_HOLDER, true))).await?;
                }
            }
            PodUpdateAction::PrepareAgainWithHandler(hook) => {
                pod_ops::restore_hook_handlers(
                    &ctx.client,
                    pod,
                    &hook.labels_handler,
                    &hook.finalizers_handler,
                )
                .await?;
            }
            PodUpdateAction::Wait => {}
            PodUpdateAction::InPlaceImpossible => {
                let message = format!(
                    "find Pod {} update strategy is InPlaceOnly but can not update in-place",
                    pod.name_any()
                );
                ctx.event(cs, EventType::Warning, "FailedUpdate", message.clone());
                return Err(ControllerError::Invalid(message));
            }
            PodUpdateAction::NotAllowed(state) => {
                let message = format!(
                    "not allowed to update pod {} in state {}",
                    pod.name_any(),
                    lifecycle_name(&state)
                );
                return Err(ControllerError::Invalid(message));
            }
        }
    }
    Ok(requeue)
}

fn lifecycle_name(state: &LifecycleState) -> String {
    serde_json::to_value(state).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Deletes the PVCs of an instance id (labelled `apps.kruise.io/cloneset-instance-id`).
async fn delete_pvcs_of(
    client: &Client,
    namespace: &str,
    pvcs: &[PersistentVolumeClaim],
    id: &str,
) -> Result<(), ControllerError> {
    let api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), namespace);
    for pvc in pvcs.iter().filter(|p| p.labels().get(CLONESET_INSTANCE_ID).map(String::as_str) == Some(id)) {
        match api.delete(&pvc.name_any(), &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

/// PVCs whose pod is gone are deleted when they are not to be reused.
async fn cleanup_orphan_pvcs(
    ctx: &Context,
    namespace: &str,
    pvcs: &[PersistentVolumeClaim],
    live: &HashSet<String>,
) -> Result<(), ControllerError> {
    let orphans: HashMap<&str, ()> = pvcs
        .iter()
        .filter_map(|p| p.labels().get(CLONESET_INSTANCE_ID).map(String::as_str))
        .filter(|id| !live.contains(*id))
        .map(|id| (id, ()))
        .collect();
    for id in orphans.keys() {
        delete_pvcs_of(&ctx.client, namespace, pvcs, id).await?;
    }
    Ok(())
}

/// Writes the status with the CloneSet's resourceVersion, re-reading on a conflict.
async fn write_status(
    ctx: &Context,
    cs: &CloneSet,
    status: kruise_crds::apps::v1beta1::CloneSetStatus,
) -> Result<(), ControllerError> {
    crate::runtime::workload::replace_status(&ctx.client, cs, |object| object.status = Some(status.clone()))
        .await
        .map(|_| ())
}

/// Drops names from `scaleStrategy.podsToDelete` that are no pod of the CloneSet any more.
async fn truncate_pods_to_delete(ctx: &Context, cs: &CloneSet, pods: &[Pod]) -> Result<(), ControllerError> {
    let listed = &cs.spec.scale_strategy.pods_to_delete;
    if listed.is_empty() {
        return Ok(());
    }
    let names: HashSet<String> = pods.iter().map(|p| p.name_any()).collect();
    let kept: Vec<&String> = listed.iter().filter(|n| names.contains(*n)).collect();
    if kept.len() == listed.len() {
        return Ok(());
    }
    let api: Api<CloneSet> = Api::namespaced(ctx.client.clone(), &cs.namespace().unwrap_or_default());
    let patch = json!({"metadata": {"resourceVersion": cs.resource_version()}, "spec": {"scaleStrategy": {"podsToDelete": kept}}});
    match api.patch(&cs.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(error)) if error.code == 409 || error.code == 404 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Image pre-download for the rollout under way, or clean-up of its jobs once it converged.
/// Failures are logged and do not stop the reconcile (as upstream).
async fn pre_download(
    cs: &CloneSet,
    ctx: &Context,
    current: &ControllerRevision,
    update: &ControllerRevision,
    status: &kruise_crds::apps::v1beta1::CloneSetStatus,
) {
    let (current_name, update_name) = (current.name_any(), update.name_any());
    let result = if current_name != update_name {
        let (Some(current_template), Some(update_template), Some(owner)) =
            (template_of(current), template_of(update), owner_reference(cs))
        else {
            return;
        };
        let in_place_possible = match (
            crate::inplace::Revision::from_controller_revision(current),
            crate::inplace::Revision::from_controller_revision(update),
        ) {
            (Ok(old), Ok(new)) => ctx.engine.can_update_in_place(&old, &new, &update_options(cs)),
            _ => false,
        };
        let labels = update.labels().clone();
        let inputs = super::predownload::Inputs {
            cs,
            update_revision_labels: &labels,
            status_is_for_update_revision: status.update_revision == update_name,
            updated_ready_replicas: status.updated_ready_replicas,
            in_place_possible,
            current_template: &current_template,
            update_template: &update_template,
        };
        super::predownload::reconcile(ctx, cs, owner, &inputs, update).await
    } else if update.labels().contains_key(kruise_crds::common::well_known::IMAGE_PRE_DOWNLOAD_CREATED)
        && ctx.pre_download_cleaned.lock().get(&cs.uid().unwrap_or_default()) != Some(&update_name)
    {
        // The rollout that pre-downloaded converged: its jobs are done with (once per revision;
        // after a restart, once more).
        let result = super::predownload::delete_jobs(ctx, cs).await;
        if result.is_ok() {
            ctx.pre_download_cleaned.lock().insert(cs.uid().unwrap_or_default(), update_name);
        }
        result
    } else {
        Ok(())
    };
    if let Err(error) = result {
        tracing::warn!(cloneset = %key_of(cs), %error, "image pre-download failed");
    }
}
