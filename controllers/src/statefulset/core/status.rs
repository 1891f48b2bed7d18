//! The status an Advanced StatefulSet reports (upstream `updateStatus`, `computeReplicaStatus`,
//! `completeRollingUpdate`, `updatePVCStatus`, `SetStatefulsetCondition`).
//!
//! Counted over the set's pods with an ordinal (desired and condemned): `replicas` are created
//! pods; `readyReplicas` running and Ready; `availableReplicas` also available for
//! `minReadySeconds` (and in lifecycle `Normal`); `currentReplicas` / `updatedReplicas` created,
//! not terminating and at the current / update revision; `updatedReadyReplicas` and
//! `updatedAvailableReplicas` the ready / available ones at the update revision. When every pod
//! is updated and ready the rolling update is complete: `currentRevision` becomes the update
//! revision. Conditions `FailedCreatePod` / `FailedUpdatePod` report this round's failures.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{
        apps::v1::StatefulSetCondition,
        core::v1::{PersistentVolumeClaim, Pod},
    },
    apimachinery::pkg::apis::meta::v1::Time,
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::{
        STATEFULSET_CONDITION_FAILED_CREATE_POD, STATEFULSET_CONDITION_FAILED_UPDATE_POD, StatefulSet,
        StatefulSetStatus, StatefulSetUpdateStrategyType, VolumeClaimStatus,
    },
    quantity::Quantity,
};
use kube::ResourceExt;

use super::{
    identity::claim_name,
    pods::{is_created, is_running_and_ready, running_and_available},
    scale::{Members, Slot, min_ready_seconds},
};
use crate::workload::pods::{is_terminating, revision_hash};

/// A failure of this round that the status reports as a condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncFailure {
    /// Creating a pod (or its PVCs) failed: `FailedCreatePod`.
    CreatePod,
    /// Updating or deleting a pod failed: `FailedUpdatePod`.
    UpdatePod,
}

impl SyncFailure {
    fn condition_type(self) -> &'static str {
        match self {
            Self::CreatePod => STATEFULSET_CONDITION_FAILED_CREATE_POD,
            Self::UpdatePod => STATEFULSET_CONDITION_FAILED_UPDATE_POD,
        }
    }
}

/// The replica counters over `pods`.
pub fn count_replicas<'a>(
    status: &mut StatefulSetStatus,
    pods: impl Iterator<Item = &'a Pod>,
    min_ready_seconds: i32,
    current_revision: &str,
    update_revision: &str,
    now: Timestamp,
) {
    status.replicas = 0;
    status.ready_replicas = 0;
    status.available_replicas = 0;
    status.current_replicas = 0;
    status.updated_replicas = 0;
    status.updated_ready_replicas = 0;
    status.updated_available_replicas = 0;
    for pod in pods {
        let created = is_created(pod);
        if created {
            status.replicas += 1;
        }
        let revision = revision_hash(pod);
        if is_running_and_ready(pod) {
            status.ready_replicas += 1;
            let available = running_and_available(pod, min_ready_seconds, now).0;
            if available {
                status.available_replicas += 1;
            }
            if revision == update_revision {
                status.updated_ready_replicas += 1;
                if available {
                    status.updated_available_replicas += 1;
                }
            }
        }
        if created && !is_terminating(pod) {
            if revision == current_revision {
                status.current_replicas += 1;
            }
            if revision == update_revision {
                status.updated_replicas += 1;
            }
        }
    }
}

