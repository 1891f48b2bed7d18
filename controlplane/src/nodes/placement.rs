//! Where a pod may run and where it should: the default scheduler's filters (node
//! unschedulable, taints and tolerations, node selector and required node affinity, host ports,
//! resource requests against allocatable, hard topology spread constraints, required pod
//! affinity and anti-affinity) and a scoring that prefers preferred affinities, spreading and
//! the least requested node. Pure: the scheduler feeds it the nodes and the pods placed so far.
//! Failure messages are the ones kube-scheduler writes into `PodScheduled=False`.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::{
    api::core::v1::{
        Container, Node, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodAffinityTerm, Taint, Toleration,
        TopologySpreadConstraint,
    },
    apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement},
};
use kruise_machinery::quantity::Quantity;

/// The scheduler's answer for one pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Bind to this node.
    Node(String),
    /// No node fits; the message for the `PodScheduled=False` condition.
    Unschedulable(String),
}

/// Why one node was filtered out, and whether preemption could help.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rejection {
    reasons: Vec<String>,
    resolvable: bool,
}

impl Rejection {
    fn unresolvable(reason: impl Into<String>) -> Self {
        Self { reasons: vec![reason.into()], resolvable: false }
    }
    fn resolvable(reasons: Vec<String>) -> Self {
        Self { reasons, resolvable: true }
    }
}

fn labels_of(meta_labels: &Option<BTreeMap<String, String>>) -> BTreeMap<String, String> {
    meta_labels.clone().unwrap_or_default()
}

fn requirement_matches(
    labels: &BTreeMap<String, String>,
    key: &str,
    operator: &str,
    values: &[String],
) -> bool {
    let value = labels.get(key);
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

/// Whether a label selector selects these labels (`None` selects nothing, as for affinity terms).
pub fn selector_matches(selector: Option<&LabelSelector>, labels: &BTreeMap<String, String>) -> bool {
    let Some(selector) = selector else { return false };
    let plain = selector.match_labels.iter().flatten().all(|(k, v)| labels.get(k) == Some(v));
    let expressions = selector.match_expressions.iter().flatten().all(
        |LabelSelectorRequirement { key, operator, values }| {
            requirement_matches(labels, key, operator, values.as_deref().unwrap_or_default())
        },
    );
    plain && expressions
}

fn node_requirement_matches(node: &Node, requirement: &NodeSelectorRequirement, field: bool) -> bool {
    let labels = if field {
        BTreeMap::from([("metadata.name".to_string(), node.metadata.name.clone().unwrap_or_default())])
    } else {
        labels_of(&node.metadata.labels)
    };
    requirement_matches(
        &labels,
        &requirement.key,
        &requirement.operator,
        requirement.values.as_deref().unwrap_or_default(),
    )
}

fn term_matches(node: &Node, term: &NodeSelectorTerm) -> bool {
    let expressions = term.match_expressions.iter().flatten();
    let fields = term.match_fields.iter().flatten();
    let any = term.match_expressions.as_ref().is_some_and(|e| !e.is_empty())
        || term.match_fields.as_ref().is_some_and(|f| !f.is_empty());
    any && expressions.clone().all(|r| node_requirement_matches(node, r, false))
        && fields.clone().all(|r| node_requirement_matches(node, r, true))
}

/// Whether a node passes the pod's `nodeSelector` and required node affinity.
pub fn node_affinity_matches(pod: &Pod, node: &Node) -> bool {
    let spec = pod.spec.as_ref();
    let labels = labels_of(&node.metadata.labels);
    let selector_ok = spec
        .and_then(|s| s.node_selector.as_ref())
        .is_none_or(|selector| selector.iter().all(|(k, v)| labels.get(k) == Some(v)));
    let required = spec
        .and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| a.required_during_scheduling_ignored_during_execution.as_ref());
    let affinity_ok =
        required.is_none_or(|required| required.node_selector_terms.iter().any(|t| term_matches(node, t)));
    selector_ok && affinity_ok
}

/// Whether a toleration tolerates a taint.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref().filter(|e| !e.is_empty())
        && effect != taint.effect
    {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    let operator = toleration.operator.as_deref().unwrap_or("Equal");
    if key.is_empty() {
        return operator == "Exists";
    }
    if key != taint.key {
        return false;
    }
    match operator {
        "Exists" => true,
        _ => toleration.value.as_deref().unwrap_or_default() == taint.value.as_deref().unwrap_or_default(),
    }
}

