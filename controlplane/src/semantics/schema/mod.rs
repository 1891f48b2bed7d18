//! Structural schemas of CustomResourceDefinitions, applied the way kube-apiextensions-apiserver
//! applies them: pruning of undeclared fields, defaulting, validation of custom resources against
//! their OpenAPI v3 schema, and validation of the CustomResourceDefinition objects themselves.
//!
//! Everything here is a pure function over `serde_json::Value` and the k8s-openapi CRD types. The
//! error messages, their field paths and their order of checks follow kube-apiserver 1.34 closely
//! (including its quirks, such as `spec.validation.openAPIV3Schema` paths when every version
//! shares one schema), because kubectl users read them verbatim.
//!
//! Where Go iterates a map in random order, this module iterates in key order, so that the
//! results are deterministic.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::LazyLock,
};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionNames, CustomResourceSubresources, CustomResourceValidation, JSONSchemaProps,
    JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, ServiceReference,
};
use kruise_machinery::field::{ErrorList, ErrorType, FieldError, FieldPath};
use parking_lot::Mutex;
use regex::Regex;
use serde_json::{Map, Value};

use super::jsonpath::{gofmt, valid_date};

// =============================================================================================
// Schema accessors
// =============================================================================================

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

fn is_meta_field(key: &str) -> bool {
    META_FIELDS.contains(&key)
}

fn type_of(s: &JSONSchemaProps) -> &str {
    s.type_.as_deref().unwrap_or("")
}

fn preserves_unknown(s: &JSONSchemaProps) -> bool {
    s.x_kubernetes_preserve_unknown_fields.unwrap_or(false)
}

fn is_embedded(s: &JSONSchemaProps) -> bool {
    s.x_kubernetes_embedded_resource.unwrap_or(false)
}

fn is_int_or_string(s: &JSONSchemaProps) -> bool {
    s.x_kubernetes_int_or_string.unwrap_or(false)
}

fn is_nullable(s: &JSONSchemaProps) -> bool {
    s.nullable.unwrap_or(false)
}

fn item_schema(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(schema)) => Some(schema),
        _ => None,
    }
}

fn property<'s>(s: &'s JSONSchemaProps, name: &str) -> Option<&'s JSONSchemaProps> {
    s.properties.as_ref().and_then(|properties| properties.get(name))
}

fn has_property(s: &JSONSchemaProps, name: &str) -> bool {
    property(s, name).is_some()
}

fn properties(s: &JSONSchemaProps) -> impl Iterator<Item = (&String, &JSONSchemaProps)> {
    s.properties.iter().flatten()
}

/// `additionalProperties` as the structural schema sees it.
enum Additional<'s> {
    Absent,
    Bool(bool),
    Schema(&'s JSONSchemaProps),
}

fn additional(s: &JSONSchemaProps) -> Additional<'_> {
    match &s.additional_properties {
        None => Additional::Absent,
        Some(JSONSchemaPropsOrBool::Bool(allows)) => Additional::Bool(*allows),
        Some(JSONSchemaPropsOrBool::Schema(schema)) => Additional::Schema(schema),
    }
}

fn additional_schema(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match additional(s) {
        Additional::Schema(schema) => Some(schema),
        _ => None,
    }
}

/// The schema's default; a JSON `null` default counts as none, as in kube-apiserver.
fn default_of(s: &JSONSchemaProps) -> Option<&Value> {
    s.default.as_ref().map(|json| &json.0).filter(|value| !value.is_null())
}

fn list<T>(items: &Option<Vec<T>>) -> &[T] {
    items.as_deref().unwrap_or(&[])
}

fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("")
}

// =============================================================================================
// Pruning
// =============================================================================================

/// Removes fields the schema does not declare, except under `x-kubernetes-preserve-unknown-fields:
/// true` (and `x-kubernetes-embedded-resource` keeping apiVersion/kind/metadata); at the root,
/// `apiVersion`, `kind` and `metadata` are always kept. Returns the pruned field paths, sorted, in
/// kube-apiserver's notation (`spec.foo`, `spec.containers[0].bar`, without a leading dot) so that
/// the caller can answer `fieldValidation=Strict` requests with `unknown field "spec.foo"` errors
/// and `Warn` with warnings of the same text.
pub fn prune(object: &mut Value, schema: &JSONSchemaProps) -> Vec<String> {
    let mut pruner = Pruner { path: String::new(), unknown: Vec::new(), track: true };
    pruner.prune(object, Some(schema), true);
    pruner.unknown.sort();
    pruner.unknown
}

/// Prunes a value that is not a resource root (a default, a sub-tree), with no meta-field
/// exemption unless the schema itself is an embedded resource.
fn prune_nested(value: &mut Value, schema: &JSONSchemaProps) {
    let mut pruner = Pruner { path: String::new(), unknown: Vec::new(), track: false };
    pruner.prune(value, Some(schema), false);
}

struct Pruner {
    path: String,
    unknown: Vec<String>,
    track: bool,
}

impl Pruner {
    fn record(&mut self, key: &str) {
        if !self.track {
            return;
        }
        if self.path.is_empty() {
            self.unknown.push(key.to_string());
        } else {
            self.unknown.push(format!("{}.{key}", self.path));
        }
    }

    fn descend_key(&mut self, key: &str, value: &mut Value, schema: Option<&JSONSchemaProps>, skip: bool) {
        let len = self.path.len();
        if self.track {
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(key);
        }
        if skip {
            if let Some(schema) = schema {
                self.skip_prune(value, schema, false);
            }
        } else {
            self.prune(value, schema, false);
        }
        self.path.truncate(len);
    }

    fn descend_index(
        &mut self,
        index: usize,
        value: &mut Value,
        schema: Option<&JSONSchemaProps>,
        skip: bool,
    ) {
        let len = self.path.len();
        if self.track {
            self.path.push_str(&format!("[{index}]"));
        }
        if skip {
            if let Some(schema) = schema {
                self.skip_prune(value, schema, false);
            }
        } else {
            self.prune(value, schema, false);
        }
        self.path.truncate(len);
    }

    fn prune(&mut self, value: &mut Value, schema: Option<&JSONSchemaProps>, resource_root: bool) {
        if let Some(s) = schema
            && preserves_unknown(s)
        {
            self.skip_prune(value, s, resource_root);
            return;
        }
        match value {
            Value::Object(map) => {
                let Some(s) = schema else {
                    let keys: Vec<String> = map.keys().cloned().collect();
                    for key in keys {
                        self.record(&key);
                    }
                    map.clear();
                    return;
                };
                let embedded = resource_root || is_embedded(s);
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    if embedded && is_meta_field(&key) {
                        continue;
                    }
                    let child_schema = match (property(s, &key), additional(s)) {
                        (Some(prop), _) => Some(Some(prop)),
                        (None, Additional::Schema(schema)) => Some(Some(schema)),
                        (None, Additional::Bool(_)) => Some(None),
                        (None, Additional::Absent) => None,
                    };
                    match child_schema {
                        Some(child) => {
                            if let Some(item) = map.get_mut(&key) {
                                self.descend_key(&key, item, child, false);
                            }
                        }
                        None => {
                            self.record(&key);
                            map.remove(&key);
                        }
                    }
                }
            }
            Value::Array(items) => {
                let item_s = schema.and_then(item_schema);
                for (index, item) in items.iter_mut().enumerate() {
                    self.descend_index(index, item, item_s, false);
                }
            }
            _ => {}
        }
    }

    fn skip_prune(&mut self, value: &mut Value, s: &JSONSchemaProps, resource_root: bool) {
        match value {
            Value::Object(map) => {
                let embedded = resource_root || is_embedded(s);
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    if embedded && is_meta_field(&key) {
                        continue;
                    }
                    let child_schema = match (property(s, &key), additional(s)) {
                        (Some(prop), _) => Some(Some(prop)),
                        (None, Additional::Schema(schema)) => Some(Some(schema)),
                        (None, Additional::Bool(_)) => Some(None),
                        (None, Additional::Absent) => None,
                    };
                    if let (Some(child), Some(item)) = (child_schema, map.get_mut(&key)) {
                        self.descend_key(&key, item, child, false);
                    }
                }
            }
            Value::Array(items) => {
                let item_s = item_schema(s);
                for (index, item) in items.iter_mut().enumerate() {
                    self.descend_index(index, item, item_s, true);
                }
            }
            _ => {}
        }
    }
}

// =============================================================================================
// Defaulting
// =============================================================================================

/// Applies `default`s from the schema to absent fields (and to `null` values of non-nullable
/// fields, which are dropped first as kube-apiserver does when they have no default), recursing
/// into objects, arrays and additionalProperties. Defaults are pruned against their own schema
/// before use, as kube-apiserver prunes them when it loads the CRD.
pub fn apply_defaults(object: &mut Value, schema: &JSONSchemaProps) {
    drop_non_nullable_nulls(object, Some(schema));
    default_value(object, schema);
}

/// Drops the `null`s of non-nullable fields without a default (apiextensions'
/// `PruneNonNullableNullsWithoutDefaults`): what kube-apiserver does to every custom resource it
/// decodes, conversion webhook output included, before validating it. Nulls the schema allows
/// (`nullable`, or inside `x-kubernetes-preserve-unknown-fields`) stay.
pub fn drop_disallowed_nulls(object: &mut Value, schema: &JSONSchemaProps) {
    drop_non_nullable_nulls(object, Some(schema));
}

