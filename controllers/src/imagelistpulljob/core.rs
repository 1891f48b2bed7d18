//! The ImageListPullJob controller's decisions as pure functions (upstream
//! `pkg/controller/imagelistpulljob/imagelistpulljob_controller.go`): one child ImagePullJob per
//! image, created with the list job's template and recreated when the template changes (tracked
//! by a hash label), the aggregated status, and the TTL of a finished list.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{
    CompletionPolicyType, FailedImageStatus, ImageListPullJob, ImageListPullJobStatus, ImagePullJob,
    ImagePullJobSpec, ImagePullJobTemplate,
};

use crate::{
    imagejob::{elapsed, time},
    workload::revision::safe_encode,
};

/// Label holding the hash of the template a child was created from (upstream
/// `apps.ControllerRevisionHashLabelKey`).
pub const TEMPLATE_HASH_LABEL: &str = "controller-revision-hash";

fn fnv32a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |hash, byte| (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193))
}

/// The hash of a template: FNV-32a of its JSON, as a safe-encoded decimal (the same shape as
/// upstream's; the value differs because upstream hashes Go's in-memory rendering).
pub fn template_hash(template: &ImagePullJobTemplate) -> String {
    let json = serde_json::to_vec(template).unwrap_or_default();
    safe_encode(&fnv32a(&json).to_string())
}

/// What to create and delete.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChildActions {
    /// Images that need a new child job.
    pub create: Vec<String>,
    /// Names of children to delete (image removed, or template changed).
    pub delete: Vec<String>,
}

/// Compares the children (by image) with the list (upstream `computeImagePullJobActions`): a
/// new image gets a child; a child whose template hash differs (or, without the label, whose
/// template differs) is replaced; a child of an image no longer listed goes.
pub fn child_actions(
    job: &ImageListPullJob,
    children: &BTreeMap<String, ImagePullJob>,
    hash: &str,
) -> ChildActions {
    let mut actions = ChildActions::default();
    for image in &job.spec.images {
        match children.get(image) {
            None => actions.create.push(image.clone()),
            Some(child) => {
                let label = child.metadata.labels.as_ref().and_then(|l| l.get(TEMPLATE_HASH_LABEL));
                let consistent = match label {
                    Some(label) => label == hash,
                    None => child.spec.template == job.spec.template,
                };
                if !consistent {
                    actions.create.push(image.clone());
                    actions.delete.push(child.metadata.name.clone().unwrap_or_default());
                }
            }
        }
    }
    for (image, child) in children {
        if !job.spec.images.contains(image) {
            actions.delete.push(child.metadata.name.clone().unwrap_or_default());
        }
    }
    actions
}

