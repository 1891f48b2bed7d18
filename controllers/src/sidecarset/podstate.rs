//! What a pod records about the SidecarSets injected into it: the `kruise.io/sidecarset-hash`
//! and `-hash-without-image` annotations (a JSON map from SidecarSet name to
//! [`SidecarSetUpgradeSpec`]), `kruise.io/sidecarset-injected-list`, and the hot-upgrade
//! working-container map.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

/// Pod annotation: comma-separated names of the SidecarSets injected into the pod.
pub const SIDECARSET_INJECTED_LIST_ANNOTATION: &str = "kruise.io/sidecarset-injected-list";
/// Pod annotation: JSON map from a hot-upgrade sidecar's name to its working container.
pub const SIDECARSET_WORKING_HOT_UPGRADE_ANNOTATION: &str =
    "kruise.io/sidecarset-working-hotupgrade-container";

/// One SidecarSet's entry in a pod's hash annotations: which revision of its sidecars the pod
/// runs. Field names and order are upstream's, so pods injected by either manager read alike.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SidecarSetUpgradeSpec {
    /// When the pod got this revision.
    #[serde(rename = "updateTimestamp")]
    pub update_timestamp: Option<Time>,
    /// The SidecarSet's hash (or hash without image) of that revision.
    #[serde(rename = "hash", default)]
    pub hash: String,
    /// The SidecarSet's name.
    #[serde(rename = "sidecarSetName", default)]
    pub sidecarset_name: String,
    /// Names of the SidecarSet's containers (and native sidecar init containers), sorted.
    #[serde(rename = "sidecarList", default)]
    pub sidecar_list: Option<Vec<String>>,
    /// The SidecarSet's ControllerRevision of that revision, when known.
    #[serde(rename = "controllerRevision", default, skip_serializing_if = "String::is_empty")]
    pub controller_revision: String,
}

/// The entries of the hash annotation `key` on `metadata`. Upstream's older pods hold a plain
/// map from name to hash, read as entries with only the hash. An unreadable value reads as
/// empty, as upstream's reader does.
pub fn upgrade_specs(metadata: &ObjectMeta, key: &str) -> BTreeMap<String, SidecarSetUpgradeSpec> {
    let Some(text) = metadata.annotations.as_ref().and_then(|a| a.get(key)).filter(|t| !t.is_empty()) else {
        return BTreeMap::new();
    };
    if let Ok(specs) = serde_json::from_str::<BTreeMap<String, SidecarSetUpgradeSpec>>(text) {
        return specs;
    }
    serde_json::from_str::<BTreeMap<String, String>>(text)
        .map(|hashes| {
            hashes
                .into_iter()
                .map(|(name, hash)| {
                    let spec =
                        SidecarSetUpgradeSpec { hash, sidecarset_name: name.clone(), ..Default::default() };
                    (name, spec)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The names in `kruise.io/sidecarset-injected-list`.
pub fn injected_sidecarsets(metadata: &ObjectMeta) -> BTreeSet<String> {
    metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(SIDECARSET_INJECTED_LIST_ANNOTATION))
        .map(|list| list.split(',').filter(|name| !name.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

/// The working container of every hot-upgrade sidecar of the pod (empty when unreadable).
pub fn working_hot_upgrade_containers(metadata: &ObjectMeta) -> BTreeMap<String, String> {
    metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(SIDECARSET_WORKING_HOT_UPGRADE_ANNOTATION))
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use super::*;

    fn annotated(key: &str, value: &str) -> ObjectMeta {
        ObjectMeta { annotations: Some([(key.to_string(), value.to_string())].into()), ..Default::default() }
    }

    #[test]
    fn hash_annotations_read_in_both_of_upstreams_formats() {
        let current = annotated(
            "kruise.io/sidecarset-hash",
            r#"{"logs":{"updateTimestamp":"2026-12-01T10:00:00Z","hash":"abc","sidecarSetName":"logs","sidecarList":["agent"],"controllerRevision":"logs-1"}}"#,
        );
        let specs = upgrade_specs(&current, "kruise.io/sidecarset-hash");
        assert_eq!(specs["logs"].hash, "abc");
        assert_eq!(specs["logs"].sidecar_list.as_deref(), Some(&["agent".to_string()][..]));
        assert_eq!(specs["logs"].controller_revision, "logs-1");

        let older = annotated("kruise.io/sidecarset-hash", r#"{"logs":"abc"}"#);
        let specs = upgrade_specs(&older, "kruise.io/sidecarset-hash");
        assert_eq!(specs["logs"].hash, "abc");
        assert_eq!(specs["logs"].sidecarset_name, "logs");

        assert!(
            upgrade_specs(&annotated("kruise.io/sidecarset-hash", "not json"), "kruise.io/sidecarset-hash")
                .is_empty()
        );
    }

    #[test]
    fn the_injected_list_is_a_comma_list() {
        let metadata = annotated(SIDECARSET_INJECTED_LIST_ANNOTATION, "logs,metrics");
        assert_eq!(
            injected_sidecarsets(&metadata),
            BTreeSet::from(["logs".to_string(), "metrics".to_string()])
        );
        assert!(injected_sidecarsets(&ObjectMeta::default()).is_empty());
    }
}
