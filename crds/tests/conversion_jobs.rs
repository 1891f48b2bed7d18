//! v1alpha1 <-> v1beta1 conversion of the job and node kinds (BroadcastJob, AdvancedCronJob,
//! ImagePullJob, ImageListPullJob, NodeImage, ContainerRecreateRequest): round trips of fully
//! populated objects, the upstream conversion cases (SCENARIOS.md section 5) as our own tests,
//! and serde round trips of every root type, including the v1alpha1-only EphemeralJob,
//! PodProbeMarker and NodePodProbe.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod support;

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{
        batch::v1::{JobSpec, JobTemplateSpec},
        core::v1::{ObjectReference, PodTemplateSpec},
    },
    apimachinery::pkg::{
        apis::meta::v1::{Condition, ObjectMeta, Time},
        util::intstr::IntOrString,
    },
    jiff::Timestamp,
};
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    conversion::*,
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::json;
use support::populate::populated;

const SYNC_KEY: &str = "crr.apps.kruise.io/sync-container-statuses";
const UNREADY_KEY: &str = "crr.apps.kruise.io/unready-acquired";

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn time(text: &str) -> Time {
    Time(text.parse::<Timestamp>().expect("valid timestamp"))
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta { name: Some(name.into()), namespace: Some("default".into()), ..Default::default() }
}

fn stash_keys(meta: &ObjectMeta) -> Vec<&String> {
    meta.annotations
        .iter()
        .flatten()
        .map(|(key, _)| key)
        .filter(|key| key.starts_with(STASH_ANNOTATION_PREFIX))
        .collect()
}

fn assert_serde_round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(object: T) {
    let value = serde_json::to_value(&object).expect("serializes");
    let back: T = serde_json::from_value(value.clone()).expect("deserializes");
    assert_eq!(back, object, "serde round trip of {value}");
}

// ---------------------------------------------------------------------------------------------
// BroadcastJob

fn broadcastjob_overrides() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("spec.completionPolicy.type", json!("Always")),
        ("spec.failurePolicy.type", json!("Continue")),
        ("status.phase", json!("running")),
        ("status.conditions[].type", json!("Complete")),
        ("status.conditions[].status", json!("True")),
    ]
}

fn broadcastjob_spec() -> v1beta1::BroadcastJobSpec {
    v1beta1::BroadcastJobSpec {
        parallelism: Some(IntOrString::Int(3)),
        template: PodTemplateSpec::default(),
        completion_policy: v1beta1::CompletionPolicy {
            type_: v1beta1::CompletionPolicyType::Always,
            active_deadline_seconds: Some(600),
            ttl_seconds_after_finished: Some(300),
        },
        paused: true,
        failure_policy: v1beta1::FailurePolicy {
            type_: v1beta1::FailurePolicyType::FailFast,
            restart_limit: 2,
        },
    }
}

fn broadcastjob_status(conditions: Vec<v1beta1::JobCondition>) -> v1beta1::BroadcastJobStatus {
    v1beta1::BroadcastJobStatus {
        conditions,
        start_time: Some(time("2024-06-01T10:00:00Z")),
        completion_time: Some(time("2024-06-01T11:00:00Z")),
        active: 1,
        succeeded: 2,
        failed: 3,
        desired: 6,
        phase: v1beta1::BroadcastJobPhase::Completed,
    }
}

#[test]
fn broadcastjob_round_trips_fully_populated() {
    let alpha: v1alpha1::BroadcastJob = populated(&broadcastjob_overrides());
    let beta: v1beta1::BroadcastJob = populated(&broadcastjob_overrides());
    assert_round_trips!(alpha, beta, broadcastjob_to_v1beta1, broadcastjob_to_v1alpha1, natural = true);
}

#[test]
fn broadcastjob_convert_to_with_all_fields_populated() {
    let condition = v1beta1::JobCondition {
        type_: v1beta1::JobConditionType::Complete,
        status: "True".into(),
        last_probe_time: Some(time("2024-06-01T11:00:00Z")),
        last_transition_time: Some(time("2024-06-01T11:00:00Z")),
        reason: "Done".into(),
        message: "all pods succeeded".into(),
    };
    let alpha = v1alpha1::BroadcastJob {
        metadata: meta("bcj"),
        spec: broadcastjob_spec(),
        status: Some(broadcastjob_status(vec![condition])),
    };
    let beta = broadcastjob_to_v1beta1(&alpha);
    assert_eq!(beta.metadata, alpha.metadata);
    assert_eq!(beta.spec, alpha.spec);
    assert_eq!(beta.status, alpha.status);
}

#[test]
fn broadcastjob_convert_to_with_minimal_fields() {
    let alpha = v1alpha1::BroadcastJob::new("bcj", Default::default());
    let beta = broadcastjob_to_v1beta1(&alpha);
    assert_eq!(beta, v1beta1::BroadcastJob::new("bcj", Default::default()));
}

