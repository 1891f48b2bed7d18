//! The decisions of the container meta reporter, as pure functions of the pod, the runtime's
//! view of its containers and the previous report (upstream `pkg/daemon/containermeta`):
//!
//! - [`is_kruise_managed`], [`needs_sync`], [`needs_sync_when_added`]: which pod events are
//!   worth a look (pods of Kruise workloads or with SidecarSet injections, whose containers or
//!   env-from-metadata values no longer match what was reported);
//! - [`plan_meta_set`]: the new [`RuntimeContainerMetaSet`] from the old one and the runtime's
//!   newest instance of each container (an entry is kept as long as its container ID is, and
//!   which containers still need their env read inside them);
//! - [`restart_targets`]: which running containers must be restarted because the pod is being
//!   updated in place and their env from labels/annotations is stale;
//! - [`parse_env`], [`RestartLimiter`] and the annotation patch.

use std::{
    collections::{BTreeMap, HashMap},
    time::Duration,
};

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};
use kruise_crds::common::{
    IN_PLACE_UPDATE_READY, RUNTIME_CONTAINERS_META_KEY, RuntimeContainerHashes, RuntimeContainerMeta,
    RuntimeContainerMetaSet, containermeta_hash::expected_env_from_metadata_hash,
};
use serde_json::{Value, json};

use crate::crr::core::{ANNOTATION_RESTART_COUNT, LABEL_CONTAINER_NAME};

/// The API group whose controllers make a pod "Kruise-managed" (upstream compares the owner's
/// group with `apps.kruise.io`).
pub const KRUISE_APPS_GROUP: &str = "apps.kruise.io";
/// Annotation SidecarSet injection leaves on a pod (upstream `SidecarSetHashAnnotation`); such
/// pods are reported even when no Kruise workload owns them.
pub const SIDECARSET_HASH_ANNOTATION: &str = "kruise.io/sidecarset-hash";
/// The kubelet's container annotation carrying its container hash (hexadecimal).
pub const ANNOTATION_CONTAINER_HASH: &str = "io.kubernetes.container.hash";
/// The command whose output gives a running container's environment.
pub const ENV_COMMAND: &str = "env";
/// How long reading a container's environment may take (upstream: 3 s).
pub const ENV_READ_TIMEOUT: Duration = Duration::from_secs(3);
/// When to look at a pod again after its environment could not be read (upstream: 3 s).
pub const ENV_READ_RETRY: Duration = Duration::from_secs(3);
/// Delay between a pod event and its sync, so that bursts of status writes make one sync
/// (upstream `enqueue`: 1 s).
pub const SYNC_DELAY: Duration = Duration::from_secs(1);
/// First delay before a container is restarted (upstream's restarter rate limiter: 3 s).
pub const RESTART_FIRST_DELAY: Duration = Duration::from_secs(3);
/// Longest delay before a container is restarted again (upstream: 10 min).
pub const RESTART_MAX_DELAY: Duration = Duration::from_secs(600);

/// Whether a Kruise workload controls the pod (its controller owner is in `apps.kruise.io`) or a
/// SidecarSet injected into it: only such pods are reported, as upstream.
pub fn is_kruise_managed(pod: &Pod) -> bool {
    let owned = pod.metadata.owner_references.iter().flatten().any(|owner| {
        owner.controller == Some(true)
            && owner.api_version.split_once('/').is_some_and(|(group, _)| group == KRUISE_APPS_GROUP)
    });
    owned || pod.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(SIDECARSET_HASH_ANNOTATION))
}

/// The set the pod's `apps.kruise.io/runtime-containers-meta` annotation holds (`None` without
/// the annotation).
pub fn reported_meta_set(pod: &Pod) -> Result<Option<RuntimeContainerMetaSet>, serde_json::Error> {
    match pod.metadata.annotations.as_ref().and_then(|a| a.get(RUNTIME_CONTAINERS_META_KEY)) {
        Some(text) => serde_json::from_str(text).map(Some),
        None => Ok(None),
    }
}

