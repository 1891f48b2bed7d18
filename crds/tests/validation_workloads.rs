//! Defaults and validation of Advanced StatefulSet, Advanced DaemonSet, SidecarSet and
//! UnitedDeployment, one case per rule: each case changes one thing in a valid object (after
//! the webhook's defaults) and names the fields the errors must point at.
#![allow(clippy::unwrap_used)] // test fixtures are known to be well formed

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::EnvVar},
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{
        SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION, default_daemonset_v1alpha1,
        default_daemonset_v1beta1, default_sidecarset_v1alpha1, default_sidecarset_v1beta1,
        default_statefulset_v1alpha1, default_statefulset_v1beta1,
        default_statefulset_volume_claim_update_strategy, default_uniteddeployment_v1alpha1,
        default_uniteddeployment_v1beta1, set_sidecarset_hash_annotations_v1beta1, sidecarset_hash,
        sidecarset_hash_without_image,
    },
    field::ErrorList,
    quantity::Quantity,
    validation::{
        ResizedClaimTemplate, SidecarResourceExprError, SidecarResourceValue,
        SidecarSetPatchMetadataWhitelist, StorageClassLookup, check_sidecar_resource_expr,
        parse_sidecar_resource_expr, parse_uniteddeployment_subset_replicas, resized_claim_templates,
        sidecarset_conflicts, sidecarset_selectors_overlap, validate_claim_template_expansion,
        validate_daemonset_v1alpha1, validate_daemonset_v1beta1, validate_sidecarset_injection_revision,
        validate_sidecarset_patch_metadata_whitelist, validate_sidecarset_v1alpha1,
        validate_sidecarset_v1beta1, validate_statefulset_v1alpha1, validate_statefulset_v1beta1,
        validate_statefulset_volume_claim_templates_update, validate_uniteddeployment_v1alpha1,
        validate_uniteddeployment_v1beta1,
    },
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn patched(base: Value, patch: Value) -> Value {
    let mut document = base;
    json_patch::merge(&mut document, &patch);
    document
}

fn decode<T: DeserializeOwned>(document: Value) -> T {
    serde_json::from_value(document).expect("test document decodes")
}

fn paths(errors: &ErrorList) -> Vec<String> {
    errors.iter().map(|e| e.path.to_string()).collect()
}

/// Runs a table: every case's errors, after `default`, must be exactly the expected paths.
fn check_table<T: DeserializeOwned>(
    base: fn() -> Value,
    default: impl Fn(&mut T),
    validate: impl Fn(&T) -> ErrorList,
    cases: Vec<(&str, Value, Vec<&str>)>,
) {
    for (rule, patch, expected) in cases {
        let mut object: T = decode(patched(base(), patch));
        default(&mut object);
        let errors = validate(&object);
        assert_eq!(paths(&errors), expected, "rule: {rule}: {errors:#?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Advanced StatefulSet
// ---------------------------------------------------------------------------------------------

fn sts_v1beta1() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                    "containers": [{
                        "name": "main",
                        "image": "mysql:8",
                        "volumeMounts": [{"name": "data", "mountPath": "/var/lib/mysql"}]
                    }]
                }
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }],
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2}
            },
            "reserveOrdinals": [1, "5-7"]
        }
    })
}

fn sts_v1alpha1() -> Value {
    let mut base = sts_v1beta1();
    base["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    base["spec"].as_object_mut().unwrap().remove("reserveOrdinals");
    base
}

fn sts_beta(patch: Value) -> v1beta1::StatefulSet {
    let mut sts: v1beta1::StatefulSet = decode(patched(sts_v1beta1(), patch));
    default_statefulset_v1beta1(&mut sts, true);
    sts
}

#[test]
fn statefulset_base_objects_are_valid() {
    assert_eq!(paths(&validate_statefulset_v1beta1(&sts_beta(json!({})), None)), Vec::<String>::new());
    let mut alpha: v1alpha1::StatefulSet = decode(sts_v1alpha1());
    default_statefulset_v1alpha1(&mut alpha, true);
    assert_eq!(paths(&validate_statefulset_v1alpha1(&alpha, None)), Vec::<String>::new());
    // Without defaults too: nothing the base relies on is filled in by defaulting.
    let raw: v1beta1::StatefulSet = decode(sts_v1beta1());
    assert_eq!(paths(&validate_statefulset_v1beta1(&raw, None)), Vec::<String>::new());
}

#[test]
fn each_statefulset_rule_names_its_field() {
    let mu = "spec.updateStrategy.rollingUpdate.maxUnavailable";
    let rolling = |value: Value| json!({"spec": {"updateStrategy": {"rollingUpdate": value}}});
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("name is a DNS subdomain", json!({"metadata": {"name": "DB_1"}}), vec!["metadata.name"]),
        (
            "podManagementPolicy values (and maxUnavailable 2 then needs Parallel)",
            json!({"spec": {"podManagementPolicy": "Random"}}),
            vec!["spec.podManagementPolicy", mu],
        ),
        (
            "maxUnavailable other than 1 needs Parallel",
            json!({"spec": {"podManagementPolicy": "OrderedReady"}}),
            vec![mu],
        ),
        ("maxUnavailable at least 1", rolling(json!({"maxUnavailable": 0})), vec![mu]),
        ("maxUnavailable 0% is below 1", rolling(json!({"maxUnavailable": "0%"})), vec![mu]),
        ("maxUnavailable whole percentages only", rolling(json!({"maxUnavailable": "12.5%"})), vec![mu]),
        (
            "maxUnavailable percentage is fine with Parallel",
            rolling(json!({"maxUnavailable": "50%"})),
            vec![],
        ),
        (
            "update type values",
            json!({"spec": {"updateStrategy": {"type": "Rolling"}}}),
            vec!["spec.updateStrategy.type"],
        ),
        (
            "OnDelete takes no rollingUpdate",
            json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}),
            vec!["spec.updateStrategy.rollingUpdate"],
        ),
        (
            "partition non-negative",
            rolling(json!({"partition": -1})),
            vec!["spec.updateStrategy.rollingUpdate.partition"],
        ),
        (
            "minReadySeconds at most 300",
            rolling(json!({"minReadySeconds": 301})),
            vec!["spec.updateStrategy.rollingUpdate.minReadySeconds"],
        ),
        (
            "minReadySeconds non-negative",
            rolling(json!({"minReadySeconds": -1})),
            vec!["spec.updateStrategy.rollingUpdate.minReadySeconds"],
        ),
        (
            "podUpdatePolicy values",
            rolling(json!({"podUpdatePolicy": "Hot"})),
            vec!["spec.updateStrategy.rollingUpdate.podUpdatePolicy"],
        ),
        (
            "in-place update needs the InPlaceUpdateReady readiness gate",
            json!({"spec": {"template": {"spec": {"readinessGates": null}},
                "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}}}}),
            vec!["spec.template.spec.readinessGates"],
        ),
        (
            "ReCreate needs no readiness gate",
            json!({"spec": {"template": {"spec": {"readinessGates": null}},
                "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "ReCreate"}}}}),
            vec![],
        ),
        (
            "unorderedUpdate needs Parallel",
            json!({"spec": {"podManagementPolicy": "OrderedReady",
                "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1, "unorderedUpdate": {}}}}}),
            vec!["spec.updateStrategy.rollingUpdate.unorderedUpdate"],
        ),
        (
            "unorderedUpdate priority weights 0-100",
            rolling(json!({"unorderedUpdate": {"priorityStrategy": {
                "weightPriority": [{"weight": 101, "matchSelector": {"matchLabels": {"a": "b"}}}]}}})),
            vec![
                "spec.updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy.weightPriority[0].weight",
            ],
        ),
        ("replicas non-negative", json!({"spec": {"replicas": -1}}), vec!["spec.replicas"]),
        ("selector required", json!({"spec": {"selector": null}}), vec!["spec.selector"]),
        ("selector non-empty", json!({"spec": {"selector": {"matchLabels": null}}}), vec!["spec.selector"]),
        (
            "selector matches the template",
            json!({"spec": {"selector": {"matchLabels": {"app": "web"}}}}),
            vec!["spec.template.metadata.labels"],
        ),
        (
            "template valid",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": ""}]}}}}),
            vec!["spec.template.spec.containers[0].image"],
        ),
        (
            "mounts name a volume or a claim template",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "x",
                "volumeMounts": [{"name": "logs", "mountPath": "/logs"}]}]}}}}),
            vec!["spec.template.spec.containers[0].volumeMounts[0].name"],
        ),
        (
            "restartPolicy Always",
            json!({"spec": {"template": {"spec": {"restartPolicy": "Never"}}}}),
            vec!["spec.template.spec.restartPolicy"],
        ),
        (
            "no activeDeadlineSeconds",
            json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 30}}}}),
            vec!["spec.template.spec.activeDeadlineSeconds"],
        ),
        (
            "reserveOrdinals: non-negative numbers and ascending ranges",
            json!({"spec": {"reserveOrdinals": [-1, "7-5", "a-b", "3", "2-2", 0]}}),
            vec![
                "spec.reserveOrdinals[0]",
                "spec.reserveOrdinals[1]",
                "spec.reserveOrdinals[2]",
                "spec.reserveOrdinals[3]",
            ],
        ),
        (
            "scaleStrategy.maxUnavailable at least 1",
            json!({"spec": {"scaleStrategy": {"maxUnavailable": 0}}}),
            vec!["spec.scaleStrategy.maxUnavailable"],
        ),
        (
            "PVC retention values",
            json!({"spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep"}}}),
            vec!["spec.persistentVolumeClaimRetentionPolicy.whenDeleted"],
        ),
        (
            "ordinals.start non-negative",
            json!({"spec": {"ordinals": {"start": -1}}}),
            vec!["spec.ordinals.start"],
        ),
    ];
    check_table(
        sts_v1beta1,
        |s| default_statefulset_v1beta1(s, true),
        |s| validate_statefulset_v1beta1(s, None),
        cases,
    );
}

#[test]
fn statefulset_required_fields_are_reported_without_defaults() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "podManagementPolicy required (and maxUnavailable 2 then needs Parallel)",
            json!({"spec": {"podManagementPolicy": null}}),
            vec!["spec.podManagementPolicy", "spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "update type required",
            json!({"spec": {"updateStrategy": {"type": null}}}),
            vec!["spec.updateStrategy.type"],
        ),
        (
            "maxUnavailable required",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": null}}}}),
            vec!["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "podUpdatePolicy required",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": null}}}}),
            vec!["spec.updateStrategy.rollingUpdate.podUpdatePolicy"],
        ),
    ];
    check_table(
        sts_v1beta1,
        |_: &mut v1beta1::StatefulSet| {},
        |s| validate_statefulset_v1beta1(s, None),
        cases,
    );
}

#[test]
fn v1alpha1_statefulset_rules_use_v1alpha1_paths() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "update type values",
            json!({"spec": {"updateStrategy": {"type": "Rolling"}}}),
            vec!["spec.updateStrategy.type"],
        ),
        (
            "podUpdatePolicy values",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "Hot"}}}}),
            vec!["spec.updateStrategy.rollingUpdate.podUpdatePolicy"],
        ),
        ("selector non-empty", json!({"spec": {"selector": {"matchLabels": null}}}), vec!["spec.selector"]),
    ];
    check_table(
        sts_v1alpha1,
        |s| default_statefulset_v1alpha1(s, true),
        |s| validate_statefulset_v1alpha1(s, None),
        cases,
    );
}

