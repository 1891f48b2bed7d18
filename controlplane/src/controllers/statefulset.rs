//! A minimal apps/v1 StatefulSet controller, as kube-controller-manager's: pods named
//! `<set>-<ordinal>` with the set as controller owner and the `controller-revision-hash`,
//! `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index` labels; one
//! ControllerRevision per pod template; `podManagementPolicy` `OrderedReady` (one pod at a
//! time, each waiting for the lower ordinals to be Ready; scale-down from the highest ordinal,
//! one at a time) or `Parallel`; `RollingUpdate` (highest ordinal first, one at a time, down to
//! the partition) or `OnDelete`; PVCs made from `volumeClaimTemplates` named
//! `<claim>-<set>-<ordinal>` (kept on scale-down and deletion, the default `Retain` policy); and
//! the status counters and revisions.
//!
//! Not modelled: adopting orphaned pods, `minReadySeconds` beyond the available count,
//! `maxUnavailable` above one, `ordinals.start`, and the PVC retention policy `Delete`.
//! [`plan`] and [`status`] decide; [`run`] reads the store and writes through the API.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{CONTROLLER_TICK, deployment::template_hash, workload};
use crate::{
    apiserver::{api::Api, objects, options::DeleteOptions},
    storage::{CollectionKey, ObjectKey},
};

/// The field manager of this controller's writes.
const FIELD_MANAGER: &str = "statefulset-controller";
/// Label of a pod and a ControllerRevision: the revision's name.
pub const REVISION_LABEL: &str = "controller-revision-hash";
/// Label of a pod: its own name (for per-pod Services).
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// Label of a pod: its ordinal.
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// Default `revisionHistoryLimit`.
const DEFAULT_HISTORY: usize = 10;

/// What the planner needs of a StatefulSet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetView {
    /// `spec.replicas`.
    pub replicas: i64,
    /// `podManagementPolicy: Parallel`.
    pub parallel: bool,
    /// `updateStrategy.type` is `RollingUpdate` (else `OnDelete`).
    pub rolling: bool,
    /// `updateStrategy.rollingUpdate.partition`.
    pub partition: i64,
    /// The revision of the current template.
    pub update_revision: String,
    /// The revision the set is rolling from.
    pub current_revision: String,
}

/// What the planner needs of one pod of the set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodView {
    /// Pod name.
    pub name: String,
    /// Its ordinal.
    pub ordinal: i64,
    /// Its `controller-revision-hash` label.
    pub revision: String,
    /// Running and Ready.
    pub ready: bool,
    /// Being deleted.
    pub terminating: bool,
    /// Succeeded or Failed: replaced.
    pub finished: bool,
}

/// One write of a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Create the pod of `ordinal` at `revision`.
    Create {
        /// The ordinal.
        ordinal: i64,
        /// Its revision.
        revision: String,
    },
    /// Delete this pod.
    Delete(String),
}

/// The ordinal of a pod of set `set_name` (`<set>-<n>`), `None` for a foreign name.
pub fn pod_ordinal(set_name: &str, pod_name: &str) -> Option<i64> {
    pod_name.strip_prefix(set_name)?.strip_prefix('-')?.parse().ok().filter(|n: &i64| *n >= 0)
}

