//! The root object of every Kruise kind and version.
//!
//! One spec type may serve several API versions (BroadcastJob's v1alpha1 and v1beta1 share a
//! schema), so the root objects are declared with [`kruise_resource!`] rather than derived from
//! the spec: each version gets its own root type, with its own `apiVersion`, around whichever
//! spec and status types that version uses.

/// The API group of every Kruise workload and node kind.
pub const APPS_GROUP: &str = "apps.kruise.io";
/// The API group of PodUnavailableBudget.
pub const POLICY_GROUP: &str = "policy.kruise.io";

/// What every Kruise root object offers beyond [`kube::Resource`].
pub trait KruiseObject: kube::Resource<DynamicType = ()> + Clone + Send + Sync + 'static {
    /// The spec type of this version.
    type Spec;
    /// The status type of this version.
    type Status;
    /// The spec.
    fn spec(&self) -> &Self::Spec;
    /// The status, when the object has one.
    fn status(&self) -> Option<&Self::Status>;
}

/// Declares a root object: `metadata`, `spec`, optional `status`, with `apiVersion` and `kind`
/// written on serialization (and ignored on input, where the caller already dispatched on them).
macro_rules! kruise_resource {
    (
        $(#[$meta:meta])*
        $name:ident {
            group: $group:expr,
            version: $version:literal,
            kind: $kind:literal,
            plural: $plural:literal,
            scope: $scope:ident,
            spec: $spec:ty,
            status: $status:ty $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, ::serde::Deserialize)]
        pub struct $name {
            /// Standard object metadata.
            #[serde(default)]
            pub metadata: ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
            /// The desired state.
            #[serde(default)]
            pub spec: $spec,
            /// The observed state, written by the controller.
            #[serde(default)]
            pub status: Option<$status>,
        }

        impl $name {
            /// A new object with the given name and spec and no status.
            pub fn new(name: &str, spec: $spec) -> Self {
                Self {
                    metadata: ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                        name: Some(name.to_string()),
                        ..Default::default()
                    },
                    spec,
                    status: None,
                }
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeStruct;
                let fields = 4 + usize::from(self.status.is_some());
                let mut object = serializer.serialize_struct(stringify!($name), fields)?;
                object.serialize_field(
                    "apiVersion",
                    &<Self as ::kube::Resource>::api_version(&()),
                )?;
                object.serialize_field("kind", $kind)?;
                object.serialize_field("metadata", &self.metadata)?;
                object.serialize_field("spec", &self.spec)?;
                if let Some(status) = &self.status {
                    object.serialize_field("status", status)?;
                }
                object.end()
            }
        }

        impl ::kube::Resource for $name {
            type DynamicType = ();
            type Scope = ::kube::core::$scope;

            fn kind(_: &()) -> ::std::borrow::Cow<'_, str> {
                $kind.into()
            }
            fn group(_: &()) -> ::std::borrow::Cow<'_, str> {
                $group.into()
            }
            fn version(_: &()) -> ::std::borrow::Cow<'_, str> {
                $version.into()
            }
            fn api_version(_: &()) -> ::std::borrow::Cow<'_, str> {
                format!("{}/{}", $group, $version).into()
            }
            fn plural(_: &()) -> ::std::borrow::Cow<'_, str> {
                $plural.into()
            }
            fn meta(&self) -> &::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }

        impl $crate::resource::KruiseObject for $name {
            type Spec = $spec;
            type Status = $status;
            fn spec(&self) -> &Self::Spec {
                &self.spec
            }
            fn status(&self) -> Option<&Self::Status> {
                self.status.as_ref()
            }
        }
    };
}

pub(crate) use kruise_resource;
