//! JSON renderings of kube's internal apiextensions types (no JSON tags: Go field names, all
//! fields, declaration order), which is what kube shows as the value of some CRD errors.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceSubresources, CustomResourceValidation, JSONSchemaProps,
    JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, JSONSchemaPropsOrStringArray,
};
use serde_json::Value;

use crate::semantics::jsonpath::gofmt;

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
        JSONSchemaPropsOrArray::Schema(s) => object(&[("Schema", schema(s)), ("JSONSchemas", "null".into())]),
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
