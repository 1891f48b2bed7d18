//! SidecarSet validation (INVENTORY d.3; upstream
//! `pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go`).
//!
//! [`validate_sidecarset_v1beta1`] / [`validate_sidecarset_v1alpha1`] check one object (and an
//! update against its old version). The rules that need other objects are separate pure
//! functions the webhook calls with what it read from the cluster:
//! [`sidecarset_conflicts`] (the other SidecarSets, including a canary's base),
//! [`validate_sidecarset_patch_metadata_whitelist`] (the whitelist of the `kruise-configuration`
//! ConfigMap) and [`validate_sidecarset_injection_revision`] (the ControllerRevisions of the
//! kruise namespace).
//!
//! The module also holds the parser of `resourcesPolicy` expressions
//! ([`parse_sidecar_resource_expr`]), which pod injection uses to evaluate them.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{Container, ObjectFieldSelector, PodSpec, Volume},
    },
    apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta},
};
use regex::Regex;
use serde::{Deserialize, Serialize};

use super::{
    common::{validate_priority_strategy, validate_scatter_strategy},
    meta::{
        dns1123_label_problems, qualified_name_problems, validate_annotations, validate_label_selector,
        validate_object_meta,
    },
    pod::validate_pod_spec,
    statefulset::validate_strict_int_or_percent,
};
use crate::{
    apps::{
        v1alpha1,
        v1beta1::{
            self, PodInjectPolicyType, ResourcesPolicy, SIDECARSET_BASE_ANNOTATION,
            SIDECARSET_CANARY_ANNOTATION, SIDECARSET_CUSTOM_VERSION_LABEL, ShareVolumePolicyType,
            SidecarContainer, SidecarSetInjectionStrategy, SidecarSetPatchPodMetadata,
            SidecarSetPatchPolicyType, SidecarSetUpdateStrategy, SidecarSetUpdateStrategyType,
        },
    },
    field::{ErrorList, FieldError, FieldPath, quoted},
    quantity::Quantity,
    selector,
};

/// Longest SidecarSet name.
pub const SIDECARSET_NAME_MAX_LENGTH: usize = 63;
/// Key of the `kruise-configuration` ConfigMap holding the
/// [`SidecarSetPatchMetadataWhitelist`] as JSON.
pub const SIDECARSET_PATCH_METADATA_WHITELIST_KEY: &str = "SidecarSet_PatchPodMetadata_WhiteList";

/// Validates a v1beta1 SidecarSet; with `old`, also the rules of an update. Cluster-wide
/// rules are in [`sidecarset_conflicts`], [`validate_sidecarset_patch_metadata_whitelist`] and
/// [`validate_sidecarset_injection_revision`].
pub fn validate_sidecarset_v1beta1(
    sidecarset: &v1beta1::SidecarSet,
    old: Option<&v1beta1::SidecarSet>,
) -> ErrorList {
    let spec = &sidecarset.spec;
    validate_view(
        &View {
            metadata: &sidecarset.metadata,
            selector: spec.selector.as_ref(),
            namespace: "",
            namespace_selector: spec.namespace_selector.as_ref(),
            init_containers: &spec.init_containers,
            containers: &spec.containers,
            volumes: &spec.volumes,
            update_strategy: &spec.update_strategy,
            injection_strategy: &spec.injection_strategy,
            patches: &spec.patch_pod_metadata,
        },
        old.map(|old| (&old.metadata, old.spec.containers.as_slice())),
    )
}

/// Validates a v1alpha1 SidecarSet; with `old`, also the rules of an update. `spec.namespace`
/// must be a namespace name; everything else is checked as for v1beta1.
pub fn validate_sidecarset_v1alpha1(
    sidecarset: &v1alpha1::SidecarSet,
    old: Option<&v1alpha1::SidecarSet>,
) -> ErrorList {
    let spec = &sidecarset.spec;
    validate_view(
        &View {
            metadata: &sidecarset.metadata,
            selector: spec.selector.as_ref(),
            namespace: &spec.namespace,
            namespace_selector: spec.namespace_selector.as_ref(),
            init_containers: &spec.init_containers,
            containers: &spec.containers,
            volumes: &spec.volumes,
            update_strategy: &spec.update_strategy,
            injection_strategy: &spec.injection_strategy,
            patches: &spec.patch_pod_metadata,
        },
        old.map(|old| (&old.metadata, old.spec.containers.as_slice())),
    )
}

/// The fields both versions share (v1alpha1 adds `namespace`).
struct View<'a> {
    metadata: &'a ObjectMeta,
    selector: Option<&'a LabelSelector>,
    namespace: &'a str,
    namespace_selector: Option<&'a LabelSelector>,
    init_containers: &'a [SidecarContainer],
    containers: &'a [SidecarContainer],
    volumes: &'a [Volume],
    update_strategy: &'a SidecarSetUpdateStrategy,
    injection_strategy: &'a SidecarSetInjectionStrategy,
    patches: &'a [SidecarSetPatchPodMetadata],
}

fn validate_view(view: &View<'_>, old: Option<(&ObjectMeta, &[SidecarContainer])>) -> ErrorList {
    let path = FieldPath::root("spec");
    let mut errors = validate_metadata(view.metadata);
    errors.extend(validate_canary(view, old.map(|(metadata, _)| metadata)));

    let strategy_path = path.child("updateStrategy");
    let rolling = view.update_strategy.type_ == SidecarSetUpdateStrategyType::RollingUpdate;
    for (index, sidecar) in view.init_containers.iter().enumerate() {
        if rolling && is_native_sidecar(&sidecar.container) {
            errors.push(FieldError::invalid(
                &strategy_path.child("type"),
                quoted(view.update_strategy.type_.as_str()),
                format!(
                    "init container {:?} (index {index}) has restartPolicy Always: such containers can not be \
                     upgraded in place, so updateStrategy.type must be NotUpdate",
                    sidecar.container.name
                ),
            ));
        }
    }

    match view.selector {
        None => {
            errors.push(FieldError::required(&path.child("selector"), "no selector defined for SidecarSet"))
        }
        Some(value) => errors.extend(validate_non_empty_selector(value, &path.child("selector"))),
    }
    if !view.namespace.is_empty() {
        for problem in dns1123_label_problems(view.namespace) {
            errors.push(FieldError::invalid(&path.child("namespace"), quoted(view.namespace), problem));
        }
    }
    if let Some(value) = view.namespace_selector {
        errors.extend(validate_non_empty_selector(value, &path.child("namespaceSelector")));
    }
    errors.extend(validate_injection_strategy(view.injection_strategy, &path.child("injectionStrategy")));
    errors.extend(validate_update_strategy(view.update_strategy, &strategy_path));

    if view.init_containers.is_empty() && view.containers.is_empty() {
        errors.push(FieldError::required(&path, "no initContainer or container defined for SidecarSet"));
    } else {
        errors.extend(validate_containers(view.init_containers, view.containers, view.volumes, &path));
    }
    errors.extend(validate_patches(view.patches, &path.child("patchPodMetadata")));

    if let Some((_, old_containers)) = old {
        errors.extend(validate_container_update(view.containers, old_containers, &path.child("containers")));
    }
    errors
}

