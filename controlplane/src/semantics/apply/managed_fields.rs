//! Managed-fields bookkeeping: the entries of `metadata.managedFields` (who, how, which API
//! version, when, which subresource), decoded and encoded the way kube-apiserver writes them, the
//! fields nobody owns and the cap on the number of updaters.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fieldpath::{FieldSet, Pe};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// What identifies a managed-fields entry: appliers are one entry whatever the API version,
/// updaters one per API version.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct ManagerKey {
    pub(super) manager: String,
    pub(super) operation: Operation,
    /// Empty for appliers.
    pub(super) api_version: String,
    pub(super) subresource: String,
}

#[derive(Clone, Debug)]
pub(super) struct ManagerEntry {
    pub(super) set: FieldSet,
    pub(super) api_version: String,
    pub(super) applied: bool,
    pub(super) time: Option<String>,
}

pub(super) type Managers = BTreeMap<ManagerKey, ManagerEntry>;

/// The fields no manager ever owns.
pub(super) fn strip_set() -> FieldSet {
    let mut set = FieldSet::default();
    for path in [
        &["apiVersion"][..],
        &["kind"],
        &["metadata"],
        &["metadata", "name"],
        &["metadata", "namespace"],
        &["metadata", "creationTimestamp"],
        &["metadata", "selfLink"],
        &["metadata", "uid"],
        &["metadata", "clusterName"],
        &["metadata", "generation"],
        &["metadata", "managedFields"],
        &["metadata", "resourceVersion"],
    ] {
        let pes: Vec<Pe> = path.iter().map(|name| Pe::Field(name.to_string())).collect();
        set.insert(&pes);
    }
    set
}

pub(super) fn decode_managers(entries: &Value) -> Result<Managers, String> {
    let Value::Array(entries) = entries else {
        return Err("managedFields must be a list".to_string());
    };
    let mut managers = Managers::new();
    for (index, entry) in entries.iter().enumerate() {
        let text = |name: &str| entry.get(name).and_then(Value::as_str).unwrap_or("").to_string();
        let operation = match text("operation").as_str() {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => return Err("operation must be `Apply` or `Update`".to_string()),
        };
        let api_version = text("apiVersion");
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".to_string());
        }
        match text("fieldsType").as_str() {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {index}")),
            other => return Err(format!("invalid fieldsType {other:?} in managed fields entry {index}")),
        }
        let set = match entry.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::default(),
            Some(fields) => {
                FieldSet::from_fields_v1(fields).map_err(|err| format!("error decoding set: {err}"))?
            }
        };
        let key = ManagerKey {
            manager: text("manager"),
            operation,
            api_version: if operation == Operation::Apply { String::new() } else { api_version.clone() },
            subresource: text("subresource"),
        };
        let time = entry.get("time").and_then(Value::as_str).map(str::to_string);
        managers.insert(key, ManagerEntry { set, api_version, applied: operation == Operation::Apply, time });
    }
    Ok(managers)
}

/// Seconds since the epoch of an RFC 3339 time (0 when absent or unreadable), for ordering.
fn unix_seconds(time: Option<&str>) -> i64 {
    fn parse(text: &str) -> Option<i64> {
        let (date, rest) = text.split_once(['T', 't'])?;
        let mut date_parts = date.split('-');
        let year: i64 = date_parts.next()?.parse().ok()?;
        let month: i64 = date_parts.next()?.parse().ok()?;
        let day: i64 = date_parts.next()?.parse().ok()?;
        let clock_end = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
        let (clock, zone) = rest.split_at(clock_end);
        let clock = clock.split('.').next()?;
        let mut clock_parts = clock.split(':');
        let hour: i64 = clock_parts.next()?.parse().ok()?;
        let minute: i64 = clock_parts.next()?.parse().ok()?;
        let second: i64 = clock_parts.next()?.parse().ok()?;
        let offset = match zone {
            "" | "Z" | "z" => 0,
            _ => {
                let sign = if zone.starts_with('-') { -1 } else { 1 };
                let (h, m) = zone[1..].split_once(':')?;
                sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60)
            }
        };
        // Days from the civil date (proleptic Gregorian).
        let y = if month <= 2 { year - 1 } else { year };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (month + 9) % 12;
        let doy = (153 * mp + 2) / 5 + day - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        Some(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
    }
    time.and_then(parse).unwrap_or(0)
}

