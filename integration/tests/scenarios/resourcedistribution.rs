//! ResourceDistribution end to end, on both tiers, with the manager's controller and webhook
//! (gate `ResourceDistributionGate` on): a Secret is copied into the three namespaces labelled
//! for it, with the distribution as controller owner and the source and hash annotations; a
//! fourth labelled namespace that already holds a Secret of that name keeps it and is reported
//! under `ConflictOccurred`; a change of the resource reaches every copy; a copy edited or
//! deleted by hand is put back; a namespace that loses the label loses its copy and a new
//! labelled namespace gets one. Invalid distributions (unsupported kind, ambiguous or invalid
//! namespace names, a resource without a name, a renamed resource) are refused with a 422 naming
//! the fields at fault, and nothing is stored.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use k8s_openapi::{
    ByteString,
    api::core::v1::{Namespace, Secret},
};
use kruise_crds::apps::v1beta1::ResourceDistribution;
use kruise_integration::{Scene, Skip, manager::ManagerSpec};
use kube::{
    Api, ResourceExt,
    api::{
        ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
        PostParams,
    },
};
use serde_json::{Value, json};

use crate::cloneset_kit::{Kit, start_manager};

/// How long the controller may take to reach a state.
const SETTLE: Duration = Duration::from_secs(60);
/// The scenario gates plus the distribution controller and webhook.
const GATES: &str = "ImagePullJobGate=true,SidecarTerminator=true,ResourceDistributionGate=true";
const HASH: &str = "kruise.io/resourcedistribution.resource.hashcode";
const FROM: &str = "kruise.io/resourcedistribution.resource.from";
const SECRET: &str = "shared-creds";

struct RdKit {
    kit: Kit,
    distributions: Api<ResourceDistribution>,
    namespaces: Api<Namespace>,
}

fn dynamic_api(kit: &Kit, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apps.kruise.io", version, "ResourceDistribution");
    Api::all_with(kit.client.clone(), &ApiResource::from_gvk_with_plural(&gvk, "resourcedistributions"))
}