fn container_statuses(pod: &Pod) -> &[ContainerStatus] {
    pod.status.as_ref().and_then(|s| s.container_statuses.as_deref()).unwrap_or_default()
}

/// The spec of the container `name` (regular containers, then init containers, as upstream's
/// `util.GetContainer`).
pub fn container_spec<'a>(pod: &'a Pod, name: &str) -> Option<&'a Container> {
    let spec = pod.spec.as_ref()?;
    spec.containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .find(|container| container.name == name)
}

/// The env-from-metadata hash the container must report once it runs with the pod's current
/// labels and annotations.
pub fn expected_hash(container: &Container, pod: &Pod) -> u64 {
    let empty = BTreeMap::new();
    expected_env_from_metadata_hash(
        container,
        pod.metadata.labels.as_ref().unwrap_or(&empty),
        pod.metadata.annotations.as_ref().unwrap_or(&empty),
    )
}

/// Whether a pod event (`old` -> `new`) calls for a sync (upstream `eventFilter`): the pod is
/// Kruise-managed and its containers changed in number, or some started container is not
/// reported (no report, another count, another container ID), or, with env-from-metadata
/// handling on, its expected env hash differs from the reported one or from the one its
/// previous labels/annotations gave. Containers are matched by name (upstream by position,
/// which is the same when statuses follow the spec's order).
pub fn needs_sync(old: Option<&Pod>, new: &Pod, env_from_metadata: bool) -> bool {
    if !is_kruise_managed(new) {
        return false;
    }
    let count = |pod: &Pod| pod.spec.as_ref().map_or(0, |s| s.containers.len());
    if let Some(old) = old
        && count(old) != count(new)
    {
        return true;
    }
    let reported = reported_meta_set(new).ok().flatten();
    let statuses = container_statuses(new);
    for status in statuses {
        if status.container_id.as_deref().unwrap_or_default().is_empty() {
            continue;
        }
        let Some(reported) = &reported else { return true };
        if reported.containers.len() != statuses.len() {
            return true;
        }
        let Some(meta) = reported.containers.iter().find(|m| m.name == status.name) else { return true };
        if status.container_id.as_deref() != Some(meta.container_id.as_str()) {
            return true;
        }
        if env_from_metadata && let Some(spec) = container_spec(new, &status.name) {
            let hash = expected_hash(spec, new);
            if hash != meta.hashes.extracted_env_from_metadata_hash.unwrap_or(0) {
                return true;
            }
            if let Some(old) = old
                && container_spec(old, &status.name).is_some_and(|spec| expected_hash(spec, old) != hash)
            {
                return true;
            }
        }
    }
    false
}

/// Whether a pod seen for the first time calls for a sync: only when it already carries a
/// report (upstream does not report existing pods on start, to spare the API server; their next
/// status change brings them in).
pub fn needs_sync_when_added(pod: &Pod, env_from_metadata: bool) -> bool {
    reported_meta_set(pod).ok().flatten().is_some() && needs_sync(None, pod, env_from_metadata)
}

/// Whether the pod can be synced at all: not being deleted, and with container statuses.
pub fn syncable(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none() && !container_statuses(pod).is_empty()
}

/// The runtime name of the pod's containers (`containerd` in `containerd://<id>`), from the
/// first container status with an ID; `Ok(None)` while no container has one.
pub fn runtime_name(pod: &Pod) -> Result<Option<String>, String> {
    let Some(id) =
        container_statuses(pod).iter().filter_map(|s| s.container_id.as_deref()).find(|id| !id.is_empty())
    else {
        return Ok(None);
    };
    match id.split_once("://") {
        Some((runtime, rest)) if !runtime.is_empty() && !rest.is_empty() => Ok(Some(runtime.to_string())),
        _ => Err(format!("no runtime name in containerID {id}")),
    }
}

/// One container instance of the pod, as the runtime reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerInstance {
    /// The runtime's ID (without the `containerd://` prefix).
    pub id: String,
    /// The container's name in the pod spec.
    pub name: String,
    /// Whether it is running.
    pub running: bool,
    /// The kubelet's restart count of this instance.
    pub restart_count: i32,
    /// The kubelet's container hash (0 when the kubelet left none).
    pub hash: u64,
    /// When it was created (Unix nanoseconds).
    pub created_at: i64,
}

