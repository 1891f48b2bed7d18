//! PodUnavailableBudget end to end, on both tiers, with the manager's controller and pod webhook
//! (gates `PodUnavailableBudgetDeleteGate`, on by default, and `PodUnavailableBudgetUpdateGate`):
//! a CloneSet of 3 guarded by a budget of maxUnavailable 1. Evicting its pods one after the
//! other, as `kubectl drain` does (policy/v1 Eviction): the first is allowed, the next refused
//! with upstream's message (as is a plain DELETE) until the first one's replacement is Ready;
//! then the next goes, and so on. A rollout of the CloneSet with its own maxUnavailable at 100%
//! still never has fewer than 2 Ready pods (checked on every pod event): the budget holds it.
//! Invalid budgets are refused with a 422 naming the fields at fault, at both versions.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kruise_crds::policy::v1beta1::PodUnavailableBudget;
use kruise_integration::{Scene, Skip, manager::ManagerSpec};
use kube::{
    Api, ResourceExt,
    api::{ApiResource, DeleteParams, DynamicObject, EvictParams, GroupVersionKind, ListParams, PostParams},
};
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, SETTLE, cloneset, image_of, is_ready, start_manager};

/// The scenario gates plus the in-place update guard.
const GATES: &str = "ImagePullJobGate=true,SidecarTerminator=true,PodUnavailableBudgetUpdateGate=true";
/// Upstream's refusal.
const REFUSED: &str = "pub unavailable allowed is negative";
const SET: &str = "pub-web";

async fn start(scene: &Scene) -> (Kit, Api<PodUnavailableBudget>) {
    let mut kit = Kit::start_with(scene, None).await;
    let budgets: Api<PodUnavailableBudget> = Api::namespaced(kit.client.clone(), "default");
    let deadline = Instant::now() + Duration::from_secs(30);
    while budgets.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(Instant::now() < deadline, "PodUnavailableBudgets are not served 30 s after the CRD");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    kit.manager = Some(start_manager(scene, ManagerSpec::in_process().with_feature_gates(GATES)).await);
    (kit, budgets)
}

fn dynamic_api(kit: &Kit, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("policy.kruise.io", version, "PodUnavailableBudget");
    Api::namespaced_with(
        kit.client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(&gvk, "podunavailablebudgets"),
    )
}

fn budget(version: &str, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": format!("policy.kruise.io/{version}"), "kind": "PodUnavailableBudget",
        "metadata": {"name": name}, "spec": spec
    })
}

