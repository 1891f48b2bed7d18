//! Advanced DaemonSet through the Kubernetes API, as platform teams drive it: one pod per
//! eligible node that follows node labels and taints and revives deleted pods; rolling updates
//! in place (pod UIDs kept, only the container restarted) and by recreation; canaries through
//! `rollingUpdate.selector`, `partition` and `paused`; `maxSurge` creating the new pod before the
//! old one goes; the `preDelete` hook holding a pod until its label goes; image pre-download for
//! a rollout held by its partition; invalid sets refused with field paths and a v1alpha1
//! manifest served back as v1beta1.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{Node, Pod},
};
use kruise_crds::apps::v1beta1::{DaemonSet, ImagePullJob};
use kruise_integration::{Scene, Skip, manager::ManagerSpec};
use kube::{
    Api, ResourceExt,
    api::{ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, image_of, is_ready, merge, pod_summary, restarts_of, revision_of};

/// How long a DaemonSet may take to reach a state.
const SETTLE: Duration = Duration::from_secs(120);

/// How long a scenario watches for something that must not happen.
const QUIET: Duration = Duration::from_secs(4);

/// The node label the scenarios select daemon nodes with.
const DAEMON_LABEL: &str = "kruise-it/daemon";

/// A cluster ready for Advanced DaemonSets (the CloneSet kit's cluster, three simulated nodes and
/// a manager).
struct DsKit {
    kit: Kit,
    sets: Api<DaemonSet>,
    pods: Api<Pod>,
    nodes: Api<Node>,
    node_names: Vec<String>,
}

fn resource(version: &str) -> ApiResource {
    ApiResource {
        group: "apps.kruise.io".into(),
        version: version.into(),
        api_version: format!("apps.kruise.io/{version}"),
        kind: "DaemonSet".into(),
        plural: "daemonsets".into(),
    }
}

impl DsKit {
    async fn start(scene: &Scene) -> Self {
        Self::start_with(scene, ManagerSpec::in_process()).await
    }

    async fn start_with(scene: &Scene, manager: ManagerSpec) -> Self {
        let kit = Kit::start_with(scene, Some(manager)).await;
        let sets: Api<DaemonSet> = Api::namespaced(kit.client.clone(), "default");
        let deadline = Instant::now() + Duration::from_secs(30);
        while sets.list(&ListParams::default().limit(1)).await.is_err() {
            assert!(
                Instant::now() < deadline,
                "DaemonSets are not served 30 s after the CRD was Established"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let mut node_names = kit.nodes.as_ref().expect("the kit starts nodes").names().to_vec();
        node_names.sort();
        Self { pods: kit.pods.clone(), nodes: Api::all(kit.client.clone()), sets, node_names, kit }
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
    async fn patch(&self, name: &str, patch: Value) -> DaemonSet {
        self.sets.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap()
    }

    async fn set_image(&self, name: &str, image: &str) {
        self.patch(
            name,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}),
        )
        .await;
    }

    /// Sets (`Some`) or removes (`None`) a label of a node.
    async fn label_node(&self, node: &str, key: &str, value: Option<&str>) {
        let patch = json!({"metadata": {"labels": {key: value}}});
        self.nodes.patch(node, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    }

    /// Adds (`Some(effect)`) or removes (`None`) the scenario's taint `kruise-it/dedicated` on a
    /// node, keeping the taints the node lifecycle manages.
    async fn taint_node(&self, node: &str, effect: Option<&str>) {
        let current = self.nodes.get(node).await.unwrap();
        let mut taints: Vec<Value> = current
            .spec
            .and_then(|spec| spec.taints)
            .unwrap_or_default()
            .into_iter()
            .filter(|taint| taint.key != "kruise-it/dedicated")
            .map(|taint| serde_json::to_value(taint).unwrap())
            .collect();
        if let Some(effect) = effect {
            taints.push(json!({"key": "kruise-it/dedicated", "value": "infra", "effect": effect}));
        }
        let patch = json!({"spec": {"taints": taints}});
        self.nodes.patch(node, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    }

    /// The pods the set owns (terminating ones included), by node then name.
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
        pods.sort_by_key(|pod| (node_of(pod), pod.name_any()));
        pods
    }

    async fn wait_for(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(&DaemonSet, &[Pod]) -> bool,
    ) -> (DaemonSet, Vec<Pod>) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let set = self.sets.get(name).await.unwrap();
            let pods = self.pods_of(name).await;
            if check(&set, &pods) {
                return (set, pods);
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for DaemonSet {name}: {what}\nstatus: {}\npods: {:#?}",
                    serde_json::to_string_pretty(&set.status).unwrap(),
                    pods.iter()
                        .map(|pod| format!("{} node={}", pod_summary(pod), node_of(pod)))
                        .collect::<Vec<_>>()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until the set runs one Ready pod at the update revision on each of `nodes` and
    /// nowhere else, and its status says so.
    async fn wait_settled(&self, name: &str, nodes: &[&str]) -> (DaemonSet, Vec<Pod>) {
        let expected: BTreeSet<String> = nodes.iter().map(|n| n.to_string()).collect();
        self.wait_for(name, &format!("one updated Ready pod on each of {nodes:?}"), |set, pods| {
            settled(set, pods, &expected)
        })
        .await
    }

    /// Checks for [`QUIET`] that `check` keeps holding (something that must not happen does not).
    async fn stays(&self, name: &str, what: &str, check: impl Fn(&DaemonSet, &[Pod]) -> bool) {
        let until = Instant::now() + QUIET;
        while Instant::now() < until {
            let set = self.sets.get(name).await.unwrap();
            let pods = self.pods_of(name).await;
            assert!(
                check(&set, &pods),
                "{what} no longer holds for DaemonSet {name}\nstatus: {}\npods: {:#?}",
                serde_json::to_string_pretty(&set.status).unwrap(),
                pods.iter()
                    .map(|pod| format!("{} node={}", pod_summary(pod), node_of(pod)))
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    fn journal(&self, app: &str) -> NodeJournal {
        NodeJournal::start(self.pods.clone(), app, pod_view)
    }
}

/// The node a daemon pod runs on: its `nodeName`, or before binding the node its required
/// affinity names.
fn node_of(pod: &Pod) -> String {
    let spec = pod.spec.as_ref();
    if let Some(node) = spec.and_then(|spec| spec.node_name.clone()) {
        return node;
    }
    spec.and_then(|spec| spec.affinity.as_ref())
        .and_then(|affinity| affinity.node_affinity.as_ref())
        .and_then(|node| node.required_during_scheduling_ignored_during_execution.as_ref())
        .and_then(|required| required.node_selector_terms.first())
        .and_then(|term| term.match_fields.as_ref())
        .and_then(|fields| fields.iter().find(|f| f.key == "metadata.name"))
        .and_then(|field| field.values.as_ref())
        .and_then(|values| values.first().cloned())
        .unwrap_or_default()
}

fn live(pods: &[Pod]) -> Vec<&Pod> {
    pods.iter().filter(|pod| pod.metadata.deletion_timestamp.is_none()).collect()
}

fn uids(pods: &[Pod]) -> BTreeMap<String, String> {
    live(pods).into_iter().map(|pod| (node_of(pod), pod.uid().unwrap_or_default())).collect()
}

/// The set reconciled its generation, runs exactly one Ready pod at the update revision on each
/// expected node and none elsewhere, and its status counts agree.
fn settled(set: &DaemonSet, pods: &[Pod], expected: &BTreeSet<String>) -> bool {
    let Some(status) = &set.status else { return false };
    let desired = expected.len() as i32;
    let nodes: Vec<String> = pods.iter().map(node_of).collect();
    let distinct: BTreeSet<String> = nodes.iter().cloned().collect();
    status.observed_generation == set.metadata.generation.unwrap_or(0)
        && status.desired_number_scheduled == desired
        && status.current_number_scheduled == desired
        && status.updated_number_scheduled == desired
        && status.number_ready == desired
        && status.number_available == desired
        && status.number_unavailable == 0
        && status.number_misscheduled == 0
        && pods.len() == expected.len()
        && distinct == *expected
        && pods.iter().all(|pod| is_ready(pod) && pod.metadata.deletion_timestamp.is_none())
        && pods.iter().all(|pod| revision_of(pod) == Some(status.update_revision.as_str()))
}

/// An Advanced DaemonSet manifest (v1beta1) with one `main` container; `extra` is merged into
/// `spec`.
fn daemonset(name: &str, image: &str, extra: Value) -> Value {
    let mut manifest = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image}]}
            }
        }
    });
    merge(&mut manifest["spec"], extra);
    manifest
}

/// What one daemon pod looked like at one point of the journal.
#[derive(Clone, Debug, PartialEq)]
struct PodView {
    node: String,
    ready: bool,
    terminating: bool,
    revision: String,
}

/// Every pod event of an app, pods keyed by UID, so that per-node guarantees (a Ready pod on each
/// node throughout a surge update, at most N nodes unavailable) can be checked at every step.
type NodeJournal = crate::journal::Journal<PodView>;

fn pod_view(pod: &Pod) -> (String, PodView) {
    let view = PodView {
        node: node_of(pod),
        ready: is_ready(pod),
        terminating: pod.metadata.deletion_timestamp.is_some(),
        revision: revision_of(pod).unwrap_or_default().to_string(),
    };
    (crate::journal::by_uid(pod), view)
}

impl NodeJournal {
    /// The most of `nodes` that were at once without a Ready, non-terminating pod.
    fn max_nodes_unavailable(&self, nodes: &[String]) -> usize {
        self.all()
            .iter()
            .map(|snapshot| {
                nodes
                    .iter()
                    .filter(|node| !snapshot.values().any(|v| &v.node == *node && v.ready && !v.terminating))
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    /// The most pods (terminating ones included) seen at once on one node.
    fn max_pods_on_a_node(&self) -> usize {
        self.all()
            .iter()
            .flat_map(|snapshot| {
                let mut per_node: BTreeMap<&str, usize> = BTreeMap::new();
                for view in snapshot.values() {
                    *per_node.entry(view.node.as_str()).or_default() += 1;
                }
                per_node.into_values().collect::<Vec<_>>()
            })
            .max()
            .unwrap_or(0)
    }
}

/// A DaemonSet covers every eligible node: nodes gaining the selected label get a pod, nodes
/// losing it lose theirs, a node with an untolerated NoSchedule taint gets none until the
/// taint goes, and a deleted pod is revived on its node. Pods are placed through node
/// affinity and carry the daemon tolerations.
pub async fn covers_eligible_nodes(scene: Scene) -> Result<(), Skip> {
    let kit = DsKit::start(&scene).await;
    let [n1, n2, n3] = [kit.node_names[0].clone(), kit.node_names[1].clone(), kit.node_names[2].clone()];
    kit.label_node(&n1, DAEMON_LABEL, Some("on")).await;
    kit.label_node(&n2, DAEMON_LABEL, Some("on")).await;
    kit.create(daemonset(
        "agent",
        "nginx:1.25",
        json!({"template": {"spec": {"nodeSelector": {DAEMON_LABEL: "on"}}}}),
    ))
    .await
    .unwrap();
    let (set, pods) = kit.wait_settled("agent", &[&n1, &n2]).await;
    let status = set.status.clone().unwrap();
    assert!(!status.update_revision.is_empty(), "status.updateRevision is set");
    for pod in &pods {
        let spec = pod.spec.as_ref().unwrap();
        let terms = spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|a| a.required_during_scheduling_ignored_during_execution.as_ref())
            .map(|r| r.node_selector_terms.clone())
            .unwrap_or_default();
        assert!(
            terms.iter().any(|t| t.match_fields.iter().flatten().any(|f| f.key == "metadata.name")),
            "a daemon pod is placed through a metadata.name node affinity: {terms:?}"
        );
        let tolerated: BTreeSet<String> =
            spec.tolerations.iter().flatten().filter_map(|t| t.key.clone()).collect();
        for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
            assert!(tolerated.contains(key), "a daemon pod tolerates {key}: {tolerated:?}");
        }
        assert!(pod.metadata.generate_name.as_deref().is_some_and(|g| g.starts_with("agent-")));
    }
    scene.observe(
        "two labelled nodes",
        json!({"desired": status.desired_number_scheduled, "ready": status.number_ready, "pods": pods.len()}),
    );

    // A third node gains the label: it gets a pod.
    kit.label_node(&n3, DAEMON_LABEL, Some("on")).await;
    kit.wait_settled("agent", &[&n1, &n2, &n3]).await;

    // The first node loses it: its pod is removed.
    kit.label_node(&n1, DAEMON_LABEL, None).await;
    let (_, pods) = kit.wait_settled("agent", &[&n2, &n3]).await;
    let before = uids(&pods);

    // Label back with an untolerated NoSchedule taint: no pod until the taint goes.
    kit.taint_node(&n1, Some("NoSchedule")).await;
    kit.label_node(&n1, DAEMON_LABEL, Some("on")).await;
    kit.stays("agent", "no pod on the tainted node", |set, pods| {
        pods.iter().all(|pod| node_of(pod) != n1)
            && set.status.as_ref().is_none_or(|s| s.desired_number_scheduled <= 2)
    })
    .await;
    kit.taint_node(&n1, None).await;
    let (_, pods) = kit.wait_settled("agent", &[&n1, &n2, &n3]).await;
    let after = uids(&pods);
    assert_eq!(after.get(&n2), before.get(&n2), "pods on nodes that stayed eligible are kept");
    assert_eq!(after.get(&n3), before.get(&n3), "pods on nodes that stayed eligible are kept");

    // A deleted pod is revived on its node.
    let victim = pods.iter().find(|pod| node_of(pod) == n2).unwrap();
    kit.pods.delete(&victim.name_any(), &DeleteParams::default()).await.unwrap();
    let (_, pods) = kit
        .wait_for("agent", "the deleted pod replaced on its node", |set, pods| {
            let expected: BTreeSet<String> = [n1.clone(), n2.clone(), n3.clone()].into();
            settled(set, pods, &expected) && uids(pods).get(&n2) != after.get(&n2)
        })
        .await;
    scene.observe("final pods per node", uids(&pods).keys().cloned().collect::<Vec<_>>());
    kit.shutdown().await;
    Ok(())
}

/// `rollingUpdate.type: InPlaceIfPossible`: an image change restarts only the container (pod
/// UIDs kept, restart count 1, the InPlaceUpdateReady readiness gate injected), at most
/// `maxUnavailable` nodes down at once; a change beyond images recreates the pods.
pub async fn in_place_and_recreate_updates(scene: Scene) -> Result<(), Skip> {
    let kit = DsKit::start(&scene).await;
    let nodes: Vec<String> = kit.node_names.clone();
    let all: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let strategy = json!({
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 1}}
    });
    kit.create(daemonset("logs", "nginx:1.25", strategy)).await.unwrap();
    let (set, before) = kit.wait_settled("logs", &all).await;
    let old_revision = set.status.unwrap().update_revision;
    for pod in &before {
        let gates = pod.spec.as_ref().unwrap().readiness_gates.clone().unwrap_or_default();
        assert!(
            gates.iter().any(|g| g.condition_type == "InPlaceUpdateReady"),
            "in-place daemon pods carry the InPlaceUpdateReady readiness gate: {gates:?}"
        );
    }

    let journal = kit.journal("logs");
    kit.set_image("logs", "nginx:1.26").await;
    let (set, after) = kit
        .wait_for("logs", "every pod updated in place", |set, pods| {
            let expected: BTreeSet<String> = nodes.iter().cloned().collect();
            settled(set, pods, &expected) && pods.iter().all(|p| image_of(p) == "nginx:1.26")
        })
        .await;
    let status = set.status.unwrap();
    assert_ne!(status.update_revision, old_revision);
    assert_eq!(uids(&after), uids(&before), "an in-place update keeps every pod");
    for pod in &after {
        assert_eq!(restarts_of(pod), 1, "only the container restarted: {}", pod_summary(pod));
        assert!(pod.annotations().contains_key("apps.kruise.io/inplace-update-state"));
    }
    let unavailable = journal.max_nodes_unavailable(&nodes);
    assert!(unavailable <= 1, "at most maxUnavailable=1 node without a Ready pod, saw {unavailable}");
    scene.observe("in place", json!({"kept": after.len(), "max nodes unavailable": unavailable}));
    drop(journal);

    // An env change cannot be applied in place: the pods are recreated, one per node.
    kit.patch(
        "logs",
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.26", "env": [{"name": "MODE", "value": "verbose"}]}]}}}}),
    )
    .await;
    let (_, recreated) = kit
        .wait_for("logs", "every pod recreated", |set, pods| {
            let expected: BTreeSet<String> = nodes.iter().cloned().collect();
            settled(set, pods, &expected)
                && uids(pods).values().all(|uid| !uids(&after).values().any(|old| old == uid))
        })
        .await;
    for pod in &recreated {
        assert_eq!(restarts_of(pod), 0, "a recreated pod starts fresh: {}", pod_summary(pod));
    }
    scene.observe("recreated", recreated.len());
    kit.shutdown().await;
    Ok(())
}

