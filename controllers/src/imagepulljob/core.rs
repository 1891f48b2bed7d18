//! The ImagePullJob controller's decisions as pure functions (upstream
//! `pkg/controller/imagepulljob/imagepulljob_controller.go` and `imagepulljob_utils.go`): the
//! job's status from the NodeImages it targets, which NodeImages get the image next (at most
//! `parallelism` pulling at a time), the tag entry a NodeImage gets, the pull-secret copies to
//! claim and release, and the completion, deadline and TTL arithmetic.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::core::v1::{ObjectReference, Secret},
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, util::intstr::IntOrString},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{
    CompletionPolicyType, ImagePullJob, ImagePullJobStatus, ImagePullPhase, ImageSpec, ImageTagPullPolicy,
    ImageTagSpec, NodeImage, REFERENCE_OBJECT_MODE_BATCH, ReferenceObject,
};

use crate::imagejob::{DAEMON_CONFIG_NAMESPACE, elapsed, image_name_tag, key, time};

/// Parallelism when unset.
pub const DEFAULT_PARALLELISM: i32 = 1;
/// Default TTL of a tag pulled by a `Never` job (24 h, jittered by ±10 min by the caller).
pub const DEFAULT_TTL_SECONDS_FOR_NEVER: i32 = 24 * 3600;
/// Default active deadline of a tag pulled by a `Never` job.
pub const DEFAULT_ACTIVE_DEADLINE_SECONDS_FOR_NEVER: i64 = 1800;
/// Annotation of a synced secret naming its source (`namespace/name`).
pub const SECRET_SOURCE_ANNOTATION: &str = "imagepulljobs.kruise.io/source-key";
/// Annotation of a synced secret listing the jobs using it (`ns/name,ns/name`).
pub const SECRET_REFERENCES_ANNOTATION: &str = "imagepulljobs.kruise.io/references";
/// Annotation of a synced secret saying it is shared (`batch`).
pub const SECRET_MODE_ANNOTATION: &str = "imagepulljobs.kruise.io/mode";

/// The job as a tag owner in NodeImages.
pub fn owner_reference(job: &ImagePullJob) -> ObjectReference {
    ObjectReference {
        api_version: Some("apps.kruise.io/v1beta1".into()),
        kind: Some("ImagePullJob".into()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        ..Default::default()
    }
}

/// The job's parallelism: an integer (or a string holding one), 1 when unset or unreadable.
pub fn parallelism(job: &ImagePullJob) -> i32 {
    match &job.spec.template.parallelism {
        Some(IntOrString::Int(n)) => *n,
        Some(IntOrString::String(text)) => text.trim().parse().unwrap_or(DEFAULT_PARALLELISM),
        None => DEFAULT_PARALLELISM,
    }
}

fn is_never(job: &ImagePullJob) -> bool {
    job.spec.template.completion_policy.type_ == CompletionPolicyType::Never
}

/// The pull policy of the tags this job adds (upstream `getImagePullPolicy`): its timeout and
/// retries; for an `Always` job the job's active deadline and a TTL of the job's TTL (else its
/// active deadline, else timeout × retries) plus `ttl_jitter` seconds (upstream adds 0-300 s);
/// for a `Never` job 24 h ± `never_jitter` s and a 30 min deadline (or the timeout if longer).
pub fn tag_pull_policy(job: &ImagePullJob, ttl_jitter: i32, never_jitter: i32) -> ImageTagPullPolicy {
    let template = &job.spec.template;
    let timeout = template.pull_policy.as_ref().and_then(|p| p.timeout_seconds);
    let backoff = template.pull_policy.as_ref().and_then(|p| p.backoff_limit);
    let mut policy =
        ImageTagPullPolicy { timeout_seconds: timeout, backoff_limit: backoff, ..Default::default() };
    let completion = &template.completion_policy;
    if is_never(job) {
        policy.ttl_seconds_after_finished = Some(DEFAULT_TTL_SECONDS_FOR_NEVER + never_jitter);
        let deadline = timeout
            .map(i64::from)
            .filter(|t| *t > DEFAULT_ACTIVE_DEADLINE_SECONDS_FOR_NEVER)
            .unwrap_or(DEFAULT_ACTIVE_DEADLINE_SECONDS_FOR_NEVER);
        policy.active_deadline_seconds = Some(deadline);
    } else {
        let base = completion
            .ttl_seconds_after_finished
            .or_else(|| completion.active_deadline_seconds.map(|d| i32::try_from(d).unwrap_or(i32::MAX)))
            .unwrap_or_else(|| timeout.unwrap_or(600).saturating_mul(backoff.unwrap_or(3)));
        policy.ttl_seconds_after_finished = Some(base.saturating_add(ttl_jitter));
        policy.active_deadline_seconds = completion.active_deadline_seconds;
    }
    policy
}

/// The job's status and the NodeImages that do not have its image yet.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The status to write.
    pub status: ImagePullJobStatus,
    /// NodeImages (by name, sorted) without this job's tag or pull secrets.
    pub not_synced: Vec<String>,
}

