//! PVC retention (`persistentVolumeClaimRetentionPolicy`, gate `StatefulSetAutoDeletePVC`;
//! upstream `claimOwnerMatchesSetAndPod`, `updateClaimOwnerRefForSetAndPod`, `PodClaimIsStale`).
//!
//! Nothing deletes a PVC directly: the controller sets owner references and the garbage
//! collector does the rest. `whenDeleted: Delete` makes the set an owner of every PVC, so the
//! PVCs go with the set; `whenScaled: Delete` makes the pod of a condemned ordinal (one that a
//! scale-down removes) the owner of its PVCs, so they go with that pod. With `Retain` for both
//! a PVC has neither owner and outlives everything.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{PersistentVolumeClaim, Pod},
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};
use kruise_crds::apps::v1beta1::{PersistentVolumeClaimRetentionPolicyType, StatefulSet};
use kube::{Resource, ResourceExt};

use super::identity::{claim_name, ordinal_of};

/// Which owners the PVCs of one pod should have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DesiredOwners {
    /// The set owns the PVC (it goes when the set is deleted).
    pub set: bool,
    /// The pod owns the PVC (it goes when the condemned pod is deleted).
    pub pod: bool,
}

fn is_delete(policy: &PersistentVolumeClaimRetentionPolicyType) -> bool {
    *policy == PersistentVolumeClaimRetentionPolicyType::Delete
}

/// The owners the PVCs of a pod should have: the set when `whenDeleted` is `Delete` (unless the
/// pod is scaled down and `whenScaled` is `Delete`, then the pod instead). An unknown policy
/// value counts as `Retain`.
pub fn desired_owners(set: &StatefulSet, pod_scaled_down: bool) -> DesiredOwners {
    let policy = set.spec.persistent_volume_claim_retention_policy.clone().unwrap_or_default();
    let (when_deleted, when_scaled) = (is_delete(&policy.when_deleted), is_delete(&policy.when_scaled));
    let pod = when_scaled && pod_scaled_down;
    DesiredOwners { set: when_deleted && !pod, pod }
}

fn has_owner(claim: &PersistentVolumeClaim, uid: &str) -> bool {
    !uid.is_empty() && claim.owner_references().iter().any(|r| r.uid == uid)
}

/// Whether the claim's owner references already say what `want` says.
pub fn claim_owners_match(
    claim: &PersistentVolumeClaim,
    set_uid: &str,
    pod_uid: &str,
    want: DesiredOwners,
) -> bool {
    has_owner(claim, set_uid) == want.set && has_owner(claim, pod_uid) == want.pod
}

/// The claim's owner references after adding or removing the set and the pod as `want` says,
/// or `None` when nothing changes. A pod without a UID (not created yet) is never added.
pub fn updated_claim_owners(
    claim: &PersistentVolumeClaim,
    set: &StatefulSet,
    pod: &Pod,
    want: DesiredOwners,
) -> Option<Vec<OwnerReference>> {
    let set_uid = set.uid().unwrap_or_default();
    let pod_uid = pod.uid().unwrap_or_default();
    let mut references = claim.owner_references().to_vec();
    let before = references.clone();
    let mut ensure = |present: bool, uid: &str, reference: OwnerReference| {
        if uid.is_empty() {
            return;
        }
        let has = references.iter().any(|r| r.uid == uid);
        if present && !has {
            references.push(reference);
        } else if !present && has {
            references.retain(|r| r.uid != uid);
        }
    };
    ensure(
        want.set,
        &set_uid,
        OwnerReference {
            api_version: StatefulSet::api_version(&()).to_string(),
            kind: StatefulSet::kind(&()).to_string(),
            name: set.name_any(),
            uid: set_uid.clone(),
            ..Default::default()
        },
    );
    ensure(
        want.pod,
        &pod_uid,
        OwnerReference {
            api_version: "v1".into(),
            kind: "Pod".into(),
            name: pod.name_any(),
            uid: pod_uid.clone(),
            ..Default::default()
        },
    );
    (references != before).then_some(references)
}

