//! v1alpha1 <-> v1beta1 conversion of ResourceDistribution, WorkloadSpread, PersistentPodState
//! and PodUnavailableBudget: round trips of fully populated objects, the upstream conversion
//! cases (SCENARIOS.md section 5) as our own tests, and serde round trips of every root type.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

mod support;

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm},
    apimachinery::pkg::{
        apis::meta::v1::{Condition, LabelSelector, Time},
        util::intstr::IntOrString,
    },
    jiff::Timestamp,
};
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    conversion::*,
    policy::{v1alpha1 as policy_alpha, v1beta1 as policy_beta},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::json;
use support::populate::populated;

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn time(text: &str) -> Time {
    Time(text.parse::<Timestamp>().expect("valid timestamp"))
}

fn assert_serde_round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(object: T) {
    let value = serde_json::to_value(&object).expect("serializes");
    let back: T = serde_json::from_value(value.clone()).expect("deserializes");
    assert_eq!(back, object, "serde round trip of {value}");
}

// ---------------------------------------------------------------------------------------------
// ResourceDistribution

#[test]
fn resourcedistribution_round_trips_fully_populated() {
    let alpha: v1alpha1::ResourceDistribution = populated(&[
        ("status.conditions[].type", json!("CreateResourceFailed")),
        ("status.conditions[].status", json!("True")),
    ]);
    let beta: v1beta1::ResourceDistribution = populated(&[
        ("status.conditions[].type", json!("ConflictOccurred")),
        ("status.conditions[].status", json!("False")),
    ]);
    assert_round_trips!(
        alpha,
        beta,
        resourcedistribution_to_v1beta1,
        resourcedistribution_to_v1alpha1,
        natural = true
    );
}

#[test]
fn resourcedistribution_convert_to_v1beta1_renames_selector_and_failed_namespaces() {
    let alpha: v1alpha1::ResourceDistribution = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ResourceDistribution",
        "metadata": {"name": "demo", "labels": {"app": "demo"}},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo"}, "data": {"k": "v"}},
            "targets": {
                "allNamespaces": true,
                "includedNamespaces": {"list": [{"name": "ns-1"}]},
                "excludedNamespaces": {"list": [{"name": "ns-2"}]},
                "namespaceLabelSelector": {"matchLabels": {"env": "prod"}}
            }
        },
        "status": {
            "desired": 3, "succeeded": 2, "failed": 1, "observedGeneration": 7,
            "conditions": [{
                "type": "CreateResourceFailed", "status": "True",
                "reason": "create failed", "failedNamespace": ["ns-2"]
            }]
        }
    }))
    .expect("valid object");
    let beta = resourcedistribution_to_v1beta1(&alpha);
    let targets = &beta.spec.targets;
    assert!(targets.all_namespaces);
    assert_eq!(targets.namespace_selector.match_labels, Some(map(&[("env", "prod")])));
    assert_eq!(targets.included_namespaces.list[0].name, "ns-1");
    assert_eq!(targets.excluded_namespaces.list[0].name, "ns-2");
    let status = beta.status.as_ref().expect("status");
    assert_eq!((status.desired, status.succeeded, status.failed), (3, 2, 1));
    assert_eq!(status.observed_generation, 7);
    assert_eq!(status.conditions[0].type_, v1beta1::ResourceDistributionConditionType::CreateResourceFailed);
    assert_eq!(status.conditions[0].failed_namespaces, vec!["ns-2".to_string()]);

    let written = serde_json::to_value(&beta).expect("serializes");
    assert_eq!(written["apiVersion"], "apps.kruise.io/v1beta1");
    assert_eq!(written["spec"]["targets"]["namespaceSelector"], json!({"matchLabels": {"env": "prod"}}));
    assert!(written["spec"]["targets"].get("namespaceLabelSelector").is_none());
    assert_eq!(written["status"]["conditions"][0]["failedNamespaces"], json!(["ns-2"]));
    assert!(written["status"]["conditions"][0].get("failedNamespace").is_none());
    assert_eq!(written["spec"]["resource"]["data"], json!({"k": "v"}), "resource kept verbatim");
}

