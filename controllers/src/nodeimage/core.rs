//! The NodeImage controller's decisions as pure functions (upstream
//! `pkg/controller/nodeimage/nodeimage_controller.go`): whether a node's NodeImage should be
//! created, kept or deleted; which tags leave its spec (created without `createdAt`, owners all
//! gone, TTL after completion passed); which tags are marked failed because the daemon never
//! answered or the active deadline passed; and when to look again.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::core::v1::{Node, ObjectReference},
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{ImagePullPhase, ImageSpec, ImageStatus, ImageTagStatus, NodeImage, NodeImageStatus},
    resource::APPS_GROUP,
};

use crate::imagejob::{elapsed, time};

/// Label that keeps a NodeImage without a Node (upstream `fakeLabelKey`, for tests).
pub const FAKE_NODE_IMAGE_LABEL: &str = "apps.kruise.io/fake-nodeimage";
/// How long the daemon may take to answer for a tag before it is marked failed (upstream
/// `responseTimeout`).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(600);
/// Default wait after a node turned Ready before its NodeImage is created (upstream
/// `--nodeimage-creation-delay`), so the node's daemon is up when work arrives.
pub const DEFAULT_CREATION_DELAY: Duration = Duration::from_secs(30);
/// Shortest requeue (upstream `minRequeueDuration`; shorter waits become 3-5 s).
pub const MIN_REQUEUE: Duration = Duration::from_secs(3);
/// Message of a tag the daemon never answered for.
pub const NOT_RESPONDED: &str = "node has not responded for a long time";
/// Message of a tag whose active deadline passed.
pub const DEADLINE_EXCEEDED: &str = "pulling exceeds the activeDeadlineSeconds";

/// What to do with a node's NodeImage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    /// Nothing (both gone, or being deleted, or the node is not Ready yet).
    Done,
    /// Delete the NodeImage: its node is gone.
    Delete,
    /// Create the NodeImage.
    Create,
    /// The node turned Ready recently: create after this long.
    CreateAfter(Duration),
    /// Keep the NodeImage in shape (labels, tags, status).
    Sync,
}

/// The node's Ready condition: `None` when not Ready, else how long ago it turned Ready.
pub fn ready_for(node: &Node, now: Timestamp) -> Option<Duration> {
    let condition = node
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready" && c.status == "True")?;
    Some(condition.last_transition_time.as_ref().map_or(Duration::MAX, |since| elapsed(since, now)))
}

/// The lifecycle decision (upstream `Reconcile`, first half).
pub fn lifecycle(
    node: Option<&Node>,
    node_image: Option<&NodeImage>,
    creation_delay: Duration,
    now: Timestamp,
) -> Lifecycle {
    let node = node.filter(|n| n.metadata.deletion_timestamp.is_none());
    let Some(node) = node else {
        return match node_image {
            None => Lifecycle::Done,
            Some(ni) if ni.metadata.deletion_timestamp.is_some() => Lifecycle::Done,
            Some(ni)
                if ni.metadata.labels.as_ref().is_some_and(|l| l.contains_key(FAKE_NODE_IMAGE_LABEL)) =>
            {
                Lifecycle::Sync
            }
            Some(_) => Lifecycle::Delete,
        };
    };
    match node_image {
        None => match ready_for(node, now) {
            None => Lifecycle::Done,
            Some(since) if since < creation_delay => Lifecycle::CreateAfter(creation_delay - since),
            Some(_) => Lifecycle::Create,
        },
        Some(ni) if ni.metadata.deletion_timestamp.is_some() => Lifecycle::Done,
        Some(_) => Lifecycle::Sync,
    }
}

/// What the owner references of a tag point at, as the caller found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnerLookup {
    /// The job exists with this UID.
    Found(String),
    /// There is no such job.
    Missing,
    /// It could not be looked up (the reference is kept).
    Unknown,
}

/// The spec cleanup of a NodeImage (upstream `doUpdateNodeImage`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpecCleanup {
    /// New labels (the node's), when they differ.
    pub labels: Option<BTreeMap<String, String>>,
    /// The new images, when some tag or secret was dropped.
    pub images: Option<BTreeMap<String, ImageSpec>>,
    /// What changed, for the log.
    pub messages: Vec<String>,
    /// When a TTL runs out next.
    pub requeue_after: Option<Duration>,
}

