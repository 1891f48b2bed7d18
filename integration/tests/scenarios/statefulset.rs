//! Advanced StatefulSet through the Kubernetes API, as users drive it: ordered creation with
//! stable identities, scaling through the scale subresource (highest ordinal removed first),
//! invalid sets refused with field paths, a v1alpha1 manifest served back as v1beta1; rolling
//! updates in place (pod UIDs kept, containers restarted) by descending ordinal down to the
//! partition, ReCreate, InPlaceOnly; Parallel with reserved ordinals and maxUnavailable checked
//! on every pod event; PVCs from volumeClaimTemplates and their retention policy.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{PersistentVolume, PersistentVolumeClaim, Pod},
};
use kruise_crds::apps::v1beta1::{ImagePullJob, StatefulSet};
use kruise_integration::{Scene, Skip, manager::ManagerSpec};
use kube::{
    Api, ResourceExt,
    api::{ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams},
};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, image_of, is_ready, merge, pod_summary, restarts_of, revision_of};

/// How long a set may take to reach a state.
const SETTLE: Duration = Duration::from_secs(120);

/// A cluster ready for Advanced StatefulSets (the CloneSet kit's cluster, nodes and manager).
struct StsKit {
    kit: Kit,
    sets: Api<StatefulSet>,
    pods: Api<Pod>,
}

fn resource(version: &str) -> ApiResource {
    ApiResource {
        group: "apps.kruise.io".into(),
        version: version.into(),
        api_version: format!("apps.kruise.io/{version}"),
        kind: "StatefulSet".into(),
        plural: "statefulsets".into(),
    }
}

fn ordinal(pod: &Pod) -> i64 {
    pod.name_any().rsplit('-').next().and_then(|n| n.parse().ok()).unwrap_or(-1)
}

impl StsKit {
    async fn start(scene: &Scene) -> Self {
        Self::start_with(scene, ManagerSpec::in_process()).await
    }

    async fn start_with(scene: &Scene, manager: ManagerSpec) -> Self {
        let kit = Kit::start_with(scene, Some(manager)).await;
        let sets: Api<StatefulSet> = Api::namespaced(kit.client.clone(), "default");
        let deadline = Instant::now() + Duration::from_secs(30);
        while sets.list(&ListParams::default().limit(1)).await.is_err() {
            assert!(
                Instant::now() < deadline,
                "StatefulSets are not served 30 s after the CRD was Established"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Self { pods: kit.pods.clone(), sets, kit }
    }

    async fn shutdown(self) {
        self.kit.shutdown().await;
    }

    /// Creates a set from its JSON (any served version).
    async fn create(&self, manifest: Value) -> Result<(), kube::Error> {
        let api_version = manifest["apiVersion"].as_str().unwrap_or("apps.kruise.io/v1beta1").to_string();
        let version = api_version.split_once('/').map(|(_, v)| v.to_string()).unwrap();
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.kit.client.clone(), "default", &resource(&version));
        let object: DynamicObject = serde_json::from_value(manifest).unwrap();
        api.create(&PostParams::default(), &object).await.map(|_| ())
    }

    /// A JSON merge patch on a set.
    async fn patch(&self, name: &str, patch: Value) -> Result<StatefulSet, kube::Error> {
        self.sets.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await
    }

    /// Sets the image of the first container, keeping the rest of the container list (a merge
    /// patch replaces the whole list of a custom resource, volume mounts included).
    async fn set_image(&self, name: &str, image: &str) {
        let set = self.sets.get(name).await.unwrap();
        let mut containers =
            serde_json::to_value(&set.spec.template.spec.as_ref().unwrap().containers).unwrap();
        containers[0]["image"] = json!(image);
        self.patch(name, json!({"spec": {"template": {"spec": {"containers": containers}}}})).await.unwrap();
    }

    /// The pods the set owns (terminating ones included), by ordinal.
    async fn pods_of(&self, name: &str) -> Vec<Pod> {
        let uid = self.sets.get(name).await.unwrap().uid().unwrap();
        let mut pods: Vec<Pod> = self
            .pods
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|pod| pod.owner_references().iter().any(|owner| owner.uid == uid))
            .collect();
        pods.sort_by_key(ordinal);
        pods
    }

    async fn wait_for(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(&StatefulSet, &[Pod]) -> bool,
    ) -> (StatefulSet, Vec<Pod>) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let set = self.sets.get(name).await.unwrap();
            let pods = self.pods_of(name).await;
            if check(&set, &pods) {
                return (set, pods);
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for StatefulSet {name}: {what}\nstatus: {}\npods: {:#?}",
                    serde_json::to_string_pretty(&set.status).unwrap(),
                    pods.iter().map(pod_summary).collect::<Vec<_>>()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until the set reconciled its generation with `replicas` pods, all updated and Ready.
    async fn wait_settled(&self, name: &str, replicas: i32) -> (StatefulSet, Vec<Pod>) {
        self.wait_for(name, &format!("{replicas} pods updated and ready"), |set, pods| {
            settled(set, pods, replicas)
        })
        .await
    }

    /// Starts recording every pod event of the pods labelled `app=<app>`.
    fn journal(&self, app: &str) -> Journal {
        Journal::start(self.pods.clone(), app, pod_view)
    }
}

/// The set reconciled its generation and runs exactly `replicas` pods, all Ready at the update
/// revision, and the rollout is complete.
fn settled(set: &StatefulSet, pods: &[Pod], replicas: i32) -> bool {
    let Some(status) = &set.status else { return false };
    status.observed_generation == set.metadata.generation.unwrap_or(0)
        && status.replicas == replicas
        && status.ready_replicas == replicas
        && status.updated_replicas == replicas
        && status.updated_ready_replicas == replicas
        && status.current_revision == status.update_revision
        && pods.len() == replicas as usize
        && pods.iter().all(|pod| is_ready(pod) && pod.metadata.deletion_timestamp.is_none())
        && pods.iter().all(|pod| revision_of(pod) == Some(status.update_revision.as_str()))
}

/// An Advanced StatefulSet manifest (v1beta1) with one `main` container; `extra` is merged
/// into `spec`.
fn statefulset(name: &str, replicas: i32, image: &str, extra: Value) -> Value {
    let mut manifest = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "terminationGracePeriodSeconds": 1,
                    "containers": [{"name": "main", "image": image}]
                }
            }
        }
    });
    merge(&mut manifest["spec"], extra);
    manifest
}

/// What a pod looked like at one point of the journal.
#[derive(Clone, Debug, PartialEq)]
struct PodView {
    uid: String,
    ready: bool,
    terminating: bool,
    revision: String,
}

/// Every pod event of an app, pods keyed by name, so that orders (creation after readiness,
/// deletion by descending ordinal) and limits (unavailable pods) can be checked at every step.
type Journal = crate::journal::Journal<PodView>;

fn pod_view(pod: &Pod) -> (String, PodView) {
    let view = PodView {
        uid: pod.uid().unwrap_or_default(),
        ready: is_ready(pod),
        terminating: pod.metadata.deletion_timestamp.is_some(),
        revision: revision_of(pod).unwrap_or_default().to_string(),
    };
    (crate::journal::by_name(pod), view)
}

impl Journal {
    /// The other pods at the moment `name` first appeared.
    fn when_created(&self, name: &str) -> Option<BTreeMap<String, PodView>> {
        self.all().into_iter().find(|snapshot| snapshot.contains_key(name))
    }

