//! The container launch priority controller (upstream `pkg/controller/containerlaunchpriority`):
//! for a pod whose containers wait on its barrier ConfigMap (`<pod>-barrier`, env vars the pod
//! webhook injected), it creates the ConfigMap (owned by the pod), adds the key of the highest
//! priority still pending, the next one once those containers are ready, and marks the pod
//! `apps.kruise.io/container-launch-priority-completed: "true"` when the last is released. The
//! kubelet does the rest: a container whose env refers to a missing key does not start.
//!
//! The decisions are pure functions in [`kruise_crds::common::launch_priority`]; this module is
//! the watch, the work queue and the API writes.

pub mod controller;

pub use controller::{CONTROLLER_NAME, run};