/// How many PVCs of each claim template are compatible with it (request at least the
/// template's) and, of those, ready (capacity at least the request), over the desired slots
/// (upstream `updatePVCStatus`; terminating PVCs are skipped).
pub fn volume_claim_status(
    set: &StatefulSet,
    members: &Members<'_>,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
) -> Vec<VolumeClaimStatus> {
    let set_name = set.name_any();
    set.spec
        .volume_claim_templates
        .iter()
        .map(|template| {
            let template_name = template.metadata.name.clone().unwrap_or_default();
            let mut status =
                VolumeClaimStatus { volume_claim_name: template_name.clone(), ..Default::default() };
            for (index, slot) in members.slots.iter().enumerate() {
                if matches!(slot, Slot::Reserved) {
                    continue;
                }
                let name = claim_name(&template_name, &set_name, members.range.ordinal_at(index));
                let Some(claim) = claims.get(&name).filter(|c| c.metadata.deletion_timestamp.is_none())
                else {
                    continue;
                };
                let (compatible, ready) = claim_compatible_and_ready(claim, template);
                if compatible {
                    status.compatible_replicas += 1;
                    if ready {
                        status.compatible_ready_replicas += 1;
                    }
                }
            }
            status
        })
        .collect()
}

/// A storage quantity of a resource list; absent counts as zero (Go's `ResourceList.Storage`).
fn storage(
    list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
) -> String {
    list.and_then(|l| l.get("storage")).map_or_else(|| "0".to_string(), |q| q.0.clone())
}

fn at_least(left: &str, right: &str) -> bool {
    Quantity::compare(left, right).is_some_and(|ordering| ordering != std::cmp::Ordering::Less)
}

/// Upstream `IsPVCCompatibleAndReady`: same storage class (when both name one) and access
/// modes; compatible when the claim requests at least what the template does; ready when its
/// capacity reached its request.
pub fn claim_compatible_and_ready(
    claim: &PersistentVolumeClaim,
    template: &PersistentVolumeClaim,
) -> (bool, bool) {
    let (claim_spec, template_spec) =
        (claim.spec.clone().unwrap_or_default(), template.spec.clone().unwrap_or_default());
    if let (Some(a), Some(b)) = (&claim_spec.storage_class_name, &template_spec.storage_class_name)
        && a != b
    {
        return (false, false);
    }
    if claim_spec.access_modes.unwrap_or_default() != template_spec.access_modes.unwrap_or_default() {
        return (false, false);
    }
    let request = storage(claim_spec.resources.as_ref().and_then(|r| r.requests.as_ref()));
    let wanted = storage(template_spec.resources.as_ref().and_then(|r| r.requests.as_ref()));
    let capacity = storage(claim.status.as_ref().and_then(|s| s.capacity.as_ref()));
    (at_least(&request, &wanted), at_least(&capacity, &request))
}

/// Everything [`compute_status`] reads besides the set and its members.
#[derive(Clone, Debug)]
pub struct StatusInputs<'a> {
    /// `status.currentRevision` to report (the current revision's name).
    pub current_revision: &'a str,
    /// The update revision's name.
    pub update_revision: &'a str,
    /// The (possibly raised) hash collision count.
    pub collision_count: i32,
    /// Current-revision pods this round's update took away.
    pub current_leaving: i32,
    /// Update-revision pods this round's update deleted.
    pub updated_leaving: i32,
    /// This round's failures.
    pub failures: &'a [(SyncFailure, String)],
    /// The namespace's PVCs by name.
    pub claims: &'a BTreeMap<String, PersistentVolumeClaim>,
    /// Now.
    pub now: Timestamp,
}

