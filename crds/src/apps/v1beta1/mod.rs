//! `apps.kruise.io/v1beta1`: the storage version of every kind that has one.

mod advancedcronjob;
mod broadcastjob;
mod cloneset;
mod containerrecreaterequest;
mod daemonset;
mod imagelistpulljob;
mod imagepulljob;
mod nodeimage;
mod persistentpodstate;
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
pub use resourcedistribution::*;
pub use sidecarset::*;
pub use statefulset::*;
pub use uniteddeployment::*;
pub use workloadspread::*;