fn tolerations(pod: &Pod) -> Vec<Toleration> {
    pod.spec.as_ref().and_then(|s| s.tolerations.clone()).unwrap_or_default()
}

fn untolerated_taint<'a>(pod: &Pod, node: &'a Node, effects: &[&str]) -> Option<&'a Taint> {
    let tolerations = tolerations(pod);
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .into_iter()
        .flatten()
        .filter(|t| effects.contains(&t.effect.as_str()))
        .find(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
}

/// Resource requests of a pod (milli-units): the larger of its containers (plus sidecars) and
/// its biggest regular init container, plus overhead.
pub fn pod_requests(pod: &Pod) -> BTreeMap<String, i128> {
    let Some(spec) = pod.spec.as_ref() else { return BTreeMap::new() };
    let requests_of = |container: &Container| -> BTreeMap<String, i128> {
        container
            .resources
            .as_ref()
            .and_then(|r| r.requests.clone())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, q)| Some((name, Quantity::parse(&q.0).ok()?.millis())))
            .collect()
    };
    let add = |total: &mut BTreeMap<String, i128>, more: BTreeMap<String, i128>| {
        for (name, value) in more {
            *total.entry(name).or_default() += value;
        }
    };
    let mut total = BTreeMap::new();
    for container in &spec.containers {
        add(&mut total, requests_of(container));
    }
    for init in spec.init_containers.iter().flatten() {
        if init.restart_policy.as_deref() == Some("Always") {
            add(&mut total, requests_of(init));
        }
    }
    for init in
        spec.init_containers.iter().flatten().filter(|c| c.restart_policy.as_deref() != Some("Always"))
    {
        for (name, value) in requests_of(init) {
            let entry = total.entry(name).or_default();
            *entry = (*entry).max(value);
        }
    }
    for (name, q) in spec.overhead.clone().unwrap_or_default() {
        if let Ok(q) = Quantity::parse(&q.0) {
            *total.entry(name).or_default() += q.millis();
        }
    }
    total
}

fn allocatable(node: &Node) -> BTreeMap<String, i128> {
    node.status
        .as_ref()
        .and_then(|s| s.allocatable.clone())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(name, q)| Some((name, Quantity::parse(&q.0).ok()?.millis())))
        .collect()
}

fn node_name(node: &Node) -> &str {
    node.metadata.name.as_deref().unwrap_or_default()
}

fn pod_node(pod: &Pod) -> &str {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or_default()
}

fn is_terminal(pod: &Pod) -> bool {
    matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed"))
}

/// A node's score; lower is better (compared field by field).
type Score = (i64, i64, i64, i64, i64);

/// The cluster as the scheduler sees it: nodes and the pods assigned to them.
pub struct Snapshot {
    nodes: Vec<Node>,
    node_index: HashMap<String, usize>,
    assigned: Vec<Pod>,
    by_node: HashMap<String, Vec<usize>>,
}

impl Snapshot {
    /// A snapshot of `nodes` and every pod (unassigned and finished pods are ignored).
    pub fn new(nodes: Vec<Node>, pods: impl IntoIterator<Item = Pod>) -> Self {
        let node_index = nodes.iter().enumerate().map(|(i, n)| (node_name(n).to_string(), i)).collect();
        let mut snapshot = Self { nodes, node_index, assigned: Vec::new(), by_node: HashMap::new() };
        for pod in pods {
            if !pod_node(&pod).is_empty() && !is_terminal(&pod) {
                snapshot.add(pod);
            }
        }
        snapshot
    }

    fn add(&mut self, pod: Pod) {
        self.by_node.entry(pod_node(&pod).to_string()).or_default().push(self.assigned.len());
        self.assigned.push(pod);
    }

    /// Counts `pod` as placed on `node` (before the API shows the binding).
    pub fn assume(&mut self, mut pod: Pod, node: &str) {
        pod.spec.get_or_insert_with(Default::default).node_name = Some(node.to_string());
        self.add(pod);
    }

    /// The pods on a node.
    fn pods_on(&self, node: &str) -> Vec<&Pod> {
        self.by_node.get(node).into_iter().flatten().map(|&i| &self.assigned[i]).collect()
    }

    fn node_by_name(&self, name: &str) -> Option<&Node> {
        self.node_index.get(name).map(|&i| &self.nodes[i])
    }

    fn topology_value(&self, node_name: &str, key: &str) -> Option<String> {
        self.node_by_name(node_name).and_then(|n| n.metadata.labels.as_ref()?.get(key).cloned())
    }

