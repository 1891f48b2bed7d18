//! Server-side apply: an applied configuration checked, merged into the live object, the fields
//! its applier dropped pruned, conflicts settled and the applier's ownership recorded.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{
    compare::compare,
    conflicts::{Conflict, settle_ownership},
    fieldpath::{FieldSet, Pe, values_equal},
    list_types::{ListKind, ListTypes, Schema, element_path, field_path, list_item_pe},
    managed_fields::{
        ManagerEntry, ManagerKey, Managers, Operation, api_version_of, decode_managers, managed_fields_of,
        strip_set, with_managed_fields, without_managed_fields,
    },
    merge::{merge, remove_items},
    recording::record_into,
    to_field_set::to_field_set,
    typed_form::{drop_nulls, typed_form},
};

/// Why an apply was refused.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// Fields the configuration sets are owned by other managers with other values (409).
    #[error("conflicts")]
    Conflicts(Vec<Conflict>),
    /// The configuration cannot be applied (bad object, duplicate list keys, ...).
    #[error("{0}")]
    Invalid(String),
}

/// Applies `config` (a full or partial object in the applier's intent) as `manager` onto `live`
/// (None = create): fields owned by other managers with different values are conflicts (unless
/// `force`, which takes them over); fields this manager applied before but omits now are removed
/// (unless another manager also owns them); maps are merged, associative lists merged by key, sets
/// unioned, atomic lists replaced. Returns the new object with `metadata.managedFields` updated
/// (fieldsType FieldsV1, operation Apply, apiVersion of the config, time = `now` RFC 3339).
pub fn apply(
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    force: bool,
    lists: &dyn ListTypes,
    now: &str,
) -> Result<Value, ApplyError> {
    apply_to(live, config, manager, None, force, lists, now)
}

/// [`apply`] to a subresource (`PATCH .../status?fieldManager=x` with an apply patch): the
/// ownership is recorded under an entry with `subresource` set.
pub fn apply_subresource(
    live: &Value,
    config: &Value,
    manager: &str,
    subresource: &str,
    force: bool,
    lists: &dyn ListTypes,
    now: &str,
) -> Result<Value, ApplyError> {
    apply_to(Some(live), config, manager, Some(subresource), force, lists, now)
}

fn apply_to(
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    subresource: Option<&str>,
    force: bool,
    lists: &dyn ListTypes,
    now: &str,
) -> Result<Value, ApplyError> {
    let schema = Schema::new(lists);
    let Value::Object(config_map) = config else {
        return Err(ApplyError::Invalid("apply configuration must be an object".to_string()));
    };
    if api_version_of(config).is_empty()
        || config.get("kind").and_then(Value::as_str).unwrap_or("").is_empty()
    {
        return Err(ApplyError::Invalid(format!("invalid object type: {}", gvk_text(config))));
    }
    if config_map
        .get("metadata")
        .and_then(|metadata| metadata.get("managedFields"))
        .is_some_and(|v| !v.is_null())
    {
        return Err(ApplyError::Invalid("metadata.managedFields must be nil".to_string()));
    }
    // The configuration must be of the kind and version of the endpoint (here: of the live object).
    if let Some(live) = live {
        let live_kind = live.get("kind").and_then(Value::as_str).unwrap_or("");
        let live_version = api_version_of(live);
        let kind_differs =
            !live_kind.is_empty() && config.get("kind").and_then(Value::as_str) != Some(live_kind);
        let version_differs = !live_version.is_empty() && api_version_of(config) != live_version;
        if kind_differs || version_differs {
            return Err(ApplyError::Invalid(format!("invalid object type: {}", gvk_text(config))));
        }
    }
    let api_version = api_version_of(config).to_string();
    let mut managers = match live.and_then(managed_fields_of) {
        Some(fields) => decode_managers(fields)
            .map_err(|err| ApplyError::Invalid(format!("failed to decode managed fields: {err}")))?,
        None => Managers::new(),
    };
    let live_plain = match live {
        Some(live) => without_managed_fields(live),
        None => {
            let mut empty = Map::new();
            empty.insert("apiVersion".into(), Value::String(api_version.clone()));
            if let Some(kind) = config.get("kind") {
                empty.insert("kind".into(), kind.clone());
            }
            Value::Object(empty)
        }
    };

    // Fields of an object nobody tracked yet belong to "before-first-apply".
    if managers.is_empty() && live.is_some() {
        let key = ManagerKey {
            manager: "before-first-apply".into(),
            operation: Operation::Update,
            api_version: api_version.clone(),
            subresource: String::new(),
        };
        let zero = typed_form(&Value::Object(Map::new()), &schema);
        record_into(
            &zero,
            &typed_form(&live_plain, &schema),
            &mut managers,
            &key,
            &api_version,
            &schema,
            now,
        );
    }

    let key = ManagerKey {
        manager: if manager.is_empty() { "unknown".into() } else { manager.to_string() },
        operation: Operation::Apply,
        api_version: String::new(),
        subresource: subresource.unwrap_or("").to_string(),
    };

    validate_config(config, &schema)?;
    // Ownership is worked out on the typed form of the live object, exactly as kube-apiserver
    // does; the object returned is the same merge done on the stored form, so that no typed
    // artifact (zero values) leaks into it.
    let typed_live = typed_form(&live_plain, &schema);
    let merge_config = |live: &Value| {
        merge(Some(live), Some(config), "", &mut Vec::new(), &schema)
            .map(|merged| merged.unwrap_or_else(|| Value::Object(Map::new())))
            .map_err(|err| ApplyError::Invalid(format!("failed to merge config: {err}")))
    };
    let merged_typed = merge_config(&typed_live)?;
    let merged_stored = merge_config(&live_plain)?;
    let previous = managers.get(&key).cloned();
    let applied = to_field_set(config, &schema).map_err(ApplyError::Invalid)?;
    managers.insert(
        key.clone(),
        ManagerEntry {
            set: applied,
            api_version: api_version.clone(),
            applied: true,
            time: previous.as_ref().and_then(|entry| entry.time.clone()),
        },
    );
    let (new_typed, mut new_object) =
        match previous.as_ref().map(|entry| &entry.set).filter(|set| !set.is_empty()) {
            Some(last) => (
                prune(&merged_typed, &managers, last, &schema).map_err(ApplyError::Invalid)?,
                prune(&merged_stored, &managers, last, &schema).map_err(ApplyError::Invalid)?,
            ),
            None => (merged_typed, merged_stored),
        };
    drop_nulls(&mut new_object);

    let comparison = compare(&typed_live, &new_typed, &schema);
    settle_ownership(&comparison, &mut managers, &key, force)?;

    let changed = !values_equal(&typed_live, &new_typed);
    if let Some(entry) = managers.get_mut(&key) {
        entry.set = entry.set.difference(&strip_set());
        if changed {
            entry.time = Some(now.to_string());
        }
    }
    managers.retain(|_, entry| !entry.set.is_empty());
    let result = if changed { new_object } else { live_plain };
    Ok(with_managed_fields(result, &managers))
}