    /// Pods in the order they were first seen terminating (or gone without that).
    fn deletion_order(&self) -> Vec<String> {
        let mut order: Vec<String> = Vec::new();
        let mut previous: BTreeMap<String, PodView> = BTreeMap::new();
        for snapshot in self.all() {
            for (name, view) in &previous {
                let gone = snapshot.get(name).is_none_or(|now| now.terminating || now.uid != view.uid);
                if gone && !view.terminating && !order.contains(name) {
                    order.push(name.clone());
                }
            }
            for (name, view) in &snapshot {
                if view.terminating && !order.contains(name) {
                    order.push(name.clone());
                }
            }
            previous = snapshot;
        }
        order
    }

    /// Pods in the order they first carried `revision`.
    fn revision_order(&self, revision: &str) -> Vec<String> {
        let mut order = Vec::new();
        for snapshot in self.all() {
            for (name, view) in &snapshot {
                if view.revision == revision && !view.terminating && !order.contains(name) {
                    order.push(name.clone());
                }
            }
        }
        order
    }

    /// The most of `desired` that were at once missing, terminating or not Ready.
    fn max_unavailable(&self, desired: &[String]) -> usize {
        self.all()
            .iter()
            .map(|snapshot| {
                desired
                    .iter()
                    .filter(|name| !snapshot.get(*name).is_some_and(|v| v.ready && !v.terminating))
                    .count()
            })
            .max()
            .unwrap_or(0)
    }
}

fn names(pods: &[Pod]) -> Vec<String> {
    pods.iter().map(ResourceExt::name_any).collect()
}

fn uids(pods: &[Pod]) -> BTreeSet<String> {
    pods.iter().filter_map(|pod| pod.uid()).collect()
}

/// `OrderedReady`: each ordinal is created only once its predecessor is Ready; pods carry their
/// identity (name, hostname, subdomain, pod-name and pod-index labels, revision label); status
/// as upstream reports it; the scale subresource scales up in order and down from the highest
/// ordinal, one at a time; invalid sets are refused with field paths; a v1alpha1 manifest is
/// served back as v1beta1.
pub async fn ordered_identity_and_scale(scene: Scene) -> Result<(), Skip> {
    let kit = StsKit::start(&scene).await;
    let journal = kit.journal("web");
    kit.create(statefulset("web", 3, "nginx:1.25", json!({}))).await.unwrap();
    let (set, pods) = kit.wait_settled("web", 3).await;
    assert_eq!(names(&pods), ["web-0", "web-1", "web-2"]);
    for n in 1..3 {
        let before = journal.when_created(&format!("web-{n}")).unwrap();
        let previous = before.get(&format!("web-{}", n - 1));
        assert!(
            previous.is_some_and(|p| p.ready),
            "web-{n} was created before web-{} was Ready: {before:?}",
            n - 1
        );
    }
    let status = set.status.clone().unwrap();
    let mut identities = Vec::new();
    for (n, pod) in pods.iter().enumerate() {
        let spec = pod.spec.as_ref().unwrap();
        let labels = pod.labels();
        assert_eq!(spec.hostname.as_deref(), Some(pod.name_any().as_str()));
        assert_eq!(spec.subdomain.as_deref(), Some("web"));
        assert_eq!(labels["statefulset.kubernetes.io/pod-name"], pod.name_any());
        assert_eq!(labels["apps.kubernetes.io/pod-index"], n.to_string());
        assert_eq!(revision_of(pod), Some(status.update_revision.as_str()));
        let owner = pod.owner_references().iter().find(|o| o.controller == Some(true)).unwrap();
        assert_eq!(
            (owner.api_version.as_str(), owner.kind.as_str()),
            ("apps.kruise.io/v1beta1", "StatefulSet")
        );
        identities.push(json!({
            "name": pod.name_any(),
            "hostname": spec.hostname,
            "subdomain": spec.subdomain,
            "podName": labels["statefulset.kubernetes.io/pod-name"],
            "podIndex": labels["apps.kubernetes.io/pod-index"],
            "lifecycle": labels.get("lifecycle.apps.kruise.io/state"),
        }));
    }
    scene.observe("identity", &identities);
    assert!(status.update_revision.starts_with("web-"), "{status:?}");
    let summary = json!({
        "replicas": status.replicas,
        "readyReplicas": status.ready_replicas,
        "availableReplicas": status.available_replicas,
        "currentReplicas": status.current_replicas,
        "updatedReplicas": status.updated_replicas,
        "updatedReadyReplicas": status.updated_ready_replicas,
        "updatedAvailableReplicas": status.updated_available_replicas,
        "currentIsUpdate": status.current_revision == status.update_revision,
        "observedGeneration": status.observed_generation == set.metadata.generation.unwrap(),
        "labelSelector": status.label_selector,
        "collisionCount": status.collision_count,
    });
    assert_eq!(
        summary,
        json!({
            "replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
            "updatedReadyReplicas": 3, "updatedAvailableReplicas": 3, "currentIsUpdate": true,
            "observedGeneration": true, "labelSelector": "app=web", "collisionCount": 0
        })
    );
    scene.observe("status/created", &summary);
    let defaulted = &set.spec;
    scene.observe(
        "defaults",
        json!({
            "podManagementPolicy": defaulted.pod_management_policy.as_str(),
            "updateStrategy": serde_json::to_value(&defaulted.update_strategy).unwrap(),
            "revisionHistoryLimit": defaulted.revision_history_limit,
            "retention": serde_json::to_value(&defaulted.persistent_volume_claim_retention_policy).unwrap(),
        }),
    );

    // Scale up through the scale subresource: still one at a time, in order.
    kit.sets
        .patch_scale("web", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 5}})))
        .await
        .unwrap();
    let (_, pods) = kit.wait_settled("web", 5).await;
    assert_eq!(names(&pods), ["web-0", "web-1", "web-2", "web-3", "web-4"]);
    for n in 3..5 {
        let before = journal.when_created(&format!("web-{n}")).unwrap();
        assert!(
            before.get(&format!("web-{}", n - 1)).is_some_and(|p| p.ready),
            "web-{n} before web-{} Ready",
            n - 1
        );
    }
    let scale = kit.sets.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(5));
    assert_eq!(scale.status.as_ref().map(|s| s.replicas), Some(5));
    assert_eq!(scale.status.and_then(|s| s.selector).as_deref(), Some("app=web"));

    // Scale down removes the highest ordinal first, each only once the one above is gone.
    journal.reset();
    let kept = uids(&pods[..2]);
    kit.sets
        .patch_scale("web", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 2}})))
        .await
        .unwrap();
    let (_, pods) = kit.wait_settled("web", 2).await;
    assert_eq!(uids(&pods), kept, "web-0 and web-1 are kept");
    let order = journal.deletion_order();
    assert_eq!(order, ["web-4", "web-3", "web-2"]);
    for pair in ["web-4", "web-3", "web-2"].windows(2) {
        let snapshots = journal.all();
        let first = snapshots.iter().find(|s| s.get(pair[1]).is_some_and(|v| v.terminating)).unwrap();
        assert!(!first.contains_key(pair[0]), "{} was deleted before {} was gone", pair[1], pair[0]);
    }
    scene.observe("scale down order", &order);

    // An invalid set is refused with field paths, and nothing is created for it.
    let error = kit
        .create(statefulset(
            "bad",
            2,
            "nginx:1.25",
            json!({
                "selector": {"matchLabels": {"app": "other"}},
                "podManagementPolicy": "Random",
                "reserveOrdinals": [1, "5-3"],
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -1, "maxUnavailable": 2}}
            }),
        ))
        .await
        .expect_err("an invalid StatefulSet must be refused");
    let kube::Error::Api(response) = &error else { panic!("unexpected error {error:?}") };
    assert_eq!(response.code, 422, "{response:?}");
    let paths = [
        "spec.template.metadata.labels",
        "spec.podManagementPolicy",
        "spec.reserveOrdinals[1]",
        "spec.updateStrategy.rollingUpdate.partition",
    ];
    for path in paths {
        assert!(response.message.contains(path), "the message names {path}: {}", response.message);
    }
    assert!(kit.sets.get_opt("bad").await.unwrap().is_none());
    scene.observe("invalid", json!({"code": response.code, "reason": response.reason, "paths": paths}));

    // A v1alpha1 manifest is defaulted, runs, and is served back as v1beta1.
    let alpha = json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "StatefulSet",
        "metadata": {"name": "alpha"},
        "spec": {
            "replicas": 2,
            "serviceName": "alpha",
            "selector": {"matchLabels": {"app": "alpha"}},
            "template": {
                "metadata": {"labels": {"app": "alpha"}},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "main", "image": "nginx:1.25"}]}
            },
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "ReCreate"}}
        }
    });
    kit.create(alpha).await.unwrap();
    let (beta, pods) = kit.wait_settled("alpha", 2).await;
    assert_eq!(names(&pods), ["alpha-0", "alpha-1"]);
    let beta_json = serde_json::to_value(&beta).unwrap();
    assert_eq!(beta_json["apiVersion"], "apps.kruise.io/v1beta1");
    assert_eq!(beta_json["spec"]["updateStrategy"]["type"], "RollingUpdate");
    assert_eq!(beta_json["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"], 1);
    assert_eq!(beta_json["spec"]["podManagementPolicy"], "OrderedReady");
    let alpha_api: Api<DynamicObject> =
        Api::namespaced_with(kit.kit.client.clone(), "default", &resource("v1alpha1"));
    let alpha_json = serde_json::to_value(alpha_api.get("alpha").await.unwrap()).unwrap();
    assert_eq!(alpha_json["apiVersion"], "apps.kruise.io/v1alpha1");
    assert_eq!(alpha_json["status"]["readyReplicas"], 2);
    scene.observe(
        "v1alpha1 served as v1beta1",
        json!({"spec": beta_json["spec"]["updateStrategy"], "readyAlpha": alpha_json["status"]["readyReplicas"]}),
    );

    // A pod the set cannot create shows as condition FailedCreatePod until it can.
    let squatter: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "cf-1", "labels": {"app": "squatter"}},
        "spec": {"terminationGracePeriodSeconds": 0, "containers": [{"name": "main", "image": "nginx:1.25"}]}
    }))
    .unwrap();
    kit.pods.create(&PostParams::default(), &squatter).await.unwrap();
    kit.create(statefulset("cf", 2, "nginx:1.25", json!({}))).await.unwrap();
    let (set, _) = kit
        .wait_for("cf", "FailedCreatePod reported", |set, _| {
            set.status.as_ref().is_some_and(|s| s.conditions.iter().any(|c| c.type_ == "FailedCreatePod"))
        })
        .await;
    let condition =
        set.status.unwrap().conditions.into_iter().find(|c| c.type_ == "FailedCreatePod").unwrap();
    assert_eq!(condition.status, "True");
    let message = condition.message.unwrap_or_default();
    assert!(
        message.starts_with("StatefulPodControl failed to create Pod error:") && message.contains("cf-1"),
        "{message}"
    );
    kit.pods.delete("cf-1", &DeleteParams::default()).await.unwrap();
    let (set, _) =
        kit.wait_for("cf", "created once the name is free", |set, pods| settled(set, pods, 2)).await;
    assert!(set.status.unwrap().conditions.is_empty(), "the condition goes with the failure");
    scene.observe("FailedCreatePod", json!({"status": condition.status, "cleared": true}));

    // Deletion protection: Always refuses; Cascading refuses while replicas > 0.
    kit.patch("cf", json!({"metadata": {"labels": {"policy.kruise.io/delete-protection": "Always"}}}))
        .await
        .unwrap();
    let refused = kit.sets.delete("cf", &DeleteParams::default()).await.expect_err("Always protects");
    assert!(
        matches!(&refused, kube::Error::Api(r) if r.code == 403 && r.message.contains("delete-protection")),
        "{refused:?}"
    );
    kit.patch("cf", json!({"metadata": {"labels": {"policy.kruise.io/delete-protection": "Cascading"}}}))
        .await
        .unwrap();
    let refused = kit.sets.delete("cf", &DeleteParams::default()).await.expect_err("Cascading with replicas");
    assert!(matches!(&refused, kube::Error::Api(r) if r.code == 403), "{refused:?}");
    kit.patch("cf", json!({"spec": {"replicas": 0}})).await.unwrap();
    kit.wait_settled("cf", 0).await;
    kit.sets.delete("cf", &DeleteParams::default()).await.expect("Cascading with 0 replicas may be deleted");
    scene.observe("deletion protection", "Always and Cascading(replicas>0) refused with 403");

    kit.shutdown().await;
    Ok(())
}

