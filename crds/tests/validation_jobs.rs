//! Defaults and validation of the job kinds: BroadcastJob, AdvancedCronJob, ImagePullJob,
//! ImageListPullJob, NodeImage, ContainerRecreateRequest, EphemeralJob, PodProbeMarker and
//! NodePodProbe. Each kind has a valid base object; each case changes one thing with a JSON merge
//! patch and names the fields the errors must point at.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Container, ContainerStatus, Lifecycle, LifecycleHandler, Pod, PodSpec, PodStatus},
    apimachinery::pkg::{
        apis::meta::v1::{ObjectMeta, Time},
        util::intstr::IntOrString,
    },
    jiff::Timestamp,
};
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{
        default_advancedcronjob_v1alpha1, default_advancedcronjob_v1beta1, default_broadcastjob_v1alpha1,
        default_broadcastjob_v1beta1, default_containerrecreaterequest_v1alpha1,
        default_containerrecreaterequest_v1beta1, default_ephemeraljob, default_imagelistpulljob_v1alpha1,
        default_imagelistpulljob_v1beta1, default_imagepulljob_v1alpha1, default_imagepulljob_v1beta1,
        default_nodeimage_v1alpha1_at, default_nodeimage_v1beta1, default_nodeimage_v1beta1_at,
        default_nodepodprobe, default_podprobemarker, inject_pod_into_containerrecreaterequest_v1beta1,
    },
    field::ErrorList,
    validation::{
        CronSpec, parse_cron_schedule, parse_image_reference, validate_advancedcronjob_v1alpha1,
        validate_advancedcronjob_v1beta1, validate_broadcastjob_v1alpha1, validate_broadcastjob_v1beta1,
        validate_containerrecreaterequest_v1alpha1, validate_containerrecreaterequest_v1beta1,
        validate_ephemeraljob, validate_imagelistpulljob_v1alpha1, validate_imagelistpulljob_v1beta1,
        validate_imagepulljob_v1alpha1, validate_imagepulljob_v1beta1, validate_nodeimage_v1alpha1,
        validate_nodeimage_v1beta1, validate_nodepodprobe, validate_podprobemarker,
    },
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn patched(base: &Value, patch: &Value) -> Value {
    let mut document = base.clone();
    json_patch::merge(&mut document, patch);
    document
}

fn parse<T: DeserializeOwned>(document: Value) -> T {
    serde_json::from_value(document).expect("the test document parses")
}

fn paths(errors: &ErrorList) -> Vec<String> {
    errors.iter().map(|e| e.path.to_string()).collect()
}

/// Runs every case through `errors_of` (defaults, then validation of a patched base) and
/// compares the error paths.
fn check(kind: &str, errors_of: impl Fn(&Value) -> Vec<String>, cases: Vec<(&str, Value, Vec<&str>)>) {
    for (rule, patch, expected) in cases {
        assert_eq!(errors_of(&patch), expected, "{kind}: {rule}");
    }
}

// ---------------------------------------------------------------------------------------------
// BroadcastJob

fn broadcastjob() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "BroadcastJob",
        "metadata": {"name": "clean", "namespace": "default"},
        "spec": {
            "parallelism": "50%",
            "template": {
                "metadata": {"labels": {"app": "clean"}},
                "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}], "restartPolicy": "Never"}
            },
            "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 600, "ttlSecondsAfterFinished": 60},
            "failurePolicy": {"type": "Continue", "restartLimit": 3}
        }
    })
}

fn broadcastjob_errors(patch: &Value) -> Vec<String> {
    let mut job: v1beta1::BroadcastJob = parse(patched(&broadcastjob(), patch));
    default_broadcastjob_v1beta1(&mut job, true);
    paths(&validate_broadcastjob_v1beta1(&job, None))
}

#[test]
fn broadcastjob_rules() {
    assert_eq!(broadcastjob_errors(&json!({})), Vec::<String>::new());
    let mut alpha: v1alpha1::BroadcastJob =
        parse(patched(&broadcastjob(), &json!({"apiVersion": "apps.kruise.io/v1alpha1"})));
    default_broadcastjob_v1alpha1(&mut alpha, true);
    assert!(validate_broadcastjob_v1alpha1(&alpha, None).is_empty());

    let cases = vec![
        ("name is a DNS subdomain", json!({"metadata": {"name": "Clean"}}), vec!["metadata.name"]),
        ("name is a DNS label", json!({"metadata": {"name": "clean.nodes"}}), vec!["metadata.name"]),
        (
            "name is at most 63 characters",
            json!({"metadata": {"name": "a".repeat(64)}}),
            vec!["metadata.name"],
        ),
        (
            "restartPolicy defaults to Always, which a job can not use",
            json!({"spec": {"template": {"spec": {"restartPolicy": null}}}}),
            vec!["spec.template.spec.restartPolicy"],
        ),
        (
            "restartPolicy Always",
            json!({"spec": {"template": {"spec": {"restartPolicy": "Always"}}}}),
            vec!["spec.template.spec.restartPolicy"],
        ),
        (
            "restartPolicy outside the enum",
            json!({"spec": {"template": {"spec": {"restartPolicy": "Sometimes"}}}}),
            vec!["spec.template.spec.restartPolicy"],
        ),
        (
            "pod template is valid",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": ""}]}}}}),
            vec!["spec.template.spec.containers[0].image"],
        ),
        (
            "controller labels are not preset",
            json!({"spec": {"template": {"metadata": {"labels": {"broadcastjob-name": "x"}}}}}),
            vec!["spec.template.metadata.labels"],
        ),
        (
            "Never: no TTL and no deadline",
            json!({"spec": {"completionPolicy": {"type": "Never"}}}),
            vec![
                "spec.completionPolicy.activeDeadlineSeconds",
                "spec.completionPolicy.ttlSecondsAfterFinished",
            ],
        ),
        (
            "completion type enum",
            json!({"spec": {"completionPolicy": {"type": "Sometimes"}}}),
            vec!["spec.completionPolicy.type"],
        ),
        (
            "deadline positive",
            json!({"spec": {"completionPolicy": {"activeDeadlineSeconds": 0}}}),
            vec!["spec.completionPolicy.activeDeadlineSeconds"],
        ),
        (
            "ttl non-negative",
            json!({"spec": {"completionPolicy": {"ttlSecondsAfterFinished": -1}}}),
            vec!["spec.completionPolicy.ttlSecondsAfterFinished"],
        ),
        ("parallelism parses", json!({"spec": {"parallelism": "half"}}), vec!["spec.parallelism"]),
        ("parallelism non-negative", json!({"spec": {"parallelism": -1}}), vec!["spec.parallelism"]),
        (
            "failure policy enum",
            json!({"spec": {"failurePolicy": {"type": "Retry"}}}),
            vec!["spec.failurePolicy.type"],
        ),
        (
            "restart limit non-negative",
            json!({"spec": {"failurePolicy": {"restartLimit": -1}}}),
            vec!["spec.failurePolicy.restartLimit"],
        ),
    ];
    check("BroadcastJob", broadcastjob_errors, cases);
}

#[test]
fn broadcastjob_defaults() {
    let mut job = v1beta1::BroadcastJob::default();
    default_broadcastjob_v1beta1(&mut job, true);
    assert_eq!(job.spec.completion_policy.type_, v1beta1::CompletionPolicyType::Always);
    assert_eq!(job.spec.parallelism, Some(IntOrString::Int(i32::MAX)));
    assert_eq!(job.spec.failure_policy.type_, v1beta1::FailurePolicyType::FailFast);
    let pod = job.spec.template.spec.expect("pod template defaults were injected");
    assert_eq!(pod.dns_policy.as_deref(), Some("ClusterFirst"));

    let mut explicit: v1beta1::BroadcastJob = parse(broadcastjob());
    let before = explicit.clone();
    default_broadcastjob_v1beta1(&mut explicit, false);
    assert_eq!(explicit, before, "explicit values stay and the template is untouched");
}