/// Canary controls: `rollingUpdate.selector` updates only the pods on matching nodes;
/// `partition` keeps that many nodes at the old revision; `paused` stops the rollout.
pub async fn canary_selector_partition_paused(scene: Scene) -> Result<(), Skip> {
    let kit = DsKit::start(&scene).await;
    let nodes: Vec<String> = kit.node_names.clone();
    let all: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let canary = nodes[1].clone();
    kit.label_node(&canary, "kruise-it/canary", Some("true")).await;
    let strategy = json!({
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
            "rollingUpdateType": "InPlaceIfPossible",
            "maxUnavailable": 3,
            "selector": {"matchLabels": {"kruise-it/canary": "true"}}
        }}
    });
    kit.create(daemonset("canary", "nginx:1.25", strategy)).await.unwrap();
    let (_, before) = kit.wait_settled("canary", &all).await;

    let updated_on = |pods: &[Pod], image: &str| -> BTreeSet<String> {
        live(pods).into_iter().filter(|p| image_of(p) == image && is_ready(p)).map(node_of).collect()
    };
    kit.set_image("canary", "nginx:1.26").await;
    let (set, _) = kit
        .wait_for("canary", "the canary node updated", |set, pods| {
            set.status.as_ref().is_some_and(|s| {
                s.observed_generation == set.metadata.generation.unwrap_or(0)
                    && s.updated_number_scheduled == 1
                    && s.number_ready == 3
            }) && updated_on(pods, "nginx:1.26") == BTreeSet::from([canary.clone()])
        })
        .await;
    assert_eq!(set.status.unwrap().desired_number_scheduled, 3);
    kit.stays("canary", "only the canary node updated", |_, pods| {
        updated_on(pods, "nginx:1.26") == BTreeSet::from([canary.clone()])
    })
    .await;
    scene.observe("canary", vec![canary.clone()]);

    // Drop the selector, keep one node at the old revision with partition 1.
    kit.patch(
        "canary",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"selector": null, "partition": 1}}}}),
    )
    .await;
    let (set, pods) = kit
        .wait_for("canary", "two nodes updated, one kept", |set, pods| {
            set.status.as_ref().is_some_and(|s| s.updated_number_scheduled == 2 && s.number_ready == 3)
                && updated_on(pods, "nginx:1.26").len() == 2
        })
        .await;
    kit.stays("canary", "partition 1 keeps one node old", |_, pods| {
        updated_on(pods, "nginx:1.26").len() == 2
    })
    .await;
    assert_eq!(set.status.unwrap().updated_number_scheduled, 2);
    scene.observe("partition 1 updated", updated_on(&pods, "nginx:1.26").len());

    // Paused: a new image and partition 0 change nothing until resumed.
    kit.patch(
        "canary",
        json!({"spec": {
            "updateStrategy": {"rollingUpdate": {"partition": 0, "paused": true}},
            "template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}
        }}),
    )
    .await;
    kit.stays("canary", "a paused rollout updates nothing", |_, pods| {
        updated_on(pods, "nginx:1.27").is_empty() && live(pods).len() == 3
    })
    .await;
    kit.patch("canary", json!({"spec": {"updateStrategy": {"rollingUpdate": {"paused": false}}}})).await;
    let (_, after) = kit
        .wait_for("canary", "every node at the newest image", |set, pods| {
            let expected: BTreeSet<String> = nodes.iter().cloned().collect();
            settled(set, pods, &expected) && pods.iter().all(|p| image_of(p) == "nginx:1.27")
        })
        .await;
    assert_eq!(uids(&after), uids(&before), "every step went in place");
    kit.shutdown().await;
    Ok(())
}

