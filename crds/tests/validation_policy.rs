//! Validation and defaults of ResourceDistribution, WorkloadSpread, PersistentPodState and
//! PodUnavailableBudget (INVENTORY sections of each kind and d.4; upstream validating webhooks
//! under `pkg/webhook/<kind>/validating`). Each case changes one thing in a valid object with a
//! JSON merge patch and names the fields the errors must point at.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    defaults::{
        default_persistentpodstate_v1alpha1, default_persistentpodstate_v1beta1,
        default_podunavailablebudget_v1alpha1, default_podunavailablebudget_v1beta1,
        default_resourcedistribution_v1alpha1, default_resourcedistribution_v1beta1,
        default_workloadspread_v1alpha1, default_workloadspread_v1beta1,
    },
    field::ErrorList,
    policy,
    validation::{
        validate_persistentpodstate_v1alpha1, validate_persistentpodstate_v1beta1,
        validate_persistentpodstate_v1beta1_with_whitelist, validate_podunavailablebudget_v1alpha1,
        validate_podunavailablebudget_v1beta1, validate_resourcedistribution_v1alpha1,
        validate_resourcedistribution_v1beta1, validate_workloadspread_v1alpha1,
        validate_workloadspread_v1beta1, validate_workloadspread_v1beta1_with_whitelist,
    },
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

fn patched(base: &Value, patch: &Value) -> Value {
    let mut document = base.clone();
    json_patch::merge(&mut document, patch);
    document
}

fn decode<T: DeserializeOwned>(document: Value) -> T {
    serde_json::from_value(document).expect("test document decodes")
}

/// Decodes `base` patched with `patch`, applies the defaults and returns the error paths.
fn paths_of<T: DeserializeOwned>(
    base: &Value,
    patch: &Value,
    default: fn(&mut T),
    validate: fn(&T, Option<&T>) -> ErrorList,
) -> Vec<String> {
    let mut object: T = decode(patched(base, patch));
    default(&mut object);
    validate(&object, None).iter().map(|error| error.path.to_string()).collect()
}

/// The error paths of an update from `base` + `old_patch` to `base` + `new_patch`.
fn update_paths_of<T: DeserializeOwned>(
    base: &Value,
    old_patch: &Value,
    new_patch: &Value,
    validate: fn(&T, Option<&T>) -> ErrorList,
) -> Vec<String> {
    let old: T = decode(patched(base, old_patch));
    let new: T = decode(patched(base, new_patch));
    validate(&new, Some(&old)).iter().map(|error| error.path.to_string()).collect()
}

