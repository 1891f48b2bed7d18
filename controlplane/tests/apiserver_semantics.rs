//! kube-apiserver semantics the controllers and the node simulator rely on: generation moves
//! only with the spec, status and scale subresources, pod binding, graceful deletion, eviction
//! against a PodDisruptionBudget, pods/resize, dry runs, field-validation warnings, tables, and
//! the HTTPS mode.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use k8s_openapi::api::core::v1::Pod;
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};
use kube::{
    Api, Client, Config, ResourceExt,
    api::{DeleteParams, EvictParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

async fn start() -> (ApiServer, Client) {
    let server = ApiServer::start(ApiServerConfig::default()).await.unwrap();
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    (server, client)
}

fn pod(name: &str, labels: Value) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25", "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}}],
                 "terminationGracePeriodSeconds": 30}
    }))
    .unwrap()
}

#[tokio::test]
async fn generation_moves_with_the_spec_only() {
    let (server, client) = start().await;
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(client, "default");
    let deployment = serde_json::from_value(json!({
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}
    }))
    .unwrap();
    let created = deployments.create(&PostParams::default(), &deployment).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let labelled = deployments
        .patch("d", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})))
        .await
        .unwrap();
    assert_eq!(labelled.metadata.generation, Some(1), "metadata changes keep the generation");
    let status = deployments
        .patch_status("d", &PatchParams::default(), &Patch::Merge(json!({"status": {"replicas": 3}})))
        .await
        .unwrap();
    assert_eq!(status.metadata.generation, Some(1), "status changes keep the generation");
    assert_eq!(status.status.unwrap().replicas, Some(3));
    // The main resource ignores status; the spec change moves the generation.
    let spec = deployments
        .patch(
            "d",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 4}, "status": {"replicas": 99}})),
        )
        .await
        .unwrap();
    assert_eq!(spec.metadata.generation, Some(2));
    assert_eq!(spec.status.unwrap().replicas, Some(3));
    server.shutdown().await;
}