fn schema_for_field<'s>(key: &str, s: Option<&'s JSONSchemaProps>) -> Option<&'s JSONSchemaProps> {
    let s = s?;
    property(s, key).or_else(|| additional_schema(s))
}

fn drop_non_nullable_nulls(value: &mut Value, schema: Option<&JSONSchemaProps>) {
    match value {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                let field_schema = schema_for_field(&key, schema);
                let drop = matches!(map.get(&key), Some(Value::Null))
                    && field_schema.is_some_and(|fs| !is_nullable(fs) && default_of(fs).is_none());
                if drop {
                    map.remove(&key);
                } else if let Some(item) = map.get_mut(&key) {
                    drop_non_nullable_nulls(item, field_schema);
                }
            }
        }
        Value::Array(items) => {
            let item_s = schema.and_then(item_schema);
            for item in items {
                drop_non_nullable_nulls(item, item_s);
            }
        }
        _ => {}
    }
}

fn pruned_default(default: &Value, schema: &JSONSchemaProps) -> Value {
    let mut value = default.clone();
    prune_nested(&mut value, schema);
    value
}

fn default_value(value: &mut Value, s: &JSONSchemaProps) {
    match value {
        Value::Object(map) => {
            for (key, prop) in properties(s) {
                let Some(default) = default_of(prop) else { continue };
                let apply = match map.get(key) {
                    None => true,
                    Some(Value::Null) => !is_nullable(prop),
                    Some(_) => false,
                };
                if apply {
                    map.insert(key.clone(), pruned_default(default, prop));
                }
            }
            let addl = additional_schema(s);
            for (key, item) in map.iter_mut() {
                if let Some(prop) = property(s, key) {
                    default_value(item, prop);
                } else if let Some(addl) = addl {
                    if item.is_null() && !is_nullable(addl) {
                        *item = default_of(addl).map(|d| pruned_default(d, addl)).unwrap_or(Value::Null);
                    }
                    default_value(item, addl);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_s) = item_schema(s) else { return };
            for item in items {
                if item.is_null() && !is_nullable(item_s) {
                    *item = default_of(item_s).map(|d| pruned_default(d, item_s)).unwrap_or(Value::Null);
                }
                default_value(item, item_s);
            }
        }
        _ => {}
    }
}

// =============================================================================================
// Validation of custom resources
// =============================================================================================

/// Validates against the schema and returns every problem with its path ("spec.replicas"), as
/// kube-apiserver's CRD validation reports them (field.ErrorType + message): type (integer,
/// number, boolean, string, object, array, int-or-string, and the supported string formats such
/// as date-time), required, enum, pattern, minimum/maximum (+exclusive), multipleOf,
/// minLength/maxLength, minItems/maxItems, minProperties/maxProperties, nullable,
/// additionalProperties, oneOf/anyOf/allOf/not used as value validation, then the invariants kube
/// checks besides the OpenAPI schema: embedded resources (`apiVersion`/`kind` present and valid)
/// and `x-kubernetes-list-type` set/map uniqueness (`Duplicate value`). Metadata at the root is
/// not validated here beyond what the schema declares (the caller validates ObjectMeta).
///
/// Messages read exactly like kube-apiserver's, e.g. `spec.replicas: Invalid value: "string":
/// spec.replicas in body must be of type integer: "string"`. Errors kube reports without a path
/// (a failed `anyOf` at the root) have the path `<nil>`, as kube prints them.
pub fn validate(object: &Value, schema: &JSONSchemaProps) -> ErrorList {
    validate_at(object, schema, None)
}

/// [`validate`] for a value found under `base` (the `status` of a `/status` update, validated
/// against the schema of `status` alone, as kube-apiserver does): error paths are prefixed with
/// `base` while messages keep the path relative to the value (`replicas in body must be ...`).
pub fn validate_at(value: &Value, schema: &JSONSchemaProps, base: Option<&FieldPath>) -> ErrorList {
    let outcome = openapi::validate(value, schema, "");
    let mut errors = openapi::to_field_errors(&outcome, base);
    let root = base.cloned().unwrap_or_default();
    embedded_resources(&root, value, schema, &mut errors);
    if let Value::Object(map) = value {
        errors.extend(list_sets_and_maps(&root, schema, map));
    }
    errors
}

/// A `Too long` error (kube's `field.TooLong`). `kruise_machinery::field::ErrorType` has no `TooLong`
/// kind yet, so the closest kind (`Invalid`) carries kube's detail text.
fn too_long(path: &FieldPath, max: i64) -> FieldError {
    let unit = if max == 1 { "byte" } else { "bytes" };
    FieldError {
        kind: ErrorType::TooLong,
        path: path.clone(),
        value: None,
        detail: format!("may not be more than {max} {unit}"),
    }
}

/// A `Too many` error (kube's `field.TooMany`), mapped like [`too_long`].
fn too_many(path: &FieldPath, actual: i64, max: i64) -> FieldError {
    let unit = if max == 1 { "item" } else { "items" };
    FieldError {
        kind: ErrorType::TooMany,
        path: path.clone(),
        value: (actual >= 0).then(|| actual.to_string()),
        detail: format!("must have at most {max} {unit}"),
    }
}

fn invalid_value(path: &FieldPath, value: &Value, detail: impl Into<String>) -> FieldError {
    FieldError {
        kind: ErrorType::Invalid,
        path: path.clone(),
        value: Some(gofmt::field_value(value)),
        detail: detail.into(),
    }
}

fn invalid_str(path: &FieldPath, value: &str, detail: impl Into<String>) -> FieldError {
    FieldError::invalid(path, gofmt::quote(value), detail)
}

fn not_supported(path: &FieldPath, value: &str, supported: &[&str]) -> FieldError {
    let list = supported.iter().map(|s| gofmt::quote(s)).collect::<Vec<_>>().join(", ");
    FieldError {
        kind: ErrorType::NotSupported,
        path: path.clone(),
        value: Some(gofmt::quote(value)),
        detail: if supported.is_empty() { String::new() } else { format!("supported values: {list}") },
    }
}

/// The OpenAPI v3 validator of kube-openapi (`validate.SchemaValidator`), reproduced closely
/// enough that messages, error kinds, and the choice of reported errors for `anyOf`/`oneOf`
/// (which depends on its match counting) are the same.
mod openapi {
    use super::*;

    /// A Go value attached to an error, rendered the way `field.Error` renders it.
    #[derive(Clone, Debug, PartialEq)]
    pub(super) enum GoValue {
        Str(String),
        Int(i64),
        Float(f64),
        Json(Value),
    }

    impl GoValue {
        fn render(&self) -> String {
            match self {
                GoValue::Str(s) => gofmt::quote(s),
                GoValue::Int(i) => i.to_string(),
                GoValue::Float(f) => gofmt::float(*f),
                GoValue::Json(v) => gofmt::field_value(v),
            }
        }

        /// Go's `%v`.
        fn plain(&self) -> String {
            match self {
                GoValue::Str(s) => s.clone(),
                GoValue::Int(i) => i.to_string(),
                GoValue::Float(f) => gofmt::float(*f),
                GoValue::Json(v) => gofmt::field_value(v),
            }
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Code {
        InvalidType,
        Required,
        TooLong,
        TooShort,
        Pattern,
        Enum,
        MultipleOf,
        Maximum,
        Minimum,
        Unique,
        MaxItems,
        MinItems,
        TooFewProperties,
        TooManyProperties,
        Unallowed,
        MultipleOfMustBePositive,
        Composite,
    }

    #[derive(Clone, Debug)]
    pub(super) struct Problem {
        code: Code,
        name: String,
        value: Option<GoValue>,
        valid: Option<i64>,
        allowed: Vec<Value>,
        message: String,
    }

    fn problem(code: Code, name: &str, value: Option<GoValue>, message: String) -> Problem {
        Problem { code, name: name.to_string(), value, valid: None, allowed: Vec::new(), message }
    }

    /// A validation result with kube-openapi's match counter.
    #[derive(Clone, Debug, Default)]
    pub(super) struct Outcome {
        problems: Vec<Problem>,
        matches: usize,
    }

    impl Outcome {
        fn add(&mut self, problem: Problem) {
            if !self.problems.iter().any(|p| p.message == problem.message) {
                self.problems.push(problem);
            }
        }

        fn merge(&mut self, other: Outcome) {
            for problem in other.problems {
                self.add(problem);
            }
            self.matches += other.matches;
        }

        fn inc(&mut self) {
            self.matches += 1;
        }

        fn is_valid(&self) -> bool {
            self.problems.is_empty()
        }

        fn single(problem: Problem) -> Outcome {
            Outcome { problems: vec![problem], matches: 0 }
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Data<'v> {
        Null,
        Bool(bool),
        Int(i64),
        Float(f64),
        Str(&'v str),
        Array(&'v [Value]),
        Object(&'v Map<String, Value>),
    }

    fn classify(value: &Value) -> Data<'_> {
        match value {
            Value::Null => Data::Null,
            Value::Bool(b) => Data::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Data::Int(i),
                None => Data::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Data::Str(s),
            Value::Array(items) => Data::Array(items),
            Value::Object(map) => Data::Object(map),
        }
    }

    fn go_value(value: &Value) -> GoValue {
        match classify(value) {
            Data::Str(s) => GoValue::Str(s.to_string()),
            Data::Int(i) => GoValue::Int(i),
            Data::Float(f) => GoValue::Float(f),
            _ => GoValue::Json(value.clone()),
        }
    }

    /// Which schema the validator sees. kube validates objects against the CRD schema with
    /// unsupported formats stripped and int-or-string typed as `integer,string`, but validates
    /// `default`s against the structural schema converted back to OpenAPI, where formats are kept
    /// and int-or-string carries no type.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Mode {
        Object,
        Default,
    }

    /// The string formats a CRD may use (every other format is ignored, as kube strips it).
    const SUPPORTED_FORMATS: [&str; 23] = [
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
    ];

    /// Whether kube-openapi's format registry knows `format` (the CRD formats plus the
    /// Kubernetes name formats, which CRDs may only use from 1.34 compatibility on).
    fn is_known_format(format: &str) -> bool {
        let normalized = format.replace('-', "");
        normalized == "datetime"
            || normalized == "k8sshortname"
            || normalized == "k8slongname"
            || SUPPORTED_FORMATS.contains(&normalized.as_str())
    }

    /// The format the type check sees.
    fn type_format(s: &JSONSchemaProps, mode: Mode) -> &str {
        let format = text(&s.format);
        let normalized = format.replace('-', "");
        let supported = normalized == "datetime" || SUPPORTED_FORMATS.contains(&normalized.as_str());
        if mode == Mode::Default || supported { format } else { "" }
    }

    fn schema_types(s: &JSONSchemaProps, mode: Mode) -> Vec<&str> {
        if is_int_or_string(s) && mode == Mode::Object {
            vec!["integer", "string"]
        } else if type_of(s).is_empty() {
            Vec::new()
        } else {
            vec![type_of(s)]
        }
    }

    fn invalid_type(name: &str, type_name: &str, value: &str) -> Problem {
        problem(
            Code::InvalidType,
            name,
            Some(GoValue::Str(value.to_string())),
            format!("{name} in body must be of type {type_name}: {}", gofmt::quote(value)),
        )
    }

    fn composite(message: String) -> Problem {
        problem(Code::Composite, "", None, message)
    }

    /// Validates `data` at `path` (kube-openapi naming: "" at the root, `spec.replicas`,
    /// `spec.containers[0]`).
    pub(super) fn validate(data: &Value, s: &JSONSchemaProps, path: &str) -> Outcome {
        check(data, s, path, Mode::Object)
    }

    /// Validates a schema's `default` value against that schema, as kube does when it accepts a
    /// CRD.
    pub(super) fn validate_default(data: &Value, s: &JSONSchemaProps) -> Outcome {
        check(data, s, "", Mode::Default)
    }

    fn check(data: &Value, s: &JSONSchemaProps, path: &str, mode: Mode) -> Outcome {
        let mut out = Outcome::default();
        let types = schema_types(s, mode);
        let format = type_format(s, mode);
        let kind = classify(data);
        if let Data::Null = kind {
            out.merge(check_type(kind, &types, is_nullable(s), format, path));
            out.merge(check_enum(data, s, path));
            return out;
        }
        if !types.is_empty() || !format.is_empty() {
            out.merge(check_type(kind, &types, is_nullable(s), format, path));
            out.inc();
        }
        out.merge(check_combinators(data, s, path, mode));
        out.inc();
        if let Data::Str(text) = kind {
            out.merge(check_string(text, s, path));
            out.inc();
            if !format.is_empty() && is_known_format(format) {
                out.merge(check_format(text, format, path));
                out.inc();
            }
        }
        if matches!(kind, Data::Int(_) | Data::Float(_)) {
            out.merge(check_number(kind, s, path));
            out.inc();
        }
        if let Data::Array(items) = kind {
            out.merge(check_slice(items, s, path, mode));
            out.inc();
        }
        out.merge(check_enum(data, s, path));
        out.inc();
        if let Data::Object(map) = kind {
            out.merge(check_object(map, s, path, mode));
            out.inc();
        }
        out.inc();
        out
    }

    fn is_json_integer(f: f64) -> bool {
        const LIMIT: f64 = 9_007_199_254_740_991.0;
        if !f.is_finite() || !(-LIMIT..=LIMIT).contains(&f) {
            return false;
        }
        let g = f.trunc();
        if f == g {
            return true;
        }
        let diff = (f - g).abs();
        if g == 0.0 {
            return false;
        }
        diff / (f.abs() + g.abs()).min(f64::MAX) < 1e-9
    }

    fn check_type(kind: Data<'_>, types: &[&str], nullable: bool, format: &str, path: &str) -> Outcome {
        let fail = |type_name: &str, value: &str| Outcome::single(invalid_type(path, type_name, value));
        if let Data::Null = kind {
            if !types.is_empty() && !types.contains(&"null") && !nullable {
                return fail(&types.join(","), "null");
            }
            return Outcome { problems: Vec::new(), matches: 1 };
        }
        let (sch_type, sch_format) = match kind {
            Data::Bool(_) => ("boolean", ""),
            Data::Str(_) => ("string", ""),
            Data::Int(_) => ("integer", "int64"),
            Data::Float(_) => ("number", "float64"),
            Data::Array(_) => ("array", ""),
            _ => ("object", ""),
        };
        let is_float_int = matches!(kind, Data::Float(f) if is_json_integer(f)) && types.contains(&"integer");
        let is_int_float = sch_type == "integer" && types.contains(&"number");
        let string_or_slice = matches!(kind, Data::Str(_) | Data::Array(_));
        let type_matches = types.contains(&sch_type) || is_float_int || is_int_float;
        if !(string_or_slice || format.is_empty() || type_matches || sch_format == format) {
            return fail(format, sch_format);
        }
        let numeric = types.contains(&"number") || types.contains(&"integer");
        if string_or_slice && !(numeric || format.is_empty()) {
            return Outcome { problems: Vec::new(), matches: 1 };
        }
        if !type_matches {
            return fail(&types.join(","), sch_type);
        }
        Outcome { problems: Vec::new(), matches: 1 }
    }

    fn check_combinators(data: &Value, s: &JSONSchemaProps, path: &str, mode: Mode) -> Outcome {
        let mut main = Outcome::default();
        let quoted = gofmt::quote(path);
        let any_of = list(&s.any_of);
        if !any_of.is_empty() {
            let mut best: Option<Outcome> = None;
            let mut first_success: Option<Outcome> = None;
            for sub in any_of {
                let result = check(data, sub, path, mode);
                if result.is_valid() {
                    best = None;
                    first_success = Some(result);
                    break;
                }
                if best.as_ref().is_none_or(|b| result.matches > b.matches) {
                    best = Some(result);
                }
            }
            if first_success.is_none() {
                main.add(composite(format!("{quoted} must validate at least one schema (anyOf)")));
            }
            if let Some(best) = best {
                main.merge(best);
            } else if let Some(success) = first_success {
                main.merge(success);
            }
        }
        let one_of = list(&s.one_of);
        if !one_of.is_empty() {
            let mut best: Option<Outcome> = None;
            let mut first_success: Option<Outcome> = None;
            let mut validated = 0;
            for sub in one_of {
                let result = check(data, sub, path, mode);
                if result.is_valid() {
                    validated += 1;
                    best = None;
                    if first_success.is_none() {
                        first_success = Some(result);
                    }
                    continue;
                }
                if validated == 0 && best.as_ref().is_none_or(|b| result.matches > b.matches) {
                    best = Some(result);
                }
            }
            if validated != 1 {
                let detail = if validated == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {validated} valid alternatives")
                };
                main.add(composite(format!(
                    "{quoted} must validate one and only one schema (oneOf). {detail}"
                )));
                if let Some(best) = best {
                    main.merge(best);
                }
            } else if let Some(success) = first_success {
                main.merge(success);
            }
        }
        let all_of = list(&s.all_of);
        if !all_of.is_empty() {
            let mut validated = 0;
            for sub in all_of {
                let result = check(data, sub, path, mode);
                if result.is_valid() {
                    validated += 1;
                }
                main.merge(result);
            }
            if validated != all_of.len() {
                let detail = if validated == 0 { ". None validated" } else { "" };
                main.add(composite(format!("{quoted} must validate all the schemas (allOf){detail}")));
            }
        }
        if let Some(not) = &s.not
            && check(data, not, path, mode).is_valid()
        {
            main.add(composite(format!("{quoted} must not validate the schema (not)")));
        }
        main.inc();
        main
    }

    fn check_string(text: &str, s: &JSONSchemaProps, path: &str) -> Outcome {
        let length = text.chars().count() as i64;
        let value = Some(GoValue::Str(text.to_string()));
        if let Some(max) = s.max_length
            && length > max
        {
            let mut p = problem(
                Code::TooLong,
                path,
                value,
                format!("{path} in body should be at most {max} chars long"),
            );
            p.valid = Some(max);
            return Outcome::single(p);
        }
        if let Some(min) = s.min_length
            && length < min
        {
            return Outcome::single(problem(
                Code::TooShort,
                path,
                value,
                format!("{path} in body should be at least {min} chars long"),
            ));
        }
        let pattern = text_pattern(s);
        if !pattern.is_empty() {
            match compiled_pattern(pattern) {
                Err(error) => {
                    return Outcome::single(problem(
                        Code::Pattern,
                        path,
                        value,
                        format!("{path} in body should match '{pattern}, but pattern is invalid: {error}'"),
                    ));
                }
                Ok(regex) if !regex.is_match(text) => {
                    return Outcome::single(problem(
                        Code::Pattern,
                        path,
                        value,
                        format!("{path} in body should match '{pattern}'"),
                    ));
                }
                Ok(_) => {}
            }
        }
        Outcome::default()
    }

    fn text_pattern(s: &JSONSchemaProps) -> &str {
        text(&s.pattern)
    }

    fn check_format(text: &str, format: &str, path: &str) -> Outcome {
        if super::formats::is_valid(&format.replace('-', ""), text) {
            Outcome::default()
        } else {
            Outcome::single(invalid_type(path, format, text))
        }
    }

    fn number_value(kind: Data<'_>) -> GoValue {
        match kind {
            Data::Int(i) => GoValue::Int(i),
            Data::Float(f) => GoValue::Float(f),
            _ => GoValue::Int(0),
        }
    }

    fn check_number(kind: Data<'_>, s: &JSONSchemaProps, path: &str) -> Outcome {
        let mut res = Outcome::default();
        let mut multiple = Outcome::default();
        let mut minimum = Outcome::default();
        let mut maximum = Outcome::default();
        let value = number_value(kind);
        if let Some(factor) = s.multiple_of {
            match kind {
                Data::Int(v) => {
                    let f = factor as i64;
                    if f <= 0 {
                        multiple.add(problem(
                            Code::MultipleOfMustBePositive,
                            path,
                            Some(GoValue::Int(f)),
                            format!("factor MultipleOf declared for {path} must be positive: {f}"),
                        ));
                    } else if v % f != 0 {
                        multiple.add(problem(
                            Code::MultipleOf,
                            path,
                            Some(value.clone()),
                            format!("{path} in body should be a multiple of {f}"),
                        ));
                    }
                }
                Data::Float(v) => {
                    if factor <= 0.0 {
                        multiple.add(problem(
                            Code::MultipleOfMustBePositive,
                            path,
                            Some(GoValue::Float(factor)),
                            format!(
                                "factor MultipleOf declared for {path} must be positive: {}",
                                gofmt::float(factor)
                            ),
                        ));
                    } else {
                        let mult = if factor < 1.0 { 1.0 / factor * v } else { v / factor };
                        if !is_json_integer(mult) {
                            multiple.add(problem(
                                Code::MultipleOf,
                                path,
                                Some(value.clone()),
                                format!("{path} in body should be a multiple of {}", gofmt::float(factor)),
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
        let exclusive_max = s.exclusive_maximum.unwrap_or(false);
        if let Some(max) = s.maximum {
            let (exceeds, bound) = match kind {
                Data::Int(v) => {
                    let m = max as i64;
                    (if exclusive_max { v >= m } else { v > m }, m.to_string())
                }
                Data::Float(v) => (if exclusive_max { v >= max } else { v > max }, gofmt::float(max)),
                _ => (false, String::new()),
            };
            if exceeds {
                let relation = if exclusive_max { "less than" } else { "less than or equal to" };
                maximum.add(problem(
                    Code::Maximum,
                    path,
                    Some(value.clone()),
                    format!("{path} in body should be {relation} {bound}"),
                ));
            }
        }
        let exclusive_min = s.exclusive_minimum.unwrap_or(false);
        if let Some(min) = s.minimum {
            let (below, bound) = match kind {
                Data::Int(v) => {
                    let m = min as i64;
                    (if exclusive_min { v <= m } else { v < m }, m.to_string())
                }
                Data::Float(v) => (if exclusive_min { v <= min } else { v < min }, gofmt::float(min)),
                _ => (false, String::new()),
            };
            if below {
                let relation = if exclusive_min { "greater than" } else { "greater than or equal to" };
                minimum.add(problem(
                    Code::Minimum,
                    path,
                    Some(value.clone()),
                    format!("{path} in body should be {relation} {bound}"),
                ));
            }
        }
        res.merge(multiple);
        res.merge(minimum);
        res.merge(maximum);
        res.inc();
        res
    }

    fn check_slice(items: &[Value], s: &JSONSchemaProps, path: &str, mode: Mode) -> Outcome {
        let mut result = Outcome::default();
        if let Some(item_s) = item_schema(s) {
            for (index, item) in items.iter().enumerate() {
                result.merge(check(item, item_s, &format!("{path}[{index}]"), mode));
            }
        }
        let size = items.len() as i64;
        if let Some(min) = s.min_items
            && size < min
        {
            result.add(problem(
                Code::MinItems,
                path,
                Some(GoValue::Int(size)),
                format!("{path} in body should have at least {min} items"),
            ));
        }
        if let Some(max) = s.max_items
            && size > max
        {
            let mut p = problem(
                Code::MaxItems,
                path,
                Some(GoValue::Int(size)),
                format!("{path} in body should have at most {max} items"),
            );
            p.valid = Some(max);
            result.add(p);
        }
        if s.unique_items.unwrap_or(false) {
            let duplicate = items.iter().enumerate().any(|(i, a)| items[..i].contains(a));
            if duplicate {
                result.add(problem(
                    Code::Unique,
                    path,
                    None,
                    format!("{path} in body shouldn't contain duplicates"),
                ));
            }
        }
        result.inc();
        result
    }

    /// Go's enum matching: the value converted to the enum value's type, then compared deeply.
    fn enum_matches(data: &Value, candidate: &Value) -> bool {
        match (classify(data), classify(candidate)) {
            (Data::Null, _) | (_, Data::Null) => false,
            (Data::Str(a), Data::Str(b)) => a == b,
            (Data::Bool(a), Data::Bool(b)) => a == b,
            (Data::Int(a), Data::Int(b)) => a == b,
            (Data::Int(a), Data::Float(b)) => a as f64 == b,
            (Data::Float(a), Data::Int(b)) => a as i64 == b,
            (Data::Float(a), Data::Float(b)) => a == b,
            // Go converts an integer to the string of that code point.
            (Data::Int(a), Data::Str(b)) => {
                let c = u32::try_from(a).ok().and_then(char::from_u32).unwrap_or('\u{FFFD}');
                b.chars().eq(std::iter::once(c))
            }
            (Data::Array(_), Data::Array(_)) | (Data::Object(_), Data::Object(_)) => data == candidate,
            _ => false,
        }
    }

    fn check_enum(data: &Value, s: &JSONSchemaProps, path: &str) -> Outcome {
        let candidates: Vec<&Value> = list(&s.enum_).iter().map(|json| &json.0).collect();
        if candidates.is_empty() || candidates.iter().any(|c| enum_matches(data, c)) {
            return Outcome::default();
        }
        let listed = candidates.iter().map(|c| go_value(c).plain()).collect::<Vec<_>>().join(" ");
        let mut p = problem(
            Code::Enum,
            path,
            Some(go_value(data)),
            format!("{path} in body should be one of [{listed}]"),
        );
        p.allowed = candidates.into_iter().cloned().collect();
        Outcome::single(p)
    }

    fn check_object(map: &Map<String, Value>, s: &JSONSchemaProps, path: &str, mode: Mode) -> Outcome {
        let mut res = Outcome::default();
        let count = map.len() as i64;
        if let Some(min) = s.min_properties
            && count < min
        {
            res.add(problem(
                Code::TooFewProperties,
                path,
                Some(GoValue::Int(count)),
                format!("{path} in body should have at least {min} properties"),
            ));
        }
        if let Some(max) = s.max_properties
            && count > max
        {
            let mut p = problem(
                Code::TooManyProperties,
                path,
                Some(GoValue::Int(count)),
                format!("{path} in body should have at most {max} properties"),
            );
            p.valid = Some(max);
            res.add(p);
        }
        match additional(s) {
            Additional::Bool(false) => {
                for key in map.keys() {
                    if !has_property(s, key) {
                        res.add(problem(
                            Code::Unallowed,
                            path,
                            Some(GoValue::Str(key.clone())),
                            format!("{path}.{key} in body is a forbidden property"),
                        ));
                    }
                }
            }
            Additional::Schema(addl) => {
                for (key, value) in map {
                    if !has_property(s, key) {
                        res.merge(check(value, addl, &format!("{path}.{key}"), mode));
                    }
                }
            }
            _ => {}
        }
        for (name, prop) in properties(s) {
            if let Some(value) = map.get(name) {
                let child = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
                res.merge(check(value, prop, &child, mode));
            }
        }
        for key in list(&s.required) {
            if !map.contains_key(key) {
                let name = format!("{path}.{key}");
                let message = format!("{name} in body is required");
                res.add(problem(Code::Required, &name, None, message));
            }
        }
        res
    }

    /// Converts the validator's result into field errors the way kube-apiextensions-apiserver
    /// does (`kubeOpenAPIResultToFieldErrors`).
    pub(super) fn to_field_errors(outcome: &Outcome, base: Option<&FieldPath>) -> ErrorList {
        let base = base.filter(|b| !b.as_str().is_empty());
        let nil_path = || base.cloned().unwrap_or_else(|| FieldPath::root("<nil>"));
        outcome
            .problems
            .iter()
            .map(|p| {
                if p.code == Code::Composite {
                    return FieldError::invalid(&nil_path(), "\"\"", p.message.clone());
                }
                let path = if p.name.is_empty() || p.name == "." {
                    nil_path()
                } else {
                    let name = p.name.strip_prefix('.').unwrap_or(&p.name);
                    match base {
                        Some(base) => base.child(name),
                        None => FieldPath::root(name),
                    }
                };
                let rendered = p.value.as_ref().map(GoValue::render).unwrap_or_else(|| "\"\"".to_string());
                match p.code {
                    Code::Required => FieldError::required(&path, ""),
                    Code::Enum => {
                        let supported: Vec<String> = p
                            .allowed
                            .iter()
                            .map(|v| match v {
                                Value::String(s) => s.clone(),
                                other => gofmt::json(other),
                            })
                            .collect();
                        FieldError {
                            kind: ErrorType::NotSupported,
                            path,
                            value: Some(
                                p.value.as_ref().map(GoValue::render).unwrap_or_else(|| "null".into()),
                            ),
                            detail: if supported.is_empty() {
                                String::new()
                            } else {
                                format!(
                                    "supported values: {}",
                                    supported.iter().map(|s| gofmt::quote(s)).collect::<Vec<_>>().join(", ")
                                )
                            },
                        }
                    }
                    Code::TooLong => too_long(&path, p.valid.unwrap_or(-1)),
                    Code::MaxItems | Code::TooManyProperties => {
                        let actual = match p.value {
                            Some(GoValue::Int(i)) => i,
                            _ => -1,
                        };
                        too_many(&path, actual, p.valid.unwrap_or(-1))
                    }
                    Code::InvalidType => FieldError {
                        kind: ErrorType::TypeInvalid,
                        path,
                        value: Some(rendered),
                        detail: p.message.clone(),
                    },
                    _ => FieldError::invalid(&path, rendered, p.message.clone()),
                }
            })
            .collect()
    }
}

/// Compiled `pattern`s, shared across validations (schemas are validated over and over).
static PATTERNS: LazyLock<Mutex<HashMap<String, Result<Regex, String>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Compiles a schema `pattern` with Go RE2 semantics: `\d`, `\w`, `\s` (and their negations
/// outside classes) are ASCII-only in Go, so they are rewritten to explicit ASCII classes.
fn compiled_pattern(pattern: &str) -> Result<Regex, String> {
    let mut cache = PATTERNS.lock();
    if let Some(found) = cache.get(pattern) {
        return found.clone();
    }
    let compiled = Regex::new(&go_regex(pattern)).map_err(|e| go_regex_error(pattern, &e.to_string()));
    if cache.len() > 4096 {
        cache.clear();
    }
    cache.insert(pattern.to_string(), compiled.clone());
    compiled
}

/// A regex compile error phrased like Go's `regexp` package (`error parsing regexp: missing
/// closing ): `(abc``).
fn go_regex_error(pattern: &str, rust_error: &str) -> String {
    let code = [
        ("unclosed group", "missing closing )"),
        ("unopened group", "unexpected )"),
        ("unclosed character class", "missing closing ]"),
        ("repetition operator missing expression", "missing argument to repetition operator"),
        ("incomplete escape sequence", "trailing backslash at end of expression"),
        ("unrecognized escape sequence", "invalid escape sequence"),
        ("invalid character class range", "invalid character class range"),
        ("look-around", "invalid or unsupported Perl syntax"),
        ("backreferences are not supported", "invalid escape sequence"),
        ("repetition quantifier expects a valid decimal", "invalid repeat count"),
        ("invalid repetition count range", "invalid repeat count"),
        ("exceeds size limit", "expression too large"),
    ]
    .iter()
    .find(|(needle, _)| rust_error.contains(needle))
    .map(|(_, code)| *code)
    .unwrap_or("invalid or unsupported Perl syntax");
    format!("error parsing regexp: {code}: `{pattern}`")
}

fn go_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let replacement = match (next, in_class) {
                    ('d', true) => Some("0-9"),
                    ('d', false) => Some("[0-9]"),
                    ('D', false) => Some("[^0-9]"),
                    ('w', true) => Some("0-9A-Za-z_"),
                    ('w', false) => Some("[0-9A-Za-z_]"),
                    ('W', false) => Some("[^0-9A-Za-z_]"),
                    ('s', true) => Some("\\t\\n\\f\\r "),
                    ('s', false) => Some("[\\t\\n\\f\\r ]"),
                    ('S', false) => Some("[^\\t\\n\\f\\r ]"),
                    _ => None,
                };
                match replacement {
                    Some(text) => out.push_str(text),
                    None => {
                        out.push('\\');
                        out.push(next);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A leading `]` (or `^]`) is a literal member of the class.
                let rest = chars.as_str();
                if let Some(tail) = rest.strip_prefix("^]") {
                    out.push_str("^\\]");
                    chars = tail.chars();
                } else if let Some(tail) = rest.strip_prefix(']') {
                    out.push_str("\\]");
                    chars = tail.chars();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// The string formats of kube-openapi's `strfmt` registry that CRDs may use.
mod formats {
    use super::*;

    #[allow(clippy::unwrap_used)] // constant patterns
    static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}]",
            r"(([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
        ))
        .unwrap()
    });
    #[allow(clippy::unwrap_used)]
    static UUID: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$").unwrap()
    });
    #[allow(clippy::unwrap_used)]
    static UUID3: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$").unwrap()
    });
    #[allow(clippy::unwrap_used)]
    static UUID4: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").unwrap()
    });
    #[allow(clippy::unwrap_used)]
    static UUID5: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").unwrap()
    });
    #[allow(clippy::unwrap_used)]
    static CREDIT_CARD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|",
            r"3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$"
        ))
        .unwrap()
    });
    #[allow(clippy::unwrap_used)]
    static HEX_COLOR: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").unwrap());
    #[allow(clippy::unwrap_used)]
    static RGB_COLOR: LazyLock<Regex> = LazyLock::new(|| {
        let part = r"(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
        let space = r"[\t\n\f\r ]*";
        Regex::new(&format!(r"^rgb\({space}{part}{space},{space}{part}{space},{space}{part}{space}\)$"))
            .unwrap()
    });
    #[allow(clippy::unwrap_used)]
    static BASE64: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
            .unwrap()
    });
    #[allow(clippy::unwrap_used)]
    static SSN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$").unwrap());
    #[allow(clippy::unwrap_used)]
    static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"^(?:[^<>]*<[^<>@\s]+@[^<>@\s]+>|"[^"]*"@[^<>@\s,]+|[^<>@\s,"]+@[^<>@\s,]+)$"#).unwrap()
    });

    /// Whether `text` is valid for the (dash-less) format name `format`.
    pub(super) fn is_valid(format: &str, text: &str) -> bool {
        match format {
            "bsonobjectid" => text.len() == 24 && text.bytes().all(|b| b.is_ascii_hexdigit()),
            "uri" => is_request_uri(text),
            "email" => EMAIL.is_match(text),
            "hostname" => {
                HOSTNAME.is_match(text) && text.len() <= 255 && text.split('.').all(|label| label.len() <= 63)
            }
            "ipv4" => parse_ip(text).is_some() && text.contains('.'),
            "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok() && text.contains(':'),
            "cidr" => is_cidr(text),
            "mac" => is_mac(text),
            "uuid" => UUID.is_match(text),
            "uuid3" => UUID3.is_match(text),
            "uuid4" => UUID4.is_match(text),
            "uuid5" => UUID5.is_match(text),
            "isbn" => is_isbn10(text) || is_isbn13(text),
            "isbn10" => is_isbn10(text),
            "isbn13" => is_isbn13(text),
            "creditcard" => is_credit_card(text),
            "ssn" => text.len() == 11 && SSN.is_match(text),
            "hexcolor" => HEX_COLOR.is_match(text),
            "rgbcolor" => RGB_COLOR.is_match(text),
            "byte" => BASE64.is_match(text),
            "password" => true,
            "date" => parse_date(text).is_some(),
            "duration" => is_duration(text),
            "datetime" => is_date_time(text),
            "k8sshortname" => text.len() <= 63 && names::dns1123_label(text).is_empty(),
            "k8slongname" => text.len() <= 253 && names::dns1123_subdomain(text).is_empty(),
            _ => true,
        }
    }

    fn is_request_uri(text: &str) -> bool {
        if text.is_empty() || text.bytes().any(|b| b < 0x20 || b == 0x7f) {
            return false;
        }
        if text == "*" || text.starts_with('/') {
            return true;
        }
        let scheme_end = text.find(':');
        match scheme_end {
            Some(end) if end > 0 => {
                let scheme = &text[..end];
                scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                    && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            }
            _ => false,
        }
    }

    /// An IPv4 address in dotted-decimal (leading zeros tolerated) or an IPv6 address.
    fn parse_ip(text: &str) -> Option<()> {
        if text.contains(':') {
            return text.parse::<std::net::Ipv6Addr>().ok().map(|_| ());
        }
        let parts: Vec<&str> = text.split('.').collect();
        if parts.len() != 4 {
            return None;
        }
        for part in parts {
            if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            if part.parse::<u16>().ok()? > 255 {
                return None;
            }
        }
        Some(())
    }

    fn is_cidr(text: &str) -> bool {
        let Some((ip, bits)) = text.split_once('/') else { return false };
        if parse_ip(ip).is_none() || bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        let max = if ip.contains(':') { 128 } else { 32 };
        bits.parse::<u32>().is_ok_and(|b| b <= max)
    }

    fn is_mac(text: &str) -> bool {
        let hex =
            |group: &str, len: usize| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit());
        for separator in [':', '-'] {
            let groups: Vec<&str> = text.split(separator).collect();
            if matches!(groups.len(), 6 | 8 | 20) && groups.iter().all(|g| hex(g, 2)) {
                return true;
            }
        }
        let groups: Vec<&str> = text.split('.').collect();
        if matches!(groups.len(), 3 | 4 | 10) && groups.iter().all(|g| hex(g, 4)) {
            return true;
        }
        matches!(text.len(), 12 | 16 | 40) && hex(text, text.len())
    }

    fn sanitize_isbn(text: &str) -> String {
        text.chars().filter(|c| !(c.is_whitespace() || *c == '-')).collect()
    }

    fn is_isbn10(text: &str) -> bool {
        let s = sanitize_isbn(text);
        let b = s.as_bytes();
        let shape =
            b.len() == 10 && b[..9].iter().all(u8::is_ascii_digit) && (b[9].is_ascii_digit() || b[9] == b'X');
        if !shape {
            return false;
        }
        let mut sum: u32 = (0..9).map(|i| (i as u32 + 1) * u32::from(b[i] - b'0')).sum();
        sum += 10 * if b[9] == b'X' { 10 } else { u32::from(b[9] - b'0') };
        sum.is_multiple_of(11)
    }

    fn is_isbn13(text: &str) -> bool {
        let s = sanitize_isbn(text);
        let b = s.as_bytes();
        if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
            return false;
        }
        let sum: u32 = (0..12).map(|i| if i % 2 == 0 { 1 } else { 3 } * u32::from(b[i] - b'0')).sum();
        u32::from(b[12] - b'0') == (10 - sum % 10) % 10
    }

    fn is_credit_card(text: &str) -> bool {
        let digits: String = text.chars().filter(char::is_ascii_digit).collect();
        if !CREDIT_CARD.is_match(&digits) {
            return false;
        }
        let mut sum = 0u32;
        for (i, c) in digits.bytes().rev().enumerate() {
            let mut d = u32::from(c - b'0');
            if i % 2 == 1 {
                d *= 2;
                if d >= 10 {
                    d = d % 10 + 1;
                }
            }
            sum += d;
        }
        sum.is_multiple_of(10)
    }

    /// `YYYY-MM-DD`, a real calendar date.
    pub(super) fn parse_date(text: &str) -> Option<(i64, u32, u32)> {
        let b = text.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let digits = |r: std::ops::Range<usize>| -> Option<i64> {
            let part = text.get(r)?;
            if part.bytes().all(|c| c.is_ascii_digit()) { part.parse().ok() } else { None }
        };
        let (year, month, day) = (digits(0..4)?, digits(5..7)? as u32, digits(8..10)? as u32);
        valid_date(year, month, day).then_some((year, month, day))
    }

    fn is_date_time(text: &str) -> bool {
        if text.len() < 4 {
            return false;
        }
        let lower = text.to_lowercase();
        let parts: Vec<&str> = lower.split('t').collect();
        if parts.len() < 2 || parse_date(parts[0]).is_none() {
            return false;
        }
        let time = parts[1].as_bytes();
        // hh:mm:ss(.fraction)?(z|±hh:mm)
        if time.len() < 9 || time[2] != b':' || time[5] != b':' {
            return false;
        }
        let two = |i: usize| -> Option<u32> {
            let (a, b) = (time.get(i)?, time.get(i + 1)?);
            (a.is_ascii_digit() && b.is_ascii_digit()).then(|| u32::from(a - b'0') * 10 + u32::from(b - b'0'))
        };
        let (Some(h), Some(m), Some(s)) = (two(0), two(3), two(6)) else { return false };
        let mut rest = &parts[1][8..];
        if rest.len() > 1 && !rest.starts_with(['z', '+', '-']) {
            // Any one character followed by digits is a fraction separator.
            let mut chars = rest.chars();
            chars.next();
            let tail = chars.as_str();
            let count = tail.bytes().take_while(u8::is_ascii_digit).count();
            if count == 0 {
                return false;
            }
            rest = &tail[count..];
        }
        let zone_ok = rest == "z" || {
            let z = rest.as_bytes();
            z.len() == 6
                && matches!(z[0], b'+' | b'-')
                && z[1].is_ascii_digit()
                && z[2].is_ascii_digit()
                && z[3] == b':'
                && z[4].is_ascii_digit()
                && z[5].is_ascii_digit()
        };
        zone_ok && h <= 23 && m <= 59 && s <= 59
    }

    fn is_duration(text: &str) -> bool {
        if go_parse_duration(text) {
            return true;
        }
        // The fallback of strfmt: "<digits><unit>" groups such as "3 days" or "1 hr".
        let units: [&[&str]; 8] = [
            &["ns", "nano"],
            &["us", "µs", "micro"],
            &["ms", "milli"],
            &["s", "sec"],
            &["m", "min"],
            &["h", "hr", "hour"],
            &["d", "day"],
            &["w", "wk", "week"],
        ];
        #[allow(clippy::unwrap_used)] // constant pattern
        static GROUP: LazyLock<Regex> =
            LazyLock::new(|| Regex::new(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)").unwrap());
        GROUP.captures_iter(text).any(|caps| {
            let unit = caps.get(2).map(|m| m.as_str().to_lowercase()).unwrap_or_default();
            caps.get(1).is_some_and(|d| d.as_str().parse::<i64>().is_ok())
                && units.iter().any(|variants| {
                    let last = variants.len() - 1;
                    variants
                        .iter()
                        .enumerate()
                        .any(|(i, v)| (i == last && unit.starts_with(v)) || unit.eq_ignore_ascii_case(v))
                })
        })
    }

    /// Go's `time.ParseDuration` syntax: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`.
    fn go_parse_duration(text: &str) -> bool {
        let s = text.strip_prefix(['-', '+']).unwrap_or(text);
        if s == "0" {
            return true;
        }
        if s.is_empty() {
            return false;
        }
        let mut rest = s;
        while !rest.is_empty() {
            let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            let mut consumed = int_len;
            let mut frac_len = 0;
            if rest[consumed..].starts_with('.') {
                consumed += 1;
                frac_len = rest[consumed..].bytes().take_while(u8::is_ascii_digit).count();
                consumed += frac_len;
            }
            if int_len == 0 && frac_len == 0 {
                return false;
            }
            rest = &rest[consumed..];
            let unit_len = rest.find(|c: char| c == '.' || c.is_ascii_digit()).unwrap_or(rest.len());
            if !matches!(&rest[..unit_len], "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h") {
                return false;
            }
            rest = &rest[unit_len..];
        }
        true
    }
}

