//! The webhook server against the embedded control plane, which calls admission and conversion
//! webhooks over HTTPS with the registered `caBundle`: the server registers itself (URL mode on
//! 127.0.0.1), then everything is observed through the Kubernetes API as a user would see it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::Duration;

use k8s_openapi::{
    api::{
        admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
        core::v1::{Pod, Secret},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kruise_controllers::webhook::{WebhookConfig, WebhookServer, certs};
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};
use kube::{
    Client,
    api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

struct Env {
    apiserver: ApiServer,
    client: Client,
    webhook: Option<WebhookServer>,
}

impl Env {
    async fn start() -> Self {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("kruise_controllers=debug")
            .with_test_writer()
            .try_init();
        let apiserver = ApiServer::start(ApiServerConfig::default()).await.unwrap();
        let client = Client::try_from(kube::Config::new(apiserver.url.parse().unwrap())).unwrap();
        install_crds(&client).await;
        let webhook = start_webhook(&client).await;
        Self { apiserver, client, webhook: Some(webhook) }
    }

    fn webhook(&self) -> &WebhookServer {
        self.webhook.as_ref().unwrap()
    }

    async fn stop(mut self) {
        if let Some(webhook) = self.webhook.take() {
            webhook.shutdown().await;
        }
        self.apiserver.shutdown().await;
    }
}

async fn start_webhook(client: &Client) -> WebhookServer {
    let config = WebhookConfig {
        resync_period: Duration::from_secs(1),
        ..WebhookConfig::local("127.0.0.1:0".parse().unwrap())
    };
    let server = WebhookServer::start(client.clone(), config).await.unwrap();
    server.readiness().wait_ready(Duration::from_secs(30)).await.unwrap();
    server
}

async fn install_crds(client: &Client) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in kruise_crds::crd::all_crds().unwrap() {
        let name = crd.metadata.name.clone().unwrap();
        let mut body = serde_json::to_value(&crd).unwrap();
        body["apiVersion"] = json!("apiextensions.k8s.io/v1");
        body["kind"] = json!("CustomResourceDefinition");
        api.patch(&name, &PatchParams::apply("test").force(), &Patch::Apply(&body)).await.unwrap();
    }
}

fn clonesets(client: &Client, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apps.kruise.io", version, "CloneSet");
    Api::namespaced_with(client.clone(), "default", &ApiResource::from_gvk_with_plural(&gvk, "clonesets"))
}

fn cloneset(version: &str, name: &str, spec: Value) -> DynamicObject {
    let mut full = json!({
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
        },
    });
    for (key, value) in spec.as_object().unwrap() {
        full[key] = value.clone();
    }
    serde_json::from_value(json!({
        "apiVersion": format!("apps.kruise.io/{version}"),
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": full,
    }))
    .unwrap()
}

async fn create(client: &Client, version: &str, object: &DynamicObject) -> Result<Value, kube::Error> {
    clonesets(client, version)
        .create(&PostParams::default(), object)
        .await
        .map(|o| serde_json::to_value(o).unwrap())
}

async fn get(client: &Client, version: &str, name: &str) -> Value {
    serde_json::to_value(clonesets(client, version).get(name).await.unwrap()).unwrap()
}

fn api_error(error: kube::Error) -> Box<kube::core::Status> {
    match error {
        kube::Error::Api(status) => status,
        other => panic!("expected an API error, got {other}"),
    }
}

