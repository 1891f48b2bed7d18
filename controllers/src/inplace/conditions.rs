//! The `InPlaceUpdateReady` readiness gate: `False` while a pod is updated in place (so it
//! leaves Service endpoints), `True` otherwise. Setting it `False` also recomputes the pod's
//! `Ready` condition at once, instead of waiting for the kubelet to notice the gate.

use k8s_openapi::{
    api::core::v1::{Pod, PodCondition, PodReadinessGate, PodSpec},
    apimachinery::pkg::apis::meta::v1::Time,
};
use kruise_crds::common::IN_PLACE_UPDATE_READY;

/// Reason of the `False` condition written when an update starts.
pub const START_IN_PLACE_UPDATE_REASON: &str = "StartInPlaceUpdate";

/// Whether the pod has the `InPlaceUpdateReady` readiness gate.
pub fn has_readiness_gate(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .is_some_and(|gates| gates.iter().any(|g| g.condition_type == IN_PLACE_UPDATE_READY))
}

/// Adds the `InPlaceUpdateReady` readiness gate to a pod spec (once): workloads put it on the
/// pods they create so that an in-place update can hold them NotReady.
pub fn inject_readiness_gate(spec: &mut PodSpec) {
    let gates = spec.readiness_gates.get_or_insert_with(Vec::new);
    if !gates.iter().any(|g| g.condition_type == IN_PLACE_UPDATE_READY) {
        gates.push(PodReadinessGate { condition_type: IN_PLACE_UPDATE_READY.into() });
    }
}

/// A condition of the pod by type.
pub fn condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a PodCondition> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

/// Sets `new` in `conditions` unless a condition of its type already has its status
/// (upstream `SetPodCondition`: the transition time only moves on a status change). Returns
/// whether anything changed.
fn set_condition(conditions: &mut Vec<PodCondition>, new: PodCondition) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        Some(existing) if existing.status == new.status => false,
        Some(existing) => {
            *existing = new;
            true
        }
        None => {
            conditions.push(new);
            true
        }
    }
}

/// `Ready` recomputed from the readiness gates, when the pod has a `Ready` condition and its
/// containers are ready (otherwise the kubelet's answer stands).
fn recomputed_ready(pod: &Pod, conditions: &[PodCondition], now: &Time) -> Option<PodCondition> {
    let find = |t: &str| conditions.iter().find(|c| c.type_ == t);
    find("Ready")?;
    if find("ContainersReady").is_none_or(|c| c.status != "True") {
        return None;
    }
    let gates = pod.spec.as_ref().and_then(|s| s.readiness_gates.as_ref());
    let problems: Vec<String> = gates
        .into_iter()
        .flatten()
        .filter_map(|gate| match find(&gate.condition_type) {
            None => Some(format!(
                "corresponding condition of pod readiness gate \"{}\" does not exist.",
                gate.condition_type
            )),
            Some(c) if c.status != "True" => Some(format!(
                "the status of pod readiness gate \"{}\" is not \"True\", but {}",
                gate.condition_type, c.status
            )),
            Some(_) => None,
        })
        .collect();
    Some(if problems.is_empty() {
        PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(now.clone()),
            ..Default::default()
        }
    } else {
        PodCondition {
            type_: "Ready".into(),
            status: "False".into(),
            reason: Some("ReadinessGatesNotReady".into()),
            message: Some(problems.join(", ")),
            last_transition_time: Some(now.clone()),
            ..Default::default()
        }
    })
}

/// The conditions to write so that the pod reads `InPlaceUpdateReady=False` (reason
/// `StartInPlaceUpdate`) and, where it applies, `Ready=False`. Empty when the pod already
/// shows both.
pub fn start_update_conditions(pod: &Pod, now: &Time) -> Vec<PodCondition> {
    let mut conditions = pod.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
    let mut changed = Vec::new();
    let not_ready = PodCondition {
        type_: IN_PLACE_UPDATE_READY.into(),
        status: "False".into(),
        reason: Some(START_IN_PLACE_UPDATE_REASON.into()),
        last_transition_time: Some(now.clone()),
        ..Default::default()
    };
    if set_condition(&mut conditions, not_ready.clone()) {
        changed.push(not_ready);
    }
    if let Some(ready) = recomputed_ready(pod, &conditions, now)
        && set_condition(&mut conditions, ready.clone())
    {
        changed.push(ready);
    }
    changed
}

