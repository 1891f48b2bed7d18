//! v1alpha1 <-> v1beta1 conversion: round trips of fully populated objects of every kind with
//! both versions, and the upstream conversion cases (SCENARIOS.md section 5,
//! `apis/apps/v1alpha1/conversion_test.go` and siblings) as our own tests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod support;

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    conversion::*,
};
use serde_json::json;
use support::populate::populated;

#[test]
fn cloneset_round_trips_fully_populated() {
    for policy in ["ReCreate", "InPlaceIfPossible", "InPlaceOnly"] {
        let alpha: v1alpha1::CloneSet = populated(&[
            ("spec.updateStrategy.type", json!(policy)),
            // v1alpha1 carries the pre-download knobs in annotations, not in this struct.
            ("spec.updateStrategy.inPlaceUpdateStrategy", json!({"gracePeriodSeconds": 7})),
        ]);
        let beta: v1beta1::CloneSet = populated(&[
            ("spec.updateStrategy.type", json!("RollingUpdate")),
            ("spec.updateStrategy.rollingUpdate.podUpdatePolicy", json!(policy)),
            ("spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.imagePreDownloadParallelism", json!(2)),
        ]);
        assert_round_trips!(alpha, beta, cloneset_to_v1beta1, cloneset_to_v1alpha1, natural = true);
    }
}

#[test]
fn cloneset_round_trips_are_exact_even_where_upstream_loses_data() {
    // OnDelete has no rollingUpdate in v1beta1, so its partition needs the stash.
    let alpha: v1alpha1::CloneSet = populated(&[("spec.updateStrategy.type", json!("OnDelete"))]);
    // An unset policy becomes ReCreate upstream.
    let beta: v1beta1::CloneSet = populated(&[
        ("spec.updateStrategy.type", json!("")),
        ("spec.updateStrategy.rollingUpdate.podUpdatePolicy", json!("")),
    ]);
    assert_round_trips!(alpha, beta, cloneset_to_v1beta1, cloneset_to_v1alpha1, natural = false);
}

#[test]
fn cloneset_update_strategy_types_map_as_upstream() {
    let cases = [
        ("ReCreate", "RollingUpdate", Some("ReCreate")),
        ("InPlaceIfPossible", "RollingUpdate", Some("InPlaceIfPossible")),
        ("InPlaceOnly", "RollingUpdate", Some("InPlaceOnly")),
        ("OnDelete", "OnDelete", None),
        ("", "RollingUpdate", Some("ReCreate")),
    ];
    for (alpha_type, beta_type, policy) in cases {
        let mut alpha = v1alpha1::CloneSet::default();
        alpha.spec.update_strategy.type_ = alpha_type.into();
        let beta = cloneset_to_v1beta1(&alpha);
        assert_eq!(beta.spec.update_strategy.type_.as_str(), beta_type, "{alpha_type}");
        assert_eq!(
            beta.spec.update_strategy.rolling_update.as_ref().map(|r| r.pod_update_policy.as_str()),
            policy,
            "{alpha_type}"
        );
    }
}

#[test]
fn cloneset_pvc_reuse_flag_is_inverted() {
    let mut alpha = v1alpha1::CloneSet::default();
    assert!(cloneset_to_v1beta1(&alpha).spec.scale_strategy.enable_pvc_reuse, "v1alpha1 reuses by default");
    alpha.spec.scale_strategy.disable_pvc_reuse = true;
    assert!(!cloneset_to_v1beta1(&alpha).spec.scale_strategy.enable_pvc_reuse);
    let beta = v1beta1::CloneSet::default();
    assert!(
        cloneset_to_v1alpha1(&beta).spec.scale_strategy.disable_pvc_reuse,
        "v1beta1 does not reuse by default"
    );
}

#[test]
fn cloneset_exclude_preparing_delete_label_moves_to_the_spec_field() {
    let mut alpha = v1alpha1::CloneSet::default();
    alpha.metadata.labels = Some(
        [("apps.kruise.io/cloneset-scaling-exclude-preparing-delete".to_string(), "true".to_string())].into(),
    );
    let beta = cloneset_to_v1beta1(&alpha);
    assert!(beta.spec.scale_strategy.exclude_preparing_delete);
    assert_eq!(beta.metadata.labels, None, "the label moved into the field");
    let back = cloneset_to_v1alpha1(&beta);
    assert_eq!(back.metadata.labels, alpha.metadata.labels);
}

#[test]
fn cloneset_image_pre_download_annotations_move_to_spec_fields() {
    let mut alpha = v1alpha1::CloneSet::default();
    alpha.spec.update_strategy.type_ = "InPlaceIfPossible".into();
    alpha.metadata.annotations = Some(
        [
            ("apps.kruise.io/image-predownload-parallelism", "2"),
            ("apps.kruise.io/image-predownload-timeout-seconds", "300"),
            ("apps.kruise.io/image-predownload-min-updated-ready-pods", "5"),
            ("keep", "me"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
    );
    let beta = cloneset_to_v1beta1(&alpha);
    let strategy = beta
        .spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.in_place_update_strategy.clone())
        .expect("in-place strategy");
    assert_eq!(
        strategy.image_pre_download_parallelism,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(2))
    );
    assert_eq!(strategy.image_pre_download_timeout_seconds, Some(300));
    assert_eq!(strategy.image_pre_download_min_updated_ready_pods, Some(5));
    assert_eq!(
        beta.metadata.annotations,
        Some([("keep".to_string(), "me".to_string())].into()),
        "only the moved annotations leave"
    );
    assert_eq!(cloneset_to_v1alpha1(&beta), alpha);
}

#[test]
fn an_edit_through_the_other_version_wins_over_the_stash() {
    let mut alpha: v1alpha1::CloneSet = populated(&[("spec.updateStrategy.type", json!("OnDelete"))]);
    alpha.spec.update_strategy.partition =
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(4));
    let mut beta = cloneset_to_v1beta1(&alpha);
    // Someone switches to a rolling update through v1beta1.
    beta.spec.update_strategy.type_ = "RollingUpdate".into();
    beta.spec.update_strategy.rolling_update = Some(Default::default());
    let back = cloneset_to_v1alpha1(&beta);
    assert_eq!(back.spec.update_strategy.type_.as_str(), "ReCreate");
    assert_eq!(back.spec.update_strategy.partition, None, "the stale stash was not applied");
}
