//! CloneSet through the Kubernetes API, as users and tools drive it: manifests of either version
//! applied with kubectl, `kubectl scale`, specified deletes and deletion ranking, invalid objects
//! and deletion protection refused by the webhook; in-place, ReCreate and InPlaceOnly updates,
//! rollback to an older revision, partition and pause, and the maxUnavailable / maxSurge limits
//! checked on every pod event; the exact patch sequence Kruise Rollout sends.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use k8s_openapi::api::core::v1::Pod;
use kruise_crds::apps::v1beta1::CloneSet;
use kruise_integration::{Scene, Skip};
use kube::{
    Api, ResourceExt,
    api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams},
};
use serde_json::{Value, json};

use crate::{
    cloneset_kit::{Kit, cloneset, image_of, is_ready, restarts_of, revision_of, settled},
    kubectl::Kubectl,
};

const V1ALPHA1_WEB: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
spec:
  replicas: 5
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: nginx:1.25
  updateStrategy:
    type: InPlaceIfPossible
    maxUnavailable: 1
"#;

const V1BETA1_API: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata:
  name: api
spec:
  replicas: 2
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: main
        image: busybox:1.36
        command: [sleep, "3600"]
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      podUpdatePolicy: ReCreate
      maxSurge: 1
"#;

fn uids(pods: &[Pod]) -> BTreeSet<String> {
    pods.iter().filter_map(|pod| pod.uid()).collect()
}

fn names(pods: &[Pod]) -> BTreeSet<String> {
    pods.iter().map(ResourceExt::name_any).collect()
}

/// The `apps.kruise.io/v1alpha1` view of CloneSets (what Kruise Rollout reads and patches).
pub fn v1alpha1_clonesets(client: kube::Client) -> Api<DynamicObject> {
    let resource = ApiResource {
        group: "apps.kruise.io".into(),
        version: "v1alpha1".into(),
        api_version: "apps.kruise.io/v1alpha1".into(),
        kind: "CloneSet".into(),
        plural: "clonesets".into(),
    };
    Api::namespaced_with(client, "default", &resource)
}