/// The `InPlaceUpdateReady=True` condition to write, or `None` when the pod has no gate or the
/// condition is already `True` (the kubelet then turns `Ready` back on).
pub fn finish_update_condition(pod: &Pod, now: &Time) -> Option<PodCondition> {
    if !has_readiness_gate(pod) {
        return None;
    }
    if condition(pod, IN_PLACE_UPDATE_READY).is_some_and(|c| c.status == "True") {
        return None;
    }
    Some(PodCondition {
        type_: IN_PLACE_UPDATE_READY.into(),
        status: "True".into(),
        last_transition_time: Some(now.clone()),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::{api::core::v1::PodStatus, jiff::Timestamp};

    use super::*;

    fn cond(type_: &str, status: &str) -> PodCondition {
        PodCondition { type_: type_.into(), status: status.into(), ..Default::default() }
    }

    fn pod(gates: &[&str], conditions: Vec<PodCondition>) -> Pod {
        Pod {
            spec: Some(PodSpec {
                readiness_gates: Some(
                    gates.iter().map(|g| PodReadinessGate { condition_type: g.to_string() }).collect(),
                ),
                ..Default::default()
            }),
            status: Some(PodStatus { conditions: Some(conditions), ..Default::default() }),
            ..Default::default()
        }
    }

    fn summary(conditions: &[PodCondition]) -> Vec<(String, String, Option<String>)> {
        conditions.iter().map(|c| (c.type_.clone(), c.status.clone(), c.reason.clone())).collect()
    }

    fn s(type_: &str, status: &str, reason: Option<&str>) -> (String, String, Option<String>) {
        (type_.into(), status.into(), reason.map(String::from))
    }

    #[test]
    fn starting_an_update() {
        let now = Time(Timestamp::UNIX_EPOCH);
        let gate = IN_PLACE_UPDATE_READY;
        let cases = [
            // Upstream I1: no ContainersReady condition, Ready untouched.
            (
                "gate True, no ContainersReady",
                pod(&[gate], vec![cond(gate, "True"), cond("Ready", "True")]),
                vec![s(gate, "False", Some("StartInPlaceUpdate"))],
            ),
            (
                "ready pod goes NotReady at once",
                pod(
                    &[gate],
                    vec![cond("ContainersReady", "True"), cond(gate, "True"), cond("Ready", "True")],
                ),
                vec![
                    s(gate, "False", Some("StartInPlaceUpdate")),
                    s("Ready", "False", Some("ReadinessGatesNotReady")),
                ],
            ),
            (
                "already False and NotReady",
                pod(
                    &[gate],
                    vec![cond("ContainersReady", "True"), cond(gate, "False"), cond("Ready", "False")],
                ),
                vec![],
            ),
            (
                "no Ready condition yet",
                pod(&[gate], vec![cond("ContainersReady", "True")]),
                vec![s(gate, "False", Some("StartInPlaceUpdate"))],
            ),
        ];
        for (name, pod, expected) in cases {
            assert_eq!(summary(&start_update_conditions(&pod, &now)), expected, "{name}");
        }
        let both = pod(
            &[gate, "other"],
            vec![cond("ContainersReady", "True"), cond(gate, "True"), cond("Ready", "True")],
        );
        let written = start_update_conditions(&both, &now);
        assert_eq!(
            written[1].message.as_deref(),
            Some(
                "the status of pod readiness gate \"InPlaceUpdateReady\" is not \"True\", but False, corresponding condition of pod readiness gate \"other\" does not exist."
            )
        );
    }

    #[test]
    fn readiness_gate_injected_once() {
        let mut spec = PodSpec::default();
        inject_readiness_gate(&mut spec);
        inject_readiness_gate(&mut spec);
        assert_eq!(spec.readiness_gates.as_ref().map(Vec::len), Some(1));
        assert!(has_readiness_gate(&Pod { spec: Some(spec), ..Default::default() }));
    }

    #[test]
    fn finishing_an_update() {
        // Upstream TestRefresh condition cases.
        let now = Time(Timestamp::UNIX_EPOCH);
        let gate = IN_PLACE_UPDATE_READY;
        let cases = [
            ("no readiness gate", pod(&[], vec![]), None),
            ("no existing condition", pod(&[gate], vec![]), Some("True")),
            (
                "existing condition False",
                pod(&[gate], vec![cond("ContainersReady", "True"), cond(gate, "False")]),
                Some("True"),
            ),
            (
                "existing condition True",
                pod(&[gate], vec![cond("ContainersReady", "False"), cond(gate, "True")]),
                None,
            ),
        ];
        for (name, pod, expected) in cases {
            assert_eq!(
                finish_update_condition(&pod, &now).map(|c| c.status),
                expected.map(String::from),
                "{name}"
            );
        }
    }
}