/// Polls `check` for up to 20 s.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn the_server_registers_itself() {
    let env = Env::start().await;
    let port = env.webhook().local_addr().port();
    let base = format!("https://127.0.0.1:{port}");

    let secret = Api::<Secret>::namespaced(env.client.clone(), "kruise-system")
        .get("kruise-webhook-certs")
        .await
        .unwrap();
    let ca = certs::artifacts_from_secret(&secret).ca_cert_pem;
    assert!(ca.contains("BEGIN CERTIFICATE"));
    for key in ["ca-cert.pem", "ca-key.pem", "cert.pem", "key.pem", "tls.crt", "tls.key"] {
        assert!(secret.data.as_ref().unwrap().contains_key(key), "{key}");
    }

    let mutating = Api::<MutatingWebhookConfiguration>::all(env.client.clone())
        .get("kruise-mutating-webhook-configuration")
        .await
        .unwrap();
    let webhooks = mutating.webhooks.unwrap();
    let names: Vec<&str> = webhooks.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "mpod.kb.io",
            "mcloneset.kb.io",
            "mstatefulset.kb.io",
            "mdaemonset.kb.io",
            "mcontainerrecreaterequest.kb.io",
            "mimagelistpulljob-v1beta1.kb.io",
            "mimagepulljob-v1beta1.kb.io",
            "msidecarset.kb.io",
            "mnodeimage.kb.io",
            "mbroadcastjob.kb.io",
            "madvancedcronjob.kb.io",
            "muniteddeployment.kb.io"
        ]
    );
    assert_eq!(
        webhooks[1].client_config.url.as_deref(),
        Some(format!("{base}/mutate-apps-kruise-io-cloneset").as_str())
    );
    assert_eq!(webhooks[1].client_config.ca_bundle.as_ref().unwrap().0, ca.as_bytes());
    let validating = Api::<ValidatingWebhookConfiguration>::all(env.client.clone())
        .get("kruise-validating-webhook-configuration")
        .await
        .unwrap();
    assert_eq!(validating.webhooks.unwrap()[0].name, "vcloneset.kb.io");

    let crd = Api::<CustomResourceDefinition>::all(env.client.clone())
        .get("clonesets.apps.kruise.io")
        .await
        .unwrap();
    let client_config = crd.spec.conversion.unwrap().webhook.unwrap().client_config.unwrap();
    assert_eq!(client_config.url.as_deref(), Some(format!("{base}/convert").as_str()));
    assert!(client_config.service.is_none());
    assert_eq!(client_config.ca_bundle.unwrap().0, ca.as_bytes());

    // Drift is repaired: a webhook removed by hand comes back.
    Api::<MutatingWebhookConfiguration>::all(env.client.clone())
        .patch(
            "kruise-mutating-webhook-configuration",
            &PatchParams::default(),
            &Patch::Merge(json!({"webhooks": [serde_json::to_value(&webhooks[0]).unwrap()]})),
        )
        .await
        .unwrap();
    let api = Api::<MutatingWebhookConfiguration>::all(env.client.clone());
    eventually("the mutating configuration to be repaired", || async {
        api.get("kruise-mutating-webhook-configuration").await.unwrap().webhooks.unwrap_or_default().len()
            == webhooks.len()
    })
    .await;

    // Bad input over HTTPS is answered, not dropped.
    let http = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap())
        .build()
        .unwrap();
    let answer: Value =
        http.post(format!("{base}/mutate-pod")).body("not json").send().await.unwrap().json().await.unwrap();
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(answer["response"]["status"]["code"], 400);
    let answer: Value = http
        .post(format!("{base}/convert"))
        .json(&json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "request": {
            "uid": "x", "desiredAPIVersion": "apps.kruise.io/v1beta1",
            "objects": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "Unknown", "metadata": {"name": "u"}}]}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["response"]["result"]["status"], "Failure");
    assert_eq!(http.post(format!("{base}/nothing-here")).send().await.unwrap().status(), 404);
    env.stop().await;
}