/// Metadata as for any cluster-scoped object, except the name: letters, digits and '-', at most
/// 63 characters.
fn validate_metadata(metadata: &ObjectMeta) -> ErrorList {
    let name = metadata.name.as_deref().unwrap_or_default();
    let mut placeholder = metadata.clone();
    if !name.is_empty() {
        placeholder.name = Some("placeholder".into());
    }
    let mut errors = validate_object_meta(&placeholder, false);
    if !name.is_empty() {
        let name_path = FieldPath::root("metadata").child("name");
        if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            errors.push(FieldError::invalid(
                &name_path,
                quoted(name),
                "a SidecarSet name must consist of alphanumeric characters or '-'",
            ));
        }
        if name.len() > SIDECARSET_NAME_MAX_LENGTH {
            errors.push(FieldError::invalid(
                &name_path,
                quoted(name),
                format!("must be no more than {SIDECARSET_NAME_MAX_LENGTH} characters"),
            ));
        }
    }
    errors
}

/// The canary annotations of a SidecarSet: `Some(base)` when it is a canary of `base`.
pub fn sidecarset_canary_base(metadata: &ObjectMeta) -> Option<&str> {
    let annotations = metadata.annotations.as_ref()?;
    let base = annotations.get(SIDECARSET_BASE_ANNOTATION).filter(|base| !base.is_empty())?;
    (annotations.get(SIDECARSET_CANARY_ANNOTATION).map(String::as_str) == Some("true"))
        .then_some(base.as_str())
}

fn base_annotation_path() -> FieldPath {
    FieldPath::root("metadata").child("annotations").key(SIDECARSET_BASE_ANNOTATION)
}

fn validate_canary(view: &View<'_>, old: Option<&ObjectMeta>) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(base) = sidecarset_canary_base(view.metadata) else {
        return errors;
    };
    if Some(base) == view.metadata.name.as_deref() {
        errors.push(FieldError::invalid(
            &base_annotation_path(),
            quoted(base),
            "the base SidecarSet can not be itself",
        ));
    }
    if let Some(old) = old {
        let old_base = old.annotations.as_ref().and_then(|a| a.get(SIDECARSET_BASE_ANNOTATION));
        if old_base.map(String::as_str) != Some(base) {
            errors.push(FieldError::invalid(
                &base_annotation_path(),
                quoted(base),
                "the base SidecarSet is immutable",
            ));
        }
    }
    if view.update_strategy.type_ != SidecarSetUpdateStrategyType::NotUpdate {
        errors.push(FieldError::invalid(
            &FieldPath::root("spec").child("updateStrategy").child("type"),
            quoted(view.update_strategy.type_.as_str()),
            "a canary SidecarSet must use updateStrategy.type NotUpdate",
        ));
    }
    errors
}

fn is_native_sidecar(container: &Container) -> bool {
    container.restart_policy.as_deref() == Some("Always")
}

fn validate_non_empty_selector(value: &LabelSelector, path: &FieldPath) -> ErrorList {
    let mut errors = validate_label_selector(value, path);
    if selector::is_empty(value) {
        errors.push(FieldError::invalid(path, "{}", "empty selector is not valid for sidecarset"));
    }
    errors
}

fn validate_injection_strategy(strategy: &SidecarSetInjectionStrategy, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(revision) = &strategy.revision {
        let revision_path = path.child("revision");
        if revision.revision_name.is_none() && revision.custom_version.is_none() {
            errors.push(FieldError::invalid(
                &revision_path,
                "{}",
                "revisionName and customVersion can not both be empty",
            ));
        }
        if !revision.policy.is_unset() && !revision.policy.is_known() {
            errors.push(FieldError::not_supported(
                &revision_path.child("policy"),
                revision.policy.as_str(),
                v1beta1::SidecarSetInjectRevisionPolicy::KNOWN,
            ));
        }
    }
    errors
}

fn validate_update_strategy(strategy: &SidecarSetUpdateStrategy, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    match &strategy.type_ {
        SidecarSetUpdateStrategyType::NotUpdate => {}
        SidecarSetUpdateStrategyType::RollingUpdate => {
            let partition_set = match &strategy.partition {
                None => false,
                Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(count)) => *count != 0,
                Some(_) => true,
            };
            if partition_set && strategy.selector.is_some() {
                errors.push(FieldError::invalid(
                    &path.child("selector"),
                    "{...}",
                    "partition and selector can not be used together",
                ));
            }
            if let Some(value) = &strategy.selector {
                errors.extend(validate_non_empty_selector(value, &path.child("selector")));
            }
            if let Some(partition) = &strategy.partition {
                errors.extend(validate_strict_int_or_percent(partition, &path.child("partition")));
            }
            if let Some(max_unavailable) = &strategy.max_unavailable {
                errors.extend(validate_strict_int_or_percent(max_unavailable, &path.child("maxUnavailable")));
            }
            if let Some(priority) = &strategy.priority_strategy {
                errors.extend(validate_priority_strategy(priority, &path.child("priorityStrategy")));
            }
            errors.extend(validate_scatter_strategy(
                &strategy.scatter_strategy,
                &path.child("scatterStrategy"),
            ));
        }
        other => errors.push(FieldError::not_supported(
            &path.child("type"),
            other.as_str(),
            SidecarSetUpdateStrategyType::KNOWN,
        )),
    }
    errors
}

