//! CloneSet adapter of the shared image pre-download ([`crate::predownload`], upstream
//! `cloneset_predownload_image.go`): what a CloneSet's rollout looks like to the shared decision
//! (replicas, partition, `maxUnavailable` 20% by default, `ReCreate` excluded, three pods or fewer
//! skipped) and what its jobs are made of (its selector and template; the knobs come from
//! `inPlaceUpdateStrategy` only, as upstream).

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec},
    apimachinery::pkg::{apis::meta::v1::OwnerReference, util::intstr::IntOrString},
};
use kruise_crds::{
    apps::v1beta1::{CloneSet, PodUpdatePolicy},
    intstr::{partition_replicas, scaled_value},
};
use kube::runtime::events::EventType;

use super::controller::Context;
use crate::{
    ControllerError,
    predownload::{self, Decision, Knobs, Rollout, Workload},
};

/// What [`decide`] looks at.
#[derive(Clone, Debug)]
pub struct Inputs<'a> {
    /// The CloneSet.
    pub cs: &'a CloneSet,
    /// Labels of the update revision.
    pub update_revision_labels: &'a BTreeMap<String, String>,
    /// Whether the update revision's status numbers are this revision's (else they count 0).
    pub status_is_for_update_revision: bool,
    /// `status.updatedReadyReplicas`.
    pub updated_ready_replicas: i32,
    /// Whether pods can move from the current to the update revision in place.
    pub in_place_possible: bool,
    /// Pod templates of the current and update revisions.
    pub current_template: &'a PodTemplateSpec,
    /// The update revision's template.
    pub update_template: &'a PodTemplateSpec,
}

/// The CloneSet's rollout in the shared decision's terms.
pub fn rollout<'a>(inputs: &Inputs<'a>) -> Rollout<'a> {
    let spec = &inputs.cs.spec;
    let replicas = spec.replicas.unwrap_or(1);
    let rolling = spec.update_strategy.rolling_update.as_ref();
    let strategy = rolling.and_then(|r| r.in_place_update_strategy.as_ref());
    let in_place_rolling = rolling.filter(|r| r.pod_update_policy != PodUpdatePolicy::ReCreate);
    Rollout {
        update_revision_labels: inputs.update_revision_labels,
        replicas,
        min_updated_ready: predownload::min_updated_ready(
            strategy.and_then(|s| s.image_pre_download_min_updated_ready_pods),
            None,
            replicas,
        ),
        updated_ready: if inputs.status_is_for_update_revision { inputs.updated_ready_replicas } else { 0 },
        excluded_by_strategy: in_place_rolling.is_none().then_some("the update policy is ReCreate"),
        skip_small: true,
        partition: in_place_rolling
            .and_then(|r| partition_replicas(r.partition.as_ref(), Some(replicas)).ok())
            .unwrap_or(0),
        max_unavailable: scaled_value(
            in_place_rolling
                .and_then(|r| r.max_unavailable.as_ref())
                .unwrap_or(&IntOrString::String("20%".into())),
            replicas,
            false,
        )
        .unwrap_or(0),
        in_place_possible: inputs.in_place_possible,
        changed_images: predownload::changed_images(&[inputs.current_template], inputs.update_template),
    }
}

/// Upstream's decision for a CloneSet.
pub fn decide(inputs: &Inputs<'_>) -> Decision {
    predownload::decide(&rollout(inputs))
}

/// What the CloneSet's jobs are made of.
pub fn workload(cs: &CloneSet, owner: OwnerReference) -> Workload<'_> {
    let strategy =
        cs.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.in_place_update_strategy.as_ref());
    Workload {
        kind: "CloneSet",
        namespace: cs.metadata.namespace.as_deref().unwrap_or_default(),
        name: cs.metadata.name.as_deref().unwrap_or_default(),
        owner,
        selector: cs.spec.selector.as_ref(),
        template: &cs.spec.template,
        knobs: Knobs::resolve(strategy, None),
    }
}

/// Creates the jobs the decision asks for and labels the update revision created or ignored.
pub async fn reconcile(
    ctx: &Context,
    cs: &CloneSet,
    owner: OwnerReference,
    inputs: &Inputs<'_>,
    update_revision: &ControllerRevision,
) -> Result<(), ControllerError> {
    predownload::reconcile(
        &ctx.client,
        &workload(cs, owner),
        decide(inputs),
        update_revision,
        |reason, note| ctx.event(cs, EventType::Normal, reason, note),
    )
    .await
}