/// The writes of one pass (pure), in kube-controller-manager's order: replace finished pods,
/// create missing ones (lowest ordinal first), remove condemned ones (highest first), then
/// roll one pod (highest ordinal first, not below the partition). `OrderedReady` stops at the
/// first write or at the first pod not Ready; `Parallel` does not wait.
pub fn plan(set: &SetView, pods: &[PodView]) -> Vec<Step> {
    let ordered = !set.parallel;
    let mut steps = Vec::new();
    let by_ordinal: BTreeMap<i64, &PodView> = pods.iter().map(|pod| (pod.ordinal, pod)).collect();

    for pod in pods.iter().filter(|pod| pod.ordinal < set.replicas && pod.finished && !pod.terminating) {
        steps.push(Step::Delete(pod.name.clone()));
        if ordered {
            return steps;
        }
    }
    for ordinal in 0..set.replicas {
        match by_ordinal.get(&ordinal) {
            None => {
                let revision = if set.rolling && ordinal < set.partition {
                    set.current_revision.clone()
                } else {
                    set.update_revision.clone()
                };
                steps.push(Step::Create { ordinal, revision });
                if ordered {
                    return steps;
                }
            }
            Some(pod) if ordered && (pod.terminating || !pod.ready) => return steps,
            Some(_) => {}
        }
    }
    let mut condemned: Vec<&PodView> = pods.iter().filter(|pod| pod.ordinal >= set.replicas).collect();
    condemned.sort_by_key(|pod| std::cmp::Reverse(pod.ordinal));
    for pod in condemned {
        if pod.terminating {
            if ordered {
                return steps;
            }
            continue;
        }
        steps.push(Step::Delete(pod.name.clone()));
        if ordered {
            return steps;
        }
    }
    if !set.rolling || !steps.is_empty() {
        return steps;
    }
    let replicas: Vec<&&PodView> = by_ordinal.range(0..set.replicas).map(|(_, pod)| pod).collect();
    if replicas.len() as i64 != set.replicas || replicas.iter().any(|pod| pod.terminating || !pod.ready) {
        return steps;
    }
    if let Some(pod) = replicas
        .iter()
        .rev()
        .filter(|pod| pod.ordinal >= set.partition)
        .find(|pod| pod.revision != set.update_revision)
    {
        steps.push(Step::Delete(pod.name.clone()));
    }
    steps
}

/// The status counters (pure): pods that exist and are not terminating, Ready ones, available
/// ones (`available` says which), at each revision; when a rolling update has reached every
/// replica the update revision becomes the current one.
pub fn status(
    set: &SetView,
    pods: &[PodView],
    available: &dyn Fn(&PodView) -> bool,
    generation: i64,
) -> Value {
    let live: Vec<&PodView> = pods.iter().filter(|pod| !pod.terminating).collect();
    let count = |keep: &dyn Fn(&PodView) -> bool| live.iter().filter(|pod| keep(pod)).count() as i64;
    let replicas = live.len() as i64;
    let ready = count(&|pod| pod.ready);
    let updated = count(&|pod| pod.revision == set.update_revision);
    let mut current_revision = set.current_revision.clone();
    let mut current = count(&|pod| pod.revision == set.current_revision);
    if set.rolling && updated == set.replicas && replicas == set.replicas && ready == set.replicas {
        current_revision = set.update_revision.clone();
        current = updated;
    }
    json!({
        "observedGeneration": generation,
        "replicas": replicas,
        "readyReplicas": ready,
        "availableReplicas": count(available),
        "currentReplicas": current,
        "updatedReplicas": updated,
        "currentRevision": current_revision,
        "updateRevision": set.update_revision,
        "collisionCount": 0,
    })
}

/// The name of the ControllerRevision of `template` for set `set_name`.
pub fn revision_name(set_name: &str, template: &Value) -> String {
    format!("{set_name}-{}", template_hash(template))
}

/// The ControllerRevisions to delete (pure): beyond `limit`, the oldest not in `in_use`.
pub fn revisions_to_prune(revisions: &[(String, i64)], in_use: &[&str], limit: usize) -> Vec<String> {
    let mut unused: Vec<&(String, i64)> =
        revisions.iter().filter(|(name, _)| !in_use.contains(&name.as_str())).collect();
    unused.sort_by_key(|(_, revision)| *revision);
    let surplus = unused.len().saturating_sub(limit);
    unused.into_iter().take(surplus).map(|(name, _)| name.clone()).collect()
}

pub(super) async fn run(api: Api) {
    let collection = CollectionKey { group: "apps".into(), resource: "statefulsets".into(), namespace: None };
    loop {
        let (all, _) = api.store.list(&collection);
        for set in all.iter().filter(|set| !objects::is_deleting(set)) {
            if let Err(error) = sync(&api, set).await {
                let name = objects::name(set).unwrap_or_default();
                tracing::debug!(statefulset = name, %error, "statefulset sync failed");
            }
        }
        tokio::time::sleep(CONTROLLER_TICK).await;
    }
}