#[test]
fn broadcastjob_convert_to_with_nil_conditions() {
    let alpha = v1alpha1::BroadcastJob {
        metadata: meta("bcj"),
        spec: broadcastjob_spec(),
        status: Some(broadcastjob_status(Vec::new())),
    };
    let beta = broadcastjob_to_v1beta1(&alpha);
    let status = beta.status.expect("status");
    assert!(status.conditions.is_empty());
    assert_eq!(status.desired, 6);
    let written = serde_json::to_value(&status).expect("serializes");
    assert!(written.get("conditions").is_none(), "no conditions key: {written}");
}

#[test]
fn broadcastjob_convert_from_v1beta1_with_all_fields_populated() {
    let beta = v1beta1::BroadcastJob {
        metadata: meta("bcj"),
        spec: broadcastjob_spec(),
        status: Some(broadcastjob_status(vec![v1beta1::JobCondition {
            type_: v1beta1::JobConditionType::Failed,
            status: "True".into(),
            ..Default::default()
        }])),
    };
    let alpha = broadcastjob_to_v1alpha1(&beta);
    assert_eq!((&alpha.metadata, &alpha.spec, &alpha.status), (&beta.metadata, &beta.spec, &beta.status));
}

#[test]
fn broadcastjob_convert_from_v1beta1_with_minimal_fields() {
    let beta = v1beta1::BroadcastJob::new("bcj", Default::default());
    assert_eq!(broadcastjob_to_v1alpha1(&beta), v1alpha1::BroadcastJob::new("bcj", Default::default()));
}

#[test]
fn broadcastjob_survives_serde() {
    assert_serde_round_trip(populated::<v1alpha1::BroadcastJob>(&broadcastjob_overrides()));
    assert_serde_round_trip(populated::<v1beta1::BroadcastJob>(&broadcastjob_overrides()));
}

#[test]
fn broadcastjob_status_counts_and_phase_are_always_written() {
    let job = v1beta1::BroadcastJob { status: Some(Default::default()), ..Default::default() };
    let written = serde_json::to_value(&job).expect("serializes");
    assert_eq!(
        written["status"],
        json!({"active": 0, "succeeded": 0, "failed": 0, "desired": 0, "phase": ""}),
        "Go writes these fields without omitempty"
    );
    assert_eq!(written["spec"]["completionPolicy"], json!({}));
    assert_eq!(written["spec"]["failurePolicy"], json!({}));
}

// ---------------------------------------------------------------------------------------------
// AdvancedCronJob

fn advancedcronjob_overrides() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("spec.template.broadcastJobTemplate.spec.completionPolicy.type", json!("Always")),
        ("spec.template.broadcastJobTemplate.spec.failurePolicy.type", json!("FailFast")),
        ("spec.template.imageListPullJobTemplate.spec.completionPolicy.type", json!("Always")),
        ("spec.template.imageListPullJobTemplate.spec.imagePullPolicy", json!("IfNotPresent")),
        ("status.type", json!("BroadcastJob")),
    ]
}

fn job_template() -> JobTemplateSpec {
    JobTemplateSpec {
        metadata: Some(ObjectMeta { labels: Some(map(&[("run", "nightly")])), ..Default::default() }),
        spec: Some(JobSpec { backoff_limit: Some(2), ..Default::default() }),
    }
}

fn acj_status() -> v1beta1::AdvancedCronJobStatus {
    v1beta1::AdvancedCronJobStatus {
        type_: v1beta1::TemplateKind::BroadcastJob,
        active: vec![ObjectReference {
            kind: Some("BroadcastJob".into()),
            name: Some("nightly-1717236000".into()),
            namespace: Some("default".into()),
            ..Default::default()
        }],
        last_schedule_time: Some(time("2024-06-01T10:00:00Z")),
    }
}

#[test]
fn advancedcronjob_round_trips_fully_populated() {
    let alpha: v1alpha1::AdvancedCronJob = populated(&advancedcronjob_overrides());
    let mut beta_overrides = advancedcronjob_overrides();
    beta_overrides.push(("spec.template.imageListPullJobTemplate", serde_json::Value::Null));
    let beta: v1beta1::AdvancedCronJob = populated(&beta_overrides);
    assert_round_trips!(alpha, beta, advancedcronjob_to_v1beta1, advancedcronjob_to_v1alpha1, natural = true);
}

#[test]
fn advancedcronjob_image_list_pull_job_template_survives_a_round_trip_through_v1alpha1() {
    let alpha: v1alpha1::AdvancedCronJob = populated(&advancedcronjob_overrides());
    let mut beta: v1beta1::AdvancedCronJob = populated(&advancedcronjob_overrides());
    beta.status.as_mut().expect("status").type_ = v1beta1::TemplateKind::ImageListPullJob;
    assert!(beta.spec.template.image_list_pull_job_template.is_some());
    assert_round_trips!(
        alpha,
        beta,
        advancedcronjob_to_v1beta1,
        advancedcronjob_to_v1alpha1,
        natural = false
    );
}

