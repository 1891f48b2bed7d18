//! The CRD manifests `kruise crds` prints: structural schemas, a golden file of our own output,
//! and a point-by-point comparison with the upstream CRDs (skipped when `../shared` is absent).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

use std::{
    collections::{BTreeMap, BTreeSet},
    path::PathBuf,
};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use kruise_crds::crd::all_crds;

fn shared_openkruise() -> Option<PathBuf> {
    let dir = std::env::var_os("KRUISE_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
        .join("reference/openkruise");
    dir.is_dir().then_some(dir)
}

fn ours() -> BTreeMap<String, CustomResourceDefinition> {
    all_crds()
        .expect("CRDs build")
        .into_iter()
        .map(|crd| (crd.metadata.name.clone().unwrap_or_default(), crd))
        .collect()
}

/// Every node of a structural schema has a type (or is int-or-string / preserve-unknown), and no
/// keyword a CRD may not use appears.
fn structural_problems(schema: &JSONSchemaProps, path: &str, problems: &mut Vec<String>) {
    let typed = schema.type_.is_some()
        || schema.x_kubernetes_int_or_string == Some(true)
        || schema.x_kubernetes_preserve_unknown_fields == Some(true);
    if !typed {
        problems.push(format!("{path}: no type"));
    }
    if schema.ref_path.is_some() {
        problems.push(format!("{path}: $ref"));
    }
    if schema.properties.is_some()
        && matches!(schema.additional_properties, Some(JSONSchemaPropsOrBool::Schema(_)))
    {
        problems.push(format!("{path}: both properties and additionalProperties"));
    }
    if schema.unique_items == Some(true) {
        problems.push(format!("{path}: uniqueItems"));
    }
    for keyword in [&schema.one_of, &schema.any_of, &schema.all_of].into_iter().flatten() {
        for branch in keyword {
            if branch.type_.is_some() || branch.properties.is_some() || branch.items.is_some() {
                problems.push(format!("{path}: type information inside oneOf/anyOf/allOf"));
            }
        }
    }
    for (name, child) in schema.properties.iter().flatten() {
        structural_problems(child, &format!("{path}.{name}"), problems);
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = &schema.items {
        structural_problems(items, &format!("{path}[]"), problems);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(values)) = &schema.additional_properties {
        structural_problems(values, &format!("{path}{{}}"), problems);
    }
}

#[test]
fn every_schema_is_structural() {
    let mut problems = Vec::new();
    for (name, crd) in ours() {
        for version in &crd.spec.versions {
            let schema = version.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()).expect("schema");
            structural_problems(schema, &format!("{name}/{}", version.name), &mut problems);
        }
    }
    assert!(problems.is_empty(), "non-structural schema nodes:\n{}", problems.join("\n"));
}

#[test]
fn there_are_eighteen_crds_with_one_storage_version_each() {
    let crds = ours();
    assert_eq!(crds.len(), 18, "{:?}", crds.keys().collect::<Vec<_>>());
    for (name, crd) in crds {
        let storage = crd.spec.versions.iter().filter(|v| v.storage).count();
        assert_eq!(storage, 1, "{name}");
    }
}

/// Our own output, checked in; `UPDATE_GOLDEN=1 cargo test -p kruise-crds --test crd_manifests`
/// rewrites it after an intended change.
#[test]
fn output_matches_the_golden_file() {
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/crds.yaml");
    let mut rendered = String::new();
    for crd in all_crds().expect("CRDs build") {
        rendered.push_str("---\n");
        rendered.push_str(&serde_yaml::to_string(&crd).expect("yaml"));
    }
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden.parent().expect("parent")).expect("mkdir");
        std::fs::write(&golden, &rendered).expect("write golden");
    }
    let expected = std::fs::read_to_string(&golden).expect("golden file exists (UPDATE_GOLDEN=1 creates it)");
    assert!(expected == rendered, "kruise crds output changed; rerun with UPDATE_GOLDEN=1 if intended");
}

/// Kinds whose upstream deployment patches in the conversion webhook
/// (`config/crd/kustomization.yaml`), read from the upstream kustomization.
fn upstream_webhook_converted(shared: &std::path::Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(shared.join("samples/deploy-config/crd-kustomization.yaml"))
        .unwrap_or_default();
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("- patches/webhook_in_"))
        .filter_map(|rest| rest.strip_suffix(".yaml"))
        .map(|plural| plural.to_string())
        .collect()
}