// ---------------------------------------------------------------------------------------------
// Invariants kube validates besides the OpenAPI schema
// ---------------------------------------------------------------------------------------------

fn embedded_resources(path: &FieldPath, value: &Value, s: &JSONSchemaProps, errors: &mut ErrorList) {
    match value {
        Value::Object(map) => {
            if is_embedded(s) {
                validate_embedded_resource(path, map, errors);
            }
            for (key, item) in map {
                if let Some(prop) = property(s, key) {
                    embedded_resources(&path.child(key), item, prop, errors);
                } else if let Some(addl) = additional_schema(s) {
                    embedded_resources(&path.key(key), item, addl, errors);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_s) = item_schema(s) {
                for (index, item) in items.iter().enumerate() {
                    embedded_resources(&path.index(index), item, item_s, errors);
                }
            }
        }
        _ => {}
    }
}

fn validate_embedded_resource(path: &FieldPath, map: &Map<String, Value>, errors: &mut ErrorList) {
    if !map.contains_key("apiVersion") {
        errors.push(FieldError::required(&path.child("apiVersion"), ""));
    }
    if !map.contains_key("kind") {
        errors.push(FieldError::required(&path.child("kind"), ""));
    }
    for (key, value) in map {
        let field = path.child(key);
        match key.as_str() {
            "apiVersion" => match value {
                Value::String(v) if v.is_empty() => errors.push(invalid_str(&field, v, "must not be empty")),
                Value::String(v) if v.matches('/').count() > 1 => {
                    errors.push(invalid_str(&field, v, format!("unexpected GroupVersion string: {v}")));
                }
                Value::String(_) => {}
                other => errors.push(invalid_value(&field, other, "must be a string")),
            },
            "kind" => match value {
                Value::String(v) if v.is_empty() => errors.push(invalid_str(&field, v, "must not be empty")),
                Value::String(v) => {
                    let problems = names::dns1035_label(&v.to_lowercase());
                    if !problems.is_empty() {
                        errors.push(invalid_str(
                            &field,
                            v,
                            format!(
                                "may have mixed case, but should otherwise match: {}",
                                problems.join(",")
                            ),
                        ));
                    }
                }
                other => errors.push(invalid_value(&field, other, "must be a string")),
            },
            "metadata" => match value {
                Value::Object(meta) => {
                    for name_field in ["name", "generateName"] {
                        if let Some(Value::String(name)) = meta.get(name_field) {
                            for problem in names::path_segment_name(name, name_field == "generateName") {
                                errors.push(invalid_str(&field.child(name_field), name, problem));
                            }
                        }
                    }
                    if let Some(Value::String(namespace)) = meta.get("namespace")
                        && !namespace.is_empty()
                    {
                        for problem in names::dns1123_label(namespace) {
                            errors.push(invalid_str(&field.child("namespace"), namespace, problem));
                        }
                    }
                }
                Value::Null => {}
                other => errors.push(invalid_value(&field, other, "must be an object")),
            },
            _ => {}
        }
    }
}

fn list_sets_and_maps(path: &FieldPath, s: &JSONSchemaProps, map: &Map<String, Value>) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(addl) = additional_schema(s) {
        for (key, value) in map {
            errors.extend(list_value(&path.key(key), addl, value));
        }
    }
    if s.properties.is_some() {
        for (key, value) in map {
            if let Some(prop) = property(s, key) {
                errors.extend(list_value(&path.child(key), prop, value));
            }
        }
    }
    errors
}

