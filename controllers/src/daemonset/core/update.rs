//! The rolling update (upstream `rollingUpdate`, `updatedDesiredNodeCounts` and
//! `filterDaemonPodsNodeToUpdate`): which nodes may be updated this round (the partition keeps
//! some at the old revision, the `selector` picks canaries), then without surge which old pods to
//! replace within `maxUnavailable`, or with surge on which nodes to start a new pod beside the
//! old one within `maxSurge` and which old pods to delete once their new pod is available.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{Node, Pod},
    apimachinery::pkg::apis::meta::v1::LabelSelector,
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{DaemonSet, DaemonSetUpdateStrategyType},
    intstr::scaled_value,
};

use super::{
    nodes::DaemonPredicates,
    pods::{find_updated_pods_on_node, is_nil_or_pre_deleting, template_generation},
};
use crate::workload::pods::{is_preparing_delete, is_ready_for};

fn scaled_limit(
    ds: &DaemonSet,
    number: i32,
    pick: fn(
        &kruise_crds::apps::v1beta1::RollingUpdateDaemonSet,
    ) -> Option<&k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
) -> i32 {
    if ds.spec.update_strategy.type_ != DaemonSetUpdateStrategyType::RollingUpdate {
        return 0;
    }
    ds.spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(pick)
        .map_or(0, |value| scaled_value(value, number, true).unwrap_or(0))
}

/// `maxSurge` of `number` nodes, rounded up; 0 when not a rolling update (upstream `surgeCount`).
pub fn max_surge(ds: &DaemonSet, number: i32) -> i32 {
    scaled_limit(ds, number, |r| r.max_surge.as_ref())
}

/// `maxUnavailable` of `number` nodes, rounded up (upstream `unavailableCount`).
pub fn max_unavailable(ds: &DaemonSet, number: i32) -> i32 {
    scaled_limit(ds, number, |r| r.max_unavailable.as_ref())
}

/// `(maxSurge, maxUnavailable)` for `desired` nodes; both zero falls back to one unavailable.
pub fn update_limits(ds: &DaemonSet, desired: i32) -> (i32, i32) {
    let (surge, mut unavailable) = (max_surge(ds, desired), max_unavailable(ds, desired));
    if desired > 0 && surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    (surge, unavailable)
}

/// Whether the rolling update is paused.
pub fn is_paused(ds: &DaemonSet) -> bool {
    ds.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.paused).unwrap_or(false)
}

/// The nodes the update may touch this round, in the order it considers them (upstream
/// `filterDaemonPodsNodeToUpdate`): by name descending, nodes already updated (or with excess
/// pods) first, then nodes being updated (no live old pod), then — with a `selector` only the
/// nodes it matches, without one all the rest; cut to `nodes - partition`.
pub fn nodes_to_update(
    ds: &DaemonSet,
    hash: &str,
    by_node: &BTreeMap<String, Vec<&Pod>>,
    node_labels: &dyn Fn(&str) -> Option<BTreeMap<String, String>>,
) -> Vec<String> {
    let rolling = ds.spec.update_strategy.rolling_update.as_ref();
    let status_desired = ds.status.as_ref().map_or(0, |s| s.desired_number_scheduled);
    let partition = rolling
        .and_then(|r| r.partition.as_ref())
        .map_or(0, |p| scaled_value(p, status_desired, false).unwrap_or(0).max(0));
    let selector: Option<&LabelSelector> = rolling.and_then(|r| r.selector.as_ref());
    let generation = template_generation(ds);

    let (mut updated, mut updating, mut selected, mut rest) = (vec![], vec![], vec![], vec![]);
    for (name, pods) in by_node.iter().rev() {
        match find_updated_pods_on_node(pods, hash, generation) {
            None | Some((Some(_), _)) => updated.push(name.clone()),
            Some((None, old)) if is_nil_or_pre_deleting(old) => updating.push(name.clone()),
            Some(_) => {
                if let Some(selector) = selector
                    && kruise_crds::selector::matches(selector, &node_labels(name).unwrap_or_default())
                {
                    selected.push(name.clone());
                    continue;
                }
                rest.push(name.clone());
            }
        }
    }
    let mut sorted = updated;
    sorted.extend(updating);
    if selector.is_some() {
        sorted.extend(selected);
    } else {
        sorted.extend(rest);
    }
    let max_update = by_node.len().saturating_sub(usize::try_from(partition).unwrap_or_default());
    sorted.truncate(max_update);
    sorted
}