/// The status to write. A condition keeps its transition time while its status stays.
pub fn compute_status(
    set: &StatefulSet,
    members: &Members<'_>,
    inputs: &StatusInputs<'_>,
) -> StatefulSetStatus {
    let previous = set.status.clone().unwrap_or_default();
    let mut status = StatefulSetStatus {
        observed_generation: set.metadata.generation.unwrap_or(0),
        current_revision: inputs.current_revision.to_string(),
        update_revision: inputs.update_revision.to_string(),
        collision_count: Some(inputs.collision_count),
        label_selector: set
            .spec
            .selector
            .as_ref()
            .map(kruise_crds::selector::to_selector_string)
            .unwrap_or_default(),
        volume_claims: volume_claim_status(set, members, inputs.claims),
        ..Default::default()
    };
    count_replicas(
        &mut status,
        members.pods(),
        min_ready_seconds(set),
        inputs.current_revision,
        inputs.update_revision,
        inputs.now,
    );
    status.current_replicas -= inputs.current_leaving;
    status.updated_replicas -= inputs.updated_leaving;
    if set.spec.update_strategy.type_ == StatefulSetUpdateStrategyType::RollingUpdate
        && status.updated_replicas == status.replicas
        && status.ready_replicas == status.replicas
    {
        status.current_replicas = status.updated_replicas;
        status.current_revision = status.update_revision.clone();
    }
    for (failure, message) in inputs.failures {
        let type_ = failure.condition_type();
        if status.conditions.iter().any(|c| c.type_ == type_) {
            continue;
        }
        let kept = previous.conditions.iter().find(|c| c.type_ == type_ && c.status == "True");
        status.conditions.push(StatefulSetCondition {
            type_: type_.to_string(),
            status: "True".into(),
            last_transition_time: kept
                .and_then(|c| c.last_transition_time.clone())
                .or(Some(Time(inputs.now))),
            reason: None,
            message: Some(message.clone()),
        });
    }
    status
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::{
        api::core::v1::{PersistentVolumeClaimSpec, PersistentVolumeClaimStatus, VolumeResourceRequirements},
        apimachinery::pkg::api::resource::Quantity as K8sQuantity,
        jiff::SignedDuration,
    };
    use kruise_crds::apps::v1beta1::RollingUpdateStatefulSetStrategy;

    use super::*;
    use crate::statefulset::core::{
        fixtures::{P, now, set},
        identity::claims_for,
        options::CoreOptions,
        scale::members,
    };

    fn inputs<'a>(
        claims: &'a BTreeMap<String, PersistentVolumeClaim>,
        failures: &'a [(SyncFailure, String)],
    ) -> StatusInputs<'a> {
        StatusInputs {
            current_revision: "old",
            update_revision: "new",
            collision_count: 0,
            current_leaving: 0,
            updated_leaving: 0,
            failures,
            claims,
            now: now(),
        }
    }

    /// Upstream `TestStatefulSetUpdaterUpdatesSetStatus` and the status checks of
    /// `TestStatefulSetControlRollingUpdate`.
    #[test]
    fn counters_over_the_pods() {
        let mut sts = set(4);
        sts.spec.update_strategy.type_ = StatefulSetUpdateStrategyType::RollingUpdate;
        sts.spec.update_strategy.rolling_update =
            Some(RollingUpdateStatefulSetStrategy { min_ready_seconds: Some(10), ..Default::default() });
        let recently = now().checked_sub(SignedDuration::from_secs(2)).unwrap();
        let pods = vec![
            P::new(0, "old").pod(),
            P::new(1, "new").pod(),
            P::new(2, "new").ready_since(recently).pod(),
            P::new(3, "new").phase("Pending").pod(),
            P::new(4, "old").terminating().pod(),
        ];
        let claims = BTreeMap::new();
        let members = members(&sts, &pods, "new", &CoreOptions::default());
        let status = compute_status(&sts, &members, &inputs(&claims, &[]));
        assert_eq!(
            (status.replicas, status.ready_replicas, status.available_replicas),
            (5, 4, 3),
            "all created; 0, 1, 2 and the terminating 4 ready; 2 not yet available"
        );
        assert_eq!((status.current_replicas, status.updated_replicas), (1, 3));
        assert_eq!((status.updated_ready_replicas, status.updated_available_replicas), (2, 1));
        assert_eq!((status.current_revision.as_str(), status.update_revision.as_str()), ("old", "new"));
        assert_eq!(status.label_selector, "app=web");
        assert_eq!(status.observed_generation, 1);
        assert_eq!(status.collision_count, Some(0));
    }

    #[test]
    fn rolling_update_completes() {
        let mut sts = set(2);
        sts.spec.update_strategy.type_ = StatefulSetUpdateStrategyType::RollingUpdate;
        let pods = vec![P::new(0, "new").pod(), P::new(1, "new").pod()];
        let claims = BTreeMap::new();
        let members = members(&sts, &pods, "new", &CoreOptions::default());
        let status = compute_status(&sts, &members, &inputs(&claims, &[]));
        assert_eq!((status.current_revision.as_str(), status.current_replicas), ("new", 2));
        sts.spec.update_strategy.type_ = StatefulSetUpdateStrategyType::OnDelete;
        let status = compute_status(&sts, &members, &inputs(&claims, &[]));
        assert_eq!(
            (status.current_revision.as_str(), status.current_replicas),
            ("old", 0),
            "OnDelete never completes"
        );
    }

    #[test]
    fn failures_become_conditions_that_keep_their_time() {
        let mut sts = set(1);
        let claims = BTreeMap::new();
        let failures =
            [(SyncFailure::CreatePod, "quota".to_string()), (SyncFailure::CreatePod, "again".to_string())];
        let members = members(&sts, &[], "new", &CoreOptions::default());
        let status = compute_status(&sts, &members, &inputs(&claims, &failures));
        assert_eq!(status.conditions.len(), 1);
        assert_eq!(
            (status.conditions[0].type_.as_str(), status.conditions[0].message.as_deref()),
            ("FailedCreatePod", Some("quota"))
        );
        let mut earlier = status.clone();
        earlier.conditions[0].last_transition_time = Some(Time(Timestamp::UNIX_EPOCH));
        sts.status = Some(earlier);
        let status = compute_status(&sts, &members, &inputs(&claims, &failures));
        assert_eq!(status.conditions[0].last_transition_time, Some(Time(Timestamp::UNIX_EPOCH)));
        let status = compute_status(&sts, &members, &inputs(&claims, &[]));
        assert!(status.conditions.is_empty(), "a round without failures clears them");
    }

    fn sized(request: &str, capacity: Option<&str>) -> PersistentVolumeClaim {
        let mut claim = claims_for(&set(1), 0).remove(0);
        claim.spec = Some(PersistentVolumeClaimSpec {
            resources: Some(VolumeResourceRequirements {
                requests: Some([("storage".to_string(), K8sQuantity(request.into()))].into()),
                ..Default::default()
            }),
            ..Default::default()
        });
        claim.status = capacity.map(|c| PersistentVolumeClaimStatus {
            capacity: Some([("storage".to_string(), K8sQuantity(c.into()))].into()),
            ..Default::default()
        });
        claim
    }

    /// Upstream `TestIsClaimsCompatible` / `TestIsOwnedPVCsReady` in spirit.
    #[test]
    fn claim_compatibility() {
        let template = sized("2Gi", None);
        let cases = [
            (sized("1Gi", Some("1Gi")), (false, true)),
            (sized("2Gi", None), (true, false)),
            (sized("2Gi", Some("2Gi")), (true, true)),
            (sized("3Gi", Some("2Gi")), (true, false)),
            (sized("2048Mi", Some("2Gi")), (true, true)),
        ];
        for (claim, expected) in cases {
            assert_eq!(claim_compatible_and_ready(&claim, &template), expected, "{:?}", claim.spec);
        }
        let mut other_class = sized("2Gi", Some("2Gi"));
        other_class.spec.as_mut().unwrap().storage_class_name = Some("fast".into());
        let mut classed = template.clone();
        classed.spec.as_mut().unwrap().storage_class_name = Some("slow".into());
        assert_eq!(claim_compatible_and_ready(&other_class, &classed), (false, false));
        assert_eq!(
            claim_compatible_and_ready(&other_class, &template),
            (true, true),
            "no class in the template"
        );

        let sts = set(2);
        let claims: BTreeMap<String, PersistentVolumeClaim> = [
            ("data-web-0".to_string(), sized("0", Some("1Gi"))),
            ("data-web-1".to_string(), sized("0", None)),
        ]
        .into();
        let members = members(&sts, &[], "new", &CoreOptions::default());
        let status = volume_claim_status(&sts, &members, &claims);
        assert_eq!(
            status,
            vec![VolumeClaimStatus {
                volume_claim_name: "data".into(),
                compatible_replicas: 2,
                compatible_ready_replicas: 2
            }]
        );
    }
}