#[test]
fn advancedcronjob_convert_to_with_all_fields_populated() {
    let alpha = v1alpha1::AdvancedCronJob {
        metadata: meta("acj"),
        spec: v1alpha1::AdvancedCronJobSpec {
            schedule: "*/5 * * * *".into(),
            time_zone: Some("Asia/Shanghai".into()),
            starting_deadline_seconds: Some(30),
            concurrency_policy: v1alpha1::ConcurrencyPolicy::Forbid,
            paused: Some(false),
            successful_jobs_history_limit: Some(5),
            failed_jobs_history_limit: Some(2),
            template: v1alpha1::CronJobTemplate {
                job_template: Some(job_template()),
                broadcast_job_template: Some(v1alpha1::BroadcastJobTemplateSpec {
                    metadata: ObjectMeta { labels: Some(map(&[("tpl", "bcj")])), ..Default::default() },
                    spec: broadcastjob_spec(),
                }),
            },
        },
        status: Some(acj_status()),
    };
    let beta = advancedcronjob_to_v1beta1(&alpha);
    assert_eq!(beta.metadata, alpha.metadata, "no stash needed");
    let spec = &beta.spec;
    assert_eq!(spec.schedule, "*/5 * * * *");
    assert_eq!(spec.time_zone.as_deref(), Some("Asia/Shanghai"));
    assert_eq!(spec.starting_deadline_seconds, Some(30));
    assert_eq!(spec.concurrency_policy, v1beta1::ConcurrencyPolicy::Forbid);
    assert_eq!(spec.paused, Some(false));
    assert_eq!((spec.successful_jobs_history_limit, spec.failed_jobs_history_limit), (Some(5), Some(2)));
    assert_eq!(spec.template.job_template, Some(job_template()));
    assert_eq!(spec.template.broadcast_job_template, alpha.spec.template.broadcast_job_template);
    assert_eq!(spec.template.image_list_pull_job_template, None);
    assert_eq!(beta.status, Some(acj_status()));
}

#[test]
fn advancedcronjob_convert_to_with_minimal_fields() {
    let alpha = v1alpha1::AdvancedCronJob::new(
        "acj",
        v1alpha1::AdvancedCronJobSpec {
            schedule: "@hourly".into(),
            template: v1alpha1::CronJobTemplate { job_template: Some(job_template()), ..Default::default() },
            ..Default::default()
        },
    );
    let beta = advancedcronjob_to_v1beta1(&alpha);
    assert_eq!(beta.metadata, alpha.metadata);
    assert_eq!(beta.spec.schedule, "@hourly");
    assert_eq!(beta.spec.template.job_template, Some(job_template()));
    assert_eq!(beta.spec.template.broadcast_job_template, None);
    assert_eq!(beta.spec.concurrency_policy, v1beta1::ConcurrencyPolicy::default(), "no defaulting here");
    assert_eq!(beta.status, None);
}

#[test]
fn advancedcronjob_convert_from_v1beta1_with_all_fields_populated() {
    let beta = v1beta1::AdvancedCronJob {
        metadata: meta("acj"),
        spec: v1beta1::AdvancedCronJobSpec {
            schedule: "0 3 * * *".into(),
            time_zone: Some("UTC".into()),
            starting_deadline_seconds: Some(60),
            concurrency_policy: v1beta1::ConcurrencyPolicy::Replace,
            paused: Some(true),
            successful_jobs_history_limit: Some(1),
            failed_jobs_history_limit: Some(1),
            template: v1beta1::CronJobTemplate {
                broadcast_job_template: Some(v1beta1::BroadcastJobTemplateSpec {
                    metadata: ObjectMeta::default(),
                    spec: broadcastjob_spec(),
                }),
                ..Default::default()
            },
        },
        status: Some(acj_status()),
    };
    let alpha = advancedcronjob_to_v1alpha1(&beta);
    assert_eq!(alpha.metadata, beta.metadata, "no stash needed");
    assert_eq!(alpha.spec.schedule, "0 3 * * *");
    assert_eq!(alpha.spec.time_zone.as_deref(), Some("UTC"));
    assert_eq!(alpha.spec.concurrency_policy, v1alpha1::ConcurrencyPolicy::Replace);
    assert_eq!(alpha.spec.paused, Some(true));
    assert_eq!(alpha.spec.template.broadcast_job_template, beta.spec.template.broadcast_job_template);
    assert_eq!(alpha.spec.template.job_template, None);
    assert_eq!(alpha.status, beta.status);
}

#[test]
fn advancedcronjob_convert_from_v1beta1_with_minimal_fields() {
    let beta = v1beta1::AdvancedCronJob::new(
        "acj",
        v1beta1::AdvancedCronJobSpec { schedule: "@daily".into(), ..Default::default() },
    );
    let alpha = advancedcronjob_to_v1alpha1(&beta);
    assert_eq!(
        alpha,
        v1alpha1::AdvancedCronJob::new(
            "acj",
            v1alpha1::AdvancedCronJobSpec { schedule: "@daily".into(), ..Default::default() }
        )
    );
}

