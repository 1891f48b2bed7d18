//! API server and controller-manager behaviour that upstream clients see, the same on both
//! tiers: the `default` ServiceAccount of a new namespace (made again after deletion), field
//! selectors on fields an object leaves out (they read as the type's zero value) and the
//! refusals of unsupported field labels, the defaults of pods and of workload templates
//! (ServiceAccount and Priority admission included), Ingress / IngressClass / HPA served with
//! their defaults, validation and table columns, and `ControllerRevision.data` stored byte for
//! byte.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::Duration;

use k8s_openapi::api::{
    apps::v1::{ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet},
    autoscaling::v2::HorizontalPodAutoscaler,
    batch::v1::{CronJob, Job},
    core::v1::{ConfigMap, Namespace, Node, Pod, ServiceAccount},
    networking::v1::{Ingress, IngressClass},
};
use kruise_integration::{Scene, Skip};
use kube::{
    Api,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
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

/// A pod spec exercising every default kube-apiserver applies to pods and templates.
fn defaults_pod_spec() -> Value {
    json!({
        "hostNetwork": true,
        "serviceAccount": "builder",
        "automountServiceAccountToken": false,
        "initContainers": [{"name": "init", "image": "busybox", "command": ["true"], "ports": [{"containerPort": 7000}]}],
        "containers": [{
            "name": "web",
            "image": "nginx:1.25",
            "ports": [{"containerPort": 8080}, {"containerPort": 8443, "hostPort": 8443, "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "100m"}},
            "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
            "livenessProbe": {"httpGet": {"port": 8080}},
            "readinessProbe": {"grpc": {"port": 9000}},
            "startupProbe": {"exec": {"command": ["true"]}, "periodSeconds": 3},
            "lifecycle": {"preStop": {"httpGet": {"port": 8080, "path": "/quit"}}},
            "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
        }, {
            "name": "sidecar",
            "image": "registry.example.com/team/tool@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
        }],
        "volumes": [
            {"name": "scratch"},
            {"name": "config", "configMap": {"name": "settings"}},
            {"name": "creds", "secret": {"secretName": "creds"}},
            {"name": "info", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
            {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
            {"name": "host", "hostPath": {"path": "/var/log"}},
        ],
    })
}

/// What kube-apiserver stores for a pod and for the templates of every workload kind: the same
/// pod spec, with `SetDefaults_Pod` (host ports, requests from limits, `enableServiceLinks`)
/// only on the pod.
pub async fn pod_and_template_defaults(scene: Scene) -> Result<(), Skip> {
    let client = scene.cluster().client();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = serde_json::from_value(json!({"metadata": {"name": "defaults"}})).unwrap();
    namespaces.create(&PostParams::default(), &namespace).await.unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "defaults");
    let builder = serde_json::from_value(json!({"metadata": {"name": "builder"}})).unwrap();
    accounts.create(&PostParams::default(), &builder).await.unwrap();
    let spec = defaults_pod_spec();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "defaults");
    let pod = serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).unwrap();
    let created = pods.create(&PostParams::default(), &pod).await.unwrap();
    scene.observe("pod/spec", &created.spec);
    scene.observe("pod/spec as read", &pods.get("p").await.unwrap().spec);
    // ServiceAccount admission: `default`, with its token mounted in every container.
    let plain = serde_json::from_value(json!({
        "metadata": {"name": "plain"},
        "spec": {"initContainers": [{"name": "init", "image": "busybox:1.36"}], "containers": [{"name": "c", "image": "nginx:1.25"}]},
    }))
    .unwrap();
    let created = pods.create(&PostParams::default(), &plain).await.unwrap();
    scene.observe(
        "pod/service account and token volume",
        token_volume_named(serde_json::to_value(&created.spec).unwrap()),
    );
    let missing = serde_json::from_value(json!({
        "metadata": {"name": "orphan"},
        "spec": {"serviceAccountName": "nobody", "containers": [{"name": "c", "image": "nginx:1.25"}]},
    }))
    .unwrap();
    scene.observe(
        "pod/unknown service account",
        refusal(pods.create(&PostParams::default(), &missing).await.unwrap_err()),
    );
    let mismatched = serde_json::from_value(json!({
        "metadata": {"name": "mismatched"},
        "spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80, "hostPort": 8080}]}]},
    }))
    .unwrap();
    scene.observe(
        "pod/host port unlike the container port",
        refusal(pods.create(&PostParams::default(), &mismatched).await.unwrap_err()),
    );

    let labels = json!({"app": "defaults"});
    let template = json!({"metadata": {"labels": labels}, "spec": spec});
    let selector = json!({"matchLabels": labels});
    let create = |kind: &'static str, body: Value| {
        let client = client.clone();
        async move {
            let body = json!({"metadata": {"name": "w"}, "spec": body});
            let spec = match kind {
                "Deployment" => created_spec::<Deployment>(&client, body).await,
                "StatefulSet" => created_spec::<StatefulSet>(&client, body).await,
                "DaemonSet" => created_spec::<DaemonSet>(&client, body).await,
                "ReplicaSet" => created_spec::<ReplicaSet>(&client, body).await,
                "Job" => created_spec::<Job>(&client, body).await,
                _ => created_spec::<CronJob>(&client, body).await,
            };
            (kind, spec)
        }
    };
    let restart_never = {
        let mut spec = spec.clone();
        spec["restartPolicy"] = json!("Never");
        json!({"metadata": {"labels": labels}, "spec": spec})
    };
    for (kind, mut spec) in [
        create("Deployment", json!({"selector": selector, "template": template})).await,
        create(
            "StatefulSet",
            json!({"selector": selector, "template": template, "serviceName": "w",
                   "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}),
        )
        .await,
        create("DaemonSet", json!({"selector": selector, "template": template})).await,
        create("ReplicaSet", json!({"replicas": 0, "selector": selector, "template": template})).await,
        create("Job", json!({"suspend": true, "template": restart_never})).await,
        create("CronJob", json!({"schedule": "0 0 1 1 *", "suspend": true, "jobTemplate": {"spec": {"template": restart_never}}})).await,
    ] {
        // A job's generated selector and labels carry its uid.
        if kind == "Job" {
            spec.as_object_mut().unwrap().remove("selector");
            spec["template"]["metadata"]["labels"] = json!("(generated)");
        }
        scene.observe(format!("{kind}/spec"), spec);
    }
    namespaces.delete("defaults", &DeleteParams::default()).await.unwrap();
    Ok(())
}

/// Creates a workload in namespace `defaults` and returns its stored spec.
async fn created_spec<K>(client: &kube::Client, body: Value) -> Value
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(client.clone(), "defaults");
    let object: K = serde_json::from_value(body).unwrap();
    let created = api.create(&PostParams::default(), &object).await.unwrap();
    serde_json::to_value(&created).unwrap()["spec"].clone()
}

/// The status and message of a refused write, and the field paths of its causes.
fn refusal(error: kube::Error) -> Value {
    match error {
        kube::Error::Api(status) => {
            json!({"code": status.code, "reason": status.reason, "message": status.message})
        }
        other => panic!("expected an API error, got {other}"),
    }
}

/// `value` with the random suffix of the token volume's name (`kube-api-access-xxxxx`) replaced,
/// so that both tiers read the same.
fn token_volume_named(value: Value) -> Value {
    match value {
        Value::String(text) if text.starts_with("kube-api-access-") => json!("kube-api-access-(random)"),
        Value::Array(items) => Value::Array(items.into_iter().map(token_volume_named).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, token_volume_named(v))).collect())
        }
        other => other,
    }
}

