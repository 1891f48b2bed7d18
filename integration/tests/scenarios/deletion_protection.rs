//! `policy.kruise.io/delete-protection` on built-in kinds and CRDs (upstream feature gates
//! `ResourcesDeletionProtection` and `DeletionProtectionForCRDCascadingGate`): the manager
//! registers DELETE webhooks for namespaces, CRDs, Deployments, ReplicaSets, apps/v1
//! StatefulSets, Services and Ingresses, selected by the label's existence, and the API server
//! calls them. Each kind is refused with upstream's reason while protected and deleted once the
//! label is gone (or, for `Cascading`, once nothing depends on it).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, ReplicaSet, StatefulSet},
        core::v1::{Namespace, PersistentVolume, PersistentVolumeClaim, Pod, Service, ServiceAccount},
        networking::v1::Ingress,
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kruise_integration::{
    Scene, Skip,
    manager::{KruiseManager, ManagerSpec},
};
use kube::{
    Api, Client, Resource,
    api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

const LABEL: &str = "policy.kruise.io/delete-protection";
const ALWAYS: &str = "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always";
const CASCADING: &str =
    "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading";
const NAMESPACE: &str = "protected";

/// One kind, reached through the dynamic API.
struct Kind {
    resource: ApiResource,
    namespaced: bool,
    client: Client,
}

impl Kind {
    fn of<K: Resource<DynamicType = ()>>(client: &Client, namespaced: bool) -> Self {
        Self { resource: ApiResource::erase::<K>(&()), namespaced, client: client.clone() }
    }

    fn api(&self) -> Api<DynamicObject> {
        if self.namespaced {
            Api::namespaced_with(self.client.clone(), NAMESPACE, &self.resource)
        } else {
            Api::all_with(self.client.clone(), &self.resource)
        }
    }

    async fn create(&self, mut manifest: Value) {
        manifest["apiVersion"] = json!(self.resource.api_version);
        manifest["kind"] = json!(self.resource.kind);
        let object: DynamicObject = serde_json::from_value(manifest).unwrap();
        self.api().create(&PostParams::default(), &object).await.unwrap();
    }

    async fn patch(&self, name: &str, patch: Value) {
        self.api().patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    }

    async fn label(&self, name: &str, value: Option<&str>) {
        self.patch(name, json!({"metadata": {"labels": {LABEL: value}}})).await;
    }

    /// Deletes `name`, expecting a refusal: returns (code, message).
    async fn refused(&self, name: &str) -> (u16, String) {
        match self.api().delete(name, &DeleteParams::default()).await {
            Ok(_) => panic!("deleting {} {name} was allowed", self.resource.kind),
            Err(kube::Error::Api(response)) => (response.code, response.message),
            Err(other) => panic!("deleting {} {name}: {other}", self.resource.kind),
        }
    }

    /// Deletes `name`, expecting it to be allowed.
    async fn allowed(&self, name: &str) {
        if let Err(error) = self.api().delete(name, &DeleteParams::default()).await {
            panic!("deleting {} {name} was refused: {error}", self.resource.kind);
        }
    }
}

/// Asserts a refusal is upstream's 403 with `reason` after the webhook's name.
fn assert_refused(kind: &str, (code, message): &(u16, String), webhook: &str, reason: &str) {
    assert_eq!(*code, 403, "{kind}: {message}");
    assert_eq!(message, &format!("admission webhook \"{webhook}\" denied the request: {reason}"), "{kind}");
}

fn template(name: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": name}},
        "spec": {
            // No node carries this label: the pods of the workloads stay Pending on both tiers.
            "nodeSelector": {"example.com/nowhere": "true"},
            "containers": [{"name": "main", "image": "nginx:1.25"}],
        },
    })
}

fn workload(name: &str, replicas: i64, label: &str) -> Value {
    json!({
        "metadata": {"name": name, "labels": {LABEL: label}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template(name)},
    })
}

