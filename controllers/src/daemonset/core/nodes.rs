//! Which nodes a DaemonSet's pods belong on (upstream `nodeShouldRunDaemonPod` and `Predicates`):
//! the template's `nodeName`, `nodeSelector` and required node affinity, and the node's
//! `NoSchedule`/`NoExecute` taints against the template's tolerations plus the tolerations every
//! daemon pod gets (Kubernetes `AddOrUpdateDaemonPodTolerations`). Also the node-name affinity a
//! new pod carries so the scheduler binds it to its node, how a pod's node is read back, and the
//! rolling-update node selector.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodSpec,
    Taint, Toleration,
};
use kruise_crds::apps::v1beta1::{DaemonSet, DaemonSetUpdateStrategyType};

/// The field key of a node's name in node selector `matchFields`.
pub const NODE_NAME_FIELD: &str = "metadata.name";

/// Taint effect `NoSchedule`.
const NO_SCHEDULE: &str = "NoSchedule";
/// Taint effect `NoExecute`.
const NO_EXECUTE: &str = "NoExecute";

fn exists(key: &str, effect: &str) -> Toleration {
    Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some(effect.into()),
        ..Default::default()
    }
}

/// The tolerations every daemon pod gets (Kubernetes `AddOrUpdateDaemonPodTolerations`): it keeps
/// running on a not-ready or unreachable node, and is placed on nodes under disk, memory or PID
/// pressure, cordoned nodes, and (host-network pods) nodes whose network is unavailable.
pub fn default_daemon_tolerations(host_network: bool) -> Vec<Toleration> {
    let mut tolerations = vec![
        exists("node.kubernetes.io/not-ready", NO_EXECUTE),
        exists("node.kubernetes.io/unreachable", NO_EXECUTE),
        exists("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
        exists("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
        exists("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
        exists("node.kubernetes.io/unschedulable", NO_SCHEDULE),
    ];
    if host_network {
        tolerations.push(exists("node.kubernetes.io/network-unavailable", NO_SCHEDULE));
    }
    tolerations
}

/// Adds the daemon tolerations to a pod spec; one with the same key, operator, value and effect
/// is replaced in place (Kubernetes `AddOrUpdateTolerationInPodSpec`).
pub fn add_daemon_tolerations(spec: &mut PodSpec) {
    let host_network = spec.host_network.unwrap_or(false);
    let tolerations = spec.tolerations.get_or_insert_with(Vec::new);
    for toleration in default_daemon_tolerations(host_network) {
        let same = |t: &Toleration| {
            t.key == toleration.key
                && t.operator.as_deref().unwrap_or("Equal")
                    == toleration.operator.as_deref().unwrap_or("Equal")
                && t.value.as_deref().unwrap_or_default() == toleration.value.as_deref().unwrap_or_default()
                && t.effect == toleration.effect
        };
        match tolerations.iter_mut().find(|t| same(t)) {
            Some(existing) => *existing = toleration,
            None => tolerations.push(toleration),
        }
    }
}

/// Whether a toleration tolerates a taint (Kubernetes `ToleratesTaint`).
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref().filter(|e| !e.is_empty())
        && effect != taint.effect
    {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => {
            toleration.value.as_deref().unwrap_or_default() == taint.value.as_deref().unwrap_or_default()
        }
        _ => false,
    }
}

fn has_untolerated_taint(taints: &[Taint], tolerations: &[Toleration], effects: &[&str]) -> bool {
    taints
        .iter()
        .filter(|taint| effects.contains(&taint.effect.as_str()))
        .any(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
}

fn requirement_matches(value: Option<&String>, operator: &str, values: &[String]) -> bool {
    match operator {
        "In" => value.is_some_and(|v| values.contains(v)),
        "NotIn" => value.is_none_or(|v| !values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(actual), Some(bound)) = (
                value.and_then(|v| v.parse::<i64>().ok()),
                values.first().and_then(|v| v.parse::<i64>().ok()),
            ) else {
                return false;
            };
            if operator == "Gt" { actual > bound } else { actual < bound }
        }
        _ => false,
    }
}

fn term_matches(node: &Node, labels: &BTreeMap<String, String>, term: &NodeSelectorTerm) -> bool {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty() {
        // An empty term matches nothing.
        return false;
    }
    let name = node.metadata.name.clone();
    expressions.iter().all(|r| {
        requirement_matches(labels.get(&r.key), &r.operator, r.values.as_deref().unwrap_or_default())
    }) && fields.iter().all(|r| {
        let value = if r.key == NODE_NAME_FIELD { name.as_ref() } else { None };
        requirement_matches(value, &r.operator, r.values.as_deref().unwrap_or_default())
    })
}

/// Whether a node passes a pod spec's `nodeSelector` and required node affinity (Kubernetes
/// `GetRequiredNodeAffinity(pod).Match(node)`).
pub fn node_affinity_matches(spec: &PodSpec, node: &Node) -> bool {
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let selector_ok = spec.node_selector.iter().flatten().all(|(key, value)| labels.get(key) == Some(value));
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| a.required_during_scheduling_ignored_during_execution.as_ref());
    selector_ok
        && required.is_none_or(|required| {
            required.node_selector_terms.iter().any(|term| term_matches(node, &labels, term))
        })
}

/// The pod spec whose constraints decide where a DaemonSet runs (upstream `NewPod`): the template
/// with the daemon tolerations. Built once per reconcile.
#[derive(Clone, Debug)]
pub struct DaemonPredicates {
    spec: PodSpec,
}

impl DaemonPredicates {
    /// The predicates of a DaemonSet's template.
    pub fn new(ds: &DaemonSet) -> Self {
        let mut spec = ds.spec.template.spec.clone().unwrap_or_default();
        add_daemon_tolerations(&mut spec);
        Self { spec }
    }

    /// `(should_run, should_continue_running)` for a node (upstream `nodeShouldRunDaemonPod`):
    /// a node that does not match the template's node name, selector or affinity gets nothing; one
    /// with an untolerated `NoSchedule`/`NoExecute` taint gets no new pod, but an existing pod
    /// keeps running unless a `NoExecute` taint is untolerated.
    pub fn should_run(&self, node: &Node) -> (bool, bool) {
        let node_name = node.metadata.name.as_deref().unwrap_or_default();
        if self.spec.node_name.as_deref().is_some_and(|name| !name.is_empty() && name != node_name) {
            return (false, false);
        }
        if !node_affinity_matches(&self.spec, node) {
            return (false, false);
        }
        let taints = node.spec.as_ref().and_then(|s| s.taints.as_deref()).unwrap_or_default();
        let tolerations = self.spec.tolerations.as_deref().unwrap_or_default();
        if has_untolerated_taint(taints, tolerations, &[NO_SCHEDULE, NO_EXECUTE]) {
            return (false, !has_untolerated_taint(taints, tolerations, &[NO_EXECUTE]));
        }
        (true, true)
    }
}

/// The affinity of a new daemon pod: its required node affinity replaced by
/// `matchFields metadata.name In [node]`, everything else kept (Kubernetes
/// `ReplaceDaemonSetPodNodeNameNodeAffinity`).
pub fn replace_node_name_affinity(affinity: Option<Affinity>, node: &str) -> Affinity {
    let selector = NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_fields: Some(vec![NodeSelectorRequirement {
                key: NODE_NAME_FIELD.into(),
                operator: "In".into(),
                values: Some(vec![node.to_string()]),
            }]),
            ..Default::default()
        }],
    };
    let mut affinity = affinity.unwrap_or_default();
    let node_affinity = affinity.node_affinity.get_or_insert_with(NodeAffinity::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(selector);
    affinity
}

