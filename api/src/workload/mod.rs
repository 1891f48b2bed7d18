//! Rollouts on each target kind, as pure functions over the target object: a request applied to
//! the current object (with every problem named by its request field), the changes
//! pause/resume/promote/abort make, and the rollout state derived from the object's status.
//! I/O is the caller's.
//!
//! CloneSet, Advanced StatefulSet, Advanced DaemonSet and SidecarSet share one model — a
//! partitioned rolling update that keeps some pods at the previous revision until promoted — so
//! the state, progress, pause and promote logic lives here, generic over [`RolloutTarget`], and
//! each kind's module only says where its fields are. The three workloads also share how a
//! request changes their pod template ([`template`], over [`PodTemplateWorkload`]); a SidecarSet
//! has no template (its sidecar containers are upgraded in place in the pods it injected), so it
//! says how a request changes it itself ([`sidecarset`]).
//!
//! A rollout is identified with the revision it moves pods to (`status.updateRevision`, or a
//! SidecarSet's `status.latestRevision`, once the controller observed the change): pause, resume
//! and promote change the generation but not the revision, while any other change of what the
//! pods run (a newer rollout, `kubectl patch`) supersedes it.

/// The [`PodTemplateWorkload`] methods every workload implements alike: the template and
/// selector under `spec`, and the webhook's problems after `$default` applied the defaults, as
/// `$validate` finds them.
macro_rules! spec_accessors {
    (default: $default:expr, validate: $validate:path) => {
        fn template(&self) -> &PodTemplateSpec {
            &self.spec.template
        }

        fn template_mut(&mut self) -> &mut PodTemplateSpec {
            &mut self.spec.template
        }

        fn selector(&self) -> Option<&LabelSelector> {
            self.spec.selector.as_ref()
        }

        fn validation_problems(&self, old: Option<&Self>) -> Vec<(String, String)> {
            $crate::workload::defaulted_problems(self, old, $default, $validate)
        }
    };
}

/// The [`RolloutTarget`] methods a [`PodTemplateWorkload`] gets from its template: a namespaced
/// API, the request written into the template, the rollback to a revision's template, and its
/// pods found by its selector.
macro_rules! template_target_accessors {
    () => {
        fn api(client: kube::Client, namespace: &str) -> kube::Api<Self> {
            kube::Api::namespaced(client, namespace)
        }

        fn apply(
            &self,
            request: &$crate::model::RolloutRequest,
        ) -> Result<Self, Vec<$crate::error::FieldError>> {
            $crate::workload::template::apply_request(self, request)
        }

        fn rolled_back(&self, revision: &k8s_openapi::api::apps::v1::ControllerRevision) -> Option<Self> {
            $crate::workload::template::revision_template(revision)
                .map(|template| $crate::workload::template::rolled_back(self, template))
        }

        fn revision_home(&self, revision: &str) -> $crate::workload::RevisionHome {
            $crate::workload::RevisionHome::Named {
                namespace: kube::ResourceExt::namespace(self).unwrap_or_default(),
                names: $crate::workload::PodTemplateWorkload::revision_object_names(self, revision),
            }
        }

        fn pod_scope(&self) -> Option<$crate::workload::PodScope> {
            Some($crate::workload::template::pod_scope(self))
        }
    };
}

/// The [`PodTemplateWorkload`] methods of the kinds whose `rollingUpdate` has CloneSet's
/// `podUpdatePolicy` and `maxUnavailable` (CloneSet, Advanced StatefulSet).
macro_rules! pod_update_policy_accessors {
    () => {
        fn set_pod_update_policy(&mut self, policy: PodUpdatePolicy) -> Result<(), String> {
            self.spec.update_strategy.rolling_update.get_or_insert_with(Default::default).pod_update_policy =
                KruisePodUpdatePolicy::from(policy.as_str());
            Ok(())
        }

        fn set_max_unavailable(&mut self, value: IntOrString) {
            self.spec.update_strategy.rolling_update.get_or_insert_with(Default::default).max_unavailable =
                Some(value);
        }
    };
}

