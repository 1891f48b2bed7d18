//! JSON as Go's `encoding/json` writes it for the Kubernetes Go types.
//!
//! Upstream controllers compute some values from JSON that Go wrote for a *typed* object, e.g.
//! the data of a ControllerRevision (`getPatch`: the workload encoded, decoded into
//! `map[string]interface{}`, `spec.template` kept, marshalled again) and its hash. To compute the
//! same bytes, [`marshal`] re-marshals a JSON value of a given Go message type (e.g.
//! `k8s.io/api/core/v1.PodTemplateSpec`) exactly as `encoding/json` marshals the typed struct
//! after decoding that JSON into it, driven by the Go-types schema ([`crate::gotypes`]):
//!
//! - fields the Go type does not have are dropped (as Go's typed decode drops them);
//! - a non-pointer field is always written unless it is `omitempty` and empty (`""`, `0`,
//!   `false`, an empty slice or map); a struct is never "empty", so `"resources":{}` and
//!   `ObjectMeta.creationTimestamp` (a `metav1.Time`, `null` when zero) are always written;
//! - a pointer, slice or map that is unset is `null`, or left out when `omitempty`; a pointer to
//!   a zero value is written;
//! - `omitzero` is honoured only for [`Types::Current`]; kruise v1.9.0 is built with
//!   apimachinery v0.32, which has no `omitzero` ([`Types::Base`]);
//! - the types with their own JSON form: `metav1.Time` (RFC 3339 in UTC, whole seconds, `null`
//!   when zero), `metav1.MicroTime` (microseconds), `resource.Quantity` (Go's canonical string,
//!   [`crate::quantity::go`]), `intstr.IntOrString` (as given), `runtime.RawExtension` and the
//!   other embedded-JSON types (as given).
//!
//! Object keys come out sorted (serde_json's map is ordered), as Go sorts map keys. Then
//! [`untyped`] applies the `map[string]interface{}` round trip (numbers become float64) and
//! [`to_vec`] writes bytes as `json.Marshal` does (Go's float format, `<`, `>`, `&`, U+2028 and
//! U+2029 escaped); [`to_vec_typed`] writes the typed struct's bytes (fields in declaration
//! order), for hashes upstream takes over `json.Marshal` of a typed value.
//!
//! JSON is read case-sensitively, as the apimachinery serializer (`sigs.k8s.io/json`) reads it.

mod write;

use serde_json::{Map, Number, Value};

use crate::{
    gotypes::{Field, Message, SCHEMA, names},
    quantity::go as quantity,
};

pub use write::{to_string, to_vec, to_vec_typed};

/// The Go message of a pod template.
pub const POD_TEMPLATE_SPEC: &str = "k8s.io/api/core/v1.PodTemplateSpec";

/// Which Go types the JSON is decoded into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Types {
    /// The schema's base, the `k8s.io/api` v0.32 that upstream OpenKruise v1.9.0 is built with:
    /// fields added to the types later are unknown (dropped), and no field is `omitzero`.
    #[default]
    Base,
    /// The schema's own version (the embedded API server's Kubernetes version).
    Current,
}

/// Why a value cannot be decoded into its Go type (Go's decode would fail too).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct Error {
    /// The JSON path of the value.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn error(path: &str, message: impl Into<String>) -> Error {
    Error { path: if path.is_empty() { "<root>".into() } else { path.into() }, message: message.into() }
}

/// Re-marshals `value`, the JSON of a `message` (Go package path and type name, e.g.
/// [`POD_TEMPLATE_SPEC`]), as Go's `encoding/json` would after decoding it into that type.
pub fn marshal(message: &str, value: &Value, types: Types) -> Result<Value, Error> {
    Encoder { types }.element(message, Some(value).filter(|v| !v.is_null()), "")
}

/// What decoding Go-written JSON into `interface{}` and marshalling it again makes of a value:
/// numbers go through float64 (integers beyond 2^53 lose their last digits). Integral results
/// stay integers, so serde_json writes them as Go does.
pub fn untyped(value: Value) -> Value {
    match value {
        Value::Number(number) => Value::Number(through_float(&number)),
        Value::Array(items) => Value::Array(items.into_iter().map(untyped).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, untyped(v))).collect()),
        other => other,
    }
}

fn through_float(number: &Number) -> Number {
    let Some(float) = number.as_f64() else { return number.clone() };
    // Integral values of magnitude below 2^63 are exact as i64; larger ones as u64 or f64.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked ranges
    if float.fract() == 0.0 {
        if float.abs() < 2f64.powi(63) {
            return Number::from(float as i64);
        }
        if (0.0..2f64.powi(64)).contains(&float) {
            return Number::from(float as u64);
        }
    }
    Number::from_f64(float).unwrap_or_else(|| number.clone())
}

struct Encoder {
    types: Types,
}