/// The node a daemon pod is for (Kubernetes `GetTargetNodeName`): its `nodeName` once bound,
/// else the single node of its `metadata.name` node affinity.
pub fn target_node_name(pod: &Pod) -> Option<String> {
    let spec = pod.spec.as_ref()?;
    if let Some(name) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(name.to_string());
    }
    let terms = &spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    let [term] = terms.as_slice() else { return None };
    let [field] = term.match_fields.as_deref()? else { return None };
    if field.key != NODE_NAME_FIELD || field.operator != "In" {
        return None;
    }
    match field.values.as_deref()? {
        [name] => Some(name.clone()),
        _ => None,
    }
}

/// Whether a node is picked by the rolling update's `selector` (upstream
/// `NodeShouldUpdateBySelector`; it does not check that the node should run the pod).
pub fn node_selected_for_update(node: &Node, ds: &DaemonSet) -> bool {
    if ds.spec.update_strategy.type_ != DaemonSetUpdateStrategyType::RollingUpdate {
        return false;
    }
    let Some(selector) = ds.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.selector.as_ref())
    else {
        return false;
    };
    let labels = node.metadata.labels.clone().unwrap_or_default();
    !kruise_crds::selector::is_empty(selector) && kruise_crds::selector::matches(selector, &labels)
}

