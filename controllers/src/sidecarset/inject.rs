//! Sidecar injection at pod creation (upstream `sidecarsetMutatingPod` and `buildSidecars`):
//! which SidecarSets select the pod, and the pod with their containers, init containers,
//! volumes, pull secrets and annotations merged in.
//!
//! Everything here is pure: the caller supplies the SidecarSets (the revision to inject
//! already chosen), the pod's namespace labels and the clock.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::core::v1::{
        Container, EnvVar, EnvVarSource, LocalObjectReference, ObjectFieldSelector, Pod, Volume,
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use kruise_crds::{
    apps::v1beta1::{
        PodInjectPolicyType, SIDECARSET_BASE_ANNOTATION, SIDECARSET_CANARY_ANNOTATION, ShareVolumePolicyType,
        SidecarContainer, SidecarContainerUpgradeType, SidecarSet, SidecarSetPatchPodMetadata,
        SidecarSetPatchPolicyType,
    },
    defaults::{SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION},
    selector,
};

use super::podstate::{
    SIDECARSET_INJECTED_LIST_ANNOTATION, SIDECARSET_WORKING_HOT_UPGRADE_ANNOTATION, SidecarSetUpgradeSpec,
    injected_sidecarsets, upgrade_specs, working_hot_upgrade_containers,
};
use super::resources::{ResourcesPolicyError, resources_from_policy};

/// Env var set to `true` in every injected container; how a sidecar is told from an app
/// container later (upstream `IS_INJECTED`).
pub const SIDECAR_ENV: &str = "IS_INJECTED";
/// Env var of a hot-upgrade container: its version, from a pod annotation.
pub const SIDECARSET_VERSION_ENV: &str = "SIDECARSET_VERSION";
/// Env var of a hot-upgrade container: its twin's version, from a pod annotation.
pub const SIDECARSET_VERSION_ALT_ENV: &str = "SIDECARSET_VERSION_ALT";

/// Why a pod cannot be injected; the webhook refuses the pod with it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InjectError {
    /// A `MergePatchJson` patch or the pod's value of that annotation is not JSON.
    #[error("sidecarSet {sidecarset} cannot merge annotation {key}: {reason}")]
    MergePatch {
        /// The SidecarSet.
        sidecarset: String,
        /// The annotation.
        key: String,
        /// What was wrong.
        reason: String,
    },
    /// A sidecar's `resourcesPolicy` cannot be applied to this pod.
    #[error("sidecarSet {sidecarset} container {container} resourcesPolicy: {source}")]
    ResourcesPolicy {
        /// The SidecarSet.
        sidecarset: String,
        /// The sidecar container.
        container: String,
        /// What went wrong.
        source: ResourcesPolicyError,
    },
}

/// Whether `sidecarset` selects a pod with `pod_labels` in a namespace with
/// `namespace_labels` (`None`: unknown, which a namespace selector never matches). A missing
/// or empty pod selector selects nothing.
pub fn pod_matches_sidecarset(
    sidecarset: &SidecarSet,
    pod_labels: &BTreeMap<String, String>,
    namespace_labels: Option<&BTreeMap<String, String>>,
) -> bool {
    if let Some(namespace_selector) = &sidecarset.spec.namespace_selector {
        match namespace_labels {
            Some(labels) if selector::matches(namespace_selector, labels) => {}
            _ => return false,
        }
    }
    match &sidecarset.spec.selector {
        Some(pod_selector) if !selector::is_empty(pod_selector) => {
            selector::matches(pod_selector, pod_labels)
        }
        _ => false,
    }
}

/// Whether any of `sidecarsets` needs the namespace's labels to decide (saves the read).
pub fn needs_namespace_labels(sidecarsets: &[SidecarSet]) -> bool {
    sidecarsets.iter().any(|sidecarset| sidecarset.spec.namespace_selector.is_some())
}

/// A canary SidecarSet names its base; the base is then not injected where the canary is.
fn canary_base(sidecarset: &SidecarSet) -> Option<&str> {
    let annotations = sidecarset.metadata.annotations.as_ref()?;
    let base = annotations.get(SIDECARSET_BASE_ANNOTATION).filter(|base| !base.is_empty())?;
    (annotations.get(SIDECARSET_CANARY_ANNOTATION).map(String::as_str) == Some("true"))
        .then_some(base.as_str())
}

fn is_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|status| status.phase.as_deref());
    pod.metadata.deletion_timestamp.is_none() && !matches!(phase, Some("Succeeded" | "Failed"))
}

/// The SidecarSets to inject into `pod`, in the order given: not paused, selecting the pod,
/// and not the base of a canary that also selects it.
pub fn sidecarsets_for_pod<'a>(
    pod: &Pod,
    sidecarsets: &'a [SidecarSet],
    namespace_labels: Option<&BTreeMap<String, String>>,
) -> Vec<&'a SidecarSet> {
    let pod_labels = pod.metadata.labels.clone().unwrap_or_default();
    let matched: Vec<&SidecarSet> = sidecarsets
        .iter()
        .filter(|sidecarset| !sidecarset.spec.injection_strategy.paused)
        .filter(|sidecarset| pod_matches_sidecarset(sidecarset, &pod_labels, namespace_labels))
        .collect();
    let bases: BTreeSet<&str> = matched.iter().filter_map(|sidecarset| canary_base(sidecarset)).collect();
    matched
        .into_iter()
        .filter(|sidecarset| !bases.contains(sidecarset.metadata.name.as_deref().unwrap_or_default()))
        .collect()
}

