//! The two Event APIs over one storage, as kube-apiserver serves them: `events.k8s.io/v1` and
//! core `v1` Events are views of the same objects (stored in the core shape), converted field by
//! field (`regarding` is `involvedObject`, `note` is `message`, the `deprecated*` fields are the
//! core `source`/`firstTimestamp`/`lastTimestamp`/`count`, `reportingController` is
//! `reportingComponent`). Also here: the field labels each API selects by, and event validation,
//! which is lenient through core v1 and strict on creation through `events.k8s.io`.

use std::collections::BTreeMap;

use kruise_machinery::{
    field::{ErrorList, FieldError, FieldPath, quoted},
    validation::meta::{dns1123_subdomain_problems, qualified_name_problems},
};
use serde_json::{Map, Value, json};

use crate::semantics::jsonpath::parse_rfc3339;

/// `apiVersion` of core Events.
pub const CORE_API_VERSION: &str = "v1";
/// `apiVersion` of `events.k8s.io` Events.
pub const EVENTS_API_VERSION: &str = "events.k8s.io/v1";

/// Renamed fields: (core v1 name, events.k8s.io/v1 name). Every other field has the same name in
/// both (`reason`, `type`, `eventTime`, `series`, `action`, `related`, `reportingInstance`).
const RENAMED: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

const REPORTING_INSTANCE_MAX: usize = 128;
const ACTION_MAX: usize = 128;
const REASON_MAX: usize = 128;
const NOTE_MAX: usize = 1024;

/// Whether `object` is an Event of either API.
pub fn is_event(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("Event")
        && matches!(
            object.get("apiVersion").and_then(Value::as_str),
            Some(CORE_API_VERSION | EVENTS_API_VERSION)
        )
}