#[test]
fn advancedcronjob_image_list_pull_job_template_is_not_shown_at_v1alpha1() {
    // Upstream refuses this conversion; we leave the template out of the v1alpha1 spec and keep
    // it in the stash, so that nothing is lost when the object comes back.
    let beta = v1beta1::AdvancedCronJob::new(
        "acj",
        v1beta1::AdvancedCronJobSpec {
            schedule: "@daily".into(),
            template: v1beta1::CronJobTemplate {
                image_list_pull_job_template: Some(v1beta1::ImageListPullJobTemplateSpec {
                    metadata: ObjectMeta::default(),
                    spec: v1beta1::ImageListPullJobSpec {
                        images: vec!["nginx:1.25".into(), "busybox:1".into()],
                        ..Default::default()
                    },
                }),
                ..Default::default()
            },
            ..Default::default()
        },
    );
    let alpha = advancedcronjob_to_v1alpha1(&beta);
    assert_eq!(alpha.spec.template, v1alpha1::CronJobTemplate::default());
    assert_eq!(stash_keys(&alpha.metadata), vec!["conversion.apps.kruise.io/v1beta1"]);
    assert_eq!(advancedcronjob_to_v1beta1(&alpha), beta);
}

#[test]
fn advancedcronjob_survives_serde() {
    assert_serde_round_trip(populated::<v1alpha1::AdvancedCronJob>(&advancedcronjob_overrides()));
    assert_serde_round_trip(populated::<v1beta1::AdvancedCronJob>(&advancedcronjob_overrides()));
}

// ---------------------------------------------------------------------------------------------
// ImagePullJob and ImageListPullJob

fn pull_overrides() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("spec.completionPolicy.type", json!("Always")),
        ("spec.imagePullPolicy", json!("IfNotPresent")),
        ("spec.parallelism", json!(2)),
    ]
}

#[test]
fn imagepulljob_round_trips_fully_populated() {
    let alpha: v1alpha1::ImagePullJob = populated(&pull_overrides());
    let beta: v1beta1::ImagePullJob = populated(&pull_overrides());
    assert_round_trips!(alpha, beta, imagepulljob_to_v1beta1, imagepulljob_to_v1alpha1, natural = true);
}

#[test]
fn imagepulljob_survives_serde() {
    assert_serde_round_trip(populated::<v1alpha1::ImagePullJob>(&pull_overrides()));
    assert_serde_round_trip(populated::<v1beta1::ImagePullJob>(&pull_overrides()));
}

#[test]
fn imagepulljob_template_and_node_selector_are_inlined_on_the_wire() {
    let job: v1beta1::ImagePullJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ImagePullJob",
        "metadata": {"name": "pull"},
        "spec": {
            "image": "nginx:1.25",
            "parallelism": 2,
            "selector": {"names": ["node-a"], "matchLabels": {"pool": "web"}},
            "podSelector": {"matchLabels": {"app": "web"}},
            "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 300},
            "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3},
            "imagePullPolicy": "Always"
        }
    }))
    .expect("deserializes");
    let template = &job.spec.template;
    let selector = template.selector.as_ref().expect("selector");
    assert_eq!(selector.names, vec!["node-a".to_string()]);
    assert_eq!(selector.label_selector.match_labels, Some(map(&[("pool", "web")])));
    assert_eq!(
        template.pod_selector.as_ref().and_then(|s| s.match_labels.clone()),
        Some(map(&[("app", "web")]))
    );
    assert_eq!(template.completion_policy.ttl_seconds_after_finished, Some(300));
    assert_eq!(template.image_pull_policy, v1beta1::ImagePullPolicy::Always);
    let written = serde_json::to_value(&job).expect("serializes");
    assert!(written["spec"].get("template").is_none(), "no nested template key: {written}");
    assert_eq!(written["spec"]["selector"], json!({"names": ["node-a"], "matchLabels": {"pool": "web"}}));
    assert_eq!(
        written["spec"]["completionPolicy"],
        json!({"type": "Always", "ttlSecondsAfterFinished": 300})
    );
}

#[test]
fn imagelistpulljob_round_trips_fully_populated() {
    let alpha: v1alpha1::ImageListPullJob = populated(&pull_overrides());
    let beta: v1beta1::ImageListPullJob = populated(&pull_overrides());
    assert_round_trips!(
        alpha,
        beta,
        imagelistpulljob_to_v1beta1,
        imagelistpulljob_to_v1alpha1,
        natural = true
    );
}

#[test]
fn imagelistpulljob_survives_serde() {
    assert_serde_round_trip(populated::<v1alpha1::ImageListPullJob>(&pull_overrides()));
    assert_serde_round_trip(populated::<v1beta1::ImageListPullJob>(&pull_overrides()));
}

// ---------------------------------------------------------------------------------------------
// NodeImage

