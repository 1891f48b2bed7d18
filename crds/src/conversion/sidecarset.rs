//! SidecarSet v1alpha1 <-> v1beta1.
//!
//! Upstream rules: a non-empty v1alpha1 `spec.namespace` becomes the v1beta1
//! `namespaceSelector` `{matchLabels: {kubernetes.io/metadata.name: <namespace>}}` and wins over
//! a v1alpha1 `namespaceSelector`, which is otherwise copied; on the way back the selector is
//! copied as it is and `namespace` stays empty. The v1alpha1 label
//! `apps.kruise.io/sidecarset-custom-version` is the v1beta1 field `spec.customVersion`: it is
//! *moved* into the field (an empty label value, which the field cannot tell from "unset",
//! stays a label) and written back as the label. Containers, strategies, resource policies and
//! status are the same in both versions and copied.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::{convert_lossless, impl_spec_status_parts, put_label, take_label};
use crate::apps::{
    v1alpha1::{self, NAMESPACE_NAME_LABEL},
    v1beta1::{self, SIDECARSET_CUSTOM_VERSION_LABEL},
};

impl_spec_status_parts!(v1alpha1::SidecarSet, v1beta1::SidecarSet);

/// Converts a v1alpha1 SidecarSet to v1beta1 (losslessly, see the module docs of `conversion`).
pub fn sidecarset_to_v1beta1(alpha: &v1alpha1::SidecarSet) -> v1beta1::SidecarSet {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 SidecarSet to v1alpha1 (losslessly).
pub fn sidecarset_to_v1alpha1(beta: &v1beta1::SidecarSet) -> v1alpha1::SidecarSet {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::SidecarSet) -> v1beta1::SidecarSet {
    let mut metadata = alpha.metadata.clone();
    let spec = &alpha.spec;

    let has_custom_version = metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(SIDECARSET_CUSTOM_VERSION_LABEL))
        .is_some_and(|value| !value.is_empty());
    let custom_version = if has_custom_version {
        take_label(&mut metadata, SIDECARSET_CUSTOM_VERSION_LABEL).unwrap_or_default()
    } else {
        String::new()
    };

    let namespace_selector = if spec.namespace.is_empty() {
        spec.namespace_selector.clone()
    } else {
        Some(LabelSelector {
            match_labels: Some(BTreeMap::from([(NAMESPACE_NAME_LABEL.to_string(), spec.namespace.clone())])),
            ..Default::default()
        })
    };

    v1beta1::SidecarSet {
        metadata,
        spec: v1beta1::SidecarSetSpec {
            selector: spec.selector.clone(),
            namespace_selector,
            init_containers: spec.init_containers.clone(),
            containers: spec.containers.clone(),
            volumes: spec.volumes.clone(),
            update_strategy: spec.update_strategy.clone(),
            injection_strategy: spec.injection_strategy.clone(),
            image_pull_secrets: spec.image_pull_secrets.clone(),
            revision_history_limit: spec.revision_history_limit,
            patch_pod_metadata: spec.patch_pod_metadata.clone(),
            custom_version,
        },
        status: alpha.status.clone(),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::SidecarSet) -> v1alpha1::SidecarSet {
    let mut metadata = beta.metadata.clone();
    let spec = &beta.spec;
    if !spec.custom_version.is_empty() {
        put_label(&mut metadata, SIDECARSET_CUSTOM_VERSION_LABEL, spec.custom_version.clone());
    }

    v1alpha1::SidecarSet {
        metadata,
        spec: v1alpha1::SidecarSetSpec {
            selector: spec.selector.clone(),
            namespace: String::new(),
            namespace_selector: spec.namespace_selector.clone(),
            init_containers: spec.init_containers.clone(),
            containers: spec.containers.clone(),
            volumes: spec.volumes.clone(),
            update_strategy: spec.update_strategy.clone(),
            injection_strategy: spec.injection_strategy.clone(),
            image_pull_secrets: spec.image_pull_secrets.clone(),
            revision_history_limit: spec.revision_history_limit,
            patch_pod_metadata: spec.patch_pod_metadata.clone(),
        },
        status: beta.status.clone(),
    }
}
