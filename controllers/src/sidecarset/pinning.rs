//! Revision pinning at injection (`injectionStrategy.revision`, upstream
//! `getSuitableRevisionSidecarSet`): which revision of a SidecarSet a new pod gets, and the
//! SidecarSet as it was at that revision, restored from its ControllerRevision.

use std::collections::BTreeMap;

use k8s_openapi::{api::apps::v1::ControllerRevision, apimachinery::pkg::util::intstr::IntOrString};
use kruise_crds::{
    apps::v1beta1::{SIDECARSET_CUSTOM_VERSION_LABEL, SidecarSet, SidecarSetInjectRevisionPolicy},
    defaults::{SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION},
    selector,
    validation::SIDECARSET_REVISION_OWNER_LABEL,
};
use serde_json::Value;

/// Whether new pods may get another revision than the latest (the server then reads the
/// SidecarSet's ControllerRevisions).
pub fn pins_revision(set: &SidecarSet) -> bool {
    set.spec
        .injection_strategy
        .revision
        .as_ref()
        .is_some_and(|r| r.revision_name.is_some() || r.custom_version.is_some())
}

/// The pinned revision among `revisions` (the manager namespace's): by name, or the newest of
/// this SidecarSet's revisions with the custom version.
pub fn pinned_revision<'a>(
    set: &SidecarSet,
    revisions: &'a [ControllerRevision],
) -> Option<&'a ControllerRevision> {
    let pinned = set.spec.injection_strategy.revision.as_ref()?;
    if let Some(name) = &pinned.revision_name {
        return revisions.iter().find(|r| r.metadata.name.as_deref() == Some(name.as_str()));
    }
    let version = pinned.custom_version.as_ref()?;
    let owner = set.metadata.name.as_deref().unwrap_or_default();
    let label =
        |r: &ControllerRevision, key: &str| r.metadata.labels.as_ref().and_then(|l| l.get(key)).cloned();
    revisions
        .iter()
        .filter(|r| label(r, SIDECARSET_REVISION_OWNER_LABEL).as_deref() == Some(owner))
        .filter(|r| label(r, SIDECARSET_CUSTOM_VERSION_LABEL).as_ref() == Some(version))
        .max_by(|a, b| {
            a.revision
                .cmp(&b.revision)
                .then_with(|| a.metadata.creation_timestamp.cmp(&b.metadata.creation_timestamp))
        })
}

/// The SidecarSet as it was at `revision`: the recorded containers, init containers, volumes,
/// pull secrets and metadata patches, the revision's hashes, and the revision as its latest.
pub fn restore(set: &SidecarSet, revision: &ControllerRevision) -> Option<SidecarSet> {
    let data = revision.data.as_ref()?.0.get("spec")?;
    let mut spec = serde_json::to_value(&set.spec).ok()?;
    for key in ["containers", "initContainers", "volumes", "imagePullSecrets", "patchPodMetadata"] {
        match data.get(key) {
            Some(Value::Null) | None => {
                if let Some(object) = spec.as_object_mut() {
                    object.remove(key);
                }
            }
            Some(value) => spec[key] = value.clone(),
        }
    }
    let mut restored = set.clone();
    restored.spec = serde_json::from_value(spec).ok()?;
    let annotations = restored.metadata.annotations.get_or_insert_with(BTreeMap::new);
    for key in [SIDECARSET_HASH_ANNOTATION, SIDECARSET_HASH_WITHOUT_IMAGE_ANNOTATION] {
        if let Some(value) = revision.metadata.annotations.as_ref().and_then(|a| a.get(key)) {
            annotations.insert(key.to_string(), value.clone());
        }
    }
    let status = restored.status.get_or_insert_with(Default::default);
    status.latest_revision = revision.metadata.name.clone().unwrap_or_default();
    Some(restored)
}