fn nodeimage_overrides() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("spec.images{}.tags[].imagePullPolicy", json!("IfNotPresent")),
        ("status.imageStatuses{}.tags[].phase", json!("Succeeded")),
        ("status.firstSyncStatus.status", json!("Succeeded")),
    ]
}

#[test]
fn nodeimage_round_trips_fully_populated() {
    let alpha: v1alpha1::NodeImage = populated(&nodeimage_overrides());
    let mut beta_overrides = nodeimage_overrides();
    beta_overrides.push(("spec.images{}.pullSecrets[].mode", json!("")));
    let beta: v1beta1::NodeImage = populated(&beta_overrides);
    assert_round_trips!(alpha, beta, nodeimage_to_v1beta1, nodeimage_to_v1alpha1, natural = true);
}

#[test]
fn nodeimage_pull_secret_mode_is_kept_across_v1alpha1() {
    let alpha: v1alpha1::NodeImage = populated(&nodeimage_overrides());
    let mut beta_overrides = nodeimage_overrides();
    beta_overrides.push(("spec.images{}.pullSecrets[].mode", json!("batch")));
    let beta: v1beta1::NodeImage = populated(&beta_overrides);
    let down = nodeimage_to_v1alpha1(&beta);
    let secret = &down.spec.images["key-1"].pull_secrets[0];
    assert_eq!((secret.namespace.as_str(), secret.name.as_str()), ("v-namespace", "v-name"));
    assert_round_trips!(alpha, beta, nodeimage_to_v1beta1, nodeimage_to_v1alpha1, natural = false);
}

#[test]
fn nodeimage_survives_serde() {
    assert_serde_round_trip(populated::<v1alpha1::NodeImage>(&nodeimage_overrides()));
    assert_serde_round_trip(populated::<v1beta1::NodeImage>(&nodeimage_overrides()));
}

// ---------------------------------------------------------------------------------------------
// ContainerRecreateRequest

fn crr_overrides() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("spec.strategy.failurePolicy", json!("Fail")),
        ("spec.containers[].ports[].protocol", json!("TCP")),
        ("status.phase", json!("Recreating")),
        ("status.containerRecreateStates[].phase", json!("Succeeded")),
    ]
}

/// The PreRecreateGrace condition the conversion makes of an `unready-acquired` annotation.
fn grace_condition_for(timestamp: &str) -> Condition {
    let mut alpha = v1alpha1::ContainerRecreateRequest::new("crr", Default::default());
    alpha.metadata.annotations = Some(map(&[(UNREADY_KEY, timestamp)]));
    let beta = containerrecreaterequest_to_v1beta1(&alpha);
    beta.status.expect("status").conditions.into_iter().next().expect("condition")
}

fn crr_alpha_spec() -> v1alpha1::ContainerRecreateRequestSpec {
    v1alpha1::ContainerRecreateRequestSpec {
        pod_name: "pod-0".into(),
        containers: vec![v1alpha1::ContainerRecreateRequestContainer {
            name: "app".into(),
            status_context: Some(v1alpha1::ContainerRecreateRequestContainerContext {
                container_id: "docker://abc123".into(),
                restart_count: 3,
            }),
            ..Default::default()
        }],
        strategy: Some(v1alpha1::ContainerRecreateRequestStrategy {
            failure_policy: v1alpha1::ContainerRecreateRequestFailurePolicyType::Fail,
            ordered_recreate: true,
            force_recreate: true,
            termination_grace_period_seconds: Some(30),
            unready_grace_period_seconds: Some(5),
            min_started_seconds: 10,
        }),
        active_deadline_seconds: Some(60),
        ttl_seconds_after_finished: Some(10),
    }
}

fn minimal_alpha_crr(name: &str) -> v1alpha1::ContainerRecreateRequest {
    let mut alpha = v1alpha1::ContainerRecreateRequest::new(
        name,
        v1alpha1::ContainerRecreateRequestSpec {
            pod_name: "pod-0".into(),
            containers: vec![v1alpha1::ContainerRecreateRequestContainer {
                name: "app".into(),
                ..Default::default()
            }],
            ..Default::default()
        },
    );
    alpha.metadata.namespace = Some("default".into());
    alpha
}

#[test]
fn containerrecreaterequest_round_trips_fully_populated() {
    let alpha: v1alpha1::ContainerRecreateRequest = populated(&crr_overrides());
    let mut beta: v1beta1::ContainerRecreateRequest = populated(&crr_overrides());
    // The only condition v1alpha1 can carry is a True PreRecreateGrace, as an annotation.
    beta.status.as_mut().expect("status").conditions = vec![grace_condition_for("2024-05-06T07:08:09Z")];
    assert_round_trips!(
        alpha,
        beta,
        containerrecreaterequest_to_v1beta1,
        containerrecreaterequest_to_v1alpha1,
        natural = true
    );
}

