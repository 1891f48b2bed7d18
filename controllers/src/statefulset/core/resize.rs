//! PVC resize on rolling update (`volumeClaimUpdateStrategy.type: OnPodRollingUpdate`, gate
//! `StatefulSetAutoResizePVCGate`; upstream `statefulset_resize_pvc.go` and
//! `pkg/util/pvc`). Before a pod is rolled, each of its PVCs that requests less storage than its
//! claim template is expanded to the template's resources, and the pod waits until the
//! expansion completes (capacity reached, or the file system resize is pending on the node). A
//! PVC that differs from its template in anything but size is never patched: it must be deleted.
//! Missing and terminating PVCs are skipped, as upstream.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kruise_crds::apps::v1beta1::{StatefulSet, VolumeClaimUpdateStrategyType};
use kube::ResourceExt;

use super::{
    identity::{claim_name, ordinal_of},
    options::CoreOptions,
    status::claim_compatible_and_ready,
};

/// Annotation upstream puts on a PVC it resized: the set's name.
pub const PVC_OWNED_BY_STS: &str = "apps.kruise.io/owned-by-asts";

/// Whether the set resizes PVCs as it rolls pods.
pub fn resize_enabled(set: &StatefulSet, options: &CoreOptions) -> bool {
    options.auto_resize_pvc
        && set.spec.volume_claim_update_strategy.type_ == VolumeClaimUpdateStrategyType::OnPodRollingUpdate
}

/// How one PVC compares with its claim template (upstream `CompareWithCheckFn` with
/// `IsPVCNeedExpand`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimComparison {
    /// The PVC already requests at least the template's storage.
    Matched,
    /// Only the size differs and it is smaller: expand it.
    Expand,
    /// Storage class or access modes differ: it cannot be patched.
    Incompatible,
}

/// Compares a PVC with its template.
pub fn compare_claim(claim: &PersistentVolumeClaim, template: &PersistentVolumeClaim) -> ClaimComparison {
    let (claim_spec, template_spec) =
        (claim.spec.clone().unwrap_or_default(), template.spec.clone().unwrap_or_default());
    let class_differs = matches!(
        (&claim_spec.storage_class_name, &template_spec.storage_class_name),
        (Some(a), Some(b)) if a != b
    );
    if class_differs
        || claim_spec.access_modes.unwrap_or_default() != template_spec.access_modes.unwrap_or_default()
    {
        return ClaimComparison::Incompatible;
    }
    let (compatible, _) = claim_compatible_and_ready(claim, template);
    if compatible { ClaimComparison::Matched } else { ClaimComparison::Expand }
}

/// The pod's existing, not terminating PVCs with their templates.
pub fn pod_claims<'a>(
    set: &'a StatefulSet,
    pod: &Pod,
    claims: &'a BTreeMap<String, PersistentVolumeClaim>,
) -> Vec<(&'a PersistentVolumeClaim, &'a PersistentVolumeClaim)> {
    let Some(ordinal) = ordinal_of(pod) else { return Vec::new() };
    let set_name = set.name_any();
    set.spec
        .volume_claim_templates
        .iter()
        .filter_map(|template| {
            let name = claim_name(template.metadata.name.as_deref().unwrap_or_default(), &set_name, ordinal);
            let claim = claims.get(&name).filter(|c| c.metadata.deletion_timestamp.is_none())?;
            Some((claim, template))
        })
        .collect()
}

/// Every PVC of the pod requests at least its template's storage (upstream
/// `IsClaimsCompatible`).
pub fn claims_compatible(
    set: &StatefulSet,
    pod: &Pod,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
) -> bool {
    pod_claims(set, pod, claims)
        .into_iter()
        .all(|(claim, template)| compare_claim(claim, template) == ClaimComparison::Matched)
}

/// Every PVC of the pod has the capacity it requests (upstream `IsOwnedPVCsReady`).
pub fn claims_ready(set: &StatefulSet, pod: &Pod, claims: &BTreeMap<String, PersistentVolumeClaim>) -> bool {
    pod_claims(set, pod, claims)
        .into_iter()
        .all(|(claim, template)| claim_compatible_and_ready(claim, template).1)
}

