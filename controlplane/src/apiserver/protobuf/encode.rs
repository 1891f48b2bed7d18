//! JSON to protobuf, as kube-apiserver's Go types would write the same object: fields in
//! number order, value (non-pointer) fields always written, pointer fields when set, map
//! entries by sorted key, and the special types (`Time`, `Quantity`, `IntOrString`,
//! `RawExtension`...) in their wire form. JSON fields the Go type does not have are not written,
//! as a Go client would drop them too.

use base64::Engine;
use serde_json::Value;

use kruise_machinery::gotypes::{Field, SCHEMA, names};

use super::{
    CodecError, time,
    wire::{self, FIXED64},
};

/// Encodes `value` as the message `name`; `null` (or absent) is the Go zero value.
pub fn message(name: &str, value: &Value, path: &str) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::new();
    match name {
        names::TIME | names::MICRO_TIME => {
            if let Some(text) = string_or_null(value, path, "an RFC 3339 time")? {
                let (seconds, nanos) = time::parse(text, name == names::MICRO_TIME).ok_or_else(|| {
                    CodecError::Value { path: path.into(), message: format!("invalid time {text:?}") }
                })?;
                if let Some((seconds, nanos)) = time::non_zero(seconds, nanos) {
                    wire::put_varint_field(&mut out, 1, seconds as u64);
                    wire::put_varint_field(&mut out, 2, u64::from(nanos));
                }
            }
        }
        names::QUANTITY => {
            let text = match value {
                Value::Null => "0".to_string(),
                Value::String(text) => text.clone(),
                Value::Number(number) => number.to_string(),
                _ => return Err(CodecError::type_error(path, "a quantity")),
            };
            wire::put_bytes(&mut out, 1, text.as_bytes());
        }
        names::INT_OR_STRING => {
            let (kind, int, text) = match value {
                Value::Null => (0, 0, ""),
                Value::String(text) => (1, 0, text.as_str()),
                Value::Number(_) => (0, int(value, path, i64::from(i32::MIN), i64::from(i32::MAX))?, ""),
                _ => return Err(CodecError::type_error(path, "an integer or a string")),
            };
            wire::put_varint_field(&mut out, 1, kind);
            wire::put_varint_field(&mut out, 2, int as u64);
            wire::put_bytes(&mut out, 3, text.as_bytes());
        }
        names::RAW_EXTENSION => {
            // Embedded JSON as Go's json.Marshal writes it (keys sorted, `<`, `>`, `&` escaped),
            // so data a Go client wrote (a ControllerRevision's, which upstream controllers
            // compare byte for byte) reads back as the same bytes.
            if !value.is_null() {
                wire::put_bytes(&mut out, 1, &kruise_machinery::gojson::to_vec(value));
            }
        }
        names::FIELDS_V1 | names::EXT_JSON => {
            if !value.is_null() {
                let raw = serde_json::to_vec(value)
                    .map_err(|e| CodecError::Value { path: path.into(), message: e.to_string() })?;
                wire::put_bytes(&mut out, 1, &raw);
            }
        }
        names::PROPS_OR_BOOL => {
            let props = names::PROPS_OR_BOOL.replace("OrBool", "");
            match value {
                Value::Null => wire::put_varint_field(&mut out, 1, 0),
                Value::Bool(allows) => wire::put_varint_field(&mut out, 1, u64::from(*allows)),
                Value::Object(_) => {
                    wire::put_varint_field(&mut out, 1, 1);
                    wire::put_bytes(&mut out, 2, &message(&props, value, path)?);
                }
                _ => return Err(CodecError::type_error(path, "a schema or a boolean")),
            }
        }
        names::PROPS_OR_ARRAY | names::PROPS_OR_STRING_ARRAY => {
            let props = names::PROPS_OR_ARRAY.replace("OrArray", "");
            match value {
                Value::Null => {}
                Value::Object(_) => wire::put_bytes(&mut out, 1, &message(&props, value, path)?),
                Value::Array(items) => {
                    for (index, item) in items.iter().enumerate() {
                        let item_path = format!("{path}[{index}]");
                        if name == names::PROPS_OR_ARRAY {
                            wire::put_bytes(&mut out, 2, &message(&props, item, &item_path)?);
                        } else {
                            scalar(&mut out, 2, "string", item, &item_path)?;
                        }
                    }
                }
                _ => return Err(CodecError::type_error(path, "a schema or an array")),
            }
        }
        _ => {
            let message = SCHEMA.messages.get(name).ok_or_else(|| CodecError::UnknownMessage(name.into()))?;
            if message.wrapper {
                let item = &message.fields[0];
                match value {
                    Value::Null => {}
                    Value::Array(items) => {
                        for (index, entry) in items.iter().enumerate() {
                            element(&mut out, item, entry, &format!("{path}[{index}]"))?;
                        }
                    }
                    _ => return Err(CodecError::type_error(path, "an array")),
                }
                return Ok(out);
            }
            let object = match value {
                Value::Null => None,
                Value::Object(object) => Some(object),
                _ => return Err(CodecError::type_error(path, "an object")),
            };
            for field in &message.fields {
                if field.inline {
                    wire::put_bytes(&mut out, field.number, &self::message(&field.ty, value, path)?);
                    continue;
                }
                let child = object.and_then(|o| o.get(&field.json)).filter(|v| !v.is_null());
                let child_path =
                    if path.is_empty() { field.json.clone() } else { format!("{path}.{}", field.json) };
                write_field(&mut out, field, child, &child_path)?;
            }
        }
    }
    Ok(out)
}

