//! PersistentPodState defaults. Upstream registers no mutating webhook and no defaulting
//! function for this kind (an empty retention policy is read as WhenScaled by the controller),
//! so nothing is filled in.

use crate::apps::{v1alpha1, v1beta1};

/// Defaults of a v1beta1 PersistentPodState: none upstream, so the object is left as it is.
pub fn default_persistentpodstate_v1beta1(_state: &mut v1beta1::PersistentPodState) {}

/// Defaults of a v1alpha1 PersistentPodState: none upstream, so the object is left as it is.
pub fn default_persistentpodstate_v1alpha1(_state: &mut v1alpha1::PersistentPodState) {}