/// The [`RolloutTarget`] pause methods of the kinds whose `rollingUpdate` has CloneSet's
/// `paused` (CloneSet, Advanced StatefulSet).
macro_rules! rolling_update_pause_accessors {
    () => {
        fn paused(&self) -> bool {
            self.spec.update_strategy.rolling_update.as_ref().is_some_and(|r| r.paused)
        }

        fn set_paused(&mut self, paused: bool) {
            self.spec.update_strategy.rolling_update.get_or_insert_with(Default::default).paused = paused;
        }
    };
}

/// The [`StatusView`] of a replica-counting status (CloneSet's and Advanced StatefulSet's share
/// their field names), with its conditions already mapped.
macro_rules! replica_status_view {
    ($status:expr, $conditions:expr) => {{
        let status = $status;
        StatusView {
            observed_generation: status.observed_generation,
            existing: status.replicas,
            updated: status.updated_replicas,
            updated_ready: status.updated_ready_replicas,
            ready: status.ready_replicas,
            conditions: $conditions,
            label_selector: Some(status.label_selector),
            update_revision: status.update_revision,
            current_revision: status.current_revision,
        }
    }};
}

/// Conditions of the `apps/v1` shape (optional reason and message) as the API shows them.
macro_rules! apps_v1_conditions {
    ($conditions:expr) => {
        $conditions
            .iter()
            .map(|c| {
                $crate::workload::condition(
                    &c.type_,
                    &c.status,
                    c.reason.as_deref(),
                    c.message.as_deref(),
                    c.last_transition_time.as_ref(),
                )
            })
            .collect()
    };
}

pub mod cloneset;
pub mod daemonset;
pub mod sidecarset;
pub mod statefulset;
pub mod template;

use std::{collections::HashSet, fmt::Debug};

use chrono::{DateTime, Utc};
use k8s_openapi::{
    api::{apps::v1::ControllerRevision, core::v1::Pod},
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};
use kruise_crds::{
    common::{IN_PLACE_UPDATE_STATE_KEY, InPlaceUpdateState, well_known::CONTROLLER_REVISION_HASH},
    field::ErrorList,
    intstr::{IntOrPercent as ParsedIntOrPercent, parse_int_or_percent},
};
use serde::{Serialize, de::DeserializeOwned};

pub use template::{PodTemplateWorkload, apply_request, pod_selector, revision_template, rolled_back};

use crate::{
    error::FieldError,
    model::{IntOrPercent, Progress, RolloutRequest, WorkloadCondition, WorkloadKind},
    store::RolloutState,
};

/// The condition reason that means the rollout stalled.
pub const DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";

/// What a rollout reads from a workload's status, the same for every kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusView {
    /// The generation the controller has acted on.
    pub observed_generation: i64,
    /// The revision pods are moving to (empty until the controller named it).
    pub update_revision: String,
    /// The revision all pods were at before.
    pub current_revision: String,
    /// Pods (or, for a DaemonSet, nodes running a daemon pod) that exist.
    pub existing: i32,
    /// Of those, at the update revision.
    pub updated: i32,
    /// Of those, at the update revision and ready.
    pub updated_ready: i32,
    /// Ready pods, any revision.
    pub ready: i32,
    /// The workload's conditions.
    pub conditions: Vec<WorkloadCondition>,
    /// The label selector the controller reports (`status.labelSelector`), when it does.
    pub label_selector: Option<String>,
}

/// Where the ControllerRevisions of a target are, to find the one a rollout replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RevisionHome {
    /// In the target's namespace, under one of these names (the kinds name them differently).
    Named {
        /// The namespace.
        namespace: String,
        /// The candidate names, in order.
        names: Vec<String>,
    },
    /// In whatever namespace the Kruise manager runs in (a cluster-scoped target's, which the
    /// API is not told): found by label, and only when owned by the target.
    Labelled {
        /// The label selector of the target's revisions.
        selector: String,
        /// The revision's name.
        name: String,
        /// The uid the revision's owner reference must carry.
        owner_uid: String,
    },
}

