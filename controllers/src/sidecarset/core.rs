//! The SidecarSet controller's decisions (upstream `pkg/controller/sidecarset` and
//! `pkg/control/sidecarcontrol`), pure functions of the SidecarSet and its pods:
//!
//! - which pods it manages ([`manages_pod`]) and its status ([`status_of`]);
//! - which of them to upgrade next ([`next_upgrade`]) under `selector`, `partition`,
//!   `maxUnavailable` and the update order;
//! - each pod's upgrade ([`upgraded_pod`]: new sidecar images, the pod's hash annotations and
//!   in-place update state) and, for hot upgrade, the reset of the old container to the empty
//!   image once the new one is ready ([`hot_upgrade_flipped`]).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::{Container, Pod},
    apimachinery::pkg::apis::meta::v1::Time,
};
use kruise_crds::{
    apps::v1beta1::{
        SidecarContainer, SidecarContainerUpgradeType, SidecarSet, SidecarSetStatus,
        SidecarSetUpdateStrategyType,
    },
    common::{UpdateScatterTerm, inplace::InPlaceUpdateContainerStatus, inplace::InPlaceUpdateState},
    defaults::{SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION},
    intstr, selector,
};
use serde_json::Value;

use super::{
    inject::pod_matches_sidecarset,
    podstate::{
        SIDECARSET_WORKING_HOT_UPGRADE_ANNOTATION, SidecarSetUpgradeSpec, injected_sidecarsets,
        upgrade_specs, working_hot_upgrade_containers,
    },
};
use crate::workload::{
    pods::{is_pod_active, is_pod_ready, phase},
    update_order::sort_update_indexes,
};

/// Pod annotation: per SidecarSet, the in-place update state of its last sidecar upgrade.
pub const SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION: &str = "kruise.io/sidecarset-inplace-update-state";
/// Pod condition: whether every SidecarSet of the pod can upgrade it in place.
pub const SIDECARSET_UPGRADABLE_CONDITION: &str = "SidecarSetUpgradable";

fn annotation<'a>(set: &'a SidecarSet, key: &str) -> &'a str {
    set.metadata.annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str).unwrap_or_default()
}

fn name_of(set: &SidecarSet) -> &str {
    set.metadata.name.as_deref().unwrap_or_default()
}

fn is_hot_upgrade(sidecar: &SidecarContainer) -> bool {
    sidecar.upgrade_strategy.upgrade_type == SidecarContainerUpgradeType::HotUpgrade
}

fn hot_upgrade_names(name: &str) -> (String, String) {
    (format!("{name}-1"), format!("{name}-2"))
}

fn container<'a>(pod: &'a Pod, name: &str) -> Option<&'a Container> {
    pod.spec.as_ref()?.containers.iter().find(|c| c.name == name)
}

fn container_status<'a>(pod: &'a Pod, name: &str) -> Option<&'a k8s_openapi::api::core::v1::ContainerStatus> {
    pod.status.as_ref()?.container_statuses.as_ref()?.iter().find(|s| s.name == name)
}

/// The names the SidecarSet's containers have in a pod (a hot-upgrade sidecar is two).
pub fn sidecar_names_in_pod(set: &SidecarSet) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for sidecar in &set.spec.containers {
        if is_hot_upgrade(sidecar) {
            let (first, second) = hot_upgrade_names(&sidecar.container.name);
            names.insert(first);
            names.insert(second);
        } else {
            names.insert(sidecar.container.name.clone());
        }
    }
    names
}

/// The working and the idle container of a hot-upgrade sidecar in `pod`.
pub fn hot_upgrade_containers(sidecar: &str, pod: &Pod) -> (String, String) {
    let (first, second) = hot_upgrade_names(sidecar);
    if working_hot_upgrade_containers(&pod.metadata).get(sidecar) == Some(&first) {
        (first, second)
    } else {
        (second, first)
    }
}

/// Whether the SidecarSet manages `pod`: selected (namespace labels as given), active,
/// injected by it, and holding all its containers.
pub fn manages_pod(set: &SidecarSet, pod: &Pod, namespace_labels: Option<&BTreeMap<String, String>>) -> bool {
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    pod_matches_sidecarset(set, &labels, namespace_labels)
        && is_pod_active(pod)
        && injected_sidecarsets(&pod.metadata).contains(name_of(set))
        && set.spec.containers.iter().all(|sidecar| {
            if is_hot_upgrade(sidecar) {
                let (first, second) = hot_upgrade_names(&sidecar.container.name);
                working_hot_upgrade_containers(&pod.metadata).contains_key(&sidecar.container.name)
                    && container(pod, &first).is_some()
                    && container(pod, &second).is_some()
            } else {
                container(pod, &sidecar.container.name).is_some()
            }
        })
}

