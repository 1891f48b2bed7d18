//! UnitedDeployment end to end, on both tiers, with the manager's controller and webhooks, over
//! the three simulated nodes (one per zone: `topology.kubernetes.io/zone` is zone-a, zone-b,
//! zone-c):
//!
//! - a CloneSet-template UnitedDeployment of 10 replicas with subsets zone-a (2), zone-b (3) and
//!   zone-c (50%): one CloneSet per subset, each with the subset label, revision label and the
//!   UnitedDeployment as controller; every pod runs on its zone's node; the status gives each
//!   subset's replicas. A template image change with `manualUpdate.partitions` {zone-a: 1,
//!   zone-b: 3, zone-c: 2} leaves exactly that many pods per subset at the old image and
//!   revision; dropping the partitions finishes the rollout and the current revision moves;
//! - a Deployment-template UnitedDeployment with elastic subsets (maxReplicas 1, 1, unbounded):
//!   4 replicas become 1, 1, 2 Deployments' pods on their zones, scaling to 2 gives 1, 1, 0;
//! - invalid UnitedDeployments at both versions are refused with a 422 naming the fields at
//!   fault, and nothing is stored.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_crds::apps::v1beta1::{CloneSet, UnitedDeployment};
use kruise_integration::{Scene, Skip, manager::ManagerSpec};
use kube::{
    Api, ResourceExt,
    api::{ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, image_of, is_ready};

/// How long the controller may take to reach a state.
const SETTLE: Duration = Duration::from_secs(120);
const ZONE: &str = "topology.kubernetes.io/zone";
const SUBSET: &str = "apps.kruise.io/subset-name";
const REVISION: &str = "apps.kruise.io/controller-revision-hash";

struct UdKit {
    kit: Kit,
    uds: Api<UnitedDeployment>,
    zones: BTreeMap<String, String>,
}

fn dynamic_api(kit: &Kit, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apps.kruise.io", version, "UnitedDeployment");
    Api::namespaced_with(
        kit.client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(&gvk, "uniteddeployments"),
    )
}

impl UdKit {
    async fn start(scene: &Scene) -> Self {
        let kit = Kit::start_with(scene, Some(ManagerSpec::in_process())).await;
        let uds: Api<UnitedDeployment> = Api::namespaced(kit.client.clone(), "default");
        let deadline = Instant::now() + Duration::from_secs(30);
        while uds.list(&ListParams::default().limit(1)).await.is_err() {
            assert!(Instant::now() < deadline, "UnitedDeployments are not served 30 s after the CRD");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let nodes: Api<Node> = Api::all(kit.client.clone());
        let mut zones = BTreeMap::new();
        for node in nodes.list(&ListParams::default()).await.unwrap() {
            if let Some(zone) = node.labels().get(ZONE) {
                zones.insert(node.name_any(), zone.clone());
            }
        }
        for zone in ["zone-a", "zone-b", "zone-c"] {
            assert!(zones.values().any(|z| z == zone), "a node labelled {ZONE}={zone}: {zones:?}");
        }
        Self { kit, uds, zones }
    }

    async fn create(&self, manifest: Value) {
        let version = manifest["apiVersion"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
        let object: DynamicObject = serde_json::from_value(manifest).unwrap();
        dynamic_api(&self.kit, &version).create(&PostParams::default(), &object).await.unwrap();
    }

    async fn patch(&self, name: &str, patch: Value) {
        self.uds.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    }

    /// The UnitedDeployment's pods by subset.
    async fn pods_by_subset(&self, app: &str) -> BTreeMap<String, Vec<Pod>> {
        let pods: Api<Pod> = Api::namespaced(self.kit.client.clone(), "default");
        let mut by_subset: BTreeMap<String, Vec<Pod>> = BTreeMap::new();
        for pod in pods.list(&ListParams::default().labels(&format!("app={app}"))).await.unwrap() {
            if pod.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let subset = pod.labels().get(SUBSET).cloned().unwrap_or_default();
            by_subset.entry(subset).or_default().push(pod);
        }
        by_subset
    }

    /// Waits until `check` holds for the UnitedDeployment and its pods by subset.
    async fn wait_for(
        &self,
        what: &str,
        name: &str,
        app: &str,
        check: impl Fn(&UnitedDeployment, &BTreeMap<String, Vec<Pod>>) -> bool,
    ) -> (UnitedDeployment, BTreeMap<String, Vec<Pod>>) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let ud = self.uds.get(name).await.unwrap();
            let pods = self.pods_by_subset(app).await;
            if check(&ud, &pods) {
                return (ud, pods);
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for: {what}\nstatus: {}\npods: {:?}",
                serde_json::to_string_pretty(&ud.status).unwrap(),
                pods.iter()
                    .map(|(s, p)| (
                        s,
                        p.iter().map(|p| (p.name_any(), image_of(p), is_ready(p))).collect::<Vec<_>>()
                    ))
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Every pod of every subset runs on a node of the subset's zone (subsets are named after
    /// their zone).
    fn assert_zones(&self, pods: &BTreeMap<String, Vec<Pod>>) {
        for (subset, list) in pods {
            for pod in list {
                let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
                assert_eq!(
                    self.zones.get(&node),
                    Some(subset),
                    "pod {} of subset {subset} on node {node}",
                    pod.name_any()
                );
            }
        }
    }
}

fn zone_subset(zone: &str, replicas: Value) -> Value {
    let mut subset = json!({"name": zone, "nodeSelectorTerm": {"matchExpressions": [
        {"key": ZONE, "operator": "In", "values": [zone]}]}});
    if !replicas.is_null() {
        subset["replicas"] = replicas;
    }
    subset
}

fn pod_template(app: &str, image: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}},
           "spec": {"terminationGracePeriodSeconds": 0, "containers": [{"name": "main", "image": image}]}})
}