// ---------------------------------------------------------------------------------------------
// AdvancedCronJob

fn advancedcronjob() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "AdvancedCronJob",
        "metadata": {"name": "nightly", "namespace": "default"},
        "spec": {
            "schedule": "0 3 * * mon-fri",
            "timeZone": "Asia/Shanghai",
            "startingDeadlineSeconds": 60,
            "template": {
                "broadcastJobTemplate": {
                    "spec": {
                        "template": {"spec": {
                            "containers": [{"name": "main", "image": "busybox:1.36"}],
                            "restartPolicy": "OnFailure"
                        }},
                        "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 90}
                    }
                }
            }
        }
    })
}

fn image_list_template() -> Value {
    json!({"template": {"broadcastJobTemplate": null, "imageListPullJobTemplate": {"spec": {
        "images": ["nginx:1.25", "busybox:latest"],
        "selector": {"names": ["node-1", "node-2"]},
        "pullPolicy": {"timeoutSeconds": 60}
    }}}})
}

fn advancedcronjob_errors(patch: &Value) -> Vec<String> {
    let mut job: v1beta1::AdvancedCronJob = parse(patched(&advancedcronjob(), patch));
    default_advancedcronjob_v1beta1(&mut job, true);
    paths(&validate_advancedcronjob_v1beta1(&job, None))
}

