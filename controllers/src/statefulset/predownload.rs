//! Image pre-download for in-place updates (gate `PreDownloadImageForInPlaceUpdate`, upstream
//! `statefulset_predownload_image.go`): while a set rolls out a revision that changes images in
//! place, one ImagePullJob per changed container pulls the new image on the nodes of the pods
//! still at another revision, so the in-place restart that follows does not wait for the pull.
//! Once the rollout converged (current revision = update revision) the set's jobs are deleted.
//!
//! Knobs: upstream reads the set's annotations `apps.kruise.io/image-predownload-parallelism`,
//! `-timeout-seconds` and `-min-updated-ready-pods`; the v1beta1 `inPlaceUpdateStrategy` fields
//! of the same names are honoured too, and win when set. [`decide`] is pure; [`reconcile`]
//! creates the jobs and labels the revision.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, LabelSelectorRequirement, OwnerReference},
        util::intstr::IntOrString,
    },
};
use kruise_crds::{
    apps::v1beta1::{ImagePullJob, PodUpdatePolicy, StatefulSet, StatefulSetUpdateStrategyType},
    common::well_known::{
        CONTROLLER_REVISION_HASH, IMAGE_PRE_DOWNLOAD_CREATED, IMAGE_PRE_DOWNLOAD_IGNORED,
        IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS, IMAGE_PRE_DOWNLOAD_PARALLELISM,
        IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS,
    },
    intstr::scaled_value,
};
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

use super::controller::Context;
use crate::{
    ControllerError,
    cloneset::{predownload::changed_images, revision::REVISION_HASH_LABEL},
    runtime::events::EventKind,
};

/// Upstream's `minimumReplicasToPreDownloadImage`: smaller sets do not pre-download.
const MINIMUM_REPLICAS: i32 = 3;
/// Default pull timeout of a job.
const DEFAULT_TIMEOUT_SECONDS: i32 = 300;
/// Finished jobs are deleted after this long.
const TTL_SECONDS_AFTER_FINISHED: i32 = 600;

/// What to do about the update revision's images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The revision is already labelled created or ignored.
    AlreadyDecided,
    /// Fewer updated-ready pods than asked for: look again later.
    NotYet,
    /// Label the revision ignored, for this reason.
    Ignore(&'static str),
    /// Create one job per container whose image changed (container → image).
    Create(BTreeMap<String, String>),
}

/// What [`decide`] looks at.
#[derive(Clone, Debug)]
pub struct Inputs<'a> {
    /// The set.
    pub set: &'a StatefulSet,
    /// Labels of the update revision.
    pub update_revision_labels: &'a BTreeMap<String, String>,
    /// Whether `status.updateRevision` is this update revision (else its counts are 0).
    pub status_is_for_update_revision: bool,
    /// `status.updatedReadyReplicas`.
    pub updated_ready_replicas: i32,
    /// Whether pods can move from the current to the update revision in place.
    pub in_place_possible: bool,
    /// Pod template of the current revision.
    pub current_template: &'a PodTemplateSpec,
    /// Pod template of the update revision.
    pub update_template: &'a PodTemplateSpec,
}

fn annotation<'a>(set: &'a StatefulSet, key: &str) -> Option<&'a str> {
    set.metadata.annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str)
}

fn strategy(set: &StatefulSet) -> Option<&kruise_crds::common::InPlaceUpdateStrategy> {
    set.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.in_place_update_strategy.as_ref())
}

/// The minimum of updated-ready pods before pre-downloading (an int or percent of replicas,
/// rounded up).
fn min_updated_ready(set: &StatefulSet) -> i32 {
    let replicas = set.spec.replicas.unwrap_or(1);
    let value = match strategy(set).and_then(|s| s.image_pre_download_min_updated_ready_pods) {
        Some(count) => IntOrString::Int(count),
        None => match annotation(set, IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS) {
            Some(text) => match text.parse::<i32>() {
                Ok(count) => IntOrString::Int(count),
                Err(_) => IntOrString::String(text.to_string()),
            },
            None => return 0,
        },
    };
    scaled_value(&value, replicas, true).unwrap_or(0)
}