fn validate_containers(
    init_containers: &[SidecarContainer],
    containers: &[SidecarContainer],
    volumes: &[Volume],
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    for (index, sidecar) in init_containers.iter().enumerate() {
        if let Some(policy) = &sidecar.resources_policy {
            let policy_path = path.child("initContainers").index(index).child("resourcesPolicy");
            if !is_native_sidecar(&sidecar.container) {
                errors.push(FieldError::invalid(
                    &policy_path,
                    "{...}",
                    "resourcesPolicy is only supported for init containers with restartPolicy Always",
                ));
            }
            errors.extend(validate_resources_policy(policy, &sidecar.container, &policy_path));
        }
    }
    for (index, sidecar) in containers.iter().enumerate() {
        let item = path.child("containers").index(index);
        if !sidecar.pod_inject_policy.is_known() {
            errors.push(FieldError::not_supported(
                &item.child("podInjectPolicy"),
                sidecar.pod_inject_policy.as_str(),
                PodInjectPolicyType::KNOWN,
            ));
        }
        if !sidecar.share_volume_policy.type_.is_known() {
            errors.push(FieldError::not_supported(
                &item.child("shareVolumePolicy").child("type"),
                sidecar.share_volume_policy.type_.as_str(),
                ShareVolumePolicyType::KNOWN,
            ));
        }
        for (env_index, transfer) in sidecar.transfer_env.iter().enumerate() {
            if let Some(field) =
                transfer.source_container_name_from.as_ref().and_then(|from| from.field_ref.as_ref())
            {
                let field_path = item
                    .child("transferEnv")
                    .index(env_index)
                    .child("sourceContainerNameFrom")
                    .child("fieldRef");
                errors.extend(validate_source_field_ref(field, &field_path));
            }
        }
        if let Some(policy) = &sidecar.resources_policy {
            errors.extend(validate_resources_policy(
                policy,
                &sidecar.container,
                &item.child("resourcesPolicy"),
            ));
        }
    }

    // The containers, init containers and volumes must make a valid pod; a placeholder main
    // container stands in when the SidecarSet only has init containers.
    let mut main: Vec<Container> = containers.iter().map(|sidecar| sidecar.container.clone()).collect();
    if main.is_empty() {
        let taken: BTreeSet<&str> = init_containers.iter().map(|s| s.container.name.as_str()).collect();
        let name = (0..)
            .map(|n| format!("placeholder-{n}"))
            .find(|n| !taken.contains(n.as_str()))
            .unwrap_or_default();
        main.push(Container {
            name,
            image: Some("busybox".into()),
            image_pull_policy: Some("IfNotPresent".into()),
            termination_message_policy: Some("File".into()),
            ..Default::default()
        });
    }
    let pod = PodSpec {
        init_containers: (!init_containers.is_empty())
            .then(|| init_containers.iter().map(|sidecar| sidecar.container.clone()).collect()),
        containers: main,
        volumes: (!volumes.is_empty()).then(|| volumes.to_vec()),
        restart_policy: Some("Always".into()),
        dns_policy: Some("ClusterFirst".into()),
        ..Default::default()
    };
    errors.extend(validate_pod_spec(&pod, path, &[]));
    errors
}

/// `sourceContainerNameFrom.fieldRef`: API version v1 and a subscripted label or annotation
/// path (`metadata.labels['key']`, `metadata.annotations['key']`).
fn validate_source_field_ref(field: &ObjectFieldSelector, path: &FieldPath) -> ErrorList {
    let api_version = field.api_version.as_deref().unwrap_or_default();
    if api_version.is_empty() {
        return vec![FieldError::required(&path.child("apiVersion"), "")];
    }
    if field.field_path.is_empty() {
        return vec![FieldError::required(&path.child("fieldPath"), "")];
    }
    if api_version != "v1" {
        return vec![FieldError::invalid(
            &path.child("apiVersion"),
            quoted(api_version),
            "only pod API version v1 is supported",
        )];
    }
    let Some((base, subscript)) = split_subscripted_path(&field.field_path) else {
        return vec![FieldError::not_supported(
            &path.child("fieldPath"),
            &field.field_path,
            &["metadata.labels['<key>']", "metadata.annotations['<key>']"],
        )];
    };
    let problems = match base {
        "metadata.annotations" => qualified_name_problems(&subscript.to_lowercase()),
        "metadata.labels" => qualified_name_problems(subscript),
        other => {
            return vec![FieldError::invalid(
                &path.child("fieldPath"),
                quoted(other),
                "only metadata.labels and metadata.annotations may be subscripted",
            )];
        }
    };
    problems
        .into_iter()
        .map(|problem| FieldError::invalid(&path.child("fieldPath"), quoted(subscript), problem))
        .collect()
}

/// Splits `path['subscript']` into its parts.
fn split_subscripted_path(field_path: &str) -> Option<(&str, &str)> {
    let inner = field_path.strip_suffix("']")?;
    let (base, subscript) = inner.split_once("['")?;
    (!base.is_empty()).then_some((base, subscript))
}

fn validate_resources_policy(policy: &ResourcesPolicy, container: &Container, path: &FieldPath) -> ErrorList {
    let has_resources = container.resources.as_ref().is_some_and(|resources| {
        resources.limits.as_ref().is_some_and(|l| !l.is_empty())
            || resources.requests.as_ref().is_some_and(|r| !r.is_empty())
    });
    if has_resources {
        return vec![FieldError::invalid(
            path,
            "{...}",
            "resourcesPolicy and resources can not be configured together",
        )];
    }
    let mut errors = ErrorList::new();
    let regex_path = path.child("targetContainersNameRegex");
    if policy.target_containers_name_regex.is_empty() {
        errors.push(FieldError::required(&regex_path, "an empty regular expression is not valid"));
    } else if let Err(error) = Regex::new(&policy.target_containers_name_regex) {
        errors.push(FieldError::invalid(
            &regex_path,
            quoted(&policy.target_containers_name_regex),
            format!("invalid regular expression: {error}"),
        ));
    }
    if !policy.target_containers_mode.is_known() {
        errors.push(FieldError::not_supported(
            &path.child("targetContainersMode"),
            policy.target_containers_mode.as_str(),
            v1beta1::TargetContainersModeType::KNOWN,
        ));
    }
    let expr = &policy.resources_expr;
    let expr_path = path.child("resourcesExpr");
    if expr.limits.is_none() && expr.requests.is_none() {
        errors.push(FieldError::invalid(
            &expr_path,
            "{}",
            "at least one of limits or requests must be configured",
        ));
        return errors;
    }
    let pairs = [
        ("limits", expr.limits.as_ref().map(|l| (&l.cpu, &l.memory))),
        ("requests", expr.requests.as_ref().map(|r| (&r.cpu, &r.memory))),
    ];
    for (kind, exprs) in pairs {
        let Some((cpu, memory)) = exprs else { continue };
        for (variable, text) in [("cpu", cpu), ("memory", memory)] {
            if text.is_empty() {
                continue;
            }
            if let Err(error) = check_sidecar_resource_expr(text, variable) {
                errors.push(FieldError::invalid(
                    &expr_path.child(kind).child(variable),
                    quoted(text),
                    format!("invalid expression: {error}"),
                ));
            }
        }
    }
    errors
}