#[test]
fn advancedcronjob_rules() {
    assert_eq!(advancedcronjob_errors(&json!({})), Vec::<String>::new());
    let job_template = json!({"spec": {"template": {"broadcastJobTemplate": null, "jobTemplate": {"spec": {
        "template": {"spec": {"containers": [{"name": "main", "image": "perl"}], "restartPolicy": "Never"}}
    }}}}});
    assert_eq!(advancedcronjob_errors(&job_template), Vec::<String>::new());
    let image_list = json!({"spec": image_list_template()});
    assert_eq!(advancedcronjob_errors(&image_list), Vec::<String>::new());

    let ilpj = "spec.template.imageListPullJobTemplate.spec";
    let list_case = |extra: Value| {
        let mut spec = image_list_template();
        json_patch::merge(&mut spec, &json!({"template": {"imageListPullJobTemplate": {"spec": extra}}}));
        json!({"spec": spec})
    };
    let cases = vec![
        (
            "name is a DNS label",
            json!({"metadata": {"name": "nightly.jobs"}}),
            vec!["metadata.name".to_string()],
        ),
        ("schedule required", json!({"spec": {"schedule": ""}}), vec!["spec.schedule".into()]),
        ("schedule parses", json!({"spec": {"schedule": "0 25 * * *"}}), vec!["spec.schedule".into()]),
        ("schedule field count", json!({"spec": {"schedule": "0 3 * *"}}), vec!["spec.schedule".into()]),
        (
            "TZ in the schedule and timeZone",
            json!({"spec": {"schedule": "TZ=UTC 0 3 * * *"}}),
            vec!["spec.schedule".into()],
        ),
        ("timeZone non-empty", json!({"spec": {"timeZone": ""}}), vec!["spec.timeZone".into()]),
        ("timeZone not Local", json!({"spec": {"timeZone": "Local"}}), vec!["spec.timeZone".into()]),
        ("timeZone known", json!({"spec": {"timeZone": "Mars/Olympus"}}), vec!["spec.timeZone".into()]),
        ("timeZone case", json!({"spec": {"timeZone": "asia/shanghai"}}), vec!["spec.timeZone".into()]),
        (
            "startingDeadlineSeconds non-negative",
            json!({"spec": {"startingDeadlineSeconds": -1}}),
            vec!["spec.startingDeadlineSeconds".into()],
        ),
        (
            "history limits non-negative",
            json!({"spec": {"successfulJobsHistoryLimit": -1, "failedJobsHistoryLimit": -2}}),
            vec!["spec.successfulJobsHistoryLimit".into(), "spec.failedJobsHistoryLimit".into()],
        ),
        (
            "concurrencyPolicy enum",
            json!({"spec": {"concurrencyPolicy": "Sometimes"}}),
            vec!["spec.concurrencyPolicy".into()],
        ),
        (
            "one template",
            json!({"spec": {"template": {"broadcastJobTemplate": null}}}),
            vec!["spec.template".into()],
        ),
        (
            "only one template",
            json!({"spec": {"template": {"jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "main", "image": "perl"}], "restartPolicy": "Never"}}}}}}}),
            vec!["spec.template".into()],
        ),
        (
            "broadcast template: pod template valid",
            json!({"spec": {"template": {"broadcastJobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "Main", "image": "busybox"}]}}}}}}}),
            vec!["spec.template.broadcastJobTemplate.spec.template.spec.containers[0].name".into()],
        ),
        (
            "broadcast template: restartPolicy",
            json!({"spec": {"template": {"broadcastJobTemplate": {"spec": {"template": {"spec": {"restartPolicy": null}}}}}}}),
            vec!["spec.template.broadcastJobTemplate.spec.template.spec.restartPolicy".into()],
        ),
        (
            "broadcast template: spec rules",
            json!({"spec": {"template": {"broadcastJobTemplate": {"spec": {"completionPolicy": {"type": "Never"}}}}}}),
            vec!["spec.template.broadcastJobTemplate.spec.completionPolicy.ttlSecondsAfterFinished".into()],
        ),
        (
            "job template: restartPolicy",
            json!({"spec": {"template": {"broadcastJobTemplate": null, "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "main", "image": "perl"}]}}}}}}}),
            vec!["spec.template.jobTemplate.spec.template.spec.restartPolicy".into()],
        ),
        (
            "image list: concurrency Replace or Forbid",
            patched(&image_list, &json!({"spec": {"concurrencyPolicy": "Allow"}})),
            vec!["spec.concurrencyPolicy".into()],
        ),
        ("image list: images required", list_case(json!({"images": []})), vec![format!("{ilpj}.images")]),
        (
            "image list: images unique",
            list_case(json!({"images": ["a", "a"]})),
            vec![format!("{ilpj}.images[1]")],
        ),
        (
            "image list: images parse",
            list_case(json!({"images": ["a", "B"]})),
            vec![format!("{ilpj}.images[1]")],
        ),
        (
            "image list: names or labels",
            list_case(json!({"selector": {"matchLabels": {"pool": "a"}}})),
            vec![format!("{ilpj}.selector")],
        ),
        (
            "image list: completion Always",
            list_case(json!({"completionPolicy": {"type": "Never"}})),
            vec![format!("{ilpj}.completionPolicy.type")],
        ),
        (
            "image list: deadline at most a day",
            list_case(json!({"completionPolicy": {"activeDeadlineSeconds": 86401}})),
            vec![format!("{ilpj}.completionPolicy.activeDeadlineSeconds")],
        ),
        (
            "image list: deadline covers one pull",
            list_case(json!({"completionPolicy": {"activeDeadlineSeconds": 30}})),
            vec![format!("{ilpj}.completionPolicy.activeDeadlineSeconds")],
        ),
        (
            "image list: no TTL",
            list_case(json!({"completionPolicy": {"ttlSecondsAfterFinished": 30}})),
            vec![format!("{ilpj}.completionPolicy.ttlSecondsAfterFinished")],
        ),
    ];
    for (rule, patch, expected) in cases {
        assert_eq!(advancedcronjob_errors(&patch), expected, "AdvancedCronJob: {rule}");
    }
}

#[test]
fn advancedcronjob_v1alpha1_uses_the_same_rules_and_paths() {
    let alpha_errors = |patch: Value| {
        let base = patched(&advancedcronjob(), &json!({"apiVersion": "apps.kruise.io/v1alpha1"}));
        let mut job: v1alpha1::AdvancedCronJob = parse(patched(&base, &patch));
        default_advancedcronjob_v1alpha1(&mut job, true);
        paths(&validate_advancedcronjob_v1alpha1(&job, None))
    };
    assert_eq!(alpha_errors(json!({})), Vec::<String>::new());
    assert_eq!(
        alpha_errors(json!({"spec": {"schedule": "@weekly", "timeZone": "Nowhere"}})),
        ["spec.timeZone"]
    );
    assert_eq!(
        alpha_errors(json!({"spec": {"template": {"broadcastJobTemplate": null}}})),
        ["spec.template"]
    );
}

#[test]
fn advancedcronjob_updates_keep_the_job_templates() {
    let old: v1beta1::AdvancedCronJob = parse(advancedcronjob());
    let mut scheduling = old.clone();
    scheduling.spec.schedule = "@hourly".into();
    scheduling.spec.time_zone = Some("UTC".into());
    scheduling.spec.paused = Some(true);
    scheduling.spec.concurrency_policy = v1beta1::ConcurrencyPolicy::Forbid;
    scheduling.spec.successful_jobs_history_limit = Some(5);
    assert!(validate_advancedcronjob_v1beta1(&scheduling, Some(&old)).is_empty());

    let mut template = old.clone();
    if let Some(broadcast) = template.spec.template.broadcast_job_template.as_mut() {
        broadcast.spec.paused = true;
    }
    assert_eq!(paths(&validate_advancedcronjob_v1beta1(&template, Some(&old))), ["spec"]);

    let old_list: v1beta1::AdvancedCronJob =
        parse(patched(&advancedcronjob(), &json!({"spec": image_list_template()})));
    let mut list = old_list.clone();
    if let Some(image_list) = list.spec.template.image_list_pull_job_template.as_mut() {
        image_list.spec.images.push("redis:7".into());
    }
    list.spec.concurrency_policy = v1beta1::ConcurrencyPolicy::Replace;
    assert!(validate_advancedcronjob_v1beta1(&list, Some(&old_list)).is_empty(), "the image list may change");

    let old_alpha: v1alpha1::AdvancedCronJob =
        parse(patched(&advancedcronjob(), &json!({"apiVersion": "apps.kruise.io/v1alpha1"})));
    let mut alpha = old_alpha.clone();
    alpha.spec.template.broadcast_job_template = None;
    alpha.spec.template.job_template = Some(Default::default());
    assert!(
        paths(&validate_advancedcronjob_v1alpha1(&alpha, Some(&old_alpha))).contains(&"spec".to_string())
    );
}

#[test]
fn advancedcronjob_defaults() {
    let mut job = v1beta1::AdvancedCronJob::default();
    job.spec.template.job_template = Some(Default::default());
    default_advancedcronjob_v1beta1(&mut job, true);
    assert_eq!(job.spec.concurrency_policy, v1beta1::ConcurrencyPolicy::Allow);
    assert_eq!(job.spec.paused, Some(false));
    assert_eq!(job.spec.successful_jobs_history_limit, Some(3));
    assert_eq!(job.spec.failed_jobs_history_limit, Some(1));
    let pod = job.spec.template.job_template.and_then(|t| t.spec).and_then(|s| s.template.spec);
    assert_eq!(pod.and_then(|p| p.restart_policy).as_deref(), Some("Always"));

    let mut list: v1beta1::AdvancedCronJob =
        parse(patched(&advancedcronjob(), &json!({"spec": image_list_template()})));
    default_advancedcronjob_v1beta1(&mut list, true);
    assert_eq!(list.spec.concurrency_policy, v1beta1::ConcurrencyPolicy::Replace);
    let pull = list.spec.template.image_list_pull_job_template.expect("template").spec.template;
    assert_eq!(pull.completion_policy.type_, v1beta1::CompletionPolicyType::Always);
    assert_eq!(pull.image_pull_policy, v1beta1::ImagePullPolicy::IfNotPresent);
    let policy = pull.pull_policy.expect("pull policy");
    assert_eq!((policy.timeout_seconds, policy.backoff_limit), (Some(60), Some(3)), "explicit timeout stays");

    let mut alpha = v1alpha1::AdvancedCronJob::default();
    alpha.spec.concurrency_policy = v1beta1::ConcurrencyPolicy::Forbid;
    alpha.spec.failed_jobs_history_limit = Some(7);
    default_advancedcronjob_v1alpha1(&mut alpha, false);
    assert_eq!(alpha.spec.concurrency_policy, v1beta1::ConcurrencyPolicy::Forbid);
    assert_eq!(
        (alpha.spec.successful_jobs_history_limit, alpha.spec.failed_jobs_history_limit),
        (Some(3), Some(7))
    );
}

#[test]
fn cron_schedules_parse_like_upstream() {
    for good in
        ["*/5 * * * *", "0 0 1,15 * *", "30 4 * jan,JUL sun", "0 */2 * * 1-5", "@monthly", "@every 90s"]
    {
        assert!(parse_cron_schedule(good).is_ok(), "{good}");
    }
    assert!(matches!(parse_cron_schedule("@every 2m").map(|s| s.spec), Ok(CronSpec::Every(120))));
    for bad in ["* * * * * *", "61 * * * *", "@sometimes", "TZ=Nowhere/Land * * * * *", "TZ=UTC"] {
        assert!(parse_cron_schedule(bad).is_err(), "{bad}");
    }
}

// ---------------------------------------------------------------------------------------------
// ImagePullJob and ImageListPullJob

fn imagepulljob() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ImagePullJob",
        "metadata": {"name": "prefetch", "namespace": "default"},
        "spec": {
            "image": "nginx:1.25",
            "parallelism": 10,
            "selector": {"matchLabels": {"pool": "web"}},
            "pullSecrets": ["registry"],
            "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 1200, "ttlSecondsAfterFinished": 300},
            "pullPolicy": {"backoffLimit": 3, "timeoutSeconds": 300}
        }
    })
}

fn imagepulljob_errors(patch: &Value) -> Vec<String> {
    let mut job: v1beta1::ImagePullJob = parse(patched(&imagepulljob(), patch));
    default_imagepulljob_v1beta1(&mut job);
    paths(&validate_imagepulljob_v1beta1(&job, None))
}

#[test]
fn imagepulljob_rules() {
    assert_eq!(imagepulljob_errors(&json!({})), Vec::<String>::new());
    assert_eq!(
        imagepulljob_errors(
            &json!({"spec": {"selector": null, "podSelector": {"matchLabels": {"app": "web"}}}})
        ),
        Vec::<String>::new()
    );
    let mut alpha: v1alpha1::ImagePullJob =
        parse(patched(&imagepulljob(), &json!({"apiVersion": "apps.kruise.io/v1alpha1"})));
    default_imagepulljob_v1alpha1(&mut alpha);
    assert!(validate_imagepulljob_v1alpha1(&alpha, None).is_empty());

    let cases = vec![
        ("image required", json!({"spec": {"image": ""}}), vec!["spec.image"]),
        ("image parses", json!({"spec": {"image": "nginx:"}}), vec!["spec.image"]),
        ("image lower-case", json!({"spec": {"image": "Nginx"}}), vec!["spec.image"]),
        (
            "names or a label selector",
            json!({"spec": {"selector": {"names": ["node-1"]}}}),
            vec!["spec.selector"],
        ),
        (
            "label selector valid",
            json!({"spec": {"selector": {"matchExpressions": [{"key": "pool", "operator": "Is"}]}}}),
            vec!["spec.selector.matchExpressions[0].operator"],
        ),
        (
            "names unique",
            json!({"spec": {"selector": {"matchLabels": null, "names": ["node-1", "node-1"]}}}),
            vec!["spec.selector.names[1]"],
        ),
        (
            "selector or podSelector",
            json!({"spec": {"podSelector": {"matchLabels": {"app": "web"}}}}),
            vec!["spec.podSelector"],
        ),
        (
            "podSelector valid",
            json!({"spec": {"selector": null, "podSelector": {"matchLabels": {"app": "-web"}}}}),
            vec!["spec.podSelector.matchLabels[app]"],
        ),
        ("parallelism not a percentage", json!({"spec": {"parallelism": "10%"}}), vec!["spec.parallelism"]),
        ("parallelism an integer", json!({"spec": {"parallelism": "ten"}}), vec!["spec.parallelism"]),
        ("parallelism non-negative", json!({"spec": {"parallelism": -1}}), vec!["spec.parallelism"]),
        (
            "pull policy numbers",
            json!({"spec": {"pullPolicy": {"timeoutSeconds": -1, "backoffLimit": -1}}}),
            vec!["spec.pullPolicy.timeoutSeconds", "spec.pullPolicy.backoffLimit"],
        ),
        ("imagePullPolicy enum", json!({"spec": {"imagePullPolicy": "Never"}}), vec!["spec.imagePullPolicy"]),
        (
            "deadline covers one pull",
            json!({"spec": {"completionPolicy": {"activeDeadlineSeconds": 100}}}),
            vec!["spec.completionPolicy.activeDeadlineSeconds"],
        ),
        (
            "deadline covers the default timeout",
            json!({"spec": {"pullPolicy": null, "completionPolicy": {"activeDeadlineSeconds": 599}}}),
            vec!["spec.completionPolicy.activeDeadlineSeconds"],
        ),
        (
            "Never: no deadline, no TTL",
            json!({"spec": {"completionPolicy": {"type": "Never"}}}),
            vec![
                "spec.completionPolicy.activeDeadlineSeconds",
                "spec.completionPolicy.ttlSecondsAfterFinished",
            ],
        ),
        (
            "completion type enum",
            json!({"spec": {"completionPolicy": {"type": "Sometimes"}}}),
            vec!["spec.completionPolicy.type"],
        ),
    ];
    check("ImagePullJob", imagepulljob_errors, cases);
}

#[test]
fn imagepulljob_pull_secrets_are_immutable() {
    let old: v1beta1::ImagePullJob = parse(imagepulljob());
    let mut new = old.clone();
    new.spec.template.parallelism = Some(IntOrString::Int(2));
    assert!(validate_imagepulljob_v1beta1(&new, Some(&old)).is_empty());
    new.spec.template.pull_secrets.push("other".into());
    assert_eq!(paths(&validate_imagepulljob_v1beta1(&new, Some(&old))), ["spec.pullSecrets"]);
    let old_alpha: v1alpha1::ImagePullJob =
        parse(patched(&imagepulljob(), &json!({"apiVersion": "apps.kruise.io/v1alpha1"})));
    let mut alpha = old_alpha.clone();
    alpha.spec.template.pull_secrets.clear();
    assert_eq!(paths(&validate_imagepulljob_v1alpha1(&alpha, Some(&old_alpha))), ["spec.pullSecrets"]);
}

#[test]
fn imagepulljob_defaults() {
    let mut job = v1beta1::ImagePullJob::default();
    default_imagepulljob_v1beta1(&mut job);
    let template = &job.spec.template;
    assert_eq!(template.completion_policy.type_, v1beta1::CompletionPolicyType::Always);
    assert_eq!(template.image_pull_policy, v1beta1::ImagePullPolicy::IfNotPresent);
    let pull = template.pull_policy.clone().expect("pull policy");
    assert_eq!((pull.timeout_seconds, pull.backoff_limit), (Some(600), Some(3)));
    assert_eq!(template.parallelism, Some(IntOrString::Int(1)));

    let mut explicit: v1beta1::ImagePullJob =
        parse(patched(&imagepulljob(), &json!({"spec": {"imagePullPolicy": "Always"}})));
    let before = explicit.clone();
    default_imagepulljob_v1beta1(&mut explicit);
    assert_eq!(explicit, before);

    let mut alpha = v1alpha1::ImagePullJob::default();
    default_imagepulljob_v1alpha1(&mut alpha);
    assert_eq!(alpha.spec.template.image_pull_policy, v1beta1::ImagePullPolicy::IfNotPresent);
}

fn imagelistpulljob() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ImageListPullJob",
        "metadata": {"name": "prefetch-all", "namespace": "default"},
        "spec": {
            "images": ["nginx:1.9.1", "busybox:1.29.2", "quay.io/org/tool@sha256:0000000000000000000000000000000000000000000000000000000000000abc"],
            "parallelism": "10",
            "selector": {"names": ["node-1", "node-2"]},
            "completionPolicy": {"type": "Never"}
        }
    })
}

fn imagelistpulljob_errors(patch: &Value) -> Vec<String> {
    let mut job: v1beta1::ImageListPullJob = parse(patched(&imagelistpulljob(), patch));
    default_imagelistpulljob_v1beta1(&mut job);
    paths(&validate_imagelistpulljob_v1beta1(&job, None))
}

#[test]
fn imagelistpulljob_rules() {
    assert_eq!(imagelistpulljob_errors(&json!({})), Vec::<String>::new());
    let mut alpha: v1alpha1::ImageListPullJob =
        parse(patched(&imagelistpulljob(), &json!({"apiVersion": "apps.kruise.io/v1alpha1"})));
    default_imagelistpulljob_v1alpha1(&mut alpha);
    assert!(validate_imagelistpulljob_v1alpha1(&alpha, None).is_empty());

    let many: Vec<String> = (0..256).map(|i| format!("app-{i}")).collect();
    let cases = vec![
        ("images required", json!({"spec": {"images": []}}), vec!["spec.images"]),
        ("at most 255 images", json!({"spec": {"images": many}}), vec!["spec.images"]),
        ("images unique", json!({"spec": {"images": ["a:1", "b:1", "a:1"]}}), vec!["spec.images[2]"]),
        ("images parse", json!({"spec": {"images": ["a:1", "b@sha256:12"]}}), vec!["spec.images[1]"]),
        (
            "shared pull rules",
            json!({"spec": {"parallelism": "5%", "completionPolicy": {"ttlSecondsAfterFinished": 5}}}),
            vec!["spec.parallelism", "spec.completionPolicy.ttlSecondsAfterFinished"],
        ),
    ];
    check("ImageListPullJob", imagelistpulljob_errors, cases);
}

#[test]
fn imagelistpulljob_defaults_leave_the_image_pull_policy_to_the_children() {
    let mut job = v1beta1::ImageListPullJob::default();
    default_imagelistpulljob_v1beta1(&mut job);
    assert_eq!(job.spec.template.completion_policy.type_, v1beta1::CompletionPolicyType::Always);
    let pull = job.spec.template.pull_policy.clone().expect("pull policy");
    assert_eq!((pull.timeout_seconds, pull.backoff_limit), (Some(600), Some(3)));
    assert!(job.spec.template.image_pull_policy.is_unset());
}

#[test]
fn image_references_give_repository_tag_and_digest() {
    let reference = parse_image_reference("registry.local:5000/team/app:v2").expect("parses");
    assert_eq!(reference.repository(), "registry.local:5000/team/app");
    assert_eq!((reference.tag.as_deref(), reference.digest.as_deref()), (Some("v2"), None));
    assert_eq!(
        parse_image_reference("busybox").expect("parses").normalized(),
        "docker.io/library/busybox:latest"
    );
    assert!(parse_image_reference("team/App").is_err());
    assert_eq!(
        parse_image_reference("UPPER/app").expect("parses").domain,
        "UPPER",
        "a capitalised first segment is a host"
    );
}

// ---------------------------------------------------------------------------------------------
// NodeImage

fn nodeimage() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "NodeImage",
        "metadata": {"name": "node-1"},
        "spec": {"images": {
            "nginx": {"tags": [
                {"tag": "1.25", "version": 1, "createdAt": "2024-08-09T10:03:52Z",
                 "pullPolicy": {"ttlSecondsAfterFinished": 300, "timeoutSeconds": 600, "backoffLimit": 3}}
            ], "pullSecrets": [{"namespace": "kruise-daemon-config", "name": "s1", "mode": "batch"}]}
        }}
    })
}

fn nodeimage_errors(patch: &Value) -> Vec<String> {
    let mut node_image: v1beta1::NodeImage = parse(patched(&nodeimage(), patch));
    default_nodeimage_v1beta1(&mut node_image);
    paths(&validate_nodeimage_v1beta1(&node_image, None))
}

#[test]
fn nodeimage_rules() {
    assert_eq!(nodeimage_errors(&json!({})), Vec::<String>::new());
    let tag = |extra: Value| {
        let mut tag = json!({"tag": "1.25", "createdAt": "2024-08-09T10:03:52Z", "pullPolicy": {"ttlSecondsAfterFinished": 300}});
        json_patch::merge(&mut tag, &extra);
        tag
    };
    let images: BTreeMap<String, Value> =
        (0..257).map(|i| (format!("img{i}"), json!({"tags": []}))).collect();
    let tags = "spec.images[nginx].tags";
    let cases = vec![
        (
            "cluster-scoped",
            json!({"metadata": {"namespace": "default"}}),
            vec!["metadata.namespace".to_string()],
        ),
        ("at most 256 images", json!({"spec": {"images": images}}), vec!["spec.images".into()]),
        ("image name", json!({"spec": {"images": {"": {"tags": []}}}}), vec!["spec.images[]".into()]),
        (
            "tag required",
            json!({"spec": {"images": {"nginx": {"tags": [tag(json!({"tag": ""}))]}}}}),
            vec![format!("{tags}[0].tag")],
        ),
        (
            "tags unique",
            json!({"spec": {"images": {"nginx": {"tags": [tag(json!({})), tag(json!({}))]}}}}),
            vec![format!("{tags}[1].tag")],
        ),
        (
            "version non-negative",
            json!({"spec": {"images": {"nginx": {"tags": [tag(json!({"version": -1}))]}}}}),
            vec![format!("{tags}[0].version")],
        ),
        (
            "TTL required (pull policy itself is defaulted)",
            json!({"spec": {"images": {"nginx": {"tags": [tag(json!({"pullPolicy": null}))]}}}}),
            vec![format!("{tags}[0].pullPolicy.ttlSecondsAfterFinished")],
        ),
        (
            "pull policy numbers",
            json!({"spec": {"images": {"nginx": {"tags": [tag(json!({"pullPolicy": {"activeDeadlineSeconds": -5}}))]}}}}),
            vec![format!("{tags}[0].pullPolicy.activeDeadlineSeconds")],
        ),
        (
            "imagePullPolicy enum",
            json!({"spec": {"images": {"nginx": {"tags": [tag(json!({"imagePullPolicy": "Never"}))]}}}}),
            vec![format!("{tags}[0].imagePullPolicy")],
        ),
    ];
    for (rule, patch, expected) in cases {
        assert_eq!(nodeimage_errors(&patch), expected, "NodeImage: {rule}");
    }

    // Without defaults, createdAt and pullPolicy are required.
    let bare: v1beta1::NodeImage =
        parse(patched(&nodeimage(), &json!({"spec": {"images": {"nginx": {"tags": [{"tag": "1"}]}}}})));
    assert_eq!(
        paths(&validate_nodeimage_v1beta1(&bare, None)),
        [format!("{tags}[0].createdAt"), format!("{tags}[0].pullPolicy")]
    );
    let alpha: v1alpha1::NodeImage = parse(patched(
        &nodeimage(),
        &json!({"apiVersion": "apps.kruise.io/v1alpha1", "spec": {"images": {"nginx": {"pullSecrets": [{"name": "s1"}], "tags": [{"tag": "1"}]}}}}),
    ));
    assert_eq!(paths(&validate_nodeimage_v1alpha1(&alpha, None)).len(), 2);
}

#[test]
fn nodeimage_defaults() {
    let now = Time(Timestamp::from_second(1_700_000_000).expect("valid time"));
    let mut node_image: v1beta1::NodeImage = parse(patched(
        &nodeimage(),
        &json!({
            "spec": {"images": {"nginx": {"tags": [{"tag": "b"}, {"tag": "a", "pullPolicy": {"timeoutSeconds": 30}}]}}},
            "status": {"desired": 2, "imageStatuses": {"nginx": {"tags": [{"tag": "z", "phase": "Waiting"}, {"tag": "y", "phase": "Pulling"}]}}}
        }),
    ));
    default_nodeimage_v1beta1_at(&mut node_image, &now);
    let tags = &node_image.spec.images["nginx"].tags;
    assert_eq!(tags.iter().map(|t| t.tag.as_str()).collect::<Vec<_>>(), ["a", "b"], "tags are sorted");
    assert!(tags.iter().all(|t| t.created_at == Some(now.clone())));
    let policies: Vec<_> = tags.iter().map(|t| t.pull_policy.clone().expect("defaulted")).collect();
    assert_eq!((policies[0].timeout_seconds, policies[0].backoff_limit), (Some(30), Some(3)));
    assert_eq!((policies[1].timeout_seconds, policies[1].backoff_limit), (Some(600), Some(3)));
    let status = node_image.status.expect("status");
    let status_tags: Vec<_> = status.image_statuses["nginx"].tags.iter().map(|t| t.tag.clone()).collect();
    assert_eq!(status_tags, ["y", "z"]);

    let mut alpha: v1alpha1::NodeImage = parse(patched(
        &nodeimage(),
        &json!({"apiVersion": "apps.kruise.io/v1alpha1", "spec": {"images": {"nginx": {"pullSecrets": null}}}}),
    ));
    let created = alpha.spec.images["nginx"].tags[0].created_at.clone();
    default_nodeimage_v1alpha1_at(&mut alpha, &now);
    assert_eq!(alpha.spec.images["nginx"].tags[0].created_at, created, "an explicit createdAt stays");
}

// ---------------------------------------------------------------------------------------------
// ContainerRecreateRequest

fn crr() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ContainerRecreateRequest",
        "metadata": {"name": "restart-app", "namespace": "default"},
        "spec": {
            "podName": "web-0",
            "containers": [{"name": "app"}, {"name": "sidecar"}],
            "strategy": {"failurePolicy": "Fail", "orderedRecreate": false, "terminationGracePeriodSeconds": 30,
                         "unreadyGracePeriodSeconds": 3, "minStartedSeconds": 10},
            "activeDeadlineSeconds": 300,
            "ttlSecondsAfterFinished": 1800
        }
    })
}

