//! Image pre-download for in-place updates (gate `PreDownloadImageForInPlaceUpdate`), as a user
//! sees it: while an in-place rollout is held by its partition, an ImagePullJob named
//! `<updateRevision>-<container>` owned by the CloneSet pre-pulls the new image on the pods still
//! at the old revision and the revision is labelled `apps.kruise.io/pre-predownload-created`; a
//! ReCreate CloneSet gets `apps.kruise.io/image-predownload-ignored` and no job; once the rollout
//! converges the job is deleted.

use std::time::{Duration, Instant};

use kruise_crds::apps::v1beta1::ImagePullJob;
use kruise_integration::{Scene, Skip, manager::ManagerSpec};
use kube::{Api, ResourceExt};
use serde_json::json;

use crate::cloneset_kit::{Kit, SETTLE, cloneset, image_of};

const CREATED: &str = "apps.kruise.io/pre-predownload-created";
const IGNORED: &str = "apps.kruise.io/image-predownload-ignored";

/// The update revision's labels once it carries `label`.
async fn revision_labelled(
    kit: &Kit,
    name: &str,
    label: &str,
) -> (String, std::collections::BTreeMap<String, String>) {
    let deadline = Instant::now() + SETTLE;
    loop {
        let set = kit.sets.get(name).await.unwrap();
        let update = set.status.as_ref().map(|s| s.update_revision.clone()).unwrap_or_default();
        if let Some(revision) = kit.revisions_of(name).await.into_iter().find(|r| r.name_any() == update)
            && revision.labels().contains_key(label)
        {
            return (update, revision.labels().clone());
        }
        assert!(Instant::now() < deadline, "revision {update} of {name} never got {label}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub async fn image_pre_download(scene: Scene) -> Result<(), Skip> {
    let gates = "ImagePullJobGate=true,PreDownloadImageForInPlaceUpdate=true";
    let kit = Kit::start_with(&scene, Some(ManagerSpec::in_process().with_feature_gates(gates))).await;
    let jobs: Api<ImagePullJob> = Api::namespaced(kit.client.clone(), "default");
    kit.create(cloneset(
        "pre",
        5,
        "nginx:1.25",
        json!({
            "updateStrategy": {"rollingUpdate": {
                "podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1, "partition": 3,
                "inPlaceUpdateStrategy": {"imagePreDownloadParallelism": 2, "imagePreDownloadTimeoutSeconds": 120}
            }}
        }),
    ))
    .await
    .unwrap();
    kit.create(cloneset(
        "plain",
        5,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "ReCreate", "maxUnavailable": 1}}}),
    ))
    .await
    .unwrap();
    kit.wait_settled("pre", 5).await;
    kit.wait_settled("plain", 5).await;

    kit.set_image("pre", "nginx:1.26").await;
    kit.set_image("plain", "nginx:1.26").await;
    let (update, labels) = revision_labelled(&kit, "pre", CREATED).await;
    assert!(!labels.contains_key(IGNORED));
    let job_name = format!("{update}-main");
    let job = jobs.get(&job_name).await.unwrap_or_else(|e| panic!("ImagePullJob {job_name}: {e}"));
    let owner = job.owner_references().first().cloned().expect("owned");
    assert_eq!((owner.kind.as_str(), owner.name.as_str(), owner.controller), ("CloneSet", "pre", Some(true)));
    let spec = serde_json::to_value(&job.spec).unwrap();
    assert_eq!(spec["image"], "nginx:1.26");
    assert_eq!(spec["parallelism"], 2);
    assert_eq!(spec["pullPolicy"]["timeoutSeconds"], 120);
    assert_eq!(spec["pullPolicy"]["backoffLimit"], 1);
    assert_eq!(spec["completionPolicy"]["type"], "Always");
    let not_in = &spec["podSelector"]["matchExpressions"][0];
    assert_eq!(
        (not_in["key"].as_str(), not_in["operator"].as_str()),
        (Some("controller-revision-hash"), Some("NotIn"))
    );
    assert!(not_in["values"].as_array().unwrap().iter().any(|v| v == update.as_str()), "{not_in}");
    scene.observe("job", json!({"image": spec["image"], "parallelism": spec["parallelism"], "selectorOperator": not_in["operator"]}));

    // The ReCreate CloneSet's revision is ignored and gets no job.
    let (plain_update, _) = revision_labelled(&kit, "plain", IGNORED).await;
    assert!(
        jobs.get_opt(&format!("{plain_update}-main")).await.unwrap().is_none(),
        "no job for a ReCreate rollout"
    );
    scene.observe("recreate", "ignored, no job");

    // Finishing the rollout removes the job.
    kit.patch("pre", json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": null}}}}))
        .await
        .unwrap();
    let (_, pods) = kit.wait_settled("pre", 5).await;
    assert!(pods.iter().all(|pod| image_of(pod) == "nginx:1.26"));
    let deadline = Instant::now() + SETTLE;
    while jobs.get_opt(&job_name).await.unwrap().is_some_and(|job| job.metadata.deletion_timestamp.is_none())
    {
        assert!(Instant::now() < deadline, "the pre-download job outlived the rollout");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    scene.observe("after rollout", "job deleted");
    kit.shutdown().await;
    Ok(())
}
