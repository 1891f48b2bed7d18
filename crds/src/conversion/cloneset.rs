//! CloneSet v1alpha1 <-> v1beta1.
//!
//! Upstream rules: v1alpha1 `type: ReCreate|InPlaceIfPossible|InPlaceOnly` becomes v1beta1
//! `type: RollingUpdate` with that `podUpdatePolicy`; `OnDelete` stays `OnDelete`;
//! `disablePVCReuse` is the negation of `enablePVCReuse`; the v1alpha1 label
//! `apps.kruise.io/cloneset-scaling-exclude-preparing-delete=true` is the v1beta1 field
//! `scaleStrategy.excludePreparingDelete`; the v1alpha1 image pre-download annotations are the
//! v1beta1 `inPlaceUpdateStrategy.imagePreDownload*` fields. Labels and annotations are *moved*
//! (removed from one place when written to the other) so that each version shows one truth.

use k8s_openapi::apimachinery::pkg::{apis::meta::v1::ObjectMeta, util::intstr::IntOrString};

use super::{
    convert_lossless, impl_spec_status_parts, put_annotation, put_label, take_annotation, take_label,
};
use crate::{
    apps::{v1alpha1, v1beta1},
    common::{
        InPlaceUpdateStrategy,
        well_known::{
            CLONESET_SCALING_EXCLUDE_PREPARING_DELETE, IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS,
            IMAGE_PRE_DOWNLOAD_PARALLELISM, IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS,
        },
    },
};

impl_spec_status_parts!(v1alpha1::CloneSet, v1beta1::CloneSet);

/// Converts a v1alpha1 CloneSet to v1beta1 (losslessly, see the module docs of `conversion`).
pub fn cloneset_to_v1beta1(alpha: &v1alpha1::CloneSet) -> v1beta1::CloneSet {
    convert_lossless(alpha, "v1alpha1", "v1beta1", natural_to_v1beta1, natural_to_v1alpha1)
}

/// Converts a v1beta1 CloneSet to v1alpha1 (losslessly).
pub fn cloneset_to_v1alpha1(beta: &v1beta1::CloneSet) -> v1alpha1::CloneSet {
    convert_lossless(beta, "v1beta1", "v1alpha1", natural_to_v1alpha1, natural_to_v1beta1)
}

fn natural_to_v1beta1(alpha: &v1alpha1::CloneSet) -> v1beta1::CloneSet {
    let mut metadata = alpha.metadata.clone();
    let spec = &alpha.spec;

    let exclude_preparing_delete = match metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(CLONESET_SCALING_EXCLUDE_PREPARING_DELETE))
    {
        Some(value) if value == "true" => {
            take_label(&mut metadata, CLONESET_SCALING_EXCLUDE_PREPARING_DELETE);
            true
        }
        _ => false,
    };

    let strategy = &spec.update_strategy;
    let (type_, pod_update_policy) = match &strategy.type_ {
        v1alpha1::CloneSetUpdateStrategyType::OnDelete => {
            (v1beta1::CloneSetUpdateStrategyType::OnDelete, v1beta1::PodUpdatePolicy::default())
        }
        v1alpha1::CloneSetUpdateStrategyType::InPlaceIfPossible => {
            (v1beta1::CloneSetUpdateStrategyType::RollingUpdate, v1beta1::PodUpdatePolicy::InPlaceIfPossible)
        }
        v1alpha1::CloneSetUpdateStrategyType::InPlaceOnly => {
            (v1beta1::CloneSetUpdateStrategyType::RollingUpdate, v1beta1::PodUpdatePolicy::InPlaceOnly)
        }
        // ReCreate, unset and unknown values all mean ReCreate upstream.
        _ => (v1beta1::CloneSetUpdateStrategyType::RollingUpdate, v1beta1::PodUpdatePolicy::ReCreate),
    };
    let rolling_update = (type_ != v1beta1::CloneSetUpdateStrategyType::OnDelete).then(|| {
        v1beta1::RollingUpdateCloneSetStrategy {
            partition: strategy.partition.clone(),
            max_unavailable: strategy.max_unavailable.clone(),
            max_surge: strategy.max_surge.clone(),
            pod_update_policy,
            paused: strategy.paused,
            priority_strategy: strategy.priority_strategy.clone(),
            scatter_strategy: strategy.scatter_strategy.clone(),
            in_place_update_strategy: in_place_strategy_to_v1beta1(
                strategy.in_place_update_strategy.as_ref(),
                &mut metadata,
            ),
        }
    });

    v1beta1::CloneSet {
        metadata,
        spec: v1beta1::CloneSetSpec {
            replicas: spec.replicas,
            selector: spec.selector.clone(),
            template: spec.template.clone(),
            volume_claim_templates: spec.volume_claim_templates.clone(),
            scale_strategy: v1beta1::CloneSetScaleStrategy {
                pods_to_delete: spec.scale_strategy.pods_to_delete.clone(),
                max_unavailable: spec.scale_strategy.max_unavailable.clone(),
                enable_pvc_reuse: !spec.scale_strategy.disable_pvc_reuse,
                exclude_preparing_delete,
            },
            update_strategy: v1beta1::CloneSetUpdateStrategy { type_, rolling_update },
            revision_history_limit: spec.revision_history_limit,
            min_ready_seconds: spec.min_ready_seconds,
            lifecycle: spec.lifecycle.clone(),
            progress_deadline_seconds: spec.progress_deadline_seconds,
        },
        status: alpha.status.clone(),
    }
}