fn crr_errors(patch: &Value) -> Vec<String> {
    let mut request: v1beta1::ContainerRecreateRequest = parse(patched(&crr(), patch));
    default_containerrecreaterequest_v1beta1(&mut request);
    paths(&validate_containerrecreaterequest_v1beta1(&request, None))
}

#[test]
fn containerrecreaterequest_rules() {
    assert_eq!(crr_errors(&json!({})), Vec::<String>::new());
    let mut alpha: v1alpha1::ContainerRecreateRequest =
        parse(patched(&crr(), &json!({"apiVersion": "apps.kruise.io/v1alpha1"})));
    default_containerrecreaterequest_v1alpha1(&mut alpha);
    assert!(validate_containerrecreaterequest_v1alpha1(&alpha, None).is_empty());

    let cases = vec![
        ("podName required", json!({"spec": {"podName": ""}}), vec!["spec.podName"]),
        ("containers required", json!({"spec": {"containers": []}}), vec!["spec.containers"]),
        (
            "container names required",
            json!({"spec": {"containers": [{"name": ""}]}}),
            vec!["spec.containers[0].name"],
        ),
        (
            "container names unique",
            json!({"spec": {"containers": [{"name": "app"}, {"name": "app"}]}}),
            vec!["spec.containers[1].name"],
        ),
        (
            "deadline at least 3s",
            json!({"spec": {"activeDeadlineSeconds": 2}}),
            vec!["spec.activeDeadlineSeconds"],
        ),
        (
            "ttl non-negative",
            json!({"spec": {"ttlSecondsAfterFinished": -1}}),
            vec!["spec.ttlSecondsAfterFinished"],
        ),
        (
            "grace periods non-negative",
            json!({"spec": {"strategy": {"terminationGracePeriodSeconds": -1, "unreadyGracePeriodSeconds": -1, "minStartedSeconds": -1}}}),
            vec![
                "spec.strategy.terminationGracePeriodSeconds",
                "spec.strategy.unreadyGracePeriodSeconds",
                "spec.strategy.minStartedSeconds",
            ],
        ),
        (
            "failure policy enum",
            json!({"spec": {"strategy": {"failurePolicy": "Retry"}}}),
            vec!["spec.strategy.failurePolicy"],
        ),
    ];
    check("ContainerRecreateRequest", crr_errors, cases);
}