fn list_value(path: &FieldPath, s: &JSONSchemaProps, value: &Value) -> ErrorList {
    match value {
        Value::Array(items) => list_array(path, s, items),
        Value::Object(map) => list_sets_and_maps(path, s, map),
        _ => ErrorList::new(),
    }
}

/// A key that distinguishes values the way Go's map keys and JSON encoding do (an integer and a
/// float with the same value are different set members).
fn identity(value: &Value) -> String {
    match value {
        Value::Number(n) if n.is_f64() => format!("f:{}", gofmt::json(value)),
        _ => gofmt::json(value),
    }
}

/// Indices of the second occurrence of every repeated key (later repetitions are not reported).
fn second_occurrences(keys: &[String]) -> Vec<usize> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut result = Vec::new();
    for (index, key) in keys.iter().enumerate() {
        let count = seen.entry(key.as_str()).or_insert(0);
        *count += 1;
        if *count == 2 {
            result.push(index);
        }
    }
    result
}

fn list_array(path: &FieldPath, s: &JSONSchemaProps, items: &[Value]) -> ErrorList {
    let mut errors = ErrorList::new();
    match s.x_kubernetes_list_type.as_deref() {
        Some("set") if items.len() > 1 => {
            let keys: Vec<String> = items.iter().map(identity).collect();
            for index in second_occurrences(&keys) {
                errors.push(FieldError::duplicate(&path.index(index), gofmt::field_value(&items[index])));
            }
        }
        Some("map") => errors.extend(list_map(path, s, items)),
        _ => {}
    }
    if let Some(item_s) = item_schema(s) {
        for (index, item) in items.iter().enumerate() {
            errors.extend(list_value(&path.index(index), item_s, item));
        }
    }
    errors
}