/// `maxSurge: 1, maxUnavailable: 0` with `minReadySeconds`: on each node the new pod is created
/// and becomes available before the old one is deleted, so no node is ever without a Ready pod.
pub async fn surge_update(scene: Scene) -> Result<(), Skip> {
    let kit = DsKit::start(&scene).await;
    let nodes: Vec<String> = kit.node_names.clone();
    let all: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let strategy = json!({
        "minReadySeconds": 1,
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Standard", "maxSurge": 1, "maxUnavailable": 0}}
    });
    kit.create(daemonset("surge", "nginx:1.25", strategy)).await.unwrap();
    let (_, before) = kit.wait_settled("surge", &all).await;
    let journal = kit.journal("surge");
    kit.set_image("surge", "nginx:1.26").await;
    let (_, after) = kit
        .wait_for("surge", "every node surged to the new image", |set, pods| {
            let expected: BTreeSet<String> = nodes.iter().cloned().collect();
            settled(set, pods, &expected) && pods.iter().all(|p| image_of(p) == "nginx:1.26")
        })
        .await;
    let old = uids(&before);
    assert!(uids(&after).values().all(|uid| !old.values().any(|o| o == uid)), "Standard recreates every pod");
    let unavailable = journal.max_nodes_unavailable(&nodes);
    let surged = journal.max_pods_on_a_node();
    assert_eq!(unavailable, 0, "with maxUnavailable 0 every node keeps a Ready pod");
    assert_eq!(surged, 2, "the new pod runs beside the old one before it is deleted");
    scene.observe("surge", json!({"max nodes unavailable": unavailable, "max pods on a node": surged}));
    kit.shutdown().await;
    Ok(())
}