/// Whether the pod runs the SidecarSet's latest sidecars.
pub fn is_updated(set: &SidecarSet, pod: &Pod) -> bool {
    upgrade_specs(&pod.metadata, SIDECARSET_HASH_ANNOTATION)
        .get(name_of(set))
        .map(|s| s.hash.as_str())
        .unwrap_or_default()
        == annotation(set, SIDECARSET_HASH_ANNOTATION)
}

fn pod_hash_without_image(set: &SidecarSet, pod: &Pod) -> String {
    upgrade_specs(&pod.metadata, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION)
        .get(name_of(set))
        .map(|s| s.hash.clone())
        .unwrap_or_default()
}

fn is_running_and_ready(pod: &Pod) -> bool {
    phase(pod) == "Running" && is_pod_ready(pod)
}

/// Ready as upstream counts it: running and ready, and every hot-upgrade sidecar's idle
/// container back on the empty image.
pub fn is_ready(set: &SidecarSet, pod: &Pod) -> bool {
    let idle_not_empty = set.spec.containers.iter().filter(|s| is_hot_upgrade(s)).any(|sidecar| {
        let (_, idle) = hot_upgrade_containers(&sidecar.container.name, pod);
        let empty = &sidecar.upgrade_strategy.hot_upgrade_empty_image;
        !empty.is_empty() && container(pod, &idle).and_then(|c| c.image.as_deref()) != Some(empty.as_str())
    });
    !idle_not_empty && is_running_and_ready(pod)
}

fn update_states(pod: &Pod) -> Option<BTreeMap<String, InPlaceUpdateState>> {
    match pod.metadata.annotations.as_ref().and_then(|a| a.get(SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION)) {
        None => Some(BTreeMap::new()),
        Some(text) => serde_json::from_str(text).ok(),
    }
}

/// Whether the running sidecars `names` are what the spec asks: for each, the image ID
/// changed since the upgrade recorded it (or the spec and status images agree).
pub fn is_state_consistent(set: &SidecarSet, pod: &Pod, names: &BTreeSet<String>) -> bool {
    let spec_count = pod.spec.as_ref().map_or(0, |s| s.containers.len());
    let status_count = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref()).map_or(0, Vec::len);
    if spec_count != status_count {
        return false;
    }
    let Some(states) = update_states(pod) else { return false };
    let Some(state) = states.get(name_of(set)) else { return true };
    names.iter().all(|name| {
        let (Some(spec), Some(status)) = (container(pod, name), container_status(pod, name)) else {
            return true;
        };
        match state.last_container_statuses.get(name) {
            Some(recorded) => {
                !(recorded.image_id.as_deref().unwrap_or_default() == status.image_id
                    && spec.image.as_deref().unwrap_or_default() != status.image)
            }
            None => true,
        }
    })
}

/// Whether the pod can be upgraded in place (only images differ from its revision) and
/// whether it is consistent now (no sidecar mid-restart).
pub fn upgradability(set: &SidecarSet, pod: &Pod) -> (bool, bool) {
    if pod_hash_without_image(set, pod) != annotation(set, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION) {
        return (false, false);
    }
    let consistent = sidecar_names_in_pod(set).iter().all(|name| {
        let ready = container_status(pod, name).is_some_and(|s| s.ready);
        !ready || is_state_consistent(set, pod, &BTreeSet::from([name.clone()]))
    });
    (true, consistent)
}

/// The SidecarSet's status over the pods it manages.
pub fn status_of(
    set: &SidecarSet,
    pods: &[&Pod],
    latest_revision: &str,
    collision_count: i32,
) -> SidecarSetStatus {
    let names = sidecar_names_in_pod(set);
    let mut status = SidecarSetStatus {
        observed_generation: set.metadata.generation.unwrap_or_default(),
        matched_pods: i32::try_from(pods.len()).unwrap_or(i32::MAX),
        latest_revision: latest_revision.to_string(),
        collision_count: Some(collision_count),
        ..Default::default()
    };
    for pod in pods {
        let updated = is_updated(set, pod);
        status.updated_pods += i32::from(updated);
        if is_state_consistent(set, pod, &names) && is_ready(set, pod) {
            status.ready_pods += 1;
            status.updated_ready_pods += i32::from(updated);
        }
    }
    status
}

/// Whether the SidecarSet upgrades pods at all now (not `NotUpdate`, not paused).
pub fn upgrades_pods(set: &SidecarSet) -> bool {
    let strategy = &set.spec.update_strategy;
    strategy.type_ != SidecarSetUpdateStrategyType::NotUpdate && !strategy.paused
}

