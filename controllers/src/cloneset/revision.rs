//! CloneSet revisions as ControllerRevisions, the way Kubernetes' controller history keeps them:
//! the data is a strategic-merge patch `{"spec":{"template":{..., "$patch":"replace"}}}` that
//! restores the template; the name is `<cloneset>-<hash>` where the hash is FNV-1 32 of the data
//! (plus the collision count) in the safe alphabet; an equal older revision is reused on rollback
//! by raising its `revision` number; history beyond `revisionHistoryLimit` is deleted unless a
//! pod or the current/update revision still uses it.
//!
//! The data is what upstream's `getPatch` writes, byte for byte ([`revision_data`],
//! [`data_bytes`]): the template as Go's `encoding/json` marshals the typed
//! `corev1.PodTemplateSpec` of apimachinery v0.32 (`"resources":{}`, `"creationTimestamp":null`,
//! canonical quantities; see [`kruise_crds::gojson`]), through `map[string]interface{}`, keys
//! sorted, HTML characters escaped. So a revision upstream wrote is found equal to ours for the
//! same template, names agree, and revisions are sent with exactly those bytes
//! ([`create_revision`]) so that upstream, which compares the raw bytes, finds ours equal too.
//! These encodings are shared by the Advanced StatefulSet and Advanced DaemonSet revisions.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec},
    apimachinery::pkg::{apis::meta::v1::ObjectMeta, runtime::RawExtension},
};
use kruise_crds::{
    apps::v1beta1::CloneSet,
    gojson::{self, POD_TEMPLATE_SPEC, Types},
};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::ControllerError;

/// Label Kubernetes puts on a revision: its hash.
pub const REVISION_HASH_LABEL: &str = "controller.kubernetes.io/hash";
/// Annotation on a revision: the hash of the volume claim templates (a change recreates pods).
pub const VCT_HASH_ANNOTATION: &str = "kruise.io/cloneset-volumeclaimtemplate-hash";

const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Kubernetes' `rand.SafeEncodeString`: each character mapped into an alphabet without vowels or
/// look-alike characters, so a hash never spells a word.
pub fn safe_encode(text: &str) -> String {
    text.bytes().map(|b| SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()] as char).collect()
}

/// FNV-1 32-bit (Go's `fnv.New32`).
fn fnv1_32(chunks: &[&[u8]]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for chunk in chunks {
        for byte in *chunk {
            hash = hash.wrapping_mul(0x0100_0193);
            hash ^= u32::from(*byte);
        }
    }
    hash
}

/// The hash of revision data with a collision count, as `HashControllerRevision` computes it.
pub fn revision_hash(data: &[u8], collision_count: Option<i32>) -> String {
    let probe = collision_count.map(|c| c.to_string());
    let mut chunks: Vec<&[u8]> = vec![data];
    if let Some(probe) = &probe {
        chunks.push(probe.as_bytes());
    }
    safe_encode(&fnv1_32(&chunks).to_string())
}

/// `<prefix>-<hash>`, the prefix cut so the name stays within 253 characters.
pub fn revision_name(cloneset: &str, hash: &str) -> String {
    let prefix: String = cloneset.chars().take(223).collect();
    format!("{prefix}-{hash}")
}

/// The short hash (the part after the last `-`), used as the `pod-template-hash` label.
pub fn short_hash(revision: &str) -> &str {
    revision.rsplit('-').next().unwrap_or(revision)
}