/// Runs every case and reports all mismatches at once.
fn check_cases<T: DeserializeOwned>(
    base: &Value,
    default: fn(&mut T),
    validate: fn(&T, Option<&T>) -> ErrorList,
    cases: Vec<(&str, Value, Vec<&str>)>,
) {
    let mut failures = Vec::new();
    for (rule, patch, expected) in cases {
        let actual = paths_of(base, &patch, default, validate);
        if actual != expected {
            failures.push(format!("rule {rule:?}: expected {expected:?}, got {actual:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Defaulting an object leaves it exactly as it was (none of these kinds has upstream defaults).
fn assert_defaults_fill_nothing<T: DeserializeOwned + Serialize>(document: Value, default: fn(&mut T)) {
    let mut object: T = decode(document);
    let before = serde_json::to_value(&object).expect("encodes");
    default(&mut object);
    assert_eq!(serde_json::to_value(&object).expect("encodes"), before);
}

// ---------------------------------------------------------------------------------------------
// ResourceDistribution

fn rd_v1beta1() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "ResourceDistribution",
        "metadata": {"name": "shared-config"},
        "spec": {
            "resource": {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "game-config", "labels": {"team": "games"}},
                "data": {"game.properties": "lives=3"}
            },
            "targets": {
                "includedNamespaces": {"list": [{"name": "ns-1"}, {"name": "ns-3"}]},
                "excludedNamespaces": {"list": [{"name": "ns-2"}]},
                "namespaceSelector": {"matchLabels": {"group": "one"}}
            }
        }
    })
}

fn rd_v1alpha1() -> Value {
    let mut base = rd_v1beta1();
    base["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    let selector = base["spec"]["targets"]["namespaceSelector"].take();
    let targets = base["spec"]["targets"].as_object_mut().expect("targets object");
    targets.remove("namespaceSelector");
    targets.insert("namespaceLabelSelector".into(), selector);
    base
}

/// A patch turning the distributed ConfigMap into a Secret with the given type and members.
fn secret(type_: &str, members: Value) -> Value {
    let mut resource = json!({"kind": "Secret", "type": type_, "data": {"game.properties": null}});
    json_patch::merge(&mut resource, &members);
    json!({"spec": {"resource": resource}})
}

#[test]
fn resourcedistribution_base_objects_are_valid() {
    assert_eq!(
        paths_of(
            &rd_v1beta1(),
            &json!({}),
            default_resourcedistribution_v1beta1,
            validate_resourcedistribution_v1beta1
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        paths_of(
            &rd_v1alpha1(),
            &json!({}),
            default_resourcedistribution_v1alpha1,
            validate_resourcedistribution_v1alpha1
        ),
        Vec::<String>::new()
    );
}

#[test]
fn each_resourcedistribution_rule_names_its_field() {
    let big = "x".repeat(1024 * 1024 + 1);
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("name is a DNS subdomain", json!({"metadata": {"name": "Shared_Config"}}), vec!["metadata.name"]),
        ("cluster scoped", json!({"metadata": {"namespace": "default"}}), vec!["metadata.namespace"]),
        ("resource required", json!({"spec": {"resource": null}}), vec!["spec.resource"]),
        ("resource is an object", json!({"spec": {"resource": "game-config"}}), vec!["spec.resource"]),
        ("kind required", json!({"spec": {"resource": {"kind": null}}}), vec!["spec.resource.kind"]),
        (
            "kind is Secret or ConfigMap",
            json!({"spec": {"resource": {"kind": "Pod"}}}),
            vec!["spec.resource.kind"],
        ),
        ("kind is a string", json!({"spec": {"resource": {"kind": 3}}}), vec!["spec.resource.kind"]),
        (
            "apiVersion required",
            json!({"spec": {"resource": {"apiVersion": null}}}),
            vec!["spec.resource.apiVersion"],
        ),
        (
            "apiVersion is v1",
            json!({"spec": {"resource": {"apiVersion": "apps/v1"}}}),
            vec!["spec.resource.apiVersion"],
        ),
        (
            "resource name required",
            json!({"spec": {"resource": {"metadata": {"name": null}}}}),
            vec!["spec.resource.metadata.name"],
        ),
        (
            "resource name is a DNS subdomain",
            json!({"spec": {"resource": {"metadata": {"name": "Game_Config"}}}}),
            vec!["spec.resource.metadata.name"],
        ),
        (
            "resource labels valid",
            json!({"spec": {"resource": {"metadata": {"labels": {"bad key!": "x"}}}}}),
            vec!["spec.resource.metadata.labels"],
        ),
        (
            "resource metadata decodes",
            json!({"spec": {"resource": {"metadata": "game-config"}}}),
            vec!["spec.resource.metadata"],
        ),
        (
            "configmap data decodes",
            json!({"spec": {"resource": {"data": {"lives": 3}}}}),
            vec!["spec.resource"],
        ),
        (
            "configmap keys valid",
            json!({"spec": {"resource": {"data": {"bad key": "x"}}}}),
            vec!["spec.resource.data[bad key]"],
        ),
        (
            "configmap binaryData keys valid",
            json!({"spec": {"resource": {"binaryData": {"..x": "eA=="}}}}),
            vec!["spec.resource.binaryData[..x]"],
        ),
        (
            "configmap key not in data and binaryData",
            json!({"spec": {"resource": {"binaryData": {"game.properties": "eA=="}}}}),
            vec!["spec.resource.data[game.properties]"],
        ),
        ("configmap size", json!({"spec": {"resource": {"data": {"big": big}}}}), vec!["spec.resource.data"]),
        ("opaque secret is fine", secret("Opaque", json!({"data": {"token": "eA=="}})), vec![]),
        ("secret data is base64", secret("Opaque", json!({"data": {"token": "!!!"}})), vec!["spec.resource"]),
        (
            "secret stringData keys valid",
            secret("Opaque", json!({"stringData": {"bad key": "x"}})),
            vec!["spec.resource.stringData[bad key]"],
        ),
        (
            "tls secret needs key and certificate",
            secret("kubernetes.io/tls", json!({"data": {"tls.crt": "eA=="}})),
            vec!["spec.resource.data[tls.key]"],
        ),
        (
            "basic-auth secret needs username or password",
            secret("kubernetes.io/basic-auth", json!({})),
            vec!["spec.resource.data[username]", "spec.resource.data[password]"],
        ),
        (
            "basic-auth secret through stringData",
            secret("kubernetes.io/basic-auth", json!({"stringData": {"username": "admin"}})),
            vec![],
        ),
        (
            "ssh-auth secret needs a private key",
            secret("kubernetes.io/ssh-auth", json!({})),
            vec!["spec.resource.data[ssh-privatekey]"],
        ),
        (
            "dockercfg secret needs its key",
            secret("kubernetes.io/dockercfg", json!({})),
            vec!["spec.resource.data[.dockercfg]"],
        ),
        (
            "dockerconfigjson secret holds JSON",
            secret(
                "kubernetes.io/dockerconfigjson",
                json!({"stringData": {".dockerconfigjson": "{not json"}}),
            ),
            vec!["spec.resource.data[.dockerconfigjson]"],
        ),
        (
            "service account token secret names its account",
            secret("kubernetes.io/service-account-token", json!({})),
            vec!["spec.resource.metadata.annotations[kubernetes.io/service-account.name]"],
        ),
        (
            "included namespace names valid",
            json!({"spec": {"targets": {"includedNamespaces": {"list": [{"name": "ns-1"}, {"name": "NS_4"}]}}}}),
            vec!["spec.targets.includedNamespaces.list[1].name"],
        ),
        (
            "included namespace name required",
            json!({"spec": {"targets": {"includedNamespaces": {"list": [{}]}}}}),
            vec!["spec.targets.includedNamespaces.list[0].name"],
        ),
        (
            "excluded namespace names valid",
            json!({"spec": {"targets": {"excludedNamespaces": {"list": [{"name": "ns.2"}]}}}}),
            vec!["spec.targets.excludedNamespaces.list[0].name"],
        ),
        (
            "no namespace both included and excluded",
            json!({"spec": {"targets": {"excludedNamespaces": {"list": [{"name": "ns-2"}, {"name": "ns-3"}]}}}}),
            vec!["spec.targets.excludedNamespaces.list[1].name"],
        ),
        (
            "namespace selector valid",
            json!({"spec": {"targets": {"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "Is"}]}}}}),
            vec!["spec.targets.namespaceSelector.matchExpressions[0].operator"],
        ),
    ];
    check_cases(
        &rd_v1beta1(),
        default_resourcedistribution_v1beta1,
        validate_resourcedistribution_v1beta1,
        cases,
    );
}

#[test]
fn resourcedistribution_v1alpha1_reports_its_own_selector_name() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "namespace label selector valid",
            json!({"spec": {"targets": {"namespaceLabelSelector": {"matchLabels": {"bad key!": "x"}}}}}),
            vec!["spec.targets.namespaceLabelSelector.matchLabels"],
        ),
        ("resource kind", json!({"spec": {"resource": {"kind": "Service"}}}), vec!["spec.resource.kind"]),
    ];
    check_cases(
        &rd_v1alpha1(),
        default_resourcedistribution_v1alpha1,
        validate_resourcedistribution_v1alpha1,
        cases,
    );
}

#[test]
fn resourcedistribution_resource_identity_is_immutable() {
    let base = rd_v1beta1();
    let unchanged = json!({});
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("data may change", json!({"spec": {"resource": {"data": {"game.properties": "lives=5"}}}}), vec![]),
        ("targets may change", json!({"spec": {"targets": {"allNamespaces": true}}}), vec![]),
        (
            "name is fixed",
            json!({"spec": {"resource": {"metadata": {"name": "other"}}}}),
            vec!["spec.resource"],
        ),
        (
            "kind is fixed",
            json!({"spec": {"resource": {"kind": "Secret", "data": {"game.properties": "eA=="}}}}),
            vec!["spec.resource"],
        ),
    ];
    for (rule, patch, expected) in cases {
        let actual = update_paths_of(&base, &unchanged, &patch, validate_resourcedistribution_v1beta1);
        assert_eq!(actual, expected, "rule: {rule}");
    }
    let alpha = update_paths_of(
        &rd_v1alpha1(),
        &unchanged,
        &json!({"spec": {"resource": {"metadata": {"name": "other"}}}}),
        validate_resourcedistribution_v1alpha1,
    );
    assert_eq!(alpha, ["spec.resource"]);
}

#[test]
fn resourcedistribution_has_no_defaults() {
    assert_defaults_fill_nothing(json!({}), default_resourcedistribution_v1beta1);
    assert_defaults_fill_nothing(json!({}), default_resourcedistribution_v1alpha1);
    assert_defaults_fill_nothing(rd_v1beta1(), default_resourcedistribution_v1beta1);
    assert_defaults_fill_nothing(rd_v1alpha1(), default_resourcedistribution_v1alpha1);
}

// ---------------------------------------------------------------------------------------------
// WorkloadSpread

fn ws_subset_a() -> Value {
    json!({
        "name": "zone-a",
        "requiredNodeSelector": {
            "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]
        },
        "preferredNodeSelector": [{
            "weight": 50,
            "preference": {"matchExpressions": [{"key": "node-type", "operator": "In", "values": ["spot"]}]}
        }],
        "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
        "maxReplicas": "60%",
        "patch": {"metadata": {"labels": {"zone": "a"}}}
    })
}

fn ws_v1beta1() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "WorkloadSpread",
        "metadata": {"name": "web-spread", "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "subsets": [ws_subset_a(), {"name": "zone-b"}],
            "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}},
            "targetFilter": {"selector": {"matchLabels": {"role": "worker"}}, "replicasPathList": ["spec.replicas"]}
        }
    })
}