/// The existing PVCs of the pod's ordinal, one per claim template that has one.
pub fn existing_claims<'a>(
    set: &StatefulSet,
    pod: &Pod,
    claims: &'a BTreeMap<String, PersistentVolumeClaim>,
) -> Vec<&'a PersistentVolumeClaim> {
    let Some(ordinal) = ordinal_of(pod) else { return Vec::new() };
    let set_name = set.name_any();
    set.spec
        .volume_claim_templates
        .iter()
        .filter_map(|template| {
            claims.get(&claim_name(template.metadata.name.as_deref().unwrap_or_default(), &set_name, ordinal))
        })
        .collect()
}

/// Whether every existing PVC of the pod has the owners the policy asks for (upstream
/// `ClaimsMatchRetentionPolicy`; a missing PVC is picked up later and counts as matching).
pub fn claims_match_retention(
    set: &StatefulSet,
    pod: &Pod,
    pod_scaled_down: bool,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
) -> bool {
    let want = desired_owners(set, pod_scaled_down);
    let (set_uid, pod_uid) = (set.uid().unwrap_or_default(), pod.uid().unwrap_or_default());
    existing_claims(set, pod, claims)
        .into_iter()
        .all(|claim| claim_owners_match(claim, &set_uid, &pod_uid, want))
}