fn counts(pods: &BTreeMap<String, Vec<Pod>>) -> BTreeMap<String, usize> {
    pods.iter().map(|(s, p)| (s.clone(), p.len())).collect()
}

fn expected(list: &[(&str, usize)]) -> BTreeMap<String, usize> {
    list.iter().filter(|(_, n)| *n > 0).map(|(s, n)| (s.to_string(), *n)).collect()
}

fn subset_replicas(ud: &UnitedDeployment) -> BTreeMap<String, (i32, i32)> {
    ud.status
        .iter()
        .flat_map(|s| s.subset_statuses.iter())
        .map(|s| (s.name.clone(), (s.replicas, s.partition)))
        .collect()
}

fn observed(ud: &UnitedDeployment) -> bool {
    ud.status.as_ref().is_some_and(|s| Some(s.observed_generation) == ud.metadata.generation)
}

/// Pods of a subset at `image`.
fn at_image(pods: &BTreeMap<String, Vec<Pod>>, subset: &str, image: &str) -> usize {
    pods.get(subset).map_or(0, |list| list.iter().filter(|p| image_of(p) == image).count())
}

pub async fn spreads_cloneset_subsets_over_zones_and_updates_with_partitions(
    scene: Scene,
) -> Result<(), Skip> {
    let kit = UdKit::start(&scene).await;
    let (name, app) = ("web", "ud-web");
    kit.create(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 10,
            "selector": {"matchLabels": {"app": app}},
            "template": {"cloneSetTemplate": {
                "metadata": {"labels": {"app": app}},
                "spec": {"selector": {"matchLabels": {"app": app}}, "template": pod_template(app, "nginx:1.25")}
            }},
            "topology": {"subsets": [
                zone_subset("zone-a", json!(2)), zone_subset("zone-b", json!(3)), zone_subset("zone-c", json!("50%"))
            ]}
        }
    }))
    .await;

    let want = expected(&[("zone-a", 2), ("zone-b", 3), ("zone-c", 5)]);
    let (ud, pods) = kit
        .wait_for("10 ready pods spread 2 / 3 / 5", name, app, |ud, pods| {
            let status = ud.status.clone().unwrap_or_default();
            observed(ud)
                && status.replicas == 10
                && status.ready_replicas == 10
                && counts(pods) == want
                && pods.values().flatten().all(is_ready)
        })
        .await;
    kit.assert_zones(&pods);
    let status = ud.status.clone().unwrap();
    assert_eq!(
        subset_replicas(&ud),
        [("zone-a".into(), (2, 0)), ("zone-b".into(), (3, 0)), ("zone-c".into(), (5, 0))].into()
    );
    assert!(!status.current_revision.is_empty());
    assert_eq!(status.current_revision, status.updated_revision);
    assert_eq!(status.label_selector, format!("app={app}"));
    let first_revision = status.current_revision.clone();
    // One CloneSet per subset, labelled and controlled by the UnitedDeployment.
    let sets: Api<CloneSet> = Api::namespaced(kit.kit.client.clone(), "default");
    let sets: Vec<CloneSet> =
        sets.list(&ListParams::default().labels(&format!("app={app}"))).await.unwrap().items;
    let mut by_subset: BTreeMap<String, i32> = BTreeMap::new();
    for set in &sets {
        let subset = set.labels().get(SUBSET).cloned().unwrap_or_default();
        assert!(set.name_any().starts_with(&format!("{name}-{subset}-")), "{}", set.name_any());
        assert_eq!(set.labels().get(REVISION), Some(&first_revision));
        let owner = set.owner_references().iter().find(|o| o.controller == Some(true)).unwrap();
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str()),
            ("UnitedDeployment", ud.uid().unwrap().as_str())
        );
        by_subset.insert(subset, set.spec.replicas.unwrap_or_default());
    }
    assert_eq!(by_subset, [("zone-a".into(), 2), ("zone-b".into(), 3), ("zone-c".into(), 5)].into());
    for pod in pods.values().flatten() {
        assert_eq!(pod.labels().get(REVISION), Some(&first_revision));
    }
    scene.observe("initial", json!({"subsets": counts(&pods), "revision": !first_revision.is_empty()}));

    // A new image, held back per subset by manualUpdate.partitions.
    kit.patch(
        name,
        json!({"spec": {
            "template": {"cloneSetTemplate": {"spec": {"template": pod_template(app, "nginx:1.26")}}},
            "updateStrategy": {"manualUpdate": {"partitions": {"zone-a": 1, "zone-b": 3, "zone-c": 2}}}
        }}),
    )
    .await;
    let (ud, pods) = kit
        .wait_for("partitioned rollout: 1 / 0 / 3 pods updated", name, app, |ud, pods| {
            let status = ud.status.clone().unwrap_or_default();
            observed(ud)
                && counts(pods) == want
                && pods.values().flatten().all(is_ready)
                && at_image(pods, "zone-a", "nginx:1.26") == 1
                && at_image(pods, "zone-b", "nginx:1.26") == 0
                && at_image(pods, "zone-c", "nginx:1.26") == 3
                && status.updated_replicas == 4
                && status.updated_ready_replicas == 4
        })
        .await;
    kit.assert_zones(&pods);
    let status = ud.status.clone().unwrap();
    assert_ne!(status.updated_revision, first_revision);
    assert_eq!(status.current_revision, first_revision, "the rollout is not finished");
    assert_eq!(
        subset_replicas(&ud),
        [("zone-a".into(), (2, 1)), ("zone-b".into(), (3, 3)), ("zone-c".into(), (5, 2))].into()
    );
    let updated = status.conditions.iter().find(|c| c.type_.as_str() == "UnitedDeploymentUpdated").unwrap();
    assert_eq!(updated.status, "False");
    for pod in pods.values().flatten() {
        let revision = pod.labels().get(REVISION).unwrap();
        let old = image_of(pod) == "nginx:1.25";
        assert_eq!(revision == &first_revision, old, "pod {} at {revision}", pod.name_any());
    }
    scene.observe(
        "partitioned",
        json!({"updatedPerSubset": (["zone-a", "zone-b", "zone-c"].map(|s| at_image(&pods, s, "nginx:1.26")))}),
    );

    // Without partitions the rollout completes, the current revision moves and, on the
    // reconcile after that (the condition is computed from the revision found at its start, as
    // upstream), UnitedDeploymentUpdated turns True.
    kit.patch(name, json!({"spec": {"updateStrategy": {"manualUpdate": {"partitions": null}}}})).await;
    kit.wait_for("every pod updated and the rollout reported done", name, app, |ud, pods| {
        let status = ud.status.clone().unwrap_or_default();
        let updated = status.conditions.iter().find(|c| c.type_.as_str() == "UnitedDeploymentUpdated");
        observed(ud)
            && counts(pods) == want
            && pods.values().flatten().all(|p| is_ready(p) && image_of(p) == "nginx:1.26")
            && status.current_revision == status.updated_revision
            && status.updated_ready_replicas == 10
            && updated.is_some_and(|c| c.status == "True")
    })
    .await;
    scene.observe("finished", json!({"currentIsUpdated": true}));

    kit.kit.shutdown().await;
    Ok(())
}