fn natural_to_v1alpha1(beta: &v1beta1::CloneSet) -> v1alpha1::CloneSet {
    let mut metadata = beta.metadata.clone();
    let spec = &beta.spec;
    if spec.scale_strategy.exclude_preparing_delete {
        put_label(&mut metadata, CLONESET_SCALING_EXCLUDE_PREPARING_DELETE, "true".into());
    }

    let rolling = spec.update_strategy.rolling_update.as_ref();
    let type_ = if spec.update_strategy.type_ == v1beta1::CloneSetUpdateStrategyType::OnDelete {
        v1alpha1::CloneSetUpdateStrategyType::OnDelete
    } else {
        match rolling.map(|r| &r.pod_update_policy) {
            Some(v1beta1::PodUpdatePolicy::InPlaceIfPossible) => {
                v1alpha1::CloneSetUpdateStrategyType::InPlaceIfPossible
            }
            Some(v1beta1::PodUpdatePolicy::InPlaceOnly) => v1alpha1::CloneSetUpdateStrategyType::InPlaceOnly,
            _ => v1alpha1::CloneSetUpdateStrategyType::ReCreate,
        }
    };
    let mut update_strategy = v1alpha1::CloneSetUpdateStrategy { type_, ..Default::default() };
    if let Some(rolling) = rolling {
        update_strategy.partition = rolling.partition.clone();
        update_strategy.max_unavailable = rolling.max_unavailable.clone();
        update_strategy.max_surge = rolling.max_surge.clone();
        update_strategy.paused = rolling.paused;
        update_strategy.priority_strategy = rolling.priority_strategy.clone();
        update_strategy.scatter_strategy = rolling.scatter_strategy.clone();
        update_strategy.in_place_update_strategy =
            in_place_strategy_to_v1alpha1(rolling.in_place_update_strategy.as_ref(), &mut metadata);
    }

    v1alpha1::CloneSet {
        metadata,
        spec: v1alpha1::CloneSetSpec {
            replicas: spec.replicas,
            selector: spec.selector.clone(),
            template: spec.template.clone(),
            volume_claim_templates: spec.volume_claim_templates.clone(),
            scale_strategy: v1alpha1::CloneSetScaleStrategy {
                pods_to_delete: spec.scale_strategy.pods_to_delete.clone(),
                max_unavailable: spec.scale_strategy.max_unavailable.clone(),
                disable_pvc_reuse: !spec.scale_strategy.enable_pvc_reuse,
            },
            update_strategy,
            revision_history_limit: spec.revision_history_limit,
            min_ready_seconds: spec.min_ready_seconds,
            lifecycle: spec.lifecycle.clone(),
            progress_deadline_seconds: spec.progress_deadline_seconds,
        },
        status: beta.status.clone(),
    }
}

/// v1alpha1 keeps only the grace period in the struct; the pre-download knobs live in
/// annotations, which move into the v1beta1 fields when they parse (annotations win over the
/// struct's own pre-download fields, which v1alpha1 clients do not set).
fn in_place_strategy_to_v1beta1(
    alpha: Option<&InPlaceUpdateStrategy>,
    metadata: &mut ObjectMeta,
) -> Option<InPlaceUpdateStrategy> {
    let parallelism = take_parsed(metadata, IMAGE_PRE_DOWNLOAD_PARALLELISM, |text| {
        Some(match text.parse::<i32>() {
            Ok(number) => IntOrString::Int(number),
            Err(_) => IntOrString::String(text.to_string()),
        })
    });
    let timeout = take_parsed(metadata, IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS, |text| text.parse().ok());
    let min_ready =
        take_parsed(metadata, IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS, |text| text.parse().ok());
    if alpha.is_none() && parallelism.is_none() && timeout.is_none() && min_ready.is_none() {
        return None;
    }
    let mut strategy = alpha.cloned().unwrap_or_default();
    if parallelism.is_some() {
        strategy.image_pre_download_parallelism = parallelism;
    }
    if timeout.is_some() {
        strategy.image_pre_download_timeout_seconds = timeout;
    }
    if min_ready.is_some() {
        strategy.image_pre_download_min_updated_ready_pods = min_ready;
    }
    Some(strategy)
}

fn in_place_strategy_to_v1alpha1(
    beta: Option<&InPlaceUpdateStrategy>,
    metadata: &mut ObjectMeta,
) -> Option<InPlaceUpdateStrategy> {
    let beta = beta?;
    if let Some(parallelism) = &beta.image_pre_download_parallelism {
        let text = match parallelism {
            IntOrString::Int(number) => number.to_string(),
            IntOrString::String(text) => text.clone(),
        };
        put_annotation(metadata, IMAGE_PRE_DOWNLOAD_PARALLELISM, text);
    }
    if let Some(timeout) = beta.image_pre_download_timeout_seconds {
        put_annotation(metadata, IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS, timeout.to_string());
    }
    if let Some(min_ready) = beta.image_pre_download_min_updated_ready_pods {
        put_annotation(metadata, IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS, min_ready.to_string());
    }
    // v1alpha1 only keeps the grace period in the struct; an empty struct is left out.
    (beta.grace_period_seconds != 0).then(|| InPlaceUpdateStrategy {
        grace_period_seconds: beta.grace_period_seconds,
        ..Default::default()
    })
}

/// Removes the annotation and returns its parsed value, leaving it in place when it does not
/// parse (so nothing the user wrote is lost).
fn take_parsed<T>(metadata: &mut ObjectMeta, key: &str, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
    let text = metadata.annotations.as_ref()?.get(key)?;
    if text.is_empty() {
        return None;
    }
    let value = parse(text)?;
    take_annotation(metadata, key);
    Some(value)
}
