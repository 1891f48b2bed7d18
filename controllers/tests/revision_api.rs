//! Revisions through the API: created with the bytes upstream writes (so the data upstream reads
//! back is byte-equal to its own `getPatch`), read back equal to what we computed, and renumbered
//! on a rollback without rewriting their data.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use k8s_openapi::api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec};
use kruise_controllers::{
    cloneset::revision::{VCT_HASH_ANNOTATION, new_revision},
    workload::revision::{create_revision, renumber_revision},
};
use kruise_controlplane::apiserver::{ApiServer, ApiServerConfig};
use kruise_crds::{
    apps::v1beta1::{CloneSet, CloneSetSpec},
    defaults::default_cloneset_v1beta1,
};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

#[tokio::test]
async fn revisions_are_created_as_computed_and_renumbered_in_place() {
    let apiserver = ApiServer::start(ApiServerConfig::default()).await.unwrap();
    let client = Client::try_from(kube::Config::new(apiserver.url.parse().unwrap())).unwrap();
    let api: Api<ControllerRevision> = Api::namespaced(client, "default");

    let template: PodTemplateSpec = serde_json::from_value(json!({
        "metadata": {"labels": {"app": "web"}, "annotations": {"note": "<b> & co"}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25",
                                  "resources": {"requests": {"cpu": "0.5", "memory": "1024Mi"}}}]}
    }))
    .unwrap();
    let mut cs = CloneSet::new("web", CloneSetSpec { template, ..Default::default() });
    cs.metadata.namespace = Some("default".into());
    cs.metadata.uid = Some("5f0b6c1e-0000-4000-8000-000000000001".into());
    default_cloneset_v1beta1(&mut cs, true);
    let revision = new_revision(&cs, 1, Some(0));

    let created = create_revision(&api, &revision).await.unwrap();
    assert_eq!(created.name_any(), revision.name_any());
    assert_eq!(created.data, revision.data, "read back through kube-rs, the data is what we computed");
    assert_eq!(created.labels(), revision.labels());

    let renumbered =
        renumber_revision(&api, &created, 5, &[("note".to_string(), "x".to_string())].into()).await.unwrap();
    assert_eq!(renumbered.revision, 5);
    assert_eq!(renumbered.data, revision.data);
    assert_eq!(renumbered.annotations()["note"], "x");
    assert_eq!(renumbered.annotations().get(VCT_HASH_ANNOTATION).map(String::as_str), Some(""));
    let stale = renumber_revision(&api, &created, 6, &Default::default()).await;
    assert!(matches!(stale, Err(kube::Error::Api(ref status)) if status.code == 409), "{stale:?}");
    assert_eq!(api.get(&revision.name_any()).await.unwrap().revision, 5);

    apiserver.shutdown().await;
}