#[test]
fn containerrecreaterequest_round_trips_are_exact_even_where_conditions_are_lost() {
    let mut alpha: v1alpha1::ContainerRecreateRequest = populated(&crr_overrides());
    // An annotation time with an offset is read, but not written back that way.
    alpha.metadata.annotations = Some(map(&[(UNREADY_KEY, "2024-06-01T18:00:00+08:00")]));
    let beta: v1beta1::ContainerRecreateRequest = populated(&crr_overrides());
    assert_round_trips!(
        alpha,
        beta,
        containerrecreaterequest_to_v1beta1,
        containerrecreaterequest_to_v1alpha1,
        natural = false
    );
}

#[test]
fn containerrecreaterequest_convert_to_all_fields_populated_with_annotation_promotion() {
    let sync = r#"[{"name":"app","ready":true,"restartCount":3,"containerID":"docker://abc123"}]"#;
    let mut alpha = v1alpha1::ContainerRecreateRequest {
        metadata: meta("test-crr"),
        spec: crr_alpha_spec(),
        status: Some(v1alpha1::ContainerRecreateRequestStatus {
            phase: v1alpha1::ContainerRecreateRequestPhase::Recreating,
            completion_time: Some(time("2024-06-01T10:00:00Z")),
            message: "in progress".into(),
            container_recreate_states: vec![v1alpha1::ContainerRecreateRequestContainerRecreateState {
                name: "app".into(),
                phase: v1alpha1::ContainerRecreateRequestPhase::Recreating,
                is_killed: true,
                ..Default::default()
            }],
        }),
    };
    alpha.metadata.labels = Some(map(&[
        ("crr.apps.kruise.io/pod-uid", "uid-001"),
        ("crr.apps.kruise.io/node-name", "node-1"),
        ("crr.apps.kruise.io/active", "true"),
    ]));
    alpha.metadata.annotations = Some(map(&[(SYNC_KEY, sync), (UNREADY_KEY, "2024-06-01T10:00:00Z")]));
    alpha.metadata.finalizers = Some(vec![UNREADY_KEY.into()]);

    let beta = containerrecreaterequest_to_v1beta1(&alpha);
    assert_eq!(beta.metadata.labels, alpha.metadata.labels);
    assert_eq!(beta.metadata.finalizers, alpha.metadata.finalizers, "the finalizer is not the annotation");
    assert_eq!(beta.metadata.annotations, None, "both annotations moved into the status");
    let strategy = beta.spec.strategy.as_ref().expect("strategy");
    assert_eq!(strategy.failure_policy, v1beta1::ContainerRecreateRequestFailurePolicyType::Fail);
    assert!(strategy.ordered_recreate && strategy.force_recreate);
    assert_eq!(strategy.termination_grace_period_seconds, Some(30));
    assert_eq!(strategy.unready_grace_period_seconds, Some(5));
    assert_eq!(strategy.min_started_seconds, 10);
    assert_eq!(beta.spec.containers, alpha.spec.containers);
    assert_eq!(
        (beta.spec.active_deadline_seconds, beta.spec.ttl_seconds_after_finished),
        (Some(60), Some(10))
    );

    let status = beta.status.as_ref().expect("status");
    assert_eq!(status.phase, v1beta1::ContainerRecreateRequestPhase::Recreating);
    assert_eq!(status.completion_time, Some(time("2024-06-01T10:00:00Z")));
    assert_eq!(status.message, "in progress");
    assert_eq!(status.container_recreate_states[0].phase, v1beta1::ContainerRecreateRequestPhase::Recreating);
    assert!(status.container_recreate_states[0].is_killed);
    assert_eq!(
        status.container_status_snapshot,
        vec![v1beta1::ContainerRecreateRequestSyncContainerStatus {
            name: "app".into(),
            ready: true,
            restart_count: 3,
            container_id: "docker://abc123".into(),
        }]
    );
    assert_eq!(status.conditions.len(), 1);
    let condition = &status.conditions[0];
    assert_eq!((condition.type_.as_str(), condition.status.as_str()), ("PreRecreateGrace", "True"));
    assert_eq!(condition.reason, "PreRecreateGrace");
    assert_eq!(condition.last_transition_time, time("2024-06-01T10:00:00Z"));
    assert!(!condition.message.is_empty());

    assert_eq!(containerrecreaterequest_to_v1alpha1(&beta), alpha);
}

#[test]
fn containerrecreaterequest_empty_annotations_produce_no_snapshot_or_conditions() {
    let alpha = minimal_alpha_crr("minimal");
    let beta = containerrecreaterequest_to_v1beta1(&alpha);
    assert_eq!(beta.metadata, alpha.metadata);
    assert_eq!(beta.spec.pod_name, "pod-0");
    assert_eq!(beta.spec.containers.len(), 1);
    assert_eq!(beta.status, None, "nothing to report");
}

