//! One reconcile of one Advanced DaemonSet (upstream `syncDaemonSet`): claim the pods, construct
//! the history, run the manage loop (create, delete, preDelete hook), then — once the cache shows
//! every earlier write — refresh in-place updates, roll the update unless paused or `OnDelete`,
//! clean the history and write the status. The decisions come from [`super::core`]; this module
//! executes them with expectations, so a slow cache never makes it create or delete twice.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{Node, Pod, PodReadinessGate},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{DaemonSet, DaemonSetRollingUpdateType, DaemonSetUpdateStrategyType},
    common::{IN_PLACE_UPDATE_READY, LifecycleState, well_known::CONTROLLER_REVISION_HASH},
};
use kube::{
    Api, Resource, ResourceExt,
    api::{DeleteParams, PostParams},
};

use super::{
    controller::{CONTROLLER_NAME, Context},
    core::{
        self,
        nodes::add_daemon_tolerations,
        pods::{POD_TEMPLATE_GENERATION_LABEL, has_in_place_readiness_gate, template_generation},
    },
    revision::{construct_history, hash_of, revisions_to_clean},
};
use crate::{
    ControllerError,
    inplace::{Revision, UpdateOptions},
    runtime::{
        events::EventKind,
        expectations::{EXPECTATION_TIMEOUT, Satisfied, ScaleAction},
    },
    workload::{
        claim::{Claim, claim},
        pod_ops::{self, FIELD_MANAGER, PRE_DELETE_HOLDER, create_slowly},
        pods::{is_pod_hooked, is_terminating, revision_hash},
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

pub(super) fn key_of(ds: &DaemonSet) -> String {
    format!("{}/{}", ds.namespace().unwrap_or_default(), ds.name_any())
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.namespace().unwrap_or_default(), pod.name_any())
}

/// The pod a DaemonSet creates on `node` (upstream `CreatePodTemplate` + `GetPodFromTemplate`):
/// the template with the daemon tolerations, its labels plus `controller-revision-hash` (and
/// `pod-template-generation` with the deprecated annotation), the `InPlaceUpdateReady` readiness
/// gate for `InPlaceIfPossible`, the required node affinity of its node, `generateName: <ds>-`
/// and the DaemonSet as controller.
pub fn new_pod(ds: &DaemonSet, node: &str, hash: &str) -> Pod {
    let template = &ds.spec.template;
    let meta = template.metadata.clone().unwrap_or_default();
    let mut labels = meta.labels.unwrap_or_default();
    if let Some(generation) = template_generation(ds) {
        labels.insert(POD_TEMPLATE_GENERATION_LABEL.into(), generation.to_string());
    }
    if !hash.is_empty() {
        labels.insert(CONTROLLER_REVISION_HASH.into(), hash.to_string());
    }
    let mut spec = template.spec.clone().unwrap_or_default();
    add_daemon_tolerations(&mut spec);
    let in_place = ds.spec.update_strategy.type_ == DaemonSetUpdateStrategyType::RollingUpdate
        && ds
            .spec
            .update_strategy
            .rolling_update
            .as_ref()
            .is_some_and(|r| r.type_ == DaemonSetRollingUpdateType::InPlaceIfPossible);
    if in_place {
        let gates = spec.readiness_gates.get_or_insert_with(Vec::new);
        if !gates.iter().any(|g| g.condition_type == IN_PLACE_UPDATE_READY) {
            gates.push(PodReadinessGate { condition_type: IN_PLACE_UPDATE_READY.into() });
        }
    }
    spec.affinity = Some(core::replace_node_name_affinity(spec.affinity.take(), node));
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(format!("{}-", ds.name_any())),
            namespace: ds.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: meta.annotations,
            finalizers: meta.finalizers,
            owner_references: ds.controller_owner_ref(&()).map(|r| vec![r]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// Reconciles one DaemonSet.
pub async fn sync(ds: Arc<DaemonSet>, ctx: &Context) -> Result<SyncOutcome, ControllerError> {
    let key = key_of(&ds);
    if ds.metadata.deletion_timestamp.is_some() {
        ctx.scale_expectations.delete(&key);
        return Ok(SyncOutcome::default());
    }
    let selector = ds.spec.selector.clone().unwrap_or_default();
    if kruise_crds::selector::is_empty(&selector) {
        ctx.event(
            &ds,
            EventKind::Warning,
            "SelectingAll",
            "This DaemonSet is selecting all pods. A non-empty selector is required.".into(),
        );
        return Ok(SyncOutcome::default());
    }
    let namespace = ds.namespace().unwrap_or_default();
    let uid = ds.uid().unwrap_or_default();
    let now = Instant::now();

    let node_list: Vec<Arc<Node>> = {
        let mut nodes = ctx.nodes.state();
        nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        nodes
    };
    let nodes: Vec<&Node> = node_list.iter().map(AsRef::as_ref).collect();

    // History.
    let owned_revisions: Vec<ControllerRevision> = ctx
        .revisions
        .state()
        .into_iter()
        .filter(|r| r.namespace().as_deref() == Some(namespace.as_str()))
        .filter(|r| r.owner_references().iter().any(|o| o.uid == uid && o.controller == Some(true)))
        .map(|r| (*r).clone())
        .collect();
    let (current, old_revisions, collision_count) =
        construct_history(&ctx.client, &ds, &owned_revisions).await?;
    let hash = hash_of(&current);

    // Claim the pods: adopt orphans the selector matches, release ours it no longer does.
    let selects = |pod: &Pod| kruise_crds::selector::matches(&selector, pod.labels());
    let adopts = |pod: &Pod| selects(pod) && !is_terminating(pod);
    let mut pods: Vec<Pod> = Vec::new();
    // Only the pods this DaemonSet controls and the orphans it may adopt.
    for pod in &ctx.pods.owned_or_orphaned(&namespace, &uid) {
        match claim(pod, &uid, selects, adopts) {
            Claim::Keep => pods.push((**pod).clone()),
            Claim::Release => {
                tracing::info!(daemonset = %key, pod = %pod.name_any(), "releasing a pod the DaemonSet no longer selects");
                pod_ops::release(&ctx.client, pod, &uid).await?;
            }
            Claim::Adopt => {
                if let Some(owner) = ds.controller_owner_ref(&()) {
                    tracing::info!(daemonset = %key, pod = %pod.name_any(), "adopting an orphan pod");
                    pod_ops::adopt(&ctx.client, pod, owner).await?;
                    return Ok(SyncOutcome { requeue_after: Some(Duration::from_millis(200)) });
                }
            }
            Claim::Ignore => {}
        }
    }
    let by_node = core::group_by_node(&pods);

    // Creates and deletes we asked for, and pods we wrote, must show in the cache first.
    let present: HashSet<String> = pods.iter().filter(|p| !is_terminating(p)).map(|p| p.name_any()).collect();
    ctx.scale_expectations.observe(&key, &present);
    let mut waiting = match ctx.scale_expectations.satisfied(&key, now, EXPECTATION_TIMEOUT) {
        Satisfied::Yes => None,
        Satisfied::No { retry_after, pending } => {
            tracing::debug!(daemonset = %key, pending, "waiting for the cache to show earlier creates and deletes");
            ctx.metrics.expectation_timeouts(CONTROLLER_NAME, ctx.scale_expectations.timeouts());
            Some(retry_after.min(Duration::from_secs(5)))
        }
    };
    if waiting.is_none() {
        for pod in &pods {
            let rv = pod.resource_version().unwrap_or_default();
            if !ctx.rv_expectations.is_satisfied(&pod_key(pod), &rv, now, EXPECTATION_TIMEOUT) {
                waiting = Some(Duration::from_millis(500));
                break;
            }
        }
    }
    // The DaemonSet as last stored: every status write of this reconcile compares with and
    // builds on the one before.
    let mut latest = (*ds).clone();
    if let Some(after) = waiting {
        let (_, requeue) =
            write_status(ctx, &mut latest, &nodes, &by_node, &hash, collision_count, false).await?;
        return Ok(SyncOutcome { requeue_after: earliest(Some(after), requeue) });
    }

    if ctx.pre_download {
        pre_download(ctx, &ds, &current, &old_revisions, &hash).await;
    }

    let pods_by_name: HashMap<String, &Pod> = pods.iter().map(|p| (p.name_any(), p)).collect();
    let mut requeue = None;
    let mut failures: Vec<String> = Vec::new();

    // The manage loop.
    let observed = ds.status.as_ref().map_or(0, |s| s.observed_generation);
    let backoff_prefix = format!("{uid}/{observed}/");
    let plan = core::plan_manage(&ds, &nodes, &by_node, &hash, Timestamp::now(), &mut |node| {
        ctx.failed_pod_backoff(&format!("{backoff_prefix}{node}"), Instant::now())
    });
    requeue = earliest(requeue, plan.requeue_after);
    for (pod, node) in &plan.failed_pods {
        ctx.event(
            &ds,
            EventKind::Warning,
            "FailedDaemonPod",
            format!("Found failed daemon pod {namespace}/{pod} on node {node}, will try to kill it"),
        );
    }
    if !plan.nodes_to_create.is_empty() || !plan.pods_to_delete.is_empty() {
        tracing::debug!(daemonset = %key, create = ?plan.nodes_to_create, delete = ?plan.pods_to_delete, "manage plan");
        let wrote =
            match sync_nodes(ctx, &ds, &pods_by_name, plan.pods_to_delete, plan.nodes_to_create, &hash).await
            {
                Ok(wrote) => wrote,
                Err(error) => {
                    failures.push(error.to_string());
                    true
                }
            };
        if wrote {
            // Wait for the cache to show what was just done (upstream returns here too).
            let (_, after) =
                write_status(ctx, &mut latest, &nodes, &by_node, &hash, collision_count, false).await?;
            return finish(failures, earliest(requeue, earliest(after, Some(Duration::from_secs(1)))));
        }
    }

    // The pods are counted before any of them is made Ready below (`KruisePodReady`, the end of
    // an in-place update): whoever sees a daemon pod Ready must find it in the status already.
    // Upstream gets this order for free (another controller makes its pods Ready, after the
    // round that counted them); a reconcile that made pods Ready first and wrote the status last
    // let clients read Ready pods next to `currentNumberScheduled: 0` for as long as the round
    // took. The round's full status (with `observedGeneration`) is written at its end.
    let (on_record, _) =
        write_status(ctx, &mut latest, &nodes, &by_node, &hash, collision_count, false).await?;
    if !on_record {
        tracing::debug!(daemonset = %key, "the status could not be written yet; not touching pod readiness");
        return finish(failures, earliest(requeue, Some(Duration::from_millis(500))));
    }

    // In-place updates under way move on; `KruisePodReady` (the readiness gate the pod webhook
    // injects) turns True on pods no lifecycle hook holds.
    for pod in pods.iter().filter(|p| !is_terminating(p)) {
        let result = async {
            let refreshed =
                ctx.engine.refresh(pod).await.map_err(|e| ControllerError::Invalid(e.to_string()))?;
            if let Some(rv) = &refreshed.resource_version {
                ctx.rv_expectations.expect(&pod_key(pod), rv, Instant::now());
            }
            pod_ops::set_kruise_pod_ready(&ctx.client, pod, None).await?;
            Ok::<_, ControllerError>(refreshed.requeue_after)
        }
        .await;
        match result {
            Ok(after) => requeue = earliest(requeue, after),
            Err(error) => {
                tracing::warn!(daemonset = %key, pod = %pod.name_any(), %error, "refreshing a pod failed");
                requeue = earliest(requeue, Some(Duration::from_secs(1)));
            }
        }
    }

    if !core::is_paused(&ds) && ds.spec.update_strategy.type_ == DaemonSetUpdateStrategyType::RollingUpdate {
        let plan =
            core::plan_rolling_update(&ds, &nodes, &by_node, &hash, Timestamp::now(), ctx.prune_ineligible);
        if plan != core::RollingPlan::default() {
            tracing::debug!(daemonset = %key, ?plan, "rolling update plan");
        }
        let mut to_delete = plan.pods_to_delete;
        let in_place = ds
            .spec
            .update_strategy
            .rolling_update
            .as_ref()
            .is_some_and(|r| r.type_ == DaemonSetRollingUpdateType::InPlaceIfPossible);
        if in_place && !plan.pods_to_replace.is_empty() {
            match in_place_update_pods(
                ctx,
                &ds,
                &pods_by_name,
                plan.pods_to_replace,
                &current,
                &old_revisions,
            )
            .await
            {
                Ok((recreate, after)) => {
                    to_delete.extend(recreate);
                    requeue = earliest(requeue, after);
                }
                Err(error) => failures.push(error.to_string()),
            }
        } else {
            to_delete.extend(plan.pods_to_replace);
        }
        if (!to_delete.is_empty() || !plan.nodes_to_create.is_empty())
            && let Err(error) =
                sync_nodes(ctx, &ds, &pods_by_name, to_delete, plan.nodes_to_create, &hash).await.map(|_| ())
        {
            failures.push(error.to_string());
        }
    }

    // History beyond the limit that no pod runs.
    let live: HashSet<String> =
        pods.iter().map(|p| revision_hash(p).to_string()).filter(|h| !h.is_empty()).collect();
    let old_refs: Vec<&ControllerRevision> = old_revisions.iter().collect();
    let api: Api<ControllerRevision> = Api::namespaced(ctx.client.clone(), &namespace);
    for name in revisions_to_clean(&old_refs, &live, ds.spec.revision_history_limit.unwrap_or(10)) {
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => failures.push(format!("failed to clean up revisions of DaemonSet: {error}")),
        }
    }

    let (_, after) =
        write_status(ctx, &mut latest, &nodes, &by_node, &hash, collision_count, failures.is_empty()).await?;
    finish(failures, earliest(requeue, after))
}

fn finish(failures: Vec<String>, requeue_after: Option<Duration>) -> Result<SyncOutcome, ControllerError> {
    match failures.into_iter().next() {
        Some(message) => Err(ControllerError::Invalid(message)),
        None => Ok(SyncOutcome { requeue_after }),
    }
}

/// Deletes pods and creates pods on nodes, each capped at `burstReplicas`, creations in
/// slow-start batches (upstream `syncNodes`). With a preDelete hook, a hooked pod moves to
/// `PreparingDelete` instead of being deleted. Returns whether anything was written (pods held
/// in `PreparingDelete` already are not).
async fn sync_nodes(
    ctx: &Context,
    ds: &DaemonSet,
    pods: &HashMap<String, &Pod>,
    mut to_delete: Vec<String>,
    mut to_create: Vec<String>,
    hash: &str,
) -> Result<bool, ControllerError> {
    let key = key_of(ds);
    let mut errors: Vec<String> = Vec::new();
    let mut wrote = false;
    if let Some(hook) = ds.spec.lifecycle.as_ref().and_then(|l| l.pre_delete.as_ref()) {
        let mut deletable = Vec::new();
        for name in to_delete {
            let Some(pod) = pods.get(&name) else { continue };
            if !is_pod_hooked(Some(hook), pod) {
                deletable.push(name);
                continue;
            }
            match pod_ops::set_lifecycle(&ctx.client, pod, LifecycleState::PreparingDelete.as_str()).await {
                Ok(Some(rv)) => {
                    wrote = true;
                    tracing::info!(daemonset = %key, pod = %name, "pod held by its preDelete hook: PreparingDelete");
                    ctx.rv_expectations.expect(&pod_key(pod), &rv, Instant::now());
                }
                Ok(None) => {}
                Err(error) => errors.push(error.to_string()),
            }
            if hook.mark_pod_not_ready
                && let Err(error) =
                    pod_ops::set_kruise_pod_ready(&ctx.client, pod, Some((PRE_DELETE_HOLDER, true))).await
            {
                errors.push(error.to_string());
            }
        }
        to_delete = deletable;
    }
    let burst = core::burst_replicas(ds);
    to_create.truncate(burst);
    to_delete.truncate(burst);
    wrote |= !to_create.is_empty() || !to_delete.is_empty();

    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), &ds.namespace().unwrap_or_default());
    let post = PostParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
    let results = create_slowly(to_create.clone(), |node: String| {
        let (api, post, key) = (api.clone(), post.clone(), key.clone());
        let pod = new_pod(ds, &node, hash);
        async move {
            match api.create(&post, &pod).await {
                Ok(created) => {
                    let name = created.name_any();
                    ctx.scale_expectations.expect(&key, ScaleAction::Create, &name, Instant::now());
                    tracing::info!(daemonset = %key, pod = %name, %node, "created daemon pod");
                    ctx.event(ds, EventKind::Normal, "SuccessfulCreate", format!("Created pod: {name}"));
                    Ok(())
                }
                // A terminating namespace refuses every create; nothing to report.
                Err(kube::Error::Api(status))
                    if status.reason == "Forbidden" && status.message.contains("terminat") =>
                {
                    Ok(())
                }
                Err(error) => {
                    ctx.event(ds, EventKind::Warning, "FailedCreate", format!("Error creating: {error}"));
                    Err(error.to_string())
                }
            }
        }
    })
    .await;
    errors.extend(results.into_iter().flatten().filter_map(Result::err));

    let deletes =
        futures::future::join_all(to_delete.iter().filter_map(|name| pods.get(name)).map(|pod| async {
            let name = pod.name_any();
            ctx.scale_expectations.expect(&key, ScaleAction::Delete, &name, Instant::now());
            match pod_ops::delete_pod(&ctx.client, pod).await {
                Ok(()) => {
                    tracing::info!(daemonset = %key, pod = %name, "deleted daemon pod");
                    ctx.event(ds, EventKind::Normal, "SuccessfulDelete", format!("Deleted pod: {name}"));
                    Ok(())
                }
                Err(error) => {
                    ctx.scale_expectations.forget(&key, ScaleAction::Delete, &name);
                    ctx.event(ds, EventKind::Warning, "FailedDelete", format!("Error deleting: {error}"));
                    Err(error.to_string())
                }
            }
        }))
        .await;
    errors.extend(deletes.into_iter().filter_map(Result::err));
    match errors.into_iter().next() {
        Some(message) => Err(ControllerError::Invalid(message)),
        None => Ok(wrote),
    }
}

