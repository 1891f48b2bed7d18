//! Defaulting and validation of CustomResourceDefinition objects: names, versions, scope,
//! subresources, printer columns, conversion, stored versions and API approval (the schema of each
//! version is checked by `crd_schema`).

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionNames, CustomResourceSubresources, JSONSchemaProps, JSONSchemaPropsOrArray,
    JSONSchemaPropsOrBool, ServiceReference,
};
use kruise_machinery::field::{ErrorList, FieldError, FieldPath};
use serde_json::Value;

use super::{
    accessors::{additional_schema, list, properties, text},
    crd_schema::crd_validation,
    field_errors::{invalid_str, not_supported},
    go_json, names,
};
use crate::semantics::jsonpath::gofmt;

/// Applies the defaults kube-apiserver gives a `apiextensions.k8s.io/v1` CRD on create and
/// update: `names.singular` (lowercased kind), `names.listKind` (`<Kind>List`), a `None`
/// conversion strategy, and port 443 for a conversion webhook service.
pub fn default_crd(crd: &mut CustomResourceDefinition) {
    let names = &mut crd.spec.names;
    if text(&names.singular).is_empty() {
        names.singular = Some(names.kind.to_lowercase());
    }
    if text(&names.list_kind).is_empty() && !names.kind.is_empty() {
        names.list_kind = Some(format!("{}List", names.kind));
    }
    let conversion = crd
        .spec
        .conversion
        .get_or_insert_with(|| CustomResourceConversion { strategy: "None".to_string(), webhook: None });
    if let Some(service) =
        conversion.webhook.as_mut().and_then(|w| w.client_config.as_mut()).and_then(|c| c.service.as_mut())
        && service.port.is_none()
    {
        service.port = Some(443);
    }
}

