//! PersistentPodState end to end, on both tiers, with the manager's controller and webhooks:
//! three simulated nodes labelled with a zone (one in zone `a`, two in zone `b`), an Advanced
//! StatefulSet of three and a PersistentPodState requiring the zone label. The state records
//! each Ready pod's node and zone; a deleted pod's replacement is created with the recorded zone
//! as its `nodeSelector` (and the `kruise.io/injected-persistent-pod-state` annotation) and runs
//! in that zone again; scaling down drops the states of the removed ordinals; deleting the set
//! clears the states. Invalid PersistentPodStates (a second one for the same set, an empty
//! target, no topology, a Deployment target, a changed target) are refused with a 422
//! naming the fields, at both versions.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_crds::apps::v1beta1::{PersistentPodState, StatefulSet};
use kruise_integration::{Scene, Skip, manager::ManagerSpec};
use kube::{
    Api, ResourceExt,
    api::{
        ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
        PostParams,
    },
};
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, is_ready, pod_summary};

/// How long the controllers may take to reach a state.
const SETTLE: Duration = Duration::from_secs(120);
/// The zone label the scenario puts on the nodes.
const ZONE: &str = "kruise-it/zone";
const INJECTED: &str = "kruise.io/injected-persistent-pod-state";
const SET: &str = "db";

struct PpsKit {
    kit: Kit,
    states: Api<PersistentPodState>,
    sets: Api<StatefulSet>,
    nodes: Api<Node>,
}

fn dynamic_api(kit: &Kit, group: &str, version: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(group, version, kind);
    Api::namespaced_with(kit.client.clone(), "default", &ApiResource::from_gvk_with_plural(&gvk, plural))
}

impl PpsKit {
    async fn start(scene: &Scene) -> Self {
        let kit = Kit::start_with(scene, Some(ManagerSpec::in_process())).await;
        let states: Api<PersistentPodState> = Api::namespaced(kit.client.clone(), "default");
        let sets: Api<StatefulSet> = Api::namespaced(kit.client.clone(), "default");
        let deadline = Instant::now() + Duration::from_secs(30);
        while states.list(&ListParams::default().limit(1)).await.is_err()
            || sets.list(&ListParams::default().limit(1)).await.is_err()
        {
            assert!(Instant::now() < deadline, "PersistentPodStates are not served 30 s after the CRD");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let nodes = Api::all(kit.client.clone());
        Self { kit, states, sets, nodes }
    }

    /// The pods of the set that are not terminating, by name.
    async fn pods(&self) -> BTreeMap<String, Pod> {
        self.kit
            .pods
            .list(&ListParams::default().labels(&format!("app={SET}")))
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|pod| pod.metadata.deletion_timestamp.is_none())
            .map(|pod| (pod.name_any(), pod))
            .collect()
    }

    async fn zone_of_node(&self, node: &str) -> String {
        self.nodes.get(node).await.unwrap().labels().get(ZONE).cloned().unwrap_or_default()
    }

