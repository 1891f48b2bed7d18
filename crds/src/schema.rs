//! OpenAPI v3 schemas for the CRD manifests.
//!
//! Schemas are generated from the Rust types with schemars, using the same settings as
//! kube-derive (inlined subschemas, structural rewrites), so that a real kube-apiserver accepts
//! them. Where upstream leaves a subtree schemaless (pod templates, PVC templates, SidecarSet
//! container bodies, ...) the field says so with one of the `schema_with` helpers below; those
//! subtrees are validated by our own validation code instead.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings, json_schema};

/// A subtree kept as written: any JSON value, no pruning (upstream: pod templates).
pub fn preserve_unknown(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "x-kubernetes-preserve-unknown-fields": true })
}

/// An object kept as written and marked as an embedded Kubernetes resource
/// (ResourceDistribution's `spec.resource`).
pub fn embedded_resource(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true
    })
}

/// The schemars generator configured as kube-derive configures it for CRDs.
pub fn crd_generator() -> SchemaGenerator {
    SchemaSettings::openapi3()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .with_transform(schemars::transform::AddNullable::default())
        .with_transform(kube::core::schema::StructuralSchemaRewriter)
        .with_transform(kube::core::schema::OptionalEnum)
        .with_transform(kube::core::schema::OptionalIntOrString)
        .into_generator()
}

/// Errors turning a generated schema into CRD schema props.
#[derive(Debug, thiserror::Error)]
#[error("schema of {what} is not valid CRD schema props: {source}")]
pub struct SchemaError {
    what: &'static str,
    #[source]
    source: serde_json::Error,
}

/// The `openAPIV3Schema` of one CRD version whose objects carry `Spec` and `Status`.
pub fn object_schema<Spec: JsonSchema, Status: JsonSchema>(
    description: &str,
) -> Result<JSONSchemaProps, SchemaError> {
    let mut generator = crd_generator();
    let spec = generator.root_schema_for::<Spec>();
    let status = generator.root_schema_for::<Status>();
    let mut spec_value = schema_value(spec);
    let mut status_value = schema_value(status);
    strip_nullable(&mut spec_value);
    strip_nullable(&mut status_value);
    let root = serde_json::json!({
        "description": description,
        "type": "object",
        "properties": {
            "apiVersion": {
                "description": "The versioned schema of this representation of an object.",
                "type": "string"
            },
            "kind": {
                "description": "The REST resource this object represents.",
                "type": "string"
            },
            "metadata": { "type": "object" },
            "spec": spec_value,
            "status": status_value,
        }
    });
    serde_json::from_value(root).map_err(|source| SchemaError { what: "object", source })
}

fn schema_value(schema: Schema) -> serde_json::Value {
    let mut value = schema.to_value();
    if let Some(object) = value.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        object.remove("$defs");
        object.remove("definitions");
    }
    value
}

/// `nullable: true` comes from `Option<T>` fields; upstream CRDs never set it, and leaving it
/// out keeps `null` meaning "remove this field" in merge patches, as with upstream.
fn strip_nullable(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.remove("nullable");
            for child in map.values_mut() {
                strip_nullable(child);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_nullable),
        _ => {}
    }
}
