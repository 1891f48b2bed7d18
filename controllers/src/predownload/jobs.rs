//! The ImagePullJobs of a rollout: how they look ([`job_for`]), creating them and labelling the
//! revision ([`reconcile`]), deleting them ([`delete_jobs`]).

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, LabelSelectorRequirement, OwnerReference},
        util::intstr::IntOrString,
    },
};
use kruise_crds::{
    apps::v1beta1::ImagePullJob,
    common::{
        InPlaceUpdateStrategy,
        well_known::{
            CONTROLLER_REVISION_HASH, IMAGE_PRE_DOWNLOAD_CREATED, IMAGE_PRE_DOWNLOAD_IGNORED,
            IMAGE_PRE_DOWNLOAD_PARALLELISM, IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS,
        },
    },
};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

use super::Decision;
use crate::{ControllerError, workload::revision::REVISION_HASH_LABEL};

/// Default pull timeout of a job.
pub const DEFAULT_TIMEOUT_SECONDS: i32 = 300;
/// Finished jobs are deleted after this long.
pub const TTL_SECONDS_AFTER_FINISHED: i32 = 600;

/// How hard the jobs pull: from the `inPlaceUpdateStrategy` fields when set, else from the
/// workload's `apps.kruise.io/image-predownload-{parallelism,timeout-seconds}` annotations
/// (upstream's only source for StatefulSet and DaemonSet), else one node at a time for 300s.
#[derive(Clone, Debug, PartialEq)]
pub struct Knobs {
    /// Nodes pulling at once.
    pub parallelism: IntOrString,
    /// Pull timeout of each node.
    pub timeout_seconds: i32,
}

impl Default for Knobs {
    fn default() -> Self {
        Self { parallelism: IntOrString::Int(1), timeout_seconds: DEFAULT_TIMEOUT_SECONDS }
    }
}

impl Knobs {
    /// The knobs of a workload; pass `None` for a source the workload does not read.
    pub fn resolve(
        strategy: Option<&InPlaceUpdateStrategy>,
        annotations: Option<&BTreeMap<String, String>>,
    ) -> Self {
        let annotation = |key: &str| annotations.and_then(|a| a.get(key)).map(String::as_str);
        let defaults = Self::default();
        Self {
            parallelism: strategy
                .and_then(|s| s.image_pre_download_parallelism.clone())
                .or_else(|| {
                    annotation(IMAGE_PRE_DOWNLOAD_PARALLELISM)
                        .and_then(|v| v.parse().ok())
                        .map(IntOrString::Int)
                })
                .unwrap_or(defaults.parallelism),
            timeout_seconds: strategy
                .and_then(|s| s.image_pre_download_timeout_seconds)
                .or_else(|| annotation(IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS).and_then(|v| v.parse().ok()))
                .unwrap_or(defaults.timeout_seconds),
        }
    }
}

/// What the jobs of one workload are made from.
#[derive(Clone, Debug)]
pub struct Workload<'a> {
    /// Kind, for logs.
    pub kind: &'static str,
    /// Namespace of the workload and of its jobs.
    pub namespace: &'a str,
    /// Name, for logs.
    pub name: &'a str,
    /// The workload as the jobs' controller.
    pub owner: OwnerReference,
    /// The workload's pod selector.
    pub selector: Option<&'a LabelSelector>,
    /// The workload's pod template (labels, annotations and pull secrets of the jobs).
    pub template: &'a PodTemplateSpec,
    /// Parallelism and timeout.
    pub knobs: Knobs,
}

/// The ImagePullJob for `image` of `container`: `<updateRevision>-<container>`, owned by the
/// workload, pulling on the workload's pods not at the update revision (by revision name or
/// hash), labelled and sandboxed like the template.
pub fn job_for(
    workload: &Workload<'_>,
    update_revision: &ControllerRevision,
    container: &str,
    image: &str,
) -> Result<ImagePullJob, ControllerError> {
    let revision_name = update_revision.name_any();
    // CloneSet and StatefulSet revisions carry their hash in `controller.kubernetes.io/hash`,
    // DaemonSet revisions (as upstream's) in `controller-revision-hash`.
    let labels = update_revision.labels();
    let revision_hash = labels
        .get(REVISION_HASH_LABEL)
        .or_else(|| labels.get(CONTROLLER_REVISION_HASH))
        .cloned()
        .unwrap_or_default();
    let template = workload.template;
    let mut selector: LabelSelector = workload.selector.cloned().unwrap_or_default();
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
    let job = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ImagePullJob",
        "metadata": {
            "name": format!("{revision_name}-{container}"),
            "namespace": workload.namespace,
            "labels": labels,
            "ownerReferences": [workload.owner],
        },
        "spec": {
            "image": image,
            "pullSecrets": pull_secrets,
            "podSelector": selector,
            "parallelism": workload.knobs.parallelism,
            "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": workload.knobs.timeout_seconds},
            "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED},
            "sandboxConfig": {"annotations": annotations, "labels": labels},
        },
    });
    Ok(serde_json::from_value(job)?)
}

