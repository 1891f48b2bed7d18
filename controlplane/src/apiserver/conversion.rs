//! Conversion of custom resources between the versions a CRD serves: objects are stored at the
//! storage version and converted on the way in and out, either by rewriting `apiVersion`
//! (strategy `None`) or through the CRD's conversion webhook (`apiextensions.k8s.io/v1`
//! ConversionReview), as kube-apiextensions-apiserver does, with the webhook's output pruned
//! against the target version's schema before it is used. Built-in resources that share
//! another's storage (`events.k8s.io` Events, stored as core Events) are converted here too.

use std::time::Duration;

use serde_json::{Value, json};

use super::{errors::ApiError, events, objects, webhook_client::WebhookClient};
use crate::{registry::ResourceDef, semantics::schema};

/// Converts custom resources between versions.
#[derive(Clone)]
pub struct Converter {
    client: WebhookClient,
}

impl Converter {
    /// A converter calling webhooks with `client`.
    pub fn new(client: WebhookClient) -> Self {
        Self { client }
    }

    /// `object` in the shape it is stored in: the storage version of a custom resource, the
    /// owner's shape for a resource sharing another's storage.
    pub async fn to_storage(&self, def: &ResourceDef, object: Value) -> Result<Value, ApiError> {
        if def.shares_storage() {
            let target = def.storage_api_version();
            return builtin_conversion(&object, &target).ok_or_else(|| {
                ApiError::internal(format!(
                    "no conversion of {} to {target}",
                    def.api_version(&def.storage_version)
                ))
            });
        }
        self.convert(def, object, &def.storage_version).await
    }

    /// `object` expressed at `version` of `def` (unchanged for built-ins of one shape and when
    /// already there).
    pub async fn convert(&self, def: &ResourceDef, object: Value, version: &str) -> Result<Value, ApiError> {
        let mut converted = self.convert_all(def, vec![object], version).await?;
        converted.pop().ok_or_else(|| ApiError::internal("conversion returned no object"))
    }

    /// Every object expressed at `version`; one webhook call converts them all.
    pub async fn convert_all(
        &self,
        def: &ResourceDef,
        objects: Vec<Value>,
        version: &str,
    ) -> Result<Vec<Value>, ApiError> {
        let desired = def.api_version(version);
        let Some(crd) = def.crd.as_ref() else {
            return objects
                .into_iter()
                .map(|object| {
                    if object.get("apiVersion").and_then(Value::as_str) == Some(desired.as_str()) {
                        return Ok(object);
                    }
                    builtin_conversion(&object, &desired)
                        .ok_or_else(|| ApiError::internal(format!("no conversion of an object to {desired}")))
                })
                .collect();
        };
        let needs: Vec<usize> = objects
            .iter()
            .enumerate()
            .filter(|(_, object)| object.get("apiVersion").and_then(Value::as_str) != Some(desired.as_str()))
            .map(|(index, _)| index)
            .collect();
        if needs.is_empty() {
            return Ok(objects);
        }
        let conversion = crd.spec.conversion.as_ref();
        let strategy = conversion.map(|c| c.strategy.as_str()).unwrap_or("None");
        let mut objects = objects;
        if strategy != "Webhook" {
            for index in needs {
                objects[index]["apiVersion"] = json!(desired);
            }
            return Ok(objects);
        }
        let webhook = conversion
            .and_then(|c| c.webhook.as_ref())
            .and_then(|w| w.client_config.as_ref())
            .and_then(|config| serde_json::to_value(config).ok())
            .ok_or_else(|| self.failure(def, version, "the conversion webhook has no client config"))?;
        let uid = objects::new_uid();
        let batch: Vec<Value> = needs.iter().map(|&index| objects[index].clone()).collect();
        let review = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": batch},
        });
        let answer = self
            .client
            .call(&webhook, &review, Duration::from_secs(30))
            .await
            .map_err(|error| self.failure(def, version, &error.to_string()))?;
        let response =
            answer.get("response").ok_or_else(|| self.failure(def, version, "no response in review"))?;
        if response.get("uid").and_then(Value::as_str) != Some(uid.as_str()) {
            return Err(self.failure(def, version, "response uid does not match the request"));
        }
        if response.pointer("/result/status").and_then(Value::as_str) != Some("Success") {
            let message =
                response.pointer("/result/message").and_then(Value::as_str).unwrap_or("conversion failed");
            return Err(self.failure(def, version, message));
        }
        let converted = response
            .get("convertedObjects")
            .and_then(Value::as_array)
            .filter(|converted| converted.len() == needs.len())
            .ok_or_else(|| self.failure(def, version, "returned a different number of objects"))?;
        for (&index, new) in needs.iter().zip(converted) {
            if new.get("apiVersion").and_then(Value::as_str) != Some(desired.as_str()) {
                return Err(self.failure(def, version, "returned an object of the wrong version"));
            }
            let old = &objects[index];
            for field in ["name", "namespace", "uid"] {
                if objects::meta_str(new, field) != objects::meta_str(old, field) {
                    return Err(self.failure(def, version, &format!("changed metadata.{field}")));
                }
            }
            let mut new = new.clone();
            coerce(def, version, &mut new);
            objects[index] = new;
        }
        Ok(objects)
    }

    fn failure(&self, def: &ResourceDef, version: &str, message: &str) -> ApiError {
        ApiError::internal(format!(
            "conversion webhook for {}, Kind={} failed: {message}",
            def.api_version(version),
            def.kind
        ))
    }
}

/// What kube-apiserver does to a conversion webhook's output before using it: unknown fields
/// pruned and the `null`s of non-nullable fields without a default dropped, against the schema of
/// the version converted to (a webhook written in Go sends `lastUpdateTime: null` for unset
/// times, which the schema's `type: string` would refuse).
fn coerce(def: &ResourceDef, version: &str, object: &mut Value) {
    if let Some(metadata) = object.get_mut("metadata") {
        kruise_machinery::json::drop_null_fields(metadata);
    }
    if let Some(schema_props) = def.schema(version) {
        schema::prune(object, schema_props);
        schema::drop_disallowed_nulls(object, schema_props);
    }
}

/// A built-in object at `api_version`: Events are converted between their two APIs; built-ins
/// of a single shape are returned as they are. None when the object cannot be expressed there.
fn builtin_conversion(object: &Value, api_version: &str) -> Option<Value> {
    if events::is_event(object) {
        return events::convert(object, api_version);
    }
    Some(object.clone())
}