impl ContainerInstance {
    /// The instance a CRI `ContainerStatus` describes (the kubelet keeps the container name in
    /// a label and the restart count and hash in annotations).
    pub fn from_status(status: &cri::ContainerStatus) -> Self {
        let name = status
            .labels
            .get(LABEL_CONTAINER_NAME)
            .cloned()
            .or_else(|| status.metadata.as_ref().map(|m| m.name.clone()))
            .unwrap_or_default();
        Self {
            id: status.id.clone(),
            name,
            running: status.state == cri::ContainerState::ContainerRunning as i32,
            restart_count: status
                .annotations
                .get(ANNOTATION_RESTART_COUNT)
                .and_then(|count| count.parse().ok())
                .unwrap_or(0),
            hash: status
                .annotations
                .get(ANNOTATION_CONTAINER_HASH)
                .and_then(|hash| u64::from_str_radix(hash, 16).ok())
                .unwrap_or(0),
            created_at: status.created_at,
        }
    }
}

/// One container of the new report, with what the sync still has to do for it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedContainer {
    /// Its entry in the new report.
    pub meta: RuntimeContainerMeta,
    /// The runtime's ID of the instance (for `ExecSync` and `StopContainer`).
    pub runtime_id: String,
    /// Whether its env-from-metadata values must be read inside it now (not hashed yet and
    /// running).
    pub read_env: bool,
    /// Its spec.
    pub spec: Container,
}

/// The new report (upstream `manageContainerMetaSet`, before the env reads): one entry per
/// container status whose newest runtime instance and spec exist; an entry of the old report
/// with the same container ID is kept as it was (its hashes were computed once for that
/// instance), else a new one takes the kubelet's hash and restart count. `env_from_metadata`
/// is the `InPlaceUpdateEnvFromMetadata` gate.
pub fn plan_meta_set(
    pod: &Pod,
    instances: &[ContainerInstance],
    old: Option<&RuntimeContainerMetaSet>,
    runtime: &str,
    env_from_metadata: bool,
) -> Vec<PlannedContainer> {
    let mut newest: HashMap<&str, &ContainerInstance> = HashMap::new();
    for instance in instances {
        let entry = newest.entry(instance.name.as_str()).or_insert(instance);
        if instance.created_at > entry.created_at {
            *entry = instance;
        }
    }
    let mut planned = Vec::new();
    for status in container_statuses(pod) {
        let Some(instance) = newest.get(status.name.as_str()) else { continue };
        let Some(spec) = container_spec(pod, &status.name) else { continue };
        let container_id = format!("{runtime}://{}", instance.id);
        let meta = old
            .and_then(|old| old.containers.iter().rev().find(|m| m.container_id == container_id))
            .cloned()
            .unwrap_or_else(|| RuntimeContainerMeta {
                name: instance.name.clone(),
                container_id,
                restart_count: instance.restart_count,
                hashes: RuntimeContainerHashes {
                    plain_hash: instance.hash,
                    extracted_env_from_metadata_hash: None,
                },
            });
        let read_env = env_from_metadata
            && meta.hashes.extracted_env_from_metadata_hash.unwrap_or(0) == 0
            && instance.running;
        planned.push(PlannedContainer {
            meta,
            runtime_id: instance.id.clone(),
            read_env,
            spec: spec.clone(),
        });
    }
    planned
}

/// Whether the pod is being updated in place: its `InPlaceUpdateReady` condition is `False`.
pub fn in_place_updating(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|conditions| conditions.iter().find(|c| c.type_ == IN_PLACE_UPDATE_READY))
        .is_some_and(|c| c.status == "False")
}