#[tokio::test]
async fn clonesets_are_defaulted_and_validated() {
    let env = Env::start().await;
    let client = &env.client;

    // An invalid CloneSet is refused with field paths, and nothing is stored.
    let invalid = cloneset(
        "v1beta1",
        "bad",
        json!({
            "template": {"metadata": {"labels": {"app": "other"}}, "spec": {"containers": [{"name": "main", "image": "nginx"}]}},
            "scaleStrategy": {"podsToDelete": ["a", "a"]},
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}},
        }),
    );
    let status = api_error(create(client, "v1beta1", &invalid).await.unwrap_err());
    assert_eq!(status.code, 422, "{status:?}");
    assert!(
        status.message.starts_with("admission webhook \"vcloneset.kb.io\" denied the request: ["),
        "{}",
        status.message
    );
    let fields: Vec<String> =
        status.details.as_ref().unwrap().causes.iter().map(|c| c.field.clone()).collect();
    for field in [
        "spec.template.metadata.labels",
        "spec.scaleStrategy.podsToDelete",
        "spec.updateStrategy.rollingUpdate.maxUnavailable",
    ] {
        assert!(fields.iter().any(|f| f == field), "{field} missing from {fields:?}");
    }
    let missing = clonesets(client, "v1beta1").get_opt("bad").await.unwrap();
    assert!(missing.is_none());

    // A minimal CloneSet comes back defaulted.
    create(client, "v1beta1", &cloneset("v1beta1", "web", json!({}))).await.unwrap();
    let stored = get(client, "v1beta1", "web").await;
    assert_eq!(stored["spec"]["replicas"], 1);
    assert_eq!(stored["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(
        stored["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "ReCreate", "partition": 0, "maxUnavailable": "20%", "maxSurge": 0}})
    );
    let container = &stored["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["imagePullPolicy"], "Always");
    assert_eq!(container["terminationMessagePolicy"], "File");
    assert_eq!(stored["spec"]["template"]["spec"]["restartPolicy"], "Always");

    // InPlaceOnly: an image change is accepted, any other template change is refused.
    let in_place = cloneset(
        "v1beta1",
        "inplace",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly", "maxUnavailable": 1}}}),
    );
    create(client, "v1beta1", &in_place).await.unwrap();
    let api = clonesets(client, "v1beta1");
    let image =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.26"}]}}}});
    api.patch("inplace", &PatchParams::default(), &Patch::Merge(&image)).await.unwrap();
    let env_change = json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.26", "env": [{"name": "A", "value": "1"}]}]}}}});
    let status = api_error(
        api.patch("inplace", &PatchParams::default(), &Patch::Merge(&env_change)).await.unwrap_err(),
    );
    assert_eq!(status.code, 422);
    assert!(status.message.contains("only allowed to update images"), "{}", status.message);
    assert!(
        get(client, "v1beta1", "inplace").await["spec"]["template"]["spec"]["containers"][0]
            .get("env")
            .is_none()
    );
    env.stop().await;
}

fn sidecarsets(client: &Client, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apps.kruise.io", version, "SidecarSet");
    Api::all_with(client.clone(), &ApiResource::from_gvk_with_plural(&gvk, "sidecarsets"))
}

fn sidecarset(version: &str, name: &str, app: &str, container: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("apps.kruise.io/{version}"),
        "kind": "SidecarSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": app}},
            "containers": [{"name": container, "image": "busybox:1.36"}],
        },
    }))
    .unwrap()
}