fn validate_patches(patches: &[SidecarSetPatchPodMetadata], path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (index, patch) in patches.iter().enumerate() {
        let item = path.index(index);
        let annotations_path = item.child("annotations");
        if patch.annotations.is_empty() {
            errors
                .push(FieldError::required(&annotations_path, "no annotations defined for patchPodMetadata"));
        } else {
            errors.extend(validate_annotations(Some(&patch.annotations), &annotations_path));
        }
        if patch.patch_policy.is_unset() {
            errors.push(FieldError::required(
                &item.child("patchPolicy"),
                "no patchPolicy defined for patchPodMetadata",
            ));
        } else if !patch.patch_policy.is_known() {
            errors.push(FieldError::not_supported(
                &item.child("patchPolicy"),
                patch.patch_policy.as_str(),
                SidecarSetPatchPolicyType::KNOWN,
            ));
        }
        for key in patch.annotations.keys() {
            if !seen.insert(key.as_str()) {
                errors.push(FieldError::duplicate(&annotations_path.key(key), quoted(key)));
            }
        }
    }
    errors
}

/// On update, every container must already exist in the old SidecarSet (containers can not be
/// added) and keeps its upgrade type.
fn validate_container_update(
    new: &[SidecarContainer],
    old: &[SidecarContainer],
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    for (index, sidecar) in new.iter().enumerate() {
        let item = path.index(index);
        let name = &sidecar.container.name;
        match old.iter().find(|previous| previous.container.name == *name) {
            None => errors.push(FieldError::invalid(
                &item.child("name"),
                quoted(name),
                format!("container {name} is not found in the SidecarSet being updated: containers can not be added"),
            )),
            Some(previous) => {
                let before = &previous.upgrade_strategy.upgrade_type;
                if !before.is_unset() && *before != sidecar.upgrade_strategy.upgrade_type {
                    errors.push(FieldError::invalid(
                        &item.child("upgradeStrategy").child("upgradeType"),
                        quoted(sidecar.upgrade_strategy.upgrade_type.as_str()),
                        format!("the upgradeType of container {name} is immutable"),
                    ));
                }
            }
        }
    }
    errors
}

/// Label with which the SidecarSet controller marks the ControllerRevisions of a SidecarSet
/// (its value is the SidecarSet's name).
pub const SIDECARSET_REVISION_OWNER_LABEL: &str = "kruise.io/sidecarset-name";

fn revision_label<'a>(revision: &'a ControllerRevision, key: &str) -> Option<&'a str> {
    revision.metadata.labels.as_ref().and_then(|labels| labels.get(key)).map(String::as_str)
}

/// Whether the revision pinned by `injectionStrategy.revision` exists among `revisions` (the
/// ControllerRevisions of the kruise namespace): by name for `revisionName`, or, for
/// `customVersion`, a revision of this SidecarSet carrying that custom version label.
pub fn validate_sidecarset_injection_revision(
    sidecarset: &v1beta1::SidecarSet,
    revisions: &[ControllerRevision],
) -> ErrorList {
    let Some(pinned) = &sidecarset.spec.injection_strategy.revision else {
        return ErrorList::new();
    };
    let path = FieldPath::root("spec").child("injectionStrategy").child("revision");
    let own_name = sidecarset.metadata.name.as_deref().unwrap_or_default();
    if let Some(name) = &pinned.revision_name {
        if !revisions.iter().any(|revision| revision.metadata.name.as_deref() == Some(name.as_str())) {
            return vec![FieldError::not_found(&path.child("revisionName"), quoted(name))];
        }
    } else if let Some(version) = &pinned.custom_version {
        let found = revisions.iter().any(|revision| {
            revision_label(revision, SIDECARSET_REVISION_OWNER_LABEL) == Some(own_name)
                && revision_label(revision, SIDECARSET_CUSTOM_VERSION_LABEL) == Some(version.as_str())
        });
        if !found {
            return vec![FieldError::not_found(&path.child("customVersion"), quoted(version))];
        }
    }
    ErrorList::new()
}

