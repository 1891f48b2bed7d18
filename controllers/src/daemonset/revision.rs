//! Advanced DaemonSet revisions (upstream `daemonset_history.go`): ControllerRevisions holding
//! the pod template in the shared encoding ([`crate::workload::revision`]: data
//! `{"spec":{"template":{..., "$patch":"replace"}}}`), named `<ds>-<hash>`, labelled with the
//! template's labels plus `controller-revision-hash: <hash>`, owned by the DaemonSet. The hash
//! (not the name) is what pods carry in `controller-revision-hash` and what `status.updateRevision`
//! reports. The revision of the current template is the newest (its number raised on a rollback);
//! old revisions beyond `revisionHistoryLimit` that no pod runs are deleted.

use std::collections::HashSet;

use k8s_openapi::{
    api::apps::v1::ControllerRevision,
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, runtime::RawExtension},
};
use kruise_crds::{apps::v1beta1::DaemonSet, common::well_known::CONTROLLER_REVISION_HASH};
use kube::{Api, Client, Resource, ResourceExt, api::DeleteParams};

use crate::{
    ControllerError,
    workload::revision::{
        create_revision, data_bytes, equal_data, renumber_revision, revision_data, revision_hash,
        revision_name,
    },
};

/// The hash a revision stands for (its label, or its name for revisions written without one).
pub fn hash_of(revision: &ControllerRevision) -> String {
    revision.labels().get(CONTROLLER_REVISION_HASH).cloned().unwrap_or_else(|| revision.name_any())
}

/// The revision of the DaemonSet's current template, numbered `number`.
pub fn new_revision(ds: &DaemonSet, number: i64, collision_count: Option<i32>) -> ControllerRevision {
    let data = revision_data(&ds.spec.template);
    let hash = revision_hash(&data_bytes(&data), collision_count);
    let mut labels = ds.spec.template.metadata.as_ref().and_then(|m| m.labels.clone()).unwrap_or_default();
    labels.insert(CONTROLLER_REVISION_HASH.into(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(&ds.name_any(), &hash)),
            namespace: ds.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: ds.metadata.annotations.clone(),
            owner_references: ds.controller_owner_ref(&()).map(|r| vec![r]),
            ..Default::default()
        },
        data: Some(RawExtension(data)),
        revision: number,
    }
}

/// How the history is brought in line with the template (upstream `constructHistory`).
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryPlan {
    /// The revision holding the current template, when one exists.
    pub current: Option<String>,
    /// Its number must be raised to this (a rollback to an older template).
    pub renumber: Option<i64>,
    /// Further revisions with the current template (deleted, the newest kept).
    pub duplicates: Vec<String>,
    /// The other revisions.
    pub old: Vec<String>,
    /// The number a new revision gets.
    pub next_number: i64,
}

/// Sorts the DaemonSet's revisions into current and old (pure).
pub fn plan_history(
    ds: &DaemonSet,
    revisions: &[ControllerRevision],
    collision_count: Option<i32>,
) -> HistoryPlan {
    let candidate = new_revision(ds, 0, collision_count);
    let (current, old): (Vec<&ControllerRevision>, Vec<&ControllerRevision>) =
        revisions.iter().partition(|r| equal_data(r, &candidate));
    let next_number = old.iter().map(|r| r.revision).max().unwrap_or(0) + 1;
    let keep = current.iter().copied().max_by_key(|r| (r.revision, r.name_any()));
    HistoryPlan {
        current: keep.map(|r| r.name_any()),
        renumber: keep.filter(|r| r.revision < next_number).map(|_| next_number),
        duplicates: current
            .iter()
            .filter(|r| Some(r.name_any()) != keep.map(|k| k.name_any()))
            .map(|r| r.name_any())
            .collect(),
        old: old.iter().map(|r| r.name_any()).collect(),
        next_number,
    }
}

/// Old revisions to delete (upstream `cleanupHistory`): oldest first, as many as exceed `limit`,
/// skipping those a live pod runs.
pub fn revisions_to_clean(
    old: &[&ControllerRevision],
    live_hashes: &HashSet<String>,
    limit: i32,
) -> Vec<String> {
    let mut to_kill = old.len().saturating_sub(usize::try_from(limit.max(0)).unwrap_or_default());
    let mut sorted: Vec<&&ControllerRevision> = old.iter().collect();
    sorted.sort_by_key(|r| r.revision);
    let mut names = Vec::new();
    for revision in sorted {
        if to_kill == 0 {
            break;
        }
        if live_hashes.contains(&hash_of(revision)) {
            continue;
        }
        names.push(revision.name_any());
        to_kill -= 1;
    }
    names
}

