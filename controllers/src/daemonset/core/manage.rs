//! The manage loop (upstream `manage` and `podsShouldBeOnNode`): per node, create the missing
//! daemon pod, delete failed, pre-deleting, duplicate and misplaced ones, and with surge keep at
//! most one old and one new pod; then hold back creations while `partitionedScaling` and the
//! partition say so.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::core::v1::{Node, Pod},
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{DaemonSet, DaemonSetUpdateStrategyType},
    defaults::DEFAULT_DAEMONSET_BURST_REPLICAS,
    intstr::scaled_value,
};

use super::{
    nodes::{DaemonPredicates, target_node_name},
    pods::{available_after, by_creation, find_updated_pods_on_node, template_generation},
    update::max_surge,
};
use crate::workload::pods::{
    is_pod_ready, is_preparing_delete, is_ready_for, is_terminating, phase, revision_hash,
};

/// A DaemonSet's pods by the node they are for (pods whose node cannot be read are left out,
/// as upstream `getNodesToDaemonPods`).
pub fn group_by_node(pods: &[Pod]) -> BTreeMap<String, Vec<&Pod>> {
    let mut by_node: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
    for pod in pods {
        if let Some(node) = target_node_name(pod) {
            by_node.entry(node).or_default().push(pod);
        }
    }
    by_node
}

/// `burstReplicas` as a count: pods created or deleted in one round (upstream `getBurstReplicas`,
/// a percentage of `status.desiredNumberScheduled` rounded down).
pub fn burst_replicas(ds: &DaemonSet) -> usize {
    let desired = ds.status.as_ref().map_or(0, |s| s.desired_number_scheduled);
    let value = ds.spec.burst_replicas.clone().unwrap_or(
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(DEFAULT_DAEMONSET_BURST_REPLICAS),
    );
    usize::try_from(scaled_value(&value, desired, false).unwrap_or(0).max(0)).unwrap_or_default()
}

/// Whether more than one pod may run on a node (a surge is configured).
pub fn allows_surge(ds: &DaemonSet) -> bool {
    max_surge(ds, 1) > 0
}

/// Whether `scaleStrategy.partitionedScaling` holds creations back by the partition.
pub fn creates_progressively(ds: &DaemonSet) -> bool {
    ds.spec.scale_strategy.as_ref().is_some_and(|s| s.partitioned_scaling)
}

/// The nodes to create a pod on this round (upstream `GetNodesNeedingPods`): all of them (by
/// name) unless creation is progressive, then only as many as bring the new pods to
/// `desired - partition`.
pub fn nodes_needing_pods(
    new_pods: usize,
    desired: usize,
    partition: usize,
    progressive: bool,
    mut nodes: Vec<String>,
) -> Vec<String> {
    nodes.sort();
    if !progressive {
        return nodes;
    }
    let partition = partition.min(desired);
    let max_create = desired.saturating_sub(new_pods).saturating_sub(partition).min(nodes.len());
    nodes.truncate(max_create);
    nodes
}

/// What one node needs (upstream `podsShouldBeOnNode`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeNeeds {
    /// A pod must be created on it.
    pub create: bool,
    /// Pods to delete.
    pub delete: Vec<String>,
    /// Failed pods among `delete` (for the `FailedDaemonPod` event).
    pub failed: Vec<String>,
    /// Look again after this long (a failed pod in back-off, a surge pod becoming available).
    pub requeue_after: Option<Duration>,
}