/// Upstream's decision, in upstream's order.
pub fn decide(inputs: &Inputs<'_>) -> Decision {
    let set = inputs.set;
    let updated_ready = if inputs.status_is_for_update_revision { inputs.updated_ready_replicas } else { 0 };
    if min_updated_ready(set) > updated_ready {
        return Decision::NotYet;
    }
    let labels = inputs.update_revision_labels;
    if labels.contains_key(IMAGE_PRE_DOWNLOAD_CREATED) || labels.contains_key(IMAGE_PRE_DOWNLOAD_IGNORED) {
        return Decision::AlreadyDecided;
    }
    let strategy = &set.spec.update_strategy;
    let rolling = match &strategy.rolling_update {
        Some(rolling)
            if strategy.type_ != StatefulSetUpdateStrategyType::OnDelete
                && rolling.pod_update_policy != PodUpdatePolicy::ReCreate =>
        {
            rolling
        }
        _ => return Decision::Ignore("the update is OnDelete or ReCreate"),
    };
    let replicas = set.spec.replicas.unwrap_or(1);
    if replicas <= MINIMUM_REPLICAS {
        return Decision::Ignore("replicas are 3 or fewer");
    }
    let partition = rolling.partition.unwrap_or(0);
    let max_unavailable =
        scaled_value(rolling.max_unavailable.as_ref().unwrap_or(&IntOrString::Int(1)), replicas, false)
            .unwrap_or(0);
    if partition == 0 && max_unavailable >= replicas {
        return Decision::Ignore("every pod updates in one batch");
    }
    if !inputs.in_place_possible {
        return Decision::Ignore("the revision cannot be updated in place");
    }
    Decision::Create(changed_images(inputs.current_template, inputs.update_template))
}

/// The ImagePullJob for `image` of `container`: `<updateRevision>-<container>`, owned by the
/// set, pulling on the set's pods not at the update revision.
pub fn job_for(
    set: &StatefulSet,
    owner: OwnerReference,
    update_revision: &ControllerRevision,
    container: &str,
    image: &str,
) -> Result<ImagePullJob, ControllerError> {
    let revision_name = update_revision.name_any();
    let revision_hash = update_revision.labels().get(REVISION_HASH_LABEL).cloned().unwrap_or_default();
    let template = &set.spec.template;
    let mut selector: LabelSelector = set.spec.selector.clone().unwrap_or_default();
    selector.match_expressions.get_or_insert_with(Vec::new).push(LabelSelectorRequirement {
        key: CONTROLLER_REVISION_HASH.into(),
        operator: "NotIn".into(),
        values: Some(vec![revision_name.clone(), revision_hash.clone()]),
    });
    let mut labels = template.metadata.as_ref().and_then(|m| m.labels.clone()).unwrap_or_default();
    labels.insert(REVISION_HASH_LABEL.into(), revision_hash);
    let annotations = template.metadata.as_ref().and_then(|m| m.annotations.clone()).unwrap_or_default();
    let pull_secrets: Vec<String> = template
        .spec
        .iter()
        .flat_map(|spec| spec.image_pull_secrets.iter().flatten())
        .map(|secret| secret.name.clone())
        .collect();
    let parallelism = strategy(set)
        .and_then(|s| s.image_pre_download_parallelism.clone())
        .or_else(|| {
            annotation(set, IMAGE_PRE_DOWNLOAD_PARALLELISM).and_then(|v| v.parse().ok()).map(IntOrString::Int)
        })
        .unwrap_or(IntOrString::Int(1));
    let timeout = strategy(set)
        .and_then(|s| s.image_pre_download_timeout_seconds)
        .or_else(|| annotation(set, IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS).and_then(|v| v.parse().ok()))
        .unwrap_or(DEFAULT_TIMEOUT_SECONDS);
    let job = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ImagePullJob",
        "metadata": {
            "name": format!("{revision_name}-{container}"),
            "namespace": set.namespace(),
            "labels": labels,
            "ownerReferences": [owner],
        },
        "spec": {
            "image": image,
            "pullSecrets": pull_secrets,
            "podSelector": selector,
            "parallelism": parallelism,
            "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": timeout},
            "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED},
            "sandboxConfig": {"annotations": annotations, "labels": labels},
        },
    });
    Ok(serde_json::from_value(job)?)
}

