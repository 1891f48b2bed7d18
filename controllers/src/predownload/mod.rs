//! Image pre-download for in-place updates (gate `PreDownloadImageForInPlaceUpdate`), shared by
//! every workload that updates pods in place (CloneSet, Advanced StatefulSet, Advanced
//! DaemonSet; upstream `*_predownload_image.go` and `pkg/util/imagejob/utilfunction`).
//!
//! While a workload rolls out a revision that changes images, one ImagePullJob per changed
//! container pulls the new image on the nodes of the pods still at another revision, so the
//! in-place restart that follows does not wait for the pull. The update revision is then
//! labelled `apps.kruise.io/pre-predownload-created` (or `...-ignored` when pre-downloading
//! would not help), so each revision is decided once. Once the rollout converged the
//! workload's jobs are deleted.
//!
//! The module knows nothing about a workload's kind: a workload describes its rollout as a
//! [`Rollout`] (numbers already scaled, its own reasons to skip) and itself as a [`Workload`]
//! (owner reference, selector, template, [`Knobs`]); [`decide`] is pure, [`reconcile`] creates
//! the jobs and labels the revision, [`delete_jobs`] (or [`delete_jobs_of`]) cleans up.
//!
//! ```no_run
//! # use std::collections::BTreeMap;
//! # use k8s_openapi::api::{apps::v1::ControllerRevision, core::v1::PodTemplateSpec};
//! # use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
//! # async fn run(client: kube::Client, owner: OwnerReference, selector: LabelSelector,
//! #     template: PodTemplateSpec, old: Vec<PodTemplateSpec>, update: ControllerRevision,
//! #     annotations: BTreeMap<String, String>, desired: i32, labels: BTreeMap<String, String>)
//! #     -> Result<(), kruise_controllers::ControllerError> {
//! use kruise_controllers::predownload::{self, Knobs, Rollout, Workload};
//! // An Advanced DaemonSet: no minimum size, no strategy exclusion, knobs from annotations.
//! let rollout = Rollout {
//!     update_revision_labels: &labels,
//!     replicas: desired,
//!     max_unavailable: 1,
//!     changed_images: predownload::changed_images(&old.iter().collect::<Vec<_>>(), &template),
//!     ..Rollout::default()
//! };
//! let workload = Workload {
//!     kind: "DaemonSet",
//!     namespace: "default",
//!     name: "agent",
//!     owner,
//!     selector: Some(&selector),
//!     template: &template,
//!     knobs: Knobs::resolve(None, Some(&annotations)),
//! };
//! predownload::reconcile(&client, &workload, predownload::decide(&rollout), &update, |_, _| {}).await
//! # }
//! ```

mod decision;
mod jobs;

pub use decision::{Decision, MINIMUM_REPLICAS, Rollout, changed_images, decide, min_updated_ready};
pub use jobs::{
    DEFAULT_TIMEOUT_SECONDS, Knobs, TTL_SECONDS_AFTER_FINISHED, Workload, delete_jobs, delete_jobs_of,
    job_for, reconcile,
};