/// Validates a CustomResourceDefinition object the way the apiserver does on create (after
/// [`default_crd`], which this applies to a copy): names (plural lowercase, kind, listKind,
/// singular, shortNames, categories), metadata.name == "<plural>.<group>", group, scope, exactly
/// one storage version, unique DNS-1035 version names, every version's schema structural (types
/// everywhere except under int-or-string/preserve-unknown, no $ref, properties with
/// additionalProperties is an error, metadata restricted to name/generateName, list and map
/// types consistent, defaults that validate against their schema and carry no unknown fields),
/// subresources (scale paths), printer columns, conversion strategy (None|Webhook with
/// clientConfig and conversionReviewVersions), stored versions and the API-approval annotation of
/// `*.k8s.io` groups.
///
/// Paths follow kube-apiserver, which validates its internal form of the CRD: when all versions
/// share one schema (always the case for a single version) schema errors are reported under
/// `spec.validation.openAPIV3Schema...`, otherwise under `spec.versions[i].schema.openAPIV3Schema...`
/// (likewise `spec.subresources` and `spec.additionalPrinterColumns`), and webhook conversion
/// fields under `spec.conversion.webhookClientConfig` / `spec.conversion.conversionReviewVersions`.
pub fn validate_crd(crd: &CustomResourceDefinition) -> ErrorList {
    let mut crd = crd.clone();
    default_crd(&mut crd);
    let mut errors = ErrorList::new();
    validate_crd_name(&crd, &mut errors);
    errors.extend(crd_spec(&crd));
    let accepted = crd.status.as_ref().map(|s| s.accepted_names.clone());
    if let Some(Some(names)) = accepted {
        validate_names(&names, &FieldPath::root("status").child("acceptedNames"), &mut errors);
    }
    validate_stored_versions(&crd, &mut errors);
    validate_api_approval(&crd, &mut errors);
    if crd.spec.preserve_unknown_fields == Some(true) {
        errors.push(FieldError::invalid(
            &FieldPath::root("spec").child("preserveUnknownFields"),
            "true",
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    errors
}

fn validate_crd_name(crd: &CustomResourceDefinition, errors: &mut ErrorList) {
    let metadata = FieldPath::root("metadata");
    let required = format!("{}.{}", crd.spec.names.plural, crd.spec.group);
    let check = |name: &str, prefix: bool| -> Vec<String> {
        let candidate = if prefix { name.strip_suffix('-').unwrap_or(name) } else { name };
        let mut problems = names::dns1123_subdomain(candidate);
        if name != required {
            problems.push("must be spec.names.plural+\".\"+spec.group".to_string());
        }
        problems
    };
    let generate_name = text(&crd.metadata.generate_name);
    if !generate_name.is_empty() {
        for problem in check(generate_name, true) {
            errors.push(invalid_str(&metadata.child("generateName"), generate_name, problem));
        }
    }
    let name = text(&crd.metadata.name);
    if name.is_empty() {
        errors.push(FieldError::required(&metadata.child("name"), "name or generateName is required"));
    } else {
        for problem in check(name, false) {
            errors.push(invalid_str(&metadata.child("name"), name, problem));
        }
    }
    if !text(&crd.metadata.namespace).is_empty() {
        errors.push(FieldError::forbidden(&metadata.child("namespace"), "not allowed on this type"));
    }
}

/// Where the per-version parts of a v1 CRD live in kube-apiserver's internal form.
struct Hoisting {
    schema: bool,
    subresources: bool,
    columns: bool,
    selectable_fields: bool,
}

fn hoisting(crd: &CustomResourceDefinition) -> Hoisting {
    let versions = &crd.spec.versions;
    let Some(first) = versions.first() else {
        return Hoisting { schema: false, subresources: false, columns: false, selectable_fields: false };
    };
    Hoisting {
        schema: versions.iter().all(|v| v.schema == first.schema),
        subresources: versions.iter().all(|v| v.subresources == first.subresources),
        columns: versions
            .iter()
            .all(|v| list(&v.additional_printer_columns) == list(&first.additional_printer_columns)),
        selectable_fields: versions
            .iter()
            .all(|v| list(&v.selectable_fields) == list(&first.selectable_fields)),
    }
}

/// The versions as kube prints them in errors: its internal Go structs as JSON (field names
/// capitalized, every field present, hoisted parts `null`).
fn crd_versions_value(crd: &CustomResourceDefinition) -> String {
    let hoist = hoisting(crd);
    let versions: Vec<String> = crd
        .spec
        .versions
        .iter()
        .map(|v| {
            let schema = match (&v.schema, hoist.schema) {
                (Some(validation), false) => go_json::validation(validation),
                _ => "null".to_string(),
            };
            let subresources = match (&v.subresources, hoist.subresources) {
                (Some(sub), false) => go_json::subresources(sub),
                _ => "null".to_string(),
            };
            let columns = match (&v.additional_printer_columns, hoist.columns) {
                (Some(columns), false) => go_json::array(columns.iter().map(go_json::column)),
                _ => "null".to_string(),
            };
            let selectable = match (&v.selectable_fields, hoist.selectable_fields) {
                (Some(fields), false) => go_json::array(
                    fields.iter().map(|f| go_json::object(&[("JSONPath", go_json::string(&f.json_path))])),
                ),
                _ => "null".to_string(),
            };
            go_json::object(&[
                ("Name", go_json::string(&v.name)),
                ("Served", v.served.to_string()),
                ("Storage", v.storage.to_string()),
                ("Deprecated", v.deprecated.unwrap_or(false).to_string()),
                ("DeprecationWarning", go_json::opt_string(&v.deprecation_warning)),
                ("Schema", schema),
                ("Subresources", subresources),
                ("AdditionalPrinterColumns", columns),
                ("SelectableFields", selectable),
            ])
        })
        .collect();
    format!("[{}]", versions.join(","))
}

fn any_schema(crd: &CustomResourceDefinition, predicate: &dyn Fn(&JSONSchemaProps) -> bool) -> bool {
    crd.spec
        .versions
        .iter()
        .filter_map(|v| v.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()))
        .any(|s| schema_has(s, predicate))
}

fn schema_has(s: &JSONSchemaProps, predicate: &dyn Fn(&JSONSchemaProps) -> bool) -> bool {
    if predicate(s) {
        return true;
    }
    let mut children: Vec<&JSONSchemaProps> = Vec::new();
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => children.push(item),
        Some(JSONSchemaPropsOrArray::Schemas(items)) => children.extend(items),
        None => {}
    }
    children.extend(list(&s.all_of));
    children.extend(list(&s.any_of));
    children.extend(list(&s.one_of));
    children.extend(s.not.as_deref());
    children.extend(properties(s).map(|(_, p)| p));
    children.extend(additional_schema(s));
    children.extend(s.pattern_properties.iter().flatten().map(|(_, p)| p));
    if let Some(JSONSchemaPropsOrBool::Schema(item)) = &s.additional_items {
        children.push(item);
    }
    children.extend(s.definitions.iter().flatten().map(|(_, p)| p));
    children.iter().any(|c| schema_has(c, predicate))
}

fn crd_spec(crd: &CustomResourceDefinition) -> ErrorList {
    let spec = &crd.spec;
    let path = FieldPath::root("spec");
    let mut errors = ErrorList::new();

    if spec.group.is_empty() {
        errors.push(FieldError::required(&path.child("group"), ""));
    } else {
        let problems = names::dns1123_subdomain(&spec.group);
        if !problems.is_empty() {
            errors.push(invalid_str(&path.child("group"), &spec.group, problems.join(",")));
        } else if spec.group.split('.').count() < 2 {
            errors.push(invalid_str(
                &path.child("group"),
                &spec.group,
                "should be a domain with at least one dot",
            ));
        }
    }
    validate_enum(&path.child("scope"), &spec.scope, &["Cluster", "Namespaced"], &mut errors);

    let hoist = hoisting(crd);
    let top_schema = if hoist.schema { spec.versions.first().and_then(|v| v.schema.as_ref()) } else { None };
    let has_top_schema = top_schema.is_some_and(|s| s.open_api_v3_schema.is_some());
    if !has_top_schema {
        for (i, version) in spec.versions.iter().enumerate() {
            if version.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()).is_none() {
                errors.push(FieldError::required(
                    &path.child("versions").index(i).child("schema").child("openAPIV3Schema"),
                    "",
                ));
            }
        }
    }
    let preserve = spec.preserve_unknown_fields.unwrap_or(false);
    if any_schema(crd, &|s| s.default.is_some()) && preserve {
        errors.push(FieldError::invalid(
            &path.child("preserveUnknownFields"),
            "true",
            "must be false in order to use defaults in the schema",
        ));
    }

    let status_enabled =
        |subresources: Option<&CustomResourceSubresources>| subresources.is_some_and(|s| s.status.is_some());
    let mut storage_count = 0;
    let mut seen = HashSet::new();
    let mut unique = true;
    for (i, version) in spec.versions.iter().enumerate() {
        let version_path = path.child("versions").index(i);
        if version.storage {
            storage_count += 1;
        }
        if !seen.insert(version.name.as_str()) {
            unique = false;
        }
        let problems = names::dns1035_label(&version.name);
        if !problems.is_empty() {
            errors.push(invalid_str(&version_path.child("name"), &version.name, problems.join(",")));
        }
        let subresources = if hoist.subresources {
            spec.versions.first().and_then(|v| v.subresources.as_ref())
        } else {
            version.subresources.as_ref()
        };
        validate_deprecation(
            version.deprecated.unwrap_or(false),
            &version.deprecation_warning,
            &version_path,
            &mut errors,
        );
        if !hoist.schema {
            errors.extend(crd_validation(
                version.schema.as_ref(),
                status_enabled(subresources),
                &version_path.child("schema"),
            ));
        }
        if !hoist.subresources {
            validate_subresources(
                version.subresources.as_ref(),
                &version_path.child("subresources"),
                &mut errors,
            );
        }
        if !hoist.columns {
            for (j, column) in list(&version.additional_printer_columns).iter().enumerate() {
                validate_column(
                    column,
                    &version_path.child("additionalPrinterColumns").index(j),
                    &mut errors,
                );
            }
        }
    }
    if !unique {
        errors.push(FieldError::invalid(
            &path.child("versions"),
            crd_versions_value(crd),
            "must contain unique version names",
        ));
    }
    if storage_count != 1 {
        errors.push(FieldError::invalid(
            &path.child("versions"),
            crd_versions_value(crd),
            "must have exactly one version marked as storage version",
        ));
    }
    if let Some(first) = spec.versions.first() {
        let problems = names::dns1035_label(&first.name);
        if !problems.is_empty() {
            errors.push(invalid_str(&path.child("version"), &first.name, problems.join(",")));
        }
    }

    let names_path = path.child("names");
    let names = &spec.names;
    if names.plural.is_empty() {
        errors.push(FieldError::required(&names_path.child("plural"), ""));
    }
    if text(&names.singular).is_empty() {
        errors.push(FieldError::required(&names_path.child("singular"), ""));
    }
    if names.kind.is_empty() {
        errors.push(FieldError::required(&names_path.child("kind"), ""));
    }
    if text(&names.list_kind).is_empty() {
        errors.push(FieldError::required(&names_path.child("listKind"), ""));
    }
    validate_names(names, &names_path, &mut errors);

    if hoist.schema {
        let any_status = spec.versions.iter().any(|v| status_enabled(v.subresources.as_ref()));
        errors.extend(crd_validation(top_schema, any_status, &path.child("validation")));
    }
    if hoist.subresources {
        let top = spec.versions.first().and_then(|v| v.subresources.as_ref());
        validate_subresources(top, &path.child("subresources"), &mut errors);
    }
    if hoist.columns {
        let top = spec.versions.first().map(|v| list(&v.additional_printer_columns)).unwrap_or(&[]);
        for (j, column) in top.iter().enumerate() {
            validate_column(column, &path.child("additionalPrinterColumns").index(j), &mut errors);
        }
    }

    if let Some(conversion) = &spec.conversion {
        if conversion.strategy != "None" && preserve {
            errors.push(invalid_str(
                &path.child("conversion").child("strategy"),
                &conversion.strategy,
                "must be None if spec.preserveUnknownFields is true",
            ));
        }
        validate_conversion(conversion, &path.child("conversion"), &mut errors);
    }
    errors
}

