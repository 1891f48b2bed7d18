//! v1alpha1 <-> v1beta1 conversion of the workload kinds (Advanced StatefulSet, Advanced
//! DaemonSet, SidecarSet, UnitedDeployment): round trips of fully populated objects, the
//! upstream conversion cases (SCENARIOS.md section 5) as our own tests, and serde round trips
//! of every root type.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod support;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    conversion::*,
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};
use support::populate::populated;

/// An object as a user would write it.
fn object<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("object deserializes")
}

/// The object as a client reads it back, as JSON.
fn as_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("object serializes")
}

/// Annotations apart from the conversion stash.
fn user_annotations(metadata: &ObjectMeta) -> BTreeMap<String, String> {
    metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(key, _)| !key.starts_with(STASH_ANNOTATION_PREFIX))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

fn strings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect()
}

fn assert_serde_round_trip<T>(value: T)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let json = serde_json::to_value(&value).expect("serializes");
    let back: T = serde_json::from_value(json).expect("deserializes");
    assert_eq!(back, value);
}

// ---------------------------------------------------------------------------------------------
// Advanced StatefulSet
// ---------------------------------------------------------------------------------------------

/// Realistic values for the enum-like StatefulSet spec fields.
fn statefulset_enum_overrides() -> Vec<(String, Value)> {
    let prefix = "spec";
    vec![
        (format!("{prefix}.podManagementPolicy"), json!("Parallel")),
        (format!("{prefix}.updateStrategy.type"), json!("RollingUpdate")),
        (format!("{prefix}.updateStrategy.rollingUpdate.podUpdatePolicy"), json!("InPlaceIfPossible")),
        (format!("{prefix}.volumeClaimUpdateStrategy.type"), json!("OnPodRollingUpdate")),
        (format!("{prefix}.persistentVolumeClaimRetentionPolicy.whenDeleted"), json!("Delete")),
        (format!("{prefix}.persistentVolumeClaimRetentionPolicy.whenScaled"), json!("Retain")),
        (format!("{prefix}.reserveOrdinals"), json!([1, "3-5"])),
    ]
}

fn borrowed(overrides: &[(String, Value)]) -> Vec<(&str, Value)> {
    overrides.iter().map(|(path, value)| (path.as_str(), value.clone())).collect()
}

#[test]
fn statefulset_round_trips_fully_populated() {
    let mut overrides = statefulset_enum_overrides();
    // A v1beta1 object that uses nothing v1alpha1 lacks.
    for (path, value) in [
        ("spec.lifecycle", Value::Null),
        ("spec.scaleStrategy", Value::Null),
        ("spec.persistentVolumeClaimRetentionPolicy", Value::Null),
        ("spec.ordinals", Value::Null),
        ("spec.reserveOrdinals", json!([])),
        ("spec.volumeClaimUpdateStrategy", json!({})),
        ("status.updatedReadyReplicas", json!(0)),
        ("status.updatedAvailableReplicas", json!(0)),
        ("status.volumeClaims", json!([])),
    ] {
        overrides.retain(|(existing, _)| !existing.starts_with(path));
        overrides.push((path.to_string(), value));
    }
    let alpha: v1alpha1::StatefulSet = populated(&borrowed(&statefulset_enum_overrides()));
    let beta: v1beta1::StatefulSet = populated(&borrowed(&overrides));
    assert_round_trips!(alpha, beta, statefulset_to_v1beta1, statefulset_to_v1alpha1, natural = true);
}

#[test]
fn statefulset_round_trips_are_exact_for_fields_only_v1beta1_has() {
    let alpha: v1alpha1::StatefulSet = populated(&borrowed(&statefulset_enum_overrides()));
    let beta: v1beta1::StatefulSet = populated(&borrowed(&statefulset_enum_overrides()));
    assert_round_trips!(alpha, beta, statefulset_to_v1beta1, statefulset_to_v1alpha1, natural = false);
}

#[test]
fn statefulset_shared_fields_are_copied_and_v1beta1_only_fields_start_unset() {
    let alpha: v1alpha1::StatefulSet = object(json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "serviceName": "web",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main", "image": "nginx"}]}},
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "partition": 1,
                    "maxUnavailable": 2,
                    "podUpdatePolicy": "InPlaceIfPossible",
                    "unorderedUpdate": {"priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}},
                    "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10},
                    "minReadySeconds": 5
                }
            }
        },
        "status": {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "currentReplicas": 3, "updatedReplicas": 1, "updateRevision": "web-2"}
    }));
    let beta = statefulset_to_v1beta1(&alpha);
    let beta_json = as_json(&beta);
    assert_eq!(beta_json["spec"]["updateStrategy"], as_json(&alpha)["spec"]["updateStrategy"]);
    assert_eq!(beta_json["spec"]["podManagementPolicy"], "Parallel");
    assert_eq!(beta_json["spec"]["serviceName"], "web");
    assert_eq!(beta.spec.lifecycle, None);
    assert_eq!(beta.spec.scale_strategy, None);
    assert!(beta.spec.reserve_ordinals.is_empty());
    let status = beta.status.as_ref().expect("status");
    assert_eq!((status.updated_replicas, status.updated_ready_replicas), (1, 0));
    assert_eq!(status.update_revision, "web-2");
    assert_eq!(beta.metadata.annotations, None, "nothing needed stashing");
    assert_eq!(statefulset_to_v1alpha1(&beta), alpha);
}

