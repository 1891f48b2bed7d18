//! Validation returning every problem with its field path (INVENTORY section d). The same
//! functions back the validating webhook, the embedded API server's CRD checks and
//! `kruise validate`.

mod advancedcronjob;
mod broadcastjob;
mod cloneset;
pub mod common;
mod containerrecreaterequest;
mod daemonset;
mod ephemeraljob;
mod imagelistpulljob;
mod imagepulljob;
mod nodeimage;
mod nodepodprobe;
mod persistentpodstate;
mod podprobemarker;
mod podunavailablebudget;
mod resourcedistribution;
mod sidecarset;
mod statefulset;
mod uniteddeployment;
mod workloadspread;

pub use kruise_machinery::validation::{meta, pod};

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
pub use podunavailablebudget::*;
pub use resourcedistribution::*;
pub use sidecarset::*;
pub use statefulset::*;
pub use uniteddeployment::*;
pub use workloadspread::*;