/// Create from either version with kubectl, read back in the other, `kubectl scale`, specified
/// deletes (label and `podsToDelete`), deletion cost ranking, invalid CloneSets and deletion
/// protection.
pub async fn create_scale_and_delete(scene: Scene) -> Result<(), Skip> {
    let kubectl = Kubectl::for_scene(&scene)?;
    let kit = Kit::start(&scene).await;

    // A v1alpha1 manifest applied with kubectl runs 5 Ready pods with distinct instance ids.
    let out = kubectl.run_stdin(&["apply", "-f", "-"], V1ALPHA1_WEB);
    assert!(out.contains("cloneset.apps.kruise.io/web created"), "{out}");
    let (set, pods) = kit.wait_settled("web", 5).await;
    let ids: BTreeSet<String> = pods
        .iter()
        .filter_map(|pod| pod.labels().get("apps.kruise.io/cloneset-instance-id").cloned())
        .collect();
    assert_eq!(ids.len(), 5, "every pod has its own instance id");
    for pod in &pods {
        let id = &pod.labels()["apps.kruise.io/cloneset-instance-id"];
        assert_eq!(pod.name_any(), format!("web-{id}"));
        let hash = &pod.labels()["pod-template-hash"];
        assert_eq!(revision_of(pod), Some(format!("web-{hash}").as_str()));
    }
    assert_eq!(set.status.as_ref().unwrap().update_revision, set.status.as_ref().unwrap().current_revision);
    // The pod webhook gave every pod the KruisePodReady gate, and the controller set it True.
    for pod in &pods {
        let gates = pod.spec.as_ref().unwrap().readiness_gates.clone().unwrap_or_default();
        assert!(gates.iter().any(|gate| gate.condition_type == "KruisePodReady"), "{}", pod.name_any());
        let conditions = pod.status.as_ref().unwrap().conditions.clone().unwrap_or_default();
        assert!(
            conditions.iter().any(|c| c.type_ == "KruisePodReady" && c.status == "True"),
            "{}",
            pod.name_any()
        );
    }

    // ... and is served back as v1beta1 (and the v1beta1 one as v1alpha1).
    let beta: Value =
        serde_json::from_str(&kubectl.run(&["get", "clonesets.v1beta1.apps.kruise.io", "web", "-o", "json"]))
            .unwrap();
    assert_eq!(beta["apiVersion"], "apps.kruise.io/v1beta1");
    assert_eq!(beta["spec"]["updateStrategy"]["type"], "RollingUpdate");
    assert_eq!(beta["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"], "InPlaceIfPossible");
    assert_eq!(beta["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"], 1);
    let out = kubectl.run_stdin(&["apply", "-f", "-"], V1BETA1_API);
    assert!(out.contains("cloneset.apps.kruise.io/api created"), "{out}");
    kit.wait_settled("api", 2).await;
    let alpha: Value = serde_json::from_str(&kubectl.run(&[
        "get",
        "clonesets.v1alpha1.apps.kruise.io",
        "api",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(alpha["apiVersion"], "apps.kruise.io/v1alpha1");
    assert_eq!(alpha["spec"]["updateStrategy"]["type"], "ReCreate");
    assert_eq!(alpha["spec"]["updateStrategy"]["maxSurge"], 1);
    assert_eq!(alpha["status"]["readyReplicas"], 2);
    scene.observe(
        "conversion",
        json!({"beta": beta["spec"]["updateStrategy"], "alpha": alpha["spec"]["updateStrategy"]}),
    );

    // `kubectl scale` goes through the scale subresource.
    let out = kubectl.run(&["scale", "cloneset", "web", "--replicas=7"]);
    assert!(out.contains("cloneset.apps.kruise.io/web scaled"), "{out}");
    let (_, pods) = kit.wait_settled("web", 7).await;
    let table = kubectl.run(&["get", "cloneset", "web"]);
    assert!(table.lines().nth(1).is_some_and(|row| row.split_whitespace().nth(1) == Some("7")), "{table}");

    // A pod labelled specified-delete is replaced; the others are kept.
    let doomed = pods[0].name_any();
    kit.pods
        .patch(
            &doomed,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"apps.kruise.io/specified-delete": "true"}}})),
        )
        .await
        .unwrap();
    let kept = uids(&pods[1..]);
    let (_, pods) = kit
        .wait_for("web", "the labelled pod replaced", |set, pods| {
            settled(set, pods, 7) && !names(pods).contains(&doomed)
        })
        .await;
    assert!(kept.is_subset(&uids(&pods)), "only the labelled pod was deleted");

    // podsToDelete with one replica less removes exactly that pod.
    let doomed = pods[3].name_any();
    let kept: BTreeSet<String> =
        pods.iter().filter(|pod| pod.name_any() != doomed).filter_map(|pod| pod.uid()).collect();
    // The deletion costs for the scale-down after it are set first. The controller writes the
    // settled status below only once its pod watch showed the deletion, which comes after these
    // annotations on that watch, so the scale-down is decided knowing them. (Setting them right
    // before the scale-down raced the CloneSet event against the pod events.)
    let survivors: Vec<String> =
        pods.iter().map(ResourceExt::name_any).filter(|name| *name != doomed).collect();
    let cheap: BTreeSet<String> = [survivors[1].clone(), survivors[4].clone()].into();
    for (pod, cost) in
        pods.iter().map(|pod| (pod.name_any(), if cheap.contains(&pod.name_any()) { "-100" } else { "100" }))
    {
        kit.pods
            .patch(
                &pod,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"annotations": {"controller.kubernetes.io/pod-deletion-cost": cost}}})),
            )
            .await
            .unwrap();
    }
    kit.patch("web", json!({"spec": {"replicas": 6, "scaleStrategy": {"podsToDelete": [doomed]}}}))
        .await
        .unwrap();
    let (_, pods) = kit
        .wait_for("web", "podsToDelete honoured", |set, pods| {
            settled(set, pods, 6) && !names(pods).contains(&doomed)
        })
        .await;
    assert_eq!(uids(&pods), kept, "scale down by podsToDelete removed only the listed pod");

    // Scale down removes the pods with the lowest deletion cost first.
    kit.patch("web", json!({"spec": {"replicas": 4, "scaleStrategy": {"podsToDelete": null}}}))
        .await
        .unwrap();
    let (_, pods) = kit.wait_settled("web", 4).await;
    assert!(names(&pods).is_disjoint(&cheap), "the two cheapest pods were deleted: {:?}", names(&pods));

    let reasons = kit.event_reasons("CloneSet", "web").await;
    assert!(reasons.get("SuccessfulCreate").copied().unwrap_or(0) >= 6, "{reasons:?}");
    assert!(reasons.get("SuccessfulDelete").copied().unwrap_or(0) >= 2, "{reasons:?}");

    // An invalid CloneSet is refused with field paths, and nothing is created for it.
    let error = kit
        .create(cloneset(
            "bad",
            2,
            "nginx:1.25",
            json!({
                "selector": {"matchLabels": {"app": "other"}},
                "updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0, "partition": "abc"}}
            }),
        ))
        .await
        .expect_err("an invalid CloneSet must be refused");
    let kube::Error::Api(response) = &error else { panic!("unexpected error {error:?}") };
    assert!((400..500).contains(&response.code), "{response:?}");
    for path in [
        "spec.template.metadata.labels",
        "spec.updateStrategy.rollingUpdate.maxUnavailable",
        "spec.updateStrategy.rollingUpdate.partition",
    ] {
        assert!(response.message.contains(path), "the message names {path}: {}", response.message);
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(kit.sets.get_opt("bad").await.unwrap().is_none());
    let strays = kit.pods.list(&kube::api::ListParams::default().labels("app=other")).await.unwrap();
    assert!(strays.items.is_empty(), "no pod for a refused CloneSet");
    scene.observe("invalid/code", response.code);

    // Deletion protection: Always refuses; Cascading refuses while replicas > 0.
    kit.patch("web", json!({"metadata": {"labels": {"policy.kruise.io/delete-protection": "Always"}}}))
        .await
        .unwrap();
    let refused = kit.sets.delete("web", &DeleteParams::default()).await.expect_err("Always protects");
    let kube::Error::Api(response) = refused else { panic!("unexpected error") };
    assert_eq!(response.code, 403, "{response:?}");
    assert!(response.message.contains("delete-protection"), "{}", response.message);
    kit.patch("web", json!({"metadata": {"labels": {"policy.kruise.io/delete-protection": "Cascading"}}}))
        .await
        .unwrap();
    let refused =
        kit.sets.delete("web", &DeleteParams::default()).await.expect_err("Cascading with replicas");
    assert!(matches!(refused, kube::Error::Api(ref r) if r.code == 403), "{refused:?}");
    kit.patch("web", json!({"spec": {"replicas": 0}})).await.unwrap();
    kit.wait_settled("web", 0).await;
    kit.sets.delete("web", &DeleteParams::default()).await.expect("Cascading with 0 replicas may be deleted");
    scene.observe("deletion-protection", "Always and Cascading(replicas>0) refused with 403");

    kit.shutdown().await;
    Ok(())
}

