//! Conversion between v1alpha1 and v1beta1 (v1beta1 is the hub: every kind that has both
//! versions stores v1beta1).
//!
//! Each kind has a *natural* conversion in both directions that follows the upstream rules
//! (renamed fields, annotations or labels moved to and from spec fields). Natural conversions
//! are not always one-to-one: v1alpha1 `updateStrategy.type: ""` and `ReCreate` both become
//! v1beta1 `RollingUpdate` + `ReCreate`, for example. So that a round trip through the other
//! version returns exactly what was written, [`convert_lossless`] keeps the source's spec and
//! status in an annotation whenever the natural conversion back would not reproduce them, and
//! prefers that copy on the way back as long as it still converts to what the object now says
//! (an edit made through the other version invalidates it). This is how Kubernetes keeps
//! version-only fields of built-in kinds.

mod advancedcronjob;
mod broadcastjob;
mod cloneset;
mod containerrecreaterequest;
mod daemonset;
mod imagelistpulljob;
mod imagepulljob;
mod nodeimage;
mod persistentpodstate;
mod podunavailablebudget;
mod resourcedistribution;
mod sidecarset;
mod statefulset;
mod uniteddeployment;
mod workloadspread;

pub use advancedcronjob::*;
pub use broadcastjob::*;
pub use cloneset::*;
pub use containerrecreaterequest::*;
pub use daemonset::*;
pub use imagelistpulljob::*;
pub use imagepulljob::*;
pub use nodeimage::*;
pub use persistentpodstate::*;
pub use podunavailablebudget::*;
pub use resourcedistribution::*;
pub use sidecarset::*;
pub use statefulset::*;
pub use uniteddeployment::*;
pub use workloadspread::*;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Serialize, de::DeserializeOwned};

use crate::resource::KruiseObject;

/// Annotation prefix under which a conversion keeps the parts of an object that the target
/// version cannot express; the suffix is the version the kept parts belong to.
pub const STASH_ANNOTATION_PREFIX: &str = "conversion.apps.kruise.io/";

/// A root object whose spec and status can be replaced wholesale (all Kruise root objects).
pub trait SpecStatusParts: KruiseObject + PartialEq
where
    Self::Spec: Serialize + DeserializeOwned + Clone,
    Self::Status: Serialize + DeserializeOwned + Clone,
{
    /// Mutable access to the metadata.
    fn metadata_mut(&mut self) -> &mut ObjectMeta;
    /// Replaces spec and status.
    fn set_parts(&mut self, spec: Self::Spec, status: Option<Self::Status>);
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Stashed<Spec, Status> {
    spec: Spec,
    #[serde(default = "Option::default", skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
}

/// Converts `source` with the natural conversions `forward`/`backward`, keeping whatever the
/// natural conversion loses in a stash annotation so that converting back is exact.
pub fn convert_lossless<S, T>(
    source: &S,
    source_version: &str,
    target_version: &str,
    forward: impl Fn(&S) -> T,
    backward: impl Fn(&T) -> S,
) -> T
where
    S: SpecStatusParts,
    S::Spec: Serialize + DeserializeOwned + Clone,
    S::Status: Serialize + DeserializeOwned + Clone,
    T: SpecStatusParts,
    T::Spec: Serialize + DeserializeOwned + Clone,
    T::Status: Serialize + DeserializeOwned + Clone,
{
    let mut source = source.clone();
    // What an earlier conversion from the target version left on this object.
    let earlier: Option<Stashed<T::Spec, T::Status>> =
        take_annotation(source.metadata_mut(), &stash_key(target_version))
            .and_then(|text| serde_json::from_str(&text).ok());

    let mut target = forward(&source);
    if let Some(earlier) = earlier {
        let mut candidate = target.clone();
        candidate.set_parts(earlier.spec, earlier.status);
        if backward(&candidate) == source {
            target = candidate;
        }
    }
    if backward(&target) != source {
        let stash = Stashed { spec: source.spec().clone(), status: source.status().cloned() };
        if let Ok(text) = serde_json::to_string(&stash) {
            target
                .metadata_mut()
                .annotations
                .get_or_insert_with(Default::default)
                .insert(stash_key(source_version), text);
        }
    }
    target
}

fn stash_key(version: &str) -> String {
    format!("{STASH_ANNOTATION_PREFIX}{version}")
}

/// Removes an annotation, dropping the map when it becomes empty.
pub(crate) fn take_annotation(meta: &mut ObjectMeta, key: &str) -> Option<String> {
    let annotations = meta.annotations.as_mut()?;
    let value = annotations.remove(key);
    if annotations.is_empty() {
        meta.annotations = None;
    }
    value
}

/// Removes a label, dropping the map when it becomes empty.
pub(crate) fn take_label(meta: &mut ObjectMeta, key: &str) -> Option<String> {
    let labels = meta.labels.as_mut()?;
    let value = labels.remove(key);
    if labels.is_empty() {
        meta.labels = None;
    }
    value
}

/// Sets an annotation, creating the map if needed.
pub(crate) fn put_annotation(meta: &mut ObjectMeta, key: &str, value: String) {
    meta.annotations.get_or_insert_with(Default::default).insert(key.to_string(), value);
}

/// Sets a label, creating the map if needed.
pub(crate) fn put_label(meta: &mut ObjectMeta, key: &str, value: String) {
    meta.labels.get_or_insert_with(Default::default).insert(key.to_string(), value);
}

/// Implements [`SpecStatusParts`] for root objects declared with `kruise_resource!`.
macro_rules! impl_spec_status_parts {
    ($($ty:ty),+ $(,)?) => {
        $(
            impl $crate::conversion::SpecStatusParts for $ty {
                fn metadata_mut(
                    &mut self,
                ) -> &mut ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                    &mut self.metadata
                }
                fn set_parts(
                    &mut self,
                    spec: <Self as $crate::resource::KruiseObject>::Spec,
                    status: Option<<Self as $crate::resource::KruiseObject>::Status>,
                ) {
                    self.spec = spec;
                    self.status = status;
                }
            }
        )+
    };
}
pub(crate) use impl_spec_status_parts;
