//! Pure Kubernetes API semantics, independent of HTTP and storage: selectors, patches,
//! server-side apply, structural schemas and printer-column JSONPath.

pub mod apply;
pub mod jsonpath;
pub mod merge_keys;
pub mod patch;
pub mod schema;
pub mod selectors;
