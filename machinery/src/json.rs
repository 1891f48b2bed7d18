//! Small JSON document helpers.

use serde_json::Value;

/// Removes object members whose value is `null`, at every depth (what kube-apiserver's decoding
/// into Go types does to most fields).
pub fn drop_null_fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, member| !member.is_null());
            map.values_mut().for_each(drop_null_fields);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_fields),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nulls_go_at_every_depth_but_not_from_arrays() {
        let mut document = json!({"a": null, "b": {"c": null, "d": 1}, "e": [{"f": null}, null]});
        drop_null_fields(&mut document);
        assert_eq!(document, json!({"b": {"d": 1}, "e": [{}, null]}));
    }
}
