//! The Go types of the Kubernetes built-in kinds as data (`schema.json`, written by
//! `crds/gotypes/generate.sh` from the `k8s.io/api` Go types by reflection): for each message
//! (Go struct), its fields' protobuf numbers and wire kinds, JSON names and the Go details that
//! decide what `encoding/json` writes (pointer or value, `omitempty`, `omitzero`, inline, custom
//! JSON form).
//!
//! The schema is that of [`Schema::version`] (the Kubernetes version the embedded API server
//! serves); fields the older [`Schema::base`] types lack (the `k8s.io/api` upstream OpenKruise
//! v1.9.0 is built with) are marked [`Field::not_in_base`], and the base uses no `omitzero` at
//! all (the generator checks both), so one file describes both.
//!
//! Users: the embedded API server's protobuf codec and [`crate::gojson`].

use std::{collections::HashMap, sync::LazyLock};

use serde::Deserialize;

/// One field of a message.
#[derive(Debug, Deserialize)]
pub struct Field {
    /// Protobuf field number.
    #[serde(rename = "n")]
    pub number: u32,
    /// JSON name (empty for an inline field).
    #[serde(rename = "j")]
    pub json: String,
    /// A scalar name (`string`, `bool`, `int32`, `int64`, `uint32`, `uint64`, `float64`,
    /// `bytes`) or a message name.
    #[serde(rename = "t")]
    pub ty: String,
    /// A repeated field (a JSON array).
    #[serde(rename = "r", default)]
    pub repeated: bool,
    /// A map field (a JSON object) with this key type; `ty` is the value type.
    #[serde(rename = "k", default)]
    pub map_key: Option<String>,
    /// Held by pointer in Go: written only when set, `null` when unset and not `omitempty`.
    #[serde(rename = "p", default)]
    pub pointer: bool,
    /// `omitempty` in the Go JSON tag.
    #[serde(rename = "o", default)]
    pub omit_empty: bool,
    /// `omitzero` in the Go JSON tag: left out when it is the type's zero value.
    #[serde(rename = "z", default)]
    pub omit_zero: bool,
    /// `json:",inline"`: the message's fields are the parent's JSON fields.
    #[serde(rename = "i", default)]
    pub inline: bool,
    /// The base version's Go type has no such field (it was added later).
    #[serde(rename = "x", default)]
    pub not_in_base: bool,
    /// Position in the Go struct: `encoding/json` writes fields in this order (the list is
    /// sorted by protobuf number).
    #[serde(rename = "d", default)]
    pub declared: u32,
}

/// One message (a Go struct, or a named slice held as a message of its items).
#[derive(Debug, Deserialize)]
pub struct Message {
    /// Fields by ascending number.
    #[serde(rename = "f")]
    pub fields: Vec<Field>,
    /// A named slice whose JSON is the bare array of its `items`.
    #[serde(rename = "w", default)]
    pub wrapper: bool,
    /// The Go type has its own JSON form; the codec handles it by name.
    #[serde(rename = "c", default)]
    pub custom_json: bool,
}

/// The whole schema.
#[derive(Debug, Deserialize)]
pub struct Schema {
    /// The `k8s.io/api` version the schema was generated from.
    #[serde(default)]
    pub version: String,
    /// The older `k8s.io/api` version [`Field::not_in_base`] refers to.
    #[serde(default)]
    pub base: String,
    /// `apiVersion/kind` to message name.
    pub kinds: HashMap<String, String>,
    /// Messages by name (Go package path and type name).
    pub messages: HashMap<String, Message>,
}

impl Schema {
    /// The message of objects of this `apiVersion` and `kind`, if built in.
    pub fn kind(&self, api_version: &str, kind: &str) -> Option<&str> {
        self.kinds.get(&format!("{api_version}/{kind}")).map(String::as_str)
    }
}

/// The schema, parsed on first use.
pub static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    // The file is generated and checked by this crate's tests: failing to parse it is a build bug.
    serde_json::from_str(include_str!("schema.json")).expect("gotypes/schema.json is valid")
});

