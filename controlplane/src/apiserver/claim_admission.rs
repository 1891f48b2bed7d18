//! What kube-apiserver checks when a PersistentVolumeClaim is updated:
//! - the strategy's validation (`ValidatePersistentVolumeClaimUpdate`): the spec is immutable
//!   except `resources.requests` of a bound claim and `volumeAttributesClassName`; the requested
//!   storage may shrink only while it stays above `status.capacity` (Kubernetes 1.34 has
//!   `RecoverVolumeExpansionFailure` on, so a user can back out of a failed expansion);
//! - the `PersistentVolumeClaimResize` admission plugin: growing a claim needs it to be bound and
//!   its StorageClass to say `allowVolumeExpansion: true`, else a 403;
//! - the `DefaultStorageClass` admission plugin: a claim created without a class (the field
//!   absent, not `""`) gets the cluster's default class, the newest one marked
//!   `storageclass.kubernetes.io/is-default-class: "true"` (or its beta twin).
//!
//! Both are pure functions of the objects; the StorageClass is looked up by the caller.

use std::{borrow::Borrow, cmp::Ordering};

use kruise_machinery::{
    field::{ErrorList, FieldError, FieldPath},
    quantity::Quantity,
};
use serde_json::{Value, json};

/// The plugin's refusal of a resize whose class does not allow it (kube-apiserver's words).
pub const RESIZE_NOT_SUPPORTED: &str = "only dynamically provisioned pvc can be resized and the storageclass that \
                                        provisions the pvc must support resize";
/// The plugin's refusal of a resize of a claim not bound yet.
pub const ONLY_BOUND_CLAIMS: &str = "Only bound persistent volume claims can be expanded";

fn requested_storage(claim: &Value) -> Option<&str> {
    claim.pointer("/spec/resources/requests/storage").and_then(Value::as_str)
}

fn compare(left: Option<&str>, right: Option<&str>) -> Option<Ordering> {
    let parse = |text: Option<&str>| Quantity::parse(text.unwrap_or("0")).ok();
    Some(parse(left)?.cmp(&parse(right)?))
}

fn is_bound(claim: &Value) -> bool {
    claim.pointer("/status/phase").and_then(Value::as_str) == Some("Bound")
}

