//! PersistentPodState validation (INVENTORY "PersistentPodState" and d.4; upstream
//! `pkg/webhook/persistentpodstate/validating`), for both served versions.
//!
//! Left to the webhook because it needs the cluster: that no other PersistentPodState in the
//! namespace targets the same workload.

use super::meta::validate_object_meta;
use crate::{
    apps::{v1alpha1, v1beta1},
    field::{ErrorList, FieldError, FieldPath, quoted},
};

/// API groups whose StatefulSets a PersistentPodState supports without configuration.
pub const PERSISTENTPODSTATE_BUILTIN_GROUPS: &[&str] = &["apps", "apps.kruise.io"];

/// Validates a v1beta1 PersistentPodState against the built-in target kinds only; with `old`,
/// also that the target does not change.
pub fn validate_persistentpodstate_v1beta1(
    state: &v1beta1::PersistentPodState,
    old: Option<&v1beta1::PersistentPodState>,
) -> ErrorList {
    validate_persistentpodstate_v1beta1_with_whitelist(state, old, &[])
}

/// Validates a v1beta1 PersistentPodState, also accepting targets whose (group, kind) is in
/// `custom_workloads` (the `PPS_Watch_Custom_Workload_WhiteList` configuration).
pub fn validate_persistentpodstate_v1beta1_with_whitelist(
    state: &v1beta1::PersistentPodState,
    old: Option<&v1beta1::PersistentPodState>,
    custom_workloads: &[(&str, &str)],
) -> ErrorList {
    let spec = &state.spec;
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&state.metadata, true);
    errors.extend(validate_target(&spec.target_reference, custom_workloads, &path.child("targetRef")));
    if spec.required_persistent_topology.is_none() && spec.preferred_persistent_topology.is_empty() {
        errors.push(topology_required(&path));
    }
    for (index, term) in spec.preferred_persistent_topology.iter().enumerate() {
        if term.weight < 0 {
            errors.push(FieldError::invalid(
                &path.child("preferredPersistentTopology").index(index).child("weight"),
                term.weight,
                "must be greater than or equal to 0",
            ));
        }
    }
    let policy = &spec.persistent_pod_state_retention_policy;
    if !policy.is_unset() && !policy.is_known() {
        errors.push(FieldError::not_supported(
            &path.child("persistentPodStateRetentionPolicy"),
            policy.as_str(),
            v1beta1::PersistentPodStateRetentionPolicyType::KNOWN,
        ));
    }
    if let Some(old) = old {
        errors.extend(validate_target_update(&spec.target_reference, &old.spec.target_reference));
    }
    errors
}

/// Validates a v1alpha1 PersistentPodState against the built-in target kinds only; with `old`,
/// also that the target does not change.
pub fn validate_persistentpodstate_v1alpha1(
    state: &v1alpha1::PersistentPodState,
    old: Option<&v1alpha1::PersistentPodState>,
) -> ErrorList {
    validate_persistentpodstate_v1alpha1_with_whitelist(state, old, &[])
}

/// Validates a v1alpha1 PersistentPodState, also accepting targets whose (group, kind) is in
/// `custom_workloads`. The v1alpha1 schema leaves the retention policy and weights open, so
/// only the webhook's rules apply.
pub fn validate_persistentpodstate_v1alpha1_with_whitelist(
    state: &v1alpha1::PersistentPodState,
    old: Option<&v1alpha1::PersistentPodState>,
    custom_workloads: &[(&str, &str)],
) -> ErrorList {
    let spec = &state.spec;
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&state.metadata, true);
    errors.extend(validate_target(&spec.target_reference, custom_workloads, &path.child("targetRef")));
    if spec.required_persistent_topology.is_none() && spec.preferred_persistent_topology.is_empty() {
        errors.push(topology_required(&path));
    }
    if let Some(old) = old {
        errors.extend(validate_target_update(&spec.target_reference, &old.spec.target_reference));
    }
    errors
}

fn topology_required(path: &FieldPath) -> FieldError {
    FieldError::required(
        &path.child("requiredPersistentTopology"),
        "at least one of requiredPersistentTopology and preferredPersistentTopology must be set",
    )
}

/// The group of an apiVersion (`apps/v1` → `apps`, `v1` → core), or why it does not parse.
fn api_group(api_version: &str) -> Result<&str, String> {
    if api_version.is_empty() || api_version == "/" {
        return Ok("");
    }
    match api_version.split_once('/') {
        None => Ok(""),
        Some((group, version)) if !version.contains('/') => Ok(group),
        Some(_) => Err(format!("unexpected GroupVersion string: {api_version}")),
    }
}

fn validate_target(
    target: &v1beta1::TargetReference,
    custom_workloads: &[(&str, &str)],
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    for (field, value) in
        [("apiVersion", &target.api_version), ("kind", &target.kind), ("name", &target.name)]
    {
        if value.is_empty() {
            errors.push(FieldError::required(&path.child(field), ""));
        }
    }
    if target.api_version.is_empty() || target.kind.is_empty() {
        return errors;
    }
    let group = match api_group(&target.api_version) {
        Ok(group) => group,
        Err(message) => {
            errors.push(FieldError::invalid(&path.child("apiVersion"), quoted(&target.api_version), message));
            return errors;
        }
    };
    let builtin = target.kind == "StatefulSet" && PERSISTENTPODSTATE_BUILTIN_GROUPS.contains(&group);
    let whitelisted =
        custom_workloads.iter().any(|(custom_group, kind)| *kind == target.kind && *custom_group == group);
    if builtin || whitelisted {
        return errors;
    }
    if target.kind == "StatefulSet" {
        errors.push(FieldError::invalid(
            &path.child("apiVersion"),
            quoted(&target.api_version),
            "a StatefulSet target must be in API group apps or apps.kruise.io",
        ));
    } else {
        errors.push(FieldError::invalid(
            &path.child("kind"),
            quoted(&target.kind),
            "must be StatefulSet or a workload in the PersistentPodState custom workload whitelist",
        ));
    }
    errors
}

fn validate_target_update(new: &v1beta1::TargetReference, old: &v1beta1::TargetReference) -> ErrorList {
    if new == old {
        Vec::new()
    } else {
        vec![FieldError::forbidden(&FieldPath::root("spec").child("targetRef"), "targetRef is immutable")]
    }
}
