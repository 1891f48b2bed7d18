//! Builds "fully populated" objects: every field of a kind's schema set to a value, so that a
//! round trip through conversion or serialization exercises every field, including fields added
//! later (they are picked up from the schema, not from a hand-kept list).

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use kruise_crds::{resource::KruiseObject, schema::object_schema};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A small valid pod template, used wherever a schemaless pod template sits.
pub fn pod_template() -> Value {
    json!({
        "metadata": {"labels": {"app": "demo"}, "annotations": {"note": "x"}},
        "spec": {
            "containers": [{
                "name": "main",
                "image": "nginx:1.25",
                "env": [{"name": "A", "value": "1"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}
            }],
            "terminationGracePeriodSeconds": 5
        }
    })
}

fn preserved_value(name: &str) -> Value {
    match name {
        "template" => pod_template(),
        "volumeClaimTemplates" => json!([{
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        }]),
        "volumes" => json!([{"name": "shared", "emptyDir": {}}]),
        "ephemeralContainers" => json!([{"name": "debug", "image": "busybox:1"}]),
        "jobTemplate" => json!({"metadata": {"labels": {"job": "x"}}, "spec": {"template": pod_template()}}),
        "resource" => {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}})
        }
        "metadata" => json!({"labels": {"tpl": "x"}, "annotations": {"tpl": "y"}}),
        "spec" => {
            json!({"replicas": 1, "selector": {"matchLabels": {"app": "demo"}}, "template": pod_template()})
        }
        "patch" => json!({"metadata": {"labels": {"subset": "a"}}}),
        _ => json!({"preserved": name}),
    }
}

/// Fills every property of `schema`; `overrides` maps dotted paths (`spec.updateStrategy.type`)
/// to the value to use there instead.
pub fn fill(schema: &JSONSchemaProps, path: &str, name: &str, overrides: &BTreeMap<&str, Value>) -> Value {
    if let Some(value) = overrides.get(path) {
        return value.clone();
    }
    if schema.x_kubernetes_int_or_string == Some(true) {
        return json!("50%");
    }
    let has_properties = schema.properties.as_ref().is_some_and(|p| !p.is_empty());
    if schema.x_kubernetes_preserve_unknown_fields == Some(true) && !has_properties {
        return preserved_value(name);
    }
    if let Some(values) = &schema.enum_
        && let Some(first) = values.iter().map(|v| &v.0).find(|v| v.as_str() != Some(""))
    {
        return first.clone();
    }
    match schema.type_.as_deref() {
        Some("object") | None if has_properties => {
            let mut object = serde_json::Map::new();
            if schema.x_kubernetes_preserve_unknown_fields == Some(true) {
                // SidecarSet containers: a core Container with Kruise fields beside it.
                object.insert("name".into(), json!(format!("{name}-c")));
                object.insert("image".into(), json!("busybox:1"));
            }
            for (key, child) in schema.properties.iter().flatten() {
                let child_path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                object.insert(key.clone(), fill(child, &child_path, key, overrides));
            }
            Value::Object(object)
        }
        Some("object") => match &schema.additional_properties {
            Some(JSONSchemaPropsOrBool::Schema(inner)) => {
                json!({ "key-1": fill(inner, &format!("{path}{{}}"), name, overrides) })
            }
            _ => json!({}),
        },
        Some("array") => match &schema.items {
            Some(JSONSchemaPropsOrArray::Schema(inner)) => {
                json!([fill(inner, &format!("{path}[]"), name, overrides)])
            }
            _ => json!([]),
        },
        Some("string") => match schema.format.as_deref() {
            Some("date-time") => json!("2024-05-06T07:08:09Z"),
            _ => json!(format!("v-{name}")),
        },
        Some("integer") => json!(7),
        Some("number") => json!(1.5),
        Some("boolean") => json!(true),
        _ => Value::Null,
    }
}

/// A fully populated object of root type `T`, with `overrides` applied.
pub fn populated<T>(overrides: &[(&str, Value)]) -> T
where
    T: KruiseObject + DeserializeOwned,
    T::Spec: JsonSchema,
    T::Status: JsonSchema,
{
    let schema = object_schema::<T::Spec, T::Status>("test").expect("schema");
    let overrides: BTreeMap<&str, Value> = overrides.iter().cloned().collect();
    let properties = schema.properties.as_ref().expect("root properties");
    let mut object = json!({
        "apiVersion": T::api_version(&()),
        "kind": T::kind(&()),
        "metadata": {
            "name": "populated",
            "namespace": "default",
            "labels": {"app": "demo"},
            "annotations": {"owner": "tests"},
        },
    });
    for part in ["spec", "status"] {
        if let Some(part_schema) = properties.get(part) {
            object[part] = fill(part_schema, part, part, &overrides);
        }
    }
    serde_json::from_value(object).expect("populated object deserializes")
}