fn contains_secret(secrets: &[ReferenceObject], secret: &ReferenceObject) -> bool {
    secrets.iter().any(|s| s.namespace == secret.namespace && s.name == secret.name)
}

/// The status message (upstream `formatStatusMessage`).
pub fn status_message(status: &ImagePullJobStatus) -> String {
    if status.completion_time.is_some() {
        return "job has completed".into();
    }
    if status.desired == 0 {
        return "job is running, no progress".into();
    }
    let done = f64::from(status.succeeded + status.failed);
    format!("job is running, progress {:.1}%", 100.0 * done / f64::from(status.desired))
}

/// The job's status (upstream `calculateStatus`): each targeted NodeImage counts as succeeded,
/// failed or active by its tag status at the version this job set; NodeImages without the tag
/// (or without the job's pull secrets) are not synced. An `Always` job completes when every
/// node finished, or when its active deadline passed (the unfinished nodes then count as
/// failed, with message "job exceeds activeDeadlineSeconds").
pub fn calculate_status(
    job: &ImagePullJob,
    node_images: &[&NodeImage],
    secrets: &[ReferenceObject],
    now: Timestamp,
) -> Result<Progress, String> {
    let old = job.status.clone().unwrap_or_default();
    let start_time = old.start_time.clone().unwrap_or_else(|| time(now));
    let mut status = ImagePullJobStatus {
        start_time: Some(start_time.clone()),
        desired: i32::try_from(node_images.len()).unwrap_or(i32::MAX),
        ..Default::default()
    };
    let (name, tag) = image_name_tag(&job.spec.image)?;
    let uid = job.metadata.uid.clone();
    let (mut pulling, mut succeeded, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    let mut not_synced = std::collections::BTreeSet::new();
    for node_image in node_images {
        let node = node_image.metadata.name.clone().unwrap_or_default();
        let mut version = None;
        if let Some(image) = node_image.spec.images.get(&name) {
            if secrets.iter().any(|secret| !contains_secret(&image.pull_secrets, secret)) {
                not_synced.insert(node.clone());
            }
            version = image
                .tags
                .iter()
                .find(|t| t.tag == tag)
                .filter(|t| t.owner_references.iter().any(|o| o.uid.is_some() && o.uid == uid))
                .map(|t| t.version);
        }
        let Some(version) = version else {
            not_synced.insert(node);
            continue;
        };
        let tag_status = node_image
            .status
            .as_ref()
            .and_then(|s| s.image_statuses.get(&name))
            .and_then(|s| s.tags.iter().find(|t| t.tag == tag))
            .filter(|t| t.version == version);
        match tag_status.map(|t| &t.phase) {
            Some(ImagePullPhase::Succeeded) => succeeded.push(node),
            Some(ImagePullPhase::Failed) => failed.push(node),
            _ => pulling.push(node),
        }
    }
    let finished = succeeded.len() + failed.len();
    if !is_never(job)
        && let Some(deadline) = job.spec.template.completion_policy.active_deadline_seconds
        && finished != node_images.len()
        && elapsed(&start_time, now) >= Duration::from_secs(u64::try_from(deadline).unwrap_or(0))
    {
        status.completion_time = Some(time(now));
        status.succeeded = i32::try_from(succeeded.len()).unwrap_or(i32::MAX);
        failed.extend(pulling);
        failed.extend(not_synced);
        status.failed = i32::try_from(failed.len()).unwrap_or(i32::MAX);
        status.failed_nodes = failed;
        status.message = "job exceeds activeDeadlineSeconds".into();
        return Ok(Progress { status, not_synced: Vec::new() });
    }
    status.active = i32::try_from(pulling.len()).unwrap_or(i32::MAX);
    status.succeeded = i32::try_from(succeeded.len()).unwrap_or(i32::MAX);
    status.failed = i32::try_from(failed.len()).unwrap_or(i32::MAX);
    failed.sort();
    status.failed_nodes = failed;
    if !is_never(job) && status.desired == status.succeeded + status.failed {
        status.completion_time = Some(time(now));
    }
    status.message = status_message(&status);
    Ok(Progress { status, not_synced: not_synced.into_iter().collect() })
}

/// The NodeImages to give the image now: as many of `not_synced` (in order) as parallelism
/// allows beside the nodes still pulling.
pub fn nodes_to_sync(job: &ImagePullJob, progress: &Progress) -> Vec<String> {
    let room = parallelism(job).saturating_sub(progress.status.active);
    let room = usize::try_from(room).unwrap_or(0);
    progress.not_synced.iter().take(room).cloned().collect()
}

/// The image entry `node_image` should have for this job (upstream `syncNodeImages`): the
/// job's pull secrets added, its sandbox config, and its tag (a new tag at the version after
/// the last one reported; an existing tag of another owner gets this job as owner too and a new
/// version, so it is pulled again). `None` when the entry already has all of it.
pub fn image_entry(
    node_image: &NodeImage,
    job: &ImagePullJob,
    policy: &ImageTagPullPolicy,
    secrets: &[ReferenceObject],
    now: Timestamp,
) -> Result<Option<(String, ImageSpec)>, String> {
    let (name, tag) = image_name_tag(&job.spec.image)?;
    let owner = owner_reference(job);
    let mut image = node_image.spec.images.get(&name).cloned().unwrap_or_default();
    image.sandbox_config = job.spec.template.sandbox_config.clone();
    let mut secrets_added = false;
    for secret in secrets {
        if !contains_secret(&image.pull_secrets, secret) {
            image.pull_secrets.push(secret.clone());
            secrets_added = true;
        }
    }
    match image.tags.iter_mut().find(|t| t.tag == tag) {
        Some(existing) if existing.owner_references.iter().any(|o| o.uid.is_some() && o.uid == owner.uid) => {
            if !secrets_added {
                return Ok(None);
            }
        }
        Some(existing) => {
            existing.version += 1;
            existing.owner_references.push(owner);
            existing.created_at = Some(time(now));
            existing.image_pull_policy = job.spec.template.image_pull_policy.clone();
        }
        None => {
            let reported = node_image
                .status
                .as_ref()
                .and_then(|s| s.image_statuses.get(&name))
                .and_then(|s| s.tags.iter().find(|t| t.tag == tag))
                .map_or(-1, |t| t.version);
            image.tags.push(ImageTagSpec {
                tag,
                created_at: Some(time(now)),
                pull_policy: Some(policy.clone()),
                owner_references: vec![owner],
                version: reported + 1,
                image_pull_policy: job.spec.template.image_pull_policy.clone(),
            });
        }
    }
    image.tags.sort_by(|a, b| a.tag.cmp(&b.tag));
    Ok(Some((name, image)))
}

/// How long a finished job lives on: `None` forever (no TTL), `Some(ZERO)` delete now.
pub fn ttl_left(job: &ImagePullJob, now: Timestamp) -> Option<Duration> {
    let completed = job.status.as_ref()?.completion_time.as_ref()?;
    let ttl = job.spec.template.completion_policy.ttl_seconds_after_finished?;
    let ttl = Duration::from_secs(u64::try_from(ttl).unwrap_or(0));
    Some(ttl.saturating_sub(elapsed(completed, now)))
}

/// When to look at a running `Always` job with an active deadline again (at least 1 s).
pub fn deadline_requeue(job: &ImagePullJob, status: &ImagePullJobStatus, now: Timestamp) -> Option<Duration> {
    if is_never(job) || status.completion_time.is_some() {
        return None;
    }
    let deadline = job.spec.template.completion_policy.active_deadline_seconds?;
    let start = status.start_time.as_ref()?;
    let left = Duration::from_secs(u64::try_from(deadline).unwrap_or(0)).saturating_sub(elapsed(start, now));
    Some(left.max(Duration::from_secs(1)))
}

/// The jobs a synced secret serves (its references annotation).
pub fn secret_references(secret: &Secret) -> Vec<String> {
    let annotations = secret.metadata.annotations.as_ref();
    let value =
        annotations.and_then(|a| a.get(SECRET_REFERENCES_ANNOTATION)).map(String::as_str).unwrap_or("");
    let mut jobs: Vec<String> =
        value.split(',').map(str::trim).filter(|s| s.contains('/')).map(String::from).collect();
    jobs.sort();
    jobs.dedup();
    jobs
}

fn secret_source(secret: &Secret) -> Option<(String, String)> {
    let value = secret.metadata.annotations.as_ref()?.get(SECRET_SOURCE_ANNOTATION)?;
    let (namespace, name) = value.split_once('/')?;
    Some((namespace.to_string(), name.to_string()))
}

/// The running jobs (keys) to wake for a change of a source secret outside the daemon's
/// namespace: the jobs in the secret's namespace naming it in `pullSecrets`, when the secret
/// is new or its data changed (so their synced copies are refreshed). Upstream's
/// `secretEventHandler` does the same.
pub fn jobs_for_source_secret<'a>(
    jobs: impl IntoIterator<Item = &'a ImagePullJob>,
    new: &Secret,
    old: Option<&Secret>,
) -> Vec<String> {
    if new.metadata.deletion_timestamp.is_some() {
        return Vec::new();
    }
    if old.is_some_and(|old| old.data == new.data && old.string_data == new.string_data) {
        return Vec::new();
    }
    let Some(name) = new.metadata.name.as_deref() else { return Vec::new() };
    let namespace = new.metadata.namespace.as_deref().unwrap_or_default();
    let mut keys: Vec<String> = jobs
        .into_iter()
        .filter(|job| {
            job.metadata.deletion_timestamp.is_none()
                && job.status.as_ref().is_none_or(|s| s.completion_time.is_none())
        })
        .filter(|job| job.metadata.namespace.as_deref().unwrap_or_default() == namespace)
        .filter(|job| job.spec.template.pull_secrets.iter().any(|s| s == name))
        .map(|job| key(namespace, job.metadata.name.as_deref().unwrap_or_default()))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The synced copies a job should use and release (upstream `classifyPullSecretsForJob`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SecretPlan {
    /// Per source secret (`namespace`, `name`) the job uses, the synced copy to reuse (one
    /// already referencing the job first), or `None` to create one.
    pub claim: BTreeMap<(String, String), Option<Secret>>,
    /// Copies this job no longer uses, each with the references left after removing the job
    /// (delete the copy when none are left).
    pub release: Vec<(Secret, Vec<String>)>,
}

/// Decides which synced copies in the daemon's namespace this job claims and releases: a
/// running job claims one copy per pull secret (reusing any copy of the same source); a
/// finished or deleted job releases all of its copies; copies of secrets it no longer names
/// are released.
pub fn plan_secrets(job: &ImagePullJob, synced: &[Secret]) -> SecretPlan {
    let namespace = job.metadata.namespace.clone().unwrap_or_default();
    let job_key = key(&namespace, job.metadata.name.as_deref().unwrap_or_default());
    let running = job.metadata.deletion_timestamp.is_none()
        && job.status.as_ref().is_none_or(|s| s.completion_time.is_none());
    let mut plan = SecretPlan::default();
    if running {
        for name in &job.spec.template.pull_secrets {
            plan.claim.insert((namespace.clone(), name.clone()), None);
        }
    }
    let mut synced: Vec<&Secret> =
        synced.iter().filter(|s| s.metadata.deletion_timestamp.is_none()).collect();
    synced.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    for secret in synced {
        let references = secret_references(secret);
        let referenced = references.contains(&job_key);
        let release = |references: &[String]| -> Vec<String> {
            references.iter().filter(|r| **r != job_key).cloned().collect()
        };
        if !running {
            if referenced {
                plan.release.push((secret.clone(), release(&references)));
            }
            continue;
        }
        match secret_source(secret).and_then(|source| plan.claim.get_mut(&source)) {
            Some(slot) if slot.is_none() || referenced => *slot = Some(secret.clone()),
            Some(_) => {}
            None if referenced => plan.release.push((secret.clone(), release(&references))),
            None => {}
        }
    }
    plan
}

/// A new synced copy of `source` for `job_key`, named `<source>-<suffix>` in the daemon's
/// namespace (upstream `generateSyncedSecret`).
pub fn synced_copy(source: &Secret, job_key: &str, suffix: &str) -> Secret {
    let mut annotations = source.metadata.annotations.clone().unwrap_or_default();
    annotations.insert(SECRET_REFERENCES_ANNOTATION.into(), job_key.to_string());
    annotations.insert(
        SECRET_SOURCE_ANNOTATION.into(),
        key(
            source.metadata.namespace.as_deref().unwrap_or_default(),
            source.metadata.name.as_deref().unwrap_or_default(),
        ),
    );
    annotations.insert(SECRET_MODE_ANNOTATION.into(), REFERENCE_OBJECT_MODE_BATCH.into());
    Secret {
        metadata: ObjectMeta {
            namespace: Some(DAEMON_CONFIG_NAMESPACE.into()),
            name: Some(format!("{}-{suffix}", source.metadata.name.as_deref().unwrap_or("secret"))),
            labels: source.metadata.labels.clone(),
            annotations: Some(annotations),
            ..Default::default()
        },
        data: source.data.clone(),
        string_data: source.string_data.clone(),
        type_: source.type_.clone(),
        immutable: None,
    }
}

/// An existing synced copy brought up to date with `source` and referencing `job_key`; `None`
/// when nothing changes.
pub fn refreshed_copy(copy: &Secret, source: &Secret, job_key: &str) -> Option<Secret> {
    let mut updated = copy.clone();
    updated.data = source.data.clone();
    updated.string_data = source.string_data.clone();
    let mut references = secret_references(copy);
    if !references.iter().any(|r| r == job_key) {
        references.push(job_key.to_string());
        references.sort();
    }
    updated
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(SECRET_REFERENCES_ANNOTATION.into(), references.join(","));
    (updated != *copy).then_some(updated)
}

/// The reference a NodeImage gets to a synced copy.
pub fn copy_reference(copy: &Secret) -> ReferenceObject {
    let mode = copy
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SECRET_MODE_ANNOTATION))
        .cloned()
        .unwrap_or_default();
    ReferenceObject {
        namespace: copy.metadata.namespace.clone().unwrap_or_default(),
        name: copy.metadata.name.clone().unwrap_or_default(),
        mode,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    fn stamp(seconds: i64) -> String {
        at(seconds).strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    fn job(spec: Value, status: Value) -> ImagePullJob {
        let mut full = json!({"image": "nginx:1.25"});
        full.as_object_mut().unwrap().extend(spec.as_object().unwrap().clone());
        serde_json::from_value(json!({
            "metadata": {"name": "warm", "namespace": "ns", "uid": "job-uid"},
            "spec": full,
            "status": status
        }))
        .unwrap()
    }

    fn owner(uid: &str) -> Value {
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob", "namespace": "ns", "name": "warm", "uid": uid})
    }

    fn node_image(name: &str, tag: Option<(i64, &str)>, reported: Option<(i64, &str)>) -> NodeImage {
        let mut value = json!({"metadata": {"name": name}, "spec": {}});
        if let Some((version, uid)) = tag {
            value["spec"] = json!({"images": {"nginx": {"tags": [
                {"tag": "1.25", "version": version, "createdAt": stamp(0), "ownerReferences": [owner(uid)]}
            ]}}});
        }
        if let Some((version, phase)) = reported {
            value["status"] = json!({"desired": 1, "imageStatuses": {"nginx": {"tags": [
                {"tag": "1.25", "version": version, "phase": phase}
            ]}}});
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn status_counts_nodes_at_the_jobs_version() {
        let images = [
            node_image("n1", Some((1, "job-uid")), Some((1, "Succeeded"))),
            node_image("n2", Some((2, "job-uid")), Some((1, "Succeeded"))),
            node_image("n3", Some((0, "job-uid")), Some((0, "Failed"))),
            node_image("n4", Some((0, "other-uid")), Some((0, "Succeeded"))),
            node_image("n5", None, None),
            node_image("n6", Some((0, "job-uid")), Some((0, "Pulling"))),
        ];
        let refs: Vec<&NodeImage> = images.iter().collect();
        let job = job(json!({"parallelism": 3}), json!({"startTime": stamp(0)}));
        let progress = calculate_status(&job, &refs, &[], at(10)).unwrap();
        let status = &progress.status;
        assert_eq!((status.desired, status.active, status.succeeded, status.failed), (6, 2, 1, 1));
        assert_eq!(status.failed_nodes, ["n3"]);
        assert_eq!(status.message, "job is running, progress 33.3%");
        assert_eq!(status.start_time, Some(time(at(0))));
        assert_eq!(progress.not_synced, ["n4", "n5"]);
        assert_eq!(nodes_to_sync(&job, &progress), ["n4"], "parallelism 3 with 2 active");
        let serial = self::job(json!({"parallelism": 1}), json!({}));
        assert!(nodes_to_sync(&serial, &calculate_status(&serial, &refs, &[], at(10)).unwrap()).is_empty());
    }

    #[test]
    fn always_jobs_complete_or_hit_their_deadline() {
        let done = [
            node_image("n1", Some((0, "job-uid")), Some((0, "Succeeded"))),
            node_image("n2", Some((0, "job-uid")), Some((0, "Failed"))),
        ];
        let refs: Vec<&NodeImage> = done.iter().collect();
        let always = job(json!({"completionPolicy": {"type": "Always"}}), json!({"startTime": stamp(0)}));
        let status = calculate_status(&always, &refs, &[], at(5)).unwrap().status;
        assert_eq!(status.completion_time, Some(time(at(5))));
        assert_eq!(status.message, "job has completed");
        let never = job(json!({"completionPolicy": {"type": "Never"}}), json!({"startTime": stamp(0)}));
        assert_eq!(calculate_status(&never, &refs, &[], at(5)).unwrap().status.completion_time, None);

        let open = [
            node_image("n1", Some((0, "job-uid")), Some((0, "Succeeded"))),
            node_image("n2", Some((0, "job-uid")), Some((0, "Pulling"))),
            node_image("n3", None, None),
        ];
        let refs: Vec<&NodeImage> = open.iter().collect();
        let deadline = job(
            json!({"completionPolicy": {"type": "Always", "activeDeadlineSeconds": 30}}),
            json!({"startTime": stamp(0)}),
        );
        let running = calculate_status(&deadline, &refs, &[], at(29)).unwrap();
        assert_eq!(running.status.completion_time, None);
        assert_eq!(deadline_requeue(&deadline, &running.status, at(29)), Some(Duration::from_secs(1)));
        let expired = calculate_status(&deadline, &refs, &[], at(30)).unwrap();
        assert_eq!(expired.status.message, "job exceeds activeDeadlineSeconds");
        assert_eq!(expired.status.failed_nodes, ["n2", "n3"]);
        assert_eq!((expired.status.succeeded, expired.status.failed, expired.status.active), (1, 2, 0));
        assert!(expired.not_synced.is_empty());
    }

    #[test]
    fn tag_policies_carry_ttl_and_deadline() {
        let always = job(json!({"pullPolicy": {"timeoutSeconds": 60, "backoffLimit": 2}}), json!({}));
        let policy = tag_pull_policy(&always, 7, 0);
        assert_eq!((policy.ttl_seconds_after_finished, policy.active_deadline_seconds), (Some(127), None));
        let with_ttl = job(
            json!({"completionPolicy": {"ttlSecondsAfterFinished": 10, "activeDeadlineSeconds": 50}}),
            json!({}),
        );
        let policy = tag_pull_policy(&with_ttl, 0, 0);
        assert_eq!((policy.ttl_seconds_after_finished, policy.active_deadline_seconds), (Some(10), Some(50)));
        let deadline_only = job(json!({"completionPolicy": {"activeDeadlineSeconds": 50}}), json!({}));
        assert_eq!(tag_pull_policy(&deadline_only, 0, 0).ttl_seconds_after_finished, Some(50));
        let never = job(
            json!({"completionPolicy": {"type": "Never"}, "pullPolicy": {"timeoutSeconds": 3600}}),
            json!({}),
        );
        let policy = tag_pull_policy(&never, 0, -100);
        assert_eq!(
            (policy.ttl_seconds_after_finished, policy.active_deadline_seconds),
            (Some(86300), Some(3600))
        );
    }

    #[test]
    fn entries_add_tags_owners_and_secrets() {
        let job = job(json!({"imagePullPolicy": "Always"}), json!({}));
        let policy = tag_pull_policy(&job, 0, 0);
        let fresh = node_image("n1", None, Some((4, "Succeeded")));
        let (name, entry) = image_entry(&fresh, &job, &policy, &[], at(1)).unwrap().unwrap();
        assert_eq!(name, "nginx");
        assert_eq!(entry.tags.len(), 1);
        assert_eq!(entry.tags[0].version, 5, "after the version the node last reported");
        assert_eq!(entry.tags[0].owner_references[0].uid.as_deref(), Some("job-uid"));
        assert_eq!(entry.tags[0].image_pull_policy.as_str(), "Always");

        let mine = node_image("n1", Some((2, "job-uid")), None);
        assert_eq!(image_entry(&mine, &job, &policy, &[], at(1)).unwrap(), None, "already there");
        let secret = ReferenceObject {
            namespace: DAEMON_CONFIG_NAMESPACE.into(),
            name: "reg-abc".into(),
            mode: "batch".into(),
        };
        let (_, with_secret) =
            image_entry(&mine, &job, &policy, std::slice::from_ref(&secret), at(1)).unwrap().unwrap();
        assert_eq!(with_secret.pull_secrets, [secret]);
        assert_eq!(with_secret.tags[0].version, 2, "a secret alone does not re-pull");

        let theirs = node_image("n1", Some((2, "other-uid")), None);
        let (_, shared) = image_entry(&theirs, &job, &policy, &[], at(1)).unwrap().unwrap();
        assert_eq!(shared.tags[0].version, 3);
        assert_eq!(shared.tags[0].owner_references.len(), 2);
    }

    #[test]
    fn finished_jobs_live_for_their_ttl() {
        let ttl = job(
            json!({"completionPolicy": {"ttlSecondsAfterFinished": 10}}),
            json!({"completionTime": stamp(0)}),
        );
        assert_eq!(ttl_left(&ttl, at(4)), Some(Duration::from_secs(6)));
        assert_eq!(ttl_left(&ttl, at(12)), Some(Duration::ZERO));
        let forever = job(json!({}), json!({"completionTime": stamp(0)}));
        assert_eq!(ttl_left(&forever, at(12)), None);
    }

    fn synced(name: &str, source: &str, references: &str) -> Secret {
        serde_json::from_value(json!({"metadata": {
            "name": name, "namespace": DAEMON_CONFIG_NAMESPACE,
            "annotations": {SECRET_SOURCE_ANNOTATION: source, SECRET_REFERENCES_ANNOTATION: references, SECRET_MODE_ANNOTATION: "batch"}
        }}))
        .unwrap()
    }

    #[test]
    fn secrets_are_claimed_shared_and_released() {
        let job = job(json!({"pullSecrets": ["reg", "new"]}), json!({}));
        let copies = [
            synced("reg-aaa", "ns/reg", "other/j"),
            synced("reg-bbb", "ns/reg", "ns/warm,other/j"),
            synced("old-ccc", "ns/old", "ns/warm"),
            synced("x-ddd", "ns/x", "other/j"),
        ];
        let plan = plan_secrets(&job, &copies);
        let claim: Vec<(String, Option<String>)> = plan
            .claim
            .iter()
            .map(|((ns, name), copy)| {
                (format!("{ns}/{name}"), copy.as_ref().and_then(|c| c.metadata.name.clone()))
            })
            .collect();
        assert_eq!(
            claim,
            [("ns/new".to_string(), None), ("ns/reg".to_string(), Some("reg-bbb".to_string()))]
        );
        assert_eq!(plan.release.len(), 1);
        assert_eq!(
            (plan.release[0].0.metadata.name.as_deref(), plan.release[0].1.len()),
            (Some("old-ccc"), 0)
        );

        let finished = self::job(json!({"pullSecrets": ["reg"]}), json!({"completionTime": stamp(0)}));
        let plan = plan_secrets(&finished, &copies);
        assert!(plan.claim.is_empty());
        let released: Vec<(&str, Vec<String>)> =
            plan.release.iter().map(|(s, r)| (s.metadata.name.as_deref().unwrap(), r.clone())).collect();
        assert_eq!(released, [("old-ccc", vec![]), ("reg-bbb", vec!["other/j".to_string()])]);

        let source: Secret = serde_json::from_value(json!({
            "metadata": {"name": "reg", "namespace": "ns"}, "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": "e30="}
        }))
        .unwrap();
        let copy = synced_copy(&source, "ns/warm", "a1b2c3");
        assert_eq!(copy.metadata.name.as_deref(), Some("reg-a1b2c3"));
        assert_eq!(copy_reference(&copy).mode, "batch");
        let refreshed = refreshed_copy(&copies[0], &source, "ns/warm").unwrap();
        assert_eq!(secret_references(&refreshed), ["ns/warm", "other/j"]);
        assert_eq!(refreshed_copy(&refreshed, &source, "ns/warm"), None);
    }

    #[test]
    fn source_secret_changes_wake_the_running_jobs_naming_it() {
        let source = |data: &str| -> Secret {
            serde_json::from_value(json!({
                "metadata": {"name": "reg", "namespace": "ns"},
                "data": {".dockerconfigjson": data}
            }))
            .unwrap()
        };
        let named = |name: &str, namespace: &str, secrets: Value, status: Value| -> ImagePullJob {
            let mut job = job(json!({"pullSecrets": secrets}), status);
            job.metadata.name = Some(name.into());
            job.metadata.namespace = Some(namespace.into());
            job
        };
        let jobs = [
            named("a", "ns", json!(["reg"]), json!({})),
            named("b", "ns", json!(["other", "reg"]), json!({})),
            named("done", "ns", json!(["reg"]), json!({"completionTime": stamp(0)})),
            named("c", "ns", json!(["other"]), json!({})),
            named("a", "elsewhere", json!(["reg"]), json!({})),
        ];
        let (v1, v2) = (source("e30="), source("e30K"));
        let cases: [(&str, Option<&Secret>, &Secret, Vec<&str>); 4] = [
            ("created", None, &v1, vec!["ns/a", "ns/b"]),
            ("data changed", Some(&v1), &v2, vec!["ns/a", "ns/b"]),
            ("unchanged data", Some(&v1), &v1, vec![]),
            (
                "label only",
                Some(&v1),
                &{
                    let mut labelled = v1.clone();
                    labelled.metadata.labels = Some([("x".to_string(), "y".to_string())].into());
                    labelled
                },
                vec![],
            ),
        ];
        for (name, old, new, expected) in cases {
            assert_eq!(jobs_for_source_secret(&jobs, new, old), expected, "{name}");
        }
        let mut deleting = v2.clone();
        deleting.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at(0)));
        assert!(jobs_for_source_secret(&jobs, &deleting, Some(&v1)).is_empty(), "being deleted");
    }
}
