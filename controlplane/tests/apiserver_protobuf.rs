//! The embedded API server over HTTP in `application/vnd.kubernetes.protobuf`, as client-go
//! programs talk to it: create, get, list, watch, delete (with protobuf DeleteOptions), errors
//! as protobuf `Status`, and the 406/415 answers kube-apiserver gives (custom resources are
//! JSON and YAML only; PATCH bodies are never protobuf).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::Duration;

use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig, protobuf};
use reqwest::{Client, Response, StatusCode};
use serde_json::{Value, json};

const PB: &str = "application/vnd.kubernetes.protobuf";
/// What client-go sends when configured for protobuf.
const PB_ACCEPT: &str = "application/vnd.kubernetes.protobuf, */*";

struct Server {
    _server: ApiServer,
    url: String,
    http: Client,
}

async fn start() -> Server {
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let url = server.url.trim_end_matches('/').to_string();
    Server { _server: server, url, http: Client::new() }
}

impl Server {
    async fn send(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        accept: &str,
        body: Vec<u8>,
    ) -> Response {
        let mut request = self
            .http
            .request(method.parse().unwrap(), format!("{}{path}", self.url))
            .header("Accept", accept);
        if !content_type.is_empty() {
            request = request.header("Content-Type", content_type);
        }
        request.body(body).send().await.expect("request")
    }

    async fn pb(&self, method: &str, path: &str, body: Option<&Value>) -> (StatusCode, Value) {
        let bytes = body.map(|b| protobuf::encode(b).expect("encodes")).unwrap_or_default();
        let response = self.send(method, path, if body.is_some() { PB } else { "" }, PB_ACCEPT, bytes).await;
        let status = response.status();
        let content_type = response.headers()["content-type"].to_str().unwrap().to_string();
        let bytes = response.bytes().await.unwrap();
        assert_eq!(content_type, PB, "{method} {path}: {}", String::from_utf8_lossy(&bytes));
        (status, protobuf::decode(&bytes).expect("a protobuf answer"))
    }