/// A rolling update in place with partition 2 of 5 updates ordinals 4, 3 and 2 only, one at a
/// time, keeping pod UIDs and PVCs and restarting the container once; lowering the partition
/// finishes it; InPlaceOnly refuses a non-image change; ReCreate replaces pods, highest ordinal
/// first.
pub async fn rolling_updates(scene: Scene) -> Result<(), Skip> {
    let kit = StsKit::start(&scene).await;
    create_volumes(&kit, "db-volume", 5, None).await;
    let mut in_place = with_claims(json!({"whenScaled": "Retain", "whenDeleted": "Retain"}));
    merge(
        &mut in_place,
        json!({
            "template": {"spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}},
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "partition": 2}}
        }),
    );
    kit.create(statefulset("db", 5, "nginx:1.25", in_place)).await.unwrap();
    let (set, before) = kit.wait_settled("db", 5).await;
    let claim_uids = || async {
        let api: Api<PersistentVolumeClaim> = Api::namespaced(kit.kit.client.clone(), "default");
        let claims = api.list(&ListParams::default().labels("app=db")).await.unwrap().items;
        claims
            .iter()
            .map(|claim| (claim.name_any(), claim.uid().unwrap_or_default()))
            .collect::<BTreeMap<_, _>>()
    };
    let claims_before = claim_uids().await;
    assert_eq!(claims_before.len(), 5, "one PVC per ordinal: {claims_before:?}");
    let old_revision = set.status.unwrap().update_revision;
    let journal = kit.journal("db");
    kit.set_image("db", "nginx:1.26").await;
    let (set, after) = kit
        .wait_for("db", "ordinals 4, 3, 2 updated in place", |set, pods| {
            let Some(status) = &set.status else { return false };
            status.observed_generation == set.metadata.generation.unwrap_or(0)
                && status.updated_replicas == 3
                && status.updated_ready_replicas == 3
                && status.ready_replicas == 5
                && pods.len() == 5
                && pods.iter().all(is_ready)
                && pods[2..].iter().all(|p| image_of(p) == "nginx:1.26" && restarts_of(p) == 1)
        })
        .await;
    let status = set.status.clone().unwrap();
    assert_eq!(uids(&after), uids(&before), "an in-place update keeps every pod");
    assert_eq!(claim_uids().await, claims_before, "an in-place update keeps every PVC");
    for pod in &after[..2] {
        assert_eq!(
            (image_of(pod), restarts_of(pod), revision_of(pod)),
            ("nginx:1.25".into(), 0, Some(old_revision.as_str()))
        );
    }
    for pod in &after[2..] {
        assert_eq!(revision_of(pod), Some(status.update_revision.as_str()));
        let conditions = pod.status.as_ref().unwrap().conditions.clone().unwrap();
        assert!(conditions.iter().any(|c| c.type_ == "InPlaceUpdateReady" && c.status == "True"));
        assert!(pod.annotations().contains_key("apps.kruise.io/inplace-update-state"));
    }
    assert_eq!(status.current_revision, old_revision, "the rollout is not complete below the partition");
    assert_eq!((status.current_replicas, status.updated_replicas), (2, 3));
    let order = journal.revision_order(&status.update_revision);
    assert_eq!(order, ["db-4", "db-3", "db-2"]);
    let desired: Vec<String> = (0..5).map(|n| format!("db-{n}")).collect();
    let unavailable = journal.max_unavailable(&desired);
    assert!(unavailable <= 1, "maxUnavailable 1 was exceeded: {unavailable}");
    scene.observe(
        "in place with partition 2",
        json!({"order": order, "uidsKept": true, "claimsKept": true, "current": status.current_replicas, "updated": status.updated_replicas}),
    );

    // Partition 0 finishes the rollout; currentRevision follows.
    kit.patch("db", json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}})).await.unwrap();
    let (set, after) = kit.wait_settled("db", 5).await;
    assert_eq!(uids(&after), uids(&before));
    assert!(after.iter().all(|p| image_of(p) == "nginx:1.26" && restarts_of(p) == 1));
    let status = set.status.unwrap();
    assert_eq!(status.current_replicas, 5);
    assert_eq!(journal.revision_order(&status.update_revision), ["db-4", "db-3", "db-2", "db-1", "db-0"]);

    // InPlaceOnly: an image change is accepted, any other change refused.
    kit.patch(
        "db",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}}}}),
    )
    .await
    .unwrap();
    let refused = kit
        .patch("db", json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]}]}}}}))
        .await
        .expect_err("InPlaceOnly refuses an env change");
    let kube::Error::Api(response) = &refused else { panic!("unexpected error {refused:?}") };
    assert_eq!(response.code, 422, "{response:?}");
    assert!(response.message.contains("spec.template"), "{}", response.message);
    kit.set_image("db", "nginx:1.27").await;
    let (_, after) = kit.wait_settled("db", 5).await;
    assert_eq!(uids(&after), uids(&before));
    scene.observe("in place only", json!({"refusedCode": response.code, "imageChangeInPlace": true}));

    // ReCreate: new pods with the same names, highest ordinal first.
    kit.create(statefulset("re", 3, "nginx:1.25", json!({}))).await.unwrap();
    let (_, before) = kit.wait_settled("re", 3).await;
    let journal = kit.journal("re");
    kit.set_image("re", "nginx:1.26").await;
    let (_, after) = kit.wait_settled("re", 3).await;
    assert_eq!(names(&after), ["re-0", "re-1", "re-2"]);
    assert!(uids(&after).is_disjoint(&uids(&before)), "every pod was recreated");
    assert!(after.iter().all(|p| image_of(p) == "nginx:1.26" && restarts_of(p) == 0));
    let order = journal.deletion_order();
    assert_eq!(order, ["re-2", "re-1", "re-0"]);
    scene.observe("recreate", json!({"order": order, "allNew": true}));

    kit.shutdown().await;
    Ok(())
}