pub async fn spreads_deployment_subsets_with_elastic_replicas(scene: Scene) -> Result<(), Skip> {
    let kit = UdKit::start(&scene).await;
    let (name, app) = ("api", "ud-api");
    let mut subsets = vec![
        zone_subset("zone-a", Value::Null),
        zone_subset("zone-b", Value::Null),
        zone_subset("zone-c", Value::Null),
    ];
    subsets[0]["maxReplicas"] = json!(1);
    subsets[1]["maxReplicas"] = json!(1);
    kit.create(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "UnitedDeployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": app}},
            "template": {"deploymentTemplate": {
                "metadata": {"labels": {"app": app}},
                "spec": {"selector": {"matchLabels": {"app": app}}, "template": pod_template(app, "nginx:1.25")}
            }},
            "topology": {"subsets": subsets}
        }
    }))
    .await;
    let want = expected(&[("zone-a", 1), ("zone-b", 1), ("zone-c", 2)]);
    let (ud, pods) = kit
        .wait_for("4 ready pods spread 1 / 1 / 2", name, app, |ud, pods| {
            observed(ud)
                && ud.status.as_ref().is_some_and(|s| s.replicas == 4 && s.ready_replicas == 4)
                && counts(pods) == want
                && pods.values().flatten().all(is_ready)
        })
        .await;
    kit.assert_zones(&pods);
    // The webhook defaulted minReplicas to 0 on every subset of the elastic topology.
    assert!(ud.spec.topology.subsets.iter().all(|s| s.min_replicas.is_some()));
    assert_eq!(
        subset_replicas(&ud).into_iter().map(|(s, (r, _))| (s, r)).collect::<BTreeMap<_, _>>(),
        [("zone-a".into(), 1), ("zone-b".into(), 1), ("zone-c".into(), 2)].into()
    );

    // Through the scale subresource, as an HPA would.
    let scale = json!({"spec": {"replicas": 2}});
    kit.uds.patch_scale(name, &PatchParams::default(), &Patch::Merge(&scale)).await.unwrap();
    let want = expected(&[("zone-a", 1), ("zone-b", 1)]);
    let (ud, pods) = kit
        .wait_for("scaled to 1 / 1 / 0", name, app, |ud, pods| {
            observed(ud) && ud.status.as_ref().is_some_and(|s| s.replicas == 2) && counts(pods) == want
        })
        .await;
    kit.assert_zones(&pods);
    assert_eq!(subset_replicas(&ud).get("zone-c").map(|r| r.0), Some(0));
    let scale = kit.uds.get_scale(name).await.unwrap();
    assert_eq!(scale.status.as_ref().map(|s| s.replicas), Some(2));
    assert_eq!(scale.status.and_then(|s| s.selector), Some(format!("app={app}")));
    scene.observe("elastic", json!({"four": [1, 1, 2], "two": [1, 1, 0]}));

    kit.kit.shutdown().await;
    Ok(())
}