#[test]
fn containerrecreaterequest_malformed_unready_acquired_time_is_ignored() {
    let mut alpha = minimal_alpha_crr("bad-time");
    alpha.metadata.annotations = Some(map(&[(UNREADY_KEY, "not-a-time")]));
    let beta = containerrecreaterequest_to_v1beta1(&alpha);
    assert_eq!(beta.metadata.annotations, alpha.metadata.annotations, "the value stays where it was");
    assert!(beta.status.is_none_or(|status| status.conditions.is_empty()));
    assert_eq!(containerrecreaterequest_to_v1alpha1(&containerrecreaterequest_to_v1beta1(&alpha)), alpha);
}

#[test]
fn containerrecreaterequest_malformed_sync_container_statuses_json_is_ignored() {
    let mut alpha = minimal_alpha_crr("bad-json");
    alpha.metadata.annotations = Some(map(&[(SYNC_KEY, "{invalid}")]));
    let beta = containerrecreaterequest_to_v1beta1(&alpha);
    assert_eq!(beta.metadata.annotations, alpha.metadata.annotations, "the value stays where it was");
    assert!(beta.status.is_none_or(|status| status.container_status_snapshot.is_empty()));
    assert_eq!(containerrecreaterequest_to_v1alpha1(&containerrecreaterequest_to_v1beta1(&alpha)), alpha);
}

#[test]
fn containerrecreaterequest_convert_from_v1beta1_all_fields_new_only_fields_become_annotations() {
    let beta = v1beta1::ContainerRecreateRequest {
        metadata: ObjectMeta {
            labels: Some(map(&[
                ("crr.apps.kruise.io/pod-uid", "uid-001"),
                ("crr.apps.kruise.io/node-name", "node-1"),
            ])),
            ..meta("test-crr")
        },
        spec: v1beta1::ContainerRecreateRequestSpec {
            pod_name: "pod-0".into(),
            containers: crr_alpha_spec().containers,
            strategy: Some(v1beta1::ContainerRecreateRequestStrategy {
                failure_policy: v1beta1::ContainerRecreateRequestFailurePolicyType::Ignore,
                ordered_recreate: true,
                min_started_seconds: 5,
                ..Default::default()
            }),
            active_deadline_seconds: Some(60),
            ttl_seconds_after_finished: Some(10),
        },
        status: Some(v1beta1::ContainerRecreateRequestStatus {
            phase: v1beta1::ContainerRecreateRequestPhase::Completed,
            completion_time: Some(time("2024-06-01T10:00:00Z")),
            message: "done".into(),
            container_recreate_states: vec![v1beta1::ContainerRecreateRequestContainerRecreateState {
                name: "app".into(),
                phase: v1beta1::ContainerRecreateRequestPhase::Succeeded,
                is_killed: true,
                ..Default::default()
            }],
            container_status_snapshot: vec![v1beta1::ContainerRecreateRequestSyncContainerStatus {
                name: "app".into(),
                ready: true,
                restart_count: 3,
                container_id: "docker://abc123".into(),
            }],
            conditions: vec![Condition {
                type_: "PreRecreateGrace".into(),
                status: "True".into(),
                last_transition_time: time("2024-06-01T10:00:00Z"),
                reason: "PreRecreateGrace".into(),
                message: String::new(),
                observed_generation: None,
            }],
        }),
    };
    let alpha = containerrecreaterequest_to_v1alpha1(&beta);
    assert_eq!(alpha.metadata.labels, beta.metadata.labels);
    let annotations = alpha.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations.get(SYNC_KEY).map(String::as_str),
        Some(r#"[{"name":"app","ready":true,"restartCount":3,"containerID":"docker://abc123"}]"#)
    );
    assert_eq!(annotations.get(UNREADY_KEY).map(String::as_str), Some("2024-06-01T10:00:00Z"));
    let strategy = alpha.spec.strategy.as_ref().expect("strategy");
    assert_eq!(strategy.failure_policy, v1alpha1::ContainerRecreateRequestFailurePolicyType::Ignore);
    assert!(strategy.ordered_recreate && !strategy.force_recreate);
    assert_eq!(strategy.min_started_seconds, 5);
    let status = alpha.status.as_ref().expect("status");
    assert_eq!(status.phase, v1alpha1::ContainerRecreateRequestPhase::Completed);
    assert_eq!(status.message, "done");
    assert_eq!(status.container_recreate_states[0].phase, v1alpha1::ContainerRecreateRequestPhase::Succeeded);
    // The condition's empty message has no v1alpha1 form: the stash brings it back.
    assert_eq!(containerrecreaterequest_to_v1beta1(&alpha), beta);
}

#[test]
fn containerrecreaterequest_false_or_other_conditions_do_not_become_the_annotation() {
    let mut beta = v1beta1::ContainerRecreateRequest::new("crr", Default::default());
    let mut condition = grace_condition_for("2024-06-01T10:00:00Z");
    condition.status = "False".into();
    let other = Condition { type_: "Other".into(), status: "True".into(), ..condition.clone() };
    beta.status = Some(v1beta1::ContainerRecreateRequestStatus {
        conditions: vec![condition, other],
        ..Default::default()
    });
    let alpha = containerrecreaterequest_to_v1alpha1(&beta);
    let annotations = alpha.metadata.annotations.clone().unwrap_or_default();
    assert!(!annotations.contains_key(UNREADY_KEY));
    assert_eq!(containerrecreaterequest_to_v1beta1(&alpha), beta, "the stash keeps the conditions");
}