/// The rules of a SidecarSet that involve the other SidecarSets of the cluster (`others` may
/// include the candidate's own stored version, which is ignored by name):
///
/// - a canary's base must exist and must not be a canary itself;
/// - against every other SidecarSet whose namespace selector and pod selector may select the
///   same pods (a canary's base excepted): no container or init container of the same name,
///   same-named volumes identical, and no annotation patched by both when either side uses
///   `Overwrite` (`Retain` patches never conflict).
pub fn sidecarset_conflicts(candidate: &v1beta1::SidecarSet, others: &[v1beta1::SidecarSet]) -> ErrorList {
    let mut errors = ErrorList::new();
    let own_name = candidate.metadata.name.as_deref().unwrap_or_default();
    let canary_base = sidecarset_canary_base(&candidate.metadata);
    if let Some(base) = canary_base.filter(|base| *base != own_name) {
        match others.iter().find(|other| other.metadata.name.as_deref() == Some(base)) {
            None => errors.push(FieldError::not_found(&base_annotation_path(), quoted(base))),
            Some(found) if sidecarset_canary_base(&found.metadata).is_some() => {
                errors.push(FieldError::invalid(
                    &base_annotation_path(),
                    quoted(base),
                    "the base SidecarSet can not be a canary itself",
                ))
            }
            Some(_) => {}
        }
    }

    let spec = &candidate.spec;
    let overlapping: Vec<&v1beta1::SidecarSet> = others
        .iter()
        .filter(|other| {
            let name = other.metadata.name.as_deref().unwrap_or_default();
            name != own_name && Some(name) != canary_base
        })
        .filter(|other| {
            let namespaces_apart = match (&spec.namespace_selector, &other.spec.namespace_selector) {
                (Some(mine), Some(theirs)) => !sidecarset_selectors_overlap(mine, theirs),
                _ => false,
            };
            let empty = LabelSelector::default();
            let pods_overlap = sidecarset_selectors_overlap(
                spec.selector.as_ref().unwrap_or(&empty),
                other.spec.selector.as_ref().unwrap_or(&empty),
            );
            !namespaces_apart && pods_overlap
        })
        .collect();

    let path = FieldPath::root("spec");
    let owner_of = |pick: &dyn Fn(&v1beta1::SidecarSet) -> bool| -> Option<String> {
        overlapping
            .iter()
            .find(|other| pick(other))
            .map(|other| other.metadata.name.clone().unwrap_or_default())
    };
    for (list, field) in [(&spec.init_containers, "initContainers"), (&spec.containers, "containers")] {
        for (index, sidecar) in list.iter().enumerate() {
            let name = &sidecar.container.name;
            let theirs = |other: &v1beta1::SidecarSet| {
                let list = if field == "initContainers" {
                    &other.spec.init_containers
                } else {
                    &other.spec.containers
                };
                list.iter().any(|c| c.container.name == *name)
            };
            if let Some(other) = owner_of(&theirs) {
                errors.push(FieldError::invalid(
                    &path.child(field).index(index).child("name"),
                    quoted(name),
                    format!("container {name} already exists in SidecarSet {other}"),
                ));
            }
        }
    }
    for (index, volume) in spec.volumes.iter().enumerate() {
        let differs = |other: &v1beta1::SidecarSet| {
            other.spec.volumes.iter().any(|theirs| theirs.name == volume.name && theirs != volume)
        };
        if let Some(other) = owner_of(&differs) {
            errors.push(FieldError::invalid(
                &path.child("volumes").index(index),
                quoted(&volume.name),
                format!("volume {} differs from the volume of that name in SidecarSet {other}", volume.name),
            ));
        }
    }
    let patched_elsewhere: BTreeMap<&str, (&str, &SidecarSetPatchPolicyType)> = overlapping
        .iter()
        .flat_map(|other| {
            let name = other.metadata.name.as_deref().unwrap_or_default();
            other
                .spec
                .patch_pod_metadata
                .iter()
                .filter(|patch| patch.patch_policy != SidecarSetPatchPolicyType::Retain)
                .flat_map(move |patch| {
                    patch.annotations.keys().map(move |key| (key.as_str(), (name, &patch.patch_policy)))
                })
        })
        .collect();
    for (index, patch) in spec.patch_pod_metadata.iter().enumerate() {
        if patch.patch_policy == SidecarSetPatchPolicyType::Retain {
            continue;
        }
        for key in patch.annotations.keys() {
            let Some((other, their_policy)) = patched_elsewhere.get(key.as_str()) else { continue };
            let overwrite = SidecarSetPatchPolicyType::Overwrite;
            if patch.patch_policy == overwrite || **their_policy == overwrite {
                errors.push(FieldError::invalid(
                    &path.child("patchPodMetadata").index(index).child("annotations").key(key),
                    quoted(key),
                    format!("annotation {key} is also patched by SidecarSet {other}"),
                ));
            }
        }
    }
    errors
}

/// Whether two label selectors may select a common object, by upstream's rule: they are
/// disjoint when one requires, for a key the other constrains to known values, a value outside
/// those (`a=b` vs `a=c`, `a in (b)` vs `a notin (b)`), or requires a key the other does not
/// mention to exist, or forbids a key the other constrains.
pub fn sidecarset_selectors_overlap(first: &LabelSelector, second: &LabelSelector) -> bool {
    !(selectors_disjoint(first, second) || selectors_disjoint(second, first))
}

/// Values a selector allows for a key: any value (`Exists`) or one of a list.
enum Allowed<'a> {
    Any,
    Values(Vec<&'a str>),
}

fn selectors_disjoint(first: &LabelSelector, second: &LabelSelector) -> bool {
    let mut allowed: BTreeMap<&str, Allowed<'_>> = BTreeMap::new();
    for (key, value) in first.match_labels.iter().flatten() {
        allowed.insert(key, Allowed::Values(vec![value]));
    }
    for requirement in first.match_expressions.iter().flatten() {
        let values = requirement.values.iter().flatten().map(String::as_str);
        match requirement.operator.as_str() {
            "In" => match allowed.entry(&requirement.key).or_insert_with(|| Allowed::Values(Vec::new())) {
                Allowed::Any => {}
                Allowed::Values(list) => list.extend(values),
            },
            "Exists" => {
                allowed.insert(&requirement.key, Allowed::Any);
            }
            _ => {}
        }
    }
    let accepts = |key: &str, value: &str| match allowed.get(key) {
        None | Some(Allowed::Any) => true,
        Some(Allowed::Values(list)) => list.contains(&value),
    };
    for (key, value) in second.match_labels.iter().flatten() {
        if !accepts(key, value) {
            return true;
        }
    }
    for requirement in second.match_expressions.iter().flatten() {
        let values: Vec<&str> = requirement.values.iter().flatten().map(String::as_str).collect();
        let known = allowed.get(requirement.key.as_str());
        let disjoint = match requirement.operator.as_str() {
            "In" => match known {
                Some(Allowed::Values(list)) => !values.iter().any(|v| list.contains(v)),
                _ => false,
            },
            "NotIn" => match known {
                Some(Allowed::Values(list)) => list.iter().all(|v| values.contains(v)),
                _ => false,
            },
            "Exists" => known.is_none(),
            "DoesNotExist" => known.is_some(),
            _ => false,
        };
        if disjoint {
            return true;
        }
    }
    false
}

/// The whitelist of annotation keys SidecarSets may patch into pods (JSON under
/// [`SIDECARSET_PATCH_METADATA_WHITELIST_KEY`] in the `kruise-configuration` ConfigMap).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SidecarSetPatchMetadataWhitelist {
    /// The rules; a key is allowed when a rule that applies to the SidecarSet allows it.
    #[serde(default)]
    pub rules: Vec<SidecarSetPatchMetadataWhitelistRule>,
}

/// One whitelist rule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetPatchMetadataWhitelistRule {
    /// SidecarSets (by their labels) the rule applies to; unset means all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Regular expressions; an annotation key matching any of them is allowed.
    #[serde(default)]
    pub allowed_annotation_key_exprs: Vec<String>,
}

