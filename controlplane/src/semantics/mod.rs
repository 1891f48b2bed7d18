//! Pure Kubernetes API semantics, independent of HTTP and storage: selectors and the field
//! labels of built-in kinds, the defaults of built-in workloads and pod specs, patches,
//! server-side apply, structural schemas and printer-column JSONPath.

pub mod apply;
pub mod defaults;
pub mod field_sets;
pub mod jsonpath;
pub mod merge_keys;
pub mod patch;
pub mod schema;
pub mod selectors;
