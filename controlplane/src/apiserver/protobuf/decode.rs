//! Protobuf to JSON, as kube-apiserver's Go types would read the message and write it as JSON:
//! unset value fields read as their zero value (and are then left out where the JSON tag says
//! `omitempty`), unset pointers and slices as `null` or nothing, and the special types in their
//! JSON form.

use std::collections::HashMap;

use base64::Engine;
use serde_json::{Map, Number, Value};

use kruise_machinery::gotypes::{Field, SCHEMA, names};

use super::{
    CodecError,
    encode::is_scalar,
    time,
    wire::{self, Raw},
};

/// Field values of one message, by number, in wire order.
type Fields<'a> = HashMap<u32, Vec<Raw<'a>>>;

fn group(data: &[u8]) -> Result<Fields<'_>, CodecError> {
    let mut grouped: Fields<'_> = HashMap::new();
    for (number, value) in wire::fields(data)? {
        grouped.entry(number).or_default().push(value);
    }
    Ok(grouped)
}

fn last<'a>(fields: &Fields<'a>, number: u32) -> Option<Raw<'a>> {
    fields.get(&number).and_then(|values| values.last().copied())
}

fn bytes_of<'a>(raw: Raw<'a>, path: &str) -> Result<&'a [u8], CodecError> {
    match raw {
        Raw::Bytes(bytes) => Ok(bytes),
        _ => Err(CodecError::Malformed(format!("{path}: expected length-delimited data"))),
    }
}

fn varint_of(raw: Raw<'_>, path: &str) -> Result<u64, CodecError> {
    match raw {
        Raw::Varint(value) => Ok(value),
        _ => Err(CodecError::Malformed(format!("{path}: expected a varint"))),
    }
}

fn embedded_json(fields: &Fields<'_>, path: &str) -> Result<Value, CodecError> {
    match last(fields, 1) {
        None => Ok(Value::Null),
        Some(raw) => {
            let bytes = bytes_of(raw, path)?;
            if bytes.is_empty() {
                return Ok(Value::Null);
            }
            serde_json::from_slice(bytes).map_err(|e| CodecError::Value {
                path: path.into(),
                message: format!("embedded data is not JSON: {e}"),
            })
        }
    }
}

