//! Validation returning every problem with its field path (INVENTORY section d). The same
//! functions back the validating webhook, the embedded API server's CRD checks and
//! `kruise validate`.

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
mod podunavailablebudget;
mod ephemeraljob;
mod podprobemarker;
mod nodepodprobe;
pub mod common;
pub mod meta;
pub mod pod;

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
pub use podunavailablebudget::*;
pub use ephemeraljob::*;
pub use podprobemarker::*;
pub use nodepodprobe::*;