/// Scatter terms with `value: "*"` expanded to every value the pods carry for that key.
fn expanded_scatter(terms: &[UpdateScatterTerm], pods: &[&Pod]) -> Vec<UpdateScatterTerm> {
    let mut expanded: Vec<UpdateScatterTerm> = Vec::new();
    let mut push = |term: UpdateScatterTerm| {
        if !expanded.iter().any(|t| t.key == term.key && t.value == term.value) {
            expanded.push(term);
        }
    };
    for term in terms {
        if term.value != "*" {
            push(term.clone());
            continue;
        }
        for pod in pods {
            if let Some(value) = pod.metadata.labels.as_ref().and_then(|l| l.get(&term.key)) {
                push(UpdateScatterTerm { key: term.key.clone(), value: value.clone() });
            }
        }
    }
    expanded
}

/// The next pods to upgrade (positions in `pods`) and the pods that cannot be upgraded in
/// place (upstream `GetNextUpgradePods`): pods not updated and selected by
/// `updateStrategy.selector`, in update order; the last `partition` of them kept back; then as
/// many as `maxUnavailable` allows, counting updated pods that are not ready (a pod that is
/// not ready itself takes no budget).
pub fn next_upgrade(set: &SidecarSet, pods: &[&Pod]) -> (Vec<usize>, Vec<usize>) {
    let strategy = &set.spec.update_strategy;
    let mut waiting = Vec::new();
    let mut not_upgradable = Vec::new();
    for (index, pod) in pods.iter().enumerate() {
        let selected = strategy
            .selector
            .as_ref()
            .is_none_or(|s| selector::matches(s, pod.metadata.labels.as_ref().unwrap_or(&BTreeMap::new())));
        if is_updated(set, pod) || !selected {
            continue;
        }
        match upgradability(set, pod) {
            (true, true) => waiting.push(index),
            (false, _) => not_upgradable.push(index),
            (true, false) => {}
        }
    }
    let scatter = expanded_scatter(&strategy.scatter_strategy, pods);
    let waiting = sort_update_indexes(strategy.priority_strategy.as_ref(), &scatter, pods, waiting);
    let total = i32::try_from(pods.len()).unwrap_or(i32::MAX);
    let partition = intstr::partition_replicas(strategy.partition.as_ref(), Some(total))
        .map_or(0, |p| usize::try_from(p).unwrap_or(0));
    if waiting.len() <= partition {
        return (Vec::new(), not_upgradable);
    }
    let candidates = &waiting[..waiting.len() - partition];
    let max_unavailable = strategy
        .max_unavailable
        .as_ref()
        .and_then(|m| intstr::scaled_value(m, total, true).ok())
        .map_or(1, |m| usize::try_from(m).unwrap_or(0));
    let names = sidecar_names_in_pod(set);
    let mut unavailable = pods
        .iter()
        .filter(|pod| is_updated(set, pod) && (!is_state_consistent(set, pod, &names) || !is_ready(set, pod)))
        .count();
    let mut chosen = Vec::new();
    for &index in candidates {
        if !is_ready(set, pods[index]) {
            chosen.push(index);
            continue;
        }
        if unavailable >= max_unavailable {
            break;
        }
        unavailable += 1;
        chosen.push(index);
    }
    (chosen, not_upgradable)
}

fn set_annotation(pod: &mut Pod, key: &str, value: String) {
    pod.metadata.annotations.get_or_insert_with(BTreeMap::new).insert(key.to_string(), value);
}

fn image_id(pod: &Pod, name: &str) -> String {
    container_status(pod, name).map(|s| s.image_id.clone()).unwrap_or_default()
}

/// Records `changed` containers' current image IDs in the pod's in-place update state for the
/// SidecarSet, so completion can be told by the image ID changing.
fn record_update_state(set: &SidecarSet, pod: &mut Pod, changed: &[String], now: &Time) {
    let mut states = update_states(pod).unwrap_or_default();
    let state = states.entry(name_of(set).to_string()).or_insert_with(|| InPlaceUpdateState {
        revision: annotation(set, SIDECARSET_HASH_ANNOTATION).to_string(),
        update_timestamp: Some(now.clone()),
        ..Default::default()
    });
    for name in changed {
        let status = InPlaceUpdateContainerStatus { image_id: Some(image_id(pod, name)) };
        state.last_container_statuses.insert(name.clone(), status);
    }
    let text = serde_json::to_string(&states).unwrap_or_default();
    set_annotation(pod, SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION, text);
}

/// The container of a hot-upgrade sidecar to put the new image into: the one on the empty
/// image, else the one not ready, else the idle one.
fn hot_upgrade_target(set: &SidecarSet, sidecar: &SidecarContainer, pod: &Pod) -> (String, String) {
    let (first, second) = hot_upgrade_names(&sidecar.container.name);
    let empty = sidecar.upgrade_strategy.hot_upgrade_empty_image.as_str();
    let image = |name: &str| container(pod, name).and_then(|c| c.image.clone()).unwrap_or_default();
    if image(&first) == empty {
        return (first, second);
    }
    if image(&second) == empty {
        return (second, first);
    }
    let ready = |name: &str| {
        container_status(pod, name).is_some_and(|s| s.ready)
            && is_state_consistent(set, pod, &BTreeSet::from([name.to_string()]))
    };
    match (ready(&first), ready(&second)) {
        (true, false) => (second, first),
        (false, true) => (first, second),
        _ => {
            let (working, idle) = hot_upgrade_containers(&sidecar.container.name, pod);
            (idle, working)
        }
    }
}

