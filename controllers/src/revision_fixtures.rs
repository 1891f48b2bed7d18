//! Takeover without a rollout: for every golden fixture written by upstream OpenKruise v1.9.0's
//! own Go code (`crds/gojson/generate.sh`, fixtures in `crds/src/gojson/fixtures`), our mutating
//! webhook applied to the manifest and then our revision code give upstream's revision: the same
//! data bytes, the same name (CloneSet, Advanced StatefulSet), the same labels, a data value
//! equal to upstream's as kube-rs reads it back, and pods labelled as upstream labels them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::path::PathBuf;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kruise_crds::{
    apps::{v1alpha1, v1beta1},
    conversion::{
        STASH_ANNOTATION_PREFIX, cloneset_to_v1beta1, daemonset_to_v1beta1, statefulset_to_v1beta1,
    },
};
use kube::{
    ResourceExt,
    core::{DynamicObject, admission::AdmissionRequest},
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{
    cloneset::{self, pods::revision_labels},
    daemonset, statefulset,
    webhook::{self, admission::parse_review, statefulset::StatefulSetAdmission},
    workload::revision::{data_bytes, equal_data, template_of},
};

fn fixtures() -> Vec<Value> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crds/src/gojson/fixtures");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".json") && name != "quantities.json" && name != "templates.json"
        })
        .collect();
    paths.sort();
    paths.iter().map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()).collect()
}

fn request(manifest: &Value, resource: &str) -> AdmissionRequest<DynamicObject> {
    let version = manifest["apiVersion"].as_str().unwrap().trim_start_matches("apps.kruise.io/");
    let body = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "fixture",
            "kind": {"group": "apps.kruise.io", "version": version, "kind": manifest["kind"]},
            "resource": {"group": "apps.kruise.io", "version": version, "resource": resource},
            "name": manifest["metadata"]["name"], "namespace": "default", "operation": "CREATE",
            "userInfo": {"username": "admin"},
            "object": manifest,
        }
    });
    parse_review(body.to_string().as_bytes()).unwrap()
}

/// What our mutating webhook stores for the manifest (its patch applied).
fn stored(manifest: &Value) -> Value {
    let response = match manifest["kind"].as_str().unwrap() {
        "CloneSet" => webhook::cloneset::mutate(&request(manifest, "clonesets")),
        "StatefulSet" => {
            webhook::statefulset::mutate(&request(manifest, "statefulsets"), StatefulSetAdmission::default())
        }
        "DaemonSet" => webhook::daemonset::mutate(&request(manifest, "daemonsets")),
        other => panic!("unexpected kind {other}"),
    };
    assert!(response.allowed, "{response:?}");
    let mut object = manifest.clone();
    if let Some(bytes) = &response.patch {
        let patch: json_patch::Patch = serde_json::from_slice(bytes).unwrap();
        json_patch::patch(&mut object, &patch.0).unwrap();
    }
    object
}

fn v1alpha1(manifest: &Value) -> bool {
    manifest["apiVersion"] == "apps.kruise.io/v1alpha1"
}

/// Our revision for the fixture's manifest, and what upstream computed.
fn ours_and_upstream(fixture: &Value) -> (ControllerRevision, &Value) {
    let manifest = &fixture["manifest"];
    let stored = stored(manifest);
    let revision = match manifest["kind"].as_str().unwrap() {
        "CloneSet" => {
            let cs: v1beta1::CloneSet = if v1alpha1(manifest) {
                cloneset_to_v1beta1(&serde_json::from_value::<v1alpha1::CloneSet>(stored).unwrap())
            } else {
                serde_json::from_value(stored).unwrap()
            };
            cloneset::revision::new_revision(&cs, 1, Some(0))
        }
        "StatefulSet" => {
            let set: v1beta1::StatefulSet = if v1alpha1(manifest) {
                statefulset_to_v1beta1(&serde_json::from_value::<v1alpha1::StatefulSet>(stored).unwrap())
            } else {
                serde_json::from_value(stored).unwrap()
            };
            statefulset::revision::new_revision(&set, 1, Some(0))
        }
        _ => {
            let ds: v1beta1::DaemonSet = if v1alpha1(manifest) {
                daemonset_to_v1beta1(&serde_json::from_value::<v1alpha1::DaemonSet>(stored).unwrap())
            } else {
                serde_json::from_value(stored).unwrap()
            };
            daemonset::revision::new_revision(&ds, 1, None)
        }
    };
    (revision, &fixture["revision"])
}

fn data(revision: &ControllerRevision) -> &Value {
    &revision.data.as_ref().unwrap().0
}

