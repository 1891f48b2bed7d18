//! CRD status and cleanup: every stored CRD gets `NamesAccepted` and `Established` conditions,
//! `acceptedNames` and `storedVersions`; a deleted CRD first deletes every object of its kind
//! (finalizer `customresourcecleanup.apiextensions.k8s.io`), as kube-apiextensions-apiserver does.

use serde_json::{Value, json};

use super::CONTROLLER_TICK;
use crate::{
    apiserver::{api::Api, objects},
    storage::{CollectionKey, Mutation, ObjectKey},
};

const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

pub(super) async fn run(api: Api) {
    let collection = CollectionKey {
        group: "apiextensions.k8s.io".into(),
        resource: "customresourcedefinitions".into(),
        namespace: None,
    };
    loop {
        let (crds, _) = api.store.list(&collection);
        for crd in crds.iter() {
            let name = objects::name(crd).unwrap_or_default().to_string();
            let key = ObjectKey {
                group: collection.group.clone(),
                resource: collection.resource.clone(),
                namespace: None,
                name,
            };
            if objects::is_deleting(crd) {
                cleanup(&api, crd, &key).await;
            } else {
                establish(&api, crd, &key);
            }
        }
        tokio::time::sleep(CONTROLLER_TICK).await;
    }
}

/// Writes the status conditions and the cleanup finalizer, when they are not there yet.
fn establish(api: &Api, crd: &Value, key: &ObjectKey) {
    let storage_version = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|versions| versions.iter().find(|v| v["storage"] == true))
        .and_then(|v| v["name"].as_str())
        .unwrap_or_default()
        .to_string();
    let established = crd
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Established" && c["status"] == "True"));
    let names = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let stored_versions: Vec<String> = crd
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let has_finalizer = objects::finalizers(crd).iter().any(|f| f == CLEANUP_FINALIZER);
    if established
        && has_finalizer
        && crd.pointer("/status/acceptedNames") == Some(&names)
        && stored_versions.contains(&storage_version)
    {
        return;
    }
    let result = api.store.mutate(key, |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        let mut next = current.clone();
        let now = objects::now_rfc3339();
        let mut versions = stored_versions.clone();
        if !storage_version.is_empty() && !versions.contains(&storage_version) {
            versions.push(storage_version.clone());
        }
        next["status"] = json!({
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now},
            ],
            "acceptedNames": names,
            "storedVersions": versions,
        });
        let mut finalizers = objects::finalizers(&next);
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(CLEANUP_FINALIZER.into());
            objects::set_finalizers(&mut next, &finalizers);
        }
        Ok(Mutation::Put(next))
    });
    if let Err(error) = result {
        tracing::warn!(?error, crd = %key.name, "could not update CRD status");
    }
}

/// Deletes every custom object of a deleting CRD, then releases its finalizer.
async fn cleanup(api: &Api, crd: &Value, key: &ObjectKey) {
    let group = crd.pointer("/spec/group").and_then(Value::as_str).unwrap_or_default().to_string();
    let plural = crd.pointer("/spec/names/plural").and_then(Value::as_str).unwrap_or_default().to_string();
    let collection = CollectionKey { group: group.clone(), resource: plural.clone(), namespace: None };
    let (remaining, _) = api.store.list(&collection);
    if !remaining.is_empty() {
        for object in remaining.iter() {
            let object_key = ObjectKey {
                group: group.clone(),
                resource: plural.clone(),
                namespace: objects::namespace(object).map(str::to_string),
                name: objects::name(object).unwrap_or_default().to_string(),
            };
            // Finalizers of custom objects are not waited for: the objects go with their CRD.
            let _ = api.store.delete(&object_key, None);
        }
        return;
    }
    let result = api.store.mutate(key, |current| -> Result<Mutation, ()> {
        let Some(current) = current else { return Ok(Mutation::Keep) };
        let finalizers: Vec<String> =
            objects::finalizers(current).into_iter().filter(|f| f != CLEANUP_FINALIZER).collect();
        if finalizers.is_empty() {
            return Ok(Mutation::Delete);
        }
        let mut next = current.clone();
        objects::set_finalizers(&mut next, &finalizers);
        Ok(Mutation::Put(next))
    });
    if result.is_ok() {
        api.refresh_custom_resources();
    }
}
