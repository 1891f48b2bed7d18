//! The manager under stress, as an operator would cause it: killed (SIGKILL) mid-rollout and
//! started again, two replicas with one taking over the Lease when the leader dies, and another
//! writer patching the same pods all through a rollout.

use std::{
    collections::BTreeSet,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use k8s_openapi::api::coordination::v1::Lease;
use kruise_integration::{
    Scene, Skip,
    manager::{KruiseManager, MANAGER_NAMESPACE, ManagerSpec},
};
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

use crate::cloneset_kit::{Kit, cloneset, image_of, restarts_of, settled};

/// The Lease duration the manager uses (`LeaderElectionConfig::new`).
const LEASE_DURATION: Duration = Duration::from_secs(15);
/// How often a candidate retries.
const RETRY_PERIOD: Duration = Duration::from_secs(2);

async fn lease_holder(client: &kube::Client) -> Option<String> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), MANAGER_NAMESPACE);
    leases.get_opt("kruise-manager").await.ok().flatten()?.spec?.holder_identity
}

/// SIGKILL the manager in the middle of a ReCreate rollout, start a new one: the rollout
/// completes and every pod was created and deleted exactly once.
pub async fn manager_restart_mid_rollout(scene: Scene) -> Result<(), Skip> {
    let mut kit = Kit::start_with(&scene, Some(ManagerSpec::process("first"))).await;
    kit.create(cloneset(
        "steady",
        6,
        "nginx:1.25",
        json!({
            "minReadySeconds": 4,
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "ReCreate", "maxUnavailable": 1}}
        }),
    ))
    .await
    .unwrap();
    let limits = kit.watch_limits("steady");
    let (_, before) = kit.wait_settled("steady", 6).await;
    kit.set_image("steady", "nginx:1.26").await;
    kit.wait_for("steady", "the rollout under way", |set, _| {
        set.status.as_ref().is_some_and(|s| {
            s.observed_generation == set.metadata.generation.unwrap_or(0) && s.updated_replicas >= 2
        })
    })
    .await;
    kit.manager.take().unwrap().kill().await;
    let killed_at = kit.sets.get("steady").await.unwrap().status.unwrap().updated_replicas;
    // The killed replica held the Lease; the new one waits for it to expire, then finishes.
    kit.manager = Some(KruiseManager::start(scene.cluster(), ManagerSpec::process("second")).await.unwrap());
    let (_, after) = kit.wait_settled("steady", 6).await;
    assert!(after.iter().all(|pod| image_of(pod) == "nginx:1.26"));
    let before: BTreeSet<String> = before.iter().filter_map(ResourceExt::uid).collect();
    let seen = limits.seen();
    assert_eq!(seen.uids.len(), 12, "6 old pods and exactly 6 new ones, none created twice: {seen:?}");
    assert!(before.iter().all(|uid| seen.uids.contains(uid)));
    let reasons = kit.event_reasons("CloneSet", "steady").await;
    assert_eq!(reasons.get("SuccessfulCreate").copied(), Some(12), "{reasons:?}");
    assert_eq!(reasons.get("SuccessfulDelete").copied(), Some(6), "{reasons:?}");
    scene.observe("restart", json!({"podsEver": seen.uids.len(), "creates": 12, "deletes": 6}));
    assert!(killed_at < 6, "the manager was killed mid-rollout ({killed_at} of 6 updated)");
    scene.note(format!("the manager was killed with {killed_at} of 6 pods updated"));
    kit.shutdown().await;
    Ok(())
}