/// Waits until `check` holds, for up to 30 s.
async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Namespaces, CRDs, Deployments, ReplicaSets, StatefulSets, Services and Ingresses labelled
/// `Always` are refused; `Cascading` ones while they have replicas, active pods, Bound claims
/// or custom resources; all are deleted once the label is removed or nothing depends on them.
/// Unlabelled objects are not sent to the webhook at all.
pub async fn built_in_kinds_and_crds(scene: Scene) -> Result<(), Skip> {
    let cluster = scene.cluster();
    let client = cluster.client();
    cluster.install_crds().await.expect("installing the Kruise CRDs");
    let manager = KruiseManager::start(
        cluster,
        ManagerSpec::in_process().with_feature_gates(
            "ResourcesDeletionProtection=true,DeletionProtectionForCRDCascadingGate=true",
        ),
    )
    .await
    .expect("starting the manager");

    // Namespace: Always; Cascading with an active pod, then with a Bound claim; then allowed.
    let namespaces = Kind::of::<Namespace>(&client, false);
    namespaces.create(json!({"metadata": {"name": NAMESPACE, "labels": {LABEL: "Always"}}})).await;
    let refusal = namespaces.refused(NAMESPACE).await;
    assert_refused("Namespace", &refusal, "vnamespace.kb.io", ALWAYS);
    scene.observe("namespace/always", &refusal);

    // Pods need the namespace's `default` ServiceAccount, which a controller makes.
    let accounts = Kind::of::<ServiceAccount>(&client, true);
    wait_until("the default ServiceAccount", || async {
        accounts.api().get_opt("default").await.unwrap().is_some()
    })
    .await;
    let pods = Kind::of::<Pod>(&client, true);
    pods.create(json!({"metadata": {"name": "lone"}, "spec": template("lone")["spec"]})).await;
    namespaces.label(NAMESPACE, Some("Cascading")).await;
    let refusal = namespaces.refused(NAMESPACE).await;
    assert_refused("Namespace", &refusal, "vnamespace.kb.io", &format!("{CASCADING} and active pods 1>0"));
    scene.observe("namespace/cascading with a pod", &refusal);
    // An unscheduled pod is removed at once.
    pods.allowed("lone").await;
    wait_until("the pod to go", || async { pods.api().get_opt("lone").await.unwrap().is_none() }).await;

    // A claim bound to a volume reserved for it (a real PV controller reports it Bound; the
    // embedded control plane has none, so the scenario writes the phase the controller would).
    let claims = Kind::of::<PersistentVolumeClaim>(&client, true);
    claims
        .create(json!({
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                     "storageClassName": "", "volumeName": "protected-data"},
        }))
        .await;
    let claim_uid = claims.api().get("data").await.unwrap().metadata.uid.unwrap();
    let volumes = Kind::of::<PersistentVolume>(&client, false);
    volumes
        .create(json!({
            "metadata": {"name": "protected-data"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                     "hostPath": {"path": "/tmp/protected-data"}, "persistentVolumeReclaimPolicy": "Retain",
                     "claimRef": {"namespace": NAMESPACE, "name": "data", "uid": claim_uid}},
        }))
        .await;
    let bound = json!({"status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}});
    Api::<PersistentVolumeClaim>::namespaced(client.clone(), NAMESPACE)
        .patch_status("data", &PatchParams::default(), &Patch::Merge(&bound))
        .await
        .unwrap();
    wait_until("the claim to be Bound", || async {
        let claim = claims.api().get("data").await.unwrap();
        claim.data.pointer("/status/phase").and_then(Value::as_str) == Some("Bound")
    })
    .await;
    let refusal = namespaces.refused(NAMESPACE).await;
    assert_refused(
        "Namespace",
        &refusal,
        "vnamespace.kb.io",
        &format!("{CASCADING} and \"Bound\" status pvc 1>0"),
    );
    scene.observe("namespace/cascading with a bound claim", &refusal);

    // Workloads: Always; Cascading with replicas; Cascading at 0 replicas or unlabelled: allowed.
    for (kind, webhook) in [
        (Kind::of::<Deployment>(&client, true), "vbuiltindeployment.kb.io"),
        (Kind::of::<ReplicaSet>(&client, true), "vbuiltinreplicaset.kb.io"),
        (Kind::of::<StatefulSet>(&client, true), "vbuiltinstatefulset.kb.io"),
    ] {
        let name = kind.resource.plural.clone();
        let mut manifest = workload(&name, 2, "Always");
        if kind.resource.kind == "StatefulSet" {
            manifest["spec"]["serviceName"] = json!(name);
        }
        kind.create(manifest).await;
        let refusal = kind.refused(&name).await;
        assert_refused(&kind.resource.kind, &refusal, webhook, ALWAYS);
        kind.label(&name, Some("Cascading")).await;
        let cascading = kind.refused(&name).await;
        assert_refused(&kind.resource.kind, &cascading, webhook, &format!("{CASCADING} and replicas 2>0"));
        scene.observe(format!("{}/refusals", kind.resource.kind), [&refusal, &cascading]);
        if kind.resource.kind == "ReplicaSet" {
            kind.patch(&name, json!({"spec": {"replicas": 0}})).await;
        } else {
            kind.label(&name, None).await;
        }
        kind.allowed(&name).await;
    }

    // Services and Ingresses: only Always protects.
    let backend = json!({"service": {"name": "web", "port": {"number": 80}}});
    for (kind, webhook, spec) in [
        (
            Kind::of::<Service>(&client, true),
            "vservice.kb.io",
            json!({"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}),
        ),
        (
            Kind::of::<Ingress>(&client, true),
            "vingress.kb.io",
            json!({"rules": [{"host": "web.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}]}),
        ),
    ] {
        kind.create(json!({"metadata": {"name": "web", "labels": {LABEL: "Always"}}, "spec": spec})).await;
        let refusal = kind.refused("web").await;
        assert_refused(&kind.resource.kind, &refusal, webhook, ALWAYS);
        scene.observe(format!("{}/always", kind.resource.kind), &refusal);
        kind.label("web", None).await;
        kind.allowed("web").await;
    }

    // CRD: Always; Cascading with a custom resource; allowed once it is gone.
    let crds = Kind::of::<CustomResourceDefinition>(&client, false);
    crds.create(json!({
        "metadata": {"name": "guards.e2e.example.com", "labels": {LABEL: "Always"}},
        "spec": {
            "group": "e2e.example.com", "scope": "Namespaced",
            "names": {"plural": "guards", "singular": "guard", "kind": "Guard"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    }))
    .await;
    let refusal = crds.refused("guards.e2e.example.com").await;
    assert_refused("CustomResourceDefinition", &refusal, "vcustomresourcedefinition.kb.io", ALWAYS);
    scene.observe("crd/always", &refusal);
    let guards = Kind {
        resource: ApiResource {
            group: "e2e.example.com".into(),
            version: "v1".into(),
            api_version: "e2e.example.com/v1".into(),
            kind: "Guard".into(),
            plural: "guards".into(),
        },
        namespaced: true,
        client: client.clone(),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let object: DynamicObject = serde_json::from_value(
            json!({"apiVersion": "e2e.example.com/v1", "kind": "Guard", "metadata": {"name": "one"}}),
        )
        .unwrap();
        match guards.api().create(&PostParams::default(), &object).await {
            Ok(_) => break,
            // The new resource is served a moment after the CRD is Established on a real server.
            Err(error) if Instant::now() < deadline => {
                eprintln!("creating a Guard: {error}; retrying");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(error) => panic!("creating a Guard: {error}"),
        }
    }
    crds.label("guards.e2e.example.com", Some("Cascading")).await;
    let refusal = crds.refused("guards.e2e.example.com").await;
    assert_refused(
        "CustomResourceDefinition",
        &refusal,
        "vcustomresourcedefinition.kb.io",
        &format!("{CASCADING} and active CRs 1>0"),
    );
    scene.observe("crd/cascading with a custom resource", &refusal);
    guards.allowed("one").await;
    wait_until("the Guard to go", || async { guards.api().get_opt("one").await.unwrap().is_none() }).await;
    crds.allowed("guards.e2e.example.com").await;

    // The namespace once its label is removed (its claim is still Bound).
    namespaces.label(NAMESPACE, None).await;
    namespaces.allowed(NAMESPACE).await;
    let _ = volumes.api().delete("protected-data", &DeleteParams::default()).await;

    // Unlabelled objects never reach the webhook: with the manager gone, deleting an unlabelled
    // Service still works, while a labelled one fails on the unreachable webhook.
    manager.stop().await;
    let services = Api::<Service>::namespaced(client.clone(), "default");
    for (name, labels) in [("plain", json!({})), ("guarded", json!({LABEL: "Always"}))] {
        let service = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"ports": [{"port": 80}]},
        }))
        .unwrap();
        services.create(&PostParams::default(), &service).await.unwrap();
    }
    services
        .delete("plain", &DeleteParams::default())
        .await
        .expect("an unlabelled Service is not sent to the webhook");
    let unreachable =
        services.delete("guarded", &DeleteParams::default()).await.expect_err("failurePolicy Fail");
    let kube::Error::Api(response) = unreachable else { panic!("unexpected error") };
    assert!(response.message.contains("failed calling webhook \"vservice.kb.io\""), "{}", response.message);
    scene.observe("without the manager", [response.code]);
    Ok(())
}
