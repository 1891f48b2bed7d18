//! The field labels of built-in kinds, as kube-apiserver evaluates field selectors: which labels
//! a kind accepts (its field label conversion function, or apimachinery's default one) and the
//! value each label has for an object (the kind's `ToSelectableFields`). Values come from the
//! typed object, so a field the JSON leaves out reads as its type's zero value: `false` for a
//! boolean, `0` for a number, `""` for a string (`spec.unschedulable=false` matches a node that
//! never set it).
//!
//! Events have their own computed set (`apiserver::events`); custom resources read their
//! selectable fields from the object.

use std::collections::BTreeMap;

use serde_json::Value;

/// Why a field label is refused, worded as the kind's conversion function words it.
pub fn unsupported_label_message(group: &str, kind: &str, label: &str) -> String {
    match (group, kind) {
        ("", "Pod" | "Node" | "Namespace" | "Secret" | "Service" | "Event") | ("events.k8s.io", "Event") => {
            format!("field label not supported: {label}")
        }
        ("batch", "Job") => format!("field label {label:?} not supported for Job"),
        _ => {
            format!("{label:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")
        }
    }
}

/// The field labels a built-in kind accepts in a selector (Events excepted: see
/// `apiserver::events::supported_fields`).
pub fn supported_labels(group: &str, kind: &str) -> &'static [&'static str] {
    match (group, kind) {
        ("", "Pod") => &[
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
            // What old clients send for spec.nodeName.
            "spec.host",
        ],
        ("", "Node") => &["metadata.name", "spec.unschedulable"],
        ("", "Namespace") => &["metadata.name", "status.phase"],
        ("", "Secret") => &["metadata.name", "metadata.namespace", "type"],
        ("", "Service") => &["metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"],
        ("batch", "Job") => &["metadata.name", "metadata.namespace", "status.successful"],
        // apimachinery's DefaultMetaV1FieldSelectorConversion.
        _ => &["metadata.name", "metadata.namespace"],
    }
}

/// The values of an object's field labels (pure): what kube-apiserver's `ToSelectableFields`
/// of the kind returns. A label missing from the map reads as "" (as `fields.Set` does).
pub fn selectable_fields(
    group: &str,
    kind: &str,
    namespaced: bool,
    object: &Value,
) -> BTreeMap<String, String> {
    let mut fields = BTreeMap::new();
    fields.insert("metadata.name".to_string(), text(object, "/metadata/name"));
    if namespaced {
        fields.insert("metadata.namespace".to_string(), text(object, "/metadata/namespace"));
    }
    let mut put = |label: &str, value: String| {
        fields.insert(label.to_string(), value);
    };
    match (group, kind) {
        ("", "Pod") => {
            let node = text(object, "/spec/nodeName");
            put("spec.nodeName", node.clone());
            put("spec.host", node);
            for (label, pointer) in [
                ("spec.restartPolicy", "/spec/restartPolicy"),
                ("spec.schedulerName", "/spec/schedulerName"),
                ("status.phase", "/status/phase"),
                ("status.nominatedNodeName", "/status/nominatedNodeName"),
            ] {
                put(label, text(object, pointer));
            }
            // The v1 `serviceAccount` is the deprecated spelling of `serviceAccountName`.
            let mut account = text(object, "/spec/serviceAccountName");
            if account.is_empty() {
                account = text(object, "/spec/serviceAccount");
            }
            put("spec.serviceAccountName", account);
            put("spec.hostNetwork", boolean(object, "/spec/hostNetwork"));
            // The first of `podIPs`; a v1 object with only `podIP` converts to podIPs of one.
            let mut ip = text(object, "/status/podIPs/0/ip");
            if ip.is_empty() {
                ip = text(object, "/status/podIP");
            }
            put("status.podIP", ip);
        }
        ("", "Node") => put("spec.unschedulable", boolean(object, "/spec/unschedulable")),
        ("", "Namespace") => {
            put("status.phase", text(object, "/status/phase"));
            put("name", text(object, "/metadata/name"));
        }
        ("", "PersistentVolume" | "PersistentVolumeClaim") => put("name", text(object, "/metadata/name")),
        ("", "Secret") => put("type", text(object, "/type")),
        ("", "Service") => {
            put("spec.clusterIP", text(object, "/spec/clusterIP"));
            put("spec.type", text(object, "/spec/type"));
        }
        ("", "ReplicationController") | ("apps", "ReplicaSet") => {
            put("status.replicas", integer(object, "/status/replicas"))
        }
        ("batch", "Job") => put("status.successful", integer(object, "/status/succeeded")),
        _ => {}
    }
    fields
}

