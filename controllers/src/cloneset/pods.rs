//! The pods and PVCs a CloneSet creates (pure): pod `<cloneset>-<instance id>` from a revision's
//! template, with the revision labels, the instance id, the lifecycle state `PreparingNormal`,
//! the `InPlaceUpdateReady` readiness gate, one volume per claim template, and the controller
//! owner reference; PVCs `<claim>-<cloneset>-<id>` labelled with the selector and the id.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::{
    api::core::v1::{
        PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodReadinessGate, PodTemplateSpec,
        Volume,
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
    jiff::Timestamp,
};
use kruise_crds::{
    apps::v1beta1::CloneSet,
    common::{
        IN_PLACE_UPDATE_READY, LIFECYCLE_STATE_KEY, LIFECYCLE_TIMESTAMP_KEY,
        well_known::{CLONESET_INSTANCE_ID, CONTROLLER_REVISION_HASH, POD_TEMPLATE_HASH},
    },
};
use kube::{Resource, ResourceExt};
use rand::Rng;

use crate::workload::revision::short_hash;

const ID_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A random instance id of 5 characters (Kubernetes' `rand.String(5)` alphabet).
pub fn random_instance_id() -> String {
    let mut rng = rand::rng();
    (0..5).map(|_| ID_ALPHABET[rng.random_range(0..ID_ALPHABET.len())] as char).collect()
}

/// The name of a claim's PVC for an instance.
pub fn pvc_name(claim: &str, cloneset: &str, id: &str) -> String {
    format!("{claim}-{cloneset}-{id}")
}

/// The controller reference pods and PVCs carry.
pub fn owner_reference(cloneset: &CloneSet) -> Option<OwnerReference> {
    let mut reference = cloneset.controller_owner_ref(&())?;
    reference.block_owner_deletion = Some(true);
    Some(reference)
}

/// Labels a pod gets for its revision: the full revision name and its short hash.
pub fn revision_labels(revision: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (CONTROLLER_REVISION_HASH.to_string(), revision.to_string()),
        (POD_TEMPLATE_HASH.to_string(), short_hash(revision).to_string()),
    ])
}

/// A new pod of `template` at `revision` with instance `id`.
pub fn new_pod(
    cloneset: &CloneSet,
    template: &PodTemplateSpec,
    revision: &str,
    id: &str,
    now: Timestamp,
) -> Pod {
    let name = cloneset.name_any();
    let template_meta = template.metadata.clone().unwrap_or_default();
    let mut labels = template_meta.labels.unwrap_or_default();
    labels.extend(revision_labels(revision));
    labels.insert(CLONESET_INSTANCE_ID.into(), id.to_string());
    labels.insert(LIFECYCLE_STATE_KEY.into(), "PreparingNormal".into());
    let mut annotations = template_meta.annotations.unwrap_or_default();
    annotations.insert(LIFECYCLE_TIMESTAMP_KEY.into(), now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
    let mut spec = template.spec.clone().unwrap_or_default();
    let gates = spec.readiness_gates.get_or_insert_with(Vec::new);
    if !gates.iter().any(|g| g.condition_type == IN_PLACE_UPDATE_READY) {
        gates.push(PodReadinessGate { condition_type: IN_PLACE_UPDATE_READY.into() });
    }
    for claim in &cloneset.spec.volume_claim_templates {
        let claim_name = claim.metadata.name.clone().unwrap_or_default();
        let volume = Volume {
            name: claim_name.clone(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: pvc_name(&claim_name, &name, id),
                read_only: None,
            }),
            ..Default::default()
        };
        let volumes = spec.volumes.get_or_insert_with(Vec::new);
        volumes.retain(|v| v.name != claim_name);
        volumes.push(volume);
    }
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("{name}-{id}")),
            namespace: cloneset.namespace(),
            labels: Some(labels),
            annotations: Some(annotations),
            finalizers: template_meta.finalizers,
            owner_references: owner_reference(cloneset).map(|r| vec![r]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// The PVCs of instance `id` (one per claim template).
pub fn new_pvcs(cloneset: &CloneSet, id: &str) -> Vec<PersistentVolumeClaim> {
    let name = cloneset.name_any();
    let selector_labels =
        cloneset.spec.selector.as_ref().and_then(|s| s.match_labels.clone()).unwrap_or_default();
    cloneset
        .spec
        .volume_claim_templates
        .iter()
        .map(|claim| {
            let claim_name = claim.metadata.name.clone().unwrap_or_default();
            let mut labels = claim.metadata.labels.clone().unwrap_or_default();
            labels.extend(selector_labels.clone());
            labels.insert(CLONESET_INSTANCE_ID.into(), id.to_string());
            PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some(pvc_name(&claim_name, &name, id)),
                    namespace: cloneset.namespace(),
                    labels: Some(labels),
                    annotations: claim.metadata.annotations.clone(),
                    owner_references: owner_reference(cloneset).map(|r| vec![r]),
                    ..Default::default()
                },
                spec: claim.spec.clone(),
                status: None,
            }
        })
        .collect()
}

