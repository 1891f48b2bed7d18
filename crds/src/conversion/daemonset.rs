//! Advanced DaemonSet v1alpha1 <-> v1beta1.
//!
//! Upstream rules: the deprecated v1alpha1 rolling update type `Surging` becomes `Standard`
//! (maxSurge already says how far to surge); the v1alpha1 annotation
//! `daemonset.kruise.io/progressive-create-pod: "true"` is the v1beta1 field
//! `scaleStrategy.partitionedScaling: true`, and the annotation is written back for a v1beta1
//! object that sets it; v1alpha1 `status.daemonSetHash` is v1beta1 `status.updateRevision`.
//! Everything else is copied. The annotation is *moved*: it leaves the metadata when it becomes
//! the field, and any other value than `"true"` stays where it is.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{convert_lossless, impl_spec_status_parts, put_annotation, take_annotation};
use crate::apps::{
    v1alpha1::{self, PROGRESSIVE_CREATE_POD_ANNOTATION},
    v1beta1,
};

impl_spec_status_parts!(v1alpha1::DaemonSet, v1beta1::DaemonSet);

/// Converts a v1alpha1 Advanced DaemonSet to v1beta1 (losslessly, see the module docs of
/// `conversion`).
pub fn daemonset_to_v1beta1(alpha: &v1alpha1::DaemonSet) -> v1beta1::DaemonSet {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 Advanced DaemonSet to v1alpha1 (losslessly).
pub fn daemonset_to_v1alpha1(beta: &v1beta1::DaemonSet) -> v1alpha1::DaemonSet {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::DaemonSet) -> v1beta1::DaemonSet {
    let mut metadata = alpha.metadata.clone();
    let spec = &alpha.spec;

    let scale_strategy = take_progressive_annotation(&mut metadata)
        .then_some(v1beta1::DaemonSetScaleStrategy { partitioned_scaling: true });

    let rolling_update = spec.update_strategy.rolling_update.as_ref().map(|rolling| {
        let type_ = match &rolling.type_ {
            v1alpha1::DaemonSetRollingUpdateType::Surging => v1beta1::DaemonSetRollingUpdateType::Standard,
            other => other.as_str().into(),
        };
        v1beta1::RollingUpdateDaemonSet {
            type_,
            max_unavailable: rolling.max_unavailable.clone(),
            max_surge: rolling.max_surge.clone(),
            selector: rolling.selector.clone(),
            partition: rolling.partition.clone(),
            paused: rolling.paused,
        }
    });

    v1beta1::DaemonSet {
        metadata,
        spec: v1beta1::DaemonSetSpec {
            selector: spec.selector.clone(),
            template: spec.template.clone(),
            update_strategy: v1beta1::DaemonSetUpdateStrategy {
                type_: spec.update_strategy.type_.clone(),
                rolling_update,
            },
            min_ready_seconds: spec.min_ready_seconds,
            burst_replicas: spec.burst_replicas.clone(),
            revision_history_limit: spec.revision_history_limit,
            lifecycle: spec.lifecycle.clone(),
            scale_strategy,
        },
        status: alpha.status.as_ref().map(|status| v1beta1::DaemonSetStatus {
            current_number_scheduled: status.current_number_scheduled,
            number_misscheduled: status.number_misscheduled,
            desired_number_scheduled: status.desired_number_scheduled,
            number_ready: status.number_ready,
            observed_generation: status.observed_generation,
            updated_number_scheduled: status.updated_number_scheduled,
            number_available: status.number_available,
            number_unavailable: status.number_unavailable,
            collision_count: status.collision_count,
            conditions: status.conditions.clone(),
            update_revision: status.daemon_set_hash.clone(),
        }),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::DaemonSet) -> v1alpha1::DaemonSet {
    let mut metadata = beta.metadata.clone();
    let spec = &beta.spec;

    if spec.scale_strategy.as_ref().is_some_and(|scale| scale.partitioned_scaling) {
        put_annotation(&mut metadata, PROGRESSIVE_CREATE_POD_ANNOTATION, "true".into());
    }

    let rolling_update =
        spec.update_strategy.rolling_update.as_ref().map(|rolling| v1alpha1::RollingUpdateDaemonSet {
            type_: rolling.type_.as_str().into(),
            max_unavailable: rolling.max_unavailable.clone(),
            max_surge: rolling.max_surge.clone(),
            selector: rolling.selector.clone(),
            partition: rolling.partition.clone(),
            paused: rolling.paused,
        });

    v1alpha1::DaemonSet {
        metadata,
        spec: v1alpha1::DaemonSetSpec {
            selector: spec.selector.clone(),
            template: spec.template.clone(),
            update_strategy: v1alpha1::DaemonSetUpdateStrategy {
                type_: spec.update_strategy.type_.clone(),
                rolling_update,
            },
            min_ready_seconds: spec.min_ready_seconds,
            burst_replicas: spec.burst_replicas.clone(),
            revision_history_limit: spec.revision_history_limit,
            lifecycle: spec.lifecycle.clone(),
        },
        status: beta.status.as_ref().map(|status| v1alpha1::DaemonSetStatus {
            current_number_scheduled: status.current_number_scheduled,
            number_misscheduled: status.number_misscheduled,
            desired_number_scheduled: status.desired_number_scheduled,
            number_ready: status.number_ready,
            observed_generation: status.observed_generation,
            updated_number_scheduled: status.updated_number_scheduled,
            number_available: status.number_available,
            number_unavailable: status.number_unavailable,
            collision_count: status.collision_count,
            conditions: status.conditions.clone(),
            daemon_set_hash: status.update_revision.clone(),
        }),
    }
}

/// Removes the progressive-create annotation when it says `"true"` and reports whether it did;
/// other values are left in place.
fn take_progressive_annotation(metadata: &mut ObjectMeta) -> bool {
    let is_true = metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(PROGRESSIVE_CREATE_POD_ANNOTATION))
        .is_some_and(|value| value == "true");
    if is_true {
        take_annotation(metadata, PROGRESSIVE_CREATE_POD_ANNOTATION);
    }
    is_true
}