fn ws_v1alpha1() -> Value {
    let mut base = ws_v1beta1();
    base["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    let subset = base["spec"]["subsets"][0].as_object_mut().expect("subset object");
    let required = subset.remove("requiredNodeSelector").expect("required term");
    let preferred = subset.remove("preferredNodeSelector").expect("preferred terms");
    subset.insert("requiredNodeSelectorTerm".into(), required);
    subset.insert("preferredNodeSelectorTerms".into(), preferred);
    base
}

/// Subset A with `changes` merged in, followed by `rest`.
fn subsets(changes: Value, rest: Value) -> Value {
    let mut first = ws_subset_a();
    json_patch::merge(&mut first, &changes);
    let mut all = vec![first];
    all.extend(rest.as_array().cloned().unwrap_or_default());
    json!({"spec": {"subsets": all}})
}

/// The second subset of the base object, unbounded.
fn zone_b() -> Value {
    json!([{"name": "zone-b"}])
}

/// Subset A with exactly `patch` as its patch (nulls kept: they are strategic merge deletions).
fn with_patch(patch: Value) -> Value {
    let mut first = ws_subset_a();
    first["patch"] = patch;
    json!({"spec": {"subsets": [first, {"name": "zone-b"}]}})
}

/// Fixed strategy (no Adaptive constraints) with the given subsets.
fn fixed_with(subsets: Value) -> Value {
    json!({"spec": {"scheduleStrategy": {"type": "Fixed", "adaptive": null}, "subsets": subsets}})
}

#[test]
fn workloadspread_base_objects_are_valid() {
    assert_eq!(
        paths_of(&ws_v1beta1(), &json!({}), default_workloadspread_v1beta1, validate_workloadspread_v1beta1),
        Vec::<String>::new()
    );
    assert_eq!(
        paths_of(
            &ws_v1alpha1(),
            &json!({}),
            default_workloadspread_v1alpha1,
            validate_workloadspread_v1alpha1
        ),
        Vec::<String>::new()
    );
}

#[test]
fn each_workloadspread_rule_names_its_field() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("name is a DNS subdomain", json!({"metadata": {"name": "Web_Spread"}}), vec!["metadata.name"]),
        ("targetRef required", json!({"spec": {"targetRef": null}}), vec!["spec.targetRef"]),
        (
            "targetRef name required",
            json!({"spec": {"targetRef": {"name": ""}}}),
            vec!["spec.targetRef.name"],
        ),
        (
            "targetRef kind supported",
            json!({"spec": {"targetRef": {"apiVersion": "example.com/v1", "kind": "GameServerSet"}}}),
            vec!["spec.targetRef.kind"],
        ),
        (
            "targetRef group matches kind",
            json!({"spec": {"targetRef": {"apiVersion": "apps/v1"}}}),
            vec!["spec.targetRef.apiVersion"],
        ),
        (
            "targetRef apiVersion parses",
            json!({"spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1/x"}}}),
            vec!["spec.targetRef.apiVersion"],
        ),
        (
            "deployments, replicasets, jobs and statefulsets are supported",
            json!({"spec": {"targetRef": {"apiVersion": "batch/v1", "kind": "Job"}}}),
            vec![],
        ),
        ("at least one subset", json!({"spec": {"subsets": []}}), vec!["spec.subsets"]),
        ("subset name required", subsets(json!({}), json!([{"name": ""}])), vec!["spec.subsets[1].name"]),
        (
            "subset names unique",
            subsets(json!({}), json!([{"name": "zone-a"}])),
            vec!["spec.subsets[1].name"],
        ),
        (
            "required term operator",
            subsets(
                json!({"requiredNodeSelector": {"matchExpressions": [{"key": "zone", "operator": "Is"}]}}),
                zone_b(),
            ),
            vec!["spec.subsets[0].requiredNodeSelector.matchExpressions[0].operator"],
        ),
        (
            "required term In needs values",
            subsets(
                json!({"requiredNodeSelector": {"matchExpressions": [{"key": "zone", "operator": "In"}]}}),
                zone_b(),
            ),
            vec!["spec.subsets[0].requiredNodeSelector.matchExpressions[0].values"],
        ),
        (
            "required term key is a label name",
            subsets(
                json!({"requiredNodeSelector": {"matchExpressions": [{"key": "bad key", "operator": "Exists"}]}}),
                zone_b(),
            ),
            vec!["spec.subsets[0].requiredNodeSelector.matchExpressions[0].key"],
        ),
        (
            "required term field key",
            subsets(
                json!({"requiredNodeSelector": {"matchFields": [{"key": "spec.nodeName", "operator": "In", "values": ["n1"]}]}}),
                zone_b(),
            ),
            vec!["spec.subsets[0].requiredNodeSelector.matchFields[0].key"],
        ),
        (
            "preferred weight 1-100",
            subsets(
                json!({"preferredNodeSelector": [{"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}]}),
                zone_b(),
            ),
            vec!["spec.subsets[0].preferredNodeSelector[0].weight"],
        ),
        (
            "preferred term valid",
            subsets(
                json!({"preferredNodeSelector": [{"weight": 10, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}}]}),
                zone_b(),
            ),
            vec!["spec.subsets[0].preferredNodeSelector[0].preference.matchExpressions[0].values"],
        ),
        (
            "toleration without key must be Exists",
            subsets(json!({"tolerations": [{"operator": "Equal", "value": "x"}]}), zone_b()),
            vec!["spec.subsets[0].tolerations[0].operator"],
        ),
        (
            "toleration seconds need NoExecute",
            subsets(
                json!({"tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 30}]}),
                zone_b(),
            ),
            vec!["spec.subsets[0].tolerations[0].effect"],
        ),
        (
            "toleration Exists has no value",
            subsets(json!({"tolerations": [{"key": "spot", "operator": "Exists", "value": "x"}]}), zone_b()),
            vec!["spec.subsets[0].tolerations[0].value"],
        ),
        (
            "toleration operator supported",
            subsets(json!({"tolerations": [{"key": "spot", "operator": "In"}]}), zone_b()),
            vec!["spec.subsets[0].tolerations[0].operator"],
        ),
        (
            "toleration effect supported",
            subsets(
                json!({"tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoRun"}]}),
                zone_b(),
            ),
            vec!["spec.subsets[0].tolerations[0].effect"],
        ),
        (
            "toleration key is a label name",
            subsets(json!({"tolerations": [{"key": "bad key", "operator": "Exists"}]}), zone_b()),
            vec!["spec.subsets[0].tolerations[0].key"],
        ),
        ("patch is an object", subsets(json!({"patch": "zone=a"}), zone_b()), vec!["spec.subsets[0].patch"]),
        (
            "patch has a pod's shape",
            subsets(json!({"patch": {"spec": {"containers": "main"}}}), zone_b()),
            vec!["spec.subsets[0].patch"],
        ),
        (
            "patch directives and deletions are fine",
            with_patch(json!({
                "metadata": {"labels": {"zone": null}},
                "spec": {
                    "containers": [{"name": "main", "resources": {"limits": {"cpu": "1"}}}, {"$patch": "replace"}],
                    "$setElementOrder/containers": [{"name": "main"}]
                }
            })),
            vec![],
        ),
        (
            "maxReplicas of one type",
            subsets(json!({}), json!([{"name": "zone-b", "maxReplicas": 3}, {"name": "zone-c"}])),
            vec!["spec.subsets[1].maxReplicas"],
        ),
        (
            "maxReplicas non-negative",
            subsets(json!({"maxReplicas": -1}), json!([{"name": "zone-b"}])),
            vec!["spec.subsets[0].maxReplicas"],
        ),
        (
            "maxReplicas percentage is an integer percentage",
            subsets(json!({"maxReplicas": "12.5%"}), json!([{"name": "zone-b"}])),
            vec!["spec.subsets[0].maxReplicas"],
        ),
        (
            "maxReplicas string is a percentage",
            subsets(json!({"maxReplicas": "3"}), json!([{"name": "zone-b"}])),
            vec!["spec.subsets[0].maxReplicas"],
        ),
        (
            "percentages add up to at most 100%",
            subsets(json!({}), json!([{"name": "zone-b", "maxReplicas": "50%"}, {"name": "zone-c"}])),
            vec!["spec.subsets[1].maxReplicas"],
        ),
        (
            "percentages on every subset add up to 100%",
            fixed_with(json!([ws_subset_a(), {"name": "zone-b", "maxReplicas": "30%"}])),
            vec!["spec.subsets[0].maxReplicas"],
        ),
        (
            "percentages on every subset may add up to exactly 100%",
            fixed_with(json!([ws_subset_a(), {"name": "zone-b", "maxReplicas": "40%"}])),
            vec![],
        ),
        (
            "integers need not add up to anything",
            fixed_with(json!([{"name": "zone-a", "maxReplicas": 3}, {"name": "zone-b", "maxReplicas": 4}])),
            vec![],
        ),
        (
            "StatefulSet targets need integer maxReplicas",
            json!({"spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet"}}}),
            vec!["spec.subsets[0].maxReplicas"],
        ),
        (
            "schedule strategy type supported",
            json!({"spec": {"scheduleStrategy": {"type": "Random", "adaptive": null}}}),
            vec!["spec.scheduleStrategy.type"],
        ),
        (
            "adaptive parameters need the Adaptive type",
            json!({"spec": {"scheduleStrategy": {"type": "Fixed"}}}),
            vec!["spec.scheduleStrategy.type"],
        ),
        (
            "Adaptive leaves the last subset unbounded",
            subsets(json!({}), json!([{"name": "zone-b", "maxReplicas": "40%"}])),
            vec!["spec.subsets[1].maxReplicas"],
        ),
        (
            "rescheduleCriticalSeconds bounded by the subset count",
            json!({"spec": {"scheduleStrategy": {"adaptive": {"rescheduleCriticalSeconds": 296}}}}),
            vec!["spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds"],
        ),
        (
            "rescheduleCriticalSeconds at the bound",
            json!({"spec": {"scheduleStrategy": {"adaptive": {"rescheduleCriticalSeconds": 295}}}}),
            vec![],
        ),
        (
            "rescheduleCriticalSeconds non-negative",
            json!({"spec": {"scheduleStrategy": {"adaptive": {"rescheduleCriticalSeconds": -1}}}}),
            vec!["spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds"],
        ),
        (
            "target filter selector valid",
            json!({"spec": {"targetFilter": {"selector": {"matchExpressions": [{"key": "role", "operator": "Is"}]}}}}),
            vec!["spec.targetFilter.selector.matchExpressions[0].operator"],
        ),
    ];
    check_cases(&ws_v1beta1(), default_workloadspread_v1beta1, validate_workloadspread_v1beta1, cases);
}