/// Checks `patchPodMetadata` against the whitelist read from the cluster (`None` when the
/// ConfigMap or its key is missing). `defaults_allowed` is the
/// `SidecarSetPatchPodMetadataDefaultsAllowed` feature gate: with it, a missing whitelist or
/// one with no rule for this SidecarSet allows every key.
pub fn validate_sidecarset_patch_metadata_whitelist(
    sidecarset: &v1beta1::SidecarSet,
    whitelist: Option<&SidecarSetPatchMetadataWhitelist>,
    defaults_allowed: bool,
) -> ErrorList {
    let patches = &sidecarset.spec.patch_pod_metadata;
    let path = FieldPath::root("spec").child("patchPodMetadata");
    if patches.is_empty() {
        return ErrorList::new();
    }
    let Some(whitelist) = whitelist else {
        return if defaults_allowed {
            ErrorList::new()
        } else {
            vec![FieldError::forbidden(&path, "the SidecarSet patch metadata whitelist was not found")]
        };
    };
    let labels = sidecarset.metadata.labels.clone().unwrap_or_default();
    let mut errors = ErrorList::new();
    let mut allowed = Vec::new();
    for (index, rule) in whitelist.rules.iter().enumerate() {
        if rule.selector.as_ref().is_some_and(|s| !selector::matches(s, &labels)) {
            continue;
        }
        for expr in &rule.allowed_annotation_key_exprs {
            match Regex::new(expr) {
                Ok(regex) => allowed.push(regex),
                Err(error) => errors.push(FieldError::invalid(
                    &path,
                    quoted(expr),
                    format!("whitelist rule {index} has an invalid expression: {error}"),
                )),
            }
        }
    }
    if allowed.is_empty() {
        if !defaults_allowed && errors.is_empty() {
            errors.push(FieldError::forbidden(
                &path,
                "no whitelist rule allows this SidecarSet to patch annotations",
            ));
        }
        return errors;
    }
    for (index, patch) in patches.iter().enumerate() {
        for key in patch.annotations.keys() {
            if !allowed.iter().any(|regex| regex.is_match(key)) {
                errors.push(FieldError::forbidden(
                    &path.index(index).child("annotations").key(key),
                    format!("annotation {key} is not allowed by the patch metadata whitelist"),
                ));
            }
        }
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// resourcesPolicy expressions
// ---------------------------------------------------------------------------------------------

/// Why a resources expression is rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SidecarResourceExprError {
    /// The text does not follow the grammar.
    #[error("syntax error at offset {offset}: {message}")]
    Syntax {
        /// Byte offset of the problem.
        offset: usize,
        /// What was expected or found.
        message: String,
    },
    /// A variable other than the one the field allows.
    #[error("undefined variable: {0}")]
    UndefinedVariable(String),
    /// A function other than `max` and `min`, or the wrong number of arguments.
    #[error("{0}")]
    BadCall(String),
    /// Two quantities multiplied.
    #[error("multiplication of two quantities")]
    QuantityTimesQuantity,
    /// A division by a quantity.
    #[error("division by quantity")]
    DivisionByQuantity,
    /// A division by zero.
    #[error("division by zero")]
    DivisionByZero,
    /// The result is below zero.
    #[error("calculation result is negative: {0}")]
    Negative(String),
}

/// A binary operator of a resources expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SidecarResourceOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

/// A parsed resources expression: `+ - * /`, unary minus, parentheses, `max(a, b)`, `min(a, b)`,
/// numbers (`2`, `0.5`, `50%` = 0.5), quantities (`100m`, `512Mi`) and a variable (`cpu` or
/// `memory`, the combined value of the target containers).
#[derive(Clone, Debug, PartialEq)]
pub enum SidecarResourceExpr {
    /// A plain number (percentages already divided by 100).
    Number(f64),
    /// A resource quantity.
    Quantity(Quantity),
    /// A variable, lower-cased.
    Variable(String),
    /// `-x`
    Negate(Box<SidecarResourceExpr>),
    /// `a op b`
    Binary(SidecarResourceOp, Box<SidecarResourceExpr>, Box<SidecarResourceExpr>),
    /// `max(a, b)` (`true`) or `min(a, b)` (`false`).
    Extreme {
        /// Whether this is `max`.
        max: bool,
        /// First argument.
        left: Box<SidecarResourceExpr>,
        /// Second argument.
        right: Box<SidecarResourceExpr>,
    },
}

/// The value of a resources expression: a plain number or a quantity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SidecarResourceValue {
    /// A plain number.
    Number(f64),
    /// A quantity.
    Quantity(Quantity),
}

impl SidecarResourceValue {
    /// The value as a quantity, reading a plain number as cores for `cpu` and as bytes for
    /// `memory` (what upstream does with a unit-less result).
    pub fn into_quantity(self, memory: bool) -> Quantity {
        match self {
            Self::Quantity(quantity) => quantity,
            Self::Number(number) if memory => Quantity::from_units(number as i64),
            Self::Number(number) => Quantity::from_millis((number * 1000.0) as i64),
        }
    }

    fn as_quantity(self) -> Quantity {
        self.into_quantity(false)
    }
}

/// Deepest nesting of parentheses, calls and unary minus the parser accepts.
const MAX_EXPR_DEPTH: usize = 64;

/// Parses a resources expression.
pub fn parse_sidecar_resource_expr(text: &str) -> Result<SidecarResourceExpr, SidecarResourceExprError> {
    let mut parser = ExprParser { tokens: tokenize(text)?, position: 0, depth: 0 };
    let expr = parser.expr()?;
    match parser.peek() {
        (_, Token::End) => Ok(expr),
        (offset, token) => Err(syntax(*offset, format!("unexpected {}", token.describe()))),
    }
}

/// Checks a resources expression of the field for `variable` (`cpu` or `memory`): it parses,
/// uses no other variable, calls only `max`/`min` with two arguments, never multiplies two
/// quantities or divides by a quantity (the variable is a quantity), and never divides by a
/// constant zero. Whether the result is negative depends on the pod and is left to evaluation.
pub fn check_sidecar_resource_expr(text: &str, variable: &str) -> Result<(), SidecarResourceExprError> {
    let expr = parse_sidecar_resource_expr(text)?;
    expr.kind(variable).map(|_| ())
}