/// Where a target's pods are, to count how each was updated and to pre-pull images for them.
#[derive(Clone, Debug, PartialEq)]
pub struct PodScope {
    /// Their namespace.
    pub namespace: String,
    /// Their label selector, as a list selector.
    pub list_selector: String,
    /// Their label selector, as an object (an ImagePullJob's `podSelector`).
    pub selector: LabelSelector,
    /// The uid their owner reference carries.
    pub owner_uid: String,
}

/// A kind a rollout can drive: where its partition, pause and status are, and how a request,
/// an abort and the pod counts reach it. The rollout logic itself is the generic functions of
/// this module; the operations reach any kind through these methods only, so a cluster-scoped
/// SidecarSet goes through the same create, act and watch paths as the namespaced workloads.
pub trait RolloutTarget:
    kube::Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The kind, as requests name it.
    const KIND: WorkloadKind;

    /// The API of this kind where a target named in `namespace` lives (a cluster-scoped kind
    /// ignores the namespace). Building it does no I/O.
    fn api(client: kube::Client, namespace: &str) -> kube::Api<Self>;
    /// The object a rollout request asks for, from the current one; every problem is named by
    /// the request field it comes from. Nothing is written.
    fn apply(&self, request: &RolloutRequest) -> Result<Self, Vec<FieldError>>;
    /// The object rolled back to what `revision` recorded, for every pod and unpaused (`None`:
    /// the revision holds nothing to go back to).
    fn rolled_back(&self, revision: &ControllerRevision) -> Option<Self>;
    /// Where the ControllerRevision named `revision` is.
    fn revision_home(&self, revision: &str) -> RevisionHome;
    /// Where the pods are, for per-pod counts and pre-pulls (`None`: the kind's pods are not
    /// its own, so neither applies).
    fn pod_scope(&self) -> Option<PodScope>;
    /// The pods a finished rollout has at the new revision: the replicas, for a DaemonSet the
    /// nodes that should run a pod, for a SidecarSet the pods it matched.
    fn desired(&self) -> i32;
    /// The partition as written in the spec.
    fn partition(&self) -> Option<IntOrString>;
    /// Sets the partition (already checked to be in range; `None`: every pod).
    fn set_partition(&mut self, partition: Option<IntOrString>);
    /// The pods a partition keeps at the previous revision, as this kind's controller counts.
    fn kept_for(&self, partition: Option<&IntOrString>) -> i32;
    /// Whether the update is paused.
    fn paused(&self) -> bool;
    /// Pauses or resumes the update.
    fn set_paused(&mut self, paused: bool);
    /// What the status says.
    fn status_view(&self) -> StatusView;
}

/// The admission webhook's problems with `object` (and, with `old`, the rules of an update),
/// both defaulted by `default` first as the webhook does, as `(field path, message)`.
pub(crate) fn defaulted_problems<T: Clone>(
    object: &T,
    old: Option<&T>,
    default: impl Fn(&mut T),
    validate: impl Fn(&T, Option<&T>) -> ErrorList,
) -> Vec<(String, String)> {
    let defaulted = |value: &T| {
        let mut value = value.clone();
        default(&mut value);
        value
    };
    let old = old.map(defaulted);
    validate(&defaulted(object), old.as_ref())
        .iter()
        .map(|error| (error.path.as_str().to_string(), error.message()))
        .collect()
}

/// The problems in `after` that are not in `before`: what a change introduced, so that a
/// problem the object already had is not blamed on the request.
pub(crate) fn new_problems(
    before: Vec<(String, String)>,
    after: Vec<(String, String)>,
) -> Vec<(String, String)> {
    let before: HashSet<(String, String)> = before.into_iter().collect();
    after.into_iter().filter(|problem| !before.contains(problem)).collect()
}

/// A Kubernetes timestamp as a chrono time (microsecond precision, as the store keeps).
pub(crate) fn to_chrono(time: &k8s_openapi::jiff::Timestamp) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_micros(time.as_microsecond())
}