fn write_field(
    out: &mut Vec<u8>,
    field: &Field,
    value: Option<&Value>,
    path: &str,
) -> Result<(), CodecError> {
    if field.map_key.is_some() {
        let Some(value) = value else { return Ok(()) };
        let map = value.as_object().ok_or_else(|| CodecError::type_error(path, "an object"))?;
        let mut keys: Vec<&String> = map.keys().collect();
        keys.sort();
        for key in keys {
            let entry_path = format!("{path}[{key}]");
            let mut entry = Vec::new();
            wire::put_bytes(&mut entry, 1, key.as_bytes());
            let item = &map[key];
            if !(field.ty == "bytes" && item.is_null()) {
                element(&mut entry, &field_like(field), item, &entry_path)?;
            }
            wire::put_bytes(out, field.number, &entry);
        }
        return Ok(());
    }
    if field.repeated {
        let Some(value) = value else { return Ok(()) };
        let items = value.as_array().ok_or_else(|| CodecError::type_error(path, "an array"))?;
        for (index, item) in items.iter().enumerate() {
            element(out, field, item, &format!("{path}[{index}]"))?;
        }
        return Ok(());
    }
    match value {
        Some(value) => element(out, field, value, path),
        // Go writes value fields even when zero; pointers, byte slices and named slices only
        // when set.
        None if field.pointer || field.ty == "bytes" || is_wrapper(&field.ty) => Ok(()),
        None => element(out, field, &Value::Null, path),
    }
}

/// A field description for a map entry's value (number 2, the map's value type).
fn field_like(field: &Field) -> Field {
    Field {
        number: 2,
        json: String::new(),
        ty: field.ty.clone(),
        repeated: false,
        map_key: None,
        pointer: false,
        omit_empty: false,
        omit_zero: false,
        inline: false,
        not_in_base: false,
        declared: 0,
    }
}

fn is_wrapper(name: &str) -> bool {
    SCHEMA.messages.get(name).is_some_and(|m| m.wrapper)
}

/// Writes one value of the field's type under the field's number.
fn element(out: &mut Vec<u8>, field: &Field, value: &Value, path: &str) -> Result<(), CodecError> {
    if is_scalar(&field.ty) {
        scalar(out, field.number, &field.ty, value, path)
    } else {
        wire::put_bytes(out, field.number, &message(&field.ty, value, path)?);
        Ok(())
    }
}

/// Whether a type name is a scalar rather than a message.
pub fn is_scalar(ty: &str) -> bool {
    matches!(ty, "string" | "bool" | "int32" | "int64" | "uint32" | "uint64" | "float64" | "bytes")
}

fn scalar(out: &mut Vec<u8>, number: u32, ty: &str, value: &Value, path: &str) -> Result<(), CodecError> {
    match ty {
        "string" => {
            let text = string_or_null(value, path, "a string")?.unwrap_or_default();
            wire::put_bytes(out, number, text.as_bytes());
        }
        "bytes" => {
            let text = string_or_null(value, path, "base64 data")?.unwrap_or_default();
            let bytes = base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| {
                CodecError::Value { path: path.into(), message: format!("illegal base64 data: {e}") }
            })?;
            wire::put_bytes(out, number, &bytes);
        }
        "bool" => {
            let flag = match value {
                Value::Null => false,
                Value::Bool(flag) => *flag,
                _ => return Err(CodecError::type_error(path, "a boolean")),
            };
            wire::put_varint_field(out, number, u64::from(flag));
        }
        "int32" => {
            let number_value = int(value, path, i64::from(i32::MIN), i64::from(i32::MAX))?;
            wire::put_varint_field(out, number, number_value as u64);
        }
        "int64" => {
            let number_value = int(value, path, i64::MIN, i64::MAX)?;
            wire::put_varint_field(out, number, number_value as u64);
        }
        "uint32" | "uint64" => {
            let number_value = match value {
                Value::Null => 0,
                _ => value.as_u64().ok_or_else(|| CodecError::type_error(path, "an unsigned integer"))?,
            };
            if ty == "uint32" && number_value > u64::from(u32::MAX) {
                return Err(CodecError::type_error(path, "a 32-bit unsigned integer"));
            }
            wire::put_varint_field(out, number, number_value);
        }
        "float64" => {
            let float = match value {
                Value::Null => 0.0,
                _ => value.as_f64().ok_or_else(|| CodecError::type_error(path, "a number"))?,
            };
            wire::put_key(out, number, FIXED64);
            out.extend_from_slice(&float.to_bits().to_le_bytes());
        }
        other => return Err(CodecError::UnknownMessage(other.into())),
    }
    Ok(())
}

fn string_or_null<'a>(value: &'a Value, path: &str, expected: &str) -> Result<Option<&'a str>, CodecError> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text)),
        _ => Err(CodecError::type_error(path, expected)),
    }
}

fn int(value: &Value, path: &str, min: i64, max: i64) -> Result<i64, CodecError> {
    let number = match value {
        Value::Null => 0,
        Value::Number(number) => match number.as_i64() {
            Some(n) => n,
            // `1.0` decodes into a Go integer; `1.5` does not.
            None => number
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18)
                .map(|f| f as i64)
                .ok_or_else(|| CodecError::type_error(path, "an integer"))?,
        },
        _ => return Err(CodecError::type_error(path, "an integer")),
    };
    if number < min || number > max {
        return Err(CodecError::Value { path: path.into(), message: format!("{number} is out of range") });
    }
    Ok(number)
}
