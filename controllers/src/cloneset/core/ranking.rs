//! Which pods a scale-in deletes first (upstream `utils/pod_sorter.go` and `choosePodsToDelete`).
//!
//! Pods are ordered "cheapest to lose first": unscheduled before scheduled, Pending before
//! Unknown before Running, unavailable before available, not ready before ready, lower
//! `pod-deletion-cost` first, then pods that crowd a node or a topology domain (a rank, higher
//! first), then the most recently ready, the most restarted and the newest.
//!
//! Ranks are keyed by the pod's position in the slice the ranker was built from, and sorting is
//! stable (upstream's `sort.Sort` leaves ties in an unspecified order; any stable order is one of
//! the orders it may produce).

use std::{
    borrow::Borrow,
    cmp::Ordering,
    collections::{BTreeMap, BTreeSet, HashMap},
};

use k8s_openapi::{api::core::v1::Pod, jiff::Timestamp};
use kruise_crds::apps::v1beta1::CloneSet;

use crate::workload::pods::{
    creation_time, deletion_cost, is_pod_available, is_pod_ready, max_container_restarts, node_name, phase,
    pod_ready_time,
};

/// The node label holding the node's hostname; spreading over it needs no same-node tiebreak.
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";

/// Labels of the nodes the pods run on, by node name. Nodes missing from the map are treated as
/// unknown (upstream skips nodes it cannot get), and their pods get no spread rank.
pub type NodeLabels = BTreeMap<String, BTreeMap<String, String>>;

/// One topology the pods should stay spread over while scaling in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpreadConstraint {
    /// Node label naming the topology domain (`topology.kubernetes.io/zone`, ...).
    pub topology_key: String,
    /// Only these domains take part; empty means all.
    pub limited_values: Vec<String>,
}

/// The spread constraints scale-in honours: one per `topologySpreadConstraints` entry of the pod
/// template (upstream `GetPodSpreadConstraint`). Empty means "spread over nodes".
pub fn spread_constraints(cs: &CloneSet) -> Vec<SpreadConstraint> {
    cs.spec
        .template
        .spec
        .as_ref()
        .and_then(|spec| spec.topology_spread_constraints.as_ref())
        .into_iter()
        .flatten()
        .map(|c| SpreadConstraint { topology_key: c.topology_key.clone(), limited_values: Vec::new() })
        .collect()
}

fn phase_ordinal(pod: &Pod) -> u8 {
    match phase(pod) {
        "Unknown" => 1,
        "Running" => 2,
        // Pending and anything else (upstream's map lookup defaults to 0).
        _ => 0,
    }
}

/// Orders two optional times "zero first, then later first" (upstream `afterOrZero`).
fn after_or_zero(a: Option<Timestamp>, b: Option<Timestamp>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => b.cmp(&a),
    }
}

/// The deletion order of two pods (upstream `ActivePodsWithRanks.Less`): `Less` means `a` is
/// deleted first. `rank_*` are the pods' spread ranks (higher goes first); `available_*`, when
/// given, are their availability (unavailable goes first).
pub fn compare_for_deletion(
    a: &Pod,
    b: &Pod,
    ranks: (f64, f64),
    available: Option<(bool, bool)>,
) -> Ordering {
    // 1. Unassigned < assigned.
    let (node_a, node_b) = (node_name(a), node_name(b));
    if node_a != node_b && (node_a.is_empty() || node_b.is_empty()) {
        return if node_a.is_empty() { Ordering::Less } else { Ordering::Greater };
    }
    // 2. Pending < Unknown < Running.
    let by_phase = phase_ordinal(a).cmp(&phase_ordinal(b));
    if by_phase != Ordering::Equal {
        return by_phase;
    }
    // 3. Not available < available; not ready < ready.
    if let Some((available_a, available_b)) = available
        && available_a != available_b
    {
        return available_a.cmp(&available_b);
    }
    let (ready_a, ready_b) = (is_pod_ready(a), is_pod_ready(b));
    if ready_a != ready_b {
        return ready_a.cmp(&ready_b);
    }
    // 4. Lower pod-deletion-cost first.
    let by_cost = deletion_cost(a).cmp(&deletion_cost(b));
    if by_cost != Ordering::Equal {
        return by_cost;
    }
    // 5. Higher rank first.
    if ranks.0 != ranks.1 {
        return ranks.1.partial_cmp(&ranks.0).unwrap_or(Ordering::Equal);
    }
    // 6. Ready for less time first (no ready time first).
    if ready_a && ready_b {
        let by_ready_time = after_or_zero(pod_ready_time(a), pod_ready_time(b));
        if by_ready_time != Ordering::Equal {
            return by_ready_time;
        }
    }
    // 7. More restarts first.
    let by_restarts = max_container_restarts(b).cmp(&max_container_restarts(a));
    if by_restarts != Ordering::Equal {
        return by_restarts;
    }
    // 8. No creation time first, then newer first.
    after_or_zero(creation_time(a), creation_time(b))
}