/// The SidecarSet a new pod with `pod_labels` gets (upstream's rules): the latest when nothing
/// is pinned or the pinned revision is gone; the pinned one while updates are paused or with
/// policy `Always`; with `Partial`, the pinned one for pods the update selector leaves out,
/// otherwise the pinned one with the probability of a percentage `partition` (`roll` is a
/// uniform draw in [0, 1)).
pub fn revision_for_pod(
    set: &SidecarSet,
    revisions: &[ControllerRevision],
    pod_labels: &BTreeMap<String, String>,
    roll: f64,
) -> SidecarSet {
    let Some(pinned) = pinned_revision(set, revisions).and_then(|revision| restore(set, revision)) else {
        return set.clone();
    };
    let strategy = &set.spec.update_strategy;
    if strategy.paused {
        return pinned;
    }
    let policy = set.spec.injection_strategy.revision.as_ref().map(|r| r.policy.clone()).unwrap_or_default();
    if policy != SidecarSetInjectRevisionPolicy::Partial {
        return pinned;
    }
    if strategy.selector.as_ref().is_some_and(|s| !selector::matches(s, pod_labels)) {
        return pinned;
    }
    match &strategy.partition {
        Some(IntOrString::String(percent)) => {
            let probability = percent.trim_end_matches('%').parse::<f64>().map_or(0.0, |p| p / 100.0);
            if roll < probability { pinned } else { set.clone() }
        }
        _ => set.clone(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use serde_json::json;

    use super::*;

    fn set(strategy: Value, injection: Value) -> SidecarSet {
        serde_json::from_value(json!({
            "metadata": {"name": "logs", "annotations": {"kruise.io/sidecarset-hash": "latest-hash"}},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "containers": [{"name": "agent", "image": "agent:latest"}],
                     "updateStrategy": strategy, "injectionStrategy": injection},
            "status": {"latestRevision": "logs-latest"},
        }))
        .unwrap()
    }

    fn revision(name: &str, number: i64, version: &str, image: &str) -> ControllerRevision {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "kruise-system",
                         "labels": {"kruise.io/sidecarset-name": "logs", "apps.kruise.io/sidecarset-custom-version": version},
                         "annotations": {"kruise.io/sidecarset-hash": format!("{name}-hash")}},
            "revision": number,
            "data": {"spec": {"$patch": "replace", "containers": [{"name": "agent", "image": image}],
                              "initContainers": null, "volumes": null, "imagePullSecrets": null, "patchPodMetadata": null}},
        }))
        .unwrap()
    }

    fn revisions() -> Vec<ControllerRevision> {
        vec![
            revision("logs-a", 1, "1", "agent:1"),
            revision("logs-b", 2, "2", "agent:2"),
            revision("logs-c", 3, "2", "agent:2b"),
        ]
    }

    fn image(set: &SidecarSet) -> &str {
        set.spec.containers[0].container.image.as_deref().unwrap()
    }

    #[test]
    fn injection_strategy_revision() {
        let web = BTreeMap::from([("app".to_string(), "web".to_string())]);
        let canary = BTreeMap::from([
            ("app".to_string(), "web".to_string()),
            ("canary".to_string(), "true".to_string()),
        ]);
        let cases = [
            (
                "nothing pinned: the latest",
                set(json!({}), json!({})),
                &web,
                0.0,
                "agent:latest",
                "logs-latest",
            ),
            (
                "by name, Always",
                set(json!({}), json!({"revision": {"revisionName": "logs-a"}})),
                &web,
                0.9,
                "agent:1",
                "logs-a",
            ),
            (
                "by custom version: its newest revision",
                set(json!({}), json!({"revision": {"customVersion": "2"}})),
                &web,
                0.9,
                "agent:2b",
                "logs-c",
            ),
            (
                "pinned revision gone: the latest",
                set(json!({}), json!({"revision": {"revisionName": "gone"}})),
                &web,
                0.0,
                "agent:latest",
                "logs-latest",
            ),
            (
                "Partial, update paused: pinned",
                set(
                    json!({"paused": true}),
                    json!({"revision": {"revisionName": "logs-a", "policy": "Partial"}}),
                ),
                &web,
                0.99,
                "agent:1",
                "logs-a",
            ),
            (
                "Partial, not selected by the update selector: pinned",
                set(
                    json!({"selector": {"matchLabels": {"canary": "true"}}}),
                    json!({"revision": {"revisionName": "logs-a", "policy": "Partial"}}),
                ),
                &web,
                0.99,
                "agent:1",
                "logs-a",
            ),
            (
                "Partial, selected, integer partition: the latest",
                set(
                    json!({"selector": {"matchLabels": {"canary": "true"}}, "partition": 3}),
                    json!({"revision": {"revisionName": "logs-a", "policy": "Partial"}}),
                ),
                &canary,
                0.0,
                "agent:latest",
                "logs-latest",
            ),
            (
                "Partial, 70% partition, draw 0.5: pinned",
                set(
                    json!({"partition": "70%"}),
                    json!({"revision": {"revisionName": "logs-a", "policy": "Partial"}}),
                ),
                &web,
                0.5,
                "agent:1",
                "logs-a",
            ),
            (
                "Partial, 70% partition, draw 0.8: the latest",
                set(
                    json!({"partition": "70%"}),
                    json!({"revision": {"revisionName": "logs-a", "policy": "Partial"}}),
                ),
                &web,
                0.8,
                "agent:latest",
                "logs-latest",
            ),
        ];
        for (name, set, labels, roll, want_image, want_revision) in cases {
            let chosen = revision_for_pod(&set, &revisions(), labels, roll);
            assert_eq!(image(&chosen), want_image, "{name}");
            assert_eq!(chosen.status.as_ref().unwrap().latest_revision, want_revision, "{name}");
        }
    }

    #[test]
    fn a_restored_revision_carries_its_hash() {
        let restored = restore(&set(json!({}), json!({})), &revisions()[0]).unwrap();
        assert_eq!(restored.metadata.annotations.unwrap()["kruise.io/sidecarset-hash"], "logs-a-hash");
        assert!(pins_revision(&set(json!({}), json!({"revision": {"customVersion": "1"}}))));
        assert!(!pins_revision(&set(json!({}), json!({}))));
    }
}