#[test]
fn containerrecreaterequest_updates() {
    let labels = json!({"metadata": {"labels": {"crr.apps.kruise.io/pod-uid": "u1", "crr.apps.kruise.io/node-name": "n1"}}});
    let old: v1beta1::ContainerRecreateRequest = parse(patched(&crr(), &labels));
    let mut new = old.clone();
    new.metadata.finalizers = Some(vec!["crr.apps.kruise.io/unready-acquired".into()]);
    if let Some(labels) = new.metadata.labels.as_mut() {
        labels.insert("crr.apps.kruise.io/active".into(), "false".into());
    }
    assert!(validate_containerrecreaterequest_v1beta1(&new, Some(&old)).is_empty());
    // Spec checks are create-only: an old object is not re-judged.
    new.spec.active_deadline_seconds = Some(1);
    if let Some(labels) = new.metadata.labels.as_mut() {
        labels.insert("crr.apps.kruise.io/pod-uid".into(), "u2".into());
        labels.remove("crr.apps.kruise.io/node-name");
    }
    assert_eq!(
        paths(&validate_containerrecreaterequest_v1beta1(&new, Some(&old))),
        [
            "spec",
            "metadata.labels[crr.apps.kruise.io/pod-uid]",
            "metadata.labels[crr.apps.kruise.io/node-name]"
        ]
    );

    let key = "crr.apps.kruise.io/unready-acquired";
    let old_alpha: v1alpha1::ContainerRecreateRequest = parse(patched(
        &crr(),
        &json!({"apiVersion": "apps.kruise.io/v1alpha1", "metadata": {"annotations": {key: "2024-01-01T00:00:00Z"}}}),
    ));
    let mut alpha = old_alpha.clone();
    alpha.metadata.annotations = None;
    assert_eq!(
        paths(&validate_containerrecreaterequest_v1alpha1(&alpha, Some(&old_alpha))),
        [format!("metadata.annotations[{key}]")]
    );
}