fn list_map(path: &FieldPath, s: &JSONSchemaProps, items: &[Value]) -> ErrorList {
    for (index, item) in items.iter().enumerate() {
        if !item.is_null() && !item.is_object() {
            return vec![invalid_value(
                &path.index(index),
                item,
                "must be an object for an array of list-type map",
            )];
        }
    }
    if items.len() <= 1 {
        return ErrorList::new();
    }
    let key_fields = list(&s.x_kubernetes_list_map_keys);
    let key_maps: Vec<Value> = items
        .iter()
        .map(|item| {
            let mut key = Map::new();
            if let Value::Object(map) = item {
                for field in key_fields {
                    if let Some(v) = map.get(field) {
                        key.insert(field.clone(), v.clone());
                    }
                }
            }
            Value::Object(key)
        })
        .collect();
    let identities: Vec<String> = if key_fields.len() == 1 {
        // A missing key is its own "unspecified" value, distinct from every real value.
        key_maps
            .iter()
            .map(|k| match k.get(&key_fields[0]) {
                Some(v) => identity(v),
                None => "\u{0}unspecified".to_string(),
            })
            .collect()
    } else {
        key_maps.iter().map(identity).collect()
    };
    second_occurrences(&identities)
        .into_iter()
        .map(|index| FieldError::duplicate(&path.index(index), gofmt::json(&key_maps[index])))
        .collect()
}