/// Gets or makes the current revision through the API. Returns it, the old revisions and the
/// collision count (raised when another template already has the name).
pub async fn construct_history(
    client: &Client,
    ds: &DaemonSet,
    revisions: &[ControllerRevision],
) -> Result<(ControllerRevision, Vec<ControllerRevision>, Option<i32>), ControllerError> {
    let api: Api<ControllerRevision> = Api::namespaced(client.clone(), &ds.namespace().unwrap_or_default());
    let mut collision_count = ds.status.as_ref().and_then(|s| s.collision_count);
    let plan = plan_history(ds, revisions, collision_count);
    let old: Vec<ControllerRevision> =
        revisions.iter().filter(|r| plan.old.contains(&r.name_any())).cloned().collect();
    for name in &plan.duplicates {
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
    }
    if let Some(name) = &plan.current {
        let mut current = revisions
            .iter()
            .find(|r| &r.name_any() == name)
            .cloned()
            .ok_or_else(|| ControllerError::Invalid(format!("revision {name} vanished")))?;
        if let Some(number) = plan.renumber {
            current = renumber_revision(&api, &current, number, &Default::default()).await?;
            tracing::info!(daemonset = %ds.name_any(), revision = %name, number, "rolled back to an earlier revision");
        }
        return Ok((current, old, collision_count));
    }
    let mut candidate = new_revision(ds, plan.next_number, collision_count);
    for _ in 0..16 {
        match create_revision(&api, &candidate).await {
            Ok(created) => return Ok((created, old, collision_count)),
            Err(kube::Error::Api(status)) if status.code == 409 => {
                let existing = api.get(&candidate.name_any()).await?;
                if equal_data(&existing, &candidate)
                    && existing.owner_references().iter().any(|r| Some(&r.uid) == ds.metadata.uid.as_ref())
                {
                    return Ok((existing, old, collision_count));
                }
                let raised = collision_count.unwrap_or(0) + 1;
                tracing::info!(daemonset = %ds.name_any(), collision_count = raised, "revision hash collision");
                collision_count = Some(raised);
                candidate = new_revision(ds, plan.next_number, collision_count);
            }
            Err(error) => return Err(error.into()),
        }
    }
    Err(ControllerError::Invalid("too many revision hash collisions".into()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;
    use crate::daemonset::core::fixtures::daemonset;

    fn with_image(image: &str) -> DaemonSet {
        let mut ds = daemonset("ds");
        ds.spec.template.spec.as_mut().unwrap().containers[0].image = Some(image.into());
        ds
    }

    /// Upstream `Test_maxRevision` and the history construction.
    #[test]
    fn the_current_template_has_the_newest_revision() {
        let v1 = new_revision(&with_image("nginx:1"), 1, None);
        assert!(v1.name_any().starts_with("ds-"));
        assert_eq!(v1.name_any(), format!("ds-{}", hash_of(&v1)));
        assert_eq!(v1.labels()["app"], "ds");
        assert_eq!(v1.owner_references()[0].kind, "DaemonSet");

        let plan = plan_history(&with_image("nginx:1"), &[], None);
        assert_eq!((plan.current, plan.next_number), (None, 1));

        let v2 = new_revision(&with_image("nginx:2"), 2, None);
        let plan = plan_history(&with_image("nginx:2"), &[v1.clone(), v2.clone()], None);
        assert_eq!(plan.current, Some(v2.name_any()));
        assert_eq!(plan.renumber, None);
        assert_eq!(plan.old, vec![v1.name_any()]);

        // Rolling back to nginx:1 raises its number above the others.
        let plan = plan_history(&with_image("nginx:1"), &[v1.clone(), v2.clone()], None);
        assert_eq!(plan.current, Some(v1.name_any()));
        assert_eq!(plan.renumber, Some(3));

        // A template change makes a new revision.
        let plan = plan_history(&with_image("nginx:3"), &[v1, v2], None);
        assert_eq!((plan.current, plan.next_number), (None, 3));
        assert_ne!(
            new_revision(&with_image("nginx:1"), 1, Some(1)).name_any(),
            new_revision(&with_image("nginx:1"), 1, None).name_any(),
            "collisions rename"
        );
    }

    #[test]
    fn history_beyond_the_limit_is_cleaned_unless_a_pod_runs_it() {
        let revisions: Vec<ControllerRevision> =
            (1..=4).map(|i| new_revision(&with_image(&format!("nginx:{i}")), i, None)).collect();
        let refs: Vec<&ControllerRevision> = revisions.iter().collect();
        let live: HashSet<String> = [hash_of(&revisions[0])].into();
        assert_eq!(
            revisions_to_clean(&refs, &live, 2),
            vec![revisions[1].name_any(), revisions[2].name_any()]
        );
        assert!(revisions_to_clean(&refs, &live, 10).is_empty());
    }
}