fn earliest(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Decides one node. `failed_backoff` is asked before a failed pod is deleted: `Some(delay)`
/// means the node's failed pods are still in back-off.
#[allow(clippy::too_many_arguments)] // the inputs of upstream's per-node decision
pub fn pods_should_be_on_node(
    ds: &DaemonSet,
    (should_run, should_continue_running): (bool, bool),
    pods: &[&Pod],
    hash: &str,
    now: Timestamp,
    failed_backoff: &mut dyn FnMut() -> Option<Duration>,
) -> NodeNeeds {
    let mut needs = NodeNeeds::default();
    if should_run && pods.is_empty() {
        needs.create = true;
        return needs;
    }
    if !should_continue_running {
        needs.delete = pods.iter().filter(|p| !is_terminating(p)).map(|p| name_of(p)).collect();
        return needs;
    }
    let mut running: Vec<&Pod> = Vec::new();
    for pod in pods.iter().copied().filter(|p| !is_terminating(p)) {
        if phase(pod) == "Failed" {
            match failed_backoff() {
                Some(delay) => needs.requeue_after = earliest(needs.requeue_after, Some(delay)),
                None => {
                    needs.delete.push(name_of(pod));
                    needs.failed.push(name_of(pod));
                }
            }
        } else if is_preparing_delete(pod) {
            needs.delete.push(name_of(pod));
        } else {
            running.push(pod);
        }
    }
    running.sort_by(|a, b| by_creation(a, b));
    if !allows_surge(ds) {
        // Keep the oldest.
        needs.delete.extend(running.iter().skip(1).map(|p| name_of(p)));
        return needs;
    }
    if running.len() <= 1 {
        if running.is_empty() && should_run {
            needs.create = true;
        }
        return needs;
    }
    // Surging: keep the oldest new and the oldest old pod, and the old one only while the new one
    // is not yet available and the old one still ready.
    let (mut oldest_new, mut oldest_old): (Option<&Pod>, Option<&Pod>) = (None, None);
    for pod in running {
        let slot = if revision_hash(pod) == hash { &mut oldest_new } else { &mut oldest_old };
        if slot.is_none() {
            *slot = Some(pod);
        } else {
            needs.delete.push(name_of(pod));
        }
    }
    if let (Some(new_pod), Some(old_pod)) = (oldest_new, oldest_old) {
        let min_ready = ds.spec.min_ready_seconds;
        if !is_pod_ready(old_pod) || is_ready_for(new_pod, min_ready, now) {
            needs.delete.push(name_of(old_pod));
        } else if is_pod_ready(new_pod) && min_ready > 0 {
            needs.requeue_after =
                earliest(needs.requeue_after, Some(available_after(new_pod, min_ready, now)));
        }
    }
    needs
}

fn name_of(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

/// What the manage loop does this round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManagePlan {
    /// Nodes to create a pod on (before the burst limit).
    pub nodes_to_create: Vec<String>,
    /// Pods to delete (before the burst limit and the preDelete hook).
    pub pods_to_delete: Vec<String>,
    /// Failed pods deleted, with their node.
    pub failed_pods: Vec<(String, String)>,
    /// Look again after this long.
    pub requeue_after: Option<Duration>,
}

/// The manage loop over every node (upstream `manage`). `failed_backoff(node)` says whether the
/// node's failed pods are in back-off (and records an attempt otherwise).
pub fn plan_manage(
    ds: &DaemonSet,
    nodes: &[&Node],
    by_node: &BTreeMap<String, Vec<&Pod>>,
    hash: &str,
    now: Timestamp,
    failed_backoff: &mut dyn FnMut(&str) -> Option<Duration>,
) -> ManagePlan {
    let predicates = DaemonPredicates::new(ds);
    let generation = template_generation(ds);
    let mut plan = ManagePlan::default();
    let (mut desired, mut new_pods) = (0usize, 0usize);
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        let pods = by_node.get(&name).map(Vec::as_slice).unwrap_or_default();
        let verdict = predicates.should_run(node);
        let needs = pods_should_be_on_node(ds, verdict, pods, hash, now, &mut || failed_backoff(&name));
        if needs.create {
            plan.nodes_to_create.push(name.clone());
        }
        plan.failed_pods.extend(needs.failed.iter().map(|pod| (pod.clone(), name.clone())));
        plan.pods_to_delete.extend(needs.delete);
        plan.requeue_after = earliest(plan.requeue_after, needs.requeue_after);
        if verdict.0 {
            desired += 1;
        }
        if find_updated_pods_on_node(pods, hash, generation).is_some_and(|(new_pod, _)| new_pod.is_some()) {
            new_pods += 1;
        }
    }
    // Unbound pods for nodes that are gone: nothing else would ever remove them.
    let known: std::collections::HashSet<&str> =
        nodes.iter().filter_map(|n| n.metadata.name.as_deref()).collect();
    for (node, pods) in by_node {
        if known.contains(node.as_str()) {
            continue;
        }
        plan.pods_to_delete.extend(
            pods.iter()
                .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_none_or(str::is_empty))
                .map(|p| name_of(p)),
        );
    }
    if ds.spec.update_strategy.type_ == DaemonSetUpdateStrategyType::RollingUpdate
        && let Some(partition) =
            ds.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.partition.as_ref())
    {
        let status_desired = ds.status.as_ref().map_or(0, |s| s.desired_number_scheduled);
        match scaled_value(partition, status_desired, false) {
            Ok(partition) if partition != 0 => {
                plan.nodes_to_create = nodes_needing_pods(
                    new_pods,
                    desired,
                    usize::try_from(partition.max(0)).unwrap_or_default(),
                    creates_progressively(ds),
                    std::mem::take(&mut plan.nodes_to_create),
                );
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "invalid partition of a DaemonSet"),
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::{
        api::core::v1::{NodeSpec, Taint},
        apimachinery::pkg::{apis::meta::v1::Time, util::intstr::IntOrString},
        jiff::SignedDuration,
    };
    use kruise_crds::{
        apps::v1beta1::DaemonSetScaleStrategy,
        common::{LIFECYCLE_STATE_KEY, LifecycleState},
    };

    use super::*;
    use crate::daemonset::core::fixtures::{daemonset, node, now, pod, ready_pod, surge};

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// One `TestGetMaxCreateNum` case: (case, new pods, desired, partition, progressive, nodes
    /// needing pods, expected).
    type CreateCase = (&'static str, usize, usize, usize, bool, Vec<String>, Vec<String>);

    /// Upstream `TestGetMaxCreateNum`.
    #[test]
    fn partitioned_scaling_holds_back_creations() {
        let nodes = |range: std::ops::Range<usize>| range.map(|i| format!("node-{i}")).collect::<Vec<_>>();
        let cases: Vec<CreateCase> = vec![
            ("all pods are new", 10, 10, 0, false, vec![], vec![]),
            ("create step1: partition=10", 0, 10, 10, true, nodes(0..10), vec![]),
            ("create step2: partition=9", 0, 10, 9, true, nodes(0..10), names(&["node-0"])),
            ("create step3: partition=5", 1, 10, 5, true, nodes(1..10), nodes(1..5)),
            (
                "create step4: 2 new nodes, partition=5",
                5,
                12,
                5,
                true,
                nodes(5..12),
                names(&["node-10", "node-11"]),
            ),
            (
                "create step5: 3 nodes offline, partition=5",
                4,
                9,
                5,
                true,
                names(&["node-5", "node-6", "node-7", "node-9", "node-10"]),
                vec![],
            ),
            (
                "create step6: partition=0",
                4,
                9,
                0,
                true,
                names(&["node-5", "node-6", "node-7", "node-9", "node-10"]),
                names(&["node-10", "node-5", "node-6", "node-7", "node-9"]),
            ),
            ("create step7: 3 new nodes, partition=0", 9, 12, 0, true, nodes(12..15), nodes(12..15)),
            ("update step1: partition=10", 0, 10, 10, false, vec![], vec![]),
            (
                "update step3: an old pod deleted by the update",
                0,
                10,
                9,
                false,
                names(&["node-1"]),
                names(&["node-1"]),
            ),
            ("update step5: more deleted", 1, 10, 5, false, nodes(2..6), nodes(2..6)),
            (
                "update step6: 2 new nodes",
                5,
                12,
                5,
                false,
                names(&["node-11", "node-12"]),
                names(&["node-11", "node-12"]),
            ),
            (
                "update step7: partition=0, deleted pods",
                7,
                12,
                0,
                false,
                nodes(6..11),
                names(&["node-10", "node-6", "node-7", "node-8", "node-9"]),
            ),
            ("selector step1: desired changed", 0, 20, 20, false, vec![], vec![]),
            ("selector step2: partition=15", 0, 20, 15, true, nodes(11..21), nodes(11..16)),
            ("selector step3: partition=10", 5, 20, 10, true, nodes(16..21), nodes(16..21)),
            ("bad case 1: partition too large", 10, 10, 100, false, vec![], vec![]),
            ("bad case 2: partition too large on creation", 5, 10, 100, true, nodes(5..11), vec![]),
            (
                "bad case 3: an old pod deleted by hand",
                5,
                10,
                5,
                false,
                names(&["node-6"]),
                names(&["node-6"]),
            ),
            ("bad case 4: and its new pod created", 6, 10, 5, false, vec![], vec![]),
        ];
        for (case, new_pods, desired, partition, progressive, needing, expected) in cases {
            assert_eq!(
                nodes_needing_pods(new_pods, desired, partition, progressive, needing),
                expected,
                "{case}"
            );
        }
    }

    /// Upstream `TestCreatePodProgressively` and `Test_getBurstReplicas`.
    #[test]
    fn burst_and_progressive_creation_come_from_the_spec() {
        let mut ds = daemonset("ds");
        assert!(!creates_progressively(&ds));
        ds.spec.scale_strategy = Some(DaemonSetScaleStrategy { partitioned_scaling: false });
        assert!(!creates_progressively(&ds));
        ds.spec.scale_strategy = Some(DaemonSetScaleStrategy { partitioned_scaling: true });
        assert!(creates_progressively(&ds));

        assert_eq!(burst_replicas(&ds), 250);
        ds.spec.burst_replicas = Some(IntOrString::Int(10));
        assert_eq!(burst_replicas(&ds), 10);
        ds.spec.burst_replicas = Some(IntOrString::String("50%".into()));
        ds.status.get_or_insert_with(Default::default).desired_number_scheduled = 5;
        assert_eq!(burst_replicas(&ds), 2, "rounded down");
    }

    fn no_backoff() -> impl FnMut() -> Option<Duration> {
        || None
    }

    #[test]
    fn a_node_gets_one_pod_and_keeps_the_oldest() {
        let ds = daemonset("ds");
        let needs = pods_should_be_on_node(&ds, (true, true), &[], "h", now(), &mut no_backoff());
        assert!(needs.create);
        let needs = pods_should_be_on_node(&ds, (false, false), &[], "h", now(), &mut no_backoff());
        assert_eq!(needs, NodeNeeds::default());

        let mut older = pod("older", "n", "h");
        older.metadata.creation_timestamp = Some(Time(now() - SignedDuration::from_secs(60)));
        let mut newer = pod("newer", "n", "h");
        newer.metadata.creation_timestamp = Some(Time(now()));
        let needs =
            pods_should_be_on_node(&ds, (true, true), &[&newer, &older], "h", now(), &mut no_backoff());
        assert_eq!(needs.delete, names(&["newer"]));
        assert!(!needs.create);
    }

    #[test]
    fn pods_on_nodes_that_no_longer_qualify_are_deleted() {
        let ds = daemonset("ds");
        let (a, mut b) = (pod("a", "n", "h"), pod("b", "n", "h"));
        b.metadata.deletion_timestamp = Some(Time(now()));
        let needs = pods_should_be_on_node(&ds, (false, false), &[&a, &b], "h", now(), &mut no_backoff());
        assert_eq!(needs.delete, names(&["a"]), "terminating pods are left alone");
        // A NoSchedule taint keeps the running pod.
        let needs = pods_should_be_on_node(&ds, (false, true), &[&a], "h", now(), &mut no_backoff());
        assert!(needs.delete.is_empty() && !needs.create);
    }

    #[test]
    fn failed_pods_are_deleted_with_backoff_and_pre_deleting_ones_deleted() {
        let ds = daemonset("ds");
        let mut failed = pod("failed", "n", "h");
        failed.status.get_or_insert_with(Default::default).phase = Some("Failed".into());
        let needs = pods_should_be_on_node(&ds, (true, true), &[&failed], "h", now(), &mut no_backoff());
        assert_eq!((needs.delete.clone(), needs.failed.clone()), (names(&["failed"]), names(&["failed"])));
        let needs = pods_should_be_on_node(&ds, (true, true), &[&failed], "h", now(), &mut || {
            Some(Duration::from_secs(2))
        });
        assert!(needs.delete.is_empty());
        assert_eq!(needs.requeue_after, Some(Duration::from_secs(2)));

        let mut leaving = pod("leaving", "n", "h");
        leaving
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert(LIFECYCLE_STATE_KEY.into(), LifecycleState::PreparingDelete.as_str().into());
        let needs = pods_should_be_on_node(&ds, (true, true), &[&leaving], "h", now(), &mut no_backoff());
        assert_eq!(needs.delete, names(&["leaving"]));
    }

    #[test]
    fn surging_keeps_the_old_pod_until_the_new_one_is_available() {
        let mut ds = surge(daemonset("ds"), 1);
        ds.spec.min_ready_seconds = 30;
        let mut old = ready_pod("old", "n", "h1", now() - SignedDuration::from_secs(600));
        old.metadata.creation_timestamp = Some(Time(now() - SignedDuration::from_secs(600)));
        let mut new_pod = ready_pod("new", "n", "h2", now() - SignedDuration::from_secs(10));
        new_pod.metadata.creation_timestamp = Some(Time(now() - SignedDuration::from_secs(20)));
        let needs =
            pods_should_be_on_node(&ds, (true, true), &[&old, &new_pod], "h2", now(), &mut no_backoff());
        assert!(needs.delete.is_empty());
        assert_eq!(needs.requeue_after, Some(Duration::from_secs(20)));
        ds.spec.min_ready_seconds = 5;
        let needs =
            pods_should_be_on_node(&ds, (true, true), &[&old, &new_pod], "h2", now(), &mut no_backoff());
        assert_eq!(needs.delete, names(&["old"]));
        // An old pod that is not ready is replaced at once.
        let unready_old = pod("old", "n", "h1");
        let fresh = pod("new", "n", "h2");
        let needs = pods_should_be_on_node(
            &ds,
            (true, true),
            &[&unready_old, &fresh],
            "h2",
            now(),
            &mut no_backoff(),
        );
        assert_eq!(needs.delete, names(&["old"]));
        // With surge a node whose only pod is pre-deleting gets a new one at once.
        let mut leaving = pod("leaving", "n", "h1");
        leaving
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert(LIFECYCLE_STATE_KEY.into(), LifecycleState::PreparingDelete.as_str().into());
        let needs = pods_should_be_on_node(&ds, (true, true), &[&leaving], "h2", now(), &mut no_backoff());
        assert!(needs.create);
    }

    #[test]
    fn the_manage_loop_covers_every_node_and_orphaned_unbound_pods() {
        let ds = daemonset("ds");
        let mut tainted = node("n3", &[]);
        tainted.spec = Some(NodeSpec {
            taints: Some(vec![Taint { key: "x".into(), effect: "NoExecute".into(), ..Default::default() }]),
            ..Default::default()
        });
        let (n1, n2) = (node("n1", &[]), node("n2", &[]));
        let nodes = vec![&n1, &n2, &tainted];
        let on_n1 = pod("on-n1", "n1", "h");
        let on_n3 = pod("on-n3", "n3", "h");
        let mut unbound = pod("unbound", "gone", "h");
        unbound.spec.as_mut().unwrap().node_name = None;
        unbound.spec.as_mut().unwrap().affinity =
            Some(crate::daemonset::core::nodes::replace_node_name_affinity(None, "gone"));
        let pods = vec![on_n1, on_n3, unbound];
        let by_node = group_by_node(&pods);
        let plan = plan_manage(&ds, &nodes, &by_node, "h", now(), &mut |_| None);
        assert_eq!(plan.nodes_to_create, names(&["n2"]));
        assert_eq!(plan.pods_to_delete, names(&["on-n3", "unbound"]));
    }

    #[test]
    fn partitioned_scaling_in_the_manage_loop_uses_the_reported_desired_count() {
        let mut ds = daemonset("ds");
        ds.spec.scale_strategy = Some(DaemonSetScaleStrategy { partitioned_scaling: true });
        ds.spec.update_strategy.rolling_update.as_mut().unwrap().partition = Some(IntOrString::Int(2));
        ds.status.get_or_insert_with(Default::default).desired_number_scheduled = 3;
        let (n1, n2, n3) = (node("n1", &[]), node("n2", &[]), node("n3", &[]));
        let plan = plan_manage(&ds, &[&n1, &n2, &n3], &BTreeMap::new(), "h", now(), &mut |_| None);
        assert_eq!(plan.nodes_to_create, names(&["n1"]));
        ds.spec.scale_strategy = None;
        let plan = plan_manage(&ds, &[&n1, &n2, &n3], &BTreeMap::new(), "h", now(), &mut |_| None);
        assert_eq!(plan.nodes_to_create, names(&["n1", "n2", "n3"]));
    }
}