/// Sorts positions into `pods` in deletion order (stable).
fn sort_for_deletion<P: Borrow<Pod>>(
    pods: &[P],
    positions: &mut [usize],
    ranks: &HashMap<usize, f64>,
    available: Option<&dyn Fn(&Pod) -> bool>,
) {
    let rank = |i: usize| ranks.get(&i).copied().unwrap_or(0.0);
    positions.sort_by(|&i, &j| {
        let (a, b) = (pods[i].borrow(), pods[j].borrow());
        let availability = available.map(|f| (f(a), f(b)));
        compare_for_deletion(a, b, (rank(i), rank(j)), availability)
    });
}

/// Ranks pods that share a node with others (upstream `NewSameNodeRanker`): on each node with
/// several pods, the pods in deletion order get ranks n-1, ..., 1 and the last one keeps 0, so
/// scale-in takes from crowded nodes first. Keys are positions in `pods`.
pub fn same_node_ranks<P: Borrow<Pod>>(pods: &[P]) -> HashMap<usize, f64> {
    let mut on_node: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (position, pod) in pods.iter().enumerate() {
        let node = node_name(pod.borrow());
        if !node.is_empty() {
            on_node.entry(node).or_default().push(position);
        }
    }
    let mut ranks = HashMap::new();
    for mut positions in on_node.into_values() {
        if positions.len() <= 1 {
            continue;
        }
        sort_for_deletion(pods, &mut positions, &HashMap::new(), None);
        positions.pop();
        let count = positions.len();
        for (i, position) in positions.into_iter().enumerate() {
            ranks.insert(position, (count - i) as f64);
        }
    }
    ranks
}

/// Ranks pods by how crowded their topology domains are (upstream `NewSpreadConstraintsRanker`):
/// for each constraint, the pods of each domain in deletion order get ranks n, ..., 1, weighted by
/// `ln(domains + 2)`, and the weighted ranks add up over constraints. Within a domain, pods that
/// share a node go first unless the topology is the hostname itself. Pods on nodes missing from
/// `nodes` get no rank.
pub fn spread_constraint_ranks<P: Borrow<Pod>>(
    pods: &[P],
    constraints: &[SpreadConstraint],
    nodes: &NodeLabels,
) -> HashMap<usize, f64> {
    // Known nodes in the order their first pod appears, with their pods.
    let mut node_order: Vec<&str> = Vec::new();
    let mut pods_on_node: HashMap<&str, Vec<usize>> = HashMap::new();
    for (position, pod) in pods.iter().enumerate() {
        let node = node_name(pod.borrow());
        if node.is_empty() || !nodes.contains_key(node) {
            continue;
        }
        let entry = pods_on_node.entry(node).or_default();
        if entry.is_empty() {
            node_order.push(node);
        }
        entry.push(position);
    }

    let same_node = same_node_ranks(pods);
    let no_ranks = HashMap::new();
    let mut ranks: HashMap<usize, f64> = HashMap::new();
    for constraint in constraints {
        let limited: Option<BTreeSet<&str>> = (!constraint.limited_values.is_empty())
            .then(|| constraint.limited_values.iter().map(String::as_str).collect());
        let mut domains: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for node in &node_order {
            let Some(value) = nodes.get(*node).and_then(|labels| labels.get(&constraint.topology_key)) else {
                continue;
            };
            if limited.as_ref().is_some_and(|allowed| !allowed.contains(value.as_str())) {
                continue;
            }
            domains.entry(value.as_str()).or_default().extend(pods_on_node.get(node).into_iter().flatten());
        }
        let tiebreak = if constraint.topology_key == LABEL_HOSTNAME { &no_ranks } else { &same_node };
        let weight = ((domains.len() + 2) as f64).ln();
        for mut positions in domains.into_values() {
            sort_for_deletion(pods, &mut positions, tiebreak, None);
            let count = positions.len();
            for (i, position) in positions.into_iter().enumerate() {
                *ranks.entry(position).or_insert(0.0) += (count - i) as f64 * weight;
            }
        }
    }
    ranks
}