    /// Waits until `check` holds for the state and the live pods.
    async fn wait_for(
        &self,
        what: &str,
        check: impl Fn(&PersistentPodState, &BTreeMap<String, Pod>) -> bool,
    ) -> (PersistentPodState, BTreeMap<String, Pod>) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let state = self.states.get(SET).await.unwrap();
            let pods = self.pods().await;
            if check(&state, &pods) {
                return (state, pods);
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for {what}\nstatus: {}\npods: {:#?}",
                    serde_json::to_string_pretty(&state.status).unwrap(),
                    pods.values().map(pod_summary).collect::<Vec<_>>()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

fn node_of(pod: &Pod) -> String {
    pod.spec.as_ref().and_then(|spec| spec.node_name.clone()).unwrap_or_default()
}

/// Every pod of `pods` (exactly `replicas`, all Ready) has a state naming its node.
fn recorded(state: &PersistentPodState, pods: &BTreeMap<String, Pod>, replicas: usize) -> bool {
    let states = state.status.as_ref().map(|status| status.pod_states.clone()).unwrap_or_default();
    pods.len() == replicas
        && states.len() == replicas
        && pods.values().all(|pod| {
            is_ready(pod) && states.get(&pod.name_any()).is_some_and(|s| s.node_name == node_of(pod))
        })
}

/// Creates `manifest`, which must be refused with a 422 naming every one of `fields`.
async fn refused(api: &Api<DynamicObject>, manifest: Value, fields: &[&str]) {
    crate::cloneset_kit::refused_naming(api, manifest, fields).await;
}

fn state_manifest(version: &str, name: &str, target: Value, topology: bool) -> Value {
    let keys = if version == "v1alpha1" { "nodeTopologyKeys" } else { "keys" };
    let mut spec = json!({"targetRef": target});
    if topology {
        spec["requiredPersistentTopology"] = json!({keys: [ZONE]});
        spec["preferredPersistentTopology"] =
            json!([{"weight": 50, "preference": {keys: ["kubernetes.io/hostname"]}}]);
    }
    json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "PersistentPodState",
        "metadata": {"name": name}, "spec": spec,
    })
}

pub async fn recreated_pods_return_to_their_zone(scene: Scene) -> Result<(), Skip> {
    let kit = PpsKit::start(&scene).await;
    let mut node_names = kit.kit.nodes.as_ref().expect("the kit starts nodes").names().to_vec();
    node_names.sort();
    for (index, node) in node_names.iter().enumerate() {
        let zone = if index == 0 { "a" } else { "b" };
        let patch = json!({"metadata": {"labels": {ZONE: zone}}});
        kit.nodes.patch(node, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    }
    let target = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": SET});
    let beta =
        dynamic_api(&kit.kit, "apps.kruise.io", "v1beta1", "PersistentPodState", "persistentpodstates");
    let created: DynamicObject =
        serde_json::from_value(state_manifest("v1beta1", SET, target.clone(), true)).unwrap();
    beta.create(&PostParams::default(), &created).await.unwrap();
    let set = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": SET},
        "spec": {
            "replicas": 3, "serviceName": SET,
            "selector": {"matchLabels": {"app": SET}},
            "template": {"metadata": {"labels": {"app": SET}},
                         "spec": {"terminationGracePeriodSeconds": 1,
                                  "containers": [{"name": "main", "image": "nginx:1.25"}]}},
        }
    });
    let sets = dynamic_api(&kit.kit, "apps.kruise.io", "v1beta1", "StatefulSet", "statefulsets");
    sets.create(&PostParams::default(), &serde_json::from_value(set).unwrap()).await.unwrap();

    // Each Ready pod's node and zone are recorded.
    let (state, pods) = kit.wait_for("three recorded pods", |state, pods| recorded(state, pods, 3)).await;
    let states = state.status.clone().unwrap().pod_states;
    for pod in pods.values() {
        let recorded = &states[&pod.name_any()];
        let zone = kit.zone_of_node(&node_of(pod)).await;
        assert_eq!(recorded.node_topology_labels.get(ZONE), Some(&zone), "{}", pod.name_any());
        assert!(recorded.node_topology_labels.contains_key("kubernetes.io/hostname"), "{recorded:?}");
    }
    // Which node (and zone) each pod lands on is the scheduler's choice, so only what was
    // recorded is compared between tiers.
    let keys: Vec<(String, Vec<String>)> = states
        .iter()
        .map(|(name, s)| (name.clone(), s.node_topology_labels.keys().cloned().collect()))
        .collect();
    scene.observe("recorded keys", &keys);

    // A deleted pod comes back in its zone, with the zone injected as its nodeSelector.
    for name in ["db-0", "db-2"] {
        let before = &pods[name];
        let zone = states[name].node_topology_labels[ZONE].clone();
        kit.kit.pods.delete(name, &DeleteParams::default()).await.unwrap();
        let old_uid = before.uid().unwrap();
        let (_, pods) = kit
            .wait_for(&format!("{name} recreated and Ready"), |state, pods| {
                pods.get(name).is_some_and(|pod| pod.uid().as_deref() != Some(old_uid.as_str()))
                    && recorded(state, pods, 3)
            })
            .await;
        let pod = &pods[name];
        assert_eq!(pod.annotations().get(INJECTED).map(String::as_str), Some(SET), "{name}");
        let selector = pod.spec.as_ref().unwrap().node_selector.clone().unwrap_or_default();
        assert_eq!(selector.get(ZONE), Some(&zone), "{name}: nodeSelector {selector:?}");
        let preferred = pod
            .spec
            .as_ref()
            .and_then(|spec| spec.affinity.as_ref())
            .and_then(|affinity| affinity.node_affinity.as_ref())
            .and_then(|affinity| affinity.preferred_during_scheduling_ignored_during_execution.clone())
            .unwrap_or_default();
        assert_eq!(preferred.len(), 1, "{name}: {preferred:?}");
        assert_eq!(preferred[0].weight, 50);
        assert_eq!(kit.zone_of_node(&node_of(pod)).await, zone, "{name} runs in its zone again");
    }