fn set_view(set: &Value, update_revision: String, current_revision: String) -> SetView {
    let spec = set.get("spec").cloned().unwrap_or(json!({}));
    SetView {
        replicas: workload::desired_replicas(set),
        parallel: spec.get("podManagementPolicy").and_then(Value::as_str) == Some("Parallel"),
        rolling: spec.pointer("/updateStrategy/type").and_then(Value::as_str).unwrap_or("RollingUpdate")
            == "RollingUpdate",
        partition: spec
            .pointer("/updateStrategy/rollingUpdate/partition")
            .and_then(Value::as_i64)
            .unwrap_or(0),
        update_revision,
        current_revision,
    }
}

fn pod_view(set_name: &str, pod: &Value) -> Option<PodView> {
    let name = objects::name(pod)?;
    Some(PodView {
        name: name.to_string(),
        ordinal: pod_ordinal(set_name, name)?,
        revision: objects::labels(pod).get(REVISION_LABEL).cloned().unwrap_or_default(),
        ready: workload::pod_phase(pod) == "Running" && workload::is_pod_ready(pod),
        terminating: objects::is_deleting(pod),
        finished: matches!(workload::pod_phase(pod), "Succeeded" | "Failed"),
    })
}

/// Makes sure the ControllerRevision of the current template exists; returns the update
/// revision's name and each revision's template by name.
async fn sync_revisions(
    api: &Api,
    set: &Value,
    namespace: &str,
    uid: &str,
) -> Result<(String, BTreeMap<String, Value>, Vec<(String, i64)>), String> {
    let name = objects::name(set).unwrap_or_default();
    let template = set.pointer("/spec/template").cloned().unwrap_or(json!({}));
    let update = revision_name(name, &template);
    let owned = workload::owned_by(api, "apps", "controllerrevisions", namespace, uid);
    let mut templates = BTreeMap::new();
    let mut numbers = Vec::new();
    for revision in &owned {
        let Some(revision_name) = objects::name(revision) else { continue };
        let stored = revision.pointer("/data/spec/template").cloned().unwrap_or(json!({}));
        let mut stored = stored;
        if let Some(object) = stored.as_object_mut() {
            object.remove("$patch");
        }
        templates.insert(revision_name.to_string(), stored);
        numbers
            .push((revision_name.to_string(), revision.get("revision").and_then(Value::as_i64).unwrap_or(0)));
    }
    if !templates.contains_key(&update) {
        let next = numbers.iter().map(|(_, n)| *n).max().unwrap_or(0) + 1;
        let mut labels: BTreeMap<String, Value> = set
            .pointer("/spec/selector/matchLabels")
            .and_then(Value::as_object)
            .map(|labels| labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        labels.insert(REVISION_LABEL.into(), json!(update));
        let mut data_template = template.clone();
        if let Some(object) = data_template.as_object_mut() {
            object.insert("$patch".into(), json!("replace"));
        }
        let revision = json!({
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "name": update,
                "namespace": namespace,
                "labels": labels,
                "ownerReferences": [workload::controller_reference("apps/v1", "StatefulSet", set)],
            },
            "data": {"spec": {"template": data_template}},
            "revision": next,
        });
        let def =
            api.registry.find("apps", "v1", "controllerrevisions").ok_or("controllerrevisions not served")?;
        match api.create(&def, "v1", Some(namespace), revision, &workload::write_options(FIELD_MANAGER)).await
        {
            Ok(_) => {}
            Err(error) if error.code == 409 => {}
            Err(error) => return Err(error.to_string()),
        }
        templates.insert(update.clone(), template);
        numbers.push((update.clone(), next));
    }
    Ok((update, templates, numbers))
}

