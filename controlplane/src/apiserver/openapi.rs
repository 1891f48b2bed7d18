//! OpenAPI documents: `/openapi/v3` (the index of group-version documents) and one document per
//! group version, `/openapi/v2` (everything in one). They carry what clients use: operations
//! tagged with `x-kubernetes-group-version-kind` and the `fieldValidation`/`dryRun` query
//! parameters (kubectl checks them before using server-side field validation), and the schemas
//! of custom resources (for `kubectl explain` and client-side validation).

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::registry::{Registry, ResourceDef};

fn schema_name(def: &ResourceDef, version: &str) -> String {
    let group = if def.group.is_empty() {
        "io.k8s.api.core".to_string()
    } else {
        def.group.split('.').rev().collect::<Vec<_>>().join(".")
    };
    format!("{group}.{version}.{}", def.kind)
}

fn gvk(def: &ResourceDef, version: &str) -> Value {
    json!({"group": def.group, "version": version, "kind": def.kind})
}

fn write_parameters() -> Value {
    json!([
        {"name": "dryRun", "in": "query", "schema": {"type": "string"}, "uniqueItems": true},
        {"name": "fieldManager", "in": "query", "schema": {"type": "string"}, "uniqueItems": true},
        {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}, "uniqueItems": true},
        {"name": "force", "in": "query", "schema": {"type": "boolean"}, "uniqueItems": true},
    ])
}

fn paths_for(def: &ResourceDef, version: &str) -> Vec<(String, Value)> {
    let prefix = if def.group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{}/{version}", def.group)
    };
    let scope = if def.namespaced { "/namespaces/{namespace}" } else { "" };
    let schema_ref = json!({"$ref": format!("#/components/schemas/{}", schema_name(def, version))});
    let response =
        json!({"200": {"description": "OK", "content": {"application/json": {"schema": schema_ref}}}});
    let operation = |verb: &str, action: &str| {
        json!({
            "operationId": format!("{verb}{}", def.kind),
            "parameters": if matches!(action, "post" | "put" | "patch") { write_parameters() } else { json!([]) },
            "responses": response,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk(def, version),
        })
    };
    let collection = format!("{prefix}{scope}/{}", def.resource);
    let item = format!("{collection}/{{name}}");
    let mut paths = vec![
        (collection, json!({"get": operation("list", "list"), "post": operation("create", "post")})),
        (
            item.clone(),
            json!({
                "get": operation("read", "get"),
                "put": operation("replace", "put"),
                "patch": operation("patch", "patch"),
                "delete": operation("delete", "delete"),
            }),
        ),
    ];
    if def.has_status() {
        paths.push((
            format!("{item}/status"),
            json!({"get": operation("read", "get"), "patch": operation("patch", "patch")}),
        ));
    }
    paths
}

fn schema_for(def: &ResourceDef, version: &str) -> Value {
    let mut schema = match def.schema(version).and_then(|s| serde_json::to_value(s).ok()) {
        Some(schema) => schema,
        None => json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
    };
    if let Some(map) = schema.as_object_mut() {
        map.insert("x-kubernetes-group-version-kind".into(), json!([gvk(def, version)]));
    }
    schema
}

fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() { format!("api/{version}") } else { format!("apis/{group}/{version}") }
}

/// The OpenAPI v3 document of one group version (`api/v1`, `apis/apps/v1`), or None.
pub fn v3_group_version(registry: &Registry, path: &str) -> Option<Value> {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for def in registry.all() {
        for version in &def.versions {
            if group_version_path(&def.group, version) != path {
                continue;
            }
            for (url, item) in paths_for(&def, version) {
                paths.insert(url, item);
            }
            schemas.insert(schema_name(&def, version), schema_for(&def, version));
        }
    }
    if paths.is_empty() {
        return None;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.34.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

/// The `/openapi/v3` index: one entry per group version with a hash-versioned URL.
pub fn v3_index(registry: &Registry) -> Value {
    let mut entries = Map::new();
    for def in registry.all() {
        for version in &def.versions {
            let path = group_version_path(&def.group, version);
            if entries.contains_key(&path) {
                continue;
            }
            let hash = v3_group_version(registry, &path).map(|doc| document_hash(&doc)).unwrap_or_default();
            entries.insert(
                path.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}")}),
            );
        }
    }
    json!({"paths": entries})
}

fn document_hash(document: &Value) -> String {
    let digest = Sha256::digest(document.to_string().as_bytes());
    hex::encode(&digest[..16]).to_uppercase()
}

/// The OpenAPI v2 document: every kind's definition, and the same operations.
pub fn v2(registry: &Registry) -> Value {
    let mut definitions = Map::new();
    let mut paths = Map::new();
    for def in registry.all() {
        for version in &def.versions {
            // Only custom resources get a definition: for built-in kinds kubectl must fall back to
            // its compiled-in types, which carry the strategic-merge metadata of their lists.
            if def.is_custom() {
                definitions.insert(schema_name(&def, version), schema_for(&def, version));
            }
            for (url, mut item) in paths_for(&def, version) {
                // Swagger 2 parameters carry `type` directly.
                if let Some(operations) = item.as_object_mut() {
                    for operation in operations.values_mut() {
                        if let Some(parameters) =
                            operation.get_mut("parameters").and_then(Value::as_array_mut)
                        {
                            for parameter in parameters.iter_mut() {
                                let kind =
                                    parameter.pointer("/schema/type").cloned().unwrap_or(json!("string"));
                                if let Some(map) = parameter.as_object_mut() {
                                    map.remove("schema");
                                    map.insert("type".into(), kind);
                                }
                            }
                        }
                        if let Some(responses) = operation.get_mut("responses") {
                            let schema = responses.pointer("/200/content/application~1json/schema").cloned();
                            *responses = json!({"200": {"description": "OK", "schema": schema}});
                            if let Some(reference) = responses.pointer_mut("/200/schema/$ref") {
                                let text = reference
                                    .as_str()
                                    .unwrap_or_default()
                                    .replace("#/components/schemas/", "#/definitions/");
                                *reference = json!(text);
                            }
                        }
                    }
                }
                paths.insert(url, item);
            }
        }
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.34.0"},
        "paths": paths,
        "definitions": definitions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_version_documents_offer_field_validation_on_patch() {
        let registry = Registry::with_builtins();
        let doc = v3_group_version(&registry, "api/v1").unwrap();
        let patch = &doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            json!({"group": "", "version": "v1", "kind": "Pod"})
        );
        assert!(
            patch["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
        );
        let index = v3_index(&registry);
        assert!(
            index["paths"]["apis/apps/v1"]["serverRelativeURL"]
                .as_str()
                .unwrap()
                .starts_with("/openapi/v3/apis/apps/v1?hash=")
        );
    }
}
