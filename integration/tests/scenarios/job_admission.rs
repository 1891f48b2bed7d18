//! Admission of the job kinds, on both tiers, through the manager's webhooks: an invalid
//! BroadcastJob (both served versions), AdvancedCronJob or EphemeralJob is refused with a 422
//! naming the fields at fault, and nothing is stored; a valid one is stored with upstream's
//! defaults filled in (completion and failure policies, parallelism, concurrency policy,
//! history limits).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use kruise_integration::{Scene, Skip};
use kube::{
    Api,
    api::{ApiResource, DynamicObject, GroupVersionKind, ListParams, PostParams},
};
use serde_json::{Value, json};

use crate::cloneset_kit::Kit;

const NAMESPACE: &str = "default";

fn api(kit: &Kit, version: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apps.kruise.io", version, kind);
    Api::namespaced_with(kit.client.clone(), NAMESPACE, &ApiResource::from_gvk_with_plural(&gvk, plural))
}

async fn wait_served(api: &Api<DynamicObject>, kind: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(Instant::now() < deadline, "{kind} is not served 30 s after its CRD was Established");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn object(version: &str, kind: &str, name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": kind,
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": spec,
    }))
    .unwrap()
}

/// Creates `object`, which must be refused with a 422 naming every one of `fields`; returns
/// the fields the answer named.
async fn refused(api: &Api<DynamicObject>, object: &DynamicObject, fields: &[&str]) -> Vec<String> {
    let name = object.metadata.name.clone().unwrap();
    let named = match api.create(&PostParams::default(), object).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{name}: {status:?}");
            let named: Vec<String> =
                status.details.iter().flat_map(|d| d.causes.iter()).map(|c| c.field.clone()).collect();
            for field in fields {
                assert!(
                    named.iter().any(|f| f == field),
                    "{name}: {field} named in {named:?}: {}",
                    status.message
                );
            }
            named
        }
        other => panic!("{name} was not refused: {other:?}"),
    };
    assert!(api.get_opt(&name).await.unwrap().is_none(), "{name}: nothing stored");
    named
}

fn pod_template(restart_policy: &str) -> Value {
    json!({"spec": {
        "containers": [{"name": "main", "image": "busybox", "command": ["true"]}],
        "restartPolicy": restart_policy,
    }})
}

pub async fn invalid_job_objects_are_refused_with_field_paths(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    let broadcast_beta = api(&kit, "v1beta1", "BroadcastJob", "broadcastjobs");
    let broadcast_alpha = api(&kit, "v1alpha1", "BroadcastJob", "broadcastjobs");
    let cron_beta = api(&kit, "v1beta1", "AdvancedCronJob", "advancedcronjobs");
    let ephemeral = api(&kit, "v1alpha1", "EphemeralJob", "ephemeraljobs");
    for (api, kind) in
        [(&broadcast_beta, "BroadcastJob"), (&cron_beta, "AdvancedCronJob"), (&ephemeral, "EphemeralJob")]
    {
        wait_served(api, kind).await;
    }

    let mut observed = serde_json::Map::new();
    let bad_broadcast = object(
        "v1beta1",
        "BroadcastJob",
        "bad-policy",
        json!({"template": pod_template("Always"), "completionPolicy": {"type": "Sometimes"}}),
    );
    let named = refused(
        &broadcast_beta,
        &bad_broadcast,
        &["spec.completionPolicy.type", "spec.template.spec.restartPolicy"],
    )
    .await;
    observed.insert("BroadcastJob v1beta1".into(), json!(named));
    let bad_parallelism = object(
        "v1alpha1",
        "BroadcastJob",
        "bad-parallelism",
        json!({"template": pod_template("Never"), "parallelism": "150x"}),
    );
    let named = refused(&broadcast_alpha, &bad_parallelism, &["spec.parallelism"]).await;
    observed.insert("BroadcastJob v1alpha1".into(), json!(named));
    let bad_cron = object(
        "v1beta1",
        "AdvancedCronJob",
        "bad-schedule",
        json!({
            "schedule": "61 * * * *",
            "timeZone": "Mars/Olympus_Mons",
            "template": {"broadcastJobTemplate": {"spec": {"template": pod_template("Never")}}},
        }),
    );
    let named = refused(&cron_beta, &bad_cron, &["spec.schedule", "spec.timeZone"]).await;
    observed.insert("AdvancedCronJob v1beta1".into(), json!(named));
    let bad_ephemeral = object(
        "v1alpha1",
        "EphemeralJob",
        "bad-debugger",
        json!({
            "selector": {"matchLabels": {"run": "nginx"}},
            "template": {"ephemeralContainers": [{
                "name": "debugger", "image": "busybox", "targetContainerName": "main",
                "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File",
                "ports": [{"containerPort": 80}],
            }]},
        }),
    );
    let named = refused(&ephemeral, &bad_ephemeral, &["spec.template.ephemeralContainers[0].ports"]).await;
    observed.insert("EphemeralJob v1alpha1".into(), json!(named));
    scene.observe("refused fields", Value::Object(observed));

    // Valid objects are stored with upstream's defaults.
    let post = PostParams::default();
    let broadcast = broadcast_alpha
        .create(
            &post,
            &object("v1alpha1", "BroadcastJob", "fine", json!({"template": pod_template("Never")})),
        )
        .await
        .expect("a valid BroadcastJob is stored");
    let spec = &broadcast.data["spec"];
    let defaults = json!({
        "completionPolicy": spec["completionPolicy"]["type"],
        "failurePolicy": spec["failurePolicy"]["type"],
        "parallelism": spec["parallelism"],
    });
    assert_eq!(
        defaults,
        json!({"completionPolicy": "Always", "failurePolicy": "FailFast", "parallelism": i32::MAX})
    );
    let cron = cron_beta
        .create(
            &post,
            &object(
                "v1beta1",
                "AdvancedCronJob",
                "fine",
                json!({
                    "schedule": "*/5 * * * *",
                    "paused": true,
                    "template": {"broadcastJobTemplate": {"spec": {"template": pod_template("Never")}}},
                }),
            ),
        )
        .await
        .expect("a valid AdvancedCronJob is stored");
    let spec = &cron.data["spec"];
    let cron_defaults = json!({
        "concurrencyPolicy": spec["concurrencyPolicy"],
        "successfulJobsHistoryLimit": spec["successfulJobsHistoryLimit"],
        "failedJobsHistoryLimit": spec["failedJobsHistoryLimit"],
    });
    assert_eq!(
        cron_defaults,
        json!({"concurrencyPolicy": "Allow", "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1})
    );
    scene.observe("defaults", json!({"BroadcastJob": defaults, "AdvancedCronJob": cron_defaults}));
    kit.shutdown().await;
    Ok(())
}
