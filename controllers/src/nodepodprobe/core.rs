//! The NodePodProbe decisions as pure functions: which pod entries stay in a NodePodProbe,
//! and what a pod's probe results make of its conditions, labels and annotations.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Node, Pod, PodCondition};
use kruise_crds::apps::v1alpha1::{NodePodProbeSpec, PodProbeMarker, PodProbeStatus, ProbeState};

use crate::podprobemarker::core::{VIRTUAL_KUBELET_LABEL, split_node_probe_name};

/// Whether the node has a NodePodProbe at all: not a virtual-kubelet node.
pub fn node_is_probed(node: &Node) -> bool {
    node.metadata.labels.as_ref().and_then(|l| l.get(VIRTUAL_KUBELET_LABEL.0)).map(String::as_str)
        != Some(VIRTUAL_KUBELET_LABEL.1)
}

/// Whether the node's `Ready` condition is `True` (a NodePodProbe is created for ready nodes).
pub fn node_is_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// `spec` without the entries whose pod is gone, inactive or replaced (another UID)
/// (upstream `syncPodFromNodePodProbe`). `live` maps a listed pod's `namespace/name` to the
/// pod, when it exists.
pub fn prune_spec(spec: &NodePodProbeSpec, live: &BTreeMap<String, &Pod>) -> NodePodProbeSpec {
    let pod_probes = spec
        .pod_probes
        .iter()
        .filter(|entry| {
            live.get(&format!("{}/{}", entry.namespace, entry.name)).is_some_and(|pod| {
                crate::workload::pods::is_pod_active(pod)
                    && pod.metadata.uid.as_deref() == Some(entry.uid.as_str())
            })
        })
        .cloned()
        .collect();
    NodePodProbeSpec { pod_probes }
}

/// What a pod's probe results ask of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Marks {
    /// Conditions to set (one per condition type; the first probe of a type wins).
    pub conditions: Vec<PodCondition>,
    /// Labels to set (`Some`) or remove (`None`).
    pub labels: BTreeMap<String, Option<String>>,
    /// Annotations to set (`Some`) or remove (`None`).
    pub annotations: BTreeMap<String, Option<String>>,
}

/// The marks of one pod's results (upstream `updatePodProbeStatus`). `marker` finds a marker
/// by name in the pod's namespace (`None`: gone or being deleted, its results are ignored).
/// A result sets the probe's `podConditionType` (`True` on `Succeeded`, else `False`) and
/// applies the marker policy of its state, removing the keys of the other state's policy.
pub fn marks<'a>(status: &PodProbeStatus, marker: impl Fn(&str) -> Option<&'a PodProbeMarker>) -> Marks {
    let mut out = Marks::default();
    let mut condition_types = BTreeSet::new();
    for state in &status.probe_states {
        let Some((marker_name, probe_name)) = split_node_probe_name(&state.name) else { continue };
        let Some(ppm) = marker(marker_name) else { continue };
        let Some(probe) = ppm.spec.probes.iter().find(|p| p.name == probe_name) else { continue };
        if !probe.pod_condition_type.is_empty() && condition_types.insert(probe.pod_condition_type.clone()) {
            out.conditions.push(PodCondition {
                type_: probe.pod_condition_type.clone(),
                status: if state.state == ProbeState::Succeeded { "True" } else { "False" }.into(),
                last_probe_time: state.last_probe_time.clone(),
                last_transition_time: state.last_transition_time.clone(),
                message: (!state.message.is_empty()).then(|| state.message.clone()),
                ..Default::default()
            });
        }
        let (matched, opposite): (Vec<_>, Vec<_>) =
            probe.marker_policy.iter().partition(|policy| policy.state == state.state);
        for policy in opposite {
            out.labels.extend(policy.labels.keys().map(|k| (k.clone(), None)));
            out.annotations.extend(policy.annotations.keys().map(|k| (k.clone(), None)));
        }
        for policy in matched {
            out.labels.extend(policy.labels.iter().map(|(k, v)| (k.clone(), Some(v.clone()))));
            out.annotations.extend(policy.annotations.iter().map(|(k, v)| (k.clone(), Some(v.clone()))));
        }
    }
    out
}

/// The pod's conditions with `marks` applied (upstream `SetPodConditionIfMsgChanged`: a
/// condition is replaced when its status or message changed), or `None` when nothing changes.
pub fn updated_conditions(pod: &Pod, marks: &Marks) -> Option<Vec<PodCondition>> {
    let mut conditions = pod.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
    let mut changed = false;
    for wanted in &marks.conditions {
        match conditions.iter_mut().find(|c| c.type_ == wanted.type_) {
            Some(current) => {
                if current.status != wanted.status || current.message != wanted.message {
                    *current = wanted.clone();
                    changed = true;
                }
            }
            None => {
                conditions.push(wanted.clone());
                changed = true;
            }
        }
    }
    changed.then_some(conditions)
}