#[tokio::test]
async fn sidecarsets_are_defaulted_and_validated() {
    let env = Env::start().await;
    let client = &env.client;
    let api = sidecarsets(client, "v1beta1");

    // Defaults and both hash annotations are written at either version.
    api.create(&PostParams::default(), &sidecarset("v1beta1", "logs", "web", "agent")).await.unwrap();
    sidecarsets(client, "v1alpha1")
        .create(&PostParams::default(), &sidecarset("v1alpha1", "metrics", "db", "exporter"))
        .await
        .unwrap();
    for name in ["logs", "metrics"] {
        let stored = serde_json::to_value(api.get(name).await.unwrap()).unwrap();
        assert_eq!(stored["spec"]["updateStrategy"]["type"], "RollingUpdate", "{name}");
        assert_eq!(stored["spec"]["containers"][0]["podInjectPolicy"], "BeforeAppContainer", "{name}");
        let annotations = &stored["metadata"]["annotations"];
        assert!(annotations["kruise.io/sidecarset-hash"].as_str().is_some_and(|h| !h.is_empty()), "{name}");
        assert!(annotations["kruise.io/sidecarset-hash-without-image"].is_string(), "{name}");
    }

    // An invalid SidecarSet is refused with its field paths, and nothing is stored.
    let mut invalid = sidecarset("v1beta1", "bad", "web", "second agent");
    invalid.data["spec"]["selector"] = Value::Null;
    let status = api_error(api.create(&PostParams::default(), &invalid).await.unwrap_err());
    assert_eq!(status.code, 422, "{status:?}");
    assert!(status.message.contains("vsidecarset.kb.io"), "{}", status.message);
    let fields: Vec<String> =
        status.details.as_ref().unwrap().causes.iter().map(|c| c.field.clone()).collect();
    assert!(fields.iter().any(|f| f == "spec.selector"), "{fields:?}");
    assert!(fields.iter().any(|f| f.starts_with("spec.containers[0].name")), "{fields:?}");
    assert!(api.get_opt("bad").await.unwrap().is_none());

    // A second SidecarSet selecting the same pods cannot inject a container of the same name;
    // one selecting other pods can.
    let status = api_error(
        api.create(&PostParams::default(), &sidecarset("v1beta1", "logs-2", "web", "agent"))
            .await
            .unwrap_err(),
    );
    assert_eq!(status.code, 422, "{status:?}");
    assert!(status.message.contains("spec.containers"), "{}", status.message);
    api.create(&PostParams::default(), &sidecarset("v1beta1", "logs-3", "cache", "agent")).await.unwrap();

    // A new pod the SidecarSet selects gets its sidecar before the app container, with the
    // pod annotations naming the SidecarSet and its hash; a pod it does not select is untouched.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod = |name: &str, app: &str| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {"app": app}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
        }))
        .unwrap()
    };
    let stored_logs = serde_json::to_value(api.get("logs").await.unwrap()).unwrap();
    let injected = pods.create(&PostParams::default(), &pod("web-0", "web")).await.unwrap();
    let names: Vec<&str> =
        injected.spec.as_ref().unwrap().containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["agent", "main"]);
    let agent = &injected.spec.as_ref().unwrap().containers[0];
    assert_eq!(agent.image.as_deref(), Some("busybox:1.36"));
    assert!(
        agent.env.iter().flatten().any(|e| e.name == "IS_INJECTED" && e.value.as_deref() == Some("true"))
    );
    let annotations = injected.metadata.annotations.clone().unwrap();
    assert_eq!(annotations["kruise.io/sidecarset-injected-list"], "logs");
    let hashes: Value = serde_json::from_str(&annotations["kruise.io/sidecarset-hash"]).unwrap();
    assert_eq!(hashes["logs"]["hash"], stored_logs["metadata"]["annotations"]["kruise.io/sidecarset-hash"]);
    assert_eq!(hashes["logs"]["sidecarList"], json!(["agent"]));
    let untouched = pods.create(&PostParams::default(), &pod("other-0", "other")).await.unwrap();
    assert_eq!(untouched.spec.unwrap().containers.len(), 1);
    assert!(
        !untouched
            .metadata
            .annotations
            .unwrap_or_default()
            .contains_key("kruise.io/sidecarset-injected-list")
    );

    // An image change keeps the hash without image and changes the hash.
    let before = serde_json::to_value(api.get("logs").await.unwrap()).unwrap();
    let image = json!({"spec": {"containers": [{"name": "agent", "image": "busybox:1.37"}]}});
    api.patch("logs", &PatchParams::default(), &Patch::Merge(&image)).await.unwrap();
    let after = serde_json::to_value(api.get("logs").await.unwrap()).unwrap();
    let hash = |object: &Value, key: &str| object["metadata"]["annotations"][key].clone();
    assert_ne!(hash(&before, "kruise.io/sidecarset-hash"), hash(&after, "kruise.io/sidecarset-hash"));
    assert_eq!(
        hash(&before, "kruise.io/sidecarset-hash-without-image"),
        hash(&after, "kruise.io/sidecarset-hash-without-image")
    );
    env.stop().await;
}

