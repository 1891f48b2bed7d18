//! BroadcastJob defaults (upstream `SetDefaultsBroadcastJob`).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::pod::default_pod_spec;
use crate::apps::{
    v1alpha1,
    v1beta1::{self, CompletionPolicyType, FailurePolicyType},
};

/// Fills in v1beta1 BroadcastJob defaults: completion policy Always, unlimited parallelism
/// (`i32::MAX`), failure policy FailFast; with `inject_template_defaults` (create, or an update
/// that changed the template) also the pod template defaults.
pub fn default_broadcastjob_v1beta1(job: &mut v1beta1::BroadcastJob, inject_template_defaults: bool) {
    default_broadcastjob_spec(&mut job.spec, inject_template_defaults);
}

/// Fills in v1alpha1 BroadcastJob defaults (the same as v1beta1).
pub fn default_broadcastjob_v1alpha1(job: &mut v1alpha1::BroadcastJob, inject_template_defaults: bool) {
    default_broadcastjob_spec(&mut job.spec, inject_template_defaults);
}

/// Fills in the defaults of a BroadcastJob spec (also used for AdvancedCronJob templates' pod
/// templates through `inject_template_defaults`).
pub fn default_broadcastjob_spec(spec: &mut v1beta1::BroadcastJobSpec, inject_template_defaults: bool) {
    if inject_template_defaults {
        default_pod_spec(spec.template.spec.get_or_insert_with(Default::default));
    }
    if spec.completion_policy.type_.is_unset() {
        spec.completion_policy.type_ = CompletionPolicyType::Always;
    }
    spec.parallelism.get_or_insert(IntOrString::Int(i32::MAX));
    if spec.failure_policy.type_.is_unset() {
        spec.failure_policy.type_ = FailurePolicyType::FailFast;
    }
}
