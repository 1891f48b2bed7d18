//! Container launch priority batches: when containers of a pod start in priority order
//! (`KRUISE_CONTAINER_BARRIER`), an in-place update changes the highest-priority containers
//! first and the others only once those are Ready again. This module picks a batch and records
//! the rest in the pod's [`InPlaceUpdateState`] (upstream `defaultPatchUpdateSpecToPod`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::{Container, Pod, ResourceRequirements},
    apimachinery::pkg::apis::meta::v1::Time,
};
use kruise_crds::common::{
    InPlaceUpdateContainerBatch, InPlaceUpdateContainerStatus, InPlaceUpdatePreCheckBeforeNext,
    InPlaceUpdateState, launch_priority::container_priority,
};
use serde_json::Value;

use super::{
    options::InPlaceGates,
    spec::{RefMetadata, UpdateSpec},
};

/// What one batch changes on the pod.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BatchPlan {
    /// The containers of this batch, sorted.
    pub containers: Vec<String>,
    /// New image per container of this batch.
    pub images: BTreeMap<String, String>,
    /// Labels the env-from-metadata containers of this batch must see.
    pub labels: BTreeMap<String, String>,
    /// Annotations the env-from-metadata containers of this batch must see.
    pub annotations: BTreeMap<String, String>,
    /// cpu/memory the containers of this batch must get (through `pods/resize`).
    pub resources: BTreeMap<String, ResourceRequirements>,
    /// The template metadata patch (applied with the first batch).
    pub metadata_patch: Option<Value>,
}

/// Picks the containers to change now: every changed container without a priority, the
/// changed containers of the highest priority, and (transitively) every container that reads
/// a label/annotation one of those changes.
pub fn select_batch(containers: &[Container], spec: &UpdateSpec) -> BTreeSet<String> {
    let mut batch = BTreeSet::new();
    let mut highest: Option<(i64, Vec<String>)> = None;
    for container in containers {
        let name = &container.name;
        let changed = spec.container_images.contains_key(name)
            || spec.container_ref_metadata.contains_key(name)
            || spec.container_resources.contains_key(name);
        if !changed {
            continue;
        }
        let Some(priority) = container_priority(container) else {
            batch.insert(name.clone());
            continue;
        };
        match &mut highest {
            Some((top, names)) if priority == *top => names.push(name.clone()),
            Some((top, _)) if priority < *top => {}
            _ => highest = Some((priority, vec![name.clone()])),
        }
    }
    batch.extend(highest.into_iter().flat_map(|(_, names)| names));
    add_metadata_sharing_containers(&mut batch, &spec.container_ref_metadata);
    batch
}

/// Containers that read a label/annotation which a container of the batch changes must change
/// with it (the value is one), closed transitively.
fn add_metadata_sharing_containers(batch: &mut BTreeSet<String>, refs: &BTreeMap<String, RefMetadata>) {
    loop {
        let mut labels = BTreeSet::new();
        let mut annotations = BTreeSet::new();
        for name in batch.iter() {
            if let Some(meta) = refs.get(name) {
                labels.extend(meta.labels.keys());
                annotations.extend(meta.annotations.keys());
            }
        }
        let joining: Vec<String> = refs
            .iter()
            .filter(|(name, _)| !batch.contains(*name))
            .filter(|(_, meta)| {
                meta.labels.keys().any(|k| labels.contains(k))
                    || meta.annotations.keys().any(|k| annotations.contains(k))
            })
            .map(|(name, _)| name.clone())
            .collect();
        if joining.is_empty() {
            return;
        }
        batch.extend(joining);
    }
}

