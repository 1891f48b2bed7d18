//! Typed Kruise documents: turning a JSON/YAML document into the right kind and version,
//! reporting unknown fields and type errors with their field paths, then defaulting and
//! validating it. This is what `kruise validate` runs, and what admission uses to decode.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{
    field::{ErrorList, FieldError, FieldPath},
    registry::{AnyKruiseObject, lookup},
};

/// What a document turned out to be.
#[derive(Debug)]
pub enum Decoded {
    /// A Kruise object of a kind and version we serve.
    Kruise(Box<AnyKruiseObject>),
    /// Some other object (a Deployment, a Service): not ours to check.
    Other {
        /// Its apiVersion.
        api_version: String,
        /// Its kind.
        kind: String,
    },
}

/// Why a document could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// Not a JSON object at the top level.
    #[error("document is not an object")]
    NotAnObject,
    /// `apiVersion` or `kind` missing.
    #[error("document has no {0}")]
    MissingTypeField(&'static str),
    /// A Kruise group with a kind or version we do not serve.
    #[error("no kind {kind:?} is served at {api_version}")]
    UnknownKind {
        /// The apiVersion asked for.
        api_version: String,
        /// The kind asked for.
        kind: String,
    },
    /// Fields that do not exist or have the wrong type.
    #[error("{} field error(s)", .0.len())]
    Fields(ErrorList),
}

/// Decodes one document. Unknown fields and wrongly typed values are errors naming their path.
pub fn decode(document: &Value) -> Result<Decoded, DecodeError> {
    let object = document.as_object().ok_or(DecodeError::NotAnObject)?;
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .ok_or(DecodeError::MissingTypeField("apiVersion"))?;
    let kind = object.get("kind").and_then(Value::as_str).ok_or(DecodeError::MissingTypeField("kind"))?;
    let (group, _) = api_version.split_once('/').unwrap_or(("", api_version));
    if group != crate::resource::APPS_GROUP && group != crate::resource::POLICY_GROUP {
        return Ok(Decoded::Other { api_version: api_version.to_string(), kind: kind.to_string() });
    }
    let entry = lookup(api_version, kind).ok_or_else(|| DecodeError::UnknownKind {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
    })?;
    (entry.decode)(document).map(|object| Decoded::Kruise(Box::new(object))).map_err(DecodeError::Fields)
}

/// Deserializes `T`, collecting every ignored (unknown) field and the first type error, each
/// with its path. `apiVersion` and `kind` at the root are expected and not reported. Fields set
/// to `null` are treated as absent, as the API server prunes them from custom resources.
pub fn strict_from_value<T: DeserializeOwned>(document: &Value) -> Result<T, ErrorList> {
    let mut document = document.clone();
    drop_null_fields(&mut document);
    let document = &document;
    let mut unknown: Vec<FieldPath> = Vec::new();
    let result = {
        let mut record = |path: serde_ignored::Path<'_>| unknown.push(to_field_path(&path));
        let ignored = serde_ignored::Deserializer::new(document, &mut record);
        serde_path_to_error::deserialize::<_, T>(ignored)
    };
    let mut errors: ErrorList = unknown
        .into_iter()
        .filter(|path| !matches!(path.as_str(), "apiVersion" | "kind"))
        .map(|path| FieldError::unknown(&path))
        .collect();
    match result {
        Ok(value) if errors.is_empty() => Ok(value),
        Ok(_) => Err(errors),
        Err(error) => {
            let path = FieldPath::root(&error.path().to_string());
            errors.push(FieldError {
                kind: crate::field::ErrorType::TypeInvalid,
                path,
                value: None,
                detail: error.inner().to_string(),
            });
            Err(errors)
        }
    }
}

pub use kruise_machinery::json::drop_null_fields;

fn to_field_path(path: &serde_ignored::Path<'_>) -> FieldPath {
    match path {
        serde_ignored::Path::Root => FieldPath::default(),
        serde_ignored::Path::Seq { parent, index } => to_field_path(parent).index(*index),
        serde_ignored::Path::Map { parent, key } => to_field_path(parent).child(key),
        serde_ignored::Path::Some { parent }
        | serde_ignored::Path::NewtypeStruct { parent }
        | serde_ignored::Path::NewtypeVariant { parent } => to_field_path(parent),
    }
}

/// The result of checking one decoded object: its defaults applied, then validated.
pub fn default_and_validate(object: &mut AnyKruiseObject) -> ErrorList {
    object.apply_defaults();
    object.validate()
}
