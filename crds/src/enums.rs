//! String-valued enums that never lose what a user wrote.
//!
//! Kruise stores most of its enumerations as plain strings and rejects unknown values in the
//! admission webhook, with a field path, rather than at parse time. A Rust enum that fails to
//! deserialize on an unknown value would turn that clear validation error into an opaque parse
//! error and would drop the value on a round trip. [`string_enum!`] therefore declares enums
//! with an `Unknown(String)` catch-all: controllers match on typed variants, validation reports
//! `Unknown` values, and serialization writes back exactly what was read.

/// Declares a string enum with known variants and an `Unknown(String)` catch-all.
///
/// `schema = [..]` lists the values the CRD schema itself enumerates (the upstream CRD's `enum`
/// keyword); without it the schema is a plain string and only validation checks the value.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal ),+ $(,)?
        }
        $(schema = [$($schema_value:literal),* $(,)?])?
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this version of kruise-rs does not know; kept verbatim.
            Unknown(String),
        }

        #[allow(dead_code)]
        impl $name {
            /// Every value this enum knows, in declaration order.
            pub const KNOWN: &'static [&'static str] = &[$($value),+];

            /// The wire form of this value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $value, )+
                    Self::Unknown(other) => other.as_str(),
                }
            }

            /// Whether this is one of the [`Self::KNOWN`] values.
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Unknown(_))
            }

            /// Whether the field was left empty (defaulting fills it in).
            pub fn is_unset(&self) -> bool {
                matches!(self, Self::Unknown(value) if value.is_empty())
            }
        }

        /// The empty string, as Go's zero value: "not set".
        impl Default for $name {
            fn default() -> Self {
                Self::Unknown(String::new())
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                match value {
                    $( $value => Self::$variant, )+
                    other => Self::Unknown(other.to_string()),
                }
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self::from(value.as_str())
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <String as ::serde::Deserialize>::deserialize(deserializer)?;
                Ok(Self::from(value))
            }
        }

        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                #[allow(unused_mut)]
                let mut schema = ::schemars::json_schema!({ "type": "string" });
                $(
                    let values: Vec<::serde_json::Value> =
                        vec![$(::serde_json::Value::from($schema_value)),*];
                    schema.insert("enum".to_string(), ::serde_json::Value::Array(values));
                )?
                schema
            }
        }
    };
}

pub(crate) use string_enum;

#[cfg(test)]
mod tests {
    string_enum! {
        /// Test enum.
        pub enum Colour { Red = "Red", Green = "Green" }
    }

    #[test]
    fn known_values_parse_to_variants_and_unknown_values_are_kept() {
        let parsed: Vec<Colour> = serde_json::from_str(r#"["Red","Green","Blue"]"#).unwrap();
        assert_eq!(parsed, vec![Colour::Red, Colour::Green, Colour::Unknown("Blue".into())]);
        assert_eq!(serde_json::to_string(&parsed).unwrap(), r#"["Red","Green","Blue"]"#);
        assert!(!parsed[2].is_known());
    }
}
