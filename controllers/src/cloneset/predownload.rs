//! Image pre-download for in-place updates (gate `PreDownloadImageForInPlaceUpdate`, upstream's
//! `cloneset_predownload_image.go`): while a CloneSet rolls out a new revision that changes
//! images, one ImagePullJob per changed container pulls the new image on the nodes of the pods
//! still at the old revision, so the in-place restart that follows does not wait for the pull.
//! The decision is [`decide`] (pure); [`reconcile`] creates the jobs and labels the revision.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, LabelSelectorRequirement, OwnerReference},
        util::intstr::IntOrString,
    },
};
use kruise_crds::{
    apps::v1beta1::{CloneSet, ImagePullJob, PodUpdatePolicy},
    common::well_known::{CONTROLLER_REVISION_HASH, IMAGE_PRE_DOWNLOAD_CREATED, IMAGE_PRE_DOWNLOAD_IGNORED},
    intstr::{partition_replicas, scaled_value},
};
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams, PostParams},
    runtime::events::EventType,
};
use serde_json::json;

use super::controller::Context;
use crate::ControllerError;

/// Upstream's `minimumReplicasToPreDownloadImage`: smaller CloneSets do not pre-download.
const MINIMUM_REPLICAS: i32 = 3;
/// Default `imagePreDownloadTimeoutSeconds`.
const DEFAULT_TIMEOUT_SECONDS: i32 = 300;
/// Finished jobs are deleted after this long.
const TTL_SECONDS_AFTER_FINISHED: i32 = 600;

/// What to do about the update revision's images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The revision is already labelled created or ignored.
    AlreadyDecided,
    /// Fewer updated-ready pods than `imagePreDownloadMinUpdatedReadyPods`: look again later.
    NotYet,
    /// Label the revision ignored, for this reason.
    Ignore(&'static str),
    /// Create one job per container with a changed image (container → image).
    Create(BTreeMap<String, String>),
}

/// What [`decide`] looks at.
#[derive(Clone, Debug)]
pub struct Inputs<'a> {
    /// The CloneSet.
    pub cs: &'a CloneSet,
    /// Labels of the update revision.
    pub update_revision_labels: &'a BTreeMap<String, String>,
    /// Whether the update revision's status numbers are this revision's (else they count 0).
    pub status_is_for_update_revision: bool,
    /// `status.updatedReadyReplicas`.
    pub updated_ready_replicas: i32,
    /// Whether pods can move from the current to the update revision in place.
    pub in_place_possible: bool,
    /// Pod templates of the current and update revisions.
    pub current_template: &'a PodTemplateSpec,
    /// The update revision's template.
    pub update_template: &'a PodTemplateSpec,
}

/// Upstream's decision, in upstream's order (the minimum of updated-ready pods first, then the
/// reasons to ignore the revision).
pub fn decide(inputs: &Inputs<'_>) -> Decision {
    let spec = &inputs.cs.spec;
    let replicas = spec.replicas.unwrap_or(1);
    let rolling = spec.update_strategy.rolling_update.as_ref();
    let strategy = rolling.and_then(|r| r.in_place_update_strategy.as_ref());
    let min_updated_ready = strategy
        .and_then(|s| s.image_pre_download_min_updated_ready_pods)
        .and_then(|min| scaled_value(&IntOrString::Int(min), replicas, true).ok())
        .unwrap_or(0);
    let updated_ready = if inputs.status_is_for_update_revision { inputs.updated_ready_replicas } else { 0 };
    if min_updated_ready > updated_ready {
        return Decision::NotYet;
    }
    let labels = inputs.update_revision_labels;
    if labels.contains_key(IMAGE_PRE_DOWNLOAD_CREATED) || labels.contains_key(IMAGE_PRE_DOWNLOAD_IGNORED) {
        return Decision::AlreadyDecided;
    }
    let Some(rolling) = rolling.filter(|r| r.pod_update_policy != PodUpdatePolicy::ReCreate) else {
        return Decision::Ignore("the update policy is ReCreate");
    };
    if replicas <= MINIMUM_REPLICAS {
        return Decision::Ignore("replicas are 3 or fewer");
    }
    let partition = partition_replicas(rolling.partition.as_ref(), Some(replicas)).unwrap_or(0);
    let max_unavailable = scaled_value(
        rolling.max_unavailable.as_ref().unwrap_or(&IntOrString::String("20%".into())),
        replicas,
        false,
    )
    .unwrap_or(0);
    if partition == 0 && max_unavailable >= replicas {
        return Decision::Ignore("every pod updates in one batch");
    }
    if !inputs.in_place_possible {
        return Decision::Ignore("the revision cannot be updated in place");
    }
    Decision::Create(changed_images(inputs.current_template, inputs.update_template))
}

