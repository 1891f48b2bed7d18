//! Every served (kind, version) with its Rust type, defaults and validation, in one table, so
//! that generic tools (`kruise validate`, admission decoding, sample tests) handle all kinds the
//! same way.

use serde_json::Value;

use crate::{
    apps::{v1alpha1, v1beta1},
    defaults, document,
    field::ErrorList,
    validation,
};

macro_rules! registry {
    ($(
        $(#[$meta:meta])*
        $variant:ident => $ty:ty {
            defaults: $defaults:expr,
            validate: $validate:expr $(,)?
        }
    ),+ $(,)?) => {
        /// One Kruise object of any served kind and version.
        #[derive(Clone, Debug, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum AnyKruiseObject {
            $( $(#[$meta])* $variant($ty), )+
        }

        impl AnyKruiseObject {
            /// Applies the mutating webhook's defaults (as on create).
            pub fn apply_defaults(&mut self) {
                match self {
                    $( Self::$variant(object) => { let apply: fn(&mut $ty) = $defaults; apply(object) } )+
                }
            }

            /// Validates the object as on create.
            pub fn validate(&self) -> ErrorList {
                match self {
                    $( Self::$variant(object) => { let check: fn(&$ty) -> ErrorList = $validate; check(object) } )+
                }
            }

            /// `apiVersion` of the object.
            pub fn api_version(&self) -> String {
                match self {
                    $( Self::$variant(_) => <$ty as kube::Resource>::api_version(&()).into_owned(), )+
                }
            }

            /// Kind of the object.
            pub fn kind(&self) -> String {
                match self {
                    $( Self::$variant(_) => <$ty as kube::Resource>::kind(&()).into_owned(), )+
                }
            }

            /// Metadata of the object.
            pub fn metadata(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                match self {
                    $( Self::$variant(object) => &object.metadata, )+
                }
            }

            /// The object as JSON.
            pub fn to_value(&self) -> Result<Value, serde_json::Error> {
                match self {
                    $( Self::$variant(object) => serde_json::to_value(object), )+
                }
            }
        }

        /// How to decode one (apiVersion, kind).
        pub struct RegistryEntry {
            /// apiVersion served.
            pub api_version: fn() -> String,
            /// Kind served.
            pub kind: fn() -> String,
            /// Strict decoding into the typed object.
            pub decode: fn(&Value) -> Result<AnyKruiseObject, ErrorList>,
        }

        /// Every registered (kind, version).
        pub fn entries() -> &'static [RegistryEntry] {
            &[
                $( RegistryEntry {
                    api_version: || <$ty as kube::Resource>::api_version(&()).into_owned(),
                    kind: || <$ty as kube::Resource>::kind(&()).into_owned(),
                    decode: |value| document::strict_from_value::<$ty>(value).map(AnyKruiseObject::$variant),
                }, )+
            ]
        }
    };
}

registry! {
    /// CloneSet v1alpha1.
    CloneSetV1alpha1 => v1alpha1::CloneSet {
        defaults: |object| defaults::default_cloneset_v1alpha1(object, true),
        validate: |object| validation::validate_cloneset_v1alpha1(object, None),
    },
    /// CloneSet v1beta1.
    CloneSetV1beta1 => v1beta1::CloneSet {
        defaults: |object| defaults::default_cloneset_v1beta1(object, true),
        validate: |object| validation::validate_cloneset_v1beta1(object, None),
    },
}

/// The entry serving `api_version`/`kind`, if any.
pub fn lookup(api_version: &str, kind: &str) -> Option<&'static RegistryEntry> {
    entries().iter().find(|entry| (entry.api_version)() == api_version && (entry.kind)() == kind)
}
