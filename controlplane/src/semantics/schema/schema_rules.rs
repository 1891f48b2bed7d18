//! The per-schema rules of `ValidateCustomResourceDefinitionOpenAPISchema`.

use std::collections::HashSet;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use kruise_machinery::field::{ErrorList, FieldError, FieldPath};
use serde_json::Value;

use super::{
    accessors::{
        Additional, additional, is_embedded, is_meta_field, is_nullable, item_schema, list, properties,
        property, text, type_of,
    },
    field_errors::{invalid_str, not_supported},
    go_json, structural,
};
use crate::semantics::jsonpath::gofmt;

const OPENAPI_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

#[derive(Clone, Debug, Default)]
pub(super) struct Context {
    forbidden_defaults: Option<String>,
    inside_resource_meta: bool,
}

impl Context {
    pub(super) fn root() -> Context {
        Context::default()
    }

    fn forbid_defaults(&self, reason: &str) -> Context {
        Context { forbidden_defaults: Some(reason.to_string()), ..self.clone() }
    }

    fn inside_meta(&self) -> Context {
        Context { inside_resource_meta: true, ..self.clone() }
    }
}

fn standard(s: &JSONSchemaProps, path: &FieldPath, ctx: &Context, errors: &mut ErrorList) {
    let ty = type_of(s);
    if !ty.is_empty() && !OPENAPI_TYPES.contains(&ty) {
        errors.push(not_supported(&path.child("type"), ty, &OPENAPI_TYPES));
    }
    if s.default.is_some()
        && let Some(reason) = &ctx.forbidden_defaults
    {
        let detail = if reason.is_empty() {
            "must not be set".to_string()
        } else {
            format!("must not be set {reason}")
        };
        errors.push(FieldError::forbidden(&path.child("default"), detail));
    }
    if !text(&s.id).is_empty() {
        errors.push(FieldError::forbidden(&path.child("id"), "id is not supported"));
    }
    if s.additional_items.is_some() {
        errors
            .push(FieldError::forbidden(&path.child("additionalItems"), "additionalItems is not supported"));
    }
    if s.pattern_properties.as_ref().is_some_and(|p| !p.is_empty()) {
        errors.push(FieldError::forbidden(
            &path.child("patternProperties"),
            "patternProperties is not supported",
        ));
    }
    if s.definitions.as_ref().is_some_and(|d| !d.is_empty()) {
        errors.push(FieldError::forbidden(&path.child("definitions"), "definitions is not supported"));
    }
    if s.dependencies.is_some() {
        errors.push(FieldError::forbidden(&path.child("dependencies"), "dependencies is not supported"));
    }
    if s.ref_path.is_some() {
        errors.push(FieldError::forbidden(&path.child("$ref"), "$ref is not supported"));
    }
    if ty == "null" {
        errors.push(FieldError::forbidden(
            &path.child("type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if matches!(&s.items, Some(JSONSchemaPropsOrArray::Schemas(items)) if !items.is_empty()) {
        errors.push(FieldError::forbidden(
            &path.child("items"),
            "items must be a schema object and not an array",
        ));
    }
    if ctx.inside_resource_meta && is_embedded(s) {
        errors.push(FieldError::forbidden(
            &path.child("x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }
}

fn pointer_value(value: Option<&String>) -> String {
    match value {
        Some(v) => gofmt::json(&Value::String(v.clone())),
        None => "null".to_string(),
    }
}

pub(super) fn validate(s: &JSONSchemaProps, path: &FieldPath, ctx: &Context, is_root: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    standard(s, path, ctx, &mut errors);
    if s.unique_items.unwrap_or(false) {
        errors.push(FieldError::forbidden(
            &path.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if let Some(addl) = &s.additional_properties {
        let conflicting = match addl {
            JSONSchemaPropsOrBool::Bool(allows) => !allows,
            JSONSchemaPropsOrBool::Schema(_) => true,
        };
        if s.properties.as_ref().is_some_and(|p| !p.is_empty()) && conflicting {
            errors.push(FieldError::forbidden(
                &path.child("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if let JSONSchemaPropsOrBool::Schema(addl) = addl {
            let sub = if ctx.inside_resource_meta {
                ctx.forbid_defaults("inside additionalProperties applying to object metadata")
            } else {
                ctx.clone()
            };
            errors.extend(validate(addl, &path.child("additionalProperties"), &sub, false));
        }
    }
    for (key, prop) in properties(s) {
        let mut sub = ctx.clone();
        if (is_root || is_embedded(s)) && is_meta_field(key) {
            sub = sub.inside_meta();
            if is_root {
                sub = sub.forbid_defaults(&format!("in top-level {key}"));
            }
        }
        errors.extend(validate(prop, &path.child("properties").key(key), &sub, false));
    }
    if let Some(not) = &s.not {
        errors.extend(validate(not, &path.child("not"), ctx, false));
    }
    for (name, subs) in [("allOf", &s.all_of), ("oneOf", &s.one_of), ("anyOf", &s.any_of)] {
        for (i, sub) in list(subs).iter().enumerate() {
            errors.extend(validate(sub, &path.child(name).index(i), ctx, false));
        }
    }
    for (key, def) in s.definitions.iter().flatten() {
        errors.extend(validate(def, &path.child("definitions").key(key), ctx, false));
    }
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => {
            errors.extend(validate(item, &path.child("items"), ctx, false));
        }
        Some(JSONSchemaPropsOrArray::Schemas(items)) => {
            for (i, item) in items.iter().enumerate() {
                errors.extend(validate(item, &path.child("items").index(i), ctx, false));
            }
        }
        None => {}
    }
    for (key, dependency) in s.dependencies.iter().flatten() {
        if let k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrStringArray::Schema(dep) = dependency {
            errors.extend(validate(dep, &path.child("dependencies").key(key), ctx, false));
        }
    }
    if s.x_kubernetes_preserve_unknown_fields == Some(false) {
        errors.push(FieldError::invalid(
            &path.child("x-kubernetes-preserve-unknown-fields"),
            "false",
            "must be true or undefined",
        ));
    }
    let ty = type_of(s);
    if let Some(map_type) = &s.x_kubernetes_map_type {
        if ty != "object" {
            let message = "must be object if x-kubernetes-map-type is specified";
            if ty.is_empty() {
                errors.push(FieldError::required(&path.child("type"), message));
            } else {
                errors.push(invalid_str(&path.child("type"), ty, message));
            }
        }
        if map_type != "atomic" && map_type != "granular" {
            errors.push(not_supported(
                &path.child("x-kubernetes-map-type"),
                map_type,
                &["atomic", "granular"],
            ));
        }
    }
    let list_type = s.x_kubernetes_list_type.as_deref();
    if list_type.is_some() && ty != "array" {
        let message = "must be array if x-kubernetes-list-type is specified";
        if ty.is_empty() {
            errors.push(FieldError::required(&path.child("type"), message));
        } else {
            errors.push(invalid_str(&path.child("type"), ty, message));
        }
    } else if list_type == Some("set")
        && let Some(item) = item_schema(s)
    {
        let field = match type_of(item) {
            "array" if item.x_kubernetes_list_type.as_deref().is_some_and(|t| t != "atomic") => {
                Some("x-kubernetes-list-type")
            }
            "object" if item.x_kubernetes_map_type.as_deref() != Some("atomic") => {
                Some("x-kubernetes-map-type")
            }
            _ => None,
        };
        if let Some(field) = field {
            // kube reports the item's list type as the value in both cases.
            errors.push(FieldError::invalid(
                &path.child("items").child(field),
                pointer_value(item.x_kubernetes_list_type.as_ref()),
                "must be atomic as item of a list with x-kubernetes-list-type=set",
            ));
        }
    }
    if let Some(lt) = list_type
        && !matches!(lt, "atomic" | "set" | "map")
    {
        errors.push(not_supported(&path.child("x-kubernetes-list-type"), lt, &["atomic", "set", "map"]));
    }
    let keys = list(&s.x_kubernetes_list_map_keys);
    if !keys.is_empty() {
        match list_type {
            None => errors.push(FieldError::required(
                &path.child("x-kubernetes-list-type"),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            Some(lt) if lt != "map" => errors.push(invalid_str(
                &path.child("x-kubernetes-list-type"),
                lt,
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            _ => {}
        }
    }
    if list_type == Some("map") {
        map_list_rules(s, keys, path, &mut errors);
    }
    map_list_keys_set(s, path, &mut errors);
    validation_rules(s, path, &mut errors);
    errors
}

fn map_list_rules(s: &JSONSchemaProps, keys: &[String], path: &FieldPath, errors: &mut ErrorList) {
    let keys_value = gofmt::json(&Value::from(keys.to_vec()));
    if keys.is_empty() {
        errors.push(FieldError::required(
            &path.child("x-kubernetes-list-map-keys"),
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    match &s.items {
        None => errors.push(FieldError::required(
            &path.child("items"),
            "must have a schema if x-kubernetes-list-type is map",
        )),
        Some(items @ JSONSchemaPropsOrArray::Schemas(_)) => {
            errors.push(FieldError::invalid(
                &path.child("items"),
                go_json::items(items),
                "must only have a single schema if x-kubernetes-list-type is map",
            ));
        }
        Some(JSONSchemaPropsOrArray::Schema(item)) => {
            if type_of(item) != "object" {
                errors.push(invalid_str(
                    &path.child("items").child("type"),
                    type_of(item),
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
            } else {
                let mut seen = HashSet::new();
                for key in keys {
                    match property(item, key) {
                        Some(prop) => {
                            if matches!(type_of(prop), "array" | "object") {
                                errors.push(invalid_str(
                                    &path.child("items").child("properties").key(key).child("type"),
                                    type_of(item),
                                    "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                ));
                            }
                        }
                        None => errors.push(FieldError::invalid(
                            &path.child("x-kubernetes-list-map-keys"),
                            keys_value.clone(),
                            "entries must all be names of item properties",
                        )),
                    }
                    if !seen.insert(key.as_str()) {
                        errors.push(FieldError::invalid(
                            &path.child("x-kubernetes-list-map-keys"),
                            keys_value.clone(),
                            "must not contain duplicate entries",
                        ));
                    }
                }
            }
        }
    }
}

fn map_list_keys_set(s: &JSONSchemaProps, path: &FieldPath, errors: &mut ErrorList) {
    let Some(item) = item_schema(s) else { return };
    let Some(list_type) = s.x_kubernetes_list_type.as_deref() else { return };
    if list_type != "set" && list_type != "map" {
        return;
    }
    if is_nullable(item) {
        errors.push(FieldError::forbidden(
            &path.child("items").child("nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
        ));
    }
    if list_type == "map" {
        let required = list(&item.required);
        for key in list(&s.x_kubernetes_list_map_keys) {
            let Some(prop) = property(item, key) else { continue };
            let prop_path = path.child("items").child("properties").key(key);
            if !required.contains(key) && prop.default.is_none() {
                errors.push(FieldError::required(
                    &prop_path.child("default"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                ));
            }
            if is_nullable(prop) {
                errors.push(FieldError::forbidden(
                    &prop_path.child("nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ));
            }
        }
    }
}

fn validation_rules(s: &JSONSchemaProps, path: &FieldPath, errors: &mut ErrorList) {
    const REASONS: [&str; 4] =
        ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"];
    let has_newlines = |t: &str| t.contains(['\n', '\r']);
    for (i, rule) in list(&s.x_kubernetes_validations).iter().enumerate() {
        let rule_path = path.child("x-kubernetes-validations").index(i);
        let trimmed_rule = rule.rule.trim();
        let message = text(&rule.message);
        let trimmed_message = message.trim();
        let message_expression = text(&rule.message_expression);
        if trimmed_rule.is_empty() {
            errors.push(FieldError::required(&rule_path.child("rule"), "rule is not specified"));
        } else if !message.is_empty() && trimmed_message.is_empty() {
            errors.push(invalid_str(&rule_path.child("message"), message, "must be non-empty if specified"));
        } else if has_newlines(trimmed_message) {
            errors.push(invalid_str(&rule_path.child("message"), message, "must not contain line breaks"));
        } else if has_newlines(trimmed_rule) && trimmed_message.is_empty() {
            errors.push(FieldError::required(
                &rule_path.child("message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        if !message_expression.is_empty() && message_expression.trim().is_empty() {
            errors.push(FieldError::required(
                &rule_path.child("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = &rule.reason
            && !REASONS.contains(&reason.as_str())
        {
            errors.push(not_supported(&rule_path.child("reason"), reason, &REASONS));
        }
        let field_path = text(&rule.field_path);
        if !field_path.is_empty() && field_path.trim().is_empty() {
            errors.push(invalid_str(
                &rule_path.child("fieldPath"),
                field_path,
                "must be non-empty if specified",
            ));
        }
        if has_newlines(field_path) {
            errors.push(invalid_str(
                &rule_path.child("fieldPath"),
                field_path,
                "must not contain line breaks",
            ));
        }
        if !field_path.is_empty() && structural::unsupported(s).is_none() && !valid_field_path(field_path, s)
        {
            errors.push(invalid_str(&rule_path.child("fieldPath"), field_path, "must be a valid path"));
        }
    }
}

/// Whether a validation rule's `fieldPath` (`.spec.a['b.c']`) names a field of the schema it is
/// declared on (kube's `cel.ValidFieldPath`).
fn valid_field_path(path: &str, schema: &JSONSchemaProps) -> bool {
    let mut tokens = Vec::new();
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\'' {
            let mut j = i + 1;
            while j < bytes.len() && !(bytes[j] == b'\'' && bytes[j - 1] != b'\\') {
                j += 1;
            }
            let end = (j + 1).min(bytes.len());
            tokens.push(&path[i..end]);
            i = end;
        } else if matches!(bytes[i], b'.' | b'[' | b']') {
            tokens.push(&path[i..i + 1]);
            i += 1;
        } else {
            let start = i;
            while i < bytes.len() && !matches!(bytes[i], b'.' | b'[' | b']') {
                i += 1;
            }
            tokens.push(&path[start..i]);
        }
    }
    let mut current = schema;
    let mut iter = tokens.into_iter();
    while let Some(token) = iter.next() {
        let name = match token {
            "[" => {
                let Some(quoted) = iter.next() else { return false };
                if quoted.len() < 2 || !quoted.starts_with('\'') || !quoted.ends_with('\'') {
                    return false;
                }
                if iter.next() != Some("]") {
                    return false;
                }
                quoted[1..quoted.len() - 1].replace("\\'", "'").replace("\\\\", "\\")
            }
            "." => match iter.next() {
                Some(name) => name.to_string(),
                None => return false,
            },
            _ => return false,
        };
        let next = if current.properties.is_some() {
            property(current, &name)
        } else {
            match additional(current) {
                Additional::Schema(addl) => Some(addl),
                _ => None,
            }
        };
        match next {
            Some(next) => current = next,
            None => return false,
        }
    }
    true
}