/// Containers of `new` whose image differs from the same-named container of `old`, or that
/// `old` does not have.
pub fn changed_images(old: &PodTemplateSpec, new: &PodTemplateSpec) -> BTreeMap<String, String> {
    let old_images: BTreeMap<&str, &str> = old
        .spec
        .iter()
        .flat_map(|spec| &spec.containers)
        .map(|c| (c.name.as_str(), c.image.as_deref().unwrap_or_default()))
        .collect();
    new.spec
        .iter()
        .flat_map(|spec| &spec.containers)
        .filter(|c| old_images.get(c.name.as_str()).copied() != Some(c.image.as_deref().unwrap_or_default()))
        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
        .collect()
}

/// The ImagePullJob for `image` of `container`: owned by the CloneSet, named
/// `<updateRevision>-<container>`, selecting the CloneSet's pods not yet at the update revision.
pub fn job_for(
    cs: &CloneSet,
    owner: OwnerReference,
    update_revision: &ControllerRevision,
    container: &str,
    image: &str,
) -> Result<ImagePullJob, ControllerError> {
    let revision_name = update_revision.name_any();
    let revision_hash = update_revision.labels().get(CONTROLLER_REVISION_HASH).cloned().unwrap_or_default();
    let template = &cs.spec.template;
    let mut selector: LabelSelector = cs.spec.selector.clone().unwrap_or_default();
    selector.match_expressions.get_or_insert_with(Vec::new).push(LabelSelectorRequirement {
        key: CONTROLLER_REVISION_HASH.into(),
        operator: "NotIn".into(),
        values: Some(vec![revision_name.clone(), revision_hash.clone()]),
    });
    let mut labels = template.metadata.as_ref().and_then(|m| m.labels.clone()).unwrap_or_default();
    labels.insert(CONTROLLER_REVISION_HASH.into(), revision_hash);
    let annotations = template.metadata.as_ref().and_then(|m| m.annotations.clone()).unwrap_or_default();
    let pull_secrets: Vec<String> = template
        .spec
        .iter()
        .flat_map(|spec| spec.image_pull_secrets.iter().flatten())
        .map(|secret| secret.name.clone())
        .collect();
    let strategy =
        cs.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.in_place_update_strategy.as_ref());
    let parallelism =
        strategy.and_then(|s| s.image_pre_download_parallelism.clone()).unwrap_or(IntOrString::Int(1));
    let timeout =
        strategy.and_then(|s| s.image_pre_download_timeout_seconds).unwrap_or(DEFAULT_TIMEOUT_SECONDS);
    let job = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ImagePullJob",
        "metadata": {
            "name": format!("{revision_name}-{container}"),
            "namespace": cs.namespace(),
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
    cs: &CloneSet,
    owner: OwnerReference,
    inputs: &Inputs<'_>,
    update_revision: &ControllerRevision,
) -> Result<(), ControllerError> {
    let revisions: Api<ControllerRevision> =
        Api::namespaced(ctx.client.clone(), &cs.namespace().unwrap_or_default());
    let label = match decide(inputs) {
        Decision::AlreadyDecided | Decision::NotYet => return Ok(()),
        Decision::Ignore(reason) => {
            tracing::debug!(cloneset = %cs.name_any(), revision = %update_revision.name_any(), reason, "no image pre-download");
            IMAGE_PRE_DOWNLOAD_IGNORED
        }
        Decision::Create(images) => {
            let jobs: Api<ImagePullJob> =
                Api::namespaced(ctx.client.clone(), &cs.namespace().unwrap_or_default());
            for (container, image) in images {
                let job = job_for(cs, owner.clone(), update_revision, &container, &image)?;
                let name = job.name_any();
                match jobs.create(&PostParams::default(), &job).await {
                    Ok(_) => ctx.event(
                        cs,
                        EventType::Normal,
                        "CreatedImagePullJob",
                        format!("created ImagePullJob {name} for image: {image}"),
                    ),
                    Err(kube::Error::Api(status)) if status.code == 409 => {}
                    Err(error) => ctx.event(
                        cs,
                        EventType::Normal,
                        "FailedCreateImagePullJob",
                        format!("failed to create ImagePullJob {name}: {error}"),
                    ),
                }
            }
            IMAGE_PRE_DOWNLOAD_CREATED
        }
    };
    let patch = json!({"metadata": {"labels": {label: "true"}}});
    revisions.patch(&update_revision.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await?;
    Ok(())
}

/// Deletes the ImagePullJobs this CloneSet owns (its rollout converged; finished jobs would also
/// go after their TTL).
pub async fn delete_jobs(ctx: &Context, cs: &CloneSet) -> Result<(), ControllerError> {
    let uid = cs.uid().unwrap_or_default();
    let jobs: Api<ImagePullJob> = Api::namespaced(ctx.client.clone(), &cs.namespace().unwrap_or_default());
    for job in jobs.list(&Default::default()).await?.items {
        let owned = job.owner_references().iter().any(|o| o.controller == Some(true) && o.uid == uid);
        if owned {
            match jobs.delete(&job.name_any(), &Default::default()).await {
                Ok(_) => {
                    tracing::info!(cloneset = %cs.name_any(), job = %job.name_any(), "deleted the pre-download ImagePullJob")
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

    fn cloneset(replicas: i32, rolling: serde_json::Value) -> CloneSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}},
                     "updateStrategy": {"rollingUpdate": rolling}},
        }))
        .unwrap()
    }

    #[test]
    fn decision_table() {
        let old = template(&[("app", "nginx:1.25"), ("sidecar", "envoy:1")]);
        let new = template(&[("app", "nginx:1.26"), ("sidecar", "envoy:1"), ("log", "fluent:2")]);
        let in_place = json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1});
        let created: BTreeMap<String, String> =
            [("app".into(), "nginx:1.26".into()), ("log".into(), "fluent:2".into())].into();
        let labelled = |key: &str| BTreeMap::from([(key.to_string(), "true".to_string())]);
        let none = BTreeMap::new();
        let created_label = labelled(IMAGE_PRE_DOWNLOAD_CREATED);
        let ignored_label = labelled(IMAGE_PRE_DOWNLOAD_IGNORED);
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, CloneSet, &BTreeMap<String, String>, bool, i32, bool, Decision)> = vec![
            (
                "in place, 5 replicas, 1 at a time",
                cloneset(5, in_place.clone()),
                &none,
                true,
                0,
                true,
                Decision::Create(created.clone()),
            ),
            (
                "already created",
                cloneset(5, in_place.clone()),
                &created_label,
                true,
                0,
                true,
                Decision::AlreadyDecided,
            ),
            (
                "already ignored",
                cloneset(5, in_place.clone()),
                &ignored_label,
                true,
                0,
                true,
                Decision::AlreadyDecided,
            ),
            (
                "ReCreate",
                cloneset(5, json!({"podUpdatePolicy": "ReCreate"})),
                &none,
                true,
                0,
                true,
                Decision::Ignore("the update policy is ReCreate"),
            ),
            (
                "3 replicas",
                cloneset(3, in_place.clone()),
                &none,
                true,
                0,
                true,
                Decision::Ignore("replicas are 3 or fewer"),
            ),
            (
                "one batch: maxUnavailable 100%",
                cloneset(5, json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "100%"})),
                &none,
                true,
                0,
                true,
                Decision::Ignore("every pod updates in one batch"),
            ),
            (
                "a partition splits even a 100% batch",
                cloneset(
                    5,
                    json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "100%", "partition": 2}),
                ),
                &none,
                true,
                0,
                true,
                Decision::Create(created.clone()),
            ),
            (
                "not in place",
                cloneset(5, in_place.clone()),
                &none,
                true,
                0,
                false,
                Decision::Ignore("the revision cannot be updated in place"),
            ),
            (
                "2 updated-ready pods wanted, 1 there",
                cloneset(
                    5,
                    json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1, "inPlaceUpdateStrategy": {"imagePreDownloadMinUpdatedReadyPods": 2}}),
                ),
                &none,
                true,
                1,
                true,
                Decision::NotYet,
            ),
            (
                "2 wanted, 2 there",
                cloneset(
                    5,
                    json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1, "inPlaceUpdateStrategy": {"imagePreDownloadMinUpdatedReadyPods": 2}}),
                ),
                &none,
                true,
                2,
                true,
                Decision::Create(created.clone()),
            ),
            (
                "the status counts another revision's pods",
                cloneset(
                    5,
                    json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1, "inPlaceUpdateStrategy": {"imagePreDownloadMinUpdatedReadyPods": 2}}),
                ),
                &none,
                false,
                5,
                true,
                Decision::NotYet,
            ),
        ];
        for (name, cs, labels, for_update, updated_ready, in_place_possible, want) in cases {
            let inputs = Inputs {
                cs: &cs,
                update_revision_labels: labels,
                status_is_for_update_revision: for_update,
                updated_ready_replicas: updated_ready,
                in_place_possible,
                current_template: &old,
                update_template: &new,
            };
            assert_eq!(decide(&inputs), want, "{name}");
        }
    }

    #[test]
    fn the_job_selects_old_pods_and_carries_the_strategy() {
        let cs = cloneset(
            5,
            json!({"podUpdatePolicy": "InPlaceIfPossible", "inPlaceUpdateStrategy": {"imagePreDownloadParallelism": "50%", "imagePreDownloadTimeoutSeconds": 60}}),
        );
        let revision: ControllerRevision = serde_json::from_value(json!({
            "metadata": {"name": "web-7d9f", "labels": {"controller-revision-hash": "web-7d9f"}}, "revision": 2
        }))
        .unwrap();
        let owner = OwnerReference {
            api_version: "apps.kruise.io/v1beta1".into(),
            kind: "CloneSet".into(),
            name: "web".into(),
            uid: "u1".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        };
        let job = serde_json::to_value(job_for(&cs, owner, &revision, "app", "nginx:1.26").unwrap()).unwrap();
        assert_eq!(job["metadata"]["name"], "web-7d9f-app");
        assert_eq!(job["metadata"]["ownerReferences"][0]["uid"], "u1");
        assert_eq!(job["spec"]["image"], "nginx:1.26");
        assert_eq!(job["spec"]["parallelism"], "50%");
        assert_eq!(job["spec"]["pullPolicy"], json!({"backoffLimit": 1, "timeoutSeconds": 60}));
        assert_eq!(
            job["spec"]["completionPolicy"],
            json!({"type": "Always", "ttlSecondsAfterFinished": 600})
        );
        assert_eq!(job["spec"]["podSelector"]["matchLabels"], json!({"app": "web"}));
        assert_eq!(
            job["spec"]["podSelector"]["matchExpressions"],
            json!([{"key": "controller-revision-hash", "operator": "NotIn", "values": ["web-7d9f", "web-7d9f"]}])
        );
        assert_eq!(job["metadata"]["labels"]["controller-revision-hash"], "web-7d9f");
    }

    #[test]
    fn changed_images_table() {
        let cases = [
            (template(&[("a", "x:1")]), template(&[("a", "x:1")]), vec![]),
            (template(&[("a", "x:1")]), template(&[("a", "x:2")]), vec![("a", "x:2")]),
            (template(&[("a", "x:1")]), template(&[("a", "x:1"), ("b", "y:1")]), vec![("b", "y:1")]),
            (template(&[("a", "x:1"), ("b", "y:1")]), template(&[("a", "x:1")]), vec![]),
        ];
        for (old, new, want) in cases {
            let want: BTreeMap<String, String> =
                want.into_iter().map(|(c, i)| (c.to_string(), i.to_string())).collect();
            assert_eq!(changed_images(&old, &new), want);
        }
    }
}
