//! Structural schemas of CustomResourceDefinitions, applied the way kube-apiextensions-apiserver
//! applies them: pruning of undeclared fields, defaulting, validation of custom resources against
//! their OpenAPI v3 schema, and validation of the CustomResourceDefinition objects themselves.
//!
//! Everything here is a pure function over `serde_json::Value` and the k8s-openapi CRD types. The
//! error messages, their field paths and their order of checks follow kube-apiserver 1.34 closely
//! (including its quirks, such as `spec.validation.openAPIV3Schema` paths when every version
//! shares one schema), because kubectl users read them verbatim.
//!
//! Where Go iterates a map in random order, this module iterates in key order, so that the
//! results are deterministic.
//!
//! The parts, by job:
//!
//! * custom resources: [`prune()`] (`prune`), [`apply_defaults`] and [`drop_disallowed_nulls`]
//!   (`defaulting`), [`validate`] and [`validate_at`] (`validation`, which runs the kube-openapi
//!   validator of `openapi` with its string `formats` and Go-flavoured `patterns`, then the
//!   invariants kube checks besides the schema), and [`list_type_at`] (`list_types`) for
//!   server-side apply;
//! * CustomResourceDefinitions: [`default_crd`] and [`validate_crd`] (`crd`), which checks each
//!   version's schema through `crd_schema` (the `structural` checks, `default_validation` and
//!   the per-schema `schema_rules`) and renders values in kube's internal form with `go_json`;
//! * shared: schema `accessors`, apimachinery's `names` validations and the `field_errors` kube
//!   phrases.

mod accessors;
mod crd;
mod crd_schema;
mod default_validation;
mod defaulting;
mod field_errors;
mod formats;
mod go_json;
mod list_types;
mod names;
mod openapi;
mod patterns;
mod prune;
mod schema_rules;
mod structural;
mod validation;

pub use self::{
    crd::{default_crd, validate_crd},
    defaulting::{apply_defaults, drop_disallowed_nulls},
    list_types::list_type_at,
    prune::prune,
    validation::{validate, validate_at},
};