/// The lifecycle state label of a pod.
fn lifecycle_of(pod: &Pod) -> String {
    pod.labels().get("lifecycle.apps.kruise.io/state").cloned().unwrap_or_default()
}

/// A `preDelete` hook holds a pod the rolling update condemns (an env change cannot go in
/// place) in `PreparingDelete` until its hook label goes; then it is deleted and recreated at
/// the new revision, one node at a time.
pub async fn pre_delete_hook(scene: Scene) -> Result<(), Skip> {
    let kit = DsKit::start(&scene).await;
    let nodes: Vec<String> = kit.node_names.clone();
    let all: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let spec = json!({
        "lifecycle": {"preDelete": {"labelsHandler": {"example.io/block-deleting": "true"}}},
        "template": {"metadata": {"labels": {"example.io/block-deleting": "true"}}},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 1}}
    });
    kit.create(daemonset("hooked", "nginx:1.25", spec)).await.unwrap();
    let (_, before) = kit.wait_settled("hooked", &all).await;
    let old = uids(&before);
    kit.patch(
        "hooked",
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.25", "env": [{"name": "MODE", "value": "verbose"}]}]}}}}),
    )
    .await;

    let mut released = Vec::new();
    for round in 0..nodes.len() {
        let (_, pods) = kit
            .wait_for("hooked", "one old pod held in PreparingDelete", |_, pods| {
                live(pods).iter().any(|p| lifecycle_of(p) == "PreparingDelete")
            })
            .await;
        let held: Vec<&Pod> =
            live(&pods).into_iter().filter(|p| lifecycle_of(p) == "PreparingDelete").collect();
        assert_eq!(held.len(), 1, "maxUnavailable 1 holds one pod at a time (round {round})");
        let held_name = held[0].name_any();
        let held_uid = held[0].uid().unwrap();
        assert!(old.values().any(|uid| *uid == held_uid), "the held pod is an old one");
        kit.stays("hooked", "the held pod is not deleted while its hook label is on", |_, pods| {
            live(pods).iter().any(|p| p.uid().as_deref() == Some(held_uid.as_str()))
        })
        .await;
        kit.pods
            .patch(
                &held_name,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"example.io/block-deleting": null}}})),
            )
            .await
            .unwrap();
        let node = node_of(held[0]);
        kit.wait_for("hooked", "the released pod replaced at the new revision", |set, pods| {
            let Some(status) = &set.status else { return false };
            live(pods).iter().any(|p| {
                node_of(p) == node && revision_of(p) == Some(status.update_revision.as_str()) && is_ready(p)
            }) && !pods.iter().any(|p| p.uid().as_deref() == Some(held_uid.as_str()))
        })
        .await;
        released.push(node);
    }
    let expected: BTreeSet<String> = nodes.iter().cloned().collect();
    kit.wait_for("hooked", "every node updated", |set, pods| settled(set, pods, &expected)).await;
    scene.observe("released in turn", released.len());
    kit.shutdown().await;
    Ok(())
}

