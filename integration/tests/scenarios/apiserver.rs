//! API server and controller-manager behaviour that upstream clients see, the same on both
//! tiers: the `default` ServiceAccount of a new namespace (made again after deletion).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::Duration;

use k8s_openapi::api::{
    core::v1::{Namespace, ServiceAccount},
};
use kruise_integration::{Scene, Skip};
use kube::{
    Api,
    api::{DeleteParams, PostParams},
};
use serde_json::json;

/// Polls `check` every 100 ms for up to 30 s; the value it returned last.
async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..300 {
        if let Some(value) = check().await {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// kube-controller-manager's serviceaccounts controller: a new namespace gets its `default`
/// ServiceAccount, with nothing in it but metadata, and gets it again when it is deleted.
pub async fn default_service_account(scene: Scene) -> Result<(), Skip> {
    let client = scene.cluster().client();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": "sa-check"}})).unwrap();
    namespaces.create(&PostParams::default(), &namespace).await.unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(client, "sa-check");
    let account =
        wait_for("the default service account", || async { accounts.get_opt("default").await.unwrap() })
            .await;
    let mut shape = serde_json::to_value(&account).unwrap();
    let metadata = shape["metadata"].as_object_mut().unwrap();
    let mut metadata_fields: Vec<String> = metadata.keys().cloned().collect();
    metadata_fields.sort();
    shape.as_object_mut().unwrap().remove("metadata");
    scene.observe("serviceaccount/metadata fields", metadata_fields);
    scene.observe("serviceaccount/without metadata", shape);

    accounts.delete("default", &DeleteParams::default()).await.unwrap();
    let again = wait_for("the default service account again", || async {
        accounts.get_opt("default").await.unwrap().filter(|again| again.metadata.uid != account.metadata.uid)
    })
    .await;
    scene.observe("serviceaccount/made again", again.metadata.name);
    namespaces.delete("sa-check", &DeleteParams::default()).await.unwrap();
    Ok(())
}
