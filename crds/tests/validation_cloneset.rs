//! CloneSet validation, one case per rule of INVENTORY d.2 (upstream
//! `pkg/webhook/cloneset/validating/validation.go`): each case changes one thing in a valid
//! CloneSet and names the field the error must point at.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{default_cloneset_v1alpha1, default_cloneset_v1beta1},
    validation::{validate_cloneset_v1alpha1, validate_cloneset_v1beta1},
};
use serde_json::{Value, json};

fn base_v1beta1() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
            },
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}
            }
        }
    })
}

fn base_v1alpha1() -> Value {
    let mut base = base_v1beta1();
    base["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    base["spec"]["updateStrategy"] = json!({"type": "InPlaceIfPossible", "maxUnavailable": 1});
    base
}

fn patched(base: Value, patch: Value) -> Value {
    let mut document = base;
    json_patch::merge(&mut document, &patch);
    document
}

fn beta_errors(patch: Value) -> Vec<String> {
    let mut cloneset: v1beta1::CloneSet = serde_json::from_value(patched(base_v1beta1(), patch)).unwrap();
    default_cloneset_v1beta1(&mut cloneset, true);
    validate_cloneset_v1beta1(&cloneset, None).iter().map(|e| e.path.to_string()).collect()
}

fn alpha_errors(patch: Value) -> Vec<String> {
    let mut cloneset: v1alpha1::CloneSet = serde_json::from_value(patched(base_v1alpha1(), patch)).unwrap();
    default_cloneset_v1alpha1(&mut cloneset, true);
    validate_cloneset_v1alpha1(&cloneset, None).iter().map(|e| e.path.to_string()).collect()
}

#[test]
fn the_base_objects_are_valid() {
    assert_eq!(beta_errors(json!({})), Vec::<String>::new());
    assert_eq!(alpha_errors(json!({})), Vec::<String>::new());
}

#[test]
fn each_v1beta1_rule_names_its_field() {
    let ru = "spec.updateStrategy.rollingUpdate";
    let cases: Vec<(&str, Value, Vec<String>)> = vec![
        (
            "name must be a DNS subdomain",
            json!({"metadata": {"name": "Web_1"}}),
            vec!["metadata.name".into()],
        ),
        ("replicas non-negative", json!({"spec": {"replicas": -1}}), vec!["spec.replicas".into()]),
        ("selector required", json!({"spec": {"selector": null}}), vec!["spec.selector".into()]),
        (
            "selector operator",
            json!({"spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Is", "values": ["web"]}]}}}),
            vec!["spec.selector.matchExpressions[0].operator".into(), "spec.template.metadata.labels".into()],
        ),
        (
            "selector non-empty",
            json!({"spec": {"selector": {"matchLabels": null}}}),
            vec!["spec.selector".into()],
        ),
        (
            "selector matches template",
            json!({"spec": {"selector": {"matchLabels": {"app": "api"}}}}),
            vec!["spec.template.metadata.labels".into()],
        ),
        (
            "template valid",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": ""}]}}}}),
            vec!["spec.template.spec.containers[0].image".into()],
        ),
        (
            "restartPolicy Always",
            json!({"spec": {"template": {"spec": {"restartPolicy": "Never"}}}}),
            vec!["spec.template.spec.restartPolicy".into()],
        ),
        (
            "no activeDeadlineSeconds",
            json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 10}}}}),
            vec!["spec.template.spec.activeDeadlineSeconds".into()],
        ),
        (
            "podsToDelete unique",
            json!({"spec": {"scaleStrategy": {"podsToDelete": ["a", "a"]}}}),
            vec!["spec.scaleStrategy.podsToDelete".into()],
        ),
        (
            "type enum",
            json!({"spec": {"updateStrategy": {"type": "Rolling"}}}),
            vec!["spec.updateStrategy.type".into()],
        ),
        (
            "podUpdatePolicy enum",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "Hot"}}}}),
            vec![format!("{ru}.podUpdatePolicy")],
        ),
        (
            "partition parses",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": "three"}}}}),
            vec![format!("{ru}.partition")],
        ),
        (
            "partition non-negative",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": -2}}}}),
            vec![format!("{ru}.partition")],
        ),
        (
            "priority: weight or order",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"priorityStrategy": {
                "weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"a": "b"}}}],
                "orderPriority": [{"orderedKey": "k"}]}}}}}),
            vec![format!("{ru}.priorityStrategy")],
        ),
        (
            "priority weight range",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"priorityStrategy": {
                "weightPriority": [{"weight": 101, "matchSelector": {"matchLabels": {"a": "b"}}}]}}}}}),
            vec![format!("{ru}.priorityStrategy.weightPriority[0].weight")],
        ),
        (
            "priority weight selector",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"priorityStrategy": {
                "weightPriority": [{"weight": 10, "matchSelector": {}}]}}}}}),
            vec![format!("{ru}.priorityStrategy.weightPriority[0].matchSelector")],
        ),
        (
            "priority order key",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"priorityStrategy": {"orderPriority": [{"orderedKey": ""}]}}}}}),
            vec![format!("{ru}.priorityStrategy.orderPriority[0].orderedKey")],
        ),
        (
            "scatter key",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"scatterStrategy": [{"key": "", "value": "x"}]}}}}),
            vec![format!("{ru}.scatterStrategy[0].key")],
        ),
        (
            "scatter duplicate",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"scatterStrategy": [
                {"key": "zone", "value": "a"}, {"key": "zone", "value": "a"}]}}}}),
            vec![format!("{ru}.scatterStrategy[1]")],
        ),
        (
            "maxUnavailable parses",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "some", "maxSurge": 1}}}}),
            vec![format!("{ru}.maxUnavailable")],
        ),
        (
            "maxSurge parses",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxSurge": "lots"}}}}),
            vec![format!("{ru}.maxSurge")],
        ),
        (
            "no maxSurge with InPlaceOnly",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly", "maxSurge": 1}}}}),
            vec![format!("{ru}.maxSurge")],
        ),
        (
            "maxUnavailable and maxSurge not both zero",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}}}),
            vec![format!("{ru}.maxUnavailable")],
        ),
        (
            "pre-download parallelism not a percentage",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"inPlaceUpdateStrategy": {"imagePreDownloadParallelism": "50%"}}}}}),
            vec![format!("{ru}.inPlaceUpdateStrategy.imagePreDownloadParallelism")],
        ),
        (
            "pre-download parallelism non-negative",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"inPlaceUpdateStrategy": {"imagePreDownloadParallelism": -1}}}}}),
            vec![format!("{ru}.inPlaceUpdateStrategy.imagePreDownloadParallelism")],
        ),
        (
            "pre-download timeout non-negative",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"inPlaceUpdateStrategy": {"imagePreDownloadTimeoutSeconds": -1}}}}}),
            vec![format!("{ru}.inPlaceUpdateStrategy.imagePreDownloadTimeoutSeconds")],
        ),
        (
            "pre-download min ready non-negative",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"inPlaceUpdateStrategy": {"imagePreDownloadMinUpdatedReadyPods": -3}}}}}),
            vec![format!("{ru}.inPlaceUpdateStrategy.imagePreDownloadMinUpdatedReadyPods")],
        ),
    ];
    for (rule, patch, expected) in cases {
        assert_eq!(beta_errors(patch), expected, "rule: {rule}");
    }
}

