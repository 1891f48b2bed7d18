//! Field paths and field errors, in the form Kubernetes reports them
//! (`spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "x": ...`), so that an admission
//! denial, an apiserver `Invalid` status and `kruise validate` all name the same field.

use std::fmt;

/// A path to a field, built as validation descends (`spec`, `.template`, `[0]`, `[key]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath(String);

impl FieldPath {
    /// A root path (`spec`, `metadata`, ...).
    pub fn root(name: &str) -> Self {
        Self(name.to_string())
    }

    /// The path of a child field.
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() { Self(name.to_string()) } else { Self(format!("{}.{name}", self.0)) }
    }

    /// The path of a list element.
    pub fn index(&self, index: usize) -> Self {
        Self(format!("{}[{index}]", self.0))
    }

    /// The path of a map entry.
    pub fn key(&self, key: &str) -> Self {
        Self(format!("{}[{key}]", self.0))
    }

    /// The path as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The kinds of field error Kubernetes distinguishes (its `field.ErrorType`), with the reason
/// string it reports in `Status.details.causes[].reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// A value that must be set is missing.
    Required,
    /// A value is malformed or out of range.
    Invalid,
    /// A value is not among the supported ones.
    NotSupported,
    /// A value may not be set (or changed) here.
    Forbidden,
    /// A value appears twice where it must be unique.
    Duplicate,
    /// A field the schema does not know.
    Unknown,
    /// A referenced object does not exist.
    NotFound,
    /// A value has the wrong type.
    TypeInvalid,
    /// A string or list is longer than allowed.
    TooLong,
    /// A list or map has more entries than allowed.
    TooMany,
}

impl ErrorType {
    /// The reason Kubernetes reports (`FieldValueInvalid`, ...).
    pub fn reason(self) -> &'static str {
        match self {
            Self::Required => "FieldValueRequired",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::Duplicate => "FieldValueDuplicate",
            Self::Unknown => "FieldValueUnknown",
            Self::NotFound => "FieldValueNotFound",
            Self::TypeInvalid => "FieldValueTypeInvalid",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Required => "Required value",
            Self::Invalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::Duplicate => "Duplicate value",
            Self::Unknown => "Unknown field",
            Self::NotFound => "Not found",
            Self::TypeInvalid => "Invalid value",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
        }
    }
}

/// One problem with one field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Which kind of problem.
    pub kind: ErrorType,
    /// Where.
    pub path: FieldPath,
    /// The offending value, rendered as JSON, when there is one worth showing.
    pub value: Option<String>,
    /// What is wrong, in words.
    pub detail: String,
}

impl FieldError {
    /// A missing required value.
    pub fn required(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self { kind: ErrorType::Required, path: path.clone(), value: None, detail: detail.into() }
    }

    /// A malformed or out-of-range value.
    pub fn invalid(path: &FieldPath, value: impl fmt::Display, detail: impl Into<String>) -> Self {
        Self {
            kind: ErrorType::Invalid,
            path: path.clone(),
            value: Some(value.to_string()),
            detail: detail.into(),
        }
    }

    /// A value outside the supported set.
    pub fn not_supported(path: &FieldPath, value: &str, supported: &[&str]) -> Self {
        let list = supported.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ");
        Self {
            kind: ErrorType::NotSupported,
            path: path.clone(),
            value: Some(format!("{value:?}")),
            detail: format!("supported values: {list}"),
        }
    }

    /// A value that may not be set here.
    pub fn forbidden(path: &FieldPath, detail: impl Into<String>) -> Self {
        Self { kind: ErrorType::Forbidden, path: path.clone(), value: None, detail: detail.into() }
    }

    /// A repeated value.
    pub fn duplicate(path: &FieldPath, value: impl fmt::Display) -> Self {
        Self {
            kind: ErrorType::Duplicate,
            path: path.clone(),
            value: Some(value.to_string()),
            detail: String::new(),
        }
    }

    /// A field the type does not have.
    pub fn unknown(path: &FieldPath) -> Self {
        Self {
            kind: ErrorType::Unknown,
            path: path.clone(),
            value: None,
            detail: "field not declared in schema".into(),
        }
    }

    /// A referenced object that does not exist.
    pub fn not_found(path: &FieldPath, value: impl fmt::Display) -> Self {
        Self {
            kind: ErrorType::NotFound,
            path: path.clone(),
            value: Some(value.to_string()),
            detail: String::new(),
        }
    }

    /// The message without the path (what Kubernetes puts in `causes[].message`).
    pub fn message(&self) -> String {
        let mut text = self.kind.label().to_string();
        if let Some(value) = &self.value {
            text.push_str(": ");
            text.push_str(value);
        }
        if !self.detail.is_empty() {
            text.push_str(": ");
            text.push_str(&self.detail);
        }
        text
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message())
    }
}

impl std::error::Error for FieldError {}

/// Every problem found in one object; empty means valid.
pub type ErrorList = Vec<FieldError>;

/// Renders a string value the way Kubernetes quotes it in messages.
pub fn quoted(value: &str) -> String {
    format!("{value:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_follow_the_kubernetes_format() {
        let path = FieldPath::root("spec").child("updateStrategy").child("rollingUpdate").child("maxSurge");
        let error = FieldError::invalid(&path, quoted("x"), "must be an integer or percentage");
        assert_eq!(
            error.to_string(),
            r#"spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "x": must be an integer or percentage"#
        );
        let required = FieldError::required(&FieldPath::root("spec").child("selector"), "");
        assert_eq!(required.to_string(), "spec.selector: Required value");
        let unsupported =
            FieldError::not_supported(&FieldPath::root("spec").child("type").index(0), "Foo", &["A", "B"]);
        assert_eq!(
            unsupported.to_string(),
            r#"spec.type[0]: Unsupported value: "Foo": supported values: "A", "B""#
        );
    }
}