impl Encoder {
    fn message(&self, name: &str, path: &str) -> Result<&'static Message, Error> {
        SCHEMA.messages.get(name).ok_or_else(|| error(path, format!("no Go type {name} in the schema")))
    }

    /// The fields of a struct, `input` being its JSON object (None when absent or null).
    fn fields(
        &self,
        name: &str,
        input: Option<&Map<String, Value>>,
        path: &str,
    ) -> Result<Map<String, Value>, Error> {
        let message = self.message(name, path)?;
        let mut out = Map::new();
        for field in &message.fields {
            if self.types == Types::Base && field.not_in_base {
                continue;
            }
            if field.inline {
                let present = field.fields_present(input);
                if field.pointer && !present {
                    continue;
                }
                for (key, value) in self.fields(&field.ty, input, path)? {
                    // A field of the outer struct wins over a promoted one of the same name.
                    out.entry(key).or_insert(value);
                }
                continue;
            }
            let child = if path.is_empty() { field.json.clone() } else { format!("{path}.{}", field.json) };
            let raw = input.and_then(|m| m.get(&field.json)).filter(|v| !v.is_null());
            if let Some(value) = self.field(field, raw, &child)? {
                out.insert(field.json.clone(), value);
            }
        }
        Ok(out)
    }

    /// One field's JSON, or None when Go leaves it out.
    fn field(&self, field: &Field, raw: Option<&Value>, path: &str) -> Result<Option<Value>, Error> {
        let omit_zero = field.omit_zero && self.types == Types::Current;
        let omit_unset = field.omit_empty || omit_zero;
        if field.map_key.is_some() {
            let Some(raw) = raw else { return Ok((!omit_unset).then_some(Value::Null)) };
            let map = raw.as_object().ok_or_else(|| error(path, "expected an object"))?;
            if map.is_empty() && field.omit_empty {
                return Ok(None);
            }
            let mut out = Map::new();
            for (key, value) in map {
                let item = format!("{path}[{key}]");
                out.insert(key.clone(), self.map_value(&field.ty, value, &item)?);
            }
            return Ok(Some(Value::Object(out)));
        }
        if field.repeated {
            let Some(raw) = raw else { return Ok((!omit_unset).then_some(Value::Null)) };
            let items = raw.as_array().ok_or_else(|| error(path, "expected an array"))?;
            if items.is_empty() && field.omit_empty {
                return Ok(None);
            }
            return self.items(&field.ty, items, path).map(|items| Some(Value::Array(items)));
        }
        if field.pointer {
            let Some(raw) = raw else { return Ok((!omit_unset).then_some(Value::Null)) };
            return self.element(&field.ty, Some(raw), path).map(Some);
        }
        // A value field: its zero value when unset; nil when a byte slice or a named slice.
        let nil_when_unset = field.ty == "bytes" || self.is_wrapper(&field.ty);
        if raw.is_none() && nil_when_unset {
            return Ok((!omit_unset).then_some(Value::Null));
        }
        let value = self.element(&field.ty, raw, path)?;
        if field.omit_empty && is_empty(&field.ty, &value) {
            return Ok(None);
        }
        if omit_zero && value == self.element(&field.ty, None, path)? {
            return Ok(None);
        }
        Ok(Some(value))
    }

    /// A map value: JSON `null` stores the element type's zero value.
    fn map_value(&self, ty: &str, value: &Value, path: &str) -> Result<Value, Error> {
        if value.is_null() && (ty == "bytes" || self.is_wrapper(ty)) {
            return Ok(Value::Null);
        }
        self.element(ty, Some(value).filter(|v| !v.is_null()), path)
    }

    fn items(&self, ty: &str, items: &[Value], path: &str) -> Result<Vec<Value>, Error> {
        items
            .iter()
            .enumerate()
            .map(|(index, item)| self.map_value(ty, item, &format!("{path}[{index}]")))
            .collect()
    }

    fn is_wrapper(&self, ty: &str) -> bool {
        SCHEMA.messages.get(ty).is_some_and(|m| m.wrapper)
    }

    /// A value of type `ty`, its zero value when `raw` is None (absent or null).
    fn element(&self, ty: &str, raw: Option<&Value>, path: &str) -> Result<Value, Error> {
        match ty {
            "string" => match raw {
                None => Ok(Value::String(String::new())),
                Some(Value::String(s)) => Ok(Value::String(s.clone())),
                Some(_) => Err(error(path, "expected a string")),
            },
            "bytes" => match raw {
                None => Ok(Value::Null),
                Some(Value::String(s)) => Ok(Value::String(s.clone())),
                Some(_) => Err(error(path, "expected a base64 string")),
            },
            "bool" => match raw {
                None => Ok(Value::Bool(false)),
                Some(Value::Bool(b)) => Ok(Value::Bool(*b)),
                Some(_) => Err(error(path, "expected a boolean")),
            },
            "int32" | "int64" | "uint32" | "uint64" => integer(ty, raw, path),
            "float64" => match raw {
                None => Ok(Value::from(0)),
                Some(Value::Number(n)) => Ok(Value::Number(n.clone())),
                Some(_) => Err(error(path, "expected a number")),
            },
            _ => self.custom_or_struct(ty, raw, path),
        }
    }

    fn custom_or_struct(&self, ty: &str, raw: Option<&Value>, path: &str) -> Result<Value, Error> {
        let message = self.message(ty, path)?;
        if message.custom_json {
            return custom(ty, raw, path);
        }
        if message.wrapper {
            let Some(raw) = raw else { return Ok(Value::Null) };
            let items = raw.as_array().ok_or_else(|| error(path, "expected an array"))?;
            let item = message.fields.first().map(|f| f.ty.as_str()).unwrap_or("string");
            return self.items(item, items, path).map(Value::Array);
        }
        let input = match raw {
            None => None,
            Some(Value::Object(map)) => Some(map),
            Some(_) => return Err(error(path, "expected an object")),
        };
        self.fields(ty, input, path).map(Value::Object)
    }
}

