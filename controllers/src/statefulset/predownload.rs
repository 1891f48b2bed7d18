//! Advanced StatefulSet adapter of the shared image pre-download ([`crate::predownload`],
//! upstream `statefulset_predownload_image.go`): what a set's rollout looks like to the shared
//! decision (replicas, partition, `maxUnavailable` 1 by default, `OnDelete` and `ReCreate`
//! excluded, three pods or fewer skipped) and what its jobs are made of.
//!
//! Knobs: upstream reads the set's annotations `apps.kruise.io/image-predownload-parallelism`,
//! `-timeout-seconds` and `-min-updated-ready-pods`; the v1beta1 `inPlaceUpdateStrategy` fields
//! of the same names are honoured too, and win when set.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec},
    apimachinery::pkg::{apis::meta::v1::OwnerReference, util::intstr::IntOrString},
};
use kruise_crds::{
    apps::v1beta1::{PodUpdatePolicy, StatefulSet, StatefulSetUpdateStrategyType},
    common::{InPlaceUpdateStrategy, well_known::IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS},
    intstr::scaled_value,
};

use kube::ResourceExt;

use super::controller::Context;
use crate::{
    ControllerError,
    predownload::{self, Decision, Knobs, Rollout, Workload},
    runtime::events::EventKind,
};

/// What [`decide`] looks at.
#[derive(Clone, Debug)]
pub struct Inputs<'a> {
    /// The set.
    pub set: &'a StatefulSet,
    /// Labels of the update revision.
    pub update_revision_labels: &'a BTreeMap<String, String>,
    /// Whether `status.updateRevision` is this update revision (else its counts are 0).
    pub status_is_for_update_revision: bool,
    /// `status.updatedReadyReplicas`.
    pub updated_ready_replicas: i32,
    /// Whether pods can move from the current to the update revision in place.
    pub in_place_possible: bool,
    /// Pod template of the current revision.
    pub current_template: &'a PodTemplateSpec,
    /// Pod template of the update revision.
    pub update_template: &'a PodTemplateSpec,
}

fn strategy(set: &StatefulSet) -> Option<&InPlaceUpdateStrategy> {
    set.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.in_place_update_strategy.as_ref())
}

/// The set's rollout in the shared decision's terms.
pub fn rollout<'a>(inputs: &Inputs<'a>) -> Rollout<'a> {
    let set = inputs.set;
    let replicas = set.spec.replicas.unwrap_or(1);
    let update_strategy = &set.spec.update_strategy;
    let rolling = update_strategy.rolling_update.as_ref().filter(|rolling| {
        update_strategy.type_ != StatefulSetUpdateStrategyType::OnDelete
            && rolling.pod_update_policy != PodUpdatePolicy::ReCreate
    });
    let annotation = set.annotations().get(IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS).map(String::as_str);
    Rollout {
        update_revision_labels: inputs.update_revision_labels,
        replicas,
        min_updated_ready: predownload::min_updated_ready(
            strategy(set).and_then(|s| s.image_pre_download_min_updated_ready_pods),
            annotation,
            replicas,
        ),
        updated_ready: if inputs.status_is_for_update_revision { inputs.updated_ready_replicas } else { 0 },
        excluded_by_strategy: rolling.is_none().then_some("the update is OnDelete or ReCreate"),
        skip_small: true,
        partition: rolling.and_then(|r| r.partition).unwrap_or(0),
        max_unavailable: scaled_value(
            rolling.and_then(|r| r.max_unavailable.as_ref()).unwrap_or(&IntOrString::Int(1)),
            replicas,
            false,
        )
        .unwrap_or(0),
        in_place_possible: inputs.in_place_possible,
        changed_images: predownload::changed_images(&[inputs.current_template], inputs.update_template),
    }
}

/// Upstream's decision for a set.
pub fn decide(inputs: &Inputs<'_>) -> Decision {
    predownload::decide(&rollout(inputs))
}

/// What the set's jobs are made of.
pub fn workload(set: &StatefulSet, owner: OwnerReference) -> Workload<'_> {
    Workload {
        kind: "StatefulSet",
        namespace: set.metadata.namespace.as_deref().unwrap_or_default(),
        name: set.metadata.name.as_deref().unwrap_or_default(),
        owner,
        selector: set.spec.selector.as_ref(),
        template: &set.spec.template,
        knobs: Knobs::resolve(strategy(set), set.metadata.annotations.as_ref()),
    }
}

/// Creates the jobs the decision asks for and labels the update revision created or ignored.
pub async fn reconcile(
    ctx: &Context,
    set: &StatefulSet,
    owner: OwnerReference,
    inputs: &Inputs<'_>,
    update_revision: &ControllerRevision,
) -> Result<(), ControllerError> {
    predownload::reconcile(
        &ctx.client,
        &workload(set, owner),
        decide(inputs),
        update_revision,
        |reason, note| ctx.event(set, EventKind::Normal, reason, note),
    )
    .await
}

