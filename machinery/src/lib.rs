//! Generic Kubernetes machinery, the counterpart of Go's `k8s.io/apimachinery` (and of the few
//! `k8s.io/kubernetes` helpers every component reimplements): what both the Kruise API types
//! (`kruise-crds`) and the embedded control plane (`kruise-controlplane`) need, so that the
//! control plane depends on no Kruise crate and the Kruise types do not carry Kubernetes'
//! generic rules.
//!
//! - [`field`]: field paths and field errors, rendered as kube-apiserver renders them.
//! - [`selector`]: label selectors (matching, their string form).
//! - [`quantity`]: resource quantities (parsing, comparison, Go's canonical form).
//! - [`intstr`]: int-or-string values and percentages.
//! - [`validation`]: object meta and pod spec validation (names, labels, annotations, the pod
//!   template rules).
//! - [`pod_defaults`]: Kubernetes' core/v1 pod defaults (`SetDefaults_PodSpec` and friends).
//! - [`gotypes`], [`gojson`]: the wire schema of the built-in kinds taken from the Go types, and
//!   JSON encoded byte for byte as Go's `encoding/json` encodes those types.
//! - [`json`]: small JSON document helpers.
//! - [`kubelet_hash`]: the kubelet's container hash and the Go hashing it builds on.
//!
//! Pure data and pure functions: nothing here performs I/O.

pub mod field;
pub mod gojson;
pub mod gotypes;
pub mod intstr;
pub mod json;
pub mod kubelet_hash;
pub mod pod_defaults;
pub mod quantity;
pub mod selector;
pub mod validation;