fn validate_enum(path: &FieldPath, value: &str, accepted: &[&str], errors: &mut ErrorList) {
    if value.is_empty() {
        errors.push(FieldError::required(path, ""));
    } else if !accepted.contains(&value) {
        errors.push(not_supported(path, value, accepted));
    }
}

fn validate_deprecation(
    deprecated: bool,
    warning: &Option<String>,
    path: &FieldPath,
    errors: &mut ErrorList,
) {
    let field = path.child("deprecationWarning");
    let Some(warning) = warning else { return };
    let rendered = gofmt::json(&Value::String(warning.clone()));
    if !deprecated {
        errors.push(FieldError::invalid(&field, rendered, "can only be set for deprecated versions"));
        return;
    }
    if warning.len() > 256 {
        errors.push(FieldError::invalid(&field, rendered.clone(), "must be <= 256 characters long"));
    }
    if warning.is_empty() {
        errors.push(FieldError::invalid(&field, rendered.clone(), "must not be an empty string"));
    }
    if let Some((index, _)) = warning.char_indices().find(|(_, c)| c.is_control()) {
        errors.push(FieldError::invalid(
            &field,
            rendered,
            format!(
                "must only contain printable UTF-8 characters; non-printable character found at index {index}"
            ),
        ));
    }
}