/// Every PVC of the pod finished its expansion: compatible and ready, or compatible with the
/// file system resize pending on the node (upstream `IsOwnedPVCsCompleted`).
pub fn claims_completed(
    set: &StatefulSet,
    pod: &Pod,
    claims: &BTreeMap<String, PersistentVolumeClaim>,
) -> bool {
    pod_claims(set, pod, claims).into_iter().all(|(claim, template)| {
        let (compatible, ready) = claim_compatible_and_ready(claim, template);
        let pending =
            claim.status.as_ref().and_then(|s| s.conditions.as_ref()).is_some_and(|c| {
                c.iter().any(|c| c.type_ == "FileSystemResizePending" && c.status == "True")
            });
        compatible && (ready || pending)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::{
        api::core::v1::{
            PersistentVolumeClaimCondition, PersistentVolumeClaimSpec, PersistentVolumeClaimStatus,
            VolumeResourceRequirements,
        },
        apimachinery::pkg::api::resource::Quantity,
    };

    use super::*;
    use crate::statefulset::core::{
        fixtures::{P, set},
        identity::claims_for,
    };

    fn sized(request: &str, capacity: Option<&str>, class: Option<&str>) -> PersistentVolumeClaim {
        let mut claim = claims_for(&set(1), 0).remove(0);
        claim.spec = Some(PersistentVolumeClaimSpec {
            storage_class_name: class.map(str::to_string),
            resources: Some(VolumeResourceRequirements {
                requests: Some([("storage".to_string(), Quantity(request.into()))].into()),
                ..Default::default()
            }),
            ..Default::default()
        });
        claim.status = capacity.map(|c| PersistentVolumeClaimStatus {
            capacity: Some([("storage".to_string(), Quantity(c.into()))].into()),
            ..Default::default()
        });
        claim
    }

    fn set_with_template(request: &str) -> StatefulSet {
        let mut sts = set(1);
        sts.spec.volume_claim_templates[0].spec = sized(request, None, None).spec;
        sts
    }

    /// Upstream `TestTryPatchPVC` (the decision part).
    #[test]
    fn comparisons() {
        let template = sized("2Gi", None, Some("fast"));
        let cases = [
            (sized("1Gi", Some("1Gi"), Some("fast")), ClaimComparison::Expand),
            (sized("2Gi", Some("1Gi"), Some("fast")), ClaimComparison::Matched),
            (sized("3Gi", None, None), ClaimComparison::Matched),
            (sized("1Gi", None, Some("slow")), ClaimComparison::Incompatible),
        ];
        for (claim, expected) in cases {
            assert_eq!(compare_claim(&claim, &template), expected, "{:?}", claim.spec);
        }
    }

    /// Upstream `TestIsOwnedPVCsReady`, `TestIsClaimsCompatible`, `TestIsOwnedPVCsCompleted`.
    #[test]
    fn readiness_compatibility_and_completion() {
        let sts = set_with_template("2Gi");
        let pod = P::new(0, "r").pod();
        let with = |claim: PersistentVolumeClaim| BTreeMap::from([("data-web-0".to_string(), claim)]);
        let small = with(sized("1Gi", Some("1Gi"), None));
        assert!(!claims_compatible(&sts, &pod, &small));
        assert!(claims_ready(&sts, &pod, &small), "ready is about its own request");
        assert!(!claims_completed(&sts, &pod, &small));
        let patched = with(sized("2Gi", Some("1Gi"), None));
        assert!(claims_compatible(&sts, &pod, &patched));
        assert!(!claims_ready(&sts, &pod, &patched));
        assert!(!claims_completed(&sts, &pod, &patched));
        let mut pending = sized("2Gi", Some("1Gi"), None);
        pending.status.as_mut().unwrap().conditions = Some(vec![PersistentVolumeClaimCondition {
            type_: "FileSystemResizePending".into(),
            status: "True".into(),
            ..Default::default()
        }]);
        assert!(claims_completed(&sts, &pod, &with(pending)), "the node finishes the resize");
        let grown = with(sized("2Gi", Some("2Gi"), None));
        assert!(
            claims_compatible(&sts, &pod, &grown)
                && claims_ready(&sts, &pod, &grown)
                && claims_completed(&sts, &pod, &grown)
        );
        assert!(claims_compatible(&sts, &pod, &BTreeMap::new()), "a missing PVC is skipped");
        let mut gone = sized("1Gi", None, None);
        gone.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ));
        assert!(claims_compatible(&sts, &pod, &with(gone)), "a terminating PVC is skipped");
    }

    #[test]
    fn enabled_by_gate_and_strategy() {
        let mut sts = set(1);
        let on = CoreOptions { auto_resize_pvc: true, ..Default::default() };
        assert!(!resize_enabled(&sts, &on));
        sts.spec.volume_claim_update_strategy.type_ = VolumeClaimUpdateStrategyType::OnPodRollingUpdate;
        assert!(resize_enabled(&sts, &on));
        assert!(!resize_enabled(&sts, &CoreOptions::default()), "the gate is off upstream");
    }
}