impl Field {
    /// Whether any JSON field of this inline struct is in the object (Go allocates an embedded
    /// pointer only then).
    fn fields_present(&self, input: Option<&Map<String, Value>>) -> bool {
        let Some(input) = input else { return false };
        SCHEMA.messages.get(&self.ty).is_some_and(|m| {
            m.fields
                .iter()
                .any(|f| if f.inline { f.fields_present(Some(input)) } else { input.contains_key(&f.json) })
        })
    }
}

/// Go's `omitempty` test for a non-pointer value: empty strings and byte slices, `false`, zero
/// numbers, empty named slices. Structs (including Time, Quantity, IntOrString) never are.
fn is_empty(ty: &str, value: &Value) -> bool {
    match ty {
        "string" | "bytes" => value.as_str().is_none_or(str::is_empty),
        "bool" => value == &Value::Bool(false),
        "int32" | "int64" | "uint32" | "uint64" | "float64" => value.as_f64() == Some(0.0),
        _ => value.as_array().is_some_and(Vec::is_empty),
    }
}

fn integer(ty: &str, raw: Option<&Value>, path: &str) -> Result<Value, Error> {
    let Some(raw) = raw else { return Ok(Value::from(0)) };
    let (min, max): (i128, i128) = match ty {
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        _ => (0, u64::MAX.into()),
    };
    let value = match raw {
        Value::Number(n) => n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from)),
        _ => None,
    };
    match value {
        Some(v) if (min..=max).contains(&v) => Ok(u64::try_from(v)
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(i64::try_from(v).unwrap_or(0)))),
        _ => Err(error(path, format!("cannot unmarshal {raw} into a Go value of type {ty}"))),
    }
}

/// The types with their own `MarshalJSON`/`UnmarshalJSON`.
fn custom(ty: &str, raw: Option<&Value>, path: &str) -> Result<Value, Error> {
    match ty {
        names::TIME => time(raw, path, false),
        names::MICRO_TIME => time(raw, path, true),
        names::QUANTITY => {
            let text = match raw {
                None => return Ok(Value::String("0".into())),
                Some(Value::String(s)) => s.clone(),
                // Unquoted, Go parses the number's text.
                Some(Value::Number(n)) => n.to_string(),
                Some(other) => return Err(error(path, format!("cannot unmarshal {other} into a quantity"))),
            };
            quantity::canonical(&text).map(Value::String).map_err(|e| error(path, e.to_string()))
        }
        names::INT_OR_STRING => match raw {
            None => Ok(Value::from(0)),
            Some(Value::String(s)) => Ok(Value::String(s.clone())),
            Some(number @ Value::Number(_)) => integer("int32", Some(number), path),
            Some(_) => Err(error(path, "expected an integer or a string")),
        },
        // Embedded JSON (RawExtension, FieldsV1, apiextensions JSON and its unions): as given.
        _ => Ok(raw.cloned().unwrap_or(Value::Null)),
    }
}

/// `metav1.Time` / `metav1.MicroTime`: RFC 3339 in, UTC out (`null` for Go's zero time).
fn time(raw: Option<&Value>, path: &str, micro: bool) -> Result<Value, Error> {
    let Some(raw) = raw else { return Ok(Value::Null) };
    let text = raw.as_str().ok_or_else(|| error(path, "expected an RFC 3339 time"))?;
    let timestamp: k8s_openapi::jiff::Timestamp =
        text.parse().map_err(|e| error(path, format!("cannot parse {text:?} as RFC 3339: {e}")))?;
    // Go's zero time.Time is 0001-01-01T00:00:00Z.
    if timestamp.as_second() == -62_135_596_800 && timestamp.subsec_nanosecond() == 0 {
        return Ok(Value::Null);
    }
    let format = if micro { "%Y-%m-%dT%H:%M:%S%.6fZ" } else { "%Y-%m-%dT%H:%M:%SZ" };
    let utc = timestamp.to_zoned(k8s_openapi::jiff::tz::TimeZone::UTC);
    Ok(Value::String(utc.strftime(format).to_string()))
}

#[cfg(test)]
mod tests;