/// Creates `manifest`, which must be refused with a 422 naming every one of `fields`.
async fn refused(api: &Api<DynamicObject>, manifest: Value, fields: &[&str]) {
    crate::cloneset_kit::refused_naming(api, manifest, fields).await;
}

fn invalid(version: &str, name: &str, spec: Value) -> Value {
    let mut base = json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "UnitedDeployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "bad"}},
            "template": {"cloneSetTemplate": {
                "metadata": {"labels": {"app": "bad"}},
                "spec": {"selector": {"matchLabels": {"app": "bad"}}, "template": pod_template("bad", "nginx:1.25")}
            }},
            "topology": {"subsets": [zone_subset("zone-a", Value::Null), zone_subset("zone-b", Value::Null)]}
        }
    });
    crate::cloneset_kit::merge(&mut base, json!({"spec": spec}));
    base
}

pub async fn invalid_uniteddeployments_are_refused_with_field_paths(scene: Scene) -> Result<(), Skip> {
    let kit = UdKit::start(&scene).await;
    let beta = dynamic_api(&kit.kit, "v1beta1");
    let alpha = dynamic_api(&kit.kit, "v1alpha1");
    refused(
        &beta,
        invalid(
            "v1beta1",
            "too-many",
            json!({"topology": {"subsets": [
            zone_subset("zone-a", json!(3)), zone_subset("zone-b", json!("120%"))]}}),
        ),
        &["spec.topology.subsets[1].replicas"],
    )
    .await;
    refused(
        &beta,
        invalid(
            "v1beta1",
            "twins",
            json!({"topology": {"subsets": [
            zone_subset("zone-a", Value::Null), zone_subset("zone-a", Value::Null)]}}),
        ),
        &["spec.topology.subsets[1].name"],
    )
    .await;
    refused(
        &alpha,
        invalid("v1alpha1", "no-match", json!({"selector": {"matchLabels": {"app": "other"}}})),
        &["spec.template.cloneSetTemplate.spec.template.metadata.labels"],
    )
    .await;
    refused(
        &alpha,
        invalid("v1alpha1", "bad-operator", json!({"topology": {"subsets": [{"name": "zone-a",
            "nodeSelectorTerm": {"matchExpressions": [{"key": ZONE, "operator": "Near", "values": ["a"]}]}}]}})),
        &["spec.topology.subsets[0].nodeSelectorTerm.matchExpressions[0].operator"],
    )
    .await;
    scene.observe("refused", json!(4));
    kit.kit.shutdown().await;
    Ok(())
}