#[test]
fn workloadspread_v1alpha1_reports_its_own_subset_field_names() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "required term",
            json!({"spec": {"subsets": [{"name": "a", "requiredNodeSelectorTerm": {"matchExpressions": [{"key": "z", "operator": "Is"}]}}]}}),
            vec!["spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].operator"],
        ),
        (
            "preferred terms",
            json!({"spec": {"subsets": [{"name": "a", "preferredNodeSelectorTerms": [{"weight": 101, "preference": {}}]}]}}),
            vec!["spec.subsets[0].preferredNodeSelectorTerms[0].weight"],
        ),
        ("subsets required", json!({"spec": {"subsets": []}}), vec!["spec.subsets"]),
    ];
    check_cases(&ws_v1alpha1(), default_workloadspread_v1alpha1, validate_workloadspread_v1alpha1, cases);
}

#[test]
fn workloadspread_custom_workloads_come_from_the_whitelist() {
    let custom = patched(
        &ws_v1beta1(),
        &json!({"spec": {"targetRef": {"apiVersion": "game.kruise.io/v1alpha1", "kind": "GameServerSet"}}}),
    );
    let spread: v1beta1::WorkloadSpread = decode(custom);
    assert_eq!(validate_workloadspread_v1beta1(&spread, None).len(), 1);
    let whitelist = [("game.kruise.io", "GameServerSet")];
    assert!(validate_workloadspread_v1beta1_with_whitelist(&spread, None, &whitelist).is_empty());
    let wrong_group = [("example.com", "GameServerSet")];
    assert_eq!(validate_workloadspread_v1beta1_with_whitelist(&spread, None, &wrong_group).len(), 1);
}

