//! Admission and conversion webhooks called by the embedded API server over HTTPS: a mutating
//! webhook's patch lands, `failurePolicy: Fail` denies while the webhook is down and `Ignore`
//! lets the request through, a validating webhook's denial reaches the client, and a
//! conversion webhook serves a stored v1beta1 object as v1alpha1 (its output's nulls dropped
//! before validation, as kube-apiserver prunes them).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{net::SocketAddr, time::Duration};

use axum::{Json, Router, routing::post};
use base64::Engine;
use k8s_openapi::api::core::v1::ConfigMap;
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig, tls};
use kube::{
    Api, Client, Config,
    api::{DynamicObject, Patch, PatchParams, PostParams},
    core::{ApiResource, GroupVersionKind},
};
use serde_json::{Value, json};

async fn start() -> (ApiServer, Client) {
    let server = ApiServer::start(ApiServerConfig::default()).await.unwrap();
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    (server, client)
}

/// A webhook server on 127.0.0.1 with its own CA; returns its address and the base64 CA bundle.
async fn webhook_server() -> (SocketAddr, String) {
    let certs = tls::generate().unwrap();
    let config = tls::server_config(&certs).unwrap();
    let router = Router::new()
        .route("/mutate", post(mutate))
        .route("/deny", post(deny))
        .route("/convert", post(convert))
        .route("/convert-like-go", post(convert_like_go));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(tls::serve_https(listener, router, config, std::future::pending()));
    (address, base64::engine::general_purpose::STANDARD.encode(certs.ca_pem))
}

async fn mutate(Json(review): Json<Value>) -> Json<Value> {
    let patch = json!([{"op": "add", "path": "/metadata/labels", "value": {"mutated-by": "webhook"}}]);
    let encoded = base64::engine::general_purpose::STANDARD.encode(patch.to_string());
    Json(json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {
            "uid": review["request"]["uid"],
            "allowed": true,
            "patchType": "JSONPatch",
            "patch": encoded,
            "warnings": ["mutated for the test"],
        }
    }))
}

async fn deny(Json(review): Json<Value>) -> Json<Value> {
    Json(json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {
            "uid": review["request"]["uid"],
            "allowed": false,
            "status": {"code": 403, "message": "names starting with forbidden- are not allowed"},
        }
    }))
}

/// Converts between `v1beta1` (`spec.size`) and `v1alpha1` (`spec.replicas`).
async fn convert(Json(review): Json<Value>) -> Json<Value> {
    let desired = review["request"]["desiredAPIVersion"].as_str().unwrap().to_string();
    let converted: Vec<Value> = review["request"]["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|object| {
            let mut object = object.clone();
            let spec = object["spec"].as_object_mut().unwrap();
            if desired.ends_with("v1alpha1") {
                if let Some(size) = spec.remove("size") {
                    spec.insert("replicas".into(), size);
                }
            } else if let Some(replicas) = spec.remove("replicas") {
                spec.insert("size".into(), replicas);
            }
            object["apiVersion"] = json!(desired);
            object
        })
        .collect();
    Json(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {"uid": review["request"]["uid"], "convertedObjects": converted, "result": {"status": "Success"}}
    }))
}

/// Converts as a webhook written in Go does: the apiVersion changes and every status condition
/// carries `lastUpdateTime: null` (a zero `metav1.Time` encodes as null).
async fn convert_like_go(Json(review): Json<Value>) -> Json<Value> {
    let desired = review["request"]["desiredAPIVersion"].as_str().unwrap().to_string();
    let converted: Vec<Value> = review["request"]["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|object| {
            let mut object = object.clone();
            object["apiVersion"] = json!(desired);
            object["metadata"]["deletionTimestamp"] = Value::Null;
            for condition in
                object.pointer_mut("/status/conditions").and_then(Value::as_array_mut).into_iter().flatten()
            {
                condition["lastUpdateTime"] = Value::Null;
            }
            object
        })
        .collect();
    Json(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {"uid": review["request"]["uid"], "convertedObjects": converted, "result": {"status": "Success"}}
    }))
}

