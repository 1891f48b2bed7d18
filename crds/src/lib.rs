//! OpenKruise API types for kruise-rs: every kind at every served version, their defaults,
//! validation and v1alpha1 <-> v1beta1 conversion, and the CustomResourceDefinitions that serve
//! them. Pure data and pure functions: nothing here performs I/O, so the controllers, the node
//! daemon, the service API and the CLI all share one meaning of every field.
//!
//! Field conventions follow the upstream Go types so that documents round-trip the same way:
//! a Go pointer is an `Option`, a Go value with `omitempty` is a plain value skipped when it
//! equals its default, and string enumerations keep unknown values (see [`enums`]).

pub mod apps;
pub mod catalog;
pub mod common;
pub mod conversion;
pub mod crd;
pub mod defaults;
pub mod document;
pub mod enums;
pub mod features;
pub mod policy;
pub mod registry;
pub mod resource;
pub mod schema;
pub mod validation;

// Generic Kubernetes machinery lives in `kruise-machinery` (the control plane uses it without
// any Kruise type); these paths stay for the Kruise code that reads them through this crate.
pub use kruise_machinery::{field, gojson, gotypes, intstr, quantity, selector};

/// `skip_serializing_if` predicate mirroring Go's `omitempty` on non-pointer fields.
pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// `skip_serializing_if` predicate that never skips: for Go fields without `omitempty` that the
/// upstream CRD nevertheless marks optional (always written, never required).
pub(crate) fn always_write<T>(_: &T) -> bool {
    false
}
