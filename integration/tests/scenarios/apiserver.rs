//! API server and controller-manager behaviour that upstream clients see, the same on both
//! tiers: the `default` ServiceAccount of a new namespace (made again after deletion), and field
//! selectors on fields an object leaves out (they read as the type's zero value) and the
//! refusals of unsupported field labels.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::Duration;

use k8s_openapi::api::{
    apps::v1::ReplicaSet,
    batch::v1::Job,
    core::v1::{ConfigMap, Namespace, Node, Pod, ServiceAccount},
};
use kruise_integration::{Scene, Skip};
use kube::{
    Api,
    api::{DeleteParams, ListParams, PostParams},
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

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

/// The names a field selector lists, or the refusal's status code and message.
async fn select<K>(api: &Api<K>, selector: &str) -> Value
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.list(&ListParams::default().fields(selector)).await {
        Ok(list) => {
            let mut names: Vec<String> = list.items.iter().filter_map(|o| o.meta().name.clone()).collect();
            names.sort();
            json!(names)
        }
        Err(kube::Error::Api(status)) => json!({"code": status.code, "message": status.message}),
        Err(error) => panic!("listing with {selector}: {error}"),
    }
}

/// kube-apiserver reads field labels from the typed object: a node that never set
/// `spec.unschedulable` is `spec.unschedulable=false`, a pod without `hostNetwork` is
/// `spec.hostNetwork=false`, a job without succeeded pods is `status.successful=0`; labels a kind
/// does not support are refused with its own message.
pub async fn field_selectors_read_absent_fields_as_zero_values(scene: Scene) -> Result<(), Skip> {
    let client = scene.cluster().client();
    let nodes: Api<Node> = Api::all(client.clone());
    for (name, spec) in [("fs-plain", json!({})), ("fs-cordoned", json!({"unschedulable": true}))] {
        let node = serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap();
        nodes.create(&PostParams::default(), &node).await.unwrap();
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    // The job's pods (the embedded job controller makes them even when suspended) stay apart.
    for name in ["fs-check", "fs-jobs"] {
        let namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
        namespaces.create(&PostParams::default(), &namespace).await.unwrap();
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), "fs-check");
    for (name, extra) in
        [("plain", json!({})), ("host", json!({"hostNetwork": true, "restartPolicy": "Never"}))]
    {
        let mut spec =
            json!({"containers": [{"name": "c", "image": "nginx:1.25"}], "nodeName": "fs-nowhere"});
        for (key, value) in extra.as_object().unwrap() {
            spec[key] = value.clone();
        }
        let pod = serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    let jobs: Api<Job> = Api::namespaced(client.clone(), "fs-jobs");
    let job = serde_json::from_value(json!({
        "metadata": {"name": "j"},
        "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}},
    }))
    .unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();

    let ours = |names: Value| {
        json!(names.as_array().map(|names| {
            names
                .iter()
                .filter(|name| name.as_str().is_some_and(|n| n.starts_with("fs-")))
                .cloned()
                .collect::<Vec<_>>()
        }))
    };
    for selector in [
        "spec.unschedulable=false",
        "spec.unschedulable!=true",
        "spec.unschedulable=true",
        "spec.unschedulable=",
    ] {
        scene.observe(format!("nodes/{selector}"), ours(select(&nodes, selector).await));
    }
    for selector in ["metadata.namespace=", "status.phase=Running"] {
        scene.observe(format!("nodes/{selector}"), select(&nodes, selector).await);
    }
    for selector in [
        "spec.hostNetwork=false",
        "spec.hostNetwork=true",
        "spec.nodeName=fs-nowhere,status.phase=Pending",
        "spec.restartPolicy=Always",
        "spec.serviceAccountName=default",
        "status.podIP=",
        "status.nominatedNodeName=",
        "spec.host=fs-nowhere",
        "status.podIPs=",
        "spec.priority=0",
    ] {
        scene.observe(format!("pods/{selector}"), select(&pods, selector).await);
    }
    for selector in ["status.successful=0", "status.successful=", "spec.suspend=true"] {
        scene.observe(format!("jobs/{selector}"), select(&jobs, selector).await);
    }
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "fs-check");
    scene.observe("configmaps/data.key=x", select(&config_maps, "data.key=x").await);
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), "fs-check");
    scene.observe("replicasets/status.replicas=0", select(&replica_sets, "status.replicas=0").await);

    for name in ["fs-plain", "fs-cordoned"] {
        nodes.delete(name, &DeleteParams::default()).await.unwrap();
    }
    for name in ["fs-check", "fs-jobs"] {
        namespaces.delete(name, &DeleteParams::default()).await.unwrap();
    }
    Ok(())
}
