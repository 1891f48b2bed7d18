//! `events.k8s.io/v1` and core `v1` Events as two views of one stored resource, as in
//! kube-apiserver: what kube-rs' `Recorder` publishes shows in core lists, legacy events show
//! through `events.k8s.io` with their deprecated fields, field selectors use each API's labels,
//! watches, patches and deletes cross the two, validation and errors match kube-apiserver's
//! (answers recorded from kube-apiserver 1.34), and data written before the storage was shared
//! is moved on start.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{Event as CoreEvent, Namespace, ObjectReference};
use k8s_openapi::api::events::v1::Event as NewEvent;
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    storage::{ObjectKey, Store},
};
use kube::{
    Api, Client, Config,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams},
    runtime::events::{Event, EventType, Recorder, Reporter},
};
use serde_json::{Value, json};

async fn start(config: ApiServerConfig) -> (ApiServer, Client) {
    let server = ApiServer::start(config).await.expect("server starts");
    let client = Client::try_from(Config::new(server.url.parse().expect("url"))).expect("client");
    (server, client)
}

fn pod_reference(namespace: &str, name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        name: Some(name.into()),
        namespace: Some(namespace.into()),
        uid: Some("uid-1".into()),
        ..Default::default()
    }
}

fn started() -> Event {
    Event {
        type_: EventType::Normal,
        reason: "Started".into(),
        note: Some("Started container app".into()),
        action: "Start".into(),
        secondary: None,
    }
}

fn legacy_event(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Pulled", "message": "pulled the image", "type": "Warning",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:01:00Z", "count": 3,
    })
}