fn field_paths(schema: &JSONSchemaProps, path: &str, out: &mut BTreeSet<String>) {
    for name in schema.required.iter().flatten() {
        out.insert(format!("{path}.{name} required"));
    }
    for (name, child) in schema.properties.iter().flatten() {
        let child_path = format!("{path}.{name}");
        out.insert(child_path.clone());
        if let Some(default) = &child.default {
            out.insert(format!("{child_path} default={}", default.0));
        }
        field_paths(child, &child_path, out);
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = &schema.items {
        field_paths(items, &format!("{path}[]"), out);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(values)) = &schema.additional_properties {
        field_paths(values, &format!("{path}{{}}"), out);
    }
}

#[test]
fn crds_match_upstream_point_by_point() {
    let Some(shared) = shared_openkruise() else {
        eprintln!("skipped: ../shared/reference/openkruise is absent (set KRUISE_SHARED_DIR to point at it)");
        return;
    };
    let ours = ours();
    let webhook_converted = upstream_webhook_converted(&shared);
    let mut differences = Vec::new();
    let mut seen = BTreeSet::new();
    let mut upstream_paths_checked = 0usize;
    for entry in std::fs::read_dir(shared.join("crds")).expect("upstream crds dir") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read upstream crd");
        let upstream: CustomResourceDefinition = serde_yaml::from_str(&text).expect("upstream CRD parses");
        let name = upstream.metadata.name.clone().unwrap_or_default();
        seen.insert(name.clone());
        let Some(mine) = ours.get(&name) else {
            differences.push(format!("{name}: missing from kruise crds"));
            continue;
        };
        let (u, m) = (&upstream.spec, &mine.spec);
        let mut check = |what: &str, left: String, right: String| {
            if left != right {
                differences.push(format!("{name} {what}: upstream {left} ours {right}"));
            }
        };
        check("group", u.group.clone(), m.group.clone());
        check("scope", u.scope.clone(), m.scope.clone());
        check("kind", u.names.kind.clone(), m.names.kind.clone());
        check("plural", u.names.plural.clone(), m.names.plural.clone());
        check("singular", format!("{:?}", u.names.singular), format!("{:?}", m.names.singular));
        check("listKind", format!("{:?}", u.names.list_kind), format!("{:?}", m.names.list_kind));
        check("shortNames", format!("{:?}", u.names.short_names), format!("{:?}", m.names.short_names));
        check("categories", format!("{:?}", u.names.categories), format!("{:?}", m.names.categories));
        let expected_strategy = if webhook_converted.contains(&u.names.plural) { "Webhook" } else { "None" };
        let our_strategy = m.conversion.as_ref().map(|c| c.strategy.clone()).unwrap_or_else(|| "None".into());
        check("conversion strategy", expected_strategy.into(), our_strategy);
        let versions = |crd: &CustomResourceDefinition| {
            crd.spec
                .versions
                .iter()
                .map(|v| format!("{}(served={},storage={})", v.name, v.served, v.storage))
                .collect::<Vec<_>>()
        };
        check("versions", format!("{:?}", versions(&upstream)), format!("{:?}", versions(mine)));
        for uv in &u.versions {
            let Some(mv) = m.versions.iter().find(|v| v.name == uv.name) else { continue };
            let columns = |v: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion| {
                v.additional_printer_columns
                    .iter()
                    .flatten()
                    .map(|c| format!("{}:{}:{}:{}", c.name, c.type_, c.json_path, c.priority.unwrap_or(0)))
                    .collect::<Vec<_>>()
            };
            check(
                &format!("{} printer columns", uv.name),
                format!("{:?}", columns(uv)),
                format!("{:?}", columns(mv)),
            );
            let status = |v: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion| {
                v.subresources.as_ref().is_some_and(|s| s.status.is_some())
            };
            check(&format!("{} status subresource", uv.name), status(uv).to_string(), status(mv).to_string());
            let scale = |v: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion| {
                v.subresources.as_ref().and_then(|s| s.scale.as_ref()).map(|s| {
                    format!("{}|{}|{:?}", s.spec_replicas_path, s.status_replicas_path, s.label_selector_path)
                })
            };
            check(
                &format!("{} scale subresource", uv.name),
                format!("{:?}", scale(uv)),
                format!("{:?}", scale(mv)),
            );

            // Every field upstream declares exists in our schema too.
            let schema = |v: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion| {
                v.schema.as_ref().and_then(|s| s.open_api_v3_schema.clone()).unwrap_or_default()
            };
            let (mut upstream_fields, mut our_fields) = (BTreeSet::new(), BTreeSet::new());
            field_paths(&schema(uv), "", &mut upstream_fields);
            field_paths(&schema(mv), "", &mut our_fields);
            upstream_paths_checked += upstream_fields.len();
            for missing in upstream_fields.difference(&our_fields) {
                check(&format!("{} field {missing}", uv.name), "present".into(), "missing".into());
            }
            // Defaults the API server applies, and fields it requires, must be exactly upstream's.
            for extra in our_fields
                .difference(&upstream_fields)
                .filter(|path| path.contains(" default=") || path.ends_with(" required"))
            {
                check(&format!("{} {extra}", uv.name), "absent".into(), "present".into());
            }
        }
    }
    for name in ours.keys().filter(|name| !seen.contains(*name)) {
        differences.push(format!("{name}: not an upstream CRD"));
    }
    eprintln!("compared {} CRDs and {upstream_paths_checked} upstream field paths", seen.len());
    assert!(
        differences.is_empty(),
        "{} difference(s) from upstream:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