/// Deletes the ImagePullJobs this CloneSet controls (its rollout converged).
pub async fn delete_jobs(ctx: &Context, cs: &CloneSet) -> Result<(), ControllerError> {
    predownload::delete_jobs_of(&ctx.client, cs).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use kruise_crds::common::well_known::{IMAGE_PRE_DOWNLOAD_CREATED, IMAGE_PRE_DOWNLOAD_IGNORED};
    use serde_json::json;

    use super::*;

    fn template(images: &[(&str, &str)]) -> PodTemplateSpec {
        serde_json::from_value(json!({"spec": {"containers": images.iter().map(|(n, i)| json!({"name": n, "image": i})).collect::<Vec<_>>()}})).unwrap()
    }

    fn cloneset(replicas: i32, rolling: serde_json::Value) -> CloneSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}},
                     "updateStrategy": {"rollingUpdate": rolling}},
        }))
        .unwrap()
    }

    #[test]
    fn decision_table() {
        let old = template(&[("app", "nginx:1.25"), ("sidecar", "envoy:1")]);
        let new = template(&[("app", "nginx:1.26"), ("sidecar", "envoy:1"), ("log", "fluent:2")]);
        let in_place = json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1});
        let created: BTreeMap<String, String> =
            [("app".into(), "nginx:1.26".into()), ("log".into(), "fluent:2".into())].into();
        let labelled = |key: &str| BTreeMap::from([(key.to_string(), "true".to_string())]);
        let none = BTreeMap::new();
        let created_label = labelled(IMAGE_PRE_DOWNLOAD_CREATED);
        let ignored_label = labelled(IMAGE_PRE_DOWNLOAD_IGNORED);
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, CloneSet, &BTreeMap<String, String>, bool, i32, bool, Decision)> = vec![
            (
                "in place, 5 replicas, 1 at a time",
                cloneset(5, in_place.clone()),
                &none,
                true,
                0,
                true,
                Decision::Create(created.clone()),
            ),
            (
                "already created",
                cloneset(5, in_place.clone()),
                &created_label,
                true,
                0,
                true,
                Decision::AlreadyDecided,
            ),
            (
                "already ignored",
                cloneset(5, in_place.clone()),
                &ignored_label,
                true,
                0,
                true,
                Decision::AlreadyDecided,
            ),
            (
                "ReCreate",
                cloneset(5, json!({"podUpdatePolicy": "ReCreate"})),
                &none,
                true,
                0,
                true,
                Decision::Ignore("the update policy is ReCreate"),
            ),
            (
                "3 replicas",
                cloneset(3, in_place.clone()),
                &none,
                true,
                0,
                true,
                Decision::Ignore("replicas are 3 or fewer"),
            ),
            (
                "one batch: maxUnavailable 100%",
                cloneset(5, json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "100%"})),
                &none,
                true,
                0,
                true,
                Decision::Ignore("every pod updates in one batch"),
            ),
            (
                "a partition splits even a 100% batch",
                cloneset(
                    5,
                    json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "100%", "partition": 2}),
                ),
                &none,
                true,
                0,
                true,
                Decision::Create(created.clone()),
            ),
            (
                "not in place",
                cloneset(5, in_place.clone()),
                &none,
                true,
                0,
                false,
                Decision::Ignore("the revision cannot be updated in place"),
            ),
            (
                "2 updated-ready pods wanted, 1 there",
                cloneset(
                    5,
                    json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1, "inPlaceUpdateStrategy": {"imagePreDownloadMinUpdatedReadyPods": 2}}),
                ),
                &none,
                true,
                1,
                true,
                Decision::NotYet,
            ),
            (
                "2 wanted, 2 there",
                cloneset(
                    5,
                    json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1, "inPlaceUpdateStrategy": {"imagePreDownloadMinUpdatedReadyPods": 2}}),
                ),
                &none,
                true,
                2,
                true,
                Decision::Create(created.clone()),
            ),
            (
                "the status counts another revision's pods",
                cloneset(
                    5,
                    json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1, "inPlaceUpdateStrategy": {"imagePreDownloadMinUpdatedReadyPods": 2}}),
                ),
                &none,
                false,
                5,
                true,
                Decision::NotYet,
            ),
        ];
        for (name, cs, labels, for_update, updated_ready, in_place_possible, want) in cases {
            let inputs = Inputs {
                cs: &cs,
                update_revision_labels: labels,
                status_is_for_update_revision: for_update,
                updated_ready_replicas: updated_ready,
                in_place_possible,
                current_template: &old,
                update_template: &new,
            };
            assert_eq!(decide(&inputs), want, "{name}");
        }
    }

    /// The CloneSet's jobs select its pods and take their knobs from `inPlaceUpdateStrategy`
    /// only (the job itself is tested in `crate::predownload`).
    #[test]
    fn the_jobs_are_made_of_the_cloneset() {
        let mut cs = cloneset(
            5,
            json!({"podUpdatePolicy": "InPlaceIfPossible", "inPlaceUpdateStrategy": {"imagePreDownloadParallelism": "50%", "imagePreDownloadTimeoutSeconds": 60}}),
        );
        cs.metadata.annotations = Some(BTreeMap::from([(
            kruise_crds::common::well_known::IMAGE_PRE_DOWNLOAD_PARALLELISM.to_string(),
            "7".to_string(),
        )]));
        let owner = OwnerReference { kind: "CloneSet".into(), uid: "u1".into(), ..Default::default() };
        let made = workload(&cs, owner.clone());
        assert_eq!((made.kind, made.namespace, made.name), ("CloneSet", "default", "web"));
        assert_eq!(made.owner, owner);
        assert_eq!(serde_json::to_value(made.selector).unwrap(), json!({"matchLabels": {"app": "web"}}));
        assert_eq!(made.knobs, Knobs { parallelism: IntOrString::String("50%".into()), timeout_seconds: 60 });
        cs.spec.update_strategy.rolling_update = None;
        assert_eq!(workload(&cs, owner).knobs, Knobs::default(), "annotations are not read");
    }
}