/// Checks an applied configuration the way converting it to a typed value does: list elements
/// must carry their keys, and keys may not repeat.
fn validate_config(config: &Value, schema: &Schema) -> Result<(), ApplyError> {
    let mut errors = Vec::new();
    validate_walk(config, "", "", schema, &mut errors);
    if errors.is_empty() {
        return Ok(());
    }
    let detail = match errors.as_slice() {
        [only] => only.clone(),
        _ => {
            let lines: Vec<String> = errors.iter().map(|error| format!("  {error}")).collect();
            format!("errors:\n{}", lines.join("\n"))
        }
    };
    let text = |pointer: &str| config.pointer(pointer).and_then(Value::as_str).unwrap_or("").to_string();
    Err(ApplyError::Invalid(format!(
        "failed to create typed patch object ({}/{}; {}): {detail}",
        text("/metadata/namespace"),
        text("/metadata/name"),
        gvk_text(config)
    )))
}

fn validate_walk(value: &Value, schema_path: &str, path: &str, schema: &Schema, errors: &mut Vec<String>) {
    let located = |message: String| if path.is_empty() { message } else { format!("{path}: {message}") };
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                validate_walk(child, &field_path(schema_path, key), &format!("{path}.{key}"), schema, errors);
            }
        }
        Value::Array(items) => {
            let kind = schema.list_kind(schema_path);
            let child_path = element_path(schema_path);
            let mut seen = BTreeSet::new();
            for (index, item) in items.iter().enumerate() {
                let pe = match kind {
                    ListKind::Atomic => Pe::Index(i64::try_from(index).unwrap_or(i64::MAX)),
                    _ => match list_item_pe(item, &kind, schema_path, schema) {
                        Ok(pe) => pe,
                        Err(err) => {
                            errors.push(located(format!("element {index}: {err}")));
                            return;
                        }
                    },
                };
                if !matches!(kind, ListKind::Atomic) && !seen.insert(pe.clone()) {
                    errors.push(located(format!("duplicate entries for key {pe}")));
                }
                validate_walk(item, &child_path, &format!("{path}{pe}"), schema, errors);
            }
        }
        _ => {}
    }
}

/// Removes what the applier owned last time and no longer applies, unless another manager (or
/// this apply) still owns it.
fn prune(merged: &Value, managers: &Managers, last: &FieldSet, schema: &Schema) -> Result<Value, String> {
    let ensure = |set: &FieldSet| set.ensure_named_fields_are_members("", schema);
    let remove = |value: &Value, set: &FieldSet| {
        remove_items(value, set, "", schema).unwrap_or_else(|| Value::Object(Map::new()))
    };
    let last = ensure(last);
    let pruned = remove(merged, &last);

    // Add back what anybody still owns.
    let owned = managers.values().fold(FieldSet::default(), |all, entry| all.union(&entry.set));
    let merged_set = ensure(&to_field_set(merged, schema)?);
    let pruned_set = ensure(&to_field_set(&pruned, schema)?);
    let pruned = remove(merged, &merged_set.difference(&pruned_set.union(&ensure(&owned))));

    // Only what the applier owned before may go.
    let pruned_set = ensure(&to_field_set(&pruned, schema)?);
    Ok(remove(merged, &merged_set.difference(&pruned_set).intersection(&last)))
}

fn gvk_text(object: &Value) -> String {
    let api_version = api_version_of(object);
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let (group, version) = match api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    };
    format!("{group}/{version}, Kind={kind}")
}