/// An Event expressed at `api_version` (`v1` or `events.k8s.io/v1`); None when either side is not
/// an Event API. An object already at `api_version` comes back unchanged.
pub fn convert(object: &Value, api_version: &str) -> Option<Value> {
    if !is_event(object) {
        return None;
    }
    let from = object.get("apiVersion").and_then(Value::as_str)?;
    let to_events = match (from, api_version) {
        (a, b) if a == b => return Some(object.clone()),
        (CORE_API_VERSION, EVENTS_API_VERSION) => true,
        (EVENTS_API_VERSION, CORE_API_VERSION) => false,
        _ => return None,
    };
    let fields = object.as_object()?;
    let mut out = Map::new();
    for (key, value) in fields {
        let renamed = RENAMED.iter().find_map(|(core, events)| {
            if to_events { (key == core).then_some(*events) } else { (key == events).then_some(*core) }
        });
        // A field of the target shape arriving under the source's name would be lost by the
        // decoder of the source type: drop it, as a typed conversion would.
        let foreign =
            RENAMED.iter().any(|(core, events)| if to_events { key == events } else { key == core });
        match renamed {
            Some(name) => {
                out.insert(name.to_string(), value.clone());
            }
            None if foreign => {}
            None => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    out.insert("apiVersion".into(), json!(api_version));
    Some(Value::Object(out))
}

/// The core-shaped form of an Event of either API (unchanged when it is not an Event).
pub fn to_core(object: &Value) -> Value {
    convert(object, CORE_API_VERSION).unwrap_or_else(|| object.clone())
}

/// The field labels a list or watch of Events may select by, per API group (kube-apiserver's
/// field label conversions).
pub fn supported_fields(group: &str) -> &'static [&'static str] {
    if group == "events.k8s.io" {
        &[
            "metadata.name",
            "metadata.namespace",
            "reason",
            "type",
            "reportingController",
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
        ]
    } else {
        &[
            "metadata.name",
            "metadata.namespace",
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ]
    }
}

/// The selectable fields of a (stored, core-shaped) Event under the labels of both APIs:
/// `source` falls back to the reporting controller, `regarding.*` mirror `involvedObject.*`.
pub fn selectable_fields(object: &Value) -> BTreeMap<String, String> {
    let core = to_core(object);
    let text = |pointer: &str| core.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string();
    let mut fields = BTreeMap::new();
    fields.insert("metadata.name".to_string(), text("/metadata/name"));
    fields.insert("metadata.namespace".to_string(), text("/metadata/namespace"));
    for part in ["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"] {
        let value = text(&format!("/involvedObject/{part}"));
        fields.insert(format!("involvedObject.{part}"), value.clone());
        fields.insert(format!("regarding.{part}"), value);
    }
    let controller = text("/reportingComponent");
    let component = text("/source/component");
    fields.insert("source".into(), if component.is_empty() { controller.clone() } else { component });
    fields.insert("reportingComponent".into(), controller.clone());
    fields.insert("reportingController".into(), controller);
    fields.insert("reason".into(), text("/reason"));
    fields.insert("type".into(), text("/type"));
    fields
}

/// Validation of an Event written through `group` ("" or `events.k8s.io`), on create (`old`
/// None) or update; both objects in either shape. Core writes get the lenient legacy rules;
/// `events.k8s.io` creates must carry the new-style fields and updates may only change the
/// series and metadata.
pub fn validate(group: &str, object: &Value, old: Option<&Value>) -> ErrorList {
    let strict = group == "events.k8s.io";
    let event = to_core(object);
    let mut errors = legacy_errors(&event, strict);
    if !strict {
        return errors;
    }
    match old.map(to_core) {
        None => {
            errors.extend(series_errors(&event));
            if timestamp(&event, "/eventTime").is_none() {
                errors.push(FieldError::required(&FieldPath::root("eventTime"), ""));
            }
            let event_type = text(&event, "/type");
            if event_type != "Normal" && event_type != "Warning" {
                errors.push(FieldError::invalid(
                    &FieldPath::root("type"),
                    quoted(""),
                    format!("has invalid value: {event_type}"),
                ));
            }
            for (pointer, field) in
                [("/firstTimestamp", "firstTimestamp"), ("/lastTimestamp", "lastTimestamp")]
            {
                if timestamp(&event, pointer).is_some() {
                    errors.push(FieldError::invalid(
                        &FieldPath::root(field),
                        quoted(""),
                        "needs to be unset",
                    ));
                }
            }
            if event.get("count").and_then(Value::as_i64).unwrap_or(0) != 0 {
                errors.push(FieldError::invalid(&FieldPath::root("count"), quoted(""), "needs to be unset"));
            }
            if !text(&event, "/source/component").is_empty() || !text(&event, "/source/host").is_empty() {
                errors.push(FieldError::invalid(&FieldPath::root("source"), quoted(""), "needs to be unset"));
            }
        }
        Some(old) => {
            if event.get("series") != old.get("series") {
                errors.extend(series_errors(&event));
            }
            // (kube-apiserver checks `reason` twice, so a changed reason is reported twice.)
            for field in [
                "involvedObject",
                "reason",
                "message",
                "source",
                "firstTimestamp",
                "lastTimestamp",
                "count",
                "reason",
                "type",
            ] {
                immutable(&mut errors, &event, &old, field, field);
            }
            // Sub-microsecond differences in eventTime are tolerated.
            if micros(&event, "/eventTime") != micros(&old, "/eventTime") {
                immutable(&mut errors, &event, &old, "eventTime", "eventTime");
            }
            for (field, path) in [
                ("action", "action"),
                ("related", "related"),
                ("reportingComponent", "reportingController"),
                ("reportingInstance", "reportingInstance"),
            ] {
                immutable(&mut errors, &event, &old, field, path);
            }
        }
    }
    errors
}

/// The rules every Event write passes, whichever API: namespaces agree with the regarded
/// object's, and new-style events (with an `eventTime`) name their reporter, action and reason.
fn legacy_errors(event: &Value, strict: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    let namespace = text(event, "/metadata/namespace");
    let involved_namespace = text(event, "/involvedObject/namespace");
    let namespace_path = FieldPath::root("involvedObject").child("namespace");
    let mismatch = |errors: &mut ErrorList| {
        errors.push(FieldError::invalid(
            &namespace_path,
            quoted(&involved_namespace),
            "does not match event.namespace",
        ));
    };
    if timestamp(event, "/eventTime").is_none() {
        if involved_namespace.is_empty() {
            if !namespace.is_empty() && namespace != "default" {
                mismatch(&mut errors);
            }
        } else if namespace != involved_namespace {
            mismatch(&mut errors);
        }
    } else {
        if involved_namespace.is_empty() && namespace != "default" && namespace != "kube-system" {
            mismatch(&mut errors);
        }
        let controller_path =
            FieldPath::root(if strict { "reportingController" } else { "reportingComponent" });
        let controller = text(event, "/reportingComponent");
        if controller.is_empty() {
            errors.push(FieldError::required(&controller_path, ""));
        }
        for problem in qualified_name_problems_of(&controller) {
            errors.push(FieldError::invalid(&controller_path, quoted(&controller), problem));
        }
        let instance = text(event, "/reportingInstance");
        if instance.is_empty() {
            errors.push(FieldError::required(&FieldPath::root("reportingInstance"), ""));
        }
        if instance.len() > REPORTING_INSTANCE_MAX {
            errors.push(FieldError::invalid(
                &FieldPath::root("reportingInstance"),
                quoted(""),
                format!("can have at most {REPORTING_INSTANCE_MAX} characters"),
            ));
        }
        let action = text(event, "/action");
        if action.is_empty() {
            errors.push(FieldError::required(&FieldPath::root("action"), ""));
        }
        if action.len() > ACTION_MAX {
            errors.push(FieldError::invalid(
                &FieldPath::root("action"),
                quoted(""),
                format!("can have at most {ACTION_MAX} characters"),
            ));
        }
        let reason = text(event, "/reason");
        if reason.is_empty() {
            errors.push(FieldError::required(&FieldPath::root("reason"), ""));
        }
        if reason.len() > REASON_MAX {
            errors.push(FieldError::invalid(
                &FieldPath::root("reason"),
                quoted(""),
                format!("can have at most {REASON_MAX} characters"),
            ));
        }
        if text(event, "/message").len() > NOTE_MAX {
            errors.push(FieldError::invalid(
                &FieldPath::root("message"),
                quoted(""),
                format!("can have at most {NOTE_MAX} characters"),
            ));
        }
    }
    for problem in dns1123_subdomain_problems(&namespace) {
        errors.push(FieldError::invalid(&FieldPath::root("namespace"), quoted(&namespace), problem));
    }
    errors
}

/// Qualified-name problems as apimachinery words them (an empty name part also fails the
/// pattern, and the pattern message carries its examples).
fn qualified_name_problems_of(value: &str) -> Vec<String> {
    const PATTERN_HINT: &str = " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is \
                                '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    let mut problems: Vec<String> = qualified_name_problems(value)
        .into_iter()
        .map(
            |problem| {
                if problem.starts_with("name part must consist") { problem + PATTERN_HINT } else { problem }
            },
        )
        .collect();
    let name = value.rsplit_once('/').map_or(value, |(_, name)| name);
    if name.is_empty() {
        problems.push(format!(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with \
             an alphanumeric character{PATTERN_HINT}"
        ));
    }
    problems
}

fn series_errors(event: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(series) = event.get("series").filter(|s| !s.is_null()) else { return errors };
    if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
        errors.push(FieldError::invalid(
            &FieldPath::root("series.count"),
            quoted(""),
            "should be at least 2",
        ));
    }
    if timestamp(series, "/lastObservedTime").is_none() {
        errors.push(FieldError::required(&FieldPath::root("series.lastObservedTime"), ""));
    }
    errors
}

