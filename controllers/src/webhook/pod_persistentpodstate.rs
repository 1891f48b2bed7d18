//! The PersistentPodState part of pod mutation on CREATE (upstream
//! `pkg/webhook/pod/mutating/persistent_pod_state.go`): a pod whose controller is a workload
//! targeted by a PersistentPodState, and whose name has a recorded state with node topology
//! labels, gets a `nodeSelector` entry for each required key and one preferred node-affinity
//! term per preferred term (weight from the spec), plus the annotation
//! `kruise.io/injected-persistent-pod-state: <name>`. That is how a recreated StatefulSet pod
//! returns to the zone (or node) its predecessor ran in.
//!
//! The pod is handled as JSON, as the rest of the pod webhook does; the server gathers the
//! PersistentPodStates of the pod's namespace and the white list into a
//! [`PersistentPodStateContext`] beforehand.

use std::collections::BTreeMap;

use kruise_crds::apps::v1beta1::{PersistentPodState, PersistentPodStateSpec, PodState, TargetReference};
use serde_json::{Value, json};

use crate::persistentpodstate::core::{ANNOTATION_INJECTED, WhiteList, select_for_target};

/// What the PersistentPodState mutation reads from the cluster for one pod.
#[derive(Clone, Debug, Default)]
pub struct PersistentPodStateContext {
    /// The PersistentPodStates of the pod's namespace.
    pub states: Vec<PersistentPodState>,
    /// `PPS_Watch_Custom_Workload_WhiteList` of `kruise-configuration`.
    pub whitelist: WhiteList,
}

/// The controller owner of a pod (JSON) as a target reference, if it has one.
pub fn controller_target(pod: &Value) -> Option<TargetReference> {
    let owners = pod.pointer("/metadata/ownerReferences")?.as_array()?;
    let owner = owners.iter().find(|owner| owner.get("controller").and_then(Value::as_bool) == Some(true))?;
    let text = |field: &str| owner.get(field).and_then(Value::as_str).unwrap_or_default().to_string();
    Some(TargetReference { api_version: text("apiVersion"), kind: text("kind"), name: text("name") })
}

/// The required node selector and preferred terms for a recorded state (upstream
/// `createNodeAffinity`): required keys with a recorded value; one preferred term per spec
/// term, holding an `In` requirement for each of its keys with a recorded value.
pub fn node_affinity(
    spec: &PersistentPodStateSpec,
    state: &PodState,
) -> (BTreeMap<String, String>, Vec<Value>) {
    let labels = &state.node_topology_labels;
    let selector = spec
        .required_persistent_topology
        .iter()
        .flat_map(|term| term.keys.iter())
        .filter_map(|key| labels.get(key).map(|value| (key.clone(), value.clone())))
        .collect();
    let preferred = spec
        .preferred_persistent_topology
        .iter()
        .map(|term| {
            let expressions: Vec<Value> = term
                .preference
                .keys
                .iter()
                .filter_map(|key| {
                    labels.get(key).map(|v| json!({"key": key, "operator": "In", "values": [v]}))
                })
                .collect();
            let mut preference = json!({});
            if !expressions.is_empty() {
                preference["matchExpressions"] = json!(expressions);
            }
            json!({"weight": term.weight, "preference": preference})
        })
        .collect();
    (selector, preferred)
}

