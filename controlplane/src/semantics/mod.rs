//! Pure Kubernetes API semantics, independent of HTTP and storage: selectors and the field
//! labels of built-in kinds, the defaults of built-in workloads and pod specs, Ingress and HPA
//! rules, patches, server-side apply, structural schemas and printer-column JSONPath.

pub mod apply;
pub mod autoscaling;
pub mod defaults;
pub mod field_sets;
pub mod jsonpath;
pub mod merge_keys;
pub mod networking;
pub mod patch;
pub mod schema;
pub mod selectors;