/// What the rolling update does this round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RollingPlan {
    /// Without surge: old pods to replace (in place where possible, else deleted).
    pub pods_to_replace: Vec<String>,
    /// With surge: nodes to start a new pod on beside the old one.
    pub nodes_to_create: Vec<String>,
    /// With surge: old pods whose new pod is available.
    pub pods_to_delete: Vec<String>,
}

/// Plans one round of the rolling update. Pods on nodes that should no longer run the
/// DaemonSet count against the limits unless `prune_ineligible` (gate
/// `DaemonSetPruneIneligibleNodes`) leaves those nodes out.
pub fn plan_rolling_update(
    ds: &DaemonSet,
    nodes: &[&Node],
    by_node: &BTreeMap<String, Vec<&Pod>>,
    hash: &str,
    now: Timestamp,
    prune_ineligible: bool,
) -> RollingPlan {
    let predicates = DaemonPredicates::new(ds);
    let mut candidates: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
    let mut desired = 0;
    let mut labels: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        labels.insert(name.clone(), node.metadata.labels.clone().unwrap_or_default());
        // Pods on nodes that are gone are not the update's business; those on ineligible nodes
        // still count (the manage loop deletes them) unless pruned.
        let should_run = predicates.should_run(node).0;
        if let Some(pods) = by_node.get(&name)
            && (should_run || !prune_ineligible)
        {
            candidates.insert(name.clone(), pods.clone());
        }
        if should_run {
            desired += 1;
            candidates.entry(name).or_default();
        }
    }
    let (surge, unavailable) = update_limits(ds, desired);
    let order = nodes_to_update(ds, hash, &candidates, &|name| labels.get(name).cloned());
    let generation = template_generation(ds);
    let min_ready = ds.spec.min_ready_seconds;
    let mut plan = RollingPlan::default();

    if surge == 0 {
        let mut unavailable_now = 0;
        let (mut allowed, mut candidates_to_delete) = (Vec::new(), Vec::new());
        for name in &order {
            let pods = candidates.get(name).map(Vec::as_slice).unwrap_or_default();
            let Some((new_pod, old_pod)) = find_updated_pods_on_node(pods, hash, generation) else {
                unavailable_now += 1;
                continue;
            };
            if is_nil_or_pre_deleting(old_pod) == is_nil_or_pre_deleting(new_pod) {
                unavailable_now += 1;
            } else if let Some(new_pod) = new_pod {
                if !is_ready_for(new_pod, min_ready, now) {
                    unavailable_now += 1;
                }
                if is_preparing_delete(new_pod) {
                    unavailable_now += 1;
                }
            } else if let Some(old_pod) = old_pod {
                let pod_name = old_pod.metadata.name.clone().unwrap_or_default();
                if !is_ready_for(old_pod, min_ready, now) {
                    allowed.push(pod_name);
                } else if unavailable_now < unavailable {
                    candidates_to_delete.push(pod_name);
                }
            }
        }
        let remaining = usize::try_from((unavailable - unavailable_now).max(0)).unwrap_or_default();
        candidates_to_delete.truncate(remaining);
        plan.pods_to_replace = allowed;
        plan.pods_to_replace.extend(candidates_to_delete);
        return plan;
    }

    let mut surging = 0;
    let (mut allowed, mut candidate_nodes) = (Vec::new(), Vec::new());
    for name in &order {
        let pods = candidates.get(name).map(Vec::as_slice).unwrap_or_default();
        let Some((new_pod, old_pod)) = find_updated_pods_on_node(pods, hash, generation) else {
            surging += 1;
            continue;
        };
        let Some(old_pod) = old_pod.filter(|p| !is_preparing_delete(p)) else { continue };
        match new_pod {
            None if !is_ready_for(old_pod, min_ready, now) => allowed.push(name.clone()),
            None if surging < surge => candidate_nodes.push(name.clone()),
            None => {}
            Some(new_pod) if !is_ready_for(new_pod, min_ready, now) || is_preparing_delete(new_pod) => {
                surging += 1
            }
            Some(_) => plan.pods_to_delete.push(old_pod.metadata.name.clone().unwrap_or_default()),
        }
    }
    candidate_nodes.truncate(usize::try_from((surge - surging).max(0)).unwrap_or_default());
    plan.nodes_to_create = allowed;
    plan.nodes_to_create.extend(candidate_nodes);
    plan
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::{
        apimachinery::pkg::{apis::meta::v1::Time, util::intstr::IntOrString},
        jiff::SignedDuration,
    };
    use kruise_crds::common::{LIFECYCLE_STATE_KEY, LifecycleState};

    use super::*;
    use crate::daemonset::core::fixtures::{daemonset, node, now, pod, ready_pod, surge};

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn ready(name: &str, node: &str, hash: &str) -> Pod {
        ready_pod(name, node, hash, now() - SignedDuration::from_secs(3600))
    }

    fn unavailable_limit(ds: &mut DaemonSet, value: IntOrString) {
        let rolling = ds.spec.update_strategy.rolling_update.as_mut().unwrap();
        rolling.max_unavailable = Some(value);
    }

    /// Upstream `TestGetUnavailableNumbers` (the limits part).
    #[test]
    fn limits_scale_with_the_desired_nodes_rounding_up() {
        let mut ds = daemonset("ds");
        assert_eq!(update_limits(&ds, 0), (0, 1), "default maxUnavailable 1");
        assert_eq!(update_limits(&ds, 2), (0, 1));
        unavailable_limit(&mut ds, IntOrString::String("50%".into()));
        assert_eq!(update_limits(&ds, 3), (0, 2));
        let ds = surge(daemonset("ds"), 1);
        assert_eq!(update_limits(&ds, 2), (1, 0));
        let mut ds = surge(daemonset("ds"), 0);
        ds.spec.update_strategy.rolling_update.as_mut().unwrap().max_surge =
            Some(IntOrString::String("100%".into()));
        assert_eq!(update_limits(&ds, 2), (2, 0));
        let mut zero = daemonset("ds");
        unavailable_limit(&mut zero, IntOrString::Int(0));
        assert_eq!(update_limits(&zero, 2), (0, 1), "both zero: one unavailable");
        assert_eq!(update_limits(&zero, 0), (0, 0));
    }

    /// Upstream `TestDaemonSetUpdatesPods`: one pod at a time, the next once the new one is up.
    #[test]
    fn without_surge_old_pods_are_replaced_within_max_unavailable() {
        let mut ds = daemonset("ds");
        let nodes: Vec<Node> = (1..=5).map(|i| node(&format!("n{i}"), &[])).collect();
        let node_refs: Vec<&Node> = nodes.iter().collect();
        let pods: Vec<Pod> = (1..=5).map(|i| ready(&format!("p{i}"), &format!("n{i}"), "old")).collect();
        let by_node = super::super::manage::group_by_node(&pods);
        let plan = plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), false);
        assert_eq!(plan.pods_to_replace, names(&["p5"]), "highest node name first");

        unavailable_limit(&mut ds, IntOrString::Int(2));
        let plan = plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), false);
        assert_eq!(plan.pods_to_replace, names(&["p5", "p4"]));

        // A new pod that is not available yet uses the budget.
        let mut pods = pods.clone();
        pods[4] = pod("p5-new", "n5", "new");
        let by_node = super::super::manage::group_by_node(&pods);
        let plan = plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), false);
        assert_eq!(plan.pods_to_replace, names(&["p4"]));

        // A node with no pod (being recreated) also counts as unavailable.
        pods.remove(3);
        let by_node = super::super::manage::group_by_node(&pods);
        let plan = plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), false);
        assert!(plan.pods_to_replace.is_empty());
    }

    /// Upstream `TestDaemonSetUpdatesAllOldPodsNotReady`: unavailable old pods are replaced at once.
    #[test]
    fn unavailable_old_pods_are_replaced_regardless_of_the_budget() {
        let ds = daemonset("ds");
        let nodes: Vec<Node> = (1..=3).map(|i| node(&format!("n{i}"), &[])).collect();
        let node_refs: Vec<&Node> = nodes.iter().collect();
        let pods: Vec<Pod> = (1..=3).map(|i| pod(&format!("p{i}"), &format!("n{i}"), "old")).collect();
        let by_node = super::super::manage::group_by_node(&pods);
        let plan = plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), false);
        assert_eq!(plan.pods_to_replace, names(&["p3", "p2", "p1"]));
    }

    /// Upstream `TestDaemonSetUpdatesNoTemplateChanged`.
    #[test]
    fn nothing_is_replaced_when_every_pod_is_current() {
        let ds = daemonset("ds");
        let nodes: Vec<Node> = (1..=3).map(|i| node(&format!("n{i}"), &[])).collect();
        let node_refs: Vec<&Node> = nodes.iter().collect();
        let pods: Vec<Pod> = (1..=3).map(|i| ready(&format!("p{i}"), &format!("n{i}"), "h")).collect();
        let by_node = super::super::manage::group_by_node(&pods);
        assert_eq!(plan_rolling_update(&ds, &node_refs, &by_node, "h", now(), false), RollingPlan::default());
    }

    /// Upstream `TestDaemonSetUpdatesPodsWithMaxSurge` and `...AllOldPodsNotReadyMaxSurge`.
    #[test]
    fn with_surge_new_pods_start_beside_old_ones_which_go_once_replaced() {
        let ds = surge(daemonset("ds"), 1);
        let nodes: Vec<Node> = (1..=3).map(|i| node(&format!("n{i}"), &[])).collect();
        let node_refs: Vec<&Node> = nodes.iter().collect();
        let pods: Vec<Pod> = (1..=3).map(|i| ready(&format!("p{i}"), &format!("n{i}"), "old")).collect();
        let by_node = super::super::manage::group_by_node(&pods);
        let plan = plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), false);
        assert_eq!(plan.nodes_to_create, names(&["n3"]));
        assert!(plan.pods_to_delete.is_empty());

        // The surged pod is not available yet: wait.
        let mut with_new = pods.clone();
        with_new.push(pod("p3-new", "n3", "new"));
        let by_node = super::super::manage::group_by_node(&with_new);
        assert_eq!(
            plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), false),
            RollingPlan::default()
        );

        // Available: the old pod goes, and the next node surges.
        with_new.pop();
        with_new.push(ready("p3-new", "n3", "new"));
        let by_node = super::super::manage::group_by_node(&with_new);
        let plan = plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), false);
        assert_eq!(plan.pods_to_delete, names(&["p3"]));
        assert_eq!(plan.nodes_to_create, names(&["n2"]));

        // Old pods that are not ready get their new pod regardless of maxSurge.
        let unready: Vec<Pod> = (1..=3).map(|i| pod(&format!("p{i}"), &format!("n{i}"), "old")).collect();
        let by_node = super::super::manage::group_by_node(&unready);
        let plan = plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), false);
        assert_eq!(plan.nodes_to_create, names(&["n3", "n2", "n1"]));
    }

    /// Upstream `TestFilterDaemonPodsNodeToUpdate`.
    #[test]
    fn partition_and_selector_pick_the_nodes_to_update() {
        let pods = vec![
            ready("a", "n1", "old"),
            ready("b", "n2", "new"),
            ready("c", "n3", "old"),
            ready("d", "n4", "old"),
        ];
        let by_node = super::super::manage::group_by_node(&pods);
        let labels = |name: &str| -> Option<BTreeMap<String, String>> {
            (name == "n1" || name == "n3").then(|| [("canary".to_string(), "true".to_string())].into())
        };
        let mut ds = daemonset("ds");
        ds.status.get_or_insert_with(Default::default).desired_number_scheduled = 4;
        assert_eq!(nodes_to_update(&ds, "new", &by_node, &labels), names(&["n2", "n4", "n3", "n1"]));
        ds.spec.update_strategy.rolling_update.as_mut().unwrap().partition = Some(IntOrString::Int(1));
        assert_eq!(nodes_to_update(&ds, "new", &by_node, &labels), names(&["n2", "n4", "n3"]));
        ds.spec.update_strategy.rolling_update.as_mut().unwrap().selector = Some(LabelSelector {
            match_labels: Some([("canary".to_string(), "true".to_string())].into()),
            ..Default::default()
        });
        assert_eq!(nodes_to_update(&ds, "new", &by_node, &labels), names(&["n2", "n3", "n1"]));
        ds.spec.update_strategy.rolling_update.as_mut().unwrap().partition = Some(IntOrString::Int(2));
        assert_eq!(nodes_to_update(&ds, "new", &by_node, &labels), names(&["n2", "n3"]));
        ds.spec.update_strategy.rolling_update.as_mut().unwrap().partition =
            Some(IntOrString::String("100%".into()));
        assert!(nodes_to_update(&ds, "new", &by_node, &labels).is_empty());

        // A node whose old pod is terminating or pre-deleting is being updated: it comes early.
        let mut leaving = ready("c", "n3", "old");
        leaving
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert(LIFECYCLE_STATE_KEY.into(), LifecycleState::PreparingDelete.as_str().into());
        let mut gone = ready("d", "n4", "old");
        gone.metadata.deletion_timestamp = Some(Time(now()));
        let pods = vec![ready("a", "n1", "old"), ready("b", "n2", "new"), leaving, gone];
        let by_node = super::super::manage::group_by_node(&pods);
        let mut ds = daemonset("ds");
        ds.spec.update_strategy.rolling_update.as_mut().unwrap().partition = Some(IntOrString::Int(1));
        ds.status.get_or_insert_with(Default::default).desired_number_scheduled = 4;
        assert_eq!(nodes_to_update(&ds, "new", &by_node, &labels), names(&["n2", "n4", "n3"]));
    }

    /// Upstream `TestDaemonSetIgnoreNotReadyNodesWhenUpdating` (gate
    /// `DaemonSetPruneIneligibleNodes`): unavailable pods on nodes the DaemonSet no longer wants
    /// stop blocking the update once pruned.
    #[test]
    fn pruning_leaves_ineligible_nodes_out_of_the_budget() {
        let mut ds = daemonset("ds");
        ds.spec.template.spec.as_mut().unwrap().node_selector =
            Some([("ds".to_string(), "yes".to_string())].into());
        let nodes = [node("n1", &[("ds", "yes")]), node("n2", &[("ds", "yes")]), node("n3", &[])];
        let node_refs: Vec<&Node> = nodes.iter().collect();
        // An unavailable new pod on the node that no longer qualifies.
        let pods = vec![ready("p1", "n1", "old"), ready("p2", "n2", "old"), pod("p3", "n3", "new")];
        let by_node = super::super::manage::group_by_node(&pods);
        let plan = plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), false);
        assert!(plan.pods_to_replace.is_empty(), "it used the whole budget");
        let plan = plan_rolling_update(&ds, &node_refs, &by_node, "new", now(), true);
        assert_eq!(plan.pods_to_replace, names(&["p2"]));
    }

    #[test]
    fn pausing_is_read_from_the_rolling_update() {
        let mut ds = daemonset("ds");
        assert!(!is_paused(&ds));
        ds.spec.update_strategy.rolling_update.as_mut().unwrap().paused = Some(true);
        assert!(is_paused(&ds));
    }
}