/// Applies the recorded state of `pod` (JSON, edited in place); returns whether it changed.
pub fn inject(pod: &mut Value, context: &PersistentPodStateContext) -> Result<bool, String> {
    let Some(target) = controller_target(pod) else { return Ok(false) };
    if !context.whitelist.allows(&target.api_version, &target.kind) {
        return Ok(false);
    }
    let Some(state) = select_for_target(&context.states, &target) else { return Ok(false) };
    let pod_name = pod.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    let Some(recorded) = state.status.as_ref().and_then(|status| status.pod_states.get(pod_name)) else {
        return Ok(false);
    };
    if recorded.node_topology_labels.is_empty() {
        return Ok(false);
    }
    let (selector, preferred) = node_affinity(&state.spec, recorded);
    if selector.is_empty() && preferred.is_empty() {
        return Ok(false);
    }
    let state_name = state.metadata.name.clone().unwrap_or_default();
    tracing::debug!(pod = %pod_name, persistentpodstate = %state_name, ?selector, preferred = preferred.len(), "injecting the recorded node topology");
    let object = pod.as_object_mut().ok_or("the pod is not an object")?;
    let metadata = object.entry("metadata").or_insert_with(|| json!({}));
    let annotations = metadata
        .as_object_mut()
        .ok_or("metadata is not an object")?
        .entry("annotations")
        .or_insert_with(|| json!({}));
    if annotations.is_null() {
        *annotations = json!({});
    }
    annotations
        .as_object_mut()
        .ok_or("metadata.annotations is not an object")?
        .insert(ANNOTATION_INJECTED.into(), json!(state_name));
    let spec =
        object.entry("spec").or_insert_with(|| json!({})).as_object_mut().ok_or("spec is not an object")?;
    if !selector.is_empty() {
        let node_selector = spec.entry("nodeSelector").or_insert_with(|| json!({}));
        if node_selector.is_null() {
            *node_selector = json!({});
        }
        let node_selector = node_selector.as_object_mut().ok_or("spec.nodeSelector is not an object")?;
        for (key, value) in selector {
            node_selector.insert(key, json!(value));
        }
    }
    if !preferred.is_empty() {
        let affinity = spec.entry("affinity").or_insert_with(|| json!({}));
        if affinity.is_null() {
            *affinity = json!({});
        }
        let node_affinity = affinity
            .as_object_mut()
            .ok_or("spec.affinity is not an object")?
            .entry("nodeAffinity")
            .or_insert_with(|| json!({}));
        if node_affinity.is_null() {
            *node_affinity = json!({});
        }
        let terms = node_affinity
            .as_object_mut()
            .ok_or("spec.affinity.nodeAffinity is not an object")?
            .entry("preferredDuringSchedulingIgnoredDuringExecution")
            .or_insert_with(|| json!([]));
        if terms.is_null() {
            *terms = json!([]);
        }
        terms
            .as_array_mut()
            .ok_or("preferredDuringSchedulingIgnoredDuringExecution is not a list")?
            .extend(preferred);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kruise_crds::apps::v1beta1::{NodeTopologyTerm, PersistentPodStateStatus, PreferredTopologyTerm};

    use super::*;

    const ZONE: &str = "topology.kubernetes.io/zone";
    const HOST: &str = "kubernetes.io/hostname";

    fn pps_demo() -> PersistentPodState {
        PersistentPodState {
            metadata: ObjectMeta {
                name: Some("test-kruise-sts".into()),
                namespace: Some("ns-test".into()),
                ..Default::default()
            },
            spec: PersistentPodStateSpec {
                target_reference: TargetReference {
                    api_version: "apps.kruise.io/v1beta1".into(),
                    kind: "StatefulSet".into(),
                    name: "test-kruise-sts".into(),
                },
                required_persistent_topology: Some(NodeTopologyTerm { keys: vec![ZONE.into()] }),
                preferred_persistent_topology: vec![PreferredTopologyTerm {
                    weight: 10,
                    preference: NodeTopologyTerm { keys: vec![HOST.into()] },
                }],
                ..Default::default()
            },
            status: Some(PersistentPodStateStatus {
                observed_generation: 0,
                pod_states: BTreeMap::from([(
                    "test-pod".to_string(),
                    PodState {
                        node_topology_labels: BTreeMap::from([
                            (ZONE.to_string(), "cn-beijing-a".to_string()),
                            (HOST.to_string(), "kube-resource011162007216".to_string()),
                        ]),
                        ..Default::default()
                    },
                )]),
            }),
        }
    }

    fn pod_demo(owner: &str) -> Value {
        json!({
            "metadata": {
                "namespace": "ns-test",
                "name": "test-pod",
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": owner, "controller": true, "uid": ""}],
                "annotations": {},
                "labels": {},
            },
            "spec": {
                "containers": [{"name": "nginx", "image": "nginx:1.15.1"}],
                "affinity": {"nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "node/gpu", "operator": "Exists"}]}]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "preference": {"matchExpressions": [{"key": "test-key", "operator": "Exists"}]}}],
                }},
            },
        })
    }

    /// Upstream `TestPersistentPodStateMutatingPod`.
    #[test]
    fn persistent_pod_state_mutating_pod() {
        let context = PersistentPodStateContext { states: vec![pps_demo()], whitelist: WhiteList::default() };
        let mut expected = pod_demo("test-kruise-sts");
        expected["metadata"]["annotations"][ANNOTATION_INJECTED] = json!("test-kruise-sts");
        expected["spec"]["nodeSelector"] = json!({ZONE: "cn-beijing-a"});
        expected["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
            .as_array_mut()
            .unwrap()
            .push(json!({"weight": 10, "preference": {"matchExpressions": [{"key": HOST, "operator": "In", "values": ["kube-resource011162007216"]}]}}));
        let cases = [
            (
                "matched PersistentPodState, and required, preferred, labels, annotations",
                pod_demo("test-kruise-sts"),
                expected,
                true,
            ),
            ("no matched PersistentPodState", pod_demo("no-found"), pod_demo("no-found"), false),
        ];
        for (name, mut pod, expected, changed) in cases {
            assert_eq!(inject(&mut pod, &context), Ok(changed), "{name}");
            assert_eq!(pod, expected, "{name}");
        }
    }

    #[test]
    fn pods_without_state_or_owner_are_left_alone() {
        let context = PersistentPodStateContext { states: vec![pps_demo()], whitelist: WhiteList::default() };
        let mut unknown = pod_demo("test-kruise-sts");
        unknown["metadata"]["name"] = json!("test-pod-2");
        let mut orphan = pod_demo("test-kruise-sts");
        orphan["metadata"]["ownerReferences"] = json!([]);
        let mut deployment = pod_demo("test-kruise-sts");
        deployment["metadata"]["ownerReferences"][0]["kind"] = json!("Deployment");
        let mut deleting_state = pps_demo();
        deleting_state.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        );
        for (name, mut pod, context) in [
            ("no recorded state", unknown, context.clone()),
            ("no controller", orphan, context.clone()),
            ("kind not supported", deployment, context.clone()),
            (
                "state being deleted",
                pod_demo("test-kruise-sts"),
                PersistentPodStateContext { states: vec![deleting_state], whitelist: WhiteList::default() },
            ),
        ] {
            let before = pod.clone();
            assert_eq!(inject(&mut pod, &context), Ok(false), "{name}");
            assert_eq!(pod, before, "{name}");
        }
    }

    #[test]
    fn pods_without_affinity_get_one() {
        let context = PersistentPodStateContext { states: vec![pps_demo()], whitelist: WhiteList::default() };
        let mut pod = json!({"metadata": {"name": "test-pod", "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "StatefulSet", "name": "test-kruise-sts", "controller": true}]}, "spec": {"containers": []}});
        assert_eq!(inject(&mut pod, &context), Ok(true));
        assert_eq!(pod["metadata"]["annotations"][ANNOTATION_INJECTED], "test-kruise-sts");
        assert_eq!(pod["spec"]["nodeSelector"][ZONE], "cn-beijing-a");
        assert_eq!(
            pod["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"],
            10
        );
    }
}