    // Invalid states are refused with field paths, at both versions.
    let alpha =
        dynamic_api(&kit.kit, "apps.kruise.io", "v1alpha1", "PersistentPodState", "persistentpodstates");
    refused(&beta, state_manifest("v1beta1", "second", target.clone(), true), &["spec.targetRef"]).await;
    refused(&alpha, state_manifest("v1alpha1", "second-alpha", target.clone(), true), &["spec.targetRef"])
        .await;
    refused(
        &beta,
        state_manifest("v1beta1", "empty", json!({}), false),
        &["spec.targetRef.apiVersion", "spec.targetRef.kind", "spec.targetRef.name"],
    )
    .await;
    let elsewhere = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "other"});
    refused(
        &beta,
        state_manifest("v1beta1", "no-topology", elsewhere, false),
        &["spec.requiredPersistentTopology"],
    )
    .await;
    refused(
        &alpha,
        state_manifest(
            "v1alpha1",
            "deployment",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}),
            true,
        ),
        &["spec.targetRef.kind"],
    )
    .await;
    let retarget = json!({"spec": {"targetRef": {"name": "other"}}});
    match beta.patch(SET, &PatchParams::default(), &Patch::Merge(&retarget)).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            let named: Vec<String> =
                status.details.iter().flat_map(|d| d.causes.iter()).map(|c| c.field.clone()).collect();
            assert!(named.iter().any(|f| f == "spec.targetRef"), "{named:?}: {}", status.message);
        }
        other => panic!("changing the target was not refused: {other:?}"),
    }

    // Scaling down drops the removed ordinals' states (WhenScaled, the default).
    kit.sets
        .patch(SET, &PatchParams::default(), &Patch::Merge(&json!({"spec": {"replicas": 1}})))
        .await
        .unwrap();
    kit.wait_for("one recorded pod", |state, pods| recorded(state, pods, 1)).await;

    // Deleting the set clears the states.
    kit.sets.delete(SET, &DeleteParams::default()).await.unwrap();
    kit.wait_for("no states once the set is gone", |state, _| {
        state.status.as_ref().is_some_and(|status| status.pod_states.is_empty())
    })
    .await;
    kit.kit.shutdown().await;
    Ok(())
}

/// The custom kind the white-list scenario defines.
const LIKE_GROUP: &str = "kruise-it.example.com";

