//! Table tests of the engine's decisions, ported from upstream `pkg/util/inplaceupdate/*_test.go`
//! (SCENARIOS.md 1.3 and section 3) with our own data.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::core::v1::{Pod, PodTemplateSpec, ResourceRequirements},
    apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::Time},
    jiff::Timestamp,
};
use kruise_crds::common::{
    IN_PLACE_UPDATE_GRACE_KEY, IN_PLACE_UPDATE_STATE_KEY, InPlaceUpdateContainerBatch,
    InPlaceUpdateContainerStatus, InPlaceUpdatePreCheckBeforeNext, InPlaceUpdateState,
    RUNTIME_CONTAINERS_META_KEY,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{
    batch::{BatchPlan, plan_batch},
    completion::{NotCompleted, check_update_completed},
    gohash::{expected_env_from_metadata_hash, kubelet_container_hash},
    options::{
        CloneSetRevisionAdapter, DefaultRevisionAdapter, InPlaceGates, Revision, RevisionAdapter,
        UpdateOptions,
    },
    plan::{
        GraceDecision, RefreshStep, decide_refresh, needs_unready, plan_grace, plan_next_batch, plan_update,
    },
    spec::{RefMetadata, UpdateSpec, calculate_update_spec},
};

fn pod(value: Value) -> Pod {
    serde_json::from_value(value).unwrap()
}

fn revision(name: &str, template: Value) -> Revision {
    Revision {
        name: name.into(),
        template: serde_json::from_value::<PodTemplateSpec>(template).unwrap(),
        volume_claim_templates_hash: None,
    }
}

fn strings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn requests(pairs: &[(&str, &str)]) -> ResourceRequirements {
    ResourceRequirements {
        requests: Some(pairs.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect()),
        ..Default::default()
    }
}

fn at(seconds: i64) -> Time {
    Time(Timestamp::from_second(seconds).unwrap())
}

const NOW: i64 = 1_700_000_000;

// ---------------------------------------------------------------------------------------------
// What qualifies (TestCalculateInPlaceUpdateSpec, TestDefaultCalculateInPlaceUpdateSpec, VCT hash)
// ---------------------------------------------------------------------------------------------

fn env_ref(name: &str, path: &str) -> Value {
    json!({"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": path}}})
}