/// Picks `count` of the pods at `candidates` (positions in `pods`) for scale-in deletion: all of
/// them when there are not more than `count`, otherwise the first `count` in deletion order, with
/// spread ranks from the CloneSet's topology constraints (or same-node ranks without them) and
/// availability per `minReadySeconds` at `now`.
pub fn choose_from<P: Borrow<Pod>>(
    cs: &CloneSet,
    pods: &[P],
    candidates: &[usize],
    count: usize,
    nodes: &NodeLabels,
    now: Timestamp,
) -> Vec<usize> {
    if count >= candidates.len() {
        if count > candidates.len() {
            tracing::info!(
                count,
                candidates = candidates.len(),
                "asked to delete more pods than there are candidates"
            );
        }
        return candidates.to_vec();
    }
    let group: Vec<&Pod> = candidates.iter().map(|&i| pods[i].borrow()).collect();
    let constraints = spread_constraints(cs);
    let ranks = if constraints.is_empty() {
        same_node_ranks(&group)
    } else {
        spread_constraint_ranks(&group, &constraints, nodes)
    };
    let min_ready_seconds = cs.spec.min_ready_seconds;
    let available = move |pod: &Pod| is_pod_available(pod, min_ready_seconds, now);
    let mut order: Vec<usize> = (0..group.len()).collect();
    sort_for_deletion(&group, &mut order, &ranks, Some(&available));
    order.into_iter().take(count).map(|i| candidates[i]).collect()
}