#[test]
fn workloadspread_target_is_immutable() {
    let base = ws_v1beta1();
    let none = json!({});
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("subsets may change", json!({"spec": {"subsets": [ws_subset_a(), {"name": "zone-c"}]}}), vec![]),
        (
            "the version of the target may change",
            json!({"spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1beta1"}}}),
            vec![],
        ),
        ("the name may not", json!({"spec": {"targetRef": {"name": "api"}}}), vec!["spec.targetRef"]),
        (
            "nor the kind",
            json!({"spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment"}}}),
            vec!["spec.targetRef"],
        ),
    ];
    for (rule, patch, expected) in cases {
        assert_eq!(
            update_paths_of(&base, &none, &patch, validate_workloadspread_v1beta1),
            expected,
            "rule: {rule}"
        );
    }
    let alpha = update_paths_of(
        &ws_v1alpha1(),
        &none,
        &json!({"spec": {"targetRef": {"name": "api"}}}),
        validate_workloadspread_v1alpha1,
    );
    assert_eq!(alpha, ["spec.targetRef"]);
}

#[test]
fn workloadspread_has_no_defaults() {
    assert_defaults_fill_nothing(json!({}), default_workloadspread_v1beta1);
    assert_defaults_fill_nothing(json!({}), default_workloadspread_v1alpha1);
    assert_defaults_fill_nothing(ws_v1beta1(), default_workloadspread_v1beta1);
    assert_defaults_fill_nothing(ws_v1alpha1(), default_workloadspread_v1alpha1);
    let mut empty = v1beta1::WorkloadSpread::default();
    default_workloadspread_v1beta1(&mut empty);
    assert!(empty.spec.schedule_strategy.type_.is_unset(), "Fixed is implied, not written");
}

// ---------------------------------------------------------------------------------------------
// PersistentPodState

fn pps_v1beta1() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "PersistentPodState",
        "metadata": {"name": "db-state", "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "db"},
            "requiredPersistentTopology": {"keys": ["kubernetes.io/hostname"]},
            "preferredPersistentTopology": [{"weight": 100, "preference": {"keys": ["topology.kubernetes.io/zone"]}}],
            "persistentPodAnnotations": [{"key": "ip"}],
            "persistentPodStateRetentionPolicy": "WhenDeleted"
        }
    })
}