/// Conditions as the API shows them, from Kubernetes' `(type, status, reason, message, time)`.
pub(crate) fn condition(
    type_: &str,
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
    time: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
) -> WorkloadCondition {
    WorkloadCondition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.unwrap_or_default().into(),
        message: message.unwrap_or_default().into(),
        last_transition_time: time.and_then(|t| to_chrono(&t.0)),
    }
}

/// Checks a partition against the pod count: a count in `[0, desired]` or a percentage in
/// `[0%, 100%]`.
pub fn check_partition(value: &IntOrPercent, desired: i32) -> Result<IntOrString, String> {
    let parsed = value.to_k8s();
    match parse_int_or_percent(&parsed) {
        Ok(ParsedIntOrPercent::Int(count)) if count < 0 || count > desired => {
            Err(format!("{count} is out of range: must be between 0 and the workload's replicas ({desired})"))
        }
        Ok(ParsedIntOrPercent::Percent(percent)) if !(0.0..=100.0).contains(&percent) => {
            Err(format!("{percent}% is out of range: must be between 0% and 100%"))
        }
        Ok(_) => Ok(parsed),
        Err(error) => Err(format!("must be an integer or a percentage such as \"20%\": {error}")),
    }
}

/// Checks a count or percentage that has no upper bound (`maxUnavailable`, `maxSurge`): a
/// count of at least 0 or a percentage in `[0%, 100%]`.
pub(crate) fn check_int_or_percent(value: &IntOrPercent) -> Result<IntOrString, String> {
    let parsed = value.to_k8s();
    match parse_int_or_percent(&parsed) {
        Ok(ParsedIntOrPercent::Int(count)) if count < 0 => Err(format!("{count} must not be negative")),
        Ok(ParsedIntOrPercent::Percent(percent)) if !(0.0..=100.0).contains(&percent) => {
            Err(format!("{percent}% is out of range: must be between 0% and 100%"))
        }
        Ok(_) => Ok(parsed),
        Err(error) => Err(format!("must be an integer or a percentage such as \"20%\": {error}")),
    }
}

/// A problem with the request's `reason` (at most 1024 characters), if any.
pub(crate) fn check_reason(request: &RolloutRequest) -> Option<FieldError> {
    request
        .reason
        .as_ref()
        .filter(|reason| reason.chars().count() > 1024)
        .map(|_| FieldError::new("reason", "must be at most 1024 characters"))
}

/// The workload with its update paused or resumed.
pub fn with_paused<W: RolloutTarget>(current: &W, paused: bool) -> W {
    let mut next = current.clone();
    next.set_paused(paused);
    next
}

/// The workload promoted to a partition (none: every pod), and resumed.
pub fn with_partition<W: RolloutTarget>(current: &W, partition: Option<IntOrString>) -> W {
    let mut next = current.clone();
    next.set_partition(partition);
    next.set_paused(false);
    next
}

/// The pods the current partition keeps at the old revision.
pub fn kept_by_partition<W: RolloutTarget>(workload: &W) -> i32 {
    workload.kept_for(workload.partition().as_ref())
}

/// Checks a promotion's partition: in range, and not above the current one (`Err`: the message
/// for the `partition` field).
pub fn check_promotion<W: RolloutTarget>(
    workload: &W,
    partition: &IntOrPercent,
) -> Result<IntOrString, String> {
    let value = check_partition(partition, workload.desired())?;
    let next = workload.kept_for(Some(&value));
    let current = kept_by_partition(workload);
    if next > current {
        return Err(format!(
            "keeps {next} pod(s) back, more than the current partition ({current}): promote only moves forward"
        ));
    }
    Ok(value)
}

/// The revision the workload was at before a change: its update revision once the controller
/// caught up with the spec, else the current one — or, for a kind whose status names no current
/// revision (DaemonSet, SidecarSet), the last revision the controller named, which is what the
/// pods were moving to.
pub fn previous_revision<W: RolloutTarget>(workload: &W) -> Option<String> {
    let status = workload.status_view();
    let caught_up = status.observed_generation >= workload.meta().generation.unwrap_or(0);
    Some(if caught_up || status.current_revision.is_empty() {
        status.update_revision
    } else {
        status.current_revision
    })
    .filter(|r| !r.is_empty())
}