/// Two replicas: one leads; when it dies the other takes the Lease within its duration and
/// reconciles.
pub async fn leader_handover(scene: Scene) -> Result<(), Skip> {
    let mut kit = Kit::start_with(&scene, Some(ManagerSpec::process("alpha"))).await;
    let beta = KruiseManager::start(scene.cluster(), ManagerSpec::process("beta")).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let holder = loop {
        if let Some(holder) = lease_holder(&kit.client).await {
            break holder;
        }
        assert!(Instant::now() < deadline, "nobody took the Lease");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(holder.starts_with("alpha_"), "the first replica leads: {holder}");
    kit.create(cloneset("ha", 3, "nginx:1.25", json!({}))).await.unwrap();
    kit.wait_settled("ha", 3).await;

    // The follower serves webhooks but does not reconcile: its readiness says so only once it leads.
    kit.manager.take().unwrap().kill().await;
    let killed = Instant::now();
    let taken = loop {
        if let Some(holder) = lease_holder(&kit.client).await
            && holder.starts_with("beta_")
        {
            break killed.elapsed();
        }
        assert!(
            killed.elapsed() < LEASE_DURATION + RETRY_PERIOD * 2,
            "the follower did not take over within the lease duration"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    kit.patch("ha", json!({"spec": {"replicas": 5}})).await.unwrap();
    kit.wait_settled("ha", 5).await;
    scene.observe("handover", "the follower took the Lease within its duration and reconciled");
    scene.note(format!(
        "takeover after {:.1}s (lease duration {}s)",
        taken.as_secs_f64(),
        LEASE_DURATION.as_secs()
    ));

    // A graceful stop (SIGTERM) releases the Lease: a third replica takes it without waiting
    // for it to expire.
    let gamma = KruiseManager::start(scene.cluster(), ManagerSpec::process("gamma")).await.unwrap();
    beta.stop().await;
    let stopped = Instant::now();
    loop {
        if let Some(holder) = lease_holder(&kit.client).await
            && holder.starts_with("gamma_")
        {
            break;
        }
        assert!(stopped.elapsed() < LEASE_DURATION, "a released Lease is taken before it would expire");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let released_takeover = stopped.elapsed();
    kit.patch("ha", json!({"spec": {"replicas": 2}})).await.unwrap();
    kit.wait_settled("ha", 2).await;
    scene.observe("graceful", "a stopped leader released the Lease and the next replica reconciled");
    scene.note(format!("takeover after a graceful stop: {:.1}s", released_takeover.as_secs_f64()));
    kit.manager = Some(gamma);
    kit.shutdown().await;
    Ok(())
}

/// Another writer patches and replaces the same pods all through an in-place rollout: the rollout
/// ends with every pod updated once, and the other writer's labels kept.
pub async fn conflict_storm(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    kit.create(cloneset(
        "storm",
        5,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2}}}),
    ))
    .await
    .unwrap();
    let (_, before) = kit.wait_settled("storm", 5).await;
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicUsize::new(0));
    let storm = {
        let pods = kit.pods.clone();
        let names: Vec<String> = before.iter().map(ResourceExt::name_any).collect();
        let stop = stop.clone();
        let writes = writes.clone();
        tokio::spawn(async move {
            let mut round = 0u64;
            while !stop.load(Ordering::SeqCst) {
                round += 1;
                for name in &names {
                    // A merge patch (never conflicts) and a full replace (conflicts with anyone else).
                    let patch = json!({"metadata": {"labels": {"storm": "on"}, "annotations": {"storm/round": round.to_string()}}});
                    if pods.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await.is_ok() {
                        writes.fetch_add(1, Ordering::SeqCst);
                    }
                    if let Ok(mut pod) = pods.get(name).await {
                        pod.annotations_mut().insert("storm/replaced".into(), round.to_string());
                        if pods.replace(name, &PostParams::default(), &pod).await.is_ok() {
                            writes.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    kit.set_image("storm", "nginx:1.26").await;
    let (_, after) = kit
        .wait_for("storm", "updated in place despite the storm", |set, pods| {
            settled(set, pods, 5) && pods.iter().all(|pod| restarts_of(pod) == 1)
        })
        .await;
    stop.store(true, Ordering::SeqCst);
    storm.await.unwrap();
    let before_uids: BTreeSet<String> = before.iter().filter_map(ResourceExt::uid).collect();
    let after_uids: BTreeSet<String> = after.iter().filter_map(ResourceExt::uid).collect();
    assert_eq!(before_uids, after_uids, "no pod replaced");
    let after = kit.pods_of("storm").await;
    for pod in &after {
        assert_eq!(image_of(pod), "nginx:1.26");
        assert_eq!(restarts_of(pod), 1, "updated exactly once");
        assert_eq!(
            pod.labels().get("storm").map(String::as_str),
            Some("on"),
            "the other writer's label kept"
        );
    }
    let reasons = kit.event_reasons("CloneSet", "storm").await;
    assert_eq!(reasons.get("SuccessfulUpdatePodInPlace").copied(), Some(5), "{reasons:?}");
    scene.observe("storm", json!({"updatedOnce": 5}));
    scene.note(format!(
        "the other writer made {} pod writes during the rollout",
        writes.load(Ordering::SeqCst)
    ));
    kit.shutdown().await;
    Ok(())
}