/// Decodes the message `name` from `data` (empty data: the Go zero value).
pub fn message(name: &str, data: &[u8], path: &str) -> Result<Value, CodecError> {
    let fields = group(data)?;
    let props = "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaProps";
    match name {
        names::TIME | names::MICRO_TIME => {
            if data.is_empty() {
                return Ok(Value::Null);
            }
            let seconds = last(&fields, 1).map(|raw| varint_of(raw, path)).transpose()?.unwrap_or(0) as i64;
            let nanos = last(&fields, 2).map(|raw| varint_of(raw, path)).transpose()?.unwrap_or(0) as i64;
            let micro = name == names::MICRO_TIME;
            Ok(time::format(seconds, nanos, micro).map_or(Value::Null, Value::String))
        }
        names::QUANTITY => {
            let text = match last(&fields, 1) {
                Some(raw) => string(bytes_of(raw, path)?, path)?,
                None => String::new(),
            };
            Ok(Value::String(if text.is_empty() { "0".into() } else { text }))
        }
        names::INT_OR_STRING => {
            let kind = last(&fields, 1).map(|raw| varint_of(raw, path)).transpose()?.unwrap_or(0);
            if kind == 1 {
                let text = match last(&fields, 3) {
                    Some(raw) => string(bytes_of(raw, path)?, path)?,
                    None => String::new(),
                };
                Ok(Value::String(text))
            } else {
                let int = last(&fields, 2).map(|raw| varint_of(raw, path)).transpose()?.unwrap_or(0) as i32;
                Ok(Value::from(int))
            }
        }
        names::RAW_EXTENSION | names::FIELDS_V1 | names::EXT_JSON => embedded_json(&fields, path),
        names::PROPS_OR_BOOL => match last(&fields, 2) {
            Some(raw) => message(props, bytes_of(raw, path)?, path),
            None => {
                let allows = last(&fields, 1).map(|raw| varint_of(raw, path)).transpose()?.unwrap_or(0);
                Ok(Value::Bool(allows != 0))
            }
        },
        names::PROPS_OR_ARRAY | names::PROPS_OR_STRING_ARRAY => {
            if let Some(items) = fields.get(&2).filter(|items| !items.is_empty()) {
                let mut array = Vec::with_capacity(items.len());
                for (index, raw) in items.iter().enumerate() {
                    let item_path = format!("{path}[{index}]");
                    let bytes = bytes_of(*raw, &item_path)?;
                    array.push(if name == names::PROPS_OR_ARRAY {
                        message(props, bytes, &item_path)?
                    } else {
                        Value::String(string(bytes, &item_path)?)
                    });
                }
                return Ok(Value::Array(array));
            }
            match last(&fields, 1) {
                Some(raw) => message(props, bytes_of(raw, path)?, path),
                None => Ok(Value::Null),
            }
        }
        _ => {
            let message = SCHEMA.messages.get(name).ok_or_else(|| CodecError::UnknownMessage(name.into()))?;
            if message.wrapper {
                let item = &message.fields[0];
                let values = fields.get(&item.number).map(Vec::as_slice).unwrap_or_default();
                return Ok(Value::Array(elements(item, values, path)?));
            }
            let mut object = Map::new();
            for field in &message.fields {
                let child_path =
                    if path.is_empty() { field.json.clone() } else { format!("{path}.{}", field.json) };
                let values = fields.get(&field.number).map(Vec::as_slice).unwrap_or_default();
                if field.inline {
                    let data: &[u8] = match values.last() {
                        Some(raw) => bytes_of(*raw, path)?,
                        None => &[],
                    };
                    if let Value::Object(inner) = self::message(&field.ty, data, path)? {
                        for (key, value) in inner {
                            object.entry(key).or_insert(value);
                        }
                    }
                    continue;
                }
                if let Some(value) = read_field(field, values, &child_path)? {
                    if field.omit_zero && value == zero(&field.ty, &child_path)? {
                        continue;
                    }
                    object.insert(field.json.clone(), value);
                }
            }
            Ok(Value::Object(object))
        }
    }
}

