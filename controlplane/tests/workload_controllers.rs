//! The embedded control plane's stand-ins for kube-controller-manager's Deployment and
//! ReplicaSet controllers and for a volume provisioner, driven through the Kubernetes API as a
//! user's kubectl would: a Deployment rolls out, scales and rolls to a new image through its
//! ReplicaSets; a claim of the simulated StorageClass is bound to a volume made for it, which
//! goes with the claim; a StatefulSet makes ordered pods with claims, rolls and scales.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    future::Future,
    time::{Duration, Instant},
};

use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    core::v1::{PersistentVolume, PersistentVolumeClaim, Pod},
    storage::v1::StorageClass,
};
use kruise_controlplane::{
    apiserver::{ApiServer, ApiServerConfig},
    controllers::volume_binder::SIMULATED_PROVISIONER,
    nodes::{Simulation, SimulationConfig},
};
use kube::{
    Api, Client, Config,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn images(pods: &[Pod]) -> Vec<String> {
    let mut images: Vec<String> = pods
        .iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .filter(|pod| pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .map(|pod| pod.spec.as_ref().unwrap().containers[0].image.clone().unwrap_or_default())
        .collect();
    images.sort();
    images
}

#[tokio::test]
async fn a_deployment_rolls_out_scales_and_updates_through_its_replica_sets() {
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    let simulation = Simulation::start(client.clone(), &SimulationConfig { nodes: 2, ..Default::default() })
        .await
        .unwrap();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}},
        }
    }))
    .unwrap();
    deployments.create(&PostParams::default(), &deployment).await.unwrap();
    let selector = ListParams::default().labels("app=web");

    let ready = |replicas: i32, image: &'static str| {
        let (deployments, pods, selector) = (deployments.clone(), pods.clone(), selector.clone());
        move || {
            let (deployments, pods, selector) = (deployments.clone(), pods.clone(), selector.clone());
            async move {
                let status = deployments.get("web").await.unwrap().status.unwrap_or_default();
                let running = images(&pods.list(&selector).await.unwrap().items);
                status.available_replicas == Some(replicas)
                    && status.updated_replicas == Some(replicas)
                    && status.replicas == Some(replicas)
                    && running == vec![image.to_string(); replicas as usize]
            }
        }
    };
    eventually("3 pods of nginx:1.25", ready(3, "nginx:1.25")).await;
    let first = replica_sets.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(first.len(), 1, "one ReplicaSet per template");
    let hash = first[0].metadata.labels.as_ref().unwrap()["pod-template-hash"].clone();
    assert_eq!(first[0].metadata.name.as_deref(), Some(format!("web-{hash}").as_str()));
    for pod in pods.list(&selector).await.unwrap() {
        assert_eq!(pod.metadata.labels.as_ref().unwrap()["pod-template-hash"], hash);
        let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.controller), ("ReplicaSet", Some(true)));
    }

    let scale = json!({"spec": {"replicas": 5}});
    deployments.patch("web", &PatchParams::default(), &Patch::Merge(&scale)).await.unwrap();
    eventually("5 pods", ready(5, "nginx:1.25")).await;

    let update =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}}});
    deployments.patch("web", &PatchParams::default(), &Patch::Strategic(&update)).await.unwrap();
    eventually("5 pods of nginx:1.27", ready(5, "nginx:1.27")).await;
    let all = replica_sets.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(all.len(), 2, "the old ReplicaSet is kept for rollback");
    let old = all.iter().find(|rs| rs.metadata.name.as_deref() == Some(&format!("web-{hash}"))).unwrap();
    assert_eq!(old.spec.as_ref().unwrap().replicas, Some(0));
    let conditions = deployments.get("web").await.unwrap().status.unwrap().conditions.unwrap();
    let progressing = conditions.iter().find(|c| c.type_ == "Progressing").unwrap();
    assert_eq!(progressing.reason.as_deref(), Some("NewReplicaSetAvailable"));
    simulation.stop().await;
}

