//! What a workload controller tells the engine: feature gates, per-update options, how its pods
//! carry their revision, and the revisions themselves.

use std::collections::BTreeMap;

use k8s_openapi::api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec};
use kruise_crds::common::well_known::{CONTROLLER_REVISION_HASH, POD_TEMPLATE_HASH};
use serde_json::Value;

use super::error::InPlaceError;

/// Annotation on a CloneSet ControllerRevision with the hash of its volumeClaimTemplates.
pub const VOLUME_CLAIM_TEMPLATE_HASH: &str = "kruise.io/cloneset-volumeclaimtemplate-hash";

/// The Kruise feature gates that change what the engine does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InPlaceGates {
    /// `InPlaceWorkloadVerticalScaling`: cpu/memory changes go through `pods/resize` instead of
    /// recreating the pod. Upstream default off; on here (Kubernetes >= 1.33 resizes in place).
    pub vertical_scaling: bool,
    /// `InPlaceUpdateEnvFromMetadata` (upstream default on): a label/annotation change read by a
    /// container's env through the downward API restarts that container in place.
    pub env_from_metadata: bool,
    /// `RecreatePodWhenChangeVCTInCloneSetGate` (upstream default off): a change of the
    /// revision's volumeClaimTemplates hash forces a recreate, so pods get matching PVCs.
    pub recreate_when_vct_changes: bool,
}

impl Default for InPlaceGates {
    fn default() -> Self {
        Self { vertical_scaling: true, env_from_metadata: true, recreate_when_vct_changes: false }
    }
}

/// Options of one update, set by the workload controller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateOptions {
    /// `inPlaceUpdateStrategy.gracePeriodSeconds`: wait this long after marking the pod
    /// NotReady before changing its spec (endpoints drain first).
    pub grace_period_seconds: i32,
    /// Ignore a volumeClaimTemplates hash change (CloneSet `InPlaceOnly`).
    pub ignore_volume_claim_templates_hash_diff: bool,
    /// Labels written together with the update (e.g. the lifecycle state `Updating`). Only
    /// these keys are touched.
    pub extra_labels: BTreeMap<String, String>,
    /// Annotations written together with the update (e.g. the lifecycle timestamp).
    pub extra_annotations: BTreeMap<String, String>,
}

/// How a workload's pods carry the revision they run (upstream `revisionadapter`): the
/// labels written on an in-place update, and the test that a pod is at a revision (a grace
/// period is dropped when the pod no longer is).
pub trait RevisionAdapter: Send + Sync {
    /// The labels that mark a pod as running `revision` (a ControllerRevision name).
    fn revision_labels(&self, revision: &str) -> BTreeMap<String, String>;
    /// Whether a pod with these labels runs `revision`.
    fn is_at_revision(&self, labels: &BTreeMap<String, String>, revision: &str) -> bool;
}

/// `controller-revision-hash = <revision>` (Advanced StatefulSet, Advanced DaemonSet).
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultRevisionAdapter;

impl RevisionAdapter for DefaultRevisionAdapter {
    fn revision_labels(&self, revision: &str) -> BTreeMap<String, String> {
        [(CONTROLLER_REVISION_HASH.to_string(), revision.to_string())].into()
    }

    fn is_at_revision(&self, labels: &BTreeMap<String, String>, revision: &str) -> bool {
        labels.get(CONTROLLER_REVISION_HASH).is_some_and(|v| v == revision)
    }
}

/// CloneSet: `controller-revision-hash` holds the full revision name (or the short hash with
/// the `CloneSetShortHash` gate) and `pod-template-hash` always the short hash; two revisions
/// are the same when their short hashes are.
#[derive(Clone, Copy, Debug, Default)]
pub struct CloneSetRevisionAdapter {
    /// The `CloneSetShortHash` gate.
    pub short_hash: bool,
}

/// The hash part of a revision name: what follows its last `-`.
pub fn short_hash(revision: &str) -> &str {
    revision.rsplit('-').next().unwrap_or(revision)
}

impl RevisionAdapter for CloneSetRevisionAdapter {
    fn revision_labels(&self, revision: &str) -> BTreeMap<String, String> {
        let short = short_hash(revision).to_string();
        let full = if self.short_hash { short.clone() } else { revision.to_string() };
        [(CONTROLLER_REVISION_HASH.to_string(), full), (POD_TEMPLATE_HASH.to_string(), short)].into()
    }