/// Parallel: reserved ordinals are skipped (and their pods deleted), creations stay within
/// `scaleStrategy.maxUnavailable`, and a rolling update with maxUnavailable 2 never has more
/// than two desired pods unavailable.
pub async fn parallel_reserved_and_max_unavailable(scene: Scene) -> Result<(), Skip> {
    let kit = StsKit::start(&scene).await;
    let journal = kit.journal("par");
    kit.create(statefulset(
        "par",
        4,
        "nginx:1.25",
        json!({
            "podManagementPolicy": "Parallel",
            "reserveOrdinals": [1],
            "scaleStrategy": {"maxUnavailable": 2},
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}
        }),
    ))
    .await
    .unwrap();
    let (_, pods) = kit.wait_settled("par", 4).await;
    assert_eq!(names(&pods), ["par-0", "par-2", "par-3", "par-4"]);
    let desired: Vec<String> = names(&pods);
    let creating = journal
        .all()
        .iter()
        .map(|snapshot| snapshot.values().filter(|v| !v.ready).count())
        .max()
        .unwrap_or(0);
    assert!(creating <= 2, "scaleStrategy.maxUnavailable 2 allows two pods not ready at once: {creating}");
    scene.observe("reserved", json!({"pods": desired, "creatingAtOnceAtMost2": true}));

    // Reserving another ordinal deletes its pod and adds the next ordinal.
    let removed = pods.iter().find(|p| p.name_any() == "par-2").unwrap().uid().unwrap();
    kit.patch("par", json!({"spec": {"reserveOrdinals": [1, "2-2"]}})).await.unwrap();
    let (_, pods) = kit
        .wait_for("par", "par-2 replaced by par-5", |set, pods| {
            settled(set, pods, 4) && names(pods) == ["par-0", "par-3", "par-4", "par-5"]
        })
        .await;
    assert!(!uids(&pods).contains(&removed));
    scene.observe("reserved more", names(&pods));

    // A ReCreate rollout with maxUnavailable 2 takes two pods at a time, never more.
    let desired = names(&pods);
    let before = uids(&pods);
    journal.reset();
    kit.set_image("par", "nginx:1.26").await;
    let (_, pods) = kit.wait_settled("par", 4).await;
    assert!(uids(&pods).is_disjoint(&before));
    let unavailable = journal.max_unavailable(&desired);
    assert_eq!(unavailable, 2, "maxUnavailable 2: two at a time, never more");
    scene.observe("parallel rollout max unavailable", unavailable);

    kit.shutdown().await;
    Ok(())
}

/// `count` hostPath PersistentVolumes of 1Gi named `<prefix>-<n>`, in StorageClass `class`
/// when given.
async fn create_volumes(kit: &StsKit, prefix: &str, count: usize, class: Option<&str>) {
    let api: Api<PersistentVolume> = Api::all(kit.kit.client.clone());
    for n in 0..count {
        let mut volume = json!({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": format!("{prefix}-{n}")},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain",
                "hostPath": {"path": format!("/tmp/kruise-{prefix}-{n}")}
            }
        });
        if let Some(class) = class {
            volume["spec"]["storageClassName"] = json!(class);
        }
        let volume: PersistentVolume = serde_json::from_value(volume).unwrap();
        api.create(&PostParams::default(), &volume).await.unwrap();
    }
}

fn with_claims(retention: Value) -> Value {
    json!({
        "template": {"spec": {"containers": [{
            "name": "main", "image": "nginx:1.25", "volumeMounts": [{"name": "data", "mountPath": "/data"}]
        }]}},
        "volumeClaimTemplates": [{
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        }],
        "persistentVolumeClaimRetentionPolicy": retention,
    })
}