/// The claim's class name: `spec.storageClassName`, else the beta annotation, as
/// `GetPersistentVolumeClaimClass` reads it (empty: no class).
pub fn claim_class(claim: &Value) -> &str {
    claim
        .pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
        .or_else(|| claim.pointer("/spec/storageClassName"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether `class` is marked as the cluster's default.
pub fn is_default_class(class: &Value) -> bool {
    ["storageclass.kubernetes.io~1is-default-class", "storageclass.beta.kubernetes.io~1is-default-class"]
        .iter()
        .any(|key| {
            class.pointer(&format!("/metadata/annotations/{key}")).and_then(Value::as_str) == Some("true")
        })
}

/// The default class among `classes`: the newest marked one (ties by name), as
/// `GetDefaultClass` picks it.
pub fn default_class(classes: &[impl Borrow<Value>]) -> Option<&str> {
    classes
        .iter()
        .map(Borrow::borrow)
        .filter(|class| is_default_class(class))
        .max_by(|a, b| {
            let created = |c: &Value| {
                c.pointer("/metadata/creationTimestamp").and_then(Value::as_str).map(str::to_owned)
            };
            let name = |c: &Value| c.pointer("/metadata/name").and_then(Value::as_str).map(str::to_owned);
            created(a).cmp(&created(b)).then_with(|| name(b).cmp(&name(a)))
        })
        .and_then(|class| class.pointer("/metadata/name").and_then(Value::as_str))
}

/// `DefaultStorageClass`: gives a new claim without a class the default one, if any.
pub fn set_default_class(claim: &mut Value, classes: &[impl Borrow<Value>]) {
    let has_class = claim.pointer("/spec/storageClassName").is_some_and(|c| !c.is_null())
        || claim.pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class").is_some();
    if has_class {
        return;
    }
    if let (Some(name), Some(spec)) =
        (default_class(classes), claim.get_mut("spec").and_then(Value::as_object_mut))
    {
        spec.insert("storageClassName".into(), json!(name));
    }
}

/// Whether `new` asks for more storage than `old`.
pub fn grows(old: &Value, new: &Value) -> bool {
    compare(requested_storage(new), requested_storage(old)) == Some(Ordering::Greater)
}

/// The strategy's update validation of a claim.
pub fn validate_update(old: &Value, new: &Value) -> ErrorList {
    let mut errors = Vec::new();
    let strip = |claim: &Value, keep_request: bool| {
        let mut spec = claim.get("spec").cloned().unwrap_or(json!({}));
        if let Some(spec) = spec.as_object_mut() {
            spec.remove("volumeAttributesClassName");
        }
        if !keep_request
            && let Some(requests) = spec.pointer_mut("/resources/requests").and_then(Value::as_object_mut)
        {
            requests.remove("storage");
        }
        spec
    };
    // A bound claim may change its storage request; an unbound one may not.
    let bound = is_bound(new);
    if strip(old, !bound) != strip(new, !bound) {
        errors.push(FieldError::forbidden(
            &FieldPath::root("spec"),
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
        ));
    }
    let storage = FieldPath::root("spec").child("resources").child("requests").child("storage");
    if compare(requested_storage(new), requested_storage(old)) == Some(Ordering::Less) {
        let capacity = new.pointer("/status/capacity/storage").and_then(Value::as_str);
        if compare(requested_storage(new), capacity).is_some_and(|o| o != Ordering::Greater) {
            errors.push(FieldError::forbidden(&storage, "field can not be less than status.capacity"));
        }
    }
    errors
}

/// The `PersistentVolumeClaimResize` plugin: why growing `old` into `new` is refused, given the
/// claim's StorageClass (None when it has none or it does not exist).
pub fn resize_refusal(old: &Value, new: &Value, class: Option<&Value>) -> Option<&'static str> {
    if !grows(old, new) {
        return None;
    }
    if !is_bound(old) {
        return Some(ONLY_BOUND_CLAIMS);
    }
    let allowed = !claim_class(old).is_empty()
        && class.and_then(|c| c.get("allowVolumeExpansion")).and_then(Value::as_bool) == Some(true);
    (!allowed).then_some(RESIZE_NOT_SUPPORTED)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(request: &str, phase: &str, capacity: Option<&str>) -> Value {
        let mut claim = json!({
            "metadata": {"name": "data-ss-0"},
            "spec": {"storageClassName": "allow-volume-expansion", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": request}}, "volumeName": "pvc-1"},
            "status": {"phase": phase},
        });
        if let Some(capacity) = capacity {
            claim["status"]["capacity"] = json!({"storage": capacity});
        }
        claim
    }

    fn class(allow: Option<bool>) -> Value {
        let mut class = json!({"metadata": {"name": "allow-volume-expansion"}, "provisioner": "p"});
        if let Some(allow) = allow {
            class["allowVolumeExpansion"] = json!(allow);
        }
        class
    }

    #[test]
    fn resizes_are_refused_unless_bound_and_allowed_by_the_class() {
        let bound = claim("1Gi", "Bound", Some("1Gi"));
        let grown = claim("2Gi", "Bound", Some("1Gi"));
        let pending = claim("1Gi", "Pending", None);
        let mut classless = bound.clone();
        classless["spec"]["storageClassName"] = json!("");
        let cases = [
            ("allowed class", &bound, &grown, Some(class(Some(true))), None),
            ("class forbids", &bound, &grown, Some(class(Some(false))), Some(RESIZE_NOT_SUPPORTED)),
            ("class silent", &bound, &grown, Some(class(None)), Some(RESIZE_NOT_SUPPORTED)),
            ("class missing", &bound, &grown, None, Some(RESIZE_NOT_SUPPORTED)),
            ("no class", &classless, &grown, Some(class(Some(true))), Some(RESIZE_NOT_SUPPORTED)),
            ("not bound", &pending, &grown, Some(class(Some(true))), Some(ONLY_BOUND_CLAIMS)),
            ("same size", &bound, &bound, None, None),
            ("smaller", &grown, &bound, None, None),
        ];
        for (name, old, new, class, expected) in cases {
            assert_eq!(resize_refusal(old, new, class.as_ref()), expected, "{name}");
        }
    }

    #[test]
    fn new_claims_without_a_class_get_the_newest_default() {
        let marked = |name: &str, created: &str, key: &str| json!({"metadata": {"name": name, "creationTimestamp": created, "annotations": {key: "true"}}});
        let ga = "storageclass.kubernetes.io/is-default-class";
        let beta = "storageclass.beta.kubernetes.io/is-default-class";
        let plain = json!({"metadata": {"name": "plain", "creationTimestamp": "2026-12-04T10:00:00Z"}});
        let old_default = marked("standard", "2026-12-01T10:00:00Z", ga);
        let new_default = marked("fast", "2026-12-02T10:00:00Z", beta);
        let with_class = |class: Value| json!({"spec": {"storageClassName": class}});
        let cases = [
            (
                "no class field",
                json!({"spec": {}}),
                vec![plain.clone(), old_default.clone()],
                json!("standard"),
            ),
            (
                "null class",
                with_class(Value::Null),
                vec![old_default.clone(), new_default.clone()],
                json!("fast"),
            ),
            ("explicitly no class", with_class(json!("")), vec![old_default.clone()], json!("")),
            ("named class", with_class(json!("plain")), vec![old_default.clone()], json!("plain")),
            ("no default class", json!({"spec": {}}), vec![plain.clone()], Value::Null),
        ];
        for (name, mut claim, classes, expected) in cases {
            set_default_class(&mut claim, &classes);
            assert_eq!(
                claim.pointer("/spec/storageClassName").cloned().unwrap_or(Value::Null),
                expected,
                "{name}"
            );
        }
    }

    #[test]
    fn update_validation_keeps_the_spec_but_the_request_of_a_bound_claim() {
        let bound = claim("1Gi", "Bound", Some("1Gi"));
        let mut other_mode = bound.clone();
        other_mode["spec"]["accessModes"] = json!(["ReadWriteMany"]);
        let mut attributes = bound.clone();
        attributes["spec"]["volumeAttributesClassName"] = json!("gold");
        let errors = |old: &Value, new: &Value| -> Vec<String> {
            validate_update(old, new).iter().map(|e| format!("{}: {:?}", e.path.as_str(), e.kind)).collect()
        };
        assert!(errors(&bound, &claim("2Gi", "Bound", Some("1Gi"))).is_empty());
        assert!(errors(&bound, &attributes).is_empty());
        assert_eq!(errors(&bound, &other_mode), vec!["spec: Forbidden"]);
        assert_eq!(
            errors(&claim("1Gi", "Pending", None), &claim("2Gi", "Pending", None)),
            vec!["spec: Forbidden"]
        );
        // Shrinking: allowed while above the capacity (recovering from a failed expansion).
        assert!(errors(&claim("3Gi", "Bound", Some("1Gi")), &claim("2Gi", "Bound", Some("1Gi"))).is_empty());
        assert_eq!(
            errors(&claim("2Gi", "Bound", Some("1Gi")), &claim("1Gi", "Bound", Some("1Gi"))),
            vec!["spec.resources.requests.storage: Forbidden"]
        );
    }
}