/// The pod with the SidecarSet's latest sidecar images (a hot-upgrade sidecar's new image goes
/// into its idle container, which becomes the working one), its hash annotations, in-place
/// update state and patched metadata. `None` when nothing would change.
pub fn upgraded_pod(set: &SidecarSet, pod: &Pod, now: &Time) -> Result<Option<Pod>, super::InjectError> {
    let mut upgraded = pod.clone();
    let mut changed = Vec::new();
    let version = set.metadata.resource_version.clone().unwrap_or_default();
    for sidecar in &set.spec.containers {
        let new_image = sidecar.container.image.clone().unwrap_or_default();
        let (target, other) = if is_hot_upgrade(sidecar) {
            hot_upgrade_target(set, sidecar, pod)
        } else {
            (sidecar.container.name.clone(), sidecar.container.name.clone())
        };
        let old_image = container(pod, &other).and_then(|c| c.image.clone()).unwrap_or_default();
        if old_image == new_image {
            continue;
        }
        let Some(spec) = upgraded.spec.as_mut() else { continue };
        let Some(entry) = spec.containers.iter_mut().find(|c| c.name == target) else { continue };
        entry.image = Some(new_image);
        changed.push(target.clone());
        if is_hot_upgrade(sidecar) {
            let mut working = working_hot_upgrade_containers(&upgraded.metadata);
            working.insert(sidecar.container.name.clone(), target.clone());
            set_annotation(
                &mut upgraded,
                SIDECARSET_WORKING_HOT_UPGRADE_ANNOTATION,
                serde_json::to_string(&working).unwrap_or_default(),
            );
            let other_version = upgraded
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(&format!("version.sidecarset.kruise.io/{other}")))
                .cloned()
                .unwrap_or_default();
            set_annotation(&mut upgraded, &format!("version.sidecarset.kruise.io/{target}"), version.clone());
            set_annotation(
                &mut upgraded,
                &format!("versionalt.sidecarset.kruise.io/{target}"),
                other_version,
            );
            set_annotation(
                &mut upgraded,
                &format!("versionalt.sidecarset.kruise.io/{other}"),
                version.clone(),
            );
        }
    }
    let mut hashes = upgrade_specs(&upgraded.metadata, SIDECARSET_HASH_ANNOTATION);
    let mut sidecar_list: Vec<String> =
        set.spec.containers.iter().map(|s| s.container.name.clone()).collect();
    sidecar_list.extend(
        set.spec
            .init_containers
            .iter()
            .filter(|s| s.container.restart_policy.as_deref() == Some("Always"))
            .map(|s| s.container.name.clone()),
    );
    sidecar_list.sort();
    sidecar_list.dedup();
    hashes.insert(
        name_of(set).to_string(),
        SidecarSetUpgradeSpec {
            update_timestamp: Some(now.clone()),
            hash: annotation(set, SIDECARSET_HASH_ANNOTATION).to_string(),
            sidecarset_name: name_of(set).to_string(),
            sidecar_list: Some(sidecar_list),
            controller_revision: set.status.as_ref().map(|s| s.latest_revision.clone()).unwrap_or_default(),
        },
    );
    set_annotation(
        &mut upgraded,
        SIDECARSET_HASH_ANNOTATION,
        serde_json::to_string(&hashes).unwrap_or_default(),
    );
    record_update_state(set, &mut upgraded, &changed, now);
    let mut annotations = upgraded.metadata.annotations.take().unwrap_or_default();
    super::inject::patch_pod_metadata(&mut annotations, &set.spec.patch_pod_metadata, name_of(set))?;
    upgraded.metadata.annotations = Some(annotations);
    Ok((upgraded != *pod).then_some(upgraded))
}

/// Whether a hot-upgrade pod has a new working container ready and its old one still on a real
/// image, so the old one can go back to the empty image.
pub fn hot_upgrade_ready_to_flip(set: &SidecarSet, pod: &Pod) -> bool {
    let hot: Vec<&SidecarContainer> = set.spec.containers.iter().filter(|s| is_hot_upgrade(s)).collect();
    if hot.is_empty() {
        return false;
    }
    let mut names = sidecar_names_in_pod(set);
    let mut idle_names = BTreeSet::new();
    let mut in_upgrade = false;
    for sidecar in &hot {
        let (_, idle) = hot_upgrade_containers(&sidecar.container.name, pod);
        names.remove(&idle);
        let empty = &sidecar.upgrade_strategy.hot_upgrade_empty_image;
        in_upgrade |= container(pod, &idle).and_then(|c| c.image.as_ref()) != Some(empty);
        idle_names.insert(idle);
    }
    if !in_upgrade || !is_state_consistent(set, pod, &names) {
        return false;
    }
    is_running_and_ready(pod)
        || pod.status.as_ref().and_then(|s| s.container_statuses.as_ref()).is_some_and(|statuses| {
            statuses.iter().filter(|s| !idle_names.contains(&s.name)).all(|s| s.ready)
        })
}