#[tokio::test]
async fn versions_convert_both_ways() {
    let env = Env::start().await;
    let client = &env.client;

    let alpha = cloneset(
        "v1alpha1",
        "alpha",
        json!({"replicas": 2, "updateStrategy": {"type": "InPlaceIfPossible", "partition": 1}}),
    );
    create(client, "v1alpha1", &alpha).await.unwrap();
    let as_beta = get(client, "v1beta1", "alpha").await;
    assert_eq!(as_beta["apiVersion"], "apps.kruise.io/v1beta1");
    assert_eq!(as_beta["spec"]["updateStrategy"]["type"], "RollingUpdate");
    let rolling = &as_beta["spec"]["updateStrategy"]["rollingUpdate"];
    assert_eq!(rolling["podUpdatePolicy"], "InPlaceIfPossible");
    assert_eq!(rolling["partition"], 1);
    assert_eq!(rolling["maxUnavailable"], "20%");
    let as_alpha = get(client, "v1alpha1", "alpha").await;
    assert_eq!(as_alpha["spec"]["updateStrategy"]["type"], "InPlaceIfPossible");
    assert!(as_alpha["spec"]["updateStrategy"].get("rollingUpdate").is_none());

    let beta = cloneset(
        "v1beta1",
        "beta",
        json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceOnly", "maxUnavailable": 1}},
               "scaleStrategy": {"enablePVCReuse": true}}),
    );
    create(client, "v1beta1", &beta).await.unwrap();
    let as_alpha = get(client, "v1alpha1", "beta").await;
    assert_eq!(as_alpha["apiVersion"], "apps.kruise.io/v1alpha1");
    assert_eq!(as_alpha["spec"]["updateStrategy"]["type"], "InPlaceOnly");
    assert_eq!(as_alpha["spec"]["updateStrategy"]["maxUnavailable"], 1);
    assert!(as_alpha["spec"]["scaleStrategy"].get("disablePVCReuse").is_none_or(|v| v == false));

    // An update through v1alpha1 reaches the stored v1beta1 object.
    clonesets(client, "v1alpha1")
        .patch("beta", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 3}})))
        .await
        .unwrap();
    assert_eq!(get(client, "v1beta1", "beta").await["spec"]["replicas"], 3);
    let listed = clonesets(client, "v1alpha1").list(&Default::default()).await.unwrap();
    assert_eq!(listed.items.len(), 2);
    env.stop().await;
}