/// In place keeps pods (UID, IP) and restarts the container once; rollback reuses the old
/// revision; InPlaceOnly refuses other changes; ReCreate replaces pods within maxSurge and
/// maxUnavailable; partition and pause stop the rollout where asked.
pub async fn update_strategies(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    let in_place = json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}}});

    // In-place image update.
    kit.create(cloneset("inplace", 4, "nginx:1.25", in_place.clone())).await.unwrap();
    let limits = kit.watch_limits("inplace");
    let (set, before) = kit.wait_settled("inplace", 4).await;
    let first_revision = set.status.unwrap().update_revision;
    let ips: BTreeMap<String, Option<String>> = before
        .iter()
        .map(|pod| (pod.uid().unwrap(), pod.status.as_ref().and_then(|s| s.pod_ip.clone())))
        .collect();
    limits.arm();
    kit.set_image("inplace", "nginx:1.26").await;
    let (set, after) = kit
        .wait_for("inplace", "all updated in place", |set, pods| {
            settled(set, pods, 4) && pods.iter().all(|pod| restarts_of(pod) == 1)
        })
        .await;
    assert_eq!(uids(&after), uids(&before), "in-place update keeps every pod");
    for pod in &after {
        assert_eq!(image_of(pod), "nginx:1.26");
        assert_eq!(restarts_of(pod), 1, "the container restarted once");
        assert_eq!(ips[&pod.uid().unwrap()], pod.status.as_ref().and_then(|s| s.pod_ip.clone()), "same IP");
        let conditions = pod.status.as_ref().unwrap().conditions.clone().unwrap();
        assert!(conditions.iter().any(|c| c.type_ == "InPlaceUpdateReady" && c.status == "True"));
        assert!(pod.annotations().contains_key("apps.kruise.io/inplace-update-state"));
    }
    let seen = limits.seen();
    assert!(seen.max_pods <= 4, "no pod created during an in-place update: {seen:?}");
    assert!(seen.min_ready.is_some_and(|ready| ready >= 3), "maxUnavailable 1 held: {seen:?}");
    let reasons = kit.event_reasons("CloneSet", "inplace").await;
    assert_eq!(reasons.get("SuccessfulUpdatePodInPlace").copied(), Some(4), "{reasons:?}");
    assert_eq!(set.status.as_ref().unwrap().current_revision, set.status.as_ref().unwrap().update_revision);
    scene.observe(
        "inplace",
        json!({"podsKept": 4, "restarts": 1, "events": reasons.get("SuccessfulUpdatePodInPlace")}),
    );

    // Rollback to the first template reuses the first revision.
    kit.set_image("inplace", "nginx:1.25").await;
    let (set, rolled) = kit
        .wait_for("inplace", "rolled back in place", |set, pods| {
            settled(set, pods, 4) && pods.iter().all(|pod| restarts_of(pod) == 2)
        })
        .await;
    assert_eq!(set.status.unwrap().update_revision, first_revision, "rollback reuses the old revision");
    assert_eq!(kit.revisions_of("inplace").await.len(), 2, "no third revision");
    assert_eq!(uids(&rolled), uids(&before));
    drop(limits);

    // InPlaceOnly: only images may change.
    kit.create(cloneset(
        "strict",
        2,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}}}),
    ))
    .await
    .unwrap();
    kit.wait_settled("strict", 2).await;
    let refused = kit
        .patch(
            "strict",
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "main", "image": "nginx:1.25", "env": [{"name": "A", "value": "1"}]}
            ]}}}}),
        )
        .await
        .expect_err("InPlaceOnly refuses a non-image change");
    let kube::Error::Api(response) = refused else { panic!("unexpected error") };
    assert!((400..500).contains(&response.code), "{response:?}");
    assert!(
        response.message.contains("only allowed to update images in spec for InPlaceOnly"),
        "{}",
        response.message
    );
    kit.set_image("strict", "nginx:1.26").await;
    kit.wait_for("strict", "image updated in place", |set, pods| {
        settled(set, pods, 2) && pods.iter().all(|pod| restarts_of(pod) == 1)
    })
    .await;
    scene.observe("inplaceonly/refused", response.code);

    // ReCreate with maxSurge 1 and maxUnavailable 0.
    kit.create(cloneset(
        "recreate",
        3,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "ReCreate", "maxSurge": 1, "maxUnavailable": 0}}}),
    ))
    .await
    .unwrap();
    let limits = kit.watch_limits("recreate");
    let (_, before) = kit.wait_settled("recreate", 3).await;
    limits.arm();
    kit.set_image("recreate", "nginx:1.26").await;
    let (_, after) = kit.wait_settled("recreate", 3).await;
    assert!(uids(&after).is_disjoint(&uids(&before)), "ReCreate replaces every pod");
    assert!(after.iter().all(|pod| image_of(pod) == "nginx:1.26" && restarts_of(pod) == 0));
    let seen = limits.seen();
    assert!(seen.max_pods <= 4, "maxSurge 1: never more than 4 active pods: {seen:?}");
    assert!(seen.min_ready.is_some_and(|ready| ready >= 3), "maxUnavailable 0: always 3 ready: {seen:?}");
    scene.observe("recreate", json!({"replaced": 3}));
    drop(limits);

    // Partition 3 of 5 updates exactly 2; "0%" finishes.
    kit.create(cloneset(
        "part",
        5,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "partition": 3, "maxUnavailable": "100%"}}}),
    ))
    .await
    .unwrap();
    kit.wait_settled("part", 5).await;
    kit.set_image("part", "nginx:1.26").await;
    let at_new = |set: &CloneSet, pods: &[Pod]| {
        let revision = set.status.as_ref().map(|s| s.update_revision.clone()).unwrap_or_default();
        pods.iter().filter(|pod| revision_of(pod) == Some(revision.as_str())).count()
    };
    kit.wait_for("part", "2 of 5 updated", |set, pods| {
        let status = set.status.as_ref().unwrap();
        status.observed_generation == set.metadata.generation.unwrap()
            && status.updated_replicas == 2
            && status.updated_ready_replicas == 2
            && at_new(set, pods) == 2
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let set = kit.sets.get("part").await.unwrap();
    let pods = kit.pods_of("part").await;
    assert_eq!(at_new(&set, &pods), 2, "partition 3 keeps 3 pods at the old revision");
    assert_eq!(set.status.as_ref().unwrap().expected_updated_replicas, 2);
    assert_ne!(set.status.as_ref().unwrap().current_revision, set.status.as_ref().unwrap().update_revision);
    assert_eq!(pods.iter().filter(|pod| image_of(pod) == "nginx:1.26").count(), 2);
    kit.patch("part", json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": "0%"}}}}))
        .await
        .unwrap();
    let (set, _) = kit.wait_settled("part", 5).await;
    assert_eq!(set.status.as_ref().unwrap().current_revision, set.status.as_ref().unwrap().update_revision);
    scene.observe("partition", json!({"updatedAt3of5": 2, "afterZeroPercent": 5}));

    // Paused stops a rollout mid-way (minReadySeconds slows each step down).
    kit.create(cloneset(
        "pause",
        4,
        "nginx:1.25",
        json!({"minReadySeconds": 3, "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "ReCreate", "maxUnavailable": 1}}}),
    ))
    .await
    .unwrap();
    kit.wait_for("pause", "4 available", |set, pods| {
        settled(set, pods, 4) && set.status.as_ref().is_some_and(|s| s.available_replicas == 4)
    })
    .await;
    kit.set_image("pause", "nginx:1.26").await;
    kit.wait_for("pause", "the rollout started", |set, _| {
        set.status.as_ref().is_some_and(|s| {
            s.observed_generation == set.metadata.generation.unwrap_or(0) && s.updated_replicas >= 1
        })
    })
    .await;
    kit.patch("pause", json!({"spec": {"updateStrategy": {"rollingUpdate": {"paused": true}}}}))
        .await
        .unwrap();
    let (set, _) = kit
        .wait_for("pause", "the pause observed", |set, _| {
            set.status.as_ref().is_some_and(|s| s.observed_generation == set.metadata.generation.unwrap())
        })
        .await;
    let updated_at_pause = set.status.unwrap().updated_replicas;
    tokio::time::sleep(Duration::from_secs(8)).await;
    let set = kit.sets.get("pause").await.unwrap();
    let status = set.status.unwrap();
    assert!(updated_at_pause < 4, "paused before the end ({updated_at_pause} updated)");
    assert!(
        status.updated_replicas <= updated_at_pause + 1,
        "paused: at most the pod already in flight finishes"
    );
    assert!(status.updated_replicas < 4, "paused stops mid-way: {status:?}");
    kit.patch("pause", json!({"spec": {"updateStrategy": {"rollingUpdate": {"paused": false}}}}))
        .await
        .unwrap();
    kit.wait_settled("pause", 4).await;
    scene.observe("paused", "stopped mid-way, finished after resume");

    kit.shutdown().await;
    Ok(())
}

/// The patch sequence of Kruise Rollout's partition-style release on a v1alpha1 CloneSet, with
/// the status fields it reads checked after every step.
pub async fn kruise_rollout_sequence(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    let alpha = v1alpha1_clonesets(kit.client.clone());
    let mut manifest = cloneset("ro", 5, "nginx:1.25", json!({}));
    manifest["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    manifest["spec"]["updateStrategy"] = json!({"type": "InPlaceIfPossible", "maxUnavailable": "100%"});
    kit.create(manifest).await.unwrap();
    let (set, _) = kit.wait_settled("ro", 5).await;
    let stable = set.status.unwrap().current_revision;
    let merge = |patch: Value| {
        let alpha = alpha.clone();
        async move { alpha.patch("ro", &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap() }
    };
    // What Kruise Rollout reads, after waiting for observedGeneration == generation.
    let read = |expect_updated: i32| {
        let kit = &kit;
        let stable = stable.clone();
        async move {
            let (set, pods) = kit
                .wait_for("ro", &format!("{expect_updated} updated and ready"), |set, pods| {
                    let status = set.status.as_ref().unwrap();
                    status.observed_generation == set.metadata.generation.unwrap()
                        && status.updated_replicas == expect_updated
                        && status.updated_ready_replicas == expect_updated
                        && status.ready_replicas == 5
                        && pods.len() == 5
                })
                .await;
            let status = set.status.clone().unwrap();
            let canary_hash = status.update_revision.rsplit('-').next().unwrap().to_string();
            let at_canary =
                pods.iter().filter(|pod| pod.labels().get("pod-template-hash") == Some(&canary_hash)).count();
            assert_eq!(
                at_canary as i32, expect_updated,
                "pod-template-hash labels agree with updatedReplicas"
            );
            for pod in &pods {
                let hash = &pod.labels()["pod-template-hash"];
                assert!(revision_of(pod).unwrap().ends_with(hash.as_str()));
            }
            json!({
                "updatedReplicas": status.updated_replicas,
                "updatedReadyReplicas": status.updated_ready_replicas,
                "expectedUpdatedReplicas": status.expected_updated_replicas,
                "currentIsStable": status.current_revision == stable,
                "updateIsCurrent": status.update_revision == status.current_revision,
                "observedGenerationMatches": status.observed_generation == set.metadata.generation.unwrap(),
            })
        }
    };

    // The webhook of Kruise Rollout sets partition 100% in the same update as the template change.
    merge(json!({
        "metadata": {"annotations": {"rollouts.kruise.io/in-progressing": "{\"rolloutName\":\"ro\"}"}},
        "spec": {
            "template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.26"}]}},
            "updateStrategy": {"partition": "100%", "paused": false}
        }
    }))
    .await;
    let step = read(0).await;
    assert_eq!(step["currentIsStable"], true);
    assert_eq!(step["updateIsCurrent"], false);
    assert_eq!(step["expectedUpdatedReplicas"], 0);
    scene.observe("rollout/1-initialized", &step);
    // A rollout id label on the pods must survive their in-place update.
    for pod in kit.pods_of("ro").await {
        kit.pods
            .patch(
                &pod.name_any(),
                &PatchParams::default(),
                &Patch::Strategic(json!({"metadata": {"labels": {"rollouts.kruise.io/rollout-id": "r1"}}})),
            )
            .await
            .unwrap();
    }

    // Batch 1: "90%" of 5 rounds up to 5, which is not "100%", so one pod is still updated.
    merge(json!({"spec": {"updateStrategy": {"partition": "90%"}}})).await;
    let step = read(1).await;
    assert_eq!(step["expectedUpdatedReplicas"], 1);
    assert_eq!(step["currentIsStable"], true);
    scene.observe("rollout/2-batch-90%", &step);

    // Batch 2: partition 3 (int).
    merge(json!({"spec": {"updateStrategy": {"partition": 3}}})).await;
    let step = read(2).await;
    scene.observe("rollout/3-batch-3", &step);

    // Paused with a lower partition: nothing moves.
    merge(json!({"spec": {"updateStrategy": {"paused": true, "partition": 0}}})).await;
    let step = read(2).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let again = read(2).await;
    assert_eq!(step, again, "a paused CloneSet does not update pods");
    scene.observe("rollout/4-paused", &step);

    // Resumed: all pods; then the release is finalized with partition null.
    merge(json!({"spec": {"updateStrategy": {"paused": false}}})).await;
    let step = read(5).await;
    scene.observe("rollout/5-resumed", &step);
    merge(json!({
        "metadata": {"annotations": {"rollouts.kruise.io/in-progressing": null}},
        "spec": {"updateStrategy": {"partition": null, "paused": false}}
    }))
    .await;
    let step = read(5).await;
    assert_eq!(step["updateIsCurrent"], true, "currentRevision follows once all pods are updated");
    scene.observe("rollout/6-finalized", &step);
    let pods = kit.pods_of("ro").await;
    assert!(
        pods.iter()
            .all(|pod| pod.labels().get("rollouts.kruise.io/rollout-id").map(String::as_str) == Some("r1"))
    );
    assert!(pods.iter().all(is_ready));
    let served = alpha.get("ro").await.unwrap();
    // Upstream defaulting turns a removed partition into 0.
    let partition = &served.data["spec"]["updateStrategy"]["partition"];
    assert!(partition.is_null() || *partition == json!(0), "{partition}");

    kit.shutdown().await;
    Ok(())
}

fn condition(set: &CloneSet, kind: &str) -> Option<(String, String)> {
    set.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == kind)
        .map(|c| (c.status.clone(), c.reason.clone()))
}

/// The value of one Prometheus sample line (`name{labels} value`).
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series).and_then(|rest| rest.trim().parse().ok()))
        .unwrap_or_else(|| panic!("no sample {series} in /metrics:\n{text}"))
}