#[test]
fn each_v1alpha1_only_rule_names_its_field() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "type enum",
            json!({"spec": {"updateStrategy": {"type": "RollingUpdate"}}}),
            vec!["spec.updateStrategy.type"],
        ),
        (
            "partition at the flat path",
            json!({"spec": {"updateStrategy": {"partition": "x%"}}}),
            vec!["spec.updateStrategy.partition"],
        ),
        (
            "progressDeadlineSeconds beyond minReadySeconds",
            json!({"spec": {"minReadySeconds": 30, "progressDeadlineSeconds": 20}}),
            vec!["spec.progressDeadlineSeconds"],
        ),
        (
            "progressDeadlineSeconds non-negative",
            json!({"spec": {"progressDeadlineSeconds": -5}}),
            vec!["spec.progressDeadlineSeconds", "spec.progressDeadlineSeconds"],
        ),
    ];
    for (rule, patch, expected) in cases {
        assert_eq!(alpha_errors(patch), expected, "rule: {rule}");
    }
}

#[test]
fn updates_keep_the_selector_and_in_place_only_allows_image_changes_only() {
    let old: v1beta1::CloneSet = serde_json::from_value(patched(
        base_v1beta1(),
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}}}}),
    ))
    .unwrap();

    let mut image_only = old.clone();
    image_only.spec.template.spec.as_mut().unwrap().containers[0].image = Some("nginx:1.26".into());
    image_only.spec.replicas = Some(9);
    assert!(validate_cloneset_v1beta1(&image_only, Some(&old)).is_empty());

    let mut env_change = old.clone();
    env_change.spec.template.spec.as_mut().unwrap().containers[0].env =
        Some(vec![k8s_openapi::api::core::v1::EnvVar {
            name: "A".into(),
            value: Some("1".into()),
            ..Default::default()
        }]);
    let errors = validate_cloneset_v1beta1(&env_change, Some(&old));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].to_string().contains("only allowed to update images"), "{}", errors[0]);

    let mut selector_change = old.clone();
    selector_change.spec.selector.as_mut().unwrap().match_labels =
        Some([("app".to_string(), "web".to_string()), ("tier".to_string(), "x".to_string())].into());
    selector_change.spec.template.metadata.as_mut().unwrap().labels =
        Some([("app".to_string(), "web".to_string()), ("tier".to_string(), "x".to_string())].into());
    let errors = validate_cloneset_v1beta1(&selector_change, Some(&old));
    assert_eq!(errors.iter().map(|e| e.path.to_string()).collect::<Vec<_>>(), ["spec"]);
}