/// The engine's view of a revision: DaemonSet pods carry the hash, not the name.
fn engine_revision(revision: &ControllerRevision) -> Option<Revision> {
    let mut parsed = Revision::from_controller_revision(revision).ok()?;
    parsed.name = hash_of(revision);
    Some(parsed)
}

/// Updates in place the pods that allow it (the `InPlaceUpdateReady` gate and a change the
/// engine can apply), at most `burstReplicas`; returns the pods to recreate instead (upstream
/// `inPlaceUpdatePods`) and when to look again.
async fn in_place_update_pods(
    ctx: &Context,
    ds: &DaemonSet,
    pods: &HashMap<String, &Pod>,
    names: Vec<String>,
    current: &ControllerRevision,
    old_revisions: &[ControllerRevision],
) -> Result<(Vec<String>, Option<Duration>), ControllerError> {
    let options = UpdateOptions::default();
    let target = engine_revision(current);
    let mut recreate = Vec::new();
    let mut updatable: Vec<(&Pod, Revision)> = Vec::new();
    for name in names {
        let Some(pod) = pods.get(&name).copied() else { continue };
        let old = old_revisions.iter().find(|r| hash_of(r) == revision_hash(pod)).and_then(engine_revision);
        match (&target, old) {
            (Some(target), Some(old))
                if has_in_place_readiness_gate(pod)
                    && ctx.engine.can_update_in_place(&old, target, &options) =>
            {
                updatable.push((pod, old));
            }
            _ => recreate.push(name),
        }
    }
    let Some(target) = target else { return Ok((recreate, None)) };
    updatable.truncate(core::burst_replicas(ds));
    // All at once, as upstream does with one goroutine per pod: a batch costs one round trip,
    // not one per pod.
    let outcomes = futures::future::join_all(updatable.into_iter().map(|(pod, old)| {
        let (options, target) = (&options, &target);
        async move { (pod, ctx.engine.update(pod, &old, target, options).await) }
    }))
    .await;
    let mut requeue = None;
    let mut errors = Vec::new();
    for (pod, outcome) in outcomes {
        match outcome {
            Ok(result) if result.in_place => {
                if let Some(rv) = &result.resource_version {
                    ctx.rv_expectations.expect(&pod_key(pod), rv, Instant::now());
                }
                requeue = earliest(requeue, result.requeue_after);
                ctx.metrics.pod_updated(CONTROLLER_NAME, true);
                ctx.event(
                    ds,
                    EventKind::Normal,
                    "SuccessfulUpdatePodInPlace",
                    format!("successfully update pod {} in-place", pod.name_any()),
                );
            }
            Ok(_) => recreate.push(pod.name_any()),
            Err(error) => {
                ctx.event(
                    ds,
                    EventKind::Warning,
                    "FailedUpdatePodInPlace",
                    format!(
                        "failed to update pod {} in-place(revision {}): {error}",
                        pod.name_any(),
                        current.name_any()
                    ),
                );
                errors.push(format!("in-place update of pod {}: {error}", pod.name_any()));
            }
        }
    }
    match errors.into_iter().next() {
        Some(message) => Err(ControllerError::Invalid(message)),
        None => Ok((recreate, requeue)),
    }
}