/// Carries out `decision`: creates the jobs it asks for (an existing job is kept; a failed
/// creation is reported and skipped, as upstream) and labels the update revision created or
/// ignored. `event(reason, note)` is called for each job created or failed, for the workload's
/// Normal events.
pub async fn reconcile(
    client: &Client,
    workload: &Workload<'_>,
    decision: Decision,
    update_revision: &ControllerRevision,
    mut event: impl FnMut(&'static str, String),
) -> Result<(), ControllerError> {
    let label = match decision {
        Decision::AlreadyDecided | Decision::NotYet => return Ok(()),
        Decision::Ignore(reason) => {
            tracing::debug!(kind = workload.kind, namespace = workload.namespace, name = workload.name, revision = %update_revision.name_any(), reason, "no image pre-download");
            IMAGE_PRE_DOWNLOAD_IGNORED
        }
        Decision::Create(images) => {
            let jobs: Api<ImagePullJob> = Api::namespaced(client.clone(), workload.namespace);
            for (container, image) in images {
                let job = job_for(workload, update_revision, &container, &image)?;
                let name = job.name_any();
                match jobs.create(&PostParams::default(), &job).await {
                    Ok(_) => {
                        tracing::info!(kind = workload.kind, namespace = workload.namespace, name = workload.name, job = %name, %image, "created the pre-download ImagePullJob");
                        event(
                            "CreatedImagePullJob",
                            format!("created ImagePullJob {name} for image: {image}"),
                        );
                    }
                    Err(kube::Error::Api(status)) if status.code == 409 => {}
                    Err(error) => {
                        tracing::warn!(kind = workload.kind, namespace = workload.namespace, name = workload.name, job = %name, %error, "cannot create the pre-download ImagePullJob");
                        event(
                            "FailedCreateImagePullJob",
                            format!("failed to create ImagePullJob {name}: {error}"),
                        );
                    }
                }
            }
            IMAGE_PRE_DOWNLOAD_CREATED
        }
    };
    let revisions: Api<ControllerRevision> = Api::namespaced(client.clone(), workload.namespace);
    let patch = json!({"metadata": {"labels": {label: "true"}}});
    revisions.patch(&update_revision.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await?;
    Ok(())
}

/// Deletes the ImagePullJobs controlled by the workload with `owner_uid` in `namespace` (its
/// rollout converged; finished jobs would also go after their TTL). `kind` and `name` are for
/// logs.
pub async fn delete_jobs(
    client: &Client,
    namespace: &str,
    owner_uid: &str,
    kind: &str,
    name: &str,
) -> Result<(), ControllerError> {
    let jobs: Api<ImagePullJob> = Api::namespaced(client.clone(), namespace);
    for job in jobs.list(&Default::default()).await?.items {
        if !job.owner_references().iter().any(|o| o.controller == Some(true) && o.uid == owner_uid) {
            continue;
        }
        match jobs.delete(&job.name_any(), &Default::default()).await {
            Ok(_) => {
                tracing::info!(kind, namespace, name, job = %job.name_any(), "deleted the pre-download ImagePullJob")
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

/// [`delete_jobs`] for a workload object: its namespace, uid, kind and name.
pub async fn delete_jobs_of<K: Resource<DynamicType = ()>>(
    client: &Client,
    workload: &K,
) -> Result<(), ControllerError> {
    let namespace = workload.namespace().unwrap_or_default();
    let uid = workload.uid().unwrap_or_default();
    delete_jobs(client, &namespace, &uid, &K::kind(&()), &workload.name_any()).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    fn template() -> PodTemplateSpec {
        serde_json::from_value(json!({
            "metadata": {"labels": {"app": "web"}, "annotations": {"note": "n"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.26"}], "imagePullSecrets": [{"name": "regcred"}]},
        }))
        .unwrap()
    }

    #[test]
    fn the_job_selects_pods_of_other_revisions_and_carries_the_knobs() {
        let template = template();
        let selector: LabelSelector = serde_json::from_value(json!({"matchLabels": {"app": "web"}})).unwrap();
        let revision: ControllerRevision = serde_json::from_value(json!({
            "metadata": {"name": "web-7d9f", "labels": {REVISION_HASH_LABEL: "7d9f"}}, "revision": 2
        }))
        .unwrap();
        let owner = OwnerReference {
            kind: "DaemonSet".into(),
            name: "web".into(),
            uid: "u1".into(),
            controller: Some(true),
            ..Default::default()
        };
        let workload = Workload {
            kind: "DaemonSet",
            namespace: "default",
            name: "web",
            owner,
            selector: Some(&selector),
            template: &template,
            knobs: Knobs { parallelism: IntOrString::String("50%".into()), timeout_seconds: 60 },
        };
        let job = serde_json::to_value(job_for(&workload, &revision, "app", "nginx:1.26").unwrap()).unwrap();
        assert_eq!(job["metadata"]["name"], "web-7d9f-app");
        assert_eq!(job["metadata"]["namespace"], "default");
        assert_eq!(job["metadata"]["ownerReferences"][0]["uid"], "u1");
        assert_eq!(job["metadata"]["labels"], json!({"app": "web", REVISION_HASH_LABEL: "7d9f"}));
        assert_eq!(job["spec"]["image"], "nginx:1.26");
        assert_eq!(job["spec"]["pullSecrets"], json!(["regcred"]));
        assert_eq!(job["spec"]["parallelism"], "50%");
        assert_eq!(job["spec"]["pullPolicy"], json!({"backoffLimit": 1, "timeoutSeconds": 60}));
        assert_eq!(
            job["spec"]["completionPolicy"],
            json!({"type": "Always", "ttlSecondsAfterFinished": 600})
        );
        assert_eq!(job["spec"]["podSelector"]["matchLabels"], json!({"app": "web"}));
        assert_eq!(
            job["spec"]["podSelector"]["matchExpressions"],
            json!([{"key": "controller-revision-hash", "operator": "NotIn", "values": ["web-7d9f", "7d9f"]}])
        );
        assert_eq!(job["spec"]["sandboxConfig"]["annotations"], json!({"note": "n"}));
    }

    #[test]
    fn the_job_excludes_pods_at_the_hash_whichever_label_carries_it() {
        let template = template();
        let owner = OwnerReference { kind: "DaemonSet".into(), name: "web".into(), ..Default::default() };
        let workload = Workload {
            kind: "DaemonSet",
            namespace: "default",
            name: "web",
            owner,
            selector: None,
            template: &template,
            knobs: Knobs { parallelism: IntOrString::Int(1), timeout_seconds: 60 },
        };
        for (label, expected) in [
            (REVISION_HASH_LABEL, json!(["web-7d9f", "7d9f"])),
            (CONTROLLER_REVISION_HASH, json!(["web-7d9f", "7d9f"])),
            ("unrelated", json!(["web-7d9f", ""])),
        ] {
            let revision: ControllerRevision = serde_json::from_value(json!({
                "metadata": {"name": "web-7d9f", "labels": {label: "7d9f"}}, "revision": 2
            }))
            .unwrap();
            let job =
                serde_json::to_value(job_for(&workload, &revision, "app", "nginx:1.26").unwrap()).unwrap();
            assert_eq!(
                job["spec"]["podSelector"]["matchExpressions"][0]["values"], expected,
                "hash in {label}"
            );
        }
    }

    #[test]
    fn knobs_table() {
        let strategy =
            |value: serde_json::Value| -> InPlaceUpdateStrategy { serde_json::from_value(value).unwrap() };
        let annotations = BTreeMap::from([
            (IMAGE_PRE_DOWNLOAD_PARALLELISM.to_string(), "3".to_string()),
            (IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS.to_string(), "90".to_string()),
        ]);
        let malformed = BTreeMap::from([
            (IMAGE_PRE_DOWNLOAD_PARALLELISM.to_string(), "50%".to_string()),
            (IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS.to_string(), "soon".to_string()),
        ]);
        let cases = [
            ("nothing set", None, None, IntOrString::Int(1), 300),
            ("annotations", None, Some(&annotations), IntOrString::Int(3), 90),
            ("malformed annotations are ignored", None, Some(&malformed), IntOrString::Int(1), 300),
            (
                "fields win",
                Some(strategy(
                    json!({"imagePreDownloadParallelism": "20%", "imagePreDownloadTimeoutSeconds": 30}),
                )),
                Some(&annotations),
                IntOrString::String("20%".into()),
                30,
            ),
            (
                "an unset field falls back to the annotation",
                Some(strategy(json!({"imagePreDownloadParallelism": 4}))),
                Some(&annotations),
                IntOrString::Int(4),
                90,
            ),
        ];
        for (name, strategy, annotations, parallelism, timeout_seconds) in cases {
            assert_eq!(
                Knobs::resolve(strategy.as_ref(), annotations),
                Knobs { parallelism, timeout_seconds },
                "{name}"
            );
        }
    }
}
