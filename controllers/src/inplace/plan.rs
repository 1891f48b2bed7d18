//! The writes of an in-place update, decided purely from the pod as last read: the pod patch
//! that starts an update (or parks it for a grace period), the patch that applies a due grace
//! spec or the next batch, and what a refresh has to do next. The engine only sends them.
//!
//! Every pod patch is a strategic-merge patch carrying the pod's `resourceVersion`, so it
//! applies only to the pod it was computed from (409 otherwise: re-read and re-plan), and it
//! names only the keys the engine owns: other writers' labels and annotations are untouched.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::core::v1::{Pod, PodCondition},
    apimachinery::pkg::apis::meta::v1::Time,
};
use kruise_crds::common::{
    IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_GRACE_KEY_OLD, IN_PLACE_UPDATE_STATE_KEY,
    IN_PLACE_UPDATE_STATE_KEY_OLD, InPlaceUpdateSpec, InPlaceUpdateState,
};
use serde_json::{Map, Value, json};

use super::{
    batch::{BatchPlan, has_next_batch, next_batch_blocker, next_batch_spec, plan_batch},
    completion::{NotCompleted, annotation, check_containers_completed, update_state},
    conditions::{finish_update_condition, has_readiness_gate},
    diff::merge_into,
    error::InPlaceError,
    options::{InPlaceGates, RevisionAdapter, UpdateOptions},
    resources::{resize_patch, resize_restarts_a_container},
    spec::UpdateSpec,
};

/// Whether the pod must be marked NotReady before it is changed
/// (`defaultCheckPodNeedsBeUnready`): pods with the `InPlaceUpdateReady` gate are, except when
/// only resources change and no container restarts for it (its `resizePolicy`).
pub fn needs_unready(pod: &Pod, spec: &UpdateSpec, gates: &InPlaceGates) -> bool {
    if !gates.vertical_scaling || !spec.vertical_update_only() {
        return has_readiness_gate(pod);
    }
    let containers = pod.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
    resize_restarts_a_container(containers, &spec.container_resources) && has_readiness_gate(pod)
}

/// The writes that move a pod forward.
#[derive(Clone, Debug, PartialEq)]
pub struct PodPatchPlan {
    /// Strategic-merge patch of the pod (with its `resourceVersion` as precondition).
    pub patch: Value,
    /// Body for `pods/resize`, sent before the patch, when resources change in this batch.
    pub resize: Option<Value>,
    /// The state the patch writes.
    pub state: InPlaceUpdateState,
    /// The containers changed now (empty when only the grace annotation is written).
    pub batch: Vec<String>,
}

/// The skeleton of a pod patch: `metadata.resourceVersion` as precondition.
fn patch_base(pod: &Pod) -> Value {
    match &pod.metadata.resource_version {
        Some(rv) => json!({"metadata": {"resourceVersion": rv}}),
        None => json!({"metadata": {}}),
    }
}