#[test]
fn statefulset_updates_keep_identity_fields_and_in_place_only_allows_images_only() {
    let old =
        sts_beta(json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}}}}));

    let mut allowed = old.clone();
    allowed.spec.replicas = Some(7);
    allowed.spec.reserve_ordinals = vec![IntOrString::Int(2)];
    allowed.spec.template.spec.as_mut().unwrap().containers[0].image = Some("mysql:8.1".into());
    assert_eq!(paths(&validate_statefulset_v1beta1(&allowed, Some(&old))), Vec::<String>::new());

    let mut env_change = old.clone();
    env_change.spec.template.spec.as_mut().unwrap().containers[0].env =
        Some(vec![EnvVar { name: "A".into(), value: Some("1".into()), ..Default::default() }]);
    let errors = validate_statefulset_v1beta1(&env_change, Some(&old));
    assert_eq!(paths(&errors), ["spec.template"]);
    assert!(errors[0].to_string().contains("only container images may change"), "{}", errors[0]);

    let mut identity = old.clone();
    identity.spec.service_name = "other".into();
    identity.spec.selector = Some(LabelSelector {
        match_labels: Some(
            [("app".to_string(), "db".to_string()), ("tier".to_string(), "x".to_string())].into(),
        ),
        ..Default::default()
    });
    identity.spec.template.metadata.as_mut().unwrap().labels =
        Some([("app".to_string(), "db".to_string()), ("tier".to_string(), "x".to_string())].into());
    identity.spec.update_strategy.rolling_update.as_mut().unwrap().pod_update_policy =
        v1beta1::PodUpdatePolicy::ReCreate;
    assert_eq!(
        paths(&validate_statefulset_v1beta1(&identity, Some(&old))),
        ["spec.selector", "spec.serviceName"]
    );

    let old_ordered = sts_beta(json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}}}));
    let mut policy_change = old_ordered.clone();
    policy_change.spec.pod_management_policy = v1beta1::PodManagementPolicyType::OrderedReady;
    assert_eq!(
        paths(&validate_statefulset_v1beta1(&policy_change, Some(&old_ordered))),
        ["spec.podManagementPolicy"]
    );

    let old_alpha: v1alpha1::StatefulSet = decode(sts_v1alpha1());
    let mut alpha = old_alpha.clone();
    alpha.spec.service_name = "other".into();
    assert_eq!(paths(&validate_statefulset_v1alpha1(&alpha, Some(&old_alpha))), ["spec.serviceName"]);
}

#[test]
fn statefulset_claim_templates_only_resize_with_on_pod_rolling_update() {
    let old = sts_beta(json!({"spec": {"volumeClaimUpdateStrategy": {"type": "OnPodRollingUpdate"}}}));
    let mut resized = old.clone();
    let claim = resized.spec.volume_claim_templates[0].spec.as_mut().unwrap();
    claim
        .resources
        .as_mut()
        .unwrap()
        .requests
        .as_mut()
        .unwrap()
        .insert("storage".into(), k8s_openapi::apimachinery::pkg::api::resource::Quantity("5Gi".into()));
    assert!(validate_statefulset_volume_claim_templates_update(&resized.spec, &old.spec).is_empty());

    let mut modes = old.clone();
    modes.spec.volume_claim_templates[0].spec.as_mut().unwrap().access_modes =
        Some(vec!["ReadWriteMany".into()]);
    assert_eq!(
        paths(&validate_statefulset_volume_claim_templates_update(&modes.spec, &old.spec)),
        ["spec.volumeClaimTemplates[0]"]
    );

    let mut renamed = old.clone();
    renamed.spec.volume_claim_templates[0].metadata.name = Some("data2".into());
    assert_eq!(
        paths(&validate_statefulset_volume_claim_templates_update(&renamed.spec, &old.spec)),
        ["spec.volumeClaimTemplates[0].metadata.name"]
    );

    let mut added = old.clone();
    let mut extra = added.spec.volume_claim_templates[0].clone();
    extra.metadata.name = Some("logs".into());
    added.spec.volume_claim_templates.push(extra);
    assert_eq!(
        paths(&validate_statefulset_volume_claim_templates_update(&added.spec, &old.spec)),
        ["spec.volumeClaimTemplates", "spec.volumeClaimTemplates[1].metadata.name"]
    );

    // OnDelete (the default strategy) allows any change.
    let mut on_delete_old = old.clone();
    on_delete_old.spec.volume_claim_update_strategy = Default::default();
    default_statefulset_volume_claim_update_strategy(&mut on_delete_old.spec);
    let mut on_delete_new = modes.clone();
    on_delete_new.spec.volume_claim_update_strategy = on_delete_old.spec.volume_claim_update_strategy.clone();
    assert!(
        validate_statefulset_volume_claim_templates_update(&on_delete_new.spec, &on_delete_old.spec)
            .is_empty()
    );
}

/// Which claim templates an update resizes (their StorageClass is then checked), compared as
/// quantities, and what the webhook's StorageClass lookups make of them.
#[test]
fn statefulset_resized_claim_templates_and_their_storage_class() {
    let with_storage = |strategy: &str, requests: &str, limits: Option<&str>| {
        let mut resources = json!({"requests": {"storage": requests}});
        if let Some(limits) = limits {
            resources["limits"] = json!({"storage": limits});
        }
        sts_beta(json!({"spec": {
            "volumeClaimUpdateStrategy": {"type": strategy},
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"storageClassName": "fast", "accessModes": ["ReadWriteOnce"], "resources": resources}
            }]
        }}))
    };
    let resized = |old: &v1beta1::StatefulSet, new: &v1beta1::StatefulSet| {
        resized_claim_templates(&new.spec, &old.spec)
    };
    let old = with_storage("OnPodRollingUpdate", "1Gi", None);
    let fast = vec![ResizedClaimTemplate { index: 0, storage_class: Some("fast".into()) }];
    let cases: Vec<(&str, v1beta1::StatefulSet, Vec<ResizedClaimTemplate>)> = vec![
        ("grown", with_storage("OnPodRollingUpdate", "2Gi", None), fast.clone()),
        ("same size written differently", with_storage("OnPodRollingUpdate", "1024Mi", None), vec![]),
        ("limit added", with_storage("OnPodRollingUpdate", "1Gi", Some("3Gi")), fast.clone()),
        ("OnDelete", with_storage("OnDelete", "2Gi", None), vec![]),
    ];
    for (name, new, expected) in cases {
        assert_eq!(resized(&old, &new), expected, "{name}");
    }

    let found = |allow: Option<bool>| StorageClassLookup::Found {
        name: "fast".into(),
        allow_volume_expansion: allow,
    };
    let claim = fast[0].clone();
    let storage = "spec.volumeClaimTemplates[0].spec.resources.requests.storage";
    let class = "spec.volumeClaimTemplates[0].spec.storageClassName";
    let lookups: Vec<(StorageClassLookup, Vec<&str>)> = vec![
        (found(Some(true)), vec![]),
        (found(None), vec![]),
        (StorageClassLookup::NoDefault, vec![]),
        (found(Some(false)), vec![storage]),
        (StorageClassLookup::Failed, vec![class]),
    ];
    for (lookup, expected) in lookups {
        assert_eq!(
            paths(&validate_claim_template_expansion(&[(claim.clone(), lookup.clone())])),
            expected,
            "{lookup:?}"
        );
    }
}

#[test]
fn empty_statefulsets_get_upstream_defaults_and_explicit_values_stay() {
    let mut sts = v1beta1::StatefulSet::default();
    default_statefulset_v1beta1(&mut sts, true);
    let spec = &sts.spec;
    assert_eq!(spec.pod_management_policy, v1beta1::PodManagementPolicyType::OrderedReady);
    assert_eq!(spec.update_strategy.type_, v1beta1::StatefulSetUpdateStrategyType::RollingUpdate);
    let rolling = spec.update_strategy.rolling_update.as_ref().unwrap();
    assert_eq!(rolling.partition, Some(0));
    assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(1)));
    assert_eq!(rolling.pod_update_policy, v1beta1::PodUpdatePolicy::ReCreate);
    assert_eq!(rolling.min_ready_seconds, Some(0));
    assert_eq!((spec.replicas, spec.revision_history_limit), (Some(1), Some(10)));
    let retention = spec.persistent_volume_claim_retention_policy.as_ref().unwrap();
    assert_eq!(retention.when_deleted, v1beta1::PersistentVolumeClaimRetentionPolicyType::Retain);
    assert_eq!(retention.when_scaled, v1beta1::PersistentVolumeClaimRetentionPolicyType::Retain);
    assert!(spec.volume_claim_update_strategy.type_.is_unset(), "its feature gate is off by default");
    assert_eq!(spec.template.spec.as_ref().unwrap().restart_policy.as_deref(), Some("Always"));

    let mut gated = v1beta1::StatefulSetSpec::default();
    default_statefulset_volume_claim_update_strategy(&mut gated);
    assert_eq!(gated.volume_claim_update_strategy.type_, v1beta1::VolumeClaimUpdateStrategyType::OnDelete);

    let mut explicit = sts_beta(json!({"spec": {"replicas": 9, "revisionHistoryLimit": 2,
        "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Delete"},
        "updateStrategy": {"rollingUpdate": {"partition": 2, "minReadySeconds": 30}}}}));
    default_statefulset_v1beta1(&mut explicit, false);
    let spec = &explicit.spec;
    assert_eq!((spec.replicas, spec.revision_history_limit), (Some(9), Some(2)));
    assert_eq!(spec.pod_management_policy, v1beta1::PodManagementPolicyType::Parallel);
    let rolling = spec.update_strategy.rolling_update.as_ref().unwrap();
    assert_eq!((rolling.partition, rolling.min_ready_seconds), (Some(2), Some(30)));
    assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(2)));
    assert_eq!(rolling.pod_update_policy, v1beta1::PodUpdatePolicy::InPlaceIfPossible);
    let retention = spec.persistent_volume_claim_retention_policy.as_ref().unwrap();
    assert_eq!(retention.when_scaled, v1beta1::PersistentVolumeClaimRetentionPolicyType::Delete);
    assert_eq!(retention.when_deleted, v1beta1::PersistentVolumeClaimRetentionPolicyType::Retain);

    let mut on_delete: v1beta1::StatefulSet =
        decode(json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}));
    default_statefulset_v1beta1(&mut on_delete, false);
    assert!(on_delete.spec.update_strategy.rolling_update.is_none());
    assert!(on_delete.spec.template.spec.is_none(), "template untouched without inject_template_defaults");

    let mut alpha = v1alpha1::StatefulSet::default();
    default_statefulset_v1alpha1(&mut alpha, true);
    assert_eq!(alpha.spec.pod_management_policy, v1beta1::PodManagementPolicyType::OrderedReady);
    assert_eq!(
        alpha.spec.update_strategy.rolling_update.as_ref().unwrap().max_unavailable,
        Some(IntOrString::Int(1))
    );
    assert_eq!((alpha.spec.replicas, alpha.spec.revision_history_limit), (Some(1), Some(10)));
    let claim = &decode::<v1alpha1::StatefulSet>(sts_v1alpha1());
    let mut claim = claim.clone();
    default_statefulset_v1alpha1(&mut claim, true);
    let pvc = &claim.spec.volume_claim_templates[0];
    // Upstream's webhook applies SetDefaults_PersistentVolumeClaim only: no volumeMode.
    assert_eq!(pvc.spec.as_ref().unwrap().volume_mode, None);
    assert_eq!(pvc.status.as_ref().unwrap().phase.as_deref(), Some("Pending"));
}

