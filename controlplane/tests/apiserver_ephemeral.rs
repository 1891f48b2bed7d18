//! `pods/ephemeralcontainers` on the embedded API server, through kube-rs as a controller uses
//! it: containers are added (defaulted) by a strategic merge patch or a PUT of the pod, nothing
//! else of the pod changes, an existing one can be neither removed nor changed, invalid ones are
//! refused with 422 and their field paths, and plain pod updates cannot add them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use k8s_openapi::api::core::v1::Pod;
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};
use kube::{
    Api, Client, Config,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

async fn start() -> (ApiServer, Client) {
    let server = ApiServer::start(ApiServerConfig::default()).await.unwrap();
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    (server, client)
}

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "a"}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
    }))
    .unwrap()
}

fn causes(error: &kube::Error) -> (u16, Vec<String>) {
    match error {
        kube::Error::Api(status) => {
            let causes = status
                .details
                .as_ref()
                .map(|d| d.causes.iter().map(|c| format!("{}: {}", c.field, c.reason)).collect())
                .unwrap_or_default();
            (status.code, causes)
        }
        other => panic!("not an API error: {other:?}"),
    }
}

fn add(name: &str, image: &str) -> Patch<Value> {
    Patch::Strategic(json!({"spec": {"ephemeralContainers": [
        {"name": name, "image": image, "targetContainerName": "main", "command": ["sleep", "3"],
         "env": [{"name": "KRUISE_EJOB_ID", "value": "uid-1"}]},
    ]}}))
}

#[tokio::test]
async fn containers_are_added_through_the_subresource_only() {
    let (server, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let created = pods.create(&PostParams::default(), &pod("p")).await.unwrap();
    let generation = created.metadata.generation.unwrap_or(0);

    let written = pods
        .patch_subresource(
            "ephemeralcontainers",
            "p",
            &PatchParams::default(),
            &add("debugger", "busybox:1.36"),
        )
        .await
        .unwrap();
    let spec = written.spec.clone().unwrap();
    let debugger = &spec.ephemeral_containers.as_ref().unwrap()[0];
    assert_eq!(debugger.name, "debugger");
    assert_eq!(debugger.target_container_name.as_deref(), Some("main"));
    // Defaults as for any container of a pod.
    assert_eq!(debugger.image_pull_policy.as_deref(), Some("IfNotPresent"));
    assert_eq!(debugger.termination_message_policy.as_deref(), Some("File"));
    assert_eq!(written.metadata.generation, Some(generation + 1), "a spec change through the subresource");

    // GET of the subresource is the pod.
    let got: Pod = pods.get_subresource("ephemeralcontainers", "p").await.unwrap();
    assert_eq!(got.spec.unwrap().ephemeral_containers.unwrap().len(), 1);

    // A second one is added, in the order the patch sets (as client-go's two-way patch
    // writes it); the first stays.
    let mut ordered = json!({"spec": {"ephemeralContainers": [{"name": "second", "image": "busybox:1.36"}]}});
    ordered["spec"]["$setElementOrder/ephemeralContainers"] =
        json!([{"name": "debugger"}, {"name": "second"}]);
    let two = pods
        .patch_subresource("ephemeralcontainers", "p", &PatchParams::default(), &Patch::Strategic(ordered))
        .await
        .unwrap();
    let names: Vec<String> =
        two.spec.unwrap().ephemeral_containers.unwrap().into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["debugger", "second"]);

    // The subresource writes nothing but ephemeral containers.
    let sneaky = Patch::Strategic(json!({
        "metadata": {"labels": {"app": "changed"}},
        "spec": {"containers": [{"name": "main", "image": "nginx:2"}]},
    }));
    let unchanged =
        pods.patch_subresource("ephemeralcontainers", "p", &PatchParams::default(), &sneaky).await.unwrap();
    assert_eq!(unchanged.metadata.labels.unwrap()["app"], "a");
    assert_eq!(unchanged.spec.unwrap().containers[0].image.as_deref(), Some("nginx:1.25"));

    // An existing one may not change...
    let changed = pods
        .patch_subresource("ephemeralcontainers", "p", &PatchParams::default(), &add("debugger", "alpine:3"))
        .await
        .unwrap_err();
    assert_eq!(
        causes(&changed),
        (422, vec!["spec.ephemeralContainers[debugger]: FieldValueForbidden".into()])
    );
    // ...nor go.
    let removed = pods
        .patch_subresource(
            "ephemeralcontainers",
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"ephemeralContainers": []}})),
        )
        .await
        .unwrap_err();
    assert_eq!(causes(&removed).0, 422);
    assert!(causes(&removed).1.iter().all(|c| c == "spec.ephemeralContainers: FieldValueForbidden"));

    // A plain pod update cannot add one.
    let plain = pods.patch("p", &PatchParams::default(), &add("third", "busybox:1.36")).await.unwrap_err();
    assert_eq!(causes(&plain), (422, vec!["spec: FieldValueForbidden".into()]));
    // A plain update that does not touch them keeps them.
    let labelled = pods
        .patch("p", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})))
        .await
        .unwrap();
    assert_eq!(labelled.spec.unwrap().ephemeral_containers.unwrap().len(), 2);
    server.shutdown().await;
}

