//! Validation of what every Kubernetes object shares: object meta ([`meta`]: names, labels,
//! annotations, selectors) and pod specs and templates ([`pod`]), each problem with its field
//! path, as kube-apiserver reports it.

pub mod meta;
pub mod pod;