fn validate_names(names: &CustomResourceDefinitionNames, path: &FieldPath, errors: &mut ErrorList) {
    let plain = |field: &str, value: &str, errors: &mut ErrorList| {
        let problems = names::dns1035_label(value);
        if !value.is_empty() && !problems.is_empty() {
            errors.push(invalid_str(&path.child(field), value, problems.join(",")));
        }
    };
    let mixed = |field: &str, value: &str, errors: &mut ErrorList| {
        let problems = names::dns1035_label(&value.to_lowercase());
        if !value.is_empty() && !problems.is_empty() {
            errors.push(invalid_str(
                &path.child(field),
                value,
                format!("may have mixed case, but should otherwise match: {}", problems.join(",")),
            ));
        }
    };
    plain("plural", &names.plural, errors);
    plain("singular", text(&names.singular), errors);
    mixed("kind", &names.kind, errors);
    mixed("listKind", text(&names.list_kind), errors);
    for (i, short) in list(&names.short_names).iter().enumerate() {
        let problems = names::dns1035_label(short);
        if !problems.is_empty() {
            errors.push(invalid_str(&path.child("shortNames").index(i), short, problems.join(",")));
        }
    }
    if !names.kind.is_empty() && Some(&names.kind) == names.list_kind.as_ref() {
        errors.push(invalid_str(
            &path.child("listKind"),
            &names.kind,
            "kind and listKind may not be the same",
        ));
    }
    for (i, category) in list(&names.categories).iter().enumerate() {
        let problems = names::dns1035_label(category);
        if !problems.is_empty() {
            errors.push(invalid_str(&path.child("categories").index(i), category, problems.join(",")));
        }
    }
}

