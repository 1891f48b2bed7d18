//! ResourceDistribution validation (INVENTORY "ResourceDistribution"; upstream
//! `pkg/webhook/resourcedistribution/validating`). The distributed resource must be a complete
//! core/v1 Secret or ConfigMap that the API server would accept, its identity (apiVersion, kind,
//! name) may not change, and the target lists must name valid namespaces without contradicting
//! each other.
//!
//! Upstream finishes with a server-side dry-run create of the resource; here the parts of that
//! check that need no cluster (decoding, names, keys, sizes, the per-type required keys of a
//! Secret) are done directly.

use std::{collections::BTreeSet, sync::LazyLock};

use k8s_openapi::{
    ByteString,
    api::core::v1::{ConfigMap, Secret},
    apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta},
};
use regex::Regex;
use serde_json::{Map, Value};

use super::meta::{
    dns1123_label_problems, dns1123_subdomain_problems, validate_annotations, validate_label_selector,
    validate_labels, validate_object_meta,
};
use crate::{
    apps::{v1alpha1, v1beta1},
    field::{ErrorList, FieldError, FieldPath, quoted},
};

/// The kinds a ResourceDistribution may distribute (all in the core group, version v1).
pub const RESOURCEDISTRIBUTION_SUPPORTED_KINDS: &[&str] = &["ConfigMap", "Secret"];

/// Largest total payload of a distributed Secret or ConfigMap, as the API server enforces it.
const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;

#[allow(clippy::unwrap_used)] // constant pattern
static CONFIG_KEY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[-._a-zA-Z0-9]+$").unwrap());

/// Validates a v1beta1 ResourceDistribution; with `old`, also that the resource keeps its
/// apiVersion, kind and name.
pub fn validate_resourcedistribution_v1beta1(
    distribution: &v1beta1::ResourceDistribution,
    old: Option<&v1beta1::ResourceDistribution>,
) -> ErrorList {
    let spec = &distribution.spec;
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&distribution.metadata, false);
    errors.extend(validate_distributed_resource(
        &spec.resource,
        old.map(|old| &old.spec.resource),
        &path.child("resource"),
    ));
    let targets = &spec.targets;
    errors.extend(validate_targets(
        &targets.included_namespaces,
        &targets.excluded_namespaces,
        &targets.namespace_selector,
        "namespaceSelector",
        &path.child("targets"),
    ));
    errors
}

/// Validates a v1alpha1 ResourceDistribution (same rules; the namespace selector is reported
/// at `spec.targets.namespaceLabelSelector`).
pub fn validate_resourcedistribution_v1alpha1(
    distribution: &v1alpha1::ResourceDistribution,
    old: Option<&v1alpha1::ResourceDistribution>,
) -> ErrorList {
    let spec = &distribution.spec;
    let path = FieldPath::root("spec");
    let mut errors = validate_object_meta(&distribution.metadata, false);
    errors.extend(validate_distributed_resource(
        &spec.resource,
        old.map(|old| &old.spec.resource),
        &path.child("resource"),
    ));
    let targets = &spec.targets;
    errors.extend(validate_targets(
        &targets.included_namespaces,
        &targets.excluded_namespaces,
        &targets.namespace_label_selector,
        "namespaceLabelSelector",
        &path.child("targets"),
    ));
    errors
}