#[tokio::test]
async fn delete_protection_and_pod_readiness_gates() {
    let env = Env::start().await;
    let client = &env.client;
    let api = clonesets(client, "v1beta1");

    let mut always = cloneset("v1beta1", "always", json!({"replicas": 0}));
    always.metadata.labels =
        Some([("policy.kruise.io/delete-protection".to_string(), "Always".to_string())].into());
    create(client, "v1beta1", &always).await.unwrap();
    let status = api_error(api.delete("always", &DeleteParams::default()).await.unwrap_err());
    assert_eq!(status.code, 403);
    assert!(
        status.message.ends_with(
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always"
        ),
        "{}",
        status.message
    );
    assert!(api.get_opt("always").await.unwrap().is_some());
    api.patch(
        "always",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"policy.kruise.io/delete-protection": null}}})),
    )
    .await
    .unwrap();
    api.delete("always", &DeleteParams::default()).await.unwrap();

    let mut cascading = cloneset("v1beta1", "cascading", json!({"replicas": 2}));
    cascading.metadata.labels =
        Some([("policy.kruise.io/delete-protection".to_string(), "Cascading".to_string())].into());
    let created = create(client, "v1beta1", &cascading).await.unwrap();
    let status = api_error(api.delete("cascading", &DeleteParams::default()).await.unwrap_err());
    assert_eq!(status.code, 403);
    assert!(status.message.contains("Cascading and replicas 2>0"), "{}", status.message);
    // Through v1alpha1 too.
    let status = api_error(
        clonesets(client, "v1alpha1").delete("cascading", &DeleteParams::default()).await.unwrap_err(),
    );
    assert_eq!(status.code, 403);
    api.patch("cascading", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 0}})))
        .await
        .unwrap();
    api.delete("cascading", &DeleteParams::default()).await.unwrap();

    // A pod controlled by a CloneSet gets the KruisePodReady gate; others do not.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let owned: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "owned", "ownerReferences": [{
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": "cascading",
            "uid": created["metadata"]["uid"], "controller": true,
        }]},
        "spec": {"containers": [{"name": "main", "image": "nginx"}], "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]},
    }))
    .unwrap();
    let owned = pods.create(&PostParams::default(), &owned).await.unwrap();
    let gates: Vec<String> =
        owned.spec.unwrap().readiness_gates.unwrap().into_iter().map(|gate| gate.condition_type).collect();
    assert_eq!(gates, ["InPlaceUpdateReady", "KruisePodReady"]);
    let plain: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]},
    }))
    .unwrap();
    let plain = pods.create(&PostParams::default(), &plain).await.unwrap();
    assert!(plain.spec.unwrap().readiness_gates.is_none());
    env.stop().await;
}

#[tokio::test]
async fn the_certificates_survive_a_restart() {
    let mut env = Env::start().await;
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), "kruise-system");
    let before = certs::artifacts_from_secret(&secrets.get("kruise-webhook-certs").await.unwrap());
    let first_port = env.webhook().local_addr().port();
    env.webhook.take().unwrap().shutdown().await;

    let restarted = start_webhook(&env.client).await;
    assert_ne!(restarted.local_addr().port(), first_port);
    let after = certs::artifacts_from_secret(&secrets.get("kruise-webhook-certs").await.unwrap());
    assert_eq!(after, before, "the restarted server reuses the stored CA and serving certificate");
    env.webhook = Some(restarted);

    // The registration follows the new port, and admission works through it.
    let port = env.webhook().local_addr().port();
    let mutating = Api::<MutatingWebhookConfiguration>::all(env.client.clone())
        .get("kruise-mutating-webhook-configuration")
        .await
        .unwrap();
    let url = mutating.webhooks.unwrap()[1].client_config.url.clone().unwrap();
    assert_eq!(url, format!("https://127.0.0.1:{port}/mutate-apps-kruise-io-cloneset"));
    create(&env.client, "v1alpha1", &cloneset("v1alpha1", "after-restart", json!({}))).await.unwrap();
    assert_eq!(get(&env.client, "v1beta1", "after-restart").await["spec"]["replicas"], 1);

    // A certificate that lacks a name this server needs is replaced, keeping the CA.
    let narrow = certs::generate(
        &certs::ServingNames::for_service("kruise-webhook-service", "kruise-system", &[], &[]),
        Some(&before),
        std::time::SystemTime::now(),
    )
    .unwrap();
    let mut secret = certs::secret_for("kruise-system", "kruise-webhook-certs", &narrow);
    secret.metadata.resource_version =
        secrets.get("kruise-webhook-certs").await.unwrap().metadata.resource_version;
    secrets.replace("kruise-webhook-certs", &PostParams::default(), &secret).await.unwrap();
    eventually("the narrowed certificate to be replaced", || async {
        let current = certs::artifacts_from_secret(&secrets.get("kruise-webhook-certs").await.unwrap());
        current.cert_pem != narrow.cert_pem && current.ca_cert_pem == before.ca_cert_pem
    })
    .await;
    create(&env.client, "v1beta1", &cloneset("v1beta1", "after-renewal", json!({}))).await.unwrap();
    env.stop().await;
}