/// Invalid sets are refused with field paths and nothing is created; a v1alpha1 manifest is
/// defaulted, runs, and is served back as v1beta1.
pub async fn validation_and_versions(scene: Scene) -> Result<(), Skip> {
    let kit = DsKit::start(&scene).await;
    let nodes: Vec<String> = kit.node_names.clone();
    let all: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let error = kit
        .create(daemonset(
            "bad",
            "nginx:1.25",
            json!({
                "selector": {"matchLabels": {"app": "other"}},
                "template": {"spec": {"restartPolicy": "Never"}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0, "partition": "150%"}}
            }),
        ))
        .await
        .expect_err("an invalid DaemonSet must be refused");
    let kube::Error::Api(response) = &error else { panic!("unexpected error {error:?}") };
    assert_eq!(response.code, 422, "{response:?}");
    let paths = [
        "spec.template.metadata.labels",
        "spec.template.spec.restartPolicy",
        "spec.updateStrategy.rollingUpdate.maxUnavailable",
        "spec.updateStrategy.rollingUpdate.partition",
    ];
    for path in paths {
        assert!(response.message.contains(path), "the message names {path}: {}", response.message);
    }
    assert!(kit.sets.get_opt("bad").await.unwrap().is_none());
    scene.observe("invalid", json!({"code": response.code, "reason": response.reason, "paths": paths}));

    let alpha = json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "alpha"},
        "spec": {
            "selector": {"matchLabels": {"app": "alpha"}},
            "template": {
                "metadata": {"labels": {"app": "alpha"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
            }
        }
    });
    kit.create(alpha).await.unwrap();
    let (set, _) = kit.wait_settled("alpha", &all).await;
    let strategy = serde_json::to_value(&set.spec.update_strategy).unwrap();
    assert_eq!(strategy["type"], "RollingUpdate", "defaulted strategy: {strategy}");
    assert_eq!(strategy["rollingUpdate"]["maxUnavailable"], 1, "defaulted strategy: {strategy}");
    assert_eq!(strategy["rollingUpdate"]["rollingUpdateType"], "Standard", "defaulted strategy: {strategy}");
    let served: DynamicObject =
        Api::<DynamicObject>::namespaced_with(kit.kit.client.clone(), "default", &resource("v1beta1"))
            .get("alpha")
            .await
            .unwrap();
    assert_eq!(served.types.as_ref().unwrap().api_version, "apps.kruise.io/v1beta1");
    scene.observe("defaulted strategy", strategy);
    kit.shutdown().await;
    Ok(())
}