/// Instance ids to use for `count` new pods: first those whose PVCs remain from deleted pods
/// (when PVC reuse is on), then fresh random ones unused by any pod or PVC.
pub fn instance_ids(
    count: usize,
    pod_ids: &HashSet<String>,
    pvc_ids: &HashSet<String>,
    reuse_pvcs: bool,
    mut random: impl FnMut() -> String,
) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    if reuse_pvcs {
        let mut reusable: Vec<&String> = pvc_ids.iter().filter(|id| !pod_ids.contains(*id)).collect();
        reusable.sort();
        ids.extend(reusable.into_iter().take(count).cloned());
    }
    let mut attempts = 0;
    while ids.len() < count && attempts < count * 100 + 100 {
        attempts += 1;
        let id = random();
        if !pod_ids.contains(&id) && !pvc_ids.contains(&id) && !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Container, PersistentVolumeClaimSpec, PodSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use kruise_crds::apps::v1beta1::CloneSetSpec;

    use super::*;

    fn cloneset() -> CloneSet {
        let mut cs = CloneSet::new(
            "web",
            CloneSetSpec {
                selector: Some(LabelSelector {
                    match_labels: Some([("app".to_string(), "web".to_string())].into()),
                    ..Default::default()
                }),
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some([("app".to_string(), "web".to_string())].into()),
                        ..Default::default()
                    }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "main".into(),
                            image: Some("nginx".into()),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
                volume_claim_templates: vec![PersistentVolumeClaim {
                    metadata: ObjectMeta { name: Some("data".into()), ..Default::default() },
                    spec: Some(PersistentVolumeClaimSpec::default()),
                    status: None,
                }],
                ..Default::default()
            },
        );
        cs.metadata.namespace = Some("prod".into());
        cs.metadata.uid = Some("uid-1".into());
        cs
    }

    #[test]
    fn pods_carry_identity_revision_lifecycle_gate_and_storage() {
        let cs = cloneset();
        let pod = new_pod(&cs, &cs.spec.template, "web-abc12", "x7k2p", Timestamp::UNIX_EPOCH);
        assert_eq!(pod.metadata.name.as_deref(), Some("web-x7k2p"));
        let labels = pod.metadata.labels.clone().unwrap();
        assert_eq!(labels["app"], "web");
        assert_eq!(labels[CONTROLLER_REVISION_HASH], "web-abc12");
        assert_eq!(labels[POD_TEMPLATE_HASH], "abc12");
        assert_eq!(labels[CLONESET_INSTANCE_ID], "x7k2p");
        assert_eq!(labels[LIFECYCLE_STATE_KEY], "PreparingNormal");
        let spec = pod.spec.unwrap();
        assert_eq!(spec.readiness_gates.unwrap()[0].condition_type, IN_PLACE_UPDATE_READY);
        let volume = &spec.volumes.unwrap()[0];
        assert_eq!(volume.persistent_volume_claim.as_ref().unwrap().claim_name, "data-web-x7k2p");
        let owner = &pod.metadata.owner_references.unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.controller), ("CloneSet", Some(true)));
        let pvc = &new_pvcs(&cs, "x7k2p")[0];
        assert_eq!(pvc.metadata.name.as_deref(), Some("data-web-x7k2p"));
        assert_eq!(pvc.metadata.labels.as_ref().unwrap()[CLONESET_INSTANCE_ID], "x7k2p");
    }

    #[test]
    fn ids_reuse_orphaned_pvcs_first_and_never_collide() {
        let pods: HashSet<String> = ["aaaaa".to_string()].into();
        let pvcs: HashSet<String> = ["aaaaa".to_string(), "bbbbb".to_string()].into();
        let mut fresh = vec!["aaaaa".to_string(), "ccccc".to_string(), "ddddd".to_string()].into_iter();
        let ids = instance_ids(2, &pods, &pvcs, true, || fresh.next().unwrap_or_default());
        assert_eq!(ids, ["bbbbb", "ccccc"]);
        let mut fresh = vec!["eeeee".to_string()].into_iter();
        assert_eq!(instance_ids(1, &pods, &pvcs, false, || fresh.next().unwrap_or_default()), ["eeeee"]);
        assert_eq!(random_instance_id().len(), 5);
    }
}