/// The pod with every hot-upgrade sidecar's idle container reset to the empty image.
pub fn hot_upgrade_flipped(set: &SidecarSet, pod: &Pod, now: &Time) -> Option<Pod> {
    let mut flipped = pod.clone();
    let mut changed = Vec::new();
    for sidecar in set.spec.containers.iter().filter(|s| is_hot_upgrade(s)) {
        let (working, idle) = hot_upgrade_containers(&sidecar.container.name, pod);
        let empty = sidecar.upgrade_strategy.hot_upgrade_empty_image.clone();
        let Some(entry) =
            flipped.spec.as_mut().and_then(|s| s.containers.iter_mut().find(|c| c.name == idle))
        else {
            continue;
        };
        if entry.image.as_deref() == Some(empty.as_str()) {
            continue;
        }
        entry.image = Some(empty);
        changed.push(idle.clone());
        set_annotation(&mut flipped, &format!("version.sidecarset.kruise.io/{idle}"), "0".into());
        set_annotation(&mut flipped, &format!("versionalt.sidecarset.kruise.io/{working}"), "0".into());
    }
    if changed.is_empty() {
        return None;
    }
    record_update_state(set, &mut flipped, &changed, now);
    Some(flipped)
}

/// The `SidecarSetUpgradable` condition after recording `upgradable` for this SidecarSet in its
/// message (a JSON map of SidecarSet name to bool); `None` when it would not change.
pub fn upgradable_condition(set: &SidecarSet, pod: &Pod, upgradable: bool, now: &Time) -> Option<Value> {
    let existing = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == SIDECARSET_UPGRADABLE_CONDITION));
    let mut message: BTreeMap<String, bool> = existing
        .and_then(|c| c.message.as_deref())
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or_default();
    message.insert(name_of(set).to_string(), upgradable);
    let all = message.values().all(|v| *v);
    let (status, reason) =
        if all { ("True", "AllSidecarsetUpgradable") } else { ("False", "UpdateImmutableField") };
    let text = serde_json::to_string(&message).unwrap_or_default();
    if let Some(existing) = existing
        && existing.status == status
        && existing.reason.as_deref() == Some(reason)
        && existing.message.as_deref() == Some(text.as_str())
    {
        return None;
    }
    Some(serde_json::json!({
        "type": SIDECARSET_UPGRADABLE_CONDITION, "status": status, "reason": reason, "message": text,
        "lastTransitionTime": serde_json::to_value(now).unwrap_or(Value::Null),
    }))
}

/// The revisions to delete so that at most `limit` (at least 1, default 10) of a SidecarSet's
/// revisions remain, as upstream counts them: the total, the latest included. `sorted` is
/// oldest first (the latest last, never deleted); revisions in `active` (what pods run, the
/// pinned one) are kept even when that leaves more than the limit.
pub fn sidecarset_revisions_to_truncate(
    sorted: &[String],
    active: &BTreeSet<String>,
    limit: i32,
) -> Vec<String> {
    let limit = usize::try_from(limit.max(1)).unwrap_or(1);
    let mut excess = sorted.len().saturating_sub(limit);
    let mut doomed = Vec::new();
    for name in sorted.iter().take(sorted.len().saturating_sub(1)) {
        if excess == 0 {
            break;
        }
        if !active.contains(name) {
            doomed.push(name.clone());
            excess -= 1;
        }
    }
    doomed
}

#[cfg(test)]
mod tests {
    //! Cases ported from upstream's `pkg/controller/sidecarset/sidecarset_strategy_test.go`
    //! (`TestGetNextUpgradePods`, same names and figures), plus the status and upgrade steps.
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    const V1_ID: &str = "docker-pullable://test-image@sha256:v1";
    const V2_ID: &str = "docker-pullable://test-image@sha256:v2";

    fn now() -> Time {
        serde_json::from_value(json!("2026-12-06T00:00:00Z")).unwrap()
    }

    fn sidecarset(hash_without_image: &str, strategy: Value) -> SidecarSet {
        serde_json::from_value(json!({
            "metadata": {"name": "test-sidecarset", "annotations": {
                "kruise.io/sidecarset-hash": "bbb", "kruise.io/sidecarset-hash-without-image": hash_without_image}},
            "spec": {"selector": {"matchLabels": {"app": "sidecar"}},
                     "containers": [{"name": "test-sidecar", "image": "test-image:v2"}],
                     "updateStrategy": strategy},
        }))
        .unwrap()
    }