fn validate_simple_json_path(value: &str, path: &FieldPath) -> Option<FieldError> {
    if value.is_empty() {
        Some(invalid_str(path, value, "must not be empty"))
    } else if !value.starts_with('.') {
        Some(invalid_str(path, value, "must be a simple json path starting with ."))
    } else {
        None
    }
}

fn validate_subresources(
    subresources: Option<&CustomResourceSubresources>,
    path: &FieldPath,
    errors: &mut ErrorList,
) {
    let Some(scale) = subresources.and_then(|s| s.scale.as_ref()) else { return };
    let spec_path = path.child("scale.specReplicasPath");
    if scale.spec_replicas_path.is_empty() {
        errors.push(FieldError::required(&spec_path, ""));
    } else if let Some(error) = validate_simple_json_path(&scale.spec_replicas_path, &spec_path) {
        errors.push(error);
    } else if !scale.spec_replicas_path.starts_with(".spec.") {
        errors.push(invalid_str(&spec_path, &scale.spec_replicas_path, "should be a json path under .spec"));
    }
    let status_path = path.child("scale.statusReplicasPath");
    if scale.status_replicas_path.is_empty() {
        errors.push(FieldError::required(&status_path, ""));
    } else if let Some(error) = validate_simple_json_path(&scale.status_replicas_path, &status_path) {
        errors.push(error);
    } else if !scale.status_replicas_path.starts_with(".status.") {
        errors.push(invalid_str(
            &status_path,
            &scale.status_replicas_path,
            "should be a json path under .status",
        ));
    }
    let selector = text(&scale.label_selector_path);
    if !selector.is_empty() {
        let selector_path = path.child("scale.labelSelectorPath");
        if let Some(error) = validate_simple_json_path(selector, &selector_path) {
            errors.push(error);
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            errors.push(invalid_str(
                &selector_path,
                selector,
                "should be a json path under either .spec or .status",
            ));
        }
    }
}

fn validate_column(column: &CustomResourceColumnDefinition, path: &FieldPath, errors: &mut ErrorList) {
    const TYPES: &str = "boolean,date,integer,number,string";
    const FORMATS: [&str; 8] = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"];
    if column.name.is_empty() {
        errors.push(FieldError::required(&path.child("name"), ""));
    }
    if column.type_.is_empty() {
        errors.push(FieldError::required(&path.child("type"), format!("must be one of {TYPES}")));
    } else if !TYPES.split(',').any(|t| t == column.type_) {
        errors.push(invalid_str(&path.child("type"), &column.type_, format!("must be one of {TYPES}")));
    }
    let format = text(&column.format);
    if !format.is_empty() && !FORMATS.contains(&format) {
        errors.push(invalid_str(
            &path.child("format"),
            format,
            format!("must be one of {}", FORMATS.join(",")),
        ));
    }
    let json_path = path.child("JSONPath");
    if column.json_path.is_empty() {
        errors.push(FieldError::required(&json_path, ""));
    } else if let Some(error) = validate_simple_json_path(&column.json_path, &json_path) {
        errors.push(error);
    }
}