impl SidecarResourceExpr {
    /// Evaluates the expression with `variable` bound to `value`; a negative result is an error.
    pub fn evaluate(
        &self,
        variable: &str,
        value: Quantity,
    ) -> Result<SidecarResourceValue, SidecarResourceExprError> {
        let result = self.eval(variable, value)?;
        let negative = match result {
            SidecarResourceValue::Number(number) => number < 0.0,
            SidecarResourceValue::Quantity(quantity) => quantity.is_negative(),
        };
        if negative {
            let shown = match result {
                SidecarResourceValue::Number(number) => number.to_string(),
                SidecarResourceValue::Quantity(quantity) => quantity.to_string(),
            };
            return Err(SidecarResourceExprError::Negative(shown));
        }
        Ok(result)
    }

    fn eval(
        &self,
        variable: &str,
        value: Quantity,
    ) -> Result<SidecarResourceValue, SidecarResourceExprError> {
        use SidecarResourceValue::{Number, Quantity as Q};
        Ok(match self {
            Self::Number(number) => Number(*number),
            Self::Quantity(quantity) => Q(*quantity),
            Self::Variable(name) if name == variable => Q(value),
            Self::Variable(name) => return Err(SidecarResourceExprError::UndefinedVariable(name.clone())),
            Self::Negate(inner) => match inner.eval(variable, value)? {
                Number(number) => Number(-number),
                Q(quantity) => Q(Quantity::default().saturating_sub(quantity)),
            },
            Self::Binary(op, left, right) => {
                let (left, right) = (left.eval(variable, value)?, right.eval(variable, value)?);
                match (op, left, right) {
                    (SidecarResourceOp::Add, Number(a), Number(b)) => Number(a + b),
                    (SidecarResourceOp::Add, a, b) => Q(a.as_quantity().saturating_add(b.as_quantity())),
                    (SidecarResourceOp::Sub, Number(a), Number(b)) => Number(a - b),
                    (SidecarResourceOp::Sub, a, b) => Q(a.as_quantity().saturating_sub(b.as_quantity())),
                    (SidecarResourceOp::Mul, Q(_), Q(_)) => {
                        return Err(SidecarResourceExprError::QuantityTimesQuantity);
                    }
                    (SidecarResourceOp::Mul, Q(q), Number(n)) | (SidecarResourceOp::Mul, Number(n), Q(q)) => {
                        Q(scale_millis(q, |millis| millis * n))
                    }
                    (SidecarResourceOp::Mul, Number(a), Number(b)) => Number(a * b),
                    (SidecarResourceOp::Div, _, Q(_)) => {
                        return Err(SidecarResourceExprError::DivisionByQuantity);
                    }
                    (SidecarResourceOp::Div, _, Number(0.0)) => {
                        return Err(SidecarResourceExprError::DivisionByZero);
                    }
                    (SidecarResourceOp::Div, Q(q), Number(n)) => Q(scale_millis(q, |millis| millis / n)),
                    (SidecarResourceOp::Div, Number(a), Number(b)) => Number(a / b),
                }
            }
            Self::Extreme { max, left, right } => {
                let (left, right) = (left.eval(variable, value)?, right.eval(variable, value)?);
                match (left, right) {
                    (Number(a), Number(b)) => Number(if *max { a.max(b) } else { a.min(b) }),
                    (a, b) => {
                        let (a, b) = (a.as_quantity(), b.as_quantity());
                        Q(if *max { a.max(b) } else { a.min(b) })
                    }
                }
            }
        })
    }

    /// Static check: whether the expression is a number (`false`) or a quantity (`true`).
    fn kind(&self, variable: &str) -> Result<bool, SidecarResourceExprError> {
        Ok(match self {
            Self::Number(_) => false,
            Self::Quantity(_) => true,
            Self::Variable(name) if name == variable => true,
            Self::Variable(name) => return Err(SidecarResourceExprError::UndefinedVariable(name.clone())),
            Self::Negate(inner) => inner.kind(variable)?,
            Self::Binary(op, left, right) => {
                let (left_q, right_q) = (left.kind(variable)?, right.kind(variable)?);
                match op {
                    SidecarResourceOp::Add | SidecarResourceOp::Sub => left_q || right_q,
                    SidecarResourceOp::Mul if left_q && right_q => {
                        return Err(SidecarResourceExprError::QuantityTimesQuantity);
                    }
                    SidecarResourceOp::Mul => left_q || right_q,
                    SidecarResourceOp::Div => {
                        if right_q {
                            return Err(SidecarResourceExprError::DivisionByQuantity);
                        }
                        if !right.mentions_variable() {
                            // A constant divisor: evaluate it (the bound value is irrelevant).
                            let divisor = right.eval(variable, Quantity::default())?;
                            if matches!(divisor, SidecarResourceValue::Number(n) if n == 0.0) {
                                return Err(SidecarResourceExprError::DivisionByZero);
                            }
                        }
                        left_q
                    }
                }
            }
            Self::Extreme { left, right, .. } => left.kind(variable)? || right.kind(variable)?,
        })
    }

    fn mentions_variable(&self) -> bool {
        match self {
            Self::Number(_) | Self::Quantity(_) => false,
            Self::Variable(_) => true,
            Self::Negate(inner) => inner.mentions_variable(),
            Self::Binary(_, left, right) | Self::Extreme { left, right, .. } => {
                left.mentions_variable() || right.mentions_variable()
            }
        }
    }
}

/// Applies `f` to a quantity's milli-value and truncates the result to whole millis.
fn scale_millis(quantity: Quantity, f: impl Fn(f64) -> f64) -> Quantity {
    let scaled = f(quantity.millis() as f64);
    let clamped = if scaled.is_nan() { 0.0 } else { scaled.clamp(i64::MIN as f64, i64::MAX as f64) };
    Quantity::from_millis(clamped as i64)
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Number(f64),
    Quantity(Quantity),
    Ident(String),
    Symbol(char),
    End,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Self::Number(number) => format!("number {number}"),
            Self::Quantity(quantity) => format!("quantity {quantity}"),
            Self::Ident(name) => format!("name {name:?}"),
            Self::Symbol(symbol) => format!("{symbol:?}"),
            Self::End => "end of expression".into(),
        }
    }
}

fn syntax(offset: usize, message: impl Into<String>) -> SidecarResourceExprError {
    SidecarResourceExprError::Syntax { offset, message: message.into() }
}

const QUANTITY_UNITS: [&str; 11] = ["m", "k", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "Pi"];

