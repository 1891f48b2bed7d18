//! CloneSet revisions: the ControllerRevision of the CloneSet's template (upstream
//! `newRevision`: the template's labels plus `controller.kubernetes.io/hash`, the CloneSet's
//! annotations plus the hash of its volume claim templates, the CloneSet as controller), and how
//! the update revision is obtained through the API. The encoding, naming, equality, rollback
//! renumbering and history truncation are shared by every workload and live in
//! [`crate::workload::revision`].

use std::collections::BTreeMap;

use k8s_openapi::{
    api::apps::v1::ControllerRevision,
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, runtime::RawExtension},
};
use kruise_crds::{
    apps::v1beta1::CloneSet,
    gojson::{self, Types},
};
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::{Value, json};

use crate::{
    ControllerError,
    workload::revision::{
        REVISION_HASH_LABEL, RevisionPlan, create_revision, data_bytes, equal_data, plan_revision,
        renumber_revision, revision_data, revision_hash, revision_name,
    },
};

/// Annotation on a revision: the hash of the volume claim templates (a change recreates pods).
pub const VCT_HASH_ANNOTATION: &str = "kruise.io/cloneset-volumeclaimtemplate-hash";

/// The Go message of a PersistentVolumeClaim.
const PERSISTENT_VOLUME_CLAIM: &str = "k8s.io/api/core/v1.PersistentVolumeClaim";

/// The hash of the volume claim templates (upstream `PatchVCTemplateHash`; a change between two
/// revisions rules out an in-place update): empty without templates; else, as upstream computes
/// it, the claims reduced to name and spec and sorted by name, marshalled by Go
/// (`json.Marshal` of the typed slice), rendered as `spew` renders a byte slice
/// (`DeepHashObject`: `([]uint8)[123 34 ...]`), hashed with FNV-1a 32, in decimal. So revisions
/// upstream wrote and ours agree for the same templates.
pub fn vct_hash(cloneset: &CloneSet) -> String {
    let claims = &cloneset.spec.volume_claim_templates;
    if claims.is_empty() {
        return String::new();
    }
    let mut reduced: Vec<(String, Value)> = claims
        .iter()
        .map(|claim| {
            let name = claim.metadata.name.clone().unwrap_or_default();
            let value = json!({"metadata": {"name": name}, "spec": claim.spec});
            (name, value)
        })
        .collect();
    reduced.sort_by(|a, b| a.0.cmp(&b.0));
    let items: Vec<String> = reduced
        .iter()
        .map(|(_, claim)| {
            let typed = gojson::marshal(PERSISTENT_VOLUME_CLAIM, claim, Types::Base)
                .unwrap_or_else(|_| claim.clone());
            String::from_utf8(gojson::to_vec_typed(PERSISTENT_VOLUME_CLAIM, &typed)).unwrap_or_default()
        })
        .collect();
    let json = format!("[{}]", items.join(","));
    let bytes: Vec<String> = json.bytes().map(|b| b.to_string()).collect();
    let spew = format!("([]uint8)[{}]", bytes.join(" "));
    let hash =
        spew.bytes().fold(0x811c_9dc5_u32, |hash, byte| (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193));
    hash.to_string()
}

/// The revision object for the CloneSet's current template (not yet named by hash collisions).
pub fn new_revision(cloneset: &CloneSet, number: i64, collision_count: Option<i32>) -> ControllerRevision {
    let data = revision_data(&cloneset.spec.template);
    let hash = revision_hash(&data_bytes(&data), collision_count);
    let mut labels =
        cloneset.spec.template.metadata.as_ref().and_then(|m| m.labels.clone()).unwrap_or_default();
    labels.insert(REVISION_HASH_LABEL.into(), hash.clone());
    let mut annotations: BTreeMap<String, String> = cloneset.metadata.annotations.clone().unwrap_or_default();
    annotations.insert(VCT_HASH_ANNOTATION.into(), vct_hash(cloneset));
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(&cloneset.name_any(), &hash)),
            namespace: cloneset.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            owner_references: cloneset.controller_owner_ref(&()).map(|r| vec![r]),
            ..Default::default()
        },
        data: Some(RawExtension(data)),
        revision: number,
    }
}

/// Decides how the CloneSet's update revision is obtained (pure; see
/// [`crate::workload::revision::plan_revision`]).
pub fn plan_update_revision(
    cloneset: &CloneSet,
    revisions: &[ControllerRevision],
    collision_count: Option<i32>,
) -> RevisionPlan {
    plan_revision(revisions, |number| new_revision(cloneset, number, collision_count))
}