/// Checks the embedded resource; `old` is the resource before an update.
fn validate_distributed_resource(resource: &Value, old: Option<&Value>, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    let object = match resource {
        Value::Null => {
            errors.push(FieldError::required(path, "the Secret or ConfigMap to distribute is required"));
            return errors;
        }
        Value::Object(object) if object.is_empty() => {
            errors.push(FieldError::required(path, "the Secret or ConfigMap to distribute is required"));
            return errors;
        }
        Value::Object(object) => object,
        other => {
            errors.push(FieldError::invalid(
                path,
                json_type(other),
                "must be an object holding a complete Secret or ConfigMap",
            ));
            return errors;
        }
    };

    let kind = match string_member(object, "kind", path) {
        Err(error) => {
            errors.push(error);
            None
        }
        Ok(None) => {
            errors.push(FieldError::required(&path.child("kind"), "must be Secret or ConfigMap"));
            None
        }
        Ok(Some(kind)) => {
            if !RESOURCEDISTRIBUTION_SUPPORTED_KINDS.contains(&kind) {
                errors.push(FieldError::not_supported(
                    &path.child("kind"),
                    kind,
                    RESOURCEDISTRIBUTION_SUPPORTED_KINDS,
                ));
            }
            Some(kind)
        }
    };
    match string_member(object, "apiVersion", path) {
        Err(error) => errors.push(error),
        Ok(None) => errors.push(FieldError::required(&path.child("apiVersion"), "must be v1")),
        Ok(Some("v1")) => {}
        Ok(Some(other)) => errors.push(FieldError::invalid(
            &path.child("apiVersion"),
            quoted(other),
            "Secret and ConfigMap are served at apiVersion v1",
        )),
    }

    let meta_path = path.child("metadata");
    let meta = match object.get("metadata") {
        None | Some(Value::Null) => Some(ObjectMeta::default()),
        Some(value) => match serde_json::from_value::<ObjectMeta>(value.clone()) {
            Ok(meta) => Some(meta),
            Err(error) => {
                errors.push(FieldError::invalid(&meta_path, "", format!("cannot be decoded: {error}")));
                None
            }
        },
    };
    if let Some(meta) = &meta {
        match meta.name.as_deref() {
            None | Some("") => errors.push(FieldError::required(
                &meta_path.child("name"),
                "the distributed resource needs a name (copies are created under it)",
            )),
            Some(name) => {
                for problem in dns1123_subdomain_problems(name) {
                    errors.push(FieldError::invalid(&meta_path.child("name"), quoted(name), problem));
                }
            }
        }
        errors.extend(validate_labels(meta.labels.as_ref(), &meta_path.child("labels")));
        errors.extend(validate_annotations(meta.annotations.as_ref(), &meta_path.child("annotations")));
    }

    // Decode the body (everything but the identity and metadata) as the kind it claims to be.
    let mut body = object.clone();
    for member in ["apiVersion", "kind", "metadata"] {
        body.remove(member);
    }
    match kind {
        Some("ConfigMap") => match serde_json::from_value::<ConfigMap>(Value::Object(body)) {
            Ok(config_map) => errors.extend(validate_config_map_body(&config_map, path)),
            Err(error) => {
                errors.push(FieldError::invalid(path, "", format!("is not a valid ConfigMap: {error}")))
            }
        },
        Some("Secret") => match serde_json::from_value::<Secret>(Value::Object(body)) {
            Ok(secret) => {
                let annotations = meta.as_ref().and_then(|meta| meta.annotations.as_ref());
                errors.extend(validate_secret_body(&secret, annotations, path));
            }
            Err(error) => {
                errors.push(FieldError::invalid(path, "", format!("is not a valid Secret: {error}")))
            }
        },
        _ => {}
    }

    if let Some(Value::Object(old_object)) = old
        && identity(old_object) != identity(object)
    {
        errors.push(FieldError::invalid(
            path,
            "",
            "the apiVersion, kind and metadata.name of the distributed resource cannot be changed",
        ));
    }
    errors
}

/// A string member of the resource (`None` when absent or empty); an error when the member
/// has another JSON type.
fn string_member<'a>(
    object: &'a Map<String, Value>,
    name: &str,
    path: &FieldPath,
) -> Result<Option<&'a str>, FieldError> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.is_empty() => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(FieldError::invalid(&path.child(name), json_type(other), "must be a string")),
    }
}

/// apiVersion, kind and name of an embedded resource, as written.
fn identity(object: &Map<String, Value>) -> (Option<&Value>, Option<&Value>, Option<&Value>) {
    let name = object.get("metadata").and_then(|meta| meta.get("name"));
    (object.get("apiVersion"), object.get("kind"), name)
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Problems with `key` as a key of ConfigMap or Secret data.
fn config_key_problems(key: &str) -> Vec<&'static str> {
    let mut problems = Vec::new();
    if key.len() > 253 {
        problems.push("must be no more than 253 characters");
    }
    if !CONFIG_KEY.is_match(key) {
        problems.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.'");
    }
    if key == "." {
        problems.push("must not be '.'");
    } else if key == ".." {
        problems.push("must not be '..'");
    } else if key.starts_with("..") {
        problems.push("must not start with '..'");
    }
    problems
}

fn validate_keys<'a>(keys: impl Iterator<Item = &'a String>, path: &FieldPath) -> ErrorList {
    let mut errors = ErrorList::new();
    for key in keys {
        for problem in config_key_problems(key) {
            errors.push(FieldError::invalid(&path.key(key), quoted(key), problem));
        }
    }
    errors
}

fn validate_config_map_body(config_map: &ConfigMap, path: &FieldPath) -> ErrorList {
    let data = config_map.data.clone().unwrap_or_default();
    let binary = config_map.binary_data.clone().unwrap_or_default();
    let mut errors = validate_keys(data.keys(), &path.child("data"));
    errors.extend(validate_keys(binary.keys(), &path.child("binaryData")));
    for key in data.keys().filter(|key| binary.contains_key(*key)) {
        errors.push(FieldError::invalid(
            &path.child("data").key(key),
            quoted(key),
            "also present in binaryData",
        ));
    }
    let size: usize = data.iter().map(|(key, value)| key.len() + value.len()).sum::<usize>()
        + binary.iter().map(|(key, ByteString(bytes))| key.len() + bytes.len()).sum::<usize>();
    if size > MAX_PAYLOAD_BYTES {
        errors.push(FieldError::invalid(
            &path.child("data"),
            "",
            format!("data and binaryData together must have at most {MAX_PAYLOAD_BYTES} bytes"),
        ));
    }
    errors
}

