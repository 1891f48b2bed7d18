//! The embedded API server seen through unmodified kube-rs: CRUD, conflicts, selectors,
//! pagination, every patch type, finalizers, garbage collection in all three modes, watchers and
//! reflectors (including recovery after 410 Gone), a small Controller, and bad input.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};
use kube::{
    Api, Client, Config,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy},
    runtime::{WatchStreamExt, watcher},
};
use serde_json::json;

async fn start() -> (ApiServer, Client) {
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let config = Config::new(server.url.parse().expect("url"));
    let client = Client::try_from(config).expect("client");
    (server, client)
}

fn configmap(name: &str, labels: serde_json::Value) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": {"key": "value"},
    }))
    .expect("configmap")
}

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

#[tokio::test]
async fn crud_and_optimistic_concurrency() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let created = api.create(&PostParams::default(), &configmap("cm", json!({"a": "1"}))).await.unwrap();
    let uid = created.metadata.uid.clone().unwrap();
    assert!(created.metadata.resource_version.is_some());
    assert!(created.metadata.creation_timestamp.is_some());

    let fetched = api.get("cm").await.unwrap();
    assert_eq!(fetched.metadata.uid.as_deref(), Some(uid.as_str()));

    // A stale resourceVersion is a 409 Conflict and changes nothing.
    let mut first = fetched.clone();
    first.data = Some([("key".to_string(), "one".to_string())].into());
    api.replace("cm", &PostParams::default(), &first).await.unwrap();
    let mut stale = fetched.clone();
    stale.data = Some([("key".to_string(), "two".to_string())].into());
    let error = api.replace("cm", &PostParams::default(), &stale).await.unwrap_err();
    assert!(matches!(&error, kube::Error::Api(e) if e.code == 409 && e.reason == "Conflict"), "{error:?}");
    assert_eq!(api.get("cm").await.unwrap().data.unwrap()["key"], "one");

    // Creating it again: AlreadyExists.
    let error = api.create(&PostParams::default(), &configmap("cm", json!({}))).await.unwrap_err();
    assert!(
        matches!(&error, kube::Error::Api(e) if e.code == 409 && e.reason == "AlreadyExists"),
        "{error:?}"
    );

    api.delete("cm", &DeleteParams::default()).await.unwrap();
    let error = api.get("cm").await.unwrap_err();
    assert!(matches!(&error, kube::Error::Api(e) if e.code == 404 && e.reason == "NotFound"), "{error:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn label_and_field_selectors_and_pagination() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    for index in 0..7 {
        let tier = if index % 2 == 0 { "web" } else { "db" };
        api.create(
            &PostParams::default(),
            &configmap(&format!("cm-{index}"), json!({"tier": tier, "n": index.to_string()})),
        )
        .await
        .unwrap();
    }
    let names = |list: kube::core::ObjectList<ConfigMap>| -> Vec<String> {
        list.items.into_iter().filter_map(|cm| cm.metadata.name).collect()
    };
    assert_eq!(
        names(api.list(&ListParams::default().labels("tier=web")).await.unwrap()),
        ["cm-0", "cm-2", "cm-4", "cm-6"]
    );
    assert_eq!(
        names(api.list(&ListParams::default().labels("tier!=web,n in (1,3)")).await.unwrap()),
        ["cm-1", "cm-3"]
    );
    assert_eq!(names(api.list(&ListParams::default().labels("!tier")).await.unwrap()), Vec::<String>::new());
    assert_eq!(names(api.list(&ListParams::default().fields("metadata.name=cm-5")).await.unwrap()), ["cm-5"]);

    // Pages of 3 follow each other with continue tokens until the end.
    let mut seen = Vec::new();
    let mut params = ListParams::default().limit(3);
    loop {
        let page = api.list(&params).await.unwrap();
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        seen.extend(names(page));
        match next {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }
    assert_eq!(seen, (0..7).map(|i| format!("cm-{i}")).collect::<Vec<_>>());

    // An unsupported field label is a 400.
    let error = api.list(&ListParams::default().fields("data.key=value")).await.unwrap_err();
    assert!(matches!(&error, kube::Error::Api(e) if e.code == 400), "{error:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn every_patch_type() {
    let (server, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "x"}},
        "spec": {"containers": [
            {"name": "a", "image": "nginx:1", "env": [{"name": "ONE", "value": "1"}]},
            {"name": "b", "image": "busybox:1"}
        ]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();

    // Merge patch: labels merged.
    let patched = pods
        .patch("p", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"tier": "web"}}})))
        .await
        .unwrap();
    let labels = patched.metadata.labels.unwrap();
    assert_eq!((labels["app"].as_str(), labels["tier"].as_str()), ("x", "web"));

    // Strategic merge: containers merged by name, only b's image changes.
    let patched = pods
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"containers": [{"name": "b", "image": "busybox:2"}]}})),
        )
        .await
        .unwrap();
    let containers = patched.spec.unwrap().containers;
    assert_eq!(containers.len(), 2);
    assert_eq!(containers[0].image.as_deref(), Some("nginx:1"));
    assert_eq!(containers[1].image.as_deref(), Some("busybox:2"));

    // JSON patch, with a failing test op rejected.
    let patch: json_patch::Patch = serde_json::from_value(
        json!([{"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:2"}]),
    )
    .unwrap();
    let patched = pods.patch("p", &PatchParams::default(), &Patch::<()>::Json(patch)).await.unwrap();
    assert_eq!(patched.spec.unwrap().containers[0].image.as_deref(), Some("nginx:2"));
    let failing: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/metadata/name", "value": "other"}])).unwrap();
    assert!(pods.patch("p", &PatchParams::default(), &Patch::<()>::Json(failing)).await.is_err());

    // Server-side apply: create, then a second manager conflicting, then force.
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let applied = cms
        .patch("applied", &PatchParams::apply("alice"), &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "1", "b": "2"}})))
        .await
        .unwrap();
    assert_eq!(applied.data.unwrap().len(), 2);
    let managers: Vec<String> =
        applied.metadata.managed_fields.unwrap_or_default().into_iter().filter_map(|m| m.manager).collect();
    assert!(managers.contains(&"alice".to_string()), "{managers:?}");
    let conflict = cms
        .patch("applied", &PatchParams::apply("bob"), &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "other"}})))
        .await
        .unwrap_err();
    assert!(matches!(&conflict, kube::Error::Api(e) if e.code == 409), "{conflict:?}");
    let forced = cms
        .patch("applied", &PatchParams::apply("bob").force(), &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "other"}})))
        .await
        .unwrap();
    assert_eq!(forced.data.unwrap()["a"], "other");
    // alice re-applies without b: b is removed.
    let reapplied = cms
        .patch("applied", &PatchParams::apply("alice").force(), &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "other"}})))
        .await
        .unwrap();
    assert!(!reapplied.data.unwrap().contains_key("b"));
    server.shutdown().await;
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut cm = configmap("held", json!({}));
    cm.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    api.create(&PostParams::default(), &cm).await.unwrap();
    let deleted = api.delete("held", &DeleteParams::default()).await.unwrap();
    assert!(deleted.is_left(), "still there while the finalizer is set");
    let held = api.get("held").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some());
    api.patch("held", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"finalizers": null}})))
        .await
        .unwrap();
    let error = api.get("held").await.unwrap_err();
    assert!(matches!(&error, kube::Error::Api(e) if e.code == 404), "{error:?}");
    server.shutdown().await;
}

