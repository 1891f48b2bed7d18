//! The openAPIV3Schema of one CRD version: the fields allowed at its root when the status
//! subresource is on, then the structural, default-value and per-schema-rule checks.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceValidation, JSONSchemaProps,
};
use kruise_machinery::field::{ErrorList, FieldError, FieldPath};

use super::{
    accessors::{is_embedded, is_int_or_string, is_nullable, list, text, type_of},
    default_validation,
    field_errors::invalid_str,
    go_json, schema_rules, structural,
};

/// Fields of the (internal) JSONSchemaProps allowed at the root when the status subresource is on.
const ALLOWED_AT_ROOT: &str = "[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum \
MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example \
XPreserveUnknownFields XValidations]";

/// The non-empty fields of a schema, in the declaration order of kube's internal type, with
/// whether each is allowed at the root of a schema with the status subresource.
fn root_fields(s: &JSONSchemaProps) -> Vec<(&'static str, bool)> {
    let mut fields = Vec::new();
    let mut add = |name: &'static str, present: bool, allowed: bool| {
        if present {
            fields.push((name, allowed));
        }
    };
    add("ID", !text(&s.id).is_empty(), false);
    add("Schema", !text(&s.schema).is_empty(), false);
    add("Ref", s.ref_path.is_some(), false);
    add("Description", !text(&s.description).is_empty(), true);
    add("Type", !type_of(s).is_empty(), true);
    add("Nullable", is_nullable(s), false);
    add("Format", !text(&s.format).is_empty(), true);
    add("Title", !text(&s.title).is_empty(), true);
    add("Default", s.default.is_some(), false);
    add("Maximum", s.maximum.is_some(), true);
    add("ExclusiveMaximum", s.exclusive_maximum.unwrap_or(false), true);
    add("Minimum", s.minimum.is_some(), true);
    add("ExclusiveMinimum", s.exclusive_minimum.unwrap_or(false), true);
    add("MaxLength", s.max_length.is_some(), true);
    add("MinLength", s.min_length.is_some(), true);
    add("Pattern", !text(&s.pattern).is_empty(), true);
    add("MaxItems", s.max_items.is_some(), true);
    add("MinItems", s.min_items.is_some(), true);
    add("UniqueItems", s.unique_items.unwrap_or(false), true);
    add("MultipleOf", s.multiple_of.is_some(), true);
    add("Enum", s.enum_.is_some(), false);
    add("MaxProperties", s.max_properties.is_some(), false);
    add("MinProperties", s.min_properties.is_some(), false);
    add("Required", s.required.is_some(), true);
    add("Items", s.items.is_some(), true);
    add("AllOf", s.all_of.is_some(), false);
    add("OneOf", s.one_of.is_some(), false);
    add("AnyOf", s.any_of.is_some(), false);
    add("Not", s.not.is_some(), false);
    add("Properties", s.properties.is_some(), true);
    add("AdditionalProperties", s.additional_properties.is_some(), false);
    add("PatternProperties", s.pattern_properties.is_some(), false);
    add("Dependencies", s.dependencies.is_some(), false);
    add("AdditionalItems", s.additional_items.is_some(), false);
    add("Definitions", s.definitions.is_some(), false);
    add("ExternalDocs", s.external_docs.is_some(), true);
    add("Example", s.example.is_some(), true);
    add("XPreserveUnknownFields", s.x_kubernetes_preserve_unknown_fields.is_some(), true);
    add("XEmbeddedResource", is_embedded(s), false);
    add("XIntOrString", is_int_or_string(s), false);
    add("XListMapKeys", !list(&s.x_kubernetes_list_map_keys).is_empty(), false);
    add("XListType", s.x_kubernetes_list_type.is_some(), false);
    add("XMapType", s.x_kubernetes_map_type.is_some(), false);
    add("XValidations", !list(&s.x_kubernetes_validations).is_empty(), true);
    fields
}

pub(super) fn crd_validation(
    validation: Option<&CustomResourceValidation>,
    status_enabled: bool,
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(schema) = validation.and_then(|v| v.open_api_v3_schema.as_ref()) else {
        return errors;
    };
    let schema_path = path.child("openAPIV3Schema");
    if status_enabled {
        for (field, allowed) in root_fields(schema) {
            if field == "Type" {
                if type_of(schema) != "object" {
                    errors.push(invalid_str(
                        &path.child("openAPIV3Schema.type"),
                        type_of(schema),
                        "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
                    ));
                    break;
                }
                continue;
            }
            if !allowed {
                errors.push(FieldError::invalid(
                    &schema_path,
                    go_json::schema(schema),
                    format!("only {ALLOWED_AT_ROOT} fields are allowed at the root of the schema if the status subresource is enabled"),
                ));
                break;
            }
        }
    }
    if is_nullable(schema) {
        errors.push(FieldError::forbidden(
            &path.child("openAPIV3Schema.nullable"),
            "nullable cannot be true at the root",
        ));
    }

    let mut init_errors = ErrorList::new();
    match structural::unsupported(schema) {
        Some(message) => init_errors.push(FieldError::invalid(&schema_path, "\"\"", message)),
        None => {
            let structural_errors = structural::validate(&schema_path, schema);
            if !structural_errors.is_empty() {
                errors.extend(structural_errors);
            } else {
                errors.extend(default_validation::validate(&schema_path, schema));
            }
        }
    }
    errors.extend(schema_rules::validate(schema, &schema_path, &schema_rules::Context::root(), true));
    if errors.is_empty() {
        errors.extend(init_errors);
    }
    errors
}