fn validate_conversion(conversion: &CustomResourceConversion, path: &FieldPath, errors: &mut ErrorList) {
    validate_enum(&path.child("strategy"), &conversion.strategy, &["None", "Webhook"], errors);
    let client_config = conversion.webhook.as_ref().and_then(|w| w.client_config.as_ref());
    let review_versions =
        conversion.webhook.as_ref().map(|w| w.conversion_review_versions.as_slice()).unwrap_or(&[]);
    let config_path = path.child("webhookClientConfig");
    let versions_path = path.child("conversionReviewVersions");
    if conversion.strategy != "Webhook" {
        if client_config.is_some() {
            errors.push(FieldError::forbidden(
                &config_path,
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !review_versions.is_empty() {
            errors.push(FieldError::forbidden(
                &versions_path,
                "should not be set when strategy is not set to Webhook",
            ));
        }
        return;
    }
    match client_config {
        None => errors.push(FieldError::required(&config_path, "required when strategy is set to Webhook")),
        Some(config) => match (&config.url, &config.service) {
            (Some(url), None) => validate_webhook_url(url, &config_path.child("url"), errors),
            (None, Some(service)) => validate_webhook_service(service, &config_path.child("service"), errors),
            _ => errors.push(FieldError::required(&config_path, "exactly one of url or service is required")),
        },
    }
    if review_versions.is_empty() {
        errors.push(FieldError::required(&versions_path, ""));
    } else {
        let mut seen = HashSet::new();
        let mut accepted = false;
        for (i, version) in review_versions.iter().enumerate() {
            if !seen.insert(version.as_str()) {
                errors.push(invalid_str(&versions_path.index(i), version, "duplicate version"));
                continue;
            }
            for problem in names::dns1035_label(version) {
                errors.push(invalid_str(&versions_path.index(i), version, problem));
            }
            if version == "v1" || version == "v1beta1" {
                accepted = true;
            }
        }
        if !accepted {
            let rendered = gofmt::json(&Value::from(review_versions.to_vec()));
            errors.push(FieldError::invalid(
                &versions_path,
                rendered,
                "must include at least one of v1, v1beta1",
            ));
        }
    }
}

/// The parts of a URL kube's webhook validation looks at, split the way Go's `url.Parse` splits.
struct UrlParts<'u> {
    scheme: &'u str,
    user: Option<&'u str>,
    host: &'u str,
    query: &'u str,
    fragment: &'u str,
}

fn split_url(url: &str) -> UrlParts<'_> {
    let (rest, fragment) = url.split_once('#').unwrap_or((url, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (scheme, rest) = match rest.split_once(':') {
        Some((scheme, tail))
            if scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            (scheme, tail)
        }
        _ => ("", rest),
    };
    let (user, host) = match rest.strip_prefix("//") {
        Some(authority) => {
            let authority = authority.split('/').next().unwrap_or("");
            match authority.rsplit_once('@') {
                Some((user, host)) => (Some(user), host),
                None => (None, authority),
            }
        }
        None => (None, ""),
    };
    UrlParts { scheme, user, host, query, fragment }
}

fn validate_webhook_url(url: &str, path: &FieldPath, errors: &mut ErrorList) {
    const FORM: &str = "; desired format: https://host[/path]";
    let parts = split_url(url);
    if parts.scheme != "https" {
        errors.push(invalid_str(path, parts.scheme, format!("'https' is the only allowed URL scheme{FORM}")));
    }
    if parts.host.is_empty() {
        errors.push(invalid_str(path, parts.host, format!("host must be specified{FORM}")));
    }
    if let Some(user) = parts.user {
        errors.push(invalid_str(path, user, "user information is not permitted in the URL"));
    }
    if !parts.fragment.is_empty() {
        errors.push(invalid_str(path, parts.fragment, "fragments are not permitted in the URL"));
    }
    if !parts.query.is_empty() {
        errors.push(invalid_str(path, parts.query, "query parameters are not permitted in the URL"));
    }
}

fn validate_webhook_service(service: &ServiceReference, path: &FieldPath, errors: &mut ErrorList) {
    // kube passes name and namespace to its service check in swapped order, so an empty namespace
    // is reported as a missing `name` and vice versa.
    if service.namespace.is_empty() {
        errors.push(FieldError::required(&path.child("name"), ""));
    }
    if service.name.is_empty() {
        errors.push(FieldError::required(&path.child("namespace"), ""));
    }
    let port = service.port.unwrap_or(443);
    if !(1..=65535).contains(&port) {
        errors.push(FieldError::invalid(
            &path.child("port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = service.path.as_deref() else { return };
    if url_path.is_empty() || url_path == "/" {
        return;
    }
    let field = path.child("path");
    if url_path == "//" {
        errors.push(invalid_str(&field, url_path, "segment[0] may not be empty"));
        return;
    }
    if !url_path.starts_with('/') {
        errors.push(invalid_str(&field, url_path, "must start with a '/'"));
    }
    let mut to_check = url_path.get(1..).unwrap_or("");
    to_check = to_check.strip_suffix('/').unwrap_or(to_check);
    for (i, step) in to_check.split('/').enumerate() {
        if step.is_empty() {
            errors.push(invalid_str(&field, url_path, format!("segment[{i}] may not be empty")));
            continue;
        }
        for problem in names::dns1123_subdomain(step) {
            errors.push(invalid_str(&field, url_path, format!("segment[{i}]: {problem}")));
        }
    }
}

fn validate_stored_versions(crd: &CustomResourceDefinition, errors: &mut ErrorList) {
    let path = FieldPath::root("status").child("storedVersions");
    let existing = crd.status.as_ref().and_then(|s| s.stored_versions.clone()).unwrap_or_default();
    // On create kube resets the status and records the storage version.
    let stored = if existing.is_empty() {
        crd.spec.versions.iter().find(|v| v.storage).map(|v| vec![v.name.clone()]).unwrap_or_default()
    } else {
        existing
    };
    let rendered = gofmt::json(&Value::from(stored.clone()));
    if stored.is_empty() {
        errors.push(FieldError::invalid(&path, "null", "must have at least one stored version"));
        return;
    }
    let mut remaining: BTreeMap<&str, usize> =
        stored.iter().enumerate().map(|(i, v)| (v.as_str(), i)).collect();
    for version in &crd.spec.versions {
        let found = remaining.remove(version.name.as_str()).is_some();
        if version.storage && !found {
            errors.push(FieldError::invalid(
                &path,
                rendered.clone(),
                format!("must have the storage version {}", version.name),
            ));
        }
    }
    for (version, index) in remaining {
        errors.push(invalid_str(
            &path.index(index),
            version,
            format!(
                "missing from spec.versions; {version} was previously a storage version, and must remain in \
                 spec.versions until a storage migration ensures no data remains persisted in {version} and \
                 removes {version} from status.storedVersions"
            ),
        ));
    }
}

fn validate_api_approval(crd: &CustomResourceDefinition, errors: &mut ErrorList) {
    const ANNOTATION: &str = "api-approved.kubernetes.io";
    let group = crd.spec.group.as_str();
    let protected = group == "k8s.io"
        || group.ends_with(".k8s.io")
        || group == "kubernetes.io"
        || group.ends_with(".kubernetes.io");
    if !protected {
        return;
    }
    let value =
        crd.metadata.annotations.as_ref().and_then(|a| a.get(ANNOTATION)).map(String::as_str).unwrap_or("");
    let path = FieldPath::root("metadata").child("annotations").key(ANNOTATION);
    if value.is_empty() {
        errors.push(FieldError::required(
            &path,
            format!(
                "protected groups must have approval annotation {}, see https://github.com/kubernetes/enhancements/pull/1111",
                gofmt::quote(ANNOTATION)
            ),
        ));
        return;
    }
    if value.starts_with("unapproved") {
        return;
    }
    let parts = split_url(value);
    if !(parts.scheme.is_empty() || parts.host.is_empty()) {
        return;
    }
    errors.push(invalid_str(
        &path,
        value,
        format!(
            "protected groups must have approval annotation {} with either a URL or a reason starting with \
             \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111",
            gofmt::quote(ANNOTATION)
        ),
    ));
}
