//! The OpenAPI v3 validator of kube-openapi (`validate.SchemaValidator`), reproduced closely
//! enough that messages, error kinds, and the choice of reported errors for `anyOf`/`oneOf`
//! (which depends on its match counting) are the same.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use kruise_machinery::field::{ErrorList, ErrorType, FieldError, FieldPath};
use serde_json::{Map, Value};

use super::{
    accessors::{
        Additional, additional, has_property, is_int_or_string, is_nullable, item_schema, list, properties,
        text, type_of,
    },
    field_errors::{too_long, too_many},
    formats,
    patterns::compiled_pattern,
};
use crate::semantics::jsonpath::gofmt;

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
            main.add(composite(format!("{quoted} must validate one and only one schema (oneOf). {detail}")));
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
        let mut p =
            problem(Code::TooLong, path, value, format!("{path} in body should be at most {max} chars long"));
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
    if formats::is_valid(&format.replace('-', ""), text) {
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
                        value: Some(p.value.as_ref().map(GoValue::render).unwrap_or_else(|| "null".into())),
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
