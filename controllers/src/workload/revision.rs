//! Workload revisions as ControllerRevisions, the way Kubernetes' controller history keeps them,
//! shared by CloneSet, Advanced StatefulSet and Advanced DaemonSet (each builds its revision
//! object from these parts): the data is a strategic-merge patch
//! `{"spec":{"template":{..., "$patch":"replace"}}}` that restores the template; the name is
//! `<workload>-<hash>` where the hash is FNV-1 32 of the data (plus the collision count) in the
//! safe alphabet; an equal older revision is reused on rollback by raising its `revision` number
//! ([`plan_revision`]); history beyond `revisionHistoryLimit` is deleted unless a pod or the
//! current/update revision still uses it ([`revisions_to_truncate`]).
//!
//! The data is what upstream's `getPatch` writes, byte for byte ([`revision_data`],
//! [`data_bytes`]): the template as Go's `encoding/json` marshals the typed
//! `corev1.PodTemplateSpec` of apimachinery v0.32 (`"resources":{}`, `"creationTimestamp":null`,
//! canonical quantities; see [`kruise_crds::gojson`]), through `map[string]interface{}`, keys
//! sorted, HTML characters escaped. So a revision upstream wrote is found equal to ours for the
//! same template, names agree, and revisions are sent with exactly those bytes
//! ([`create_revision`]) so that upstream, which compares the raw bytes, finds ours equal too.
//! What is particular to one workload (CloneSet's volume-claim-template hash, the labels and
//! annotations each puts on its revisions) stays with that workload's `revision` module.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec};
use kruise_crds::gojson::{self, POD_TEMPLATE_SPEC, Types};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::ControllerError;

/// Label Kubernetes puts on a revision: its hash.
pub const REVISION_HASH_LABEL: &str = "controller.kubernetes.io/hash";

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

/// `<prefix>-<hash>` (the prefix is the workload's name), cut so the name stays within 253
/// characters.
pub fn revision_name(workload: &str, hash: &str) -> String {
    let prefix: String = workload.chars().take(223).collect();
    format!("{prefix}-{hash}")
}

/// The short hash (the part after the last `-`: `web-6d8f9` -> `6d8f9`), used as the
/// `pod-template-hash` label; pods labelled with it match the full revision name too.
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

/// Decides how the update revision is obtained (pure; upstream's history step shared by CloneSet
/// and Advanced StatefulSet): `candidate` builds the revision of the workload's current template
/// with the number it is given (one more than the highest of `revisions`). The latest revision
/// is used when it holds that template; else the newest older one holding it is renumbered (a
/// rollback); else the candidate is created.
pub fn plan_revision(
    revisions: &[ControllerRevision],
    candidate: impl FnOnce(i64) -> ControllerRevision,
) -> RevisionPlan {
    let revisions = sorted(revisions.to_vec());
    let number = next_revision_number(&revisions);
    let candidate = candidate(number);
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
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use k8s_openapi::{
        api::core::v1::{Container, PodSpec},
        apimachinery::pkg::{apis::meta::v1::ObjectMeta, runtime::RawExtension},
    };

    use super::*;

    fn template(image: &str) -> PodTemplateSpec {
        PodTemplateSpec {
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
        }
    }

    /// A revision of workload `web` holding `image`, numbered `number`.
    fn revision(image: &str, number: i64) -> ControllerRevision {
        let data = revision_data(&template(image));
        let hash = revision_hash(&data_bytes(&data), None);
        ControllerRevision {
            metadata: ObjectMeta { name: Some(revision_name("web", &hash)), ..Default::default() },
            data: Some(RawExtension(data)),
            revision: number,
        }
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
    fn template_round_trips_through_the_data() {
        let v1 = revision("nginx:1", 1);
        let data = &v1.data.as_ref().unwrap().0;
        assert_eq!(data["spec"]["template"]["$patch"], "replace");
        let read_back = template_of(&v1).unwrap();
        assert_eq!(revision_data(&read_back), *data);
    }

    #[test]
    fn plan_uses_reuses_or_creates() {
        let (v1, v2) = (revision("nginx:1", 1), revision("nginx:2", 2));
        let history = vec![v2.clone(), v1.clone()];
        let candidate = |image: &'static str| move |number| revision(image, number);
        assert_eq!(plan_revision(&history, candidate("nginx:2")), RevisionPlan::UseLatest(v2.name_any()));
        assert_eq!(
            plan_revision(&history, candidate("nginx:1")),
            RevisionPlan::Reuse { name: v1.name_any(), number: 3 }
        );
        assert!(
            matches!(plan_revision(&history, candidate("nginx:3")), RevisionPlan::Create(r) if r.revision == 3)
        );
        assert_eq!(next_revision_number(&[]), 1);
    }

    #[test]
    fn history_keeps_what_is_in_use() {
        let revisions: Vec<ControllerRevision> =
            (1..=5).map(|n| revision(&format!("nginx:{n}"), n)).collect();
        let names: Vec<String> = revisions.iter().map(|r| r.name_any()).collect();
        let keep: HashSet<String> = [names[0].clone(), names[4].clone()].into();
        assert_eq!(revisions_to_truncate(&revisions, &keep, 1), vec![names[1].clone(), names[2].clone()]);
        assert!(revisions_to_truncate(&revisions, &keep, 10).is_empty());
    }
}
