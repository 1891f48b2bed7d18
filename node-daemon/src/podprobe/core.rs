//! The pod probe decisions as pure functions: the probe keys a NodePodProbe asks for, a
//! probe's result after its thresholds, and the NodePodProbe status the latest results make.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_crds::apps::v1alpha1::{
    ContainerProbeSpec, ContainerProbeState, NodePodProbeSpec, NodePodProbeStatus, PodProbeStatus, ProbeState,
};

/// Longest probe message kept (upstream `maxProbeMessageLength`).
pub const MAX_MESSAGE_LENGTH: usize = 1024;

/// One probe of one container of one pod (upstream `probeKey`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProbeKey {
    /// Pod namespace.
    pub namespace: String,
    /// Pod name.
    pub pod: String,
    /// Pod UID.
    pub uid: String,
    /// Pod IP (target of network probes).
    pub ip: String,
    /// Container probed.
    pub container: String,
    /// Probe name (`<marker>#<probe>`).
    pub probe: String,
}

/// Every probe the spec asks for, with its spec.
pub fn wanted_probes(spec: &NodePodProbeSpec) -> BTreeMap<ProbeKey, ContainerProbeSpec> {
    spec.pod_probes
        .iter()
        .flat_map(|pod| {
            pod.probes.iter().map(move |probe| {
                (
                    ProbeKey {
                        namespace: pod.namespace.clone(),
                        pod: pod.name.clone(),
                        uid: pod.uid.clone(),
                        ip: pod.ip.clone(),
                        container: probe.container_name.clone(),
                        probe: probe.name.clone(),
                    },
                    probe.probe.clone(),
                )
            })
        })
        .collect()
}

/// Whether only the timing of a probe changed (upstream keeps the result then; a new handler
/// starts from `Unknown`).
pub fn same_handler(a: &ContainerProbeSpec, b: &ContainerProbeSpec) -> bool {
    a.exec == b.exec && a.http_get == b.http_get && a.tcp_socket == b.tcp_socket && a.grpc == b.grpc
}

/// Seconds between probes (at least 1).
pub fn period_seconds(spec: &ContainerProbeSpec) -> u64 {
    u64::try_from(spec.period_seconds.max(1)).unwrap_or(1)
}

/// Seconds one probe may take (default and minimum 1).
pub fn timeout_seconds(spec: &ContainerProbeSpec) -> u64 {
    u64::try_from(spec.timeout_seconds.max(1)).unwrap_or(1)
}

/// Seconds after the container started before it is probed (at least 1, as upstream).
pub fn initial_delay_seconds(spec: &ContainerProbeSpec) -> i64 {
    i64::from(spec.initial_delay_seconds.max(1))
}

/// Consecutive results of a probe (upstream worker's `lastResult`/`resultRun`).
#[derive(Clone, Debug, Default)]
pub struct Streak {
    last: Option<ProbeState>,
    run: i32,
}

impl Streak {
    /// Records one result; returns it when its run reached the threshold (failure or success,
    /// each at least 1), so it should be reported.
    pub fn observe(&mut self, result: &ProbeState, spec: &ContainerProbeSpec) -> bool {
        if self.last.as_ref() == Some(result) {
            self.run = self.run.saturating_add(1);
        } else {
            self.last = Some(result.clone());
            self.run = 1;
        }
        let threshold = match result {
            ProbeState::Failed => spec.failure_threshold.max(1),
            _ => spec.success_threshold.max(1),
        };
        self.run >= threshold
    }
}

/// A probe's latest reported result.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeResult {
    /// The state.
    pub state: ProbeState,
    /// Probe output (at most [`MAX_MESSAGE_LENGTH`] bytes).
    pub message: String,
    /// When it ran (`None` for the initial `Unknown`).
    pub probed_at: Option<Time>,
}

/// `message` cut to [`MAX_MESSAGE_LENGTH`] bytes on a character boundary.
pub fn truncate_message(message: &str) -> String {
    if message.len() <= MAX_MESSAGE_LENGTH {
        return message.to_string();
    }
    let mut end = MAX_MESSAGE_LENGTH;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message[..end].to_string()
}