/// Waits until the budget's status satisfies `check`.
async fn wait_status(
    budgets: &Api<PodUnavailableBudget>,
    what: &str,
    check: impl Fn(&kruise_crds::policy::v1beta1::PodUnavailableBudgetStatus) -> bool,
) {
    let deadline = Instant::now() + SETTLE;
    loop {
        let status = budgets.get("web-budget").await.unwrap().status.unwrap_or_default();
        if check(&status) {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for: {what}\nstatus: {status:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The CloneSet's active pods, Ready or not.
async fn active_pods(kit: &Kit) -> Vec<Pod> {
    kit.pods_of(SET).await.into_iter().filter(|pod| pod.metadata.deletion_timestamp.is_none()).collect()
}

/// Waits until the CloneSet has 3 active pods, all Ready.
async fn wait_three_ready(kit: &Kit) -> Vec<Pod> {
    let deadline = Instant::now() + SETTLE;
    loop {
        let pods = active_pods(kit).await;
        if pods.len() == 3 && pods.iter().all(is_ready) {
            return pods;
        }
        assert!(Instant::now() < deadline, "the CloneSet never had 3 Ready pods again");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn refusal(result: Result<impl std::fmt::Debug, kube::Error>, what: &str) -> String {
    match result {
        Err(kube::Error::Api(status)) => {
            assert!(status.message.contains(REFUSED), "{what}: {status:?}");
            status.message
        }
        other => panic!("{what} was not refused: {other:?}"),
    }
}

pub async fn evictions_and_rollouts_respect_the_budget(scene: Scene) -> Result<(), Skip> {
    let (kit, budgets) = start(&scene).await;
    let strategy = json!({"updateStrategy": {"type": "RollingUpdate",
        "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "100%"}}});
    kit.create(cloneset(SET, 3, "nginx:1.25", strategy)).await.unwrap();
    kit.wait_settled(SET, 3).await;

    let beta = dynamic_api(&kit, "v1beta1");
    let object: DynamicObject = serde_json::from_value(budget(
        "v1beta1",
        "web-budget",
        json!({"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": SET},
               "maxUnavailable": 1}),
    ))
    .unwrap();
    beta.create(&PostParams::default(), &object).await.unwrap();
    wait_status(&budgets, "3 pods counted, 1 disruption allowed", |s| {
        s.total_replicas == 3
            && s.desired_available == 2
            && s.current_available == 3
            && s.unavailable_allowed == 1
    })
    .await;
    // The controller names the budget on the pods, so the webhook finds it.
    let deadline = Instant::now() + SETTLE;
    while !active_pods(&kit).await.iter().all(|pod| {
        pod.annotations().get("pub.kruise.io/related-pub").map(String::as_str) == Some("web-budget")
    }) {
        assert!(Instant::now() < deadline, "the pods never got the related-pub annotation");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Drain the three pods one at a time, as kubectl drain would.
    let originals: Vec<String> = active_pods(&kit).await.iter().map(|p| p.name_any()).collect();
    for (index, name) in originals.iter().enumerate() {
        if index > 0 {
            // The previous eviction's replacement is not Ready yet, or its record still
            // stands: this one waits.
            let message =
                refusal(kit.pods.evict(name, &EvictParams::default()).await, "an eviction over budget");
            assert!(message.contains("web-budget"), "{message}");
            refusal(kit.pods.delete(name, &DeleteParams::default()).await, "a deletion over budget");
            wait_three_ready(&kit).await;
            wait_status(&budgets, "the budget allows one disruption again", |s| s.unavailable_allowed == 1)
                .await;
        }
        kit.pods
            .evict(name, &EvictParams::default())
            .await
            .unwrap_or_else(|e| panic!("evicting {name}: {e}"));
        // The disruption is spent: recorded until the controller sees the pod terminating.
        let status = budgets.get("web-budget").await.unwrap().status.unwrap();
        let gone =
            kit.pods.get_opt(name).await.unwrap().is_none_or(|p| p.metadata.deletion_timestamp.is_some());
        assert!(status.disrupted_pods.contains_key(name) || gone, "{name} recorded: {status:?}");
        assert_eq!(status.unavailable_allowed, 0, "{status:?}");
    }
    wait_three_ready(&kit).await;
    wait_status(&budgets, "all three replaced", |s| s.current_available == 3 && s.unavailable_allowed == 1)
        .await;

    // A rollout with the CloneSet's own limit at 100%: the budget keeps 2 Ready at every event.
    let limits = kit.watch_limits(SET);
    tokio::time::sleep(Duration::from_millis(500)).await;
    limits.arm();
    kit.set_image(SET, "nginx:1.26").await;
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let pods = active_pods(&kit).await;
        if pods.len() == 3 && pods.iter().all(|p| is_ready(p) && image_of(p) == "nginx:1.26") {
            break;
        }
        assert!(Instant::now() < deadline, "the rollout never finished");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let seen = limits.seen();
    assert!(seen.events > 0, "no pod event seen");
    assert!(seen.min_ready.is_some_and(|min| min >= 2), "the budget was broken during the rollout: {seen:?}");
    let reasons = kit.event_reasons("CloneSet", SET).await;
    assert!(reasons.get("SuccessfulUpdatePodInPlace").is_some_and(|n| *n >= 3), "{reasons:?}");

    kit.shutdown().await;
    Ok(())
}

/// Creates `manifest`, which must be refused with a 422 naming every one of `fields`, each
/// also in the message.
async fn refused(api: &Api<DynamicObject>, manifest: Value, fields: &[&str]) {
    let message = crate::cloneset_kit::refused_naming(api, manifest, fields).await;
    for field in fields {
        assert!(message.contains(field), "{field} not in the message {message}");
    }
}

pub async fn invalid_budgets_are_refused_with_field_paths(scene: Scene) -> Result<(), Skip> {
    let (kit, _) = start(&scene).await;
    let beta = dynamic_api(&kit, "v1beta1");
    let alpha = dynamic_api(&kit, "v1alpha1");
    refused(&beta, budget("v1beta1", "empty", json!({})), &["spec.selector", "spec.maxUnavailable"]).await;
    refused(
        &beta,
        budget(
            "v1beta1",
            "both",
            json!({"selector": {"matchLabels": {"app": "web"}},
                   "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": "web"},
                   "maxUnavailable": "150%"}),
        ),
        &["spec.selector", "spec.maxUnavailable"],
    )
    .await;
    refused(
        &alpha,
        budget(
            "v1alpha1",
            "negative",
            json!({"selector": {"matchLabels": {"app": "web"}}, "minAvailable": -1}),
        ),
        &["spec.minAvailable"],
    )
    .await;
    // Two budgets may not guard the same pods.
    let first: DynamicObject = serde_json::from_value(budget(
        "v1beta1",
        "first",
        json!({"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1}),
    ))
    .unwrap();
    beta.create(&PostParams::default(), &first).await.unwrap();
    refused(
        &alpha,
        budget(
            "v1alpha1",
            "second",
            json!({"selector": {"matchLabels": {"app": "web"}}, "minAvailable": "50%"}),
        ),
        &["spec.selector"],
    )
    .await;
    kit.shutdown().await;
    Ok(())
}