/// Name validations of apimachinery, with its exact messages.
mod names {
    use super::*;

    #[allow(clippy::unwrap_used)] // constant patterns
    static DNS1035: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[a-z]([-a-z0-9]*[a-z0-9])?$").unwrap());
    #[allow(clippy::unwrap_used)]
    static DNS1123_LABEL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").unwrap());
    #[allow(clippy::unwrap_used)]
    static DNS1123_SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$").unwrap()
    });

    fn regex_error(message: &str, format: &str, examples: &[&str]) -> String {
        // apimachinery joins "'a', " and "'b', " with " or ", hence the double space.
        let examples = examples.iter().map(|e| format!("'{e}', ")).collect::<Vec<_>>().join(" or ");
        format!("{message} (e.g. {examples}regex used for validation is '{format}')")
    }

    /// Problems of `value` as a DNS-1035 label (CRD plurals, version names, kinds lowercased).
    pub(super) fn dns1035_label(value: &str) -> Vec<String> {
        let mut problems = Vec::new();
        if value.len() > 63 {
            problems.push("must be no more than 63 characters".to_string());
        }
        if !DNS1035.is_match(value) {
            problems.push(regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an \
                 alphabetic character, and end with an alphanumeric character",
                "[a-z]([-a-z0-9]*[a-z0-9])?",
                &["my-name", "abc-123"],
            ));
        }
        problems
    }

    /// Problems of `value` as a DNS-1123 label (namespaces).
    pub(super) fn dns1123_label(value: &str) -> Vec<String> {
        let mut problems = Vec::new();
        if value.len() > 63 {
            problems.push("must be no more than 63 characters".to_string());
        }
        if !DNS1123_LABEL.is_match(value) {
            problems.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and \
                 must start and end with an alphanumeric character",
                "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
                &["my-name", "123-abc"],
            ));
        }
        problems
    }

    /// Problems of `value` as a DNS-1123 subdomain (CRD names, API groups).
    pub(super) fn dns1123_subdomain(value: &str) -> Vec<String> {
        let mut problems = Vec::new();
        if value.len() > 253 {
            problems.push("must be no more than 253 characters".to_string());
        }
        if !DNS1123_SUBDOMAIN.is_match(value) {
            problems.push(regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or \
                 '.', and must start and end with an alphanumeric character",
                r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
                &["example.com"],
            ));
        }
        problems
    }

    /// Problems of a name used as a URL path segment (embedded resources' names).
    pub(super) fn path_segment_name(name: &str, prefix: bool) -> Vec<String> {
        let mut problems = Vec::new();
        if !prefix && (name == "." || name == "..") {
            problems.push(format!("may not be '{name}'"));
        }
        for illegal in ["/", "%"] {
            if name.contains(illegal) {
                problems.push(format!("may not contain '{illegal}'"));
            }
        }
        problems
    }
}