/// Gets or makes the update revision through the API: creates a new one (resolving hash
/// collisions by raising the collision count, as Kubernetes does) or raises an equal older
/// one's number. Returns the revision and the (possibly raised) collision count.
pub async fn ensure_update_revision(
    client: &Client,
    cloneset: &CloneSet,
    revisions: &[ControllerRevision],
) -> Result<(ControllerRevision, i32), ControllerError> {
    let namespace = cloneset.namespace().unwrap_or_default();
    let api: Api<ControllerRevision> = Api::namespaced(client.clone(), &namespace);
    let mut collision_count = cloneset.status.as_ref().and_then(|s| s.collision_count).unwrap_or(0);
    match plan_update_revision(cloneset, revisions, Some(collision_count)) {
        RevisionPlan::UseLatest(name) => {
            let revision = revisions.iter().find(|r| r.name_any() == name).cloned();
            revision
                .map(|r| (r, collision_count))
                .ok_or_else(|| ControllerError::Invalid(format!("revision {name} vanished")))
        }
        RevisionPlan::Reuse { name, number } => {
            let revision = api.get(&name).await?;
            // Upstream brings the claim templates' hash of the reused revision up to date.
            let hash = vct_hash(cloneset);
            let mut annotations = BTreeMap::new();
            if revision.annotations().get(VCT_HASH_ANNOTATION) != Some(&hash) {
                annotations.insert(VCT_HASH_ANNOTATION.to_string(), hash);
            }
            let updated = renumber_revision(&api, &revision, number, &annotations).await?;
            Ok((updated, collision_count))
        }
        RevisionPlan::Create(candidate) => {
            let mut candidate = *candidate;
            for _ in 0..16 {
                match create_revision(&api, &candidate).await {
                    Ok(created) => return Ok((created, collision_count)),
                    Err(kube::Error::Api(status)) if status.code == 409 => {
                        let existing = api.get(&candidate.name_any()).await?;
                        if equal_data(&existing, &candidate) {
                            return Ok((existing, collision_count));
                        }
                        collision_count += 1;
                        candidate = new_revision(cloneset, candidate.revision, Some(collision_count));
                    }
                    Err(error) => return Err(error.into()),
                }
            }
            Err(ControllerError::Invalid("too many revision hash collisions".into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
    use kruise_crds::apps::v1beta1::CloneSetSpec;

    use super::*;
    use crate::workload::revision::template_of;

    fn cloneset(image: &str) -> CloneSet {
        let mut cs = CloneSet::new(
            "web",
            CloneSetSpec {
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some([("app".to_string(), "web".to_string())].into()),
                        ..Default::default()
                    }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "main".into(),
                            image: Some(image.into()),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
                ..Default::default()
            },
        );
        cs.metadata.namespace = Some("default".into());
        cs.metadata.uid = Some("uid-1".into());
        cs
    }

    #[test]
    fn revision_data_replaces_the_template() {
        let revision = new_revision(&cloneset("nginx:1"), 1, None);
        let data = &revision.data.as_ref().unwrap().0;
        assert_eq!(data["spec"]["template"]["$patch"], "replace");
        assert_eq!(data["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1");
        let labels = revision.labels();
        assert_eq!(labels["app"], "web");
        assert!(labels.contains_key(REVISION_HASH_LABEL));
        assert!(revision.name_any().starts_with("web-"));
        // The template read back is the template as Go writes it (`"resources":{}`), and it gives
        // the same data again.
        let template = template_of(&revision).unwrap();
        assert_eq!(revision_data(&template), revision.data.unwrap().0);
        let container = &template.spec.unwrap().containers[0];
        assert_eq!(
            (container.image.as_deref(), container.resources.clone()),
            (Some("nginx:1"), Some(Default::default()))
        );
    }

    /// The plain nginx CloneSet of the takeover report: upstream names its revision
    /// `web-cd5565c86` (see also `crate::revision_fixtures`, which checks every fixture).
    #[test]
    fn the_revision_name_is_upstream_s() {
        let mut cs = cloneset("nginx:1.25");
        kruise_crds::defaults::default_cloneset_v1beta1(&mut cs, true);
        assert_eq!(new_revision(&cs, 1, Some(0)).name_any(), "web-cd5565c86");
        let data = String::from_utf8(data_bytes(&revision_data(&cs.spec.template))).unwrap();
        assert!(
            data.starts_with(
                r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"#
            ),
            "{data}"
        );
    }

    #[test]
    fn rollback_reuses_an_equal_older_revision() {
        let v1 = new_revision(&cloneset("nginx:1"), 1, None);
        let v2 = new_revision(&cloneset("nginx:2"), 2, None);
        let history = vec![v1.clone(), v2.clone()];
        assert_eq!(
            plan_update_revision(&cloneset("nginx:2"), &history, None),
            RevisionPlan::UseLatest(v2.name_any())
        );
        assert_eq!(
            plan_update_revision(&cloneset("nginx:1"), &history, None),
            RevisionPlan::Reuse { name: v1.name_any(), number: 3 }
        );
        assert!(
            matches!(plan_update_revision(&cloneset("nginx:3"), &history, None), RevisionPlan::Create(r) if r.revision == 3)
        );
    }
}