#[tokio::test]
async fn invalid_ephemeral_containers_are_refused_with_field_paths() {
    let (server, client) = start().await;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    pods.create(&PostParams::default(), &pod("p")).await.unwrap();
    let invalid = Patch::Strategic(json!({"spec": {"ephemeralContainers": [
        {"name": "main", "image": "busybox"},
        {"name": "probe", "image": "busybox", "targetContainerName": "nope",
         "readinessProbe": {"exec": {"command": ["true"]}}},
        {"name": "noimage"},
    ]}}));
    let error = pods
        .patch_subresource("ephemeralcontainers", "p", &PatchParams::default(), &invalid)
        .await
        .unwrap_err();
    let (code, mut got) = causes(&error);
    got.sort();
    assert_eq!(code, 422);
    assert_eq!(
        got,
        [
            "spec.ephemeralContainers[0].name: FieldValueDuplicate",
            "spec.ephemeralContainers[1].readinessProbe: FieldValueForbidden",
            "spec.ephemeralContainers[1].targetContainerName: FieldValueNotFound",
            "spec.ephemeralContainers[2].image: FieldValueRequired",
        ]
    );
    assert!(pods.get("p").await.unwrap().spec.unwrap().ephemeral_containers.is_none(), "nothing stored");

    // A PUT through the subresource works as the patch does; a missing pod is 404.
    let mut current = pods.get("p").await.unwrap();
    current.spec.as_mut().unwrap().ephemeral_containers =
        Some(vec![serde_json::from_value(json!({"name": "debugger", "image": "busybox:1.36"})).unwrap()]);
    let put =
        pods.replace_subresource("ephemeralcontainers", "p", &PostParams::default(), &current).await.unwrap();
    assert_eq!(put.spec.unwrap().ephemeral_containers.unwrap()[0].name, "debugger");
    let missing = pods
        .patch_subresource("ephemeralcontainers", "gone", &PatchParams::default(), &add("d", "busybox"))
        .await
        .unwrap_err();
    assert_eq!(causes(&missing).0, 404);

    // A pod is not created with ephemeral containers.
    let mut with = pod("q");
    with.spec.as_mut().unwrap().ephemeral_containers =
        Some(vec![serde_json::from_value(json!({"name": "d", "image": "busybox"})).unwrap()]);
    let refused = pods.create(&PostParams::default(), &with).await.unwrap_err();
    assert_eq!(causes(&refused), (422, vec!["spec.ephemeralContainers: FieldValueForbidden".into()]));
    server.shutdown().await;
}