fn immutable(errors: &mut ErrorList, event: &Value, old: &Value, field: &str, path: &str) {
    let new = event.get(field).filter(|v| !is_empty(v));
    let before = old.get(field).filter(|v| !is_empty(v));
    if new != before {
        let shown = match new {
            Some(Value::String(text)) => quoted(text),
            Some(other) => other.to_string(),
            None => quoted(""),
        };
        errors.push(FieldError::invalid(&FieldPath::root(path), shown, "field is immutable"));
    }
}

/// Zero values, which Go's types do not tell apart from absent ones.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Number(number) => number.as_f64() == Some(0.0),
        Value::Object(map) => map.values().all(is_empty),
        Value::Array(items) => items.is_empty(),
        Value::Bool(flag) => !flag,
    }
}

fn text(object: &Value, pointer: &str) -> String {
    object.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// A set timestamp at `pointer` (absent, null and empty read as unset).
fn timestamp<'a>(object: &'a Value, pointer: &str) -> Option<&'a str> {
    object.pointer(pointer).and_then(Value::as_str).filter(|t| !t.is_empty())
}

/// A timestamp truncated to microseconds, for comparisons that tolerate finer differences.
fn micros(object: &Value, pointer: &str) -> Option<(i64, u32)> {
    let text = timestamp(object, pointer)?;
    let seconds = parse_rfc3339(text)?;
    let fraction = text.get(19..).and_then(|rest| rest.strip_prefix('.')).unwrap_or_default();
    let digits: String = fraction.chars().take_while(char::is_ascii_digit).take(6).collect();
    let micros = format!("{digits:0<6}").parse().unwrap_or(0);
    Some((seconds, micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core_event() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "p.1", "namespace": "ns"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
            "reason": "Pulled", "message": "pulled", "type": "Normal",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:01:00Z", "count": 3,
        })
    }

    #[test]
    fn conversion_renames_fields_both_ways() {
        let events = convert(&core_event(), EVENTS_API_VERSION).unwrap();
        assert_eq!(events["apiVersion"], "events.k8s.io/v1");
        assert_eq!(events["regarding"]["name"], "p");
        assert_eq!(events["note"], "pulled");
        assert_eq!(events["deprecatedSource"]["host"], "n1");
        assert_eq!(events["deprecatedCount"], 3);
        assert_eq!(events["deprecatedLastTimestamp"], "2024-01-01T00:01:00Z");
        assert!(events.get("involvedObject").is_none() && events.get("message").is_none());
        assert_eq!(convert(&events, CORE_API_VERSION).unwrap(), core_event());
        assert!(convert(&json!({"apiVersion": "v1", "kind": "Pod"}), EVENTS_API_VERSION).is_none());
    }

    #[test]
    fn field_labels_follow_the_api() {
        let fields = selectable_fields(&core_event());
        assert_eq!(fields["regarding.kind"], "Pod");
        assert_eq!(fields["involvedObject.name"], "p");
        assert_eq!(fields["source"], "kubelet");
        let mut new_style = core_event();
        new_style["source"] = json!({});
        new_style["reportingComponent"] = json!("scheduler");
        assert_eq!(selectable_fields(&new_style)["source"], "scheduler");
        assert!(supported_fields("events.k8s.io").contains(&"regarding.fieldPath"));
        assert!(!supported_fields("events.k8s.io").contains(&"source"));
        assert!(!supported_fields("").contains(&"regarding.kind"));
    }

    #[test]
    fn events_k8s_io_creates_need_the_new_style_fields() {
        let events = convert(&core_event(), EVENTS_API_VERSION).unwrap();
        let paths: Vec<String> =
            validate("events.k8s.io", &events, None).iter().map(|e| e.to_string()).collect();
        assert_eq!(
            paths,
            [
                "eventTime: Required value",
                "firstTimestamp: Invalid value: \"\": needs to be unset",
                "lastTimestamp: Invalid value: \"\": needs to be unset",
                "count: Invalid value: \"\": needs to be unset",
                "source: Invalid value: \"\": needs to be unset",
            ]
        );
        assert!(validate("", &core_event(), None).is_empty(), "core writes are lenient");

        let mut with_time = core_event();
        with_time["eventTime"] = json!("2024-01-01T00:00:00.000000Z");
        let errors: Vec<String> = validate("", &with_time, None).iter().map(|e| e.path.to_string()).collect();
        assert_eq!(
            errors,
            ["reportingComponent", "reportingComponent", "reportingComponent", "reportingInstance", "action"]
        );
    }

    #[test]
    fn events_k8s_io_updates_may_change_only_the_series() {
        let old = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "ns"},
            "eventTime": "2024-01-01T00:00:00.123456Z", "regarding": {"kind": "Pod", "name": "p", "namespace": "ns"},
            "reason": "Started", "note": "hi", "type": "Normal", "action": "Start",
            "reportingController": "kubelet", "reportingInstance": "n1",
        });
        let mut series = old.clone();
        series["series"] = json!({"count": 2, "lastObservedTime": "2024-01-01T00:00:05.000000Z"});
        series["eventTime"] = json!("2024-01-01T00:00:00.1234561Z");
        assert!(validate("events.k8s.io", &series, Some(&old)).is_empty());
        let mut note = old.clone();
        note["note"] = json!("changed");
        let errors: Vec<String> =
            validate("events.k8s.io", &note, Some(&old)).iter().map(|e| e.to_string()).collect();
        assert_eq!(errors, ["message: Invalid value: \"changed\": field is immutable"]);
        assert!(validate("", &note, Some(&old)).is_empty(), "core updates are lenient");
    }
}
