//! Kube's structural-schema checks (`apiserver/schema`): conversion failures, invariants and
//! completeness.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray,
};
use kruise_machinery::field::{ErrorList, FieldError, FieldPath};

use super::{
    accessors::{
        Additional, additional, additional_schema, default_of, has_property, is_embedded, is_int_or_string,
        is_nullable, item_schema, list, preserves_unknown, properties, property, text, type_of,
    },
    field_errors::invalid_str,
    patterns::compiled_pattern,
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Why the schema cannot even be turned into a structural schema, if it cannot.
pub(super) fn unsupported(s: &JSONSchemaProps) -> Option<String> {
    let own = if !text(&s.id).is_empty() {
        Some("OpenAPIV3Schema 'id' is not supported")
    } else if !text(&s.schema).is_empty() {
        Some("OpenAPIV3Schema 'schema' is not supported")
    } else if !text(&s.ref_path).is_empty() {
        Some("OpenAPIV3Schema '$ref' is not supported")
    } else if s.pattern_properties.as_ref().is_some_and(|p| !p.is_empty()) {
        Some("OpenAPIV3Schema 'patternProperties' is not supported")
    } else if s.dependencies.as_ref().is_some_and(|d| !d.is_empty()) {
        Some("OpenAPIV3Schema 'dependencies' is not supported")
    } else if s.additional_items.is_some() {
        Some("OpenAPIV3Schema 'additionalItems' is not supported")
    } else if s.definitions.as_ref().is_some_and(|d| !d.is_empty()) {
        Some("OpenAPIV3Schema 'definitions' is not supported")
    } else if matches!(&s.items, Some(JSONSchemaPropsOrArray::Schemas(_))) {
        Some("OpenAPIV3Schema 'items' must be a schema, but is an array")
    } else if s.x_kubernetes_preserve_unknown_fields == Some(false) {
        Some("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined")
    } else {
        None
    };
    if let Some(message) = own {
        return Some(message.to_string());
    }
    let mut children: Vec<&JSONSchemaProps> = Vec::new();
    children.extend(s.not.as_deref());
    children.extend(list(&s.all_of));
    children.extend(list(&s.any_of));
    children.extend(list(&s.one_of));
    children.extend(item_schema(s));
    children.extend(properties(s).map(|(_, p)| p));
    children.extend(additional_schema(s));
    children.into_iter().find_map(unsupported)
}

/// Invariants and completeness, sorted by their full text as kube sorts them.
pub(super) fn validate(path: &FieldPath, s: &JSONSchemaProps) -> ErrorList {
    let mut errors = ErrorList::new();
    invariants(s, Level::Root, path, &mut errors);
    completeness(s, path, &mut errors);
    errors.sort_by_key(|e| e.to_string());
    errors
}

fn type_required_message(level: Level) -> &'static str {
    match level {
        Level::Root => "must not be empty at the root",
        Level::Item => "must not be empty for specified array items",
        Level::Field => "must not be empty for specified object fields",
    }
}