#[test]
fn statefulset_v1beta1_only_fields_are_not_shown_to_v1alpha1_clients_but_survive() {
    let beta: v1beta1::StatefulSet = object(json!({
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}},
            "reserveOrdinals": [1],
            "scaleStrategy": {"maxUnavailable": 1},
            "ordinals": {"start": 5},
            "lifecycle": {"preDelete": {"finalizersHandler": ["example.com/hold"]}}
        }
    }));
    let alpha = statefulset_to_v1alpha1(&beta);
    let alpha_spec = as_json(&alpha)["spec"].clone();
    for field in ["reserveOrdinals", "scaleStrategy", "ordinals", "lifecycle"] {
        assert!(alpha_spec.get(field).is_none(), "{field} is not a v1alpha1 field");
    }
    assert_eq!(alpha.spec.replicas, Some(2));
    assert_eq!(statefulset_to_v1beta1(&alpha), beta, "the stash brings them back");
}

#[test]
fn statefulset_objects_survive_serde() {
    let overrides = statefulset_enum_overrides();
    assert_serde_round_trip(populated::<v1alpha1::StatefulSet>(&borrowed(&overrides)));
    assert_serde_round_trip(populated::<v1beta1::StatefulSet>(&borrowed(&overrides)));
}

// ---------------------------------------------------------------------------------------------
// Advanced DaemonSet
// ---------------------------------------------------------------------------------------------

const PROGRESSIVE: &str = "daemonset.kruise.io/progressive-create-pod";

fn daemonset_alpha(rolling_update: Value, annotations: Value) -> v1alpha1::DaemonSet {
    object(json!({
        "metadata": {"name": "agent", "namespace": "default", "annotations": annotations},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}},
            "updateStrategy": rolling_update
        }
    }))
}

fn daemonset_beta(update_strategy: Value, scale_strategy: Value) -> v1beta1::DaemonSet {
    object(json!({
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}},
            "updateStrategy": update_strategy,
            "scaleStrategy": scale_strategy
        }
    }))
}

#[test]
fn daemonset_round_trips_fully_populated() {
    for rolling_type in ["Standard", "InPlaceIfPossible"] {
        let overrides = [
            ("spec.updateStrategy.type", json!("RollingUpdate")),
            ("spec.updateStrategy.rollingUpdate.rollingUpdateType", json!(rolling_type)),
        ];
        let mut alpha: v1alpha1::DaemonSet = populated(&overrides);
        alpha
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(PROGRESSIVE.into(), "true".into());
        let beta: v1beta1::DaemonSet = populated(&overrides);
        assert_round_trips!(alpha, beta, daemonset_to_v1beta1, daemonset_to_v1alpha1, natural = true);
    }
}

#[test]
fn daemonset_round_trips_are_exact_even_where_upstream_loses_data() {
    let alpha: v1alpha1::DaemonSet =
        populated(&[("spec.updateStrategy.rollingUpdate.rollingUpdateType", json!("Surging"))]);
    let beta: v1beta1::DaemonSet = populated(&[
        ("spec.updateStrategy.rollingUpdate.rollingUpdateType", json!("Standard")),
        ("spec.scaleStrategy.partitionedScaling", json!(false)),
    ]);
    assert_round_trips!(alpha, beta, daemonset_to_v1beta1, daemonset_to_v1alpha1, natural = false);
}

#[test]
fn daemonset_convert_to_all_fields_maps_daemon_set_hash_to_update_revision() {
    let mut alpha = daemonset_alpha(
        json!({"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Standard", "maxUnavailable": 1, "maxSurge": "10%", "selector": {"matchLabels": {"region": "us-west"}}, "partition": 5, "paused": false}}),
        json!(null),
    );
    alpha.spec.min_ready_seconds = 30;
    alpha.status = Some(object(json!({
        "currentNumberScheduled": 5, "numberMisscheduled": 0, "desiredNumberScheduled": 5, "numberReady": 5,
        "observedGeneration": 1, "updatedNumberScheduled": 5, "numberAvailable": 5, "collisionCount": 0,
        "daemonSetHash": "abc123"
    })));
    let beta = daemonset_to_v1beta1(&alpha);
    let status = as_json(&beta)["status"].clone();
    assert_eq!(status["updateRevision"], "abc123");
    assert!(status.get("daemonSetHash").is_none());
    assert_eq!(as_json(&beta)["spec"]["updateStrategy"], as_json(&alpha)["spec"]["updateStrategy"]);
    assert_eq!(beta.spec.min_ready_seconds, 30);
    assert_eq!(beta.spec.scale_strategy, None);
}

#[test]
fn daemonset_convert_to_maps_deprecated_surging_to_standard() {
    let alpha = daemonset_alpha(
        json!({"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Surging", "maxSurge": 1}}),
        json!(null),
    );
    let beta = daemonset_to_v1beta1(&alpha);
    let rolling = as_json(&beta)["spec"]["updateStrategy"]["rollingUpdate"].clone();
    assert_eq!(rolling, json!({"rollingUpdateType": "Standard", "maxSurge": 1}));
    assert_eq!(daemonset_to_v1alpha1(&beta), alpha, "a v1alpha1 client still reads Surging");
}

#[test]
fn daemonset_convert_to_keeps_in_place_if_possible() {
    let alpha = daemonset_alpha(
        json!({"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": "20%"}}),
        json!(null),
    );
    let beta = daemonset_to_v1beta1(&alpha);
    assert_eq!(
        as_json(&beta)["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": "20%"}})
    );
}