/// Whether a PVC of the ordinal still belongs to an earlier pod of the same name (upstream
/// `PodClaimIsStale`): with `whenScaled: Delete` such a PVC is about to be collected, and a new
/// pod must not start on it. `pod_uid` is the current pod's UID, empty when there is none yet.
pub fn claim_is_stale(
    set: &StatefulSet,
    pod_name: &str,
    pod_uid: &str,
    ordinal: i32,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
) -> bool {
    let policy = set.spec.persistent_volume_claim_retention_policy.clone().unwrap_or_default();
    if !is_delete(&policy.when_scaled) {
        return false;
    }
    let set_name = set.name_any();
    set.spec.volume_claim_templates.iter().any(|template| {
        claims
            .get(&claim_name(template.metadata.name.as_deref().unwrap_or_default(), &set_name, ordinal))
            .is_some_and(|claim| {
                claim.owner_references().iter().any(|r| r.name == pod_name && r.uid != pod_uid)
            })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use kruise_crds::apps::v1beta1::StatefulSetPersistentVolumeClaimRetentionPolicy;

    use super::*;
    use crate::statefulset::core::{
        fixtures::{P, set},
        identity::claims_for,
    };

    fn policy(when_deleted: &str, when_scaled: &str) -> StatefulSet {
        let mut sts = set(3);
        sts.spec.persistent_volume_claim_retention_policy =
            Some(StatefulSetPersistentVolumeClaimRetentionPolicy {
                when_deleted: when_deleted.into(),
                when_scaled: when_scaled.into(),
            });
        sts
    }

    fn owned(set_owner: bool, pod_owner: bool) -> PersistentVolumeClaim {
        let mut claim = claims_for(&set(3), 1).remove(0);
        let mut references = Vec::new();
        if set_owner {
            references.push(OwnerReference {
                uid: "set-uid".into(),
                name: "web".into(),
                ..Default::default()
            });
        }
        if pod_owner {
            references.push(OwnerReference {
                uid: "uid-1".into(),
                name: "web-1".into(),
                ..Default::default()
            });
        }
        claim.metadata.owner_references = Some(references);
        claim
    }

    /// Upstream `TestClaimOwnerMatchesSetAndPod` and `TestUpdateClaimOwnerRefForSetAndPod`.
    #[test]
    fn owners_follow_the_policy() {
        // (whenDeleted, whenScaled, scaled down) -> (set owner, pod owner)
        let cases = [
            ("Retain", "Retain", false, (false, false)),
            ("Retain", "Retain", true, (false, false)),
            ("Delete", "Retain", false, (true, false)),
            ("Delete", "Retain", true, (true, false)),
            ("Retain", "Delete", false, (false, false)),
            ("Retain", "Delete", true, (false, true)),
            ("Delete", "Delete", false, (true, false)),
            ("Delete", "Delete", true, (false, true)),
            ("Sometimes", "Never", true, (false, false)),
        ];
        let pod = P::new(1, "r").pod();
        for (when_deleted, when_scaled, scaled_down, (want_set, want_pod)) in cases {
            let sts = policy(when_deleted, when_scaled);
            let want = desired_owners(&sts, scaled_down);
            assert_eq!(
                (want.set, want.pod),
                (want_set, want_pod),
                "{when_deleted}/{when_scaled}/{scaled_down}"
            );
            for (has_set, has_pod) in [(false, false), (true, false), (false, true), (true, true)] {
                let claim = owned(has_set, has_pod);
                let matches = claim_owners_match(&claim, "set-uid", "uid-1", want);
                assert_eq!(matches, (has_set, has_pod) == (want_set, want_pod));
                let updated = updated_claim_owners(&claim, &sts, &pod, want);
                assert_eq!(updated.is_none(), matches, "an update exactly when the owners do not match");
                let mut fixed = claim.clone();
                if let Some(references) = updated {
                    fixed.metadata.owner_references = Some(references);
                }
                assert!(claim_owners_match(&fixed, "set-uid", "uid-1", want));
            }
        }
        let fixed = updated_claim_owners(
            &owned(false, false),
            &policy("Delete", "Delete"),
            &pod,
            DesiredOwners { set: true, pod: true },
        )
        .unwrap();
        assert_eq!(fixed[0].kind, "StatefulSet");
        assert_eq!(fixed[0].api_version, "apps.kruise.io/v1beta1");
        assert_eq!(
            (fixed[1].kind.as_str(), fixed[1].api_version.as_str(), fixed[1].controller),
            ("Pod", "v1", None)
        );
    }

    #[test]
    fn matching_reads_existing_claims_only() {
        let sts = policy("Delete", "Retain");
        let pod = P::new(1, "r").pod();
        let mut claims = BTreeMap::new();
        assert!(claims_match_retention(&sts, &pod, false, &claims), "a missing claim matches");
        claims.insert("data-web-1".to_string(), owned(false, false));
        assert!(!claims_match_retention(&sts, &pod, false, &claims));
        claims.insert("data-web-1".to_string(), owned(true, false));
        assert!(claims_match_retention(&sts, &pod, false, &claims));
    }

    /// Upstream `TestPodClaimIsStale`.
    #[test]
    fn stale_claims() {
        let with_ref = |uid: &str| {
            let mut claim = claims_for(&set(3), 1).remove(0);
            claim.metadata.owner_references =
                Some(vec![OwnerReference { name: "web-1".into(), uid: uid.into(), ..Default::default() }]);
            claim
        };
        let cases = [
            ("missing", None, "uid-1", false),
            ("exists, no refs", Some(claims_for(&set(3), 1).remove(0)), "uid-1", false),
            ("owned by this pod", Some(with_ref("uid-1")), "uid-1", false),
            ("owned by an earlier pod", Some(with_ref("old")), "uid-1", true),
            ("owned, pod not created", Some(with_ref("old")), "", true),
        ];
        for (name, claim, pod_uid, expected) in cases {
            let claims: BTreeMap<String, PersistentVolumeClaim> =
                claim.into_iter().map(|c| ("data-web-1".to_string(), c)).collect();
            assert_eq!(
                claim_is_stale(&policy("Retain", "Delete"), "web-1", pod_uid, 1, &claims),
                expected,
                "{name}"
            );
            assert!(
                !claim_is_stale(&policy("Delete", "Retain"), "web-1", pod_uid, 1, &claims),
                "{name}: retained claims are never stale"
            );
        }
    }
}