fn invariants(s: &JSONSchemaProps, level: Level, path: &FieldPath, errors: &mut ErrorList) {
    if type_of(s) == "array" && s.items.is_none() {
        errors.push(FieldError::required(&path.child("items"), "must be specified"));
    }
    if let Some(item) = item_schema(s) {
        invariants(item, Level::Item, &path.child("items"), errors);
    }
    for (key, prop) in properties(s) {
        invariants(prop, Level::Field, &path.child("properties").key(key), errors);
    }
    if s.additional_properties.is_some() {
        if level == Level::Root {
            errors.push(FieldError::forbidden(
                &path.child("additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let Some(addl) = additional_schema(s) {
            invariants(addl, Level::Field, &path.child("additionalProperties"), errors);
        }
    }
    if is_int_or_string(s) && preserves_unknown(s) {
        errors.push(FieldError::invalid(
            &path.child("x-kubernetes-preserve-unknown-fields"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if is_int_or_string(s) && is_embedded(s) {
        errors.push(FieldError::invalid(
            &path.child("x-kubernetes-embedded-resource"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    value_validation(s, int_or_string_any_of(s), int_or_string_all_of(s), level, path, errors);

    let check_metadata = level == Level::Root || is_embedded(s);
    let ty = type_of(s);
    if is_embedded(s) && ty != "object" {
        let message = "must be object if x-kubernetes-embedded-resource is true";
        if ty.is_empty() {
            errors.push(FieldError::required(&path.child("type"), message));
        } else {
            errors.push(invalid_str(&path.child("type"), ty, message));
        }
    } else if ty.is_empty() && !is_int_or_string(s) && !preserves_unknown(s) {
        errors.push(FieldError::required(&path.child("type"), type_required_message(level)));
    }
    if is_embedded(s) && s.additional_properties.is_some() {
        errors.push(FieldError::forbidden(
            &path.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        errors.push(invalid_str(&path.child("type"), ty, "must be object at the root"));
    }
    if check_metadata {
        for field in ["kind", "apiVersion"] {
            if let Some(prop) = property(s, field)
                && type_of(prop) != "string"
            {
                errors.push(invalid_str(
                    &path.child("properties").key(field).child("type"),
                    type_of(prop),
                    "must be string",
                ));
            }
        }
    }
    if let Some(metadata) = property(s, "metadata") {
        let meta_path = path.child("properties").key("metadata");
        if check_metadata && type_of(metadata) != "object" {
            errors.push(invalid_str(&meta_path.child("type"), type_of(metadata), "must be object"));
        }
        if level == Level::Root && !metadata_is_name_only(metadata) {
            errors.push(FieldError::forbidden(
                &meta_path,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
    if is_embedded(s) && !preserves_unknown(s) && s.properties.as_ref().is_none_or(|p| p.is_empty()) {
        errors.push(FieldError::required(
            &path.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// Whether a root `metadata` schema says nothing beyond its type, its default, and (only)
/// `name`/`generateName` properties.
fn metadata_is_name_only(metadata: &JSONSchemaProps) -> bool {
    let mut rest = metadata.clone();
    if let Some(props) = &rest.properties {
        let name_only = props.keys().all(|k| k == "name" || k == "generateName");
        if name_only && !props.is_empty() {
            rest.properties = None;
        }
    }
    rest.type_ = None;
    rest.default = None;
    let emptyish = |v: &Option<Vec<String>>| v.as_ref().is_none_or(|v| v.is_empty());
    if emptyish(&rest.required) {
        rest.required = None;
    }
    if rest.properties.as_ref().is_some_and(|p| p.is_empty()) {
        rest.properties = None;
    }
    // Fields the structural schema does not keep cannot make it non-empty.
    rest.id = None;
    rest.schema = None;
    rest.ref_path = None;
    rest.example = None;
    rest.external_docs = None;
    rest.definitions = None;
    rest.dependencies = None;
    rest.pattern_properties = None;
    rest.additional_items = None;
    rest == JSONSchemaProps::default()
}

fn only_type(s: &JSONSchemaProps, ty: &str) -> bool {
    let mut rest = s.clone();
    if type_of(&rest) != ty {
        return false;
    }
    rest.type_ = None;
    rest == JSONSchemaProps::default()
}

fn int_or_string_pattern(any_of: &[JSONSchemaProps]) -> bool {
    any_of.len() == 2 && only_type(&any_of[0], "integer") && only_type(&any_of[1], "string")
}

fn int_or_string_any_of(s: &JSONSchemaProps) -> bool {
    int_or_string_pattern(list(&s.any_of))
}

fn int_or_string_all_of(s: &JSONSchemaProps) -> bool {
    list(&s.all_of).first().is_some_and(|first| int_or_string_pattern(list(&first.any_of)))
}

fn value_validation(
    s: &JSONSchemaProps,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    level: Level,
    path: &FieldPath,
    errors: &mut ErrorList,
) {
    if !skip_any_of {
        for (i, sub) in list(&s.any_of).iter().enumerate() {
            nested(sub, false, level, &path.child("anyOf").index(i), errors);
        }
    }
    for (i, sub) in list(&s.all_of).iter().enumerate() {
        nested(sub, skip_first_all_of_any_of && i == 0, level, &path.child("allOf").index(i), errors);
    }
    for (i, sub) in list(&s.one_of).iter().enumerate() {
        nested(sub, false, level, &path.child("oneOf").index(i), errors);
    }
    if let Some(not) = &s.not {
        nested(not, false, level, &path.child("not"), errors);
    }
    let pattern = text(&s.pattern);
    if !pattern.is_empty()
        && let Err(error) = compiled_pattern(pattern)
    {
        errors.push(invalid_str(
            &path.child("pattern"),
            pattern,
            format!("must be a valid regular expression, but isn't: {error}"),
        ));
    }
}

fn nested(v: &JSONSchemaProps, skip_any_of: bool, level: Level, path: &FieldPath, errors: &mut ErrorList) {
    value_validation(v, skip_any_of, false, level, path, errors);
    if let Some(item) = item_schema(v) {
        nested(item, false, level, &path.child("items"), errors);
    }
    for (key, prop) in properties(v) {
        nested(prop, false, Level::Field, &path.child("properties").key(key), errors);
    }
    let forbid = |field: &str, detail: &str, errors: &mut ErrorList| {
        errors.push(FieldError::forbidden(&path.child(field), detail));
    };
    if !type_of(v).is_empty() {
        forbid("type", "must be empty to be structural", errors);
    }
    let nested_additional = matches!(additional(v), Additional::Schema(_) | Additional::Bool(true));
    if nested_additional {
        forbid("additionalProperties", "must be undefined to be structural", errors);
    }
    if default_of(v).is_some() {
        forbid("default", "must be undefined to be structural", errors);
    }
    if !text(&v.title).is_empty() {
        forbid("title", "must be empty to be structural", errors);
    }
    if !text(&v.description).is_empty() {
        forbid("description", "must be empty to be structural", errors);
    }
    if is_nullable(v) {
        forbid("nullable", "must be false to be structural", errors);
    }
    if preserves_unknown(v) {
        forbid("x-kubernetes-preserve-unknown-fields", "must be false to be structural", errors);
    }
    if is_embedded(v) {
        forbid("x-kubernetes-embedded-resource", "must be false to be structural", errors);
    }
    if is_int_or_string(v) {
        forbid("x-kubernetes-int-or-string", "must be false to be structural", errors);
    }
    if !list(&v.x_kubernetes_list_map_keys).is_empty() {
        forbid("x-kubernetes-list-map-keys", "must be empty to be structural", errors);
    }
    if v.x_kubernetes_list_type.is_some() {
        forbid("x-kubernetes-list-type", "must be undefined to be structural", errors);
    }
    if v.x_kubernetes_map_type.is_some() {
        forbid("x-kubernetes-map-type", "must be undefined to be structural", errors);
    }
    if !list(&v.x_kubernetes_validations).is_empty() {
        forbid("x-kubernetes-validations", "must be empty to be structural", errors);
    }
    if has_property(v, "metadata") {
        errors.push(FieldError::forbidden(
            &path.child("properties").key("metadata"),
            "must not be specified in a nested context",
        ));
    }
}

/// Every property a value validation (anyOf, allOf, ...) of the root mentions must also be
/// declared in the structural part of the schema.
fn completeness(s: &JSONSchemaProps, path: &FieldPath, errors: &mut ErrorList) {
    value_completeness(s, Some(s), path, path, errors);
}

fn value_completeness(
    v: &JSONSchemaProps,
    s: Option<&JSONSchemaProps>,
    s_path: &FieldPath,
    v_path: &FieldPath,
    errors: &mut ErrorList,
) {
    let Some(s) = s else {
        errors.push(FieldError::required(s_path, format!("because it is defined in {v_path}")));
        return;
    };
    if let Some(not) = &v.not {
        nested_completeness(not, Some(s), s_path, &v_path.child("not"), errors);
    }
    for (i, sub) in list(&v.all_of).iter().enumerate() {
        nested_completeness(sub, Some(s), s_path, &v_path.child("allOf").index(i), errors);
    }
    for (i, sub) in list(&v.any_of).iter().enumerate() {
        nested_completeness(sub, Some(s), s_path, &v_path.child("anyOf").index(i), errors);
    }
    for (i, sub) in list(&v.one_of).iter().enumerate() {
        nested_completeness(sub, Some(s), s_path, &v_path.child("oneOf").index(i), errors);
    }
}

fn nested_completeness(
    v: &JSONSchemaProps,
    s: Option<&JSONSchemaProps>,
    s_path: &FieldPath,
    v_path: &FieldPath,
    errors: &mut ErrorList,
) {
    let Some(s) = s else {
        errors.push(FieldError::required(s_path, format!("because it is defined in {v_path}")));
        return;
    };
    value_completeness(v, Some(s), s_path, v_path, errors);
    if let Some(item) = item_schema(v) {
        nested_completeness(item, item_schema(s), &s_path.child("items"), &v_path.child("items"), errors);
    }
    for (key, prop) in properties(v) {
        let v_child = v_path.child("properties").key(key);
        match property(s, key) {
            Some(s_prop) => nested_completeness(
                prop,
                Some(s_prop),
                &s_path.child("properties").key(key),
                &v_child,
                errors,
            ),
            None => errors.push(FieldError::required(
                &s_path.child("properties").key(key),
                format!("because it is defined in {v_child}"),
            )),
        }
    }
}