#[test]
fn containerrecreaterequest_defaults_and_pod_injection() {
    let mut request: v1beta1::ContainerRecreateRequest =
        parse(patched(&crr(), &json!({"spec": {"strategy": null}})));
    default_containerrecreaterequest_v1beta1(&mut request);
    let strategy = request.spec.strategy.clone().expect("strategy");
    assert_eq!(strategy.failure_policy, v1beta1::ContainerRecreateRequestFailurePolicyType::Fail);
    assert_eq!(strategy.termination_grace_period_seconds, None);

    let mut alpha = v1alpha1::ContainerRecreateRequest::default();
    alpha.spec.strategy = Some(v1alpha1::ContainerRecreateRequestStrategy {
        failure_policy: v1alpha1::ContainerRecreateRequestFailurePolicyType::Ignore,
        ..Default::default()
    });
    default_containerrecreaterequest_v1alpha1(&mut alpha);
    assert_eq!(
        alpha.spec.strategy.map(|s| s.failure_policy),
        Some(v1alpha1::ContainerRecreateRequestFailurePolicyType::Ignore)
    );

    let pre_stop = LifecycleHandler { exec: Some(Default::default()), ..Default::default() };
    let pod = Pod {
        metadata: ObjectMeta { name: Some("web-0".into()), uid: Some("uid-1".into()), ..Default::default() },
        spec: Some(PodSpec {
            node_name: Some("node-1".into()),
            termination_grace_period_seconds: Some(45),
            containers: vec![
                Container {
                    name: "app".into(),
                    lifecycle: Some(Lifecycle { pre_stop: Some(pre_stop), ..Default::default() }),
                    ..Default::default()
                },
                Container { name: "sidecar".into(), ..Default::default() },
            ],
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            container_statuses: Some(vec![
                ContainerStatus {
                    name: "app".into(),
                    container_id: Some("containerd://a".into()),
                    restart_count: 2,
                    ..Default::default()
                },
                ContainerStatus {
                    name: "sidecar".into(),
                    container_id: Some("containerd://b".into()),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        }),
    };
    let node_labels: BTreeMap<String, String> = [("type".to_string(), "virtual-kubelet".to_string())].into();
    let mut request: v1beta1::ContainerRecreateRequest =
        parse(patched(&crr(), &json!({"spec": {"strategy": {"terminationGracePeriodSeconds": null}}})));
    assert!(
        inject_pod_into_containerrecreaterequest_v1beta1(&mut request, &pod, Some(&node_labels)).is_empty()
    );
    let labels = request.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("crr.apps.kruise.io/node-name").map(String::as_str), Some("node-1"));
    assert_eq!(labels.get("crr.apps.kruise.io/pod-uid").map(String::as_str), Some("uid-1"));
    assert_eq!(labels.get("crr.apps.kruise.io/active").map(String::as_str), Some("true"));
    assert_eq!(labels.get("type").map(String::as_str), Some("virtual-kubelet"));
    assert_eq!(request.spec.strategy.as_ref().and_then(|s| s.termination_grace_period_seconds), Some(45));
    let app = &request.spec.containers[0];
    assert!(app.pre_stop.is_some());
    assert_eq!(
        app.status_context.as_ref().map(|c| (c.container_id.as_str(), c.restart_count)),
        Some(("containerd://a", 2))
    );
    assert!(request.spec.containers[1].pre_stop.is_none());

    // Pre-filled read-only fields and unknown containers are refused.
    let mut bad: v1beta1::ContainerRecreateRequest = parse(patched(
        &crr(),
        &json!({"spec": {"containers": [{"name": "app", "statusContext": {"containerID": "x", "restartCount": 0}}, {"name": "db"}]}}),
    ));
    assert_eq!(
        paths(&inject_pod_into_containerrecreaterequest_v1beta1(&mut bad, &pod, None)),
        ["spec.containers[0].statusContext", "spec.containers[1].name"]
    );
    let mut pending = pod.clone();
    if let Some(spec) = pending.spec.as_mut() {
        spec.node_name = None;
    }
    let mut request: v1beta1::ContainerRecreateRequest = parse(crr());
    assert_eq!(
        paths(&inject_pod_into_containerrecreaterequest_v1beta1(&mut request, &pending, None)),
        ["spec.podName"]
    );
}

// ---------------------------------------------------------------------------------------------
// EphemeralJob

fn ephemeraljob() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "EphemeralJob",
        "metadata": {"name": "debug", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "replicas": 2,
            "parallelism": 1,
            "template": {"ephemeralContainers": [{
                "name": "debugger",
                "image": "busybox:1.36",
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePolicy": "File",
                "targetContainerName": "main",
                "env": [{"name": "MODE", "value": "trace"}],
                "securityContext": {"capabilities": {"add": ["SYS_ADMIN", "NET_ADMIN"]}}
            }]},
            "ttlSecondsAfterFinished": 1800
        }
    })
}

fn ephemeraljob_errors(patch: &Value) -> Vec<String> {
    let mut job: v1alpha1::EphemeralJob = parse(patched(&ephemeraljob(), patch));
    default_ephemeraljob(&mut job);
    paths(&validate_ephemeraljob(&job, None))
}