    async fn json(&self, method: &str, path: &str, body: Option<&Value>) -> (StatusCode, Value) {
        let bytes = body.map(|b| serde_json::to_vec(b).unwrap()).unwrap_or_default();
        let response = self.send(method, path, "application/json", "application/json", bytes).await;
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

#[tokio::test]
async fn built_in_kinds_are_written_and_read_in_protobuf() {
    let server = start().await;
    // kubectl create namespace: a protobuf body.
    let namespace = json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "team-a", "creationTimestamp": null}, "spec": {}, "status": {}});
    let (status, created) = server.pb("POST", "/api/v1/namespaces", Some(&namespace)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["kind"], "Namespace");
    assert_eq!(created["metadata"]["name"], "team-a");
    assert!(created["metadata"]["uid"].as_str().is_some_and(|uid| !uid.is_empty()));
    assert_eq!(created["status"]["phase"], "Active");

    let configmap = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "labels": {"app": "web"}},
                           "data": {"a": "b"}, "binaryData": {"bin": "AAEC"}});
    let (status, _) = server.pb("POST", "/api/v1/namespaces/team-a/configmaps", Some(&configmap)).await;
    assert_eq!(status, StatusCode::CREATED);
    let secret = json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "s"}, "data": {"a": "Yg=="}, "type": "Opaque"});
    let (status, _) = server.pb("POST", "/api/v1/namespaces/team-a/secrets", Some(&secret)).await;
    assert_eq!(status, StatusCode::CREATED);

    // What a protobuf client reads is what a JSON client reads.
    let (status, read) = server.pb("GET", "/api/v1/namespaces/team-a/configmaps/c", None).await;
    assert_eq!(status, StatusCode::OK);
    let (_, as_json) = server.json("GET", "/api/v1/namespaces/team-a/configmaps/c", None).await;
    assert_eq!(read["data"], json!({"a": "b"}));
    assert_eq!(read["binaryData"], json!({"bin": "AAEC"}));
    for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels"] {
        assert_eq!(read["metadata"][field], as_json["metadata"][field], "metadata.{field}");
    }
    let (_, secret) = server.pb("GET", "/api/v1/namespaces/team-a/secrets/s", None).await;
    assert_eq!(secret["data"]["a"], "Yg==");

    // A Deployment with the nested value types (IntOrString, Quantity, templates).
    let deployment = json!({"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "d"}},
                 "strategy": {"rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 0}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}]}}}});
    let (status, created) =
        server.pb("POST", "/apis/apps/v1/namespaces/team-a/deployments", Some(&deployment)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["spec"]["strategy"]["rollingUpdate"], json!({"maxSurge": "50%", "maxUnavailable": 0}));
    assert_eq!(created["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"], "1");

    // Update in protobuf, with the resourceVersion read.
    let mut update = read.clone();
    update["data"]["a"] = json!("c");
    let (status, updated) = server.pb("PUT", "/api/v1/namespaces/team-a/configmaps/c", Some(&update)).await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["data"]["a"], "c");

    // Lists are their List kinds.
    let (status, list) = server.pb("GET", "/api/v1/namespaces/team-a/configmaps", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["kind"], "ConfigMapList");
    let names: Vec<&str> =
        list["items"].as_array().unwrap().iter().filter_map(|i| i["metadata"]["name"].as_str()).collect();
    assert!(names.contains(&"c"), "{names:?}");
    assert!(list["metadata"]["resourceVersion"].as_str().is_some_and(|rv| !rv.is_empty()));

    // Metadata-only clients (kube-controller-manager's garbage collector) get protobuf too.
    let accept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    let response = server.send("GET", "/api/v1/namespaces/team-a/configmaps", "", accept, Vec::new()).await;
    let bytes = response.bytes().await.unwrap();
    let metadata = protobuf::decode(&bytes).unwrap();
    assert_eq!(metadata["kind"], "PartialObjectMetadataList");
    assert_eq!(metadata["items"][0]["metadata"]["name"], "c");
    assert!(metadata["items"][0].get("data").is_none());

    // Delete with protobuf DeleteOptions: a Status in protobuf.
    let options = json!({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0, "propagationPolicy": "Background"});
    let (status, deleted) =
        server.pb("DELETE", "/api/v1/namespaces/team-a/configmaps/c", Some(&options)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(deleted["kind"], "Status");
    assert_eq!(deleted["status"], "Success");
    let (status, missing) = server.pb("GET", "/api/v1/namespaces/team-a/configmaps/c", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        (missing["kind"].as_str(), missing["reason"].as_str(), missing["code"].as_i64()),
        (Some("Status"), Some("NotFound"), Some(404))
    );
    assert_eq!(missing["message"], "configmaps \"c\" not found");
}

/// The events of a protobuf watch stream, read until `count` arrived.
async fn watch_events(mut response: Response, count: usize) -> Vec<(String, Value)> {
    let mut buffer = Vec::new();
    let mut events = Vec::new();
    while events.len() < count {
        let chunk =
            tokio::time::timeout(Duration::from_secs(10), response.chunk()).await.expect("an event in time");
        buffer.extend_from_slice(&chunk.unwrap().expect("stream open"));
        while let Ok((kind, object, rest)) = protobuf::read_watch_frame(&buffer) {
            events.push((kind, object));
            buffer = rest.to_vec();
        }
    }
    events
}

#[tokio::test]
async fn watches_stream_length_prefixed_protobuf_events() {
    let server = start().await;
    let pod = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let (status, created) = server.pb("POST", "/api/v1/namespaces/default/pods", Some(&pod)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let rv = created["metadata"]["resourceVersion"].as_str().unwrap().to_string();

    let accept = "application/vnd.kubernetes.protobuf;stream=watch";
    let path =
        format!("/api/v1/namespaces/default/pods?watch=true&resourceVersion={rv}&allowWatchBookmarks=false");
    let response = server.send("GET", &path, "", accept, Vec::new()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/vnd.kubernetes.protobuf;stream=watch");

    let mut labelled = created.clone();
    labelled["metadata"]["labels"] = json!({"seen": "yes"});
    let (status, _) = server.pb("PUT", "/api/v1/namespaces/default/pods/p", Some(&labelled)).await;
    assert_eq!(status, StatusCode::OK);
    let options = json!({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0});
    let (status, _) = server.pb("DELETE", "/api/v1/namespaces/default/pods/p", Some(&options)).await;
    assert_eq!(status, StatusCode::OK);

    let events = watch_events(response, 2).await;
    assert_eq!(events[0].0, "MODIFIED");
    assert_eq!(events[0].1["kind"], "Pod");
    assert_eq!(events[0].1["metadata"]["labels"]["seen"], "yes");
    assert!(matches!(events[1].0.as_str(), "DELETED" | "MODIFIED"), "{:?}", events[1].0);
}

#[tokio::test]
async fn media_types_are_refused_where_kube_apiserver_refuses_them() {
    let server = start().await;
    let configmap = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c"}});

    // An unknown body type: 415, nothing created.
    let response = server
        .send(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            "text/plain",
            "application/json",
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let status: Value = response.json().await.unwrap();
    assert_eq!(status["reason"], "UnsupportedMediaType");
    assert_eq!(
        status["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );

    // Protobuf that is not: 400.
    let response = server
        .send(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            PB,
            PB_ACCEPT,
            b"{\"kind\":\"ConfigMap\"}".to_vec(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);

    // PATCH bodies are never protobuf.
    let (status, _) = server.pb("POST", "/api/v1/namespaces/default/configmaps", Some(&configmap)).await;
    assert_eq!(status, StatusCode::CREATED);
    let response = server
        .send(
            "PATCH",
            "/api/v1/namespaces/default/configmaps/c",
            PB,
            PB_ACCEPT,
            protobuf::encode(&configmap).unwrap(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // Nothing acceptable: 406.
    let response =
        server.send("GET", "/api/v1/namespaces/default/configmaps/c", "", "text/html", Vec::new()).await;
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    // Tables are JSON or YAML only.
    let response = server
        .send(
            "GET",
            "/api/v1/namespaces/default/configmaps",
            "",
            "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io",
            Vec::new(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    // YAML is served.
    let response = server
        .send("GET", "/api/v1/namespaces/default/configmaps/c", "", "application/yaml", Vec::new())
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/yaml");
    let yaml: serde_yaml::Value = serde_yaml::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(yaml["metadata"]["name"], "c");

    // Custom resources: JSON and YAML only.
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let (status, _) =
        server.pb("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Some(&crd)).await;
    assert_eq!(status, StatusCode::CREATED);
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let mut created = false;
    for _ in 0..50 {
        let (status, _) = server
            .json(
                "POST",
                widgets,
                Some(&json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})),
            )
            .await;
        if status == StatusCode::CREATED {
            created = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(created, "the CRD is served");
    let response = server.send("GET", &format!("{widgets}/w"), "", PB, Vec::new()).await;
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    let bytes = response.bytes().await.unwrap();
    let status = protobuf::decode(&bytes).expect("the 406 Status is protobuf, as asked");
    assert_eq!(
        status["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    // client-go's protobuf Accept falls back to JSON for them.
    let response = server.send("GET", &format!("{widgets}/w"), "", PB_ACCEPT, Vec::new()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");

    // OpenAPI v2 in its protobuf form (kubectl's client-side validation reads it); v3 only as
    // JSON here (406 for its protobuf form).
    let response = server
        .send(
            "GET",
            "/openapi/v2",
            "",
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            Vec::new(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"],
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    );
    let document = response.bytes().await.unwrap();
    assert_eq!(&document[..5], b"\x0a\x032.0");
    let definition = b"com.example.v1.Widget";
    assert!(document.windows(definition.len()).any(|w| w == definition), "the CRD's definition is in it");
    let response = server
        .send(
            "GET",
            "/openapi/v3",
            "",
            "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
            Vec::new(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    let response = server.send("GET", "/openapi/v2", "", "application/json", Vec::new()).await;
    assert_eq!(response.status(), StatusCode::OK);
}