#[test]
fn image_and_metadata_changes() {
    let gates = InPlaceGates::default();
    let opts = UpdateOptions::default();
    let images = |pairs: &[(&str, &str)]| strings(pairs);
    let cases: Vec<(&str, Value, Value, Option<UpdateSpec>)> = vec![
        (
            "image only",
            json!({"spec": {"containers": [{"name": "app", "image": "shop:1"}]}}),
            json!({"spec": {"containers": [{"name": "app", "image": "shop:2"}]}}),
            Some(UpdateSpec {
                revision: "rev-b".into(),
                container_images: images(&[("app", "shop:2")]),
                ..Default::default()
            }),
        ),
        (
            "image and an added template label",
            json!({"metadata": {"labels": {"tier": "web"}}, "spec": {"containers": [{"name": "app", "image": "shop:1"}]}}),
            json!({"metadata": {"labels": {"tier": "web", "team": "blue"}}, "spec": {"containers": [{"name": "app", "image": "shop:2"}]}}),
            Some(UpdateSpec {
                revision: "rev-b".into(),
                container_images: images(&[("app", "shop:2")]),
                metadata_patch: Some(json!({"metadata": {"labels": {"team": "blue"}}})),
                ..Default::default()
            }),
        ),
        (
            "label read through env: recorded per container, not in the metadata patch",
            json!({"metadata": {"labels": {"tier": "web"}}, "spec": {"containers": [
                {"name": "app", "image": "shop:1", "env": [env_ref("TIER", "metadata.labels['tier']")]}]}}),
            json!({"metadata": {"labels": {"tier": "api", "team": "blue"}}, "spec": {"containers": [
                {"name": "app", "image": "shop:2", "env": [env_ref("TIER", "metadata.labels['tier']")]}]}}),
            Some(UpdateSpec {
                revision: "rev-b".into(),
                container_images: images(&[("app", "shop:2")]),
                container_ref_metadata: [(
                    "app".to_string(),
                    RefMetadata { labels: strings(&[("tier", "api")]), ..Default::default() },
                )]
                .into(),
                metadata_patch: Some(json!({"metadata": {"labels": {"team": "blue"}}})),
                update_env_from_metadata: true,
                ..Default::default()
            }),
        ),
        (
            "annotation read through env by two containers, metadata only",
            json!({"metadata": {"annotations": {"cfg": "a"}}, "spec": {"containers": [
                {"name": "one", "image": "x", "env": [env_ref("CFG", "metadata.annotations['cfg']")]},
                {"name": "two", "image": "y", "env": [env_ref("C", "metadata.annotations['cfg']")]}]}}),
            json!({"metadata": {"annotations": {"cfg": "b"}}, "spec": {"containers": [
                {"name": "one", "image": "x", "env": [env_ref("CFG", "metadata.annotations['cfg']")]},
                {"name": "two", "image": "y", "env": [env_ref("C", "metadata.annotations['cfg']")]}]}}),
            Some(UpdateSpec {
                revision: "rev-b".into(),
                container_ref_metadata: [
                    (
                        "one".to_string(),
                        RefMetadata { annotations: strings(&[("cfg", "b")]), ..Default::default() },
                    ),
                    (
                        "two".to_string(),
                        RefMetadata { annotations: strings(&[("cfg", "b")]), ..Default::default() },
                    ),
                ]
                .into(),
                update_env_from_metadata: true,
                ..Default::default()
            }),
        ),
        (
            "SIDECARSET_VERSION env does not count",
            json!({"metadata": {"annotations": {"v": "1"}}, "spec": {"containers": [
                {"name": "app", "image": "x", "env": [env_ref("SIDECARSET_VERSION", "metadata.annotations['v']")]}]}}),
            json!({"metadata": {"annotations": {"v": "2"}}, "spec": {"containers": [
                {"name": "app", "image": "x", "env": [env_ref("SIDECARSET_VERSION", "metadata.annotations['v']")]}]}}),
            Some(UpdateSpec {
                revision: "rev-b".into(),
                metadata_patch: Some(json!({"metadata": {"annotations": {"v": "2"}}})),
                ..Default::default()
            }),
        ),
        (
            "finalizers and a removed label",
            json!({"metadata": {"labels": {"a": "1", "b": "2"}, "finalizers": ["x/one", "x/two"]}, "spec": {"containers": [{"name": "app", "image": "shop:1"}]}}),
            json!({"metadata": {"labels": {"a": "1", "c": "3"}, "finalizers": ["x/two"]}, "spec": {"containers": [{"name": "app", "image": "shop:2"}]}}),
            Some(UpdateSpec {
                revision: "rev-b".into(),
                container_images: images(&[("app", "shop:2")]),
                metadata_patch: Some(json!({"metadata": {
                    "$deleteFromPrimitiveList/finalizers": ["x/one"],
                    "$setElementOrder/finalizers": ["x/two"],
                    "labels": {"b": null, "c": "3"}
                }})),
                ..Default::default()
            }),
        ),
        (
            "template metadata appears",
            json!({"spec": {"containers": [{"name": "app", "image": "shop:1"}]}}),
            json!({"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [{"name": "app", "image": "shop:1"}]}}),
            Some(UpdateSpec {
                revision: "rev-b".into(),
                metadata_patch: Some(json!({"metadata": {"labels": {"a": "1"}}})),
                ..Default::default()
            }),
        ),
        (
            "literal env change",
            json!({"spec": {"containers": [{"name": "app", "image": "shop:1", "env": [{"name": "A", "value": "1"}]}]}}),
            json!({"spec": {"containers": [{"name": "app", "image": "shop:2", "env": [{"name": "A", "value": "2"}]}]}}),
            None,
        ),
        (
            "container added",
            json!({"spec": {"containers": [{"name": "app", "image": "shop:1"}]}}),
            json!({"spec": {"containers": [{"name": "app", "image": "shop:1"}, {"name": "log", "image": "log:1"}]}}),
            None,
        ),
        (
            "container renamed",
            json!({"spec": {"containers": [{"name": "app", "image": "shop:1"}]}}),
            json!({"spec": {"containers": [{"name": "web", "image": "shop:2"}]}}),
            None,
        ),
        (
            "image removed",
            json!({"spec": {"containers": [{"name": "app", "image": "shop:1"}]}}),
            json!({"spec": {"containers": [{"name": "app"}]}}),
            None,
        ),
        (
            "pod spec field",
            json!({"spec": {"containers": [{"name": "app", "image": "shop:1"}]}}),
            json!({"spec": {"containers": [{"name": "app", "image": "shop:1"}], "hostNetwork": true}}),
            None,
        ),
    ];
    for (name, old, new, expected) in cases {
        let got = calculate_update_spec(&revision("rev-a", old), &revision("rev-b", new), &opts, &gates);
        assert_eq!(got, expected, "{name}");
    }
}

/// Two containers with cpu/memory requests and limits (Burstable), plus a non-resizable
/// resource, as upstream `getFakeControllerRevisionData`.
fn resource_template(
    image: [&str; 2],
    cpu_request: [&str; 2],
    memory_request: [&str; 2],
    pull_policy: [&str; 2],
) -> Value {
    let container = |i: usize, name: &str| {
        json!({
            "name": name, "image": image[i], "imagePullPolicy": pull_policy[i],
            "env": [{"name": "version", "value": "v1"}],
            "resources": {
                "limits": {"cpu": "4", "memory": "8Gi", "example.com/nic": "1"},
                "requests": {"cpu": cpu_request[i], "memory": memory_request[i], "example.com/nic": "1"}
            }
        })
    };
    json!({"metadata": {"labels": {"app": "shop"}}, "spec": {"containers": [container(0, "api"), container(1, "worker")]}})
}

#[test]
fn resource_changes() {
    let base = resource_template(["shop:1", "shop:1"], ["1", "1"], ["2Gi", "2Gi"], ["Always", "Always"]);
    let cpu2 = |containers: &[&str]| -> BTreeMap<String, ResourceRequirements> {
        containers.iter().map(|c| (c.to_string(), requests(&[("cpu", "2")]))).collect()
    };
    let on = InPlaceGates::default();
    let off = InPlaceGates { vertical_scaling: false, ..on };
    type Case = (
        &'static str,
        Value,
        InPlaceGates,
        Option<(BTreeMap<String, String>, BTreeMap<String, ResourceRequirements>)>,
    );
    let cases: Vec<Case> = vec![
        (
            "only a resource",
            resource_template(["shop:1", "shop:1"], ["2", "1"], ["2Gi", "2Gi"], ["Always", "Always"]),
            on,
            Some((BTreeMap::new(), cpu2(&["api"]))),
        ),
        (
            "image and resource",
            resource_template(["shop:2", "shop:1"], ["2", "1"], ["2Gi", "2Gi"], ["Always", "Always"]),
            on,
            Some((strings(&[("api", "shop:2")]), cpu2(&["api"]))),
        ),
        (
            "resource and another field",
            resource_template(["shop:1", "shop:1"], ["2", "1"], ["2Gi", "2Gi"], ["IfNotPresent", "Always"]),
            on,
            None,
        ),
        (
            "resources of both containers",
            resource_template(["shop:1", "shop:1"], ["2", "2"], ["2Gi", "2Gi"], ["Always", "Always"]),
            on,
            Some((BTreeMap::new(), cpu2(&["api", "worker"]))),
        ),
        (
            "images and resources of both containers",
            resource_template(["shop:2", "shop:2"], ["2", "2"], ["2Gi", "2Gi"], ["Always", "Always"]),
            on,
            Some((strings(&[("api", "shop:2"), ("worker", "shop:2")]), cpu2(&["api", "worker"]))),
        ),
        (
            "both containers become Guaranteed: QoS changes",
            resource_template(["shop:1", "shop:1"], ["4", "4"], ["8Gi", "8Gi"], ["Always", "Always"]),
            on,
            None,
        ),
        (
            "one container Guaranteed: still Burstable",
            resource_template(["shop:2", "shop:1"], ["4", "1"], ["8Gi", "2Gi"], ["Always", "Always"]),
            on,
            Some((
                strings(&[("api", "shop:2")]),
                [("api".to_string(), requests(&[("cpu", "4"), ("memory", "8Gi")]))].into(),
            )),
        ),
        (
            "QoS-neutral change plus another field",
            resource_template(["shop:2", "shop:1"], ["4", "1"], ["8Gi", "2Gi"], ["Never", "Always"]),
            on,
            None,
        ),
        (
            "vertical scaling gate off",
            resource_template(["shop:1", "shop:1"], ["2", "1"], ["2Gi", "2Gi"], ["Always", "Always"]),
            off,
            None,
        ),
    ];
    for (name, new, gates, expected) in cases {
        let got = calculate_update_spec(
            &revision("old", base.clone()),
            &revision("new", new),
            &UpdateOptions::default(),
            &gates,
        )
        .map(|spec| (spec.container_images, spec.container_resources));
        assert_eq!(got, expected, "{name}");
    }

    // Adding or removing a quantity, or a non-resizable resource, is never in place.
    let with_requests = |requests: Value| json!({"spec": {"containers": [{"name": "app", "image": "x", "resources": {"requests": requests}}]}});
    let cases = [
        ("cpu added", json!({"memory": "1Gi"}), json!({"memory": "1Gi", "cpu": "1"})),
        ("cpu removed", json!({"memory": "1Gi", "cpu": "1"}), json!({"memory": "1Gi"})),
        ("other resource", json!({"example.com/nic": "1"}), json!({"example.com/nic": "2"})),
        ("not a quantity", json!({"cpu": "1"}), json!({"cpu": "lots"})),
    ];
    for (name, old, new) in cases {
        let got = calculate_update_spec(
            &revision("old", with_requests(old)),
            &revision("new", with_requests(new)),
            &UpdateOptions::default(),
            &on,
        );
        assert_eq!(got, None, "{name}");
    }
}

#[test]
fn volume_claim_templates_hash() {
    let old = json!({"spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}});
    let new = json!({"spec": {"containers": [{"name": "nginx", "image": "nginx:1.26"}]}});
    let with_hash = |name: &str, template: &Value, hash: Option<&str>| Revision {
        volume_claim_templates_hash: hash.map(String::from),
        ..revision(name, template.clone())
    };
    // (name, old hash, new hash, ignore the diff, in place with the gate on)
    let cases = [
        ("both missing", None, None, false, true),
        ("old missing", None, Some("42"), false, true),
        ("new missing", Some("42"), None, false, true),
        ("changed", Some(""), Some("42"), false, false),
        ("same", Some("42"), Some("42"), false, true),
        ("both empty", Some(""), Some(""), false, true),
        ("ignored: both missing", None, None, true, true),
        ("ignored: changed", Some(""), Some("42"), true, true),
        ("ignored: same", Some("42"), Some("42"), true, true),
    ];
    for gate in [true, false] {
        let gates = InPlaceGates { recreate_when_vct_changes: gate, ..Default::default() };
        for (name, old_hash, new_hash, ignore, in_place) in cases {
            let options =
                UpdateOptions { ignore_volume_claim_templates_hash_diff: ignore, ..Default::default() };
            let got = calculate_update_spec(
                &with_hash("a", &old, old_hash),
                &with_hash("b", &new, new_hash),
                &options,
                &gates,
            );
            assert_eq!(got.is_some(), in_place || !gate, "gate {gate}: {name}");
        }
    }
}

#[test]
fn env_from_metadata_gate_off_keeps_everything_in_the_metadata_patch() {
    let gates = InPlaceGates { env_from_metadata: false, ..Default::default() };
    let template = |v: &str| {
        json!({"metadata": {"labels": {"tier": v}}, "spec": {"containers": [
            {"name": "app", "image": "x", "env": [env_ref("TIER", "metadata.labels['tier']")]}]}})
    };
    let got = calculate_update_spec(
        &revision("a", template("web")),
        &revision("b", template("api")),
        &UpdateOptions::default(),
        &gates,
    )
    .unwrap();
    assert!(!got.update_env_from_metadata);
    assert_eq!(got.metadata_patch, Some(json!({"metadata": {"labels": {"tier": "api"}}})));
}

#[test]
fn grace_spec_round_trips_in_upstream_form() {
    let spec = UpdateSpec {
        revision: "rev-b".into(),
        container_images: strings(&[("app", "shop:2")]),
        metadata_patch: Some(json!({"metadata": {"labels": {"k1": "v1"}}})),
        grace_seconds: 30,
        ..Default::default()
    };
    let wire = serde_json::to_value(spec.to_wire().unwrap()).unwrap();
    // metaDataPatch is a Go []byte: base64 of the JSON.
    assert_eq!(
        wire,
        json!({"revision": "rev-b", "containerImages": {"app": "shop:2"},
               "metaDataPatch": "eyJtZXRhZGF0YSI6eyJsYWJlbHMiOnsiazEiOiJ2MSJ9fX0=", "graceSeconds": 30})
    );
    let back = UpdateSpec::from_wire(&serde_json::from_value(wire).unwrap()).unwrap();
    assert_eq!(back, spec);
}

// ---------------------------------------------------------------------------------------------
// Launch-priority batches (TestDefaultPatchUpdateSpecToPod, TestDefaultPatchUpdateSpecToPod_Resource)
// ---------------------------------------------------------------------------------------------

fn barrier(priority: i64) -> Value {
    json!({"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {"name": "p-barrier", "key": format!("p_{priority}")}}})
}

/// Four containers: `gate` (priority 20, reads label `mode`), `cache` (10, reads label
/// `flavour`), `db` (0, reads label `flavour`), `log` (0, reads annotation `level`).
fn priority_pod() -> Pod {
    pod(json!({
        "metadata": {"name": "p", "labels": {"mode": "a", "flavour": "a"}, "annotations": {"level": "info"}},
        "spec": {"containers": [
            {"name": "gate", "image": "gate:1", "env": [barrier(20), env_ref("MODE", "metadata.labels['mode']")]},
            {"name": "cache", "image": "cache:1", "env": [barrier(10), env_ref("FLAVOUR", "metadata.labels['flavour']")]},
            {"name": "db", "image": "db:1", "env": [barrier(0), env_ref("FLAVOUR", "metadata.labels['flavour']")]},
            {"name": "log", "image": "log:1", "env": [barrier(0), env_ref("LEVEL", "metadata.annotations['level']")]}
        ]},
        "status": {"containerStatuses": [
            {"name": "gate", "image": "gate:1", "imageID": "id-gate-1", "ready": true, "restartCount": 0},
            {"name": "cache", "image": "cache:1", "imageID": "id-cache-1", "ready": true, "restartCount": 0},
            {"name": "db", "image": "db:1", "imageID": "id-db-1", "ready": true, "restartCount": 0},
            {"name": "log", "image": "log:1", "imageID": "id-log-1", "ready": true, "restartCount": 0}
        ]}
    }))
}

fn batch_record(containers: &[&str]) -> InPlaceUpdateContainerBatch {
    InPlaceUpdateContainerBatch {
        timestamp: at(NOW),
        containers: containers.iter().map(|c| c.to_string()).collect(),
    }
}

fn last_statuses(pairs: &[(&str, &str)]) -> BTreeMap<String, InPlaceUpdateContainerStatus> {
    pairs
        .iter()
        .map(|(c, id)| (c.to_string(), InPlaceUpdateContainerStatus { image_id: Some(id.to_string()) }))
        .collect()
}

fn required(containers: &[&str]) -> Option<InPlaceUpdatePreCheckBeforeNext> {
    Some(InPlaceUpdatePreCheckBeforeNext {
        containers_required_ready: Some(containers.iter().map(|c| c.to_string()).collect()),
    })
}

#[test]
fn launch_priority_batches() {
    let flavour_b = || RefMetadata { labels: strings(&[("flavour", "b")]), ..Default::default() };
    let level = || RefMetadata { annotations: strings(&[("level", "debug")]), ..Default::default() };
    let annotation_patch = || Some(json!({"metadata": {"annotations": {"owner": "team-a"}}}));
    struct Case {
        name: &'static str,
        spec: UpdateSpec,
        state: InPlaceUpdateState,
        expected_state: InPlaceUpdateState,
        expected: BatchPlan,
    }
    let cases = vec![
        Case {
            name: "one container",
            spec: UpdateSpec { container_images: strings(&[("gate", "gate:2")]), ..Default::default() },
            state: InPlaceUpdateState::default(),
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-1")]),
                container_batches_record: Some(vec![batch_record(&["gate"])]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["gate".into()],
                images: strings(&[("gate", "gate:2")]),
                ..Default::default()
            },
        },
        Case {
            name: "two containers of the same priority, with a metadata patch",
            spec: UpdateSpec {
                container_images: strings(&[("db", "db:2"), ("log", "log:2")]),
                metadata_patch: annotation_patch(),
                ..Default::default()
            },
            state: InPlaceUpdateState::default(),
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("db", "id-db-1"), ("log", "id-log-1")]),
                container_batches_record: Some(vec![batch_record(&["db", "log"])]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["db".into(), "log".into()],
                images: strings(&[("db", "db:2"), ("log", "log:2")]),
                metadata_patch: annotation_patch(),
                ..Default::default()
            },
        },
        Case {
            name: "image and env-from-metadata of the same priority",
            spec: UpdateSpec {
                container_images: strings(&[("db", "db:2")]),
                container_ref_metadata: [("log".to_string(), level())].into(),
                update_env_from_metadata: true,
                ..Default::default()
            },
            state: InPlaceUpdateState::default(),
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("db", "id-db-1")]),
                container_batches_record: Some(vec![batch_record(&["db", "log"])]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["db".into(), "log".into()],
                images: strings(&[("db", "db:2")]),
                annotations: strings(&[("level", "debug")]),
                ..Default::default()
            },
        },
        Case {
            name: "two priorities, batch 1",
            spec: UpdateSpec {
                container_images: strings(&[("gate", "gate:2"), ("cache", "cache:2")]),
                metadata_patch: annotation_patch(),
                ..Default::default()
            },
            state: InPlaceUpdateState::default(),
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-1")]),
                next_container_images: Some(strings(&[("cache", "cache:2")])),
                pre_check_before_next: required(&["gate"]),
                container_batches_record: Some(vec![batch_record(&["gate"])]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["gate".into()],
                images: strings(&[("gate", "gate:2")]),
                metadata_patch: annotation_patch(),
                ..Default::default()
            },
        },
        Case {
            name: "two priorities, batch 2 keeps what batch 1 recorded",
            spec: UpdateSpec { container_images: strings(&[("cache", "cache:2")]), ..Default::default() },
            state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-0")]),
                next_container_images: Some(strings(&[("cache", "cache:2")])),
                pre_check_before_next: required(&["gate"]),
                container_batches_record: Some(vec![batch_record(&["gate"])]),
                ..Default::default()
            },
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-0"), ("cache", "id-cache-1")]),
                container_batches_record: Some(vec![batch_record(&["gate"]), batch_record(&["cache"])]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["cache".into()],
                images: strings(&[("cache", "cache:2")]),
                ..Default::default()
            },
        },
        Case {
            name: "three priorities, batch 1",
            spec: UpdateSpec {
                container_images: strings(&[("gate", "gate:2"), ("cache", "cache:2"), ("log", "log:2")]),
                ..Default::default()
            },
            state: InPlaceUpdateState::default(),
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-1")]),
                next_container_images: Some(strings(&[("cache", "cache:2"), ("log", "log:2")])),
                pre_check_before_next: required(&["gate"]),
                container_batches_record: Some(vec![batch_record(&["gate"])]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["gate".into()],
                images: strings(&[("gate", "gate:2")]),
                ..Default::default()
            },
        },
        Case {
            name: "three priorities, batch 2",
            spec: UpdateSpec {
                container_images: strings(&[("cache", "cache:2"), ("log", "log:2")]),
                ..Default::default()
            },
            state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-1")]),
                next_container_images: Some(strings(&[("cache", "cache:2"), ("log", "log:2")])),
                pre_check_before_next: required(&["gate"]),
                container_batches_record: Some(vec![batch_record(&["gate"])]),
                ..Default::default()
            },
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-1"), ("cache", "id-cache-1")]),
                next_container_images: Some(strings(&[("log", "log:2")])),
                pre_check_before_next: required(&["cache"]),
                container_batches_record: Some(vec![batch_record(&["gate"]), batch_record(&["cache"])]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["cache".into()],
                images: strings(&[("cache", "cache:2")]),
                ..Default::default()
            },
        },
        Case {
            name: "three priorities, batch 3",
            spec: UpdateSpec { container_images: strings(&[("log", "log:2")]), ..Default::default() },
            state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-1"), ("cache", "id-cache-1")]),
                next_container_images: Some(strings(&[("log", "log:2")])),
                pre_check_before_next: required(&["cache"]),
                container_batches_record: Some(vec![batch_record(&["gate"]), batch_record(&["cache"])]),
                ..Default::default()
            },
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[
                    ("gate", "id-gate-1"),
                    ("cache", "id-cache-1"),
                    ("log", "id-log-1"),
                ]),
                container_batches_record: Some(vec![
                    batch_record(&["gate"]),
                    batch_record(&["cache"]),
                    batch_record(&["log"]),
                ]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["log".into()],
                images: strings(&[("log", "log:2")]),
                ..Default::default()
            },
        },
        Case {
            name: "images and a shared label, batch 1",
            spec: UpdateSpec {
                container_images: strings(&[("gate", "gate:2"), ("cache", "cache:2"), ("log", "log:2")]),
                container_ref_metadata: [("cache".to_string(), flavour_b()), ("db".to_string(), flavour_b())]
                    .into(),
                update_env_from_metadata: true,
                ..Default::default()
            },
            state: InPlaceUpdateState::default(),
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-1")]),
                next_container_images: Some(strings(&[("cache", "cache:2"), ("log", "log:2")])),
                next_container_ref_metadata: Some(
                    [
                        (
                            "cache".to_string(),
                            serde_json::from_value(json!({"labels": {"flavour": "b"}})).unwrap(),
                        ),
                        (
                            "db".to_string(),
                            serde_json::from_value(json!({"labels": {"flavour": "b"}})).unwrap(),
                        ),
                    ]
                    .into(),
                ),
                pre_check_before_next: required(&["gate"]),
                container_batches_record: Some(vec![batch_record(&["gate"])]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["gate".into()],
                images: strings(&[("gate", "gate:2")]),
                ..Default::default()
            },
        },
        Case {
            name: "images and a shared label, batch 2 pulls in the lower-priority reader",
            spec: UpdateSpec {
                container_images: strings(&[("cache", "cache:2"), ("log", "log:2")]),
                container_ref_metadata: [("cache".to_string(), flavour_b()), ("db".to_string(), flavour_b())]
                    .into(),
                update_env_from_metadata: true,
                ..Default::default()
            },
            state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-1")]),
                container_batches_record: Some(vec![batch_record(&["gate"])]),
                ..Default::default()
            },
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-1"), ("cache", "id-cache-1")]),
                next_container_images: Some(strings(&[("log", "log:2")])),
                pre_check_before_next: required(&["cache", "db"]),
                container_batches_record: Some(vec![batch_record(&["gate"]), batch_record(&["cache", "db"])]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["cache".into(), "db".into()],
                images: strings(&[("cache", "cache:2")]),
                labels: strings(&[("flavour", "b")]),
                ..Default::default()
            },
        },
        Case {
            name: "images and a shared label, batch 3",
            spec: UpdateSpec {
                container_images: strings(&[("log", "log:2")]),
                update_env_from_metadata: true,
                ..Default::default()
            },
            state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[("gate", "id-gate-1"), ("cache", "id-cache-1")]),
                container_batches_record: Some(vec![batch_record(&["gate"]), batch_record(&["cache", "db"])]),
                ..Default::default()
            },
            expected_state: InPlaceUpdateState {
                last_container_statuses: last_statuses(&[
                    ("gate", "id-gate-1"),
                    ("cache", "id-cache-1"),
                    ("log", "id-log-1"),
                ]),
                container_batches_record: Some(vec![
                    batch_record(&["gate"]),
                    batch_record(&["cache", "db"]),
                    batch_record(&["log"]),
                ]),
                ..Default::default()
            },
            expected: BatchPlan {
                containers: vec!["log".into()],
                images: strings(&[("log", "log:2")]),
                ..Default::default()
            },
        },
    ];
    let subject = priority_pod();
    for mut case in cases {
        let plan = plan_batch(&subject, &case.spec, &mut case.state, &InPlaceGates::default(), &at(NOW));
        assert_eq!(plan, case.expected, "{}", case.name);
        assert_eq!(case.state, case.expected_state, "{}", case.name);
    }
}