/// Plans the next batch of `spec` on `pod` and updates `state` accordingly: the old imageID of
/// each container whose image changes now (kept when already recorded), the changes left for
/// later batches (`next*`), the containers that must be Ready before those start, and a record
/// of this batch at `now`. Resources only count with the vertical-scaling gate.
pub fn plan_batch(
    pod: &Pod,
    spec: &UpdateSpec,
    state: &mut InPlaceUpdateState,
    gates: &InPlaceGates,
    now: &Time,
) -> BatchPlan {
    let containers = pod.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
    let batch = select_batch(containers, spec);
    let mut plan = BatchPlan { metadata_patch: spec.metadata_patch.clone(), ..Default::default() };
    let mut next_images = BTreeMap::new();
    let mut next_resources = BTreeMap::new();
    let mut next_metadata = BTreeMap::new();

    for container in containers {
        if let Some(image) = spec.container_images.get(&container.name) {
            if batch.contains(&container.name) {
                plan.images.insert(container.name.clone(), image.clone());
            } else {
                next_images.insert(container.name.clone(), image.clone());
            }
        }
    }
    let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref());
    for status in statuses.into_iter().flatten() {
        if plan.images.contains_key(&status.name) {
            state
                .last_container_statuses
                .entry(status.name.clone())
                .or_insert_with(|| InPlaceUpdateContainerStatus { image_id: Some(status.image_id.clone()) });
        }
    }
    if gates.vertical_scaling {
        for container in containers {
            if let Some(resources) = spec.container_resources.get(&container.name) {
                if batch.contains(&container.name) {
                    plan.resources.insert(container.name.clone(), resources.clone());
                } else {
                    next_resources.insert(container.name.clone(), resources.clone());
                }
            }
        }
    }
    for (name, meta) in &spec.container_ref_metadata {
        if batch.contains(name) {
            plan.labels.extend(meta.labels.clone());
            plan.annotations.extend(meta.annotations.clone());
        } else {
            next_metadata.insert(name.clone(), meta.clone());
        }
    }

    plan.containers = batch.into_iter().collect();
    let more = !next_images.is_empty() || !next_metadata.is_empty() || !next_resources.is_empty();
    state.pre_check_before_next = more.then(|| InPlaceUpdatePreCheckBeforeNext {
        containers_required_ready: Some(plan.containers.clone()),
    });
    state.next_container_images = (!next_images.is_empty()).then_some(next_images);
    state.next_container_resources = (!next_resources.is_empty()).then_some(next_resources);
    state.next_container_ref_metadata = (!next_metadata.is_empty()).then(|| {
        next_metadata
            .into_iter()
            .map(|(name, meta)| {
                let object = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                    labels: (!meta.labels.is_empty()).then_some(meta.labels),
                    annotations: (!meta.annotations.is_empty()).then_some(meta.annotations),
                    ..Default::default()
                };
                (name, object)
            })
            .collect()
    });
    state
        .container_batches_record
        .get_or_insert_with(Vec::new)
        .push(InPlaceUpdateContainerBatch { timestamp: now.clone(), containers: plan.containers.clone() });
    plan
}

/// The spec of the next batch recorded in a state (`next*`), or `None` when no batch remains.
pub fn next_batch_spec(state: &InPlaceUpdateState) -> Option<UpdateSpec> {
    let images = state.next_container_images.clone().unwrap_or_default();
    let resources = state.next_container_resources.clone().unwrap_or_default();
    let metadata: BTreeMap<String, RefMetadata> = state
        .next_container_ref_metadata
        .iter()
        .flatten()
        .map(|(name, meta)| {
            let refs = RefMetadata {
                labels: meta.labels.clone().unwrap_or_default(),
                annotations: meta.annotations.clone().unwrap_or_default(),
            };
            (name.clone(), refs)
        })
        .collect();
    if images.is_empty() && resources.is_empty() && metadata.is_empty() {
        return None;
    }
    Some(UpdateSpec {
        revision: state.revision.clone(),
        container_images: images,
        container_ref_metadata: metadata,
        container_resources: resources,
        metadata_patch: None,
        update_env_from_metadata: state.update_env_from_metadata.unwrap_or(false),
        grace_seconds: 0,
    })
}

/// Whether a state still has batches to apply.
pub fn has_next_batch(state: &InPlaceUpdateState) -> bool {
    state.next_container_images.as_ref().is_some_and(|m| !m.is_empty())
        || state.next_container_ref_metadata.as_ref().is_some_and(|m| !m.is_empty())
        || state.next_container_resources.as_ref().is_some_and(|m| !m.is_empty())
}

/// Why the next batch may not start yet: a container of the previous batch is not Ready (or
/// not reported). `None` when it may.
pub fn next_batch_blocker(pod: &Pod, state: &InPlaceUpdateState) -> Option<String> {
    let required = state.pre_check_before_next.as_ref()?.containers_required_ready.as_ref()?;
    let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref());
    for name in required {
        match statuses.into_iter().flatten().find(|s| &s.name == name) {
            None => return Some(format!("container {name} is not in the pod status")),
            Some(status) if !status.ready => {
                return Some(format!("waiting for container {name} to be ready"));
            }
            Some(_) => {}
        }
    }
    None
}