#[test]
fn our_defaulting_and_revisions_give_upstream_data_bytes() {
    let fixtures = fixtures();
    assert_eq!(fixtures.len(), 16);
    let mismatches: Vec<String> = fixtures
        .iter()
        .filter_map(|fixture| {
            let (ours, upstream) = ours_and_upstream(fixture);
            let bytes = String::from_utf8(data_bytes(data(&ours))).unwrap();
            (bytes != upstream["data"].as_str().unwrap())
                .then(|| format!("{}:\n  ours     {bytes}\n  upstream {}", fixture["name"], upstream["data"]))
        })
        .collect();
    assert!(mismatches.is_empty(), "data differs from upstream's:\n{}", mismatches.join("\n"));
    for fixture in &fixtures {
        let name = fixture["name"].as_str().unwrap();
        let (ours, upstream) = ours_and_upstream(fixture);
        let expected = upstream["data"].as_str().unwrap();
        // What kube-rs reads back from an upstream revision equals ours (`equal_data`).
        let read_back: Value = serde_json::from_str(expected).unwrap();
        assert_eq!(data(&ours), &read_back, "{name}: data as read back");
        let upstream_revision =
            ControllerRevision { data: Some(RawExtension(read_back)), ..Default::default() };
        assert!(equal_data(&ours, &upstream_revision), "{name}");
    }
}

#[test]
fn cloneset_and_statefulset_revisions_are_named_and_labelled_as_upstream() {
    for fixture in fixtures().iter().filter(|f| f["manifest"]["kind"] != "DaemonSet") {
        let name = fixture["name"].as_str().unwrap();
        let (ours, upstream) = ours_and_upstream(fixture);
        assert_eq!(ours.name_any(), upstream["name"].as_str().unwrap(), "{name}: revision name");
        let labels: Value = serde_json::to_value(ours.labels()).unwrap();
        assert_eq!(labels, upstream["labels"], "{name}: revision labels");
        let annotations = ours.annotations();
        // The workload's annotations, and for CloneSet the claim templates' hash. Not the copy of
        // a v1alpha1 spec our lossless conversion keeps on the object (see `conversion`), which
        // upstream's conversion does not write: revision annotations are not compared by either.
        let mut annotations = annotations.clone();
        annotations.retain(|key, _| !key.starts_with(STASH_ANNOTATION_PREFIX));
        let annotations: Value = serde_json::to_value(annotations).unwrap();
        assert_eq!(
            annotations,
            upstream.get("annotations").cloned().unwrap_or(json!({})),
            "{name}: annotations"
        );
    }
}

/// The DaemonSet names revisions with a hash of the Go value (`ComputeHash`, not reproduced):
/// what matters for a takeover is that the data is equal, so that the revision upstream made is
/// found as the current one and its hash label is what pods are compared with.
#[test]
fn daemonset_history_finds_upstream_revision_as_current() {
    for fixture in fixtures().iter().filter(|f| f["manifest"]["kind"] == "DaemonSet") {
        let name = fixture["name"].as_str().unwrap();
        let upstream = &fixture["revision"];
        let labels = serde_json::from_value(upstream["labels"].clone()).unwrap();
        let mut revision = ControllerRevision {
            data: Some(RawExtension(serde_json::from_str(upstream["data"].as_str().unwrap()).unwrap())),
            revision: 1,
            ..Default::default()
        };
        revision.metadata.name = Some(upstream["name"].as_str().unwrap().to_string());
        revision.metadata.labels = Some(labels);
        let manifest = &fixture["manifest"];
        let ds: v1beta1::DaemonSet = if v1alpha1(manifest) {
            daemonset_to_v1beta1(&serde_json::from_value::<v1alpha1::DaemonSet>(stored(manifest)).unwrap())
        } else {
            serde_json::from_value(stored(manifest)).unwrap()
        };
        let plan = daemonset::revision::plan_history(&ds, std::slice::from_ref(&revision), None);
        assert_eq!(plan.current.as_deref(), upstream["name"].as_str(), "{name}");
        assert_eq!(plan.renumber, None, "{name}");
        let hash = daemonset::revision::hash_of(&revision);
        assert_eq!(Some(hash.as_str()), upstream["labels"]["controller-revision-hash"].as_str(), "{name}");
    }
}

/// Pods carry `controller-revision-hash: <revision name>` and `pod-template-hash: <short hash>`
/// (upstream `NewVersionedPods`; the lifecycle state label is added later by both).
#[test]
fn cloneset_pods_are_labelled_as_upstream_labels_them() {
    for fixture in fixtures().iter().filter(|f| f["manifest"]["kind"] == "CloneSet") {
        let name = fixture["name"].as_str().unwrap();
        let (ours, _) = ours_and_upstream(fixture);
        let cs: v1beta1::CloneSet = serde_json::from_value(fixture["controller"].clone()).unwrap();
        let template = template_of(&ours).unwrap();
        let pod = cloneset::pods::new_pod(
            &cs,
            &template,
            &ours.name_any(),
            "abcde",
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        );
        let mut labels = pod.labels().clone();
        labels.remove(kruise_crds::common::LIFECYCLE_STATE_KEY);
        assert_eq!(serde_json::to_value(&labels).unwrap(), fixture["podLabels"], "{name}: pod labels");
        let revision = revision_labels(&ours.name_any());
        assert!(revision.iter().all(|(k, v)| labels.get(k) == Some(v)), "{name}");
    }
}
