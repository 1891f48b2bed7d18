//! Ownership recorded for ordinary writes (create, update, patch, subresource writes): the
//! managed-fields updater with its "current operation" bookkeeping.

use serde_json::{Map, Value};

use super::{
    compare::compare,
    conflicts::settle_ownership,
    list_types::{ListTypes, Schema},
    managed_fields::{
        ManagerEntry, ManagerKey, Managers, Operation, api_version_of, cap_updaters, decode_managers,
        managed_fields_of, strip_set, with_managed_fields, without_managed_fields,
    },
    typed_form::typed_form,
};

/// Records, for a non-apply write (create/update/patch) by `manager`, ownership of the fields whose
/// values changed between `old` (None on create: all fields) and `new`, as kube-apiserver's
/// managed-fields updater does (operation Update; other managers lose fields that this write
/// changed). Returns `new` with managedFields updated.
pub fn record_update(
    old: Option<&Value>,
    new: &Value,
    manager: &str,
    lists: &dyn ListTypes,
    now: &str,
) -> Value {
    record(old, new, manager, None, lists, now)
}

/// [`record_update`] for a write to a subresource (`status`, `scale`): the managed fields in the
/// request are ignored (the stored ones are kept) and the entry records the subresource.
pub fn record_subresource_update(
    old: &Value,
    new: &Value,
    manager: &str,
    subresource: &str,
    lists: &dyn ListTypes,
    now: &str,
) -> Value {
    record(Some(old), new, manager, Some(subresource), lists, now)
}

fn record(
    old: Option<&Value>,
    new: &Value,
    manager: &str,
    subresource: Option<&str>,
    lists: &dyn ListTypes,
    now: &str,
) -> Value {
    let schema = Schema::new(lists);
    let decode_old = || {
        old.and_then(managed_fields_of).and_then(|fields| decode_managers(fields).ok()).unwrap_or_default()
    };
    let mut managers = if subresource.is_some() {
        decode_old()
    } else {
        match managed_fields_of(new) {
            Some(Value::Array(entries)) if is_reset(entries) => Managers::new(),
            Some(fields) => match decode_managers(fields) {
                Ok(managers) if !managers.is_empty() => managers,
                _ => decode_old(),
            },
            None => decode_old(),
        }
    };
    let new_plain = without_managed_fields(new);
    // Objects that exist without managed fields are not tracked until someone applies.
    let exists = old.is_some_and(|old| {
        old.pointer("/metadata/uid").and_then(Value::as_str).is_some_and(|uid| !uid.is_empty())
    });
    if managers.is_empty() && exists {
        return new_plain;
    }
    let old_plain = match old {
        Some(old) => without_managed_fields(old),
        None => Value::Object(Map::new()),
    };
    let api_version = match api_version_of(new) {
        "" => old.map(api_version_of).unwrap_or("").to_string(),
        version => version.to_string(),
    };
    let key = ManagerKey {
        manager: if manager.is_empty() { "unknown".into() } else { manager.to_string() },
        operation: Operation::Update,
        api_version: api_version.clone(),
        subresource: subresource.unwrap_or("").to_string(),
    };
    record_into(
        &typed_form(&old_plain, &schema),
        &typed_form(&new_plain, &schema),
        &mut managers,
        &key,
        &api_version,
        &schema,
        now,
    );
    with_managed_fields(new_plain, &managers)
}

/// Records an Update by `manager` (the managed-fields updater with its "current operation"
/// bookkeeping, the stripping of identity fields and the cap on updaters).
pub(super) fn record_into(
    old: &Value,
    new: &Value,
    managers: &mut Managers,
    key: &ManagerKey,
    api_version: &str,
    schema: &Schema,
    now: &str,
) {
    let comparison = compare(old, new, schema);
    let current = ManagerKey {
        manager: "\u{0}current-operation".into(),
        operation: Operation::Update,
        api_version: api_version.to_string(),
        subresource: String::new(),
    };
    // Forced, so this cannot fail.
    let _ = settle_ownership(&comparison, managers, &current, true);
    let changed = comparison.modified.union(&comparison.added).difference(&strip_set());
    if !changed.is_empty() {
        let previous = managers.remove(key).map(|entry| entry.set).unwrap_or_default();
        managers.insert(
            key.clone(),
            ManagerEntry {
                set: changed.union(&previous),
                api_version: api_version.to_string(),
                applied: false,
                time: Some(now.to_string()),
            },
        );
    }
    cap_updaters(managers);
}

/// `managedFields: []` or `[{}]` in a write asks for the managed fields to be reset.
fn is_reset(entries: &[Value]) -> bool {
    match entries {
        [] => true,
        [only] => only.as_object().is_some_and(|map| map.values().all(Value::is_null) || map.is_empty()),
        _ => false,
    }
}