/// A Table of `path` (its column names, and each row's cells but the age).
async fn table(scene: &Scene, path: &str) -> Value {
    let cluster = scene.cluster();
    let response = cluster
        .http()
        .unwrap()
        .get(format!("{}{path}", cluster.url()))
        .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{path}");
    let table: Value = response.json().await.unwrap();
    let columns: Vec<&Value> =
        table["columnDefinitions"].as_array().unwrap().iter().map(|c| &c["name"]).collect();
    let age = columns.iter().position(|c| *c == "Age");
    let rows: Vec<Vec<Value>> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let mut cells = row["cells"].as_array().unwrap().clone();
            if let Some(age) = age {
                cells.remove(age);
            }
            cells
        })
        .collect();
    json!({"columns": columns, "rows": rows})
}

/// `networking.k8s.io/v1` Ingress and IngressClass and `autoscaling/v2` HorizontalPodAutoscaler:
/// discovery, defaults, validation errors (field paths as kube-apiserver reports them), the
/// status subresource and `kubectl get` columns.
pub async fn ingress_and_autoscaler_kinds(scene: Scene) -> Result<(), Skip> {
    let client = scene.cluster().client();
    for (group_version, names) in [
        ("networking.k8s.io/v1", vec!["ingressclasses", "ingresses", "ingresses/status"]),
        ("autoscaling/v2", vec!["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    ] {
        let list = client.list_api_group_resources(group_version).await.unwrap();
        let mut resources: Vec<Value> = list
            .resources
            .iter()
            .filter(|r| names.contains(&r.name.as_str()))
            .map(|r| {
                let mut verbs = r.verbs.clone();
                verbs.sort();
                json!({"name": r.name, "kind": r.kind, "namespaced": r.namespaced, "shortNames": r.short_names, "categories": r.categories, "verbs": verbs})
            })
            .collect();
        resources.sort_by_key(|r| r["name"].to_string());
        scene.observe(format!("discovery/{group_version}"), resources);
    }

    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = serde_json::from_value(json!({"metadata": {"name": "routes"}})).unwrap();
    namespaces.create(&PostParams::default(), &namespace).await.unwrap();

    let classes: Api<IngressClass> = Api::all(client.clone());
    let class = serde_json::from_value(json!({
        "metadata": {"name": "edge"},
        "spec": {"controller": "example.com/edge", "parameters": {"apiGroup": "k8s.example.com", "kind": "EdgeParams", "name": "default"}},
    }))
    .unwrap();
    let created = classes.create(&PostParams::default(), &class).await.unwrap();
    scene.observe("ingressclass/spec", &created.spec);
    let bad_class =
        serde_json::from_value(json!({"metadata": {"name": "bad"}, "spec": {"controller": "edge"}})).unwrap();
    scene.observe(
        "ingressclass/invalid",
        refusal(classes.create(&PostParams::default(), &bad_class).await.unwrap_err()),
    );

    let ingresses: Api<Ingress> = Api::namespaced(client.clone(), "routes");
    let backend = json!({"service": {"name": "web", "port": {"number": 80}}});
    let ingress = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"ingressClassName": "edge", "tls": [{"hosts": ["a.example.com"], "secretName": "tls"}], "rules": [
            {"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}},
            {"host": "*.b.example.com", "http": {"paths": [{"path": "/api", "pathType": "ImplementationSpecific", "backend": backend}]}},
        ]},
    }))
    .unwrap();
    let created = ingresses.create(&PostParams::default(), &ingress).await.unwrap();
    scene.observe("ingress/spec", &created.spec);
    scene.observe("ingress/status", &created.status);
    let status = json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}});
    let patched =
        ingresses.patch_status("web", &PatchParams::default(), &Patch::Merge(status)).await.unwrap();
    scene.observe("ingress/status after patch", &patched.status);
    for (case, spec) in [
        ("nothing", json!({})),
        (
            "no path type",
            json!({"rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "backend": backend}]}}]}),
        ),
        (
            "relative path, IP host, no port",
            json!({"rules": [{"host": "10.1.1.1", "http": {"paths": [{"path": "x", "pathType": "Exact", "backend": {"service": {"name": "web"}}}]}}]}),
        ),
    ] {
        let bad = serde_json::from_value(json!({"metadata": {"name": "bad"}, "spec": spec})).unwrap();
        scene.observe(
            format!("ingress/invalid/{case}"),
            refusal(ingresses.create(&PostParams::default(), &bad).await.unwrap_err()),
        );
    }

    let autoscalers: Api<HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "routes");
    let target = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"});
    for (name, spec) in [
        ("plain", json!({"maxReplicas": 5, "scaleTargetRef": target})),
        (
            "shaped",
            json!({"minReplicas": 2, "maxReplicas": 6, "scaleTargetRef": target,
                          "metrics": [{"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "512Mi"}}}],
                          "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}),
        ),
    ] {
        let hpa = serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap();
        let created = autoscalers.create(&PostParams::default(), &hpa).await.unwrap();
        scene.observe(format!("hpa/{name}/spec"), &created.spec);
    }
    for (case, spec) in [
        ("min above max", json!({"minReplicas": 4, "maxReplicas": 3, "scaleTargetRef": target})),
        ("zero and no target", json!({"minReplicas": 0, "maxReplicas": 0, "scaleTargetRef": {}})),
        (
            "bad metric and policy",
            json!({"maxReplicas": 3, "scaleTargetRef": target,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 0}}}, {"type": "Pods"}],
            "behavior": {"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 2000}]}}}),
        ),
    ] {
        let bad = serde_json::from_value(json!({"metadata": {"name": "bad"}, "spec": spec})).unwrap();
        scene.observe(
            format!("hpa/invalid/{case}"),
            refusal(autoscalers.create(&PostParams::default(), &bad).await.unwrap_err()),
        );
    }

    scene.observe("table/ingressclasses", table(&scene, "/apis/networking.k8s.io/v1/ingressclasses").await);
    scene.observe(
        "table/ingresses",
        table(&scene, "/apis/networking.k8s.io/v1/namespaces/routes/ingresses").await,
    );
    let mut autoscaler_table =
        table(&scene, "/apis/autoscaling/v2/namespaces/routes/horizontalpodautoscalers").await;
    // The real tier's HPA controller reports replicas (the embedded tier has none).
    let replicas =
        autoscaler_table["columns"].as_array().unwrap().iter().position(|c| c == "Replicas").unwrap();
    for row in autoscaler_table["rows"].as_array_mut().unwrap() {
        row.as_array_mut().unwrap().remove(replicas);
    }
    scene.observe("table/horizontalpodautoscalers", autoscaler_table);

    classes.delete("edge", &DeleteParams::default()).await.unwrap();
    namespaces.delete("routes", &DeleteParams::default()).await.unwrap();
    Ok(())
}

/// `ControllerRevision.data` is a RawExtension: kube-apiserver keeps it as sent, nulls and all
/// (controllers compare it to decide whether they need a new revision).
pub async fn controller_revision_data_is_kept_as_sent(scene: Scene) -> Result<(), Skip> {
    let revisions: Api<ControllerRevision> = Api::namespaced(scene.cluster().client(), "default");
    let data = json!({
        "spec": {"template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": [{"name": "c", "resources": {}}]}}, "$patch": "replace"},
        "unset": null,
        "list": [1, null],
    });
    let revision: ControllerRevision =
        serde_json::from_value(json!({"metadata": {"name": "raw-1"}, "revision": 1, "data": data})).unwrap();
    let created = revisions.create(&PostParams::default(), &revision).await.unwrap();
    scene.observe("controllerrevision/created data", &created.data);
    let read = revisions.get("raw-1").await.unwrap();
    scene.observe("controllerrevision/read data", &read.data);
    assert_eq!(read.data.map(|d| d.0), Some(data));
    revisions.delete("raw-1", &DeleteParams::default()).await.unwrap();
    Ok(())
}