#[tokio::test]
async fn a_claim_of_the_simulated_class_is_bound_and_its_volume_goes_with_it() {
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    let classes: Api<StorageClass> = Api::all(client.clone());
    for (name, provisioner) in [("standard", SIMULATED_PROVISIONER), ("elsewhere", "ebs.csi.aws.com")] {
        let class = json!({"metadata": {"name": name}, "provisioner": provisioner});
        classes.create(&PostParams::default(), &serde_json::from_value(class).unwrap()).await.unwrap();
    }
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    for (name, class) in [("data", "standard"), ("other", "elsewhere")] {
        let claim = json!({
            "metadata": {"name": name},
            "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "50Mi"}}},
        });
        claims.create(&PostParams::default(), &serde_json::from_value(claim).unwrap()).await.unwrap();
    }
    let phase = |claim: &PersistentVolumeClaim| claim.status.as_ref().and_then(|s| s.phase.clone());
    eventually("the claim bound", || async {
        phase(&claims.get("data").await.unwrap()).as_deref() == Some("Bound")
    })
    .await;
    let claim = claims.get("data").await.unwrap();
    let volume_name = claim.spec.as_ref().unwrap().volume_name.clone().expect("the claim names its volume");
    let volume = volumes.get(&volume_name).await.unwrap();
    let spec = volume.spec.as_ref().unwrap();
    assert_eq!(spec.capacity.as_ref().unwrap()["storage"].0, "50Mi");
    assert_eq!(spec.claim_ref.as_ref().unwrap().uid, claim.metadata.uid);
    assert_eq!(volume.status.as_ref().unwrap().phase.as_deref(), Some("Bound"));
    // A class of another provisioner is not ours to serve: its claim waits, as on a cluster
    // without that provisioner.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(phase(&claims.get("other").await.unwrap()).as_deref(), Some("Pending"));

    claims.delete("data", &DeleteParams::default()).await.unwrap();
    eventually("the volume deleted with its claim", || async {
        volumes.get_opt(&volume_name).await.unwrap().is_none()
    })
    .await;
}

#[tokio::test]
async fn claims_grow_only_on_a_class_that_allows_it_and_unnamed_ones_get_the_default_class() {
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    let classes: Api<StorageClass> = Api::all(client.clone());
    for (name, allow, default) in [("grows", true, true), ("fixed", false, false)] {
        let mut class = json!({"metadata": {"name": name}, "provisioner": SIMULATED_PROVISIONER,
                               "allowVolumeExpansion": allow});
        if default {
            class["metadata"]["annotations"] = json!({"storageclass.kubernetes.io/is-default-class": "true"});
        }
        classes.create(&PostParams::default(), &serde_json::from_value(class).unwrap()).await.unwrap();
    }
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    for (name, class) in [("unnamed", None), ("fixed", Some("fixed"))] {
        let mut claim = json!({
            "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        });
        if let Some(class) = class {
            claim["spec"]["storageClassName"] = json!(class);
        }
        claims.create(&PostParams::default(), &serde_json::from_value(claim).unwrap()).await.unwrap();
    }
    let unnamed = claims.get("unnamed").await.unwrap();
    assert_eq!(
        unnamed.spec.as_ref().unwrap().storage_class_name.as_deref(),
        Some("grows"),
        "the default class"
    );
    let capacity = |claim: &PersistentVolumeClaim| {
        claim.status.as_ref().and_then(|s| s.capacity.as_ref()).map(|c| c["storage"].0.clone())
    };
    for name in ["unnamed", "fixed"] {
        eventually("both claims bound", || async {
            capacity(&claims.get(name).await.unwrap()).as_deref() == Some("1Gi")
        })
        .await;
    }
    let grow = Patch::Merge(json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}}));
    claims.patch("unnamed", &PatchParams::default(), &grow).await.unwrap();
    eventually("the claim grown", || async {
        capacity(&claims.get("unnamed").await.unwrap()).as_deref() == Some("2Gi")
    })
    .await;
    let claim = claims.get("unnamed").await.unwrap();
    let volume = volumes.get(claim.spec.as_ref().unwrap().volume_name.as_deref().unwrap()).await.unwrap();
    assert_eq!(volume.spec.unwrap().capacity.unwrap()["storage"].0, "2Gi", "the volume grew with it");

    // kube-apiserver's PersistentVolumeClaimResize admission: the class does not allow it.
    let refused = claims.patch("fixed", &PatchParams::default(), &grow).await.unwrap_err();
    let kube::Error::Api(status) = refused else { panic!("an API error: {refused:?}") };
    assert_eq!(status.code, 403);
    assert!(
        status.message.contains("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"),
        "{}",
        status.message
    );
    // Shrinking below the capacity is refused by validation.
    let shrink = Patch::Merge(json!({"spec": {"resources": {"requests": {"storage": "1Gi"}}}}));
    let refused = claims.patch("unnamed", &PatchParams::default(), &shrink).await.unwrap_err();
    let kube::Error::Api(status) = refused else { panic!("an API error: {refused:?}") };
    assert_eq!(status.code, 422);
    assert!(
        status.message.contains(
            "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"
        ),
        "{}",
        status.message
    );
    assert_eq!(capacity(&claims.get("fixed").await.unwrap()).as_deref(), Some("1Gi"), "nothing changed");
}