/// Applies `patches` to the pod's annotations: `Retain` sets absent keys, `Overwrite` sets
/// every key, `MergePatchJson` JSON-merges the value into the pod's (RFC 7386).
pub(crate) fn patch_pod_metadata(
    annotations: &mut BTreeMap<String, String>,
    patches: &[SidecarSetPatchPodMetadata],
    sidecarset: &str,
) -> Result<(), InjectError> {
    for patch in patches {
        for (key, value) in &patch.annotations {
            match patch.patch_policy {
                SidecarSetPatchPolicyType::Overwrite => {
                    annotations.insert(key.clone(), value.clone());
                }
                SidecarSetPatchPolicyType::MergePatchJson => {
                    let merged = match annotations.get(key).filter(|origin| !origin.is_empty()) {
                        Some(origin) => {
                            merge_json(origin, value).map_err(|reason| InjectError::MergePatch {
                                sidecarset: sidecarset.to_string(),
                                key: key.clone(),
                                reason,
                            })?
                        }
                        None => value.clone(),
                    };
                    annotations.insert(key.clone(), merged);
                }
                _ => {
                    annotations.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
    }
    Ok(())
}

fn merge_json(origin: &str, patch: &str) -> Result<String, String> {
    let mut document: serde_json::Value =
        serde_json::from_str(origin).map_err(|error| format!("the pod's value is not JSON: {error}"))?;
    let patch: serde_json::Value =
        serde_json::from_str(patch).map_err(|error| format!("the patch is not JSON: {error}"))?;
    json_patch::merge(&mut document, &patch);
    serde_json::to_string(&document).map_err(|error| error.to_string())
}

fn is_native_sidecar(container: &Container) -> bool {
    container.restart_policy.as_deref() == Some("Always")
}

fn is_injected(container: &Container) -> bool {
    container.env.iter().flatten().any(|env| env.name == SIDECAR_ENV && env.value.as_deref() == Some("true"))
}

/// Appends `additional` entries whose key `key_of` is not taken yet.
fn merge_by<T: Clone>(original: &mut Vec<T>, additional: &[T], key_of: impl Fn(&T) -> String) {
    let mut taken: BTreeSet<String> = original.iter().map(&key_of).collect();
    for item in additional {
        if taken.insert(key_of(item)) {
            original.push(item.clone());
        }
    }
}

/// `$(NAME)` references in a `subPathExpr`.
fn sub_path_env_names(expression: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = expression;
    while let Some(start) = rest.find("$(") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(')') else { break };
        let name = &after[..end];
        let valid = !name.is_empty()
            && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || "-._".contains(c))
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
        if valid {
            names.push(name);
        }
        rest = &after[end + 1..];
    }
    names
}

/// The pod's app containers' volume mounts (and the env their `subPathExpr` reads), shared
/// into a sidecar whose `shareVolumePolicy` is enabled.
fn shared_mounts_and_envs(
    sidecar: &SidecarContainer,
    pod: &Pod,
) -> (Vec<k8s_openapi::api::core::v1::VolumeMount>, Vec<EnvVar>) {
    if sidecar.share_volume_policy.type_ != ShareVolumePolicyType::Enabled {
        return (Vec::new(), Vec::new());
    }
    let mut mounts = Vec::new();
    let mut envs = Vec::new();
    for app in pod.spec.iter().flat_map(|spec| &spec.containers).filter(|c| !is_injected(c)) {
        for mount in app.volume_mounts.iter().flatten() {
            mounts.push(mount.clone());
            for name in sub_path_env_names(mount.sub_path_expr.as_deref().unwrap_or_default()) {
                if let Some(env) = app.env.iter().flatten().find(|env| env.name == name) {
                    envs.push(env.clone());
                }
            }
        }
    }
    (mounts, envs)
}

/// The app containers' volume devices, shared into a sidecar whose
/// `shareVolumeDevicePolicy` is enabled.
fn shared_devices(sidecar: &SidecarContainer, pod: &Pod) -> Vec<k8s_openapi::api::core::v1::VolumeDevice> {
    if sidecar.share_volume_device_policy.as_ref().map(|policy| &policy.type_)
        != Some(&ShareVolumePolicyType::Enabled)
    {
        return Vec::new();
    }
    pod.spec
        .iter()
        .flat_map(|spec| &spec.containers)
        .filter(|c| !is_injected(c))
        .flat_map(|c| c.volume_devices.iter().flatten().cloned())
        .collect()
}

/// The value of `fieldRef` (`metadata.labels['k']` / `metadata.annotations['k']`) on the pod.
fn field_ref_value(field: &ObjectFieldSelector, metadata: &ObjectMeta) -> Option<String> {
    let path = field.field_path.as_str();
    let (map, rest) = if let Some(rest) = path.strip_prefix("metadata.labels[") {
        (metadata.labels.as_ref(), rest)
    } else if let Some(rest) = path.strip_prefix("metadata.annotations[") {
        (metadata.annotations.as_ref(), rest)
    } else {
        return None;
    };
    let key = rest.strip_suffix(']')?.trim_matches(|c| c == '\'' || c == '"');
    Some(map.and_then(|map| map.get(key)).cloned().unwrap_or_default())
}

/// The env vars `transferEnv` copies from the pod's containers (missing ones are skipped).
fn transferred_envs(sidecar: &SidecarContainer, pod: &Pod) -> Vec<EnvVar> {
    let containers: &[Container] =
        pod.spec.as_ref().map(|spec| spec.containers.as_slice()).unwrap_or_default();
    let mut envs = Vec::new();
    for transfer in &sidecar.transfer_env {
        let mut names: BTreeSet<&str> = transfer.env_names.iter().map(String::as_str).collect();
        if !transfer.env_name.is_empty() {
            names.insert(&transfer.env_name);
        }
        let source =
            match transfer.source_container_name_from.as_ref().and_then(|from| from.field_ref.as_ref()) {
                Some(field) => match field_ref_value(field, &pod.metadata) {
                    Some(name) => name,
                    None => continue,
                },
                None => transfer.source_container_name.clone(),
            };
        let Some(container) = containers.iter().find(|container| container.name == source) else { continue };
        for name in names {
            if let Some(env) = container.env.iter().flatten().find(|env| env.name == name) {
                envs.push(env.clone());
            }
        }
    }
    envs
}

fn version_annotation(container: &str) -> String {
    format!("version.sidecarset.kruise.io/{container}")
}

fn version_alt_annotation(container: &str) -> String {
    format!("versionalt.sidecarset.kruise.io/{container}")
}

fn annotation_env(name: &str, annotation: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: format!("metadata.annotations['{annotation}']"),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A hot-upgrade sidecar becomes `<name>-1` (working, the real image) and `<name>-2` (the
/// empty image), each reading its version and its twin's from pod annotations.
fn hot_upgrade_pair(
    sidecar: &SidecarContainer,
    annotations: &mut BTreeMap<String, String>,
    working: &mut BTreeMap<String, String>,
) -> [SidecarContainer; 2] {
    let name = &sidecar.container.name;
    let (first, second) = (format!("{name}-1"), format!("{name}-2"));
    let mut working_copy = sidecar.clone();
    working_copy.container.name = first.clone();
    let mut idle_copy = sidecar.clone();
    idle_copy.container.name = second.clone();
    idle_copy.container.image = Some(sidecar.upgrade_strategy.hot_upgrade_empty_image.clone());
    for copy in [&mut working_copy, &mut idle_copy] {
        let own = copy.container.name.clone();
        let env = copy.container.env.get_or_insert_with(Vec::new);
        env.push(annotation_env(SIDECARSET_VERSION_ENV, &version_annotation(&own)));
        env.push(annotation_env(SIDECARSET_VERSION_ALT_ENV, &version_alt_annotation(&own)));
    }
    annotations.insert(version_annotation(&first), "1".into());
    annotations.insert(version_alt_annotation(&first), "0".into());
    annotations.insert(version_annotation(&second), "0".into());
    annotations.insert(version_alt_annotation(&second), "1".into());
    working.insert(name.clone(), first);
    [working_copy, idle_copy]
}

/// One sidecar prepared for the pod: env `IS_INJECTED`, transferred env, shared mounts and
/// devices.
fn prepare(
    sidecar: &SidecarContainer,
    pod: &Pod,
    sized: &Sizing<'_>,
) -> Result<SidecarContainer, InjectError> {
    let mut prepared = sidecar.clone();
    if let Some(policy) = &sidecar.resources_policy {
        let resources = resources_from_policy(policy, pod, sized.kruise_sidecars).map_err(|source| {
            InjectError::ResourcesPolicy {
                sidecarset: sized.sidecarset.to_string(),
                container: sidecar.container.name.clone(),
                source,
            }
        })?;
        prepared.container.resources = Some(resources);
    }
    let (mounts, sub_path_envs) = shared_mounts_and_envs(sidecar, pod);
    let mut extra_env = transferred_envs(sidecar, pod);
    merge_by(&mut extra_env, &sub_path_envs, |env| env.name.clone());
    let container = &mut prepared.container;
    let mut taken_paths: Vec<k8s_openapi::api::core::v1::VolumeMount> =
        container.volume_mounts.clone().unwrap_or_default();
    let device_paths: BTreeSet<String> =
        container.volume_devices.iter().flatten().map(|device| device.device_path.clone()).collect();
    let additional: Vec<_> =
        mounts.into_iter().filter(|mount| !device_paths.contains(&mount.mount_path)).collect();
    merge_by(&mut taken_paths, &additional, |mount| mount.mount_path.clone());
    container.volume_mounts = (!taken_paths.is_empty()).then_some(taken_paths);
    let env = container.env.get_or_insert_with(Vec::new);
    env.push(EnvVar { name: SIDECAR_ENV.into(), value: Some("true".into()), ..Default::default() });
    merge_by(env, &extra_env, |env| env.name.clone());
    let devices = shared_devices(sidecar, pod);
    if !devices.is_empty() {
        let mount_paths: BTreeSet<String> =
            container.volume_mounts.iter().flatten().map(|mount| mount.mount_path.clone()).collect();
        let mut all = container.volume_devices.clone().unwrap_or_default();
        let additional: Vec<_> =
            devices.into_iter().filter(|device| !mount_paths.contains(&device.device_path)).collect();
        merge_by(&mut all, &additional, |device| device.device_path.clone());
        container.volume_devices = Some(all);
    }
    Ok(prepared)
}

/// What [`prepare`] needs to size a sidecar by its `resourcesPolicy`.
struct Sizing<'a> {
    /// The SidecarSet injecting it, for errors.
    sidecarset: &'a str,
    /// Every container the selected SidecarSets inject: never a policy's target.
    kruise_sidecars: &'a BTreeSet<String>,
}

/// Puts `injected` into `origins`: a sidecar named like an existing container replaces it in
/// place; others go before (`BeforeAppContainer`) or after the pod's containers.
fn merge_containers(origins: Vec<Container>, injected: Vec<SidecarContainer>) -> Vec<Container> {
    let mut origins = origins;
    let mut before = Vec::new();
    let mut after = Vec::new();
    for sidecar in injected {
        if let Some(existing) = origins.iter_mut().find(|c| c.name == sidecar.container.name) {
            *existing = sidecar.container;
            continue;
        }
        match sidecar.pod_inject_policy {
            PodInjectPolicyType::BeforeAppContainer => before.push(sidecar.container),
            _ => after.push(sidecar.container),
        }
    }
    before.extend(origins);
    before.extend(after);
    before
}

/// The volumes of `sidecarset` that `container` mounts or maps as devices.
fn volumes_used(sidecarset: &SidecarSet, container: &Container) -> Vec<Volume> {
    let names = container
        .volume_mounts
        .iter()
        .flatten()
        .map(|mount| &mount.name)
        .chain(container.volume_devices.iter().flatten().map(|device| &device.name));
    names
        .filter_map(|name| sidecarset.spec.volumes.iter().find(|volume| &volume.name == name).cloned())
        .collect()
}

/// Injects the SidecarSets that select `pod` (see [`sidecarsets_for_pod`]) as at pod creation.
/// Returns `None` when the pod is inactive or nothing selects it, else the injected pod.
/// `sort_by_name` is upstream's gate `EnableSortSidecarContainerByName`.
pub fn inject_sidecars(
    pod: &Pod,
    sidecarsets: &[SidecarSet],
    namespace_labels: Option<&BTreeMap<String, String>>,
    now: &Time,
    sort_by_name: bool,
) -> Result<Option<Pod>, InjectError> {
    if !is_active(pod) {
        return Ok(None);
    }
    let selected = sidecarsets_for_pod(pod, sidecarsets, namespace_labels);
    if selected.is_empty() {
        return Ok(None);
    }
    let mut injected = pod.clone();
    let mut annotations = pod.metadata.annotations.clone().unwrap_or_default();
    for sidecarset in &selected {
        let name = sidecarset.metadata.name.as_deref().unwrap_or_default();
        patch_pod_metadata(&mut annotations, &sidecarset.spec.patch_pod_metadata, name)?;
    }
    let mut hashes = upgrade_specs(&pod.metadata, SIDECARSET_HASH_ANNOTATION);
    let mut hashes_without_image = upgrade_specs(&pod.metadata, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION);
    let mut names = injected_sidecarsets(&pod.metadata);
    let mut working = working_hot_upgrade_containers(&pod.metadata);
    let mut containers = Vec::new();
    let mut init_containers = Vec::new();
    let mut volumes = Vec::new();
    let mut secrets: Vec<LocalObjectReference> = Vec::new();
    let mut hot_upgrade = false;
    let kruise_sidecars: BTreeSet<String> = selected
        .iter()
        .flat_map(|sidecarset| sidecarset.spec.init_containers.iter().chain(&sidecarset.spec.containers))
        .map(|sidecar| sidecar.container.name.clone())
        .collect();
    for sidecarset in &selected {
        let name = sidecarset.metadata.name.clone().unwrap_or_default();
        let sizing = Sizing { sidecarset: &name, kruise_sidecars: &kruise_sidecars };
        names.insert(name.clone());
        let mut sidecar_list = BTreeSet::new();
        for init in &sidecarset.spec.init_containers {
            if is_native_sidecar(&init.container) {
                sidecar_list.insert(init.container.name.clone());
            }
            volumes.extend(volumes_used(sidecarset, &init.container));
            let prepared = prepare(init, pod, &sizing)?;
            if is_native_sidecar(&init.container)
                && init.upgrade_strategy.upgrade_type == SidecarContainerUpgradeType::HotUpgrade
            {
                init_containers.extend(hot_upgrade_pair(&prepared, &mut annotations, &mut working));
                hot_upgrade = true;
            } else {
                init_containers.push(prepared);
            }
        }
        secrets.extend(sidecarset.spec.image_pull_secrets.iter().cloned());
        for sidecar in &sidecarset.spec.containers {
            sidecar_list.insert(sidecar.container.name.clone());
            volumes.extend(volumes_used(sidecarset, &sidecar.container));
            let prepared = prepare(sidecar, pod, &sizing)?;
            if sidecar.upgrade_strategy.upgrade_type == SidecarContainerUpgradeType::HotUpgrade {
                containers.extend(hot_upgrade_pair(&prepared, &mut annotations, &mut working));
                hot_upgrade = true;
            } else {
                containers.push(prepared);
            }
        }
        let annotation =
            |key: &str| sidecarset.metadata.annotations.as_ref().and_then(|a| a.get(key)).cloned();
        let list = Some(sidecar_list.into_iter().collect::<Vec<_>>());
        hashes.insert(
            name.clone(),
            SidecarSetUpgradeSpec {
                update_timestamp: Some(now.clone()),
                hash: annotation(SIDECARSET_HASH_ANNOTATION).unwrap_or_default(),
                sidecarset_name: name.clone(),
                sidecar_list: list.clone(),
                controller_revision: sidecarset
                    .status
                    .as_ref()
                    .map(|s| s.latest_revision.clone())
                    .unwrap_or_default(),
            },
        );
        hashes_without_image.insert(
            name.clone(),
            SidecarSetUpgradeSpec {
                update_timestamp: Some(now.clone()),
                hash: annotation(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION).unwrap_or_default(),
                sidecarset_name: name.clone(),
                sidecar_list: list,
                controller_revision: String::new(),
            },
        );
    }
    if containers.is_empty() && init_containers.is_empty() {
        injected.metadata.annotations = Some(annotations);
        return Ok((injected != *pod).then_some(injected));
    }
    annotations.insert(SIDECARSET_HASH_ANNOTATION.into(), serialize(&hashes));
    annotations.insert(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION.into(), serialize(&hashes_without_image));
    annotations
        .insert(SIDECARSET_INJECTED_LIST_ANNOTATION.into(), names.into_iter().collect::<Vec<_>>().join(","));
    if hot_upgrade {
        annotations.insert(SIDECARSET_WORKING_HOT_UPGRADE_ANNOTATION.into(), serialize(&working));
    }
    init_containers.sort_by(|a, b| a.container.name.cmp(&b.container.name));
    if sort_by_name {
        containers.sort_by(|a, b| a.container.name.cmp(&b.container.name));
    }
    let spec = injected.spec.get_or_insert_with(Default::default);
    let merged_init = merge_containers(spec.init_containers.take().unwrap_or_default(), init_containers);
    spec.init_containers = (!merged_init.is_empty()).then_some(merged_init);
    spec.containers = merge_containers(std::mem::take(&mut spec.containers), containers);
    let mut pod_volumes = spec.volumes.take().unwrap_or_default();
    merge_by(&mut pod_volumes, &volumes, |volume| volume.name.clone());
    spec.volumes = (!pod_volumes.is_empty()).then_some(pod_volumes);
    let mut pod_secrets = spec.image_pull_secrets.take().unwrap_or_default();
    merge_by(&mut pod_secrets, &secrets, |secret| secret.name.clone());
    spec.image_pull_secrets = (!pod_secrets.is_empty()).then_some(pod_secrets);
    injected.metadata.annotations = Some(annotations);
    Ok(Some(injected))
}

/// An annotation value as JSON (maps of strings and plain records cannot fail to serialize).
fn serialize<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    //! Cases ported from upstream's `pkg/webhook/pod/mutating/sidecarset_test.go`, under its
    //! test names (snake_case), with fixtures of our own.
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::{Value, json};

    use super::*;

    fn now() -> Time {
        serde_json::from_value(json!("2026-12-06T00:00:00Z")).unwrap()
    }

    fn pod(spec: Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "nginx"},
                         "annotations": {"existing": "yes"}},
            "spec": spec,
        }))
        .unwrap()
    }

    fn app_pod() -> Pod {
        pod(json!({"containers": [{"name": "nginx", "image": "nginx:1.25",
            "env": [{"name": "hello", "value": "world"}, {"name": "hello2", "value": "world2"}],
            "volumeMounts": [{"name": "data", "mountPath": "/a/b"}, {"name": "logs", "mountPath": "/e/f"}]}]}))
    }

    fn sidecarset(name: &str, spec: Value) -> SidecarSet {
        let mut full = json!({"selector": {"matchLabels": {"app": "nginx"}}});
        for (key, value) in spec.as_object().unwrap() {
            full[key] = value.clone();
        }
        // As stored: after the defaulting webhook.
        let mut sidecarset: SidecarSet = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": name, "annotations": {
                "kruise.io/sidecarset-hash": format!("{name}-hash"),
                "kruise.io/sidecarset-hash-without-image": format!("{name}-hash-without-image")}},
            "spec": full,
        }))
        .unwrap();
        kruise_crds::defaults::default_sidecarset_v1beta1(&mut sidecarset);
        sidecarset
    }

    fn with_sidecar(name: &str, container: &str) -> SidecarSet {
        sidecarset(name, json!({"containers": [{"name": container, "image": "busybox"}]}))
    }

    fn inject(pod: &Pod, sidecarsets: &[SidecarSet]) -> Option<Pod> {
        inject_sidecars(pod, sidecarsets, None, &now(), false).unwrap()
    }

    fn names(containers: &[Container]) -> Vec<&str> {
        containers.iter().map(|c| c.name.as_str()).collect()
    }

    fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
        pod.metadata.annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str)
    }

    fn sidecar(name: &str, policy: PodInjectPolicyType) -> SidecarContainer {
        SidecarContainer {
            container: Container { name: name.into(), ..Default::default() },
            pod_inject_policy: policy,
            ..Default::default()
        }
    }

    #[test]
    fn merge_sidecar_containers() {
        use PodInjectPolicyType::{AfterAppContainer, BeforeAppContainer};
        let pod_containers = ["sidecar-1", "app-container", "sidecar-2"]
            .map(|name| Container { name: name.into(), ..Default::default() });
        let injected = || {
            // Sorted by name, as upstream's test sorts before merging.
            let mut all = vec![
                sidecar("sidecar-2", AfterAppContainer),
                sidecar("sidecar-1", AfterAppContainer),
                sidecar("new-sidecar-1", BeforeAppContainer),
            ];
            all.sort_by(|a, b| a.container.name.cmp(&b.container.name));
            all
        };
        let only = |keep: &[&str]| -> Vec<SidecarContainer> {
            injected().into_iter().filter(|s| keep.contains(&s.container.name.as_str())).collect()
        };
        type Case<'a> = (&'a str, Vec<Container>, Vec<SidecarContainer>, Vec<&'a str>);
        let cases: Vec<Case> = vec![
            (
                "origins not sidecar, and inject new sidecar",
                pod_containers[1..2].to_vec(),
                injected(),
                vec!["new-sidecar-1", "app-container", "sidecar-1", "sidecar-2"],
            ),
            (
                "origins not sidecar, and inject new sidecar, only before app container",
                pod_containers[1..2].to_vec(),
                only(&["new-sidecar-1"]),
                vec!["new-sidecar-1", "app-container"],
            ),
            (
                "origins not sidecar, and inject new sidecar, only after app container",
                pod_containers[1..2].to_vec(),
                only(&["sidecar-1", "sidecar-2"]),
                vec!["app-container", "sidecar-1", "sidecar-2"],
            ),
            (
                "origin have sidecars, sidecar no new containers",
                pod_containers.to_vec(),
                only(&["sidecar-1", "sidecar-2"]),
                vec!["sidecar-1", "app-container", "sidecar-2"],
            ),
            (
                "origin have sidecars, sidecar have new containers",
                pod_containers.to_vec(),
                injected(),
                vec!["new-sidecar-1", "sidecar-1", "app-container", "sidecar-2"],
            ),
            (
                "origin no sidecar, sidecar have new containers",
                Vec::new(),
                injected(),
                vec!["new-sidecar-1", "sidecar-1", "sidecar-2"],
            ),
        ];
        for (name, origins, injected, expected) in cases {
            assert_eq!(names(&merge_containers(origins, injected)), expected, "{name}");
        }
    }

    #[test]
    fn pod_has_no_matched_sidecar_set() {
        let mut other = with_sidecar("sidecarset1", "dns-f");
        other.spec.selector =
            serde_json::from_value(json!({"matchLabels": {"app": "doesnt-match"}})).unwrap();
        assert_eq!(inject(&app_pod(), &[other]), None);
        let mut empty = with_sidecar("sidecarset1", "dns-f");
        empty.spec.selector = serde_json::from_value(json!({})).unwrap();
        assert_eq!(inject(&app_pod(), &[empty]), None, "an empty selector selects nothing");
    }

    #[test]
    fn injection_strategy_paused() {
        let mut paused = with_sidecar("sidecarset1", "dns-f");
        paused.spec.injection_strategy.paused = true;
        assert_eq!(inject(&app_pod(), &[paused]), None);
    }

    #[test]
    fn namespace_selector_needs_the_namespace_labels() {
        let mut scoped = with_sidecar("sidecarset1", "dns-f");
        scoped.spec.namespace_selector =
            serde_json::from_value(json!({"matchLabels": {"team": "a"}})).unwrap();
        assert!(needs_namespace_labels(std::slice::from_ref(&scoped)));
        let team_a = BTreeMap::from([("team".to_string(), "a".to_string())]);
        let team_b = BTreeMap::from([("team".to_string(), "b".to_string())]);
        let pod = app_pod();
        let sidecarsets = std::slice::from_ref(&scoped);
        assert!(inject_sidecars(&pod, sidecarsets, Some(&team_a), &now(), false).unwrap().is_some());
        assert!(inject_sidecars(&pod, sidecarsets, Some(&team_b), &now(), false).unwrap().is_none());
        assert!(inject_sidecars(&pod, sidecarsets, None, &now(), false).unwrap().is_none());
    }

    #[test]
    fn inject_metadata() {
        let first = sidecarset(
            "sidecarset1",
            json!({"containers": [{"name": "dns-f", "image": "busybox"}], "patchPodMetadata": [
                {"patchPolicy": "MergePatchJson", "annotations": {"key1": "{\"log-agent\":1}"}},
                {"patchPolicy": "Retain", "annotations": {"key": "envoy=1,log=2", "existing": "no"}}]}),
        );
        let second = sidecarset(
            "sidecarset2",
            json!({"containers": [{"name": "envoy", "image": "busybox"}], "patchPodMetadata": [
                {"patchPolicy": "MergePatchJson", "annotations": {"key1": "{\"envoy\":2}"}},
                {"patchPolicy": "Overwrite", "annotations": {"overwritten": "2"}}]}),
        );
        let out = inject(&app_pod(), &[first, second]).unwrap();
        assert_eq!(annotation(&out, "key1"), Some(r#"{"envoy":2,"log-agent":1}"#));
        assert_eq!(annotation(&out, "key"), Some("envoy=1,log=2"));
        assert_eq!(annotation(&out, "existing"), Some("yes"), "Retain keeps the pod's value");
        assert_eq!(annotation(&out, "overwritten"), Some("2"));

        let bad = sidecarset(
            "sidecarset3",
            json!({"containers": [{"name": "x", "image": "busybox"}], "patchPodMetadata": [
                {"patchPolicy": "MergePatchJson", "annotations": {"existing": "{\"a\":1}"}}]}),
        );
        let error = inject_sidecars(&app_pod(), &[bad], None, &now(), false).unwrap_err();
        assert!(error.to_string().contains("existing"), "{error}");
    }

    #[test]
    fn canary_sidecar_set_injection() {
        let base = with_sidecar("base", "agent");
        let mut canary = with_sidecar("canary", "agent");
        canary.metadata.annotations.as_mut().unwrap().extend([
            (SIDECARSET_CANARY_ANNOTATION.to_string(), "true".to_string()),
            (SIDECARSET_BASE_ANNOTATION.to_string(), "base".to_string()),
        ]);
        canary.spec.containers[0].container.image = Some("busybox:canary".into());
        let out = inject(&app_pod(), &[base.clone(), canary]).unwrap();
        assert_eq!(annotation(&out, SIDECARSET_INJECTED_LIST_ANNOTATION), Some("canary"));
        assert_eq!(out.spec.unwrap().containers[0].image.as_deref(), Some("busybox:canary"));
        // stable pod: the canary does not select it, the base is injected.
        let mut stable = app_pod();
        stable.metadata.labels.as_mut().unwrap().insert("app".into(), "nginx".into());
        let out = inject(&stable, &[base]).unwrap();
        assert_eq!(annotation(&out, SIDECARSET_INJECTED_LIST_ANNOTATION), Some("base"));
    }

    #[test]
    fn sidecar_volumes_append() {
        let with_volumes = sidecarset(
            "sidecarset1",
            json!({"containers": [{"name": "dns-f", "image": "busybox",
                   "volumeMounts": [{"name": "volume-a", "mountPath": "/a"}, {"name": "data", "mountPath": "/x"},
                                    {"name": "missing", "mountPath": "/m"}]}],
                   "volumes": [{"name": "volume-a", "emptyDir": {}}, {"name": "data", "emptyDir": {"medium": "Memory"}},
                               {"name": "unused", "emptyDir": {}}]}),
        );
        let mut pod = app_pod();
        pod.spec.as_mut().unwrap().volumes =
            Some(serde_json::from_value(json!([{"name": "data", "hostPath": {"path": "/d"}}])).unwrap());
        let out = inject(&pod, &[with_volumes]).unwrap();
        let volumes = out.spec.unwrap().volumes.unwrap();
        let volume_names: Vec<&str> = volumes.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(volume_names, ["data", "volume-a"], "the pod's own volume wins; unused ones stay out");
        assert!(volumes[0].host_path.is_some());
    }

    #[test]
    fn pod_volume_mounts_append() {
        let share = |pod: Pod| {
            let set = sidecarset(
                "sidecarset1",
                json!({"initContainers": [{"name": "init-agent", "image": "busybox", "shareVolumePolicy": {"type": "enabled"},
                        "volumeMounts": [{"name": "x", "mountPath": "/g/h/i"}]}],
                       "containers": [{"name": "agent", "image": "busybox", "shareVolumePolicy": {"type": "enabled"},
                        "volumeMounts": [{"name": "x", "mountPath": "/a/b/c"}, {"name": "y", "mountPath": "/a/b"}]}],
                       "volumes": [{"name": "x", "emptyDir": {}}, {"name": "y", "emptyDir": {}}]}),
            );
            inject(&pod, &[set]).unwrap().spec.unwrap()
        };
        let mount_paths = |c: &Container| -> Vec<String> {
            c.volume_mounts.iter().flatten().map(|m| m.mount_path.clone()).collect()
        };
        let env_names =
            |c: &Container| -> Vec<String> { c.env.iter().flatten().map(|e| e.name.clone()).collect() };
        let with_expansion = |expr: &str, envs: Value| {
            let mut pod = app_pod();
            let container = &mut pod.spec.as_mut().unwrap().containers[0];
            container.volume_mounts.as_mut().unwrap().push(
                serde_json::from_value(
                    json!({"name": "volume-expansion", "mountPath": "/e/expansion", "subPathExpr": expr}),
                )
                .unwrap(),
            );
            container.env.as_mut().unwrap().extend(serde_json::from_value::<Vec<EnvVar>>(envs).unwrap());
            pod
        };
        let cases = [
            (
                "append normal volumeMounts",
                app_pod(),
                vec!["/g/h/i", "/a/b", "/e/f"],
                vec!["/a/b/c", "/a/b", "/e/f"],
                vec![],
            ),
            (
                "append volumeMounts SubPathExpr, volumes with expanded subpath",
                with_expansion(
                    "foo/$(POD_NAME)/$(OD_NAME)/conf",
                    json!([{"name": "POD_NAME", "value": "bar"}, {"name": "OD_NAME", "value": "od_name"}]),
                ),
                vec!["/g/h/i", "/a/b", "/e/f", "/e/expansion"],
                vec!["/a/b/c", "/a/b", "/e/f", "/e/expansion"],
                vec!["POD_NAME", "OD_NAME"],
            ),
            (
                "append volumeMounts SubPathExpr, subpath with no expansion",
                with_expansion("foo", json!([])),
                vec!["/g/h/i", "/a/b", "/e/f", "/e/expansion"],
                vec!["/a/b/c", "/a/b", "/e/f", "/e/expansion"],
                vec![],
            ),
            (
                "append volumeMounts SubPathExpr, volumes expanded with empty subpath",
                with_expansion("", json!([])),
                vec!["/g/h/i", "/a/b", "/e/f", "/e/expansion"],
                vec!["/a/b/c", "/a/b", "/e/f", "/e/expansion"],
                vec![],
            ),
        ];
        for (name, pod, init_mounts, mounts, envs) in cases {
            let spec = share(pod);
            let init = &spec.init_containers.as_ref().unwrap()[0];
            let agent = &spec.containers[0];
            assert_eq!(agent.name, "agent", "{name}");
            assert_eq!(mount_paths(init), init_mounts, "{name}");
            assert_eq!(mount_paths(agent), mounts, "{name}: a sidecar's own mount path wins");
            for env in envs {
                assert!(env_names(init).iter().any(|e| e == env), "{name}: {env} in the init container");
                assert!(env_names(agent).iter().any(|e| e == env), "{name}: {env} in the container");
            }
        }
    }

    #[test]
    fn pod_volume_devices_append() {
        let mut pod = app_pod();
        pod.spec.as_mut().unwrap().containers[0].volume_devices =
            Some(serde_json::from_value(json!([{"name": "block", "devicePath": "/dev/xvda"}])).unwrap());
        for (name, policy, expected) in [
            ("append normal volumeDevices, ShareVolumeDevicePolicy=disable", "disabled", 0),
            ("append normal volumeDevices, ShareVolumeDevicePolicy=enable", "enabled", 1),
        ] {
            let set = sidecarset(
                "sidecarset1",
                json!({"containers": [{"name": "agent", "image": "busybox", "shareVolumeDevicePolicy": {"type": policy}}]}),
            );
            let spec = inject(&pod, &[set]).unwrap().spec.unwrap();
            assert_eq!(spec.containers[0].volume_devices.iter().flatten().count(), expected, "{name}");
        }
    }

    #[test]
    fn sidecar_set_transfer_env() {
        let set = sidecarset(
            "sidecarset2",
            json!({"initContainers": [{"name": "init-2", "image": "busybox",
                    "transferEnv": [{"sourceContainerName": "nginx", "envName": "hello2"}]}],
                   "containers": [{"name": "dns-e", "image": "busybox",
                    "transferEnv": [{"sourceContainerName": "nginx", "envName": "hello2"},
                                    {"sourceContainerName": "nginx", "envName": "not-there"}]},
                                  {"name": "by-label", "image": "busybox",
                    "transferEnv": [{"sourceContainerNameFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['main']"}},
                                     "envNames": ["hello"]}]}]}),
        );
        let mut pod = app_pod();
        pod.metadata.labels.as_mut().unwrap().insert("main".into(), "nginx".into());
        let spec = inject(&pod, &[set]).unwrap().spec.unwrap();
        for container in [&spec.init_containers.as_ref().unwrap()[0], &spec.containers[0]] {
            let env = container.env.as_ref().unwrap();
            assert_eq!(env.len(), 2, "{}: IS_INJECTED and the transferred one", container.name);
            assert_eq!(env[0].name, SIDECAR_ENV);
            assert_eq!(env[1].value.as_deref(), Some("world2"));
        }
        let by_label = spec.containers.iter().find(|c| c.name == "by-label").unwrap();
        assert_eq!(by_label.env.as_ref().unwrap()[1].value.as_deref(), Some("world"));
    }

    #[test]
    fn sidecar_set_hash_inject() {
        let mut not_matching = with_sidecar("sidecarset1", "dns-f");
        not_matching.spec.selector =
            serde_json::from_value(json!({"matchLabels": {"app": "doesnt-match"}})).unwrap();
        let mut second = with_sidecar("sidecarset2", "dns-e");
        second.status = Some(serde_json::from_value(json!({"latestRevision": "sidecarset2-rev"})).unwrap());
        let out = inject(&app_pod(), &[not_matching, second, with_sidecar("sidecarset3", "dns-g")]).unwrap();
        let hashes = upgrade_specs(&out.metadata, SIDECARSET_HASH_ANNOTATION);
        assert_eq!(hashes.keys().collect::<Vec<_>>(), ["sidecarset2", "sidecarset3"]);
        assert_eq!(hashes["sidecarset2"].hash, "sidecarset2-hash");
        assert_eq!(hashes["sidecarset2"].controller_revision, "sidecarset2-rev");
        assert_eq!(hashes["sidecarset3"].sidecar_list.as_deref(), Some(&["dns-g".to_string()][..]));
        let without_image = upgrade_specs(&out.metadata, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION);
        assert_eq!(without_image["sidecarset3"].hash, "sidecarset3-hash-without-image");
        // Upstream's exact format: keys sorted, fields in its order, RFC 3339 seconds.
        assert!(annotation(&out, SIDECARSET_HASH_ANNOTATION).unwrap().contains(
            r#""sidecarset3":{"updateTimestamp":"2026-12-06T00:00:00Z","hash":"sidecarset3-hash","sidecarSetName":"sidecarset3","sidecarList":["dns-g"]}"#
        ));
    }

    #[test]
    fn sidecar_set_name_inject() {
        let out =
            inject(&app_pod(), &[with_sidecar("sidecarset3", "dns-g"), with_sidecar("sidecarset1", "dns-f")])
                .unwrap();
        assert_eq!(annotation(&out, SIDECARSET_INJECTED_LIST_ANNOTATION), Some("sidecarset1,sidecarset3"));
        let env = out.spec.unwrap().containers[0].env.clone().unwrap();
        assert_eq!(
            env,
            [EnvVar { name: "IS_INJECTED".into(), value: Some("true".into()), ..Default::default() }]
        );
    }

    #[test]
    fn inject_init_container_sort() {
        let set = sidecarset(
            "sidecarset1",
            json!({"initContainers": [{"name": "c", "image": "busybox"}, {"name": "a", "image": "busybox"},
                                      {"name": "b", "image": "busybox"}]}),
        );
        let cases = [
            ("origins nil, inject containers(a, b, c)", None, vec!["a", "b", "c"]),
            (
                "origin init, inject containers(a, b, c)",
                Some(json!([{"name": "init-0", "image": "busybox"}])),
                vec!["init-0", "a", "b", "c"],
            ),
        ];
        for (name, init, expected) in cases {
            let mut pod = app_pod();
            pod.spec.as_mut().unwrap().init_containers =
                init.map(|init| serde_json::from_value(init).unwrap());
            let spec = inject(&pod, std::slice::from_ref(&set)).unwrap().spec.unwrap();
            assert_eq!(names(spec.init_containers.as_ref().unwrap()), expected, "{name}");
            assert_eq!(names(&spec.containers), ["nginx"], "{name}");
        }
        // An init container only (not a native sidecar) is not in the sidecar list.
        let out = inject(&app_pod(), &[set]).unwrap();
        assert_eq!(
            upgrade_specs(&out.metadata, SIDECARSET_HASH_ANNOTATION)["sidecarset1"].sidecar_list,
            Some(vec![])
        );
    }

    #[test]
    fn merge_sidecar_secrets() {
        let set = sidecarset(
            "sidecarset1",
            json!({"containers": [{"name": "agent", "image": "busybox"}],
                   "imagePullSecrets": [{"name": "pod-secret"}, {"name": "sidecar-secret"}]}),
        );
        let mut pod = app_pod();
        pod.spec.as_mut().unwrap().image_pull_secrets =
            Some(vec![LocalObjectReference { name: "pod-secret".into() }]);
        let secrets = inject(&pod, &[set]).unwrap().spec.unwrap().image_pull_secrets.unwrap();
        let secret_names: Vec<&str> = secrets.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(secret_names, ["pod-secret", "sidecar-secret"]);
    }

    #[test]
    fn sidecar_set_pod_inject_policy() {
        let set = sidecarset(
            "sidecarset1",
            json!({"containers": [{"name": "before", "image": "busybox", "podInjectPolicy": "BeforeAppContainer"},
                                  {"name": "after", "image": "busybox", "podInjectPolicy": "AfterAppContainer"}]}),
        );
        let spec = inject(&app_pod(), std::slice::from_ref(&set)).unwrap().spec.unwrap();
        assert_eq!(names(&spec.containers), ["before", "nginx", "after"]);
        let sorted = inject_sidecars(&app_pod(), &[set], None, &now(), true).unwrap().unwrap().spec.unwrap();
        assert_eq!(
            names(&sorted.containers),
            ["before", "nginx", "after"],
            "sorting happens within each side"
        );
    }

    #[test]
    fn hot_upgrade_injects_two_containers() {
        let set = sidecarset(
            "sidecarset1",
            json!({"containers": [{"name": "envoy", "image": "envoy:1", "upgradeStrategy":
                    {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"}}]}),
        );
        let out = inject(&app_pod(), &[set]).unwrap();
        let spec = out.spec.clone().unwrap();
        assert_eq!(names(&spec.containers), ["envoy-1", "envoy-2", "nginx"]);
        assert_eq!(spec.containers[0].image.as_deref(), Some("envoy:1"));
        assert_eq!(spec.containers[1].image.as_deref(), Some("empty:1"));
        let env = spec.containers[1].env.as_ref().unwrap();
        assert_eq!(
            env.iter()
                .find(|e| e.name == SIDECARSET_VERSION_ENV)
                .unwrap()
                .value_from
                .as_ref()
                .unwrap()
                .field_ref
                .as_ref()
                .unwrap()
                .field_path,
            "metadata.annotations['version.sidecarset.kruise.io/envoy-2']"
        );
        assert_eq!(
            annotation(&out, SIDECARSET_WORKING_HOT_UPGRADE_ANNOTATION),
            Some(r#"{"envoy":"envoy-1"}"#)
        );
        assert_eq!(annotation(&out, "version.sidecarset.kruise.io/envoy-1"), Some("1"));
        assert_eq!(annotation(&out, "versionalt.sidecarset.kruise.io/envoy-1"), Some("0"));
        assert_eq!(annotation(&out, "version.sidecarset.kruise.io/envoy-2"), Some("0"));
        assert_eq!(annotation(&out, "versionalt.sidecarset.kruise.io/envoy-2"), Some("1"));
        // The sidecar list names the sidecar, not its two copies.
        assert_eq!(
            upgrade_specs(&out.metadata, SIDECARSET_HASH_ANNOTATION)["sidecarset1"].sidecar_list,
            Some(vec!["envoy".to_string()])
        );
    }

    #[test]
    fn inactive_pods_are_left_alone() {
        let mut done = app_pod();
        done.status = Some(serde_json::from_value(json!({"phase": "Succeeded"})).unwrap());
        assert_eq!(inject(&done, &[with_sidecar("sidecarset1", "dns-f")]), None);
    }
}