impl SpecCleanup {
    /// Whether the NodeImage must be written.
    pub fn modified(&self) -> bool {
        self.labels.is_some() || self.images.is_some()
    }
}

fn min_duration(current: Option<Duration>, candidate: Duration) -> Option<Duration> {
    Some(current.map_or(candidate, |c| c.min(candidate)))
}

/// Cleans a NodeImage's spec: labels follow the node; a tag without `createdAt` is dropped; an
/// owner reference to an ImagePullJob that is gone (or was recreated with another UID) is
/// dropped, and a tag left without owners goes; a finished tag with a TTL goes once the TTL ran
/// out; an image without tags goes with its pull secrets. Old-style (non-`batch`) pull secret
/// references are kept here (upstream drops those whose Secret is gone).
pub fn clean_spec(
    node_image: &NodeImage,
    node_labels: Option<&BTreeMap<String, String>>,
    lookup_job: &dyn Fn(&ObjectReference) -> OwnerLookup,
    now: Timestamp,
) -> SpecCleanup {
    let mut cleanup = SpecCleanup::default();
    if let Some(labels) = node_labels
        && node_image.metadata.labels.as_ref().cloned().unwrap_or_default() != *labels
    {
        cleanup.labels = Some(labels.clone());
        cleanup.messages.push("node labels changed".into());
    }
    let status = node_image.status.clone().unwrap_or_default();
    let mut modified = false;
    let mut images = BTreeMap::new();
    for (name, image) in &node_image.spec.images {
        let mut tags = Vec::new();
        for tag in &image.tags {
            let full = format!("{name}:{}", tag.tag);
            if tag.created_at.is_none() {
                modified = true;
                cleanup.messages.push(format!("image {full} has no createAt field"));
                continue;
            }
            let mut owners = Vec::new();
            for owner in &tag.owner_references {
                let is_job = owner.kind.as_deref() == Some("ImagePullJob")
                    && owner.api_version.as_deref().is_some_and(|v| v.split('/').next() == Some(APPS_GROUP));
                if !is_job {
                    owners.push(owner.clone());
                    continue;
                }
                match lookup_job(owner) {
                    OwnerLookup::Found(uid) if Some(&uid) == owner.uid.as_ref() => owners.push(owner.clone()),
                    OwnerLookup::Found(_) | OwnerLookup::Missing => {}
                    OwnerLookup::Unknown => owners.push(owner.clone()),
                }
            }
            let mut tag = tag.clone();
            if owners.len() != tag.owner_references.len() {
                modified = true;
                if owners.is_empty() {
                    cleanup.messages.push(format!("image {full} owners is cleared"));
                    continue;
                }
                cleanup.messages.push(format!("image {full} owners changed"));
                tag.owner_references = owners;
            }
            if let Some(ttl) = tag.pull_policy.as_ref().and_then(|p| p.ttl_seconds_after_finished) {
                let completed = status
                    .image_statuses
                    .get(name)
                    .and_then(|s| s.tags.iter().find(|t| t.tag == tag.tag && t.version == tag.version))
                    .and_then(|t| t.completion_time.as_ref());
                if let Some(completed) = completed {
                    let ttl = Duration::from_secs(u64::try_from(ttl).unwrap_or(0));
                    let since = elapsed(completed, now);
                    if since >= ttl {
                        modified = true;
                        cleanup.messages.push(format!("image {full} has exceeded TTL ({}s)", ttl.as_secs()));
                        continue;
                    }
                    cleanup.requeue_after = min_duration(cleanup.requeue_after, ttl - since);
                }
            }
            tags.push(tag);
        }
        let mut image = image.clone();
        if tags.is_empty() {
            modified = true;
            cleanup.messages.push(format!("no longer has {name} image spec"));
            continue;
        }
        tags.sort_by(|a, b| a.tag.cmp(&b.tag));
        image.tags = tags;
        images.insert(name.clone(), image);
    }
    if modified {
        cleanup.images = Some(images);
    }
    cleanup
}

/// A tag marked failed by the controller, for Events.
#[derive(Clone, Debug, PartialEq)]
pub struct FailedTag {
    /// `name:tag`.
    pub image: String,
    /// Why.
    pub message: String,
    /// Who asked for it.
    pub owners: Vec<ObjectReference>,
}

/// The status the controller writes (upstream `updateNodeImageStatus`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusUpdate {
    /// The new status, when it differs.
    pub status: Option<NodeImageStatus>,
    /// Tags marked failed now.
    pub failed: Vec<FailedTag>,
    /// When the next tag may time out.
    pub requeue_after: Option<Duration>,
}