async fn sync(api: &Api, set: &Value) -> Result<(), String> {
    let namespace = objects::namespace(set).unwrap_or_default().to_string();
    let name = objects::name(set).unwrap_or_default().to_string();
    let uid = objects::uid(set).unwrap_or_default().to_string();
    let (update, templates, numbers) = sync_revisions(api, set, &namespace, &uid).await?;
    let current = set
        .pointer("/status/currentRevision")
        .and_then(Value::as_str)
        .filter(|revision| templates.contains_key(*revision))
        .unwrap_or(&update)
        .to_string();
    let view = set_view(set, update.clone(), current.clone());
    let owned = workload::owned_by(api, "", "pods", &namespace, &uid);
    let pods: Vec<PodView> = owned.iter().filter_map(|pod| pod_view(&name, pod)).collect();

    for step in plan(&view, &pods) {
        match step {
            Step::Create { ordinal, revision } => {
                let template = templates.get(&revision).cloned().unwrap_or(json!({}));
                create_pod(api, set, &template, &revision, ordinal).await?;
            }
            Step::Delete(pod_name) => {
                let def = api.registry.find("", "v1", "pods").ok_or("pods not served")?;
                match api.delete(&def, "v1", Some(&namespace), &pod_name, &DeleteOptions::default()).await {
                    Ok(_) => tracing::debug!(statefulset = %name, pod = %pod_name, "deleted a pod"),
                    Err(error) if error.code == 404 => {}
                    Err(error) => return Err(error.to_string()),
                }
            }
        }
    }

    let min_ready = set.pointer("/spec/minReadySeconds").and_then(Value::as_i64).unwrap_or(0);
    let now = workload::unix_now();
    let by_name: BTreeMap<&str, &Value> =
        owned.iter().filter_map(|pod| objects::name(pod).map(|n| (n, &**pod))).collect();
    let available = |pod: &PodView| {
        by_name.get(pod.name.as_str()).is_some_and(|pod| workload::is_pod_available(pod, min_ready, now))
    };
    let status = status(&view, &pods, &available, objects::generation(set));
    let limit = set
        .pointer("/spec/revisionHistoryLimit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_HISTORY, |n| usize::try_from(n).unwrap_or(DEFAULT_HISTORY));
    let mut in_use: Vec<&str> = pods.iter().map(|pod| pod.revision.as_str()).collect();
    let current_after = status["currentRevision"].as_str().unwrap_or_default().to_string();
    in_use.push(&update);
    in_use.push(&current_after);
    in_use.push(&current);
    for revision in revisions_to_prune(&numbers, &in_use, limit) {
        if let Some(def) = api.registry.find("apps", "v1", "controllerrevisions") {
            let _ = api.delete(&def, "v1", Some(&namespace), &revision, &DeleteOptions::default()).await;
        }
    }
    let key =
        ObjectKey { group: "apps".into(), resource: "statefulsets".into(), namespace: Some(namespace), name };
    workload::merge_status(api, &key, &status);
    Ok(())
}

/// Creates the claims of `volumeClaimTemplates` the pod of `ordinal` needs, then the pod.
async fn create_pod(
    api: &Api,
    set: &Value,
    template: &Value,
    revision: &str,
    ordinal: i64,
) -> Result<(), String> {
    let namespace = objects::namespace(set).unwrap_or_default();
    let set_name = objects::name(set).unwrap_or_default();
    let pod_name = format!("{set_name}-{ordinal}");
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": template.get("metadata").cloned().unwrap_or(json!({})),
        "spec": template.get("spec").cloned().unwrap_or(json!({})),
    });
    let mut labels = objects::labels(&pod);
    labels.insert(REVISION_LABEL.into(), revision.into());
    labels.insert(POD_NAME_LABEL.into(), pod_name.clone());
    labels.insert(POD_INDEX_LABEL.into(), ordinal.to_string());
    objects::set_meta(&mut pod, "name", Some(json!(pod_name)));
    objects::set_meta(&mut pod, "namespace", Some(json!(namespace)));
    objects::set_meta(&mut pod, "labels", Some(json!(labels)));
    objects::set_meta(
        &mut pod,
        "ownerReferences",
        Some(json!([workload::controller_reference("apps/v1", "StatefulSet", set)])),
    );
    pod["spec"]["hostname"] = json!(pod_name);
    if let Some(service) = set.pointer("/spec/serviceName").and_then(Value::as_str).filter(|s| !s.is_empty())
    {
        pod["spec"]["subdomain"] = json!(service);
    }
    let claims =
        set.pointer("/spec/volumeClaimTemplates").and_then(Value::as_array).cloned().unwrap_or_default();
    for claim in &claims {
        let Some(claim_name) = objects::name(claim) else { continue };
        let pvc_name = format!("{claim_name}-{set_name}-{ordinal}");
        create_claim(api, set, claim, &pvc_name).await?;
        let volumes = pod["spec"].as_object_mut().ok_or("the pod template spec is not an object")?;
        let list = volumes.entry("volumes").or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut() {
            list.retain(|volume| volume.get("name").and_then(Value::as_str) != Some(claim_name));
            list.push(json!({"name": claim_name, "persistentVolumeClaim": {"claimName": pvc_name}}));
        }
    }
    let def = api.registry.find("", "v1", "pods").ok_or("pods not served")?;
    match api.create(&def, "v1", Some(namespace), pod, &workload::write_options(FIELD_MANAGER)).await {
        Ok(_) => {
            tracing::debug!(statefulset = set_name, pod = %pod_name, revision, "created a pod");
            Ok(())
        }
        Err(error) if error.code == 409 => Ok(()),
        Err(error) => Err(error.to_string()),
    }
}

