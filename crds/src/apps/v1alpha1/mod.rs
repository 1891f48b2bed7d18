//! `apps.kruise.io/v1alpha1`: still served for existing manifests; converted to v1beta1 for
//! storage, except for the kinds that only exist at v1alpha1.

mod cloneset;
mod statefulset;
mod daemonset;
mod sidecarset;
mod uniteddeployment;
mod broadcastjob;
mod advancedcronjob;
mod imagepulljob;
mod imagelistpulljob;
mod nodeimage;
mod containerrecreaterequest;
mod resourcedistribution;
mod workloadspread;
mod persistentpodstate;
mod ephemeraljob;
mod podprobemarker;
mod nodepodprobe;

pub use cloneset::*;
pub use statefulset::*;
pub use daemonset::*;
pub use sidecarset::*;
pub use uniteddeployment::*;
pub use broadcastjob::*;
pub use advancedcronjob::*;
pub use imagepulljob::*;
pub use imagelistpulljob::*;
pub use nodeimage::*;
pub use containerrecreaterequest::*;
pub use resourcedistribution::*;
pub use workloadspread::*;
pub use persistentpodstate::*;
pub use ephemeraljob::*;
pub use podprobemarker::*;
pub use nodepodprobe::*;