/// A kind listed in `PPS_Watch_Custom_Workload_WhiteList` (upstream's "statefulsetlike"
/// spec, which upstream's suite skips without its CRD): the manager, started after the
/// ConfigMap, watches it; its annotations make a PersistentPodState that records the pods it
/// controls (with the chosen pod annotation); a pod recreated under a recorded name gets the
/// recorded zone as `nodeSelector`; removing the flag deletes the PersistentPodState.
pub async fn white_listed_custom_workloads(scene: Scene) -> Result<(), Skip> {
    use k8s_openapi::{
        api::core::v1::{ConfigMap, Namespace},
        apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    };
    let mut kit = Kit::start_with(&scene, None).await;
    let client = kit.client.clone();
    let crd = json!({
        "metadata": {"name": format!("statefulsetlikes.{LIKE_GROUP}")},
        "spec": {
            "group": LIKE_GROUP, "scope": "Namespaced",
            "names": {"plural": "statefulsetlikes", "singular": "statefulsetlike", "kind": "StatefulSetLike"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        }
    });
    Api::<CustomResourceDefinition>::all(client.clone())
        .create(&PostParams::default(), &serde_json::from_value(crd).unwrap())
        .await
        .unwrap();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if namespaces.get_opt("kruise-system").await.unwrap().is_none() {
        let namespace = serde_json::from_value(json!({"metadata": {"name": "kruise-system"}})).unwrap();
        namespaces.create(&PostParams::default(), &namespace).await.unwrap();
    }
    let whitelist = json!({"workloads": [{"Group": LIKE_GROUP, "Version": "v1", "Kind": "StatefulSetLike"}]});
    let configuration = json!({
        "metadata": {"name": "kruise-configuration"},
        "data": {"PPS_Watch_Custom_Workload_WhiteList": whitelist.to_string()},
    });
    Api::<ConfigMap>::namespaced(client.clone(), "kruise-system")
        .create(&PostParams::default(), &serde_json::from_value(configuration).unwrap())
        .await
        .unwrap();
    let likes = dynamic_api(&kit, LIKE_GROUP, "v1", "StatefulSetLike", "statefulsetlikes");
    let deadline = Instant::now() + Duration::from_secs(30);
    while likes.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(Instant::now() < deadline, "StatefulSetLikes are not served 30 s after the CRD");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    kit.manager = Some(crate::cloneset_kit::start_manager(&scene, ManagerSpec::in_process()).await);
    let nodes: Api<Node> = Api::all(client.clone());
    for node in kit.nodes.as_ref().expect("the kit starts nodes").names() {
        let patch = json!({"metadata": {"labels": {ZONE: format!("zone-of-{node}")}}});
        nodes.patch(node, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    }
    let states: Api<PersistentPodState> = Api::namespaced(client.clone(), "default");

    let like = json!({
        "apiVersion": format!("{LIKE_GROUP}/v1"), "kind": "StatefulSetLike",
        "metadata": {"name": "like", "annotations": {
            "kruise.io/auto-generate-persistent-pod-state": "true",
            "kruise.io/required-persistent-topology": ZONE,
            "kruise.io/persistent-pod-annotations": "name",
        }},
        "spec": {"replicas": 2},
    });
    let created = likes.create(&PostParams::default(), &serde_json::from_value(like).unwrap()).await.unwrap();
    let uid = created.uid().unwrap();
    let deadline = Instant::now() + SETTLE;
    let generated = loop {
        if let Some(state) = states.get_opt("like").await.unwrap() {
            break state;
        }
        assert!(Instant::now() < deadline, "no PersistentPodState generated for the custom workload");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(generated.spec.target_reference.kind, "StatefulSetLike");
    assert_eq!(generated.spec.required_persistent_topology.as_ref().unwrap().keys, [ZONE]);

    let pod = |ordinal: usize| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": format!("like-{ordinal}"), "labels": {"app": "like"},
                         "annotations": {"name": format!("value-{ordinal}")},
                         "ownerReferences": [{"apiVersion": format!("{LIKE_GROUP}/v1"), "kind": "StatefulSetLike",
                                              "name": "like", "uid": uid, "controller": true}]},
            "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "main", "image": "nginx:1.25"}]},
        }))
        .unwrap()
    };
    for ordinal in 0..2 {
        kit.pods.create(&PostParams::default(), &pod(ordinal)).await.unwrap();
    }
    let deadline = Instant::now() + SETTLE;
    let recorded_state = loop {
        let state = states.get("like").await.unwrap();
        let pod_states = state.status.clone().unwrap_or_default().pod_states;
        if pod_states.len() == 2 && pod_states.values().all(|s| s.annotations.len() == 1) {
            break pod_states;
        }
        assert!(Instant::now() < deadline, "states not recorded: {:?}", state.status);
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(recorded_state["like-1"].annotations["name"], "value-1");
    scene.observe(
        "custom recorded annotations",
        recorded_state.values().map(|s| s.annotations.clone()).collect::<Vec<_>>(),
    );

    // A pod recreated under a recorded name gets the recorded zone.
    let zone = recorded_state["like-0"].node_topology_labels[ZONE].clone();
    kit.pods.delete("like-0", &DeleteParams::default()).await.unwrap();
    let deadline = Instant::now() + SETTLE;
    while kit.pods.get_opt("like-0").await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "like-0 not gone");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let again = kit.pods.create(&PostParams::default(), &pod(0)).await.unwrap();
    assert_eq!(again.annotations().get(INJECTED).map(String::as_str), Some("like"));
    let selector = again.spec.as_ref().unwrap().node_selector.clone().unwrap_or_default();
    assert_eq!(selector.get(ZONE), Some(&zone));

    // Without the flag, the generated PersistentPodState goes.
    let unflag = json!({"metadata": {"annotations": {"kruise.io/auto-generate-persistent-pod-state": null}}});
    likes.patch("like", &PatchParams::default(), &Patch::Merge(&unflag)).await.unwrap();
    let deadline = Instant::now() + SETTLE;
    while states.get_opt("like").await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "the generated PersistentPodState was not deleted");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    kit.shutdown().await;
    Ok(())
}