fn resource_pod() -> Pod {
    let resources =
        json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}});
    pod(json!({
        "metadata": {"name": "r"},
        "spec": {"containers": [
            {"name": "api", "image": "api:1", "env": [barrier(20)], "resources": resources,
             "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]},
            {"name": "worker", "image": "worker:1", "env": [barrier(10)], "resources": resources,
             "resizePolicy": [{"resourceName": "memory", "restartPolicy": "RestartContainer"}]}
        ]},
        "status": {"containerStatuses": [
            {"name": "api", "image": "api:1", "imageID": "id-api-1", "ready": true, "restartCount": 0, "resources": resources},
            {"name": "worker", "image": "worker:1", "imageID": "id-worker-1", "ready": true, "restartCount": 0, "resources": resources}
        ]}
    }))
}

#[test]
fn resource_batches() {
    let more = || requests(&[("cpu", "2"), ("memory", "2Gi")]);
    let subject = resource_pod();
    let gates = InPlaceGates::default();

    // Batch 1 of images and resources of two priorities: the resize names only `api`.
    let spec = UpdateSpec {
        revision: "new".into(),
        container_images: strings(&[("api", "api:2"), ("worker", "worker:2")]),
        container_resources: [("api".to_string(), more()), ("worker".to_string(), more())].into(),
        ..Default::default()
    };
    let plan =
        plan_update(&subject, &spec, &BTreeMap::new(), &UpdateOptions::default(), &gates, &at(NOW)).unwrap();
    assert_eq!(plan.batch, ["api"]);
    assert_eq!(
        plan.resize,
        Some(
            json!({"spec": {"containers": [{"name": "api", "resources": {"requests": {"cpu": "2", "memory": "2Gi"}}}]}})
        )
    );
    assert_eq!(plan.state.next_container_resources, Some([("worker".to_string(), more())].into()));
    assert_eq!(plan.state.next_container_images, Some(strings(&[("worker", "worker:2")])));
    assert_eq!(plan.state.update_resources, Some(true));
    assert_eq!(plan.patch.pointer("/spec/containers"), Some(&json!([{"name": "api", "image": "api:2"}])));

    // Resources only, no priority difference: no image in the pod patch.
    let spec = UpdateSpec {
        revision: "new".into(),
        container_resources: [("api".to_string(), requests(&[("cpu", "1500m")]))].into(),
        ..Default::default()
    };
    let plan =
        plan_update(&subject, &spec, &BTreeMap::new(), &UpdateOptions::default(), &gates, &at(NOW)).unwrap();
    assert_eq!(plan.patch.pointer("/spec"), None);
    assert!(plan.state.last_container_statuses.is_empty());
    assert_eq!(
        plan.resize,
        Some(json!({"spec": {"containers": [{"name": "api", "resources": {"requests": {"cpu": "1500m"}}}]}}))
    );

    // With the gate off, resources are not touched at all.
    let off = InPlaceGates { vertical_scaling: false, ..gates };
    let plan =
        plan_update(&subject, &spec, &BTreeMap::new(), &UpdateOptions::default(), &off, &at(NOW)).unwrap();
    assert_eq!(plan.resize, None);
    assert_eq!(plan.state.next_container_resources, None);
}