async fn create_claim(api: &Api, set: &Value, claim: &Value, pvc_name: &str) -> Result<(), String> {
    let namespace = objects::namespace(set).unwrap_or_default();
    let mut labels = objects::labels(claim);
    if let Some(selector) = set.pointer("/spec/selector/matchLabels").and_then(Value::as_object) {
        for (key, value) in selector {
            labels.insert(key.clone(), value.as_str().unwrap_or_default().to_string());
        }
    }
    let pvc = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": pvc_name,
            "namespace": namespace,
            "labels": labels,
            "annotations": claim.pointer("/metadata/annotations").cloned().unwrap_or(json!({})),
        },
        "spec": claim.get("spec").cloned().unwrap_or(json!({})),
    });
    let def =
        api.registry.find("", "v1", "persistentvolumeclaims").ok_or("persistentvolumeclaims not served")?;
    match api.create(&def, "v1", Some(namespace), pvc, &workload::write_options(FIELD_MANAGER)).await {
        Ok(_) => Ok(()),
        Err(error) if error.code == 409 => Ok(()),
        Err(error) => Err(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(replicas: i64, parallel: bool, rolling: bool, partition: i64) -> SetView {
        SetView {
            replicas,
            parallel,
            rolling,
            partition,
            update_revision: "new".into(),
            current_revision: "old".into(),
        }
    }

    /// `(ordinal, revision, ready, terminating)`.
    fn pods(specs: &[(i64, &str, bool, bool)]) -> Vec<PodView> {
        specs
            .iter()
            .map(|(ordinal, revision, ready, terminating)| PodView {
                name: format!("web-{ordinal}"),
                ordinal: *ordinal,
                revision: revision.to_string(),
                ready: *ready,
                terminating: *terminating,
                finished: false,
            })
            .collect()
    }

    fn create(ordinal: i64, revision: &str) -> Step {
        Step::Create { ordinal, revision: revision.into() }
    }

    fn delete(ordinal: i64) -> Step {
        Step::Delete(format!("web-{ordinal}"))
    }

    #[test]
    fn plans() {
        let cases: Vec<(&str, SetView, Vec<PodView>, Vec<Step>)> = vec![
            ("ordered: first pod", set(3, false, true, 0), vec![], vec![create(0, "new")]),
            (
                "ordered: waits for the lower ordinal to be ready",
                set(3, false, true, 0),
                pods(&[(0, "new", false, false)]),
                vec![],
            ),
            (
                "ordered: next pod once ready",
                set(3, false, true, 0),
                pods(&[(0, "new", true, false)]),
                vec![create(1, "new")],
            ),
            (
                "parallel: all at once",
                set(3, true, true, 0),
                vec![],
                vec![create(0, "new"), create(1, "new"), create(2, "new")],
            ),
            (
                "ordered: scale down from the highest ordinal, one at a time",
                set(1, false, true, 0),
                pods(&[(0, "new", true, false), (1, "new", true, false), (2, "new", true, false)]),
                vec![delete(2)],
            ),
            (
                "ordered: scale down waits for a terminating pod",
                set(1, false, true, 0),
                pods(&[(0, "new", true, false), (1, "new", true, false), (2, "new", true, true)]),
                vec![],
            ),
            (
                "parallel: scale down all at once",
                set(1, true, true, 0),
                pods(&[(0, "new", true, false), (1, "new", true, false), (2, "new", true, false)]),
                vec![delete(2), delete(1)],
            ),
            (
                "rolling update: highest ordinal first",
                set(3, false, true, 0),
                pods(&[(0, "old", true, false), (1, "old", true, false), (2, "old", true, false)]),
                vec![delete(2)],
            ),
            (
                "rolling update: next once the updated pod is ready",
                set(3, false, true, 0),
                pods(&[(0, "old", true, false), (1, "old", true, false), (2, "new", true, false)]),
                vec![delete(1)],
            ),
            (
                "rolling update: waits while a pod is not ready",
                set(3, false, true, 0),
                pods(&[(0, "old", true, false), (1, "old", true, false), (2, "new", false, false)]),
                vec![],
            ),
            (
                "rolling update: honours the partition",
                set(3, false, true, 2),
                pods(&[(0, "old", true, false), (1, "old", true, false), (2, "new", true, false)]),
                vec![],
            ),
            (
                "rolling update: a pod below the partition is recreated at the current revision",
                set(3, false, true, 2),
                pods(&[(1, "old", true, false), (2, "new", true, false)]),
                vec![create(0, "old")],
            ),
            (
                "on delete: nothing is rolled",
                set(3, false, false, 0),
                pods(&[(0, "old", true, false), (1, "old", true, false), (2, "old", true, false)]),
                vec![],
            ),
            (
                "on delete: a deleted pod comes back updated",
                set(2, false, false, 0),
                pods(&[(1, "old", true, false)]),
                vec![create(0, "new")],
            ),
        ];
        for (name, set, pods, expected) in cases {
            assert_eq!(plan(&set, &pods), expected, "{name}");
        }
        let mut failed = pods(&[(0, "new", true, false), (1, "new", false, false)]);
        failed[1].finished = true;
        assert_eq!(plan(&set(2, false, true, 0), &failed), vec![delete(1)], "a finished pod is replaced");
    }

    #[test]
    fn statuses() {
        let rolling = set(3, false, true, 0);
        let mid = pods(&[
            (0, "old", true, false),
            (1, "old", true, false),
            (2, "new", false, false),
            (3, "old", true, true),
        ]);
        let status_mid = status(&rolling, &mid, &|pod| pod.ready, 4);
        assert_eq!(
            status_mid,
            json!({"observedGeneration": 4, "replicas": 3, "readyReplicas": 2, "availableReplicas": 2, "currentReplicas": 2,
                "updatedReplicas": 1, "currentRevision": "old", "updateRevision": "new", "collisionCount": 0})
        );
        let done = pods(&[(0, "new", true, false), (1, "new", true, false), (2, "new", true, false)]);
        let status_done = status(&rolling, &done, &|pod| pod.ready, 4);
        assert_eq!(status_done["currentRevision"], "new");
        assert_eq!(status_done["currentReplicas"], 3);
        assert_eq!(status_done["updatedReplicas"], 3);
    }

    #[test]
    fn names_and_history() {
        assert_eq!(pod_ordinal("web", "web-3"), Some(3));
        assert_eq!(pod_ordinal("web", "web-x"), None);
        assert_eq!(pod_ordinal("web", "webby-1"), None);
        assert_eq!(pod_ordinal("web", "web--1"), None);
        let template = json!({"spec": {"containers": [{"name": "c", "image": "a"}]}});
        let other = json!({"spec": {"containers": [{"name": "c", "image": "b"}]}});
        assert_eq!(revision_name("web", &template), revision_name("web", &template));
        assert_ne!(revision_name("web", &template), revision_name("web", &other));
        let revisions: Vec<(String, i64)> = (1..=5).map(|n| (format!("r{n}"), n)).collect();
        assert_eq!(revisions_to_prune(&revisions, &["r1", "r5"], 1), ["r2", "r3"]);
        assert!(revisions_to_prune(&revisions, &[], 10).is_empty());
    }
}