/// A child ImagePullJob for `image` (generateName `<list>-`, controlled by the list).
pub fn new_child(job: &ImageListPullJob, image: &str, hash: &str) -> ImagePullJob {
    let name = job.metadata.name.clone().unwrap_or_default();
    ImagePullJob {
        metadata: ObjectMeta {
            namespace: job.metadata.namespace.clone(),
            generate_name: Some(format!("{name}-")),
            labels: Some([(TEMPLATE_HASH_LABEL.to_string(), hash.to_string())].into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps.kruise.io/v1beta1".into(),
                kind: "ImageListPullJob".into(),
                name,
                uid: job.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        },
        spec: ImagePullJobSpec { image: image.to_string(), template: job.spec.template.clone() },
        status: None,
    }
}

/// The list's status (upstream `calculateStatus`): children that started count as active while
/// pulling, completed when every node finished, succeeded when every node succeeded; children
/// with failed nodes are listed; an `Always` list completes when every image completed.
pub fn calculate_status(
    job: &ImageListPullJob,
    children: &BTreeMap<String, ImagePullJob>,
    now: Timestamp,
) -> ImageListPullJobStatus {
    let old = job.status.clone().unwrap_or_default();
    let mut status = ImageListPullJobStatus {
        desired: i32::try_from(job.spec.images.len()).unwrap_or(i32::MAX),
        start_time: Some(old.start_time.clone().unwrap_or_else(|| time(now))),
        ..Default::default()
    };
    for child in children.values() {
        let Some(child_status) = child.status.as_ref().filter(|s| s.start_time.is_some()) else { continue };
        if child_status.active > 0 {
            status.active += 1;
        }
        if child_status.failed > 0 {
            let name = child.metadata.name.clone().unwrap_or_default();
            status.failed_image_statuses.push(FailedImageStatus {
                image_pull_job: name.clone(),
                name: child.spec.image.clone(),
                message: format!(
                    "Please check for details which nodes failed by 'kubectl get ImagePullJob {name}'."
                ),
            });
        }
        if child_status.desired == child_status.failed + child_status.succeeded {
            status.completed += 1;
        }
        if child_status.desired == child_status.succeeded {
            status.succeeded += 1;
        }
    }
    status.failed_image_statuses.sort_by(|a, b| a.name.cmp(&b.name));
    let always = job.spec.template.completion_policy.type_ != CompletionPolicyType::Never;
    if always && status.desired == status.completed {
        status.completion_time = Some(old.completion_time.clone().unwrap_or_else(|| time(now)));
    }
    status
}

/// How long a finished list lives on: `None` forever, `Some(ZERO)` delete now.
pub fn ttl_left(job: &ImageListPullJob, now: Timestamp) -> Option<Duration> {
    let completed = job.status.as_ref()?.completion_time.as_ref()?;
    let ttl = job.spec.template.completion_policy.ttl_seconds_after_finished?;
    Some(Duration::from_secs(u64::try_from(ttl).unwrap_or(0)).saturating_sub(elapsed(completed, now)))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;

    fn list(images: &[&str], extra: Value) -> ImageListPullJob {
        let mut spec = json!({"images": images, "parallelism": 2});
        spec.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::from_value(
            json!({"metadata": {"name": "warm", "namespace": "ns", "uid": "list-uid"}, "spec": spec}),
        )
        .unwrap()
    }

    fn child(name: &str, image: &str, hash: Option<&str>, status: Value) -> ImagePullJob {
        let mut value = json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"image": image, "parallelism": 2}, "status": status});
        if let Some(hash) = hash {
            value["metadata"]["labels"] = json!({TEMPLATE_HASH_LABEL: hash});
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn one_child_per_image_replaced_when_the_template_changes() {
        let job = list(&["nginx:1", "redis:7", "busybox:1"], json!({}));
        let hash = template_hash(&job.spec.template);
        assert!(hash.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)), "{hash}");
        let children: BTreeMap<String, ImagePullJob> = [
            ("nginx:1".to_string(), child("warm-a", "nginx:1", Some(&hash), json!({}))),
            ("redis:7".to_string(), child("warm-b", "redis:7", Some("old"), json!({}))),
            ("gone:1".to_string(), child("warm-c", "gone:1", Some(&hash), json!({}))),
        ]
        .into();
        let actions = child_actions(&job, &children, &hash);
        assert_eq!(actions.create, ["redis:7", "busybox:1"]);
        assert_eq!(actions.delete, ["warm-b", "warm-c"]);
        let unlabelled: BTreeMap<String, ImagePullJob> =
            [("nginx:1".to_string(), child("warm-a", "nginx:1", None, json!({})))].into();
        assert!(
            child_actions(&list(&["nginx:1"], json!({})), &unlabelled, &hash).delete.is_empty(),
            "an unlabelled child with the same template is kept"
        );

        let new = new_child(&job, "busybox:1", &hash);
        assert_eq!(new.metadata.generate_name.as_deref(), Some("warm-"));
        assert_eq!(new.spec.image, "busybox:1");
        assert_eq!(new.spec.template, job.spec.template);
        let owner = &new.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
            ("ImageListPullJob", "list-uid", Some(true))
        );
    }

    #[test]
    fn status_aggregates_the_children() {
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let started = "2023-11-14T22:13:20Z";
        let children: BTreeMap<String, ImagePullJob> = [
            (
                "a".to_string(),
                child("w-a", "a", None, json!({"startTime": started, "desired": 3, "succeeded": 3})),
            ),
            (
                "b".to_string(),
                child(
                    "w-b",
                    "b",
                    None,
                    json!({"startTime": started, "desired": 3, "succeeded": 2, "failed": 1}),
                ),
            ),
            (
                "c".to_string(),
                child(
                    "w-c",
                    "c",
                    None,
                    json!({"startTime": started, "desired": 3, "active": 2, "succeeded": 1}),
                ),
            ),
            ("d".to_string(), child("w-d", "d", None, json!({}))),
        ]
        .into();
        let job = list(&["a", "b", "c", "d"], json!({}));
        let status = calculate_status(&job, &children, now);
        assert_eq!((status.desired, status.active, status.completed, status.succeeded), (4, 1, 2, 1));
        assert_eq!(status.failed_image_statuses.len(), 1);
        assert_eq!(status.failed_image_statuses[0].image_pull_job, "w-b");
        assert_eq!(status.completion_time, None);
        let done = list(&["a", "b"], json!({"completionPolicy": {"ttlSecondsAfterFinished": 5}}));
        let two: BTreeMap<String, ImagePullJob> =
            children.into_iter().filter(|(k, _)| k == "a" || k == "b").collect();
        let mut finished = done.clone();
        finished.status = Some(calculate_status(&done, &two, now));
        assert_eq!(finished.status.as_ref().unwrap().completion_time, Some(time(now)));
        assert_eq!(ttl_left(&finished, now), Some(Duration::from_secs(5)));
    }
}