fn owned_configmap(name: &str, owner: &ConfigMap, block: bool) -> ConfigMap {
    let mut cm = configmap(name, json!({}));
    cm.metadata.owner_references =
        Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            name: owner.metadata.name.clone().unwrap(),
            uid: owner.metadata.uid.clone().unwrap(),
            controller: Some(true),
            block_owner_deletion: Some(block),
        }]);
    cm
}

#[tokio::test]
async fn garbage_collection_in_all_three_modes() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    for (mode, policy) in [
        ("background", PropagationPolicy::Background),
        ("foreground", PropagationPolicy::Foreground),
        ("orphan", PropagationPolicy::Orphan),
    ] {
        let owner = api
            .create(&PostParams::default(), &configmap(&format!("{mode}-owner"), json!({})))
            .await
            .unwrap();
        api.create(&PostParams::default(), &owned_configmap(&format!("{mode}-child"), &owner, true))
            .await
            .unwrap();
        let params = DeleteParams { propagation_policy: Some(policy), ..Default::default() };
        api.delete(&format!("{mode}-owner"), &params).await.unwrap();
        let child = format!("{mode}-child");
        let owner_name = format!("{mode}-owner");
        eventually(&format!("{mode} deletion"), || {
            let api = api.clone();
            let child = child.clone();
            let owner_name = owner_name.clone();
            async move {
                let owner_gone = api.get_opt(&owner_name).await.unwrap().is_none();
                let child = api.get_opt(&child).await.unwrap();
                match mode {
                    "orphan" => {
                        owner_gone
                            && child
                                .is_some_and(|c| c.metadata.owner_references.unwrap_or_default().is_empty())
                    }
                    _ => owner_gone && child.is_none(),
                }
            }
        })
        .await;
    }
    server.shutdown().await;
}