fn with_container(extra: Value) -> Value {
    let mut container = ephemeraljob()["spec"]["template"]["ephemeralContainers"][0].clone();
    json_patch::merge(&mut container, &extra);
    json!({"spec": {"template": {"ephemeralContainers": [container]}}})
}

#[test]
fn ephemeraljob_rules() {
    assert_eq!(ephemeraljob_errors(&json!({})), Vec::<String>::new());
    let ec = "spec.template.ephemeralContainers[0]";
    let cases = vec![
        ("selector required", json!({"spec": {"selector": null}}), vec!["spec.selector".to_string()]),
        (
            "selector valid",
            json!({"spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}}),
            vec!["spec.selector.matchExpressions[0].values".into()],
        ),
        (
            "numbers",
            json!({"spec": {"replicas": -1, "parallelism": -1, "ttlSecondsAfterFinished": -1, "activeDeadlineSeconds": 0}}),
            vec![
                "spec.replicas".into(),
                "spec.parallelism".into(),
                "spec.ttlSecondsAfterFinished".into(),
                "spec.activeDeadlineSeconds".into(),
            ],
        ),
        (
            "at least one container",
            json!({"spec": {"template": {"ephemeralContainers": []}}}),
            vec!["spec.template.ephemeralContainers".into()],
        ),
        ("name is a DNS label", with_container(json!({"name": "Debugger"})), vec![format!("{ec}.name")]),
        ("image required", with_container(json!({"image": null})), vec![format!("{ec}.image")]),
        ("image trimmed", with_container(json!({"image": " busybox"})), vec![format!("{ec}.image")]),
        (
            "termination message policy enum",
            with_container(json!({"terminationMessagePolicy": "Always"})),
            vec![format!("{ec}.terminationMessagePolicy")],
        ),
        (
            "pull policy enum",
            with_container(json!({"imagePullPolicy": "Sometimes"})),
            vec![format!("{ec}.imagePullPolicy")],
        ),
        ("env names", with_container(json!({"env": [{"name": "1X"}]})), vec![format!("{ec}.env[0].name")]),
        (
            "envFrom has one source",
            with_container(json!({"envFrom": [{"prefix": "P_"}]})),
            vec![format!("{ec}.envFrom[0]")],
        ),
        (
            "no ports, resources, probes or lifecycle",
            with_container(json!({
                "ports": [{"containerPort": 80}],
                "resources": {"limits": {"cpu": "1"}},
                "readinessProbe": {"exec": {"command": ["true"]}},
                "lifecycle": {"preStop": {"exec": {"command": ["true"]}}}
            })),
            vec![
                format!("{ec}.ports"),
                format!("{ec}.resources"),
                format!("{ec}.lifecycle"),
                format!("{ec}.readinessProbe"),
            ],
        ),
        (
            "empty resources are unset, as a Go client sends them",
            with_container(json!({"resources": {}})),
            vec![],
        ),
        (
            "no subPath",
            with_container(json!({"volumeMounts": [{"name": "data", "mountPath": "/data", "subPath": "x"}]})),
            vec![format!("{ec}.volumeMounts[0].subPath")],
        ),
        (
            "names unique",
            {
                let container = ephemeraljob()["spec"]["template"]["ephemeralContainers"][0].clone();
                json!({"spec": {"template": {"ephemeralContainers": [container.clone(), container]}}})
            },
            vec!["spec.template.ephemeralContainers[1].name".into()],
        ),
    ];
    for (rule, patch, expected) in cases {
        assert_eq!(ephemeraljob_errors(&patch), expected, "EphemeralJob: {rule}");
    }

    // Without defaults the two policies are required, as upstream requires them.
    let bare: v1alpha1::EphemeralJob = parse(patched(
        &ephemeraljob(),
        &with_container(json!({"imagePullPolicy": null, "terminationMessagePolicy": null})),
    ));
    assert_eq!(
        paths(&validate_ephemeraljob(&bare, None)),
        [format!("{ec}.terminationMessagePolicy"), format!("{ec}.imagePullPolicy")]
    );
}

#[test]
fn ephemeraljob_defaults() {
    let mut job: v1alpha1::EphemeralJob = parse(patched(
        &ephemeraljob(),
        &json!({"spec": {"template": {"ephemeralContainers": [
            {"name": "a", "image": "busybox"},
            {"name": "b", "image": "busybox:1.36", "imagePullPolicy": "Never", "terminationMessagePolicy": "FallbackToLogsOnError"}
        ]}}}),
    ));
    default_ephemeraljob(&mut job);
    let containers = &job.spec.template.ephemeral_containers;
    assert_eq!(containers[0].image_pull_policy.as_deref(), Some("Always"));
    assert_eq!(containers[0].termination_message_policy.as_deref(), Some("File"));
    assert_eq!(containers[0].termination_message_path.as_deref(), Some("/dev/termination-log"));
    assert_eq!(containers[1].image_pull_policy.as_deref(), Some("Never"));
    assert_eq!(containers[1].termination_message_policy.as_deref(), Some("FallbackToLogsOnError"));
    assert_eq!((job.spec.parallelism, job.spec.ttl_seconds_after_finished), (Some(1), Some(1800)));
    let mut empty = v1alpha1::EphemeralJob::default();
    default_ephemeraljob(&mut empty);
    assert_eq!(empty, v1alpha1::EphemeralJob::default(), "nothing else is defaulted");
}

// ---------------------------------------------------------------------------------------------
// PodProbeMarker and NodePodProbe

fn podprobemarker() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "PodProbeMarker",
        "metadata": {"name": "game-server-probe", "namespace": "ns"},
        "spec": {
            "selector": {"matchLabels": {"app": "game-server"}},
            "probes": [{
                "name": "Idle",
                "containerName": "game-server",
                "probe": {"exec": {"command": ["/home/game/idle.sh"]}, "initialDelaySeconds": 10, "timeoutSeconds": 3,
                          "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
                "markerPolicy": [
                    {"state": "Succeeded", "labels": {"gameserver-idle": "true"},
                     "annotations": {"controller.kubernetes.io/pod-deletion-cost": "-10"}},
                    {"state": "Failed", "labels": {"gameserver-idle": "false"}}
                ],
                "podConditionType": "game.io/idle"
            }]
        }
    })
}

fn ppm_errors(patch: &Value) -> Vec<String> {
    let mut marker: v1alpha1::PodProbeMarker = parse(patched(&podprobemarker(), patch));
    default_podprobemarker(&mut marker);
    paths(&validate_podprobemarker(&marker, None))
}

fn with_probe(extra: Value) -> Value {
    let mut probe = podprobemarker()["spec"]["probes"][0].clone();
    json_patch::merge(&mut probe, &extra);
    json!({"spec": {"probes": [probe]}})
}