/// Marks tags failed when the daemon has not answered for them within [`RESPONSE_TIMEOUT`] of
/// their creation, or they are still unfinished past their active deadline plus that timeout;
/// drops statuses of tags no longer in the spec and recounts.
pub fn status_update(node_image: &NodeImage, now: Timestamp) -> StatusUpdate {
    let mut update = StatusUpdate::default();
    let old = node_image.status.clone().unwrap_or_default();
    let mut statuses = old.image_statuses.clone();
    let mut in_spec: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, image) in &node_image.spec.images {
        let mut image_status = statuses.get(name).cloned().unwrap_or_default();
        for tag in &image.tags {
            in_spec.entry(name).or_default().push(&tag.tag);
            let Some(created) = &tag.created_at else { continue };
            let full = format!("{name}:{}", tag.tag);
            let position = image_status.tags.iter().position(|t| t.tag == tag.tag);
            let mut failed = None;
            let answered = position.is_some_and(|i| image_status.tags[i].version == tag.version);
            if !answered {
                let waited = elapsed(created, now);
                if waited < RESPONSE_TIMEOUT {
                    update.requeue_after = min_duration(update.requeue_after, RESPONSE_TIMEOUT - waited);
                    continue;
                }
                failed = Some(NOT_RESPONDED);
            }
            let current = position.map(|i| &image_status.tags[i]);
            let unfinished = current.is_none_or(|t| t.completion_time.is_none() || failed.is_some());
            if failed.is_none()
                && unfinished
                && let Some(deadline) = tag.pull_policy.as_ref().and_then(|p| p.active_deadline_seconds)
            {
                let limit = Duration::from_secs(u64::try_from(deadline).unwrap_or(0)) + RESPONSE_TIMEOUT;
                let waited = elapsed(created, now);
                if waited < limit {
                    update.requeue_after = min_duration(update.requeue_after, limit - waited);
                    continue;
                }
                failed = Some(DEADLINE_EXCEEDED);
            }
            let Some(message) = failed else { continue };
            let marked = ImageTagStatus {
                tag: tag.tag.clone(),
                phase: ImagePullPhase::Failed,
                completion_time: Some(time(now)),
                version: tag.version,
                message: message.to_string(),
                ..current.cloned().unwrap_or_default()
            };
            match position {
                Some(i) => image_status.tags[i] = marked,
                None => image_status.tags.push(marked),
            }
            update.failed.push(FailedTag {
                image: full,
                message: message.into(),
                owners: tag.owner_references.clone(),
            });
        }
        if !image_status.tags.is_empty() {
            image_status.tags.sort_by(|a, b| a.tag.cmp(&b.tag));
            statuses.insert(name.clone(), image_status);
        }
    }
    if statuses == old.image_statuses {
        return update;
    }
    let mut status =
        NodeImageStatus { first_sync_status: old.first_sync_status.clone(), ..Default::default() };
    for (name, image_status) in statuses {
        let Some(tags) = in_spec.get(name.as_str()) else { continue };
        let kept: Vec<ImageTagStatus> =
            image_status.tags.into_iter().filter(|t| tags.contains(&t.tag.as_str())).collect();
        for tag in &kept {
            match tag.phase {
                ImagePullPhase::Succeeded => status.succeeded += 1,
                ImagePullPhase::Failed => status.failed += 1,
                ImagePullPhase::Pulling => status.pulling += 1,
                ImagePullPhase::Waiting => status.waiting += 1,
                ImagePullPhase::Unknown(_) => {}
            }
        }
        if !kept.is_empty() {
            status.image_statuses.insert(name, ImageStatus { tags: kept });
        }
    }
    status.desired = i32::try_from(in_spec.values().map(Vec::len).sum::<usize>()).unwrap_or(i32::MAX);
    update.status = Some(status);
    update
}