// ---------------------------------------------------------------------------------------------
// Advanced DaemonSet
// ---------------------------------------------------------------------------------------------

fn ds_v1beta1() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}
            },
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"rollingUpdateType": "Standard", "maxUnavailable": "10%", "partition": 0}
            }
        }
    })
}

fn ds_v1alpha1() -> Value {
    let mut base = ds_v1beta1();
    base["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    base
}

#[test]
fn daemonset_base_objects_are_valid() {
    let mut beta: v1beta1::DaemonSet = decode(ds_v1beta1());
    default_daemonset_v1beta1(&mut beta);
    assert_eq!(paths(&validate_daemonset_v1beta1(&beta, None)), Vec::<String>::new());
    let mut alpha: v1alpha1::DaemonSet = decode(ds_v1alpha1());
    default_daemonset_v1alpha1(&mut alpha);
    assert_eq!(paths(&validate_daemonset_v1alpha1(&alpha, None)), Vec::<String>::new());
}

#[test]
fn each_daemonset_rule_names_its_field() {
    let rolling = |value: Value| json!({"spec": {"updateStrategy": {"rollingUpdate": value}}});
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("name is a DNS subdomain", json!({"metadata": {"name": "Agent"}}), vec!["metadata.name"]),
        ("selector required", json!({"spec": {"selector": null}}), vec!["spec.selector"]),
        ("selector non-empty", json!({"spec": {"selector": {"matchLabels": null}}}), vec!["spec.selector"]),
        (
            "selector matches the template",
            json!({"spec": {"selector": {"matchLabels": {"app": "other"}}}}),
            vec!["spec.template.metadata.labels"],
        ),
        (
            "template valid",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": " x"}]}}}}),
            vec!["spec.template.spec.containers[0].image"],
        ),
        (
            "restartPolicy Always",
            json!({"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}}),
            vec!["spec.template.spec.restartPolicy"],
        ),
        (
            "no activeDeadlineSeconds",
            json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 5}}}}),
            vec!["spec.template.spec.activeDeadlineSeconds"],
        ),
        (
            "minReadySeconds non-negative",
            json!({"spec": {"minReadySeconds": -1}}),
            vec!["spec.minReadySeconds"],
        ),
        (
            "revisionHistoryLimit non-negative",
            json!({"spec": {"revisionHistoryLimit": -1}}),
            vec!["spec.revisionHistoryLimit"],
        ),
        (
            "no inPlaceUpdate hook",
            json!({"spec": {"lifecycle": {"inPlaceUpdate": {"labelsHandler": {"a": "b"}}}}}),
            vec!["spec.lifecycle.inPlaceUpdate"],
        ),
        (
            "update type values",
            json!({"spec": {"updateStrategy": {"type": "Rolling"}}}),
            vec!["spec.updateStrategy.type"],
        ),
        (
            "maxSurge and maxUnavailable not both non-zero",
            rolling(json!({"maxUnavailable": 1, "maxSurge": 1})),
            vec!["spec.updateStrategy.rollingUpdate.maxSurge"],
        ),
        (
            "maxSurge and maxUnavailable not both zero",
            rolling(json!({"maxUnavailable": 0, "maxSurge": "0%"})),
            vec!["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "maxUnavailable at most 100%",
            rolling(json!({"maxUnavailable": "150%"})),
            vec!["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "maxUnavailable an integer or percentage (a malformed value counts as zero)",
            rolling(json!({"maxUnavailable": "x"})),
            vec![
                "spec.updateStrategy.rollingUpdate.maxUnavailable",
                "spec.updateStrategy.rollingUpdate.maxUnavailable",
            ],
        ),
        ("surging alone is fine", rolling(json!({"maxUnavailable": 0, "maxSurge": "20%"})), vec![]),
        (
            "InPlaceIfPossible takes no surge",
            rolling(json!({"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 0, "maxSurge": 1})),
            vec!["spec.updateStrategy.rollingUpdate.maxSurge"],
        ),
        (
            "rollingUpdateType values (no Surging in v1beta1)",
            rolling(json!({"rollingUpdateType": "Surging"})),
            vec!["spec.updateStrategy.rollingUpdate.rollingUpdateType"],
        ),
        (
            "partition non-negative",
            rolling(json!({"partition": -1})),
            vec!["spec.updateStrategy.rollingUpdate.partition"],
        ),
        (
            "partition at most 100%",
            rolling(json!({"partition": "101%"})),
            vec!["spec.updateStrategy.rollingUpdate.partition"],
        ),
        (
            "node selector valid",
            rolling(json!({"selector": {"matchExpressions": [{"key": "zone", "operator": "Near"}]}})),
            vec!["spec.updateStrategy.rollingUpdate.selector.matchExpressions[0].operator"],
        ),
    ];
    check_table(ds_v1beta1, default_daemonset_v1beta1, |d| validate_daemonset_v1beta1(d, None), cases);

    let raw: Vec<(&str, Value, Vec<&str>)> = vec![(
        "RollingUpdate needs rollingUpdate (without defaults)",
        json!({"spec": {"updateStrategy": {"rollingUpdate": null}}}),
        vec!["spec.updateStrategy.rollingUpdate"],
    )];
    check_table(ds_v1beta1, |_: &mut v1beta1::DaemonSet| {}, |d| validate_daemonset_v1beta1(d, None), raw);
}

#[test]
fn v1alpha1_daemonsets_accept_the_deprecated_surging_type() {
    let raw: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "Surging takes no unavailable pods",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"rollingUpdateType": "Surging"}}}}),
            vec!["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "Surging with a surge is fine",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"rollingUpdateType": "Surging",
                "maxUnavailable": 0, "maxSurge": 1}}}}),
            vec![],
        ),
        (
            "rollingUpdateType values",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"rollingUpdateType": "Fast"}}}}),
            vec!["spec.updateStrategy.rollingUpdate.rollingUpdateType"],
        ),
    ];
    check_table(ds_v1alpha1, |_: &mut v1alpha1::DaemonSet| {}, |d| validate_daemonset_v1alpha1(d, None), raw);
}

#[test]
fn daemonset_updates_keep_the_selector() {
    let old: v1beta1::DaemonSet = decode(ds_v1beta1());
    let mut allowed = old.clone();
    allowed.spec.min_ready_seconds = 10;
    allowed.spec.template.spec.as_mut().unwrap().containers[0].image = Some("agent:2".into());
    assert!(validate_daemonset_v1beta1(&allowed, Some(&old)).is_empty());
    let mut changed = old.clone();
    changed.spec.selector.as_mut().unwrap().match_expressions =
        Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
            key: "app".into(),
            operator: "Exists".into(),
            values: None,
        }]);
    assert_eq!(paths(&validate_daemonset_v1beta1(&changed, Some(&old))), ["spec.selector"]);
    let old_alpha: v1alpha1::DaemonSet = decode(ds_v1alpha1());
    let mut alpha = old_alpha.clone();
    alpha.spec.selector = None;
    assert_eq!(
        paths(&validate_daemonset_v1alpha1(&alpha, Some(&old_alpha))),
        ["spec.selector", "spec.selector"]
    );
}

#[test]
fn daemonset_defaults_follow_upstream() {
    let mut ds = v1beta1::DaemonSet::default();
    default_daemonset_v1beta1(&mut ds);
    assert_eq!(ds.spec.burst_replicas, Some(IntOrString::Int(250)));
    assert_eq!(ds.spec.update_strategy.type_, v1beta1::DaemonSetUpdateStrategyType::RollingUpdate);
    let rolling = ds.spec.update_strategy.rolling_update.as_ref().unwrap();
    assert_eq!(rolling.type_, v1beta1::DaemonSetRollingUpdateType::Standard);
    assert_eq!(
        (rolling.max_unavailable.clone(), rolling.max_surge.clone()),
        (Some(IntOrString::Int(1)), Some(IntOrString::Int(0)))
    );
    assert_eq!(ds.spec.revision_history_limit, Some(10));
    assert!(ds.spec.template.spec.is_none(), "upstream does not default DaemonSet templates");

    let mut surge_only: v1beta1::DaemonSet = decode(
        json!({"spec": {"burstReplicas": "10%", "updateStrategy": {"rollingUpdate": {"maxSurge": 2}}}}),
    );
    default_daemonset_v1beta1(&mut surge_only);
    let rolling = surge_only.spec.update_strategy.rolling_update.as_ref().unwrap();
    assert_eq!(
        (rolling.max_unavailable.clone(), rolling.max_surge.clone()),
        (None, Some(IntOrString::Int(2)))
    );
    assert_eq!(surge_only.spec.burst_replicas, Some(IntOrString::String("10%".into())));

    let mut on_delete: v1beta1::DaemonSet = decode(json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}));
    default_daemonset_v1beta1(&mut on_delete);
    assert!(on_delete.spec.update_strategy.rolling_update.is_none());

    let mut surging: v1alpha1::DaemonSet =
        decode(json!({"spec": {"updateStrategy": {"rollingUpdate": {"rollingUpdateType": "Surging"}}}}));
    default_daemonset_v1alpha1(&mut surging);
    let rolling = surging.spec.update_strategy.rolling_update.as_ref().unwrap();
    assert_eq!(rolling.type_, v1alpha1::DaemonSetRollingUpdateType::Standard);
    assert_eq!(
        (rolling.max_unavailable.clone(), rolling.max_surge.clone()),
        (Some(IntOrString::Int(0)), Some(IntOrString::Int(1)))
    );

    let mut alpha = v1alpha1::DaemonSet::default();
    default_daemonset_v1alpha1(&mut alpha);
    let rolling = alpha.spec.update_strategy.rolling_update.as_ref().unwrap();
    assert_eq!(rolling.type_, v1alpha1::DaemonSetRollingUpdateType::Standard);
    assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(1)));
    assert_eq!(
        (alpha.spec.burst_replicas, alpha.spec.revision_history_limit),
        (Some(IntOrString::Int(250)), Some(10))
    );
}

// ---------------------------------------------------------------------------------------------
// SidecarSet
// ---------------------------------------------------------------------------------------------

fn sidecarset_v1beta1() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "SidecarSet",
        "metadata": {"name": "log-agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "containers": [{
                "name": "logger",
                "image": "fluent-bit:2",
                "volumeMounts": [{"name": "logs", "mountPath": "/var/log/app"}],
                "transferEnv": [{"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.labels['main']"}},
                    "envName": "LOG_LEVEL"}]
            }],
            "volumes": [{"name": "logs", "emptyDir": {}}],
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1},
            "patchPodMetadata": [{"annotations": {"example.io/logging": "on"}, "patchPolicy": "Overwrite"}]
        }
    })
}

