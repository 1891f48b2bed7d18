//! How the DaemonSet controller reads one pod beyond the predicates every workload shares
//! ([`crate::workload::pods`]: ready, available for `minReadySeconds`, revision hash,
//! terminating, pre-deleting): at the update revision (hash or template generation), available
//! as a daemon pod, and the order in which duplicates on a node are kept.

use std::cmp::Ordering;

use k8s_openapi::{
    api::core::v1::Pod,
    jiff::{SignedDuration, Timestamp},
};
use kruise_crds::{apps::v1beta1::DaemonSet, common::IN_PLACE_UPDATE_READY};

use crate::workload::pods::{
    is_preparing_delete, is_ready_for, is_terminating, pod_condition, pod_ready_time, revision_hash,
};

/// Pod label of the template generation a pod was created from (with the deprecated annotation).
pub const POD_TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
/// DaemonSet annotation of the deprecated template generation.
pub const DEPRECATED_TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// The deprecated template generation of the DaemonSet, when annotated (upstream
/// `GetTemplateGeneration`; an unparsable value counts as none).
pub fn template_generation(ds: &DaemonSet) -> Option<i64> {
    ds.metadata.annotations.as_ref()?.get(DEPRECATED_TEMPLATE_GENERATION)?.parse().ok()
}

/// Whether a pod runs the update revision: its hash label equals `hash`, or its template
/// generation label equals the DaemonSet's (Kubernetes `IsPodUpdated`).
pub fn is_pod_updated(pod: &Pod, hash: &str, generation: Option<i64>) -> bool {
    let labels = pod.metadata.labels.as_ref();
    let generation_matches = generation.is_some_and(|generation| {
        labels.and_then(|l| l.get(POD_TEMPLATE_GENERATION_LABEL)) == Some(&generation.to_string())
    });
    (!hash.is_empty() && revision_hash(pod) == hash) || generation_matches
}

/// Whether the pod is absent or pre-deleting (upstream `isPodNilOrPreDeleting`).
pub fn is_nil_or_pre_deleting(pod: Option<&Pod>) -> bool {
    pod.is_none_or(is_preparing_delete)
}

/// How long until a Ready pod becomes available (upstream `podAvailableWaitingTime`).
pub fn available_after(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> std::time::Duration {
    let full = std::time::Duration::from_secs(u64::try_from(min_ready_seconds.max(0)).unwrap_or_default());
    match pod_ready_time(pod) {
        None => full,
        Some(since) => {
            let elapsed = now.duration_since(since);
            let left = SignedDuration::from_secs(i64::from(min_ready_seconds)) - elapsed;
            std::time::Duration::try_from(left).unwrap_or_default()
        }
    }
}

/// Whether the pod carries the `InPlaceUpdateReady` readiness gate.
pub fn has_in_place_readiness_gate(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .is_some_and(|gates| gates.iter().any(|g| g.condition_type == IN_PLACE_UPDATE_READY))
}

/// Whether a daemon pod counts as available in the status: available, and with the in-place
/// gate, its `InPlaceUpdateReady` condition (when present) `True` (upstream `isDaemonPodAvailable`).
pub fn is_daemon_pod_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    if !is_ready_for(pod, min_ready_seconds, now) {
        return false;
    }
    !has_in_place_readiness_gate(pod)
        || pod_condition(pod, IN_PLACE_UPDATE_READY).is_none_or(|c| c.status == "True")
}

/// Bound pods first, then the oldest, then by name (upstream `podByCreationTimestampAndPhase`).
pub fn by_creation(a: &Pod, b: &Pod) -> Ordering {
    let bound = |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty());
    bound(b)
        .cmp(&bound(a))
        .then_with(|| {
            let created = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
            created(a).cmp(&created(b))
        })
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// The new and old pod of a node among its live pods, or `None` when it has more than one of
/// either (the manage loop prunes those first; upstream `findUpdatedPodsOnNode`).
pub fn find_updated_pods_on_node<'a>(
    pods: &[&'a Pod],
    hash: &str,
    generation: Option<i64>,
) -> Option<(Option<&'a Pod>, Option<&'a Pod>)> {
    let (mut new_pod, mut old_pod) = (None, None);
    for pod in pods.iter().copied().filter(|p| !is_terminating(p)) {
        let slot = if is_pod_updated(pod, hash, generation) { &mut new_pod } else { &mut old_pod };
        if slot.is_some() {
            return None;
        }
        *slot = Some(pod);
    }
    Some((new_pod, old_pod))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;
    use crate::daemonset::core::fixtures::{daemonset, now, pod, ready_pod};

    #[test]
    fn updated_pods_match_by_hash_or_template_generation() {
        let p = pod("p", "n1", "h2");
        assert!(is_pod_updated(&p, "h2", None));
        assert!(!is_pod_updated(&p, "h1", None));
        assert!(!is_pod_updated(&p, "", None));
        let mut generated = pod("p", "n1", "h1");
        generated.metadata.labels.as_mut().unwrap().insert(POD_TEMPLATE_GENERATION_LABEL.into(), "3".into());
        assert!(is_pod_updated(&generated, "h2", Some(3)));
        assert!(!is_pod_updated(&generated, "h2", Some(4)));

        let mut ds = daemonset("ds");
        assert_eq!(template_generation(&ds), None);
        ds.metadata.annotations =
            Some([(DEPRECATED_TEMPLATE_GENERATION.to_string(), "7".to_string())].into());
        assert_eq!(template_generation(&ds), Some(7));
    }

    #[test]
    fn availability_waits_min_ready_seconds_and_the_in_place_condition() {
        let ready = ready_pod("p", "n1", "h", now() - SignedDuration::from_secs(10));
        assert!(is_ready_for(&ready, 0, now()));
        assert!(is_ready_for(&ready, 5, now()));
        assert!(!is_ready_for(&ready, 10, now()), "strictly more than minReadySeconds");
        assert_eq!(available_after(&ready, 30, now()), std::time::Duration::from_secs(20));
        assert!(!is_ready_for(&pod("p", "n1", "h"), 0, now()));

        let mut gated = ready.clone();
        gated.spec.as_mut().unwrap().readiness_gates =
            Some(vec![k8s_openapi::api::core::v1::PodReadinessGate {
                condition_type: IN_PLACE_UPDATE_READY.into(),
            }]);
        assert!(is_daemon_pod_available(&gated, 0, now()), "no condition yet");
        gated.status.as_mut().unwrap().conditions.as_mut().unwrap().push(
            k8s_openapi::api::core::v1::PodCondition {
                type_: IN_PLACE_UPDATE_READY.into(),
                status: "False".into(),
                ..Default::default()
            },
        );
        assert!(!is_daemon_pod_available(&gated, 0, now()));
    }

    #[test]
    fn a_node_with_two_new_or_two_old_pods_is_left_to_the_manage_loop() {
        let (a, b, c) = (pod("a", "n", "new"), pod("b", "n", "old"), pod("c", "n", "new"));
        let (new_pod, old_pod) = find_updated_pods_on_node(&[&a, &b], "new", None).unwrap();
        assert_eq!(new_pod.unwrap().metadata.name.as_deref(), Some("a"));
        assert_eq!(old_pod.unwrap().metadata.name.as_deref(), Some("b"));
        assert!(find_updated_pods_on_node(&[&a, &c], "new", None).is_none());
        let mut gone = c.clone();
        gone.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now()));
        assert!(find_updated_pods_on_node(&[&a, &gone], "new", None).is_some(), "terminating pods ignored");
    }
}
