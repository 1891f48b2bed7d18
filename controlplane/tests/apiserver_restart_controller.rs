//! Durability across restarts (`--data-dir`), and a kube-rs `Controller` that owns children and
//! reacts to their events, running unmodified against the embedded API server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{sync::Arc, time::Duration};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};
use kube::{
    Api, Client, Config, Resource, ResourceExt,
    api::{ListParams, ObjectMeta, Patch, PatchParams, PostParams, WatchParams},
    runtime::{Controller, controller::Action, watcher},
};
use serde_json::json;

fn client_for(server: &ApiServer) -> Client {
    Client::try_from(Config::new(server.url.parse().unwrap())).unwrap()
}

#[tokio::test]
async fn objects_and_resource_versions_survive_a_restart_and_watches_resume() {
    let dir = tempfile::tempdir().unwrap();
    let config = ApiServerConfig { data_dir: Some(dir.path().to_path_buf()), ..Default::default() };
    let server = ApiServer::start(config.clone()).await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client_for(&server), "default");
    let mut last = String::new();
    for index in 0..5 {
        let cm: ConfigMap = serde_json::from_value(
            json!({"metadata": {"name": format!("keep-{index}")}, "data": {"i": index.to_string()}}),
        )
        .unwrap();
        last = api.create(&PostParams::default(), &cm).await.unwrap().metadata.resource_version.unwrap();
    }
    // Every write was on disk before it was acknowledged; the process-level crash test (kill -9)
    // is in the CLI tests. Here the server stops and a new one opens the same directory.
    server.shutdown().await;
    let server = reopen(&config).await;
    let api: Api<ConfigMap> = Api::namespaced(client_for(&server), "default");
    let list = api.list(&ListParams::default()).await.unwrap();
    let names: Vec<String> = list.items.iter().map(|cm| cm.name_any()).collect();
    assert_eq!(names, (0..5).map(|i| format!("keep-{i}")).collect::<Vec<_>>());
    let list_rv: u64 = list.metadata.resource_version.unwrap().parse().unwrap();
    assert!(list_rv >= last.parse::<u64>().unwrap(), "resourceVersions continue");

    // A watch from the last version seen before the restart gets exactly the later change.
    let mut stream = api.watch(&WatchParams::default(), &last).await.unwrap().boxed();
    api.patch("keep-0", &PatchParams::default(), &Patch::Merge(json!({"data": {"i": "changed"}})))
        .await
        .unwrap();
    let event = tokio::time::timeout(Duration::from_secs(5), stream.next()).await.unwrap().unwrap().unwrap();
    match event {
        kube::api::WatchEvent::Modified(cm) => {
            assert_eq!(cm.name_any(), "keep-0");
            assert!(cm.resource_version().unwrap().parse::<u64>().unwrap() > list_rv);
        }
        other => panic!("unexpected {other:?}"),
    }
    server.shutdown().await;
}

/// Opens the directory again once the previous server released it.
async fn reopen(config: &ApiServerConfig) -> ApiServer {
    for _ in 0..50 {
        match ApiServer::start(config.clone()).await {
            Ok(server) => return server,
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("the data directory was not released");
}

struct Context {
    client: Client,
}

#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct ReconcileError(#[from] kube::Error);

/// For every ConfigMap labelled `managed=true`, keeps a Secret of the same name owned by it.
async fn reconcile(configmap: Arc<ConfigMap>, context: Arc<Context>) -> Result<Action, ReconcileError> {
    let namespace = configmap.namespace().unwrap();
    let secrets: Api<Secret> = Api::namespaced(context.client.clone(), &namespace);
    let owner = configmap.controller_owner_ref(&()).unwrap();
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(configmap.name_any()),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        string_data: Some(
            [(
                "copied".to_string(),
                configmap.data.clone().unwrap_or_default().get("v").cloned().unwrap_or_default(),
            )]
            .into(),
        ),
        ..Default::default()
    };
    secrets
        .patch(&configmap.name_any(), &PatchParams::apply("test-controller").force(), &Patch::Apply(&secret))
        .await?;
    Ok(Action::await_change())
}

fn error_policy(_: Arc<ConfigMap>, _: &ReconcileError, _: Arc<Context>) -> Action {
    Action::requeue(Duration::from_millis(200))
}

#[tokio::test]
async fn a_kube_rs_controller_owns_children_and_sees_their_events() {
    let server = ApiServer::start(ApiServerConfig::default()).await.unwrap();
    let client = client_for(&server);
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let reconciles = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = reconciles.clone();
    let controller = Controller::new(configmaps.clone(), watcher::Config::default().labels("managed=true"))
        .owns(secrets.clone(), watcher::Config::default())
        .run(reconcile, error_policy, Arc::new(Context { client: client.clone() }))
        .for_each(move |_| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async {}
        });
    let task = tokio::spawn(controller);

    let cm: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "parent", "labels": {"managed": "true"}}, "data": {"v": "1"}}),
    )
    .unwrap();
    configmaps.create(&PostParams::default(), &cm).await.unwrap();
    let mut child = None;
    for _ in 0..100 {
        if let Some(secret) = secrets.get_opt("parent").await.unwrap() {
            child = Some(secret);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let child = child.expect("the controller created the child");
    assert_eq!(child.owner_references()[0].name, "parent");

    // Deleting the child is an event on an owned object: the controller recreates it.
    let before = reconciles.load(std::sync::atomic::Ordering::SeqCst);
    secrets.delete("parent", &Default::default()).await.unwrap();
    let mut recreated = false;
    for _ in 0..100 {
        if let Some(secret) = secrets.get_opt("parent").await.unwrap()
            && secret.uid() != child.uid()
        {
            recreated = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(recreated, "the child was recreated after its deletion");
    assert!(reconciles.load(std::sync::atomic::Ordering::SeqCst) > before);

    // Deleting the owner garbage-collects the child.
    configmaps.delete("parent", &Default::default()).await.unwrap();
    let mut collected = false;
    for _ in 0..100 {
        if secrets.get_opt("parent").await.unwrap().is_none() {
            collected = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(collected);
    task.abort();
    server.shutdown().await;
}