/// The status after `results` (upstream `syncUpdateNodePodProbeStatus`): states of probes no
/// longer in `spec` are dropped, each result replaces its probe's state (the transition time
/// moves only when the state changes), pods without states are dropped.
pub fn updated_status(
    spec: &NodePodProbeSpec,
    current: &NodePodProbeStatus,
    results: &BTreeMap<ProbeKey, ProbeResult>,
    now: &Time,
) -> NodePodProbeStatus {
    let valid: BTreeSet<(String, String)> = spec
        .pod_probes
        .iter()
        .flat_map(|pod| pod.probes.iter().map(move |probe| (pod.uid.clone(), probe.name.clone())))
        .collect();
    let mut statuses: Vec<PodProbeStatus> = current
        .pod_probe_statuses
        .iter()
        .map(|pod| PodProbeStatus {
            probe_states: pod
                .probe_states
                .iter()
                .filter(|s| valid.contains(&(pod.uid.clone(), s.name.clone())))
                .cloned()
                .collect(),
            ..pod.clone()
        })
        .collect();
    for (key, result) in results {
        if !valid.contains(&(key.uid.clone(), key.probe.clone())) {
            continue;
        }
        let index = match statuses.iter().position(|s| s.uid == key.uid) {
            Some(index) => index,
            None => {
                statuses.push(PodProbeStatus {
                    name: key.pod.clone(),
                    namespace: key.namespace.clone(),
                    uid: key.uid.clone(),
                    probe_states: Vec::new(),
                });
                statuses.len() - 1
            }
        };
        let pod = &mut statuses[index];
        match pod.probe_states.iter_mut().find(|s| s.name == key.probe) {
            Some(state) => {
                if state.state != result.state {
                    state.last_transition_time = Some(now.clone());
                }
                state.state = result.state.clone();
                state.message = result.message.clone();
                state.last_probe_time = result.probed_at.clone();
            }
            None => pod.probe_states.push(ContainerProbeState {
                name: key.probe.clone(),
                state: result.state.clone(),
                last_probe_time: result.probed_at.clone(),
                last_transition_time: Some(now.clone()),
                message: result.message.clone(),
            }),
        }
    }
    statuses.retain(|s| !s.probe_states.is_empty());
    NodePodProbeStatus { pod_probe_statuses: statuses }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    use super::*;

    fn spec() -> NodePodProbeSpec {
        serde_json::from_value(json!({"podProbes": [{"name": "p", "namespace": "ns", "uid": "u", "IP": "10.0.0.1",
            "probes": [{"name": "ppm#healthy", "containerName": "app", "probe": {"exec": {"command": ["check"]}, "periodSeconds": 1}}]}]}))
        .unwrap()
    }

    #[test]
    fn thresholds_hold_results_back() {
        let spec = ContainerProbeSpec { failure_threshold: 3, ..Default::default() };
        let mut streak = Streak::default();
        assert!(streak.observe(&ProbeState::Succeeded, &spec));
        assert!(!streak.observe(&ProbeState::Failed, &spec));
        assert!(!streak.observe(&ProbeState::Failed, &spec));
        assert!(streak.observe(&ProbeState::Failed, &spec));
        assert!(streak.observe(&ProbeState::Succeeded, &spec));
    }

    #[test]
    fn status_follows_results_and_drops_stale_probes() {
        let spec = spec();
        let keys: Vec<ProbeKey> = wanted_probes(&spec).into_keys().collect();
        assert_eq!(keys.len(), 1);
        let t1 = Time(Timestamp::from_second(1).unwrap());
        let t2 = Time(Timestamp::from_second(2).unwrap());
        let ok =
            ProbeResult { state: ProbeState::Succeeded, message: String::new(), probed_at: Some(t1.clone()) };
        let status = updated_status(&spec, &Default::default(), &[(keys[0].clone(), ok.clone())].into(), &t1);
        assert_eq!(status.pod_probe_statuses[0].probe_states[0].state, ProbeState::Succeeded);
        // Same state: transition time kept.
        let again = updated_status(&spec, &status, &[(keys[0].clone(), ok)].into(), &t2);
        assert_eq!(again.pod_probe_statuses[0].probe_states[0].last_transition_time, Some(t1));
        let failed =
            ProbeResult { state: ProbeState::Failed, message: "exit 1".into(), probed_at: Some(t2.clone()) };
        let flipped = updated_status(&spec, &again, &[(keys[0].clone(), failed)].into(), &t2);
        assert_eq!(flipped.pod_probe_statuses[0].probe_states[0].last_transition_time, Some(t2.clone()));
        // Probe removed from the spec: its state goes.
        let gone = updated_status(&NodePodProbeSpec::default(), &flipped, &BTreeMap::new(), &t2);
        assert!(gone.pod_probe_statuses.is_empty());
    }

    #[test]
    fn messages_are_cut_on_a_char_boundary() {
        let long = "é".repeat(MAX_MESSAGE_LENGTH);
        let cut = truncate_message(&long);
        assert!(cut.len() <= MAX_MESSAGE_LENGTH && cut.chars().all(|c| c == 'é'));
    }
}