// ---------------------------------------------------------------------------------------------
// Marking NotReady first (TestDefaultCheckPodNeedsBeUnready)
// ---------------------------------------------------------------------------------------------

#[test]
fn needs_unready_cases() {
    let gated = |containers: Value| {
        pod(
            json!({"spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}], "containers": containers}}),
        )
    };
    let ungated = |containers: Value| pod(json!({"spec": {"containers": containers}}));
    let policy = |cpu: &str, memory: &str| {
        json!([{"name": "app", "image": "x", "resizePolicy": [
            {"resourceName": "cpu", "restartPolicy": cpu}, {"resourceName": "memory", "restartPolicy": memory}]}])
    };
    let plain = json!([{"name": "app", "image": "x"}]);
    let resources = |r: ResourceRequirements| UpdateSpec {
        container_resources: [("app".to_string(), r)].into(),
        ..Default::default()
    };
    let image = UpdateSpec { container_images: strings(&[("app", "x:2")]), ..Default::default() };
    let image_and_cpu = UpdateSpec {
        container_resources: resources(requests(&[("cpu", "1")])).container_resources,
        ..image.clone()
    };
    let on = InPlaceGates::default();
    let off = InPlaceGates { vertical_scaling: false, ..on };
    let cases = [
        ("gated, image, gate off", gated(plain.clone()), image.clone(), off, true),
        ("not gated, image", ungated(plain.clone()), image.clone(), on, false),
        (
            "gated, resources only, no restart policy",
            gated(plain.clone()),
            resources(requests(&[("cpu", "1")])),
            on,
            false,
        ),
        ("gated, image and resources", gated(plain.clone()), image_and_cpu, on, true),
        (
            "not gated, resources only",
            ungated(policy("RestartContainer", "RestartContainer")),
            resources(requests(&[("cpu", "1")])),
            on,
            false,
        ),
        (
            "gated, other container restarts",
            gated(policy("RestartContainer", "RestartContainer")),
            UpdateSpec {
                container_resources: [("other".to_string(), requests(&[("cpu", "1")]))].into(),
                ..Default::default()
            },
            on,
            false,
        ),
        (
            "gated, cpu resize with cpu restart",
            gated(policy("RestartContainer", "NotRequired")),
            resources(requests(&[("cpu", "1")])),
            on,
            true,
        ),
        (
            "gated, memory resize with cpu restart",
            gated(policy("RestartContainer", "NotRequired")),
            resources(requests(&[("memory", "1Gi")])),
            on,
            false,
        ),
        (
            "gated, memory resize with memory restart",
            gated(policy("NotRequired", "RestartContainer")),
            resources(requests(&[("memory", "1Gi")])),
            on,
            true,
        ),
        (
            "gated, resize, gate off",
            gated(policy("RestartContainer", "NotRequired")),
            resources(requests(&[("memory", "1Gi")])),
            off,
            true,
        ),
    ];
    for (name, subject, spec, gates, expected) in cases {
        assert_eq!(needs_unready(&subject, &spec, &gates), expected, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Completion (TestCheckInPlaceUpdateCompleted, TestDefaultCheckInPlaceUpdateCompleted_Resource)
// ---------------------------------------------------------------------------------------------

fn with_state(state: Value, spec: Value, statuses: Value) -> Pod {
    pod(json!({
        "metadata": {"name": "c", "annotations": {IN_PLACE_UPDATE_STATE_KEY: state.to_string()}},
        "spec": spec,
        "status": {"containerStatuses": statuses}
    }))
}

#[test]
fn completion_by_image() {
    let gates = InPlaceGates::default();
    let state = json!({"revision": "new", "lastContainerStatuses": {"app": {"imageID": "id-old"}}});
    let spec = json!({"containers": [{"name": "app", "image": "shop:2"}]});
    let status = |image: &str, id: &str| json!([{"name": "app", "image": image, "imageID": id, "ready": true, "restartCount": 1}]);
    let cases = [
        ("no state", pod(json!({"metadata": {"name": "x"}})), Ok(())),
        ("imageID changed", with_state(state.clone(), spec.clone(), status("shop:2", "id-new")), Ok(())),
        (
            "imageID unchanged",
            with_state(state.clone(), spec.clone(), status("shop:1", "id-old")),
            Err(NotCompleted::ImageNotChanged("app".into())),
        ),
        (
            "same digest under the new name",
            with_state(state.clone(), spec.clone(), status("shop:2", "id-old")),
            Ok(()),
        ),
        (
            "untagged image gets :latest",
            with_state(
                state.clone(),
                json!({"containers": [{"name": "app", "image": "shop"}]}),
                status("shop:latest", "id-old"),
            ),
            Ok(()),
        ),
        (
            "status missing",
            with_state(state.clone(), spec.clone(), json!([])),
            Err(NotCompleted::StatusMissing(vec!["app".into()])),
        ),
        (
            "next batch pending",
            with_state(
                json!({"revision": "new", "lastContainerStatuses": {}, "nextContainerImages": {"app": "shop:3"}}),
                spec.clone(),
                status("shop:2", "id-new"),
            ),
            Err(NotCompleted::NextBatchPending),
        ),
        (
            "in grace",
            pod(json!({"metadata": {"name": "g", "annotations": {IN_PLACE_UPDATE_GRACE_KEY: "{}"}}})),
            Err(NotCompleted::InGrace),
        ),
        (
            "legacy state key",
            pod(
                json!({"metadata": {"name": "l", "annotations": {"inplace-update-state": state.to_string()}},
                "spec": spec.clone(), "status": {"containerStatuses": status("shop:1", "id-old")}}),
            ),
            Err(NotCompleted::ImageNotChanged("app".into())),
        ),
    ];
    for (name, subject, expected) in cases {
        assert_eq!(check_update_completed(&subject, &gates), expected, "{name}");
    }
    let broken = pod(json!({"metadata": {"name": "b", "annotations": {IN_PLACE_UPDATE_STATE_KEY: "{"}}}));
    assert!(matches!(check_update_completed(&broken, &gates), Err(NotCompleted::InvalidAnnotation { .. })));
}

/// `containers` containers `c<i>`, image updates of the first `image_ok` finished, resources of
/// the first `resources_ok` applied (upstream `createFakePod`).
fn fleet_pod(containers: usize, images: bool, image_ok: usize, resources: bool, resources_ok: usize) -> Pod {
    let mut spec = Vec::new();
    let mut statuses = Vec::new();
    let mut last = serde_json::Map::new();
    for i in 0..containers {
        let name = format!("c{i}");
        let wanted = json!({"requests": {"cpu": "200m", "memory": "200Mi"}});
        let mut container = json!({"name": name, "image": format!("busybox:v{i}")});
        let mut status = json!({"name": name, "image": "", "imageID": "", "ready": true, "restartCount": 0});
        if images {
            status["imageID"] = json!(if i < image_ok { format!("id-{i}") } else { "id-before".to_string() });
            last.insert(name.clone(), json!({"imageID": "id-before"}));
        }
        if resources {
            container["resources"] = wanted.clone();
            status["resources"] = if i < resources_ok {
                wanted
            } else {
                json!({"requests": {"cpu": "100m", "memory": "100Mi"}})
            };
        }
        spec.push(container);
        statuses.push(status);
    }
    let mut state = json!({"revision": "new", "lastContainerStatuses": last});
    if resources {
        state["updateResources"] = json!(true);
    }
    with_state(state, json!({"containers": spec}), Value::Array(statuses))
}

#[test]
fn completion_with_resources() {
    let on = InPlaceGates::default();
    let off = InPlaceGates { vertical_scaling: false, ..on };
    let cases = [
        ("image ok", fleet_pod(1, true, 1, false, 0), true, true),
        ("image not ok", fleet_pod(1, true, 0, false, 0), false, false),
        ("all images ok", fleet_pod(3, true, 3, false, 0), true, true),
        ("one image not ok", fleet_pod(3, true, 2, false, 0), false, false),
        ("images and resources ok", fleet_pod(3, true, 3, true, 3), true, true),
        ("images ok, resources not", fleet_pod(3, true, 3, true, 2), false, true),
        ("neither", fleet_pod(3, true, 2, true, 2), false, false),
        ("only resources, not applied", fleet_pod(2, false, 0, true, 1), false, true),
        ("only resources, applied", fleet_pod(2, false, 0, true, 2), true, true),
    ];
    for (name, subject, with_gate, without_gate) in cases {
        assert_eq!(check_update_completed(&subject, &on).is_ok(), with_gate, "gate on: {name}");
        assert_eq!(check_update_completed(&subject, &off).is_ok(), without_gate, "gate off: {name}");
    }
}

#[test]
fn completion_with_runtime_meta() {
    let gates = InPlaceGates::default();
    let spec = json!({"containers": [{"name": "app", "image": "shop:2", "env": [env_ref("TIER", "metadata.labels['tier']")]}]});
    let container: k8s_openapi::api::core::v1::Container =
        serde_json::from_value(spec["containers"][0].clone()).unwrap();
    let labels = strings(&[("tier", "api")]);
    let env_hash = expected_env_from_metadata_hash(&container, &labels, &BTreeMap::new());
    let stale_env =
        expected_env_from_metadata_hash(&container, &strings(&[("tier", "web")]), &BTreeMap::new());
    let plain = kubelet_container_hash(&container);
    let subject = |state: Value, meta: Option<Value>, container_id: &str, image_id: &str| {
        let mut annotations = json!({IN_PLACE_UPDATE_STATE_KEY: state.to_string()});
        if let Some(meta) = meta {
            annotations[RUNTIME_CONTAINERS_META_KEY] = json!(meta.to_string());
        }
        pod(json!({
            "metadata": {"name": "m", "labels": {"tier": "api"}, "annotations": annotations},
            "spec": spec,
            "status": {"containerStatuses": [{"name": "app", "image": "shop:2", "imageID": image_id,
                "containerID": container_id, "ready": true, "restartCount": 1}]}
        }))
    };
    let meta = |id: &str, plain: u64, env: u64| {
        json!({"containers": [{"name": "app", "containerID": id, "restartCount": 1,
            "hashes": {"plainHash": plain, "extractedEnvFromMetadataHash": env}}]})
    };
    let env_state = json!({"revision": "new", "lastContainerStatuses": {}, "updateEnvFromMetadata": true});
    let image_state = json!({"revision": "new", "lastContainerStatuses": {"app": {"imageID": "id-1"}}});
    let cases = [
        (
            "env update without the daemon's report",
            subject(env_state.clone(), None, "c://2", "id-1"),
            Err(NotCompleted::RuntimeMetaMissing),
        ),
        (
            "env update, old env values",
            subject(env_state.clone(), Some(meta("c://2", plain, stale_env)), "c://2", "id-1"),
            Err(NotCompleted::EnvNotApplied("app".into())),
        ),
        (
            "env update, report of an older container",
            subject(env_state.clone(), Some(meta("c://1", plain, env_hash)), "c://2", "id-1"),
            Err(NotCompleted::EnvNotApplied("app".into())),
        ),
        (
            "env update, new env values",
            subject(env_state.clone(), Some(meta("c://2", plain, env_hash)), "c://2", "id-1"),
            Ok(()),
        ),
        (
            "plain hashes match: done even though the imageID did not change",
            subject(image_state.clone(), Some(meta("c://2", plain, 0)), "c://2", "id-1"),
            Ok(()),
        ),
        (
            "plain hash differs: fall back to imageIDs",
            subject(image_state.clone(), Some(meta("c://2", plain + 1, 0)), "c://2", "id-2"),
            Ok(()),
        ),
    ];
    for (name, subject, expected) in cases {
        assert_eq!(check_update_completed(&subject, &gates), expected, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// The update patch (TestUpdate I1, I2), grace (I3, I4) and refresh (TestRefresh)
// ---------------------------------------------------------------------------------------------

fn running_pod() -> Pod {
    pod(json!({
        "metadata": {"name": "web-0", "namespace": "ns", "resourceVersion": "41",
            "labels": {"controller-revision-hash": "web-old", "rollouts.kruise.io/stable": "true"}},
        "spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                 "containers": [{"name": "main", "image": "shop:1"}]},
        "status": {
            "conditions": [{"type": "InPlaceUpdateReady", "status": "True"}, {"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "main", "image": "shop:1", "imageID": "id-shop-1", "ready": true, "restartCount": 0}]
        }
    }))
}

fn image_spec(grace: i32) -> UpdateSpec {
    UpdateSpec {
        revision: "web-new".into(),
        container_images: strings(&[("main", "shop:2")]),
        grace_seconds: grace,
        ..Default::default()
    }
}

#[test]
fn update_patch_without_grace() {
    let options = UpdateOptions {
        extra_labels: strings(&[("lifecycle.apps.kruise.io/state", "Updating")]),
        extra_annotations: strings(&[("lifecycle.apps.kruise.io/timestamp", "2023-11-14T22:13:20Z")]),
        ..Default::default()
    };
    let labels = CloneSetRevisionAdapter::default();
    let plan = plan_update(
        &running_pod(),
        &image_spec(0),
        &labels.revision_labels("web-new"),
        &options,
        &InPlaceGates::default(),
        &at(NOW),
    )
    .unwrap();
    let state = json!({
        "revision": "web-new", "updateTimestamp": "2023-11-14T22:13:20Z",
        "lastContainerStatuses": {"main": {"imageID": "id-shop-1"}}, "updateImages": true,
        "containerBatchesRecord": [{"timestamp": "2023-11-14T22:13:20Z", "containers": ["main"]}]
    });
    let mut patch = plan.patch.clone();
    let written: Value =
        serde_json::from_str(patch["metadata"]["annotations"][IN_PLACE_UPDATE_STATE_KEY].as_str().unwrap())
            .unwrap();
    assert_eq!(written, state);
    patch["metadata"]["annotations"][IN_PLACE_UPDATE_STATE_KEY] = json!("<state>");
    assert_eq!(
        patch,
        json!({
            "metadata": {
                "resourceVersion": "41",
                "labels": {"controller-revision-hash": "web-new", "pod-template-hash": "new",
                           "lifecycle.apps.kruise.io/state": "Updating"},
                "annotations": {
                    "lifecycle.apps.kruise.io/timestamp": "2023-11-14T22:13:20Z",
                    "inplace-update-state": null,
                    "apps.kruise.io/inplace-update-grace": null,
                    "inplace-update-grace": null,
                    IN_PLACE_UPDATE_STATE_KEY: "<state>"
                }
            },
            "spec": {"containers": [{"name": "main", "image": "shop:2"}]}
        })
    );
    assert_eq!(plan.resize, None);
    assert_eq!(plan.batch, ["main"]);
}

#[test]
fn update_patch_with_grace_then_refresh() {
    let adapter = DefaultRevisionAdapter;
    let labels = adapter.revision_labels("web-new");
    let plan = plan_update(
        &running_pod(),
        &image_spec(30),
        &labels,
        &UpdateOptions::default(),
        &InPlaceGates::default(),
        &at(NOW),
    )
    .unwrap();
    assert_eq!(plan.patch.pointer("/spec"), None, "no image change during the grace period");
    assert!(plan.batch.is_empty());
    let grace: Value = serde_json::from_str(
        plan.patch["metadata"]["annotations"][IN_PLACE_UPDATE_GRACE_KEY].as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(
        grace,
        json!({"revision": "web-new", "containerImages": {"main": "shop:2"}, "graceSeconds": 30})
    );

    // The pod as the API would hold it after that patch.
    let mut parked = running_pod();
    let annotations = plan.patch["metadata"]["annotations"].as_object().unwrap();
    parked.metadata.annotations = Some(
        annotations.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))).collect(),
    );
    parked.metadata.labels.as_mut().unwrap().insert("controller-revision-hash".into(), "web-new".into());
    let gates = InPlaceGates::default();

    assert_eq!(decide_refresh(&parked, &gates, &at(NOW + 10)).unwrap(), RefreshStep::FinishGrace);
    // I3: still in the grace period (rounded up to whole seconds).
    assert_eq!(
        plan_grace(&parked, &adapter, &gates, &at(NOW + 10)).unwrap(),
        GraceDecision::Wait(Duration::from_secs(20))
    );
    // I4: the grace period is over: the image changes and the grace annotation goes.
    let GraceDecision::Apply(applied) = plan_grace(&parked, &adapter, &gates, &at(NOW + 30)).unwrap() else {
        panic!("grace period should be over")
    };
    assert_eq!(
        applied.patch.pointer("/spec/containers"),
        Some(&json!([{"name": "main", "image": "shop:2"}]))
    );
    assert_eq!(
        applied.patch.pointer("/metadata/annotations/apps.kruise.io~1inplace-update-grace"),
        Some(&Value::Null)
    );
    assert_eq!(applied.state.update_timestamp, Some(at(NOW)), "the update keeps its start time");
    assert_eq!(applied.state.last_container_statuses, last_statuses(&[("main", "id-shop-1")]));
    assert_eq!(
        applied.patch.pointer("/metadata/labels"),
        None,
        "labels were written when the update started"
    );

    // Rolled back meanwhile: the pod no longer targets the grace spec's revision.
    let mut rolled_back = parked.clone();
    rolled_back.metadata.labels.as_mut().unwrap().insert("controller-revision-hash".into(), "web-old".into());
    assert_eq!(
        plan_grace(&rolled_back, &adapter, &gates, &at(NOW + 5)).unwrap(),
        GraceDecision::Drop(json!({"metadata": {"resourceVersion": "41", "annotations": {
            "apps.kruise.io/inplace-update-grace": null, "inplace-update-grace": null}}}))
    );

    // A grace annotation without a state is an error, as upstream.
    let mut orphan = parked.clone();
    orphan.metadata.annotations.as_mut().unwrap().remove(IN_PLACE_UPDATE_STATE_KEY);
    assert!(plan_grace(&orphan, &adapter, &gates, &at(NOW + 60)).is_err());
}

fn refresh_pod(
    state: Option<InPlaceUpdateState>,
    spec_images: [&str; 2],
    status: [(&str, bool); 2],
    condition: Option<&str>,
) -> Pod {
    let mut annotations = serde_json::Map::new();
    if let Some(state) = state {
        annotations.insert(IN_PLACE_UPDATE_STATE_KEY.into(), json!(serde_json::to_string(&state).unwrap()));
    }
    let mut conditions = vec![json!({"type": "ContainersReady", "status": "True"})];
    if let Some(c) = condition {
        conditions.push(json!({"type": "InPlaceUpdateReady", "status": c}));
    }
    pod(json!({
        "metadata": {"name": "r", "namespace": "ns", "resourceVersion": "7", "annotations": annotations},
        "spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}], "containers": [
            {"name": "first", "image": spec_images[0], "env": [barrier(10)]},
            {"name": "second", "image": spec_images[1], "env": [barrier(0)]}]},
        "status": {"conditions": conditions, "containerStatuses": [
            {"name": "first", "image": status[0].0, "imageID": format!("id-{}", status[0].0), "ready": status[0].1, "restartCount": 0},
            {"name": "second", "image": status[1].0, "imageID": format!("id-{}", status[1].0), "ready": status[1].1, "restartCount": 0}]}
    }))
}

#[test]
fn refresh_steps() {
    let gates = InPlaceGates::default();
    let first_batch = InPlaceUpdateState {
        revision: "new".into(),
        update_timestamp: Some(at(NOW - 3600)),
        last_container_statuses: last_statuses(&[("first", "id-first:1")]),
        next_container_images: Some(strings(&[("second", "second:2")])),
        pre_check_before_next: required(&["first"]),
        container_batches_record: Some(vec![batch_record(&["first"])]),
        ..Default::default()
    };
    let done = InPlaceUpdateState {
        next_container_images: None,
        pre_check_before_next: None,
        last_container_statuses: last_statuses(&[("first", "id-first:1"), ("second", "id-second:1")]),
        ..first_batch.clone()
    };
    let cases = [
        (
            "no state, gate without condition",
            refresh_pod(None, ["first:1", "second:1"], [("first:1", true), ("second:1", true)], None),
            "mark",
        ),
        (
            "no state, condition False",
            refresh_pod(
                None,
                ["first:1", "second:1"],
                [("first:1", true), ("second:1", true)],
                Some("False"),
            ),
            "mark",
        ),
        (
            "no state, condition True",
            refresh_pod(None, ["first:1", "second:1"], [("first:1", true), ("second:1", true)], Some("True")),
            "idle",
        ),
        (
            "first batch not running yet",
            refresh_pod(
                Some(first_batch.clone()),
                ["first:2", "second:1"],
                [("first:1", true), ("second:1", true)],
                Some("False"),
            ),
            "await-containers",
        ),
        (
            "first batch running but not ready",
            refresh_pod(
                Some(first_batch.clone()),
                ["first:2", "second:1"],
                [("first:2", false), ("second:1", true)],
                Some("False"),
            ),
            "await-ready",
        ),
        (
            "first batch ready: start the next",
            refresh_pod(
                Some(first_batch.clone()),
                ["first:2", "second:1"],
                [("first:2", true), ("second:1", true)],
                Some("False"),
            ),
            "next",
        ),
        (
            "all batches done",
            refresh_pod(
                Some(done.clone()),
                ["first:2", "second:2"],
                [("first:2", true), ("second:2", true)],
                Some("False"),
            ),
            "mark",
        ),
        (
            "last batch not running yet",
            refresh_pod(
                Some(done.clone()),
                ["first:2", "second:2"],
                [("first:2", true), ("second:1", true)],
                Some("False"),
            ),
            "await-containers",
        ),
    ];
    for (name, subject, expected) in cases {
        let step = decide_refresh(&subject, &gates, &at(NOW)).unwrap();
        let kind = match &step {
            RefreshStep::MarkReady(c) if c.status == "True" => "mark",
            RefreshStep::Idle => "idle",
            RefreshStep::AwaitContainers(_) => "await-containers",
            RefreshStep::AwaitBatchReady(_) => "await-ready",
            RefreshStep::StartNextBatch => "next",
            other => panic!("{name}: unexpected {other:?}"),
        };
        assert_eq!(kind, expected, "{name}");
    }

    // The next batch: the second container's image, its old imageID, and a second record.
    let ready = refresh_pod(
        Some(first_batch),
        ["first:2", "second:1"],
        [("first:2", true), ("second:1", true)],
        Some("False"),
    );
    let plan = plan_next_batch(&ready, &gates, &at(NOW)).unwrap().unwrap();
    assert_eq!(plan.batch, ["second"]);
    assert_eq!(
        plan.patch.pointer("/spec/containers"),
        Some(&json!([{"name": "second", "image": "second:2"}]))
    );
    assert_eq!(plan.patch.pointer("/metadata/resourceVersion"), Some(&json!("7")));
    assert_eq!(
        plan.state.last_container_statuses,
        last_statuses(&[("first", "id-first:1"), ("second", "id-second:1")])
    );
    assert_eq!(plan.state.next_container_images, None);
    assert_eq!(plan.state.pre_check_before_next, None);
    assert_eq!(plan.state.container_batches_record.as_ref().map(Vec::len), Some(2));
    assert_eq!(
        plan_next_batch(
            &refresh_pod(None, ["a:1", "b:1"], [("a:1", true), ("b:1", true)], None),
            &gates,
            &at(NOW)
        )
        .unwrap(),
        None
    );
}

#[test]
fn update_never_names_foreign_keys() {
    // Kruise Rollout's labels and anything else on the pod are left to their writers.
    let mut subject = running_pod();
    subject.metadata.annotations = Some(strings(&[("team.example/owner", "blue")]));
    let plan = plan_update(
        &subject,
        &image_spec(0),
        &DefaultRevisionAdapter.revision_labels("web-new"),
        &UpdateOptions::default(),
        &InPlaceGates::default(),
        &at(NOW),
    )
    .unwrap();
    let labels = plan.patch["metadata"]["labels"].as_object().unwrap();
    assert!(!labels.contains_key("rollouts.kruise.io/stable"));
    let annotations = plan.patch["metadata"]["annotations"].as_object().unwrap();
    assert!(!annotations.contains_key("team.example/owner"));
}