/// Image pre-download (gate `PreDownloadImageForDaemonSetUpdate`): an in-place rollout held by
/// its partition gets an ImagePullJob `<revision>-<container>` for the changed image, owned by
/// the DaemonSet and selecting the pods not yet updated; the job goes once every node runs the
/// update revision.
pub async fn image_pre_download(scene: Scene) -> Result<(), Skip> {
    let gates = "ImagePullJobGate=true,PreDownloadImageForDaemonSetUpdate=true";
    let kit = DsKit::start_with(&scene, ManagerSpec::in_process().with_feature_gates(gates)).await;
    let nodes: Vec<String> = kit.node_names.clone();
    let all: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let jobs: Api<ImagePullJob> = Api::namespaced(kit.kit.client.clone(), "default");
    let revisions: Api<ControllerRevision> = Api::namespaced(kit.kit.client.clone(), "default");
    let strategy = json!({
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "partition": 2}}
    });
    kit.create(daemonset("warm", "nginx:1.25", strategy)).await.unwrap();
    kit.wait_settled("warm", &all).await;
    kit.set_image("warm", "nginx:1.26").await;

    let (set, _) = kit
        .wait_for("warm", "one node updated, two held by the partition", |set, pods| {
            set.status.as_ref().is_some_and(|s| {
                s.observed_generation == set.metadata.generation.unwrap_or(0)
                    && s.updated_number_scheduled == 1
            }) && live(pods).iter().filter(|p| image_of(p) == "nginx:1.26").count() == 1
        })
        .await;
    let hash = set.status.unwrap().update_revision;
    let revision = format!("warm-{hash}");
    let deadline = Instant::now() + SETTLE;
    let job_name = format!("{revision}-main");
    let job = loop {
        if let Some(job) = jobs.get_opt(&job_name).await.unwrap() {
            break job;
        }
        let names: Vec<String> =
            jobs.list(&ListParams::default()).await.unwrap().items.iter().map(|j| j.name_any()).collect();
        assert!(Instant::now() < deadline, "no ImagePullJob {job_name}; jobs: {names:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let labelled = revisions.get(&revision).await.unwrap();
    assert!(
        labelled.labels().contains_key("apps.kruise.io/pre-predownload-created"),
        "the update revision records the pre-download: {:?}",
        labelled.labels()
    );
    let owner = job.owner_references().first().cloned().expect("owned");
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("DaemonSet", "warm", Some(true))
    );
    let spec = serde_json::to_value(&job.spec).unwrap();
    assert_eq!(spec["image"], "nginx:1.26");
    let not_in = &spec["podSelector"]["matchExpressions"][0];
    assert_eq!(
        (not_in["key"].as_str(), not_in["operator"].as_str()),
        (Some("controller-revision-hash"), Some("NotIn"))
    );
    assert!(not_in["values"].as_array().unwrap().iter().any(|v| v == hash.as_str()), "{not_in}");
    scene.observe("job", json!({"image": spec["image"], "selectorOperator": not_in["operator"]}));

    kit.patch("warm", json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}})).await;
    let (_, pods) = kit.wait_settled("warm", &all).await;
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
