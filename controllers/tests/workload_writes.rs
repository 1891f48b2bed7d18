//! The workload controllers' I/O shell against a fake API (kube's `tower-test` mock service, as
//! kube-rs tests its controllers): each pod write is checked for what it sends (verb, path,
//! patch type, body: only the keys it owns, which precondition) and for how it takes the
//! server's answers, without any server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::sync::Arc;

use http::{Request, Response, StatusCode};
use k8s_openapi::api::core::v1::Pod;
use kruise_controllers::{
    inplace::{DefaultRevisionAdapter, InPlaceEngine, RefreshStatus},
    workload::pod_ops,
};
use kube::{Client, client::Body};
use serde_json::{Value, json};
use tower_test::mock::{self, Handle};

type Mock = Handle<Request<Body>, Response<Body>>;

fn client() -> (Client, Mock) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    (Client::new(service, "default"), handle)
}

fn pod(extra: Value) -> Pod {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "prod", "uid": "u-1", "resourceVersion": "10",
                     "labels": {"app": "web", "controller-revision-hash": "web-1"}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}],
                 "readinessGates": [{"conditionType": "KruisePodReady"}, {"conditionType": "InPlaceUpdateReady"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    });
    json_patch::merge(&mut pod, &extra);
    serde_json::from_value(pod).unwrap()
}

/// One request as the server saw it.
struct Seen {
    method: String,
    path_and_query: String,
    content_type: String,
    body: Value,
}

/// Answers the next request with `status` and `body`, and returns what was asked.
async fn answer(handle: &mut Mock, status: StatusCode, body: Value) -> Seen {
    let (request, send) = handle.next_request().await.expect("a request");
    let seen = Seen {
        method: request.method().to_string(),
        path_and_query: request.uri().path_and_query().map(ToString::to_string).unwrap_or_default(),
        content_type: request
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string(),
        body: {
            let bytes = request.into_body().collect_bytes().await.unwrap();
            serde_json::from_slice(&bytes).unwrap_or(Value::Null)
        },
    };
    send.send_response(
        Response::builder().status(status).body(Body::from(serde_json::to_vec(&body).unwrap())).unwrap(),
    );
    seen
}

fn conflict() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Conflict", "code": 409,
           "message": "the object has been modified"})
}

#[tokio::test]
async fn a_lifecycle_move_patches_only_its_label_and_timestamp() {
    let (client, mut handle) = client();
    let written =
        tokio::spawn(
            async move { pod_ops::set_lifecycle(&client, &pod(json!({})), "PreparingUpdate").await },
        );
    let seen = answer(
        &mut handle,
        StatusCode::OK,
        serde_json::to_value(pod(json!({"metadata": {"resourceVersion": "11"}}))).unwrap(),
    )
    .await;
    assert_eq!(seen.method, "PATCH");
    assert_eq!(seen.path_and_query, "/api/v1/namespaces/prod/pods/web-0?&fieldManager=kruise-manager");
    assert_eq!(seen.content_type, "application/merge-patch+json");
    let meta = &seen.body["metadata"];
    assert_eq!(meta["labels"], json!({"lifecycle.apps.kruise.io/state": "PreparingUpdate"}));
    assert!(meta["annotations"]["lifecycle.apps.kruise.io/timestamp"].is_string());
    assert!(meta.get("resourceVersion").is_none(), "no precondition: it only owns this label");
    assert!(seen.body.get("spec").is_none() && seen.body.get("status").is_none());
    assert_eq!(
        written.await.unwrap().unwrap().as_deref(),
        Some("11"),
        "the new resourceVersion, for expectations"
    );

    // Already in that state: nothing is sent.
    let (client, _handle) = self::client();
    let already = pod(json!({"metadata": {"labels": {"lifecycle.apps.kruise.io/state": "Normal"}}}));
    assert_eq!(pod_ops::set_lifecycle(&client, &already, "Normal").await.unwrap(), None);
}

#[tokio::test]
async fn kruise_pod_ready_is_a_status_patch_for_this_pod_only() {
    let (client, mut handle) = client();
    let written =
        tokio::spawn(async move { pod_ops::set_kruise_pod_ready(&client, &pod(json!({})), None).await });
    let seen = answer(&mut handle, StatusCode::OK, serde_json::to_value(pod(json!({}))).unwrap()).await;
    assert_eq!(seen.method, "PATCH");
    assert_eq!(seen.path_and_query, "/api/v1/namespaces/prod/pods/web-0/status?&fieldManager=kruise-manager");
    assert_eq!(seen.content_type, "application/strategic-merge-patch+json");
    assert_eq!(seen.body["metadata"], json!({"uid": "u-1"}), "a UID precondition, no resourceVersion");
    let condition = &seen.body["status"]["conditions"][0];
    assert_eq!(
        (condition["type"].as_str(), condition["status"].as_str()),
        (Some("KruisePodReady"), Some("True"))
    );
    assert!(written.await.unwrap().unwrap());

    // Another pod of that name by now (the UID precondition fails with 409): nothing to do.
    let (client, mut handle) = self::client();
    let written =
        tokio::spawn(async move { pod_ops::set_kruise_pod_ready(&client, &pod(json!({})), None).await });
    answer(&mut handle, StatusCode::CONFLICT, conflict()).await;
    assert!(!written.await.unwrap().unwrap());
}

#[tokio::test]
async fn a_finished_update_is_marked_ready_without_racing_the_kubelet() {
    let (client, mut handle) = client();
    let engine = InPlaceEngine::new(client, Arc::new(DefaultRevisionAdapter));
    // A new pod with the gate but no InPlaceUpdateReady condition yet.
    let refreshed = tokio::spawn(async move { engine.refresh(&pod(json!({}))).await });
    let seen = answer(
        &mut handle,
        StatusCode::OK,
        serde_json::to_value(pod(json!({"metadata": {"resourceVersion": "12"}}))).unwrap(),
    )
    .await;
    assert_eq!(seen.method, "PATCH");
    assert!(
        seen.path_and_query.starts_with("/api/v1/namespaces/prod/pods/web-0/status?"),
        "{}",
        seen.path_and_query
    );
    assert_eq!(seen.content_type, "application/strategic-merge-patch+json");
    assert_eq!(
        seen.body["metadata"],
        json!({"uid": "u-1"}),
        "kubelet status writes in between must not fail it"
    );
    let condition = &seen.body["status"]["conditions"][0];
    assert_eq!(
        (condition["type"].as_str(), condition["status"].as_str()),
        (Some("InPlaceUpdateReady"), Some("True"))
    );
    let result = refreshed.await.unwrap().unwrap();
    assert_eq!(result.status, RefreshStatus::MarkedReady);
    assert_eq!(result.resource_version.as_deref(), Some("12"));
}