#[test]
fn daemonset_convert_to_moves_progressive_annotation_to_partitioned_scaling() {
    let alpha = daemonset_alpha(json!({}), json!({PROGRESSIVE: "true", "other-annotation": "keep-this"}));
    let beta = daemonset_to_v1beta1(&alpha);
    assert_eq!(as_json(&beta)["spec"]["scaleStrategy"], json!({"partitionedScaling": true}));
    assert_eq!(
        beta.metadata.annotations,
        Some(strings(&[("other-annotation", "keep-this")])),
        "the annotation became the field; others stay"
    );
    assert_eq!(daemonset_to_v1alpha1(&beta), alpha);
}

#[test]
fn daemonset_convert_to_without_progressive_annotation_sets_no_scale_strategy() {
    let alpha = daemonset_alpha(json!({}), json!({"other-annotation": "keep-this"}));
    let beta = daemonset_to_v1beta1(&alpha);
    assert_eq!(beta.spec.scale_strategy, None);
    assert_eq!(beta.metadata.annotations, Some(strings(&[("other-annotation", "keep-this")])));
}

#[test]
fn daemonset_convert_to_leaves_other_progressive_values_in_the_annotation() {
    let alpha = daemonset_alpha(json!({}), json!({PROGRESSIVE: "false"}));
    let beta = daemonset_to_v1beta1(&alpha);
    assert_eq!(beta.spec.scale_strategy, None);
    assert_eq!(user_annotations(&beta.metadata), strings(&[(PROGRESSIVE, "false")]));
}

