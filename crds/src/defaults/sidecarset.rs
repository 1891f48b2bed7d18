//! SidecarSet defaults (upstream `SetDefaultsSidecarSetV1beta1` / `SetDefaultsSidecarSet`) and
//! the revision hash annotations the mutating webhook writes next to them
//! (`SetHashSidecarSetV1beta1`).

use k8s_openapi::{
    api::core::v1::{Container, HTTPGetAction, LifecycleHandler, PodSpec, Probe, Volume},
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, util::intstr::IntOrString},
};
use sha2::{Digest, Sha256};

use super::pod::{default_pod_spec, image_tag};
use crate::apps::{
    v1alpha1,
    v1beta1::{
        self, PodInjectPolicyType, ShareVolumePolicyType, SidecarContainer, SidecarContainerUpgradeType,
        SidecarSetInjectRevisionPolicy, SidecarSetInjectionStrategy, SidecarSetPatchPodMetadata,
        SidecarSetPatchPolicyType, SidecarSetUpdateStrategy, SidecarSetUpdateStrategyType,
    },
};

/// SidecarSet (and pod) annotation with the hash of the sidecar containers.
pub const SIDECARSET_HASH_ANNOTATION: &str = "kruise.io/sidecarset-hash";
/// SidecarSet (and pod) annotation with the hash of the sidecar containers with images blanked:
/// when only this one is unchanged, the change can be applied in place.
pub const SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION: &str = "kruise.io/sidecarset-hash-without-image";
/// Default number of old revisions a SidecarSet keeps.
pub const DEFAULT_SIDECARSET_REVISION_HISTORY_LIMIT: i32 = 10;

/// Fills in v1beta1 SidecarSet defaults. The webhook also writes the hash annotations, see
/// [`set_sidecarset_hash_annotations_v1beta1`].
pub fn default_sidecarset_v1beta1(sidecarset: &mut v1beta1::SidecarSet) {
    let spec = &mut sidecarset.spec;
    default_sidecarset_spec_parts(
        &mut spec.update_strategy,
        &mut spec.init_containers,
        &mut spec.containers,
        &mut spec.volumes,
        &mut spec.revision_history_limit,
        &mut spec.patch_pod_metadata,
        &mut spec.injection_strategy,
    );
}

/// Fills in v1alpha1 SidecarSet defaults (the same as v1beta1). The webhook also writes the
/// hash annotations, see [`set_sidecarset_hash_annotations_v1alpha1`].
pub fn default_sidecarset_v1alpha1(sidecarset: &mut v1alpha1::SidecarSet) {
    let spec = &mut sidecarset.spec;
    default_sidecarset_spec_parts(
        &mut spec.update_strategy,
        &mut spec.init_containers,
        &mut spec.containers,
        &mut spec.volumes,
        &mut spec.revision_history_limit,
        &mut spec.patch_pod_metadata,
        &mut spec.injection_strategy,
    );
}

/// Writes `kruise.io/sidecarset-hash` and `kruise.io/sidecarset-hash-without-image` on a
/// v1beta1 SidecarSet (after defaulting, as the webhook does).
pub fn set_sidecarset_hash_annotations_v1beta1(sidecarset: &mut v1beta1::SidecarSet) {
    let spec = &sidecarset.spec;
    let hashes = (
        sidecarset_hash(&spec.containers, &spec.init_containers),
        sidecarset_hash_without_image(&spec.containers, &spec.init_containers),
    );
    put_hashes(&mut sidecarset.metadata, hashes);
}

/// Writes the two hash annotations on a v1alpha1 SidecarSet (the same values as for v1beta1).
pub fn set_sidecarset_hash_annotations_v1alpha1(sidecarset: &mut v1alpha1::SidecarSet) {
    let spec = &sidecarset.spec;
    let hashes = (
        sidecarset_hash(&spec.containers, &spec.init_containers),
        sidecarset_hash_without_image(&spec.containers, &spec.init_containers),
    );
    put_hashes(&mut sidecarset.metadata, hashes);
}

/// The revision hash of a SidecarSet's sidecars: SHA-256 of the JSON object
/// `{"containers": [...]}`, plus `"initContainers": [...]` when any init container is a native
/// sidecar (`restartPolicy: Always`), rendered in hex and mapped onto Kubernetes' vowel-free
/// "safe" alphabet. Keys are sorted, so the value depends only on the containers' content (it
/// is not byte-identical to the hash upstream's Go encoder produces).
pub fn sidecarset_hash(containers: &[SidecarContainer], init_containers: &[SidecarContainer]) -> String {
    safe_encode(&hex::encode(Sha256::digest(encode_sidecars(containers, init_containers))))
}

/// [`sidecarset_hash`] with every image blanked: unchanged when only images changed.
pub fn sidecarset_hash_without_image(
    containers: &[SidecarContainer],
    init_containers: &[SidecarContainer],
) -> String {
    let blank = |list: &[SidecarContainer]| -> Vec<SidecarContainer> {
        list.iter()
            .cloned()
            .map(|mut sidecar| {
                sidecar.container.image = None;
                sidecar
            })
            .collect()
    };
    sidecarset_hash(&blank(containers), &blank(init_containers))
}

fn encode_sidecars(containers: &[SidecarContainer], init_containers: &[SidecarContainer]) -> String {
    let mut object = serde_json::Map::new();
    object.insert("containers".into(), serde_json::to_value(containers).unwrap_or_default());
    let has_native_sidecar =
        init_containers.iter().any(|sidecar| sidecar.container.restart_policy.as_deref() == Some("Always"));
    if has_native_sidecar {
        object.insert("initContainers".into(), serde_json::to_value(init_containers).unwrap_or_default());
    }
    serde_json::Value::Object(object).to_string()
}