#[tokio::test]
async fn binding_graceful_deletion_and_unscheduled_pods() {
    let (server, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    pods.create(&PostParams::default(), &pod("bound", json!({}))).await.unwrap();
    let http = reqwest::Client::new();
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bound"}, "target": {"kind": "Node", "name": "node-1"}});
    let response = http
        .post(format!("{}/api/v1/namespaces/default/pods/bound/binding", server.url))
        .json(&binding)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(pods.get("bound").await.unwrap().spec.unwrap().node_name.as_deref(), Some("node-1"));
    let again = http
        .post(format!("{}/api/v1/namespaces/default/pods/bound/binding", server.url))
        .json(&binding)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409, "a pod is bound once");

    // A scheduled pod is deleted gracefully: it stays with a deletionTimestamp until the kubelet
    // (here: a grace-0 delete) finishes.
    pods.delete("bound", &DeleteParams::default()).await.unwrap();
    let terminating = pods.get("bound").await.unwrap();
    assert!(terminating.metadata.deletion_timestamp.is_some());
    assert_eq!(terminating.metadata.deletion_grace_period_seconds, Some(30));
    pods.delete("bound", &DeleteParams { grace_period_seconds: Some(0), ..Default::default() })
        .await
        .unwrap();
    assert!(pods.get_opt("bound").await.unwrap().is_none());

    // An unscheduled pod goes at once.
    pods.create(&PostParams::default(), &pod("pending", json!({}))).await.unwrap();
    pods.delete("pending", &DeleteParams::default()).await.unwrap();
    assert!(pods.get_opt("pending").await.unwrap().is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn eviction_respects_disruption_budgets() {
    let server = ApiServer::start(ApiServerConfig::default()).await.unwrap();
    // kube-rs retries 429s by default (for minutes); this test wants to see the first answer.
    let mut config = Config::new(server.url.parse().unwrap());
    config.default_retry = false;
    let client = Client::try_from(config).unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    for name in ["a", "b"] {
        pods.create(&PostParams::default(), &pod(name, json!({"app": "guarded"}))).await.unwrap();
        pods.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
            ),
        )
        .await
        .unwrap();
    }
    let budgets: Api<k8s_openapi::api::policy::v1::PodDisruptionBudget> = Api::namespaced(client, "default");
    budgets
        .create(&PostParams::default(), &serde_json::from_value(json!({"metadata": {"name": "pdb"}, "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "guarded"}}}})).unwrap())
        .await
        .unwrap();
    let error = pods.evict("a", &EvictParams::default()).await.unwrap_err();
    assert!(matches!(&error, kube::Error::Api(e) if e.code == 429), "{error:?}");
    assert!(pods.get_opt("a").await.unwrap().is_some());
    budgets
        .patch("pdb", &PatchParams::default(), &Patch::Merge(json!({"spec": {"minAvailable": 1}})))
        .await
        .unwrap();
    pods.evict("a", &EvictParams::default()).await.unwrap();
    assert!(pods.get_opt("a").await.unwrap().is_none(), "an unscheduled pod is removed at once");
    server.shutdown().await;
}

#[tokio::test]
async fn pod_status_writes_keep_labels_and_annotations_but_not_the_spec() {
    // As kube-apiserver's pod status strategy: pods/status may change labels and annotations
    // (kruise-daemon reports its runtime-containers-meta so), never the spec; other kinds'
    // status subresources change status only.
    let (server, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    pods.create(&PostParams::default(), &pod("s", json!({"app": "a"}))).await.unwrap();
    let patch = json!({
        "metadata": {"annotations": {"apps.kruise.io/runtime-containers-meta": "{}"}, "labels": {"x": "y"}},
        "spec": {"activeDeadlineSeconds": 5},
        "status": {"phase": "Running"},
    });
    let written = pods.patch_status("s", &PatchParams::default(), &Patch::Strategic(patch)).await.unwrap();
    let annotations = written.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations.get("apps.kruise.io/runtime-containers-meta").map(String::as_str), Some("{}"));
    let labels = written.metadata.labels.clone().unwrap_or_default();
    assert_eq!((labels.get("app"), labels.get("x")), (Some(&"a".to_string()), Some(&"y".to_string())));
    assert_eq!(written.spec.unwrap().active_deadline_seconds, None, "the spec is not written");
    assert_eq!(written.status.unwrap().phase.as_deref(), Some("Running"));

    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(client, "default");
    let deployment = serde_json::from_value(json!({
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}
    }))
    .unwrap();
    deployments.create(&PostParams::default(), &deployment).await.unwrap();
    let patch = json!({"metadata": {"annotations": {"k": "v"}}, "status": {"replicas": 1}});
    let written = deployments.patch_status("d", &PatchParams::default(), &Patch::Merge(patch)).await.unwrap();
    assert!(!written.metadata.annotations.unwrap_or_default().contains_key("k"));
    server.shutdown().await;
}

#[tokio::test]
async fn resize_changes_resources_only() {
    let (server, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    pods.create(&PostParams::default(), &pod("r", json!({}))).await.unwrap();
    // A plain update may not change resources...
    let error = pods
        .patch(
            "r",
            &PatchParams::default(),
            &Patch::Strategic(
                json!({"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "300m"}}}]}}),
            ),
        )
        .await
        .unwrap_err();
    assert!(matches!(&error, kube::Error::Api(e) if e.code == 422), "{error:?}");
    // ...the resize subresource may.
    let resized = pods
        .patch_subresource(
            "resize",
            "r",
            &PatchParams::default(),
            &Patch::Strategic(
                json!({"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "300m"}}}]}}),
            ),
        )
        .await
        .unwrap();
    let resources = resized.spec.unwrap().containers[0].resources.clone().unwrap();
    assert_eq!(resources.limits.unwrap()["cpu"].0, "300m");
    server.shutdown().await;
}

#[tokio::test]
async fn dry_run_warnings_and_tables() {
    let (server, client) = start().await;
    let http = reqwest::Client::new();
    let url = format!("{}/api/v1/namespaces/default/configmaps", server.url);
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}, "data": {"a": "1"}, "extra": true});
    let response = http.post(format!("{url}?dryRun=All")).json(&body).send().await.unwrap();
    assert_eq!(response.status(), 201);
    let warning =
        response.headers().get("warning").map(|w| w.to_str().unwrap().to_string()).unwrap_or_default();
    assert!(
        warning.contains("unknown field \\\"extra\\\"") || warning.contains("unknown field"),
        "{warning}"
    );
    assert_eq!(
        http.get(format!("{url}/dry")).send().await.unwrap().status(),
        404,
        "a dry run stores nothing"
    );
    let strict = http.post(format!("{url}?fieldValidation=Strict")).json(&body).send().await.unwrap();
    assert_eq!(strict.status(), 400);

    let pods: Api<Pod> = Api::namespaced(client, "default");
    pods.create(&PostParams::default(), &pod("tabled", json!({}))).await.unwrap();
    let table: Value = http
        .get(format!("{}/api/v1/namespaces/default/pods", server.url))
        .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(table["kind"], "Table");
    let columns: Vec<&str> =
        table["columnDefinitions"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(&columns[..5], ["Name", "Ready", "Status", "Restarts", "Age"]);
    assert_eq!(table["rows"][0]["cells"][0], "tabled");
    assert_eq!(table["rows"][0]["cells"][1], "0/1");
    server.shutdown().await;
}

#[tokio::test]
async fn https_mode_with_the_generated_ca() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig_path = dir.path().join("kubeconfig");
    let server = ApiServer::start(ApiServerConfig {
        tls: true,
        kubeconfig_path: Some(kubeconfig_path.clone()),
        ..Default::default()
    })
    .await
    .unwrap();
    assert!(server.url.starts_with("https://"));
    let kubeconfig = kube::config::Kubeconfig::read_from(&kubeconfig_path).unwrap();
    let config = Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.unwrap();
    let client = Client::try_from(config).unwrap();
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
    let names: Vec<String> =
        namespaces.list(&Default::default()).await.unwrap().items.iter().map(|n| n.name_any()).collect();
    assert!(
        names.contains(&"default".to_string()) && names.contains(&"kube-system".to_string()),
        "{names:?}"
    );
    server.shutdown().await;
}