fn string_map(map: &BTreeMap<String, String>) -> Value {
    Value::Object(map.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
}

fn state_json(state: &InPlaceUpdateState) -> Result<String, InPlaceError> {
    Ok(serde_json::to_string(state)?)
}

/// Adds a batch to a patch: the template metadata patch, the env-from-metadata labels and
/// annotations, and the new images (containers are merged by name).
fn add_batch(patch: &mut Value, pod: &Pod, batch: &BatchPlan) {
    if let Some(metadata_patch) = &batch.metadata_patch {
        merge_into(patch, metadata_patch.clone());
    }
    if !batch.labels.is_empty() {
        merge_into(patch, json!({"metadata": {"labels": string_map(&batch.labels)}}));
    }
    if !batch.annotations.is_empty() {
        merge_into(patch, json!({"metadata": {"annotations": string_map(&batch.annotations)}}));
    }
    let containers = pod.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
    let images: Vec<Value> = containers
        .iter()
        .filter_map(|c| batch.images.get(&c.name).map(|image| json!({"name": c.name, "image": image})))
        .collect();
    if !images.is_empty() {
        merge_into(patch, json!({"spec": {"containers": images}}));
    }
}

fn set_annotations(patch: &mut Value, annotations: Map<String, Value>) {
    merge_into(patch, json!({"metadata": {"annotations": Value::Object(annotations)}}));
}

/// The patch (and resize) that starts an update of `pod` to `spec` (upstream
/// `updatePodInPlace`): the revision labels and the caller's extra labels/annotations, a fresh
/// [`InPlaceUpdateState`] at `now`; then either the first batch (images, metadata, resources;
/// any grace annotation removed) or, with a grace period, only the grace annotation holding
/// `spec` for a later refresh.
pub fn plan_update(
    pod: &Pod,
    spec: &UpdateSpec,
    revision_labels: &BTreeMap<String, String>,
    options: &UpdateOptions,
    gates: &InPlaceGates,
    now: &Time,
) -> Result<PodPatchPlan, InPlaceError> {
    let mut state = InPlaceUpdateState {
        revision: spec.revision.clone(),
        update_timestamp: Some(now.clone()),
        update_env_from_metadata: spec.update_env_from_metadata.then_some(true),
        update_images: (!spec.container_images.is_empty()).then_some(true),
        update_resources: (!spec.container_resources.is_empty()).then_some(true),
        ..Default::default()
    };
    let mut patch = patch_base(pod);
    let mut labels = revision_labels.clone();
    labels.extend(options.extra_labels.clone());
    let mut annotations: Map<String, Value> =
        options.extra_annotations.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    annotations.insert(IN_PLACE_UPDATE_STATE_KEY_OLD.into(), Value::Null);

    let (batch, resize) = if spec.grace_seconds <= 0 {
        let batch = plan_batch(pod, spec, &mut state, gates, now);
        add_batch(&mut patch, pod, &batch);
        annotations.insert(IN_PLACE_UPDATE_GRACE_KEY.into(), Value::Null);
        annotations.insert(IN_PLACE_UPDATE_GRACE_KEY_OLD.into(), Value::Null);
        let containers = pod.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
        (batch.containers.clone(), resize_patch(containers, &batch.resources))
    } else {
        annotations.insert(
            IN_PLACE_UPDATE_GRACE_KEY.into(),
            Value::String(serde_json::to_string(&spec.to_wire()?)?),
        );
        (Vec::new(), None)
    };
    merge_into(&mut patch, json!({"metadata": {"labels": string_map(&labels)}}));
    annotations.insert(IN_PLACE_UPDATE_STATE_KEY.into(), Value::String(state_json(&state)?));
    set_annotations(&mut patch, annotations);
    Ok(PodPatchPlan { patch, resize, state, batch })
}

/// What to do about a pod's grace annotation.
#[derive(Clone, Debug, PartialEq)]
pub enum GraceDecision {
    /// The pod has no grace annotation.
    NotInGrace,
    /// The grace period runs for this much longer.
    Wait(Duration),
    /// The pod no longer targets the grace spec's revision (the workload rolled back or moved
    /// on): remove the annotation and let the workload update it again. Holds the patch.
    Drop(Value),
    /// The grace period is over: apply the spec's first batch.
    Apply(Box<PodPatchPlan>),
}

fn remaining(grace_seconds: i32, started: Option<&Time>, now: &Time) -> Option<Duration> {
    let started = started?;
    let elapsed_ms = now.0.as_millisecond().saturating_sub(started.0.as_millisecond());
    let left_ms = i64::from(grace_seconds).saturating_mul(1000).saturating_sub(elapsed_ms);
    // Rounded up to whole seconds, as upstream requeues.
    (left_ms > 0).then(|| Duration::from_secs(u64::try_from((left_ms + 999) / 1000).unwrap_or(u64::MAX)))
}

/// Decides about a pending grace period (upstream `finishGracePeriod`), from the pod as just
/// read.
pub fn plan_grace(
    pod: &Pod,
    revisions: &dyn RevisionAdapter,
    gates: &InPlaceGates,
    now: &Time,
) -> Result<GraceDecision, InPlaceError> {
    let Some(text) = annotation(pod, IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_GRACE_KEY_OLD) else {
        return Ok(GraceDecision::NotInGrace);
    };
    let invalid = |reason: String| InPlaceError::InvalidAnnotation { key: IN_PLACE_UPDATE_GRACE_KEY, reason };
    let wire: InPlaceUpdateSpec = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
    let spec = UpdateSpec::from_wire(&wire).map_err(invalid)?;
    let mut state = update_state(pod).map_err(state_error)?.ok_or(InPlaceError::GraceWithoutState)?;

    let mut patch = patch_base(pod);
    let mut annotations = Map::new();
    annotations.insert(IN_PLACE_UPDATE_GRACE_KEY.into(), Value::Null);
    annotations.insert(IN_PLACE_UPDATE_GRACE_KEY_OLD.into(), Value::Null);
    let empty = BTreeMap::new();
    if !revisions.is_at_revision(pod.metadata.labels.as_ref().unwrap_or(&empty), &spec.revision) {
        set_annotations(&mut patch, annotations);
        return Ok(GraceDecision::Drop(patch));
    }
    if let Some(wait) = remaining(spec.grace_seconds, state.update_timestamp.as_ref(), now) {
        return Ok(GraceDecision::Wait(wait));
    }
    let batch = plan_batch(pod, &spec, &mut state, gates, now);
    add_batch(&mut patch, pod, &batch);
    annotations.insert(IN_PLACE_UPDATE_STATE_KEY.into(), Value::String(state_json(&state)?));
    set_annotations(&mut patch, annotations);
    let containers = pod.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
    let resize = resize_patch(containers, &batch.resources);
    Ok(GraceDecision::Apply(Box::new(PodPatchPlan { patch, resize, state, batch: batch.containers })))
}

fn state_error(error: NotCompleted) -> InPlaceError {
    match error {
        NotCompleted::InvalidAnnotation { key, reason } => InPlaceError::InvalidAnnotation { key, reason },
        other => {
            InPlaceError::InvalidAnnotation { key: IN_PLACE_UPDATE_STATE_KEY, reason: other.to_string() }
        }
    }
}

/// The patch (and resize) that starts the next launch-priority batch recorded in the pod's
/// state (upstream `updateNextBatch`); `None` when no batch remains.
pub fn plan_next_batch(
    pod: &Pod,
    gates: &InPlaceGates,
    now: &Time,
) -> Result<Option<PodPatchPlan>, InPlaceError> {
    let Some(mut state) = update_state(pod).map_err(state_error)? else { return Ok(None) };
    let Some(spec) = next_batch_spec(&state) else { return Ok(None) };
    let mut patch = patch_base(pod);
    let batch = plan_batch(pod, &spec, &mut state, gates, now);
    add_batch(&mut patch, pod, &batch);
    let mut annotations = Map::new();
    annotations.insert(IN_PLACE_UPDATE_STATE_KEY.into(), Value::String(state_json(&state)?));
    set_annotations(&mut patch, annotations);
    let containers = pod.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
    let resize = resize_patch(containers, &batch.resources);
    Ok(Some(PodPatchPlan { patch, resize, state, batch: batch.containers }))
}

/// What a refresh does next for a pod (upstream `Refresh`, in order).
#[derive(Clone, Debug, PartialEq)]
pub enum RefreshStep {
    /// A grace annotation is present: decide about it with [`plan_grace`] on a fresh read.
    FinishGrace,
    /// The kubelet (or node daemon) has not finished the applied batches.
    AwaitContainers(NotCompleted),
    /// The previous batch finished, but its containers are not all Ready.
    AwaitBatchReady(String),
    /// Start the next batch with [`plan_next_batch`] on a fresh read.
    StartNextBatch,
    /// Everything finished: write this `InPlaceUpdateReady=True` condition.
    MarkReady(PodCondition),
    /// Nothing to do.
    Idle,
}

/// Decides the next refresh step for a pod.
pub fn decide_refresh(pod: &Pod, gates: &InPlaceGates, now: &Time) -> Result<RefreshStep, InPlaceError> {
    if annotation(pod, IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_GRACE_KEY_OLD).is_some() {
        return Ok(RefreshStep::FinishGrace);
    }
    if let Some(state) = update_state(pod).map_err(state_error)? {
        match check_containers_completed(pod, &state, gates) {
            Ok(()) => {}
            Err(NotCompleted::InvalidAnnotation { key, reason }) => {
                return Err(InPlaceError::InvalidAnnotation { key, reason });
            }
            Err(pending) => return Ok(RefreshStep::AwaitContainers(pending)),
        }
        if has_next_batch(&state) {
            return Ok(match next_batch_blocker(pod, &state) {
                Some(reason) => RefreshStep::AwaitBatchReady(reason),
                None => RefreshStep::StartNextBatch,
            });
        }
    }
    Ok(finish_update_condition(pod, now).map_or(RefreshStep::Idle, RefreshStep::MarkReady))
}

/// The strategic-merge patch of `pods/status` that writes the finished update's
/// `InPlaceUpdateReady` condition (merged by type) for the pod with this UID, with no
/// resourceVersion: the kubelet's status writes between our read and this write are no reason
/// to fail it (they never touch this condition). What would be, an in-place update of ours
/// started meanwhile, the workload controllers rule out by waiting for the cache to show their
/// own pod writes (resourceVersion expectations) before they refresh.
pub fn ready_condition_patch(pod: &Pod, condition: &PodCondition) -> Result<Value, InPlaceError> {
    Ok(json!({
        "metadata": {"uid": pod.metadata.uid},
        "status": {"conditions": [serde_json::to_value(condition)?]},
    }))
}

/// The strategic-merge patch of `pods/status` that writes `conditions` (merged by type), with
/// the pod's `resourceVersion` as precondition.
pub fn conditions_patch(pod: &Pod, conditions: &[PodCondition]) -> Result<Value, InPlaceError> {
    let mut patch = patch_base(pod);
    merge_into(&mut patch, json!({"status": {"conditions": serde_json::to_value(conditions)?}}));
    Ok(patch)
}
