//! Bytes as Go's `json.Marshal` writes a decoded (`interface{}`) value: compact, object keys
//! sorted by bytes, strings escaped as Go escapes them with HTML escaping on (`<`, `>`, `&` as
//! `\u003c`, `\u003e`, `\u0026`; U+2028 and U+2029 as `\u2028`, `\u2029`; `\b`, `\f`, `\n`,
//! `\r`, `\t` short; other control characters as `\u00XX`), and float64 numbers in Go's format
//! (shortest digits, `1e+21` and `1e-7` outside `[1e-6, 1e21)`). [`to_vec_typed`] writes a
//! typed struct instead: its fields in declaration order.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use crate::gotypes::{Field, SCHEMA};

/// The bytes Go's `json.Marshal` writes for this value.
pub fn to_vec(value: &Value) -> Vec<u8> {
    to_string(value).into_bytes()
}

/// [`to_vec`] as a string.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// The bytes Go's `json.Marshal` writes for a typed `message` holding `value` (what
/// [`super::marshal`] returned for it): struct fields in the order the Go struct declares them
/// (embedded structs' fields where they are embedded), map keys sorted.
pub fn to_vec_typed(message: &str, value: &Value) -> Vec<u8> {
    let mut out = String::new();
    write_typed(&mut out, message, value);
    out.into_bytes()
}

fn write_typed(out: &mut String, ty: &str, value: &Value) {
    let Some(message) = SCHEMA.messages.get(ty).filter(|m| !m.custom_json) else {
        return write_value(out, value);
    };
    match value {
        Value::Array(items) if message.wrapper => {
            let item = message.fields.first().map_or("string", |f| f.ty.as_str());
            write_items(out, item, items);
        }
        Value::Object(map) => {
            let mut fields = Vec::new();
            declared_fields(ty, &mut fields);
            out.push('{');
            let mut first = true;
            for field in fields {
                let Some(item) = map.get(&field.json) else { continue };
                if !first {
                    out.push(',');
                }
                first = false;
                write_string(out, &field.json);
                out.push(':');
                write_field(out, field, item);
            }
            out.push('}');
        }
        other => write_value(out, other),
    }
}

/// The JSON fields of a struct in declaration order, embedded structs' fields in their place.
fn declared_fields(ty: &str, into: &mut Vec<&'static Field>) {
    let Some(message) = SCHEMA.messages.get(ty) else { return };
    let mut fields: Vec<&'static Field> = message.fields.iter().collect();
    fields.sort_by_key(|f| f.declared);
    for field in fields {
        if field.inline {
            declared_fields(&field.ty, into);
        } else if !into.iter().any(|f| f.json == field.json) {
            into.push(field);
        }
    }
}

fn write_field(out: &mut String, field: &Field, value: &Value) {
    match value {
        Value::Object(map) if field.map_key.is_some() => write_map(out, &field.ty, map),
        Value::Array(items) if field.repeated => write_items(out, &field.ty, items),
        other => write_typed(out, &field.ty, other),
    }
}

fn write_map(out: &mut String, ty: &str, map: &Map<String, Value>) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    out.push('{');
    for (index, (key, item)) in entries.into_iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        write_typed(out, ty, item);
    }
    out.push('}');
}

fn write_items(out: &mut String, ty: &str, items: &[Value]) {
    out.push('[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_typed(out, ty, item);
    }
    out.push(']');
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

fn write_number(out: &mut String, number: &Number) {
    if let Some(i) = number.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = number.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(f) = number.as_f64() {
        write_float(out, f);
    }
}

/// Go's `floatEncoder` for float64.
fn write_float(out: &mut String, f: f64) {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // strconv 'e' with the shortest digits, then Go trims e-07 to e-7.
        let text = format!("{f:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        if exponent < 0 {
            let _ = write!(out, "{mantissa}e-{}", -exponent);
        } else {
            let _ = write!(out, "{mantissa}e+{exponent:02}");
        }
    } else {
        // strconv 'f' with the shortest digits: Rust's Display prints the same.
        let _ = write!(out, "{f}");
    }
}

fn write_string(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 || matches!(c, '<' | '>' | '&') => {
                let b = c as u32;
                out.push_str("\\u00");
                out.push(char::from(HEX[(b >> 4) as usize]));
                out.push(char::from(HEX[(b & 0xf) as usize]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn strings_are_escaped_as_go_escapes_them() {
        let value = json!({"b": "<a href=\"x\">&</a>", "a": "tab\there\u{1}\u{2028}é\u{8}\u{c}\\"});
        assert_eq!(
            to_string(&value),
            r#"{"a":"tab\there\u0001\u2028é\b\f\\","b":"\u003ca href=\"x\"\u003e\u0026\u003c/a\u003e"}"#
        );
    }

    #[test]
    fn keys_are_sorted_by_bytes_and_numbers_written_as_go_writes_float64() {
        let value =
            json!({"b": 1, "B": [1.5, 30.0, 1e21, 1.5e-7, 0.000001, 1e20, -2, 0.0, 1e-10], "a": null});
        assert_eq!(
            to_string(&value),
            r#"{"B":[1.5,30,1e+21,1.5e-7,0.000001,100000000000000000000,-2,0,1e-10],"a":null,"b":1}"#
        );
    }
}