#[test]
fn podprobemarker_rules() {
    assert_eq!(ppm_errors(&json!({})), Vec::<String>::new());
    let http = with_probe(json!({"probe": {"exec": null, "httpGet": {"path": "/healthz", "port": 8080}}}));
    assert_eq!(ppm_errors(&http), Vec::<String>::new(), "the HTTP scheme is defaulted");
    let tcp = with_probe(json!({"probe": {"exec": null, "tcpSocket": {"port": "game"}}}));
    assert_eq!(ppm_errors(&tcp), Vec::<String>::new());

    let p = "spec.probes[0]";
    let second = {
        let mut probe = podprobemarker()["spec"]["probes"][0].clone();
        json_patch::merge(&mut probe, &json!({"name": "Busy"}));
        probe
    };
    let cases = vec![
        ("selector required", json!({"spec": {"selector": null}}), vec!["spec.selector".to_string()]),
        (
            "selector non-empty",
            json!({"spec": {"selector": {"matchLabels": null}}}),
            vec!["spec.selector".into()],
        ),
        ("probes required", json!({"spec": {"probes": []}}), vec!["spec.probes".into()]),
        ("name required", with_probe(json!({"name": ""})), vec![format!("{p}.name")]),
        ("name without '#'", with_probe(json!({"name": "a#b"})), vec![format!("{p}.name")]),
        ("name not a built-in condition", with_probe(json!({"name": "Ready"})), vec![format!("{p}.name")]),
        (
            "containerName required",
            with_probe(json!({"containerName": ""})),
            vec![format!("{p}.containerName")],
        ),
        ("a handler", with_probe(json!({"probe": {"exec": null}})), vec![format!("{p}.probe")]),
        (
            "one handler",
            with_probe(json!({"probe": {"tcpSocket": {"port": 80}}})),
            vec![format!("{p}.probe.tcpSocket")],
        ),
        (
            "exec command",
            with_probe(json!({"probe": {"exec": {"command": []}}})),
            vec![format!("{p}.probe.exec.command")],
        ),
        (
            "no host, valid port",
            with_probe(json!({"probe": {"exec": null, "tcpSocket": {"port": 0, "host": "10.0.0.1"}}})),
            vec![format!("{p}.probe.tcpSocket.host"), format!("{p}.probe.tcpSocket.port")],
        ),
        (
            "http scheme and headers",
            with_probe(
                json!({"probe": {"exec": null, "httpGet": {"port": 80, "scheme": "FTP", "httpHeaders": [{"name": "X Y", "value": "1"}]}}}),
            ),
            vec![format!("{p}.probe.httpGet.scheme"), format!("{p}.probe.httpGet.httpHeaders[0].name")],
        ),
        (
            "grpc unsupported",
            with_probe(json!({"probe": {"exec": null, "grpc": {"port": 9000}}})),
            vec![format!("{p}.probe.grpc")],
        ),
        (
            "timing non-negative",
            with_probe(json!({"probe": {"periodSeconds": -1, "failureThreshold": -1}})),
            vec![format!("{p}.probe.periodSeconds"), format!("{p}.probe.failureThreshold")],
        ),
        (
            "condition or markers",
            with_probe(json!({"podConditionType": "", "markerPolicy": []})),
            vec![p.to_string()],
        ),
        (
            "condition type is a qualified name",
            with_probe(json!({"podConditionType": "game.io/"})),
            vec![format!("{p}.podConditionType")],
        ),
        (
            "condition type not built-in",
            with_probe(json!({"podConditionType": "Ready"})),
            vec![format!("{p}.podConditionType")],
        ),
        (
            "marker state enum",
            with_probe(json!({"markerPolicy": [{"state": "Unknown", "labels": {"a": "b"}}]})),
            vec![format!("{p}.markerPolicy[0].state")],
        ),
        (
            "marker states unique",
            with_probe(
                json!({"markerPolicy": [{"state": "Failed", "labels": {"a": "b"}}, {"state": "Failed", "labels": {"a": "c"}}]}),
            ),
            vec![format!("{p}.markerPolicy[1].state")],
        ),
        (
            "marker has labels or annotations",
            with_probe(json!({"markerPolicy": [{"state": "Failed"}]})),
            vec![format!("{p}.markerPolicy[0]")],
        ),
        (
            "marker labels valid",
            with_probe(json!({"markerPolicy": [{"state": "Failed", "labels": {"idle": "not ok"}}]})),
            vec![format!("{p}.markerPolicy[0].labels[idle]")],
        ),
        (
            "probe names unique",
            json!({"spec": {"probes": [podprobemarker()["spec"]["probes"][0].clone(), podprobemarker()["spec"]["probes"][0].clone()]}}),
            vec!["spec.probes[1].name".into(), "spec.probes[1].podConditionType".into()],
        ),
        (
            "condition types unique",
            json!({"spec": {"probes": [podprobemarker()["spec"]["probes"][0].clone(), second]}}),
            vec!["spec.probes[1].podConditionType".into()],
        ),
    ];
    for (rule, patch, expected) in cases {
        assert_eq!(ppm_errors(&patch), expected, "PodProbeMarker: {rule}");
    }

    let old: v1alpha1::PodProbeMarker = parse(podprobemarker());
    let mut new = old.clone();
    new.spec.probes[0].probe.period_seconds = 30;
    assert!(validate_podprobemarker(&new, Some(&old)).is_empty());
    new.spec.selector = None;
    assert_eq!(paths(&validate_podprobemarker(&new, Some(&old))), ["spec.selector", "spec.selector"]);
}

#[test]
fn podprobemarker_defaults_only_fill_http_path_and_scheme() {
    let mut marker: v1alpha1::PodProbeMarker = parse(patched(
        &podprobemarker(),
        &with_probe(json!({"probe": {"exec": null, "httpGet": {"port": 80}, "periodSeconds": 0}})),
    ));
    default_podprobemarker(&mut marker);
    let probe = &marker.spec.probes[0].probe;
    let get = probe.http_get.clone().expect("http probe");
    assert_eq!((get.path.as_deref(), get.scheme.as_deref()), (Some("/"), Some("HTTP")));
    assert_eq!(probe.period_seconds, 0, "timing is left to the prober");
}

fn nodepodprobe() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodePodProbe",
        "metadata": {"name": "node-1"},
        "spec": {"podProbes": [{
            "name": "game-0", "namespace": "ns", "uid": "uid-0", "IP": "10.0.0.5",
            "probes": [{"name": "game-server-probe#Idle", "containerName": "game-server",
                        "probe": {"httpGet": {"path": "/idle", "port": 8080}}}]
        }]}
    })
}

fn npp_errors(patch: &Value) -> Vec<String> {
    let mut node_probe: v1alpha1::NodePodProbe = parse(patched(&nodepodprobe(), patch));
    default_nodepodprobe(&mut node_probe);
    paths(&validate_nodepodprobe(&node_probe, None))
}

#[test]
fn nodepodprobe_rules_and_defaults() {
    assert_eq!(npp_errors(&json!({})), Vec::<String>::new());
    let pod = nodepodprobe()["spec"]["podProbes"][0].clone();
    let with_pod = |extra: Value| {
        let mut pod = pod.clone();
        json_patch::merge(&mut pod, &extra);
        json!({"spec": {"podProbes": [pod]}})
    };
    let probe = pod["probes"][0].clone();
    let cases = vec![
        ("cluster-scoped", json!({"metadata": {"namespace": "ns"}}), vec!["metadata.namespace".to_string()]),
        (
            "pod identity required",
            with_pod(json!({"name": "", "namespace": "", "uid": ""})),
            vec![
                "spec.podProbes[0].name".into(),
                "spec.podProbes[0].namespace".into(),
                "spec.podProbes[0].uid".into(),
            ],
        ),
        (
            "pods unique",
            json!({"spec": {"podProbes": [pod.clone(), pod.clone()]}}),
            vec!["spec.podProbes[1].uid".into()],
        ),
        (
            "probe names unique",
            with_pod(json!({"probes": [probe.clone(), probe.clone()]})),
            vec!["spec.podProbes[0].probes[1].name".into()],
        ),
        (
            "probe fields required",
            with_pod(
                json!({"probes": [{"name": "", "containerName": "", "probe": {"exec": {"command": ["true"]}}}]}),
            ),
            vec![
                "spec.podProbes[0].probes[0].name".into(),
                "spec.podProbes[0].probes[0].containerName".into(),
            ],
        ),
        (
            "probe spec valid",
            with_pod(json!({"probes": [{"name": "a", "containerName": "c", "probe": {}}]})),
            vec!["spec.podProbes[0].probes[0].probe".into()],
        ),
    ];
    for (rule, patch, expected) in cases {
        assert_eq!(npp_errors(&patch), expected, "NodePodProbe: {rule}");
    }

    let mut node_probe: v1alpha1::NodePodProbe = parse(nodepodprobe());
    default_nodepodprobe(&mut node_probe);
    let get = node_probe.spec.pod_probes[0].probes[0].probe.http_get.clone().expect("http probe");
    assert_eq!((get.path.as_deref(), get.scheme.as_deref()), (Some("/idle"), Some("HTTP")));
}