/// The revision data for a template, as upstream's `getPatch` computes it:
/// `{"spec":{"template":{..., "$patch":"replace"}}}` with the template as Go marshals the typed
/// `PodTemplateSpec` (the Go types of kruise v1.9.0, so fields added to Kubernetes later are
/// left out as upstream's decode leaves them out), numbers through float64 as in
/// `map[string]interface{}`. [`data_bytes`] writes it as Go does.
pub fn revision_data(template: &PodTemplateSpec) -> Value {
    let typed = serde_json::to_value(template).unwrap_or_else(|_| json!({}));
    let mut template = match gojson::marshal(POD_TEMPLATE_SPEC, &typed, Types::Base) {
        Ok(go) => gojson::untyped(go),
        // Only a value Go could not decode either (an unparsable quantity): upstream would not
        // see the object at all. Keep the template as written.
        Err(error) => {
            tracing::warn!(%error, "pod template is not valid for Go's types; revision data kept as written");
            typed
        }
    };
    if let Some(object) = template.as_object_mut() {
        object.insert("$patch".into(), json!("replace"));
    }
    json!({"spec": {"template": template}})
}

/// The bytes of revision data as upstream writes them (`json.Marshal`): what the hash is computed
/// over and what [`create_revision`] sends.
pub fn data_bytes(data: &Value) -> Vec<u8> {
    gojson::to_vec(data)
}

/// The template stored in revision data.
pub fn template_of(revision: &ControllerRevision) -> Option<PodTemplateSpec> {
    let mut template = revision.data.as_ref()?.0.pointer("/spec/template")?.clone();
    if let Some(object) = template.as_object_mut() {
        object.remove("$patch");
    }
    serde_json::from_value(template).ok()
}

/// The Go message of a PersistentVolumeClaim.
const PERSISTENT_VOLUME_CLAIM: &str = "k8s.io/api/core/v1.PersistentVolumeClaim";

/// The hash of the volume claim templates (upstream `PatchVCTemplateHash`; a change between two
/// revisions rules out an in-place update): empty without templates; else, as upstream computes
/// it, the claims reduced to name and spec and sorted by name, marshalled by Go
/// (`json.Marshal` of the typed slice), rendered as `spew` renders a byte slice
/// (`DeepHashObject`: `([]uint8)[123 34 ...]`), hashed with FNV-1a 32, in decimal. So revisions
/// upstream wrote and ours agree for the same templates.
pub fn vct_hash(cloneset: &CloneSet) -> String {
    let claims = &cloneset.spec.volume_claim_templates;
    if claims.is_empty() {
        return String::new();
    }
    let mut reduced: Vec<(String, Value)> = claims
        .iter()
        .map(|claim| {
            let name = claim.metadata.name.clone().unwrap_or_default();
            let value = json!({"metadata": {"name": name}, "spec": claim.spec});
            (name, value)
        })
        .collect();
    reduced.sort_by(|a, b| a.0.cmp(&b.0));
    let items: Vec<String> = reduced
        .iter()
        .map(|(_, claim)| {
            let typed = gojson::marshal(PERSISTENT_VOLUME_CLAIM, claim, Types::Base)
                .unwrap_or_else(|_| claim.clone());
            String::from_utf8(gojson::to_vec_typed(PERSISTENT_VOLUME_CLAIM, &typed)).unwrap_or_default()
        })
        .collect();
    let json = format!("[{}]", items.join(","));
    let bytes: Vec<String> = json.bytes().map(|b| b.to_string()).collect();
    let spew = format!("([]uint8)[{}]", bytes.join(" "));
    let hash =
        spew.bytes().fold(0x811c_9dc5_u32, |hash, byte| (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193));
    hash.to_string()
}

/// The revision object for the CloneSet's current template (not yet named by hash collisions).
pub fn new_revision(cloneset: &CloneSet, number: i64, collision_count: Option<i32>) -> ControllerRevision {
    let data = revision_data(&cloneset.spec.template);
    let hash = revision_hash(&data_bytes(&data), collision_count);
    let mut labels =
        cloneset.spec.template.metadata.as_ref().and_then(|m| m.labels.clone()).unwrap_or_default();
    labels.insert(REVISION_HASH_LABEL.into(), hash.clone());
    let mut annotations: BTreeMap<String, String> = cloneset.metadata.annotations.clone().unwrap_or_default();
    annotations.insert(VCT_HASH_ANNOTATION.into(), vct_hash(cloneset));
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(&cloneset.name_any(), &hash)),
            namespace: cloneset.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            owner_references: cloneset.controller_owner_ref(&()).map(|r| vec![r]),
            ..Default::default()
        },
        data: Some(RawExtension(data)),
        revision: number,
    }
}