/// Image pre-download for the rollout under way (upstream `createImagePullJobsForInPlaceUpdate`,
/// through the shared [`crate::predownload`]), or clean-up of the DaemonSet's jobs once every
/// node runs the update revision. Failures are logged and do not stop the reconcile.
async fn pre_download(
    ctx: &Context,
    ds: &DaemonSet,
    current: &ControllerRevision,
    old_revisions: &[ControllerRevision],
    hash: &str,
) {
    use kruise_crds::common::well_known::IMAGE_PRE_DOWNLOAD_CREATED;

    use crate::{predownload, workload::revision::template_of};
    let status = ds.status.clone().unwrap_or_default();
    let namespace = ds.namespace().unwrap_or_default();
    let uid = ds.uid().unwrap_or_default();
    let converged =
        status.updated_number_scheduled == status.desired_number_scheduled && status.update_revision == hash;
    let result = if !converged {
        ctx.pre_download_cleaned.lock().remove(&uid);
        let (Some(template), Some(owner)) = (template_of(current), ds.controller_owner_ref(&())) else {
            return;
        };
        let old_templates: Vec<_> = old_revisions.iter().filter_map(template_of).collect();
        let rolling = ds.spec.update_strategy.rolling_update.clone().unwrap_or_default();
        let desired = status.desired_number_scheduled;
        let default_unavailable = k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(1);
        let rollout = predownload::Rollout {
            update_revision_labels: current.labels(),
            replicas: desired,
            partition: rolling
                .partition
                .as_ref()
                .map_or(0, |p| kruise_crds::intstr::scaled_value(p, desired, false).unwrap_or(0)),
            max_unavailable: kruise_crds::intstr::scaled_value(
                rolling.max_unavailable.as_ref().unwrap_or(&default_unavailable),
                desired,
                true,
            )
            .unwrap_or(1),
            changed_images: predownload::changed_images(&old_templates.iter().collect::<Vec<_>>(), &template),
            ..predownload::Rollout::default()
        };
        let workload = predownload::Workload {
            kind: "DaemonSet",
            namespace: &namespace,
            name: &ds.name_any(),
            owner,
            selector: ds.spec.selector.as_ref(),
            template: &ds.spec.template,
            knobs: predownload::Knobs::resolve(None, ds.metadata.annotations.as_ref()),
        };
        predownload::reconcile(
            &ctx.client,
            &workload,
            predownload::decide(&rollout),
            current,
            |reason, note| ctx.event(ds, EventKind::Normal, reason, note),
        )
        .await
    } else if current.labels().contains_key(IMAGE_PRE_DOWNLOAD_CREATED)
        && ctx.pre_download_cleaned.lock().get(&uid).map(String::as_str) != Some(hash)
    {
        let result = predownload::delete_jobs_of(&ctx.client, ds).await;
        if result.is_ok() {
            ctx.pre_download_cleaned.lock().insert(uid, hash.to_string());
        }
        result
    } else {
        Ok(())
    };
    if let Err(error) = result {
        tracing::warn!(daemonset = %key_of(ds), %error, "image pre-download failed");
    }
}

