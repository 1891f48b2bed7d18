//! Details of kube-apiserver and kube-controller-manager that upstream clients (OpenKruise's e2e
//! suite, kruise-manager) depend on: the `default` ServiceAccount of every namespace, and
//! `ControllerRevision.data` kept as sent, nulls included, and kube-apiserver's request metrics
//! on `/metrics`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::Duration;

use k8s_openapi::api::{
    apps::v1::ControllerRevision,
    core::v1::{ConfigMap, Namespace, ServiceAccount},
};
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};
use kube::{
    Api, Client, Config,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

async fn start() -> (ApiServer, Client) {
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let config = Config::new(server.url.parse().expect("url"));
    let client = Client::try_from(config).expect("client");
    (server, client)
}

/// Waits up to 10 s for `check` to hold.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..100 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn has_default_account(client: &Client, namespace: &str) -> bool {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    accounts.get_opt("default").await.unwrap().is_some()
}

#[tokio::test]
async fn every_namespace_gets_a_default_service_account_again_after_deletion() {
    let (server, client) = start().await;
    for namespace in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        eventually(&format!("the default account of {namespace}"), || {
            has_default_account(&client, namespace)
        })
        .await;
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let team: Namespace = serde_json::from_value(json!({"metadata": {"name": "team-a"}})).unwrap();
    namespaces.create(&PostParams::default(), &team).await.unwrap();
    eventually("the default account of a new namespace", || has_default_account(&client, "team-a")).await;

    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "team-a");
    let first = accounts.get("default").await.unwrap();
    accounts.delete("default", &DeleteParams::default()).await.unwrap();
    eventually("a new default account after deletion", || async {
        accounts
            .get_opt("default")
            .await
            .unwrap()
            .is_some_and(|again| again.metadata.uid != first.metadata.uid)
    })
    .await;

    // A namespace being deleted is emptied, and its account is not made again.
    namespaces.delete("team-a", &DeleteParams::default()).await.unwrap();
    eventually("the namespace to go", || async { namespaces.get_opt("team-a").await.unwrap().is_none() })
        .await;
    assert!(!has_default_account(&client, "team-a").await);
    server.shutdown().await;
}

#[tokio::test]
async fn controller_revision_data_keeps_its_nulls() {
    let (server, client) = start().await;
    let revisions: Api<ControllerRevision> = Api::namespaced(client, "default");
    let data = json!({
        "spec": {"template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": [{"name": "c", "resources": {}}]}}, "$patch": "replace"},
        "unset": null,
        "list": [1, null],
    });
    let revision: ControllerRevision = serde_json::from_value(json!({
        "metadata": {"name": "web-1"},
        "revision": 1,
        "data": data,
    }))
    .unwrap();
    let created = revisions.create(&PostParams::default(), &revision).await.unwrap();
    assert_eq!(created.data.as_ref().unwrap().0, data);
    let mut updated = revisions.get("web-1").await.unwrap();
    assert_eq!(updated.data.as_ref().unwrap().0, data, "as stored");
    updated.revision = 2;
    let replaced = revisions.replace("web-1", &PostParams::default(), &updated).await.unwrap();
    assert_eq!(replaced.data.unwrap().0, data, "an update keeps them too");
    server.shutdown().await;
}

#[tokio::test]
async fn metrics_count_requests_by_verb_resource_scope_and_code() {
    let (server, client) = start().await;
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let config_map: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "m"}})).unwrap();
    config_maps.create(&PostParams::default(), &config_map).await.unwrap();
    config_maps.create(&PostParams::default(), &config_map).await.unwrap_err();
    config_maps.list(&ListParams::default()).await.unwrap();
    let apply = PatchParams::apply("metrics-test");
    let applied =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "data": {"a": "b"}});
    config_maps.patch("m", &apply, &Patch::Apply(applied)).await.unwrap();
    let dry = PostParams { dry_run: true, ..Default::default() };
    let other: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "n"}})).unwrap();
    config_maps.create(&dry, &other).await.unwrap();
    Api::<Namespace>::all(client).list(&ListParams::default()).await.unwrap();

    let response = reqwest::get(format!("{}/metrics", server.url)).await.unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let series = |labels: &str, value: u64| {
        let line = format!("apiserver_request_total{{{labels},component=\"apiserver\",code=");
        text.lines().any(|l| l.starts_with(&line) && l.ends_with(&format!(" {value}")))
    };
    let configmaps = "group=\"\",version=\"v1\",resource=\"configmaps\",subresource=\"\"";
    for (labels, code, count) in [
        (format!("verb=\"POST\",dry_run=\"\",{configmaps},scope=\"resource\""), 201, 1),
        (format!("verb=\"POST\",dry_run=\"\",{configmaps},scope=\"resource\""), 409, 1),
        (format!("verb=\"POST\",dry_run=\"All\",{configmaps},scope=\"resource\""), 201, 1),
        (format!("verb=\"LIST\",dry_run=\"\",{configmaps},scope=\"namespace\""), 200, 1),
        (format!("verb=\"APPLY\",dry_run=\"\",{configmaps},scope=\"resource\""), 200, 1),
    ] {
        let full = format!("{labels},component=\"apiserver\",code=\"{code}\"}} {count}");
        assert!(
            text.lines().any(|l| l == format!("apiserver_request_total{{{full}").as_str()),
            "{full}\n{text}"
        );
    }
    assert!(
        series(
            "verb=\"LIST\",dry_run=\"\",group=\"\",version=\"v1\",resource=\"namespaces\",subresource=\"\",scope=\"cluster\"",
            1
        ),
        "{text}"
    );
    assert!(text.contains("apiserver_request_duration_seconds_bucket{le=\"0.005\",verb=\"POST\""), "{text}");
    assert!(!text.contains("resource=\"metrics\""), "non-resource paths are not counted");
    // The in-process counters used by the benchmarks count the same requests.
    let writes: u64 = server.requests().snapshot().iter().filter(|(k, _)| k.is_write()).map(|(_, n)| n).sum();
    assert_eq!(writes, 4);
    server.shutdown().await;
}