/// Whether two revisions hold the same template: their data as read (the JSON value of the
/// bytes each was written with; ours are upstream's bytes for the same template).
pub fn equal_data(a: &ControllerRevision, b: &ControllerRevision) -> bool {
    a.data.as_ref().map(|d| &d.0) == b.data.as_ref().map(|d| &d.0)
}

/// Creates a revision, its body written as Go writes JSON, so that the stored `data` holds
/// exactly upstream's bytes (kube-rs would write `<`, `>` and `&` unescaped).
pub async fn create_revision(
    api: &Api<ControllerRevision>,
    revision: &ControllerRevision,
) -> Result<ControllerRevision, kube::Error> {
    let body = gojson::to_vec(&serde_json::to_value(revision).map_err(kube::Error::SerdeError)?);
    let request = kube::core::Request::new(api.resource_url())
        .create(&PostParams::default(), body)
        .map_err(kube::Error::BuildRequest)?;
    api.clone().into_client().request(request).await
}

/// Raises a revision's number (a rollback), and sets `annotations` on it, touching nothing else:
/// a merge patch guarded by the resourceVersion read, so the stored data bytes stay as written.
pub async fn renumber_revision(
    api: &Api<ControllerRevision>,
    revision: &ControllerRevision,
    number: i64,
    annotations: &BTreeMap<String, String>,
) -> Result<ControllerRevision, kube::Error> {
    let mut patch = json!({
        "metadata": {"resourceVersion": revision.metadata.resource_version},
        "revision": number,
    });
    if !annotations.is_empty() {
        patch["metadata"]["annotations"] = json!(annotations);
    }
    api.patch(&revision.name_any(), &PatchParams::default(), &Patch::Merge(&patch)).await
}

/// The next revision number: one more than the highest.
pub fn next_revision_number(revisions: &[ControllerRevision]) -> i64 {
    revisions.iter().map(|r| r.revision).max().unwrap_or(0) + 1
}

