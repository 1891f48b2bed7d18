//! `kruise crds` output is accepted by the API server: every CRD applied with server-side apply
//! without a warning, then `Established` and `NamesAccepted`, never `NonStructuralSchema`, and
//! served in discovery with its kinds, short names, verbs and subresources.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kruise_integration::{Scene, Skip};
use kube::Api;
use serde_json::json;

/// How many kinds Kruise defines.
const KRUISE_KINDS: usize = 18;

pub async fn kruise_crds_are_accepted(scene: Scene) -> Result<(), Skip> {
    let cluster = scene.cluster();
    let applied = cluster.install_crds().await.expect("the CRDs apply");
    assert_eq!(applied.len(), KRUISE_KINDS);
    let warned: Vec<_> = applied.iter().filter(|crd| !crd.warnings.is_empty()).collect();
    assert!(warned.is_empty(), "warnings while applying the CRDs: {warned:#?}");
    scene.observe(
        "apply",
        applied
            .iter()
            .map(|crd| (crd.name.clone(), json!({"status": crd.status, "warnings": crd.warnings})))
            .collect::<BTreeMap<_, _>>(),
    );

    let api: Api<CustomResourceDefinition> = Api::all(cluster.client());
    let mut served: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for crd in &applied {
        let current = api.get(&crd.name).await.unwrap();
        let status = current.status.clone().expect("a CRD status");
        let conditions = status.conditions.clone().unwrap_or_default();
        let condition = |type_: &str| conditions.iter().find(|c| c.type_ == type_).map(|c| c.status.clone());
        assert_eq!(condition("Established").as_deref(), Some("True"), "{}: {conditions:?}", crd.name);
        assert_eq!(condition("NamesAccepted").as_deref(), Some("True"), "{}: {conditions:?}", crd.name);
        assert_eq!(condition("NonStructuralSchema"), None, "{}: {conditions:?}", crd.name);
        let mut summary: Vec<String> = conditions
            .iter()
            .map(|c| format!("{}={} ({})", c.type_, c.status, c.reason.clone().unwrap_or_default()))
            .collect();
        summary.sort();
        scene.observe(format!("crd/{}/conditions", crd.name), summary);
        scene.observe(format!("crd/{}/acceptedNames", crd.name), &status.accepted_names);
        scene.observe(format!("crd/{}/storedVersions", crd.name), &status.stored_versions);
        for version in current.spec.versions.iter().filter(|version| version.served) {
            served
                .entry(format!("{}/{}", current.spec.group, version.name))
                .or_default()
                .insert(current.spec.names.plural.clone());
        }
    }

    // Discovery serves every version of every CRD; kube-apiserver may need a moment after
    // Established before a new resource shows up there.
    let client = cluster.client();
    for (group_version, plurals) in &served {
        let mut attempts = 0;
        let list = loop {
            let list = client.list_api_group_resources(group_version).await;
            if let Ok(found) = &list
                && plurals.iter().all(|plural| found.resources.iter().any(|r| &r.name == plural))
            {
                break list.unwrap();
            }
            attempts += 1;
            assert!(attempts < 150, "{group_version} does not list {plurals:?}: {list:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let mut resources: Vec<_> = list
            .resources
            .iter()
            .map(|resource| {
                let mut verbs = resource.verbs.clone();
                verbs.sort();
                json!({
                    "name": resource.name,
                    "kind": resource.kind,
                    "group": resource.group,
                    "version": resource.version,
                    "namespaced": resource.namespaced,
                    "singularName": resource.singular_name,
                    "shortNames": resource.short_names,
                    "categories": resource.categories,
                    "verbs": verbs,
                })
            })
            .collect();
        resources.sort_by_key(|resource| resource["name"].to_string());
        scene.observe(format!("discovery/{group_version}"), resources);
    }
    Ok(())
}