fn sidecarset_v1alpha1() -> Value {
    let mut base = sidecarset_v1beta1();
    base["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    base
}

fn sidecarset(patch: Value) -> v1beta1::SidecarSet {
    let mut set: v1beta1::SidecarSet = decode(patched(sidecarset_v1beta1(), patch));
    default_sidecarset_v1beta1(&mut set);
    set
}

#[test]
fn sidecarset_base_objects_are_valid() {
    assert_eq!(paths(&validate_sidecarset_v1beta1(&sidecarset(json!({})), None)), Vec::<String>::new());
    let mut alpha: v1alpha1::SidecarSet = decode(sidecarset_v1alpha1());
    default_sidecarset_v1alpha1(&mut alpha);
    assert_eq!(paths(&validate_sidecarset_v1alpha1(&alpha, None)), Vec::<String>::new());
}

#[test]
fn each_sidecarset_rule_names_its_field() {
    let policy = |value: Value| {
        json!({"spec": {"containers": [{"name": "logger", "image": "fluent-bit:2",
        "resourcesPolicy": patched(json!({"targetContainersNameRegex": ".*"}), value)}], "volumes": null}})
    };
    let long_name = "a".repeat(64);
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("names allow capitals and digits", json!({"metadata": {"name": "LogAgent2"}}), vec![]),
        ("names: letters, digits and '-'", json!({"metadata": {"name": "log.agent"}}), vec!["metadata.name"]),
        ("names at most 63 characters", json!({"metadata": {"name": long_name}}), vec!["metadata.name"]),
        (
            "cluster-scoped: no namespace",
            json!({"metadata": {"namespace": "default"}}),
            vec!["metadata.namespace"],
        ),
        (
            "canary: base is not itself, and canaries use NotUpdate",
            json!({"metadata": {"annotations": {"apps.kruise.io/sidecarset-canary": "true",
                "apps.kruise.io/sidecarset-base": "log-agent"}}}),
            vec!["metadata.annotations[apps.kruise.io/sidecarset-base]", "spec.updateStrategy.type"],
        ),
        (
            "canary of another SidecarSet with NotUpdate",
            json!({"metadata": {"annotations": {"apps.kruise.io/sidecarset-canary": "true",
                "apps.kruise.io/sidecarset-base": "log-agent-base"}},
                "spec": {"updateStrategy": {"type": "NotUpdate"}}}),
            vec![],
        ),
        (
            "native sidecar init containers need NotUpdate",
            json!({"spec": {"initContainers": [{"name": "proxy", "image": "envoy:1", "restartPolicy": "Always"}]}}),
            vec!["spec.updateStrategy.type"],
        ),
        ("selector required", json!({"spec": {"selector": null}}), vec!["spec.selector"]),
        ("selector non-empty", json!({"spec": {"selector": {"matchLabels": null}}}), vec!["spec.selector"]),
        (
            "selector valid",
            json!({"spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Is"}]}}}),
            vec!["spec.selector.matchExpressions[0].operator"],
        ),
        (
            "namespaceSelector non-empty",
            json!({"spec": {"namespaceSelector": {}}}),
            vec!["spec.namespaceSelector"],
        ),
        (
            "injection revision names a revision",
            json!({"spec": {"injectionStrategy": {"revision": {}}}}),
            vec!["spec.injectionStrategy.revision"],
        ),
        (
            "injection revision policy values",
            json!({"spec": {"injectionStrategy": {"revision": {"revisionName": "r1", "policy": "Sometimes"}}}}),
            vec!["spec.injectionStrategy.revision.policy"],
        ),
        (
            "update type values",
            json!({"spec": {"updateStrategy": {"type": "Sometimes"}}}),
            vec!["spec.updateStrategy.type"],
        ),
        (
            "partition and selector not together",
            json!({"spec": {"updateStrategy": {"partition": 2, "selector": {"matchLabels": {"canary": "true"}}}}}),
            vec!["spec.updateStrategy.selector"],
        ),
        (
            "update selector non-empty",
            json!({"spec": {"updateStrategy": {"selector": {}}}}),
            vec!["spec.updateStrategy.selector"],
        ),
        (
            "partition format",
            json!({"spec": {"updateStrategy": {"partition": "half"}}}),
            vec!["spec.updateStrategy.partition"],
        ),
        (
            "maxUnavailable non-negative",
            json!({"spec": {"updateStrategy": {"maxUnavailable": -1}}}),
            vec!["spec.updateStrategy.maxUnavailable"],
        ),
        (
            "priority order keys",
            json!({"spec": {"updateStrategy": {"priorityStrategy": {"orderPriority": [{"orderedKey": ""}]}}}}),
            vec!["spec.updateStrategy.priorityStrategy.orderPriority[0].orderedKey"],
        ),
        (
            "scatter keys",
            json!({"spec": {"updateStrategy": {"scatterStrategy": [{"key": "", "value": "a"}]}}}),
            vec!["spec.updateStrategy.scatterStrategy[0].key"],
        ),
        (
            "NotUpdate skips the rolling rules",
            json!({"spec": {"updateStrategy": {"type": "NotUpdate", "partition": "half"}}}),
            vec![],
        ),
        ("a container or init container", json!({"spec": {"containers": [], "volumes": null}}), vec!["spec"]),
        (
            "init containers alone are enough",
            json!({"spec": {"containers": [], "volumes": null,
                "initContainers": [{"name": "placeholder-0", "image": "busybox"}]}}),
            vec![],
        ),
        (
            "podInjectPolicy values",
            json!({"spec": {"containers": [{"name": "logger", "image": "x", "podInjectPolicy": "Middle"}], "volumes": null}}),
            vec!["spec.containers[0].podInjectPolicy"],
        ),
        (
            "shareVolumePolicy values",
            json!({"spec": {"containers": [{"name": "logger", "image": "x", "shareVolumePolicy": {"type": "sometimes"}}],
                "volumes": null}}),
            vec!["spec.containers[0].shareVolumePolicy.type"],
        ),
        (
            "transferEnv fieldRef: only subscripted labels or annotations",
            json!({"spec": {"containers": [{"name": "logger", "image": "x", "volumeMounts": null, "transferEnv": [
                {"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "spec.nodeName['x']"}}},
                {"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.labels['bad key']"}}},
                {"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.annotations['Example.io/Main']"}}},
                {"sourceContainerNameFrom": {"fieldRef": {"apiVersion": "v2", "fieldPath": "metadata.labels['a']"}}}
            ]}]}}),
            vec![
                "spec.containers[0].transferEnv[0].sourceContainerNameFrom.fieldRef.fieldPath",
                "spec.containers[0].transferEnv[1].sourceContainerNameFrom.fieldRef.fieldPath",
                "spec.containers[0].transferEnv[2].sourceContainerNameFrom.fieldRef.fieldPath",
                "spec.containers[0].transferEnv[4].sourceContainerNameFrom.fieldRef.apiVersion",
            ],
        ),
        (
            "containers valid as in a pod",
            json!({"spec": {"containers": [{"name": "logger", "image": ""}], "volumes": null}}),
            vec!["spec.containers[0].image"],
        ),
        (
            "mounts name a SidecarSet volume",
            json!({"spec": {"volumes": [{"name": "other", "emptyDir": {}}]}}),
            vec!["spec.containers[0].volumeMounts[0].name"],
        ),
        (
            "volumes valid",
            json!({"spec": {"volumes": [{"name": "logs", "emptyDir": {}}, {"name": "logs", "emptyDir": {}}]}}),
            vec!["spec.volumes[1].name"],
        ),
        (
            "container names unique",
            json!({"spec": {"containers": [{"name": "logger", "image": "x"}, {"name": "logger", "image": "y"}],
                "volumes": null}}),
            vec!["spec.containers[1].name"],
        ),
        (
            "resourcesPolicy is fine on its own",
            policy(json!({"targetContainersMode": "sum", "targetContainersNameRegex": ".*",
                "resourcesExpr": {"limits": {"cpu": "max(cpu*50%, 50m)"}}})),
            vec![],
        ),
        (
            "resourcesPolicy not with resources",
            json!({"spec": {"containers": [{"name": "logger", "image": "x", "resources": {"limits": {"cpu": "1"}},
                "resourcesPolicy": {"targetContainersMode": "sum", "resourcesExpr": {"limits": {"cpu": "cpu"}}}}],
                "volumes": null}}),
            vec!["spec.containers[0].resourcesPolicy"],
        ),
        (
            "resourcesPolicy regex compiles",
            policy(json!({"targetContainersMode": "max", "targetContainersNameRegex": "(",
                "resourcesExpr": {"requests": {"memory": "memory"}}})),
            vec!["spec.containers[0].resourcesPolicy.targetContainersNameRegex"],
        ),
        (
            "resourcesPolicy mode values",
            policy(json!({"targetContainersMode": "avg", "targetContainersNameRegex": "^main$",
                "resourcesExpr": {"requests": {"memory": "memory"}}})),
            vec!["spec.containers[0].resourcesPolicy.targetContainersMode"],
        ),
        (
            "resourcesPolicy needs limits or requests",
            policy(json!({"targetContainersMode": "sum", "resourcesExpr": {}})),
            vec!["spec.containers[0].resourcesPolicy.resourcesExpr"],
        ),
        (
            "resourcesPolicy expressions parse and use their own variable",
            policy(json!({"targetContainersMode": "sum", "resourcesExpr": {
                "limits": {"cpu": "memory * 2", "memory": "memory * 2"},
                "requests": {"cpu": "cpu / 2", "memory": "max(memory, 1"}}})),
            vec![
                "spec.containers[0].resourcesPolicy.resourcesExpr.limits.cpu",
                "spec.containers[0].resourcesPolicy.resourcesExpr.requests.memory",
            ],
        ),
        (
            "init container resourcesPolicy needs restartPolicy Always",
            json!({"spec": {"initContainers": [{"name": "init", "image": "x",
                "resourcesPolicy": {"targetContainersMode": "sum", "targetContainersNameRegex": ".*",
                    "resourcesExpr": {"requests": {"cpu": "cpu"}}}}]}}),
            vec!["spec.initContainers[0].resourcesPolicy"],
        ),
        (
            "patch annotations required",
            json!({"spec": {"patchPodMetadata": [{"annotations": {}, "patchPolicy": "Retain"}]}}),
            vec!["spec.patchPodMetadata[0].annotations"],
        ),
        (
            "patch annotation keys valid",
            json!({"spec": {"patchPodMetadata": [{"annotations": {"bad key!": "x"}, "patchPolicy": "Retain"}]}}),
            vec!["spec.patchPodMetadata[0].annotations"],
        ),
        (
            "patch policy values",
            json!({"spec": {"patchPodMetadata": [{"annotations": {"a": "b"}, "patchPolicy": "Replace"}]}}),
            vec!["spec.patchPodMetadata[0].patchPolicy"],
        ),
        (
            "patch keys unique across patches",
            json!({"spec": {"patchPodMetadata": [
                {"annotations": {"example.io/logging": "on"}, "patchPolicy": "Overwrite"},
                {"annotations": {"example.io/logging": "{}"}, "patchPolicy": "MergePatchJson"}]}}),
            vec!["spec.patchPodMetadata[1].annotations[example.io/logging]"],
        ),
    ];
    check_table(
        sidecarset_v1beta1,
        default_sidecarset_v1beta1,
        |s| validate_sidecarset_v1beta1(s, None),
        cases,
    );

    let raw: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "patch policy required (without defaults)",
            json!({"spec": {"patchPodMetadata": [{"annotations": {"a": "b"}}],
                "containers": [{"name": "logger", "image": "x", "podInjectPolicy": "BeforeAppContainer",
                    "shareVolumePolicy": {"type": "disabled"}}], "volumes": null}}),
            vec!["spec.patchPodMetadata[0].patchPolicy"],
        ),
        (
            "podInjectPolicy, shareVolumePolicy and fieldRef apiVersion required (without defaults)",
            json!({}),
            vec![
                "spec.containers[0].podInjectPolicy",
                "spec.containers[0].shareVolumePolicy.type",
                "spec.containers[0].transferEnv[0].sourceContainerNameFrom.fieldRef.apiVersion",
            ],
        ),
    ];
    check_table(
        sidecarset_v1beta1,
        |_: &mut v1beta1::SidecarSet| {},
        |s| validate_sidecarset_v1beta1(s, None),
        raw,
    );
}