/// Computes the status (upstream `updateDaemonSetStatus`) and writes it when it differs from
/// what `latest` holds; `latest` becomes the DaemonSet as stored. Returns whether the status is
/// now on record (false when the write gave up: the spec moved on, the object is gone, or it
/// kept conflicting) and when to look again.
async fn write_status(
    ctx: &Context,
    latest: &mut DaemonSet,
    nodes: &[&Node],
    by_node: &BTreeMap<String, Vec<&Pod>>,
    hash: &str,
    collision_count: Option<i32>,
    observed: bool,
) -> Result<(bool, Option<Duration>), ControllerError> {
    let (status, requeue) =
        core::compute_status(latest, nodes, by_node, hash, collision_count, observed, Timestamp::now());
    if latest.status.as_ref() == Some(&status) {
        return Ok((true, requeue));
    }
    tracing::debug!(
        daemonset = %key_of(latest),
        desired = status.desired_number_scheduled,
        current = status.current_number_scheduled,
        ready = status.number_ready,
        updated = status.updated_number_scheduled,
        available = status.number_available,
        observed_generation = status.observed_generation,
        "writing the status"
    );
    let stored = crate::runtime::workload::replace_status(&ctx.client, latest, |object| {
        object.status = Some(status.clone())
    })
    .await?;
    let on_record = stored.is_some();
    if let Some(stored) = stored {
        *latest = stored;
    }
    Ok((on_record, requeue))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;
    use crate::daemonset::core::{fixtures::daemonset, target_node_name};

    #[test]
    fn new_pods_carry_the_hash_the_node_and_the_daemon_tolerations() {
        let mut ds = daemonset("ds");
        let pod = new_pod(&ds, "node-1", "abc");
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("ds-"));
        assert_eq!(pod.labels()["app"], "ds");
        assert_eq!(pod.labels()[CONTROLLER_REVISION_HASH], "abc");
        assert!(!pod.labels().contains_key(POD_TEMPLATE_GENERATION_LABEL));
        let owner = &pod.owner_references()[0];
        assert_eq!((owner.kind.as_str(), owner.controller), ("DaemonSet", Some(true)));
        assert_eq!(target_node_name(&pod).as_deref(), Some("node-1"));
        let spec = pod.spec.unwrap();
        assert_eq!(spec.node_name, None, "the scheduler binds it");
        assert_eq!(spec.tolerations.unwrap().len(), 6);
        assert!(spec.readiness_gates.is_none());

        ds.spec.update_strategy.rolling_update.as_mut().unwrap().type_ =
            DaemonSetRollingUpdateType::InPlaceIfPossible;
        ds.metadata.annotations =
            Some([(core::pods::DEPRECATED_TEMPLATE_GENERATION.to_string(), "2".to_string())].into());
        let pod = new_pod(&ds, "node-1", "abc");
        assert_eq!(pod.labels()[POD_TEMPLATE_GENERATION_LABEL], "2");
        assert!(has_in_place_readiness_gate(&pod));
    }

    #[test]
    fn requeue_takes_the_earliest() {
        let (a, b) = (Some(Duration::from_secs(1)), Some(Duration::from_secs(2)));
        assert_eq!(earliest(a, b), a);
        assert_eq!(earliest(None, b), b);
        assert_eq!(earliest(None, None), None);
    }
}