// =============================================================================================
// List types for server-side apply
// =============================================================================================

/// The list types of a CRD version's schema for server-side apply / strategic handling: for a path
/// like "spec.containers" (lists written as `[]` in the path, e.g. "spec.containers[].ports"; a
/// leading dot is allowed), the declared `x-kubernetes-list-type` and `-list-map-keys`. `None`
/// when the path leads nowhere, to something that is not a list, or to a list without a declared
/// type (which server-side apply treats as `atomic`). Map values are reached through
/// `additionalProperties` by any key name.
pub fn list_type_at(schema: &JSONSchemaProps, path: &str) -> Option<(String, Vec<String>)> {
    let mut current = schema;
    let trimmed = path.strip_prefix('.').unwrap_or(path);
    if !trimmed.is_empty() {
        for segment in trimmed.split('.') {
            let (name, mut depth) = strip_list_markers(segment);
            if !name.is_empty() {
                current = property(current, name).or_else(|| additional_schema(current))?;
            }
            while depth > 0 {
                current = item_schema(current)?;
                depth -= 1;
            }
        }
    }
    if type_of(current) != "array" && item_schema(current).is_none() {
        return None;
    }
    let list_type = current.x_kubernetes_list_type.clone()?;
    Some((list_type, current.x_kubernetes_list_map_keys.clone().unwrap_or_default()))
}

fn strip_list_markers(segment: &str) -> (&str, usize) {
    let mut name = segment;
    let mut depth = 0;
    while let Some(rest) = name.strip_suffix("[]") {
        name = rest;
        depth += 1;
    }
    (name, depth)
}

// =============================================================================================
// CustomResourceDefinition validation
// =============================================================================================

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