#[test]
fn containerrecreaterequest_minimal_v1beta1_object_converts_cleanly() {
    let mut beta = v1beta1::ContainerRecreateRequest::new(
        "min",
        v1beta1::ContainerRecreateRequestSpec {
            pod_name: "pod-0".into(),
            containers: vec![v1beta1::ContainerRecreateRequestContainer {
                name: "app".into(),
                ..Default::default()
            }],
            ..Default::default()
        },
    );
    beta.metadata.namespace = Some("default".into());
    let alpha = containerrecreaterequest_to_v1alpha1(&beta);
    assert_eq!(alpha, minimal_alpha_crr("min"));
}

#[test]
fn containerrecreaterequest_round_trip_keeps_metadata_spec_and_status() {
    let sync = r#"[{"name":"app","ready":true,"restartCount":2,"containerID":"docker://xyz"}]"#;
    let mut original = v1alpha1::ContainerRecreateRequest {
        metadata: meta("crr-rt"),
        spec: crr_alpha_spec(),
        status: Some(v1alpha1::ContainerRecreateRequestStatus {
            phase: v1alpha1::ContainerRecreateRequestPhase::Recreating,
            message: "running".into(),
            container_recreate_states: vec![v1alpha1::ContainerRecreateRequestContainerRecreateState {
                name: "app".into(),
                phase: v1alpha1::ContainerRecreateRequestPhase::Recreating,
                ..Default::default()
            }],
            ..Default::default()
        }),
    };
    original.metadata.labels = Some(map(&[
        ("crr.apps.kruise.io/pod-uid", "uid-rt"),
        ("crr.apps.kruise.io/node-name", "node-rt"),
        ("crr.apps.kruise.io/active", "true"),
    ]));
    original.metadata.annotations = Some(map(&[(SYNC_KEY, sync), (UNREADY_KEY, "2024-06-01T12:00:00Z")]));
    let hub = containerrecreaterequest_to_v1beta1(&original);
    assert!(stash_keys(&hub.metadata).is_empty(), "the natural conversion is enough");
    assert_eq!(containerrecreaterequest_to_v1alpha1(&hub), original);
}

#[test]
fn containerrecreaterequest_survives_serde() {
    assert_serde_round_trip(populated::<v1alpha1::ContainerRecreateRequest>(&crr_overrides()));
    assert_serde_round_trip(populated::<v1beta1::ContainerRecreateRequest>(&crr_overrides()));
}

// ---------------------------------------------------------------------------------------------
// v1alpha1-only kinds

#[test]
fn ephemeraljob_survives_serde() {
    let job: v1alpha1::EphemeralJob = populated(&[
        ("status.phase", json!("Unknown")),
        ("status.conditions[].type", json!("Initialized")),
        ("status.conditions[].status", json!("True")),
    ]);
    assert_eq!(job.status.as_ref().map(|s| &s.phase), Some(&v1alpha1::EphemeralJobPhase::PhaseUnknown));
    assert_eq!(job.spec.template.ephemeral_containers.len(), 1);
    let written = serde_json::to_value(&job).expect("serializes");
    assert_eq!(written["status"]["match"], json!(7), "matches is written as `match`");
    assert_serde_round_trip(job);
}

#[test]
fn podprobemarker_survives_serde() {
    let marker: v1alpha1::PodProbeMarker =
        populated(&[("spec.probes[].markerPolicy[].state", json!("Succeeded"))]);
    let probe = &marker.spec.probes[0].probe;
    assert!(
        probe.exec.is_some()
            && probe.http_get.is_some()
            && probe.tcp_socket.is_some()
            && probe.grpc.is_some()
    );
    assert_eq!(probe.period_seconds, 7);
    assert_serde_round_trip(marker);
}

#[test]
fn nodepodprobe_survives_serde() {
    let probe: v1alpha1::NodePodProbe =
        populated(&[("status.podProbeStatuses[].probeStates[].state", json!("Failed"))]);
    let written = serde_json::to_value(&probe).expect("serializes");
    assert_eq!(written["spec"]["podProbes"][0]["IP"], json!("v-IP"), "the pod IP is written as `IP`");
    assert_serde_round_trip(probe);
}

#[test]
fn probe_states_match_pod_condition_statuses() {
    assert!(v1alpha1::ProbeState::Succeeded.matches_condition_status("True"));
    assert!(v1alpha1::ProbeState::Failed.matches_condition_status("False"));
    assert!(v1alpha1::ProbeState::StateUnknown.matches_condition_status("Unknown"));
    assert!(!v1alpha1::ProbeState::Succeeded.matches_condition_status("False"));
    assert_eq!(v1alpha1::ProbeState::from("Unknown"), v1alpha1::ProbeState::StateUnknown);
}
