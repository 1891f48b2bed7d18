//! BroadcastJob v1alpha1 <-> v1beta1.
//!
//! Upstream rules: both versions have the same fields, so metadata, spec and status are copied
//! unchanged in both directions. The conversion is one-to-one.

use super::{convert_lossless, impl_spec_status_parts};
use crate::apps::{v1alpha1, v1beta1};

impl_spec_status_parts!(v1alpha1::BroadcastJob, v1beta1::BroadcastJob);

/// Converts a v1alpha1 BroadcastJob to v1beta1.
pub fn broadcastjob_to_v1beta1(alpha: &v1alpha1::BroadcastJob) -> v1beta1::BroadcastJob {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 BroadcastJob to v1alpha1.
pub fn broadcastjob_to_v1alpha1(beta: &v1beta1::BroadcastJob) -> v1alpha1::BroadcastJob {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::BroadcastJob) -> v1beta1::BroadcastJob {
    v1beta1::BroadcastJob {
        metadata: alpha.metadata.clone(),
        spec: alpha.spec.clone(),
        status: alpha.status.clone(),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::BroadcastJob) -> v1alpha1::BroadcastJob {
    v1alpha1::BroadcastJob {
        metadata: beta.metadata.clone(),
        spec: beta.spec.clone(),
        status: beta.status.clone(),
    }
}