/// A string field; "" when absent.
fn text(object: &Value, pointer: &str) -> String {
    object.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// A boolean field as Go's `strconv.FormatBool` writes it; `false` when absent.
fn boolean(object: &Value, pointer: &str) -> String {
    object.pointer(pointer).and_then(Value::as_bool).unwrap_or(false).to_string()
}

/// An integer field as Go's `strconv.Itoa` writes it; `0` when absent.
fn integer(object: &Value, pointer: &str) -> String {
    object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::semantics::selectors::FieldSelector;

    fn matches(kind: (&str, &str), namespaced: bool, selector: &str, object: &Value) -> bool {
        let fields = selectable_fields(kind.0, kind.1, namespaced, object);
        FieldSelector::parse(selector).unwrap().matches_fields(&fields)
    }

    #[test]
    fn absent_fields_read_as_their_zero_value() {
        let bare_node = json!({"metadata": {"name": "n1"}, "spec": {}});
        let cordoned = json!({"metadata": {"name": "n2"}, "spec": {"unschedulable": true}});
        let bare_pod = json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": []}});
        let pod = json!({
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"nodeName": "n1", "hostNetwork": true, "serviceAccount": "builder", "restartPolicy": "Never"},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]},
        });
        let job = json!({"metadata": {"name": "j", "namespace": "ns"}, "status": {"succeeded": 2}});
        let bare_job = json!({"metadata": {"name": "j", "namespace": "ns"}});
        // (case, (group, kind), namespaced, selector, object, matches)
        type Case<'a> = (&'a str, (&'a str, &'a str), bool, &'a str, &'a Value, bool);
        let cases: &[Case] = &[
            (
                "unset unschedulable is false",
                ("", "Node"),
                false,
                "spec.unschedulable=false",
                &bare_node,
                true,
            ),
            ("unset is not true", ("", "Node"), false, "spec.unschedulable=true", &bare_node, false),
            ("unset is not empty", ("", "Node"), false, "spec.unschedulable=", &bare_node, false),
            ("cordoned", ("", "Node"), false, "spec.unschedulable!=false", &cordoned, true),
            ("unset hostNetwork is false", ("", "Pod"), true, "spec.hostNetwork=false", &bare_pod, true),
            ("hostNetwork", ("", "Pod"), true, "spec.hostNetwork=true", &pod, true),
            ("unscheduled pod", ("", "Pod"), true, "spec.nodeName=", &bare_pod, true),
            ("scheduled pod", ("", "Pod"), true, "spec.nodeName=n1,status.phase=Running", &pod, true),
            ("old clients' spec.host", ("", "Pod"), true, "spec.host=n1", &pod, true),
            ("no phase yet", ("", "Pod"), true, "status.phase=", &bare_pod, true),
            ("the first pod IP", ("", "Pod"), true, "status.podIP=10.0.0.1", &pod, true),
            ("deprecated account name", ("", "Pod"), true, "spec.serviceAccountName=builder", &pod, true),
            ("restart policy", ("", "Pod"), true, "spec.restartPolicy=Never", &pod, true),
            ("no succeeded pods is 0", ("batch", "Job"), true, "status.successful=0", &bare_job, true),
            ("succeeded pods", ("batch", "Job"), true, "status.successful=2", &job, true),
            ("namespace", ("batch", "Job"), true, "metadata.namespace=ns", &job, true),
            (
                "cluster-scoped kinds have no namespace",
                ("", "Node"),
                false,
                "metadata.namespace=",
                &cordoned,
                true,
            ),
        ];
        for (case, kind, namespaced, selector, object, expected) in cases {
            assert_eq!(matches(*kind, *namespaced, selector, object), *expected, "{case}: {selector}");
        }
    }

    #[test]
    fn labels_and_refusals_follow_each_kinds_conversion_function() {
        assert!(supported_labels("", "Node").contains(&"spec.unschedulable"));
        assert!(!supported_labels("", "Node").contains(&"metadata.namespace"));
        assert!(supported_labels("", "Pod").contains(&"status.podIPs"));
        assert!(!supported_labels("apps", "ReplicaSet").contains(&"status.replicas"), "not for apps/v1");
        assert_eq!(unsupported_label_message("", "Node", "spec.x"), "field label not supported: spec.x");
        assert_eq!(
            unsupported_label_message("batch", "Job", "spec.x"),
            "field label \"spec.x\" not supported for Job"
        );
        assert_eq!(
            unsupported_label_message("", "ConfigMap", "data.x"),
            "\"data.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
    }
}
