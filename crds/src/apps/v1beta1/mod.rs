//! `apps.kruise.io/v1beta1`: the storage version of every kind that has one.

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