    fn is_at_revision(&self, labels: &BTreeMap<String, String>, revision: &str) -> bool {
        let current = labels.get(CONTROLLER_REVISION_HASH).map(String::as_str).unwrap_or_default();
        current == revision || short_hash(current) == short_hash(revision)
    }
}

/// A workload revision as the engine needs it: its name, its pod template, and the
/// volumeClaimTemplates hash annotation (CloneSet only).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Revision {
    /// The ControllerRevision name (what pods' revision labels hold).
    pub name: String,
    /// The pod template of this revision.
    pub template: PodTemplateSpec,
    /// `kruise.io/cloneset-volumeclaimtemplate-hash`, when the revision carries it.
    pub volume_claim_templates_hash: Option<String>,
}

impl Revision {
    /// Reads a ControllerRevision whose data is `{"spec":{"template":{...}}}` (the form CloneSet,
    /// Advanced StatefulSet and Advanced DaemonSet store; a `$patch` directive is ignored).
    pub fn from_controller_revision(revision: &ControllerRevision) -> Result<Self, InPlaceError> {
        let name = revision.metadata.name.clone().unwrap_or_default();
        let invalid = |reason: String| InPlaceError::InvalidRevision { name: name.clone(), reason };
        let data = revision.data.as_ref().ok_or_else(|| invalid("no data".into()))?;
        let mut template = data.0.pointer("/spec/template").cloned().unwrap_or(Value::Null);
        if let Value::Object(map) = &mut template {
            map.remove("$patch");
        } else {
            return Err(invalid("data has no spec.template object".into()));
        }
        let template: PodTemplateSpec =
            serde_json::from_value(template).map_err(|e| invalid(format!("spec.template: {e}")))?;
        let volume_claim_templates_hash =
            revision.metadata.annotations.as_ref().and_then(|a| a.get(VOLUME_CLAIM_TEMPLATE_HASH)).cloned();
        Ok(Self { name, template, volume_claim_templates_hash })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::apimachinery::pkg::{apis::meta::v1::ObjectMeta, runtime::RawExtension};
    use serde_json::json;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn cloneset_revision_labels_and_matching() {
        let long = CloneSetRevisionAdapter { short_hash: false };
        assert_eq!(
            long.revision_labels("web-7d9f8"),
            labels(&[("controller-revision-hash", "web-7d9f8"), ("pod-template-hash", "7d9f8")])
        );
        let short = CloneSetRevisionAdapter { short_hash: true };
        assert_eq!(
            short.revision_labels("web-7d9f8"),
            labels(&[("controller-revision-hash", "7d9f8"), ("pod-template-hash", "7d9f8")])
        );
        let cases = [
            (labels(&[("controller-revision-hash", "web-7d9f8")]), "web-7d9f8", true),
            (labels(&[("controller-revision-hash", "7d9f8")]), "web-7d9f8", true),
            (labels(&[("controller-revision-hash", "web-aaaaa")]), "web-7d9f8", false),
            (labels(&[]), "web-7d9f8", false),
        ];
        for (pod, revision, expected) in cases {
            assert_eq!(long.is_at_revision(&pod, revision), expected, "{pod:?} {revision}");
        }
        assert!(DefaultRevisionAdapter.is_at_revision(&labels(&[("controller-revision-hash", "r1")]), "r1"));
        assert!(
            !DefaultRevisionAdapter.is_at_revision(&labels(&[("controller-revision-hash", "x-r1")]), "r1")
        );
    }

    #[test]
    fn revision_from_controller_revision() {
        let revision = ControllerRevision {
            metadata: ObjectMeta {
                name: Some("web-1".into()),
                annotations: Some(labels(&[(VOLUME_CLAIM_TEMPLATE_HASH, "123")])),
                ..Default::default()
            },
            data: Some(RawExtension(json!({"spec": {"template": {
                "$patch": "replace",
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1"}]}
            }}}))),
            revision: 1,
        };
        let parsed = Revision::from_controller_revision(&revision).unwrap();
        assert_eq!(parsed.name, "web-1");
        assert_eq!(parsed.volume_claim_templates_hash.as_deref(), Some("123"));
        let spec = parsed.template.spec.unwrap();
        assert_eq!(spec.containers[0].image.as_deref(), Some("nginx:1"));

        let broken = ControllerRevision { data: Some(RawExtension(json!({"spec": {}}))), ..revision };
        assert!(Revision::from_controller_revision(&broken).is_err());
    }
}
