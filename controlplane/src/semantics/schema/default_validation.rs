//! Validation of `default` values inside a structural schema (kube's `defaulting.ValidateDefaults`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use kruise_machinery::field::{ErrorList, FieldPath};

use super::{
    accessors::{default_of, is_embedded, is_meta_field, item_schema, properties},
    field_errors::invalid_value,
    openapi,
    prune::Pruner,
};

pub(super) fn validate(path: &FieldPath, s: &JSONSchemaProps) -> ErrorList {
    let mut errors = ErrorList::new();
    walk(path, s, true, false, &mut errors);
    errors
}

fn walk(
    path: &FieldPath,
    s: &JSONSchemaProps,
    resource_root: bool,
    inside_meta: bool,
    errors: &mut ErrorList,
) {
    let embedded = resource_root || is_embedded(s);
    let inside_meta = if is_embedded(s) { false } else { inside_meta };
    if let Some(default) = default_of(s) {
        let default_path = path.child("default");
        if !inside_meta {
            let mut pruned = default.clone();
            let mut pruner = Pruner { path: String::new(), unknown: Vec::new(), track: false };
            pruner.prune(&mut pruned, Some(s), is_embedded(s));
            if &pruned != default {
                errors.push(invalid_value(&default_path, default, "must not have unknown fields"));
            }
        }
        let outcome = openapi::validate_default(default, s);
        errors.extend(openapi::to_field_errors(&outcome, Some(&default_path)));
    }
    if let Some(item) = item_schema(s) {
        walk(&path.child("items"), item, false, inside_meta, errors);
    }
    for (key, prop) in properties(s) {
        let child_meta = inside_meta || (embedded && is_meta_field(key));
        walk(&path.child("properties").key(key), prop, false, child_meta, errors);
    }
}