/// Deletes the ImagePullJobs the set controls (its rollout converged).
pub async fn delete_jobs(ctx: &Context, set: &StatefulSet) -> Result<(), ControllerError> {
    predownload::delete_jobs_of(&ctx.client, set).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use kruise_crds::common::well_known::{
        IMAGE_PRE_DOWNLOAD_IGNORED, IMAGE_PRE_DOWNLOAD_PARALLELISM, IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS,
    };
    use serde_json::json;

    use super::*;

    fn template(images: &[(&str, &str)]) -> PodTemplateSpec {
        serde_json::from_value(json!({"spec": {"containers": images.iter().map(|(n, i)| json!({"name": n, "image": i})).collect::<Vec<_>>()}})).unwrap()
    }

    fn set(replicas: i32, strategy: serde_json::Value, annotations: serde_json::Value) -> StatefulSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default", "annotations": annotations},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}},
                     "updateStrategy": strategy},
        }))
        .unwrap()
    }

    fn rolling(extra: serde_json::Value) -> serde_json::Value {
        let mut rolling =
            json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1, "partition": 0});
        if let (Some(target), serde_json::Value::Object(extra)) = (rolling.as_object_mut(), extra) {
            target.extend(extra);
        }
        json!({"type": "RollingUpdate", "rollingUpdate": rolling})
    }

    #[test]
    #[allow(clippy::type_complexity)] // table rows are tuples
    fn decision_table() {
        let old = template(&[("app", "nginx:1.25"), ("sidecar", "envoy:1")]);
        let new = template(&[("app", "nginx:1.26"), ("sidecar", "envoy:1")]);
        let created: BTreeMap<String, String> = [("app".into(), "nginx:1.26".into())].into();
        let none = BTreeMap::new();
        let labelled = BTreeMap::from([(IMAGE_PRE_DOWNLOAD_IGNORED.to_string(), "true".to_string())]);
        let no_annotations = json!({});
        let cases: Vec<(&str, StatefulSet, &BTreeMap<String, String>, i32, bool, Decision)> = vec![
            (
                "in place, 5 replicas",
                set(5, rolling(json!({})), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Create(created.clone()),
            ),
            (
                "already decided",
                set(5, rolling(json!({})), no_annotations.clone()),
                &labelled,
                0,
                true,
                Decision::AlreadyDecided,
            ),
            (
                "ReCreate",
                set(5, rolling(json!({"podUpdatePolicy": "ReCreate"})), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Ignore("the update is OnDelete or ReCreate"),
            ),
            (
                "OnDelete",
                set(5, json!({"type": "OnDelete"}), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Ignore("the update is OnDelete or ReCreate"),
            ),
            (
                "3 replicas",
                set(3, rolling(json!({})), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Ignore("replicas are 3 or fewer"),
            ),
            (
                "one batch",
                set(5, rolling(json!({"maxUnavailable": "100%"})), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Ignore("every pod updates in one batch"),
            ),
            (
                "partition splits the batch",
                set(5, rolling(json!({"maxUnavailable": "100%", "partition": 2})), no_annotations.clone()),
                &none,
                0,
                true,
                Decision::Create(created.clone()),
            ),
            (
                "not in place",
                set(5, rolling(json!({})), no_annotations.clone()),
                &none,
                0,
                false,
                Decision::Ignore("the revision cannot be updated in place"),
            ),
            (
                "annotation wants 2 updated-ready pods",
                set(5, rolling(json!({})), json!({IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS: "2"})),
                &none,
                1,
                true,
                Decision::NotYet,
            ),
            (
                "40% of 5 is 2, there are 2",
                set(5, rolling(json!({})), json!({IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS: "40%"})),
                &none,
                2,
                true,
                Decision::Create(created.clone()),
            ),
        ];
        for (name, set, labels, updated_ready, in_place_possible, want) in cases {
            let inputs = Inputs {
                set: &set,
                update_revision_labels: labels,
                status_is_for_update_revision: true,
                updated_ready_replicas: updated_ready,
                in_place_possible,
                current_template: &old,
                update_template: &new,
            };
            assert_eq!(decide(&inputs), want, "{name}");
        }
    }

    /// The set's jobs select its pods and take their knobs from `inPlaceUpdateStrategy` or
    /// else its annotations (the job itself is tested in `crate::predownload`).
    #[test]
    fn the_jobs_are_made_of_the_set() {
        let annotations =
            json!({IMAGE_PRE_DOWNLOAD_PARALLELISM: "3", IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS: "90"});
        let sts = set(5, rolling(json!({})), annotations.clone());
        let owner = OwnerReference { kind: "StatefulSet".into(), uid: "u1".into(), ..Default::default() };
        let made = workload(&sts, owner.clone());
        assert_eq!((made.kind, made.namespace, made.name), ("StatefulSet", "default", "web"));
        assert_eq!(made.owner, owner);
        assert_eq!(serde_json::to_value(made.selector).unwrap(), json!({"matchLabels": {"app": "web"}}));
        assert_eq!(made.knobs, Knobs { parallelism: IntOrString::Int(3), timeout_seconds: 90 });
        let with_fields = set(
            5,
            rolling(json!({"inPlaceUpdateStrategy": {"imagePreDownloadParallelism": 4}})),
            annotations,
        );
        assert_eq!(
            workload(&with_fields, owner).knobs,
            Knobs { parallelism: IntOrString::Int(4), timeout_seconds: 90 },
            "the spec field wins over the annotation"
        );
    }
}
