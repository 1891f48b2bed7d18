//! Conflicts and ownership moves: which managers lose the fields a change touched (a conflict
//! for an apply unless forced), and the messages of the 409 kube-apiserver answers a conflict with.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{
    applying::ApplyError,
    compare::Comparison,
    fieldpath::{FieldSet, go_quote, path_to_string},
    managed_fields::{ManagerKey, Managers, Operation, decode_managers, managed_fields_of},
};

/// A manager's claim on a field whose value it does not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The name of the manager that owns the field (`kubectl`, `kube-controller-manager`, ...).
    pub manager: String,
    /// The field, as kube-apiserver prints it (`.spec.replicas`,
    /// `.spec.template.spec.containers[name="nginx"].image`).
    pub field: String,
}

/// structured-merge-diff's `update`: managers other than `current` lose the fields this change
/// modified (a conflict unless forced) or removed.
pub(super) fn settle_ownership(
    comparison: &Comparison,
    managers: &mut Managers,
    current: &ManagerKey,
    force: bool,
) -> Result<(), ApplyError> {
    let changed = comparison.modified.union(&comparison.added);
    let mut conflicts: Vec<(ManagerKey, FieldSet)> = Vec::new();
    for (key, entry) in managers.iter() {
        if key == current {
            continue;
        }
        let conflict = entry.set.intersection(&changed);
        if !conflict.is_empty() {
            conflicts.push((key.clone(), conflict));
        }
    }
    if !force && !conflicts.is_empty() {
        let list = conflicts
            .iter()
            .flat_map(|(key, set)| {
                set.paths()
                    .into_iter()
                    .map(|path| Conflict { manager: key.manager.clone(), field: path_to_string(&path) })
            })
            .collect();
        return Err(ApplyError::Conflicts(list));
    }
    for (key, conflict) in conflicts {
        if let Some(entry) = managers.get_mut(&key) {
            entry.set = entry.set.difference(&conflict);
        }
    }
    if !comparison.removed.is_empty() {
        for (key, entry) in managers.iter_mut() {
            if key != current {
                entry.set = entry.set.difference(&comparison.removed);
            }
        }
    }
    managers.retain(|_, entry| !entry.set.is_empty());
    Ok(())
}

/// The message of the 409 Status kube-apiserver answers an apply conflict with
/// (`Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas`); `live` is the
/// object the apply was made against, whose managed fields describe the managers.
pub fn conflict_message(live: Option<&Value>, conflicts: &[Conflict]) -> String {
    let described = describe_conflicts(live, conflicts);
    if let ([conflict], [(_, description)]) = (conflicts, described.as_slice()) {
        return format!("Apply failed with 1 conflict: conflict with {description}: {}", conflict.field);
    }
    // Grouped by manager entry, in the order of their identifiers.
    let mut groups: BTreeMap<&(ManagerKey, String), Vec<&str>> = BTreeMap::new();
    for (conflict, entry) in conflicts.iter().zip(described.iter()) {
        groups.entry(entry).or_default().push(conflict.field.as_str());
    }
    let mut lines = Vec::new();
    for ((_, description), fields) in groups {
        lines.push(format!("conflicts with {description}:"));
        lines.extend(fields.into_iter().map(|field| format!("- {field}")));
    }
    format!("Apply failed with {} conflicts: {}", conflicts.len(), lines.join("\n"))
}

/// The message of one `FieldManagerConflict` cause of that Status (`conflict with "kubectl"`,
/// or `conflict with "kube-controller-manager" using apps/v1` for an updater).
pub fn conflict_cause_message(live: Option<&Value>, conflict: &Conflict) -> String {
    let described = describe_conflicts(live, std::slice::from_ref(conflict));
    let description = described.into_iter().next().map(|(_, text)| text).unwrap_or_default();
    format!("conflict with {description}")
}

/// Finds, for each conflict, the managed-fields entry it is with (the same name may have an
/// Apply and an Update entry, both owning the field: they come in that order) and describes it
/// the way kube-apiserver does: quoted, with the subresource if any, and for updaters with the
/// API version they wrote (its manager identifiers carry no time).
fn describe_conflicts(live: Option<&Value>, conflicts: &[Conflict]) -> Vec<(ManagerKey, String)> {
    let mut entries: Vec<(ManagerKey, BTreeSet<String>)> = live
        .and_then(managed_fields_of)
        .and_then(|fields| decode_managers(fields).ok())
        .unwrap_or_default()
        .into_iter()
        .map(|(key, entry)| (key, entry.set.paths().iter().map(|path| path_to_string(path)).collect()))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut totals: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for conflict in conflicts {
        *totals.entry((conflict.manager.as_str(), conflict.field.as_str())).or_insert(0) += 1;
    }
    let mut seen: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    conflicts
        .iter()
        .map(|conflict| {
            let pair = (conflict.manager.as_str(), conflict.field.as_str());
            let total = totals.get(&pair).copied().unwrap_or(1);
            let occurrence = seen.entry(pair).or_insert(0);
            let named: Vec<&(ManagerKey, BTreeSet<String>)> =
                entries.iter().filter(|(key, _)| key.manager == conflict.manager).collect();
            let owning: Vec<&&(ManagerKey, BTreeSet<String>)> =
                named.iter().filter(|(_, paths)| paths.contains(&conflict.field)).collect();
            // An owner that did not conflict is the applier itself: its Apply entry comes first.
            let skipped = owning.len().saturating_sub(total);
            let chosen = owning
                .get(skipped + *occurrence)
                .or(owning.last())
                .map(|entry| &entry.0)
                .or(named.first().map(|e| &e.0));
            *occurrence += 1;
            let key = chosen.cloned().unwrap_or_else(|| ManagerKey {
                manager: conflict.manager.clone(),
                operation: Operation::Apply,
                api_version: String::new(),
                subresource: String::new(),
            });
            let mut text = go_quote(&key.manager);
            if !key.subresource.is_empty() {
                text = format!("{text} with subresource {}", go_quote(&key.subresource));
            }
            if key.operation == Operation::Update {
                text = format!("{text} using {}", key.api_version);
            }
            (key, text)
        })
        .collect()
}
