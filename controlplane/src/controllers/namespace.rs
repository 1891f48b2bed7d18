//! Namespace deletion: a namespace marked for deletion has every object in it deleted; once it
//! is empty its `kubernetes` finalizer is removed and the namespace goes away (kube-controller-
//! manager's namespace controller).

use serde_json::{Value, json};

use super::CONTROLLER_TICK;
use crate::{
    apiserver::{
        api::Api,
        objects,
        options::{DeleteOptions, FieldValidation, WriteOptions},
    },
    storage::CollectionKey,
};

pub(super) async fn run(api: Api) {
    let namespaces = CollectionKey { group: String::new(), resource: "namespaces".into(), namespace: None };
    loop {
        let (all, _) = api.store.list(&namespaces);
        for namespace in all.iter().filter(|ns| objects::is_deleting(ns)) {
            let name = objects::name(namespace).unwrap_or_default().to_string();
            if let Err(error) = drain(&api, &name, namespace).await {
                tracing::debug!(namespace = %name, %error, "namespace not drained yet");
            }
        }
        tokio::time::sleep(CONTROLLER_TICK).await;
    }
}

async fn drain(api: &Api, name: &str, namespace: &Value) -> Result<(), String> {
    let collections = api.store.collections_in_namespace(name);
    let mut remaining = 0usize;
    for collection in &collections {
        let (items, _) = api.store.list(collection);
        remaining += items.len();
        let Some(def) = api.registry.find_resource(&collection.group, &collection.resource) else {
            // A resource no longer served (its CRD is gone): drop the objects.
            for item in items.iter() {
                let key = crate::storage::ObjectKey {
                    group: collection.group.clone(),
                    resource: collection.resource.clone(),
                    namespace: Some(name.to_string()),
                    name: objects::name(item).unwrap_or_default().to_string(),
                };
                let _ = api.store.delete(&key, None);
            }
            continue;
        };
        for item in items.iter().filter(|item| !objects::is_deleting(item)) {
            let object_name = objects::name(item).unwrap_or_default().to_string();
            let options =
                DeleteOptions { propagation_policy: Some("Background".into()), ..Default::default() };
            if let Err(error) =
                api.delete(&def, &def.storage_version, Some(name), &object_name, &options).await
                && error.code != 404
            {
                return Err(error.to_string());
            }
        }
    }
    if remaining > 0 {
        return Err(format!("{remaining} objects left"));
    }
    let has_spec_finalizer = namespace
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|f| f == "kubernetes"));
    if !has_spec_finalizer {
        return Ok(());
    }
    let Some(def) = api.registry.find("", "v1", "namespaces") else { return Ok(()) };
    let mut finalized = namespace.clone();
    let finalizers: Vec<Value> = namespace
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .map(|f| f.iter().filter(|f| *f != "kubernetes").cloned().collect())
        .unwrap_or_default();
    finalized["spec"]["finalizers"] = json!(finalizers);
    let options = WriteOptions {
        dry_run: false,
        field_manager: "namespace-controller".into(),
        field_validation: FieldValidation::Ignore,
        force: false,
    };
    api.update(&def, "v1", None, name, Some("finalize"), finalized, &options)
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}