fn encode_managers(managers: &Managers) -> Option<Value> {
    if managers.is_empty() {
        return None;
    }
    let mut entries: Vec<(&ManagerKey, &ManagerEntry)> = managers.iter().collect();
    let operation_of = |entry: &ManagerEntry, key: &ManagerKey| {
        if entry.applied { Operation::Apply } else { key.operation }
    };
    entries.sort_by(|(key_a, a), (key_b, b)| {
        operation_of(a, key_a)
            .as_str()
            .cmp(operation_of(b, key_b).as_str())
            .then_with(|| unix_seconds(a.time.as_deref()).cmp(&unix_seconds(b.time.as_deref())))
            .then_with(|| key_a.manager.cmp(&key_b.manager))
            .then_with(|| a.api_version.cmp(&b.api_version))
            .then_with(|| key_a.subresource.cmp(&key_b.subresource))
    });
    let encoded = entries
        .into_iter()
        .map(|(key, entry)| {
            let mut map = Map::new();
            if !key.manager.is_empty() {
                map.insert("manager".into(), Value::String(key.manager.clone()));
            }
            map.insert("operation".into(), Value::String(operation_of(entry, key).as_str().to_string()));
            map.insert("apiVersion".into(), Value::String(entry.api_version.clone()));
            if let Some(time) = &entry.time {
                map.insert("time".into(), Value::String(time.clone()));
            }
            map.insert("fieldsType".into(), Value::String("FieldsV1".into()));
            map.insert("fieldsV1".into(), entry.set.to_fields_v1());
            if !key.subresource.is_empty() {
                map.insert("subresource".into(), Value::String(key.subresource.clone()));
            }
            Value::Object(map)
        })
        .collect();
    Some(Value::Array(encoded))
}

pub(super) fn managed_fields_of(object: &Value) -> Option<&Value> {
    object.pointer("/metadata/managedFields")
}

pub(super) fn without_managed_fields(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(metadata) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
    }
    copy
}

pub(super) fn with_managed_fields(mut object: Value, managers: &Managers) -> Value {
    let encoded = encode_managers(managers);
    if let Value::Object(root) = &mut object {
        match encoded {
            Some(encoded) => {
                let metadata = root.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(metadata) = metadata {
                    metadata.insert("managedFields".into(), encoded);
                }
            }
            None => {
                if let Some(Value::Object(metadata)) = root.get_mut("metadata") {
                    metadata.remove("managedFields");
                }
            }
        }
    }
    object
}

const MAX_UPDATE_MANAGERS: usize = 10;

/// Folds the oldest updaters into "ancient-changes" entries (per API version) once there are more
/// than ten of them, as kube-apiserver does.
pub(super) fn cap_updaters(managers: &mut Managers) {
    let mut updaters: Vec<ManagerKey> =
        managers.iter().filter(|(_, entry)| !entry.applied).map(|(key, _)| key.clone()).collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by(|a, b| {
        let time = |key: &ManagerKey| unix_seconds(managers.get(key).and_then(|entry| entry.time.as_deref()));
        time(a).cmp(&time(b)).then_with(|| a.cmp(b))
    });
    let mut first_by_version: BTreeMap<String, ManagerKey> = BTreeMap::new();
    let mut remaining = updaters.len();
    for key in updaters {
        if remaining <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(entry) = managers.get(&key).cloned() else { continue };
        let version = entry.api_version.clone();
        let bucket = ManagerKey {
            manager: "ancient-changes".into(),
            operation: Operation::Update,
            api_version: version.clone(),
            subresource: String::new(),
        };
        match first_by_version.get(&version) {
            Some(first) => {
                if !managers.contains_key(&bucket)
                    && let Some(first_entry) = managers.remove(first)
                {
                    managers.insert(bucket.clone(), first_entry);
                }
                managers.remove(&key);
                if let Some(bucket_entry) = managers.get_mut(&bucket) {
                    bucket_entry.set = entry.set.union(&bucket_entry.set);
                    bucket_entry.time = entry.time.clone();
                }
                remaining -= 1;
            }
            None => {
                first_by_version.insert(version, key);
            }
        }
    }
}

pub(super) fn api_version_of(object: &Value) -> &str {
    object.get("apiVersion").and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_sort_by_their_instant() {
        let cases = [
            (Some("1970-01-01T00:00:00Z"), 0),
            (Some("2024-05-01T10:00:00Z"), 1_714_557_600),
            (Some("2024-05-01T10:00:00.5Z"), 1_714_557_600),
            (Some("2024-05-01T12:00:00+02:00"), 1_714_557_600),
            (Some("garbage"), 0),
            (None, 0),
        ];
        for (time, seconds) in cases {
            assert_eq!(unix_seconds(time), seconds, "{time:?}");
        }
    }
}