#[test]
fn v1alpha1_sidecarsets_check_their_namespace() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("namespace is a namespace name", json!({"spec": {"namespace": "Bad_NS"}}), vec!["spec.namespace"]),
        ("namespace is fine", json!({"spec": {"namespace": "team-a"}}), vec![]),
        ("shared rules use the same paths", json!({"spec": {"selector": null}}), vec!["spec.selector"]),
    ];
    check_table(
        sidecarset_v1alpha1,
        default_sidecarset_v1alpha1,
        |s| validate_sidecarset_v1alpha1(s, None),
        cases,
    );
}

#[test]
fn sidecarset_updates_keep_containers_and_upgrade_types() {
    let old = sidecarset(json!({}));
    let mut image = old.clone();
    image.spec.containers[0].container.image = Some("fluent-bit:3".into());
    assert!(validate_sidecarset_v1beta1(&image, Some(&old)).is_empty());

    let mut added = old.clone();
    let mut extra = added.spec.containers[0].clone();
    extra.container.name = "metrics".into();
    extra.container.volume_mounts = None;
    added.spec.containers.push(extra);
    assert_eq!(paths(&validate_sidecarset_v1beta1(&added, Some(&old))), ["spec.containers[1].name"]);

    let mut hot = old.clone();
    hot.spec.containers[0].upgrade_strategy.upgrade_type = v1beta1::SidecarContainerUpgradeType::HotUpgrade;
    assert_eq!(
        paths(&validate_sidecarset_v1beta1(&hot, Some(&old))),
        ["spec.containers[0].upgradeStrategy.upgradeType"]
    );

    let canary_annotations = |base: &str| {
        json!({"metadata": {"annotations": {"apps.kruise.io/sidecarset-canary": "true",
            "apps.kruise.io/sidecarset-base": base}}, "spec": {"updateStrategy": {"type": "NotUpdate"}}})
    };
    let old_canary = sidecarset(canary_annotations("base-a"));
    let moved = sidecarset(canary_annotations("base-b"));
    assert_eq!(
        paths(&validate_sidecarset_v1beta1(&moved, Some(&old_canary))),
        ["metadata.annotations[apps.kruise.io/sidecarset-base]"]
    );

    let mut old_alpha: v1alpha1::SidecarSet = decode(sidecarset_v1alpha1());
    default_sidecarset_v1alpha1(&mut old_alpha);
    let mut alpha = old_alpha.clone();
    alpha.spec.containers[0].container.name = "renamed".into();
    assert_eq!(paths(&validate_sidecarset_v1alpha1(&alpha, Some(&old_alpha))), ["spec.containers[0].name"]);
}

fn other_sidecarset(name: &str, patch: Value) -> v1beta1::SidecarSet {
    sidecarset(patched(
        json!({"metadata": {"name": name}, "spec": {"containers": [{"name": "other", "image": "x", "volumeMounts": null}],
            "patchPodMetadata": null}}),
        patch,
    ))
}

#[test]
fn sidecarsets_selecting_the_same_pods_must_not_conflict() {
    let candidate = sidecarset(json!({}));
    let same_container =
        other_sidecarset("b", json!({"spec": {"containers": [{"name": "logger", "image": "y"}]}}));
    let cases: Vec<(&str, Vec<v1beta1::SidecarSet>, Vec<&str>)> = vec![
        ("no others", vec![], vec![]),
        ("own stored version is ignored", vec![candidate.clone()], vec![]),
        ("same container name", vec![same_container.clone()], vec!["spec.containers[0].name"]),
        (
            "disjoint pod selectors do not conflict",
            vec![other_sidecarset(
                "b",
                json!({"spec": {"selector": {"matchLabels": {"app": "api"}},
                "containers": [{"name": "logger", "image": "y"}]}}),
            )],
            vec![],
        ),
        (
            "a namespace selector on one side only still overlaps",
            vec![other_sidecarset(
                "b",
                json!({"spec": {"namespaceSelector": {"matchLabels": {"team": "b"}},
                "containers": [{"name": "logger", "image": "y"}]}}),
            )],
            vec!["spec.containers[0].name"],
        ),
        (
            "same init container name",
            vec![other_sidecarset(
                "b",
                json!({"spec": {"initContainers": [{"name": "init", "image": "y"}]}}),
            )],
            vec![],
        ),
        (
            "same-named volume must be identical",
            vec![
                other_sidecarset(
                    "b",
                    json!({"spec": {"volumes": [{"name": "logs", "hostPath": {"path": "/logs"}}]}}),
                ),
                other_sidecarset("c", json!({"spec": {"volumes": [{"name": "logs", "emptyDir": {}}]}})),
            ],
            vec!["spec.volumes[0]"],
        ),
        (
            "annotation patched by both with Overwrite",
            vec![other_sidecarset(
                "b",
                json!({"spec": {"patchPodMetadata": [
                {"annotations": {"example.io/logging": "off"}, "patchPolicy": "MergePatchJson"}]}}),
            )],
            vec!["spec.patchPodMetadata[0].annotations[example.io/logging]"],
        ),
        (
            "Retain patches never conflict",
            vec![other_sidecarset(
                "b",
                json!({"spec": {"patchPodMetadata": [
                {"annotations": {"example.io/logging": "off"}, "patchPolicy": "Retain"}]}}),
            )],
            vec![],
        ),
    ];
    for (rule, others, expected) in cases {
        assert_eq!(paths(&sidecarset_conflicts(&candidate, &others)), expected, "rule: {rule}");
    }

    let mut team_a = candidate.clone();
    team_a.spec.namespace_selector = Some(decode(json!({"matchLabels": {"team": "a"}})));
    let team_b = other_sidecarset(
        "b",
        json!({"spec": {"namespaceSelector": {"matchLabels": {"team": "b"}},
        "containers": [{"name": "logger", "image": "y"}]}}),
    );
    assert!(
        sidecarset_conflicts(&team_a, &[team_b]).is_empty(),
        "disjoint namespace selectors do not conflict"
    );

    let mut init = candidate.clone();
    init.spec.init_containers = decode(json!([{"name": "init", "image": "x"}]));
    let other_init =
        other_sidecarset("b", json!({"spec": {"initContainers": [{"name": "init", "image": "y"}]}}));
    assert_eq!(paths(&sidecarset_conflicts(&init, &[other_init])), ["spec.initContainers[0].name"]);

    let both_merge = sidecarset(json!({"spec": {"patchPodMetadata": [
        {"annotations": {"example.io/logging": "{}"}, "patchPolicy": "MergePatchJson"}]}}));
    let other_merge = other_sidecarset(
        "b",
        json!({"spec": {"patchPodMetadata": [
        {"annotations": {"example.io/logging": "{}"}, "patchPolicy": "MergePatchJson"}]}}),
    );
    assert!(sidecarset_conflicts(&both_merge, &[other_merge]).is_empty(), "two merge patches combine");
}

#[test]
fn canary_sidecarsets_need_an_existing_non_canary_base() {
    let canary = sidecarset(json!({"metadata": {"name": "log-agent-canary", "annotations": {
        "apps.kruise.io/sidecarset-canary": "true", "apps.kruise.io/sidecarset-base": "log-agent"}},
        "spec": {"updateStrategy": {"type": "NotUpdate"}}}));
    assert!(validate_sidecarset_v1beta1(&canary, None).is_empty());
    let base = sidecarset(json!({}));
    assert!(
        sidecarset_conflicts(&canary, std::slice::from_ref(&base)).is_empty(),
        "the base's own containers do not conflict"
    );
    let base_path = "metadata.annotations[apps.kruise.io/sidecarset-base]";
    assert_eq!(paths(&sidecarset_conflicts(&canary, &[])), [base_path]);
    let canary_base = sidecarset(json!({"metadata": {"annotations": {
        "apps.kruise.io/sidecarset-canary": "true", "apps.kruise.io/sidecarset-base": "root"}}}));
    assert_eq!(paths(&sidecarset_conflicts(&canary, &[canary_base])), [base_path]);
}

#[test]
fn pinned_injection_revisions_must_exist() {
    let revision = |name: &str, owner: &str, version: &str| -> ControllerRevision {
        decode(json!({"metadata": {"name": name, "namespace": "kruise-system", "labels": {
            "kruise.io/sidecarset-name": owner, "apps.kruise.io/sidecarset-custom-version": version}}, "revision": 1}))
    };
    let revisions = [revision("log-agent-abc", "log-agent", "v1"), revision("other-def", "other", "v2")];
    let pinned = |value: Value| sidecarset(json!({"spec": {"injectionStrategy": {"revision": value}}}));
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("by name", json!({"revisionName": "log-agent-abc"}), vec![]),
        (
            "unknown name",
            json!({"revisionName": "log-agent-xyz"}),
            vec!["spec.injectionStrategy.revision.revisionName"],
        ),
        ("by custom version", json!({"customVersion": "v1"}), vec![]),
        (
            "custom version of another SidecarSet",
            json!({"customVersion": "v2"}),
            vec!["spec.injectionStrategy.revision.customVersion"],
        ),
    ];
    for (rule, value, expected) in cases {
        assert_eq!(
            paths(&validate_sidecarset_injection_revision(&pinned(value), &revisions)),
            expected,
            "rule: {rule}"
        );
    }
    assert!(validate_sidecarset_injection_revision(&sidecarset(json!({})), &[]).is_empty(), "nothing pinned");
}

#[test]
fn selector_overlap_follows_upstream() {
    let selector = |value: Value| -> LabelSelector { decode(value) };
    let cases = [
        (json!({"matchLabels": {"a": "b"}}), json!({"matchLabels": {"a": "c"}}), false),
        (json!({"matchLabels": {"a": "b"}}), json!({"matchLabels": {"c": "d"}}), true),
        (json!({"matchLabels": {"a": "b", "c": "d"}}), json!({"matchLabels": {"a": "b", "c": "d"}}), true),
        (
            json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["b", "c"]}]}),
            json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["b", "c"]}]}),
            false,
        ),
        (
            json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["b", "c"]}]}),
            json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["b"]}]}),
            true,
        ),
        (
            json!({"matchLabels": {"a": "b"}}),
            json!({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}),
            false,
        ),
        (
            json!({"matchExpressions": [{"key": "a", "operator": "Exists"}]}),
            json!({"matchLabels": {"a": "x"}}),
            true,
        ),
        (
            json!({"matchLabels": {"a": "b"}}),
            json!({"matchExpressions": [{"key": "z", "operator": "Exists"}]}),
            false,
        ),
    ];
    for (first, second, overlap) in cases {
        assert_eq!(
            sidecarset_selectors_overlap(&selector(first.clone()), &selector(second.clone())),
            overlap,
            "{first} vs {second}"
        );
    }
}