/// A raw request; returns the status code and the JSON body.
async fn request(
    server: &ApiServer,
    method: &str,
    path: &str,
    body: Option<Value>,
    content_type: &str,
) -> (u16, Value) {
    let client = reqwest::Client::new();
    let mut builder = client.request(method.parse().unwrap(), format!("{}{path}", server.url));
    if let Some(body) = body {
        builder = builder.header("Content-Type", content_type).body(body.to_string());
    }
    let response = builder.send().await.unwrap();
    let code = response.status().as_u16();
    (code, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn recorder_events_show_in_core_lists_with_the_core_fields() {
    let (server, client) = start(ApiServerConfig::default()).await;
    let recorder = Recorder::new(
        client.clone(),
        Reporter { controller: "kubelet".into(), instance: Some("node-1".into()) },
    );
    let reference = pod_reference("default", "web");
    recorder.publish(&started(), &reference).await.unwrap();

    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let listed = core.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1, "one stored event, seen through core v1");
    let event = &listed.items[0];
    assert_eq!(event.involved_object.name.as_deref(), Some("web"));
    assert_eq!(event.involved_object.uid.as_deref(), Some("uid-1"));
    assert_eq!(event.message.as_deref(), Some("Started container app"));
    assert_eq!(event.reporting_component.as_deref(), Some("kubelet"));
    assert_eq!(event.reporting_instance.as_deref(), Some("node-1"));
    assert_eq!(event.action.as_deref(), Some("Start"));
    assert!(event.event_time.is_some() && event.first_timestamp.is_none() && event.count.is_none());

    // The recorder's repeat is a merge patch of the series through events.k8s.io.
    recorder.publish(&started(), &reference).await.unwrap();
    let name = event.metadata.name.clone().unwrap();
    let again = core.get(&name).await.unwrap();
    assert_eq!(again.series.as_ref().and_then(|s| s.count), Some(2));
    let events: Api<NewEvent> = Api::namespaced(client.clone(), "default");
    assert_eq!(events.get(&name).await.unwrap().series.map(|s| s.count), Some(2));
    assert_eq!(events.list(&ListParams::default()).await.unwrap().items.len(), 1, "still one object");

    // Field selectors with each API's labels.
    let by_core =
        ListParams::default().fields("involvedObject.name=web,reportingComponent=kubelet,source=kubelet");
    assert_eq!(core.list(&by_core).await.unwrap().items.len(), 1);
    let by_events =
        ListParams::default().fields("regarding.name=web,reportingController=kubelet,type=Normal");
    assert_eq!(events.list(&by_events).await.unwrap().items.len(), 1);
    let none = ListParams::default().fields("regarding.uid=other");
    assert!(events.list(&none).await.unwrap().items.is_empty());
    // (kube-apiserver: 400 "field label not supported: regarding.kind" / "...: source")
    let error = core.list(&ListParams::default().fields("regarding.kind=Pod")).await.unwrap_err();
    assert!(
        matches!(&error, kube::Error::Api(e) if e.code == 400 && e.message == "field label not supported: regarding.kind"),
        "{error:?}"
    );
    let error = events.list(&ListParams::default().fields("source=kubelet")).await.unwrap_err();
    assert!(matches!(&error, kube::Error::Api(e) if e.code == 400), "{error:?}");

    // Deleting through core removes it from events.k8s.io.
    core.delete(&name, &DeleteParams::default()).await.unwrap();
    let error = events.get(&name).await.unwrap_err();
    // (kube-apiserver: `events.events.k8s.io "<name>" not found`)
    assert!(
        matches!(&error, kube::Error::Api(e) if e.code == 404 && e.message == format!("events.events.k8s.io \"{name}\" not found")),
        "{error:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn legacy_events_read_through_events_k8s_io() {
    let (server, client) = start(ApiServerConfig::default()).await;
    let (code, created) = request(
        &server,
        "POST",
        "/api/v1/namespaces/default/events",
        Some(legacy_event("web.1")),
        "application/json",
    )
    .await;
    assert_eq!(code, 201, "{created}");

    let (code, event) =
        request(&server, "GET", "/apis/events.k8s.io/v1/namespaces/default/events/web.1", None, "").await;
    assert_eq!(code, 200);
    assert_eq!(event["apiVersion"], "events.k8s.io/v1");
    assert_eq!(event["regarding"], json!({"kind": "Pod", "name": "web", "namespace": "default"}));
    assert_eq!(event["note"], "pulled the image");
    assert_eq!(event["deprecatedSource"], json!({"component": "kubelet", "host": "node-1"}));
    assert_eq!(event["deprecatedFirstTimestamp"], "2024-01-01T00:00:00Z");
    assert_eq!(event["deprecatedLastTimestamp"], "2024-01-01T00:01:00Z");
    assert_eq!(event["deprecatedCount"], 3);
    for core_only in ["involvedObject", "message", "source", "firstTimestamp", "lastTimestamp", "count"] {
        assert!(event.get(core_only).is_none(), "{core_only} in {event}");
    }
    assert_eq!(event["metadata"]["uid"], created["metadata"]["uid"]);

    // events.k8s.io updates of a legacy event may change metadata; the core fields stay.
    let events: Api<NewEvent> = Api::namespaced(client.clone(), "default");
    let patched = events
        .patch(
            "web.1",
            &PatchParams::default(),
            &Patch::Strategic(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.metadata.labels.unwrap()["a"], "b");
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let stored = core.get("web.1").await.unwrap();
    assert_eq!((stored.count, stored.message.as_deref()), (Some(3), Some("pulled the image")));

    // Core updates are lenient: the message may change.
    let patched = core
        .patch("web.1", &PatchParams::default(), &Patch::Merge(json!({"message": "changed via core"})))
        .await
        .unwrap();
    assert_eq!(patched.message.as_deref(), Some("changed via core"));

    // Tables print the same rows through both APIs.
    let table = |path: &'static str| {
        let url = format!("{}{path}", server.url);
        async move {
            reqwest::Client::new()
                .get(url)
                .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let core_table = table("/api/v1/namespaces/default/events").await;
    let events_table = table("/apis/events.k8s.io/v1/namespaces/default/events").await;
    assert_eq!(core_table["rows"][0]["cells"], events_table["rows"][0]["cells"]);
    let cells = core_table["rows"][0]["cells"].as_array().unwrap();
    assert_eq!(
        cells[1..7],
        [
            json!("Warning"),
            json!("Pulled"),
            json!("pod/web"),
            json!(""),
            json!("kubelet, node-1"),
            json!("changed via core")
        ]
    );
    assert_eq!((cells[8].clone(), cells[9].clone()), (json!(3), json!("web.1")));
    server.shutdown().await;
}

#[tokio::test]
async fn events_k8s_io_validation_matches_kube_apiserver() {
    let (server, client) = start(ApiServerConfig::default()).await;
    let path = "/apis/events.k8s.io/v1/namespaces/default/events";
    let minimal = json!({
        "metadata": {"name": "e0"},
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "R", "note": "hello", "type": "Normal",
    });
    let (code, status) = request(&server, "POST", path, Some(minimal), "application/json").await;
    // (kube-apiserver: 422 `Event "e0" is invalid: eventTime: Required value`, details without a group)
    assert_eq!(code, 422);
    assert_eq!(status["message"], "Event \"e0\" is invalid: eventTime: Required value");
    assert_eq!(
        status["details"],
        json!({"name": "e0", "kind": "Event", "causes": [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "eventTime"}]})
    );

    let deprecated = json!({
        "metadata": {"name": "x3"}, "eventTime": "2024-01-01T00:00:00.000000Z", "type": "Bogus",
        "deprecatedCount": 3, "deprecatedSource": {"host": "h"}, "deprecatedFirstTimestamp": "2024-01-01T00:00:00Z",
    });
    // (Outside `default` and `kube-system`, a new-style event must name the regarded namespace.)
    let namespace = json!({"metadata": {"name": "other"}});
    assert_eq!(
        request(&server, "POST", "/api/v1/namespaces", Some(namespace), "application/json").await.0,
        201
    );
    let other = "/apis/events.k8s.io/v1/namespaces/other/events";
    let (code, status) = request(&server, "POST", other, Some(deprecated), "application/json").await;
    assert_eq!(code, 422);
    let fields: Vec<&str> = status["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    // (kube-apiserver reports exactly these, in this order)
    assert_eq!(
        fields,
        [
            "involvedObject.namespace",
            "reportingController",
            "reportingController",
            "reportingController",
            "reportingInstance",
            "action",
            "reason",
            "type",
            "firstTimestamp",
            "count",
            "source"
        ]
    );
    assert!(
        status["message"].as_str().unwrap().contains("type: Invalid value: \"\": has invalid value: Bogus")
    );

    // A core event with an eventTime must name its reporter (as reportingComponent).
    let core_new = json!({
        "metadata": {"name": "x2"}, "eventTime": "2024-01-01T00:00:00.000000Z",
        "involvedObject": {"namespace": "default"}, "type": "Bogus",
    });
    let (code, status) =
        request(&server, "POST", "/api/v1/namespaces/default/events", Some(core_new), "application/json")
            .await;
    assert_eq!(code, 422);
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with("Event \"x2\" is invalid: [reportingComponent: Required value, "),
        "{status}"
    );
    // Core events only need names that fit in a URL path segment.
    let (code, status) = request(
        &server,
        "POST",
        "/api/v1/namespaces/default/events",
        Some(legacy_event("Upper.Case")),
        "application/json",
    )
    .await;
    assert_eq!(code, 201, "{status}");
    let (code, _) = request(
        &server,
        "POST",
        "/api/v1/namespaces/default/events",
        Some(legacy_event("other")),
        "application/json",
    )
    .await;
    assert_eq!(code, 201);
    let mut mismatched = legacy_event("elsewhere");
    mismatched["involvedObject"]["namespace"] = json!("other");
    let (code, status) =
        request(&server, "POST", "/api/v1/namespaces/default/events", Some(mismatched), "application/json")
            .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "Event \"elsewhere\" is invalid: involvedObject.namespace: Invalid value: \"other\": does not match event.namespace"
    );

    // Through events.k8s.io only the series (and metadata) of an event may change.
    let recorder = Recorder::new(client.clone(), Reporter { controller: "sched".into(), instance: None });
    recorder.publish(&started(), &pod_reference("default", "p")).await.unwrap();
    let events: Api<NewEvent> = Api::namespaced(client.clone(), "default");
    let name = events.list(&ListParams::default().fields("reportingController=sched")).await.unwrap().items
        [0]
    .metadata
    .name
    .clone()
    .unwrap();
    let error = events
        .patch(&name, &PatchParams::default(), &Patch::Merge(json!({"note": "changed", "action": "X"})))
        .await
        .unwrap_err();
    // (kube-apiserver: `Event "<name>" is invalid: [message: Invalid value: "changed": field is immutable,
    // action: Invalid value: "X": field is immutable]`)
    assert!(
        matches!(&error, kube::Error::Api(e) if e.code == 422 && e.message == format!(
            "Event \"{name}\" is invalid: [message: Invalid value: \"changed\": field is immutable, action: Invalid value: \"X\": field is immutable]"
        )),
        "{error:?}"
    );
    let error = events
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"series": {"count": 1, "lastObservedTime": "2024-01-01T00:00:09.000000Z"}})),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&error, kube::Error::Api(e) if e.code == 422 && e.message.ends_with(
            "is invalid: series.count: Invalid value: \"\": should be at least 2"
        )),
        "{error:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn watches_cross_the_two_apis_and_namespaces_drain_both() {
    let (server, client) = start(ApiServerConfig::default()).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "team"}})).unwrap(),
        )
        .await
        .unwrap();
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "team");
    let mut stream = core.watch(&WatchParams::default(), "0").await.unwrap().boxed();

    let recorder =
        Recorder::new(client.clone(), Reporter { controller: "kubelet".into(), instance: Some("n".into()) });
    recorder.publish(&started(), &pod_reference("team", "web")).await.unwrap();
    let added =
        tokio::time::timeout(Duration::from_secs(10), stream.try_next()).await.unwrap().unwrap().unwrap();
    let WatchEvent::Added(event) = added else { panic!("expected ADDED, got {added:?}") };
    assert_eq!(event.involved_object.name.as_deref(), Some("web"));
    assert_eq!(event.message.as_deref(), Some("Started container app"));

    let events: Api<NewEvent> = Api::namespaced(client.clone(), "team");
    let name = event.metadata.name.clone().unwrap();
    events.delete(&name, &DeleteParams::default()).await.unwrap();
    let deleted =
        tokio::time::timeout(Duration::from_secs(10), stream.try_next()).await.unwrap().unwrap().unwrap();
    assert!(
        matches!(&deleted, WatchEvent::Deleted(e) if e.metadata.name.as_deref() == Some(name.as_str())),
        "{deleted:?}"
    );

    // An events.k8s.io watch sees core writes in its own shape.
    let mut new_stream = events.watch(&WatchParams::default(), "0").await.unwrap().boxed();
    let mut legacy = legacy_event("web.2");
    legacy["metadata"]["namespace"] = json!("team");
    legacy["involvedObject"]["namespace"] = json!("team");
    core.create(&PostParams::default(), &serde_json::from_value(legacy).unwrap()).await.unwrap();
    let added =
        tokio::time::timeout(Duration::from_secs(10), new_stream.try_next()).await.unwrap().unwrap().unwrap();
    let WatchEvent::Added(event) = added else { panic!("expected ADDED, got {added:?}") };
    assert_eq!(event.note.as_deref(), Some("pulled the image"));
    assert_eq!(event.deprecated_count, Some(3));

    // Namespace deletion removes events written through either API.
    recorder.publish(&started(), &pod_reference("team", "db")).await.unwrap();
    namespaces.delete("team", &DeleteParams::default()).await.unwrap();
    for _ in 0..100 {
        if namespaces.get_opt("team").await.unwrap().is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(namespaces.get_opt("team").await.unwrap().is_none(), "namespace drained and gone");
    assert!(
        Api::<NewEvent>::all(client.clone()).list(&ListParams::default()).await.unwrap().items.is_empty()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn events_stored_separately_before_are_moved_on_start() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path(), 1000).unwrap();
        let key = ObjectKey {
            group: "events.k8s.io".into(),
            resource: "events".into(),
            namespace: Some("default".into()),
            name: "old.1".into(),
        };
        let old = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "old.1", "namespace": "default", "uid": "u-old"},
            "eventTime": "2024-01-01T00:00:00.000000Z", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Started", "note": "from an old data dir", "type": "Normal", "action": "Start",
            "reportingController": "kubelet", "reportingInstance": "n",
        });
        store.create(&key, old).unwrap();
    }
    let (server, client) =
        start(ApiServerConfig { data_dir: Some(dir.path().to_path_buf()), ..Default::default() }).await;
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let event = core.get("old.1").await.unwrap();
    assert_eq!(event.message.as_deref(), Some("from an old data dir"));
    assert_eq!(event.metadata.uid.as_deref(), Some("u-old"));
    let events: Api<NewEvent> = Api::namespaced(client, "default");
    assert_eq!(events.list(&ListParams::default()).await.unwrap().items.len(), 1);
    server.shutdown().await;
}
