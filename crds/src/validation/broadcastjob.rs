//! BroadcastJob validation (upstream `pkg/webhook/broadcastjob/validating`), for both served
//! versions (they share one schema).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{
    imagepulljob::{validate_completion_numbers, validate_never_completion},
    meta::{
        dns1123_label_problems, dns1123_subdomain_problems, validate_int_or_percent, validate_non_negative,
        validate_object_meta,
    },
    pod::validate_pod_template,
};
use crate::{
    apps::{
        v1alpha1,
        v1beta1::{self, CompletionPolicyType, FailurePolicyType},
    },
    field::{ErrorList, FieldError, FieldPath, quoted},
};

/// Pod label naming the BroadcastJob that owns the pod (set by the controller, so a template
/// may not preset it).
pub const BROADCASTJOB_NAME_LABEL: &str = "broadcastjob-name";
/// Pod label with the UID of the BroadcastJob that owns the pod (set by the controller).
pub const BROADCASTJOB_CONTROLLER_UID_LABEL: &str = "broadcastjob-controller-uid";

/// Validates a v1beta1 BroadcastJob. Every spec field may change on update, so `old` adds no
/// rule.
pub fn validate_broadcastjob_v1beta1(
    job: &v1beta1::BroadcastJob,
    _old: Option<&v1beta1::BroadcastJob>,
) -> ErrorList {
    let mut errors = validate_object_meta(&job.metadata, true);
    errors.extend(validate_job_name_is_label(&job.metadata));
    errors.extend(validate_broadcastjob_spec(&job.spec, &FieldPath::root("spec")));
    errors
}

/// Validates a v1alpha1 BroadcastJob (same schema as v1beta1).
pub fn validate_broadcastjob_v1alpha1(
    job: &v1alpha1::BroadcastJob,
    _old: Option<&v1alpha1::BroadcastJob>,
) -> ErrorList {
    let mut errors = validate_object_meta(&job.metadata, true);
    errors.extend(validate_job_name_is_label(&job.metadata));
    errors.extend(validate_broadcastjob_spec(&job.spec, &FieldPath::root("spec")));
    errors
}

/// Validates a BroadcastJob spec at `path`: the completion, failure and parallelism settings,
/// and a valid pod template whose restart policy is Never or OnFailure and that does not preset
/// the controller's own pod labels.
pub fn validate_broadcastjob_spec(spec: &v1beta1::BroadcastJobSpec, path: &FieldPath) -> ErrorList {
    let completion_path = path.child("completionPolicy");
    let completion = &spec.completion_policy;
    let mut errors = validate_completion_numbers(completion, &completion_path);
    match &completion.type_ {
        CompletionPolicyType::Always => {}
        CompletionPolicyType::Never => errors.extend(validate_never_completion(completion, &completion_path)),
        unset if unset.is_unset() => {}
        other => errors.push(FieldError::not_supported(
            &completion_path.child("type"),
            other.as_str(),
            CompletionPolicyType::KNOWN,
        )),
    }
    if let Some(parallelism) = &spec.parallelism {
        errors.extend(validate_int_or_percent(parallelism, &path.child("parallelism")));
    }
    let failure_path = path.child("failurePolicy");
    let failure = &spec.failure_policy;
    if !failure.type_.is_unset() && !failure.type_.is_known() {
        errors.push(FieldError::not_supported(
            &failure_path.child("type"),
            failure.type_.as_str(),
            FailurePolicyType::KNOWN,
        ));
    }
    errors.extend(validate_non_negative(failure.restart_limit.into(), &failure_path.child("restartLimit")));
    errors.extend(validate_job_pod_template(&spec.template, &path.child("template")));
    errors.extend(validate_no_controller_labels(&spec.template, &path.child("template")));
    errors
}

/// A pod template of something that runs to completion (BroadcastJob, Job): valid, with
/// restart policy Never or OnFailure.
pub(super) fn validate_job_pod_template(
    template: &k8s_openapi::api::core::v1::PodTemplateSpec,
    path: &FieldPath,
) -> ErrorList {
    let mut errors = validate_pod_template(template, path, &[]);
    if let Some(spec) = &template.spec {
        // Values outside Always/OnFailure/Never are already reported by the pod spec check.
        let policy = spec.restart_policy.as_deref();
        if matches!(policy, None | Some("Always")) {
            errors.push(FieldError::invalid(
                &path.child("spec").child("restartPolicy"),
                quoted(policy.unwrap_or_default()),
                "pod restartPolicy can only be Never or OnFailure",
            ));
        }
    }
    errors
}

fn validate_no_controller_labels(
    template: &k8s_openapi::api::core::v1::PodTemplateSpec,
    path: &FieldPath,
) -> ErrorList {
    let labels = template.metadata.as_ref().and_then(|meta| meta.labels.as_ref());
    let preset = labels.is_some_and(|labels| {
        [BROADCASTJOB_NAME_LABEL, BROADCASTJOB_CONTROLLER_UID_LABEL]
            .iter()
            .any(|key| labels.get(*key).is_some_and(|value| !value.is_empty()))
    });
    if preset {
        vec![FieldError::invalid(
            &path.child("metadata").child("labels"),
            format!("{:?}", labels.cloned().unwrap_or_default()),
            format!(
                "{BROADCASTJOB_NAME_LABEL:?} and {BROADCASTJOB_CONTROLLER_UID_LABEL:?} are set by the controller and \
                 may not be preset in the pod labels"
            ),
        )]
    } else {
        Vec::new()
    }
}

/// Job-like kinds (BroadcastJob, AdvancedCronJob) name their children after themselves, so
/// their own name must be a DNS-1123 label (no dots, at most 63 characters) on top of the
/// general object name rules. Reported only when the general rules pass, so a bad name gets one
/// error.
pub(super) fn validate_job_name_is_label(meta: &ObjectMeta) -> ErrorList {
    let path = FieldPath::root("metadata");
    let (field, value, candidate) = match (&meta.name, &meta.generate_name) {
        (Some(name), _) if !name.is_empty() => ("name", name, name.clone()),
        (_, Some(prefix)) if !prefix.is_empty() => ("generateName", prefix, format!("{prefix}a")),
        _ => return Vec::new(),
    };
    if !dns1123_subdomain_problems(&candidate).is_empty() {
        return Vec::new();
    }
    dns1123_label_problems(&candidate)
        .into_iter()
        .map(|problem| FieldError::invalid(&path.child(field), quoted(value), problem))
        .collect()
}