/// Progress read from the status (and, when given, the pods: how many were updated in place and
/// how many were created since `since`).
pub fn progress<W: RolloutTarget>(
    workload: &W,
    revision: Option<&str>,
    pods: Option<&[Pod]>,
    since: DateTime<Utc>,
) -> Progress {
    let status = workload.status_view();
    let desired = workload.desired();
    let kept = kept_by_partition(workload);
    let same_revision = revision.is_none_or(|r| r == status.update_revision);
    let (updated, updated_ready) =
        if same_revision { (status.updated, status.updated_ready) } else { (0, 0) };
    let (in_place, recreated) = match (pods, revision) {
        (Some(pods), Some(revision)) => {
            let (in_place, recreated) = count_updates(pods, revision, since);
            (Some(in_place), Some(recreated))
        }
        _ => (None, None),
    };
    Progress {
        replicas: desired,
        updated,
        updated_ready,
        ready: status.ready,
        expected_updated: (desired - kept).max(0),
        partition: kept,
        in_place_updated: in_place,
        recreated,
        paused: workload.paused(),
        current_revision: Some(status.current_revision).filter(|r| !r.is_empty()),
        update_revision: Some(status.update_revision).filter(|r| !r.is_empty()),
        generation: workload.meta().generation.unwrap_or(0),
        observed_generation: status.observed_generation,
    }
}

/// Of the live pods at `revision`: how many were updated in place, and how many were created
/// since `since`.
fn count_updates(pods: &[Pod], revision: &str, since: DateTime<Utc>) -> (i32, i32) {
    let mut in_place = 0;
    let mut recreated = 0;
    for pod in pods.iter().filter(|pod| pod.metadata.deletion_timestamp.is_none()) {
        let labels = pod.metadata.labels.as_ref();
        if labels.and_then(|l| l.get(CONTROLLER_REVISION_HASH)).map(String::as_str) != Some(revision) {
            continue;
        }
        let state: Option<InPlaceUpdateState> = pod
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(IN_PLACE_UPDATE_STATE_KEY))
            .and_then(|text| serde_json::from_str(text).ok());
        if state.is_some_and(|state| state.revision == revision) {
            in_place += 1;
        } else if pod
            .metadata
            .creation_timestamp
            .as_ref()
            .and_then(|t| to_chrono(&t.0))
            .is_some_and(|t| t >= since)
        {
            recreated += 1;
        }
    }
    (in_place, recreated)
}

/// A state derived from the workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Derived {
    /// The state.
    pub state: RolloutState,
    /// Why (`Observed`, `PartitionReached`, `Superseded`, `ProgressDeadlineExceeded`, `WorkloadDeleted`).
    pub reason: &'static str,
    /// Detail.
    pub message: Option<String>,
    /// The revision the rollout targets, when now known.
    pub revision: Option<String>,
}