fn tokenize(text: &str) -> Result<Vec<(usize, Token)>, SidecarResourceExprError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii_whitespace() {
            at += 1;
        } else if b"+-*/(),".contains(&byte) {
            tokens.push((at, Token::Symbol(char::from(byte))));
            at += 1;
        } else if byte.is_ascii_digit() || byte == b'.' {
            let start = at;
            while at < bytes.len() && (bytes[at].is_ascii_digit() || bytes[at] == b'.') {
                at += 1;
            }
            let number_end = {
                // An exponent only when digits follow (optionally signed): `2e3`, `1E-2`.
                let mut probe = at;
                if probe < bytes.len() && matches!(bytes[probe], b'e' | b'E') {
                    probe += 1;
                    if probe < bytes.len() && matches!(bytes[probe], b'+' | b'-') {
                        probe += 1;
                    }
                    if probe < bytes.len() && bytes[probe].is_ascii_digit() {
                        while probe < bytes.len() && bytes[probe].is_ascii_digit() {
                            probe += 1;
                        }
                        at = probe;
                    }
                }
                at
            };
            let number = &text[start..number_end];
            let value: f64 =
                number.parse().map_err(|_| syntax(start, format!("invalid number {number:?}")))?;
            if at < bytes.len() && bytes[at] == b'%' {
                at += 1;
                tokens.push((start, Token::Number(value / 100.0)));
            } else if at < bytes.len() && bytes[at].is_ascii_alphabetic() {
                let unit_start = at;
                while at < bytes.len() && bytes[at].is_ascii_alphabetic() {
                    at += 1;
                }
                let unit = &text[unit_start..at];
                if !QUANTITY_UNITS.contains(&unit) {
                    return Err(syntax(unit_start, format!("unknown unit {unit:?}")));
                }
                let quantity = Quantity::parse(&text[start..at])
                    .map_err(|_| syntax(start, format!("invalid quantity {:?}", &text[start..at])))?;
                tokens.push((start, Token::Quantity(quantity)));
            } else {
                tokens.push((start, Token::Number(value)));
            }
        } else if byte.is_ascii_alphabetic() {
            let start = at;
            while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                at += 1;
            }
            tokens.push((start, Token::Ident(text[start..at].to_ascii_lowercase())));
        } else {
            let shown = text[at..].chars().next().unwrap_or_default();
            return Err(syntax(at, format!("unexpected character {shown:?}")));
        }
    }
    tokens.push((text.len(), Token::End));
    Ok(tokens)
}

struct ExprParser {
    tokens: Vec<(usize, Token)>,
    position: usize,
    depth: usize,
}

impl ExprParser {
    fn peek(&self) -> &(usize, Token) {
        // The token list always ends with `End`, and `advance` never moves past it.
        &self.tokens[self.position.min(self.tokens.len() - 1)]
    }

    fn advance(&mut self) -> (usize, Token) {
        let token = self.peek().clone();
        if token.1 != Token::End {
            self.position += 1;
        }
        token
    }

    fn expect(&mut self, symbol: char) -> Result<(), SidecarResourceExprError> {
        match self.advance() {
            (_, Token::Symbol(found)) if found == symbol => Ok(()),
            (offset, token) => {
                Err(syntax(offset, format!("expected {symbol:?}, found {}", token.describe())))
            }
        }
    }

    fn nested<T>(
        &mut self,
        offset: usize,
        f: impl FnOnce(&mut Self) -> Result<T, SidecarResourceExprError>,
    ) -> Result<T, SidecarResourceExprError> {
        if self.depth >= MAX_EXPR_DEPTH {
            return Err(syntax(offset, "expression nested too deeply"));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn expr(&mut self) -> Result<SidecarResourceExpr, SidecarResourceExprError> {
        let mut left = self.term()?;
        loop {
            let op = match self.peek().1 {
                Token::Symbol('+') => SidecarResourceOp::Add,
                Token::Symbol('-') => SidecarResourceOp::Sub,
                _ => return Ok(left),
            };
            self.advance();
            left = SidecarResourceExpr::Binary(op, Box::new(left), Box::new(self.term()?));
        }
    }

    fn term(&mut self) -> Result<SidecarResourceExpr, SidecarResourceExprError> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek().1 {
                Token::Symbol('*') => SidecarResourceOp::Mul,
                Token::Symbol('/') => SidecarResourceOp::Div,
                _ => return Ok(left),
            };
            self.advance();
            left = SidecarResourceExpr::Binary(op, Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<SidecarResourceExpr, SidecarResourceExprError> {
        let (offset, token) = self.advance();
        match token {
            Token::Symbol('-') => {
                self.nested(offset, |parser| Ok(SidecarResourceExpr::Negate(Box::new(parser.unary()?))))
            }
            Token::Symbol('(') => self.nested(offset, |parser| {
                let inner = parser.expr()?;
                parser.expect(')')?;
                Ok(inner)
            }),
            Token::Number(number) => Ok(SidecarResourceExpr::Number(number)),
            Token::Quantity(quantity) => Ok(SidecarResourceExpr::Quantity(quantity)),
            Token::Ident(name) if self.peek().1 == Token::Symbol('(') => {
                self.advance();
                self.nested(offset, |parser| parser.call(offset, name))
            }
            Token::Ident(name) => Ok(SidecarResourceExpr::Variable(name)),
            other => Err(syntax(offset, format!("unexpected {}", other.describe()))),
        }
    }

    /// The arguments of `name(` up to the closing parenthesis.
    fn call(&mut self, offset: usize, name: String) -> Result<SidecarResourceExpr, SidecarResourceExprError> {
        let mut args = vec![self.expr()?];
        while self.peek().1 == Token::Symbol(',') {
            self.advance();
            args.push(self.expr()?);
        }
        self.expect(')')?;
        let max = match name.as_str() {
            "max" => true,
            "min" => false,
            _ => {
                return Err(SidecarResourceExprError::BadCall(format!(
                    "unknown function: {name} (at offset {offset})"
                )));
            }
        };
        let count = args.len();
        let mut args = args.into_iter();
        match (args.next(), args.next(), args.next()) {
            (Some(left), Some(right), None) => {
                Ok(SidecarResourceExpr::Extreme { max, left: Box::new(left), right: Box::new(right) })
            }
            _ => Err(SidecarResourceExprError::BadCall(format!(
                "{name} function requires exactly 2 arguments, got {count}"
            ))),
        }
    }
}