/// The PVC names of a set that exist and are not being deleted.
async fn claims_of(kit: &StsKit, set: &str) -> Vec<String> {
    let api: Api<PersistentVolumeClaim> = Api::namespaced(kit.kit.client.clone(), "default");
    let mut names: Vec<String> = api
        .list(&ListParams::default().labels(&format!("app={set}")))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|claim| claim.metadata.deletion_timestamp.is_none())
        .map(|claim| claim.name_any())
        .collect();
    names.sort();
    names
}

async fn wait_claims(kit: &StsKit, set: &str, expected: &[&str]) {
    let deadline = Instant::now() + SETTLE;
    loop {
        let names = claims_of(kit, set).await;
        if names == expected {
            return;
        }
        assert!(Instant::now() < deadline, "PVCs of {set}: {names:?}, expected {expected:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// One PVC per ordinal, mounted by its pod and kept when the pod goes; kept on scale-down with
/// `whenScaled: Retain` (and reused when the ordinal comes back), deleted with `whenScaled:
/// Delete`; deleted with the set with `whenDeleted: Delete`.
pub async fn volume_claims_and_retention(scene: Scene) -> Result<(), Skip> {
    let kit = StsKit::start(&scene).await;
    create_volumes(&kit, "sts-volume", 12, None).await;
    scene.note(
        "12 hostPath PersistentVolumes are created first: on the real tier the claims must bind before \
         kube-scheduler places the pods (PVC phases are not compared)",
    );

    // Retain (the default): PVCs stay on scale-down and come back with their ordinal.
    kit.create(statefulset(
        "keep",
        3,
        "nginx:1.25",
        with_claims(json!({"whenScaled": "Retain", "whenDeleted": "Retain"})),
    ))
    .await
    .unwrap();
    let (_, pods) = kit.wait_settled("keep", 3).await;
    wait_claims(&kit, "keep", &["data-keep-0", "data-keep-1", "data-keep-2"]).await;
    for pod in &pods {
        let volumes = pod.spec.as_ref().unwrap().volumes.clone().unwrap_or_default();
        let claim =
            volumes.iter().find(|v| v.name == "data").and_then(|v| v.persistent_volume_claim.as_ref());
        assert_eq!(claim.map(|c| c.claim_name.clone()), Some(format!("data-{}", pod.name_any())));
    }
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(kit.kit.client.clone(), "default");
    let first = claims.get("data-keep-2").await.unwrap();
    assert!(first.owner_references().is_empty(), "Retain/Retain: no owner");
    assert_eq!(first.labels()["app"], "keep", "claims carry the selector's labels");
    kit.patch("keep", json!({"spec": {"replicas": 1}})).await.unwrap();
    kit.wait_settled("keep", 1).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    wait_claims(&kit, "keep", &["data-keep-0", "data-keep-1", "data-keep-2"]).await;
    kit.patch("keep", json!({"spec": {"replicas": 3}})).await.unwrap();
    kit.wait_settled("keep", 3).await;
    assert_eq!(claims.get("data-keep-2").await.unwrap().uid(), first.uid(), "the ordinal gets its PVC back");
    scene.observe("retain", json!({"kept": true, "reused": true}));

    // whenScaled: Delete: the PVCs of removed ordinals go with their pods.
    kit.create(statefulset(
        "scaled",
        3,
        "nginx:1.25",
        with_claims(json!({"whenScaled": "Delete", "whenDeleted": "Retain"})),
    ))
    .await
    .unwrap();
    kit.wait_settled("scaled", 3).await;
    wait_claims(&kit, "scaled", &["data-scaled-0", "data-scaled-1", "data-scaled-2"]).await;
    kit.patch("scaled", json!({"spec": {"replicas": 1}})).await.unwrap();
    kit.wait_settled("scaled", 1).await;
    wait_claims(&kit, "scaled", &["data-scaled-0"]).await;
    scene.observe("whenScaled Delete", claims_of(&kit, "scaled").await);

    // whenDeleted: Delete: the set owns its PVCs, which go with it.
    kit.create(statefulset(
        "gone",
        2,
        "nginx:1.25",
        with_claims(json!({"whenScaled": "Retain", "whenDeleted": "Delete"})),
    ))
    .await
    .unwrap();
    kit.wait_settled("gone", 2).await;
    wait_claims(&kit, "gone", &["data-gone-0", "data-gone-1"]).await;
    let uid = kit.sets.get("gone").await.unwrap().uid().unwrap();
    let claim = claims.get("data-gone-0").await.unwrap();
    assert!(claim.owner_references().iter().any(|o| o.uid == uid && o.kind == "StatefulSet"), "{claim:?}");
    kit.sets.delete("gone", &DeleteParams::background()).await.unwrap();
    wait_claims(&kit, "gone", &[]).await;
    scene.observe("whenDeleted Delete", "the PVCs went with the set");

    kit.shutdown().await;
    Ok(())
}

/// The lifecycle state label of a pod.
fn lifecycle_of(pod: &Pod) -> String {
    pod.labels().get("lifecycle.apps.kruise.io/state").cloned().unwrap_or_default()
}

/// The status of a pod condition, empty when absent.
fn condition_of(pod: &Pod, type_: &str) -> String {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == type_))
        .map(|c| c.status.clone())
        .unwrap_or_default()
}

async fn label_pod(kit: &StsKit, pod: &str, key: &str, value: Option<&str>) {
    kit.pods
        .patch(pod, &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {key: value}}})))
        .await
        .unwrap();
}