fn pps_v1alpha1() -> Value {
    let mut base = pps_v1beta1();
    base["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    base["spec"]["requiredPersistentTopology"] = json!({"nodeTopologyKeys": ["kubernetes.io/hostname"]});
    base["spec"]["preferredPersistentTopology"] =
        json!([{"weight": 100, "preference": {"nodeTopologyKeys": ["topology.kubernetes.io/zone"]}}]);
    base
}

#[test]
fn persistentpodstate_base_objects_are_valid() {
    assert_eq!(
        paths_of(
            &pps_v1beta1(),
            &json!({}),
            default_persistentpodstate_v1beta1,
            validate_persistentpodstate_v1beta1
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        paths_of(
            &pps_v1alpha1(),
            &json!({}),
            default_persistentpodstate_v1alpha1,
            validate_persistentpodstate_v1alpha1
        ),
        Vec::<String>::new()
    );
}

#[test]
fn each_persistentpodstate_rule_names_its_field() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("name is a DNS subdomain", json!({"metadata": {"name": "DB"}}), vec!["metadata.name"]),
        (
            "targetRef required",
            json!({"spec": {"targetRef": null}}),
            vec!["spec.targetRef.apiVersion", "spec.targetRef.kind", "spec.targetRef.name"],
        ),
        (
            "targetRef name required",
            json!({"spec": {"targetRef": {"name": ""}}}),
            vec!["spec.targetRef.name"],
        ),
        (
            "apps/v1 StatefulSets are supported",
            json!({"spec": {"targetRef": {"apiVersion": "apps/v1"}}}),
            vec![],
        ),
        (
            "only StatefulSets",
            json!({"spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment"}}}),
            vec!["spec.targetRef.kind"],
        ),
        (
            "StatefulSets of the apps groups only",
            json!({"spec": {"targetRef": {"apiVersion": "example.com/v1"}}}),
            vec!["spec.targetRef.apiVersion"],
        ),
        (
            "apiVersion parses",
            json!({"spec": {"targetRef": {"apiVersion": "apps/v1/beta"}}}),
            vec!["spec.targetRef.apiVersion"],
        ),
        (
            "some topology required",
            json!({"spec": {"requiredPersistentTopology": null, "preferredPersistentTopology": []}}),
            vec!["spec.requiredPersistentTopology"],
        ),
        ("required topology alone is enough", json!({"spec": {"preferredPersistentTopology": []}}), vec![]),
        ("preferred topology alone is enough", json!({"spec": {"requiredPersistentTopology": null}}), vec![]),
        (
            "preferred weight non-negative",
            json!({"spec": {"preferredPersistentTopology": [{"weight": -1, "preference": {"keys": ["a"]}}]}}),
            vec!["spec.preferredPersistentTopology[0].weight"],
        ),
        (
            "retention policy supported",
            json!({"spec": {"persistentPodStateRetentionPolicy": "Never"}}),
            vec!["spec.persistentPodStateRetentionPolicy"],
        ),
    ];
    check_cases(
        &pps_v1beta1(),
        default_persistentpodstate_v1beta1,
        validate_persistentpodstate_v1beta1,
        cases,
    );
}

#[test]
fn each_persistentpodstate_v1alpha1_rule_names_its_field() {
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "some topology required",
            json!({"spec": {"requiredPersistentTopology": null, "preferredPersistentTopology": []}}),
            vec!["spec.requiredPersistentTopology"],
        ),
        (
            "only StatefulSets",
            json!({"spec": {"targetRef": {"kind": "CloneSet"}}}),
            vec!["spec.targetRef.kind"],
        ),
        (
            "retention policy is open in v1alpha1",
            json!({"spec": {"persistentPodStateRetentionPolicy": "Never"}}),
            vec![],
        ),
    ];
    check_cases(
        &pps_v1alpha1(),
        default_persistentpodstate_v1alpha1,
        validate_persistentpodstate_v1alpha1,
        cases,
    );
}

#[test]
fn persistentpodstate_whitelist_and_immutable_target() {
    let custom: v1beta1::PersistentPodState = decode(patched(
        &pps_v1beta1(),
        &json!({"spec": {"targetRef": {"apiVersion": "game.kruise.io/v1alpha1", "kind": "GameServerSet"}}}),
    ));
    assert_eq!(validate_persistentpodstate_v1beta1(&custom, None).len(), 1);
    assert!(
        validate_persistentpodstate_v1beta1_with_whitelist(
            &custom,
            None,
            &[("game.kruise.io", "GameServerSet")]
        )
        .is_empty()
    );

    let none = json!({});
    let renamed = json!({"spec": {"targetRef": {"name": "other"}}});
    let topology = json!({"spec": {"preferredPersistentTopology": []}});
    assert_eq!(
        update_paths_of(&pps_v1beta1(), &none, &renamed, validate_persistentpodstate_v1beta1),
        ["spec.targetRef"]
    );
    assert!(
        update_paths_of(&pps_v1beta1(), &none, &topology, validate_persistentpodstate_v1beta1).is_empty()
    );
    assert_eq!(
        update_paths_of(&pps_v1alpha1(), &none, &renamed, validate_persistentpodstate_v1alpha1),
        ["spec.targetRef"]
    );
}

#[test]
fn persistentpodstate_has_no_defaults() {
    assert_defaults_fill_nothing(json!({}), default_persistentpodstate_v1beta1);
    assert_defaults_fill_nothing(json!({}), default_persistentpodstate_v1alpha1);
    assert_defaults_fill_nothing(pps_v1beta1(), default_persistentpodstate_v1beta1);
    assert_defaults_fill_nothing(pps_v1alpha1(), default_persistentpodstate_v1alpha1);
    let mut empty = v1alpha1::PersistentPodState::default();
    default_persistentpodstate_v1alpha1(&mut empty);
    assert!(
        empty.spec.persistent_pod_state_retention_policy.is_unset(),
        "WhenScaled is implied, not written"
    );
}