#[tokio::test]
async fn a_statefulset_makes_ordered_pods_with_claims_rolls_from_the_top_and_scales_down_from_the_top() {
    use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
    let server = ApiServer::start(ApiServerConfig::default()).await.expect("server starts");
    let client = Client::try_from(Config::new(server.url.parse().unwrap())).unwrap();
    let simulation = Simulation::start(client.clone(), &SimulationConfig { nodes: 2, ..Default::default() })
        .await
        .unwrap();
    let class = json!({"metadata": {"name": "standard"}, "provisioner": SIMULATED_PROVISIONER});
    Api::<StorageClass>::all(client.clone())
        .create(&PostParams::default(), &serde_json::from_value(class).unwrap())
        .await
        .unwrap();
    let sets: Api<StatefulSet> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let revisions: Api<ControllerRevision> = Api::namespaced(client.clone(), "default");
    let set: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                         "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"storageClassName": "standard", "accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": "10Mi"}}}}],
        }
    }))
    .unwrap();
    sets.create(&PostParams::default(), &set).await.unwrap();
    let selector = ListParams::default().labels("app=db");

    // OrderedReady: a pod is made only once the lower ordinals are Ready, so creation times
    // follow the ordinals.
    let ready = |replicas: i32, image: &'static str| {
        let (sets, pods, selector) = (sets.clone(), pods.clone(), selector.clone());
        move || {
            let (sets, pods, selector) = (sets.clone(), pods.clone(), selector.clone());
            async move {
                let set = sets.get("db").await.unwrap();
                let status = set.status.unwrap_or_default();
                let running = images(&pods.list(&selector).await.unwrap().items);
                status.observed_generation == set.metadata.generation
                    && status.ready_replicas == Some(replicas)
                    && status.updated_replicas == Some(replicas)
                    && status.replicas == replicas
                    && status.current_revision == status.update_revision
                    && running == vec![image.to_string(); replicas as usize]
            }
        }
    };
    eventually("3 ready pods", ready(3, "nginx:1.25")).await;
    let first_revision = sets.get("db").await.unwrap().status.unwrap().update_revision.unwrap();
    for ordinal in 0..3 {
        let name = format!("db-{ordinal}");
        let pod = pods.get(&name).await.unwrap();
        let labels = pod.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["controller-revision-hash"], first_revision);
        assert_eq!(labels["statefulset.kubernetes.io/pod-name"], name);
        assert_eq!(labels["apps.kubernetes.io/pod-index"], ordinal.to_string());
        let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str(), owner.controller),
            ("StatefulSet", "db", Some(true))
        );
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(spec.hostname.as_deref(), Some(name.as_str()));
        let volume = spec.volumes.as_ref().unwrap().iter().find(|v| v.name == "data").unwrap();
        assert_eq!(volume.persistent_volume_claim.as_ref().unwrap().claim_name, format!("data-db-{ordinal}"));
        assert!(claims.get_opt(&format!("data-db-{ordinal}")).await.unwrap().is_some());
    }
    let created = |name: &str| {
        let pods = pods.clone();
        let name = name.to_string();
        async move { pods.get(&name).await.unwrap().metadata.creation_timestamp.unwrap().0 }
    };
    assert!(created("db-0").await <= created("db-1").await);
    assert!(created("db-1").await <= created("db-2").await);

    // A new image rolls pod by pod, highest ordinal first, to a second revision.
    let update =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}}});
    sets.patch("db", &PatchParams::default(), &Patch::Strategic(&update)).await.unwrap();
    eventually("3 pods of nginx:1.27", ready(3, "nginx:1.27")).await;
    assert!(created("db-2").await <= created("db-1").await, "db-2 was replaced before db-1");
    assert!(created("db-1").await <= created("db-0").await, "db-1 was replaced before db-0");
    let status = sets.get("db").await.unwrap().status.unwrap();
    assert_ne!(status.update_revision.as_deref(), Some(first_revision.as_str()));
    assert_eq!(revisions.list(&ListParams::default()).await.unwrap().items.len(), 2);

    // Scaling down removes the highest ordinals; their claims stay (Retain).
    sets.patch("db", &PatchParams::default(), &Patch::Merge(&json!({"spec": {"replicas": 1}})))
        .await
        .unwrap();
    eventually("1 pod", ready(1, "nginx:1.27")).await;
    eventually("only db-0 left", || async {
        let names: Vec<String> =
            pods.list(&selector).await.unwrap().items.into_iter().map(|p| p.metadata.name.unwrap()).collect();
        names == ["db-0"]
    })
    .await;
    assert!(claims.get_opt("data-db-2").await.unwrap().is_some());
    sets.patch("db", &PatchParams::default(), &Patch::Merge(&json!({"spec": {"replicas": 3}})))
        .await
        .unwrap();
    eventually("3 pods again", ready(3, "nginx:1.27")).await;
    simulation.stop().await;
}