fn validate_secret_body(
    secret: &Secret,
    annotations: Option<&std::collections::BTreeMap<String, String>>,
    path: &FieldPath,
) -> ErrorList {
    let data = secret.data.clone().unwrap_or_default();
    let string_data = secret.string_data.clone().unwrap_or_default();
    let data_path = path.child("data");
    let mut errors = validate_keys(data.keys(), &data_path);
    errors.extend(validate_keys(string_data.keys(), &path.child("stringData")));

    // The API server folds stringData into data before it checks sizes and required keys.
    let mut merged: std::collections::BTreeMap<&str, &[u8]> =
        data.iter().map(|(key, ByteString(bytes))| (key.as_str(), bytes.as_slice())).collect();
    for (key, value) in &string_data {
        merged.insert(key, value.as_bytes());
    }
    let size: usize = merged.values().map(|value| value.len()).sum();
    if size > MAX_PAYLOAD_BYTES {
        errors.push(FieldError::invalid(
            &data_path,
            "",
            format!("secret data must have at most {MAX_PAYLOAD_BYTES} bytes"),
        ));
    }

    let require = |key: &str, errors: &mut ErrorList| {
        if !merged.contains_key(key) {
            errors.push(FieldError::required(&data_path.key(key), ""));
        }
    };
    let require_json = |key: &str, errors: &mut ErrorList| match merged.get(key) {
        None => errors.push(FieldError::required(&data_path.key(key), "")),
        Some(bytes) => {
            if let Err(error) = serde_json::from_slice::<Value>(bytes) {
                errors.push(FieldError::invalid(
                    &data_path.key(key),
                    "<secret contents redacted>",
                    error.to_string(),
                ));
            }
        }
    };
    match secret.type_.as_deref().unwrap_or("Opaque") {
        "kubernetes.io/service-account-token" => {
            const ACCOUNT: &str = "kubernetes.io/service-account.name";
            if annotations.and_then(|a| a.get(ACCOUNT)).is_none_or(|name| name.is_empty()) {
                errors.push(FieldError::required(
                    &path.child("metadata").child("annotations").key(ACCOUNT),
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" => require_json(".dockercfg", &mut errors),
        "kubernetes.io/dockerconfigjson" => require_json(".dockerconfigjson", &mut errors),
        "kubernetes.io/basic-auth"
            if !merged.contains_key("username") && !merged.contains_key("password") =>
        {
            require("username", &mut errors);
            require("password", &mut errors);
        }
        "kubernetes.io/ssh-auth" => require("ssh-privatekey", &mut errors),
        "kubernetes.io/tls" => {
            require("tls.key", &mut errors);
            require("tls.crt", &mut errors);
        }
        _ => {}
    }
    errors
}

/// Target namespaces: every listed name a valid namespace name, no namespace both included and
/// excluded, and a valid namespace selector (reported under `selector_field`).
fn validate_targets(
    included: &v1beta1::ResourceDistributionTargetNamespaces,
    excluded: &v1beta1::ResourceDistributionTargetNamespaces,
    selector: &LabelSelector,
    selector_field: &str,
    path: &FieldPath,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let check_names =
        |list: &v1beta1::ResourceDistributionTargetNamespaces, field: &str, errors: &mut ErrorList| {
            for (index, namespace) in list.list.iter().enumerate() {
                let name_path = path.child(field).child("list").index(index).child("name");
                if namespace.name.is_empty() {
                    errors.push(FieldError::required(&name_path, "a namespace name is required"));
                    continue;
                }
                for problem in dns1123_label_problems(&namespace.name) {
                    errors.push(FieldError::invalid(&name_path, quoted(&namespace.name), problem));
                }
            }
        };
    check_names(included, "includedNamespaces", &mut errors);
    check_names(excluded, "excludedNamespaces", &mut errors);

    let included_names: BTreeSet<&str> = included.list.iter().map(|ns| ns.name.as_str()).collect();
    for (index, namespace) in excluded.list.iter().enumerate() {
        if !namespace.name.is_empty() && included_names.contains(namespace.name.as_str()) {
            errors.push(FieldError::invalid(
                &path.child("excludedNamespaces").child("list").index(index).child("name"),
                quoted(&namespace.name),
                "ambiguous targets: this namespace is also listed in includedNamespaces",
            ));
        }
    }
    errors.extend(validate_label_selector(selector, &path.child(selector_field)));
    errors
}
