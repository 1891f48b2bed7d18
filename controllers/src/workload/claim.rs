//! Claiming (upstream `ClaimPods` / `PodControllerRefManager`): of the pods a workload's owner
//! index returns (the pods it controls and the orphans of its namespace), which it keeps, which
//! it releases (it controls them but no longer selects them) and which orphans it adopts. Each
//! workload says what it keeps and what it adopts (CloneSet, Advanced StatefulSet and Advanced
//! DaemonSet differ in the empty selector, ordinal names and finished pods); the reconciler
//! executes the decision with [`super::pod_ops::release`] and [`super::pod_ops::adopt`].

use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;

use super::pods::is_terminating;

/// The UID of the pod's controlling owner, if it has one.
pub fn controller_uid(pod: &Pod) -> Option<&str> {
    pod.owner_references().iter().find(|r| r.controller == Some(true)).map(|r| r.uid.as_str())
}

/// What a workload does with one pod it may claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The workload controls the pod and still wants it: it is one of its pods.
    Keep,
    /// The workload controls the pod but no longer wants it, and the pod is not being deleted:
    /// drop the controller reference.
    Release,
    /// An orphan the workload wants: make the workload its controller (and look again once the
    /// cache shows it).
    Adopt,
    /// Not the workload's: another controller's pod, a pod being deleted it no longer wants, or
    /// an orphan it does not adopt.
    Ignore,
}

/// Decides [`Claim`] for one pod of the workload with UID `owner_uid`: a pod it controls is kept
/// when `keeps` says so and otherwise released (unless it is terminating); an orphan is adopted
/// when `adopts` says so.
pub fn claim(
    pod: &Pod,
    owner_uid: &str,
    keeps: impl FnOnce(&Pod) -> bool,
    adopts: impl FnOnce(&Pod) -> bool,
) -> Claim {
    match controller_uid(pod) {
        Some(owner) if owner == owner_uid => {
            if keeps(pod) {
                Claim::Keep
            } else if !is_terminating(pod) {
                Claim::Release
            } else {
                Claim::Ignore
            }
        }
        None if adopts(pod) => Claim::Adopt,
        _ => Claim::Ignore,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::{
        apimachinery::pkg::apis::meta::v1::{OwnerReference, Time},
        jiff::Timestamp,
    };

    use super::*;

    fn owned_by(uid: &str, controller: bool) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.owner_references = Some(vec![OwnerReference {
            uid: uid.into(),
            controller: Some(controller),
            ..Default::default()
        }]);
        pod
    }

    fn terminating(mut pod: Pod) -> Pod {
        pod.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
        pod
    }

    #[test]
    fn keep_release_adopt_or_ignore() {
        let answer = |wanted: bool| move |_: &Pod| wanted;
        // (case, pod, keeps, adopts, decision)
        let cases: [(&str, Pod, bool, bool, Claim); 8] = [
            ("ours, wanted", owned_by("u1", true), true, false, Claim::Keep),
            ("ours, not wanted", owned_by("u1", true), false, true, Claim::Release),
            ("ours, not wanted, terminating", terminating(owned_by("u1", true)), false, true, Claim::Ignore),
            ("ours, wanted, terminating", terminating(owned_by("u1", true)), true, false, Claim::Keep),
            ("another controller's", owned_by("u2", true), true, true, Claim::Ignore),
            ("orphan, adoptable", Pod::default(), false, true, Claim::Adopt),
            ("orphan, not adoptable", Pod::default(), true, false, Claim::Ignore),
            ("owned but not controlled: an orphan", owned_by("u1", false), false, true, Claim::Adopt),
        ];
        for (name, pod, keeps, adopts, expected) in cases {
            let got = claim(&pod, "u1", answer(keeps), answer(adopts));
            assert_eq!(got, expected, "{name}");
        }
        assert_eq!(controller_uid(&owned_by("u1", true)), Some("u1"));
        assert_eq!(controller_uid(&owned_by("u1", false)), None);
    }
}
