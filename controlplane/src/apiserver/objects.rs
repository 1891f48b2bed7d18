//! Reading and writing the metadata of objects held as JSON.

use serde_json::{Map, Value, json};

/// `metadata.<field>` as a string.
pub fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get("metadata")?.get(field)?.as_str()
}

/// `metadata.name`.
pub fn name(object: &Value) -> Option<&str> {
    meta_str(object, "name").filter(|n| !n.is_empty())
}

/// `metadata.namespace`.
pub fn namespace(object: &Value) -> Option<&str> {
    meta_str(object, "namespace").filter(|n| !n.is_empty())
}

/// `metadata.uid`.
pub fn uid(object: &Value) -> Option<&str> {
    meta_str(object, "uid")
}

/// `metadata.resourceVersion` as a number.
pub fn resource_version(object: &Value) -> Option<u64> {
    meta_str(object, "resourceVersion").and_then(|rv| rv.parse().ok())
}

/// `metadata.generation`.
pub fn generation(object: &Value) -> i64 {
    object.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0)
}

/// `metadata.finalizers`.
pub fn finalizers(object: &Value) -> Vec<String> {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(|f| f.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// Whether the object is being deleted.
pub fn is_deleting(object: &Value) -> bool {
    object.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null())
}

/// `metadata.labels` as a map.
pub fn labels(object: &Value) -> std::collections::BTreeMap<String, String> {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|map| map.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))).collect())
        .unwrap_or_default()
}

/// `metadata.labels` or `metadata.annotations` (`field`) as a map.
pub fn labels_of(object: &Value, field: &str) -> std::collections::BTreeMap<String, String> {
    object
        .pointer(&format!("/metadata/{field}"))
        .and_then(Value::as_object)
        .map(|map| map.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))).collect())
        .unwrap_or_default()
}

/// The metadata object, created when missing.
pub fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.is_object() {
        *object = json!({});
    }
    let root = object.as_object_mut().expect("just made an object");
    let metadata = root.entry("metadata").or_insert_with(|| json!({}));
    if !metadata.is_object() {
        *metadata = json!({});
    }
    metadata.as_object_mut().expect("just made an object")
}

/// Sets or removes a metadata field.
pub fn set_meta(object: &mut Value, field: &str, value: Option<Value>) {
    let metadata = metadata_mut(object);
    match value {
        Some(value) => {
            metadata.insert(field.to_string(), value);
        }
        None => {
            metadata.remove(field);
        }
    }
}

/// Sets `finalizers` (removing the field when empty).
pub fn set_finalizers(object: &mut Value, finalizers: &[String]) {
    set_meta(object, "finalizers", (!finalizers.is_empty()).then(|| json!(finalizers)));
}

/// The current time in RFC 3339 with second precision, as Kubernetes writes timestamps.
pub fn now_rfc3339() -> String {
    let now = k8s_openapi::jiff::Timestamp::now();
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A new random UID.
pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A random 5-character suffix for `generateName`, from the alphabet kube-apiserver uses
/// (no vowels, no ambiguous characters).
pub fn random_suffix() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect()
}

/// The object without `status` and `metadata`: what decides whether `generation` moves.
pub fn spec_part(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("status");
        map.remove("metadata");
        map.remove("apiVersion");
        map.remove("kind");
    }
    copy
}

/// The owner references of an object as (uid, kind, name, controller, blockOwnerDeletion).
pub fn owner_references(object: &Value) -> Vec<OwnerRef> {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .map(|r| OwnerRef {
                    uid: r.get("uid").and_then(Value::as_str).unwrap_or_default().to_string(),
                    api_version: r.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_string(),
                    kind: r.get("kind").and_then(Value::as_str).unwrap_or_default().to_string(),
                    name: r.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                    block_owner_deletion: r
                        .get("blockOwnerDeletion")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One owner reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRef {
    /// UID of the owner.
    pub uid: String,
    /// apiVersion of the owner.
    pub api_version: String,
    /// Kind of the owner.
    pub kind: String,
    /// Name of the owner.
    pub name: String,
    /// Whether the owner's foreground deletion waits for this dependent.
    pub block_owner_deletion: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_part_ignores_metadata_and_status() {
        let a = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"x": 1}, "status": {"y": 1}});
        let b = json!({"metadata": {"labels": {"a": "2"}}, "spec": {"x": 1}, "status": {"y": 2}});
        assert_eq!(spec_part(&a), spec_part(&b));
    }

    #[test]
    fn suffixes_use_the_safe_alphabet() {
        let suffix = random_suffix();
        assert_eq!(suffix.len(), 5);
        assert!(suffix.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
    }
}
