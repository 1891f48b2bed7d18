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
            // Required = always serialized: matches Go, where a field without `omitempty` is required.
            settings.contract = schemars::generate::Contract::Serialize;
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
    normalize(&mut spec_value);
    normalize(&mut status_value);
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

/// Marks a default the CRD should declare (`#[schemars(extend("x-kruise-default" = ...))]`).
///
/// schemars also writes `default` for every `#[serde(default)]` field; the API server would apply
/// those (and rejects an empty default on an enum), while upstream declares only a handful. So
/// every generated `default` is dropped and only the explicitly marked ones are kept.
pub const DEFAULT_MARKER: &str = "x-kruise-default";

/// Drops `nullable` (from `Option<T>`; upstream never sets it, and without it `null` means
/// "remove this field" in merge patches, as upstream) and generated defaults, and turns the
/// explicit [`DEFAULT_MARKER`] defaults into `default`.
fn normalize(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.remove("nullable");
            map.remove("default");
            if let Some(default) = map.remove(DEFAULT_MARKER) {
                map.insert("default".to_string(), default);
            }
            for child in map.values_mut() {
                normalize(child);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

/// Adds an upstream default to the property `name` of an object schema (or of an array's item
/// schema), for k8s-openapi types whose own schema does not carry it.
fn with_property_default(schema: Schema, name: &str, default: serde_json::Value) -> Schema {
    let mut value = schema.to_value();
    let node = if value.get("items").is_some() { value.get_mut("items") } else { Some(&mut value) };
    if let Some(property) = node
        .and_then(|node| node.get_mut("properties"))
        .and_then(|properties| properties.get_mut(name))
        .and_then(serde_json::Value::as_object_mut)
    {
        property.insert(DEFAULT_MARKER.to_string(), default);
    }
    // A defaulted property is not required (upstream CRDs never require them).
    let node = if value.get("items").is_some() { value.get_mut("items") } else { Some(&mut value) };
    if let Some(required) = node.and_then(|node| node.get_mut("required")).and_then(|r| r.as_array_mut()) {
        required.retain(|entry| entry.as_str() != Some(name));
    }
    Schema::try_from(value).unwrap_or_else(|_| json_schema!({}))
}

/// `[]LocalObjectReference` whose `name` defaults to `""`, as upstream's CRDs declare it.
pub fn local_object_references(generator: &mut SchemaGenerator) -> Schema {
    let schema = generator.subschema_for::<Vec<k8s_openapi::api::core::v1::LocalObjectReference>>();
    with_property_default(schema, "name", serde_json::json!(""))
}

/// `[]ContainerPort` whose `protocol` defaults to `TCP`, as upstream's CRDs declare it.
pub fn container_ports(generator: &mut SchemaGenerator) -> Schema {
    let schema = generator.subschema_for::<Vec<k8s_openapi::api::core::v1::ContainerPort>>();
    with_property_default(schema, "protocol", serde_json::json!("TCP"))
}

/// `GRPCAction` whose `service` defaults to `""`, as upstream's CRDs declare it.
pub fn grpc_action(generator: &mut SchemaGenerator) -> Schema {
    let schema = generator.subschema_for::<k8s_openapi::api::core::v1::GRPCAction>();
    with_property_default(schema, "service", serde_json::json!(""))
}