/// The metadata merge patch (`labels`, `annotations`; `null` removes) of the marks that
/// change something on `pod`, or `None`.
pub fn metadata_patch(pod: &Pod, marks: &Marks) -> Option<serde_json::Value> {
    fn changes(
        current: Option<&BTreeMap<String, String>>,
        wanted: &BTreeMap<String, Option<String>>,
    ) -> serde_json::Map<String, serde_json::Value> {
        wanted
            .iter()
            .filter(|(k, v)| current.and_then(|c| c.get(*k)) != v.as_ref())
            .map(|(k, v)| (k.clone(), v.clone().map_or(serde_json::Value::Null, serde_json::Value::String)))
            .collect()
    }
    let labels = changes(pod.metadata.labels.as_ref(), &marks.labels);
    let annotations = changes(pod.metadata.annotations.as_ref(), &marks.annotations);
    if labels.is_empty() && annotations.is_empty() {
        return None;
    }
    let mut metadata = serde_json::Map::new();
    if !labels.is_empty() {
        metadata.insert("labels".into(), labels.into());
    }
    if !annotations.is_empty() {
        metadata.insert("annotations".into(), annotations.into());
    }
    Some(serde_json::json!({ "metadata": metadata }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    fn marker() -> PodProbeMarker {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
            "metadata": {"name": "ppm", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "game"}}, "probes": [{
                "name": "healthy", "containerName": "app", "probe": {"exec": {"command": ["check"]}},
                "podConditionType": "game.io/healthy",
                "markerPolicy": [
                    {"state": "Succeeded", "labels": {"game.io/state": "ready"}, "annotations": {"up": "yes"}},
                    {"state": "Failed", "labels": {"game.io/state": "down"}, "annotations": {"down": "yes"}}
                ]
            }]}
        }))
        .unwrap()
    }

    fn status(state: &str) -> PodProbeStatus {
        serde_json::from_value(json!({"name": "p", "namespace": "ns", "uid": "u",
            "probeStates": [{"name": "ppm#healthy", "state": state, "message": "ok"}]}))
        .unwrap()
    }

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "ns", "uid": "u", "labels": {"app": "game"}},
            "spec": {"containers": []},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        }))
        .unwrap()
    }

    #[test]
    fn success_sets_the_condition_true_and_the_succeeded_policy() {
        let m = marker();
        let marks = marks(&status("Succeeded"), |name| (name == "ppm").then_some(&m));
        assert_eq!(marks.conditions.len(), 1);
        assert_eq!(marks.conditions[0].status, "True");
        assert_eq!(marks.labels.get("game.io/state"), Some(&Some("ready".to_string())));
        assert_eq!(marks.annotations.get("down"), Some(&None));
        let p = pod();
        let conditions = updated_conditions(&p, &marks).unwrap();
        assert_eq!(conditions.len(), 2);
        let patch = metadata_patch(&p, &marks).unwrap();
        assert_eq!(
            patch,
            json!({"metadata": {"labels": {"game.io/state": "ready"}, "annotations": {"up": "yes"}}})
        );
    }

    #[test]
    fn failure_flips_the_condition_and_the_labels() {
        let m = marker();
        let mut p = pod();
        let ok = marks(&status("Succeeded"), |_| Some(&m));
        p.status.as_mut().unwrap().conditions = updated_conditions(&p, &ok);
        p.metadata.labels.as_mut().unwrap().insert("game.io/state".into(), "ready".into());
        p.metadata.annotations = Some([("up".to_string(), "yes".to_string())].into());
        assert_eq!(updated_conditions(&p, &ok), None);
        let failed = marks(&status("Failed"), |_| Some(&m));
        let conditions = updated_conditions(&p, &failed).unwrap();
        assert_eq!(conditions.iter().find(|c| c.type_ == "game.io/healthy").unwrap().status, "False");
        assert_eq!(
            metadata_patch(&p, &failed).unwrap(),
            json!({"metadata": {"labels": {"game.io/state": "down"}, "annotations": {"up": null, "down": "yes"}}})
        );
    }

    #[test]
    fn results_of_unknown_markers_are_ignored() {
        let marks = marks(&status("Succeeded"), |_| None);
        assert_eq!(marks, Marks::default());
    }

    #[test]
    fn prunes_pods_gone_or_replaced() {
        let spec: NodePodProbeSpec = serde_json::from_value(json!({"podProbes": [
            {"name": "p", "namespace": "ns", "uid": "u", "IP": ""},
            {"name": "q", "namespace": "ns", "uid": "old", "IP": ""},
            {"name": "r", "namespace": "ns", "uid": "r", "IP": ""}
        ]}))
        .unwrap();
        let p = pod();
        let mut q = pod();
        q.metadata.uid = Some("new".into());
        let live: BTreeMap<String, &Pod> = [("ns/p".to_string(), &p), ("ns/q".to_string(), &q)].into();
        let pruned = prune_spec(&spec, &live);
        assert_eq!(pruned.pod_probes.len(), 1);
        assert_eq!(pruned.pod_probes[0].name, "p");
    }
}