fn webhook_configuration(kind: &str, name: &str, url: &str, ca: &str, policy: &str) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [{
            "name": format!("{name}.example.com"),
            "clientConfig": {"url": url, "caBundle": ca},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"], "operations": ["CREATE"]}],
            "failurePolicy": policy,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 2,
            "objectSelector": {"matchLabels": {"webhook-test": name}},
        }]
    })
}

async fn create_dynamic(
    client: &Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    object: Value,
) -> Result<DynamicObject, kube::Error> {
    let resource = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    let api: Api<DynamicObject> = if object.pointer("/metadata/namespace").is_some() {
        Api::namespaced_with(client.clone(), object["metadata"]["namespace"].as_str().unwrap(), &resource)
    } else {
        Api::all_with(client.clone(), &resource)
    };
    api.create(&PostParams::default(), &serde_json::from_value(object).unwrap()).await
}

fn configmap(name: &str, selector_label: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"webhook-test": selector_label}}}))
        .unwrap()
}

#[tokio::test]
async fn mutating_webhook_patch_lands_on_matching_objects_only() {
    let (server, client) = start().await;
    let (address, ca) = webhook_server().await;
    let config = webhook_configuration(
        "MutatingWebhookConfiguration",
        "mutator",
        &format!("https://{address}/mutate"),
        &ca,
        "Fail",
    );
    create_dynamic(
        &client,
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        config,
    )
    .await
    .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let created = api.create(&PostParams::default(), &configmap("mutated", "mutator")).await.unwrap();
    assert_eq!(created.metadata.labels.unwrap().get("mutated-by").map(String::as_str), Some("webhook"));
    // Objects the objectSelector does not match are left alone.
    let untouched = api.create(&PostParams::default(), &configmap("untouched", "other")).await.unwrap();
    assert!(!untouched.metadata.labels.unwrap().contains_key("mutated-by"));
    server.shutdown().await;
}

#[tokio::test]
async fn failure_policy_fail_denies_while_the_webhook_is_down_and_ignore_does_not() {
    let (server, client) = start().await;
    // A port nothing listens on.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let (_, ca) = webhook_server().await;
    let url = format!("https://{closed}/deny");
    for (name, policy) in [("strict", "Fail"), ("lenient", "Ignore")] {
        let config = webhook_configuration("ValidatingWebhookConfiguration", name, &url, &ca, policy);
        create_dynamic(
            &client,
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            config,
        )
        .await
        .unwrap();
    }
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let error = api.create(&PostParams::default(), &configmap("blocked", "strict")).await.unwrap_err();
    match error {
        kube::Error::Api(error) => {
            assert_eq!(error.code, 500);
            assert!(error.message.contains("failed calling webhook"), "{}", error.message);
        }
        other => panic!("{other:?}"),
    }
    assert!(api.get_opt("blocked").await.unwrap().is_none(), "nothing stored");
    api.create(&PostParams::default(), &configmap("allowed", "lenient")).await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn validating_webhook_denial_reaches_the_client() {
    let (server, client) = start().await;
    let (address, ca) = webhook_server().await;
    let config = webhook_configuration(
        "ValidatingWebhookConfiguration",
        "denier",
        &format!("https://{address}/deny"),
        &ca,
        "Fail",
    );
    create_dynamic(
        &client,
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        config,
    )
    .await
    .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let error = api.create(&PostParams::default(), &configmap("forbidden-one", "denier")).await.unwrap_err();
    match error {
        kube::Error::Api(error) => {
            assert_eq!(error.code, 403);
            assert!(
                error.message.contains("admission webhook \"denier.example.com\" denied the request"),
                "{}",
                error.message
            );
        }
        other => panic!("{other:?}"),
    }
    server.shutdown().await;
}

#[tokio::test]
async fn conversion_webhook_serves_a_stored_v1beta1_object_as_v1alpha1() {
    let (server, client) = start().await;
    let (address, ca) = webhook_server().await;
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wd"]},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": false, "schema": {"openAPIV3Schema": schema}},
                {"name": "v1beta1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}},
            ],
            "conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": {"url": format!("https://{address}/convert"), "caBundle": ca},
                "conversionReviewVersions": ["v1"],
            }},
        }
    });
    create_dynamic(
        &client,
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        crd,
    )
    .await
    .unwrap();
    let widget = json!({"apiVersion": "example.com/v1beta1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}, "spec": {"size": 3}});
    let created =
        create_dynamic(&client, "example.com", "v1beta1", "Widget", "widgets", widget).await.unwrap();
    assert_eq!(created.data["spec"]["size"], 3);

    let alpha = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1alpha1", "Widget"),
        "widgets",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &alpha);
    let read = api.get("w").await.unwrap();
    assert_eq!(read.types.as_ref().unwrap().api_version, "example.com/v1alpha1");
    assert_eq!(read.data["spec"]["replicas"], 3);
    assert!(read.data["spec"].get("size").is_none());

    // Writing at v1alpha1 is converted to storage and back.
    let widget = json!({"apiVersion": "example.com/v1alpha1", "kind": "Widget", "metadata": {"name": "w2", "namespace": "default"}, "spec": {"replicas": 5}});
    create_dynamic(&client, "example.com", "v1alpha1", "Widget", "widgets", widget).await.unwrap();
    let beta = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1beta1", "Widget"),
        "widgets",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &beta);
    let stored = tokio::time::timeout(Duration::from_secs(5), api.get("w2")).await.unwrap().unwrap();
    assert_eq!(stored.data["spec"]["size"], 5);
    server.shutdown().await;
}