/// Chooses the pods a scale-in deletes (upstream `choosePodsToDelete`): `total` pods, of which
/// `old_revision` should come from `not_updated` (old revision first), the rest from `updated`.
/// Inputs and output are positions in `pods`.
#[allow(clippy::too_many_arguments)] // mirrors the upstream inputs one for one
pub fn choose_pods_to_delete<P: Borrow<Pod>>(
    cs: &CloneSet,
    pods: &[P],
    total: usize,
    old_revision: usize,
    not_updated: &[usize],
    updated: &[usize],
    nodes: &NodeLabels,
    now: Timestamp,
) -> Vec<usize> {
    if old_revision >= total {
        choose_from(cs, pods, not_updated, total, nodes, now)
    } else if old_revision > 0 {
        let mut chosen = choose_from(cs, pods, not_updated, old_revision, nodes, now);
        chosen.extend(choose_from(cs, pods, updated, total - old_revision, nodes, now));
        chosen
    } else {
        choose_from(cs, pods, updated, total, nodes, now)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data
    #![allow(clippy::type_complexity)] // table rows are tuples

    use k8s_openapi::{
        api::core::v1::{ContainerStatus, PodCondition, PodSpec, PodStatus, TopologySpreadConstraint},
        apimachinery::pkg::apis::meta::v1::Time,
    };
    use kruise_crds::common::well_known::POD_DELETION_COST;

    use super::*;

    const ZONE: &str = "failure-domain.beta.kubernetes.io/zone";

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap()
    }

    #[allow(clippy::too_many_arguments)]
    fn pod(
        name: &str,
        node: &str,
        phase: &str,
        ready: bool,
        restarts: i32,
        ready_since: Option<i64>,
        created: Option<i64>,
        cost: Option<&str>,
    ) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.into());
        pod.metadata.creation_timestamp = created.map(|s| Time(at(s)));
        if let Some(cost) = cost {
            pod.metadata.annotations = Some([(POD_DELETION_COST.to_string(), cost.to_string())].into());
        }
        pod.spec = Some(PodSpec { node_name: Some(node.into()), ..Default::default() });
        let mut status = PodStatus { phase: Some(phase.into()), ..Default::default() };
        if ready {
            status.conditions = Some(vec![PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: ready_since.map(|s| Time(at(s))),
                ..Default::default()
            }]);
            status.container_statuses =
                Some(vec![ContainerStatus { restart_count: restarts, ..Default::default() }]);
        }
        pod.status = Some(status);
        pod
    }

    /// upstream `TestSortingActivePods`: each rule of the deletion order on its own.
    #[test]
    fn deletion_order_rules() {
        let (now, then) = (1_000_000, 1_000_000 - 30 * 86_400);
        let unscheduled = pod("unscheduled", "", "Pending", false, 0, None, None, None);
        let scheduled_pending = pod("pending", "node", "Pending", false, 0, None, None, None);
        let unknown_phase = pod("unknown-phase", "node", "Unknown", false, 0, None, None, None);
        let running_not_ready = pod("not-ready", "node", "Running", false, 0, None, None, None);
        let ready_no_time =
            pod("ready-no-last-transition-time", "node", "Running", true, 0, None, None, None);
        let ready_now = pod("ready-now", "node", "Running", true, 0, Some(now), Some(now), None);
        let ready_then = pod("ready-then", "node", "Running", true, 0, Some(then), Some(then), None);
        let ready_high_restarts =
            pod("ready-high-restarts", "node", "Running", true, 9001, Some(now), Some(now), None);
        let ready_now_created_then =
            pod("ready-now-created-then", "node", "Running", true, 0, Some(now), Some(then), None);
        let low_cost =
            pod("low-deletion-cost", "node", "Running", true, 0, Some(now), Some(then), Some("10"));
        let high_cost =
            pod("high-deletion-cost", "node", "Running", true, 0, Some(now), Some(then), Some("100"));

        for p in
            [&unscheduled, &scheduled_pending, &unknown_phase, &running_not_ready, &ready_now, &ready_then]
        {
            assert_eq!(
                compare_for_deletion(p, p, (0.0, 0.0), None),
                Ordering::Equal,
                "{:?}",
                p.metadata.name
            );
        }
        // (rule, deleted first, deleted later)
        let cases: [(&str, &Pod, &Pod); 9] = [
            ("unassigned before assigned", &unscheduled, &scheduled_pending),
            ("pending before unknown", &scheduled_pending, &unknown_phase),
            ("unknown before running", &unknown_phase, &running_not_ready),
            ("not ready before ready", &running_not_ready, &ready_no_time),
            ("no ready time before a ready time", &ready_no_time, &ready_now),
            ("recently ready before long ready", &ready_now, &ready_then),
            ("more restarts first", &ready_high_restarts, &ready_now),
            ("newer before older", &ready_now, &ready_now_created_then),
            ("lower deletion cost first", &low_cost, &high_cost),
        ];
        for (rule, first, later) in cases {
            assert_eq!(compare_for_deletion(first, later, (0.0, 0.0), None), Ordering::Less, "{rule}");
            assert_eq!(compare_for_deletion(later, first, (0.0, 0.0), None), Ordering::Greater, "{rule}");
        }
        // Rank and availability.
        assert_eq!(
            compare_for_deletion(&ready_then, &ready_now, (2.0, 1.0), None),
            Ordering::Less,
            "higher rank first"
        );
        assert_eq!(
            compare_for_deletion(&ready_then, &ready_now, (0.0, 0.0), Some((false, true))),
            Ordering::Less,
            "unavailable first"
        );
        assert_eq!(
            compare_for_deletion(&low_cost, &ready_now, (0.0, 5.0), None),
            Ordering::Greater,
            "deletion cost outranks spread rank"
        );
    }

    fn on_node(uid: &str, node: &str) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.uid = Some(uid.into());
        pod.spec = Some(PodSpec { node_name: Some(node.into()), ..Default::default() });
        pod
    }

    /// upstream `TestSameNodeRanker`.
    #[test]
    fn same_node_ranks_crowded_nodes() {
        let nodes = ["a", "", "", "b", "a", "c", "b", "d", "d", "d", "a"];
        let pods: Vec<Pod> = nodes.iter().enumerate().map(|(i, n)| on_node(&i.to_string(), n)).collect();
        let ranks = same_node_ranks(&pods);
        let expected: HashMap<usize, f64> = [(0, 2.0), (4, 1.0), (3, 1.0), (7, 2.0), (8, 1.0)].into();
        assert_eq!(ranks, expected);
    }

    /// upstream `TestSpreadConstraintsRanker`: pods with a rank, sorted by rank (stable).
    #[test]
    fn spread_constraint_ranks_crowded_domains() {
        let mut nodes = NodeLabels::new();
        nodes.insert("a".into(), BTreeMap::new());
        for (node, zone) in [
            ("b", "z1"),
            ("c", "z1"),
            ("d", "z1"),
            ("e", "z2"),
            ("f", "z2"),
            ("g", "z2"),
            ("h", "z3"),
            ("i", "z3"),
        ] {
            nodes.insert(
                node.into(),
                [(LABEL_HOSTNAME.to_string(), node.to_string()), (ZONE.to_string(), zone.to_string())].into(),
            );
        }
        let mut pods = Vec::new();
        for (node, count) in [("a", 2), ("b", 2), ("c", 3), ("d", 5), ("e", 5), ("f", 3), ("i", 5)] {
            for i in 0..count {
                pods.push(on_node(&format!("{node}-{i}"), node));
            }
        }
        let zone = |limited: &[&str]| SpreadConstraint {
            topology_key: ZONE.into(),
            limited_values: limited.iter().map(|v| v.to_string()).collect(),
        };
        let host = SpreadConstraint { topology_key: LABEL_HOSTNAME.into(), limited_values: vec![] };
        let cases: [(&str, Vec<SpreadConstraint>, &str); 3] = [
            (
                "zone{no limit}",
                vec![zone(&[])],
                "d-0 d-1 c-0 e-0 d-2 e-1 b-0 e-2 c-1 f-0 i-0 d-3 e-3 i-1 b-1 f-1 i-2 c-2 e-4 i-3 d-4 f-2 i-4",
            ),
            (
                "zone{limited (z2, z3)}",
                vec![zone(&["z2", "z3"])],
                "e-0 e-1 e-2 f-0 i-0 e-3 i-1 f-1 i-2 e-4 i-3 f-2 i-4",
            ),
            (
                "zone{no limit}, host",
                vec![zone(&[]), host],
                "d-0 e-0 d-1 e-1 c-0 i-0 d-2 e-2 i-1 f-0 b-0 c-1 i-2 d-3 e-3 f-1 i-3 b-1 c-2 e-4 d-4 f-2 i-4",
            ),
        ];
        for (name, constraints, expected) in cases {
            let ranks = spread_constraint_ranks(&pods, &constraints, &nodes);
            let mut ranked: Vec<usize> =
                (0..pods.len()).filter(|i| ranks.get(i).is_some_and(|r| *r > 0.0)).collect();
            ranked.sort_by(|a, b| ranks[b].partial_cmp(&ranks[a]).unwrap());
            let got: Vec<&str> = ranked.iter().map(|&i| pods[i].metadata.uid.as_deref().unwrap()).collect();
            assert_eq!(got.join(" "), expected, "{name}");
        }
    }

    fn cloneset() -> CloneSet {
        CloneSet::new("web", Default::default())
    }

    #[test]
    fn choose_takes_old_revision_first_then_new() {
        let t = 1_000_000;
        // Positions 0..3 old, 3..6 new; pod 1 is not ready, pod 4 has a low deletion cost.
        let pods = vec![
            pod("old-0", "n1", "Running", true, 0, Some(t), Some(t), None),
            pod("old-1", "n2", "Running", false, 0, None, Some(t), None),
            pod("old-2", "n3", "Running", true, 0, Some(t), Some(t), None),
            pod("new-0", "n1", "Running", true, 0, Some(t), Some(t), None),
            pod("new-1", "n2", "Running", true, 0, Some(t), Some(t), Some("-5")),
            pod("new-2", "n3", "Running", true, 0, Some(t), Some(t), None),
        ];
        let (old, new) = ([0, 1, 2], [3, 4, 5]);
        let cs = cloneset();
        let nodes = NodeLabels::new();
        let now = at(t + 100);
        // (case, total, old revision, expected positions)
        let cases: [(&str, usize, usize, Vec<usize>); 5] = [
            ("all from old", 1, 1, vec![1]),
            ("old covers more than total", 1, 3, vec![1]),
            ("split", 2, 1, vec![1, 4]),
            ("none from old", 1, 0, vec![4]),
            ("more than a group holds", 4, 4, vec![0, 1, 2]),
        ];
        for (name, total, old_revision, expected) in cases {
            let got = choose_pods_to_delete(&cs, &pods, total, old_revision, &old, &new, &nodes, now);
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn choose_prefers_crowded_nodes_and_topology() {
        let t = 1_000_000;
        let mk = |name: &str, node: &str| pod(name, node, "Running", true, 0, Some(t), Some(t), None);
        let pods = vec![mk("p0", "n1"), mk("p1", "n2"), mk("p2", "n2"), mk("p3", "n3")];
        let all = [0, 1, 2, 3];
        let nodes: NodeLabels = [
            ("n1".to_string(), BTreeMap::from([(ZONE.to_string(), "z1".to_string())])),
            ("n2".to_string(), BTreeMap::from([(ZONE.to_string(), "z2".to_string())])),
            ("n3".to_string(), BTreeMap::from([(ZONE.to_string(), "z2".to_string())])),
        ]
        .into();
        let now = at(t + 100);
        // Without constraints: the node holding two pods gives one up.
        let plain = cloneset();
        assert_eq!(choose_from(&plain, &pods, &all, 1, &nodes, now), vec![1]);
        // With a zone constraint: zone z2 holds three pods, so one of them goes first.
        let mut zoned = cloneset();
        zoned.spec.template.spec = Some(PodSpec {
            topology_spread_constraints: Some(vec![TopologySpreadConstraint {
                topology_key: ZONE.into(),
                max_skew: 1,
                when_unsatisfiable: "DoNotSchedule".into(),
                ..Default::default()
            }]),
            ..Default::default()
        });
        let chosen = choose_from(&zoned, &pods, &all, 2, &nodes, now);
        assert!(chosen.iter().all(|p| [1, 2, 3].contains(p)), "{chosen:?}");
    }
}
