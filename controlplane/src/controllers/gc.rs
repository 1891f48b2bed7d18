//! Garbage collection by owner references (kube-controller-manager's garbage collector):
//! dependents whose owners are all gone are deleted (background propagation); owners deleted in
//! the foreground (`foregroundDeletion` finalizer) get their dependents deleted first and go
//! once no dependent with `blockOwnerDeletion` remains; owners deleted with `orphan` have
//! their references removed from the dependents before they go.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use super::CONTROLLER_TICK;
use crate::{
    apiserver::{api::Api, objects, options::DeleteOptions},
    registry::ResourceDef,
    storage::{Mutation, ObjectKey},
};

const FOREGROUND: &str = "foregroundDeletion";
const ORPHAN: &str = "orphan";

struct Entry {
    def: std::sync::Arc<ResourceDef>,
    key: ObjectKey,
    object: std::sync::Arc<Value>,
}

pub(super) async fn run(api: Api) {
    loop {
        collect(&api).await;
        tokio::time::sleep(CONTROLLER_TICK).await;
    }
}

/// One pass over every stored object.
pub(crate) async fn collect(api: &Api) {
    let mut entries = Vec::new();
    // A resource sharing another's storage is the same objects seen through another API.
    for def in api.registry.all().into_iter().filter(|def| !def.shares_storage()) {
        let (objects_list, _) = api.store.list(&Api::collection(&def, None));
        for object in objects_list {
            let key = ObjectKey {
                group: def.group.clone(),
                resource: def.resource.clone(),
                namespace: objects::namespace(&object).map(str::to_string),
                name: objects::name(&object).unwrap_or_default().to_string(),
            };
            entries.push(Entry { def: def.clone(), key, object });
        }
    }
    let by_uid: HashMap<String, usize> = entries
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| objects::uid(&entry.object).map(|uid| (uid.to_string(), index)))
        .collect();
    // Dependents of each owner uid.
    let mut dependents: HashMap<String, Vec<usize>> = HashMap::new();
    for (index, entry) in entries.iter().enumerate() {
        for owner in objects::owner_references(&entry.object) {
            dependents.entry(owner.uid).or_default().push(index);
        }
    }

    for entry in &entries {
        let owners = objects::owner_references(&entry.object);
        if owners.is_empty() {
            continue;
        }
        let mut dangling = Vec::new();
        let mut orphaning = Vec::new();
        let mut owner_deleting_foreground = false;
        let mut alive = 0;
        for owner in &owners {
            match by_uid.get(&owner.uid).map(|&i| &entries[i]) {
                // An owner with the same uid must also match the namespace rules: namespaced
                // owners only own dependents in their own namespace.
                Some(found)
                    if found.key.namespace.is_none() || found.key.namespace == entry.key.namespace =>
                {
                    let finalizers = objects::finalizers(&found.object);
                    if objects::is_deleting(&found.object) && finalizers.iter().any(|f| f == ORPHAN) {
                        orphaning.push(owner.uid.clone());
                    } else if objects::is_deleting(&found.object)
                        && finalizers.iter().any(|f| f == FOREGROUND)
                    {
                        owner_deleting_foreground = true;
                        alive += 1;
                    } else {
                        alive += 1;
                    }
                }
                _ => dangling.push(owner.uid.clone()),
            }
        }
        let removable: HashSet<String> = dangling.iter().chain(orphaning.iter()).cloned().collect();
        let all_gone = alive == 0 && orphaning.is_empty();
        if objects::is_deleting(&entry.object) {
            continue;
        }
        if all_gone || (owner_deleting_foreground && alive == 1 && owners.len() == 1) {
            let propagation = if owner_deleting_foreground { "Foreground" } else { "Background" };
            let options =
                DeleteOptions { propagation_policy: Some(propagation.into()), ..Default::default() };
            let name = entry.key.name.clone();
            if let Err(error) = api
                .delete(
                    &entry.def,
                    &entry.def.storage_version,
                    entry.key.namespace.as_deref(),
                    &name,
                    &options,
                )
                .await
                && error.code != 404
            {
                tracing::debug!(%error, object = %name, "garbage collector could not delete a dependent");
            }
        } else if !removable.is_empty() {
            remove_owner_references(api, &entry.key, &removable);
        }
    }

    // Release owners whose foreground or orphan deletion is done.
    for entry in &entries {
        if !objects::is_deleting(&entry.object) {
            continue;
        }
        let finalizers = objects::finalizers(&entry.object);
        let uid = objects::uid(&entry.object).unwrap_or_default().to_string();
        let remaining: Vec<&Entry> =
            dependents.get(&uid).map(|d| d.iter().map(|&i| &entries[i]).collect()).unwrap_or_default();
        let mut release = Vec::new();
        if finalizers.iter().any(|f| f == FOREGROUND) {
            let blocking = remaining.iter().any(|dependent| {
                objects::owner_references(&dependent.object)
                    .iter()
                    .any(|r| r.uid == uid && r.block_owner_deletion)
            });
            if !blocking {
                release.push(FOREGROUND);
            }
        }
        if finalizers.iter().any(|f| f == ORPHAN) && remaining.is_empty() {
            release.push(ORPHAN);
        }
        if !release.is_empty() {
            remove_finalizers(api, &entry.key, &release);
        }
    }
}

fn remove_owner_references(api: &Api, key: &ObjectKey, uids: &HashSet<String>) {
    let _ = api.store.mutate(key, |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        let Some(references) = current.pointer("/metadata/ownerReferences").and_then(Value::as_array) else {
            return Ok(Mutation::Keep);
        };
        let kept: Vec<Value> = references
            .iter()
            .filter(|r| !r.get("uid").and_then(Value::as_str).is_some_and(|uid| uids.contains(uid)))
            .cloned()
            .collect();
        let mut next = current.clone();
        objects::set_meta(&mut next, "ownerReferences", (!kept.is_empty()).then(|| json!(kept)));
        Ok(Mutation::Put(next))
    });
}

fn remove_finalizers(api: &Api, key: &ObjectKey, release: &[&str]) {
    let _ = api.store.mutate(key, |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        let finalizers: Vec<String> =
            objects::finalizers(current).into_iter().filter(|f| !release.contains(&f.as_str())).collect();
        let grace =
            current.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(0);
        let namespace_finalizing = key.group.is_empty()
            && key.resource == "namespaces"
            && current.pointer("/spec/finalizers").and_then(Value::as_array).is_some_and(|f| !f.is_empty());
        if finalizers.is_empty() && grace == 0 && objects::is_deleting(current) && !namespace_finalizing {
            return Ok(Mutation::Delete);
        }
        let mut next = current.clone();
        objects::set_finalizers(&mut next, &finalizers);
        Ok(Mutation::Put(next))
    });
}