/// Names of the messages with their own JSON form.
pub mod names {
    /// `metav1.Time`: RFC 3339 seconds in JSON, a Timestamp on the wire.
    pub const TIME: &str = "k8s.io/apimachinery/pkg/apis/meta/v1.Time";
    /// `metav1.MicroTime`: RFC 3339 with microseconds.
    pub const MICRO_TIME: &str = "k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime";
    /// `resource.Quantity`: a string.
    pub const QUANTITY: &str = "k8s.io/apimachinery/pkg/api/resource.Quantity";
    /// `intstr.IntOrString`: a number or a string.
    pub const INT_OR_STRING: &str = "k8s.io/apimachinery/pkg/util/intstr.IntOrString";
    /// `runtime.RawExtension`: embedded JSON.
    pub const RAW_EXTENSION: &str = "k8s.io/apimachinery/pkg/runtime.RawExtension";
    /// `metav1.FieldsV1`: embedded JSON.
    pub const FIELDS_V1: &str = "k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1";
    /// apiextensions `JSON`: embedded JSON.
    pub const EXT_JSON: &str = "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSON";
    /// apiextensions `JSONSchemaPropsOrArray`: a schema or an array of schemas.
    pub const PROPS_OR_ARRAY: &str =
        "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrArray";
    /// apiextensions `JSONSchemaPropsOrBool`: a schema or a boolean.
    pub const PROPS_OR_BOOL: &str =
        "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrBool";
    /// apiextensions `JSONSchemaPropsOrStringArray`: a schema or an array of strings.
    pub const PROPS_OR_STRING_ARRAY: &str =
        "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrStringArray";
    /// `metav1.WatchEvent`.
    pub const WATCH_EVENT: &str = "k8s.io/apimachinery/pkg/apis/meta/v1.WatchEvent";

    /// Every message with its own JSON form the codec knows.
    pub const CUSTOM: &[&str] = &[
        TIME,
        MICRO_TIME,
        QUANTITY,
        INT_OR_STRING,
        RAW_EXTENSION,
        FIELDS_V1,
        EXT_JSON,
        PROPS_OR_ARRAY,
        PROPS_OR_BOOL,
        PROPS_OR_STRING_ARRAY,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_recorded_and_only_later_fields_are_marked() {
        assert_eq!((SCHEMA.version.as_str(), SCHEMA.base.as_str()), ("v0.34.4", "v0.32.10"));
        let later = |message: &str, json: &str| {
            SCHEMA.messages[message].fields.iter().find(|f| f.json == json).map(|f| f.not_in_base)
        };
        assert_eq!(later("k8s.io/api/core/v1.PodSpec", "hostnameOverride"), Some(true));
        assert_eq!(later("k8s.io/api/core/v1.Container", "restartPolicyRules"), Some(true));
        assert_eq!(later("k8s.io/api/core/v1.Container", "resizePolicy"), Some(false));
        assert_eq!(
            later("k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta", "creationTimestamp"),
            Some(false)
        );
    }

    #[test]
    fn every_custom_json_message_is_one_the_codec_knows() {
        for (name, message) in &SCHEMA.messages {
            assert_eq!(message.custom_json, names::CUSTOM.contains(&name.as_str()), "{name}");
        }
        for name in names::CUSTOM {
            assert!(SCHEMA.messages.contains_key(*name), "{name}");
        }
    }

    #[test]
    fn every_field_type_is_a_scalar_or_a_message() {
        const SCALARS: &[&str] =
            &["string", "bool", "int32", "int64", "uint32", "uint64", "float64", "bytes"];
        for (name, message) in &SCHEMA.messages {
            for field in &message.fields {
                assert!(
                    SCALARS.contains(&field.ty.as_str()) || SCHEMA.messages.contains_key(&field.ty),
                    "{name}.{}: {}",
                    field.json,
                    field.ty
                );
            }
        }
        assert_eq!(SCHEMA.kind("v1", "Pod"), Some("k8s.io/api/core/v1.Pod"));
        assert_eq!(SCHEMA.kind("apps/v1", "DeploymentList"), Some("k8s.io/api/apps/v1.DeploymentList"));
        assert_eq!(SCHEMA.kind("meta.k8s.io/v1", "Table"), None);
    }
}