/// JSON renderings of kube's internal apiextensions types (no JSON tags: Go field names, all
/// fields, declaration order), which is what kube shows as the value of some CRD errors.
mod go_json {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceColumnDefinition, CustomResourceSubresources, CustomResourceValidation,
        JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, JSONSchemaPropsOrStringArray,
    };
    use serde_json::Value;

    use super::gofmt;

    pub(super) fn object(fields: &[(&str, String)]) -> String {
        let body: Vec<String> = fields.iter().map(|(k, v)| format!("{}:{v}", string(k))).collect();
        format!("{{{}}}", body.join(","))
    }

    pub(super) fn array(items: impl Iterator<Item = String>) -> String {
        format!("[{}]", items.collect::<Vec<_>>().join(","))
    }

    pub(super) fn string(text: &str) -> String {
        gofmt::json(&Value::String(text.to_string()))
    }

    pub(super) fn opt_string(text: &Option<String>) -> String {
        text.as_deref().map(string).unwrap_or_else(|| "null".into())
    }

    fn text(value: &Option<String>) -> String {
        string(value.as_deref().unwrap_or(""))
    }

    fn opt<T>(value: &Option<T>, render: impl Fn(&T) -> String) -> String {
        value.as_ref().map(render).unwrap_or_else(|| "null".into())
    }

    fn float(value: &f64) -> String {
        gofmt::json_float(*value)
    }

    fn strings(values: &[String]) -> String {
        array(values.iter().map(|v| string(v)))
    }

    fn schema_map(map: &std::collections::BTreeMap<String, JSONSchemaProps>) -> String {
        let body: Vec<String> = map.iter().map(|(k, v)| format!("{}:{}", string(k), schema(v))).collect();
        format!("{{{}}}", body.join(","))
    }

    fn or_bool(value: &JSONSchemaPropsOrBool) -> String {
        match value {
            JSONSchemaPropsOrBool::Bool(allows) => {
                object(&[("Allows", allows.to_string()), ("Schema", "null".into())])
            }
            JSONSchemaPropsOrBool::Schema(s) => object(&[("Allows", "true".into()), ("Schema", schema(s))]),
        }
    }

    pub(super) fn items(value: &JSONSchemaPropsOrArray) -> String {
        match value {
            JSONSchemaPropsOrArray::Schema(s) => {
                object(&[("Schema", schema(s)), ("JSONSchemas", "null".into())])
            }
            JSONSchemaPropsOrArray::Schemas(list) => {
                object(&[("Schema", "null".into()), ("JSONSchemas", array(list.iter().map(schema)))])
            }
        }
    }

    /// An internal `JSONSchemaProps`.
    pub(super) fn schema(s: &JSONSchemaProps) -> String {
        let json_value =
            |v: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON| gofmt::json(&v.0);
        let dependencies = opt(&s.dependencies, |deps| {
            let body: Vec<String> = deps
                .iter()
                .map(|(k, v)| {
                    let rendered = match v {
                        JSONSchemaPropsOrStringArray::Schema(s) => {
                            object(&[("Schema", schema(s)), ("Property", "null".into())])
                        }
                        JSONSchemaPropsOrStringArray::Strings(list) => {
                            object(&[("Schema", "null".into()), ("Property", strings(list))])
                        }
                    };
                    format!("{}:{rendered}", string(k))
                })
                .collect();
            format!("{{{}}}", body.join(","))
        });
        let validations = opt(&s.x_kubernetes_validations, |rules| {
            array(rules.iter().map(|r| {
                object(&[
                    ("Rule", string(&r.rule)),
                    ("Message", text(&r.message)),
                    ("MessageExpression", text(&r.message_expression)),
                    ("Reason", opt_string(&r.reason)),
                    ("FieldPath", text(&r.field_path)),
                    ("OptionalOldSelf", opt(&r.optional_old_self, bool::to_string)),
                ])
            }))
        });
        object(&[
            ("ID", text(&s.id)),
            ("Schema", text(&s.schema)),
            ("Ref", opt_string(&s.ref_path)),
            ("Description", text(&s.description)),
            ("Type", text(&s.type_)),
            ("Nullable", s.nullable.unwrap_or(false).to_string()),
            ("Format", text(&s.format)),
            ("Title", text(&s.title)),
            ("Default", opt(&s.default, json_value)),
            ("Maximum", opt(&s.maximum, float)),
            ("ExclusiveMaximum", s.exclusive_maximum.unwrap_or(false).to_string()),
            ("Minimum", opt(&s.minimum, float)),
            ("ExclusiveMinimum", s.exclusive_minimum.unwrap_or(false).to_string()),
            ("MaxLength", opt(&s.max_length, i64::to_string)),
            ("MinLength", opt(&s.min_length, i64::to_string)),
            ("Pattern", text(&s.pattern)),
            ("MaxItems", opt(&s.max_items, i64::to_string)),
            ("MinItems", opt(&s.min_items, i64::to_string)),
            ("UniqueItems", s.unique_items.unwrap_or(false).to_string()),
            ("MultipleOf", opt(&s.multiple_of, float)),
            ("Enum", opt(&s.enum_, |values| array(values.iter().map(json_value)))),
            ("MaxProperties", opt(&s.max_properties, i64::to_string)),
            ("MinProperties", opt(&s.min_properties, i64::to_string)),
            ("Required", opt(&s.required, |r| strings(r))),
            ("Items", opt(&s.items, items)),
            ("AllOf", opt(&s.all_of, |l| array(l.iter().map(schema)))),
            ("OneOf", opt(&s.one_of, |l| array(l.iter().map(schema)))),
            ("AnyOf", opt(&s.any_of, |l| array(l.iter().map(schema)))),
            ("Not", opt(&s.not, |n| schema(n))),
            ("Properties", opt(&s.properties, schema_map)),
            ("AdditionalProperties", opt(&s.additional_properties, or_bool)),
            ("PatternProperties", opt(&s.pattern_properties, schema_map)),
            ("Dependencies", dependencies),
            ("AdditionalItems", opt(&s.additional_items, or_bool)),
            ("Definitions", opt(&s.definitions, schema_map)),
            (
                "ExternalDocs",
                opt(&s.external_docs, |d| {
                    object(&[("Description", text(&d.description)), ("URL", text(&d.url))])
                }),
            ),
            ("Example", opt(&s.example, json_value)),
            ("XPreserveUnknownFields", opt(&s.x_kubernetes_preserve_unknown_fields, bool::to_string)),
            ("XEmbeddedResource", s.x_kubernetes_embedded_resource.unwrap_or(false).to_string()),
            ("XIntOrString", s.x_kubernetes_int_or_string.unwrap_or(false).to_string()),
            ("XListMapKeys", opt(&s.x_kubernetes_list_map_keys, |k| strings(k))),
            ("XListType", opt_string(&s.x_kubernetes_list_type)),
            ("XMapType", opt_string(&s.x_kubernetes_map_type)),
            ("XValidations", validations),
        ])
    }

    pub(super) fn validation(v: &CustomResourceValidation) -> String {
        object(&[("OpenAPIV3Schema", opt(&v.open_api_v3_schema, schema))])
    }

    pub(super) fn subresources(s: &CustomResourceSubresources) -> String {
        let scale = opt(&s.scale, |scale| {
            object(&[
                ("SpecReplicasPath", string(&scale.spec_replicas_path)),
                ("StatusReplicasPath", string(&scale.status_replicas_path)),
                ("LabelSelectorPath", opt_string(&scale.label_selector_path)),
            ])
        });
        object(&[("Status", opt(&s.status, |_| "{}".to_string())), ("Scale", scale)])
    }

    pub(super) fn column(c: &CustomResourceColumnDefinition) -> String {
        object(&[
            ("Name", string(&c.name)),
            ("Type", string(&c.type_)),
            ("Format", text(&c.format)),
            ("Description", text(&c.description)),
            ("Priority", c.priority.unwrap_or(0).to_string()),
            ("JSONPath", string(&c.json_path)),
        ])
    }
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

// ---------------------------------------------------------------------------------------------
// The openAPIV3Schema of one CRD version
// ---------------------------------------------------------------------------------------------

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

fn crd_validation(
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
                errors.extend(defaults::validate(&schema_path, schema));
            }
        }
    }
    errors.extend(schema_rules::validate(schema, &schema_path, &schema_rules::Context::root(), true));
    if errors.is_empty() {
        errors.extend(init_errors);
    }
    errors
}

/// Kube's structural-schema checks (`apiserver/schema`): conversion failures, invariants and
/// completeness.
mod structural {
    use super::*;

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

    fn nested(
        v: &JSONSchemaProps,
        skip_any_of: bool,
        level: Level,
        path: &FieldPath,
        errors: &mut ErrorList,
    ) {
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
}

/// Validation of `default` values inside a structural schema (kube's `defaulting.ValidateDefaults`).
mod defaults {
    use super::*;

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

/// The per-schema rules of `ValidateCustomResourceDefinitionOpenAPISchema`.
mod schema_rules {
    use super::*;

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
            errors.push(FieldError::forbidden(
                &path.child("additionalItems"),
                "additionalItems is not supported",
            ));
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
                errors.push(invalid_str(
                    &rule_path.child("message"),
                    message,
                    "must be non-empty if specified",
                ));
            } else if has_newlines(trimmed_message) {
                errors.push(invalid_str(
                    &rule_path.child("message"),
                    message,
                    "must not contain line breaks",
                ));
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
            if !field_path.is_empty()
                && structural::unsupported(s).is_none()
                && !valid_field_path(field_path, s)
            {
                errors.push(invalid_str(&rule_path.child("fieldPath"), field_path, "must be a valid path"));
            }
        }
    }
}
