//! When an in-place update has finished (upstream `DefaultCheckInPlaceUpdateCompleted`): the
//! kubelet runs every changed container with its new image (a new imageID, or the same digest
//! under the new name), resized containers report their new resources, and env-from-metadata
//! containers run with the new values (reported by the node daemon in
//! `apps.kruise.io/runtime-containers-meta`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};
use kruise_crds::common::{
    IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_GRACE_KEY_OLD, IN_PLACE_UPDATE_STATE_KEY,
    IN_PLACE_UPDATE_STATE_KEY_OLD, InPlaceUpdateState, RUNTIME_CONTAINERS_META_KEY, RuntimeContainerMetaSet,
};

use super::{
    batch::has_next_batch,
    gohash::{expected_env_from_metadata_hash, kubelet_container_hash},
    options::InPlaceGates,
    resources::container_resources_applied,
};

/// Why an in-place update has not finished yet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotCompleted {
    /// The grace period has not ended; the spec is not changed yet.
    #[error("still in the grace period of the in-place update")]
    InGrace,
    /// Containers of a later launch-priority batch still wait.
    #[error("containers remain to be updated in a later batch")]
    NextBatchPending,
    /// Env-from-metadata containers changed but the node daemon has not reported them.
    #[error("waiting for {RUNTIME_CONTAINERS_META_KEY} (written by the node daemon)")]
    RuntimeMetaMissing,
    /// A container still runs with old env-from-metadata values (or was not reported).
    #[error("container {0} does not run with the new env-from-metadata values yet")]
    EnvNotApplied(String),
    /// A resized container does not report its new resources yet.
    #[error("container {0} does not report its new resources yet")]
    ResourcesNotApplied(String),
    /// A container still runs its old image.
    #[error("container {0} imageID has not changed")]
    ImageNotChanged(String),
    /// Containers recorded at the start of the update are missing from the pod status.
    #[error("containers {0:?} are not in the pod status")]
    StatusMissing(Vec<String>),
    /// An annotation the check reads is not valid JSON of its type.
    #[error("annotation {key} is not valid: {reason}")]
    InvalidAnnotation {
        /// The annotation key.
        key: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// The pod's annotation `key`, or its legacy name `old`.
pub(crate) fn annotation<'a>(pod: &'a Pod, key: &str, old: &str) -> Option<&'a str> {
    let annotations = pod.metadata.annotations.as_ref()?;
    annotations.get(key).or_else(|| annotations.get(old)).map(String::as_str)
}

/// The pod's in-place update state, if it has one.
pub fn update_state(pod: &Pod) -> Result<Option<InPlaceUpdateState>, NotCompleted> {
    let Some(text) = annotation(pod, IN_PLACE_UPDATE_STATE_KEY, IN_PLACE_UPDATE_STATE_KEY_OLD) else {
        return Ok(None);
    };
    serde_json::from_str(text).map(Some).map_err(|e| NotCompleted::InvalidAnnotation {
        key: IN_PLACE_UPDATE_STATE_KEY,
        reason: e.to_string(),
    })
}

/// Whether the pod carries the grace annotation (its spec change is still pending).
pub fn in_grace_period(pod: &Pod) -> bool {
    annotation(pod, IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_GRACE_KEY_OLD).is_some()
}

fn runtime_meta(pod: &Pod) -> Result<Option<RuntimeContainerMetaSet>, NotCompleted> {
    let Some(text) = pod.metadata.annotations.as_ref().and_then(|a| a.get(RUNTIME_CONTAINERS_META_KEY))
    else {
        return Ok(None);
    };
    serde_json::from_str(text).map(Some).map_err(|e| NotCompleted::InvalidAnnotation {
        key: RUNTIME_CONTAINERS_META_KEY,
        reason: e.to_string(),
    })
}

