//! ImageListPullJob v1alpha1 <-> v1beta1.
//!
//! Upstream rules: both versions have the same fields, so metadata, spec and status are copied
//! unchanged in both directions. The conversion is one-to-one.

use super::{convert_lossless, impl_spec_status_parts};
use crate::apps::{v1alpha1, v1beta1};

impl_spec_status_parts!(v1alpha1::ImageListPullJob, v1beta1::ImageListPullJob);

/// Converts a v1alpha1 ImageListPullJob to v1beta1.
pub fn imagelistpulljob_to_v1beta1(alpha: &v1alpha1::ImageListPullJob) -> v1beta1::ImageListPullJob {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 ImageListPullJob to v1alpha1.
pub fn imagelistpulljob_to_v1alpha1(beta: &v1beta1::ImageListPullJob) -> v1alpha1::ImageListPullJob {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::ImageListPullJob) -> v1beta1::ImageListPullJob {
    v1beta1::ImageListPullJob {
        metadata: alpha.metadata.clone(),
        spec: alpha.spec.clone(),
        status: alpha.status.clone(),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::ImageListPullJob) -> v1alpha1::ImageListPullJob {
    v1alpha1::ImageListPullJob {
        metadata: beta.metadata.clone(),
        spec: beta.spec.clone(),
        status: beta.status.clone(),
    }
}