/// The requeue of a reconcile (upstream): the earliest wait, but at least 3-5 s.
pub fn requeue(candidates: &[Option<Duration>], jitter: f64) -> Option<Duration> {
    let earliest = candidates.iter().flatten().min().copied()?;
    if earliest < MIN_REQUEUE {
        return Some(MIN_REQUEUE + Duration::from_secs_f64(2.0 * jitter.clamp(0.0, 1.0)));
    }
    Some(earliest)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    fn stamp(seconds: i64) -> String {
        at(seconds).strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    fn node(ready_since: Option<i64>) -> Node {
        let conditions: Vec<Value> = ready_since
            .map(|s| vec![json!({"type": "Ready", "status": "True", "lastTransitionTime": stamp(s)})])
            .unwrap_or_else(|| vec![json!({"type": "Ready", "status": "False"})]);
        serde_json::from_value(json!({"metadata": {"name": "n1", "labels": {"zone": "a"}}, "status": {"conditions": conditions}}))
            .unwrap()
    }

    fn node_image(value: Value) -> NodeImage {
        let mut object = json!({"metadata": {"name": "n1"}});
        if let (Some(object), Some(extra)) = (object.as_object_mut(), value.as_object()) {
            object.extend(extra.clone());
        }
        serde_json::from_value(object).unwrap()
    }

    #[test]
    fn node_images_follow_their_nodes() {
        let delay = Duration::from_secs(30);
        let now = at(100);
        let existing = node_image(json!({}));
        let fake = node_image(json!({"metadata": {"name": "n1", "labels": {FAKE_NODE_IMAGE_LABEL: "true"}}}));
        let deleting = node_image(json!({"metadata": {"name": "n1", "deletionTimestamp": stamp(0)}}));
        let cases = [
            (Some(node(Some(0))), None, Lifecycle::Create),
            (Some(node(Some(90))), None, Lifecycle::CreateAfter(Duration::from_secs(20))),
            (Some(node(None)), None, Lifecycle::Done),
            (Some(node(Some(0))), Some(&existing), Lifecycle::Sync),
            (Some(node(Some(0))), Some(&deleting), Lifecycle::Done),
            (None, Some(&existing), Lifecycle::Delete),
            (None, Some(&fake), Lifecycle::Sync),
            (None, Some(&deleting), Lifecycle::Done),
            (None, None, Lifecycle::Done),
        ];
        for (index, (node, ni, expected)) in cases.into_iter().enumerate() {
            assert_eq!(lifecycle(node.as_ref(), ni, delay, now), expected, "case {index}");
        }
        assert_eq!(lifecycle(Some(&node(Some(99))), None, Duration::ZERO, now), Lifecycle::Create);
    }

    fn owner(name: &str, uid: &str) -> Value {
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob", "namespace": "ns", "name": name, "uid": uid})
    }

    #[test]
    fn spec_cleanup_drops_orphaned_expired_and_undated_tags() {
        let policy =
            |ttl: i64| json!({"ttlSecondsAfterFinished": ttl, "timeoutSeconds": 600, "backoffLimit": 3});
        let ni = node_image(json!({
            "metadata": {"name": "n1", "labels": {"zone": "b"}},
            "spec": {"images": {
                "nginx": {"tags": [
                    {"tag": "1", "createdAt": stamp(0), "ownerReferences": [owner("live", "u1")], "pullPolicy": policy(100)},
                    {"tag": "2", "createdAt": stamp(0), "ownerReferences": [owner("gone", "u2")], "pullPolicy": policy(100)},
                    {"tag": "3", "createdAt": stamp(0), "ownerReferences": [owner("live", "u1"), owner("recreated", "old")], "pullPolicy": policy(100)},
                    {"tag": "4", "ownerReferences": [owner("live", "u1")]}
                ]},
                "redis": {"tags": [
                    {"tag": "7", "createdAt": stamp(0), "ownerReferences": [owner("live", "u1")], "pullPolicy": policy(30)}
                ]},
                "busybox": {"tags": [
                    {"tag": "1", "createdAt": stamp(0), "ownerReferences": [owner("live", "u1")], "pullPolicy": policy(60)}
                ]}
            }},
            "status": {"desired": 6, "imageStatuses": {
                "redis": {"tags": [{"tag": "7", "phase": "Succeeded", "completionTime": stamp(10)}]},
                "busybox": {"tags": [{"tag": "1", "phase": "Succeeded", "completionTime": stamp(50)}]}
            }}
        }));
        let lookup = |owner: &ObjectReference| match owner.name.as_deref() {
            Some("live") => OwnerLookup::Found("u1".into()),
            Some("recreated") => OwnerLookup::Found("new".into()),
            _ => OwnerLookup::Missing,
        };
        let labels: BTreeMap<String, String> = [("zone".to_string(), "a".to_string())].into();
        let cleanup = clean_spec(&ni, Some(&labels), &lookup, at(80));
        assert_eq!(cleanup.labels, Some(labels));
        let images = cleanup.images.clone().unwrap();
        assert_eq!(
            images.keys().collect::<Vec<_>>(),
            ["busybox", "nginx"],
            "redis expired (TTL 30 s after 10)"
        );
        let nginx: Vec<(&str, usize)> =
            images["nginx"].tags.iter().map(|t| (t.tag.as_str(), t.owner_references.len())).collect();
        assert_eq!(nginx, [("1", 1), ("3", 1)]);
        assert_eq!(cleanup.requeue_after, Some(Duration::from_secs(30)), "busybox TTL ends at 110");
        assert!(
            cleanup.messages.contains(&"image nginx:4 has no createAt field".to_string()),
            "{:?}",
            cleanup.messages
        );

        let tidy = node_image(json!({
            "metadata": {"name": "n1", "labels": {"zone": "a"}},
            "spec": {"images": {"nginx": {"tags": [{"tag": "1", "createdAt": stamp(0), "ownerReferences": [owner("live", "u1")]}]}}}
        }));
        let cleanup =
            clean_spec(&tidy, Some(&[("zone".to_string(), "a".to_string())].into()), &lookup, at(80));
        assert!(!cleanup.modified(), "{cleanup:?}");
        let unknown = |_: &ObjectReference| OwnerLookup::Unknown;
        assert!(!clean_spec(&tidy, None, &unknown, at(80)).modified(), "a failed lookup keeps the owner");
    }

    #[test]
    fn silent_daemons_and_deadlines_fail_tags() {
        let ni = node_image(json!({
            "spec": {"images": {"nginx": {"tags": [
                {"tag": "quiet", "createdAt": stamp(0), "version": 1, "ownerReferences": [owner("j", "u")]},
                {"tag": "new", "createdAt": stamp(590)},
                {"tag": "slow", "createdAt": stamp(0), "pullPolicy": {"activeDeadlineSeconds": 60}},
                {"tag": "done", "createdAt": stamp(0), "pullPolicy": {"activeDeadlineSeconds": 60}}
            ]}}},
            "status": {"desired": 4, "imageStatuses": {"nginx": {"tags": [
                {"tag": "quiet", "phase": "Succeeded", "version": 0, "completionTime": stamp(5)},
                {"tag": "slow", "phase": "Pulling", "startTime": stamp(1)},
                {"tag": "done", "phase": "Succeeded", "completionTime": stamp(9)},
                {"tag": "removed", "phase": "Succeeded"}
            ]}}}
        }));
        let update = status_update(&ni, at(700));
        let status = update.status.unwrap();
        let tags: Vec<(&str, &str, &str)> = status.image_statuses["nginx"]
            .tags
            .iter()
            .map(|t| (t.tag.as_str(), t.phase.as_str(), t.message.as_str()))
            .collect();
        assert_eq!(
            tags,
            [
                ("done", "Succeeded", ""),
                ("quiet", "Failed", NOT_RESPONDED),
                ("slow", "Failed", DEADLINE_EXCEEDED)
            ]
        );
        assert_eq!((status.desired, status.succeeded, status.failed), (4, 1, 2));
        assert_eq!(update.failed.len(), 2);
        assert_eq!(update.failed[0].owners.len(), 1);
        assert_eq!(update.requeue_after, Some(Duration::from_secs(490)), "tag new times out at 1190");
        let quiet = status.image_statuses["nginx"].tags.iter().find(|t| t.tag == "quiet").unwrap();
        assert_eq!((quiet.version, quiet.completion_time.clone()), (1, Some(Time(at(700)))));

        let early = status_update(&ni, at(30));
        assert_eq!(
            early.status.map(|s| s.image_statuses["nginx"].tags.len()),
            Some(3),
            "only the removed tag goes"
        );
        assert!(early.failed.is_empty());
    }

    #[test]
    fn requeues_are_at_least_three_seconds() {
        assert_eq!(requeue(&[None, None], 0.5), None);
        assert_eq!(requeue(&[Some(Duration::from_secs(1)), None], 0.0), Some(Duration::from_secs(3)));
        assert_eq!(
            requeue(&[Some(Duration::from_secs(90)), Some(Duration::from_secs(40))], 0.0),
            Some(Duration::from_secs(40))
        );
    }
}