#[tokio::test]
async fn nulls_in_conversion_webhook_output_are_dropped_before_validation() {
    let (server, client) = start().await;
    let (address, ca) = webhook_server().await;
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        "status": {"type": "object", "properties": {
            "replicas": {"type": "integer"},
            "conditions": {"type": "array", "items": {"type": "object", "properties": {
                "type": {"type": "string"}, "status": {"type": "string"},
                "lastUpdateTime": {"type": "string", "format": "date-time"},
            }}},
        }},
    }});
    let subresources = json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}});
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": false, "schema": {"openAPIV3Schema": schema}, "subresources": subresources},
                {"name": "v1beta1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}, "subresources": subresources},
            ],
            "conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": {"url": format!("https://{address}/convert-like-go"), "caBundle": ca},
                "conversionReviewVersions": ["v1"],
            }},
        }
    });
    create_dynamic(
        &client,
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        crd,
    )
    .await
    .unwrap();
    let gadget = json!({"apiVersion": "example.com/v1beta1", "kind": "Gadget", "metadata": {"name": "g", "namespace": "default"}, "spec": {"replicas": 1}});
    create_dynamic(&client, "example.com", "v1beta1", "Gadget", "gadgets", gadget).await.unwrap();
    let resource = |version: &str| {
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", version, "Gadget"), "gadgets")
    };
    let beta: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource("v1beta1"));
    let status = json!({"status": {"replicas": 1, "conditions": [{"type": "Ready", "status": "True"}]}});
    beta.patch_status("g", &PatchParams::default(), &Patch::Merge(status)).await.unwrap();

    // Every write through v1alpha1 reads the stored object through the webhook first.
    let alpha: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource("v1alpha1"));
    let read = alpha.get("g").await.unwrap();
    assert_eq!(
        read.data["status"]["conditions"][0],
        json!({"type": "Ready", "status": "True"}),
        "nulls dropped"
    );
    let labelled = alpha
        .patch("g", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})))
        .await
        .unwrap();
    assert_eq!(labelled.metadata.labels.unwrap()["a"], "b");
    let scaled = alpha
        .patch_scale("g", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 3}})))
        .await
        .unwrap();
    assert_eq!(scaled.spec.unwrap().replicas, Some(3));
    let stored = beta.get("g").await.unwrap();
    assert_eq!(stored.data["spec"]["replicas"], 3);
    assert_eq!(stored.data["status"]["conditions"], json!([{"type": "Ready", "status": "True"}]));
    server.shutdown().await;
}
