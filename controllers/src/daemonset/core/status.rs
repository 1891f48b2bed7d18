//! The status upstream reports (`updateDaemonSetStatus`): per node that should run the pod,
//! whether it has one (the oldest counts), ready, available, at the update revision; per node
//! that should not, whether it has one anyway.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::core::v1::{Node, Pod},
    jiff::Timestamp,
};
use kruise_crds::apps::v1beta1::{DaemonSet, DaemonSetStatus};

use super::{
    nodes::DaemonPredicates,
    pods::{by_creation, is_daemon_pod_available, is_pod_updated, template_generation},
};
use crate::workload::pods::is_pod_ready;

/// The status for the current pods; `observed` also records the spec generation (only after a
/// full round, as upstream). Returns when to look again (a ready pod not yet available).
pub fn compute_status(
    ds: &DaemonSet,
    nodes: &[&Node],
    by_node: &BTreeMap<String, Vec<&Pod>>,
    hash: &str,
    collision_count: Option<i32>,
    observed: bool,
    now: Timestamp,
) -> (DaemonSetStatus, Option<Duration>) {
    let predicates = DaemonPredicates::new(ds);
    let generation = template_generation(ds);
    let mut status = ds.status.clone().unwrap_or_default();
    let (mut desired, mut current, mut misscheduled, mut ready, mut updated, mut available) =
        (0, 0, 0, 0, 0, 0);
    for node in nodes {
        let name = node.metadata.name.as_deref().unwrap_or_default();
        let pods = by_node.get(name).map(Vec::as_slice).unwrap_or_default();
        let scheduled = !pods.is_empty();
        if predicates.should_run(node).0 {
            desired += 1;
            if let Some(pod) = pods.iter().copied().min_by(|a, b| by_creation(a, b)) {
                current += 1;
                if is_pod_ready(pod) {
                    ready += 1;
                    if is_daemon_pod_available(pod, ds.spec.min_ready_seconds, now) {
                        available += 1;
                    }
                }
                if is_pod_updated(pod, hash, generation) {
                    updated += 1;
                }
            }
        } else if scheduled {
            misscheduled += 1;
        }
    }
    status.desired_number_scheduled = desired;
    status.current_number_scheduled = current;
    status.number_misscheduled = misscheduled;
    status.number_ready = ready;
    status.updated_number_scheduled = updated;
    status.number_available = available;
    status.number_unavailable = desired - available;
    status.update_revision = hash.to_string();
    if collision_count.is_some() {
        status.collision_count = collision_count;
    }
    if observed {
        status.observed_generation = ds.metadata.generation.unwrap_or_default();
    }
    let requeue = (ready != available)
        .then(|| Duration::from_secs(u64::try_from(ds.spec.min_ready_seconds.max(1)).unwrap_or(1)));
    (status, requeue)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::jiff::SignedDuration;

    use super::*;
    use crate::daemonset::core::{
        fixtures::{daemonset, node, now, pod, ready_pod},
        manage::group_by_node,
    };

    #[test]
    fn status_counts_nodes_not_pods() {
        let mut ds = daemonset("ds");
        ds.metadata.generation = Some(4);
        ds.spec.min_ready_seconds = 30;
        ds.spec.template.spec.as_mut().unwrap().node_selector =
            Some([("role".to_string(), "worker".to_string())].into());
        let (n1, n2, n3, n4) = (
            node("n1", &[("role", "worker")]),
            node("n2", &[("role", "worker")]),
            node("n3", &[("role", "worker")]),
            node("n4", &[]),
        );
        let pods = vec![
            ready_pod("a", "n1", "new", now() - SignedDuration::from_secs(60)),
            ready_pod("b", "n2", "old", now() - SignedDuration::from_secs(10)),
            pod("c", "n4", "old"),
        ];
        let by_node = group_by_node(&pods);
        let (status, requeue) =
            compute_status(&ds, &[&n1, &n2, &n3, &n4], &by_node, "new", Some(0), true, now());
        assert_eq!(status.desired_number_scheduled, 3);
        assert_eq!(status.current_number_scheduled, 2);
        assert_eq!(status.number_misscheduled, 1);
        assert_eq!(status.number_ready, 2);
        assert_eq!(status.number_available, 1);
        assert_eq!(status.number_unavailable, 2);
        assert_eq!(status.updated_number_scheduled, 1);
        assert_eq!(status.update_revision, "new");
        assert_eq!(status.observed_generation, 4);
        assert_eq!(status.collision_count, Some(0));
        assert_eq!(requeue, Some(Duration::from_secs(30)), "a ready pod becomes available later");

        let (status, _) = compute_status(&ds, &[&n1], &by_node, "new", None, false, now());
        assert_eq!(status.observed_generation, 0, "observedGeneration only after a full round");
    }
}