/// The containers to restart (their full container IDs, `containerd://<id>`): only while the pod
/// is updated in place, those whose env-from-metadata values were read and differ from what the
/// pod's labels and annotations give now. The kubelet restarts them with the new values.
pub fn restart_targets(pod: &Pod, planned: &[PlannedContainer], env_from_metadata: bool) -> Vec<String> {
    if !env_from_metadata || !in_place_updating(pod) {
        return Vec::new();
    }
    planned
        .iter()
        .filter(|p| {
            let current = p.meta.hashes.extracted_env_from_metadata_hash.unwrap_or(0);
            current > 0 && current != expected_hash(&p.spec, pod)
        })
        .map(|p| p.meta.container_id.clone())
        .collect()
}

/// The variables `env` printed (`NAME=value` lines; a value may contain `=`; lines without one
/// are skipped).
pub fn parse_env(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .trim()
        .lines()
        .filter_map(|line| line.trim().split_once('='))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

/// The strategic-merge patch (sent to `pods/status`, as upstream) writing the report.
pub fn report_patch(set: &RuntimeContainerMetaSet) -> Result<Value, serde_json::Error> {
    Ok(json!({"metadata": {"annotations": {RUNTIME_CONTAINERS_META_KEY: serde_json::to_string(set)?}}}))
}

/// Splits a full container ID (`containerd://<id>`) into the runtime name and the runtime's ID.
pub fn split_container_id(id: &str) -> Option<(&str, &str)> {
    id.split_once("://").filter(|(runtime, rest)| !runtime.is_empty() && !rest.is_empty())
}

/// The restarter's rate limiter (client-go's per-item exponential failure limiter, 3 s doubling
/// to 10 min): every request to restart a container waits longer than the one before, until
/// the container was restarted and the limiter forgets it. A container whose env never matches
/// is so restarted less and less often instead of in a loop.
#[derive(Debug, Default)]
pub struct RestartLimiter {
    requests: HashMap<String, u32>,
}

impl RestartLimiter {
    /// How long to wait before restarting `id` for this request.
    pub fn when(&mut self, id: &str) -> Duration {
        let count = self.requests.entry(id.to_string()).or_insert(0);
        let delay =
            RESTART_FIRST_DELAY.saturating_mul(2u32.saturating_pow((*count).min(16))).min(RESTART_MAX_DELAY);
        *count = count.saturating_add(1);
        delay
    }

    /// Forgets `id` (it was restarted, or is gone).
    pub fn forget(&mut self, id: &str) {
        self.requests.remove(id);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use kruise_crds::common::containermeta_hash::current_env_from_metadata_hash;
    use pretty_assertions::assert_eq;

    use super::*;

    /// A CloneSet pod with one container `main` reading `APP_VERSION` from the label
    /// `app-version`, a `sidecar` without env from metadata, and container statuses with IDs.
    fn pod(version: &str, extra: Value) -> Pod {
        let mut value = json!({
            "metadata": {
                "name": "web-0", "namespace": "default", "uid": "uid-1",
                "labels": {"app": "web", "app-version": version},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                                     "name": "web", "uid": "cs", "controller": true}],
            },
            "spec": {"containers": [
                {"name": "main", "image": "nginx:1", "env": [
                    {"name": "APP_VERSION", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app-version']"}}},
                    {"name": "LITERAL", "value": "x"},
                ]},
                {"name": "sidecar", "image": "busybox:1"},
            ]},
            "status": {"containerStatuses": [
                {"name": "main", "containerID": "containerd://m1", "image": "nginx:1", "imageID": "",
                 "ready": true, "restartCount": 0},
                {"name": "sidecar", "containerID": "containerd://s1", "image": "busybox:1", "imageID": "",
                 "ready": true, "restartCount": 0},
            ]},
        });
        merge(&mut value, extra);
        serde_json::from_value(value).unwrap()
    }

    fn merge(target: &mut Value, patch: Value) {
        match patch {
            Value::Object(fields) => {
                for (key, value) in fields {
                    if value.is_null() {
                        target.as_object_mut().unwrap().remove(&key);
                    } else {
                        merge(target.as_object_mut().unwrap().entry(key).or_insert(json!({})), value);
                    }
                }
            }
            other => *target = other,
        }
    }

    fn instance(id: &str, name: &str, running: bool, created_at: i64) -> ContainerInstance {
        ContainerInstance { id: id.into(), name: name.into(), running, restart_count: 0, hash: 7, created_at }
    }

    /// The hash `main` reports once it runs with `APP_VERSION=version`.
    fn running_hash(pod: &Pod, version: &str) -> u64 {
        let spec = container_spec(pod, "main").unwrap();
        current_env_from_metadata_hash(spec, |_| Ok::<_, ()>(version.to_string())).unwrap()
    }

    fn meta(name: &str, id: &str, extracted: Option<u64>) -> RuntimeContainerMeta {
        RuntimeContainerMeta {
            name: name.into(),
            container_id: id.into(),
            restart_count: 0,
            hashes: RuntimeContainerHashes { plain_hash: 7, extracted_env_from_metadata_hash: extracted },
        }
    }

    /// The pod with a report of `main` and `sidecar` at the given hashes.
    fn reported(version: &str, main: Option<u64>, sidecar: Option<u64>) -> Pod {
        let set = RuntimeContainerMetaSet {
            containers: vec![
                meta("main", "containerd://m1", main),
                meta("sidecar", "containerd://s1", sidecar),
            ],
        };
        let text = serde_json::to_string(&set).unwrap();
        pod(version, json!({"metadata": {"annotations": {RUNTIME_CONTAINERS_META_KEY: text}}}))
    }

    fn sidecar_hash(pod: &Pod) -> u64 {
        expected_hash(container_spec(pod, "sidecar").unwrap(), pod)
    }

    #[test]
    fn which_pods_are_managed() {
        let cases = [
            ("kruise controller", pod("1", json!({})), true),
            (
                "apps/v1 controller",
                pod(
                    "1",
                    json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "r", "uid": "r", "controller": true}]}}),
                ),
                false,
            ),
            (
                "kruise owner that is not the controller",
                pod(
                    "1",
                    json!({"metadata": {"ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1",
                    "kind": "CloneSet", "name": "r", "uid": "r"}]}}),
                ),
                false,
            ),
            (
                "sidecarset injected",
                pod(
                    "1",
                    json!({"metadata": {"ownerReferences": null,
                    "annotations": {SIDECARSET_HASH_ANNOTATION: "{}"}}}),
                ),
                true,
            ),
            ("no owner", pod("1", json!({"metadata": {"ownerReferences": null}})), false),
        ];
        for (what, pod, expected) in cases {
            assert_eq!(is_kruise_managed(&pod), expected, "{what}");
            assert_eq!(needs_sync(None, &pod, true), expected, "{what}: unreported containers");
        }
    }

    #[test]
    fn event_filter() {
        let base = pod("1", json!({}));
        let v1 = running_hash(&base, "1");
        let side = sidecar_hash(&base);
        let consistent = reported("1", Some(v1), Some(side));
        let cases: Vec<(&str, Option<Pod>, Pod, bool, bool)> = vec![
            ("no report", None, pod("1", json!({})), true, true),
            (
                "no container started yet",
                None,
                pod(
                    "1",
                    json!({"status": {"containerStatuses": [
                    {"name": "main", "image": "nginx:1", "imageID": "", "ready": false, "restartCount": 0}]}}),
                ),
                true,
                false,
            ),
            ("report matches", None, consistent.clone(), true, false),
            ("report matches, gate off", None, consistent.clone(), false, false),
            (
                "container replaced",
                None,
                {
                    let mut p = consistent.clone();
                    p.status.as_mut().unwrap().container_statuses.as_mut().unwrap()[0].container_id =
                        Some("containerd://m2".into());
                    p
                },
                true,
                true,
            ),
            (
                "label changed: expected hash differs from the report",
                None,
                reported("2", Some(v1), Some(side)),
                true,
                true,
            ),
            ("label changed, gate off", None, reported("2", Some(v1), Some(side)), false, false),
            ("env not read yet", None, reported("1", None, Some(side)), true, true),
            ("old labels gave another hash", Some(pod("0", json!({}))), consistent.clone(), true, true),
            (
                "container count changed",
                Some(pod("1", json!({"spec": {"containers": [{"name": "main", "image": "nginx:1"}]}}))),
                consistent.clone(),
                false,
                true,
            ),
        ];
        for (what, old, new, gate, expected) in cases {
            assert_eq!(needs_sync(old.as_ref(), &new, gate), expected, "{what}");
        }
        assert!(!needs_sync_when_added(&pod("1", json!({})), true), "existing pods without a report wait");
        assert!(needs_sync_when_added(&reported("2", Some(v1), Some(side)), true));
        assert!(!needs_sync_when_added(&consistent, true));
    }

    #[test]
    fn runtime_names() {
        assert_eq!(runtime_name(&pod("1", json!({}))), Ok(Some("containerd".into())));
        let none = pod(
            "1",
            json!({"status": {"containerStatuses": [
            {"name": "main", "image": "nginx:1", "imageID": "", "ready": false, "restartCount": 0}]}}),
        );
        assert_eq!(runtime_name(&none), Ok(None));
        let bad = pod(
            "1",
            json!({"status": {"containerStatuses": [
            {"name": "main", "containerID": "m1", "image": "nginx:1", "imageID": "", "ready": false, "restartCount": 0}]}}),
        );
        assert_eq!(runtime_name(&bad), Err("no runtime name in containerID m1".into()));
        assert_eq!(split_container_id("containerd://abc"), Some(("containerd", "abc")));
        assert_eq!(split_container_id("abc"), None);
    }

    #[test]
    fn instances_from_cri_statuses() {
        let status = cri::ContainerStatus {
            id: "abc".into(),
            state: cri::ContainerState::ContainerRunning as i32,
            created_at: 5,
            labels: [(LABEL_CONTAINER_NAME.to_string(), "main".to_string())].into(),
            annotations: [
                (ANNOTATION_RESTART_COUNT.to_string(), "2".to_string()),
                (ANNOTATION_CONTAINER_HASH.to_string(), "8e45cbd0".to_string()),
            ]
            .into(),
            ..Default::default()
        };
        assert_eq!(
            ContainerInstance::from_status(&status),
            ContainerInstance {
                id: "abc".into(),
                name: "main".into(),
                running: true,
                restart_count: 2,
                hash: 0x8e45_cbd0,
                created_at: 5
            }
        );
        let exited = cri::ContainerStatus {
            state: cri::ContainerState::ContainerExited as i32,
            annotations: [(ANNOTATION_CONTAINER_HASH.to_string(), "not hex".to_string())].into(),
            ..status
        };
        let exited = ContainerInstance::from_status(&exited);
        assert!(!exited.running);
        assert_eq!((exited.hash, exited.restart_count), (0, 0));
    }

    #[test]
    fn new_meta_sets() {
        let base = pod("1", json!({}));
        let v1 = running_hash(&base, "1");
        let old = RuntimeContainerMetaSet {
            containers: vec![
                meta("main", "containerd://m1", Some(v1)),
                meta("sidecar", "containerd://s0", Some(9)),
            ],
        };
        let instances = vec![
            instance("m1", "main", true, 10),
            instance("s0", "sidecar", false, 5),
            instance("s1", "sidecar", true, 20),
            instance("x1", "not-in-status", true, 20),
        ];
        let planned = plan_meta_set(&base, &instances, Some(&old), "containerd", true);
        let summary: Vec<(String, String, Option<u64>, bool)> = planned
            .iter()
            .map(|p| {
                (
                    p.meta.name.clone(),
                    p.meta.container_id.clone(),
                    p.meta.hashes.extracted_env_from_metadata_hash,
                    p.read_env,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("main".into(), "containerd://m1".into(), Some(v1), false),
                ("sidecar".into(), "containerd://s1".into(), None, true),
            ],
            "main keeps its entry; sidecar's newest instance is new and must be read"
        );
        assert_eq!(planned[1].runtime_id, "s1");
        assert_eq!(planned[1].meta.hashes.plain_hash, 7);

        let stopped = vec![instance("m1", "main", false, 10)];
        let planned = plan_meta_set(&base, &stopped, None, "containerd", true);
        assert_eq!(planned.len(), 1, "containers the runtime does not know are left out");
        assert!(!planned[0].read_env, "a stopped container cannot be read");
        let planned = plan_meta_set(&base, &instances, None, "containerd", false);
        assert!(planned.iter().all(|p| !p.read_env), "gate off: no env is read");
    }

    #[test]
    fn restarts_only_while_updating_in_place_with_stale_env() {
        let base = pod("1", json!({}));
        let v1 = running_hash(&base, "1");
        let updating = json!({"status": {"conditions": [{"type": "InPlaceUpdateReady", "status": "False"}]}});
        let done = json!({"status": {"conditions": [{"type": "InPlaceUpdateReady", "status": "True"}]}});
        let planned_for = |pod: &Pod, main: Option<u64>| {
            let old = RuntimeContainerMetaSet {
                containers: vec![
                    meta("main", "containerd://m1", main),
                    meta("sidecar", "containerd://s1", Some(sidecar_hash(pod))),
                ],
            };
            let instances = vec![instance("m1", "main", true, 1), instance("s1", "sidecar", true, 1)];
            plan_meta_set(pod, &instances, Some(&old), "containerd", true)
        };
        let cases = [
            (
                "label changed while updating",
                pod("2", updating.clone()),
                Some(v1),
                true,
                vec!["containerd://m1"],
            ),
            ("label changed, not updating", pod("2", done.clone()), Some(v1), true, vec![]),
            ("label changed, no condition", pod("2", json!({})), Some(v1), true, vec![]),
            ("env already new", pod("1", updating.clone()), Some(v1), true, vec![]),
            ("env never read", pod("2", updating.clone()), None, true, vec![]),
            ("gate off", pod("2", updating.clone()), Some(v1), false, vec![]),
        ];
        for (what, pod, main, gate, expected) in cases {
            let planned = planned_for(&pod, main);
            assert_eq!(restart_targets(&pod, &planned, gate), expected, "{what}");
        }
    }

    #[test]
    fn env_output() {
        let env = parse_env("PATH=/bin\nAPP_VERSION=v2\nEQ=a=b\n\nnoise\n  SPACED=1  \n");
        assert_eq!(env.get("APP_VERSION").map(String::as_str), Some("v2"));
        assert_eq!(env.get("EQ").map(String::as_str), Some("a=b"));
        assert_eq!(env.get("SPACED").map(String::as_str), Some("1"));
        assert_eq!(env.len(), 4);
    }

    #[test]
    fn the_report_patch_is_upstreams_json() {
        let set = RuntimeContainerMetaSet {
            containers: vec![
                meta("main", "containerd://m1", Some(12)),
                meta("sidecar", "containerd://s1", None),
            ],
        };
        let patch = report_patch(&set).unwrap();
        assert_eq!(
            patch["metadata"]["annotations"][RUNTIME_CONTAINERS_META_KEY],
            "{\"containers\":[{\"name\":\"main\",\"containerID\":\"containerd://m1\",\"restartCount\":0,\
             \"hashes\":{\"plainHash\":7,\"extractedEnvFromMetadataHash\":12}},{\"name\":\"sidecar\",\
             \"containerID\":\"containerd://s1\",\"restartCount\":0,\"hashes\":{\"plainHash\":7}}]}"
        );
        let back = reported_meta_set(&pod("1", patch)).unwrap().unwrap();
        assert_eq!(back, set);
    }

    #[test]
    fn restart_requests_back_off_until_forgotten() {
        let mut limiter = RestartLimiter::default();
        let delays: Vec<u64> = (0..10).map(|_| limiter.when("containerd://a").as_secs()).collect();
        assert_eq!(delays, [3, 6, 12, 24, 48, 96, 192, 384, 600, 600]);
        assert_eq!(limiter.when("containerd://b").as_secs(), 3, "per container");
        limiter.forget("containerd://a");
        assert_eq!(limiter.when("containerd://a").as_secs(), 3);
    }
}