    fn filter(&self, pod: &Pod, node: &Node) -> Result<(), Rejection> {
        let name = node_name(node);
        if node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false) {
            let cordon = Taint {
                key: "node.kubernetes.io/unschedulable".into(),
                effect: "NoSchedule".into(),
                ..Default::default()
            };
            if !tolerations(pod).iter().any(|t| tolerates(t, &cordon)) {
                return Err(Rejection::unresolvable("node(s) were unschedulable"));
            }
        }
        if untolerated_taint(pod, node, &["NoSchedule", "NoExecute"]).is_some() {
            return Err(Rejection::unresolvable("node(s) had untolerated taint(s)"));
        }
        if !node_affinity_matches(pod, node) {
            return Err(Rejection::unresolvable("node(s) didn't match Pod's node affinity/selector"));
        }
        let on_node = self.pods_on(name);
        if host_ports_conflict(pod, &on_node) {
            return Err(Rejection::resolvable(vec![
                "node(s) didn't have free ports for the requested pod ports".into(),
            ]));
        }
        let mut insufficient = Vec::new();
        // More than the node has at all cannot be helped by preempting anything.
        let mut beyond_capacity = false;
        let capacity = allocatable(node);
        let pod_count = capacity.get("pods").copied().unwrap_or(i128::MAX);
        if (on_node.len() as i128 + 1) * 1000 > pod_count {
            insufficient.push("Too many pods".to_string());
        }
        let mut used: BTreeMap<String, i128> = BTreeMap::new();
        for other in &on_node {
            for (resource, value) in pod_requests(other) {
                *used.entry(resource).or_default() += value;
            }
        }
        for (resource, wanted) in pod_requests(pod) {
            if wanted <= 0 {
                continue;
            }
            let free =
                capacity.get(&resource).copied().unwrap_or(0) - used.get(&resource).copied().unwrap_or(0);
            if wanted > free {
                insufficient.push(format!("Insufficient {resource}"));
                beyond_capacity |= wanted > capacity.get(&resource).copied().unwrap_or(0);
            }
        }
        if !insufficient.is_empty() {
            return Err(Rejection { reasons: insufficient, resolvable: !beyond_capacity });
        }
        self.spread_filter(pod, node)?;
        self.affinity_filter(pod, node)
    }

    fn spread_filter(&self, pod: &Pod, node: &Node) -> Result<(), Rejection> {
        let constraints: Vec<&TopologySpreadConstraint> = pod
            .spec
            .as_ref()
            .and_then(|s| s.topology_spread_constraints.as_ref())
            .into_iter()
            .flatten()
            .filter(|c| c.when_unsatisfiable == "DoNotSchedule")
            .collect();
        let node_labels = labels_of(&node.metadata.labels);
        for constraint in constraints {
            let Some(domain) = node_labels.get(&constraint.topology_key) else {
                return Err(Rejection::unresolvable(
                    "node(s) didn't match pod topology spread constraints (missing required label)",
                ));
            };
            let selector = spread_selector(pod, constraint);
            let counts = self.spread_counts(pod, constraint, selector.as_ref());
            let domains = counts.len() as i32;
            let min_count = if constraint.min_domains.is_some_and(|m| domains < m) {
                0
            } else {
                counts.values().copied().min().unwrap_or(0)
            };
            let self_match = i32::from(selector_matches(selector.as_ref(), &labels_of(&pod.metadata.labels)));
            let skew = counts.get(domain).copied().unwrap_or(0) + self_match - min_count;
            if skew > constraint.max_skew {
                return Err(Rejection::resolvable(vec![
                    "node(s) didn't match pod topology spread constraints".into(),
                ]));
            }
        }
        Ok(())
    }

    /// Matching pods per topology domain, over the nodes the pod could go to by affinity (and
    /// taints when `nodeTaintsPolicy: Honor`).
    fn spread_counts(
        &self,
        pod: &Pod,
        constraint: &TopologySpreadConstraint,
        selector: Option<&LabelSelector>,
    ) -> BTreeMap<String, i32> {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let mut counts = BTreeMap::new();
        for node in &self.nodes {
            let honor_affinity = constraint.node_affinity_policy.as_deref() != Some("Ignore");
            let honor_taints = constraint.node_taints_policy.as_deref() == Some("Honor");
            if honor_affinity && !node_affinity_matches(pod, node) {
                continue;
            }
            if honor_taints && untolerated_taint(pod, node, &["NoSchedule", "NoExecute"]).is_some() {
                continue;
            }
            let Some(domain) = node.metadata.labels.as_ref().and_then(|l| l.get(&constraint.topology_key))
            else {
                continue;
            };
            let matching = self
                .pods_on(node_name(node))
                .into_iter()
                .filter(|p| p.metadata.deletion_timestamp.is_none())
                .filter(|p| p.metadata.namespace.as_deref().unwrap_or_default() == namespace)
                .filter(|p| selector_matches(selector, &labels_of(&p.metadata.labels)))
                .count() as i32;
            *counts.entry(domain.clone()).or_insert(0) += matching;
        }
        counts
    }

    fn term_namespaces(owner: &Pod, term: &PodAffinityTerm) -> Option<Vec<String>> {
        // An empty namespaceSelector means every namespace.
        if term.namespace_selector.as_ref().is_some_and(|s| {
            s.match_labels.as_ref().is_none_or(|m| m.is_empty())
                && s.match_expressions.as_ref().is_none_or(|e| e.is_empty())
        }) {
            return None;
        }
        let mut namespaces = term.namespaces.clone().unwrap_or_default();
        if namespaces.is_empty() {
            namespaces.push(owner.metadata.namespace.clone().unwrap_or_default());
        }
        Some(namespaces)
    }

    fn term_selects(owner: &Pod, term: &PodAffinityTerm, candidate: &Pod) -> bool {
        let namespace = candidate.metadata.namespace.clone().unwrap_or_default();
        let in_namespace = Self::term_namespaces(owner, term).is_none_or(|n| n.contains(&namespace));
        let mut selector = term.label_selector.clone();
        if let (Some(selector), Some(keys)) = (selector.as_mut(), term.match_label_keys.as_ref()) {
            let owner_labels = labels_of(&owner.metadata.labels);
            let expressions = selector.match_expressions.get_or_insert_with(Vec::new);
            for key in keys {
                if let Some(value) = owner_labels.get(key) {
                    expressions.push(LabelSelectorRequirement {
                        key: key.clone(),
                        operator: "In".into(),
                        values: Some(vec![value.clone()]),
                    });
                }
            }
        }
        in_namespace && selector_matches(selector.as_ref(), &labels_of(&candidate.metadata.labels))
    }

    fn affinity_filter(&self, pod: &Pod, node: &Node) -> Result<(), Rejection> {
        let node_labels = labels_of(&node.metadata.labels);
        let affinity = pod.spec.as_ref().and_then(|s| s.affinity.as_ref());
        let required_affinity = affinity
            .and_then(|a| a.pod_affinity.as_ref())
            .and_then(|a| a.required_during_scheduling_ignored_during_execution.clone())
            .unwrap_or_default();
        for term in &required_affinity {
            let Some(domain) = node_labels.get(&term.topology_key) else {
                return Err(Rejection::unresolvable("node(s) didn't match pod affinity rules"));
            };
            let matching: Vec<&Pod> =
                self.assigned.iter().filter(|other| Self::term_selects(pod, term, other)).collect();
            let satisfied = matching.iter().any(|other| {
                self.topology_value(pod_node(other), &term.topology_key).as_ref() == Some(domain)
            });
            // The first pod of a group that selects itself may go anywhere.
            let first_of_group = matching.is_empty() && Self::term_selects(pod, term, pod);
            if !satisfied && !first_of_group {
                return Err(Rejection::unresolvable("node(s) didn't match pod affinity rules"));
            }
        }
        let required_anti = affinity
            .and_then(|a| a.pod_anti_affinity.as_ref())
            .and_then(|a| a.required_during_scheduling_ignored_during_execution.clone())
            .unwrap_or_default();
        for term in &required_anti {
            let Some(domain) = node_labels.get(&term.topology_key) else { continue };
            let conflict = self.assigned.iter().any(|other| {
                Self::term_selects(pod, term, other)
                    && self.topology_value(pod_node(other), &term.topology_key).as_ref() == Some(domain)
            });
            if conflict {
                return Err(Rejection::resolvable(vec![
                    "node(s) didn't match pod anti-affinity rules".into(),
                ]));
            }
        }
        for other in &self.assigned {
            let terms = other
                .spec
                .as_ref()
                .and_then(|s| s.affinity.as_ref())
                .and_then(|a| a.pod_anti_affinity.as_ref())
                .and_then(|a| a.required_during_scheduling_ignored_during_execution.clone())
                .unwrap_or_default();
            for term in &terms {
                let Some(domain) = node_labels.get(&term.topology_key) else { continue };
                if Self::term_selects(other, term, pod)
                    && self.topology_value(pod_node(other), &term.topology_key).as_ref() == Some(domain)
                {
                    return Err(Rejection::resolvable(vec![
                        "node(s) didn't satisfy existing pods anti-affinity rules".into(),
                    ]));
                }
            }
        }
        Ok(())
    }

    /// Lower is better: preferred affinities first, then spreading, then the least requested.
    fn score(&self, pod: &Pod, node: &Node) -> Score {
        let name = node_name(node);
        let spec = pod.spec.as_ref();
        let affinity = spec.and_then(|s| s.affinity.as_ref());
        let node_pref: i64 = affinity
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|a| a.preferred_during_scheduling_ignored_during_execution.as_ref())
            .into_iter()
            .flatten()
            .filter(|p| term_matches(node, &p.preference))
            .map(|p| i64::from(p.weight))
            .sum();
        let node_labels = labels_of(&node.metadata.labels);
        let mut pod_pref: i64 = 0;
        let weighted = |terms: Option<&Vec<k8s_openapi::api::core::v1::WeightedPodAffinityTerm>>,
                        sign: i64| {
            let mut total = 0;
            for weighted in terms.into_iter().flatten() {
                let term = &weighted.pod_affinity_term;
                let Some(domain) = node_labels.get(&term.topology_key) else { continue };
                let count = self
                    .assigned
                    .iter()
                    .filter(|other| {
                        Self::term_selects(pod, term, other)
                            && self.topology_value(pod_node(other), &term.topology_key).as_ref()
                                == Some(domain)
                    })
                    .count() as i64;
                total += sign * i64::from(weighted.weight) * count;
            }
            total
        };
        pod_pref += weighted(
            affinity
                .and_then(|a| a.pod_affinity.as_ref())
                .and_then(|a| a.preferred_during_scheduling_ignored_during_execution.as_ref()),
            1,
        );
        pod_pref += weighted(
            affinity
                .and_then(|a| a.pod_anti_affinity.as_ref())
                .and_then(|a| a.preferred_during_scheduling_ignored_during_execution.as_ref()),
            -1,
        );
        // Spread pods of the same owner (the default topology spread) and honour soft constraints.
        let owner = pod
            .metadata
            .owner_references
            .as_ref()
            .and_then(|refs| refs.iter().find(|r| r.controller == Some(true)))
            .map(|r| r.uid.clone());
        let on_node = self.pods_on(name);
        let siblings = owner.as_ref().map_or(0, |uid| {
            on_node
                .iter()
                .filter(|p| p.metadata.owner_references.iter().flatten().any(|r| &r.uid == uid))
                .count() as i64
        });
        let mut soft_skew = 0;
        for constraint in spec
            .and_then(|s| s.topology_spread_constraints.as_ref())
            .into_iter()
            .flatten()
            .filter(|c| c.when_unsatisfiable == "ScheduleAnyway")
        {
            let selector = spread_selector(pod, constraint);
            let counts = self.spread_counts(pod, constraint, selector.as_ref());
            if let Some(domain) = node_labels.get(&constraint.topology_key) {
                soft_skew += i64::from(counts.get(domain).copied().unwrap_or(0));
            }
        }
        let prefer_no_schedule = untolerated_taint(pod, node, &["PreferNoSchedule"]).is_some() as i64;
        let capacity = allocatable(node);
        let mut used: BTreeMap<String, i128> = BTreeMap::new();
        for other in on_node.iter().copied().chain(std::iter::once(pod)) {
            let mut requests = pod_requests(other);
            requests.entry("cpu".into()).or_insert(100);
            requests.entry("memory".into()).or_insert(200 * 1024 * 1024 * 1000);
            for (resource, value) in requests {
                *used.entry(resource).or_default() += value;
            }
        }
        let fraction = |resource: &str| {
            let total = capacity.get(resource).copied().unwrap_or(0);
            if total <= 0 { 1000 } else { (used.get(resource).copied().unwrap_or(0) * 1000 / total) as i64 }
        };
        let requested = fraction("cpu") + fraction("memory");
        (-(node_pref * 1000 + pod_pref), prefer_no_schedule, siblings + soft_skew, requested, 0)
    }

    /// Chooses a node for `pod`, or says why none fits.
    pub fn place(&self, pod: &Pod) -> Placement {
        if self.nodes.is_empty() {
            return Placement::Unschedulable("no nodes available to schedule pods".into());
        }
        let mut rejections: Vec<Rejection> = Vec::new();
        let mut best: Option<(Score, &str)> = None;
        for node in &self.nodes {
            match self.filter(pod, node) {
                Ok(()) => {
                    let score = self.score(pod, node);
                    let name = node_name(node);
                    if best.as_ref().is_none_or(|(s, n)| (score, name) < (*s, *n)) {
                        best = Some((score, name));
                    }
                }
                Err(rejection) => rejections.push(rejection),
            }
        }
        if let Some((_, name)) = best {
            return Placement::Node(name.to_string());
        }
        Placement::Unschedulable(fit_error(self.nodes.len(), &rejections))
    }
}