#[test]
fn daemonset_convert_to_keeps_on_delete() {
    let alpha = daemonset_alpha(json!({"type": "OnDelete"}), json!(null));
    let beta = daemonset_to_v1beta1(&alpha);
    assert_eq!(as_json(&beta)["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
}

#[test]
fn daemonset_convert_to_minimal_object_stays_minimal() {
    let alpha = daemonset_alpha(json!({}), json!(null));
    let beta = daemonset_to_v1beta1(&alpha);
    let spec = as_json(&beta)["spec"].clone();
    assert!(spec.get("updateStrategy").is_none(), "an empty strategy is left out");
    assert!(spec.get("scaleStrategy").is_none());
    assert_eq!(beta.metadata.annotations, None);
    assert_eq!(beta.status, None);
}

#[test]
fn daemonset_convert_to_progressive_annotation_alone_leaves_no_annotations() {
    let alpha = daemonset_alpha(json!({}), json!({PROGRESSIVE: "true"}));
    let beta = daemonset_to_v1beta1(&alpha);
    assert_eq!(beta.spec.scale_strategy, Some(v1beta1::DaemonSetScaleStrategy { partitioned_scaling: true }));
    assert_eq!(beta.metadata.annotations, None);
}

#[test]
fn daemonset_convert_from_all_fields_maps_update_revision_to_daemon_set_hash() {
    let mut beta = daemonset_beta(
        json!({"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Standard", "maxUnavailable": 1, "maxSurge": "10%", "partition": 5, "paused": false}}),
        json!(null),
    );
    beta.status = Some(object(json!({
        "currentNumberScheduled": 5, "numberMisscheduled": 0, "desiredNumberScheduled": 5, "numberReady": 5,
        "updatedNumberScheduled": 5, "updateRevision": "abc123"
    })));
    let alpha = daemonset_to_v1alpha1(&beta);
    let status = as_json(&alpha)["status"].clone();
    assert_eq!(status["daemonSetHash"], "abc123");
    assert!(status.get("updateRevision").is_none());
    assert_eq!(as_json(&alpha)["spec"]["updateStrategy"], as_json(&beta)["spec"]["updateStrategy"]);
}

#[test]
fn daemonset_convert_from_partitioned_scaling_writes_the_annotation() {
    let mut beta = daemonset_beta(json!({}), json!({"partitionedScaling": true}));
    beta.metadata.annotations = Some(strings(&[("other-annotation", "keep-this")]));
    let alpha = daemonset_to_v1alpha1(&beta);
    assert_eq!(
        alpha.metadata.annotations,
        Some(strings(&[("other-annotation", "keep-this"), (PROGRESSIVE, "true")]))
    );
}

#[test]
fn daemonset_convert_from_partitioned_scaling_false_writes_nothing() {
    let beta = daemonset_beta(json!({}), json!({"partitionedScaling": false}));
    let alpha = daemonset_to_v1alpha1(&beta);
    assert_eq!(user_annotations(&alpha.metadata), BTreeMap::new());
    assert_eq!(daemonset_to_v1beta1(&alpha), beta, "the stash keeps the explicit false");
}

#[test]
fn daemonset_convert_from_without_scale_strategy_writes_nothing() {
    let beta = daemonset_beta(json!({}), json!(null));
    let alpha = daemonset_to_v1alpha1(&beta);
    assert_eq!(alpha.metadata.annotations, None);
}

#[test]
fn daemonset_convert_from_keeps_in_place_if_possible() {
    let beta = daemonset_beta(
        json!({"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 2}}),
        json!(null),
    );
    let alpha = daemonset_to_v1alpha1(&beta);
    assert_eq!(
        alpha.spec.update_strategy.rolling_update.as_ref().map(|r| r.type_.clone()),
        Some(v1alpha1::DaemonSetRollingUpdateType::InPlaceIfPossible)
    );
    assert_eq!(as_json(&alpha)["spec"]["updateStrategy"], as_json(&beta)["spec"]["updateStrategy"]);
}

#[test]
fn daemonset_convert_from_keeps_on_delete() {
    let beta = daemonset_beta(json!({"type": "OnDelete"}), json!(null));
    let alpha = daemonset_to_v1alpha1(&beta);
    assert_eq!(as_json(&alpha)["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
}

#[test]
fn daemonset_convert_from_minimal_object_stays_minimal() {
    let beta = daemonset_beta(json!({}), json!(null));
    let alpha = daemonset_to_v1alpha1(&beta);
    assert_eq!(alpha.metadata.annotations, None);
    assert_eq!(alpha.spec.update_strategy, Default::default());
    assert_eq!(daemonset_to_v1beta1(&alpha), beta);
}

#[test]
fn daemonset_convert_from_partitioned_scaling_without_annotations_creates_them() {
    let beta = daemonset_beta(json!({}), json!({"partitionedScaling": true}));
    assert_eq!(beta.metadata.annotations, None);
    let alpha = daemonset_to_v1alpha1(&beta);
    assert_eq!(alpha.metadata.annotations, Some(strings(&[(PROGRESSIVE, "true")])));
}

#[test]
fn daemonset_objects_survive_serde() {
    let overrides = [("spec.updateStrategy.rollingUpdate.rollingUpdateType", json!("Standard"))];
    assert_serde_round_trip(populated::<v1alpha1::DaemonSet>(&overrides));
    assert_serde_round_trip(populated::<v1beta1::DaemonSet>(&overrides));
}

// ---------------------------------------------------------------------------------------------
// SidecarSet
// ---------------------------------------------------------------------------------------------

const CUSTOM_VERSION: &str = "apps.kruise.io/sidecarset-custom-version";

fn sidecarset_enum_overrides() -> Vec<(String, Value)> {
    let mut overrides = vec![
        ("spec.updateStrategy.type".to_string(), json!("RollingUpdate")),
        ("spec.patchPodMetadata[].patchPolicy".to_string(), json!("MergePatchJson")),
    ];
    for containers in ["spec.containers[]", "spec.initContainers[]"] {
        for (field, value) in [
            ("podInjectPolicy", "AfterAppContainer"),
            ("upgradeStrategy.upgradeType", "HotUpgrade"),
            ("shareVolumePolicy.type", "enabled"),
            ("shareVolumeDevicePolicy.type", "disabled"),
        ] {
            overrides.push((format!("{containers}.{field}"), json!(value)));
        }
    }
    overrides
}

fn sidecarset_alpha(spec: Value, labels: Value) -> v1alpha1::SidecarSet {
    object(json!({"metadata": {"name": "sidecar", "labels": labels}, "spec": spec}))
}

fn sidecarset_beta(spec: Value, labels: Value) -> v1beta1::SidecarSet {
    object(json!({"metadata": {"name": "sidecar", "labels": labels}, "spec": spec}))
}

fn resources_policy_cases() -> Vec<(&'static str, Value)> {
    vec![
        (
            "sum mode and full expressions",
            json!({"targetContainersMode": "sum", "targetContainersNameRegex": "^app-.*$", "resourcesExpr": {
                "limits": {"cpu": "max(cpu*50%, 50m)", "memory": "200Mi"},
                "requests": {"cpu": "cpu*20%", "memory": "memory*10%"}}}),
        ),
        (
            "max mode",
            json!({"targetContainersMode": "max", "resourcesExpr": {"limits": {"cpu": "cpu", "memory": "memory"}}}),
        ),
        (
            "only limits",
            json!({"targetContainersMode": "sum", "resourcesExpr": {"limits": {"cpu": "cpu*2"}}}),
        ),
        (
            "only requests",
            json!({"targetContainersMode": "sum", "resourcesExpr": {"requests": {"memory": "memory/2"}}}),
        ),
    ]
}

#[test]
fn sidecarset_round_trips_fully_populated() {
    let mut overrides = sidecarset_enum_overrides();
    overrides.push(("spec.namespace".to_string(), json!("")));
    let mut alpha: v1alpha1::SidecarSet = populated(&borrowed(&overrides));
    alpha.metadata.labels.get_or_insert_with(Default::default).insert(CUSTOM_VERSION.into(), "v2".into());
    let beta: v1beta1::SidecarSet = populated(&borrowed(&sidecarset_enum_overrides()));
    assert_round_trips!(alpha, beta, sidecarset_to_v1beta1, sidecarset_to_v1alpha1, natural = true);
}

#[test]
fn sidecarset_round_trips_are_exact_even_where_upstream_loses_data() {
    // `namespace` replaces the v1alpha1 namespaceSelector, which v1beta1 cannot keep beside it.
    let alpha: v1alpha1::SidecarSet = populated(&borrowed(&sidecarset_enum_overrides()));
    let beta: v1beta1::SidecarSet = populated(&borrowed(&sidecarset_enum_overrides()));
    assert_round_trips!(alpha, beta, sidecarset_to_v1beta1, sidecarset_to_v1alpha1, natural = false);
}

#[test]
fn sidecarset_convert_to_all_fields_namespace_takes_priority() {
    let spec = json!({
        "selector": {"matchLabels": {"app": "nginx"}},
        "namespace": "test-namespace",
        "namespaceSelector": {"matchLabels": {"env": "prod"}},
        "initContainers": [{"name": "init-sidecar", "image": "init:latest", "podInjectPolicy": "BeforeAppContainer",
            "upgradeStrategy": {"upgradeType": "ColdUpgrade"}, "shareVolumePolicy": {"type": "enabled"},
            "transferEnv": [{"sourceContainerName": "app", "envName": "APP_ENV"}]}],
        "containers": [{"name": "sidecar", "image": "sidecar:latest", "podInjectPolicy": "AfterAppContainer",
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:latest"},
            "shareVolumePolicy": {"type": "disabled"}, "shareVolumeDevicePolicy": {"type": "enabled"},
            "transferEnv": [{"sourceContainerName": "main", "envNames": ["ENV1", "ENV2"]}]}],
        "volumes": [{"name": "config-volume", "emptyDir": {}}],
        "updateStrategy": {"type": "RollingUpdate", "selector": {"matchLabels": {"update": "true"}},
            "partition": "30%", "maxUnavailable": "20%", "scatterStrategy": [{"key": "zone", "value": "us-west"}]},
        "injectionStrategy": {"revision": {"customVersion": "v1.0", "revisionName": "test-revision", "policy": "Always"}},
        "imagePullSecrets": [{"name": "my-secret"}],
        "revisionHistoryLimit": 5,
        "patchPodMetadata": [{"annotations": {"key": "value"}, "patchPolicy": "Overwrite"}]
    });
    let mut alpha = sidecarset_alpha(spec.clone(), json!({"app": "test", CUSTOM_VERSION: "v1.0"}));
    alpha.status =
        Some(object(json!({"observedGeneration": 1, "matchedPods": 10, "updatedPods": 8, "readyPods": 9,
        "updatedReadyPods": 7, "latestRevision": "test-revision-1", "collisionCount": 0})));
    let beta = sidecarset_to_v1beta1(&alpha);

    assert_eq!(beta.metadata.labels, Some(strings(&[("app", "test")])), "the custom-version label moved");
    assert_eq!(beta.spec.custom_version, "v1.0");
    let beta_spec = as_json(&beta)["spec"].clone();
    assert_eq!(
        beta_spec["namespaceSelector"],
        json!({"matchLabels": {"kubernetes.io/metadata.name": "test-namespace"}})
    );
    assert!(beta_spec.get("namespace").is_none());
    for field in [
        "selector",
        "initContainers",
        "containers",
        "volumes",
        "updateStrategy",
        "injectionStrategy",
        "imagePullSecrets",
        "revisionHistoryLimit",
        "patchPodMetadata",
    ] {
        assert_eq!(beta_spec[field], spec[field], "{field} is copied");
    }
    assert_eq!(as_json(&beta)["status"], as_json(&alpha)["status"]);
    assert_eq!(sidecarset_to_v1alpha1(&beta), alpha, "a v1alpha1 client reads back what it wrote");
}

#[test]
fn sidecarset_convert_to_minimal_object_stays_minimal() {
    let alpha = sidecarset_alpha(json!({"selector": {"matchLabels": {"app": "test"}}}), json!(null));
    let beta = sidecarset_to_v1beta1(&alpha);
    assert_eq!(beta.spec.namespace_selector, None);
    assert_eq!(beta.spec.custom_version, "");
    assert_eq!((beta.metadata.labels.clone(), beta.metadata.annotations.clone()), (None, None));
    assert_eq!(as_json(&beta)["spec"]["selector"], json!({"matchLabels": {"app": "test"}}));
}

#[test]
fn sidecarset_convert_to_namespace_only_becomes_a_namespace_selector() {
    let alpha = sidecarset_alpha(json!({"namespace": "ns-1"}), json!(null));
    let beta = sidecarset_to_v1beta1(&alpha);
    assert_eq!(
        as_json(&beta)["spec"]["namespaceSelector"],
        json!({"matchLabels": {"kubernetes.io/metadata.name": "ns-1"}})
    );
    assert_eq!(sidecarset_to_v1alpha1(&beta), alpha);
}

#[test]
fn sidecarset_convert_to_namespace_selector_only_is_copied() {
    let alpha = sidecarset_alpha(json!({"namespaceSelector": {"matchLabels": {"env": "prod"}}}), json!(null));
    let beta = sidecarset_to_v1beta1(&alpha);
    assert_eq!(as_json(&beta)["spec"]["namespaceSelector"], json!({"matchLabels": {"env": "prod"}}));
    assert_eq!(beta.metadata.annotations, None, "nothing needed stashing");
}

#[test]
fn sidecarset_convert_to_copies_resources_policies() {
    for (case, policy) in resources_policy_cases() {
        let alpha = sidecarset_alpha(
            json!({"containers": [{"name": "sidecar", "image": "sidecar:1", "resourcesPolicy": policy}]}),
            json!(null),
        );
        let beta = sidecarset_to_v1beta1(&alpha);
        assert_eq!(as_json(&beta)["spec"]["containers"][0]["resourcesPolicy"], policy, "{case}");
        assert_eq!(beta.metadata.annotations, None, "{case}: nothing needed stashing");
    }
}

#[test]
fn sidecarset_convert_to_copies_resources_policy_of_init_containers() {
    let policy = json!({"targetContainersMode": "max", "resourcesExpr": {"requests": {"cpu": "cpu"}}});
    let alpha = sidecarset_alpha(
        json!({"initContainers": [{"name": "init", "image": "init:1", "restartPolicy": "Always", "resourcesPolicy": policy}]}),
        json!(null),
    );
    let beta = sidecarset_to_v1beta1(&alpha);
    let init = as_json(&beta)["spec"]["initContainers"][0].clone();
    assert_eq!(init["resourcesPolicy"], policy);
    assert_eq!(init["restartPolicy"], "Always");
}

#[test]
fn sidecarset_convert_to_without_resources_policy_adds_none() {
    let alpha =
        sidecarset_alpha(json!({"containers": [{"name": "sidecar", "image": "sidecar:1"}]}), json!(null));
    let beta = sidecarset_to_v1beta1(&alpha);
    assert_eq!(beta.spec.containers[0].resources_policy, None);
    assert!(as_json(&beta)["spec"]["containers"][0].get("resourcesPolicy").is_none());
}

#[test]
fn sidecarset_convert_from_all_fields_writes_the_custom_version_label() {
    let spec = json!({
        "selector": {"matchLabels": {"app": "nginx"}},
        "namespaceSelector": {"matchLabels": {"env": "prod"}},
        "containers": [{"name": "sidecar", "image": "sidecar:latest", "podInjectPolicy": "AfterAppContainer"}],
        "injectionStrategy": {"revision": {"customVersion": "v1.0", "policy": "Always"}},
        "customVersion": "v1.0"
    });
    let beta = sidecarset_beta(spec.clone(), json!({"app": "test"}));
    let alpha = sidecarset_to_v1alpha1(&beta);
    assert_eq!(alpha.metadata.labels, Some(strings(&[("app", "test"), (CUSTOM_VERSION, "v1.0")])));
    let alpha_spec = as_json(&alpha)["spec"].clone();
    assert!(alpha_spec.get("customVersion").is_none());
    assert!(alpha_spec.get("namespace").is_none());
    let beta_spec = as_json(&beta)["spec"].clone();
    assert_eq!(alpha_spec["namespaceSelector"], beta_spec["namespaceSelector"]);
    assert_eq!(alpha_spec["containers"], beta_spec["containers"]);
    assert_eq!(sidecarset_to_v1beta1(&alpha), beta);
}

#[test]
fn sidecarset_convert_from_minimal_object_stays_minimal() {
    let beta = sidecarset_beta(json!({"selector": {"matchLabels": {"app": "test"}}}), json!(null));
    let alpha = sidecarset_to_v1alpha1(&beta);
    assert_eq!((alpha.metadata.labels.clone(), alpha.metadata.annotations.clone()), (None, None));
    assert_eq!(alpha.spec.namespace, "");
    assert_eq!(alpha.spec.namespace_selector, None);
}

#[test]
fn sidecarset_convert_from_copies_the_namespace_selector() {
    let beta =
        sidecarset_beta(json!({"namespaceSelector": {"matchLabels": {"env": "staging"}}}), json!(null));
    let alpha = sidecarset_to_v1alpha1(&beta);
    assert_eq!(as_json(&alpha)["spec"]["namespaceSelector"], json!({"matchLabels": {"env": "staging"}}));
    assert_eq!(alpha.spec.namespace, "");
}

#[test]
fn sidecarset_convert_from_without_namespace_selector_sets_none() {
    let beta = sidecarset_beta(json!({}), json!(null));
    let alpha = sidecarset_to_v1alpha1(&beta);
    assert_eq!((alpha.spec.namespace.as_str(), alpha.spec.namespace_selector.clone()), ("", None));
}

#[test]
fn sidecarset_convert_from_copies_resources_policies() {
    for (case, policy) in resources_policy_cases() {
        let beta = sidecarset_beta(
            json!({"containers": [{"name": "sidecar", "image": "sidecar:1", "resourcesPolicy": policy}]}),
            json!(null),
        );
        let alpha = sidecarset_to_v1alpha1(&beta);
        assert_eq!(as_json(&alpha)["spec"]["containers"][0]["resourcesPolicy"], policy, "{case}");
        assert_eq!(alpha.metadata.annotations, None, "{case}: nothing needed stashing");
    }
}

#[test]
fn sidecarset_convert_from_copies_resources_policy_of_init_containers() {
    let policy = json!({"targetContainersMode": "sum", "resourcesExpr": {"limits": {"memory": "memory"}}});
    let beta = sidecarset_beta(
        json!({"initContainers": [{"name": "init", "image": "init:1", "resourcesPolicy": policy}]}),
        json!(null),
    );
    let alpha = sidecarset_to_v1alpha1(&beta);
    assert_eq!(as_json(&alpha)["spec"]["initContainers"][0]["resourcesPolicy"], policy);
}

#[test]
fn sidecarset_convert_from_without_resources_policy_adds_none() {
    let beta =
        sidecarset_beta(json!({"containers": [{"name": "sidecar", "image": "sidecar:1"}]}), json!(null));
    let alpha = sidecarset_to_v1alpha1(&beta);
    assert_eq!(alpha.spec.containers[0].resources_policy, None);
}

#[test]
fn sidecarset_container_body_and_kruise_fields_share_one_object() {
    let alpha = sidecarset_alpha(
        json!({"containers": [{"name": "envoy", "image": "envoy:1", "args": ["-c", "x"], "podInjectPolicy": "BeforeAppContainer"}]}),
        json!(null),
    );
    let container = &alpha.spec.containers[0];
    assert_eq!(container.container.name, "envoy");
    assert_eq!(container.container.args, Some(vec!["-c".to_string(), "x".to_string()]));
    assert_eq!(container.pod_inject_policy, v1beta1::PodInjectPolicyType::BeforeAppContainer);
    let written = as_json(&alpha)["spec"]["containers"][0].clone();
    assert_eq!(written["name"], "envoy");
    assert_eq!(written["podInjectPolicy"], "BeforeAppContainer");
}

#[test]
fn sidecarset_objects_survive_serde() {
    assert_serde_round_trip(populated::<v1alpha1::SidecarSet>(&borrowed(&sidecarset_enum_overrides())));
    assert_serde_round_trip(populated::<v1beta1::SidecarSet>(&borrowed(&sidecarset_enum_overrides())));
}

// ---------------------------------------------------------------------------------------------
// UnitedDeployment
// ---------------------------------------------------------------------------------------------

fn uniteddeployment_enum_overrides() -> Vec<(&'static str, Value)> {
    vec![
        ("spec.template.cloneSetTemplate.spec.updateStrategy.type", json!("RollingUpdate")),
        (
            "spec.template.cloneSetTemplate.spec.updateStrategy.rollingUpdate.podUpdatePolicy",
            json!("InPlaceIfPossible"),
        ),
        ("spec.template.advancedStatefulSetTemplate.spec.podManagementPolicy", json!("Parallel")),
        ("spec.template.advancedStatefulSetTemplate.spec.updateStrategy.type", json!("RollingUpdate")),
        (
            "spec.template.advancedStatefulSetTemplate.spec.updateStrategy.rollingUpdate.podUpdatePolicy",
            json!("InPlaceIfPossible"),
        ),
        ("spec.template.advancedStatefulSetTemplate.spec.volumeClaimUpdateStrategy.type", json!("OnDelete")),
        ("status.conditions[].type", json!("SubsetUpdated")),
        ("status.conditions[].status", json!("True")),
        ("status.subsetStatuses[].conditions[].type", json!("Schedulable")),
        ("status.subsetStatuses[].conditions[].status", json!("False")),
    ]
}

/// The upstream test fixture: two subsets, Adaptive scheduling, a Manual update under way.
fn uniteddeployment_fixture(template: Value) -> v1alpha1::UnitedDeployment {
    object(json!({
        "metadata": {"name": "demo", "namespace": "default", "labels": {"app": "demo"}},
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": {"app": "demo"}},
            "template": template,
            "topology": {
                "subsets": [
                    {"name": "subset-a", "minReplicas": 1, "maxReplicas": "80%", "patch": {"metadata": {"labels": {"subset": "a"}}}},
                    {"name": "subset-b"}
                ],
                "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 45, "unschedulableDuration": 600, "reserveUnschedulablePods": true}}
            },
            "updateStrategy": {"type": "Manual", "manualUpdate": {"partitions": {"subset-a": 1}}},
            "revisionHistoryLimit": 12
        },
        "status": {
            "observedGeneration": 7, "readyReplicas": 4, "replicas": 5, "updatedReplicas": 3, "reservedPods": 1,
            "updatedReadyReplicas": 2, "collisionCount": 1, "currentRevision": "rev-old",
            "subsetReplicas": {"subset-a": 3, "subset-b": 2},
            "subsetStatuses": [
                {"name": "subset-a", "replicas": 3, "readyReplicas": 2, "partition": 1, "reservedPods": 1,
                 "conditions": [{"type": "Schedulable", "status": "False", "lastTransitionTime": "2024-03-09T16:00:00Z",
                                 "reason": "reschedule", "message": "reserved pods found"}]},
                {"name": "subset-b", "replicas": 2, "readyReplicas": 2}
            ],
            "conditions": [{"type": "UnitedDeploymentUpdated", "status": "False", "lastTransitionTime": "2024-03-09T16:00:00Z",
                            "reason": "UnitedDeploymentRevisionUpdating", "message": "updating to revision rev-new"}],
            "updateStatus": {"updatedRevision": "rev-new", "currentPartitions": {"subset-a": 1, "subset-b": 0}},
            "labelSelector": "app=demo"
        }
    }))
}

fn pod_template() -> Value {
    json!({"metadata": {"labels": {"app": "demo"}}, "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}})
}

fn subset_replicas(status: &v1beta1::UnitedDeploymentStatus) -> BTreeMap<String, i32> {
    status
        .subset_statuses
        .iter()
        .filter(|subset| !subset.name.is_empty())
        .map(|subset| (subset.name.clone(), subset.replicas))
        .collect()
}

#[test]
fn uniteddeployment_round_trips_fully_populated() {
    let mut alpha_overrides = uniteddeployment_enum_overrides();
    // The legacy maps agree with the subset statuses, as the controller writes them.
    alpha_overrides.push(("status.subsetReplicas", json!({"v-name": 7})));
    alpha_overrides.push(("status.updateStatus.currentPartitions", json!({"v-name": 7})));
    let alpha: v1alpha1::UnitedDeployment = populated(&alpha_overrides);
    let beta: v1beta1::UnitedDeployment = populated(&uniteddeployment_enum_overrides());
    assert_round_trips!(
        alpha,
        beta,
        uniteddeployment_to_v1beta1,
        uniteddeployment_to_v1alpha1,
        natural = true
    );
}

#[test]
fn uniteddeployment_round_trips_are_exact_even_where_upstream_loses_data() {
    // subsetReplicas names a subset without a status entry: upstream adds one.
    let alpha: v1alpha1::UnitedDeployment = populated(&uniteddeployment_enum_overrides());
    let beta: v1beta1::UnitedDeployment = populated(&[("status.subsetStatuses[].name", json!(""))]);
    assert_round_trips!(
        alpha,
        beta,
        uniteddeployment_to_v1beta1,
        uniteddeployment_to_v1alpha1,
        natural = false
    );
}

#[test]
fn uniteddeployment_conversion_round_trip_for_every_template_kind() {
    let templates = [
        (
            "statefulSetTemplate",
            json!({"metadata": {"labels": {"app": "demo"}}, "spec": {"selector": {"matchLabels": {"app": "demo"}}, "template": pod_template()}}),
        ),
        (
            "advancedStatefulSetTemplate",
            json!({"metadata": {"labels": {"app": "demo"}}, "spec": {"template": pod_template()}}),
        ),
        (
            "cloneSetTemplate",
            json!({"metadata": {"labels": {"app": "demo"}}, "spec": {"template": pod_template()}}),
        ),
        (
            "deploymentTemplate",
            json!({"metadata": {"labels": {"app": "demo"}}, "spec": {"selector": {"matchLabels": {"app": "demo"}}, "template": pod_template()}}),
        ),
    ];
    for (kind, template) in templates {
        let alpha = uniteddeployment_fixture(json!({kind: template}));
        let beta = uniteddeployment_to_v1beta1(&alpha);

        assert_eq!(beta.metadata.name.as_deref(), Some("demo"), "{kind}");
        let beta_json = as_json(&beta);
        assert_eq!(beta_json["apiVersion"], "apps.kruise.io/v1beta1", "{kind}");
        assert_eq!(beta_json["kind"], "UnitedDeployment", "{kind}");
        assert_eq!(
            beta_json["spec"]["updateStrategy"],
            json!({"type": "Manual", "manualUpdate": {"partitions": {"subset-a": 1}}}),
            "{kind}"
        );
        assert_eq!(beta_json["spec"]["template"], as_json(&alpha)["spec"]["template"], "{kind}");
        assert!(beta_json["spec"]["template"].get(kind).is_some(), "{kind}");
        assert_eq!(
            beta.spec.topology.schedule_strategy.type_,
            v1beta1::UnitedDeploymentScheduleStrategyType::Adaptive,
            "{kind}"
        );
        let status = beta.status.as_ref().expect("status");
        assert_eq!(status.updated_revision, "rev-new", "{kind}");
        assert_eq!(status.subset_statuses.len(), 2, "{kind}");
        assert_eq!(
            subset_replicas(status),
            BTreeMap::from([("subset-a".into(), 3), ("subset-b".into(), 2)]),
            "{kind}"
        );

        let back = uniteddeployment_to_v1alpha1(&beta);
        assert_eq!(as_json(&back)["apiVersion"], "apps.kruise.io/v1alpha1", "{kind}");
        assert_eq!(back, alpha, "{kind}");
        assert_eq!(beta.metadata.annotations, None, "{kind}: nothing needed stashing");
    }
}

#[test]
fn uniteddeployment_convert_to_v1beta1_merges_legacy_status_into_subset_statuses() {
    let mut alpha =
        uniteddeployment_fixture(json!({"deploymentTemplate": {"spec": {"template": pod_template()}}}));
    let status = alpha.status.as_mut().expect("status");
    status.subset_replicas = BTreeMap::from([("subset-a".into(), 5), ("subset-c".into(), 1)]);
    status.update_status.as_mut().expect("update status").current_partitions =
        BTreeMap::from([("subset-a".into(), 2), ("subset-c".into(), 3)]);

    let beta = uniteddeployment_to_v1beta1(&alpha);
    let status = beta.status.as_ref().expect("status");
    let subset_a = status.subset_status("subset-a").expect("subset-a");
    assert_eq!((subset_a.replicas, subset_a.partition, subset_a.ready_replicas), (5, 2, 2));
    assert_eq!(subset_a.conditions.len(), 1);
    let subset_c = status.subset_status("subset-c").expect("subset-c");
    assert_eq!((subset_c.replicas, subset_c.partition), (1, 3));
    assert!(subset_c.conditions.is_empty());
    assert_eq!(uniteddeployment_to_v1alpha1(&beta), alpha, "the stash keeps the exact v1alpha1 status");
}

#[test]
fn uniteddeployment_convert_from_v1beta1_normalizes_legacy_subset_replicas() {
    let beta: v1beta1::UnitedDeployment = object(json!({
        "metadata": {"name": "demo"},
        "status": {"subsetStatuses": [{"name": "", "replicas": 9}, {"name": "subset-a", "replicas": 3}]}
    }));
    let alpha = uniteddeployment_to_v1alpha1(&beta);
    let status = alpha.status.as_ref().expect("status");
    assert_eq!(status.subset_replicas, BTreeMap::from([("subset-a".into(), 3)]));
    assert_eq!(as_json(&alpha)["status"]["updateStatus"], json!({"currentPartitions": {"subset-a": 0}}));
}

#[test]
fn uniteddeployment_convert_from_v1beta1_leaves_legacy_subset_replicas_unset_without_named_statuses() {
    let beta: v1beta1::UnitedDeployment = object(json!({
        "metadata": {"name": "demo"},
        "status": {"subsetStatuses": [{"name": "", "replicas": 9}]}
    }));
    let alpha = uniteddeployment_to_v1alpha1(&beta);
    assert!(alpha.status.as_ref().expect("status").subset_replicas.is_empty());
    assert!(as_json(&alpha)["status"].get("subsetReplicas").is_none());
}

#[test]
fn uniteddeployment_convert_from_v1beta1_without_revision_or_subsets_has_no_update_status() {
    let beta: v1beta1::UnitedDeployment =
        object(json!({"metadata": {"name": "demo"}, "status": {"replicas": 0, "currentRevision": "rev-1"}}));
    let alpha = uniteddeployment_to_v1alpha1(&beta);
    assert_eq!(alpha.status.as_ref().expect("status").update_status, None);
}

#[test]
fn uniteddeployment_objects_survive_serde() {
    assert_serde_round_trip(populated::<v1alpha1::UnitedDeployment>(&uniteddeployment_enum_overrides()));
    assert_serde_round_trip(populated::<v1beta1::UnitedDeployment>(&uniteddeployment_enum_overrides()));
}