/// Kubernetes' `rand.SafeEncodeString`: each byte picks a character of an alphabet without
/// vowels (so no words are formed) by its value modulo the alphabet size.
fn safe_encode(text: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    text.bytes().map(|b| char::from(ALPHABET[usize::from(b) % ALPHABET.len()])).collect()
}

fn put_hashes(metadata: &mut ObjectMeta, (hash, without_image): (String, String)) {
    let annotations = metadata.annotations.get_or_insert_with(Default::default);
    annotations.insert(SIDECARSET_HASH_ANNOTATION.to_string(), hash);
    annotations.insert(SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION.to_string(), without_image);
}

fn default_sidecarset_spec_parts(
    strategy: &mut SidecarSetUpdateStrategy,
    init_containers: &mut [SidecarContainer],
    containers: &mut [SidecarContainer],
    volumes: &mut Vec<Volume>,
    revision_history_limit: &mut Option<i32>,
    patches: &mut [SidecarSetPatchPodMetadata],
    injection: &mut SidecarSetInjectionStrategy,
) {
    if strategy.type_.is_unset() {
        strategy.type_ = SidecarSetUpdateStrategyType::RollingUpdate;
    }
    strategy.max_unavailable.get_or_insert(IntOrString::Int(1));
    strategy.partition.get_or_insert(IntOrString::Int(0));

    for sidecar in init_containers.iter_mut() {
        default_sidecar_container(sidecar, PodInjectPolicyType::AfterAppContainer);
    }
    for sidecar in containers.iter_mut() {
        default_sidecar_container(sidecar, PodInjectPolicyType::BeforeAppContainer);
    }
    default_volumes(volumes);
    revision_history_limit.get_or_insert(DEFAULT_SIDECARSET_REVISION_HISTORY_LIMIT);
    for patch in patches.iter_mut() {
        if patch.patch_policy.is_unset() {
            patch.patch_policy = SidecarSetPatchPolicyType::Retain;
        }
    }
    if let Some(revision) = injection.revision.as_mut()
        && revision.policy.is_unset()
    {
        revision.policy = SidecarSetInjectRevisionPolicy::Always;
    }
}

/// Volume defaults are those of a pod's volumes.
fn default_volumes(volumes: &mut Vec<Volume>) {
    if volumes.is_empty() {
        return;
    }
    let mut carrier = PodSpec { volumes: Some(std::mem::take(volumes)), ..Default::default() };
    default_pod_spec(&mut carrier);
    *volumes = carrier.volumes.unwrap_or_default();
}

fn default_sidecar_container(sidecar: &mut SidecarContainer, inject_policy: PodInjectPolicyType) {
    if sidecar.pod_inject_policy.is_unset() {
        sidecar.pod_inject_policy = inject_policy;
    }
    if sidecar.upgrade_strategy.upgrade_type.is_unset() {
        sidecar.upgrade_strategy.upgrade_type = SidecarContainerUpgradeType::ColdUpgrade;
    }
    if sidecar.share_volume_policy.type_.is_unset() {
        sidecar.share_volume_policy.type_ = ShareVolumePolicyType::Disabled;
    }
    for transfer in &mut sidecar.transfer_env {
        if let Some(field) =
            transfer.source_container_name_from.as_mut().and_then(|from| from.field_ref.as_mut())
        {
            field.api_version.get_or_insert_with(|| "v1".into());
        }
    }
    default_container(&mut sidecar.container);
}

/// The core container defaults upstream applies to sidecars: pull policy by image tag,
/// termination message, port protocol, env fieldRef version, liveness and readiness probe
/// thresholds and HTTP handler defaults.
fn default_container(container: &mut Container) {
    if container.image_pull_policy.is_none() {
        let latest = image_tag(container.image.as_deref().unwrap_or_default()) == "latest";
        container.image_pull_policy = Some(if latest { "Always" } else { "IfNotPresent" }.into());
    }
    container.termination_message_path.get_or_insert_with(|| "/dev/termination-log".into());
    container.termination_message_policy.get_or_insert_with(|| "File".into());
    for port in container.ports.iter_mut().flatten() {
        port.protocol.get_or_insert_with(|| "TCP".into());
    }
    for var in container.env.iter_mut().flatten() {
        if let Some(field) = var.value_from.as_mut().and_then(|from| from.field_ref.as_mut()) {
            field.api_version.get_or_insert_with(|| "v1".into());
        }
    }
    for probe in [&mut container.liveness_probe, &mut container.readiness_probe].into_iter().flatten() {
        default_probe(probe);
    }
    if let Some(lifecycle) = container.lifecycle.as_mut() {
        default_handler(lifecycle.post_start.as_mut());
        default_handler(lifecycle.pre_stop.as_mut());
    }
}

fn default_probe(probe: &mut Probe) {
    probe.timeout_seconds.get_or_insert(1);
    probe.period_seconds.get_or_insert(10);
    probe.success_threshold.get_or_insert(1);
    probe.failure_threshold.get_or_insert(3);
    if let Some(get) = probe.http_get.as_mut() {
        default_http_get(get);
    }
}

fn default_handler(handler: Option<&mut LifecycleHandler>) {
    if let Some(get) = handler.and_then(|handler| handler.http_get.as_mut()) {
        default_http_get(get);
    }
}

fn default_http_get(get: &mut HTTPGetAction) {
    get.path.get_or_insert_with(|| "/".into());
    get.scheme.get_or_insert_with(|| "HTTP".into());
}