/// Revisions sorted oldest first (by number, then creation, then name).
pub fn sorted(mut revisions: Vec<ControllerRevision>) -> Vec<ControllerRevision> {
    revisions.sort_by(|a, b| {
        a.revision
            .cmp(&b.revision)
            .then_with(|| a.metadata.creation_timestamp.cmp(&b.metadata.creation_timestamp))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    revisions
}

/// What to do to get the update revision.
#[derive(Clone, Debug, PartialEq)]
pub enum RevisionPlan {
    /// The latest revision already holds this template.
    UseLatest(String),
    /// An older revision holds it: raise its number (a rollback) and use it.
    Reuse {
        /// Its name.
        name: String,
        /// The new number.
        number: i64,
    },
    /// Create this new revision.
    Create(Box<ControllerRevision>),
}

/// Decides how the update revision is obtained (pure).
pub fn plan_update_revision(
    cloneset: &CloneSet,
    revisions: &[ControllerRevision],
    collision_count: Option<i32>,
) -> RevisionPlan {
    let revisions = sorted(revisions.to_vec());
    let number = next_revision_number(&revisions);
    let candidate = new_revision(cloneset, number, collision_count);
    let equal: Vec<&ControllerRevision> = revisions.iter().filter(|r| equal_data(r, &candidate)).collect();
    match (equal.last(), revisions.last()) {
        (Some(last_equal), Some(latest)) if last_equal.metadata.name == latest.metadata.name => {
            RevisionPlan::UseLatest(latest.name_any())
        }
        (Some(last_equal), _) => RevisionPlan::Reuse { name: last_equal.name_any(), number },
        (None, _) => RevisionPlan::Create(Box::new(candidate)),
    }
}

/// Revisions to delete: the oldest beyond `limit`, never one named in `keep` (current and update
/// revisions, and every revision a pod is at).
pub fn revisions_to_truncate(
    revisions: &[ControllerRevision],
    keep: &HashSet<String>,
    limit: i32,
) -> Vec<String> {
    let sorted = sorted(revisions.to_vec());
    let removable: Vec<&ControllerRevision> =
        sorted.iter().filter(|r| !keep.contains(&r.name_any())).collect();
    let excess = removable.len().saturating_sub(limit.max(0) as usize);
    removable.into_iter().take(excess).map(|r| r.name_any()).collect()
}

/// Gets or makes the update revision through the API: creates a new one (resolving hash
/// collisions by raising the collision count, as Kubernetes does) or raises an equal older
/// one's number. Returns the revision and the (possibly raised) collision count.
pub async fn ensure_update_revision(
    client: &Client,
    cloneset: &CloneSet,
    revisions: &[ControllerRevision],
) -> Result<(ControllerRevision, i32), ControllerError> {
    let namespace = cloneset.namespace().unwrap_or_default();
    let api: Api<ControllerRevision> = Api::namespaced(client.clone(), &namespace);
    let mut collision_count = cloneset.status.as_ref().and_then(|s| s.collision_count).unwrap_or(0);
    match plan_update_revision(cloneset, revisions, Some(collision_count)) {
        RevisionPlan::UseLatest(name) => {
            let revision = revisions.iter().find(|r| r.name_any() == name).cloned();
            revision
                .map(|r| (r, collision_count))
                .ok_or_else(|| ControllerError::Invalid(format!("revision {name} vanished")))
        }
        RevisionPlan::Reuse { name, number } => {
            let revision = api.get(&name).await?;
            // Upstream brings the claim templates' hash of the reused revision up to date.
            let hash = vct_hash(cloneset);
            let mut annotations = BTreeMap::new();
            if revision.annotations().get(VCT_HASH_ANNOTATION) != Some(&hash) {
                annotations.insert(VCT_HASH_ANNOTATION.to_string(), hash);
            }
            let updated = renumber_revision(&api, &revision, number, &annotations).await?;
            Ok((updated, collision_count))
        }
        RevisionPlan::Create(candidate) => {
            let mut candidate = *candidate;
            for _ in 0..16 {
                match create_revision(&api, &candidate).await {
                    Ok(created) => return Ok((created, collision_count)),
                    Err(kube::Error::Api(status)) if status.code == 409 => {
                        let existing = api.get(&candidate.name_any()).await?;
                        if equal_data(&existing, &candidate) {
                            return Ok((existing, collision_count));
                        }
                        collision_count += 1;
                        candidate = new_revision(cloneset, candidate.revision, Some(collision_count));
                    }
                    Err(error) => return Err(error.into()),
                }
            }
            Err(ControllerError::Invalid("too many revision hash collisions".into()))
        }
    }
}

/// Deletes old revisions beyond the history limit.
pub async fn truncate_history(
    client: &Client,
    namespace: &str,
    revisions: &[ControllerRevision],
    keep: &HashSet<String>,
    limit: i32,
) -> Result<(), ControllerError> {
    let api: Api<ControllerRevision> = Api::namespaced(client.clone(), namespace);
    for name in revisions_to_truncate(revisions, keep, limit) {
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Container, PodSpec};
    use kruise_crds::apps::v1beta1::CloneSetSpec;

    use super::*;

    fn cloneset(image: &str) -> CloneSet {
        let mut cs = CloneSet::new(
            "web",
            CloneSetSpec {
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some([("app".to_string(), "web".to_string())].into()),
                        ..Default::default()
                    }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "main".into(),
                            image: Some(image.into()),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
                ..Default::default()
            },
        );
        cs.metadata.namespace = Some("default".into());
        cs.metadata.uid = Some("uid-1".into());
        cs
    }

    #[test]
    fn hashes_use_fnv1_and_the_safe_alphabet() {
        // FNV-1 32 of "" is the offset basis; "a" is a known value.
        assert_eq!(fnv1_32(&[b""]), 0x811c_9dc5);
        assert_eq!(fnv1_32(&[b"a"]), 0x050c_5d7e);
        let hash = revision_hash(b"{}", None);
        assert!(hash.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)), "{hash}");
        assert_ne!(revision_hash(b"{}", Some(1)), hash, "the collision count changes the hash");
        assert_eq!(short_hash("web-5f7d8c9b4"), "5f7d8c9b4");
        assert_eq!(revision_name("web", "abc"), "web-abc");
    }

    #[test]
    fn revision_data_replaces_the_template() {
        let revision = new_revision(&cloneset("nginx:1"), 1, None);
        let data = &revision.data.as_ref().unwrap().0;
        assert_eq!(data["spec"]["template"]["$patch"], "replace");
        assert_eq!(data["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1");
        let labels = revision.labels();
        assert_eq!(labels["app"], "web");
        assert!(labels.contains_key(REVISION_HASH_LABEL));
        assert!(revision.name_any().starts_with("web-"));
        // The template read back is the template as Go writes it (`"resources":{}`), and it gives
        // the same data again.
        let template = template_of(&revision).unwrap();
        assert_eq!(revision_data(&template), revision.data.unwrap().0);
        let container = &template.spec.unwrap().containers[0];
        assert_eq!(
            (container.image.as_deref(), container.resources.clone()),
            (Some("nginx:1"), Some(Default::default()))
        );
    }

    /// The plain nginx CloneSet of the takeover report: upstream names its revision
    /// `web-cd5565c86` (see also `crate::revision_fixtures`, which checks every fixture).
    #[test]
    fn the_revision_name_is_upstream_s() {
        let mut cs = cloneset("nginx:1.25");
        kruise_crds::defaults::default_cloneset_v1beta1(&mut cs, true);
        assert_eq!(new_revision(&cs, 1, Some(0)).name_any(), "web-cd5565c86");
        let data = String::from_utf8(data_bytes(&revision_data(&cs.spec.template))).unwrap();
        assert!(
            data.starts_with(
                r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"#
            ),
            "{data}"
        );
    }

    #[test]
    fn rollback_reuses_an_equal_older_revision() {
        let v1 = new_revision(&cloneset("nginx:1"), 1, None);
        let v2 = new_revision(&cloneset("nginx:2"), 2, None);
        let history = vec![v1.clone(), v2.clone()];
        assert_eq!(
            plan_update_revision(&cloneset("nginx:2"), &history, None),
            RevisionPlan::UseLatest(v2.name_any())
        );
        assert_eq!(
            plan_update_revision(&cloneset("nginx:1"), &history, None),
            RevisionPlan::Reuse { name: v1.name_any(), number: 3 }
        );
        assert!(
            matches!(plan_update_revision(&cloneset("nginx:3"), &history, None), RevisionPlan::Create(r) if r.revision == 3)
        );
    }

    #[test]
    fn history_keeps_what_is_in_use() {
        let revisions: Vec<ControllerRevision> =
            (1..=5).map(|n| new_revision(&cloneset(&format!("nginx:{n}")), n, None)).collect();
        let names: Vec<String> = revisions.iter().map(|r| r.name_any()).collect();
        let keep: HashSet<String> = [names[0].clone(), names[4].clone()].into();
        assert_eq!(revisions_to_truncate(&revisions, &keep, 1), vec![names[1].clone(), names[2].clone()]);
        assert!(revisions_to_truncate(&revisions, &keep, 10).is_empty());
    }
}