    /// `count` pods injected at hash `aaa`; the first `upgraded` moved to `bbb` (spec image v2,
    /// v1's image ID recorded); the first `ready` of those running v2.
    fn pods(count: usize, upgraded: usize, ready: usize) -> Vec<Pod> {
        let set = sidecarset("without-aaa", json!({}));
        (0..count)
            .map(|i| {
                let mut pod: Pod = serde_json::from_value(json!({
                    "metadata": {"name": format!("pod-{i}"), "labels": {"app": "sidecar"}, "annotations": {
                        "kruise.io/sidecarset-hash": r#"{"test-sidecarset":{"hash":"aaa","sidecarList":["test-sidecar"]}}"#,
                        "kruise.io/sidecarset-hash-without-image": r#"{"test-sidecarset":{"hash":"without-aaa","sidecarList":["test-sidecar"]}}"#,
                        "kruise.io/sidecarset-injected-list": "test-sidecarset"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.15.1"}, {"name": "test-sidecar", "image": "test-image:v1"}]},
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                        "containerStatuses": [
                            {"name": "nginx", "image": "nginx:1.15.1", "imageID": "nginx-id", "ready": true,
                             "restartCount": 0, "state": {"running": {}}},
                            {"name": "test-sidecar", "image": "test-image:v1", "imageID": V1_ID, "ready": true,
                             "restartCount": 0, "state": {"running": {}}}]},
                }))
                .unwrap();
                if i < upgraded {
                    pod = upgraded_pod(&set, &pod, &now()).unwrap().unwrap();
                }
                if i < ready {
                    let status = &mut pod.status.as_mut().unwrap().container_statuses.as_mut().unwrap()[1];
                    status.image = "test-image:v2".into();
                    status.image_id = V2_ID.into();
                }
                pod
            })
            .collect()
    }

    /// Upstream shuffles the pods; a fixed interleaving keeps the test deterministic.
    fn shuffled(mut pods: Vec<Pod>) -> Vec<Pod> {
        let len = pods.len();
        for i in 0..len {
            pods.swap(i, (i * 7919 + 13) % len);
        }
        pods
    }

    #[test]
    fn get_next_upgrade_pods() {
        let cases: Vec<(&str, Vec<Pod>, SidecarSet, usize, usize)> = vec![
            (
                "only maxUnavailable(int=10), and pods(count=100, upgraded=30, upgradedAndReady=26)",
                pods(100, 30, 26),
                sidecarset("without-aaa", json!({"maxUnavailable": 10})),
                6,
                0,
            ),
            (
                "only maxUnavailable(string=10%), and pods(count=1000, upgraded=300, upgradedAndReady=260)",
                pods(1000, 300, 260),
                sidecarset("without-aaa", json!({"maxUnavailable": "10%"})),
                60,
                0,
            ),
            (
                "only maxUnavailable(string=5%), and pods(count=1000, upgraded=300, upgradedAndReady=250)",
                pods(1000, 300, 250),
                sidecarset("without-aaa", json!({"maxUnavailable": "5%"})),
                0,
                0,
            ),
            (
                "only maxUnavailable(int=100), and pods(count=100, upgraded=30, upgradedAndReady=27)",
                pods(100, 30, 27),
                sidecarset("without-aaa", json!({"maxUnavailable": 100})),
                70,
                0,
            ),
            (
                "partition(int=180) maxUnavailable(int=100), and pods(count=1000, upgraded=800, upgradedAndReady=760)",
                pods(1000, 800, 760),
                sidecarset("without-aaa", json!({"maxUnavailable": 100, "partition": 180})),
                20,
                0,
            ),
            (
                "partition(int=100) maxUnavailable(int=100), and pods(count=1000, upgraded=800, upgradedAndReady=760)",
                pods(1000, 800, 760),
                sidecarset("without-aaa", json!({"maxUnavailable": 100, "partition": 100})),
                60,
                0,
            ),
            (
                "partition(string=18%) maxUnavailable(int=100), and pods(count=1000, upgraded=800, upgradedAndReady=760)",
                pods(1000, 800, 760),
                sidecarset("without-aaa", json!({"maxUnavailable": 100, "partition": "18%"})),
                20,
                0,
            ),
            (
                "partition(string=10%) maxUnavailable(int=100), and pods(count=1000, upgraded=800, upgradedAndReady=760)",
                pods(1000, 800, 760),
                sidecarset("without-aaa", json!({"maxUnavailable": 100, "partition": "10%"})),
                60,
                0,
            ),
            (
                "selector(app=test, count=30) maxUnavailable(int=100), and pods(count=1000, upgraded=0, upgradedAndReady=0)",
                {
                    let mut all = pods(1000, 0, 0);
                    for pod in all.iter_mut().take(30) {
                        pod.metadata.labels.as_mut().unwrap().insert("app".into(), "test".into());
                    }
                    all
                },
                sidecarset(
                    "without-aaa",
                    json!({"maxUnavailable": 100, "selector": {"matchLabels": {"app": "test"}}}),
                ),
                30,
                0,
            ),
            (
                "not upgradable sidecarset, maxUnavailable(int=100), and pods(count=100, upgraded=0, upgradedAndReady=0)",
                pods(100, 0, 0),
                sidecarset("without-bbb", json!({"maxUnavailable": 100})),
                0,
                100,
            ),
            (
                "only maxUnavailable(5%), and pods(count=5, upgraded=0, upgradedAndReady=0)",
                pods(5, 0, 0),
                sidecarset("without-aaa", json!({"maxUnavailable": "5%"})),
                1,
                0,
            ),
            (
                "maxUnavailable(5) partition(99%), and pods(count=5, upgraded=0, upgradedAndReady=0)",
                pods(5, 0, 0),
                sidecarset("without-aaa", json!({"maxUnavailable": 5, "partition": "99%"})),
                1,
                0,
            ),
            (
                "maxUnavailable(5) partition(1%), and pods(count=5, upgraded=0, upgradedAndReady=0)",
                pods(5, 0, 0),
                sidecarset("without-aaa", json!({"maxUnavailable": 5, "partition": "1%"})),
                4,
                0,
            ),
        ];
        for (name, pods, set, upgrade, not_upgradable) in cases {
            let pods = shuffled(pods);
            let refs: Vec<&Pod> = pods.iter().collect();
            let (chosen, refused) = next_upgrade(&set, &refs);
            assert_eq!((chosen.len(), refused.len()), (upgrade, not_upgradable), "{name}");
        }
    }

    #[test]
    fn not_ready_pods_are_upgraded_first_and_take_no_budget() {
        let mut all = pods(4, 0, 0);
        all[3].status.as_mut().unwrap().conditions =
            Some(vec![serde_json::from_value(json!({"type": "Ready", "status": "False"})).unwrap()]);
        let refs: Vec<&Pod> = all.iter().collect();
        let (chosen, _) = next_upgrade(&sidecarset("without-aaa", json!({"maxUnavailable": 1})), &refs);
        assert_eq!(chosen, [3, 0], "the not-ready pod, then one ready pod within maxUnavailable 1");
    }

    #[test]
    fn status_counts_matched_updated_and_ready_pods() {
        let all = pods(10, 4, 3);
        let refs: Vec<&Pod> = all.iter().collect();
        let set = sidecarset("without-aaa", json!({}));
        let status = status_of(&set, &refs, "test-sidecarset-abc", 0);
        assert_eq!(
            (status.matched_pods, status.updated_pods, status.ready_pods, status.updated_ready_pods),
            (10, 4, 9, 3),
            "the upgraded pod still running v1 is neither ready nor updated-ready"
        );
        assert_eq!(status.latest_revision, "test-sidecarset-abc");
    }

    #[test]
    fn an_upgrade_changes_only_the_sidecar_image_and_records_the_old_image_id() {
        let set = sidecarset("without-aaa", json!({}));
        let before = &pods(1, 0, 0)[0];
        let after = upgraded_pod(&set, before, &now()).unwrap().unwrap();
        let images: Vec<&str> =
            after.spec.as_ref().unwrap().containers.iter().map(|c| c.image.as_deref().unwrap()).collect();
        assert_eq!(images, ["nginx:1.15.1", "test-image:v2"]);
        assert!(is_updated(&set, &after));
        let state: Value = serde_json::from_str(
            &after.metadata.annotations.as_ref().unwrap()[SIDECARSET_INPLACE_UPDATE_STATE_ANNOTATION],
        )
        .unwrap();
        assert_eq!(state["test-sidecarset"]["lastContainerStatuses"]["test-sidecar"]["imageID"], V1_ID);
        assert!(!is_state_consistent(&set, &after, &sidecar_names_in_pod(&set)), "v1 still runs");
        assert_eq!(upgraded_pod(&set, &after, &now()).unwrap(), None, "nothing left to change");
    }

    #[test]
    fn manages_only_pods_it_injected_and_holding_its_containers() {
        let set = sidecarset("without-aaa", json!({}));
        let mut pod = pods(1, 0, 0).remove(0);
        assert!(manages_pod(&set, &pod, None));
        pod.metadata.annotations.as_mut().unwrap().remove("kruise.io/sidecarset-injected-list");
        assert!(!manages_pod(&set, &pod, None));
    }

    #[test]
    fn hot_upgrade_puts_the_new_image_in_the_idle_container_then_resets_the_old_one() {
        let set: SidecarSet = serde_json::from_value(json!({
            "metadata": {"name": "hot", "resourceVersion": "42", "annotations": {
                "kruise.io/sidecarset-hash": "v2", "kruise.io/sidecarset-hash-without-image": "same"}},
            "spec": {"selector": {"matchLabels": {"app": "sidecar"}},
                     "containers": [{"name": "envoy", "image": "envoy:v2",
                        "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"}}]},
        }))
        .unwrap();
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "labels": {"app": "sidecar"}, "annotations": {
                "kruise.io/sidecarset-working-hotupgrade-container": r#"{"envoy":"envoy-1"}"#,
                "version.sidecarset.kruise.io/envoy-1": "1", "kruise.io/sidecarset-injected-list": "hot"}},
            "spec": {"containers": [{"name": "envoy-1", "image": "envoy:v1"}, {"name": "envoy-2", "image": "empty:1"}, {"name": "app", "image": "app"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [
                    {"name": "envoy-1", "image": "envoy:v1", "imageID": "e1", "ready": true, "restartCount": 0},
                    {"name": "envoy-2", "image": "empty:1", "imageID": "empty", "ready": true, "restartCount": 0},
                    {"name": "app", "image": "app", "imageID": "app", "ready": true, "restartCount": 0}]},
        }))
        .unwrap();
        let upgraded = upgraded_pod(&set, &pod, &now()).unwrap().unwrap();
        let images: Vec<&str> =
            upgraded.spec.as_ref().unwrap().containers.iter().map(|c| c.image.as_deref().unwrap()).collect();
        assert_eq!(images, ["envoy:v1", "envoy:v2", "app"], "the old one keeps serving");
        assert_eq!(
            hot_upgrade_containers("envoy", &upgraded),
            ("envoy-2".to_string(), "envoy-1".to_string())
        );
        let annotations = upgraded.metadata.annotations.clone().unwrap();
        assert_eq!(annotations["version.sidecarset.kruise.io/envoy-2"], "42");
        assert_eq!(annotations["versionalt.sidecarset.kruise.io/envoy-2"], "1");
        assert!(!is_ready(&set, &upgraded), "not ready while the idle container holds a real image");

        // The kubelet starts envoy-2 on v2; once it is ready, envoy-1 goes back to the empty image.
        let mut running = upgraded.clone();
        let statuses = running.status.as_mut().unwrap().container_statuses.as_mut().unwrap();
        statuses[1].image = "envoy:v2".into();
        statuses[1].image_id = "e2".into();
        assert!(hot_upgrade_ready_to_flip(&set, &running));
        let flipped = hot_upgrade_flipped(&set, &running, &now()).unwrap();
        let images: Vec<&str> =
            flipped.spec.as_ref().unwrap().containers.iter().map(|c| c.image.as_deref().unwrap()).collect();
        assert_eq!(images, ["empty:1", "envoy:v2", "app"]);
        assert_eq!(
            flipped.metadata.annotations.as_ref().unwrap()["version.sidecarset.kruise.io/envoy-1"],
            "0"
        );
    }

    #[test]
    fn the_upgradable_condition_keeps_one_entry_per_sidecarset() {
        let set = sidecarset("without-aaa", json!({}));
        let pod = pods(1, 0, 0).remove(0);
        let condition = upgradable_condition(&set, &pod, false, &now()).unwrap();
        assert_eq!(condition["status"], "False");
        assert_eq!(condition["reason"], "UpdateImmutableField");
        assert_eq!(condition["message"], r#"{"test-sidecarset":false}"#);
        let mut with = pod.clone();
        with.status
            .as_mut()
            .unwrap()
            .conditions
            .as_mut()
            .unwrap()
            .push(serde_json::from_value(condition).unwrap());
        assert!(upgradable_condition(&set, &with, false, &now()).is_none(), "no change, no write");
        assert_eq!(upgradable_condition(&set, &with, true, &now()).unwrap()["status"], "True");
    }

    #[test]
    fn revision_history_counts_the_latest_and_keeps_active_ones() {
        let names =
            |range: std::ops::RangeInclusive<i32>| range.map(|n| format!("r{n:02}")).collect::<Vec<_>>();
        let active = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        // 11 revisions, limit 10: the oldest goes (upstream "history revision checker" keeps 6..15).
        assert_eq!(sidecarset_revisions_to_truncate(&names(1..=11), &active(&[]), 10), ["r01"]);
        assert_eq!(sidecarset_revisions_to_truncate(&names(1..=10), &active(&[]), 10), Vec::<String>::new());
        // Active revisions are skipped; the next oldest go instead.
        assert_eq!(sidecarset_revisions_to_truncate(&names(1..=12), &active(&["r01"]), 10), ["r02", "r03"]);
        // The latest is never deleted, even with a limit below 1.
        assert_eq!(sidecarset_revisions_to_truncate(&names(1..=3), &active(&[]), 0), ["r01", "r02"]);
        // Everything active: over the limit, nothing to delete.
        assert_eq!(
            sidecarset_revisions_to_truncate(&names(1..=3), &active(&["r01", "r02"]), 1),
            Vec::<String>::new()
        );
    }
}