/// Creates the jobs the decision asks for and labels the update revision created or ignored.
pub async fn reconcile(
    ctx: &Context,
    set: &StatefulSet,
    owner: OwnerReference,
    inputs: &Inputs<'_>,
    update_revision: &ControllerRevision,
) -> Result<(), ControllerError> {
    let namespace = set.namespace().unwrap_or_default();
    let label = match decide(inputs) {
        Decision::AlreadyDecided | Decision::NotYet => return Ok(()),
        Decision::Ignore(reason) => {
            tracing::debug!(statefulset = %set.name_any(), revision = %update_revision.name_any(), reason, "no image pre-download");
            IMAGE_PRE_DOWNLOAD_IGNORED
        }
        Decision::Create(images) => {
            let jobs: Api<ImagePullJob> = Api::namespaced(ctx.client.clone(), &namespace);
            for (container, image) in images {
                let job = job_for(set, owner.clone(), update_revision, &container, &image)?;
                let name = job.name_any();
                match jobs.create(&PostParams::default(), &job).await {
                    Ok(_) => ctx.event(
                        set,
                        EventKind::Normal,
                        "CreatedImagePullJob",
                        format!("created ImagePullJob {name} for image: {image}"),
                    ),
                    Err(kube::Error::Api(status)) if status.code == 409 => {}
                    Err(error) => ctx.event(
                        set,
                        EventKind::Normal,
                        "FailedCreateImagePullJob",
                        format!("failed to create ImagePullJob {name}: {error}"),
                    ),
                }
            }
            IMAGE_PRE_DOWNLOAD_CREATED
        }
    };
    let revisions: Api<ControllerRevision> = Api::namespaced(ctx.client.clone(), &namespace);
    let patch = json!({"metadata": {"labels": {label: "true"}}});
    revisions.patch(&update_revision.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await?;
    Ok(())
}

/// Deletes the ImagePullJobs the set controls (its rollout converged).
pub async fn delete_jobs(ctx: &Context, set: &StatefulSet) -> Result<(), ControllerError> {
    let uid = set.uid().unwrap_or_default();
    let jobs: Api<ImagePullJob> = Api::namespaced(ctx.client.clone(), &set.namespace().unwrap_or_default());
    for job in jobs.list(&Default::default()).await?.items {
        if job.owner_references().iter().any(|o| o.controller == Some(true) && o.uid == uid) {
            match jobs.delete(&job.name_any(), &Default::default()).await {
                Ok(_) => {
                    tracing::info!(statefulset = %set.name_any(), job = %job.name_any(), "deleted the pre-download ImagePullJob")
                }
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error.into()),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    fn template(images: &[(&str, &str)]) -> PodTemplateSpec {
        serde_json::from_value(json!({"spec": {"containers": images.iter().map(|(n, i)| json!({"name": n, "image": i})).collect::<Vec<_>>()}})).unwrap()
    }

    fn set(replicas: i32, strategy: serde_json::Value, annotations: serde_json::Value) -> StatefulSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default", "annotations": annotations},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}},
                     "updateStrategy": strategy},
        }))
        .unwrap()
    }

    fn rolling(extra: serde_json::Value) -> serde_json::Value {
        let mut rolling =
            json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1, "partition": 0});
        if let (Some(target), serde_json::Value::Object(extra)) = (rolling.as_object_mut(), extra) {
            target.extend(extra);
        }
        json!({"type": "RollingUpdate", "rollingUpdate": rolling})
    }

    #[test]
    #[allow(clippy::type_complexity)] // table rows are tuples
    fn decision_table() {
        let old = template(&[("app", "nginx:1.25"), ("sidecar", "envoy:1")]);
        let new = template(&[("app", "nginx:1.26"), ("sidecar", "envoy:1")]);
        let created: BTreeMap<String, String> = [("app".into(), "nginx:1.26".into())].into();
        let none = BTreeMap::new();
        let labelled = BTreeMap::from([(IMAGE_PRE_DOWNLOAD_IGNORED.to_string(), "true".to_string())]);
        let no_annotations = json!({});
        let cases: Vec<(&str, StatefulSet, &BTreeMap<String, String>, i32, bool, Decision)> = vec![
            (
                "in place, 5 replicas",
                set(5, rolling(json!({})), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Create(created.clone()),
            ),
            (
                "already decided",
                set(5, rolling(json!({})), no_annotations.clone()),
                &labelled,
                0,
                true,
                Decision::AlreadyDecided,
            ),
            (
                "ReCreate",
                set(5, rolling(json!({"podUpdatePolicy": "ReCreate"})), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Ignore("the update is OnDelete or ReCreate"),
            ),
            (
                "OnDelete",
                set(5, json!({"type": "OnDelete"}), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Ignore("the update is OnDelete or ReCreate"),
            ),
            (
                "3 replicas",
                set(3, rolling(json!({})), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Ignore("replicas are 3 or fewer"),
            ),
            (
                "one batch",
                set(5, rolling(json!({"maxUnavailable": "100%"})), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Ignore("every pod updates in one batch"),
            ),
            (
                "partition splits the batch",
                set(5, rolling(json!({"maxUnavailable": "100%", "partition": 2})), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Create(created.clone()),
            ),
            (
                "not in place",
                set(5, rolling(json!({})), no_annotations.clone()),
                &none,
                0,
                false,
                Decision::Ignore("the revision cannot be updated in place"),
            ),
            (
                "annotation wants 2 updated-ready pods",
                set(5, rolling(json!({})), json!({IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS: "2"})),
                &none,
                1,
                true,
                Decision::NotYet,
            ),
            (
                "40% of 5 is 2, there are 2",
                set(5, rolling(json!({})), json!({IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS: "40%"})),
                &none,
                2,
                true,
                Decision::Create(created.clone()),
            ),
        ];
        for (name, set, labels, updated_ready, in_place_possible, want) in cases {
            let inputs = Inputs {
                set: &set,
                update_revision_labels: labels,
                status_is_for_update_revision: true,
                updated_ready_replicas: updated_ready,
                in_place_possible,
                current_template: &old,
                update_template: &new,
            };
            assert_eq!(decide(&inputs), want, "{name}");
        }
    }

    #[test]
    fn the_job_selects_pods_of_other_revisions() {
        let sts = set(
            5,
            rolling(json!({})),
            json!({IMAGE_PRE_DOWNLOAD_PARALLELISM: "3", IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS: "90"}),
        );
        let revision: ControllerRevision = serde_json::from_value(json!({
            "metadata": {"name": "web-7d9f", "labels": {REVISION_HASH_LABEL: "7d9f"}}, "revision": 2
        }))
        .unwrap();
        let owner = OwnerReference {
            kind: "StatefulSet".into(),
            name: "web".into(),
            uid: "u1".into(),
            controller: Some(true),
            ..Default::default()
        };
        let job =
            serde_json::to_value(job_for(&sts, owner, &revision, "app", "nginx:1.26").unwrap()).unwrap();
        assert_eq!(job["metadata"]["name"], "web-7d9f-app");
        assert_eq!(job["metadata"]["labels"], json!({"app": "web", REVISION_HASH_LABEL: "7d9f"}));
        assert_eq!(job["spec"]["parallelism"], 3);
        assert_eq!(job["spec"]["pullPolicy"], json!({"backoffLimit": 1, "timeoutSeconds": 90}));
        assert_eq!(
            job["spec"]["podSelector"]["matchExpressions"],
            json!([{"key": "controller-revision-hash", "operator": "NotIn", "values": ["web-7d9f", "7d9f"]}])
        );
        let with_fields = set(
            5,
            rolling(json!({"inPlaceUpdateStrategy": {"imagePreDownloadParallelism": 4}})),
            json!({IMAGE_PRE_DOWNLOAD_PARALLELISM: "3"}),
        );
        let owner = OwnerReference::default();
        let job = serde_json::to_value(job_for(&with_fields, owner, &revision, "app", "x").unwrap()).unwrap();
        assert_eq!(job["spec"]["parallelism"], 4, "the spec field wins over the annotation");
        assert_eq!(job["spec"]["pullPolicy"]["timeoutSeconds"], 300);
    }
}
