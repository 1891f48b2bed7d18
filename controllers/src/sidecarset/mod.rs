//! SidecarSet: which pods a SidecarSet selects and what it puts into them (upstream
//! `pkg/control/sidecarcontrol` and `pkg/webhook/pod/mutating/sidecarset*.go`).
//!
//! [`inject`] is the pod webhook's injection at pod creation, a pure function of the pod, the
//! SidecarSets and the pod's namespace labels; the webhook reads those and applies the result.

pub mod controller;
pub mod core;
pub mod inject;
pub mod pinning;
pub mod podstate;
pub mod resources;

pub use inject::{InjectError, inject_sidecars, pod_matches_sidecarset};
pub use podstate::{
    SIDECARSET_INJECTED_LIST_ANNOTATION, SIDECARSET_WORKING_HOT_UPGRADE_ANNOTATION, SidecarSetUpgradeSpec,
    injected_sidecarsets, upgrade_specs,
};