/// Whether the whole in-place update of the pod has finished: no grace period pending, no
/// later batch waiting, and every container of the applied batches done (see
/// [`check_containers_completed`]). A pod without a state has nothing in flight.
pub fn check_update_completed(pod: &Pod, gates: &InPlaceGates) -> Result<(), NotCompleted> {
    if in_grace_period(pod) {
        return Err(NotCompleted::InGrace);
    }
    let Some(state) = update_state(pod)? else { return Ok(()) };
    if has_next_batch(&state) {
        return Err(NotCompleted::NextBatchPending);
    }
    check_containers_completed(pod, &state, gates)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum HashKind {
    Plain,
    EnvFromMetadata,
}

fn status_of<'a>(pod: &'a Pod, name: &str) -> Option<&'a ContainerStatus> {
    pod.status.as_ref()?.container_statuses.as_ref()?.iter().find(|s| s.name == name)
}

fn spec_containers(pod: &Pod) -> &[Container] {
    pod.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default()
}

/// The first container whose runtime report (same container ID as the kubelet's status)
/// does not match the expected hash; `None` when all match.
fn inconsistent_container(pod: &Pod, meta: &RuntimeContainerMetaSet, kind: HashKind) -> Option<String> {
    let empty = BTreeMap::new();
    let labels = pod.metadata.labels.as_ref().unwrap_or(&empty);
    let annotations = pod.metadata.annotations.as_ref().unwrap_or(&empty);
    for container in spec_containers(pod) {
        let consistent = status_of(pod, &container.name).is_some_and(|status| {
            meta.containers.iter().find(|m| m.name == container.name).is_some_and(|reported| {
                status.container_id.as_deref() == Some(reported.container_id.as_str())
                    && match kind {
                        HashKind::Plain => reported.hashes.plain_hash == kubelet_container_hash(container),
                        HashKind::EnvFromMetadata => {
                            reported.hashes.extracted_env_from_metadata_hash.unwrap_or(0)
                                == expected_env_from_metadata_hash(container, labels, annotations)
                        }
                    }
            })
        });
        if !consistent {
            return Some(container.name.clone());
        }
    }
    None
}

/// Whether the containers of the batches applied so far run as their spec says
/// (`defaultCheckContainersInPlaceUpdateCompleted`):
/// - env-from-metadata updates need the node daemon's report, with every container's env hash
///   matching the pod's current labels/annotations;
/// - resource updates (vertical-scaling gate) need every container to report its spec's
///   resources;
/// - when the daemon's kubelet hashes all match the spec, the update is done;
/// - otherwise each container recorded with its old imageID must report a new one, or the
///   same one under the new image name (`:latest` added to an untagged image).
pub fn check_containers_completed(
    pod: &Pod,
    state: &InPlaceUpdateState,
    gates: &InPlaceGates,
) -> Result<(), NotCompleted> {
    let meta = runtime_meta(pod)?;
    if state.update_env_from_metadata == Some(true) {
        let meta = meta.as_ref().ok_or(NotCompleted::RuntimeMetaMissing)?;
        if let Some(name) = inconsistent_container(pod, meta, HashKind::EnvFromMetadata) {
            return Err(NotCompleted::EnvNotApplied(name));
        }
    }
    if gates.vertical_scaling && state.update_resources == Some(true) {
        for container in spec_containers(pod) {
            if !container_resources_applied(container, status_of(pod, &container.name)) {
                return Err(NotCompleted::ResourcesNotApplied(container.name.clone()));
            }
        }
    }
    if let Some(meta) = &meta
        && inconsistent_container(pod, meta, HashKind::Plain).is_none()
    {
        return Ok(());
    }

    let mut pending: BTreeMap<&String, Option<&str>> =
        state.last_container_statuses.iter().map(|(name, s)| (name, s.image_id.as_deref())).collect();
    let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref());
    for status in statuses.into_iter().flatten() {
        let Some(old_image_id) = pending.remove(&status.name) else { continue };
        if old_image_id.unwrap_or_default() == status.image_id {
            let spec_image = spec_containers(pod)
                .iter()
                .find(|c| c.name == status.name)
                .and_then(|c| c.image.as_deref())
                .unwrap_or_default();
            let spec_image = if spec_image.contains(':') {
                spec_image.to_string()
            } else {
                format!("{spec_image}:latest")
            };
            if spec_image != status.image {
                return Err(NotCompleted::ImageNotChanged(status.name.clone()));
            }
        }
    }
    if !pending.is_empty() {
        return Err(NotCompleted::StatusMissing(pending.into_keys().cloned().collect()));
    }
    Ok(())
}