/// What of a node matters to DaemonSets: everything but its resourceVersion, heartbeats and
/// the details of its conditions, of which only the set of `True` types counts (upstream
/// `shouldIgnoreNodeUpdate` and `nodeInSameCondition`). Two nodes with equal fingerprints need no
/// DaemonSet to look again.
pub fn node_fingerprint(node: &Node) -> String {
    let mut copy = node.clone();
    copy.metadata.resource_version = None;
    copy.metadata.managed_fields = None;
    let mut true_conditions: Vec<String> = Vec::new();
    if let Some(status) = copy.status.as_mut() {
        true_conditions = status
            .conditions
            .iter()
            .flatten()
            .filter(|c| c.status == "True")
            .map(|c| c.type_.clone())
            .collect();
        true_conditions.sort();
        true_conditions.dedup();
        status.conditions = None;
    }
    format!("{}|{}", serde_json::to_string(&copy).unwrap_or_default(), true_conditions.join(","))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus};

    use super::*;
    use crate::daemonset::core::fixtures::{daemonset, node};

    fn taint(key: &str, effect: &str) -> Taint {
        Taint { key: key.into(), effect: effect.into(), ..Default::default() }
    }

    fn tainted(name: &str, taints: Vec<Taint>) -> Node {
        let mut node = node(name, &[]);
        node.spec = Some(NodeSpec { taints: Some(taints), ..Default::default() });
        node
    }

    #[test]
    fn node_selector_affinity_and_node_name_decide_where_pods_run() {
        let mut ds = daemonset("ds");
        let spec = ds.spec.template.spec.as_mut().unwrap();
        spec.node_selector = Some([("disk".to_string(), "ssd".to_string())].into());
        let predicates = DaemonPredicates::new(&ds);
        assert_eq!(predicates.should_run(&node("n1", &[("disk", "ssd")])), (true, true));
        assert_eq!(predicates.should_run(&node("n2", &[("disk", "hdd")])), (false, false));
        assert_eq!(predicates.should_run(&node("n3", &[])), (false, false));

        let mut ds = daemonset("ds");
        ds.spec.template.spec.as_mut().unwrap().affinity = Some(replace_node_name_affinity(None, "n2"));
        let predicates = DaemonPredicates::new(&ds);
        assert_eq!(predicates.should_run(&node("n1", &[])), (false, false), "affinity on another node");
        assert_eq!(predicates.should_run(&node("n2", &[])), (true, true));

        let mut ds = daemonset("ds");
        ds.spec.template.spec.as_mut().unwrap().affinity = Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_expressions: Some(vec![NodeSelectorRequirement {
                            key: "zone".into(),
                            operator: "NotIn".into(),
                            values: Some(vec!["a".into()]),
                        }]),
                        ..Default::default()
                    }],
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        let predicates = DaemonPredicates::new(&ds);
        assert_eq!(predicates.should_run(&node("n1", &[("zone", "a")])), (false, false));
        assert_eq!(predicates.should_run(&node("n2", &[("zone", "b")])), (true, true));

        let mut ds = daemonset("ds");
        ds.spec.template.spec.as_mut().unwrap().node_name = Some("n1".into());
        let predicates = DaemonPredicates::new(&ds);
        assert_eq!(predicates.should_run(&node("n1", &[])), (true, true));
        assert_eq!(predicates.should_run(&node("n2", &[])), (false, false));
    }

    #[test]
    fn taints_block_new_pods_and_no_execute_evicts_running_ones() {
        let predicates = DaemonPredicates::new(&daemonset("ds"));
        assert_eq!(
            predicates.should_run(&tainted("n", vec![taint("dedicated", NO_SCHEDULE)])),
            (false, true)
        );
        assert_eq!(
            predicates.should_run(&tainted("n", vec![taint("dedicated", NO_EXECUTE)])),
            (false, false)
        );
        assert_eq!(
            predicates.should_run(&tainted("n", vec![taint("dedicated", "PreferNoSchedule")])),
            (true, true)
        );
        // The daemon tolerations: not-ready/unreachable (NoExecute), pressure and cordons.
        for (key, effect) in [
            ("node.kubernetes.io/not-ready", NO_EXECUTE),
            ("node.kubernetes.io/unreachable", NO_EXECUTE),
            ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
            ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
            ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
            ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
        ] {
            assert_eq!(predicates.should_run(&tainted("n", vec![taint(key, effect)])), (true, true), "{key}");
        }
        let network = tainted("n", vec![taint("node.kubernetes.io/network-unavailable", NO_SCHEDULE)]);
        assert_eq!(predicates.should_run(&network), (false, true), "only host-network pods tolerate it");
        let mut ds = daemonset("ds");
        ds.spec.template.spec.as_mut().unwrap().host_network = Some(true);
        assert_eq!(DaemonPredicates::new(&ds).should_run(&network), (true, true));

        let mut ds = daemonset("ds");
        ds.spec.template.spec.as_mut().unwrap().tolerations = Some(vec![Toleration {
            key: Some("dedicated".into()),
            operator: Some("Equal".into()),
            value: Some("infra".into()),
            effect: Some(NO_SCHEDULE.into()),
            ..Default::default()
        }]);
        let predicates = DaemonPredicates::new(&ds);
        let mut infra = taint("dedicated", NO_SCHEDULE);
        infra.value = Some("infra".into());
        assert_eq!(predicates.should_run(&tainted("n", vec![infra])), (true, true));
        let mut other = taint("dedicated", NO_SCHEDULE);
        other.value = Some("db".into());
        assert_eq!(predicates.should_run(&tainted("n", vec![other])), (false, true));
    }

    #[test]
    fn daemon_tolerations_are_added_once_and_replace_equal_ones() {
        let mut spec = PodSpec {
            tolerations: Some(vec![Toleration {
                key: Some("node.kubernetes.io/not-ready".into()),
                operator: Some("Exists".into()),
                effect: Some(NO_EXECUTE.into()),
                toleration_seconds: Some(30),
                ..Default::default()
            }]),
            ..Default::default()
        };
        add_daemon_tolerations(&mut spec);
        add_daemon_tolerations(&mut spec);
        let tolerations = spec.tolerations.unwrap();
        assert_eq!(tolerations.len(), 6);
        assert_eq!(tolerations[0].toleration_seconds, None, "replaced by the daemon toleration");
    }

    #[test]
    fn the_node_name_affinity_is_what_the_target_node_is_read_from() {
        let affinity = replace_node_name_affinity(None, "node-1");
        let pod = Pod {
            spec: Some(PodSpec { affinity: Some(affinity.clone()), ..Default::default() }),
            ..Default::default()
        };
        assert_eq!(target_node_name(&pod).as_deref(), Some("node-1"));
        let mut bound = pod.clone();
        bound.spec.as_mut().unwrap().node_name = Some("node-2".into());
        assert_eq!(target_node_name(&bound).as_deref(), Some("node-2"));
        assert_eq!(target_node_name(&Pod::default()), None);
        // An existing required affinity is replaced, a preferred one kept.
        let mut existing = affinity;
        existing.node_affinity.as_mut().unwrap().preferred_during_scheduling_ignored_during_execution =
            Some(vec![]);
        let replaced = replace_node_name_affinity(Some(existing), "node-3");
        let node_affinity = replaced.node_affinity.unwrap();
        assert!(node_affinity.preferred_during_scheduling_ignored_during_execution.is_some());
        let terms =
            node_affinity.required_during_scheduling_ignored_during_execution.unwrap().node_selector_terms;
        assert_eq!(terms.len(), 1);
        assert_eq!(terms[0].match_fields.as_ref().unwrap()[0].values, Some(vec!["node-3".to_string()]));
    }

    /// Upstream `TestNodeShouldUpdateBySelector`.
    #[test]
    fn the_rolling_update_selector_picks_nodes_by_label() {
        let plain = daemonset("ds");
        assert!(!node_selected_for_update(&node("n", &[("key1", "value1")]), &plain), "no selector");
        let mut ds = daemonset("ds");
        ds.spec.update_strategy.rolling_update.as_mut().unwrap().selector =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
                match_labels: Some([("key1".to_string(), "value1".to_string())].into()),
                ..Default::default()
            });
        assert!(node_selected_for_update(&node("n", &[("key1", "value1")]), &ds));
        assert!(!node_selected_for_update(&node("n", &[("key1", "value2")]), &ds));
        assert!(!node_selected_for_update(&node("n", &[]), &ds));
        ds.spec.update_strategy.type_ = DaemonSetUpdateStrategyType::OnDelete;
        assert!(!node_selected_for_update(&node("n", &[("key1", "value1")]), &ds), "OnDelete");
    }

    /// Upstream `Test_nodeInSameCondition` and `TestShouldIgnoreNodeUpdate`.
    #[test]
    fn node_updates_matter_only_beyond_heartbeats() {
        let condition = |type_: &str, status: &str, heartbeat: i64| NodeCondition {
            type_: type_.into(),
            status: status.into(),
            last_heartbeat_time: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::from_second(heartbeat).unwrap(),
            )),
            ..Default::default()
        };
        let with = |conditions: Vec<NodeCondition>, rv: &str| {
            let mut n = node("n", &[("a", "b")]);
            n.metadata.resource_version = Some(rv.into());
            n.status = Some(NodeStatus { conditions: Some(conditions), ..Default::default() });
            n
        };
        let old = with(vec![condition("Ready", "True", 1), condition("MemoryPressure", "False", 1)], "1");
        let heartbeat =
            with(vec![condition("Ready", "True", 2), condition("MemoryPressure", "False", 2)], "2");
        assert_eq!(node_fingerprint(&old), node_fingerprint(&heartbeat));
        let pressure = with(vec![condition("Ready", "True", 2), condition("MemoryPressure", "True", 2)], "3");
        assert_ne!(node_fingerprint(&old), node_fingerprint(&pressure));
        let mut relabelled = heartbeat.clone();
        relabelled.metadata.labels = Some([("a".to_string(), "c".to_string())].into());
        assert_ne!(node_fingerprint(&old), node_fingerprint(&relabelled));
    }
}