#[tokio::test]
async fn watcher_and_reflector_follow_changes() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    api.create(&PostParams::default(), &configmap("before", json!({"w": "1"}))).await.unwrap();
    let (reader, writer) = kube::runtime::reflector::store::<ConfigMap>();
    let stream =
        kube::runtime::reflector(writer, watcher(api.clone(), watcher::Config::default().labels("w=1")))
            .applied_objects()
            .boxed();
    let task = tokio::spawn(async move { stream.try_for_each(|_| async { Ok(()) }).await });
    api.create(&PostParams::default(), &configmap("after", json!({"w": "1"}))).await.unwrap();
    api.create(&PostParams::default(), &configmap("other", json!({"w": "2"}))).await.unwrap();
    eventually("reflector sees both matching configmaps", || {
        let reader = reader.clone();
        async move {
            let mut names: Vec<String> =
                reader.state().iter().filter_map(|cm| cm.metadata.name.clone()).collect();
            names.sort();
            names == ["after", "before"]
        }
    })
    .await;
    // A label change that stops matching removes it from the store (a DELETED for this watcher).
    api.patch("after", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"w": "9"}}})))
        .await
        .unwrap();
    eventually("reflector drops the object that stopped matching", || {
        let reader = reader.clone();
        async move { reader.state().len() == 1 }
    })
    .await;
    task.abort();

    // Streaming lists (sendInitialEvents) work too.
    let initial = watcher(api.clone(), watcher::Config::default().streaming_lists())
        .applied_objects()
        .take(3)
        .try_collect::<Vec<_>>();
    let initial =
        tokio::time::timeout(Duration::from_secs(10), initial).await.expect("streaming list").unwrap();
    assert_eq!(initial.len(), 3);
    server.shutdown().await;
}

#[tokio::test]
async fn a_watch_from_a_compacted_version_gets_410_and_the_watcher_recovers() {
    let server = ApiServer::start(ApiServerConfig { history: 5, ..Default::default() }).await.unwrap();
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let first = api.create(&PostParams::default(), &configmap("c0", json!({}))).await.unwrap();
    for index in 1..20 {
        api.create(&PostParams::default(), &configmap(&format!("c{index}"), json!({}))).await.unwrap();
    }
    let old = first.metadata.resource_version.unwrap();
    let mut stream = api.watch(&kube::api::WatchParams::default(), &old).await.unwrap().boxed();
    let event = tokio::time::timeout(Duration::from_secs(5), stream.try_next()).await.unwrap();
    match event {
        Ok(Some(kube::api::WatchEvent::Error(error))) => assert_eq!(error.code, 410),
        Err(kube::Error::Api(error)) => assert_eq!(error.code, 410),
        other => panic!("expected 410, got {other:?}"),
    }
    // kube-rs' watcher re-lists after a 410 and ends up with everything.
    let (reader, writer) = kube::runtime::reflector::store::<ConfigMap>();
    let stream = kube::runtime::reflector(writer, watcher(api.clone(), watcher::Config::default()))
        .applied_objects()
        .boxed();
    let task = tokio::spawn(async move { stream.try_for_each(|_| async { Ok(()) }).await });
    eventually("reflector lists all 20", || {
        let reader = reader.clone();
        async move { reader.state().len() == 20 }
    })
    .await;
    task.abort();
    server.shutdown().await;
}

#[tokio::test]
async fn bad_input_is_rejected_and_nothing_is_stored() {
    let (server, client) = start().await;
    let http = reqwest::Client::new();
    let url = format!("{}/api/v1/namespaces/default/configmaps", server.url);
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let rv_before = api.list(&ListParams::default()).await.unwrap().metadata.resource_version;

    let malformed =
        http.post(&url).header("content-type", "application/json").body("{not json").send().await.unwrap();
    assert_eq!(malformed.status(), 400);
    let status: serde_json::Value = malformed.json().await.unwrap();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "BadRequest");

    let bad_yaml =
        http.post(&url).header("content-type", "application/yaml").body("a: [1, 2").send().await.unwrap();
    assert_eq!(bad_yaml.status(), 400);

    let unknown_kind = http.get(format!("{}/apis/example.com/v1/widgets", server.url)).send().await.unwrap();
    assert_eq!(unknown_kind.status(), 404);

    // Invalid pod: 422 naming each field.
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let bad: Pod =
        serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "Bad_Name"},
        "spec": {"containers": [{"name": "c", "image": ""}]}}))
        .unwrap();
    let error = pods.create(&PostParams::default(), &bad).await.unwrap_err();
    match error {
        kube::Error::Api(error) => {
            assert_eq!(error.code, 422);
            assert_eq!(error.reason, "Invalid");
            assert!(
                error.message.contains("metadata.name") && error.message.contains("spec.containers[0].image"),
                "{}",
                error.message
            );
        }
        other => panic!("{other:?}"),
    }
    // Nothing stored, the resourceVersion did not move.
    let rv_after = api.list(&ListParams::default()).await.unwrap().metadata.resource_version;
    assert_eq!(rv_before, rv_after);
    server.shutdown().await;
}

