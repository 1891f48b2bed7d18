//! NodeImage v1alpha1 <-> v1beta1.
//!
//! Upstream rules: everything is copied as is, except the v1beta1-only `mode` of each pull
//! secret reference, which v1alpha1 does not have (it becomes empty, the default, on the way
//! up, and is dropped on the way down; the lossless wrapper keeps it in the stash).

use std::collections::BTreeMap;

use super::{convert_lossless, impl_spec_status_parts};
use crate::apps::{v1alpha1, v1beta1};

impl_spec_status_parts!(v1alpha1::NodeImage, v1beta1::NodeImage);

/// Converts a v1alpha1 NodeImage to v1beta1.
pub fn nodeimage_to_v1beta1(alpha: &v1alpha1::NodeImage) -> v1beta1::NodeImage {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 NodeImage to v1alpha1.
pub fn nodeimage_to_v1alpha1(beta: &v1beta1::NodeImage) -> v1alpha1::NodeImage {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::NodeImage) -> v1beta1::NodeImage {
    let images: BTreeMap<String, v1beta1::ImageSpec> = alpha
        .spec
        .images
        .iter()
        .map(|(name, image)| {
            let spec = v1beta1::ImageSpec {
                pull_secrets: image
                    .pull_secrets
                    .iter()
                    .map(|secret| v1beta1::ReferenceObject {
                        namespace: secret.namespace.clone(),
                        name: secret.name.clone(),
                        mode: String::new(),
                    })
                    .collect(),
                tags: image.tags.clone(),
                sandbox_config: image.sandbox_config.clone(),
            };
            (name.clone(), spec)
        })
        .collect();
    v1beta1::NodeImage {
        metadata: alpha.metadata.clone(),
        spec: v1beta1::NodeImageSpec { images },
        status: alpha.status.clone(),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::NodeImage) -> v1alpha1::NodeImage {
    let images: BTreeMap<String, v1alpha1::ImageSpec> = beta
        .spec
        .images
        .iter()
        .map(|(name, image)| {
            let spec = v1alpha1::ImageSpec {
                pull_secrets: image
                    .pull_secrets
                    .iter()
                    .map(|secret| v1alpha1::ReferenceObject {
                        namespace: secret.namespace.clone(),
                        name: secret.name.clone(),
                    })
                    .collect(),
                tags: image.tags.clone(),
                sandbox_config: image.sandbox_config.clone(),
            };
            (name.clone(), spec)
        })
        .collect();
    v1alpha1::NodeImage {
        metadata: beta.metadata.clone(),
        spec: v1alpha1::NodeImageSpec { images },
        status: beta.status.clone(),
    }
}