/// The JSON of one field, or None when Go's JSON leaves it out.
fn read_field(field: &Field, values: &[Raw<'_>], path: &str) -> Result<Option<Value>, CodecError> {
    if field.map_key.is_some() {
        if values.is_empty() {
            return Ok((!field.omit_empty).then_some(Value::Null));
        }
        let mut map = Map::new();
        for raw in values {
            let entry = group(bytes_of(*raw, path)?)?;
            let key = match last(&entry, 1) {
                Some(raw) => string(bytes_of(raw, path)?, path)?,
                None => String::new(),
            };
            let entry_path = format!("{path}[{key}]");
            let value = match last(&entry, 2) {
                Some(raw) => one(&field.ty, raw, &entry_path)?,
                None if field.ty == "bytes" => Value::Null,
                None => zero(&field.ty, &entry_path)?,
            };
            map.insert(key, value);
        }
        return Ok(Some(Value::Object(map)));
    }
    if field.repeated {
        if values.is_empty() {
            return Ok((!field.omit_empty).then_some(Value::Null));
        }
        return Ok(Some(Value::Array(elements(field, values, path)?)));
    }
    let Some(raw) = values.last() else {
        if field.pointer || field.ty == "bytes" || is_wrapper(&field.ty) {
            return Ok((!field.omit_empty).then_some(Value::Null));
        }
        let value = zero(&field.ty, path)?;
        return Ok((!(field.omit_empty && is_empty(&field.ty, &value))).then_some(value));
    };
    let value = one(&field.ty, *raw, path)?;
    let omitted = field.omit_empty
        && ((!field.pointer && is_empty(&field.ty, &value))
            || (is_wrapper(&field.ty) && value.as_array().is_some_and(Vec::is_empty)));
    Ok((!omitted).then_some(value))
}

/// Whether Go's `omitempty` drops this value of a value (non-pointer) field: zero scalars and
/// empty byte slices; structs are never dropped.
fn is_empty(ty: &str, value: &Value) -> bool {
    match ty {
        "string" | "bytes" => value.as_str().is_some_and(str::is_empty),
        "bool" => value == &Value::Bool(false),
        "int32" | "int64" | "uint32" | "uint64" | "float64" => value.as_f64() == Some(0.0),
        _ => false,
    }
}

fn is_wrapper(name: &str) -> bool {
    SCHEMA.messages.get(name).is_some_and(|m| m.wrapper)
}

/// The values of a repeated field (scalars may come packed).
fn elements(field: &Field, values: &[Raw<'_>], path: &str) -> Result<Vec<Value>, CodecError> {
    let mut out = Vec::with_capacity(values.len());
    for raw in values {
        let item_path = format!("{path}[{}]", out.len());
        match raw {
            Raw::Bytes(packed)
                if is_scalar(&field.ty) && !matches!(field.ty.as_str(), "string" | "bytes") =>
            {
                let mut data = *packed;
                while !data.is_empty() {
                    let (value, rest) = packed_scalar(&field.ty, data, &item_path)?;
                    out.push(value);
                    data = rest;
                }
            }
            _ => out.push(one(&field.ty, *raw, &item_path)?),
        }
    }
    Ok(out)
}

fn packed_scalar<'a>(ty: &str, data: &'a [u8], path: &str) -> Result<(Value, &'a [u8]), CodecError> {
    if ty == "float64" {
        if data.len() < 8 {
            return Err(CodecError::Truncated);
        }
        let (head, rest) = data.split_at(8);
        let bits = u64::from_le_bytes(head.try_into().map_err(|_| CodecError::Truncated)?);
        return Ok((one(ty, Raw::Fixed64(bits), path)?, rest));
    }
    let mut value = 0u64;
    for (index, byte) in data.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * index);
        if *byte < 0x80 {
            return Ok((one(ty, Raw::Varint(value), path)?, &data[index + 1..]));
        }
    }
    Err(CodecError::Truncated)
}

/// The Go zero value of a type, as JSON.
fn zero(ty: &str, path: &str) -> Result<Value, CodecError> {
    Ok(match ty {
        "string" => Value::String(String::new()),
        "bytes" => Value::Null,
        "bool" => Value::Bool(false),
        "int32" | "int64" | "uint32" | "uint64" => Value::from(0),
        "float64" => Value::from(0.0),
        message_name => message(message_name, &[], path)?,
    })
}

/// One value of a type.
fn one(ty: &str, raw: Raw<'_>, path: &str) -> Result<Value, CodecError> {
    Ok(match ty {
        "string" => Value::String(string(bytes_of(raw, path)?, path)?),
        "bytes" => Value::String(base64::engine::general_purpose::STANDARD.encode(bytes_of(raw, path)?)),
        "bool" => Value::Bool(varint_of(raw, path)? != 0),
        "int32" => Value::from(varint_of(raw, path)? as i32),
        "int64" => Value::from(varint_of(raw, path)? as i64),
        "uint32" => Value::from(varint_of(raw, path)? as u32),
        "uint64" => Value::from(varint_of(raw, path)?),
        "float64" => match raw {
            // Go writes integral floats without a fraction (`0`, not `0.0`).
            Raw::Fixed64(bits) => match f64::from_bits(bits) {
                float if float.fract() == 0.0 && float.abs() < 9.0e15 => Value::from(float as i64),
                float => Number::from_f64(float).map_or(Value::Null, Value::Number),
            },
            _ => return Err(CodecError::Malformed(format!("{path}: expected a 64-bit value"))),
        },
        message_name => message(message_name, bytes_of(raw, path)?, path)?,
    })
}

fn string(bytes: &[u8], path: &str) -> Result<String, CodecError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| CodecError::Value { path: path.into(), message: "invalid UTF-8".into() })
}