#[tokio::test]
async fn namespace_deletion_removes_its_objects() {
    let (server, client) = start().await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "doomed"}})).unwrap();
    namespaces.create(&PostParams::default(), &ns).await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client, "doomed");
    api.create(&PostParams::default(), &configmap("x", json!({}))).await.unwrap();
    namespaces.delete("doomed", &DeleteParams::default()).await.unwrap();
    // New content is refused while it terminates.
    let refused = api.create(&PostParams::default(), &configmap("y", json!({}))).await;
    if let Err(kube::Error::Api(error)) = &refused {
        assert!(error.code == 403 || error.code == 404, "{error:?}");
    }
    eventually("namespace gone", || {
        let namespaces = namespaces.clone();
        async move { namespaces.get_opt("doomed").await.unwrap().is_none() }
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn request_counters_count_each_client_s_writes() {
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let mut config = Config::new(server.url.parse().expect("url"));
    config.headers.push((http::header::USER_AGENT, http::HeaderValue::from_static("bench-client/1.0")));
    let client = Client::try_from(config).expect("client");
    let before = server.requests().snapshot();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    api.create(&PostParams::default(), &configmap("counted", json!({}))).await.unwrap();
    let _ = api.create(&PostParams::default(), &configmap("counted", json!({}))).await.unwrap_err();
    api.patch("counted", &PatchParams::default(), &Patch::Merge(json!({"data": {"k": "v"}}))).await.unwrap();
    api.get("counted").await.unwrap();
    api.delete("counted", &DeleteParams::default()).await.unwrap();
    let after = server.requests().snapshot();
    let mut writes: Vec<(String, u16, u64)> = after
        .iter()
        .filter(|(key, _)| key.client == "bench-client" && key.is_write() && key.resource == "configmaps")
        .map(|(key, n)| (format!("{:?}", key.verb), key.code, n - before.get(key).copied().unwrap_or(0)))
        .collect();
    writes.sort();
    assert_eq!(
        writes,
        vec![
            ("Create".into(), 201, 1),
            ("Create".into(), 409, 1),
            ("Delete".into(), 200, 1),
            ("Patch".into(), 200, 1)
        ]
    );
    let reads: u64 = after
        .iter()
        .filter(|(key, _)| key.client == "bench-client" && !key.is_write())
        .map(|(_, n)| *n)
        .sum();
    assert_eq!(reads, 1);
    server.shutdown().await;
}

/// kube-apiserver keeps the stored managed fields when an update carries none (a client that
/// does not know the field must not erase them) and records the writer on top; `[]` counts as
/// none.
#[tokio::test]
async fn an_update_without_managed_fields_keeps_them() {
    let (_server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let created = api
        .create(
            &PostParams { field_manager: Some("creator".into()), ..Default::default() },
            &configmap("cm", json!({})),
        )
        .await
        .unwrap();
    let managers = |cm: &ConfigMap| -> Vec<String> {
        let mut names: Vec<String> =
            cm.metadata.managed_fields.iter().flatten().filter_map(|entry| entry.manager.clone()).collect();
        names.sort();
        names
    };
    assert_eq!(managers(&created), ["creator"]);

    for (writer, fields) in [("editor", None), ("other", Some(Vec::new()))] {
        let mut trimmed = api.get("cm").await.unwrap();
        trimmed.metadata.managed_fields = fields;
        trimmed.data.get_or_insert_default().insert(writer.into(), "x".into());
        let params = PostParams { field_manager: Some(writer.into()), ..Default::default() };
        let updated = api.replace("cm", &params, &trimmed).await.unwrap();
        assert!(managers(&updated).contains(&"creator".to_string()), "{writer}: {:?}", managers(&updated));
        assert!(managers(&updated).contains(&writer.to_string()), "{writer}: {:?}", managers(&updated));
    }
}