#[test]
fn resourcedistribution_convert_from_v1beta1_restores_v1alpha1_names() {
    let beta: v1beta1::ResourceDistribution = serde_json::from_value(json!({
        "metadata": {"name": "demo", "annotations": {"keep": "me"}},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "demo"}, "type": "Opaque"},
            "targets": {"namespaceSelector": {"matchLabels": {"team": "platform"}}}
        },
        "status": {
            "conditions": [{"type": "NamespaceNotExists", "status": "True", "failedNamespaces": ["ns-a", "ns-b"]}]
        }
    }))
    .expect("valid object");
    let alpha = resourcedistribution_to_v1alpha1(&beta);
    assert_eq!(alpha.spec.targets.namespace_label_selector.match_labels, Some(map(&[("team", "platform")])));
    let status = alpha.status.as_ref().expect("status");
    assert_eq!(status.conditions[0].failed_namespaces, vec!["ns-a".to_string(), "ns-b".to_string()]);
    assert_eq!(alpha.metadata.annotations, Some(map(&[("keep", "me")])));

    let written = serde_json::to_value(&alpha).expect("serializes");
    assert_eq!(written["apiVersion"], "apps.kruise.io/v1alpha1");
    assert_eq!(
        written["spec"]["targets"]["namespaceLabelSelector"],
        json!({"matchLabels": {"team": "platform"}})
    );
    assert_eq!(written["status"]["conditions"][0]["failedNamespace"], json!(["ns-a", "ns-b"]));
    assert!(written["status"]["conditions"][0].get("failedNamespaces").is_none());
}

#[test]
fn resourcedistribution_survives_serde() {
    assert_serde_round_trip(populated::<v1alpha1::ResourceDistribution>(&[]));
    assert_serde_round_trip(populated::<v1beta1::ResourceDistribution>(&[]));
}

// ---------------------------------------------------------------------------------------------
// WorkloadSpread

/// Realistic subset conditions; v1beta1 conditions carry no observedGeneration (v1alpha1 cannot
/// hold one).
fn workloadspread_overrides(prefix_beta: bool) -> Vec<(&'static str, serde_json::Value)> {
    let mut overrides = vec![
        ("spec.scheduleStrategy.type", json!("Adaptive")),
        ("status.subsetStatuses[].conditions[].type", json!("Schedulable")),
        ("status.subsetStatuses[].conditions[].status", json!("False")),
        ("status.versionedSubsetStatuses{}[].conditions[].type", json!("Schedulable")),
        ("status.versionedSubsetStatuses{}[].conditions[].status", json!("True")),
    ];
    if prefix_beta {
        overrides.push(("status.subsetStatuses[].conditions[].observedGeneration", json!(null)));
        overrides.push(("status.versionedSubsetStatuses{}[].conditions[].observedGeneration", json!(null)));
    }
    overrides
}

#[test]
fn workloadspread_round_trips_fully_populated() {
    let alpha: v1alpha1::WorkloadSpread = populated(&workloadspread_overrides(false));
    let beta: v1beta1::WorkloadSpread = populated(&workloadspread_overrides(true));
    assert_round_trips!(alpha, beta, workloadspread_to_v1beta1, workloadspread_to_v1alpha1, natural = true);
}

#[test]
fn workloadspread_round_trips_are_exact_where_conditions_differ() {
    // An empty reason becomes "Unknown" and an unset transition time Go's zero time.
    let mut alpha: v1alpha1::WorkloadSpread = populated(&workloadspread_overrides(false));
    let conditions = &mut alpha.status.as_mut().expect("status").subset_statuses[0].conditions;
    conditions[0].reason.clear();
    conditions[0].last_transition_time = None;
    // observedGeneration of a standard condition has no v1alpha1 field.
    let beta: v1beta1::WorkloadSpread = populated(&[]);
    assert_round_trips!(alpha, beta, workloadspread_to_v1beta1, workloadspread_to_v1alpha1, natural = false);
}

fn alpha_condition(status: &str, reason: &str, message: &str) -> v1alpha1::WorkloadSpreadSubsetCondition {
    v1alpha1::WorkloadSpreadSubsetCondition {
        type_: v1alpha1::WorkloadSpreadSubsetConditionType::Schedulable,
        status: status.into(),
        last_transition_time: None,
        reason: reason.into(),
        message: message.into(),
    }
}

fn beta_condition(status: &str, reason: &str, message: &str) -> Condition {
    Condition {
        type_: "Schedulable".into(),
        status: status.into(),
        last_transition_time: time("2024-05-06T07:08:09Z"),
        reason: reason.into(),
        message: message.into(),
        observed_generation: Some(7),
    }
}

fn zone_term(zone: &str) -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_expressions: Some(vec![NodeSelectorRequirement {
            key: "zone".into(),
            operator: "In".into(),
            values: Some(vec![zone.into()]),
        }]),
        match_fields: None,
    }
}