// ---------------------------------------------------------------------------------------------
// PodUnavailableBudget

fn pub_v1beta1() -> Value {
    json!({
        "apiVersion": "policy.kruise.io/v1beta1",
        "kind": "PodUnavailableBudget",
        "metadata": {
            "name": "web-pub",
            "namespace": "default",
            "annotations": {"pub.kruise.io/protect-total-replicas": "10"}
        },
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "maxUnavailable": "25%",
            "protectOperations": ["DELETE", "EVICT", "UPDATE", "RESIZE"],
            "protectTotalReplicas": 10,
            "ignoredPodSelector": {"matchLabels": {"canary": "true"}}
        }
    })
}

fn pub_v1alpha1() -> Value {
    json!({
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": {
            "name": "web-pub",
            "namespace": "default",
            "annotations": {
                "kruise.io/pub-protect-operations": "DELETE, EVICT",
                "pub.kruise.io/protect-total-replicas": "10"
            }
        },
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "minAvailable": 2
        }
    })
}

/// The shared spec rules, written against either version (v1alpha1 base uses targetRef).
fn pub_shared_cases(with_selector: bool) -> Vec<(&'static str, Value, Vec<&'static str>)> {
    let (remove_pods, other_pods) = if with_selector {
        (
            json!({"selector": null}),
            json!({"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}),
        )
    } else {
        (json!({"targetRef": null}), json!({"selector": {"matchLabels": {"app": "web"}}}))
    };
    let (remove_number, other_number) = if with_selector {
        (json!({"maxUnavailable": null}), json!({"minAvailable": 1}))
    } else {
        (json!({"minAvailable": null}), json!({"maxUnavailable": 1}))
    };
    let number = if with_selector { "maxUnavailable" } else { "minAvailable" };
    let as_spec = |inner: Value| json!({"spec": inner});
    vec![
        ("name is a DNS subdomain", json!({"metadata": {"name": "Web.PUB"}}), vec!["metadata.name"]),
        ("selector or targetRef required", as_spec(remove_pods), vec!["spec.selector"]),
        ("selector and targetRef exclusive", as_spec(other_pods), vec!["spec.selector"]),
        (
            "targetRef complete",
            as_spec(
                json!({"selector": null, "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": null}}),
            ),
            vec!["spec.targetRef.name"],
        ),
        (
            "targetRef apiVersion parses",
            as_spec(
                json!({"selector": null, "targetRef": {"apiVersion": "a/b/c", "kind": "Deployment", "name": "w"}}),
            ),
            vec!["spec.targetRef.apiVersion"],
        ),
        (
            "selector not empty",
            as_spec(json!({"targetRef": null, "selector": {"matchLabels": null, "matchExpressions": []}})),
            vec!["spec.selector"],
        ),
        (
            "selector valid",
            as_spec(
                json!({"targetRef": null, "selector": {"matchExpressions": [{"key": "app", "operator": "Is"}]}}),
            ),
            vec!["spec.selector.matchExpressions[0].operator"],
        ),
        ("maxUnavailable or minAvailable required", as_spec(remove_number), vec!["spec.maxUnavailable"]),
        ("maxUnavailable and minAvailable exclusive", as_spec(other_number), vec!["spec.minAvailable"]),
        (
            "count non-negative",
            as_spec(json!({number: -1})),
            vec![if with_selector { "spec.maxUnavailable" } else { "spec.minAvailable" }],
        ),
        (
            "percentage well formed",
            as_spec(json!({number: "12.5%"})),
            vec![if with_selector { "spec.maxUnavailable" } else { "spec.minAvailable" }],
        ),
        (
            "string is a percentage",
            as_spec(json!({number: "five"})),
            vec![if with_selector { "spec.maxUnavailable" } else { "spec.minAvailable" }],
        ),
        (
            "at most 100%",
            as_spec(json!({number: "150%"})),
            vec![if with_selector { "spec.maxUnavailable" } else { "spec.minAvailable" }],
        ),
        ("100% is fine", as_spec(json!({number: "100%"})), vec![]),
    ]
}

#[test]
fn podunavailablebudget_base_objects_are_valid() {
    assert_eq!(
        paths_of(
            &pub_v1beta1(),
            &json!({}),
            default_podunavailablebudget_v1beta1,
            validate_podunavailablebudget_v1beta1
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        paths_of(
            &pub_v1alpha1(),
            &json!({}),
            default_podunavailablebudget_v1alpha1,
            validate_podunavailablebudget_v1alpha1
        ),
        Vec::<String>::new()
    );
}

#[test]
fn each_podunavailablebudget_rule_names_its_field() {
    let replicas_annotation = "metadata.annotations[pub.kruise.io/protect-total-replicas]";
    let mut cases = pub_shared_cases(true);
    cases.extend([
        (
            "protectOperations supported",
            json!({"spec": {"protectOperations": ["DELETE", "KILL"]}}),
            vec!["spec.protectOperations[1]"],
        ),
        (
            "protectTotalReplicas at least 1",
            json!({"metadata": {"annotations": null}, "spec": {"protectTotalReplicas": 0}}),
            vec!["spec.protectTotalReplicas"],
        ),
        (
            "ignoredPodSelector not empty",
            json!({"spec": {"ignoredPodSelector": {"matchLabels": null}}}),
            vec!["spec.ignoredPodSelector"],
        ),
        (
            "ignoredPodSelector valid",
            json!({"spec": {"ignoredPodSelector": {"matchLabels": {"bad key!": "x"}}}}),
            vec!["spec.ignoredPodSelector.matchLabels"],
        ),
        (
            "replicas annotation is an int32",
            json!({"metadata": {"annotations": {"pub.kruise.io/protect-total-replicas": "ten"}}}),
            vec![replicas_annotation],
        ),
        (
            "replicas annotation agrees with the spec",
            json!({"metadata": {"annotations": {"pub.kruise.io/protect-total-replicas": "5"}}}),
            vec![replicas_annotation],
        ),
        (
            "replicas annotation alone is fine",
            json!({"metadata": {"annotations": {"pub.kruise.io/protect-total-replicas": "5"}}, "spec": {"protectTotalReplicas": null}}),
            vec![],
        ),
    ]);
    check_cases(
        &pub_v1beta1(),
        default_podunavailablebudget_v1beta1,
        validate_podunavailablebudget_v1beta1,
        cases,
    );
}

#[test]
fn each_podunavailablebudget_v1alpha1_rule_names_its_field() {
    let mut cases = pub_shared_cases(false);
    cases.extend([
        (
            "protected operations annotation supported",
            json!({"metadata": {"annotations": {"kruise.io/pub-protect-operations": "DELETE,KILL"}}}),
            vec!["metadata.annotations[kruise.io/pub-protect-operations]"],
        ),
        (
            "replicas annotation is an int32",
            json!({"metadata": {"annotations": {"pub.kruise.io/protect-total-replicas": "99999999999"}}}),
            vec!["metadata.annotations[pub.kruise.io/protect-total-replicas]"],
        ),
    ]);
    check_cases(
        &pub_v1alpha1(),
        default_podunavailablebudget_v1alpha1,
        validate_podunavailablebudget_v1alpha1,
        cases,
    );
}

#[test]
fn podunavailablebudget_selector_and_target_are_immutable() {
    let none = json!({});
    let beta = pub_v1beta1();
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("budget may change", json!({"spec": {"maxUnavailable": 3}}), vec![]),
        (
            "selector may not",
            json!({"spec": {"selector": {"matchLabels": {"app": "api"}}}}),
            vec!["spec.selector"],
        ),
        (
            "nor switch to a targetRef",
            json!({"spec": {"selector": null, "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "w"}}}),
            vec!["spec.selector", "spec.targetRef"],
        ),
    ];
    for (rule, patch, expected) in cases {
        assert_eq!(
            update_paths_of(&beta, &none, &patch, validate_podunavailablebudget_v1beta1),
            expected,
            "rule: {rule}"
        );
    }
    let alpha = update_paths_of(
        &pub_v1alpha1(),
        &none,
        &json!({"spec": {"targetRef": {"name": "api"}}}),
        validate_podunavailablebudget_v1alpha1,
    );
    assert_eq!(alpha, ["spec.targetRef"]);
}

#[test]
fn podunavailablebudget_has_no_defaults() {
    assert_defaults_fill_nothing(json!({}), default_podunavailablebudget_v1beta1);
    assert_defaults_fill_nothing(json!({}), default_podunavailablebudget_v1alpha1);
    assert_defaults_fill_nothing(pub_v1beta1(), default_podunavailablebudget_v1beta1);
    assert_defaults_fill_nothing(pub_v1alpha1(), default_podunavailablebudget_v1alpha1);
    let mut empty = policy::v1beta1::PodUnavailableBudget::default();
    default_podunavailablebudget_v1beta1(&mut empty);
    assert!(empty.spec.protect_operations.is_empty(), "DELETE, UPDATE and EVICT are implied, not written");
}

#[test]
fn every_problem_is_reported_at_once() {
    let errors = paths_of(
        &pub_v1beta1(),
        &json!({"spec": {"selector": null, "maxUnavailable": null, "protectOperations": ["KILL"]}}),
        default_podunavailablebudget_v1beta1,
        validate_podunavailablebudget_v1beta1,
    );
    assert_eq!(errors, ["spec.selector", "spec.maxUnavailable", "spec.protectOperations[0]"]);
    let messages: Vec<String> = {
        let budget: policy::v1beta1::PodUnavailableBudget =
            decode(patched(&pub_v1beta1(), &json!({"spec": {"minAvailable": 1}})));
        validate_podunavailablebudget_v1beta1(&budget, None).iter().map(ToString::to_string).collect()
    };
    assert_eq!(
        messages,
        ["spec.minAvailable: Forbidden: maxUnavailable and minAvailable are mutually exclusive"]
    );
}

#[test]
fn odd_inputs_are_reported_not_panicked_on() {
    for resource in [json!(true), json!(1), json!([]), json!({}), json!({"kind": "Secret", "data": [1]})] {
        let distribution: v1beta1::ResourceDistribution =
            decode(json!({"metadata": {"name": "x"}, "spec": {"resource": resource}}));
        assert!(!validate_resourcedistribution_v1beta1(&distribution, Some(&distribution)).is_empty());
    }
    for patch in [
        json!([null]),
        json!("x"),
        json!({"spec": [{"$patch": "delete"}]}),
        json!({"spec": {"containers": [1]}}),
    ] {
        let mut first = ws_subset_a();
        first["patch"] = patch;
        let spread: v1beta1::WorkloadSpread =
            decode(patched(&ws_v1beta1(), &json!({"spec": {"subsets": [first, {"name": "zone-b"}]}})));
        assert!(
            !validate_workloadspread_v1beta1(&spread, None).is_empty(),
            "{:?}",
            spread.spec.subsets[0].patch
        );
    }
    let many: Vec<Value> = (0..400).map(|i| json!({"name": format!("s{i}"), "maxReplicas": "1%"})).collect();
    let spread: v1beta1::WorkloadSpread = decode(patched(&ws_v1beta1(), &json!({"spec": {"subsets": many}})));
    let paths: Vec<String> =
        validate_workloadspread_v1beta1(&spread, None).iter().map(|e| e.path.to_string()).collect();
    assert_eq!(
        paths,
        [
            "spec.subsets[100].maxReplicas",
            "spec.subsets[399].maxReplicas",
            "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds"
        ]
    );
}