impl RdKit {
    async fn start(scene: &Scene) -> Self {
        let mut kit = Kit::start_with(scene, None).await;
        let distributions: Api<ResourceDistribution> = Api::all(kit.client.clone());
        let deadline = Instant::now() + Duration::from_secs(30);
        while distributions.list(&ListParams::default().limit(1)).await.is_err() {
            assert!(Instant::now() < deadline, "ResourceDistributions are not served 30 s after the CRD");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        kit.manager = Some(start_manager(scene, ManagerSpec::in_process().with_feature_gates(GATES)).await);
        let namespaces = Api::all(kit.client.clone());
        Self { kit, distributions, namespaces }
    }

    async fn namespace(&self, name: &str, labels: Value) {
        let namespace: Namespace =
            serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap();
        self.namespaces.create(&PostParams::default(), &namespace).await.unwrap();
    }

    fn secrets(&self, namespace: &str) -> Api<Secret> {
        Api::namespaced(self.kit.client.clone(), namespace)
    }

    async fn secret(&self, namespace: &str) -> Option<Secret> {
        self.secrets(namespace).get_opt(SECRET).await.unwrap()
    }

    /// Waits until `check` holds for the distribution and the copies in `namespaces`.
    async fn wait_for(
        &self,
        what: &str,
        namespaces: &[&str],
        check: impl Fn(&ResourceDistribution, &BTreeMap<String, Option<Secret>>) -> bool,
    ) -> (ResourceDistribution, BTreeMap<String, Option<Secret>>) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let rd = self.distributions.get("shared").await.unwrap();
            let mut copies = BTreeMap::new();
            for namespace in namespaces {
                copies.insert((*namespace).to_string(), self.secret(namespace).await);
            }
            if check(&rd, &copies) {
                return (rd, copies);
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for: {what}\nstatus: {}\ncopies: {:#?}",
                serde_json::to_string_pretty(&rd.status).unwrap(),
                copies
                    .iter()
                    .map(|(ns, s)| (ns, s.as_ref().map(|s| (s.data.clone(), s.annotations().clone()))))
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

fn data(value: &str) -> BTreeMap<String, ByteString> {
    [("password".to_string(), ByteString(value.as_bytes().to_vec()))].into()
}

/// Whether the copy holds `password` and is this distribution's.
fn is_copy(secret: Option<&Secret>, rd: &ResourceDistribution, password: &str) -> bool {
    let Some(secret) = secret else { return false };
    let owned = secret.owner_references().iter().any(|o| {
        o.controller == Some(true) && o.kind == "ResourceDistribution" && Some(&o.uid) == rd.uid().as_ref()
    });
    owned
        && secret.data.as_ref() == Some(&data(password))
        && secret.annotations().get(FROM).map(String::as_str) == Some("shared")
        && secret.annotations().get(HASH).is_some_and(|hash| hash.len() == 64)
}

fn condition_namespaces(rd: &ResourceDistribution, type_: &str) -> Option<(String, Vec<String>)> {
    let conditions = &rd.status.as_ref()?.conditions;
    let condition = conditions.iter().find(|c| c.type_.as_str() == type_)?;
    Some((condition.status.clone(), condition.failed_namespaces.clone()))
}

pub async fn distributes_a_secret_to_labelled_namespaces(scene: Scene) -> Result<(), Skip> {
    let kit = RdKit::start(&scene).await;
    for name in ["rd-team-a", "rd-team-b", "rd-team-c", "rd-team-d"] {
        kit.namespace(name, json!({"rd-team": "yes"})).await;
    }
    kit.namespace("rd-other", json!({})).await;
    // rd-team-d already holds a Secret of that name that is nobody's copy.
    let foreign: Secret = serde_json::from_value(json!({
        "metadata": {"name": SECRET, "namespace": "rd-team-d"}, "stringData": {"password": "mine"}
    }))
    .unwrap();
    kit.secrets("rd-team-d").create(&PostParams::default(), &foreign).await.unwrap();

    let rd: ResourceDistribution = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ResourceDistribution",
        "metadata": {"name": "shared"},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET},
                         "type": "Opaque", "data": {"password": "b25l"}},
            "targets": {"namespaceSelector": {"matchLabels": {"rd-team": "yes"}}}
        }
    }))
    .unwrap();
    kit.distributions.create(&PostParams::default(), &rd).await.unwrap();

    let all = ["rd-team-a", "rd-team-b", "rd-team-c", "rd-team-d", "rd-other"];
    let (rd, copies) = kit
        .wait_for("copies in the three free labelled namespaces and the status", &all, |rd, copies| {
            ["rd-team-a", "rd-team-b", "rd-team-c"].iter().all(|ns| is_copy(copies[*ns].as_ref(), rd, "one"))
                && rd.status.as_ref().is_some_and(|s| s.desired == 4 && s.succeeded == 3 && s.failed == 1)
        })
        .await;
    let status = rd.status.clone().unwrap();
    assert_eq!(status.observed_generation, rd.metadata.generation.unwrap());
    assert_eq!(status.conditions.len(), 6, "{status:#?}");
    assert_eq!(
        condition_namespaces(&rd, "ConflictOccurred"),
        Some(("True".into(), vec!["rd-team-d".into()])),
        "the namespace holding a foreign Secret is reported"
    );
    for type_ in ["GetResourceFailed", "CreateResourceFailed", "UpdateResourceFailed", "DeleteResourceFailed"]
    {
        assert_eq!(condition_namespaces(&rd, type_), Some(("False".into(), vec![])), "{type_}");
    }
    let foreign = copies["rd-team-d"].as_ref().unwrap();
    assert_eq!(foreign.data.as_ref(), Some(&data("mine")), "the foreign Secret is left alone");
    assert!(foreign.owner_references().is_empty());
    assert!(copies["rd-other"].is_none(), "an unlabelled namespace gets no copy");
    let first_hash = copies["rd-team-a"].as_ref().unwrap().annotations()[HASH].clone();
    assert!(
        ["rd-team-b", "rd-team-c"]
            .iter()
            .all(|ns| copies[*ns].as_ref().unwrap().annotations()[HASH] == first_hash),
        "every copy carries the same hash"
    );

    // A change of the resource reaches every copy.
    let change = json!({"spec": {"resource": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET},
                                              "type": "Opaque", "data": {"password": "dHdv"}}}});
    kit.distributions.patch("shared", &PatchParams::default(), &Patch::Merge(&change)).await.unwrap();
    let teams = ["rd-team-a", "rd-team-b", "rd-team-c"];
    let (_, copies) = kit
        .wait_for("the changed resource in every copy", &teams, |rd, copies| {
            teams.iter().all(|ns| is_copy(copies[*ns].as_ref(), rd, "two"))
        })
        .await;
    let second_hash = copies["rd-team-a"].as_ref().unwrap().annotations()[HASH].clone();
    assert_ne!(second_hash, first_hash, "the hash follows the resource");

    // A copy edited by hand is put back; one deleted by hand comes back.
    let tamper = json!({"data": {"password": "aGFja2Vk", "extra": "eWVz"}});
    kit.secrets("rd-team-a").patch(SECRET, &PatchParams::default(), &Patch::Merge(&tamper)).await.unwrap();
    kit.secrets("rd-team-b").delete(SECRET, &DeleteParams::default()).await.unwrap();
    kit.wait_for("the edited and deleted copies restored", &teams, |rd, copies| {
        teams.iter().all(|ns| is_copy(copies[*ns].as_ref(), rd, "two"))
    })
    .await;

    // A namespace that loses the label loses its copy; a new labelled namespace gets one.
    let unlabel = json!({"metadata": {"labels": {"rd-team": null}}});
    kit.namespaces.patch("rd-team-c", &PatchParams::default(), &Patch::Merge(&unlabel)).await.unwrap();
    kit.namespace("rd-team-e", json!({"rd-team": "yes"})).await;
    let watched = ["rd-team-a", "rd-team-b", "rd-team-c", "rd-team-d", "rd-team-e"];
    let (rd, copies) = kit
        .wait_for("the copy gone from rd-team-c and made in rd-team-e", &watched, |rd, copies| {
            copies["rd-team-c"].is_none()
                && is_copy(copies["rd-team-e"].as_ref(), rd, "two")
                && rd.status.as_ref().is_some_and(|s| s.desired == 4 && s.succeeded == 3)
        })
        .await;
    assert!(is_copy(copies["rd-team-a"].as_ref(), &rd, "two"));
    assert_eq!(copies["rd-team-d"].as_ref().unwrap().data.as_ref(), Some(&data("mine")));

    kit.kit.shutdown().await;
    Ok(())
}