#[test]
fn workloadspread_convert_to_v1beta1_all_fields_with_node_selectors_and_conditions() {
    let mut alpha = v1alpha1::WorkloadSpread::new(
        "ws-test",
        v1alpha1::WorkloadSpreadSpec {
            target_reference: Some(v1alpha1::TargetReference {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                name: "my-deploy".into(),
            }),
            target_filter: Some(v1alpha1::TargetFilter {
                selector: None,
                replicas_path_list: vec!["spec.replicas".into()],
            }),
            subsets: vec![v1alpha1::WorkloadSpreadSubset {
                name: "zone-a".into(),
                required_node_selector_term: Some(zone_term("a")),
                preferred_node_selector_terms: vec![PreferredSchedulingTerm {
                    weight: 10,
                    preference: NodeSelectorTerm::default(),
                }],
                max_replicas: Some(IntOrString::Int(5)),
                ..Default::default()
            }],
            schedule_strategy: v1alpha1::WorkloadSpreadScheduleStrategy {
                type_: v1alpha1::WorkloadSpreadScheduleStrategyType::Adaptive,
                adaptive: Some(v1alpha1::AdaptiveWorkloadSpreadStrategy {
                    disable_simulation_schedule: true,
                    reschedule_critical_seconds: Some(30),
                }),
            },
        },
    );
    alpha.metadata.namespace = Some("default".into());
    alpha.status = Some(v1alpha1::WorkloadSpreadStatus {
        observed_generation: 3,
        subset_statuses: vec![v1alpha1::WorkloadSpreadSubsetStatus {
            name: "zone-a".into(),
            replicas: 2,
            missing_replicas: 1,
            conditions: vec![alpha_condition("False", "InsufficientResources", "no CPU")],
            ..Default::default()
        }],
        ..Default::default()
    });

    let beta = workloadspread_to_v1beta1(&alpha);
    assert_eq!(beta.metadata.name.as_deref(), Some("ws-test"));
    assert_eq!(beta.spec.target_reference.as_ref().expect("targetRef").name, "my-deploy");
    let subset = &beta.spec.subsets[0];
    assert_eq!(subset.required_node_selector, Some(zone_term("a")));
    assert_eq!(subset.preferred_node_selector.len(), 1);
    assert_eq!(subset.max_replicas, Some(IntOrString::Int(5)));
    assert_eq!(beta.spec.schedule_strategy, alpha.spec.schedule_strategy);
    let status = beta.status.as_ref().expect("status");
    assert_eq!(status.observed_generation, 3);
    let condition = &status.subset_statuses[0].conditions[0];
    assert_eq!(condition.type_, "Schedulable");
    assert_eq!(condition.status, "False");
    assert_eq!(condition.reason, "InsufficientResources");
    assert_eq!(condition.message, "no CPU");

    let written = serde_json::to_value(&beta).expect("serializes");
    assert!(written["spec"]["subsets"][0].get("requiredNodeSelector").is_some());
    assert!(written["spec"]["subsets"][0].get("requiredNodeSelectorTerm").is_none());
    assert!(written["spec"]["subsets"][0].get("preferredNodeSelector").is_some());
    assert_eq!(workloadspread_to_v1alpha1(&beta), alpha);
}