#[test]
fn patched_annotations_must_be_whitelisted() {
    let set = sidecarset(json!({"metadata": {"labels": {"team": "logging"}}}));
    let whitelist = |value: Value| -> SidecarSetPatchMetadataWhitelist { decode(value) };
    let allow_example = whitelist(json!({"rules": [{"allowedAnnotationKeyExprs": ["^example\\.io/.*"]}]}));
    assert!(validate_sidecarset_patch_metadata_whitelist(&set, Some(&allow_example), false).is_empty());
    assert_eq!(
        paths(&validate_sidecarset_patch_metadata_whitelist(&set, None, false)),
        ["spec.patchPodMetadata"]
    );
    assert!(validate_sidecarset_patch_metadata_whitelist(&set, None, true).is_empty());

    let other_key = whitelist(json!({"rules": [{"allowedAnnotationKeyExprs": ["^other\\.io/"]}]}));
    assert_eq!(
        paths(&validate_sidecarset_patch_metadata_whitelist(&set, Some(&other_key), true)),
        ["spec.patchPodMetadata[0].annotations[example.io/logging]"]
    );
    let other_team = whitelist(json!({"rules": [{"selector": {"matchLabels": {"team": "web"}},
        "allowedAnnotationKeyExprs": [".*"]}]}));
    assert_eq!(
        paths(&validate_sidecarset_patch_metadata_whitelist(&set, Some(&other_team), false)),
        ["spec.patchPodMetadata"]
    );
    assert!(validate_sidecarset_patch_metadata_whitelist(&set, Some(&other_team), true).is_empty());
    let bad_regex = whitelist(json!({"rules": [{"allowedAnnotationKeyExprs": ["("]}]}));
    assert_eq!(
        paths(&validate_sidecarset_patch_metadata_whitelist(&set, Some(&bad_regex), true)),
        ["spec.patchPodMetadata"]
    );
    let no_patches = sidecarset(json!({"spec": {"patchPodMetadata": null}}));
    assert!(validate_sidecarset_patch_metadata_whitelist(&no_patches, None, false).is_empty());
}

#[test]
fn resource_expressions_parse_check_and_evaluate() {
    let q = |text: &str| Quantity::parse(text).unwrap();
    let evaluate = |text: &str, variable: &str, value: &str| {
        parse_sidecar_resource_expr(text).and_then(|expr| expr.evaluate(variable, q(value)))
    };
    let quantity_cases = [
        ("max(cpu*50%, 50m)", "cpu", "200m", "100m"),
        ("max(cpu*50%, 50m)", "cpu", "60m", "50m"),
        ("min(cpu, 1)", "cpu", "4", "1"),
        ("cpu + 100m", "cpu", "200m", "300m"),
        ("CPU - 50m", "cpu", "1", "950m"),
        ("memory * 2", "memory", "512Mi", "1Gi"),
        ("memory / 4 + 64Mi", "memory", "1Gi", "320Mi"),
        ("(cpu + 1) * 2", "cpu", "500m", "3"),
    ];
    for (text, variable, value, expected) in quantity_cases {
        assert_eq!(
            evaluate(text, variable, value),
            Ok(SidecarResourceValue::Quantity(q(expected))),
            "{text}"
        );
    }
    let number_cases = [
        ("2 + 3 * 4", 14.0),
        ("-(1 - 3)", 2.0),
        ("50% * 200", 100.0),
        ("2e3 / 4", 500.0),
        ("max(10, 20)", 20.0),
    ];
    for (text, expected) in number_cases {
        assert_eq!(evaluate(text, "cpu", "1"), Ok(SidecarResourceValue::Number(expected)), "{text}");
    }
    assert_eq!(SidecarResourceValue::Number(0.25).into_quantity(false), q("250m"));
    assert_eq!(SidecarResourceValue::Number(1024.0).into_quantity(true), q("1Ki"));
    assert!(matches!(evaluate("cpu - 1", "cpu", "500m"), Err(SidecarResourceExprError::Negative(_))));
    assert_eq!(evaluate("cpu / (cpu - cpu)", "cpu", "1"), Err(SidecarResourceExprError::DivisionByQuantity));

    let check_cases: Vec<(&str, &str, Result<(), SidecarResourceExprError>)> = vec![
        ("cpu", "cpu", Ok(())),
        ("max(cpu * 50%, 50m) + 10m", "cpu", Ok(())),
        ("cpu - 2", "cpu", Ok(())),
        ("memory", "cpu", Err(SidecarResourceExprError::UndefinedVariable("memory".into()))),
        ("cpu * 2m", "cpu", Err(SidecarResourceExprError::QuantityTimesQuantity)),
        ("1 / cpu", "cpu", Err(SidecarResourceExprError::DivisionByQuantity)),
        ("cpu / (2 - 2)", "cpu", Err(SidecarResourceExprError::DivisionByZero)),
    ];
    for (text, variable, expected) in check_cases {
        assert_eq!(check_sidecar_resource_expr(text, variable), expected, "{text}");
    }
    for text in [
        "",
        "1 +",
        "max(cpu, 1",
        "cpu)",
        "5x",
        "1..2",
        "cpu $ 2",
        "max(1)",
        "avg(1, 2)",
        "max(1, 2, 3)",
        ",1",
    ] {
        assert!(check_sidecar_resource_expr(text, "cpu").is_err(), "{text:?} must be rejected");
    }
    let deep = format!("{}cpu{}", "(".repeat(500), ")".repeat(500));
    assert!(matches!(
        check_sidecar_resource_expr(&deep, "cpu"),
        Err(SidecarResourceExprError::Syntax { .. })
    ));
    let deep_minus = format!("{}cpu", "-".repeat(10_000));
    assert!(check_sidecar_resource_expr(&deep_minus, "cpu").is_err());
}

#[test]
fn sidecarset_hashes_follow_the_containers() {
    let mut set = sidecarset(json!({}));
    set_sidecarset_hash_annotations_v1beta1(&mut set);
    let annotations = set.metadata.annotations.clone().unwrap();
    let hash = annotations[SIDECARSET_HASH_ANNOTATION].clone();
    let without_image = annotations[SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION].clone();
    assert_eq!(hash.len(), 64);
    assert!(hash.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)), "{hash}");
    assert_ne!(hash, without_image);

    let spec = &set.spec;
    assert_eq!(sidecarset_hash(&spec.containers, &spec.init_containers), hash, "stable");
    let mut image = spec.containers.clone();
    image[0].container.image = Some("fluent-bit:3".into());
    assert_ne!(sidecarset_hash(&image, &[]), hash);
    assert_eq!(sidecarset_hash_without_image(&image, &[]), without_image);
    let mut env = spec.containers.clone();
    env[0].container.env =
        Some(vec![EnvVar { name: "A".into(), value: Some("1".into()), ..Default::default() }]);
    assert_ne!(sidecarset_hash_without_image(&env, &[]), without_image);

    let plain_init: Vec<v1beta1::SidecarContainer> = decode(json!([{"name": "init", "image": "busybox"}]));
    assert_eq!(sidecarset_hash(&spec.containers, &plain_init), hash, "plain init containers are not hashed");
    let native_init: Vec<v1beta1::SidecarContainer> =
        decode(json!([{"name": "init", "image": "busybox", "restartPolicy": "Always"}]));
    assert_ne!(sidecarset_hash(&spec.containers, &native_init), hash, "native sidecars are hashed");
}

#[test]
fn sidecarset_defaults_follow_upstream() {
    let mut set: v1beta1::SidecarSet = decode(json!({"spec": {
        "containers": [{"name": "logger", "image": "fluent-bit:2",
            "ports": [{"containerPort": 2020}],
            "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
            "livenessProbe": {"httpGet": {"port": 2020}},
            "startupProbe": {"exec": {"command": ["true"]}},
            "transferEnv": [{"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.labels['main']"}}}]}],
        "initContainers": [{"name": "init", "image": "busybox"}],
        "volumes": [{"name": "conf", "configMap": {"name": "conf"}}, {"name": "scratch"}],
        "patchPodMetadata": [{"annotations": {"a": "b"}}],
        "injectionStrategy": {"revision": {"customVersion": "v1"}}
    }}));
    default_sidecarset_v1beta1(&mut set);
    let spec = &set.spec;
    let strategy = &spec.update_strategy;
    assert_eq!(strategy.type_, v1beta1::SidecarSetUpdateStrategyType::RollingUpdate);
    assert_eq!(
        (strategy.max_unavailable.clone(), strategy.partition.clone()),
        (Some(IntOrString::Int(1)), Some(IntOrString::Int(0)))
    );
    assert_eq!(spec.revision_history_limit, Some(10));
    assert_eq!(spec.patch_pod_metadata[0].patch_policy, v1beta1::SidecarSetPatchPolicyType::Retain);
    assert_eq!(
        spec.injection_strategy.revision.as_ref().unwrap().policy,
        v1beta1::SidecarSetInjectRevisionPolicy::Always
    );

    let logger = &spec.containers[0];
    assert_eq!(logger.pod_inject_policy, v1beta1::PodInjectPolicyType::BeforeAppContainer);
    assert_eq!(logger.upgrade_strategy.upgrade_type, v1beta1::SidecarContainerUpgradeType::ColdUpgrade);
    assert_eq!(logger.share_volume_policy.type_, v1beta1::ShareVolumePolicyType::Disabled);
    let field =
        logger.transfer_env[0].source_container_name_from.as_ref().unwrap().field_ref.as_ref().unwrap();
    assert_eq!(field.api_version.as_deref(), Some("v1"));
    let c = &logger.container;
    assert_eq!(c.image_pull_policy.as_deref(), Some("IfNotPresent"), "sidecars pull by image tag");
    assert_eq!(c.termination_message_path.as_deref(), Some("/dev/termination-log"));
    assert_eq!(c.ports.as_ref().unwrap()[0].protocol.as_deref(), Some("TCP"));
    let env_field = c.env.as_ref().unwrap()[0].value_from.as_ref().unwrap().field_ref.as_ref().unwrap();
    assert_eq!(env_field.api_version.as_deref(), Some("v1"));
    let liveness = c.liveness_probe.as_ref().unwrap();
    assert_eq!(
        (liveness.period_seconds, liveness.http_get.as_ref().unwrap().path.as_deref()),
        (Some(10), Some("/"))
    );
    assert_eq!(
        c.startup_probe.as_ref().unwrap().period_seconds,
        None,
        "upstream leaves startup probes alone"
    );

    let init = &spec.init_containers[0];
    assert_eq!(init.pod_inject_policy, v1beta1::PodInjectPolicyType::AfterAppContainer);
    assert_eq!(init.container.image_pull_policy.as_deref(), Some("Always"), "untagged image is :latest");
    assert_eq!(spec.volumes[0].config_map.as_ref().unwrap().default_mode, Some(0o644));
    assert!(spec.volumes[1].empty_dir.is_some());

    let mut explicit =
        sidecarset(json!({"spec": {"updateStrategy": {"type": "NotUpdate", "maxUnavailable": "50%"},
        "containers": [{"name": "logger", "image": "x", "podInjectPolicy": "AfterAppContainer",
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
            "imagePullPolicy": "Never"}], "volumes": null}}));
    default_sidecarset_v1beta1(&mut explicit);
    assert_eq!(explicit.spec.update_strategy.type_, v1beta1::SidecarSetUpdateStrategyType::NotUpdate);
    assert_eq!(explicit.spec.update_strategy.max_unavailable, Some(IntOrString::String("50%".into())));
    let logger = &explicit.spec.containers[0];
    assert_eq!(logger.pod_inject_policy, v1beta1::PodInjectPolicyType::AfterAppContainer);
    assert_eq!(logger.upgrade_strategy.upgrade_type, v1beta1::SidecarContainerUpgradeType::HotUpgrade);
    assert_eq!(logger.container.image_pull_policy.as_deref(), Some("Never"));

    let mut alpha = v1alpha1::SidecarSet::default();
    default_sidecarset_v1alpha1(&mut alpha);
    assert_eq!(alpha.spec.update_strategy.type_, v1beta1::SidecarSetUpdateStrategyType::RollingUpdate);
    assert_eq!(alpha.spec.revision_history_limit, Some(10));
    assert!(alpha.spec.injection_strategy.revision.is_none());
}

