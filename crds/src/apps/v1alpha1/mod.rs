//! `apps.kruise.io/v1alpha1`: still served for existing manifests; converted to v1beta1 for
//! storage, except for the kinds that only exist at v1alpha1.

mod advancedcronjob;
mod broadcastjob;
mod cloneset;
mod containerrecreaterequest;
mod daemonset;
mod ephemeraljob;
mod imagelistpulljob;
mod imagepulljob;
mod nodeimage;
mod nodepodprobe;
mod persistentpodstate;
mod podprobemarker;
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
pub use ephemeraljob::*;
pub use imagelistpulljob::*;
pub use imagepulljob::*;
pub use nodeimage::*;
pub use nodepodprobe::*;
pub use persistentpodstate::*;
pub use podprobemarker::*;
pub use resourcedistribution::*;
pub use sidecarset::*;
pub use statefulset::*;
pub use uniteddeployment::*;
pub use workloadspread::*;