/// The Progressing condition with a progress deadline (available, exceeded by pods that never
/// become ready, recovered by a rollback) and the manager's metrics after real work.
pub async fn progress_deadline_and_metrics(scene: Scene) -> Result<(), Skip> {
    let kit = Kit::start(&scene).await;
    kit.create(cloneset(
        "slow",
        2,
        "nginx:1.25",
        json!({
            "progressDeadlineSeconds": 5,
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "ReCreate", "maxUnavailable": 1}}
        }),
    ))
    .await
    .unwrap();
    let (set, _) = kit
        .wait_for("slow", "available", |set, pods| {
            settled(set, pods, 2)
                && condition(set, "Progressing").is_some_and(|(_, reason)| reason == "CloneSetAvailable")
        })
        .await;
    assert_eq!(condition(&set, "Progressing").unwrap().0, "True");

    // New pods that never become ready: the deadline passes.
    kit.patch(
        "slow",
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.25", "env": [{"name": "KRUISE_SIM_READY", "value": "false"}]}]}}}}),
    )
    .await
    .unwrap();
    let (set, _) = kit
        .wait_for("slow", "the progress deadline exceeded", |set, _| {
            condition(set, "Progressing").is_some_and(|(_, reason)| reason == "ProgressDeadlineExceeded")
        })
        .await;
    assert_eq!(condition(&set, "Progressing").unwrap().0, "False");
    let status = set.status.unwrap();
    assert!(
        status.updated_ready_replicas == 0 && status.ready_replicas >= 1,
        "maxUnavailable 1 kept one pod: {status:?}"
    );

    // Rolling back to the working template recovers.
    kit.patch(
        "slow",
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}}}),
    )
    .await
    .unwrap();
    kit.wait_for("slow", "available again", |set, pods| {
        settled(set, pods, 2)
            && condition(set, "Progressing") == Some(("True".into(), "CloneSetAvailable".into()))
    })
    .await;
    scene.observe("progressing", ["CloneSetAvailable", "ProgressDeadlineExceeded", "CloneSetAvailable"]);

    let metrics = kit.manager.as_ref().unwrap().metrics().await.unwrap();
    assert!(
        sample(&metrics, "kruise_controller_reconcile_total{controller=\"cloneset\",result=\"success\"}")
            >= 5.0
    );
    assert!(sample(&metrics, "kruise_pod_updates_total{controller=\"cloneset\",method=\"recreate\"}") >= 2.0);
    assert!(
        sample(&metrics, "kruise_controller_reconcile_duration_seconds_count{controller=\"cloneset\"}")
            >= 5.0
    );
    assert!(metrics.contains("kruise_controller_queue_depth{controller=\"cloneset\"}"), "{metrics}");
    assert!(
        metrics.contains("kruise_controller_expectation_timeouts_total{controller=\"cloneset\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains("kruise_controller_reconcile_errors_total{controller=\"cloneset\"}"),
        "{metrics}"
    );
    scene.observe("metrics", "reconciles, recreate updates, durations, queue depth, expectation timeouts");
    kit.shutdown().await;
    Ok(())
}