// ---------------------------------------------------------------------------------------------
// UnitedDeployment
// ---------------------------------------------------------------------------------------------

fn ud_v1beta1() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 6,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"cloneSetTemplate": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
                    }
                }
            }},
            "topology": {"subsets": [
                {"name": "zone-a", "replicas": 2, "nodeSelectorTerm": {"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}},
                {"name": "zone-b", "nodeSelectorTerm": {"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]},
                    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}]}
            ]},
            "updateStrategy": {"type": "Manual", "manualUpdate": {"partitions": {"zone-a": 1}}}
        }
    })
}

fn ud_v1alpha1() -> Value {
    let mut base = ud_v1beta1();
    base["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    base
}

fn pod_template(app: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}})
}

fn with_template(kind: &str, template: Value) -> Value {
    json!({"spec": {"template": {"cloneSetTemplate": null, kind: template}}})
}

fn subsets(list: Value) -> Value {
    json!({"spec": {"topology": {"subsets": list}}})
}

#[test]
fn uniteddeployment_base_objects_are_valid() {
    let mut beta: v1beta1::UnitedDeployment = decode(ud_v1beta1());
    default_uniteddeployment_v1beta1(&mut beta, true);
    assert_eq!(paths(&validate_uniteddeployment_v1beta1(&beta, None)), Vec::<String>::new());
    let mut alpha: v1alpha1::UnitedDeployment = decode(ud_v1alpha1());
    default_uniteddeployment_v1alpha1(&mut alpha, true);
    assert_eq!(paths(&validate_uniteddeployment_v1alpha1(&alpha, None)), Vec::<String>::new());
}

#[test]
fn each_uniteddeployment_rule_names_its_field() {
    let sts_template = |spec: Value| {
        with_template(
            "statefulSetTemplate",
            json!({"metadata": {"labels": {"app": "web"}}, "spec": patched(json!({"template": pod_template("web")}), spec)}),
        )
    };
    let zone = |name: &str, extra: Value| {
        patched(
            json!({"name": name, "nodeSelectorTerm": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [name]}]}}),
            extra,
        )
    };
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("name is a DNS subdomain", json!({"metadata": {"name": "Web"}}), vec!["metadata.name"]),
        (
            "replicas non-negative (the subsets then exceed it)",
            json!({"spec": {"replicas": -1}}),
            vec!["spec.replicas", "spec.topology.subsets"],
        ),
        ("selector required", json!({"spec": {"selector": null}}), vec!["spec.selector"]),
        ("selector non-empty", json!({"spec": {"selector": {"matchLabels": null}}}), vec!["spec.selector"]),
        (
            "selector matches the pod template",
            json!({"spec": {"selector": {"matchLabels": {"app": "api"}}}}),
            vec!["spec.template.cloneSetTemplate.spec.template.metadata.labels"],
        ),
        (
            "pod template valid",
            json!({"spec": {"template": {"cloneSetTemplate": {"spec": {"template": {"spec": {"containers": [
                {"name": "main", "image": ""}]}}}}}}}),
            vec!["spec.template.cloneSetTemplate.spec.template.spec.containers[0].image"],
        ),
        (
            "one template required",
            json!({"spec": {"template": {"cloneSetTemplate": null}}}),
            vec!["spec.template"],
        ),
        (
            "only one template",
            json!({"spec": {"template": {"deploymentTemplate": {"metadata": {"labels": {"app": "web"}},
                "spec": {"template": pod_template("web")}}}}}),
            vec!["spec.template"],
        ),
        (
            "deployment template labels match",
            with_template(
                "deploymentTemplate",
                json!({"metadata": {"labels": {"app": "api"}},
                "spec": {"template": pod_template("web")}}),
            ),
            vec!["spec.template.deploymentTemplate.metadata.labels"],
        ),
        (
            "deployment template replicas are not used",
            with_template(
                "deploymentTemplate",
                json!({"metadata": {"labels": {"app": "web"}},
                "spec": {"replicas": 3, "template": pod_template("web")}}),
            ),
            vec!["spec.template.deploymentTemplate.spec.replicas"],
        ),
        (
            "deployment pod labels match",
            with_template(
                "deploymentTemplate",
                json!({"metadata": {"labels": {"app": "web"}},
                "spec": {"template": pod_template("api")}}),
            ),
            vec!["spec.template.deploymentTemplate.spec.template.metadata.labels"],
        ),
        ("statefulSet template is fine", sts_template(json!({})), vec![]),
        (
            "statefulSet template partition is not used",
            sts_template(json!({"updateStrategy": {"rollingUpdate": {"partition": 1}}})),
            vec!["spec.template.statefulSetTemplate.spec.updateStrategy.rollingUpdate.partition"],
        ),
        (
            "statefulSet template replicas are not used",
            sts_template(json!({"replicas": 2})),
            vec!["spec.template.statefulSetTemplate.spec.replicas"],
        ),
        (
            "statefulSet template podManagementPolicy values",
            sts_template(json!({"podManagementPolicy": "Random"})),
            vec!["spec.template.statefulSetTemplate.spec.podManagementPolicy"],
        ),
        (
            "statefulSet template update type values",
            sts_template(json!({"updateStrategy": {"type": "Rolling"}})),
            vec!["spec.template.statefulSetTemplate.spec.updateStrategy.type"],
        ),
        (
            "statefulSet template restartPolicy Always",
            sts_template(json!({"template": {"spec": {"restartPolicy": "Never"}}})),
            vec!["spec.template.statefulSetTemplate.spec.template.spec.restartPolicy"],
        ),
        (
            "statefulSet template minReadySeconds non-negative",
            sts_template(json!({"minReadySeconds": -1})),
            vec!["spec.template.statefulSetTemplate.spec.minReadySeconds"],
        ),
        (
            "advanced statefulSet template replicas are not used",
            with_template(
                "advancedStatefulSetTemplate",
                json!({"metadata": {"labels": {"app": "web"}},
                "spec": {"replicas": 1, "template": pod_template("web")}}),
            ),
            vec!["spec.template.advancedStatefulSetTemplate.spec.replicas"],
        ),
        (
            "advanced statefulSet template labels match",
            with_template(
                "advancedStatefulSetTemplate",
                json!({"metadata": {"labels": {"app": "x"}},
                "spec": {"template": pod_template("web")}}),
            ),
            vec!["spec.template.advancedStatefulSetTemplate.metadata.labels"],
        ),
        (
            "reserving unschedulable pods needs stateless subsets",
            patched(
                sts_template(json!({})),
                json!({"spec": {"topology": {"subsets": [zone("zone-a", json!({})), zone("zone-b", json!({}))],
                    "scheduleStrategy": {"type": "Adaptive", "adaptive": {"reserveUnschedulablePods": true}}},
                    "replicas": null}}),
            ),
            vec!["spec.topology.scheduleStrategy.adaptive.reserveUnschedulablePods"],
        ),
        (
            "Adaptive needs min/max instead of replicas",
            json!({"spec": {"topology": {"scheduleStrategy": {"type": "Adaptive"}}}}),
            vec!["spec.topology.subsets[0].replicas"],
        ),
        (
            "subset name required",
            subsets(json!([zone("", json!({})), zone("zone-b", json!({}))])),
            vec!["spec.topology.subsets[0].name", "spec.updateStrategy.manualUpdate.partitions[zone-a]"],
        ),
        (
            "subset names unique",
            subsets(json!([zone("zone-a", json!({})), zone("zone-a", json!({}))])),
            vec!["spec.topology.subsets[1].name"],
        ),
        (
            "subset names are DNS labels",
            subsets(json!([zone("zone-a", json!({})), zone("Zone_B", json!({}))])),
            vec!["spec.topology.subsets[1].name"],
        ),
        (
            "node selector operators",
            subsets(json!([zone(
                "zone-a",
                json!({"nodeSelectorTerm": {"matchExpressions": [
                {"key": "zone", "operator": "Near", "values": ["a"]}]}})
            )])),
            vec!["spec.topology.subsets[0].nodeSelectorTerm.matchExpressions[0].operator"],
        ),
        (
            "node selector values",
            subsets(json!([zone(
                "zone-a",
                json!({"nodeSelectorTerm": {"matchExpressions": [
                {"key": "cores", "operator": "Gt", "values": ["many"]},
                {"key": "zone", "operator": "Exists", "values": ["a"]},
                {"key": "zone", "operator": "In", "values": []}]}})
            )])),
            vec![
                "spec.topology.subsets[0].nodeSelectorTerm.matchExpressions[0].values",
                "spec.topology.subsets[0].nodeSelectorTerm.matchExpressions[1].values",
                "spec.topology.subsets[0].nodeSelectorTerm.matchExpressions[2].values",
            ],
        ),
        (
            "node field selectors on metadata.name only",
            subsets(json!([zone(
                "zone-a",
                json!({"nodeSelectorTerm": {"matchFields": [
                {"key": "metadata.labels", "operator": "In", "values": ["a"]}]}})
            )])),
            vec!["spec.topology.subsets[0].nodeSelectorTerm.matchFields[0].key"],
        ),
        (
            "toleration effects",
            subsets(json!([zone(
                "zone-a",
                json!({"tolerations": [{"key": "k", "operator": "Exists", "effect": "Sometimes"}]})
            )])),
            vec!["spec.topology.subsets[0].tolerations[0].effect"],
        ),
        (
            "toleration without key must be Exists",
            subsets(json!([zone("zone-a", json!({"tolerations": [{"operator": "Equal", "value": "x"}]}))])),
            vec!["spec.topology.subsets[0].tolerations[0].operator"],
        ),
        (
            "tolerationSeconds needs NoExecute",
            subsets(json!([zone(
                "zone-a",
                json!({"tolerations": [{"key": "k", "operator": "Exists",
                "effect": "NoSchedule", "tolerationSeconds": 10}]})
            )])),
            vec!["spec.topology.subsets[0].tolerations[0].effect"],
        ),
        (
            "subset replicas non-negative",
            subsets(json!([zone("zone-a", json!({"replicas": -1})), zone("zone-b", json!({}))])),
            vec!["spec.topology.subsets[0].replicas"],
        ),
        (
            "subset replicas percentages within 0-100%",
            subsets(json!([zone("zone-a", json!({"replicas": "150%"})), zone("zone-b", json!({}))])),
            vec!["spec.topology.subsets[0].replicas"],
        ),
        (
            "subset replicas within the total",
            subsets(json!([zone("zone-a", json!({"replicas": 7})), zone("zone-b", json!({}))])),
            vec!["spec.topology.subsets"],
        ),
        (
            "subset replicas add up when all are set",
            subsets(json!([
                zone("zone-a", json!({"replicas": 2})),
                zone("zone-b", json!({"replicas": "50%"}))
            ])),
            vec!["spec.topology.subsets"],
        ),
        (
            "percentages add up too",
            subsets(json!([
                zone("zone-a", json!({"replicas": "50%"})),
                zone("zone-b", json!({"replicas": 3}))
            ])),
            vec![],
        ),
        (
            "replicas and min/max not mixed",
            subsets(json!([
                zone("zone-a", json!({"replicas": 2})),
                zone("zone-b", json!({"maxReplicas": 3}))
            ])),
            vec!["spec.topology.subsets"],
        ),
        (
            "minReplicas at most maxReplicas",
            subsets(json!([
                zone("zone-a", json!({"minReplicas": 3, "maxReplicas": 2})),
                zone("zone-b", json!({}))
            ])),
            vec!["spec.topology.subsets[0].minReplicas"],
        ),
        (
            "one subset without maxReplicas",
            subsets(json!([
                zone("zone-a", json!({"maxReplicas": 3})),
                zone("zone-b", json!({"maxReplicas": "50%"}))
            ])),
            vec!["spec.topology.subsets"],
        ),
        (
            "sum of minReplicas within the sum of maxReplicas",
            subsets(json!([
                zone("zone-a", json!({"minReplicas": 2, "maxReplicas": 2})),
                zone("zone-b", json!({"minReplicas": 3, "maxReplicas": 2})),
                zone("zone-c", json!({}))
            ])),
            vec!["spec.topology.subsets[1].minReplicas"],
        ),
        (
            "update type values",
            json!({"spec": {"updateStrategy": {"type": "Auto"}}}),
            vec!["spec.updateStrategy.type"],
        ),
        (
            "partitions name subsets",
            json!({"spec": {"updateStrategy": {"manualUpdate": {"partitions": {"zone-c": 1}}}}}),
            vec!["spec.updateStrategy.manualUpdate.partitions[zone-c]"],
        ),
    ];
    check_table(
        ud_v1beta1,
        |u| default_uniteddeployment_v1beta1(u, true),
        |u| validate_uniteddeployment_v1beta1(u, None),
        cases,
    );

    let raw: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "without spec.replicas every subset sets replicas",
            json!({"spec": {"replicas": null}}),
            vec!["spec.topology.subsets"],
        ),
        (
            "without spec.replicas no percentages",
            patched(
                json!({"spec": {"replicas": null}}),
                subsets(json!([
                    zone("zone-a", json!({"replicas": "50%"})),
                    zone("zone-b", json!({"replicas": 1}))
                ])),
            ),
            vec!["spec.topology.subsets[0].replicas"],
        ),
        (
            "min/max need spec.replicas",
            patched(
                json!({"spec": {"replicas": null}}),
                subsets(json!([zone("zone-a", json!({"maxReplicas": 2})), zone("zone-b", json!({}))])),
            ),
            vec!["spec.replicas"],
        ),
    ];
    check_table(
        ud_v1beta1,
        |_: &mut v1beta1::UnitedDeployment| {},
        |u| validate_uniteddeployment_v1beta1(u, None),
        raw,
    );
}