/// Waits until pod `name` satisfies `check`; returns it.
async fn wait_pod(kit: &StsKit, name: &str, what: &str, check: impl Fn(&Pod) -> bool) -> Pod {
    let deadline = Instant::now() + SETTLE;
    loop {
        if let Some(pod) = kit.pods.get_opt(name).await.unwrap()
            && check(&pod)
        {
            return pod;
        }
        if Instant::now() > deadline {
            let pod = kit.pods.get_opt(name).await.unwrap();
            panic!("timed out waiting for pod {name}: {what}\n{:?}", pod.as_ref().map(pod_summary));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Lifecycle hooks hold pods where the hook says: a scale-down leaves the pod in
/// `PreparingDelete` (NotReady) until its preDelete label goes; an in-place update waits in
/// `PreparingUpdate` until its inPlaceUpdate label goes, then waits in `Updated` until it is
/// back. `unorderedUpdate` updates by priority; a specified-delete label recreates one pod.
pub async fn hooks_priority_and_specified_delete(scene: Scene) -> Result<(), Skip> {
    let kit = StsKit::start(&scene).await;
    kit.create(statefulset(
        "hk",
        3,
        "nginx:1.25",
        json!({
            // With OrderedReady a pod waiting in PreparingUpdate is "not available" and halts the
            // set before the update step could release it, as upstream; hooks want Parallel.
            "podManagementPolicy": "Parallel",
            "template": {
                "metadata": {"labels": {"app": "hk", "hold-delete": "true", "hold-update": "true"}},
                "spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}
            },
            "lifecycle": {
                "preDelete": {"labelsHandler": {"hold-delete": "true"}, "markPodNotReady": true},
                "inPlaceUpdate": {"labelsHandler": {"hold-update": "true"}, "markPodNotReady": true}
            },
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}
        }),
    ))
    .await
    .unwrap();
    kit.wait_settled("hk", 3).await;

    // preDelete: the condemned pod waits, NotReady, until its label goes.
    kit.patch("hk", json!({"spec": {"replicas": 2}})).await.unwrap();
    let held = wait_pod(&kit, "hk-2", "PreparingDelete and NotReady", |pod| {
        lifecycle_of(pod) == "PreparingDelete"
            && !is_ready(pod)
            && condition_of(pod, "KruisePodReady") == "False"
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(kit.pods.get("hk-2").await.unwrap().uid(), held.uid(), "the hook holds the pod");
    label_pod(&kit, "hk-2", "hold-delete", None).await;
    let (_, pods) = kit.wait_settled("hk", 2).await;
    assert_eq!(names(&pods), ["hk-0", "hk-1"]);
    scene.observe("preDelete", "PreparingDelete, NotReady, deleted once released");

    // inPlaceUpdate: PreparingUpdate until released, Updated until the hook is back.
    let before = kit.pods.get("hk-1").await.unwrap();
    kit.set_image("hk", "nginx:1.26").await;
    wait_pod(&kit, "hk-1", "PreparingUpdate and NotReady", |pod| {
        lifecycle_of(pod) == "PreparingUpdate" && condition_of(pod, "KruisePodReady") == "False"
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let waiting = kit.pods.get("hk-1").await.unwrap();
    assert_eq!(
        (lifecycle_of(&waiting), image_of(&waiting)),
        ("PreparingUpdate".to_string(), "nginx:1.25".to_string())
    );
    assert_eq!(lifecycle_of(&kit.pods.get("hk-0").await.unwrap()), "Normal", "hk-0 waits its turn");
    label_pod(&kit, "hk-1", "hold-update", None).await;
    let updated = wait_pod(&kit, "hk-1", "updated in place, Updated, Ready", |pod| {
        lifecycle_of(pod) == "Updated"
            && image_of(pod) == "nginx:1.26"
            && restarts_of(pod) == 1
            && is_ready(pod)
    })
    .await;
    assert_eq!(updated.uid(), before.uid());
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        lifecycle_of(&kit.pods.get("hk-0").await.unwrap()),
        "Normal",
        "an Updated pod still holds the rollout"
    );
    label_pod(&kit, "hk-1", "hold-update", Some("true")).await;
    wait_pod(&kit, "hk-1", "Normal once the hook is back", |pod| {
        lifecycle_of(pod) == "Normal" && is_ready(pod)
    })
    .await;
    wait_pod(&kit, "hk-0", "hk-0 held next", |pod| lifecycle_of(pod) == "PreparingUpdate").await;
    label_pod(&kit, "hk-0", "hold-update", None).await;
    wait_pod(&kit, "hk-0", "hk-0 Updated", |pod| lifecycle_of(pod) == "Updated" && is_ready(pod)).await;
    label_pod(&kit, "hk-0", "hold-update", Some("true")).await;
    let (_, pods) = kit
        .wait_for("hk", "both updated and Normal", |set, pods| {
            settled(set, pods, 2) && pods.iter().all(|p| lifecycle_of(p) == "Normal")
        })
        .await;
    assert!(pods.iter().all(|p| image_of(p) == "nginx:1.26" && restarts_of(p) == 1));
    scene
        .observe("inPlaceUpdate hook", "PreparingUpdate -> Updating -> Updated -> Normal, one pod at a time");

    // unorderedUpdate: highest priority first, down to the partition.
    kit.create(statefulset(
        "pri",
        4,
        "nginx:1.25",
        json!({
            "podManagementPolicy": "Parallel",
            "template": {"spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}},
            "updateStrategy": {"rollingUpdate": {
                "podUpdatePolicy": "InPlaceIfPossible",
                "partition": 1,
                "unorderedUpdate": {"priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}}
            }}
        }),
    ))
    .await
    .unwrap();
    kit.wait_settled("pri", 4).await;
    for (pod, rank) in [("pri-0", "1"), ("pri-1", "4"), ("pri-2", "2"), ("pri-3", "3")] {
        label_pod(&kit, pod, "rank", Some(rank)).await;
    }
    // The labels reach the controller through its pod watch, the template change through its
    // set watch: give the former a moment so that the first pick already sees them.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let journal = kit.journal("pri");
    kit.set_image("pri", "nginx:1.26").await;
    let (set, pods) = kit
        .wait_for("pri", "three pods updated", |set, pods| {
            set.status.as_ref().is_some_and(|s| s.updated_ready_replicas == 3 && s.ready_replicas == 4)
                && pods.iter().filter(|p| image_of(p) == "nginx:1.26" && is_ready(p)).count() == 3
        })
        .await;
    let order = journal.revision_order(&set.status.as_ref().unwrap().update_revision);
    assert_eq!(order, ["pri-1", "pri-3", "pri-2"]);
    assert_eq!(image_of(&pods[0]), "nginx:1.25", "the lowest priority stays below the partition");
    scene.observe("unordered priority", &order);

    // A specified-delete label recreates that pod (at its revision: pri-0 stays current).
    let victim = pods[0].uid().unwrap();
    label_pod(&kit, "pri-0", "apps.kruise.io/specified-delete", Some("true")).await;
    let replaced = wait_pod(&kit, "pri-0", "recreated", |pod| {
        pod.uid().as_deref() != Some(victim.as_str())
            && is_ready(pod)
            && pod.metadata.deletion_timestamp.is_none()
    })
    .await;
    assert_eq!(image_of(&replaced), "nginx:1.25");
    assert!(!replaced.labels().contains_key("apps.kruise.io/specified-delete"));
    scene.observe("specified delete", json!({"recreated": true, "image": image_of(&replaced)}));

    kit.shutdown().await;
    Ok(())
}

const PRE_DOWNLOAD_CREATED: &str = "apps.kruise.io/pre-predownload-created";
const PRE_DOWNLOAD_IGNORED: &str = "apps.kruise.io/image-predownload-ignored";

/// The update revision of a set and its labels, once it carries `label`.
async fn update_revision_labelled(
    kit: &StsKit,
    name: &str,
    label: &str,
) -> (String, BTreeMap<String, String>) {
    let revisions: Api<ControllerRevision> = Api::namespaced(kit.kit.client.clone(), "default");
    let deadline = Instant::now() + SETTLE;
    loop {
        let set = kit.sets.get(name).await.unwrap();
        let update = set.status.as_ref().map(|s| s.update_revision.clone()).unwrap_or_default();
        if let Some(revision) = revisions.get_opt(&update).await.unwrap()
            && revision.labels().contains_key(label)
        {
            return (update, revision.labels().clone());
        }
        assert!(Instant::now() < deadline, "revision {update} of {name} never got {label}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Image pre-download (gate `PreDownloadImageForInPlaceUpdate`): an in-place rollout held by its
/// partition gets one ImagePullJob per changed container, `<updateRevision>-<container>`, owned
/// by the set and selecting the pods not yet updated, with the parallelism and timeout of the
/// set's annotations; a ReCreate rollout is labelled ignored and gets none; the job goes once
/// the rollout converged.
pub async fn image_pre_download(scene: Scene) -> Result<(), Skip> {
    let gates = "ImagePullJobGate=true,PreDownloadImageForInPlaceUpdate=true";
    let kit = StsKit::start_with(&scene, ManagerSpec::in_process().with_feature_gates(gates)).await;
    let jobs: Api<ImagePullJob> = Api::namespaced(kit.kit.client.clone(), "default");
    let mut pre = statefulset(
        "pre",
        5,
        "nginx:1.25",
        json!({
            "podManagementPolicy": "Parallel",
            "template": {"spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}},
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "partition": 3}}
        }),
    );
    pre["metadata"]["annotations"] = json!({
        "apps.kruise.io/image-predownload-parallelism": "2",
        "apps.kruise.io/image-predownload-timeout-seconds": "120"
    });
    kit.create(pre).await.unwrap();
    kit.create(statefulset("plain", 5, "nginx:1.25", json!({"podManagementPolicy": "Parallel"})))
        .await
        .unwrap();
    kit.wait_settled("pre", 5).await;
    kit.wait_settled("plain", 5).await;

    kit.set_image("pre", "nginx:1.26").await;
    kit.set_image("plain", "nginx:1.26").await;
    let (update, labels) = update_revision_labelled(&kit, "pre", PRE_DOWNLOAD_CREATED).await;
    assert!(!labels.contains_key(PRE_DOWNLOAD_IGNORED));
    let job_name = format!("{update}-main");
    let job = jobs.get(&job_name).await.unwrap_or_else(|e| panic!("ImagePullJob {job_name}: {e}"));
    let owner = job.owner_references().first().cloned().expect("owned");
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("StatefulSet", "pre", Some(true))
    );
    let spec = serde_json::to_value(&job.spec).unwrap();
    assert_eq!(spec["image"], "nginx:1.26");
    assert_eq!(spec["parallelism"], 2);
    assert_eq!(spec["pullPolicy"], json!({"backoffLimit": 1, "timeoutSeconds": 120}));
    assert_eq!(spec["completionPolicy"]["type"], "Always");
    let not_in = &spec["podSelector"]["matchExpressions"][0];
    assert_eq!(
        (not_in["key"].as_str(), not_in["operator"].as_str()),
        (Some("controller-revision-hash"), Some("NotIn"))
    );
    assert!(not_in["values"].as_array().unwrap().iter().any(|v| v == update.as_str()), "{not_in}");
    scene.observe(
        "job",
        json!({"image": spec["image"], "parallelism": spec["parallelism"], "pullPolicy": spec["pullPolicy"], "selectorOperator": not_in["operator"]}),
    );

    let (plain_update, _) = update_revision_labelled(&kit, "plain", PRE_DOWNLOAD_IGNORED).await;
    assert!(
        jobs.get_opt(&format!("{plain_update}-main")).await.unwrap().is_none(),
        "no job for a ReCreate rollout"
    );
    scene.observe("recreate", "ignored, no job");

    kit.patch("pre", json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}})).await.unwrap();
    let (_, pods) = kit.wait_settled("pre", 5).await;
    assert!(pods.iter().all(|pod| image_of(pod) == "nginx:1.26"));
    let deadline = Instant::now() + SETTLE;
    while jobs.get_opt(&job_name).await.unwrap().is_some_and(|job| job.metadata.deletion_timestamp.is_none())
    {
        assert!(Instant::now() < deadline, "the pre-download job outlived the rollout");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    scene.observe("after rollout", "job deleted");
    kit.shutdown().await;
    Ok(())
}

/// The storage a PVC requests and the capacity its status reports.
fn claim_sizes(claim: &PersistentVolumeClaim) -> (String, String) {
    let request = claim
        .spec
        .as_ref()
        .and_then(|s| s.resources.as_ref())
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
        .map(|q| q.0.clone())
        .unwrap_or_default();
    let capacity = claim
        .status
        .as_ref()
        .and_then(|s| s.capacity.as_ref())
        .and_then(|c| c.get("storage"))
        .map(|q| q.0.clone())
        .unwrap_or_default();
    (request, capacity)
}

/// The scenario's stand-in for a CSI resizer (nothing resizes volumes in the test clusters):
/// while `enabled`, every PVC of `app` whose spec requests `size` gets `status.capacity` = `size`
/// through the status subresource.
struct Resizer {
    enabled: Arc<std::sync::atomic::AtomicBool>,
    resized: Arc<Mutex<BTreeSet<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Resizer {
    fn start(claims: Api<PersistentVolumeClaim>, app: &str, size: &str) -> Self {
        let enabled = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let resized: Arc<Mutex<BTreeSet<String>>> = Arc::default();
        let (selector, size) = (format!("app={app}"), size.to_string());
        let task = {
            let (enabled, resized) = (enabled.clone(), resized.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    if !enabled.load(std::sync::atomic::Ordering::SeqCst) {
                        continue;
                    }
                    let Ok(list) = claims.list(&ListParams::default().labels(&selector)).await else {
                        continue;
                    };
                    for claim in list.items {
                        let (request, capacity) = claim_sizes(&claim);
                        if request != size || capacity == size {
                            continue;
                        }
                        let patch = json!({"status": {"capacity": {"storage": size}}});
                        let name = claim.name_any();
                        if claims
                            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await
                            .is_ok()
                        {
                            resized.lock().insert(name);
                        }
                    }
                }
            })
        };
        Self { enabled, resized, task }
    }

    fn enable(&self) {
        self.enabled.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn resized(&self) -> Vec<String> {
        self.resized.lock().iter().cloned().collect()
    }
}

impl Drop for Resizer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A StorageClass with no provisioner (the scenarios bring their own PersistentVolumes).
async fn create_storage_class(kit: &StsKit, name: &str, allow_expansion: bool) {
    let api: Api<DynamicObject> = Api::all_with(
        kit.kit.client.clone(),
        &ApiResource {
            group: "storage.k8s.io".into(),
            version: "v1".into(),
            api_version: "storage.k8s.io/v1".into(),
            kind: "StorageClass".into(),
            plural: "storageclasses".into(),
        },
    );
    let class: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": allow_expansion,
    }))
    .unwrap();
    api.create(&PostParams::default(), &class).await.unwrap();
}

/// A set whose `data` claim template of `size` is in `class` and follows the template on rolling
/// update (`volumeClaimUpdateStrategy: OnPodRollingUpdate`).
fn with_resizable_claims(class: &str, size: &str) -> Value {
    json!({
        "podManagementPolicy": "Parallel",
        "template": {"spec": {"containers": [{
            "name": "main", "image": "nginx:1.25", "volumeMounts": [{"name": "data", "mountPath": "/data"}]
        }]}},
        "volumeClaimTemplates": [{
            "metadata": {"name": "data"},
            "spec": {
                "storageClassName": class,
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": size}}
            }
        }],
        "volumeClaimUpdateStrategy": {"type": "OnPodRollingUpdate"},
    })
}

/// PVC resize on rolling update (gate `StatefulSetAutoResizePVCGate` on for this manager):
/// growing the claim template from 1Gi to 2Gi together with the image expands each pod's PVC
/// (same PVC, `spec.resources.requests` 2Gi, annotated with the set) and rolls the pod only once
/// its PVC reports the new capacity. Nothing resizes volumes in the test clusters, so the
/// scenario plays the CSI resizer: it sets the PVC's `status.capacity` (status subresource) once
/// it sees the request grow, and holds that back at first to show the pods wait for it. The
/// webhook defaults `volumeClaimUpdateStrategy` to `OnDelete` and refuses resizing a template
/// whose StorageClass has `allowVolumeExpansion: false`.
pub async fn volume_claim_resize_on_rolling_update(scene: Scene) -> Result<(), Skip> {
    let gates = "ImagePullJobGate=true,StatefulSetAutoResizePVCGate=true";
    let kit = StsKit::start_with(&scene, ManagerSpec::in_process().with_feature_gates(gates)).await;
    create_storage_class(&kit, "sts-expandable", true).await;
    create_storage_class(&kit, "sts-fixed", false).await;
    create_volumes(&kit, "sts-resize-volume", 2, Some("sts-expandable")).await;
    scene.note(
        "the scenario plays the CSI resizer: it patches PVC status.capacity once it sees the request grow \
         (nothing resizes volumes in the test clusters)",
    );
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(kit.kit.client.clone(), "default");

    // The webhook defaults the strategy with the gate on.
    kit.create(statefulset("plain", 0, "nginx:1.25", json!({}))).await.unwrap();
    let plain = serde_json::to_value(kit.sets.get("plain").await.unwrap().spec).unwrap();
    assert_eq!(plain["volumeClaimUpdateStrategy"], json!({"type": "OnDelete"}));
    scene.observe("defaulted strategy", &plain["volumeClaimUpdateStrategy"]);

    // A class without expansion: resizing its template is refused with the field path.
    kit.create(statefulset("fixed", 0, "nginx:1.25", with_resizable_claims("sts-fixed", "1Gi")))
        .await
        .unwrap();
    let refused = kit
        .patch(
            "fixed",
            json!({"spec": {"volumeClaimTemplates": [with_resizable_claims("sts-fixed", "2Gi")["volumeClaimTemplates"][0]]}}),
        )
        .await
        .expect_err("sts-fixed forbids expansion");
    let kube::Error::Api(status) = refused else { panic!("not an API error: {refused}") };
    assert_eq!(status.code, 422, "{status:?}");
    assert!(
        status.message.contains("spec.volumeClaimTemplates[0].spec.resources.requests.storage")
            && status.message.contains("does not support volume expansion"),
        "{}",
        status.message
    );
    scene.observe("resize on a fixed class", json!({"code": status.code, "refused": true}));

    let resizer = Resizer::start(claims.clone(), "grow", "2Gi");
    kit.create(statefulset("grow", 2, "nginx:1.25", with_resizable_claims("sts-expandable", "1Gi")))
        .await
        .unwrap();
    let (_, pods) = kit.wait_settled("grow", 2).await;
    wait_claims(&kit, "grow", &["data-grow-0", "data-grow-1"]).await;
    let before_pods = uids(&pods);
    let claim_uids = |list: Vec<PersistentVolumeClaim>| -> BTreeSet<String> {
        list.iter().filter_map(|claim| claim.uid()).collect()
    };
    let before_claims =
        claim_uids(claims.list(&ListParams::default().labels("app=grow")).await.unwrap().items);

    let mut grown = with_resizable_claims("sts-expandable", "2Gi");
    grown["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.26");
    kit.patch("grow", json!({"spec": grown})).await.unwrap();
    // The PVCs are expanded first; without the new capacity no pod is rolled.
    let deadline = Instant::now() + SETTLE;
    loop {
        let requests: Vec<String> = claims
            .list(&ListParams::default().labels("app=grow"))
            .await
            .unwrap()
            .items
            .iter()
            .map(|c| claim_sizes(c).0)
            .collect();
        if requests.iter().any(|r| r == "2Gi") {
            break;
        }
        assert!(Instant::now() < deadline, "no PVC of grow was expanded: {requests:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let waiting = kit.pods_of("grow").await;
    assert_eq!(uids(&waiting), before_pods, "no pod rolls before its PVC reports the new capacity");
    assert!(waiting.iter().all(|pod| image_of(pod) == "nginx:1.25"));
    scene.observe("before the resize completes", "PVC requests grown, pods not rolled");

    resizer.enable();
    let (_, pods) = kit.wait_settled("grow", 2).await;
    assert!(uids(&pods).is_disjoint(&before_pods), "ReCreate: every pod was replaced");
    assert!(pods.iter().all(|pod| image_of(pod) == "nginx:1.26"));
    let after = claims.list(&ListParams::default().labels("app=grow")).await.unwrap().items;
    for claim in &after {
        assert_eq!(claim_sizes(claim), ("2Gi".to_string(), "2Gi".to_string()), "{}", claim.name_any());
        assert_eq!(claim.annotations().get("apps.kruise.io/owned-by-asts").map(String::as_str), Some("grow"));
    }
    assert_eq!(claim_uids(after), before_claims, "the PVCs are expanded, not recreated");
    assert_eq!(resizer.resized(), ["data-grow-0", "data-grow-1"]);
    scene.observe("after the rollout", json!({"requests": "2Gi", "samePvcs": true, "podsReplaced": 2}));

    kit.shutdown().await;
    Ok(())
}

/// `spec.ordinals.start` (gate `StatefulSetStartOrdinal` on for this manager): pods are numbered
/// from the start, the highest goes first on scale-down, and `reserveOrdinals` name absolute
/// ordinals (a reserved one inside the range is skipped and the range grows past it).
pub async fn ordinals_start(scene: Scene) -> Result<(), Skip> {
    let gates = "ImagePullJobGate=true,StatefulSetStartOrdinal=true";
    let kit = StsKit::start_with(&scene, ManagerSpec::in_process().with_feature_gates(gates)).await;
    let journal = kit.journal("ord");
    kit.create(statefulset("ord", 3, "nginx:1.25", json!({"ordinals": {"start": 5}}))).await.unwrap();
    let (_, pods) = kit.wait_settled("ord", 3).await;
    assert_eq!(names(&pods), ["ord-5", "ord-6", "ord-7"]);
    for pod in &pods {
        assert_eq!(pod.labels()["apps.kubernetes.io/pod-index"], ordinal(pod).to_string());
        assert_eq!(pod.spec.as_ref().unwrap().hostname.as_deref(), Some(pod.name_any().as_str()));
    }
    let before_7 = journal.when_created("ord-7").unwrap();
    assert!(before_7.get("ord-6").is_some_and(|v| v.ready), "OrderedReady from the start ordinal");
    scene.observe("start 5, replicas 3", names(&pods));

    kit.patch("ord", json!({"spec": {"replicas": 2}})).await.unwrap();
    let (_, pods) = kit.wait_settled("ord", 2).await;
    assert_eq!(names(&pods), ["ord-5", "ord-6"]);
    scene.observe("replicas 2", names(&pods));

    let kept = pods[0].uid();
    kit.patch("ord", json!({"spec": {"reserveOrdinals": [6]}})).await.unwrap();
    let (_, pods) = kit
        .wait_for("ord", "ord-6 reserved: ord-5 and ord-7", |set, pods| {
            settled(set, pods, 2) && names(pods) == ["ord-5", "ord-7"]
        })
        .await;
    assert_eq!(pods[0].uid(), kept, "ord-5 is untouched");
    scene.observe("reserve 6, replicas 2", names(&pods));

    kit.patch("ord", json!({"spec": {"replicas": 3}})).await.unwrap();
    let (_, pods) = kit
        .wait_for("ord", "ord-5, ord-7, ord-8", |set, pods| {
            settled(set, pods, 3) && names(pods) == ["ord-5", "ord-7", "ord-8"]
        })
        .await;
    scene.observe("reserve 6, replicas 3", names(&pods));

    kit.shutdown().await;
    Ok(())
}