#[test]
fn workloadspread_empty_reason_in_alpha_condition_becomes_unknown_in_beta() {
    let alpha = v1alpha1::WorkloadSpread {
        status: Some(v1alpha1::WorkloadSpreadStatus {
            subset_statuses: vec![v1alpha1::WorkloadSpreadSubsetStatus {
                name: "s1".into(),
                conditions: vec![alpha_condition("True", "", "")],
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..v1alpha1::WorkloadSpread::new("ws-noreason", Default::default())
    };
    let beta = workloadspread_to_v1beta1(&alpha);
    let condition = &beta.status.as_ref().expect("status").subset_statuses[0].conditions[0];
    assert_eq!(condition.reason, "Unknown");
    assert_eq!(condition.last_transition_time, time("0001-01-01T00:00:00Z"), "Go's zero time");
    // The v1alpha1 object comes back exactly (the stash remembers the empty reason).
    assert_eq!(workloadspread_to_v1alpha1(&beta), alpha);
}

#[test]
fn workloadspread_nil_required_node_selector_term_stays_nil() {
    let alpha = v1alpha1::WorkloadSpread::new(
        "ws-nil",
        v1alpha1::WorkloadSpreadSpec {
            subsets: vec![v1alpha1::WorkloadSpreadSubset { name: "s1".into(), ..Default::default() }],
            ..Default::default()
        },
    );
    let beta = workloadspread_to_v1beta1(&alpha);
    assert_eq!(beta.spec.subsets[0].required_node_selector, None);
    assert!(beta.spec.subsets[0].preferred_node_selector.is_empty(), "empty preferred terms stay empty");
    let written = serde_json::to_value(&beta).expect("serializes");
    assert_eq!(written["spec"]["subsets"][0], json!({"name": "s1"}));
}

#[test]
fn workloadspread_versioned_subset_status_conditions_are_converted() {
    let alpha = v1alpha1::WorkloadSpread {
        status: Some(v1alpha1::WorkloadSpreadStatus {
            versioned_subset_statuses: [(
                "v1".to_string(),
                vec![v1alpha1::WorkloadSpreadSubsetStatus {
                    name: "zone-a".into(),
                    conditions: vec![alpha_condition("True", "OK", "")],
                    ..Default::default()
                }],
            )]
            .into(),
            ..Default::default()
        }),
        ..v1alpha1::WorkloadSpread::new("ws-versioned", Default::default())
    };
    let beta = workloadspread_to_v1beta1(&alpha);
    let conditions = &beta.status.as_ref().expect("status").versioned_subset_statuses["v1"][0].conditions;
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0].type_, "Schedulable");
    assert_eq!(conditions[0].reason, "OK");
}

#[test]
fn workloadspread_empty_subsets_statuses_and_conditions_convert() {
    // Covers "nil subsets slice", "nil VersionedSubsetStatuses map" and "subset with no
    // conditions" in both directions.
    let alpha = v1alpha1::WorkloadSpread {
        status: Some(v1alpha1::WorkloadSpreadStatus {
            subset_statuses: vec![v1alpha1::WorkloadSpreadSubsetStatus {
                name: "zone-a".into(),
                replicas: 1,
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..v1alpha1::WorkloadSpread::new("ws-empty", Default::default())
    };
    let beta = workloadspread_to_v1beta1(&alpha);
    assert!(beta.spec.subsets.is_empty());
    let status = beta.status.as_ref().expect("status");
    assert!(status.versioned_subset_statuses.is_empty());
    assert!(status.subset_statuses[0].conditions.is_empty());
    assert_eq!(workloadspread_to_v1alpha1(&beta), alpha);

    let beta = v1beta1::WorkloadSpread {
        status: Some(v1beta1::WorkloadSpreadStatus {
            subset_statuses: vec![v1beta1::WorkloadSpreadSubsetStatus {
                name: "zone-a".into(),
                replicas: 2,
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..v1beta1::WorkloadSpread::new("ws-empty", Default::default())
    };
    let alpha = workloadspread_to_v1alpha1(&beta);
    assert!(alpha.spec.subsets.is_empty());
    let status = alpha.status.as_ref().expect("status");
    assert!(status.versioned_subset_statuses.is_empty());
    assert!(status.subset_statuses[0].conditions.is_empty());
    assert_eq!(workloadspread_to_v1beta1(&alpha), beta);
}

#[test]
fn workloadspread_convert_from_v1beta1_reverses_renames_and_drops_condition_generation() {
    let beta = v1beta1::WorkloadSpread {
        status: Some(v1beta1::WorkloadSpreadStatus {
            observed_generation: 7,
            subset_statuses: vec![v1beta1::WorkloadSpreadSubsetStatus {
                name: "zone-b".into(),
                conditions: vec![beta_condition("True", "OK", "all good")],
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..v1beta1::WorkloadSpread::new(
            "ws-test",
            v1beta1::WorkloadSpreadSpec {
                target_reference: Some(v1beta1::TargetReference {
                    api_version: "apps/v1".into(),
                    kind: "CloneSet".into(),
                    name: "cs".into(),
                }),
                subsets: vec![v1beta1::WorkloadSpreadSubset {
                    name: "zone-b".into(),
                    required_node_selector: Some(zone_term("b")),
                    preferred_node_selector: vec![PreferredSchedulingTerm {
                        weight: 5,
                        preference: NodeSelectorTerm::default(),
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            },
        )
    };
    let alpha = workloadspread_to_v1alpha1(&beta);
    assert_eq!(alpha.spec.target_reference.as_ref().expect("targetRef").name, "cs");
    assert_eq!(alpha.spec.subsets[0].required_node_selector_term, Some(zone_term("b")));
    assert_eq!(alpha.spec.subsets[0].preferred_node_selector_terms.len(), 1);
    let status = alpha.status.as_ref().expect("status");
    assert_eq!(status.observed_generation, 7);
    let condition = &status.subset_statuses[0].conditions[0];
    assert_eq!(condition.type_, v1alpha1::WorkloadSpreadSubsetConditionType::Schedulable);
    assert_eq!(condition.status, "True");
    assert_eq!(condition.reason, "OK");
    assert_eq!(condition.last_transition_time, Some(time("2024-05-06T07:08:09Z")));
    let written = serde_json::to_value(&alpha).expect("serializes");
    assert!(written["status"]["subsetStatuses"][0]["conditions"][0].get("observedGeneration").is_none());
    assert!(written["spec"]["subsets"][0].get("requiredNodeSelectorTerm").is_some());
    // Converting back restores the generation from the stash.
    assert_eq!(workloadspread_to_v1beta1(&alpha), beta);
}

#[test]
fn workloadspread_versioned_subset_status_conditions_are_converted_back() {
    let beta = v1beta1::WorkloadSpread {
        status: Some(v1beta1::WorkloadSpreadStatus {
            versioned_subset_statuses: [(
                "v2".to_string(),
                vec![v1beta1::WorkloadSpreadSubsetStatus {
                    name: "zone-a".into(),
                    conditions: vec![Condition {
                        observed_generation: None,
                        ..beta_condition("False", "Drained", "no nodes")
                    }],
                    ..Default::default()
                }],
            )]
            .into(),
            ..Default::default()
        }),
        ..v1beta1::WorkloadSpread::new("ws-v", Default::default())
    };
    let alpha = workloadspread_to_v1alpha1(&beta);
    let conditions = &alpha.status.as_ref().expect("status").versioned_subset_statuses["v2"][0].conditions;
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0].type_, v1alpha1::WorkloadSpreadSubsetConditionType::Schedulable);
    assert_eq!(conditions[0].reason, "Drained");
    assert_eq!(conditions[0].message, "no nodes");
}

#[test]
fn workloadspread_round_trip_keeps_spec_and_status() {
    let mut alpha = v1alpha1::WorkloadSpread::new(
        "ws-rt",
        v1alpha1::WorkloadSpreadSpec {
            target_reference: Some(v1alpha1::TargetReference {
                api_version: "apps.kruise.io/v1beta1".into(),
                kind: "CloneSet".into(),
                name: "cs-rt".into(),
            }),
            subsets: vec![v1alpha1::WorkloadSpreadSubset {
                name: "zone-a".into(),
                required_node_selector_term: Some(zone_term("us-east-1a")),
                preferred_node_selector_terms: vec![PreferredSchedulingTerm {
                    weight: 100,
                    preference: zone_term("fast"),
                }],
                max_replicas: Some(IntOrString::Int(3)),
                ..Default::default()
            }],
            schedule_strategy: v1alpha1::WorkloadSpreadScheduleStrategy {
                type_: v1alpha1::WorkloadSpreadScheduleStrategyType::Fixed,
                adaptive: None,
            },
            ..Default::default()
        },
    );
    alpha.metadata.labels = Some(map(&[("env", "prod")]));
    alpha.status = Some(v1alpha1::WorkloadSpreadStatus {
        observed_generation: 5,
        subset_statuses: vec![v1alpha1::WorkloadSpreadSubsetStatus {
            name: "zone-a".into(),
            replicas: 3,
            conditions: vec![v1alpha1::WorkloadSpreadSubsetCondition {
                last_transition_time: Some(time("2024-01-02T03:04:05Z")),
                ..alpha_condition("True", "Sufficient", "all nodes available")
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let beta = workloadspread_to_v1beta1(&alpha);
    assert!(
        beta.metadata.annotations.is_none(),
        "a realistic object needs no stash: {:?}",
        beta.metadata.annotations
    );
    assert_eq!(workloadspread_to_v1alpha1(&beta), alpha);
}

#[test]
fn workloadspread_survives_serde() {
    assert_serde_round_trip(populated::<v1alpha1::WorkloadSpread>(&[]));
    assert_serde_round_trip(populated::<v1beta1::WorkloadSpread>(&[]));
}

// ---------------------------------------------------------------------------------------------
// PersistentPodState

#[test]
fn persistentpodstate_round_trips_fully_populated() {
    for policy in ["WhenScaled", "WhenDeleted"] {
        let alpha: v1alpha1::PersistentPodState =
            populated(&[("spec.persistentPodStateRetentionPolicy", json!(policy))]);
        let beta: v1beta1::PersistentPodState =
            populated(&[("spec.persistentPodStateRetentionPolicy", json!(policy))]);
        assert_round_trips!(
            alpha,
            beta,
            persistentpodstate_to_v1beta1,
            persistentpodstate_to_v1alpha1,
            natural = true
        );
    }
}

fn statefulset_ref(name: &str) -> v1beta1::TargetReference {
    v1beta1::TargetReference { api_version: "apps/v1".into(), kind: "StatefulSet".into(), name: name.into() }
}

#[test]
fn persistentpodstate_convert_to_v1beta1_all_fields_with_node_topology_keys() {
    let alpha = v1alpha1::PersistentPodState {
        status: Some(v1alpha1::PersistentPodStateStatus {
            observed_generation: 2,
            pod_states: [(
                "web-0".to_string(),
                v1alpha1::PodState {
                    node_name: "node-1".into(),
                    node_topology_labels: map(&[("kubernetes.io/hostname", "node-1")]),
                    annotations: map(&[("foo", "bar")]),
                },
            )]
            .into(),
        }),
        ..v1alpha1::PersistentPodState::new(
            "pps",
            v1alpha1::PersistentPodStateSpec {
                target_reference: statefulset_ref("web"),
                persistent_pod_annotations: vec![v1alpha1::PersistentPodAnnotation { key: "foo".into() }],
                required_persistent_topology: Some(v1alpha1::NodeTopologyTerm {
                    node_topology_keys: vec!["kubernetes.io/hostname".into()],
                }),
                preferred_persistent_topology: vec![v1alpha1::PreferredTopologyTerm {
                    weight: 100,
                    preference: v1alpha1::NodeTopologyTerm {
                        node_topology_keys: vec!["topology.kubernetes.io/zone".into()],
                    },
                }],
                persistent_pod_state_retention_policy:
                    v1alpha1::PersistentPodStateRetentionPolicyType::WhenDeleted,
            },
        )
    };
    let beta = persistentpodstate_to_v1beta1(&alpha);
    let expected_spec = v1beta1::PersistentPodStateSpec {
        target_reference: statefulset_ref("web"),
        persistent_pod_annotations: vec![v1beta1::PersistentPodAnnotation { key: "foo".into() }],
        required_persistent_topology: Some(v1beta1::NodeTopologyTerm {
            keys: vec!["kubernetes.io/hostname".into()],
        }),
        preferred_persistent_topology: vec![v1beta1::PreferredTopologyTerm {
            weight: 100,
            preference: v1beta1::NodeTopologyTerm { keys: vec!["topology.kubernetes.io/zone".into()] },
        }],
        persistent_pod_state_retention_policy: v1beta1::PersistentPodStateRetentionPolicyType::WhenDeleted,
    };
    assert_eq!(beta.spec, expected_spec);
    assert_eq!(beta.status, alpha.status);
    let written = serde_json::to_value(&beta).expect("serializes");
    assert_eq!(written["spec"]["requiredPersistentTopology"], json!({"keys": ["kubernetes.io/hostname"]}));
}

#[test]
fn persistentpodstate_empty_topology_stays_empty() {
    let alpha = v1alpha1::PersistentPodState::new(
        "x",
        v1alpha1::PersistentPodStateSpec {
            target_reference: statefulset_ref("x"),
            preferred_persistent_topology: vec![v1alpha1::PreferredTopologyTerm {
                weight: 50,
                preference: Default::default(),
            }],
            ..Default::default()
        },
    );
    let beta = persistentpodstate_to_v1beta1(&alpha);
    assert_eq!(
        beta.spec.preferred_persistent_topology,
        vec![v1beta1::PreferredTopologyTerm { weight: 50, preference: Default::default() }]
    );
    assert_eq!(beta.spec.required_persistent_topology, None);
    let written = serde_json::to_value(&beta).expect("serializes");
    assert_eq!(
        written["spec"]["preferredPersistentTopology"],
        json!([{"weight": 50, "preference": {"keys": []}}])
    );
}

#[test]
fn persistentpodstate_convert_from_v1beta1_renames_keys_back() {
    let beta = v1beta1::PersistentPodState {
        status: Some(v1beta1::PersistentPodStateStatus {
            observed_generation: 5,
            pod_states: [(
                "web-0".to_string(),
                v1beta1::PodState { node_name: "node-1".into(), ..Default::default() },
            )]
            .into(),
        }),
        ..v1beta1::PersistentPodState::new(
            "pps",
            v1beta1::PersistentPodStateSpec {
                target_reference: statefulset_ref("web"),
                required_persistent_topology: Some(v1beta1::NodeTopologyTerm {
                    keys: vec!["kubernetes.io/hostname".into(), "topology.kubernetes.io/zone".into()],
                }),
                preferred_persistent_topology: vec![v1beta1::PreferredTopologyTerm {
                    weight: 100,
                    preference: v1beta1::NodeTopologyTerm {
                        keys: vec!["topology.kubernetes.io/zone".into()],
                    },
                }],
                persistent_pod_state_retention_policy:
                    v1beta1::PersistentPodStateRetentionPolicyType::WhenDeleted,
                ..Default::default()
            },
        )
    };
    let alpha = persistentpodstate_to_v1alpha1(&beta);
    assert_eq!(
        alpha.spec.required_persistent_topology.as_ref().expect("required topology").node_topology_keys,
        vec!["kubernetes.io/hostname".to_string(), "topology.kubernetes.io/zone".to_string()]
    );
    let preferred = &alpha.spec.preferred_persistent_topology[0];
    assert_eq!(preferred.weight, 100);
    assert_eq!(preferred.preference.node_topology_keys, vec!["topology.kubernetes.io/zone".to_string()]);
    assert_eq!(
        alpha.spec.persistent_pod_state_retention_policy,
        v1alpha1::PersistentPodStateRetentionPolicyType::WhenDeleted
    );
    assert_eq!(alpha.status.as_ref().expect("status").observed_generation, 5);
    assert_eq!(alpha.status.as_ref().expect("status").pod_states["web-0"].node_name, "node-1");
    let written = serde_json::to_value(&alpha).expect("serializes");
    assert_eq!(
        written["spec"]["preferredPersistentTopology"][0]["preference"],
        json!({"nodeTopologyKeys": ["topology.kubernetes.io/zone"]})
    );
    // One-to-one: no stash needed, and back again is exact.
    assert!(alpha.metadata.annotations.is_none());
    assert_eq!(persistentpodstate_to_v1beta1(&alpha), beta);
}

#[test]
fn persistentpodstate_survives_serde() {
    assert_serde_round_trip(populated::<v1alpha1::PersistentPodState>(&[]));
    assert_serde_round_trip(populated::<v1beta1::PersistentPodState>(&[]));
}

// ---------------------------------------------------------------------------------------------
// PodUnavailableBudget

const PROTECT_OPERATIONS: &str = "kruise.io/pub-protect-operations";
const PROTECT_TOTAL_REPLICAS: &str = "pub.kruise.io/protect-total-replicas";

fn demo_selector() -> LabelSelector {
    LabelSelector { match_labels: Some(map(&[("app", "demo")])), match_expressions: None }
}

#[test]
fn podunavailablebudget_round_trips_fully_populated() {
    let mut alpha: policy_alpha::PodUnavailableBudget = populated(&[]);
    alpha.metadata.annotations = Some(map(&[
        ("owner", "tests"),
        (PROTECT_OPERATIONS, "DELETE,EVICT,RESIZE"),
        (PROTECT_TOTAL_REPLICAS, "15"),
    ]));
    // v1alpha1 has no ignoredPodSelector; everything else maps one-to-one.
    let beta: policy_beta::PodUnavailableBudget = populated(&[
        ("spec.protectOperations", json!(["UPDATE", "DELETE"])),
        ("spec.ignoredPodSelector", json!(null)),
    ]);
    assert_round_trips!(
        alpha,
        beta,
        podunavailablebudget_to_v1beta1,
        podunavailablebudget_to_v1alpha1,
        natural = true
    );
}

#[test]
fn podunavailablebudget_round_trips_are_exact_even_with_ignored_pod_selector() {
    // Unparseable annotations stay where they are, in both directions.
    let mut alpha: policy_alpha::PodUnavailableBudget = populated(&[]);
    alpha.metadata.annotations =
        Some(map(&[(PROTECT_OPERATIONS, "DELETE,REBOOT"), (PROTECT_TOTAL_REPLICAS, "many")]));
    let beta: policy_beta::PodUnavailableBudget = populated(&[]);
    assert!(beta.spec.ignored_pod_selector.is_some());
    let converted = podunavailablebudget_to_v1beta1(&alpha);
    assert!(converted.spec.protect_operations.is_empty());
    assert_eq!(converted.spec.protect_total_replicas, None);
    assert_eq!(converted.metadata.annotations, alpha.metadata.annotations);
    assert_round_trips!(
        alpha,
        beta,
        podunavailablebudget_to_v1beta1,
        podunavailablebudget_to_v1alpha1,
        natural = false
    );
}

#[test]
fn podunavailablebudget_convert_to_v1beta1_promotes_deprecated_annotations() {
    let mut alpha = policy_alpha::PodUnavailableBudget::new(
        "pub-demo",
        policy_alpha::PodUnavailableBudgetSpec {
            selector: Some(demo_selector()),
            max_unavailable: Some(IntOrString::String("50%".into())),
            ..Default::default()
        },
    );
    alpha.metadata.namespace = Some("default".into());
    alpha.metadata.annotations =
        Some(map(&[(PROTECT_OPERATIONS, "DELETE,EVICT"), (PROTECT_TOTAL_REPLICAS, "15"), ("keep", "me")]));
    let beta = podunavailablebudget_to_v1beta1(&alpha);
    assert_eq!(
        beta.spec.protect_operations,
        vec![policy_beta::PubOperation::Delete, policy_beta::PubOperation::Evict]
    );
    assert_eq!(beta.spec.protect_total_replicas, Some(15));
    assert_eq!(beta.spec.selector, Some(demo_selector()));
    assert_eq!(beta.spec.max_unavailable, Some(IntOrString::String("50%".into())));
    assert_eq!(beta.metadata.annotations, Some(map(&[("keep", "me")])), "the promoted annotations moved");
    let written = serde_json::to_value(&beta).expect("serializes");
    assert_eq!(written["apiVersion"], "policy.kruise.io/v1beta1");
    assert_eq!(written["kind"], "PodUnavailableBudget");
    assert_eq!(written["spec"]["protectOperations"], json!(["DELETE", "EVICT"]));
    assert_eq!(written["spec"]["protectTotalReplicas"], json!(15));
}

#[test]
fn podunavailablebudget_protect_operations_annotation_tolerates_blanks_and_empty_items() {
    let mut alpha = policy_alpha::PodUnavailableBudget::default();
    alpha.metadata.annotations = Some(map(&[(PROTECT_OPERATIONS, " UPDATE , ,RESIZE ")]));
    let beta = podunavailablebudget_to_v1beta1(&alpha);
    assert_eq!(
        beta.spec.protect_operations,
        vec![policy_beta::PubOperation::Update, policy_beta::PubOperation::Resize]
    );
    // Written back in the canonical form.
    let back = podunavailablebudget_to_v1alpha1(&beta);
    assert_eq!(back.metadata.annotations, Some(map(&[(PROTECT_OPERATIONS, "UPDATE,RESIZE")])));
}

#[test]
fn podunavailablebudget_convert_from_v1beta1_backfills_deprecated_annotations() {
    let mut beta = policy_beta::PodUnavailableBudget::new(
        "pub-demo",
        policy_beta::PodUnavailableBudgetSpec {
            selector: Some(demo_selector()),
            max_unavailable: Some(IntOrString::Int(1)),
            protect_operations: vec![policy_beta::PubOperation::Delete, policy_beta::PubOperation::Resize],
            protect_total_replicas: Some(9),
            ignored_pod_selector: Some(LabelSelector {
                match_labels: Some(map(&[("kruise.io/force-deletable", "true")])),
                match_expressions: None,
            }),
            ..Default::default()
        },
    );
    beta.metadata.namespace = Some("default".into());
    beta.metadata.annotations = Some(map(&[("keep", "me")]));
    let alpha = podunavailablebudget_to_v1alpha1(&beta);
    let annotations = alpha.metadata.annotations.as_ref().expect("annotations");
    assert_eq!(annotations[PROTECT_OPERATIONS], "DELETE,RESIZE");
    assert_eq!(annotations[PROTECT_TOTAL_REPLICAS], "9");
    assert_eq!(annotations["keep"], "me");
    assert_eq!(alpha.spec.target_reference, None);
    assert_eq!(alpha.spec.min_available, None);
    let written = serde_json::to_value(&alpha).expect("serializes");
    assert_eq!(written["apiVersion"], "policy.kruise.io/v1alpha1");
    assert!(written["spec"].get("ignoredPodSelector").is_none());
    // The selector v1alpha1 cannot show comes back from the stash.
    assert_eq!(podunavailablebudget_to_v1beta1(&alpha), beta);
}

#[test]
fn podunavailablebudget_convert_from_v1beta1_drops_default_protect_operations_annotation() {
    let mut beta = policy_beta::PodUnavailableBudget::default();
    beta.metadata.annotations = Some(map(&[(PROTECT_OPERATIONS, "DELETE")]));
    let alpha = podunavailablebudget_to_v1alpha1(&beta);
    let has_annotation = alpha
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|annotations| annotations.contains_key(PROTECT_OPERATIONS));
    assert!(!has_annotation, "annotations: {:?}", alpha.metadata.annotations);
}

#[test]
fn podunavailablebudget_survives_serde() {
    assert_serde_round_trip(populated::<policy_alpha::PodUnavailableBudget>(&[]));
    assert_serde_round_trip(populated::<policy_beta::PodUnavailableBudget>(&[]));
}