fn spread_selector(pod: &Pod, constraint: &TopologySpreadConstraint) -> Option<LabelSelector> {
    let mut selector = constraint.label_selector.clone()?;
    let labels = labels_of(&pod.metadata.labels);
    for key in constraint.match_label_keys.iter().flatten() {
        if let Some(value) = labels.get(key) {
            selector.match_expressions.get_or_insert_with(Vec::new).push(LabelSelectorRequirement {
                key: key.clone(),
                operator: "In".into(),
                values: Some(vec![value.clone()]),
            });
        }
    }
    Some(selector)
}

/// Whether a host port `pod` asks for (protocol, address, port) is taken by one of `on_node`.
pub(crate) fn host_ports_conflict(pod: &Pod, on_node: &[&Pod]) -> bool {
    let ports = |pod: &Pod| -> Vec<(String, String, i32)> {
        pod.spec
            .as_ref()
            .map(|s| s.containers.iter().chain(s.init_containers.iter().flatten()).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .flat_map(|c| c.ports.clone().unwrap_or_default())
            .filter_map(|p| {
                let host_port = p.host_port.filter(|port| *port > 0)?;
                Some((
                    p.protocol.unwrap_or_else(|| "TCP".into()),
                    p.host_ip.unwrap_or_else(|| "0.0.0.0".into()),
                    host_port,
                ))
            })
            .collect()
    };
    let wanted = ports(pod);
    if wanted.is_empty() {
        return false;
    }
    on_node.iter().flat_map(|p| ports(p)).any(|(protocol, ip, port)| {
        wanted.iter().any(|(w_protocol, w_ip, w_port)| {
            *w_port == port
                && *w_protocol == protocol
                && (ip == "0.0.0.0" || w_ip == "0.0.0.0" || *w_ip == ip)
        })
    })
}

/// kube-scheduler's FitError message: reasons counted over nodes, sorted, then what preemption
/// found.
fn fit_error(node_count: usize, rejections: &[Rejection]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for rejection in rejections {
        for reason in &rejection.reasons {
            *counts.entry(reason.as_str()).or_default() += 1;
        }
    }
    let mut reasons: Vec<String> = counts.iter().map(|(reason, count)| format!("{count} {reason}")).collect();
    reasons.sort();
    let helpless = rejections.iter().filter(|r| !r.resolvable).count();
    let no_victims = rejections.len() - helpless;
    let mut preemption = Vec::new();
    if no_victims > 0 {
        preemption.push(format!("{no_victims} No preemption victims found for incoming pod"));
    }
    if helpless > 0 {
        preemption.push(format!("{helpless} Preemption is not helpful for scheduling"));
    }
    preemption.sort();
    format!(
        "0/{node_count} nodes are available: {}. no new claims to deallocate, preemption: 0/{node_count} nodes are available: {}.",
        reasons.join(", "),
        preemption.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{
        api::core::v1::{
            Affinity, ContainerPort, NodeAffinity, NodeSelector, NodeSpec, NodeStatus, PodAntiAffinity,
            PodSpec, ResourceRequirements,
        },
        apimachinery::pkg::{api::resource::Quantity as K8sQuantity, apis::meta::v1::ObjectMeta},
    };
    use serde_json::json;

    use super::*;

    fn node(name: &str, zone: &str, cpu: &str) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(BTreeMap::from([
                    ("kubernetes.io/hostname".to_string(), name.to_string()),
                    ("topology.kubernetes.io/zone".to_string(), zone.to_string()),
                ])),
                ..Default::default()
            },
            spec: Some(NodeSpec::default()),
            status: Some(NodeStatus {
                allocatable: Some(BTreeMap::from([
                    ("cpu".to_string(), K8sQuantity(cpu.into())),
                    ("memory".to_string(), K8sQuantity("8Gi".into())),
                    ("pods".to_string(), K8sQuantity("110".into())),
                ])),
                ..Default::default()
            }),
        }
    }

    fn pod(name: &str, labels: &[(&str, &str)], cpu: Option<&str>) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                labels: Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "c".into(),
                    resources: cpu.map(|cpu| ResourceRequirements {
                        requests: Some(BTreeMap::from([("cpu".to_string(), K8sQuantity(cpu.into()))])),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: None,
        }
    }

    fn on(mut pod: Pod, node: &str) -> Pod {
        pod.spec.as_mut().unwrap().node_name = Some(node.into());
        pod
    }

    fn place(nodes: &[Node], pods: &[Pod], pod: &Pod) -> Placement {
        Snapshot::new(nodes.to_vec(), pods.to_vec()).place(pod)
    }

    #[test]
    fn node_selector_and_required_affinity_filter_nodes() {
        let nodes = [node("a", "z1", "4"), node("b", "z2", "4")];
        let mut selected = pod("p", &[], None);
        selected.spec.as_mut().unwrap().node_selector =
            Some(BTreeMap::from([("topology.kubernetes.io/zone".to_string(), "z2".to_string())]));
        assert_eq!(place(&nodes, &[], &selected), Placement::Node("b".into()));

        let mut nowhere = pod("p", &[], None);
        nowhere.spec.as_mut().unwrap().affinity = Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_expressions: Some(vec![NodeSelectorRequirement {
                            key: "disk".into(),
                            operator: "In".into(),
                            values: Some(vec!["ssd".into()]),
                        }]),
                        ..Default::default()
                    }],
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        assert_eq!(
            place(&nodes, &[], &nowhere),
            Placement::Unschedulable(
                "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/2 nodes \
                 are available: 2 Preemption is not helpful for scheduling."
                    .into()
            )
        );
    }

    #[test]
    fn taints_need_tolerations() {
        let mut tainted = node("a", "z1", "4");
        tainted.spec.as_mut().unwrap().taints = Some(vec![Taint {
            key: "dedicated".into(),
            value: Some("db".into()),
            effect: "NoSchedule".into(),
            ..Default::default()
        }]);
        let nodes = [tainted];
        let plain = pod("p", &[], None);
        assert_eq!(
            place(&nodes, &[], &plain),
            Placement::Unschedulable(
                "0/1 nodes are available: 1 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/1 nodes are \
                 available: 1 Preemption is not helpful for scheduling."
                    .into()
            )
        );
        let mut tolerant = plain.clone();
        tolerant.spec.as_mut().unwrap().tolerations = Some(vec![Toleration {
            key: Some("dedicated".into()),
            operator: Some("Equal".into()),
            value: Some("db".into()),
            effect: Some("NoSchedule".into()),
            ..Default::default()
        }]);
        assert_eq!(place(&nodes, &[], &tolerant), Placement::Node("a".into()));
    }

    #[test]
    fn requests_must_fit_allocatable() {
        let nodes = [node("a", "z1", "2"), node("b", "z1", "2")];
        let running = [on(pod("x", &[], Some("1500m")), "a")];
        assert_eq!(place(&nodes, &running, &pod("p", &[], Some("1"))), Placement::Node("b".into()));
        let busy = [on(pod("x", &[], Some("1500m")), "a"), on(pod("y", &[], Some("1500m")), "b")];
        assert_eq!(
            place(&nodes, &busy, &pod("p", &[], Some("1"))),
            Placement::Unschedulable(
                "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes \
                 are available: 2 No preemption victims found for incoming pod."
                    .into()
            )
        );
        assert_eq!(
            place(&nodes, &[], &pod("p", &[], Some("3"))),
            Placement::Unschedulable(
                "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes \
                 are available: 2 Preemption is not helpful for scheduling."
                    .into()
            ),
            "more than a node has at all"
        );
    }

    #[test]
    fn anti_affinity_keeps_replicas_apart_by_hostname_and_zone() {
        let nodes = [node("a", "z1", "4"), node("b", "z1", "4"), node("c", "z2", "4")];
        let anti = |key: &str| {
            let mut p = pod("new", &[("app", "web")], None);
            p.spec.as_mut().unwrap().affinity = Some(Affinity {
                pod_anti_affinity: Some(PodAntiAffinity {
                    required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                        label_selector: Some(LabelSelector {
                            match_labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
                            ..Default::default()
                        }),
                        topology_key: key.into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
                ..Default::default()
            });
            p
        };
        let existing = [on(pod("w1", &[("app", "web")], None), "a")];
        assert_eq!(place(&nodes, &existing, &anti("kubernetes.io/hostname")), Placement::Node("b".into()));
        assert_eq!(
            place(&nodes, &existing, &anti("topology.kubernetes.io/zone")),
            Placement::Node("c".into())
        );
        let full = [on(pod("w1", &[("app", "web")], None), "a"), on(pod("w2", &[("app", "web")], None), "c")];
        let Placement::Unschedulable(message) = place(&nodes, &full, &anti("topology.kubernetes.io/zone"))
        else {
            panic!("no zone is free")
        };
        assert!(
            message.starts_with("0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."),
            "{message}"
        );
    }

    #[test]
    fn required_affinity_allows_the_first_pod_of_a_group() {
        let nodes = [node("a", "z1", "4"), node("b", "z2", "4")];
        let mut with_affinity: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "default", "labels": {"app": "cache"}},
            "spec": {"containers": [{"name": "c"}], "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "topology.kubernetes.io/zone"}
            ]}}}
        }))
        .unwrap();
        assert!(matches!(place(&nodes, &[], &with_affinity), Placement::Node(_)), "first of its group");
        let existing = [on(pod("c1", &[("app", "cache")], None), "b")];
        assert_eq!(place(&nodes, &existing, &with_affinity), Placement::Node("b".into()));
        with_affinity.metadata.labels = None;
        assert!(matches!(place(&nodes, &[], &with_affinity), Placement::Unschedulable(_)), "nothing to join");
    }

    #[test]
    fn hard_topology_spread_limits_skew() {
        let nodes = [node("a", "z1", "4"), node("b", "z2", "4")];
        let spread: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}},
            "spec": {
                "containers": [{"name": "c"}],
                "nodeSelector": {"topology.kubernetes.io/zone": "z1"},
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}},
                    "nodeAffinityPolicy": "Ignore"}]
            }
        }))
        .unwrap();
        let existing = [on(pod("w1", &[("app", "web")], None), "a")];
        let Placement::Unschedulable(message) = place(&nodes, &existing, &spread) else {
            panic!("skew would be 2")
        };
        assert!(message.contains("1 node(s) didn't match pod topology spread constraints"), "{message}");
        assert!(message.contains("1 node(s) didn't match Pod's node affinity/selector"), "{message}");
        assert!(matches!(place(&nodes, &[], &spread), Placement::Node(_)));
    }

    #[test]
    fn host_ports_and_pod_counts_and_cordons() {
        let mut full = node("a", "z1", "4");
        full.status
            .as_mut()
            .unwrap()
            .allocatable
            .as_mut()
            .unwrap()
            .insert("pods".into(), K8sQuantity("1".into()));
        let mut cordoned = node("b", "z1", "4");
        cordoned.spec.as_mut().unwrap().unschedulable = Some(true);
        let existing = [on(pod("x", &[], None), "a")];
        let Placement::Unschedulable(message) = place(&[full, cordoned], &existing, &pod("p", &[], None))
        else {
            panic!("nothing fits")
        };
        assert!(message.contains("1 Too many pods"), "{message}");
        assert!(message.contains("1 node(s) were unschedulable"), "{message}");

        let with_port = |name: &str| {
            let mut p = pod(name, &[], None);
            p.spec.as_mut().unwrap().containers[0].ports =
                Some(vec![ContainerPort { container_port: 80, host_port: Some(8080), ..Default::default() }]);
            p
        };
        let nodes = [node("a", "z1", "4"), node("b", "z1", "4")];
        assert_eq!(place(&nodes, &[on(with_port("x"), "a")], &with_port("p")), Placement::Node("b".into()));
    }

    #[test]
    fn replicas_of_one_owner_spread_over_nodes() {
        let nodes = [node("a", "z1", "4"), node("b", "z1", "4"), node("c", "z1", "4")];
        let owned = |name: &str| {
            let mut p = pod(name, &[], None);
            p.metadata.owner_references =
                Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                    uid: "owner".into(),
                    controller: Some(true),
                    ..Default::default()
                }]);
            p
        };
        let mut placed: Vec<Pod> = Vec::new();
        for i in 0..3 {
            let next = owned(&format!("p{i}"));
            let Placement::Node(node) = place(&nodes, &placed, &next) else { panic!("fits") };
            placed.push(on(next, &node));
        }
        let mut used: Vec<String> =
            placed.iter().map(|p| p.spec.as_ref().unwrap().node_name.clone().unwrap()).collect();
        used.sort();
        assert_eq!(used, ["a", "b", "c"]);
    }

    #[test]
    fn no_nodes_at_all() {
        assert_eq!(
            place(&[], &[], &pod("p", &[], None)),
            Placement::Unschedulable("no nodes available to schedule pods".into())
        );
    }
}