/// Creates `manifest`, which must be refused with a 422 naming every one of `fields`.
async fn refused(api: &Api<DynamicObject>, manifest: Value, fields: &[&str]) {
    crate::cloneset_kit::refused_naming(api, manifest, fields).await;
}

fn distribution(version: &str, name: &str, resource: Value, targets: Value) -> Value {
    json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "ResourceDistribution",
        "metadata": {"name": name},
        "spec": {"resource": resource, "targets": targets}
    })
}

pub async fn invalid_distributions_are_refused_with_field_paths(scene: Scene) -> Result<(), Skip> {
    let kit = RdKit::start(&scene).await;
    let beta = dynamic_api(&kit.kit, "v1beta1");
    let alpha = dynamic_api(&kit.kit, "v1alpha1");
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET},
                        "data": {"password": "b25l"}});
    let listed = json!({"includedNamespaces": {"list": [{"name": "default"}]}});

    refused(
        &beta,
        distribution(
            "v1beta1",
            "wrong-kind",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}),
            listed.clone(),
        ),
        &["spec.resource.kind", "spec.resource.apiVersion"],
    )
    .await;
    refused(
        &beta,
        distribution(
            "v1beta1",
            "ambiguous",
            secret.clone(),
            json!({"includedNamespaces": {"list": [{"name": "team-a"}, {"name": "Not_A_Namespace"}]},
                   "excludedNamespaces": {"list": [{"name": "team-a"}]}}),
        ),
        &["spec.targets.excludedNamespaces.list[0].name", "spec.targets.includedNamespaces.list[1].name"],
    )
    .await;
    refused(
        &alpha,
        distribution(
            "v1alpha1",
            "nameless",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}, "data": {"bad key!": "x"}}),
            listed.clone(),
        ),
        &["spec.resource.metadata.name", "spec.resource.data[bad key!]"],
    )
    .await;

    // The distributed resource's identity cannot change.
    let stored: DynamicObject =
        serde_json::from_value(distribution("v1beta1", "renamed", secret.clone(), listed.clone())).unwrap();
    beta.create(&PostParams::default(), &stored).await.unwrap();
    let rename = json!({"spec": {"resource": {"metadata": {"name": "other-name"}}}});
    match beta.patch("renamed", &PatchParams::default(), &Patch::Merge(&rename)).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            let named: Vec<String> =
                status.details.iter().flat_map(|d| d.causes.iter()).map(|c| c.field.clone()).collect();
            assert!(named.iter().any(|f| f == "spec.resource"), "{named:?}: {}", status.message);
        }
        other => panic!("renaming the resource was not refused: {other:?}"),
    }
    let kept = kit.distributions.get("renamed").await.unwrap();
    assert_eq!(kept.spec.resource["metadata"]["name"], SECRET);

    kit.kit.shutdown().await;
    Ok(())
}