#[test]
fn subset_replicas_parse_like_upstream() {
    let cases = [
        (Some(10), IntOrString::Int(3), Ok(3)),
        (Some(10), IntOrString::String("25%".into()), Ok(3)),
        (Some(10), IntOrString::String("24%".into()), Ok(2)),
        (Some(3), IntOrString::String("50%".into()), Ok(2)),
        (None, IntOrString::Int(4), Ok(4)),
    ];
    for (total, value, expected) in cases {
        assert_eq!(parse_uniteddeployment_subset_replicas(total, &value), expected, "{value:?} of {total:?}");
    }
    for (total, value) in [
        (Some(10), IntOrString::Int(-1)),
        (None, IntOrString::String("50%".into())),
        (Some(10), IntOrString::String("5".into())),
        (Some(10), IntOrString::String("101%".into())),
        (Some(10), IntOrString::String("x%".into())),
    ] {
        assert!(parse_uniteddeployment_subset_replicas(total, &value).is_err(), "{value:?}");
    }
}

#[test]
fn uniteddeployment_updates_keep_subset_placement_and_workload_identity() {
    let old: v1beta1::UnitedDeployment = decode(ud_v1beta1());
    let mut allowed = old.clone();
    allowed.spec.replicas = Some(8);
    allowed.spec.topology.subsets.push(decode(json!({"name": "zone-c"})));
    assert!(validate_uniteddeployment_v1beta1(&allowed, Some(&old)).is_empty());

    let mut placement = old.clone();
    placement.spec.topology.subsets[0].node_selector_term = Default::default();
    placement.spec.topology.subsets[1].tolerations.clear();
    assert_eq!(
        paths(&validate_uniteddeployment_v1beta1(&placement, Some(&old))),
        ["spec.topology.subsets[0].nodeSelectorTerm", "spec.topology.subsets[1].tolerations"]
    );

    let sts = |patch: Value| -> v1beta1::UnitedDeployment {
        decode(patched(
            ud_v1beta1(),
            with_template(
                "statefulSetTemplate",
                json!({"metadata": {"labels": {"app": "web"}}, "spec": patched(json!({"template": pod_template("web"),
                    "serviceName": "web"}), patch)}),
            ),
        ))
    };
    let old_sts = sts(json!({}));
    assert!(
        validate_uniteddeployment_v1beta1(
            &sts(json!({"minReadySeconds": 5, "podManagementPolicy": "OrderedReady"})),
            Some(&old_sts)
        )
        .is_empty()
    );
    assert_eq!(
        paths(&validate_uniteddeployment_v1beta1(&sts(json!({"serviceName": "other"})), Some(&old_sts))),
        ["spec.template.statefulSetTemplate.spec"]
    );

    let advanced = |patch: Value| -> v1alpha1::UnitedDeployment {
        decode(patched(
            ud_v1alpha1(),
            with_template(
                "advancedStatefulSetTemplate",
                json!({"metadata": {"labels": {"app": "web"}}, "spec": patched(json!({"template": pod_template("web"),
                    "serviceName": "web"}), patch)}),
            ),
        ))
    };
    let old_advanced = advanced(json!({}));
    assert!(
        validate_uniteddeployment_v1alpha1(
            &advanced(json!({"updateStrategy": {"type": "OnDelete"}})),
            Some(&old_advanced)
        )
        .is_empty()
    );
    assert_eq!(
        paths(&validate_uniteddeployment_v1alpha1(
            &advanced(json!({"serviceName": "other"})),
            Some(&old_advanced)
        )),
        ["spec.template.advancedStatefulSetTemplate.spec"]
    );
}

#[test]
fn uniteddeployment_defaults_follow_upstream_cases() {
    // Upstream `TestSetDefaultsUnitedDeployment` / `...V1beta1`: capacity-only subsets get minReplicas 0.
    let capacity = json!({"spec": {"topology": {"subsets": [{"name": "subset-a", "maxReplicas": 5}]}}});
    let mut alpha: v1alpha1::UnitedDeployment = decode(capacity.clone());
    default_uniteddeployment_v1alpha1(&mut alpha, false);
    let mut beta: v1beta1::UnitedDeployment = decode(capacity);
    default_uniteddeployment_v1beta1(&mut beta, false);
    for spec in [&alpha.spec, &beta.spec] {
        assert_eq!((spec.replicas, spec.revision_history_limit), (Some(1), Some(10)));
        assert_eq!(spec.update_strategy.type_, v1beta1::UnitedDeploymentUpdateStrategyType::Manual);
        assert!(spec.update_strategy.manual_update.is_some());
        assert_eq!(spec.topology.subsets[0].min_replicas, Some(IntOrString::Int(0)));
    }

    // `...PreservesExplicitValues`.
    let mut explicit: v1beta1::UnitedDeployment =
        decode(json!({"spec": {"replicas": 7, "revisionHistoryLimit": 3,
        "updateStrategy": {"type": "Manual", "manualUpdate": {"partitions": {"subset-a": 2}}},
        "topology": {"subsets": [{"name": "subset-a", "minReplicas": "25%", "maxReplicas": 9}]}}}));
    default_uniteddeployment_v1beta1(&mut explicit, false);
    let spec = &explicit.spec;
    assert_eq!((spec.replicas, spec.revision_history_limit), (Some(7), Some(3)));
    assert_eq!(
        spec.update_strategy.manual_update.as_ref().unwrap().partitions,
        [("subset-a".to_string(), 2)].into()
    );
    assert_eq!(spec.topology.subsets[0].min_replicas, Some(IntOrString::String("25%".into())));

    // A subset with fixed replicas turns the minReplicas default off.
    let mut fixed: v1beta1::UnitedDeployment = decode(json!({"spec": {"topology": {"subsets": [
        {"name": "a", "replicas": 1}, {"name": "b", "maxReplicas": 2}]}}}));
    default_uniteddeployment_v1beta1(&mut fixed, false);
    assert!(fixed.spec.topology.subsets.iter().all(|s| s.min_replicas.is_none()));

    // Template defaults reach the statefulSetTemplate only.
    let mut sts: v1beta1::UnitedDeployment = decode(patched(
        ud_v1beta1(),
        with_template(
            "statefulSetTemplate",
            json!({"spec": {"template": pod_template("web"),
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]}}),
        ),
    ));
    default_uniteddeployment_v1beta1(&mut sts, true);
    let template = &sts.spec.template.stateful_set_template.as_ref().unwrap().spec;
    assert_eq!(template.template.spec.as_ref().unwrap().restart_policy.as_deref(), Some("Always"));
    let claim = &template.volume_claim_templates.as_ref().unwrap()[0];
    assert_eq!(claim.spec.as_ref().unwrap().volume_mode, None, "upstream leaves volumeMode unset");
    assert_eq!(claim.status.as_ref().unwrap().phase.as_deref(), Some("Pending"));
    let mut clone: v1beta1::UnitedDeployment = decode(ud_v1beta1());
    default_uniteddeployment_v1beta1(&mut clone, true);
    let clone_pod =
        clone.spec.template.clone_set_template.as_ref().unwrap().spec.template.spec.as_ref().unwrap();
    assert_eq!(clone_pod.restart_policy, None, "upstream defaults only statefulSetTemplate pods");
}
