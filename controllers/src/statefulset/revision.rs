//! Advanced StatefulSet revisions as ControllerRevisions (upstream `newRevision`,
//! `getStatefulSetRevisions`), stored the way Kubernetes' controller history stores them and
//! CloneSet does ([`crate::workload::revision`] provides the shared encoding): data
//! `{"spec":{"template":{..., "$patch":"replace"}}}`, name `<set>-<hash>`, the template's labels
//! plus `controller.kubernetes.io/hash`, the set's annotations, and the set as controller. An
//! equal older revision is reused on rollback by raising its number.

use k8s_openapi::{
    api::apps::v1::ControllerRevision,
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, runtime::RawExtension},
};
use kruise_crds::apps::v1beta1::StatefulSet;
use kube::{Api, Client, Resource, ResourceExt};

use crate::{
    ControllerError,
    workload::revision::{
        REVISION_HASH_LABEL, RevisionPlan, create_revision, data_bytes, equal_data, plan_revision,
        renumber_revision, revision_data, revision_hash, revision_name,
    },
};

/// The revision of the set's current template, numbered `number`, named with `collision_count`.
pub fn new_revision(set: &StatefulSet, number: i64, collision_count: Option<i32>) -> ControllerRevision {
    let data = revision_data(&set.spec.template);
    let hash = revision_hash(&data_bytes(&data), collision_count);
    let mut labels = set.spec.template.metadata.as_ref().and_then(|m| m.labels.clone()).unwrap_or_default();
    labels.insert(REVISION_HASH_LABEL.into(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(&set.name_any(), &hash)),
            namespace: set.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: set.metadata.annotations.clone(),
            owner_references: set.controller_owner_ref(&()).map(|r| vec![r]),
            ..Default::default()
        },
        data: Some(RawExtension(data)),
        revision: number,
    }
}

/// Decides how the update revision is obtained from the set's revisions (upstream
/// `getStatefulSetRevisions`; see [`crate::workload::revision::plan_revision`]).
pub fn plan_update_revision(
    set: &StatefulSet,
    revisions: &[ControllerRevision],
    collision_count: Option<i32>,
) -> RevisionPlan {
    plan_revision(revisions, |number| new_revision(set, number, collision_count))
}

/// Gets or makes the update revision through the API, resolving hash collisions by raising the
/// collision count as Kubernetes does. Returns the revision and the collision count.
pub async fn ensure_update_revision(
    client: &Client,
    set: &StatefulSet,
    revisions: &[ControllerRevision],
) -> Result<(ControllerRevision, i32), ControllerError> {
    let api: Api<ControllerRevision> = Api::namespaced(client.clone(), &set.namespace().unwrap_or_default());
    let mut collision_count = set.status.as_ref().and_then(|s| s.collision_count).unwrap_or(0);
    match plan_update_revision(set, revisions, Some(collision_count)) {
        RevisionPlan::UseLatest(name) => revisions
            .iter()
            .find(|r| r.name_any() == name)
            .cloned()
            .map(|r| (r, collision_count))
            .ok_or_else(|| ControllerError::Invalid(format!("revision {name} vanished"))),
        RevisionPlan::Reuse { name, number } => {
            let revision = api.get(&name).await?;
            let updated = renumber_revision(&api, &revision, number, &Default::default()).await?;
            tracing::info!(statefulset = %set.name_any(), revision = %name, number, "rolled back to an earlier revision");
            Ok((updated, collision_count))
        }
        RevisionPlan::Create(candidate) => {
            let mut candidate = *candidate;
            for _ in 0..16 {
                match create_revision(&api, &candidate).await {
                    Ok(created) => return Ok((created, collision_count)),
                    Err(kube::Error::Api(status)) if status.code == 409 => {
                        let existing = api.get(&candidate.name_any()).await?;
                        if equal_data(&existing, &candidate)
                            && existing
                                .owner_references()
                                .iter()
                                .any(|r| Some(&r.uid) == set.metadata.uid.as_ref())
                        {
                            return Ok((existing, collision_count));
                        }
                        collision_count += 1;
                        candidate = new_revision(set, candidate.revision, Some(collision_count));
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
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;
    use crate::{statefulset::core::fixtures::set, workload::revision::template_of};

    fn with_image(image: &str) -> StatefulSet {
        let mut sts = set(3);
        sts.metadata.annotations = Some([("team".to_string(), "a".to_string())].into());
        sts.spec.template.spec.as_mut().unwrap().containers[0].image = Some(image.into());
        sts
    }

    /// Upstream `TestStatefulSetControl_getSetRevisions` and `TestCreateApplyRevision`.
    #[test]
    fn revisions_are_created_reused_and_rolled_back() {
        let v1 = new_revision(&with_image("nginx:1"), 1, Some(0));
        assert!(v1.name_any().starts_with("web-"));
        assert_eq!(v1.labels()["app"], "web");
        assert!(v1.labels().contains_key(REVISION_HASH_LABEL));
        assert_eq!(v1.annotations()["team"], "a");
        let owner = &v1.owner_references()[0];
        assert_eq!((owner.kind.as_str(), owner.controller), ("StatefulSet", Some(true)));
        let template = template_of(&v1).unwrap();
        assert_eq!(revision_data(&template), v1.data.as_ref().unwrap().0, "read back, the same data");

        assert!(
            matches!(plan_update_revision(&with_image("nginx:1"), &[], Some(0)), RevisionPlan::Create(r) if r.revision == 1)
        );
        let v2 = new_revision(&with_image("nginx:2"), 2, Some(0));
        let history = [v1.clone(), v2.clone()];
        assert_eq!(
            plan_update_revision(&with_image("nginx:2"), &history, Some(0)),
            RevisionPlan::UseLatest(v2.name_any())
        );
        assert_eq!(
            plan_update_revision(&with_image("nginx:1"), &history, Some(0)),
            RevisionPlan::Reuse { name: v1.name_any(), number: 3 }
        );
        assert_ne!(
            new_revision(&with_image("nginx:1"), 1, Some(1)).name_any(),
            v1.name_any(),
            "collisions rename"
        );
    }
}