/// What a rollout's state is, given what is stored and the workload (`None`: it is gone).
/// Terminal states are kept; before the controller observed the rollout's generation the
/// stored state is kept.
pub fn derive<W: RolloutTarget>(
    stored: RolloutState,
    generation: Option<i64>,
    revision: Option<&str>,
    workload: Option<&W>,
) -> Derived {
    let keep = |message: Option<String>| Derived {
        state: stored,
        reason: "Observed",
        message,
        revision: revision.map(str::to_string),
    };
    if stored.is_terminal() {
        return keep(None);
    }
    let Some(workload) = workload else {
        return Derived {
            state: RolloutState::Failed,
            reason: "WorkloadDeleted",
            message: Some("the workload was deleted".into()),
            revision: revision.map(str::to_string),
        };
    };
    let Some(generation) = generation else {
        return keep(Some("the change is being applied".into()));
    };
    let status = workload.status_view();
    let current_generation = workload.meta().generation.unwrap_or(0);
    if status.observed_generation < generation || status.update_revision.is_empty() {
        return keep(Some(format!("waiting for the controller to observe generation {generation}")));
    }
    let revision = revision.map(str::to_string).unwrap_or_else(|| status.update_revision.clone());
    let caught_up = status.observed_generation >= current_generation;
    let derived = |state, reason, message: Option<String>| Derived {
        state,
        reason,
        message,
        revision: Some(revision.clone()),
    };
    if caught_up && status.update_revision != revision {
        return derived(
            RolloutState::Aborted,
            "Superseded",
            Some(format!("superseded: the workload moved on to revision {}", status.update_revision)),
        );
    }
    if let Some(condition) = status.conditions.iter().find(|c| c.type_ == "Progressing")
        && condition.status == "False"
        && condition.reason == DEADLINE_EXCEEDED
    {
        return derived(RolloutState::Failed, DEADLINE_EXCEEDED, Some(condition.message.clone()));
    }
    let desired = workload.desired();
    if caught_up && status.existing == desired && status.updated >= desired && status.updated_ready >= desired
    {
        return derived(
            RolloutState::Succeeded,
            "Observed",
            Some(format!("all {desired} pod(s) run revision {revision} and are ready")),
        );
    }
    if workload.paused() {
        return derived(RolloutState::Paused, "Paused", Some("the workload's update is paused".into()));
    }
    let kept = kept_by_partition(workload);
    let expected = (desired - kept).max(0);
    if caught_up && kept > 0 && status.updated >= expected && status.updated_ready >= expected {
        return derived(
            RolloutState::Paused,
            "PartitionReached",
            Some(format!(
                "{expected} of {desired} pod(s) updated and ready; the partition keeps {kept} at the previous revision: promote to continue"
            )),
        );
    }
    derived(
        RolloutState::Progressing,
        "Observed",
        Some(format!("{} of {expected} pod(s) updated, {} ready", status.updated, status.updated_ready)),
    )
}

/// Helpers the kinds' table tests share.
#[cfg(test)]
pub(crate) mod testing {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on unexpected data

    use std::collections::BTreeMap;

    use super::*;
    use crate::model::{ContainerResources, RolloutStrategy, WorkloadRef};

    /// A rollout request of `kind` setting `images`.
    pub fn request(kind: WorkloadKind, images: &[(&str, &str)]) -> RolloutRequest {
        RolloutRequest {
            workload: WorkloadRef { kind, name: "web".into() },
            images: images.iter().map(|(c, i)| (c.to_string(), i.to_string())).collect(),
            resources: BTreeMap::new(),
            strategy: RolloutStrategy::default(),
            pre_pull: false,
            reason: None,
        }
    }

    /// `requests` for a container.
    pub fn resources(requests: &[(&str, &str)], limits: &[(&str, &str)]) -> ContainerResources {
        let map =
            |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        ContainerResources { requests: map(requests), limits: map(limits) }
    }

    /// Edits a request for one table case.
    pub type Edit = fn(&mut RolloutRequest);

    /// One row of a validation table: case name, workload, images, edit, the request fields of
    /// the problems, and a fragment of the first problem's message.
    pub type ProblemCase<'a, W> = (&'a str, W, &'a [(&'a str, &'a str)], Edit, &'a [&'a str], &'a str);

    /// Applies each case's request to its workload and checks the problems it names.
    pub fn assert_problems<W: RolloutTarget>(cases: Vec<ProblemCase<'_, W>>) {
        for (case, workload, images, edit, expected, fragment) in cases {
            let mut req = request(W::KIND, images);
            edit(&mut req);
            let errors = workload.apply(&req).expect_err(case);
            assert_eq!(fields(&errors), expected, "{case}: {errors:?}");
            assert!(errors[0].message.contains(fragment), "{case}: {errors:?}");
        }
    }

    /// The request fields of the problems.
    pub fn fields(errors: &[FieldError]) -> Vec<&str> {
        errors.iter().map(|e| e.field.as_str()).collect()
    }

    /// The state derived for a rollout of `revision` observed at `generation`.
    pub fn state_of<W: RolloutTarget>(
        workload: &W,
        generation: i64,
        revision: &str,
    ) -> (RolloutState, &'static str) {
        let derived = derive(RolloutState::Progressing, Some(generation), Some(revision), Some(workload));
        (derived.state, derived.reason)
    }
}
